/* byocl_textbuf (runtime/base/textbuf.h), the one growable text buffer: appends of every kind,
 * growth past the first allocation, take and free, and the out-of-memory flag. */
#include "test_support.h"

#include "base/textbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void test_appends(void **state)
{
    (void)state;
    byocl_textbuf b = {0};
    base_textbuf_puts(&b, "ab");
    base_textbuf_putc(&b, 'c');
    base_textbuf_putn(&b, "de!", 2);
    base_textbuf_printf(&b, " %d-%s", 42, "x");
    assert_string_equal(b.data, "abcde 42-x");
    assert_int_equal(b.len, 10);
    assert_false(b.oom);
    char *s = base_textbuf_take(&b);
    assert_string_equal(s, "abcde 42-x");
    assert_null(b.data); /* taken: the buffer is empty again */
    assert_int_equal(b.len, 0);
    free(s);
}

static void test_growth(void **state)
{
    (void)state;
    byocl_textbuf b = {0};
    char want[5000];
    size_t n = 0;
    /* printf output that does not fit the room left, many times over. */
    for (int k = 0; n + 40 < sizeof want; k++) {
        int w = snprintf(want + n, sizeof want - n, "%d:%-30s|", k, "y");
        base_textbuf_printf(&b, "%d:%-30s|", k, "y");
        n += (size_t)w;
    }
    char big[3000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    base_textbuf_printf(&b, "%s", big); /* larger than the whole buffer so far */
    assert_int_equal(b.len, n + sizeof big - 1);
    assert_memory_equal(b.data, want, n);
    assert_string_equal(b.data + n, big);
    base_textbuf_free(&b);
    assert_null(b.data);
}

static void test_empty_take_and_reserve(void **state)
{
    (void)state;
    byocl_textbuf b = {0};
    char *s = base_textbuf_take(&b);
    assert_non_null(s);
    assert_string_equal(s, ""); /* nothing appended is "", not NULL */
    free(s);
    /* The first reservation is the size asked for: room to write into directly. */
    assert_true(base_textbuf_reserve(&b, 100000));
    assert_true(b.cap >= 100001);
    memset(b.data, 'q', 100000);
    b.len = 100000;
    b.data[b.len] = '\0';
    base_textbuf_puts(&b, "end");
    assert_string_equal(b.data + 100000, "end");
    base_textbuf_free(&b);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    byocl_textbuf b = {0};
    base_textbuf_puts(&b, "kept");
    assert_false(base_textbuf_reserve(&b, SIZE_MAX - 2)); /* no size_t holds this */
    assert_true(b.oom);
    base_textbuf_puts(&b, "lost"); /* appends after a failure do nothing */
    base_textbuf_printf(&b, "%d", 1);
    assert_string_equal(b.data, "kept");
    assert_null(base_textbuf_take(&b)); /* checked once, at the end */
    assert_null(b.data);
    assert_false(b.oom);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appends),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_empty_take_and_reserve),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
