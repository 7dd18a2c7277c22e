// The root's class API is the official SDK 1.x's, whose root entry point had
// the unstable methods (`unstable_forkSession`, ...): an agent and a client
// that import `acp-engine` as they imported `@agentclientprotocol/sdk` 1.x
// call and serve them over real pipes, the engine still checking their
// params; one the agent lacks is not found, as on 1.x. (Real program:
// @zed-industries/claude-code-acp 0.13.1 forks sessions this way,
// node/drop-in/run.mjs.) Against the INSTALLED package.
import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { ClientSideConnection, RequestError, spawnAgent } from "acp-engine";
import { AGENT_METHODS } from "acp-engine/unstable";

const FORK_AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), "peers", "fork-agent.mjs");

const client = () => ({
  requestPermission: () => ({ outcome: { outcome: "cancelled" } }),
  sessionUpdate() {},
});

test("the root's classes call and serve the unstable methods, checked, as 1.x's root did", async (t) => {
  const conn = spawnAgent(client, process.execPath, [FORK_AGENT]);
  // Closed on failure too: its agent process goes with it.
  t.after(async () => {
    conn.close();
    await conn.closed;
  });
  assert.ok(conn instanceof ClientSideConnection);
  assert.equal(typeof conn.unstable_forkSession, "function");
  await conn.initialize({ protocolVersion: 1 });
  const { sessionId } = await conn.newSession({ cwd: "/", mcpServers: [] });
  assert.deepEqual(await conn.unstable_forkSession({ sessionId, cwd: "/" }), { sessionId: "s-1-fork" });
  await assert.rejects(
    conn.sendRequest(AGENT_METHODS.session_fork, { sessionId, cwd: 42 }),
    (error) => error instanceof RequestError && error.code === -32602,
  );
  await assert.rejects(
    conn.unstable_listProviders({}),
    (error) => error instanceof RequestError && error.code === -32601,
  );
});
