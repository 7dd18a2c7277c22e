// acp-engine/unstable: the unstable ACP protocol (schema/v1/schema.unstable.json),
// methods and fields not part of the spec yet, which may change or go at any
// time. The same API as `acp-engine`, opted in by importing from here: the
// `Agent` and `Client` interfaces have the unstable methods too (with the
// official SDK's `unstable_` prefix), the connections offer them, and the
// engine lets them through (otherwise they are unknown: -32601).

export * from "./common.js";
export * from "./generated/unstable/methods.js";
export * from "./generated/unstable/guards.js";
// MCP-over-ACP: the official `McpOverAcpProvider` / `McpOverAcpCaller` on the engine.
export * from "./mcp/core.js";
