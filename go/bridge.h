/* What the Go package calls. Each call that can fail copies the library's
 * (thread-local) error message in the same C call, since a goroutine may
 * move to another thread between two cgo calls. acp_go_handlers gives the
 * library the callbacks that enter Go (callbacks.go) for a connection. */
#ifndef ACP_GO_BRIDGE_H
#define ACP_GO_BRIDGE_H
#include <stddef.h>
#include <stdint.h>
#include <acp_engine.h>
acp_handlers acp_go_handlers(uintptr_t handle);
acp_result acp_go_start_request(const acp_connection *c, const char *method, const char *params, int64_t *id,
                                char *message, size_t capacity);
acp_result acp_go_send_request(const acp_connection *c, const char *method, const char *params, uintptr_t handle,
                               int64_t *id, char *message, size_t capacity);
acp_result acp_go_await(const acp_connection *c, int64_t id, char **out_json, char *message, size_t capacity);
acp_result acp_go_send_notification(const acp_connection *c, const char *method, const char *params, char *message,
                                    size_t capacity);
acp_result acp_go_respond_ok(acp_responder *r, const char *result, char *message, size_t capacity);
acp_result acp_go_respond_error(acp_responder *r, int64_t code, const char *text, const char *data, char *message,
                                size_t capacity);
acp_result acp_go_spawn(const char *const *argv, const char *const *env, const char *cwd, const acp_options *options,
                        const acp_handlers *handlers, acp_connection **out, char *message, size_t capacity);
acp_result acp_go_stdio(const acp_options *options, const acp_handlers *handlers, acp_connection **out, char *message,
                        size_t capacity);
acp_result acp_go_proxy_stdio(const acp_options *predecessor_options, const acp_handlers *predecessor_handlers,
                              const acp_options *successor_options, const acp_handlers *successor_handlers,
                              acp_connection **out_predecessor, acp_connection **out_successor, char *message,
                              size_t capacity);
acp_result acp_go_connect_url(const char *url, const acp_remote_options *remote, const acp_options *options,
                              const acp_handlers *handlers, acp_connection **out, char *message, size_t capacity);
acp_result acp_go_fds(int read_fd, int write_fd, const acp_options *options, const acp_handlers *handlers,
                      acp_connection **out, char *message, size_t capacity);
acp_result acp_go_mcp_register(const acp_mcp_provider *provider, const char *name, const char *server_id,
                               uint32_t max_active_requests, char **out_server_id, char **out_declaration,
                               char *message, size_t capacity);
#endif
