// What serves a connection, as the official SDK types it (its root exports
// these): an agent app (`agent()`) or a protocol router, which the servers of
// `experimental/server` connect for each client.

import type { Stream } from "../streams.js";

/** The official SDK's options for `connect`. Accepted for its signature: an
 * acp-engine app runs its `onConnect` handlers when it connects. */
export interface AgentConnectOptions {
  readonly deferConnectHandlers?: boolean;
}

/** What `connect` may return: how the connection ends, and how its `onConnect` handlers start. */
export interface AgentConnectionLifecycle {
  readonly closed?: Promise<void>;
  startConnectHandlers?(): void;
}

/** Anything with the apps' `connect`: an agent app or a protocol router. */
export interface AgentConnector {
  connect(stream: Stream, options?: AgentConnectOptions): AgentConnectionLifecycle | unknown;
}
