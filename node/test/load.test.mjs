// Load, CI-sized (ACP_LOAD_SCALE multiplies it): many requests in flight
// each way, a long burst in order, a hundred connections in one process,
// and memory flat over many messages. Against the INSTALLED package.
import assert from "node:assert/strict";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import * as v8 from "node:v8";
import * as vm from "node:vm";

import { ClientSideConnection, Connection, ndJsonStream, spawnStream } from "acp-engine";

const here = path.dirname(fileURLToPath(import.meta.url));
const AGENT = path.join(here, "peers", "agent.mjs");
const SCALE = Number(process.env.ACP_LOAD_SCALE ?? "1");
const text = (prompt) => [{ type: "text", text: prompt }];

function loadClient() {
  const client = {
    updates: [],
    requestPermission: () => ({ outcome: { outcome: "cancelled" } }),
    sessionUpdate(params) {
      client.updates.push(params.update.content.text);
    },
    readTextFile: (params) => ({ content: params.path }),
  };
  return client;
}

// A real collection before each RSS reading, without --expose-gc on the
// command line (node --test starts the file in a child process).
v8.setFlagsFromString("--expose-gc");
const collectGarbage = vm.runInNewContext("gc");

async function connect(client, t) {
  const conn = new ClientSideConnection(() => client, spawnStream(process.execPath, [AGENT]));
  // A failed assertion must not leave the agent (and so this process) running.
  t.after(() => conn.close());
  await conn.initialize({ protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } } });
  const { sessionId } = await conn.newSession({ cwd: os.tmpdir(), mcpServers: [] });
  return { conn, sessionId };
}

test("10,000 requests in flight each way", async (t) => {
  const n = 10_000 * SCALE;
  const { conn, sessionId } = await connect(loadClient(), t);
  const answers = await Promise.all(Array.from({ length: n }, (_, i) => conn.extMethod("_test.echo", { i })));
  assert.deepEqual(
    answers.map((answer) => answer.params.i),
    Array.from({ length: n }, (_, i) => i),
  );
  const turn = await conn.prompt({ sessionId, prompt: text(`concurrent ${n}`) });
  assert.deepEqual(turn._meta, { count: n, wrong: 0 });
  conn.close();
  await conn.closed;
});

test("a 200,000-notification burst arrives whole and in order", async (t) => {
  const n = 200_000 * SCALE;
  const client = loadClient();
  const { conn, sessionId } = await connect(client, t);
  await conn.prompt({ sessionId, prompt: text(`burst ${n}`) });
  assert.equal(client.updates.length, n);
  for (let i = 0; i < n; i++) if (client.updates[i] !== String(i)) assert.fail(`update ${i} is ${client.updates[i]}`);
  conn.close();
  await conn.closed;
});

test("a hundred connections in one process", async () => {
  const pairs = [];
  for (let k = 0; k < 100; k++) {
    const there = new TransformStream();
    const back = new TransformStream();
    const server = new Connection(
      async (method, params) => ({ method, params }),
      () => {},
      ndJsonStream(back.writable, there.readable),
    );
    const caller = new Connection(
      () => null,
      () => {},
      ndJsonStream(there.writable, back.readable),
    );
    pairs.push({ server, caller });
  }
  const calls = pairs.flatMap(({ caller }, k) =>
    Array.from({ length: 20 }, (_, j) => caller.sendRequest("echo", { k, j })),
  );
  const answers = await Promise.all(calls);
  assert.deepEqual(
    answers,
    pairs.flatMap((_, k) => Array.from({ length: 20 }, (_, j) => ({ method: "echo", params: { k, j } }))),
  );
  for (const { server, caller } of pairs) {
    caller.close();
    server.close();
    await caller.closed;
    await server.closed;
  }
});

test("memory stays flat over 110,000 messages", async (t) => {
  const client = loadClient();
  const { conn, sessionId } = await connect(client, t);
  const round = async () => {
    await conn.prompt({ sessionId, prompt: text("burst 20000") });
    client.updates.length = 0;
    await Promise.all(Array.from({ length: 2000 }, (_, i) => conn.extMethod("_test.echo", { i })));
  };
  // The allocators settle after about 20 rounds (~90 MiB here), then stay
  // within a couple of MiB over thousands of rounds.
  for (let i = 0; i < 20; i++) await round();
  collectGarbage();
  const before = process.memoryUsage().rss;
  for (let i = 0; i < 5 * SCALE; i++) await round();
  collectGarbage();
  const grown = (process.memoryUsage().rss - before) / 2 ** 20;
  assert.ok(grown < 24, `RSS grew ${grown.toFixed(1)} MiB`);
  conn.close();
  await conn.closed;
});
