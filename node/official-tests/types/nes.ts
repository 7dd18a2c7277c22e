// A program typed against the official TypeScript SDK 2.4.0's next edit suggestions
// (`experimental/nes`), as its users write one: an agent answering `nes/*` and following
// `document/*`, a client asking for suggestions. types.mjs compiles it unedited on the
// official package and on ours.
import * as nes from "@agentclientprotocol/sdk/experimental/nes";

const open = new Map<string, number>();

export const agentApp: nes.AgentApp = nes
  .agent()
  .onRequest(nes.methods.agent.nes.start, (): nes.StartNesResponse => ({ sessionId: "nes-1" }))
  .onRequest(nes.methods.agent.nes.suggest, ({ params }) => {
    const request: nes.SuggestNesRequest = params;
    const trigger: nes.NesTriggerKind = request.triggerKind;
    void trigger;
    const suggestions: nes.NesSuggestion[] = [];
    return { suggestions };
  })
  .onNotification(nes.methods.agent.document.didOpen, ({ params }) => {
    open.set(params.uri, params.version);
  });

export async function suggest(connection: nes.ClientConnection, uri: string): Promise<number> {
  const started = await connection.agent.request(nes.methods.agent.nes.start, { workspaceUri: "file:///w" });
  await connection.agent.notify(nes.methods.agent.document.didOpen, {
    sessionId: started.sessionId,
    uri,
    languageId: "typescript",
    version: 1,
    text: "",
  });
  const answer = await connection.agent.request(nes.methods.agent.nes.suggest, {
    sessionId: started.sessionId,
    uri,
    version: 1,
    position: { line: 0, character: 0 },
    triggerKind: "manual",
  });
  return answer.suggestions.length;
}
