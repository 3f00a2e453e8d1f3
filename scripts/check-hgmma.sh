#!/usr/bin/env bash
# Disassembles every Hopper (V2 GEMM, FA3 attention) code object of the snapshot variants and fails unless each one
# issues warpgroup MMAs (HGMMA in SASS) and uses the tensor memory accelerator or cp.async, with
# no local-memory traffic (LDL/STL: accumulators spilled). Run on the GPU machine (its CUDA
# toolkit has cuobjdump) by .gpu/run.sh, or here with a cuobjdump on PATH:
#
#   scripts/check-hgmma.sh DIR        check the cubins already in DIR
#   scripts/check-hgmma.sh            dump them first with the deviceless test binary
#                                     (.gpu/deviceless, or cargo test), then check
set -uo pipefail
dir="${1:-}"
if [ -z "$dir" ]; then
  dir="$(mktemp -d)"
  if [ -x .gpu/deviceless ]; then
    KILN_DUMP_CUBINS="$dir" .gpu/deviceless --include-ignored --exact every_snapshot_variant_compiles_for_sm_90 every_v2_variant_compiles_with_every_tile_configuration > "$dir/dump.log" 2>&1
  else
    KILN_DUMP_CUBINS="$dir" cargo test -q -p kiln-engine-cuda --test deviceless -- --include-ignored --exact every_snapshot_variant_compiles_for_sm_90 every_v2_variant_compiles_with_every_tile_configuration > "$dir/dump.log" 2>&1
  fi || { echo "check-hgmma: dumping the cubins failed:"; tail -20 "$dir/dump.log"; exit 1; }
  # The convolution gradients' variants (V2 ones named *_v2_*; their split reductions *_reduce).
  if [ -x .gpu/deviceless ]; then
    KILN_DUMP_CUBINS="$dir" .gpu/deviceless --include-ignored --exact every_conv_grad_variant_compiles_for_sm_90 >> "$dir/dump.log" 2>&1
  else
    KILN_DUMP_CUBINS="$dir" cargo test -q -p kiln-engine-cuda --test deviceless -- --include-ignored --exact every_conv_grad_variant_compiles_for_sm_90 >> "$dir/dump.log" 2>&1
  fi || { echo "check-hgmma: dumping the gradient cubins failed:"; tail -20 "$dir/dump.log"; exit 1; }
fi
command -v cuobjdump > /dev/null || { echo "check-hgmma: no cuobjdump on PATH"; exit 1; }
fail=0
n=0
for f in "$dir"/*_v2_*.cubin "$dir"/*_fa3_*.cubin; do
  [ -e "$f" ] || continue
  case "$f" in *_reduce.cubin) continue ;; esac
  n=$((n + 1))
  sass="$(cuobjdump -sass "$f")"
  hgmma=$(grep -c 'HGMMA' <<< "$sass")
  loads=$(grep -c 'UTMALDG\|LDGSTS' <<< "$sass")
  local_mem=$(grep -c 'LDL\|STL' <<< "$sass")
  regs=$(cuobjdump -res-usage "$f" 2>/dev/null | grep -o 'REG:[0-9]*' | head -1)
  status=ok
  if [ "$hgmma" -eq 0 ] || [ "$loads" -eq 0 ] || [ "$local_mem" -ne 0 ]; then status=FAIL; fail=1; fi
  printf '%-4s %-48s HGMMA %3d  TMA/cp.async %3d  local %d  %s\n' "$status" "$(basename "$f")" "$hgmma" "$loads" "$local_mem" "$regs"
done
if [ "$n" -eq 0 ]; then echo "check-hgmma: no *_v2_*.cubin in $dir"; exit 1; fi
exit $fail
