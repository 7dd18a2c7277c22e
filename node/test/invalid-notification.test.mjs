// A notification from the agent whose params fail the schema (claude-agent-acp
// 0.23's usage_update with "used": null) is dropped, and the client hears of
// it: its handler's onInvalidNotification gets the -32602 saying what failed,
// or, without one, a process warning. The valid update after it arrives.
// Over a real pipe to a spawned agent; against the INSTALLED package.
import assert from "node:assert/strict";
import { test } from "node:test";

import { RequestError, spawnAgent } from "acp-engine";

const BAD_UPDATE_AGENT = `
for (const update of [
  { sessionUpdate: "usage_update", used: null, size: 10 },
  { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "after" } },
]) {
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s-1", update } }) + "\\n");
}
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
`;

async function run(client) {
  const updates = [];
  client.requestPermission = () => ({ outcome: { outcome: "cancelled" } });
  client.sessionUpdate = (params) => {
    updates.push(params.update.sessionUpdate);
  };
  const conn = spawnAgent(() => client, process.execPath, ["-e", BAD_UPDATE_AGENT]);
  for (let i = 0; i < 500 && updates.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  conn.close();
  await conn.closed;
  return updates;
}

test("the client's onInvalidNotification hears of an update that fails the schema", async () => {
  const heard = [];
  const client = {
    onInvalidNotification(method, error) {
      heard.push([method, error]);
    },
  };
  assert.deepEqual(await run(client), ["agent_message_chunk"]);
  assert.equal(heard.length, 1);
  const [method, error] = heard[0];
  assert.equal(method, "session/update");
  assert.ok(error instanceof RequestError);
  assert.equal(error.code, -32602);
  assert.match(JSON.stringify(error.data), /used/);
});

test("without onInvalidNotification, it is a process warning", async () => {
  const warnings = [];
  const listener = (warning) => warnings.push(warning);
  process.on("warning", listener);
  try {
    assert.deepEqual(await run({}), ["agent_message_chunk"]);
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  } finally {
    process.off("warning", listener);
  }
  const ours = warnings.filter((warning) => warning.name === "AcpInvalidNotification");
  assert.equal(ours.length, 1, String(warnings));
  assert.match(ours[0].message, /session\/update notification that fails the schema/);
});
