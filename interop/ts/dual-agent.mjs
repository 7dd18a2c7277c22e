#!/usr/bin/env node
// An agent on the official TypeScript SDK that serves ACP v1 and the version
// 2 draft through the SDK's own protocol router (`agentProtocolRouter`):
// what acp-engine's clients that speak both are tested against.
//
// On a prompt it says "echo: <text>" and ends the turn: in v1 with an
// agent_message_chunk and stopReason end_turn; in v2 by acknowledging the
// prompt with a messageId and reporting the turn in session updates
// (running, the chunk, idle with stopReason end_turn). Exits when its client
// hangs up.

import { Readable, Writable } from "node:stream";

import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";

const info = { name: "official-dual-agent", version: "1.0.0" };
const textOf = (prompt) => prompt.filter((block) => block.type === "text").map((block) => block.text).join(" ");
let sessions = 0;
let messages = 0;

const v1App = v1
  .agent({ name: info.name })
  .onRequest(v1.methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {}, agentInfo: info }))
  .onRequest(v1.methods.agent.session.new, () => ({ sessionId: `s${++sessions}` }))
  .onRequest(v1.methods.agent.session.prompt, async ({ params, client }) => {
    await client.notify(v1.methods.client.session.update, {
      sessionId: params.sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `echo: ${textOf(params.prompt)}` } },
    });
    return { stopReason: "end_turn" };
  })
  .onNotification(v1.methods.agent.session.cancel, () => {});

const v2App = v2
  .agent({ name: info.name })
  .onRequest(v2.methods.agent.initialize, () => ({ protocolVersion: 2, info, capabilities: {} }))
  .onRequest(v2.methods.agent.session.new, () => ({ sessionId: `s${++sessions}` }))
  .onRequest(v2.methods.agent.session.prompt, ({ params, client }) => {
    const { sessionId } = params;
    const messageId = `m${++messages}`;
    const update = (update) => client.notify(v2.methods.client.session.update, { sessionId, update });
    setImmediate(async () => {
      await update({ sessionUpdate: "state_update", state: "running" });
      await update({
        sessionUpdate: "agent_message_chunk",
        messageId: `m${++messages}`,
        content: { type: "text", text: `echo: ${textOf(params.prompt)}` },
      });
      await update({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
    });
    return { messageId };
  })
  .onNotification(v2.methods.agent.session.cancel, () => {});

const { closed } = v2
  .agentProtocolRouter()
  .withV1(v1App)
  .withV2(v2App)
  .connect(v2.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await closed;
