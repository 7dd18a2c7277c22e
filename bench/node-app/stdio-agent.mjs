#!/usr/bin/env node
// The official TypeScript SDK's benchmark agent (bench/official-ts/agent.mjs)
// on acp-engine's app API over the engine's own stdio stream (`stdioStream()`)
// instead of `ndJsonStream` over Node's Web-stream adapters: the faster
// setting node/README.md documents.
globalThis.ACP_BENCH_SDK = new URL("../../node/dist/index.js", import.meta.url).href;
globalThis.ACP_BENCH_ENGINE_STREAMS = { stdio: (acp) => acp.stdioStream() };
await import("../official-ts/agent.mjs");
