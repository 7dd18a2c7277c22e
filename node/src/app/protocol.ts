// What an app needs of the generated method table it was made for (stable
// or unstable): the generated modules pass it to the app classes.

import type { HandlerTable } from "../sides.js";

export interface MethodNames {
  agent: {
    session: { new: string; prompt: string; close: string; delete: string; setConfigOption?: string; update?: string };
    /** v2 only: cancelling one tool call or terminal. */
    toolCall?: { cancel: string };
    terminal?: { cancel: string };
  };
  client: {
    session: { update: string };
    /** v1 only: v2 has no client terminals. */
    terminal?: { create: string; output: string; waitForExit: string; kill: string; release: string };
  };
}

export interface AppProtocol {
  /** Whether the engine lets the unstable methods through. */
  readonly unstable: boolean;
  /** The ACP version the method table is of (1, or 2 for the draft). */
  readonly protocolVersion: number;
  readonly methods: MethodNames;
  /** Requests whose `null` result reads as `{}`. */
  readonly emptyResults: ReadonlySet<string>;
  /** Requests whose -32002 (the session is gone) reads as success: closing twice. */
  readonly idempotentMethods: ReadonlySet<string>;
  /** The agent's `initialize`: with a handler for it, nothing else is served before it succeeded. */
  readonly initializeMethod: string;
  /** The methods each side handles (which need no params parser). */
  readonly agentHandlers: HandlerTable;
  readonly clientHandlers: HandlerTable;
}
