#include <string.h>

#include "_cgo_export.h"
#include "bridge.h"

/* The callbacks: the connection's Go side is the cgo.Handle in user_data. */

static void on_request(void *user_data, const acp_connection *c, const char *method, const char *params,
                       acp_responder *responder) {
    (void)c;
    acpGoRequest((uintptr_t)user_data, (char *)method, (char *)params, responder);
}

static void on_notification(void *user_data, const acp_connection *c, const char *method, const char *params) {
    (void)c;
    acpGoNotification((uintptr_t)user_data, (char *)method, (char *)params);
}

static void on_close(void *user_data, const acp_connection *c, const char *reason) {
    (void)c;
    acpGoClose((uintptr_t)user_data, (char *)reason);
}

static void on_cancel(void *user_data, const acp_connection *c, acp_responder *responder) {
    (void)c;
    acpGoCancel((uintptr_t)user_data, responder);
}

static void on_invalid_notification(void *user_data, const acp_connection *c, const char *method,
                                    const acp_error *error) {
    (void)c;
    acpGoInvalidNotification((uintptr_t)user_data, (char *)method, error->code, (char *)error->message,
                             (char *)error->data_json);
}

/* The answer to a request of acp_go_send_request: user_data is its slot (go/waiting.go). */
static void on_response(void *user_data, const acp_connection *c, int64_t id, const char *result,
                        const acp_error *error) {
    (void)c;
    (void)id;
    if (error != NULL)
        acpGoResponse((uintptr_t)user_data, NULL, error->code, (char *)error->message, (char *)error->data_json);
    else
        acpGoResponse((uintptr_t)user_data, (char *)result, 0, NULL, NULL);
}

acp_handlers acp_go_handlers(uintptr_t handle) {
    acp_handlers handlers = {
        .struct_size = sizeof(acp_handlers),
        .user_data = (void *)handle,
        .on_request = on_request,
        .on_notification = on_notification,
        .on_close = on_close,
        .on_cancel = on_cancel,
        .on_invalid_notification = on_invalid_notification,
    };
    return handlers;
}

static acp_result copy_error(acp_result rc, char *message, size_t capacity) {
    if (rc != ACP_OK && message != NULL && capacity > 0) {
        strncpy(message, acp_last_error_message(), capacity - 1);
        message[capacity - 1] = '\0';
    }
    return rc;
}

acp_result acp_go_start_request(const acp_connection *c, const char *method, const char *params, int64_t *id,
                                char *message, size_t capacity) {
    return copy_error(acp_connection_start_request(c, method, params, id), message, capacity);
}

acp_result acp_go_send_request(const acp_connection *c, const char *method, const char *params, uintptr_t handle,
                               int64_t *id, char *message, size_t capacity) {
    return copy_error(acp_connection_send_request(c, method, params, on_response, (void *)handle, id), message,
                      capacity);
}

acp_result acp_go_await(const acp_connection *c, int64_t id, char **out_json, char *message, size_t capacity) {
    return copy_error(acp_connection_await(c, id, -1, out_json), message, capacity);
}

acp_result acp_go_send_notification(const acp_connection *c, const char *method, const char *params, char *message,
                                    size_t capacity) {
    return copy_error(acp_connection_send_notification(c, method, params), message, capacity);
}

acp_result acp_go_respond_ok(acp_responder *r, const char *result, char *message, size_t capacity) {
    return copy_error(acp_responder_ok(r, result), message, capacity);
}

acp_result acp_go_respond_error(acp_responder *r, int64_t code, const char *text, const char *data, char *message,
                                size_t capacity) {
    return copy_error(acp_responder_error(r, code, text, data), message, capacity);
}

acp_result acp_go_spawn(const char *const *argv, const char *const *env, const char *cwd, const acp_options *options,
                        const acp_handlers *handlers, acp_connection **out, char *message, size_t capacity) {
    return copy_error(acp_connection_spawn(argv, env, cwd, options, handlers, out), message, capacity);
}

acp_result acp_go_stdio(const acp_options *options, const acp_handlers *handlers, acp_connection **out, char *message,
                        size_t capacity) {
    return copy_error(acp_connection_stdio(options, handlers, out), message, capacity);
}

acp_result acp_go_proxy_stdio(const acp_options *predecessor_options, const acp_handlers *predecessor_handlers,
                              const acp_options *successor_options, const acp_handlers *successor_handlers,
                              acp_connection **out_predecessor, acp_connection **out_successor, char *message,
                              size_t capacity) {
    return copy_error(acp_connection_proxy_stdio(predecessor_options, predecessor_handlers, successor_options,
                                                 successor_handlers, out_predecessor, out_successor),
                      message, capacity);
}

acp_result acp_go_fds(int read_fd, int write_fd, const acp_options *options, const acp_handlers *handlers,
                      acp_connection **out, char *message, size_t capacity) {
    return copy_error(acp_connection_fds(read_fd, write_fd, options, handlers, out), message, capacity);
}

acp_result acp_go_connect_url(const char *url, const acp_remote_options *remote, const acp_options *options,
                              const acp_handlers *handlers, acp_connection **out, char *message, size_t capacity) {
    return copy_error(acp_connection_connect_url(url, remote, options, handlers, out), message, capacity);
}

acp_result acp_go_mcp_register(const acp_mcp_provider *provider, const char *name, const char *server_id,
                               uint32_t max_active_requests, char **out_server_id, char **out_declaration,
                               char *message, size_t capacity) {
    return copy_error(
        acp_mcp_provider_register(provider, name, server_id, max_active_requests, out_server_id, out_declaration),
        message, capacity);
}
