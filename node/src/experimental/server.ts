// acp-engine/experimental/server: the official SDK's `AcpServer`, a handler
// the user mounts in an HTTP server of their own, on the engine. Streamable
// HTTP requests are passed, as they are, to an engine server listening on
// loopback (started at the first request), which does all of that transport
// (connection ids, event streams, limits) and hands each connection to a new
// connection of the agent app. A WebSocket the user's server accepted is run
// by the engine over its frames.

import { randomUUID } from "node:crypto";

import type { AgentConnector } from "../app/connector.js";
import type { WebSocketLike } from "./ws-client.js";
import { LIMIT_DEFAULTS } from "../generated/tables.js";
import { LineSplitter } from "../message-view.js";
import { NativeServer } from "../native.js";
import { kOpen, ownedByteStream, settings, type Stream } from "../streams.js";

export type { AgentConnector };

export type AgentFactory = () => AgentConnector;

/** Output held per connection for a client that has not read it yet (the engine's default). */
export const DEFAULT_MAX_BUFFERED_BYTES: number = LIMIT_DEFAULTS.maxBufferedBytes;
/** How long a client may read nothing of what waits for it before its connection ends. */
export const DEFAULT_MAX_OUTPUT_STALL_MS: number = LIMIT_DEFAULTS.serverOutputStallTimeoutMs;
/** The longest session or request id a client may send. */
export const DEFAULT_MAX_ID_LENGTH: number = LIMIT_DEFAULTS.maxIdLength;
/** Sessions of a connection holding output no client reads, at most. */
export const DEFAULT_MAX_BUFFERED_SESSION_STREAMS: number = LIMIT_DEFAULTS.maxBufferedSessionStreams;

/** The official server's per-connection limits the engine enforces. */
export interface ConnectionLimits {
  /** Output held per connection for its client before the agent waits (default `DEFAULT_MAX_BUFFERED_BYTES`). */
  readonly maxBufferedBytes?: number;
  /** A client that reads none of the held output this long is dropped (default `DEFAULT_MAX_OUTPUT_STALL_MS`). */
  readonly maxOutputStallMs?: number;
  /** Streamable HTTP: sessions holding output no client reads; one more ends the connection (default `DEFAULT_MAX_BUFFERED_SESSION_STREAMS`). */
  readonly maxBufferedSessionStreams?: number;
  /** Streamable HTTP: the longest session or request id a client may send, in bytes; longer is answered 400 (default `DEFAULT_MAX_ID_LENGTH`). */
  readonly maxIdLength?: number;
}

export type AcpServerOptions = (
  | { readonly agent: AgentConnector; readonly createAgent?: never }
  | { readonly agent?: never; readonly createAgent: AgentFactory }
) &
  ConnectionLimits;

/** Accepted for the official signature: a server has one agent (or factory), so none may be given here. */
export interface HandleRequestOptions {
  readonly agent?: never;
  readonly createAgent?: never;
}
export type PrepareWebSocketUpgradeOptions = HandleRequestOptions;

/** The WebSocket shape `accept` takes: the `ws` package's, or a standard one (the official SDK's `WebSocketLike`). */
export type WebSocketServerSocket = WebSocketLike;

export interface PreparedWebSocketUpgrade {
  readonly connectionId: string;
  accept(socket: WebSocketServerSocket): void;
  reject(): void;
}

/** Request headers that belong to one hop, not to the request. */
const HOP_HEADERS = ["connection", "keep-alive", "transfer-encoding", "upgrade", "host", "content-length"];

/**
 * ACP over Streamable HTTP and WebSocket for an HTTP server of your own:
 * route requests to `handleRequest`, WebSocket upgrades through
 * `prepareWebSocketUpgrade` (or use `experimental/node`'s adapters).
 */
export class AcpServer {
  readonly #agent: AgentFactory;
  readonly #limits: ConnectionLimits;
  #engine: NativeServer | undefined;
  readonly #connections = new Set<{ closed?: Promise<unknown>; close?: () => unknown }>();
  #closed = false;

  constructor(options: AcpServerOptions) {
    if ((options.agent === undefined) === (options.createAgent === undefined)) {
      throw new TypeError("AcpServer: give either `agent` or `createAgent`");
    }
    const shared = options.agent;
    this.#agent = shared === undefined ? options.createAgent : () => shared;
    this.#limits = {
      maxBufferedBytes: options.maxBufferedBytes,
      maxOutputStallMs: options.maxOutputStallMs,
      maxBufferedSessionStreams: options.maxBufferedSessionStreams,
      maxIdLength: options.maxIdLength,
    };
  }

  /** Handles one Streamable HTTP request: passed on to the engine's server, its answer returned. */
  async handleRequest(req: Request, options?: HandleRequestOptions): Promise<Response> {
    refuseOptions(options);
    if (this.#closed) return new Response("ACP server closed", { status: 503 });
    const headers = new Headers(req.headers);
    for (const name of HOP_HEADERS) headers.delete(name);
    const hasBody = req.body !== null && req.method !== "GET" && req.method !== "HEAD";
    const upstream = await fetch(this.#server().httpUrl, {
      method: req.method,
      headers,
      body: hasBody ? req.body : undefined,
      signal: req.signal,
      redirect: "manual",
      ...(hasBody ? { duplex: "half" } : {}),
    } as RequestInit);
    const answer = new Headers(upstream.headers);
    for (const name of HOP_HEADERS) answer.delete(name);
    return new Response(upstream.body, { status: upstream.status, statusText: upstream.statusText, headers: answer });
  }

  /** A WebSocket connection for an upgrade the caller's server accepts (`accept`) or refuses (`reject`). */
  prepareWebSocketUpgrade(options?: PrepareWebSocketUpgradeOptions): PreparedWebSocketUpgrade {
    refuseOptions(options);
    const connectionId = randomUUID();
    let settled = false;
    return {
      connectionId,
      accept: (socket) => {
        if (settled) throw new Error("AcpServer: this upgrade was already accepted or rejected");
        settled = true;
        if (this.#closed) return socket.close(1001, "ACP server closed");
        this.#track(this.#agent().connect(webSocketStream(socket, this.#limits.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES)));
      },
      reject: () => {
        settled = true;
      },
    };
  }

  /** Ends every connection this server made and stops its engine server. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#engine?.close();
    const connections = [...this.#connections];
    for (const connection of connections) connection.close?.();
    await Promise.all(connections.map((connection) => connection.closed?.catch(() => {})));
  }

  /** The engine's server, listening on loopback from the first request on. */
  #server(): NativeServer {
    this.#engine ??= NativeServer.bind(
      "127.0.0.1:0",
      {
        path: "/acp",
        maxBufferedBytes: this.#limits.maxBufferedBytes,
        outputStallTimeoutMs: this.#limits.maxOutputStallMs,
        maxBufferedSessionStreams: this.#limits.maxBufferedSessionStreams,
        maxIdLength: this.#limits.maxIdLength,
      },
      () => this.#acceptWaiting(),
    );
    return this.#engine;
  }

  #acceptWaiting(): void {
    const engine = this.#engine;
    while (engine !== undefined && engine.waiting() > 0) {
      let taken = false;
      const stream: Stream = {
        kind: "remote",
        [kOpen](side, unstable, wake, _host, open) {
          const accepted = taken ? null : engine.accept(settings(side, unstable, undefined, open), wake);
          taken = true;
          if (!accepted) throw new Error("acp-engine: no accepted connection waits");
          return accepted;
        },
      };
      this.#track(this.#agent().connect(stream));
    }
  }

  #track(connection: unknown): void {
    const handle = connection as { closed?: Promise<unknown>; close?: () => unknown };
    this.#connections.add(handle);
    void handle.closed?.finally(() => this.#connections.delete(handle));
  }
}

function refuseOptions(options: HandleRequestOptions | undefined): void {
  if (options?.agent !== undefined || options?.createAgent !== undefined) {
    throw new TypeError("acp-engine: AcpServer takes its agent once, in the constructor, not per request");
  }
}

/** A WebSocket as an engine connection's bytes: one message per text frame. */
function webSocketStream(socket: WebSocketServerSocket, maxWaitingBytes: number): Stream {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const lines = new LineSplitter();
  const input = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        listen(socket, "message", (text) => {
          // A frame is one message; the engine's framing needs it on one line.
          controller.enqueue(encoder.encode(`${text.replace(/[\r\n]/g, " ")}\n`));
          // Frames the engine has not read yet are bounded, as the official server bounds them.
          if ((controller.desiredSize ?? 0) < 0) socket.close(1008, "too many messages waiting");
        });
        listen(socket, "close", () => {
          try {
            controller.close();
          } catch {
            // Already closed.
          }
        });
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: maxWaitingBytes }),
  );
  const output = new WritableStream<Uint8Array>({
    write(bytes) {
      for (const line of lines.push(bytes)) socket.send(decoder.decode(line));
    },
    close() {
      socket.close(1000);
    },
  });
  return ownedByteStream(output, input);
}

/** A socket event as text: the `ws` package's (`on`) or a standard socket's (`addEventListener`). */
function listen(socket: WebSocketServerSocket, type: "message" | "close", listener: (text: string) => void): void {
  const text = (data: unknown): string =>
    typeof data === "string"
      ? data
      : Array.isArray(data)
        ? Buffer.concat(data as Buffer[]).toString("utf8")
        : Buffer.from(data as ArrayBuffer).toString("utf8");
  if (typeof socket.on === "function") {
    socket.on(type, (data: unknown) => listener(type === "message" ? text(data) : ""));
  } else {
    socket.addEventListener?.(type, (event) => listener(type === "message" ? text((event as { data: unknown }).data) : ""));
  }
}
