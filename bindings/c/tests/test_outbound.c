/*
 * test_outbound.c: requests C sends, and their answers.
 *   - acp_connection_send_request with a callback: result and error;
 *   - acp_connection_request (sync): ok; a JSON-RPC error ->
 *     ACP_ERR_REQUEST_FAILED with the error object; timeout ->
 *     ACP_ERR_TIMEOUT and the peer receives $/cancel_request;
 *   - acp_connection_cancel_request: the callback gets -32800 at once, the
 *     peer gets $/cancel_request, a late answer is dropped;
 *   - a request callback that itself sends a request and waits for it;
 *   - pending requests fail with ACP_ERROR_CONNECTION_CLOSED "Connection closed" at close;
 *   - options.max_message_size: a longer inbound message is refused
 *     (-32600 to the peer) and the connection goes on.
 */
#include "harness.h"

/* ---- a response callback that records one answer ------------------------ */

typedef struct {
    latch done;
    int64_t request_id;
    char result[512];
    int has_result, has_error;
    int64_t code;
    char message[256];
    char data[256];
    int has_data;
} outcome;

static void record(void *user_data, const acp_connection *conn, int64_t request_id, const char *result, const acp_error *error) {
    (void)conn;
    outcome *o = user_data;
    o->request_id = request_id;
    o->has_result = result != NULL;
    o->has_error = error != NULL;
    if (result) snprintf(o->result, sizeof o->result, "%s", result);
    if (error) {
        o->code = error->code;
        snprintf(o->message, sizeof o->message, "%s", error->message ? error->message : "(null)");
        o->has_data = error->data_json != NULL;
        if (error->data_json) snprintf(o->data, sizeof o->data, "%s", error->data_json);
    }
    latch_add(&o->done, 1); /* last: the test may read the fields now */
}

static void outcome_init(outcome *o) {
    memset(o, 0, sizeof *o);
    latch fresh = LATCH_INIT;
    o->done = fresh;
}

/* ---- send_request with a callback ---------------------------------------- */

/* Callbacks run on the dispatch thread of a connection with handlers (none
 * set here: the peer sends no requests). */
static const acp_handlers no_handlers = ACP_HANDLERS_INIT;

static void test_callbacks(void) {
    harness_section("send_request with a callback: result, error");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &no_handlers, &c), ACP_OK);
    static outcome ok, failed;
    outcome_init(&ok);
    outcome_init(&failed);
    int64_t id_ok = -1, id_failed = -1;
    CHECK_RC(acp_connection_send_request(c, "sum", "{\"a\":1,\"b\":2}", record, &ok, &id_ok), ACP_OK);
    CHECK_RC(acp_connection_send_request(c, "fail", NULL, record, &failed, &id_failed), ACP_OK);
    CHECK(id_ok >= 0 && id_failed >= 0 && id_ok != id_failed);

    char *line = peer_read_line(&p, slow(2000));
    char want[256];
    snprintf(want, sizeof want, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"sum\",\"params\":{\"a\":1,\"b\":2}}",
             (long long)id_ok);
    CHECK_STR_EQ(line, want);
    free(line);
    line = peer_read_line(&p, slow(2000));
    snprintf(want, sizeof want, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"fail\"}", (long long)id_failed);
    CHECK_STR_EQ(line, want);
    free(line);

    /* Answer in reverse order. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32002,\"message\":\"not here\","
                  "\"data\":{\"path\":\"/x\"}}}", (long long)id_failed);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"sum\":3}}", (long long)id_ok);
    CHECK(latch_wait(&ok.done, 1, slow(3000)));
    CHECK(latch_wait(&failed.done, 1, slow(3000)));
    CHECK_EQ_INT(ok.request_id, id_ok);
    CHECK(ok.has_result && !ok.has_error);
    CHECK_STR_EQ(ok.result, "{\"sum\":3}");
    CHECK_EQ_INT(failed.request_id, id_failed);
    CHECK(!failed.has_result && failed.has_error);
    CHECK_EQ_INT(failed.code, -32002);
    CHECK_STR_EQ(failed.message, "not here");
    CHECK(failed.has_data);
    CHECK_STR_EQ(failed.data, "{\"path\":\"/x\"}");

    /* A result that is not an object, an error without data. */
    static outcome scalar, bare;
    outcome_init(&scalar);
    outcome_init(&bare);
    int64_t id1, id2;
    CHECK_RC(acp_connection_send_request(c, "s", "[]", record, &scalar, &id1), ACP_OK);
    CHECK_RC(acp_connection_send_request(c, "b", "[]", record, &bare, &id2), ACP_OK);
    free(peer_read_line(&p, slow(2000)));
    free(peer_read_line(&p, slow(2000)));
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":null}", (long long)id1);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":1,\"message\":\"m\"}}", (long long)id2);
    CHECK(latch_wait(&scalar.done, 1, slow(3000)));
    CHECK(latch_wait(&bare.done, 1, slow(3000)));
    CHECK(scalar.has_result);
    CHECK_STR_EQ(scalar.result, "null");
    CHECK(bare.has_error && !bare.has_data && bare.code == 1);

    /* An answer to an id we never used is ignored. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":999999,\"result\":{}}");

    /* Pending requests fail at close: ACP_ERROR_CONNECTION_CLOSED "Connection closed". */
    static outcome pending;
    outcome_init(&pending);
    CHECK_RC(acp_connection_send_request(c, "never", "{}", record, &pending, NULL), ACP_OK);
    free(peer_read_line(&p, slow(2000)));
    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK(latch_wait(&pending.done, 1, slow(3000)));
    CHECK(pending.has_error && !pending.has_result);
    CHECK_EQ_INT(pending.code, ACP_ERROR_CONNECTION_CLOSED);
    CHECK_STR_EQ(pending.message, "Connection closed");
    CHECK_RC(acp_connection_wait_closed(c, slow(3000)), ACP_OK);
    acp_connection_free(c);
    peer_close(&p);
}

/* ---- the synchronous acp_connection_request ----------------------------- */

/* A peer thread: reads one request, answers it with `reply` (a format with
 * one %lld for the id; NULL: no answer), then keeps the next line too. */
typedef struct {
    peer *p;
    const char *reply;
    int wait_for_second;
    char *first, *second;
} scripted;

static void *play_peer(void *arg) {
    scripted *s = arg;
    s->first = peer_read_line(s->p, slow(5000));
    long long id = json_int(s->first, "id", -1);
    if (s->reply) peer_send(s->p, s->reply, id);
    if (s->wait_for_second) s->second = peer_read_line(s->p, slow(5000));
    return NULL;
}

static void test_sync_request(void) {
    harness_section("acp_connection_request: ok, error, timeout");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, NULL, &c), ACP_OK);
    pthread_t thread;

    /* ok */
    scripted s = {&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"pong\":[1,\"two\"]}}", 0, NULL, NULL};
    CHECK(pthread_create(&thread, NULL, play_peer, &s) == 0);
    char *json = NULL;
    CHECK_RC(acp_connection_request(c, "ping", "{\"n\":1}", slow(5000), &json), ACP_OK);
    CHECK_STR_EQ(json, "{\"pong\":[1,\"two\"]}");
    acp_string_free(json);
    pthread_join(thread, NULL);
    CHECK_CONTAINS(s.first, "\"method\":\"ping\",\"params\":{\"n\":1}");
    free(s.first);

    /* no limit (negative timeout) */
    scripted s2 = {&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":true}", 0, NULL, NULL};
    CHECK(pthread_create(&thread, NULL, play_peer, &s2) == 0);
    json = NULL;
    CHECK_RC(acp_connection_request(c, "forever", NULL, -1, &json), ACP_OK);
    CHECK_STR_EQ(json, "true");
    acp_string_free(json);
    pthread_join(thread, NULL);
    free(s2.first);

    /* JSON-RPC error: ACP_ERR_REQUEST_FAILED and the error object */
    scripted s3 = {&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32602,\"message\":\"Invalid params\","
                       "\"data\":{\"field\":\"n\"}}}", 0, NULL, NULL};
    CHECK(pthread_create(&thread, NULL, play_peer, &s3) == 0);
    json = NULL;
    CHECK_RC(acp_connection_request(c, "bad", "{}", slow(5000), &json), ACP_ERR_REQUEST_FAILED);
    CHECK_LAST_ERROR();
    CHECK(json != NULL);
    CHECK(json_int(json, "code", 0) == -32602);
    CHECK_CONTAINS(json, "\"message\":\"Invalid params\"");
    CHECK_CONTAINS(json, "\"data\":{\"field\":\"n\"}");
    acp_string_free(json);
    pthread_join(thread, NULL);
    free(s3.first);

    /* timeout: the peer never answers and then sees $/cancel_request */
    scripted s4 = {&p, NULL, 1, NULL, NULL};
    CHECK(pthread_create(&thread, NULL, play_peer, &s4) == 0);
    json = (char *)"untouched";
    long long started = now_ms();
    CHECK_RC(acp_connection_request(c, "slow", "{}", 150, &json), ACP_ERR_TIMEOUT);
    long long took = now_ms() - started;
    CHECK_LAST_ERROR();
    CHECK(json == NULL);
    CHECK(took >= 140);
    pthread_join(thread, NULL);
    long long id = json_int(s4.first, "id", -1);
    CHECK(id >= 0);
    CHECK_CONTAINS(s4.second, "\"method\":\"$/cancel_request\"");
    CHECK(json_int(s4.second, "requestId", -2) == id);
    free(s4.first);
    free(s4.second);
    /* A late answer to the timed-out request is dropped quietly. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}", id);

    /* timeout 0: no wait at all */
    json = NULL;
    CHECK_RC(acp_connection_request(c, "instant", "{}", 0, &json), ACP_ERR_TIMEOUT);
    free(peer_read_line(&p, slow(2000)));
    free(peer_read_line(&p, slow(2000)));

    acp_connection_free(c);
    peer_close(&p);
}

static void *hang_up_soon(void *arg) {
    peer *p = arg;
    free(peer_read_line(p, slow(5000)));
    sleep_ms(50);
    peer_close(p);
    return NULL;
}

static void test_sync_request_peer_hangs_up(void) {
    harness_section("acp_connection_request: the peer hangs up");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, NULL, &c), ACP_OK);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, hang_up_soon, &p) == 0);
    char *json = NULL;
    CHECK_RC(acp_connection_request(c, "doomed", "{}", slow(5000), &json), ACP_ERR_CLOSED);
    CHECK_LAST_ERROR();
    CHECK(json == NULL);
    pthread_join(thread, NULL);
    CHECK_RC(acp_connection_wait_closed(c, slow(3000)), ACP_OK);
    acp_connection_free(c);
}

/* ---- cancel_request ------------------------------------------------------ */

static void test_cancel_request(void) {
    harness_section("acp_connection_cancel_request");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &no_handlers, &c), ACP_OK);
    static outcome o;
    outcome_init(&o);
    int64_t id = -1;
    CHECK_RC(acp_connection_send_request(c, "long", "{}", record, &o, &id), ACP_OK);
    char *line = peer_read_line(&p, slow(2000));
    CHECK(json_int(line, "id", -2) == id);
    free(line);

    CHECK_RC(acp_connection_cancel_request(c, id), ACP_OK);
    /* "at once": well before any answer from the peer (it never answers). */
    CHECK(latch_wait(&o.done, 1, slow(1000)));
    CHECK(o.has_error && !o.has_result);
    CHECK_EQ_INT(o.code, -32800);
    CHECK_EQ_INT(o.request_id, id);
    line = peer_read_line(&p, slow(2000));
    char want[128];
    snprintf(want, sizeof want, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancel_request\",\"params\":{\"requestId\":%lld}}",
             (long long)id);
    CHECK_STR_EQ(line, want);
    free(line);
    /* Not pending any more. */
    CHECK_RC(acp_connection_cancel_request(c, id), ACP_ERR_INVALID_ARGUMENT);
    CHECK_LAST_ERROR();
    /* A late answer is dropped: the callback does not run again. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"late\":true}}", (long long)id);
    /* Round trip to be sure the late answer was read. */
    static outcome after;
    outcome_init(&after);
    int64_t id2;
    CHECK_RC(acp_connection_send_request(c, "after", "{}", record, &after, &id2), ACP_OK);
    free(peer_read_line(&p, slow(2000)));
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":1}", (long long)id2);
    CHECK(latch_wait(&after.done, 1, slow(3000)));
    CHECK_EQ_INT(latch_get(&o.done), 1);
    CHECK_EQ_INT(o.code, -32800);
    acp_connection_free(c);
    CHECK(peer_sees_eof(&p, slow(3000)));
    peer_close(&p);
}

/* ---- a request callback that sends a request of its own ------------------ */

typedef struct {
    acp_connection *c;
    pthread_mutex_t mutex;
    latch done;
} nested;

static void ask_back(void *user_data, const acp_connection *conn, const char *method, const char *params, acp_responder *responder) {
    (void)conn;
    nested *n = user_data;
    (void)method;
    (void)params;
    pthread_mutex_lock(&n->mutex); /* the connection pointer is set by then */
    acp_connection *c = n->c;
    pthread_mutex_unlock(&n->mutex);
    char *inner = NULL;
    int rc = acp_connection_request(c, "inner", "{\"q\":\"?\"}", slow(5000), &inner);
    CHECK_EQ_INT(rc, ACP_OK);
    char answer[256];
    snprintf(answer, sizeof answer, "{\"inner\":%s}", rc == ACP_OK && inner ? inner : "null");
    acp_string_free(inner);
    CHECK_RC(acp_responder_ok(responder, answer), ACP_OK);
    /* From a response callback, sending is fine too. */
    CHECK_RC(acp_connection_send_notification(c, "after/inner", NULL), ACP_OK);
    latch_add(&n->done, 1);
}

static void test_nested_request(void) {
    harness_section("a request callback waits on a request of its own");
    static nested n = {NULL, PTHREAD_MUTEX_INITIALIZER, LATCH_INIT};
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &n, .on_request = ask_back};
    peer p;
    pthread_mutex_lock(&n.mutex);
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &n.c), ACP_OK);
    pthread_mutex_unlock(&n.mutex);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":\"outer-1\",\"method\":\"outer\",\"params\":{}}");
    char *line = peer_read_line(&p, slow(3000));
    CHECK_CONTAINS(line, "\"method\":\"inner\"");
    long long id = json_int(line, "id", -1);
    free(line);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":\"!\"}", id);
    /* The answer and the notification sent after it. Both must arrive; the
     * answer should come first (it was given first, on the same thread),
     * but acp_responder_ok hands it to the library's request task while
     * the notification goes straight to the write queue. */
    int answer = 0, notification = 0, answer_first = 0;
    for (int i = 0; i < 2; i++) {
        line = peer_read_line(&p, slow(3000));
        if (line && strcmp(line, "{\"jsonrpc\":\"2.0\",\"id\":\"outer-1\",\"result\":{\"inner\":\"!\"}}") == 0)
            answer++, answer_first = answer_first || notification == 0;
        else if (line && strcmp(line, "{\"jsonrpc\":\"2.0\",\"method\":\"after/inner\"}") == 0)
            notification++;
        else
            fprintf(stderr, "  unexpected: %s\n", line ? line : "(nothing)");
        free(line);
    }
    CHECK_THAT(answer_first, "acp_responder_ok then acp_connection_send_notification: the notification "
                              "goes out first");
    CHECK(answer == 1 && notification == 1);
    CHECK(latch_wait(&n.done, 1, slow(3000)));
    /* No callback on a connection with handlers: the answer is dropped. */
    int64_t id2 = -1;
    CHECK_RC(acp_connection_send_request(n.c, "fire/and/forget", "{}", NULL, NULL, &id2), ACP_OK);
    line = peer_read_line(&p, slow(3000));
    CHECK(json_int(line, "id", -2) == id2);
    free(line);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}", (long long)id2);
    acp_event *event = NULL;
    CHECK_RC(acp_connection_next_event(n.c, 0, &event), ACP_ERR_WRONG_MODE);
    acp_connection_free(n.c);
    CHECK(peer_sees_eof(&p, slow(3000)));
    peer_close(&p);
}

/* ---- max_message_size ------------------------------------------------------ */

static void test_max_message_size(void) {
    harness_section("max_message_size bounds inbound messages");
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    peer p = {.fd = sv[0]};
    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_RAW, .max_message_size = 256};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_fds(sv[1], dup(sv[1]), &options, NULL, &c), ACP_OK);
    /* Small ones pass. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"small\",\"params\":{}}");
    acp_event *event = NULL;
    CHECK_RC(acp_connection_next_event(c, slow(3000), &event), ACP_OK);
    CHECK(event && event->kind == ACP_EVENT_NOTIFICATION);
    acp_event_free(event);
    /* A 1 KiB one does not reach C; the peer is told (-32600, id null);
     * the connection goes on. */
    char big[1200];
    memset(big, 'x', sizeof big);
    big[sizeof big - 1] = '\0';
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"big\",\"params\":{\"x\":\"%s\"}}", big);
    char *line = peer_read_line(&p, slow(3000));
    CHECK_CONTAINS(line, "\"id\":null");
    CHECK(json_int(line, "code", 0) == -32600);
    free(line);
    event = NULL;
    CHECK_RC(acp_connection_next_event(c, 100, &event), ACP_ERR_TIMEOUT);
    CHECK(!acp_connection_is_closed(c));
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"small/again\"}");
    CHECK_RC(acp_connection_next_event(c, slow(3000), &event), ACP_OK);
    CHECK(event && event->kind == ACP_EVENT_NOTIFICATION);
    if (event) CHECK_STR_EQ(event->method, "small/again");
    acp_event_free(event);
    acp_connection_free(c);
    peer_close(&p);
}


/* ---- start_request / await ----------------------------------------------- */

static void *answer_after(void *arg) {
    scripted *s = arg;
    s->first = peer_read_line(s->p, slow(5000));
    sleep_ms(100);
    peer_send(s->p, s->reply, json_int(s->first, "id", -1));
    return NULL;
}

static void *cancel_soon(void *arg) {
    void **args = arg;
    sleep_ms(50);
    acp_connection_cancel_request(args[0], *(int64_t *)args[1]);
    return NULL;
}

static void test_start_and_await(void) {
    harness_section("start_request + await: ok, a timeout keeps it pending, cancel ends the wait");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &no_handlers, &c), ACP_OK);
    int64_t id = -1;
    char *json = NULL;

    /* Answered while nobody waits: await finds it. */
    CHECK_RC(acp_connection_start_request(c, "early", "{}", &id), ACP_OK);
    char *line = peer_read_line(&p, slow(2000));
    CHECK(json_int(line, "id", -1) == id);
    free(line);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"n\":1}}", (long long)id);
    CHECK_RC(acp_connection_await(c, id, slow(5000), &json), ACP_OK);
    CHECK_STR_EQ(json, "{\"n\":1}");
    acp_string_free(json);
    /* Its answer was taken: the id is no longer awaited. */
    json = (char *)"untouched";
    CHECK_RC(acp_connection_await(c, id, 0, &json), ACP_ERR_INVALID_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK(json == NULL);

    /* A timeout leaves the request pending; the next await gets the answer. */
    pthread_t thread;
    scripted s = {&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":\"late\"}", 0, NULL, NULL};
    CHECK_RC(acp_connection_start_request(c, "slow", NULL, &id), ACP_OK);
    CHECK(pthread_create(&thread, NULL, answer_after, &s) == 0);
    json = NULL;
    CHECK_RC(acp_connection_await(c, id, 10, &json), ACP_ERR_TIMEOUT);
    CHECK(json == NULL);
    CHECK_RC(acp_connection_await(c, id, slow(5000), &json), ACP_OK);
    CHECK_STR_EQ(json, "\"late\"");
    acp_string_free(json);
    pthread_join(thread, NULL);
    CHECK_CONTAINS(s.first, "\"method\":\"slow\"");
    free(s.first);

    /* Cancelled from another thread: the wait ends with -32800, the peer
     * gets $/cancel_request. */
    CHECK_RC(acp_connection_start_request(c, "never", "{}", &id), ACP_OK);
    void *args[2] = {c, &id};
    CHECK(pthread_create(&thread, NULL, cancel_soon, args) == 0);
    json = NULL;
    CHECK_RC(acp_connection_await(c, id, slow(5000), &json), ACP_ERR_REQUEST_FAILED);
    CHECK(json_int(json, "code", 0) == -32800);
    acp_string_free(json);
    pthread_join(thread, NULL);
    free(peer_read_line(&p, slow(2000)));
    line = peer_read_line(&p, slow(2000));
    CHECK_CONTAINS(line, "\"method\":\"$/cancel_request\"");
    free(line);

    /* Argument checks, and a closed connection. */
    CHECK_RC(acp_connection_start_request(c, "x", "{}", NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_connection_start_request(c, "x", "{not json", &id), ACP_ERR_INVALID_JSON);
    CHECK_RC(acp_connection_await(c, 12345, 0, NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_connection_await(NULL, 1, 0, &json), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_connection_start_request(c, "pending at close", "{}", &id), ACP_OK);
    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK_RC(acp_connection_await(c, id, slow(5000), &json), ACP_ERR_CLOSED);
    acp_connection_free(c);
    peer_close(&p);
}

/* ---- quick_response_callbacks -------------------------------------------- */

typedef struct {
    latch response_done, notified;
    int notified_before_response_done;
    int request_rc;
    acp_connection *c;
} quick;

static void slow_response(void *user_data, const acp_connection *conn, int64_t request_id, const char *result,
                          const acp_error *error) {
    (void)conn;
    (void)request_id;
    (void)result;
    (void)error;
    quick *q = user_data;
    char *json = NULL;
    q->request_rc = acp_connection_request(q->c, "nested", "{}", 0, &json); /* may not wait here */
    acp_string_free(json);
    sleep_ms(50); /* well past the 2 ms after which a callback is handed off */
    latch_add(&q->response_done, 1);
}

static void note(void *user_data, const acp_connection *conn, const char *method, const char *params) {
    (void)conn;
    (void)method;
    (void)params;
    quick *q = user_data;
    if (latch_get(&q->response_done) == 0) q->notified_before_response_done = 1;
    latch_add(&q->notified, 1);
}

static void test_quick_response_callbacks(void) {
    harness_section("quick_response_callbacks: a slow response callback holds the dispatch thread");
    static quick q = {LATCH_INIT, LATCH_INIT, 0, -1, NULL};
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &q, .on_notification = note};
    acp_options options = {.struct_size = sizeof(acp_options), .quick_response_callbacks = true};
    peer p;
    CHECK_RC(peer_connect_with(&p, &options, &h, &q.c), ACP_OK);
    int64_t id = -1;
    CHECK_RC(acp_connection_send_request(q.c, "work", "{}", slow_response, &q, &id), ACP_OK);
    free(peer_read_line(&p, slow(2000)));
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}", (long long)id);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"after\"}");
    CHECK(latch_wait(&q.notified, 1, slow(5000)));
    CHECK(latch_get(&q.response_done) == 1);
    CHECK(!q.notified_before_response_done);
    CHECK_EQ_INT(q.request_rc, ACP_ERR_WRONG_MODE);
    acp_connection_free(q.c);
    peer_close(&p);
}

int main(void) {
    harness_name = "test_outbound";
    test_callbacks();
    test_sync_request();
    test_sync_request_peer_hangs_up();
    test_cancel_request();
    test_start_and_await();
    test_quick_response_callbacks();
    test_nested_request();
    test_max_message_size();
    acp_shutdown();
    return harness_finish();
}
