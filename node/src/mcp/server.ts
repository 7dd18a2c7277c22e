// acp-engine/experimental/mcp-server: an `@modelcontextprotocol/server` server
// served over MCP-over-ACP (the official SDK's `fromMcpServer`). Each
// `mcp/message` request goes through the MCP SDK's own request pipeline
// (`createMcpHandler`) as an in-process HTTP request; its Response (JSON, or an
// event stream whose notifications are forwarded) becomes the MCP outcome.

import {
  createMcpHandler,
  McpServer,
  type CreateMcpHandlerOptions,
  type McpServerFactory,
  type ServerEventBus,
  type ServerNotifier,
} from "@modelcontextprotocol/server";

import { RequestError } from "../errors.js";
import { ERROR_CODES, ERROR_MESSAGES } from "../generated/tables.js";
import { McpBindingErrorCode, parseMcpOutcome, type McpOperationContext, type McpOutcome, type McpRequestHandler } from "./core.js";

/** Options for {@link fromMcpServer}. */
export type FromMcpServerOptions = Pick<CreateMcpHandlerOptions, "bus" | "maxSubscriptions" | "onerror">;

/** An MCP SDK server adapted to serve MCP-over-ACP requests. */
export type McpServerAdapter = {
  /** Request handler to pass to `McpOverAcpProvider.registerServer`. */
  handler: McpRequestHandler;
  /** Publishes change events (such as `toolsChanged()`) to open `subscriptions/listen` requests. */
  notify: ServerNotifier;
  /** The event bus behind {@link notify}. */
  bus: ServerEventBus;
  /** Closes open subscriptions and in-flight server instances. */
  close(): Promise<void>;
};

/** The request field MCP 2026-07-28 copies into the `Mcp-Name` header, by method. */
const NAME_FIELD: Record<string, string> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

/** A method name an HTTP header can carry (visible ASCII). */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

type JsonObject = Record<string, unknown>;

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Serves an `@modelcontextprotocol/server` server over MCP-over-ACP. `factory`
 * returns a fresh `McpServer` (or low-level `Server`) for each request, as the
 * MCP SDK requires for MCP 2026-07-28.
 */
export function fromMcpServer(factory: McpServerFactory, options: FromMcpServerOptions = {}): McpServerAdapter {
  // A `tools/call`'s server is made before its request (its tool schema names
  // the argument headers), then handed to the pipeline for that request.
  const madeFor = new WeakMap<Request, ReturnType<McpServerFactory>>();
  const mcp = createMcpHandler((context) => (context.requestInfo && madeFor.get(context.requestInfo)) ?? factory(context), {
    ...options,
    legacy: "reject",
    responseMode: "auto",
    // The ACP connection bounds message sizes already.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
  });
  const handler: McpRequestHandler = async (context) => {
    if (!HEADER_SAFE.test(context.method)) {
      return { error: { code: ERROR_CODES.methodNotFound, message: `${ERROR_MESSAGES.methodNotFound}: ${context.method}` } };
    }
    const request = inProcessRequest(context);
    const toolName = context.params?.name;
    if (context.method === "tools/call" && typeof toolName === "string") {
      const server = await factory({ era: "modern", requestInfo: request });
      if (server instanceof McpServer) {
        for (const [name, value] of argumentHeaders(server, toolName, context.params?.arguments)) request.headers.set(name, value);
      }
      madeFor.set(request, server);
    }
    return outcomeOf(await mcp.fetch(request), context);
  };
  return { handler, notify: mcp.notify, bus: mcp.bus, close: () => mcp.close() };
}

/** The MCP request as the MCP SDK's HTTP pipeline takes it; it never touches the network. */
function inProcessRequest(context: McpOperationContext): Request {
  const headers = new Headers({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": context.protocolVersion,
    "mcp-method": context.method,
  });
  const field = NAME_FIELD[context.method];
  const name = field === undefined ? undefined : context.params?.[field];
  if (typeof name === "string") headers.set("mcp-name", encodedWord(name));
  const message = { jsonrpc: "2.0", id: context.requestId, method: context.method, ...(context.params === undefined ? {} : { params: context.params }) };
  return new Request("http://mcp-over-acp.invalid/", { method: "POST", headers, body: JSON.stringify(message), signal: context.signal });
}

/** `Mcp-Param-*` headers for the tool arguments its input schema marks with `x-mcp-header`. */
function argumentHeaders(server: McpServer, tool: string, args: unknown): Array<[string, string]> {
  const schemaOf = (server as unknown as { toolInputSchemaJson?: (tool: string) => unknown }).toolInputSchemaJson;
  const schema = typeof schemaOf === "function" ? schemaOf.call(server, tool) : undefined;
  const out: Array<[string, string]> = [];
  const walk = (node: unknown, value: unknown): void => {
    if (!isJsonObject(node)) return;
    const header = node["x-mcp-header"];
    if (typeof header === "string") {
      const scalar =
        typeof value === "string" ? value : typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value)) ? String(value) : undefined;
      if (scalar !== undefined) out.push([`mcp-param-${header}`, encodedWord(scalar)]);
    }
    if (isJsonObject(node.properties) && isJsonObject(value)) {
      for (const [key, child] of Object.entries(node.properties)) walk(child, value[key]);
    }
  };
  walk(schema, args);
  return out;
}

/** A header value as MCP's base64 encoded word (any UTF-8 survives). */
function encodedWord(text: string): string {
  return `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`;
}

async function outcomeOf(response: Response, context: McpOperationContext): Promise<McpOutcome> {
  if (context.signal.aborted) {
    await response.body?.cancel().catch(() => {});
    throw context.signal.reason;
  }
  const type = response.headers.get("content-type") ?? "";
  if (type.startsWith("text/event-stream") && response.body !== null) return eventStreamOutcome(response.body, context);
  if (type.startsWith("application/json")) return finalOutcome(await response.json(), context.requestId);
  await response.body?.cancel().catch(() => {});
  throw new RequestError(McpBindingErrorCode.backendFailed, `MCP server returned HTTP ${response.status} without a JSON-RPC response`);
}

/** Forwards the stream's notifications until its response arrives. */
async function eventStreamOutcome(body: ReadableStream<Uint8Array>, context: McpOperationContext): Promise<McpOutcome> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += value;
      for (let end = pending.indexOf("\n\n"); end !== -1; end = pending.indexOf("\n\n")) {
        const data = eventData(pending.slice(0, end));
        pending = pending.slice(end + 2);
        if (data === "") continue; // a comment, such as a keep-alive
        const message: unknown = JSON.parse(data);
        if (!isJsonObject(message)) continue;
        if ("result" in message || "error" in message) return finalOutcome(message, context.requestId);
        if (typeof message.method === "string" && !("id" in message)) {
          await context.notify(message.method, isJsonObject(message.params) ? message.params : undefined);
        }
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  if (context.signal.aborted) throw context.signal.reason;
  throw new RequestError(McpBindingErrorCode.backendFailed, "MCP server stream ended without a response");
}

/** The `data:` lines of one server-sent event, joined. */
function eventData(event: string): string {
  return event
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
    .join("\n");
}

/** The JSON-RPC response to our request as an outcome (an id-less error counts). */
function finalOutcome(message: unknown, requestId: string): McpOutcome {
  const outcome = isJsonObject(message) ? parseMcpOutcome(message) : undefined;
  const id = isJsonObject(message) ? message.id : undefined;
  if (outcome === undefined || !(id === requestId || (id == null && "error" in outcome))) {
    throw new RequestError(McpBindingErrorCode.backendFailed, "MCP server returned an invalid JSON-RPC response");
  }
  return "error" in outcome ? { error: outcome.error } : { result: outcome.result };
}
