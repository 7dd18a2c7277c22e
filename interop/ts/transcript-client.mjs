#!/usr/bin/env node
// The official TypeScript SDK's client (v1, or the v2 draft's), driving an
// agent through initialize, session/new and one "Hello" prompt, and printing
// every message on the wire as one JSON line `{"dir": "->" | "<-", "msg": ...}`
// (-> to the agent). For comparing one agent's transcripts on two SDKs
// (node/drop-in/run.mjs). The prompt may fail (an agent without credentials
// answers -32000); the client then waits until the agent has been quiet for
// 1 s, and the last line is `{"end": ...}`: the prompt's outcome.
//
// Usage: node transcript-client.mjs v1|v2 <agent command> [agent args...]

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";

const [version, ...argv] = process.argv.slice(2);
if ((version !== "v1" && version !== "v2") || argv.length === 0) {
  console.error("usage: transcript-client.mjs v1|v2 <agent command> [agent args...]");
  process.exit(2);
}
const acp = version === "v1" ? v1 : v2;
const print = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
let lastReceived = Date.now();

// In a process group of its own: what it starts (its CLI) goes with it at the end.
const agentProc = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "ignore"], detached: true });
agentProc.stdin.on("error", () => {});
const inner = acp.ndJsonStream(Writable.toWeb(agentProc.stdin), Readable.toWeb(agentProc.stdout));
const writer = inner.writable.getWriter();
const stream = {
  readable: inner.readable.pipeThrough(
    new TransformStream({
      transform(msg, controller) {
        lastReceived = Date.now();
        print({ dir: "<-", msg });
        controller.enqueue(msg);
      },
    }),
  ),
  writable: new WritableStream({
    write: (msg) => {
      print({ dir: "->", msg });
      return writer.write(msg);
    },
    close: () => writer.close(),
  }),
};

let idle;
const turnEnded = new Promise((resolve) => (idle = resolve));
const app = acp
  .client({ name: "transcript-client" })
  .onRequest(acp.methods.client.session.requestPermission, () => ({ outcome: { outcome: "cancelled" } }))
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate === "state_update" && params.update.state === "idle") idle(params.update);
  });
let end;
try {
  end = await app.connectWith(stream, async (agent) => {
    const init =
      version === "v1"
        ? { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "transcript-client", version: "1.0.0" } }
        : { protocolVersion: 2, info: { name: "transcript-client", version: "1.0.0" }, capabilities: {} };
    await agent.request(acp.methods.agent.initialize, init);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
    try {
      const answer = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Hello" }] });
      return version === "v1" ? { answer } : { answer: "acknowledged", idle: await turnEnded };
    } catch (error) {
      return { error: { code: error.code, message: error.message } };
    } finally {
      // What the agent sends on its own (status, commands) until it has been quiet for 1 s
      // (5 s at most): a late one would otherwise be in one transcript and not the other.
      const started = Date.now();
      while (Date.now() - lastReceived < 1000 && Date.now() - started < 5000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });
} catch (error) {
  end = { failed: String(error?.message ?? error) };
}
print({ end });
// Exits after the agent, which gets 2 s to go by itself once its stdin ends.
const exited = new Promise((resolve) => agentProc.on("exit", resolve));
agentProc.stdin.end();
const timer = setTimeout(() => agentProc.kill("SIGKILL"), 2000);
await exited;
clearTimeout(timer);
try {
  process.kill(-agentProc.pid, "SIGKILL");
} catch {
  // The group is gone already.
}
