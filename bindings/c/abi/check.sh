#!/usr/bin/env bash
# The C library's ABI against its recorded baseline (make abi-check), or
# record the baseline (make abi-baseline, with --baseline).
#
# The release library is built with its own crate's debug info (the types
# abidw reads; `make install` builds it again without), its soname read,
# and its ABI compared by abidiff (libabigail; Debian: abigail-tools) with
# bindings/c/abi/libacp_engine.so.N.abi, the baseline of that soname:
#   - a removed function, or a changed type or signature, fails: programs
#     built against the previous header would break. Keep the change
#     compatible, or raise ACP_ENGINE_ABI_VERSION (bindings/c/src/version.rs;
#     then make header) and record the new soname's baseline;
#   - added functions pass, and so do fields appended to acp_options and
#     acp_handlers (their struct_size says which ones a program has):
#     bindings/c/abi/appended.py takes those out of the current ABI first.
# The baseline is recorded when the soname changes, and at a release (so
# that what it added is held from then on).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
abi_dir=bindings/c/abi
library=target/release/libacp_engine.so
mode=check
[[ "${1:-}" == --baseline ]] && mode=baseline

for tool in abidw abidiff readelf; do
  if ! command -v "$tool" >/dev/null; then
    echo "make abi-$mode: $tool is not installed; install libabigail's tools" \
      "(Debian, Ubuntu: apt-get install abigail-tools; readelf: binutils)" >&2
    exit 1
  fi
done

# The release profile strips debug info: keep the C ABI's (its types), only here.
${CARGO:-cargo} build --release -q -p acp-engine-c \
  --config 'profile.release.package.acp-engine-ffi.debug=2' \
  --config 'profile.release.package.acp-engine-c.strip="none"'

soname="$(readelf -d "$library" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')"
header_abi="$(sed -n 's/^#define ACP_ENGINE_ABI_VERSION \([0-9][0-9]*\)$/\1/p' include/acp_engine.h)"
if [[ "$soname" != "libacp_engine.so.$header_abi" ]]; then
  echo "make abi-$mode: $library's soname is '$soname', but include/acp_engine.h says" \
    "ACP_ENGINE_ABI_VERSION $header_abi: run make header" >&2
  exit 1
fi
baseline="$abi_dir/$soname.abi"
# Reproducible output: no paths of this machine (the C files a dependency
# compiled are under CARGO_HOME), type ids from the types.
describe() {
  abidw --no-corpus-path --no-comp-dir-path --no-show-locs --type-id-style hash "$library" \
    | sed "s|path='[^']*/registry/src/[^/']*/|path='cargo-registry/|"
}

if [[ $mode == baseline ]]; then
  describe >"$baseline.tmp"
  mv "$baseline.tmp" "$baseline"
  echo "recorded the ABI of $soname in $baseline: commit it"
  exit 0
fi

if [[ ! -f "$baseline" ]]; then
  echo "make abi-check: no baseline for $soname ($baseline)." >&2
  echo "  After raising ACP_ENGINE_ABI_VERSION for a breaking change, record the new" >&2
  echo "  soname's ABI with make abi-baseline and commit it." >&2
  exit 1
fi
current="$(mktemp)"
compared="$(mktemp)"
report="$(mktemp)"
trap 'rm -f "$current" "$compared" "$report"' EXIT
describe >"$current"
python3 "$abi_dir/appended.py" "$baseline" "$current" "$compared"
set +e
# Added functions and variables are compatible: --no-added-syms leaves them
# out of the verdict (they are listed below).
abidiff --no-added-syms "$baseline" "$compared" >"$report" 2>&1
status=$?
set -e
# abidiff's exit status is a bit set: 1 error, 2 usage error, 4 an ABI change
# (what --no-added-syms leaves), 8 an incompatible change
# (a removed function, among others).
if (( status & 3 )); then
  cat "$report" >&2
  echo "make abi-check: abidiff failed (exit status $status)" >&2
  exit 1
fi
if (( status & 12 )); then
  sed 's/^/  /' "$report" >&2
  cat >&2 <<EOF
make abi-check: FAIL: the C ABI changed incompatibly against $baseline (abidiff exit
status $status; report above). Programs built against the previous acp_engine.h would
break with this library. Either keep the change compatible (add functions; append
fields to acp_options / acp_handlers only, see bindings/c/README.md), or make it a new
ABI: raise ACP_ENGINE_ABI_VERSION in bindings/c/src/version.rs, run make header, then
make abi-baseline (records $abi_dir/libacp_engine.so.<N+1>.abi), and say so in the CHANGELOG.
EOF
  exit 1
fi
abidiff "$baseline" "$compared" >"$report" 2>&1 || true
added="$(grep -c "^  \[A\] 'function" "$report" || true)"
grep "^  \[A\]" "$report" || true
echo "the C ABI of $soname is compatible with $baseline (functions added since it was recorded: $added)"
