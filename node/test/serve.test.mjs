// serveAgent: a new agent per connection over WebSocket and Streamable HTTP,
// calls both ways, the token checked before any agent starts, and close()
// failing what is pending. Against the INSTALLED package.
import assert from "node:assert/strict";
import { test } from "node:test";

import { RequestError, connectAgent, serveAgent } from "acp-engine";

/** An agent that asks its client's permission on a prompt and reports the
 * choice in an update; the prompt "hang" never ends. */
function echoAgentFactory(made) {
  return (connection) => {
    const agent = {
      connection,
      initialize: () => ({ protocolVersion: 1 }),
      newSession: () => ({ sessionId: `s${made.length}` }),
      async prompt(params) {
        if (params.prompt[0].text === "hang") return new Promise(() => {});
        const answer = await connection.requestPermission({
          sessionId: params.sessionId,
          toolCall: { toolCallId: "t1" },
          options: [{ optionId: "yes", name: "Yes", kind: "allow_once" }],
        });
        await connection.sessionUpdate({
          sessionId: params.sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: answer.outcome.optionId } },
        });
        return { stopReason: "end_turn" };
      },
      cancel() {},
    };
    made.push(agent);
    return agent;
  };
}

function choosingClient() {
  const texts = [];
  return {
    texts,
    requestPermission: (params) => ({ outcome: { outcome: "selected", optionId: params.options[0].optionId } }),
    sessionUpdate(params) {
      texts.push(params.update.content.text);
    },
  };
}

const INITIALIZE = { protocolVersion: 1, clientCapabilities: {} };

for (const transport of ["websocket", "http"]) {
  test(`each ${transport} connection gets its own agent, calls go both ways`, async () => {
    const made = [];
    const server = await serveAgent(echoAgentFactory(made));
    try {
      const url = transport === "websocket" ? server.websocketUrl : server.httpUrl;
      for (let turn = 0; turn < 2; turn++) {
        const client = choosingClient();
        const agent = connectAgent(() => client, url);
        await agent.initialize(INITIALIZE);
        const { sessionId } = await agent.newSession({ cwd: "/tmp", mcpServers: [] });
        const result = await agent.prompt({ sessionId, prompt: [{ type: "text", text: "go" }] });
        assert.equal(result.stopReason, "end_turn");
        assert.deepEqual(client.texts, ["yes"], "the update comes before the turn's end");
        agent.close();
        await agent.closed;
        assert.equal(made.length, turn + 1);
      }
    } finally {
      await server.close();
    }
  });
}

// While an answer is due, Node's thread waits for it a moment without
// sleeping (the engine's wake-up held off meanwhile); an answer that comes
// later must still wake it, at either end.
for (const transport of ["websocket", "http"]) {
  test(`over ${transport}, answers slower than the wait for them still arrive`, async () => {
    const server = await serveAgent((connection) => ({
      initialize: () => ({ protocolVersion: 1 }),
      newSession: () => ({ sessionId: "s" }),
      async prompt(params) {
        const chosen = [];
        for (let i = 0; i < 12; i++) {
          const answer = await connection.requestPermission({
            sessionId: params.sessionId,
            toolCall: { toolCallId: `t${i}` },
            options: [{ optionId: `o${i}`, name: "Yes", kind: "allow_once" }],
          });
          chosen.push(answer.outcome.optionId);
        }
        return { stopReason: chosen.join(",") === [...Array(12).keys()].map((i) => `o${i}`).join(",") ? "end_turn" : "refusal" };
      },
      cancel() {},
    }));
    try {
      const url = transport === "websocket" ? server.websocketUrl : server.httpUrl;
      let asked = 0;
      const agent = connectAgent(
        () => ({
          // Every other answer after 5 ms, far beyond the wait (50 µs).
          async requestPermission(params) {
            if (asked++ % 2 === 1) await new Promise((resolve) => setTimeout(resolve, 5));
            return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
          },
          sessionUpdate() {},
        }),
        url,
      );
      await agent.initialize(INITIALIZE);
      const { sessionId } = await agent.newSession({ cwd: "/tmp", mcpServers: [] });
      const result = await agent.prompt({ sessionId, prompt: [{ type: "text", text: "go" }] });
      assert.equal(result.stopReason, "end_turn");
      assert.equal(asked, 12);
      agent.close();
      await agent.closed;
    } finally {
      await server.close();
    }
  });
}

test("the token is checked before any agent starts", async () => {
  const made = [];
  const server = await serveAgent(echoAgentFactory(made), { token: "s3cret" });
  try {
    for (const url of [server.websocketUrl, server.httpUrl]) {
      const agent = connectAgent(() => choosingClient(), url, { token: "guess" });
      await assert.rejects(agent.initialize(INITIALIZE), RequestError);
      await agent.closed;
    }
    assert.equal(made.length, 0);
    const agent = connectAgent(() => choosingClient(), server.httpUrl, { token: "s3cret" });
    await agent.initialize(INITIALIZE);
    agent.close();
    await agent.closed;
    assert.equal(made.length, 1);
  } finally {
    await server.close();
  }
});

test("close() ends every connection and fails what is pending", async () => {
  const made = [];
  const server = await serveAgent(echoAgentFactory(made));
  const agent = connectAgent(() => choosingClient(), server.websocketUrl);
  await agent.initialize(INITIALIZE);
  const { sessionId } = await agent.newSession({ cwd: "/tmp", mcpServers: [] });
  const turn = agent.prompt({ sessionId, prompt: [{ type: "text", text: "hang" }] });
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(server.connections, 1);
  // Expect the failure before closing: the turn may fail while close() runs.
  const failed = assert.rejects(turn, (error) => error instanceof RequestError);
  await server.close();
  await failed;
  await agent.closed;
  await made[0].connection.closed;
});

/** The status line and body of `GET path` on loopback `port`. */
async function getStatus(port, path) {
  const { connect } = await import("node:net");
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => (text += chunk));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}

for (const transport of ["websocket", "http"]) {
  test(`draining lets a ${transport} turn finish, then ends the connection`, async () => {
    let reached;
    const turnReached = new Promise((resolve) => (reached = resolve));
    let open;
    const gate = new Promise((resolve) => (open = resolve));
    const server = await serveAgent((connection) => ({
      initialize: () => ({ protocolVersion: 1 }),
      newSession: () => ({ sessionId: "s" }),
      async prompt() {
        reached();
        await gate;
        return { stopReason: "end_turn" };
      },
      cancel() {},
    }));
    const url = transport === "websocket" ? server.websocketUrl : server.httpUrl;
    const port = Number(new URL(url).port);
    const agent = connectAgent(() => choosingClient(), url);
    await agent.initialize(INITIALIZE);
    await agent.newSession({ cwd: "/tmp", mcpServers: [] });
    const turn = agent.prompt({ sessionId: "s", prompt: [] });
    await turnReached;
    const draining = server.drain(60_000);
    let ready = "";
    for (let i = 0; i < 500 && !ready.startsWith("HTTP/1.1 503"); i++) {
      ready = await getStatus(port, "/readyz");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.match(ready, /"status":"draining"/);
    open();
    assert.equal((await turn).stopReason, "end_turn", "the turn in flight finishes");
    await draining;
    await agent.closed;
  });
}
