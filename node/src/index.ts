// acp-engine for Node.js: the Agent Client Protocol on the acp-engine Rust
// core, with the official TypeScript SDK's shapes: its 2.x app API (`agent()`,
// `client()`, `methods`) and its 1.x classes (AgentSideConnection,
// ClientSideConnection), RequestError, ndJsonStream: switching is a change of
// import. The unstable protocol: `acp-engine/unstable`.

export * from "./common.js";
export * from "./generated/methods.js";
export * from "./generated/guards.js";
// The 1.x class API as 1.x's root had it: with the unstable methods
// (`unstable_forkSession`, ...), which reach an agent or client that has them
// (-32601 otherwise), and the unstable schema's own types (the stable module
// has no class API: tools/codegen/gen_ts.py). The 2.x app API above stays
// stable, as in 2.x.
export { AgentSideConnection, ClientSideConnection, type Agent, type Client } from "./generated/unstable/methods.js";
export type * from "./generated/unstable/additions.js";
export { connectAgent, runAgent, spawnAgent } from "./run.js";
export { AgentServer, serveAgent, type ServeAgentOptions } from "./server.js";
export { Proxy, forwardRequest, proxyStreams, runProxy } from "./proxy.js";
export { LIMIT_DEFAULTS } from "./generated/tables.js";
