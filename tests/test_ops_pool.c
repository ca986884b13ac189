/* nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d: type relations, attribute checks
 * and the reference kernels against numpy (tests/gen/gen_ops_pool.py). */
#include "nn_ops_case.h"

#include "fixtures/ops/pool_cases.h"

#define N_OF(a) ((int)(sizeof a / sizeof a[0]))

static void test_schema(void **state)
{
    static const char *const max_names[] = {"pool_size", "strides", "dilation", "padding",
                                            "layout", "out_layout", "ceil_mode"};
    static const char *const avg_names[] = {"pool_size", "strides", "dilation", "padding",
                                            "layout", "out_layout", "ceil_mode",
                                            "count_include_pad"};
    static const char *const global_names[] = {"layout", "out_layout"};
    nn_assert_op_schema("nn.max_pool2d", max_names, N_OF(max_names));
    nn_assert_op_schema("nn.avg_pool2d", avg_names, N_OF(avg_names));
    nn_assert_op_schema("nn.global_avg_pool2d", global_names, N_OF(global_names));
    nn_assert_attr_default("nn.max_pool2d", "pool_size", "[1, 1]");
    nn_assert_attr_default("nn.max_pool2d", "padding", "[0, 0, 0, 0]");
    nn_assert_attr_default("nn.max_pool2d", "ceil_mode", "False");
    nn_assert_attr_default("nn.avg_pool2d", "count_include_pad", "False");
    nn_assert_attr_default("nn.global_avg_pool2d", "layout", "\"NCHW\"");
}

static void test_attrs_normalized(void **state)
{
    byocl_type t = NN_TYPE(BYOCL_FLOAT32, 1, 2, 8, 8);
    nn_case_attr attrs[] = {NN_INT("pool_size", 3), NN_INTS("padding", 1, 2),
                            NN_INTS("strides", 2)};
    nn_assert_normalized("nn.max_pool2d", &t, 1, attrs, 3, "pool_size", "[3, 3]");
    nn_assert_normalized("nn.max_pool2d", &t, 1, attrs, 3, "padding", "[1, 2, 1, 2]");
    nn_assert_normalized("nn.avg_pool2d", &t, 1, attrs, 3, "strides", "[2, 2]");
    nn_assert_normalized("nn.avg_pool2d", &t, 1, attrs, 3, "dilation", "[1, 1]");
}

static void expect_error(const char *op, byocl_type data, const nn_case_attr *attrs, int n,
                         byocl_status status, const char *msg)
{
    nn_expect_infer_error(op, &data, 1, attrs, n, status, msg);
}

static void test_attr_errors(void **state)
{
    byocl_type t = NN_TYPE(BYOCL_FLOAT32, 1, 2, 8, 8);
    const byocl_status bad = BYOCL_ERR_INVALID;
    expect_error("nn.max_pool2d", t, &(nn_case_attr)NN_INTS("pool_size", 0, 2), 1, bad,
                 "pool_size must be positive, got [0, 2]");
    expect_error("nn.avg_pool2d", t, &(nn_case_attr)NN_INTS("padding", 1, 1, 1), 1, bad,
                 "padding must have 1, 2 or 4 values, got 3");
    expect_error("nn.avg_pool2d", t, &(nn_case_attr)NN_INTS("dilation", 1, 0), 1, bad,
                 "dilation must be positive, got [1, 0]");
    expect_error("nn.max_pool2d", t, &(nn_case_attr)NN_STR("ceil_mode", "yes"), 1, bad,
                 "bad value for attribute 'ceil_mode' of nn.max_pool2d: expected True or "
                 "False, got \"yes\"");
    const byocl_status unsupported = BYOCL_ERR_UNSUPPORTED;
    expect_error("nn.max_pool2d", t, &(nn_case_attr)NN_STR("layout", "NHWC"), 1, unsupported,
                 "layout \"NHWC\" is not supported: byocl handles NCHW only");
    expect_error("nn.avg_pool2d", t, &(nn_case_attr)NN_STR("out_layout", "NCHW4c"), 1,
                 unsupported, "out_layout \"NCHW4c\" is not supported: byocl handles NCHW only");
    expect_error("nn.global_avg_pool2d", t, &(nn_case_attr)NN_STR("layout", "NHWC"), 1,
                 unsupported, "layout \"NHWC\" is not supported: byocl handles NCHW only");
}

static void test_type_errors(void **state)
{
    const byocl_status type = BYOCL_ERR_TYPE;
    expect_error("nn.max_pool2d", NN_TYPE(BYOCL_FLOAT32, 2, 8, 8), NULL, 0, type,
                 "data must be a 4-D tensor (NCHW), got Tensor[(2, 8, 8), float32]");
    expect_error("nn.global_avg_pool2d", NN_TYPE(BYOCL_INT8, 8, 8), NULL, 0, type,
                 "data must be a 4-D tensor (NCHW), got Tensor[(8, 8), int8]");
    nn_case_attr big[] = {NN_INTS("pool_size", 3, 3)};
    expect_error("nn.avg_pool2d", NN_TYPE(BYOCL_FLOAT32, 1, 1, 2, 8), big, 1, type,
                 "data height 2 with padding (top 0, bottom 0) is smaller than the dilated "
                 "pool window height 3");
    nn_case_attr dilated[] = {NN_INTS("pool_size", 2, 2), NN_INTS("dilation", 1, 4),
                              NN_INTS("padding", 0, 1, 0, 1)};
    expect_error("nn.max_pool2d", NN_TYPE(BYOCL_FLOAT32, 1, 1, 8, 2), dilated, 3, type,
                 "data width 2 with padding (left 1, right 1) is smaller than the dilated pool "
                 "window width 5");
    byocl_type rank3 = NN_TYPE(BYOCL_FLOAT32, 2, 8, 8);
    nn_expect_module_error("nn.max_pool2d", &rank3, 1, NULL, 0, type,
                           "data must be a 4-D tensor (NCHW), got Tensor[(2, 8, 8), float32]");
}

/* Output sizes straight from the relation, ceil_mode's edge cases included. */
static void expect_out_hw(byocl_type data, const nn_case_attr *attrs, int n, int64_t h,
                          int64_t w)
{
    byocl_module *m = NULL;
    byocl_error err;
    int call = nn_case_module("nn.max_pool2d", &data, 1, attrs, n, &m, &err);
    if (call < 0)
        fail_msg("%s", err.msg);
    const byocl_type *t = byocl_node_type(byocl_module_find(m, "main"), call);
    assert_int_equal(t->shape.dims[2], h);
    assert_int_equal(t->shape.dims[3], w);
    byocl_module_free(m);
}

static void test_output_sizes(void **state)
{
    byocl_type t = NN_TYPE(BYOCL_FLOAT32, 1, 1, 7, 6);
    nn_case_attr floor_mode[] = {NN_INTS("pool_size", 2, 2), NN_INTS("strides", 2, 2)};
    expect_out_hw(t, floor_mode, 2, 3, 3);
    nn_case_attr ceil_mode[] = {NN_INTS("pool_size", 2, 2), NN_INTS("strides", 2, 2),
                                NN_BOOL("ceil_mode", 1)};
    expect_out_hw(t, ceil_mode, 3, 4, 3);
    /* TVM's bare formula gives 5 rows here, the last starting in the bottom padding. */
    nn_case_attr dropped[] = {NN_INTS("pool_size", 2, 2), NN_INTS("strides", 2, 2),
                              NN_INTS("padding", 1, 0, 1, 0), NN_BOOL("ceil_mode", 1)};
    expect_out_hw(t, dropped, 4, 4, 3);
    nn_case_attr stride3[] = {NN_INTS("pool_size", 1, 1), NN_INTS("strides", 3, 4),
                              NN_BOOL("ceil_mode", 1)};
    expect_out_hw(t, stride3, 3, 3, 2);
}

static void test_kernel_rejects_bad_calls(void **state)
{
    byocl_type in = NN_TYPE(BYOCL_FLOAT32, 1, 2, 4, 4);
    byocl_type wrong = NN_TYPE(BYOCL_FLOAT32, 1, 2, 2, 2);
    nn_expect_ref_error("nn.max_pool2d", &in, 1, &wrong, 1,
                        "nn.max_pool2d kernel: output has shape (1, 2, 2, 2), expected "
                        "(1, 2, 4, 4)");
    nn_expect_ref_error("nn.global_avg_pool2d", &in, 1, &wrong, 1,
                        "nn.global_avg_pool2d kernel: output has shape (1, 2, 2, 2), expected "
                        "(1, 2, 1, 1)");
    byocl_type two[2] = {in, in};
    nn_expect_ref_error("nn.avg_pool2d", &in, 1, two, 2,
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
    return nn_run_suite("ops_pool", pool_cases, N_OF(pool_cases), tests, N_OF(tests));
}
