// Test agent on stdio: every agent method, and prompts that drive the
// behaviours under test (see the switch in prompt()).
import { AgentSideConnection, RequestError, stdioStream } from "acp-engine";

const calls = [];
let conn;

function say(sessionId, text) {
  return conn.sessionUpdate({
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
}

const agent = {
  initialize(params) {
    calls.push("initialize");
    return { protocolVersion: 1, agentCapabilities: { loadSession: true }, authMethods: [] };
  },
  authenticate(params) {
    calls.push(`authenticate:${params.methodId}`);
  },
  logout() {
    calls.push("logout");
  },
  newSession(params) {
    calls.push("newSession");
    return { sessionId: `s-${calls.length}` };
  },
  loadSession(params) {
    calls.push(`loadSession:${params.sessionId}`);
  },
  listSessions() {
    calls.push("listSessions");
    return { sessions: [{ sessionId: "s-1", cwd: "/tmp" }] };
  },
  deleteSession(params) {
    calls.push(`deleteSession:${params.sessionId}`);
  },
  resumeSession(params) {
    calls.push(`resumeSession:${params.sessionId}`);
    return {};
  },
  closeSession(params) {
    calls.push(`closeSession:${params.sessionId}`);
  },
  setSessionMode(params) {
    calls.push(`setSessionMode:${params.modeId}`);
  },
  setSessionConfigOption(params) {
    calls.push(`setSessionConfigOption:${params.configId}`);
    return { configOptions: [] };
  },
  cancel(params) {
    calls.push(`cancel:${params.sessionId}`);
  },
  async extMethod(method, params) {
    calls.push(`extMethod:${method}`);
    if (method === "_test.calls") return { calls };
    if (method === "_test.echo") return { method, params };
    throw RequestError.methodNotFound(method);
  },
  extNotification(method, params) {
    calls.push(`extNotification:${method}:${JSON.stringify(params)}`);
  },
  async prompt(params, context) {
    const sessionId = params.sessionId;
    const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join("");
    const [command, arg] = text.split(" ");
    switch (command) {
      case "echo":
        return { stopReason: "end_turn" };
      case "burst": {
        const n = Number(arg);
        for (let i = 0; i < n; i++) await say(sessionId, String(i));
        return { stopReason: "end_turn" };
      }
      case "concurrent": {
        // N reads in flight at once; each answer must match its request.
        const n = Number(arg);
        const reads = [];
        for (let i = 0; i < n; i++) reads.push(conn.readTextFile({ sessionId, path: `/load/${i}` }));
        const answers = await Promise.all(reads);
        const wrong = answers.filter((answer, i) => answer.content !== `/load/${i}`).length;
        return { stopReason: "end_turn", _meta: { count: answers.length, wrong } };
      }
      case "burst-nowait": {
        const n = Number(arg);
        const sends = [];
        for (let i = 0; i < n; i++) sends.push(say(sessionId, String(i)));
        await Promise.all(sends);
        return { stopReason: "end_turn" };
      }
      case "client-methods": {
        const dir = arg;
        const report = {};
        report.permission = await conn.requestPermission({
          sessionId,
          toolCall: { toolCallId: "c1", title: "t", kind: "read", status: "pending" },
          options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
        });
        report.read = await conn.readTextFile({ sessionId, path: `${dir}/in.txt`, line: 2, limit: 1 });
        report.write = await conn.writeTextFile({ sessionId, path: `${dir}/out.txt`, content: "agent wrote" });
        const terminal = await conn.createTerminal({ sessionId, command: "echo", args: ["x"] });
        report.terminalId = terminal.id;
        report.exit = await terminal.waitForExit();
        report.output = await terminal.currentOutput();
        report.kill = await terminal.kill();
        report.release = await terminal.release();
        report.ext = await conn.extMethod("_test.client", { n: 1 });
        await conn.extNotification("_test.note", { from: "agent" });
        try {
          await conn.readTextFile({ sessionId, path: `${dir}/missing.txt` });
        } catch (error) {
          report.missing = { code: error.code, isRequestError: error instanceof RequestError };
        }
        await say(sessionId, JSON.stringify(report));
        return { stopReason: "end_turn" };
      }
      case "wait-cancel": {
        // Wait until the client cancels this request, then say so.
        const signal = context.signal;
        await say(sessionId, "waiting");
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        await conn.extNotification("_test.aborted", { code: signal.reason?.code ?? null });
        return { stopReason: "cancelled" };
      }
      case "throw-sync":
        throw new Error("boom (sync)");
      case "reject":
        return Promise.reject(new Error("boom (async)"));
      case "throw-request-error":
        throw new RequestError(-32042, "custom failure", { detail: 7 });
      case "throw-string":
        throw "a string";
      case "bad-outbound": {
        const report = {};
        try {
          await conn.sessionUpdate({ sessionId, update: { sessionUpdate: "agent_message_chunk" } });
        } catch (error) {
          report.update = error.code;
        }
        try {
          await conn.readTextFile({ sessionId });
        } catch (error) {
          report.read = error.code;
        }
        await say(sessionId, JSON.stringify(report));
        return { stopReason: "end_turn" };
      }
      case "crash":
        await say(sessionId, "about to crash");
        process.exit(3);
        break;
      case "news": {
        // The updates of the current schema, each with a field no schema knows.
        for (const update of JSON.parse(text.slice("news ".length))) await conn.sessionUpdate({ sessionId, update });
        return { stopReason: "end_turn" };
      }
      case "ask-then-wait": {
        // A request to the client that the client never answers until the connection dies.
        try {
          await conn.requestPermission({
            sessionId,
            toolCall: { toolCallId: "c2", title: "t" },
            options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
          });
        } catch (error) {
          return { stopReason: "cancelled" };
        }
        return { stopReason: "end_turn" };
      }
      default:
        return { stopReason: "refusal" };
    }
  },
};

conn = new AgentSideConnection(() => agent, stdioStream());
await conn.closed;
