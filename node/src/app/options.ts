// The app API's option types, as the official SDK 2.x names them.

/** Options of an outgoing request. */
export interface SendRequestOptions {
  /** Aborting it cancels the request: the peer gets `$/cancel_request` and
   * the promise rejects with -32800 (a late answer is dropped). */
  cancellationSignal?: AbortSignal;
  /** Accepted for the official SDK's sake: the engine always stops waiting
   * on cancellation. */
  stopWaitingOnCancel?: boolean;
}

/** Options of an app. */
export interface AppOptions {
  /** A name for diagnostics. */
  name?: string;
}

/** Parses a custom method's raw params: a function or anything with `parse` (a Zod schema). */
export type ParamsParser<Params> = { parse: (params: unknown) => Params } | ((params: unknown) => Params);

export function parseParams<Params>(parser: ParamsParser<Params> | undefined, params: unknown): Params {
  if (parser === undefined) return params as Params;
  return typeof parser === "function" ? parser(params) : parser.parse(params);
}
