// acp-engine/experimental/ws-client: the official SDK's WebSocket client
// stream (`createWebSocketStream`), dialled by the engine.

import { RemoteClientStream, type AcpCookieStore } from "./remote-client.js";

export { MemoryAcpCookieStore, type AcpCookieStore } from "./remote-client.js";

/** The official SDK's WebSocket options. `WebSocket` and `protocols` are
 * accepted and not used: the engine makes the WebSocket itself. */
export interface WebSocketStreamOptions {
  readonly protocols?: string[];
  /** Sent with the WebSocket handshake. */
  readonly headers?: Record<string, string>;
  readonly WebSocket?: unknown;
  /** Accepted for the official signature; the engine always keeps the connection's affinity cookies. */
  readonly cookies?: "include" | "omit";
  /** Its cookies are sent with the handshake. */
  readonly cookieStore?: AcpCookieStore;
}

/**
 * An ACP stream over WebSocket (`ws://` or `wss://`) for a client
 * connection, as the official SDK's: `client(...).connect(createWebSocketStream(url))`.
 */
export function createWebSocketStream(serverUrl: string, options: WebSocketStreamOptions = {}): RemoteClientStream {
  return new RemoteClientStream(serverUrl, ["ws", "wss"], options);
}
