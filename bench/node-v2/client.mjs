#!/usr/bin/env node
// The official TypeScript SDK's v2 benchmark client (bench/official-ts-v2/client.mjs),
// unchanged, on acp-engine's `experimental/v2`: only the package it imports differs.
globalThis.ACP_BENCH_SDK_V2 = new URL("../../node/dist/experimental/v2.js", import.meta.url).href;
await import("../official-ts-v2/client.mjs");
