// The official SDK's view of an `ndJsonStream`: its byte streams as a
// `{ readable, writable }` pair of JSON-RPC message objects, for user code
// that reads or writes messages itself (tests, taps, proxies). A connection
// given an untouched `ndJsonStream` never builds it: the engine reads and
// writes the bytes. Lines become values as the official SDK makes them (any
// JSON object passes, unchecked: the connection judges it); a line that is
// not JSON, or not an object, is answered on `output` and skipped.

import { RequestError } from "./errors.js";
import { LIMIT_DEFAULTS } from "./generated/tables.js";
import { MessageTooLargeError } from "./stream-limits.js";

const NEWLINE = 0x0a;

/** What a connection writes for a line it cannot take (the request's id is unknown). */
function errorResponse(error: RequestError): object {
  return { jsonrpc: "2.0", id: null, error: error.toErrorResponse() };
}

/** Bytes cut into lines (without their newline), at most `maxLineBytes` each. */
export class LineSplitter {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxLineBytes = Infinity) {}

  push(chunk: Uint8Array): Uint8Array[] {
    const lines: Uint8Array[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      lines.push(this.take(chunk.subarray(start, newline)));
      start = newline + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
    return lines;
  }

  private check(lineBytes: number): void {
    if (lineBytes > this.maxLineBytes) throw new MessageTooLargeError(this.maxLineBytes);
  }

  /** The last line, when the input ended without a newline. */
  flush(): Uint8Array | undefined {
    return this.pendingBytes > 0 ? this.take(new Uint8Array(0)) : undefined;
  }

  private keep(part: Uint8Array): void {
    this.pendingBytes += part.length;
    this.check(this.pendingBytes);
    this.pending.push(part.slice());
  }

  private take(tail: Uint8Array): Uint8Array {
    if (this.pendingBytes === 0) {
      // A whole line in one chunk.
      this.check(tail.length);
      return tail;
    }
    this.keep(tail);
    const line = new Uint8Array(this.pendingBytes);
    let at = 0;
    for (const part of this.pending) {
      line.set(part, at);
      at += part.length;
    }
    this.pending = [];
    this.pendingBytes = 0;
    return line;
  }
}

/** Messages over `output` / `input`. Neither stream stays locked between
 * writes to `output`; cancelling `readable` cancels `input`. */
export function messageView(
  output: WritableStream<Uint8Array>,
  input: ReadableStream<Uint8Array>,
  maxMessageSize: number = LIMIT_DEFAULTS.maxMessageSize,
): { readable: ReadableStream<unknown>; writable: WritableStream<unknown> } {
  const encoder = new TextEncoder();
  let writes: Promise<void> = Promise.resolve();
  const write = (message: unknown): Promise<void> => {
    const bytes = encoder.encode(`${JSON.stringify(message)}\n`);
    const written = writes.then(async () => {
      const writer = output.getWriter();
      try {
        await writer.write(bytes);
      } finally {
        writer.releaseLock();
      }
    });
    writes = written.catch(() => {});
    return written;
  };

  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let cancelled = false;
  const readable = new ReadableStream<unknown>({
    async start(controller) {
      const decoder = new TextDecoder();
      const lines = new LineSplitter(maxMessageSize);
      const take = async (line: Uint8Array): Promise<void> => {
        const text = decoder.decode(line).trim();
        if (!text) return;
        let message: unknown;
        try {
          message = JSON.parse(text);
        } catch {
          await write(errorResponse(RequestError.parseError()));
          return;
        }
        if (Array.isArray(message)) {
          await write(errorResponse(RequestError.invalidRequest(undefined, "JSON-RPC batches are not supported")));
        } else if (typeof message === "object" && message !== null) {
          controller.enqueue(message);
        } else {
          await write(errorResponse(RequestError.invalidRequest(message)));
        }
      };
      const own = input.getReader();
      reader = own;
      try {
        for (;;) {
          const { value, done } = await own.read();
          if (cancelled) return;
          if (done) break;
          for (const line of lines.push(value)) {
            await take(line);
            if (cancelled) return;
          }
        }
        const last = lines.flush();
        if (last !== undefined) await take(last);
        controller.close();
      } catch (error) {
        if (cancelled) return;
        controller.error(error);
        own.cancel(error).catch(() => {});
      } finally {
        reader = undefined;
        own.releaseLock();
      }
    },
    cancel(reason) {
      cancelled = true;
      return reader?.cancel(reason);
    },
  });
  const writable = new WritableStream<unknown>({ write });
  return { readable, writable };
}
