#!/usr/bin/env bash
# End-to-end check of the `kiln` command on the GPU machine (two GPUs for the cross-device part).
# Here: `scripts/gpu-package.sh`, then copy a release `kiln` into .gpu/ together with the example
# graphs and a plan built with no GPU:
#   cargo build --release -p kiln-cli && cp target/release/kiln examples/graphs/*.json .gpu/
#   eval "$(scripts/install-nvrtc.sh)"
#   target/release/kiln build examples/graphs/conv_bias_relu.json --target sm_90 --with-graph -o .gpu/conv_sm90.kiln
#   cp scripts/gpu-cli-check.sh scripts/sdpa-torch-check.py .gpu/
# There: `bash .gpu/gpu-cli-check.sh` (results in $OUT, or .).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export KILN_CUDA_INCLUDE_DIR=/usr/local/cuda/include KILN_CACHE_DIR=/tmp/kiln-cache
R="${OUT:-.}"; K=.gpu/kiln; T=/tmp/kiln-gpu-check; mkdir -p "$T"
last=$(( $(nvidia-smi -L | wc -l) - 1 ))
nvidia-smi --query-gpu=index,name,driver_version --format=csv > "$R/device.txt" 2>&1
.gpu/gpu --ignored --test-threads=1 --nocapture > "$R/gpu-tests.txt" 2>&1
echo "gpu tests rc=$?" | tee -a "$R/summary.txt"
grep -E "^test |test result" "$R/gpu-tests.txt" | tee -a "$R/summary.txt"
{
  echo "== kiln demo --device cuda:0"; $K demo --device cuda:0; echo "rc=$?"
  echo "== kiln demo --device cuda:0 --json"; $K demo --device cuda:0 --json; echo "rc=$?"
  for g in pointwise conv_bias_relu matmul attention; do
    echo "== build $g on cuda:0, run on cuda:$last and cuda:0 with --validate"
    $K build ".gpu/$g.json" --device cuda:0 --with-graph -o "$T/$g.kiln"; echo "build rc=$?"
    $K run "$T/$g.kiln" --device "cuda:$last" --validate; echo "run cuda:$last rc=$?"
    $K run "$T/$g.kiln" --device cuda:0 --validate; echo "run cuda:0 rc=$?"
  done
  echo "== a plan built with no GPU (--target sm_90), run here"
  $K inspect .gpu/conv_sm90.kiln; $K run .gpu/conv_sm90.kiln --device cuda:0 --validate; echo "rc=$?"
} > "$R/cli.txt" 2>&1
{
  echo "== kiln bench: a graph built on cuda:0, the plan built with no GPU loaded, the GPU cases"
  $K bench .gpu/conv_bias_relu.json --device cuda:0; echo "bench graph rc=$?"
  $K bench .gpu/conv_sm90.kiln --device cuda:0; echo "bench loaded plan rc=$?"
  $K bench --device cuda:0 --json > "$R/cli-bench.json"; echo "bench cases rc=$? (rows in cli-bench.json)"
} >> "$R/cli.txt" 2>&1
grep -E "rc=|validated|matches|DOES NOT|loaded plan" "$R/cli.txt" | tee -a "$R/summary.txt"
# Attention against torch.nn.functional.scaled_dot_product_attention (forward and backward).
python3 .gpu/sdpa-torch-check.py "$K" "$T/sdpa-torch" > "$R/sdpa-torch.jsonl" 2>&1
echo "sdpa vs torch rc=$?" | tee -a "$R/summary.txt"
