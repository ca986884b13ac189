/* byocl_extract: a partitioned region as a standalone module that runs on the reference
 * executor (the build that failed in the thread with "Expr is not existing in storage
 * plan"), its parameters named after the values they receive. */
#include "test_support.h"

#include "byocl/passes.h"
#include "partition_util.h"

#define HEADER "#[version = \"0.0.5\"]\n"

static byocl_module *partitioned_seed(void)
{
    byocl_module *m = NULL;
    byocl_error err;
    assert_int_equal(byocl_builtin_build("seed", &m, &err), BYOCL_OK);
    assert_int_equal(byocl_partition(m, NULL, &err), BYOCL_OK);
    return m;
}

static void assert_inputs(const byocl_extract_input *in, int n, const char *const *want)
{
    for (int k = 0; k < n; k++) {
        assert_string_equal(in[k].param, want[2 * k]);
        assert_string_equal(in[k].source, want[2 * k + 1]);
    }
}

/* The seed's region alone: its parameters are the model's data and bn_* and the host add
 * %0; run on the reference executor it gives the region's three values, which the full
 * model returns as relu, abs(mean), abs(var). */
static void test_seed_region_runs_alone(void **state)
{
    (void)state;
    byocl_module *m = partitioned_seed();
    byocl_module *x = NULL;
    byocl_extract_input *in = NULL;
    int n_in = 0;
    byocl_error err;
    assert_int_equal(byocl_extract_with_inputs(m, "0", &x, &in, &n_in, &err), BYOCL_OK);
    pu_assert_prints(
        x, HEADER
        "def @main(%data: Tensor[(1, 3, 224, 224), float32], %n0_add: Tensor[(16, 3, 3, 3), "
        "float32], %bn_gamma: Tensor[(16), float32], %bn_beta: Tensor[(16), float32], "
        "%bn_mean: Tensor[(16), float32], %bn_var: Tensor[(16), float32]) -> "
        "(Tensor[(1, 16, 224, 224), float32], Tensor[(16), float32], Tensor[(16), float32]) {\n"
        "  %0 = nn.conv2d(%data, %n0_add, padding=[1, 1, 1, 1], channels=16, "
        "kernel_size=[3, 3]);\n"
        "  %1 = nn.batch_norm(%0, %bn_gamma, %bn_beta, %bn_mean, %bn_var);\n"
        "  %2 = %1.0;\n"
        "  %3 = nn.relu(%2);\n"
        "  %4 = %1.1;\n"
        "  %5 = %1.2;\n"
        "  (%3, %4, %5)\n"
        "}\n");
    assert_int_equal(n_in, 6);
    static const char *const want[] = {"data",    "%data",    "n0_add",  "%0 (add)",
                                       "bn_gamma", "%bn_gamma", "bn_beta", "%bn_beta",
                                       "bn_mean", "%bn_mean", "bn_var",  "%bn_var"};
    assert_inputs(in, n_in, want);

    /* Full model: data, weight, bn_gamma, bn_beta, bn_mean, bn_var, w0. */
    int n_full;
    byocl_tensor **full_in = pu_random_inputs(m, 21, &n_full);
    int n_full_out;
    byocl_tensor **full_out = pu_run(m, full_in, n_full, &n_full_out);
    /* The region's inputs: data, weight + w0 (the host add, computed here), bn_*. */
    byocl_tensor *sum = byocl_tensor_clone(full_in[1], NULL);
    float *s = byocl_tensor_data(sum);
    const float *w0 = byocl_tensor_cdata(full_in[6]);
    for (int64_t i = 0; i < byocl_tensor_numel(sum); i++)
        s[i] += w0[i];
    byocl_tensor *region_in[6] = {full_in[0], sum, full_in[2], full_in[3], full_in[4], full_in[5]};
    int n_out;
    byocl_tensor **out = pu_run(x, region_in, 6, &n_out);
    assert_int_equal(n_out, 3);
    assert_true(byocl_tensor_equal(out[0], full_out[0]));
    for (int k = 1; k < 3; k++) {
        float *v = byocl_tensor_data(out[k]);
        for (int64_t i = 0; i < byocl_tensor_numel(out[k]); i++)
            v[i] = v[i] < 0 ? -v[i] : v[i];
        assert_true(byocl_tensor_equal(out[k], full_out[k]));
    }
    byocl_tensors_free(out, n_out);
    byocl_tensor_unref(sum);
    byocl_tensors_free(full_out, n_full_out);
    byocl_tensors_free(full_in, n_full);
    byocl_extract_inputs_free(in, n_in);
    byocl_module_free(x);

    /* By symbol: the same module; the Compiler attributes are gone. */
    assert_int_equal(byocl_extract(m, "opencl_main_0", &x, &err), BYOCL_OK);
    assert_int_equal(byocl_module_num_functions(x), 1);
    assert_int_equal(byocl_function_attrs(byocl_module_find(x, "main"))->n, 0);
    pu_assert_round_trips(x);
    byocl_module_free(x);
    byocl_module_free(m);
}

/* Every naming case: a tuple item of another region's call, an op's result, a named
 * binding, a parameter, a constant passed as an argument, a name taken twice; a global
 * function the region calls comes along. */
static void test_naming_rule(void **state)
{
    (void)state;
    byocl_module *m = pu_parse(
        HEADER
        "def @main(%x: Tensor[(4), float32], %n3_exp: Tensor[(4), float32]) {\n"
        "  %0 = annotation.compiler_begin(%x, compiler=\"a\");\n"
        "  %1 = nn.relu(%0);\n"
        "  %2 = abs(%0);\n"
        "  %3 = annotation.compiler_end(%1, compiler=\"a\");\n"
        "  %4 = annotation.compiler_end(%2, compiler=\"a\");\n"
        "  %5 = exp(%n3_exp);\n"
        "  %x0 = add(%5, %n3_exp);\n"
        "  %6 = annotation.compiler_begin(%3, compiler=\"b\");\n"
        "  %7 = annotation.compiler_begin(%4, compiler=\"b\");\n"
        "  %8 = annotation.compiler_begin(%5, compiler=\"b\");\n"
        "  %9 = annotation.compiler_begin(%x0, compiler=\"b\");\n"
        "  %10 = annotation.compiler_begin(%n3_exp, compiler=\"b\");\n"
        "  %11 = add(%6, %7);\n"
        "  %12 = multiply(%8, %9);\n"
        "  %13 = @twice(%11);\n"
        "  %14 = add(%13, %12);\n"
        "  %15 = add(%14, %10);\n"
        "  %16 = maximum(%15, 0f);\n"
        "  annotation.compiler_end(%16, compiler=\"b\")\n"
        "}\n"
        "\n"
        "def @twice(%t: Tensor[(4), float32]) {\n"
        "  add(%t, %t)\n"
        "}\n");
    byocl_module *original = pu_clone(m);
    byocl_partition_options opt = {.constants_as_args = true};
    byocl_error err;
    assert_int_equal(byocl_partition(m, &opt, &err), BYOCL_OK);
    pu_assert_prints(
        m, HEADER
        "def @main(%x: Tensor[(4), float32], %n3_exp: Tensor[(4), float32]) -> "
        "Tensor[(4), float32] {\n"
        "  %0 = @a_main_0(%x);\n"
        "  %1 = %0.0;\n"
        "  %2 = %0.1;\n"
        "  %3 = exp(%n3_exp);\n"
        "  %x0 = add(%3, %n3_exp);\n"
        "  @b_main_1(%1, %2, %3, %x0, %n3_exp, 0f)\n"
        "}\n"
        "\n"
        "def @twice(%t: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
        "  add(%t, %t)\n"
        "}\n"
        "\n"
        "def @a_main_0(%a_0_i0: Tensor[(4), float32], Compiler=\"a\", Primitive=1, Inline=1, "
        "global_symbol=\"a_main_0\") -> (Tensor[(4), float32], Tensor[(4), float32]) {\n"
        "  %1 = nn.relu(%a_0_i0);\n"
        "  %2 = abs(%a_0_i0);\n"
        "  (%1, %2)\n"
        "}\n"
        "\n"
        "def @b_main_1(%b_1_i0: Tensor[(4), float32], %b_1_i1: Tensor[(4), float32], "
        "%b_1_i2: Tensor[(4), float32], %b_1_i3: Tensor[(4), float32], %b_1_i4: Tensor[(4), "
        "float32], %b_1_i5: float32, Compiler=\"b\", Primitive=1, Inline=1, "
        "global_symbol=\"b_main_1\") -> Tensor[(4), float32] {\n"
        "  %11 = add(%b_1_i0, %b_1_i1);\n"
        "  %12 = multiply(%b_1_i2, %b_1_i3);\n"
        "  %13 = @twice(%11);\n"
        "  %14 = add(%13, %12);\n"
        "  %15 = add(%14, %b_1_i4);\n"
        "  maximum(%15, %b_1_i5)\n"
        "}\n");
    pu_assert_same_outputs(original, m, 9);

    byocl_module *x = NULL;
    byocl_extract_input *in = NULL;
    int n_in = 0;
    assert_int_equal(byocl_extract_with_inputs(m, "b_main_1", &x, &in, &n_in, &err), BYOCL_OK);
    assert_int_equal(n_in, 6);
    static const char *const want[] = {
        "n1_a_main_0_0", "%1 (%0.0)", "n2_a_main_0_1", "%2 (%0.1)", "n3_exp",
        "%3 (exp)",      "x0",        "%x0 (add)",     "n3_exp_4",  "%n3_exp",
        "const5",        "a constant float32"};
    assert_inputs(in, n_in, want);
    pu_assert_prints(
        x, HEADER
        "def @main(%n1_a_main_0_0: Tensor[(4), float32], %n2_a_main_0_1: Tensor[(4), float32], "
        "%n3_exp: Tensor[(4), float32], %x0: Tensor[(4), float32], %n3_exp_4: Tensor[(4), "
        "float32], %const5: float32) -> Tensor[(4), float32] {\n"
        "  %11 = add(%n1_a_main_0_0, %n2_a_main_0_1);\n"
        "  %12 = multiply(%n3_exp, %x0);\n"
        "  %13 = @twice(%11);\n"
        "  %14 = add(%13, %12);\n"
        "  %15 = add(%14, %n3_exp_4);\n"
        "  maximum(%15, %const5)\n"
        "}\n"
        "\n"
        "def @twice(%t: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
        "  add(%t, %t)\n"
        "}\n");
    /* It runs: 2 * (a + b) + c * d + e, then max with the constant. */
    static const int64_t dims[1] = {4};
    static const float a[4] = {1, -2, 3, -4}, b[4] = {0.5f, 0.5f, -8, 1}, c[4] = {2, 2, 2, 2},
                       d[4] = {1, -1, 0.5f, 0}, e[4] = {-1, 1, -1, 1};
    const float *vals[5] = {a, b, c, d, e};
    byocl_tensor *args[6];
    for (int k = 0; k < 5; k++)
        args[k] = ts_tensor_f32(1, dims, vals[k]);
    args[5] = ts_tensor_f32(0, NULL, (const float[1]){0.0f});
    int n_out;
    byocl_tensor **out = pu_run(x, args, 6, &n_out);
    static const float expect[4] = {4, 0, 0, 0};
    /* 2*1.5 + 2 - 1 = 4; 2*(-1.5) - 2 + 1 = -4 -> 0; 2*(-5) + 1 - 1 = -10 -> 0;
     * 2*(-3) + 0 + 1 = -5 -> 0 */
    ts_assert_f32_close(out[0], expect, 4, 0, 0);
    byocl_tensors_free(out, n_out);
    for (int k = 0; k < 6; k++)
        byocl_tensor_unref(args[k]);
    byocl_extract_inputs_free(in, n_in);
    byocl_module_free(x);
    byocl_module_free(original);
    byocl_module_free(m);
}

static void test_errors(void **state)
{
    (void)state;
    byocl_module *m = partitioned_seed();
    byocl_module *x = (byocl_module *)1;
    byocl_error err;
    PU_ASSERT_ERROR(byocl_extract(m, "7", &x, &err), err, BYOCL_ERR_NOT_FOUND,
                    "no region '7' in the module (its regions: opencl_main_0)");
    assert_null(x);
    PU_ASSERT_ERROR(byocl_extract(m, "main", &x, &err), err, BYOCL_ERR_NOT_FOUND,
                    "no region 'main' in the module (its regions: opencl_main_0)");
    byocl_module_free(m);
    assert_int_equal(byocl_builtin_build("seed", &m, &err), BYOCL_OK);
    PU_ASSERT_ERROR(byocl_extract(m, "0", &x, &err), err, BYOCL_ERR_NOT_FOUND,
                    "the module has no partitioned regions (functions with a Compiler "
                    "attribute); partition it first (byocl partition)");
    PU_ASSERT_ERROR(byocl_extract(m, NULL, &x, &err), err, BYOCL_ERR_INVALID,
                    "byocl_extract: bad arguments");
    byocl_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_region_runs_alone),
        cmocka_unit_test(test_naming_rule),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
