// An agent written with the app API (the official SDK 2.x's `agent()`), over
// this process's stdio: initialize, sessions, a prompt that asks the client
// for a file and streams it back, and a custom method.
import { agent, methods, stdioStream } from "acp-engine";

let sessions = 0;
const app = agent({ name: "app-agent" })
  .onRequest(methods.agent.initialize, (c) => ({
    protocolVersion: c.params.protocolVersion,
    agentCapabilities: { loadSession: false },
    authMethods: [],
  }))
  .onRequest(methods.agent.session.new, () => ({ sessionId: `s${++sessions}` }))
  .onRequest(methods.agent.session.prompt, async (c) => {
    const file = await c.client.request(methods.client.fs.readTextFile, { sessionId: c.params.sessionId, path: "/notes.txt" });
    for (const word of file.content.split(" ")) {
      await c.client.notify(methods.client.session.update, {
        sessionId: c.params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: word } },
      });
    }
    return { stopReason: "end_turn" };
  })
  .onRequest("vendor/echo", (params) => params, async (c) => ({ echoed: c.params, back: await c.client.request("vendor/ping", {}) }))
  .onNotification(methods.agent.session.cancel, () => {});

await app.connect(stdioStream()).closed;
