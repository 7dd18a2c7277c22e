// The official SDK's `assertSupportedMcpServers` (`experimental/v2`): the rule
// lives in the engine (core/src/mcp_servers.rs).

import { fromNativeError } from "./errors.js";
import { checkSupportedMcpServers } from "./native.js";

/**
 * Throws -32602 (Invalid params) for the first MCP server an ACP v2 agent
 * cannot accept: one whose `name` repeats an earlier server's (data `{ name }`),
 * or whose `type` is not a transport the agent advertised in `session.mcp`
 * with a non-null value (data `{ type }`).
 */
export function assertSupportedMcpServers(mcpServers: ReadonlyArray<unknown> | null | undefined, capabilities: unknown): void {
  try {
    checkSupportedMcpServers(JSON.stringify(mcpServers ?? null), JSON.stringify(capabilities ?? null));
  } catch (error) {
    throw fromNativeError(error);
  }
}
