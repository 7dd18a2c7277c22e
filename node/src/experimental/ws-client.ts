// acp-engine/experimental/ws-client: the official SDK's WebSocket client
// stream (`createWebSocketStream`), dialled by the engine.

import { RemoteClientStream, type AcpCookieStore } from "./remote-client.js";

export { MemoryAcpCookieStore, type AcpCookieStore } from "./remote-client.js";

/** The official SDK's shape of a WebSocket (a browser's, or the `ws` package's). */
export interface WebSocketLike {
  readonly readyState?: number;
  readonly bufferedAmount?: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener?(type: string, listener: (event: unknown) => void): void;
  removeEventListener?(type: string, listener: (event: unknown) => void): void;
  on?(type: string, listener: (...args: unknown[]) => void): unknown;
  off?(type: string, listener: (...args: unknown[]) => void): unknown;
  removeListener?(type: string, listener: (...args: unknown[]) => void): unknown;
}

/** The official SDK's `WebSocket` option: a constructor of one. */
export interface WebSocketConstructor {
  new (url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }): WebSocketLike;
}

/** The official SDK's WebSocket options. `WebSocket` and `protocols` are
 * accepted and not used: the engine makes the WebSocket itself. */
export interface WebSocketStreamOptions {
  readonly protocols?: string[];
  /** Sent with the WebSocket handshake. */
  readonly headers?: Record<string, string>;
  readonly WebSocket?: WebSocketConstructor;
  /** `omit`: `cookieStore` is left alone (the engine still keeps the connection's own affinity cookies). */
  readonly cookies?: "include" | "omit";
  /** Its cookies are sent with the handshake, and the server's go into it. */
  readonly cookieStore?: AcpCookieStore;
}

/**
 * An ACP stream over WebSocket (`ws://` or `wss://`) for a client
 * connection, as the official SDK's: `client(...).connect(createWebSocketStream(url))`.
 */
export function createWebSocketStream(serverUrl: string, options: WebSocketStreamOptions = {}): RemoteClientStream {
  return new RemoteClientStream(serverUrl, ["ws", "wss"], options);
}
