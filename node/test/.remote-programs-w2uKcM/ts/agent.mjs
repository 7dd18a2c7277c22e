#!/usr/bin/env node
// ACP interop test agent built on the official TypeScript SDK
// (@agentclientprotocol/sdk, app API: agent().onRequest(...).connect(stream)).
//
// Speaks ACP on its own stdin/stdout and follows the interop contract in
// ../README.md. Exits when stdin reaches EOF. With `--serve HOST:PORT` it is
// served by the SDK's AcpServer over Streamable HTTP and WebSocket instead.

import { randomUUID } from "node:crypto";
import * as path from "node:path";
import { Readable, Writable } from "node:stream";
import * as fs from "node:fs";
import { fileURLToPath } from "node:url";

import * as acp from "acp-engine";

import { traced } from "./trace.mjs";

const IMPL = "ts";
const HERE = path.dirname(fileURLToPath(import.meta.url));
// Sent in the hello turn to a client that advertises session.notices and session.compaction.
const NEWS = JSON.parse(fs.readFileSync(path.join(HERE, "..", "news.json"), "utf8"));
let clientWantsNews = false;
/** What the client advertised at initialize: an agent asks only for that. */
let clientCan = { read: false, write: false, terminal: false };

function log(...args) {
  console.error(`[${IMPL}-agent]`, ...args);
}

/** sessionId -> { cwd, cancelled } */
const sessions = new Map();

const PERMISSION_OPTIONS = [
  { optionId: "allow", name: "Allow", kind: "allow_once" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];

function promptText(prompt) {
  return prompt
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("");
}

async function say(client, sessionId, text) {
  await client.notify(acp.methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
}

async function askPermission(client, sessionId) {
  return client.request(acp.methods.client.session.requestPermission, {
    sessionId,
    toolCall: { toolCallId: "call-1", title: "Read hello.txt", kind: "read", status: "pending" },
    options: PERMISSION_OPTIONS,
  });
}

async function sayHello(client, sessionId, session) {
  if (clientWantsNews) {
    for (const update of NEWS) await client.notify(acp.methods.client.session.update, { sessionId, update });
  }
  await say(client, sessionId, "Hello! ");
  // Only what the client advertised: no fs/* or terminal/* it cannot serve.
  if (!clientCan.read) {
    await say(client, sessionId, "(this client cannot read files: nothing read)");
  } else {
    const permission = await askPermission(client, sessionId);
    const outcome = permission.outcome;
    log("permission outcome", JSON.stringify(outcome));
    if (outcome.outcome === "cancelled" || session.cancelled) {
      return { stopReason: "cancelled" };
    }
    if (outcome.outcome !== "selected" || outcome.optionId !== "allow") {
      await say(client, sessionId, "Permission denied.");
      return { stopReason: "end_turn" };
    }
    const read = await client.request(acp.methods.client.fs.readTextFile, {
      sessionId,
      path: path.join(session.cwd, "hello.txt"),
    });
    await say(client, sessionId, read.content);
  }

  if (clientCan.write) {
    await client.request(acp.methods.client.fs.writeTextFile, {
      sessionId,
      path: path.join(session.cwd, "written.txt"),
      content: "written by agent",
    });
  }
  if (!clientCan.terminal) return { stopReason: "end_turn" };

  const terminal = await client.createTerminal({ sessionId, command: "echo", args: ["hi"] });
  try {
    const exit = await terminal.waitForExit();
    log("terminal exit", JSON.stringify(exit));
    const output = await terminal.currentOutput();
    await say(client, sessionId, `terminal said: ${output.output.trim()}`);
  } finally {
    await terminal.release();
  }
  return { stopReason: "end_turn" };
}

async function cancelMe(client, sessionId, session) {
  const permission = await askPermission(client, sessionId);
  log("permission outcome", JSON.stringify(permission.outcome), "session/cancel seen:", session.cancelled);
  if (permission.outcome.outcome === "cancelled" || session.cancelled) {
    return { stopReason: "cancelled" };
  }
  await say(client, sessionId, "Expected the turn to be cancelled, but permission was granted.");
  return { stopReason: "end_turn" };
}

const app = acp
  .agent({ name: `${IMPL}-interop-agent` })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    log(`initialize: protocolVersion=${params.protocolVersion} clientInfo=${JSON.stringify(params.clientInfo)}`);
    const capabilities = params.clientCapabilities;
    clientCan = {
      read: capabilities?.fs?.readTextFile === true,
      write: capabilities?.fs?.writeTextFile === true,
      terminal: capabilities?.terminal === true,
    };
    const session = capabilities?.session;
    clientWantsNews = Boolean(session?.notices && session?.compaction);
    return {
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: false,
        promptCapabilities: { image: false, audio: false, embeddedContext: false },
        mcpCapabilities: { http: false, sse: false },
      },
      authMethods: [],
      agentInfo: { name: `${IMPL}-interop-agent`, version: "1.0.0" },
    };
  })
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    const sessionId = `sess-${randomUUID()}`;
    sessions.set(sessionId, { cwd: params.cwd, cancelled: false });
    log(`session/new ${sessionId} cwd=${params.cwd}`);
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const session = sessions.get(params.sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
    session.cancelled = false;
    const text = promptText(params.prompt);
    log(`session/prompt ${JSON.stringify(text)}`);
    if (text === "Say hello") return sayHello(client, params.sessionId, session);
    if (text === "cancel me") return cancelMe(client, params.sessionId, session);
    await say(client, params.sessionId, `Unknown prompt: ${text}`);
    return { stopReason: "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    log(`session/cancel ${params.sessionId}`);
    const session = sessions.get(params.sessionId);
    if (session) session.cancelled = true;
  });

if (process.argv[2] === "--serve") {
  await serve(process.argv[3] ?? "127.0.0.1:0");
} else {
  const stream = traced(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)), log);
  const conn = app.connect(stream);
  await conn.closed;
  log("stdin closed; exiting");
  process.exit(0);
}

/**
 * `agent.mjs --serve HOST:PORT`: this agent behind the official SDK's own
 * server (AcpServer: Streamable HTTP and WebSocket on one endpoint), for our
 * remote clients to reach. Prints the WebSocket and the HTTP URL, then
 * serves until killed.
 */
async function serve(listen) {
  const http = await import("node:http");
  const { AcpServer } = await import("acp-engine/experimental/server");
  const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await import(
    "acp-engine/experimental/node"
  );
  const { WebSocketServer } = await import("ws");
  const server = new AcpServer({ agent: app });
  const httpServer = http.createServer(createNodeHttpHandler(server));
  httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(server, new WebSocketServer({ noServer: true })));
  const [host, port] = [listen.slice(0, listen.lastIndexOf(":")), Number(listen.slice(listen.lastIndexOf(":") + 1))];
  httpServer.listen(port, host, () => {
    const address = httpServer.address();
    console.log(`ws://${host}:${address.port}/acp`);
    console.log(`http://${host}:${address.port}/acp`);
  });
}
