/*
 * test_wire.c: what reaches the wire and what reaches C, with the test
 * playing the raw peer over a socketpair.
 *   - bad JSON from C: ACP_ERR_INVALID_JSON, nothing sent;
 *   - ACP_SIDE_AGENT: unknown inbound method -> -32601, bad params -> -32602,
 *     and the C callback never runs; outbound params that do not fit the
 *     schema -> ACP_ERR_INVALID_ARGUMENT, nothing sent;
 *   - 1000 notifications arrive in order, one at a time, on worker threads;
 *     a response is delivered only after the notifications before it;
 *   - the peer hangs up: on_close once, with a reason;
 *   - no callback runs before the constructor has written *out; on_close
 *     has returned when wait_closed does.
 */
#include "harness.h"

static pthread_t main_thread;

/* ---- callbacks that record what C saw ----------------------------------- */

typedef struct {
    latch requests;      /* on_request calls */
    latch notifications; /* on_notification calls */
    latch closed;        /* on_close calls */
    char last_method[256];
    atomic_int expected_seq; /* next "seq" in order */
    atomic_int in_flight;    /* notification callbacks running now */
    atomic_int out_of_order;
    atomic_int overlapped;
    atomic_int on_main_thread;
} recorder;

static void on_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                       acp_responder *responder) {
    (void)conn;
    recorder *r = user_data;
    (void)params;
    if (pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&r->on_main_thread, 1);
    snprintf(r->last_method, sizeof r->last_method, "%s", method);
    CHECK_RC(acp_responder_ok(responder, "{\"protocolVersion\":1}"), ACP_OK);
    latch_add(&r->requests, 1);
}

static void on_notification(void *user_data, const acp_connection *conn, const char *method, const char *params) {
    (void)conn;
    recorder *r = user_data;
    if (pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&r->on_main_thread, 1);
    if (atomic_fetch_add(&r->in_flight, 1) != 0) atomic_fetch_add(&r->overlapped, 1);
    if (strcmp(method, "seq") == 0) {
        long long seq = json_int(params, "i", -1);
        if (seq != atomic_load(&r->expected_seq)) atomic_fetch_add(&r->out_of_order, 1);
        atomic_store(&r->expected_seq, (int)seq + 1);
        /* Now and then take a while: later ones must still wait their turn. */
        if (seq % 250 == 0) sleep_ms(5);
    }
    atomic_fetch_sub(&r->in_flight, 1);
    latch_add(&r->notifications, 1);
}

static void on_close(void *user_data, const acp_connection *conn, const char *reason) {
    (void)conn;
    recorder *r = user_data;
    CHECK(reason != NULL);
    latch_add(&r->closed, 1);
}

static void recorder_init(recorder *r) {
    memset(r, 0, sizeof *r);
    latch fresh = LATCH_INIT;
    r->requests = fresh;
    r->notifications = fresh;
    r->closed = fresh;
}

static acp_handlers handlers_for(recorder *r) {
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = r, .on_request = on_request, .on_notification = on_notification, .on_close = on_close};
    return h;
}

/* Close from our side, check the peer sees EOF and on_close ran. */
static void finish(acp_connection *c, peer *p, recorder *r) {
    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK_RC(acp_connection_wait_closed(c, slow(5000)), ACP_OK);
    CHECK(peer_sees_eof(p, slow(2000)));
    CHECK(latch_wait(&r->closed, 1, slow(5000)));
    acp_connection_free(c);
    peer_close(p);
}

/* ---- bad JSON from C: refused, nothing on the wire ----------------------- */

static void test_bad_json_not_sent(void) {
    harness_section("bad JSON from C is refused and not sent");
    static recorder r;
    recorder_init(&r);
    acp_handlers h = handlers_for(&r);
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);

    /* An inbound request whose responder we answer with bad JSON: it is
     * refused, the responder stays usable, then a good answer goes out. */
    int64_t id = -1;
    CHECK_RC(acp_connection_send_notification(c, "n", "{bad"), ACP_ERR_INVALID_JSON);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_send_request(c, "r", "{bad", NULL, NULL, &id), ACP_ERR_INVALID_JSON);
    CHECK_LAST_ERROR();
    CHECK(id == -1); /* no id handed out */
    char *json = NULL;
    CHECK_RC(acp_connection_request(c, "r", "{bad", 100, &json), ACP_ERR_INVALID_JSON);
    CHECK(json == NULL);
    /* Nothing of that was written: the next bytes are the marker. */
    CHECK_RC(acp_connection_send_notification(c, "marker", "{\"n\":1}"), ACP_OK);
    char *line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"method\":\"marker\",\"params\":{\"n\":1}}");
    free(line);
    /* Pretty-printed JSON is one frame: its line breaks become spaces. */
    CHECK_RC(acp_connection_send_notification(c, "pretty", "{\n  \"n\": [1,\r\n 2]\n}\n"), ACP_OK);
    CHECK_RC(acp_connection_send_notification(c, "after", NULL), ACP_OK);
    line = peer_read_line(&p, slow(2000));
    CHECK(line != NULL && strstr(line, "\"method\":\"pretty\"") != NULL && strstr(line, "[1,   2]") != NULL);
    CHECK(line != NULL && strchr(line, '\r') == NULL);
    free(line);
    line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"method\":\"after\"}");
    free(line);
    finish(c, &p, &r);
}

/* acp_responder_ok with bad JSON: refused; the responder is not spent. */
typedef struct {
    latch done;
    atomic_int bad_json_rc, second_rc, third_rc;
} bad_answer;

static void answer_badly(void *user_data, const acp_connection *conn, const char *method, const char *params,
                         acp_responder *responder) {
    (void)conn;
    bad_answer *b = user_data;
    (void)method;
    (void)params;
    atomic_store(&b->bad_json_rc, acp_responder_ok(responder, "{bad"));
    CHECK(acp_last_error_message()[0] != '\0');
    atomic_store(&b->second_rc, acp_responder_error(responder, -32000, "m", "{bad"));
    atomic_store(&b->third_rc, acp_responder_ok(responder, "{\"good\":true}"));
    latch_add(&b->done, 1);
}

static void test_responder_bad_json(void) {
    harness_section("acp_responder_ok/error with bad JSON");
    static bad_answer b;
    latch fresh = LATCH_INIT;
    b.done = fresh;
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &b, .on_request = answer_badly};
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"q\",\"params\":{}}");
    CHECK(latch_wait(&b.done, 1, slow(5000)));
    CHECK_EQ_INT(atomic_load(&b.bad_json_rc), ACP_ERR_INVALID_JSON);
    CHECK_EQ_INT(atomic_load(&b.second_rc), ACP_ERR_INVALID_JSON);
    CHECK_EQ_INT(atomic_load(&b.third_rc), ACP_OK);
    /* Exactly one answer, the good one. */
    char *line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"good\":true}}");
    free(line);
    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK(peer_sees_eof(&p, slow(2000)));
    acp_connection_free(c);
    peer_close(&p);
}

/* ---- ACP_SIDE_AGENT: inbound checks before C, outbound checks ------------ */

static void test_agent_side_checks(void) {
    harness_section("ACP_SIDE_AGENT checks in and out");
    static recorder r;
    recorder_init(&r);
    acp_handlers h = handlers_for(&r);
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_AGENT, &h, &c), ACP_OK);

    /* Unknown method: -32601, C never sees it. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no/such_method\",\"params\":{}}");
    char *line = peer_read_line(&p, slow(2000));
    CHECK(json_int(line, "id", -1) == 1);
    CHECK(json_int(line, "code", 0) == -32601);
    free(line);
    /* A client method sent to an agent is unknown too. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"fs/read_text_file\","
                  "\"params\":{\"sessionId\":\"s\",\"path\":\"/x\"}}");
    line = peer_read_line(&p, slow(2000));
    CHECK(json_int(line, "id", -1) == 2);
    CHECK(json_int(line, "code", 0) == -32601);
    free(line);
    /* Known method, params of the wrong type: -32602 (a string version is
     * a legacy one, which an agent speaking v1 takes: core/src/version). */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\","
                  "\"params\":{\"protocolVersion\":true}}");
    line = peer_read_line(&p, slow(2000));
    CHECK(json_int(line, "id", -1) == 3);
    CHECK(json_int(line, "code", 0) == -32602);
    free(line);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"session/new\",\"params\":{\"cwd\":5}}");
    line = peer_read_line(&p, slow(2000));
    CHECK(json_int(line, "id", -1) == 4);
    CHECK(json_int(line, "code", 0) == -32602);
    free(line);
    /* Bad notifications are dropped without reaching C. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"nope\":1}}");
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"unknown/notification\",\"params\":{}}");
    CHECK_EQ_INT(latch_get(&r.requests), 0);
    /* A valid request does reach C (and proves the bad ones came before). */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\","
                  "\"params\":{\"protocolVersion\":1}}");
    line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"protocolVersion\":1}}");
    free(line);
    CHECK(latch_wait(&r.requests, 1, slow(2000))); /* it answers, then counts */
    CHECK_EQ_INT(latch_get(&r.requests), 1);
    CHECK_STR_EQ(r.last_method, "initialize");
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}");
    CHECK(latch_wait(&r.notifications, 1, slow(2000)));
    CHECK_EQ_INT(latch_get(&r.notifications), 1); /* only the valid one */

    /* Outbound: an agent sends client methods with fitting params only. */
    int64_t id = -1;
    char *json = NULL;
    CHECK_RC(acp_connection_send_request(c, "fs/read_text_file", "{\"sessionId\":\"s\"}", NULL, NULL, &id),
             ACP_ERR_INVALID_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_connection_send_request(c, "session/request_permission", "{\"foo\":1}", NULL, NULL, &id),
             ACP_ERR_INVALID_ARGUMENT);
    CHECK_RC(acp_connection_request(c, "initialize", "{\"protocolVersion\":1}", 100, &json),
             ACP_ERR_INVALID_ARGUMENT); /* an agent method: not for an agent to send */
    CHECK(json == NULL);
    CHECK_RC(acp_connection_request(c, "made/up", "{}", 100, &json), ACP_ERR_INVALID_ARGUMENT);
    CHECK_RC(acp_connection_send_notification(c, "session/update", "{}"), ACP_ERR_INVALID_ARGUMENT);
    CHECK_LAST_ERROR();
    /* A known update kind without its required content. (An unknown kind
     * passes: it may be a newer schema's, and is kept as is.) */
    CHECK_RC(acp_connection_send_notification(c, "session/update",
                                              "{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\"}}"),
             ACP_ERR_INVALID_ARGUMENT);
    CHECK(id == -1);
    /* Extension methods (_-prefixed) pass unchecked. */
    CHECK_RC(acp_connection_send_notification(c, "_ext/ping", "{\"x\":[1,2]}"), ACP_OK);
    /* A valid session/update goes out, and is the first thing on the wire. */
    const char *update = "{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\","
                         "\"content\":{\"type\":\"text\",\"text\":\"hi\"}}}";
    CHECK_RC(acp_connection_send_notification(c, "session/update", update), ACP_OK);
    line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"method\":\"_ext/ping\",\"params\":{\"x\":[1,2]}}");
    free(line);
    line = peer_read_line(&p, slow(2000));
    CHECK_CONTAINS(line, "\"method\":\"session/update\"");
    CHECK_CONTAINS(line, "\"text\":\"hi\"");
    free(line);
    CHECK_EQ_INT(atomic_load(&r.on_main_thread), 0);
    finish(c, &p, &r);
}

/* ACP_SIDE_CLIENT mirrors it: agent methods go out, client ones come in. */
static void test_client_side_checks(void) {
    harness_section("ACP_SIDE_CLIENT checks in and out");
    static recorder r;
    recorder_init(&r);
    acp_handlers h = handlers_for(&r);
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_CLIENT, &h, &c), ACP_OK);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}");
    char *line = peer_read_line(&p, slow(2000));
    CHECK(json_int(line, "code", 0) == -32601);
    free(line);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"fs/read_text_file\",\"params\":{\"sessionId\":\"s\"}}");
    line = peer_read_line(&p, slow(2000));
    CHECK(json_int(line, "code", 0) == -32602);
    free(line);
    CHECK_EQ_INT(latch_get(&r.requests), 0);
    char *json = NULL;
    CHECK_RC(acp_connection_request(c, "fs/read_text_file", "{\"sessionId\":\"s\",\"path\":\"/x\"}", 100, &json),
             ACP_ERR_INVALID_ARGUMENT);
    CHECK_RC(acp_connection_send_request(c, "initialize", "{\"protocolVersion\":1}", NULL, NULL, NULL), ACP_OK);
    line = peer_read_line(&p, slow(2000));
    CHECK_CONTAINS(line, "\"method\":\"initialize\"");
    free(line);
    finish(c, &p, &r);
}

/* ---- ordering ------------------------------------------------------------ */

#define NOTIFICATIONS 1000

typedef struct {
    recorder *r;
    latch done;
    atomic_int seen_before; /* notifications handled when the answer came */
    atomic_int was_ok;
} response_probe;

static void on_response(void *user_data, const acp_connection *conn, int64_t request_id, const char *result,
                        const acp_error *error) {
    (void)conn;
    response_probe *probe = user_data;
    (void)request_id;
    atomic_store(&probe->seen_before, latch_get(&probe->r->notifications));
    atomic_store(&probe->was_ok, result != NULL && error == NULL);
    latch_add(&probe->done, 1);
}

static void test_notification_order(void) {
    harness_section("1000 notifications in order; a response after them");
    static recorder r;
    recorder_init(&r);
    acp_handlers h = handlers_for(&r);
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);

    /* A request of ours, answered by the peer right after 1000
     * notifications: the response callback must see all of them handled. */
    static response_probe probe;
    latch fresh = LATCH_INIT;
    probe.r = &r;
    probe.done = fresh;
    int64_t id = -1;
    CHECK_RC(acp_connection_send_request(c, "question", "{}", on_response, &probe, &id), ACP_OK);
    char *line = peer_read_line(&p, slow(2000));
    CHECK(json_int(line, "id", -2) == id);
    free(line);

    /* One big write: many messages per read on the library's side. */
    size_t cap = NOTIFICATIONS * 64 + 128, len = 0;
    char *burst = malloc(cap);
    for (int i = 0; i < NOTIFICATIONS; i++)
        len += (size_t)snprintf(burst + len, cap - len,
                                "{\"jsonrpc\":\"2.0\",\"method\":\"seq\",\"params\":{\"i\":%d}}\n", i);
    snprintf(burst + len, cap - len, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"ok\":true}}\n",
             (long long)id);
    peer_write(&p, burst);
    free(burst);

    CHECK(latch_wait(&r.notifications, NOTIFICATIONS, slow(20000)));
    CHECK(latch_wait(&probe.done, 1, slow(5000)));
    CHECK_EQ_INT(latch_get(&r.notifications), NOTIFICATIONS);
    CHECK_EQ_INT(atomic_load(&r.expected_seq), NOTIFICATIONS);
    CHECK_EQ_INT(atomic_load(&r.out_of_order), 0);
    CHECK_EQ_INT(atomic_load(&r.overlapped), 0);
    CHECK_EQ_INT(atomic_load(&probe.seen_before), NOTIFICATIONS);
    CHECK(atomic_load(&probe.was_ok));
    CHECK_EQ_INT(atomic_load(&r.on_main_thread), 0);

    /* A request after notifications is handled after them as well. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"seq\",\"params\":{\"i\":%d}}", NOTIFICATIONS);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":\"str-id\",\"method\":\"after\"}");
    line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":\"str-id\",\"result\":{\"protocolVersion\":1}}");
    free(line);
    CHECK_EQ_INT(latch_get(&r.notifications), NOTIFICATIONS + 1);
    finish(c, &p, &r);
}

/* The peer hangs up: on_close runs once with a reason. */
static void test_peer_hangs_up(void) {
    harness_section("peer hangs up");
    static recorder r;
    recorder_init(&r);
    acp_handlers h = handlers_for(&r);
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);
    peer_close(&p);
    CHECK_RC(acp_connection_wait_closed(c, slow(5000)), ACP_OK);
    CHECK(acp_connection_is_closed(c));
    CHECK(latch_wait(&r.closed, 1, slow(5000)));
    char *reason = acp_connection_close_reason(c);
    CHECK(reason != NULL && reason[0] != '\0');
    fprintf(stderr, "  close reason: %s\n", reason ? reason : "(null)");
    acp_string_free(reason);
    acp_connection_free(c);
    sleep_ms(50);
    CHECK_EQ_INT(latch_get(&r.closed), 1);
}

/* ---- callbacks vs. the connection pointer and on_close's end ------------- */

static atomic_int early_calls, calls_before_out;

/* user_data is the address of the `*out` the constructor fills in. */
static void early_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                          acp_responder *responder) {
    (void)conn;
    (void)method;
    (void)params;
    if (__atomic_load_n((acp_connection **)user_data, __ATOMIC_ACQUIRE) == NULL)
        atomic_fetch_add(&calls_before_out, 1);
    CHECK_RC(acp_responder_ok(responder, "{}"), ACP_OK);
    atomic_fetch_add(&early_calls, 1);
}

/* A request already waiting when the connection is made: its callback may
 * run before acp_connection_fds has written *out, and callbacks are not
 * given the connection, so a callback cannot always reach it. */
static void test_callback_before_out(void) {
    harness_section("a callback can run before *out is written");
    int trials = 100;
    for (int i = 0; i < trials; i++) {
        int sv[2];
        CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        const char *request = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"early\"}\n";
        CHECK(write(sv[0], request, strlen(request)) == (ssize_t)strlen(request));
        acp_connection *c = NULL;
        acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &c, .on_request = early_request};
        CHECK_RC(acp_connection_fds(sv[1], dup(sv[1]), NULL, &h, &c), ACP_OK);
        peer p = {.fd = sv[0]};
        char *line = peer_read_line(&p, slow(3000)); /* the answer */
        CHECK(line != NULL);
        free(line);
        acp_connection_free(c);
        peer_close(&p);
    }
    fprintf(stderr, "  callback ran before *out was written: %d of %d\n", atomic_load(&calls_before_out), trials);
    CHECK_THAT(atomic_load(&calls_before_out) == 0,
                "a callback can run before acp_connection_fds/_spawn/_stdio has written *out");
}

static atomic_int slow_close_done;

static void slow_on_close(void *user_data, const acp_connection *conn, const char *reason) {
    (void)conn;
    (void)user_data;
    (void)reason;
    sleep_ms(200);
    atomic_store(&slow_close_done, 1);
}

/* When may C free what user_data points to? Not after wait_closed, nor
 * after free: on_close may still be running (only acp_shutdown waits). */
static void test_on_close_vs_wait_closed(void) {
    harness_section("on_close still running after wait_closed");
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .on_close = slow_on_close};
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);
    peer_close(&p);
    CHECK_RC(acp_connection_wait_closed(c, slow(5000)), ACP_OK);
    CHECK_THAT(atomic_load(&slow_close_done),
                "acp_connection_wait_closed returns before on_close has returned (when is user_data free?)");
    acp_connection_free(c);
    long long deadline = now_ms() + slow(3000);
    while (!atomic_load(&slow_close_done) && now_ms() < deadline) sleep_ms(5);
    CHECK(atomic_load(&slow_close_done)); /* it does run, once */
}

int main(void) {
    harness_name = "test_wire";
    main_thread = pthread_self();
    test_bad_json_not_sent();
    test_responder_bad_json();
    test_agent_side_checks();
    test_client_side_checks();
    test_notification_order();
    test_peer_hangs_up();
    test_callback_before_out();
    test_on_close_vs_wait_closed();
    acp_shutdown();
    return harness_finish();
}
