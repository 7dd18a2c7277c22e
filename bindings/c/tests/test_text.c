/*
 * test_text.c: text connections (acp_text_connection_*), whose events come
 * as the engine's JSON batches and whose sends never block.
 *   A raw peer on a socketpair: a batch with a notification and a request
 *   (kinds as acp_event_kind), the request answered (a result, an error,
 *   a result that is not JSON: refused, the peer gets -32603), our request
 *   and its RESULT event, a notification queued, a batch larger than the
 *   buffer (its length, then the same batch), the close as the last event
 *   and then ACP_TEXT_END.
 *   An agent-side connection: params that fail the schema are refused with
 *   the JSON-RPC error in acp_last_error_json; invalid UTF-8 is refused.
 *   A spawned `cat` (everything we send comes back): our request comes
 *   back as the peer's request, our answer as its result.
 *   A child process whose stdin/stdout are a text connection (_stdio).
 *   acp_shutdown under an open connection: a thread waiting for events
 *   gets the pending request's failure and the close.
 */
#include "harness.h"

#include <sys/wait.h>

#define BATCH 65536

/* The next batch as a NUL-terminated string in `buffer` (NULL at the end
 * or on a failure, after a failed check). */
static char *next_batch(acp_text_connection *c, char *buffer, int line) {
    int64_t len = acp_text_connection_next_events(c, (uint8_t *)buffer, BATCH - 1);
    atomic_fetch_add(&harness_checks, 1);
    if (len < 0 || len >= BATCH) {
        harness_fail(__FILE__, line, "next_events returned %lld", (long long)len);
        return NULL;
    }
    buffer[len] = '\0';
    return buffer;
}
#define NEXT_BATCH(c, buffer) next_batch((c), (buffer), __LINE__)

/* Send `text` as bytes with its length (no NUL). */
static int64_t notify(acp_text_connection *c, const char *method, const char *params) {
    return acp_text_connection_send_notification(c, (const uint8_t *)method, strlen(method),
                                                 (const uint8_t *)params, params ? strlen(params) : 0);
}

static int64_t request(acp_text_connection *c, const char *method, const char *params) {
    return acp_text_connection_send_request(c, (const uint8_t *)method, strlen(method), (const uint8_t *)params,
                                            params ? strlen(params) : 0);
}

static int64_t respond(acp_text_connection *c, uint64_t token, const char *body, int is_error) {
    return acp_text_connection_respond(c, token, (const uint8_t *)body, strlen(body), is_error);
}

static acp_result text_peer(peer *p, acp_side side, acp_text_connection **out) {
    int sv[2];
    memset(p, 0, sizeof *p);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        perror("socketpair");
        exit(2);
    }
    p->fd = sv[0];
    acp_options options = {.struct_size = sizeof(acp_options), .side = side};
    return acp_text_connection_fds(sv[1], dup(sv[1]), &options, out);
}

static void test_raw_peer(void) {
    harness_section("events as JSON batches, answers, our requests, the close");
    peer p;
    acp_text_connection *c = NULL;
    CHECK_RC(text_peer(&p, ACP_SIDE_RAW, &c), ACP_OK);
    static char buffer[BATCH];

    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"note\",\"params\":{\"k\":\"v\"}}");
    char *batch = NEXT_BATCH(c, buffer);
    CHECK_STR_EQ(batch, "[[1,\"note\",{\"k\":\"v\"}]]");

    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ask\",\"params\":{\"q\":1}}");
    batch = NEXT_BATCH(c, buffer);
    unsigned long long token = 0;
    CHECK(batch && sscanf(batch, "[[0,%llu,\"ask\",{\"q\":1}]]", &token) == 1);
    CHECK_EQ_INT(respond(c, token, "{\"a\":6}", 0), 1);
    char *line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"a\":6}}");
    free(line);
    /* Answered: no answer is wanted any more. */
    CHECK_EQ_INT(respond(c, token, "{\"a\":6}", 0), 0);

    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ask\",\"params\":{\"q\":1}}");
    batch = NEXT_BATCH(c, buffer);
    CHECK(batch && sscanf(batch, "[[0,%llu,\"ask\",{\"q\":1}]]", &token) == 1);
    CHECK_EQ_INT(respond(c, token, "{\"code\":-32001,\"message\":\"no\"}", 1), 1);
    line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{\"code\":-32001,\"message\":\"no\"}}");
    free(line);

    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ask\",\"params\":{\"q\":1}}");
    batch = NEXT_BATCH(c, buffer);
    CHECK(batch && sscanf(batch, "[[0,%llu,\"ask\",{\"q\":1}]]", &token) == 1);
    CHECK_EQ_INT(respond(c, token, "{not json", 0), ACP_TEXT_REFUSED);
    CHECK_LAST_ERROR();
    line = peer_read_line(&p, slow(2000));
    CHECK_CONTAINS(line, "\"id\":9,\"error\":{\"code\":-32603");
    free(line);

    int64_t id = request(c, "ping", "{\"n\":1}");
    CHECK(id >= 0);
    line = peer_read_line(&p, slow(2000));
    char expected[256];
    snprintf(expected, sizeof expected, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"ping\",\"params\":{\"n\":1}}",
             (long long)id);
    CHECK_STR_EQ(line, expected);
    free(line);
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"pong\":true}}", (long long)id);
    batch = NEXT_BATCH(c, buffer);
    snprintf(expected, sizeof expected, "[[2,%lld,{\"pong\":true}]]", (long long)id);
    CHECK_STR_EQ(batch, expected);

    CHECK_EQ_INT(notify(c, "tell", NULL), ACP_TEXT_QUEUED);
    line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"method\":\"tell\"}");
    free(line);

    /* A batch larger than the buffer: its length, then the same batch. */
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"note\",\"params\":{\"k\":\"a longer value\"}}");
    int64_t needed = acp_text_connection_next_events(c, (uint8_t *)buffer, 4);
    CHECK_EQ_INT(needed, (int64_t)strlen("[[1,\"note\",{\"k\":\"a longer value\"}]]"));
    batch = NEXT_BATCH(c, buffer);
    CHECK_STR_EQ(batch, "[[1,\"note\",{\"k\":\"a longer value\"}]]");

    /* The peer leaves: the close is the last event, then the end. */
    peer_close(&p);
    batch = NEXT_BATCH(c, buffer);
    CHECK(batch && strncmp(batch, "[[6,", 4) == 0);
    CHECK_EQ_INT(acp_text_connection_next_events(c, (uint8_t *)buffer, BATCH), ACP_TEXT_END);
    CHECK_EQ_INT(notify(c, "tell", NULL), ACP_TEXT_REFUSED);
    CHECK(acp_last_error_json() != NULL);
    acp_text_connection_free(c);
    acp_text_connection_free(NULL);
}

static void test_refusals(void) {
    harness_section("refused sends: the schema's JSON-RPC error, invalid UTF-8, NULL");
    peer p;
    acp_text_connection *c = NULL;
    CHECK_RC(text_peer(&p, ACP_SIDE_AGENT, &c), ACP_OK);
    CHECK_EQ_INT(notify(c, "session/update", "{\"sessionId\":1}"), ACP_TEXT_REFUSED);
    const char *json = acp_last_error_json();
    CHECK_CONTAINS(json, "\"code\":-32602");
    CHECK_EQ_INT(request(c, "not/a/client/method", "{}"), ACP_TEXT_REFUSED);
    CHECK_CONTAINS(acp_last_error_json(), "\"code\":-32601");
    const uint8_t bad[] = {0xff, 0xfe};
    CHECK_EQ_INT(acp_text_connection_send_notification(c, bad, sizeof bad, NULL, 0), ACP_TEXT_REFUSED);
    CHECK_CONTAINS(acp_last_error_message(), "not UTF-8");
    CHECK_EQ_INT(notify(NULL, "x", NULL), ACP_TEXT_REFUSED);
    CHECK_CONTAINS(acp_last_error_message(), "NULL");
    CHECK(acp_last_error_json() == NULL);
    /* Nothing refused reached the peer; the connection still works. */
    CHECK_EQ_INT(notify(c, "_ext/hello", "{}"), ACP_TEXT_QUEUED);
    char *line = peer_read_line(&p, slow(2000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"method\":\"_ext/hello\",\"params\":{}}");
    free(line);
    acp_text_connection_close(c);
    static char buffer[BATCH];
    char *batch = NEXT_BATCH(c, buffer);
    CHECK(batch && strncmp(batch, "[[6,", 4) == 0);
    acp_text_connection_free(c);
    peer_close(&p);
}

static void test_spawned_cat(void) {
    harness_section("a spawned cat: our request comes back as the peer's, our answer as its result");
    const char *argv[] = {"cat", NULL};
    acp_text_connection *c = NULL;
    CHECK_RC(acp_text_connection_spawn(argv, NULL, NULL, NULL, &c), ACP_OK);
    if (!c) return;
    static char buffer[BATCH];
    int64_t id = request(c, "echo", "{\"x\":1}");
    CHECK(id >= 0);
    char *batch = NEXT_BATCH(c, buffer);
    unsigned long long token = 0;
    CHECK(batch && sscanf(batch, "[[0,%llu,\"echo\",{\"x\":1}]]", &token) == 1);
    CHECK_EQ_INT(respond(c, token, "{\"y\":2}", 0), 1);
    batch = NEXT_BATCH(c, buffer);
    char expected[128];
    snprintf(expected, sizeof expected, "[[2,%lld,{\"y\":2}]]", (long long)id);
    CHECK_STR_EQ(batch, expected);
    acp_text_connection_close(c);
    batch = NEXT_BATCH(c, buffer);
    CHECK(batch && strncmp(batch, "[[6,", 4) == 0);
    CHECK_EQ_INT(acp_text_connection_next_events(c, (uint8_t *)buffer, BATCH), ACP_TEXT_END);
    acp_text_connection_free(c);
}

/* The child: answer one request on its stdin/stdout, then take events to
 * the end. Exit status 0 when everything went as expected. */
static int stdio_child(void) {
    acp_text_connection *c = NULL;
    if (acp_text_connection_stdio(NULL, &c) != ACP_OK) return 10;
    static char buffer[BATCH];
    int64_t len = acp_text_connection_next_events(c, (uint8_t *)buffer, BATCH - 1);
    if (len < 0) return 11;
    buffer[len] = '\0';
    unsigned long long token = 0;
    if (sscanf(buffer, "[[0,%llu,\"hi\"", &token) != 1) return 12;
    if (respond(c, token, "\"hello\"", 0) != 1) return 13;
    for (;;) {
        len = acp_text_connection_next_events(c, (uint8_t *)buffer, BATCH);
        if (len == ACP_TEXT_END) break;
        if (len < 0) return 14;
    }
    acp_text_connection_free(c);
    return 0;
}

static void test_stdio(void) {
    harness_section("a process whose stdin/stdout are a text connection");
    peer p;
    int sv[2];
    memset(&p, 0, sizeof p);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        perror("socketpair");
        exit(2);
    }
    pid_t child = fork();
    if (child == 0) {
        dup2(sv[1], 0);
        dup2(sv[1], 1);
        close(sv[0]);
        close(sv[1]);
        _exit(stdio_child());
    }
    close(sv[1]);
    p.fd = sv[0];
    peer_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hi\"}");
    char *line = peer_read_line(&p, slow(3000));
    CHECK_STR_EQ(line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"hello\"}");
    free(line);
    peer_close(&p);
    int status = -1;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK_EQ_INT(WEXITSTATUS(status), 0);
}

/* A thread taking a text connection's events until ACP_TEXT_END. */
typedef struct {
    acp_text_connection *c;
    char events[BATCH];
    size_t len;
    int64_t last;
    latch done;
} event_taker;

static void *take_events_until_the_end(void *arg) {
    event_taker *t = arg;
    for (;;) {
        size_t room = sizeof t->events - t->len - 1;
        t->last = acp_text_connection_next_events(t->c, (uint8_t *)t->events + t->len, room);
        if (t->last < 0 || (size_t)t->last > room)
            break;
        t->len += (size_t)t->last;
    }
    t->events[t->len] = '\0';
    latch_add(&t->done, 1);
    return NULL;
}

/* acp_shutdown cuts off a connection still open: a thread waiting for its
 * events gets the failure of the request the peer never answered and the
 * close, then ACP_TEXT_END (it waited forever before); sends are refused. */
static void test_shutdown_cuts_off_a_waiting_thread(void) {
    harness_section("acp_shutdown: a thread waiting for events gets the close");
    peer p;
    acp_text_connection *c = NULL;
    CHECK_RC(text_peer(&p, ACP_SIDE_RAW, &c), ACP_OK);
    int64_t id = request(c, "ask", "{}");
    CHECK(id >= 0);
    char *line = peer_read_line(&p, slow(2000)); /* sent; the peer never answers */
    CHECK(line && json_has(line, "\"method\":\"ask\""));
    free(line);
    static event_taker taker = {.done = LATCH_INIT};
    taker.c = c;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, take_events_until_the_end, &taker) == 0);
    acp_shutdown();
    CHECK(latch_wait(&taker.done, 1, slow(5000)));
    if (latch_get(&taker.done) == 1) {
        pthread_join(thread, NULL);
        CHECK_EQ_INT(taker.last, ACP_TEXT_END);
        char failed[64];
        snprintf(failed, sizeof failed, "[3,%lld,{\"code\":-32099", (long long)id);
        CHECK(json_has(taker.events, failed));
        CHECK(json_has(taker.events, "[6,\"the engine's runtime was shut down\"]"));
    }
    CHECK_EQ_INT(request(c, "ask", "{}"), ACP_TEXT_REFUSED);
    acp_text_connection_free(c);
    peer_close(&p);
}

int main(void) {
    harness_name = "test_text";
    /* First: it forks, and a child of a process whose library threads run
     * would inherit a runtime without its threads. */
    test_stdio();
    test_raw_peer();
    test_refusals();
    test_spawned_cat();
    test_shutdown_cuts_off_a_waiting_thread();
    acp_shutdown();
    return harness_finish();
}
