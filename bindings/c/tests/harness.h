/*
 * harness.h: a tiny test harness for the C ABI tests (header-only; each test
 * program includes it once).
 *
 *   CHECK(cond)                  count a check; on failure print file:line
 *   CHECK_RC(call, expected)     an acp_result, with acp_last_error_message()
 *   CHECK_EQ_INT(a, b)           two integers
 *   CHECK_STR_EQ(a, b)           two C strings (NULL-safe)
 *   CHECK_CONTAINS(hay, needle)  strstr, NULL-safe
 *   return harness_finish();     print "<test>: N checks, M failed", exit code
 *
 * Checks may run on the library's worker threads (inside callbacks): the
 * counters are atomic.
 *
 * Helpers:
 *   acp_repo(), acp_target_dir()   from ACP_REPO / ACP_TARGET_DIR (run.sh sets
 *                                  them; defaults "." and "./target/debug")
 *   self_exe()                     this test program's path
 *   latch_*                        a counter with wait-until, for callbacks
 *   peer_*                         the raw peer: one end of a socketpair, the
 *                                  other end handed to acp_connection_fds;
 *                                  the test reads and writes JSON lines itself
 *   json_int / json_has            strstr-level JSON probes for compact JSON
 */
#ifndef ACP_TEST_HARNESS_H
#define ACP_TEST_HARNESS_H

#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "acp_engine.h"

/* ---- checks ------------------------------------------------------------- */

static atomic_int harness_checks;
static atomic_int harness_failures;

static inline void harness_fail(const char *file, int line, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    flockfile(stderr);
    fprintf(stderr, "%s:%d: CHECK failed: ", file, line);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    funlockfile(stderr);
    va_end(args);
    atomic_fetch_add(&harness_failures, 1);
}

#define CHECK(cond)                                                          \
    do {                                                                     \
        atomic_fetch_add(&harness_checks, 1);                                \
        if (!(cond)) harness_fail(__FILE__, __LINE__, "%s", #cond);          \
    } while (0)

static inline const char *acp_result_name(int rc) {
    static const char *names[] = {
        "ACP_OK", "ACP_ERR_NULL_ARGUMENT", "ACP_ERR_INVALID_UTF8",
        "ACP_ERR_INVALID_JSON", "ACP_ERR_INVALID_ARGUMENT", "ACP_ERR_CLOSED",
        "ACP_ERR_IO", "ACP_ERR_ALREADY_ANSWERED", "ACP_ERR_TIMEOUT",
        "ACP_ERR_REQUEST_FAILED", "ACP_ERR_WRONG_MODE", "ACP_ERR_INTERNAL"};
    return rc >= 0 && rc < (int)(sizeof names / sizeof *names) ? names[rc] : "?";
}

/* Evaluates `call` once; on a mismatch prints both codes and the library's
 * last error message (of this thread). Yields the code. */
#define CHECK_RC(call, expected)                                             \
    harness_check_rc((int)(call), (int)(expected), #call, __FILE__, __LINE__)

static inline int harness_check_rc(int got, int want, const char *text,
                            const char *file, int line) {
    atomic_fetch_add(&harness_checks, 1);
    if (got != want)
        harness_fail(file, line, "%s: got %s, want %s (last error: \"%s\")",
                     text, acp_result_name(got), acp_result_name(want),
                     acp_last_error_message());
    return got;
}

#define CHECK_EQ_INT(a, b)                                                   \
    do {                                                                     \
        long long harness_a_ = (long long)(a), harness_b_ = (long long)(b);  \
        atomic_fetch_add(&harness_checks, 1);                                \
        if (harness_a_ != harness_b_)                                        \
            harness_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a,   \
                         #b, harness_a_, harness_b_);                        \
    } while (0)

#define CHECK_STR_EQ(a, b)                                                   \
    do {                                                                     \
        const char *harness_a_ = (a), *harness_b_ = (b);                     \
        atomic_fetch_add(&harness_checks, 1);                                \
        if (!harness_a_ || !harness_b_ || strcmp(harness_a_, harness_b_))    \
            harness_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"",   \
                         #a, #b, harness_a_ ? harness_a_ : "(null)",         \
                         harness_b_ ? harness_b_ : "(null)");                \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                          \
    do {                                                                     \
        const char *harness_h_ = (hay), *harness_n_ = (needle);              \
        atomic_fetch_add(&harness_checks, 1);                                \
        if (!harness_h_ || !strstr(harness_h_, harness_n_))                  \
            harness_fail(__FILE__, __LINE__, "%s contains \"%s\": \"%s\"",   \
                         #hay, harness_n_, harness_h_ ? harness_h_ : "(null)"); \
    } while (0)

/* A check with a sentence saying what the library promises. */
#define CHECK_THAT(cond, what)                                               \
    do {                                                                     \
        atomic_fetch_add(&harness_checks, 1);                                \
        if (!(cond))                                                         \
            harness_fail(__FILE__, __LINE__, "%s (%s)", what, #cond);        \
    } while (0)

/* The library's last error must say something after a failure. */
#define CHECK_LAST_ERROR()                                                   \
    do {                                                                     \
        const char *harness_m_ = acp_last_error_message();                   \
        CHECK(harness_m_ != NULL && harness_m_[0] != '\0');                  \
    } while (0)

static const char *harness_name = "test";

static inline int harness_finish(void) {
    int checks = atomic_load(&harness_checks);
    int failures = atomic_load(&harness_failures);
    printf("%s: %d checks, %d failed\n", harness_name, checks, failures);
    fflush(stdout);
    return failures == 0 && checks > 0 ? 0 : 1;
}

static inline void harness_section(const char *name) {
    fprintf(stderr, "[%s] %s\n", harness_name, name);
}

/* ---- paths -------------------------------------------------------------- */

static inline const char *acp_repo(void) {
    const char *repo = getenv("ACP_REPO");
    return repo && *repo ? repo : ".";
}

static inline const char *acp_target_dir(void) {
    static char fallback[4096];
    const char *dir = getenv("ACP_TARGET_DIR");
    if (dir && *dir) return dir;
    snprintf(fallback, sizeof fallback, "%s/target/debug", acp_repo());
    return fallback;
}

/* This test program's own path (for tests that run it again in another
 * role), or NULL. */
static inline const char *self_exe(void) {
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return NULL;
    self[n] = '\0';
    return self;
}

/* ---- time --------------------------------------------------------------- */

static inline long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

/* Scale timeouts when a slow tool (valgrind) runs us: run.sh sets
 * ACP_TEST_SLOW to a factor. */
static inline int slow(int ms) {
    const char *factor = getenv("ACP_TEST_SLOW");
    int f = factor ? atoi(factor) : 1;
    return ms * (f > 0 ? f : 1);
}

/* ---- latch: a counter that callbacks bump and the test waits on --------- */

typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int count;
} latch;

#define LATCH_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0}

static inline void latch_add(latch *l, int n) {
    pthread_mutex_lock(&l->mutex);
    l->count += n;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->mutex);
}

static inline int latch_get(latch *l) {
    pthread_mutex_lock(&l->mutex);
    int count = l->count;
    pthread_mutex_unlock(&l->mutex);
    return count;
}

/* Wait until the count reaches `target`; true if it did within timeout_ms. */
static inline int latch_wait(latch *l, int target, int timeout_ms) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&l->mutex);
    int rc = 0;
    while (l->count < target && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&l->cond, &l->mutex, &deadline);
    int reached = l->count >= target;
    pthread_mutex_unlock(&l->mutex);
    return reached;
}

/* ---- the raw peer ------------------------------------------------------- */

typedef struct {
    int fd;
    char *buf;
    size_t len, cap;
    /* The library closed its end: EOF, or a reset (closing with input it
     * had not read, which a Unix socket reports as ECONNRESET first). */
    int closed;
} peer;

/* A connection on one end of a socketpair; the test keeps the other end
 * in `p` and plays the peer byte for byte. */
static inline acp_result peer_connect_with(peer *p, const acp_options *options, const acp_handlers *handlers,
                                           acp_connection **out) {
    int sv[2];
    memset(p, 0, sizeof *p);
    p->fd = -1;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        perror("socketpair");
        exit(2);
    }
    p->fd = sv[0];
    /* Two descriptors for the two directions (the header asks for
     * duplicates when it is the same socket). */
    return acp_connection_fds(sv[1], dup(sv[1]), options, handlers, out);
}

static inline acp_result peer_connect(peer *p, acp_side side, const acp_handlers *handlers,
                                      acp_connection **out) {
    acp_options options = {.struct_size = sizeof(acp_options), .side = side};
    return peer_connect_with(p, &options, handlers, out);
}

static inline void peer_close(peer *p) {
    if (p->fd >= 0) close(p->fd);
    p->fd = -1;
    free(p->buf);
    p->buf = NULL;
    p->len = p->cap = 0;
}

static inline void peer_write(peer *p, const char *text) {
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t n = write(p->fd, text + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            perror("peer_write");
            return;
        }
        done += (size_t)n;
    }
}

/* Write one line (a newline is appended), printf-style. */
static inline void peer_send(peer *p, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char *line = NULL;
    if (vasprintf(&line, fmt, args) < 0) abort();
    va_end(args);
    peer_write(p, line);
    peer_write(p, "\n");
    free(line);
}

/* The next line the library wrote (malloc'd, no newline; free() it), or
 * NULL on timeout or end of stream. */
static inline char *peer_read_line(peer *p, int timeout_ms) {
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        char *newline = p->buf ? memchr(p->buf, '\n', p->len) : NULL;
        if (newline) {
            size_t n = (size_t)(newline - p->buf);
            char *line = malloc(n + 1);
            memcpy(line, p->buf, n);
            line[n] = '\0';
            memmove(p->buf, newline + 1, p->len - n - 1);
            p->len -= n + 1;
            return line;
        }
        long long left = deadline - now_ms();
        if (left <= 0) return NULL;
        struct pollfd pfd = {p->fd, POLLIN, 0};
        int ready = poll(&pfd, 1, (int)left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return NULL;
        if (p->cap - p->len < 65536) {
            p->cap = p->cap * 2 + 65536;
            p->buf = realloc(p->buf, p->cap);
        }
        ssize_t got = read(p->fd, p->buf + p->len, p->cap - p->len);
        if (got < 0 && errno == EINTR) continue;
        if (got == 0 || (got < 0 && errno == ECONNRESET)) p->closed = 1;
        if (got <= 0) return NULL; /* EOF or error */
        p->len += (size_t)got;
    }
}

/* True if the library closed its end (EOF) within timeout_ms, with no
 * further line before it. */
static inline int peer_sees_eof(peer *p, int timeout_ms) {
    char *line = peer_read_line(p, timeout_ms);
    if (line) {
        fprintf(stderr, "unexpected line before EOF: %s\n", line);
        free(line);
        return 0;
    }
    if (p->closed) return 1;
    struct pollfd pfd = {p->fd, POLLIN, 0};
    if (poll(&pfd, 1, 0) <= 0) return 0; /* timed out, not EOF */
    char byte;
    ssize_t got = read(p->fd, &byte, 1);
    return got == 0 || (got < 0 && errno == ECONNRESET);
}

/* ---- JSON probes (compact serde_json output, no spaces) ----------------- */

/* The integer after the first `"key":`; `fallback` if absent. */
static inline long long json_int(const char *json, const char *key, long long fallback) {
    char pattern[128];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *at = json ? strstr(json, pattern) : NULL;
    if (!at) return fallback;
    char *end;
    long long value = strtoll(at + strlen(pattern), &end, 10);
    return end == at + strlen(pattern) ? fallback : value;
}

static inline int json_has(const char *json, const char *fragment) {
    return json && strstr(json, fragment) != NULL;
}

#endif /* ACP_TEST_HARNESS_H */
