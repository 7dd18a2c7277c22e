// acp-engine/experimental/http-client: the official SDK's Streamable HTTP
// client stream (`createHttpStream`), driven by the engine.

import { RemoteClientStream, type AcpCookieStore } from "./remote-client.js";

export { MemoryAcpCookieStore, type AcpCookieStore } from "./remote-client.js";
export { DEFAULT_MAX_MESSAGE_BYTES, MessageTooLargeError } from "../stream-limits.js";

/** The official SDK's Streamable HTTP options. `fetch` is accepted and not
 * used: the engine makes the requests itself. */
export interface HttpStreamOptions {
  readonly fetch?: typeof globalThis.fetch;
  /** Sent with every HTTP request. */
  readonly headers?: Record<string, string>;
  /** `omit`: `cookieStore` is left alone (the engine still keeps the connection's own affinity cookies). */
  readonly cookies?: "include" | "omit";
  /** Its cookies are sent with the first request (the engine keeps the server's for the connection). */
  readonly cookieStore?: AcpCookieStore;
  /** The largest message read from the server (default `DEFAULT_MAX_MESSAGE_BYTES`). */
  readonly maxMessageBytes?: number;
}

/**
 * An ACP stream over Streamable HTTP (`http://` or `https://`) for a client
 * connection, as the official SDK's: `client(...).connect(createHttpStream(url))`.
 */
export function createHttpStream(serverUrl: string, options: HttpStreamOptions = {}): RemoteClientStream {
  return new RemoteClientStream(serverUrl, ["http", "https"], options);
}
