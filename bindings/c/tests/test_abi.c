/*
 * test_abi.c: the versioned ABI. The header's version macros agree with
 * the library's acp_engine_version() / acp_engine_abi_version();
 * ACP_OPTIONS_INIT / ACP_HANDLERS_INIT set struct_size; the library reads
 * acp_options and acp_handlers only within struct_size (a struct that ends
 * right before an unreadable page works); a struct_size that no version of
 * the struct has (0, too small, a pointer where the size should be: a
 * program built against a header from before struct_size) is refused with
 * ACP_ERR_INVALID_ARGUMENT and a message naming struct_size; a struct from
 * a newer header (larger) works when the fields this library does not know
 * are zero, and is refused when one is set.
 *
 * The other half, a program built against an older header than the
 * library's (a smaller struct_size, its missing fields defaulted), is
 * bindings/c/src/sized.rs's Rust tests: today's struct is the first
 * version, so no smaller valid struct exists yet.
 */
#include "harness.h"

#include <sys/mman.h>

static void test_versions(void) {
    harness_section("version macros and functions");
    CHECK_STR_EQ(acp_engine_version(), ACP_ENGINE_VERSION);
    CHECK_STR_EQ(acp_version(), ACP_ENGINE_VERSION);
    char assembled[64];
    snprintf(assembled, sizeof assembled, "%d.%d.%d", ACP_ENGINE_VERSION_MAJOR, ACP_ENGINE_VERSION_MINOR,
             ACP_ENGINE_VERSION_PATCH);
    CHECK_STR_EQ(assembled, ACP_ENGINE_VERSION);
    CHECK_EQ_INT(acp_engine_abi_version(), ACP_ENGINE_ABI_VERSION);
    CHECK(ACP_ENGINE_ABI_VERSION >= 1);
}

static void test_init_macros(void) {
    harness_section("ACP_OPTIONS_INIT, ACP_HANDLERS_INIT");
    acp_options options = ACP_OPTIONS_INIT;
    acp_handlers handlers = ACP_HANDLERS_INIT;
    CHECK_EQ_INT(options.struct_size, sizeof(acp_options));
    CHECK_EQ_INT(handlers.struct_size, sizeof(acp_handlers));
    CHECK(options.side == ACP_SIDE_RAW && options.max_message_size == 0 && options.unchecked_methods == NULL);
    CHECK(handlers.user_data == NULL && handlers.on_request == NULL && handlers.on_invalid_notification == NULL);
}

/* acp_connection_fds with these; the connection, if any, closed and freed. */
static acp_result connect_with(const acp_options *options, const acp_handlers *handlers) {
    peer p;
    acp_connection *c = (acp_connection *)(uintptr_t)1;
    acp_result rc = peer_connect_with(&p, options, handlers, &c);
    if (rc == ACP_OK) {
        acp_connection_close(c);
        CHECK_RC(acp_connection_wait_closed(c, 5000), ACP_OK);
        acp_connection_free(c);
    } else {
        CHECK(c == NULL);
    }
    peer_close(&p);
    return rc;
}

static void test_sizes_refused(void) {
    harness_section("a struct_size no version has is refused");
    /* ... the fourth: 8 bytes short of the first version's acp_options. */
    const size_t short_of_first = offsetof(acp_options, unchecked_methods);
    const size_t sizes[] = {0, 1, 8, short_of_first, (size_t)1 << 40};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        acp_options options = ACP_OPTIONS_INIT;
        options.struct_size = sizes[i];
        CHECK_RC(connect_with(&options, NULL), ACP_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(acp_last_error_message(), "options->struct_size is");
        CHECK_CONTAINS(acp_last_error_message(), "sizeof(acp_options)");
        acp_handlers handlers = ACP_HANDLERS_INIT;
        handlers.struct_size = sizes[i] == short_of_first ? sizeof(acp_handlers) - 8 : sizes[i];
        CHECK_RC(connect_with(NULL, &handlers), ACP_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(acp_last_error_message(), "handlers->struct_size is");
        CHECK_CONTAINS(acp_last_error_message(), "sizeof(acp_handlers)");
    }
    /* The server reads both when it starts. */
    acp_options options = {.side = ACP_SIDE_AGENT};
    acp_handlers handlers = ACP_HANDLERS_INIT;
    acp_server *server = (acp_server *)(uintptr_t)1;
    CHECK_RC(acp_server_start("127.0.0.1:0", NULL, &options, &handlers, NULL, NULL, &server),
             ACP_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(acp_last_error_message(), "options->struct_size is 0");
    CHECK(server == NULL);
    handlers.struct_size = 0;
    CHECK_RC(acp_server_start("127.0.0.1:0", NULL, NULL, &handlers, NULL, NULL, &server), ACP_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(acp_last_error_message(), "handlers->struct_size is 0");
}

/* The structs as the header declared them before struct_size (0.1.0's
 * first field was side / user_data). */
typedef struct {
    acp_side side;
    size_t max_message_size;
    uint32_t exit_grace_ms;
    bool unstable;
} options_without_size;

typedef struct {
    void *user_data;
    acp_request_callback on_request;
    acp_notification_callback on_notification;
    acp_close_callback on_close;
    acp_cancel_callback on_cancel;
    acp_invalid_notification_callback on_invalid_notification;
} handlers_without_size;

static void test_a_program_from_before_struct_size(void) {
    harness_section("a program built against a header without struct_size is refused, not misread");
    options_without_size old_options;
    memset(&old_options, 0, sizeof old_options); /* its padding too: what a struct_size would be */
    old_options.side = ACP_SIDE_AGENT;
    old_options.max_message_size = 1 << 20;
    CHECK_RC(connect_with((const acp_options *)(const void *)&old_options, NULL), ACP_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(acp_last_error_message(), "must be rebuilt");
    static int user_data;
    handlers_without_size old_handlers = {.user_data = &user_data};
    CHECK_RC(connect_with(NULL, (const acp_handlers *)(const void *)&old_handlers), ACP_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(acp_last_error_message(), "not the size of an acp_handlers");
}

/* acp_options / acp_handlers as a newer header may declare them. */
typedef struct {
    acp_options known;
    uint64_t added;
} newer_options;

typedef struct {
    acp_handlers known;
    void (*on_added)(void *);
} newer_handlers;

static void on_added(void *user_data) {
    (void)user_data;
}

static void on_close_count(void *user_data, const acp_connection *conn, const char *reason) {
    (void)conn, (void)reason;
    latch_add(user_data, 1);
}

static void test_a_program_from_a_newer_header(void) {
    harness_section("a struct from a newer header: its unknown fields zero pass, a set one is refused");
    newer_options options = {.known = ACP_OPTIONS_INIT};
    options.known.struct_size = sizeof options;
    options.known.side = ACP_SIDE_CLIENT;
    static latch closed = LATCH_INIT;
    newer_handlers handlers = {.known = ACP_HANDLERS_INIT};
    handlers.known.struct_size = sizeof handlers;
    handlers.known.user_data = &closed;
    handlers.known.on_close = on_close_count;
    CHECK_RC(connect_with(&options.known, &handlers.known), ACP_OK);
    CHECK_THAT(latch_wait(&closed, 1, slow(5000)), "the on_close of a newer program's handlers runs");

    options.added = 7;
    CHECK_RC(connect_with(&options.known, NULL), ACP_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(acp_last_error_message(), "newer acp_engine.h");
    handlers.on_added = on_added;
    CHECK_RC(connect_with(NULL, &handlers.known), ACP_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(acp_last_error_message(), "newer acp_engine.h");
}

static void test_read_only_within_struct_size(void) {
    harness_section("the library reads nothing beyond struct_size (the next page is unreadable)");
    long page = sysconf(_SC_PAGESIZE);
    char *pages = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(pages != MAP_FAILED);
    if (pages == MAP_FAILED) return;
    CHECK(mprotect(pages + page, (size_t)page, PROT_NONE) == 0);
    acp_options *options = (acp_options *)(void *)(pages + page - sizeof(acp_options));
    acp_handlers *handlers = (acp_handlers *)(void *)(pages + page - sizeof(acp_options) - sizeof(acp_handlers));
    *options = (acp_options)ACP_OPTIONS_INIT;
    *handlers = (acp_handlers)ACP_HANDLERS_INIT;
    static latch closed = LATCH_INIT;
    handlers->user_data = &closed;
    handlers->on_close = on_close_count;
    CHECK_RC(connect_with(options, handlers), ACP_OK);
    CHECK_THAT(latch_wait(&closed, 1, slow(5000)), "on_close runs");
    /* NULL still means every default. */
    CHECK_RC(connect_with(NULL, NULL), ACP_OK);
    munmap(pages, (size_t)page * 2);
}

int main(void) {
    harness_name = "test_abi";
    test_versions();
    test_init_macros();
    test_sizes_refused();
    test_a_program_from_before_struct_size();
    test_a_program_from_a_newer_header();
    test_read_only_within_struct_size();
    acp_shutdown();
    return harness_finish();
}
