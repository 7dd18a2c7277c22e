// Several clients on one session (serveAgent's `attach`): a second client's
// loadSession of a session live on another connection attaches it as an
// observer, with the session's history and then every update; a permission
// request reaches both clients and the first answer wins; the observer may
// not prompt. Over loopback, both transports, with our client. Against the
// INSTALLED package.
import assert from "node:assert/strict";
import { test } from "node:test";

import { connectAgent, serveAgent } from "acp-engine";

const INITIALIZE = { protocolVersion: 1, clientCapabilities: {} };

/** A turn says its prompt back, asks permission, and says who allowed it. */
function askingAgent(connection) {
  const say = (sessionId, text) =>
    connection.sessionUpdate({ sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } });
  return {
    initialize: () => ({ protocolVersion: 1, agentCapabilities: { loadSession: true } }),
    newSession: () => ({ sessionId: "shared" }),
    async prompt({ sessionId, prompt }) {
      const said = prompt[0].text;
      await say(sessionId, `${said}: heard`);
      const options = [{ optionId: "allow", name: "Allow", kind: "allow_once" }];
      const outcome = await connection.requestPermission({ sessionId, toolCall: { toolCallId: said }, options });
      await say(sessionId, `${said}: allowed by ${outcome._meta.by}`);
      return { stopReason: "end_turn" };
    },
    cancel() {},
  };
}

/** Keeps the update texts; answers permission requests as `name`, or (answers false) never. */
function watcher(name) {
  const peer = { texts: [], answers: true, asked: 0 };
  peer.client = {
    requestPermission() {
      peer.asked++;
      if (peer.answers) return { outcome: { outcome: "selected", optionId: "allow" }, _meta: { by: name } };
      return new Promise(() => {});
    },
    sessionUpdate(params) {
      peer.texts.push(params.update.content.text);
    },
  };
  return peer;
}

async function eventually(done) {
  for (let tries = 0; tries < 1000 && !done(); tries++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(done());
}

for (const scheme of ["http", "ws"]) {
  test(`two clients share a session (${scheme})`, async () => {
    const server = await serveAgent(askingAgent, { attach: true });
    try {
      const url = scheme === "http" ? server.httpUrl : server.websocketUrl;
      const controller = watcher("controller");
      const agent = connectAgent(() => controller.client, url);
      await agent.initialize(INITIALIZE);
      await agent.newSession({ cwd: "/tmp", mcpServers: [] });
      await agent.prompt({ sessionId: "shared", prompt: [{ type: "text", text: "one" }] });
      assert.deepEqual(controller.texts, ["one: heard", "one: allowed by controller"]);

      const observer = watcher("observer");
      const joined = connectAgent(() => observer.client, url);
      await joined.initialize(INITIALIZE);
      const loaded = await joined.loadSession({ sessionId: "shared", cwd: "/tmp", mcpServers: [] });
      assert.equal(loaded._meta["acpEngine/attach"].role, "observer");
      const history = ["one", ...controller.texts];
      await eventually(() => observer.texts.length === history.length);
      assert.deepEqual(observer.texts, history);

      controller.answers = false;
      await agent.prompt({ sessionId: "shared", prompt: [{ type: "text", text: "two" }] });
      assert.deepEqual(controller.texts.slice(2), ["two: heard", "two: allowed by observer"]);
      assert.equal(observer.asked, 1);
      await eventually(() => observer.texts.length === history.length + 3);
      assert.deepEqual(observer.texts.slice(history.length), ["two", ...controller.texts.slice(2)]);

      await assert.rejects(
        joined.prompt({ sessionId: "shared", prompt: [{ type: "text", text: "mine" }] }),
        (error) => error.code === -32600 && /observes session shared/.test(JSON.stringify(error.data)),
      );
      for (const connection of [joined, agent]) {
        connection.close();
        await connection.closed;
      }
    } finally {
      await server.close();
    }
  });
}
