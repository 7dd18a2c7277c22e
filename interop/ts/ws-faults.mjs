#!/usr/bin/env node
// Faults over WebSocket against an ACP server (`acp-engine serve`), with the
// `ws` package as a raw client. Usage: node ws-faults.mjs <case> <url> [log]
//   malformed   a text frame that is not JSON gets -32700, a batch -32600,
//               and the connection still answers initialize; a binary frame
//               that is not UTF-8 gets -32700, one that holds a request is
//               answered
//   disconnect  initialize, session/new, a prompt, and the socket dropped
//               (no close frame) while the agent asks for permission
//   stall       stop reading, send 100,000 requests, read again once the
//               server's log (the third argument) says the client was
//               disconnected (at most 60 s): a server with a short output
//               stall timeout has dropped the socket before all the answers
//               came. Waiting on the log, not on a clock: on a busy machine
//               the agent may answer so slowly that every answer so far
//               still fits in the socket buffers after any fixed wait.
// Prints "ok" and exits 0, or the reason and exits 1.
import { readFileSync } from "node:fs";
import { WebSocket } from "ws";

const [kind, url, log] = process.argv.slice(2);
const socket = new WebSocket(url);
const inbox = [];
let waiting = null;
let closed = null;
socket.on("message", (data, isBinary) => {
  inbox.push(isBinary ? { binary: true } : JSON.parse(data.toString()));
  waiting?.();
});
socket.on("close", (code, reason) => {
  closed = { code, reason: reason.toString() };
  waiting?.();
});

function fail(message) {
  console.error(`FAIL ${kind}: ${message}`);
  process.exit(1);
}

/** The next message matching `test`, within 10 s. */
async function next(test, what) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const index = inbox.findIndex(test);
    if (index >= 0) return inbox.splice(index, 1)[0];
    if (closed) fail(`closed (${closed.code} ${closed.reason}) while waiting for ${what}`);
    if (Date.now() > deadline) fail(`no ${what}`);
    await new Promise((resolve) => {
      waiting = resolve;
      setTimeout(resolve, 100);
    });
  }
}

const initialize = (id) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });

await new Promise((resolve, reject) => {
  socket.once("open", resolve);
  socket.once("error", reject);
}).catch((error) => fail(`cannot connect: ${error.message}`));

if (kind === "malformed") {
  socket.send("this is not json");
  const parse = await next((m) => m.error && m.id === null && m.error.code === -32700, "-32700");
  socket.send("[]");
  await next((m) => m !== parse && m.error && m.id === null && m.error.code === -32600, "-32600 for a batch");
  socket.send(initialize(1));
  await next((m) => m.id === 1 && m.result, "the answer to initialize");
  // A binary frame's bytes are a message as on a pipe: not UTF-8, -32700;
  // JSON, answered; the connection goes on.
  socket.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: true });
  await next((m) => m !== parse && m.error && m.id === null && m.error.code === -32700, "-32700 for bytes that are not UTF-8");
  socket.send(Buffer.from(initialize(2)), { binary: true });
  await next((m) => m.id === 2 && m.result, "the answer to initialize in a binary frame");
  if (closed) fail(`the socket closed (${closed.code} ${closed.reason})`);
  console.log("ok");
} else if (kind === "disconnect") {
  socket.send(initialize(1));
  await next((m) => m.id === 1, "the answer to initialize");
  socket.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } }));
  const session = await next((m) => m.id === 2 && m.result, "a session");
  const prompt = [{ type: "text", text: "cancel me" }];
  socket.send(
    JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: session.result.sessionId, prompt } }),
  );
  await next((m) => m.method === "session/request_permission", "a permission request");
  socket.terminate();
  console.log("ok");
} else if (kind === "stall") {
  socket.pause();
  const n = 100_000;
  for (let i = 1; i <= n; i++) socket.send(initialize(i));
  if (!log) fail("stall needs the server's log file");
  const dropped = () => / disconnected: /.test(readFileSync(log, "utf8"));
  const pausedUntil = Date.now() + 60_000;
  while (!dropped() && Date.now() < pausedUntil) await new Promise((resolve) => setTimeout(resolve, 100));
  if (!dropped()) fail("not dropped within 60 s of not reading");
  socket.resume();
  const deadline = Date.now() + 20_000;
  while (!closed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  if (!closed) fail(`still open after 20 s (${inbox.length} answers)`);
  if (inbox.length >= n) fail(`all ${n} answers came: nothing stalled`);
  console.log(`ok (dropped after ${inbox.length} of ${n} answers, close ${closed.code})`);
} else {
  fail("unknown case");
}
process.exit(0);
