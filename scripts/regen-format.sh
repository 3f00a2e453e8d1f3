#!/usr/bin/env bash
# Regenerates kiln-format's Rust code from its FlatBuffers schemas with planus-cli.
#
#   scripts/regen-format.sh           rewrite crates/kiln-format/src/generated/*_generated.rs
#   scripts/regen-format.sh --check   generate into a temp dir and fail (exit 1) on any difference
#
# planus-cli is pinned to PLANUS_VERSION (the planus 1.3 line, matching the `planus` runtime crate).
# When `planus` is missing or of another version, the script installs the pinned one with
# `cargo install --locked` (a few minutes on a small machine). The generated code is formatted by
# planus with the rustfmt found on PATH.
#
# Golden test fixtures are regenerated separately:
#   KILN_REGEN_FIXTURES=1 cargo test -p kiln-format --test golden_fixtures
set -euo pipefail

PLANUS_VERSION="1.3.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CRATE="crates/kiln-format"
SCHEMAS=(graph plan container)

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# planus has no --version flag; cargo's install list tells which version is installed.
planus_ok() {
  command -v planus >/dev/null 2>&1 &&
    cargo install --list 2>/dev/null | grep -qx "planus-cli v$PLANUS_VERSION:"
}
if ! planus_ok; then
  echo "regen-format: installing planus-cli $PLANUS_VERSION (cargo install --locked)" >&2
  cargo install planus-cli --version "=$PLANUS_VERSION" --locked >&2
  export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
  planus_ok || { echo "regen-format: planus $PLANUS_VERSION not found after install" >&2; exit 1; }
fi

out_dir="$ROOT/$CRATE/src/generated"
if [ "$check" = 1 ]; then
  out_dir="$(mktemp -d)"
  trap 'rm -rf "$out_dir"' EXIT
fi
mkdir -p "$out_dir"

# Relative schema paths keep machine-specific paths out of the generated code.
cd "$ROOT/$CRATE"
for s in "${SCHEMAS[@]}"; do
  planus rust -o "$out_dir/${s}_generated.rs" "schemas/$s.fbs"
done

if [ "$check" = 1 ]; then
  status=0
  for s in "${SCHEMAS[@]}"; do
    committed="$ROOT/$CRATE/src/generated/${s}_generated.rs"
    if ! diff -u "$committed" "$out_dir/${s}_generated.rs" >&2; then
      echo "regen-format: $CRATE/src/generated/${s}_generated.rs differs from schemas/$s.fbs;" \
        "run scripts/regen-format.sh and commit the result" >&2
      status=1
    fi
  done
  [ "$status" = 0 ] && echo "regen-format: generated code matches the schemas"
  exit "$status"
fi
echo "regen-format: wrote $CRATE/src/generated/{$(IFS=,; echo "${SCHEMAS[*]}")}_generated.rs"
