// The app API (the official SDK 2.x's `agent()` / `client()`): handlers
// registered by ACP method name, served on the engine. The engine checks each
// message against the side's schema before a handler sees it; this layer
// only routes and shapes what handlers get.

import { Dispatcher, thenable, type RequestContext } from "../dispatcher.js";
import { logHandlerError, RequestError } from "../errors.js";
import type { MaybePromise } from "../sides.js";
import type { JsonRpcId } from "../jsonrpc.js";
import { ALL_UNCHECKED, ownedByteStream, Side, type MessageStream, type Stream } from "../streams.js";
import { AgentConnection, AgentContext, ClientConnection, ClientContext, sessionRouterOf, type AcpConnection } from "./context.js";
import { initializationOf } from "./initialization.js";
import { parseParams, type AppOptions, type ParamsParser } from "./options.js";
import type { AppProtocol } from "./protocol.js";

/** What a handler gets: the method, its params, the signal and the peer. */
export interface HandlerContext<Params> {
  method: string;
  params: Params;
  /** The request's cancellation (or, for a notification, the connection's close). */
  signal: AbortSignal;
}
export type RequestHandlerContext<Params> = HandlerContext<Params> & { requestId: JsonRpcId };

type AnyRequestHandler = (context: never) => unknown;
type AnyNotificationHandler = (context: never) => unknown;
interface Registered<H> {
  parser?: ParamsParser<unknown>;
  handler: H;
}

const WILDCARD = "*";

/** A stream, or the other side's app to connect to in memory. */
export type ConnectTarget<Peer> = Stream | MessageStream | Peer;

function isApp(target: unknown): target is AppBase<object> {
  return target instanceof AppBase;
}

/** The in-memory peer of a connection made to an app: `connectWith` waits for it. */
const peers = new WeakMap<AcpConnection, AcpConnection>();

/** A pair of in-memory byte pipes between two apps: one engine connection on each end. */
function memoryStreams(): [Stream, Stream] {
  const there = new TransformStream<Uint8Array, Uint8Array>();
  const back = new TransformStream<Uint8Array, Uint8Array>();
  return [ownedByteStream(there.writable, back.readable), ownedByteStream(back.writable, there.readable)];
}

/** Registration and serving, shared by the two sides. */
export abstract class AppBase<Peer extends object> {
  /** @internal */
  protected readonly protocol: AppProtocol;
  readonly #requests = new Map<string, Registered<AnyRequestHandler>>();
  readonly #notifications = new Map<string, Registered<AnyNotificationHandler>>();
  /** @internal */
  protected readonly connectHandlers: ((connection: never) => unknown)[] = [];
  protected abstract readonly side: Side;

  protected constructor(protocol: AppProtocol, _options?: AppOptions) {
    this.protocol = protocol;
  }

  /** @internal */
  protected register(kind: "request" | "notification", method: string, parserOrHandler: unknown, handler: unknown): this {
    const table = kind === "request" ? this.#requests : this.#notifications;
    if (method === WILDCARD) {
      if (handler !== undefined) throw new Error("Wildcard handlers receive raw params; omit the parser.");
      if (table.has(WILDCARD)) throw new Error(`A ${kind} fallback is already registered.`);
    } else if (handler === undefined) {
      const known = (this.side === Side.Agent ? this.protocol.agentHandlers : this.protocol.clientHandlers).get(method);
      if (known === undefined || known.notification !== (kind === "notification")) {
        throw new Error(`Unknown ACP ${kind} method '${method}'. Pass a params parser for custom methods.`);
      }
    }
    const entry =
      handler === undefined
        ? { handler: parserOrHandler as never }
        : { parser: parserOrHandler as ParamsParser<unknown>, handler: handler as never };
    table.set(method, entry);
    return this;
  }

  /** @internal A handler's view of the peer. */
  protected abstract peerContext(dispatcher: Dispatcher, requestId?: JsonRpcId): object;
  /** @internal The handle `connect` returns. */
  abstract connection(dispatcher: Dispatcher): AcpConnection;
  /** @internal Notifications the side consumes before the user's handlers. */
  protected routeNotification(_dispatcher: Dispatcher, _method: string, _params: unknown): void {}
  /** @internal Whether a request may be served yet. */
  protected admit(_dispatcher: Dispatcher, _method: string): void {}
  /** @internal A request was answered. */
  protected answered(_dispatcher: Dispatcher, _method: string): void {}

  /** @internal Handles a request of the connection `dispatcher` runs. */
  handleRequest(dispatcher: Dispatcher, method: string, params: unknown, context: RequestContext): unknown {
    this.admit(dispatcher, method);
    const entry = this.#requests.get(method) ?? this.#requests.get(WILDCARD);
    if (entry === undefined) throw RequestError.methodNotFound(method);
    const parsed = this.parse(entry, params);
    const handlerContext = {
      method,
      params: parsed,
      requestId: context.requestId,
      // Made on first use: most handlers never look at it.
      get signal() {
        return context.signal;
      },
      [this.peerKey]: this.peerContext(dispatcher, context.requestId),
    };
    return this.respond(dispatcher, method, params, () => (entry.handler as (c: unknown) => unknown)(handlerContext));
  }

  /** @internal Handles a notification of the connection `dispatcher` runs. */
  handleNotification(dispatcher: Dispatcher, method: string, params: unknown): undefined {
    this.routeNotification(dispatcher, method, params);
    const entry = this.#notifications.get(method) ?? this.#notifications.get(WILDCARD);
    if (entry === undefined) return undefined;
    try {
      const parsed = this.parse(entry, params);
      const context = { method, params: parsed, signal: dispatcher.controller.signal, [this.peerKey]: this.peerContext(dispatcher) };
      // Handlers start in arrival order; an async one does not hold up the next message.
      const result = (entry.handler as (c: unknown) => unknown)(context);
      if (thenable(result)) Promise.resolve(result).catch((error: unknown) => logHandlerError("notification", method, error));
    } catch (error) {
      logHandlerError("notification", method, error);
    }
    return undefined;
  }

  /** @internal Opens `stream` with this app's handlers. */
  protected open(stream: Stream | MessageStream): Dispatcher {
    // eslint-disable-next-line prefer-const
    let dispatcher: Dispatcher;
    const onRequest = (method: string, params: unknown, context: RequestContext): unknown =>
      this.handleRequest(dispatcher, method, params, context);
    const onNotification = (method: string, params: unknown): undefined => this.handleNotification(dispatcher, method, params);
    dispatcher = new Dispatcher(stream, this.side, this.protocol.unstable, onRequest, onNotification, undefined, {
      ...ALL_UNCHECKED,
      protocolVersions: [this.protocol.protocolVersion],
    });
    return dispatcher;
  }

  /** @internal `client` on the agent's handler contexts, `agent` on the client's. */
  protected abstract readonly peerKey: string;

  private parse(entry: Registered<unknown>, params: unknown): unknown {
    if (entry.parser === undefined) return params;
    try {
      return parseParams(entry.parser, params);
    } catch (error) {
      throw RequestError.invalidParams(error instanceof Error ? { message: error.message } : undefined);
    }
  }

  /** Runs a request's handler; a result it returns at once is answered at
   * once (the dispatcher's fast path), a promise when it settles. (What it
   * throws once cancelled, the dispatcher answers.) */
  private respond(dispatcher: Dispatcher, method: string, params: unknown, run: () => unknown): unknown {
    const result = run();
    if (thenable(result)) return Promise.resolve(result).then((value) => this.answer(dispatcher, method, params, value));
    return this.answer(dispatcher, method, params, result);
  }

  private answer(dispatcher: Dispatcher, method: string, params: unknown, result: unknown): unknown {
    this.answered(dispatcher, method);
    const answer = result == null && this.protocol.emptyResults.has(method) ? {} : result;
    if (method === this.protocol.initializeMethod) initializationOf(dispatcher).complete(params, answer);
    return answer;
  }

  /** @internal Connects, running `onConnect` handlers before the first message is handled. */
  protected connectTo(target: ConnectTarget<Peer>): AcpConnection {
    if (!isApp(target)) {
      const connection = this.connection(this.open(target as Stream | MessageStream));
      this.runConnectHandlers(connection);
      return connection;
    }
    const [mine, theirs] = memoryStreams();
    const peer = target.connection(target.open(theirs));
    const connection = this.connection(this.open(mine));
    // Closing one end ends the other's input: it handles what it read, then closes.
    void peer.closed.then(() => connection.close());
    peers.set(connection, peer);
    target.runConnectHandlers(peer);
    this.runConnectHandlers(connection);
    return connection;
  }

  /** @internal */
  runConnectHandlers(connection: AcpConnection): void {
    for (const handler of this.connectHandlers) {
      let result: unknown;
      try {
        result = handler(connection as never);
      } catch (error) {
        connection.close(error);
        throw error;
      }
      if (result instanceof Promise) result.catch((error: unknown) => connection.close(error));
    }
  }

  /** @internal Connects for the lifetime of `op`, which gets the peer context. */
  protected runWith<T>(target: ConnectTarget<Peer>, op: (peer: never) => MaybePromise<T>): Promise<T> {
    const connection = this.connectTo(target);
    const peer = (connection as unknown as Record<string, unknown>)[this.peerKey];
    return new Promise<T>((resolve, reject) => {
      const signal = connection.signal;
      const onClose = () => reject(signal.reason ?? new Error("ACP connection closed"));
      if (signal.aborted) onClose();
      else signal.addEventListener("abort", onClose, { once: true });
      // Settles once the connection (and an in-memory peer, which handles
      // what was sent to it first) has closed.
      const finish = (settle: () => void) => {
        signal.removeEventListener("abort", onClose);
        connection.close();
        void Promise.all([connection.closed, peers.get(connection)?.closed]).then(settle);
      };
      Promise.resolve()
        .then(() => op(peer as never))
        .then(
          (value) => finish(() => resolve(value)),
          (error: unknown) => finish(() => reject(error)),
        );
    });
  }
}

/** The agent's side of the app API. */
export class AgentAppBase<Peer extends object> extends AppBase<Peer> {
  /** @internal The method table the app was made for (the protocol router reads it). */
  get appProtocol(): AppProtocol {
    return this.protocol;
  }

  protected readonly side = Side.Agent;
  protected readonly peerKey = "client";
  readonly #initialized = new WeakSet<Dispatcher>();
  #gated = false;

  constructor(protocol: AppProtocol, options?: AppOptions) {
    super(protocol, options);
  }

  protected override register(kind: "request" | "notification", method: string, parserOrHandler: unknown, handler: unknown): this {
    if (kind === "request" && method === this.protocol.initializeMethod) this.#gated = true;
    return super.register(kind, method, parserOrHandler, handler);
  }

  protected peerContext(dispatcher: Dispatcher, requestId?: JsonRpcId): object {
    return new AgentContext(dispatcher, this.protocol, requestId);
  }

  connection(dispatcher: Dispatcher): AcpConnection {
    return new AgentConnection(dispatcher, this.protocol);
  }

  protected override admit(dispatcher: Dispatcher, method: string): void {
    if (!this.#gated || method === this.protocol.initializeMethod || this.#initialized.has(dispatcher)) return;
    throw RequestError.invalidRequest(undefined, `ACP connection must be initialized before '${method}'`);
  }

  protected override answered(dispatcher: Dispatcher, method: string): void {
    if (method === this.protocol.initializeMethod) this.#initialized.add(dispatcher);
  }
}

/** The client's side of the app API. */
export class ClientAppBase<Peer extends object> extends AppBase<Peer> {
  protected readonly side = Side.Client;
  protected readonly peerKey = "agent";

  constructor(protocol: AppProtocol, options?: AppOptions) {
    super(protocol, options);
  }

  protected peerContext(dispatcher: Dispatcher, requestId?: JsonRpcId): object {
    return new ClientContext(dispatcher, this.protocol, requestId);
  }

  connection(dispatcher: Dispatcher): AcpConnection {
    return new ClientConnection(dispatcher, this.protocol);
  }

  protected override routeNotification(dispatcher: Dispatcher, method: string, params: unknown): void {
    if (method === this.protocol.methods.client.session.update) sessionRouterOf(dispatcher).route(params);
  }
}
