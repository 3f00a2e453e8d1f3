#!/usr/bin/env bash
# Regenerates the Rust code of kiln's FlatBuffers schemas with planus-cli: kiln-format's
# (graph, plan, container) and the CUDA provider's payload body
# (engines/kiln-engine-cuda/schemas/cuda_payload.fbs).
#
#   scripts/regen-format.sh           rewrite <crate>/src/generated/*_generated.rs
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
# Each entry: a crate folder and the schemas (schemas/<name>.fbs) it generates code for.
TARGETS=(
  "crates/kiln-format:graph plan container"
  "engines/kiln-engine-cuda:cuda_payload"
)

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

tmp_root=""
if [ "$check" = 1 ]; then
  tmp_root="$(mktemp -d)"
  trap 'rm -rf "$tmp_root"' EXIT
fi

status=0
for target in "${TARGETS[@]}"; do
  CRATE="${target%%:*}"
  read -r -a SCHEMAS <<< "${target#*:}"
  out_dir="$ROOT/$CRATE/src/generated"
  [ "$check" = 1 ] && out_dir="$tmp_root/$CRATE"
  mkdir -p "$out_dir"

  # Relative schema paths keep machine-specific paths out of the generated code.
  cd "$ROOT/$CRATE"
  for s in "${SCHEMAS[@]}"; do
    planus rust -o "$out_dir/${s}_generated.rs" "schemas/$s.fbs"
  done

  if [ "$check" = 1 ]; then
    for s in "${SCHEMAS[@]}"; do
      committed="$ROOT/$CRATE/src/generated/${s}_generated.rs"
      if ! diff -u "$committed" "$out_dir/${s}_generated.rs" >&2; then
        echo "regen-format: $CRATE/src/generated/${s}_generated.rs differs from schemas/$s.fbs;" \
          "run scripts/regen-format.sh and commit the result" >&2
        status=1
      fi
    done
  else
    echo "regen-format: wrote $CRATE/src/generated/{$(IFS=,; echo "${SCHEMAS[*]}")}_generated.rs"
  fi
done

if [ "$check" = 1 ]; then
  [ "$status" = 0 ] && echo "regen-format: generated code matches the schemas"
  exit "$status"
fi
