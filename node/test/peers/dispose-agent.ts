// Uses a TerminalHandle with `await using` (compiled by tsc for Node 20).
import { AgentSideConnection, stdioStream, type Agent } from "acp-engine";

let conn: AgentSideConnection;
const agent: Agent = {
  initialize: () => ({ protocolVersion: 1 }),
  newSession: () => ({ sessionId: "s" }),
  cancel: () => {},
  async prompt(params) {
    let output = "";
    {
      await using terminal = await conn.createTerminal({ sessionId: params.sessionId, command: "echo", args: ["disposed"] });
      await terminal.waitForExit();
      output = (await terminal.currentOutput()).output;
    }
    await conn.extNotification("_test.after-scope", { output });
    return { stopReason: "end_turn" };
  },
};
conn = new AgentSideConnection(() => agent, stdioStream());
await conn.closed;
