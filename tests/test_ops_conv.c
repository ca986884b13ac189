/* nn.conv2d and nn.conv2d_transpose: type relations, attribute checks and the reference
 * kernels against numpy (tests/gen/gen_ops_conv.py). */
#include "ops_case.h"

#include "fixtures/ops/conv_cases.h"

#define OP "nn.conv2d"

static void test_schema(void **state)
{
    static const op_attr_spec attrs[] = {
        {"strides", "[1, 1]"},         {"padding", "[0, 0, 0, 0]"},
        {"dilation", "[1, 1]"},        {"groups", "1"},
        {"channels", "None"},          {"kernel_size", "None"},
        {"data_layout", "\"NCHW\""},   {"kernel_layout", "\"OIHW\""},
        {"out_layout", "\"\""},        {"out_dtype", "\"\""},
    };
    op_assert_schema(OP, attrs, N_ITEMS(attrs));
}

/* Arguments that fit every attribute below: data (1, 3, 8, 8), weight (4, 3, 3, 3). */
#define CONV_ARGS \
    ((const byocl_type[]){OP_TYPE(BYOCL_FLOAT32, 1, 3, 8, 8), OP_TYPE(BYOCL_FLOAT32, 4, 3, 3, 3)})

static void test_attrs_normalized(void **state)
{
    const byocl_type *t = CONV_ARGS;
    op_assert_normalized(OP, t, 2, "padding=[2], strides=2", "padding", "[2, 2, 2, 2]");
    op_assert_normalized(OP, t, 2, "padding=[2], strides=2", "strides", "[2, 2]");
    const char *two = "padding=[1, 2], kernel_size=3";
    op_assert_normalized(OP, t, 2, two, "padding", "[1, 2, 1, 2]");
    op_assert_normalized(OP, t, 2, two, "kernel_size", "[3, 3]");
    op_assert_normalized(OP, t, 2, two, "dilation", "[1, 1]");
    op_assert_normalized(OP, t, 2, two, "channels", "None");
    op_assert_normalized(OP, t, 2, "padding=[1, 2], channels=4", "padding", "[1, 2, 1, 2]");
    op_assert_normalized(OP, t, 2, "padding=[0, 1, 2, 3]", "padding", "[0, 1, 2, 3]");
}

static void expect_attr_error(const char *attrs, byocl_status status, const char *msg)
{
    op_expect_build_error(OP, CONV_ARGS, 2, attrs, status, msg);
}

static void test_attr_errors(void **state)
{
    const byocl_status bad = BYOCL_ERR_INVALID;
    expect_attr_error("padding=[1, 2, 3]", bad, "padding must have 1, 2 or 4 values, got 3");
    expect_attr_error("padding=[1, -1]", bad, "padding must not be negative, got [1, -1]");
    expect_attr_error("strides=[0, 1]", bad, "strides must be positive, got [0, 1]");
    expect_attr_error("strides=[1, 1, 1]", bad, "strides must have 1 or 2 values, got 3");
    expect_attr_error("strides=[1099511627776, 1]", bad,
                      "strides value out of range in [1099511627776, 1]");
    expect_attr_error("dilation=[-2]", bad, "dilation must be positive, got [-2]");
    expect_attr_error("kernel_size=[3, 0]", bad, "kernel_size must be positive, got [3, 0]");
    expect_attr_error("groups=0", bad, "groups must be positive, got 0");
    expect_attr_error("channels=-4", bad, "channels must be positive, got -4");
    expect_attr_error("out_dtype=\"float128\"", bad, "out_dtype \"float128\" is not a dtype");
    const byocl_status unsupported = BYOCL_ERR_UNSUPPORTED;
    expect_attr_error("data_layout=\"NHWC\"", unsupported,
                      "data_layout \"NHWC\" is not supported: byocl handles NCHW only");
    expect_attr_error("kernel_layout=\"HWIO\"", unsupported,
                      "kernel_layout \"HWIO\" is not supported: byocl handles OIHW only");
    expect_attr_error("out_layout=\"NHWC\"", unsupported,
                      "out_layout \"NHWC\" is not supported: byocl handles NCHW only");
    /* A value of the wrong kind: the schema check names the attribute. */
    expect_attr_error("strides=\"a\"", bad,
                      "bad value for attribute 'strides' of nn.conv2d: expected an integer or "
                      "a list of integers, got \"a\"");
}

static void expect_type_error(byocl_type data, byocl_type weight, const char *attrs,
                              const char *reason)
{
    byocl_type t[2] = {data, weight};
    op_expect_type_error(OP, t, 2, attrs, BYOCL_ERR_TYPE, reason);
}

static void test_type_errors(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    expect_type_error(OP_TYPE(f32, 1, 3, 5), OP_TYPE(f32, 4, 3, 3, 3), "",
                      "data must be a 4-D tensor (NCHW), got Tensor[(1, 3, 5), float32]");
    expect_type_error(OP_TYPE(f32, 1, 3, 5, 5), OP_TYPE(f32, 4, 3, 3), "",
                      "weight must be a 4-D tensor (OIHW), got Tensor[(4, 3, 3), float32]");
    expect_type_error(OP_TYPE(f32, 1, 3, 5, 5), OP_TYPE(BYOCL_FLOAT16, 4, 3, 3, 3), "",
                      "weight dtype float16 does not match data dtype float32");
    expect_type_error(OP_TYPE(f32, 1, 4, 5, 5), OP_TYPE(f32, 2, 3, 3, 3), "",
                      "weight has 3 input channels per group but data has 4 channels with "
                      "groups=1");
    expect_type_error(OP_TYPE(f32, 1, 4, 5, 5), OP_TYPE(f32, 4, 4, 3, 3), "groups=2",
                      "weight has 4 input channels per group but data has 4 channels with "
                      "groups=2");
    expect_type_error(OP_TYPE(f32, 1, 4, 5, 5), OP_TYPE(f32, 5, 2, 3, 3), "groups=2",
                      "weight has 5 output channels, which groups=2 does not divide");
    expect_type_error(OP_TYPE(f32, 1, 4, 5, 5), OP_TYPE(f32, 3, 1, 3, 3), "groups=3",
                      "data has 4 channels, which groups=3 does not divide");
    expect_type_error(OP_TYPE(f32, 1, 3, 5, 5), OP_TYPE(f32, 4, 3, 3, 3), "channels=8",
                      "channels=8 but weight has 4 output channels");
    expect_type_error(OP_TYPE(f32, 1, 3, 5, 5), OP_TYPE(f32, 4, 3, 3, 3), "kernel_size=[5, 5]",
                      "kernel_size=[5, 5] but weight has a 3x3 kernel");
    expect_type_error(OP_TYPE(f32, 1, 3, 2, 5), OP_TYPE(f32, 4, 3, 3, 3), "",
                      "data height 2 with padding (top 0, bottom 0) is smaller than the "
                      "dilated kernel height 3");
    expect_type_error(OP_TYPE(f32, 1, 3, 5, 3), OP_TYPE(f32, 4, 3, 3, 3),
                      "padding=[0, 1, 0, 0], dilation=[1, 2]",
                      "data width 3 with padding (left 1, right 0) is smaller than the "
                      "dilated kernel width 5");
    /* Types may declare sizes no tensor could have; the arithmetic must not overflow. */
    expect_type_error(OP_TYPE(f32, 1, 3, 4611686018427387904, 5), OP_TYPE(f32, 4, 3, 3, 3), "",
                      "data height 4611686018427387904 is too large");
    expect_type_error(OP_TYPE(f32, 1, 3, 5, 5), OP_TYPE(f32, 4, 3, 2305843009213693952, 3),
                      "dilation=[2, 2]", "kernel height 2305843009213693952 is out of range");
}

/* The kernel re-checks what it is given rather than trust its caller. */
static void test_kernel_rejects_bad_calls(void **state)
{
    byocl_type in[2] = {OP_TYPE(BYOCL_FLOAT32, 1, 3, 5, 5), OP_TYPE(BYOCL_FLOAT32, 4, 3, 3, 3)};
    byocl_type wrong_out = OP_TYPE(BYOCL_FLOAT32, 1, 4, 2, 2);
    op_expect_ref_error(OP, in, 2, &wrong_out, 1, BYOCL_ERR_INVALID,
                        "nn.conv2d kernel: output has shape (1, 4, 2, 2), expected (1, 4, 3, 3)");
    byocl_type out = OP_TYPE(BYOCL_FLOAT32, 1, 4, 3, 3);
    op_expect_ref_error(OP, in, 1, &out, 1, BYOCL_ERR_INVALID,
                        "nn.conv2d kernel takes 2 inputs and 1 outputs, got 1 and 1");
    byocl_type bad_weight[2] = {in[0], OP_TYPE(BYOCL_FLOAT32, 4, 2, 3, 3)};
    op_expect_ref_error(OP, bad_weight, 2, &out, 1, BYOCL_ERR_TYPE,
                        "weight has 2 input channels per group but data has 3 channels with "
                        "groups=1");
}

/* ------------------------------------------------------- nn.conv2d_transpose */

#define OPT "nn.conv2d_transpose"

static void test_t_schema(void **state)
{
    static const op_attr_spec attrs[] = {
        {"strides", "[1, 1]"},         {"padding", "[0, 0, 0, 0]"},
        {"dilation", "[1, 1]"},        {"groups", "1"},
        {"channels", "None"},          {"kernel_size", "None"},
        {"data_layout", "\"NCHW\""},   {"kernel_layout", "\"IOHW\""},
        {"out_layout", "\"\""},        {"output_padding", "[0, 0]"},
        {"out_dtype", "\"\""},
    };
    op_assert_schema(OPT, attrs, N_ITEMS(attrs));
}

/* data (1, 4, 5, 5), weight (4, 3, 3, 3): 3 output channels per group. */
#define CONV_T_ARGS \
    ((const byocl_type[]){OP_TYPE(BYOCL_FLOAT32, 1, 4, 5, 5), OP_TYPE(BYOCL_FLOAT32, 4, 3, 3, 3)})

static void test_t_attrs(void **state)
{
    const byocl_type *t = CONV_T_ARGS;
    op_assert_normalized(OPT, t, 2, "output_padding=1, strides=2", "output_padding", "[1, 1]");
    op_assert_normalized(OPT, t, 2, "padding=[1, 2]", "padding", "[1, 2, 1, 2]");
    op_assert_normalized(OPT, t, 2, "kernel_size=3", "kernel_size", "[3, 3]");
    const byocl_status bad = BYOCL_ERR_INVALID;
    op_expect_build_error(OPT, t, 2, "output_padding=[0, -1]", bad,
                          "output_padding must not be negative, got [0, -1]");
    op_expect_build_error(OPT, t, 2, "output_padding=[1, 1, 1]", bad,
                          "output_padding must have 1 or 2 values, got 3");
    op_expect_build_error(OPT, t, 2, "padding=[-1]", bad, "padding must not be negative, got [-1]");
    op_expect_build_error(OPT, t, 2, "groups=0", bad, "groups must be positive, got 0");
    op_expect_build_error(OPT, t, 2, "strides=[2, 0]", bad, "strides must be positive, got [2, 0]");
    op_expect_build_error(OPT, t, 2, "kernel_layout=\"OIHW\"", BYOCL_ERR_UNSUPPORTED,
                          "kernel_layout \"OIHW\" is not supported: byocl handles IOHW only");
    op_expect_build_error(OPT, t, 2, "data_layout=\"NHWC\"", BYOCL_ERR_UNSUPPORTED,
                          "data_layout \"NHWC\" is not supported: byocl handles NCHW only");
}

static void expect_t_type_error(byocl_type data, byocl_type weight, const char *attrs,
                                const char *reason)
{
    byocl_type t[2] = {data, weight};
    op_expect_type_error(OPT, t, 2, attrs, BYOCL_ERR_TYPE, reason);
}

static void test_t_type_errors(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    expect_t_type_error(OP_TYPE(f32, 1, 4, 5, 5), OP_TYPE(f32, 4, 3, 3), "",
                        "weight must be a 4-D tensor (IOHW), got Tensor[(4, 3, 3), float32]");
    expect_t_type_error(OP_TYPE(f32, 1, 4, 5, 5), OP_TYPE(f32, 3, 3, 3, 3), "",
                        "weight has 3 input channels but data has 4");
    expect_t_type_error(OP_TYPE(f32, 1, 4, 5, 5), OP_TYPE(f32, 4, 3, 3, 3), "groups=3",
                        "data has 4 channels, which groups=3 does not divide");
    expect_t_type_error(OP_TYPE(f32, 1, 4, 5, 5), OP_TYPE(f32, 4, 3, 3, 3), "groups=2, channels=3",
                        "channels=3 but weight has 6 output channels");
    expect_t_type_error(OP_TYPE(f32, 1, 4, 5, 5), OP_TYPE(f32, 4, 3, 3, 3), "kernel_size=[2, 3]",
                        "kernel_size=[2, 3] but weight has a 3x3 kernel");
    expect_t_type_error(OP_TYPE(f32, 1, 4, 2, 5), OP_TYPE(f32, 4, 3, 3, 3), "padding=[2, 0]",
                        "output height 0 is not positive: data height 2 gives 4, padding (2, 2) "
                        "crops it, output_padding adds 0");
    expect_t_type_error(OP_TYPE(f32, 1, 4, 5, 0), OP_TYPE(f32, 4, 3, 3, 3), "",
                        "data width 0 is empty");
    expect_t_type_error(OP_TYPE(f32, 1, 4, 2305843009213693952, 5), OP_TYPE(f32, 4, 3, 3, 3),
                        "strides=2", "data height 2305843009213693952 is too large");
    expect_t_type_error(OP_TYPE(f32, 1, 4, 5, 5), OP_TYPE(f32, 4, 3, 3, 2305843009213693952),
                        "dilation=[1, 2]", "kernel width 2305843009213693952 is out of range");
}

static void test_t_kernel_rejects_bad_calls(void **state)
{
    byocl_type in[2] = {OP_TYPE(BYOCL_FLOAT32, 1, 4, 5, 5), OP_TYPE(BYOCL_FLOAT32, 4, 3, 3, 3)};
    byocl_type wrong_out = OP_TYPE(BYOCL_FLOAT32, 1, 3, 5, 5);
    op_expect_ref_error(OPT, in, 2, &wrong_out, 1, BYOCL_ERR_INVALID,
                        "nn.conv2d_transpose kernel: output has shape (1, 3, 5, 5), expected "
                        "(1, 3, 7, 7)");
    byocl_type bad_weight[2] = {in[0], OP_TYPE(BYOCL_FLOAT32, 2, 3, 3, 3)};
    byocl_type out = OP_TYPE(BYOCL_FLOAT32, 1, 3, 7, 7);
    op_expect_ref_error(OPT, bad_weight, 2, &out, 1, BYOCL_ERR_TYPE,
                        "weight has 2 input channels but data has 4");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_attrs_normalized),
        cmocka_unit_test(test_attr_errors),
        cmocka_unit_test(test_type_errors),
        cmocka_unit_test(test_kernel_rejects_bad_calls),
        cmocka_unit_test(test_t_schema),
        cmocka_unit_test(test_t_attrs),
        cmocka_unit_test(test_t_type_errors),
        cmocka_unit_test(test_t_kernel_rejects_bad_calls),
    };
    return op_run_suite("ops_conv", conv_cases, N_ITEMS(conv_cases), tests, N_ITEMS(tests));
}
