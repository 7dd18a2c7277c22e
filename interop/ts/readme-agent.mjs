#!/usr/bin/env node
// The agent that README clients are tested against (tools/readme): the
// official TypeScript SDK's agent, minimal contract in ../README.md.
//
// On a prompt it asks permission (options "allow" then "reject"); when
// "allow" is selected it says "Hello from the official agent!" and ends the
// turn with end_turn. Exits when stdin closes.

import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

import { traced } from "./trace.mjs";

const log = (...args) => console.error("[readme-agent]", ...args);
const say = (client, sessionId, text) =>
  client.notify(acp.methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });

let sessions = 0;
const app = acp
  .agent({ name: "readme-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: 1,
    agentCapabilities: {},
    authMethods: [],
    agentInfo: { name: "readme-agent", version: "1.0.0" },
  }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `readme-${++sessions}` }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const permission = await client.request(acp.methods.client.session.requestPermission, {
      sessionId: params.sessionId,
      toolCall: { toolCallId: "call-1", title: "Say hello", kind: "other", status: "pending" },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    const { outcome } = permission;
    if (outcome.outcome !== "selected" || outcome.optionId !== "allow") {
      await say(client, params.sessionId, "Permission denied.");
      return { stopReason: "end_turn" };
    }
    await say(client, params.sessionId, "Hello from the official agent!");
    return { stopReason: "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, () => {});

const conn = app.connect(traced(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)), log));
await conn.closed;
process.exit(0);
