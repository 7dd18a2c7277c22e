#!/usr/bin/env bash
# Installs the real programs of `make test-real` from npm at the versions
# package.json pins (package-lock.json fixes the rest), and the Python one
# from PyPI into target/real-python-venv (requirements.txt), idempotently.
# `npm install`, not `npm ci`: acpx's optional per-platform packages have no
# version in the lock for other platforms, which `npm ci` refuses as "not
# in sync". acpx asks for Node 22 in its engines field; it runs on 20.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
stamp="$here/node_modules/.real-lock-sha256"
sha256() { python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"; }
want="$(sha256 "$here/package-lock.json")"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$here/node_modules/.bin/acpx" ]]; then
  echo "setup: real/node_modules is up to date"
else
  echo "setup: npm install in real/ (acpx, claude-agent-acp, codex-acp, gemini-cli)"
  (cd "$here" && npm install --no-audit --no-fund --loglevel=error --engine-strict=false)
  echo "$want" > "$stamp"
fi

venv="$(dirname "$(dirname "$here")")/target/real-python-venv"
py_stamp="$venv/.real-requirements-sha256"
py_want="$(sha256 "$here/requirements.txt")"
if [[ -f "$py_stamp" && "$(cat "$py_stamp")" == "$py_want" && -x "$venv/bin/acp-agent" ]]; then
  echo "setup: target/real-python-venv is up to date"
else
  echo "setup: target/real-python-venv (acp-agent-framework, without the official SDK)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$here/requirements.txt"
  echo "$py_want" > "$py_stamp"
fi
