// The official SDK's `agentProtocolRouter()` (`experimental/v2`): one agent
// serves ACP v1 and v2 clients, each in the version it asks for. The engine
// selects the version at `initialize` (core/src/version.rs: the official
// router's rule) and checks every message against it; this routes each
// message to the app of the selected version, whose connection (and its
// `onConnect` handlers) opens when `initialize` arrives.

import { Dispatcher, type RequestContext } from "../dispatcher.js";
import { RequestError } from "../errors.js";
import { ALL_UNCHECKED, Side, type MessageStream, type Stream } from "../streams.js";
import type { AgentAppBase } from "./app.js";
import type { AcpConnection } from "./context.js";

type AnyAgentApp = AgentAppBase<object>;

/** What `AgentProtocolRouter.connect` returns. */
export interface RoutedAgentConnection {
  /** Resolves when the connection is closed. */
  readonly closed: Promise<void>;
  /** Aborts when the connection closes. */
  readonly signal: AbortSignal;
  /** The ACP version `initialize` selected (undefined until then). */
  readonly protocolVersion: number | undefined;
  /** Closes the connection; pending requests reject. */
  close(error?: unknown): void;
}

/** Routes a client connection to the agent app of the version it negotiates. */
export class AgentProtocolRouter {
  #v1: AnyAgentApp | undefined;
  #v2: AnyAgentApp | undefined;

  /** The ACP v1 agent. */
  withV1(agent: AnyAgentApp): this {
    this.#v1 = agent;
    return this;
  }

  /** The experimental ACP v2 (draft) agent. */
  withV2(agent: AnyAgentApp): this {
    this.#v2 = agent;
    return this;
  }

  /** Serves `stream`: the version's app takes over at `initialize`. */
  connect(stream: Stream | MessageStream): RoutedAgentConnection {
    const apps = new Map<number, AnyAgentApp>();
    for (const app of [this.#v1, this.#v2]) if (app !== undefined) apps.set(app.appProtocol.protocolVersion, app);
    if (apps.size === 0) throw new Error("agentProtocolRouter: configure withV1, withV2 or both before connect");
    const initialize = [...apps.values()][0].appProtocol.initializeMethod;
    const unstable = [...apps.values()].some((app) => app.appProtocol.unstable);
    let selected: { app: AnyAgentApp; connection: AcpConnection } | undefined;
    // eslint-disable-next-line prefer-const
    let dispatcher: Dispatcher;
    const onRequest = (method: string, params: unknown, context: RequestContext): unknown => {
      if (selected === undefined) {
        if (method !== initialize) throw RequestError.invalidRequest(undefined, "first ACP request must be initialize");
        const app = apps.get(dispatcher.native.protocolVersion);
        if (app === undefined) throw RequestError.internalError(undefined, "no app for the selected protocol version");
        selected = { app, connection: app.connection(dispatcher) };
        app.runConnectHandlers(selected.connection);
      }
      return selected.app.handleRequest(dispatcher, method, params, context);
    };
    // Notifications before `initialize` are ignored, as the official router does.
    const onNotification = (method: string, params: unknown): undefined =>
      selected?.app.handleNotification(dispatcher, method, params);
    dispatcher = new Dispatcher(stream, Side.Agent, unstable, onRequest, onNotification, undefined, {
      ...ALL_UNCHECKED,
      protocolVersions: [...apps.keys()].sort(),
    });
    return {
      closed: dispatcher.closed,
      signal: dispatcher.controller.signal,
      get protocolVersion() {
        return selected?.app.appProtocol.protocolVersion;
      },
      close: () => dispatcher.close(),
    };
  }
}

/** An empty router: add the apps with `withV1` / `withV2`, then `connect`. */
export function agentProtocolRouter(): AgentProtocolRouter {
  return new AgentProtocolRouter();
}
