#!/usr/bin/env node
// Benchmark client of ACP v2 (the draft) on the official TypeScript SDK's
// `experimental/v2` API (bench/README.md's v2 contract):
// node client.mjs --scenario stream|setup --n N -- <agent command...>
const t0 = performance.now(); // setup includes loading the SDK
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

// bench/node-v2 runs this same program on acp-engine's package (see agent.mjs).
const acp = await import(globalThis.ACP_BENCH_SDK_V2 ?? "../../interop/ts/node_modules/@agentclientprotocol/sdk/dist/v2/stable/acp.js");

const args = process.argv.slice(2);
const flag = (name) => args[args.indexOf(name) + 1];
const scenario = flag("--scenario");
const n = Number(flag("--n"));
const agentArgv = args.slice(args.indexOf("--") + 1);

// bench/node-v2/stdio-*.mjs: acp-engine's own streams in place of Web streams.
const engineStreams = globalThis.ACP_BENCH_ENGINE_STREAMS;
const child = engineStreams ? null : spawn(agentArgv[0], agentArgv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const exited = child ? new Promise((resolve) => child.on("exit", resolve)) : Promise.resolve();
const stream = child
  ? acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout))
  : engineStreams.spawn(acp, agentArgv);

let setup_s = 0;
let run_s = 0;
let count = 0;
let stopReason = "end_turn";
await acp.client({ name: "official-ts-v2-bench-client" }).connectWith(stream, async (agent) => {
  await agent.request(acp.methods.agent.initialize, {
    protocolVersion: 2,
    info: { name: "official-ts-v2-bench-client", version: "1.0.0" },
    capabilities: {},
  });
  await agent.buildSession("/tmp").withSession(async (session) => {
    setup_s = (performance.now() - t0) / 1000;
    if (scenario === "setup") {
      run_s = setup_s;
      count = n;
      return;
    }
    const t1 = performance.now();
    await session.prompt(`${scenario} ${n}`);
    // The turn ends with the idle state update: count the chunks before it.
    for (;;) {
      const message = await session.nextUpdate();
      if (message.kind === "stop") {
        stopReason = message.stopReason;
        break;
      }
      if (message.update.sessionUpdate === "agent_message_chunk") count++;
    }
    run_s = (performance.now() - t1) / 1000;
  });
});
const ok = count === n && stopReason === "end_turn";
child?.stdin.end();
await exited;
console.log(JSON.stringify({ client: "official-ts-v2", scenario, n, setup_s, run_s, count, ok }));
process.exit(ok ? 0 : 1);
