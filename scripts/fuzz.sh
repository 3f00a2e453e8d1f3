#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a bounded time each, seeded with kiln's fixtures, and
# fails on the first crash (the input is kept in fuzz/artifacts/<target>/). CI runs it; locally:
#   scripts/fuzz.sh                 # every target, KILN_FUZZ_SECONDS each (default 20)
#   scripts/fuzz.sh load_and_execute
# Needs a nightly toolchain (libFuzzer and AddressSanitizer) and cargo-fuzz, which it installs
# from crates.io when missing. Without a nightly toolchain it says SKIPPED and exits 0: it cannot
# run here, and it does not pretend it did.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${KILN_FUZZ_SECONDS:-20}"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "SKIPPED: fuzzing needs a nightly toolchain (rustup toolchain install nightly)"
    exit 0
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
cd fuzz
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
fixtures=(../crates/kiln-format/tests/fixtures/*.kiln ../crates/kiln/tests/fixtures/forged/*.kiln)
for t in "${targets[@]}"; do
    corpus="corpus/$t"
    mkdir -p "$corpus"
    for f in "${fixtures[@]}"; do
        name=$(basename "$f" .kiln)
        if [ "$t" = load_and_execute ]; then
            # The first byte picks the mode: 0 as given, 1 with checksums and digest recomputed.
            { printf '\0'; cat "$f"; } > "$corpus/seed-0-$name"
            { printf '\1'; cat "$f"; } > "$corpus/seed-1-$name"
        else
            cp "$f" "$corpus/seed-$name"
        fi
    done
    echo "== fuzz $t for ${secs}s ($(date +%T))"
    log="corpus/$t.log"
    if ! cargo +nightly fuzz run "$t" "$corpus" -- -max_total_time="$secs" -rss_limit_mb=2048 \
        -print_final_stats=1 >"$log" 2>&1; then
        tail -n 60 "$log" >&2
        echo "fuzz target $t failed; the input is in fuzz/artifacts/$t/" >&2
        exit 1
    fi
    grep -E "^stat::number_of_executed_units|^Done" "$log" || tail -n 3 "$log"
done
