#!/usr/bin/env bash
# The Hopper attention forward's GPU checks and benchmark in one short GPU call (run from the
# repository root on the GPU machine after unpacking .gpu/, see scripts/gpu-package.sh). Parts
# (default: all): tests (its GPU test, the plan round trips of the GPU suite, the committed
# fixtures), conformance (the sdpa conformance binary on cuda:0), bench (kiln's
# attention forward cases and PyTorch's flash and cuDNN backends). Results land in $OUT (or .).
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
  timeout "$T" .gpu/gpu --ignored --exact hopper_attention_forward_matches_the_reference --nocapture > "$R/fa3-test.txt" 2>&1; echo "fa3 gpu test rc=$?" >> "$R/summary.txt"
  timeout "$T" .gpu/gpu --ignored --exact build_save_load_resave_execute_on_gpu committed_sm90_plans_compute_their_stored_outputs_on_gpu --nocapture > "$R/gpu-roundtrips.txt" 2>&1; echo "gpu round trips rc=$?" >> "$R/summary.txt"
fi
if has conformance; then
  export KILN_CONFORMANCE_DEVICE=cuda:0
  export KILN_CONFORMANCE_ARCH="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | tr -d '. ')"
  timeout "$T" .gpu/conformance/sdpa --include-ignored --test-threads=8 > "$R/conformance-sdpa.txt" 2>&1; echo "conformance sdpa rc=$?" >> "$R/summary.txt"
fi
if has bench; then
  timeout "$T" .gpu/h200 --bench --sdpa-only ${KILN_BENCH_ARGS:-} > "$R/kiln-sdpa.jsonl" 2> "$R/kiln-sdpa.err"; echo "kiln bench rc=$?" >> "$R/summary.txt"
  timeout "$T" python3 .gpu/gpu-bench.py --sdpa-only > "$R/torch-sdpa.jsonl" 2> "$R/torch-sdpa.err"; echo "torch bench rc=$?" >> "$R/summary.txt"
fi
cat "$R/summary.txt"
