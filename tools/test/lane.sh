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
# so two suites' output does not interleave line by line; each line of the
# log starts with the time since its suite started ([m:ss]), to see where a
# suite spends its minutes.
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

# Each line of stdin, prefixed with [m:ss] since $1 (a $SECONDS value).
stamp() {
  local line since
  while IFS= read -r line || [[ -n "$line" ]]; do
    since=$((SECONDS - $1))
    printf '[%d:%02d] %s\n' $((since / 60)) $((since % 60)) "$line"
  done
}

for target in "$@"; do
  if [[ -e "$logs/failed" ]]; then
    echo "lane: $target not run: $(cat "$logs/failed") failed"
    exit 1
  fi
  started=$SECONDS
  if [[ -n "$log" ]]; then
    echo "lane: $target started (output: target/test-logs/$target.log)"
    "$make" -C "$root" --no-print-directory "$target" 2>&1 | stamp "$started" >"$logs/$target.log"
  else
    "$make" -C "$root" --no-print-directory "$target"
  fi
  status=${PIPESTATUS[0]}
  took="$(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s"
  if [[ $status -ne 0 ]]; then
    echo "$target" >>"$logs/failed"
    [[ -n "$log" ]] && tail -n 80 "$logs/$target.log"
    echo "lane: $target FAILED after $took (exit $status)"
    exit 1
  fi
  echo "lane: $target passed in $took"
done
