/* IR core: builder, attributes, types, type inference, verifier, tensors and float16. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "ir/ir_impl.h"
#include "ops/op_impl.h"

static byocl_type f32(int rank, const int64_t *dims)
{
    return byocl_type_tensor(BYOCL_FLOAT32, rank, dims);
}

/* A module with `@main(%x: x_type)`, its body not built yet. */
static byocl_module *main_with_param(byocl_type x_type, byocl_function **fn, int *x)
{
    byocl_error err;
    byocl_module *m = byocl_module_new();
    assert_non_null(m);
    *fn = byocl_module_add_function(m, "main", &err);
    assert_non_null(*fn);
    *x = byocl_function_add_param(*fn, "x", &x_type, &err);
    assert_true(*x >= 0);
    return m;
}

static void test_builder_and_inference(void **state)
{
    (void)state;
    byocl_error err;
    int64_t d[] = {2, 3};
    byocl_type t = f32(2, d);
    byocl_function *fn;
    int x;
    byocl_module *m = main_with_param(t, &fn, &x);
    int y = byocl_function_add_param(fn, "y", &t, &err);
    int args[] = {x, y};
    int sum = byocl_function_add_call(fn, "add", args, 2, NULL, &err);
    assert_true(sum >= 0);
    int r = byocl_function_add_call(fn, "nn.relu", &sum, 1, NULL, &err);
    int fields[] = {r, sum};
    int tup = byocl_function_add_tuple(fn, fields, 2, &err);
    int item = byocl_function_add_getitem(fn, tup, 1, &err);
    assert_int_equal(byocl_function_set_body(fn, item, &err), BYOCL_OK);
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_OK);
    char s[128];
    assert_string_equal(byocl_type_str(byocl_node_type(fn, tup), s, sizeof s),
                        "(Tensor[(2, 3), float32], Tensor[(2, 3), float32])");
    assert_string_equal(byocl_type_str(byocl_function_ret_type(fn), s, sizeof s),
                        "Tensor[(2, 3), float32]");
    assert_int_equal(byocl_verify(m, true, &err), BYOCL_OK);
    assert_int_equal(byocl_function_find_param(fn, "y"), y);
    assert_int_equal(byocl_function_find_param(fn, "z"), -1);

    /* A clone is independent and identical. */
    byocl_module *c = byocl_module_clone(m, &err);
    assert_non_null(c);
    byocl_module_free(m);
    byocl_function *cf = byocl_module_find(c, "main");
    assert_non_null(cf);
    assert_int_equal(byocl_function_num_nodes(cf), 6);
    assert_string_equal(byocl_node_op(cf, 3), "nn.relu");
    assert_string_equal(byocl_type_str(byocl_node_type(cf, tup), s, sizeof s),
                        "(Tensor[(2, 3), float32], Tensor[(2, 3), float32])");
    byocl_module_free(c);
}

static void test_builder_errors(void **state)
{
    (void)state;
    byocl_error err;
    int64_t d[] = {4};
    byocl_type t = f32(1, d);
    byocl_function *fn;
    int x;
    byocl_module *m = main_with_param(t, &fn, &x);
    assert_null(byocl_module_add_function(m, "main", &err));
    assert_string_equal(err.msg, "duplicate function name @main");
    assert_int_equal(byocl_function_add_param(fn, "x", &t, &err), -1);
    assert_string_equal(err.msg, "duplicate parameter name %x in @main");
    assert_int_equal(byocl_function_add_call(fn, "nn.nope", &x, 1, NULL, &err), -1);
    assert_string_equal(err.msg, "unknown op 'nn.nope'");
    int two[] = {x, x};
    assert_int_equal(byocl_function_add_call(fn, "nn.relu", two, 2, NULL, &err), -1);
    assert_string_equal(err.msg, "nn.relu takes 1 argument but was given 2");
    int bad = 7;
    assert_int_equal(byocl_function_add_call(fn, "nn.relu", &bad, 1, NULL, &err), -1);
    assert_string_equal(err.msg, "argument 0 refers to node 7, which does not exist yet");

    byocl_attrs *a = byocl_attrs_new(m);
    byocl_attrs_set_str(m, a, "a_min", "zero");
    byocl_attrs_set_float(m, a, "a_max", 6);
    assert_int_equal(byocl_function_add_call(fn, "clip", &x, 1, a, &err), -1);
    assert_string_equal(err.msg,
                        "bad value for attribute 'a_min' of clip: expected a number, got \"zero\"");
    a = byocl_attrs_new(m);
    byocl_attrs_set_float(m, a, "a_max", 6);
    assert_int_equal(byocl_function_add_call(fn, "clip", &x, 1, a, &err), -1);
    assert_string_equal(err.msg, "clip requires attribute 'a_min'");
    a = byocl_attrs_new(m);
    byocl_attrs_set_int(m, a, "units", 3);
    assert_int_equal(byocl_function_add_call(fn, "nn.relu", &x, 1, a, &err), -1);
    assert_string_equal(err.msg, "nn.relu takes no attributes, but was given 'units'");
    a = byocl_attrs_new(m);
    byocl_attrs_set_int(m, a, "axes", 3);
    assert_int_equal(byocl_function_add_call(fn, "nn.softmax", &x, 1, a, &err), -1);
    assert_string_equal(err.msg, "nn.softmax has no attribute 'axes' (it has: axis)");
    byocl_module_free(m);
}

static void test_attrs_defaults_and_printing(void **state)
{
    (void)state;
    byocl_error err;
    byocl_function *fn;
    int x;
    byocl_module *m = main_with_param(f32(4, (int64_t[]){1, 2, 5, 5}), &fn, &x);
    byocl_attrs *a = byocl_attrs_new(m);
    byocl_attrs_set_int(m, a, "pool_size", 2); /* one int where a list is expected */
    byocl_attrs_set_int(m, a, "ceil_mode", 1); /* 0/1 where a bool is expected */
    int p = byocl_function_add_call(fn, "nn.max_pool2d", &x, 1, a, &err);
    assert_true(p >= 0);
    const byocl_attrs *got = byocl_node_attrs(fn, p);
    const int64_t *ints;
    assert_int_equal(byocl_attrs_get_ints(got, "pool_size", &ints), 2);
    assert_true(byocl_attrs_get_bool(got, "ceil_mode", false));
    assert_string_equal(byocl_attrs_get_str(got, "layout", "?"), "NCHW");
    const byocl_op *op = byocl_op_find("nn.max_pool2d");
    for (int k = 0; k < byocl_op_num_attrs(op); k++) {
        bool is_default = ops_attr_is_default(op, k, &got->items[k]);
        bool expect_default = strcmp(got->items[k].key, "ceil_mode") != 0 &&
                              strcmp(got->items[k].key, "pool_size") != 0;
        assert_int_equal(is_default, expect_default);
    }
    char s[64];
    byocl_attr f = {.key = "epsilon", .kind = BYOCL_ATTR_FLOAT, .f = 2e-05};
    assert_string_equal(byocl_attr_value_str(&f, s, sizeof s), "2e-05f");
    f.f = 1.0;
    assert_string_equal(byocl_attr_value_str(&f, s, sizeof s), "1f");
    f.f = 0.1;
    assert_string_equal(byocl_attr_value_str(&f, s, sizeof s), "0.1f");
    byocl_attr str = {.key = "k", .kind = BYOCL_ATTR_STR, .s = "a\"b"};
    assert_string_equal(byocl_attr_value_str(&str, s, sizeof s), "\"a\\\"b\"");
    int64_t v[] = {1, -1};
    byocl_attr l = {.key = "k", .kind = BYOCL_ATTR_INTS, .n = 2, .ints = v};
    assert_string_equal(byocl_attr_value_str(&l, s, sizeof s), "[1, -1]");
    double roi[] = {0, 0.5, 1, -2e-05};
    byocl_attr fl = {.key = "roi", .kind = BYOCL_ATTR_FLOATS, .n = 4, .floats = roi};
    assert_string_equal(byocl_attr_value_str(&fl, s, sizeof s), "[0f, 0.5f, 1f, -2e-05f]");
    fl.n = 0;
    assert_string_equal(byocl_attr_value_str(&fl, s, sizeof s), "[]");
    byocl_module_free(m);
}

static void test_infer_errors_name_the_node(void **state)
{
    (void)state;
    byocl_error err;
    int64_t a[] = {2, 3}, b[] = {4, 3};
    byocl_type tb = f32(2, b);
    byocl_function *fn;
    int x;
    byocl_module *m = main_with_param(f32(2, a), &fn, &x);
    int y = byocl_function_add_param(fn, "y", &tb, &err);
    int r = byocl_function_add_call(fn, "nn.relu", &x, 1, NULL, &err);
    int args[] = {r, y};
    int sum = byocl_function_add_call(fn, "add", args, 2, NULL, &err);
    int out = byocl_function_add_call(fn, "nn.relu", &sum, 1, NULL, &err);
    byocl_function_set_body(fn, out, &err);
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_ERR_TYPE);
    assert_string_equal(err.msg, "in @main, %1 (add): cannot broadcast shapes (2, 3) and (4, 3): "
                                 "dimension 0 is 2 vs 4");
    byocl_module_free(m);
}

static void test_global_calls_and_recursion(void **state)
{
    (void)state;
    byocl_error err;
    int64_t d[] = {3};
    byocl_type t = f32(1, d);
    byocl_function *main_fn;
    int x;
    byocl_module *m = main_with_param(t, &main_fn, &x);
    int call = byocl_function_add_call_global(main_fn, "region", &x, 1, &err);
    byocl_function_set_body(main_fn, call, &err);
    /* callee defined after its caller */
    byocl_function *region = byocl_module_add_function(m, "region", &err);
    int i0 = byocl_function_add_param(region, "i0", &t, &err);
    int r = byocl_function_add_call(region, "abs", &i0, 1, NULL, &err);
    byocl_function_set_body(region, r, &err);
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_OK);
    char s[64];
    assert_string_equal(byocl_type_str(byocl_node_type(main_fn, call), s, sizeof s),
                        "Tensor[(3), float32]");

    /* wrong argument type */
    byocl_function *bad = byocl_module_add_function(m, "bad", &err);
    int64_t d2[] = {4};
    byocl_type t2 = f32(1, d2);
    int z = byocl_function_add_param(bad, "z", &t2, &err);
    int c2 = byocl_function_add_call_global(bad, "region", &z, 1, &err);
    byocl_function_set_body(bad, c2, &err);
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_ERR_TYPE);
    assert_string_equal(err.msg, "in @bad, the result (@region): argument 0 of @region (%i0) "
                                 "should be Tensor[(3), float32], got Tensor[(4), float32]");
    byocl_module_remove(m, "bad", &err);

    /* recursion through two functions */
    byocl_module *m2 = byocl_module_new();
    byocl_function *a = byocl_module_add_function(m2, "a", &err);
    int p = byocl_function_add_param(a, "p", &t, &err);
    byocl_function_set_body(a, byocl_function_add_call_global(a, "b", &p, 1, &err), &err);
    byocl_function *b = byocl_module_add_function(m2, "b", &err);
    int q = byocl_function_add_param(b, "q", &t, &err);
    byocl_function_set_body(b, byocl_function_add_call_global(b, "a", &q, 1, &err), &err);
    assert_int_equal(byocl_verify(m2, false, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "recursive call of global functions: @a -> @b -> @a");
    assert_int_equal(byocl_infer_types(m2, &err), BYOCL_ERR_INVALID);
    byocl_module_free(m2);

    /* undefined callee */
    byocl_module *m3 = byocl_module_new();
    byocl_function *f3 = byocl_module_add_function(m3, "main", &err);
    int v = byocl_function_add_param(f3, "v", &t, &err);
    byocl_function_set_body(f3, byocl_function_add_call_global(f3, "nowhere", &v, 1, &err), &err);
    assert_int_equal(byocl_verify(m3, false, &err), BYOCL_ERR_NOT_FOUND);
    assert_string_equal(err.msg, "in @main, the result (@nowhere): call of @nowhere, which is "
                                 "not defined");
    byocl_module_free(m3);
    byocl_module_free(m);
}

static void test_getitem_errors(void **state)
{
    (void)state;
    byocl_error err;
    byocl_function *fn;
    int x;
    byocl_module *m = main_with_param(f32(1, (int64_t[]){3}), &fn, &x);
    int tup = byocl_function_add_tuple(fn, &x, 1, &err);
    int item = byocl_function_add_getitem(fn, tup, 1, &err);
    byocl_function_set_body(fn, item, &err);
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_ERR_TYPE);
    assert_string_equal(err.msg, "in @main, the result: item 1 taken from a tuple of 1 field");
    byocl_module_free(m);
}

static void test_verify_requires_types_and_body(void **state)
{
    (void)state;
    byocl_error err;
    byocl_function *fn;
    int x;
    byocl_module *m = main_with_param(f32(1, (int64_t[]){3}), &fn, &x);
    assert_int_equal(byocl_verify(m, false, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "@main has no body");
    int r = byocl_function_add_call(fn, "abs", &x, 1, NULL, &err);
    byocl_function_set_body(fn, r, &err);
    assert_int_equal(byocl_verify(m, false, &err), BYOCL_OK);
    assert_int_equal(byocl_verify(m, true, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "in @main, the result (abs): node has no type (run type inference)");
    byocl_module_free(m);
}

/* float32 -> bfloat16 truncates (ONNX's Cast test data: 0x3ef5eeb0 -> 0x3ef5); a NaN stays
 * a quiet NaN with its sign, also one whose payload is in the dropped low bits. */
static void test_bfloat16_truncates(void **state)
{
    (void)state;
    static const struct {
        uint32_t f, b;
    } cases[] = {
        {0x3ef535b8, 0x3ef5}, {0x3ef5eeb0, 0x3ef5}, {0x3f818000, 0x3f81}, {0x7f7fffff, 0x7f7f},
        {0x00000001, 0x0000}, {0x80000000, 0x8000}, {0xff800000, 0xff80}, {0x7fc00000, 0x7fc0},
        {0x7f800001, 0x7fc0}, {0xff800001, 0xffc0}, {0xffc12345, 0xffc1}, {0x7fa00000, 0x7fe0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float f;
        memcpy(&f, &cases[i].f, 4);
        uint16_t b = byocl_f32_to_bf16(f);
        if (b != cases[i].b)
            fail_msg("f32_to_bf16(0x%08x) = 0x%04x, want 0x%04x", (unsigned)cases[i].f, b,
                     (unsigned)cases[i].b);
    }
    /* every bfloat16 but the NaNs survives bfloat16 -> float -> bfloat16 */
    for (uint32_t b = 0; b < 0x10000; b++)
        if ((b & 0x7f80) != 0x7f80 || (b & 0x7f) == 0)
            assert_int_equal(byocl_f32_to_bf16(byocl_bf16_to_f32((uint16_t)b)), b);
    assert_true(byocl_bf16_to_f32(0x3f80) == 1.0f);
}

static void test_float16_round_to_nearest_even(void **state)
{
    (void)state;
    /* bit patterns computed with numpy: np.float16(x).view(np.uint16) */
    struct { float f; uint16_t h; } cases[] = {
        {0.0f, 0x0000},     {-0.0f, 0x8000},   {1.0f, 0x3c00},     {-2.0f, 0xc000},
        {2049.0f, 0x6800},  {2051.0f, 0x6802}, {2050.0f, 0x6801},  {65504.0f, 0x7bff},
        {65519.0f, 0x7bff}, {65520.0f, 0x7c00}, {1e-8f, 0x0000},   {6e-8f, 0x0001},
        {3e-8f, 0x0001},    {2.9e-8f, 0x0000}, {6.1035156e-05f, 0x0400}, {0.1f, 0x2e66},
        {INFINITY, 0x7c00}, {-INFINITY, 0xfc00},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t h = byocl_f32_to_f16(cases[i].f);
        if (h != cases[i].h)
            fail_msg("f32_to_f16(%.9g) = 0x%04x, want 0x%04x", cases[i].f, h, cases[i].h);
    }
    assert_true(isnan(byocl_f16_to_f32(byocl_f32_to_f16(NAN))));
    /* every finite half survives half -> float -> half */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00)
            continue;
        assert_int_equal(byocl_f32_to_f16(byocl_f16_to_f32((uint16_t)h)), h);
    }
    assert_true(byocl_f16_to_f32(0x0001) == 0x1p-24f);
    assert_true(byocl_f16_to_f32(0x7bff) == 65504.0f);
}

static void test_tensor_set_get_and_limits(void **state)
{
    (void)state;
    byocl_error err;
    int64_t d[] = {4};
    byocl_shape s = byocl_shape_make(1, d);
    byocl_tensor *t = byocl_tensor_new(BYOCL_INT8, &s, &err);
    byocl_tensor_set(t, 0, 127.9);
    byocl_tensor_set(t, 1, -3.7);
    byocl_tensor_set(t, 2, 130.0); /* wraps like a two's complement cast */
    byocl_tensor_set(t, 3, NAN);
    assert_true(byocl_tensor_get(t, 0) == 127.0);
    assert_true(byocl_tensor_get(t, 1) == -3.0);
    assert_true(byocl_tensor_get(t, 2) == -126.0);
    assert_true(byocl_tensor_get(t, 3) == 0.0);
    byocl_tensor_unref(t);

    int64_t huge[] = {INT64_MAX / 2, 4};
    byocl_shape hs = byocl_shape_make(2, huge);
    assert_null(byocl_tensor_new(BYOCL_FLOAT32, &hs, &err));
    assert_string_equal(err.msg,
                        "tensor shape (4611686018427387903, 4) is negative or too large");
    int64_t neg[] = {-1};
    byocl_shape ns = byocl_shape_make(1, neg);
    assert_null(byocl_tensor_new(BYOCL_FLOAT32, &ns, &err));
    assert_string_equal(err.msg, "tensor shape (-1) is negative or too large");

    byocl_tensor *a = byocl_tensor_new(BYOCL_FLOAT32, &s, &err);
    byocl_tensor *b = byocl_tensor_new(BYOCL_FLOAT32, &s, &err);
    byocl_tensor_fill_random(a, 42, -1, 1);
    byocl_tensor_fill_random(b, 42, -1, 1);
    assert_true(byocl_tensor_equal(a, b));
    for (int i = 0; i < 4; i++)
        assert_true(byocl_tensor_get(a, i) >= -1 && byocl_tensor_get(a, i) < 1);
    byocl_tensor_fill_random(b, 43, -1, 1);
    assert_false(byocl_tensor_equal(a, b));
    byocl_tensor_unref(a);
    byocl_tensor_unref(b);

    byocl_dtype dt;
    assert_true(byocl_dtype_from_name("float16", &dt));
    assert_int_equal(dt, BYOCL_FLOAT16);
    assert_true(byocl_dtype_from_name("float64", &dt));
    assert_int_equal(dt, BYOCL_FLOAT64);
    assert_int_equal(byocl_dtype_size(dt), 8);
    assert_true(byocl_dtype_is_float(dt));
    assert_false(byocl_dtype_from_name("float128", &dt));
}

/* New tensors are zero and 64-byte aligned on both sides of the size from which calloc
 * gives them (1 MiB), also where the memory was just used and freed; clones read the
 * same. */
static void test_tensor_new_zeroed(void **state)
{
    (void)state;
    static const int64_t sizes[] = {16, 262143, 262144, 262145, 1 << 20};
    for (int round = 0; round < 2; round++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            byocl_error err;
            byocl_shape s = byocl_shape_make(1, &sizes[k]);
            byocl_tensor *t = byocl_tensor_new(BYOCL_FLOAT32, &s, &err);
            assert_non_null(t);
            const float *p = byocl_tensor_cdata(t);
            assert_int_equal((uintptr_t)p % 64, 0);
            for (int64_t i = 0; i < sizes[k]; i++)
                if (p[i] != 0.0f)
                    fail_msg("%lld floats: element %lld is %g", (long long)sizes[k],
                             (long long)i, p[i]);
            byocl_tensor_fill_random(t, 5, 1, 2); /* dirty it for the next round */
            byocl_tensor *c = byocl_tensor_clone(t, &err);
            assert_true(byocl_tensor_equal(c, t));
            byocl_tensor_unref(c);
            byocl_tensor_unref(t);
        }
}

static void test_error_prefix(void **state)
{
    (void)state;
    byocl_error err;
    byocl_error_set(&err, BYOCL_ERR_IO, "cannot open %s", "x.npy");
    byocl_error_prefix(&err, "reading input %d: ", 2);
    assert_string_equal(err.msg, "reading input 2: cannot open x.npy");
    assert_int_equal(err.status, BYOCL_ERR_IO);
    assert_int_equal(byocl_error_set(NULL, BYOCL_ERR_RUNTIME, "ignored"), BYOCL_ERR_RUNTIME);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builder_and_inference),
        cmocka_unit_test(test_builder_errors),
        cmocka_unit_test(test_attrs_defaults_and_printing),
        cmocka_unit_test(test_infer_errors_name_the_node),
        cmocka_unit_test(test_global_calls_and_recursion),
        cmocka_unit_test(test_getitem_errors),
        cmocka_unit_test(test_verify_requires_types_and_body),
        cmocka_unit_test(test_float16_round_to_nearest_even),
        cmocka_unit_test(test_bfloat16_truncates),
        cmocka_unit_test(test_tensor_set_get_and_limits),
        cmocka_unit_test(test_tensor_new_zeroed),
        cmocka_unit_test(test_error_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
