#!/usr/bin/env node
// A client of the ACP version 2 draft, on the official TypeScript SDK's
// `experimental/v2` API: what acp-engine's v2 agents are tested against.
//
// Usage: node v2-client.mjs <agent command> [agent args...]
//        node v2-client.mjs ws://HOST:PORT/acp | http://HOST:PORT/acp
//
// initialize asking for version 2, session/new, one "Hello" turn (v2's
// prompt is acknowledged with a messageId; the turn's text and its end come
// as session updates: agent_message_chunk, then a state_update to idle with
// stopReason end_turn), then EOF on the agent's stdin. Passes when the
// agent answered version 2, the turn said something and ended with
// end_turn, and (a local agent) the agent exits by itself (status 0)
// within 2 s. A URL is reached with the SDK's WebSocket or Streamable HTTP
// stream. Prints "v2 ok" on success.

import * as acp from "@agentclientprotocol/sdk/experimental/v2";

import { agentStream } from "./agent-stream.mjs";
import { traced } from "./trace.mjs";

const log = (...args) => console.error("[v2-client]", ...args);
const fail = (why) => {
  console.error(`FAIL: ${why}`);
  process.exit(1);
};

const argv = process.argv.slice(2);
if (argv.length === 0) {
  console.error("usage: v2-client.mjs <agent command> [agent args...]");
  process.exit(2);
}

const { stream, hangUp } = await agentStream(argv, acp.ndJsonStream);
try {
  await acp.client({ name: "v2-client" }).connectWith(traced(stream, log), async (agent) => {
    const init = await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "v2-client", version: "1.0.0" },
      capabilities: {},
    });
    if (init.protocolVersion !== 2) fail(`initialize: protocolVersion ${JSON.stringify(init.protocolVersion)}`);
    await agent.buildSession(process.cwd()).withSession(async (session) => {
      const ack = await session.prompt("Hello");
      if (typeof ack.messageId !== "string") fail(`prompt: no messageId in ${JSON.stringify(ack)}`);
      const text = await session.readTextUntilIdle();
      if (text.length === 0) fail("prompt: no agent text before the session went idle");
      log(`agent said ${JSON.stringify(text)}`);
    });
  });
} catch (err) {
  fail(`${err instanceof acp.RequestError ? `JSON-RPC error ${err.code}: ` : ""}${err?.message ?? err}`);
}

const unclean = await hangUp();
if (unclean) fail(unclean);
console.log("v2 ok");
process.exit(0);
