#!/usr/bin/env bash
# ACP v2 (the draft) against the official implementations. Rust's typed v2
# (`acp_engine::v2`: core/examples/v2_agent.rs, alone and as an
# AgentProtocolRouter with `--router`; core/examples/v2_client.rs) with the
# official Rust SDK's v2 client and the official TypeScript SDK's v2 and v1
# clients and router agent. Then the official Rust SDK's v2 client
# (bench/official-rust, `Client.v2()`) drives the other languages' v2 agents:
# C's, Go's and Kotlin's (the ones their suites run; the official TypeScript
# v2 client drives them too), and the dual-version
# agents, Python's (a plain Connection with protocol_versions
# (1, 2); and its typed v2 agent) and Node's (the official TypeScript router agent, interop/ts/
# dual-agent.mjs, on our package with only its imports changed), and the
# official TypeScript one for comparison, through initialize, a session and
# a turn reported by state updates. (The official TypeScript v2 client runs
# against the same agents in the Python and Node suites, and through
# `serve` in remote.sh.) Expects interop/setup.sh run; the Python and Node
# rows join when their suites left target/python-venv and target/node-app.
# Last line: "N passed, M failed".
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; [[ -n "${2:-}" ]] && tail -n 20 "$2" | sed 's/^/  | /'; failed=$((failed + 1)); }
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-v2.XXXXXX")"
trap 'rm -rf "$work"' EXIT

cargo build --release -q --manifest-path "$root/bench/official-rust/Cargo.toml" --bin official-v2-client || exit 1
client="$root/bench/official-rust/target/release/official-v2-client"

# row NAME AGENT_COMMAND_LINE: the official Rust v2 client's turn must end with "v2 ok".
row() {
  if timeout 60 "$client" "$2" >"$work/row.out" 2>&1 && grep -qx "v2 ok" "$work/row.out"; then pass "$1"
  else fail "$1" "$work/row.out"; fi
}

# v2_rows LANGUAGE WHAT COMMAND_LINE: our v2 agent under both official v2
# clients (Rust's, then TypeScript's `experimental/v2`).
v2_rows() {
  row "official Rust v2 client -> acp-engine ($1) $2" "$3"
  # shellcheck disable=SC2086 # the command line is words
  ts_row "official TypeScript v2 client -> acp-engine ($1) $2" "v2 ok" node "$here/ts/v2-client.mjs" $3
}

# ts_row NAME LAST_LINE COMMAND...: the command's last line must be LAST_LINE.
ts_row() {
  local name="$1" expected="$2"; shift 2
  if timeout 60 "$@" >"$work/row.out" 2>&1 && [[ "$(tail -n 1 "$work/row.out")" == "$expected" ]]; then pass "$name"
  else fail "$name" "$work/row.out"; fi
}

examples="$root/target/debug/examples"
row "official Rust v2 client -> acp-engine (Rust) v2 agent (acp_engine::v2)" "$examples/v2_agent"
row "official Rust v2 client -> acp-engine (Rust) AgentProtocolRouter" "$examples/v2_agent --router"
ts_row "official TypeScript v2 client -> acp-engine (Rust) v2 agent" "v2 ok" node "$here/ts/v2-client.mjs" "$examples/v2_agent"
ts_row "official TypeScript v2 client -> acp-engine (Rust) AgentProtocolRouter" "v2 ok" \
  node "$here/ts/v2-client.mjs" "$examples/v2_agent" --router
ts_row "official TypeScript v1 client -> acp-engine (Rust) AgentProtocolRouter (its v1 agent)" "readme ok" \
  node "$here/ts/readme-client.mjs" "$examples/v2_agent" --router
ts_row "acp-engine (Rust) v2 client -> official TypeScript dual-version agent" "v2 ok" \
  "$examples/v2_client" node "$here/ts/dual-agent.mjs"
# A v2-only client against a v1-only agent must fail initialize, as the official v2 clients do.
if ! timeout 60 "$examples/v2_client" node "$here/ts/agent.mjs" >"$work/row.out" 2>&1 &&
    grep -q "answered protocol version 1, not 2" "$work/row.out"; then
  pass "acp-engine (Rust) v2 client refuses the official TypeScript v1 agent's answer"
else
  fail "acp-engine (Rust) v2 client refuses the official TypeScript v1 agent's answer" "$work/row.out"
fi

row "official Rust v2 client -> official TypeScript dual-version agent" "node $here/ts/dual-agent.mjs"
# The C, Go and Kotlin v2 agents of their suites, built or found here.
if cc -std=c11 -Wall -Wextra -Werror -I "$root/include" -I "$root/bindings/c/tests" "$root/bindings/c/tests/test_versions.c" \
    -L "$root/target/debug" -lacp_engine "-Wl,-rpath,$root/target/debug" -lpthread -o "$work/c-versions"; then
  v2_rows C "v2 agent (test_versions.c)" "$work/c-versions --v2-agent"
else fail "bindings/c/tests/test_versions.c does not compile"; fi
if [[ -f "$root/target/go-prefix/lib/pkgconfig/acp_engine.pc" ]]; then
  if (cd "$root/go" && GOTOOLCHAIN=local GOFLAGS=-mod=mod PKG_CONFIG_PATH="$root/target/go-prefix/lib/pkgconfig" \
      go test -c -o "$work/acpv2.test" ./acpv2); then
    v2_rows Go "typed v2 agent (acpv2)" "env ACP_ACPV2_TEST_ROLE=agent $work/acpv2.test"
  else fail "go/acpv2's tests do not build"; fi
else
  echo "SKIP official Rust v2 client -> acp-engine (Go): target/go-prefix not installed (make test-go)"
fi
kotlin="$root/kotlin/target"
if [[ -f "$kotlin/classpath.txt" ]]; then
  java="java -Xshare:auto -XX:TieredStopAtLevel=1 -cp $kotlin/classes:$kotlin/test-classes:$(cat "$kotlin/classpath.txt")"
  v2_rows Kotlin "typed v2 agent (acp_engine.v2)" "$java acp_engine.v2.EchoAgentKt"
else
  echo "SKIP official Rust v2 client -> acp-engine (Kotlin): kotlin/target not built (make test-kotlin)"
fi
our_py="$root/target/python-venv/bin/python"
if [[ -x "$our_py" ]]; then
  row "official Rust v2 client -> acp-engine (Python) dual-version agent" "$our_py $root/python/tests/peers/dual_version_agent.py"
  row "official Rust v2 client -> acp-engine (Python) v2 agent (acp_engine.experimental.v2)" "$our_py $root/python/tests/peers/v2_agent.py"
  row "official Rust v2 client -> acp-engine (Python) v2 agent in the official Python API (acp_engine.compat)" "$our_py $root/python/tests/peers/compat_v2_agent.py"
  row "official Rust v2 client -> acp-engine (Python) AgentProtocolRouter (acp_engine.compat)" "$our_py $root/python/tests/peers/compat_router_agent.py"
else
  echo "SKIP official Rust v2 client -> acp-engine (Python): target/python-venv not built (make test-python)"
fi
app="$root/target/node-app"
if [[ -f "$app/node_modules/acp-engine/dist/experimental/v2.js" ]]; then
  # The official router agent on our package: its SDK imports changed, nothing else.
  sed 's#from "@agentclientprotocol/sdk#from "acp-engine#' "$here/ts/dual-agent.mjs" >"$app/dual-agent.mjs"
  row "official Rust v2 client -> acp-engine (Node) agentProtocolRouter" "node $app/dual-agent.mjs"
else
  echo "SKIP official Rust v2 client -> acp-engine (Node): target/node-app not built (make test-node)"
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
