// The official SDK's names for the largest message a stream reads, which its
// 2.x root exports too: the engine enforces the limit.

import { LIMIT_DEFAULTS } from "./generated/tables.js";

/** The largest message a stream reads unless told (the engine's default). */
export const DEFAULT_MAX_MESSAGE_BYTES: number = LIMIT_DEFAULTS.maxMessageSize;

/** The official SDK's error for a message over `maxMessageBytes`, which reading
 * `ndJsonStream`'s messages yourself fails with, as there. A connection's
 * engine answers such a message -32600 instead (its size in `data.reason`),
 * skips it and goes on. */
export class MessageTooLargeError extends Error {
  constructor(readonly maxMessageBytes: number) {
    super(`Incoming ACP data exceeds the configured ${maxMessageBytes} byte limit`);
    this.name = "MessageTooLargeError";
  }
}

/** `maxMessageBytes` as the official SDK takes it: unset (the default) or a
 * positive safe integer; anything else is a RangeError, as there. */
export function checkedMaxMessageBytes(value: number | undefined): number | undefined {
  if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) {
    throw new RangeError("maxMessageBytes must be a positive safe integer");
  }
  return value;
}
