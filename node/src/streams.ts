// Streams: what a connection runs over. The engine owns the bytes and the
// framing in every case; these only say where the bytes come from and go.

import { LineSplitter, messageView } from "./message-view.js";
import { NativeConnection, type RemoteSettings } from "./native.js";
import { checkedMaxMessageBytes } from "./stream-limits.js";

/** Which side of ACP a connection plays: the engine checks what it receives
 * and sends against that side's methods (`Raw`: no checks). */
export enum Side {
  Raw = 0,
  Agent = 1,
  Client = 2,
}

/** How a stream opens its native connection. */
/** What an opened stream may ask of the connection's dispatcher: to move
 * the bytes of web streams the engine cannot read itself. */
export interface ByteStreamHost {
  /** `closeOutput`: the output is ours (an in-memory pipe), closed when the connection ends. */
  attachByteStreams(
    native: NativeConnection,
    output: WritableStream<Uint8Array>,
    input: ReadableStream<Uint8Array>,
    closeOutput: boolean,
  ): void;
}

/** What the connection adds to the stream's own options. */
export interface OpenOptions {
  /** Unchecked methods besides the stream's own `uncheckedMethods` (the class API and the app API: `*`). */
  uncheckedMethods?: readonly string[];
  /** The ACP versions the connection speaks (default: 1), selected at `initialize`. */
  protocolVersions?: readonly number[];
}

export type Opener = (side: Side, unstable: boolean, wake: () => void, host: ByteStreamHost, open?: OpenOptions) => NativeConnection;

export const kOpen: unique symbol = Symbol("acp-engine.open");

/** Where a connection's bytes go: make one with `ndJsonStream`, `stdioStream`
 * or `spawnStream`. */
export interface Stream {
  readonly kind: "ndjson" | "stdio" | "spawn" | "remote";
  /** @internal */
  readonly [kOpen]: Opener;
}

/** An official-SDK style stream of JSON-RPC message objects. */
export interface MessageStream {
  writable: WritableStream<unknown>;
  readable: ReadableStream<unknown>;
}

/**
 * Bounds on what a connection holds for a peer that stops reading. While the
 * peer's requests in flight reach `maxInFlightRequests` or the output queued
 * for it reaches `maxBufferedBytes`, the engine reads nothing more (the
 * peer's writes then wait: backpressure). With `outputStallTimeoutMs`, a wait
 * in which nothing is written and no request finishes for that long closes
 * the connection. Unset: the engine's default (`LIMIT_DEFAULTS`; no
 * timeout).
 */
export interface Limits {
  maxInFlightRequests?: number;
  maxBufferedBytes?: number;
  outputStallTimeoutMs?: number;
}

export interface StreamOptions {
  /** The largest inbound message, in bytes (default `LIMIT_DEFAULTS.maxMessageSize`). */
  maxMessageSize?: number;
  /** What the connection may hold for a peer that is not reading. */
  limits?: Limits;
  /**
   * @deprecated The class API and the app API send and receive methods
   * outside the ACP schema as they are, as the official SDK does, so
   * listing them changes nothing. Kept so that code that lists them
   * compiles.
   */
  uncheckedMethods?: readonly string[];
}

export interface SpawnOptions extends StreamOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Start the agent with `env` only, not this process's environment plus `env`. */
  clearEnv?: boolean;
  /** The agent's stderr: passed through (default) or dropped. */
  stderr?: "inherit" | "ignore";
  /** How long the agent may take to exit after its stdin closed before it is killed (default 500). */
  exitGraceMs?: number;
}

/** @internal The engine's name for "every method outside the schema"
 * (`UncheckedMethods::ALL`): custom methods, as in the official SDK (the
 * class API of 1.x and the app API of 2.x), sent and received as they are
 * (the schema's own methods are still checked). */
export const ALL_UNCHECKED: OpenOptions = { uncheckedMethods: ["*"] };

/** @internal A connection's settings for the native side. */
export function settings(side: Side, unstable: boolean, options: StreamOptions | undefined, open?: OpenOptions) {
  const limits = options?.limits;
  const unchecked = [...(options?.uncheckedMethods ?? []), ...(open?.uncheckedMethods ?? [])].map(String);
  return {
    side,
    unstable,
    maxMessageSize: options?.maxMessageSize,
    maxInFlightRequests: limits?.maxInFlightRequests,
    maxBufferedBytes: limits?.maxBufferedBytes,
    outputStallTimeoutMs: limits?.outputStallTimeoutMs,
    uncheckedMethods: unchecked.length === 0 ? undefined : unchecked,
    protocolVersions: open?.protocolVersions === undefined ? undefined : [...open.protocolVersions],
  };
}

/**
 * Newline-delimited JSON over Web Streams, for any transport a user brings.
 * Given to a connection, framing and parsing stay in the engine: the bytes
 * of `input` are fed to it and the bytes it writes go to `output`. As with
 * the official SDK, the connection never closes `output`: the caller ends
 * it (a child's stdin, a socket) when it is done with it.
 *
 * It is also the official SDK's `{ readable, writable }` of JSON-RPC message
 * objects, for code that reads or writes messages itself: once either is
 * taken, a connection given this stream runs over those messages.
 */
export function ndJsonStream(
  output: WritableStream<Uint8Array>,
  input: ReadableStream<Uint8Array>,
  options?: NdJsonStreamOptions,
): NdJsonStream {
  const maxMessageBytes = checkedMaxMessageBytes(options?.maxMessageBytes);
  return new NdJsonStream(output, input, maxMessageBytes === undefined ? options : { ...options, maxMessageSize: maxMessageBytes });
}

/** `ndJsonStream`'s options: the official SDK's name for the message limit too. */
export interface NdJsonStreamOptions extends StreamOptions {
  /** The official SDK's name for `maxMessageSize` (default `DEFAULT_MAX_MESSAGE_BYTES`); it wins when both are given. */
  maxMessageBytes?: number;
}

/** What `ndJsonStream` returns: a stream for a connection, and its messages. */
export class NdJsonStream implements Stream, MessageStream {
  readonly kind = "ndjson" as const;
  private messages?: MessageStream;

  constructor(
    private readonly output: WritableStream<Uint8Array>,
    private readonly input: ReadableStream<Uint8Array>,
    private readonly options?: StreamOptions,
  ) {}

  /** The messages read from `input` (a line that is not a JSON object is answered on `output`). */
  get readable(): ReadableStream<unknown> {
    return this.messageView().readable;
  }

  /** Messages written to `output`, one line each. */
  get writable(): WritableStream<unknown> {
    return this.messageView().writable;
  }

  /** @internal */
  [kOpen](side: Side, unstable: boolean, wake: () => void, host: ByteStreamHost, open?: OpenOptions): NativeConnection {
    const stream = this.messages
      ? messageStream(this.messages, this.options)
      : byteStream(this.output, this.input, this.options, false);
    return stream[kOpen](side, unstable, wake, host, open);
  }

  private messageView(): MessageStream {
    this.messages ??= messageView(this.output, this.input, this.options?.maxMessageSize);
    return this.messages;
  }
}

/** @internal Web Streams the package made itself (in-memory pipes): the
 * connection closes `output` when it ends, which is the peer's end of input. */
export function ownedByteStream(output: WritableStream<Uint8Array>, input: ReadableStream<Uint8Array>): Stream {
  return byteStream(output, input, undefined, true);
}

function byteStream(
  output: WritableStream<Uint8Array>,
  input: ReadableStream<Uint8Array>,
  options: StreamOptions | undefined,
  closeOutput: boolean,
): Stream {
  return {
    kind: "ndjson",
    [kOpen](side, unstable, wake, host, open) {
      const native = NativeConnection.pipe(settings(side, unstable, options, open), wake);
      host.attachByteStreams(native, output, input, closeOutput);
      return native;
    },
  };
}

/** This process's stdin/stdout, driven by the engine (an agent launched by its client). */
export function stdioStream(options?: StreamOptions): Stream {
  return {
    kind: "stdio",
    [kOpen](side, unstable, wake, _host, open) {
      return NativeConnection.stdio(settings(side, unstable, options, open), wake);
    },
  };
}

export interface RemoteStreamOptions extends StreamOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** More headers for the WebSocket handshake or every HTTP request (an API gateway's key, say). */
  headers?: Record<string, string>;
  /** A PEM file of CA certificates to trust besides the system's (`wss://`, `https://`). */
  caFile?: string;
  /**
   * When a Streamable HTTP event stream breaks, reopen it after the last
   * event received (the server sends what was lost, once); resume a broken
   * WebSocket likewise (docs/websocket-resume.md); retry POSTs that cannot
   * reach the server; with backoff, for up to this many ms
   * before the connection closes. 0 or absent (the default): close at the
   * first break, so that a dead server fails what is pending at once.
   */
  reconnectTimeoutMs?: number;
  /**
   * How long the server has to take the connection (the TCP connect, the
   * TLS handshake and the WebSocket upgrade), in ms; one that has not by
   * then closes the connection with the reason. Absent: 10 s
   * (`LIMIT_DEFAULTS.connectTimeoutMs`); 0: wait for ever.
   */
  connectTimeoutMs?: number;
}

/**
 * A remote agent at `url`: `ws://` or `wss://` (WebSocket), `http://` or
 * `https://` (Streamable HTTP), as `acp-engine serve` and the official SDKs'
 * servers (`AcpServer`) serve them, driven by the engine. The connection is
 * made in the background; if it fails, the connection closes with the
 * reason and pending calls reject.
 */
export function remoteStream(url: string, options: RemoteStreamOptions = {}): Stream {
  return {
    kind: "remote",
    [kOpen](side, unstable, wake, _host, open) {
      return NativeConnection.remote(settings(side, unstable, options, open), remoteSettings(url, options), wake);
    },
  };
}

/** @internal What the engine is told of a remote agent. */
export function remoteSettings(url: string, options: RemoteStreamOptions): RemoteSettings {
  return {
    url,
    token: options.token,
    caFile: options.caFile,
    reconnectTimeoutMs: options.reconnectTimeoutMs,
    headers: Object.entries(options.headers ?? {}).map(([name, value]) => ({ name, value: String(value) })),
    connectTimeoutMs: options.connectTimeoutMs,
  };
}

/**
 * Spawn an agent process and talk to it over its stdin/stdout, driven by
 * the engine. The process is started when a connection is made on the
 * returned stream (a failure to start it throws there, as a RequestError);
 * closing the connection closes its stdin, then kills it if it has not
 * exited within `exitGraceMs`.
 */
export function spawnStream(command: string, args: readonly string[] = [], options: SpawnOptions = {}): Stream {
  return {
    kind: "spawn",
    [kOpen](side, unstable, wake, _host, open) {
      const env =
        options.env === undefined
          ? undefined
          : Object.fromEntries(
              Object.entries(options.env)
                .filter((entry): entry is [string, string] => entry[1] !== undefined)
                .map(([key, value]) => [key, String(value)]),
            );
      return NativeConnection.spawn(
        settings(side, unstable, options, open),
        command,
        args.map(String),
        {
          cwd: options.cwd,
          env,
          clearEnv: options.clearEnv,
          inheritStderr: options.stderr === undefined ? undefined : options.stderr === "inherit",
          exitGraceMs: options.exitGraceMs,
        },
        wake,
      );
    },
  };
}

/** An official-SDK style stream of message objects, as bytes for the engine. */
export function messageStream(stream: MessageStream, options?: StreamOptions): Stream {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const lines = new LineSplitter();
  const messageWriter = stream.writable.getWriter();
  messageWriter.closed.catch(() => {});
  const output = new WritableStream<Uint8Array>({
    write(bytes) {
      let last: Promise<void> | undefined;
      for (const line of lines.push(bytes)) {
        const text = decoder.decode(line).trim();
        if (text) last = messageWriter.write(JSON.parse(text));
      }
      return last;
    },
    close() {
      return messageWriter.close();
    },
  });
  const messages = stream.readable.getReader();
  const input = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await messages.read();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(`${JSON.stringify(value)}\n`));
    },
    cancel(reason) {
      return messages.cancel(reason);
    },
  });
  return byteStream(output, input, options, true);
}

/** The stream a connection runs over: ours, or an official-SDK message stream. */
export function toStream(stream: Stream | MessageStream): Stream {
  if (stream !== null && typeof stream === "object" && typeof (stream as Stream)[kOpen] === "function") {
    return stream as Stream;
  }
  const messages = stream as MessageStream | null;
  if (messages && messages.readable && messages.writable) return messageStream(messages);
  throw new TypeError("acp-engine: expected a stream from ndJsonStream(), stdioStream() or spawnStream()");
}
