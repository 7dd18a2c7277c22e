#!/usr/bin/env node
// An agent whose MCP client only takes URLs: the MCP servers its client
// offers over the ACP connection itself (MCP-over-ACP) are re-exported by the
// official TypeScript SDK's `McpOverAcpHttpBridge` as loopback MCP
// 2026-07-28 Streamable HTTP endpoints, and called over HTTP: "tools" with
// the official MCP client (`@modelcontextprotocol/client`), "counter" (a
// handler that is no full MCP server) with plain POSTs. What acp-engine's
// bridge is tested against (node/test/mcp-http-bridge.test.mjs).
//
// Usage: node mcp-http-agent.mjs   (ACP on stdio; driven by mcp-over-acp-client.mjs)
//
// It says what it got in one agent_message_chunk, in the words
// mcp-over-acp-agent.mjs uses, and ends the turn.

import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

import * as acp from "@agentclientprotocol/sdk/unstable";
import { McpOverAcpHttpBridge } from "@agentclientprotocol/sdk/experimental/mcp-http";

const log = (...args) => console.error("[mcp-http-agent]", ...args);
const caller = new acp.McpOverAcpCaller({ clientInfo: { name: "mcp-http-agent", version: "1.0.0" } });
const bridge = new McpOverAcpHttpBridge(caller);
const sessions = new Map();

/** One MCP request as an MCP HTTP client sends it: the SSE events' messages, or the JSON body. */
async function post(server, method, params, id = 1) {
  const headers = Object.fromEntries(server.headers.map(({ name, value }) => [name, value]));
  const body = {
    jsonrpc: "2.0",
    id,
    method,
    params: { ...params, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } },
  };
  const response = await fetch(server.url, {
    method: "POST",
    headers: {
      ...headers,
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(params.name === undefined ? {} : { "mcp-name": params.name }),
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.headers.get("content-type")?.startsWith("text/event-stream")) return [JSON.parse(text)];
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)));
}

async function callEverything(client, servers) {
  const byName = (name) => servers.find((server) => server.name === name);
  // The bridge speaks MCP 2026-07-28 only: the client pins it (the default probes for a 2025 server).
  const mcp = new Client({ name: "mcp-http-agent", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  const tools = byName("tools");
  const headers = Object.fromEntries(tools.headers.map(({ name, value }) => [name, value]));
  await mcp.connect(new StreamableHTTPClientTransport(new URL(tools.url), { requestInit: { headers } }));
  const listed = await mcp.listTools();
  const names = listed.tools.map((tool) => tool.name).join(",");
  const sum = await mcp.callTool({ name: "add", arguments: { a: 2, b: 3 } });
  await mcp.close();

  const counter = byName("counter");
  const counted = await post(counter, "tools/call", { name: "count", arguments: { to: 3 } });
  const progress = counted.filter((message) => message.method !== undefined).map((n) => `${n.method}:${n.params?.progress}`);
  const [refused] = await post(counter, "tools/call", { name: "nope" });
  const nobody = await bridge.toHttp(client, { type: "acp", name: "nobody", serverId: "nobody-declared-this" });
  const [unavailable] = await post(nobody, "tools/list", {});
  return [
    `tools=${names}`,
    `add=${sum.content[0].text}`,
    `count=${counted.at(-1).result.content[0].text}`,
    `progress=${progress.join(",")}`,
    `refused=${refused.error.code}:${refused.error.message}`,
    `unavailable=${unavailable.error.code}`,
  ].join(" ");
}

const app = acp
  .agent({ name: "mcp-http-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: 1,
    agentCapabilities: { mcpCapabilities: { http: true, sse: false, acp: true } },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
    const sessionId = `sess-${randomUUID()}`;
    const servers = await bridge.adaptServers(client, params.mcpServers);
    sessions.set(sessionId, servers);
    log(`session/new ${sessionId}: ${servers.map((server) => `${server.name} at ${server.url}`).join(", ")}`);
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
