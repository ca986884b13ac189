/* split: pipeline stages of @main. What goes into each stage, the wiring (residual
 * connections that skip a stage included), the balance of --parts against a brute-force
 * optimum, the manifest's exact text, writing and reading a stage directory, and running
 * the stages: bitwise the original's outputs (same kernels in the same order), on
 * builtin:resnet18 split both ways. */
#include "test_support.h"

#include "byocl/capture.h"
#include "byocl/pipeline.h"
#include "byocl/split.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FMT(buf, ...) assert_true(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

static byocl_module *load(const char *spec)
{
    byocl_module *m = NULL;
    byocl_error err;
    if (byocl_load_model(spec, NULL, &m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return m;
}

static byocl_stages *split_ok(const byocl_module *m, const int *cuts, int n_cuts, int n_parts)
{
    byocl_stages *s = NULL;
    byocl_error err;
    if (byocl_split(m, cuts, n_cuts, n_parts, &s, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return s;
}

static void expect_split_error(const byocl_module *m, const int *cuts, int n_cuts, int n_parts,
                               byocl_status want, const char *msg)
{
    byocl_stages *s = (byocl_stages *)1;
    byocl_error err;
    assert_int_equal(byocl_split(m, cuts, n_cuts, n_parts, &s, &err), want);
    assert_null(s);
    assert_string_equal(err.msg, msg);
}

/* Inputs of @main filled as `byocl run --random-inputs=SEED` fills them. */
static byocl_tensor **random_inputs(const byocl_function *fn, uint64_t seed)
{
    int n = byocl_function_num_params(fn);
    byocl_tensor **in = calloc((size_t)n + 1, sizeof *in);
    assert_non_null(in);
    for (int k = 0; k < n; k++) {
        const byocl_type *t = byocl_node_type(fn, byocl_function_param(fn, k));
        in[k] = byocl_tensor_new(t->dtype, &t->shape, NULL);
        assert_non_null(in[k]);
        byocl_tensor_fill_random(in[k], (seed << 32) + (uint64_t)k, 0.0, 1.0);
    }
    return in;
}

static void free_inputs(byocl_tensor **in, int n)
{
    for (int k = 0; k < n; k++)
        byocl_tensor_unref(in[k]);
    free(in);
}

/* Runs the original and the stages on the same inputs; every output bitwise equal. */
static void assert_stages_match(const byocl_stages *s, byocl_tensor *const *want, int n_want,
                                byocl_tensor **in, int n_in)
{
    byocl_tensor **got = NULL;
    int n_got = 0;
    byocl_error err;
    if (byocl_stages_run(s, in, n_in, NULL, NULL, &got, &n_got, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n_got, n_want);
    for (int i = 0; i < n_got; i++)
        assert_true(byocl_tensor_equal(got[i], want[i]));
    byocl_tensors_free(got, n_got);
}

static void reference(const byocl_module *m, byocl_tensor **in, byocl_tensor ***out, int *n_out)
{
    const byocl_function *fn = byocl_module_find(m, "main");
    byocl_error err;
    if (byocl_reference_run(m, "main", in, byocl_function_num_params(fn), out, n_out, &err) !=
        BYOCL_OK)
        fail_msg("%s", err.msg);
}

/* Splits, runs the stages and the original on seed-0 inputs, compares bitwise. */
static void check_equivalent(const byocl_module *m, const byocl_stages *s)
{
    const byocl_function *fn = byocl_module_find(m, "main");
    int n_in = byocl_function_num_params(fn);
    byocl_tensor **in = random_inputs(fn, 0);
    byocl_tensor **want;
    int n_want;
    reference(m, in, &want, &n_want);
    assert_stages_match(s, want, n_want, in, n_in);
    byocl_tensors_free(want, n_want);
    free_inputs(in, n_in);
}

/* ------------------------------------------------------------------ FLOPs */

static const char flops_text[] =
    "#[version = \"0.0.5\"]\n"
    "def @twice(%a: Tensor[(1, 5), float32]) {\n"
    "  %0 = nn.relu(%a);\n"
    "  nn.relu(%0)\n"
    "}\n"
    "def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(6, 2, 3, 3), float32],\n"
    "          %d: Tensor[(5, 384), float32]) {\n"
    "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=2);\n"
    "  %1 = nn.relu(%0);\n"
    "  %2 = nn.batch_flatten(%1);\n"
    "  %3 = nn.dense(%2, %d);\n"
    "  %4 = (%3, %2);\n"
    "  %5 = %4.0;\n"
    "  @twice(%5)\n"
    "}\n";

static void test_node_flops(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(flops_text);
    const byocl_function *fn = byocl_module_find(m, "main");
    int64_t want[] = {
        0, 0, 0,                /* parameters */
        2 * (6 * 8 * 8) * (2 * 3 * 3), /* grouped conv: 384 outputs, 2*3*3 MACs each */
        6 * 8 * 8,              /* relu: one per output element */
        384,                    /* batch_flatten */
        2 * 5 * 384,            /* dense: 5 outputs, 384 MACs each */
        0, 0,                   /* tuple, tuple item */
        2 * 5,                  /* @twice: two relus of 5 elements */
    };
    assert_int_equal(byocl_function_num_nodes(fn), (int)(sizeof want / sizeof want[0]));
    for (int id = 0; id < byocl_function_num_nodes(fn); id++)
        assert_int_equal(byocl_split_node_flops(fn, id), want[id]);
    assert_int_equal(byocl_split_node_flops(fn, -1), 0);
    assert_int_equal(byocl_split_node_flops(fn, 99), 0);
    byocl_module_free(m);
}

/* ----------------------------------------------------- a small model, exactly */

/* %0 is used in stages 1 and 2 (stage 2 reads it from stage 0, past stage 1); the tuple
 * %2 crosses into stage 2 as its two tensors. */
static const char small_text[] = "#[version = \"0.0.5\"]\n"
                                 "def @main(%x: Tensor[(1, 4), float32], %y: Tensor[(1, 4), float32]) {\n"
                                 "  %0 = add(%x, %y);\n"
                                 "  %1 = nn.relu(%0);\n"
                                 "  %2 = (%0, %1);\n"
                                 "  %3 = multiply(%1, 2f);\n"
                                 "  %4 = concatenate(%2, axis=1);\n"
                                 "  %5 = add(%3, %0);\n"
                                 "  (%4, %5)\n"
                                 "}\n";

static const char small_manifest[] =
    "{\n"
    "  \"format\": \"byocl-stages\",\n"
    "  \"version\": 1,\n"
    "  \"inputs\": [\n"
    "    {\"name\": \"x\", \"type\": \"Tensor[(1, 4), float32]\"},\n"
    "    {\"name\": \"y\", \"type\": \"Tensor[(1, 4), float32]\"}\n"
    "  ],\n"
    "  \"stages\": [\n"
    "    {\n"
    "      \"file\": \"stage_0.relay\",\n"
    "      \"params\": null,\n"
    "      \"first\": \"%0\",\n"
    "      \"last\": \"%0\",\n"
    "      \"nodes\": 1,\n"
    "      \"flops\": 4,\n"
    "      \"inputs\": [\n"
    "        {\"name\": \"x\", \"input\": 0},\n"
    "        {\"name\": \"y\", \"input\": 1}\n"
    "      ],\n"
    "      \"outputs\": [\n"
    "        {\"node\": \"%0\", \"op\": \"add\", \"type\": \"Tensor[(1, 4), float32]\"}\n"
    "      ]\n"
    "    },\n"
    "    {\n"
    "      \"file\": \"stage_1.relay\",\n"
    "      \"params\": null,\n"
    "      \"first\": \"%1\",\n"
    "      \"last\": \"%3\",\n"
    "      \"nodes\": 3,\n"
    "      \"flops\": 8,\n"
    "      \"inputs\": [\n"
    "        {\"name\": \"s0_0\", \"stage\": 0, \"output\": 0}\n"
    "      ],\n"
    "      \"outputs\": [\n"
    "        {\"node\": \"%2.0\", \"op\": \"Tuple\", \"type\": \"Tensor[(1, 4), float32]\"},\n"
    "        {\"node\": \"%2.1\", \"op\": \"Tuple\", \"type\": \"Tensor[(1, 4), float32]\"},\n"
    "        {\"node\": \"%3\", \"op\": \"multiply\", \"type\": \"Tensor[(1, 4), float32]\"}\n"
    "      ]\n"
    "    },\n"
    "    {\n"
    "      \"file\": \"stage_2.relay\",\n"
    "      \"params\": null,\n"
    "      \"first\": \"%4\",\n"
    "      \"last\": \"the result\",\n"
    "      \"nodes\": 3,\n"
    "      \"flops\": 12,\n"
    "      \"inputs\": [\n"
    "        {\"name\": \"s0_0\", \"stage\": 0, \"output\": 0},\n"
    "        {\"name\": \"s1_2_0\", \"stage\": 1, \"output\": 0},\n"
    "        {\"name\": \"s1_2_1\", \"stage\": 1, \"output\": 1},\n"
    "        {\"name\": \"s1_3\", \"stage\": 1, \"output\": 2}\n"
    "      ],\n"
    "      \"outputs\": [\n"
    "        {\"node\": \"%4\", \"op\": \"concatenate\", \"type\": \"Tensor[(1, 8), float32]\"},\n"
    "        {\"node\": \"%5\", \"op\": \"add\", \"type\": \"Tensor[(1, 4), float32]\"}\n"
    "      ]\n"
    "    }\n"
    "  ]\n"
    "}\n";

static const char small_stage_1[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%s0_0: Tensor[(1, 4), float32]) -> (Tensor[(1, 4), float32], Tensor[(1, 4), "
    "float32], Tensor[(1, 4), float32]) {\n"
    "  %0 = nn.relu(%s0_0) /* ty=Tensor[(1, 4), float32] */;\n"
    "  %1 = (%s0_0, %0) /* ty=(Tensor[(1, 4), float32], Tensor[(1, 4), float32]) */;\n"
    "  %2 = multiply(%0, 2f) /* ty=Tensor[(1, 4), float32] */;\n"
    "  %3 = %1.0 /* ty=Tensor[(1, 4), float32] */;\n"
    "  %4 = %1.1 /* ty=Tensor[(1, 4), float32] */;\n"
    "  (%3, %4, %2) /* ty=(Tensor[(1, 4), float32], Tensor[(1, 4), float32], Tensor[(1, 4), "
    "float32]) */\n"
    "}\n";

static const char small_stage_2[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%s0_0: Tensor[(1, 4), float32], %s1_2_0: Tensor[(1, 4), float32], %s1_2_1: "
    "Tensor[(1, 4), float32], %s1_3: Tensor[(1, 4), float32]) -> (Tensor[(1, 8), float32], "
    "Tensor[(1, 4), float32]) {\n"
    "  %0 = (%s1_2_0, %s1_2_1) /* ty=(Tensor[(1, 4), float32], Tensor[(1, 4), float32]) */;\n"
    "  %1 = concatenate(%0, axis=1) /* ty=Tensor[(1, 8), float32] */;\n"
    "  %2 = add(%s1_3, %s0_0) /* ty=Tensor[(1, 4), float32] */;\n"
    "  (%1, %2) /* ty=(Tensor[(1, 8), float32], Tensor[(1, 4), float32]) */\n"
    "}\n";

static char *read_in(const char *dir, const char *name)
{
    char path[4200];
    FMT(path, "%s/%s", dir, name);
    return ts_read_file(path, NULL);
}

static bool exists(const char *dir, const char *name)
{
    char path[4200];
    FMT(path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void test_small_model_exactly(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(small_text);
    const int cuts[] = {0, 3};
    byocl_stages *s = split_ok(m, cuts, 2, 0);
    assert_int_equal(byocl_stages_count(s), 3);
    assert_int_equal(byocl_stages_num_inputs(s), 2);
    assert_string_equal(byocl_stages_input_name(s, 1), "y");

    /* The accessors say what the manifest says. */
    byocl_stage_input in = byocl_stage_input_at(s, 2, 0);
    assert_string_equal(in.name, "s0_0");
    assert_int_equal(in.stage, 0); /* read past stage 1, straight from stage 0 */
    assert_int_equal(in.index, 0);
    in = byocl_stage_input_at(s, 0, 1);
    assert_int_equal(in.stage, -1);
    assert_int_equal(in.index, 1);
    byocl_stage_output out = byocl_stage_output_at(s, 1, 1);
    assert_string_equal(out.node, "%2.1");
    assert_string_equal(out.op, "Tuple");
    char type[64];
    assert_string_equal(byocl_type_str(out.type, type, sizeof type), "Tensor[(1, 4), float32]");
    assert_null(byocl_stage_output_at(s, 1, 3).node);
    assert_null(byocl_stage_input_at(s, 3, 0).name);
    assert_null(byocl_stages_module(s, 3));
    assert_int_equal(byocl_stage_num_nodes(s, 2), 3);
    assert_string_equal(byocl_stage_first_node(s, 1), "%1");
    assert_string_equal(byocl_stage_last_node(s, 2), "the result");

    check_equivalent(m, s);

    const char *dir = ts_tmpdir("split-small");
    char out_dir[4200];
    FMT(out_dir, "%s/stages", dir);
    byocl_error err;
    assert_int_equal(byocl_stages_write(s, out_dir, &err), BYOCL_OK);
    char *text = read_in(out_dir, "manifest.json");
    assert_string_equal(text, small_manifest);
    free(text);
    text = read_in(out_dir, "stage_1.relay");
    assert_string_equal(text, small_stage_1);
    free(text);
    text = read_in(out_dir, "stage_2.relay");
    assert_string_equal(text, small_stage_2);
    free(text);
    assert_false(exists(out_dir, "stage_0.npz")); /* scalars print inline: no weights */

    /* Read back, the stages run the same. */
    byocl_stages *back = NULL;
    assert_int_equal(byocl_stages_read(out_dir, &back, &err), BYOCL_OK);
    assert_int_equal(byocl_stages_count(back), 3);
    assert_int_equal(byocl_stage_flops(back, 2), 12);
    assert_string_equal(byocl_stage_output_at(back, 2, 0).op, "concatenate");
    check_equivalent(m, back);
    byocl_stages_free(back);

    byocl_stages_free(s);
    byocl_module_free(m);
    ts_remove_tree(dir);
}

/* A TupleGetItem goes with the tuple it reads: a cut after nn.batch_norm passes field 0. */
static const char bn_text[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), "
    "float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {\n"
    "  %0 = nn.relu(%x);\n"
    "  %1 = nn.batch_norm(%0, %g, %b, %m, %v);\n"
    "  %2 = %1.0;\n"
    "  %3 = nn.relu(%2);\n"
    "  add(%3, %0)\n"
    "}\n";

static void test_getitem_goes_with_tuple(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(bn_text);
    const int cut[] = {1};
    byocl_stages *s = split_ok(m, cut, 1, 0);
    assert_int_equal(byocl_stage_num_nodes(s, 0), 3); /* %0, %1, %2 */
    assert_string_equal(byocl_stage_last_node(s, 0), "%2");
    assert_int_equal(byocl_stage_num_outputs(s, 0), 2);
    assert_string_equal(byocl_stage_output_at(s, 0, 0).node, "%0");
    assert_string_equal(byocl_stage_output_at(s, 0, 1).node, "%2");
    assert_string_equal(byocl_stage_output_at(s, 0, 1).op, "TupleGetItem");
    /* Stage 1 takes nothing from the pipeline inputs: the weights stay in stage 0. */
    assert_int_equal(byocl_stage_num_inputs(s, 1), 2);
    assert_string_equal(byocl_stage_input_at(s, 1, 1).name, "s0_2");
    check_equivalent(m, s);
    byocl_stages_free(s);

    /* Cutting between the tuple and its item would leave a stage with nothing. */
    const int cuts[] = {1, 2};
    expect_split_error(m, cuts, 2, 0, BYOCL_ERR_INVALID,
                       "stage 1 would be empty: the result needs no node after %1 up to %2 (a "
                       "TupleGetItem goes with the tuple it reads)");
    /* Five nodes, of which the item is no stage of its own. */
    expect_split_error(m, NULL, 0, 5, BYOCL_ERR_INVALID,
                       "cannot split @main into 5 parts: its 5 nodes make at most 4 stages (a "
                       "TupleGetItem goes with the tuple it reads)");
    s = split_ok(m, NULL, 0, 4);
    assert_int_equal(byocl_stages_count(s), 4);
    check_equivalent(m, s);
    byocl_stages_free(s);
    byocl_module_free(m);
}

/* A partitioned model: region calls are nodes, and each stage gets the functions it calls. */
static const char partitioned_text[] =
    "#[version = \"0.0.5\"]\n"
    "def @r0(%r0_i0: Tensor[(1, 4), float32], Compiler=\"acc\", global_symbol=\"acc_main_0\", "
    "Primitive=1, Inline=1) {\n"
    "  %0 = nn.relu(%r0_i0);\n"
    "  (%0, abs(%0))\n"
    "}\n"
    "def @r1(%r1_i0: Tensor[(1, 4), float32], %r1_i1: Tensor[(1, 4), float32], "
    "Compiler=\"acc\", global_symbol=\"acc_main_1\", Primitive=1, Inline=1) {\n"
    "  add(%r1_i0, %r1_i1)\n"
    "}\n"
    "def @main(%x: Tensor[(1, 4), float32]) {\n"
    "  %0 = @r0(%x);\n"
    "  %1 = %0.0;\n"
    "  %2 = %0.1;\n"
    "  %3 = exp(%1);\n"
    "  @r1(%3, %2)\n"
    "}\n";

static void test_partitioned_model(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(partitioned_text);
    const int cut[] = {2};
    byocl_stages *s = split_ok(m, cut, 1, 0);
    const byocl_module *s0 = byocl_stages_module(s, 0), *s1 = byocl_stages_module(s, 1);
    assert_int_equal(byocl_module_num_functions(s0), 2);
    assert_non_null(byocl_module_find(s0, "r0"));
    assert_null(byocl_module_find(s0, "r1"));
    assert_int_equal(byocl_module_num_functions(s1), 2);
    assert_non_null(byocl_module_find(s1, "r1"));
    assert_string_equal(byocl_attrs_get_str(byocl_function_attrs(byocl_module_find(s1, "r1")),
                                            "Compiler", ""),
                        "acc");
    /* The call's items went with it; its cost is its function's (2 x 4 elements). */
    assert_int_equal(byocl_stage_num_nodes(s, 0), 3);
    assert_int_equal(byocl_stage_flops(s, 0), 8);
    assert_string_equal(byocl_stage_output_at(s, 1, 0).op, "@r1");
    check_equivalent(m, s);
    byocl_stages_free(s);
    byocl_module_free(m);
}

/* Names: a named binding crosses as s<j>_<name>; a name that an original parameter
 * already has gets _2. */
static void test_stage_parameter_names(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%s0_0: Tensor[(1, 4), float32]) {\n"
                            "  %0 = nn.relu(%s0_0);\n"
                            "  %x0 = abs(%0);\n"
                            "  %1 = add(%0, %x0);\n"
                            "  add(%1, %s0_0)\n"
                            "}\n");
    /* Four nodes of 4 FLOPs each: two stages of two. */
    byocl_stages *s = split_ok(m, NULL, 0, 2);
    assert_string_equal(byocl_stage_last_node(s, 0), "%x0");
    assert_int_equal(byocl_stage_num_inputs(s, 1), 3);
    static const char *const want[] = {"s0_0", "s0_0_2", "s0_x0"};
    static const int from[] = {-1, 0, 0}, index[] = {0, 0, 1};
    for (int i = 0; i < 3; i++) {
        byocl_stage_input in = byocl_stage_input_at(s, 1, i);
        assert_string_equal(in.name, want[i]);
        assert_int_equal(in.stage, from[i]);
        assert_int_equal(in.index, index[i]);
    }
    assert_string_equal(byocl_stage_output_at(s, 0, 1).node, "%x0");
    check_equivalent(m, s);
    byocl_stages_free(s);
    byocl_module_free(m);
}

/* ------------------------------------------------------------------ balance */

/* The smallest possible cost of the costliest of `parts` consecutive groups of the
 * placed nodes (brute force by dynamic programming over prefixes). */
static int64_t best_max_cost(const int64_t *cost, int n, int parts)
{
    int64_t *prefix = calloc((size_t)n + 1, sizeof *prefix);
    int64_t *best = malloc(((size_t)n + 1) * sizeof *best);
    int64_t *next = malloc(((size_t)n + 1) * sizeof *next);
    assert_true(prefix && best && next);
    for (int i = 0; i < n; i++)
        prefix[i + 1] = prefix[i] + cost[i];
    for (int i = 0; i <= n; i++)
        best[i] = i > 0 ? prefix[i] : INT64_MAX; /* one group over the first i */
    for (int p = 2; p <= parts; p++) {
        for (int i = 0; i <= n; i++) {
            next[i] = INT64_MAX;
            for (int j = p - 1; j < i; j++) {
                int64_t last = prefix[i] - prefix[j];
                int64_t m = best[j] > last ? best[j] : last;
                if (best[j] != INT64_MAX && m < next[i])
                    next[i] = m;
            }
        }
        memcpy(best, next, ((size_t)n + 1) * sizeof *best);
    }
    int64_t r = best[n];
    free(prefix);
    free(best);
    free(next);
    return r;
}

static void test_parts_are_balanced(void **state)
{
    (void)state;
    byocl_module *m = load("builtin:resnet18");
    const byocl_function *fn = byocl_module_find(m, "main");
    /* resnet18's TupleGetItems directly follow their batch_norm and cost nothing, so any
     * cut between the two costs what the cut after the item costs. */
    int64_t cost[256], total = 0;
    int n = 0;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        byocl_node_kind kind = byocl_node_kind_of(fn, id);
        if (kind == BYOCL_NODE_VAR || kind == BYOCL_NODE_CONSTANT)
            continue;
        assert_true(n < 256);
        cost[n++] = byocl_split_node_flops(fn, id);
        total += cost[n - 1];
    }
    assert_int_equal(n, 90);
    static const int parts[] = {1, 2, 3, 4, 7, 70};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        byocl_stages *s = split_ok(m, NULL, 0, parts[i]);
        assert_int_equal(byocl_stages_count(s), parts[i]);
        int64_t max = 0, sum = 0;
        int nodes = 0;
        for (int k = 0; k < parts[i]; k++) {
            int64_t f = byocl_stage_flops(s, k);
            max = f > max ? f : max;
            sum += f;
            nodes += byocl_stage_num_nodes(s, k);
            assert_true(byocl_stage_num_nodes(s, k) > 0);
        }
        assert_int_equal(sum, total);
        assert_int_equal(nodes, 90);
        assert_int_equal(max, best_max_cost(cost, n, parts[i]));
        byocl_stages_free(s);
    }
    expect_split_error(m, NULL, 0, 71, BYOCL_ERR_INVALID,
                       "cannot split @main into 71 parts: its 90 nodes make at most 70 stages "
                       "(a TupleGetItem goes with the tuple it reads)");
    byocl_module_free(m);
}

/* ------------------------------------------------------------ given costs */

/* Six relus of equal FLOPs: node ids 1 to 6 are %0 to %4 and the result. */
static const char chain_text[] = "#[version = \"0.0.5\"]\n"
                                 "def @main(%x: Tensor[(1, 8), float32]) {\n"
                                 "  %0 = nn.relu(%x);\n"
                                 "  %1 = nn.relu(%0);\n"
                                 "  %2 = nn.relu(%1);\n"
                                 "  %3 = nn.relu(%2);\n"
                                 "  %4 = nn.relu(%3);\n"
                                 "  nn.relu(%4)\n"
                                 "}\n";

static byocl_stages *split_weighted_ok(const byocl_module *m, int n_parts, const double *cost,
                                       int n_nodes)
{
    byocl_stages *s = NULL;
    byocl_error err;
    if (byocl_split_weighted(m, n_parts, cost, n_nodes, &s, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return s;
}

static void assert_stage(const byocl_stages *s, int k, const char *first, const char *last,
                         double cost)
{
    assert_string_equal(byocl_stage_first_node(s, k), first);
    assert_string_equal(byocl_stage_last_node(s, k), last);
    assert_true(fabs(byocl_stage_cost(s, k) - cost) < 1e-9);
}

static void expect_weighted_error(const byocl_module *m, int n_parts, const double *cost,
                                  int n_nodes, const char *msg)
{
    byocl_stages *s = (byocl_stages *)1;
    byocl_error err;
    assert_int_equal(byocl_split_weighted(m, n_parts, cost, n_nodes, &s, &err),
                     BYOCL_ERR_INVALID);
    assert_null(s);
    assert_string_equal(err.msg, msg);
}

/* The cuts follow the given costs, not the FLOPs: worked out by hand. */
static void test_weighted_parts(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(chain_text);
    /* By FLOPs (8 each): two relus a stage. */
    byocl_stages *s = split_ok(m, NULL, 0, 3);
    assert_stage(s, 0, "%0", "%1", -1);
    assert_stage(s, 1, "%2", "%3", -1);
    assert_stage(s, 2, "%4", "the result", -1);
    byocl_stages_free(s);
    /* %3 costs 10, the others 1 (the parameter's cost is not counted): no stage can cost
     * less than 10, and %0..%2 (3) or %4..the result (2) beside %3 would cost more, so %3
     * is a stage of its own, cut right before and after it. */
    const double heavy[7] = {99, 1, 1, 1, 10, 1, 1};
    s = split_weighted_ok(m, 3, heavy, 7);
    assert_int_equal(byocl_stages_count(s), 3);
    assert_stage(s, 0, "%0", "%2", 3);
    assert_stage(s, 1, "%3", "%3", 10);
    assert_stage(s, 2, "%4", "the result", 2);
    assert_int_equal(byocl_stage_flops(s, 1), 8);
    check_equivalent(m, s);
    /* Two parts: the cheapest costliest stage is 12 (%0..%3 | %4.. is 13 | 2; %0..%2 | %3..
     * is 3 | 12). */
    byocl_stages *two = split_weighted_ok(m, 2, heavy, 7);
    assert_stage(two, 0, "%0", "%2", 3);
    assert_stage(two, 1, "%3", "the result", 12);
    byocl_stages_free(two);

    /* The manifest keeps each stage's cost; one written by byocl_split has none. */
    const char *dir = ts_tmpdir("split-weighted");
    char out_dir[4200];
    FMT(out_dir, "%s/stages", dir);
    byocl_error err;
    assert_int_equal(byocl_stages_write(s, out_dir, &err), BYOCL_OK);
    char *text = read_in(out_dir, "manifest.json");
    ts_assert_contains(text, "      \"flops\": 8,\n      \"cost\": 10,\n      \"inputs\": [");
    free(text);
    byocl_stages *back = NULL;
    assert_int_equal(byocl_stages_read(out_dir, &back, &err), BYOCL_OK);
    assert_stage(back, 0, "%0", "%2", 3);
    assert_stage(back, 1, "%3", "%3", 10);
    assert_stage(back, 2, "%4", "the result", 2);
    check_equivalent(m, back);
    byocl_stages_free(back);
    byocl_stages_free(s);
    FMT(out_dir, "%s/by-flops", dir);
    s = split_ok(m, NULL, 0, 2);
    assert_int_equal(byocl_stages_write(s, out_dir, &err), BYOCL_OK);
    text = read_in(out_dir, "manifest.json");
    assert_null(strstr(text, "cost"));
    free(text);
    assert_int_equal(byocl_stages_read(out_dir, &back, &err), BYOCL_OK);
    assert_true(byocl_stage_cost(back, 0) == -1 && byocl_stage_cost(back, 1) == -1);
    byocl_stages_free(back);
    byocl_stages_free(s);
    ts_remove_tree(dir);

    /* Nothing costs anything: still three stages, none empty. */
    const double zero[7] = {0};
    s = split_weighted_ok(m, 3, zero, 7);
    for (int k = 0; k < 3; k++) {
        assert_true(byocl_stage_num_nodes(s, k) > 0);
        assert_true(byocl_stage_cost(s, k) == 0);
    }
    check_equivalent(m, s);
    byocl_stages_free(s);

    double bad[7] = {0, 1, 1, 1, -1, 1, 1};
    expect_weighted_error(m, 3, heavy, 3,
                          "byocl_split_weighted: expected 7 costs, one per node of @main, not 3");
    expect_weighted_error(m, 3, bad, 7,
                          "byocl_split_weighted: node_cost[4] (%3) is -1; costs must be finite "
                          "and at least 0");
    bad[4] = INFINITY;
    expect_weighted_error(m, 3, bad, 7,
                          "byocl_split_weighted: node_cost[4] (%3) is inf; costs must be finite "
                          "and at least 0");
    expect_weighted_error(m, 3, NULL, 7, "byocl_split_weighted: no costs");
    expect_weighted_error(m, 7, heavy, 7,
                          "cannot split @main into 7 parts: it has 6 nodes to place");
    expect_weighted_error(m, 0, heavy, 7, "the number of parts must be at least 1, not 0");
    byocl_module_free(m);

    /* A TupleGetItem's cost goes with the tuple it reads: bn_text's %2 = %1.0 (id 7). */
    m = ts_parse_typed(bn_text);
    const double bn_cost[10] = {0, 0, 0, 0, 0, 1, 0, 5, 1, 1};
    s = split_weighted_ok(m, 3, bn_cost, 10);
    assert_stage(s, 0, "%0", "%0", 1);
    assert_stage(s, 1, "%1", "%2", 5);
    assert_stage(s, 2, "%3", "the result", 2);
    check_equivalent(m, s);
    byocl_stages_free(s);
    byocl_module_free(m);
}

/* What each step of a compiled model computes, traced back to the nodes of the original
 * @main through the marks of byocl_capture_mark_nodes: one kernel per op with target ref,
 * and a region (a target with no module of its own: the ref region module) whose
 * function holds the nodes it was cut from. */
static void test_step_nodes_trace_back(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(chain_text);
    byocl_module *marked = byocl_module_clone(m, NULL);
    assert_non_null(marked);
    byocl_capture_mark_nodes(marked);
    byocl_compile_options co = byocl_compile_options_default();
    co.build.target = "ref";
    co.partition.range_target = "acc";
    co.partition.range = "%1:%3";
    byocl_compiled *c = NULL;
    byocl_error err;
    if (byocl_compile(marked, &co, &c, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_executor *ex = NULL;
    assert_int_equal(byocl_executor_new(c, &ex, &err), BYOCL_OK);
    int n_steps = byocl_executor_num_steps(ex);
    assert_int_equal(n_steps, 4); /* %0, the region (%1..%3), %4, the result */
    const int want_first[4] = {1, 2, 5, 6}, want_count[4] = {1, 3, 1, 1};
    for (int k = 0; k < n_steps; k++) {
        const byocl_function *fn = NULL;
        const int *nodes = NULL;
        int n = byocl_compiled_step_nodes(c, k, &fn, &nodes);
        byocl_step_info info;
        assert_int_equal(byocl_executor_step(ex, k, &info, &err), BYOCL_OK);
        int orig[8], n_orig = 0;
        for (int i = 0; i < n; i++)
            if (byocl_capture_marked_node(fn, nodes[i]) >= 0)
                orig[n_orig++] = byocl_capture_marked_node(fn, nodes[i]);
        assert_int_equal(info.kind, k == 1 ? BYOCL_STEP_REGION : BYOCL_STEP_KERNEL);
        assert_int_equal(n_orig, want_count[k]);
        for (int i = 0; i < n_orig; i++)
            assert_int_equal(orig[i], want_first[k] + i);
        if (k == 1)
            assert_string_equal(byocl_function_name(fn), info.name);
    }
    const byocl_function *fn = (const byocl_function *)1;
    const int *nodes = (const int *)1;
    assert_int_equal(byocl_compiled_step_nodes(c, n_steps, &fn, &nodes), 0);
    assert_null(fn);
    assert_null(nodes);
    assert_int_equal(byocl_capture_marked_node(byocl_module_find(m, "main"), 1), -1);
    assert_int_equal(byocl_capture_marked_node(NULL, 0), -1);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(marked);
    byocl_module_free(m);
}

/* -------------------------------------------------------- resnet18, both ways */

static void test_resnet18_parts_written_and_read(void **state)
{
    (void)state;
    byocl_module *m = load("builtin:resnet18");
    byocl_stages *s = split_ok(m, NULL, 0, 3);
    /* Every stage reads from earlier stages or the pipeline input only; at least one
     * value (a block's shortcut) crosses a cut beside the main path. */
    int crossing = 0;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < byocl_stage_num_inputs(s, k); i++) {
            byocl_stage_input in = byocl_stage_input_at(s, k, i);
            assert_true(in.stage < k);
            crossing += in.stage >= 0;
        }
    assert_true(crossing > 2);
    assert_int_equal(byocl_stage_input_at(s, 0, 0).stage, -1);
    assert_string_equal(byocl_stage_input_at(s, 0, 0).name, "data");

    const char *dir = ts_tmpdir("split-r18");
    char out_dir[4200];
    FMT(out_dir, "%s/r18", dir);
    byocl_error err;
    assert_int_equal(byocl_stages_write(s, out_dir, &err), BYOCL_OK);
    for (int k = 0; k < 3; k++) {
        char name[32];
        FMT(name, "stage_%d.npz", k); /* weights are constants: each stage has its own */
        assert_true(exists(out_dir, name));
    }
    byocl_stages *back = NULL;
    if (byocl_stages_read(out_dir, &back, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    check_equivalent(m, back);
    byocl_stages_free(back);
    byocl_stages_free(s);
    byocl_module_free(m);
    ts_remove_tree(dir);
}

static void test_resnet18_cuts_residual_skips_a_stage(void **state)
{
    (void)state;
    byocl_module *m = load("builtin:resnet18");
    /* %13 = relu starts a basic block; %21 = add(%20, %13) ends it. Cutting after %14 and
     * %17 puts the block's shortcut %13 in stage 0 and its user in stage 2. */
    const int cuts[] = {14, 17};
    byocl_stages *s = split_ok(m, cuts, 2, 0);
    assert_string_equal(byocl_stage_first_node(s, 1), "%15");
    assert_string_equal(byocl_stage_last_node(s, 1), "%17");
    assert_int_equal(byocl_stage_num_outputs(s, 0), 2);
    assert_string_equal(byocl_stage_output_at(s, 0, 0).node, "%13");
    assert_string_equal(byocl_stage_output_at(s, 0, 0).op, "nn.relu");
    assert_string_equal(byocl_stage_output_at(s, 0, 1).node, "%14");
    assert_string_equal(byocl_stage_output_at(s, 0, 1).op, "nn.conv2d");
    assert_int_equal(byocl_stage_num_inputs(s, 1), 1);
    assert_string_equal(byocl_stage_input_at(s, 1, 0).name, "s0_14");
    assert_int_equal(byocl_stage_num_inputs(s, 2), 2);
    byocl_stage_input skip = byocl_stage_input_at(s, 2, 0);
    assert_string_equal(skip.name, "s0_13");
    assert_int_equal(skip.stage, 0);
    assert_int_equal(skip.index, 0);
    assert_string_equal(byocl_stage_input_at(s, 2, 1).name, "s1_17");
    check_equivalent(m, s);
    byocl_stages_free(s);
    byocl_module_free(m);
}

/* ------------------------------------------------------------------ errors */

static void test_split_errors(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(small_text);
    const int missing[] = {99}, backwards[] = {3, 1}, negative[] = {-1};
    expect_split_error(m, missing, 1, 0, BYOCL_ERR_NOT_FOUND,
                       "cut after %99: @main has no node %99 (`byocl print` numbers its nodes "
                       "%0 to %5)");
    expect_split_error(m, negative, 1, 0, BYOCL_ERR_NOT_FOUND,
                       "cut after %-1: @main has no node %-1 (`byocl print` numbers its nodes "
                       "%0 to %5)");
    expect_split_error(m, backwards, 2, 0, BYOCL_ERR_INVALID,
                       "cut points must increase: %1 comes after %3");
    expect_split_error(m, NULL, 0, 8, BYOCL_ERR_INVALID,
                       "cannot split @main into 8 parts: it has 7 nodes to place");
    expect_split_error(m, NULL, 0, 0, BYOCL_ERR_INVALID,
                       "the number of parts must be at least 1, not 0");
    expect_split_error(m, missing, 1, 2, BYOCL_ERR_INVALID,
                       "byocl_split: give either cut points or a number of parts");
    expect_split_error(m, NULL, 0, -2, BYOCL_ERR_INVALID,
                       "the number of parts must be at least 1, not -2");
    expect_split_error(NULL, NULL, 0, 2, BYOCL_ERR_INVALID, "byocl_split: no module");
    byocl_error err;
    assert_int_equal(byocl_split(m, NULL, 0, 2, NULL, &err), BYOCL_ERR_INVALID);
    /* No error record wanted: the status alone. */
    byocl_stages *quiet = NULL;
    assert_int_equal(byocl_split(m, missing, 1, 0, &quiet, NULL), BYOCL_ERR_NOT_FOUND);
    assert_int_equal(byocl_split(m, NULL, 0, 2, &quiet, NULL), BYOCL_OK);
    assert_int_equal(byocl_stages_write(quiet, "/nonexistent-byocl-dir/x", NULL), BYOCL_ERR_IO);
    byocl_stages_free(quiet);
    byocl_module_free(m);

    /* Untyped: the verifier's message. */
    byocl_module *raw = NULL;
    assert_int_equal(byocl_text_parse(small_text, strlen(small_text), "t", NULL, &raw, &err),
                     BYOCL_OK);
    byocl_stages *s = NULL;
    assert_int_equal(byocl_split(raw, NULL, 0, 2, &s, &err), BYOCL_ERR_INVALID);
    ts_assert_contains(err.msg, "no type");
    byocl_module_free(raw);

    byocl_module *empty = byocl_module_new();
    expect_split_error(empty, NULL, 0, 1, BYOCL_ERR_NOT_FOUND, "the module has no @main to split");
    byocl_module_free(empty);
}

/* Writing never leaves a partial directory, and never touches one that holds files. */
static void test_write_errors(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(small_text);
    byocl_stages *s = split_ok(m, NULL, 0, 2);
    const char *tmp = ts_tmpdir("split-write");
    char dir[4200], path[4300], want[8600];
    strcpy(dir, tmp);
    byocl_error err;

    /* An empty directory is fine, and is filled. */
    FMT(path, "%s/empty", dir);
    assert_int_equal(mkdir(path, 0777), 0);
    assert_int_equal(byocl_stages_write(s, path, &err), BYOCL_OK);
    assert_true(exists(path, "manifest.json"));

    /* A directory with files in it is refused and left alone. */
    assert_int_equal(byocl_stages_write(s, path, &err), BYOCL_ERR_IO);
    FMT(want, "%s exists and is not empty; remove it or choose another directory", path);
    assert_string_equal(err.msg, want);
    FMT(path, "%s/full", dir);
    assert_int_equal(mkdir(path, 0777), 0);
    FILE *f;
    FMT(want, "%s/keep.txt", path);
    assert_non_null(f = fopen(want, "w"));
    fputs("mine", f);
    fclose(f);
    assert_int_equal(byocl_stages_write(s, path, &err), BYOCL_ERR_IO);
    char *kept = ts_read_file(want, NULL);
    assert_string_equal(kept, "mine");
    free(kept);
    assert_false(exists(path, "manifest.json"));

    /* A file of that name. */
    FMT(path, "%s/full/keep.txt", dir);
    assert_int_equal(byocl_stages_write(s, path, &err), BYOCL_ERR_IO);
    FMT(want, "cannot write %s: a file of that name exists", path);
    assert_string_equal(err.msg, want);

    /* A missing parent: nothing is created. */
    FMT(path, "%s/no/such/out", dir);
    assert_int_equal(byocl_stages_write(s, path, &err), BYOCL_ERR_IO);
    FMT(want, "cannot create a directory beside %s: No such file or directory", path);
    assert_string_equal(err.msg, want);
    FMT(path, "%s/no", dir);
    assert_int_equal(access(path, F_OK), -1);

    /* A failure after the temporary directory exists (its files' paths are too long for
     * the system): the temporary directory goes too, and the target never appears. */
    FMT(path, "%s/deep", dir);
    size_t len = strlen(path);
    char pid[32];
    FMT(pid, "%ld", (long)getpid());
    size_t tmp_len = 4090; /* "<target>.tmp.<pid>" fits PATH_MAX, "<that>/stage_0.npz" not */
    while (len + 201 + 1 + 5 + strlen(pid) < tmp_len) {
        path[len++] = '/';
        memset(path + len, 'd', 200);
        len += 200;
        path[len] = '\0';
    }
    char cmd[4400];
    FMT(cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    char parent[4300];
    strcpy(parent, path);
    size_t name_len = tmp_len - len - 1 - 5 - strlen(pid);
    path[len++] = '/';
    memset(path + len, 't', name_len);
    len += name_len;
    path[len] = '\0';
    assert_int_equal(byocl_stages_write(s, path, &err), BYOCL_ERR_IO);
    FMT(cmd, "test -z \"$(ls -A '%s')\"", parent); /* neither target nor temporary left */
    assert_int_equal(system(cmd), 0);

    byocl_stages_free(s);
    byocl_module_free(m);
    ts_remove_tree(dir);
}

/* A stage directory to damage: the small model's three stages. */
static void write_small(const char *dir)
{
    byocl_module *m = ts_parse_typed(small_text);
    const int cuts[] = {0, 3};
    byocl_stages *s = split_ok(m, cuts, 2, 0);
    byocl_error err;
    assert_int_equal(byocl_stages_write(s, dir, &err), BYOCL_OK);
    byocl_stages_free(s);
    byocl_module_free(m);
}

/* Replaces the first `from` in DIR/name with `to`. */
static void edit(const char *dir, const char *name, const char *from, const char *to)
{
    char path[4200];
    FMT(path, "%s/%s", dir, name);
    char *text = ts_read_file(path, NULL);
    char *at = strstr(text, from);
    assert_non_null(at);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    fclose(f);
    free(text);
}

static void expect_read_error(const char *dir, const char *want_suffix)
{
    byocl_stages *s = (byocl_stages *)1;
    byocl_error err;
    assert_int_not_equal(byocl_stages_read(dir, &s, &err), BYOCL_OK);
    assert_null(s);
    char want[8600];
    FMT(want, "%s/manifest.json%s", dir, want_suffix);
    assert_string_equal(err.msg, want);
}

static void test_read_errors(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("split-read");
    char base[4200], dir[4300], want[8600];
    strcpy(base, tmp);
    byocl_stages *s = (byocl_stages *)1;
    byocl_error err;

    FMT(dir, "%s/none", base);
    assert_int_equal(byocl_stages_read(dir, &s, &err), BYOCL_ERR_IO);
    assert_null(s);
    FMT(want, "cannot read stages from %s: No such file or directory", dir);
    assert_string_equal(err.msg, want);

    struct {
        const char *file, *from, *to, *error;
    } cases[] = {
        {"manifest.json", "\"version\": 1,", "\"version\": 1",
         ":4:3: error: expected ',' or '}'"},
        {"manifest.json", "byocl-stages", "other", ":2:13: the top level: \"format\" is "
                                                   "\"other\", not \"byocl-stages\""},
        {"manifest.json", "\"version\": 1", "\"version\": 2",
         ":3:14: the top level: \"version\" must be an integer from 1 to 1"},
        {"manifest.json", "\"stage\": 1, \"output\": 1}", "\"stage\": 2, \"output\": 1}",
         ":50:37: stages[2].inputs[2]: \"stage\" must be an integer from 0 to 1"},
        {"manifest.json", "\"stage\": 1, \"output\": 2}", "\"stage\": 1, \"output\": 3}",
         ":51:48: stages[2].inputs[3]: \"output\" must be an integer from 0 to 2"},
        {"manifest.json", "{\"name\": \"x\", \"type\": \"Tensor[(1, 4), float32]\"}",
         "{\"name\": \"x\", \"type\": \"Tensor[(1, 5), float32]\"}",
         ":17:9: stages[0].inputs[0]: %x of DIR/stage_0.relay is Tensor[(1, 4), float32] but "
         "what it receives is Tensor[(1, 5), float32]"},
        {"manifest.json", "\"name\": \"y\", \"input\": 1", "\"name\": \"z\", \"input\": 1",
         ":18:9: stages[0].inputs[1]: says \"z\" but parameter 1 of @main in DIR/stage_0.relay "
         "is %y"},
        {"manifest.json", "{\"name\": \"x\", \"input\": 0}", "{\"name\": \"x\"}",
         ":17:9: stages[0].inputs[0]: needs \"input\" (a pipeline input) or \"stage\" and "
         "\"output\" (an earlier stage's output)"},
        {"manifest.json", "\"Tensor[(1, 8), float32]\"", "\"Tensor[(1, 9), float32]\"",
         ":54:53: stages[2].outputs[0]: says Tensor[(1, 9), float32] but @main of "
         "DIR/stage_2.relay returns Tensor[(1, 8), float32] there"},
        {"manifest.json", "\"type\": \"Tensor[(1, 4), float32]\"}", "\"type\": \"Tensor[(1, 4\"}",
         ":5:27: inputs[0]: \"Tensor[(1, 4\" is not a type"},
        {"manifest.json", "\"stage_1.relay\"", "\"../stage_1.relay\"",
         ":25:15: stages[1]: \"file\" must name a file in the directory, not "
         "\"../stage_1.relay\""},
        {"manifest.json", "\"nodes\": 3", "\"nodes\": \"3\"",
         ":29:16: stages[1]: \"nodes\" must be a number, not string"},
        {"manifest.json", "      \"flops\": 8,\n", "", ":24:5: stages[1]: missing \"flops\""},
        {"manifest.json", "\"flops\": 8,", "\"flops\": 8, \"cost\": -2,",
         ":30:27: stages[1]: \"cost\" must be a number of at least 0"},
        {"manifest.json", "\"flops\": 8,", "\"flops\": 8, \"cost\": \"1\",",
         ":30:27: stages[1]: \"cost\" must be a number, not string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FMT(dir, "%s/case%zu", base, i);
        write_small(dir);
        edit(dir, cases[i].file, cases[i].from, cases[i].to);
        char suffix[1024];
        const char *d = strstr(cases[i].error, "DIR/");
        if (d)
            FMT(suffix, "%.*s%s/%s", (int)(d - cases[i].error), cases[i].error, dir, d + 4);
        else
            FMT(suffix, "%s", cases[i].error);
        expect_read_error(dir, suffix);
    }

    /* A stage file that is gone. */
    FMT(dir, "%s/gone", base);
    write_small(dir);
    char path[4400];
    FMT(path, "%s/stage_1.relay", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_not_equal(byocl_stages_read(dir, &s, &err), BYOCL_OK);
    ts_assert_contains(err.msg, path);
    ts_remove_tree(base);
}

/* ------------------------------------------------------------------ running */

static void test_run_errors(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(small_text);
    byocl_stages *s = split_ok(m, NULL, 0, 2);
    byocl_tensor **out = NULL;
    int n_out = 0;
    byocl_error err;
    const byocl_function *fn = byocl_module_find(m, "main");
    byocl_tensor **in = random_inputs(fn, 0);
    assert_int_equal(byocl_stages_run(s, in, 1, NULL, NULL, &out, &n_out, &err),
                     BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "the stages take 2 inputs, 1 given");
    /* A tensor of the wrong shape: the stage that reads it says so. */
    const int64_t dims[2] = {1, 5};
    byocl_tensor *wrong = ts_tensor_f32(2, dims, NULL);
    byocl_tensor *args[2] = {in[0], wrong};
    assert_int_equal(byocl_stages_run(s, args, 2, NULL, NULL, &out, &n_out, &err),
                     BYOCL_ERR_TYPE);
    ts_assert_contains(err.msg, "stage 0: input 1 (%y) of @main: ");
    assert_null(out);
    byocl_tensor_unref(wrong);
    free_inputs(in, 2);
    byocl_stages_free(s);
    byocl_module_free(m);
}

/* The progress callback sees each stage once, in order. */
static void count_stage(void *user, int k)
{
    int *seen = user;
    assert_int_equal(*seen, k);
    ++*seen;
}

static void test_run_reports_each_stage(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed(small_text);
    byocl_stages *s = split_ok(m, NULL, 0, 3);
    const byocl_function *fn = byocl_module_find(m, "main");
    byocl_tensor **in = random_inputs(fn, 5);
    byocl_tensor **out;
    int n_out, seen = 0;
    byocl_error err;
    assert_int_equal(byocl_stages_run(s, in, 2, count_stage, &seen, &out, &n_out, &err),
                     BYOCL_OK);
    assert_int_equal(seen, 3);
    /* The result, checked by hand: (concat(x + y, relu(x + y)), 2 relu(x + y) + (x + y)). */
    assert_int_equal(n_out, 2);
    for (int i = 0; i < 4; i++) {
        float sum = (float)byocl_tensor_get(in[0], i) + (float)byocl_tensor_get(in[1], i);
        float relu = sum > 0 ? sum : 0;
        assert_true(byocl_tensor_get(out[0], i) == sum);
        assert_true(byocl_tensor_get(out[0], 4 + i) == relu);
        assert_true(byocl_tensor_get(out[1], i) == (float)(relu * 2.0f) + sum);
    }
    byocl_tensors_free(out, n_out);
    free_inputs(in, 2);
    byocl_stages_free(s);
    byocl_module_free(m);
}

/* Stage k of s compiled for the host backend `target` ("host" or "ref"), and an executor. */
static byocl_executor *stage_executor(const byocl_stages *s, int k, const char *target,
                                      byocl_compiled **c)
{
    byocl_compile_options co = byocl_compile_options_default();
    co.build.target = target;
    co.build.threads = 1;
    byocl_error err;
    byocl_executor *ex = NULL;
    if (byocl_compile(byocl_stages_module(s, k), &co, c, &err) != BYOCL_OK ||
        byocl_executor_new(*c, &ex, &err) != BYOCL_OK)
        fail_msg("stage %d: %s", k, err.msg);
    return ex;
}

/* byocl_item_inputs_fn over an array of items (each of 2 inputs): new references. */
static byocl_status array_inputs(void *user, int item, byocl_tensor **inputs,
                                 byocl_error *err)
{
    byocl_tensor ***items = user;
    for (int i = 0; i < 2; i++)
        inputs[i] = byocl_tensor_ref(items[item][i]);
    return BYOCL_OK;
}

/* Item 9's inputs cannot be had. */
static byocl_status failing_inputs(void *user, int item, byocl_tensor **inputs,
                                   byocl_error *err)
{
    if (item == 9)
        return byocl_error_set(err, BYOCL_ERR_IO, "images/9.npz: no such file");
    return array_inputs(user, item, inputs, err);
}

/* Many items through the stages concurrently (compiled and reference stages mixed): each
 * item's outputs bitwise what the stages give it alone, in input order, at every queue
 * depth; a failing item stops the pipeline with the stage and item named. */
static void test_pipeline(void **state)
{
    (void)state;
    enum { N_ITEMS = 16 };
    byocl_module *m = ts_parse_typed(small_text);
    byocl_stages *s = split_ok(m, NULL, 0, 3);
    const byocl_function *fn = byocl_module_find(m, "main");
    byocl_compiled *c[3] = {NULL};
    byocl_executor *ex[3] = {stage_executor(s, 0, "host", &c[0]), NULL,
                             stage_executor(s, 2, "ref", &c[2])};
    byocl_tensor **in[N_ITEMS];
    for (int i = 0; i < N_ITEMS; i++)
        in[i] = random_inputs(fn, 100 + (uint64_t)i);
    byocl_error err;
    static const int depths[] = {1, 3};
    for (int d = 0; d < 2; d++) {
        byocl_tensor ***out = NULL;
        int *n_out = NULL;
        byocl_pipeline_stats stats;
        if (byocl_stages_pipeline(s, ex, depths[d], array_inputs, in, N_ITEMS, &out, &n_out,
                                  &stats, &err) != BYOCL_OK)
            fail_msg("%s", err.msg);
        for (int i = 0; i < N_ITEMS; i++) {
            byocl_tensor **want = NULL;
            int n_want = 0;
            if (byocl_stages_run_on(s, ex, in[i], 2, NULL, NULL, &want, &n_want, &err) !=
                BYOCL_OK)
                fail_msg("%s", err.msg);
            assert_int_equal(n_out[i], n_want);
            for (int j = 0; j < n_want; j++)
                assert_true(byocl_tensor_equal(out[i][j], want[j]));
            byocl_tensors_free(want, n_want);
            byocl_tensors_free(out[i], n_out[i]);
            assert_true(stats.latency_ms[i] >= 0);
        }
        for (int k = 0; k < 3; k++)
            assert_true(stats.busy_ms[k] >= 0 && stats.busy_ms[k] <= stats.total_ms);
        free(out);
        free(n_out);
        free(stats.latency_ms);
        free(stats.busy_ms);
    }
    /* Item 5 has an input of the wrong shape: stage 0 refuses it, everything stops. */
    int64_t dims[1] = {3};
    byocl_shape wrong = byocl_shape_make(1, dims);
    byocl_tensor *kept = in[5][1];
    in[5][1] = byocl_tensor_new(BYOCL_FLOAT32, &wrong, NULL);
    byocl_tensor ***out = NULL;
    int *n_out = NULL;
    assert_int_not_equal(byocl_stages_pipeline(s, ex, 2, array_inputs, in, N_ITEMS, &out,
                                               &n_out, NULL, &err),
                         BYOCL_OK);
    ts_assert_contains(err.msg, "stage 0, item 5: ");
    assert_null(out);
    assert_null(n_out);
    byocl_tensor_unref(in[5][1]);
    in[5][1] = kept;
    /* Inputs that cannot be had stop it too, naming the item. */
    assert_int_equal(byocl_stages_pipeline(s, ex, 2, failing_inputs, in, N_ITEMS, &out,
                                           &n_out, NULL, &err),
                     BYOCL_ERR_IO);
    assert_string_equal(err.msg, "item 9: images/9.npz: no such file");
    assert_null(out);
    /* Arguments: a depth of 0, no items. */
    assert_int_equal(byocl_stages_pipeline(s, ex, 0, array_inputs, in, N_ITEMS, &out, &n_out,
                                           NULL, &err),
                     BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "byocl_stages_pipeline: depth 0 and items 16 must be at least 1");
    for (int i = 0; i < N_ITEMS; i++)
        free_inputs(in[i], 2);
    for (int k = 0; k < 3; k++) {
        byocl_executor_free(ex[k]);
        byocl_compiled_free(c[k]);
    }
    byocl_stages_free(s);
    byocl_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_flops),
        cmocka_unit_test(test_small_model_exactly),
        cmocka_unit_test(test_getitem_goes_with_tuple),
        cmocka_unit_test(test_partitioned_model),
        cmocka_unit_test(test_stage_parameter_names),
        cmocka_unit_test(test_parts_are_balanced),
        cmocka_unit_test(test_weighted_parts),
        cmocka_unit_test(test_step_nodes_trace_back),
        cmocka_unit_test(test_resnet18_parts_written_and_read),
        cmocka_unit_test(test_resnet18_cuts_residual_skips_a_stage),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_read_errors),
        cmocka_unit_test(test_run_errors),
        cmocka_unit_test(test_run_reports_each_stage),
        cmocka_unit_test(test_pipeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
