// A program typed against the official TypeScript SDK 2.4.0's ACP v2 draft
// (`experimental/v2`), as its users write one: an agent whose turns end with an idle
// state update, a client reading a session's updates, typed requests both ways.
// types.mjs compiles it unedited on the official package and on ours.
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

export const agentApp: acp.AgentApp = acp
  .agent()
  .onRequest(acp.methods.agent.initialize, ({ params }) => ({
    protocolVersion: params.protocolVersion,
    info: { name: "typed-agent", version: "1.0.0" },
    capabilities: {},
  }))
  .onRequest(acp.methods.agent.session.new, ({ params }): acp.NewSessionResponse => ({ sessionId: `s-${params.cwd}` }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const pong = await client.request<{ ok: boolean }>("_example/ping", { sessionId: params.sessionId });
    const ok: boolean = pong.ok;
    void ok;
    return { messageId: "m-1" };
  });

export async function drive(connection: acp.ClientConnection): Promise<string> {
  const init: acp.InitializeResponse = await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: 2,
    info: { name: "typed-client", version: "1.0.0" },
  });
  void init;
  const snapshot: acp.InitializationSnapshot = await connection.initialized;
  const agentName: string = snapshot.response.info.name;
  const asked: number = (await connection.agent.initialized).request.protocolVersion;
  void agentName;
  void asked;
  const session: acp.ActiveSession = await connection.agent.buildSession("/tmp").start();
  const sent = await session.prompt("hello");
  const messageId: string = sent.messageId;
  void messageId;
  const message: acp.ActiveSessionMessage = await session.nextUpdate();
  const update: acp.SessionUpdate = message.update;
  void update;
  session.dispose();
  return message.kind;
}
