// Moving bytes between the engine and a user's Web Streams (`ndJsonStream`):
// the input is fed to the engine and read, framed and checked right here on
// Node's thread (`pump`), and what the engine writes from this thread is
// passed on at once, so a round trip crosses no thread. Input is read only
// once what was fed is through (reading waits while a notification handler
// is busy or the connection is at its limits); output is written as fast
// as the output stream takes it. The output's writer is held only while
// writes are in flight (as the official SDK holds it per write), so the
// user may close or reuse the stream while the connection is idle. A user's output is never
// closed by the connection (the official SDK does not either; and Node 20's
// `Writable.toWeb` adapter throws from an event callback when its web stream
// is closed while the caller ends the Node stream); one the package made
// (`closeOutput`) is closed once the engine's output ended.

import { type NativeConnection, PUMP_STATES } from "./native.js";

/** Batches handled per turn at most, so other I/O gets its turn. */
const MAX_ROUNDS = 64;

/** Reading the connection's input can wait (backpressure). */
export interface Reading {
  pauseReading(): void;
  resumeReading(): void;
}

export class WebStreamsTransport implements Reading {
  private output: WritableStream<Uint8Array> | null;
  private reader: ReadableStreamDefaultReader<Uint8Array> | null;
  private writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  private writesInFlight = 0;
  private pausedByHost = false;
  private pumping = false;
  // The read loop waits for what was fed to be read before it reads more.
  private inputRead: (() => void) | null = null;
  // Fed bytes the engine has not read yet (as its last `pump` said).
  private inputFed = false;
  // The input stream ended (`endInput`); the engine read its end, or closed.
  private inputEnded = false;
  private inputDone = false;
  // Reading waits at the connection's limits (as its last `pump` said).
  private pausedByLimits = false;
  // Output came while a write was in flight: take it once that is written.
  private outputWaiting = false;
  // Called once the engine's output ended and all of it was written.
  private onFlushed: (() => void) | null = null;
  // Waiting for the output to take what the engine has for it now (`written`).
  private waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  // The output's write failure, once one failed.
  private writeFailure: { error: unknown } | null = null;

  /** `onFailure`: a stream failed (its error); the connection is to close
   * with it. `deliver`: drain the engine's events and handle them. */
  constructor(
    private readonly native: NativeConnection,
    output: WritableStream<Uint8Array>,
    input: ReadableStream<Uint8Array>,
    private readonly closeOutput: boolean,
    private readonly onFailure: (error: unknown) => void,
    private readonly deliver: () => void,
  ) {
    this.output = output;
    const reader = input.getReader();
    this.reader = reader;
    void this.readInput(reader);
  }

  /** Feed what `input` brings, reading more only once that was read. */
  private async readInput(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const native = this.native;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (!value || !value.byteLength) continue;
        if (this.pumpInput(value) && this.reader !== null) {
          await new Promise<void>((resolve) => {
            this.inputRead = resolve;
          });
        }
      }
    } catch (error) {
      this.onFailure(error);
    }
    native.endInput();
    this.inputEnded = true;
    this.pumpInput();
  }

  /** Whether fed input, or the end of the input, is left for the engine to read. */
  private inputLeft(): boolean {
    return !this.inputDone && (this.inputEnded || this.inputFed);
  }

  /** The engine's wake: reading may go on after the limits held it, and
   * output written on its thread is to be passed on. */
  onWake(): void {
    this.pausedByLimits = false;
    if (this.inputLeft()) this.pumpInput();
    this.flush();
  }

  /** Settles once the output took everything the engine has for it now
   * (a notification just sent, as the official SDK's notification promise
   * waits for its write), or rejects with the output's write error. */
  written(): Promise<void> {
    if (this.writeFailure !== null) return Promise.reject(this.writeFailure.error);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Feed `input` (when given), read and handle what was fed, here on this
   * thread, and write the answers made meanwhile; again after a pause or
   * the engine's wake. True while input is left to read. */
  private pumpInput(input?: Uint8Array): boolean {
    if (this.pumping || this.pausedByHost) {
      if (input !== undefined) this.feed(input);
      return this.inputLeft();
    }
    this.pumping = true;
    let rounds = 0;
    try {
      for (; rounds < MAX_ROUNDS && !this.pausedByLimits; rounds++) {
        const state = this.native.pump(input);
        input = undefined;
        this.deliver();
        this.inputFed = (state & PUMP_STATES.inputLeft) !== 0;
        if (!(state & PUMP_STATES.open)) this.inputDone = true;
        // At the limits: the engine wakes us (`onWake`).
        this.pausedByLimits = (state & PUMP_STATES.readingPaused) !== 0;
        if (this.pausedByHost || !this.inputLeft()) break;
      }
      // Reading waits at the limits: the input waits in the engine.
      if (input !== undefined) this.feed(input);
    } finally {
      this.pumping = false;
    }
    this.flush();
    if (!this.inputLeft()) {
      const read = this.inputRead;
      this.inputRead = null;
      read?.();
      return false;
    }
    if (rounds === MAX_ROUNDS && !this.pausedByHost && !this.pausedByLimits) setImmediate(() => this.pumpInput());
    return true;
  }

  private feed(input: Uint8Array): void {
    this.native.feed(input);
    this.inputFed = true;
  }

  /** A handler is busy: handle no more input until `resumeReading`. */
  pauseReading(): void {
    this.pausedByHost = true;
  }

  resumeReading(): void {
    if (!this.pausedByHost) return;
    this.pausedByHost = false;
    queueMicrotask(() => this.pumpInput());
  }

  /** Write what the engine has for the output, in order, as fast as the
   * output takes it: one write in flight, of everything the engine wrote
   * meanwhile (a stream's `desiredSize` counts chunks, not bytes: Node's
   * `Writable.toWeb` asks for 16,384 of them). The rest waits in the
   * engine, where the connection's limits hold a peer that does not read.
   * Once the connection closed, everything goes to the output at once (its
   * last bytes wait for no one). Close the output once the engine's output
   * ended. */
  flush(): void {
    const output = this.output;
    if (output === null) return this.settleWaiters(this.waiters.splice(0));
    if (this.writesInFlight > 0 && this.onFlushed === null) {
      this.outputWaiting = true;
      return;
    }
    this.outputWaiting = false;
    // The engine's output, or whether it ended (then all of it was taken
    // and handed to `output`).
    const taken = this.native.takeOutput();
    const bytes = typeof taken === "boolean" ? null : taken;
    const ended = taken === true;
    if (ended) this.output = null;
    // Whoever waits for the output now waits for this write.
    const waiters = this.waiters;
    this.waiters = [];
    if (bytes == null) this.settleWaiters(waiters);
    if (bytes == null && !(ended && this.closeOutput)) return this.endedIf(ended);
    let writer = this.writer;
    if (writer === null) {
      try {
        writer = this.writer = output.getWriter();
      } catch (error) {
        this.writeFailure ??= { error };
        this.settleWaiters(waiters);
        if (!ended) this.onFailure(error);
        return this.endedIf(ended);
      }
    }
    const held = writer;
    const settled = () => {
      if (--this.writesInFlight === 0 && this.writer === held) {
        this.writer = null;
        held.releaseLock();
      }
    };
    // The output took a write: pass on what came meanwhile.
    const written = () => {
      this.settleWaiters(waiters);
      settled();
      if (this.outputWaiting || this.onFlushed !== null) this.flush();
    };
    const failed = (error: unknown) => {
      this.writeFailure ??= { error };
      this.settleWaiters([...waiters, ...this.waiters.splice(0)]);
      if (!ended) this.onFailure(error);
      settled();
    };
    if (bytes != null) {
      this.writesInFlight++;
      held.write(bytes).then(written, failed);
    }
    if (ended && this.closeOutput) {
      this.writesInFlight++;
      held.close().then(settled, settled);
    }
    this.endedIf(ended);
  }

  /** Resolved, or rejected with the output's write error once one failed. */
  private settleWaiters(waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>): void {
    const failure = this.writeFailure;
    for (const waiter of waiters) {
      if (failure === null) waiter.resolve();
      else waiter.reject(failure.error);
    }
  }

  private endedIf(ended: boolean): void {
    if (!ended) return;
    const flushed = this.onFlushed;
    this.onFlushed = null;
    flushed?.();
  }

  /** The connection closed: stop reading, write what is left; `flushed`
   * is called once all of the engine's output was handed to the output
   * stream (closing one of ours): at once, or once its last bytes came
   * from the engine's thread and the output took them. */
  close(flushed: () => void): void {
    if (this.reader !== null) {
      this.reader.cancel().catch(() => {});
      this.reader = null;
    }
    const read = this.inputRead;
    this.inputRead = null;
    read?.();
    if (this.output === null) return flushed();
    this.onFlushed = flushed;
    this.flush();
  }
}
