#!/usr/bin/env node
// Faults against an ACP server (`acp-engine serve`) that only a remote
// transport has, driven by the official SDK's clients and by raw HTTP.
// Usage: node remote-faults.mjs <case> <url> [server pid]
//   killed      (ws:// or http://) a prompt turn held on a permission request,
//               then the server is killed (SIGKILL): the pending prompt must
//               fail at once (within 3 s)
//   vanish      (http://) initialize, session/new and a prompt over raw HTTP,
//               then every request dropped without DELETE while the agent asks
//               for permission; prints the connection id (the script around
//               checks that the agent is stopped)
//   malformed   (http://) a body that is not JSON gets 400 with -32700, a
//               batch 400 with -32600, a non-object 400; none starts an agent,
//               and the server still serves a session afterwards
// Prints "ok ..." and exits 0, or the reason and exits 1.
import * as acp from "@agentclientprotocol/sdk";

import { remoteStream } from "./remote-stream.mjs";

const [kind, url, pid] = process.argv.slice(2);

function fail(message) {
  console.error(`FAIL ${kind}: ${message}`);
  process.exit(1);
}


/** A client that never answers permission requests; `asked` resolves on the first. */
async function heldClient(url) {
  let onAsked;
  const asked = new Promise((resolve) => (onAsked = resolve));
  const app = acp.client({ name: "faults" }).onRequest(acp.methods.client.session.requestPermission, () => {
    onAsked();
    return new Promise(() => {});
  });
  const agent = app.connect(await remoteStream(url)).agent;
  await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const session = await agent.buildSession({ cwd: process.cwd(), mcpServers: [] }).start();
  return { session, asked };
}

async function killed() {
  const { session, asked } = await heldClient(url);
  const turn = session.prompt("cancel me").then(
    () => "answered",
    (error) => `failed: ${error?.message ?? error}`,
  );
  await asked;
  process.kill(Number(pid), "SIGKILL");
  const started = Date.now();
  const outcome = await Promise.race([turn, new Promise((resolve) => setTimeout(() => resolve("hung"), 3000))]);
  if (!outcome.startsWith("failed")) fail(`the pending prompt ${outcome} after the server was killed`);
  console.log(`ok: the pending prompt failed ${Date.now() - started} ms after the kill (${outcome})`);
}

const JSON_HEADERS = { "content-type": "application/json" };

async function vanish() {
  const aborter = new AbortController();
  const signal = aborter.signal;
  const initialize = await fetch(url, {
    method: "POST",
    headers: JSON_HEADERS,
    signal,
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: acp.methods.agent.initialize, params: { protocolVersion: 1, clientCapabilities: {} } }),
  });
  const id = initialize.headers.get("acp-connection-id");
  if (initialize.status !== 200 || !id) fail(`initialize: ${initialize.status}`);
  await initialize.text();
  const headers = { ...JSON_HEADERS, "acp-connection-id": id };
  const events = (session) =>
    fetch(url, {
      headers: { accept: "text/event-stream", "acp-connection-id": id, ...(session ? { "acp-session-id": session } : {}) },
      signal,
    });
  const connectionStream = (await events()).body.getReader();
  const post = (message, session) =>
    fetch(url, {
      method: "POST",
      headers: session ? { ...headers, "acp-session-id": session } : headers,
      body: JSON.stringify({ jsonrpc: "2.0", ...message }),
      signal,
    });
  await post({ id: 1, method: acp.methods.agent.session.new, params: { cwd: process.cwd(), mcpServers: [] } });
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes('"id":1')) {
    const { value, done } = await connectionStream.read();
    if (done) fail("the connection stream ended before session/new was answered");
    text += decoder.decode(value);
  }
  const sessionId = JSON.parse(text.split("\n").find((line) => line.includes('"id":1')).slice(6)).result.sessionId;
  const sessionStream = (await events(sessionId)).body.getReader();
  await post({ id: 2, method: acp.methods.agent.session.prompt, params: { sessionId, prompt: [{ type: "text", text: "cancel me" }] } }, sessionId);
  text = "";
  while (!text.includes(acp.methods.client.session.requestPermission)) {
    const { value, done } = await sessionStream.read();
    if (done) fail("the session stream ended before the permission request");
    text += decoder.decode(value);
  }
  aborter.abort();
  console.log(`ok: connection ${id} dropped mid-turn`);
}

async function malformed() {
  const cases = [
    ["{not json", -32700],
    ["[]", -32600],
    ["42", -32600],
  ];
  for (const [body, code] of cases) {
    const response = await fetch(url, { method: "POST", headers: JSON_HEADERS, body });
    const answer = await response.json().catch(() => null);
    if (response.status !== 400 || answer?.error?.code !== code) {
      fail(`${body}: expected 400 with ${code}, got ${response.status} ${JSON.stringify(answer)}`);
    }
  }
  const wrongType = await fetch(url, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" });
  if (wrongType.status !== 415) fail(`text/plain: expected 415, got ${wrongType.status}`);
  const agent = acp.client({ name: "faults" }).connect(await remoteStream(url)).agent;
  const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  if (init.protocolVersion !== 1) fail(`initialize after the malformed posts: ${JSON.stringify(init)}`);
  await agent.buildSession({ cwd: process.cwd(), mcpServers: [] }).start();
  console.log("ok: -32700, -32600 (batch, non-object) and 415 refused; a session works after");
  process.exit(0);
}

const cases = { killed, vanish, malformed };
if (!cases[kind]) fail("unknown case");
await cases[kind]();
process.exit(0);
