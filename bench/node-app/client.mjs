#!/usr/bin/env node
// The official TypeScript SDK's benchmark client (bench/official-ts/client.mjs),
// unchanged, on acp-engine's app API: only the package it imports differs.
globalThis.ACP_BENCH_SDK = new URL("../../node/dist/index.js", import.meta.url).href;
await import("../official-ts/client.mjs");
