/*
 * agent.c: an ACP agent in C on libacp_engine, serving on its own stdio.
 *
 * It follows the interop contract (interop/README.md): on "Say hello" it
 * streams a reply, asks permission, reads hello.txt through the client,
 * writes written.txt, runs `echo hi` in a client terminal and reports what
 * it printed; on "cancel me" it waits on a permission request until the
 * client cancels the turn. It exits when stdin reaches EOF.
 *
 *   cc agent.c $(pkg-config --cflags --libs acp_engine) -o c-agent
 *
 * The library checks every inbound message against the ACP schema first
 * (ACP_SIDE_AGENT), so the handlers only see well-formed agent methods. JSON
 * is read with a few strstr-based helpers: enough for this example, not a
 * general JSON parser.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acp_engine.h>

/* ---- tiny JSON helpers ----------------------------------------------------- */

/* printf into a malloc'd string. */
static char *fmt(const char *format, ...) {
    va_list args;
    va_start(args, format);
    char *out = NULL;
    if (vasprintf(&out, format, args) < 0) abort();
    va_end(args);
    return out;
}

/* `text` as a JSON string literal, quotes included (malloc'd). */
static char *json_quote(const char *text) {
    size_t len = strlen(text);
    char *out = malloc(len * 6 + 3), *o = out;
    *o++ = '"';
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\') *o++ = '\\', *o++ = (char)*p;
        else if (*p == '\n') *o++ = '\\', *o++ = 'n';
        else if (*p == '\r') *o++ = '\\', *o++ = 'r';
        else if (*p == '\t') *o++ = '\\', *o++ = 't';
        else if (*p < 0x20) o += sprintf(o, "\\u%04x", *p);
        else *o++ = (char)*p;
    }
    *o++ = '"';
    *o = '\0';
    return out;
}

/* Where the value of the first `"key": <value>` whose value starts with
 * `first` begins (any value if `first` is 0), or NULL. Peers may put
 * spaces around the colon. */
static const char *json_find(const char *json, const char *key, char first) {
    char *pattern = fmt("\"%s\"", key);
    size_t len = strlen(pattern);
    const char *found = NULL;
    for (const char *p = json; p && !found && (p = strstr(p, pattern)); p += len) {
        const char *q = p + len + strspn(p + len, " \t\r\n");
        if (*q != ':') continue;
        q += 1 + strspn(q + 1, " \t\r\n");
        if (!first || *q == first) found = q;
    }
    free(pattern);
    return found;
}

/* The first string value of `key` in `json`, unescaped (malloc'd), or
 * NULL. Handles \n, \", \\, \/, \t, \r, \b, \f and \uXXXX. */
static char *json_string(const char *json, const char *key) {
    const char *p = json ? json_find(json, key, '"') : NULL;
    if (!p) return NULL;
    p++;
    char *out = malloc(strlen(p) + 1), *o = out;
    for (; *p && *p != '"'; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        p++;
        switch (*p) {
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'u': {
            unsigned code = 0;
            if (sscanf(p + 1, "%4x", &code) != 1) break;
            p += 4;
            unsigned low;
            if (code >= 0xD800 && code < 0xDC00 && p[1] == '\\' && p[2] == 'u' &&
                sscanf(p + 3, "%4x", &low) == 1) {
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                p += 6;
            }
            if (code < 0x80) *o++ = (char)code;
            else if (code < 0x800) *o++ = (char)(0xC0 | code >> 6), *o++ = (char)(0x80 | (code & 0x3F));
            else if (code < 0x10000)
                *o++ = (char)(0xE0 | code >> 12), *o++ = (char)(0x80 | ((code >> 6) & 0x3F)),
                *o++ = (char)(0x80 | (code & 0x3F));
            else
                *o++ = (char)(0xF0 | code >> 18), *o++ = (char)(0x80 | ((code >> 12) & 0x3F)),
                *o++ = (char)(0x80 | ((code >> 6) & 0x3F)), *o++ = (char)(0x80 | (code & 0x3F));
            break;
        }
        default: *o++ = *p; /* \" \\ \/ */
        }
        if (!*p) break;
    }
    *o = '\0';
    return out;
}

/* ---- state -------------------------------------------------------------------- */

/* The library may run a callback before acp_connection_stdio() has stored
 * the connection in *out, so callbacks that need it wait for it here. */
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

/* Each session's cwd (session-1 is sessions[0], ...). */
#define MAX_SESSIONS 64
static char *sessions[MAX_SESSIONS];
static int session_count;
/* The client can show notices and compactions (its capabilities). */
static bool client_shows_news;

/* ---- talking to the client ------------------------------------------------------ */

/* A request to the client, waited for on this (worker) thread. The result
 * JSON (free with acp_string_free), or NULL after printing why. */
static char *call(const char *method, const char *params) {
    char *result = NULL;
    acp_result rc = acp_connection_request(connection(), method, params, -1, &result);
    if (rc != ACP_OK) {
        fprintf(stderr, "[c-agent] %s failed: %s %s\n", method, acp_last_error_message(),
                result ? result : "");
        acp_string_free(result);
        return NULL;
    }
    return result;
}

/* Stream a piece of the reply: a session/update agent_message_chunk. */
static void say(const char *session_id, const char *text) {
    char *quoted = json_quote(text);
    char *params = fmt("{\"sessionId\":\"%s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\","
                       "\"content\":{\"type\":\"text\",\"text\":%s}}}", session_id, quoted);
    if (acp_connection_send_notification(connection(), ACP_METHOD_SESSION_UPDATE, params) != ACP_OK)
        fprintf(stderr, "[c-agent] session/update: %s\n", acp_last_error_message());
    free(params);
    free(quoted);
}

/* Ask to read hello.txt: 1 allowed, 0 rejected, -1 cancelled or failed. */
static int ask_permission(const char *session_id) {
    char *params = fmt(
        "{\"sessionId\":\"%s\",\"toolCall\":{\"toolCallId\":\"call-1\",\"title\":\"Read hello.txt\","
        "\"kind\":\"read\",\"status\":\"pending\"},\"options\":["
        "{\"optionId\":\"allow\",\"name\":\"Allow\",\"kind\":\"allow_once\"},"
        "{\"optionId\":\"reject\",\"name\":\"Reject\",\"kind\":\"reject_once\"}]}", session_id);
    char *result = call(ACP_METHOD_SESSION_REQUEST_PERMISSION, params);
    free(params);
    int answer = -1;
    char *outcome = json_string(result, "outcome"); /* the inner one is a string */
    char *option = json_string(result, "optionId");
    if (outcome && strcmp(outcome, "selected") == 0) answer = option && strcmp(option, "allow") == 0;
    free(outcome), free(option);
    acp_string_free(result);
    return answer;
}

/* A notice, and a context compaction from start to end with its summary. */
static void report_compaction(const char *sid) {
    static const char *const updates[] = {
        "{\"sessionUpdate\":\"notice\",\"severity\":\"info\",\"title\":\"Context compacted\","
        "\"description\":\"Older messages were summarized.\"}",
        "{\"sessionUpdate\":\"compaction_update\",\"compactionId\":\"compaction-1\",\"status\":\"in_progress\"}",
        "{\"sessionUpdate\":\"compaction_summary_chunk\",\"compactionId\":\"compaction-1\","
        "\"content\":{\"type\":\"text\",\"text\":\"The user asked for a greeting.\"}}",
        "{\"sessionUpdate\":\"compaction_update\",\"compactionId\":\"compaction-1\",\"status\":\"completed\"}",
    };
    for (size_t i = 0; i < sizeof updates / sizeof *updates; i++) {
        char *params = fmt("{\"sessionId\":\"%s\",\"update\":%s}", sid, updates[i]);
        if (acp_connection_send_notification(connection(), ACP_METHOD_SESSION_UPDATE, params) != ACP_OK)
            fprintf(stderr, "[c-agent] session/update: %s\n", acp_last_error_message());
        free(params);
    }
}

/* The "Say hello" turn; the stop reason, or NULL if a request failed. */
static const char *say_hello(const char *sid, const char *cwd) {
    if (client_shows_news) report_compaction(sid);
    say(sid, "Hello! ");
    int allowed = ask_permission(sid);
    if (allowed < 0) return "cancelled";
    if (!allowed) {
        say(sid, "You did not let me read hello.txt.");
        return "end_turn";
    }
    const char *stop = NULL;
    char *path = fmt("%s/hello.txt", cwd), *qpath = json_quote(path);
    char *written = fmt("%s/written.txt", cwd), *qwritten = json_quote(written);
    char *params = NULL, *result = NULL, *content = NULL, *terminal = NULL, *output = NULL;

    params = fmt("{\"sessionId\":\"%s\",\"path\":%s}", sid, qpath);
    if (!(result = call(ACP_METHOD_FS_READ_TEXT_FILE, params)) || !(content = json_string(result, "content"))) goto done;
    say(sid, content);

    free(params), acp_string_free(result);
    params = fmt("{\"sessionId\":\"%s\",\"path\":%s,\"content\":\"written by agent\"}", sid, qwritten);
    if (!(result = call(ACP_METHOD_FS_WRITE_TEXT_FILE, params))) goto done;

    free(params), acp_string_free(result);
    params = fmt("{\"sessionId\":\"%s\",\"command\":\"echo\",\"args\":[\"hi\"]}", sid);
    if (!(result = call(ACP_METHOD_TERMINAL_CREATE, params)) || !(terminal = json_string(result, "terminalId"))) goto done;

    free(params), acp_string_free(result);
    params = fmt("{\"sessionId\":\"%s\",\"terminalId\":\"%s\"}", sid, terminal);
    if (!(result = call(ACP_METHOD_TERMINAL_WAIT_FOR_EXIT, params))) goto done;
    acp_string_free(result);
    if (!(result = call(ACP_METHOD_TERMINAL_OUTPUT, params)) || !(output = json_string(result, "output"))) goto done;
    size_t len = strlen(output); /* trim */
    while (len && strchr(" \t\r\n", output[len - 1])) output[--len] = '\0';
    char *said = fmt("terminal said: %s", output + strspn(output, " \t\r\n"));
    say(sid, said);
    free(said);
    acp_string_free(result);
    if (!(result = call(ACP_METHOD_TERMINAL_RELEASE, params))) goto done;
    stop = "end_turn";
done:
    free(path), free(qpath), free(written), free(qwritten), free(params);
    free(content), free(terminal), free(output);
    acp_string_free(result);
    return stop;
}

/* ---- handlers ------------------------------------------------------------------- */

static void on_request(void *user_data, const char *method, const char *params, acp_responder *responder) {
    (void)user_data;
    if (strcmp(method, ACP_METHOD_INITIALIZE) == 0) {
        char *notices = NULL, *compaction = NULL;
        client_shows_news = acp_json_get(params, "/clientCapabilities/session/notices", &notices) == ACP_OK &&
                            acp_json_get(params, "/clientCapabilities/session/compaction", &compaction) == ACP_OK &&
                            strcmp(notices, "null") != 0 && strcmp(compaction, "null") != 0;
        acp_string_free(notices), acp_string_free(compaction);
        char *result = fmt("{\"protocolVersion\":1,\"agentCapabilities\":{},\"authMethods\":[],"
                           "\"agentInfo\":{\"name\":\"acp-engine-c-example-agent\",\"version\":\"%s\"}}",
                           acp_version());
        acp_responder_ok(responder, result);
        free(result);
    } else if (strcmp(method, ACP_METHOD_SESSION_NEW) == 0) {
        char *cwd = json_string(params, "cwd");
        pthread_mutex_lock(&lock);
        int n = session_count < MAX_SESSIONS ? ++session_count : 0;
        if (n) sessions[n - 1] = cwd;
        pthread_mutex_unlock(&lock);
        if (!n) {
            free(cwd);
            acp_responder_error(responder, -32603, "too many sessions", NULL);
            return;
        }
        char *result = fmt("{\"sessionId\":\"session-%d\"}", n);
        acp_responder_ok(responder, result);
        free(result);
    } else if (strcmp(method, ACP_METHOD_SESSION_PROMPT) == 0) {
        /* A whole turn, right here: callbacks run on the library's worker
         * threads and may block on requests to the client. */
        char *sid = json_string(params, "sessionId");
        char *text = json_string(params, "text"); /* the first text block */
        int n = 0;
        pthread_mutex_lock(&lock);
        if (sid && sscanf(sid, "session-%d", &n) == 1 && (n < 1 || n > session_count)) n = 0;
        const char *cwd = n ? sessions[n - 1] : NULL;
        pthread_mutex_unlock(&lock);
        const char *stop;
        if (!cwd) {
            acp_responder_error(responder, -32002, "Resource not found", NULL);
            free(sid), free(text);
            return;
        }
        if (text && strcmp(text, "cancel me") == 0)
            stop = ask_permission(sid) < 0 ? "cancelled" : "end_turn"; /* waits for session/cancel */
        else
            stop = say_hello(sid, cwd);
        if (stop) {
            char *result = fmt("{\"stopReason\":\"%s\"}", stop);
            acp_responder_ok(responder, result);
            free(result);
        } else {
            acp_responder_error(responder, -32603, "Internal error", "{\"reason\":\"a client request failed\"}");
        }
        free(sid), free(text);
    } else {
        /* authenticate, session/load, ...: not offered by this agent. */
        acp_responder_error(responder, -32601, "Method not found", NULL);
    }
}

static void on_notification(void *user_data, const char *method, const char *params) {
    (void)user_data;
    if (strcmp(method, ACP_METHOD_SESSION_CANCEL) == 0) {
        char *sid = json_string(params, "sessionId");
        fprintf(stderr, "[c-agent] the client cancelled the turn of %s\n", sid ? sid : "?");
        free(sid);
    }
}

int main(void) {
    acp_options options = {.side = ACP_SIDE_AGENT};
    acp_handlers handlers = {NULL, on_request, on_notification, NULL};
    acp_connection *c = NULL;
    if (acp_connection_stdio(&options, &handlers, &c) != ACP_OK) {
        fprintf(stderr, "[c-agent] acp_connection_stdio: %s\n", acp_last_error_message());
        return 1;
    }
    pthread_mutex_lock(&lock);
    conn = c;
    pthread_cond_broadcast(&ready);
    pthread_mutex_unlock(&lock);

    /* Serve until the client closes our stdin. */
    acp_connection_wait_closed(c, -1);
    acp_connection_free(c);
    acp_shutdown();
    for (int i = 0; i < session_count; i++) free(sessions[i]);
    return 0;
}
