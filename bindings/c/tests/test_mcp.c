/* MCP-over-ACP in C (acp_mcp_*; the rules are the engine's):
 *   - a C client serves two MCP servers over the ACP connection to the
 *     official TypeScript SDK's agent (interop/ts/mcp-over-acp-agent.mjs,
 *     its McpOverAcpCaller), which lists and calls their tools, gets
 *     progress notifications, an inner MCP error and the outer -33001 for a
 *     server nobody declared, and reports it all in one message;
 *   - a provider's rules without a peer: ids, the per-server limit, a
 *     disposal cancelling what runs, cancellation, invalid outcomes, a slot
 *     freed with an unfinished operation; the caller's request meta and
 *     answer carriers. */
#include "harness.h"

static acp_mcp_provider *provider;
static char tools_id[128], counter_id[128];
static char words[1024];
static latch said = LATCH_INIT;

/* The string at `pointer` in `json` ("" when absent), into `out`. */
static void text_at(const char *json, const char *pointer, char *out, size_t size) {
    char *value = NULL;
    out[0] = 0;
    if (acp_json_get_string(json, pointer, &value) == ACP_OK) snprintf(out, size, "%s", value);
    acp_string_free(value);
}

static long number_at(const char *json, const char *pointer) {
    double value = 0;
    acp_json_get_number(json, pointer, &value);
    return (long)value;
}

/* "tools": tool `add`. */
static const char *tools(const char *context, char *outcome, size_t size) {
    char method[64];
    text_at(context, "/method", method, sizeof method);
    if (strcmp(method, "tools/list") == 0)
        return "{\"result\":{\"tools\":[{\"name\":\"add\",\"inputSchema\":{\"type\":\"object\"}}]}}";
    long sum = number_at(context, "/params/arguments/a") + number_at(context, "/params/arguments/b");
    snprintf(outcome, size, "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%ld\"}]}}", sum);
    return outcome;
}

/* "counter": tool `count` reports progress; any other is an inner MCP error. */
static const char *counter(const acp_connection *connection, const acp_mcp_operation *operation, const char *context,
                           char *outcome, size_t size) {
    char name[64];
    text_at(context, "/params/name", name, sizeof name);
    if (strcmp(name, "count") != 0) {
        snprintf(outcome, size, "{\"error\":{\"code\":-32602,\"message\":\"Unknown tool: %s\"}}", name);
        return outcome;
    }
    long to = number_at(context, "/params/arguments/to");
    for (long step = 1; step <= to; step++) {
        char progress[128], *params = NULL;
        snprintf(progress, sizeof progress, "{\"progress\":%ld,\"total\":%ld}", step, to);
        CHECK_RC(acp_mcp_operation_notification(operation, "notifications/progress", progress, &params), ACP_OK);
        CHECK(params != NULL);
        CHECK_RC(acp_connection_send_notification(connection, ACP_METHOD_MCP_MESSAGE, params), ACP_OK);
        acp_string_free(params);
    }
    snprintf(outcome, size, "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%ld\"}]}}", to);
    return outcome;
}

static void on_request(void *user_data, const acp_connection *connection, const char *method, const char *params_json,
                       acp_responder *responder) {
    (void)user_data;
    if (strcmp(method, ACP_METHOD_MCP_MESSAGE) != 0) {
        acp_responder_error(responder, ACP_ERROR_METHOD_NOT_FOUND, method, NULL);
        return;
    }
    acp_mcp_operation *operation = NULL;
    char *json = NULL;
    acp_result started = acp_mcp_provider_start(provider, params_json, &operation, &json);
    if (started == ACP_ERR_REQUEST_FAILED) {
        CHECK_RC(acp_responder_error_json(responder, json), ACP_OK);
    } else if (operation == NULL) {
        CHECK_RC(acp_responder_ok(responder, json), ACP_OK);
    } else {
        char server[128], buffer[512], *answer = NULL;
        text_at(json, "/serverId", server, sizeof server);
        const char *outcome = strcmp(server, tools_id) == 0 ? tools(json, buffer, sizeof buffer)
                                                            : counter(connection, operation, json, buffer, sizeof buffer);
        if (acp_mcp_operation_finish(operation, outcome, NULL, 0, &answer) == ACP_OK)
            CHECK_RC(acp_responder_ok(responder, answer), ACP_OK);
        else
            CHECK_RC(acp_responder_error_json(responder, answer), ACP_OK);
        acp_string_free(answer);
        acp_mcp_operation_free(operation);
    }
    acp_string_free(json);
}

static void on_notification(void *user_data, const acp_connection *connection, const char *method,
                            const char *params_json) {
    (void)user_data, (void)connection;
    if (strcmp(method, ACP_METHOD_SESSION_UPDATE) != 0) return;
    char text[1024];
    text_at(params_json, "/update/content/text", text, sizeof text);
    snprintf(words + strlen(words), sizeof words - strlen(words), "%s", text);
    latch_add(&said, 1);
}

/* What the agent must say, with the first `received` progress notifications
 * (the official caller drops those it handles after the request's answer). */
static void expected(int received, char *out, size_t size) {
    char progress[256] = "";
    for (int step = 1; step <= received; step++)
        snprintf(progress + strlen(progress), sizeof progress - strlen(progress), "%snotifications/progress:%d",
                 step > 1 ? "," : "", step);
    snprintf(out, size,
             "tools=add add=5 count=3 progress=%s refused=-32602:Unknown tool: nope unavailable=-33001", progress);
}

static void request(acp_connection *c, const char *method, const char *params, char **out) {
    CHECK_RC(acp_connection_request(c, method, params, slow(30000), out), ACP_OK);
}

static void test_the_official_typescript_agent_calls_the_c_servers(void) {
    harness_section("the official TypeScript caller");
    char script[4096];
    snprintf(script, sizeof script, "%s/interop/ts/mcp-over-acp-agent.mjs", acp_repo());
    const char *argv[] = {"node", script, NULL};
    acp_options options = ACP_OPTIONS_INIT;
    options.side = ACP_SIDE_CLIENT;
    options.unstable = true;
    acp_handlers handlers = ACP_HANDLERS_INIT;
    handlers.on_request = on_request;
    handlers.on_notification = on_notification;
    provider = acp_mcp_provider_new();
    char *id = NULL, *tools_declaration = NULL, *counter_declaration = NULL;
    CHECK_RC(acp_mcp_provider_register(provider, "tools", NULL, 0, &id, &tools_declaration), ACP_OK);
    snprintf(tools_id, sizeof tools_id, "%s", id);
    acp_string_free(id);
    CHECK_RC(acp_mcp_provider_register(provider, "counter", NULL, 0, &id, &counter_declaration), ACP_OK);
    snprintf(counter_id, sizeof counter_id, "%s", id);
    acp_string_free(id);
    CHECK(acp_mcp_server_is_acp(tools_declaration));

    acp_connection *c = NULL;
    CHECK_RC(acp_connection_spawn(argv, NULL, NULL, &options, &handlers, &c), ACP_OK);
    char *out = NULL, params[1024];
    request(c, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1,\"clientCapabilities\":{}}", &out);
    acp_string_free(out);
    snprintf(params, sizeof params, "{\"cwd\":\"/\",\"mcpServers\":[%s,%s]}", tools_declaration,
             counter_declaration);
    acp_string_free(tools_declaration);
    acp_string_free(counter_declaration);
    request(c, ACP_METHOD_SESSION_NEW, params, &out);
    char session[256];
    text_at(out, "/sessionId", session, sizeof session);
    acp_string_free(out);
    snprintf(params, sizeof params, "{\"sessionId\":\"%s\",\"prompt\":[{\"type\":\"text\",\"text\":\"call\"}]}", session);
    request(c, ACP_METHOD_SESSION_PROMPT, params, &out);
    CHECK_CONTAINS(out, "end_turn");
    acp_string_free(out);
    CHECK(latch_wait(&said, 1, slow(10000)));

    const char *progress = strstr(words, "progress=");
    int received = 0;
    for (const char *at = progress; at && (at = strstr(at, "notifications/progress:")); at++) received++;
    char want[512];
    expected(received, want, sizeof want);
    fprintf(stderr, "  said: %s\n", words);
    CHECK(received >= 1);
    CHECK_STR_EQ(words, want);

    CHECK(acp_mcp_provider_dispose(provider, tools_id));
    CHECK(!acp_mcp_provider_dispose(provider, tools_id));
    acp_connection_close(c);
    CHECK_RC(acp_connection_wait_closed(c, slow(10000)), ACP_OK);
    acp_connection_free(c);
    acp_mcp_provider_free(provider);
}

/* An `mcp/message` request for `server`, as a caller builds it. */
static void envelope(const char *server, const char *request_id, char *out, size_t size) {
    char *params = NULL;
    CHECK_RC(acp_mcp_with_request_meta("{}", "{}", "{\"name\":\"c-test\",\"version\":\"1\"}", &params), ACP_OK);
    snprintf(out, size, "{\"serverId\":\"%s\",\"requestId\":\"%s\",\"method\":\"tools/list\",\"params\":%s}", server,
             request_id, params);
    acp_string_free(params);
}

/* Start a request for `server`; its operation, or NULL with the error's code in `*code`. */
static acp_mcp_operation *start(acp_mcp_provider *p, const char *server, const char *request_id, long *code) {
    char params[1024], *json = NULL;
    acp_mcp_operation *operation = NULL;
    envelope(server, request_id, params, sizeof params);
    acp_result rc = acp_mcp_provider_start(p, params, &operation, &json);
    *code = rc == ACP_ERR_REQUEST_FAILED ? json_int(json, "code", 0) : 0;
    if (rc == ACP_OK) CHECK_CONTAINS(json, "\"protocolVersion\":\"2026-07-28\"");
    acp_string_free(json);
    return operation;
}

/* Finish `operation` (outcome or failure); the error's code, 0 on success. */
static long finish(acp_mcp_operation *operation, const char *outcome, const char *failure, int64_t code) {
    char *json = NULL;
    acp_result rc = acp_mcp_operation_finish(operation, outcome, failure, code, &json);
    long answered = rc == ACP_ERR_REQUEST_FAILED ? json_int(json, "code", 1) : (rc == ACP_OK ? 0 : -1);
    if (code != 0) CHECK(json_int(strstr(json, "\"data\""), "code", 0) == code);
    acp_string_free(json);
    return answered;
}

static void test_the_provider_rules(void) {
    harness_section("the provider's rules");
    acp_mcp_provider *p = acp_mcp_provider_new();
    char *id = NULL;
    long code = 0;
    CHECK_RC(acp_mcp_provider_register(p, "one", "one", 1, &id, NULL), ACP_OK);
    CHECK_STR_EQ(id, "one");
    acp_string_free(id);
    CHECK_RC(acp_mcp_provider_register(p, "again", "one", 0, &id, NULL), ACP_ERR_INVALID_ARGUMENT);
    CHECK(id == NULL);
    CHECK_RC(acp_mcp_provider_register(NULL, "x", NULL, 0, &id, NULL), ACP_ERR_NULL_ARGUMENT);

    acp_mcp_operation *running = start(p, "one", "r1", &code);
    CHECK(running != NULL);
    CHECK(start(p, "one", "r2", &code) == NULL);
    CHECK_EQ_INT(code, ACP_ERROR_MCP_RESOURCE_LIMIT_EXCEEDED);
    CHECK(start(p, "nobody", "r1", &code) == NULL);
    CHECK_EQ_INT(code, ACP_ERROR_MCP_SERVER_UNAVAILABLE);

    char *notification = NULL;
    CHECK_RC(acp_mcp_operation_notification(running, "notifications/progress", "{\"progress\":1}", &notification), ACP_OK);
    CHECK_CONTAINS(notification, "\"requestId\":\"r1\"");
    acp_string_free(notification);
    CHECK(!acp_mcp_operation_is_cancelled(running));
    CHECK(acp_mcp_provider_dispose(p, "one"));
    CHECK(acp_mcp_operation_is_cancelled(running));
    CHECK_EQ_INT(finish(running, NULL, "stopped", 0), ACP_ERROR_REQUEST_CANCELLED);
    CHECK_EQ_INT(finish(running, "{\"result\":{}}", NULL, 0), ACP_ERROR_INTERNAL_ERROR);
    CHECK_RC(acp_mcp_operation_notification(running, "notifications/progress", NULL, &notification), ACP_OK);
    CHECK(notification == NULL);
    acp_mcp_operation_free(running);

    CHECK_RC(acp_mcp_provider_register(p, "two", "two", 1, &id, NULL), ACP_OK);
    acp_string_free(id);
    acp_mcp_operation *operation = start(p, "two", "r1", &code);
    CHECK_EQ_INT(finish(operation, "{\"nope\":1}", NULL, 0), ACP_ERROR_MCP_BACKEND_FAILED);
    acp_mcp_operation_free(operation);
    operation = start(p, "two", "r2", &code);
    CHECK_EQ_INT(finish(operation, NULL, "it broke", ACP_ERROR_AUTH_REQUIRED), ACP_ERROR_MCP_BACKEND_FAILED);
    acp_mcp_operation_free(operation);
    operation = start(p, "two", "r3", &code);
    acp_mcp_operation_cancel(operation);
    CHECK(acp_mcp_operation_is_cancelled(operation));
    CHECK_EQ_INT(finish(operation, NULL, "cancelled", 0), ACP_ERROR_REQUEST_CANCELLED);
    acp_mcp_operation_free(operation);
    /* Freed unfinished: its slot is free for the next (the limit is 1). */
    acp_mcp_operation_free(start(p, "two", "r4", &code));
    operation = start(p, "two", "r5", &code);
    CHECK(operation != NULL);
    CHECK_EQ_INT(finish(operation, "{\"result\":{\"tools\":[]}}", NULL, 0), 0);
    acp_mcp_operation_free(operation);
    acp_mcp_provider_free(p);
}

static void test_the_caller_rules(void) {
    harness_section("the caller's rules");
    char *out = NULL;
    CHECK_RC(acp_mcp_with_request_meta("{\"name\":\"add\"}", "{}", NULL, &out), ACP_OK);
    CHECK_CONTAINS(out, "\"name\":\"add\"");
    CHECK_CONTAINS(out, "2026-07-28");
    acp_string_free(out);
    CHECK_RC(acp_mcp_outcome_of_response("{\"result\":{\"x\":1},\"other\":2}", &out), ACP_OK);
    CHECK_STR_EQ(out, "{\"result\":{\"x\":1}}");
    acp_string_free(out);
    CHECK_RC(acp_mcp_outcome_of_response("{\"other\":2}", &out), ACP_ERR_REQUEST_FAILED);
    CHECK_EQ_INT(json_int(out, "code", 0), ACP_ERROR_MCP_BACKEND_FAILED);
    acp_string_free(out);
    char *id = acp_mcp_generate_id("mcp-request");
    CHECK(id != NULL && strncmp(id, "mcp-request:", 12) == 0);
    acp_string_free(id);
    CHECK(acp_mcp_generate_id(NULL) == NULL);
    CHECK(acp_mcp_server_is_acp("{\"type\":\"acp\",\"name\":\"tools\",\"serverId\":\"t1\"}"));
    CHECK(!acp_mcp_server_is_acp("{\"type\":\"acp\",\"name\":\"tools\"}"));
    CHECK(!acp_mcp_server_is_acp("{\"name\":\"x\",\"command\":\"x\",\"args\":[],\"env\":[]}"));
    CHECK(!acp_mcp_server_is_acp(NULL));
}

int main(void) {
    harness_name = "test_mcp";
    test_the_provider_rules();
    test_the_caller_rules();
    test_the_official_typescript_agent_calls_the_c_servers();
    acp_shutdown();
    return harness_finish();
}
