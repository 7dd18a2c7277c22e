#!/usr/bin/env bash
# The reliability suite (what `make test-reliability` runs): the malformed
# input corpus against every language's example agent and client, and
# against v2 agents initialized in v2. Expects
# the Rust examples and the C library built (debug), and target/python-venv
# from python/test.sh; Node, Go and Kotlin peers join when node/test.sh,
# go/test.sh and kotlin/test.sh left them built (target/node-app,
# target/go-bin, kotlin/target).
# Last line: "N passed, M failed".
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-reliability.XXXXXX")"
trap 'rm -rf "$work"' EXIT
huge="${ACP_RELIABILITY_HUGE_BYTES:-1073741824}"

cc -o "$work/c-agent" "$root/bindings/c/examples/agent.c" -I "$root/include" \
  -L "$root/target/debug" -lacp_engine "-Wl,-rpath,$root/target/debug" || exit 1
cc -o "$work/c-client" "$root/bindings/c/examples/client.c" -I "$root/include" \
  -L "$root/target/debug" -lacp_engine "-Wl,-rpath,$root/target/debug" || exit 1

agents=("rust=$root/target/debug/examples/agent" "c=$work/c-agent")
clients=("rust=$root/target/debug/examples/client" "c=$work/c-client")
py="$root/target/python-venv/bin/python"
if [[ -x "$py" ]]; then
  agents+=("python=$py $root/python/examples/agent.py")
  clients+=("python=$py $root/python/examples/client.py")
fi
if [[ -x "$root/target/go-bin/agent" ]]; then
  agents+=("go=$root/target/go-bin/agent")
  clients+=("go=$root/target/go-bin/client")
fi
node_examples="$root/target/node-app/out/examples"
if [[ -f "$node_examples/agent.js" ]]; then
  agents+=("node=node $node_examples/agent.js")
  clients+=("node=node $node_examples/client.js")
fi

# Kotlin's example agent and client (left built by kotlin/test.sh) take the
# corpus, and the agent the flood below with its Java heap capped: the heap
# is the JVM's, sized by whoever runs it, and the flood's bound is the
# engine's (native memory) plus that cap.
corpus_agents=("${agents[@]}")
corpus_clients=("${clients[@]}")
flood_agents=("${agents[@]}")
kotlin_heap_mib=64
kotlin_classpath="$root/kotlin/target/classpath.txt"
if [[ -f "$kotlin_classpath" ]]; then
  java="java -Xshare:auto -XX:TieredStopAtLevel=1 -cp $root/kotlin/target/classes:$root/kotlin/target/test-classes:$(cat "$kotlin_classpath")"
  corpus_agents+=("kotlin=$java acp_engine.examples.ExampleAgentKt")
  corpus_clients+=("kotlin=$java acp_engine.examples.ExampleClientKt")
  flood_agents+=("kotlin=${java/java /java -Xmx${kotlin_heap_mib}m } acp_engine.examples.ExampleAgentKt")
fi

total_passed=0
total_failed=0
tally() { # tally <output file>
  local last
  last="$(tail -1 "$1")"
  grep -E '^FAIL' "$1"
  total_passed=$((total_passed + $(echo "$last" | awk '{print $1}')))
  total_failed=$((total_failed + $(echo "$last" | awk '{print $3}')))
}
python3 "$here/corpus_agents.py" --huge-bytes "$huge" "${corpus_agents[@]}" >"$work/agents.txt" 2>/dev/null
echo "corpus -> agents: $(tail -1 "$work/agents.txt") (${#corpus_agents[@]} agents; peak RSS: $(grep -o 'peak RSS [0-9]* MiB' "$work/agents.txt" | awk '{print $3}' | paste -sd/) MiB)"
tally "$work/agents.txt"
# The same corpus against agents that speak ACP v2 (alone, or v1 and v2),
# initialized in v2.
v2_agents=("rust-v2=$root/target/debug/examples/v2_agent" "rust-router=$root/target/debug/examples/v2_agent --router")
if [[ -x "$py" ]]; then
  v2_agents+=("python-v2=$py $root/python/tests/peers/v2_agent.py"
    "python-dual=$py $root/python/tests/peers/dual_version_agent.py")
fi
if [[ -f "$root/target/node-app/node_modules/acp-engine/dist/experimental/v2.js" ]]; then
  # The official router agent on our package: its SDK imports changed, nothing else.
  sed 's#from "@agentclientprotocol/sdk#from "acp-engine#' "$root/interop/ts/dual-agent.mjs" \
    >"$root/target/node-app/dual-agent.mjs"
  v2_agents+=("node-router=node $root/target/node-app/dual-agent.mjs")
fi
python3 "$here/corpus_agents.py" --huge-bytes "$huge" --protocol-version 2 "${v2_agents[@]}" >"$work/v2-agents.txt" 2>/dev/null
echo "corpus -> v2 agents: $(tail -1 "$work/v2-agents.txt") (${#v2_agents[@]} agents)"
tally "$work/v2-agents.txt"
python3 "$here/corpus_clients.py" --huge-bytes "$huge" --agent "$root/target/debug/examples/agent" "${corpus_clients[@]}" \
  >"$work/clients.txt" 2>/dev/null
echo "corpus -> clients: $(tail -1 "$work/clients.txt") (${#corpus_clients[@]} clients, each then completing its scenario)"
tally "$work/clients.txt"
# A client that stops reading (reliability/flood.py): every agent holds no
# more than its default limits (64 MiB of output, 1,024 requests in flight)
# plus a constant, loses and duplicates no answer, answers a final request
# and exits when stdin closes; once for answers its handler writes, once for
# errors the engine writes itself.
flood_bound_mib="${ACP_FLOOD_BOUND_MIB:-96}"
for agent in "${flood_agents[@]}"; do
  name="${agent%%=*}"
  bound="$flood_bound_mib"
  [[ $name == kotlin ]] && bound=$((flood_bound_mib + kotlin_heap_mib))
  for mode in handler engine; do
    # shellcheck disable=SC2086 # the command line splits into words
    if result="$(timeout 600 python3 "$here/flood.py" --mode "$mode" --max-growth-mib "$bound" -- ${agent#*=})"; then
      echo "PASS flood $name ($mode): $result"; total_passed=$((total_passed + 1))
    else
      echo "FAIL flood $name ($mode): $result"; total_failed=$((total_failed + 1))
    fi
  done
done
echo "$total_passed passed, $total_failed failed"
[[ $total_failed -eq 0 ]]
