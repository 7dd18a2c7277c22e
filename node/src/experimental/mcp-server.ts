// acp-engine/experimental/mcp-server: the official SDK's `fromMcpServer`, an
// `@modelcontextprotocol/server` server served over MCP-over-ACP (needs that
// package installed beside this one: an optional peer dependency).

export * from "../mcp/server.js";
