#include <string.h>
#include "bridge.h"

void acp_go_error(acp_result rc, char *message, size_t capacity) {
	if (rc != ACP_OK && message != NULL && capacity > 0) {
		strncpy(message, acp_last_error_message(), capacity - 1);
		message[capacity - 1] = '\0';
	}
}

acp_result acp_go_send_request(const acp_connection *c, const char *method, const char *params,
                                      int64_t *id, char *message, size_t capacity) {
	acp_result rc = acp_connection_send_request(c, method, params, NULL, NULL, id);
	acp_go_error(rc, message, capacity);
	return rc;
}

acp_result acp_go_send_notification(const acp_connection *c, const char *method, const char *params,
                                           char *message, size_t capacity) {
	acp_result rc = acp_connection_send_notification(c, method, params);
	acp_go_error(rc, message, capacity);
	return rc;
}

acp_result acp_go_respond_ok(acp_responder *r, const char *result, char *message, size_t capacity) {
	acp_result rc = acp_responder_ok(r, result);
	acp_go_error(rc, message, capacity);
	return rc;
}

acp_result acp_go_respond_error(acp_responder *r, int64_t code, const char *text, const char *data,
                                       char *message, size_t capacity) {
	acp_result rc = acp_responder_error(r, code, text, data);
	acp_go_error(rc, message, capacity);
	return rc;
}

acp_result acp_go_spawn(const char *const *argv, const char *const *env, const char *cwd,
                               const acp_options *options, acp_connection **out, char *message, size_t capacity) {
	acp_result rc = acp_connection_spawn(argv, env, cwd, options, NULL, out);
	acp_go_error(rc, message, capacity);
	return rc;
}

acp_result acp_go_stdio(const acp_options *options, acp_connection **out, char *message, size_t capacity) {
	acp_result rc = acp_connection_stdio(options, NULL, out);
	acp_go_error(rc, message, capacity);
	return rc;
}

acp_result acp_go_fds(int read_fd, int write_fd, const acp_options *options, acp_connection **out,
                             char *message, size_t capacity) {
	acp_result rc = acp_connection_fds(read_fd, write_fd, options, NULL, out);
	acp_go_error(rc, message, capacity);
	return rc;
}
