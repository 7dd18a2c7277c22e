// What an app's handlers and `connectWith` get to call the peer with (the
// official SDK 2.x's `AgentContext` / `ClientContext`), and the handle of an
// open connection (`AgentConnection` / `ClientConnection`).

import type { Dispatcher } from "../dispatcher.js";
import { isRequestError } from "../errors.js";
import { ERROR_CODES } from "../generated/tables.js";
import { TerminalHandle, type TerminalCalls } from "../terminal.js";
import type { JsonRpcId } from "../jsonrpc.js";
import { initializationOf, type InitializationSnapshot } from "./initialization.js";
import type { AppProtocol } from "./protocol.js";
import type { SendRequestOptions } from "./options.js";
import { SessionBuilder, type ActiveSession } from "./session.js";
import { SessionUpdateRouter, type NewSessionRequestLike, type NewSessionRequestShape, type SessionCalls } from "./session-queue.js";

/** A request map: wire method -> its params and result types. */
export type RequestMap = Record<string, { params: unknown; result: unknown }>;
/** A notification map: wire method -> its params type. */
export type NotificationMap = Record<string, { params: unknown }>;

/** What every context shares: the connection and the request being handled. */
export class AcpContext<PeerRequests extends RequestMap, PeerNotifications extends NotificationMap, Initialization = InitializationSnapshot> {
  /** @internal */
  readonly dispatcher: Dispatcher;
  /** @internal */
  readonly protocol: AppProtocol;
  readonly #requestId: JsonRpcId | undefined;

  /** @internal */
  constructor(dispatcher: Dispatcher, protocol: AppProtocol, requestId?: JsonRpcId) {
    this.dispatcher = dispatcher;
    this.protocol = protocol;
    this.#requestId = requestId;
  }

  /** The id of the request being handled (`undefined` outside a request handler). */
  get requestId(): JsonRpcId | undefined {
    return this.#requestId;
  }

  /** The connection's last successful `initialize` exchange, once there is one. */
  get initialized(): Promise<Initialization> {
    return initializationOf(this.dispatcher).initialized as Promise<Initialization>;
  }

  /** Sends a request to the peer by ACP method name. */
  request<Method extends keyof PeerRequests & string>(
    method: Method,
    params: PeerRequests[Method]["params"],
    options?: SendRequestOptions,
  ): Promise<PeerRequests[Method]["result"]>;
  request<Response = unknown, Params = unknown>(method: string, params?: Params, options?: SendRequestOptions): Promise<Response>;
  request(method: string, params?: unknown, options?: SendRequestOptions): Promise<unknown> {
    const { id, promise } = this.dispatcher.sendRequestWithId(method, params);
    const signal = options?.cancellationSignal;
    let settled = promise;
    if (signal !== undefined && id !== undefined) {
      const cancel = () => this.dispatcher.cancelPendingRequest(id);
      if (signal.aborted) cancel();
      else {
        signal.addEventListener("abort", cancel, { once: true });
        settled = promise.finally(() => signal.removeEventListener("abort", cancel));
      }
    }
    if (this.protocol.idempotentMethods.has(method)) {
      // Closing or deleting a session twice is not an error.
      settled = settled.catch((error: unknown) => {
        if (isRequestError(error) && error.code === ERROR_CODES.resourceNotFound) return {};
        throw error;
      });
    }
    if (method === this.protocol.initializeMethod) {
      settled = settled.then((result) => {
        initializationOf(this.dispatcher).complete(params, result);
        return result;
      });
    }
    if (!this.protocol.emptyResults.has(method)) return settled;
    return settled.then((result) => result ?? {});
  }

  /** Sends a notification to the peer by ACP method name. */
  notify<Method extends keyof PeerNotifications & string>(method: Method, params: PeerNotifications[Method]["params"]): Promise<void>;
  notify<Params = unknown>(method: string, params?: Params): Promise<void>;
  notify(method: string, params?: unknown): Promise<void> {
    return this.dispatcher.sendNotification(method, params);
  }
}

/** An agent's way to call its client: in handlers (`ctx.client`), `onConnect` and `connectWith`. */
export class AgentContext<
  PeerRequests extends RequestMap = RequestMap,
  PeerNotifications extends NotificationMap = NotificationMap,
  Initialization = InitializationSnapshot,
> extends AcpContext<PeerRequests, PeerNotifications, Initialization> {
  /** Runs a command in a new client terminal; release the handle when done (`await using` does). */
  async createTerminal(params: { sessionId: string; command: string; [key: string]: unknown }, options?: SendRequestOptions): Promise<TerminalHandle> {
    const terminal = this.protocol.methods.client.terminal;
    if (terminal === undefined) throw new Error("createTerminal: ACP v2 has no client terminals");
    const created = (await this.request(terminal.create, params, options)) as { terminalId: string };
    const calls: TerminalCalls = {
      terminalOutput: (p) => this.request(terminal.output, p) as never,
      waitForTerminalExit: (p) => this.request(terminal.waitForExit, p) as never,
      killTerminal: (p) => this.request(terminal.kill, p) as never,
      releaseTerminal: (p) => this.request(terminal.release, p) as never,
    };
    return new TerminalHandle(created.terminalId, params.sessionId, calls);
  }
}

/** Where the client's active sessions get their updates, one router per connection. */
const routers = new WeakMap<Dispatcher, SessionUpdateRouter>();
export function sessionRouterOf(dispatcher: Dispatcher): SessionUpdateRouter {
  let router = routers.get(dispatcher);
  if (router === undefined) routers.set(dispatcher, (router = new SessionUpdateRouter()));
  return router;
}

/** A client's way to call its agent: `connectWith`'s callback, `ctx.agent` in handlers. */
export class ClientContext<
  PeerRequests extends RequestMap = RequestMap,
  PeerNotifications extends NotificationMap = NotificationMap,
  Session = ActiveSession,
  NewSessionRequest extends NewSessionRequestShape = NewSessionRequestLike,
  Initialization = InitializationSnapshot,
> extends AcpContext<PeerRequests, PeerNotifications, Initialization> {
  /** A builder for a session: `cwd` alone, or a whole `session/new` request. */
  buildSession(cwd: string): SessionBuilder<NewSessionRequest, Session>;
  buildSession(request: NewSessionRequest): SessionBuilder<NewSessionRequest, Session>;
  buildSession(cwdOrRequest: string | NewSessionRequest): SessionBuilder<NewSessionRequest, Session> {
    const request = (typeof cwdOrRequest === "string" ? { cwd: cwdOrRequest, mcpServers: [] } : cwdOrRequest) as NewSessionRequest;
    const calls: SessionCalls = {
      request: (method, params, options) => this.request(method, params, options),
      sessionRouter: sessionRouterOf(this.dispatcher),
      connectionSignal: this.dispatcher.controller.signal,
      methods: this.protocol.methods.agent,
      protocolVersion: this.protocol.protocolVersion,
    };
    return new SessionBuilder<NewSessionRequest, Session>(calls, request);
  }
}

/** An open connection of an app. */
export class AcpConnection<Initialization = InitializationSnapshot> {
  /** @internal */
  readonly dispatcher: Dispatcher;

  /** @internal */
  constructor(dispatcher: Dispatcher) {
    this.dispatcher = dispatcher;
  }

  /** Aborts when the connection closes. */
  get signal(): AbortSignal {
    return this.dispatcher.controller.signal;
  }

  /** Resolves when the connection is closed. */
  get closed(): Promise<void> {
    return this.dispatcher.closed;
  }

  /** The last successful `initialize` exchange, once there is one; rejects if the connection closes first. */
  get initialized(): Promise<Initialization> {
    return initializationOf(this.dispatcher).initialized as Promise<Initialization>;
  }

  /** Closes the connection; pending requests reject. */
  close(_error?: unknown): void {
    this.dispatcher.close();
  }
}

/** An agent app's connection: `client` calls the client. */
export class AgentConnection<
  PeerRequests extends RequestMap = RequestMap,
  PeerNotifications extends NotificationMap = NotificationMap,
  Initialization = InitializationSnapshot,
> extends AcpConnection<Initialization> {
  readonly client: AgentContext<PeerRequests, PeerNotifications, Initialization>;

  /** @internal */
  constructor(dispatcher: Dispatcher, protocol: AppProtocol) {
    super(dispatcher);
    this.client = new AgentContext(dispatcher, protocol);
  }
}

/** A client app's connection: `agent` calls the agent. */
export class ClientConnection<
  PeerRequests extends RequestMap = RequestMap,
  PeerNotifications extends NotificationMap = NotificationMap,
  Session = ActiveSession,
  NewSessionRequest extends NewSessionRequestShape = NewSessionRequestLike,
  Initialization = InitializationSnapshot,
> extends AcpConnection<Initialization> {
  readonly agent: ClientContext<PeerRequests, PeerNotifications, Session, NewSessionRequest, Initialization>;

  /** @internal */
  constructor(dispatcher: Dispatcher, protocol: AppProtocol) {
    super(dispatcher);
    this.agent = new ClientContext(dispatcher, protocol);
  }
}
