/*
 * test_api.c: argument checking of every export. NULL arguments give
 * ACP_ERR_NULL_ARGUMENT (or the documented value) and a last-error message,
 * free functions accept NULL, bad strings and bad JSON are refused before
 * anything reaches the wire, acp_shutdown reports the close of connections
 * still open, and it can be followed by a new runtime.
 */
#include "harness.h"

#include <fcntl.h>

/* An unknown responder token (never handed out by the library). */
#define BOGUS_RESPONDER ((acp_responder *)(uintptr_t)0x7fffffff0001ULL)

static void test_version_and_last_error(void) {
    harness_section("version, last error");
    const char *version = acp_version();
    CHECK(version != NULL && version[0] >= '0' && version[0] <= '9');
    CHECK(strchr(version, '.') != NULL);
    const char *message = acp_last_error_message();
    CHECK(message != NULL);
}

static void test_null_arguments(void) {
    harness_section("NULL arguments");
    acp_connection *c = (acp_connection *)(uintptr_t)1; /* must be reset */

    /* Constructors: NULL out, NULL argv. */
    CHECK_RC(acp_connection_stdio(NULL, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_spawn(NULL, NULL, NULL, NULL, NULL, &c), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK(c == NULL); /* *out is cleared on failure */
    const char *argv[] = {"true", NULL};
    CHECK_RC(acp_connection_spawn(argv, NULL, NULL, NULL, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    int fds[2];
    CHECK(pipe(fds) == 0);
    CHECK_RC(acp_connection_fds(fds[0], fds[1], NULL, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    /* With out NULL the descriptors were not taken over: still ours. */
    CHECK(fcntl(fds[0], F_GETFD) != -1 && fcntl(fds[1], F_GETFD) != -1);
    close(fds[0]);
    close(fds[1]);
    CHECK_RC(acp_connection_fds(-1, 1, NULL, NULL, &c), ACP_ERR_INVALID_ARGUMENT);
    CHECK_LAST_ERROR();

    /* Every function taking a connection, with NULL. */
    int64_t id = -1;
    char *json = (char *)"untouched";
    acp_event *event = NULL;
    CHECK_RC(acp_connection_send_request(NULL, "m", NULL, NULL, NULL, &id), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_request(NULL, "m", NULL, 10, &json), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_send_notification(NULL, "m", NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_cancel_request(NULL, 1), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_next_event(NULL, 0, &event), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_close(NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_wait_closed(NULL, 0), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK(acp_connection_is_closed(NULL) == true);
    CHECK(acp_connection_close_reason(NULL) == NULL);

    /* Responders. */
    CHECK_RC(acp_responder_ok(NULL, "{}"), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_responder_error(NULL, -32000, "x", NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_responder_error(BOGUS_RESPONDER, -32000, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK(acp_responder_is_cancelled(NULL) == true);
    /* Unknown responders are a result code, not a crash. */
    CHECK_RC(acp_responder_ok(BOGUS_RESPONDER, "1"), ACP_ERR_ALREADY_ANSWERED);
    CHECK_LAST_ERROR();
    CHECK(acp_responder_is_cancelled(BOGUS_RESPONDER) == true);

    /* Free functions accept NULL. */
    acp_connection_free(NULL);
    acp_event_free(NULL);
    acp_string_free(NULL);
    CHECK(1);
}

/* NULL pointers inside a real connection's calls; bad strings and JSON. */
static void test_arguments_on_a_connection(void) {
    harness_section("arguments on a live connection");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, NULL, &c), ACP_OK);
    CHECK(c != NULL);

    char *json = NULL;
    acp_event *event = (acp_event *)(uintptr_t)1;
    CHECK_RC(acp_connection_send_request(c, NULL, "{}", NULL, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_request(c, "m", "{}", 10, NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_request(c, NULL, "{}", 10, &json), ACP_ERR_NULL_ARGUMENT);
    CHECK(json == NULL);
    CHECK_RC(acp_connection_send_notification(c, NULL, "{}"), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_next_event(c, 0, NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    /* An empty queue times out, with *out cleared. */
    CHECK_RC(acp_connection_next_event(c, 0, &event), ACP_ERR_TIMEOUT);
    CHECK(event == NULL);
    CHECK_LAST_ERROR();

    /* Invalid UTF-8 in the method or the params. */
    CHECK_RC(acp_connection_send_notification(c, "bad\xff", NULL), ACP_ERR_INVALID_UTF8);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_send_notification(c, "m", "{\"a\":\"\xff\"}"), ACP_ERR_INVALID_UTF8);
    /* Bad JSON; params that are not an object or array. */
    CHECK_RC(acp_connection_send_notification(c, "m", "{bad"), ACP_ERR_INVALID_JSON);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_send_request(c, "m", "[1,", NULL, NULL, NULL), ACP_ERR_INVALID_JSON);
    CHECK_RC(acp_connection_send_notification(c, "m", "42"), ACP_ERR_INVALID_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_send_request(c, "m", "\"text\"", NULL, NULL, NULL), ACP_ERR_INVALID_ARGUMENT);
    /* Cancelling a request that was never sent. */
    CHECK_RC(acp_connection_cancel_request(c, 123456), ACP_ERR_INVALID_ARGUMENT);
    CHECK_LAST_ERROR();

    /* None of that reached the wire: the first line is this marker. */
    CHECK_RC(acp_connection_send_notification(c, "marker", "[]"), ACP_OK);
    CHECK_RC(acp_connection_send_notification(c, "no/params", NULL), ACP_OK);
    CHECK_RC(acp_connection_send_notification(c, "empty/params", ""), ACP_OK);
    char *line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"method\":\"marker\",\"params\":[]}");
    free(line);
    line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"method\":\"no/params\"}");
    free(line);
    line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"method\":\"empty/params\"}");
    free(line);

    /* After close: sends fail with ACP_ERR_CLOSED; the reason is set. */
    CHECK(acp_connection_close_reason(c) == NULL);
    CHECK(!acp_connection_is_closed(c));
    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK_RC(acp_connection_close(c), ACP_OK); /* twice is harmless */
    CHECK_RC(acp_connection_wait_closed(c, slow(5000)), ACP_OK);
    CHECK(acp_connection_is_closed(c));
    CHECK_RC(acp_connection_send_notification(c, "late", NULL), ACP_ERR_CLOSED);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_send_request(c, "late", NULL, NULL, NULL, NULL), ACP_ERR_CLOSED);
    CHECK_RC(acp_connection_request(c, "late", NULL, 100, &json), ACP_ERR_CLOSED);
    CHECK(json == NULL);
    char *reason = acp_connection_close_reason(c);
    CHECK(reason != NULL);
    fprintf(stderr, "  close reason: %s\n", reason ? reason : "(null)");
    acp_string_free(reason);
    CHECK(peer_sees_eof(&p, slow(2000)));
    /* The event queue ends with CLOSED; after it, ACP_ERR_CLOSED at once. */
    CHECK_RC(acp_connection_next_event(c, slow(2000), &event), ACP_OK);
    CHECK(event && event->kind == ACP_EVENT_CLOSED && event->reason != NULL);
    acp_event_free(event);
    CHECK_RC(acp_connection_next_event(c, -1, &event), ACP_ERR_CLOSED);
    CHECK(event == NULL);
    acp_connection_free(c);
    peer_close(&p);
}

/* acp_shutdown under open connections: a callback connection's on_close
 * runs (on its dispatch thread) and a thread waiting in next_event gets
 * ACP_EVENT_CLOSED, both with the reason; neither waited forever before. */
static latch shutdown_closed = LATCH_INIT;
static char shutdown_reason[128];

static void on_close_at_shutdown(void *user_data, const acp_connection *connection, const char *reason) {
    (void)user_data;
    (void)connection;
    snprintf(shutdown_reason, sizeof shutdown_reason, "%s", reason ? reason : "");
    latch_add(&shutdown_closed, 1);
}

typedef struct {
    acp_connection *c;
    acp_result rc;
    int kind;
    char reason[128];
    latch started, done;
} event_waiter;

static void *wait_for_an_event(void *arg) {
    event_waiter *w = arg;
    acp_event *event = NULL;
    latch_add(&w->started, 1);
    w->rc = acp_connection_next_event(w->c, -1, &event);
    w->kind = event ? (int)event->kind : -1;
    if (event && event->reason)
        snprintf(w->reason, sizeof w->reason, "%s", event->reason);
    acp_event_free(event);
    latch_add(&w->done, 1);
    return NULL;
}

static void test_shutdown_reports_the_close(void) {
    harness_section("acp_shutdown: on_close runs, a waiting thread gets CLOSED");
    peer with_callbacks, with_events;
    acp_handlers handlers = ACP_HANDLERS_INIT;
    handlers.on_close = on_close_at_shutdown;
    acp_connection *callbacks = NULL, *events = NULL;
    CHECK_RC(peer_connect(&with_callbacks, ACP_SIDE_RAW, &handlers, &callbacks), ACP_OK);
    CHECK_RC(peer_connect(&with_events, ACP_SIDE_RAW, NULL, &events), ACP_OK);
    static event_waiter waiter = {.started = LATCH_INIT, .done = LATCH_INIT};
    waiter.c = events;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, wait_for_an_event, &waiter) == 0);
    /* Let it reach its wait (a thread calling after the shutdown is refused
     * at once with ACP_ERR_CLOSED instead: the runtime is gone). */
    CHECK(latch_wait(&waiter.started, 1, slow(5000)));
    sleep_ms(slow(100));
    acp_shutdown();
    CHECK(latch_wait(&shutdown_closed, 1, slow(5000)));
    CHECK(strstr(shutdown_reason, "the engine's runtime was shut down") != NULL);
    CHECK(latch_wait(&waiter.done, 1, slow(5000)));
    if (latch_get(&waiter.done) == 1) {
        pthread_join(thread, NULL);
        CHECK_RC(waiter.rc, ACP_OK);
        CHECK_EQ_INT(waiter.kind, ACP_EVENT_CLOSED);
        CHECK(strstr(waiter.reason, "the engine's runtime was shut down") != NULL);
    }
    acp_connection_free(callbacks);
    acp_connection_free(events);
    peer_close(&with_callbacks);
    peer_close(&with_events);
}

/* The runtime stops with acp_shutdown and starts again on the next call. */
static void test_shutdown_and_restart(void) {
    harness_section("shutdown, then a new runtime");
    acp_shutdown();
    acp_shutdown(); /* twice is harmless */
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, NULL, &c), ACP_OK);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
    acp_event *event = NULL;
    CHECK_RC(acp_connection_next_event(c, slow(5000), &event), ACP_OK);
    CHECK(event && event->kind == ACP_EVENT_REQUEST);
    if (event && event->kind == ACP_EVENT_REQUEST) {
        CHECK_STR_EQ(event->method, "ping");
        CHECK(event->json == NULL); /* no params */
        CHECK_RC(acp_responder_ok(event->responder, NULL), ACP_OK); /* NULL: null */
    }
    acp_event_free(event);
    char *line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":null}");
    free(line);
    acp_connection_free(c); /* closes it too */
    CHECK(peer_sees_eof(&p, slow(2000)));
    peer_close(&p);
}

int main(void) {
    harness_name = "test_api";
    test_version_and_last_error();
    test_null_arguments();
    test_arguments_on_a_connection();
    test_shutdown_reports_the_close();
    test_shutdown_and_restart();
    acp_shutdown();
    return harness_finish();
}
