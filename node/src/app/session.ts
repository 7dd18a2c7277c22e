// The client's session helpers (the official SDK 2.x's `SessionBuilder` and
// `ActiveSession`): start a session, prompt it, and read its updates in
// arrival order, each turn ending with a `stop` message (v1: the prompt's
// response; v2: `ActiveSessionV2`, an idle state update).

import type { MaybePromise } from "../sides.js";
import type { SendRequestOptions } from "./options.js";
import {
  SessionBase,
  type LooseSessionTypes,
  type NewSessionRequestLike,
  type NewSessionRequestShape,
  type NewSessionResponseLike,
  type PromptResponseLike,
  type SessionCalls,
  type SessionTypes,
} from "./session-queue.js";
import { ActiveSessionV2 } from "./session-v2.js";

export type { ActiveSessionMessage, SessionTypes } from "./session-queue.js";

/** What a v1 session's typings add: its modes. */
export interface SessionTypesV1 extends SessionTypes {
  modes: unknown;
}
interface LooseSessionTypesV1 extends LooseSessionTypes {
  modes: unknown;
}

function cloneRequest<R extends NewSessionRequestShape>(request: R): R {
  return {
    ...request,
    additionalDirectories: request.additionalDirectories ? [...request.additionalDirectories] : undefined,
    mcpServers: request.mcpServers && [...request.mcpServers],
  };
}

/** Builds the `session/new` request of an `ActiveSession`. */
export class SessionBuilder<Request extends NewSessionRequestShape = NewSessionRequestLike, Session = ActiveSession> {
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
  withMcpServer(mcpServer: NonNullable<Request["mcpServers"]>[number]): this {
    this.#request = { ...this.#request, mcpServers: [...(this.#request.mcpServers ?? []), mcpServer] };
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
export class ActiveSession<Types extends SessionTypesV1 = LooseSessionTypesV1> extends SessionBase<Types> {
  /** @internal */
  constructor(calls: SessionCalls, response: NewSessionResponseLike) {
    super(calls, response, false);
  }

  get modes(): Types["modes"] | null | undefined {
    return this.response.modes;
  }

  /** Sends a prompt (a string is one text block); its response is also queued as `stop`. */
  prompt(prompt: string | Types["contentBlock"] | Types["contentBlock"][], options?: SendRequestOptions): Promise<Types["promptResponse"]> {
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
  nextUpdate(): Promise<Types["message"]> {
    return this.updates.next();
  }

  /** The text of the turn's `agent_message_chunk` updates, once it stops. */
  async readText(): Promise<string> {
    let output = "";
    for (;;) {
      const message = await this.updates.next();
      if (message.kind === "stop") return output;
      const { update } = message;
      if (update.sessionUpdate === "agent_message_chunk" && update.content?.type === "text") output += update.content.text;
    }
  }
}
