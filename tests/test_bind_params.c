/* byocl_bind_params: parameters of @main become constants, in place of the old @main. */
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static const int64_t d3[] = {3};

static int param(byocl_function *fn, const char *name, byocl_dtype dtype)
{
    byocl_type t = byocl_type_tensor(dtype, 1, d3);
    int id = byocl_function_add_param(fn, name, &t, NULL);
    assert_true(id >= 0);
    return id;
}

static int call2(byocl_function *fn, const char *op, int a, int b)
{
    int args[] = {a, b};
    int id = byocl_function_add_call(fn, op, args, 2, NULL, NULL);
    assert_true(id >= 0);
    return id;
}

/* @helper(%h) = h * h;  @main(%x, %w, %b) = @helper(x * w) + b;  @other(%o) = relu(o).
 * Functions in that order, so that the test sees main keep its place. */
static byocl_module *build_module(void)
{
    byocl_error err = {0};
    byocl_module *m = byocl_module_new();
    byocl_function *helper = byocl_module_add_function(m, "helper", &err);
    byocl_function *fn = byocl_module_add_function(m, "main", &err);
    byocl_function *other = byocl_module_add_function(m, "other", &err);
    assert_non_null(other);

    int h = param(helper, "h", BYOCL_FLOAT32);
    assert_int_equal(byocl_function_set_body(helper, call2(helper, "multiply", h, h), &err),
                     BYOCL_OK);

    int x = param(fn, "x", BYOCL_FLOAT32);
    int w = param(fn, "w", BYOCL_FLOAT32);
    int b = param(fn, "b", BYOCL_FLOAT32);
    int xw = call2(fn, "multiply", x, w);
    int sq = byocl_function_add_call_global(fn, "helper", &xw, 1, &err);
    assert_int_equal(byocl_function_set_body(fn, call2(fn, "add", sq, b), &err), BYOCL_OK);
    byocl_attr primitive = {.key = "Primitive", .kind = BYOCL_ATTR_INT, .i = 1};
    assert_int_equal(byocl_function_set_attr(fn, &primitive, &err), BYOCL_OK);

    int o = param(other, "o", BYOCL_FLOAT32);
    int r = byocl_function_add_call(other, "nn.relu", &o, 1, NULL, &err);
    assert_int_equal(byocl_function_set_body(other, r, &err), BYOCL_OK);
    if (byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return m;
}

static byocl_tensor *vec(float a, float b, float c)
{
    const float v[] = {a, b, c};
    return ts_tensor_f32(1, d3, v);
}

static byocl_tensor *run1(const byocl_module *m, byocl_tensor **inputs, int n)
{
    byocl_tensor **outs = NULL;
    int n_outs = 0;
    byocl_error err = {0};
    if (byocl_reference_run(m, "main", inputs, n, &outs, &n_outs, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n_outs, 1);
    byocl_tensor *t = byocl_tensor_ref(outs[0]);
    byocl_tensors_free(outs, n_outs);
    return t;
}

static void test_bind_two_of_three(void **state)
{
    (void)state;
    byocl_module *m = build_module();
    byocl_tensor *x = vec(1, -2, 3), *w = vec(2, 0.5f, -1), *b = vec(10, 20, 30);
    byocl_tensor *before = run1(m, (byocl_tensor *[]){x, w, b}, 3);
    /* (x * w)^2 + b = [4, 1, 9] + [10, 20, 30] */
    const float want[] = {14, 21, 39};
    ts_assert_f32_close(before, want, 3, 0, 0);

    byocl_function *old_main = byocl_module_find(m, "main");
    int w_id = byocl_function_find_param(old_main, "w");
    int b_id = byocl_function_find_param(old_main, "b");
    const char *names[] = {"b", "w"};
    byocl_tensor *values[] = {b, w};
    byocl_error err = {0};
    if (byocl_bind_params(m, names, values, 2, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);

    /* @main keeps its name and its place between @helper and @other. */
    assert_int_equal(byocl_module_num_functions(m), 3);
    assert_string_equal(byocl_function_name(byocl_module_function_at(m, 0)), "helper");
    assert_string_equal(byocl_function_name(byocl_module_function_at(m, 1)), "main");
    assert_string_equal(byocl_function_name(byocl_module_function_at(m, 2)), "other");
    byocl_function *fn = byocl_module_find(m, "main");
    assert_ptr_equal(fn, byocl_module_function_at(m, 1));
    assert_int_equal(byocl_function_num_params(fn), 1);
    assert_string_equal(byocl_node_name(fn, byocl_function_param(fn, 0)), "x");
    assert_int_equal(byocl_function_find_param(fn, "w"), -1);
    /* The Vars became constants that share the bound tensors; node ids are unchanged. */
    assert_int_equal(byocl_node_kind_of(fn, w_id), BYOCL_NODE_CONSTANT);
    assert_int_equal(byocl_node_kind_of(fn, b_id), BYOCL_NODE_CONSTANT);
    assert_ptr_equal(byocl_node_value(fn, w_id), w);
    assert_ptr_equal(byocl_node_value(fn, b_id), b);
    assert_null(byocl_node_name(fn, w_id));
    /* Attributes, types and the return type survive; the module still verifies. */
    assert_int_equal(byocl_attrs_get_int(byocl_function_attrs(fn), "Primitive", 0), 1);
    char s[128];
    assert_string_equal(byocl_type_str(byocl_function_ret_type(fn), s, sizeof s),
                        "Tensor[(3), float32]");
    assert_int_equal(byocl_verify(m, true, &err), BYOCL_OK);
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_OK);

    byocl_tensor *after = run1(m, (byocl_tensor *[]){x}, 1);
    assert_true(byocl_tensor_equal(before, after));
    byocl_tensor_unref(after);

    /* The printed module shows main with one parameter and the constants as meta. */
    char *text = byocl_text_print(m, NULL, NULL, &err);
    if (!text)
        fail_msg("%s", err.msg);
    ts_assert_contains(text, "def @main(%x: Tensor[(3), float32]");
    ts_assert_contains(text, "meta[relay.Constant][0]");
    free(text);

    byocl_tensor_unref(before);
    byocl_tensor_unref(x);
    byocl_tensor_unref(w);
    byocl_tensor_unref(b);
    byocl_module_free(m);
}

static void test_bind_all_and_none(void **state)
{
    (void)state;
    byocl_module *m = build_module();
    byocl_tensor *x = vec(1, 2, 3), *w = vec(1, 1, 1), *b = vec(0, 0, -1);
    byocl_error err = {0};
    assert_int_equal(byocl_bind_params(m, NULL, NULL, 0, &err), BYOCL_OK);
    assert_int_equal(byocl_function_num_params(byocl_module_find(m, "main")), 3);

    const char *names[] = {"x", "w", "b"};
    byocl_tensor *values[] = {x, w, b};
    assert_int_equal(byocl_bind_params(m, names, values, 3, &err), BYOCL_OK);
    assert_int_equal(byocl_function_num_params(byocl_module_find(m, "main")), 0);
    byocl_tensor *out = run1(m, NULL, 0);
    const float want[] = {1, 4, 8};
    ts_assert_f32_close(out, want, 3, 0, 0);
    byocl_tensor_unref(out);
    byocl_tensor_unref(x);
    byocl_tensor_unref(w);
    byocl_tensor_unref(b);
    byocl_module_free(m);
}

/* Remaining parameters keep their order. */
static void test_parameter_order_kept(void **state)
{
    (void)state;
    byocl_error err = {0};
    byocl_module *m = byocl_module_new();
    byocl_function *fn = byocl_module_add_function(m, "main", &err);
    int a = param(fn, "a", BYOCL_FLOAT32);
    int b = param(fn, "b", BYOCL_FLOAT32);
    int c = param(fn, "c", BYOCL_FLOAT32);
    int d = param(fn, "d", BYOCL_FLOAT32);
    int s = call2(fn, "subtract", call2(fn, "subtract", d, c), call2(fn, "subtract", b, a));
    assert_int_equal(byocl_function_set_body(fn, s, &err), BYOCL_OK);
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_OK);
    byocl_tensor *bt = vec(1, 2, 3);
    const char *names[] = {"b"};
    assert_int_equal(byocl_bind_params(m, names, &bt, 1, &err), BYOCL_OK);
    fn = byocl_module_find(m, "main");
    assert_int_equal(byocl_function_num_params(fn), 3);
    assert_string_equal(byocl_node_name(fn, byocl_function_param(fn, 0)), "a");
    assert_string_equal(byocl_node_name(fn, byocl_function_param(fn, 1)), "c");
    assert_string_equal(byocl_node_name(fn, byocl_function_param(fn, 2)), "d");
    byocl_tensor *av = vec(1, 1, 1), *cv = vec(0, 0, 0), *dv = vec(5, 5, 5);
    byocl_tensor *out = run1(m, (byocl_tensor *[]){av, cv, dv}, 3);
    /* (d - c) - (b - a) = 5 - [0, 1, 2] */
    const float want[] = {5, 4, 3};
    ts_assert_f32_close(out, want, 3, 0, 0);
    byocl_tensor_unref(out);
    byocl_tensor_unref(av);
    byocl_tensor_unref(cv);
    byocl_tensor_unref(dv);
    byocl_tensor_unref(bt);
    byocl_module_free(m);
}

static void expect_bind_error(byocl_module *m, const char *name, byocl_tensor *t,
                              byocl_status status, const char *msg)
{
    byocl_error err = {0};
    assert_int_equal(byocl_bind_params(m, &name, &t, 1, &err), status);
    assert_string_equal(err.msg, msg);
}

static void test_errors_leave_module_unchanged(void **state)
{
    (void)state;
    byocl_module *m = build_module();
    byocl_function *fn = byocl_module_find(m, "main");
    byocl_tensor *good = vec(1, 2, 3);
    const int64_t d4[] = {4};
    byocl_tensor *long_vec = ts_tensor_f32(1, d4, NULL);
    byocl_shape s3 = byocl_shape_make(1, d3);
    byocl_tensor *ints = byocl_tensor_new(BYOCL_INT32, &s3, NULL);

    expect_bind_error(m, "weight", good, BYOCL_ERR_NOT_FOUND,
                      "@main has no parameter %weight (its parameters: %x, %w, %b)");
    expect_bind_error(m, "w", long_vec, BYOCL_ERR_TYPE,
                      "parameter %w of @main: expected Tensor[(3), float32], got "
                      "Tensor[(4), float32]");
    expect_bind_error(m, "w", ints, BYOCL_ERR_TYPE,
                      "parameter %w of @main: expected Tensor[(3), float32], got "
                      "Tensor[(3), int32]");
    expect_bind_error(m, "w", NULL, BYOCL_ERR_INVALID, "binding 0 has no tensor");

    byocl_error err = {0};
    const char *twice[] = {"w", "x", "w"};
    byocl_tensor *vals[] = {good, good, good};
    assert_int_equal(byocl_bind_params(m, twice, vals, 3, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "parameter %w is bound twice");
    /* A valid binding before the bad one is not applied either. */
    const char *mixed[] = {"x", "nope"};
    assert_int_equal(byocl_bind_params(m, mixed, vals, 2, &err), BYOCL_ERR_NOT_FOUND);

    assert_ptr_equal(byocl_module_find(m, "main"), fn);
    assert_int_equal(byocl_module_num_functions(m), 3);
    assert_int_equal(byocl_function_num_params(fn), 3);

    byocl_module *empty = byocl_module_new();
    expect_bind_error(empty, "x", good, BYOCL_ERR_NOT_FOUND, "no function @main in the module");
    byocl_module_free(empty);

    byocl_tensor_unref(good);
    byocl_tensor_unref(long_vec);
    byocl_tensor_unref(ints);
    byocl_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_two_of_three),
        cmocka_unit_test(test_bind_all_and_none),
        cmocka_unit_test(test_parameter_order_kept),
        cmocka_unit_test(test_errors_leave_module_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
