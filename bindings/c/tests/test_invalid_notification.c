/*
 * test_invalid_notification.c: a notification whose params fail the ACP
 * schema is dropped by the engine and told to C. A client-side connection
 * on one end of a socketpair; the test plays the agent on the other and
 * writes claude-agent-acp 0.23's `session/update` `usage_update` with
 * `"used": null` (fails the schema), a notification of a method no schema
 * has (dropped quietly), then a valid `agent_message_chunk`:
 *   - handlers with on_invalid_notification: it is called once, first, with
 *     "session/update" and the -32602 whose data names `used`; the valid
 *     update then reaches on_notification;
 *   - handlers without it (zero-initialised, as before the field existed):
 *     the valid update still arrives;
 *   - an event connection (handlers NULL): ACP_EVENT_INVALID_NOTIFICATION
 *     with the method and the error, then ACP_EVENT_NOTIFICATION.
 */
#include "harness.h"

#define BAD_UPDATE                                                                                                   \
    "{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s-1\",\"update\":"             \
    "{\"sessionUpdate\":\"usage_update\",\"used\":null,\"size\":10}}}"
#define UNKNOWN_NOTIFICATION "{\"jsonrpc\":\"2.0\",\"method\":\"no/such_notification\",\"params\":{}}"
#define GOOD_UPDATE                                                                                                  \
    "{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s-1\",\"update\":"             \
    "{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"after\"}}}}"

static void send_the_three(peer *p) {
    peer_send(p, BAD_UPDATE);
    peer_send(p, UNKNOWN_NOTIFICATION);
    peer_send(p, GOOD_UPDATE);
}

/* ---- callbacks ------------------------------------------------------------ */

typedef struct {
    latch notifications;
    pthread_mutex_t mutex;
    char order[64];   /* "I" per invalid notification, "N" per notification */
    char method[64];  /* the invalid notification's */
    long long code;
    char message[128];
    char data[512];
    char params[512]; /* the valid notification's */
} heard;

static void heard_init(heard *h) {
    memset(h, 0, sizeof *h);
    latch fresh = LATCH_INIT;
    h->notifications = fresh;
    pthread_mutex_init(&h->mutex, NULL);
}

static void append(char *order, char what) {
    size_t n = strlen(order);
    if (n + 1 < 64) {
        order[n] = what;
        order[n + 1] = '\0';
    }
}

static void on_notification(void *user_data, const acp_connection *c, const char *method, const char *params) {
    (void)c;
    (void)method;
    heard *h = user_data;
    pthread_mutex_lock(&h->mutex);
    append(h->order, 'N');
    snprintf(h->params, sizeof h->params, "%s", params ? params : "");
    pthread_mutex_unlock(&h->mutex);
    latch_add(&h->notifications, 1);
}

static void on_invalid_notification(void *user_data, const acp_connection *c, const char *method,
                                    const acp_error *error) {
    (void)c;
    heard *h = user_data;
    pthread_mutex_lock(&h->mutex);
    append(h->order, 'I');
    snprintf(h->method, sizeof h->method, "%s", method ? method : "(null)");
    h->code = error ? error->code : 0;
    snprintf(h->message, sizeof h->message, "%s", error && error->message ? error->message : "(null)");
    snprintf(h->data, sizeof h->data, "%s", error && error->data_json ? error->data_json : "(null)");
    pthread_mutex_unlock(&h->mutex);
}

static void test_callback(void) {
    harness_section("on_invalid_notification: called with -32602, then the valid update arrives");
    static heard h;
    heard_init(&h);
    acp_handlers handlers = {
        .struct_size = sizeof(acp_handlers),
        .user_data = &h,
        .on_notification = on_notification,
        .on_invalid_notification = on_invalid_notification,
    };
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_CLIENT, &handlers, &c), ACP_OK);
    send_the_three(&p);
    CHECK(latch_wait(&h.notifications, 1, slow(5000)));
    pthread_mutex_lock(&h.mutex);
    CHECK_STR_EQ(h.order, "IN");
    CHECK_STR_EQ(h.method, "session/update");
    CHECK_EQ_INT(h.code, -32602);
    CHECK(strcmp(h.message, "(null)") != 0);
    CHECK_CONTAINS(h.data, "used");
    CHECK_CONTAINS(h.params, "\"text\":\"after\"");
    pthread_mutex_unlock(&h.mutex);
    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK_RC(acp_connection_wait_closed(c, slow(5000)), ACP_OK);
    acp_connection_free(c);
    peer_close(&p);
}

static void test_without_the_callback(void) {
    harness_section("without on_invalid_notification: ignored, the valid update arrives");
    static heard h;
    heard_init(&h);
    acp_handlers handlers = ACP_HANDLERS_INIT;
    handlers.user_data = &h;
    handlers.on_notification = on_notification;
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_CLIENT, &handlers, &c), ACP_OK);
    send_the_three(&p);
    CHECK(latch_wait(&h.notifications, 1, slow(5000)));
    pthread_mutex_lock(&h.mutex);
    CHECK_STR_EQ(h.order, "N");
    CHECK_CONTAINS(h.params, "\"text\":\"after\"");
    pthread_mutex_unlock(&h.mutex);
    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK_RC(acp_connection_wait_closed(c, slow(5000)), ACP_OK);
    acp_connection_free(c);
    peer_close(&p);
}

/* ---- events ---------------------------------------------------------------- */

static void test_events(void) {
    harness_section("event connection: ACP_EVENT_INVALID_NOTIFICATION, then ACP_EVENT_NOTIFICATION");
    peer p;
    acp_connection *c = NULL;
    CHECK_RC(peer_connect(&p, ACP_SIDE_CLIENT, NULL, &c), ACP_OK);
    send_the_three(&p);
    acp_event *event = NULL;
    CHECK_RC(acp_connection_next_event(c, slow(5000), &event), ACP_OK);
    CHECK(event != NULL);
    if (event) {
        CHECK_EQ_INT(event->kind, ACP_EVENT_INVALID_NOTIFICATION);
        CHECK_STR_EQ(event->method, "session/update");
        CHECK(event->json == NULL);
        CHECK_EQ_INT(event->error.code, -32602);
        CHECK(event->error.message != NULL);
        CHECK_CONTAINS(event->error.data_json, "used");
        CHECK(event->responder == NULL);
    }
    acp_event_free(event);
    event = NULL;
    CHECK_RC(acp_connection_next_event(c, slow(5000), &event), ACP_OK);
    CHECK(event != NULL);
    if (event) {
        CHECK_EQ_INT(event->kind, ACP_EVENT_NOTIFICATION);
        CHECK_STR_EQ(event->method, "session/update");
        CHECK_CONTAINS(event->json, "\"text\":\"after\"");
        CHECK_EQ_INT(event->error.code, 0);
    }
    acp_event_free(event);
    /* Nothing else: the unknown notification was dropped quietly. */
    event = NULL;
    CHECK_RC(acp_connection_next_event(c, 100, &event), ACP_ERR_TIMEOUT);
    CHECK(event == NULL);
    acp_connection_free(c);
    peer_close(&p);
}

int main(void) {
    harness_name = "test_invalid_notification";
    test_callback();
    test_without_the_callback();
    test_events();
    acp_shutdown();
    return harness_finish();
}
