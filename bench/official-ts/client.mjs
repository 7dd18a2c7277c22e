#!/usr/bin/env node
// Benchmark client on the official TypeScript SDK (see bench/README.md):
// node client.mjs --scenario stream|rpc --n N -- <agent command...>
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as acp from "../../interop/ts/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js";

const args = process.argv.slice(2);
const flag = (name) => args[args.indexOf(name) + 1];
const scenario = flag("--scenario");
const n = Number(flag("--n"));
const agentArgv = args.slice(args.indexOf("--") + 1);

let count = 0;
const app = acp
  .client({ name: "official-ts-bench-client" })
  .onRequest(acp.methods.client.session.requestPermission, () => ({ outcome: { outcome: "cancelled" } }))
  .onRequest(acp.methods.client.fs.readTextFile, () => {
    count++;
    return { content: "hello" };
  })
  .onNotification(acp.methods.client.session.update, () => {
    count++;
  });

const t0 = performance.now();
const child = spawn(agentArgv[0], agentArgv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", resolve));
const conn = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
const agent = conn.agent;
await agent.request(acp.methods.agent.initialize, {
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
});
const session = await agent.request(acp.methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
const setup_s = (performance.now() - t0) / 1000;

const t1 = performance.now();
const outcome = await agent.request(acp.methods.agent.session.prompt, {
  sessionId: session.sessionId,
  prompt: [{ type: "text", text: `${scenario} ${n}` }],
});
const run_s = (performance.now() - t1) / 1000;
const counted = count;
// This SDK can resolve the turn before the last updates were handled: give
// stragglers a moment and report them, so the driver can flag the pair.
await new Promise((resolve) => setTimeout(resolve, 200));
const late = count - counted;
count = counted;
const ok = count === n && outcome.stopReason === "end_turn";
conn.close();
child.stdin.end();
await exited;
console.log(JSON.stringify({ client: "official-ts", scenario, n, setup_s, run_s, count, late, ok }));
process.exit(ok ? 0 : 1);
