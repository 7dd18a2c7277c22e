#!/usr/bin/env bash
# Installs the real programs of `make test-real` from npm at the versions
# package.json pins (package-lock.json fixes the rest), idempotently.
# `npm install`, not `npm ci`: acpx's optional per-platform packages have no
# version in the lock for other platforms, which `npm ci` refuses as "not
# in sync". acpx asks for Node 22 in its engines field; it runs on 20.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
stamp="$here/node_modules/.real-lock-sha256"
want="$(python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$here/package-lock.json")"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$here/node_modules/.bin/acpx" ]]; then
  echo "setup: real/node_modules is up to date"
else
  echo "setup: npm install in real/ (acpx, claude-agent-acp, codex-acp, gemini-cli)"
  (cd "$here" && npm install --no-audit --no-fund --loglevel=error --engine-strict=false)
  echo "$want" > "$stamp"
fi
