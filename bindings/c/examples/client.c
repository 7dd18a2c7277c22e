/*
 * client.c: an ACP client in C on libacp_engine. It spawns the agent given
 * on its command line and runs the interop contract (interop/README.md):
 *
 *   1. a temp dir with hello.txt as the session cwd;
 *   2. initialize, session/new;
 *   3. "Say hello": serve permission (allow_once), fs read/write and a real
 *      terminal (posix_spawn), collect the streamed text, expect end_turn;
 *   4. "cancel me": when the permission request comes, send session/cancel,
 *      then answer it "cancelled"; expect stopReason cancelled;
 *   5. close (the library reaps the agent, killing it if it lingers) and
 *      print "interop ok".
 *
 *   cc client.c $(pkg-config --cflags --libs acp_engine) -o c-client
 *   ./c-client ./c-agent
 *
 * The main thread sends with acp_connection_request (blocking); the
 * agent's requests and notifications arrive in callbacks on the
 * connection's dispatch thread, which may block (terminal/wait_for_exit
 * does). JSON is read with the library's acp_json_get_* (JSON pointers).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <ftw.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <acp_engine.h>

extern char **environ;

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

/* The number at `pointer` in `json`, or `fallback`. */
static long get_long(const char *json, const char *pointer, long fallback) {
    double value;
    return json && acp_json_get_number(json, pointer, &value) == ACP_OK ? (long)value : fallback;
}

/* `text` as a JSON string literal (free with acp_string_free). */
static char *quote(const char *text) {
    char *out = NULL;
    if (acp_json_quote(text, &out) != ACP_OK) abort();
    return out;
}

/* ---- state ------------------------------------------------------------------ */

enum turn { SAY_HELLO, CANCEL_ME };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static enum turn turn;
static char *session_id;
static char cwd[256];
static char reply[4096];      /* agent_message_chunk texts */
#define MAX_NEWS 8
static char *news[MAX_NEWS];  /* notice and compaction updates (JSON), in order */
static int news_count;

#define MAX_TERMINALS 8
static struct terminal {
    pid_t pid;
    int exited, exit_code, signal;
    char out_file[300];       /* stdout+stderr of the command */
} terminals[MAX_TERMINALS];
static int terminal_count;

static void fail(const char *why) {
    fprintf(stderr, "FAIL: %s\n", why);
    exit(1);
}

static int remove_entry(const char *path, const struct stat *st, int kind, struct FTW *at) {
    (void)st, (void)kind, (void)at;
    remove(path);
    return 0;
}

/* At exit, failed or not: the session's directory (with whatever the agent
 * wrote there) and the terminals' output files go. */
static void remove_temp_files(void) {
    for (int i = 0; i < terminal_count; i++) unlink(terminals[i].out_file);
    nftw(cwd, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* ---- serving the agent -------------------------------------------------------- */

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, mem);
    fclose(f);
    fclose(mem);
    return text;
}

/* fs/read_text_file: the real file, from `line` (1-based), `limit` lines. */
static char *read_text_file(const char *params) {
    char *path = get_string(params, "/path");
    char *text = path ? read_file(path) : NULL;
    acp_string_free(path);
    if (!text) return NULL;
    long line = get_long(params, "/line", 1), limit = get_long(params, "/limit", -1);
    char *start = text, *newline;
    for (long i = 1; i < line && start; i++) /* skip to the line */
        start = (newline = strchr(start, '\n')) ? newline + 1 : NULL;
    char *stop = start;
    for (long i = 0; stop && *stop && (limit < 0 || i < limit); i++) /* take `limit` lines */
        stop = (newline = strchr(stop, '\n')) ? newline + 1 : stop + strlen(stop);
    if (stop) *stop = '\0';
    char *quoted = quote(start ? start : ""), *result = fmt("{\"content\":%s}", quoted);
    acp_string_free(quoted);
    free(text);
    return result;
}

static char *write_text_file(const char *params) {
    char *path = get_string(params, "/path"), *content = get_string(params, "/content");
    FILE *f = path && content ? fopen(path, "w") : NULL;
    if (f) fputs(content, f), fclose(f);
    acp_string_free(path), acp_string_free(content);
    return f ? strdup("{}") : NULL;
}

/* terminal/create: start `command args...` for real, output to a file. */
static char *terminal_create(const char *params) {
    char *argv[34] = {get_string(params, "/command")};
    int argc = 1;
    for (char pointer[32]; argc < 33; argc++) {
        snprintf(pointer, sizeof pointer, "/args/%d", argc - 1);
        if (!(argv[argc] = get_string(params, pointer))) break;
    }
    char *dir = get_string(params, "/cwd");
    pthread_mutex_lock(&lock);
    int id = terminal_count < MAX_TERMINALS ? terminal_count++ : -1;
    pthread_mutex_unlock(&lock);
    char *result = NULL;
    if (id >= 0 && argv[0]) {
        struct terminal *t = &terminals[id];
        snprintf(t->out_file, sizeof t->out_file, "%s.terminal-%d.out", cwd, id);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, t->out_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        posix_spawn_file_actions_adddup2(&actions, 1, 2);
        posix_spawn_file_actions_addchdir_np(&actions, dir ? dir : cwd);
        if (posix_spawnp(&t->pid, argv[0], &actions, NULL, argv, environ) == 0)
            result = fmt("{\"terminalId\":\"term-%d\"}", id);
        posix_spawn_file_actions_destroy(&actions);
    }
    for (int i = 0; i < argc; i++) acp_string_free(argv[i]);
    acp_string_free(dir);
    return result;
}

/* The terminal named in params, or NULL. */
static struct terminal *terminal_of(const char *params) {
    int id = -1;
    char *name = get_string(params, "/terminalId");
    if (name) sscanf(name, "term-%d", &id);
    acp_string_free(name);
    return id >= 0 && id < terminal_count && terminals[id].pid > 0 ? &terminals[id] : NULL;
}

/* Reap the command if it exited (or wait for it if `block`). The agents of
 * the contract use one terminal call at a time, so no locking here. */
static void terminal_poll(struct terminal *t, int block) {
    int status;
    if (!t->exited && waitpid(t->pid, &status, block ? 0 : WNOHANG) == t->pid) {
        t->exited = 1;
        t->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        t->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    }
}

static char *exit_status(struct terminal *t) {
    return t->signal ? fmt("{\"exitCode\":null,\"signal\":\"SIG%s\"}", sigabbrev_np(t->signal))
                     : fmt("{\"exitCode\":%d,\"signal\":null}", t->exit_code);
}

static char *terminal_request(const char *method, const char *params) {
    struct terminal *t = terminal_of(params);
    if (!t) return NULL;
    char *result = NULL;
    if (strcmp(method, ACP_METHOD_TERMINAL_OUTPUT) == 0) {
        terminal_poll(t, 0);
        char *text = read_file(t->out_file), *quoted = quote(text ? text : "");
        char *status = t->exited ? exit_status(t) : NULL;
        result = status ? fmt("{\"output\":%s,\"truncated\":false,\"exitStatus\":%s}", quoted, status)
                        : fmt("{\"output\":%s,\"truncated\":false}", quoted);
        free(text), acp_string_free(quoted), free(status);
    } else if (strcmp(method, ACP_METHOD_TERMINAL_WAIT_FOR_EXIT) == 0) {
        terminal_poll(t, 1);
        result = exit_status(t);
    } else if (strcmp(method, ACP_METHOD_TERMINAL_KILL) == 0 || strcmp(method, ACP_METHOD_TERMINAL_RELEASE) == 0) {
        terminal_poll(t, 0);
        if (!t->exited) kill(t->pid, SIGKILL), terminal_poll(t, 1);
        if (method[9] == 'r') unlink(t->out_file), t->pid = 0; /* release: forget it */
        result = strdup("{}");
    }
    return result;
}

/* session/request_permission: allow_once in "Say hello"; in "cancel me",
 * cancel the turn first, then answer "cancelled". */
static char *request_permission(const acp_connection *conn, const char *params) {
    if (turn == CANCEL_ME) {
        char *cancel = fmt("{\"sessionId\":\"%s\"}", session_id);
        acp_connection_send_notification(conn, ACP_METHOD_SESSION_CANCEL, cancel);
        free(cancel);
        return strdup("{\"outcome\":{\"outcome\":\"cancelled\"}}");
    }
    /* The optionId of the option whose kind is allow_once. */
    for (int i = 0;; i++) {
        char pointer[48];
        snprintf(pointer, sizeof pointer, "/options/%d/kind", i);
        char *kind = get_string(params, pointer);
        if (!kind) return NULL;
        int allow = strcmp(kind, "allow_once") == 0;
        acp_string_free(kind);
        if (!allow) continue;
        snprintf(pointer, sizeof pointer, "/options/%d/optionId", i);
        char *id = get_string(params, pointer), *quoted = id ? quote(id) : NULL;
        char *result = quoted ? fmt("{\"outcome\":{\"outcome\":\"selected\",\"optionId\":%s}}", quoted) : NULL;
        acp_string_free(id), acp_string_free(quoted);
        return result;
    }
}

static void on_request(void *user_data, const acp_connection *conn, const char *method, const char *params,
                       acp_responder *responder) {
    (void)user_data;
    char *result = NULL;
    if (strcmp(method, ACP_METHOD_SESSION_REQUEST_PERMISSION) == 0) result = request_permission(conn, params);
    else if (strcmp(method, ACP_METHOD_FS_READ_TEXT_FILE) == 0) result = read_text_file(params);
    else if (strcmp(method, ACP_METHOD_FS_WRITE_TEXT_FILE) == 0) result = write_text_file(params);
    else if (strcmp(method, ACP_METHOD_TERMINAL_CREATE) == 0) result = terminal_create(params);
    else if (strncmp(method, "terminal/", 9) == 0) result = terminal_request(method, params);
    else {
        acp_responder_error(responder, ACP_ERROR_METHOD_NOT_FOUND, ACP_MESSAGE_METHOD_NOT_FOUND, NULL);
        return;
    }
    if (result) acp_responder_ok(responder, result);
    else acp_responder_error(responder, ACP_ERROR_INTERNAL_ERROR, ACP_MESSAGE_INTERNAL_ERROR, NULL);
    free(result);
}

static void on_notification(void *user_data, const acp_connection *conn, const char *method, const char *params) {
    (void)user_data, (void)conn;
    char *kind = get_string(params, "/update/sessionUpdate");
    char *text = get_string(params, "/update/content/text");
    if (strcmp(method, ACP_METHOD_SESSION_UPDATE) == 0 && kind && text && strcmp(kind, "agent_message_chunk") == 0) {
        pthread_mutex_lock(&lock);
        strncat(reply, text, sizeof reply - strlen(reply) - 1);
        pthread_mutex_unlock(&lock);
    } else if (strcmp(method, ACP_METHOD_SESSION_UPDATE) == 0 && kind &&
               (strcmp(kind, "notice") == 0 || strncmp(kind, "compaction_", 11) == 0)) {
        char *update = NULL;
        if (acp_json_get(params, "/update", &update) == ACP_OK && news_count < MAX_NEWS) news[news_count++] = update;
        else acp_string_free(update);
    }
    acp_string_free(kind), acp_string_free(text);
}

/* ---- the script ---------------------------------------------------------------- */

/* A request to the agent; its result (free with acp_string_free). */
static char *request(const acp_connection *conn, const char *method, const char *params) {
    char *result = NULL;
    if (acp_connection_request(conn, method, params, 30000, &result) != ACP_OK) {
        fprintf(stderr, "%s: %s %s\n", method, acp_last_error_message(), result ? result : "");
        fail(method);
    }
    return result;
}

/* The string at `pointer` in the news update `i` is `want`. */
static int news_says(int i, const char *pointer, const char *want) {
    char *value = NULL;
    int same = i < news_count && acp_json_get_string(news[i], pointer, &value) == ACP_OK && strcmp(value, want) == 0;
    acp_string_free(value);
    return same;
}

/* The updates of interop/news.json arrived, in order. */
static void check_news(void) {
    if (news_count != 4 || !news_says(0, "/sessionUpdate", "notice") || !news_says(0, "/severity", "info") ||
        !news_says(0, "/title", "Context compacted") ||
        !news_says(0, "/description", "Older messages were summarized.") ||
        !news_says(1, "/sessionUpdate", "compaction_update") || !news_says(1, "/status", "in_progress") ||
        !news_says(2, "/sessionUpdate", "compaction_summary_chunk") ||
        !news_says(2, "/content/text", "The user asked for a greeting.") ||
        !news_says(3, "/compactionId", "compaction-1") || !news_says(3, "/status", "completed"))
        fail("the notice and compaction updates of interop/news.json did not arrive");
}

static void prompt(const acp_connection *conn, const char *text, const char *want_stop) {
    char *params = fmt("{\"sessionId\":\"%s\",\"prompt\":[{\"type\":\"text\",\"text\":\"%s\"}]}", session_id, text);
    char *result = request(conn, ACP_METHOD_SESSION_PROMPT, params);
    char *stop = get_string(result, "/stopReason");
    if (!stop || strcmp(stop, want_stop) != 0) {
        fprintf(stderr, "FAIL: \"%s\": stopReason %s, expected %s\n", text, stop ? stop : "(none)", want_stop);
        exit(1);
    }
    acp_string_free(stop), free(params);
    acp_string_free(result);
}

int main(int argc, char **argv) {
    if (argc < 2) fail("usage: client <agent command> [args...] | URL (ws://, wss://, http://, https://)");
    /* The library we run with must have the ABI of the header we were built with. */
    if (acp_engine_abi_version() != ACP_ENGINE_ABI_VERSION) fail("libacp_engine has another ABI version than acp_engine.h");
    strcpy(cwd, "/tmp/acp-c-client.XXXXXX");
    if (!mkdtemp(cwd)) fail("mkdtemp");
    atexit(remove_temp_files);
    char *hello = fmt("%s/hello.txt", cwd), *written = fmt("%s/written.txt", cwd);
    FILE *f = fopen(hello, "w");
    if (!f) fail("cannot write hello.txt");
    fputs("Hello from the client's file\n", f);
    fclose(f);

    /* Start from the _INIT values: they set struct_size, the size of the
     * structs in this header, so that a newer library reads them right. */
    acp_options options = ACP_OPTIONS_INIT;
    options.side = ACP_SIDE_CLIENT;
    acp_handlers handlers = ACP_HANDLERS_INIT;
    handlers.on_request = on_request;
    handlers.on_notification = on_notification;
    acp_connection *conn = NULL;
    /* A URL is a remote agent (token: ACP_ENGINE_TOKEN); anything else a command to spawn. */
    acp_remote_options remote = {.token = getenv("ACP_ENGINE_TOKEN")};
    acp_result opened = strstr(argv[1], "://") != NULL
                            ? acp_connection_connect_url(argv[1], &remote, &options, &handlers, &conn)
                            : acp_connection_spawn((const char *const *)argv + 1, NULL, NULL, &options, &handlers, &conn);
    if (opened != ACP_OK) fail(acp_last_error_message());

    /* We show notices and context compactions (session.notices, session.compaction). */
    char *result = request(conn, ACP_METHOD_INITIALIZE,
                           "{\"protocolVersion\":1,\"clientCapabilities\":{\"fs\":{\"readTextFile\":true,"
                           "\"writeTextFile\":true},\"terminal\":true,\"session\":{\"notices\":{},\"compaction\":{}}},"
                           "\"clientInfo\":{\"name\":\"c-interop-client\",\"version\":\"1.0.0\"}}");
    if (get_long(result, "/protocolVersion", 0) != ACP_PROTOCOL_VERSION) fail("initialize: protocolVersion is not 1");
    acp_string_free(result);
    char *quoted_cwd = quote(cwd), *params = fmt("{\"cwd\":%s,\"mcpServers\":[]}", quoted_cwd);
    result = request(conn, ACP_METHOD_SESSION_NEW, params);
    session_id = get_string(result, "/sessionId");
    if (!session_id) fail("session/new: no sessionId");
    acp_string_free(result);
    acp_string_free(quoted_cwd), free(params);

    turn = SAY_HELLO;
    prompt(conn, "Say hello", "end_turn");
    if (!strstr(reply, "Hello from the client's file")) fail("the reply lacks the file's content");
    if (!strstr(reply, "terminal said: hi")) fail("the reply lacks the terminal's output");
    char *content = read_file(written);
    if (!content || strcmp(content, "written by agent") != 0) fail("written.txt is not 'written by agent'");
    free(content);
    const char *expect_news = getenv("ACP_INTEROP_NEWS");
    if (expect_news && strcmp(expect_news, "1") == 0) check_news();

    turn = CANCEL_ME;
    prompt(conn, "cancel me", "cancelled");

    /* Close: the agent sees EOF; the library reaps it (killing it if it has
     * not exited soon after). */
    acp_connection_close(conn);
    if (acp_connection_wait_closed(conn, 5000) != ACP_OK) fail("the agent did not go away");
    acp_connection_free(conn);
    acp_shutdown();
    free(hello), free(written), acp_string_free(session_id);
    for (int i = 0; i < news_count; i++) acp_string_free(news[i]);
    puts("interop ok");
    return 0;
}
