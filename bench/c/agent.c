/*
 * agent.c: the benchmark agent (bench/README.md) in C on libacp_engine.
 *
 *   initialize            -> protocolVersion 1
 *   session/new           -> sessionId "bench-session"
 *   session/prompt "stream N": N session/update agent_message_chunk
 *       notifications (text "chunk of agent text"), then end_turn;
 *   session/prompt "rpc N": N sequential fs/read_text_file requests, each
 *       awaited with acp_connection_request, then end_turn;
 *   session/prompt "perm N": N sequential session/request_permission
 *       requests (toolCallId "call-<i>", one allow_once option), then end_turn;
 *   session/prompt "concurrent N": N fs/read_text_file requests sent with
 *       acp_connection_send_request (all in flight at once), then waits for
 *       their callbacks, then end_turn;
 *   session/prompt "large N": N rounds of a 16 MiB fs/write_text_file and an
 *       fs/read_text_file whose content must be 16 MiB (else the turn fails
 *       with an error), then end_turn.
 * Exits when stdin reaches EOF.
 *
 * Built by bench/run.py:
 *   cc -O2 -std=c11 -Wall -Wextra -Werror -I include bench/c/agent.c \
 *      -L target/release -lacp_engine -Wl,-rpath,target/release -o c-bench-agent
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acp_engine.h"

#define SESSION_ID "bench-session"
#define LARGE_SIZE (16L * 1024 * 1024) /* the `large` scenario's file size */

static const char UPDATE[] =
    "{\"sessionId\":\"" SESSION_ID "\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\","
    "\"content\":{\"type\":\"text\",\"text\":\"chunk of agent text\"}}}";
static const char READ[] = "{\"sessionId\":\"" SESSION_ID "\",\"path\":\"/bench/file.txt\"}";
static const char WRITE_HEAD[] =
    "{\"sessionId\":\"" SESSION_ID "\",\"path\":\"/bench/file.txt\",\"content\":\"";

/* "<scenario> <n>" from the first `"text":"..."` of the prompt (the
 * benchmark's prompts hold nothing that needs unescaping). */
static int parse_prompt(const char *params, char *scenario, size_t size, long *n) {
    const char *text = params ? strstr(params, "\"text\"") : NULL;
    while (text) {
        const char *value = text + 6 + strspn(text + 6, " \t\r\n");
        if (*value == ':') {
            value += 1 + strspn(value + 1, " \t\r\n");
            if (*value == '"') {
                char format[32];
                snprintf(format, sizeof format, "%%%zus %%ld", size - 1);
                return sscanf(value + 1, format, scenario, n) == 2 && *n >= 0;
            }
        }
        text = strstr(text + 6, "\"text\"");
    }
    return 0;
}

/* The length of the JSON string value of the first `"content"` key in
 * `json` (escapes count as one character), or -1 if there is none. */
static long content_length(const char *json) {
    for (const char *key = json ? strstr(json, "\"content\"") : NULL; key; key = strstr(key + 9, "\"content\"")) {
        const char *p = key + 9 + strspn(key + 9, " \t\r\n");
        if (*p != ':') continue;
        p += 1 + strspn(p + 1, " \t\r\n");
        if (*p != '"') continue;
        long length = 0;
        for (p++; *p && *p != '"'; p++, length++) {
            if (*p != '\\') continue;
            p++;
            if (*p == 'u') p += 4;
            if (!*p) return -1;
        }
        return *p == '"' ? length : -1;
    }
    return -1;
}

/* `concurrent`: the reads still in flight, and whether one failed. */
struct batch {
    pthread_mutex_t lock;
    pthread_cond_t done;
    long pending;
    int failed;
};

static void on_read(void *user_data, const acp_connection *conn, int64_t request_id, const char *result, const acp_error *error) {
    (void)conn;
    (void)request_id;
    (void)result;
    struct batch *batch = user_data;
    pthread_mutex_lock(&batch->lock);
    if (error) batch->failed = 1;
    if (--batch->pending == 0) pthread_cond_signal(&batch->done);
    pthread_mutex_unlock(&batch->lock);
}

static const char *run_concurrent(const acp_connection *c, long n) {
    struct batch batch = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, n, 0};
    const char *failure = NULL;
    for (long i = 0; i < n; i++) {
        if (acp_connection_send_request(c, ACP_METHOD_FS_READ_TEXT_FILE, READ, on_read, &batch, NULL) != ACP_OK) {
            /* Never sent: its callback will not come. */
            pthread_mutex_lock(&batch.lock);
            batch.pending -= n - i;
            pthread_mutex_unlock(&batch.lock);
            failure = "fs/read_text_file failed to send";
            break;
        }
    }
    pthread_mutex_lock(&batch.lock);
    while (batch.pending > 0) pthread_cond_wait(&batch.done, &batch.lock);
    if (batch.failed && !failure) failure = "fs/read_text_file failed";
    pthread_mutex_unlock(&batch.lock);
    return failure;
}

static const char *run_large(const acp_connection *c, long n) {
    size_t head = strlen(WRITE_HEAD);
    char *write = malloc(head + LARGE_SIZE + 3);
    if (!write) return "out of memory";
    memcpy(write, WRITE_HEAD, head);
    memset(write + head, 'x', LARGE_SIZE);
    memcpy(write + head + LARGE_SIZE, "\"}", 3);
    const char *failure = NULL;
    for (long i = 0; i < n && !failure; i++) {
        char *result = NULL;
        acp_result rc = acp_connection_request(c, ACP_METHOD_FS_WRITE_TEXT_FILE, write, -1, &result);
        acp_string_free(result);
        if (rc != ACP_OK) {
            failure = "fs/write_text_file failed";
            break;
        }
        result = NULL;
        rc = acp_connection_request(c, ACP_METHOD_FS_READ_TEXT_FILE, READ, -1, &result);
        if (rc != ACP_OK) failure = "fs/read_text_file failed";
        else if (content_length(result) != LARGE_SIZE) failure = "fs/read_text_file: content is not 16 MiB";
        acp_string_free(result);
    }
    free(write);
    return failure;
}

/* The turn; NULL on success, else why it failed. */
static const char *run(const acp_connection *c, const char *scenario, long n) {
    if (strcmp(scenario, "stream") == 0) {
        for (long i = 0; i < n; i++)
            if (acp_connection_send_notification(c, ACP_METHOD_SESSION_UPDATE, UPDATE) != ACP_OK) return "session/update failed";
        return NULL;
    }
    if (strcmp(scenario, "rpc") == 0) {
        for (long i = 0; i < n; i++) {
            char *result = NULL;
            acp_result rc = acp_connection_request(c, ACP_METHOD_FS_READ_TEXT_FILE, READ, -1, &result);
            acp_string_free(result);
            if (rc != ACP_OK) return "fs/read_text_file failed";
        }
        return NULL;
    }
    if (strcmp(scenario, "perm") == 0) {
        for (long i = 0; i < n; i++) {
            char params[256];
            snprintf(params, sizeof params,
                     "{\"sessionId\":\"" SESSION_ID "\",\"toolCall\":{\"toolCallId\":\"call-%ld\"},"
                     "\"options\":[{\"optionId\":\"allow\",\"name\":\"Allow\",\"kind\":\"allow_once\"}]}",
                     i);
            char *result = NULL;
            acp_result rc = acp_connection_request(c, ACP_METHOD_SESSION_REQUEST_PERMISSION, params, -1, &result);
            acp_string_free(result);
            if (rc != ACP_OK) return "session/request_permission failed";
        }
        return NULL;
    }
    if (strcmp(scenario, "concurrent") == 0) return run_concurrent(c, n);
    if (strcmp(scenario, "large") == 0) return run_large(c, n);
    return "unknown scenario";
}

static void on_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                       acp_responder *responder) {
    (void)user_data;
    if (strcmp(method, ACP_METHOD_INITIALIZE) == 0) {
        acp_responder_ok(responder, "{\"protocolVersion\":1,\"agentCapabilities\":{},\"authMethods\":[]}");
    } else if (strcmp(method, ACP_METHOD_SESSION_NEW) == 0) {
        acp_responder_ok(responder, "{\"sessionId\":\"" SESSION_ID "\"}");
    } else if (strcmp(method, ACP_METHOD_SESSION_PROMPT) == 0) {
        char scenario[32];
        long n = 0;
        if (!parse_prompt(params, scenario, sizeof scenario, &n)) {
            acp_responder_error(responder, -32602, "Invalid params", NULL);
            return;
        }
        /* Blocking here is allowed: the library goes on dispatching on
         * another thread while this callback waits for answers. */
        const char *failure = run(conn, scenario, n);
        if (failure) acp_responder_error(responder, -32603, failure, NULL);
        else acp_responder_ok(responder, "{\"stopReason\":\"end_turn\"}");
    } else {
        acp_responder_error(responder, -32601, "Method not found", NULL);
    }
}

int main(void) {
    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_AGENT};
    acp_handlers handlers = {.struct_size = sizeof(acp_handlers), .on_request = on_request};
    acp_connection *c = NULL;
    if (acp_connection_stdio(&options, &handlers, &c) != ACP_OK) {
        fprintf(stderr, "c-bench-agent: %s\n", acp_last_error_message());
        return 1;
    }
    acp_connection_wait_closed(c, -1);
    acp_connection_free(c);
    acp_shutdown();
    return 0;
}
