/*
 * agent.c: an ACP agent in C on libacp_engine, serving on its own stdio.
 *
 * It follows the interop contract (interop/README.md): on "Say hello" it
 * streams a reply, asks permission, reads hello.txt through the client,
 * writes written.txt, runs `echo hi` in a client terminal and reports what
 * it printed (each only when the client's capabilities offer it); on "cancel me" it waits on a permission request until the
 * client cancels the turn. It exits when stdin reaches EOF.
 *
 * With `--serve HOST:PORT` it serves remote clients instead, over WebSocket
 * and Streamable HTTP (it prints both URLs; a bearer token from
 * ACP_ENGINE_TOKEN is required when set), until SIGINT or SIGTERM.
 *
 *   cc agent.c $(pkg-config --cflags --libs acp_engine) -o c-agent
 *
 * The library checks every inbound message against the ACP schema first
 * (ACP_SIDE_AGENT), so the handlers only see well-formed agent methods, and
 * reads JSON for us (acp_json_get_string at a JSON pointer, acp_json_quote).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acp_engine.h>

/* printf into a malloc'd string. */
static char *fmt(const char *format, ...) {
    va_list args;
    va_start(args, format);
    char *out = NULL;
    if (vasprintf(&out, format, args) < 0) abort();
    va_end(args);
    return out;
}

/* The string at `pointer` in `json` (free with acp_string_free), or NULL. */
static char *get_string(const char *json, const char *pointer) {
    char *out = NULL;
    return json && acp_json_get_string(json, pointer, &out) == ACP_OK ? out : NULL;
}

/* `text` as a JSON string literal (free with acp_string_free). */
static char *quote(const char *text) {
    char *out = NULL;
    if (acp_json_quote(text, &out) != ACP_OK) abort();
    return out;
}

/* ---- state -------------------------------------------------------------------- */

/* Each session's cwd (session-1 is sessions[0], ...). */
#define MAX_SESSIONS 64
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *sessions[MAX_SESSIONS];
static int session_count;
/* The client can show notices and compactions (its capabilities). */
static bool client_shows_news;
/* What the client said it can do: an agent asks only for that. */
static bool client_reads, client_writes, client_terminals;

/* ---- talking to the client ------------------------------------------------------ */

/* A request to the client, waited for here (the library goes on dispatching
 * on another thread meanwhile). The result JSON (free with acp_string_free),
 * or NULL after printing why. */
static char *call(const acp_connection *conn, const char *method, const char *params) {
    char *result = NULL;
    acp_result rc = acp_connection_request(conn, method, params, -1, &result);
    if (rc != ACP_OK) {
        fprintf(stderr, "[c-agent] %s failed: %s %s\n", method, acp_last_error_message(),
                result ? result : "");
        acp_string_free(result);
        return NULL;
    }
    return result;
}

static void update(const acp_connection *conn, const char *session_id, const char *update_json) {
    char *params = fmt("{\"sessionId\":\"%s\",\"update\":%s}", session_id, update_json);
    if (acp_connection_send_notification(conn, ACP_METHOD_SESSION_UPDATE, params) != ACP_OK)
        fprintf(stderr, "[c-agent] session/update: %s\n", acp_last_error_message());
    free(params);
}

/* Stream a piece of the reply: a session/update agent_message_chunk. */
static void say(const acp_connection *conn, const char *session_id, const char *text) {
    char *quoted = quote(text);
    char *chunk = fmt("{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":%s}}",
                      quoted);
    update(conn, session_id, chunk);
    free(chunk);
    acp_string_free(quoted);
}

/* Ask to read hello.txt: 1 allowed, 0 rejected, -1 cancelled or failed. */
static int ask_permission(const acp_connection *conn, const char *session_id) {
    char *params = fmt(
        "{\"sessionId\":\"%s\",\"toolCall\":{\"toolCallId\":\"call-1\",\"title\":\"Read hello.txt\","
        "\"kind\":\"read\",\"status\":\"pending\"},\"options\":["
        "{\"optionId\":\"allow\",\"name\":\"Allow\",\"kind\":\"allow_once\"},"
        "{\"optionId\":\"reject\",\"name\":\"Reject\",\"kind\":\"reject_once\"}]}", session_id);
    char *result = call(conn, ACP_METHOD_SESSION_REQUEST_PERMISSION, params);
    free(params);
    int answer = -1;
    char *outcome = get_string(result, "/outcome/outcome");
    char *option = get_string(result, "/outcome/optionId");
    if (outcome && strcmp(outcome, "selected") == 0) answer = option && strcmp(option, "allow") == 0;
    acp_string_free(outcome), acp_string_free(option), acp_string_free(result);
    return answer;
}

/* A notice, and a context compaction from start to end with its summary. */
static void report_compaction(const acp_connection *conn, const char *sid) {
    static const char *const updates[] = {
        "{\"sessionUpdate\":\"notice\",\"severity\":\"info\",\"title\":\"Context compacted\","
        "\"description\":\"Older messages were summarized.\"}",
        "{\"sessionUpdate\":\"compaction_update\",\"compactionId\":\"compaction-1\",\"status\":\"in_progress\"}",
        "{\"sessionUpdate\":\"compaction_summary_chunk\",\"compactionId\":\"compaction-1\","
        "\"content\":{\"type\":\"text\",\"text\":\"The user asked for a greeting.\"}}",
        "{\"sessionUpdate\":\"compaction_update\",\"compactionId\":\"compaction-1\",\"status\":\"completed\"}",
    };
    for (size_t i = 0; i < sizeof updates / sizeof *updates; i++) update(conn, sid, updates[i]);
}

/* Ask to read hello.txt, read it and say what it holds. 1 to go on, 0 when
 * the turn ends here (*stop says how), -1 if a request failed. */
static int read_hello(const acp_connection *conn, const char *sid, const char *cwd, const char **stop) {
    int allowed = ask_permission(conn, sid);
    if (allowed < 0) return *stop = "cancelled", 0;
    if (!allowed) {
        say(conn, sid, "You did not let me read hello.txt.");
        return *stop = "end_turn", 0;
    }
    char *path = fmt("%s/hello.txt", cwd), *qpath = quote(path);
    char *params = fmt("{\"sessionId\":\"%s\",\"path\":%s}", sid, qpath);
    char *result = call(conn, ACP_METHOD_FS_READ_TEXT_FILE, params), *content = NULL;
    int went = result && (content = get_string(result, "/content")) ? 1 : -1;
    if (content) say(conn, sid, content);
    free(path), free(params);
    acp_string_free(qpath), acp_string_free(result), acp_string_free(content);
    return went;
}

/* Run `echo hi` in a terminal of the client's and say what it printed;
 * false if a request failed. */
static bool run_echo(const acp_connection *conn, const char *sid) {
    bool ok = false;
    char *params = fmt("{\"sessionId\":\"%s\",\"command\":\"echo\",\"args\":[\"hi\"]}", sid);
    char *result = NULL, *terminal = NULL, *output = NULL;
    if (!(result = call(conn, ACP_METHOD_TERMINAL_CREATE, params)) || !(terminal = get_string(result, "/terminalId")))
        goto done;
    free(params), acp_string_free(result);
    char *qterminal = quote(terminal);
    params = fmt("{\"sessionId\":\"%s\",\"terminalId\":%s}", sid, qterminal);
    acp_string_free(qterminal);
    if (!(result = call(conn, ACP_METHOD_TERMINAL_WAIT_FOR_EXIT, params))) goto done;
    acp_string_free(result);
    if (!(result = call(conn, ACP_METHOD_TERMINAL_OUTPUT, params)) || !(output = get_string(result, "/output")))
        goto done;
    size_t len = strlen(output); /* trim */
    while (len && strchr(" \t\r\n", output[len - 1])) output[--len] = '\0';
    char *said = fmt("terminal said: %s", output + strspn(output, " \t\r\n"));
    say(conn, sid, said);
    free(said);
    acp_string_free(result);
    ok = (result = call(conn, ACP_METHOD_TERMINAL_RELEASE, params)) != NULL;
done:
    free(params);
    acp_string_free(terminal), acp_string_free(output), acp_string_free(result);
    return ok;
}

/* The "Say hello" turn, asking only for what the client can do; the stop
 * reason, or NULL if a request failed. */
static const char *say_hello(const acp_connection *conn, const char *sid, const char *cwd) {
    if (client_shows_news) report_compaction(conn, sid);
    say(conn, sid, "Hello! ");
    const char *stop = NULL;
    if (!client_reads) {
        say(conn, sid, "(this client cannot read files: nothing read)");
    } else {
        int went = read_hello(conn, sid, cwd, &stop);
        if (went <= 0) return stop;
    }
    if (client_writes) {
        char *written = fmt("%s/written.txt", cwd), *qwritten = quote(written);
        char *params = fmt("{\"sessionId\":\"%s\",\"path\":%s,\"content\":\"written by agent\"}", sid, qwritten);
        char *result = call(conn, ACP_METHOD_FS_WRITE_TEXT_FILE, params);
        free(written), free(params), acp_string_free(qwritten);
        if (!result) return NULL;
        acp_string_free(result);
    }
    if (client_terminals && !run_echo(conn, sid)) return NULL;
    return "end_turn";
}

/* ---- handlers ------------------------------------------------------------------- */

/* Whether the flag at `pointer` in `params` is true. */
static bool flag(const char *params, const char *pointer) {
    char *value = NULL;
    bool set = acp_json_get(params, pointer, &value) == ACP_OK && strcmp(value, "true") == 0;
    acp_string_free(value);
    return set;
}

static void initialize(const char *params, acp_responder *responder) {
    client_reads = flag(params, "/clientCapabilities/fs/readTextFile");
    client_writes = flag(params, "/clientCapabilities/fs/writeTextFile");
    client_terminals = flag(params, "/clientCapabilities/terminal");
    char *notices = NULL, *compaction = NULL;
    client_shows_news = acp_json_get(params, "/clientCapabilities/session/notices", &notices) == ACP_OK &&
                        acp_json_get(params, "/clientCapabilities/session/compaction", &compaction) == ACP_OK &&
                        strcmp(notices, "null") != 0 && strcmp(compaction, "null") != 0;
    acp_string_free(notices), acp_string_free(compaction);
    char *result = fmt("{\"protocolVersion\":%d,\"agentCapabilities\":{},\"authMethods\":[],"
                       "\"agentInfo\":{\"name\":\"acp-engine-c-example-agent\",\"version\":\"%s\"}}",
                       ACP_PROTOCOL_VERSION, acp_engine_version());
    acp_responder_ok(responder, result);
    free(result);
}

static void new_session(const char *params, acp_responder *responder) {
    char *cwd = get_string(params, "/cwd");
    pthread_mutex_lock(&lock);
    int n = session_count < MAX_SESSIONS ? ++session_count : 0;
    if (n) sessions[n - 1] = cwd;
    pthread_mutex_unlock(&lock);
    if (!n) {
        acp_string_free(cwd);
        acp_responder_error(responder, ACP_ERROR_INTERNAL_ERROR, "too many sessions", NULL);
        return;
    }
    char *result = fmt("{\"sessionId\":\"session-%d\"}", n);
    acp_responder_ok(responder, result);
    free(result);
}

/* A whole turn, right here: a callback may block on requests to the client. */
static void prompt(const acp_connection *conn, const char *params, acp_responder *responder) {
    char *sid = get_string(params, "/sessionId");
    char *text = get_string(params, "/prompt/0/text");
    int n = 0;
    pthread_mutex_lock(&lock);
    if (sid && sscanf(sid, "session-%d", &n) == 1 && (n < 1 || n > session_count)) n = 0;
    const char *cwd = n ? sessions[n - 1] : NULL;
    pthread_mutex_unlock(&lock);
    if (!cwd) {
        char *data = fmt("{\"sessionId\":\"%s\"}", sid ? sid : "");
        acp_responder_error(responder, ACP_ERROR_RESOURCE_NOT_FOUND, ACP_MESSAGE_RESOURCE_NOT_FOUND, data);
        free(data), acp_string_free(sid), acp_string_free(text);
        return;
    }
    const char *stop;
    if (text && strcmp(text, "cancel me") == 0)
        stop = ask_permission(conn, sid) < 0 ? "cancelled" : "end_turn"; /* waits for session/cancel */
    else
        stop = say_hello(conn, sid, cwd);
    if (stop) {
        char *result = fmt("{\"stopReason\":\"%s\"}", stop);
        acp_responder_ok(responder, result);
        free(result);
    } else {
        acp_responder_error(responder, ACP_ERROR_INTERNAL_ERROR, ACP_MESSAGE_INTERNAL_ERROR, "{\"reason\":\"a client request failed\"}");
    }
    acp_string_free(sid), acp_string_free(text);
}

static void on_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                       acp_responder *responder) {
    (void)user_data;
    if (strcmp(method, ACP_METHOD_INITIALIZE) == 0) initialize(params, responder);
    else if (strcmp(method, ACP_METHOD_SESSION_NEW) == 0) new_session(params, responder);
    else if (strcmp(method, ACP_METHOD_SESSION_PROMPT) == 0) prompt(conn, params, responder);
    /* authenticate, session/load, ...: not offered by this agent. */
    else acp_responder_error(responder, ACP_ERROR_METHOD_NOT_FOUND, ACP_MESSAGE_METHOD_NOT_FOUND, NULL);
}

static void on_notification(void *user_data, const acp_connection *conn, const char *method, const char *params) {
    (void)user_data, (void)conn;
    if (strcmp(method, ACP_METHOD_SESSION_CANCEL) == 0) {
        char *sid = get_string(params, "/sessionId");
        fprintf(stderr, "[c-agent] the client cancelled the turn of %s\n", sid ? sid : "?");
        acp_string_free(sid);
    }
}

/* Serve remote clients at `address` until SIGINT or SIGTERM. */
static int serve(const char *address, const acp_options *options, const acp_handlers *handlers) {
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* the library's threads inherit the mask */
    acp_server_options serve = ACP_SERVER_OPTIONS_INIT;
    serve.token = getenv("ACP_ENGINE_TOKEN");
    acp_server *server = NULL;
    if (acp_server_listen(address, &serve, options, handlers, NULL, NULL, &server) != ACP_OK) {
        fprintf(stderr, "[c-agent] acp_server_listen: %s\n", acp_last_error_message());
        return 1;
    }
    char *websocket = acp_server_websocket_url(server), *http = acp_server_http_url(server);
    printf("%s\n%s\n", websocket, http);
    fflush(stdout);
    acp_string_free(websocket), acp_string_free(http);
    int signal_number;
    sigwait(&stop, &signal_number);
    acp_server_free(server);
    acp_shutdown();
    return 0;
}

int main(int argc, char **argv) {
    /* Start from the _INIT values: they set struct_size, the size of the
     * structs in this header, so that a newer library reads them right. */
    acp_options options = ACP_OPTIONS_INIT;
    options.side = ACP_SIDE_AGENT;
    acp_handlers handlers = ACP_HANDLERS_INIT;
    handlers.on_request = on_request;
    handlers.on_notification = on_notification;
    if (argc == 3 && strcmp(argv[1], "--serve") == 0) return serve(argv[2], &options, &handlers);
    acp_connection *conn = NULL;
    if (acp_connection_stdio(&options, &handlers, &conn) != ACP_OK) {
        fprintf(stderr, "[c-agent] acp_connection_stdio: %s\n", acp_last_error_message());
        return 1;
    }
    /* Serve until the client closes our stdin. */
    acp_connection_wait_closed(conn, -1);
    acp_connection_free(conn);
    acp_shutdown();
    for (int i = 0; i < session_count; i++) acp_string_free(sessions[i]);
    return 0;
}
