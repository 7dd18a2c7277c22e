// A client whose network breaks mid-turn comes back to the same agent and
// misses nothing (reconnectTimeoutMs), over Streamable HTTP and WebSocket,
// and a server's
// maxReplayBytes bounds what it keeps for that: a resume needing more is
// refused with 410. Over loopback, through a proxy that cuts connections.
// Against the INSTALLED package.
import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";

import { connectAgent, serveAgent } from "acp-engine";

const INITIALIZE = { protocolVersion: 1, clientCapabilities: {} };
const UPDATES = 300;

/** Forwards loopback connections to `port`; `cut()` ends every one it carries. */
async function cutProxy(port) {
  const carried = new Set();
  let made = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(port, "127.0.0.1");
    made++;
    for (const socket of [client, upstream]) {
      carried.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => carried.delete(socket));
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: server.address().port,
    made: () => made,
    cut() {
      for (const socket of carried) socket.resetAndDestroy();
      carried.clear();
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Each prompt streams UPDATES message chunks ("0", "1", ...), then ends. */
function streamingAgentFactory(made) {
  return (connection) => {
    const agent = {
      initialize: () => ({ protocolVersion: 1 }),
      newSession: () => ({ sessionId: "s" }),
      async prompt(params) {
        for (let i = 0; i < UPDATES; i++) {
          await connection.sessionUpdate({
            sessionId: params.sessionId,
            update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: String(i) } },
          });
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        return { stopReason: "end_turn" };
      },
      cancel() {},
    };
    made.push(agent);
    return agent;
  };
}

for (const scheme of ["http", "ws"]) {
  test(`a client cut off mid-turn resumes and misses nothing (${scheme})`, () => cutOffMidTurn(scheme));
}

async function cutOffMidTurn(scheme) {
  const made = [];
  const server = await serveAgent(streamingAgentFactory(made));
  const proxy = await cutProxy(Number(new URL(server.httpUrl).port));
  try {
    const texts = [];
    const client = {
      requestPermission() {
        throw new Error("not asked");
      },
      sessionUpdate(params) {
        texts.push(params.update.content.text);
        // Cut the network after the 100th and the 200th.
        if (texts.length === 100 || texts.length === 200) proxy.cut();
      },
    };
    const agent = connectAgent(() => client, `${scheme}://127.0.0.1:${proxy.port}/acp`, { reconnectTimeoutMs: 5000 });
    await agent.initialize(INITIALIZE);
    const { sessionId } = await agent.newSession({ cwd: "/tmp", mcpServers: [] });
    const result = await agent.prompt({ sessionId, prompt: [{ type: "text", text: "go" }] });
    assert.equal(result.stopReason, "end_turn");
    assert.deepEqual(texts, Array.from({ length: UPDATES }, (_, i) => String(i)), "each update once, in order");
    assert.equal(made.length, 1, "the same agent throughout");
    assert.ok(proxy.made() >= 3, "the streams or sockets were reopened");
    agent.close();
    await agent.closed;
  } finally {
    await proxy.close();
    await server.close();
  }
}

/** A raw HTTP exchange on `port`: the text read until `until` shows (or the end). */
function http(port, request, until) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(request));
    let text = "";
    const done = () => {
      socket.destroy();
      resolve(text);
    };
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      text += chunk;
      if (until !== undefined && text.includes(until)) done();
    });
    socket.on("end", done);
    socket.on("error", reject);
  });
}

function post(connection, session, body) {
  const headers = (connection ? `Acp-Connection-Id: ${connection}\r\n` : "") + (session ? `Acp-Session-Id: ${session}\r\n` : "");
  return `POST /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function getSession(connection, lastEventId) {
  const resume = lastEventId === undefined ? "" : `Last-Event-ID: ${lastEventId}\r\n`;
  return `GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAcp-Connection-Id: ${connection}\r\nAcp-Session-Id: s\r\n${resume}\r\n`;
}

test("maxReplayBytes bounds what a resume can get: 410 past it", async () => {
  const server = await serveAgent(streamingAgentFactory([]), { maxReplayBytes: 256 });
  try {
    const port = Number(new URL(server.httpUrl).port);
    const initialize = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}';
    const answer = await http(port, post(undefined, undefined, initialize));
    const connection = /acp-connection-id: *(\S+)/i.exec(answer)[1];
    await http(port, post(connection, undefined, '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}'));
    const stream = http(port, getSession(connection), '"stopReason"');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await http(port, post(connection, "s", '{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}'));
    const ids = [...("\n" + (await stream)).matchAll(/\nid: (\d+)\n/g)].map((match) => Number(match[1]));
    assert.equal(ids.length, UPDATES + 1, "every event has an id");
    // After the last one nothing is missing; after the first, too much was forgotten.
    const resumed = await http(port, getSession(connection, ids.at(-1)), "\r\n\r\n");
    assert.match(resumed, /^HTTP\/1\.1 200/);
    const refused = await http(port, getSession(connection, ids[0]), "kept");
    assert.match(refused, /^HTTP\/1\.1 410/);
    assert.match(refused, /no longer kept/);
  } finally {
    await server.close();
  }
});
