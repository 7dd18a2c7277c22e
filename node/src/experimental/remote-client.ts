// What `experimental/ws-client` and `experimental/http-client` share: the
// official SDK's remote client streams, as engine connections (the engine
// dials, frames, keeps the affinity cookies and bounds what it reads).

import { checkedMaxMessageBytes } from "../stream-limits.js";
import { kOpen, remoteStream, type MessageStream, type Opener, type Stream } from "../streams.js";

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
  readonly cookieStore?: AcpCookieStore;
  readonly maxMessageBytes?: number;
}

/**
 * A remote agent's stream: give it to a connection (`client().connect`,
 * `ClientSideConnection`), which the engine runs over it. Its `readable` and
 * `writable` are not offered: the engine reads and writes the messages
 * itself, so there is no JS stream of them to hand out.
 */
export class RemoteClientStream implements Stream, MessageStream {
  readonly kind = "remote" as const;
  readonly #stream: Stream;

  constructor(url: string, schemes: readonly string[], options: RemoteClientOptions) {
    const scheme = new URL(url).protocol.slice(0, -1);
    if (!schemes.includes(scheme)) {
      throw new TypeError(`acp-engine: ${url}: expected a ${schemes.join(": or ")}: URL`);
    }
    const headers = new Headers(options.headers);
    // The store's cookies go with the first request; the engine keeps what
    // the server sets for the rest of the connection, its reconnects included.
    options.cookieStore?.apply(headers);
    this.#stream = remoteStream(url, {
      headers: Object.fromEntries(headers),
      maxMessageSize: checkedMaxMessageBytes(options.maxMessageBytes),
    });
  }

  get readable(): ReadableStream<unknown> {
    throw notOffered();
  }

  get writable(): WritableStream<unknown> {
    throw notOffered();
  }

  /** @internal */
  get [kOpen](): Opener {
    return this.#stream[kOpen];
  }
}

function notOffered(): TypeError {
  return new TypeError(
    "acp-engine: a remote stream's messages are read and written by the engine: give the stream to a connection",
  );
}
