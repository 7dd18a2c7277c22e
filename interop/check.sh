#!/usr/bin/env bash
# `acp-engine check agent` and `check client` against every agent and
# client we ship and the official SDKs' (what `make test-check` runs): ours
# in every language and the official TypeScript SDK's must pass every case;
# the official Python SDK's verdicts are printed for the record (as of
# agent-client-protocol 1.0.0rc3 its agent fails two malformed-input cases
# and its client one; see README "Checking an agent or a client").
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
side=agent
# row NAME [--protocol-version N] COMMAND...: every case of `check $side`
# must pass (or be skipped).
row() {
  local name="$1" options=(); shift
  if [[ "${1:-}" == --protocol-version ]]; then options=("$1" "$2"); shift 2; fi
  if "$tool" check "$side" "${options[@]}" -- "$@" >"$work/out" 2>&1; then
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
# ACP v2 agents: check finds a v2-only agent refusing version 1 and runs the
# v2 cases; a dual-version agent gets them with --protocol-version 2.
row "acp-engine (Rust) v2 agent (v2 cases, found)" "$root/target/debug/examples/v2_agent"
row "acp-engine (Rust) AgentProtocolRouter (v2 cases)" --protocol-version 2 "$root/target/debug/examples/v2_agent" --router
row "official TypeScript SDK dual-version agent (v2 cases)" --protocol-version 2 node "$here/ts/dual-agent.mjs"
row "official TypeScript SDK dual-version agent (v1 cases)" node "$here/ts/dual-agent.mjs"
echo "INFO official Python SDK agent (interop/python/agent.py), for the record:"
"$tool" check agent -- "$here/python/.venv/bin/python" "$here/python/agent.py" 2>&1 | cut -c1-220 | sed 's/^/  | /'

# `check client` starts each client with its agent command appended.
side=client
cc -o "$work/c-client" "$root/bindings/c/examples/client.c" -I "$root/include" \
  -L "$root/target/debug" -lacp_engine "-Wl,-rpath,$root/target/debug"
row "acp-engine (Rust) example client" "$root/target/debug/examples/client"
row "acp-engine (C) example client" "$work/c-client"
[[ -x "$root/target/python-venv/bin/python" ]] &&
  row "acp-engine (Python) example client" "$root/target/python-venv/bin/python" "$root/python/examples/client.py"
[[ -f "$root/target/node-app/out/examples/client.js" ]] &&
  row "acp-engine (Node) example client" node "$root/target/node-app/out/examples/client.js"
[[ -x "$root/target/go-bin/client" ]] && row "acp-engine (Go) example client" "$root/target/go-bin/client"
row "official TypeScript SDK client (interop/ts/client.mjs)" node "$here/ts/client.mjs"
echo "INFO official Python SDK client (interop/python/client.py), for the record:"
"$tool" check client -- "$here/python/.venv/bin/python" "$here/python/client.py" 2>&1 | cut -c1-220 | sed 's/^/  | /'
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
