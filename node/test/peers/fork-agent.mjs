// Test agent on stdio written as for the official SDK 1.x, whose root entry
// point had the unstable methods: it imports from `acp-engine` (not
// `/unstable`) and implements `unstable_forkSession`, and not
// `unstable_listProviders`.
import { runAgent } from "acp-engine";

await runAgent(() => ({
  initialize: () => ({ protocolVersion: 1, agentCapabilities: { sessionCapabilities: { fork: {} } }, authMethods: [] }),
  newSession: () => ({ sessionId: "s-1" }),
  prompt: () => ({ stopReason: "end_turn" }),
  cancel() {},
  authenticate() {},
  unstable_forkSession: (params) => ({ sessionId: `${params.sessionId}-fork` }),
}));
