#!/usr/bin/env bash
# Remote agents over WebSocket and Streamable HTTP, on loopback (what `make
# test-remote` runs): `acp-engine serve` in front of our agents and the
# official SDKs', reached by the official TypeScript SDK's clients (its
# WebSocket and HTTP streams) and by our clients in every language, each
# completing the interop contract (README.md: permission, fs, terminal,
# cancellation); our clients against the official SDK's own server
# (AcpServer); a bearer token checked before any agent starts; malformed
# frames and bodies; a client that vanishes mid-turn (its agent process is
# stopped); a server killed mid-request (the pending request fails at once);
# a slow reader; `acp-engine trace` in front of a remote agent; the official
# v2 client through serve (v2 and dual-version agents); two official clients
# on one session (serve --attach). Expects target/debug/acp-engine,
# the Rust examples and the C library built, and interop/setup.sh run; the
# Python, Node, Go and Kotlin rows join when their suites left their
# examples built (target/python-venv, target/node-app, target/go-bin,
# kotlin/target).
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
  # SIGTERM (a background job ignores SIGINT); `serve` drains for 2 s at most.
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; [[ -n "${2:-}" ]] && tail -n 20 "$2" | sed 's/^/  | /'; failed=$((failed + 1)); }

# serve NAME [serve options] -- AGENT...: start a server; its WebSocket URL
# in $url (and $ws_url), its Streamable HTTP URL in $http_url, its log in
# $work/NAME.log.
serve() {
  local name="$1"; shift
  "$tool" serve --listen 127.0.0.1:0 --drain-timeout-ms 2000 "$@" >"$work/$name.url" 2>"$work/$name.log" &
  servers+=("$!")
  wait_urls "$name"
}

# wait_urls NAME: the two URLs a server prints first, from $work/NAME.url.
wait_urls() {
  for _ in $(seq 200); do
    # The second line first: once it is there, so is the first.
    http_url="$(sed -n 2p "$work/$1.url" 2>/dev/null)"
    ws_url="$(sed -n 1p "$work/$1.url" 2>/dev/null)"
    url="$ws_url"
    [[ -n "$http_url" ]] && return 0
    sleep 0.05
  done
  echo "server $1 did not start"; cat "$work/$1.log"; return 1
}

# official_server NAME: the official TypeScript agent behind the official
# SDK's own server (AcpServer, WebSocket and Streamable HTTP).
official_server() {
  node "$here/ts/agent.mjs" --serve 127.0.0.1:0 >"$work/$1.url" 2>"$work/$1.log" &
  servers+=("$!")
  wait_urls "$1"
}

# self_served NAME AGENT...: one of our example agents serving remote
# clients itself (`--serve`, each language's server API).
self_served() {
  local name="$1"; shift
  "$@" --serve 127.0.0.1:0 >"$work/$name.url" 2>"$work/$name.log" &
  servers+=("$!")
  wait_urls "$name"
}

# said_row LINE NAME COMMAND...: a client run that must print LINE.
said_row() {
  local said="$1" name="$2"; shift 2
  if timeout 60 "$@" >"$work/row.out" 2>&1 && grep -qx "$said" "$work/row.out"; then pass "$name"
  else fail "$name" "$work/row.out"; fi
}

# row NAME COMMAND...: a client run that must print "interop ok".
row() { said_row "interop ok" "$@"; }

ts_client=(node "$here/ts/client.mjs")
official_ts_agent=(node "$here/ts/agent.mjs")
official_py_agent=("$here/python/.venv/bin/python" "$here/python/agent.py")
our_py="$root/target/python-venv/bin/python"

# official_rows AGENT_NAME: the official TypeScript client over each
# transport against the server just started.
official_rows() {
  row "official TypeScript client (WebSocket) -> serve -> $1" "${ts_client[@]}" "$ws_url"
  row "official TypeScript client (Streamable HTTP) -> serve -> $1" "${ts_client[@]}" "$http_url"
}

serve rust -- "$rust_agent"
official_rows "acp-engine (Rust) agent"
row "acp-engine (Rust) client -> connect (WebSocket) -> serve -> acp-engine (Rust) agent" "$rust_client" "$tool" connect "$ws_url"
row "acp-engine (Rust) client -> connect (Streamable HTTP) -> serve -> acp-engine (Rust) agent" "$rust_client" "$tool" connect "$http_url"
serve ts -- "${official_ts_agent[@]}"
official_rows "official TypeScript agent"
row "acp-engine (Rust) client -> connect (WebSocket) -> serve -> official TypeScript agent" "$rust_client" "$tool" connect "$ws_url"
row "acp-engine (Rust) client -> connect (Streamable HTTP) -> serve -> official TypeScript agent" "$rust_client" "$tool" connect "$http_url"
row "acp-engine (Rust) client -> trace -> serve -> official TypeScript agent" "$rust_client" "$tool" trace --out "$work/remote-trace.jsonl" -- "$url"
if summary="$(python3 "$here/trace_clean.py" "$work/remote-trace.jsonl" 2>&1)"; then
  pass "trace of a remote agent: $summary"
else
  fail "trace of a remote agent: $summary"
fi
serve py -- "${official_py_agent[@]}"
official_rows "official Python agent"
if [[ -x "$our_py" ]]; then
  serve ours-py -- "$our_py" "$root/python/examples/agent.py"
  official_rows "acp-engine (Python) agent"
fi

# The ACP v2 draft through serve: the official SDK's v2 client over each
# transport, against its own dual-version agent (its protocol router) and
# ours (the engine selects the version at initialize).
v2_row() { said_row "v2 ok" "$@"; }
v2_rows() {
  v2_row "official TypeScript v2 client (WebSocket) -> serve -> $1" node "$here/ts/v2-client.mjs" "$ws_url"
  v2_row "official TypeScript v2 client (Streamable HTTP) -> serve -> $1" node "$here/ts/v2-client.mjs" "$http_url"
}
serve ts-dual -- node "$here/ts/dual-agent.mjs"
v2_rows "official TypeScript dual-version agent"
serve rust-router -- "$root/target/debug/examples/v2_agent" --router
v2_rows "acp-engine (Rust) AgentProtocolRouter"
# A v1 and a v2 client at once, on the one served router: each gets its version.
node "$here/ts/readme-client.mjs" "$ws_url" >"$work/v1-at-once.out" 2>&1 &
v1_at_once=$!
v2_row "official TypeScript v2 client and v1 client at once -> serve -> acp-engine (Rust) AgentProtocolRouter (v2)" \
  node "$here/ts/v2-client.mjs" "$http_url"
if wait "$v1_at_once" && grep -qx "readme ok" "$work/v1-at-once.out"; then
  pass "official TypeScript v1 client and v2 client at once -> serve -> acp-engine (Rust) AgentProtocolRouter (v1)"
else
  fail "official TypeScript v1 client and v2 client at once -> serve -> acp-engine (Rust) AgentProtocolRouter (v1)" \
    "$work/v1-at-once.out"
fi
if [[ -x "$our_py" ]]; then
  serve ours-py-dual -- "$our_py" "$root/python/tests/peers/dual_version_agent.py"
  v2_rows "acp-engine (Python) dual-version agent"
fi

# Our clients in every language (their example clients take a URL) against
# the official TypeScript agent behind serve, and our other agents behind it
# for the official client.
cc -o "$work/c-client" "$root/bindings/c/examples/client.c" -I "$root/include" \
  -L "$root/target/debug" -lacp_engine "-Wl,-rpath,$root/target/debug" &&
  cc -o "$work/c-agent" "$root/bindings/c/examples/agent.c" -I "$root/include" \
    -L "$root/target/debug" -lacp_engine "-Wl,-rpath,$root/target/debug" || fail "build the C examples"
serve ts-for-ours -- "${official_ts_agent[@]}"
official_server official
# ours_rows LANGUAGE CLIENT...: our client over each transport, against
# `serve` in front of the official agent and against the official server.
ours_rows() {
  local language="$1"; shift
  row "acp-engine ($language) client (WebSocket) -> serve -> official TypeScript agent" "$@" "$ws_url"
  row "acp-engine ($language) client (Streamable HTTP) -> serve -> official TypeScript agent" "$@" "$http_url"
  row "acp-engine ($language) client (WebSocket) -> official AcpServer" "$@" "$official_ws"
  row "acp-engine ($language) client (Streamable HTTP) -> official AcpServer" "$@" "$official_http"
}
official_ws="$(sed -n 1p "$work/official.url")"
official_http="$(sed -n 2p "$work/official.url")"
ws_url="$(sed -n 1p "$work/ts-for-ours.url")"
http_url="$(sed -n 2p "$work/ts-for-ours.url")"
row "acp-engine (Rust) client -> connect (WebSocket) -> official AcpServer" "$rust_client" "$tool" connect "$official_ws"
row "acp-engine (Rust) client -> connect (Streamable HTTP) -> official AcpServer" "$rust_client" "$tool" connect "$official_http"
ours_rows C "$work/c-client"
if [[ -x "$our_py" ]]; then
  ours_rows Python "$our_py" "$root/python/examples/client.py"
fi
node_examples="$root/target/node-app/out/examples"
if [[ -f "$node_examples/client.js" ]]; then
  ours_rows Node node "$node_examples/client.js"
fi
if [[ -x "$root/target/go-bin/client" ]]; then
  ours_rows Go "$root/target/go-bin/client"
fi
kotlin_classpath="$root/kotlin/target/classpath.txt"
if [[ -f "$kotlin_classpath" ]]; then
  ours_rows Kotlin java -Xshare:auto -XX:TieredStopAtLevel=1 \
    -cp "$root/kotlin/target/classes:$root/kotlin/target/test-classes:$(cat "$kotlin_classpath")" \
    acp_engine.examples.ExampleClientKt
fi
if [[ -f "$node_examples/agent.js" ]]; then
  serve ours-node -- node "$node_examples/agent.js"
  official_rows "acp-engine (Node) agent"
fi
if [[ -x "$root/target/go-bin/agent" ]]; then
  serve ours-go -- "$root/target/go-bin/agent"
  official_rows "acp-engine (Go) agent"
fi
serve ours-c -- "$work/c-agent"
official_rows "acp-engine (C) agent"

# Our agents serving remote clients themselves, in every language: the
# official TypeScript client over each transport.
self_rows() {
  row "official TypeScript client (WebSocket) -> $1" "${ts_client[@]}" "$ws_url"
  row "official TypeScript client (Streamable HTTP) -> $1" "${ts_client[@]}" "$http_url"
}
self_served rust-server "$rust_agent"
self_rows "acp-engine (Rust) agent serving (remote::Server)"
row "acp-engine (Rust) client (Streamable HTTP) -> acp-engine (Rust) agent serving" "$rust_client" "$http_url"
self_served c-server "$work/c-agent"
self_rows "acp-engine (C) agent serving (acp_server_start)"
if [[ -x "$our_py" ]]; then
  self_served py-server "$our_py" "$root/python/examples/agent.py"
  self_rows "acp-engine (Python) agent serving (serve_agent)"
fi
if [[ -f "$node_examples/agent.js" ]]; then
  self_served node-server node "$node_examples/agent.js"
  self_rows "acp-engine (Node) agent serving (serveAgent)"
fi

# The token is checked before an agent starts: the agent here would leave a
# mark if it ever ran.
mark="$work/agent-started"
serve token --token secret-token -- sh -c "touch '$mark'; exec '$rust_agent'"
# (Over Streamable HTTP nothing is sent before initialize: the client sends one.)
initialize='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}'
for via in ws http; do
  if [[ "$via" == ws ]]; then target="$ws_url"; else target="$http_url"; fi
  if echo "$initialize" | ACP_ENGINE_TOKEN=wrong "$tool" connect "$target" >"$work/token.out" 2>&1; then
    fail "a wrong token is refused ($via)" "$work/token.out"
  elif grep -q "401" "$work/token.out" && [[ ! -e "$mark" ]]; then
    pass "a wrong token is refused (401, $via) before any agent starts"
  else
    fail "a wrong token is refused (401, $via) before any agent starts" "$work/token.out"
  fi
done
if "$tool" connect "$ws_url" </dev/null >"$work/token.out" 2>&1 || ! grep -q "401" "$work/token.out"; then
  fail "no token is refused" "$work/token.out"
else
  pass "no token is refused (401)"
fi
row "the right token: official TypeScript client (WebSocket) -> serve --token -> acp-engine (Rust) agent" \
  env ACP_ENGINE_TOKEN=secret-token "${ts_client[@]}" "$ws_url"
row "the right token: official TypeScript client (Streamable HTTP) -> serve --token -> acp-engine (Rust) agent" \
  env ACP_ENGINE_TOKEN=secret-token "${ts_client[@]}" "$http_url"

# TLS: `serve --tls-cert/--tls-key` with a self-signed certificate (openssl),
# reached over wss:// and https:// by the official client (trusting it with
# NODE_EXTRA_CA_CERTS) and by ours (`connect --ca-file`).
if openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -addext "basicConstraints=critical,CA:FALSE" -keyout "$work/tls.key" -out "$work/tls.pem" \
    >"$work/openssl.log" 2>&1; then
  serve tls --tls-cert "$work/tls.pem" --tls-key "$work/tls.key" -- "$rust_agent"
  if [[ "$ws_url" == wss://* && "$http_url" == https://* ]]; then pass "serve --tls-cert prints wss:// and https:// URLs"
  else fail "serve --tls-cert prints wss:// and https:// URLs ($ws_url $http_url)"; fi
  row "official TypeScript client (WebSocket, TLS) -> serve -> acp-engine (Rust) agent" \
    env NODE_EXTRA_CA_CERTS="$work/tls.pem" "${ts_client[@]}" "$ws_url"
  row "official TypeScript client (Streamable HTTP, TLS) -> serve -> acp-engine (Rust) agent" \
    env NODE_EXTRA_CA_CERTS="$work/tls.pem" "${ts_client[@]}" "$http_url"
  row "acp-engine (Rust) client -> connect --ca-file (Streamable HTTP, TLS) -> serve" \
    "$rust_client" "$tool" connect --ca-file "$work/tls.pem" "$http_url"
  if echo "$initialize" | "$tool" connect "$http_url" >"$work/tls.out" 2>&1; then
    fail "a client that does not trust the certificate is refused" "$work/tls.out"
  else
    pass "a client that does not trust the certificate is refused ($(grep -o 'invalid peer certificate[^"]*' "$work/tls.out" | head -1))"
  fi
else
  fail "openssl could not make a test certificate" "$work/openssl.log"
fi

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
  pass "malformed frames: -32700, -32600, binary frames taken as messages (-32700 when not UTF-8), the connection answers on"
else
  fail "malformed frames" "$work/faults.out"
fi
if timeout 30 node "$here/ts/ws-faults.mjs" disconnect "$url" >"$work/faults.out" 2>&1; then
  pid="$(grep -o '(agent pid [0-9]*' "$work/faults.log" | tail -n 1 | grep -o '[0-9]*$')"
  for _ in $(seq 100); do [[ -n "$pid" && -d "/proc/$pid" ]] || break; sleep 0.05; done
  if [[ -n "$pid" && ! -d "/proc/$pid" ]]; then pass "a client that vanishes mid-turn: its agent (pid $pid) is stopped"
  else fail "a client that vanishes mid-turn: its agent (pid ${pid:-?}) is still running" "$work/faults.log"; fi
else
  fail "a client that vanishes mid-turn" "$work/faults.out"
fi

# The malformed-input corpus (reliability/corpus) replayed over WebSocket:
# `acp-engine connect` turns each line into a frame (a text frame, or a
# binary one for bytes that are not UTF-8) to `serve` in front of the Rust
# agent; every case gets the answer it gets over a pipe and the connection
# answers on. The server takes frames up to 96 MiB here so that the huge
# line (72 MiB) reaches the agent, whose own 64 MiB line limit discards it.
serve corpus --max-message-size 100663296 -- "$rust_agent"
if out="$(timeout 600 python3 "$root/reliability/corpus_agents.py" --huge-bytes 75497472 "websocket=$tool connect $ws_url" 2>&1)" &&
  [[ "$(tail -1 <<<"$out")" == *" 0 failed" ]]; then
  pass "the malformed-input corpus over WebSocket: $(tail -1 <<<"$out")"
else
  fail "the malformed-input corpus over WebSocket: $(grep -E '^FAIL' <<<"$out" | head -5) $(tail -1 <<<"$out")"
fi

# A client that stops reading: the server drops it after its output stall
# timeout, and its agent is stopped.
serve stall --output-stall-timeout-ms 500 -- "$rust_agent"
if timeout 90 node "$here/ts/ws-faults.mjs" stall "$url" "$work/stall.log" >"$work/faults.out" 2>&1; then
  pid="$(grep -o '(agent pid [0-9]*' "$work/stall.log" | tail -n 1 | grep -o '[0-9]*$')"
  for _ in $(seq 100); do [[ -n "$pid" && -d "/proc/$pid" ]] || break; sleep 0.05; done
  if [[ -n "$pid" && ! -d "/proc/$pid" ]]; then pass "a client that stops reading is dropped after the stall timeout; $(cat "$work/faults.out")"
  else fail "a client that stops reading: its agent (pid ${pid:-?}) is still running" "$work/stall.log"; fi
else
  fail "a client that stops reading is dropped after the stall timeout" "$work/faults.out"
fi

# Streamable HTTP: malformed bodies get their JSON-RPC errors; a client
# that drops its requests mid-turn without DELETE is ended after the idle
# timeout and its agent stopped; a server killed mid-request fails the
# pending request at once, over both transports.
serve http-faults --idle-timeout-ms 500 -- "$rust_agent"
if out="$(timeout 30 node "$here/ts/remote-faults.mjs" malformed "$http_url" 2>&1)"; then pass "malformed HTTP bodies: $out"
else fail "malformed HTTP bodies: $out"; fi
if timeout 30 node "$here/ts/remote-faults.mjs" vanish "$http_url" >"$work/faults.out" 2>&1; then
  pid="$(grep -o '(agent pid [0-9]*' "$work/http-faults.log" | tail -n 1 | grep -o '[0-9]*$')"
  for _ in $(seq 100); do [[ -n "$pid" && -d "/proc/$pid" ]] || break; sleep 0.05; done
  if [[ -n "$pid" && ! -d "/proc/$pid" ]]; then pass "an HTTP client that vanishes mid-turn: its agent (pid $pid) is stopped after the idle timeout"
  else fail "an HTTP client that vanishes mid-turn: its agent (pid ${pid:-?}) is still running" "$work/http-faults.log"; fi
else
  fail "an HTTP client that vanishes mid-turn" "$work/faults.out"
fi
for via in ws http; do
  serve killed-$via -- "$rust_agent"
  if [[ "$via" == ws ]]; then target="$ws_url"; else target="$http_url"; fi
  if out="$(timeout 30 node "$here/ts/remote-faults.mjs" killed "$target" "${servers[-1]}" 2>&1)"; then
    pass "a server killed mid-request ($via): $out"
  else
    fail "a server killed mid-request ($via): $out"
  fi
done

# Several clients on one session (serve --attach): two official TypeScript
# clients, the second attached by its plain session/load, over each
# transport (interop/ts/attach-clients.mjs).
mkdir -p "$work/sessions"
serve attach --attach -- "$root/target/debug/examples/durable_agent" --sessions "$work/sessions"
for transport_url in "WebSocket $ws_url" "Streamable HTTP $http_url"; do
  said_row "attach ok" "two official TypeScript clients on one session (${transport_url% *}) -> serve --attach -> durable agent" \
    node "$here/ts/attach-clients.mjs" "${transport_url##* }"
done

# A slow reader over each transport: the flood client (up to 400,000
# requests without reading) through `acp-engine connect`; the server and its
# agent stay within the agent's default limits plus a constant. Over
# Streamable HTTP a second initialize is refused at the server (400), so
# only the engine-answered flood reaches the agent, and the server holds at
# most --max-buffered-bytes for the client (a smaller bound than the
# default, so that the serial POSTs stop early).
serve flood -- "$rust_agent"
flood_pid="${servers[-1]}"
for mode in handler engine; do
  if result="$(timeout 600 python3 "$root/reliability/flood.py" --mode "$mode" --max-growth-mib 96 --rss-of "$flood_pid" -- "$tool" connect "$ws_url")"; then
    pass "a slow reader (ws, $mode): server and agent bounded: $result"
  else
    fail "a slow reader (ws, $mode): $result"
  fi
done
serve flood-http --max-buffered-bytes 4194304 -- "$rust_agent"
flood_pid="${servers[-1]}"
if result="$(timeout 600 python3 "$root/reliability/flood.py" --mode engine --max-growth-mib 96 --rss-of "$flood_pid" -- "$tool" connect "$http_url")"; then
  pass "a slow reader (http, engine): server and agent bounded: $result"
else
  fail "a slow reader (http, engine): $result"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
