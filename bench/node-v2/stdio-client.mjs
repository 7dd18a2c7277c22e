#!/usr/bin/env node
// The official TypeScript SDK's v2 benchmark client (bench/official-ts-v2/client.mjs)
// on acp-engine's `experimental/v2`, spawning its agent with the engine's
// `spawnStream()` instead of `ndJsonStream` over Node's Web-stream adapters.
// The client loads the package itself, after its setup clock starts, and
// hands it to `spawn`.
globalThis.ACP_BENCH_SDK_V2 = new URL("../../node/dist/experimental/v2.js", import.meta.url).href;
globalThis.ACP_BENCH_ENGINE_STREAMS = { spawn: (acp, argv) => acp.spawnStream(argv[0], argv.slice(1)) };
await import("../official-ts-v2/client.mjs");
