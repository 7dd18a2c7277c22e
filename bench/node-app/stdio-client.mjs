#!/usr/bin/env node
// The official TypeScript SDK's benchmark client (bench/official-ts/client.mjs)
// on acp-engine's app API, spawning its agent with the engine's
// `spawnStream()` instead of `ndJsonStream` over Node's Web-stream adapters.
// The client loads the package itself, after its setup clock starts, and
// hands it to `spawn`.
globalThis.ACP_BENCH_SDK = new URL("../../node/dist/index.js", import.meta.url).href;
globalThis.ACP_BENCH_ENGINE_STREAMS = { spawn: (acp, argv) => acp.spawnStream(argv[0], argv.slice(1)) };
await import("../official-ts/client.mjs");
