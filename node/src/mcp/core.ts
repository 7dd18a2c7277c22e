// MCP-over-ACP (the official SDK's `McpOverAcpProvider` / `McpOverAcpCaller`,
// exported from `acp-engine/unstable` and `acp-engine/experimental/v2/unstable`).
// The binding's rules (envelope, request meta, outcome carriers, limits,
// duplicate ids, error mapping) live in the engine (core/src/mcp/); this file
// turns them into the official classes: handlers, abort signals, listeners.

import type { AcpContext } from "../app/context.js";
import { callNative, fromNativeError, RequestError } from "../errors.js";
import { AGENT_METHODS } from "../generated/unstable/methods.js";
import { ERROR_CODES, MCP_CONSTANTS } from "../generated/tables.js";
import { McpProviderHandle, mcpGenerateId, mcpOutcomeOfResponse, mcpParseOutcome, mcpWithRequestMeta } from "../native.js";
import type { Dispatcher } from "../dispatcher.js";

type MaybePromise<T> = T | Promise<T>;
type JsonObject = Record<string, unknown>;

/** ACP method that carries MCP requests and request-scoped notifications. */
export const MCP_MESSAGE_METHOD = AGENT_METHODS.mcp_message;
/** The only MCP revision this binding supports. */
export const MCP_PROTOCOL_VERSION = MCP_CONSTANTS.protocolVersion;
/** Inner MCP `_meta` key carrying the request's MCP protocol version. */
export const MCP_META_PROTOCOL_VERSION = MCP_CONSTANTS.metaProtocolVersion;
/** Inner MCP `_meta` key carrying the caller's MCP client capabilities. */
export const MCP_META_CLIENT_CAPABILITIES = MCP_CONSTANTS.metaClientCapabilities;
/** Inner MCP `_meta` key carrying the caller's MCP client info. */
export const MCP_META_CLIENT_INFO = MCP_CONSTANTS.metaClientInfo;

/** Outer ACP error codes reserved for failures of the MCP-over-ACP binding. */
export const McpBindingErrorCode = {
  /** Malformed envelope, or a duplicate active `(serverId, requestId)`. */
  invalidParams: ERROR_CODES.invalidParams,
  /** The ACP operation was cancelled. */
  requestCancelled: ERROR_CODES.requestCancelled,
  /** A binding resource limit was exceeded. */
  resourceLimitExceeded: ERROR_CODES.mcpResourceLimitExceeded,
  /** No registration is available for the requested server ID. */
  serverUnavailable: ERROR_CODES.mcpServerUnavailable,
  /** The backend or transport failed without a valid MCP outcome. */
  backendFailed: ERROR_CODES.mcpBackendFailed,
} as const;

/** An inner MCP error object (its code is an MCP code, never an ACP one). */
export type McpErrorObject = { code: number; message: string; data?: unknown; [key: string]: unknown };

/** The single inner MCP outcome carried by a successful `mcp/message` response. */
export type McpOutcome =
  | { result: unknown; _meta?: Record<string, unknown> | null }
  | { error: McpErrorObject; _meta?: Record<string, unknown> | null };

/** A request-scoped MCP notification received for an in-flight request. */
export type McpNotification = { method: string; params?: Record<string, unknown> | null; _meta?: Record<string, unknown> | null };

/** MCP client identity sent in each request's inner `_meta`. */
export type McpClientInfo = { name: string; version: string; [key: string]: unknown };

/** Defaults used by an MCP-over-ACP caller. */
export type McpCallerOptions = { clientCapabilities?: Record<string, unknown>; clientInfo?: McpClientInfo };

/** Options for a single MCP-over-ACP request. */
export type McpRequestOptions = {
  /** Logical MCP request ID; a fresh one by default. */
  requestId?: string;
  /** Aborting it sends `$/cancel_request` for the outer ACP request. */
  signal?: AbortSignal;
  /** Receives the request's MCP notifications until it settles. */
  onNotification?: (notification: McpNotification) => void;
  /** Outer ACP metadata for the `mcp/message` envelope. */
  _meta?: Record<string, unknown>;
};

/** Context passed to an MCP-over-ACP server handler for one operation. */
export type McpOperationContext = {
  serverId: string;
  requestId: string;
  method: string;
  params: Record<string, unknown> | undefined;
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo: unknown;
  envelopeMeta: Record<string, unknown> | undefined;
  /** Aborts when the caller cancels, the registration is disposed, or the connection closes. */
  signal: AbortSignal;
  /** Sends an MCP notification scoped to this request (dropped once it completed). */
  notify(method: string, params?: Record<string, unknown> | null): Promise<void>;
};

/** Handles one MCP request for a registered server. Throw McpProtocolError for an inner MCP error. */
export type McpRequestHandler = (context: McpOperationContext) => MaybePromise<McpOutcome>;

/** Options for registering an MCP server on an ACP connection. */
export type McpServerOptions = { name: string; handler: McpRequestHandler; serverId?: string; maxActiveRequests?: number };

/** ACP declaration for an MCP server provided over the ACP connection. */
export type McpServerAcpDeclaration = { type: "acp"; name: string; serverId: string };

/** Wire params of an `mcp/message` request or notification. */
export type McpMessageParams = {
  serverId: string;
  requestId: string;
  method: string;
  params?: Record<string, unknown> | null;
  _meta?: Record<string, unknown> | null;
};

/** What carries a connection: a handler's `agent` / `client`, a connection's `agent` / `client`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type HasConnectionContext = AcpContext<any, any>;

/** What `McpOverAcpProvider.handleRequest` uses of an `mcp/message` request context. */
export type McpMessageRequestContext = { params: McpMessageParams; signal: AbortSignal; agent: HasConnectionContext };

/** What `McpOverAcpCaller.handleNotification` uses of an `mcp/message` notification context. */
export type McpMessageNotificationContext = { params: McpMessageParams; client: HasConnectionContext };

function connectionOf(context: HasConnectionContext): Dispatcher {
  return context.dispatcher;
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a session's `mcpServers` entry is a server provided over ACP. */
export function isMcpServerAcp(server: unknown): server is McpServerAcpDeclaration {
  return isJsonObject(server) && server.type === "acp" && typeof server.name === "string" && typeof server.serverId === "string";
}

/** An inner MCP protocol error thrown by a server handler: answered in the `error` carrier. */
export class McpProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "McpProtocolError";
  }

  /** Converts this error to an inner MCP error object. */
  toMcpError(): McpErrorObject {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

/** Parses a received `mcp/message` carrier; `undefined` when invalid (`result` wins over `error`). */
export function parseMcpOutcome(value: unknown): McpOutcome | undefined {
  const text = value === undefined ? undefined : JSON.stringify(value);
  if (text === undefined) return undefined;
  const parsed = mcpParseOutcome(text);
  return parsed === null ? undefined : (JSON.parse(parsed) as McpOutcome);
}

/** Adds MCP 2026-07-28's per-request metadata, never replacing what the caller supplied. */
export function withMcpRequestMeta(params: Record<string, unknown> | null | undefined, options: McpCallerOptions = {}): Record<string, unknown> {
  const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));
  return JSON.parse(mcpWithRequestMeta(json(params), json(options.clientCapabilities), json(options.clientInfo))) as JsonObject;
}

/** A registered server's JavaScript side: its handler, and what disposing it aborts and awaits. */
type ServerEntry = { handler: McpRequestHandler; disposed: AbortController; running: Set<Promise<unknown>> };
type ProviderConnection = { handle: McpProviderHandle; servers: Map<string, ServerEntry> };

/** Serves MCP servers to an ACP peer over `mcp/message`; one per app. */
export class McpOverAcpProvider {
  readonly #connections = new WeakMap<Dispatcher, ProviderConnection>();

  #connection(context: HasConnectionContext): ProviderConnection {
    const dispatcher = connectionOf(context);
    let connection = this.#connections.get(dispatcher);
    if (connection === undefined) {
      connection = { handle: new McpProviderHandle(), servers: new Map() };
      this.#connections.set(dispatcher, connection);
    }
    return connection;
  }

  /** Registers an MCP server on the connection behind `context`; publish its declaration afterwards. */
  registerServer(context: HasConnectionContext, options: McpServerOptions): McpServerRegistration {
    const connection = this.#connection(context);
    const maxActive = options.maxActiveRequests;
    if (maxActive !== undefined && (!Number.isInteger(maxActive) || maxActive < 1)) {
      throw new RangeError("maxActiveRequests must be a positive integer");
    }
    let serverId: string;
    try {
      serverId = connection.handle.register(options.name, options.serverId ?? null, maxActive ?? null);
    } catch (error) {
      // A programming error, as the official SDK throws it: a plain Error.
      throw new Error((fromNativeError(error) as Error).message);
    }
    const entry: ServerEntry = { handler: options.handler, disposed: new AbortController(), running: new Set() };
    connection.servers.set(serverId, entry);
    return new McpServerRegistration(options.name, serverId, async () => {
      if (!connection.handle.dispose(serverId)) return;
      connection.servers.delete(serverId);
      entry.disposed.abort(new Error(`MCP server ${serverId} registration was disposed`));
      await Promise.allSettled([...entry.running]);
    });
  }

  /** Handles an incoming `mcp/message` request: `onRequest(methods.client.mcp.message, provider.handleRequest)`. */
  readonly handleRequest = async (context: McpMessageRequestContext): Promise<McpOutcome> => {
    const connection = this.#connection(context.agent);
    const started = JSON.parse(callNative(() => connection.handle.start(JSON.stringify(context.params)))) as
      | { answer: McpOutcome }
      | { operation: number; context: Omit<McpOperationContext, "signal" | "notify"> };
    if ("answer" in started) return started.answer;
    const { operation, context: operationContext } = started;
    // Registered in the engine, so here too (both change together, on this thread).
    const entry = connection.servers.get(operationContext.serverId)!;
    const controller = new AbortController();
    const abortFrom = (source: AbortSignal) => () => {
      connection.handle.cancel(operation);
      controller.abort(source.reason);
    };
    const onCancel = abortFrom(context.signal);
    const onDispose = abortFrom(entry.disposed.signal);
    if (context.signal.aborted) onCancel();
    context.signal.addEventListener("abort", onCancel, { once: true });
    entry.disposed.signal.addEventListener("abort", onDispose, { once: true });
    const dispatcher = connectionOf(context.agent);
    const run = async (): Promise<unknown> => {
      await Promise.resolve();
      if (controller.signal.aborted) throw controller.signal.reason;
      return entry.handler({
        ...operationContext,
        signal: controller.signal,
        async notify(method, params) {
          const notification = connection.handle.notification(operation, method, params === undefined ? null : JSON.stringify(params));
          if (notification !== null) await dispatcher.sendNotification(MCP_MESSAGE_METHOD, JSON.parse(notification));
        },
      });
    };
    const settled = run();
    entry.running.add(settled);
    let outcome: string | null = null;
    let failure: string | null = null;
    try {
      outcome = JSON.stringify((await settled) ?? null);
    } catch (error) {
      failure = JSON.stringify(failureOf(error));
    } finally {
      entry.running.delete(settled);
      context.signal.removeEventListener("abort", onCancel);
      entry.disposed.signal.removeEventListener("abort", onDispose);
    }
    return JSON.parse(callNative(() => connection.handle.finish(operation, outcome, failure))) as McpOutcome;
  };
}

/** How a handler failed, as the engine maps it: an inner MCP error, or an outer failure. */
function failureOf(error: unknown): unknown {
  if (error instanceof McpProtocolError) return { protocol: error.toMcpError() };
  const details = error instanceof Error ? error.message : String(error);
  return error instanceof RequestError ? { details, code: error.code } : { details };
}

/** A registered MCP server provided over an ACP connection. */
export class McpServerRegistration {
  readonly #release: () => Promise<void>;

  /** @internal */
  constructor(
    readonly name: string,
    readonly serverId: string,
    release: () => Promise<void>,
  ) {
    this.#release = release;
  }

  /** ACP declaration to include in a session's `mcpServers`. */
  get declaration(): McpServerAcpDeclaration {
    return { type: "acp", name: this.name, serverId: this.serverId };
  }

  /** Removes the registration: later requests fail with -33001, running ones are cancelled. */
  dispose(): Promise<void> {
    return this.#release();
  }

  /** Supports `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}

/** Calls MCP servers an ACP peer declared with `"type": "acp"`; one per app. */
export class McpOverAcpCaller {
  readonly #options: McpCallerOptions;
  readonly #routes = new WeakMap<Dispatcher, Map<string, (notification: McpNotification) => void>>();

  constructor(options: McpCallerOptions = {}) {
    this.#options = options;
  }

  #routesOf(dispatcher: Dispatcher): Map<string, (notification: McpNotification) => void> {
    let routes = this.#routes.get(dispatcher);
    if (routes === undefined) this.#routes.set(dispatcher, (routes = new Map()));
    return routes;
  }

  /** Sends one MCP request to a declared server; resolves with its inner outcome. */
  async request(
    context: HasConnectionContext,
    serverId: string,
    method: string,
    params?: Record<string, unknown> | null,
    options: McpRequestOptions = {},
  ): Promise<McpOutcome> {
    const routes = this.#routesOf(connectionOf(context));
    const requestId = options.requestId ?? mcpGenerateId("mcp-request");
    const key = JSON.stringify([serverId, requestId]);
    if (routes.has(key)) throw new Error(`MCP request ${requestId} is already active for server ${serverId}`);
    routes.set(key, options.onNotification ?? (() => {}));
    try {
      const envelope = {
        serverId,
        requestId,
        method,
        params: withMcpRequestMeta(params, this.#options),
        ...(options._meta ? { _meta: options._meta } : {}),
      };
      const response = await context.request(MCP_MESSAGE_METHOD, envelope, options.signal ? { cancellationSignal: options.signal } : undefined);
      return JSON.parse(callNative(() => mcpOutcomeOfResponse(JSON.stringify(response ?? null)))) as McpOutcome;
    } finally {
      routes.delete(key);
    }
  }

  /** Handles an incoming `mcp/message` notification: `onNotification(methods.agent.mcp.message, caller.handleNotification)`. */
  readonly handleNotification = (context: McpMessageNotificationContext): void => {
    const { serverId, requestId, method, params, _meta } = context.params;
    const listener = this.#routes.get(connectionOf(context.client))?.get(JSON.stringify([serverId, requestId]));
    if (listener === undefined) return;
    try {
      listener({ method, ...(params == null ? {} : { params }), ...(isJsonObject(_meta) ? { _meta } : {}) });
    } catch (error) {
      console.error("MCP-over-ACP notification listener failed", error);
    }
  };
}
