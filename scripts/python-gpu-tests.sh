#!/usr/bin/env bash
# Builds the kiln wheel (release, abi3: any CPython >= 3.9) here, no GPU needed, and packages it
# with the Python tests and examples into .gpu/python/ (git-ignored), then prints the command to
# run on the GPU machine (Python with numpy, torch and pytest; no Rust, no network): the wheel is
# unpacked there onto PYTHONPATH, so nothing is installed. Run it after scripts/gpu-package.sh,
# which empties .gpu/.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$PWD/target/py-venv"
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -r crates/kiln-python/requirements-test.txt
out=.gpu/python
rm -rf "$out" && mkdir -p "$out/wheel"
"$venv/bin/maturin" build --release -m crates/kiln-python/Cargo.toml --out "$out/wheel"
# The repository's layout, so that test_examples.py finds examples/python as it does here.
mkdir -p "$out/crates/kiln-python" "$out/examples"
cp -r crates/kiln-python/tests "$out/crates/kiln-python/tests"
cp -r examples/python "$out/examples/python"
find "$out" -name __pycache__ -prune -exec rm -rf {} +
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs on the GPU machine from the repository root: unpacks the wheel, runs the pytest suite
# (the GPU part with PyTorch CUDA tensors included) and the examples. Results land in $OUT (or .).
set -u
here=.gpu/python
R="${OUT:-.}"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export KILN_CUDA_INCLUDE_DIR="${KILN_CUDA_INCLUDE_DIR:-/usr/local/cuda/include}"
export KILN_CACHE_DIR="${KILN_CACHE_DIR:-/tmp/kiln-cache}"
rm -rf "$here/site" && python3 -m zipfile -e "$here"/wheel/*.whl "$here/site"
export PYTHONPATH="$PWD/$here/site${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$R/python-device.txt" 2>&1
python3 -c "import sys, numpy, torch, kiln; print(sys.version.split()[0], 'numpy', numpy.__version__, 'torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'kiln', kiln.version())" >> "$R/python-device.txt" 2>&1
(cd "$here/crates/kiln-python/tests" && python3 -m pytest -v -rs -p no:cacheprovider .) > "$R/python-tests.txt" 2>&1
echo "python tests rc=$?" >> "$R/summary.txt"
tail -3 "$R/python-tests.txt"
RUN
chmod +x "$out/run.sh"
echo "packaged into $out; on the GPU machine, from the repository root: bash $out/run.sh"
