/* Memory limits (include/byocl/limits.h): byte counts as the environment gives them, the
 * one-tensor and total caps on host tensors and on the graph executor's buffers, through
 * the API and through BYOCL_MAX_*_BYTES in the CLI. The other limits (nesting, rank,
 * recursion, element-count overflow) are cases of the bad-input corpus (tests/bad/). */
#define _DEFAULT_SOURCE /* setenv */
#include "test_support.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/tensor_impl.h"

static const byocl_limits no_limits = {0, 0};

static byocl_tensor *f32_vector(int64_t n, byocl_error *err)
{
    byocl_shape s = byocl_shape_make(1, &n);
    return byocl_tensor_new(BYOCL_FLOAT32, &s, err);
}

static void test_parse_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t want;
    } good[] = {
        {"0", 0},           {"4096", 4096},          {"1K", 1024},
        {"512M", 512u << 20}, {"4G", UINT64_C(4) << 30}, {"2T", UINT64_C(2) << 40},
        {"18446744073709551615", UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        uint64_t got = 1;
        if (!byocl_limits_parse_bytes(good[i].text, &got) || got != good[i].want)
            fail_msg("'%s': got %" PRIu64 ", want %" PRIu64, good[i].text, got, good[i].want);
    }
    static const char *const bad[] = {"",   "-1", "+5", " 5", "5 ",  "4g",  "4GB", "1.5G",
                                      "abc", "G", "18446744073709551616", "17179869184G"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t got = 7;
        if (byocl_limits_parse_bytes(bad[i], &got))
            fail_msg("'%s' was taken as %" PRIu64, bad[i], got);
        assert_int_equal(got, 7);
    }
    assert_false(byocl_limits_parse_bytes(NULL, NULL));
}

static void test_defaults(void **state)
{
    (void)state;
    byocl_limits got;
    byocl_error err = {0};
    assert_int_equal(byocl_limits_get(&got, &err), BYOCL_OK);
    assert_int_equal(got.max_tensor_bytes, UINT64_C(4) << 30);
    assert_int_equal(got.max_total_bytes, UINT64_C(16) << 30);
}

static void test_one_tensor_limit(void **state)
{
    (void)state;
    byocl_limits_set(&(byocl_limits){.max_tensor_bytes = 1024, .max_total_bytes = 0});
    byocl_error err = {0};
    byocl_tensor *fits = f32_vector(256, &err);
    assert_non_null(fits);
    int64_t dims[2] = {257, 1};
    byocl_shape s = byocl_shape_make(2, dims);
    assert_null(byocl_tensor_new(BYOCL_FLOAT32, &s, &err));
    assert_int_equal(err.status, BYOCL_ERR_NOMEM);
    assert_string_equal(err.msg, "tensor (257, 1) float32: 1028 bytes is over the limit of 1024 "
                                 "bytes for one tensor (BYOCL_MAX_TENSOR_BYTES)");
    /* clones and copies are tensors too */
    byocl_limits_set(&(byocl_limits){.max_tensor_bytes = 1023, .max_total_bytes = 0});
    assert_null(byocl_tensor_clone(fits, &err));
    assert_string_equal(err.msg, "tensor (256) float32: 1024 bytes is over the limit of 1023 "
                                 "bytes for one tensor (BYOCL_MAX_TENSOR_BYTES)");
    byocl_tensor_unref(fits);
    byocl_limits_set(&no_limits);
}

static void test_total_limit(void **state)
{
    (void)state;
    uint64_t base = byocl_limits_bytes_in_use();
    byocl_limits_set(&(byocl_limits){.max_tensor_bytes = 0, .max_total_bytes = base + 3000});
    byocl_error err = {0};
    byocl_tensor *a = f32_vector(256, &err), *b = f32_vector(256, &err);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(byocl_limits_bytes_in_use(), base + 2048);
    assert_null(f32_vector(256, &err));
    char want[300];
    snprintf(want, sizeof want,
             "tensor (256) float32: 1024 more bytes with %" PRIu64 " in use is over the limit "
             "of %" PRIu64 " bytes in all (BYOCL_MAX_TOTAL_BYTES)",
             base + 2048, base + 3000);
    assert_string_equal(err.msg, want);
    assert_int_equal(byocl_limits_bytes_in_use(), base + 2048); /* the refused one is not counted */

    /* a view over memory byocl does not own is not counted, and freeing it gives nothing back */
    float outside[300];
    int64_t n = 300;
    byocl_shape s = byocl_shape_make(1, &n);
    byocl_tensor *view = base_tensor_wrap(BYOCL_FLOAT32, &s, outside, &err);
    assert_non_null(view);
    assert_int_equal(byocl_limits_bytes_in_use(), base + 2048);
    base_tensor_wrap_free(view);
    assert_int_equal(byocl_limits_bytes_in_use(), base + 2048);

    /* the last reference going gives the bytes back: room for the third one now */
    byocl_tensor_ref(a);
    byocl_tensor_unref(a);
    assert_int_equal(byocl_limits_bytes_in_use(), base + 2048);
    byocl_tensor_unref(a);
    assert_int_equal(byocl_limits_bytes_in_use(), base + 1024);
    byocl_tensor *c = f32_vector(256, &err);
    assert_non_null(c);
    byocl_tensor_unref(b);
    byocl_tensor_unref(c);
    assert_int_equal(byocl_limits_bytes_in_use(), base);
    byocl_limits_set(&no_limits);
}

/* A failed `byocl ARGS` (after the build, which prints its timed line on stdout). */
static void expect_run_failure(const char *args, const char *want_err)
{
    char *out = ts_cli_expect(args, 1, want_err);
    ts_assert_contains(out, "built @main of ");
    assert_null(strstr(out, "ran @main"));
    free(out);
}

/* The CLI takes the limits from the environment; the graph executor's buffers count. */
static void test_cli_environment(void **state)
{
    (void)state;
    const char *dir = ts_tmpdir("limits_cli");
    char model[600], args[1400];
    snprintf(model, sizeof model, "%s/outer.relay", dir);
    /* (16, 1) + (1, 16): inputs of 64 bytes, a 1024-byte result */
    ts_write_text(model, "def @main(%x: Tensor[(16, 1), float32], %y: Tensor[(1, 16), float32]) {\n"
                         "  add(%x, %y)\n"
                         "}\n");
    snprintf(args, sizeof args, "run '%s' --random-inputs --target ref", model);

    setenv("BYOCL_MAX_TENSOR_BYTES", "1K", 1);
    char *out = ts_cli_expect(args, 0, NULL);
    ts_assert_contains(out, "output 0: Tensor[(16, 16), float32]");
    free(out);

    setenv("BYOCL_MAX_TENSOR_BYTES", "1023", 1);
    expect_run_failure(args, "byocl: error: the executor's buffers: a buffer of 1024 bytes is "
                                "over the limit of 1023 bytes for one tensor "
                                "(BYOCL_MAX_TENSOR_BYTES)\n");
    unsetenv("BYOCL_MAX_TENSOR_BYTES");

    /* the block holds the result and both inputs (64-byte aligned); the parameters are
     * tensors of their own, 128 bytes in use */
    setenv("BYOCL_MAX_TOTAL_BYTES", "1151", 1);
    expect_run_failure(args, "byocl: error: the executor's buffers: 1152 more bytes with 128 "
                                "in use is over the limit of 1151 bytes in all "
                                "(BYOCL_MAX_TOTAL_BYTES)\n");
    setenv("BYOCL_MAX_TOTAL_BYTES", "1280", 1);
    out = ts_cli_expect(args, 0, NULL);
    free(out);

    setenv("BYOCL_MAX_TOTAL_BYTES", "-1", 1);
    ts_cli_expect_failure("info", "byocl: error: BYOCL_MAX_TOTAL_BYTES='-1' is not a byte count "
                                  "(e.g. 1048576, 512M or 4G; 0 for no limit)\n");
    unsetenv("BYOCL_MAX_TOTAL_BYTES");
    ts_remove_tree(dir);
}

int main(void)
{
    /* the defaults are what the process starts with: no limit from the caller's shell */
    unsetenv("BYOCL_MAX_TENSOR_BYTES");
    unsetenv("BYOCL_MAX_TOTAL_BYTES");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_parse_bytes),
        cmocka_unit_test(test_one_tensor_limit),
        cmocka_unit_test(test_total_limit),
        cmocka_unit_test(test_cli_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
