/* nn.dense, nn.batch_norm, nn.bias_add, nn.relu, nn.leaky_relu, nn.softmax and
 * nn.batch_flatten: type relations, attribute checks and the reference kernels against
 * numpy (tests/gen/gen_ops_nn.py). */
#include "nn_ops_case.h"

#include "fixtures/ops/nn_cases.h"

#define N_OF(a) ((int)(sizeof a / sizeof a[0]))

static void test_schema(void **state)
{
    static const char *const dense[] = {"units", "out_dtype"};
    static const char *const batch_norm[] = {"axis", "epsilon", "center", "scale"};
    static const char *const axis[] = {"axis"};
    static const char *const alpha[] = {"alpha"};
    nn_assert_op_schema("nn.dense", dense, N_OF(dense));
    nn_assert_op_schema("nn.batch_norm", batch_norm, N_OF(batch_norm));
    nn_assert_op_schema("nn.bias_add", axis, N_OF(axis));
    nn_assert_op_schema("nn.relu", NULL, 0);
    nn_assert_op_schema("nn.leaky_relu", alpha, N_OF(alpha));
    nn_assert_op_schema("nn.softmax", axis, N_OF(axis));
    nn_assert_op_schema("nn.batch_flatten", NULL, 0);
    nn_assert_attr_default("nn.dense", "units", "None");
    nn_assert_attr_default("nn.batch_norm", "axis", "1");
    nn_assert_attr_default("nn.batch_norm", "epsilon", "1e-05f");
    nn_assert_attr_default("nn.batch_norm", "center", "True");
    nn_assert_attr_default("nn.bias_add", "axis", "1");
    nn_assert_attr_default("nn.leaky_relu", "alpha", "0.25f");
    nn_assert_attr_default("nn.softmax", "axis", "-1");
}

static void test_dense_errors(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    const byocl_status type = BYOCL_ERR_TYPE;
    byocl_type t[2] = {NN_TYPE(f32, 2, 5), NN_TYPE(f32, 4)};
    nn_expect_infer_error("nn.dense", t, 2, NULL, 0, type,
                          "weight must be a 2-D tensor (units, input features), got "
                          "Tensor[(4), float32]");
    t[1] = NN_TYPE(f32, 4, 3);
    nn_expect_infer_error("nn.dense", t, 2, NULL, 0, type,
                          "weight has 3 input features but data's last dimension is 5");
    t[1] = NN_TYPE(BYOCL_INT8, 4, 5);
    nn_expect_infer_error("nn.dense", t, 2, NULL, 0, type,
                          "weight dtype int8 does not match data dtype float32");
    t[1] = NN_TYPE(f32, 4, 5);
    nn_case_attr units[] = {NN_INT("units", 5)};
    nn_expect_infer_error("nn.dense", t, 2, units, 1, type, "units=5 but weight has 4 units");
    nn_case_attr zero_units[] = {NN_INT("units", 0)};
    nn_expect_infer_error("nn.dense", t, 2, zero_units, 1, BYOCL_ERR_INVALID,
                          "units must be positive, got 0");
    nn_case_attr out_dtype[] = {NN_STR("out_dtype", "f32")};
    nn_expect_infer_error("nn.dense", t, 2, out_dtype, 1, BYOCL_ERR_INVALID,
                          "out_dtype \"f32\" is not a dtype");
    t[0] = byocl_type_tensor(f32, 0, NULL);
    nn_expect_infer_error("nn.dense", t, 2, NULL, 0, type, "data must have at least 1 dimension");
}

static void test_batch_norm_errors(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    const byocl_status type = BYOCL_ERR_TYPE;
    byocl_type t[5] = {NN_TYPE(f32, 1, 3, 4, 4), NN_TYPE(f32, 3), NN_TYPE(f32, 3),
                       NN_TYPE(f32, 3), NN_TYPE(f32, 3)};
    t[1] = NN_TYPE(f32, 4);
    nn_expect_infer_error("nn.batch_norm", t, 5, NULL, 0, type,
                          "gamma must have shape (3) to match data axis 1, got "
                          "Tensor[(4), float32]");
    t[1] = NN_TYPE(f32, 3);
    t[2] = NN_TYPE(f32, 1, 3);
    nn_expect_infer_error("nn.batch_norm", t, 5, NULL, 0, type,
                          "beta must have shape (3) to match data axis 1, got "
                          "Tensor[(1, 3), float32]");
    t[2] = NN_TYPE(f32, 3);
    t[4] = NN_TYPE(BYOCL_FLOAT16, 3);
    nn_expect_infer_error("nn.batch_norm", t, 5, NULL, 0, type,
                          "moving_var dtype float16 does not match data dtype float32");
    t[4] = NN_TYPE(f32, 3);
    nn_case_attr axis[] = {NN_INT("axis", 4)};
    nn_expect_infer_error("nn.batch_norm", t, 5, axis, 1, type,
                          "axis 4 is out of range for a 4-D tensor");
    /* axis=-1 picks the last dimension (4), which the vectors do not match */
    nn_case_attr last[] = {NN_INT("axis", -1)};
    nn_expect_infer_error("nn.batch_norm", t, 5, last, 1, type,
                          "gamma must have shape (4) to match data axis 3, got "
                          "Tensor[(3), float32]");
    nn_expect_module_error("nn.batch_norm", t, 4, NULL, 0, BYOCL_ERR_INVALID,
                           "nn.batch_norm takes 5 arguments but was given 4");
}

static void test_bias_add_errors(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    const byocl_status type = BYOCL_ERR_TYPE;
    byocl_type t[2] = {NN_TYPE(f32, 2, 3, 5), NN_TYPE(f32, 5)};
    nn_expect_infer_error("nn.bias_add", t, 2, NULL, 0, type,
                          "bias must have shape (3) to match data axis 1, got "
                          "Tensor[(5), float32]");
    nn_case_attr minus4[] = {NN_INT("axis", -4)};
    nn_expect_infer_error("nn.bias_add", t, 2, minus4, 1, type,
                          "axis -4 is out of range for a 3-D tensor");
    t[1] = NN_TYPE(BYOCL_INT32, 3);
    nn_expect_infer_error("nn.bias_add", t, 2, NULL, 0, type,
                          "bias dtype int32 does not match data dtype float32");
    t[1] = NN_TYPE(f32, 3);
    nn_expect_module_error("nn.bias_add", t, 2, minus4, 1, type,
                           "axis -4 is out of range for a 3-D tensor");
}

static void test_softmax_flatten_relu_errors(void **state)
{
    const byocl_status type = BYOCL_ERR_TYPE;
    byocl_type ints = NN_TYPE(BYOCL_INT32, 2, 3);
    nn_expect_infer_error("nn.softmax", &ints, 1, NULL, 0, type,
                          "data must be a float tensor, got Tensor[(2, 3), int32]");
    byocl_type floats = NN_TYPE(BYOCL_FLOAT32, 2, 3);
    nn_case_attr axis2[] = {NN_INT("axis", 2)};
    nn_expect_infer_error("nn.softmax", &floats, 1, axis2, 1, type,
                          "axis 2 is out of range for a 2-D tensor");
    byocl_type scalar = byocl_type_tensor(BYOCL_FLOAT32, 0, NULL);
    nn_expect_infer_error("nn.batch_flatten", &scalar, 1, NULL, 0, type,
                          "data must have at least 1 dimension");
    nn_case_attr alpha[] = {NN_STR("alpha", "x")};
    nn_expect_infer_error("nn.leaky_relu", &floats, 1, alpha, 1, BYOCL_ERR_INVALID,
                          "bad value for attribute 'alpha' of nn.leaky_relu: expected a number, "
                          "got \"x\"");
    nn_expect_module_error("nn.relu", &floats, 1, alpha, 1, BYOCL_ERR_INVALID,
                           "nn.relu takes no attributes, but was given 'alpha'");
}

/* Relations whose results the cases do not cover: tuple typing and dtype passthrough. */
static void test_result_types(void **state)
{
    byocl_module *m = NULL;
    byocl_error err;
    byocl_type t[5] = {NN_TYPE(BYOCL_FLOAT16, 2, 8), NN_TYPE(BYOCL_FLOAT16, 8),
                       NN_TYPE(BYOCL_FLOAT16, 8), NN_TYPE(BYOCL_FLOAT16, 8),
                       NN_TYPE(BYOCL_FLOAT16, 8)};
    int call = nn_case_module("nn.batch_norm", t, 5, NULL, 0, &m, &err);
    if (call < 0)
        fail_msg("%s", err.msg);
    char buf[256];
    assert_string_equal(byocl_type_str(byocl_node_type(byocl_module_find(m, "main"), call), buf,
                                       sizeof buf),
                        "(Tensor[(2, 8), float16], Tensor[(8), float16], Tensor[(8), float16])");
    byocl_module_free(m);
    byocl_type u8 = NN_TYPE(BYOCL_UINT8, 1, 3, 2);
    call = nn_case_module("nn.batch_flatten", &u8, 1, NULL, 0, &m, &err);
    assert_true(call >= 0);
    assert_string_equal(byocl_type_str(byocl_node_type(byocl_module_find(m, "main"), call), buf,
                                       sizeof buf),
                        "Tensor[(1, 6), uint8]");
    byocl_module_free(m);
}

static void test_kernel_rejects_bad_calls(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    byocl_type in[5] = {NN_TYPE(f32, 1, 3, 2, 2), NN_TYPE(f32, 4), NN_TYPE(f32, 3),
                        NN_TYPE(f32, 3), NN_TYPE(f32, 3)};
    byocl_type out[3] = {in[0], NN_TYPE(f32, 3), NN_TYPE(f32, 3)};
    nn_expect_ref_error("nn.batch_norm", in, 5, out, 3,
                        "nn.batch_norm kernel: input 1 has 4 elements, expected 3");
    in[1] = NN_TYPE(f32, 3);
    out[2] = NN_TYPE(f32, 2);
    nn_expect_ref_error("nn.batch_norm", in, 5, out, 3,
                        "nn.batch_norm kernel: output has shape (2), expected (3)");
    nn_expect_ref_error("nn.bias_add", in, 2, out, 2,
                        "nn.bias_add kernel takes 2 inputs and 1 outputs, got 2 and 2");
    byocl_type dense_in[2] = {NN_TYPE(f32, 2, 5), NN_TYPE(f32, 3, 5)};
    byocl_type dense_out = NN_TYPE(f32, 3, 2);
    nn_expect_ref_error("nn.dense", dense_in, 2, &dense_out, 1,
                        "nn.dense kernel: output has shape (3, 2), expected (2, 3)");
    byocl_type relu_out = NN_TYPE(f32, 1, 3, 4);
    nn_expect_ref_error("nn.relu", in, 1, &relu_out, 1,
                        "nn.relu kernel: output has shape (1, 3, 4), expected (1, 3, 2, 2)");
    nn_expect_ref_error("nn.batch_flatten", in, 1, &relu_out, 1,
                        "nn.batch_flatten kernel: output has shape (1, 3, 4), expected (1, 12)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_dense_errors),
        cmocka_unit_test(test_batch_norm_errors),
        cmocka_unit_test(test_bias_add_errors),
        cmocka_unit_test(test_softmax_flatten_relu_errors),
        cmocka_unit_test(test_result_types),
        cmocka_unit_test(test_kernel_rejects_bad_calls),
    };
    return nn_run_suite("ops_nn", nn_cases, N_OF(nn_cases), tests, N_OF(tests));
}
