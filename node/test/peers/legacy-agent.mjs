// Test agent on stdio that takes methods outside the schema: `--unchecked
// METHOD...` lists the ones its connection lets through (none without it).
// Its extMethod answers {} and records what it got; `_test/recorded` tells.
import { runAgent } from "acp-engine";

const at = process.argv.indexOf("--unchecked");
const uncheckedMethods = at === -1 ? [] : process.argv.slice(at + 1);
const recorded = [];

await runAgent(
  () => ({
    initialize: () => ({ protocolVersion: 1, agentCapabilities: {}, authMethods: [] }),
    newSession: () => ({ sessionId: "s-1" }),
    prompt: () => ({ stopReason: "end_turn" }),
    cancel() {},
    authenticate() {},
    extMethod(method, params) {
      if (method === "test/recorded") return { recorded };
      recorded.push(["extMethod", method, params]);
      return {};
    },
    extNotification(method, params) {
      recorded.push(["extNotification", method, params]);
    },
  }),
  { uncheckedMethods },
);
