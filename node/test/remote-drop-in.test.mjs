// The official SDK's remote transports on our package
// (`experimental/{http-client,ws-client,server,node}`): interop/ts's
// official agent server and client programs, with only their SDK import
// lines changed, against each other and against the official SDK 2.4.0's
// over WebSocket and Streamable HTTP; and the pieces a program meets on its
// own (options, cookies, limits, close).
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { promisify } from "node:util";

import * as acp from "acp-engine";
import { createHttpStream, MemoryAcpCookieStore } from "acp-engine/experimental/http-client";
import { AcpServer, DEFAULT_MAX_ID_LENGTH } from "acp-engine/experimental/server";
import { createNodeHttpHandler } from "acp-engine/experimental/node";
import { createWebSocketStream } from "acp-engine/experimental/ws-client";

const here = dirname(fileURLToPath(import.meta.url));
const root = process.env.ACP_REPO_ROOT ?? join(here, "..", "..");
const INTEROP = join(root, "interop");
const TS = join(INTEROP, "ts");
const SDK = join(TS, "node_modules", "@agentclientprotocol", "sdk");

// interop/ts's layout, rebuilt under the test so that `acp-engine` resolves
// to the installed package: the programs, ../news.json, and the modules they
// load by path (the official SDK's zod schema, `ws`).
const programs = mkdtempSync(join(here, ".remote-programs-"));
after(() => rmSync(programs, { recursive: true, force: true }));
const oursDir = join(programs, "ts");
mkdirSync(join(oursDir, "node_modules", "@agentclientprotocol"), { recursive: true });
copyFileSync(join(INTEROP, "news.json"), join(programs, "news.json"));
symlinkSync(SDK, join(oursDir, "node_modules", "@agentclientprotocol", "sdk"));
symlinkSync(join(TS, "node_modules", "ws"), join(oursDir, "node_modules", "ws"));

/** An interop/ts program on our package: its SDK import lines changed (static and dynamic), nothing else. */
function ours(script) {
  assert.doesNotThrow(() => readFileSync(join(SDK, "package.json")), `the official SDK is not installed: run interop/setup.sh`);
  const text = readFileSync(join(TS, script), "utf8");
  const rewritten = text.replaceAll('"@agentclientprotocol/sdk', '"acp-engine');
  const before = text.split("\n");
  const changed = rewritten.split("\n").filter((line, i) => line !== before[i]);
  assert.ok(changed.every((line) => /\bimport\b/.test(line) || /^\s*"acp-engine\/[\w/-]+"\s*$/.test(line)), `only import lines change in ${script}`);
  writeFileSync(join(oursDir, script), rewritten);
  return join(oursDir, script);
}
for (const helper of ["remote-stream.mjs", "trace.mjs"]) ours(helper);

/** `agent.mjs --serve`: its two URLs (WebSocket, then HTTP) once it listens. */
async function startServer(program) {
  const child = spawn(process.execPath, [program, "--serve", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "pipe"] });
  after(() => child.kill("SIGKILL"));
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk) => (err += chunk));
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const urls = out.split("\n").filter(Boolean);
      if (urls.length >= 2) resolve({ ws: urls[0], http: urls[1] });
    });
    child.on("exit", (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
}

async function drive(client, url) {
  const { stdout } = await promisify(execFile)(process.execPath, [client, url], {
    timeout: 60_000,
    env: { ...process.env, ACP_INTEROP_TRACE: "" },
  });
  return stdout.trim().split("\n").at(-1);
}

const officialServer = startServer(join(TS, "agent.mjs"));
const oursServer = startServer(ours("agent.mjs"));
const oursClient = ours("client.mjs");
const officialClient = join(TS, "client.mjs");

for (const transport of ["ws", "http"]) {
  const name = transport === "ws" ? "WebSocket" : "Streamable HTTP";
  test(`the official client program (${name}) -> the official agent program served by our AcpServer`, async () => {
    assert.equal(await drive(officialClient, (await oursServer)[transport]), "interop ok");
  });
  test(`the official client program on our package (${name}) -> the official AcpServer`, async () => {
    assert.equal(await drive(oursClient, (await officialServer)[transport]), "interop ok");
  });
  test(`both programs on our package (${name})`, async () => {
    assert.equal(await drive(oursClient, (await oursServer)[transport]), "interop ok");
  });
}

/** An echo agent app: each connection says which number it is. */
function echoAgent(counter) {
  return acp
    .agent({ name: "echo" })
    .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {} }))
    .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `s${++counter.made}` }))
    .onRequest(acp.methods.agent.session.prompt, () => ({ stopReason: "end_turn" }));
}

/** A Node http server around `server`, recording the request headers it gets. */
async function listen(server, seen = []) {
  const handler = createNodeHttpHandler(server);
  const httpServer = http.createServer((req, res) => {
    seen.push(req.headers);
    handler(req, res);
  });
  await new Promise((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  after(() => httpServer.close());
  return `http://127.0.0.1:${httpServer.address().port}/acp`;
}

test("createAgent makes an agent per connection; headers and a cookie store's cookies reach the server", async () => {
  const counter = { made: 0 };
  let agents = 0;
  const server = new AcpServer({ createAgent: () => (agents++, echoAgent(counter)) });
  const seen = [];
  const url = await listen(server, seen);
  const cookieStore = new MemoryAcpCookieStore();
  cookieStore.store(new Headers([["set-cookie", "affinity=b2; Path=/; HttpOnly"]]));
  for (let turn = 1; turn <= 2; turn++) {
    await acp.client().connectWith(createHttpStream(url, { headers: { "x-api-key": "k1" }, cookieStore }), async (agent) => {
      await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] });
      assert.equal(sessionId, `s${turn}`);
    });
  }
  assert.equal(agents, 2, "one agent per connection");
  assert.ok(seen.length >= 4);
  assert.ok(seen.every((headers) => headers["x-api-key"] === "k1" && headers.cookie === "affinity=b2"), JSON.stringify(seen));
  await server.close();
});

test("maxIdLength: a longer session id is answered 400 (the official server's rule)", async () => {
  assert.equal(DEFAULT_MAX_ID_LENGTH, 1024);
  const server = new AcpServer({ createAgent: () => echoAgent({ made: 0 }), maxIdLength: 8 });
  const url = await listen(server);
  const post = (headers, body) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body });
  const opened = await post({}, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}');
  assert.equal(opened.status, 200);
  const connection = opened.headers.get("acp-connection-id");
  const inSession = (session) =>
    post({ "acp-connection-id": connection, "acp-session-id": session }, `{"jsonrpc":"2.0","id":1,"method":"session/cancel","params":{"sessionId":"${session}"}}`);
  assert.equal((await inSession("abcdefgh")).status, 202);
  const refused = await inSession("abcdefghi");
  assert.equal(refused.status, 400);
  assert.match(await refused.text(), /Session ID exceeds maxIdLength \(8\)/);
  await server.close();
});

test("a client stream refuses the other transport's URL", () => {
  assert.throws(() => createHttpStream("ws://127.0.0.1:1/acp"), /expected a http: or https: URL/);
  assert.throws(() => createWebSocketStream("http://127.0.0.1:1/acp"), /expected a ws: or wss: URL/);
});

const INITIALIZE = { protocolVersion: 1, clientCapabilities: {} };

for (const [name, create, transport] of [
  ["createWebSocketStream", createWebSocketStream, "ws"],
  ["createHttpStream", createHttpStream, "http"],
]) {
  test(`${name}'s messages by hand reach the official AcpServer, and a connection then runs over a tap of them`, async () => {
    const stream = create((await officialServer)[transport]);
    const writer = stream.writable.getWriter();
    const reader = stream.readable.getReader();
    await writer.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE });
    const { value: answer } = await reader.read();
    assert.equal(answer.id, 1);
    assert.equal(answer.result.protocolVersion, 1);
    writer.releaseLock();
    reader.releaseLock();

    const seen = [];
    const tap = new TransformStream({
      transform(message, controller) {
        seen.push(message);
        controller.enqueue(message);
      },
    });
    const toAgent = new TransformStream();
    toAgent.readable.pipeTo(stream.writable).catch(() => {});
    const tapped = { readable: stream.readable.pipeThrough(tap), writable: toAgent.writable };
    await acp.client().connectWith(tapped, async (agent) => {
      const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] });
      assert.ok(sessionId);
      assert.equal(seen.at(-1).result.sessionId, sessionId);
    });
  });
}

test("createWebSocketStream by hand: a refused dial fails reads and writes with the reason", async () => {
  const stream = createWebSocketStream("ws://127.0.0.1:1/acp");
  await assert.rejects(stream.readable.getReader().read(), /cannot connect to ws:\/\/127.0.0.1:1\/acp/);
  await assert.rejects(stream.writable.getWriter().write({ jsonrpc: "2.0", method: "x" }), /cannot connect/);
});

/** A `ws` server that sets a cookie on the handshake and answers `initialize`; what each handshake sent, and its closes. */
async function cookieServer() {
  const { WebSocketServer } = createRequire(join(TS, "package.json"))("ws");
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  const seen = { cookies: [], closes: 0 };
  server.on("headers", (headers) => headers.push("Set-Cookie: affinity=b7; Path=/; HttpOnly"));
  server.on("connection", (socket, request) => {
    seen.cookies.push(request.headers.cookie);
    socket.on("close", () => seen.closes++);
    socket.on("message", (data) => {
      const message = JSON.parse(String(data));
      if (message.method === "initialize") socket.send(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { protocolVersion: 1 } }));
    });
  });
  await new Promise((resolve) => server.on("listening", resolve));
  after(() => server.close());
  return { url: `ws://127.0.0.1:${server.address().port}/acp`, seen };
}

const storedCookie = (store) => {
  const headers = new Headers();
  store.apply(headers);
  return headers.get("cookie");
};

test("createWebSocketStream: the handshake's cookies go into the cookie store, by hand and under a connection; `omit` leaves it alone", async () => {
  const { url, seen } = await cookieServer();
  const byHand = new MemoryAcpCookieStore();
  const stream = createWebSocketStream(url, { cookieStore: byHand });
  const writer = stream.writable.getWriter();
  await writer.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE });
  assert.equal((await stream.readable.getReader().read()).value.id, 1);
  assert.equal(storedCookie(byHand), "affinity=b7");
  await writer.close();

  const underConnection = new MemoryAcpCookieStore();
  await acp.client().connectWith(createWebSocketStream(url, { cookieStore: underConnection }), async (agent) => {
    await agent.request(acp.methods.agent.initialize, INITIALIZE);
  });
  assert.equal(storedCookie(underConnection), "affinity=b7");
  // The next stream with that store sends it back.
  await acp.client().connectWith(createWebSocketStream(url, { cookieStore: underConnection }), async (agent) => {
    await agent.request(acp.methods.agent.initialize, INITIALIZE);
  });

  const omitted = new MemoryAcpCookieStore();
  omitted.store(new Headers([["set-cookie", "mine=1"]]));
  await acp.client().connectWith(createWebSocketStream(url, { cookieStore: omitted, cookies: "omit" }), async (agent) => {
    await agent.request(acp.methods.agent.initialize, INITIALIZE);
  });
  assert.equal(storedCookie(omitted), "mine=1");
  assert.deepEqual(seen.cookies, [undefined, undefined, "affinity=b7", undefined]);
});

test("createWebSocketStream by hand: closing the writable closes the WebSocket and ends the readable", async () => {
  const { url, seen } = await cookieServer();
  const stream = createWebSocketStream(url);
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  await writer.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE });
  assert.equal((await reader.read()).value.id, 1);
  await writer.close();
  assert.deepEqual(await reader.read(), { value: undefined, done: true });
  for (let waited = 0; seen.closes === 0 && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(seen.closes, 1, "the server saw the WebSocket close");
});

test("createWebSocketStream by hand: closing before the handshake ends stops the dial and ends the readable", async () => {
  // A server that takes the TCP connection and never answers the upgrade.
  let closedByClient;
  const accepted = new Promise((resolve) => {
    closedByClient = new Promise((closed) => {
      const server = net.createServer((socket) => {
        socket.resume(); // read (and drop) the upgrade request, so that its end is seen
        socket.on("close", closed);
        resolve();
      });
      server.listen(0, "127.0.0.1", () => {
        after(() => server.close());
        const stream = createWebSocketStream(`ws://127.0.0.1:${server.address().port}/acp`);
        silent.stream = stream;
        silent.reader = stream.readable.getReader();
      });
    });
  });
  const silent = {};
  await accepted;
  await silent.stream.writable.getWriter().close();
  assert.deepEqual(await silent.reader.read(), { value: undefined, done: true });
  // Stopped, not left to the 10 s connect timeout.
  const stopped = await Promise.race([
    closedByClient.then(() => true),
    new Promise((resolve) => setTimeout(resolve, 5_000, false)),
  ]);
  assert.ok(stopped, "the server's connection was closed when the stream was");
});

test("a server that is gone fails the client's pending request with the reason", async () => {
  const connection = acp.client().connect(createWebSocketStream("ws://127.0.0.1:1/acp"));
  await assert.rejects(connection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} }), acp.RequestError);
  await connection.closed;
});

test("close() ends the server's connections, failing what is pending", async () => {
  const hang = acp
    .agent()
    .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: 1 }))
    .onRequest(acp.methods.agent.session.new, () => new Promise(() => {}));
  const server = new AcpServer({ agent: hang });
  const url = await listen(server);
  const connection = acp.client().connect(createHttpStream(url));
  await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  // Its failure is expected from the moment it is sent (the server may answer it while closing).
  const failed = assert.rejects(
    connection.agent.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] }),
    acp.RequestError,
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  await server.close();
  await failed;
  await connection.closed;
  const closed = await server.handleRequest(new Request(url, { method: "POST", body: "{}" }));
  assert.equal(closed.status, 503);
});

test("the protocol's JSON Schemas are exported as the official package exports them", async () => {
  for (const [version, file] of [["v1", "schema.json"], ["v1", "schema.unstable.json"], ["v2", "schema.json"], ["v2", "schema.unstable.json"]]) {
    const { default: schema } = await import(`acp-engine/schema/${version}/${file}`, { with: { type: "json" } });
    assert.equal(typeof schema.$defs, "object", `${version}/${file}`);
  }
});
