#!/usr/bin/env bash
# `acp-engine check agent` against every agent we ship and the official
# SDKs' (what `make test-check` runs): ours in every language and the
# official TypeScript SDK's must pass every case; the official Python SDK's
# verdicts are printed for the record (it fails three malformed-input cases
# as of agent-client-protocol 0.12.1; see README "Checking an agent").
# Expects target/debug/acp-engine, the Rust examples and the C library built
# and interop/setup.sh run; the Python, Node and Go agents join when their
# suites left them built. Last line: "N passed, M failed".
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
tool="$root/target/debug/acp-engine"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
# row NAME AGENT...: every case must pass.
row() {
  local name="$1"; shift
  if "$tool" check agent -- "$@" >"$work/out" 2>&1; then
    echo "PASS $name: $(tail -n 1 "$work/out")"; passed=$((passed + 1))
  else
    echo "FAIL $name"; sed 's/^/  | /' "$work/out"; failed=$((failed + 1))
  fi
}

cc -o "$work/c-agent" "$root/bindings/c/examples/agent.c" -I "$root/include" \
  -L "$root/target/debug" -lacp_engine "-Wl,-rpath,$root/target/debug"
row "acp-engine (Rust) example agent" "$root/target/debug/examples/agent"
row "acp-engine (C) example agent" "$work/c-agent"
[[ -x "$root/target/python-venv/bin/python" ]] &&
  row "acp-engine (Python) example agent" "$root/target/python-venv/bin/python" "$root/python/examples/agent.py"
[[ -f "$root/target/node-app/out/examples/agent.js" ]] &&
  row "acp-engine (Node) example agent" node "$root/target/node-app/out/examples/agent.js"
[[ -x "$root/target/go-bin/agent" ]] && row "acp-engine (Go) example agent" "$root/target/go-bin/agent"
row "official TypeScript SDK agent (interop/ts/agent.mjs)" node "$here/ts/agent.mjs"
echo "INFO official Python SDK agent (interop/python/agent.py), for the record:"
"$tool" check agent -- "$here/python/.venv/bin/python" "$here/python/agent.py" 2>&1 | cut -c1-220 | sed 's/^/  | /'
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
