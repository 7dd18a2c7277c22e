#!/usr/bin/env node
// An agent that calls the MCP servers its client offers over the ACP
// connection itself (MCP-over-ACP, MCP 2026-07-28), on the official
// TypeScript SDK: `McpOverAcpCaller` on the app API. What acp-engine's
// MCP-over-ACP is tested against (node/test/mcp-over-acp.test.mjs).
//
// Usage: node mcp-over-acp-agent.mjs   (ACP on stdio)
//
// session/new keeps the `"type": "acp"` servers; each prompt calls them:
// `tools/list` and `tools/call add` on "tools", `tools/call count` on
// "counter" (with its progress notifications), an unknown tool there (an
// inner MCP error), and a server nobody declared (the outer -33001). It says
// what it got in one agent_message_chunk and ends the turn.

import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/unstable";

const log = (...args) => console.error("[mcp-over-acp-agent]", ...args);
const caller = new acp.McpOverAcpCaller({ clientInfo: { name: "mcp-over-acp-agent", version: "1.0.0" } });
const sessions = new Map();

async function callEverything(client, servers) {
  const byName = (name) => servers.find((server) => server.name === name)?.serverId;
  const tools = byName("tools");
  const counter = byName("counter");
  const listed = await caller.request(client, tools, "tools/list", {});
  const names = listed.result.tools.map((tool) => tool.name).join(",");
  const sum = await caller.request(client, tools, "tools/call", { name: "add", arguments: { a: 2, b: 3 } });
  const progress = [];
  const counted = await caller.request(client, counter, "tools/call", { name: "count", arguments: { to: 3 } }, {
    onNotification: (notification) => progress.push(`${notification.method}:${notification.params?.progress}`),
  });
  const refused = await caller.request(client, counter, "tools/call", { name: "nope" });
  let unavailable = "none";
  try {
    await caller.request(client, "nobody-declared-this", "tools/list", {});
  } catch (error) {
    unavailable = error.code;
  }
  return [
    `tools=${names}`,
    `add=${sum.result.content[0].text}`,
    `count=${counted.result.content[0].text}`,
    `progress=${progress.join(",")}`,
    `refused=${refused.error.code}:${refused.error.message}`,
    `unavailable=${unavailable}`,
  ].join(" ");
}

const app = acp
  .agent({ name: "mcp-over-acp-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: 1,
    agentCapabilities: { mcpCapabilities: { http: false, sse: false, acp: true } },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    const sessionId = `sess-${randomUUID()}`;
    sessions.set(sessionId, params.mcpServers.filter(acp.isMcpServerAcp));
    log(`session/new ${sessionId}: ${sessions.get(sessionId).length} servers over ACP`);
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const text = await callEverything(client, sessions.get(params.sessionId) ?? []);
    await client.notify(acp.methods.client.session.update, {
      sessionId: params.sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
    });
    return { stopReason: "end_turn" };
  })
  .onNotification(acp.methods.agent.mcp.message, caller.handleNotification);

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
process.exit(0);
