#!/usr/bin/env node
// The official TypeScript SDK's benchmark client (bench/official-ts/client.mjs)
// on acp-engine's app API, spawning its agent with the engine's
// `spawnStream()` instead of `ndJsonStream` over Node's Web-stream adapters.
globalThis.ACP_BENCH_SDK = new URL("../../node/dist/index.js", import.meta.url).href;
const acp = await import(globalThis.ACP_BENCH_SDK);
globalThis.ACP_BENCH_ENGINE_STREAMS = { spawn: (argv) => acp.spawnStream(argv[0], argv.slice(1)) };
await import("../official-ts/client.mjs");
