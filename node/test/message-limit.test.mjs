// The official SDK 2.x's message limit names on ndJsonStream: the root's
// DEFAULT_MAX_MESSAGE_BYTES and MessageTooLargeError, and the stream's
// `maxMessageBytes`, which the engine enforces on a connection (a message
// over it is answered -32600 and skipped; the connection goes on) and which
// reading the stream's messages yourself enforces as the official SDK does
// (the readable fails with MessageTooLargeError). Against the INSTALLED package.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ClientSideConnection, DEFAULT_MAX_MESSAGE_BYTES, LIMIT_DEFAULTS, MessageTooLargeError, ndJsonStream } from "acp-engine";
import * as httpClient from "acp-engine/experimental/http-client";

const encoder = new TextEncoder();
const line = (message) => encoder.encode(`${JSON.stringify(message)}\n`);

test("the root's limit names are the engine's default and the remote clients' own", () => {
  assert.equal(DEFAULT_MAX_MESSAGE_BYTES, LIMIT_DEFAULTS.maxMessageSize);
  assert.equal(httpClient.DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_BYTES);
  assert.equal(httpClient.MessageTooLargeError, MessageTooLargeError);
});

test("maxMessageBytes must be a positive safe integer, as in the official SDK", () => {
  const pipe = () => [new WritableStream(), new ReadableStream()];
  for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1]) {
    assert.throws(() => ndJsonStream(...pipe(), { maxMessageBytes: bad }), RangeError);
  }
});

test("reading ndJsonStream's messages: a line over maxMessageBytes fails the readable with MessageTooLargeError", async () => {
  const input = new ReadableStream({
    start(controller) {
      controller.enqueue(line({ jsonrpc: "2.0", method: "small" }));
      controller.enqueue(line({ jsonrpc: "2.0", method: "big", params: { text: "x".repeat(2048) } }));
      controller.close();
    },
  });
  const seen = [];
  await assert.rejects(
    (async () => {
      for await (const message of ndJsonStream(new WritableStream(), input, { maxMessageBytes: 1024 }).readable) seen.push(message.method);
    })(),
    (error) => error instanceof MessageTooLargeError && error.maxMessageBytes === 1024 && error.name === "MessageTooLargeError",
  );
  assert.deepEqual(seen, ["small"]);
});

test("a connection over ndJsonStream: a message over maxMessageBytes is answered -32600 and skipped, the connection goes on", async () => {
  const written = [];
  let peer;
  const input = new ReadableStream({ start: (controller) => (peer = controller) });
  const output = new WritableStream({
    write(chunk) {
      for (const text of new TextDecoder().decode(chunk).trim().split("\n")) {
        const message = JSON.parse(text);
        written.push(message);
        if (message.method === "initialize") {
          peer.enqueue(line({ jsonrpc: "2.0", method: "session/update", params: { text: "x".repeat(2048) } }));
          peer.enqueue(line({ jsonrpc: "2.0", id: message.id, result: { protocolVersion: 1 } }));
        }
      }
    },
  });
  const client = { requestPermission: () => ({ outcome: { outcome: "cancelled" } }), sessionUpdate() {} };
  const conn = new ClientSideConnection(() => client, ndJsonStream(output, input, { maxMessageBytes: 1024 }));
  try {
    assert.equal((await conn.initialize({ protocolVersion: 1 })).protocolVersion, 1);
    const refused = written.find((message) => message.error !== undefined);
    assert.equal(refused?.error.code, -32600);
    assert.match(refused.error.data.reason, /exceeds the limit of 1024 bytes/);
  } finally {
    conn.close();
    peer.close();
    await conn.closed;
  }
});
