// Methods outside the schema on the class API, as the official SDK 1.x's
// class API has them: the legacy `session/set_model` that real agents still
// take and real clients send, a custom method, and an `_` extension go out
// as they are and reach the peer's extMethod / extNotification under the
// name that came (no `_` added or taken off), over real pipes to a spawned
// agent; the schema's own methods are still checked; serveAgent and
// connectAgent alike. Against the INSTALLED package.
import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { ClientSideConnection, RequestError, connectAgent, serveAgent, spawnAgent } from "acp-engine";

const here = path.dirname(fileURLToPath(import.meta.url));
const LEGACY_AGENT = path.join(here, "peers", "legacy-agent.mjs");
const SET_MODEL = "session/set_model";
const NOTE = "legacy/note";
const MODEL = { sessionId: "s-1", modelId: "fast" };

const client = () => ({
  requestPermission: () => ({ outcome: { outcome: "cancelled" } }),
  sessionUpdate() {},
});

/** What the agent's extMethod / extNotification got. */
async function recorded(conn) {
  return (await conn.extMethod("_test/recorded", {})).recorded;
}

async function done(conn) {
  conn.close();
  await conn.closed;
}

test("methods outside the schema go out as they are and reach the agent's extMethod under their own name", async () => {
  const conn = spawnAgent(client, process.execPath, [LEGACY_AGENT]);
  assert.ok(conn instanceof ClientSideConnection);
  await conn.initialize({ protocolVersion: 1 });
  assert.deepEqual(await conn.sendRequest(SET_MODEL, MODEL), {});
  await conn.sendNotification(NOTE, { n: 1 });
  // The official SDK 1.x's extMethod / extNotification send the name as given.
  assert.deepEqual(await conn.extMethod("example.com/ping", { n: 2 }), {});
  await conn.extNotification("_vendor/note", { n: 3 });
  assert.deepEqual(await recorded(conn), [
    ["extMethod", SET_MODEL, MODEL],
    ["extNotification", NOTE, { n: 1 }],
    ["extMethod", "example.com/ping", { n: 2 }],
    ["extNotification", "_vendor/note", { n: 3 }],
  ]);
  await done(conn);
});

test("the schema's own methods are still checked, and one the agent does not implement is not found", async () => {
  // uncheckedMethods (deprecated) is still taken, and changes nothing.
  const conn = spawnAgent(client, process.execPath, [LEGACY_AGENT], { uncheckedMethods: [SET_MODEL] });
  await conn.initialize({ protocolVersion: 1 });
  await assert.rejects(conn.sendRequest("session/new", { cwd: 42 }), (error) => {
    return error instanceof RequestError && error.code === -32602;
  });
  // The agent has no loadSession: -32601, and its extMethod never sees it.
  await assert.rejects(conn.sendRequest("session/load", { sessionId: "s-1", cwd: "/", mcpServers: [] }), (error) => {
    return error instanceof RequestError && error.code === -32601 && error.data?.method === "session/load";
  });
  assert.deepEqual(await recorded(conn), []);
  await done(conn);
});

test("serveAgent and connectAgent: methods outside the schema both ways", async () => {
  const got = [];
  const server = await serveAgent((connection) => ({
    initialize: () => ({ protocolVersion: 1 }),
    newSession: () => ({ sessionId: "s-1" }),
    async prompt() {
      // The agent sends one to its client: as it is, to the client's extNotification.
      await connection.sendNotification(NOTE, { from: "agent" });
      return { stopReason: "end_turn" };
    },
    cancel() {},
    extMethod(method, params) {
      got.push([method, params]);
      return { model: params.modelId };
    },
  }));
  try {
    const notes = [];
    const conn = connectAgent(
      () => ({ ...client(), extNotification: (method, params) => void notes.push([method, params]) }),
      server.websocketUrl,
    );
    await conn.initialize({ protocolVersion: 1 });
    assert.deepEqual(await conn.sendRequest(SET_MODEL, MODEL), { model: "fast" });
    assert.deepEqual(got, [[SET_MODEL, MODEL]]);
    await conn.prompt({ sessionId: "s-1", prompt: [{ type: "text", text: "hi" }] });
    assert.deepEqual(notes, [[NOTE, { from: "agent" }]]);
    await done(conn);
  } finally {
    await server.close();
  }
});
