// A program typed against the official TypeScript SDK 2.4.0's unstable v1 entry point,
// as its users write one: unstable methods handled and called by name (session forks,
// config options, elicitations), the runtime guards narrowing the agent's requests.
// types.mjs compiles it unedited on the official package and on ours.
import * as acp from "@agentclientprotocol/sdk/unstable";

export const agentApp: acp.AgentApp = acp
  .agent()
  .onRequest(acp.methods.agent.session.fork, ({ params }): acp.ForkSessionResponse => ({ sessionId: `${params.sessionId}-fork` }))
  .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => {
    const configId: string = params.configId;
    void configId;
    return { configOptions: [] };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const answer = await client.request(acp.methods.client.elicitation.create, {
      sessionId: params.sessionId,
      mode: "form",
      message: "Which branch?",
      requestedSchema: { type: "object", properties: { branch: { type: "string" } } },
    });
    const action: acp.CreateElicitationResponse["action"] = answer.action;
    void action;
    return { stopReason: "end_turn" };
  });

export const clientApp: acp.ClientApp = acp.client().onRequest(acp.methods.client.elicitation.create, ({ params }) => {
  if (acp.CreateElicitationRequest.isForm(params)) {
    const schema: acp.ElicitationSchema = params.requestedSchema;
    void schema;
    return { action: "accept", content: { branch: "main" } };
  }
  if (acp.CreateElicitationRequest.isUrl(params)) return { action: "decline" };
  return { action: "cancel" };
});

export async function fork(connection: acp.ClientConnection, sessionId: string): Promise<string> {
  const forked = await connection.agent.request(acp.methods.agent.session.fork, { sessionId, cwd: "/tmp", mcpServers: [] });
  return forked.sessionId;
}
