/*
 * test_json.c: the JSON accessors. A string, number or boolean at a JSON
 * pointer comes out as itself (strings unescaped), anything else as JSON
 * text; an absent value or one of another type is ACP_ERR_NOT_FOUND with a
 * message; bad JSON is ACP_ERR_INVALID_JSON; NULL arguments are refused; a
 * quoted string reads back as itself.
 */
#include "harness.h"

static const char *PARAMS =
    "{\"sessionId\":\"s-1\",\"prompt\":[{\"type\":\"text\",\"text\":\"caf\\u00e9 \\\"q\\\"\\n\"}],"
    "\"limit\":42,\"ratio\":-1.5e3,\"ok\":true,\"meta\":{\"a/b\":1,\"c~d\":[null]}}";

static void test_reading(void) {
    harness_section("values at JSON pointers");
    char *text = NULL;
    CHECK_RC(acp_json_get_string(PARAMS, "/sessionId", &text), ACP_OK);
    CHECK(text && strcmp(text, "s-1") == 0);
    acp_string_free(text);
    CHECK_RC(acp_json_get_string(PARAMS, "/prompt/0/text", &text), ACP_OK);
    CHECK(text && strcmp(text, "caf\xc3\xa9 \"q\"\n") == 0); /* unescaped, UTF-8 */
    acp_string_free(text);

    double number = 0;
    CHECK_RC(acp_json_get_number(PARAMS, "/limit", &number), ACP_OK);
    CHECK(number == 42);
    CHECK_RC(acp_json_get_number(PARAMS, "/ratio", &number), ACP_OK);
    CHECK(number == -1500);
    bool flag = false;
    CHECK_RC(acp_json_get_bool(PARAMS, "/ok", &flag), ACP_OK);
    CHECK(flag);

    /* Anything else as JSON text; "~1" is "/" and "~0" is "~" in a pointer. */
    char *json = NULL;
    CHECK_RC(acp_json_get(PARAMS, "/meta/a~1b", &json), ACP_OK);
    CHECK(json && strcmp(json, "1") == 0);
    acp_string_free(json);
    CHECK_RC(acp_json_get(PARAMS, "/meta/c~0d", &json), ACP_OK);
    CHECK(json && strcmp(json, "[null]") == 0);
    acp_string_free(json);
    CHECK_RC(acp_json_get(PARAMS, "", &json), ACP_OK); /* the whole document */
    CHECK(json && json[0] == '{');
    acp_string_free(json);
}

static void test_misses(void) {
    harness_section("absent values, other types, bad input");
    char *text = (char *)"untouched";
    CHECK_RC(acp_json_get_string(PARAMS, "/nope", &text), ACP_ERR_NOT_FOUND);
    CHECK_LAST_ERROR();
    CHECK(text == NULL); /* cleared on failure */
    CHECK_RC(acp_json_get_string(PARAMS, "/limit", &text), ACP_ERR_NOT_FOUND);
    CHECK(strstr(acp_last_error_message(), "not a string") != NULL);
    double number = 7;
    CHECK_RC(acp_json_get_number(PARAMS, "/sessionId", &number), ACP_ERR_NOT_FOUND);
    CHECK(number == 7);
    bool flag = false;
    CHECK_RC(acp_json_get_bool(PARAMS, "/prompt/5", &flag), ACP_ERR_NOT_FOUND);
    char *json = NULL;
    CHECK_RC(acp_json_get("{\"a\":", "/a", &json), ACP_ERR_INVALID_JSON);
    CHECK_LAST_ERROR();
    CHECK_RC(acp_json_get(PARAMS, "no-slash", &json), ACP_ERR_NOT_FOUND);

    CHECK_RC(acp_json_get_string(NULL, "/a", &text), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_json_get_string(PARAMS, NULL, &text), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_json_get_string(PARAMS, "/a", NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_json_get_number(PARAMS, "/limit", NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_json_get_bool(PARAMS, "/ok", NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_json_get(PARAMS, "/ok", NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_json_quote(NULL, &json), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_json_quote("x", NULL), ACP_ERR_NULL_ARGUMENT);
    CHECK_RC(acp_json_get_string("\"\xff\"", "", &text), ACP_ERR_INVALID_UTF8);
}

static void test_quoting(void) {
    harness_section("quoting reads back");
    const char *texts[] = {"plain", "tab\tnewline\n \"quotes\" \\ back", "\x01\x1f control", "caf\xc3\xa9 \xf0\x9f\x98\x80", ""};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        char *quoted = NULL, *back = NULL;
        CHECK_RC(acp_json_quote(texts[i], &quoted), ACP_OK);
        CHECK(quoted && quoted[0] == '"');
        CHECK_RC(acp_json_get_string(quoted, "", &back), ACP_OK);
        CHECK(back && strcmp(back, texts[i]) == 0);
        acp_string_free(quoted);
        acp_string_free(back);
    }
}

int main(void) {
    test_reading();
    test_misses();
    test_quoting();
    return harness_finish();
}
