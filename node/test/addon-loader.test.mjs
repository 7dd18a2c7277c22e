// How the INSTALLED package finds its addon: native.cjs loads the one built
// with the package directly; napi-rs's loader (native-loader.cjs, shipped
// next to it) takes over for NAPI_RS_NATIVE_LIBRARY_PATH and other platforms.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The package's files a fresh process loaded to import "acp-engine", and whether the app API works. */
function load(env) {
  const probe = [
    'import { createRequire } from "node:module";',
    'import { basename } from "node:path";',
    'const acp = await import("acp-engine");',
    "const loaded = Object.keys(createRequire(import.meta.url).cache).map((file) => basename(file));",
    "const app = acp.agent({ name: 'probe' });",
    "console.log(JSON.stringify({ loaded: loaded.sort(), app: typeof app.connect }));",
  ].join("\n");
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", probe], {
    cwd: here,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  return JSON.parse(out);
}

test("the package loads the addon built with it directly, without napi-rs's loader", () => {
  const { loaded, app } = load({ NAPI_RS_NATIVE_LIBRARY_PATH: "" });
  assert.equal(app, "function");
  assert.ok(loaded.includes("native.cjs"), JSON.stringify(loaded));
  assert.ok(loaded.some((file) => file.endsWith(".node")), JSON.stringify(loaded));
  assert.ok(!loaded.includes("native-loader.cjs"), JSON.stringify(loaded));
});

test("NAPI_RS_NATIVE_LIBRARY_PATH goes through napi-rs's loader, which the package ships", () => {
  const direct = load({ NAPI_RS_NATIVE_LIBRARY_PATH: "" }).loaded.find((file) => file.endsWith(".node"));
  const addon = path.join(here, "..", "node_modules", "acp-engine", direct);
  const { loaded, app } = load({ NAPI_RS_NATIVE_LIBRARY_PATH: addon });
  assert.equal(app, "function");
  assert.ok(loaded.includes("native-loader.cjs"), JSON.stringify(loaded));
});
