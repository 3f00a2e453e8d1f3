#!/usr/bin/env bash
# Builds the CUDA provider's GPU test and bench binaries and the conformance suite's test binaries
# (with the `cuda` feature) here (no GPU needed) and packages them into .gpu/ (git-ignored), then
# prints the command to run on the GPU machine (CUDA 13 driver; NVRTC in /usr/local/cuda/lib64 is
# needed to build plans there, which the conformance suite does for every case).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/cuda}"
out=.gpu
rm -rf "$out" && mkdir -p "$out"
msgs=$(cargo test -p kiln-engine-cuda --release --no-run --message-format=json 2>/dev/null)
msgs+=$(cargo bench -p kiln-engine-cuda --no-run --message-format=json 2>/dev/null)
# The conformance suite: one binary per test file, with the engines under test on a GPU.
msgs+=$(cargo test -p kiln-conformance --features cuda --release --no-run --message-format=json 2>/dev/null)
mkdir -p "$out/conformance"
echo "$msgs" | python3 -c '
import json, sys, shutil
for line in sys.stdin:
    try: m = json.loads(line)
    except Exception: continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    name = m["target"]["name"]
    if "kiln-conformance" in m.get("package_id", "") and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], ".gpu/conformance/" + name)
    elif name in ("gpu", "deviceless", "h200", "load"):
        shutil.copy(m["executable"], ".gpu/" + name)
'
if [ -z "$(ls "$out/conformance")" ]; then
  echo "gpu-package.sh: no conformance test binary was built" >&2
  exit 1
fi
strip .gpu/* .gpu/conformance/* 2>/dev/null || true
cp scripts/gpu-bench.py scripts/gpu_ratios.py scripts/check-hgmma.sh "$out/"
# Tests find their fixtures and snapshots through the path they were built in: record it, so that
# run.sh can point that path at the checkout it runs in.
echo "$PWD" > "$out/build-root"
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs on the GPU machine from the repository root. Parts, in this order (default: tests load
# bench torch; conformance takes minutes, so it runs only when named):
#   tests        the deviceless suite (with its NVRTC tests: --include-ignored) and the GPU
#                tests (--ignored); the two-GPU tests (`two_gpus_*`) only where `nvidia-smi -L`
#                lists two GPUs
#   conformance  the conformance suite with the CUDA engines under test (KILN_CONFORMANCE_DEVICE,
#                default cuda:0; --include-ignored); summary in conformance.txt. Knobs:
#                PROPTEST_CASES (cases per property test; default 64, 32 in tests/cuda.rs),
#                KILN_CONFORMANCE_THREADS (test threads, default 8)
#   load         the plan load-time breakdown (benches/load.rs --device)
#   bench        kiln's speed bench (benches/h200.rs)
#   torch        the PyTorch peers (scripts/gpu-bench.py); with bench, ratios.md joins both
# e.g. `bash .gpu/run.sh tests load`. Results are written to a folder and packed into one
# file, $OUT/gpu-results.tgz (the device tool returns at most 8 files from $OUT), beside a copy
# of summary.txt; without $OUT they stay in ./gpu-results/. The pack is refreshed after every
# part, so a call the device tool stops at its limit (600 s) still returns the parts that ran.
# On an H100 `tests` takes about 8.5 minutes and `conformance` about 7.5 (session 21): give each
# its own call.
set -u
parts="${*:-tests sass load bench torch}"
has() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export KILN_CUDA_INCLUDE_DIR="${KILN_CUDA_INCLUDE_DIR:-/usr/local/cuda/include}"
export KILN_CACHE_DIR="${KILN_CACHE_DIR:-/tmp/kiln-cache}"
if [ -n "${OUT:-}" ]; then R=$(mktemp -d); else R="$PWD/gpu-results"; mkdir -p "$R"; fi
# Packs what has run so far into $OUT (called after each part).
save() {
  if [ -n "${OUT:-}" ]; then
    tar czf "$OUT/gpu-results.tgz" -C "$R" . && cp "$R/summary.txt" "$OUT/summary.txt" 2>/dev/null
  fi
  return 0
}
# Test fixtures are found under the build machine's checkout path (CARGO_MANIFEST_DIR): make that
# path lead here; insta finds its snapshots from the workspace root.
build_root=$(cat .gpu/build-root 2>/dev/null || true)
if [ -n "$build_root" ] && [ ! -e "$build_root" ]; then
  mkdir -p "$(dirname "$build_root")" && ln -s "$PWD" "$build_root"
fi
export INSTA_WORKSPACE_ROOT="$PWD"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$R/device.txt" 2>&1
if has tests; then
  # Each binary under a time limit, so that a hung kernel costs minutes, not the whole call.
  timeout "${KILN_GPU_TEST_TIMEOUT:-300}" .gpu/deviceless --include-ignored --test-threads=1 > "$R/deviceless.txt" 2>&1; echo "deviceless rc=$?" >> "$R/summary.txt"
  # The two-GPU tests: every GPU test whose name starts `two_gpus_`.
  two_gpu=two_gpus_
  # The Hopper tile sweep takes about 170 s on an H200 and 200 s on an H100, beside 150 s for
  # the rest: it runs under a limit of its own.
  sweep=hopper_engines_match_the_reference_on_odd_shapes_layouts_and_epilogues
  timeout "${KILN_GPU_TEST_TIMEOUT:-300}" .gpu/gpu --ignored --skip "$two_gpu" --skip "$sweep" --test-threads=1 --nocapture > "$R/gpu-tests.txt" 2>&1; echo "gpu rc=$?" >> "$R/summary.txt"
  save
  timeout "${KILN_GPU_TEST_TIMEOUT:-300}" .gpu/gpu --ignored --exact "$sweep" --nocapture > "$R/gpu-sweep-tests.txt" 2>&1; echo "gpu tile sweep rc=$?" >> "$R/summary.txt"
  # The two-GPU tests fail on one GPU (they never pass without running), so they run only on two.
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  if [ "${gpus:-0}" -ge 2 ]; then
    timeout "${KILN_GPU_TEST_TIMEOUT:-300}" .gpu/gpu --ignored "$two_gpu" --test-threads=1 --nocapture > "$R/gpu-two-tests.txt" 2>&1; echo "two-GPU tests rc=$?" >> "$R/summary.txt"
  else
    echo "two-GPU tests: skipped (${gpus:-0} GPU)" >> "$R/summary.txt"
  fi
fi
save
if has sass; then
  bash .gpu/check-hgmma.sh > "$R/sass.txt" 2>&1; echo "sass (HGMMA in every V2 code object) rc=$?" >> "$R/summary.txt"
fi
save
if has conformance; then
  bash .gpu/conformance.sh "$R/conformance.txt"; echo "conformance rc=$?" >> "$R/summary.txt"
fi
save
if has load; then
  .gpu/load --bench --device > "$R/load-bench.jsonl" 2> "$R/load-bench.err"; echo "load rc=$?" >> "$R/summary.txt"
fi
save
if has bench; then
  timeout "${KILN_GPU_TEST_TIMEOUT:-300}" .gpu/h200 --bench > "$R/kiln-bench.jsonl" 2> "$R/kiln-bench.err"; echo "bench rc=$?" >> "$R/summary.txt"
fi
save
if has torch; then
  python3 .gpu/gpu-bench.py > "$R/torch-bench.jsonl" 2> "$R/torch-bench.err"; echo "torch rc=$?" >> "$R/summary.txt"
fi
save
# The ratios of kiln to its peers of this call (peer ms / kiln ms), one Markdown table.
if [ -s "$R/kiln-bench.jsonl" ] && [ -s "$R/torch-bench.jsonl" ]; then
  python3 .gpu/gpu_ratios.py "$R/kiln-bench.jsonl" -- "$R/torch-bench.jsonl" > "$R/ratios.md" 2>&1
  echo "ratios rc=$? (ratios.md)" >> "$R/summary.txt"
fi
cat "$R/summary.txt"
save
RUN
chmod +x "$out/run.sh"
cat > "$out/conformance.sh" <<'CONF'
#!/usr/bin/env bash
# Runs every conformance test binary in .gpu/conformance/ with the engines of
# $KILN_CONFORMANCE_DEVICE (default cuda:0) under test, ignored tests included, and writes one
# summary to $1: the device, the binaries' results, the cases checked, the runs compared per
# engine, the cases no engine of the device claims, and the failures with case name (its
# shapes, strides and types), seed and message. Exit status 0 only when every binary passed.
set -u
report="$1"
work="${TMPDIR:-/tmp}/kiln-conformance"
rm -rf "$work" && mkdir -p "$work"
export KILN_CONFORMANCE_DEVICE="${KILN_CONFORMANCE_DEVICE:-cuda:0}"
# The compute capability of GPU 0 as digits ("90"): cases of arch-specific engines (the Hopper
# attention forward) expect those engines to claim them there.
export KILN_CONFORMANCE_ARCH="${KILN_CONFORMANCE_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | tr -d '. ')}"
export KILN_CONFORMANCE_SUMMARY="$work/cases.tsv"
dev="$KILN_CONFORMANCE_DEVICE"
: > "$KILN_CONFORMANCE_SUMMARY"
rc=0
results=""
for t in .gpu/conformance/*; do
  n=$(basename "$t")
  "$t" --include-ignored --test-threads="${KILN_CONFORMANCE_THREADS:-8}" > "$work/$n.log" 2>&1
  r=$?
  [ "$r" -eq 0 ] || rc=1
  results+="  $n (rc=$r): $(grep -E '^test result:' "$work/$n.log" | tail -1)"$'\n'
done
S="$KILN_CONFORMANCE_SUMMARY"
{
  echo "kiln conformance suite, engines under test on $dev"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
  echo "PROPTEST_CASES=${PROPTEST_CASES:-default} KILN_CONFORMANCE_THREADS=${KILN_CONFORMANCE_THREADS:-8}"
  echo
  echo "test binaries:"
  printf '%s' "$results"
  echo
  awk -F'\t' -v dev="$dev" '
    { n[$1]++ }
    $1 == "pass" && $4 != "-" {
      k = split($4, es, ",")
      for (i = 1; i <= k; i++) { split(es[i], p, ":"); cases[p[1]]++; runs[p[1]] += p[2] }
    }
    END {
      printf "cases checked: %d (compared %d, not claimed on %s %d, failed %d)\n",
        NR, n["pass"], dev, n["not-claimed"], n["fail"]
      print "(a failing property test re-checks shrunk cases, each counted)"
      print ""
      print "compared per engine (cases, engine runs):"
      for (e in cases) printf "  %s: %d cases, %d runs\n", e, cases[e], runs[e]
    }' "$S"
  echo
  echo "not claimed on $dev (first 40 of $(grep -c '^not-claimed' "$S")):"
  awk -F'\t' '$1 == "not-claimed" { print "  " $5 }' "$S" | head -40
  echo
  echo "why cases failed (distinct messages, case names left out, with their counts):"
  awk -F'\t' '$1 == "fail" { m = $6; gsub(/case '"'"'[^'"'"']*'"'"'/, "case", m); n[m]++ }
    END { for (m in n) printf "  %d x %s\n", n[m], m }' "$S" | sort -rn | cut -c1-1500 | head -20
  echo
  echo "failed cases (seed, case, message; the last 40 of $(awk -F'\t' '$1 == "fail" { print $5 }' "$S" | sort -u | wc -l) distinct cases, shrunk ones last):"
  awk -F'\t' '$1 == "fail" { if (!($5 in last)) order[++k] = $5; last[$5] = "  seed " $3 ": " $5 "\n    " $6 }
    END { for (i = 1; i <= k; i++) print last[order[i]] }' "$S" | cut -c1-800 | tail -80
  echo
  echo "failing tests (from the test binaries' output, minimal failing inputs included):"
  for t in .gpu/conformance/*; do
    n=$(basename "$t")
    # Each failing test: its name, its message, and proptest's minimal failing input (printed
    # over several lines) joined into one.
    awk '/^test .* FAILED$/ || /^Test failed:/ { print; next }
      /^minimal failing input/ { f = 1; buf = "" }
      f && /^\t/ { print buf; f = 0; next }
      f { sub(/^ +/, " "); buf = buf $0 }' "$work/$n.log" \
      | sed "s|^|  $n: |" | cut -c1-1500 | head -60
  done
} > "$report" 2>&1
cat "$report" | head -30
exit "$rc"
CONF
chmod +x "$out/conformance.sh"
ls -la "$out"
echo "On the GPU machine, from the repository root: bash .gpu/run.sh [tests] [conformance] [load] [bench] [torch]   (results land in \$OUT or .)"
