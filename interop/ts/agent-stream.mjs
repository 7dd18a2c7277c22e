// The stream a test client talks to its agent over: a URL reached with the
// official SDK's remote stream, or a command spawned with piped stdio and
// framed by the SDK's `ndJsonStream` (the caller's, v1's or v2's).
//
// `hangUp()` ends a local agent's input and waits up to 2 s for it to exit
// (then kills it); it resolves to why the agent did not exit cleanly, or
// null (always null for a URL).

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import { remoteStream } from "./remote-stream.mjs";

export async function agentStream(argv, ndJsonStream) {
  if (/^(wss?|https?):\/\//.test(argv[0])) {
    return { stream: await remoteStream(argv[0]), hangUp: async () => null };
  }
  const agent = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  agent.stdin.on("error", () => {}); // EPIPE if the agent dies early
  const exited = new Promise((resolve) => {
    agent.on("exit", (code, signal) => resolve({ code, signal }));
    agent.on("error", (err) => resolve({ error: err.message }));
  });
  const hangUp = async () => {
    agent.stdin.end();
    const timer = setTimeout(() => agent.kill("SIGKILL"), 2000);
    const exit = await exited;
    clearTimeout(timer);
    return exit.code === 0 ? null : `the agent did not exit cleanly after its client hung up: ${JSON.stringify(exit)}`;
  };
  return { stream: ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout)), hangUp };
}
