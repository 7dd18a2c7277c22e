/*
 * test_proxy.c: acp_connection_proxy_stdio. Arguments are checked before
 * the stdio is touched; then this program runs itself as a pass-through
 * proxy on two event connections (one thread polls both) in our conductor,
 * in front of the Rust example agent, driven by the Rust example client
 * through a whole session: prompt, permission, files, terminal, and a
 * cancelled turn (the cancellation crosses the proxy). (examples/proxy.c is
 * the callback twin, run by run.sh.)
 */
#include "harness.h"

#include <sys/wait.h>

/* ---- the proxy: both connections' events, on one thread ---- */

/* A request passed on, until its answer comes back. */
typedef struct {
    const acp_connection *to;
    int64_t request_id;
    acp_responder *responder;
} forwarded;

#define MAX_FORWARDED 256
static forwarded table[MAX_FORWARDED];

static forwarded *slot_of(const acp_connection *to, int64_t request_id) {
    for (int i = 0; i < MAX_FORWARDED; i++)
        if (table[i].responder && table[i].to == to && table[i].request_id == request_id) return &table[i];
    return NULL;
}

static void handle(const acp_event *event, const acp_connection *from, const acp_connection *other, int *closed) {
    switch (event->kind) {
    case ACP_EVENT_REQUEST: {
        int64_t id = 0;
        if (acp_connection_send_request(other, event->method, event->json, NULL, NULL, &id) != ACP_OK) {
            acp_responder_error(event->responder, ACP_ERROR_INTERNAL_ERROR, acp_last_error_message(), NULL);
            break;
        }
        forwarded *free_slot = NULL;
        for (int i = 0; !free_slot && i < MAX_FORWARDED; i++)
            if (!table[i].responder) free_slot = &table[i];
        if (!free_slot) abort();
        *free_slot = (forwarded){.to = other, .request_id = id, .responder = event->responder};
        break;
    }
    case ACP_EVENT_NOTIFICATION:
        acp_connection_send_notification(other, event->method, event->json);
        break;
    case ACP_EVENT_RESPONSE: {
        forwarded *entry = slot_of(from, event->request_id);
        if (!entry) break;
        if (event->error.message) {
            acp_responder_error(entry->responder, event->error.code, event->error.message, event->error.data_json);
        } else {
            acp_responder_ok(entry->responder, event->json);
        }
        entry->responder = NULL;
        break;
    }
    case ACP_EVENT_CANCELLED:
        /* The request it serves was cancelled: so is the one passed on (its -32800 comes as a RESPONSE). */
        for (int i = 0; i < MAX_FORWARDED; i++)
            if (table[i].responder == event->responder) acp_connection_cancel_request(table[i].to, table[i].request_id);
        break;
    case ACP_EVENT_CLOSED:
        *closed = 1;
        break;
    default:
        break;
    }
}

static int run_proxy(void) {
    acp_options options = ACP_OPTIONS_INIT;
    acp_connection *predecessor = NULL, *successor = NULL;
    if (acp_connection_proxy_stdio(&options, NULL, &options, NULL, &predecessor, &successor) != ACP_OK) {
        fprintf(stderr, "[test-proxy] %s\n", acp_last_error_message());
        return 1;
    }
    int closed = 0;
    while (!closed) {
        const acp_connection *sides[2][2] = {{predecessor, successor}, {successor, predecessor}};
        for (int s = 0; s < 2 && !closed; s++) {
            acp_event *events[16];
            size_t count = 0;
            acp_connection_next_events(sides[s][0], events, 16, 5, &count);
            for (size_t i = 0; i < count; i++) {
                if (events[i]->kind == ACP_EVENT_REQUEST) fprintf(stderr, "[test-proxy] %s %s\n", s ? "<-" : "->", events[i]->method);
                handle(events[i], sides[s][0], sides[s][1], &closed);
                acp_event_free(events[i]);
            }
        }
    }
    acp_connection_close(predecessor);
    acp_connection_close(successor);
    acp_connection_wait_closed(predecessor, -1);
    acp_connection_wait_closed(successor, -1);
    acp_connection_free(predecessor);
    acp_connection_free(successor);
    acp_shutdown();
    return 0;
}

/* ---- the tests ---- */

static void test_arguments_are_checked_before_the_stdio_is_touched(void) {
    harness_section("arguments are checked before the stdio is touched");
    acp_options options = ACP_OPTIONS_INIT;
    acp_connection *predecessor = (acp_connection *)&options, *successor = (acp_connection *)&options;
    CHECK_RC(acp_connection_proxy_stdio(&options, NULL, &options, NULL, NULL, &successor), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_connection_proxy_stdio(&options, NULL, &options, NULL, &predecessor, NULL), ACP_ERR_NULL_ARGUMENT);
    acp_options too_small = {.struct_size = 0};
    CHECK_RC(acp_connection_proxy_stdio(&options, NULL, &too_small, NULL, &predecessor, &successor),
             ACP_ERR_INVALID_ARGUMENT);
    CHECK(predecessor == NULL && successor == NULL);
}

static void test_a_whole_session_crosses_the_proxy(void) {
    harness_section("a whole session crosses this program as a proxy in our conductor");
    char command[8192], line[1024];
    const char *self = self_exe();
    CHECK(self != NULL);
    if (!self) return;
    const char *target = acp_target_dir();
    snprintf(command, sizeof command, "'%s/examples/client' '%s/acp-engine' conduct '%s --proxy' '%s/examples/agent' 2>&1",
             target, target, self, target);
    FILE *client = popen(command, "r");
    CHECK(client != NULL);
    if (!client) return;
    int ok = 0, prompt = 0, permission = 0, cancelled = 0;
    while (fgets(line, sizeof line, client)) {
        fprintf(stderr, "  | %s", line);
        if (strcmp(line, "interop ok\n") == 0) ok = 1;
        if (strstr(line, "[test-proxy] -> session/prompt")) prompt = 1;
        if (strstr(line, "[test-proxy] <- session/request_permission")) permission = 1;
        if (strstr(line, "stop reason: cancelled")) cancelled = 1;
    }
    int status = pclose(client);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(ok);
    CHECK(prompt);
    CHECK(permission);
    CHECK(cancelled);
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--proxy") == 0) return run_proxy();
    harness_name = "test_proxy";
    test_arguments_are_checked_before_the_stdio_is_touched();
    test_a_whole_session_crosses_the_proxy();
    acp_shutdown();
    return harness_finish();
}
