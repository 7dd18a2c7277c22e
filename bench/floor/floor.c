/* The pipe floor: what a round trip, and a large message, cost at the
 * least on this machine, measured in the same run as the ACP pairs
 * (bench/README.md).
 *
 *   floor --scenario rpc|perm|large --n N -- floor --agent
 *
 * follows the benchmark contract with no SDK and no JSON parsing: the
 * client spawns the agent on pipes, exchanges the handshake's lines and the
 * prompt, then the agent writes N request lines the size of the scenario's
 * (an fs/read_text_file or a session/request_permission) and waits for each
 * answer line, both processes blocked in read(2) in between: the least any
 * implementation's round trip can cost. In `large` each of the N rounds is
 * an fs/write_text_file line carrying 16 MiB of content and an
 * fs/read_text_file line the client answers with 16 MiB: each line written
 * from one prepared buffer and read into one, found by its newline and not
 * copied again. The client prints the contract's JSON line, plus p50_us and
 * p99_us in rpc and perm: the round trips' latencies as the client sees
 * them (from one request's arrival to the next's). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Lines read from a pipe: a buffer that grows to the longest line. */
static char *pending;
static size_t pending_len, pending_cap, consumed;

/* The next line from fd, NUL-terminated in place of its newline, or NULL
 * at EOF; valid until the next call. */
static char *read_line(int fd, size_t *len) {
    if (consumed > 0) {
        pending_len -= consumed;
        memmove(pending, pending + consumed, pending_len);
        consumed = 0;
    }
    size_t scanned = 0;
    for (;;) {
        char *nl = memchr(pending + scanned, '\n', pending_len - scanned);
        if (nl) {
            *nl = 0;
            *len = (size_t)(nl - pending);
            consumed = *len + 1;
            return pending;
        }
        scanned = pending_len;
        if (pending_cap - pending_len < (1 << 16)) {
            pending_cap = pending_cap ? pending_cap * 2 : 1 << 16;
            pending = realloc(pending, pending_cap);
            if (!pending) exit(1);
        }
        ssize_t got = read(fd, pending + pending_len, pending_cap - pending_len);
        if (got <= 0) return NULL;
        pending_len += (size_t)got;
    }
}

static void write_all(int fd, const char *text, size_t len) {
    while (len > 0) {
        ssize_t put = write(fd, text, len);
        if (put <= 0) exit(1);
        text += put;
        len -= (size_t)put;
    }
}

static void say(int fd, const char *text) { write_all(fd, text, strlen(text)); }

static const char *RPC_REQUEST =
    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"fs/read_text_file\",\"params\":{\"sessionId\":\"bench-session\",\"path\":\"/bench/file.txt\"}}\n";
static const char *PERM_REQUEST =
    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"session/request_permission\",\"params\":{\"sessionId\":\"bench-session\",\"toolCall\":{\"toolCallId\":\"call-%d\"},\"options\":[{\"optionId\":\"allow\",\"name\":\"Allow\",\"kind\":\"allow_once\"}]}}\n";
static const char *RPC_ANSWER = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":\"hello\"}}\n";
static const char *PERM_ANSWER =
    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"outcome\":{\"outcome\":\"selected\",\"optionId\":\"allow\"}}}\n";

/* `large`: lines carrying 16 MiB of content, built once; each round's id
 * is written over the previous one's (the ids, from LARGE_FIRST_ID, keep
 * their number of digits: at most LARGE_MAX_N rounds). */
#define LARGE_SIZE (16u << 20)
#define LARGE_FIRST_ID 1000
#define LARGE_MAX_N 4000
static const char *LARGE_WRITE_HEAD =
    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"fs/write_text_file\",\"params\":{\"sessionId\":\"bench-session\",\"path\":\"/bench/large.txt\",\"content\":\"";
static const char *LARGE_WRITE_TAIL = "\"}}\n";
static const char *LARGE_READ_REQUEST =
    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"fs/read_text_file\",\"params\":{\"sessionId\":\"bench-session\",\"path\":\"/bench/large.txt\"}}\n";
static const char *LARGE_READ_HEAD = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":\"";
static const char *LARGE_READ_TAIL = "\"}}\n";
static const char *WRITE_ANSWER = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{}}\n";

typedef struct {
    char *text;
    size_t len;
    char *id; /* where the id's digits are */
} large_line;

static large_line large_line_new(const char *head, const char *tail) {
    char start[512];
    int head_len = snprintf(start, sizeof start, head, LARGE_FIRST_ID);
    size_t tail_len = strlen(tail);
    large_line line = {malloc((size_t)head_len + LARGE_SIZE + tail_len), (size_t)head_len + LARGE_SIZE + tail_len, NULL};
    if (!line.text) exit(1);
    memcpy(line.text, start, (size_t)head_len);
    memset(line.text + head_len, 'x', LARGE_SIZE);
    memcpy(line.text + head_len + LARGE_SIZE, tail, tail_len);
    line.id = strstr(line.text, "\"id\":") + 5;
    return line;
}

static void large_line_write(int fd, large_line *line, int id) {
    char digits[16];
    int width = snprintf(digits, sizeof digits, "%d", id);
    memcpy(line->id, digits, (size_t)width);
    write_all(fd, line->text, line->len);
}

static void say_id(int fd, const char *format, int id) {
    char out[1024];
    int len = snprintf(out, sizeof out, format, id);
    write_all(fd, out, (size_t)len);
}

/* The agent's side of `large`: false if the client went away. */
static int agent_large(int n) {
    large_line write = large_line_new(LARGE_WRITE_HEAD, LARGE_WRITE_TAIL);
    size_t len;
    int ok = 1;
    for (int i = 0; ok && i < n; i++) {
        large_line_write(1, &write, LARGE_FIRST_ID + 2 * i);
        ok = read_line(0, &len) != NULL;
        if (ok) say_id(1, LARGE_READ_REQUEST, LARGE_FIRST_ID + 2 * i + 1);
        /* The contract: a short read fails the turn. */
        ok = ok && read_line(0, &len) != NULL && len >= LARGE_SIZE;
    }
    free(write.text);
    return ok;
}

static int agent(void) {
    size_t len;
    if (!read_line(0, &len)) return 0; /* initialize */
    say(1, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{}}}\n");
    if (!read_line(0, &len)) return 0; /* session/new */
    say(1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessionId\":\"bench-session\"}}\n");
    char *line;
    while ((line = read_line(0, &len))) { /* session/prompt "<scenario> <n>" */
        char *text = strstr(line, "\"text\":\"");
        if (!text) continue;
        int n = atoi(strchr(text + 8, ' ') + 1);
        if (strncmp(text + 8, "large ", 6) == 0) {
            if (!agent_large(n)) return 1;
        } else {
            int perm = strncmp(text + 8, "perm ", 5) == 0;
            for (int i = 0; i < n; i++) {
                char out[1024];
                int out_len = snprintf(out, sizeof out, perm ? PERM_REQUEST : RPC_REQUEST, 1000 + i, i);
                write_all(1, out, (size_t)out_len);
                if (!read_line(0, &len)) return 1;
            }
        }
        say(1, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}\n");
    }
    return 0;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--agent") == 0) return agent();
    double started = now();
    const char *scenario = NULL;
    int n = 0, command = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--scenario") == 0 && i + 1 < argc) scenario = argv[++i];
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--") == 0) { command = i + 1; break; }
    }
    int large = scenario && strcmp(scenario, "large") == 0;
    if (!scenario || !command || command >= argc || (strcmp(scenario, "rpc") && strcmp(scenario, "perm") && !large)
        || (large && n > LARGE_MAX_N)) {
        fprintf(stderr, "usage: floor --scenario rpc|perm|large --n N -- AGENT... (or floor --agent)\n");
        return 2;
    }
    int to_agent[2], from_agent[2];
    if (pipe(to_agent) || pipe(from_agent)) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(to_agent[0], 0);
        dup2(from_agent[1], 1);
        close(to_agent[1]);
        close(from_agent[0]);
        execvp(argv[command], argv + command);
        _exit(127);
    }
    close(to_agent[0]);
    close(from_agent[1]);
    int in = from_agent[0], out = to_agent[1];
    int perm = strcmp(scenario, "perm") == 0;
    size_t len;
    char *line;
    say(out, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n");
    if (!read_line(in, &len)) return 1;
    say(out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/tmp\",\"mcpServers\":[]}}\n");
    if (!read_line(in, &len)) return 1;
    double setup = now() - started;
    large_line read_answer = {0};
    if (large) read_answer = large_line_new(LARGE_READ_HEAD, LARGE_READ_TAIL);
    char prompt[256];
    snprintf(prompt, sizeof prompt,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"bench-session\",\"prompt\":[{\"type\":\"text\",\"text\":\"%s %d\"}]}}\n",
             scenario, n);
    double *trips = calloc((size_t)n + 1, sizeof *trips);
    int count = 0;
    double turn = now(), last = 0;
    say(out, prompt);
    while ((line = read_line(in, &len))) {
        double arrived = now();
        /* The method comes before the params: the prompt's answer has none. */
        char *method = strstr(line, "\"method\":\"");
        if (!method || method > line + 64) break;
        int id = atoi(strstr(line, "\"id\":") + 5);
        if (large) {
            if (strncmp(method + 10, "fs/read_text_file", 17) == 0) {
                large_line_write(out, &read_answer, id);
            } else {
                say_id(out, WRITE_ANSWER, id);
                if (len > LARGE_SIZE) count++; /* a write that carried its content */
            }
            continue;
        }
        if (count > 0) trips[count - 1] = arrived - last;
        last = arrived;
        say_id(out, perm ? PERM_ANSWER : RPC_ANSWER, id);
        count++;
    }
    double run = now() - turn;
    close(out);
    waitpid(pid, NULL, 0);
    int measured = count > 1 ? count - 1 : 0;
    qsort(trips, (size_t)measured, sizeof *trips, by_value);
    double p50 = measured ? trips[measured / 2] : 0, p99 = measured ? trips[(measured * 99) / 100] : 0;
    printf("{\"client\":\"pipe floor (C)\",\"scenario\":\"%s\",\"n\":%d,\"setup_s\":%.6f,\"run_s\":%.6f,"
           "\"count\":%d,\"ok\":%s",
           scenario, n, setup, run, count, count == n ? "true" : "false");
    if (!large) printf(",\"p50_us\":%.1f,\"p99_us\":%.1f", p50 * 1e6, p99 * 1e6);
    printf("}\n");
    free(trips);
    free(read_answer.text);
    return count == n ? 0 : 1;
}
