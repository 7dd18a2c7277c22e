#!/usr/bin/env node
// Benchmark client on acp-engine's Node binding (see bench/README.md):
// node client.mjs --scenario <scenario> --n N -- <agent command...>, or
// -- <ws:// or http:// URL> for an agent serving remote clients (bench/remote.py)
const t0 = performance.now(); // setup includes loading the SDK
const { ClientSideConnection, remoteStream, spawnStream } = await import("../../node/dist/index.js");

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
const client = {
  requestPermission() {
    arrivals?.push(performance.now());
    count++;
    return { outcome: { outcome: "selected", optionId: "allow" } };
  },
  sessionUpdate() {
    count++;
  },
  readTextFile() {
    if (large) return { content: large };
    arrivals?.push(performance.now());
    count++;
    return { content: "hello" };
  },
  writeTextFile(params) {
    if (params.content.length === LARGE) count++;
    return {};
  },
};

const stream = agentArgv[0].includes("://") ? remoteStream(agentArgv[0]) : spawnStream(agentArgv[0], agentArgv.slice(1));
const agent = new ClientSideConnection(() => client, stream);
await agent.initialize({ protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } } });
const session = await agent.newSession({ cwd: "/tmp", mcpServers: [] });
const setup_s = (performance.now() - t0) / 1000;

let run_s = setup_s;
let stopReason = "end_turn";
if (scenario === "setup") {
  count = n;
} else {
  const t1 = performance.now();
  const outcome = await agent.prompt({ sessionId: session.sessionId, prompt: [{ type: "text", text: `${scenario} ${n}` }] });
  run_s = (performance.now() - t1) / 1000;
  stopReason = outcome.stopReason;
}
const ok = count === n && stopReason === "end_turn";
agent.close();
await agent.closed;
console.log(JSON.stringify({ client: "acp-engine-node", scenario, n, setup_s, run_s, count, ok, ...latencies() }));
process.exitCode = ok ? 0 : 1;
