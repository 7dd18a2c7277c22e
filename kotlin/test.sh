#!/usr/bin/env bash
# The Kotlin package's tests (`make test-kotlin`): build the native engine
# (bindings/uniffi) and the example peers, generate the uniffi Kotlin layer
# from the built library, then compile and run the JUnit tests with Maven.
#   bash kotlin/test.sh            # everything
#   MVN_ARGS="-Dtest=ClientTest" bash kotlin/test.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo=${CARGO:-cargo}

# The library JNA loads (from the jar's resources), the bindgen of the same
# uniffi version, and the Rust example agent and client the tests talk to.
"$cargo" build -q --release -p acp-engine-uniffi
"$cargo" build -q -p acp-engine --examples

# The uniffi layer is generated at build time, never checked in: it always
# matches the library it was generated from.
out=kotlin/target/generated-sources/uniffi
rm -rf "$out"
target/release/uniffi-bindgen generate --library target/release/libacp_engine_uniffi.so \
  --language kotlin --no-format --out-dir "$out" >/dev/null

cd kotlin
rm -rf target/surefire-reports
status=0
# shellcheck disable=SC2086
mvn -q -B test -Dacp.examples="$root/target/debug/examples" ${MVN_ARGS:-} || status=$?

# Maven is quiet when all is well: one line per suite and the totals.
python3 - <<'PY'
import glob, xml.etree.ElementTree as ET
passed = failed = skipped = 0
for path in sorted(glob.glob("target/surefire-reports/TEST-*.xml")):
    suite = ET.parse(path).getroot()
    tests, bad = int(suite.get("tests")), int(suite.get("failures")) + int(suite.get("errors"))
    skip = int(suite.get("skipped"))
    print(f"{suite.get('name')}: {tests - bad - skip} passed, {bad} failed ({float(suite.get('time')):.1f}s)")
    passed, failed, skipped = passed + tests - bad - skip, failed + bad, skipped + skip
print(f"kotlin: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
PY
exit $status
