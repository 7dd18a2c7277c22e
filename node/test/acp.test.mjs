// node:test suite over real processes and pipes. Run against the INSTALLED
// package (test.sh installs the npm pack tarball and runs these from there).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Readable, Writable } from "node:stream";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import {
  ClientSideConnection,
  Connection,
  RequestError,
  ndJsonStream,
  spawnStream,
} from "acp-engine";

const here = path.dirname(fileURLToPath(import.meta.url));
const AGENT = path.join(here, "peers", "agent.mjs");
const RAW_AGENT = path.join(here, "peers", "raw-agent.mjs");
const DISPOSE_AGENT = path.join(here, "peers", "dispose-agent.js");
const EXIT_CLIENT = path.join(here, "peers", "exit-client.mjs");

/** A directory of the test's own, removed when the test ends, passed or not. */
function scratchDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "acp-node-test-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function text(prompt) {
  return [{ type: "text", text: prompt }];
}

/** A recording client. */
function makeClient(overrides = {}) {
  const client = {
    updates: [],
    calls: [],
    notes: [],
    requestPermission(params) {
      client.calls.push("requestPermission");
      return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
    },
    sessionUpdate(params) {
      const update = params.update;
      if (update.sessionUpdate === "agent_message_chunk") client.updates.push(update.content.text);
    },
    async readTextFile(params) {
      client.calls.push("readTextFile");
      let content;
      try {
        content = await fs.promises.readFile(params.path, "utf8");
      } catch {
        throw RequestError.resourceNotFound(params.path);
      }
      const lines = content.split("\n");
      const start = (params.line ?? 1) - 1;
      return { content: lines.slice(start, params.limit ? start + params.limit : undefined).join("\n") };
    },
    async writeTextFile(params) {
      client.calls.push("writeTextFile");
      await fs.promises.writeFile(params.path, params.content);
    },
    createTerminal(params) {
      client.calls.push(`createTerminal:${params.command}`);
      return { terminalId: "term-1" };
    },
    terminalOutput() {
      client.calls.push("terminalOutput");
      return { output: "x\n", truncated: false, exitStatus: { exitCode: 0, signal: null } };
    },
    waitForTerminalExit() {
      client.calls.push("waitForTerminalExit");
      return { exitCode: 0, signal: null };
    },
    killTerminal() {
      client.calls.push("killTerminal");
    },
    releaseTerminal() {
      client.calls.push("releaseTerminal");
    },
    extMethod(method, params) {
      client.calls.push(`extMethod:${method}`);
      return { echoed: params };
    },
    extNotification(method, params) {
      client.notes.push([method, params]);
      const waiter = client.noteWaiters.get(method);
      if (waiter) waiter(params);
    },
    noteWaiters: new Map(),
    nextNote(method) {
      return new Promise((resolve) => client.noteWaiters.set(method, resolve));
    },
    ...overrides,
  };
  return client;
}

async function connect(client = makeClient(), agentPath = AGENT) {
  const conn = new ClientSideConnection(() => client, spawnStream(process.execPath, [agentPath]));
  await conn.initialize({ protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true } });
  const { sessionId } = await conn.newSession({ cwd: os.tmpdir(), mcpServers: [] });
  return { conn, client, sessionId };
}

async function done(conn) {
  conn.close();
  await conn.closed;
}

test("every agent method from the client", async () => {
  const { conn, sessionId } = await connect();
  await conn.authenticate({ methodId: "token" });
  await conn.loadSession({ sessionId, cwd: "/tmp", mcpServers: [] });
  const listed = await conn.listSessions({});
  assert.equal(listed.sessions[0].sessionId, "s-1");
  await conn.setSessionMode({ sessionId, modeId: "code" });
  const config = await conn.setSessionConfigOption({ sessionId, configId: "model", value: "fast" });
  assert.deepEqual(config, { configOptions: [] });
  await conn.resumeSession({ sessionId, cwd: "/tmp" });
  await conn.closeSession({ sessionId });
  const prompted = await conn.prompt({ sessionId, prompt: text("echo") });
  assert.equal(prompted.stopReason, "end_turn");
  await conn.cancel({ sessionId });
  await conn.extNotification("_test.note", { a: 1 });
  const echoed = await conn.extMethod("_test.echo", { b: 2 });
  assert.deepEqual(echoed, { method: "_test.echo", params: { b: 2 } });
  const { calls } = await conn.extMethod("_test.calls", {});
  assert.deepEqual(calls, [
    "initialize",
    "newSession",
    "authenticate:token",
    `loadSession:${sessionId}`,
    "listSessions",
    "setSessionMode:code",
    "setSessionConfigOption:model",
    `resumeSession:${sessionId}`,
    `closeSession:${sessionId}`,
    `cancel:${sessionId}`,
    'extNotification:_test.note:{"a":1}',
    "extMethod:_test.echo",
    "extMethod:_test.calls",
  ]);
  await done(conn);
});

test("every client method from the agent, TerminalHandle and ext methods", async (t) => {
  const dir = scratchDir(t);
  fs.writeFileSync(path.join(dir, "in.txt"), "one\ntwo\nthree\n");
  const { conn, client, sessionId } = await connect();
  const note = client.nextNote("_test.note");
  const result = await conn.prompt({ sessionId, prompt: text(`client-methods ${dir}`) });
  assert.equal(result.stopReason, "end_turn");
  const report = JSON.parse(client.updates.at(-1));
  assert.deepEqual(report.permission, { outcome: { outcome: "selected", optionId: "allow" } });
  assert.deepEqual(report.read, { content: "two" });
  assert.deepEqual(report.write, {});
  assert.equal(fs.readFileSync(path.join(dir, "out.txt"), "utf8"), "agent wrote");
  assert.equal(report.terminalId, "term-1");
  assert.deepEqual(report.exit, { exitCode: 0, signal: null });
  assert.equal(report.output.output, "x\n");
  assert.deepEqual(report.kill, {});
  assert.deepEqual(report.release, {});
  assert.deepEqual(report.ext, { echoed: { n: 1 } });
  assert.deepEqual(report.missing, { code: -32002, isRequestError: true });
  assert.deepEqual(await note, { from: "agent" });
  assert.deepEqual(client.calls, [
    "requestPermission",
    "readTextFile",
    "writeTextFile",
    "createTerminal:echo",
    "waitForTerminalExit",
    "terminalOutput",
    "killTerminal",
    "releaseTerminal",
    "extMethod:_test.client",
    "readTextFile",
  ]);
  await done(conn);
});

test("TerminalHandle is released by `await using`", async () => {
  const client = makeClient({
    terminalOutput() {
      client.calls.push("terminalOutput");
      return { output: "disposed\n", truncated: false };
    },
  });
  const { conn } = await connect(client, DISPOSE_AGENT);
  const after = client.nextNote("_test.after-scope");
  const result = await conn.prompt({ sessionId: "s", prompt: text("go") });
  assert.equal(result.stopReason, "end_turn");
  assert.deepEqual(await after, { output: "disposed\n" });
  assert.deepEqual(client.calls, ["createTerminal:echo", "waitForTerminalExit", "terminalOutput", "releaseTerminal"]);
  await done(conn);
});

test("notifications arrive in order, all before the response that follows them", async () => {
  const { conn, client, sessionId } = await connect();
  const n = 5000;
  const result = await conn.prompt({ sessionId, prompt: text(`burst ${n}`) });
  assert.equal(result.stopReason, "end_turn");
  assert.equal(client.updates.length, n);
  for (let i = 0; i < n; i++) assert.equal(client.updates[i], String(i));
  client.updates.length = 0;
  const again = await conn.prompt({ sessionId, prompt: text(`burst-nowait ${n}`) });
  assert.equal(again.stopReason, "end_turn");
  assert.equal(client.updates.length, n);
  for (let i = 0; i < n; i++) assert.equal(client.updates[i], String(i));
  await done(conn);
});

test("async notification handlers run one at a time, in order", async () => {
  let running = 0;
  let maxRunning = 0;
  const seen = [];
  const client = makeClient({
    async sessionUpdate(params) {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((resolve) => setImmediate(resolve));
      seen.push(params.update.content.text);
      running--;
    },
  });
  const { conn, sessionId } = await connect(client);
  await conn.prompt({ sessionId, prompt: text("burst 200") });
  assert.equal(maxRunning, 1);
  assert.deepEqual(seen, Array.from({ length: 200 }, (_, i) => String(i)));
  await done(conn);
});

test("handler failures: throw gives -32603, RequestError goes out as itself, the agent lives on", async () => {
  const { conn, sessionId } = await connect();
  for (const prompt of ["throw-sync", "reject", "throw-string"]) {
    await assert.rejects(conn.prompt({ sessionId, prompt: text(prompt) }), (error) => {
      assert.ok(error instanceof RequestError);
      assert.equal(error.code, -32603);
      return true;
    });
  }
  await assert.rejects(conn.prompt({ sessionId, prompt: text("throw-request-error") }), (error) => {
    assert.equal(error.code, -32042);
    assert.equal(error.message, "custom failure");
    assert.deepEqual(error.data, { detail: 7 });
    return true;
  });
  assert.equal((await conn.prompt({ sessionId, prompt: text("echo") })).stopReason, "end_turn");
  await done(conn);
});

test("client handler failures reach the agent as errors", async (t) => {
  const client = makeClient({
    readTextFile() {
      throw new Error("client boom");
    },
  });
  const dir = scratchDir(t);
  const { conn, sessionId } = await connect(client);
  // The agent's readTextFile rejects; its prompt handler rethrows as -32603.
  await assert.rejects(conn.prompt({ sessionId, prompt: text(`client-methods ${dir}`) }), { code: -32603 });
  await done(conn);
});

test("validation: outbound params are refused, inbound bad params are -32602, unknown methods -32601", async () => {
  const { conn, client, sessionId } = await connect();
  // Outbound (client side): refused before sending.
  await assert.rejects(conn.newSession({ cwd: 42 }), (error) => error instanceof RequestError && error.code === -32602);
  await assert.rejects(conn.prompt({ sessionId }), { code: -32602 });
  // Outbound (agent side).
  await conn.prompt({ sessionId, prompt: text("bad-outbound") });
  assert.deepEqual(JSON.parse(client.updates.at(-1)), { update: -32602, read: -32602 });
  await done(conn);

  // Inbound: a plain JSON-RPC client sends what the schema forbids.
  const raw = new Connection(() => null, () => {}, spawnStream(process.execPath, [AGENT]));
  await assert.rejects(raw.sendRequest("session/new", { cwd: 42 }), { code: -32602 });
  await assert.rejects(raw.sendRequest("session/prompt", { sessionId: "s" }), { code: -32602 });
  await assert.rejects(raw.sendRequest("no/such_method", {}), { code: -32601 });
  await assert.rejects(raw.sendRequest("_test.unknown", {}), { code: -32601 });
  const ok = await raw.sendRequest("session/new", { cwd: "/tmp", mcpServers: [] });
  assert.equal(typeof ok.sessionId, "string");
  raw.close();
  await raw.closed;
});

test("cancellation, client -> agent: cancelPendingRequest rejects -32800 and aborts the agent's signal", async () => {
  let waitingId;
  let aborted;
  const abortedSeen = new Promise((resolve) => (aborted = resolve));
  const raw = new Connection(
    () => null,
    (method, params) => {
      if (method === "session/update" && params.update.content.text === "waiting") {
        assert.equal(raw.cancelPendingRequest(waitingId), true);
      }
      if (method === "_test.aborted") aborted(params);
    },
    spawnStream(process.execPath, [AGENT]),
  );
  const { id, promise } = raw.sendRequestWithId("session/prompt", { sessionId: "s", prompt: text("wait-cancel") });
  waitingId = id;
  await assert.rejects(promise, { code: -32800 });
  assert.deepEqual(await abortedSeen, { code: -32800 });
  assert.equal(raw.cancelPendingRequest(waitingId), false);
  raw.close();
  await raw.closed;
});

test("cancellation, agent -> client: $/cancel_request aborts the client handler's signal", async () => {
  let conn;
  let abortReason;
  const client = makeClient({
    async requestPermission(params, context) {
      const aborted = new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
      await conn.extNotification("_test.got-permission", {});
      await aborted;
      abortReason = context.signal.reason;
      return { outcome: { outcome: "cancelled" } };
    },
  });
  conn = new ClientSideConnection(() => client, spawnStream(process.execPath, [RAW_AGENT]));
  await conn.initialize({ protocolVersion: 1 });
  const result = await conn.prompt({ sessionId: "s", prompt: text("go") });
  assert.equal(result.stopReason, "cancelled");
  assert.equal(abortReason.code, -32800);
  await done(conn);
});

test("ClientSideConnection.cancel answers pending permission requests `cancelled`", async () => {
  let conn;
  let sessionId;
  let signal = null;
  const client = makeClient({
    requestPermission(params, context) {
      signal = context.signal;
      conn.cancel({ sessionId });
      // This handler never answers by itself.
      return new Promise(() => {});
    },
  });
  ({ conn, sessionId } = await connect(client));
  // The agent's requestPermission resolves (with "cancelled"): the turn ends normally.
  const result = await conn.prompt({ sessionId, prompt: text("ask-then-wait") });
  assert.equal(result.stopReason, "end_turn");
  // The engine answered it and told the handler to stop.
  assert.equal(signal.aborted, true);
  assert.equal(signal.reason.code, -32800);
  await done(conn);
});

test("peer crash: pending requests reject, closed resolves, signal aborts", async () => {
  const { conn, client, sessionId } = await connect();
  await assert.rejects(conn.prompt({ sessionId, prompt: text("crash") }), (error) => {
    assert.ok(error instanceof RequestError);
    assert.ok(error.isConnectionClosed());
    assert.equal(error.message, "ACP connection closed");
    return true;
  });
  await conn.closed;
  assert.equal(conn.signal.aborted, true);
  assert.deepEqual(client.updates, ["about to crash"]);
  await assert.rejects(conn.prompt({ sessionId, prompt: text("echo") }), { message: "ACP connection closed" });
  await assert.rejects(conn.cancel({ sessionId }), { message: "ACP connection closed" });
});

test("close rejects every pending promise and aborts in-flight handlers", async () => {
  let handlerSignal;
  let entered;
  const inHandler = new Promise((resolve) => (entered = resolve));
  const client = makeClient({
    requestPermission(params, context) {
      handlerSignal = context.signal;
      entered();
      return new Promise(() => {});
    },
  });
  const { conn, sessionId } = await connect(client);
  const pending = conn.prompt({ sessionId, prompt: text("ask-then-wait") });
  await inHandler;
  conn.close();
  await assert.rejects(pending, { message: "ACP connection closed" });
  await conn.closed;
  assert.equal(handlerSignal.aborted, true);
});

function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], ...options });
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, child }));
    if (options.input !== undefined) child.stdin.end(options.input);
  });
}

test("a client script exits by itself once its connection is closed", async () => {
  const { code, signal, stdout } = await run(process.execPath, [EXIT_CLIENT, "close", AGENT], { input: "" });
  assert.equal(signal, null);
  assert.equal(code, 0);
  assert.equal(stdout, "closed true\n");
});

test("a client script exits by itself when its agent is gone", async () => {
  const { code, signal, stdout } = await run(process.execPath, [EXIT_CLIENT, "peer-gone", AGENT], { input: "" });
  assert.equal(signal, null);
  assert.equal(code, 0);
  assert.equal(stdout, "prompt rejected -32099\nclosed true\n");
});

test("an agent on stdio answers and exits by itself at EOF", async () => {
  const child = spawn(process.execPath, [AGENT], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  const lines = [];
  let buffered = "";
  let gotBoth;
  const both = new Promise((resolve) => (gotBoth = resolve));
  child.stdout.on("data", (chunk) => {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      lines.push(JSON.parse(buffered.slice(0, newline)));
      buffered = buffered.slice(newline + 1);
      if (lines.length === 2) gotBoth();
    }
  });
  child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n');
  child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n');
  await both;
  child.stdin.end();
  assert.deepEqual(await exited, { code: 0, signal: null });
  assert.equal(lines[0].id, 1);
  assert.equal(lines[0].result.protocolVersion, 1);
  assert.equal(lines[1].id, 2);
  assert.equal(typeof lines[1].result.sessionId, "string");
});

/** A session with the test agent, spawned by the test, over its pipes as
 * Web Streams; `end()` closes the connection and the agent's stdin and
 * waits for the agent to exit. */
async function webStreamsSession(client) {
  const child = spawn(process.execPath, [AGENT], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("close", (code) => resolve(code)));
  const conn = new ClientSideConnection(
    () => client,
    ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)),
  );
  await conn.initialize({ protocolVersion: 1 });
  const { sessionId } = await conn.newSession({ cwd: "/tmp", mcpServers: [] });
  const end = async () => {
    conn.close();
    await conn.closed;
    // The connection leaves the caller's output open (as the official SDK
    // does); ending the child's stdin is the caller's, and the agent exits.
    child.stdin.end();
    assert.equal(await exited, 0);
  };
  return { conn, sessionId, end };
}

test("ndJsonStream over Web Streams (a child process's pipes)", async () => {
  const client = makeClient();
  const { conn, sessionId, end } = await webStreamsSession(client);
  await conn.prompt({ sessionId, prompt: text("burst 1000") });
  assert.equal(client.updates.length, 1000);
  assert.equal(client.updates[999], "999");
  await end();
});

test("ndJsonStream over Web Streams: a slow notification handler holds reading, in order", async () => {
  const handled = [];
  let busy = false;
  const client = makeClient({
    async sessionUpdate(params) {
      // One handler at a time, each taking a turn of the loop.
      assert.equal(busy, false);
      busy = true;
      await new Promise((resolve) => setImmediate(resolve));
      handled.push(params.update.content.text);
      busy = false;
    },
  });
  const { conn, sessionId, end } = await webStreamsSession(client);
  await conn.prompt({ sessionId, prompt: text("burst-nowait 500") });
  // The answer came after every update was handled, in the agent's order.
  assert.deepEqual(handled, Array.from({ length: 500 }, (_, i) => String(i)));
  await end();
});

test("ndJsonStream's messages: a connection runs over a tap of them (a logging proxy)", async () => {
  const child = spawn(process.execPath, [AGENT], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("close", (code) => resolve(code)));
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const seen = [];
  const tap = (direction) =>
    new TransformStream({
      transform(message, controller) {
        seen.push([direction, message.method ?? (message.error ? "error" : "result")]);
        controller.enqueue(message);
      },
    });
  const toAgent = tap("out");
  toAgent.readable.pipeTo(stream.writable);
  const client = makeClient();
  const conn = new ClientSideConnection(() => client, {
    readable: stream.readable.pipeThrough(tap("in")),
    writable: toAgent.writable,
  });
  await conn.initialize({ protocolVersion: 1 });
  const { sessionId } = await conn.newSession({ cwd: "/tmp", mcpServers: [] });
  await conn.prompt({ sessionId, prompt: text("burst 3") });
  assert.deepEqual(client.updates, ["0", "1", "2"]);
  assert.deepEqual(seen.slice(0, 4), [
    ["out", "initialize"],
    ["in", "result"],
    ["out", "session/new"],
    ["in", "result"],
  ]);
  assert.equal(seen.filter(([direction, method]) => direction === "in" && method === "session/update").length, 3);
  conn.close();
  await conn.closed;
  child.stdin.end();
  assert.equal(await exited, 0);
});

test("ndJsonStream's messages: a line that is not a JSON object is answered and skipped", async () => {
  const written = [];
  const output = new WritableStream({ write: (chunk) => written.push(new TextDecoder().decode(chunk)) });
  const lines = ['{"jsonrpc":"2.0","method":"a"}', "nonsense", "[1]", "7", '{"jsonrpc":"2.0","method":"b"}'];
  const input = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(lines.join("\n")));
      controller.close();
    },
  });
  const messages = [];
  for await (const message of ndJsonStream(output, input).readable) messages.push(message.method);
  assert.deepEqual(messages, ["a", "b"]);
  const answers = written.join("").trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(
    answers.map((answer) => [answer.id, answer.error.code]),
    [[null, -32700], [null, -32600], [null, -32600]],
  );
});

test("an official-SDK style message stream ({readable, writable} of objects)", async () => {
  // In-memory JSON-RPC peer written by hand: answers initialize.
  const toPeer = new TransformStream();
  const fromPeer = new TransformStream();
  const peerWriter = fromPeer.writable.getWriter();
  (async () => {
    for await (const message of toPeer.readable) {
      if (message.method === "initialize") {
        await peerWriter.write({ jsonrpc: "2.0", id: message.id, result: { protocolVersion: 1 } });
        await peerWriter.close();
      }
    }
  })();
  const conn = new ClientSideConnection(() => makeClient(), { writable: toPeer.writable, readable: fromPeer.readable });
  const result = await conn.initialize({ protocolVersion: 1 });
  assert.equal(result.protocolVersion, 1);
  await conn.closed;
});

test("a handler sees the peer's request id, and its cancellation names it, as in the official SDK", async () => {
  // A hand-written peer with an id of its own choosing (a string; the engine's
  // token for the request is a number of ours).
  const toPeer = new TransformStream();
  const fromPeer = new TransformStream();
  const peer = fromPeer.writable.getWriter();
  const seen = {};
  let started;
  const handlerStarted = new Promise((resolve) => (started = resolve));
  const conn = new Connection(
    async (method, params, context) => {
      seen.requestId = context.requestId;
      const aborted = new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
      started();
      await aborted;
      seen.reason = context.signal.reason;
      const error = new Error("stopped");
      error.name = "AbortError";
      throw error;
    },
    () => {},
    { writable: toPeer.writable, readable: fromPeer.readable },
  );
  const replies = toPeer.readable.getReader();
  await peer.write({ jsonrpc: "2.0", id: "perm-7", method: "_test/wait", params: {} });
  await handlerStarted;
  await peer.write({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: "perm-7" } });
  const { value: reply } = await replies.read();
  assert.equal(seen.requestId, "perm-7");
  assert.ok(seen.reason instanceof RequestError);
  assert.deepEqual([seen.reason.code, seen.reason.data], [-32800, { requestId: "perm-7" }]);
  // The AbortError is answered with the signal's reason, on the wire too.
  assert.equal(reply.id, "perm-7");
  assert.deepEqual([reply.error.code, reply.error.data], [-32800, { requestId: "perm-7" }]);
  await peer.close();
  conn.close();
  await conn.closed;
});

test("a request and its $/cancel_request in one read start its handler, whose answer is sent, as in the official SDK", async () => {
  // The peer writes both lines at once, then reports the answer it got back
  // as a notification. The official TypeScript SDK starts every request's
  // handler as it reads it (the engine does not withdraw the request here,
  // as it does for Python).
  const peerScript = `
    const request = {jsonrpc: "2.0", id: 5, method: "_test/slow", params: {}};
    const cancel = {jsonrpc: "2.0", method: "$/cancel_request", params: {requestId: 5}};
    process.stdout.write(JSON.stringify(request) + "\\n" + JSON.stringify(cancel) + "\\n");
    let buffered = "";
    process.stdin.on("data", (data) => {
      buffered += data;
      const end = buffered.indexOf("\\n");
      if (end < 0) return;
      const got = JSON.parse(buffered.slice(0, end));
      process.stdout.write(JSON.stringify({jsonrpc: "2.0", method: "_test/got", params: got}) + "\\n");
    });`;
  let started = false;
  let report;
  const reported = new Promise((resolve) => (report = resolve));
  const conn = new Connection(
    async (method, params, context) => {
      started = true;
      await new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
      return { partial: true };
    },
    (method, params) => report(params),
    spawnStream(process.execPath, ["-e", peerScript]),
  );
  const got = await reported;
  assert.equal(started, true);
  assert.deepEqual(got, { jsonrpc: "2.0", id: 5, result: { partial: true } });
  conn.close();
  await conn.closed;
});

test("RequestError factories, toResult, toErrorResponse", () => {
  const cases = [
    [RequestError.parseError(), -32700],
    [RequestError.invalidRequest(), -32600],
    [RequestError.methodNotFound("x"), -32601],
    [RequestError.invalidParams({ a: 1 }, "bad"), -32602],
    [RequestError.internalError(), -32603],
    [RequestError.requestCancelled(), -32800],
    [RequestError.authRequired(), -32000],
    [RequestError.resourceNotFound("file:///x"), -32002],
  ];
  for (const [error, code] of cases) {
    assert.ok(error instanceof Error);
    assert.ok(error instanceof RequestError);
    assert.equal(error.code, code);
  }
  assert.deepEqual(RequestError.methodNotFound("x").data, { method: "x" });
  assert.equal(RequestError.invalidParams(undefined, "bad").message, "Invalid params: bad");
  const error = new RequestError(-32042, "custom", { x: 1 });
  assert.deepEqual(error.toErrorResponse(), { code: -32042, message: "custom", data: { x: 1 } });
  assert.deepEqual(error.toResult(), { error: { code: -32042, message: "custom", data: { x: 1 } } });
  assert.deepEqual(RequestError.internalError().toErrorResponse(), { code: -32603, message: "Internal error" });
});

test("generic Connection: requests, notifications and cancel notifications both ways", async () => {
  // A raw peer that echoes requests and notifications back.
  const peer = path.join(here, "peers", "raw-echo.mjs");
  const notes = [];
  let gotEcho;
  const echoed = new Promise((resolve) => (gotEcho = resolve));
  let waitingId;
  let gotAborted;
  const abortedSeen = new Promise((resolve) => (gotAborted = resolve));
  const conn = new Connection(
    (method, params) => ({ served: method, params }),
    (method, params) => {
      notes.push([method, params]);
      if (method === "echoed") gotEcho();
      if (method === "waiting") conn.sendCancelRequestNotification({ requestId: waitingId });
      if (method === "aborted") gotAborted(params);
    },
    spawnStream(process.execPath, [peer]),
  );
  assert.deepEqual(await conn.sendRequest("anything", [1, 2]), { method: "anything", params: [1, 2] });
  assert.equal(await conn.sendRequest("no-params"), null);
  // The peer calls us back and returns what we answered.
  assert.deepEqual(await conn.sendRequest("call-me", { x: 1 }), { served: "back", params: { x: 1 } });
  await conn.sendNotification("note", { y: 2 });
  await echoed;
  assert.deepEqual(notes, [["echoed", { note: { y: 2 } }]]);
  await assert.rejects(conn.sendRequest("fail"), { code: -32099, message: "nope" });
  // $/cancel_request sent by hand: the peer's handler is aborted and its
  // answer, sent when it returns, is the result.
  const { id, promise } = conn.sendRequestWithId("wait", {});
  waitingId = id;
  assert.deepEqual(await promise, { cancelled: true });
  assert.deepEqual(await abortedSeen, { aborted: true });
  conn.close();
  await conn.closed;
});

test("a notification handler may await its own requests; the peer's requests are served meanwhile", async () => {
  // The raw echo peer answers "note" with an "echoed" notification, echoes
  // requests, and answers "call-me" by calling our "back" first.
  const peer = path.join(here, "peers", "raw-echo.mjs");
  const seen = [];
  let done;
  const bothDone = new Promise((resolve) => (done = resolve));
  const conn = new Connection(
    (method, params) => ({ served: method, params }),
    async (method, params) => {
      if (method !== "echoed") return;
      const which = params.note.which;
      try {
        seen.push(`start ${which}`);
        seen.push(await conn.sendRequest("anything", { which }));
        seen.push(await conn.sendRequest("call-me", { which }));
        seen.push(`end ${which}`);
      } catch (error) {
        seen.push(`${which} failed: ${error}`);
      } finally {
        if (which === "b") done();
      }
    },
    spawnStream(process.execPath, [peer]),
  );
  await conn.sendNotification("note", { which: "a" });
  await conn.sendNotification("note", { which: "b" });
  await bothDone;
  // One handler at a time, each one's answers inside it.
  assert.deepEqual(seen, [
    "start a",
    { method: "anything", params: { which: "a" } },
    { served: "back", params: { which: "a" } },
    "end a",
    "start b",
    { method: "anything", params: { which: "b" } },
    { served: "back", params: { which: "b" } },
    "end b",
  ]);
  conn.close();
  await conn.closed;
});
