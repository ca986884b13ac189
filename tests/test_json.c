/* The small JSON reader behind the stage manifest (runtime/base/json.c): values, escapes,
 * numbers, the located syntax errors, and the writer's string escaping read back. */
#include "test_support.h"

#include "base/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static byocl_json *parse_ok(const char *text)
{
    byocl_json *v = NULL;
    byocl_error err;
    if (base_json_parse(text, strlen(text), "t.json", &v, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return v;
}

static void expect_error(const char *text, const char *msg)
{
    byocl_json *v = (byocl_json *)1;
    byocl_error err;
    assert_int_equal(base_json_parse(text, strlen(text), "t.json", &v, &err), BYOCL_ERR_PARSE);
    assert_null(v);
    assert_string_equal(err.msg, msg);
}

static void test_values(void **state)
{
    (void)state;
    byocl_json *v = parse_ok(" {\"a\": [1, -2, 3.5, 1e3, 12345678901234567890],\n"
                             "  \"b\": {\"t\": true, \"f\": false, \"n\": null},\n"
                             "  \"a\": \"again\", \"e\": [], \"o\": {}}\n");
    assert_int_equal(v->kind, BYOCL_JSON_OBJECT);
    assert_int_equal(v->n, 5);
    assert_string_equal(v->keys[0], "a");
    const byocl_json *a = &v->items[0];
    assert_int_equal(a->kind, BYOCL_JSON_ARRAY);
    assert_int_equal(a->n, 5);
    assert_true(a->items[0].is_int && a->items[0].integer == 1);
    assert_true(a->items[1].is_int && a->items[1].integer == -2);
    assert_false(a->items[2].is_int);
    assert_true(a->items[2].number == 3.5);
    assert_false(a->items[3].is_int); /* an exponent makes a double */
    assert_true(a->items[3].number == 1000.0);
    assert_false(a->items[4].is_int); /* beyond int64 */
    assert_true(a->items[4].number == 12345678901234567890.0);
    assert_int_equal(a->items[1].line, 1);
    assert_int_equal(a->items[1].col, 12);
    /* A repeated key: the last one counts. */
    const byocl_json *again = base_json_get(v, "a");
    assert_int_equal(again->kind, BYOCL_JSON_STRING);
    assert_string_equal(again->string, "again");
    const byocl_json *b = base_json_get(v, "b");
    assert_int_equal(b->line, 2);
    assert_int_equal(b->col, 8);
    assert_true(base_json_get(b, "t")->boolean);
    assert_false(base_json_get(b, "f")->boolean);
    assert_int_equal(base_json_get(b, "f")->kind, BYOCL_JSON_BOOL);
    assert_int_equal(base_json_get(b, "n")->kind, BYOCL_JSON_NULL);
    assert_int_equal(base_json_get(v, "e")->n, 0);
    assert_int_equal(base_json_get(v, "o")->kind, BYOCL_JSON_OBJECT);
    assert_null(base_json_get(v, "missing"));
    assert_null(base_json_get(a, "a")); /* not an object */
    assert_string_equal(base_json_kind_name(BYOCL_JSON_ARRAY), "array");
    base_json_free(v);
    base_json_free(NULL);
}

static void test_strings(void **state)
{
    (void)state;
    byocl_json *v = parse_ok("[\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t\", \"\\u00e9\\u20ac\", "
                             "\"\\ud83d\\ude00\", \"plain \xc3\xa9\"]");
    assert_string_equal(v->items[0].string, "q\" b\\ s/ \b\f\n\r\t");
    assert_string_equal(v->items[1].string, "\xc3\xa9\xe2\x82\xac"); /* é € */
    assert_string_equal(v->items[2].string, "\xf0\x9f\x98\x80");     /* U+1F600 */
    assert_string_equal(v->items[3].string, "plain \xc3\xa9");
    base_json_free(v);

    /* What the writer escapes reads back as it was. */
    const char *original = "a \"quoted\" \\path\\\n\ttab \x01 end";
    byocl_textbuf text = {0};
    base_json_write_string(&text, original);
    char *buf = base_textbuf_take(&text);
    assert_non_null(buf);
    assert_string_equal(buf, "\"a \\\"quoted\\\" \\\\path\\\\\\n\\ttab \\u0001 end\"");
    v = parse_ok(buf);
    assert_string_equal(v->string, original);
    base_json_free(v);
    free(buf);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("", "t.json:1:1: error: expected a value");
    expect_error("{\"a\": 1,\n  }", "t.json:2:3: error: expected a key (a string)");
    expect_error("{\"a\" 1}", "t.json:1:6: error: expected ':'");
    expect_error("[1 2]", "t.json:1:4: error: expected ',' or ']'");
    expect_error("{\"a\": 1 \"b\"}", "t.json:1:9: error: expected ',' or '}'");
    expect_error("[1] x", "t.json:1:5: error: unexpected text after the value");
    expect_error("01", "t.json:1:2: error: unexpected text after the value");
    expect_error("[1.]", "t.json:1:4: error: expected a digit after '.'");
    expect_error("[1e+]", "t.json:1:5: error: expected a digit in the exponent");
    expect_error("-", "t.json:1:1: error: expected a value");
    expect_error("[tru]", "t.json:1:2: error: expected a value");
    expect_error("\"abc", "t.json:1:5: error: unterminated string");
    expect_error("\"a\nb\"", "t.json:1:3: error: control character in a string (write it as "
                             "an escape)");
    expect_error("\"\\x\"", "t.json:1:2: error: bad escape in a string");
    expect_error("\"\\u12g4\"", "t.json:1:2: error: bad escape in a string");
    expect_error("\"\\ud83d\"", "t.json:1:2: error: unpaired surrogate in a string");
    expect_error("\"\\ude00\"", "t.json:1:2: error: unpaired surrogate in a string");
    expect_error("\"\\u0000\"", "t.json:1:2: error: \\u0000 in a string");
    char deep[200];
    memset(deep, '[', 70);
    deep[70] = '\0';
    expect_error(deep, "t.json:1:65: error: nested too deeply");
    /* Failures part-way through a container free what was read (valgrind checks). */
    expect_error("{\"a\": [\"x\", {\"b\": \"y\"}, ", "t.json:1:25: error: expected a value");
    expect_error("{\"a\": 1, \"b\": [", "t.json:1:16: error: expected a value");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
