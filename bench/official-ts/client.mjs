#!/usr/bin/env node
// Benchmark client on the official TypeScript SDK (see bench/README.md):
// node client.mjs --scenario <scenario> --n N -- <agent command...>, or
// -- <ws:// or http:// URL> for an agent serving remote clients (bench/remote.py)
const t0 = performance.now(); // setup includes loading the SDK
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

// bench/node-app runs this same program on acp-engine's app API (see agent.mjs).
const acp = await import(globalThis.ACP_BENCH_SDK ?? "../../interop/ts/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js");

const args = process.argv.slice(2);
const flag = (name) => args[args.indexOf(name) + 1];
const scenario = flag("--scenario");
const n = Number(flag("--n"));
const agentArgv = args.slice(args.indexOf("--") + 1);
const LARGE = 16 * 1024 * 1024;
const large = scenario === "large" ? "x".repeat(LARGE) : "";

// Round trips (rpc, perm): from one request's arrival to the next's, as
// bench/floor measures them; p50 and p99 go out with the result.
const arrivals = scenario === "rpc" || scenario === "perm" ? [] : null;
function latencies() {
  if (arrivals === null || arrivals.length < 2) return {};
  const trips = arrivals.slice(1).map((t, i) => t - arrivals[i]).sort((a, b) => a - b);
  return { p50_us: trips[trips.length >> 1] * 1000, p99_us: trips[Math.floor((trips.length * 99) / 100)] * 1000 };
}

let count = 0;
const app = acp
  .client({ name: "official-ts-bench-client" })
  .onRequest(acp.methods.client.session.requestPermission, () => {
    arrivals?.push(performance.now());
    count++;
    return { outcome: { outcome: "selected", optionId: "allow" } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, () => {
    if (large) return { content: large };
    arrivals?.push(performance.now());
    count++;
    return { content: "hello" };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    if (params.content.length === LARGE) count++;
    return {};
  })
  .onNotification(acp.methods.client.session.update, () => {
    count++;
  });

const remote = agentArgv[0].includes("://");
// bench/node-app/stdio-*.mjs: acp-engine's own streams in place of Web streams.
const engineStreams = globalThis.ACP_BENCH_ENGINE_STREAMS;
const child = remote || engineStreams ? null : spawn(agentArgv[0], agentArgv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const exited = child ? new Promise((resolve) => child.on("exit", resolve)) : Promise.resolve();
const conn = app.connect(
  engineStreams && !remote
    ? engineStreams.spawn(acp, agentArgv)
    : child
      ? acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout))
      : await remoteStream(agentArgv[0]),
);
const agent = conn.agent;
await agent.request(acp.methods.agent.initialize, {
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
});
const session = await agent.request(acp.methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
const setup_s = (performance.now() - t0) / 1000;

let run_s = setup_s;
let stopReason = "end_turn";
let late = 0;
if (scenario === "setup") {
  count = n;
} else {
  const t1 = performance.now();
  const outcome = await agent.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: `${scenario} ${n}` }],
  });
  run_s = (performance.now() - t1) / 1000;
  stopReason = outcome.stopReason;
  const counted = count;
  // This SDK can resolve the turn before the last updates were handled: give
  // stragglers a moment and report them, so the driver can flag the pair.
  await new Promise((resolve) => setTimeout(resolve, 200));
  late = count - counted;
  count = counted;
}
const ok = count === n && stopReason === "end_turn";
conn.close();
child?.stdin.end();
await exited;
console.log(JSON.stringify({ client: "official-ts", scenario, n, setup_s, run_s, count, late, ok, ...latencies() }));
process.exit(ok ? 0 : 1);

/** The SDK's own remote streams: WebSocket (with the `ws` package) or Streamable HTTP. */
async function remoteStream(url) {
  const sdk = "../../interop/ts/node_modules/@agentclientprotocol/sdk/dist/transports";
  if (url.startsWith("http")) return (await import(`${sdk}/http-stream.js`)).createHttpStream(url);
  const { WebSocket } = await import("../../interop/ts/node_modules/ws/wrapper.mjs");
  return (await import(`${sdk}/ws-stream.js`)).createWebSocketStream(url, { WebSocket });
}
