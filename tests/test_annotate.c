/* annotate_target, annotate_explain and annotate_range: the exact annotated text, the
 * reasons for host calls, every error, and that annotations change no output (they are
 * identities: the reference executor gives bit-identical results before and after). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "byocl/target.h"
#include "passes/regions.h"

/* ------------------------------------------------------------ test targets */

/* "test_target" runs conv2d (ungrouped), batch_norm, relu, multiply and concatenate along
 * axis 1 and says why it refuses a call; "other" runs abs and relu and gives no reason;
 * "scatter" takes two calls out of three, by node id. */
static bool test_target_supports(void *ctx, const byocl_function *fn, int node, char *why,
                                 size_t len)
{
    (void)ctx;
    const char *op = byocl_node_op(fn, node);
    const byocl_attrs *attrs = byocl_node_attrs(fn, node);
    assert_non_null(op); /* targets see calls of ops only */
    assert_int_not_equal(byocl_node_type(fn, node)->kind, BYOCL_TYPE_NONE);
    if (strcmp(op, "nn.conv2d") == 0) {
        int64_t groups = byocl_attrs_get_int(attrs, "groups", 1);
        if (groups != 1)
            snprintf(why, len, "grouped convolution (groups=%lld) is not supported",
                     (long long)groups);
        return groups == 1;
    }
    if (strcmp(op, "concatenate") == 0) {
        int64_t axis = byocl_attrs_get_int(attrs, "axis", 0);
        if (axis != 1)
            snprintf(why, len, "concatenate along axis %lld is not supported", (long long)axis);
        return axis == 1;
    }
    const char *ok[] = {"nn.batch_norm", "nn.relu", "multiply"};
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++)
        if (strcmp(op, ok[k]) == 0)
            return true;
    snprintf(why, len, "op %s is not supported", op);
    return false;
}

/* Counts the calls it is asked about; leaves `why` empty (the default reason shows). */
static bool other_supports(void *ctx, const byocl_function *fn, int node, char *why, size_t len)
{
    (void)why;
    (void)len;
    (*(int *)ctx)++;
    const char *op = byocl_node_op(fn, node);
    return strcmp(op, "abs") == 0 || strcmp(op, "nn.relu") == 0;
}

static int other_asked;

/* Takes two calls out of three, by node id: regions everywhere, many of them touching. */
static bool scatter_supports(void *ctx, const byocl_function *fn, int node, char *why, size_t len)
{
    (void)ctx;
    (void)fn;
    (void)why;
    (void)len;
    return node % 3 != 0;
}

static int register_targets(void **state)
{
    (void)state;
    byocl_target_i test_target = {.name = "test_target", .api_version = BYOCL_TARGET_API_VERSION,
                                  .supports = test_target_supports};
    byocl_target_i other = {.name = "other", .api_version = BYOCL_TARGET_API_VERSION,
                            .ctx = &other_asked, .supports = other_supports};
    byocl_target_i scatter = {.name = "scatter", .api_version = BYOCL_TARGET_API_VERSION,
                              .supports = scatter_supports};
    byocl_error err = {0};
    if (byocl_target_register(&test_target, &err) != BYOCL_OK ||
        byocl_target_register(&other, &err) != BYOCL_OK ||
        byocl_target_register(&scatter, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return 0;
}

static int unregister_targets(void **state)
{
    (void)state;
    byocl_target_registry_reset();
    return 0;
}

/* ----------------------------------------------------------------- helpers */

static void assert_printed(const byocl_module *m, const char *want)
{
    byocl_error err = {0};
    char *got = byocl_text_print(m, NULL, NULL, &err);
    if (!got)
        fail_msg("%s", err.msg);
    if (strcmp(got, want) != 0)
        fail_msg("printed module differs.\n--- got:\n%s--- want:\n%s", got, want);
    free(got);
}

/* The annotated module is well formed and typed, reads back from its own text, and
 * computes bit-identical outputs to the original for the same (random) inputs. */
static void assert_same_outputs(const byocl_module *original, const byocl_module *annotated)
{
    byocl_error err = {0};
    if (byocl_verify(annotated, true, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    char *text = byocl_text_print(annotated, NULL, NULL, &err);
    assert_non_null(text);
    byocl_module *reparsed = ts_parse_typed(text);
    char *again = byocl_text_print(reparsed, NULL, NULL, &err);
    assert_non_null(again);
    assert_string_equal(again, text);
    free(again);
    free(text);
    byocl_module_free(reparsed);

    const byocl_function *fn = byocl_module_find(original, "main");
    int n = byocl_function_num_params(fn);
    byocl_tensor **inputs = calloc((size_t)n + 1, sizeof *inputs);
    assert_non_null(inputs);
    for (int k = 0; k < n; k++) {
        const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, k));
        inputs[k] = byocl_tensor_new(t->dtype, &t->shape, &err);
        assert_non_null(inputs[k]);
        byocl_tensor_fill_random(inputs[k], 1000u + (uint64_t)k, -1.0, 1.0);
    }
    byocl_tensor **want = NULL, **got = NULL;
    int n_want = 0, n_got = 0;
    if (byocl_reference_run(original, "main", inputs, n, &want, &n_want, &err) != BYOCL_OK ||
        byocl_reference_run(annotated, "main", inputs, n, &got, &n_got, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n_got, n_want);
    for (int k = 0; k < n_want; k++)
        assert_true(byocl_tensor_equal(got[k], want[k]));
    byocl_tensors_free(want, n_want);
    byocl_tensors_free(got, n_got);
    for (int k = 0; k < n; k++)
        byocl_tensor_unref(inputs[k]);
    free(inputs);
}

static byocl_module *clone(const byocl_module *m)
{
    byocl_module *c = byocl_module_clone(m, NULL);
    assert_non_null(c);
    return c;
}

/* Annotates a copy of `m` for `targets`, checks the text and the outputs. */
static void expect_annotated(const byocl_module *m, const char *const *targets, int n,
                             const char *want)
{
    byocl_module *a = clone(m);
    byocl_error err = {0};
    if (byocl_annotate_target(a, targets, n, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_printed(a, want);
    assert_same_outputs(m, a);
    byocl_module_free(a);
}

/* annotate_range of `range` ("%76:%81", "#0:#5", "a:b") on a copy of m prints as want and
 * computes what m does. */
static void expect_range_spec(const byocl_module *m, const char *range, const char *target,
                              const char *want)
{
    byocl_module *a = clone(m);
    byocl_error err = {0};
    if (byocl_annotate_range_spec(a, range, target, &err) != BYOCL_OK)
        fail_msg("%s: %s", range, err.msg);
    assert_printed(a, want);
    assert_same_outputs(m, a);
    byocl_module_free(a);
}

static void expect_range(const byocl_module *m, int first, int last, const char *target,
                         const char *want)
{
    char range[48];
    snprintf(range, sizeof range, "%d:%d", first, last);
    expect_range_spec(m, range, target, want);
}

static const char *const TEST_TARGET[] = {"test_target"};

/* ---------------------------------------------------------- annotate_target */

/* The thread's first graph: the annotations come out as the thread wrote them by hand
 * (tests/fixtures/text/seed_graph.relay, where only the host add is printed one line
 * later): add(weight, w0) on the host before the region, the two abs after it, and the
 * region's three outputs relu, mean and variance. */
static void test_target_thread_graph(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed_file(ts_fixture("annotate/seed_plain.relay"));
    expect_annotated(
        m, TEST_TARGET, 1,
        "#[version = \"0.0.5\"]\n"
        "def @main(%data: Tensor[(1, 3, 224, 224), float32], %weight: Tensor[(16, 3, 3, 3), "
        "float32], %bn_gamma: Tensor[(16), float32], %bn_beta: Tensor[(16), float32], "
        "%bn_mean: Tensor[(16), float32], %bn_var: Tensor[(16), float32], %w0: Tensor[(16, "
        "3, 3, 3), float32]) -> (Tensor[(1, 16, 224, 224), float32], Tensor[(16), float32], "
        "Tensor[(16), float32]) {\n"
        "  %0 = add(%weight, %w0);\n"
        "  %1 = annotation.compiler_begin(%data, compiler=\"test_target\");\n"
        "  %2 = annotation.compiler_begin(%0, compiler=\"test_target\");\n"
        "  %3 = nn.conv2d(%1, %2, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);\n"
        "  %4 = annotation.compiler_begin(%bn_gamma, compiler=\"test_target\");\n"
        "  %5 = annotation.compiler_begin(%bn_beta, compiler=\"test_target\");\n"
        "  %6 = annotation.compiler_begin(%bn_mean, compiler=\"test_target\");\n"
        "  %7 = annotation.compiler_begin(%bn_var, compiler=\"test_target\");\n"
        "  %8 = nn.batch_norm(%3, %4, %5, %6, %7);\n"
        "  %9 = %8.0;\n"
        "  %10 = nn.relu(%9);\n"
        "  %11 = annotation.compiler_end(%10, compiler=\"test_target\");\n"
        "  %12 = %8.1;\n"
        "  %13 = annotation.compiler_end(%12, compiler=\"test_target\");\n"
        "  %14 = abs(%13);\n"
        "  %15 = %8.2;\n"
        "  %16 = annotation.compiler_end(%15, compiler=\"test_target\");\n"
        "  %17 = abs(%16);\n"
        "  (%11, %14, %17)\n"
        "}\n");
    byocl_module_free(m);
}

/* x -> relu -> abs (host) -> multiply, and relu -> multiply directly. One region
 * {relu, multiply, relu} would need its own output through abs; the direct edge is cut
 * instead (two regions, which merge_regions must leave apart). relu's value leaves for
 * the host and for the other region: one compiler_end each. */
static void test_target_diamond_with_host_branch(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(2, 3), float32]) {\n"
                            "  %0 = nn.relu(%x);\n"
                            "  %1 = abs(%0);\n"
                            "  %2 = multiply(%0, %1);\n"
                            "  nn.relu(%2)\n"
                            "}\n");
    expect_annotated(m, TEST_TARGET, 1,
                     "#[version = \"0.0.5\"]\n"
                     "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
                     "  %0 = annotation.compiler_begin(%x, compiler=\"test_target\");\n"
                     "  %1 = nn.relu(%0);\n"
                     "  %2 = annotation.compiler_end(%1, compiler=\"test_target\");\n"
                     "  %3 = annotation.compiler_end(%1, compiler=\"test_target\");\n"
                     "  %4 = abs(%2);\n"
                     "  %5 = annotation.compiler_begin(%3, compiler=\"test_target\");\n"
                     "  %6 = annotation.compiler_begin(%4, compiler=\"test_target\");\n"
                     "  %7 = multiply(%5, %6);\n"
                     "  %8 = nn.relu(%7);\n"
                     "  annotation.compiler_end(%8, compiler=\"test_target\")\n"
                     "}\n");
    byocl_module_free(m);
}

/* A diamond entirely on the target is one region; a value used twice gets one
 * compiler_begin. */
static void test_target_diamond_on_target(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(2, 3), float32]) {\n"
                            "  %0 = nn.relu(%x);\n"
                            "  %1 = multiply(%x, %0);\n"
                            "  %2 = multiply(%0, %1);\n"
                            "  abs(%2)\n"
                            "}\n");
    expect_annotated(m, TEST_TARGET, 1,
                     "#[version = \"0.0.5\"]\n"
                     "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
                     "  %0 = annotation.compiler_begin(%x, compiler=\"test_target\");\n"
                     "  %1 = nn.relu(%0);\n"
                     "  %2 = multiply(%0, %1);\n"
                     "  %3 = multiply(%1, %2);\n"
                     "  %4 = annotation.compiler_end(%3, compiler=\"test_target\");\n"
                     "  abs(%4)\n"
                     "}\n");
    byocl_module_free(m);
}

/* @main returning a region value directly, and a region value that is a tuple
 * (batch_norm's three outputs): a compiler_end per field, put back into a tuple. Binding
 * names are kept. */
static void test_target_result_in_region(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(1, 2, 2, 2), float32], %g: Tensor[(2), "
                            "float32], %b: Tensor[(2), float32], %mu: Tensor[(2), float32], "
                            "%var: Tensor[(2), float32]) {\n"
                            "  %y = abs(%x);\n"
                            "  nn.batch_norm(%y, %g, %b, %mu, %var)\n"
                            "}\n");
    expect_annotated(m, TEST_TARGET, 1,
                     "#[version = \"0.0.5\"]\n"
                     "def @main(%x: Tensor[(1, 2, 2, 2), float32], %g: Tensor[(2), float32], "
                     "%b: Tensor[(2), float32], %mu: Tensor[(2), float32], %var: Tensor[(2), "
                     "float32]) -> (Tensor[(1, 2, 2, 2), float32], Tensor[(2), float32], "
                     "Tensor[(2), float32]) {\n"
                     "  %y = abs(%x);\n"
                     "  %0 = annotation.compiler_begin(%y, compiler=\"test_target\");\n"
                     "  %1 = annotation.compiler_begin(%g, compiler=\"test_target\");\n"
                     "  %2 = annotation.compiler_begin(%b, compiler=\"test_target\");\n"
                     "  %3 = annotation.compiler_begin(%mu, compiler=\"test_target\");\n"
                     "  %4 = annotation.compiler_begin(%var, compiler=\"test_target\");\n"
                     "  %5 = nn.batch_norm(%0, %1, %2, %3, %4);\n"
                     "  %6 = %5.0;\n"
                     "  %7 = annotation.compiler_end(%6, compiler=\"test_target\");\n"
                     "  %8 = %5.1;\n"
                     "  %9 = annotation.compiler_end(%8, compiler=\"test_target\");\n"
                     "  %10 = %5.2;\n"
                     "  %11 = annotation.compiler_end(%10, compiler=\"test_target\");\n"
                     "  (%7, %9, %11)\n"
                     "}\n");
    byocl_module_free(m);

    m = ts_parse_typed("#[version = \"0.0.5\"]\n"
              "def @main(%x: Tensor[(4), float32]) {\n"
              "  %0 = abs(%x);\n"
              "  nn.relu(%0)\n"
              "}\n");
    expect_annotated(m, TEST_TARGET, 1,
                     "#[version = \"0.0.5\"]\n"
                     "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
                     "  %0 = abs(%x);\n"
                     "  %1 = annotation.compiler_begin(%0, compiler=\"test_target\");\n"
                     "  %2 = nn.relu(%1);\n"
                     "  annotation.compiler_end(%2, compiler=\"test_target\")\n"
                     "}\n");
    byocl_module_free(m);
}

/* Tuples go with their users: (relu, y) feeds a concatenate on the target, so it joins
 * the region and y enters it; (relu, relu) feeds a host concatenate (axis 0), so relu's
 * value leaves the region once for both fields. Constants enter through a
 * compiler_begin too. */
static void test_target_tuples_and_constants(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(1, 4), float32], %y: Tensor[(1, 4), "
                            "float32]) {\n"
                            "  %0 = nn.relu(%x);\n"
                            "  %1 = (%0, %y);\n"
                            "  %2 = concatenate(%1, axis=1);\n"
                            "  %3 = multiply(%2, 2f);\n"
                            "  %4 = (%0, %0);\n"
                            "  %5 = concatenate(%4);\n"
                            "  (%3, %5)\n"
                            "}\n");
    expect_annotated(m, TEST_TARGET, 1,
                     "#[version = \"0.0.5\"]\n"
                     "def @main(%x: Tensor[(1, 4), float32], %y: Tensor[(1, 4), float32]) -> "
                     "(Tensor[(1, 8), float32], Tensor[(2, 4), float32]) {\n"
                     "  %0 = annotation.compiler_begin(%x, compiler=\"test_target\");\n"
                     "  %1 = nn.relu(%0);\n"
                     "  %2 = annotation.compiler_end(%1, compiler=\"test_target\");\n"
                     "  %3 = annotation.compiler_begin(%y, compiler=\"test_target\");\n"
                     "  %4 = (%1, %3);\n"
                     "  %5 = concatenate(%4, axis=1);\n"
                     "  %6 = annotation.compiler_begin(2f, compiler=\"test_target\");\n"
                     "  %7 = multiply(%5, %6);\n"
                     "  %8 = annotation.compiler_end(%7, compiler=\"test_target\");\n"
                     "  %9 = (%2, %2);\n"
                     "  %10 = concatenate(%9);\n"
                     "  (%8, %10)\n"
                     "}\n");
    byocl_module_free(m);
}

/* Priority order decides between two targets that both take relu; where the target
 * changes, the value leaves one region (compiler_end of the first target) and enters the
 * next (compiler_begin of the second). A value entering two regions of the same target
 * gets a compiler_begin per region. */
static void test_target_priority_and_target_changes(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(3), float32]) {\n"
                            "  %0 = nn.relu(%x);\n"
                            "  %1 = abs(%0);\n"
                            "  multiply(%1, %x)\n"
                            "}\n");
    const char *const first_test[] = {"test_target", "other"};
    expect_annotated(m, first_test, 2,
                     "#[version = \"0.0.5\"]\n"
                     "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                     "  %0 = annotation.compiler_begin(%x, compiler=\"test_target\");\n"
                     "  %1 = nn.relu(%0);\n"
                     "  %2 = annotation.compiler_end(%1, compiler=\"test_target\");\n"
                     "  %3 = annotation.compiler_begin(%2, compiler=\"other\");\n"
                     "  %4 = abs(%3);\n"
                     "  %5 = annotation.compiler_end(%4, compiler=\"other\");\n"
                     "  %6 = annotation.compiler_begin(%5, compiler=\"test_target\");\n"
                     "  %7 = annotation.compiler_begin(%x, compiler=\"test_target\");\n"
                     "  %8 = multiply(%6, %7);\n"
                     "  annotation.compiler_end(%8, compiler=\"test_target\")\n"
                     "}\n");
    const char *const first_other[] = {"other", "test_target"};
    expect_annotated(m, first_other, 2,
                     "#[version = \"0.0.5\"]\n"
                     "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                     "  %0 = annotation.compiler_begin(%x, compiler=\"other\");\n"
                     "  %1 = nn.relu(%0);\n"
                     "  %2 = abs(%1);\n"
                     "  %3 = annotation.compiler_end(%2, compiler=\"other\");\n"
                     "  %4 = annotation.compiler_begin(%3, compiler=\"test_target\");\n"
                     "  %5 = annotation.compiler_begin(%x, compiler=\"test_target\");\n"
                     "  %6 = multiply(%4, %5);\n"
                     "  annotation.compiler_end(%6, compiler=\"test_target\")\n"
                     "}\n");
    /* Nothing supported: the module comes back as it was. */
    byocl_module *plain = ts_parse_typed("#[version = \"0.0.5\"]\n"
                                "def @main(%x: Tensor[(3), float32]) {\n"
                                "  %0 = add(%x, %x);\n"
                                "  subtract(%0, %x)\n"
                                "}\n");
    expect_annotated(plain, TEST_TARGET, 1,
                     "#[version = \"0.0.5\"]\n"
                     "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                     "  %0 = add(%x, %x);\n"
                     "  subtract(%0, %x)\n"
                     "}\n");
    byocl_module_free(plain);
    byocl_module_free(m);
}

/* A module whose types are not inferred yet is typed first (targets see types), and
 * other functions are left alone; calls of global functions stay on the host. */
static void test_target_untyped_module_with_global_call(void **state)
{
    (void)state;
    const char *text = "#[version = \"0.0.5\"]\n"
                       "def @helper(%h: Tensor[(3), float32]) {\n"
                       "  nn.relu(%h)\n"
                       "}\n"
                       "\n"
                       "def @main(%x: Tensor[(3), float32]) {\n"
                       "  %0 = @helper(%x);\n"
                       "  nn.relu(%0)\n"
                       "}\n";
    byocl_module *m = NULL;
    byocl_error err = {0};
    assert_int_equal(byocl_text_parse(text, strlen(text), "t.relay", NULL, &m, &err), BYOCL_OK);
    if (byocl_annotate_target(m, TEST_TARGET, 1, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_printed(m, "#[version = \"0.0.5\"]\n"
                      "def @helper(%h: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                      "  nn.relu(%h)\n"
                      "}\n"
                      "\n"
                      "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                      "  %0 = @helper(%x);\n"
                      "  %1 = annotation.compiler_begin(%0, compiler=\"test_target\");\n"
                      "  %2 = nn.relu(%1);\n"
                      "  annotation.compiler_end(%2, compiler=\"test_target\")\n"
                      "}\n");
    byocl_module *typed = ts_parse_typed(text);
    assert_same_outputs(typed, m);
    byocl_module_free(typed);
    byocl_module_free(m);
}

/* ------------------------------------------- regions on the built-in models */

static int find_root(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/* The regions as a partitioner sees them: nodes joined by every edge except the one into
 * a compiler_begin and the one out of a compiler_end; a region is a group that holds an
 * annotation. Checks that each region's annotations name one compiler and that no path
 * leaves a region and comes back (convexity). Returns the number of regions. */
static int check_regions(const byocl_function *fn)
{
    int n = byocl_function_num_nodes(fn);
    int *parent = malloc((size_t)n * sizeof *parent);
    const char **compiler = calloc((size_t)n, sizeof *compiler);
    bool *reaches = malloc((size_t)n);
    assert_true(parent && compiler && reaches);
    for (int id = 0; id < n; id++)
        parent[id] = id;
    for (int id = 0; id < n; id++)
        for (int k = 0; k < byocl_node_num_args(fn, id); k++) {
            int a = byocl_node_arg(fn, id, k);
            if (!pass_is_compiler_begin(fn, id) && !pass_is_compiler_end(fn, a))
                parent[find_root(parent, a)] = find_root(parent, id);
        }
    int n_regions = 0;
    for (int id = 0; id < n; id++) {
        if (!pass_is_annotation(fn, id))
            continue;
        const char *c = byocl_attrs_get_str(byocl_node_attrs(fn, id), "compiler", "");
        int r = find_root(parent, id);
        if (!compiler[r]) {
            compiler[r] = c;
            n_regions++;
        }
        assert_string_equal(c, compiler[r]);
    }
    for (int r = 0; r < n; r++) {
        if (!compiler[r] || find_root(parent, r) != r)
            continue;
        /* reaches[id]: id is outside r and depends on r. */
        for (int id = 0; id < n; id++) {
            bool inside = find_root(parent, id) == r;
            reaches[id] = false;
            for (int k = 0; k < byocl_node_num_args(fn, id); k++) {
                int a = byocl_node_arg(fn, id, k);
                if (!inside && (find_root(parent, a) == r || reaches[a]))
                    reaches[id] = true;
                if (inside && reaches[a])
                    fail_msg("a region of \"%s\" depends on itself through node #%d",
                             compiler[r], a);
            }
        }
    }
    free(parent);
    free(compiler);
    free(reaches);
    return n_regions;
}

/* Every region annotate_target makes on the built-in networks is convex (the depth rule
 * cuts the edges that would close a loop through the host), whatever the targets take;
 * the results are well formed and read back. */
static void test_target_regions_convex_on_builtin_models(void **state)
{
    (void)state;
    byocl_error err = {0};
    const char *const models[] = {"resnet18", "mobilenet_v2"};
    const char *const scatter_first[] = {"scatter", "other"};
    const char *const test_first[] = {"test_target", "other", "scatter"};
    const struct {
        const char *const *names;
        int n;
    } configs[] = {{TEST_TARGET, 1}, {scatter_first, 2}, {test_first, 3}};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
            byocl_module *m = NULL;
            if (byocl_builtin_build(models[i], &m, &err) != BYOCL_OK ||
                byocl_annotate_target(m, configs[c].names, configs[c].n, &err) != BYOCL_OK ||
                byocl_verify(m, true, &err) != BYOCL_OK)
                fail_msg("%s: %s", models[i], err.msg);
            assert_true(check_regions(byocl_module_find(m, "main")) >= 2);
            /* Constants print as meta[relay.Constant][K]: read them back from `meta`. */
            byocl_params *meta = byocl_params_new();
            char *text = byocl_text_print(m, NULL, meta, &err);
            byocl_module *back = NULL;
            if (!text ||
                byocl_text_parse(text, strlen(text), models[i], meta, &back, &err) != BYOCL_OK ||
                byocl_infer_types(back, &err) != BYOCL_OK)
                fail_msg("%s: %s", models[i], err.msg);
            char *again = byocl_text_print(back, NULL, NULL, &err);
            assert_non_null(again);
            assert_string_equal(again, text);
            free(again);
            free(text);
            byocl_params_free(meta);
            byocl_module_free(back);
            byocl_module_free(m);
        }
}

static void expect_target_error(const char *text, const char *const *targets, int n,
                                byocl_status status, const char *msg)
{
    byocl_module *m = ts_parse_typed(text);
    char *before = byocl_text_print(m, NULL, NULL, NULL);
    byocl_error err = {0};
    assert_int_equal(byocl_annotate_target(m, targets, n, &err), status);
    assert_string_equal(err.msg, msg);
    char *after = byocl_text_print(m, NULL, NULL, NULL);
    assert_string_equal(after, before); /* an error leaves the module as it was */
    free(before);
    free(after);
    byocl_module_free(m);
}

static const char *const RELU_TEXT = "#[version = \"0.0.5\"]\n"
                                     "def @main(%x: Tensor[(3), float32]) {\n"
                                     "  nn.relu(%x)\n"
                                     "}\n";

static void test_target_errors(void **state)
{
    (void)state;
    char *annotated = ts_read_file(ts_fixture("text/seed_graph.relay"), NULL);
    expect_target_error(annotated, TEST_TARGET, 1, BYOCL_ERR_INVALID,
                        "@main is already annotated (node %0); annotate_target works on an "
                        "unannotated module");
    free(annotated);
    const char *const unknown[] = {"test_target", "vulkan"};
    expect_target_error(RELU_TEXT, unknown, 2, BYOCL_ERR_NOT_FOUND,
                        "unknown target \"vulkan\" (registered targets: test_target, other, "
                        "scatter)");
    const char *const twice[] = {"other", "other"};
    expect_target_error(RELU_TEXT, twice, 2, BYOCL_ERR_INVALID, "target \"other\" is listed twice");
    const char *const null_name[] = {NULL};
    expect_target_error(RELU_TEXT, null_name, 1, BYOCL_ERR_INVALID, "target 0 has no name");
    expect_target_error(RELU_TEXT, TEST_TARGET, 0, BYOCL_ERR_INVALID,
                        "annotate_target needs at least one target");
    expect_target_error("#[version = \"0.0.5\"]\n"
                        "def @other(%x: Tensor[(3), float32]) {\n"
                        "  nn.relu(%x)\n"
                        "}\n",
                        TEST_TARGET, 1, BYOCL_ERR_NOT_FOUND, "no function @main in the module");
    byocl_error err = {0};
    assert_int_equal(byocl_annotate_target(NULL, TEST_TARGET, 1, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "annotate_target: bad arguments");
}

/* ---------------------------------------------------------- annotate_explain */

typedef struct explain_log {
    char text[2048];
} explain_log;

static void log_reason(void *user, const byocl_function *fn, int node, const char *reason)
{
    explain_log *log = user;
    char label[64];
    size_t at = strlen(log->text);
    snprintf(log->text + at, sizeof log->text - at, "%s %s: %s\n",
             byocl_node_label(fn, node, label, sizeof label),
             byocl_node_op(fn, node) ? byocl_node_op(fn, node) : byocl_node_callee(fn, node),
             reason);
}

static void test_explain_lists_host_calls(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed_file(ts_fixture("annotate/seed_plain.relay"));
    const char *const both[] = {"test_target", "other"};
    explain_log log = {""};
    byocl_error err = {0};
    other_asked = 0;
    assert_int_equal(byocl_annotate_explain(m, both, 2, log_reason, &log, &err), BYOCL_OK);
    /* abs goes to "other"; only add stays on the host. "other" is asked about the calls
     * test_target refused (add, abs, abs) and about nothing else. */
    assert_string_equal(log.text, "%0 add: test_target: op add is not supported; other: not "
                                  "supported\n");
    assert_int_equal(other_asked, 3);

    memset(&log, 0, sizeof log);
    assert_int_equal(byocl_annotate_explain(m, TEST_TARGET, 1, log_reason, &log, &err), BYOCL_OK);
    assert_string_equal(log.text, "%0 add: test_target: op add is not supported\n"
                                  "%6 abs: test_target: op abs is not supported\n"
                                  "%8 abs: test_target: op abs is not supported\n");
    byocl_module_free(m);
}

/* Explain works on a module that is not typed yet (and leaves it untyped), and says why
 * a global call stays on the host. */
static void test_explain_untyped_and_global_calls(void **state)
{
    (void)state;
    const char *text = "#[version = \"0.0.5\"]\n"
                       "def @helper(%h: Tensor[(1, 4, 5, 5), float32]) {\n"
                       "  abs(%h)\n"
                       "}\n"
                       "\n"
                       "def @main(%x: Tensor[(1, 4, 5, 5), float32], %w: Tensor[(4, 2, 3, 3), "
                       "float32]) {\n"
                       "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=2);\n"
                       "  %1 = @helper(%0);\n"
                       "  %2 = (%1, %0);\n"
                       "  %3 = concatenate(%2);\n"
                       "  nn.relu(%3)\n"
                       "}\n";
    byocl_module *m = NULL;
    byocl_error err = {0};
    assert_int_equal(byocl_text_parse(text, strlen(text), "t.relay", NULL, &m, &err), BYOCL_OK);
    explain_log log = {""};
    const char *const both[] = {"test_target", "other"};
    if (byocl_annotate_explain(m, both, 2, log_reason, &log, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(log.text,
                        "%0 nn.conv2d: test_target: grouped convolution (groups=2) is not "
                        "supported; other: not supported\n"
                        "%1 helper: a call of the global function @helper; targets see calls of "
                        "ops only\n"
                        "%3 concatenate: test_target: concatenate along axis 0 is not "
                        "supported; other: not supported\n");
    const byocl_function *fn = byocl_module_find(m, "main");
    assert_int_equal(byocl_node_type(fn, byocl_function_body(fn))->kind, BYOCL_TYPE_NONE);

    char *annotated = ts_read_file(ts_fixture("text/seed_graph.relay"), NULL);
    byocl_module *a = ts_parse_typed(annotated);
    free(annotated);
    assert_int_equal(byocl_annotate_explain(a, TEST_TARGET, 1, log_reason, &log, &err),
                     BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "@main is already annotated (node %0); annotate_target works "
                                 "on an unannotated module");
    assert_int_equal(byocl_annotate_explain(m, TEST_TARGET, 1, NULL, NULL, &err),
                     BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "annotate_explain needs a report function");
    const char *const unknown[] = {"nope"};
    assert_int_equal(byocl_annotate_explain(m, unknown, 1, log_reason, &log, &err),
                     BYOCL_ERR_NOT_FOUND);
    assert_string_equal(err.msg, "unknown target \"nope\" (registered targets: test_target, "
                                 "other, scatter)");
    byocl_module_free(a);
    byocl_module_free(m);
}

/* ----------------------------------------------------------- annotate_range */

/* The thread's VGG block: relu .. relu (%76..%81, the file's names; #0..#5 in byocl's own
 * numbering) as one "ccompiler" region. Both free variables, used by the casts inside the
 * range, get their compiler_begin (comaniac's answer); the relu's value leaves for the
 * pooling on the host. */
static void test_range_vgg_block(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed_file(ts_fixture("annotate/vgg_block_plain.relay"));
    byocl_module *a = clone(m);
    byocl_error err = {0};
    if (byocl_annotate_range(a, 76, 81, "ccompiler", &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    /* The compiler_begins are new bindings, so @main is numbered from %0 again. */
    assert_printed(
        a, "#[version = \"0.0.5\"]\n"
           "def @main(%74: Tensor[(1, 512, 14, 14), float16], "
           "%block5_conv3/convolution/ReadVariableOp:0: Tensor[(512, 512, 3, 3), float32], "
           "%block5_conv3/BiasAdd/ReadVariableOp:0: Tensor[(512), float32]) -> Tensor[(1, 512, "
           "7, 7), float16] {\n"
           "  %0 = annotation.compiler_begin(%74, compiler=\"ccompiler\");\n"
           "  %1 = nn.relu(%0);\n"
           "  %2 = annotation.compiler_begin(%block5_conv3/convolution/ReadVariableOp:0, "
           "compiler=\"ccompiler\");\n"
           "  %3 = cast(%2, dtype=\"float16\");\n"
           "  %4 = nn.conv2d(%1, %3, padding=[1, 1, 1, 1], channels=512, kernel_size=[3, 3], "
           "out_dtype=\"float16\");\n"
           "  %5 = annotation.compiler_begin(%block5_conv3/BiasAdd/ReadVariableOp:0, "
           "compiler=\"ccompiler\");\n"
           "  %6 = cast(%5, dtype=\"float16\");\n"
           "  %7 = nn.bias_add(%4, %6);\n"
           "  %8 = nn.relu(%7);\n"
           "  %9 = annotation.compiler_end(%8, compiler=\"ccompiler\");\n"
           "  nn.max_pool2d(%9, pool_size=[2, 2], strides=[2, 2])\n"
           "}\n");
    /* Type-checked and well formed (running the 512-channel conv twice is left to the
     * smaller graphs below). */
    if (byocl_verify(a, true, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_module_free(a);

    /* The thread's own attempt already carries annotations: a range over them is refused. */
    byocl_module *thread = ts_parse_typed_file(ts_fixture("text/vgg_block.relay"));
    assert_int_equal(byocl_annotate_range(thread, 75, 78, "ccompiler", &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "range %75..%78 contains %75 (annotation.compiler_begin); "
                                 "annotate_range works on nodes that are not annotated yet");
    /* ... and a range that uses one of its compiler_begins from outside it too. */
    assert_int_equal(byocl_annotate_range(thread, 76, 78, "ccompiler", &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg,
                        "range %76..%78: %76 uses %75, a compiler_begin of another region");
    byocl_module_free(thread);
    byocl_module_free(m);
}

/* A small graph of the thread's first shape, run on the reference executor. */
static const char *const SMALL_SEED =
    "#[version = \"0.0.5\"]\n"
    "def @main(%data: Tensor[(1, 3, 6, 6), float32], %weight: Tensor[(4, 3, 3, 3), float32], "
    "%bn_gamma: Tensor[(4), float32], %bn_beta: Tensor[(4), float32], %bn_mean: Tensor[(4), "
    "float32], %bn_var: Tensor[(4), float32], %w0: Tensor[(4, 3, 3, 3), float32]) {\n"
    "  %0 = add(%weight, %w0);\n"
    "  %1 = nn.conv2d(%data, %0, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);\n"
    "  %2 = nn.batch_norm(%1, %bn_gamma, %bn_beta, %bn_mean, %bn_var);\n"
    "  %3 = %2.0;\n"
    "  %4 = nn.relu(%3);\n"
    "  %5 = %2.1;\n"
    "  %6 = abs(%5);\n"
    "  %7 = %2.2;\n"
    "  %8 = abs(%7);\n"
    "  (%4, %6, %8)\n"
    "}\n";

/* How SMALL_SEED prints up to its first binding. */
#define SMALL_SEED_HEAD                                                                       \
    "#[version = \"0.0.5\"]\n"                                                                \
    "def @main(%data: Tensor[(1, 3, 6, 6), float32], %weight: Tensor[(4, 3, 3, 3), float32], " \
    "%bn_gamma: Tensor[(4), float32], %bn_beta: Tensor[(4), float32], %bn_mean: Tensor[(4), "  \
    "float32], %bn_var: Tensor[(4), float32], %w0: Tensor[(4, 3, 3, 3), float32]) -> "         \
    "(Tensor[(1, 4, 6, 6), float32], Tensor[(4), float32], Tensor[(4), float32]) {\n"

/* conv2d .. the last tuple item, abs %6 included: the region has three outputs (relu and
 * abs go to the result, the last item to the host abs); add's value and the parameters
 * come in. */
static void test_range_multiple_outputs(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(SMALL_SEED);
    expect_range(m, 1, 7, "ccompiler",
                 SMALL_SEED_HEAD
                 "  %0 = add(%weight, %w0);\n"
                 "  %1 = annotation.compiler_begin(%data, compiler=\"ccompiler\");\n"
                 "  %2 = annotation.compiler_begin(%0, compiler=\"ccompiler\");\n"
                 "  %3 = nn.conv2d(%1, %2, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);\n"
                 "  %4 = annotation.compiler_begin(%bn_gamma, compiler=\"ccompiler\");\n"
                 "  %5 = annotation.compiler_begin(%bn_beta, compiler=\"ccompiler\");\n"
                 "  %6 = annotation.compiler_begin(%bn_mean, compiler=\"ccompiler\");\n"
                 "  %7 = annotation.compiler_begin(%bn_var, compiler=\"ccompiler\");\n"
                 "  %8 = nn.batch_norm(%3, %4, %5, %6, %7);\n"
                 "  %9 = %8.0;\n"
                 "  %10 = nn.relu(%9);\n"
                 "  %11 = annotation.compiler_end(%10, compiler=\"ccompiler\");\n"
                 "  %12 = %8.1;\n"
                 "  %13 = abs(%12);\n"
                 "  %14 = annotation.compiler_end(%13, compiler=\"ccompiler\");\n"
                 "  %15 = %8.2;\n"
                 "  %16 = annotation.compiler_end(%15, compiler=\"ccompiler\");\n"
                 "  %17 = abs(%16);\n"
                 "  (%11, %14, %17)\n"
                 "}\n");
    byocl_module_free(m);
}

/* conv2d .. the second tuple item: the host still takes batch_norm's last item, so the
 * whole tuple leaves, field by field (annotations take tensors only), and is put back
 * together outside; relu and the second item leave on their own. */
static void test_range_tuple_leaves(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(SMALL_SEED);
    expect_range(m, 1, 5, "ccompiler",
                 SMALL_SEED_HEAD
                 "  %0 = add(%weight, %w0);\n"
                 "  %1 = annotation.compiler_begin(%data, compiler=\"ccompiler\");\n"
                 "  %2 = annotation.compiler_begin(%0, compiler=\"ccompiler\");\n"
                 "  %3 = nn.conv2d(%1, %2, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);\n"
                 "  %4 = annotation.compiler_begin(%bn_gamma, compiler=\"ccompiler\");\n"
                 "  %5 = annotation.compiler_begin(%bn_beta, compiler=\"ccompiler\");\n"
                 "  %6 = annotation.compiler_begin(%bn_mean, compiler=\"ccompiler\");\n"
                 "  %7 = annotation.compiler_begin(%bn_var, compiler=\"ccompiler\");\n"
                 "  %8 = nn.batch_norm(%3, %4, %5, %6, %7);\n"
                 "  %9 = %8.0;\n"
                 "  %10 = annotation.compiler_end(%9, compiler=\"ccompiler\");\n"
                 "  %11 = %8.1;\n"
                 "  %12 = annotation.compiler_end(%11, compiler=\"ccompiler\");\n"
                 "  %13 = %8.2;\n"
                 "  %14 = annotation.compiler_end(%13, compiler=\"ccompiler\");\n"
                 "  %15 = (%10, %12, %14);\n"
                 "  %16 = %8.0;\n"
                 "  %17 = nn.relu(%16);\n"
                 "  %18 = annotation.compiler_end(%17, compiler=\"ccompiler\");\n"
                 "  %19 = %8.1;\n"
                 "  %20 = annotation.compiler_end(%19, compiler=\"ccompiler\");\n"
                 "  %21 = abs(%20);\n"
                 "  %22 = %15.2;\n"
                 "  %23 = abs(%22);\n"
                 "  (%18, %21, %23)\n"
                 "}\n");
    byocl_module_free(m);
}

/* A range that starts at a tuple item of an outside tuple: the tuple enters field by
 * field (annotations take tensors only) and is put back together inside. */
static void test_range_tuple_enters(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(SMALL_SEED);
    expect_range(m, 3, 4, "ccompiler",
                 SMALL_SEED_HEAD
                 "  %0 = add(%weight, %w0);\n"
                 "  %1 = nn.conv2d(%data, %0, padding=[1, 1, 1, 1], channels=4, "
                 "kernel_size=[3, 3]);\n"
                 "  %2 = nn.batch_norm(%1, %bn_gamma, %bn_beta, %bn_mean, %bn_var);\n"
                 "  %3 = %2.0;\n"
                 "  %4 = annotation.compiler_begin(%3, compiler=\"ccompiler\");\n"
                 "  %5 = %2.1;\n"
                 "  %6 = annotation.compiler_begin(%5, compiler=\"ccompiler\");\n"
                 "  %7 = %2.2;\n"
                 "  %8 = annotation.compiler_begin(%7, compiler=\"ccompiler\");\n"
                 "  %9 = (%4, %6, %8);\n"
                 "  %10 = %9.0;\n"
                 "  %11 = nn.relu(%10);\n"
                 "  %12 = annotation.compiler_end(%11, compiler=\"ccompiler\");\n"
                 "  %13 = %2.1;\n"
                 "  %14 = abs(%13);\n"
                 "  %15 = %2.2;\n"
                 "  %16 = abs(%15);\n"
                 "  (%12, %14, %16)\n"
                 "}\n");
    byocl_module_free(m);
}

/* A second range on an already annotated module, for another target: the first region's
 * compiler_end flows into the second region through a compiler_begin. */
static void test_range_twice(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(3), float32]) {\n"
                            "  %0 = nn.relu(%x);\n"
                            "  %1 = abs(%0);\n"
                            "  %2 = multiply(%1, %x);\n"
                            "  tanh(%2)\n"
                            "}\n");
    byocl_module *a = clone(m);
    byocl_error err = {0};
    if (byocl_annotate_range(a, 0, 0, "first", &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    /* Now #0 begin, #1 relu, #2 end, #3 abs, #4 multiply in byocl's own numbering, as the
     * annotated module prints; the file's %1 and %2 name abs and multiply still. */
    if (byocl_annotate_range_spec(a, "#3:#4", "second", &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_printed(a, "#[version = \"0.0.5\"]\n"
                      "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                      "  %0 = annotation.compiler_begin(%x, compiler=\"first\");\n"
                      "  %1 = nn.relu(%0);\n"
                      "  %2 = annotation.compiler_end(%1, compiler=\"first\");\n"
                      "  %3 = annotation.compiler_begin(%2, compiler=\"second\");\n"
                      "  %4 = abs(%3);\n"
                      "  %5 = annotation.compiler_begin(%x, compiler=\"second\");\n"
                      "  %6 = multiply(%4, %5);\n"
                      "  %7 = annotation.compiler_end(%6, compiler=\"second\");\n"
                      "  tanh(%7)\n"
                      "}\n");
    assert_same_outputs(m, a);
    byocl_module_free(a);
    byocl_module_free(m);
}

static void expect_range_error(const char *text, int first, int last, const char *target,
                               byocl_status status, const char *msg)
{
    byocl_module *m = ts_parse_typed(text);
    char *before = byocl_text_print(m, NULL, NULL, NULL);
    byocl_error err = {0};
    assert_int_equal(byocl_annotate_range(m, first, last, target, &err), status);
    assert_string_equal(err.msg, msg);
    char *after = byocl_text_print(m, NULL, NULL, NULL);
    assert_string_equal(after, before);
    free(before);
    free(after);
    byocl_module_free(m);
}

/* %0 and %1 are numbered; %mid (a named binding) and %a -> %b lie between them without a
 * number, so they are outside the range, and the range would feed itself through them. */
static void test_range_not_convex(void **state)
{
    (void)state;
    expect_range_error("#[version = \"0.0.5\"]\n"
                       "def @main(%x: Tensor[(3), float32]) {\n"
                       "  %0 = nn.relu(%x);\n"
                       "  %mid = abs(%0);\n"
                       "  %1 = multiply(%0, %mid);\n"
                       "  nn.relu(%1)\n"
                       "}\n",
                       0, 1, "ccompiler", BYOCL_ERR_INVALID,
                       "range %0..%1 is not convex: %0 leaves the range and %1 comes back "
                       "through %mid");
    /* Two ways back: the shorter one (through %c alone) is reported. */
    expect_range_error("#[version = \"0.0.5\"]\n"
                       "def @main(%x: Tensor[(3), float32]) {\n"
                       "  %0 = nn.relu(%x);\n"
                       "  %a = abs(%0);\n"
                       "  %b = tanh(%a);\n"
                       "  %1 = add(%0, %x);\n"
                       "  %2 = multiply(%1, %b);\n"
                       "  %c = abs(%1);\n"
                       "  %3 = add(%2, %c);\n"
                       "  nn.relu(%3)\n"
                       "}\n",
                       0, 3, "ccompiler", BYOCL_ERR_INVALID,
                       "range %0..%3 is not convex: %1 leaves the range and %3 comes back "
                       "through %c");
    expect_range_error("#[version = \"0.0.5\"]\n"
                       "def @main(%x: Tensor[(3), float32]) {\n"
                       "  %0 = nn.relu(%x);\n"
                       "  %a = abs(%0);\n"
                       "  %b = tanh(%a);\n"
                       "  %1 = multiply(%0, %b);\n"
                       "  nn.relu(%1)\n"
                       "}\n",
                       0, 1, "ccompiler", BYOCL_ERR_INVALID,
                       "range %0..%1 is not convex: %0 leaves the range and %1 comes back "
                       "through %a -> %b");
}

static void test_range_endpoint_errors(void **state)
{
    (void)state;
    char *vgg = ts_read_file(ts_fixture("annotate/vgg_block_plain.relay"), NULL);
    /* Bare numbers are the file's %N: its bindings are %76..%81. */
    expect_range_error(vgg, 76, 90, "ccompiler", BYOCL_ERR_NOT_FOUND,
                       "range %76..%90: @main has no node %90 (its bindings run from %76 to "
                       "%81; byocl's own numbers are #0..#5)");
    expect_range_error(vgg, 75, 82, "ccompiler", BYOCL_ERR_NOT_FOUND,
                       "range %75..%82: @main has no node %75 (its bindings run from %76 to "
                       "%81; byocl's own numbers are #0..#5)");
    expect_range_error(vgg, 0, 5, "ccompiler", BYOCL_ERR_NOT_FOUND,
                       "range %0..%5: @main has no node %0 (its bindings run from %76 to %81; "
                       "byocl's own numbers are #0..#5)");
    expect_range_error(vgg, -1, 2, "ccompiler", BYOCL_ERR_NOT_FOUND,
                       "range %-1..%2: @main has no node %-1 (its bindings run from %76 to "
                       "%81; byocl's own numbers are #0..#5)");
    expect_range_error(vgg, 79, 77, "ccompiler", BYOCL_ERR_INVALID,
                       "range %79..%77 is empty: %79 comes after %77");
    expect_range_error("#[version = \"0.0.5\"]\n"
                       "def @main(%x: Tensor[(3), float32]) {\n"
                       "  %0 = nn.relu(%x);\n"
                       "  %1 = abs(%0);\n"
                       "  %2 = tanh(%1);\n"
                       "  %3 = exp(%2);\n"
                       "  %4 = nn.relu(%3);\n"
                       "  abs(%4)\n"
                       "}\n",
                       4, 2, "ccompiler", BYOCL_ERR_INVALID,
                       "range %4..%2 is empty: %4 comes after %2");
    expect_range_error(vgg, 0, 5, "c-compiler", BYOCL_ERR_INVALID,
                       "bad target name \"c-compiler\": '-' at position 1; a target name has "
                       "letters, digits and '_' only");
    expect_range_error(vgg, 0, 5, NULL, BYOCL_ERR_INVALID, "a target needs a name");
    free(vgg);
    expect_range_error(RELU_TEXT, 0, 0, "ccompiler", BYOCL_ERR_NOT_FOUND,
                       "range %0..%0: @main has no node %0 (it has no numbered nodes)");
    byocl_error err = {0};
    assert_int_equal(byocl_annotate_range(NULL, 0, 0, "t", &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "annotate_range: no module given");
}

/* A range in the file's names (%76:%81), in byocl's own numbering (#0:#5) and bare (76:81:
 * the file's, since its bindings are numbered) covers the same nodes of the VGG block. */
static void test_range_spellings(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed_file(ts_fixture("annotate/vgg_block_plain.relay"));
    static const char *const same[] = {"%76:%81", "#0:#5", "76:81", "%76:81"};
    byocl_error err = {0};
    byocl_module *want = clone(m);
    if (byocl_annotate_range(want, 76, 81, "ccompiler", &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    char *want_text = byocl_text_print(want, NULL, NULL, NULL);
    for (int i = 0; i < 4; i++)
        expect_range_spec(m, same[i], "ccompiler", want_text);
    free(want_text);
    byocl_module_free(want);
    byocl_module_free(m);

    /* A call written inline has no name of the file's: #0 is the add, the file's %0 the
     * relu. The bare 0:1 reads both ways, differently: an error that shows both. */
    static const char inline_call[] = "#[version = \"0.0.5\"]\n"
                                      "def @main(%x: Tensor[(3), float32]) {\n"
                                      "  %0 = nn.relu(add(%x, 1f));\n"
                                      "  %1 = multiply(%0, %x);\n"
                                      "  %2 = nn.relu(%1);\n"
                                      "  tanh(%2)\n"
                                      "}\n";
    expect_range_error(inline_call, 0, 1, "ccompiler", BYOCL_ERR_INVALID,
                       "range 0:1 is ambiguous in @main: it reads as the file's %0..%1 (nn.relu "
                       "at 3:8 .. multiply at 4:8) or as byocl's own #0..#1 (add at 3:16 .. "
                       "nn.relu at 3:8); write %0:%1 or #0:#1");
    m = ts_parse_typed(inline_call);
    expect_range_spec(m, "%0:%1", "ccompiler",
                      "#[version = \"0.0.5\"]\n"
                      "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                      "  %0 = add(%x, 1f);\n"
                      "  %1 = annotation.compiler_begin(%0, compiler=\"ccompiler\");\n"
                      "  %2 = nn.relu(%1);\n"
                      "  %3 = annotation.compiler_begin(%x, compiler=\"ccompiler\");\n"
                      "  %4 = multiply(%2, %3);\n"
                      "  %5 = annotation.compiler_end(%4, compiler=\"ccompiler\");\n"
                      "  %6 = nn.relu(%5);\n"
                      "  tanh(%6)\n"
                      "}\n");
    expect_range_spec(m, "#0:#1", "ccompiler",
                      "#[version = \"0.0.5\"]\n"
                      "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                      "  %0 = annotation.compiler_begin(%x, compiler=\"ccompiler\");\n"
                      "  %1 = annotation.compiler_begin(1f, compiler=\"ccompiler\");\n"
                      "  %2 = add(%0, %1);\n"
                      "  %3 = nn.relu(%2);\n"
                      "  %4 = annotation.compiler_end(%3, compiler=\"ccompiler\");\n"
                      "  %5 = multiply(%4, %x);\n"
                      "  %6 = nn.relu(%5);\n"
                      "  tanh(%6)\n"
                      "}\n");
    byocl_module_free(m);

    /* Names that are not numbers: every node from one end to the other. */
    m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                       "def @main(%x: Tensor[(3), float32]) {\n"
                       "  %a = nn.relu(%x);\n"
                       "  %b = abs(%a);\n"
                       "  %c = tanh(%b);\n"
                       "  exp(%c)\n"
                       "}\n");
    expect_range_spec(m, "a:%b", "ccompiler",
                      "#[version = \"0.0.5\"]\n"
                      "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                      "  %0 = annotation.compiler_begin(%x, compiler=\"ccompiler\");\n"
                      "  %a = nn.relu(%0);\n"
                      "  %b = abs(%a);\n"
                      "  %1 = annotation.compiler_end(%b, compiler=\"ccompiler\");\n"
                      "  %c = tanh(%1);\n"
                      "  exp(%c)\n"
                      "}\n");
    byocl_module_free(m);
    m = ts_parse_typed(RELU_TEXT);
    err = (byocl_error){0};
    assert_int_equal(byocl_annotate_range_spec(m, "%x:", "ccompiler", &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "bad range '%x:': expected A:B, e.g. 75:82, %75:%82, #0:#5 or "
                                 "conv1:relu2");
    assert_int_equal(byocl_annotate_range_spec(m, "#1:#a", "ccompiler", &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "bad range '#1:#a': expected A:B, e.g. 75:82, %75:%82, #0:#5 "
                                 "or conv1:relu2");
    byocl_module_free(m);
    assert_true(byocl_annotate_range_spelled("%75:%82"));
    assert_true(byocl_annotate_range_spelled("#0:#5"));
    assert_true(byocl_annotate_range_spelled("conv1:relu2"));
    assert_true(byocl_annotate_range_spelled("x:0:y:0"));
    assert_false(byocl_annotate_range_spelled("5:3"));
    assert_false(byocl_annotate_range_spelled("#5:#3"));
    assert_true(byocl_annotate_range_spelled("#5:3")); /* two numberings: the nodes decide */
    assert_false(byocl_annotate_range_spelled("5-9"));
    assert_false(byocl_annotate_range_spelled(":5"));
    assert_false(byocl_annotate_range_spelled("#a:#b"));
}

/* The range's members are not asked about support, and the target need not exist. */
static void test_range_ignores_support(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(3), float32]) {\n"
                            "  %0 = add(%x, %x);\n"
                            "  %1 = subtract(%0, 1f);\n"
                            "  %2 = (%1, %0);\n"
                            "  %3 = concatenate(%2);\n"
                            "  abs(%3)\n"
                            "}\n");
    expect_range(m, 0, 3, "test_target",
                 "#[version = \"0.0.5\"]\n"
                 "def @main(%x: Tensor[(3), float32]) -> Tensor[(6), float32] {\n"
                 "  %0 = annotation.compiler_begin(%x, compiler=\"test_target\");\n"
                 "  %1 = add(%0, %0);\n"
                 "  %2 = annotation.compiler_begin(1f, compiler=\"test_target\");\n"
                 "  %3 = subtract(%1, %2);\n"
                 "  %4 = (%3, %1);\n"
                 "  %5 = concatenate(%4);\n"
                 "  %6 = annotation.compiler_end(%5, compiler=\"test_target\");\n"
                 "  abs(%6)\n"
                 "}\n");
    byocl_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_thread_graph),
        cmocka_unit_test(test_target_diamond_with_host_branch),
        cmocka_unit_test(test_target_diamond_on_target),
        cmocka_unit_test(test_target_result_in_region),
        cmocka_unit_test(test_target_tuples_and_constants),
        cmocka_unit_test(test_target_priority_and_target_changes),
        cmocka_unit_test(test_target_untyped_module_with_global_call),
        cmocka_unit_test(test_target_regions_convex_on_builtin_models),
        cmocka_unit_test(test_target_errors),
        cmocka_unit_test(test_explain_lists_host_calls),
        cmocka_unit_test(test_explain_untyped_and_global_calls),
        cmocka_unit_test(test_range_vgg_block),
        cmocka_unit_test(test_range_multiple_outputs),
        cmocka_unit_test(test_range_tuple_leaves),
        cmocka_unit_test(test_range_tuple_enters),
        cmocka_unit_test(test_range_twice),
        cmocka_unit_test(test_range_not_convex),
        cmocka_unit_test(test_range_endpoint_errors),
        cmocka_unit_test(test_range_spellings),
        cmocka_unit_test(test_range_ignores_support),
    };
    return cmocka_run_group_tests(tests, register_targets, unregister_targets);
}
