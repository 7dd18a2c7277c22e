// What the typed connections share: serving the user's `Agent` or `Client`
// from the generated method table, the sends the generated peer methods go
// through, extensions and lifecycle. The public classes
// (`AgentSideConnection`, `ClientSideConnection`) are generated on top of
// these, one method per peer method of the schema.

import { Dispatcher, warnInvalidNotification, type RequestContext } from "./dispatcher.js";
import { Lifecycle } from "./lifecycle.js";
import { RequestError } from "./errors.js";
import { ALL_UNCHECKED, Side, type MessageStream, type Stream } from "./streams.js";
import { TerminalHandle, type TerminalCalls } from "./terminal.js";

export type { RequestContext } from "./dispatcher.js";

export type MaybePromise<T> = T | Promise<T>;

/** Each wire method a side handles: the handler method names to look for,
 * and whether it is a notification (generated from the schema). */
export type HandlerTable = ReadonlyMap<string, { readonly names: readonly string[]; readonly notification: boolean }>;

type Handler = (...args: unknown[]) => unknown;

/** The user's handler methods, found once (on the first message). */
class Routes {
  readonly requests = new Map<string, Handler>();
  readonly notifications = new Map<string, Handler>();
  readonly extMethod: Handler | null;
  readonly extNotification: Handler | null;

  constructor(impl: Record<string, unknown>, table: HandlerTable) {
    for (const [method, { names, notification }] of table) {
      const name = names.find((each) => typeof impl[each] === "function");
      if (name !== undefined) {
        (notification ? this.notifications : this.requests).set(method, (impl[name] as Handler).bind(impl));
      }
    }
    this.extMethod = typeof impl.extMethod === "function" ? (impl.extMethod as Handler).bind(impl) : null;
    this.extNotification = typeof impl.extNotification === "function" ? (impl.extNotification as Handler).bind(impl) : null;
  }
}

abstract class TypedConnection extends Lifecycle {
  /** @internal */
  protected readonly dispatcher: Dispatcher;

  protected constructor(
    make: (connection: never) => object,
    stream: Stream | MessageStream,
    side: Side,
    table: HandlerTable,
    unstable: boolean,
  ) {
    super();
    let impl: object | null = null;
    let routes: Routes | null = null;
    const ready = (): Routes => (routes ??= new Routes(impl as Record<string, unknown>, table));
    // As in the official SDK 1.x, a method outside the schema is sent and
    // received as it is (the engine checks the schema's own): a method of
    // the table with no handler is not found; the others go to `extMethod` /
    // `extNotification` under their own name.
    const onRequest = (method: string, params: unknown, context: RequestContext): unknown => {
      const routed = ready();
      const handler = routed.requests.get(method);
      if (handler !== undefined) return handler(params, context);
      if (routed.extMethod !== null && !table.has(method)) {
        return routed.extMethod(method, params ?? {}, context);
      }
      throw RequestError.methodNotFound(method);
    };
    const onNotification = (method: string, params: unknown): unknown => {
      const routed = ready();
      const handler = routed.notifications.get(method);
      if (handler !== undefined) return handler(params);
      if (routed.extNotification !== null && !table.has(method)) {
        return routed.extNotification(method, params ?? {});
      }
      return undefined;
    };
    // A handler that has `onInvalidNotification` hears of the peer's
    // notifications that fail the schema; otherwise each is a process warning.
    const onInvalidNotification = (method: string, error: RequestError): void => {
      const hook = (impl as { onInvalidNotification?: unknown } | null)?.onInvalidNotification;
      if (typeof hook === "function") hook.call(impl, method, error);
      else warnInvalidNotification(method, error);
    };
    this.dispatcher = new Dispatcher(stream, side, unstable, onRequest, onNotification, onInvalidNotification, ALL_UNCHECKED);
    impl = make(this as never);
  }

  /** @internal A request to the peer (what the generated peer methods call);
   * `emptyResult`: a result with no required field, where `null` reads as `{}`. */
  protected _request(method: string, params: unknown, emptyResult = false): Promise<unknown> {
    const sent = this.dispatcher.sendRequest(method, params);
    return emptyResult ? sent.then((result) => result ?? {}) : sent;
  }

  /** @internal A notification to the peer. */
  protected _notify(method: string, params: unknown): Promise<void> {
    return this.dispatcher.sendNotification(method, params);
  }

  /** An extension request, sent as it is (`sendRequest`; the official SDK 1.x's
   * `extMethod`: give a custom method its `_` yourself, as the ACP spec asks). */
  extMethod(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.dispatcher.sendRequest(method, params) as Promise<Record<string, unknown>>;
  }

  /** An extension notification, sent as it is (see `extMethod`). */
  extNotification(method: string, params: Record<string, unknown>): Promise<void> {
    return this.dispatcher.sendNotification(method, params);
  }

  /**
   * A request with `method` sent as it is: a method of the peer's side
   * (its params checked as the typed calls' are), or any method outside
   * the schema (a custom one, or one the schema dropped, such as the legacy
   * `session/set_model`), unchecked.
   */
  sendRequest<T = unknown>(method: string, params?: unknown): Promise<T> {
    return this.dispatcher.sendRequest(method, params) as Promise<T>;
  }

  /** A notification with `method` sent as it is (see `sendRequest`). */
  sendNotification(method: string, params?: unknown): Promise<void> {
    return this.dispatcher.sendNotification(method, params);
  }

  /** The official SDK 1.x's name for `sendRequest`. */
  request<T = unknown>(method: string, params?: unknown): Promise<T> {
    return this.sendRequest<T>(method, params);
  }

  /** The official SDK 1.x's name for `sendNotification`. */
  notify(method: string, params?: unknown): Promise<void> {
    return this.sendNotification(method, params);
  }
}

/** The agent's side: serves agent methods, calls the client's. */
export abstract class AgentSide extends TypedConnection {
  protected constructor(make: (connection: never) => object, stream: Stream | MessageStream, table: HandlerTable, unstable: boolean) {
    super(make, stream, Side.Agent, table, unstable);
  }

  /** @internal `terminal/create`, as a handle on the terminal. */
  protected async _createTerminal(method: string, params: { sessionId: string }): Promise<TerminalHandle> {
    const created = (await this._request(method, params)) as { terminalId: string };
    return new TerminalHandle(created.terminalId, params.sessionId, this as unknown as TerminalCalls);
  }
}

/** The client's side: serves client methods, calls the agent's. */
export abstract class ClientSide extends TypedConnection {
  protected constructor(make: (connection: never) => object, stream: Stream | MessageStream, table: HandlerTable, unstable: boolean) {
    super(make, stream, Side.Client, table, unstable);
  }
}
