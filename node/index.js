// acp-engine for Node.js: the Agent Client Protocol on the acp-engine Rust
// core, with the official TypeScript SDK's API shapes
// (AgentSideConnection, ClientSideConnection, RequestError, ndJsonStream).
//
// The engine reads, frames, validates and writes in Rust. Over pipes and
// sockets (spawnAgent, stdioStream) it reads on Node's own thread: the addon
// watches the stream's fd with libuv and, when it is readable, pumps the
// engine in place and calls JS with the burst of inbound messages as one
// JSON array text (no thread hop per message). Otherwise JS is woken once per
// burst and drains it. Either way the text is parsed with one JSON.parse and
// dispatched in wire order: notification handlers one at a time (awaited
// only when they return a promise; reading pauses meanwhile), responses to
// our requests in the same order, request handlers started in order.

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { NativeConnection } = require("./native.cjs");

// Event kinds of acp_engine::host::kind.
const REQUEST = 0;
const NOTIFICATION = 1;
const RESULT = 2;
const ERROR = 3;
const CANCELLED = 4;
const WRITTEN = 5;
const CLOSED = 6;

const SIDE_RAW = 0;
const SIDE_AGENT = 1;
const SIDE_CLIENT = 2;

const kOpen = Symbol("acp-engine.open");
const RESOLVED = Promise.resolve();
const NATIVE_ERROR_PREFIX = "\u0001ACP";

export const PROTOCOL_VERSION = 1;

export const AGENT_METHODS = Object.freeze({
  initialize: "initialize",
  authenticate: "authenticate",
  session_new: "session/new",
  session_load: "session/load",
  session_set_mode: "session/set_mode",
  session_set_config_option: "session/set_config_option",
  session_prompt: "session/prompt",
  session_cancel: "session/cancel",
  session_list: "session/list",
  session_delete: "session/delete",
  session_resume: "session/resume",
  session_close: "session/close",
  logout: "logout",
});

export const CLIENT_METHODS = Object.freeze({
  session_request_permission: "session/request_permission",
  session_update: "session/update",
  fs_write_text_file: "fs/write_text_file",
  fs_read_text_file: "fs/read_text_file",
  terminal_create: "terminal/create",
  terminal_output: "terminal/output",
  terminal_release: "terminal/release",
  terminal_wait_for_exit: "terminal/wait_for_exit",
  terminal_kill: "terminal/kill",
  elicitation_create: "elicitation/create",
  elicitation_complete: "elicitation/complete",
});

export const PROTOCOL_METHODS = Object.freeze({
  cancel_request: "$/cancel_request",
});

// ---------------------------------------------------------------------------
// RequestError (seed 002)

function withDetail(message, additionalMessage) {
  return additionalMessage ? `${message}: ${additionalMessage}` : message;
}

export class RequestError extends Error {
  constructor(code, message, data) {
    super(message);
    this.name = "RequestError";
    this.code = code;
    if (data !== undefined) this.data = data;
  }

  static parseError(data, additionalMessage) {
    return new RequestError(-32700, withDetail("Parse error", additionalMessage), data);
  }

  static invalidRequest(data, additionalMessage) {
    return new RequestError(-32600, withDetail("Invalid request", additionalMessage), data);
  }

  static methodNotFound(method) {
    return new RequestError(-32601, "Method not found", { method });
  }

  static invalidParams(data, additionalMessage) {
    return new RequestError(-32602, withDetail("Invalid params", additionalMessage), data);
  }

  static internalError(data, additionalMessage) {
    return new RequestError(-32603, withDetail("Internal error", additionalMessage), data);
  }

  static requestCancelled(data, additionalMessage) {
    return new RequestError(-32800, withDetail("Request cancelled", additionalMessage), data);
  }

  static authRequired(data, additionalMessage) {
    return new RequestError(-32000, withDetail("Authentication required", additionalMessage), data);
  }

  static resourceNotFound(uri) {
    return new RequestError(-32002, "Resource not found", uri === undefined ? undefined : { uri });
  }

  static sessionNotFound(sessionId) {
    return new RequestError(-32002, "Session not found", { sessionId });
  }

  static unsupportedProtocolVersion(requested, supported) {
    return new RequestError(-32602, "Unsupported protocol version", { requested, supported });
  }

  toResult() {
    return { error: this.toErrorResponse() };
  }

  toErrorResponse() {
    const error = { code: this.code, message: this.message };
    if (this.data !== undefined) error.data = this.data;
    return error;
  }
}

function fromNativeError(error) {
  const message = error && error.message;
  if (typeof message === "string" && message.startsWith(NATIVE_ERROR_PREFIX)) {
    const object = JSON.parse(message.slice(NATIVE_ERROR_PREFIX.length));
    return new RequestError(object.code, object.message, object.data);
  }
  return error;
}

function closedError(reason) {
  return new RequestError(-32603, "Connection closed", { reason });
}

function describe(error) {
  if (error instanceof Error) return error.stack || error.message;
  return String(error);
}

function logHandlerError(what, method, error) {
  try {
    process.stderr.write(`acp-engine: ${what} handler for ${method} failed: ${describe(error)}\n`);
  } catch {
    // stderr gone: nothing to do.
  }
}

// ---------------------------------------------------------------------------
// Streams: what a connection runs over.

function nativeOptions(options) {
  return options && options.maxMessageSize !== undefined ? options.maxMessageSize : undefined;
}

/**
 * Newline-delimited JSON over Web Streams (seed 001), for any transport a
 * user brings. Framing and parsing stay in the engine: the bytes of `input`
 * are fed to it and the bytes it writes go to `output`.
 */
export function ndJsonStream(output, input, options) {
  return {
    kind: "ndjson",
    [kOpen](side, wake, core) {
      const native = NativeConnection.pipe(side, nativeOptions(options), wake);
      core.attachByteStreams(native, output, input);
      return native;
    },
  };
}

/** This process's stdin/stdout, driven by the engine (an agent launched by its client). */
export function stdioStream(options) {
  return {
    kind: "stdio",
    [kOpen](side, wake) {
      return NativeConnection.stdio(side, nativeOptions(options), wake);
    },
  };
}

/**
 * Spawn an agent process and talk to it over its stdin/stdout, driven by
 * the engine. The process is started when a connection is made on the
 * returned stream; closing the connection closes its stdin, then kills it
 * if it has not exited within `exitGraceMs` (default 500).
 */
export function spawnAgent(command, args = [], options = {}) {
  return {
    kind: "spawn",
    [kOpen](side, wake) {
      const env = options.env === undefined ? undefined : Object.fromEntries(
        Object.entries(options.env).filter(([, value]) => value !== undefined).map(([k, v]) => [k, String(v)]),
      );
      return NativeConnection.spawn(
        side,
        nativeOptions(options),
        command,
        args.map(String),
        {
          cwd: options.cwd,
          env,
          clearEnv: options.clearEnv,
          inheritStderr: options.stderr === undefined ? undefined : options.stderr === "inherit",
          exitGraceMs: options.exitGraceMs,
        },
        wake,
      );
    },
  };
}

// ---------------------------------------------------------------------------
// The per-connection dispatcher.

class InboundContext {
  constructor(core, token, requestId) {
    this._core = core;
    this._token = token;
    this._controller = null;
    this.requestId = requestId;
  }

  /** Fires when the peer cancels this request (`$/cancel_request`) or the connection closes. */
  get signal() {
    if (this._controller === null) this._controller = new AbortController();
    return this._controller.signal;
  }

  _abort(reason) {
    if (this._controller === null) this._controller = new AbortController();
    if (!this._controller.signal.aborted) this._controller.abort(reason);
  }
}

// Open connections, flushed if the process exits (process.exit() runs no
// more setImmediate callbacks, and sends wait for one to be written).
const openCores = new Set();
let exitHookInstalled = false;
function flushOnExit(core) {
  openCores.add(core);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const open of openCores) {
      try {
        open.native.flush();
      } catch {
        // Closed: nothing to write.
      }
    }
  });
}

class Core {
  constructor(stream, side, onRequest, onNotification, voidResult) {
    if (!stream || typeof stream[kOpen] !== "function") {
      if (stream && stream.readable && stream.writable) stream = messageStream(stream);
      else throw new TypeError("acp-engine: expected a stream from ndJsonStream(), stdioStream() or spawnAgent()");
    }
    this.onRequest = onRequest;
    this.onNotification = onNotification;
    this.voidResult = voidResult;
    this.pending = new Map();
    this.tickets = new Map();
    this.inflight = new Map();
    this.cancelledEarly = new Set();
    this.queue = [];
    this.head = 0;
    this.running = false;
    this.isClosed = false;
    this.closeReason = undefined;
    this.controller = new AbortController();
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.writer = null;
    this.reader = null;
    this.resume = () => this.pump();
    this.resumeAfterError = (error) => {
      logHandlerError("notification", this.currentMethod, error);
      this.pump();
    };
    this.currentMethod = "";
    // pendingCount[0]: how many of our requests await a response; the
    // addon spins briefly for a response only while some do.
    this.pendingCount = new Int32Array(1);
    this.hostReads = false;
    this.readingPaused = false;
    this.native = null;
    this.native = stream[kOpen](side, () => this.onWake(), this);
    // The per-message sends are plain functions, cheaper to call than methods.
    this.sendRequestNative = this.native.requestFunction();
    this.sendNotificationNative = this.native.notifyFunction();
    this.respondNative = this.native.respondFunction();
    this.hostReads = this.native.startReading((text) => this.onEvents(text), this.pendingCount);
    flushOnExit(this);
  }

  // Web Streams transport: move bytes between the user's streams and the engine.
  attachByteStreams(native, output, input) {
    this.writer = output.getWriter();
    this.writer.closed.catch(() => {});
    const reader = input.getReader();
    this.reader = reader;
    (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          if (value && value.byteLength) native.feed(value);
        }
      } catch {
        // The input failed: same as its end.
      }
      native.endInput();
    })();
  }

  onWake() {
    const native = this.native;
    if (native === null) return;
    if (this.writer !== null) this.flushOutput(native);
    const text = native.drain();
    if (text != null) this.onEvents(text);
  }

  onEvents(text) {
    let events;
    try {
      events = JSON.parse(text);
    } catch (error) {
      logHandlerError("event", "drain", error);
      return;
    }
    if (this.running) {
      for (let i = 0; i < events.length; i++) {
        const event = events[i];
        const kind = event[0];
        if (kind === CANCELLED || kind === WRITTEN) this.handle(event);
        else this.queue.push(event);
      }
    } else {
      this.queue = events;
      this.head = 0;
      this.pump();
    }
  }

  flushOutput(native) {
    let bytes;
    while ((bytes = native.takeOutput()) != null) {
      this.writer.write(bytes).catch(() => {});
    }
    if (native.outputEnded() && this.writer !== null) {
      const writer = this.writer;
      this.writer = null;
      writer.close().catch(() => {});
    }
  }

  // Handle queued events in order; stop at a notification handler's promise
  // and resume when it settles.
  pump() {
    this.running = true;
    const queue = this.queue;
    while (this.head < queue.length) {
      const wait = this.handle(queue[this.head++]);
      if (wait !== undefined) {
        // Backpressure: read no more input until the queue is through.
        if (this.hostReads && !this.readingPaused && !this.isClosed) {
          this.readingPaused = true;
          this.native.pauseReading();
        }
        wait.then(this.resume, this.resumeAfterError);
        return;
      }
    }
    this.queue = [];
    this.head = 0;
    this.running = false;
    if (this.readingPaused) {
      this.readingPaused = false;
      if (!this.isClosed) this.native.resumeReading();
    }
  }

  handle(event) {
    switch (event[0]) {
      case NOTIFICATION: {
        let result;
        try {
          result = this.onNotification(event[1], event[2]);
        } catch (error) {
          logHandlerError("notification", event[1], error);
          return undefined;
        }
        if (result != null && typeof result.then === "function") {
          this.currentMethod = event[1];
          return result;
        }
        return undefined;
      }
      case REQUEST:
        this.startRequest(event[1], event[2], event[3]);
        return undefined;
      case RESULT: {
        const waiter = this.pending.get(event[1]);
        if (waiter !== undefined) {
          this.pending.delete(event[1]);
          this.pendingCount[0] = this.pending.size;
          waiter.resolve(event[2]);
        }
        return undefined;
      }
      case ERROR: {
        const waiter = this.pending.get(event[1]);
        if (waiter !== undefined) {
          this.pending.delete(event[1]);
          this.pendingCount[0] = this.pending.size;
          const error = event[2];
          waiter.reject(new RequestError(error.code, error.message, error.data));
        }
        return undefined;
      }
      case CANCELLED: {
        const context = this.inflight.get(event[1]);
        if (context !== undefined) {
          this.inflight.delete(event[1]);
          context._abort(RequestError.requestCancelled());
        } else {
          this.cancelledEarly.add(event[1]);
        }
        return undefined;
      }
      case WRITTEN: {
        const waiter = this.tickets.get(event[1]);
        if (waiter !== undefined) {
          this.tickets.delete(event[1]);
          if (event[2]) waiter.resolve();
          else waiter.reject(closedError(this.closeReason ?? "closed"));
        }
        return undefined;
      }
      case CLOSED:
        this.finish(event[1]);
        return undefined;
      default:
        return undefined;
    }
  }

  startRequest(token, method, params) {
    const context = new InboundContext(this, token, token);
    this.inflight.set(token, context);
    if (this.cancelledEarly.size !== 0 && this.cancelledEarly.delete(token)) {
      context._abort(RequestError.requestCancelled());
    }
    let result;
    try {
      result = this.onRequest(method, params, context);
    } catch (error) {
      this.fail(token, method, error);
      return;
    }
    if (result != null && typeof result.then === "function") {
      result.then(
        (value) => this.succeed(token, value),
        (error) => this.fail(token, method, error),
      );
    } else {
      this.succeed(token, result);
    }
  }

  succeed(token, value) {
    this.inflight.delete(token);
    if (this.isClosed) return;
    let text;
    try {
      text = JSON.stringify(value === undefined ? this.voidResult : value);
    } catch (error) {
      this.fail(token, "", error);
      return;
    }
    try {
      this.respondNative(token, text === undefined ? "null" : text);
      this.scheduleFlush();
    } catch (error) {
      logHandlerError("request", "response", fromNativeError(error));
    }
  }

  fail(token, method, error) {
    this.inflight.delete(token);
    if (this.isClosed) return;
    let code = -32603;
    let message = "Internal error";
    let data;
    if (
      error instanceof RequestError ||
      (error !== null &&
        typeof error === "object" &&
        Number.isInteger(error.code) &&
        typeof error.message === "string" &&
        error.name === "RequestError")
    ) {
      code = error.code;
      message = error.message;
      data = error.data;
    } else {
      logHandlerError("request", method, error);
    }
    let dataText = null;
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

  finish(reason) {
    openCores.delete(this);
    if (this.isClosed) return;
    this.isClosed = true;
    this.closeReason = reason;
    const error = closedError(reason);
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
    this.pendingCount[0] = 0;
    for (const waiter of this.tickets.values()) waiter.reject(error);
    this.tickets.clear();
    for (const context of this.inflight.values()) context._abort(error);
    this.inflight.clear();
    const native = this.native;
    if (this.writer !== null) this.flushOutput(native);
    if (this.writer !== null) {
      const writer = this.writer;
      this.writer = null;
      writer.close().catch(() => {});
    }
    if (this.reader !== null) {
      this.reader.cancel().catch(() => {});
      this.reader = null;
    }
    native.release();
    this.controller.abort(error);
    this.resolveClosed();
  }

  // Answer inbound request `token` now (its handler's later answer is
  // dropped) and abort its signal.
  answerEarly(token, value) {
    const context = this.inflight.get(token);
    if (context === undefined) return;
    this.inflight.delete(token);
    context._abort(RequestError.requestCancelled());
    if (this.isClosed) return;
    try {
      this.respondNative(token, JSON.stringify(value));
      this.scheduleFlush();
    } catch {
      // Closed meanwhile.
    }
  }

  sendRequest(method, params) {
    let id;
    try {
      id = this.sendRequestNative(method, params === undefined ? undefined : JSON.stringify(params));
      this.scheduleFlush();
    } catch (error) {
      return Promise.reject(fromNativeError(error));
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.pendingCount[0] = this.pending.size;
    });
  }

  /** Like sendRequest, also returning the request id (for cancelPendingRequest). */
  sendRequestWithId(method, params) {
    let id;
    try {
      id = this.sendRequestNative(method, params === undefined ? undefined : JSON.stringify(params));
      this.scheduleFlush();
    } catch (error) {
      return { id: undefined, promise: Promise.reject(fromNativeError(error)) };
    }
    const promise = new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.pendingCount[0] = this.pending.size;
    });
    return { id, promise };
  }

  sendNotification(method, params) {
    let ticket;
    try {
      ticket = this.sendNotificationNative(method, params === undefined ? undefined : JSON.stringify(params));
      this.scheduleFlush();
    } catch (error) {
      return Promise.reject(fromNativeError(error));
    }
    return ticket === 0 ? RESOLVED : this.waitTicket(ticket);
  }

  waitTicket(ticket) {
    return new Promise((resolve, reject) => {
      this.tickets.set(ticket, { resolve, reject });
    });
  }

  sendCancelRequestNotification(params) {
    const requestId = params !== null && typeof params === "object" ? params.requestId : params;
    let ticket;
    try {
      ticket = this.native.sendCancelRequest(JSON.stringify(requestId));
      this.scheduleFlush();
    } catch (error) {
      return Promise.reject(fromNativeError(error));
    }
    return ticket === 0 ? RESOLVED : this.waitTicket(ticket);
  }

  cancelPendingRequest(id) {
    const cancelled = this.native.cancelPending(id);
    this.scheduleFlush();
    return cancelled;
  }

  /** Sends are collected in the engine and written together: after the
   * batch being handled (the addon flushes), or on this loop turn's
   * setImmediate for sends made anywhere else. */
  scheduleFlush() {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      try {
        this.native.flush();
      } catch {
        // Closed meanwhile: the sends fail on their own.
      }
    });
  }

  close() {
    this.native.close();
  }
}

// An official-SDK style stream of message objects ({readable, writable} of
// JSON-RPC objects): serialize to bytes for the engine, parse what it writes.
function messageStream(stream) {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let buffered = "";
  const messageWriter = stream.writable.getWriter();
  messageWriter.closed.catch(() => {});
  const output = new WritableStream({
    write(bytes) {
      let last;
      buffered += decoder.decode(bytes, { stream: true });
      let newline;
      while ((newline = buffered.indexOf("\n")) !== -1) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) last = messageWriter.write(JSON.parse(line));
      }
      return last;
    },
    close() {
      return messageWriter.close();
    },
  });
  const messages = stream.readable.getReader();
  const input = new ReadableStream({
    async pull(controller) {
      const { value, done } = await messages.read();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(`${JSON.stringify(value)}\n`));
    },
    cancel(reason) {
      return messages.cancel(reason);
    },
  });
  return ndJsonStream(output, input);
}

// ---------------------------------------------------------------------------
// Generic JSON-RPC connection (seed 000).

/**
 * A bidirectional JSON-RPC 2.0 connection with no ACP schema checks.
 * `requestHandler(method, params, context)` answers requests (its value is
 * the result; a thrown RequestError is sent as is, anything else as
 * -32603); `notificationHandler(method, params)` runs in order.
 */
export class Connection {
  #core;

  constructor(requestHandler, notificationHandler, stream) {
    this.#core = new Core(
      stream,
      SIDE_RAW,
      (method, params, context) => requestHandler(method, params, context),
      (method, params) => notificationHandler(method, params),
      null,
    );
  }

  sendRequest(method, params) {
    return this.#core.sendRequest(method, params);
  }

  /** Send a request and get its id too, e.g. for cancelPendingRequest. */
  sendRequestWithId(method, params) {
    return this.#core.sendRequestWithId(method, params);
  }

  sendNotification(method, params) {
    return this.#core.sendNotification(method, params);
  }

  sendCancelRequestNotification(params) {
    return this.#core.sendCancelRequestNotification(params);
  }

  cancelPendingRequest(id) {
    return this.#core.cancelPendingRequest(id);
  }

  close() {
    this.#core.close();
  }

  get signal() {
    return this.#core.controller.signal;
  }

  get closed() {
    return this.#core.closed;
  }

  get pid() {
    return this.#core.native.pid ?? undefined;
  }
}

// ---------------------------------------------------------------------------
// ACP sides.

// Inbound method -> handler method name(s), per side.
const AGENT_REQUESTS = {
  initialize: ["initialize"],
  authenticate: ["authenticate"],
  "session/new": ["newSession"],
  "session/load": ["loadSession"],
  "session/set_mode": ["setSessionMode"],
  "session/set_config_option": ["setSessionConfigOption"],
  "session/prompt": ["prompt"],
  "session/list": ["listSessions", "unstable_listSessions"],
  "session/delete": ["deleteSession", "unstable_deleteSession"],
  "session/resume": ["resumeSession", "unstable_resumeSession"],
  "session/close": ["closeSession", "unstable_closeSession"],
  logout: ["logout", "unstable_logout"],
};
const AGENT_NOTIFICATIONS = { "session/cancel": ["cancel"] };
const CLIENT_REQUESTS = {
  "session/request_permission": ["requestPermission"],
  "fs/write_text_file": ["writeTextFile"],
  "fs/read_text_file": ["readTextFile"],
  "terminal/create": ["createTerminal"],
  "terminal/output": ["terminalOutput"],
  "terminal/release": ["releaseTerminal"],
  "terminal/wait_for_exit": ["waitForTerminalExit"],
  "terminal/kill": ["killTerminal"],
  "elicitation/create": ["createElicitation", "unstable_createElicitation"],
};
const CLIENT_NOTIFICATIONS = {
  "session/update": ["sessionUpdate"],
  "elicitation/complete": ["completeElicitation", "unstable_completeElicitation"],
};

function bindTable(impl, table) {
  const bound = new Map();
  for (const [method, names] of Object.entries(table)) {
    for (const name of names) {
      const fn = impl[name];
      if (typeof fn === "function") {
        bound.set(method, fn.bind(impl));
        break;
      }
    }
  }
  return bound;
}

function makeHandlers(getImpl, requestTable, notificationTable) {
  let requests = null;
  let notifications = null;
  let extMethod = null;
  let extNotification = null;
  const ready = () => {
    const impl = getImpl();
    requests = bindTable(impl, requestTable);
    notifications = bindTable(impl, notificationTable);
    extMethod = typeof impl.extMethod === "function" ? impl.extMethod.bind(impl) : null;
    extNotification = typeof impl.extNotification === "function" ? impl.extNotification.bind(impl) : null;
  };
  const onRequest = (method, params, context) => {
    if (requests === null) ready();
    const handler = requests.get(method);
    if (handler !== undefined) return handler(params, context);
    if (method.charCodeAt(0) === 95 /* _ */ && extMethod !== null) {
      return extMethod(method.slice(1), params ?? {}, context);
    }
    throw RequestError.methodNotFound(method);
  };
  const onNotification = (method, params) => {
    if (notifications === null) ready();
    const handler = notifications.get(method);
    if (handler !== undefined) return handler(params);
    if (method.charCodeAt(0) === 95 /* _ */ && extNotification !== null) {
      return extNotification(method.slice(1), params ?? {});
    }
    return undefined;
  };
  return { onRequest, onNotification };
}

/** A terminal created by the client for an agent (`terminal/create`). */
export class TerminalHandle {
  #sessionId;
  #core;

  constructor(id, sessionId, core) {
    this.id = id;
    this.#sessionId = sessionId;
    this.#core = core;
  }

  currentOutput() {
    return this.#core.sendRequest("terminal/output", { sessionId: this.#sessionId, terminalId: this.id });
  }

  waitForExit() {
    return this.#core.sendRequest("terminal/wait_for_exit", { sessionId: this.#sessionId, terminalId: this.id });
  }

  kill() {
    return this.#core.sendRequest("terminal/kill", { sessionId: this.#sessionId, terminalId: this.id });
  }

  release() {
    return this.#core.sendRequest("terminal/release", { sessionId: this.#sessionId, terminalId: this.id });
  }

  async [Symbol.asyncDispose]() {
    await this.release();
  }
}

/** The agent's side of a connection: receives agent methods, calls the client's. */
export class AgentSideConnection {
  #core;

  constructor(toAgent, stream) {
    let agent = null;
    const { onRequest, onNotification } = makeHandlers(
      () => agent,
      AGENT_REQUESTS,
      AGENT_NOTIFICATIONS,
    );
    this.#core = new Core(stream, SIDE_AGENT, onRequest, onNotification, {});
    agent = toAgent(this);
  }

  sessionUpdate(params) {
    return this.#core.sendNotification("session/update", params);
  }

  requestPermission(params) {
    return this.#core.sendRequest("session/request_permission", params);
  }

  readTextFile(params) {
    return this.#core.sendRequest("fs/read_text_file", params);
  }

  writeTextFile(params) {
    return this.#core.sendRequest("fs/write_text_file", params);
  }

  async createTerminal(params) {
    const response = await this.#core.sendRequest("terminal/create", params);
    return new TerminalHandle(response.terminalId, params.sessionId, this.#core);
  }

  createElicitation(params) {
    return this.#core.sendRequest("elicitation/create", params);
  }

  completeElicitation(params) {
    return this.#core.sendNotification("elicitation/complete", params);
  }

  extMethod(method, params) {
    return this.#core.sendRequest(`_${method}`, params);
  }

  extNotification(method, params) {
    return this.#core.sendNotification(`_${method}`, params);
  }

  close() {
    this.#core.close();
  }

  get signal() {
    return this.#core.controller.signal;
  }

  get closed() {
    return this.#core.closed;
  }
}

/** The client's side of a connection: receives client methods, calls the agent's. */
export class ClientSideConnection {
  #core;

  // sessionId -> tokens of its session/request_permission requests.
  #permissions = new Map();

  constructor(toClient, stream) {
    let client = null;
    const { onRequest, onNotification } = makeHandlers(
      () => client,
      CLIENT_REQUESTS,
      CLIENT_NOTIFICATIONS,
    );
    const permissions = this.#permissions;
    const trackPermissions = (method, params, context) => {
      if (method !== "session/request_permission") return onRequest(method, params, context);
      const sessionId = params.sessionId;
      const token = context._token;
      let tokens = permissions.get(sessionId);
      if (tokens === undefined) permissions.set(sessionId, (tokens = new Set()));
      tokens.add(token);
      // Answered (or failed): cancel() has nothing left to answer for it.
      const untrack = () => {
        tokens.delete(token);
        if (tokens.size === 0 && permissions.get(sessionId) === tokens) permissions.delete(sessionId);
      };
      let result;
      try {
        result = onRequest(method, params, context);
      } catch (error) {
        untrack();
        throw error;
      }
      if (result != null && typeof result.then === "function") result.then(untrack, untrack);
      else untrack();
      return result;
    };
    this.#core = new Core(stream, SIDE_CLIENT, trackPermissions, onNotification, {});
    this.#core.closed.then(() => permissions.clear());
    client = toClient(this);
  }

  initialize(params) {
    return this.#core.sendRequest("initialize", params);
  }

  authenticate(params) {
    return this.#core.sendRequest("authenticate", params);
  }

  logout(params) {
    return this.#core.sendRequest("logout", params ?? {});
  }

  newSession(params) {
    return this.#core.sendRequest("session/new", params);
  }

  loadSession(params) {
    return this.#core.sendRequest("session/load", params);
  }

  listSessions(params) {
    return this.#core.sendRequest("session/list", params ?? {});
  }

  deleteSession(params) {
    return this.#core.sendRequest("session/delete", params);
  }

  resumeSession(params) {
    return this.#core.sendRequest("session/resume", params);
  }

  closeSession(params) {
    return this.#core.sendRequest("session/close", params);
  }

  setSessionMode(params) {
    return this.#core.sendRequest("session/set_mode", params);
  }

  setSessionConfigOption(params) {
    return this.#core.sendRequest("session/set_config_option", params);
  }

  prompt(params) {
    return this.#core.sendRequest("session/prompt", params);
  }

  /**
   * Send `session/cancel`, then answer the session's pending permission
   * requests `cancelled` (as the protocol asks of a client) and abort their
   * handlers' signals.
   */
  cancel(params) {
    const sent = this.#core.sendNotification("session/cancel", params);
    const tokens = params && this.#permissions.get(params.sessionId);
    if (tokens !== undefined) {
      this.#permissions.delete(params.sessionId);
      for (const token of tokens) this.#core.answerEarly(token, { outcome: { outcome: "cancelled" } });
    }
    return sent;
  }

  extMethod(method, params) {
    return this.#core.sendRequest(`_${method}`, params);
  }

  extNotification(method, params) {
    return this.#core.sendNotification(`_${method}`, params);
  }

  close() {
    this.#core.close();
  }

  get signal() {
    return this.#core.controller.signal;
  }

  get closed() {
    return this.#core.closed;
  }

  /** The spawned agent's process id (connections made on spawnAgent()). */
  get pid() {
    return this.#core.native.pid ?? undefined;
  }
}
