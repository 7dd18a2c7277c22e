// What the client's session helpers share: the wire shapes they touch, the
// queue a session reads its updates from, and the router that fills it.

import type { SendRequestOptions } from "./options.js";
import type { MethodNames } from "./protocol.js";

/** The wire shapes these helpers touch (the same in the stable and unstable schema). */
export interface ContentBlockLike {
  type: string;
  [key: string]: unknown;
}
/** What a session builder reads of its `session/new` request (any version's request has it). */
export interface NewSessionRequestShape {
  cwd: string;
  mcpServers?: unknown[];
  additionalDirectories?: string[];
}
export interface NewSessionRequestLike extends NewSessionRequestShape {
  mcpServers: unknown[];
  [key: string]: unknown;
}
export interface NewSessionResponseLike {
  sessionId: string;
  modes?: unknown;
  configOptions?: unknown;
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

/** The types a version's `ActiveSession` is typed with, as the official SDK
 * types it: each entry point's generated module gives its schema's (the
 * defaults are the loose shapes above, which the sessions read). */
export interface SessionTypes {
  contentBlock: unknown;
  newSessionResponse: unknown;
  promptResponse: unknown;
  /** What `nextUpdate` yields. */
  message: unknown;
}
export interface LooseSessionTypes extends SessionTypes {
  contentBlock: ContentBlockLike;
  newSessionResponse: NewSessionResponseLike;
  promptResponse: PromptResponseLike;
  message: ActiveSessionMessage;
}

/** What an `ActiveSession` yields: an update, or the end of the turn (v1: the
 * prompt's response; v2: an idle state update). */
export type ActiveSessionMessage =
  | { kind: "session_update"; notification: SessionNotificationLike; update: SessionNotificationLike["update"] }
  | { kind: "stop"; response: PromptResponseLike; stopReason: string }
  | { kind: "stop"; notification: SessionNotificationLike; update: SessionNotificationLike["update"]; stopReason: unknown };

/** v2: an idle state update ends the foreground turn. */
function isIdle(update: SessionNotificationLike["update"] | undefined): boolean {
  return update?.sessionUpdate === "state_update" && update.state === "idle";
}

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

  /** The next item; `signal` gives up the read (nothing is lost: the item stays queued). */
  next(signal?: AbortSignal): Promise<T> {
    const entry = this.values.shift();
    if (entry !== undefined) return entry.kind === "value" ? Promise.resolve(entry.value) : Promise.reject(entry.error);
    if (this.failure !== null) return Promise.reject(this.failure.error);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const abort = () => {
        this.waiters = this.waiters.filter((waiter) => waiter !== entry);
        reject(signal?.reason);
      };
      const done = () => signal?.removeEventListener("abort", abort);
      const entry = {
        resolve: (value: T) => (done(), resolve(value)),
        reject: (error: unknown) => (done(), reject(error)),
      };
      signal?.addEventListener("abort", abort, { once: true });
      this.waiters.push(entry);
    });
  }
}

/** An active session: what takes its messages, and whether an idle state update ends its turn (v2). */
interface Attached {
  deliver(message: ActiveSessionMessage): void;
  idleEndsTurn: boolean;
}

/** Routes each `session/update` to the active sessions of its session id. */
export class SessionUpdateRouter {
  private readonly sessions = new Map<string, Set<Attached>>();

  /** Queue the update for its sessions; false when none is active. */
  route(params: unknown): boolean {
    const notification = params as SessionNotificationLike;
    const attached = this.sessions.get(notification?.sessionId);
    if (attached === undefined || attached.size === 0) return false;
    const { update } = notification;
    for (const { deliver, idleEndsTurn } of attached) {
      deliver(
        idleEndsTurn && isIdle(update)
          ? { kind: "stop", notification, update, stopReason: update.stopReason }
          : { kind: "session_update", notification, update },
      );
    }
    return true;
  }

  /** Routes `sessionId`'s updates to `deliver` until the returned function is called. */
  attach(sessionId: string, deliver: (message: ActiveSessionMessage) => void, idleEndsTurn: boolean): () => void {
    let attached = this.sessions.get(sessionId);
    if (attached === undefined) this.sessions.set(sessionId, (attached = new Set()));
    const entry = { deliver, idleEndsTurn };
    attached.add(entry);
    return () => {
      attached.delete(entry);
      if (attached.size === 0) this.sessions.delete(sessionId);
    };
  }
}

/** What the session helpers need of the client's context. */
export interface SessionCalls {
  request(method: string, params: unknown, options?: SendRequestOptions): Promise<unknown>;
  readonly sessionRouter: SessionUpdateRouter;
  readonly connectionSignal: AbortSignal;
  /** The agent's methods (`AppProtocol.methods.agent`). */
  readonly methods: MethodNames["agent"];
  /** 1, or 2: the v2 draft's turns (`ActiveSessionV2`). */
  readonly protocolVersion: number;
}

/** What both versions' active sessions share: the session's queue, filled by
 * the router until `dispose`, failed when the connection closes. */
export class SessionBase<Types extends SessionTypes = LooseSessionTypes> {
  /** @internal */
  protected readonly calls: SessionCalls;
  /** @internal */
  protected readonly response: NewSessionResponseLike;
  /** @internal */
  protected readonly updates = new AsyncQueue<ActiveSessionMessage>();
  readonly #cleanups: (() => void)[] = [];

  /** @internal */
  constructor(calls: SessionCalls, response: NewSessionResponseLike, idleEndsTurn: boolean) {
    this.calls = calls;
    this.response = response;
    const signal = calls.connectionSignal;
    const onClose = () => this.updates.fail(signal.reason ?? new Error("ACP connection closed"));
    if (signal.aborted) onClose();
    else {
      signal.addEventListener("abort", onClose);
      this.#cleanups.push(() => signal.removeEventListener("abort", onClose));
    }
    this.#cleanups.push(calls.sessionRouter.attach(response.sessionId, (message) => this.deliver(message), idleEndsTurn));
  }

  /** @internal A routed message: queued (v2 also notes what it says). */
  protected deliver(message: ActiveSessionMessage): void {
    this.updates.enqueue(message);
  }

  get sessionId(): string {
    return this.response.sessionId;
  }

  get meta(): { [key: string]: unknown } | null | undefined {
    return this.response._meta;
  }

  get newSessionResponse(): Types["newSessionResponse"] {
    return this.response;
  }

  /** The blocks of a prompt: a string is one text block. */
  protected promptBlocks(prompt: string | Types["contentBlock"] | Types["contentBlock"][]): ContentBlockLike[] {
    return typeof prompt === "string" ? [{ type: "text", text: prompt }] : ((Array.isArray(prompt) ? prompt : [prompt]) as ContentBlockLike[]);
  }

  /** Stops routing updates here (the agent's session stays open). */
  dispose(): void {
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    this.updates.fail(new Error("Active session disposed"));
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
