#!/usr/bin/env bash
# Run every cargo-fuzz target for a bounded time.
#
#   bash fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60, all targets)
#
# Installs the pinned cargo-fuzz if it is missing. cargo-fuzz needs nightly
# flags (-Zsanitizer, -Cpasses=sancov...); on the stable toolchain
# RUSTC_BOOTSTRAP=1 unlocks them. SANITIZER=none runs without AddressSanitizer
# (faster; ASan is the default). Each target starts from its checked-in
# seeds (fuzz/seeds/<target>/), past crashes (fuzz/regressions/<target>/) and
# what earlier local runs found (fuzz/corpus/<target>/, git-ignored).
# Exits non-zero if any target crashed, printing the reproducer's path.
set -uo pipefail
cd "$(dirname "$0")"

CARGO_FUZZ_VERSION=0.13.2
DURATION=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(framing dispatch classify schema_check sse json_writer host)
SANITIZER=${SANITIZER:-address}
CARGO=${CARGO:-cargo}
export RUSTC_BOOTSTRAP=1

if [ "$($CARGO fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
  echo "installing cargo-fuzz $CARGO_FUZZ_VERSION"
  $CARGO install --locked --quiet cargo-fuzz --version "=$CARGO_FUZZ_VERSION" || exit 1
fi

FUZZ_FLAGS=(-O --sanitizer "$SANITIZER")
echo "building fuzz targets (sanitizer: $SANITIZER)"
$CARGO fuzz build "${FUZZ_FLAGS[@]}" || exit 1

passed=0
failed=0
for target in "${TARGETS[@]}"; do
  mkdir -p "corpus/$target" "artifacts/$target"
  dirs=("corpus/$target" "seeds/$target")
  [ -d "regressions/$target" ] && dirs+=("regressions/$target")
  log="artifacts/$target/last-run.log"
  echo "== $target: ${DURATION}s"
  $CARGO fuzz run "${FUZZ_FLAGS[@]}" "$target" "${dirs[@]}" -- \
    -max_total_time="$DURATION" -timeout=20 -rss_limit_mb=2048 \
    -artifact_prefix="artifacts/$target/" -print_final_stats=1 >"$log" 2>&1
  status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ $status -eq 0 ]; then
    echo "$target: ok, ${runs:-?} runs, ${rate:-?} exec/s"
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "$target: FAILED (exit $status); log: fuzz/$log"
    grep -E -A1 "panicked at" "$log" | head -4
    grep -E "ERROR: (AddressSanitizer|libFuzzer)|^SUMMARY" "$log" | head -4
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    if [ -n "$artifact" ]; then
      echo "$target: crashing input: fuzz/$artifact"
      echo "  reproduce: (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run ${FUZZ_FLAGS[*]} $target $artifact)"
      echo "  minimize:  (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz tmin ${FUZZ_FLAGS[*]} $target $artifact)"
    else
      tail -30 "$log"
    fi
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
