#!/usr/bin/env bash
# Installs the interop test peers' dependencies (idempotent):
#   ts/node_modules      via `npm ci` from ts/package-lock.json
#   python/.venv         a venv with python/requirements.txt installed
# Each step is skipped when the recorded hash of its lock/requirements file
# matches what was last installed successfully.
# Needs only node + npm and python3 (with the venv module) on PATH.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

hash_of() { python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"; }

# --- TypeScript peers -------------------------------------------------------
ts="$here/ts"
ts_stamp="$ts/node_modules/.interop-lock-sha256"
ts_want="$(hash_of "$ts/package-lock.json")"
if [[ -f "$ts_stamp" && "$(cat "$ts_stamp")" == "$ts_want" && -d "$ts/node_modules/@agentclientprotocol/sdk" ]]; then
  echo "setup: ts/node_modules is up to date"
else
  echo "setup: npm ci in ts/"
  (cd "$ts" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$ts_want" > "$ts_stamp"
fi

# --- Python peers -----------------------------------------------------------
py="$here/python"
venv="$py/.venv"
py_stamp="$venv/.interop-requirements-sha256"
py_want="$(hash_of "$py/requirements.txt")"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
  echo "setup: creating venv at python/.venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
fi
if [[ -f "$py_stamp" && "$(cat "$py_stamp")" == "$py_want" ]] && "$venv/bin/python" -c 'import acp' >/dev/null 2>&1; then
  echo "setup: python/.venv is up to date"
else
  echo "setup: pip install -r python/requirements.txt"
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$py/requirements.txt"
  echo "$py_want" > "$py_stamp"
fi
echo "setup: done"
