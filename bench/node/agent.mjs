#!/usr/bin/env node
// Benchmark agent on acp-engine's Node binding (see bench/README.md);
// `--serve HOST:PORT` serves remote clients instead (bench/remote.py).
import { AgentSideConnection, RequestError, serveAgent, stdioStream } from "../../node/dist/index.js";

const CHUNK_TEXT = "chunk of agent text";
const LARGE = 16 * 1024 * 1024;
let conn;

const agent = {
  initialize: () => ({ protocolVersion: 1 }),
  newSession: () => ({ sessionId: "bench-session" }),
  cancel() {},
  async prompt(params) {
    const first = params.prompt[0];
    const [scenario, count] = (first && first.type === "text" ? first.text : "").trim().split(" ");
    const n = Number(count);
    const sessionId = params.sessionId;
    if (scenario === "stream") {
      const update = { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: CHUNK_TEXT } } };
      for (let i = 0; i < n; i++) await conn.sessionUpdate(update);
    } else if (scenario === "rpc") {
      const read = { sessionId, path: "/bench/file.txt" };
      for (let i = 0; i < n; i++) await conn.readTextFile(read);
    } else if (scenario === "perm") {
      const options = [{ optionId: "allow", name: "Allow", kind: "allow_once" }];
      for (let i = 0; i < n; i++) {
        await conn.requestPermission({ sessionId, toolCall: { toolCallId: `call-${i}` }, options });
      }
    } else if (scenario === "concurrent") {
      const read = { sessionId, path: "/bench/file.txt" };
      await Promise.all(Array.from({ length: n }, () => conn.readTextFile(read)));
    } else if (scenario === "large") {
      const content = "x".repeat(LARGE);
      for (let i = 0; i < n; i++) {
        await conn.writeTextFile({ sessionId, path: "/bench/large.txt", content });
        const read = await conn.readTextFile({ sessionId, path: "/bench/large.txt" });
        if (read.content.length !== LARGE) throw RequestError.internalError({ got: read.content.length });
      }
    } else {
      throw RequestError.invalidParams();
    }
    return { stopReason: "end_turn" };
  },
};

if (process.argv[2] === "--serve") {
  const address = process.argv[3];
  const colon = address.lastIndexOf(":");
  const server = await serveAgent(
    (connection) => {
      conn = connection;
      return agent;
    },
    { host: address.slice(0, colon), port: Number(address.slice(colon + 1)) },
  );
  console.log(`${server.websocketUrl}\n${server.httpUrl}`);
} else {
  conn = new AgentSideConnection(() => agent, stdioStream());
  await conn.closed;
}
