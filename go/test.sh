#!/usr/bin/env bash
# The Go package's suite (what `make test-go` runs): install the C library
# into target/go-prefix the way a user would (`make install`), then, with
# only pkg-config pointing there, gofmt, go vet, `go test -race` (real
# processes over real pipes), the example client against the example agent,
# and the interop rows of the Go agent and client with the official SDKs and
# our other examples. Last line: "N passed, M failed".
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-go-tests.XXXXXX")"
trap 'rm -rf "$work"' EXIT
prefix="$root/target/go-prefix"
bin="$root/target/go-bin"

passed=0
failed=0
# A failure's log: its head (a crash's reason, the first failing test) and tail.
excerpt() {
  if [[ $(wc -l <"$1") -le 80 ]]; then cat "$1"; else head -n 50 "$1"; echo "..."; tail -n 30 "$1"; fi
}
step() { # step NAME COMMAND...
  local name="$1"; shift
  if "$@" >"$work/log" 2>&1; then
    echo "PASS $name"; passed=$((passed + 1))
  else
    echo "FAIL $name"; excerpt "$work/log" | sed 's/^/  | /'; failed=$((failed + 1))
  fi
}

command -v go >/dev/null || { echo "FAIL go is not installed (see .ci/run)"; echo "0 passed, 1 failed"; exit 1; }
export GOTOOLCHAIN=local GOFLAGS=-mod=mod PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
step "make install PREFIX=target/go-prefix" make -s -C "$root" install PREFIX="$prefix"
cd "$here"
step "gofmt" bash -c '[ -z "$(gofmt -l . ../bench/go)" ] || { gofmt -l . ../bench/go; exit 1; }'
step "go vet" go vet ./...
step "go test -race" go test -race -count=1 -timeout 300s ./...
mkdir -p "$bin"
step "go build the examples" bash -c "go build -o '$bin/agent' ./examples/agent && go build -o '$bin/client' ./examples/client"
step "example client -> example agent" bash -c "'$bin/client' '$bin/agent' | tail -1 | grep -qx 'interop ok'"

# Interop: the Go agent and client in the matrix with the official SDKs and
# our Rust and C examples (built by the caller: see the Makefile).
interop_env=(ACP_INTEROP_TRACE= "ACP_CLIENT_go=$bin/client" "ACP_AGENT_go=$bin/agent")
[[ -x "$root/target/debug/examples/agent" ]] && interop_env+=("OURS_AGENT=$root/target/debug/examples/agent")
[[ -x "$root/target/debug/examples/client" ]] && interop_env+=("OURS_CLIENT=$root/target/debug/examples/client")
out="$work/interop.txt"
env "${interop_env[@]}" bash "$root/interop/run.sh" >"$out" 2>&1
ours='^(PASS|FAIL) (go -> |[a-z]+ -> go(:|$))'
grep -E "$ours" "$out"
rows_failed=$(grep -E "$ours" "$out" | grep -c '^FAIL')
rows_passed=$(grep -E "$ours" "$out" | grep -c '^PASS')
passed=$((passed + rows_passed))
failed=$((failed + rows_failed))
[[ $rows_failed -eq 0 ]] || sed -n '/^FAIL/,/^PASS/p' "$out" | head -60

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
