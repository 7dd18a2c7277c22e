#!/usr/bin/env bash
# The Kotlin package's tests (`make test-kotlin`): build the native engine
# (bindings/uniffi) and the example peers, generate the uniffi Kotlin layer
# from the built library, then compile and run the JUnit tests with Maven.
#   bash kotlin/test.sh            # everything
#   MVN_ARGS="-Dtest=ClientTest" bash kotlin/test.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# The library JNA loads (from the jar's resources), the example peers and
# the uniffi Kotlin layer: kotlin/build.sh.
bash kotlin/build.sh

cd kotlin
rm -rf target/surefire-reports
status=0
# shellcheck disable=SC2086
mvn -q -B -Dstyle.color=never test -Dacp.examples="$root/target/debug/examples" ${MVN_ARGS:-} || status=$?

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
[[ $status -eq 0 ]] || exit $status

# Interop: the Kotlin example agent and client in the matrix with the
# official TypeScript and Python SDKs' peers (interop/run.sh), each run as a
# JVM on the compiled examples and their dependencies.
mvn -q -B -Dstyle.color=never org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
  -Dmdep.outputFile=target/classpath.txt >/dev/null
classpath="$PWD/target/classes:$PWD/target/test-classes:$(cat target/classpath.txt)"
java=(java -Xshare:auto -XX:TieredStopAtLevel=1 -cp "$classpath")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
env ACP_INTEROP_TRACE= "ACP_AGENT_kotlin=${java[*]} acp_engine.examples.ExampleAgentKt" \
  "ACP_CLIENT_kotlin=${java[*]} acp_engine.examples.ExampleClientKt" \
  bash "$root/interop/run.sh" >"$out" 2>&1 || true
ours='^(PASS|FAIL) (kotlin -> |[a-z]+ -> kotlin(:|$))'
grep -E "$ours" "$out" || { tail -20 "$out"; exit 1; }
rows_failed=$(grep -E "$ours" "$out" | grep -c '^FAIL' || true)
rows_passed=$(grep -E "$ours" "$out" | grep -c '^PASS' || true)
[[ $rows_failed -eq 0 ]] || sed -n '/^FAIL/,/^PASS/p' "$out" | head -60
echo "kotlin interop: $rows_passed passed, $rows_failed failed"
[[ $rows_failed -eq 0 && $rows_passed -gt 0 ]]
