#!/usr/bin/env bash
# The Python package's tests: installs kiln into a virtual environment under target/ with the
# README's command (`pip install ./crates/kiln-python`, here with maturin preinstalled and a
# debug build that reuses cargo's target dir), then runs its pytest suite (CPU with NumPy; the
# GPU part skips, saying why, where PyTorch or CUDA is missing) and the examples.
#   KILN_PY_PROFILE   cargo profile of the extension (default dev; release for timings)
#   PYTHON            the interpreter to make the environment with (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$PWD/target/py-venv"
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
# The build backend runs the environment's maturin.
export PATH="$venv/bin:$PATH"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -r crates/kiln-python/requirements-test.txt
# The build backend is already in the environment: no isolated build environment to download.
MATURIN_PEP517_ARGS="--profile ${KILN_PY_PROFILE:-dev}" \
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-build-isolation \
  --force-reinstall --no-deps ./crates/kiln-python
# Run from outside the source tree, so that `import kiln` is the installed package.
cd crates/kiln-python/tests
"$venv/bin/python" -c "import kiln; print('kiln', kiln.version(), 'from', kiln.__file__)"
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider .
