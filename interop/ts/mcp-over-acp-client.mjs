#!/usr/bin/env node
// A client that offers its agent two MCP servers over the ACP connection
// itself (MCP-over-ACP, MCP 2026-07-28), on the official TypeScript SDK's
// `McpOverAcpProvider`: "tools", an `@modelcontextprotocol/server` McpServer
// served with `fromMcpServer` (tool `add`), and "counter", a handler of its
// own (tool `count` reports progress; any other tool is an McpProtocolError).
// What acp-engine's MCP-over-ACP is tested against
// (node/test/mcp-over-acp.test.mjs).
//
// Usage: node mcp-over-acp-client.mjs <agent command> [agent args...]
//
// initialize, session/new declaring both servers, one prompt; prints the
// agent's words, then "mcp ok" when they are what the servers answered. The
// progress notifications must arrive in order, but may be cut short: the
// official caller drops those it handles after the request's answer (on
// this machine it sees 1 to 3 of them, varying from run to run).

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";

import * as acp from "@agentclientprotocol/sdk/unstable";
import { fromMcpServer } from "@agentclientprotocol/sdk/experimental/mcp-server";

const PROGRESS = [1, 2, 3].map((step) => `notifications/progress:${step}`);
const expected = (received) =>
  `tools=add add=5 count=3 progress=${PROGRESS.slice(0, received).join(",")} refused=-32602:Unknown tool: nope unavailable=-33001`;

const argv = process.argv.slice(2);
if (argv.length === 0) {
  console.error("usage: mcp-over-acp-client.mjs <agent command> [agent args...]");
  process.exit(2);
}

const tools = fromMcpServer(() => {
  const server = new McpServer({ name: "interop-tools", version: "1.0.0" });
  server.registerTool("add", { description: "Adds two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  return server;
});

async function count({ method, params, notify }) {
  if (method !== "tools/call" || params?.name !== "count") throw new acp.McpProtocolError(-32602, `Unknown tool: ${params?.name}`);
  const to = params.arguments.to;
  for (let step = 1; step <= to; step++) await notify("notifications/progress", { progress: step, total: to });
  return { result: { content: [{ type: "text", text: String(to) }] } };
}

const provider = new acp.McpOverAcpProvider();
const agentProcess = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
agentProcess.stdin.on("error", () => {});
let words = "";
const app = acp
  .client({ name: "mcp-over-acp-client" })
  .onRequest(acp.methods.client.mcp.message, provider.handleRequest)
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate === "agent_message_chunk") words += params.update.content.text;
  });
const connection = app.connect(acp.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout)));
const agent = connection.agent;
const toolsServer = provider.registerServer(agent, { name: "tools", handler: tools.handler });
const counterServer = provider.registerServer(agent, { name: "counter", handler: count });

await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
const session = await agent
  .buildSession(process.cwd())
  .withMcpServer(toolsServer.declaration)
  .withMcpServer(counterServer.declaration)
  .start();
await session.prompt("Call your tools");
console.log(words);
await Promise.all([toolsServer.dispose(), counterServer.dispose(), tools.close()]);
agentProcess.stdin.end();
const received = /progress=(\S*)/.exec(words)?.[1].split(",").filter(Boolean).length ?? 0;
if (words !== expected(received)) {
  console.error(`FAIL: expected ${JSON.stringify(expected(received))}`);
  process.exit(1);
}
console.log("mcp ok");
process.exit(0);
