// Real agents from npm on our package, each built on a release of the
// official TypeScript SDK (pinned by the agent's own package.json) and
// installed twice, once as published and once with our package in place of
// the SDK through an npm `overrides` entry, the one-line switch the README
// documents:
//
// - @agentclientprotocol/claude-agent-acp (on SDK 2.4, its v1/v2 router):
//   without credentials its prompt ends in -32000 Authentication required;
// - @agentclientprotocol/codex-acp (on SDK 2.4; Codex's agent on its app
//   server): its prompt is a turn on interop/real's fake model API on loopback;
// - @zed-industries/claude-code-acp 0.13.1, claude-agent-acp's predecessor
//   (on SDK 0.13, the pre-2.0 class API), the last release whose tarball
//   ships its own unit tests (dist/tests): they run under the vitest its
//   package.json pins, in both installs, and must end the same, test by test.
//
// The official SDK's v1 client and its v2 client
// (interop/ts/transcript-client.mjs) drive each through initialize,
// session/new and a prompt (a v1-only agent: the v1 client alone; the v2
// client cannot read a v1 agent's answer, on the official SDK too). The two
// installs' transcripts must be the same:
// the client's messages in the same order, the agent's the same set of
// distinct messages (their interleaving, and how often it repeats an
// update it sends on its own, is the agent's own timing), every uuid,
// timestamp and scratch home replaced by a placeholder, keys sorted.
//
// Usage: node run.mjs <acp-engine tarball> [agent name...]   (the names: only
// those agents; last line: "N passed, M failed")

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SDK = "@agentclientprotocol/sdk";
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");

/** Codex's configuration: the fake model API at `port` as its provider (the same as interop/real's). */
const codexConfig = (port) => readFileSync(join(root, "interop", "real", "codex-config.toml"), "utf8").replaceAll("PORT", String(port));

/** Claude's agents without credentials: their prompt ends in -32000. */
const claudeWithoutCredentials = {
  // IS_SANDBOX: the agent's CLI refuses to skip permission prompts as root otherwise.
  env: () => ({ IS_SANDBOX: "1" }),
  prompted: (lines) => lines.some((line) => line.includes("Authentication required")) || "the runs did not end in Authentication required",
};

const AGENTS = [
  { name: "@agentclientprotocol/claude-agent-acp", version: "0.101.0", clients: ["v1", "v2"], ...claudeWithoutCredentials },
  {
    name: "@agentclientprotocol/codex-acp",
    version: "2.6.0",
    clients: ["v1", "v2"],
    env: (home, port) => {
      writeFileSync(join(home, "config.toml"), codexConfig(port));
      return { CODEX_HOME: home, OPENAI_API_KEY: "sk-acp-engine-test" };
    },
    prompted: (lines) => lines.some((line) => line.includes("Hello from the fake model.")) || "the model's answer did not reach the client",
  },
  {
    name: "@zed-industries/claude-code-acp",
    version: "0.13.1",
    clients: ["v1"],
    // Its own unit tests, compiled into its tarball, and the vitest its package.json pins.
    ownTests: { dir: "dist/tests", vitest: "4.0.17" },
    // What its declarations use that acp-engine does not have, and why.
    typeDifferences: [
      {
        diagnostic: "no exported member named 'SetSessionModelRequest'",
        why: "session/set_model left the schema; the official SDK 1.9.0 lacks the type too",
      },
      {
        diagnostic: "no exported member named 'SetSessionModelResponse'",
        why: "session/set_model left the schema; the official SDK 1.9.0 lacks the type too",
      },
    ],
    ...claudeWithoutCredentials,
  },
];

const [tarball, ...only] = process.argv.slice(2);
const unknown = only.filter((name) => !AGENTS.some((agent) => agent.name === name));
if (tarball === undefined || unknown.length > 0) {
  console.error(`usage: node run.mjs <acp-engine tarball> [agent name...]${unknown.length > 0 ? ` (unknown: ${unknown.join(", ")})` : ""}`);
  process.exit(2);
}
const work = join(root, "target", "drop-in");
let passed = 0;
let failed = 0;
const row = (name, problem) => {
  if (problem === undefined) {
    passed += 1;
    console.log(`PASS ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ${name}\n  | ${problem.split("\n").join("\n  | ")}`);
  }
};

/** Installs `agent` into `dir`, with `overrides` (ours) or as published. */
function install(agent, dir, ours) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const manifest = { name: `drop-in-${ours ? "ours" : "official"}`, private: true, dependencies: { [agent.name]: agent.version } };
  if (agent.ownTests !== undefined) manifest.dependencies.vitest = agent.ownTests.vitest;
  if (ours) {
    manifest.dependencies["acp-engine"] = `file:${resolve(tarball)}`;
    manifest.overrides = { [SDK]: "$acp-engine" };
  }
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  // What stands in the SDK's place (its package.json: the official one exports no `./package.json`).
  return JSON.parse(readFileSync(join(dir, "node_modules", SDK, "package.json"), "utf8")).name;
}

/** The transcript of one run of the official client `version` against `agent` in `dir`,
 * its scratch home's path replaced by a placeholder. */
function transcript(agent, dir, version, port) {
  const home = mkdtempSync(join(tmpdir(), "drop-in-home-"));
  try {
    const output = execFileSync(
      "node",
      [join(root, "interop", "ts", "transcript-client.mjs"), version, "node", join(dir, "node_modules", agent.name, "dist", "index.js")],
      // No user settings: a scratch home.
      { cwd: here, encoding: "utf8", timeout: 90_000, env: { ...process.env, HOME: home, ...agent.env(home, port) } },
    );
    return output.trim().split(home).join("<home>").split("\n").map((line) => JSON.parse(line));
  } finally {
    // The client ended the agent's process group; what the agent's CLI left is not the verdict.
    try {
      rmSync(home, { recursive: true, force: true, maxRetries: 5 });
    } catch (error) {
      console.error(`note: ${home} not removed: ${error.message}`);
    }
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIMESTAMP = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;

function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical(value[key])]));
  }
  return value;
}

/** Each line as canonical JSON text, every uuid (a session's, a message's: new each
 * run) and timestamp replaced by a placeholder: numbering uuids by first appearance
 * would depend on the agent's own interleaving. */
function normalize(lines) {
  return lines.map((line) => JSON.stringify(canonical(line)).replace(UUID, "<uuid>").replace(TIMESTAMP, "<time>"));
}

function differences(agent, official, ours) {
  const [a, b] = [normalize(official), normalize(ours)];
  const sent = (lines) => lines.filter((line) => line.startsWith('{"dir":"->"'));
  // What the agent sends on its own may come more than once (its command list, as it loads).
  const received = (lines) => [...new Set(lines.filter((line) => line.startsWith('{"dir":"<-"')))].sort();
  const ends = (lines) => lines.filter((line) => line.startsWith('{"end"'));
  for (const [what, pick] of [["sent", sent], ["received", received], ["end", ends]]) {
    const [x, y] = [pick(a), pick(b)];
    for (let i = 0; i < Math.max(x.length, y.length); i += 1) {
      if (x[i] !== y[i]) return `${what} #${i}:\n official: ${(x[i] ?? "(none)").slice(0, 400)}\n ours:     ${(y[i] ?? "(none)").slice(0, 400)}`;
    }
  }
  const prompted = agent.prompted(a);
  return prompted === true ? undefined : prompted;
}

/** `agent`'s own tests run by vitest in `dir`: each test file's outcome (a file that
 * fails to load has no tests) and each test's, by name. */
function ownTestResults(agent, dir) {
  const report = join(dir, "own-tests.json");
  const installed = join(dir, "node_modules", agent.name);
  // vitest's default pattern, within the installed package, which its default exclude
  // (node_modules) would leave out.
  const config = join(dir, "own-tests.config.mjs");
  const include = `${agent.ownTests.dir}/**/*.{test,spec}.?(c|m)[jt]s?(x)`;
  writeFileSync(config, `export default { test: { include: [${JSON.stringify(include)}], exclude: [] } };\n`);
  // Exits non-zero when a file fails: the report is the verdict.
  spawnSync("npx", ["vitest", "run", "--config", config, "--root", installed, "--reporter=json", `--outputFile=${report}`], {
    cwd: dir,
    stdio: "ignore",
    timeout: 300_000,
  });
  const files = JSON.parse(readFileSync(report, "utf8")).testResults;
  const outcomes = {};
  for (const file of files) {
    const name = relative(join(installed, agent.ownTests.dir), file.name);
    outcomes[name] = file.status;
    for (const test of file.assertionResults) outcomes[`${name} > ${test.fullName}`] = test.status;
  }
  return outcomes;
}

/** The row of `agent`'s own tests: every file and test ends as it does on the official SDK. */
function ownTestsRow(agent, official, ours) {
  let problem;
  let summary = "";
  try {
    const [a, b] = [ownTestResults(agent, official), ownTestResults(agent, ours)];
    const names = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    const differ = names.filter((name) => a[name] !== b[name]);
    const count = (status) => names.filter((name) => name.includes(" > ") && b[name] === status).length;
    summary = ` (${count("passed")} passed, ${count("skipped") + count("pending")} skipped, on both)`;
    if (count("passed") === 0) problem = "no test passed";
    if (differ.length > 0) {
      problem = differ.map((name) => `${name}: official ${a[name] ?? "(absent)"}, ours ${b[name] ?? "(absent)"}`).join("\n");
    }
  } catch (error) {
    problem = String(error.message ?? error);
  }
  row(`${agent.name}@${agent.version}'s own tests end the same on acp-engine as on the official SDK${problem ? "" : summary}`, problem);
}

/** tsc --strict's diagnostics of `agent`'s own declarations (dist/*.d.ts) in `dir`, against
 * whatever stands in the SDK's place there; null when it ships none. */
function declarationDiagnostics(agent, dir) {
  const dist = join(dir, "node_modules", agent.name, "dist");
  if (!existsSync(dist)) return null;
  const files = readdirSync(dist).filter((name) => name.endsWith(".d.ts")).map((name) => join(dist, name));
  if (files.length === 0) return null;
  const tsc = join(root, "node", "node_modules", "typescript", "bin", "tsc");
  const options = ["--noEmit", "--strict", "--skipLibCheck", "false", "--module", "NodeNext", "--moduleResolution", "NodeNext"];
  const environment = ["--target", "ES2022", "--lib", "ES2022,DOM", "--types", "node", "--typeRoots", join(root, "node", "node_modules", "@types")];
  // Exits non-zero on any diagnostic: the output is the verdict.
  const run = spawnSync("node", [tsc, ...options, ...environment, ...files], { cwd: dir, encoding: "utf8", timeout: 300_000 });
  const own = `node_modules/${agent.name}/`;
  return { files: files.length, diagnostics: run.stdout.split("\n").filter((line) => line.startsWith(own)) };
}

/** The row of `agent`'s declarations: on acp-engine, tsc --strict finds nothing the official
 * SDK does not, but the differences listed for it (each still found). */
function declarationsRow(agent, official, ours) {
  const [a, b] = [declarationDiagnostics(agent, official), declarationDiagnostics(agent, ours)];
  if (a === null) return;
  const listed = agent.typeDifferences ?? [];
  const extra = b.diagnostics.filter((line) => !a.diagnostics.includes(line));
  const unexplained = extra.filter((line) => !listed.some((difference) => line.includes(difference.diagnostic)));
  const stale = listed.filter((difference) => !extra.some((line) => line.includes(difference.diagnostic)));
  const problems = [...unexplained, ...stale.map((difference) => `listed, not found: ${difference.diagnostic}`)];
  const why = listed.length > 0 ? `; as listed: ${[...new Set(listed.map((difference) => difference.why))].join("; ")}` : "";
  row(
    `${agent.name}@${agent.version}'s declarations (${b.files} .d.ts files) type-check under tsc --strict on acp-engine as on the official SDK${why}`,
    problems.length > 0 ? problems.join("\n") : undefined,
  );
}

/** interop/real's fake model API on a free loopback port: [its port, the process]. */
async function fakeModel() {
  mkdirSync(work, { recursive: true });
  const portFile = join(mkdtempSync(join(work, "model-")), "port");
  const server = spawn("python3", [join(root, "interop", "real", "fake_model.py"), portFile], { stdio: "ignore" });
  for (let waited = 0; !existsSync(portFile) && waited < 10_000; waited += 50) {
    await new Promise((done) => setTimeout(done, 50));
  }
  return [Number(readFileSync(portFile, "utf8")), server];
}

const [port, model] = await fakeModel();
for (const agent of AGENTS.filter((agent) => only.length === 0 || only.includes(agent.name))) {
  const official = join(work, agent.name.split("/").pop(), "official");
  const ours = join(work, agent.name.split("/").pop(), "ours");
  let installed = true;
  for (const [dir, isOurs] of [[official, false], [ours, true]]) {
    try {
      const name = install(agent, dir, isOurs);
      const want = isOurs ? "acp-engine" : SDK;
      row(`install ${agent.name}@${agent.version} (${SDK} is ${name})`, name === want ? undefined : `expected ${want}`);
    } catch (error) {
      installed = false;
      row(`install ${agent.name}@${agent.version}${isOurs ? " with our package as its SDK" : ""}`, String(error.message ?? error));
    }
  }
  if (installed) {
    for (const version of agent.clients) {
      let problem;
      try {
        problem = differences(agent, transcript(agent, official, version, port), transcript(agent, ours, version, port));
      } catch (error) {
        problem = String(error.message ?? error);
      }
      row(`${agent.name} on acp-engine: the official ${version} client's transcript is the official SDK's`, problem);
    }
    if (agent.ownTests !== undefined) ownTestsRow(agent, official, ours);
    declarationsRow(agent, official, ours);
  }
  // Each pair of installs takes up to 900 MB; kept only to look into a failure.
  if (failed === 0) rmSync(work, { recursive: true, force: true });
}
model.kill();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
