/*
 * client.c: the benchmark client (bench/README.md) in C on libacp_engine.
 *
 *   c-bench-client --scenario <stream|rpc|perm|concurrent|large|setup> --n <N>
 *                  -- <agent command...>
 *
 * Spawns the agent with acp_connection_spawn (side CLIENT), sends
 * initialize and session/new with acp_connection_request (blocking, on the
 * main thread), then, unless the scenario is `setup`, one session/prompt
 * "<scenario> <N>". The agent's requests and notifications arrive in
 * callbacks on the connection's dispatch thread, which count what they serve:
 *   stream      session/update notifications;
 *   rpc         fs/read_text_file requests (answered "hello");
 *   perm        session/request_permission requests (answered "allow");
 *   concurrent  fs/read_text_file requests (answered "hello");
 *   large       fs/write_text_file requests whose content is 16 MiB (reads
 *               are answered with 16 MiB of 'x').
 * A response is delivered only after the notifications received before it
 * were handled, so the count is final when the prompt's answer arrives.
 * Prints one JSON line and exits 0 iff count == N and the turn ended with
 * end_turn.
 *
 * Built by bench/run.py:
 *   cc -O2 -std=c11 -Wall -Wextra -Werror -I include bench/c/client.c \
 *      -L target/release -lacp_engine -Wl,-rpath,target/release -o c-bench-client
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acp_engine.h"

#define LARGE_SIZE (16L * 1024 * 1024) /* the `large` scenario's file size */

static const char PERMISSION[] = "{\"outcome\":{\"outcome\":\"selected\",\"optionId\":\"allow\"}}";
static const char HELLO[] = "{\"content\":\"hello\"}";

static atomic_long count;
static int large;            /* the scenario is `large` */
static char *large_read;     /* `large`: {"content":"xxx..."} (16 MiB of x) */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* rpc and perm: when each request arrived (the requests come one at a time,
 * so the dispatch thread alone writes); p50 and p99 of the gaps are the
 * round trips as bench/floor measures them. */
static double *arrivals;
static long arrived, capacity;

static void note_arrival(void) {
    if (arrived < capacity) arrivals[arrived++] = now();
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* `,"p50_us":…,"p99_us":…` into out (empty when not timed). */
static void latency_fields(char *out, size_t size) {
    out[0] = '\0';
    if (arrived < 2) return;
    long trips = arrived - 1;
    for (long i = 0; i < trips; i++) arrivals[i] = arrivals[i + 1] - arrivals[i];
    qsort(arrivals, (size_t)trips, sizeof *arrivals, by_value);
    snprintf(out, size, ",\"p50_us\":%.1f,\"p99_us\":%.1f", arrivals[trips / 2] * 1e6, arrivals[trips * 99 / 100] * 1e6);
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

/* The value of the first `"key":"..."` in `json`, unescaped no further
 * (session ids and stop reasons hold nothing to unescape); malloc'd. */
static char *json_string(const char *json, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\"", key);
    size_t len = strlen(pattern);
    for (const char *p = json ? strstr(json, pattern) : NULL; p; p = strstr(p + len, pattern)) {
        const char *q = p + len + strspn(p + len, " \t\r\n");
        if (*q != ':') continue;
        q += 1 + strspn(q + 1, " \t\r\n");
        if (*q != '"') continue;
        const char *end = strchr(q + 1, '"');
        if (!end) return NULL;
        char *out = malloc((size_t)(end - q));
        if (!out) return NULL;
        memcpy(out, q + 1, (size_t)(end - q - 1));
        out[end - q - 1] = '\0';
        return out;
    }
    return NULL;
}

static void on_request(void *user_data, const acp_connection *conn, const char *method, const char *params, acp_responder *responder) {
    (void)conn;
    (void)user_data;
    if (strcmp(method, ACP_METHOD_SESSION_REQUEST_PERMISSION) == 0) {
        note_arrival();
        atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
        acp_responder_ok(responder, PERMISSION);
    } else if (strcmp(method, ACP_METHOD_FS_READ_TEXT_FILE) == 0) {
        if (large) {
            acp_responder_ok(responder, large_read);
        } else {
            note_arrival();
            atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
            acp_responder_ok(responder, HELLO);
        }
    } else if (strcmp(method, ACP_METHOD_FS_WRITE_TEXT_FILE) == 0) {
        if (content_length(params) == LARGE_SIZE) atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
        acp_responder_ok(responder, "{}");
    } else {
        acp_responder_error(responder, -32601, "Method not found", NULL);
    }
}

static void on_notification(void *user_data, const acp_connection *conn, const char *method, const char *params) {
    (void)conn;
    (void)user_data;
    (void)params;
    if (strcmp(method, ACP_METHOD_SESSION_UPDATE) == 0) atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
}

static void usage(void) {
    fprintf(stderr, "usage: c-bench-client --scenario <stream|rpc|perm|concurrent|large|setup> --n <N> "
                    "-- <agent command> [args...]\n");
    exit(2);
}

/* A request on the main thread; the result (malloc'd by the library) or
 * NULL after reporting the failure. */
static char *request(acp_connection *c, const char *method, const char *params) {
    char *result = NULL;
    acp_result rc = acp_connection_request(c, method, params, -1, &result);
    if (rc == ACP_OK) return result;
    if (rc == ACP_ERR_REQUEST_FAILED) fprintf(stderr, "c-bench-client: %s failed: %s\n", method, result);
    else fprintf(stderr, "c-bench-client: %s failed: %s\n", method, acp_last_error_message());
    acp_string_free(result);
    return NULL;
}

int main(int argc, char **argv) {
    double t0 = now();
    const char *scenario = NULL;
    long n = -1;
    int agent = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--scenario") == 0 && i + 1 < argc) scenario = argv[++i];
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) n = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--") == 0) { agent = i + 1; break; }
        else usage();
    }
    if (!scenario || n < 0 || !agent || agent >= argc || strlen(scenario) > 32) usage();

    large = strcmp(scenario, "large") == 0;
    if ((strcmp(scenario, "rpc") == 0 || strcmp(scenario, "perm") == 0) && n > 0) {
        arrivals = calloc((size_t)n, sizeof *arrivals);
        if (!arrivals) return 1;
        capacity = n;
    }
    if (large) {
        static const char head[] = "{\"content\":\"";
        large_read = malloc(sizeof head - 1 + LARGE_SIZE + 3);
        if (!large_read) return 1;
        memcpy(large_read, head, sizeof head - 1);
        memset(large_read + sizeof head - 1, 'x', LARGE_SIZE);
        memcpy(large_read + sizeof head - 1 + LARGE_SIZE, "\"}", 3);
    }

    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_CLIENT};
    acp_handlers handlers = {.struct_size = sizeof(acp_handlers), .on_request = on_request, .on_notification = on_notification};
    acp_connection *c = NULL;
    if (acp_connection_spawn((const char *const *)&argv[agent], NULL, NULL, &options, &handlers, &c) != ACP_OK) {
        fprintf(stderr, "c-bench-client: spawn %s: %s\n", argv[agent], acp_last_error_message());
        return 1;
    }

    int ok = 0;
    double setup_s = -1, run_s = -1;
    long counted = 0;
    char *init = request(c, ACP_METHOD_INITIALIZE,
                         "{\"protocolVersion\":1,\"clientCapabilities\":"
                         "{\"fs\":{\"readTextFile\":true,\"writeTextFile\":true}}}");
    char *session = init ? request(c, ACP_METHOD_SESSION_NEW, "{\"cwd\":\"/tmp\",\"mcpServers\":[]}") : NULL;
    char *session_id = json_string(session, "sessionId");
    if (session_id) {
        setup_s = now() - t0;
        if (strcmp(scenario, "setup") == 0) {
            run_s = setup_s;
            counted = n;
            ok = 1;
        } else {
            size_t size = strlen(session_id) + 200;
            char *prompt = malloc(size);
            if (!prompt) return 1;
            snprintf(prompt, size,
                     "{\"sessionId\":\"%s\",\"prompt\":[{\"type\":\"text\",\"text\":\"%s %ld\"}]}", session_id,
                     scenario, n);
            double t1 = now();
            char *response = request(c, ACP_METHOD_SESSION_PROMPT, prompt);
            run_s = now() - t1;
            char *stop_reason = json_string(response, "stopReason");
            counted = atomic_load(&count);
            ok = stop_reason && strcmp(stop_reason, "end_turn") == 0 && counted == n;
            free(stop_reason);
            acp_string_free(response);
            free(prompt);
        }
    }
    free(session_id);
    acp_string_free(session);
    acp_string_free(init);

    acp_connection_close(c);
    acp_connection_wait_closed(c, -1);
    acp_connection_free(c);
    acp_shutdown();
    free(large_read);

    if (setup_s < 0)
        printf("{\"client\":\"acp-engine-c\",\"scenario\":\"%s\",\"n\":%ld,\"setup_s\":null,\"run_s\":null,"
               "\"count\":0,\"ok\":false}\n",
               scenario, n);
    else {
        char latency[64];
        latency_fields(latency, sizeof latency);
        printf("{\"client\":\"acp-engine-c\",\"scenario\":\"%s\",\"n\":%ld,\"setup_s\":%.6f,\"run_s\":%.6f,"
               "\"count\":%ld,\"ok\":%s%s}\n",
               scenario, n, setup_s, run_s, counted, ok ? "true" : "false", latency);
    }
    free(arrivals);
    return ok ? 0 : 1;
}
