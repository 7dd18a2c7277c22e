// A connection's `initialize` exchange, as the official SDK's v2
// connections and contexts offer it (`initialized`, an
// `InitializationSnapshot`): the request and the response of the last
// `initialize` that succeeded, copied. It is there once the agent's handler
// answered it (agent side) or its answer came (client side); the engine
// checked the request against the schema before the handler saw it, and the
// client's answer before it resolved. `initialized` rejects if the
// connection closes before any `initialize` succeeded.

import type { Dispatcher } from "../dispatcher.js";

/** The request and the response of a connection's last successful `initialize`. */
export type InitializationSnapshot<Request = unknown, Response = unknown> = Readonly<{
  request: Request;
  response: Response;
}>;

class Initialization {
  #latest: InitializationSnapshot | undefined;
  readonly #first: Promise<void>;
  #resolve!: () => void;

  constructor(signal: AbortSignal) {
    let reject!: (error: unknown) => void;
    this.#first = new Promise<void>((resolve, rejectFirst) => {
      this.#resolve = resolve;
      reject = rejectFirst;
    });
    // Nobody may be reading it: a close before `initialize` is not unhandled.
    this.#first.catch(() => {});
    const closed = () => {
      if (this.#latest === undefined) reject(signal.reason ?? new Error("ACP connection closed before it was initialized"));
    };
    if (signal.aborted) closed();
    else signal.addEventListener("abort", closed, { once: true });
  }

  /** An `initialize` succeeded: it is the connection's snapshot from now on. */
  complete(request: unknown, response: unknown): void {
    this.#latest = structuredClone({ request, response });
    this.#resolve();
  }

  get initialized(): Promise<InitializationSnapshot> {
    return this.#first.then(() => structuredClone(this.#latest as InitializationSnapshot));
  }
}

const initializations = new WeakMap<Dispatcher, Initialization>();

/** The `initialize` exchange of the connection `dispatcher` runs. */
export function initializationOf(dispatcher: Dispatcher): Initialization {
  let initialization = initializations.get(dispatcher);
  if (initialization === undefined) {
    initializations.set(dispatcher, (initialization = new Initialization(dispatcher.controller.signal)));
  }
  return initialization;
}
