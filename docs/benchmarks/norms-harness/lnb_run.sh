#!/usr/bin/env bash
# Builds and runs the one-launch layernorm backward harness (lnb_main.cu) in a few shapes.
cd "$(dirname "$0")"
for v in "8 4096 1024" "8 16384 1024"; do
  set -- $v
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -DWARPS=$1 -DROWS=$2 -DHID=$3 -o lnb_$1_$2_$3 lnb_main.cu -Xptxas -v > lnb_log_$1_$2_$3.txt 2>&1 || { echo "build $v failed"; cat lnb_log_$1_$2_$3.txt; } &
done
wait
for v in "8 4096 1024" "8 16384 1024"; do
  set -- $v
  grep -h "registers\|spill" lnb_log_$1_$2_$3.txt | head -4
  [ -x lnb_$1_$2_$3 ] && timeout 60 ./lnb_$1_$2_$3
done
