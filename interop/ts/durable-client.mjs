#!/usr/bin/env node
// The official TypeScript SDK's client, its remote streams unchanged, against
// the durable example agent (core/examples/durable_agent.rs) behind a load
// balancer (interop/balancer.py): one connection starts a session and runs
// two turns (every request of the connection must reach the same backend:
// the official client keeps the balancer's cookie, and sends the
// Acp-Connection-Id); a second connection loads the session, gets both turns
// back before session/load returns, and runs a third.
//
// Usage: node durable-client.mjs http://host:port/acp   (or ws://...)
// Prints "durable ok" and exits 0, or the reason on stderr and exits 1.

import * as acp from "@agentclientprotocol/sdk";

import { remoteStream } from "./remote-stream.mjs";

const url = process.argv[2];

/** A connection whose session/update texts are kept by session, in order. */
async function open() {
  const updates = new Map();
  const app = acp
    .client({ name: "ts-durable-client" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const seen = updates.get(params.sessionId) ?? [];
      seen.push([params.update.sessionUpdate, params.update.content?.text ?? ""]);
      updates.set(params.sessionId, seen);
    });
  const conn = app.connect(await remoteStream(url, {}));
  await conn.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  return { conn, agent: conn.agent, updates };
}

/** A turn; checks the reply names this turn, and returns it. */
async function turn(peer, sessionId, text, number) {
  const before = peer.updates.get(sessionId)?.length ?? 0;
  const answer = await peer.agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text }],
  });
  if (answer.stopReason !== "end_turn") throw new Error(`${text}: stop reason ${answer.stopReason}`);
  const reply = (peer.updates.get(sessionId) ?? []).slice(before).map(([, chunk]) => chunk).join("");
  const expected = new RegExp(`^${text} \\(turn ${number}, agent \\d+\\)$`);
  if (!expected.test(reply)) throw new Error(`${text}: reply ${JSON.stringify(reply)} is not ${expected}`);
  return reply;
}

try {
  const first = await open();
  const { sessionId } = await first.agent.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] });
  const history = [];
  for (const [number, text] of [[1, "first"], [2, "second"]]) {
    history.push(["user_message_chunk", text], ["agent_message_chunk", await turn(first, sessionId, text, number)]);
  }
  first.conn.close();

  const second = await open();
  await second.agent.request(acp.methods.agent.session.load, { sessionId, cwd: "/", mcpServers: [] });
  const replayed = second.updates.get(sessionId) ?? [];
  if (JSON.stringify(replayed) !== JSON.stringify(history)) {
    throw new Error(`session/load replayed ${JSON.stringify(replayed)}, not ${JSON.stringify(history)}`);
  }
  await turn(second, sessionId, "third", 3);
  second.conn.close();
  console.log("durable ok");
  process.exit(0);
} catch (error) {
  console.error(`FAIL: ${error?.stack ?? error}`);
  process.exit(1);
}
