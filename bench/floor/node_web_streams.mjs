#!/usr/bin/env node
// The Node Web-stream floor: what the scenario's lines cost at the least
// when both processes move them through Node's Web-stream adapters
// (`Readable.toWeb`, `Writable.toWeb`), as the official TypeScript SDK's
// programs do with `ndJsonStream`, and no SDK and no JSON parsing
// (bench/README.md):
//
//   node node_web_streams.mjs --scenario stream|rpc|perm --n N -- node node_web_streams.mjs --agent
//
// follows the benchmark contract as bench/floor/floor.c does, over the
// adapters instead of plain pipes: the client spawns the agent, exchanges
// the handshake's lines and the prompt; then the agent writes N
// notification lines (stream), or N request lines the size of the
// scenario's and waits for each answer line (rpc, perm). Each line is one
// write to the adapter, awaited, as an SDK's message is. The client prints
// the contract's JSON line, with p50_us and p99_us for round trips.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

const started = performance.now();
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const NOTIFICATION =
  '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"bench-session","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk of agent text"}}}}\n';
const RPC_REQUEST = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"fs/read_text_file","params":{"sessionId":"bench-session","path":"/bench/file.txt"}}\n`;
const PERM_REQUEST = (id, i) =>
  `{"jsonrpc":"2.0","id":${id},"method":"session/request_permission","params":{"sessionId":"bench-session","toolCall":{"toolCallId":"call-${i}"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}}\n`;
const RPC_ANSWER = (id) => `{"jsonrpc":"2.0","id":${id},"result":{"content":"hello"}}\n`;
const PERM_ANSWER = (id) =>
  `{"jsonrpc":"2.0","id":${id},"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}\n`;

/** The lines of a Web ReadableStream of bytes, without their newlines. */
async function* lines(readable) {
  let pending = "";
  for await (const chunk of readable) {
    pending += decoder.decode(chunk, { stream: true });
    let newline;
    while ((newline = pending.indexOf("\n")) >= 0) {
      yield pending.slice(0, newline);
      pending = pending.slice(newline + 1);
    }
  }
}

/** One awaited write of `line` to a Web WritableStream's writer. */
function say(writer, line) {
  return writer.write(encoder.encode(line));
}

async function agent() {
  const writer = Writable.toWeb(process.stdout).getWriter();
  const input = lines(Readable.toWeb(process.stdin));
  const next = async () => (await input.next()).value;
  if ((await next()) === undefined) return; // initialize
  await say(writer, '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}\n');
  if ((await next()) === undefined) return; // session/new
  await say(writer, '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"bench-session"}}\n');
  for (let line = await next(); line !== undefined; line = await next()) {
    const text = /"text":"(\w+) (\d+)"/.exec(line);
    if (!text) continue;
    const [, scenario, count] = text;
    for (let i = 0; i < Number(count); i++) {
      if (scenario === "stream") {
        await say(writer, NOTIFICATION);
        continue;
      }
      await say(writer, scenario === "perm" ? PERM_REQUEST(1000 + i, i) : RPC_REQUEST(1000 + i));
      if ((await next()) === undefined) return;
    }
    await say(writer, '{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}\n');
  }
}

async function client(argv) {
  const option = (name) => argv[argv.indexOf(name) + 1];
  const scenario = option("--scenario");
  const n = Number(option("--n"));
  const command = argv.slice(argv.indexOf("--") + 1);
  if (!["stream", "rpc", "perm"].includes(scenario) || !(n >= 0) || argv.indexOf("--") < 0) {
    console.error("usage: node_web_streams.mjs --scenario stream|rpc|perm --n N -- AGENT... (or --agent)");
    process.exit(2);
  }
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const writer = Writable.toWeb(child.stdin).getWriter();
  const input = lines(Readable.toWeb(child.stdout));
  const next = async () => (await input.next()).value;
  await say(writer, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n');
  await next();
  await say(writer, '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n');
  await next();
  const setup_s = (performance.now() - started) / 1000;
  const roundTrips = scenario !== "stream";
  const arrivals = [];
  let count = 0;
  const turn = performance.now();
  await say(
    writer,
    `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"bench-session","prompt":[{"type":"text","text":"${scenario} ${n}"}]}}\n`,
  );
  for (let line = await next(); line !== undefined; line = await next()) {
    if (!line.includes('"method"')) break; // the prompt's answer
    count++;
    if (!roundTrips) continue;
    arrivals.push(performance.now());
    const id = Number(/"id":(\d+)/.exec(line)[1]);
    await say(writer, scenario === "perm" ? PERM_ANSWER(id) : RPC_ANSWER(id));
  }
  const run_s = (performance.now() - turn) / 1000;
  await writer.close();
  await exited;
  const result = { client: "Node Web-stream floor", scenario, n, setup_s, run_s, count, ok: count === n };
  if (arrivals.length > 1) {
    const trips = arrivals
      .slice(1)
      .map((t, i) => t - arrivals[i])
      .sort((a, b) => a - b);
    result.p50_us = trips[trips.length >> 1] * 1000;
    result.p99_us = trips[Math.floor((trips.length * 99) / 100)] * 1000;
  }
  console.log(JSON.stringify(result));
  process.exitCode = result.ok ? 0 : 1;
}

if (process.argv[2] === "--agent") await agent();
else await client(process.argv.slice(2));
