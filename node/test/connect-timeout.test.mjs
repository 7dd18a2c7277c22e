// A server that takes the TCP connection and then says nothing (a stuck
// process, a balancer with no backend) fails the connection in time
// (connectTimeoutMs), with the reason, instead of leaving what was sent
// waiting. Against the INSTALLED package.
import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";

import { RequestError, connectAgent } from "acp-engine";

const quietClient = () => ({
  requestPermission: async () => ({ outcome: { outcome: "cancelled" } }),
  sessionUpdate: async () => {},
});

test("a server that never answers the WebSocket upgrade fails the connection in time, with the reason", async () => {
  const held = new Set();
  const silent = net.createServer((socket) => {
    held.add(socket);
    socket.on("error", () => {});
  });
  await new Promise((resolve) => silent.listen(0, "127.0.0.1", resolve));
  try {
    const url = `ws://127.0.0.1:${silent.address().port}/acp`;
    const started = Date.now();
    const agent = connectAgent(quietClient, url, { connectTimeoutMs: 300 });
    await assert.rejects(agent.initialize({ protocolVersion: 1, clientCapabilities: {} }), (error) => {
      assert.ok(error instanceof RequestError, String(error));
      const said = `${error.message} ${JSON.stringify(error.data)}`;
      assert.match(said, /did not take the connection within 300 ms/);
      return true;
    });
    await agent.closed;
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  } finally {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});
