// The ACP version 2 draft (`acp-engine/experimental/v2`) against the official
// TypeScript SDK 2.4.0 (interop/ts, installed by interop/setup.sh): one agent
// program, written on the official SDK's v1 API, v2 API and protocol router
// (interop/ts/dual-agent.mjs), runs on our package with only its import
// lines changed, under the official v1 and v2 clients; our v2 client app
// drives the official dual agent; the engine selects the version and checks
// both ways.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

import * as v1 from "acp-engine";
import * as v2 from "acp-engine/experimental/v2";
import * as v2Unstable from "acp-engine/experimental/v2/unstable";

const here = dirname(fileURLToPath(import.meta.url));
const root = process.env.ACP_REPO_ROOT ?? join(here, "..", "..");
const TS = join(root, "interop", "ts");
// Programs written for a test live beside it, so that `acp-engine` resolves to the installed package.
const programs = mkdtempSync(join(here, ".v2-programs-"));
after(() => rmSync(programs, { recursive: true, force: true }));

function official(script) {
  const sdk = join(TS, "node_modules", "@agentclientprotocol", "sdk");
  assert.doesNotThrow(() => readFileSync(join(sdk, "package.json")), `the official SDK is not installed: run interop/setup.sh (${sdk})`);
  return join(TS, script);
}

/** An interop/ts program on our package: its SDK import lines changed, nothing else. */
function ours(script) {
  const text = readFileSync(official(script), "utf8");
  const rewritten = text.replaceAll('from "@agentclientprotocol/sdk', 'from "acp-engine');
  const changed = text.split("\n").filter((line, i) => line !== rewritten.split("\n")[i]);
  assert.ok(changed.length > 0 && changed.every((line) => line.startsWith("import ")), "only import lines change");
  writeFileSync(join(programs, script), rewritten);
  // What it imports beside it, as it is.
  for (const helper of ["trace.mjs", "remote-stream.mjs", "agent-stream.mjs"]) writeFileSync(join(programs, helper), readFileSync(official(helper)));
  return join(programs, script);
}
const oursDualAgent = () => ours("dual-agent.mjs");

/** An agent of the v2 app API alone, in a process of its own. */
function v2OnlyAgent() {
  const file = join(programs, "v2-only-agent.mjs");
  writeFileSync(
    file,
    `import * as v2 from "acp-engine/experimental/v2";
v2.agent({ name: "v2-only" })
  .onRequest(v2.methods.agent.initialize, () => ({ protocolVersion: 2, info: { name: "v2-only", version: "1" } }))
  .connect(v2.stdioStream());
`,
  );
  return file;
}

function drive(client, agent) {
  const program = client.startsWith("/") ? client : official(client);
  return execFileSync(process.execPath, [program, process.execPath, agent], {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, ACP_INTEROP_TRACE: "" },
  }).trim();
}

test("the official v2 client gets v2 from a router on our package", () => {
  assert.equal(drive("v2-client.mjs", oursDualAgent()).split("\n").at(-1), "v2 ok");
});

test("the official v1 client gets v1 from the same router", () => {
  assert.equal(drive("readme-client.mjs", oursDualAgent()).split("\n").at(-1), "readme ok");
});

test("the official v2 client program runs on our package: against our router and the official one", () => {
  const client = ours("v2-client.mjs");
  assert.equal(drive(client, oursDualAgent()).split("\n").at(-1), "v2 ok");
  assert.equal(drive(client, official("dual-agent.mjs")).split("\n").at(-1), "v2 ok");
});

test("our v2 client app drives the official router agent in v2", async () => {
  const updates = [];
  let idle;
  const ended = new Promise((resolve) => (idle = resolve));
  const app = v2.client({ name: "ours" }).onNotification(v2.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
    if (v2.StateUpdate.isIdle(params.update)) idle(params.update);
  });
  const result = await app.connectWith(v2.spawnStream(process.execPath, [official("dual-agent.mjs")]), async (agent) => {
    const init = await agent.request(v2.methods.agent.initialize, {
      protocolVersion: v2.PROTOCOL_VERSION,
      info: { name: "ours", version: "1.0.0" },
      capabilities: {},
    });
    assert.equal(init.protocolVersion, 2);
    const { sessionId } = await agent.request(v2.methods.agent.session.new, { cwd: "/", mcpServers: [] });
    const ack = await agent.request(v2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Hi" }] });
    // v1's methods are not v2's: the engine refuses to send them.
    await assert.rejects(agent.request("session/load", { sessionId, cwd: "/", mcpServers: [] }), { code: -32601 });
    return { ack, idle: await ended };
  });
  assert.equal(typeof result.ack.messageId, "string");
  assert.equal(result.idle.stopReason, "end_turn");
  const said = updates.filter((update) => v2.SessionUpdate.isAgentMessageChunk(update)).map((update) => update.content.text);
  assert.deepEqual(said, ["echo: Hi"]);
});

test("initialized: both sides' last successful initialize, as the official v2 connections offer it", async () => {
  // Our client against the official router agent, in a process of its own.
  const client = v2.client({ name: "ours" }).connect(v2.spawnStream(process.execPath, [official("dual-agent.mjs")]));
  let settled = false;
  const first = client.initialized.then((snapshot) => ((settled = true), snapshot));
  // A request the engine refuses before it goes out is no exchange.
  await assert.rejects(client.agent.request(v2.methods.agent.initialize, { protocolVersion: 2 }), { code: -32602 });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(settled, false);
  const request = { protocolVersion: 2, info: { name: "ours", version: "1.0.0" }, capabilities: {} };
  const response = await client.agent.request(v2.methods.agent.initialize, request);
  const snapshot = await first;
  assert.deepEqual(snapshot, { request, response });
  assert.equal(snapshot.response.protocolVersion, 2);
  // A copy each time: changing one changes nothing else.
  snapshot.request.info.name = "changed";
  assert.equal((await client.agent.initialized).request.info.name, "ours");
  client.close();
  await client.closed;

  // Our agent, in memory: its connection and its handlers' contexts see the exchange it answered.
  let agentConnection;
  const seen = [];
  const agentApp = v2
    .agent({ name: "v2-only" })
    .onConnect((connection) => (agentConnection = connection))
    .onRequest(v2.methods.agent.initialize, ({ params }) => ({ protocolVersion: 2, info: { name: "v2-only", version: params.info.version } }))
    .onRequest(v2.methods.agent.session.new, async ({ client: peer }) => {
      seen.push(await peer.initialized);
      return { sessionId: "s-1" };
    });
  const connection = v2.client({ name: "c" }).connect(agentApp);
  await connection.agent.request(v2.methods.agent.initialize, { protocolVersion: 2, info: { name: "c", version: "7" } });
  await connection.agent.request(v2.methods.agent.session.new, { cwd: "/", mcpServers: [] });
  const expected = {
    request: { protocolVersion: 2, info: { name: "c", version: "7" } },
    response: { protocolVersion: 2, info: { name: "v2-only", version: "7" } },
  };
  assert.deepEqual(await agentConnection.initialized, expected);
  assert.deepEqual(seen, [expected]);
  connection.close();

  // A connection that closes first never initializes.
  const unused = v2.client().connect(agentApp);
  unused.close();
  await assert.rejects(unused.initialized);
});

test("a v2-only agent refuses a v1 client with -32022 and keeps the connection", async () => {
  const agentApp = v2
    .agent({ name: "v2-only" })
    .onRequest(v2.methods.agent.initialize, () => ({ protocolVersion: 2, info: { name: "v2-only", version: "1" } }));
  // A v1 client: what it sends is v1's initialize.
  await v1.client().connectWith(v1.spawnStream(process.execPath, [v2OnlyAgent()]), async (agent) => {
    await assert.rejects(agent.request(v1.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} }), {
      code: -32022,
      data: { requested: 1, supported: [2] },
    });
    // The connection goes on: a second try is answered the same.
    await assert.rejects(agent.request(v1.methods.agent.initialize, { protocolVersion: 1 }), { code: -32022 });
  });
  await v2.client().connectWith(agentApp, async (agent) => {
    // v2's initialize needs `info`: what a v2 client sends is checked as v2's before it goes out.
    await assert.rejects(agent.request(v2.methods.agent.initialize, { protocolVersion: 2 }), { code: -32602 });
    const init = await agent.request(v2.methods.agent.initialize, { protocolVersion: 2, info: { name: "c", version: "1" } });
    assert.equal(init.protocolVersion, 2);
  });
});

test("v2's guards check v2's shapes, and the unstable entry point has v2's unstable methods", () => {
  assert.equal(v2.StateUpdate.isIdle({ state: "idle", stopReason: "end_turn" }), true);
  assert.equal(v2.SessionUpdate.isStateUpdate({ sessionUpdate: "state_update", state: "running" }), true);
  // v1's stop-reason answer is not a v2 session update.
  assert.equal(v2.SessionUpdate.isStateUpdate({ sessionUpdate: "state_update", state: 7 }), false);
  assert.equal(v2.PROTOCOL_VERSION, 2);
  assert.equal(v2.methods.agent.toolCall.cancel, "tool_call/cancel");
  assert.equal(v2Unstable.methods.agent.session.fork, "session/fork");
  // A custom variant's own required properties are checked too.
  assert.equal(v2.AuthMethod.isCustom({ type: "_vendor", methodId: "m", name: "Vendor" }), true);
  assert.equal(v2.AuthMethod.isCustom({ type: "_vendor", name: "Vendor" }), false);
  assert.equal(v2.methods.agent.session.fork, undefined);
});

test("assertSupportedMcpServers: unique names, advertised transports", () => {
  const stdio = { stdio: {} };
  v2.assertSupportedMcpServers([{ type: "stdio", name: "a", command: "/bin/a", args: [], env: [] }], stdio);
  v2.assertSupportedMcpServers(null, null);
  const twice = [
    { type: "stdio", name: "a", command: "/bin/a", args: [], env: [] },
    { type: "stdio", name: "a", command: "/bin/b", args: [], env: [] },
  ];
  assert.throws(() => v2.assertSupportedMcpServers(twice, stdio), (error) => {
    assert.ok(error instanceof v2.RequestError);
    assert.equal(error.code, -32602);
    assert.deepEqual(error.data, { name: "a" });
    return true;
  });
  assert.throws(() => v2.assertSupportedMcpServers([{ type: "http", name: "h", url: "http://x", headers: [] }], stdio), {
    code: -32602,
    data: { type: "http" },
  });
});
