// The official SDK's stream to a remote agent: WebSocket (ws:// or wss://),
// or Streamable HTTP (http:// or https://), with optional request headers.
// Loaded only when a URL is given, so a local run needs neither transport.

export async function remoteStream(url, headers) {
  if (/^https?:/.test(url)) {
    const { createHttpStream } = await import("acp-engine/experimental/http-client");
    return createHttpStream(url, { headers });
  }
  const { createWebSocketStream } = await import("acp-engine/experimental/ws-client");
  const { WebSocket } = await import("ws");
  return createWebSocketStream(url, { WebSocket, headers });
}
