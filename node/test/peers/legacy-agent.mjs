// Test agent on stdio that takes methods outside the schema (as the official
// SDK 1.x's class API does, every one of them). Its extMethod answers {} and
// records what it got, under the name that came; `_test/recorded` tells.
import { runAgent } from "acp-engine";

const recorded = [];

await runAgent(() => ({
  initialize: () => ({ protocolVersion: 1, agentCapabilities: {}, authMethods: [] }),
  newSession: () => ({ sessionId: "s-1" }),
  prompt: () => ({ stopReason: "end_turn" }),
  cancel() {},
  authenticate() {},
  extMethod(method, params) {
    if (method === "_test/recorded") return { recorded };
    recorded.push(["extMethod", method, params]);
    return {};
  },
  extNotification(method, params) {
    recorded.push(["extNotification", method, params]);
  },
}));
