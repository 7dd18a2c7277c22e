#!/usr/bin/env node
// The client that README agents are tested against (tools/readme): the
// official TypeScript SDK's client, minimal contract in ../README.md.
//
// Usage: node readme-client.mjs <agent command> [agent args...]
//        node readme-client.mjs ws://HOST:PORT/acp | http://HOST:PORT/acp
//
// initialize, session/new, one "Hello" turn (any permission request is
// answered with the first option), then session/cancel and EOF on the
// agent's stdin. Passes when the turn ends with end_turn after at least one
// agent_message_chunk with text, and (a local agent) the agent exits by
// itself (status 0) within 2 s of losing its client. A URL is reached with
// the SDK's WebSocket or Streamable HTTP stream. Prints "readme ok" on
// success.

import * as acp from "@agentclientprotocol/sdk";

import { agentStream } from "./agent-stream.mjs";
import { traced } from "./trace.mjs";

const log = (...args) => console.error("[readme-client]", ...args);
const fail = (why) => {
  console.error(`FAIL: ${why}`);
  process.exit(1);
};

const argv = process.argv.slice(2);
if (argv.length === 0) {
  console.error("usage: readme-client.mjs <agent command> [agent args...]");
  process.exit(2);
}

const { stream, hangUp } = await agentStream(argv, acp.ndJsonStream);

let text = "";
const app = acp
  .client({ name: "readme-client" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ({
    outcome: { outcome: "selected", optionId: params.options[0].optionId },
  }))
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const { update } = params;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") text += update.content.text;
  });
const conn = app.connect(traced(stream, log));
const agent = conn.agent;

try {
  const init = await agent.request(acp.methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: {},
    clientInfo: { name: "readme-client", version: "1.0.0" },
  });
  if (init.protocolVersion !== 1) fail(`initialize: protocolVersion ${JSON.stringify(init.protocolVersion)}`);
  const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
  const turn = await agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Hello" }],
  });
  if (turn.stopReason !== "end_turn") fail(`prompt: stopReason ${turn.stopReason}`);
  if (text.length === 0) fail("prompt: no agent_message_chunk text before the turn ended");
  log(`agent said ${JSON.stringify(text)}`);
  await agent.notify(acp.methods.agent.session.cancel, { sessionId });
} catch (err) {
  fail(`${err instanceof acp.RequestError ? `JSON-RPC error ${err.code}: ` : ""}${err?.message ?? err}`);
}

conn.close();
const unclean = await hangUp();
if (unclean) fail(unclean);
console.log("readme ok");
process.exit(0);
