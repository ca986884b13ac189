/* nn.conv2d: type relation, attribute checks and the reference kernel against numpy
 * (tests/gen/gen_ops_conv.py). */
#include "nn_ops_case.h"

#include "fixtures/ops/conv_cases.h"

#define OP "nn.conv2d"
#define N_OF(a) ((int)(sizeof a / sizeof a[0]))

static void test_schema(void **state)
{
    static const char *const names[] = {"strides", "padding", "dilation", "groups",
                                        "channels", "kernel_size", "data_layout",
                                        "kernel_layout", "out_layout", "out_dtype"};
    nn_assert_op_schema(OP, names, N_OF(names));
    nn_assert_attr_default(OP, "strides", "[1, 1]");
    nn_assert_attr_default(OP, "padding", "[0, 0, 0, 0]");
    nn_assert_attr_default(OP, "groups", "1");
    nn_assert_attr_default(OP, "channels", "None");
    nn_assert_attr_default(OP, "kernel_size", "None");
    nn_assert_attr_default(OP, "data_layout", "\"NCHW\"");
    nn_assert_attr_default(OP, "kernel_layout", "\"OIHW\"");
    nn_assert_attr_default(OP, "out_dtype", "\"\"");
}

static void test_attrs_normalized(void **state)
{
    byocl_type t[2] = {NN_TYPE(BYOCL_FLOAT32, 1, 3, 8, 8), NN_TYPE(BYOCL_FLOAT32, 4, 3, 3, 3)};
    nn_case_attr one[] = {NN_INTS("padding", 2), NN_INT("strides", 2)};
    nn_assert_normalized(OP, t, 2, one, 2, "padding", "[2, 2, 2, 2]");
    nn_assert_normalized(OP, t, 2, one, 2, "strides", "[2, 2]");
    nn_case_attr two[] = {NN_INTS("padding", 1, 2), NN_INT("kernel_size", 3)};
    nn_assert_normalized(OP, t, 2, two, 2, "padding", "[1, 2, 1, 2]");
    nn_assert_normalized(OP, t, 2, two, 2, "kernel_size", "[3, 3]");
    nn_assert_normalized(OP, t, 2, two, 2, "dilation", "[1, 1]");
    nn_assert_normalized(OP, t, 2, two, 2, "channels", "None");
    nn_case_attr four[] = {NN_INTS("padding", 0, 1, 2, 3)};
    nn_assert_normalized(OP, t, 2, four, 1, "padding", "[0, 1, 2, 3]");
}

static void expect_attr_error(const nn_case_attr *attr, byocl_status status, const char *msg)
{
    byocl_type t[2] = {NN_TYPE(BYOCL_FLOAT32, 1, 3, 8, 8), NN_TYPE(BYOCL_FLOAT32, 4, 3, 3, 3)};
    nn_expect_infer_error(OP, t, 2, attr, 1, status, msg);
}

static void test_attr_errors(void **state)
{
    const byocl_status bad = BYOCL_ERR_INVALID;
    expect_attr_error(&(nn_case_attr)NN_INTS("padding", 1, 2, 3), bad,
                      "padding must have 1, 2 or 4 values, got 3");
    expect_attr_error(&(nn_case_attr)NN_INTS("padding", 1, -1), bad,
                      "padding must not be negative, got [1, -1]");
    expect_attr_error(&(nn_case_attr)NN_INTS("strides", 0, 1), bad,
                      "strides must be positive, got [0, 1]");
    expect_attr_error(&(nn_case_attr)NN_INTS("strides", 1, 1, 1), bad,
                      "strides must have 1 or 2 values, got 3");
    expect_attr_error(&(nn_case_attr)NN_INTS("strides", 1099511627776, 1), bad,
                      "strides value out of range in [1099511627776, 1]");
    expect_attr_error(&(nn_case_attr)NN_INTS("dilation", -2), bad,
                      "dilation must be positive, got [-2]");
    expect_attr_error(&(nn_case_attr)NN_INTS("kernel_size", 3, 0), bad,
                      "kernel_size must be positive, got [3, 0]");
    expect_attr_error(&(nn_case_attr)NN_INT("groups", 0), bad, "groups must be positive, got 0");
    expect_attr_error(&(nn_case_attr)NN_INT("channels", -4), bad,
                      "channels must be positive, got -4");
    expect_attr_error(&(nn_case_attr)NN_STR("out_dtype", "float64"), bad,
                      "out_dtype \"float64\" is not a dtype");
    const byocl_status unsupported = BYOCL_ERR_UNSUPPORTED;
    expect_attr_error(&(nn_case_attr)NN_STR("data_layout", "NHWC"), unsupported,
                      "data_layout \"NHWC\" is not supported: byocl handles NCHW only");
    expect_attr_error(&(nn_case_attr)NN_STR("kernel_layout", "HWIO"), unsupported,
                      "kernel_layout \"HWIO\" is not supported: byocl handles OIHW only");
    expect_attr_error(&(nn_case_attr)NN_STR("out_layout", "NHWC"), unsupported,
                      "out_layout \"NHWC\" is not supported: byocl handles NCHW only");
    /* A value of the wrong kind: the schema check names the attribute. */
    expect_attr_error(&(nn_case_attr)NN_STR("strides", "a"), bad,
                      "bad value for attribute 'strides' of nn.conv2d: expected an integer or "
                      "a list of integers, got \"a\"");
}

/* The same wrong kind, written as text the way a user would. */
static void test_attr_wrong_kind_from_text(void **state)
{
    byocl_module *m = byocl_module_new();
    byocl_error err;
    byocl_function *fn = byocl_module_add_function(m, "main", &err);
    byocl_type t[2] = {NN_TYPE(BYOCL_FLOAT32, 1, 3, 8, 8), NN_TYPE(BYOCL_FLOAT32, 4, 3, 3, 3)};
    int args[2] = {byocl_build_param(fn, "x", &t[0], &err), byocl_build_param(fn, "w", &t[1], &err)};
    assert_int_equal(byocl_build_call_str(fn, OP, args, 2, "strides=\"a\"", &err), -1);
    ts_assert_contains(err.msg, "bad value for attribute 'strides' of nn.conv2d");
    /* and a good text attribute list goes through and is normalized */
    int call = byocl_build_call_str(fn, OP, args, 2, "padding=[1, 2], channels=4", &err);
    if (call < 0)
        fail_msg("%s", err.msg);
    char buf[64];
    const byocl_attrs *a = byocl_node_attrs(fn, call);
    assert_string_equal(byocl_attr_value_str(byocl_attrs_find(a, "padding"), buf, sizeof buf),
                        "[1, 2, 1, 2]");
    byocl_module_free(m);
}

static void expect_type_error(byocl_type data, byocl_type weight, const nn_case_attr *attrs,
                              int n_attrs, const char *msg)
{
    byocl_type t[2] = {data, weight};
    nn_expect_infer_error(OP, t, 2, attrs, n_attrs, BYOCL_ERR_TYPE, msg);
}

static void test_type_errors(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    expect_type_error(NN_TYPE(f32, 1, 3, 5), NN_TYPE(f32, 4, 3, 3, 3), NULL, 0,
                      "data must be a 4-D tensor (NCHW), got Tensor[(1, 3, 5), float32]");
    expect_type_error(NN_TYPE(f32, 1, 3, 5, 5), NN_TYPE(f32, 4, 3, 3), NULL, 0,
                      "weight must be a 4-D tensor (OIHW), got Tensor[(4, 3, 3), float32]");
    expect_type_error(NN_TYPE(f32, 1, 3, 5, 5), NN_TYPE(BYOCL_FLOAT16, 4, 3, 3, 3), NULL, 0,
                      "weight dtype float16 does not match data dtype float32");
    expect_type_error(NN_TYPE(f32, 1, 4, 5, 5), NN_TYPE(f32, 2, 3, 3, 3), NULL, 0,
                      "weight has 3 input channels per group but data has 4 channels with "
                      "groups=1");
    nn_case_attr groups2[] = {NN_INT("groups", 2)};
    expect_type_error(NN_TYPE(f32, 1, 4, 5, 5), NN_TYPE(f32, 4, 4, 3, 3), groups2, 1,
                      "weight has 4 input channels per group but data has 4 channels with "
                      "groups=2");
    expect_type_error(NN_TYPE(f32, 1, 4, 5, 5), NN_TYPE(f32, 5, 2, 3, 3), groups2, 1,
                      "weight has 5 output channels, which groups=2 does not divide");
    nn_case_attr groups3[] = {NN_INT("groups", 3)};
    expect_type_error(NN_TYPE(f32, 1, 4, 5, 5), NN_TYPE(f32, 3, 1, 3, 3), groups3, 1,
                      "data has 4 channels, which groups=3 does not divide");
    nn_case_attr channels[] = {NN_INT("channels", 8)};
    expect_type_error(NN_TYPE(f32, 1, 3, 5, 5), NN_TYPE(f32, 4, 3, 3, 3), channels, 1,
                      "channels=8 but weight has 4 output channels");
    nn_case_attr kernel[] = {NN_INTS("kernel_size", 5, 5)};
    expect_type_error(NN_TYPE(f32, 1, 3, 5, 5), NN_TYPE(f32, 4, 3, 3, 3), kernel, 1,
                      "kernel_size=[5, 5] but weight has a 3x3 kernel");
    expect_type_error(NN_TYPE(f32, 1, 3, 2, 5), NN_TYPE(f32, 4, 3, 3, 3), NULL, 0,
                      "data height 2 with padding (top 0, bottom 0) is smaller than the "
                      "dilated kernel height 3");
    nn_case_attr dilated[] = {NN_INTS("padding", 0, 1, 0, 0), NN_INTS("dilation", 1, 2)};
    expect_type_error(NN_TYPE(f32, 1, 3, 5, 3), NN_TYPE(f32, 4, 3, 3, 3), dilated, 2,
                      "data width 3 with padding (left 1, right 0) is smaller than the "
                      "dilated kernel width 5");
    /* Types may declare sizes no tensor could have; the arithmetic must not overflow. */
    expect_type_error(NN_TYPE(f32, 1, 3, 4611686018427387904, 5), NN_TYPE(f32, 4, 3, 3, 3),
                      NULL, 0, "data height 4611686018427387904 is too large");
    nn_case_attr dilation2[] = {NN_INTS("dilation", 2, 2)};
    expect_type_error(NN_TYPE(f32, 1, 3, 5, 5), NN_TYPE(f32, 4, 3, 2305843009213693952, 3),
                      dilation2, 1, "kernel height 2305843009213693952 is out of range");
}

/* What a user sees: the relation's message inside type inference's report. */
static void test_type_error_in_module(void **state)
{
    byocl_type t[2] = {NN_TYPE(BYOCL_FLOAT32, 1, 4, 5, 5), NN_TYPE(BYOCL_FLOAT32, 2, 3, 3, 3)};
    nn_expect_module_error(OP, t, 2, NULL, 0, BYOCL_ERR_TYPE,
                           "weight has 3 input channels per group but data has 4 channels "
                           "with groups=1");
    nn_case_attr nhwc[] = {NN_STR("data_layout", "NHWC")};
    nn_expect_module_error(OP, t, 2, nhwc, 1, BYOCL_ERR_UNSUPPORTED,
                           "data_layout \"NHWC\" is not supported");
}

/* The kernel re-checks what it is given rather than trust its caller. */
static void test_kernel_rejects_bad_calls(void **state)
{
    byocl_type in[2] = {NN_TYPE(BYOCL_FLOAT32, 1, 3, 5, 5), NN_TYPE(BYOCL_FLOAT32, 4, 3, 3, 3)};
    byocl_type wrong_out = NN_TYPE(BYOCL_FLOAT32, 1, 4, 2, 2);
    nn_expect_ref_error(OP, in, 2, &wrong_out, 1,
                        "nn.conv2d kernel: output has shape (1, 4, 2, 2), expected (1, 4, 3, 3)");
    byocl_type out = NN_TYPE(BYOCL_FLOAT32, 1, 4, 3, 3);
    nn_expect_ref_error(OP, in, 1, &out, 1,
                        "nn.conv2d kernel takes 2 inputs and 1 outputs, got 1 and 1");
    byocl_type bad_weight[2] = {in[0], NN_TYPE(BYOCL_FLOAT32, 4, 2, 3, 3)};
    nn_expect_ref_error(OP, bad_weight, 2, &out, 1,
                        "weight has 2 input channels per group but data has 3 channels with "
                        "groups=1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_attrs_normalized),
        cmocka_unit_test(test_attr_errors),
        cmocka_unit_test(test_attr_wrong_kind_from_text),
        cmocka_unit_test(test_type_errors),
        cmocka_unit_test(test_type_error_in_module),
        cmocka_unit_test(test_kernel_rejects_bad_calls),
    };
    return nn_run_suite("ops_conv", conv_cases, N_OF(conv_cases), tests, N_OF(tests));
}
