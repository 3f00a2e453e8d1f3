#!/usr/bin/env bash
# Builds the CUDA provider's GPU test and bench binaries here (no GPU needed) and packages them
# into .gpu/ (git-ignored through .git/info/exclude), then prints the command to run on the GPU
# machine (CUDA 13 driver; NVRTC in /usr/local/cuda/lib64 is only needed to build plans there).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/cuda}"
out=.gpu
rm -rf "$out" && mkdir -p "$out"
msgs=$(cargo test -p kiln-engine-cuda --release --no-run --message-format=json 2>/dev/null)
msgs+=$(cargo bench -p kiln-engine-cuda --no-run --message-format=json 2>/dev/null)
echo "$msgs" | python3 -c '
import json, sys, shutil
for line in sys.stdin:
    try: m = json.loads(line)
    except Exception: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in ("gpu", "deviceless", "h200", "load"):
        shutil.copy(m["executable"], ".gpu/" + m["target"]["name"])
'
strip .gpu/* 2>/dev/null || true
cp scripts/gpu-bench.py "$out/"
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs on the GPU machine from the repository root. Parts, in this order (default: all):
#   tests  the deviceless suite (with its NVRTC tests: --include-ignored) and the GPU tests
#          (--ignored); the two-GPU test only where `nvidia-smi -L` lists two GPUs or more
#   load   the plan load-time breakdown (benches/load.rs --device)
#   bench  kiln's speed bench (benches/h200.rs)
#   torch  the PyTorch peers (scripts/gpu-bench.py)
# e.g. `bash .gpu/run.sh tests load`. Results land in $OUT (or .).
set -u
parts="${*:-tests load bench torch}"
has() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export KILN_CUDA_INCLUDE_DIR="${KILN_CUDA_INCLUDE_DIR:-/usr/local/cuda/include}"
export KILN_CACHE_DIR="${KILN_CACHE_DIR:-/tmp/kiln-cache}"
R="${OUT:-.}"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$R/device.txt" 2>&1
if has tests; then
  .gpu/deviceless --include-ignored --test-threads=1 > "$R/deviceless.txt" 2>&1; echo "deviceless rc=$?" >> "$R/summary.txt"
  two_gpu=plan_built_on_device_0_runs_on_device_1
  .gpu/gpu --ignored --skip "$two_gpu" --test-threads=1 --nocapture > "$R/gpu-tests.txt" 2>&1; echo "gpu rc=$?" >> "$R/summary.txt"
  # The two-GPU test fails on one GPU (it never passes without running), so it runs only on two.
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  if [ "${gpus:-0}" -ge 2 ]; then
    .gpu/gpu --ignored --exact "$two_gpu" --nocapture > "$R/gpu-two-tests.txt" 2>&1; echo "two-GPU test rc=$?" >> "$R/summary.txt"
  else
    echo "two-GPU test: skipped (${gpus:-0} GPU)" >> "$R/summary.txt"
  fi
fi
if has load; then
  .gpu/load --bench --device > "$R/load-bench.jsonl" 2> "$R/load-bench.err"; echo "load rc=$?" >> "$R/summary.txt"
fi
if has bench; then
  .gpu/h200 --bench > "$R/kiln-bench.jsonl" 2> "$R/kiln-bench.err"; echo "bench rc=$?" >> "$R/summary.txt"
fi
if has torch; then
  python3 .gpu/gpu-bench.py > "$R/torch-bench.jsonl" 2> "$R/torch-bench.err"; echo "torch rc=$?" >> "$R/summary.txt"
fi
cat "$R/summary.txt"
RUN
chmod +x "$out/run.sh"
ls -la "$out"
echo "On the GPU machine, from the repository root: bash .gpu/run.sh [tests] [load] [bench] [torch]   (results land in \$OUT or .)"
