// Ends by itself (no close, no process.exit) once its peer, which closes
// its stdin only, has made the connection close: `node fault-client.mjs
// <python> <peer script>`. Prints the peer's pid, how each call ended, and
// `closed <signal aborted>`.
import { Connection, spawnStream } from "acp-engine";

const [python, script] = process.argv.slice(2);
let gotStdinClosed;
const stdinClosed = new Promise((resolve) => (gotStdinClosed = resolve));
const conn = new Connection(() => null, () => gotStdinClosed(), spawnStream(python, ["-c", script]));
process.stdout.write(`${conn.pid}\n`);
await stdinClosed;
const results = await Promise.allSettled(
  Array.from({ length: 3 }, (_, i) => conn.sendRequest("never/answered", { i })),
);
for (const result of results) {
  if (result.status === "fulfilled") process.stdout.write(`fulfilled ${JSON.stringify(result.value)}\n`);
  else process.stdout.write(`rejected ${result.reason.code} ${result.reason.message}\n`);
}
await conn.closed;
process.stdout.write(`closed ${conn.signal.aborted}\n`);
