// Moving bytes between the engine and a user's Web Streams (`ndJsonStream`):
// the input is read into the engine; the engine's output is written to the
// output stream. The output's writer is held only while writes are in
// flight (as the official SDK holds it per write), so the user may close or
// reuse the stream while the connection is idle. A user's output is never
// closed by the connection (the official SDK does not either; and Node 20's
// `Writable.toWeb` adapter throws from an event callback when its web stream
// is closed while the caller ends the Node stream); one the package made
// (`closeOutput`) is closed once the engine's output ended.

import type { NativeConnection } from "./native.js";

export class WebStreamsTransport {
  private output: WritableStream<Uint8Array> | null;
  private reader: ReadableStreamDefaultReader<Uint8Array> | null;
  private writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  private writesInFlight = 0;

  /** `onFailure`: a stream failed (its error); the connection is to close with it. */
  constructor(
    private readonly native: NativeConnection,
    output: WritableStream<Uint8Array>,
    input: ReadableStream<Uint8Array>,
    private readonly closeOutput: boolean,
    private readonly onFailure: (error: unknown) => void,
  ) {
    this.output = output;
    const reader = input.getReader();
    this.reader = reader;
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          if (value && value.byteLength) native.feed(value);
        }
      } catch (error) {
        onFailure(error);
      }
      native.endInput();
    })();
  }

  /** Write what the engine has for the output, in order; close it once the engine's output ended. */
  flush(): void {
    const output = this.output;
    if (output === null) return;
    let bytes = this.native.takeOutput();
    const ended = this.native.outputEnded();
    if (ended) this.output = null;
    if (bytes == null && !(ended && this.closeOutput)) return;
    let writer = this.writer;
    if (writer === null) {
      try {
        writer = this.writer = output.getWriter();
      } catch (error) {
        if (!ended) this.onFailure(error);
        return;
      }
    }
    const held = writer;
    const settled = () => {
      if (--this.writesInFlight === 0 && this.writer === held) {
        this.writer = null;
        held.releaseLock();
      }
    };
    const failed = (error: unknown) => {
      if (!ended) this.onFailure(error);
      settled();
    };
    for (; bytes != null; bytes = this.native.takeOutput()) {
      this.writesInFlight++;
      held.write(bytes).then(settled, failed);
    }
    if (ended && this.closeOutput) {
      this.writesInFlight++;
      held.close().then(settled, settled);
    }
  }

  /** Write what the engine has for the output; true once its output ended and all was written. */
  flushed(): boolean {
    this.flush();
    return this.output === null;
  }

  /** The connection closed: stop reading, write what is left. True once all
   * of the engine's output was handed to the output stream (closing one of
   * ours); otherwise its last bytes are still on their way from the engine's
   * thread, and the next `flush` (on the next wake-up) writes them. */
  close(): boolean {
    if (this.reader !== null) {
      this.reader.cancel().catch(() => {});
      this.reader = null;
    }
    this.flush();
    return this.output === null;
  }
}
