// The app API (the official SDK 2.x's `agent()` / `client()`) over a real
// process: a client app drives an agent app spawned as a child process.
import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { client, methods, PROTOCOL_VERSION, RequestError, spawnStream } from "acp-engine";

const here = path.dirname(fileURLToPath(import.meta.url));
const APP_AGENT = path.join(here, "peers", "app-agent.mjs");

function clientApp(reads) {
  return client({ name: "app-test-client" })
    .onRequest(methods.client.fs.readTextFile, (c) => {
      reads.push(c.params.path);
      return { content: "one two three" };
    })
    .onRequest("vendor/ping", (params) => params, () => ({ pong: true }));
}

test("a client app runs a session against an agent app process", async () => {
  const reads = [];
  const stream = spawnStream(process.execPath, [APP_AGENT]);
  const result = await clientApp(reads).connectWith(stream, async (agent) => {
    await assert.rejects(agent.request(methods.agent.session.new, { cwd: "/", mcpServers: [] }), (error) => {
      // The app's initialize gate: nothing before `initialize`.
      assert.ok(error instanceof RequestError);
      assert.equal(error.code, RequestError.invalidRequest().code);
      return true;
    });
    const init = await agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    assert.equal(init.protocolVersion, PROTOCOL_VERSION);
    return agent.buildSession("/work").withSession(async (session) => {
      assert.equal(session.sessionId, "s1");
      void session.prompt("read the notes");
      return session.readText();
    });
  });
  assert.equal(result, "onetwothree");
  assert.deepEqual(reads, ["/notes.txt"]);
});

test("custom methods go both ways, params parsed by the handler's parser", async () => {
  const stream = spawnStream(process.execPath, [APP_AGENT]);
  const answer = await clientApp([]).connectWith(stream, async (agent) => {
    await agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    return agent.request("vendor/echo", { n: 1 });
  });
  assert.deepEqual(answer, { echoed: { n: 1 }, back: { pong: true } });
});

test("a schema method's bad params never reach the app's handler (-32602)", async () => {
  const stream = spawnStream(process.execPath, [APP_AGENT]);
  await clientApp([]).connectWith(stream, async (agent) => {
    await agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    await assert.rejects(agent.request(methods.agent.session.new, { cwd: 7 }), (error) => {
      assert.equal(error.code, RequestError.invalidParams().code);
      return true;
    });
  });
});

test("connectWith rejects when the agent process dies mid-operation", async () => {
  const stream = spawnStream(process.execPath, ["-e", "process.exit(3)"]);
  await assert.rejects(
    clientApp([]).connectWith(stream, () => new Promise(() => {})),
    (error) => error != null,
  );
});
