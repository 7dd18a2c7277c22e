// A remote client stream's messages, read and written by hand as the
// official SDK's `createWebSocketStream(url).readable` / `.writable` are.
// The engine dials the agent (handshake, TLS, framing, limits) and hands
// over a socket of newline-delimited messages; `messageView` makes message
// objects of its lines, as it does for `ndJsonStream`.

import { Socket } from "node:net";
import { Readable, Writable } from "node:stream";

import { messageView } from "../message-view.js";
import { NativeDial, type RemoteSettings } from "../native.js";
import type { MessageStream } from "../streams.js";

/**
 * Dial `remote` now. Until it connects, writes wait; if it cannot, reads
 * and writes fail with the reason. `onCookies` gets the `Set-Cookie` values
 * of the handshake's answer. Closing `writable` (or cancelling `readable`)
 * closes the connection.
 */
export function dialledMessages(
  remote: RemoteSettings,
  maxMessageSize: number | undefined,
  onCookies: ((setCookies: string[]) => void) | undefined,
): MessageStream {
  const fromAgent = new TransformStream<Uint8Array, Uint8Array>();
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  let socket: Socket | undefined;
  let closed = false;
  const dial = NativeDial.start(remote, () => {
    const end = dial.outcome();
    if (end === null) return;
    if (closed) {
      dial.close(); // what was dialled after all
      return;
    }
    if (end.failed !== undefined) {
      const error = new Error(end.failed);
      fromAgent.writable.abort(error).catch(() => {});
      toAgent.readable.cancel(error).catch(() => {});
      return;
    }
    onCookies?.(end.setCookies);
    socket = new Socket({ fd: dial.takeSocket(), readable: true, writable: true });
    Readable.toWeb(socket)
      .pipeTo(fromAgent.writable)
      .catch(() => {});
    toAgent.readable.pipeTo(Writable.toWeb(socket)).catch(() => {});
  });
  const close = (): void => {
    if (closed) return;
    closed = true;
    if (socket) {
      // The engine closes the connection when our end of the socket ends;
      // the agent's end then ends `readable`.
      socket.end();
    } else {
      dial.close();
      fromAgent.writable.close().catch(() => {});
      toAgent.readable.cancel().catch(() => {});
    }
  };
  const view = messageView(toAgent.writable, fromAgent.readable, maxMessageSize);
  const writer = view.writable.getWriter();
  writer.closed.catch(() => {});
  return {
    readable: view.readable,
    writable: new WritableStream<unknown>({
      write: (message) => writer.write(message),
      close,
      abort: close,
    }),
  };
}
