/* What the Go package calls: each wraps one library call and, when it
 * fails, copies the library's (thread-local) error message in the same C
 * call, since a goroutine may move to another thread between two cgo calls. */
#ifndef ACP_GO_BRIDGE_H
#define ACP_GO_BRIDGE_H
#include <stddef.h>
#include <acp_engine.h>
void acp_go_error(acp_result rc, char *message, size_t capacity);
acp_result acp_go_send_request(const acp_connection *c, const char *method, const char *params, int64_t *id, char *message, size_t capacity);
acp_result acp_go_send_notification(const acp_connection *c, const char *method, const char *params, char *message, size_t capacity);
acp_result acp_go_respond_ok(acp_responder *r, const char *result, char *message, size_t capacity);
acp_result acp_go_respond_error(acp_responder *r, int64_t code, const char *text, const char *data, char *message, size_t capacity);
acp_result acp_go_spawn(const char *const *argv, const char *const *env, const char *cwd, const acp_options *options, acp_connection **out, char *message, size_t capacity);
acp_result acp_go_stdio(const acp_options *options, acp_connection **out, char *message, size_t capacity);
acp_result acp_go_fds(int read_fd, int write_fd, const acp_options *options, acp_connection **out, char *message, size_t capacity);
#endif
