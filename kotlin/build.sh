#!/usr/bin/env bash
# What the Kotlin package's Maven build needs first (kotlin/test.sh and
# bench/impls.py run it): the native engine (bindings/uniffi, release), the
# Rust example peers the tests talk to, and the uniffi Kotlin layer
# generated from the built library (never checked in: it always matches the
# library it was generated from).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo=${CARGO:-cargo}
"$cargo" build -q --release -p acp-engine-uniffi
make -s --no-print-directory CARGO="$cargo" build
out=kotlin/target/generated-sources/uniffi
rm -rf "$out"
target/release/uniffi-bindgen generate --library target/release/libacp_engine_uniffi.so \
  --language kotlin --no-format --out-dir "$out" >/dev/null
