#!/usr/bin/env node
// Benchmark agent on the official TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0, installed by interop/setup.sh in interop/ts/node_modules).
import { Readable, Writable } from "node:stream";

// bench/node-app runs this same program on acp-engine's app API: it names
// the package in `globalThis.ACP_BENCH_SDK` (not inherited by children).
const acp = await import(globalThis.ACP_BENCH_SDK ?? "../../interop/ts/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js");

const CHUNK_TEXT = "chunk of agent text";
const LARGE = 16 * 1024 * 1024;

const app = acp
  .agent({ name: "official-ts-bench-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: 1 }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: "bench-session" }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const first = params.prompt[0];
    const [scenario, count] = (first && first.type === "text" ? first.text : "").trim().split(" ");
    const n = Number(count);
    const sessionId = params.sessionId;
    if (scenario === "stream") {
      for (let i = 0; i < n; i++) {
        await client.notify(acp.methods.client.session.update, {
          sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: CHUNK_TEXT } },
        });
      }
    } else if (scenario === "rpc") {
      for (let i = 0; i < n; i++) {
        await client.request(acp.methods.client.fs.readTextFile, { sessionId, path: "/bench/file.txt" });
      }
    } else if (scenario === "perm") {
      const options = [{ optionId: "allow", name: "Allow", kind: "allow_once" }];
      for (let i = 0; i < n; i++) {
        await client.request(acp.methods.client.session.requestPermission, {
          sessionId,
          toolCall: { toolCallId: `call-${i}` },
          options,
        });
      }
    } else if (scenario === "concurrent") {
      const read = { sessionId, path: "/bench/file.txt" };
      await Promise.all(Array.from({ length: n }, () => client.request(acp.methods.client.fs.readTextFile, read)));
    } else if (scenario === "large") {
      const content = "x".repeat(LARGE);
      for (let i = 0; i < n; i++) {
        await client.request(acp.methods.client.fs.writeTextFile, { sessionId, path: "/bench/large.txt", content });
        const read = await client.request(acp.methods.client.fs.readTextFile, { sessionId, path: "/bench/large.txt" });
        if (read.content.length !== LARGE) throw acp.RequestError.internalError({ got: read.content.length });
      }
    } else {
      throw acp.RequestError.invalidParams();
    }
    return { stopReason: "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, () => {});

if (process.argv[2] === "--serve") {
  // Served remote clients by the SDK's own server (bench/remote.py).
  const http = await import("node:http");
  const sdk = "../../interop/ts/node_modules/@agentclientprotocol/sdk/dist/transports";
  const { AcpServer } = await import(`${sdk}/server.js`);
  const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await import(`${sdk}/node-adapter.js`);
  const { WebSocketServer } = await import("../../interop/ts/node_modules/ws/wrapper.mjs");
  const server = new AcpServer({ agent: app });
  const httpServer = http.createServer(createNodeHttpHandler(server));
  httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(server, new WebSocketServer({ noServer: true })));
  const address = process.argv[3];
  const colon = address.lastIndexOf(":");
  const host = address.slice(0, colon);
  httpServer.listen(Number(address.slice(colon + 1)), host, () => {
    const { port } = httpServer.address();
    console.log(`ws://${host}:${port}/acp\nhttp://${host}:${port}/acp`);
  });
} else {
  // bench/node-app/stdio-*.mjs: acp-engine's own stdio stream in place of Web streams.
  const engineStreams = globalThis.ACP_BENCH_ENGINE_STREAMS;
  const conn = app.connect(
    engineStreams ? engineStreams.stdio(acp) : acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
  );
  await conn.closed;
  process.exit(0);
}
