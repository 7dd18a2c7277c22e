// The per-connection dispatcher: drains the engine's events in wire order and
// runs them. Notification handlers run one at a time (awaited only when they
// return a promise; reading pauses meanwhile), responses to our requests
// resolve in the same order, request handlers start in order. A notification
// handler that waits on a request of its own is not starved: while it waits,
// answers to requests sent since it started are delivered and the peer's
// requests start (reading resumes for them); other answers and notifications
// wait their turn.
//
// Over pipes and sockets (spawnAgent, stdioStream) the addon reads on Node's
// own thread and hands each batch of events to `onEvents` as one JSON array
// text; otherwise the engine wakes JS once per burst and JS drains it.

import { closedError, engineError, fromNativeError, isEngineClose, isRequestError, logHandlerError, RequestError } from "./errors.js";
import { ERROR_CODES, ERROR_MESSAGES } from "./generated/tables.js";
import { EVENT_KINDS, type NativeConnection } from "./native.js";
import { WebStreamsTransport, type Reading } from "./web-streams.js";
import { kOpen, Side, toStream, type MessageStream, type OpenOptions, type Stream } from "./streams.js";
import type { JsonRpcId } from "./jsonrpc.js";

// Event kinds, from the engine.
const { request: REQUEST, notification: NOTIFICATION, result: RESULT, error: ERROR } = EVENT_KINDS;
const { cancelled: CANCELLED, written: WRITTEN, closed: CLOSED, invalidNotification: INVALID_NOTIFICATION } = EVENT_KINDS;

type Event = [number, ...unknown[]];

/** Told of a notification from the peer whose params fail the schema (dropped, unanswered). */
export type OnInvalidNotification = (method: string, error: RequestError) => void;

/** Without a handler of its own: a process warning (`AcpInvalidNotification`). */
export function warnInvalidNotification(method: string, error: RequestError): void {
  const why = error.data === undefined ? error.message : JSON.stringify(error.data);
  process.emitWarning(`dropped a ${method} notification that fails the schema: ${why}`, "AcpInvalidNotification");
}
const RESOLVED = Promise.resolve();

/** What an inbound request's handler gets besides its params. */
export interface RequestContext {
  /** Fires when the peer cancels this request (`$/cancel_request`) or the connection closes. */
  readonly signal: AbortSignal;
  /** The request's JSON-RPC id, as the peer sent it (the official SDK's `requestId`). */
  readonly requestId: JsonRpcId;
}

class InboundContext implements RequestContext {
  #controller: AbortController | null = null;

  constructor(readonly requestId: JsonRpcId) {}

  /** The peer cancelled the request: the official SDK's reason names its id. */
  cancel(): void {
    this.abort(RequestError.requestCancelled({ requestId: this.requestId }));
  }

  get signal(): AbortSignal {
    if (this.#controller === null) this.#controller = new AbortController();
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#controller !== null && this.#controller.signal.aborted;
  }

  abort(reason: unknown): void {
    if (this.#controller === null) this.#controller = new AbortController();
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }
}

/** A handler that gave up with an AbortError once its request was
 * cancelled answers -32800 (the official SDK's rule); anything else it
 * throws is answered as thrown. */
function abortedAsCancelled(context: InboundContext, error: unknown): unknown {
  if (!context.aborted || !isAbortError(error)) return error;
  const reason: unknown = context.signal.reason;
  return isRequestError(reason) && reason.code === ERROR_CODES.requestCancelled ? reason : RequestError.requestCancelled();
}

function isAbortError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === "AbortError" || code === "ABORT_ERR";
}

export type OnRequest = (method: string, params: unknown, context: RequestContext) => unknown;
export type OnNotification = (method: string, params: unknown) => unknown;

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

// Open connections, flushed if the process exits (process.exit() runs no
// more setImmediate callbacks, and sends wait for one to be written).
const open = new Set<Dispatcher>();
let exitHookInstalled = false;
function flushOnExit(dispatcher: Dispatcher): void {
  open.add(dispatcher);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const each of open) {
      try {
        each.native.flush();
      } catch {
        // Closed: nothing to write.
      }
    }
  });
}

export function thenable(value: unknown): value is PromiseLike<unknown> {
  return value != null && typeof (value as PromiseLike<unknown>).then === "function";
}

export class Dispatcher {
  readonly native: NativeConnection;
  readonly controller = new AbortController();
  readonly closed: Promise<void>;
  isClosed = false;

  private resolveClosed!: () => void;
  private closeReason: string | undefined;
  // A user's Web stream that failed: pending and later calls reject with its
  // own error, as the official SDK's do.
  private streamFailure: { error: unknown } | null = null;
  private readonly pending = new Map<number, Waiter<unknown>>();
  private readonly tickets = new Map<number, Waiter<void>>();
  private readonly inflight = new Map<number, InboundContext>();
  private readonly cancelledEarly = new Set<number>();
  private queue: Event[] = [];
  private head = 0;
  private running = false;
  private webStreams: WebStreamsTransport | null = null;
  private currentMethod = "";
  // Our newest request id, and while a notification handler waits, what it
  // was when that handler started (answers to later ids are its own).
  private lastRequestId = -1;
  private notificationStartedAfter: number | null = null;
  // pendingCount[0]: how many of our requests await a response; the addon
  // spins briefly for a response only while some do.
  private readonly pendingCount = new Int32Array(1);
  // Who reads the input, if reading can wait: the addon (a pipe or socket
  // Node's thread reads) or the Web Streams transport.
  private reading: Reading | null = null;
  private readingPaused = false;
  private flushScheduled = false;
  // The per-message sends are plain functions, cheaper to call than methods.
  private readonly sendRequestNative: (method: string, params?: string | null) => number;
  private readonly sendNotificationNative: (method: string, params?: string | null) => number;
  private readonly respondNative: (token: number, result: string) => number;
  private readonly resume = () => {
    this.notificationStartedAfter = null;
    this.pump();
  };
  private readonly resumeAfterError = (error: unknown) => {
    logHandlerError("notification", this.currentMethod, error);
    this.resume();
  };

  constructor(
    stream: Stream | MessageStream,
    side: Side,
    unstable: boolean,
    private readonly onRequest: OnRequest,
    private readonly onNotification: OnNotification,
    private readonly onInvalidNotification: OnInvalidNotification = warnInvalidNotification,
    open?: OpenOptions,
  ) {
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    try {
      this.native = toStream(stream)[kOpen](side, unstable, () => this.onWake(), this, open);
    } catch (error) {
      throw fromNativeError(error);
    }
    this.sendRequestNative = this.native.requestFunction();
    this.sendNotificationNative = this.native.notifyFunction();
    this.respondNative = this.native.respondFunction();
    if (this.native.startReading((text) => this.onEvents(text), this.pendingCount)) this.reading = this.native;
    else this.reading = this.webStreams;
    flushOnExit(this);
  }

  /** Web Streams transport: move bytes between the user's streams and the engine. */
  attachByteStreams(
    native: NativeConnection,
    output: WritableStream<Uint8Array>,
    input: ReadableStream<Uint8Array>,
    closeOutput: boolean,
  ): void {
    this.webStreams = new WebStreamsTransport(
      native,
      output,
      input,
      closeOutput,
      (error) => {
        if (this.isClosed) return;
        this.streamFailure ??= { error };
        native.close();
      },
      () => this.drainEvents(),
    );
  }

  private onWake(): void {
    // Called by the engine before the constructor returned: nothing to do yet.
    if (this.native === undefined) return;
    this.webStreams?.onWake();
    this.drainEvents();
  }

  private drainEvents(): void {
    const text = this.native.drain();
    if (text != null) this.onEvents(text);
  }

  private onEvents(text: string): void {
    let events: Event[];
    try {
      events = JSON.parse(text) as Event[];
    } catch (error) {
      logHandlerError("event", "drain", error);
      return;
    }
    if (this.running) {
      for (const event of events) {
        if (this.jumpsQueue(event)) this.handle(event);
        else this.queue.push(event);
      }
    } else {
      this.queue = events;
      this.head = 0;
      this.pump();
    }
  }

  // Handle queued events in order; stop at a notification handler's promise
  // and resume when it settles.
  private pump(): void {
    this.running = true;
    const queue = this.queue;
    while (this.head < queue.length) {
      const event = queue[this.head++];
      const startedAfter = this.lastRequestId;
      const wait = this.handle(event);
      if (wait !== undefined) {
        // Backpressure: read no more input until the queue is through.
        if (this.reading !== null && !this.readingPaused && !this.isClosed) {
          this.readingPaused = true;
          this.reading.pauseReading();
        }
        if (event[0] === NOTIFICATION) this.waitOnNotification(startedAfter);
        wait.then(this.resume, this.resumeAfterError);
        return;
      }
    }
    this.queue = [];
    this.head = 0;
    this.running = false;
    if (this.readingPaused) {
      this.readingPaused = false;
      if (!this.isClosed) this.reading?.resumeReading();
    }
  }

  /** Events handled on arrival even while the queue waits: cancellations and
   * write tickets always; while a notification handler waits, the peer's
   * requests (it may wait on one before it answers ours) and answers to the
   * requests sent since that handler started. */
  private jumpsQueue(event: Event): boolean {
    const kind = event[0];
    if (kind === CANCELLED || kind === WRITTEN) return true;
    const startedAfter = this.notificationStartedAfter;
    if (startedAfter === null) return false;
    return kind === REQUEST || ((kind === RESULT || kind === ERROR) && (event[1] as number) > startedAfter);
  }

  private waitOnNotification(startedAfter: number): void {
    this.notificationStartedAfter = startedAfter;
    const rest = this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    for (const event of rest) {
      if (this.jumpsQueue(event)) this.handle(event);
      else this.queue.push(event);
    }
    // The handler may already have sent its request.
    if (this.lastRequestId > startedAfter) this.readForWaitingNotification();
  }

  /** Reading paused behind a notification handler resumes once it sends a
   * request: its answer must get through. */
  private readForWaitingNotification(): void {
    if (!this.readingPaused || this.isClosed) return;
    this.readingPaused = false;
    this.reading?.resumeReading();
  }

  private handle(event: Event): PromiseLike<unknown> | undefined {
    switch (event[0]) {
      case NOTIFICATION: {
        const method = event[1] as string;
        let result;
        try {
          result = this.onNotification(method, event[2]);
        } catch (error) {
          logHandlerError("notification", method, error);
          return undefined;
        }
        if (thenable(result)) {
          this.currentMethod = method;
          return result;
        }
        return undefined;
      }
      case REQUEST:
        this.startRequest(event[1] as number, event[2] as string, event[3], event[4] as JsonRpcId);
        return undefined;
      case RESULT: {
        const waiter = this.settle(event[1] as number);
        waiter?.resolve(event[2]);
        return waiter === undefined ? undefined : this.afterResponse();
      }
      case ERROR: {
        const error = event[2] as { code: number; message: string; data?: unknown };
        const waiter = this.settle(event[1] as number);
        // The engine fails what is pending when the input ends; when a user's
        // stream failed, that failure is the reason.
        const failure = () => engineError(error.code, error.message, error.data);
        waiter?.reject(isEngineClose(error.code, error.message) ? this.failureOr(failure) : failure());
        return waiter === undefined ? undefined : this.afterResponse();
      }
      case CANCELLED: {
        // The handler's signal aborts; what it then returns is the answer
        // (the engine waits for it, as the official SDK does).
        const token = event[1] as number;
        const context = this.inflight.get(token);
        if (context !== undefined) {
          context.cancel();
        } else {
          this.cancelledEarly.add(token);
        }
        return undefined;
      }
      case WRITTEN: {
        const waiter = this.tickets.get(event[1] as number);
        if (waiter !== undefined) {
          this.tickets.delete(event[1] as number);
          if (event[2]) waiter.resolve();
          else waiter.reject(this.closedReason());
        }
        return undefined;
      }
      case CLOSED:
        this.finish(event[1] as string);
        return undefined;
      case INVALID_NOTIFICATION: {
        const error = event[2] as { code: number; message: string; data?: unknown };
        try {
          this.onInvalidNotification(event[1] as string, new RequestError(error.code, error.message, error.data));
        } catch (thrown) {
          logHandlerError("invalid notification", event[1] as string, thrown);
        }
        return undefined;
      }
      default:
        return undefined;
    }
  }

  /** A response's continuation runs before the peer's next message is
   * handled (as the official SDK guarantees): when a notification or request
   * follows it in the queue, handling waits for the microtasks to run. */
  private afterResponse(): PromiseLike<unknown> | undefined {
    const next = this.queue[this.head];
    if (next === undefined || (next[0] !== NOTIFICATION && next[0] !== REQUEST)) return undefined;
    return new Promise((resolve) => setImmediate(resolve));
  }

  private settle(id: number): Waiter<unknown> | undefined {
    const waiter = this.pending.get(id);
    if (waiter !== undefined) {
      this.pending.delete(id);
      this.pendingCount[0] = this.pending.size;
    }
    return waiter;
  }

  private startRequest(token: number, method: string, params: unknown, id: JsonRpcId): void {
    const context = new InboundContext(id);
    this.inflight.set(token, context);
    if (this.cancelledEarly.size !== 0 && this.cancelledEarly.delete(token)) {
      context.cancel();
    }
    let result;
    try {
      result = this.onRequest(method, params, context);
    } catch (error) {
      this.fail(token, method, error);
      return;
    }
    if (thenable(result)) {
      result.then(
        (value) => this.succeed(token, value),
        (error) => this.fail(token, method, error),
      );
    } else {
      this.succeed(token, result);
    }
  }

  private succeed(token: number, value: unknown): void {
    this.inflight.delete(token);
    if (this.isClosed) return;
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      this.fail(token, "", error);
      return;
    }
    try {
      // `undefined` (a handler with nothing to say): the engine answers `{}`.
      this.respondNative(token, text ?? "null");
      this.scheduleFlush();
    } catch (error) {
      logHandlerError("request", "response", fromNativeError(error));
    }
  }

  private fail(token: number, method: string, error: unknown): void {
    const context = this.inflight.get(token);
    this.inflight.delete(token);
    if (this.isClosed) return;
    if (context !== undefined) error = abortedAsCancelled(context, error);
    let code: number = ERROR_CODES.internalError;
    let message: string = ERROR_MESSAGES.internalError;
    let data: unknown;
    if (isRequestError(error)) {
      ({ code, message, data } = error);
    } else {
      logHandlerError("request", method, error);
    }
    let dataText: string | null = null;
    if (data !== undefined) {
      try {
        dataText = JSON.stringify(data) ?? null;
      } catch {
        dataText = null;
      }
    }
    try {
      this.native.respondError(token, code, message, dataText);
      this.scheduleFlush();
    } catch (failure) {
      logHandlerError("request", "error response", fromNativeError(failure));
    }
  }

  private finish(reason: string): void {
    open.delete(this);
    if (this.isClosed) return;
    this.isClosed = true;
    this.closeReason = reason;
    const error = this.closedReason();
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
    this.pendingCount[0] = 0;
    for (const waiter of this.tickets.values()) waiter.reject(error);
    this.tickets.clear();
    for (const context of this.inflight.values()) context.abort(error);
    this.inflight.clear();
    // The engine's last output may still be on its way to the Web stream:
    // hold the wake-ups (and the process) until it was written.
    if (this.webStreams === null) this.native.release();
    else this.webStreams.close(() => this.native.release());
    this.controller.abort(error);
    this.resolveClosed();
  }

  /** Why calls fail once closed: the user's stream's own error, or the engine's close. */
  private closedReason(): unknown {
    return this.failureOr(() => closedError(this.closeReason ?? "closed"));
  }

  /** The user's failed stream's error if there is one, else `otherwise()`. */
  private failureOr(otherwise: () => unknown): unknown {
    return this.streamFailure !== null ? this.streamFailure.error : otherwise();
  }

  sendRequest(method: string, params: unknown): Promise<unknown> {
    return this.sendRequestWithId(method, params).promise;
  }

  /** Like sendRequest, also returning the request id (for cancelPendingRequest). */
  sendRequestWithId(method: string, params: unknown): { id: number | undefined; promise: Promise<unknown> } {
    let id: number;
    try {
      id = this.sendRequestNative(method, params === undefined ? undefined : JSON.stringify(params));
      this.lastRequestId = id;
      if (this.notificationStartedAfter !== null) this.readForWaitingNotification();
      this.scheduleFlush();
    } catch (error) {
      return { id: undefined, promise: Promise.reject(this.failureOr(() => fromNativeError(error))) };
    }
    const promise = new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.pendingCount[0] = this.pending.size;
    });
    return { id, promise };
  }

  sendNotification(method: string, params: unknown): Promise<void> {
    let ticket: number;
    try {
      ticket = this.sendNotificationNative(method, params === undefined ? undefined : JSON.stringify(params));
      this.scheduleFlush();
    } catch (error) {
      return Promise.reject(this.failureOr(() => fromNativeError(error)));
    }
    // Over a user's Web stream, settle as the official SDK does: once the
    // stream took the notification (waiting from the moment the engine wrote it).
    const webStreams = this.webStreams;
    if (webStreams === null) return ticket === 0 ? RESOLVED : this.waitTicket(ticket);
    return ticket === 0 ? webStreams.written() : this.waitTicket(ticket, () => webStreams.written());
  }

  /** Settles when the engine wrote `ticket`'s message; then, given `thenWritten`, as it does. */
  private waitTicket(ticket: number, thenWritten?: () => Promise<void>): Promise<void> {
    return new Promise((resolve, reject) => {
      const written = thenWritten === undefined ? resolve : () => thenWritten().then(resolve, reject);
      this.tickets.set(ticket, { resolve: written, reject });
    });
  }

  sendCancelRequestNotification(params: unknown): Promise<void> {
    const requestId = params !== null && typeof params === "object" ? (params as { requestId?: unknown }).requestId : params;
    let ticket: number;
    try {
      ticket = this.native.sendCancelRequest(JSON.stringify(requestId));
      this.scheduleFlush();
    } catch (error) {
      return Promise.reject(fromNativeError(error));
    }
    return ticket === 0 ? RESOLVED : this.waitTicket(ticket);
  }

  cancelPendingRequest(id: number): boolean {
    const cancelled = this.native.cancelPending(id);
    this.scheduleFlush();
    return cancelled;
  }

  /** Sends are collected in the engine and written together: after the
   * batch being handled (the addon flushes), or on this loop turn's
   * setImmediate for sends made anywhere else. */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    if (this.webStreams === null) setImmediate(this.flushSends);
    else queueMicrotask(this.flushSends);
  }

  private readonly flushSends = (): void => {
    this.flushScheduled = false;
    // A pipe's output is written here, on this thread: pass it on now (its
    // `takeOutput` flushes the sends first).
    if (this.webStreams !== null) return this.webStreams.flush();
    try {
      this.native.flush();
    } catch {
      // Closed meanwhile: the sends fail on their own.
      return;
    }
    // A connection the engine reads (a served one): while a response is
    // due, wait for it a moment rather than sleep and be woken for it.
    if (this.reading === null && this.pendingCount[0] > 0 && !this.running) {
      const text = this.native.drainAfterSpin();
      if (text != null) this.onEvents(text);
    }
  };

  close(): void {
    this.native.close();
  }
}
