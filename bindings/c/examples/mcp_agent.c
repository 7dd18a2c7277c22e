/*
 * mcp_agent.c: an ACP agent in C that uses the MCP servers its client
 * offers over the ACP connection itself (MCP-over-ACP: `{"type": "acp"}`
 * entries in `session/new`'s `mcpServers`, reached with `mcp/message`).
 *
 * On each prompt it lists the tools of the first such server, calls `add`
 * with 2 and 3, and says what it got. The C twin of the Rust example
 * core/examples/mcp_agent.rs; run it under the Rust example client, which
 * offers a real MCP server (the official MCP TypeScript SDK's, over stdio):
 *
 *   cc mcp_agent.c $(pkg-config --cflags --libs acp_engine) -o c-mcp-agent
 *   target/debug/examples/mcp_client --mcp "node interop/ts/mcp-server.mjs" -- ./c-mcp-agent
 *
 * The library keeps the MCP-over-ACP rules: acp_mcp_server_is_acp picks the
 * servers offered over ACP, acp_mcp_with_request_meta adds the MCP request
 * `_meta`, acp_mcp_generate_id names each MCP request, and
 * acp_mcp_outcome_of_response reads the answer (an MCP result or an inner
 * MCP error; a failure of the ACP request itself is the request's error).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acp_engine.h>

/* printf into a malloc'd string. */
static char *fmt(const char *format, ...) {
    va_list args;
    va_start(args, format);
    char *out = NULL;
    if (vasprintf(&out, format, args) < 0) abort();
    va_end(args);
    return out;
}

/* The string at `pointer` in `json` (free with acp_string_free), or NULL. */
static char *get_string(const char *json, const char *pointer) {
    char *out = NULL;
    return json && acp_json_get_string(json, pointer, &out) == ACP_OK ? out : NULL;
}

/* The id of the first MCP server offered over ACP (acp_string_free), or NULL. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *offered;

/* ---- calling the offered server ----------------------------------------------- */

/* One MCP request to `server`: its outcome, `{"result": ...}` or `{"error": ...}`
 * (free with acp_string_free), or NULL after printing why it failed. */
static char *mcp_request(const acp_connection *conn, const char *server, const char *method, const char *params) {
    char *with_meta = NULL, *answer = NULL, *outcome = NULL;
    if (acp_mcp_with_request_meta(params, NULL, "{\"name\":\"acp-engine-c-mcp-agent\",\"version\":\"1.0.0\"}",
                                  &with_meta) != ACP_OK) {
        fprintf(stderr, "[c-mcp-agent] %s: %s\n", method, acp_last_error_message());
        return NULL;
    }
    char *request_id = acp_mcp_generate_id("c-mcp-agent");
    char *envelope = fmt("{\"serverId\":\"%s\",\"requestId\":\"%s\",\"method\":\"%s\",\"params\":%s}", server,
                         request_id, method, with_meta);
    acp_string_free(with_meta), acp_string_free(request_id);
    /* Blocking here is fine: the library goes on dispatching on another thread. */
    acp_result rc = acp_connection_request(conn, ACP_METHOD_MCP_MESSAGE, envelope, -1, &answer);
    free(envelope);
    if (rc == ACP_OK) rc = acp_mcp_outcome_of_response(answer, &outcome);
    if (rc != ACP_OK) {
        fprintf(stderr, "[c-mcp-agent] %s failed: %s %s\n", method, acp_last_error_message(),
                outcome ? outcome : answer ? answer : "");
        acp_string_free(outcome);
        outcome = NULL;
    }
    acp_string_free(answer);
    return outcome;
}

/* List the server's tools and call `add`: a sentence saying what happened
 * (free with free). */
static char *use_the_server(const acp_connection *conn, const char *server) {
    char *listed = mcp_request(conn, server, "tools/list", "{}");
    char tools[512] = "";
    for (int i = 0; listed; i++) {
        char pointer[64];
        snprintf(pointer, sizeof pointer, "/result/tools/%d/name", i);
        char *name = get_string(listed, pointer);
        if (!name) break;
        snprintf(tools + strlen(tools), sizeof tools - strlen(tools), "%s%s", i ? ", " : "", name);
        acp_string_free(name);
    }
    char *called = mcp_request(conn, server, "tools/call", "{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}");
    char *sum = get_string(called, "/result/content/0/text");
    char *sentence = fmt("tools: %s; add(2, 3) = %s", tools, sum ? sum : "?");
    acp_string_free(sum), acp_string_free(called), acp_string_free(listed);
    return sentence;
}

/* ---- the agent ---------------------------------------------------------------- */

static void initialize(acp_responder *responder) {
    char *result = fmt("{\"protocolVersion\":%d,\"agentCapabilities\":{\"mcpCapabilities\":{\"acp\":true}},"
                       "\"authMethods\":[],\"agentInfo\":{\"name\":\"acp-engine-c-mcp-agent\",\"version\":\"%s\"}}",
                       ACP_PROTOCOL_VERSION, acp_engine_version());
    acp_responder_ok(responder, result);
    free(result);
}

static void new_session(const char *params, acp_responder *responder) {
    char *first = NULL;
    for (int i = 0; !first; i++) {
        char pointer[32], *server = NULL;
        snprintf(pointer, sizeof pointer, "/mcpServers/%d", i);
        if (acp_json_get(params, pointer, &server) != ACP_OK) break;
        if (acp_mcp_server_is_acp(server)) first = get_string(server, "/serverId");
        acp_string_free(server);
    }
    pthread_mutex_lock(&lock);
    acp_string_free(offered);
    offered = first;
    pthread_mutex_unlock(&lock);
    acp_responder_ok(responder, "{\"sessionId\":\"mcp-session\"}");
}

/* A whole turn, right here: a callback may block on requests to the client. */
static void prompt(const acp_connection *conn, acp_responder *responder) {
    pthread_mutex_lock(&lock);
    char *server = offered ? strdup(offered) : NULL;
    pthread_mutex_unlock(&lock);
    char *text = server ? use_the_server(conn, server) : strdup("no MCP server was offered over ACP");
    char *quoted = NULL;
    if (acp_json_quote(text, &quoted) != ACP_OK) abort();
    char *update = fmt("{\"sessionId\":\"mcp-session\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\","
                       "\"content\":{\"type\":\"text\",\"text\":%s}}}",
                       quoted);
    if (acp_connection_send_notification(conn, ACP_METHOD_SESSION_UPDATE, update) != ACP_OK)
        fprintf(stderr, "[c-mcp-agent] session/update: %s\n", acp_last_error_message());
    acp_responder_ok(responder, "{\"stopReason\":\"end_turn\"}");
    free(update), acp_string_free(quoted), free(text), free(server);
}

static void on_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                       acp_responder *responder) {
    (void)user_data;
    if (strcmp(method, ACP_METHOD_INITIALIZE) == 0) initialize(responder);
    else if (strcmp(method, ACP_METHOD_SESSION_NEW) == 0) new_session(params, responder);
    else if (strcmp(method, ACP_METHOD_SESSION_PROMPT) == 0) prompt(conn, responder);
    else acp_responder_error(responder, ACP_ERROR_METHOD_NOT_FOUND, ACP_MESSAGE_METHOD_NOT_FOUND, NULL);
}

int main(void) {
    acp_options options = ACP_OPTIONS_INIT;
    options.side = ACP_SIDE_AGENT;
    options.unstable = true; /* mcp/message and mcpCapabilities.acp are unstable ACP */
    acp_handlers handlers = ACP_HANDLERS_INIT;
    handlers.on_request = on_request;
    acp_connection *conn = NULL;
    if (acp_connection_stdio(&options, &handlers, &conn) != ACP_OK) {
        fprintf(stderr, "[c-mcp-agent] acp_connection_stdio: %s\n", acp_last_error_message());
        return 1;
    }
    /* Serve until the client closes our stdin. */
    acp_connection_wait_closed(conn, -1);
    acp_connection_free(conn);
    acp_shutdown();
    acp_string_free(offered);
    return 0;
}
