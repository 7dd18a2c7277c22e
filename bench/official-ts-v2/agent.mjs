#!/usr/bin/env node
// Benchmark agent of ACP v2 (the draft) on the official TypeScript SDK's
// `experimental/v2` API (@agentclientprotocol/sdk 2.4.0, installed by
// interop/setup.sh), by bench/README.md's v2 contract: a prompt is
// acknowledged with a messageId, and the turn is told in session updates
// (running, the chunks, idle with stopReason end_turn).
import { Readable, Writable } from "node:stream";

// bench/node-v2 runs this same program on acp-engine's package: it names the
// package in `globalThis.ACP_BENCH_SDK_V2` (not inherited by children).
const acp = await import(globalThis.ACP_BENCH_SDK_V2 ?? "../../interop/ts/node_modules/@agentclientprotocol/sdk/dist/v2/stable/acp.js");

const CHUNK_TEXT = "chunk of agent text";
const info = { name: "official-ts-v2-bench-agent", version: "1.0.0" };
let messages = 0;

const app = acp
  .agent({ name: info.name })
  .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: 2, info, capabilities: {} }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: "bench-session" }))
  .onRequest(acp.methods.agent.session.prompt, ({ params, client }) => {
    const first = params.prompt[0];
    const [scenario, count] = (first && first.type === "text" ? first.text : "").trim().split(" ");
    if (scenario !== "stream") throw acp.RequestError.invalidParams();
    const n = Number(count);
    const { sessionId } = params;
    const update = (update) => client.notify(acp.methods.client.session.update, { sessionId, update });
    const messageId = `m${++messages}`;
    // The turn runs after the acknowledgement, as v2 has it.
    setImmediate(async () => {
      await update({ sessionUpdate: "state_update", state: "running" });
      const reply = `m${++messages}`;
      for (let i = 0; i < n; i++) {
        await update({ sessionUpdate: "agent_message_chunk", messageId: reply, content: { type: "text", text: CHUNK_TEXT } });
      }
      await update({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
    });
    return { messageId };
  })
  .onNotification(acp.methods.agent.session.cancel, () => {});

// bench/node-v2/stdio-*.mjs: acp-engine's own stdio stream in place of Web streams.
const engineStreams = globalThis.ACP_BENCH_ENGINE_STREAMS;
const conn = app.connect(
  engineStreams ? engineStreams.stdio(acp) : acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
);
await conn.closed;
process.exit(0);
