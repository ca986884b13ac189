/* The reference executor: small modules built with the builder API, run on host memory,
 * compared with values computed by hand (the comments show the arithmetic). */
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "ir/ir_impl.h"

/* ------------------------------------------------------------ helpers */

static byocl_function *new_fn(byocl_module *m, const char *name)
{
    byocl_error err = {0};
    byocl_function *fn = byocl_module_add_function(m, name, &err);
    if (!fn)
        fail_msg("%s", err.msg);
    return fn;
}

static int param(byocl_function *fn, const char *name, byocl_dtype dtype, int rank,
                 const int64_t *dims)
{
    byocl_error err = {0};
    byocl_type t = byocl_type_tensor(dtype, rank, dims);
    int id = byocl_function_add_param(fn, name, &t, &err);
    if (id < 0)
        fail_msg("%s", err.msg);
    return id;
}

static int call(byocl_function *fn, const char *op, const int *args, int n, const char *attrs)
{
    byocl_error err = {0};
    int id = byocl_function_add_call_str(fn, op, args, n, attrs, &err);
    if (id < 0)
        fail_msg("%s: %s", op, err.msg);
    return id;
}

static int call2(byocl_function *fn, const char *op, int a, int b)
{
    int args[] = {a, b};
    return call(fn, op, args, 2, NULL);
}

static int call1(byocl_function *fn, const char *op, int a, const char *attrs)
{
    return call(fn, op, &a, 1, attrs);
}

static int constant_f32(byocl_function *fn, int rank, const int64_t *dims, const float *v)
{
    byocl_tensor *t = ts_tensor_f32(rank, dims, v);
    int id = byocl_function_add_constant(fn, t, NULL);
    byocl_tensor_unref(t);
    assert_true(id >= 0);
    return id;
}

static int tuple(byocl_function *fn, const int *fields, int n)
{
    int id = byocl_function_add_tuple(fn, fields, n, NULL);
    assert_true(id >= 0);
    return id;
}

static int getitem(byocl_function *fn, int t, int index)
{
    int id = byocl_function_add_getitem(fn, t, index, NULL);
    assert_true(id >= 0);
    return id;
}

static void finish(byocl_module *m, byocl_function *fn, int body)
{
    byocl_error err = {0};
    assert_int_equal(byocl_function_set_body(fn, body, &err), BYOCL_OK);
    if (m && byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
}

/* Runs `fn_name` and returns the outputs (asserting success and the count). */
static byocl_tensor **run_ok(const byocl_module *m, const char *fn_name, byocl_tensor **inputs,
                             int n_inputs, int want_outputs)
{
    byocl_tensor **outs = NULL;
    int n_outs = -1;
    byocl_error err = {0};
    if (byocl_reference_run(m, fn_name, inputs, n_inputs, &outs, &n_outs, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n_outs, want_outputs);
    return outs;
}

static void run_fails(const byocl_module *m, const char *fn_name, byocl_tensor **inputs,
                      int n_inputs, byocl_status status, const char *msg)
{
    byocl_tensor **outs = (byocl_tensor **)0x1;
    int n_outs = -1;
    byocl_error err = {0};
    assert_int_equal(byocl_reference_run(m, fn_name, inputs, n_inputs, &outs, &n_outs, &err),
                     status);
    assert_string_equal(err.msg, msg);
    assert_null(outs);
    assert_int_equal(n_outs, 0);
}

static const int64_t d2x3[] = {2, 3};
static const int64_t d3[] = {3};
static const int64_t d2[] = {2};

/* @main(%x, %y: Tensor[(2), int32]), whose body the caller builds, then
 * @f(%a, %b: Tensor[(2), int32]) = a / b + a, a callee whose division can fail. */
static byocl_module *module_with_divide_callee(byocl_function **main_fn, int *x, int *y)
{
    byocl_module *m = byocl_module_new();
    *main_fn = new_fn(m, "main");
    byocl_function *f = new_fn(m, "f");
    int a = param(f, "a", BYOCL_INT32, 1, d2);
    int b = param(f, "b", BYOCL_INT32, 1, d2);
    finish(NULL, f, call2(f, "add", call2(f, "divide", a, b), a));
    *x = param(*main_fn, "x", BYOCL_INT32, 1, d2);
    *y = param(*main_fn, "y", BYOCL_INT32, 1, d2);
    return m;
}

static byocl_tensor *int32_pair(int32_t v0, int32_t v1)
{
    byocl_shape s = byocl_shape_make(1, d2);
    byocl_tensor *t = byocl_tensor_from_data(BYOCL_INT32, &s, (const int32_t[]){v0, v1}, NULL);
    assert_non_null(t);
    return t;
}

/* --------------------------------------------------------------- tests */

/* main(%x, %y) = relu(((x + y) * x) - 10), through annotation markers. */
static void test_chain(void **state)
{
    (void)state;
    byocl_module *m = byocl_module_new();
    byocl_function *fn = new_fn(m, "main");
    int x = param(fn, "x", BYOCL_FLOAT32, 2, d2x3);
    int y = param(fn, "y", BYOCL_FLOAT32, 2, d2x3);
    int bx = call1(fn, "annotation.compiler_begin", x, "compiler=\"opencl\"");
    int sum = call2(fn, "add", bx, y);
    int esum = call1(fn, "annotation.compiler_end", sum, "compiler=\"opencl\"");
    int prod = call2(fn, "multiply", esum, x);
    int ten = byocl_function_add_scalar(fn, BYOCL_FLOAT32, 10.0, NULL);
    int diff = call2(fn, "subtract", prod, ten);
    finish(m, fn, call1(fn, "nn.relu", diff, NULL));

    const float xv[] = {1, -2, 3, -4, 5, -6};
    const float yv[] = {0.5f, 0.5f, -1, 1, 2, -2};
    byocl_tensor *in[] = {ts_tensor_f32(2, d2x3, xv), ts_tensor_f32(2, d2x3, yv)};
    byocl_tensor **out = run_ok(m, "main", in, 2, 1);
    /* x + y = [1.5, -1.5, 2, -3, 7, -8]; * x = [1.5, 3, 6, 12, 35, 48]; - 10; relu */
    const float want[] = {0, 0, 0, 2, 25, 38};
    ts_assert_f32_close(out[0], want, 6, 0, 0);
    assert_int_equal(byocl_tensor_shape(out[0])->rank, 2);
    byocl_tensors_free(out, 1);
    /* NULL fn_name runs @main; the inputs are left untouched. */
    out = run_ok(m, NULL, in, 2, 1);
    ts_assert_f32_close(out[0], want, 6, 0, 0);
    ts_assert_f32_close(in[0], xv, 6, 0, 0);
    byocl_tensors_free(out, 1);
    byocl_tensor_unref(in[0]);
    byocl_tensor_unref(in[1]);
    byocl_module_free(m);
}

/* A tuple result is flattened, nested tuples included; getitem picks fields. */
static void test_tuple_results(void **state)
{
    (void)state;
    byocl_module *m = byocl_module_new();
    byocl_function *fn = new_fn(m, "main");
    int x = param(fn, "x", BYOCL_FLOAT32, 1, d3);
    int y = param(fn, "y", BYOCL_FLOAT32, 1, d3);
    int sum = call2(fn, "add", x, y);
    int relu = call1(fn, "nn.relu", sum, NULL);
    int inner_fields[] = {relu, y};
    int inner = tuple(fn, inner_fields, 2);
    int outer_fields[] = {sum, x, inner};
    int outer = tuple(fn, outer_fields, 3);
    /* (x + y, x, (relu(x + y), y)) and also ((outer.2).0) * x via a second function */
    finish(m, fn, outer);

    byocl_function *pick = new_fn(m, "pick");
    int px = param(pick, "x", BYOCL_FLOAT32, 1, d3);
    int py = param(pick, "y", BYOCL_FLOAT32, 1, d3);
    int t = byocl_function_add_call_global(pick, "main", (int[]){px, py}, 2, NULL);
    int relu_again = getitem(pick, getitem(pick, t, 2), 0);
    /* concatenate takes a tuple argument: its tensors reach the kernel flattened */
    int cat_fields[] = {relu_again, px};
    int cat = call1(pick, "concatenate", tuple(pick, cat_fields, 2), "axis=0");
    finish(m, pick, cat);

    const float xv[] = {1, -2, 3};
    const float yv[] = {-4, 0.5f, 2};
    byocl_tensor *in[] = {ts_tensor_f32(1, d3, xv), ts_tensor_f32(1, d3, yv)};
    byocl_tensor **out = run_ok(m, "main", in, 2, 4);
    const float sum_v[] = {-3, -1.5f, 5};
    const float relu_v[] = {0, 0, 5};
    ts_assert_f32_close(out[0], sum_v, 3, 0, 0);
    ts_assert_f32_close(out[1], xv, 3, 0, 0);
    ts_assert_f32_close(out[2], relu_v, 3, 0, 0);
    ts_assert_f32_close(out[3], yv, 3, 0, 0);
    byocl_tensors_free(out, 4);

    out = run_ok(m, "pick", in, 2, 1);
    const float cat_v[] = {0, 0, 5, 1, -2, 3};
    ts_assert_f32_close(out[0], cat_v, 6, 0, 0);
    assert_int_equal(byocl_tensor_shape(out[0])->dims[0], 6);
    byocl_tensors_free(out, 1);
    byocl_tensor_unref(in[0]);
    byocl_tensor_unref(in[1]);
    byocl_module_free(m);
}

/* @main calls @scale_shift (defined after it), which returns a tuple, and @twice, which
 * itself calls @scale_shift. */
static void test_call_global_function(void **state)
{
    (void)state;
    byocl_module *m = byocl_module_new();
    byocl_function *fn = new_fn(m, "main");
    byocl_function *ss = new_fn(m, "scale_shift");
    byocl_function *tw = new_fn(m, "twice");

    /* @scale_shift(%a, %b) = (a * b, a * b + b) */
    int a = param(ss, "a", BYOCL_FLOAT32, 1, d3);
    int b = param(ss, "b", BYOCL_FLOAT32, 1, d3);
    int ab = call2(ss, "multiply", a, b);
    int fields[] = {ab, call2(ss, "add", ab, b)};
    finish(NULL, ss, tuple(ss, fields, 2));

    /* @twice(%p) = @scale_shift(%p, %p).1 * 2 */
    int p = param(tw, "p", BYOCL_FLOAT32, 1, d3);
    int r = byocl_function_add_call_global(tw, "scale_shift", (int[]){p, p}, 2, NULL);
    int two = byocl_function_add_scalar(tw, BYOCL_FLOAT32, 2.0, NULL);
    finish(NULL, tw, call2(tw, "multiply", getitem(tw, r, 1), two));

    /* @main(%x) = (@scale_shift(%x, c).1 * @scale_shift(%x, c).0, @twice(%x)) */
    int x = param(fn, "x", BYOCL_FLOAT32, 1, d3);
    const float cv[] = {1, 2, 3};
    int c = constant_f32(fn, 1, d3, cv);
    int s = byocl_function_add_call_global(fn, "scale_shift", (int[]){x, c}, 2, NULL);
    int prod = call2(fn, "multiply", getitem(fn, s, 1), getitem(fn, s, 0));
    int t = byocl_function_add_call_global(fn, "twice", &x, 1, NULL);
    int outs[] = {prod, t};
    finish(m, fn, tuple(fn, outs, 2));

    const float xv[] = {2, -1, 0.5f};
    byocl_tensor *in[] = {ts_tensor_f32(1, d3, xv)};
    byocl_tensor **out = run_ok(m, "main", in, 1, 2);
    /* x * c = [2, -2, 1.5]; + c = [3, 0, 4.5]; product = [6, -0, 6.75] */
    const float want0[] = {6, 0, 6.75f};
    /* twice: x * x + x = [6, 0, 0.75]; * 2 */
    const float want1[] = {12, 0, 1.5f};
    ts_assert_f32_close(out[0], want0, 3, 0, 0);
    ts_assert_f32_close(out[1], want1, 3, 0, 0);
    byocl_tensors_free(out, 2);

    /* A callee runs on its own, too. */
    byocl_tensor *ss_in[] = {in[0], in[0]};
    out = run_ok(m, "scale_shift", ss_in, 2, 2);
    const float sq[] = {4, 1, 0.25f}, sq_plus[] = {6, 0, 0.75f};
    ts_assert_f32_close(out[0], sq, 3, 0, 0);
    ts_assert_f32_close(out[1], sq_plus, 3, 0, 0);
    byocl_tensors_free(out, 2);
    byocl_tensor_unref(in[0]);
    byocl_module_free(m);
}

/* nn.batch_norm's 3-tuple: (normalized, moving mean, moving var), the thread's pattern. */
static void test_batch_norm_tuple(void **state)
{
    (void)state;
    byocl_module *m = byocl_module_new();
    byocl_function *fn = new_fn(m, "main");
    const int64_t dims[] = {1, 2, 1, 2};
    int x = param(fn, "x", BYOCL_FLOAT32, 4, dims);
    const float gamma[] = {2, 0.5f}, beta[] = {0.1f, -1}, mean[] = {2, 1}, var[] = {4, 0.25f};
    int args[] = {x, constant_f32(fn, 1, d2, gamma), constant_f32(fn, 1, d2, beta),
                  constant_f32(fn, 1, d2, mean), constant_f32(fn, 1, d2, var)};
    int bn = call(fn, "nn.batch_norm", args, 5, "epsilon=1e-05f");
    int fields[] = {call1(fn, "nn.relu", getitem(fn, bn, 0), NULL), getitem(fn, bn, 1),
                    getitem(fn, bn, 2)};
    finish(m, fn, tuple(fn, fields, 3));

    const float xv[] = {1, 3, -2, 6};
    byocl_tensor *in[] = {ts_tensor_f32(4, dims, xv)};
    byocl_tensor **out = run_ok(m, "main", in, 1, 3);
    /* (x - mean) / sqrt(var + 1e-5) * gamma + beta, per channel:
     *   c0: (1 - 2) / 2.0000025 * 2 + 0.1 = -0.89999875, (3 - 2) ... = 1.09999875
     *   c1: (-2 - 1) / 0.50001 * 0.5 - 1 = -3.99994,      (6 - 1) ... = 3.9999
     * then relu. */
    const float want[] = {0, 1.09999875f, 0, 3.9999f};
    ts_assert_f32_close(out[0], want, 4, 1e-6, 1e-6);
    ts_assert_f32_close(out[1], mean, 2, 0, 0);
    ts_assert_f32_close(out[2], var, 2, 0, 0);
    byocl_tensors_free(out, 3);
    byocl_tensor_unref(in[0]);
    byocl_module_free(m);
}

static void test_input_errors(void **state)
{
    (void)state;
    byocl_module *m = byocl_module_new();
    byocl_function *fn = new_fn(m, "main");
    int x = param(fn, "x", BYOCL_FLOAT32, 2, d2x3);
    int w = param(fn, "w", BYOCL_FLOAT32, 1, d3);
    finish(m, fn, call(fn, "nn.bias_add", (int[]){x, w}, 2, "axis=1"));

    byocl_tensor *good_x = ts_tensor_f32(2, d2x3, NULL);
    const int64_t d4[] = {4};
    byocl_tensor *bad_w = ts_tensor_f32(1, d4, NULL);
    byocl_shape s = byocl_shape_make(2, d2x3);
    byocl_tensor *int_x = byocl_tensor_new(BYOCL_INT32, &s, NULL);
    byocl_tensor *good_w = ts_tensor_f32(1, d3, NULL);

    run_fails(m, "main", (byocl_tensor *[]){good_x, bad_w}, 2, BYOCL_ERR_TYPE,
              "input 1 (%w) of @main: expected Tensor[(3), float32], got Tensor[(4), float32]");
    run_fails(m, "main", (byocl_tensor *[]){int_x, good_w}, 2, BYOCL_ERR_TYPE,
              "input 0 (%x) of @main: expected Tensor[(2, 3), float32], got Tensor[(2, 3), int32]");
    run_fails(m, "main", (byocl_tensor *[]){good_x}, 1, BYOCL_ERR_INVALID,
              "@main takes 2 inputs, got 1");
    run_fails(m, "main", (byocl_tensor *[]){good_x, NULL}, 2, BYOCL_ERR_INVALID,
              "input 1 (%w) of @main is missing");
    run_fails(m, "nope", NULL, 0, BYOCL_ERR_NOT_FOUND, "no function @nope in the module");

    byocl_tensor **out = run_ok(m, "main", (byocl_tensor *[]){good_x, good_w}, 2, 1);
    byocl_tensors_free(out, 1);
    byocl_tensors_free(NULL, 0);
    byocl_tensor_unref(good_x);
    byocl_tensor_unref(bad_w);
    byocl_tensor_unref(int_x);
    byocl_tensor_unref(good_w);
    byocl_module_free(m);
}

/* A kernel's error names the function, the node as `byocl print` numbers it, and the op;
 * an error inside a callee says both where it was called and where it failed. */
static void test_kernel_error_location(void **state)
{
    (void)state;
    byocl_function *fn;
    int x, y;
    byocl_module *m = module_with_divide_callee(&fn, &x, &y);
    int dead = call2(fn, "divide", y, x); /* unused: never runs */
    (void)dead;
    int sum = call2(fn, "add", x, y);
    int quot = call2(fn, "divide", sum, y);
    int via_f = byocl_function_add_call_global(fn, "f", (int[]){quot, y}, 2, NULL);
    finish(m, fn, call2(fn, "multiply", via_f, x));

    byocl_tensor *xt = int32_pair(7, -9), *yt = int32_pair(2, 0);
    int32_t *yv = byocl_tensor_data(yt);
    /* %0 is the dead divide, %1 the add, %2 the divide that fails on element 1. */
    run_fails(m, "main", (byocl_tensor *[]){xt, yt}, 2, BYOCL_ERR_RUNTIME,
              "in @main, %2 (divide): divide: integer division by zero at output element 1");

    /* With non-zero divisors the run succeeds. */
    yv[1] = 3;
    byocl_tensor **out = run_ok(m, "main", (byocl_tensor *[]){xt, yt}, 2, 1);
    /* sum = [9, -6]; quot = [4, -2]; f: quot / y + quot = [2 + 4, 0 + -2] = [6, -2] (int
     * division truncates toward zero); * x = [42, 18] */
    const int32_t *o = byocl_tensor_cdata(out[0]);
    assert_int_equal(o[0], 42);
    assert_int_equal(o[1], 18);
    byocl_tensors_free(out, 1);

    /* Make only @f's division fail: call it directly with b = [2, 0]. */
    yv[1] = 0;
    run_fails(m, "f", (byocl_tensor *[]){xt, yt}, 2, BYOCL_ERR_RUNTIME,
              "in @f, %0 (divide): divide: integer division by zero at output element 1");
    byocl_tensor_unref(xt);
    byocl_tensor_unref(yt);
    byocl_module_free(m);
}

/* An error inside a callee is prefixed by the call site too. */
static void test_error_inside_callee(void **state)
{
    (void)state;
    byocl_function *fn;
    int x, y;
    byocl_module *m = module_with_divide_callee(&fn, &x, &y);
    int r = byocl_function_add_call_global(fn, "f", (int[]){x, y}, 2, NULL);
    finish(m, fn, call2(fn, "add", r, y));

    byocl_tensor *xt = int32_pair(0, 0), *yt = int32_pair(1, 0);
    run_fails(m, "main", (byocl_tensor *[]){xt, yt}, 2, BYOCL_ERR_RUNTIME,
              "in @main, %0 (@f): in @f, %0 (divide): divide: integer division by zero at "
              "output element 1");
    byocl_tensor_unref(xt);
    byocl_tensor_unref(yt);
    byocl_module_free(m);
}

static void test_untyped_and_recursive_modules(void **state)
{
    (void)state;
    byocl_module *m = byocl_module_new();
    byocl_function *fn = new_fn(m, "main");
    int x = param(fn, "x", BYOCL_FLOAT32, 1, d3);
    finish(NULL, fn, call1(fn, "nn.relu", call2(fn, "add", x, x), NULL));
    byocl_tensor *in[] = {ts_tensor_f32(1, d3, NULL)};
    run_fails(m, "main", in, 1, BYOCL_ERR_TYPE,
              "in @main, %0 (add): no inferred type (run byocl_infer_types before running)");
    byocl_module_free(m);

    /* @f calls itself. Type inference and the verifier refuse this; the executor must not
     * recurse forever on a module that skipped them (types set by hand). */
    m = byocl_module_new();
    byocl_function *f = new_fn(m, "f");
    int a = param(f, "a", BYOCL_FLOAT32, 1, d3);
    int self = byocl_function_add_call_global(f, "f", &a, 1, NULL);
    finish(NULL, f, self);
    f->nodes[self].type = f->nodes[a].type;
    run_fails(m, "f", in, 1, BYOCL_ERR_INVALID, "in @f, the result (@f): recursive call of @f");
    byocl_tensor_unref(in[0]);
    byocl_module_free(m);
}

/* A function that returns a parameter or a constant gives references to them. */
static void test_identity_and_constant_results(void **state)
{
    (void)state;
    byocl_module *m = byocl_module_new();
    byocl_function *fn = new_fn(m, "main");
    int x = param(fn, "x", BYOCL_FLOAT32, 1, d3);
    const float cv[] = {4, 5, 6};
    int fields[] = {x, constant_f32(fn, 1, d3, cv)};
    finish(m, fn, tuple(fn, fields, 2));
    const float xv[] = {1, 2, 3};
    byocl_tensor *in[] = {ts_tensor_f32(1, d3, xv)};
    byocl_tensor **out = run_ok(m, "main", in, 1, 2);
    ts_assert_f32_close(out[0], xv, 3, 0, 0);
    ts_assert_f32_close(out[1], cv, 3, 0, 0);
    byocl_tensors_free(out, 2);
    byocl_tensor_unref(in[0]);
    byocl_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_tuple_results),
        cmocka_unit_test(test_call_global_function),
        cmocka_unit_test(test_batch_norm_tuple),
        cmocka_unit_test(test_input_errors),
        cmocka_unit_test(test_kernel_error_location),
        cmocka_unit_test(test_error_inside_callee),
        cmocka_unit_test(test_untyped_and_recursive_modules),
        cmocka_unit_test(test_identity_and_constant_results),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
