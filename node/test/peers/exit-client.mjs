// Ends by itself (no process.exit) once its connection is closed: by us
// ("close") or because the agent died ("peer-gone").
import { ClientSideConnection, spawnStream } from "acp-engine";

const [mode, agentPath] = process.argv.slice(2);
const conn = new ClientSideConnection(
  () => ({ requestPermission: () => ({ outcome: { outcome: "cancelled" } }), sessionUpdate() {} }),
  spawnStream(process.execPath, [agentPath]),
);
await conn.initialize({ protocolVersion: 1 });
const { sessionId } = await conn.newSession({ cwd: "/tmp", mcpServers: [] });
if (mode === "close") {
  await conn.prompt({ sessionId, prompt: [{ type: "text", text: "echo" }] });
  conn.close();
} else {
  await conn.prompt({ sessionId, prompt: [{ type: "text", text: "crash" }] }).catch((error) => {
    process.stdout.write(`prompt rejected ${error.code}\n`);
  });
}
await conn.closed;
process.stdout.write(`closed ${conn.signal.aborted}\n`);
