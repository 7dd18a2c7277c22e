// What every connection offers besides its messages: closing it, and
// knowing when it closed.

import type { Dispatcher } from "./dispatcher.js";

export abstract class Lifecycle {
  /** @internal */
  protected abstract readonly dispatcher: Dispatcher;

  /** Close: pending calls fail, running handlers' signals abort, a spawned peer is reaped. */
  close(): void {
    this.dispatcher.close();
  }

  /** Aborts when the connection closes. */
  get signal(): AbortSignal {
    return this.dispatcher.controller.signal;
  }

  /** Resolves once the connection is closed and torn down. */
  get closed(): Promise<void> {
    return this.dispatcher.closed;
  }

  /** The spawned peer's process id (connections made on `spawnStream()`). */
  get pid(): number | undefined {
    return this.dispatcher.native.pid ?? undefined;
  }
}
