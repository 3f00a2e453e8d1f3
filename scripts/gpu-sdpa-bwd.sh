#!/usr/bin/env bash
# The Hopper attention backward's GPU checks and benchmark in one short GPU call (run from the
# repository root on the GPU machine after unpacking .gpu/, see scripts/gpu-package.sh). Parts
# (default: all): tests (its GPU test against the CPU reference, with plan round trips),
# conformance (the suite's Hopper-backward property test and the canonical cases on cuda:0),
# bench (kiln's attention backward cases, the Hopper engine and FA2, then PyTorch's flash and
# cuDNN backends). Results land in $OUT (or .).
set -u
parts="${*:-tests conformance bench}"
has() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export KILN_CUDA_INCLUDE_DIR="${KILN_CUDA_INCLUDE_DIR:-/usr/local/cuda/include}"
export KILN_CACHE_DIR="${KILN_CACHE_DIR:-/tmp/kiln-cache}"
R="${OUT:-.}"
build_root=$(cat .gpu/build-root 2>/dev/null || true)
if [ -n "$build_root" ] && [ ! -e "$build_root" ]; then
  mkdir -p "$(dirname "$build_root")" && ln -s "$PWD" "$build_root"
fi
export INSTA_WORKSPACE_ROOT="$PWD"
T="${KILN_GPU_TEST_TIMEOUT:-150}"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv > "$R/device.txt" 2>&1
if has tests; then
  timeout "$T" .gpu/gpu --ignored --exact hopper_attention_backward_matches_the_reference --nocapture > "$R/fa3-bwd-test.txt" 2>&1; echo "fa3 backward gpu test rc=$?" >> "$R/summary.txt"
fi
if has conformance; then
  export KILN_CONFORMANCE_DEVICE=cuda:0
  export KILN_CONFORMANCE_ARCH="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | tr -d '. ')"
  PROPTEST_CASES="${PROPTEST_CASES:-16}" timeout "$T" .gpu/conformance/sdpa --include-ignored --test-threads=8 sdpa_fa3_backward > "$R/conformance-sdpa-bwd.txt" 2>&1; echo "conformance sdpa fa3 backward rc=$?" >> "$R/summary.txt"
  timeout 60 .gpu/conformance/self_check --exact every_engine_is_exercised > "$R/conformance-self-check.txt" 2>&1; echo "conformance self_check rc=$?" >> "$R/summary.txt"
fi
if has bench; then
  timeout "${KILN_BENCH_TIMEOUT:-240}" .gpu/h200 --bench --sdpa-bwd-only ${KILN_BENCH_ARGS:-} > "$R/kiln-sdpa-bwd.jsonl" 2> "$R/kiln-sdpa-bwd.err"; echo "kiln bench rc=$?" >> "$R/summary.txt"
  timeout 120 python3 .gpu/gpu-bench.py --sdpa-bwd-only > "$R/torch-sdpa-bwd.jsonl" 2> "$R/torch-sdpa-bwd.err"; echo "torch bench rc=$?" >> "$R/summary.txt"
fi
cat "$R/summary.txt"
