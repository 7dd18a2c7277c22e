// A program typed against the official TypeScript SDK 2.4.0's app API, as its users write
// one: an agent and a client built with `agent()` / `client()`, their handlers typed by
// method, the contexts' typed and untyped requests, sessions, terminals, errors, streams
// and the server. types.mjs compiles it unedited on the official package and on ours.
import * as acp from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";

// An agent: every handler's params and result typed by its method.
export const agentApp: acp.AgentApp = acp
  .agent({ name: "typed-agent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => ({
    protocolVersion: Math.min(params.protocolVersion, acp.PROTOCOL_VERSION),
    agentCapabilities: { loadSession: false, promptCapabilities: { image: true } },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, ({ params }): acp.NewSessionResponse => ({
    sessionId: `session-${params.cwd}`,
  }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client, signal, requestId }) => {
    const id: acp.JsonRpcId = requestId;
    void id;
    await client.notify(acp.methods.client.session.update, {
      sessionId: params.sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hello" } },
    });
    const permission: acp.RequestPermissionResponse = await client.request(acp.methods.client.session.requestPermission, {
      sessionId: params.sessionId,
      toolCall: { toolCallId: "call-1", title: "Write a file", kind: "edit", status: "pending" },
      options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
    });
    if (permission.outcome.outcome === "selected") {
      const file = await client.request(acp.methods.client.fs.readTextFile, { sessionId: params.sessionId, path: "/a" });
      const content: string = file.content;
      void content;
    }
    const custom = await client.request<{ ok: boolean }>("_example/ping", { at: 1 });
    const ok: boolean = custom.ok;
    void ok;
    const stopReason: acp.StopReason = signal.aborted ? "cancelled" : "end_turn";
    return { stopReason };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    const sessionId: acp.SessionId = params.sessionId;
    void sessionId;
  })
  .onRequest("*", ({ method, params }) => {
    if (method === "_com.example/echo") return { echoed: params };
    throw acp.RequestError.methodNotFound(method);
  })
  .onNotification("*", ({ method }) => {
    console.error("Ignoring unregistered notification:", method);
  })
  .onConnect((connection: acp.AgentConnection) => {
    void connection.closed.then(() => undefined);
    const signal: AbortSignal = connection.signal;
    void signal;
  });

// A terminal, released when it goes out of scope.
export async function runCommand(client: acp.AgentContext, sessionId: string): Promise<string> {
  await using terminal = await client.createTerminal({ sessionId, command: "echo", args: ["hello"] });
  const exit: acp.WaitForTerminalExitResponse = await terminal.waitForExit();
  void exit;
  const output: acp.TerminalOutputResponse = await terminal.currentOutput();
  return output.output;
}

// A client: the agent's requests typed by method, sessions through the builder.
export const clientApp: acp.ClientApp = acp
  .client()
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ({
    outcome: { outcome: "selected", optionId: params.options[0]?.optionId ?? "allow" },
  }))
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }): acp.ReadTextFileResponse => ({ content: params.path }))
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const update: acp.SessionUpdate = params.update;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      console.log(update.content.text);
    }
  });

export async function drive(stream: acp.Stream): Promise<string> {
  const connection: acp.ClientConnection = clientApp.connect(stream);
  const init = await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: true },
  });
  const version: number = init.protocolVersion;
  void version;
  const text = await connection.agent.buildSession("/tmp").withAdditionalDirectories(["/srv"]).withSession(async (session) => {
    const response: acp.PromptResponse = await session.prompt("hi");
    void response;
    const message: acp.ActiveSessionMessage = await session.nextUpdate();
    if (message.kind === "stop") return message.stopReason;
    return session.readText();
  });
  connection.close();
  await connection.closed;
  return text;
}

// The same pair in memory, and over a child's stdio.
export async function inMemory(): Promise<void> {
  await agentApp.connectWith(clientApp, async (context: acp.AgentContext) => {
    await context.notify("_example/hello", { from: "agent" });
  });
}

export function overStdio(): acp.AgentConnection {
  const stream: acp.Stream = acp.ndJsonStream(
    new WritableStream<Uint8Array>({ write() {} }),
    new ReadableStream<Uint8Array>({ start(controller) { controller.close(); } }),
  );
  return agentApp.connect(stream);
}

// Errors as the official SDK builds and reads them.
export function failure(error: unknown): number {
  if (error instanceof acp.RequestError) return error.code;
  const notFound: acp.RequestError = acp.RequestError.resourceNotFound("/missing");
  const auth = acp.RequestError.authRequired();
  return notFound.code + auth.code;
}

// The server, mounted by a program's own HTTP server.
export const server = new AcpServer({
  createAgent: () =>
    acp.agent().onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {},
    })),
  maxBufferedBytes: 1 << 20,
});
