/*
 * test_process.c: connections to real processes.
 *   - acp_connection_spawn with env ("KEY=VALUE", added to the inherited
 *     environment) and cwd; a missing program -> ACP_ERR_IO; bad argv/env;
 *   - the peer crashes (kill -9): every pending completion fails with
 *     ACP_ERROR_CONNECTION_CLOSED "Connection closed", a blocked acp_connection_request returns
 *     ACP_ERR_CLOSED, on_close runs, wait_closed returns ACP_OK, the process
 *     is reaped; once with `sleep`, once with our Rust example agent;
 *   - a child that ignores EOF on stdin is killed after close;
 *   - acp_connection_stdio: this program re-spawns itself as an ACP agent
 *     on its stdio (`test_process --stdio-child`);
 *   - SIGPIPE: a child that closes its stdin while we write must not kill
 *     the host (`test_process --sigpipe-child`, default SIGPIPE action):
 *     the library blocks SIGPIPE on its own threads. (The rest of this
 *     program ignores SIGPIPE anyway, for its own pipes.)
 * Children are started as `sh -c 'echo $$ > pidfile; exec ...'` so the
 * test knows their pid independently of acp_connection_pid.
 */
#include "harness.h"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char **environ;

static char tmp_dir[256];

static void path_in_tmp(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s", tmp_dir, name);
}

/* The pid a child wrote to `file` (waits for it), or -1. */
static pid_t read_pid(const char *file, int timeout_ms) {
    long long deadline = now_ms() + timeout_ms;
    while (now_ms() < deadline) {
        FILE *f = fopen(file, "r");
        if (f) {
            long pid = -1;
            int n = fscanf(f, "%ld", &pid);
            fclose(f);
            if (n == 1 && pid > 0) return (pid_t)pid;
        }
        sleep_ms(5);
    }
    return -1;
}

/* Gone for good: not even a zombie (a zombie still answers kill 0). */
static int reaped(pid_t pid) {
    return kill(pid, 0) == -1 && errno == ESRCH;
}

static char *slurp(const char *file) {
    FILE *f = fopen(file, "r");
    if (!f) return NULL;
    char *text = calloc(1, 4096);
    size_t n = fread(text, 1, 4095, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* ---- spawn: env, cwd, errors --------------------------------------------- */

static void test_spawn_env_cwd(void) {
    harness_section("spawn with env and cwd");
    setenv("ACP_TEST_INHERITED", "inherited-value", 1);
    const char *script =
        "printf '{\"jsonrpc\":\"2.0\",\"method\":\"env\",\"params\":{\"key\":\"%s\",\"eq\":\"%s\","
        "\"inherited\":\"%s\",\"cwd\":\"%s\"}}\\n' \"$ACP_TEST_KEY\" \"$ACP_TEST_EQ\" "
        "\"$ACP_TEST_INHERITED\" \"$(pwd -P)\"; exec cat >/dev/null";
    const char *argv[] = {"sh", "-c", script, NULL};
    const char *env[] = {"ACP_TEST_KEY=the value", "ACP_TEST_EQ=a=b", NULL};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_spawn(argv, env, tmp_dir, NULL, NULL, &c), ACP_OK);
    acp_event *event = NULL;
    CHECK_RC(acp_connection_next_event(c, slow(5000), &event), ACP_OK);
    CHECK(event && event->kind == ACP_EVENT_NOTIFICATION);
    if (event && event->kind == ACP_EVENT_NOTIFICATION) {
        char want[512];
        char real_dir[256];
        CHECK(realpath(tmp_dir, real_dir) != NULL);
        snprintf(want, sizeof want,
                 "{\"key\":\"the value\",\"eq\":\"a=b\",\"inherited\":\"inherited-value\",\"cwd\":\"%s\"}",
                 real_dir);
        CHECK_STR_EQ(event->json, want);
    }
    acp_event_free(event);
    /* close -> cat sees EOF and exits -> reaped */
    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK_RC(acp_connection_wait_closed(c, slow(5000)), ACP_OK);
    event = NULL;
    CHECK_RC(acp_connection_next_event(c, slow(1000), &event), ACP_OK);
    CHECK(event && event->kind == ACP_EVENT_CLOSED);
    acp_event_free(event);
    acp_connection_free(c);
}

static void test_spawn_errors(void) {
    harness_section("spawn errors");
    acp_connection *c = (acp_connection *)(uintptr_t)1;
    /* Valgrind runs posix_spawn's vfork as a fork, so exec and chdir
     * failures of the child do not reach the parent there: skip those. */
    int exec_errors_visible = getenv("ACP_UNDER_VALGRIND") == NULL;
    const char *missing[] = {"/nonexistent/acp-no-such-program", NULL};
    const char *missing_in_path[] = {"acp-no-such-program-in-path", NULL};
    const char *argv[] = {"true", NULL};
    if (exec_errors_visible) {
        CHECK_RC(acp_connection_spawn(missing, NULL, NULL, NULL, NULL, &c), ACP_ERR_IO);
        CHECK_LAST_ERROR();
        CHECK(c == NULL);
        fprintf(stderr, "  missing program: %s\n", acp_last_error_message());
        CHECK_RC(acp_connection_spawn(missing_in_path, NULL, NULL, NULL, NULL, &c), ACP_ERR_IO);
        CHECK(c == NULL);
        CHECK_RC(acp_connection_spawn(argv, NULL, "/nonexistent/dir", NULL, NULL, &c), ACP_ERR_IO);
        CHECK_LAST_ERROR();
        CHECK(c == NULL);
    } else {
        fprintf(stderr, "  (under valgrind: exec/chdir failures not checked)\n");
    }
    c = (acp_connection *)(uintptr_t)1;
    const char *empty[] = {NULL};
    CHECK_RC(acp_connection_spawn(empty, NULL, NULL, NULL, NULL, &c), ACP_ERR_INVALID_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK(c == NULL);
    const char *bad_env[] = {"NO_EQUALS_SIGN", NULL};
    CHECK_RC(acp_connection_spawn(argv, bad_env, NULL, NULL, NULL, &c), ACP_ERR_INVALID_ARGUMENT);
    CHECK_LAST_ERROR();
    CHECK(c == NULL);
}

/* ---- the peer crashes ---------------------------------------------------- */

typedef struct {
    latch done;   /* response callbacks */
    latch closed; /* on_close */
    latch permissions;
    pthread_mutex_t mutex;
    int64_t codes[8];
    char messages[8][64];
    int answers;
    acp_responder *held[8];
    int held_count;
} crash_state;

static void crash_state_init(crash_state *s) {
    memset(s, 0, sizeof *s);
    latch fresh = LATCH_INIT;
    s->done = fresh;
    s->closed = fresh;
    s->permissions = fresh;
    pthread_mutex_init(&s->mutex, NULL);
}

static void on_answer(void *user_data, const acp_connection *conn, int64_t id, const char *result, const acp_error *error) {
    (void)conn;
    crash_state *s = user_data;
    (void)id;
    pthread_mutex_lock(&s->mutex);
    int i = s->answers++;
    if (i < 8) {
        s->codes[i] = error ? error->code : 0;
        snprintf(s->messages[i], sizeof s->messages[i], "%s",
                 error && error->message ? error->message : (result ? result : "?"));
    }
    pthread_mutex_unlock(&s->mutex);
    latch_add(&s->done, 1);
}

static void on_close(void *user_data, const acp_connection *conn, const char *reason) {
    (void)conn;
    crash_state *s = user_data;
    fprintf(stderr, "  on_close: %s\n", reason);
    latch_add(&s->closed, 1);
}

/* As a client: park session/request_permission, answer the rest -32601. */
static void park_permission(void *user_data, const acp_connection *conn, const char *method, const char *params,
                            acp_responder *responder) {
    (void)conn;
    crash_state *s = user_data;
    (void)params;
    if (strcmp(method, "session/request_permission") != 0) {
        acp_responder_error(responder, -32601, "Method not found", NULL);
        return;
    }
    pthread_mutex_lock(&s->mutex);
    if (s->held_count < 8) s->held[s->held_count++] = responder;
    pthread_mutex_unlock(&s->mutex);
    latch_add(&s->permissions, 1);
}

static void check_all_failed_closed(crash_state *s, int n) {
    CHECK(latch_wait(&s->done, n, slow(5000)));
    pthread_mutex_lock(&s->mutex);
    CHECK_EQ_INT(s->answers, n);
    for (int i = 0; i < n && i < 8; i++) {
        CHECK_EQ_INT(s->codes[i], ACP_ERROR_CONNECTION_CLOSED);
        CHECK_STR_EQ(s->messages[i], "Connection closed");
    }
    pthread_mutex_unlock(&s->mutex);
}

static void test_crash_sleep(void) {
    harness_section("peer crash: sleep 30, kill -9");
    static crash_state s;
    crash_state_init(&s);
    char pidfile[300];
    path_in_tmp(pidfile, sizeof pidfile, "sleep.pid");
    char script[512];
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 30", pidfile);
    const char *argv[] = {"sh", "-c", script, NULL};
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &s, .on_close = on_close};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_spawn(argv, NULL, NULL, NULL, &h, &c), ACP_OK);
    pid_t pid = read_pid(pidfile, slow(5000));
    CHECK(pid > 0);
    if (pid <= 0) return;
    for (int i = 0; i < 3; i++)
        CHECK_RC(acp_connection_send_request(c, "work", "{}", on_answer, &s, NULL), ACP_OK);
    CHECK(!acp_connection_is_closed(c));
    CHECK_EQ_INT(latch_get(&s.done), 0);
    CHECK(kill(pid, SIGKILL) == 0);
    check_all_failed_closed(&s, 3);
    CHECK(latch_wait(&s.closed, 1, slow(5000)));
    CHECK_RC(acp_connection_wait_closed(c, slow(5000)), ACP_OK);
    CHECK(acp_connection_is_closed(c));
    CHECK(reaped(pid));
    CHECK_RC(acp_connection_send_request(c, "late", "{}", on_answer, &s, NULL), ACP_ERR_CLOSED);
    acp_connection_free(c);
    sleep_ms(20);
    CHECK_EQ_INT(latch_get(&s.closed), 1); /* once */
}

typedef struct {
    acp_connection *c;
    char session[128];
    int rc;
} blocked_call;

static void *prompt_and_block(void *arg) {
    blocked_call *b = arg;
    char params[256], *json = NULL;
    snprintf(params, sizeof params,
             "{\"sessionId\":\"%s\",\"prompt\":[{\"type\":\"text\",\"text\":\"cancel me\"}]}", b->session);
    b->rc = acp_connection_request(b->c, "session/prompt", params, -1, &json);
    acp_string_free(json);
    return NULL;
}

static void test_crash_rust_agent(void) {
    harness_section("peer crash: our Rust example agent, kill -9 mid-turn");
    static crash_state s;
    crash_state_init(&s);
    char pidfile[300], agent[600], script[1200];
    path_in_tmp(pidfile, sizeof pidfile, "agent.pid");
    snprintf(agent, sizeof agent, "%s/examples/agent", acp_target_dir());
    if (access(agent, X_OK) != 0) {
        harness_fail(__FILE__, __LINE__, "%s not built", agent);
        return;
    }
    snprintf(script, sizeof script, "echo $$ > '%s'; exec '%s' 2>/dev/null", pidfile, agent);
    const char *argv[] = {"sh", "-c", script, NULL};
    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_CLIENT};
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &s, .on_request = park_permission, .on_close = on_close};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_spawn(argv, NULL, NULL, &options, &h, &c), ACP_OK);
    pid_t pid = read_pid(pidfile, slow(5000));
    CHECK(pid > 0);

    char *json = NULL;
    CHECK_RC(acp_connection_request(c, "initialize",
                                    "{\"protocolVersion\":1,\"clientCapabilities\":{\"fs\":{\"readTextFile\":true,"
                                    "\"writeTextFile\":true},\"terminal\":true}}",
                                    slow(10000), &json),
             ACP_OK);
    CHECK(json_int(json, "protocolVersion", 0) == 1);
    acp_string_free(json);
    char params[512];
    snprintf(params, sizeof params, "{\"cwd\":\"%s\",\"mcpServers\":[]}", tmp_dir);
    json = NULL;
    CHECK_RC(acp_connection_request(c, "session/new", params, slow(5000), &json), ACP_OK);
    blocked_call blocked = {c, "", -1};
    const char *sid = json ? strstr(json, "\"sessionId\":\"") : NULL;
    if (sid) sscanf(sid + 13, "%127[^\"]", blocked.session);
    acp_string_free(json);
    CHECK(blocked.session[0] != '\0');
    if (pid <= 0 || !blocked.session[0]) {
        acp_connection_free(c);
        return;
    }

    /* Two turns with callbacks, one blocked in acp_connection_request; each
     * waits on a permission request that we never answer. */
    snprintf(params, sizeof params,
             "{\"sessionId\":\"%s\",\"prompt\":[{\"type\":\"text\",\"text\":\"cancel me\"}]}", blocked.session);
    CHECK_RC(acp_connection_send_request(c, "session/prompt", params, on_answer, &s, NULL), ACP_OK);
    CHECK_RC(acp_connection_send_request(c, "session/prompt", params, on_answer, &s, NULL), ACP_OK);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, prompt_and_block, &blocked) == 0);
    CHECK(latch_wait(&s.permissions, 3, slow(10000)));

    CHECK(kill(pid, SIGKILL) == 0);
    check_all_failed_closed(&s, 2);
    pthread_join(thread, NULL);
    CHECK_EQ_INT(blocked.rc, ACP_ERR_CLOSED);
    CHECK(latch_wait(&s.closed, 1, slow(5000)));
    CHECK_RC(acp_connection_wait_closed(c, slow(5000)), ACP_OK);
    CHECK(reaped(pid));
    /* The parked permission requests can no longer be answered: the
     * connection is gone (answering again after that is "already answered"). */
    for (int i = 0; i < s.held_count; i++) {
        CHECK(acp_responder_is_cancelled(s.held[i]));
        CHECK_RC(acp_responder_ok(s.held[i], "{\"outcome\":{\"outcome\":\"cancelled\"}}"),
                 ACP_ERR_CLOSED);
        CHECK_RC(acp_responder_ok(s.held[i], "{}"), ACP_ERR_ALREADY_ANSWERED);
    }
    char *reason = acp_connection_close_reason(c);
    CHECK(reason != NULL);
    acp_string_free(reason);
    acp_connection_free(c);
}

/* A child that ignores EOF (and SIGTERM) is killed after close. */
static void test_stubborn_child_is_killed(void) {
    harness_section("close kills a child that does not exit on EOF");
    char pidfile[300], script[512];
    path_in_tmp(pidfile, sizeof pidfile, "stubborn.pid");
    snprintf(script, sizeof script, "trap '' TERM; echo $$ > '%s'; exec sleep 30", pidfile);
    const char *argv[] = {"sh", "-c", script, NULL};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_spawn(argv, NULL, NULL, NULL, NULL, &c), ACP_OK);
    pid_t pid = read_pid(pidfile, slow(5000));
    CHECK(pid > 0);
    /* `exec` keeps the pid: the shell's $$ is the process we spawned. */
    CHECK_EQ_INT(acp_connection_pid(c), pid);
    long long started = now_ms();
    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK_RC(acp_connection_wait_closed(c, slow(5000)), ACP_OK);
    long long took = now_ms() - started;
    fprintf(stderr, "  closed and reaped in %lld ms\n", took);
    CHECK(took < slow(3000));
    if (pid > 0) CHECK(reaped(pid));
    acp_connection_free(c);
}

/* ---- acp_connection_stdio: ourselves as the agent ------------------------ */

typedef struct {
    latch closed;
} child_state;

static void child_request(void *user_data, const acp_connection *conn, const char *method, const char *params, acp_responder *responder) {
    (void)conn;
    (void)user_data;
    if (strcmp(method, "initialize") == 0) {
        char result[512];
        snprintf(result, sizeof result,
                 "{\"protocolVersion\":1,\"agentCapabilities\":{},\"authMethods\":[],"
                 "\"agentInfo\":{\"name\":\"stdio-child\",\"version\":\"%s\"}}",
                 getenv("ACP_CHILD_VERSION") ? getenv("ACP_CHILD_VERSION") : "?");
        acp_responder_ok(responder, result);
    } else {
        (void)params;
        acp_responder_error(responder, -32601, "Method not found", NULL);
    }
}

static void child_close(void *user_data, const acp_connection *conn, const char *reason) {
    (void)conn;
    child_state *s = user_data;
    (void)reason;
    latch_add(&s->closed, 1);
}

/* The child: serve ACP on stdio until EOF, then leave a marker file. */
static int stdio_child(const char *marker) {
    static child_state s = {LATCH_INIT};
    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_AGENT};
    acp_handlers h = {.struct_size = sizeof(acp_handlers), .user_data = &s, .on_request = child_request, .on_close = child_close};
    acp_connection *c = NULL;
    if (acp_connection_stdio(&options, &h, &c) != ACP_OK) return 3;
    if (acp_connection_wait_closed(c, 20000) != ACP_OK) return 4;
    int closed = latch_wait(&s.closed, 1, 5000);
    acp_connection_free(c);
    acp_shutdown();
    FILE *f = fopen(marker, "w");
    if (!f) return 5;
    fprintf(f, "%s\n", closed ? "clean exit" : "no on_close");
    fclose(f);
    return 0;
}

static void test_stdio(void) {
    harness_section("acp_connection_stdio (this program as the agent)");
    char self[1024], marker[300];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    if (n <= 0) return;
    self[n] = '\0';
    path_in_tmp(marker, sizeof marker, "stdio-child.done");
    const char *argv[] = {self, "--stdio-child", marker, NULL};
    const char *env[] = {"ACP_CHILD_VERSION=9.9.9", NULL};
    acp_options options = {.struct_size = sizeof(acp_options), .side = ACP_SIDE_CLIENT};
    acp_connection *c = NULL;
    CHECK_RC(acp_connection_spawn(argv, env, NULL, &options, NULL, &c), ACP_OK);
    char *json = NULL;
    CHECK_RC(acp_connection_request(c, "initialize", "{\"protocolVersion\":1}", slow(10000), &json), ACP_OK);
    CHECK_CONTAINS(json, "\"agentInfo\":{\"name\":\"stdio-child\",\"version\":\"9.9.9\"}");
    acp_string_free(json);
    json = NULL;
    CHECK_RC(acp_connection_request(c, "session/new", "{\"cwd\":\"/\",\"mcpServers\":[]}", slow(10000), &json),
             ACP_ERR_REQUEST_FAILED);
    CHECK(json_int(json, "code", 0) == -32601);
    acp_string_free(json);
    CHECK_RC(acp_connection_close(c), ACP_OK);
    CHECK_RC(acp_connection_wait_closed(c, slow(10000)), ACP_OK);
    acp_connection_free(c);
    char *done = slurp(marker);
    CHECK_STR_EQ(done, "clean exit\n");
    free(done);
}

/* ---- SIGPIPE --------------------------------------------------------------- */

/* The child: SIGPIPE left at its default action, like most C programs. Its
 * agent closes stdin but lives on; we keep writing. Exit 0 if sends end
 * with ACP_ERR_CLOSED and we are still alive. */
static int sigpipe_child(void) {
    const char *argv[] = {"sh", "-c", "exec 0<&-; sleep 3", NULL};
    acp_connection *c = NULL;
    if (acp_connection_spawn(argv, NULL, NULL, NULL, NULL, &c) != ACP_OK) return 3;
    sleep_ms(300); /* the child has closed its stdin by now */
    int rc = ACP_OK;
    for (int i = 0; i < 200 && rc == ACP_OK; i++) {
        rc = acp_connection_send_notification(c, "n", "{}");
        sleep_ms(2);
    }
    acp_connection_free(c);
    acp_shutdown();
    return rc == ACP_ERR_CLOSED ? 0 : 4;
}

static void test_sigpipe(const char *self) {
    harness_section("a peer that closes its stdin does not kill the host (SIGPIPE)");
    const char *argv[] = {self, "--sigpipe-child", NULL};
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &defaults); /* SIGPIPE: SIG_DFL */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int err = posix_spawn(&pid, self, NULL, &attr, (char *const *)argv, environ);
    posix_spawnattr_destroy(&attr);
    CHECK(err == 0);
    if (err) return;
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    int killed_by_sigpipe = WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE;
    fprintf(stderr, "  child: %s %d\n", WIFSIGNALED(status) ? "killed by signal" : "exit status",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    CHECK_THAT(!killed_by_sigpipe, "SIGPIPE from the library's write kills a C host whose peer closed its stdin");
    if (!killed_by_sigpipe) CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--stdio-child") == 0) return stdio_child(argv[2]);
    if (argc == 2 && strcmp(argv[1], "--sigpipe-child") == 0) return sigpipe_child();
    /* Our own writes to children's pipes (not the library's). */
    signal(SIGPIPE, SIG_IGN);
    harness_name = "test_process";
    snprintf(tmp_dir, sizeof tmp_dir, "%s/acp-c-test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_spawn_env_cwd();
    test_spawn_errors();
    test_crash_sleep();
    test_crash_rust_agent();
    test_stubborn_child_is_killed();
    test_stdio();
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        test_sigpipe(self);
    }
    acp_shutdown();
    char cleanup[400];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", tmp_dir);
    if (system(cleanup) != 0) fprintf(stderr, "could not remove %s\n", tmp_dir);
    return harness_finish();
}
