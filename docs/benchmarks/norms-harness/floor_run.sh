#!/usr/bin/env bash
# Builds and runs the batchnorm training floor harness (bn_floor.cu), then session 17's copy of
# kiln's cooperative kernel (bn_main.cu, variant base) in the same call for comparison.
cd "$(dirname "$0")"
export PATH=$PATH:/usr/local/cuda/bin
K=../../../engines/kiln-engine-cuda/src/kernels
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o bn_floor bn_floor.cu > floor_log.txt 2>&1 || { echo "build bn_floor failed"; cat floor_log.txt; }
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I$K -DVARNAME='"base"' -o bin_base bn_main.cu > base_log.txt 2>&1 || { echo "build base failed"; cat base_log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
[ -x bn_floor ] && timeout 240 ./bn_floor
[ -x bin_base ] && timeout 60 ./bin_base
