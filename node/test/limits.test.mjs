// Limits against a peer that stops reading (reliability/flood_peer.py), the
// Node side of core/tests/limits.rs: the connection stops reading at its
// configured bounds, every answer arrives once the peer reads, and the stall
// timeout closes a connection whose peer never reads. Against the INSTALLED
// package.
import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { Connection, spawnStream } from "acp-engine";

const here = path.dirname(fileURLToPath(import.meta.url));
const FLOOD_PEER = path.join(process.env.ACP_REPO_ROOT ?? path.join(here, "..", ".."), "reliability", "flood_peer.py");
const padding = "x".repeat(1024);
const answer = async () => ({ padding });

test("a peer that stops reading is held at the limits and gets every answer", { timeout: 120_000 }, async () => {
  const count = 200_000;
  let report;
  const reported = new Promise((resolve) => {
    report = resolve;
  });
  const conn = new Connection(
    answer,
    (method, params) => report(params),
    spawnStream("python3", [FLOOD_PEER, String(count), "--read"], {
      limits: { maxInFlightRequests: 64, maxBufferedBytes: 256 * 1024 },
    }),
  );
  const seen = await reported;
  assert.equal(seen.stalled, true, JSON.stringify(seen));
  assert.ok(seen.sent < count, JSON.stringify(seen));
  assert.equal(seen.answered, seen.sent, JSON.stringify(seen));
  assert.equal(seen.duplicates, 0, JSON.stringify(seen));
  conn.close();
  await conn.closed;
});

test("the stall timeout closes a connection whose peer never reads", { timeout: 60_000 }, async () => {
  const conn = new Connection(
    answer,
    () => {},
    spawnStream("python3", [FLOOD_PEER, "100000"], {
      limits: { maxBufferedBytes: 64 * 1024, outputStallTimeoutMs: 300 },
    }),
  );
  const error = await conn.sendRequest("flood/never", {}).then(
    () => assert.fail("answered"),
    (error) => error,
  );
  const text = `${error.message} ${JSON.stringify(error.data ?? null)}`;
  assert.match(text, /output stalled/);
  assert.match(text, /max_buffered_bytes/);
  await conn.closed;
});
