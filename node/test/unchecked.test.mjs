// Methods outside the schema (`uncheckedMethods`): the legacy
// `session/set_model` that real agents still take and real clients send,
// over real pipes to a spawned agent. Listed on both sides, it goes out as it
// is and reaches the agent's extMethod; unlisted, our side refuses to send it
// and the agent's side answers -32601; serveAgent and connectAgent take the
// option too. Against the INSTALLED package.
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

/** A client of the legacy agent; `agentTakes`: the agent's unchecked methods. */
function connect(agentTakes, options = {}) {
  const args = agentTakes.length === 0 ? [LEGACY_AGENT] : [LEGACY_AGENT, "--unchecked", ...agentTakes];
  return spawnAgent(client, process.execPath, args, options);
}

/** What the agent's extMethod / extNotification got (asked with an extension,
 * `_test/recorded`, which reaches its extMethod as `test/recorded`). */
async function recorded(conn) {
  return (await conn.extMethod("test/recorded", {})).recorded;
}

async function done(conn) {
  conn.close();
  await conn.closed;
}

test("listed on both sides, session/set_model goes out as it is and reaches the agent's extMethod", async () => {
  const conn = connect([SET_MODEL, NOTE], { uncheckedMethods: [SET_MODEL, NOTE] });
  assert.ok(conn instanceof ClientSideConnection);
  await conn.initialize({ protocolVersion: 1 });
  assert.deepEqual(await conn.sendRequest(SET_MODEL, MODEL), {});
  await conn.sendNotification(NOTE, { n: 1 });
  assert.deepEqual(await recorded(conn), [
    ["extMethod", SET_MODEL, MODEL],
    ["extNotification", NOTE, { n: 1 }],
  ]);
  // Listing methods does not open the others.
  await assert.rejects(conn.sendRequest("session/set_other", {}), (error) => {
    return error instanceof RequestError && error.code === -32601;
  });
  await done(conn);
});

test("unlisted on our side, session/set_model is refused before it is sent (-32601)", async () => {
  // The agent would take it: only our side's check can refuse it.
  const conn = connect([SET_MODEL, NOTE]);
  await conn.initialize({ protocolVersion: 1 });
  await assert.rejects(conn.sendRequest(SET_MODEL, MODEL), (error) => {
    return error instanceof RequestError && error.code === -32601;
  });
  await assert.rejects(conn.sendNotification(NOTE, { n: 1 }), (error) => {
    return error instanceof RequestError && error.code === -32601;
  });
  assert.deepEqual(await recorded(conn), []);
  await done(conn);
});

test("unlisted on the agent's side, session/set_model is answered -32601 and never reaches extMethod", async () => {
  const conn = connect([], { uncheckedMethods: [SET_MODEL, NOTE] });
  await conn.initialize({ protocolVersion: 1 });
  await assert.rejects(conn.sendRequest(SET_MODEL, MODEL), (error) => {
    return error instanceof RequestError && error.code === -32601 && error.data?.method === SET_MODEL;
  });
  // A notification is dropped, unanswered.
  await conn.sendNotification(NOTE, { n: 1 });
  assert.deepEqual(await recorded(conn), []);
  await done(conn);
});

test("serveAgent and connectAgent take uncheckedMethods, agent -> client too", async () => {
  const got = [];
  const server = await serveAgent(
    (connection) => ({
      initialize: () => ({ protocolVersion: 1 }),
      newSession: () => ({ sessionId: "s-1" }),
      async prompt(params) {
        // The agent sends one to its client: as it is, to the client's extNotification.
        await connection.sendNotification(NOTE, { from: "agent" });
        return { stopReason: "end_turn" };
      },
      cancel() {},
      extMethod(method, params) {
        got.push([method, params]);
        return { model: params.modelId };
      },
    }),
    { uncheckedMethods: [SET_MODEL, NOTE] },
  );
  try {
    const notes = [];
    const conn = connectAgent(
      () => ({ ...client(), extNotification: (method, params) => void notes.push([method, params]) }),
      server.websocketUrl,
      { uncheckedMethods: [SET_MODEL, NOTE] },
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
