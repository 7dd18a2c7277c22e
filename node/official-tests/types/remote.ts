// A program typed against the official TypeScript SDK 2.4.0's remote transports, as its
// users write one: a client over Streamable HTTP and over WebSocket, and an agent served
// from a Node HTTP server through the official adapters. types.mjs compiles it unedited
// on the official package and on ours.
import { createServer, type Server } from "node:http";
import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream, MemoryAcpCookieStore, type HttpStreamOptions } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream, type WebSocketStreamOptions } from "@agentclientprotocol/sdk/experimental/ws-client";
import { AcpServer, type AcpServerOptions } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, DEFAULT_MAX_REQUEST_BODY_BYTES } from "@agentclientprotocol/sdk/experimental/node";

export async function overHttp(url: string): Promise<number> {
  const options: HttpStreamOptions = {
    headers: { authorization: "Bearer token" },
    cookies: "include",
    cookieStore: new MemoryAcpCookieStore(),
  };
  const stream: acp.Stream = createHttpStream(url, options);
  const connection = acp.client().connect(stream);
  const init = await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
  connection.close();
  return init.protocolVersion;
}

export function overWebSocket(url: string): acp.ClientConnection {
  const options: WebSocketStreamOptions = { protocols: ["acp"], headers: { "x-team": "editor" } };
  return acp.client().connect(createWebSocketStream(url, options));
}

export function serve(port: number): Server {
  const options: AcpServerOptions = {
    createAgent: () =>
      acp.agent().onRequest(acp.methods.agent.initialize, ({ params }) => ({
        protocolVersion: params.protocolVersion,
        agentCapabilities: {},
      })),
    maxOutputStallMs: 30_000,
  };
  const server = new AcpServer(options);
  const http = createServer(createNodeHttpHandler(server, { maxRequestBodyBytes: DEFAULT_MAX_REQUEST_BODY_BYTES }));
  http.on("close", () => void server.close());
  return http.listen(port, "127.0.0.1");
}
