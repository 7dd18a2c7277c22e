#!/usr/bin/env node
// The official TypeScript SDK's v2 benchmark client (bench/official-ts-v2/client.mjs)
// on acp-engine's `experimental/v2`, spawning its agent with the engine's
// `spawnStream()` instead of `ndJsonStream` over Node's Web-stream adapters.
globalThis.ACP_BENCH_SDK_V2 = new URL("../../node/dist/experimental/v2.js", import.meta.url).href;
const acp = await import(globalThis.ACP_BENCH_SDK_V2);
globalThis.ACP_BENCH_ENGINE_STREAMS = { spawn: (argv) => acp.spawnStream(argv[0], argv.slice(1)) };
await import("../official-ts-v2/client.mjs");
