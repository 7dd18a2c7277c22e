// acp-engine/experimental/node: the official SDK's adapters between Node's
// `http` server and an `AcpServer`.

import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { Duplex } from "node:stream";

import { TRANSPORT_HEADERS } from "../generated/tables.js";
import type { AcpServer, WebSocketServerSocket } from "./server.js";

/** The largest request body passed on unless told (16 MiB, as the official adapter). */
export const DEFAULT_MAX_REQUEST_BODY_BYTES = 16 * 1024 * 1024;

export interface NodeHttpHandlerOptions {
  readonly maxRequestBodyBytes?: number;
}

type HeadersListener = (headers: string[], request: IncomingMessage) => void;

/** The part of the `ws` package's `WebSocketServer` (with `noServer: true`) the upgrade handler uses. */
export interface NodeWebSocketUpgradeServer {
  on(event: "headers", listener: HeadersListener): void;
  off(event: "headers", listener: HeadersListener): void;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, callback: (webSocket: WebSocketServerSocket) => void): void;
}

/** `http.createServer(createNodeHttpHandler(server))`: each request through `server.handleRequest`. */
export function createNodeHttpHandler(
  server: AcpServer,
  options: NodeHttpHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const maxBody = options.maxRequestBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_BYTES;
  return (req, res) => {
    void serve(server, req, res, maxBody).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(String(error));
      else res.destroy();
    });
  };
}

async function serve(server: AcpServer, req: IncomingMessage, res: ServerResponse, maxBody: number): Promise<void> {
  if (Number(req.headers["content-length"] ?? 0) > maxBody) {
    res.writeHead(413, { "content-type": "text/plain" }).end(`request body over ${maxBody} bytes`);
    req.resume();
    return;
  }
  // A client that goes away (an event stream it stops) ends the request upstream too.
  const gone = new AbortController();
  res.on("close", () => gone.abort());
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const request = new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(limited(req, maxBody)) as ReadableStream<Uint8Array>) : undefined,
    signal: gone.signal,
    ...(hasBody ? { duplex: "half" } : {}),
  } as RequestInit);
  const response = await server.handleRequest(request);
  const head: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") head[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) head["set-cookie"] = cookies;
  res.writeHead(response.status, response.statusText, head);
  res.flushHeaders();
  if (response.body === null) return void res.end();
  const reader = response.body.getReader();
  res.on("close", () => void reader.cancel().catch(() => {}));
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    // Waits for a slow client (backpressure reaches the engine's limits).
    if (!res.write(value)) await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
  }
  res.end();
}

/** `req`, failing once it brought more than `maxBody` bytes. */
function limited(req: IncomingMessage, maxBody: number): IncomingMessage {
  let seen = 0;
  req.on("data", (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > maxBody) req.destroy(new Error(`request body over ${maxBody} bytes`));
  });
  return req;
}

/** `httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(server, new WebSocketServer({ noServer: true })))`. */
export function createNodeWebSocketUpgradeHandler(
  server: AcpServer,
  webSocketServer: NodeWebSocketUpgradeServer,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    const prepared = server.prepareWebSocketUpgrade();
    // The connection's id goes with the 101 answer, as the official server sends it.
    const addId: HeadersListener = (headers, request) => {
      if (request === req) headers.push(`${TRANSPORT_HEADERS.connectionId}: ${prepared.connectionId}`);
    };
    webSocketServer.on("headers", addId);
    socket.once("close", () => webSocketServer.off("headers", addId));
    webSocketServer.handleUpgrade(req, socket, head, (webSocket) => {
      webSocketServer.off("headers", addId);
      prepared.accept(webSocket);
    });
  };
}
