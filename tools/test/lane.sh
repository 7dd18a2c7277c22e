#!/usr/bin/env bash
# A lane of suites: the given make targets one after another.
#
#   lane.sh [--log] target...
#
# `make test` (tools/test/pool.py) runs two at once, each a lane of one
# suite. A lane stops before its next suite once any suite has failed
# (target/test-logs/failed).
# --log: each suite's output goes to target/test-logs/<target>.log, and
# only a line per suite (and the log's tail on failure) to the terminal,
# so two suites' output does not interleave line by line.
set -uo pipefail

log=""
if [[ "${1:-}" == "--log" ]]; then log=1; shift; fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
logs="$root/target/test-logs"
mkdir -p "$logs"
make=${MAKE:-make}
# Each suite is a make of its own, with no jobserver from the make that runs
# the pool: cargo then uses every core when the other suite leaves them idle.
unset MAKEFLAGS MFLAGS MAKELEVEL

for target in "$@"; do
  if [[ -e "$logs/failed" ]]; then
    echo "lane: $target not run: $(cat "$logs/failed") failed"
    exit 1
  fi
  started=$SECONDS
  if [[ -n "$log" ]]; then
    echo "lane: $target started (output: target/test-logs/$target.log)"
    "$make" -C "$root" --no-print-directory "$target" >"$logs/$target.log" 2>&1
  else
    "$make" -C "$root" --no-print-directory "$target"
  fi
  status=$?
  took="$(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s"
  if [[ $status -ne 0 ]]; then
    echo "$target" >>"$logs/failed"
    [[ -n "$log" ]] && tail -n 80 "$logs/$target.log"
    echo "lane: $target FAILED after $took (exit $status)"
    exit 1
  fi
  echo "lane: $target passed in $took"
done
