// An ACP agent on this process's stdio, built on acp-engine's
// AgentSideConnection (the official TypeScript SDK's shape: switch by
// changing the import).
//
// On a prompt it streams a reply, asks the user's permission, reads a file
// through the client, writes one, runs `echo hi` in a client terminal and
// reports what it said. The prompt `cancel me` instead waits on a permission
// request until the client cancels the turn, and ends it with stop reason
// `cancelled`. To a client that can show them (it advertises
// `session.notices` and `session.compaction`), the turn also reports a notice
// and a context compaction. (This is the interop contract of
// interop/README.md, the same behaviour as core/examples/agent.rs.)
//
// With `--serve HOST:PORT` it serves remote clients instead, one agent per
// connection, over WebSocket and Streamable HTTP (it prints both URLs; a
// bearer token from ACP_ENGINE_TOKEN is required when set).

import * as path from "node:path";

import {
  AgentSideConnection,
  RequestError,
  serveAgent,
  stdioStream,
  type Agent,
  type ContentBlock,
  type InitializeRequest,
  type PromptResponse,
  type SessionUpdate,
  type StopReason,
} from "acp-engine";

/** A notice, and a context compaction from start to end with its summary. */
const COMPACTION: SessionUpdate[] = [
  { sessionUpdate: "notice", severity: "info", title: "Context compacted", description: "Older messages were summarized." },
  { sessionUpdate: "compaction_update", compactionId: "compaction-1", status: "in_progress" },
  {
    sessionUpdate: "compaction_summary_chunk",
    compactionId: "compaction-1",
    content: { type: "text", text: "The user asked for a greeting." },
  },
  { sessionUpdate: "compaction_update", compactionId: "compaction-1", status: "completed" },
];

class ExampleAgent implements Agent {
  private readonly sessions = new Map<string, string>();
  private nextSession = 1;
  /** The client can show notices and compactions (its capabilities). */
  private clientShowsNews = false;
  /** What the client said it can do: an agent asks only for that. */
  private clientReads = false;
  private clientWrites = false;
  private clientTerminals = false;

  constructor(private readonly client: AgentSideConnection) {}

  initialize(params: InitializeRequest) {
    const capabilities = params.clientCapabilities;
    this.clientReads = capabilities?.fs?.readTextFile === true;
    this.clientWrites = capabilities?.fs?.writeTextFile === true;
    this.clientTerminals = capabilities?.terminal === true;
    const session = capabilities?.session;
    this.clientShowsNews = session?.notices != null && session?.compaction != null;
    return {
      protocolVersion: 1,
      agentCapabilities: {},
      authMethods: [],
      agentInfo: { name: "acp-engine-node-example-agent", version: "0.1.0" },
    };
  }

  newSession(params: { cwd: string }) {
    const sessionId = `session-${this.nextSession++}`;
    this.sessions.set(sessionId, params.cwd);
    return { sessionId };
  }

  async prompt(params: { sessionId: string; prompt: ContentBlock[] }): Promise<PromptResponse> {
    const cwd = this.sessions.get(params.sessionId);
    if (cwd === undefined) throw RequestError.resourceNotFound(params.sessionId);
    const text = params.prompt
      .map((block) => (block.type === "text" ? block.text : ""))
      .join("")
      .trim();
    let stopReason: StopReason;
    if (text === "cancel me") {
      // Waits until the client cancels the turn, which answers the
      // permission request `cancelled`.
      stopReason = (await this.askPermission(params.sessionId)) === null ? "cancelled" : "end_turn";
    } else {
      stopReason = await this.sayHello(params.sessionId, cwd);
    }
    return { stopReason };
  }

  cancel(params: { sessionId: string }) {
    process.stderr.write(`[agent] the client cancelled the turn of ${params.sessionId}\n`);
  }

  private say(sessionId: string, text: string): Promise<void> {
    return this.client.sessionUpdate({
      sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
    });
  }

  /** Ask to read hello.txt: true if allowed, false if rejected, null if cancelled. */
  private async askPermission(sessionId: string): Promise<boolean | null> {
    const response = await this.client.requestPermission({
      sessionId,
      toolCall: { toolCallId: "call-1", title: "Read hello.txt", kind: "read", status: "pending" },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    const outcome = response.outcome;
    return outcome.outcome === "selected" ? outcome.optionId === "allow" : null;
  }

  /** The full turn: reply, permission, a file read and write, a terminal. */
  private async sayHello(sessionId: string, cwd: string): Promise<StopReason> {
    if (this.clientShowsNews) {
      for (const update of COMPACTION) await this.client.sessionUpdate({ sessionId, update });
    }
    await this.say(sessionId, "Hello! ");
    if (!this.clientReads) {
      await this.say(sessionId, "(this client cannot read files: nothing read)");
    } else {
      const allowed = await this.askPermission(sessionId);
      if (allowed === null) return "cancelled";
      if (!allowed) {
        await this.say(sessionId, "You did not let me read hello.txt.");
        return "end_turn";
      }
      const file = await this.client.readTextFile({ sessionId, path: path.join(cwd, "hello.txt") });
      await this.say(sessionId, file.content);
    }
    if (this.clientWrites) {
      await this.client.writeTextFile({
        sessionId,
        path: path.join(cwd, "written.txt"),
        content: "written by agent",
      });
    }
    if (this.clientTerminals) await this.runEcho(sessionId);
    return "end_turn";
  }

  /** `echo hi` in a terminal of the client's; what it printed. */
  private async runEcho(sessionId: string): Promise<void> {
    await using terminal = await this.client.createTerminal({ sessionId, command: "echo", args: ["hi"] });
    await terminal.waitForExit();
    const output = await terminal.currentOutput();
    await this.say(sessionId, `terminal said: ${output.output.trim()}`);
  }
}

const [flag, address] = process.argv.slice(2);
if (flag === "--serve" && address !== undefined) {
  const colon = address.lastIndexOf(":");
  const server = await serveAgent((client) => new ExampleAgent(client), {
    host: address.slice(0, colon),
    port: Number(address.slice(colon + 1)),
    token: process.env.ACP_ENGINE_TOKEN,
  });
  console.log(server.websocketUrl);
  console.log(server.httpUrl);
} else {
  const connection = new AgentSideConnection((client) => new ExampleAgent(client), stdioStream());
  await connection.closed;
}
