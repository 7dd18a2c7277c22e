// MCP-over-ACP's HTTP bridge (the official SDK's `McpOverAcpHttpBridge`,
// `acp-engine/experimental/mcp-http`). The listener, its checks, tokens,
// limits and SSE answers live in the engine (core/src/mcp/http_bridge/);
// this file sends each admitted HTTP request through the user's caller.

import { AcpContext } from "../app/context.js";
import type { Dispatcher } from "../dispatcher.js";
import { callNative, isRequestError } from "../errors.js";
import { McpHttpBridgeHandle, mcpStripHeaderAnnotations } from "../native.js";
import { isMcpServerAcp, type HasConnectionContext, type McpOverAcpCaller, type McpServerAcpDeclaration } from "./core.js";

/** An MCP server declaration using the HTTP transport (ACP's `McpServerHttp`). */
export type McpServerHttpDeclaration = {
  type: "http";
  name: string;
  url: string;
  headers: Array<{ name: string; value: string }>;
  _meta?: Record<string, unknown> | null;
};

/** Options for {@link McpOverAcpHttpBridge}. */
export type McpOverAcpHttpBridgeOptions = {
  /** HTTP requests admitted at once per ACP connection; more fail with HTTP 429 and `-33000`. Defaults to 64. */
  maxActiveRequests?: number;
  /** The largest HTTP request body, in bytes. Defaults to 1 MiB. */
  maxRequestBodyBytes?: number;
  /** Response bytes buffered for a slow HTTP reader before its request is cancelled with `-33000`. Defaults to 1 MiB. */
  maxBufferedResponseBytes?: number;
};

/** What the engine asks of the caller: send a request, or cancel one. */
type BridgeEvent =
  | { call: number; serverId: string; requestId: string; method: string; params: Record<string, unknown> }
  | { cancel: number };

/**
 * Re-exports MCP servers declared with `"type": "acp"` as loopback MCP
 * 2026-07-28 Streamable HTTP endpoints, one listener on `127.0.0.1` per ACP
 * connection, closed with it. Each HTTP POST becomes one `mcp/message`
 * request through `caller`; closing the HTTP response cancels only that
 * request. Each server has its own bearer token, sent in the declaration's
 * `Authorization` header. Register `caller.handleNotification` so progress
 * and subscription events reach their HTTP response streams.
 */
export class McpOverAcpHttpBridge {
  readonly #caller: McpOverAcpCaller;
  readonly #listeners = new WeakMap<Dispatcher, McpHttpBridgeHandle>();
  readonly #options: McpOverAcpHttpBridgeOptions;

  constructor(caller: McpOverAcpCaller, options: McpOverAcpHttpBridgeOptions = {}) {
    this.#caller = caller;
    // Unset limits take the engine's defaults (`McpHttpBridgeOptions`).
    this.#options = {
      maxActiveRequests: positiveInteger("maxActiveRequests", options.maxActiveRequests),
      maxRequestBodyBytes: positiveInteger("maxRequestBodyBytes", options.maxRequestBodyBytes),
      maxBufferedResponseBytes: positiveInteger("maxBufferedResponseBytes", options.maxBufferedResponseBytes),
    };
  }

  /** The HTTP declaration serving `server` over the connection behind `context`, with its name and metadata. */
  async toHttp(
    context: HasConnectionContext,
    server: McpServerAcpDeclaration & { _meta?: Record<string, unknown> | null },
  ): Promise<McpServerHttpDeclaration> {
    const listener = this.#listener(context);
    return JSON.parse(callNative(() => listener.toHttp(JSON.stringify(server)))) as McpServerHttpDeclaration;
  }

  /** A session's `mcpServers` with every `"type": "acp"` entry replaced by an HTTP declaration. */
  async adaptServers<T>(context: HasConnectionContext, servers: readonly T[]): Promise<Array<T | McpServerHttpDeclaration>> {
    return Promise.all(servers.map((server) => (isMcpServerAcp(server) ? this.toHttp(context, server) : server)));
  }

  #listener(context: HasConnectionContext): McpHttpBridgeHandle {
    const dispatcher = context.dispatcher;
    if (dispatcher.isClosed) throw new Error("ACP connection is closed");
    let listener = this.#listeners.get(dispatcher);
    if (listener !== undefined) return listener;
    // The connection's own context: not a (possibly request-scoped) handler's.
    const connection = new AcpContext(dispatcher, context.protocol);
    const running = new Map<number, AbortController>();
    const onEvent = (text: string) => {
      const event = JSON.parse(text) as BridgeEvent;
      if ("cancel" in event) running.get(event.cancel)?.abort();
      else this.#forward(connection, listener!, running, event);
    };
    const { maxActiveRequests, maxRequestBodyBytes, maxBufferedResponseBytes } = this.#options;
    listener = new McpHttpBridgeHandle(maxActiveRequests, maxRequestBodyBytes, maxBufferedResponseBytes, onEvent);
    this.#listeners.set(dispatcher, listener);
    void dispatcher.closed.then(() => {
      this.#listeners.delete(dispatcher);
      listener!.close();
    });
    return listener;
  }

  #forward(
    connection: HasConnectionContext,
    listener: McpHttpBridgeHandle,
    running: Map<number, AbortController>,
    event: Extract<BridgeEvent, { call: number }>,
  ): void {
    const abandon = new AbortController();
    running.set(event.call, abandon);
    const onNotification = (notification: unknown) => {
      listener.notify(event.call, JSON.stringify(notification));
    };
    this.#caller
      .request(connection, event.serverId, event.method, event.params, { requestId: event.requestId, signal: abandon.signal, onNotification })
      .then(
        (outcome) => listener.finish(event.call, JSON.stringify(outcome), null),
        (error: unknown) => listener.finish(event.call, null, failureOf(error)),
      )
      .finally(() => running.delete(event.call));
  }
}

/** A caller's failure as the engine takes it: an ACP error's code, message and data (JSON); null for any other failure. */
function failureOf(error: unknown): string | null {
  if (!isRequestError(error)) return null;
  return JSON.stringify({ code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) });
}

/**
 * Removes transport-only `x-mcp-header` annotations from the schema positions
 * of each listed tool's `inputSchema`, leaving instance data untouched.
 */
export function stripHeaderAnnotations(result: unknown): unknown {
  if (result === undefined) return result;
  return JSON.parse(callNative(() => mcpStripHeaderAnnotations(JSON.stringify(result))));
}

function positiveInteger(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return value;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive safe integer`);
  return value;
}
