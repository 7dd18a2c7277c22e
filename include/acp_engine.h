/*
 * acp_engine.h: the C ABI of acp-engine, an Agent Client Protocol (ACP)
 * connection engine (JSON-RPC 2.0 over newline-delimited JSON).
 *
 * LINKING
 *   cc app.c $(pkg-config --cflags --libs acp_engine)
 *
 * VERSIONS
 *   ACP_ENGINE_VERSION ("MAJOR.MINOR.PATCH", and _MAJOR, _MINOR, _PATCH)
 *   is the version of this header; acp_engine_version() that of the
 *   library a program runs with. ACP_ENGINE_ABI_VERSION is the header's
 *   ABI version, the N of the shared library's soname libacp_engine.so.N
 *   (what a program records when it is linked); acp_engine_abi_version()
 *   is the library's. N changes only when a change breaks programs built
 *   against the previous header; within one N, a program runs with any
 *   library at least as new as its header. A program may check:
 *     if (acp_engine_abi_version() != ACP_ENGINE_ABI_VERSION) ...
 *
 * EXTENSIBLE STRUCTS
 *   acp_options, acp_handlers and acp_server_options start with size_t
 *   struct_size, the caller's sizeof of the struct: start from
 *   ACP_OPTIONS_INIT / ACP_HANDLERS_INIT / ACP_SERVER_OPTIONS_INIT
 *   (struct_size set, every other field zero, which is
 *   its default) and set what you need:
 *     acp_options options = ACP_OPTIONS_INIT;
 *     options.side = ACP_SIDE_AGENT;
 *   or, in C, { .struct_size = sizeof(acp_options), .side = ... }.
 *   New fields are only appended, and the library reads only the fields
 *   within struct_size (the others take their defaults), so a program
 *   built against an older header keeps working with a newer library. A
 *   struct_size of 0, or smaller than the first version of the struct, is
 *   refused with ACP_ERR_INVALID_ARGUMENT; so is a struct from a newer
 *   header than the library's (a larger struct_size) that sets a field the
 *   library does not know (its unknown bytes must all be zero).
 *
 * MODEL
 *   An acp_connection talks to one peer over stdio (acp_connection_stdio),
 *   a spawned process (acp_connection_spawn) or two file descriptors
 *   (acp_connection_fds). Messages are JSON text in and out. With
 *   side = ACP_SIDE_AGENT or ACP_SIDE_CLIENT, inbound messages are checked
 *   against the ACP v1 schema before C sees them (unknown methods get
 *   -32601, bad params -32602), and outbound ones before they are sent.
 *   Extension methods (starting with "_") and the connection's
 *   acp_options.unchecked_methods pass as they are, both ways.
 *
 * THREADS
 *   The library runs its own threads. Every function may be called from
 *   any thread. A connection made with handlers has a dispatch thread that
 *   runs its callbacks (and acp_response_callback) in wire order, never on
 *   the caller's thread: notification callbacks one at a time, and a
 *   response (or a later request) only after the notifications received
 *   before it were handled. Callbacks get the connection as a parameter;
 *   none runs before the constructor has returned it. They may block and
 *   may call any acp_* function: when a request or response callback
 *   blocks (in acp_connection_request, or in its own code for more than
 *   2 ms), the dispatch thread's work continues on a new thread, so the
 *   events behind it are not held up; so it does at once when a callback
 *   that has run 100 us sends a request with acp_connection_send_request
 *   (its answer needs a reader). A notification callback holds up
 *   what follows it (that is the ordering promise), so it must not wait
 *   for an answer: acp_connection_request fails there with
 *   ACP_ERR_WRONG_MODE. user_data must be usable on the library's
 *   threads. Callbacks must not unwind (no C++ exceptions across them).
 *   Hosts that cannot take callbacks on foreign threads pass handlers =
 *   NULL and take events on their own thread with
 *   acp_connection_next_events (a batch per call) or
 *   acp_connection_next_event; events come in wire order. A host that
 *   parses JSON faster than it walks C structs (a JVM, a scripting
 *   runtime) may use a text connection instead (acp_text_connection_*):
 *   each batch of events is one JSON text, taken on one thread of the
 *   host's, and its sends never block.
 *   A SIGPIPE from writing to a peer that is gone is blocked around the
 *   library's writes (the write fails, the connection closes): a C host
 *   needs no SIGPIPE handling for the library's sake.
 *
 * BACKPRESSURE
 *   A send waits while the connection's write queue is full (the peer is
 *   not reading); inbound traffic is read as fast as it is handled.
 *
 * OWNERSHIP
 *   Strings passed in are borrowed for the call. Strings passed to
 *   callbacks are valid only during the callback. Strings returned to the
 *   caller (char *) are the caller's: free them with acp_string_free, never
 *   with free(). Events are freed with acp_event_free, connections with
 *   acp_connection_free (except the connections a server accepted:
 *   acp_server frees them after their on_close), servers with
 *   acp_server_free; every free function accepts NULL.
 *   A responder (acp_responder *) is answered exactly once, with
 *   acp_responder_ok or acp_responder_error, from any thread, at any time;
 *   the answer is queued before the call returns, so it precedes whatever
 *   the caller sends next. Answering twice returns
 *   ACP_ERR_ALREADY_ANSWERED. Requests still unanswered when C calls
 *   acp_connection_close are answered -32603.
 *
 * ERRORS
 *   Fallible functions return acp_result; on failure,
 *   acp_last_error_message() describes it (per thread, valid until the
 *   next acp_* call on that thread). No Rust panic crosses this boundary:
 *   a bug inside the library returns ACP_ERR_INTERNAL.
 *
 * SHUTDOWN
 *   acp_connection_close(c);             start closing (returns at once)
 *   acp_connection_wait_closed(c, ms);   wait until torn down
 *   acp_connection_free(c);              release (closes if still open)
 *   acp_shutdown();                      after the last free: stop the
 *                                        library's threads (optional; for
 *                                        a clean exit under valgrind)
 *   A peer that exits or closes its stream closes the connection: every
 *   pending request fails at once (error ACP_ERROR_CONNECTION_CLOSED,
 *   "Connection closed") and on_close / ACP_EVENT_CLOSED follows.
 */


#ifndef ACP_ENGINE_H
#define ACP_ENGINE_H

/* Generated by cbindgen from bindings/c (make header). Do not edit. */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "acp_methods.h"
#include "acp_errors.h"
/*
 * The header's version as a string, "MAJOR.MINOR.PATCH"; compare it with
 * acp_engine_version(), the library's.
 */
#define ACP_ENGINE_STRINGIFY_(x) #x
#define ACP_ENGINE_STRINGIFY(x) ACP_ENGINE_STRINGIFY_(x)
#define ACP_ENGINE_VERSION                                                     \
  ACP_ENGINE_STRINGIFY(ACP_ENGINE_VERSION_MAJOR)                               \
  "." ACP_ENGINE_STRINGIFY(ACP_ENGINE_VERSION_MINOR)                           \
  "." ACP_ENGINE_STRINGIFY(ACP_ENGINE_VERSION_PATCH)

/*
 * Initializers of acp_options, acp_handlers and acp_server_options:
 * struct_size set to this header's sizeof, every other field zero (its
 * default):
 *   acp_options options = ACP_OPTIONS_INIT;
 *   acp_handlers handlers = ACP_HANDLERS_INIT;
 *   acp_server_options server = ACP_SERVER_OPTIONS_INIT;
 */
#ifdef __cplusplus
#define ACP_OPTIONS_INIT                                                       \
  ([] { acp_options o_ = {}; o_.struct_size = sizeof(acp_options); return o_; }())
#define ACP_HANDLERS_INIT                                                      \
  ([] { acp_handlers h_ = {}; h_.struct_size = sizeof(acp_handlers); return h_; }())
#define ACP_SERVER_OPTIONS_INIT                                                \
  ([] { acp_server_options s_ = {}; s_.struct_size = sizeof(acp_server_options); return s_; }())
#else
#define ACP_OPTIONS_INIT { .struct_size = sizeof(acp_options) }
#define ACP_HANDLERS_INIT { .struct_size = sizeof(acp_handlers) }
#define ACP_SERVER_OPTIONS_INIT { .struct_size = sizeof(acp_server_options) }
#endif


/*
 Invalid JSON was received. ("Parse error")
 */
#define ACP_ERROR_PARSE_ERROR -32700

/*
 The JSON sent is not a valid request object. ("Invalid request")
 */
#define ACP_ERROR_INVALID_REQUEST -32600

/*
 The method does not exist or is not available. ("Method not found")
 */
#define ACP_ERROR_METHOD_NOT_FOUND -32601

/*
 Invalid method parameters. ("Invalid params")
 */
#define ACP_ERROR_INVALID_PARAMS -32602

/*
 Internal JSON-RPC error. ("Internal error")
 */
#define ACP_ERROR_INTERNAL_ERROR -32603

/*
 ACP: authentication is required before proceeding. ("Authentication required")
 */
#define ACP_ERROR_AUTH_REQUIRED -32000

/*
 ACP: a resource (such as a file) was not found. ("Resource not found")
 */
#define ACP_ERROR_RESOURCE_NOT_FOUND -32002

/*
 The request was cancelled (`$/cancel_request`). ("Request cancelled")
 */
#define ACP_ERROR_REQUEST_CANCELLED -32800

/*
 ACP: `initialize` asked for a protocol version this side does not speak (with
 `data.requested` and `data.supported`; the code is the version 2 draft's, which the official
 SDKs send for v1 too). ("Unsupported protocol version")
 */
#define ACP_ERROR_UNSUPPORTED_PROTOCOL_VERSION -32022

/*
 acp-engine: the connection closed before the request was answered (every pending request
 fails with it; a send on a closed connection too). Local, never sent to a peer; in
 JSON-RPC's range for implementation-defined errors. Each official SDK's own message: the
 Python SDK's ConnectionError says "Connection closed", the TypeScript SDK's Error "ACP
 connection closed" (Node's message). ("Connection closed")
 */
#define ACP_ERROR_CONNECTION_CLOSED -32099

/*
 MCP-over-ACP: a binding limit was exceeded (a server's active requests; the HTTP bridge's
 requests, body or buffered answer). An outer ACP error, never an MCP one. ("MCP-over-ACP
 active request limit exceeded")
 */
#define ACP_ERROR_MCP_RESOURCE_LIMIT_EXCEEDED -33000

/*
 MCP-over-ACP: no MCP server is registered under the `serverId` (with `data.serverId`). ("MCP
 server registration unavailable")
 */
#define ACP_ERROR_MCP_SERVER_UNAVAILABLE -33001

/*
 MCP-over-ACP: the MCP server (or its transport) failed without a valid MCP outcome (with
 `data.details`). ("MCP server handler failed")
 */
#define ACP_ERROR_MCP_BACKEND_FAILED -33002

/*
 MCP 2026-07-28 over HTTP: a routing or authentication header disagrees with the body, or
 appears twice (the MCP-over-ACP HTTP bridge's answer). ("HeaderMismatch")
 */
#define ACP_ERROR_MCP_HEADER_MISMATCH -32020

/*
 MCP 2026-07-28: the request needs a client capability its `_meta` does not declare (HTTP 400
 from the HTTP bridge). ("Missing required client capability")
 */
#define ACP_ERROR_MCP_MISSING_CLIENT_CAPABILITY -32021

/*
 The largest inbound message (a longer line closes the connection; a server closes a larger
 WebSocket frame with 1009 and answers a larger POST 413). Default: 64 MiB.
 */
#define ACP_DEFAULT_MAX_MESSAGE_SIZE 67108864

/*
 The peer's requests handled at once before the engine stops reading (backpressure). Default:
 1024 requests.
 */
#define ACP_DEFAULT_MAX_IN_FLIGHT_REQUESTS 1024

/*
 Output queued for the peer and not written yet before the engine stops reading; for a
 server, what Streamable HTTP holds for one connection's client (as the official TypeScript
 server's maxBufferedBytes). Default: 64 MiB.
 */
#define ACP_DEFAULT_MAX_BUFFERED_BYTES 67108864

/*
 The longest session id or request id a Streamable HTTP server takes from a client (a longer
 one is answered 400), as the official TypeScript server's maxIdLength. Default: 1024 bytes.
 */
#define ACP_DEFAULT_MAX_ID_LENGTH 1024

/*
 Sessions of one Streamable HTTP connection holding output no client is reading (a session
 stream never opened, or left with output queued); one more ends the connection, as the
 official TypeScript server's maxBufferedSessionStreams. Default: 1024 sessions.
 */
#define ACP_DEFAULT_MAX_BUFFERED_SESSION_STREAMS 1024

/*
 Connections a server holds open at once, both transports together; beyond it 503. Default:
 1024 connections.
 */
#define ACP_DEFAULT_MAX_CONNECTIONS 1024

/*
 A server drops a client that takes nothing this long while output waits for it (as the
 official TypeScript server's maxOutputStallMs). Over stdio a connection has no stall timeout
 unless one is set. Default: 60 s.
 */
#define ACP_DEFAULT_SERVER_OUTPUT_STALL_TIMEOUT_MS 60000

/*
 A server ends a Streamable HTTP connection whose client has had no event stream open and
 sent nothing this long, and a resumable WebSocket connection whose socket broke and was not
 resumed this long. Default: 60 s.
 */
#define ACP_DEFAULT_IDLE_TIMEOUT_MS 60000

/*
 Output a server keeps for one connection after sending it (Streamable HTTP events; messages
 of a resumable WebSocket), so that a client reconnecting with Last-Event-ID gets what its
 broken stream or socket lost; a resume that needs more than was kept ends the connection
 (HTTP 410). Default: 4 MiB.
 */
#define ACP_DEFAULT_MAX_REPLAY_BYTES 4194304

/*
 How often a remote connection shows it is alive while it has nothing to say: a server sends
 a comment on an idle Streamable HTTP event stream and pings each WebSocket, a client pings
 its WebSocket. A WebSocket or event stream that brings nothing (a pong included) for three
 intervals is taken as broken (a network that drops traffic without closing): resumed when
 that is on, ended with the reason otherwise. Default: 15 s.
 */
#define ACP_DEFAULT_KEEP_ALIVE_INTERVAL_MS 15000

/*
 How long a remote client gives a server to take its connection: the TCP connect, the TLS
 handshake and the WebSocket upgrade (for Streamable HTTP, the TCP connect and TLS handshake
 of each connection its requests go over). A server that has not answered by then fails the
 connection with the reason, as one that refuses it does, instead of leaving what was sent
 waiting for ever. The official Python SDK's WebSocket client gives it 10 s too. Default: 10
 s.
 */
#define ACP_DEFAULT_CONNECT_TIMEOUT_MS 10000

/*
 How long a remote client keeps trying, with backoff and jitter, to reopen a broken
 Streamable HTTP event stream after the last event it got or resume a broken WebSocket
 (docs/websocket-resume.md), or to reach the server for a POST (and for an initialize
 answered 502 to 504: a proxy with no backend up, a server draining or full), before the
 connection ends with the reason. 0, the default, ends the connection at the first break, so
 that a dead server fails what is pending at once; a gateway's clients set it (10 s, say).
 Default: 0 s.
 */
#define ACP_DEFAULT_RECONNECT_TIMEOUT_MS 0

/*
 `acp_text_connection_send_*`: queued for writing.
 */
#define ACP_TEXT_QUEUED -1

/*
 `acp_text_connection_*`: refused; `acp_last_error_message` and
 `acp_last_error_json` say why.
 */
#define ACP_TEXT_REFUSED -2

/*
 `acp_text_connection_next_events`: every event was taken, the close
 among them.
 */
#define ACP_TEXT_END -3

/*
 The major version of the header (and of the crate it comes from).
 */
#define ACP_ENGINE_VERSION_MAJOR 0

/*
 The minor version of the header.
 */
#define ACP_ENGINE_VERSION_MINOR 1

/*
 The patch version of the header.
 */
#define ACP_ENGINE_VERSION_PATCH 0

/*
 The ABI version of the header: the N of the library's soname,
 `libacp_engine.so.N`. A program may run with any library of the same
 ABI version that is at least as new as its header.
 */
#define ACP_ENGINE_ABI_VERSION 1

/*
 The outcome of every fallible call. On anything but `ACP_OK`,
 `acp_last_error_message()` says what went wrong.
 */
typedef enum {
  /*
   It worked.
   */
  ACP_OK = 0,
  /*
   A required pointer argument was NULL.
   */
  ACP_ERR_NULL_ARGUMENT = 1,
  /*
   A string argument was not valid UTF-8.
   */
  ACP_ERR_INVALID_UTF8 = 2,
  /*
   A JSON argument did not parse (nothing was sent).
   */
  ACP_ERR_INVALID_JSON = 3,
  /*
   An argument was out of range or did not fit the method's schema type
   (nothing was sent).
   */
  ACP_ERR_INVALID_ARGUMENT = 4,
  /*
   The connection is closed (or closing).
   */
  ACP_ERR_CLOSED = 5,
  /*
   An operating-system error (spawning a process, a descriptor).
   */
  ACP_ERR_IO = 6,
  /*
   The responder was already answered (or is unknown).
   */
  ACP_ERR_ALREADY_ANSWERED = 7,
  /*
   Nothing happened within the timeout.
   */
  ACP_ERR_TIMEOUT = 8,
  /*
   The peer answered a request with a JSON-RPC error.
   */
  ACP_ERR_REQUEST_FAILED = 9,
  /*
   The call does not fit the connection's mode (e.g. `next_event` on a
   connection with callbacks).
   */
  ACP_ERR_WRONG_MODE = 10,
  /*
   A bug in acp-engine (a Rust panic, caught at the boundary).
   */
  ACP_ERR_INTERNAL = 11,
  /*
   `acp_json_get_*`: no value at the pointer, or not of that type.
   */
  ACP_ERR_NOT_FOUND = 12,
} acp_result;

/*
 Which side of ACP the connection plays: decides which messages it
 accepts and checks, before C sees them.
 */
typedef enum {
  /*
   Plain JSON-RPC: any method, no schema checks.
   */
  ACP_SIDE_RAW = 0,
  /*
   An agent: inbound agent methods are checked against the ACP schema
   (unknown: -32601, bad params: -32602, C never sees them), and what it
   sends must be a client method with fitting params.
   */
  ACP_SIDE_AGENT = 1,
  /*
   A client: the same, the other way round.
   */
  ACP_SIDE_CLIENT = 2,
} acp_side;

/*
 What an event is: numbered as the engine's event kinds (a response, failed or not,
 is one kind here).
 */
typedef enum {
  /*
   An inbound request: answer `responder` (exactly once).
   */
  ACP_EVENT_REQUEST = 0,
  /*
   An inbound notification.
   */
  ACP_EVENT_NOTIFICATION = 1,
  /*
   The response to a request sent without a callback: its result, or (`error.code` not 0)
   its error.
   */
  ACP_EVENT_RESPONSE = 2,
  /*
   The peer cancelled inbound request `responder` (`$/cancel_request`; the engine answered
   it -32800): stop working on it. Answering it now returns ACP_ERR_ALREADY_ANSWERED.
   */
  ACP_EVENT_CANCELLED = 4,
  /*
   The connection closed; `reason` says why. The last event.
   */
  ACP_EVENT_CLOSED = 6,
  /*
   The peer sent notification `method` with params that fail the ACP schema; the engine
   dropped it (nothing answers it). `error` is the -32602 that says what failed (its
   `data_json` names the field).
   */
  ACP_EVENT_INVALID_NOTIFICATION = 7,
} acp_event_kind;

/*
 The transport a client connected with.
 */
typedef enum {
  /*
   WebSocket (`ws://`, `wss://`).
   */
  ACP_TRANSPORT_WEBSOCKET = 1,
  /*
   Streamable HTTP (`http://`, `https://`).
   */
  ACP_TRANSPORT_HTTP = 2,
} acp_transport;

/*
 The values of `acp_options::protocol_versions`.
 */
typedef enum {
  /*
   Version 1 only (what 0 means too).
   */
  ACP_PROTOCOL_VERSIONS_V1 = 1,
  /*
   The version 2 draft only: a v1 client's `initialize` is answered
   -32022 (Unsupported protocol version).
   */
  ACP_PROTOCOL_VERSIONS_V2 = 2,
  /*
   Both: an agent serves each client the version it asks for; a client
   asking for 2 follows the agent's answer.
   */
  ACP_PROTOCOL_VERSIONS_V1_AND_V2 = 3,
} acp_protocol_versions;

/*
 The values of `acp_server_options::refusal_body`.
 */
typedef enum {
  /*
   The reason as plain text, as the official TypeScript server's (what
   0 means too).
   */
  ACP_REFUSAL_BODY_TEXT = 1,
  /*
   `{"error": reason}` as `application/json`, as the official Python
   server's, which also answers a JSON-RPC batch 501 instead of 400.
   */
  ACP_REFUSAL_BODY_JSON = 2,
} acp_refusal_body;

/*
 A connection to a peer. Opaque; every function on it may be called from
 any thread, except that `acp_connection_free` must be the last call. The
 pointer callbacks receive is the same one the constructor returned.
 */
typedef struct acp_connection acp_connection;

/*
 One `mcp/message` request a provider's handler is running. Opaque;
 finish it once with `acp_mcp_operation_finish`, then free it.
 */
typedef struct acp_mcp_operation acp_mcp_operation;

/*
 One connection's registered MCP servers (the official SDKs'
 `McpOverAcpProvider`). Opaque; free with `acp_mcp_provider_free`.
 */
typedef struct acp_mcp_provider acp_mcp_provider;

/*
 An inbound request waiting for its answer. Opaque: answer it exactly
 once with `acp_responder_ok` or `acp_responder_error`.
 */
typedef struct acp_responder acp_responder;

/*
 A listening server. Opaque; `acp_server_free` must be the last call.
 */
typedef struct acp_server acp_server;

/*
 A text connection (`acp_text_connection_spawn`, `_fds`, `_stdio`,
 `_connect_url`): events come as JSON text, a batch per
 `acp_text_connection_next_events`, and sends never block. Opaque. Its
 functions may be called from any thread,
 `acp_text_connection_next_events` from one thread at a time;
 `acp_text_connection_free` must be the last call.
 */
typedef struct acp_text_connection acp_text_connection;

/*
 Settings for a new connection. A NULL `acp_options*` means all
 defaults. Otherwise start from `ACP_OPTIONS_INIT` (`struct_size` set,
 every other field zero: its default) and set what you need:
 `acp_options o = ACP_OPTIONS_INIT; o.side = ACP_SIDE_AGENT;`.
 Fields are only ever appended; the library reads those within
 `struct_size`, so a program built against an older header keeps working.
 */
typedef struct {
  /*
   `sizeof(acp_options)`, as the caller's header defines it (set by
   `ACP_OPTIONS_INIT`). Fields beyond it take their defaults. Smaller
   than the first version's struct (0 included) is refused with
   ACP_ERR_INVALID_ARGUMENT; so is a larger struct (from a newer
   header) whose fields this library does not know are not all zero.
   */
  size_t struct_size;
  /*
   Which side of ACP this connection plays (default RAW).
   */
  acp_side side;
  /*
   Bound on one inbound message in bytes (0: the default,
   ACP_DEFAULT_MAX_MESSAGE_SIZE).
   */
  size_t max_message_size;
  /*
   acp_connection_spawn: how long a child may take to exit after its
   stdin closed, before it is killed (0: the default, 500 ms).
   */
  uint32_t exit_grace_ms;
  /*
   Speak the unstable protocol too (schema/v1/schema.unstable.json):
   its methods pass the checks; otherwise they are unknown (-32601).
   */
  bool unstable;
  /*
   Response callbacks (`acp_response_callback`) return at once: the
   dispatch thread never moves its work to another thread while one
   runs, and they may not wait for an answer themselves. For hosts
   whose callbacks first wait for their own scheduler (Go's): a new
   thread would only wait too.
   */
  bool quick_response_callbacks;
  /*
   The peer's requests handled at once before the engine stops reading
   its input until some are answered (0: the default,
   ACP_DEFAULT_MAX_IN_FLIGHT_REQUESTS).
   */
  size_t max_in_flight_requests;
  /*
   Bytes of output queued for a peer that is not reading before the
   engine stops reading its input until it reads (0: the default,
   ACP_DEFAULT_MAX_BUFFERED_BYTES).
   */
  size_t max_buffered_bytes;
  /*
   Close the connection when reading was held at one of the limits
   above this long with nothing written and no request finished (0:
   never, the default).
   */
  uint32_t output_stall_timeout_ms;
  /*
   Methods outside the ACP schema this connection sends and receives
   as they are, unchecked: for peers that still use methods the schema
   dropped (the legacy `session/set_model`) or methods of a newer
   schema. Inbound ones reach `on_request` / `on_notification` (or the
   event queue) like any other method; send them with the usual
   request and notification calls. A NULL-terminated array of
   NUL-terminated UTF-8 method names, exactly as on the wire, or NULL
   for none. Read when the connection is created: the strings need not
   outlive that call (nor `acp_server_start`, for a server's
   connections).
   */
  const char *const *unchecked_methods;
  /*
   The ACP versions this connection speaks: an `acp_protocol_versions`
   (0: the default, version 1 only). With version 2, `initialize`
   selects the version (`acp_connection_protocol_version`) and every
   later message is checked against it, both ways.
   */
  uint32_t protocol_versions;
  /*
   acp_connection_connect_url: how long to keep trying, with backoff
   and jitter, to reopen a broken Streamable HTTP event stream or
   resume a broken WebSocket (the server sends what was lost, once) or
   to reach the server for a message, before the connection closes with the reason (0: the
   default, ACP_DEFAULT_RECONNECT_TIMEOUT_MS, closes at the first break).
   */
  uint32_t reconnect_timeout_ms;
  /*
   acp_server_start: output kept for each connection after it was sent
   (Streamable HTTP events, resumable WebSocket messages), for a client
   that comes back with Last-Event-ID (0: the default,
   ACP_DEFAULT_MAX_REPLAY_BYTES; a resume that needs more gets 410).
   */
  size_t max_replay_bytes;
  /*
   acp_connection_connect_url: how long the server has to take the
   connection (the TCP connect, the TLS handshake and the WebSocket
   upgrade) before it closes with the reason (0: the default,
   ACP_DEFAULT_CONNECT_TIMEOUT_MS; UINT32_MAX: wait for ever).
   */
  uint32_t connect_timeout_ms;
  /*
   Zero (keeps the struct free of padding).
   */
  uint32_t _reserved;
} acp_options;

/*
 An inbound request on `connection`. Answer `responder` exactly once,
 now or later, from any thread. `params_json` is NULL when the request had
 no params. The strings are valid only during the call.
 */
typedef void (*acp_request_callback)(void *user_data,
                                     const acp_connection *connection,
                                     const char *method,
                                     const char *params_json,
                                     acp_responder *responder);

/*
 An inbound notification on `connection`. Called one at a time, in
 arrival order.
 */
typedef void (*acp_notification_callback)(void *user_data,
                                          const acp_connection *connection,
                                          const char *method,
                                          const char *params_json);

/*
 `connection` closed (`reason` valid during the call). Called once, last.
 */
typedef void (*acp_close_callback)(void *user_data,
                                   const acp_connection *connection,
                                   const char *reason);

/*
 The peer cancelled inbound request `responder` (`$/cancel_request`, or a
 client's `session/cancel` for a permission request); the engine answered
 it already: stop working on it (answering it now returns
 ACP_ERR_ALREADY_ANSWERED). Called in order with the other events.
 */
typedef void (*acp_cancel_callback)(void *user_data,
                                    const acp_connection *connection,
                                    acp_responder *responder);

/*
 An error answer, in callbacks and events. Pointers are NULL when absent.
 */
typedef struct {
  /*
   The JSON-RPC error code.
   */
  int64_t code;
  /*
   The error message.
   */
  const char *message;
  /*
   The error's `data` as JSON, or NULL.
   */
  const char *data_json;
} acp_error;

/*
 The peer sent notification `method` with params that fail the ACP
 schema: the engine dropped it (a notification gets no answer). `error`
 is the -32602 that says what failed (its `data_json` names the field).
 Called in order with the other notifications; `method` and `error` are
 valid during the call.
 */
typedef void (*acp_invalid_notification_callback)(void *user_data,
                                                  const acp_connection *connection,
                                                  const char *method,
                                                  const acp_error *error);

/*
 Callbacks for a connection. Any may be NULL: requests then get -32601,
 notifications are dropped. They run on the connection's dispatch thread
 (never the thread that created the connection), may block, and may call
 any acp_* function. `user_data` is passed back as given. Start from
 `ACP_HANDLERS_INIT` (`struct_size` set, every callback NULL):
 `acp_handlers h = ACP_HANDLERS_INIT; h.on_request = on_request;`.
 Callbacks are only ever appended; the library reads those within
 `struct_size`, so a program built against an older header keeps working.
 */
typedef struct {
  /*
   `sizeof(acp_handlers)`, as the caller's header defines it (set by
   `ACP_HANDLERS_INIT`). Callbacks beyond it are NULL. Smaller than the
   first version's struct (0 included) is refused with
   ACP_ERR_INVALID_ARGUMENT; so is a larger struct (from a newer
   header) whose fields this library does not know are not all zero.
   */
  size_t struct_size;
  /*
   Passed back to every callback.
   */
  void *user_data;
  /*
   Inbound requests (NULL: they get -32601).
   */
  acp_request_callback on_request;
  /*
   Inbound notifications (NULL: dropped).
   */
  acp_notification_callback on_notification;
  /*
   The connection closed (optional).
   */
  acp_close_callback on_close;
  /*
   The peer cancelled an inbound request (optional; otherwise poll
   `acp_responder_is_cancelled`).
   */
  acp_cancel_callback on_cancel;
  /*
   The peer sent a notification whose params fail the ACP schema; the
   engine dropped it (optional; NULL: ignored). For example
   claude-agent-acp 0.23's `session/update` `usage_update` with
   `"used": null`.
   */
  acp_invalid_notification_callback on_invalid_notification;
} acp_handlers;

/*
 How to reach a remote agent (`acp_connection_connect_url`). NULL, or
 zero-initialised, means no token and the system's CA roots.
 */
typedef struct {
  /*
   NULL, or sent as `Authorization: Bearer <token>`.
   */
  const char *token;
  /*
   NULL, or a PEM file of CA certificates to trust besides the
   system's (`wss://` and `https://` servers with a private CA).
   */
  const char *ca_file;
} acp_remote_options;

/*
 The answer to `acp_connection_send_request`: `result_json` on success
 (and `error` NULL), `error` on failure (and `result_json` NULL). Valid
 during the call.
 */
typedef void (*acp_response_callback)(void *user_data,
                                      const acp_connection *connection,
                                      int64_t request_id,
                                      const char *result_json,
                                      const acp_error *error);

/*
 One event. Every pointer in it is owned by the event and valid until
 `acp_event_free`.
 */
typedef struct {
  /*
   What the event is.
   */
  acp_event_kind kind;
  /*
   REQUEST, NOTIFICATION, INVALID_NOTIFICATION: the method. NULL
   otherwise.
   */
  const char *method;
  /*
   REQUEST, NOTIFICATION: the params as JSON (NULL when absent).
   RESPONSE: the result as JSON (NULL when the request failed).
   */
  const char *json;
  /*
   RESPONSE: the id `acp_connection_send_request` gave the request.
   */
  int64_t request_id;
  /*
   RESPONSE that failed, INVALID_NOTIFICATION: the error (code 0 and
   NULL pointers otherwise).
   */
  acp_error error;
  /*
   REQUEST: answer it with `acp_responder_ok` / `acp_responder_error`.
   CANCELLED: the request the peer cancelled.
   */
  acp_responder *responder;
  /*
   CLOSED: why the connection closed.
   */
  const char *reason;
} acp_event;

/*
 A server's settings (`acp_server_listen`). Start from
 `ACP_SERVER_OPTIONS_INIT` (`struct_size` set, every other field zero:
 its default) and set what you need. A path left NULL is the default
 one; `""` serves none.
 */
typedef struct {
  /*
   `sizeof(acp_server_options)` as the caller's header has it (see
   `acp_options`).
   */
  size_t struct_size;
  /*
   The endpoint (NULL: "/acp"); other paths get 404.
   */
  const char *path;
  /*
   NULL, or required as `Authorization: Bearer <token>` (401 otherwise,
   before anything reaches an agent; on the metrics path too).
   */
  const char *token;
  /*
   Connections open at once, beyond which 503 (0:
   ACP_DEFAULT_MAX_CONNECTIONS).
   */
  size_t max_connections;
  /*
   The largest message a client may send (0:
   ACP_DEFAULT_MAX_MESSAGE_SIZE).
   */
  size_t max_message_size;
  /*
   Drop a client that takes nothing this long while output waits (0:
   ACP_DEFAULT_SERVER_OUTPUT_STALL_TIMEOUT_MS; UINT32_MAX: never).
   */
  uint32_t output_stall_timeout_ms;
  /*
   Streamable HTTP: output held per connection for its client (0:
   ACP_DEFAULT_MAX_BUFFERED_BYTES).
   */
  size_t max_buffered_bytes;
  /*
   End a Streamable HTTP connection with no event stream open and
   nothing sent this long, and a resumable WebSocket not resumed this
   long (0: ACP_DEFAULT_IDLE_TIMEOUT_MS; UINT32_MAX: never).
   */
  uint32_t idle_timeout_ms;
  /*
   NULL, or PEM files (certificate chain and key) to serve `wss://` and
   `https://`; both or neither.
   */
  const char *tls_cert;
  /*
   See `tls_cert`.
   */
  const char *tls_key;
  /*
   Streamable HTTP: the longest session id or string request id a
   client may send, in bytes; longer is 400 (0:
   ACP_DEFAULT_MAX_ID_LENGTH).
   */
  size_t max_id_length;
  /*
   Streamable HTTP: sessions of a connection whose output waits for a
   client to read it; one more ends the connection (0:
   ACP_DEFAULT_MAX_BUFFERED_SESSION_STREAMS).
   */
  size_t max_buffered_session_streams;
  /*
   Output kept per connection for a client that resumes with
   Last-Event-ID (0: `acp_options.max_replay_bytes`, else
   ACP_DEFAULT_MAX_REPLAY_BYTES; a resume needing more gets 410).
   */
  size_t max_replay_bytes;
  /*
   Ping each WebSocket and comment on each idle event stream this often
   (0: ACP_DEFAULT_KEEP_ALIVE_INTERVAL_MS; UINT32_MAX: never).
   */
  uint32_t keep_alive_interval_ms;
  /*
   Let a client's `session/load` of a session live on another
   connection attach to it as an observer (docs/session-attach.md).
   */
  bool attach;
  /*
   A liveness probe's path (NULL: "/healthz"; "": none).
   */
  const char *health_path;
  /*
   A readiness probe's path, 503 while full or draining (NULL:
   "/readyz"; "": none).
   */
  const char *ready_path;
  /*
   The Prometheus metrics' path (NULL: "/metrics"; "": none).
   */
  const char *metrics_path;
  /*
   How refusals (400 and up) read: an `acp_refusal_body` (0: the
   default, plain text as the official TypeScript server's).
   */
  uint32_t refusal_body;
  /*
   Zero (keeps the struct free of padding).
   */
  uint32_t _reserved;
} acp_server_options;

/*
 Called on a library thread for each accepted connection, before any of
 its callbacks run: returns the `user_data` its handlers get (a new
 agent's state, say; free it in `on_close`). `peer_address` is valid
 during the call only.
 */
typedef void *(*acp_accept_callback)(void *user_data,
                                     const char *peer_address,
                                     acp_transport transport);

/*
 0.1's server settings (`acp_server_start`): the first fields of
 `acp_server_options`, without `struct_size`. NULL, or zero-initialised,
 means the defaults.
 */
typedef struct {
  /*
   See `acp_server_options`.
   */
  const char *path;
  /*
   See `acp_server_options`.
   */
  const char *token;
  /*
   See `acp_server_options`.
   */
  size_t max_connections;
  /*
   See `acp_server_options`.
   */
  size_t max_message_size;
  /*
   See `acp_server_options`.
   */
  uint32_t output_stall_timeout_ms;
  /*
   See `acp_server_options`.
   */
  size_t max_buffered_bytes;
  /*
   See `acp_server_options`.
   */
  uint32_t idle_timeout_ms;
  /*
   See `acp_server_options`.
   */
  const char *tls_cert;
  /*
   See `acp_server_options`.
   */
  const char *tls_key;
} acp_serve_options;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/*
 Send a request and wait for its answer on this thread (up to
 `timeout_ms`; negative: no limit). On `ACP_OK`, `*out_json` is the
 result; on `ACP_ERR_REQUEST_FAILED` it is the JSON-RPC error object
 `{"code","message","data"?}`; either way free it with `acp_string_free`.
 On `ACP_ERR_TIMEOUT` the request is cancelled (`$/cancel_request`).
 From a request or response callback, the dispatch thread's work goes on
 on another thread meanwhile; from a notification callback it would wait
 for itself, and fails with `ACP_ERR_WRONG_MODE` (nothing is sent).
 */
acp_result acp_connection_request(const acp_connection *connection,
                                  const char *method,
                                  const char *params_json,
                                  int32_t timeout_ms,
                                  char **out_json);

/*
 Send a request whose answer is taken with `acp_connection_await` (once),
 on any thread; `*out_request_id` is its id (for `acp_connection_await`
 and `acp_connection_cancel_request`). `params_json` may be NULL. Nothing
 is sent on a failure code.
 */
acp_result acp_connection_start_request(const acp_connection *connection,
                                        const char *method,
                                        const char *params_json,
                                        int64_t *out_request_id);

/*
 Wait (up to `timeout_ms`; negative: no limit) for the answer to a request
 of `acp_connection_start_request`, with the results of
 `acp_connection_request`; on `ACP_ERR_TIMEOUT` the request stays pending
 (await it again, or cancel it: `acp_connection_cancel_request` makes this
 return at once, `ACP_ERR_REQUEST_FAILED` with -32800). The same rules as
 `acp_connection_request` for callbacks. `ACP_ERR_INVALID_ARGUMENT` for an
 id that is not awaited (unknown, or its answer was already taken).
 */
acp_result acp_connection_await(const acp_connection *connection,
                                int64_t request_id,
                                int32_t timeout_ms,
                                char **out_json);

/*
 Serve on this process's stdin/stdout (an agent launched by its client).
 `handlers` NULL makes an event connection (`acp_connection_next_events`).
 */
acp_result acp_connection_stdio(const acp_options *options,
                                const acp_handlers *handlers,
                                acp_connection **out);

/*
 Spawn a process and talk to it over its stdin/stdout (a client launching
 its agent). `argv`: NULL-terminated, `argv[0]` the program (looked up in
 PATH). `env`: NULL or NULL-terminated "KEY=VALUE" entries added to the
 inherited environment. `cwd`: NULL for ours. The child's stderr is ours;
 it is reaped when the connection closes (killed if it has not exited
 `exit_grace_ms` after its stdin closed).
 */
acp_result acp_connection_spawn(const char *const *argv,
                                const char *const *env,
                                const char *cwd,
                                const acp_options *options,
                                const acp_handlers *handlers,
                                acp_connection **out);

/*
 A client of a remote agent at `url`: `ws://` or `wss://` (WebSocket),
 `http://` or `https://` (Streamable HTTP), as `acp-engine serve` and the
 official SDKs' servers serve them. `remote` may be NULL (no token, the
 system's CA roots). Returns at once; the connection is made in the
 background, and a failure to make it closes the connection with the
 reason (`on_close`, or a `CLOSED` event), failing every request sent
 meanwhile.
 */
acp_result acp_connection_connect_url(const char *url,
                                      const acp_remote_options *remote,
                                      const acp_options *options,
                                      const acp_handlers *handlers,
                                      acp_connection **out);

/*
 Talk over two file descriptors. Unless `out` is NULL or a descriptor is
 negative (then nothing is touched), the library owns both from this
 call on and closes them (with the connection, or at once on failure).
 Pipes and sockets work best; pass one socket as two duplicates (dup).
 */
acp_result acp_connection_fds(int read_fd,
                              int write_fd,
                              const acp_options *options,
                              const acp_handlers *handlers,
                              acp_connection **out);

/*
 Send a request. Its answer goes to `callback` (on the connection's
 dispatch thread, in order with the other events; on an event connection,
 inside `acp_connection_next_event(s)`), or, if `callback` is NULL on an
 event connection, to an `ACP_EVENT_RESPONSE`. `params_json` may be NULL
 (no params). `out_request_id` (may be NULL) receives the id for
 `acp_connection_cancel_request`. Nothing is sent on a failure code.
 */
acp_result acp_connection_send_request(const acp_connection *connection,
                                       const char *method,
                                       const char *params_json,
                                       acp_response_callback callback,
                                       void *user_data,
                                       int64_t *out_request_id);

/*
 Send a notification. `params_json` may be NULL. Nothing is sent on a
 failure code. A client's `session/cancel` also answers that session's
 pending permission requests `cancelled`, as the protocol requires.
 */
acp_result acp_connection_send_notification(const acp_connection *connection,
                                            const char *method,
                                            const char *params_json);

/*
 Cancel a request still waiting for its answer: its callback (or event,
 or `acp_connection_request`) gets error -32800, the peer gets
 `$/cancel_request`, a late answer is dropped. `ACP_ERR_INVALID_ARGUMENT`
 if it was not pending.
 */
acp_result acp_connection_cancel_request(const acp_connection *connection, int64_t request_id);

/*
 Up to `max` events of an event connection (created without handlers),
 in wire order, into `events[0..*out_count]`, waiting up to `timeout_ms`
 (negative: no limit) for the first. Free each with `acp_event_free`.
 `ACP_ERR_TIMEOUT` with `*out_count` 0 when none came; after
 `ACP_EVENT_CLOSED` was taken, `ACP_ERR_CLOSED`. One call per burst:
 the cheapest way across the boundary.
 */
acp_result acp_connection_next_events(const acp_connection *connection,
                                      acp_event **events,
                                      size_t max,
                                      int32_t timeout_ms,
                                      size_t *out_count);

/*
 The next event of an event connection; `acp_connection_next_events`
 with room for one.
 */
acp_result acp_connection_next_event(const acp_connection *connection,
                                     int32_t timeout_ms,
                                     acp_event **out);

/*
 Close the connection: requests C has not answered are answered -32603,
 queued messages are flushed, pending outbound requests fail, the stream
 is shut, a spawned process is reaped. Returns at once; see
 `acp_connection_wait_closed`. Closing twice is harmless.
 */
acp_result acp_connection_close(const acp_connection *connection);

/*
 Wait until the connection is closed and torn down (the peer hung up or
 `acp_connection_close` was called; a spawned process reaped; `on_close`
 returned, on an event connection the engine's teardown done), up to
 `timeout_ms` (negative: no limit). `ACP_OK` or `ACP_ERR_TIMEOUT`. After
 `ACP_OK` no new callback starts.
 */
acp_result acp_connection_wait_closed(const acp_connection *connection, int32_t timeout_ms);

/*
 The process id of the peer `acp_connection_spawn` started, or -1.
 */
int64_t acp_connection_pid(const acp_connection *connection);

/*
 The ACP version the connection speaks now: 1, or 2 once `initialize`
 selected the version 2 draft (see `acp_options::protocol_versions`); an
 agent's `initialize` handler already sees the selected version, a
 client once the answer arrived. 0 for a NULL connection.
 */
uint16_t acp_connection_protocol_version(const acp_connection *connection);

/*
 True once the connection is closing or closed (later sends fail).
 */
bool acp_connection_is_closed(const acp_connection *connection);

/*
 Close (if open) and free the connection. NULL is fine. Callbacks may
 still be running when this returns (they keep their own reference: the
 pointer they were given stays valid until they return).
 */
void acp_connection_free(acp_connection *connection);

/*
 Why the connection closed (NULL while open). Free with `acp_string_free`.
 */
char *acp_connection_close_reason(const acp_connection *connection);

/*
 Free an event from `acp_connection_next_event(s)`. NULL is fine. An
 unanswered REQUEST event's responder stays valid (answer it, or it is
 answered -32603 when the connection is closed).
 */
void acp_event_free(acp_event *event);

/*
 The message of the last failure on this thread ("" if none). The pointer
 stays valid until the next acp_* call on this thread; do not free it.
 */
const char *acp_last_error_message(void);

/*
 The last failed call's error on this thread as a JSON-RPC error object
 (`{"code", "message", "data"?}`), when the engine refused with one (a
 send whose params fail the schema, a closed connection); NULL when the
 failure was not a JSON-RPC error. Valid until the next acp_* call on
 this thread; do not free it.
 */
const char *acp_last_error_json(void);

/*
 Free a string the library returned. NULL is fine.
 */
void acp_string_free(char *string);

/*
 The library's version, e.g. "0.1.0" (static; do not free).
 */
const char *acp_version(void);

/*
 The string at JSON pointer `pointer` (`""`: the whole document) in
 `json`, unescaped, in `*out` (free with `acp_string_free`).
 `ACP_ERR_NOT_FOUND` when there is no value there or it is not a string.
 */
acp_result acp_json_get_string(const char *json, const char *pointer, char **out);

/*
 The number at `pointer` in `json`, in `*out`. `ACP_ERR_NOT_FOUND` when
 there is no value there or it is not a number.
 */
acp_result acp_json_get_number(const char *json, const char *pointer, double *out);

/*
 The boolean at `pointer` in `json`, in `*out`. `ACP_ERR_NOT_FOUND` when
 there is no value there or it is not a boolean.
 */
acp_result acp_json_get_bool(const char *json, const char *pointer, bool *out);

/*
 The value at `pointer` in `json` (an object, an array, anything) as JSON
 text in `*out_json` (free with `acp_string_free`). `ACP_ERR_NOT_FOUND`
 when there is no value there.
 */
acp_result acp_json_get(const char *json, const char *pointer, char **out_json);

/*
 `text` as a JSON string literal (quoted and escaped), in `*out_json`
 (free with `acp_string_free`): to put text into the params C writes.
 */
acp_result acp_json_quote(const char *text, char **out_json);

/*
 A provider with no servers, for one connection (free with
 `acp_mcp_provider_free`). A client answers the agent's `mcp/message`
 requests (`ACP_METHOD_MCP_MESSAGE`; the connection needs
 `acp_options.unstable`) with `acp_mcp_provider_start`.
 */
acp_mcp_provider *acp_mcp_provider_new(void);

/*
 Free a provider (NULL is fine); its operations stay valid until freed.
 */
void acp_mcp_provider_free(acp_mcp_provider *provider);

/*
 Register a server named `name`, under `server_id` (NULL: a fresh one),
 running at most `max_active_requests` requests at once (0: the engine's
 default). `*out_server_id` is its id, and `*out_declaration_json` (when
 not NULL) what to declare in `session/new`'s `mcpServers`:
 `{"type": "acp", "name", "serverId"}`; free both with `acp_string_free`.
 `ACP_ERR_INVALID_ARGUMENT` when the id is taken.
 */
acp_result acp_mcp_provider_register(const acp_mcp_provider *provider,
                                     const char *name,
                                     const char *server_id,
                                     uint32_t max_active_requests,
                                     char **out_server_id,
                                     char **out_declaration_json);

/*
 Remove a registration: later requests for it are answered -33001, and
 its running operations are cancelled (`acp_mcp_operation_is_cancelled`).
 False when it was not registered.
 */
bool acp_mcp_provider_dispose(const acp_mcp_provider *provider, const char *server_id);

/*
 Start answering an `mcp/message` request (`params_json`, its params).
 `ACP_OK` with `*out_operation` set: run the server's handler; `*out_json`
 is its context (`serverId`, `requestId`, `method`, `params`,
 `protocolVersion`, `clientCapabilities`, `clientInfo`, `envelopeMeta`).
 `ACP_OK` with `*out_operation` NULL: `*out_json` is the result to answer
 at once. `ACP_ERR_REQUEST_FAILED`: `*out_json` is the JSON-RPC error to
 answer (`acp_responder_error_json`): -33001 for an unknown server,
 -33000 past its limit. Free `*out_json` with `acp_string_free`.
 */
acp_result acp_mcp_provider_start(const acp_mcp_provider *provider,
                                  const char *params_json,
                                  acp_mcp_operation **out_operation,
                                  char **out_json);

/*
 The params of an MCP notification (`method`, `params_json` may be NULL)
 scoped to this operation, in `*out_params_json`: send them as an
 `mcp/message` notification. NULL once the operation finished (a late
 notification is dropped).
 */
acp_result acp_mcp_operation_notification(const acp_mcp_operation *operation,
                                          const char *method,
                                          const char *params_json,
                                          char **out_params_json);

/*
 True once the operation should stop: its registration was disposed, it
 was cancelled (`acp_mcp_operation_cancel`), or it finished. (The
 caller's `$/cancel_request` shows on the request's responder:
 `acp_responder_is_cancelled`.) NULL counts as cancelled.
 */
bool acp_mcp_operation_is_cancelled(const acp_mcp_operation *operation);

/*
 The caller cancelled the request: mark the operation cancelled (its
 finish then answers -32800).
 */
void acp_mcp_operation_cancel(const acp_mcp_operation *operation);

/*
 Finish the operation with the handler's outcome, `outcome_json`:
 `{"result": ...}` or an inner MCP error `{"error": {"code", "message",
 "data"?}}`; or, when the handler failed otherwise, `outcome_json` NULL,
 `failure_details` what failed and `failure_code` the ACP error code the
 failure carried (0: none): answered -33002, or -32800 once cancelled.
 `ACP_OK`: `*out_json` is the result to answer; `ACP_ERR_REQUEST_FAILED`:
 the JSON-RPC error (an invalid outcome is -33002). Free `*out_json` with
 `acp_string_free`. Once only (a second finish is -32603); the
 operation's slot is free afterwards.
 */
acp_result acp_mcp_operation_finish(const acp_mcp_operation *operation,
                                    const char *outcome_json,
                                    const char *failure_details,
                                    int64_t failure_code,
                                    char **out_json);

/*
 Free an operation (NULL is fine). One freed unfinished is cancelled and
 its slot released.
 */
void acp_mcp_operation_free(acp_mcp_operation *operation);

/*
 An agent's `mcp/message` request params: `params_json` (NULL: none)
 with MCP 2026-07-28's request `_meta` added (the client's
 `capabilities_json` and `client_info_json`, each may be NULL), never
 replacing the caller's, in `*out_json` (free with `acp_string_free`).
 */
acp_result acp_mcp_with_request_meta(const char *params_json,
                                     const char *capabilities_json,
                                     const char *client_info_json,
                                     char **out_json);

/*
 The outcome (`{"result"}` or `{"error"}`) of an `mcp/message` request's
 answer, `response_json`, in `*out_json`; `ACP_ERR_REQUEST_FAILED` with
 -33002 in `*out_json` when the answer is no valid carrier.
 */
acp_result acp_mcp_outcome_of_response(const char *response_json, char **out_json);

/*
 A fresh id, `<prefix>:<random>` (an MCP `requestId`, say); free it with
 `acp_string_free`. NULL when `prefix` is NULL or not UTF-8.
 */
char *acp_mcp_generate_id(const char *prefix);

/*
 Whether a session's `mcpServers` entry, `server_json`, is a server
 offered over ACP (`{"type": "acp", "name", "serverId"}`): an agent
 calls those with `mcp/message`. False for NULL or text that is not JSON.
 */
bool acp_mcp_server_is_acp(const char *server_json);

/*
 Serve as a proxy of a proxy chain on this process's stdin/stdout (a
 conductor launched it): two connections, `*out_predecessor` toward the
 client (serve it as an agent: `initialize` arrives as itself) and
 `*out_successor` toward the agent (talk to it as a client), each with
 its own options and handlers (NULL: an event connection). Both are
 written before any callback runs, so a handler of either can reach the
 other through its `user_data`. Free both with `acp_connection_free`.
 */
acp_result acp_connection_proxy_stdio(const acp_options *predecessor_options,
                                      const acp_handlers *predecessor_handlers,
                                      const acp_options *successor_options,
                                      const acp_handlers *successor_handlers,
                                      acp_connection **out_predecessor,
                                      acp_connection **out_successor);

/*
 Answer a request with its result (`result_json`: a JSON value; NULL or
 "" mean `null`, which an ACP side sends as `{}`). Any thread, once; the
 answer is queued before this returns, so it goes out before anything
 sent afterwards. The responder is spent afterwards (also on failure,
 except ACP_ERR_INVALID_JSON and ACP_ERR_NULL_ARGUMENT, which leave it
 unanswered).
 */
acp_result acp_responder_ok(acp_responder *responder, const char *result_json);

/*
 Answer a request with a JSON-RPC error (`data_json` may be NULL). Any
 thread, once. The responder is spent afterwards.
 */
acp_result acp_responder_error(acp_responder *responder,
                               int64_t code,
                               const char *message,
                               const char *data_json);

/*
 Answer a request with a JSON-RPC error object, `error_json`:
 `{"code", "message", "data"?}`, as `ACP_ERR_REQUEST_FAILED` hands one
 out (`acp_connection_request`, `acp_mcp_provider_start`). Any thread,
 once; `ACP_ERR_INVALID_ARGUMENT` (the responder unspent) when it is not
 such an object.
 */
acp_result acp_responder_error_json(acp_responder *responder, const char *error_json);

/*
 True once the request no longer wants an answer: the peer sent
 `$/cancel_request` for it (the engine answered -32800), or the
 connection closed. Long-running handlers poll this to stop early;
 answering afterwards sends nothing and returns ACP_ERR_ALREADY_ANSWERED.
 Unknown or spent responders count as cancelled.
 */
bool acp_responder_is_cancelled(const acp_responder *responder);

/*
 Stop the library's threads (for a clean exit, e.g. under valgrind). Call
 it after every connection was freed; a connection still open is cut off
 (it reports closed, its calls fail with ACP_ERR_CLOSED): its pending
 requests fail, and its close is delivered as any close is (`on_close`
 on the dispatch thread, or a `CLOSED` event to a thread waiting for
 events), with the reason "the engine's runtime was shut down". A later
 new connection starts a new runtime.
 */
void acp_shutdown(void);

/*
 Listen on `address` (`"HOST:PORT"`; port 0 picks one) and serve: every
 connection is an `acp_connection` made with `options` and `handlers`
 (which must not be NULL), with the `user_data` `on_accept` returns for
 it (NULL callback: `handlers->user_data` for all). Connections belong to
 the server: do not free them; one is freed after its `on_close`.
 `server`: NULL for the defaults, or from `ACP_SERVER_OPTIONS_INIT`.
 */
acp_result acp_server_listen(const char *address,
                             const acp_server_options *server,
                             const acp_options *options,
                             const acp_handlers *handlers,
                             acp_accept_callback on_accept,
                             void *accept_user_data,
                             acp_server **out);

/*
 `acp_server_listen` with 0.1's settings (`acp_serve_options`, which
 cannot grow; NULL: the defaults), for programs written before it.
 */
acp_result acp_server_start(const char *address,
                            const acp_serve_options *serve,
                            const acp_options *options,
                            const acp_handlers *handlers,
                            acp_accept_callback on_accept,
                            void *accept_user_data,
                            acp_server **out);

/*
 The server's WebSocket URL (`ws://HOST:PORT/acp`, `wss://` with TLS).
 Free with `acp_string_free`; NULL when `server` is NULL.
 */
char *acp_server_websocket_url(const acp_server *server);

/*
 The server's Streamable HTTP URL (`http://HOST:PORT/acp`, `https://`
 with TLS). Free with `acp_string_free`; NULL when `server` is NULL.
 */
char *acp_server_http_url(const acp_server *server);

/*
 Connections open now (0 when `server` is NULL).
 */
size_t acp_server_connections(const acp_server *server);

/*
 Stop accepting and end every connection (each closes, failing what is
 pending; its `on_close` runs), then return once they are freed. Must
 not be called from one of the server's own callbacks.
 */
acp_result acp_server_stop(acp_server *server);

/*
 Drain, for a graceful stop: take no new connection (clients get 503,
 the readiness path says so), let each connection's agent answer every
 request its client sent, end each connection once it has none, and end
 what is left after `timeout_ms`; then return once every connection is
 freed. Must not be called from one of the server's own callbacks.
 */
acp_result acp_server_drain(acp_server *server, uint32_t timeout_ms);

/*
 Stop the server (as `acp_server_stop`) and free it. NULL is ignored.
 */
void acp_server_free(acp_server *server);

/*
 A text connection on this process's stdin/stdout (an agent launched by
 its client).
 */
acp_result acp_text_connection_stdio(const acp_options *options, acp_text_connection **out);

/*
 A text connection to a spawned process (arguments as for
 `acp_connection_spawn`).
 */
acp_result acp_text_connection_spawn(const char *const *argv,
                                     const char *const *env,
                                     const char *cwd,
                                     const acp_options *options,
                                     acp_text_connection **out);

/*
 A text connection to a remote agent at `url` (arguments as for
 `acp_connection_connect_url`): made in the background, a failure closes
 it with the reason (the close event).
 */
acp_result acp_text_connection_connect_url(const char *url,
                                           const acp_remote_options *remote,
                                           const acp_options *options,
                                           acp_text_connection **out);

/*
 A text connection over two file descriptors (owned as by
 `acp_connection_fds`).
 */
acp_result acp_text_connection_fds(int read_fd,
                                   int write_fd,
                                   const acp_options *options,
                                   acp_text_connection **out);

/*
 Send a notification: `method` is `method_len` bytes of UTF-8, `params`
 (NULL for none) `params_len` bytes of JSON. Returns `ACP_TEXT_QUEUED`
 when it is queued for writing, a ticket (>= 0) when the peer is not
 reading and the send is parked (an `ACP_EVENT_WRITTEN` event, `[written,
 ticket, ok]`, says when it was queued), or `ACP_TEXT_REFUSED`: params
 that fail the schema, a closed connection (`acp_last_error_json` gives
 the JSON-RPC error).
 */
int64_t acp_text_connection_send_notification(const acp_text_connection *connection,
                                              const uint8_t *method,
                                              size_t method_len,
                                              const uint8_t *params,
                                              size_t params_len);

/*
 Send a request (arguments as for `acp_text_connection_send_notification`).
 Returns its id (>= 0): its outcome arrives among the events (`[result,
 id, result]` or `[error, id, error]`). `ACP_TEXT_REFUSED` when it is
 refused.
 */
int64_t acp_text_connection_send_request(const acp_text_connection *connection,
                                         const uint8_t *method,
                                         size_t method_len,
                                         const uint8_t *params,
                                         size_t params_len);

/*
 Answer inbound request `token` (from its `[request, token, method,
 params, id]` event; `id` is the peer's JSON-RPC id): `body` is `body_len` bytes, the result's JSON, or with
 `is_error` non-zero the error's (`{"code", "message", "data"?}`). Returns
 1 when the answer was sent, 0 when none is wanted any more (cancelled,
 closed), `ACP_TEXT_REFUSED` for a result that is not JSON (the peer then
 gets -32603 with the reason).
 */
int64_t acp_text_connection_respond(const acp_text_connection *connection,
                                    uint64_t token,
                                    const uint8_t *body,
                                    size_t body_len,
                                    int is_error);

/*
 Wait for the next batch of events: a JSON array of event arrays, each
 starting with its kind (`acp_event_kind`), in the order the engine
 released them. Returns the batch's length in bytes: written to `buffer`
 when it fits in `capacity`; otherwise nothing is written and the same
 batch comes with the next call, given a buffer that large. After the
 batch with the close (`[closed, reason]`) was taken, the next call
 returns `ACP_TEXT_END` (and the connection counts as finished). One
 thread at a time calls it.
 */
int64_t acp_text_connection_next_events(const acp_text_connection *connection,
                                        uint8_t *buffer,
                                        size_t capacity);

/*
 Close: pending requests fail, queued output is flushed, a spawned
 process is reaped; the close arrives as the last event.
 */
void acp_text_connection_close(const acp_text_connection *connection);

/*
 Release the connection (closing it, if it is open). NULL is ignored.
 */
void acp_text_connection_free(const acp_text_connection *connection);

/*
 The library's version, "MAJOR.MINOR.PATCH" (static; do not free).
 Compare it with `ACP_ENGINE_VERSION`, the header's.
 */
const char *acp_engine_version(void);

/*
 The library's ABI version (the N of `libacp_engine.so.N`). A program
 built with `ACP_ENGINE_ABI_VERSION` N runs with a library whose ABI
 version is N.
 */
uint32_t acp_engine_abi_version(void);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* ACP_ENGINE_H */
