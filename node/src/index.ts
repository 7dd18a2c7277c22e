// acp-engine for Node.js: the Agent Client Protocol on the acp-engine Rust
// core, with the official TypeScript SDK's shapes: its 2.x app API (`agent()`,
// `client()`, `methods`) and its 1.x classes (AgentSideConnection,
// ClientSideConnection), RequestError, ndJsonStream: switching is a change of
// import. The unstable protocol: `acp-engine/unstable`.

export * from "./common.js";
export * from "./generated/methods.js";
export * from "./generated/guards.js";
export { connectAgent, runAgent, spawnAgent } from "./run.js";
export { AgentServer, serveAgent, type ServeAgentOptions } from "./server.js";
export { Proxy, forwardRequest, proxyStreams, runProxy } from "./proxy.js";
export { LIMIT_DEFAULTS } from "./generated/tables.js";
