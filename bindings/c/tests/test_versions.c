/*
 * test_versions.c: acp_options.protocol_versions and
 * acp_connection_protocol_version, ACP v1 and the version 2 draft on one
 * connection, against a raw peer over a socketpair:
 *   - an agent speaking both, under a v2 client: `initialize` selects v2
 *     (the handler already sees 2), v1's session/load is then unknown
 *     (-32601, C never sees it), and the agent may not call the client's
 *     file system (refused locally);
 *   - the same agent under a v1 client: v1;
 *   - a v2-only agent refuses a v1 client with -32022 (data: requested,
 *     supported), and the connection goes on;
 *   - a client asking for v2 follows the agent's answer;
 *   - an options struct from before the field (the previous size) means
 *     v1; a value that is not an acp_protocol_versions is refused;
 *   - the official TypeScript SDK's v2 client (interop/ts/v2-client.mjs)
 *     drives this program as a v2-only agent on its stdio (--v2-agent):
 *     initialize, a session, a prompt acknowledged with a messageId and the
 *     turn told in state updates after the answer.
 */
#include "harness.h"

#include <stddef.h>
#include <sys/wait.h>

#define V2_INITIALIZE "{\"protocolVersion\":2,\"info\":{\"name\":\"c\",\"version\":\"1\"},\"capabilities\":{}}"
#define READ_PARAMS "{\"sessionId\":\"s\",\"path\":\"/a\"}"

typedef struct {
    latch requests;
    _Atomic int version_in_initialize;
} agent_state;

static void agent_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                          acp_responder *responder) {
    (void)params;
    agent_state *state = user_data;
    if (strcmp(method, ACP_METHOD_INITIALIZE) == 0) {
        int version = acp_connection_protocol_version(conn);
        state->version_in_initialize = version;
        CHECK_RC(acp_responder_ok(responder, version == 2 ? "{\"protocolVersion\":2,\"info\":{\"name\":\"a\",\"version\":\"1\"}}"
                                                          : "{\"protocolVersion\":1}"),
                 ACP_OK);
    } else {
        CHECK_RC(acp_responder_ok(responder, "{}"), ACP_OK);
    }
    latch_add(&state->requests, 1);
}

static acp_connection *agent_with(peer *p, uint32_t versions, agent_state *state) {
    memset(state, 0, sizeof *state);
    latch fresh = LATCH_INIT;
    state->requests = fresh;
    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_AGENT, .protocol_versions = versions};
    acp_handlers handlers = {.struct_size = sizeof(acp_handlers), .user_data = state, .on_request = agent_request};
    acp_connection *conn = NULL;
    CHECK_RC(peer_connect_with(p, &options, &handlers, &conn), ACP_OK);
    return conn;
}

static void finish(acp_connection *conn, peer *p) {
    CHECK_RC(acp_connection_close(conn), ACP_OK);
    CHECK_RC(acp_connection_wait_closed(conn, slow(5000)), ACP_OK);
    acp_connection_free(conn);
    peer_close(p);
}

/* The peer's next line, which must contain `needle`. */
static void expect_line(peer *p, const char *needle) {
    char *line = peer_read_line(p, slow(5000));
    CHECK_CONTAINS(line, needle);
    free(line);
}

static void test_both_under_a_v2_client(void) {
    harness_section("an agent speaking both, under a v2 client: v2");
    peer p;
    static agent_state state;
    acp_connection *agent = agent_with(&p, ACP_PROTOCOL_VERSIONS_V1_AND_V2, &state);
    CHECK_EQ_INT(acp_connection_protocol_version(agent), 1);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":" V2_INITIALIZE "}");
    expect_line(&p, "\"protocolVersion\":2");
    CHECK_EQ_INT(state.version_in_initialize, 2);
    CHECK_EQ_INT(acp_connection_protocol_version(agent), 2);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/load\",\"params\":{\"sessionId\":\"s\",\"cwd\":\"/\",\"mcpServers\":[]}}");
    expect_line(&p, "-32601");
    CHECK_EQ_INT(latch_get(&state.requests), 1);
    int64_t id = -1;
    CHECK_RC(acp_connection_send_request(agent, ACP_METHOD_FS_READ_TEXT_FILE, READ_PARAMS, NULL, NULL, &id),
             ACP_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(acp_last_error_message(), "-32601");
    finish(agent, &p);
}

static void test_both_under_a_v1_client(void) {
    harness_section("the same agent under a v1 client: v1");
    peer p;
    static agent_state state;
    acp_connection *agent = agent_with(&p, ACP_PROTOCOL_VERSIONS_V1_AND_V2, &state);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}");
    expect_line(&p, "\"protocolVersion\":1");
    CHECK_EQ_INT(state.version_in_initialize, 1);
    int64_t id = -1;
    CHECK_RC(acp_connection_send_request(agent, ACP_METHOD_FS_READ_TEXT_FILE, READ_PARAMS, NULL, NULL, &id), ACP_OK);
    expect_line(&p, ACP_METHOD_FS_READ_TEXT_FILE);
    finish(agent, &p);
}

static void test_v2_only_refuses_a_v1_client(void) {
    harness_section("a v2-only agent refuses a v1 client with -32022 and goes on");
    peer p;
    static agent_state state;
    acp_connection *agent = agent_with(&p, ACP_PROTOCOL_VERSIONS_V2, &state);
    CHECK_EQ_INT(acp_connection_protocol_version(agent), 2);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}");
    char *line = peer_read_line(&p, slow(5000));
    CHECK(json_int(line, "code", 0) == ACP_ERROR_UNSUPPORTED_PROTOCOL_VERSION);
    CHECK_CONTAINS(line, "\"data\":{\"requested\":1,\"supported\":[2]}");
    free(line);
    CHECK_EQ_INT(latch_get(&state.requests), 0);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":" V2_INITIALIZE "}");
    expect_line(&p, "\"protocolVersion\":2");
    finish(agent, &p);
}

static void test_a_client_follows_the_answer(void) {
    harness_section("a client asking for v2 follows the agent's answer");
    peer p;
    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_CLIENT,
                           .protocol_versions = ACP_PROTOCOL_VERSIONS_V1_AND_V2};
    acp_handlers handlers = ACP_HANDLERS_INIT;
    acp_connection *client = NULL;
    CHECK_RC(peer_connect_with(&p, &options, &handlers, &client), ACP_OK);
    /* v2's initialize needs `info`: what a v2 client sends is checked as v2's. */
    int64_t id = -1;
    CHECK_RC(acp_connection_send_request(client, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":2}", NULL, NULL, &id),
             ACP_ERR_INVALID_ARGUMENT);
    CHECK_RC(acp_connection_send_request(client, ACP_METHOD_INITIALIZE, V2_INITIALIZE, NULL, NULL, &id), ACP_OK);
    expect_line(&p, "\"protocolVersion\":2");
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"protocolVersion\":1}}", (long long)id);
    long long deadline = now_ms() + slow(5000);
    while (acp_connection_protocol_version(client) != 1 && now_ms() < deadline) usleep(1000);
    CHECK_EQ_INT(acp_connection_protocol_version(client), 1);
    CHECK_RC(acp_connection_send_request(client, ACP_METHOD_SESSION_LOAD,
                                         "{\"sessionId\":\"s\",\"cwd\":\"/\",\"mcpServers\":[]}", NULL, NULL, &id),
             ACP_OK);
    CHECK_EQ_INT(acp_connection_protocol_version(NULL), 0);
    finish(client, &p);
}

static void test_sizes_and_values(void) {
    harness_section("an options struct from before the field means v1; other values are refused");
    peer p;
    acp_options options = {.struct_size = offsetof(acp_options, protocol_versions), .side = ACP_SIDE_AGENT,
                           .protocol_versions = ACP_PROTOCOL_VERSIONS_V2};
    acp_handlers handlers = ACP_HANDLERS_INIT;
    acp_connection *conn = NULL;
    CHECK_RC(peer_connect_with(&p, &options, &handlers, &conn), ACP_OK);
    CHECK_EQ_INT(acp_connection_protocol_version(conn), 1); /* the field is beyond its size: the default */
    finish(conn, &p);
    options.struct_size = sizeof(acp_options);
    options.protocol_versions = 7;
    conn = NULL;
    CHECK_RC(peer_connect_with(&p, &options, &handlers, &conn), ACP_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(acp_last_error_message(), "protocol_versions is 7");
    CHECK(conn == NULL);
    peer_close(&p);
}

/* ---- a v2 agent on this program's stdio, under the official v2 client ---- */

static void v2_agent_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                             acp_responder *responder) {
    (void)user_data;
    if (strcmp(method, ACP_METHOD_INITIALIZE) == 0) {
        acp_responder_ok(responder, "{\"protocolVersion\":2,\"info\":{\"name\":\"c-v2-agent\",\"version\":\"1\"}}");
    } else if (strcmp(method, ACP_METHOD_SESSION_NEW) == 0) {
        acp_responder_ok(responder, "{\"sessionId\":\"s1\"}");
    } else if (strcmp(method, ACP_METHOD_SESSION_PROMPT) == 0) {
        char *text = NULL, *quoted = NULL, update[1024], said[512];
        acp_json_get_string(params, "/prompt/0/text", &text);
        snprintf(said, sizeof said, "echo: %s", text ? text : "");
        acp_json_quote(said, &quoted);
        /* v2 acknowledges the prompt; the turn is told after the answer, which
         * is queued before anything sent after it. */
        acp_responder_ok(responder, "{\"messageId\":\"m1\"}");
        acp_connection_send_notification(conn, ACP_METHOD_SESSION_UPDATE,
                                         "{\"sessionId\":\"s1\",\"update\":{\"sessionUpdate\":\"state_update\","
                                         "\"state\":\"running\"}}");
        snprintf(update, sizeof update,
                 "{\"sessionId\":\"s1\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"messageId\":\"m2\","
                 "\"content\":{\"type\":\"text\",\"text\":%s}}}",
                 quoted);
        acp_connection_send_notification(conn, ACP_METHOD_SESSION_UPDATE, update);
        acp_connection_send_notification(conn, ACP_METHOD_SESSION_UPDATE,
                                         "{\"sessionId\":\"s1\",\"update\":{\"sessionUpdate\":\"state_update\","
                                         "\"state\":\"idle\",\"stopReason\":\"end_turn\"}}");
        acp_string_free(text), acp_string_free(quoted);
    } else {
        acp_responder_error(responder, ACP_ERROR_METHOD_NOT_FOUND, ACP_MESSAGE_METHOD_NOT_FOUND, NULL);
    }
}

static int v2_agent(void) {
    acp_options options = ACP_OPTIONS_INIT;
    options.side = ACP_SIDE_AGENT;
    options.protocol_versions = ACP_PROTOCOL_VERSIONS_V2;
    acp_handlers handlers = ACP_HANDLERS_INIT;
    handlers.on_request = v2_agent_request;
    acp_connection *conn = NULL;
    if (acp_connection_stdio(&options, &handlers, &conn) != ACP_OK) return 1;
    acp_connection_wait_closed(conn, -1);
    acp_connection_free(conn);
    acp_shutdown();
    return 0;
}

static void test_the_official_v2_client_drives_a_c_agent(void) {
    harness_section("the official TypeScript v2 client drives a C v2 agent");
    char command[4096], line[1024], last[1024] = "";
    const char *self = self_exe();
    CHECK(self != NULL);
    if (!self) return;
    snprintf(command, sizeof command, "ACP_INTEROP_TRACE= node '%s/interop/ts/v2-client.mjs' '%s' --v2-agent 2>&1",
             acp_repo(), self);
    FILE *client = popen(command, "r");
    CHECK(client != NULL);
    if (!client) return;
    int said = 0;
    while (fgets(line, sizeof line, client)) {
        fprintf(stderr, "  | %s", line);
        if (strstr(line, "agent said \"echo: Hello\"")) said = 1;
        snprintf(last, sizeof last, "%s", line);
    }
    int status = pclose(client);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(said);
    CHECK_STR_EQ(last, "v2 ok\n");
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--v2-agent") == 0) return v2_agent();
    harness_name = "test_versions";
    test_both_under_a_v2_client();
    test_both_under_a_v1_client();
    test_v2_only_refuses_a_v1_client();
    test_a_client_follows_the_answer();
    test_sizes_and_values();
    test_the_official_v2_client_drives_a_c_agent();
    return harness_finish();
}
