// An ACP client (the editor's side) built on acp-engine's
// ClientSideConnection and spawnStream (the official TypeScript SDK's shape:
// switch by changing the import).
//
// Spawns any agent command line, then runs two prompt turns in a fresh
// working directory holding hello.txt: "Say hello" (it answers permission
// requests with "allow once", serves file reads and writes and runs real
// terminal commands, printing the streamed reply), and "cancel me" (it
// cancels the turn while the agent waits for permission). It shows notices
// and context compactions (and says so in its capabilities). It checks what
// came back and exits non-zero if anything is off, so it doubles as the
// interop client of interop/ (same behaviour as core/examples/client.rs; with
// ACP_INTEROP_NEWS=1 it also expects the updates of interop/news.json).
//
// Usage: node client.js <agent command> [args...]

import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { isDeepStrictEqual } from "node:util";

import {
  ClientSideConnection,
  RequestError,
  spawnStream,
  remoteStream,
  type Client,
  type CreateTerminalRequest,
  type CreateTerminalResponse,
  type ReadTextFileRequest,
  type RequestContext,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
  type TerminalExitStatus,
  type TerminalOutputResponse,
} from "acp-engine";

class Terminal {
  output = "";
  exitStatus: TerminalExitStatus | null = null;
  readonly exited: Promise<TerminalExitStatus>;
  private readonly child: ChildProcess;

  constructor(params: CreateTerminalRequest, sessionCwd: string) {
    const env: Record<string, string | undefined> = { ...process.env };
    for (const variable of params.env ?? []) env[variable.name] = variable.value;
    this.child = spawn(params.command, params.args ?? [], {
      cwd: params.cwd ?? sessionCwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const append = (chunk: Buffer) => {
      this.output += chunk.toString("utf8");
    };
    this.child.stdout?.on("data", append);
    this.child.stderr?.on("data", append);
    this.exited = new Promise((resolve) => {
      this.child.on("error", (error) => {
        this.output += `failed to start ${params.command}: ${error.message}\n`;
        this.exitStatus = { exitCode: 127, signal: null };
        resolve(this.exitStatus);
      });
      this.child.on("close", (code, signal) => {
        this.exitStatus ??= { exitCode: code, signal: signal ?? null };
        resolve(this.exitStatus);
      });
    });
  }

  kill() {
    if (this.exitStatus === null) this.child.kill("SIGKILL");
  }
}

function sliceLines(text: string, line?: number | null, limit?: number | null): string {
  if (line == null && limit == null) return text;
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const start = Math.max((line ?? 1) - 1, 0);
  return lines.slice(start, limit == null ? lines.length : start + limit).join("");
}

class ExampleClient implements Client {
  text = "";
  /** The notice and compaction updates received, in order. */
  news: SessionUpdate[] = [];
  permissionRequests = 0;
  /** While false, permission requests wait (until the turn is cancelled). */
  allow = true;
  /** Called when a permission request arrives while `allow` is false. */
  onWaitingPermission: ((sessionId: string) => void) | null = null;
  private readonly terminals = new Map<string, Terminal>();
  private nextTerminal = 1;

  constructor(private readonly cwd: string) {}

  async requestPermission(params: RequestPermissionRequest, context: RequestContext): Promise<RequestPermissionResponse> {
    this.permissionRequests++;
    process.stdout.write(`\n[permission asked: ${params.toolCall.title ?? params.toolCall.toolCallId}]\n`);
    if (!this.allow) {
      // ClientSideConnection.cancel() answers this request `cancelled` and aborts its signal.
      this.onWaitingPermission?.(params.sessionId);
      await new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
      return { outcome: { outcome: "cancelled" } };
    }
    const allow = params.options.find((option) => option.kind === "allow_once");
    if (!allow) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  }

  sessionUpdate(params: SessionNotification) {
    const update = params.update;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      this.text += update.content.text;
      process.stdout.write(update.content.text);
    } else if (update.sessionUpdate === "notice") {
      process.stdout.write(`[${update.severity} notice: ${update.title}]\n`);
      this.news.push(update);
    } else if (update.sessionUpdate === "compaction_update") {
      process.stdout.write(`[compaction ${update.compactionId}: ${update.status}]\n`);
      this.news.push(update);
    } else if (update.sessionUpdate === "compaction_summary_chunk") {
      this.news.push(update);
    }
  }

  async readTextFile(params: ReadTextFileRequest) {
    let text: string;
    try {
      text = await fs.promises.readFile(params.path, "utf8");
    } catch {
      throw RequestError.resourceNotFound(params.path);
    }
    return { content: sliceLines(text, params.line, params.limit) };
  }

  async writeTextFile(params: { path: string; content: string }) {
    await fs.promises.writeFile(params.path, params.content);
    return {};
  }

  createTerminal(params: CreateTerminalRequest): CreateTerminalResponse {
    const terminalId = `term-${this.nextTerminal++}`;
    this.terminals.set(terminalId, new Terminal(params, this.cwd));
    return { terminalId };
  }

  terminalOutput(params: { terminalId: string }): TerminalOutputResponse {
    const terminal = this.terminal(params.terminalId);
    const response: TerminalOutputResponse = { output: terminal.output, truncated: false };
    if (terminal.exitStatus) response.exitStatus = terminal.exitStatus;
    return response;
  }

  async waitForTerminalExit(params: { terminalId: string }) {
    const status = await this.terminal(params.terminalId).exited;
    return { exitCode: status.exitCode, signal: status.signal };
  }

  killTerminal(params: { terminalId: string }) {
    this.terminal(params.terminalId).kill();
    return {};
  }

  releaseTerminal(params: { terminalId: string }) {
    this.terminals.get(params.terminalId)?.kill();
    this.terminals.delete(params.terminalId);
    return {};
  }

  killAll() {
    for (const terminal of this.terminals.values()) terminal.kill();
  }

  private terminal(id: string): Terminal {
    const terminal = this.terminals.get(id);
    if (!terminal) throw RequestError.resourceNotFound(`terminal ${id}`);
    return terminal;
  }
}

/** The updates of interop/news.json, as an agent sends them to a client that shows them. */
const EXPECTED_NEWS: SessionUpdate[] = [
  { sessionUpdate: "notice", severity: "info", title: "Context compacted", description: "Older messages were summarized." },
  { sessionUpdate: "compaction_update", compactionId: "compaction-1", status: "in_progress" },
  {
    sessionUpdate: "compaction_summary_chunk",
    compactionId: "compaction-1",
    content: { type: "text", text: "The user asked for a greeting." },
  },
  { sessionUpdate: "compaction_update", compactionId: "compaction-1", status: "completed" },
];

function check(condition: boolean, what: string) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

async function main(): Promise<number> {
  const [command, ...args] = process.argv.slice(2);
  if (command === undefined) {
    process.stderr.write("usage: client <agent command> [args...] | URL (ws://, wss://, http://, https://)\n");
    return 2;
  }
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "acp-engine-node-client-")));
  fs.writeFileSync(path.join(cwd, "hello.txt"), "Hello from the client's file\n");

  const client = new ExampleClient(cwd);
  // A URL is a remote agent (token: ACP_ENGINE_TOKEN); anything else a command to spawn.
  const stream = command.includes("://")
    ? remoteStream(command, { token: process.env.ACP_ENGINE_TOKEN })
    : spawnStream(command, args, { exitGraceMs: 2000 });
  const agent = new ClientSideConnection(() => client, stream);
  try {
    const initialized = await agent.initialize({
      protocolVersion: 1,
      clientCapabilities: {
        fs: { readTextFile: true, writeTextFile: true },
        terminal: true,
        session: { notices: {}, compaction: {} }, // we show them
      },
      clientInfo: { name: "acp-engine-node-interop-client", version: "1.0.0" },
    });
    check(initialized.protocolVersion === 1, "the agent speaks protocol version 1");
    process.stdout.write(`connected to ${initialized.agentInfo?.name ?? "an agent"}\n`);
    const { sessionId } = await agent.newSession({ cwd, mcpServers: [] });

    process.stdout.write("> Say hello\n");
    const turn = await agent.prompt({ sessionId, prompt: [{ type: "text", text: "Say hello" }] });
    process.stdout.write(`\n< stop reason: ${turn.stopReason}\n`);
    check(turn.stopReason === "end_turn", "the turn ends with end_turn");
    check(client.text.includes("Hello from the client's file"), "the agent read hello.txt through us");
    check(client.text.includes("terminal said: hi"), "the agent ran `echo hi` in our terminal");
    const written = fs.readFileSync(path.join(cwd, "written.txt"), "utf8");
    check(written === "written by agent", "the agent wrote written.txt through us");
    check(client.permissionRequests === 1, "the agent asked permission once");
    if (process.env.ACP_INTEROP_NEWS === "1") {
      check(isDeepStrictEqual(client.news, EXPECTED_NEWS), `the updates of interop/news.json arrived (got ${JSON.stringify(client.news)})`);
    }

    process.stdout.write("> cancel me\n");
    client.allow = false;
    client.onWaitingPermission = (id) => {
      // The agent asks permission and waits; we cancel instead of answering.
      agent.cancel({ sessionId: id }).catch(() => {});
    };
    const cancelled = await agent.prompt({ sessionId, prompt: [{ type: "text", text: "cancel me" }] });
    process.stdout.write(`< stop reason: ${cancelled.stopReason}\n`);
    check(client.permissionRequests === 2, "the agent asked permission in the cancelled turn");
    check(cancelled.stopReason === "cancelled", "the cancelled turn ends with cancelled");
  } finally {
    agent.close();
    client.killAll();
    await agent.closed;
    fs.rmSync(cwd, { recursive: true, force: true });
  }
  process.stdout.write("interop ok\n");
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`client: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
