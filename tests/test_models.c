/* Built-in models: the registry, each model's structure against torchvision's layer lists
 * (op counts, FLOPs and weight counts from tests/gen/gen_models_flops.py), deterministic
 * weights, and runs on the reference executor (builtin:seed against numpy values from
 * tests/gen/gen_models_seed.py; resnet18 and mobilenet_v2 logits for sanity). */
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/builtin_util.h"

/* ------------------------------------------------------------------ helpers */

static byocl_module *build_model(const char *name)
{
    byocl_module *m = NULL;
    byocl_error err;
    byocl_error_clear(&err);
    if (byocl_builtin_build(name, &m, &err) != BYOCL_OK)
        fail_msg("builtin:%s: %s", name, err.msg);
    assert_non_null(m);
    /* returned typed and verified: verifying again with types required must pass */
    if (byocl_verify(m, true, &err) != BYOCL_OK)
        fail_msg("builtin:%s does not verify: %s", name, err.msg);
    assert_int_equal(byocl_module_num_functions(m), 1);
    return m;
}

static byocl_function *main_of(const byocl_module *m)
{
    byocl_function *fn = byocl_module_find(m, "main");
    assert_non_null(fn);
    return fn;
}

static int count_op(const byocl_function *fn, const char *op)
{
    int n = 0;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        const char *name = byocl_node_op(fn, id);
        if (name && strcmp(name, op) == 0)
            n++;
    }
    return n;
}

static int count_kind(const byocl_function *fn, byocl_node_kind kind)
{
    int n = 0;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++)
        n += byocl_node_kind_of(fn, id) == kind;
    return n;
}

static bool is_op(const byocl_function *fn, int id, const char *op)
{
    const char *name = byocl_node_op(fn, id);
    return name && strcmp(name, op) == 0;
}

static const byocl_shape *node_shape(const byocl_function *fn, int id)
{
    const byocl_type *t = byocl_node_type(fn, id);
    assert_int_equal(t->kind, BYOCL_TYPE_TENSOR);
    return &t->shape;
}

/* 2 * multiply-accumulates of every conv2d and dense, from the inferred shapes. */
static int64_t conv_dense_flops(const byocl_function *fn)
{
    int64_t macs = 0;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        bool conv = is_op(fn, id, "nn.conv2d"), dense = is_op(fn, id, "nn.dense");
        if (!conv && !dense)
            continue;
        const byocl_shape *w = node_shape(fn, byocl_node_arg(fn, id, 1));
        int64_t per_output = conv ? w->dims[1] * w->dims[2] * w->dims[3] : w->dims[1];
        macs += byocl_shape_numel(node_shape(fn, id)) * per_output;
    }
    return 2 * macs;
}

static int64_t constant_values(const byocl_function *fn)
{
    int64_t n = 0;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++)
        if (byocl_node_kind_of(fn, id) == BYOCL_NODE_CONSTANT)
            n += byocl_tensor_numel(byocl_node_value(fn, id));
    return n;
}

static void assert_ints_attr(const byocl_function *fn, int id, const char *key, int n,
                             const int64_t *want)
{
    const int64_t *got = NULL;
    assert_int_equal(byocl_attrs_get_ints(byocl_node_attrs(fn, id), key, &got), n);
    for (int k = 0; k < n; k++)
        assert_int_equal(got[k], want[k]);
}

static void assert_f32_output_type(const byocl_type *t, int rank, const int64_t *dims)
{
    byocl_type want = byocl_type_tensor(BYOCL_FLOAT32, rank, dims);
    char got_s[128], want_s[128];
    if (!byocl_type_equal(t, &want))
        fail_msg("type %s, want %s", byocl_type_str(t, got_s, sizeof got_s),
                 byocl_type_str(&want, want_s, sizeof want_s));
}

/* Every batch_norm as TVM imports torchvision: epsilon 1e-05, result field 0 used. */
static void assert_batch_norms_torch_style(const byocl_function *fn)
{
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        if (!is_op(fn, id, "nn.batch_norm"))
            continue;
        assert_float_equal(byocl_attrs_get_float(byocl_node_attrs(fn, id), "epsilon", -1),
                           1e-5, 1e-12);
        assert_int_equal(byocl_node_kind_of(fn, id + 1), BYOCL_NODE_GETITEM);
        assert_int_equal(byocl_node_arg(fn, id + 1, 0), id);
        assert_int_equal(byocl_node_index(fn, id + 1), 0);
    }
}

/* Weights lie in the ranges builtin_util.h promises: conv/dense within the scaled
 * He-uniform bound of their fan-in, bn gamma and var in [0.5, 1.5], beta and mean in
 * [-0.1, 0.1] (closed: float32 rounding may reach an open bound). */
static void assert_weight_ranges(const byocl_function *fn)
{
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        bool conv = is_op(fn, id, "nn.conv2d"), dense = is_op(fn, id, "nn.dense");
        bool bn = is_op(fn, id, "nn.batch_norm");
        for (int k = 1; k < byocl_node_num_args(fn, id) && (conv || dense || bn); k++) {
            const byocl_tensor *t = byocl_node_value(fn, byocl_node_arg(fn, id, k));
            assert_non_null(t);
            const byocl_shape *s = byocl_tensor_shape(t);
            double lo, hi;
            if (bn) {
                lo = (k == 1 || k == 4) ? 0.5 : -0.1;
                hi = (k == 1 || k == 4) ? 1.5 : 0.1;
            } else {
                int64_t fan_in = conv ? s->dims[1] * s->dims[2] * s->dims[3] : s->dims[1];
                hi = BUILTIN_WEIGHT_GAIN * sqrt(6.0 / (double)fan_in);
                lo = -hi;
            }
            double min = INFINITY, max = -INFINITY;
            for (int64_t i = 0; i < byocl_tensor_numel(t); i++) {
                double v = byocl_tensor_get(t, i);
                min = v < min ? v : min;
                max = v > max ? v : max;
            }
            if (min < lo - 1e-6 || max > hi + 1e-6)
                fail_msg("node %d arg %d: values in [%g, %g], want [%g, %g]", id, k, min, max,
                         lo, hi);
            /* uniform draws fill their range: not a constant tensor or a wrong scale */
            if (byocl_tensor_numel(t) >= 64 && (max - min) < 0.8 * (hi - lo))
                fail_msg("node %d arg %d: values span only [%g, %g] of [%g, %g]", id, k, min,
                         max, lo, hi);
        }
    }
}

/* Runs @main on the reference executor; returns the outputs and how long it took. */
static byocl_tensor **run_reference(const byocl_module *m, byocl_tensor *const *inputs,
                                    int n_inputs, int want_outputs, double *seconds)
{
    byocl_tensor **outputs = NULL;
    int n_outputs = 0;
    byocl_error err;
    byocl_error_clear(&err);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (byocl_reference_run(m, "main", inputs, n_inputs, &outputs, &n_outputs, &err) !=
        BYOCL_OK)
        fail_msg("reference run: %s", err.msg);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (seconds)
        *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    assert_int_equal(n_outputs, want_outputs);
    return outputs;
}

/* ----------------------------------------------------------------- registry */

static void test_registry_lists_models(void **state)
{
    (void)state;
    assert_int_equal(byocl_builtin_count(), 3);
    assert_string_equal(byocl_builtin_name(0), "seed");
    assert_string_equal(byocl_builtin_name(1), "resnet18");
    assert_string_equal(byocl_builtin_name(2), "mobilenet_v2");
    for (int k = 0; k < 3; k++)
        assert_true(strlen(byocl_builtin_description(k)) > 20);
    assert_null(byocl_builtin_name(-1));
    assert_null(byocl_builtin_name(3));
    assert_null(byocl_builtin_description(3));
}

static void test_unknown_model_lists_known(void **state)
{
    (void)state;
    byocl_error err;
    byocl_module *sentinel = byocl_module_new();
    byocl_module *m = sentinel; /* a failed build sets it to NULL */
    assert_int_equal(byocl_builtin_build("foo", &m, &err), BYOCL_ERR_NOT_FOUND);
    assert_null(m);
    byocl_module_free(sentinel);
    assert_string_equal(err.msg, "unknown built-in model 'foo' (known: seed, resnet18, "
                                 "mobilenet_v2)");
    /* the prefix belongs to the CLI's MODEL syntax, not to the name */
    assert_int_equal(byocl_builtin_build("builtin:seed", &m, &err), BYOCL_ERR_NOT_FOUND);
    assert_string_equal(err.msg, "unknown built-in model 'builtin:seed' (known: seed, "
                                 "resnet18, mobilenet_v2)");
    assert_int_equal(byocl_builtin_build("", &m, NULL), BYOCL_ERR_NOT_FOUND);
    assert_int_equal(byocl_builtin_build(NULL, &m, &err), BYOCL_ERR_INVALID);
    assert_int_equal(byocl_builtin_build("seed", NULL, &err), BYOCL_ERR_INVALID);
}

static void test_build_without_error_record(void **state)
{
    (void)state;
    byocl_module *m = NULL;
    assert_int_equal(byocl_builtin_build("seed", &m, NULL), BYOCL_OK);
    assert_non_null(m);
    byocl_module_free(m);
}

/* The builder helpers keep the first failure and skip every later step. */
static void test_helpers_keep_first_error(void **state)
{
    (void)state;
    byocl_module *m = byocl_module_new();
    assert_non_null(m);
    byocl_error err;
    builtin_ctx ctx;
    assert_int_equal(builtin_begin(&ctx, m, "t", &err), BYOCL_OK);
    const int64_t dims[4] = {1, 3, 8, 8};
    int x = builtin_param(&ctx, "x", 4, dims);
    assert_true(x >= 0);
    assert_int_equal(builtin_unary(&ctx, "nn.no_such_op", x), -1);
    assert_int_not_equal(err.status, BYOCL_OK);
    char first[BYOCL_ERROR_MSG_MAX];
    strcpy(first, err.msg);
    ts_assert_contains(first, "nn.no_such_op");
    int nodes = byocl_function_num_nodes(ctx.fn);

    /* valid steps after the failure do nothing and leave the message alone */
    assert_int_equal(builtin_relu(&ctx, x), -1);
    assert_int_equal(builtin_conv_bn(&ctx, x, 3, 8, 3, 1, 1, 1), -1);
    assert_int_equal(builtin_param(&ctx, "y", 4, dims), -1);
    assert_int_equal(byocl_function_num_nodes(ctx.fn), nodes);
    assert_int_equal(ctx.n_weights, 0);
    assert_string_equal(err.msg, first);
    assert_int_not_equal(builtin_finish(&ctx, &x, 1), BYOCL_OK);
    assert_int_equal(byocl_function_body(ctx.fn), -1);
    assert_string_equal(err.msg, first);
    byocl_module_free(m);
}

/* --------------------------------------------------------------------- seed */

static void test_seed_params_and_types(void **state)
{
    (void)state;
    byocl_module *m = build_model("seed");
    byocl_function *fn = main_of(m);
    static const char *const names[7] = {"data", "weight", "bn_gamma", "bn_beta",
                                         "bn_mean", "bn_var", "w0"};
    static const int64_t data_dims[4] = {1, 3, 224, 224}, weight_dims[4] = {16, 3, 3, 3},
                         channel_dims[1] = {16};
    static const int ranks[7] = {4, 4, 1, 1, 1, 1, 4};
    const int64_t *dims[7] = {data_dims, weight_dims, channel_dims, channel_dims,
                              channel_dims, channel_dims, weight_dims};
    assert_int_equal(byocl_function_num_params(fn), 7);
    for (int k = 0; k < 7; k++) {
        int id = byocl_function_param(fn, k);
        assert_string_equal(byocl_node_name(fn, id), names[k]);
        assert_f32_output_type(byocl_node_type(fn, id), ranks[k], dims[k]);
    }
    /* weights are parameters, so there are no constants to fill */
    assert_int_equal(count_kind(fn, BYOCL_NODE_CONSTANT), 0);

    const byocl_type *ret = byocl_function_ret_type(fn);
    assert_non_null(ret);
    assert_int_equal(ret->kind, BYOCL_TYPE_TUPLE);
    assert_int_equal(ret->n_fields, 3);
    static const int64_t relu_dims[4] = {1, 16, 224, 224};
    assert_f32_output_type(ret->fields[0], 4, relu_dims);
    assert_f32_output_type(ret->fields[1], 1, channel_dims);
    assert_f32_output_type(ret->fields[2], 1, channel_dims);
    byocl_module_free(m);
}

static void test_seed_annotations(void **state)
{
    (void)state;
    byocl_module *m = build_model("seed");
    byocl_function *fn = main_of(m);
    assert_int_equal(count_op(fn, "annotation.compiler_begin"), 6);
    assert_int_equal(count_op(fn, "annotation.compiler_end"), 3);
    assert_int_equal(count_op(fn, "abs"), 2);
    assert_int_equal(count_op(fn, "add"), 1);
    assert_int_equal(count_op(fn, "nn.conv2d"), 1);
    assert_int_equal(count_op(fn, "nn.batch_norm"), 1);
    assert_int_equal(count_op(fn, "nn.relu"), 1);
    assert_int_equal(count_kind(fn, BYOCL_NODE_GETITEM), 3);
    assert_int_equal(byocl_function_num_nodes(fn), 7 + 6 + 3 + 2 + 4 + 3 + 1);

    int begins_of_params = 0;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        if (!is_op(fn, id, "annotation.compiler_begin") &&
            !is_op(fn, id, "annotation.compiler_end"))
            continue;
        assert_string_equal(byocl_attrs_get_str(byocl_node_attrs(fn, id), "compiler", ""),
                            "opencl");
        if (is_op(fn, id, "annotation.compiler_begin")) {
            int arg = byocl_node_arg(fn, id, 0);
            if (byocl_node_kind_of(fn, arg) == BYOCL_NODE_VAR)
                begins_of_params++;
            else /* z0 = add(weight, w0), computed before the region */
                assert_true(is_op(fn, arg, "add"));
        }
    }
    assert_int_equal(begins_of_params, 5);

    /* add(%weight, %w0) on the host */
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        if (!is_op(fn, id, "add"))
            continue;
        assert_string_equal(byocl_node_name(fn, byocl_node_arg(fn, id, 0)), "weight");
        assert_string_equal(byocl_node_name(fn, byocl_node_arg(fn, id, 1)), "w0");
    }

    /* conv2d(begin(data), begin(z0), padding=[1, 1] (normalized to 4), channels=16, 3x3) */
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        if (!is_op(fn, id, "nn.conv2d"))
            continue;
        const byocl_attrs *a = byocl_node_attrs(fn, id);
        static const int64_t pad[4] = {1, 1, 1, 1}, kernel[2] = {3, 3};
        const int64_t *got = NULL;
        int n_pad = byocl_attrs_get_ints(a, "padding", &got);
        assert_true(n_pad == 2 || n_pad == 4);
        for (int k = 0; k < n_pad; k++)
            assert_int_equal(got[k], pad[k]);
        assert_ints_attr(fn, id, "kernel_size", 2, kernel);
        assert_int_equal(byocl_attrs_get_int(a, "channels", 0), 16);
        int data_cb = byocl_node_arg(fn, id, 0);
        assert_true(is_op(fn, data_cb, "annotation.compiler_begin"));
        assert_string_equal(byocl_node_name(fn, byocl_node_arg(fn, data_cb, 0)), "data");
    }

    /* body: (end(relu(bn.0)), abs(end(bn.1)), abs(end(bn.2))) */
    int body = byocl_function_body(fn);
    assert_int_equal(byocl_node_kind_of(fn, body), BYOCL_NODE_TUPLE);
    assert_int_equal(byocl_node_num_args(fn, body), 3);
    int relu_end = byocl_node_arg(fn, body, 0);
    assert_true(is_op(fn, relu_end, "annotation.compiler_end"));
    int relu = byocl_node_arg(fn, relu_end, 0);
    assert_true(is_op(fn, relu, "nn.relu"));
    int bn0 = byocl_node_arg(fn, relu, 0);
    assert_int_equal(byocl_node_kind_of(fn, bn0), BYOCL_NODE_GETITEM);
    assert_int_equal(byocl_node_index(fn, bn0), 0);
    int bn = byocl_node_arg(fn, bn0, 0);
    assert_true(is_op(fn, bn, "nn.batch_norm"));
    for (int k = 1; k <= 2; k++) {
        int abs_node = byocl_node_arg(fn, body, k);
        assert_true(is_op(fn, abs_node, "abs"));
        int end = byocl_node_arg(fn, abs_node, 0);
        assert_true(is_op(fn, end, "annotation.compiler_end"));
        int item = byocl_node_arg(fn, end, 0);
        assert_int_equal(byocl_node_kind_of(fn, item), BYOCL_NODE_GETITEM);
        assert_int_equal(byocl_node_index(fn, item), k);
        assert_int_equal(byocl_node_arg(fn, item, 0), bn);
    }
    /* every batch_norm argument after the data enters through compiler_begin */
    for (int k = 1; k < 5; k++)
        assert_true(is_op(fn, byocl_node_arg(fn, bn, k), "annotation.compiler_begin"));
    byocl_module_free(m);
}

static void test_seed_printed(void **state)
{
    (void)state;
    byocl_module *m = build_model("seed");
    byocl_error err;
    byocl_print_options opt = {.show_types = false};
    char *text = byocl_text_print(m, &opt, NULL, &err);
    if (!text)
        fail_msg("print: %s", err.msg);
    assert_int_equal(ts_count_substrings(text, "annotation.compiler_begin("), 6);
    assert_int_equal(ts_count_substrings(text, "annotation.compiler_end("), 3);
    assert_int_equal(ts_count_substrings(text, "compiler=\"opencl\""), 9);
    assert_int_equal(ts_count_substrings(text, " abs("), 2);
    ts_assert_contains(text, "def @main(%data: Tensor[(1, 3, 224, 224), float32], "
                             "%weight: Tensor[(16, 3, 3, 3), float32], "
                             "%bn_gamma: Tensor[(16), float32], %bn_beta: Tensor[(16), float32], "
                             "%bn_mean: Tensor[(16), float32], %bn_var: Tensor[(16), float32], "
                             "%w0: Tensor[(16, 3, 3, 3), float32])");
    ts_assert_contains(text, "add(%weight, %w0)");
    ts_assert_contains(text, "annotation.compiler_begin(%data, compiler=\"opencl\")");
    /* no binding names: the printer numbers every node, TVM style */
    assert_int_equal(ts_count_substrings(text, "%x"), 0);
    free(text);
    byocl_module_free(m);
}

/* value[i] = float32(((i * multiplier) % modulus) / divisor + offset): the inputs that
 * tests/gen/gen_models_seed.py computes the expected outputs for (its INPUTS table). */
static byocl_tensor *seed_input(int rank, const int64_t *dims, int64_t multiplier,
                                int64_t modulus, double divisor, double offset)
{
    byocl_tensor *t = ts_tensor_f32(rank, dims, NULL);
    float *v = byocl_tensor_data(t);
    for (int64_t i = 0; i < byocl_tensor_numel(t); i++)
        v[i] = (float)((double)((i * multiplier) % modulus) / divisor + offset);
    return t;
}

/* generated by tests/gen/gen_models_seed.py */
static const struct { int c, y, x; double value; } seed_relu_points[] = {
    {2, 0, 0, 0.018351392885101396},
    {13, 0, 223, 0.20661623623316647},
    {7, 223, 0, 0.3561439478592702},
    {0, 223, 223, 0.49645867162313684},
    {9, 0, 100, 2.7173380277627173},
    {11, 100, 0, 0.5186550512004511},
    {4, 0, 0, 0.8563743063209238},
    {3, 1, 1, 2.1133267382571077},
    {7, 111, 112, 0.7589334567151668},
    {14, 5, 180, 0.1203511507327879},
    {4, 100, 57, 0.0},
    {9, 57, 222, 0.0},
};
static const double seed_relu_sum = 272181.3538892152;
static const float seed_abs_mean[16] = {
    0.200000003f, 0.0250000004f, 0.150000006f, 0.075000003f, 0.100000001f, 0.125f,
    0.0500000007f, 0.174999997f, 0.0f, 0.174999997f, 0.0500000007f, 0.125f,
    0.100000001f, 0.075000003f, 0.150000006f, 0.0250000004f,
};
static const float seed_abs_var[16] = {
    0.25f, 1.35000002f, 0.850000024f, 0.349999994f, 1.45000005f, 0.949999988f,
    0.449999988f, 1.54999995f, 1.04999995f, 0.550000012f, 1.64999998f, 1.14999998f,
    0.649999976f, 1.75f, 1.25f, 0.75f,
};

static void test_seed_runs_on_reference(void **state)
{
    (void)state;
    byocl_module *m = build_model("seed");
    static const int64_t data_dims[4] = {1, 3, 224, 224}, weight_dims[4] = {16, 3, 3, 3},
                         channel_dims[1] = {16};
    byocl_tensor *inputs[7] = {
        seed_input(4, data_dims, 37, 101, 50, -1.0),
        seed_input(4, weight_dims, 13, 29, 29, -0.5),
        seed_input(1, channel_dims, 5, 16, 16, 0.5),   /* bn_gamma */
        seed_input(1, channel_dims, 3, 16, 80, -0.1),  /* bn_beta  */
        seed_input(1, channel_dims, 7, 16, 40, -0.2),  /* bn_mean  */
        seed_input(1, channel_dims, 11, 16, 10, 0.25), /* bn_var   */
        seed_input(4, weight_dims, 7, 17, 34, -0.25),  /* w0       */
    };
    byocl_tensor **out = run_reference(m, inputs, 7, 3, NULL);

    static const int64_t relu_dims[4] = {1, 16, 224, 224};
    byocl_type relu_type = byocl_type_tensor(BYOCL_FLOAT32, 4, relu_dims);
    assert_true(byocl_shape_equal(byocl_tensor_shape(out[0]), &relu_type.shape));
    for (size_t k = 0; k < sizeof seed_relu_points / sizeof seed_relu_points[0]; k++) {
        int64_t i = ((int64_t)seed_relu_points[k].c * 224 + seed_relu_points[k].y) * 224 +
                    seed_relu_points[k].x;
        double got = byocl_tensor_get(out[0], i), want = seed_relu_points[k].value;
        if (fabs(got - want) > 1e-5 + 1e-5 * fabs(want))
            fail_msg("relu[0, %d, %d, %d] = %.9g, numpy says %.9g", seed_relu_points[k].c,
                     seed_relu_points[k].y, seed_relu_points[k].x, got, want);
    }
    double sum = 0;
    for (int64_t i = 0; i < byocl_tensor_numel(out[0]); i++)
        sum += byocl_tensor_get(out[0], i);
    if (fabs(sum - seed_relu_sum) > 1e-5 * seed_relu_sum)
        fail_msg("sum of relu output %.9g, numpy says %.9g", sum, seed_relu_sum);
    ts_assert_f32_close(out[1], seed_abs_mean, 16, 0, 0);
    ts_assert_f32_close(out[2], seed_abs_var, 16, 0, 0);

    byocl_tensors_free(out, 3);
    for (int k = 0; k < 7; k++)
        byocl_tensor_unref(inputs[k]);
    byocl_module_free(m);
}

/* ----------------------------------------------------------------- resnet18 */

/* From tests/gen/gen_models_flops.py (torchvision's layer lists). */
#define RESNET18_FLOPS INT64_C(3628146688)       /* 1814073344 MACs */
#define RESNET18_WEIGHT_VALUES INT64_C(11699112) /* 11689512 + bn moving stats */
#define MOBILENET_V2_FLOPS INT64_C(601548544)    /* 300774272 MACs */
#define MOBILENET_V2_WEIGHT_VALUES INT64_C(3538984) /* 3504872 + bn moving stats */

static void assert_image_classifier_io(const byocl_function *fn)
{
    static const int64_t data_dims[4] = {1, 3, 224, 224}, logits_dims[2] = {1, 1000};
    assert_int_equal(byocl_function_num_params(fn), 1);
    int data = byocl_function_param(fn, 0);
    assert_string_equal(byocl_node_name(fn, data), "data");
    assert_f32_output_type(byocl_node_type(fn, data), 4, data_dims);
    assert_non_null(byocl_function_ret_type(fn));
    assert_f32_output_type(byocl_function_ret_type(fn), 2, logits_dims);
    /* torchvision's head */
    int body = byocl_function_body(fn);
    assert_true(is_op(fn, body, "nn.bias_add"));
    int dense = byocl_node_arg(fn, body, 0);
    assert_true(is_op(fn, dense, "nn.dense"));
    int flat = byocl_node_arg(fn, dense, 0);
    assert_true(is_op(fn, flat, "nn.batch_flatten"));
    assert_true(is_op(fn, byocl_node_arg(fn, flat, 0), "nn.global_avg_pool2d"));
    /* no binding names anywhere: the printer numbers nodes */
    for (int id = 0; id < byocl_function_num_nodes(fn); id++)
        if (byocl_node_kind_of(fn, id) != BYOCL_NODE_VAR)
            assert_null(byocl_node_name(fn, id));
}

static void test_resnet18_structure(void **state)
{
    (void)state;
    byocl_module *m = build_model("resnet18");
    byocl_function *fn = main_of(m);
    assert_image_classifier_io(fn);
    assert_int_equal(count_op(fn, "nn.conv2d"), 20);
    assert_int_equal(count_op(fn, "nn.batch_norm"), 20);
    assert_int_equal(count_op(fn, "nn.max_pool2d"), 1);
    assert_int_equal(count_op(fn, "add"), 8);
    assert_int_equal(count_op(fn, "nn.relu"), 17);
    assert_int_equal(count_op(fn, "nn.dense"), 1);
    assert_int_equal(count_op(fn, "nn.bias_add"), 1);
    assert_int_equal(count_op(fn, "nn.global_avg_pool2d"), 1);
    assert_int_equal(count_op(fn, "nn.batch_flatten"), 1);
    /* 20 convs + 4 per batch_norm + dense weight and bias */
    assert_int_equal(count_kind(fn, BYOCL_NODE_CONSTANT), 20 + 4 * 20 + 2);
    assert_int_equal(constant_values(fn), RESNET18_WEIGHT_VALUES);
    assert_int_equal(conv_dense_flops(fn), RESNET18_FLOPS);
    assert_batch_norms_torch_style(fn);

    /* the stem: conv 7x7/2 pad 3 -> (1, 64, 112, 112), max_pool 3x3/2 pad 1 -> 56x56 */
    int stem = -1, pool = -1;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        if (stem < 0 && is_op(fn, id, "nn.conv2d"))
            stem = id;
        if (is_op(fn, id, "nn.max_pool2d"))
            pool = id;
    }
    static const int64_t two[2] = {2, 2}, seven[2] = {7, 7}, three[2] = {3, 3},
                         pad3[4] = {3, 3, 3, 3}, pad1[4] = {1, 1, 1, 1};
    assert_ints_attr(fn, stem, "strides", 2, two);
    assert_ints_attr(fn, stem, "kernel_size", 2, seven);
    assert_ints_attr(fn, stem, "padding", 4, pad3);
    static const int64_t stem_dims[4] = {1, 64, 112, 112}, pool_dims[4] = {1, 64, 56, 56};
    assert_f32_output_type(byocl_node_type(fn, stem), 4, stem_dims);
    assert_ints_attr(fn, pool, "pool_size", 2, three);
    assert_ints_attr(fn, pool, "strides", 2, two);
    assert_ints_attr(fn, pool, "padding", 4, pad1);
    assert_f32_output_type(byocl_node_type(fn, pool), 4, pool_dims);

    /* 3 downsample 1x1/2 convs; every add then relu; the last add sums (1, 512, 7, 7) */
    int downsample = 0, last_add = -1;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        if (is_op(fn, id, "nn.conv2d")) {
            const byocl_shape *w = node_shape(fn, byocl_node_arg(fn, id, 1));
            if (w->dims[2] == 1) {
                downsample++;
                assert_ints_attr(fn, id, "strides", 2, two);
            }
        }
        if (is_op(fn, id, "add")) {
            last_add = id;
            assert_true(is_op(fn, id + 1, "nn.relu"));
            assert_int_equal(byocl_node_arg(fn, id + 1, 0), id);
        }
    }
    assert_int_equal(downsample, 3);
    static const int64_t last_dims[4] = {1, 512, 7, 7};
    assert_f32_output_type(byocl_node_type(fn, last_add), 4, last_dims);
    assert_weight_ranges(fn);
    byocl_module_free(m);
}

/* ------------------------------------------------------------- mobilenet_v2 */

static void test_mobilenet_v2_structure(void **state)
{
    (void)state;
    byocl_module *m = build_model("mobilenet_v2");
    byocl_function *fn = main_of(m);
    assert_image_classifier_io(fn);
    assert_int_equal(count_op(fn, "nn.conv2d"), 52);
    assert_int_equal(count_op(fn, "nn.batch_norm"), 52);
    assert_int_equal(count_op(fn, "add"), 10);
    /* relu6: stem + 16 expansions + 17 depthwise + final 1x1 */
    assert_int_equal(count_op(fn, "clip"), 35);
    assert_int_equal(count_op(fn, "nn.relu"), 0);
    assert_int_equal(count_op(fn, "nn.dense"), 1);
    assert_int_equal(count_kind(fn, BYOCL_NODE_CONSTANT), 52 + 4 * 52 + 2);
    assert_int_equal(constant_values(fn), MOBILENET_V2_WEIGHT_VALUES);
    assert_int_equal(conv_dense_flops(fn), MOBILENET_V2_FLOPS);
    assert_batch_norms_torch_style(fn);

    int depthwise = 0;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        if (is_op(fn, id, "clip")) {
            assert_float_equal(byocl_attrs_get_float(byocl_node_attrs(fn, id), "a_min", -1),
                               0.0, 0);
            assert_float_equal(byocl_attrs_get_float(byocl_node_attrs(fn, id), "a_max", -1),
                               6.0, 0);
        }
        if (!is_op(fn, id, "nn.conv2d"))
            continue;
        int64_t groups = byocl_attrs_get_int(byocl_node_attrs(fn, id), "groups", 0);
        if (groups > 1) {
            depthwise++;
            const byocl_shape *w = node_shape(fn, byocl_node_arg(fn, id, 1));
            assert_int_equal(w->dims[0], groups); /* one filter per channel */
            assert_int_equal(w->dims[1], 1);
            assert_int_equal(w->dims[2], 3);
            assert_int_equal(node_shape(fn, byocl_node_arg(fn, id, 0))->dims[1], groups);
        }
    }
    assert_int_equal(depthwise, 17);

    /* features end with the 1x1 conv to 1280 (+ bn + relu6): (1, 1280, 7, 7) */
    int id = byocl_function_body(fn);
    for (int k = 0; k < 4; k++) /* bias_add <- dense <- batch_flatten <- pool <- features */
        id = byocl_node_arg(fn, id, 0);
    assert_true(is_op(fn, id, "clip"));
    static const int64_t features_dims[4] = {1, 1280, 7, 7};
    assert_f32_output_type(byocl_node_type(fn, id), 4, features_dims);
    assert_weight_ranges(fn);
    byocl_module_free(m);
}

/* ------------------------------------------------------------ determinism */

static void test_weights_are_deterministic(void **state)
{
    (void)state;
    for (int k = 1; k < byocl_builtin_count(); k++) {
        byocl_module *a = build_model(byocl_builtin_name(k));
        byocl_module *b = build_model(byocl_builtin_name(k));
        byocl_function *fa = main_of(a), *fb = main_of(b);
        assert_int_equal(byocl_function_num_nodes(fa), byocl_function_num_nodes(fb));
        for (int id = 0; id < byocl_function_num_nodes(fa); id++) {
            if (byocl_node_kind_of(fa, id) != BYOCL_NODE_CONSTANT)
                continue;
            const byocl_tensor *ta = byocl_node_value(fa, id), *tb = byocl_node_value(fb, id);
            assert_true(byocl_tensor_equal(ta, tb));
            assert_memory_equal(byocl_tensor_cdata(ta), byocl_tensor_cdata(tb),
                                byocl_tensor_nbytes(ta));
        }
        byocl_module_free(a);
        byocl_module_free(b);
    }
}

/* Weight k of a model is byocl_tensor_fill_random with builtin_weight_seed(hash, k). */
static void test_weight_seeds_follow_name_and_layer(void **state)
{
    (void)state;
    /* FNV-1a 64 test vectors */
    assert_true(builtin_name_hash("") == UINT64_C(0xcbf29ce484222325));
    assert_true(builtin_name_hash("a") == UINT64_C(0xaf63dc4c8601ec8c));
    assert_true(builtin_name_hash("foobar") == UINT64_C(0x85944171f73967e8));

    byocl_module *m = build_model("resnet18");
    byocl_function *fn = main_of(m);
    uint64_t model = builtin_name_hash("resnet18");
    int layer = 0;
    for (int id = 0; id < byocl_function_num_nodes(fn) && layer < 3; id++) {
        if (byocl_node_kind_of(fn, id) != BYOCL_NODE_CONSTANT)
            continue;
        const byocl_tensor *t = byocl_node_value(fn, id);
        double lo = 0.5, hi = 1.5; /* layer 1: the stem's bn gamma */
        if (layer == 0) { /* the stem's conv weight, fan-in 3 * 7 * 7 */
            hi = BUILTIN_WEIGHT_GAIN * sqrt(6.0 / 147.0);
            lo = -hi;
        } else if (layer == 2) { /* its bn beta */
            lo = -0.1;
            hi = 0.1;
        }
        byocl_tensor *want = byocl_tensor_new(BYOCL_FLOAT32, byocl_tensor_shape(t), NULL);
        assert_non_null(want);
        byocl_tensor_fill_random(want, builtin_weight_seed(model, layer), lo, hi);
        assert_true(byocl_tensor_equal(t, want));
        byocl_tensor_unref(want);
        layer++;
    }
    assert_int_equal(layer, 3);
    /* seeds differ per layer and per model */
    assert_true(builtin_weight_seed(model, 0) != builtin_weight_seed(model, 1));
    assert_true(builtin_weight_seed(model, 0) !=
                builtin_weight_seed(builtin_name_hash("mobilenet_v2"), 0));
    byocl_module_free(m);
}

/* ------------------------------------------------- logits on the reference */

static void check_logits(const char *name)
{
    byocl_module *m = build_model(name);
    static const int64_t data_dims[4] = {1, 3, 224, 224};
    byocl_tensor *data = ts_tensor_f32(4, data_dims, NULL);
    byocl_tensor_fill_random(data, 1, 0.0, 1.0);
    double seconds = 0;
    byocl_tensor **out = run_reference(m, &data, 1, 1, &seconds);
    print_message("builtin:%s on the reference executor: %.2f s\n", name, seconds);

    static const int64_t logits_dims[2] = {1, 1000};
    byocl_type want = byocl_type_tensor(BYOCL_FLOAT32, 2, logits_dims);
    assert_true(byocl_shape_equal(byocl_tensor_shape(out[0]), &want.shape));
    double max_abs = 0, min = INFINITY, max = -INFINITY;
    for (int64_t i = 0; i < 1000; i++) {
        double v = byocl_tensor_get(out[0], i);
        if (!isfinite(v))
            fail_msg("builtin:%s logit %lld is %g", name, (long long)i, v);
        max_abs = fabs(v) > max_abs ? fabs(v) : max_abs;
        min = v < min ? v : min;
        max = v > max ? v : max;
    }
    print_message("builtin:%s logits in [%g, %g]\n", name, min, max);
    if (!(max_abs > 1e-3 && max_abs < 1e3))
        fail_msg("builtin:%s max |logit| %g, want between 1e-3 and 1e3", name, max_abs);
    /* the logits depend on the image, not only on the bias: they spread well past it */
    if (max - min < 0.5)
        fail_msg("builtin:%s logits only span [%g, %g]", name, min, max);
    byocl_tensors_free(out, 1);
    byocl_tensor_unref(data);
    byocl_module_free(m);
}

static void test_resnet18_logits_are_sane(void **state)
{
    (void)state;
    check_logits("resnet18");
}

static void test_mobilenet_v2_logits_are_sane(void **state)
{
    (void)state;
    check_logits("mobilenet_v2");
}

int main(int argc, char **argv)
{
    /* An argument selects tests by name pattern: `test_models '*seed*'` under valgrind. */
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_lists_models),
        cmocka_unit_test(test_unknown_model_lists_known),
        cmocka_unit_test(test_build_without_error_record),
        cmocka_unit_test(test_helpers_keep_first_error),
        cmocka_unit_test(test_seed_params_and_types),
        cmocka_unit_test(test_seed_annotations),
        cmocka_unit_test(test_seed_printed),
        cmocka_unit_test(test_seed_runs_on_reference),
        cmocka_unit_test(test_resnet18_structure),
        cmocka_unit_test(test_mobilenet_v2_structure),
        cmocka_unit_test(test_weights_are_deterministic),
        cmocka_unit_test(test_weight_seeds_follow_name_and_layer),
        cmocka_unit_test(test_resnet18_logits_are_sane),
        cmocka_unit_test(test_mobilenet_v2_logits_are_sane),
    };
    return cmocka_run_group_tests_name("models", tests, NULL, NULL);
}
