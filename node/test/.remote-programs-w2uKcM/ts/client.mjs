#!/usr/bin/env node
// ACP interop test client built on the official TypeScript SDK
// (@agentclientprotocol/sdk, app API: client().onRequest(...).connect(stream)).
//
// Usage: node client.mjs <agent command> [agent args...]
//        node client.mjs ws://host:port/acp   (a remote agent, over the SDK's
//                                             WebSocket stream, or http://... over
//                                             its Streamable HTTP stream; a bearer
//                                             token from ACP_ENGINE_TOKEN)
//
// Follows the interop contract in ../README.md: initialize, session/new,
// a "Say hello" turn that exercises permission, fs and terminal methods for
// real, then a "cancel me" turn that is cancelled while the agent waits for
// a permission answer. Prints "interop ok" and exits 0 on success; prints
// the reason to stderr and exits 1 otherwise.

import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";

import * as acp from "acp-engine";

import { remoteStream } from "./remote-stream.mjs";
import { traced } from "./trace.mjs";

const IMPL = "ts";
const HELLO_CONTENT = "Hello from the client's file\n";
const HERE = path.dirname(fileURLToPath(import.meta.url));
// The notice and compaction updates an agent sends in the hello turn when the
// client advertises `session.notices` and `session.compaction` (../README.md).
const NEWS = JSON.parse(fs.readFileSync(path.join(HERE, "..", "news.json"), "utf8"));
const NEWS_KINDS = new Set(["notice", "compaction_update", "compaction_summary_chunk"]);
// The SDK's own schema (zod), to validate what arrives with it explicitly.
const zod = await import(
  pathToFileURL(path.join(HERE, "node_modules", "@agentclientprotocol", "sdk", "dist", "v1", "schema", "zod.gen.js")).href
);

/** A turn's agent text and its notice / compaction updates, each validated by the SDK's schema. */
async function readTurn(session) {
  let text = "";
  const news = [];
  for (;;) {
    const message = await session.nextUpdate();
    if (message.kind === "stop") return { text, news };
    const { update } = message;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") text += update.content.text;
    if (NEWS_KINDS.has(update.sessionUpdate)) {
      const parsed = zod.zSessionUpdate.parse(update);
      check(isDeepStrictEqual(parsed, update), `the SDK's schema changed ${JSON.stringify(update)}`);
      news.push(update);
    }
  }
}

function log(...args) {
  console.error(`[${IMPL}-client]`, ...args);
}

class CheckFailed extends Error {}

function check(cond, message) {
  if (!cond) throw new CheckFailed(message);
}

function describeError(err) {
  if (err instanceof acp.RequestError) {
    const data = err.data === undefined ? "" : ` data=${JSON.stringify(err.data)}`;
    return `JSON-RPC error ${err.code}: ${err.message}${data}`;
  }
  return err instanceof Error ? err.message : String(err);
}

async function step(name, fn) {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof CheckFailed) throw err;
    throw new CheckFailed(`${name} failed: ${describeError(err)}`);
  }
}

// ---------------------------------------------------------------------------
// Terminals: really run the command, capture stdout+stderr.

class Terminal {
  constructor(id, params, sessionCwd) {
    this.id = id;
    this.output = Buffer.alloc(0);
    this.truncated = false;
    this.limit = params.outputByteLimit ?? null;
    this.exitStatus = null;
    const env = { ...process.env };
    for (const v of params.env ?? []) env[v.name] = v.value;
    this.child = spawn(params.command, params.args ?? [], {
      cwd: params.cwd ?? sessionCwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const onData = (chunk) => this.append(chunk);
    this.child.stdout.on("data", onData);
    this.child.stderr.on("data", onData);
    this.exited = new Promise((resolve) => {
      this.child.on("error", (err) => {
        this.append(Buffer.from(`failed to start ${params.command}: ${err.message}\n`));
        this.exitStatus = { exitCode: 127, signal: null };
        resolve(this.exitStatus);
      });
      // 'close' fires after the stdio streams are drained.
      this.child.on("close", (code, signal) => {
        if (!this.exitStatus) this.exitStatus = { exitCode: code, signal: signal ?? null };
        resolve(this.exitStatus);
      });
    });
  }

  append(chunk) {
    this.output = Buffer.concat([this.output, chunk]);
    if (this.limit !== null && this.output.length > this.limit) {
      // Keep the tail, on a UTF-8 character boundary.
      let start = this.output.length - this.limit;
      while (start < this.output.length && (this.output[start] & 0xc0) === 0x80) start++;
      this.output = this.output.subarray(start);
      this.truncated = true;
    }
  }

  get running() {
    return this.exitStatus === null;
  }

  kill() {
    if (this.running) this.child.kill("SIGKILL");
  }
}

// ---------------------------------------------------------------------------

function sliceLines(text, line, limit) {
  if (line == null && limit == null) return text;
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const start = Math.max((line ?? 1) - 1, 0);
  const end = limit == null ? lines.length : start + limit;
  return lines.slice(start, end).join("");
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length === 0) {
    console.error("usage: client.mjs <agent command> [agent args...]");
    process.exit(2);
  }

  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `acp-interop-${IMPL}-`)));
  fs.writeFileSync(path.join(cwd, "hello.txt"), HELLO_CONTENT);
  log("session cwd", cwd);

  const remote = /^(wss?|https?):\/\//.test(argv[0]);
  let agentProc = null;
  let agentExit = null;
  let agentExited = Promise.resolve({ remote: argv[0] });
  if (!remote) {
    agentProc = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
    agentExited = new Promise((resolve) => {
      agentProc.on("exit", (code, signal) => {
        agentExit = { code, signal };
        resolve(agentExit);
      });
      agentProc.on("error", (err) => {
        agentExit = { error: err.message };
        resolve(agentExit);
      });
    });
    agentProc.stdin.on("error", () => {}); // EPIPE if the agent dies early
  }

  const terminals = new Map();
  let nextTerminal = 0;
  let phase = "hello"; // "hello" | "cancel"
  let permissionRequests = 0;
  let cancelSent = false;

  const getTerminal = (terminalId) => {
    const term = terminals.get(terminalId);
    if (!term) throw acp.RequestError.resourceNotFound(`terminal ${terminalId}`);
    return term;
  };

  const app = acp
    .client({ name: `${IMPL}-interop-client` })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, agent }) => {
      permissionRequests++;
      log(`session/request_permission (${phase}) toolCall=${params.toolCall?.toolCallId}`);
      if (phase === "cancel") {
        // Cancel the turn, then answer the pending permission request as
        // cancelled, as the protocol requires of a client after session/cancel.
        await agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
        cancelSent = true;
        return { outcome: { outcome: "cancelled" } };
      }
      const allow = params.options.find((o) => o.kind === "allow_once");
      if (!allow) {
        log("no allow_once option offered; answering cancelled");
        return { outcome: { outcome: "cancelled" } };
      }
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
      log(`fs/read_text_file ${params.path}`);
      const text = await fs.promises.readFile(params.path, "utf8");
      return { content: sliceLines(text, params.line, params.limit) };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
      log(`fs/write_text_file ${params.path}`);
      await fs.promises.writeFile(params.path, params.content);
      return {};
    })
    .onRequest(acp.methods.client.terminal.create, async ({ params }) => {
      const terminalId = `term-${++nextTerminal}`;
      log(`terminal/create ${terminalId}: ${params.command} ${JSON.stringify(params.args ?? [])}`);
      terminals.set(terminalId, new Terminal(terminalId, params, cwd));
      return { terminalId };
    })
    .onRequest(acp.methods.client.terminal.output, async ({ params }) => {
      const term = getTerminal(params.terminalId);
      const res = { output: term.output.toString("utf8"), truncated: term.truncated };
      if (term.exitStatus) res.exitStatus = term.exitStatus;
      return res;
    })
    .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
      const term = getTerminal(params.terminalId);
      return await term.exited;
    })
    .onRequest(acp.methods.client.terminal.kill, async ({ params }) => {
      getTerminal(params.terminalId).kill();
      return {};
    })
    .onRequest(acp.methods.client.terminal.release, async ({ params }) => {
      const term = getTerminal(params.terminalId);
      term.kill();
      terminals.delete(params.terminalId);
      return {};
    });
  // session/update notifications are consumed through ActiveSession below.

  const stream = traced(
    remote ? await remoteStream(argv[0], bearer()) : acp.ndJsonStream(Writable.toWeb(agentProc.stdin), Readable.toWeb(agentProc.stdout)),
    log,
  );
  const conn = app.connect(stream);
  const agent = conn.agent;

  let failure = null;
  try {
    // 2. initialize
    const init = await step("initialize", () =>
      agent.request(acp.methods.agent.initialize, {
        protocolVersion: 1,
        clientCapabilities: {
          fs: { readTextFile: true, writeTextFile: true },
          terminal: true,
          session: { notices: {}, compaction: {} },
        },
        clientInfo: { name: `${IMPL}-interop-client`, version: "1.0.0" },
      }),
    );
    check(init.protocolVersion === 1, `initialize: expected protocolVersion 1, got ${JSON.stringify(init.protocolVersion)}`);

    // 3. session/new
    const session = await step("session/new", () => agent.buildSession({ cwd, mcpServers: [] }).start());
    log("sessionId", session.sessionId);

    // 4. "Say hello"
    const [helloResp, { text: helloText, news }] = await step("session/prompt \"Say hello\"", () =>
      Promise.all([session.prompt("Say hello"), readTurn(session)]),
    );
    if (process.env.ACP_INTEROP_NEWS === "1") {
      check(isDeepStrictEqual(news, NEWS), `"Say hello": expected the notice and compaction updates ${JSON.stringify(NEWS)}, got ${JSON.stringify(news)}`);
    }
    log(`"Say hello" -> ${helloResp.stopReason}, text=${JSON.stringify(helloText)}`);
    check(helloResp.stopReason === "end_turn", `"Say hello": expected stopReason end_turn, got ${helloResp.stopReason}`);
    check(helloText.includes("Hello from the client's file"), `"Say hello": agent text lacks the file content: ${JSON.stringify(helloText)}`);
    check(helloText.includes("terminal said: hi"), `"Say hello": agent text lacks "terminal said: hi": ${JSON.stringify(helloText)}`);
    const writtenPath = path.join(cwd, "written.txt");
    check(fs.existsSync(writtenPath), `"Say hello": ${writtenPath} was not written`);
    const written = fs.readFileSync(writtenPath, "utf8");
    check(written === "written by agent", `"Say hello": written.txt contains ${JSON.stringify(written)}`);
    check(permissionRequests === 1, `"Say hello": expected 1 permission request, got ${permissionRequests}`);

    // 5. cancellation
    phase = "cancel";
    const [cancelResp] = await step("session/prompt \"cancel me\"", () =>
      Promise.all([session.prompt("cancel me"), session.readText()]),
    );
    log(`"cancel me" -> ${cancelResp.stopReason}`);
    check(cancelSent, `"cancel me": the agent never asked for permission, so nothing was cancelled`);
    check(cancelResp.stopReason === "cancelled", `"cancel me": expected stopReason cancelled, got ${cancelResp.stopReason}`);
    session.dispose();
  } catch (err) {
    failure = err instanceof CheckFailed ? err.message : `unexpected error: ${describeError(err)}`;
  }

  // 6. shut down: close the connection and the agent's stdin, wait up to 2 s.
  conn.close();
  for (const term of terminals.values()) term.kill();
  agentProc?.stdin.end();
  const timer = setTimeout(() => {
    if (agentProc && !agentExit) {
      log("agent did not exit 2 s after stdin closed; killing it");
      agentProc.kill("SIGKILL");
    }
  }, 2000);
  const exit = await agentExited;
  clearTimeout(timer);

  fs.rmSync(cwd, { recursive: true, force: true });
  if (failure) {
    console.error(`FAIL: ${failure} (agent exit: ${JSON.stringify(exit)})`);
    process.exit(1);
  }
  log("agent exited", JSON.stringify(exit));
  console.log("interop ok");
  process.exit(0);
}


/** `Authorization: Bearer` from ACP_ENGINE_TOKEN, when it is set. */
function bearer() {
  const token = process.env.ACP_ENGINE_TOKEN;
  return token ? { Authorization: `Bearer ${token}` } : undefined;
}

main().catch((err) => {
  console.error(`FAIL: ${describeError(err)}`);
  process.exit(1);
});
