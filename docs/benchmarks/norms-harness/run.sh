#!/usr/bin/env bash
# Builds and runs each harness variant: name, then nvcc flags.
cd "$(dirname "$0")"
K=../../../engines/kiln-engine-cuda/src/kernels
build() { local name=$1; shift; nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I$K -DVARNAME="\"$name\"" "$@" -o bin_$name bn_main.cu > log_$name.txt 2>&1 || { echo "build $name failed"; cat log_$name.txt; }; }
while read -r name flags; do [ -z "$name" ] && continue; build $name $flags & done < variants.txt
wait
while read -r name flags; do [ -z "$name" ] && continue; [ -x bin_$name ] && timeout 60 ./bin_$name; done < variants.txt
