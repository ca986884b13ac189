/* nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d: type relations, attribute checks
 * and the reference kernels against numpy (tests/gen/gen_ops_pool.py). */
#include "ops_case.h"

#include "fixtures/ops/pool_cases.h"

static void test_schema(void **state)
{
    /* nn.max_pool2d has the first seven; nn.avg_pool2d adds count_include_pad. */
    static const op_attr_spec window_attrs[] = {
        {"pool_size", "[1, 1]"},  {"strides", "[1, 1]"},   {"dilation", "[1, 1]"},
        {"padding", "[0, 0, 0, 0]"}, {"layout", "\"NCHW\""}, {"out_layout", "\"\""},
        {"ceil_mode", "False"},   {"count_include_pad", "False"},
    };
    static const op_attr_spec global_attrs[] = {{"layout", "\"NCHW\""}, {"out_layout", "\"\""}};
    op_assert_schema("nn.max_pool2d", window_attrs, 7);
    op_assert_schema("nn.avg_pool2d", window_attrs, 8);
    op_assert_schema("nn.global_avg_pool2d", global_attrs, N_ITEMS(global_attrs));
}

static void test_attrs_normalized(void **state)
{
    byocl_type t = OP_TYPE(BYOCL_FLOAT32, 1, 2, 8, 8);
    const char *attrs = "pool_size=3, padding=[1, 2], strides=[2]";
    op_assert_normalized("nn.max_pool2d", &t, 1, attrs, "pool_size", "[3, 3]");
    op_assert_normalized("nn.max_pool2d", &t, 1, attrs, "padding", "[1, 2, 1, 2]");
    op_assert_normalized("nn.avg_pool2d", &t, 1, attrs, "strides", "[2, 2]");
    op_assert_normalized("nn.avg_pool2d", &t, 1, attrs, "dilation", "[1, 1]");
}

static void expect_attr_error(const char *op, const char *attrs, byocl_status status,
                              const char *msg)
{
    byocl_type t = OP_TYPE(BYOCL_FLOAT32, 1, 2, 8, 8);
    op_expect_build_error(op, &t, 1, attrs, status, msg);
}

static void test_attr_errors(void **state)
{
    const byocl_status bad = BYOCL_ERR_INVALID;
    expect_attr_error("nn.max_pool2d", "pool_size=[0, 2]", bad,
                      "pool_size must be positive, got [0, 2]");
    expect_attr_error("nn.avg_pool2d", "padding=[1, 1, 1]", bad,
                      "padding must have 1, 2 or 4 values, got 3");
    expect_attr_error("nn.avg_pool2d", "dilation=[1, 0]", bad,
                      "dilation must be positive, got [1, 0]");
    expect_attr_error("nn.max_pool2d", "ceil_mode=\"yes\"", bad,
                      "bad value for attribute 'ceil_mode' of nn.max_pool2d: expected True or "
                      "False, got \"yes\"");
    const byocl_status unsupported = BYOCL_ERR_UNSUPPORTED;
    expect_attr_error("nn.max_pool2d", "layout=\"NHWC\"", unsupported,
                      "layout \"NHWC\" is not supported: byocl handles NCHW only");
    expect_attr_error("nn.avg_pool2d", "out_layout=\"NCHW4c\"", unsupported,
                      "out_layout \"NCHW4c\" is not supported: byocl handles NCHW only");
    expect_attr_error("nn.global_avg_pool2d", "layout=\"NHWC\"", unsupported,
                      "layout \"NHWC\" is not supported: byocl handles NCHW only");
}

static void expect_type_error(const char *op, byocl_type data, const char *attrs,
                              const char *reason)
{
    op_expect_type_error(op, &data, 1, attrs, BYOCL_ERR_TYPE, reason);
}

static void test_type_errors(void **state)
{
    expect_type_error("nn.max_pool2d", OP_TYPE(BYOCL_FLOAT32, 2, 8, 8), "",
                      "data must be a 4-D tensor (NCHW), got Tensor[(2, 8, 8), float32]");
    expect_type_error("nn.global_avg_pool2d", OP_TYPE(BYOCL_INT8, 8, 8), "",
                      "data must be a 4-D tensor (NCHW), got Tensor[(8, 8), int8]");
    expect_type_error("nn.avg_pool2d", OP_TYPE(BYOCL_FLOAT32, 1, 1, 2, 8), "pool_size=[3, 3]",
                      "data height 2 with padding (top 0, bottom 0) is smaller than the dilated "
                      "pool window height 3");
    expect_type_error("nn.max_pool2d", OP_TYPE(BYOCL_FLOAT32, 1, 1, 8, 2),
                      "pool_size=[2, 2], dilation=[1, 4], padding=[0, 1, 0, 1]",
                      "data width 2 with padding (left 1, right 1) is smaller than the dilated "
                      "pool window width 5");
}

/* Output sizes straight from the relation, ceil_mode's edge cases included. */
static void expect_out_hw(byocl_type data, const char *attrs, int64_t h, int64_t w)
{
    op_case c;
    op_case_build(&c, "nn.max_pool2d", &data, 1, false, attrs);
    op_case_expect_ok(&c, attrs);
    const byocl_type *t = byocl_node_type(c.fn, c.call);
    assert_int_equal(t->shape.dims[2], h);
    assert_int_equal(t->shape.dims[3], w);
    op_case_free(&c);
}

static void test_output_sizes(void **state)
{
    byocl_type t = OP_TYPE(BYOCL_FLOAT32, 1, 1, 7, 6);
    expect_out_hw(t, "pool_size=[2, 2], strides=[2, 2]", 3, 3);
    expect_out_hw(t, "pool_size=[2, 2], strides=[2, 2], ceil_mode=True", 4, 3);
    /* TVM's bare formula gives 5 rows here, the last starting in the bottom padding. */
    expect_out_hw(t, "pool_size=[2, 2], strides=[2, 2], padding=[1, 0, 1, 0], ceil_mode=True",
                  4, 3);
    expect_out_hw(t, "pool_size=[1, 1], strides=[3, 4], ceil_mode=True", 3, 2);
}

static void test_kernel_rejects_bad_calls(void **state)
{
    byocl_type in = OP_TYPE(BYOCL_FLOAT32, 1, 2, 4, 4);
    byocl_type wrong = OP_TYPE(BYOCL_FLOAT32, 1, 2, 2, 2);
    op_expect_ref_error("nn.max_pool2d", &in, 1, &wrong, 1, BYOCL_ERR_INVALID,
                        "nn.max_pool2d kernel: output has shape (1, 2, 2, 2), expected "
                        "(1, 2, 4, 4)");
    op_expect_ref_error("nn.global_avg_pool2d", &in, 1, &wrong, 1, BYOCL_ERR_INVALID,
                        "nn.global_avg_pool2d kernel: output has shape (1, 2, 2, 2), expected "
                        "(1, 2, 1, 1)");
    byocl_type two[2] = {in, in};
    op_expect_ref_error("nn.avg_pool2d", &in, 1, two, 2, BYOCL_ERR_INVALID,
                        "nn.avg_pool2d kernel takes 1 inputs and 1 outputs, got 1 and 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_attrs_normalized),
        cmocka_unit_test(test_attr_errors),
        cmocka_unit_test(test_type_errors),
        cmocka_unit_test(test_output_sizes),
        cmocka_unit_test(test_kernel_rejects_bad_calls),
    };
    return op_run_suite("ops_pool", pool_cases, N_ITEMS(pool_cases), tests, N_ITEMS(tests));
}
