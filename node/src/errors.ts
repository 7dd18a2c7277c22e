// RequestError: the JSON-RPC error object, with the factories of the official
// TypeScript SDK, and how errors from the engine become one.

import { ERROR_CODES, ERROR_MESSAGES, OFFICIAL_MESSAGES } from "./generated/tables.js";

/** The JSON-RPC error object. */
export interface ErrorResponse {
  code: number;
  message: string;
  data?: unknown;
}

/** A result or an error, as a JSON-RPC response carries it. */
export type Result<T> = { result: T } | { error: ErrorResponse };

function withDetail(message: string, additionalMessage?: string): string {
  return additionalMessage ? `${message}: ${additionalMessage}` : message;
}

/** An error in ACP / JSON-RPC communication: what a handler throws to answer
 * with an error, and what a request to the peer rejects with. */
export class RequestError extends Error {
  code: number;
  data?: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "RequestError";
    this.code = code;
    if (data !== undefined) this.data = data;
  }

  static parseError(data?: unknown, additionalMessage?: string): RequestError {
    return new RequestError(ERROR_CODES.parseError, withDetail(ERROR_MESSAGES.parseError, additionalMessage), data);
  }

  static invalidRequest(data?: unknown, additionalMessage?: string): RequestError {
    return new RequestError(ERROR_CODES.invalidRequest, withDetail(ERROR_MESSAGES.invalidRequest, additionalMessage), data);
  }

  static methodNotFound(method: string): RequestError {
    return new RequestError(ERROR_CODES.methodNotFound, ERROR_MESSAGES.methodNotFound, { method });
  }

  static invalidParams(data?: unknown, additionalMessage?: string): RequestError {
    return new RequestError(ERROR_CODES.invalidParams, withDetail(ERROR_MESSAGES.invalidParams, additionalMessage), data);
  }

  static internalError(data?: unknown, additionalMessage?: string): RequestError {
    return new RequestError(ERROR_CODES.internalError, withDetail(ERROR_MESSAGES.internalError, additionalMessage), data);
  }

  static requestCancelled(data?: unknown, additionalMessage?: string): RequestError {
    return new RequestError(ERROR_CODES.requestCancelled, withDetail(ERROR_MESSAGES.requestCancelled, additionalMessage), data);
  }

  static authRequired(data?: unknown, additionalMessage?: string): RequestError {
    return new RequestError(ERROR_CODES.authRequired, withDetail(ERROR_MESSAGES.authRequired, additionalMessage), data);
  }

  static resourceNotFound(uri?: string): RequestError {
    return new RequestError(ERROR_CODES.resourceNotFound, ERROR_MESSAGES.resourceNotFound, uri === undefined ? undefined : { uri });
  }

  static sessionNotFound(sessionId: string): RequestError {
    return new RequestError(ERROR_CODES.resourceNotFound, ERROR_MESSAGES.sessionNotFound, { sessionId });
  }

  static unsupportedProtocolVersion(requested: number, supported: readonly number[]): RequestError {
    return new RequestError(ERROR_CODES.unsupportedProtocolVersion, ERROR_MESSAGES.unsupportedProtocolVersion, { requested, supported });
  }

  /** Whether this is the error calls fail with once the connection closed. */
  isConnectionClosed(): boolean {
    return this.code === ERROR_CODES.connectionClosed;
  }

  toResult<T>(): Result<T> {
    return { error: this.toErrorResponse() };
  }

  toErrorResponse(): ErrorResponse {
    const error: ErrorResponse = { code: this.code, message: this.message };
    if (this.data !== undefined) error.data = this.data;
    return error;
  }
}

/** An error thrown by the addon: engine errors carry a numeric `code` (and
 * their `data` as JSON text, `dataJson`), anything else (a bad argument) is
 * passed on as it is. */
export function fromNativeError(error: unknown): unknown {
  if (error instanceof Error && typeof (error as { code?: unknown }).code === "number") {
    const { code, dataJson } = error as Error & { code: number; dataJson?: string };
    return engineError(code, error.message, dataJson === undefined ? undefined : JSON.parse(dataJson));
  }
  return error;
}

/** An error the engine reports, as the package's RequestError. The engine's
 * own closed-connection error takes the official SDK's message ("ACP
 * connection closed"), which user code matches; anything else (a peer's
 * error response among them, whatever its code) keeps its words. */
export function engineError(code: number, message: string, data?: unknown): RequestError {
  return new RequestError(code, isEngineClose(code, message) ? OFFICIAL_MESSAGES.connectionClosed : message, data);
}

/** Whether an error is the engine's own for a closed connection (its code and message). */
export function isEngineClose(code: number, message: string): boolean {
  return code === ERROR_CODES.connectionClosed && message === ERROR_MESSAGES.connectionClosed;
}

/** `call()`'s value; an addon error thrown as the package's RequestError. */
export function callNative<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw fromNativeError(error);
  }
}

/** What every pending call fails with once the connection closed. */
export function closedError(reason: string): RequestError {
  return new RequestError(ERROR_CODES.connectionClosed, OFFICIAL_MESSAGES.connectionClosed, { reason });
}

/** Whether `error` is a RequestError (or looks like one: another copy of this package). */
export function isRequestError(error: unknown): error is RequestError {
  if (error instanceof RequestError) return true;
  const e = error as { code?: unknown; message?: unknown; name?: unknown } | null;
  return e !== null && typeof e === "object" && Number.isInteger(e.code) && typeof e.message === "string" && e.name === "RequestError";
}

/** Report a handler's failure on stderr (never stdout: it may be the ACP stream). */
export function logHandlerError(what: string, method: string, error: unknown): void {
  const text = error instanceof Error ? error.stack || error.message : String(error);
  try {
    process.stderr.write(`acp-engine: ${what} handler for ${method} failed: ${text}\n`);
  } catch {
    // stderr gone: nothing to do.
  }
}
