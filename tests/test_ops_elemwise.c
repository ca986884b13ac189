/* Op group "elemwise": type relations and reference kernels of add ... cast, power,
 * the comparisons, the logical ops, where, negative, log, sqrt, rsqrt and erf, checked
 * against numpy (tests/gen/gen_ops_elemwise.py), and their error messages. */
#include "ops_case.h"

#include "fixtures/ops/elemwise_cases.h"

/* Type-checks op(a, b) and expects the relation's exact message. */
static void expect_binary_error(const char *op, byocl_type a, byocl_type b, const char *reason)
{
    byocl_type types[2] = {a, b};
    op_expect_type_error(op, types, 2, "", BYOCL_ERR_TYPE, reason);
}

static void test_broadcast_errors(void **state)
{
    (void)state;
    expect_binary_error("add", OP_TYPE(BYOCL_FLOAT32, 2, 3), OP_TYPE(BYOCL_FLOAT32, 4, 3),
                        "cannot broadcast shapes (2, 3) and (4, 3): dimension 0 is 2 vs 4");
    expect_binary_error("multiply", OP_TYPE(BYOCL_INT8, 3), OP_TYPE(BYOCL_INT8, 4),
                        "cannot broadcast shapes (3) and (4): dimension 0 is 3 vs 4");
    /* dimensions are counted in the result's rank, aligned at the end */
    expect_binary_error("maximum", OP_TYPE(BYOCL_FLOAT32, 2, 3, 4), OP_TYPE(BYOCL_FLOAT32, 3, 3),
                        "cannot broadcast shapes (2, 3, 4) and (3, 3): dimension 2 is 4 vs 3");
}

static void test_dtype_errors(void **state)
{
    (void)state;
    const char *binary[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};
    for (int i = 0; i < N_ITEMS(binary); i++)
        expect_binary_error(binary[i], OP_TYPE(BYOCL_FLOAT32, 2), OP_TYPE(BYOCL_INT32, 2),
                            "argument dtypes differ: float32 and int32");
    expect_binary_error("add", OP_TYPE(BYOCL_FLOAT16, 2), byocl_type_tensor(BYOCL_FLOAT32, 0, NULL),
                        "argument dtypes differ: float16 and float32");

    const char *float_only[] = {"exp", "sigmoid", "tanh", "log", "sqrt", "rsqrt", "erf"};
    byocl_type ints = OP_TYPE(BYOCL_INT32, 2);
    for (int i = 0; i < N_ITEMS(float_only); i++)
        op_expect_type_error(float_only[i], &ints, 1, "", BYOCL_ERR_TYPE,
                             "needs a float dtype (float32, float16, float64 or bfloat16), got int32");
    expect_binary_error("power", OP_TYPE(BYOCL_INT64, 2), OP_TYPE(BYOCL_INT64, 1),
                        "needs a float dtype (float32, float16, float64 or bfloat16), got int64");
    expect_binary_error("power", OP_TYPE(BYOCL_FLOAT32, 2), OP_TYPE(BYOCL_INT32, 1),
                        "argument dtypes differ: float32 and int32");

    /* comparisons: like dtypes; their result is bool */
    const char *compare[] = {"equal", "not_equal", "less", "greater", "less_equal",
                             "greater_equal"};
    for (int i = 0; i < N_ITEMS(compare); i++)
        expect_binary_error(compare[i], OP_TYPE(BYOCL_FLOAT32, 2), OP_TYPE(BYOCL_FLOAT16, 2),
                            "argument dtypes differ: float32 and float16");
    const char *logical[] = {"logical_and", "logical_or", "logical_xor"};
    for (int i = 0; i < N_ITEMS(logical); i++)
        expect_binary_error(logical[i], OP_TYPE(BYOCL_INT8, 2), OP_TYPE(BYOCL_INT8, 2),
                            "the arguments must be bool, got int8");
    byocl_type f = OP_TYPE(BYOCL_FLOAT32, 2);
    op_expect_type_error("logical_not", &f, 1, "", BYOCL_ERR_TYPE,
                         "the argument must be bool, got float32");
}

/* where(condition, x, y): a bool condition, x and y alike, all three broadcast. */
static void test_where_errors(void **state)
{
    (void)state;
    byocl_type t[3] = {OP_TYPE(BYOCL_INT8, 2), OP_TYPE(BYOCL_FLOAT32, 2),
                       OP_TYPE(BYOCL_FLOAT32, 2)};
    op_expect_type_error("where", t, 3, "", BYOCL_ERR_TYPE,
                         "the condition (argument 0) must be bool, got int8");
    t[0] = OP_TYPE(BYOCL_BOOL, 2);
    t[2] = OP_TYPE(BYOCL_INT32, 2);
    op_expect_type_error("where", t, 3, "", BYOCL_ERR_TYPE,
                         "x and y dtypes differ: float32 and int32");
    t[1] = OP_TYPE(BYOCL_INT32, 3, 1);
    t[2] = OP_TYPE(BYOCL_INT32, 4);
    op_expect_type_error("where", t, 3, "", BYOCL_ERR_TYPE,
                         "cannot broadcast shapes (2) and (3, 4): dimension 1 is 2 vs 4");
    t[0] = OP_TYPE(BYOCL_BOOL, 1, 5);
    op_expect_type_error("where", t, 3, "", BYOCL_ERR_TYPE,
                         "cannot broadcast shapes (1, 5) and (3, 4): dimension 1 is 5 vs 4");
    byocl_type one = OP_TYPE(BYOCL_BOOL, 2);
    op_expect_build_error("where", &one, 1, "", BYOCL_ERR_INVALID,
                          "where takes 3 arguments but was given 1");
}

/* add(%a, (%a, %b)): the second argument is a tuple. */
static void test_tuple_argument_error(void **state)
{
    (void)state;
    byocl_type t = OP_TYPE(BYOCL_FLOAT32, 2);
    byocl_error err = {0};
    byocl_module *m = byocl_module_new();
    byocl_function *fn = byocl_module_add_function(m, "main", &err);
    int a = byocl_function_add_param(fn, "a", &t, &err);
    int b = byocl_function_add_param(fn, "b", &t, &err);
    int pair[] = {a, b};
    int tuple = byocl_function_add_tuple(fn, pair, 2, &err);
    int args[] = {a, tuple};
    int call = byocl_function_add_call(fn, "add", args, 2, NULL, &err);
    assert_true(call >= 0);
    assert_int_equal(byocl_function_set_body(fn, call, &err), BYOCL_OK);
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_ERR_TYPE);
    ts_assert_contains(err.msg, "(add): argument 1 must be a tensor, got "
                                "(Tensor[(2), float32], Tensor[(2), float32])");
    byocl_module_free(m);
}

/* Attribute errors surface when the call is built. */
static void expect_build_error(const char *op, const char *attrs, const char *msg)
{
    byocl_type t = OP_TYPE(BYOCL_FLOAT32, 2);
    op_expect_build_error(op, &t, 1, attrs, BYOCL_ERR_INVALID, msg);
}

static void test_attribute_errors(void **state)
{
    (void)state;
    expect_build_error("cast", "dtype=\"float128\"",
                       "bad value for attribute 'dtype' of cast: unknown dtype \"float128\" "
                       "(expected one of float32, float16, int32, int64, int8, uint8, bool, float64, "
                       "int16, uint16, uint32, uint64, bfloat16)");
    expect_build_error("cast", "", "cast requires attribute 'dtype'");
    expect_build_error("cast", "dtype=3",
                       "bad value for attribute 'dtype' of cast: expected a string, got 3");
    expect_build_error("clip", "a_min=0f", "clip requires attribute 'a_max'");
    expect_build_error("clip", "a_min=2f, a_max=1f",
                       "bad values for attributes of clip: a_min (2) is greater than a_max (1)");
    expect_build_error("abs", "axis=1", "abs takes no attributes, but was given 'axis'");
    expect_build_error("add", "", "add takes 2 arguments but was given 1");
}

/* a_min and a_max are FLOAT attributes; integer literals are accepted as floats. */
static void test_clip_accepts_int_literals(void **state)
{
    (void)state;
    int64_t d3[] = {3};
    byocl_type t = byocl_type_tensor(BYOCL_FLOAT32, 1, d3);
    op_case c;
    op_case_build(&c, "clip", &t, 1, false, "a_min=0, a_max=6");
    assert_int_equal(c.status, BYOCL_OK);
    float x[] = {-1, 3, 9}, want[] = {0, 3, 6};
    byocl_tensor *in = ts_tensor_f32(1, d3, x), *out[1];
    int n_out;
    assert_int_equal(op_case_run(&c, &in, 1, out, 1, &n_out, NULL), BYOCL_OK);
    ts_assert_f32_close(out[0], want, 3, 0, 0);
    op_tensors_free(out, 1);
    byocl_tensor_unref(in);
    op_case_free(&c);
}

static void test_integer_divide_by_zero(void **state)
{
    (void)state;
    int64_t d3[] = {3}, d1[] = {1};
    const struct {
        byocl_dtype dtype;
        int64_t b_dims;
        const char *msg;
    } cases[] = {
        {BYOCL_INT32, 3, "divide: integer division by zero at output element 1"},
        {BYOCL_INT8, 1, "divide: integer division by zero at output element 0"},
        {BYOCL_UINT8, 3, "divide: integer division by zero at output element 1"},
        {BYOCL_INT64, 3, "divide: integer division by zero at output element 1"},
    };
    for (int i = 0; i < 4; i++) {
        const int64_t *b_dims = cases[i].b_dims == 3 ? d3 : d1;
        byocl_type types[2] = {byocl_type_tensor(cases[i].dtype, 1, d3),
                               byocl_type_tensor(cases[i].dtype, 1, b_dims)};
        op_case c;
        op_case_build(&c, "divide", types, 2, false, "");
        assert_int_equal(c.status, BYOCL_OK);
        byocl_shape sa = byocl_shape_make(1, d3), sb = types[1].shape;
        byocl_tensor *in[2] = {byocl_tensor_new(cases[i].dtype, &sa, NULL),
                               byocl_tensor_new(cases[i].dtype, &sb, NULL)};
        for (int e = 0; e < 3; e++)
            byocl_tensor_set(in[0], e, 6);
        if (cases[i].b_dims == 3) {
            byocl_tensor_set(in[1], 0, 2);
            byocl_tensor_set(in[1], 2, 3);
        }
        byocl_tensor *out[1];
        int n_out;
        byocl_error err = {0};
        assert_int_equal(op_case_run(&c, in, 2, out, 1, &n_out, &err), BYOCL_ERR_RUNTIME);
        assert_string_equal(err.msg, cases[i].msg);
        op_tensors_free(out, 1);
        op_tensors_free(in, 2);
        op_case_free(&c);
    }
}

/* Kernels refuse tensors that do not match the op's type instead of overrunning them. */
static void test_kernel_rejects_mismatched_tensors(void **state)
{
    (void)state;
    int64_t d23[] = {2, 3}, d3[] = {3}, d2[] = {2};
    const byocl_op *add = byocl_op_find("add");
    byocl_tensor *a = ts_tensor_f32(2, d23, NULL), *b = ts_tensor_f32(1, d3, NULL);
    byocl_tensor *small = ts_tensor_f32(1, d2, NULL);
    const byocl_tensor *in[] = {a, b};
    byocl_error err = {0};
    assert_int_equal(add->ref(NULL, in, 2, &small, 1, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "add kernel: tensors do not match the op's type");
    assert_int_equal(add->ref(NULL, in, 1, &small, 1, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "add kernel: got 1 input and 1 output tensors, expected 2 and 1");
    const byocl_op *copy = byocl_op_find("copy");
    assert_int_equal(copy->ref(NULL, in, 1, &small, 1, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "copy kernel: output has 2 float32 elements, input 6 float32");
    byocl_tensor_unref(a);
    byocl_tensor_unref(b);
    byocl_tensor_unref(small);
}

static void test_ops_documented(void **state)
{
    (void)state;
    const char *names[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "abs",
                           "exp", "sigmoid", "tanh", "clip", "copy", "cast", "power", "equal",
                           "not_equal", "less", "greater", "less_equal", "greater_equal",
                           "logical_and", "logical_or", "logical_xor", "logical_not", "where",
                           "negative", "log", "sqrt", "rsqrt", "erf"};
    assert_ops_documented(names, N_ITEMS(names));
    static const op_attr_spec cast_attrs[] = {{"dtype", NULL}};
    static const op_attr_spec clip_attrs[] = {{"a_min", NULL}, {"a_max", NULL}};
    op_assert_schema("cast", cast_attrs, N_ITEMS(cast_attrs));
    op_assert_schema("clip", clip_attrs, N_ITEMS(clip_attrs));
    assert_int_equal(byocl_op_attr_kind(byocl_op_find("cast"), 0), BYOCL_ATTR_STR);
    assert_int_equal(byocl_op_attr_kind(byocl_op_find("clip"), 1), BYOCL_ATTR_FLOAT);
    int min_args, max_args;
    byocl_op_arity(byocl_op_find("add"), &min_args, &max_args);
    assert_int_equal(min_args, 2);
    assert_int_equal(max_args, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broadcast_errors),
        cmocka_unit_test(test_dtype_errors),
        cmocka_unit_test(test_where_errors),
        cmocka_unit_test(test_tuple_argument_error),
        cmocka_unit_test(test_attribute_errors),
        cmocka_unit_test(test_clip_accepts_int_literals),
        cmocka_unit_test(test_integer_divide_by_zero),
        cmocka_unit_test(test_kernel_rejects_mismatched_tensors),
        cmocka_unit_test(test_ops_documented),
    };
    return op_run_suite("ops_elemwise", elemwise_cases, N_ITEMS(elemwise_cases), tests,
                        N_ITEMS(tests));
}
