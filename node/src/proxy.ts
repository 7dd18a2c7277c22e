// Proxies for ACP proxy chains (`editor -> conductor -> proxy ... -> agent`).
//
// A proxy sits between its predecessor (toward the client) and its successor
// (toward the agent), both reached through its one connection to the
// conductor. The engine splits that connection in two
// (`acp_engine::conductor::split`: `proxy/initialize` arrives as
// `initialize`, the successor's messages are taken out of `proxy/successor`
// and put back in), so a proxy is two plain `Connection`s: one it serves as
// an agent, one it talks to as a client.

import { Connection } from "./connection.js";
import type { RequestContext } from "./dispatcher.js";
import { NativeProxyStreams } from "./native.js";
import { kOpen, settings, type Stream, type StreamOptions } from "./streams.js";

/** Send `method` on `connection`, cancelled when `signal` aborts (the
 * request it serves was cancelled): what a proxy does with a request it
 * passes on. */
export function forwardRequest(connection: Connection, method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
  const { id, promise } = connection.sendRequestWithId(method, params);
  if (signal !== undefined && id !== undefined) {
    const cancel = () => connection.cancelPendingRequest(id);
    if (signal.aborted) cancel();
    else signal.addEventListener("abort", cancel, { once: true });
    void promise.finally(() => signal.removeEventListener("abort", cancel)).catch(() => {});
  }
  return promise;
}

/**
 * What a proxy does with the messages that cross it. Every method's default
 * passes the message on unchanged: extend the class and override what you
 * change. Requests run concurrently; notifications one at a time in arrival
 * order, per direction. A request's `context.signal` aborts when the request
 * it serves is cancelled; `forwardRequest` passes that on.
 */
export class Proxy {
  /** A request from the client side (`initialize` included), on its way to the agent. */
  clientRequest(method: string, params: unknown, successor: Connection, context: RequestContext): unknown {
    return forwardRequest(successor, method, params, context.signal);
  }

  /** A notification from the client side, on its way to the agent. */
  clientNotification(method: string, params: unknown, successor: Connection): unknown {
    return successor.sendNotification(method, params);
  }

  /** A request from the agent side (a permission request, a file read...), on its way to the client. */
  agentRequest(method: string, params: unknown, predecessor: Connection, context: RequestContext): unknown {
    return forwardRequest(predecessor, method, params, context.signal);
  }

  /** A notification from the agent side (`session/update`...), on its way to the client. */
  agentNotification(method: string, params: unknown, predecessor: Connection): unknown {
    return predecessor.sendNotification(method, params);
  }
}

/** This process's stdio (its conductor's connection to it) as a proxy's two
 * streams: `[predecessor, successor]`. Each opens one connection. */
export function proxyStreams(options?: StreamOptions): [Stream, Stream] {
  const streams = NativeProxyStreams.stdio();
  const half = (successor: boolean): Stream => ({
    kind: "stdio",
    [kOpen](side, unstable, wake, _host, open) {
      return streams.open(successor, settings(side, unstable, options, open), wake);
    },
  });
  return [half(false), half(true)];
}

/** Serve `proxy` until the conductor closes its connection (or either side ends). */
export async function runProxy(proxy: Proxy, streams: [Stream, Stream] = proxyStreams()): Promise<void> {
  const [towardClient, towardAgent] = streams;
  // Neither handler runs before both exist: messages are delivered on a later turn.
  let successor!: Connection;
  const predecessor: Connection = new Connection(
    (method, params, context) => proxy.clientRequest(method, params, successor, context),
    (method, params) => proxy.clientNotification(method, params, successor),
    towardClient,
  );
  successor = new Connection(
    (method, params, context) => proxy.agentRequest(method, params, predecessor, context),
    (method, params) => proxy.agentNotification(method, params, predecessor),
    towardAgent,
  );
  await Promise.race([predecessor.closed, successor.closed]);
  predecessor.close();
  successor.close();
  await Promise.allSettled([predecessor.closed, successor.closed]);
}
