// Declarations of the acp-engine npm package's API (hand-written; the
// protocol types come from ./schema, generated from the ACP schema).

import type * as schema from "./schema.js";

export type * from "./schema.js";

export type MaybePromise<T> = T | Promise<T>;

/** Protocol version spoken by this package. */
export declare const PROTOCOL_VERSION: 1;

export declare const AGENT_METHODS: {
  readonly initialize: "initialize";
  readonly authenticate: "authenticate";
  readonly session_new: "session/new";
  readonly session_load: "session/load";
  readonly session_set_mode: "session/set_mode";
  readonly session_set_config_option: "session/set_config_option";
  readonly session_prompt: "session/prompt";
  readonly session_cancel: "session/cancel";
  readonly session_list: "session/list";
  readonly session_delete: "session/delete";
  readonly session_resume: "session/resume";
  readonly session_close: "session/close";
  readonly logout: "logout";
};

export declare const CLIENT_METHODS: {
  readonly session_request_permission: "session/request_permission";
  readonly session_update: "session/update";
  readonly fs_write_text_file: "fs/write_text_file";
  readonly fs_read_text_file: "fs/read_text_file";
  readonly terminal_create: "terminal/create";
  readonly terminal_output: "terminal/output";
  readonly terminal_release: "terminal/release";
  readonly terminal_wait_for_exit: "terminal/wait_for_exit";
  readonly terminal_kill: "terminal/kill";
  readonly elicitation_create: "elicitation/create";
  readonly elicitation_complete: "elicitation/complete";
};

export declare const PROTOCOL_METHODS: {
  readonly cancel_request: "$/cancel_request";
};

/** A JSON-RPC error object. */
export interface ErrorResponse {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC outcome: `{ result }` or `{ error }`. */
export type Result<T> = { result: T } | { error: ErrorResponse };

/**
 * An error in ACP / JSON-RPC communication: thrown by a handler to answer
 * with that error, and what a failed outbound request rejects with.
 */
export declare class RequestError extends Error {
  code: number;
  data?: unknown;
  constructor(code: number, message: string, data?: unknown);
  /** -32700 */
  static parseError(data?: unknown, additionalMessage?: string): RequestError;
  /** -32600 */
  static invalidRequest(data?: unknown, additionalMessage?: string): RequestError;
  /** -32601, data `{ method }` */
  static methodNotFound(method: string): RequestError;
  /** -32602 */
  static invalidParams(data?: unknown, additionalMessage?: string): RequestError;
  /** -32603 */
  static internalError(data?: unknown, additionalMessage?: string): RequestError;
  /** -32800 */
  static requestCancelled(data?: unknown, additionalMessage?: string): RequestError;
  /** -32000 */
  static authRequired(data?: unknown, additionalMessage?: string): RequestError;
  /** -32002, data `{ uri }` */
  static resourceNotFound(uri?: string): RequestError;
  /** -32002, data `{ sessionId }` */
  static sessionNotFound(sessionId: string): RequestError;
  /** -32602, data `{ requested, supported }` */
  static unsupportedProtocolVersion(requested: number, supported: readonly number[]): RequestError;
  toResult<T>(): Result<T>;
  toErrorResponse(): ErrorResponse;
}

declare const streamBrand: unique symbol;

/**
 * What a connection runs over: made by {@link ndJsonStream},
 * {@link stdioStream} or {@link spawnAgent}. A stream is used by one
 * connection.
 */
export interface Stream {
  readonly kind: "ndjson" | "stdio" | "spawn";
  readonly [streamBrand]: true;
}

/** An official-SDK style stream of JSON-RPC message objects, also accepted by the connections. */
export interface MessageStream {
  writable: WritableStream<unknown>;
  readable: ReadableStream<unknown>;
}

export interface StreamOptions {
  /** Largest inbound message in bytes (default: the engine's). */
  maxMessageSize?: number;
}

/**
 * Newline-delimited JSON over Web Streams, for any transport a user brings
 * (a WebSocket, a socket, a child process's pipes): bytes read from `input`
 * go to the engine, which frames and parses them; what it writes goes to
 * `output`.
 */
export declare function ndJsonStream(
  output: WritableStream<Uint8Array>,
  input: ReadableStream<Uint8Array>,
  options?: StreamOptions,
): Stream;

/** This process's stdin/stdout, read and written by the engine directly (an agent launched by its client). */
export declare function stdioStream(options?: StreamOptions): Stream;

export interface SpawnAgentOptions extends StreamOptions {
  cwd?: string;
  /** Added to the inherited environment (or replacing it with `clearEnv`). */
  env?: Record<string, string | undefined>;
  clearEnv?: boolean;
  /** The agent's stderr: passed through (default) or dropped. */
  stderr?: "inherit" | "ignore";
  /** After close, how long the agent may take to exit once its stdin closed before it is killed (default 500 ms). */
  exitGraceMs?: number;
}

/** Spawn an agent process and talk to it over its stdin/stdout, with the bytes kept in the engine. */
export declare function spawnAgent(command: string, args?: readonly string[], options?: SpawnAgentOptions): Stream;

/** Passed to request handlers as their second argument. */
export interface RequestContext {
  /** Aborts when the peer cancels this request (`$/cancel_request`) or the connection closes. */
  readonly signal: AbortSignal;
  /** The engine's token for this request. */
  readonly requestId: number;
}

/** The agent's handlers (what a client can call). */
export interface Agent {
  initialize(params: schema.InitializeRequest, context: RequestContext): MaybePromise<schema.InitializeResponse>;
  newSession(params: schema.NewSessionRequest, context: RequestContext): MaybePromise<schema.NewSessionResponse>;
  loadSession?(params: schema.LoadSessionRequest, context: RequestContext): MaybePromise<schema.LoadSessionResponse | void>;
  listSessions?(params: schema.ListSessionsRequest, context: RequestContext): MaybePromise<schema.ListSessionsResponse>;
  deleteSession?(
    params: schema.DeleteSessionRequest,
    context: RequestContext,
  ): MaybePromise<schema.DeleteSessionResponse | void>;
  resumeSession?(params: schema.ResumeSessionRequest, context: RequestContext): MaybePromise<schema.ResumeSessionResponse>;
  closeSession?(params: schema.CloseSessionRequest, context: RequestContext): MaybePromise<schema.CloseSessionResponse | void>;
  setSessionMode?(
    params: schema.SetSessionModeRequest,
    context: RequestContext,
  ): MaybePromise<schema.SetSessionModeResponse | void>;
  setSessionConfigOption?(
    params: schema.SetSessionConfigOptionRequest,
    context: RequestContext,
  ): MaybePromise<schema.SetSessionConfigOptionResponse>;
  authenticate?(params: schema.AuthenticateRequest, context: RequestContext): MaybePromise<schema.AuthenticateResponse | void>;
  logout?(params: schema.LogoutRequest, context: RequestContext): MaybePromise<schema.LogoutResponse | void>;
  prompt(params: schema.PromptRequest, context: RequestContext): MaybePromise<schema.PromptResponse>;
  cancel(params: schema.CancelNotification): MaybePromise<void>;
  /** `_`-prefixed requests, called with the name without the `_`. */
  extMethod?(method: string, params: Record<string, unknown>, context: RequestContext): MaybePromise<Record<string, unknown>>;
  /** `_`-prefixed notifications, called with the name without the `_`. */
  extNotification?(method: string, params: Record<string, unknown>): MaybePromise<void>;
}

/** The client's handlers (what an agent can call). */
export interface Client {
  requestPermission(
    params: schema.RequestPermissionRequest,
    context: RequestContext,
  ): MaybePromise<schema.RequestPermissionResponse>;
  sessionUpdate(params: schema.SessionNotification): MaybePromise<void>;
  writeTextFile?(params: schema.WriteTextFileRequest, context: RequestContext): MaybePromise<schema.WriteTextFileResponse | void>;
  readTextFile?(params: schema.ReadTextFileRequest, context: RequestContext): MaybePromise<schema.ReadTextFileResponse>;
  createTerminal?(params: schema.CreateTerminalRequest, context: RequestContext): MaybePromise<schema.CreateTerminalResponse>;
  terminalOutput?(params: schema.TerminalOutputRequest, context: RequestContext): MaybePromise<schema.TerminalOutputResponse>;
  releaseTerminal?(
    params: schema.ReleaseTerminalRequest,
    context: RequestContext,
  ): MaybePromise<schema.ReleaseTerminalResponse | void>;
  waitForTerminalExit?(
    params: schema.WaitForTerminalExitRequest,
    context: RequestContext,
  ): MaybePromise<schema.WaitForTerminalExitResponse>;
  killTerminal?(params: schema.KillTerminalRequest, context: RequestContext): MaybePromise<schema.KillTerminalResponse | void>;
  createElicitation?(
    params: schema.CreateElicitationRequest,
    context: RequestContext,
  ): MaybePromise<schema.CreateElicitationResponse>;
  completeElicitation?(params: schema.CompleteElicitationNotification): MaybePromise<void>;
  extMethod?(method: string, params: Record<string, unknown>, context: RequestContext): MaybePromise<Record<string, unknown>>;
  extNotification?(method: string, params: Record<string, unknown>): MaybePromise<void>;
}

/** What every connection has. */
interface ConnectionLifecycle {
  /** Aborts when the connection closes. */
  readonly signal: AbortSignal;
  /** Resolves when the connection has closed and is torn down. */
  readonly closed: Promise<void>;
  /** Close: pending requests reject, in-flight handlers' signals abort, queued output is flushed. */
  close(): void;
}

/** A terminal the client runs for the agent. */
export declare class TerminalHandle {
  /** The terminal id, for `ToolCallContent` of type `"terminal"`. */
  id: string;
  private constructor();
  currentOutput(): Promise<schema.TerminalOutputResponse>;
  waitForExit(): Promise<schema.WaitForTerminalExitResponse>;
  kill(): Promise<schema.KillTerminalResponse>;
  release(): Promise<schema.ReleaseTerminalResponse | void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The agent's side of a connection: serves {@link Agent}, calls the client. */
export declare class AgentSideConnection implements ConnectionLifecycle {
  constructor(toAgent: (conn: AgentSideConnection) => Agent, stream: Stream | MessageStream);
  sessionUpdate(params: schema.SessionNotification): Promise<void>;
  requestPermission(params: schema.RequestPermissionRequest): Promise<schema.RequestPermissionResponse>;
  readTextFile(params: schema.ReadTextFileRequest): Promise<schema.ReadTextFileResponse>;
  writeTextFile(params: schema.WriteTextFileRequest): Promise<schema.WriteTextFileResponse>;
  createTerminal(params: schema.CreateTerminalRequest): Promise<TerminalHandle>;
  createElicitation(params: schema.CreateElicitationRequest): Promise<schema.CreateElicitationResponse>;
  completeElicitation(params: schema.CompleteElicitationNotification): Promise<void>;
  /** Send the request `_${method}`. */
  extMethod(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Send the notification `_${method}`. */
  extNotification(method: string, params: Record<string, unknown>): Promise<void>;
  close(): void;
  get signal(): AbortSignal;
  get closed(): Promise<void>;
}

/** The client's side of a connection: serves {@link Client}, calls the agent. */
export declare class ClientSideConnection implements ConnectionLifecycle {
  constructor(toClient: (agent: ClientSideConnection) => Client, stream: Stream | MessageStream);
  initialize(params: schema.InitializeRequest): Promise<schema.InitializeResponse>;
  authenticate(params: schema.AuthenticateRequest): Promise<schema.AuthenticateResponse>;
  logout(params?: schema.LogoutRequest): Promise<schema.LogoutResponse>;
  newSession(params: schema.NewSessionRequest): Promise<schema.NewSessionResponse>;
  loadSession(params: schema.LoadSessionRequest): Promise<schema.LoadSessionResponse>;
  listSessions(params?: schema.ListSessionsRequest): Promise<schema.ListSessionsResponse>;
  deleteSession(params: schema.DeleteSessionRequest): Promise<schema.DeleteSessionResponse>;
  resumeSession(params: schema.ResumeSessionRequest): Promise<schema.ResumeSessionResponse>;
  closeSession(params: schema.CloseSessionRequest): Promise<schema.CloseSessionResponse>;
  setSessionMode(params: schema.SetSessionModeRequest): Promise<schema.SetSessionModeResponse>;
  setSessionConfigOption(params: schema.SetSessionConfigOptionRequest): Promise<schema.SetSessionConfigOptionResponse>;
  prompt(params: schema.PromptRequest): Promise<schema.PromptResponse>;
  /**
   * Send `session/cancel`, then answer the session's pending permission
   * requests `cancelled` and abort their handlers' signals.
   */
  cancel(params: schema.CancelNotification): Promise<void>;
  /** Send the request `_${method}`. */
  extMethod(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Send the notification `_${method}`. */
  extNotification(method: string, params: Record<string, unknown>): Promise<void>;
  close(): void;
  get signal(): AbortSignal;
  get closed(): Promise<void>;
  /** The spawned agent's process id (connections on {@link spawnAgent}). */
  get pid(): number | undefined;
}

export type RequestHandler = (method: string, params: unknown, context: RequestContext) => MaybePromise<unknown>;
export type NotificationHandler = (method: string, params: unknown) => MaybePromise<void>;

/** A bidirectional JSON-RPC 2.0 connection without ACP schema checks (seed 000). */
export declare class Connection implements ConnectionLifecycle {
  constructor(requestHandler: RequestHandler, notificationHandler: NotificationHandler, stream: Stream | MessageStream);
  sendRequest<T = unknown>(method: string, params?: unknown): Promise<T>;
  /** Like `sendRequest`, also giving the request id (for `cancelPendingRequest`). */
  sendRequestWithId<T = unknown>(method: string, params?: unknown): { id: number | undefined; promise: Promise<T> };
  sendNotification(method: string, params?: unknown): Promise<void>;
  /** Send `$/cancel_request` for `requestId`, nothing else. */
  sendCancelRequestNotification(params: schema.CancelRequestNotification): Promise<void>;
  /** Cancel our pending request `id`: it rejects with -32800 and the peer gets `$/cancel_request`. False if it was not pending. */
  cancelPendingRequest(id: number): boolean;
  close(): void;
  get signal(): AbortSignal;
  get closed(): Promise<void>;
  /** The spawned process id (connections on {@link spawnAgent}). */
  get pid(): number | undefined;
}
