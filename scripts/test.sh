#!/usr/bin/env bash
# Every test, as the README's test command: the Rust workspace (which compiles and runs the C
# API's C programs, crates/kiln-capi/tests/c/), then the Python package's pytest suite
# (scripts/python-tests.sh: a virtual environment under target/, NumPy and pytest from PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
scripts/python-tests.sh
