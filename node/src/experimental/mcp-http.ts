// acp-engine/experimental/mcp-http: the official SDK's `McpOverAcpHttpBridge`,
// MCP-over-ACP servers re-exported as loopback MCP Streamable HTTP endpoints.

export * from "../mcp/http.js";
