#!/usr/bin/env bash
# End-to-end check of the `kiln` command on the GPU machine (two GPUs for the cross-device part).
# Here: `scripts/gpu-package.sh`, then copy a release `kiln` into .gpu/ together with the example
# graphs and a plan built with no GPU:
#   cargo build --release -p kiln-cli && cp target/release/kiln .gpu/
#   mkdir -p .gpu/examples && cp examples/graphs/*.json .gpu/examples/
#   eval "$(scripts/install-nvrtc.sh)"
#   target/release/kiln build examples/graphs/conv_bias_relu.json --target sm_90 --with-graph -o .gpu/conv_sm90.kiln
#   cp scripts/gpu-cli-check.sh scripts/sdpa-torch-check.py .gpu/
# There: `bash .gpu/gpu-cli-check.sh` (results in $OUT, or .). Every example graph is built on
# cuda:0 (on sm_90 the bf16 matmul, convolution and gradient examples take the V2 engines; the
# engine each build chose is printed), then run from its saved file in a new process on the last
# GPU (cuda:1 where two are) and on cuda:0, each with --validate.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export KILN_CUDA_INCLUDE_DIR=/usr/local/cuda/include KILN_CACHE_DIR=/tmp/kiln-cache
R="${OUT:-.}"; K=.gpu/kiln; T=/tmp/kiln-gpu-check; mkdir -p "$T"
last=$(( $(nvidia-smi -L | wc -l) - 1 ))
nvidia-smi --query-gpu=index,name,driver_version --format=csv > "$R/device.txt" 2>&1
# KILN_CLI_QUICK=1: only the examples and the plan built with no GPU (no GPU tests, no bench, no
# attention check against PyTorch).
quick="${KILN_CLI_QUICK:-0}"
if [ "$quick" != 1 ]; then
  .gpu/gpu --ignored --test-threads=1 --nocapture > "$R/gpu-tests.txt" 2>&1
  echo "gpu tests rc=$?" | tee -a "$R/summary.txt"
  grep -E "^test |test result" "$R/gpu-tests.txt" | tee -a "$R/summary.txt"
fi
{
  echo "== kiln demo --device cuda:0"; $K demo --device cuda:0; echo "rc=$?"
  echo "== kiln demo --device cuda:0 --json"; $K demo --device cuda:0 --json; echo "rc=$?"
  for f in .gpu/examples/*.json; do
    g=$(basename "$f" .json)
    echo "== build $g on cuda:0, run on cuda:$last and cuda:0 with --validate"
    $K build "$f" --device cuda:0 --with-graph -o "$T/$g.kiln" --json > "$T/$g.build.json"; echo "build rc=$?"
    grep '"engine"' "$T/$g.build.json"
    $K run "$T/$g.kiln" --device "cuda:$last" --validate; echo "run cuda:$last rc=$?"
    $K run "$T/$g.kiln" --device cuda:0 --validate; echo "run cuda:0 rc=$?"
  done
  echo "== a plan built with no GPU (--target sm_90), run here"
  $K inspect .gpu/conv_sm90.kiln; $K run .gpu/conv_sm90.kiln --device cuda:0 --validate; echo "rc=$?"
} > "$R/cli.txt" 2>&1
if [ "$quick" != 1 ]; then
  {
    echo "== kiln bench: a graph built on cuda:0, the plan built with no GPU loaded, the GPU cases"
    $K bench .gpu/examples/conv_bias_relu.json --device cuda:0; echo "bench graph rc=$?"
    $K bench .gpu/conv_sm90.kiln --device cuda:0; echo "bench loaded plan rc=$?"
    $K bench --device cuda:0 --json > "$R/cli-bench.json"; echo "bench cases rc=$? (rows in cli-bench.json)"
  } >> "$R/cli.txt" 2>&1
fi
grep -E "^== build|\"engine\"|rc=|validated|matches|DOES NOT|loaded plan" "$R/cli.txt" | tee -a "$R/summary.txt"
if [ "$quick" != 1 ]; then
  # Attention against torch.nn.functional.scaled_dot_product_attention (forward and backward).
  python3 .gpu/sdpa-torch-check.py "$K" "$T/sdpa-torch" > "$R/sdpa-torch.jsonl" 2>&1
  echo "sdpa vs torch rc=$?" | tee -a "$R/summary.txt"
fi
