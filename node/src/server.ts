// Serving agents to remote clients: the engine's server (WebSocket and
// Streamable HTTP on one endpoint, as the official SDKs' clients speak them)
// hands each connection to this thread, which starts a new agent on it.

// The class API of the root (index.ts): 1.x's, with the unstable methods.
import { AgentSideConnection, type Agent } from "./generated/unstable/methods.js";
import { NativeServer } from "./native.js";
import { kOpen, settings, type Stream, type StreamOptions } from "./streams.js";

export interface ServeAgentOptions extends StreamOptions {
  /** Where to listen (default 127.0.0.1; loopback unless you mean it). */
  host?: string;
  /** The port (default 0: one the system picks; see `AgentServer.port`). */
  port?: number;
  /** The endpoint (default `/acp`). */
  path?: string;
  /** Clients must send `Authorization: Bearer <token>` (401 otherwise, before any agent starts). */
  token?: string;
  /** PEM files to serve `wss://` and `https://`. */
  tlsCert?: string;
  tlsKey?: string;
  /** Connections open at once (default `LIMIT_DEFAULTS.maxConnections`; beyond it 503). */
  maxConnections?: number;
  /** Drop a client that takes nothing this long while output waits (default `LIMIT_DEFAULTS.serverOutputStallTimeoutMs`; 0: never). */
  outputStallTimeoutMs?: number;
  /** Streamable HTTP: output held per connection for its client (default `LIMIT_DEFAULTS.maxBufferedBytes`). */
  maxBufferedBytes?: number;
  /** Streamable HTTP: event-stream output kept per connection after sending, for clients that resume with `Last-Event-ID` (default `LIMIT_DEFAULTS.maxReplayBytes`; a resume needing more gets 410). */
  maxReplayBytes?: number;
  /** Streamable HTTP: end a connection with no event stream open and nothing sent this long (default `LIMIT_DEFAULTS.idleTimeoutMs`; 0: never). */
  idleTimeoutMs?: number;
  /** Streamable HTTP: the longest session or request id a client may send, in bytes; longer is answered 400 (default `LIMIT_DEFAULTS.maxIdLength`). */
  maxIdLength?: number;
  /** Streamable HTTP: sessions of a connection holding output no client reads; one more ends the connection (default `LIMIT_DEFAULTS.maxBufferedSessionStreams`). */
  maxBufferedSessionStreams?: number;
  /** Let several clients share a session (default false): a `session/load` of a session live on another connection attaches as an observer, with its history, every update and each permission request (the first answer wins); it may not prompt. docs/session-attach.md */
  attach?: boolean;
}

/** A running server: every connection gets its own agent. Made by `serveAgent`. */
export class AgentServer {
  readonly #native: NativeServer;
  readonly #connections = new Set<AgentSideConnection>();
  #closing: Promise<void> | undefined;

  /** @internal */
  constructor(native: NativeServer) {
    this.#native = native;
  }

  /** `ws://HOST:PORT/acp` (`wss://` with TLS). */
  get websocketUrl(): string {
    return this.#native.websocketUrl;
  }

  /** `http://HOST:PORT/acp` (`https://` with TLS): Streamable HTTP. */
  get httpUrl(): string {
    return this.#native.httpUrl;
  }

  /** The port served (with port 0, the one the system chose). */
  get port(): number {
    return this.#native.port;
  }

  /** Connections open now. */
  get connections(): number {
    return this.#native.connections();
  }

  /** @internal */
  _accept(toAgent: (connection: AgentSideConnection) => Agent, options: StreamOptions): void {
    while (this.#native.waiting() > 0) {
      const native = this.#native;
      const stream: Stream = {
        kind: "remote",
        [kOpen](side, unstable, wake, _host, open) {
          const accepted = native.accept(settings(side, unstable, options, open), wake);
          if (!accepted) throw new Error("no accepted connection waits");
          return accepted;
        },
      };
      const connection = new AgentSideConnection(toAgent, stream);
      this.#connections.add(connection);
      void connection.closed.then(() => this.#connections.delete(connection));
    }
  }

  /** Stop accepting and end every connection: each agent's connection closes,
   * failing what is pending on both sides. */
  close(): Promise<void> {
    return this.#stop(() => this.#native.close());
  }

  /** Drain, then stop: take no new connection (503; `/readyz` says
   * `draining`), end each connection once its agent has answered every
   * request of its client's, and after `timeoutMs` (default 30 s) end what
   * is left, as `close()` does. Resolves when every connection has ended. */
  drain(timeoutMs = 30_000): Promise<void> {
    return this.#stop(() => this.#native.drain(timeoutMs));
  }

  /** Stop the native server once (its own thread does the waiting), then
   * wait for the connections to close. */
  #stop(stopNative: () => void): Promise<void> {
    this.#closing ??= (async () => {
      stopNative();
      await Promise.all([...this.#connections].map((connection) => connection.closed));
    })();
    return this.#closing;
  }
}

/**
 * Serve `toAgent(connection)` to remote clients, a new agent per connection,
 * over WebSocket and Streamable HTTP at `options.path`:
 *
 *     const server = await serveAgent((conn) => new MyAgent(conn), { port: 8080, token });
 *     console.log(server.httpUrl);
 *
 * The server keeps Node alive until `close()`.
 */
export async function serveAgent(
  toAgent: (connection: AgentSideConnection) => Agent,
  options: ServeAgentOptions = {},
): Promise<AgentServer> {
  if ((options.tlsCert === undefined) !== (options.tlsKey === undefined)) {
    throw new TypeError("tlsCert and tlsKey go together");
  }
  let server: AgentServer | undefined;
  const native = NativeServer.bind(
    `${options.host ?? "127.0.0.1"}:${options.port ?? 0}`,
    {
      path: options.path,
      token: options.token,
      maxConnections: options.maxConnections,
      maxMessageSize: options.maxMessageSize,
      outputStallTimeoutMs: options.outputStallTimeoutMs,
      maxBufferedBytes: options.maxBufferedBytes,
      maxReplayBytes: options.maxReplayBytes,
      idleTimeoutMs: options.idleTimeoutMs,
      maxIdLength: options.maxIdLength,
      maxBufferedSessionStreams: options.maxBufferedSessionStreams,
      tlsCert: options.tlsCert,
      tlsKey: options.tlsKey,
      attach: options.attach,
    },
    () => server?._accept(toAgent, options),
  );
  server = new AgentServer(native);
  // Connections that came before `server` was set.
  server._accept(toAgent, options);
  return server;
}
