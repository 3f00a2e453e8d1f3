#!/usr/bin/env bash
# Installs NVRTC and the CUDA headers (13.0 line, with the C++ library that cooperative_groups.h
# includes) from PyPI into .nvrtc/ (git-ignored) and prints the environment the CUDA provider's
# deviceless tests need. Usage:
#   eval "$(scripts/install-nvrtc.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."
dest="$PWD/.nvrtc"
if [ ! -f "$dest/nvidia/cu13/include/crt/mma.h" ] || [ ! -d "$dest/nvidia/cu13/include/cccl/nv" ] \
    || ! ls "$dest"/nvidia/cu13/lib/libnvrtc.so* >/dev/null 2>&1; then
    python3 -m pip install --quiet --target "$dest" --upgrade \
        "nvidia-cuda-nvrtc==13.0.*" "nvidia-cuda-runtime==13.0.*" "nvidia-cuda-crt==13.0.*" \
        "nvidia-cuda-cccl==13.0.*" >&2
fi
echo "export LD_LIBRARY_PATH=\"$dest/nvidia/cu13/lib:\${LD_LIBRARY_PATH:-}\""
echo "export KILN_CUDA_INCLUDE_DIR=\"$dest/nvidia/cu13/include\""
