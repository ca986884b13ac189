/* nn.dense, nn.batch_matmul, nn.batch_norm, nn.layer_norm, nn.bias_add, nn.relu, nn.leaky_relu,
 * nn.softmax, nn.log_softmax and nn.batch_flatten: type relations, attribute checks and the reference kernels against
 * numpy (tests/gen/gen_ops_nn.py). */
#include "ops_case.h"

#include "fixtures/ops/nn_cases.h"

static void test_schema(void **state)
{
    static const op_attr_spec dense[] = {{"units", "None"}, {"out_dtype", "\"\""}};
    static const op_attr_spec batch_norm[] = {
        {"axis", "1"}, {"epsilon", "1e-05f"}, {"center", "True"}, {"scale", "True"}};
    static const op_attr_spec bias_axis[] = {{"axis", "1"}};
    static const op_attr_spec alpha[] = {{"alpha", "0.25f"}};
    static const op_attr_spec softmax_axis[] = {{"axis", "-1"}};
    static const op_attr_spec layer_norm[] = {
        {"axis", "-1"}, {"epsilon", "1e-05f"}, {"center", "True"}, {"scale", "True"}};
    static const op_attr_spec batch_matmul[] = {
        {"out_dtype", "\"\""}, {"transpose_a", "False"}, {"transpose_b", "True"}};
    op_assert_schema("nn.dense", dense, N_ITEMS(dense));
    op_assert_schema("nn.batch_matmul", batch_matmul, N_ITEMS(batch_matmul));
    op_assert_schema("nn.batch_norm", batch_norm, N_ITEMS(batch_norm));
    op_assert_schema("nn.bias_add", bias_axis, N_ITEMS(bias_axis));
    op_assert_schema("nn.relu", NULL, 0);
    op_assert_schema("nn.leaky_relu", alpha, N_ITEMS(alpha));
    op_assert_schema("nn.softmax", softmax_axis, N_ITEMS(softmax_axis));
    op_assert_schema("nn.log_softmax", softmax_axis, N_ITEMS(softmax_axis));
    op_assert_schema("nn.layer_norm", layer_norm, N_ITEMS(layer_norm));
    op_assert_schema("nn.batch_flatten", NULL, 0);
}

static void test_dense_errors(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    const byocl_status type = BYOCL_ERR_TYPE;
    byocl_type t[2] = {OP_TYPE(f32, 2, 5), OP_TYPE(f32, 4)};
    op_expect_type_error("nn.dense", t, 2, "", type,
                         "weight must be a 2-D tensor (units, input features), got "
                         "Tensor[(4), float32]");
    t[1] = OP_TYPE(f32, 4, 3);
    op_expect_type_error("nn.dense", t, 2, "", type,
                         "weight has 3 input features but data's last dimension is 5");
    t[1] = OP_TYPE(BYOCL_INT8, 4, 5);
    op_expect_type_error("nn.dense", t, 2, "", type,
                         "weight dtype int8 does not match data dtype float32");
    t[1] = OP_TYPE(f32, 4, 5);
    op_expect_type_error("nn.dense", t, 2, "units=5", type, "units=5 but weight has 4 units");
    op_expect_build_error("nn.dense", t, 2, "units=0", BYOCL_ERR_INVALID,
                          "units must be positive, got 0");
    op_expect_build_error("nn.dense", t, 2, "out_dtype=\"f32\"", BYOCL_ERR_INVALID,
                          "out_dtype \"f32\" is not a dtype");
    t[0] = byocl_type_tensor(f32, 0, NULL);
    op_expect_type_error("nn.dense", t, 2, "", type, "data must have at least 1 dimension");
}

static void test_batch_matmul_errors(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    const byocl_status type = BYOCL_ERR_TYPE;
    byocl_type t[2] = {OP_TYPE(f32, 2, 3, 4), OP_TYPE(f32, 4, 3)};
    op_expect_type_error("nn.batch_matmul", t, 2, "", type,
                         "tensor_a (2, 3, 4) and tensor_b (4, 3) must both be 3-D (batch, rows, "
                         "columns)");
    t[1] = OP_TYPE(f32, 2, 5, 3);
    op_expect_type_error("nn.batch_matmul", t, 2, "", type,
                         "tensor_a (2, 3, 4) has 4 columns to reduce but tensor_b (2, 5, 3) "
                         "(transposed) has 3");
    t[1] = OP_TYPE(f32, 2, 5, 4);
    op_expect_type_error("nn.batch_matmul", t, 2, "transpose_a=True", type,
                         "tensor_a (2, 3, 4) (transposed) has 3 columns to reduce but tensor_b "
                         "(2, 5, 4) (transposed) has 4");
    t[1] = OP_TYPE(f32, 3, 5, 4);
    op_expect_type_error("nn.batch_matmul", t, 2, "", type,
                         "the batches of tensor_a (2, 3, 4) and tensor_b (3, 5, 4) differ and "
                         "neither is 1");
    t[1] = OP_TYPE(BYOCL_INT8, 2, 5, 4);
    op_expect_type_error("nn.batch_matmul", t, 2, "", type,
                         "tensor_b dtype int8 does not match data dtype float32");
    t[1] = OP_TYPE(f32, 2, 5, 4);
    op_expect_build_error("nn.batch_matmul", t, 2, "out_dtype=\"f32\"", BYOCL_ERR_INVALID,
                          "out_dtype \"f32\" is not a dtype");
}

static void test_batch_norm_errors(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    const byocl_status type = BYOCL_ERR_TYPE;
    byocl_type t[5] = {OP_TYPE(f32, 1, 3, 4, 4), OP_TYPE(f32, 4), OP_TYPE(f32, 3),
                       OP_TYPE(f32, 3), OP_TYPE(f32, 3)};
    op_expect_type_error("nn.batch_norm", t, 5, "", type,
                         "gamma must have shape (3) to match data axis 1, got "
                         "Tensor[(4), float32]");
    t[1] = OP_TYPE(f32, 3);
    t[2] = OP_TYPE(f32, 1, 3);
    op_expect_type_error("nn.batch_norm", t, 5, "", type,
                         "beta must have shape (3) to match data axis 1, got "
                         "Tensor[(1, 3), float32]");
    t[2] = OP_TYPE(f32, 3);
    t[4] = OP_TYPE(BYOCL_FLOAT16, 3);
    op_expect_type_error("nn.batch_norm", t, 5, "", type,
                         "moving_var dtype float16 does not match data dtype float32");
    t[4] = OP_TYPE(f32, 3);
    op_expect_type_error("nn.batch_norm", t, 5, "axis=4", type,
                         "axis 4 is out of range for a 4-D tensor");
    /* axis=-1 picks the last dimension (4), which the vectors do not match */
    op_expect_type_error("nn.batch_norm", t, 5, "axis=-1", type,
                         "gamma must have shape (4) to match data axis 3, got "
                         "Tensor[(3), float32]");
    op_expect_build_error("nn.batch_norm", t, 4, "", BYOCL_ERR_INVALID,
                          "nn.batch_norm takes 5 arguments but was given 4");
}

static void test_bias_add_errors(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    const byocl_status type = BYOCL_ERR_TYPE;
    byocl_type t[2] = {OP_TYPE(f32, 2, 3, 5), OP_TYPE(f32, 5)};
    op_expect_type_error("nn.bias_add", t, 2, "", type,
                         "bias must have shape (3) to match data axis 1, got "
                         "Tensor[(5), float32]");
    op_expect_type_error("nn.bias_add", t, 2, "axis=-4", type,
                         "axis -4 is out of range for a 3-D tensor");
    t[1] = OP_TYPE(BYOCL_INT32, 3);
    op_expect_type_error("nn.bias_add", t, 2, "", type,
                         "bias dtype int32 does not match data dtype float32");
}

static void test_softmax_flatten_relu_errors(void **state)
{
    const byocl_status type = BYOCL_ERR_TYPE;
    byocl_type ints = OP_TYPE(BYOCL_INT32, 2, 3);
    op_expect_type_error("nn.softmax", &ints, 1, "", type,
                         "data must be a float tensor, got Tensor[(2, 3), int32]");
    byocl_type floats = OP_TYPE(BYOCL_FLOAT32, 2, 3);
    op_expect_type_error("nn.softmax", &floats, 1, "axis=2", type,
                         "axis 2 is out of range for a 2-D tensor");
    byocl_type scalar = byocl_type_tensor(BYOCL_FLOAT32, 0, NULL);
    op_expect_type_error("nn.batch_flatten", &scalar, 1, "", type,
                         "data must have at least 1 dimension");
    op_expect_build_error("nn.leaky_relu", &floats, 1, "alpha=\"x\"", BYOCL_ERR_INVALID,
                          "bad value for attribute 'alpha' of nn.leaky_relu: expected a number, "
                          "got \"x\"");
    op_expect_build_error("nn.relu", &floats, 1, "alpha=\"x\"", BYOCL_ERR_INVALID,
                          "nn.relu takes no attributes, but was given 'alpha'");
}

static void test_log_softmax_layer_norm_errors(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    const byocl_status type = BYOCL_ERR_TYPE;
    byocl_type ints = OP_TYPE(BYOCL_INT32, 2, 3);
    op_expect_type_error("nn.log_softmax", &ints, 1, "", type,
                         "data must be a float tensor, got Tensor[(2, 3), int32]");
    byocl_type floats = OP_TYPE(f32, 2, 3);
    op_expect_type_error("nn.log_softmax", &floats, 1, "axis=-3", type,
                         "axis -3 is out of range for a 2-D tensor");
    byocl_type t[3] = {OP_TYPE(f32, 2, 3, 4), OP_TYPE(f32, 4), OP_TYPE(f32, 4)};
    op_expect_type_error("nn.layer_norm", t, 3, "axis=3", type,
                         "axis 3 is out of range for a 3-D tensor");
    op_expect_type_error("nn.layer_norm", t, 3, "axis=1", type,
                         "gamma must have shape (3) to match data axis 1, got "
                         "Tensor[(4), float32]");
    t[2] = OP_TYPE(f32, 1, 4);
    op_expect_type_error("nn.layer_norm", t, 3, "", type,
                         "beta must have shape (4) to match data axis 2, got "
                         "Tensor[(1, 4), float32]");
    t[2] = OP_TYPE(BYOCL_FLOAT16, 4);
    op_expect_type_error("nn.layer_norm", t, 3, "", type,
                         "beta dtype float16 does not match data dtype float32");
    byocl_type it[3] = {OP_TYPE(BYOCL_INT8, 2, 4), OP_TYPE(BYOCL_INT8, 4),
                        OP_TYPE(BYOCL_INT8, 4)};
    op_expect_type_error("nn.layer_norm", it, 3, "", type,
                         "data must be a float tensor, got Tensor[(2, 4), int8]");
    t[2] = t[1];
    op_expect_build_error("nn.layer_norm", t, 3, "epsilon=-0.001f", BYOCL_ERR_INVALID,
                          "epsilon must be >= 0 (it is added to the variance), got -0.001");
}

/* The inferred type of op(types), as `byocl print` writes it. */
static void expect_result_type(const char *op, const byocl_type *types, int n, const char *want)
{
    op_case c;
    op_case_build(&c, op, types, n, false, "");
    op_case_expect_ok(&c, op);
    char buf[256];
    assert_string_equal(byocl_type_str(byocl_node_type(c.fn, c.call), buf, sizeof buf), want);
    op_case_free(&c);
}

/* Relations whose results the cases do not cover: tuple typing and dtype passthrough. */
static void test_result_types(void **state)
{
    byocl_type t[5] = {OP_TYPE(BYOCL_FLOAT16, 2, 8), OP_TYPE(BYOCL_FLOAT16, 8),
                       OP_TYPE(BYOCL_FLOAT16, 8), OP_TYPE(BYOCL_FLOAT16, 8),
                       OP_TYPE(BYOCL_FLOAT16, 8)};
    expect_result_type("nn.batch_norm", t, 5,
                       "(Tensor[(2, 8), float16], Tensor[(8), float16], Tensor[(8), float16])");
    byocl_type u8 = OP_TYPE(BYOCL_UINT8, 1, 3, 2);
    expect_result_type("nn.batch_flatten", &u8, 1, "Tensor[(1, 6), uint8]");
}

static void test_kernel_rejects_bad_calls(void **state)
{
    const byocl_dtype f32 = BYOCL_FLOAT32;
    const byocl_status bad = BYOCL_ERR_INVALID;
    byocl_type in[5] = {OP_TYPE(f32, 1, 3, 2, 2), OP_TYPE(f32, 4), OP_TYPE(f32, 3),
                        OP_TYPE(f32, 3), OP_TYPE(f32, 3)};
    byocl_type out[3] = {in[0], OP_TYPE(f32, 3), OP_TYPE(f32, 3)};
    op_expect_ref_error("nn.batch_norm", in, 5, out, 3, bad,
                        "nn.batch_norm kernel: input 1 has 4 elements, expected 3");
    in[1] = OP_TYPE(f32, 3);
    out[2] = OP_TYPE(f32, 2);
    op_expect_ref_error("nn.batch_norm", in, 5, out, 3, bad,
                        "nn.batch_norm kernel: output has shape (2), expected (3)");
    op_expect_ref_error("nn.bias_add", in, 2, out, 2, bad,
                        "nn.bias_add kernel takes 2 inputs and 1 outputs, got 2 and 2");
    byocl_type dense_in[2] = {OP_TYPE(f32, 2, 5), OP_TYPE(f32, 3, 5)};
    byocl_type dense_out = OP_TYPE(f32, 3, 2);
    op_expect_ref_error("nn.dense", dense_in, 2, &dense_out, 1, bad,
                        "nn.dense kernel: output has shape (3, 2), expected (2, 3)");
    byocl_type relu_out = OP_TYPE(f32, 1, 3, 4);
    op_expect_ref_error("nn.relu", in, 1, &relu_out, 1, bad,
                        "nn.relu kernel: output has shape (1, 3, 4), expected (1, 3, 2, 2)");
    op_expect_ref_error("nn.batch_flatten", in, 1, &relu_out, 1, bad,
                        "nn.batch_flatten kernel: output has shape (1, 3, 4), expected (1, 12)");
    op_expect_ref_error("nn.log_softmax", in, 1, &relu_out, 1, bad,
                        "nn.log_softmax kernel: output has shape (1, 3, 4), expected (1, 3, 2, "
                        "2)");
    byocl_type ln_in[3] = {OP_TYPE(f32, 2, 5), OP_TYPE(f32, 4), OP_TYPE(f32, 5)};
    byocl_type ln_out = OP_TYPE(f32, 2, 5);
    op_expect_ref_error("nn.layer_norm", ln_in, 3, &ln_out, 1, bad,
                        "nn.layer_norm kernel: input 1 has 4 elements, expected 5");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_dense_errors),
        cmocka_unit_test(test_batch_matmul_errors),
        cmocka_unit_test(test_batch_norm_errors),
        cmocka_unit_test(test_bias_add_errors),
        cmocka_unit_test(test_softmax_flatten_relu_errors),
        cmocka_unit_test(test_log_softmax_layer_norm_errors),
        cmocka_unit_test(test_result_types),
        cmocka_unit_test(test_kernel_rejects_bad_calls),
    };
    return op_run_suite("ops_nn", nn_cases, N_ITEMS(nn_cases), tests, N_ITEMS(tests));
}
