#!/usr/bin/env bash
# Runs the CPU conformance suite once per instruction-set level of the CPU engine
# (KILN_CPU_ISA=portable, avx2, avx512, avx512bf16, amx: each caps every CPU kernel of the
# process, auto plans and restored ones alike) and prints one summary line per level: the test binaries'
# results, the cases checked and the engine runs compared. Levels this processor lacks run as
# the best level it has (the engine says so on stderr). The extra level `cpuid-avx2` leaves the
# knob at auto and runs the suite under scripts/cpuid-cap.c instead, so that every library of the
# process sees an AVX2-only processor (kiln's auto level, the `gemm` crate, AMX's permission);
# it needs a C compiler and Linux's CPUID faulting. Exit status 0 only when every level passed.
# Usage: scripts/conformance-isa.sh [LEVEL...]   (default: portable avx2 avx512 avx512bf16 amx)
set -u
cd "$(dirname "$0")/.."
levels="${*:-portable avx2 avx512 avx512bf16 amx}"
cargo test -p kiln-conformance --release --no-run --quiet 2>/dev/null
echo "processor: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512_bf16|avx512_fp16|amx_tile|amx_bf16)$' | tr '\n' ' ')"
rc=0
for level in $levels; do
  summary=$(mktemp)
  log=$(mktemp)
  if [ "$level" = cpuid-avx2 ]; then
    cap=target/cpuid-cap/cpuid-cap.so
    mkdir -p "$(dirname "$cap")" && "${CC:-cc}" -O2 -shared -fPIC -o "$cap" scripts/cpuid-cap.c || exit 1
    KILN_CPUID_CAP=avx2 LD_PRELOAD="$PWD/$cap" KILN_CONFORMANCE_SUMMARY=$summary \
      cargo test -p kiln-conformance --release --quiet > "$log" 2>&1
  else
    KILN_CPU_ISA=$level KILN_CONFORMANCE_SUMMARY=$summary \
      cargo test -p kiln-conformance --release --quiet > "$log" 2>&1
  fi
  r=$?
  [ "$r" -eq 0 ] || rc=1
  passed=$(grep -E '^test result:' "$log" | awk '{p += $4; f += $6} END {print p " passed, " f " failed"}')
  cases=$(wc -l < "$summary")
  runs=$(awk -F'\t' '$1 == "pass" && $4 != "-" { k = split($4, es, ","); for (i = 1; i <= k; i++) { split(es[i], p, ":"); n += p[2] } } END { print n + 0 }' "$summary")
  label="KILN_CPU_ISA=$level"
  [ "$level" = cpuid-avx2 ] && label="cpuid capped at avx2, knob auto"
  echo "$label: rc=$r, tests $passed; $cases cases, $runs engine runs compared"
  [ "$r" -eq 0 ] || grep -E 'panicked|FAILED' "$log" | head -20
  rm -f "$summary" "$log"
done
exit $rc
