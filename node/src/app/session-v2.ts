// The ACP v2 draft's `ActiveSession` (the official SDK's `experimental/v2`):
// a prompt is only acknowledged (its response carries the user message's
// id); the turn's progress and its end come as session updates, an idle
// state update ending it (`stop`). The session also keeps what the updates
// say: its config options, its background work, and which tool calls and
// terminals advertise `cancel`.

import type { SendRequestOptions } from "./options.js";
import {
  SessionBase,
  type ActiveSessionMessage,
  type LooseSessionTypes,
  type NewSessionResponseLike,
  type SessionCalls,
  type SessionTypes,
} from "./session-queue.js";

type Json = { [key: string]: unknown };

/** What a v2 session's typings add (`SessionTypes`). */
export interface SessionTypesV2 extends SessionTypes {
  configOption: unknown;
  backgroundWork: unknown;
  permissionRequest: unknown;
  setConfigOptionRequest: unknown;
  setConfigOptionResponse: unknown;
  cancelToolCallResponse: unknown;
  cancelTerminalResponse: unknown;
}
interface LooseSessionTypesV2 extends Omit<LooseSessionTypes, "promptResponse"> {
  promptResponse: { messageId: string; [key: string]: unknown };
  configOption: unknown;
  backgroundWork: unknown;
  permissionRequest: { subject?: unknown };
  setConfigOptionRequest: Json;
  setConfigOptionResponse: unknown;
  cancelToolCallResponse: unknown;
  cancelTerminalResponse: unknown;
}

/** What v2 updates look like where this reads them. */
interface UpdateLike {
  sessionUpdate: string;
  [key: string]: unknown;
}

function cancellable(capabilities: unknown): boolean | undefined {
  if (capabilities === undefined) return undefined;
  const cancel = (capabilities as Json | null)?.cancel;
  return cancel !== undefined && cancel !== null;
}

/** A v2 session's prompts and its updates, read in arrival order. */
export class ActiveSessionV2<Types extends SessionTypesV2 = LooseSessionTypesV2> extends SessionBase<Types> {
  #configOptions: unknown;
  #background: unknown[] | undefined;
  readonly #cancellableToolCalls = new Set<string>();
  readonly #cancellableTerminals = new Set<string>();

  /** @internal */
  constructor(calls: SessionCalls, response: NewSessionResponseLike) {
    super(calls, response, true);
    this.#configOptions = response.configOptions ?? undefined;
  }

  protected override deliver(message: ActiveSessionMessage): void {
    const update = (message as { update?: UpdateLike }).update;
    if (update?.sessionUpdate === "config_option_update") {
      this.#configOptions = update.configOptions;
    } else if (update?.sessionUpdate === "state_update") {
      const known = ["running", "idle", "requires_action"].includes(update.state as string);
      this.#background = known && Array.isArray(update.background) ? update.background : undefined;
    } else if (update?.sessionUpdate === "tool_call_update" || update?.sessionUpdate === "terminal_update") {
      const [ids, id] =
        update.sessionUpdate === "tool_call_update"
          ? [this.#cancellableToolCalls, update.toolCallId]
          : [this.#cancellableTerminals, update.terminalId];
      const can = cancellable(update.capabilities);
      if (typeof id === "string" && can !== undefined) {
        if (can) ids.add(id);
        else ids.delete(id);
      }
    }
    super.deliver(message);
  }

  /** The session's config options, as last reported. */
  get configOptions(): Types["configOption"][] | undefined {
    return this.#configOptions as Types["configOption"][] | undefined;
  }

  /** The background work of the last state update that reported it. */
  get background(): readonly Types["backgroundWork"][] | undefined {
    return this.#background;
  }

  /** Whether a permission request is about background work the session reported. */
  isForBackgroundWork(request: Types["permissionRequest"]): boolean {
    const subject = (request as { subject?: Json }).subject;
    if (this.#background === undefined || subject === undefined || subject === null) return false;
    const toolCallId = subject.type === "tool_call" ? (subject.toolCall as Json | undefined)?.toolCallId : subject.type === "command" ? subject.toolCallId : undefined;
    const terminalId = subject.type === "command" ? subject.terminalId : undefined;
    return this.#background.some((work) => {
      const w = work as Json;
      return (toolCallId != null && w.type === "tool_call" && w.toolCallId === toolCallId) || (terminalId != null && w.type === "terminal" && w.terminalId === terminalId);
    });
  }

  canCancelToolCall(toolCallId: string): boolean {
    return this.#cancellableToolCalls.has(toolCallId);
  }

  canCancelTerminal(terminalId: string): boolean {
    return this.#cancellableTerminals.has(terminalId);
  }

  /** Cancels a tool call that advertises `cancel`. */
  cancelToolCall(toolCallId: string, options?: SendRequestOptions): Promise<Types["cancelToolCallResponse"]> {
    const method = this.calls.methods.toolCall?.cancel;
    if (method === undefined || !this.canCancelToolCall(toolCallId)) {
      return Promise.reject(new TypeError(`Tool call ${JSON.stringify(toolCallId)} does not advertise cancel`));
    }
    return this.calls.request(method, { sessionId: this.sessionId, toolCallId }, options);
  }

  /** Cancels a terminal that advertises `cancel`. */
  cancelTerminal(terminalId: string, options?: SendRequestOptions): Promise<Types["cancelTerminalResponse"]> {
    const method = this.calls.methods.terminal?.cancel;
    if (method === undefined || !this.canCancelTerminal(terminalId)) {
      return Promise.reject(new TypeError(`Terminal ${JSON.stringify(terminalId)} does not advertise cancel`));
    }
    return this.calls.request(method, { sessionId: this.sessionId, terminalId }, options);
  }

  /** Sends a prompt (a string is one text block); resolves with its acknowledgement. */
  prompt(prompt: string | Types["contentBlock"] | Types["contentBlock"][], options?: SendRequestOptions): Promise<Types["promptResponse"]> {
    const blocks = this.promptBlocks(prompt);
    // Clients must not send an empty prompt.
    if (blocks.length === 0) return Promise.reject(new TypeError("A prompt must contain at least one content block"));
    return this.calls.request(this.calls.methods.session.prompt, { sessionId: this.sessionId, prompt: blocks }, options);
  }

  /** Sets a config option of the session; the answer's options are the session's. */
  async setConfigOption(request: Types["setConfigOptionRequest"], options?: SendRequestOptions): Promise<Types["setConfigOptionResponse"]> {
    const method = this.calls.methods.session.setConfigOption;
    if (method === undefined) throw new TypeError("setConfigOption: not a method of this protocol");
    const response = (await this.calls.request(method, { ...(request as Json), sessionId: this.sessionId }, options)) as Json;
    this.#configOptions = response.configOptions;
    return response;
  }

  /** The next update, or the `stop` of an idle state update; `signal` gives up the read. */
  nextUpdate(signal?: AbortSignal): Promise<Types["message"]> {
    return this.updates.next(signal);
  }

  /** The agent's text until the next idle state update: `agent_message`
   * updates replace their message's content, chunks append to it. */
  async readTextUntilIdle(signal?: AbortSignal): Promise<string> {
    const order: string[] = [];
    const content = new Map<string, unknown[]>();
    const of = (messageId: string): unknown[] => {
      let blocks = content.get(messageId);
      if (blocks === undefined) {
        order.push(messageId);
        content.set(messageId, (blocks = []));
      }
      return blocks;
    };
    for (;;) {
      const message = await this.updates.next(signal);
      if (message.kind === "stop") {
        return order
          .flatMap((messageId) => content.get(messageId) ?? [])
          .filter((block): block is { type: "text"; text: string } => (block as Json)?.type === "text" && typeof (block as Json).text === "string")
          .map((block) => block.text)
          .join("");
      }
      const update = message.update as UpdateLike;
      const messageId = update.messageId as string;
      if (update.sessionUpdate === "agent_message") {
        of(messageId);
        if (update.content !== undefined) content.set(messageId, (update.content as unknown[] | null) ?? []);
      } else if (update.sessionUpdate === "agent_message_chunk") {
        of(messageId).push(update.content);
      }
    }
  }
}
