// A plain JSON-RPC peer for the generic Connection test.
import { Connection, RequestError, stdioStream } from "acp-engine";

const conn = new Connection(
  async (method, params, context) => {
    if (method === "call-me") return conn.sendRequest("back", params);
    if (method === "fail") throw new RequestError(-32099, "nope");
    if (method === "no-params") return params ?? null;
    if (method === "wait") {
      const signal = context.signal;
      const aborted = new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      await conn.sendNotification("waiting", {});
      await aborted;
      await conn.sendNotification("aborted", { aborted: signal.aborted });
      // What a cancelled handler returns is its answer.
      return { cancelled: true };
    }
    return { method, params };
  },
  (method, params) => {
    if (method === "note") conn.sendNotification("echoed", { note: params });
  },
  stdioStream(),
);
await conn.closed;
