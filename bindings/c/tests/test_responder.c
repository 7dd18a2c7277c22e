/*
 * test_responder.c: the rules for answering inbound requests, checked on
 * the bytes the raw peer receives.
 *   - answer later, from another thread (a pthread of ours);
 *   - answer twice: ACP_ERR_ALREADY_ANSWERED, one answer on the wire;
 *   - acp_responder_error with and without data;
 *   - never answered: -32603 when C calls acp_connection_close;
 *   - $/cancel_request: acp_responder_is_cancelled turns true, the peer gets
 *     -32800, a late answer puts nothing more on the wire;
 *   - requests are delivered concurrently;
 *   - no on_request handler: -32601.
 */
#include "harness.h"

#define MAX_HELD 8

/* Callbacks park responders here; the test answers them later. */
typedef struct {
    pthread_mutex_t mutex;
    acp_responder *held[MAX_HELD];
    char methods[MAX_HELD][64];
    int used;
    latch arrived;
} parking;

static parking lot = {PTHREAD_MUTEX_INITIALIZER, {0}, {{0}}, 0, LATCH_INIT};

static void park(void *user_data, const acp_connection *conn, const char *method, const char *params, acp_responder *responder) {
    (void)conn;
    parking *l = user_data;
    (void)params;
    pthread_mutex_lock(&l->mutex);
    int slot = l->used++;
    if (slot < MAX_HELD) {
        l->held[slot] = responder;
        snprintf(l->methods[slot], sizeof l->methods[slot], "%s", method);
    }
    pthread_mutex_unlock(&l->mutex);
    latch_add(&l->arrived, 1);
    /* Return without answering: the responder stays valid. */
}

static acp_responder *parked(int slot) {
    pthread_mutex_lock(&lot.mutex);
    acp_responder *r = lot.held[slot];
    pthread_mutex_unlock(&lot.mutex);
    return r;
}

static void lot_reset(void) {
    pthread_mutex_lock(&lot.mutex);
    memset(lot.held, 0, sizeof lot.held);
    lot.used = 0;
    pthread_mutex_unlock(&lot.mutex);
    pthread_mutex_lock(&lot.arrived.mutex);
    lot.arrived.count = 0;
    pthread_mutex_unlock(&lot.arrived.mutex);
}

/* ---- answer later, from a thread of ours -------------------------------- */

typedef struct {
    acp_responder *responder;
    int rc;
} answer_job;

static void *answer_later(void *arg) {
    answer_job *job = arg;
    sleep_ms(50);
    job->rc = acp_responder_ok(job->responder, "{\"answered\":\"later\"}");
    return NULL;
}

static void test_answer_later_and_twice(void) {
    harness_section("answer later from a pthread; answer twice");
    lot_reset();
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &lot, .on_request = park};
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);

    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"slow\",\"params\":{}}");
    CHECK(latch_wait(&lot.arrived, 1, slow(5000)));
    acp_responder *responder = parked(0);
    CHECK(responder != NULL);
    CHECK(!acp_responder_is_cancelled(responder));
    /* Nothing is answered while the callback has returned unanswered. */
    char *line = peer_read_line(&p, 100);
    CHECK(line == NULL);
    free(line);

    answer_job job = {responder, -1};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, answer_later, &job) == 0);
    pthread_join(thread, NULL);
    CHECK_EQ_INT(job.rc, ACP_OK);
    line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"answered\":\"later\"}}");
    free(line);

    /* Twice: refused, whichever function; a spent responder counts as
     * cancelled. */
    CHECK_RC(acp_responder_ok(responder, "{}"), ACP_ERR_ALREADY_ANSWERED);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_responder_error(responder, -32000, "again", NULL), ACP_ERR_ALREADY_ANSWERED);
    CHECK(acp_responder_is_cancelled(responder));

    /* Errors: with data, without data; a NULL message is refused and the
     * responder is not spent by that. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"e1\"}");
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"e2\"}");
    CHECK(latch_wait(&lot.arrived, 3, slow(5000)));
    for (int slot = 1; slot <= 2; slot++) {
        if (strcmp(lot.methods[slot], "e1") == 0) {
            CHECK_RC(acp_responder_error(parked(slot), -32001, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
            CHECK_RC(acp_responder_error(parked(slot), -32001, "nope", "{\"why\":[1,2]}"), ACP_OK);
        } else {
            CHECK_RC(acp_responder_error(parked(slot), -32002, "missing", NULL), ACP_OK);
        }
    }
    for (int i = 0; i < 2; i++) {
        line = peer_read_line(&p, slow(2000));
        if (json_int(line, "id", 0) == 2)
            CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32001,\"message\":\"nope\","
                               "\"data\":{\"why\":[1,2]}}}");
        else
            CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32002,\"message\":\"missing\"}}");
        free(line);
    }
    /* No second answer to anything went out. */
    line = peer_read_line(&p, 100);
    CHECK(line == NULL);
    free(line);

    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK(peer_sees_eof(&p, slow(3000)));
    acp_connection_free(c);
    peer_close(&p);
}

/* ---- unanswered at close: -32603 ----------------------------------------- */

static void test_unanswered_at_close(void) {
    harness_section("unanswered requests get -32603 at close");
    lot_reset();
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &lot, .on_request = park};
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"never\",\"params\":[]}");
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"never\",\"params\":[]}");
    CHECK(latch_wait(&lot.arrived, 2, slow(5000)));
    CHECK_RC(acp_connection_close(c), ACP_OK);
    int got10 = 0, got11 = 0;
    for (int i = 0; i < 2; i++) {
        char *line = peer_read_line(&p, slow(3000));
        CHECK(json_int(line, "code", 0) == -32603);
        long long id = json_int(line, "id", -1);
        got10 += id == 10;
        got11 += id == 11;
        free(line);
    }
    CHECK(got10 == 1 && got11 == 1);
    CHECK(peer_sees_eof(&p, slow(3000)));
    CHECK_RC(acp_connection_wait_closed(c, slow(5000)), ACP_OK);
    /* Too late now: the responders are spent and count as cancelled. */
    CHECK(acp_responder_is_cancelled(parked(0)));
    CHECK_RC(acp_responder_ok(parked(0), "{}"), ACP_ERR_ALREADY_ANSWERED);
    CHECK_RC(acp_responder_error(parked(1), 1, "late", NULL), ACP_ERR_ALREADY_ANSWERED);
    acp_connection_free(c);
    peer_close(&p);
}

/* ---- $/cancel_request from the peer -------------------------------------- */

typedef struct {
    latch started, saw_cancel;
    atomic_int late_answer_rc;
} canceller;

/* A long-running handler that polls acp_responder_is_cancelled. */
static void long_running(void *user_data, const acp_connection *conn, const char *method, const char *params,
                         acp_responder *responder) {
    (void)conn;
    canceller *k = user_data;
    (void)method;
    (void)params;
    latch_add(&k->started, 1);
    long long deadline = now_ms() + slow(5000);
    while (!acp_responder_is_cancelled(responder) && now_ms() < deadline) sleep_ms(2);
    if (acp_responder_is_cancelled(responder)) latch_add(&k->saw_cancel, 1);
    /* "answering is still allowed, and harmless": nothing more may reach
     * the wire (the peer already has -32800). */
    atomic_store(&k->late_answer_rc, acp_responder_ok(responder, "{\"late\":true}"));
}

static void test_peer_cancels(void) {
    harness_section("$/cancel_request from the peer");
    static canceller k = {LATCH_INIT, LATCH_INIT, -1};
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &k, .on_request = long_running};
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"work\",\"params\":{}}");
    CHECK(latch_wait(&k.started, 1, slow(5000)));
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancel_request\",\"params\":{\"requestId\":42}}");
    char *line = peer_read_line(&p, slow(3000));
    CHECK(json_int(line, "id", -1) == 42);
    CHECK(json_int(line, "code", 0) == -32800);
    free(line);
    CHECK(latch_wait(&k.saw_cancel, 1, slow(5000)));
    sleep_ms(50); /* let the late answer happen */
    int rc = atomic_load(&k.late_answer_rc);
    fprintf(stderr, "  answer after $/cancel_request returned %s\n", acp_result_name(rc));
    CHECK(rc == ACP_OK || rc == ACP_ERR_ALREADY_ANSWERED);
    line = peer_read_line(&p, 200);
    CHECK(line == NULL); /* no second answer */
    free(line);
    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK(peer_sees_eof(&p, slow(3000)));
    acp_connection_free(c);
    peer_close(&p);
}

/* ---- requests run concurrently ------------------------------------------- */

typedef struct {
    latch entered;
} rendezvous;

/* Each request waits until both are inside their callbacks at once. */
static void meet(void *user_data, const acp_connection *conn, const char *method, const char *params, acp_responder *responder) {
    (void)conn;
    rendezvous *r = user_data;
    (void)method;
    (void)params;
    latch_add(&r->entered, 1);
    int both = latch_wait(&r->entered, 2, slow(5000));
    CHECK_RC(acp_responder_ok(responder, both ? "\"together\"" : "\"alone\""), ACP_OK);
}

static void test_concurrent_requests(void) {
    harness_section("requests are delivered concurrently");
    static rendezvous r = {LATCH_INIT};
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &r, .on_request = meet};
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}");
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}");
    for (int i = 0; i < 2; i++) {
        char *line = peer_read_line(&p, slow(6000));
        CHECK_CONTAINS(line, "\"result\":\"together\"");
        free(line);
    }
    acp_connection_free(c);
    CHECK(peer_sees_eof(&p, slow(3000)));
    peer_close(&p);
}

/* ---- no request handler: -32601 ------------------------------------------ */

static void test_no_request_handler(void) {
    harness_section("on_request NULL: -32601");
    acp_handlers h = ACP_HANDLERS_INIT;
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"dropped\",\"params\":{}}");
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"anything\",\"params\":{}}");
    char *line = peer_read_line(&p, slow(2000));
    CHECK(json_int(line, "id", -1) == 5);
    CHECK(json_int(line, "code", 0) == -32601);
    free(line);
    acp_connection_free(c);
    CHECK(peer_sees_eof(&p, slow(3000)));
    peer_close(&p);
}


/* ---- on_cancel ------------------------------------------------------------ */

typedef struct {
    latch started, cancelled;
    acp_responder *cancelled_responder;
    acp_responder *held;
} cancel_seen;

static void hold(void *user_data, const acp_connection *conn, const char *method, const char *params,
                 acp_responder *responder) {
    (void)conn;
    (void)method;
    (void)params;
    cancel_seen *k = user_data;
    k->held = responder;
    latch_add(&k->started, 1);
}

static void on_cancel(void *user_data, const acp_connection *conn, acp_responder *responder) {
    (void)conn;
    cancel_seen *k = user_data;
    k->cancelled_responder = responder;
    latch_add(&k->cancelled, 1);
}

static void test_on_cancel(void) {
    harness_section("on_cancel: the peer's $/cancel_request, in order");
    static cancel_seen k = {LATCH_INIT, LATCH_INIT, NULL, NULL};
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &k, .on_request = hold, .on_cancel = on_cancel};
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_RAW, &h, &c), ACP_OK);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"work\",\"params\":{}}");
    CHECK(latch_wait(&k.started, 1, slow(5000)));
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancel_request\",\"params\":{\"requestId\":7}}");
    CHECK(latch_wait(&k.cancelled, 1, slow(5000)));
    CHECK(k.cancelled_responder == k.held);
    CHECK(acp_responder_is_cancelled(k.held));
    CHECK_RC(acp_responder_ok(k.held, "{}"), ACP_ERR_ALREADY_ANSWERED);
    char *line = peer_read_line(&p, slow(3000));
    CHECK(json_int(line, "code", 0) == -32800);
    free(line);
    acp_connection_free(c);
    peer_close(&p);
}

int main(void) {
    harness_name = "test_responder";
    test_answer_later_and_twice();
    test_unanswered_at_close();
    test_peer_cancels();
    test_on_cancel();
    test_concurrent_requests();
    test_no_request_handler();
    acp_shutdown();
    return harness_finish();
}
