// Proxies on acp-engine's `Proxy` / `runProxy` in a real chain: our
// conductor (`acp-engine conduct`, built in target/debug) runs two Node
// proxies in front of the Rust example agent, driven by the Rust example
// client through a whole session (prompt, permission, file read, terminal,
// cancellation). The official Rust conductor runs the same proxy in
// interop/conductor.sh.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = process.env.ACP_REPO_ROOT ?? path.join(here, "..", "..");
const target = path.join(root, "target", "debug");

test("a Node proxy passes a whole session through our conductor", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "acp-proxy-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = path.join(dir, "proxies.log");
  const proxy = (args) => `node ${path.join(here, "peers", "proxy.mjs")} --log ${log} ${args}`;
  const { stdout } = await promisify(execFile)(
    path.join(target, "examples", "client"),
    [path.join(target, "acp-engine"), "conduct", proxy("--name one --prefix one"), proxy("--name two"), path.join(target, "examples", "agent")],
    { timeout: 60_000 },
  );
  assert.ok(stdout.split("\n").includes("interop ok"), stdout);
  const lines = readFileSync(log, "utf8");
  for (const name of ["one", "two"]) {
    for (const crossed of ["-> initialize", "-> session/prompt", "<- session/request_permission", "<- fs/read_text_file"]) {
      assert.ok(lines.includes(`[node-proxy ${name}] ${crossed}`), `${name} ${crossed}:\n${lines}`);
    }
  }
});
