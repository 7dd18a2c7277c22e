/* The pipe round-trip floor: what a round trip costs at the least on this
 * machine, measured in the same run as the ACP pairs (bench/README.md).
 *
 *   floor --scenario rpc|perm --n N -- floor --agent
 *
 * follows the benchmark contract with no SDK and no JSON parsing: the
 * client spawns the agent on pipes, exchanges the handshake's lines and the
 * prompt, then the agent writes N request lines the size of the scenario's
 * (an fs/read_text_file or a session/request_permission) and waits for each
 * answer line, both processes blocked in read(2) in between: the least any
 * implementation's round trip can cost. The client prints the contract's
 * JSON line, plus p50_us and p99_us: the round trips' latencies as the
 * client sees them (from one request's arrival to the next's). */
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

/* One line from fd into buf (without the newline); -1 at EOF. A line never
 * spans a read here: each side writes one line and waits for the answer. */
static char pending[1 << 16];
static size_t pending_len;

static int read_line(int fd, char *buf, size_t cap) {
    for (;;) {
        char *nl = memchr(pending, '\n', pending_len);
        if (nl) {
            size_t len = (size_t)(nl - pending);
            if (len >= cap) len = cap - 1;
            memcpy(buf, pending, len);
            buf[len] = 0;
            pending_len -= (size_t)(nl - pending) + 1;
            memmove(pending, nl + 1, pending_len);
            return (int)len;
        }
        ssize_t got = read(fd, pending + pending_len, sizeof pending - pending_len);
        if (got <= 0) return -1;
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

static int agent(void) {
    char line[1 << 16], out[1024];
    if (read_line(0, line, sizeof line) < 0) return 0; /* initialize */
    say(1, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{}}}\n");
    if (read_line(0, line, sizeof line) < 0) return 0; /* session/new */
    say(1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessionId\":\"bench-session\"}}\n");
    while (read_line(0, line, sizeof line) >= 0) { /* session/prompt "<scenario> <n>" */
        char *text = strstr(line, "\"text\":\"");
        if (!text) continue;
        int perm = strncmp(text + 8, "perm ", 5) == 0;
        int n = atoi(strchr(text + 8, ' ') + 1);
        for (int i = 0; i < n; i++) {
            int len = snprintf(out, sizeof out, perm ? PERM_REQUEST : RPC_REQUEST, 1000 + i, i);
            write_all(1, out, (size_t)len);
            if (read_line(0, line, sizeof line) < 0) return 1;
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
    if (!scenario || !command || command >= argc || (strcmp(scenario, "rpc") && strcmp(scenario, "perm"))) {
        fprintf(stderr, "usage: floor --scenario rpc|perm --n N -- AGENT... (or floor --agent)\n");
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
    char line[1 << 16], answer[256];
    say(out, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n");
    if (read_line(in, line, sizeof line) < 0) return 1;
    say(out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/tmp\",\"mcpServers\":[]}}\n");
    if (read_line(in, line, sizeof line) < 0) return 1;
    double setup = now() - started;
    char prompt[256];
    snprintf(prompt, sizeof prompt,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"bench-session\",\"prompt\":[{\"type\":\"text\",\"text\":\"%s %d\"}]}}\n",
             scenario, n);
    double *trips = calloc((size_t)n + 1, sizeof *trips);
    int count = 0;
    double turn = now(), last = 0;
    say(out, prompt);
    for (;;) {
        if (read_line(in, line, sizeof line) < 0) break;
        double arrived = now();
        if (!strstr(line, "\"method\"")) break; /* the prompt's answer */
        if (count > 0) trips[count - 1] = arrived - last;
        last = arrived;
        int id = atoi(strstr(line, "\"id\":") + 5);
        int len = snprintf(answer, sizeof answer, perm ? PERM_ANSWER : RPC_ANSWER, id);
        write_all(out, answer, (size_t)len);
        count++;
    }
    double run = now() - turn;
    close(out);
    waitpid(pid, NULL, 0);
    int measured = count > 1 ? count - 1 : 0;
    qsort(trips, (size_t)measured, sizeof *trips, by_value);
    double p50 = measured ? trips[measured / 2] : 0, p99 = measured ? trips[(measured * 99) / 100] : 0;
    printf("{\"client\":\"pipe floor (C)\",\"scenario\":\"%s\",\"n\":%d,\"setup_s\":%.6f,\"run_s\":%.6f,"
           "\"count\":%d,\"ok\":%s,\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
           scenario, n, setup, run, count, count == n ? "true" : "false", p50 * 1e6, p99 * 1e6);
    free(trips);
    return count == n ? 0 : 1;
}
