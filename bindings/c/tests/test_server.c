/* acp_server: agents served to remote clients over WebSocket and Streamable
 * HTTP. Each connection gets its own state from the accept callback (freed
 * in on_close); requests go both ways (the agent calls its client back);
 * the token is checked before any agent starts; stopping the server fails
 * what is pending; draining lets it finish; a client with a reconnect
 * timeout keeps trying until the server is there; acp_server_listen's
 * newer settings; argument checks. */
#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* One agent's state: its number, and the requests it answered. */
typedef struct {
    int number;
    int answered;
} agent_state;

static latch accepted = LATCH_INIT;
static acp_responder *held;
static latch closed = LATCH_INIT;
static atomic_int transports_seen[3];

static void *on_accept(void *user_data, const char *peer_address, acp_transport transport) {
    CHECK(user_data == (void *)&accepted);
    CHECK(peer_address && strncmp(peer_address, "127.0.0.1:", 10) == 0);
    atomic_fetch_add(&transports_seen[transport], 1);
    agent_state *state = calloc(1, sizeof *state);
    state->number = latch_get(&accepted) + 1;
    latch_add(&accepted, 1);
    return state;
}

/* initialize answers the agent's number; "ask" calls the client's "question"
 * and answers what it said; "hang" is never answered; others echo. */
static void agent_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                          acp_responder *responder) {
    agent_state *state = user_data;
    state->answered++;
    char answer[256];
    if (strcmp(method, ACP_METHOD_INITIALIZE) == 0) {
        snprintf(answer, sizeof answer, "{\"protocolVersion\":1,\"agent\":%d}", state->number);
        CHECK_RC(acp_responder_ok(responder, answer), ACP_OK);
    } else if (strcmp(method, "ask") == 0) {
        char *said = NULL;
        CHECK_RC(acp_connection_request(conn, "question", "{\"sessionId\":\"s1\"}", slow(10000), &said), ACP_OK);
        CHECK_RC(acp_responder_ok(responder, said), ACP_OK);
        acp_string_free(said);
    } else if (strcmp(method, "hang") == 0) {
        held = responder; /* answered after the server stopped */
    } else {
        CHECK_RC(acp_responder_ok(responder, params ? params : "{}"), ACP_OK);
    }
}

static void agent_closed(void *user_data, const acp_connection *conn, const char *reason) {
    (void)conn, (void)reason;
    free(user_data);
    latch_add(&closed, 1);
}

static void client_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                           acp_responder *responder) {
    (void)user_data, (void)conn, (void)params;
    CHECK_STR_EQ(method, "question");
    CHECK_RC(acp_responder_ok(responder, "{\"answer\":42}"), ACP_OK);
}

static acp_server *start_server(const char *token) {
    acp_serve_options serve = {.token = token};
    acp_handlers handlers = {.struct_size = sizeof(acp_handlers), .on_request = agent_request, .on_close = agent_closed};
    acp_server *server = NULL;
    CHECK_RC(acp_server_start("127.0.0.1:0", &serve, NULL, &handlers, on_accept, &accepted, &server), ACP_OK);
    return server;
}

static acp_connection *client(const char *url, const char *token) {
    acp_remote_options remote = {.token = token};
    acp_handlers handlers = {.struct_size = sizeof(acp_handlers), .on_request = client_request};
    acp_connection *conn = NULL;
    CHECK_RC(acp_connection_connect_url(url, &remote, NULL, &handlers, &conn), ACP_OK);
    return conn;
}

/* `conn`'s initialize fails, and the connection closes with a reason
 * containing `expected`; `conn` is freed. */
static void check_initialize_closes(acp_connection *conn, const char *expected) {
    char *result = NULL;
    CHECK(acp_connection_request(conn, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1}", slow(10000), &result) !=
          ACP_OK);
    acp_string_free(result);
    CHECK_RC(acp_connection_wait_closed(conn, slow(10000)), ACP_OK);
    char *reason = acp_connection_close_reason(conn);
    CHECK_CONTAINS(reason, expected);
    acp_string_free(reason);
    acp_connection_free(conn);
}

/* A client of `url` whose initialize is refused: the connection closes with
 * a reason naming `status`. */
static void check_refused(const char *url, const char *token, const char *status) {
    check_initialize_closes(client(url, token), status);
}

static void test_calls_both_ways_over_both_transports(void) {
    int before = latch_get(&accepted);
    acp_server *server = start_server(NULL);
    char *urls[2] = {acp_server_websocket_url(server), acp_server_http_url(server)};
    CHECK(strncmp(urls[0], "ws://127.0.0.1:", 15) == 0);
    CHECK(strncmp(urls[1], "http://127.0.0.1:", 17) == 0);
    for (int i = 0; i < 2; i++) {
        acp_connection *conn = client(urls[i], NULL);
        char *result = NULL;
        CHECK_RC(acp_connection_request(conn, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1}", slow(10000), &result),
                 ACP_OK);
        CHECK(json_int(result, "agent", -1) == before + i + 1); /* its own agent */
        acp_string_free(result);
        for (int n = 0; n < 20; n++) {
            CHECK_RC(acp_connection_request(conn, "echo", "{\"n\":7}", slow(10000), &result), ACP_OK);
            CHECK_STR_EQ(result, "{\"n\":7}");
            acp_string_free(result);
        }
        CHECK_RC(acp_connection_request(conn, "ask", "{\"sessionId\":\"s1\"}", slow(10000), &result), ACP_OK);
        CHECK_STR_EQ(result, "{\"answer\":42}");
        acp_string_free(result);
        acp_connection_close(conn);
        CHECK_RC(acp_connection_wait_closed(conn, slow(10000)), ACP_OK);
        acp_connection_free(conn);
        acp_string_free(urls[i]);
    }
    CHECK(atomic_load(&transports_seen[ACP_TRANSPORT_WEBSOCKET]) >= 1);
    CHECK(atomic_load(&transports_seen[ACP_TRANSPORT_HTTP]) >= 1);
    CHECK(latch_wait(&closed, before + 2, slow(10000)));
    acp_server_free(server);
}

static void test_the_token_is_checked_before_any_agent_starts(void) {
    int before = latch_get(&accepted);
    acp_server *server = start_server("s3cret");
    char *urls[2] = {acp_server_websocket_url(server), acp_server_http_url(server)};
    for (int i = 0; i < 2; i++) check_refused(urls[i], "guess", "401");
    CHECK_EQ_INT(latch_get(&accepted), before);
    acp_connection *conn = client(urls[1], "s3cret");
    char *result = NULL;
    CHECK_RC(acp_connection_request(conn, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1}", slow(10000), &result),
             ACP_OK);
    acp_string_free(result);
    CHECK_EQ_INT(latch_get(&accepted), before + 1);
    acp_connection_free(conn);
    acp_string_free(urls[0]);
    acp_string_free(urls[1]);
    acp_server_free(server);
}

static void test_stopping_fails_what_is_pending(void) {
    int closed_before = latch_get(&closed);
    acp_server *server = start_server(NULL);
    char *url = acp_server_websocket_url(server);
    acp_connection *conn = client(url, NULL);
    char *result = NULL;
    CHECK_RC(acp_connection_request(conn, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1}", slow(10000), &result),
             ACP_OK);
    acp_string_free(result);
    CHECK_EQ_INT((int)acp_server_connections(server), 1);
    int64_t id = 0;
    CHECK_RC(acp_connection_start_request(conn, "hang", "{}", &id), ACP_OK);
    sleep_ms(100);
    CHECK_RC(acp_server_stop(server), ACP_OK);
    CHECK(latch_get(&closed) == closed_before + 1); /* the agent's connection ended, on_close ran */
    CHECK_RC(acp_connection_await(conn, id, slow(5000), &result), ACP_ERR_CLOSED);
    acp_string_free(result);
    CHECK(held != NULL);
    CHECK(acp_responder_ok(held, "{}") != ACP_OK); /* too late: the connection is gone */
    acp_connection_free(conn);
    acp_string_free(url);
    acp_server_free(server);
}

static void *drain_server(void *server) {
    CHECK_RC(acp_server_drain(server, 10000), ACP_OK);
    return NULL;
}

static void test_draining_lets_a_request_finish(void) {
    held = NULL;
    acp_server *server = start_server(NULL);
    char *url = acp_server_http_url(server);
    acp_connection *conn = client(url, NULL);
    char *result = NULL;
    CHECK_RC(acp_connection_request(conn, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1}", slow(10000), &result),
             ACP_OK);
    acp_string_free(result);
    int64_t id = 0;
    CHECK_RC(acp_connection_start_request(conn, "hang", "{}", &id), ACP_OK);
    for (int waited = 0; held == NULL && waited < slow(5000); waited += 10) sleep_ms(10);
    CHECK(held != NULL);
    pthread_t draining;
    CHECK(pthread_create(&draining, NULL, drain_server, server) == 0);
    sleep_ms(100);
    /* A newcomer is refused while the server drains. */
    check_refused(url, NULL, "503");
    /* The request in flight is answered, then the drain ends the connection. */
    CHECK_RC(acp_responder_ok(held, "{\"finished\":true}"), ACP_OK);
    CHECK_RC(acp_connection_await(conn, id, slow(10000), &result), ACP_OK);
    CHECK_STR_EQ(result, "{\"finished\":true}");
    acp_string_free(result);
    CHECK(pthread_join(draining, NULL) == 0);
    CHECK_RC(acp_connection_wait_closed(conn, slow(10000)), ACP_OK);
    CHECK_EQ_INT((int)acp_server_connections(server), 0);
    acp_connection_free(conn);
    acp_string_free(url);
    acp_server_free(server);
}

/* A client started before its server: with reconnect_timeout_ms it keeps
 * trying until the server listens; without, it fails at once. */
static void test_a_reconnecting_client_waits_for_its_server(void) {
    acp_server *gone = start_server(NULL);
    char *url = acp_server_http_url(gone);
    const char *address = url + strlen("http://");
    char listen_on[64];
    snprintf(listen_on, sizeof listen_on, "%.*s", (int)strcspn(address, "/"), address);
    acp_server_free(gone); /* nothing listens there now */

    acp_connection *impatient = client(url, NULL);
    char *result = NULL;
    CHECK(acp_connection_request(impatient, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1}", slow(10000), &result) !=
          ACP_OK);
    acp_string_free(result);
    acp_connection_free(impatient);

    acp_options options = ACP_OPTIONS_INIT;
    options.reconnect_timeout_ms = (uint32_t)slow(10000);
    acp_handlers handlers = {.struct_size = sizeof(acp_handlers), .on_request = client_request};
    acp_connection *patient = NULL;
    CHECK_RC(acp_connection_connect_url(url, NULL, &options, &handlers, &patient), ACP_OK);
    int64_t id = 0;
    CHECK_RC(acp_connection_start_request(patient, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1}", &id), ACP_OK);
    sleep_ms(300);
    acp_serve_options serve = {0};
    acp_handlers agent = {.struct_size = sizeof(acp_handlers), .on_request = agent_request, .on_close = agent_closed};
    acp_server *server = NULL;
    CHECK_RC(acp_server_start(listen_on, &serve, NULL, &agent, on_accept, &accepted, &server), ACP_OK);
    CHECK_RC(acp_connection_await(patient, id, slow(10000), &result), ACP_OK);
    CHECK(json_int(result, "agent", -1) > 0);
    acp_string_free(result);
    acp_connection_free(patient);
    acp_string_free(url);
    acp_server_free(server);
}

/* A server that takes the TCP connection and then says nothing (here a
 * listener that never accepts): with connect_timeout_ms the connection
 * closes with the reason in time, failing the request sent meanwhile. */
static void test_a_server_that_never_answers_fails_the_connection_in_time(void) {
    int silent = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(silent, (struct sockaddr *)&address, sizeof address) == 0);
    CHECK(listen(silent, 8) == 0);
    socklen_t length = sizeof address;
    CHECK(getsockname(silent, (struct sockaddr *)&address, &length) == 0);
    char url[64];
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/acp", ntohs(address.sin_port));

    acp_options options = ACP_OPTIONS_INIT;
    options.connect_timeout_ms = 300;
    acp_handlers handlers = {.struct_size = sizeof(acp_handlers), .on_request = client_request};
    acp_connection *conn = NULL;
    CHECK_RC(acp_connection_connect_url(url, NULL, &options, &handlers, &conn), ACP_OK);
    check_initialize_closes(conn, "did not take the connection within 300 ms");
    close(silent);
}

/* `GET path` (with `Authorization: Bearer token` unless NULL) at the
 * server whose HTTP URL is `url`, over a socket of our own: its status, the
 * response (head and body) in `response`. */
static int http_get(const char *url, const char *path, const char *token, char *response, size_t size) {
    int port = 0;
    CHECK(sscanf(url, "http://127.0.0.1:%d", &port) == 1);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&address, sizeof address) == 0);
    char request[512];
    int length = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s%sConnection: close\r\n\r\n",
                          path, token ? "Authorization: Bearer " : "", token ? token : "", token ? "\r\n" : "");
    CHECK(write(fd, request, (size_t)length) == length);
    memset(response, 0, size);
    size_t got = 0;
    ssize_t n;
    while (got < size - 1 && (n = read(fd, response + got, size - 1 - got)) > 0) got += (size_t)n;
    close(fd);
    int status = 0;
    CHECK(sscanf(response, "HTTP/1.1 %d", &status) == 1);
    return status;
}

static int http_get_status(const char *url, const char *path, const char *token) {
    char response[1024];
    return http_get(url, path, token, response, sizeof response);
}

/* acp_server_listen takes the settings acp_serve_options has no room for:
 * here the probes' and the metrics' paths (moved, or none); and, like
 * acp_options, it refuses a struct whose struct_size was not set. */
static void test_listen_takes_the_newer_settings(void) {
    acp_server_options settings = ACP_SERVER_OPTIONS_INIT;
    settings.token = "t0ken";
    settings.health_path = "";
    settings.ready_path = "/ready-check";
    settings.metrics_path = "/m";
    settings.keep_alive_interval_ms = 1000;
    acp_handlers handlers = {.struct_size = sizeof(acp_handlers), .on_request = agent_request, .on_close = agent_closed};
    acp_server *server = NULL;
    CHECK_RC(acp_server_listen("127.0.0.1:0", &settings, NULL, &handlers, on_accept, &accepted, &server), ACP_OK);
    char *url = acp_server_http_url(server);
    CHECK_EQ_INT(http_get_status(url, "/healthz", NULL), 404);
    CHECK_EQ_INT(http_get_status(url, "/ready-check", NULL), 200);
    CHECK_EQ_INT(http_get_status(url, "/metrics", "t0ken"), 404);
    CHECK_EQ_INT(http_get_status(url, "/m", NULL), 401);
    CHECK_EQ_INT(http_get_status(url, "/m", "t0ken"), 200);
    acp_connection *conn = client(url, "t0ken");
    char *result = NULL;
    CHECK_RC(acp_connection_request(conn, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1}", slow(10000), &result),
             ACP_OK);
    acp_string_free(result);
    acp_connection_free(conn);
    acp_string_free(url);
    acp_server_free(server);

    /* Refusals as the official Python server's, when asked. */
    settings.refusal_body = ACP_REFUSAL_BODY_JSON;
    CHECK_RC(acp_server_listen("127.0.0.1:0", &settings, NULL, &handlers, NULL, NULL, &server), ACP_OK);
    url = acp_server_http_url(server);
    char response[1024];
    CHECK_EQ_INT(http_get(url, "/m", NULL, response, sizeof response), 401);
    CHECK(strstr(response, "\r\ncontent-type: application/json\r\n") != NULL);
    const char *body = strstr(response, "\r\n\r\n");
    CHECK(body != NULL);
    CHECK_STR_EQ(body + 4, "{\"error\":\"a valid bearer token is required\"}");
    acp_string_free(url);
    acp_server_free(server);
    settings.refusal_body = 7;
    CHECK_RC(acp_server_listen("127.0.0.1:0", &settings, NULL, &handlers, NULL, NULL, &server), ACP_ERR_INVALID_ARGUMENT);

    acp_server_options unset = {0};
    server = (acp_server *)&unset; /* written NULL on failure */
    CHECK_RC(acp_server_listen("127.0.0.1:0", &unset, NULL, &handlers, NULL, NULL, &server), ACP_ERR_INVALID_ARGUMENT);
    CHECK(server == NULL);
    CHECK_RC(acp_server_listen("127.0.0.1:0", NULL, NULL, &handlers, NULL, NULL, &server), ACP_OK);
    acp_server_free(server);
}

static void test_arguments(void) {
    acp_handlers handlers = {.struct_size = sizeof(acp_handlers), .on_request = agent_request};
    acp_server *server = NULL;
    CHECK_RC(acp_server_start(NULL, NULL, NULL, &handlers, NULL, NULL, &server), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_server_start("127.0.0.1:0", NULL, NULL, NULL, NULL, NULL, &server), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_server_start("127.0.0.1:0", NULL, NULL, &handlers, NULL, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
    acp_serve_options half_tls = {.tls_cert = "cert.pem"};
    CHECK_RC(acp_server_start("127.0.0.1:0", &half_tls, NULL, &handlers, NULL, NULL, &server),
             ACP_ERR_INVALID_ARGUMENT);
    CHECK_RC(acp_server_start("not an address", NULL, NULL, &handlers, NULL, NULL, &server), ACP_ERR_IO);
    CHECK(server == NULL);
    CHECK(acp_server_websocket_url(NULL) == NULL);
    CHECK(acp_server_http_url(NULL) == NULL);
    CHECK_EQ_INT((int)acp_server_connections(NULL), 0);
    CHECK_RC(acp_server_stop(NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_server_drain(NULL, 0), ACP_ERR_NULL_ARGUMENT);
    acp_server_free(NULL);
}

int main(void) {
    harness_name = "test_server";
    test_calls_both_ways_over_both_transports();
    test_the_token_is_checked_before_any_agent_starts();
    test_stopping_fails_what_is_pending();
    test_draining_lets_a_request_finish();
    test_a_reconnecting_client_waits_for_its_server();
    test_a_server_that_never_answers_fails_the_connection_in_time();
    test_listen_takes_the_newer_settings();
    test_arguments();
    return harness_finish();
}
