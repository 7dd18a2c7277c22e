/* acp_connection_websocket against `acp-engine serve` wrapping the Rust
 * example agent: requests over a socket, a refused token closing the
 * connection with the reason, argument checks. */
#include "harness.h"

#include <signal.h>
#include <sys/wait.h>

typedef struct {
    pid_t pid;
    char url[256];
} server;

/* Start `acp-engine serve` on a free loopback port; its URL is its first line. */
static void serve(server *s, const char *token) {
    char tool[4096], agent[4096];
    snprintf(tool, sizeof tool, "%s/acp-engine", acp_target_dir());
    snprintf(agent, sizeof agent, "%s/examples/agent", acp_target_dir());
    int out[2];
    if (pipe(out) != 0) exit(2);
    s->pid = fork();
    if (s->pid == 0) {
        dup2(out[1], 1);
        close(out[0]), close(out[1]);
        if (token)
            execl(tool, tool, "serve", "--listen", "127.0.0.1:0", "--token", token, "--", agent, (char *)NULL);
        else
            execl(tool, tool, "serve", "--listen", "127.0.0.1:0", "--", agent, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    size_t len = 0;
    char c;
    while (len + 1 < sizeof s->url && read(out[0], &c, 1) == 1 && c != '\n') s->url[len++] = c;
    s->url[len] = 0;
    close(out[0]);
    CHECK(strncmp(s->url, "ws://", 5) == 0);
}

static void stop(server *s) {
    kill(s->pid, SIGTERM);
    waitpid(s->pid, NULL, 0);
}

static void test_requests_over_a_socket(void) {
    server s;
    serve(&s, NULL);
    acp_options options = {.side = ACP_SIDE_CLIENT};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_websocket(s.url, NULL, &options, NULL, &c), ACP_OK);
    for (int i = 0; i < 20; i++) {
        char *result = NULL;
        CHECK_RC(acp_connection_request(c, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1,\"clientCapabilities\":{}}",
                                        slow(10000), &result),
                 ACP_OK);
        double version = 0;
        CHECK_RC(acp_json_get_number(result, "/protocolVersion", &version), ACP_OK);
        CHECK(version == 1);
        acp_string_free(result);
    }
    acp_connection_close(c);
    CHECK_RC(acp_connection_wait_closed(c, slow(10000)), ACP_OK);
    acp_connection_free(c);
    stop(&s);
}

static void test_a_refused_token_closes_with_the_reason(void) {
    server s;
    serve(&s, "s3cret");
    acp_options options = {.side = ACP_SIDE_CLIENT};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_websocket(s.url, "guess", &options, NULL, &c), ACP_OK);
    char *result = NULL;
    acp_result rc = acp_connection_request(c, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1,\"clientCapabilities\":{}}",
                                           slow(10000), &result);
    CHECK(rc != ACP_OK);
    acp_string_free(result);
    CHECK_RC(acp_connection_wait_closed(c, slow(10000)), ACP_OK);
    char *reason = acp_connection_close_reason(c);
    CHECK(reason && strstr(reason, "401"));
    fprintf(stderr, "  refused: %s\n", reason ? reason : "(none)");
    acp_string_free(reason);
    acp_connection_free(c);
    stop(&s);
}

static void test_arguments(void) {
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_websocket(NULL, NULL, NULL, NULL, &c), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK(c == NULL);
}

int main(void) {
    harness_name = "test_websocket";
    test_requests_over_a_socket();
    test_a_refused_token_closes_with_the_reason();
    test_arguments();
    return harness_finish();
}
