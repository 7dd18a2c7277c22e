/* acp_connection_connect_url against `acp-engine serve` wrapping the Rust
 * example agent, over WebSocket and Streamable HTTP: requests over a
 * socket, the same through a text connection (acp_text_connection_connect_url),
 * a refused token closing the connection with the reason, argument
 * checks. */
#include "harness.h"

#include <signal.h>
#include <sys/wait.h>

typedef struct {
    pid_t pid;
    char url[256];      /* ws:// */
    char http_url[256]; /* http:// */
} server;

static void read_line(int fd, char *line, size_t size) {
    size_t len = 0;
    char c;
    while (len + 1 < size && read(fd, &c, 1) == 1 && c != '\n') line[len++] = c;
    line[len] = 0;
}

/* Start `acp-engine serve` on a free loopback port; its URLs are its first lines. */
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
    read_line(out[0], s->url, sizeof s->url);
    read_line(out[0], s->http_url, sizeof s->http_url);
    close(out[0]);
    CHECK(strncmp(s->url, "ws://", 5) == 0);
    CHECK(strncmp(s->http_url, "http://", 7) == 0);
}

static void stop(server *s) {
    kill(s->pid, SIGTERM);
    waitpid(s->pid, NULL, 0);
}

static void requests(const char *url) {
    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_CLIENT};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_connect_url(url, NULL, &options, NULL, &c), ACP_OK);
    char *result = NULL;
    CHECK_RC(acp_connection_request(c, ACP_METHOD_INITIALIZE, "{\"protocolVersion\":1,\"clientCapabilities\":{}}",
                                    slow(10000), &result),
             ACP_OK);
    double version = 0;
    CHECK_RC(acp_json_get_number(result, "/protocolVersion", &version), ACP_OK);
    CHECK(version == 1);
    acp_string_free(result);
    for (int i = 0; i < 20; i++) {
        result = NULL;
        CHECK_RC(acp_connection_request(c, ACP_METHOD_SESSION_NEW, "{\"cwd\":\"/tmp\",\"mcpServers\":[]}", slow(10000),
                                        &result),
                 ACP_OK);
        char *session = NULL;
        CHECK_RC(acp_json_get_string(result, "/sessionId", &session), ACP_OK);
        CHECK(session && session[0]);
        acp_string_free(session);
        acp_string_free(result);
    }
    acp_connection_close(c);
    CHECK_RC(acp_connection_wait_closed(c, slow(10000)), ACP_OK);
    acp_connection_free(c);
}

/* A text connection: initialize's result arrives as the batch [[2,id,{...}]]. */
static void text_requests(const char *url) {
    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_CLIENT};
    acp_text_connection *c = NULL;
    CHECK_RC(acp_text_connection_connect_url(url, NULL, &options, &c), ACP_OK);
    const char *method = ACP_METHOD_INITIALIZE, *params = "{\"protocolVersion\":1,\"clientCapabilities\":{}}";
    int64_t id = acp_text_connection_send_request(c, (const uint8_t *)method, strlen(method), (const uint8_t *)params,
                                                  strlen(params));
    CHECK(id >= 0);
    static char batch[65536];
    int64_t len = acp_text_connection_next_events(c, (uint8_t *)batch, sizeof batch - 1);
    CHECK(len > 0 && len < (int64_t)sizeof batch);
    batch[len > 0 && len < (int64_t)sizeof batch ? len : 0] = 0;
    char expected[64];
    snprintf(expected, sizeof expected, "[[2,%lld,{", (long long)id);
    CHECK(strncmp(batch, expected, strlen(expected)) == 0);
    CHECK_CONTAINS(batch, "\"protocolVersion\":1");
    acp_text_connection_close(c);
    len = acp_text_connection_next_events(c, (uint8_t *)batch, sizeof batch - 1);
    CHECK(len > 0 && strncmp(batch, "[[6,", 4) == 0);
    CHECK_EQ_INT(acp_text_connection_next_events(c, (uint8_t *)batch, sizeof batch), ACP_TEXT_END);
    acp_text_connection_free(c);
}

static void test_requests_over_both_transports(void) {
    server s;
    serve(&s, NULL);
    requests(s.url);
    requests(s.http_url);
    text_requests(s.url);
    text_requests(s.http_url);
    stop(&s);
}

static void refused(const char *url) {
    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_CLIENT};
    acp_remote_options remote = {.token = "guess"};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_connect_url(url, &remote, &options, NULL, &c), ACP_OK);
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
}

static void test_a_refused_token_closes_with_the_reason(void) {
    server s;
    serve(&s, "s3cret");
    refused(s.url);
    refused(s.http_url);
    stop(&s);
}

static void test_arguments(void) {
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_connect_url(NULL, NULL, NULL, NULL, &c), ACP_ERR_NULL_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK(c == NULL);
    CHECK_RC(acp_connection_connect_url("ws://127.0.0.1:1/acp", NULL, NULL, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
    acp_remote_options bad = {.token = "\xff"};
    CHECK_RC(acp_connection_connect_url("ws://127.0.0.1:1/acp", &bad, NULL, NULL, &c), ACP_ERR_INVALID_UTF8);
    CHECK(c == NULL);
    acp_text_connection *text = NULL;
    CHECK_RC(acp_text_connection_connect_url(NULL, NULL, NULL, &text), ACP_ERR_NULL_ARGUMENT);
    CHECK(text == NULL);
    CHECK_RC(acp_text_connection_connect_url("ws://127.0.0.1:1/acp", NULL, NULL, NULL), ACP_ERR_NULL_ARGUMENT);
}

int main(void) {
    harness_name = "test_remote";
    test_requests_over_both_transports();
    test_a_refused_token_closes_with_the_reason();
    test_arguments();
    return harness_finish();
}
