// A plain JSON-RPC agent (Connection, no schema checks) that cancels its own
// request to the client once the client says it got it.
import { Connection, stdioStream } from "acp-engine";

let pendingId;
let gotIt;
const clientGotIt = new Promise((resolve) => (gotIt = resolve));

const conn = new Connection(
  async (method, params) => {
    if (method === "initialize") return { protocolVersion: 1, agentCapabilities: {}, authMethods: [] };
    if (method === "session/prompt") {
      const { id, promise } = conn.sendRequestWithId("session/request_permission", {
        sessionId: params.sessionId,
        toolCall: { toolCallId: "c1", title: "t" },
        options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
      });
      pendingId = id;
      await clientGotIt;
      const cancelled = conn.cancelPendingRequest(pendingId);
      try {
        await promise;
        return { stopReason: "end_turn" };
      } catch (error) {
        return { stopReason: cancelled && error.code === -32800 ? "cancelled" : "refusal" };
      }
    }
    throw new Error(`unexpected ${method}`);
  },
  (method) => {
    if (method === "_test.got-permission") gotIt();
  },
  stdioStream(),
);
await conn.closed;
