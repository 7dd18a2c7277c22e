#!/usr/bin/env bash
# Proxy chains across implementations (part of `make test-interop`): our
# conductor (`acp-engine conduct`) with our proxy (core/examples/proxy.rs)
# and the official TypeScript SDK's (ts/proxy.mjs), and the official Rust
# SDK's conductor (agent-client-protocol-conductor 5.0.0, built in
# bench/official-rust) with ours; and each conductor nested as a proxy in
# the other's chain; C, Go, Python, Node and Kotlin proxies in both
# conductors (all but C's when their suites left them built). Each chain is driven by a client through a
# whole session (prompt, permission, file read, terminal, cancellation: the
# client prints "interop ok"), and every proxy must log the prompt going
# down and the permission request coming up. (cli/tests/conduct.rs checks
# the messages on every hop exactly.)
# Expects target/debug/{acp-engine,examples/*} built and interop/setup.sh run.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
bin="$root/target/debug"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-conduct.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cargo build --release -q --manifest-path "$root/bench/official-rust/Cargo.toml" --bin official-conductor || exit 1
official="$root/bench/official-rust/target/release/official-conductor"
# A proxy of ours / of the TS SDK named $1; with a second word, it also puts
# a text block before every prompt (only before our agent: the official TS
# agent's script expects its prompts as its client sent them).
ours() { echo "$bin/examples/proxy --name $1 --log $work/proxies.log${2:+ --prefix $1}"; }
theirs() { echo "node $here/ts/proxy.mjs $1 $work/proxies.log${2:+ --prefix}"; }
our_client="$bin/examples/client"
ts_client=(node "$here/ts/client.mjs")
passed=0
failed=0

# chain NAME CLIENT... -- CONDUCTOR...: the client runs the chain as its
# agent. PROXY_MARKS (set before the call) are the proxies' log prefixes to
# find in $work/proxies.log (the official conductor keeps its components'
# stderr to itself).
chain() {
  local name="$1"; shift
  local ok=1 mark
  : >"$work/proxies.log"
  if ! ACP_INTEROP_NEWS=1 timeout -k 5 60 "$@" </dev/null >"$work/out" 2>"$work/err" || ! grep -qx "interop ok" "$work/out"; then
    ok=0
  fi
  for mark in "${PROXY_MARKS[@]}"; do
    grep -qF "$mark -> session/prompt" "$work/proxies.log" &&
      grep -qF "$mark <- session/request_permission" "$work/proxies.log" || ok=0
  done
  if [[ $ok == 1 ]]; then
    echo "PASS $name"; passed=$((passed + 1))
  else
    echo "FAIL $name"; tail -n 30 "$work/err" "$work/proxies.log" | sed 's/^/  | /'; failed=$((failed + 1))
  fi
}

PROXY_MARKS=("[proxy ours]" "[ts-proxy theirs]")
chain "our conductor: our proxy -> official TS proxy -> our agent (our client)" \
  "$our_client" "$bin/acp-engine" conduct "$(ours ours rewrite)" "$(theirs theirs rewrite)" "$bin/examples/agent"
PROXY_MARKS=("[ts-proxy theirs]" "[proxy ours]")
chain "our conductor: official TS proxy -> our proxy -> official TS agent (official TS client)" \
  "${ts_client[@]}" "$bin/acp-engine" conduct "$(theirs theirs)" "$(ours ours)" "node $here/ts/agent.mjs"
PROXY_MARKS=("[proxy one]" "[proxy two]")
chain "official Rust conductor: our proxy -> our proxy -> our agent (our client)" \
  "$our_client" "$official" agent "$(ours one rewrite)" "$(ours two rewrite)" "$bin/examples/agent"
PROXY_MARKS=("[proxy ours]" "[ts-proxy theirs]")
chain "official Rust conductor: our proxy -> official TS proxy -> official TS agent (official TS client)" \
  "${ts_client[@]}" "$official" agent "$(ours ours)" "$(theirs theirs)" "node $here/ts/agent.mjs"
# Conductors nested as proxies, each kind inside the other.
PROXY_MARKS=("[proxy outer]" "[proxy in1]" "[proxy in2]")
chain "official Rust conductor: our proxy -> our conductor (--proxy: our proxy -> our proxy) -> our agent" \
  "$our_client" "$official" agent "$(ours outer rewrite)" \
  "$bin/acp-engine conduct --proxy '$(ours in1 rewrite)' '$(ours in2 rewrite)'" "$bin/examples/agent"
PROXY_MARKS=("[proxy outer]" "[proxy in1]" "[ts-proxy in2]")
chain "our conductor: our proxy -> official Rust conductor (proxy: our proxy -> official TS proxy) -> our agent" \
  "$our_client" "$bin/acp-engine" conduct "$(ours outer rewrite)" \
  "$official proxy '$(ours in1 rewrite)' '$(theirs in2 rewrite)'" "$bin/examples/agent"
# Proxies in the other languages, on each one's proxy API (the engine's split
# of the conductor's connection), each following our proxy's contract and
# logging as `[LANG-proxy NAME]`: in our conductor, and in the official Rust
# conductor in front of the official TypeScript proxy and agent.
# language_rows LANG COMMAND: COMMAND runs that language's proxy.
language_rows() {
  local lang="$1" command="$2"
  PROXY_MARKS=("[$lang-proxy $lang]" "[proxy ours]")
  chain "our conductor: $lang proxy -> our proxy -> our agent (our client)" \
    "$our_client" "$bin/acp-engine" conduct "$command --name $lang --log $work/proxies.log --prefix $lang" \
    "$(ours ours rewrite)" "$bin/examples/agent"
  PROXY_MARKS=("[$lang-proxy $lang]" "[ts-proxy theirs]")
  chain "official Rust conductor: $lang proxy -> official TS proxy -> official TS agent (official TS client)" \
    "${ts_client[@]}" "$official" agent "$command --name $lang --log $work/proxies.log" "$(theirs theirs)" \
    "node $here/ts/agent.mjs"
}
# The proxies of every language at hand, as "LANG COMMAND".
languages=()
if cc -std=c11 -Wall -Wextra -Werror -I "$root/include" "$root/bindings/c/examples/proxy.c" -L "$bin" -lacp_engine \
    "-Wl,-rpath,$bin" -o "$work/c-proxy"; then languages+=("c $work/c-proxy")
else echo "FAIL bindings/c/examples/proxy.c does not compile"; failed=$((failed + 1)); fi
if [[ -f "$root/target/go-prefix/lib/pkgconfig/acp_engine.pc" ]]; then
  if (cd "$root/go" && GOTOOLCHAIN=local GOFLAGS=-mod=mod PKG_CONFIG_PATH="$root/target/go-prefix/lib/pkgconfig" \
      go build -o "$work/go-proxy" ./examples/proxy); then languages+=("go $work/go-proxy")
  else echo "FAIL go/examples/proxy does not build"; failed=$((failed + 1)); fi
else echo "SKIP Go proxies: target/go-prefix not installed (make test-go)"; fi
py="$root/target/python-venv/bin/python"
if [[ -x "$py" ]]; then languages+=("py $py $root/python/tests/peers/proxy.py")
else echo "SKIP Python proxies: target/python-venv not built (make test-python)"; fi
app="$root/target/node-app"
if [[ -f "$app/node_modules/acp-engine/dist/proxy.js" ]]; then languages+=("node node $app/test/peers/proxy.mjs")
else echo "SKIP Node proxies: target/node-app not built (make test-node)"; fi
kotlin="$root/kotlin/target"
if [[ -f "$kotlin/classpath.txt" ]]; then
  languages+=("kotlin java -Xshare:auto -XX:TieredStopAtLevel=1 -cp $kotlin/classes:$kotlin/test-classes:$(cat "$kotlin/classpath.txt") acp_engine.LoggingProxyKt")
else echo "SKIP Kotlin proxies: kotlin/target not built (make test-kotlin)"; fi
for language in "${languages[@]}"; do language_rows "${language%% *}" "${language#* }"; done
# One chain through all of them, ours and the official TypeScript proxy, each
# putting its text before the prompt: a whole session, a cancelled turn included.
every=() PROXY_MARKS=("[proxy ours]")
for language in "${languages[@]}"; do
  lang="${language%% *}"
  every+=("${language#* } --name $lang --log $work/proxies.log --prefix $lang")
  PROXY_MARKS+=("[$lang-proxy $lang]")
done
PROXY_MARKS+=("[ts-proxy theirs]")
chain "our conductor: our proxy -> ${#languages[@]} languages' proxies -> official TS proxy -> our agent (our client)" \
  "$our_client" "$bin/acp-engine" conduct "$(ours ours rewrite)" "${every[@]}" "$(theirs theirs rewrite)" "$bin/examples/agent"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
