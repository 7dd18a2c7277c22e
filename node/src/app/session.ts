// The client's session helpers (the official SDK 2.x's `SessionBuilder` and
// `ActiveSession`): start a session, prompt it, and read its updates in
// arrival order, each turn ending with a `stop` message.

import type { MaybePromise } from "../sides.js";
import type { SendRequestOptions } from "./options.js";

/** The wire shapes these helpers touch (the same in the stable and unstable schema). */
export interface ContentBlockLike {
  type: string;
  [key: string]: unknown;
}
export interface NewSessionRequestLike {
  cwd: string;
  mcpServers: unknown[];
  additionalDirectories?: string[];
  [key: string]: unknown;
}
export interface NewSessionResponseLike {
  sessionId: string;
  modes?: unknown;
  _meta?: { [key: string]: unknown } | null;
  [key: string]: unknown;
}
export interface SessionNotificationLike {
  sessionId: string;
  update: { sessionUpdate: string; content?: { type: string; text?: string }; [key: string]: unknown };
}
export interface PromptResponseLike {
  stopReason: string;
  [key: string]: unknown;
}

/** What an `ActiveSession` yields: an update, or the end of the turn. */
export type ActiveSessionMessage =
  | { kind: "session_update"; notification: SessionNotificationLike; update: SessionNotificationLike["update"] }
  | { kind: "stop"; response: PromptResponseLike; stopReason: string };

type Entry<T> = { kind: "value"; value: T } | { kind: "error"; error: unknown };

/** A queue read one item at a time; `fail` ends it for every reader. */
export class AsyncQueue<T> {
  private values: Entry<T>[] = [];
  private waiters: { resolve(value: T): void; reject(error: unknown): void }[] = [];
  private failure: { error: unknown } | null = null;

  enqueue(value: T): void {
    if (this.failure !== null) return;
    const waiter = this.waiters.shift();
    if (waiter !== undefined) waiter.resolve(value);
    else this.values.push({ kind: "value", value });
  }

  /** An error for the next read (a failed prompt), the queue going on after it. */
  reject(error: unknown): void {
    if (this.failure !== null) return;
    if (this.waiters.length > 0) {
      for (const waiter of this.waiters.splice(0)) waiter.reject(error);
      return;
    }
    this.values.push({ kind: "error", error });
  }

  clearErrors(): void {
    this.values = this.values.filter((entry) => entry.kind === "value");
  }

  fail(error: unknown): void {
    if (this.failure !== null) return;
    this.failure = { error };
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  next(): Promise<T> {
    const entry = this.values.shift();
    if (entry !== undefined) return entry.kind === "value" ? Promise.resolve(entry.value) : Promise.reject(entry.error);
    if (this.failure !== null) return Promise.reject(this.failure.error);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }
}

/** Routes each `session/update` to the active sessions of its session id. */
export class SessionUpdateRouter {
  private readonly sessions = new Map<string, Set<AsyncQueue<ActiveSessionMessage>>>();

  /** Queue the update for its sessions; false when none is active. */
  route(params: unknown): boolean {
    const notification = params as SessionNotificationLike;
    const queues = this.sessions.get(notification?.sessionId);
    if (queues === undefined || queues.size === 0) return false;
    const message: ActiveSessionMessage = { kind: "session_update", notification, update: notification.update };
    for (const queue of queues) queue.enqueue(message);
    return true;
  }

  attach(sessionId: string, queue: AsyncQueue<ActiveSessionMessage>): () => void {
    let queues = this.sessions.get(sessionId);
    if (queues === undefined) this.sessions.set(sessionId, (queues = new Set()));
    queues.add(queue);
    return () => {
      queues.delete(queue);
      if (queues.size === 0) this.sessions.delete(sessionId);
    };
  }
}

/** What the session helpers need of the client's context. */
export interface SessionCalls {
  request(method: string, params: unknown, options?: SendRequestOptions): Promise<unknown>;
  readonly sessionRouter: SessionUpdateRouter;
  readonly connectionSignal: AbortSignal;
  readonly sessionNewMethod: string;
  readonly sessionPromptMethod: string;
}

function cloneRequest<R extends NewSessionRequestLike>(request: R): R {
  return {
    ...request,
    additionalDirectories: request.additionalDirectories ? [...request.additionalDirectories] : undefined,
    mcpServers: [...request.mcpServers],
  };
}

/** Builds the `session/new` request of an `ActiveSession`. */
export class SessionBuilder<Request extends NewSessionRequestLike = NewSessionRequestLike> {
  #calls: SessionCalls;
  #request: Request;

  /** @internal */
  constructor(calls: SessionCalls, request: Request) {
    this.#calls = calls;
    this.#request = cloneRequest(request);
  }

  /** The `session/new` request that will be sent (a copy). */
  toRequest(): Request {
    return cloneRequest(this.#request);
  }

  /** Replaces the session's additional workspace roots (absolute paths). */
  withAdditionalDirectories(additionalDirectories: string[]): this {
    this.#request = { ...this.#request, additionalDirectories: [...additionalDirectories] };
    return this;
  }

  /** Adds one MCP server to the `session/new` request. */
  withMcpServer(mcpServer: Request["mcpServers"][number]): this {
    this.#request = { ...this.#request, mcpServers: [...this.#request.mcpServers, mcpServer] };
    return this;
  }

  /** Sends `session/new`; the session's updates are queued from then on. */
  async start(options?: SendRequestOptions): Promise<ActiveSession> {
    const calls = this.#calls;
    const response = (await calls.request(calls.sessionNewMethod, this.toRequest(), options)) as NewSessionResponseLike;
    return new ActiveSession(calls, response);
  }

  /** Starts the session, runs `op`, and disposes the session's routing after it. */
  async withSession<T>(op: (session: ActiveSession) => MaybePromise<T>): Promise<T> {
    const session = await this.start();
    try {
      return await op(session);
    } finally {
      session.dispose();
    }
  }
}

/** A session's prompts and its updates, read in arrival order. */
export class ActiveSession {
  #calls: SessionCalls;
  #response: NewSessionResponseLike;
  #updates = new AsyncQueue<ActiveSessionMessage>();
  #cleanups: (() => void)[] = [];

  /** @internal */
  constructor(calls: SessionCalls, response: NewSessionResponseLike) {
    this.#calls = calls;
    this.#response = response;
    const signal = calls.connectionSignal;
    const onClose = () => this.#updates.fail(signal.reason ?? new Error("ACP connection closed"));
    if (signal.aborted) onClose();
    else {
      signal.addEventListener("abort", onClose);
      this.#cleanups.push(() => signal.removeEventListener("abort", onClose));
    }
    this.#cleanups.push(calls.sessionRouter.attach(response.sessionId, this.#updates));
  }

  get sessionId(): string {
    return this.#response.sessionId;
  }

  get modes(): unknown {
    return this.#response.modes;
  }

  get meta(): { [key: string]: unknown } | null | undefined {
    return this.#response._meta;
  }

  get newSessionResponse(): NewSessionResponseLike {
    return this.#response;
  }

  /** Sends a prompt (a string is one text block); its response is also queued as `stop`. */
  prompt(prompt: string | ContentBlockLike | ContentBlockLike[], options?: SendRequestOptions): Promise<PromptResponseLike> {
    this.#updates.clearErrors();
    const blocks = typeof prompt === "string" ? [{ type: "text", text: prompt }] : Array.isArray(prompt) ? prompt : [prompt];
    const response = this.#calls.request(
      this.#calls.sessionPromptMethod,
      { sessionId: this.sessionId, prompt: blocks },
      options,
    ) as Promise<PromptResponseLike>;
    response.then(
      (value) => this.#updates.enqueue({ kind: "stop", response: value, stopReason: value.stopReason }),
      (error) => this.#updates.reject(error),
    );
    return response;
  }

  /** The next update, or the `stop` that ends the turn. */
  nextUpdate(): Promise<ActiveSessionMessage> {
    return this.#updates.next();
  }

  /** The text of the turn's `agent_message_chunk` updates, once it stops. */
  async readText(): Promise<string> {
    let output = "";
    for (;;) {
      const message = await this.nextUpdate();
      if (message.kind === "stop") return output;
      const { update } = message;
      if (update.sessionUpdate === "agent_message_chunk" && update.content?.type === "text") output += update.content.text;
    }
  }

  /** Stops routing updates here (the agent's session stays open). */
  dispose(): void {
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    this.#updates.fail(new Error("Active session disposed"));
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
