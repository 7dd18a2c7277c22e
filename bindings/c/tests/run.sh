#!/usr/bin/env bash
# The C ABI test suite (libacp_engine, include/acp_engine.h). From the repo:
#   bash bindings/c/tests/run.sh
# Steps, each a PASS/FAIL line:
#   0. `make build`: the library, the Rust examples, the tool (ACP_SKIP_CARGO=1 skips it)
#   1. the header alone compiles as C99 and as C++ (-fsyntax-only, warnings are errors,
#      its _INIT and version macros used); it declares exactly the library's exported
#      acp_* functions, and every one of them is called by some test; the library's
#      soname is libacp_engine.so.<ACP_ENGINE_ABI_VERSION>
#   2. every bindings/c/tests/test_*.c: gcc -std=c11 -Wall -Wextra -Werror, run
#   3. each again under valgrind (0 errors; nothing definitely/indirectly lost)
#   4. each built with -fsanitize=address,undefined, run
#   5. test_ctypes.py (Python stdlib ctypes over the event queue)
#   6. the C examples (bindings/c/examples) and the C benchmark agent (bench/c)
#      compile; the examples run under valgrind against each other; then the
#      interop matrix (interop/run.sh) with the C and Rust peers added
#      (each of its pairs counts as a check)
# The last line is "N passed, M failed"; the exit status is non-zero if M > 0.
#
# Environment: ACP_TARGET_DIR (default target/debug), ACP_KEEP_BUILD=1 keeps
# the build directory, ACP_SKIP_VALGRIND=1 / ACP_SKIP_INTEROP=1 skip steps.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
here="$root/bindings/c/tests"
target="${ACP_TARGET_DIR:-$root/target/debug}"
export ACP_REPO="$root" ACP_TARGET_DIR="$target"
build="$(mktemp -d "${TMPDIR:-/tmp}/acp-c-tests.XXXXXX")"
if [[ -z "${ACP_KEEP_BUILD:-}" ]]; then trap 'rm -rf "$build"' EXIT; fi

passed=0
failed=0
started=$SECONDS

# check NAME COMMAND...: run it with output to a log; PASS, or FAIL and the
# log's tail.
check() {
  local name="$1"; shift
  local log="$build/log.$(printf '%s' "$name" | tr -c 'A-Za-z0-9_.-' '_')"
  local t0=$SECONDS
  if "$@" >"$log" 2>&1; then
    echo "PASS $name ($((SECONDS - t0)) s)"
    passed=$((passed + 1))
  else
    echo "FAIL $name (exit $?; log: $log)"
    tail -n 30 "$log" | cut -c1-300 | sed 's/^/  | /'
    failed=$((failed + 1))
    ACP_KEEP_BUILD=1; trap - EXIT
  fi
  return 0
}

finish() {
  echo "(total $((SECONDS - started)) s)"
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
  exit
}

# ---- 0. the library --------------------------------------------------------------
if [[ -z "${ACP_SKIP_CARGO:-}" ]]; then
  # The suites' shared debug build (the C library, the examples, the tool).
  check "make build" make -s --no-print-directory -C "$root" build
fi
if [[ ! -f "$target/libacp_engine.so" ]]; then
  echo "FAIL $target/libacp_engine.so is missing (cargo build -p acp-engine-c)"
  failed=$((failed + 1))
  finish
fi

cflags=(-std=c11 -Wall -Wextra -Werror -g -I "$root/include")
# A hung test fails with its log instead of stalling the suite (valgrind
# runs are ~20x slower).
limit=(timeout -k 10 300)
valgrind_limit=(timeout -k 10 900)
link=(-L "$target" -lacp_engine "-Wl,-rpath,$target" -lpthread)

# ---- 1. the header ---------------------------------------------------------------
cat >"$build/header.c" <<'EOF'
#include "acp_engine.h"
int main(void) {
    acp_options options = ACP_OPTIONS_INIT;
    acp_handlers handlers = ACP_HANDLERS_INIT;
    const char *version = ACP_ENGINE_VERSION;
    return acp_engine_abi_version() != ACP_ENGINE_ABI_VERSION || options.struct_size != sizeof options
        || handlers.struct_size != sizeof handlers || version[0] == 0;
}
EOF
check "header as C99" gcc -std=c99 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only -I "$root/include" "$build/header.c"
check "header as C++" g++ -x c++ -std=c++11 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only -I "$root/include" "$build/header.c"

coverage() {
  local missing=0 declared exported
  declared="$(grep -oE '\bacp_[a-z_]+\(' "$root/include/acp_engine.h" | tr -d '(' | sort -u)"
  exported="$(nm -D --defined-only "$target/libacp_engine.so" | awk '$2 == "T" && $3 ~ /^acp_/ { print $3 }' | sort)"
  if [[ "$declared" != "$exported" ]]; then
    echo "the header and the library's exports differ:"
    diff <(echo "$declared") <(echo "$exported")
    missing=1
  fi
  for fn in $declared; do
    if ! grep -qE "\b$fn\(" "$here"/test_*.c; then echo "never called by a test: $fn"; missing=1; fi
  done
  echo "$(wc -w <<<"$declared") functions in the header, all exported, each called by a test"
  return $missing
}
check "header = exports; every function called by a test" coverage

# The soname is libacp_engine.so.<ACP_ENGINE_ABI_VERSION>, and the build
# tree has that name for programs linked against it (bindings/c/build.rs).
soname_check() {
  local abi soname
  abi="$(sed -n 's/^#define ACP_ENGINE_ABI_VERSION \([0-9][0-9]*\)$/\1/p' "$root/include/acp_engine.h")"
  soname="$(readelf -d "$target/libacp_engine.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')"
  echo "ACP_ENGINE_ABI_VERSION $abi, soname $soname"
  [[ -n "$abi" && "$soname" == "libacp_engine.so.$abi" && -e "$target/$soname" ]]
}
check "soname = libacp_engine.so.ACP_ENGINE_ABI_VERSION" soname_check

# ---- 2. the C tests --------------------------------------------------------------
tests=()
for src in "$here"/test_*.c; do
  t="$(basename "$src" .c)"
  tests+=("$t")
  check "$t" bash -c "gcc ${cflags[*]} '$src' -o '$build/$t' ${link[*]} && ${limit[*]} '$build/$t'"
done

# ---- 3. valgrind -----------------------------------------------------------------
# ACP_TEST_SLOW stretches the tests' timeouts; ACP_UNDER_VALGRIND skips what
# valgrind cannot show (a child's exec failure: it runs vfork as fork).
valgrind_one() {
  local t="$1"
  ACP_TEST_SLOW=10 ACP_UNDER_VALGRIND=1 "${valgrind_limit[@]}" valgrind --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --error-exitcode=1 "$build/$t" 2>&1 \
    | grep -v -e 'unhandled amd64-linux syscall: 434' -e 'write your own handler' \
              -e 'README_MISSING_SYSCALL_OR_IOCTL' -e 'Nevertheless we consider' -e 'valgrind.org/support/bug_reports'
  local rc=${PIPESTATUS[0]}
  return "$rc"
}

if [[ -z "${ACP_SKIP_VALGRIND:-}" ]] && command -v valgrind >/dev/null; then
  for t in "${tests[@]}"; do
    [[ -x "$build/$t" ]] || { check "valgrind $t" false; continue; }
    check "valgrind $t" valgrind_one "$t"
    # One line per test: what valgrind found.
    log="$build/log.valgrind_$t"
    sed -n -e 's/^==[0-9]*== \(ERROR SUMMARY: [0-9]* errors\).*/\1/p' \
           -e 's/^==[0-9]*==    \(definitely lost: .*\)/\1/p' \
           -e 's/^==[0-9]*==    \(indirectly lost: .*\)/\1/p' "$log" | tail -n 3 | paste -sd ';' | sed 's/^/  valgrind: /'
  done
else
  echo "SKIP valgrind"
fi

# ---- 4. AddressSanitizer + UBSan ----------------------------------------------------
# The Rust library is not instrumented; ASan still sees every malloc/free
# (Rust's allocator is the system one) and our side of every buffer.
# LeakSanitizer stays on: it copes with the library's threads here
# (valgrind is the authority on leaks all the same).
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}"
for t in "${tests[@]}"; do
  check "asan+ubsan $t" bash -c "gcc ${cflags[*]} -fsanitize=address,undefined -fno-omit-frame-pointer \
    '$here/$t.c' -o '$build/$t.asan' ${link[*]} && ${limit[*]} '$build/$t.asan'"
done

# ---- 5. ctypes -----------------------------------------------------------------------
check "test_ctypes.py" python3 "$here/test_ctypes.py"

# ---- 6. examples, benchmark agent, interop --------------------------------------------
ex="$root/bindings/c/examples"
check "examples/agent.c compiles" cc -std=c11 -Wall -Wextra -Werror -I "$root/include" "$ex/agent.c" \
  -L "$target" -lacp_engine "-Wl,-rpath,$target" -o "$build/c-agent"
check "examples/client.c compiles" cc -std=c11 -Wall -Wextra -Werror -I "$root/include" "$ex/client.c" \
  -L "$target" -lacp_engine "-Wl,-rpath,$target" -o "$build/c-client"
check "examples/mcp_agent.c compiles" cc -std=c11 -Wall -Wextra -Werror -I "$root/include" "$ex/mcp_agent.c" \
  -L "$target" -lacp_engine "-Wl,-rpath,$target" -o "$build/c-mcp-agent"
check "examples/proxy.c compiles" cc -std=c11 -Wall -Wextra -Werror -I "$root/include" "$ex/proxy.c" \
  -L "$target" -lacp_engine "-Wl,-rpath,$target" -o "$build/c-proxy"
check "bench/c/agent.c compiles" cc -O2 -std=c11 -Wall -Wextra -Werror -I "$root/include" "$root/bench/c/agent.c" \
  -L "$target" -lacp_engine "-Wl,-rpath,$target" -o "$build/c-bench-agent"

# MCP-over-ACP with a real MCP server: the Rust example client offers the
# official MCP TypeScript SDK's server (interop/ts/mcp-server.mjs, stdio) over
# ACP; the C agent lists its tools and calls `add`, and the server must have
# logged the call. AGENT... is the agent's command.
mcp_row() {
  local out="$build/mcp.out" err="$build/mcp.err"
  timeout -k 5 120 "$target/examples/mcp_client" --mcp "node $root/interop/ts/mcp-server.mjs" -- "$@" \
    </dev/null >"$out" 2>"$err"
  local status=$?
  cat "$out" "$err"
  [[ $status -eq 0 ]] && grep -qx "mcp ok" "$out" && grep -q "\[mcp-server\] add 2 3" "$err"
}
check "mcp_client (official MCP server offered over ACP) -> c-mcp-agent" mcp_row "$build/c-mcp-agent"

# A proxy chain: our conductor runs the C proxy (PROXY, its command line,
# logging to $proxy_log) in front of the Rust example agent, driven by the
# Rust example client through a whole session; the proxy must log the prompt
# going down and the permission request coming up.
proxy_log="$build/proxy.log"
proxy_row() {
  local log="$proxy_log"
  : >"$log"
  timeout -k 5 60 "$target/examples/client" "$target/acp-engine" conduct "$1" \
    "$target/examples/agent" </dev/null >"$build/proxy.out" 2>"$build/proxy.err"
  local status=$?
  tail -n 5 "$build/proxy.out" "$build/proxy.err" "$log"
  [[ $status -eq 0 ]] && grep -qx "interop ok" "$build/proxy.out" &&
    grep -qF "[c-proxy c] -> session/prompt" "$log" && grep -qF "[c-proxy c] <- session/request_permission" "$log"
}
check "our client -> our conductor (c-proxy) -> our agent" proxy_row "$build/c-proxy --name c --log $proxy_log"
# The prefix reaches the agent: the official TypeScript client reads it echoed.
prefix_row() {
  timeout -k 5 60 node "$root/interop/ts/readme-client.mjs" "$target/acp-engine" conduct \
    "$build/c-proxy --prefix c" "$target/examples/v2_agent --router" </dev/null >"$build/prefix.out" 2>"$build/prefix.err"
  local status=$?
  tail -n 3 "$build/prefix.out" "$build/prefix.err"
  [[ $status -eq 0 ]] && grep -qx "readme ok" "$build/prefix.out" && grep -qF 'agent said "echo: c Hello"' "$build/prefix.err"
}
check "official TS client -> our conductor (c-proxy --prefix) -> our echo agent" prefix_row

if [[ -z "${ACP_SKIP_VALGRIND:-}" ]] && command -v valgrind >/dev/null; then
  vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=1)
  quiet_434() { "$@" 2> >(grep -v -e 'syscall: 434' -e 'your own handler' -e 'README_MISSING' -e 'Nevertheless' -e 'bug_reports' >&2); }
  check "valgrind c-client -> c-agent" quiet_434 timeout 60 "${vg[@]}" "$build/c-client" "$build/c-agent"
  # valgrind_clean LOG: valgrind's report in LOG (once written) says 0 errors, nothing lost.
  valgrind_clean() {
    for _ in $(seq 100); do grep -q 'ERROR SUMMARY' "$1" 2>/dev/null && break; sleep 0.2; done
    grep -v -e 'syscall: 434' -e 'your own handler' -e 'README_MISSING' -e 'Nevertheless' -e 'bug_reports' "$1"
    grep -q 'ERROR SUMMARY: 0 errors' "$1" && ! grep -qE '(definitely|indirectly) lost: [1-9]' "$1"
  }
  # valgrind_command NAME: a shell command that runs $build/NAME under valgrind
  # (its report in $build/valgrind-NAME.log), exiting with its status. An agent
  # under valgrind is spawned by its client through sh: the library kills what
  # it spawned if it has not exited 0.5 s after its stdin closed, so sh takes
  # that and valgrind finishes its report regardless.
  valgrind_command() {
    echo "valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect \
      --log-file='$build/valgrind-$1.log' '$build/$1'; exit \$?"
  }
  valgrind_agent() {
    timeout 60 "$build/c-client" sh -c "$(valgrind_command c-agent)" || return 1
    valgrind_clean "$build/valgrind-c-agent.log"
  }
  valgrind_mcp_agent() {
    mcp_row sh -c "$(valgrind_command c-mcp-agent)" || return 1
    valgrind_clean "$build/valgrind-c-mcp-agent.log"
  }
  valgrind_proxy() {
    proxy_row "sh -c \"valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect \
      --log-file=$build/valgrind-c-proxy.log $build/c-proxy --name c --log $proxy_log; exit \$?\"" || return 1
    valgrind_clean "$build/valgrind-c-proxy.log"
  }
  check "c-client -> valgrind c-agent" valgrind_agent
  check "mcp_client -> valgrind c-mcp-agent" valgrind_mcp_agent
  check "our conductor -> valgrind c-proxy" valgrind_proxy
fi

if [[ -z "${ACP_SKIP_INTEROP:-}" ]]; then
  echo "interop matrix (interop/run.sh, C and Rust peers added):"
  interop_log="$build/log.interop"
  OURS_CLIENT="$target/examples/client" OURS_AGENT="$target/examples/agent" \
  C_CLIENT="$build/c-client" C_AGENT="$build/c-agent" \
    bash "$root/interop/run.sh" >"$interop_log" 2>&1
  grep -E '^(PASS|FAIL|SKIP|  )' "$interop_log" | sed 's/^/  /'
  summary="$(tail -n 1 "$interop_log")"
  if [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
  else
    echo "FAIL interop/run.sh did not finish: $summary"
    failed=$((failed + 1))
  fi
fi

finish
