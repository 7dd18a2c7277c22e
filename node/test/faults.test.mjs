// Faults over real processes (the Node side of core/tests/faults.rs): a peer
// killed mid-write and mid-burst, a peer that closes its stdin only. Every
// pending call rejects with "ACP connection closed", `closed` resolves and
// nothing hangs (the test timeout catches a hang). The time from the fault
// to the last rejection is printed, not asserted. Against the INSTALLED
// package; the peers are small Python scripts writing raw bytes, so that
// they can stop anywhere in a line.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { Connection, spawnStream } from "acp-engine";

const here = path.dirname(fileURLToPath(import.meta.url));
const FAULT_CLIENT = path.join(here, "peers", "fault-client.mjs");
const PYTHON = "python3";

// Reads N requests (pending on our side), then writes a complete `ready`
// notification followed by the first half of a line, flushes, and waits to
// be killed. KIND "response": half of the answer to the first request;
// "update": half of a 4 MiB session/update.
const HALF_LINE_PEER = `
import json, sys, time
n, kind = int(sys.argv[1]), sys.argv[2]
ids = [json.loads(sys.stdin.buffer.readline())["id"] for _ in range(n)]
if kind == "response":
    line = json.dumps({"jsonrpc": "2.0", "id": ids[0], "result": {"pad": "r" * 1000}})
else:
    line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "u" * (4 << 20)}}}})
ready = json.dumps({"jsonrpc": "2.0", "method": "ready", "params": {"pending": ids}}) + "\\n"
sys.stdout.buffer.write(ready.encode() + line.encode()[: len(line) // 2])
sys.stdout.buffer.flush()
time.sleep(60)
`;

// Reads N requests, then sends numbered notifications as fast as it can,
// forever (100 per write, so a kill lands mid-line most of the time).
const BURST_PEER = `
import sys
n = int(sys.argv[1])
for _ in range(n):
    sys.stdin.buffer.readline()
out, i, pad = sys.stdout.buffer, 0, b"x" * 100
while True:
    out.write(b"".join(b'{"jsonrpc":"2.0","method":"tick","params":{"i":%d,"pad":"%s"}}\\n' % (i + k, pad)
                       for k in range(100)))
    i += 100
`;

// Closes its stdin and keeps running with its stdout open; says so first.
const STDIN_CLOSING_PEER = `
import os, sys, time
os.close(0)
sys.stdout.write('{"jsonrpc":"2.0","method":"stdin_closed","params":{}}\\n')
sys.stdout.flush()
time.sleep(60)
`;

function gone(pid) {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (error.code === "ESRCH") return true;
    throw error;
  }
  // A zombie is gone for our purposes.
  return fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(" ")[2] === "Z";
}

async function waitGone(pid, ms = 10_000) {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    if (gone(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

function isClosedError(error) {
  assert.ok(error.isConnectionClosed(), String(error));
  assert.equal(error.message, "ACP connection closed");
  return true;
}

/** Every call rejects with "ACP connection closed"; the ms from `since` to the last rejection. */
async function allFailClosed(calls, since) {
  for (const call of calls) await assert.rejects(call, isClosedError);
  return performance.now() - since;
}

async function assertClosed(conn) {
  await conn.closed;
  assert.equal(conn.signal.aborted, true);
  // Later sends fail fast.
  await assert.rejects(conn.sendRequest("late", {}), isClosedError);
  await assert.rejects(conn.sendNotification("late", {}), isClosedError);
}

const noRequests = () => null;

for (const [kind, what] of [
  ["response", "a response"],
  ["update", "a 4 MiB session/update"],
]) {
  test(`a peer killed mid-write (half of ${what}): pending calls reject, closed resolves`, async () => {
    const n = 5;
    const notes = [];
    let gotReady;
    const ready = new Promise((resolve) => (gotReady = resolve));
    const conn = new Connection(
      noRequests,
      (method, params) => {
        notes.push([method, params]);
        gotReady();
      },
      spawnStream(PYTHON, ["-c", HALF_LINE_PEER, String(n), kind]),
    );
    let settled = 0;
    const calls = Array.from({ length: n }, (_, i) => conn.sendRequest("never/answered", { i }));
    for (const call of calls) call.then(() => settled++, () => settled++);
    await ready;
    // The peer has read all five requests and written half a line after `ready`.
    assert.equal(notes.length, 1);
    assert.equal(notes[0][0], "ready");
    assert.equal(notes[0][1].pending.length, n);
    assert.equal(settled, 0);
    const pid = conn.pid;
    assert.equal(typeof pid, "number");
    const killed = performance.now();
    process.kill(pid, "SIGKILL");
    const elapsed = await allFailClosed(calls, killed);
    console.log(`peer killed mid-write (${kind}): every pending call failed within ${elapsed.toFixed(1)} ms`);
    await assertClosed(conn);
    // The half line was never delivered as a message.
    assert.deepEqual(
      notes.map(([method]) => method),
      ["ready"],
    );
    assert.ok(await waitGone(pid));
  });
}

test("a peer killed mid-burst: pending calls reject, what arrived is whole and in order", async () => {
  const n = 5;
  const received = [];
  const methods = new Set();
  let killed;
  let pid;
  const conn = new Connection(
    noRequests,
    (method, params) => {
      methods.add(method);
      received.push(params.i);
      if (received.length === 20_000) {
        // The burst is flowing: kill the peer right here.
        killed = performance.now();
        process.kill(pid, "SIGKILL");
      }
    },
    spawnStream(PYTHON, ["-c", BURST_PEER, String(n)]),
  );
  pid = conn.pid;
  assert.equal(typeof pid, "number");
  const calls = Array.from({ length: n }, (_, i) => conn.sendRequest("never/answered", { i }));
  await Promise.race(calls.map((call) => call.catch(() => {})));
  assert.notEqual(killed, undefined, "a call ended before the peer was killed");
  const elapsed = await allFailClosed(calls, killed);
  console.log(`peer killed mid-burst: every pending call failed within ${elapsed.toFixed(1)} ms (${received.length} received)`);
  await assertClosed(conn);
  // What arrived before the kill arrived whole and in order; the line cut
  // by the kill was not delivered.
  assert.deepEqual([...methods], ["tick"]);
  assert.ok(received.length >= 20_000);
  for (let i = 0; i < received.length; i++) if (received[i] !== i) assert.fail(`notification ${i} is ${received[i]}`);
  assert.ok(await waitGone(pid));
});

test("a peer that closes its stdin only: the next send closes the connection, pending calls reject", async () => {
  let gotStdinClosed;
  const stdinClosed = new Promise((resolve) => (gotStdinClosed = resolve));
  const conn = new Connection(noRequests, () => gotStdinClosed(), spawnStream(PYTHON, ["-c", STDIN_CLOSING_PEER]));
  await stdinClosed;
  const pid = conn.pid;
  assert.equal(typeof pid, "number");
  assert.equal(gone(pid), false);
  const since = performance.now();
  const calls = Array.from({ length: 3 }, (_, i) => conn.sendRequest("never/answered", { i }));
  const elapsed = await allFailClosed(calls, since);
  console.log(`peer closed its stdin: every pending call failed within ${elapsed.toFixed(1)} ms`);
  await assertClosed(conn);
  // Still running with its stdout open, the peer is killed after the grace period.
  assert.ok(await waitGone(pid));
});

test("a client script exits by itself after its peer closed its stdin", async () => {
  // The script never closes its connection nor calls process.exit.
  const child = spawn(process.execPath, [FAULT_CLIENT, PYTHON, STDIN_CLOSING_PEER], {
    stdio: ["ignore", "pipe", "inherit"],
    timeout: 30_000,
  });
  let stdout = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  const [code, signal] = await new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (...status) => resolve(status));
  });
  assert.equal(signal, null, "killed by the timeout: the script did not exit by itself");
  assert.equal(code, 0);
  const lines = stdout.trim().split("\n");
  assert.deepEqual(lines.slice(1), [
    "rejected -32099 ACP connection closed",
    "rejected -32099 ACP connection closed",
    "rejected -32099 ACP connection closed",
    "closed true",
  ]);
  assert.ok(await waitGone(Number(lines[0])));
});
