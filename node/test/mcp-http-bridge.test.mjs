// The MCP-over-ACP HTTP bridge (`McpOverAcpHttpBridge` in
// `acp-engine/experimental/mcp-http`), its listener and rules in the engine
// (core/src/mcp/http_bridge/). interop/ts's agent on the official bridge,
// which calls its client's servers with the official MCP client
// (`@modelcontextprotocol/client`) and plain POSTs, runs with only its SDK
// import lines changed; then the same HTTP requests go to the official bridge
// and ours, and every answer must be the same.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";

import * as acp from "acp-engine/unstable";
import { McpOverAcpHttpBridge, stripHeaderAnnotations } from "acp-engine/experimental/mcp-http";

import { ALL_PROGRESS, TS, official, ours, run } from "./mcp-programs.mjs";

const officialEntry = (entry) => pathToFileURL(createRequire(join(TS, "package.json")).resolve(`@agentclientprotocol/sdk/${entry}`));
const officialAcp = await import(officialEntry("unstable"));
const officialHttp = await import(officialEntry("experimental/mcp-http"));
// The official package declares stripHeaderAnnotations in mcp-http's types but exports it from no entry point.
const officialAnnotations = await import(new URL("header-annotations.js", officialEntry("experimental/mcp-http")).href);

test("official client -> official agent on the official bridge: the baseline", async () => {
  assert.equal((await run(official("mcp-over-acp-client.mjs"), official("mcp-http-agent.mjs"))).verdict, "mcp ok");
});

test("official client -> our agent: the MCP client and plain POSTs through our bridge, every progress event", async () => {
  const { words, verdict } = await run(official("mcp-over-acp-client.mjs"), ours("mcp-http-agent.mjs"));
  assert.equal(verdict, "mcp ok");
  assert.ok(words.includes(ALL_PROGRESS), words);
});

test("our client -> our agent", async () => {
  const { words, verdict } = await run(ours("mcp-over-acp-client.mjs"), ours("mcp-http-agent.mjs"));
  assert.equal(verdict, "mcp ok");
  assert.ok(words.includes(ALL_PROGRESS), words);
});

/** The server both bridges serve: echo, an inner error, a listed tool with a header annotation, and a wait. */
function handler(seen) {
  return async ({ method, params, signal }) => {
    if (method === "tools/list") {
      return { result: { tools: [{ name: "echo", inputSchema: { type: "object", properties: { p: { type: "string", "x-mcp-header": "P" } } } }] } };
    }
    if (params?.name === "wait") {
      await new Promise((resolve) => signal.addEventListener("abort", resolve));
      seen.push("aborted");
      throw signal.reason;
    }
    if (params?.name === "echo") return { result: { content: [{ type: "text", text: JSON.stringify(params.arguments ?? null) }] } };
    return { error: { code: -32602, message: `Unknown tool: ${params?.name}` } };
  };
}

/** An agent with a bridge and a client providing server "s", on one SDK, over in-memory streams. */
async function bridged(sdk, Bridge, options) {
  const toAgent = new TransformStream();
  const toClient = new TransformStream();
  const provider = new sdk.McpOverAcpProvider();
  const caller = new sdk.McpOverAcpCaller();
  const seen = [];
  const agentConnection = sdk
    .agent({ name: "a" })
    .onRequest(sdk.methods.agent.initialize, () => ({ protocolVersion: 1 }))
    .onNotification(sdk.methods.agent.mcp.message, caller.handleNotification)
    .connect(sdk.ndJsonStream(toClient.writable, toAgent.readable));
  const clientConnection = sdk
    .client({ name: "c" })
    .onRequest(sdk.methods.client.mcp.message, provider.handleRequest)
    .connect(sdk.ndJsonStream(toAgent.writable, toClient.readable));
  const registration = provider.registerServer(clientConnection.agent, { name: "s", serverId: "s", handler: handler(seen) });
  provider.registerServer(clientConnection.agent, { name: "t", serverId: "t", handler: handler(seen) });
  await clientConnection.agent.request(sdk.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const bridge = new Bridge(caller, options);
  const declarations = await bridge.adaptServers(agentConnection.client, [
    registration.declaration,
    { type: "acp", name: "t", serverId: "t" },
    { type: "acp", name: "gone", serverId: "gone" },
    { type: "stdio", name: "kept", command: "x", args: [], env: [] },
  ]);
  after(() => {
    agentConnection.close();
    clientConnection.close();
  });
  return { declarations, seen, close: () => agentConnection.close() };
}

const VERSION = "2026-07-28";
const META = { "io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {} };

/** A valid POST of `method` to a declaration, as an MCP client builds it. */
function post(declaration, method, params = {}) {
  const headers = {
    authorization: declaration.headers[0].value,
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": VERSION,
    "mcp-method": method,
  };
  if (typeof params.name === "string") headers["mcp-name"] = params.name;
  return { url: declaration.url, method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { ...params, _meta: META } }) };
}

/** What a response says: status, the headers a client acts on, and its messages. */
async function send(request) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    for (const one of [value].flat()) headers.append(name, one);
  }
  const response = await fetch(request.url, { method: request.method, headers, body: request.method === "GET" ? undefined : request.body });
  const text = await response.text();
  const type = response.headers.get("content-type");
  const messages = type === "text/event-stream" ? text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6))) : [JSON.parse(text)];
  return {
    status: response.status,
    type,
    allow: response.headers.get("allow"),
    authenticate: response.headers.get("www-authenticate"),
    // The official caller drops notifications handled after the answer: compare the answer.
    answer: messages.at(-1),
  };
}

/** Every case, as a function of one side's declarations (the same requests for both bridges). */
const CASES = {
  "a tool call": ([s]) => post(s, "tools/call", { name: "echo", arguments: { a: 1 } }),
  "a listed tool without its header annotation": ([s]) => post(s, "tools/list"),
  "an inner MCP error": ([s]) => post(s, "tools/call", { name: "nope" }),
  "a server no one registered": ([, , gone]) => post(gone, "tools/list"),
  "no token": ([s]) => ({ ...post(s, "tools/list"), headers: { ...post(s, "tools/list").headers, authorization: undefined } }),
  "another server's token": ([s, t]) => ({ ...post(s, "tools/list"), headers: { ...post(s, "tools/list").headers, authorization: t.headers[0].value } }),
  "an unknown route": ([s]) => ({ ...post(s, "tools/list"), url: s.url.replace(/mcp-[^/]*$/, "mcp-nope") }),
  "a noncanonical route": ([s]) => ({ ...post(s, "tools/list"), url: s.url.replace(/mcp-cw$/, "mcp-cx") }),
  GET: ([s]) => ({ ...post(s, "tools/list"), method: "GET" }),
  "JSON only accepted": ([s]) => withHeader(post(s, "tools/list"), "accept", "application/json"),
  "SSE refused by quality": ([s]) => withHeader(post(s, "tools/list"), "accept", "application/json, text/event-stream;q=0"),
  "a text body": ([s]) => withHeader(post(s, "tools/list"), "content-type", "text/plain"),
  "a foreign origin": ([s]) => withHeader(post(s, "tools/list"), "origin", "http://evil.example"),
  "a method header listing two values": ([s]) => withHeader(post(s, "tools/list"), "mcp-method", ["tools/list", "tools/list"]),
  "the method header differs": ([s]) => withHeader(post(s, "tools/list"), "mcp-method", "tools/call"),
  "the name header differs": ([s]) => withHeader(post(s, "tools/call", { name: "echo" }), "mcp-name", "other"),
  "a base64 name header": ([s]) => withHeader(post(s, "tools/call", { name: "echo" }), "mcp-name", "=?base64?ZWNobw==?="),
  "the version header differs": ([s]) => withHeader(post(s, "tools/list"), "mcp-protocol-version", "2025-06-18"),
  "another revision": ([s]) =>
    withHeader({ ...post(s, "tools/list"), body: post(s, "tools/list").body.replace(VERSION, "2025-06-18") }, "mcp-protocol-version", "2025-06-18"),
  "a mirrored parameter": ([s]) => withHeader(post(s, "tools/list"), "mcp-param-p", "x"),
  "not JSON": ([s]) => ({ ...post(s, "tools/list"), body: "{" }),
  "a batch": ([s]) => ({ ...post(s, "tools/list"), body: "[]" }),
  "a notification": ([s]) => ({ ...post(s, "tools/list"), body: '{"jsonrpc":"2.0","method":"tools/list"}' }),
  "no client capabilities": ([s]) => ({
    ...post(s, "tools/list"),
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list", params: { _meta: { "io.modelcontextprotocol/protocolVersion": VERSION } } }),
  }),
  "params not an object": ([s]) => ({ ...post(s, "tools/list"), body: '{"jsonrpc":"2.0","id":"x","method":"tools/list","params":[1]}' }),
  initialize: ([s]) => post(s, "initialize"),
  "a body over the limit": ([s]) => post(s, "tools/call", { name: "echo", arguments: { blob: "x".repeat(5000) } }),
};

function withHeader(request, name, value) {
  return { ...request, headers: { ...request.headers, [name]: value } };
}


test("every request gets the official bridge's answer: status, headers and message", async () => {
  const options = { maxRequestBodyBytes: 4096 };
  const official = await bridged(officialAcp, officialHttp.McpOverAcpHttpBridge, options);
  const mine = await bridged(acp, McpOverAcpHttpBridge, options);
  assert.deepEqual(mine.declarations[3], official.declarations[3], "other declarations are kept");
  assert.equal(mine.declarations[0].type, "http");
  assert.match(mine.declarations[0].url, /^http:\/\/127\.0\.0\.1:\d+\/mcp-cw$/);
  for (const [name, build] of Object.entries(CASES)) {
    const clean = (request) => ({ ...request, headers: Object.fromEntries(Object.entries(request.headers).filter(([, v]) => v !== undefined)) });
    const expected = await send(clean(build(official.declarations)));
    const got = await send(clean(build(mine.declarations)));
    assert.deepEqual(got, expected, name);
  }
});

test("a client that leaves cancels its request; the listener closes with its connection", async () => {
  const { declarations, seen, close } = await bridged(acp, McpOverAcpHttpBridge, { maxActiveRequests: 1 });
  const leaving = new AbortController();
  const request = post(declarations[0], "tools/call", { name: "wait" });
  const pending = fetch(request.url, { ...request, signal: leaving.signal }).catch((error) => error);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const refused = await send(post(declarations[0], "tools/list"));
  assert.equal(refused.status, 429);
  assert.equal(refused.answer.error.code, acp.McpBindingErrorCode.resourceLimitExceeded);
  leaving.abort();
  await pending;
  while (!seen.includes("aborted")) await new Promise((resolve) => setTimeout(resolve, 5));
  let answered;
  for (let i = 0; i < 100 && answered?.status !== 200; i++) answered = await send(post(declarations[0], "tools/list"));
  assert.equal(answered.status, 200, "the admission was freed");
  close();
  let failure;
  for (let i = 0; i < 100 && failure === undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    failure = await send(post(declarations[0], "tools/list")).then(() => undefined, (error) => error);
  }
  assert.ok(failure instanceof TypeError, "nothing listens once the connection closed");
});

test("stripHeaderAnnotations and the options' checks match the official ones", () => {
  const listed = { tools: [{ name: "t", inputSchema: { "x-mcp-header": "A", properties: { "x-mcp-header": { "x-mcp-header": "B", default: { "x-mcp-header": 1 } } } } }] };
  assert.deepEqual(stripHeaderAnnotations(listed), officialAnnotations.stripHeaderAnnotations(listed));
  assert.deepEqual(stripHeaderAnnotations({ tools: 1 }), officialAnnotations.stripHeaderAnnotations({ tools: 1 }));
  const caller = new acp.McpOverAcpCaller();
  assert.throws(() => new McpOverAcpHttpBridge(caller, { maxActiveRequests: 0 }), RangeError);
  assert.throws(() => new McpOverAcpHttpBridge(caller, { maxBufferedResponseBytes: 1.5 }), RangeError);
});
