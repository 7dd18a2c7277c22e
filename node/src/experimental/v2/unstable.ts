// acp-engine/experimental/v2/unstable: the ACP version 2 draft with its
// unstable methods and fields (schema/v2/schema.unstable.json), as the
// official SDK's `experimental/v2/unstable`: the same API as
// `acp-engine/experimental/v2`, opted in by importing from here.

export * from "../../common.js";
export * from "../../generated/v2/unstable/methods.js";
export * from "../../generated/v2/unstable/guards.js";
export { AgentProtocolRouter, agentProtocolRouter, type RoutedAgentConnection } from "../../app/router.js";
export { assertSupportedMcpServers } from "../../mcp-servers.js";
// MCP-over-ACP: the official `McpOverAcpProvider` / `McpOverAcpCaller` on the engine.
export * from "../../mcp/core.js";
