#!/usr/bin/env bash
# Take the official ACP JSON Schema from its two newest sources reachable and
# merge them into what codegen reads:
#   - the npm package that ships the JSON (the official TypeScript SDK), at a
#     pinned version: its v1 into schema/upstream/npm/v1/, its v2 (draft) into
#     schema/upstream/npm/v2/;
#   - the Rust crate agent-client-protocol-schema (pinned in
#     tools/schema-derive/Cargo.toml and Cargo.lock), whose types are what the
#     official generator turns into that JSON: derived with schemars into
#     schema/upstream/crate/v1/.
#   - the official Python SDK (PyPI agent-client-protocol, pinned below), whose
#     models come from a newer schema release than either: the unstable methods
#     only it has, derived from its pydantic models by tools/schema-derive-py/
#     into schema/upstream/pypi/v1/ (and from its v2 draft's models into
#     schema/upstream/pypi/v2/).
# The first two v1 are merged definition by definition, the newer of each
# (tools/codegen/merge_schema.py), the third adds what neither has, into
# schema/v1/ with schema/v1/SOURCES.md (where each definition came from);
# schema/v2/ is npm's v2 with the Python SDK's v2 additions in its unstable file.
# Record the pins in schema/README.md.
#
#   tools/codegen/update_schema.sh            # the pinned versions
#   ACP_SCHEMA_VERSION=2.5.0 tools/codegen/update_schema.sh
#   ACP_SCHEMA_OUT=/tmp/x tools/codegen/update_schema.sh   # write there instead
#   ACP_SCHEMA_DERIVE=0 tools/codegen/update_schema.sh     # merge the committed
#       schema/upstream/crate/v1 and pypi/v1 instead of deriving them (no cargo, no pip)
#   (make schema-check runs it with ACP_SCHEMA_DERIVE=0 into a temporary
#   directory and compares: schema/ is what the pins give; make
#   schema-check-all builds the derivation too)
#
# Then run `make codegen` to regenerate every language's types and method
# tables. Running it twice changes nothing: the README records the
# package's publish date, not today's.
set -euo pipefail

package="@agentclientprotocol/sdk"
version="${ACP_SCHEMA_VERSION:-2.4.0}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
root="${ACP_SCHEMA_OUT:-$repo}"
derive="${ACP_SCHEMA_DERIVE:-1}"
deriver="$repo/tools/schema-derive"
crate="agent-client-protocol-schema"
crate_version="$(sed -n 's/^agent-client-protocol-schema = { version = "=\([^"]*\)".*/\1/p' "$deriver/Cargo.toml")"
crate_checksum="$(grep -A3 "^name = \"$crate\"\$" "$deriver/Cargo.lock" | sed -n 's/^checksum = "\(.*\)"/\1/p')"
pypi_package="agent-client-protocol"
pypi_version="1.0.0rc3"
pypi_pydantic="2.13.4"  # the JSON Schema pydantic writes depends on its version
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-schema.XXXXXX")"
trap 'rm -rf "$work"' EXIT

tarball="$(cd "$work" && npm pack --silent "$package@$version" 2>/dev/null | tail -1)"
tar -xzf "$work/$tarball" -C "$work"
published="$(npm view "$package@$version" time --json 2>/dev/null \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]][:10])' "$version")"
integrity="$(npm view "$package@$version" dist.integrity 2>/dev/null)"

npm_v1="$root/schema/upstream/npm/v1"
mkdir -p "$npm_v1"
for file in schema.json schema.unstable.json; do
  cp "$work/package/schema/v1/$file" "$npm_v1/$file"
done

count() { python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["$defs"]))' "$1"; }
methods() {
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["$defs"]; print(len({v["x-method"] for v in d.values() if "x-method" in v}))' "$1"
}
npm_v2="$root/schema/upstream/npm/v2"
mkdir -p "$npm_v2"
for file in schema.json schema.unstable.json; do
  cp "$work/package/schema/v2/$file" "$npm_v2/$file"
done

# The crate's definitions, stable then unstable (one build each: the crate's
# features are compile-time), each in its own target dir so both stay built.
derived="$root/schema/upstream/crate/v1"
mkdir -p "$derived"
if [ "$derive" = 1 ]; then
  for flavour in stable unstable; do
    features=()
    [ "$flavour" = unstable ] && features=(--features unstable)
    cargo run --quiet --release --locked --manifest-path "$deriver/Cargo.toml" \
      --target-dir "$deriver/target/$flavour" "${features[@]}" -- "$derived"
  done
elif [ "$root" != "$repo" ]; then
  cp "$repo/schema/upstream/crate/v1/"*.json "$derived/"
fi
# The Python SDK's additions, derived in a venv of their own.
pypi="$root/schema/upstream/pypi/v1"
pypi_v2="$root/schema/upstream/pypi/v2"
mkdir -p "$pypi" "$pypi_v2"
if [ "$derive" = 1 ]; then
  python3 -m venv "$work/pypi-venv"
  "$work/pypi-venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$work/pypi" \
    "$pypi_package==$pypi_version"
  "$work/pypi-venv/bin/pip" install -q --disable-pip-version-check "$work/pypi/"*.whl "pydantic==$pypi_pydantic"
  "$work/pypi-venv/bin/python" "$repo/tools/schema-derive-py/derive.py" \
    --have "$npm_v1/schema.unstable.json" --have "$derived/schema.unstable.json" --out "$pypi" >/dev/null
  "$work/pypi-venv/bin/python" "$repo/tools/schema-derive-py/derive.py" --version v2 \
    --have "$npm_v2/schema.unstable.json" --out "$pypi_v2" >/dev/null
  "$work/pypi-venv/bin/python" "$repo/tools/schema-derive-py/signatures.py" \
    --out "$root/schema/upstream/pypi/signatures.json" >/dev/null
  sha256sum "$work/pypi/"*.whl | cut -d' ' -f1 >"$pypi/wheel.sha256"
elif [ "$root" != "$repo" ]; then
  cp "$repo/schema/upstream/pypi/v1/"* "$pypi/"
  cp "$repo/schema/upstream/pypi/v2/"* "$pypi_v2/"
  cp "$repo/schema/upstream/pypi/signatures.json" "$root/schema/upstream/pypi/"
fi
pypi_checksum="$(cat "$pypi/wheel.sha256")"
python3 "$repo/tools/codegen/merge_schema.py" \
  --npm "$npm_v1" --npm-label "$package@$version" \
  --crate "$derived" --crate-label "$crate@$crate_version" \
  --extra "$pypi" --extra-label "$pypi_package@$pypi_version" \
  --out "$root/schema/v1" --sources-md "$root/schema/v1/SOURCES.md"
# v2: the npm draft as shipped, plus the Python SDK's additions in the unstable file.
python3 "$repo/tools/codegen/merge_schema.py" --npm "$npm_v2" --npm-label "$package@$version" \
  --extra "$pypi_v2" --out "$root/schema/v2"

stable="$root/schema/v1/schema.json"
unstable="$root/schema/v1/schema.unstable.json"

cat >"$root/schema/README.md" <<EOF
# ACP schema (data)

The Agent Client Protocol JSON Schema, protocol version 1 as codegen reads it
(\`v1/\`), the two official sources it is merged from (\`upstream/\`), and the
version 2 draft (\`v2/\`). Written by \`tools/codegen/update_schema.sh\` (\`make
update-schema\`); do not edit by hand.

| source | version | published / checksum |
|---|---|---|
| npm \`$package\` | $version | $published, \`$integrity\` |
| crates.io \`$crate\` | $crate_version | \`$crate_checksum\` |
| PyPI \`$pypi_package\` (wheel, with pydantic $pypi_pydantic) | $pypi_version | \`sha256:$pypi_checksum\` |

## v1: what codegen reads

- \`v1/schema.json\`: the stable protocol ($(count "$stable") definitions, $(methods "$stable") methods).
- \`v1/schema.unstable.json\`: stable plus unstable ($(count "$unstable") definitions, $(methods "$unstable") methods).
- \`v1/meta.json\`, \`v1/meta.unstable.json\`: the crate's method-name tables.
- \`v1/sources.json\` and \`v1/SOURCES.md\`: where each definition came from, and
  what changed against the npm bundle (added, changed, promoted to stable).

Each definition is the newer of the first two sources' (\`tools/codegen/merge_schema.py\`);
the third adds only what neither has.
Every method's params and result definitions carry \`x-method\` (the wire
name) and \`x-side\` (who handles it: \`agent\`, \`client\`, \`protocol\`, or
\`proxy\` for the conductor's proxy-chain methods). The generators in
\`tools/codegen/\` build every language's types and method tables from
\`v1/schema.json\` and \`v1/schema.unstable.json\` alone; \`make codegen-check\`
(part of \`make test\`) fails when a generated file drifts from them.

## upstream: the sources, as taken

- \`upstream/npm/v1/\`: \`package/schema/v1/\` of the npm package ($(count "$npm_v1/schema.json") and $(count "$npm_v1/schema.unstable.json") definitions).
- \`upstream/crate/v1/\`: the crate's types as JSON Schema, derived with schemars the way
  the official generator does (\`tools/schema-derive/\`), with its method-name tables.
- \`upstream/pypi/v1/\`: the unstable methods only the official Python SDK has (\`nes/*\`,
  \`document/*\`, \`mcp/connect\`, \`mcp/disconnect\`) and their types, from its pydantic
  models in schemars' shape (\`tools/schema-derive-py/\`); merged into the unstable file only.
- \`upstream/pypi/signatures.json\`: the official Python SDK's handler signatures (parameter
  order), for the Python compat layer's codegen (\`tools/schema-derive-py/signatures.py\`).
- \`upstream/npm/v2/\`: \`package/schema/v2/\` of the npm package, the protocol version 2 draft.
- \`upstream/pypi/v2/\`: the same methods as \`pypi/v1\`, from the official Python SDK's v2
  models (\`acp.experimental.v2\`), in the npm v2 draft's shape (open unions: \`anyOf\` with
  an \`other\` variant).

## v2 (draft)

\`v2/schema.json\` and \`v2/schema.unstable.json\`: the npm package's protocol
version 2 draft ($(count "$root/schema/v2/schema.json") and $(count "$root/schema/v2/schema.unstable.json") definitions): the stable file as shipped, the
unstable one with \`upstream/pypi/v2\`'s additions (the npm draft has $(count "$npm_v2/schema.unstable.json")). The engine's v2
types and checks are generated from them (\`core/src/schema/v2.rs\`,
\`v2_unstable.rs\`, by \`tools/codegen/gen_rust.py\`; what v2 has exactly as
v1 is v1's type, re-exported), and Node's (\`node/src/generated/v2/\`). A
connection speaks v2 when its \`protocol_versions\` include it and
\`initialize\` selects it (\`core/src/version.rs\`).
EOF
echo "schema/v1 merged from $package@$version ($published), $crate@$crate_version and $pypi_package@$pypi_version; schema/v2 from $package@$version and $pypi_package@$pypi_version"
