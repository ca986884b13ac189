/* byocl_fold_constants alone: calls of constants become constants, shape_of becomes the
 * static shape, chains collapse, unused nodes go, large results and run-time values stay
 * (a large result no larger than its constant arguments, a transposed weight, folds;
 * an identity of a constant shares its data);
 * a kernel error names the node. The printed IR is compared exactly. byocl_build folds
 * what it builds. */
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

/* Folds m and compares the printed result (without ty= comments; bindings keep the
 * file's names) with `want`. */
static void fold_and_expect(byocl_module *m, const char *want)
{
    byocl_error err = {0};
    if (byocl_fold_constants(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_print_options opt = {.show_types = false};
    char *got = byocl_text_print(m, &opt, NULL, &err);
    assert_non_null(got);
    if (strcmp(got, want) != 0)
        fail_msg("got:\n%s\nwant:\n%s", got, want);
    free(got);
}

/* fold_and_expect of `text`. */
static void expect_folded(const char *text, const char *want)
{
    byocl_module *m = ts_parse_typed(text);
    fold_and_expect(m, want);
    byocl_module_free(m);
}

/* The channel shuffle's shape arithmetic: the dims of %x picked, multiplied and joined
 * into the new shape, all one constant; the data path keeps its ops. */
static void test_shape_chain(void **state)
{
    (void)state;
    expect_folded("#[version = \"0.0.5\"]\n"
                  "def @main(%x: Tensor[(1, 4, 2, 2), float32]) {\n"
                  "  %0 = shape_of(%x, dtype=\"int64\");\n"
                  "  %1 = take(%0, 1i64);\n"
                  "  %2 = divide(%1, 2i64);\n"
                  "  %3 = expand_dims(%2, axis=0);\n"
                  "  %4 = strided_slice(%0, begin=[2], end=[4]);\n"
                  "  %5 = concatenate((%3, %4));\n"
                  "  %6 = nn.relu(%x);\n"
                  "  (%6, %5)\n"
                  "}\n",
                  "#[version = \"0.0.5\"]\n"
                  "def @main(%x: Tensor[(1, 4, 2, 2), float32]) -> (Tensor[(1, 4, 2, 2), "
                  "float32], Tensor[(3), int64]) {\n"
                  "  %6 = nn.relu(%x);\n"
                  "  (%6, meta[relay.Constant][0])\n"
                  "}\n");
}

/* Constants folded where a run-time value meets them; arange too. */
static void test_partial(void **state)
{
    (void)state;
    expect_folded("#[version = \"0.0.5\"]\n"
                  "def @main(%x: Tensor[(3), float32]) {\n"
                  "  %0 = arange(0f, 3f, 1f);\n"
                  "  %1 = multiply(%0, 2f);\n"
                  "  %2 = add(%x, %1);\n"
                  "  %3 = add(%2, add(1f, 2f));\n"
                  "  %3\n"
                  "}\n",
                  "#[version = \"0.0.5\"]\n"
                  "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                  "  %2 = add(%x, meta[relay.Constant][0]);\n"
                  "  add(%2, 3f)\n"
                  "}\n");
}

/* Results over 1 MiB stay calls; a module with nothing to fold is left as it is. */
static void test_limits(void **state)
{
    (void)state;
    const char *big = "#[version = \"0.0.5\"]\n"
                      "def @main(%x: Tensor[(1), float32]) -> (Tensor[(1), float32], "
                      "Tensor[(262145), float32]) {\n"
                      "  %0 = arange(0f, 262145f, 1f);\n"
                      "  (%x, %0)\n"
                      "}\n";
    expect_folded(big, big);
}

/* A weight of 2 MiB transposed and reshaped for nn.dense (as ONNX's MatMul by a weight
 * imports) and cast: bound as a constant, as --params binds it; *w_out gets the weight. */
static byocl_module *transposed_weight_model(byocl_tensor **w_out)
{
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                                     "def @main(%x: Tensor[(3, 1024), float32], "
                                     "%w: Tensor[(1024, 512), float32]) {\n"
                                     "  %0 = transpose(%w, axes=[1, 0]);\n"
                                     "  %1 = reshape(%0, newshape=[512, 1024]);\n"
                                     "  %2 = nn.dense(%x, %1);\n"
                                     "  %3 = cast(%w, dtype=\"float64\");\n"
                                     "  (%2, %3)\n"
                                     "}\n");
    int64_t dims[2] = {1024, 512};
    byocl_tensor *w = ts_tensor_f32(2, dims, NULL);
    for (int64_t i = 0; i < 1024 * 512; i++)
        byocl_tensor_set(w, i, (double)(i % 1000) - 500);
    byocl_error err = {0};
    const char *names[1] = {"w"};
    assert_int_equal(byocl_bind_params(m, names, (byocl_tensor *const[]){w}, 1, &err),
                     BYOCL_OK);
    *w_out = w;
    return m;
}

/* A result over 1 MiB that is no larger than its constant arguments folds: a transposed
 * (and reshaped) 2 MiB weight becomes one constant holding the transposed values, and
 * the weight itself, unused, goes; a cast that doubles the bytes stays a call. */
static void test_weights_fold(void **state)
{
    (void)state;
    byocl_tensor *w;
    byocl_module *m = transposed_weight_model(&w);
    fold_and_expect(m, "#[version = \"0.0.5\"]\n"
                       "def @main(%x: Tensor[(3, 1024), float32]) -> (Tensor[(3, 512), "
                       "float32], Tensor[(1024, 512), float64]) {\n"
                       "  %2 = nn.dense(%x, meta[relay.Constant][0]);\n"
                       "  %3 = cast(meta[relay.Constant][1], dtype=\"float64\");\n"
                       "  (%2, %3)\n"
                       "}\n");
    /* The folded weight holds w transposed: row j is column j of w. */
    const byocl_function *fn = byocl_module_find(m, "main");
    const byocl_tensor *folded = NULL;
    for (int id = 0; id < byocl_function_num_nodes(fn) && !folded; id++)
        if (byocl_node_kind_of(fn, id) == BYOCL_NODE_CONSTANT &&
            byocl_tensor_shape(byocl_node_value(fn, id))->dims[0] == 512)
            folded = byocl_node_value(fn, id);
    assert_non_null(folded);
    for (int64_t j = 0; j < 512; j += 37)
        for (int64_t k = 0; k < 1024; k += 101)
            assert_true(byocl_tensor_get(folded, j * 1024 + k) ==
                        byocl_tensor_get(w, k * 512 + j));
    byocl_tensor_unref(w);
    byocl_module_free(m);
}

/* byocl_build folds @main's constants too (a model built without partitioning): built for
 * the host backends, the transposed weight is a constant, not a step of every run (ref:
 * one step per op, so two steps, the dense and the cast; host: the same), and the outputs
 * are the reference executor's on the model as it came. */
static void test_build_folds(void **state)
{
    (void)state;
    byocl_tensor *w;
    byocl_module *m = transposed_weight_model(&w);
    int64_t xd[2] = {3, 1024};
    byocl_tensor *x = ts_tensor_f32(2, xd, NULL);
    byocl_tensor_fill_random(x, 7, -1.0, 1.0);
    byocl_tensor **want = NULL;
    int n_want = 0;
    byocl_error err = {0};
    assert_int_equal(byocl_reference_run(m, "main", &x, 1, &want, &n_want, &err), BYOCL_OK);
    static const char *const targets[] = {"ref", "host"};
    for (int t = 0; t < 2; t++) {
        byocl_build_options o = byocl_build_options_default();
        o.target = targets[t];
        o.threads = 1;
        byocl_compiled *c = NULL;
        byocl_executor *ex = NULL;
        if (byocl_build(m, &o, &c, &err) != BYOCL_OK ||
            byocl_executor_new(c, &ex, &err) != BYOCL_OK)
            fail_msg("%s: %s", targets[t], err.msg);
        assert_int_equal(byocl_executor_num_steps(ex), 2);
        for (int i = 0; i < 2; i++) {
            byocl_step_info info;
            assert_int_equal(byocl_executor_step(ex, i, &info, &err), BYOCL_OK);
            if (strstr(info.name, "transpose") || strstr(info.name, "reshape"))
                fail_msg("%s: step %d is %s", targets[t], i, info.name);
        }
        assert_int_equal(byocl_executor_set_input(ex, "x", x, &err), BYOCL_OK);
        assert_int_equal(byocl_executor_run(ex, &err), BYOCL_OK);
        for (int i = 0; i < n_want; i++) {
            const byocl_tensor *got = NULL;
            assert_int_equal(byocl_executor_output(ex, i, &got, &err), BYOCL_OK);
            if (!(ts_relative_l2(got, want[i]) < 1e-6))
                fail_msg("%s: output %d is %g from the reference's", targets[t], i,
                         ts_relative_l2(got, want[i]));
        }
        byocl_executor_free(ex);
        byocl_compiled_free(c);
    }
    byocl_tensors_free(want, n_want);
    byocl_tensor_unref(x);
    byocl_tensor_unref(w);
    byocl_module_free(m);
}

/* Identities of a constant (a region's compiler_begin, as `byocl bench` annotates before
 * partitioning, and copy) fold to constants that share the weight's data, no copy of it. */
static void test_identity_shares(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                                     "def @main(%x: Tensor[(3, 512), float32], "
                                     "%w: Tensor[(1024, 512), float32]) {\n"
                                     "  %0 = annotation.compiler_begin(%w, compiler=\"opencl\");\n"
                                     "  %1 = nn.dense(%x, %0);\n"
                                     "  %2 = copy(%w);\n"
                                     "  (%1, %2)\n"
                                     "}\n");
    int64_t dims[2] = {1024, 512};
    byocl_tensor *w = ts_tensor_f32(2, dims, NULL);
    byocl_tensor_fill_random(w, 3, -1.0, 1.0);
    byocl_error err = {0};
    const char *names[1] = {"w"};
    assert_int_equal(byocl_bind_params(m, names, (byocl_tensor *const[]){w}, 1, &err), BYOCL_OK);
    fold_and_expect(m, "#[version = \"0.0.5\"]\n"
                       "def @main(%x: Tensor[(3, 512), float32]) -> (Tensor[(3, 1024), "
                       "float32], Tensor[(1024, 512), float32]) {\n"
                       "  %1 = nn.dense(%x, meta[relay.Constant][0]);\n"
                       "  (%1, meta[relay.Constant][0])\n"
                       "}\n");
    const byocl_function *fn = byocl_module_find(m, "main");
    int constants = 0;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++)
        if (byocl_node_kind_of(fn, id) == BYOCL_NODE_CONSTANT) {
            assert_ptr_equal(byocl_tensor_cdata(byocl_node_value(fn, id)),
                             byocl_tensor_cdata(w));
            constants++;
        }
    assert_int_equal(constants, 2);
    byocl_tensor_unref(w);
    byocl_module_free(m);
}

/* An index out of range in constant data: the error names the node. */
static void test_error_names_node(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                                     "def @main(%x: Tensor[(2), float32]) {\n"
                                     "  %0 = shape_of(%x);\n"
                                     "  %1 = take(%0, 5, mode=\"fast\");\n"
                                     "  (%x, %1)\n"
                                     "}\n");
    byocl_error err = {0};
    assert_int_equal(byocl_fold_constants(m, &err), BYOCL_ERR_RUNTIME);
    ts_assert_contains(err.msg, "%1 (take)");
    ts_assert_contains(err.msg, "cannot fold: take: index 5 is out of range for an axis of 1");
    byocl_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_chain),
        cmocka_unit_test(test_partial),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_weights_fold),
        cmocka_unit_test(test_build_folds),
        cmocka_unit_test(test_identity_shares),
        cmocka_unit_test(test_error_names_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
