// The official SDK's types of raw JSON-RPC 2.0 messages, as a stream of
// messages carries them (`ndJsonStream`'s `readable` and `writable`).

import type { Result } from "./errors.js";

/** A JSON-RPC request id. */
export type JsonRpcId = string | number | null;

/** A JSON-RPC request. */
export type AnyRequest = { jsonrpc: "2.0"; id: JsonRpcId; method: string; params?: unknown };

/** A JSON-RPC response: its result or its error. */
export type AnyResponse = { jsonrpc: "2.0"; id: JsonRpcId } & Result<unknown>;

/** A JSON-RPC notification. */
export type AnyNotification = { jsonrpc: "2.0"; method: string; params?: unknown };

/** Any JSON-RPC message a stream carries. */
export type AnyMessage = AnyRequest | AnyResponse | AnyNotification;
