#!/usr/bin/env node
// Benchmark client on acp-engine's Node binding (see bench/README.md):
// node client.mjs --scenario stream|rpc --n N -- <agent command...>
import { ClientSideConnection, spawnAgent } from "../../node/index.js";

const args = process.argv.slice(2);
const flag = (name) => args[args.indexOf(name) + 1];
const scenario = flag("--scenario");
const n = Number(flag("--n"));
const agentArgv = args.slice(args.indexOf("--") + 1);

let count = 0;
const client = {
  requestPermission: () => ({ outcome: { outcome: "cancelled" } }),
  sessionUpdate() {
    count++;
  },
  readTextFile() {
    count++;
    return { content: "hello" };
  },
};

const t0 = performance.now();
const agent = new ClientSideConnection(() => client, spawnAgent(agentArgv[0], agentArgv.slice(1)));
await agent.initialize({ protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } } });
const session = await agent.newSession({ cwd: "/tmp", mcpServers: [] });
const setup_s = (performance.now() - t0) / 1000;

const t1 = performance.now();
const outcome = await agent.prompt({ sessionId: session.sessionId, prompt: [{ type: "text", text: `${scenario} ${n}` }] });
const run_s = (performance.now() - t1) / 1000;
const ok = count === n && outcome.stopReason === "end_turn";
agent.close();
await agent.closed;
console.log(JSON.stringify({ client: "acp-engine-node", scenario, n, setup_s, run_s, count, ok }));
process.exitCode = ok ? 0 : 1;
