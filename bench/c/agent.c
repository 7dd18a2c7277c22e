/*
 * agent.c: the benchmark agent (bench/README.md) in C on libacp_engine.
 *
 *   initialize            -> protocolVersion 1
 *   session/new           -> sessionId "bench-session"
 *   session/prompt "stream N": N session/update agent_message_chunk
 *       notifications (text "chunk of agent text"), then end_turn;
 *   session/prompt "rpc N": N sequential fs/read_text_file requests, each
 *       awaited with acp_connection_request, then end_turn.
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

static const char UPDATE[] =
    "{\"sessionId\":\"" SESSION_ID "\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\","
    "\"content\":{\"type\":\"text\",\"text\":\"chunk of agent text\"}}}";
static const char READ[] = "{\"sessionId\":\"" SESSION_ID "\",\"path\":\"/bench/file.txt\"}";

/* Callbacks may run before acp_connection_stdio() has returned the
 * connection: the prompt handler waits for it here. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static acp_connection *conn;

static acp_connection *connection(void) {
    pthread_mutex_lock(&lock);
    while (!conn) pthread_cond_wait(&ready, &lock);
    acp_connection *c = conn;
    pthread_mutex_unlock(&lock);
    return c;
}

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

/* The turn; NULL on success, else why it failed. */
static const char *run(const char *scenario, long n) {
    acp_connection *c = connection();
    if (strcmp(scenario, "stream") == 0) {
        for (long i = 0; i < n; i++)
            if (acp_connection_send_notification(c, "session/update", UPDATE) != ACP_OK) return "session/update failed";
        return NULL;
    }
    if (strcmp(scenario, "rpc") == 0) {
        for (long i = 0; i < n; i++) {
            char *result = NULL;
            acp_result rc = acp_connection_request(c, "fs/read_text_file", READ, -1, &result);
            acp_string_free(result);
            if (rc != ACP_OK) return "fs/read_text_file failed";
        }
        return NULL;
    }
    return "unknown scenario";
}

static void on_request(void *user_data, const char *method, const char *params, acp_responder *responder) {
    (void)user_data;
    if (strcmp(method, "initialize") == 0) {
        acp_responder_ok(responder, "{\"protocolVersion\":1,\"agentCapabilities\":{},\"authMethods\":[]}");
    } else if (strcmp(method, "session/new") == 0) {
        acp_responder_ok(responder, "{\"sessionId\":\"" SESSION_ID "\"}");
    } else if (strcmp(method, "session/prompt") == 0) {
        char scenario[32];
        long n = 0;
        if (!parse_prompt(params, scenario, sizeof scenario, &n)) {
            acp_responder_error(responder, -32602, "Invalid params", NULL);
            return;
        }
        /* Runs on a library worker thread: blocking here is allowed. */
        const char *failure = run(scenario, n);
        if (failure) acp_responder_error(responder, -32603, failure, NULL);
        else acp_responder_ok(responder, "{\"stopReason\":\"end_turn\"}");
    } else {
        acp_responder_error(responder, -32601, "Method not found", NULL);
    }
}

int main(void) {
    acp_options options = {ACP_SIDE_AGENT, 0, 0};
    acp_handlers handlers = {NULL, on_request, NULL, NULL};
    acp_connection *c = NULL;
    if (acp_connection_stdio(&options, &handlers, &c) != ACP_OK) {
        fprintf(stderr, "c-bench-agent: %s\n", acp_last_error_message());
        return 1;
    }
    pthread_mutex_lock(&lock);
    conn = c;
    pthread_cond_broadcast(&ready);
    pthread_mutex_unlock(&lock);
    acp_connection_wait_closed(c, -1);
    acp_connection_free(c);
    acp_shutdown();
    return 0;
}
