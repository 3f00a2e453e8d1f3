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
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in ("gpu", "deviceless", "h200"):
        shutil.copy(m["executable"], ".gpu/" + m["target"]["name"])
'
strip .gpu/* 2>/dev/null || true
cp scripts/gpu-bench.py "$out/"
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs on the GPU machine from the repository root: tests, then benches, then the PyTorch peers.
set -u
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export KILN_CUDA_INCLUDE_DIR="${KILN_CUDA_INCLUDE_DIR:-/usr/local/cuda/include}"
export KILN_CACHE_DIR="${OUT:-/tmp}/kiln-cache"
R="${OUT:-.}"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$R/device.txt" 2>&1
.gpu/deviceless --test-threads=1 > "$R/deviceless.txt" 2>&1; echo "deviceless rc=$?" >> "$R/summary.txt"
.gpu/gpu --ignored --test-threads=1 --nocapture > "$R/gpu-tests.txt" 2>&1; echo "gpu rc=$?" >> "$R/summary.txt"
.gpu/h200 --bench > "$R/kiln-bench.jsonl" 2> "$R/kiln-bench.err"; echo "bench rc=$?" >> "$R/summary.txt"
python3 .gpu/gpu-bench.py > "$R/torch-bench.jsonl" 2> "$R/torch-bench.err"; echo "torch rc=$?" >> "$R/summary.txt"
cat "$R/summary.txt"
RUN
chmod +x "$out/run.sh"
ls -la "$out"
echo "On the GPU machine, from the repository root: bash .gpu/run.sh   (results land in \$OUT or .)"
