#!/usr/bin/env node
// The official TypeScript SDK's v2 benchmark agent (bench/official-ts-v2/agent.mjs)
// on acp-engine's `experimental/v2` over the engine's own stdio stream
// (`stdioStream()`) instead of `ndJsonStream` over Node's Web-stream adapters.
globalThis.ACP_BENCH_SDK_V2 = new URL("../../node/dist/experimental/v2.js", import.meta.url).href;
globalThis.ACP_BENCH_ENGINE_STREAMS = { stdio: (acp) => acp.stdioStream() };
await import("../official-ts-v2/agent.mjs");
