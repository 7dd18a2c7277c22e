// One-call helpers, as in every language: run an agent on this process's
// stdio, or spawn an agent or reach a remote one and connect a client to it.

// The class API of the root (index.ts): 1.x's, with the unstable methods.
import { AgentSideConnection, ClientSideConnection, type Agent, type Client } from "./generated/unstable/methods.js";
import {
  spawnStream,
  stdioStream,
  remoteStream,
  type SpawnOptions,
  type StreamOptions,
  type RemoteStreamOptions,
} from "./streams.js";

/** Serve `toAgent(connection)` on this process's stdin/stdout until the client hangs up. */
export async function runAgent(toAgent: (connection: AgentSideConnection) => Agent, options?: StreamOptions): Promise<void> {
  await new AgentSideConnection(toAgent, stdioStream(options)).closed;
}

/**
 * Start an agent process and connect to it as `toClient(connection)`. Close
 * the connection when done: the agent's stdin closes, and the agent is
 * killed if it has not exited within `options.exitGraceMs`. A failure to
 * start it throws an `Error` whose `code` is the system's (`ENOENT`, ...).
 */
export function spawnAgent(
  toClient: (connection: ClientSideConnection) => Client,
  command: string,
  args: readonly string[] = [],
  options: SpawnOptions = {},
): ClientSideConnection {
  return new ClientSideConnection(toClient, spawnStream(command, args, options));
}

/**
 * Connect to a remote agent (`ws://`, `wss://`, `http://` or `https://`) as
 * `toClient(connection)` (see `remoteStream`). Close the connection when done.
 */
export function connectAgent(
  toClient: (connection: ClientSideConnection) => Client,
  url: string,
  options: RemoteStreamOptions = {},
): ClientSideConnection {
  return new ClientSideConnection(toClient, remoteStream(url, options));
}
