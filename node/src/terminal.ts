// TerminalHandle: a terminal the agent created on its client (`createTerminal`).

import type * as schema from "./generated/schema.js";

/** The terminal methods of an agent's connection, which a handle calls. */
export interface TerminalCalls {
  terminalOutput(params: schema.TerminalOutputRequest): Promise<schema.TerminalOutputResponse>;
  waitForTerminalExit(params: schema.WaitForTerminalExitRequest): Promise<schema.WaitForTerminalExitResponse>;
  killTerminal(params: schema.KillTerminalRequest): Promise<schema.KillTerminalResponse>;
  releaseTerminal(params: schema.ReleaseTerminalRequest): Promise<schema.ReleaseTerminalResponse>;
}

/** A terminal on the client. Release it when done (`await using` does): the
 * client frees it and kills the command if it still runs. */
export class TerminalHandle {
  readonly #sessionId: string;
  readonly #client: TerminalCalls;

  /** @internal */
  constructor(
    readonly id: string,
    sessionId: string,
    client: TerminalCalls,
  ) {
    this.#sessionId = sessionId;
    this.#client = client;
  }

  #params() {
    return { sessionId: this.#sessionId, terminalId: this.id };
  }

  /** The output so far, and the exit status once the command exited. */
  currentOutput(): Promise<schema.TerminalOutputResponse> {
    return this.#client.terminalOutput(this.#params());
  }

  /** Resolves when the command exits. */
  waitForExit(): Promise<schema.WaitForTerminalExitResponse> {
    return this.#client.waitForTerminalExit(this.#params());
  }

  /** Stop the command; the terminal stays until released. */
  kill(): Promise<schema.KillTerminalResponse> {
    return this.#client.killTerminal(this.#params());
  }

  /** Free the terminal, killing the command if it still runs. */
  release(): Promise<schema.ReleaseTerminalResponse> {
    return this.#client.releaseTerminal(this.#params());
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}
