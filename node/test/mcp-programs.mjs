// What the MCP-over-ACP tests share: interop/ts's programs written on the
// official SDK, run as they are or on our package with only their import
// lines changed, and how a client/agent pair of them is run and judged.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const root = process.env.ACP_REPO_ROOT ?? join(here, "..", "..");
/** interop/ts: the programs, and the official SDK they are written on. */
export const TS = join(root, "interop", "ts");
const SDK = join(TS, "node_modules", "@agentclientprotocol", "sdk");

/** What a client prints when its agent delivered every progress notification. */
export const ALL_PROGRESS = "progress=notifications/progress:1,notifications/progress:2,notifications/progress:3";

// The rewritten programs live beside a node_modules of their own: the MCP SDK
// packages our package loads (one copy, as a peer dependency is), and zod.
// Made at load, so that the test file's own `after` removes it.
const programs = mkdtempSync(join(here, ".mcp-programs-"));
after(() => rmSync(programs, { recursive: true, force: true }));
mkdirSync(join(programs, "node_modules"));
const mcpServerEntry = createRequire(fileURLToPath(import.meta.resolve("acp-engine/experimental/mcp-server"))).resolve(
  "@modelcontextprotocol/server",
);
const scope = `${sep}@modelcontextprotocol`;
symlinkSync(mcpServerEntry.slice(0, mcpServerEntry.lastIndexOf(`${scope}${sep}`) + scope.length), join(programs, "node_modules", "@modelcontextprotocol"));
symlinkSync(join(TS, "node_modules", "zod"), join(programs, "node_modules", "zod"));
writeFileSync(join(programs, "package.json"), '{"type": "module"}\n');

/** An interop/ts program as published: on the official SDK. */
export function official(script) {
  return join(TS, script);
}

/** An interop/ts program on our package: its SDK import lines changed, nothing else. */
export function ours(script) {
  assert.doesNotThrow(() => readFileSync(join(SDK, "package.json")), "the official SDK is not installed: run interop/setup.sh");
  const text = readFileSync(join(TS, script), "utf8");
  const rewritten = text.replaceAll('"@agentclientprotocol/sdk', '"acp-engine');
  const before = text.split("\n");
  const changed = rewritten.split("\n").filter((line, i) => line !== before[i]);
  assert.ok(changed.length > 0 && changed.every((line) => /^import\b/.test(line)), `only import lines change in ${script}`);
  const path = join(programs, script);
  writeFileSync(path, rewritten);
  return path;
}

/** Runs `client` with `agent` as its agent: the client's last two lines (the agent's words, its verdict). */
export async function run(client, agent) {
  const { stdout } = await promisify(execFile)(process.execPath, [client, process.execPath, agent], { timeout: 60_000 });
  const [words, verdict] = stdout.trim().split("\n").slice(-2);
  return { words, verdict };
}
