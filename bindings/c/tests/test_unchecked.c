/*
 * test_unchecked.c: acp_options.unchecked_methods, methods outside the ACP
 * schema sent and received as they are. A client-side and an agent-side
 * connection over two pipes (and a server's connections):
 *   - listed on both sides: the client's `session/set_model` (the legacy
 *     model selection, not in the schema) reaches the agent's on_request
 *     as sent, and the agent's answer {} comes back;
 *   - not listed on the client: refused before anything is sent
 *     (ACP_ERR_INVALID_ARGUMENT, "Method not found (-32601)"), the request
 *     and the notification alike;
 *   - not listed on the agent: its engine answers -32601, C never sees it;
 *   - the names are copied when the connection is created (the array is
 *     freed right after); a name that is not UTF-8 is ACP_ERR_INVALID_UTF8,
 *     with no connection and both descriptors closed;
 *   - acp_server_start copies them too: a connection it accepts after the
 *     array was freed takes the method.
 */
#include "harness.h"

#include <fcntl.h>
#include <signal.h>

#define SET_MODEL "session/set_model"
#define MODEL_PARAMS "{\"sessionId\":\"s1\",\"modelId\":\"fast\"}"

/* ---- the agent: answers what it is sent, and records it ------------------ */

typedef struct {
    latch requests;
    pthread_mutex_t mutex;
    char last_method[64];
    char last_params[256];
} agent_log;

static void agent_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                          acp_responder *responder) {
    (void)conn;
    agent_log *log = user_data;
    pthread_mutex_lock(&log->mutex);
    snprintf(log->last_method, sizeof log->last_method, "%s", method);
    snprintf(log->last_params, sizeof log->last_params, "%s", params ? params : "");
    pthread_mutex_unlock(&log->mutex);
    latch_add(&log->requests, 1); /* before the answer: counted once the client has it */
    if (strcmp(method, ACP_METHOD_INITIALIZE) == 0)
        CHECK_RC(acp_responder_ok(responder, "{\"protocolVersion\":1}"), ACP_OK);
    else
        CHECK_RC(acp_responder_ok(responder, "{}"), ACP_OK);
}

static void agent_log_init(agent_log *log) {
    memset(log, 0, sizeof *log);
    latch fresh = LATCH_INIT;
    log->requests = fresh;
    pthread_mutex_init(&log->mutex, NULL);
}

/* A copy of the agent's last request (method and params). */
static void agent_last(agent_log *log, char *method, size_t method_size, char *params, size_t params_size) {
    pthread_mutex_lock(&log->mutex);
    snprintf(method, method_size, "%s", log->last_method);
    snprintf(params, params_size, "%s", log->last_params);
    pthread_mutex_unlock(&log->mutex);
}

/* A heap copy of {"session/set_model", NULL}, freed by the caller right
 * after the connection was made: the library must have copied it. */
static char **set_model_list(void) {
    char **list = calloc(2, sizeof *list);
    list[0] = strdup(SET_MODEL);
    return list;
}

static void free_list(char **list) {
    for (char **name = list; *name; name++) {
        memset(*name, 'x', strlen(*name)); /* a stale pointer would read this */
        free(*name);
    }
    free(list);
}

/* A client and an agent over two pipes, each listing {"session/set_model"}
 * or not. */
typedef struct {
    acp_connection *client, *agent;
} pair;

static pair connect_pair(agent_log *log, int client_lists, int agent_lists) {
    int to_agent[2], to_client[2];
    CHECK(pipe2(to_agent, O_CLOEXEC) == 0);
    CHECK(pipe2(to_client, O_CLOEXEC) == 0);
    pair p = {NULL, NULL};

    char **agent_list = set_model_list();
    acp_options agent_options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_AGENT};
    if (agent_lists) agent_options.unchecked_methods = (const char *const *)agent_list;
    acp_handlers agent_handlers = {.struct_size = sizeof(acp_handlers), .user_data = log, .on_request = agent_request};
    CHECK_RC(acp_connection_fds(to_agent[0], to_client[1], &agent_options, &agent_handlers, &p.agent), ACP_OK);
    free_list(agent_list);

    char **client_list = set_model_list();
    acp_options client_options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_CLIENT};
    if (client_lists) client_options.unchecked_methods = (const char *const *)client_list;
    acp_handlers client_handlers = ACP_HANDLERS_INIT; /* the agent sends nothing here */
    CHECK_RC(acp_connection_fds(to_client[0], to_agent[1], &client_options, &client_handlers, &p.client), ACP_OK);
    free_list(client_list);
    return p;
}

static void close_pair(pair *p) {
    CHECK_RC(acp_connection_close(p->client), ACP_OK);
    CHECK_RC(acp_connection_wait_closed(p->client, slow(5000)), ACP_OK);
    CHECK_RC(acp_connection_wait_closed(p->agent, slow(5000)), ACP_OK);
    acp_connection_free(p->client);
    acp_connection_free(p->agent);
}

/* ---- listed on both sides ------------------------------------------------ */

static void test_listed_both_sides(void) {
    harness_section("listed on both sides: session/set_model goes out and is answered");
    static agent_log log;
    agent_log_init(&log);
    pair p = connect_pair(&log, 1, 1);
    char *json = NULL;
    CHECK_RC(acp_connection_request(p.client, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1}", slow(5000), &json),
             ACP_OK);
    acp_string_free(json);
    json = NULL;
    CHECK_RC(acp_connection_request(p.client, SET_MODEL, MODEL_PARAMS, slow(5000), &json), ACP_OK);
    CHECK_STR_EQ(json, "{}");
    acp_string_free(json);
    char method[64], params[256];
    agent_last(&log, method, sizeof method, params, sizeof params);
    CHECK_STR_EQ(method, SET_MODEL);
    CHECK_STR_EQ(params, MODEL_PARAMS); /* as sent */
    /* Unchecked: params no schema type would take go through as well. */
    json = NULL;
    CHECK_RC(acp_connection_request(p.client, SET_MODEL, "[1,\"two\"]", slow(5000), &json), ACP_OK);
    CHECK_STR_EQ(json, "{}");
    acp_string_free(json);
    agent_last(&log, method, sizeof method, params, sizeof params);
    CHECK_STR_EQ(params, "[1,\"two\"]");
    /* The schema's methods are still checked. */
    json = NULL;
    CHECK_RC(acp_connection_request(p.client, ACP_METHOD_SESSION_NEW, "{\"cwd\":5}", slow(5000), &json),
             ACP_ERR_INVALID_ARGUMENT);
    CHECK(json == NULL);
    CHECK_EQ_INT(latch_get(&log.requests), 3);
    close_pair(&p);
}

/* ---- not listed on the client: refused before it is sent ----------------- */

static void test_not_listed_on_the_client(void) {
    harness_section("not listed on the client: refused locally with -32601");
    static agent_log log;
    agent_log_init(&log);
    pair p = connect_pair(&log, 0, 1);
    char *json = NULL;
    CHECK_RC(acp_connection_request(p.client, SET_MODEL, MODEL_PARAMS, slow(5000), &json), ACP_ERR_INVALID_ARGUMENT);
    CHECK(json == NULL);
    CHECK_CONTAINS(acp_last_error_message(), "Method not found (-32601)");
    CHECK_CONTAINS(acp_last_error_message(), SET_MODEL);
    int64_t id = -1;
    CHECK_RC(acp_connection_send_request(p.client, SET_MODEL, MODEL_PARAMS, NULL, NULL, &id), ACP_ERR_INVALID_ARGUMENT);
    CHECK(id == -1);
    CHECK_RC(acp_connection_send_notification(p.client, SET_MODEL, MODEL_PARAMS), ACP_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(acp_last_error_message(), "-32601");
    /* Nothing went out: the next request is the first the agent sees. */
    CHECK_RC(acp_connection_request(p.client, "_test/ping", "{}", slow(5000), &json), ACP_OK);
    acp_string_free(json);
    CHECK_EQ_INT(latch_get(&log.requests), 1);
    char method[64], params[256];
    agent_last(&log, method, sizeof method, params, sizeof params);
    CHECK_STR_EQ(method, "_test/ping");
    close_pair(&p);
}

/* ---- not listed on the agent: its engine answers -32601 ----------------- */

static void test_not_listed_on_the_agent(void) {
    harness_section("not listed on the agent: -32601 from its engine, C never sees it");
    static agent_log log;
    agent_log_init(&log);
    pair p = connect_pair(&log, 1, 0);
    char *json = NULL;
    CHECK_RC(acp_connection_request(p.client, SET_MODEL, MODEL_PARAMS, slow(5000), &json), ACP_ERR_REQUEST_FAILED);
    CHECK(json_int(json, "code", 0) == -32601);
    CHECK_CONTAINS(json, "\"method\":\"" SET_MODEL "\"");
    acp_string_free(json);
    CHECK_EQ_INT(latch_get(&log.requests), 0);
    close_pair(&p);
}

/* ---- a name that is not UTF-8 -------------------------------------------- */

static void test_invalid_utf8(void) {
    harness_section("a name that is not UTF-8: ACP_ERR_INVALID_UTF8, the descriptors closed");
    int in[2], out[2];
    CHECK(pipe2(in, O_CLOEXEC) == 0);
    CHECK(pipe2(out, O_CLOEXEC) == 0);
    const char *names[] = {SET_MODEL, "bad\xff", NULL};
    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_CLIENT, .unchecked_methods = names};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_fds(in[0], out[1], &options, NULL, &c), ACP_ERR_INVALID_UTF8);
    CHECK(c == NULL);
    CHECK_CONTAINS(acp_last_error_message(), "unchecked_methods[1]");
    /* The library closed both of its ends: our write end has no reader, our
     * read end sees EOF. */
    CHECK(write(in[1], "x", 1) == -1 && errno == EPIPE);
    char byte;
    CHECK(read(out[0], &byte, 1) == 0);
    close(in[1]);
    close(out[0]);
    /* An empty list (only the NULL) is no list. */
    const char *none[] = {NULL};
    acp_options empty = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_CLIENT, .unchecked_methods = none};
    CHECK(pipe2(in, O_CLOEXEC) == 0);
    CHECK(pipe2(out, O_CLOEXEC) == 0);
    CHECK_RC(acp_connection_fds(in[0], out[1], &empty, NULL, &c), ACP_OK);
    char *json = NULL;
    CHECK_RC(acp_connection_request(c, SET_MODEL, MODEL_PARAMS, slow(5000), &json), ACP_ERR_INVALID_ARGUMENT);
    acp_connection_free(c);
    close(in[1]);
    close(out[0]);
}

/* ---- a server's connections ---------------------------------------------- */

static void test_server_copies_them(void) {
    harness_section("acp_server_start copies the names for the connections it accepts");
    static agent_log log;
    agent_log_init(&log);
    char **list = set_model_list();
    acp_options agent_options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_AGENT, .unchecked_methods = (const char *const *)list};
    acp_handlers agent_handlers = {.struct_size = sizeof(acp_handlers), .user_data = &log, .on_request = agent_request};
    acp_server *server = NULL;
    CHECK_RC(acp_server_start("127.0.0.1:0", NULL, &agent_options, &agent_handlers, NULL, NULL, &server), ACP_OK);
    free_list(list);
    char *url = acp_server_websocket_url(server);
    list = set_model_list();
    acp_options client_options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_CLIENT, .unchecked_methods = (const char *const *)list};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_connect_url(url, NULL, &client_options, NULL, &c), ACP_OK);
    free_list(list);
    char *json = NULL;
    CHECK_RC(acp_connection_request(c, SET_MODEL, MODEL_PARAMS, slow(10000), &json), ACP_OK);
    CHECK_STR_EQ(json, "{}");
    acp_string_free(json);
    char method[64], params[256];
    agent_last(&log, method, sizeof method, params, sizeof params);
    CHECK_STR_EQ(method, SET_MODEL);
    acp_connection_free(c);
    acp_string_free(url);
    acp_server_free(server);
}

int main(void) {
    harness_name = "test_unchecked";
    signal(SIGPIPE, SIG_IGN); /* the closed-descriptor check writes to a pipe without a reader */
    test_listed_both_sides();
    test_not_listed_on_the_client();
    test_not_listed_on_the_agent();
    test_invalid_utf8();
    test_server_copies_them();
    acp_shutdown();
    return harness_finish();
}
