#!/usr/bin/env bash
# MCP-over-ACP with a real MCP server (part of `make test-interop`): a client
# (core/examples/mcp_client.rs, on acp_engine::mcp::McpServers) offers the
# official MCP TypeScript SDK's server (ts/mcp-server.mjs, stdio) to an agent
# over ACP; the agent (core/examples/mcp_agent.rs) lists its tools and calls
# one with `mcp/message`. Directly, through our conductor with two of our
# proxies, and through the official Rust conductor with ours. (Not with the
# TS SDK's proxy, ts/proxy.mjs: the SDK lets the agent's last
# session/update overtake the turn's answer it forwarded before it, in 2 of
# 10 runs under our conductor and 7 of 10 under the official one, and the
# client stops at the answer.) The client
# prints "mcp ok" when the agent reported the tool's answer, and the MCP
# server must have logged the call.
# Expects target/debug/{acp-engine,examples/*} built, interop/setup.sh run and
# bench/official-rust's conductor built (interop/conductor.sh builds it).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
bin="$root/target/debug"
official="$root/bench/official-rust/target/release/official-conductor"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-mcp.XXXXXX")"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# row NAME AGENT...: the client offers the MCP server to AGENT.
row() {
  local name="$1"; shift
  if timeout -k 5 60 "$bin/examples/mcp_client" --mcp "node $here/ts/mcp-server.mjs" -- "$@" \
      </dev/null >"$work/out" 2>"$work/err" &&
      grep -qx "mcp ok" "$work/out" && grep -q "\[mcp-server\] add 2 3" "$work/err"; then
    echo "PASS $name"; passed=$((passed + 1))
  else
    echo "FAIL $name"; tail -n 20 "$work/out" "$work/err" | sed 's/^/  | /'; failed=$((failed + 1))
  fi
}

row "our agent calls the official MCP server our client offers" "$bin/examples/mcp_agent"
row "the same through our conductor (two of our proxies)" \
  "$bin/acp-engine" conduct "$bin/examples/proxy --name a" "$bin/examples/proxy --name b" "$bin/examples/mcp_agent"
row "the same through the official Rust conductor (our proxy)" \
  "$official" agent "$bin/examples/proxy" "$bin/examples/mcp_agent"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
