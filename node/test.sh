#!/usr/bin/env bash
# Tests the acp-engine npm package as a user gets it:
#   1. npm ci (pinned @napi-rs/cli, typescript, @types/node)
#   2. build the addon in release (build-native.mjs) and the package (tsc)
#   3. npm pack, install the tarball into an empty temp dir
#   4. node:test suite against the INSTALLED package (test/*.test.mjs), and
#      the official SDK's own tests (official-tests/run.mjs), its 2.4.0
#      entry points' names (official-tests/surface.mjs) and programs typed
#      against its types (official-tests/types.mjs)
#   5. tsc --noEmit --strict on the examples (and compile them, for 6)
#   5b. real agents from npm (claude-agent-acp, codex-acp, claude-code-acp)
#      with the package as their SDK through npm overrides: transcripts equal
#      to the official SDK's, claude-code-acp's own tests the same (drop-in/)
#   6. interop rows with the Node peers (interop/run.sh with
#      ACP_CLIENT_node / ACP_AGENT_node; the Rust examples too when
#      target/debug/examples/{client,agent} are built)
# Last line: "N passed, M failed"; exit status non-zero on any failure.
#
# Environment:
#   ACP_NODE_SKIP_NPM_CI   non-empty: keep node/node_modules as it is
#   ACP_NODE_SKIP_BUILD    non-empty: use the addon already in node/ (if any)
#   ACP_NODE_SKIP_INTEROP  non-empty: skip step 6
#   ACP_NODE_KEEP_TMP      non-empty: keep the temp dir (printed)
set -uo pipefail

node_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$node_dir/.." && pwd)"
passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
finish() {
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
  exit $?
}

tmp="$(mktemp -d "${TMPDIR:-/tmp}/acp-engine-node-test.XXXXXX")"
if [[ -z "${ACP_NODE_KEEP_TMP:-}" ]]; then
  trap 'rm -rf "$tmp"' EXIT
else
  echo "temp dir: $tmp"
fi

cd "$node_dir" || exit 1
if [[ -z "${ACP_NODE_SKIP_NPM_CI:-}" || ! -d node_modules ]]; then
  # npm 11 leaves some optional platform packages of @napi-rs/cli's
  # dependencies out of the lock file it writes, and `npm ci` then refuses
  # it (EUSAGE "Missing: ... from lock file"); install from the same lock
  # with `npm install` in that case.
  if npm ci --no-audit --no-fund >"$tmp/npm-ci.log" 2>&1; then pass "npm ci"
  elif grep -q "from lock file" "$tmp/npm-ci.log" &&
    npm install --no-audit --no-fund --no-save >>"$tmp/npm-ci.log" 2>&1; then
    pass "npm install (npm ci refused npm's own lock file)"
  else
    cat "$tmp/npm-ci.log" >&2; fail "npm ci"; finish; fi
fi

if [[ -n "${ACP_NODE_SKIP_BUILD:-}" ]] && ls acp-engine.*.node >/dev/null 2>&1; then
  echo "note: ACP_NODE_SKIP_BUILD set; using the addon already built"
elif npm run build >"$tmp/build.log" 2>&1; then pass "build (the addon in release, tsc)"; else
  tail -n 40 "$tmp/build.log" >&2; fail "build"; finish; fi

# The tarball is kept in target/npm for tools/readme (the README examples).
packs="$root/target/npm"
rm -rf "$packs" && mkdir -p "$packs"
tarball="$(npm pack --silent --pack-destination "$packs" 2>"$tmp/pack.log" | tail -n 1)"
if [[ -n "$tarball" && -f "$packs/$tarball" ]]; then pass "npm pack ($tarball)"; else
  cat "$tmp/pack.log" >&2; fail "npm pack"; finish; fi

# The installed app is kept in target/ (fresh each run) so that other suites
# (reliability/run.sh) can run the compiled example agent and client.
app="$root/target/node-app"
rm -rf "$app"
mkdir -p "$app"
printf '{ "name": "acp-engine-node-test-app", "private": true, "type": "module" }\n' >"$app/package.json"
# With the optional peer a user adds for `acp-engine/experimental/mcp-server`,
# and the MCP client an agent points at `experimental/mcp-http`'s endpoints.
if (cd "$app" && npm install --no-audit --no-fund --no-save "$packs/$tarball" @modelcontextprotocol/server@2.4.0 @modelcontextprotocol/client@2.4.0 >"$tmp/install.log" 2>&1) &&
  [[ -f "$app/node_modules/acp-engine/dist/index.js" ]]; then
  pass "install the tarball into an empty directory"
else
  cat "$tmp/install.log" >&2; fail "install the tarball"; finish
fi

# Tests, peers and examples live in the app dir, so `acp-engine` resolves to
# the installed package, never to the source tree.
cp -r "$node_dir/test" "$app/test"
cp -r "$node_dir/examples" "$app/examples"
tsc="$node_dir/node_modules/typescript/bin/tsc"
cat >"$app/tsconfig.json" <<JSON
{
  "compilerOptions": {
    "strict": true,
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "lib": ["ES2022", "ESNext.Disposable", "DOM"],
    "types": ["node"],
    "typeRoots": ["$node_dir/node_modules/@types"],
    "noEmitOnError": true,
    "outDir": "out"
  },
  "files": ["examples/agent.ts", "examples/client.ts", "test/peers/dispose-agent.ts"]
}
JSON

if (cd "$app" && node "$tsc" --noEmit --strict -p tsconfig.json); then
  pass "tsc --noEmit --strict (examples, test peers) against the installed types"
else
  fail "tsc --noEmit --strict"
fi
if (cd "$app" && node "$tsc" -p tsconfig.json && cp out/test/peers/dispose-agent.js test/peers/); then
  pass "compile the examples"
else
  fail "compile the examples"
fi

# node:test over real processes.
(cd "$app" && ACP_REPO_ROOT="$root" node --test --test-reporter=tap --test-timeout=120000 test/*.test.mjs) >"$tmp/node-test.tap" 2>&1
grep -E '^(not )?ok |^# (tests|pass|fail)' "$tmp/node-test.tap" | grep -v '^    '
t_pass="$(grep -E '^# pass ' "$tmp/node-test.tap" | awk '{print $3}')"
# Failed and cancelled tests alike (a test cancelled because the loop ran
# dry counts in neither "# fail" nor "# pass").
t_fail="$(grep -cE '^not ok ' "$tmp/node-test.tap")"
if [[ -z "$t_pass" ]]; then
  tail -n 60 "$tmp/node-test.tap" >&2
  fail "node:test suite did not report"
else
  passed=$((passed + t_pass))
  failed=$((failed + ${t_fail:-0}))
  if [[ "${t_fail:-0}" -ne 0 ]]; then
    grep -B2 -A30 '^not ok' "$tmp/node-test.tap" | head -n 150 >&2
  fi
fi

# The official TypeScript SDK's own tests against the installed package,
# with only their import specifiers rewritten (official-tests/run.mjs), its
# 2.4.0 entry points' names against ours (official-tests/surface.mjs), and
# programs typed against its types compiled on ours (official-tests/types.mjs).
official="$node_dir/official-tests"
# (npm ci refuses npm 11's own lock file here too: see the first step.)
if (cd "$official" && { npm ci --no-audit --no-fund >"$tmp/official-ci.log" 2>&1 ||
      { grep -q "from lock file" "$tmp/official-ci.log" &&
        npm install --no-audit --no-fund --no-save >>"$tmp/official-ci.log" 2>&1; }; }); then
  rm -rf "$official/node_modules/acp-engine"
  cp -r "$app/node_modules/acp-engine" "$official/node_modules/acp-engine"
  if (cd "$official" && node run.mjs) >"$tmp/official.log" 2>&1; then
    pass "the official SDK's tests: $(tail -n 1 "$tmp/official.log")"
  else
    grep -E '^(FAILED|PASSED|listed)|passed,' "$tmp/official.log" >&2
    fail "the official SDK's tests: $(tail -n 1 "$tmp/official.log")"
  fi
  # Every name each entry point of the official SDK 2.4.0 exports, types too.
  if (cd "$official" && node surface.mjs) >"$tmp/surface.log" 2>&1; then
    pass "the official SDK 2.4.0's public names: $(tail -n 1 "$tmp/surface.log")"
  else
    cat "$tmp/surface.log" >&2
    fail "the official SDK 2.4.0's public names: $(tail -n 1 "$tmp/surface.log")"
  fi
  # Programs typed against the official 2.4.0's types compile on ours as they are.
  if (cd "$official" && node types.mjs) >"$tmp/types.log" 2>&1; then
    pass "the official SDK 2.4.0's types: $(tail -n 1 "$tmp/types.log")"
  else
    cat "$tmp/types.log" >&2
    fail "the official SDK 2.4.0's types: $(tail -n 1 "$tmp/types.log")"
  fi
else
  cat "$tmp/official-ci.log" >&2; fail "npm ci (official-tests)"
fi

# Real programs from npm with our package as their SDK, through npm
# `overrides` (drop-in/run.mjs): their transcripts under the official clients
# must be the official SDK's, and claude-code-acp's own tests end the same. The clients come from interop/ts; codex-acp's
# model is interop/real's fake one.
if bash "$root/interop/setup.sh" >"$tmp/interop-setup.log" 2>&1 &&
  node "$node_dir/drop-in/run.mjs" "$packs/$tarball" >"$tmp/drop-in.log" 2>&1; then
  pass "claude-agent-acp, codex-acp and claude-code-acp on acp-engine (drop-in): $(tail -n 1 "$tmp/drop-in.log")"
else
  cat "$tmp/interop-setup.log" "$tmp/drop-in.log" | tail -n 40 >&2
  fail "claude-agent-acp, codex-acp and claude-code-acp on acp-engine (drop-in): $(tail -n 1 "$tmp/drop-in.log" 2>/dev/null)"
fi

if [[ -z "${ACP_NODE_SKIP_INTEROP:-}" ]]; then
  extra=()
  if [[ -x "$root/target/debug/examples/client" && -x "$root/target/debug/examples/agent" ]]; then
    extra=(OURS_CLIENT="$root/target/debug/examples/client" OURS_AGENT="$root/target/debug/examples/agent")
  else
    echo "note: target/debug/examples/{client,agent} not built; the Rust example rows are skipped"
  fi
  # Our Node client against our C and Python example agents too, when built
  # (the C library by cargo, target/python-venv by python/test.sh).
  if [[ -f "$root/target/debug/libacp_engine.so" ]] && cc -o "$tmp/c-agent" "$root/bindings/c/examples/agent.c" \
       -I "$root/include" -L "$root/target/debug" -lacp_engine "-Wl,-rpath,$root/target/debug"; then
    extra+=(C_AGENT="$tmp/c-agent")
  fi
  if [[ -x "$root/target/python-venv/bin/python" ]]; then
    extra+=("ACP_AGENT_py=$root/target/python-venv/bin/python $root/python/examples/agent.py")
  fi
  env "${extra[@]}" ACP_CLIENT_node="node $app/out/examples/client.js" ACP_AGENT_node="node $app/out/examples/agent.js" \
    bash "$root/interop/run.sh" >"$tmp/interop.log" 2>&1
  # Count the rows with a Node peer on either side.
  grep -E '^(PASS|FAIL|SKIP) ' "$tmp/interop.log"
  while read -r status rest; do
    if [[ "$rest" =~ (^node\ |\ node(:|$)) ]]; then
      if [[ "$status" == PASS ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    fi
  done < <(grep -E '^(PASS|FAIL) ' "$tmp/interop.log")
  if grep -q '^FAIL .*node' "$tmp/interop.log"; then
    grep -A 30 '^FAIL .*node' "$tmp/interop.log" | head -n 80 >&2
  fi
  if ! grep -qE '^(PASS|FAIL) ' "$tmp/interop.log"; then
    tail -n 30 "$tmp/interop.log" >&2
    fail "interop/run.sh ran no pairs"
  fi
fi

finish
