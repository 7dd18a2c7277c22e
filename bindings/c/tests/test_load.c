/*
 * test_load.c: load through the C ABI, CI-sized (ACP_LOAD_SCALE multiplies
 * it): thousands of requests in flight at once each way, a notification
 * burst handled in order, and a hundred connections in one process. Two
 * library connections talk over socket pairs; everything must complete,
 * correct and in order, and close cleanly (also under valgrind and ASan).
 */
#include "harness.h"

static int scale(void) {
    const char *s = getenv("ACP_LOAD_SCALE");
    return s && atoi(s) > 0 ? atoi(s) : 1;
}

/* ---- an echo peer: answers every request with its params -------------- */

static void echo_request(void *user_data, const acp_connection *conn, const char *method, const char *params, acp_responder *responder) {
    (void)conn;
    (void)user_data;
    (void)method;
    CHECK_RC(acp_responder_ok(responder, params ? params : "null"), ACP_OK);
}

/* Notifications carry {"i":N}; they must arrive with N = 0, 1, 2, ... */
typedef struct {
    latch seen;
    atomic_int out_of_order;
} counter;

static void count_notification(void *user_data, const acp_connection *conn, const char *method, const char *params) {
    (void)conn;
    (void)method;
    counter *c = user_data;
    if (json_int(params, "i", -1) != latch_get(&c->seen)) atomic_fetch_add(&c->out_of_order, 1);
    latch_add(&c->seen, 1);
}

/* Answers carry {"i":N}: they must match the request that asked. */
typedef struct {
    latch done;
    atomic_int wrong;
} answers;

static void on_answer(void *user_data, const acp_connection *conn, int64_t request_id, const char *result, const acp_error *error) {
    (void)conn;
    (void)request_id;
    answers *a = user_data;
    if (!result || error) atomic_fetch_add(&a->wrong, 1);
    latch_add(&a->done, 1);
}

/* Two connections over a socket pair; both echo requests; `right` counts
 * notifications into `c`. */
static void connect_pair(acp_connection **left, acp_connection **right, counter *c) {
    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    acp_handlers echo = {.struct_size = sizeof(acp_handlers), .user_data = NULL, .on_request = echo_request};
    acp_handlers counting = {.struct_size = sizeof(acp_handlers), .user_data = c, .on_request = echo_request, .on_notification = count_notification};
    CHECK_RC(acp_connection_fds(fds[0], dup(fds[0]), NULL, &echo, left), ACP_OK);
    CHECK_RC(acp_connection_fds(fds[1], dup(fds[1]), NULL, &counting, right), ACP_OK);
}

static void close_pair(acp_connection *left, acp_connection *right) {
    CHECK_RC(acp_connection_close(left), ACP_OK);
    CHECK_RC(acp_connection_wait_closed(right, 10000), ACP_OK);
    CHECK_RC(acp_connection_wait_closed(left, 10000), ACP_OK);
    acp_connection_free(left);
    acp_connection_free(right);
}

static void requests_in_flight_each_way(void) {
    int n = 2000 * scale();
    printf("[test_load] %d requests in flight each way\n", n);
    counter c = {LATCH_INIT, 0};
    acp_connection *left, *right;
    connect_pair(&left, &right, &c);
    answers one_way = {LATCH_INIT, 0}, other_way = {LATCH_INIT, 0};
    char params[64];
    for (int i = 0; i < n; i++) {
        snprintf(params, sizeof params, "{\"i\":%d}", i);
        CHECK_RC(acp_connection_send_request(left, "echo", params, on_answer, &one_way, NULL), ACP_OK);
        CHECK_RC(acp_connection_send_request(right, "echo", params, on_answer, &other_way, NULL), ACP_OK);
    }
    CHECK(latch_wait(&one_way.done, n, 60000));
    CHECK(latch_wait(&other_way.done, n, 60000));
    CHECK_EQ_INT(atomic_load(&one_way.wrong), 0);
    CHECK_EQ_INT(atomic_load(&other_way.wrong), 0);
    close_pair(left, right);
}

/* Requests parked in a callback until all have arrived, then answered from
 * the main thread: they are truly all in flight at once, both ways. */
typedef struct {
    latch arrived;
    acp_responder **held;
    char **params;
} holder;

static void hold_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                         acp_responder *responder) {
    (void)conn, (void)method;
    holder *h = user_data;
    int i = json_int(params, "i", -1);
    h->held[i] = responder;
    h->params[i] = strdup(params);
    latch_add(&h->arrived, 1);
}

static void answer_all(holder *h, int n) {
    for (int i = 0; i < n; i++) {
        CHECK_RC(acp_responder_ok(h->held[i], h->params[i]), ACP_OK);
        free(h->params[i]);
    }
}

static void requests_held_in_flight(void) {
    /* 10,000 each way (2,000 under valgrind, where it is slow, not different). */
    int n = (getenv("ACP_UNDER_VALGRIND") ? 2000 : 10000) * scale();
    printf("[test_load] %d requests held in flight each way\n", n);
    holder left_h = {LATCH_INIT, calloc(n, sizeof(acp_responder *)), calloc(n, sizeof(char *))};
    holder right_h = {LATCH_INIT, calloc(n, sizeof(acp_responder *)), calloc(n, sizeof(char *))};
    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    acp_handlers left_handlers = {.struct_size = sizeof(acp_handlers), .user_data = &left_h, .on_request = hold_request};
    acp_handlers right_handlers = {.struct_size = sizeof(acp_handlers), .user_data = &right_h, .on_request = hold_request};
    acp_connection *left, *right;
    /* More than the default limit of requests in flight (1024): holding them
     * all is the point here. */
    acp_options options = {.struct_size = sizeof(acp_options), .max_in_flight_requests = (size_t)n + 1};
    CHECK_RC(acp_connection_fds(fds[0], dup(fds[0]), &options, &left_handlers, &left), ACP_OK);
    CHECK_RC(acp_connection_fds(fds[1], dup(fds[1]), &options, &right_handlers, &right), ACP_OK);
    answers one_way = {LATCH_INIT, 0}, other_way = {LATCH_INIT, 0};
    char params[64];
    for (int i = 0; i < n; i++) {
        snprintf(params, sizeof params, "{\"i\":%d}", i);
        CHECK_RC(acp_connection_send_request(left, "echo", params, on_answer, &one_way, NULL), ACP_OK);
        CHECK_RC(acp_connection_send_request(right, "echo", params, on_answer, &other_way, NULL), ACP_OK);
    }
    CHECK(latch_wait(&right_h.arrived, n, 60000));
    CHECK(latch_wait(&left_h.arrived, n, 60000));
    CHECK_EQ_INT(latch_get(&one_way.done), 0); /* nothing answered yet */
    answer_all(&right_h, n);
    answer_all(&left_h, n);
    CHECK(latch_wait(&one_way.done, n, 60000));
    CHECK(latch_wait(&other_way.done, n, 60000));
    CHECK_EQ_INT(atomic_load(&one_way.wrong), 0);
    CHECK_EQ_INT(atomic_load(&other_way.wrong), 0);
    close_pair(left, right);
    free(left_h.held), free(left_h.params), free(right_h.held), free(right_h.params);
}

static void a_burst_in_order(void) {
    int n = 20000 * scale();
    printf("[test_load] a burst of %d notifications\n", n);
    counter c = {LATCH_INIT, 0};
    acp_connection *left, *right;
    connect_pair(&left, &right, &c);
    char params[64];
    for (int i = 0; i < n; i++) {
        snprintf(params, sizeof params, "{\"i\":%d}", i);
        CHECK_RC(acp_connection_send_notification(left, "tick", params), ACP_OK);
    }
    /* A request after the burst is answered after every notification before it. */
    char *result = NULL;
    CHECK_RC(acp_connection_request(left, "echo", "{\"i\":0}", 60000, &result), ACP_OK);
    acp_string_free(result);
    CHECK_EQ_INT(latch_get(&c.seen), n);
    CHECK_EQ_INT(atomic_load(&c.out_of_order), 0);
    close_pair(left, right);
}

static void a_hundred_connections(void) {
    enum { CONNECTIONS = 100, EACH = 5 };
    printf("[test_load] %d connections in one process\n", CONNECTIONS);
    static counter counters[CONNECTIONS];
    acp_connection *left[CONNECTIONS], *right[CONNECTIONS];
    answers all = {LATCH_INIT, 0};
    for (int k = 0; k < CONNECTIONS; k++) {
        counters[k] = (counter){LATCH_INIT, 0};
        connect_pair(&left[k], &right[k], &counters[k]);
    }
    char params[64];
    for (int k = 0; k < CONNECTIONS; k++) {
        for (int j = 0; j < EACH; j++) {
            snprintf(params, sizeof params, "{\"i\":%d}", k * EACH + j);
            CHECK_RC(acp_connection_send_request(left[k], "echo", params, on_answer, &all, NULL), ACP_OK);
        }
    }
    CHECK(latch_wait(&all.done, CONNECTIONS * EACH, 60000));
    CHECK_EQ_INT(atomic_load(&all.wrong), 0);
    for (int k = 0; k < CONNECTIONS; k++) close_pair(left[k], right[k]);
}

int main(void) {
    requests_in_flight_each_way();
    requests_held_in_flight();
    a_burst_in_order();
    a_hundred_connections();
    acp_shutdown();
    return harness_finish();
}
