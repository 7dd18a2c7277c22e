// acp-engine/experimental/v2: the ACP version 2 draft, as the official SDK's
// `experimental/v2` offers it: the app API (`agent()`, `client()`, `methods`)
// on v2's method table and types, and `agentProtocolRouter()` for an agent
// that serves v1 and v2 clients. The engine selects the version at
// `initialize` and checks every message against it. The unstable draft:
// `acp-engine/experimental/v2/unstable`.

export * from "../common.js";
export * from "../generated/v2/methods.js";
export * from "../generated/v2/guards.js";
export { AgentProtocolRouter, agentProtocolRouter, type RoutedAgentConnection } from "../app/router.js";
export { assertSupportedMcpServers } from "../mcp-servers.js";
