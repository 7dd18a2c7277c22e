// What `acp-engine` and `acp-engine/unstable` both export besides their
// generated method tables and types.

export { Connection, type NotificationHandler, type RequestHandler } from "./connection.js";
export { RequestError, type ErrorResponse, type Result } from "./errors.js";
export type { AnyMessage, AnyNotification, AnyRequest, AnyResponse, JsonRpcId } from "./jsonrpc.js";
export type { HandlerTable, MaybePromise, RequestContext } from "./sides.js";
export {
  ndJsonStream,
  spawnStream,
  stdioStream,
  remoteStream,
  type Limits,
  type MessageStream,
  type NdJsonStream,
  type NdJsonStreamOptions,
  type SpawnOptions,
  type Stream,
  type StreamOptions,
  type RemoteStreamOptions,
} from "./streams.js";
export { TerminalHandle } from "./terminal.js";
export { DEFAULT_MAX_MESSAGE_BYTES, MessageTooLargeError } from "./stream-limits.js";
// (The app API's sessions, contexts and connections are typed by each entry
// point's schema: its generated methods module exports them.)
export { AcpConnection } from "./app/context.js";
export type { AppOptions, ParamsParser, SendRequestOptions } from "./app/options.js";
export type { AgentConnectOptions, AgentConnectionLifecycle, AgentConnector } from "./app/connector.js";
