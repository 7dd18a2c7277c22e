#!/usr/bin/env bash
# The Python package, tested the way a user gets it: build the abi3 wheel
# with maturin, install it into a fresh venv, then run the pytest suite
# against the installed wheel (not the source tree), the official Python
# SDK's own tests against acp_engine.compat, type-check the examples with
# mypy --strict, and run the interop rows of our Python agent and client
# against the official SDKs and our Rust and C examples.
# Last line: "N passed, M failed".
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-python-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
step() { # step <name> <command...>
  local name="$1"; shift
  if "$@"; then echo "PASS $name"; passed=$((passed + 1)); else echo "FAIL $name"; failed=$((failed + 1)); fi
}

set -e
# A fresh venv each run, kept afterwards in target/ so that other suites
# (node/test.sh's interop rows) can run our Python example agent.
venv="$root/target/python-venv"
rm -rf "$venv"
python3 -m venv "$venv"
py="$venv/bin/python"
"$py" -m pip install -q --disable-pip-version-check maturin==1.16.0 pytest==8.3.5 mypy==1.15.0 ruff==0.8.6 \
  pydantic==2.13.4 pytest-asyncio==1.3.0 \
  starlette==1.10.0 "httpx2[http2]==2.16.2" websockets==17.4 uvicorn==0.54.0 \
  opentelemetry-api==1.45.2 opentelemetry-sdk==1.45.2  # acp.telemetry's spans, checked by a test
# The official Python SDK's sdist, for its own tests (run against acp_engine.compat).
"$py" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: -d "$work/official" \
  agent-client-protocol==1.0.0rc3
# The wheel lands where a plain `maturin build` puts it (target/wheels), kept for
# tools/readme (the README examples, run from a venv of their own).
rm -f "$root"/target/wheels/acp_engine-*.whl
(cd "$here" && "$venv/bin/maturin" build --release --quiet)
"$py" -m pip install -q --disable-pip-version-check "$root"/target/wheels/acp_engine-*.whl
set +e

# The suite must see the installed package, never python/acp_engine.
step "tests import the installed wheel" \
  bash -c "cd '$here/tests' && '$py' -c 'import acp_engine, sys; f = acp_engine.__file__; print(f); sys.exit(\"site-packages\" not in f)'"
step "pytest" bash -c "cd '$here/tests' && '$py' -m pytest -q -p no:cacheprovider -p no:asyncio"
step "mypy --strict examples" bash -c "cd '$work' && '$py' -m mypy --strict --cache-dir '$work/mypy' '$here/examples/agent.py' '$here/examples/client.py' '$root/interop/balancer.py'"
step "mypy --strict acp_engine (installed)" bash -c "cd '$work' && '$py' -m mypy --strict --cache-dir '$work/mypy' -p acp_engine"
step "stubtest: _native.pyi matches the built module" bash -c "cd '$work' && '$py' -m mypy.stubtest --mypy-config-file '$here/pyproject.toml' acp_engine._native"
step "ruff" "$venv/bin/ruff" check --config "$here/pyproject.toml" "$here" "$root/bench/python" "$root/bench/official-python" \
  "$root/tools/schema-derive-py" "$root/interop/balancer.py"
step "the official Python SDK's tests against acp_engine.compat" \
  bash -c "set -o pipefail; cd '$work' && '$py' '$here/official-tests/run.py' --sdist '$work/official/agent_client_protocol-1.0.0rc3.tar.gz' 2>'$work/official-tests.log' | tail -12"
step "the official Python SDK's public names against acp_engine.compat" \
  bash -c "set -o pipefail; cd '$here/official-tests' && '$py' surface.py --sdist '$work/official/agent_client_protocol-1.0.0rc3.tar.gz' | tail -40"
step "programs typed against the official Python SDK: mypy --strict on ours reports nothing new" \
  bash -c "set -o pipefail; cd '$here/official-tests' && '$py' typed.py --sdist '$work/official/agent_client_protocol-1.0.0rc3.tar.gz' | tail -12"
step "example client -> example agent" bash -c "'$py' '$here/examples/client.py' '$py' '$here/examples/agent.py' | tail -1 | grep -qx 'interop ok'"

# Interop: our Python agent and client in the matrix with the official SDKs
# and our Rust and C examples (built by the caller: see the Makefile).
interop_env=(ACP_INTEROP_TRACE= "ACP_CLIENT_py=$py $here/examples/client.py" "ACP_AGENT_py=$py $here/examples/agent.py")
[[ -x "$root/target/debug/examples/agent" ]] && interop_env+=("OURS_AGENT=$root/target/debug/examples/agent")
[[ -x "$root/target/debug/examples/client" ]] && interop_env+=("OURS_CLIENT=$root/target/debug/examples/client")
if [[ -f "$root/target/debug/libacp_engine.so" ]] \
  && cc -o "$work/c-agent" "$root/bindings/c/examples/agent.c" -I "$root/include" \
       -L "$root/target/debug" -lacp_engine "-Wl,-rpath,$root/target/debug"; then
  interop_env+=("C_AGENT=$work/c-agent")
fi
out="$work/interop.txt"
env "${interop_env[@]}" bash "$root/interop/run.sh" >"$out" 2>&1
ours='^(PASS|FAIL) (py -> |[a-z]+ -> py(:|$))'
grep -E "$ours" "$out"
rows_failed=$(grep -E "$ours" "$out" | grep -c '^FAIL')
rows_passed=$(grep -E "$ours" "$out" | grep -c '^PASS')
passed=$((passed + rows_passed))
failed=$((failed + rows_failed))
[[ $rows_failed -eq 0 ]] || sed -n '/^FAIL/,/^PASS/p' "$out" | head -60

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
