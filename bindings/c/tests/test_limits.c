/* Limits against a peer that stops reading (reliability/flood_peer.py), the
 * C side of core/tests/limits.rs: the connection stops reading at its
 * configured bounds, every answer arrives once the peer reads, and the
 * stall timeout closes a connection whose peer never reads. */
#include "harness.h"

static char padding[1100];
static char report[512];
static latch reported = LATCH_INIT;
static latch closed = LATCH_INIT;
static char close_reason[512];

static void answer(void *user_data, const acp_connection *connection, const char *method, const char *params_json,
                   acp_responder *responder) {
    (void)user_data, (void)connection, (void)method, (void)params_json;
    acp_responder_ok(responder, padding);
}

static void on_report(void *user_data, const acp_connection *connection, const char *method,
                      const char *params_json) {
    (void)user_data, (void)connection, (void)method;
    snprintf(report, sizeof report, "%s", params_json ? params_json : "");
    latch_add(&reported, 1);
}

static void on_close(void *user_data, const acp_connection *connection, const char *reason) {
    (void)user_data, (void)connection;
    snprintf(close_reason, sizeof close_reason, "%s", reason);
    latch_add(&closed, 1);
}

static long number(const char *json, const char *pointer) {
    double value = 0;
    acp_json_get_number(json, pointer, &value);
    return (long)value;
}

static void spawn_flood_peer(const char *count, int read, const acp_options *options, acp_connection **out) {
    char peer[4096];
    snprintf(peer, sizeof peer, "%s/reliability/flood_peer.py", getenv("ACP_REPO") ? getenv("ACP_REPO") : ".");
    const char *argv[] = {"python3", peer, count, read ? "--read" : NULL, NULL};
    acp_handlers handlers = {.struct_size = sizeof(acp_handlers), .on_request = answer, .on_notification = on_report, .on_close = on_close};
    CHECK_RC(acp_connection_spawn(argv, NULL, NULL, options, &handlers, out), ACP_OK);
}

static void test_held_at_the_limits_and_every_answer_arrives(void) {
    acp_options options = {.struct_size = sizeof(acp_options), .max_in_flight_requests = 64, .max_buffered_bytes = 256 * 1024};
    acp_connection *c = NULL;
    spawn_flood_peer("200000", 1, &options, &c);
    CHECK(latch_wait(&reported, 1, slow(120000)));
    fprintf(stderr, "  report: %s\n", report);
    bool stalled = false;
    CHECK_RC(acp_json_get_bool(report, "/stalled", &stalled), ACP_OK);
    CHECK(stalled);
    long sent = number(report, "/sent");
    CHECK(sent > 0 && sent < 200000);
    CHECK(number(report, "/answered") == sent);
    CHECK(number(report, "/duplicates") == 0);
    CHECK(latch_get(&closed) == 0);
    acp_connection_close(c);
    CHECK_RC(acp_connection_wait_closed(c, slow(10000)), ACP_OK);
    acp_connection_free(c);
}

static void test_the_stall_timeout_closes(void) {
    acp_options options = {.struct_size = sizeof(acp_options), .max_buffered_bytes = 64 * 1024, .output_stall_timeout_ms = 300};
    acp_connection *c = NULL;
    int before = latch_get(&closed);
    spawn_flood_peer("100000", 0, &options, &c);
    CHECK(latch_wait(&closed, before + 1, slow(30000)));
    fprintf(stderr, "  closed: %s\n", close_reason);
    CHECK(strstr(close_reason, "output stalled") != NULL);
    CHECK(strstr(close_reason, "max_buffered_bytes") != NULL);
    CHECK_RC(acp_connection_wait_closed(c, slow(10000)), ACP_OK);
    acp_connection_free(c);
}

int main(void) {
    harness_name = "test_limits";
    memset(padding, 0, sizeof padding);
    strcpy(padding, "{\"padding\":\"");
    memset(padding + strlen(padding), 'x', 1024);
    strcat(padding, "\"}");
    test_held_at_the_limits_and_every_answer_arrives();
    test_the_stall_timeout_closes();
    return harness_finish();
}
