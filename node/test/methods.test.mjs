// The method table against the schema itself: every method of the schema's
// x-method / x-side list is in the right handler table and on the right peer
// class, in `acp-engine` and `acp-engine/unstable` (the root's classes being
// 1.x's, with the unstable methods); and the session updates
// new in the current schema cross a real pipe unchanged.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import * as stable from "acp-engine";
import * as unstable from "acp-engine/unstable";

const here = path.dirname(fileURLToPath(import.meta.url));
const SCHEMA_DIR = path.join(process.env.ACP_REPO_ROOT ?? path.join(here, "..", ".."), "schema", "v1");
const AGENT = path.join(here, "peers", "agent.mjs");

/** [side, wire method, params type] of every method the schema file lists. */
function schemaMethods(file) {
  const defs = JSON.parse(fs.readFileSync(path.join(SCHEMA_DIR, file), "utf8")).$defs;
  return Object.entries(defs)
    .filter(([name, def]) => def["x-method"] && !name.endsWith("Response"))
    .map(([name, def]) => [def["x-side"], def["x-method"], name]);
}

/** Every language's naming rule: the params type without its suffix. */
function handlerName(paramsType) {
  if (paramsType === "SessionNotification") return "sessionUpdate";
  const base = paramsType.replace(/(Request|Notification)$/, "");
  return base[0].toLowerCase() + base.slice(1);
}

function check(pkg, file, stableNames) {
  const sides = {
    agent: [pkg.AGENT_HANDLERS, pkg.ClientSideConnection],
    client: [pkg.CLIENT_HANDLERS, pkg.AgentSideConnection],
  };
  let checked = 0;
  for (const [side, method, paramsType] of schemaMethods(file)) {
    if (!(side in sides)) continue; // protocol and proxy methods are not routed
    const [handlers, peerClass] = sides[side];
    const base = handlerName(paramsType);
    const name = stableNames.has(paramsType) ? base : `unstable_${base}`;
    const entry = handlers.get(method);
    assert.ok(entry, `${side} handler table lacks ${method}`);
    assert.equal(entry.names[0], name, method);
    assert.equal(entry.notification, paramsType.endsWith("Notification"), method);
    assert.equal(typeof peerClass.prototype[name], "function", `${peerClass.name}.${name} (${method})`);
    checked++;
  }
  return checked;
}

test("every method of the schema is in the handler tables and on the peer classes", () => {
  const stableTypes = new Set(schemaMethods("schema.json").map(([, , type]) => type));
  const stableCount = check(stable, "schema.json", stableTypes);
  assert.ok(stableCount >= 24, String(stableCount));
  assert.ok(check(unstable, "schema.unstable.json", stableTypes) > stableCount);
  assert.equal(typeof unstable.ClientSideConnection.prototype.unstable_forkSession, "function");
  // The root's classes are the 1.x SDK's, whose root had the unstable methods too.
  assert.equal(stable.ClientSideConnection, unstable.ClientSideConnection);
  assert.equal(stable.AgentSideConnection, unstable.AgentSideConnection);
  assert.equal(stable.AGENT_HANDLERS.get(unstable.AGENT_METHODS.session_fork), undefined);
  assert.equal(stable.AGENT_METHODS.session_new, "session/new");
  assert.equal(stable.PROTOCOL_METHODS.cancel_request, "$/cancel_request");
});

test("notice and compaction updates arrive; properties the schema does not describe are stripped, as the official SDK's parse does", async () => {
  const news = [
    { sessionUpdate: "notice", severity: "warning", title: "Rate limited", description: "retrying", "x-future": 1 },
    { sessionUpdate: "compaction_update", compactionId: "c-1", status: "in_progress", "x-future": [2] },
    {
      sessionUpdate: "compaction_summary_chunk",
      compactionId: "c-1",
      content: { type: "text", text: "summary so far" },
      "x-future": { three: 3 },
    },
    { sessionUpdate: "compaction_update", compactionId: "c-1", status: "completed", summary: null },
  ];
  const received = [];
  const client = {
    requestPermission: () => ({ outcome: { outcome: "cancelled" } }),
    sessionUpdate: (params) => void received.push(params.update),
  };
  const conn = new stable.ClientSideConnection(() => client, stable.spawnStream(process.execPath, [AGENT]));
  await conn.initialize({ protocolVersion: 1, clientCapabilities: { session: { notices: {}, compaction: {} } } });
  const { sessionId } = await conn.newSession({ cwd: here, mcpServers: [] });
  const answer = await conn.prompt({ sessionId, prompt: [{ type: "text", text: `news ${JSON.stringify(news)}` }] });
  assert.equal(answer.stopReason, "end_turn");
  conn.close();
  const stripped = news.map(({ "x-future": _, ...known }) => known);
  assert.deepEqual(received, stripped);
  await conn.closed;
});

test("acp-engine/experimental/nes: the unstable API, its method table under the official SDK's keys too", async () => {
  const nes = await import("acp-engine/experimental/nes");
  const unstable = await import("acp-engine/unstable");
  assert.equal(nes.AGENT_METHODS.nes_start, "nes/start");
  assert.equal(nes.AGENT_METHODS.document_did_open, unstable.AGENT_METHODS.document_didOpen);
  assert.equal(nes.AGENT_METHODS.document_did_focus, "document/didFocus");
  assert.equal(nes.ClientSideConnection, unstable.ClientSideConnection);
  assert.equal(nes.agent, unstable.agent);
});
