/*
 * test_events.c: the event-queue mode (handlers = NULL), driven on the
 * test's own thread with acp_connection_next_event and, a batch per call,
 * acp_connection_next_events.
 *   REQUEST (answered through its responder, also after acp_event_free),
 *   NOTIFICATION, RESPONSE (send_request with a NULL callback: result,
 *   error, cancelled, connection closed), CLOSED (last; then timeouts),
 *   next_event timeout -> ACP_ERR_TIMEOUT, ACP_ERR_WRONG_MODE on a callback
 *   connection, unanswered REQUEST events answered -32603 at close, a
 *   thread of ours draining 500 events in order.
 * Events are queued in wire order: requests, notifications and responses
 * interleaved as they arrived.
 */
#include "harness.h"

/* The next event, which must be of `kind` (NULL otherwise, after a failed
 * check). */
static acp_event *expect_event(acp_connection *c, acp_event_kind kind, int line) {
    acp_event *event = NULL;
    int rc = acp_connection_next_event(c, slow(3000), &event);
    atomic_fetch_add(&harness_checks, 1);
    if (rc != ACP_OK || !event || event->kind != kind) {
        harness_fail(__FILE__, line, "expected event kind %d, got rc %s kind %d", (int)kind,
                     acp_result_name(rc), event ? (int)event->kind : -1);
        acp_event_free(event);
        return NULL;
    }
    return event;
}
#define EXPECT_EVENT(c, kind) expect_event((c), (kind), __LINE__)

/* Take `n` events into `out` (NULL-padded on a timeout). */
static void take_events(acp_connection *c, acp_event **out, int n) {
    for (int i = 0; i < n; i++) {
        out[i] = NULL;
        CHECK_RC(acp_connection_next_event(c, slow(3000), &out[i]), ACP_OK);
    }
}

/* Index of the event with this method (or, for RESPONSE, request id). */
static int find_method(acp_event **events, int n, const char *method) {
    for (int i = 0; i < n; i++)
        if (events[i] && events[i]->method && strcmp(events[i]->method, method) == 0) return i;
    return -1;
}

static int find_response(acp_event **events, int n, int64_t id) {
    for (int i = 0; i < n; i++)
        if (events[i] && events[i]->kind == ACP_EVENT_RESPONSE && events[i]->request_id == id) return i;
    return -1;
}

static void test_requests_and_notifications(void) {
    harness_section("REQUEST and NOTIFICATION events");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, NULL, &c), ACP_OK);

    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"note\",\"params\":{\"k\":\"v\"}}");
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ask\",\"params\":{\"q\":[1,2,3]}}");
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"bare\"}");
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"ask/later\"}");

    acp_event *events[4];
    take_events(c, events, 4);
    int note = find_method(events, 4, "note"), ask = find_method(events, 4, "ask");
    int bare = find_method(events, 4, "bare"), later = find_method(events, 4, "ask/later");
    CHECK(note >= 0 && ask >= 0 && bare >= 0 && later >= 0);
    if (note < 0 || ask < 0 || bare < 0 || later < 0) return;
    /* Promised: notifications in order; a request only after the
     * notifications received before it. */
    CHECK(note < bare);
    CHECK(note < ask);
    CHECK(bare < later);
    /* Not promised, but what a single-threaded host would expect. */
    CHECK_THAT(ask < bare, "event queue: a REQUEST is queued after a notification that arrived after it");

    CHECK(events[note]->kind == ACP_EVENT_NOTIFICATION);
    CHECK_STR_EQ(events[note]->json, "{\"k\":\"v\"}");
    CHECK(events[note]->responder == NULL && events[note]->reason == NULL);

    CHECK(events[ask]->kind == ACP_EVENT_REQUEST);
    CHECK_STR_EQ(events[ask]->json, "{\"q\":[1,2,3]}");
    acp_responder *responder = events[ask]->responder;
    CHECK(responder != NULL);
    CHECK(!acp_responder_is_cancelled(responder));
    CHECK_RC(acp_responder_ok(responder, "{\"a\":6}"), ACP_OK);
    CHECK_RC(acp_responder_ok(responder, "{\"a\":6}"), ACP_ERR_ALREADY_ANSWERED);
    char *line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":6}}");
    free(line);

    CHECK(events[bare]->kind == ACP_EVENT_NOTIFICATION);
    CHECK(events[bare]->json == NULL);

    /* The responder outlives its event. */
    CHECK(events[later]->kind == ACP_EVENT_REQUEST);
    CHECK(events[later]->json == NULL);
    responder = events[later]->responder;
    for (int i = 0; i < 4; i++) acp_event_free(events[i]);
    CHECK_RC(acp_responder_error(responder, -32000, "after free", "[\"d\"]"), ACP_OK);
    line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"error\":{\"code\":-32000,\"message\":\"after free\","
                       "\"data\":[\"d\"]}}");
    free(line);

    /* Nothing more: a timeout, with *out NULL, after about the timeout. */
    acp_event *event = (acp_event *)(uintptr_t)1;
    long long started = now_ms();
    CHECK_RC(acp_connection_next_event(c, 100, &event), ACP_ERR_TIMEOUT);
    CHECK(now_ms() - started >= 95);
    CHECK(event == NULL);
    CHECK_LAST_ERROR();

    /* An unanswered REQUEST event is answered -32603 at close; CLOSED is
     * the last event. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ignored\",\"params\":{}}");
    event = EXPECT_EVENT(c, ACP_EVENT_REQUEST);
    acp_event_free(event);
    CHECK_RC(acp_connection_close(c), ACP_OK);
    line = peer_read_line(&p, slow(3000));
    CHECK(json_int(line, "id", -1) == 3 && json_int(line, "code", 0) == -32603);
    free(line);
    CHECK(peer_sees_eof(&p, slow(3000)));
    event = EXPECT_EVENT(c, ACP_EVENT_CLOSED);
    if (event) {
        CHECK(event->reason != NULL && event->reason[0] != '\0');
        CHECK(event->method == NULL && event->responder == NULL);
    }
    acp_event_free(event);
    CHECK_RC(acp_connection_next_event(c, 50, &event), ACP_ERR_CLOSED);
    CHECK_RC(acp_connection_next_event(c, -1, &event), ACP_ERR_CLOSED); /* no hang */
    acp_connection_free(c);
    peer_close(&p);
}

static void test_responses(void) {
    harness_section("RESPONSE events");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, NULL, &c), ACP_OK);
    int64_t ok_id = -1, err_id = -1, cancel_id = -1, closed_id = -1;
    CHECK_RC(acp_connection_send_request(c, "one", "{}", NULL, NULL, &ok_id), ACP_OK);
    CHECK_RC(acp_connection_send_request(c, "two", "[]", NULL, NULL, &err_id), ACP_OK);
    CHECK_RC(acp_connection_send_request(c, "three", NULL, NULL, NULL, &cancel_id), ACP_OK);
    CHECK_RC(acp_connection_send_request(c, "four", NULL, NULL, NULL, &closed_id), ACP_OK);
    for (int i = 0; i < 4; i++) free(peer_read_line(&p, slow(2000)));

    /* error answer, a notification, ok answer (one write) */
    char burst[512];
    snprintf(burst, sizeof burst,
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32001,\"message\":\"no\",\"data\":7}}\n"
             "{\"jsonrpc\":\"2.0\",\"method\":\"between\"}\n"
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"fine\":true}}\n",
             (long long)err_id, (long long)ok_id);
    peer_write(&p, burst);
    acp_event *events[3];
    take_events(c, events, 3);
    int err = find_response(events, 3, err_id), ok = find_response(events, 3, ok_id);
    int between = find_method(events, 3, "between");
    CHECK(err >= 0 && ok >= 0 && between >= 0);
    if (err < 0 || ok < 0 || between < 0) return;
    /* Promised: a response only after the notifications before it. */
    CHECK(between < ok);
    CHECK_THAT(err < between, "event queue: a RESPONSE is queued after a notification that arrived after it");
    CHECK(events[err]->json == NULL);
    CHECK_EQ_INT(events[err]->error.code, -32001);
    CHECK_STR_EQ(events[err]->error.message, "no");
    CHECK_STR_EQ(events[err]->error.data_json, "7");
    CHECK(events[err]->method == NULL);
    CHECK_STR_EQ(events[ok]->json, "{\"fine\":true}");
    CHECK_EQ_INT(events[ok]->error.code, 0);
    CHECK(events[ok]->error.message == NULL && events[ok]->error.data_json == NULL);
    for (int i = 0; i < 3; i++) acp_event_free(events[i]);

    /* Cancelled: a RESPONSE with -32800 at once; the peer is told. */
    CHECK_RC(acp_connection_cancel_request(c, cancel_id), ACP_OK);
    acp_event *event = EXPECT_EVENT(c, ACP_EVENT_RESPONSE);
    if (event) {
        CHECK_EQ_INT(event->request_id, cancel_id);
        CHECK_EQ_INT(event->error.code, -32800);
        CHECK(event->json == NULL);
    }
    acp_event_free(event);
    char *line = peer_read_line(&p, slow(2000));
    CHECK_CONTAINS(line, "\"method\":\"$/cancel_request\"");
    CHECK(json_int(line, "requestId", -1) == cancel_id);
    free(line);

    /* The peer hangs up: the pending request fails, then CLOSED. */
    peer_close(&p);
    event = EXPECT_EVENT(c, ACP_EVENT_RESPONSE);
    if (event) {
        CHECK_EQ_INT(event->request_id, closed_id);
        CHECK_EQ_INT(event->error.code, ACP_ERROR_CONNECTION_CLOSED);
        CHECK_STR_EQ(event->error.message, "Connection closed");
    }
    acp_event_free(event);
    event = EXPECT_EVENT(c, ACP_EVENT_CLOSED);
    if (event) fprintf(stderr, "  CLOSED: %s\n", event->reason);
    acp_event_free(event);
    CHECK_RC(acp_connection_next_event(c, 20, &event), ACP_ERR_CLOSED);
    CHECK_RC(acp_connection_wait_closed(c, slow(3000)), ACP_OK);
    acp_connection_free(c);
}

/* next_event with no limit wakes up when an event arrives from elsewhere. */
static void *send_later(void *arg) {
    peer *p = arg;
    sleep_ms(100);
    /* No client notification: dropped by ACP_SIDE_CLIENT, never an event. */
    peer_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"woke\"}");
    peer_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\","
                 "\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\","
                 "\"text\":\"x\"}}}}");
    return NULL;
}

static void test_blocking_wait_and_wrong_mode(void) {
    harness_section("next_event without a limit; WRONG_MODE");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_CLIENT, NULL, &c), ACP_OK);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, send_later, &p) == 0);
    acp_event *event = NULL;
    long long started = now_ms();
    CHECK_RC(acp_connection_next_event(c, -1, &event), ACP_OK); /* blocks ~100 ms */
    CHECK(now_ms() - started >= 90);
    CHECK(event && event->kind == ACP_EVENT_NOTIFICATION);
    if (event) CHECK_STR_EQ(event->method, "session/update");
    acp_event_free(event);
    pthread_join(thread, NULL);
    acp_connection_free(c);
    peer_close(&p);

    /* Event-queue calls on a connection with handlers. */
    acp_handlers h = ACP_HANDLERS_INIT;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);
    event = (acp_event *)(uintptr_t)1;
    CHECK_RC(acp_connection_next_event(c, 0, &event), ACP_ERR_WRONG_MODE);
    CHECK_LAST_ERROR();
    CHECK(event == NULL);
    CHECK_RC(acp_connection_next_event(c, -1, &event), ACP_ERR_WRONG_MODE); /* no hang */
    acp_connection_free(c);
    peer_close(&p);
}

/* A thread of ours drains the queue while the main thread waits. */
typedef struct {
    acp_connection *c;
    int notifications, closed, out_of_order;
} drainer;

static void *drain(void *arg) {
    drainer *d = arg;
    for (;;) {
        acp_event *event = NULL;
        if (acp_connection_next_event(d->c, slow(5000), &event) != ACP_OK) break;
        int kind = event->kind;
        if (kind == ACP_EVENT_NOTIFICATION) {
            if (!event->json || atoi(event->json + 1) != d->notifications) d->out_of_order++;
            d->notifications++;
        }
        acp_event_free(event);
        if (kind == ACP_EVENT_CLOSED) {
            d->closed++;
            break;
        }
    }
    return NULL;
}

static void test_drain_on_another_thread(void) {
    harness_section("events drained on another thread, 500 in order");
    peer p;
    drainer d = {NULL, 0, 0, 0};
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, NULL, &d.c), ACP_OK);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, drain, &d) == 0);
    for (int i = 0; i < 500; i++) peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":[%d]}", i);
    peer_close(&p);
    CHECK_RC(acp_connection_wait_closed(d.c, slow(5000)), ACP_OK);
    pthread_join(thread, NULL);
    CHECK_EQ_INT(d.notifications, 500);
    CHECK_EQ_INT(d.closed, 1);
    CHECK_EQ_INT(d.out_of_order, 0);
    acp_connection_free(d.c);
}

/* ---- a batch per call ----------------------------------------------------- */

static void test_next_events_in_batches(void) {
    harness_section("next_events: batches in wire order, argument checks");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, NULL, &c), ACP_OK);
    acp_event *events[64];
    size_t count = 99;
    CHECK_RC(acp_connection_next_events(c, NULL, 64, 0, &count), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_connection_next_events(c, events, 64, 0, NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_connection_next_events(c, events, 0, 0, &count), ACP_ERR_INVALID_ARGUMENT);
    CHECK_RC(acp_connection_next_events(c, events, 64, 0, &count), ACP_ERR_TIMEOUT);
    CHECK_EQ_INT(count, 0);

    enum { N = 1000 };
    for (int i = 0; i < N; i++) peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":[%d]}", i);
    int seen = 0, out_of_order = 0, calls = 0, most = 0;
    while (seen < N) {
        count = 0;
        if (acp_connection_next_events(c, events, 64, slow(3000), &count) != ACP_OK) break;
        calls++;
        if ((int)count > most) most = (int)count;
        for (size_t i = 0; i < count; i++) {
            if (events[i]->kind != ACP_EVENT_NOTIFICATION || atoi(events[i]->json + 1) != seen) out_of_order++;
            seen++;
            acp_event_free(events[i]);
        }
    }
    CHECK_EQ_INT(seen, N);
    CHECK_EQ_INT(out_of_order, 0);
    CHECK(most <= 64);
    /* A burst comes in batches, not one event per call (all N were written
     * before the first call). */
    CHECK(most > 1);
    fprintf(stderr, "  %d events in %d calls (largest batch %d)\n", seen, calls, most);
    acp_connection_free(c);
    peer_close(&p);
}

/* ---- the peer cancels a request ------------------------------------------------- */

static void test_cancelled_event(void) {
    harness_section("CANCELLED: the peer's $/cancel_request");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, NULL, &c), ACP_OK);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"slow\",\"params\":{}}");
    acp_event *request = EXPECT_EVENT(c, ACP_EVENT_REQUEST);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancel_request\",\"params\":{\"requestId\":5}}");
    acp_event *cancelled = EXPECT_EVENT(c, ACP_EVENT_CANCELLED);
    if (request && cancelled) {
        CHECK(cancelled->responder == request->responder);
        CHECK(acp_responder_is_cancelled(request->responder));
        CHECK_RC(acp_responder_ok(request->responder, "{}"), ACP_ERR_ALREADY_ANSWERED);
    }
    char *line = peer_read_line(&p, slow(2000));
    CHECK(json_int(line, "id", -1) == 5 && json_int(line, "code", 0) == -32800);
    free(line);
    acp_event_free(request);
    acp_event_free(cancelled);
    acp_connection_free(c);
    peer_close(&p);
}

/* ---- a response callback on an event connection ------------------------------------ */

typedef struct {
    pthread_t thread;
    int calls;
    int on_taking_thread;
} answered;

static void on_answer(void *user_data, const acp_connection *conn, int64_t id, const char *result,
                      const acp_error *error) {
    (void)conn, (void)id, (void)error;
    answered *a = user_data;
    a->calls++;
    a->on_taking_thread = pthread_equal(pthread_self(), a->thread) && result && strcmp(result, "{\"v\":1}") == 0;
}

static void test_response_callback_runs_in_next_events(void) {
    harness_section("event connection: a response callback runs inside next_events, in order");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, NULL, &c), ACP_OK);
    answered a = {pthread_self(), 0, 0};
    int64_t id = -1;
    CHECK_RC(acp_connection_send_request(c, "get", "{}", on_answer, &a, &id), ACP_OK);
    free(peer_read_line(&p, slow(2000)));
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"before\"}");
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"v\":1}}", (long long)id);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"after\"}");
    sleep_ms(50);
    CHECK_EQ_INT(a.calls, 0); /* nobody took events yet */
    acp_event *event = EXPECT_EVENT(c, ACP_EVENT_NOTIFICATION);
    if (event) CHECK_STR_EQ(event->method, "before");
    acp_event_free(event);
    event = EXPECT_EVENT(c, ACP_EVENT_NOTIFICATION); /* the response went to the callback */
    if (event) CHECK_STR_EQ(event->method, "after");
    acp_event_free(event);
    CHECK_EQ_INT(a.calls, 1);
    CHECK(a.on_taking_thread);
    acp_connection_free(c);
    peer_close(&p);
}

int main(void) {
    harness_name = "test_events";
    test_next_events_in_batches();
    test_cancelled_event();
    test_response_callback_runs_in_next_events();
    test_requests_and_notifications();
    test_responses();
    test_blocking_wait_and_wrong_mode();
    test_drain_on_another_thread();
    acp_shutdown();
    return harness_finish();
}
