#!/usr/bin/env bash
# `acp-engine trace` between real peers (what `make test-trace` runs): the
# official TypeScript and Python SDKs' clients and agents, and ours, talk
# through the proxy; each session must complete the interop contract
# (README.md: permission, fs, terminal, cancellation) and its trace must
# judge every message ok and pair every request with its answer
# (interop/trace_clean.py). Expects target/debug/acp-engine and the Rust
# examples built and interop/setup.sh run. Last line: "N passed, M failed".
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
tool="$root/target/debug/acp-engine"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-trace.XXXXXX")"
trap 'rm -rf "$work"' EXIT

ts_client=(node "$here/ts/client.mjs")
ts_agent=(node "$here/ts/agent.mjs")
py_client=("$here/python/.venv/bin/python" "$here/python/client.py")
py_agent=("$here/python/.venv/bin/python" "$here/python/agent.py")
rust_client=("$root/target/debug/examples/client")
rust_agent=("$root/target/debug/examples/agent")

passed=0
failed=0
n=0
# row NAME CLIENT... -- AGENT...: the client runs the agent through
# `acp-engine trace`; it must print "interop ok" and leave a clean trace.
row() {
  local name="$1"; shift
  local client=()
  while [[ "$1" != "--" ]]; do client+=("$1"); shift; done
  shift
  n=$((n + 1))
  local trace="$work/$n.jsonl" out="$work/$n.out"
  if timeout 60 "${client[@]}" "$tool" trace --out "$trace" -- "$@" >"$out" 2>&1 \
    && grep -qx "interop ok" "$out" && summary="$(python3 "$here/trace_clean.py" "$trace" 2>&1)"; then
    echo "PASS $name: $summary"; passed=$((passed + 1))
  else
    echo "FAIL $name: ${summary:-the session failed}"; tail -n 20 "$out" | sed 's/^/  | /'
    failed=$((failed + 1))
  fi
  summary=""
}

row "official TypeScript client -> trace -> official TypeScript agent" "${ts_client[@]}" -- "${ts_agent[@]}"
row "official TypeScript client -> trace -> official Python agent" "${ts_client[@]}" -- "${py_agent[@]}"
row "official Python client -> trace -> official TypeScript agent" "${py_client[@]}" -- "${ts_agent[@]}"
row "official TypeScript client -> trace -> acp-engine (Rust) agent" "${ts_client[@]}" -- "${rust_agent[@]}"
row "acp-engine (Rust) client -> trace -> official Python agent" "${rust_client[@]}" -- "${py_agent[@]}"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
