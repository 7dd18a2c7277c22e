// The client's session helpers (the official SDK 2.x's `SessionBuilder` and
// `ActiveSession`): start a session, prompt it, and read its updates in
// arrival order, each turn ending with a `stop` message (v1: the prompt's
// response; v2: `ActiveSessionV2`, an idle state update).

import type { MaybePromise } from "../sides.js";
import type { SendRequestOptions } from "./options.js";
import {
  SessionBase,
  type ActiveSessionMessage,
  type ContentBlockLike,
  type NewSessionRequestLike,
  type NewSessionResponseLike,
  type PromptResponseLike,
  type SessionCalls,
} from "./session-queue.js";
import { ActiveSessionV2 } from "./session-v2.js";

export type { ActiveSessionMessage } from "./session-queue.js";

function cloneRequest<R extends NewSessionRequestLike>(request: R): R {
  return {
    ...request,
    additionalDirectories: request.additionalDirectories ? [...request.additionalDirectories] : undefined,
    mcpServers: [...request.mcpServers],
  };
}

/** Builds the `session/new` request of an `ActiveSession`. */
export class SessionBuilder<Request extends NewSessionRequestLike = NewSessionRequestLike, Session = ActiveSession> {
  #calls: SessionCalls;
  #request: Request;

  /** @internal */
  constructor(calls: SessionCalls, request: Request) {
    this.#calls = calls;
    this.#request = cloneRequest(request);
  }

  /** The `session/new` request that will be sent (a copy). */
  toRequest(): Request {
    return cloneRequest(this.#request);
  }

  /** Replaces the session's additional workspace roots (absolute paths). */
  withAdditionalDirectories(additionalDirectories: string[]): this {
    this.#request = { ...this.#request, additionalDirectories: [...additionalDirectories] };
    return this;
  }

  /** Adds one MCP server to the `session/new` request. */
  withMcpServer(mcpServer: Request["mcpServers"][number]): this {
    this.#request = { ...this.#request, mcpServers: [...this.#request.mcpServers, mcpServer] };
    return this;
  }

  /** Sends `session/new`; the session's updates are queued from then on. */
  async start(options?: SendRequestOptions): Promise<Session> {
    const calls = this.#calls;
    const response = (await calls.request(calls.methods.session.new, this.toRequest(), options)) as NewSessionResponseLike;
    const session = calls.protocolVersion >= 2 ? new ActiveSessionV2(calls, response) : new ActiveSession(calls, response);
    return session as Session;
  }

  /** Starts the session, runs `op`, and disposes the session's routing after it. */
  async withSession<T>(op: (session: Session) => MaybePromise<T>): Promise<T> {
    const session = await this.start();
    try {
      return await op(session);
    } finally {
      (session as SessionBase).dispose();
    }
  }
}

/** A session's prompts and its updates, read in arrival order (ACP v1). */
export class ActiveSession extends SessionBase {
  /** @internal */
  constructor(calls: SessionCalls, response: NewSessionResponseLike) {
    super(calls, response, false);
  }

  get modes(): unknown {
    return this.response.modes;
  }

  /** Sends a prompt (a string is one text block); its response is also queued as `stop`. */
  prompt(prompt: string | ContentBlockLike | ContentBlockLike[], options?: SendRequestOptions): Promise<PromptResponseLike> {
    this.updates.clearErrors();
    const response = this.calls.request(
      this.calls.methods.session.prompt,
      { sessionId: this.sessionId, prompt: this.promptBlocks(prompt) },
      options,
    ) as Promise<PromptResponseLike>;
    response.then(
      (value) => this.updates.enqueue({ kind: "stop", response: value, stopReason: value.stopReason }),
      (error) => this.updates.reject(error),
    );
    return response;
  }

  /** The next update, or the `stop` that ends the turn. */
  nextUpdate(): Promise<ActiveSessionMessage> {
    return this.updates.next();
  }

  /** The text of the turn's `agent_message_chunk` updates, once it stops. */
  async readText(): Promise<string> {
    let output = "";
    for (;;) {
      const message = await this.nextUpdate();
      if (message.kind === "stop") return output;
      const { update } = message;
      if (update.sessionUpdate === "agent_message_chunk" && update.content?.type === "text") output += update.content.text;
    }
  }
}
