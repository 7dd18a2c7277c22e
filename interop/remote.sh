#!/usr/bin/env bash
# Remote agents over WebSocket, on loopback (what `make test-remote` runs):
# `acp-engine serve` in front of our agents and the official SDKs', reached
# by the official TypeScript SDK's WebSocket client and by our Rust client
# through `acp-engine connect`, each completing the interop contract
# (README.md: permission, fs, terminal, cancellation); a bearer token
# checked before any agent starts; malformed frames; a client that vanishes
# mid-turn (its agent process is stopped); `acp-engine trace` in front of a
# remote agent. Expects target/debug/acp-engine,
# the Rust examples and the C library built, and interop/setup.sh run; the
# Python, Node and Go rows join when their suites left their examples built
# (target/python-venv, target/node-app, target/go-bin).
# Last line: "N passed, M failed".
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
tool="$root/target/debug/acp-engine"
rust_agent="$root/target/debug/examples/agent"
rust_client="$root/target/debug/examples/client"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-remote.XXXXXX")"
servers=()
cleanup() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; [[ -n "${2:-}" ]] && tail -n 20 "$2" | sed 's/^/  | /'; failed=$((failed + 1)); }

# serve NAME [serve options] -- AGENT...: start a server; its URL in $url,
# its log in $work/NAME.log.
serve() {
  local name="$1"; shift
  "$tool" serve --listen 127.0.0.1:0 "$@" >"$work/$name.url" 2>"$work/$name.log" &
  servers+=("$!")
  for _ in $(seq 100); do
    url="$(head -n 1 "$work/$name.url" 2>/dev/null)"
    [[ -n "$url" ]] && return 0
    sleep 0.05
  done
  echo "serve $name did not start"; cat "$work/$name.log"; return 1
}

# row NAME COMMAND...: a client run that must print "interop ok".
row() {
  local name="$1"; shift
  if timeout 60 "$@" >"$work/row.out" 2>&1 && grep -qx "interop ok" "$work/row.out"; then pass "$name"
  else fail "$name" "$work/row.out"; fi
}

ts_client=(node "$here/ts/client.mjs")
official_ts_agent=(node "$here/ts/agent.mjs")
official_py_agent=("$here/python/.venv/bin/python" "$here/python/agent.py")
our_py="$root/target/python-venv/bin/python"

serve rust -- "$rust_agent"
row "official TypeScript client (WebSocket) -> serve -> acp-engine (Rust) agent" "${ts_client[@]}" "$url"
row "acp-engine (Rust) client -> connect -> serve -> acp-engine (Rust) agent" "$rust_client" "$tool" connect "$url"
serve ts -- "${official_ts_agent[@]}"
row "official TypeScript client (WebSocket) -> serve -> official TypeScript agent" "${ts_client[@]}" "$url"
row "acp-engine (Rust) client -> connect -> serve -> official TypeScript agent" "$rust_client" "$tool" connect "$url"
row "acp-engine (Rust) client -> trace -> serve -> official TypeScript agent" "$rust_client" "$tool" trace --out "$work/remote-trace.jsonl" -- "$url"
if summary="$(python3 "$here/trace_clean.py" "$work/remote-trace.jsonl" 2>&1)"; then
  pass "trace of a remote agent: $summary"
else
  fail "trace of a remote agent: $summary"
fi
serve py -- "${official_py_agent[@]}"
row "official TypeScript client (WebSocket) -> serve -> official Python agent" "${ts_client[@]}" "$url"
if [[ -x "$our_py" ]]; then
  serve ours-py -- "$our_py" "$root/python/examples/agent.py"
  row "official TypeScript client (WebSocket) -> serve -> acp-engine (Python) agent" "${ts_client[@]}" "$url"
fi

# Our clients in every language (their example clients take a URL) against
# the official TypeScript agent behind serve, and our other agents behind it
# for the official client.
cc -o "$work/c-client" "$root/bindings/c/examples/client.c" -I "$root/include" \
  -L "$root/target/debug" -lacp_engine "-Wl,-rpath,$root/target/debug" &&
  cc -o "$work/c-agent" "$root/bindings/c/examples/agent.c" -I "$root/include" \
    -L "$root/target/debug" -lacp_engine "-Wl,-rpath,$root/target/debug" || fail "build the C examples"
serve ts-for-ours -- "${official_ts_agent[@]}"
row "acp-engine (C) client (WebSocket) -> serve -> official TypeScript agent" "$work/c-client" "$url"
if [[ -x "$our_py" ]]; then
  row "acp-engine (Python) client (WebSocket) -> serve -> official TypeScript agent" "$our_py" "$root/python/examples/client.py" "$url"
fi
node_examples="$root/target/node-app/out/examples"
if [[ -f "$node_examples/client.js" ]]; then
  row "acp-engine (Node) client (WebSocket) -> serve -> official TypeScript agent" node "$node_examples/client.js" "$url"
  serve ours-node -- node "$node_examples/agent.js"
  row "official TypeScript client (WebSocket) -> serve -> acp-engine (Node) agent" "${ts_client[@]}" "$url"
fi
if [[ -x "$root/target/go-bin/client" ]]; then
  row "acp-engine (Go) client (WebSocket) -> serve -> official TypeScript agent" "$root/target/go-bin/client" "$url"
  serve ours-go -- "$root/target/go-bin/agent"
  row "official TypeScript client (WebSocket) -> serve -> acp-engine (Go) agent" "${ts_client[@]}" "$url"
fi
serve ours-c -- "$work/c-agent"
row "official TypeScript client (WebSocket) -> serve -> acp-engine (C) agent" "${ts_client[@]}" "$url"

# The token is checked before an agent starts: the agent here would leave a
# mark if it ever ran.
mark="$work/agent-started"
serve token --token secret-token -- sh -c "touch '$mark'; exec '$rust_agent'"
if ACP_ENGINE_TOKEN=wrong "$tool" connect "$url" </dev/null >"$work/token.out" 2>&1; then
  fail "a wrong token is refused" "$work/token.out"
elif grep -q "401" "$work/token.out" && [[ ! -e "$mark" ]]; then
  pass "a wrong token is refused (401) before any agent starts"
else
  fail "a wrong token is refused (401) before any agent starts" "$work/token.out"
fi
if "$tool" connect "$url" </dev/null >"$work/token.out" 2>&1 || ! grep -q "401" "$work/token.out"; then
  fail "no token is refused" "$work/token.out"
else
  pass "no token is refused (401)"
fi
row "the right token: official TypeScript client -> serve --token -> acp-engine (Rust) agent" \
  env ACP_ENGINE_TOKEN=secret-token "${ts_client[@]}" "$url"

# An agent that goes away ends `connect` and `trace` even while their stdin
# stays open (an editor that has not noticed yet).
serve gone -- sh -c 'exit 0'
for via in connect trace; do
  if [[ "$via" == connect ]]; then args=(connect "$url"); else args=(trace --out "$work/gone.jsonl" -- "$url"); fi
  if timeout 10 "$tool" "${args[@]}" < <(sleep 30) >"$work/gone.out" 2>&1; then
    pass "$via exits when its remote agent goes away, stdin still open"
  else
    fail "$via exits when its remote agent goes away, stdin still open (status $?)" "$work/gone.out"
  fi
done

serve faults -- "$rust_agent"
if timeout 30 node "$here/ts/ws-faults.mjs" malformed "$url" >"$work/faults.out" 2>&1; then
  pass "malformed frames: -32700, -32600, the connection answers on; a binary frame closes it (1003)"
else
  fail "malformed frames" "$work/faults.out"
fi
if timeout 30 node "$here/ts/ws-faults.mjs" disconnect "$url" >"$work/faults.out" 2>&1; then
  pid="$(grep -o 'connected (agent pid [0-9]*' "$work/faults.log" | tail -n 1 | grep -o '[0-9]*$')"
  for _ in $(seq 100); do [[ -n "$pid" && -d "/proc/$pid" ]] || break; sleep 0.05; done
  if [[ -n "$pid" && ! -d "/proc/$pid" ]]; then pass "a client that vanishes mid-turn: its agent (pid $pid) is stopped"
  else fail "a client that vanishes mid-turn: its agent (pid ${pid:-?}) is still running" "$work/faults.log"; fi
else
  fail "a client that vanishes mid-turn" "$work/faults.out"
fi

# A client that stops reading: the server drops it after its output stall
# timeout, and its agent is stopped.
serve stall --output-stall-timeout-ms 500 -- "$rust_agent"
if timeout 60 node "$here/ts/ws-faults.mjs" stall "$url" >"$work/faults.out" 2>&1; then
  pid="$(grep -o 'connected (agent pid [0-9]*' "$work/stall.log" | tail -n 1 | grep -o '[0-9]*$')"
  for _ in $(seq 100); do [[ -n "$pid" && -d "/proc/$pid" ]] || break; sleep 0.05; done
  if [[ -n "$pid" && ! -d "/proc/$pid" ]]; then pass "a client that stops reading is dropped after the stall timeout; $(cat "$work/faults.out")"
  else fail "a client that stops reading: its agent (pid ${pid:-?}) is still running" "$work/stall.log"; fi
else
  fail "a client that stops reading is dropped after the stall timeout" "$work/faults.out"
fi

# A slow reader over WebSocket: the flood client (400,000 requests without
# reading) through `acp-engine connect`; the server and its agent stay within
# the agent's default limits plus a constant.
serve flood -- "$rust_agent"
flood_pid="${servers[-1]}"
for mode in handler engine; do
  if result="$(timeout 600 python3 "$root/reliability/flood.py" --mode "$mode" --max-growth-mib 96 --rss-of "$flood_pid" -- "$tool" connect "$url")"; then
    pass "a slow WebSocket reader ($mode): server and agent bounded: $result"
  else
    fail "a slow WebSocket reader ($mode): $result"
  fi
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
