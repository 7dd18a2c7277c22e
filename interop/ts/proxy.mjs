// An ACP proxy written on the official TypeScript SDK (2.4.0), for the
// proxy-chain interop tests (interop/conductor.sh). The SDK has the
// proxy-chain types but no proxy API, so this is its generic agent app
// answering the conductor's `proxy/initialize` and `proxy/successor`:
// messages from the client side go on wrapped in `proxy/successor`,
// messages from the agent side arrive wrapped and go on plain.
//
//   node proxy.mjs NAME [LOG] [--prefix]
//
// logs what crossed it on stderr as `[ts-proxy NAME]` (and in the file LOG),
// and with --prefix puts a text block NAME before every prompt.
//
// No `initialize` handler: registering one makes the SDK refuse every
// other request until `initialize` arrives, and a proxy gets
// `proxy/initialize` instead.
import { agent, ndJsonStream } from "@agentclientprotocol/sdk";
import { PROXY_METHODS } from "@agentclientprotocol/sdk/unstable";
import { appendFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

const [name = "ts-proxy", logFile, rewrite] = process.argv.slice(2);
const log = (line) => {
  const text = `[ts-proxy ${name}] ${line}\n`;
  process.stderr.write(text);
  if (logFile) appendFileSync(logFile, text);
};
const anyParams = (params) => params;
const SUCCESSOR = PROXY_METHODS.proxy_successor;

// To the successor, cancelled with the request it serves.
const toSuccessor = (cx, method, params) => {
  log(`-> ${method}`);
  return cx.client.request(SUCCESSOR, { method, params }, { cancellationSignal: cx.signal });
};

agent({ name: "interop-ts-proxy" })
  .onRequest(PROXY_METHODS.proxy_initialize, anyParams, (cx) => toSuccessor(cx, "initialize", cx.params))
  .onRequest(SUCCESSOR, anyParams, (cx) => {
    log(`<- ${cx.params.method}`);
    return cx.client.request(cx.params.method, cx.params.params ?? undefined);
  })
  .onNotification(SUCCESSOR, anyParams, (cx) => cx.client.notify(cx.params.method, cx.params.params ?? undefined))
  .onRequest("session/prompt", anyParams, (cx) =>
    toSuccessor(
      cx,
      "session/prompt",
      rewrite === "--prefix" ? { ...cx.params, prompt: [{ type: "text", text: name }, ...cx.params.prompt] } : cx.params,
    ),
  )
  .onRequest("*", (cx) => toSuccessor(cx, cx.method, cx.params))
  // `$/cancel_request` is per hop: the SDK cancels its own forwarded request.
  .onNotification("*", (cx) =>
    cx.method === "$/cancel_request" ? undefined : cx.client.notify(SUCCESSOR, { method: cx.method, params: cx.params }),
  )
  .connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
