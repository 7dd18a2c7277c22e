#!/usr/bin/env bash
# Runs the ACP interop matrix: every client x every agent among
#   ts      official TypeScript SDK peers (ts/client.mjs, ts/agent.mjs)
#   python  official Python SDK peers    (python/client.py, python/agent.py)
#   ours    acp-engine's peers, given as executables by
#           OURS_CLIENT (invoked as `$OURS_CLIENT <agent cmd...>`) and OURS_AGENT;
#           a pair whose variable is unset is skipped (and said so).
#   c       the C examples on libacp_engine (bindings/c/examples), given the
#           same way by C_CLIENT and C_AGENT; only in the matrix when set.
# Each pair runs under a timeout (INTEROP_TIMEOUT, default 30 s) and prints
#   PASS client -> agent      or      FAIL client -> agent: <reason>
# followed, on failure, by the last stderr lines of both peers. The last line
# is `N passed, M failed`; the exit status is non-zero if M > 0.
#
# Environment:
#   ACP_INTEROP_TRACE   the SDK peers log every JSON-RPC message on stderr when
#                       non-empty (default 1, so failures show the wire); set it
#                       to the empty string to turn the trace off.
#   INTEROP_TIMEOUT     seconds per pair (default 30)
#   INTEROP_TAIL        stderr lines shown per failure (default 25)
#   INTEROP_LOG_DIR     where each pair's stdout/stderr is kept (default: a temp dir)
#   INTEROP_SKIP_SETUP  when non-empty, do not run setup.sh first
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
timeout_s="${INTEROP_TIMEOUT:-30}"
tail_n="${INTEROP_TAIL:-25}"
export ACP_INTEROP_TRACE="${ACP_INTEROP_TRACE-1}"

if [[ -z "${INTEROP_SKIP_SETUP:-}" ]]; then
  if ! bash "$here/setup.sh" >&2; then
    echo "setup.sh failed" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
fi

log_dir="${INTEROP_LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/acp-interop-logs.XXXXXX")}"
mkdir -p "$log_dir"

venv_py="$here/python/.venv/bin/python"
abspath() { [[ "$1" == /* ]] && printf '%s\n' "$1" || printf '%s/%s\n' "$PWD" "$1"; }

declare -A client_cmd agent_cmd
client_cmd[ts]="node $here/ts/client.mjs"
client_cmd[python]="$venv_py $here/python/client.py"
agent_cmd[ts]="node $here/ts/agent.mjs"
agent_cmd[python]="$venv_py $here/python/agent.py"
clients=(ts python)
agents=(ts python)

if [[ -n "${OURS_CLIENT:-}" ]]; then
  client_cmd[ours]="$(abspath "$OURS_CLIENT")"
  clients+=(ours)
else
  echo "SKIP ours -> *: OURS_CLIENT is not set"
fi
if [[ -n "${OURS_AGENT:-}" ]]; then
  agent_cmd[ours]="$(abspath "$OURS_AGENT")"
  agents+=(ours)
else
  echo "SKIP * -> ours: OURS_AGENT is not set"
fi

if [[ -n "${C_CLIENT:-}" ]]; then
  client_cmd[c]="$(abspath "$C_CLIENT")"
  clients+=(c)
fi
if [[ -n "${C_AGENT:-}" ]]; then
  agent_cmd[c]="$(abspath "$C_AGENT")"
  agents+=(c)
fi

# More peers, by environment: ACP_CLIENT_<name>=<command> and
# ACP_AGENT_<name>=<command> (the command is split on spaces), e.g.
# ACP_AGENT_node="node node/examples/agent.mjs".
while IFS='=' read -r var value; do
  case "$var" in
    ACP_CLIENT_*) name="${var#ACP_CLIENT_}"; client_cmd[$name]="$value"; clients+=("$name") ;;
    ACP_AGENT_*) name="${var#ACP_AGENT_}"; agent_cmd[$name]="$value"; agents+=("$name") ;;
  esac
done < <(env | grep -E '^ACP_(CLIENT|AGENT)_[A-Za-z0-9_]+=' | sort)

passed=0
failed=0
for c in "${clients[@]}"; do
  for a in "${agents[@]}"; do
    name="$c -> $a"
    out="$log_dir/$c-to-$a.stdout"
    err="$log_dir/$c-to-$a.stderr"
    # Commands are word-split on purpose: paths here contain no spaces
    # (OURS_* and C_* must not either).
    # shellcheck disable=SC2086
    read -r -a ccmd <<<"${client_cmd[$c]}"
    read -r -a acmd <<<"${agent_cmd[$a]}"
    reason=""
    if [[ ! -x "${ccmd[0]}" ]] && ! command -v "${ccmd[0]}" >/dev/null 2>&1; then
      reason="client executable ${ccmd[0]} not found"
      : >"$out"; : >"$err"
    elif [[ ! -x "${acmd[0]}" ]] && ! command -v "${acmd[0]}" >/dev/null 2>&1; then
      reason="agent executable ${acmd[0]} not found"
      : >"$out"; : >"$err"
    else
      # GNU timeout puts the pair in its own process group and signals the
      # whole group, so a stuck agent is ended along with its client.
      # Clients that advertise session.notices / session.compaction expect the
      # news updates (news.json) from every agent.
      ACP_INTEROP_NEWS=1 timeout -k 5 "$timeout_s" "${ccmd[@]}" "${acmd[@]}" </dev/null >"$out" 2>"$err"
      rc=$?
      if [[ $rc -eq 0 ]] && grep -qx "interop ok" "$out"; then
        reason=""
      elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
        reason="timed out after ${timeout_s} s"
      elif [[ $rc -eq 0 ]]; then
        reason="client exited 0 without printing 'interop ok'"
      else
        # The SDK peers print "FAIL: <reason>"; for other clients take their
        # last stderr line that is not a trace line.
        reason="$(grep -m1 '^FAIL: ' "$err" | sed 's/^FAIL: //')"
        [[ -n "$reason" ]] || reason="$(grep -v -e '^\[[a-z]*-[a-z]*\] [-<][->] ' -e '^[[:space:]]*$' "$err" | tail -n 1 | cut -c1-300)"
        reason="${reason:+$reason }(client exit status $rc)"
      fi
    fi
    if [[ -z "$reason" ]]; then
      echo "PASS $name"
      passed=$((passed + 1))
    else
      echo "FAIL $name: $reason"
      if [[ -s "$err" ]]; then
        echo "  --- last $tail_n stderr lines ($err) ---"
        tail -n "$tail_n" "$err" | cut -c1-400 | sed 's/^/  | /'
      fi
      failed=$((failed + 1))
    fi
  done
done

if [[ -z "${INTEROP_LOG_DIR:-}" && $failed -eq 0 ]]; then
  rm -rf "$log_dir"
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
