// MCP-over-ACP (`McpOverAcpProvider` / `McpOverAcpCaller` in `acp-engine/unstable`,
// `fromMcpServer` in `acp-engine/experimental/mcp-server`), the rules in the
// engine (core/src/mcp/). interop/ts's official MCP-over-ACP client (an
// `@modelcontextprotocol/server` McpServer and a handler of its own) and agent
// run with only their SDK import lines changed, against each other and the
// official ones; then the binding's edges in one process.
import assert from "node:assert/strict";
import { after, test } from "node:test";

import * as acp from "acp-engine/unstable";

import { ALL_PROGRESS, official, ours, run } from "./mcp-programs.mjs";

const officialClient = official("mcp-over-acp-client.mjs");
const officialAgent = official("mcp-over-acp-agent.mjs");
const oursClient = ours("mcp-over-acp-client.mjs");
const oursAgent = ours("mcp-over-acp-agent.mjs");

test("official client (MCP SDK server over ACP) -> official agent: the baseline", async () => {
  assert.equal((await run(officialClient, officialAgent)).verdict, "mcp ok");
});

test("our client (MCP SDK server over ACP) -> official agent", async () => {
  assert.equal((await run(oursClient, officialAgent)).verdict, "mcp ok");
});

test("official client -> our agent: every progress notification arrives, in order, before the answer", async () => {
  const { words, verdict } = await run(officialClient, oursAgent);
  assert.equal(verdict, "mcp ok");
  assert.ok(words.includes(ALL_PROGRESS), words);
});

test("our client -> our agent", async () => {
  const { words, verdict } = await run(oursClient, oursAgent);
  assert.equal(verdict, "mcp ok");
  assert.ok(words.includes(ALL_PROGRESS), words);
});

/** A client app providing `handler` as server "s" and an agent app calling it, over in-memory streams. */
async function connected(handler, options = {}) {
  const toAgent = new TransformStream();
  const toClient = new TransformStream();
  const provider = new acp.McpOverAcpProvider();
  const caller = new acp.McpOverAcpCaller();
  const agentConnection = acp
    .agent({ name: "a" })
    .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: 1 }))
    .onNotification(acp.methods.agent.mcp.message, caller.handleNotification)
    .connect(acp.ndJsonStream(toClient.writable, toAgent.readable));
  const clientConnection = acp
    .client({ name: "c" })
    .onRequest(acp.methods.client.mcp.message, provider.handleRequest)
    .connect(acp.ndJsonStream(toAgent.writable, toClient.readable));
  const registration = provider.registerServer(clientConnection.agent, { name: "s", serverId: "s", handler, ...options });
  await clientConnection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const call = (params = {}, requestOptions) => caller.request(agentConnection.client, "s", "tools/call", params, requestOptions);
  after(() => {
    agentConnection.close();
    clientConnection.close();
  });
  return { provider, caller, registration, call, agent: agentConnection.client, client: clientConnection.agent };
}

/** Resolves once `condition()` holds (polled; the test runner's timeout bounds it). */
async function until(condition) {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** A handler that waits for its signal, recording that it aborted. */
function waiting(seen) {
  return ({ signal }) =>
    new Promise((_, reject) => {
      signal.addEventListener("abort", () => {
        seen.push("aborted");
        reject(signal.reason);
      });
    });
}

test("the handler sees the caller's MCP meta; inner and outer failures map as the official SDK's", async () => {
  const contexts = [];
  const { call } = await connected((context) => {
    contexts.push(context);
    const name = context.params?.name;
    if (name === "refuse") throw new acp.McpProtocolError(-32001, "refused", { why: 1 });
    if (name === "crash") throw new Error("disk on fire");
    if (name === "both") return { result: 1, error: { code: 1, message: "m" } };
    return { result: { ok: true }, _meta: { carrier: 1 } };
  });
  assert.deepEqual(await call({ name: "fine" }), { result: { ok: true }, _meta: { carrier: 1 } });
  assert.equal(contexts[0].protocolVersion, acp.MCP_PROTOCOL_VERSION);
  assert.deepEqual(contexts[0].clientCapabilities, {});
  assert.equal(contexts[0].params._meta[acp.MCP_META_PROTOCOL_VERSION], "2026-07-28");
  assert.deepEqual(await call({ name: "refuse" }), { error: { code: -32001, message: "refused", data: { why: 1 } } });
  await assert.rejects(call({ name: "crash" }), (error) => {
    assert.equal(error.code, acp.McpBindingErrorCode.backendFailed);
    assert.deepEqual(error.data, { details: "disk on fire" });
    return true;
  });
  await assert.rejects(call({ name: "both" }), (error) => error.code === -33002 && /invalid outcome/.test(error.message));
});

test("cancelling a request aborts its handler and answers -32800; the slot is freed", async () => {
  const seen = [];
  const { call } = await connected(waiting(seen), { maxActiveRequests: 1 });
  const controller = new AbortController();
  const pending = call({}, { signal: controller.signal, requestId: "r1" });
  await new Promise((resolve) => setTimeout(resolve, 50));
  await assert.rejects(call({}, { requestId: "r2" }), (error) => error.code === acp.McpBindingErrorCode.resourceLimitExceeded);
  controller.abort();
  await assert.rejects(pending, (error) => error.code === -32800);
  // The caller's request is rejected at once; the handler hears of it as its cancellation arrives.
  await until(() => seen.length > 0);
  assert.deepEqual(seen, ["aborted"]);
  // The same id and the one slot are free again: the next request runs (and waits).
  let refused;
  call({}, { requestId: "r1" }).catch((error) => (refused = error));
  await until(() => seen.length === 1 && refused === undefined);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(refused, undefined, "the slot was free for a new request");
});

test("disposing a registration aborts what runs, then the server is unavailable and its id never reused", async () => {
  const seen = [];
  const { provider, registration, call, client } = await connected(waiting(seen));
  const pending = call({});
  await new Promise((resolve) => setTimeout(resolve, 50));
  await registration.dispose();
  assert.deepEqual(seen, ["aborted"]);
  await assert.rejects(pending, (error) => error.code === -32800);
  await assert.rejects(call({}), (error) => error.code === acp.McpBindingErrorCode.serverUnavailable && error.data.serverId === "s");
  assert.throws(() => provider.registerServer(client, { name: "s", serverId: "s", handler: () => ({ result: null }) }), /already registered/);
  assert.throws(() => provider.registerServer(client, { name: "t", handler: () => ({ result: null }), maxActiveRequests: 0 }), RangeError);
});

test("notifications reach only their request's listener, and none after it settled", async () => {
  let late;
  const { call } = await connected(async ({ notify, params }) => {
    await notify("notifications/progress", { progress: params.step });
    late = () => notify("notifications/progress", { progress: "late" });
    return { result: params.step };
  });
  const heard = [];
  const outcomes = await Promise.all(
    [1, 2].map((step) => call({ step }, { onNotification: (n) => heard.push(`${step}:${n.params.progress}`) })),
  );
  assert.deepEqual(outcomes, [{ result: 1 }, { result: 2 }]);
  assert.deepEqual(heard.sort(), ["1:1", "2:2"]);
  await late();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(heard.sort(), ["1:1", "2:2"], "a notification after the answer is dropped");
});

test("the helpers: withMcpRequestMeta, parseMcpOutcome, isMcpServerAcp", () => {
  const params = acp.withMcpRequestMeta({ a: 1, _meta: { [acp.MCP_META_PROTOCOL_VERSION]: "x" } }, { clientInfo: { name: "n", version: "1" } });
  assert.deepEqual(params, {
    a: 1,
    _meta: {
      [acp.MCP_META_PROTOCOL_VERSION]: "x",
      [acp.MCP_META_CLIENT_CAPABILITIES]: {},
      [acp.MCP_META_CLIENT_INFO]: { name: "n", version: "1" },
    },
  });
  assert.deepEqual(acp.parseMcpOutcome({ result: null, _meta: 5 }), { result: null });
  assert.equal(acp.parseMcpOutcome({ error: { code: "x", message: "m" } }), undefined);
  assert.equal(acp.parseMcpOutcome(undefined), undefined);
  assert.equal(acp.isMcpServerAcp({ type: "acp", name: "n", serverId: "i" }), true);
  assert.equal(acp.isMcpServerAcp({ type: "http", name: "n", url: "u" }), false);
  assert.equal(acp.MCP_MESSAGE_METHOD, "mcp/message");
});
