/*
 * proxy.c: a proxy of an ACP proxy chain in C (a conductor runs it between
 * the client and the agent): the contract of the Rust example
 * core/examples/proxy.rs, which interop/conductor.sh runs chains with.
 *
 *   proxy [--name NAME] [--prefix TEXT] [--log FILE]
 *
 * It passes every message on unchanged, except that with --prefix it puts
 * a text block of its own before every prompt, and it says what crossed it
 * on stderr (and in FILE) as `[c-proxy NAME] -> method` (from the client
 * side) and `<- method` (from the agent side):
 *
 *   cc proxy.c $(pkg-config --cflags --libs acp_engine) -o c-proxy
 *   acp-engine conduct "./c-proxy --name c" my-agent
 *
 * acp_connection_proxy_stdio makes the proxy's stdio two connections, one
 * toward the client and one toward the agent: the proxy/successor
 * envelopes, the id spaces and the cancellations crossing the proxy are the
 * library's. A request is passed on with its responder; when the request
 * it serves is cancelled (on_cancel), the one passed on is cancelled too.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acp_engine.h>

static const char *name = "proxy";
static const char *prefix;
static FILE *log_file;

/* The two connections (written before any callback runs). */
static acp_connection *predecessor, *successor;

static void say(const char *arrow, const char *method) {
    fprintf(stderr, "[c-proxy %s] %s %s\n", name, arrow, method);
    if (log_file) {
        fprintf(log_file, "[c-proxy %s] %s %s\n", name, arrow, method);
        fflush(log_file);
    }
}

/* ---- requests passed on ---------------------------------------------------------- */

/* A request passed on, until its answer comes back. */
typedef struct forwarded {
    acp_responder *responder;   /* the request it serves */
    const acp_connection *to;   /* where it went */
    int64_t request_id;         /* as it went there */
    struct forwarded *next;
} forwarded;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static forwarded *in_flight;

static void on_answer(void *user_data, const acp_connection *connection, int64_t request_id, const char *result_json,
                      const acp_error *error) {
    (void)connection;
    (void)request_id;
    forwarded *entry = user_data;
    pthread_mutex_lock(&lock);
    for (forwarded **at = &in_flight; *at; at = &(*at)->next) {
        if (*at == entry) {
            *at = entry->next;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    /* ACP_ERR_ALREADY_ANSWERED when the request it serves was cancelled meanwhile. */
    if (error) {
        acp_responder_error(entry->responder, error->code, error->message, error->data_json);
    } else {
        acp_responder_ok(entry->responder, result_json);
    }
    free(entry);
}

static void pass_on(const acp_connection *to, const char *method, const char *params, acp_responder *responder) {
    forwarded *entry = calloc(1, sizeof *entry);
    if (!entry) abort();
    entry->responder = responder;
    entry->to = to;
    /* Listed before it is sent: its answer may come at once. */
    pthread_mutex_lock(&lock);
    entry->next = in_flight;
    in_flight = entry;
    int64_t id = 0;
    acp_result sent = acp_connection_send_request(to, method, params, on_answer, entry, &id);
    entry->request_id = id;
    pthread_mutex_unlock(&lock);
    if (sent != ACP_OK) {
        pthread_mutex_lock(&lock);
        for (forwarded **at = &in_flight; *at; at = &(*at)->next) {
            if (*at == entry) {
                *at = entry->next;
                break;
            }
        }
        pthread_mutex_unlock(&lock);
        acp_responder_error(responder, ACP_ERROR_INTERNAL_ERROR, acp_last_error_message(), NULL);
        free(entry);
    }
}

/* The request `responder` serves was cancelled: cancel the one passed on for it. */
static void on_cancel(void *user_data, const acp_connection *connection, acp_responder *responder) {
    (void)user_data;
    (void)connection;
    const acp_connection *to = NULL;
    int64_t id = 0;
    pthread_mutex_lock(&lock);
    for (forwarded *entry = in_flight; entry; entry = entry->next) {
        if (entry->responder == responder) {
            to = entry->to;
            id = entry->request_id;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    /* Its answer (-32800) still comes to on_answer, which frees it. */
    if (to) acp_connection_cancel_request(to, id);
}

/* ---- from the client side --------------------------------------------------------- */

/* `params` with a text block `text` first in its "prompt" array (malloc'd), or NULL. */
static char *with_prefix(const char *params, const char *text) {
    const char *key = strstr(params, "\"prompt\"");
    const char *open = key ? strchr(key + 8, '[') : NULL;
    char *quoted = NULL;
    if (!open || acp_json_quote(text, &quoted) != ACP_OK) return NULL;
    const char *after = open + 1;
    while (*after == ' ' || *after == '\n' || *after == '\t' || *after == '\r') after++;
    const char *comma = *after == ']' ? "" : ",";
    char *out = NULL;
    if (asprintf(&out, "%.*s{\"type\":\"text\",\"text\":%s}%s%s", (int)(open + 1 - params), params, quoted, comma,
                 open + 1) < 0)
        out = NULL;
    acp_string_free(quoted);
    return out;
}

static void from_client(void *user_data, const acp_connection *connection, const char *method, const char *params,
                        acp_responder *responder) {
    (void)user_data;
    (void)connection;
    say("->", method);
    char *prefixed = prefix && strcmp(method, ACP_METHOD_SESSION_PROMPT) == 0 && params ? with_prefix(params, prefix)
                                                                                          : NULL;
    pass_on(successor, method, prefixed ? prefixed : params, responder);
    free(prefixed);
}

static void client_notified(void *user_data, const acp_connection *connection, const char *method,
                            const char *params) {
    (void)user_data;
    (void)connection;
    acp_connection_send_notification(successor, method, params);
}

/* ---- from the agent side ---------------------------------------------------------- */

static void from_agent(void *user_data, const acp_connection *connection, const char *method, const char *params,
                       acp_responder *responder) {
    (void)user_data;
    (void)connection;
    say("<-", method);
    pass_on(predecessor, method, params, responder);
}

static void agent_notified(void *user_data, const acp_connection *connection, const char *method,
                           const char *params) {
    (void)user_data;
    (void)connection;
    acp_connection_send_notification(predecessor, method, params);
}

/* Either side closing ends the proxy. */
static void on_close(void *user_data, const acp_connection *connection, const char *reason) {
    (void)user_data;
    (void)reason;
    acp_connection_close(connection == predecessor ? successor : predecessor);
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--name") == 0) {
            name = argv[i + 1];
        } else if (strcmp(argv[i], "--prefix") == 0) {
            prefix = argv[i + 1];
        } else if (strcmp(argv[i], "--log") == 0) {
            log_file = fopen(argv[i + 1], "a");
            if (!log_file) {
                perror(argv[i + 1]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: proxy [--name NAME] [--prefix TEXT] [--log FILE]\n");
            return 2;
        }
    }
    if (argc % 2 == 0) {
        fprintf(stderr, "usage: proxy [--name NAME] [--prefix TEXT] [--log FILE]\n");
        return 2;
    }
    if (prefix && strcmp(name, "proxy") == 0) name = prefix;
    acp_options options = ACP_OPTIONS_INIT; /* plain JSON-RPC both ways: the agent checks */
    acp_handlers toward_client = ACP_HANDLERS_INIT;
    toward_client.on_request = from_client;
    toward_client.on_notification = client_notified;
    toward_client.on_cancel = on_cancel;
    toward_client.on_close = on_close;
    acp_handlers toward_agent = ACP_HANDLERS_INIT;
    toward_agent.on_request = from_agent;
    toward_agent.on_notification = agent_notified;
    toward_agent.on_cancel = on_cancel;
    toward_agent.on_close = on_close;
    if (acp_connection_proxy_stdio(&options, &toward_client, &options, &toward_agent, &predecessor, &successor) !=
        ACP_OK) {
        fprintf(stderr, "[c-proxy %s] acp_connection_proxy_stdio: %s\n", name, acp_last_error_message());
        return 1;
    }
    acp_connection_wait_closed(predecessor, -1);
    acp_connection_wait_closed(successor, -1);
    acp_connection_free(predecessor);
    acp_connection_free(successor);
    acp_shutdown();
    if (log_file) fclose(log_file);
    fprintf(stderr, "[c-proxy %s] closed\n", name);
    return 0;
}
