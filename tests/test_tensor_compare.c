/* byocl_tensor_compare (runtime/base/tensor_compare.c), the one tolerance check of replay,
 * bisect, conformance, bench and the tests: results against values worked out by hand. */
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A rank-1 tensor of `dtype` holding values[0..n) (stored as byocl_tensor_set does). */
static byocl_tensor *vec(byocl_dtype dtype, int64_t n, const double *values)
{
    byocl_shape shape = byocl_shape_make(1, &n);
    byocl_tensor *t = byocl_tensor_new(dtype, &shape, NULL);
    assert_non_null(t);
    for (int64_t i = 0; i < n; i++)
        byocl_tensor_set(t, i, values[i]);
    return t;
}

static byocl_compare_result compare(const byocl_tensor *actual, const byocl_tensor *expected,
                                    double rtol, double atol)
{
    byocl_compare_options opt = {.rtol = rtol, .atol = atol};
    byocl_compare_result r;
    byocl_error err = {0};
    if (byocl_tensor_compare(actual, expected, &opt, &r, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return r;
}

static void test_float32(void **state)
{
    (void)state;
    byocl_tensor *want = vec(BYOCL_FLOAT32, 4, (const double[]){1, 2, 3, 4});
    byocl_tensor *got = vec(BYOCL_FLOAT32, 4, (const double[]){1, 2.5, 3, 4.25});
    /* Errors 0, 0.5, 0, 0.25 against tolerances 0.1 * |want|: 0.2 at 1, 0.4 at 3. */
    byocl_compare_result r = compare(got, want, 0.1, 0);
    assert_true(r.same_dtype && r.same_shape);
    assert_false(r.ok);
    assert_int_equal(r.n_mismatches, 1);
    assert_int_equal(r.first_mismatch, 1);
    assert_true(r.max_abs_error == 0.5);
    assert_int_equal(r.worst_index, 1);
    assert_true(r.max_rel_error == 0.25); /* 0.5 / 2 beats 0.25 / 4 */
    assert_true(r.sum_sq_error == 0.3125);
    assert_true(r.sum_sq_expected == 30);
    /* atol widens every element's tolerance: 0.5 <= 0.3 + 0.1 * 2. */
    r = compare(got, want, 0.1, 0.3);
    assert_true(r.ok);
    assert_int_equal(r.n_mismatches, 0);
    assert_int_equal(r.first_mismatch, -1);
    assert_int_equal(r.worst_index, 1); /* the worst element is named even when close */
    /* No options: equal values only. */
    byocl_compare_result exact;
    assert_int_equal(byocl_tensor_compare(got, want, NULL, &exact, NULL), BYOCL_OK);
    assert_int_equal(exact.n_mismatches, 2);
    assert_int_equal(exact.first_mismatch, 1);
    /* A tensor against itself. */
    r = compare(want, want, 0, 0);
    assert_true(r.ok && r.max_abs_error == 0 && r.max_rel_error == 0 && r.sum_sq_error == 0);
    assert_int_equal(r.worst_index, -1);
    byocl_tensor_unref(got);
    byocl_tensor_unref(want);
}

static void test_nan_and_infinity(void **state)
{
    (void)state;
    const double inf = INFINITY;
    byocl_tensor *want = vec(BYOCL_FLOAT32, 7, (const double[]){NAN, inf, -inf, 1, 0, 5, inf});
    byocl_tensor *got = vec(BYOCL_FLOAT32, 7, (const double[]){NAN, inf, inf, NAN, 2, inf, 7});
    /* 0: both NaN, 1: the same infinity: equal. 2: the other infinity, 3: a NaN for 1,
     * 4: 2 for 0 (beyond 1 + 1 * 0), 5: an infinity for 5, 6: 7 for an infinity (never
     * close, though atol + rtol * |inf| is infinite): mismatches. */
    byocl_compare_result r = compare(got, want, 1, 1);
    assert_false(r.ok);
    assert_int_equal(r.n_mismatches, 5);
    assert_int_equal(r.first_mismatch, 2);
    assert_true(isnan(r.max_abs_error));
    assert_int_equal(r.worst_index, 3); /* the first NaN error beats the infinities */
    assert_true(isnan(r.max_rel_error));
    assert_true(isnan(r.sum_sq_error));
    assert_true(r.sum_sq_expected == 26); /* 1 + 0 + 25: the finite elements of want */
    byocl_tensor_unref(got);
    /* Without the NaN: the first infinite error is the worst. */
    got = vec(BYOCL_FLOAT32, 7, (const double[]){NAN, inf, inf, 1, 2, inf, 7});
    r = compare(got, want, 1, 1);
    assert_int_equal(r.n_mismatches, 4);
    assert_true(isinf(r.max_abs_error));
    assert_int_equal(r.worst_index, 2);
    assert_true(isinf(r.max_rel_error));
    assert_true(isinf(r.sum_sq_error));
    byocl_tensor_unref(got);
    /* NaN where NaN is expected, and matching infinities, are within any tolerance. */
    r = compare(want, want, 0, 0);
    assert_true(r.ok);
    assert_int_equal(r.worst_index, -1);
    byocl_tensor_unref(want);
}

static void test_float16(void **state)
{
    (void)state;
    /* float16 holds 0.1 as 0.0999755859375; the next float16 up is 2^-14 further. */
    const double tenth = 0.0999755859375, ulp = 0.00006103515625;
    byocl_tensor *want = vec(BYOCL_FLOAT16, 4, (const double[]){1, tenth, 65504, -2});
    byocl_tensor *got = vec(BYOCL_FLOAT16, 4, (const double[]){1, tenth + ulp, 65504, -2});
    assert_true(byocl_tensor_get(want, 1) == tenth && byocl_tensor_get(got, 1) == tenth + ulp);
    /* 2^-14 against 1e-4 * 0.09998 (about 1e-5): beyond; against 1e-3 * 0.09998: within. */
    byocl_compare_result r = compare(got, want, 1e-4, 0);
    assert_int_equal(r.n_mismatches, 1);
    assert_int_equal(r.first_mismatch, 1);
    assert_true(r.max_abs_error == ulp);
    assert_int_equal(r.worst_index, 1);
    assert_true(fabs(r.max_rel_error - ulp / tenth) < 1e-15);
    assert_true(r.sum_sq_error == ulp * ulp);
    assert_true(fabs(r.sum_sq_expected - (1 + tenth * tenth + 65504.0 * 65504.0 + 4)) < 1e-6);
    r = compare(got, want, 1e-3, 0);
    assert_true(r.ok);
    /* float16 overflow is an infinity, never close to 65504. */
    byocl_tensor_unref(got);
    got = vec(BYOCL_FLOAT16, 4, (const double[]){1, tenth, 70000, -2});
    assert_true(isinf(byocl_tensor_get(got, 2)));
    r = compare(got, want, 1, 1);
    assert_int_equal(r.n_mismatches, 1);
    assert_int_equal(r.first_mismatch, 2);
    byocl_tensor_unref(got);
    byocl_tensor_unref(want);
}

static void test_integers_and_bool(void **state)
{
    (void)state;
    byocl_tensor *want = vec(BYOCL_INT32, 3, (const double[]){0, -3, 100000});
    byocl_tensor *got = vec(BYOCL_INT32, 3, (const double[]){0, -2, 100000});
    byocl_compare_result r = compare(got, want, 0, 1); /* |-2 - -3| = 1 <= 1 */
    assert_true(r.ok);
    assert_true(r.max_abs_error == 1);
    assert_int_equal(r.worst_index, 1);
    assert_true(fabs(r.max_rel_error - 1.0 / 3.0) < 1e-15);
    r = compare(got, want, 0, 0.5);
    assert_int_equal(r.n_mismatches, 1);
    assert_int_equal(r.first_mismatch, 1);
    byocl_tensor_unref(got);
    byocl_tensor_unref(want);

    want = vec(BYOCL_INT64, 2, (const double[]){-5, 1e15});
    got = vec(BYOCL_INT64, 2, (const double[]){-5, 1e15 + 2});
    r = compare(got, want, 0, 0);
    assert_int_equal(r.n_mismatches, 1);
    assert_true(r.max_abs_error == 2);
    byocl_tensor_unref(got);
    byocl_tensor_unref(want);

    want = vec(BYOCL_BOOL, 3, (const double[]){1, 0, 1});
    got = vec(BYOCL_BOOL, 3, (const double[]){1, 1, 1});
    r = compare(got, want, 0, 0);
    assert_int_equal(r.n_mismatches, 1);
    assert_int_equal(r.first_mismatch, 1);
    assert_true(r.max_abs_error == 1);
    assert_true(isinf(r.max_rel_error)); /* 1 where 0 was expected */
    assert_true(r.sum_sq_expected == 2);
    byocl_tensor_unref(got);
    byocl_tensor_unref(want);
}

static void test_dtype_and_shape_mismatch(void **state)
{
    (void)state;
    byocl_tensor *want = vec(BYOCL_FLOAT32, 4, (const double[]){1, 2, 3, 4});
    byocl_tensor *shorter = vec(BYOCL_FLOAT32, 2, (const double[]){1, 2});
    byocl_compare_result r = compare(shorter, want, 1, 1);
    assert_true(r.same_dtype);
    assert_false(r.same_shape);
    assert_false(r.ok);
    assert_int_equal(r.n_mismatches, 4); /* every element of expected */
    assert_int_equal(r.first_mismatch, 0);
    assert_true(isinf(r.max_abs_error) && isinf(r.sum_sq_error));
    byocl_tensor_unref(shorter);

    byocl_tensor *half = vec(BYOCL_FLOAT16, 4, (const double[]){1, 2, 3, 4});
    r = compare(half, want, 1, 1); /* the same values, another dtype */
    assert_false(r.same_dtype);
    assert_true(r.same_shape);
    assert_false(r.ok);
    assert_int_equal(r.n_mismatches, 4);
    byocl_tensor_unref(half);

    int64_t dims[2] = {2, 2};
    byocl_tensor *square = ts_tensor_f32(2, dims, (const float[]){1, 2, 3, 4});
    r = compare(square, want, 0, 0); /* the same four values as a 2x2 */
    assert_false(r.same_shape);
    byocl_tensor_unref(square);

    int64_t zero = 0;
    byocl_tensor *empty = ts_tensor_f32(1, &zero, NULL);
    r = compare(empty, empty, 0, 0);
    assert_true(r.ok);
    assert_int_equal(r.worst_index, -1);
    byocl_tensor_unref(empty);
    byocl_tensor_unref(want);
}

static void test_errors(void **state)
{
    (void)state;
    byocl_tensor *t = vec(BYOCL_FLOAT32, 1, (const double[]){1});
    byocl_compare_result r;
    byocl_error err = {0};
    assert_int_equal(byocl_tensor_compare(NULL, t, NULL, &r, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "byocl_tensor_compare: a tensor or the result is NULL");
    assert_int_equal(byocl_tensor_compare(t, t, NULL, NULL, &err), BYOCL_ERR_INVALID);
    byocl_compare_options bad = {.rtol = -1, .atol = 0};
    assert_int_equal(byocl_tensor_compare(t, t, &bad, &r, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg,
                        "byocl_tensor_compare: rtol -1 and atol 0 must be numbers >= 0");
    bad = (byocl_compare_options){.rtol = 0, .atol = NAN};
    assert_int_equal(byocl_tensor_compare(t, t, &bad, &r, NULL), BYOCL_ERR_INVALID);
    byocl_tensor_unref(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float32),
        cmocka_unit_test(test_nan_and_infinity),
        cmocka_unit_test(test_float16),
        cmocka_unit_test(test_integers_and_bool),
        cmocka_unit_test(test_dtype_and_shape_mismatch),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
