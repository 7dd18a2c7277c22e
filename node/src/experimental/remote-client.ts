// What `experimental/ws-client` and `experimental/http-client` share: the
// official SDK's remote client streams, as engine connections (the engine
// dials, frames, keeps the affinity cookies and bounds what it reads).

import { NativeConnection, type RemoteSettings } from "../native.js";
import { checkedMaxMessageBytes } from "../stream-limits.js";
import {
  kOpen,
  messageStream,
  remoteSettings,
  settings,
  type MessageStream,
  type Opener,
  type Stream,
  type StreamOptions,
} from "../streams.js";
import { dialledMessages } from "./dialled-messages.js";

/** The official SDK's affinity cookie store: cookies from `Set-Cookie`, sent back as `Cookie`. */
export interface AcpCookieStore {
  /** Stores cookies from response headers. */
  store(headers: Headers): void;
  /** Applies stored cookies to outgoing request headers. */
  apply(headers: Headers): void;
  /** Clears all stored cookies. */
  clear(): void;
}

/** An in-memory `AcpCookieStore`: `name=value` pairs only, as the official one. */
export class MemoryAcpCookieStore implements AcpCookieStore {
  readonly #cookies = new Map<string, string>();

  store(headers: Headers): void {
    for (const set of headers.getSetCookie()) {
      const pair = set.split(";", 1)[0] ?? "";
      const equals = pair.indexOf("=");
      if (equals > 0) this.#cookies.set(pair.slice(0, equals).trim(), pair.slice(equals + 1).trim());
    }
  }

  apply(headers: Headers): void {
    if (this.#cookies.size === 0) return;
    const ours = [...this.#cookies].map(([name, value]) => `${name}=${value}`);
    const theirs = headers.get("cookie");
    headers.set("cookie", theirs ? `${theirs}; ${ours.join("; ")}` : ours.join("; "));
  }

  clear(): void {
    this.#cookies.clear();
  }
}

/** What a remote client stream is told: the official options the engine takes. */
export interface RemoteClientOptions {
  readonly headers?: Record<string, string>;
  /** `omit`: the cookie store is neither sent nor given the server's cookies. */
  readonly cookies?: "include" | "omit";
  readonly cookieStore?: AcpCookieStore;
  readonly maxMessageBytes?: number;
}

/**
 * A remote agent's stream. Given untouched to a connection (`client().connect`,
 * `ClientSideConnection`), the engine runs the connection over it itself.
 * Its `readable` and `writable` are the official SDK's messages, for code
 * that reads or writes them by hand (a tap, a proxy): the first use of
 * either dials the agent, and a connection given the stream afterwards runs
 * over those messages.
 */
export class RemoteClientStream implements Stream, MessageStream {
  readonly kind = "remote" as const;
  readonly #remote: RemoteSettings;
  readonly #streamOptions: StreamOptions;
  readonly #storeCookies: ((setCookies: string[]) => void) | undefined;
  #messages: MessageStream | undefined;

  constructor(url: string, schemes: readonly string[], options: RemoteClientOptions) {
    const scheme = new URL(url).protocol.slice(0, -1);
    if (!schemes.includes(scheme)) {
      throw new TypeError(`acp-engine: ${url}: expected a ${schemes.join(": or ")}: URL`);
    }
    const headers = new Headers(options.headers);
    const cookieStore = options.cookies === "omit" ? undefined : options.cookieStore;
    // The store's cookies go with the first request; the engine keeps what
    // the server sets for the rest of the connection, its reconnects included,
    // and the handshake's go to the store too, for the caller's next stream.
    cookieStore?.apply(headers);
    this.#storeCookies =
      cookieStore && ((setCookies) => cookieStore.store(new Headers(setCookies.map((value) => ["set-cookie", value]))));
    this.#remote = remoteSettings(url, { headers: Object.fromEntries(headers) });
    this.#streamOptions = { maxMessageSize: checkedMaxMessageBytes(options.maxMessageBytes) };
  }

  get readable(): ReadableStream<unknown> {
    return this.#dialled().readable;
  }

  get writable(): WritableStream<unknown> {
    return this.#dialled().writable;
  }

  /** @internal */
  get [kOpen](): Opener {
    if (this.#messages) return messageStream(this.#messages, this.#streamOptions)[kOpen];
    return (side, unstable, wake, _host, open) =>
      NativeConnection.remote(settings(side, unstable, this.#streamOptions, open), this.#remote, wake, this.#storeCookies);
  }

  #dialled(): MessageStream {
    this.#messages ??= dialledMessages(this.#remote, this.#streamOptions.maxMessageSize, this.#storeCookies);
    return this.#messages;
  }
}
