// Limits against a peer that stops reading (reliability/flood_peer.py), the
// Node side of core/tests/limits.rs: the connection stops reading at its
// configured bounds, every answer arrives once the peer reads, and the stall
// timeout closes a connection whose peer never reads. Against the INSTALLED
// package.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as path from "node:path";
import { Readable, Writable } from "node:stream";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { Connection, ndJsonStream, spawnStream } from "acp-engine";

const here = path.dirname(fileURLToPath(import.meta.url));
const FLOOD_PEER = path.join(process.env.ACP_REPO_ROOT ?? path.join(here, "..", ".."), "reliability", "flood_peer.py");
const padding = "x".repeat(1024);
const answer = async () => ({ padding });

/** The flood peer, spawned by the engine or by the caller with its pipes as Web Streams. */
const transports = {
  spawnStream: (args, options) => ({ stream: spawnStream("python3", [FLOOD_PEER, ...args], options), async end() {} }),
  "ndJsonStream over Web Streams": (args, options) => {
    const child = spawn("python3", [FLOOD_PEER, ...args], { stdio: ["pipe", "pipe", "inherit"] });
    const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout), options);
    const exited = new Promise((resolve) => child.on("exit", resolve));
    // The caller's child is the caller's to end (a peer that never reads
    // never sees its stdin close).
    return {
      stream,
      end: async () => {
        child.kill();
        await exited;
      },
    };
  },
};

for (const [name, transport] of Object.entries(transports)) {
  test(`a peer that stops reading is held at the limits and gets every answer (${name})`, { timeout: 120_000 }, async () => {
    const count = 200_000;
    let report;
    const reported = new Promise((resolve) => {
      report = resolve;
    });
    const { stream, end } = transport([String(count), "--read"], {
      limits: { maxInFlightRequests: 64, maxBufferedBytes: 256 * 1024 },
    });
    const conn = new Connection(answer, (method, params) => report(params), stream);
    const seen = await reported;
    assert.equal(seen.stalled, true, JSON.stringify(seen));
    assert.ok(seen.sent < count, JSON.stringify(seen));
    assert.equal(seen.answered, seen.sent, JSON.stringify(seen));
    assert.equal(seen.duplicates, 0, JSON.stringify(seen));
    conn.close();
    await conn.closed;
    await end();
  });

  test(`the stall timeout closes a connection whose peer never reads (${name})`, { timeout: 60_000 }, async () => {
    const { stream, end } = transport(["100000"], {
      limits: { maxBufferedBytes: 64 * 1024, outputStallTimeoutMs: 300 },
    });
    const conn = new Connection(answer, () => {}, stream);
    const error = await conn.sendRequest("flood/never", {}).then(
      () => assert.fail("answered"),
      (error) => error,
    );
    const text = `${error.message} ${JSON.stringify(error.data ?? null)}`;
    assert.match(text, /output stalled/);
    assert.match(text, /max_buffered_bytes/);
    await conn.closed;
    await end();
  });
}
