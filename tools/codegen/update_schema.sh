#!/usr/bin/env bash
# Take the official ACP v1 JSON Schema from the npm package that ships it
# (the official TypeScript SDK), at a pinned version, into schema/v1/, and
# record where it came from in schema/README.md.
#
#   tools/codegen/update_schema.sh            # the pinned version below
#   ACP_SCHEMA_VERSION=2.5.0 tools/codegen/update_schema.sh
#   ACP_SCHEMA_OUT=/tmp/x tools/codegen/update_schema.sh   # write there instead
#   (make schema-check does that and compares: schema/ is what the pin gives)
#
# Then run `make codegen` to regenerate every language's types and method
# tables. Running it twice changes nothing: the README records the
# package's publish date, not today's.
set -euo pipefail

package="@agentclientprotocol/sdk"
version="${ACP_SCHEMA_VERSION:-2.4.0}"
root="${ACP_SCHEMA_OUT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-schema.XXXXXX")"
trap 'rm -rf "$work"' EXIT

tarball="$(cd "$work" && npm pack --silent "$package@$version" 2>/dev/null | tail -1)"
tar -xzf "$work/$tarball" -C "$work"
published="$(npm view "$package@$version" time --json 2>/dev/null \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]][:10])' "$version")"
integrity="$(npm view "$package@$version" dist.integrity 2>/dev/null)"

mkdir -p "$root/schema/v1"
for file in schema.json schema.unstable.json; do
  cp "$work/package/schema/v1/$file" "$root/schema/v1/$file"
done

count() { python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["$defs"]))' "$1"; }
methods() {
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["$defs"]; print(len({v["x-method"] for v in d.values() if "x-method" in v}))' "$1"
}
stable="$root/schema/v1/schema.json"
unstable="$root/schema/v1/schema.unstable.json"

cat >"$root/schema/README.md" <<EOF
# ACP schema (data)

The official Agent Client Protocol JSON Schema, protocol version 1, files
\`schema/v1/schema.json\` and \`schema/v1/schema.unstable.json\` of the npm
package that ships it. Written by \`tools/codegen/update_schema.sh\` (\`make
update-schema\`); do not edit by hand.

| package | version | published | integrity |
|---|---|---|---|
| \`$package\` | $version | $published | \`$integrity\` |

- \`v1/schema.json\`: the stable protocol ($(count "$stable") definitions, $(methods "$stable") methods).
- \`v1/schema.unstable.json\`: stable plus unstable ($(count "$unstable") definitions, $(methods "$unstable") methods).

Every method's params and result definitions carry \`x-method\` (the wire
name) and \`x-side\` (who handles it: \`agent\`, \`client\`, \`protocol\`, or
\`proxy\` for the conductor's proxy-chain methods). The generators in
\`tools/codegen/\` build every language's types and method tables from
these two files alone; \`make codegen-check\` (part of \`make test\`) fails
when a generated file drifts from them.

The same package also ships a v2 schema (\`schema/v2/\`); acp-engine speaks v1.
EOF
echo "schema/v1 from $package@$version ($published)"
