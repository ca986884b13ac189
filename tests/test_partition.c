/* byocl_partition: regions become functions with TVM's attributes that @main calls. The
 * cases of TVM's partition tests (multiple and duplicate outputs, constants and tuples at
 * the boundary, regions of several targets), the annotations as TVM's passes print them
 * (tuples annotated whole, compiler="default", one compiler_end per use) and both thread
 * graphs, each checked by its
 * exact printed text, a print/parse round trip, and bit-identical outputs on the
 * reference executor against the unpartitioned module. */
#include "test_support.h"

#include "byocl/pipeline.h"
#include "byocl/target.h"
#include "partition_util.h"

#define HEADER "#[version = \"0.0.5\"]\n"

/* Partitions a copy of `m` (with `opt`), asserts it prints as `want` (when not NULL),
 * round-trips through the text, and computes what `m` computes. Returns the copy. */
static byocl_module *assert_partitions(const byocl_module *m, const byocl_partition_options *opt,
                                       const char *want)
{
    byocl_module *p = pu_clone(m);
    byocl_error err;
    if (byocl_partition(p, opt, &err) != BYOCL_OK)
        fail_msg("partition: %s", err.msg);
    if (want)
        pu_assert_prints(p, want);
    pu_assert_round_trips(p);
    pu_assert_same_outputs(m, p, 3);
    return p;
}

static void check_text(const char *text, const byocl_partition_options *opt, const char *want)
{
    byocl_module *m = pu_parse(text);
    byocl_module_free(assert_partitions(m, opt, want));
    byocl_module_free(m);
}

/* --------------------------------------------------------------- the seed */

/* The thread's first graph: one region, three outputs (relu, bn mean, bn var), the add on
 * the host before it and the abs after it. The exact text is the fixture the CLI test and
 * docs/partitioning.md show too. */
static void test_seed(void **state)
{
    (void)state;
    byocl_module *m = NULL;
    byocl_error err;
    assert_int_equal(byocl_builtin_build("seed", &m, &err), BYOCL_OK);
    byocl_module *p = assert_partitions(m, NULL, NULL);
    char *want = ts_read_file(ts_fixture("partition/seed_partitioned.relay"), NULL);
    char *got = pu_print(p, true);
    assert_string_equal(got, want);
    free(got);
    free(want);
    /* The function carries TVM's attributes, in TVM's order. */
    const byocl_function *f = byocl_module_find(p, "opencl_main_0");
    assert_non_null(f);
    const byocl_attrs *attrs = byocl_function_attrs(f);
    assert_int_equal(attrs->n, 4);
    assert_string_equal(attrs->items[0].key, "Compiler");
    assert_string_equal(byocl_attrs_get_str(attrs, "Compiler", ""), "opencl");
    assert_int_equal(byocl_attrs_get_int(attrs, "Primitive", 0), 1);
    assert_int_equal(byocl_attrs_get_int(attrs, "Inline", 0), 1);
    assert_string_equal(byocl_attrs_get_str(attrs, "global_symbol", ""), "opencl_main_0");
    assert_int_equal(byocl_module_num_functions(p), 2);
    byocl_module_free(p);
    byocl_module_free(m);
}

/* ------------------------------------------------------- TVM's situations */

/* Several outputs, one of them closed twice and used by several host nodes: the function
 * returns each distinct value once, in order of first compiler_end. */
static void test_multiple_and_duplicate_outputs(void **state)
{
    (void)state;
    check_text(HEADER
               "def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %1 = annotation.compiler_begin(%y, compiler=\"acc\");\n"
               "  %2 = add(%0, %1);\n"
               "  %3 = nn.relu(%2);\n"
               "  %4 = annotation.compiler_end(%3, compiler=\"acc\");\n"
               "  %5 = annotation.compiler_end(%3, compiler=\"acc\");\n"
               "  %6 = annotation.compiler_end(%2, compiler=\"acc\");\n"
               "  %7 = abs(%4);\n"
               "  %8 = exp(%5);\n"
               "  %9 = multiply(%6, %7);\n"
               "  (%8, %9, %4)\n"
               "}\n",
               NULL,
               HEADER
               "def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) -> "
               "(Tensor[(4), float32], Tensor[(4), float32], Tensor[(4), float32]) {\n"
               "  %0 = @acc_main_0(%x, %y);\n"
               "  %1 = %0.0;\n"
               "  %2 = %0.1;\n"
               "  %3 = abs(%1);\n"
               "  %4 = exp(%1);\n"
               "  %5 = multiply(%2, %3);\n"
               "  (%4, %5, %1)\n"
               "}\n"
               "\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(4), float32], %acc_0_i1: Tensor[(4), float32], "
               "Compiler=\"acc\", Primitive=1, Inline=1, global_symbol=\"acc_main_0\") -> "
               "(Tensor[(4), float32], Tensor[(4), float32]) {\n"
               "  %2 = add(%acc_0_i0, %acc_0_i1);\n"
               "  %3 = nn.relu(%2);\n"
               "  (%3, %2)\n"
               "}\n");
}

/* One output with several consumers is not a tuple; a value entering twice (two
 * compiler_begins of %x) is one parameter. */
static void test_single_output_many_users(void **state)
{
    (void)state;
    check_text(HEADER
               "def @main(%x: Tensor[(4), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %1 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %2 = multiply(%0, %1);\n"
               "  %3 = annotation.compiler_end(%2, compiler=\"acc\");\n"
               "  %4 = abs(%3);\n"
               "  %5 = exp(%3);\n"
               "  add(%4, %5)\n"
               "}\n",
               NULL,
               HEADER
               "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
               "  %0 = @acc_main_0(%x);\n"
               "  %1 = abs(%0);\n"
               "  %2 = exp(%0);\n"
               "  add(%1, %2)\n"
               "}\n"
               "\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(4), float32], Compiler=\"acc\", Primitive=1, "
               "Inline=1, global_symbol=\"acc_main_0\") -> Tensor[(4), float32] {\n"
               "  multiply(%acc_0_i0, %acc_0_i0)\n"
               "}\n");
}

static byocl_module *parse_with_meta(const char *text)
{
    static const int64_t dims[1] = {4};
    static const float c0[4] = {0.5f, -1.5f, 2.0f, 0.25f}, c1[4] = {3.0f, -2.0f, 1.0f, 0.5f};
    byocl_params *meta = byocl_params_new();
    byocl_tensor *t0 = ts_tensor_f32(1, dims, c0), *t1 = ts_tensor_f32(1, dims, c1);
    assert_int_equal(byocl_params_set(meta, "relay.Constant.0", t0, NULL), BYOCL_OK);
    assert_int_equal(byocl_params_set(meta, "relay.Constant.1", t1, NULL), BYOCL_OK);
    byocl_tensor_unref(t0);
    byocl_tensor_unref(t1);
    byocl_module *m = NULL;
    byocl_error err;
    if (byocl_text_parse(text, strlen(text), "meta.relay", meta, &m, &err) != BYOCL_OK ||
        byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    byocl_params_free(meta);
    return m;
}

/* A tensor constant used directly in the region and by the host, a constant entering
 * through a compiler_begin, a scalar: bound into the region by default (the host keeps its
 * own use), passed as arguments with constants_as_args. */
static void test_constants_at_the_boundary(void **state)
{
    (void)state;
    static const char text[] =
        HEADER
        "def @main(%x: Tensor[(4), float32]) {\n"
        "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
        "  %1 = add(%0, meta[relay.Constant][0]);\n"
        "  %2 = annotation.compiler_begin(meta[relay.Constant][1], compiler=\"acc\");\n"
        "  %3 = multiply(%1, %2);\n"
        "  %4 = maximum(%3, 0f);\n"
        "  %5 = annotation.compiler_end(%4, compiler=\"acc\");\n"
        "  add(%5, meta[relay.Constant][0])\n"
        "}\n";
    byocl_module *m = parse_with_meta(text);
    byocl_module *bound = assert_partitions(
        m, NULL,
        HEADER "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
               "  %0 = @acc_main_0(%x);\n"
               "  add(%0, meta[relay.Constant][0])\n"
               "}\n"
               "\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(4), float32], Compiler=\"acc\", Primitive=1, "
               "Inline=1, global_symbol=\"acc_main_0\") -> Tensor[(4), float32] {\n"
               "  %1 = add(%acc_0_i0, meta[relay.Constant][0]);\n"
               "  %3 = multiply(%1, meta[relay.Constant][1]);\n"
               "  maximum(%3, 0f)\n"
               "}\n");
    byocl_partition_options opt = {.constants_as_args = true};
    byocl_module *args = assert_partitions(
        m, &opt,
        HEADER "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
               "  %0 = @acc_main_0(%x, meta[relay.Constant][0], meta[relay.Constant][1], 0f);\n"
               "  add(%0, meta[relay.Constant][0])\n"
               "}\n"
               "\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(4), float32], %acc_0_i1: Tensor[(4), float32], "
               "%acc_0_i2: Tensor[(4), float32], %acc_0_i3: float32, Compiler=\"acc\", "
               "Primitive=1, Inline=1, global_symbol=\"acc_main_0\") -> Tensor[(4), float32] {\n"
               "  %1 = add(%acc_0_i0, %acc_0_i1);\n"
               "  %3 = multiply(%1, %acc_0_i2);\n"
               "  maximum(%3, %acc_0_i3)\n"
               "}\n");
    byocl_module_free(bound);
    byocl_module_free(args);
    byocl_module_free(m);
}

/* Tuples inside the region (concatenate of the inputs, split into items that leave) and
 * on the host (a tuple of the region's outputs, the result tuple). */
static void test_tuples_at_the_boundary(void **state)
{
    (void)state;
    check_text(HEADER
               "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %1 = annotation.compiler_begin(%y, compiler=\"acc\");\n"
               "  %2 = (%0, %1);\n"
               "  %3 = concatenate(%2);\n"
               "  %4 = split(%3, indices_or_sections=[1, 3]);\n"
               "  %5 = %4.0;\n"
               "  %6 = %4.2;\n"
               "  %7 = annotation.compiler_end(%5, compiler=\"acc\");\n"
               "  %8 = annotation.compiler_end(%6, compiler=\"acc\");\n"
               "  %9 = (%7, %8);\n"
               "  %10 = concatenate(%9, axis=1);\n"
               "  (%10, %8)\n"
               "}\n",
               NULL,
               HEADER
               "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> "
               "(Tensor[(1, 6), float32], Tensor[(1, 3), float32]) {\n"
               "  %0 = @acc_main_0(%x, %y);\n"
               "  %1 = %0.0;\n"
               "  %2 = %0.1;\n"
               "  %3 = (%1, %2);\n"
               "  %4 = concatenate(%3, axis=1);\n"
               "  (%4, %2)\n"
               "}\n"
               "\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(2, 3), float32], %acc_0_i1: Tensor[(2, 3), "
               "float32], Compiler=\"acc\", Primitive=1, Inline=1, global_symbol=\"acc_main_0\") "
               "-> (Tensor[(1, 3), float32], Tensor[(1, 3), float32]) {\n"
               "  %2 = (%acc_0_i0, %acc_0_i1);\n"
               "  %3 = concatenate(%2);\n"
               "  %4 = split(%3, indices_or_sections=[1, 3]);\n"
               "  %5 = %4.0;\n"
               "  %6 = %4.2;\n"
               "  (%5, %6)\n"
               "}\n");
}

/* Regions of two targets, one in the middle of the other's (not merged): numbered over
 * the whole module in order of first appearance; a region that computes nothing used is
 * dropped. */
static void test_several_regions_numbered(void **state)
{
    (void)state;
    check_text(HEADER
               "def @main(%x: Tensor[(4), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"a\");\n"
               "  %1 = nn.relu(%0);\n"
               "  %2 = annotation.compiler_end(%1, compiler=\"a\");\n"
               "  %3 = annotation.compiler_begin(%2, compiler=\"b\");\n"
               "  %4 = abs(%3);\n"
               "  %5 = annotation.compiler_end(%4, compiler=\"b\");\n"
               "  %6 = annotation.compiler_begin(%x, compiler=\"b\");\n"
               "  %7 = exp(%6);\n"
               "  %8 = annotation.compiler_begin(%2, compiler=\"a\");\n"
               "  %9 = annotation.compiler_begin(%5, compiler=\"a\");\n"
               "  %10 = add(%8, %9);\n"
               "  annotation.compiler_end(%10, compiler=\"a\")\n"
               "}\n",
               NULL,
               HEADER
               "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
               "  %0 = @a_main_0(%x);\n"
               "  %1 = @b_main_1(%0);\n"
               "  @a_main_2(%0, %1)\n"
               "}\n"
               "\n"
               "def @a_main_0(%a_0_i0: Tensor[(4), float32], Compiler=\"a\", Primitive=1, "
               "Inline=1, global_symbol=\"a_main_0\") -> Tensor[(4), float32] {\n"
               "  nn.relu(%a_0_i0)\n"
               "}\n"
               "\n"
               "def @b_main_1(%b_1_i0: Tensor[(4), float32], Compiler=\"b\", Primitive=1, "
               "Inline=1, global_symbol=\"b_main_1\") -> Tensor[(4), float32] {\n"
               "  abs(%b_1_i0)\n"
               "}\n"
               "\n"
               "def @a_main_2(%a_2_i0: Tensor[(4), float32], %a_2_i1: Tensor[(4), float32], "
               "Compiler=\"a\", Primitive=1, Inline=1, global_symbol=\"a_main_2\") -> "
               "Tensor[(4), float32] {\n"
               "  add(%a_2_i0, %a_2_i1)\n"
               "}\n");
}

/* The region starts (its first node, %1) before a host node that computes one of its
 * inputs (%2): the call goes after it. A function name already in the module is skipped. */
static void test_call_waits_for_late_input(void **state)
{
    (void)state;
    check_text(HEADER
               "def @main(%x: Tensor[(4), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %1 = nn.relu(%0);\n"
               "  %2 = exp(%x);\n"
               "  %3 = annotation.compiler_begin(%2, compiler=\"acc\");\n"
               "  %4 = add(%1, %3);\n"
               "  %5 = annotation.compiler_end(%4, compiler=\"acc\");\n"
               "  @acc_main_0(%5)\n"
               "}\n"
               "\n"
               "def @acc_main_0(%y: Tensor[(4), float32]) {\n"
               "  abs(%y)\n"
               "}\n",
               NULL,
               HEADER
               "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
               "  %0 = exp(%x);\n"
               "  %1 = @acc_main_1(%x, %0);\n"
               "  @acc_main_0(%1)\n"
               "}\n"
               "\n"
               "def @acc_main_0(%y: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
               "  abs(%y)\n"
               "}\n"
               "\n"
               "def @acc_main_1(%acc_1_i0: Tensor[(4), float32], %acc_1_i1: Tensor[(4), "
               "float32], Compiler=\"acc\", Primitive=1, Inline=1, global_symbol=\"acc_main_1\") "
               "-> Tensor[(4), float32] {\n"
               "  %1 = nn.relu(%acc_1_i0);\n"
               "  add(%1, %acc_1_i1)\n"
               "}\n");
}

static void test_dead_region_and_no_regions(void **state)
{
    (void)state;
    check_text(HEADER
               "def @main(%x: Tensor[(4), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %1 = nn.relu(%0);\n"
               "  abs(%x)\n"
               "}\n",
               NULL,
               HEADER "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
                      "  abs(%x)\n"
                      "}\n");
    check_text(HEADER "def @main(%x: Tensor[(4), float32]) {\n"
                      "  %0 = nn.relu(%x);\n"
                      "  abs(%0)\n"
                      "}\n",
               NULL,
               HEADER "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
                      "  %0 = nn.relu(%x);\n"
                      "  abs(%0)\n"
                      "}\n");
}

static void test_refuses_bad_annotations(void **state)
{
    (void)state;
    byocl_module *m = pu_parse(HEADER
                               "def @main(%x: Tensor[(4), float32]) {\n"
                               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                               "  %1 = nn.relu(%0);\n"
                               "  %2 = annotation.compiler_end(%1, compiler=\"acc\");\n"
                               "  %3 = abs(%2);\n"
                               "  %4 = annotation.compiler_begin(%3, compiler=\"acc\");\n"
                               "  %5 = add(%1, %4);\n"
                               "  annotation.compiler_end(%5, compiler=\"acc\")\n"
                               "}\n");
    char *before = pu_print(m, true);
    byocl_error err;
    assert_int_equal(byocl_partition(m, NULL, &err), BYOCL_ERR_INVALID);
    ts_assert_contains(err.msg, "in @main: region 0 (acc) is not convex");
    char *after = pu_print(m, true);
    assert_string_equal(after, before);
    free(before);
    free(after);
    byocl_module_free(m);
    PU_ASSERT_ERROR(byocl_partition(NULL, NULL, &err), err, BYOCL_ERR_INVALID,
                    "byocl_partition: no module");
    m = byocl_module_new();
    PU_ASSERT_ERROR(byocl_partition(m, NULL, &err), err, BYOCL_ERR_NOT_FOUND,
                    "no function @main in the module");
    byocl_module_free(m);
}

/* ---------------------------------------------------------- thread graphs */

/* The VGG block with its shapes shrunk (512 channels -> 8, 14x14 -> 5x5) so that the
 * reference executor runs it fast; same nodes, same annotations. */
static char *small_vgg(const char *fixture)
{
    char *text = ts_read_file(ts_fixture(fixture), NULL);
    static const char *const from[] = {"512", "14, 14"}, *const to[] = {"  8", " 5,  5"};
    for (int i = 0; i < 2; i++)
        for (char *at = strstr(text, from[i]); at; at = strstr(at, from[i]))
            memcpy(at, to[i], strlen(to[i]));
    return text;
}

/* comaniac's corrected block partitions as is; the thread's own block after --complete
 * (its casts stay on the host). */
static void test_thread_vgg_blocks(void **state)
{
    (void)state;
    char *text = small_vgg("text/vgg_block_corrected.relay");
    byocl_module *m = pu_parse(text);
    byocl_module *p = assert_partitions(m, NULL, NULL);
    const byocl_function *f = byocl_module_find(p, "ccompiler_main_0");
    assert_non_null(f);
    assert_int_equal(byocl_function_num_params(f), 3);
    assert_int_equal(byocl_function_num_nodes(f), 3 + 6); /* params, 2 casts ... relu */
    byocl_module_free(p);
    byocl_module_free(m);
    free(text);

    text = small_vgg("text/vgg_block.relay");
    m = pu_parse(text);
    byocl_module *completed = pu_clone(m);
    byocl_error err;
    assert_int_equal(byocl_check_annotations(completed, true, &err), BYOCL_OK);
    p = assert_partitions(completed, NULL, NULL);
    pu_assert_same_outputs(m, p, 5);
    f = byocl_module_find(p, "ccompiler_main_0");
    assert_int_equal(byocl_function_num_nodes(f), 3 + 4); /* the casts stayed outside */
    byocl_module_free(p);
    byocl_module_free(completed);
    byocl_module_free(m);
    free(text);
}

/* The thread's annotator done right: the block's range through the pipeline puts the
 * casts in the region, their free variables become its parameters. */
static void test_thread_range(void **state)
{
    (void)state;
    byocl_module *m = NULL;
    byocl_error err;
    assert_int_equal(byocl_load_model(ts_fixture("annotate/vgg_block_plain.relay"), NULL, &m,
                                      &err),
                     BYOCL_OK);
    byocl_pipeline_options opt = {.range_target = "ccompiler", .range = "%76:%81"};
    assert_int_equal(byocl_pipeline_partition(m, &opt, &err), BYOCL_OK);
    /* The region keeps the file's names; @main, with a new call in it, is numbered anew. */
    pu_assert_prints(
        m, HEADER
        "def @main(%74: Tensor[(1, 512, 14, 14), float16], "
        "%block5_conv3/convolution/ReadVariableOp:0: Tensor[(512, 512, 3, 3), float32], "
        "%block5_conv3/BiasAdd/ReadVariableOp:0: Tensor[(512), float32]) -> "
        "Tensor[(1, 512, 7, 7), float16] {\n"
        "  %0 = @ccompiler_main_0(%74, %block5_conv3/convolution/ReadVariableOp:0, "
        "%block5_conv3/BiasAdd/ReadVariableOp:0);\n"
        "  nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2])\n"
        "}\n"
        "\n"
        "def @ccompiler_main_0(%ccompiler_0_i0: Tensor[(1, 512, 14, 14), float16], "
        "%ccompiler_0_i1: Tensor[(512, 512, 3, 3), float32], %ccompiler_0_i2: "
        "Tensor[(512), float32], Compiler=\"ccompiler\", Primitive=1, Inline=1, "
        "global_symbol=\"ccompiler_main_0\") -> Tensor[(1, 512, 14, 14), float16] {\n"
        "  %76 = nn.relu(%ccompiler_0_i0);\n"
        "  %77 = cast(%ccompiler_0_i1, dtype=\"float16\");\n"
        "  %78 = nn.conv2d(%76, %77, padding=[1, 1, 1, 1], channels=512, kernel_size=[3, 3], "
        "out_dtype=\"float16\");\n"
        "  %79 = cast(%ccompiler_0_i2, dtype=\"float16\");\n"
        "  %80 = nn.bias_add(%78, %79);\n"
        "  nn.relu(%80)\n"
        "}\n");
    byocl_module_free(m);

    /* Smaller shapes, same graph: the partitioned block computes what the plain one does. */
    char *text = small_vgg("annotate/vgg_block_plain.relay");
    m = pu_parse(text);
    byocl_module *p = pu_clone(m);
    assert_int_equal(byocl_pipeline_partition(p, &opt, &err), BYOCL_OK);
    pu_assert_same_outputs(m, p, 13);
    byocl_module_free(p);
    byocl_module_free(m);
    free(text);
}

/* The pipeline's own errors, and a pass's error named after the pass; dumps go to the
 * given stream, after the named pass only. */
static void test_pipeline_errors_and_dumps(void **state)
{
    (void)state;
    byocl_module *m = NULL;
    byocl_error err;
    assert_int_equal(byocl_builtin_build("seed", &m, &err), BYOCL_OK);
    byocl_pipeline_options opt = {.dump_after = "parse"};
    PU_ASSERT_ERROR(byocl_pipeline_partition(m, &opt, &err), err, BYOCL_ERR_INVALID,
                    "unknown pass 'parse' for dump-after (passes: fold_constants, annotate_target, "
                    "annotate_range, check_annotations, merge_regions, keep_on_host, "
                    "partition, all)");
    const char *targets[1] = {"opencl"};
    byocl_pipeline_options both = {.targets = targets, .n_targets = 1, .range_target = "x"};
    PU_ASSERT_ERROR(byocl_pipeline_partition(m, &both, &err), err, BYOCL_ERR_INVALID,
                    "annotate by op support (targets) or by node range, not both");
    char *buf = NULL;
    size_t len = 0;
    FILE *dump = open_memstream(&buf, &len);
    assert_non_null(dump);
    byocl_pipeline_options merge_dump = {.dump_after = "merge_regions", .dump = dump};
    assert_int_equal(byocl_pipeline_partition(m, &merge_dump, &err), BYOCL_OK);
    assert_int_equal(fclose(dump), 0);
    char *annotated = NULL;
    byocl_module *fresh = NULL;
    assert_int_equal(byocl_builtin_build("seed", &fresh, &err), BYOCL_OK);
    annotated = pu_print(fresh, true);
    static const char title[] = "// byocl: the module after merge_regions\n";
    assert_true(strncmp(buf, title, strlen(title)) == 0);
    assert_string_equal(buf + strlen(title), annotated); /* nothing to merge in the seed */
    free(annotated);
    free(buf);
    byocl_module_free(fresh);
    byocl_module_free(m);

    m = pu_parse(HEADER
                 "def @main(%x: Tensor[(4), float32]) {\n"
                 "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                 "  nn.relu(%0)\n"
                 "}\n");
    PU_ASSERT_ERROR(byocl_pipeline_partition(m, NULL, &err), err, BYOCL_ERR_INVALID,
                    "check_annotations: in @main, the result (nn.relu) at 4:3: it leaves "
                    "region 0 (acc) without annotation.compiler_end; hint: annotate every value "
                    "that flows out of a region with annotation.compiler_end (or run `byocl "
                    "partition --complete`)");
    byocl_module_free(m);
}

/* --------------------------------------------------- cost-based offload */

/* Reports of byocl_keep_regions_on_host, one line each. */
static void note_kept_region(void *user, const byocl_function *fn, int first,
                             const char *target, int n_ops, double flops, const char *why)
{
    char *log = user;
    snprintf(log + strlen(log), 1024 - strlen(log), "%s: %d ops from %s, %g FLOPs: %s\n",
             target, n_ops, byocl_node_op(fn, first), flops, why);
}

/* A test accelerator for the cost-based offload: everything but split. */
static bool flopacc_supports(void *ctx, const byocl_function *fn, int node, char *why,
                             size_t why_len)
{
    (void)ctx;
    const char *op = byocl_node_op(fn, node);
    if (strcmp(op, "split") != 0)
        return true;
    snprintf(why, why_len, "%s is not supported", op);
    return false;
}

/* Partitions a copy of two_regions for flopacc with `policy`; the log of kept regions. */
static byocl_module *partition_two_regions(const byocl_module *m, byocl_offload_policy policy,
                                           char *log, byocl_status want, const char *want_err)
{
    const char *targets[1] = {"flopacc"};
    log[0] = '\0';
    policy.report = note_kept_region;
    policy.user = log;
    byocl_pipeline_options opt = {.targets = targets, .n_targets = 1, .offload = policy};
    byocl_module *p = pu_clone(m);
    byocl_error err = {0};
    byocl_status st = byocl_pipeline_partition(p, &opt, &err);
    if (st != want)
        fail_msg("pipeline: status %d, want %d: %s", st, want, err.msg);
    if (want_err)
        assert_string_equal(err.msg, want_err);
    return p;
}

/* Two flopacc regions around a host split: the conv + relu region (2 * 8 * 32 * 32 * 27 =
 * 442368 FLOPs of conv, 8192 of relu) and the sigmoid + multiply region (1024 + 1024). A
 * threshold between them keeps the second on the host: its annotations become
 * compiler="default" and partition makes one function. 0 changes nothing; a bad
 * threshold is an error. */
static void test_keep_regions_on_host(void **state)
{
    (void)state;
    byocl_target_i acc = {.name = "flopacc", .api_version = BYOCL_TARGET_API_VERSION,
                          .supports = flopacc_supports};
    byocl_error err;
    assert_int_equal(byocl_target_register(&acc, &err), BYOCL_OK);
    char log[1024];
    /* a conv + relu region and a sigmoid + multiply region around a host split */
    char *text = ts_read_file(ts_fixture("text/two_regions.relay"), NULL);
    byocl_module *m = pu_parse(text);
    free(text);
    byocl_module *p = partition_two_regions(m, (byocl_offload_policy){.min_flops = 5000}, log,
                                            BYOCL_OK, NULL);
    assert_string_equal(log, "flopacc: 2 ops from sigmoid, 2048 FLOPs: under the minimum of "
                             "5000 FLOPs\n");
    pu_assert_prints(p, HEADER
        "def @main(%x: Tensor[(1, 3, 32, 32), float32], %w: Tensor[(8, 3, 3, 3), float32]) "
        "-> Tensor[(1, 1, 32, 32), float32] {\n"
        "  %0 = @flopacc_main_0(%x, %w);\n"
        "  %1 = split(%0, indices_or_sections=8, axis=1);\n"
        "  %2 = %1.0;\n"
        "  %3 = sigmoid(%2);\n"
        "  multiply(%3, 2f)\n"
        "}\n\n"
        "def @flopacc_main_0(%flopacc_0_i0: Tensor[(1, 3, 32, 32), float32], %flopacc_0_i1: "
        "Tensor[(8, 3, 3, 3), float32], Compiler=\"flopacc\", Primitive=1, Inline=1, "
        "global_symbol=\"flopacc_main_0\") -> Tensor[(1, 8, 32, 32), float32] {\n"
        "  %0 = nn.conv2d(%flopacc_0_i0, %flopacc_0_i1, padding=[1, 1, 1, 1]);\n"
        "  nn.relu(%0)\n"
        "}\n");
    pu_assert_same_outputs(m, p, 3);
    byocl_module_free(p);

    /* Above both regions: nothing is offloaded; 0 (off): both are. */
    p = partition_two_regions(m, (byocl_offload_policy){.min_flops = 1e9}, log, BYOCL_OK, NULL);
    assert_string_equal(log, "flopacc: 2 ops from nn.conv2d, 450560 FLOPs: under the minimum "
                             "of 1e+09 FLOPs\n"
                             "flopacc: 2 ops from sigmoid, 2048 FLOPs: under the minimum of "
                             "1e+09 FLOPs\n");
    assert_int_equal(byocl_module_num_functions(p), 1);
    byocl_module_free(p);
    p = partition_two_regions(m, (byocl_offload_policy){0}, log, BYOCL_OK, NULL);
    assert_int_equal(byocl_module_num_functions(p), 3);
    byocl_module_free(p);
    byocl_module_free(partition_two_regions(
        m, (byocl_offload_policy){.min_flops = -1}, log, BYOCL_ERR_INVALID,
        "keep_on_host: the least FLOPs of a region must be a number >= 0, got -1"));

    /* A profile: the first region ran slower offloaded, the second faster. */
    byocl_region_timing profile[2] = {{"flopacc_main_0", 0.5, 0.9}, {"flopacc_main_1", 0.3, 0.1}};
    p = partition_two_regions(m, (byocl_offload_policy){.profile = profile, .n_profile = 2}, log,
                              BYOCL_OK, NULL);
    assert_string_equal(log, "flopacc: 2 ops from nn.conv2d, 450560 FLOPs: flopacc_main_0 took "
                             "0.9 ms offloaded against 0.5 ms on the host in the profile\n");
    assert_null(byocl_module_find(p, "flopacc_main_1"));
    assert_non_null(byocl_module_find(p, "flopacc_main_0")); /* the sigmoid region, renumbered */
    pu_assert_same_outputs(m, p, 3);
    byocl_module_free(p);
    /* A profile of something else. */
    byocl_region_timing other[2] = {{"flopacc_main_0", 1, 2}, {"opencl_main_1", 1, 2}};
    byocl_module_free(partition_two_regions(
        m, (byocl_offload_policy){.profile = other, .n_profile = 2}, log, BYOCL_ERR_INVALID,
        "keep_on_host: the profile's region 'opencl_main_1' is not a region of this partition "
        "(it has 2): the profile comes from another model, target or options"));
    byocl_module_free(partition_two_regions(
        m, (byocl_offload_policy){.profile = profile, .n_profile = 1}, log, BYOCL_ERR_INVALID,
        "keep_on_host: region flopacc_main_1 is not in the profile: the profile comes from "
        "another model, target or options"));
    byocl_module_free(m);
}

/* byocl_offload_profile_read: byocl bench --json's regions[]; errors name the file and
 * the entry. */
static void test_offload_profile_read(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/profile.json", ts_tmpdir("offload-profile"));
    ts_write_text(path, "{\"model\": \"m\", \"regions\": [\n"
                        "  {\"name\": \"opencl_main_0\", \"ops\": 3, \"host_ms\": 1.5, "
                        "\"offloaded_ms\": 2.25}]}\n");
    byocl_region_timing *profile = NULL;
    int n = 0;
    byocl_error err;
    assert_int_equal(byocl_offload_profile_read(path, &profile, &n, &err), BYOCL_OK);
    assert_int_equal(n, 1);
    assert_string_equal(profile[0].symbol, "opencl_main_0");
    assert_true(profile[0].host_ms == 1.5 && profile[0].offloaded_ms == 2.25);
    byocl_offload_profile_free(profile, n);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"{\"host\": {}}", "no \"regions\" array: an offload profile is what byocl bench "
                           "--json writes"},
        {"{\"regions\": [{\"host_ms\": 1, \"offloaded_ms\": 2}]}",
         "regions[0] has no \"name\" (the region's symbol)"},
        {"{\"regions\": [{\"name\": \"a\", \"host_ms\": -1, \"offloaded_ms\": 2}]}",
         "regions[0] has no \"host_ms\" (a time in ms >= 0), as byocl bench --json writes it"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ts_write_text(path, bad[i].text);
        assert_int_equal(byocl_offload_profile_read(path, &profile, &n, &err), BYOCL_ERR_PARSE);
        char want[8192];
        snprintf(want, sizeof want, "%s: %s", path, bad[i].want);
        assert_string_equal(err.msg, want);
        assert_null(profile);
    }
    strcat(path, ".missing");
    assert_int_not_equal(byocl_offload_profile_read(path, &profile, &n, &err), BYOCL_OK);
    ts_assert_contains(err.msg, path);
}

/* ------------------------------------------------ TVM's annotated forms */

/* TVM's AnnotateTarget puts a compiler_begin on the tuple that feeds concatenate, and
 * marks what stays on the host with compiler="default". The tuple's compiler_begin is one
 * per field (a parameter each), the default annotations go: exp stays in @main and no
 * @default_main function is made. */
static void test_tvm_tuple_begin_and_default(void **state)
{
    (void)state;
    check_text(HEADER
               "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %1 = nn.relu(%0);\n"
               "  %2 = annotation.compiler_end(%1, compiler=\"acc\");\n"
               "  %3 = annotation.compiler_begin(%y, compiler=\"default\");\n"
               "  %4 = exp(%3);\n"
               "  %5 = annotation.compiler_end(%4, compiler=\"default\");\n"
               "  %6 = (%2, %5);\n"
               "  %7 = annotation.compiler_begin(%6, compiler=\"acc\");\n"
               "  %8 = concatenate(%7, axis=1);\n"
               "  annotation.compiler_end(%8, compiler=\"acc\")\n"
               "}\n",
               NULL,
               HEADER
               "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> Tensor[(2, "
               "6), float32] {\n"
               "  %0 = @acc_main_0(%x);\n"
               "  %1 = exp(%y);\n"
               "  @acc_main_1(%0, %1)\n"
               "}\n"
               "\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(2, 3), float32], Compiler=\"acc\", "
               "Primitive=1, Inline=1, global_symbol=\"acc_main_0\") -> Tensor[(2, 3), float32] "
               "{\n"
               "  nn.relu(%acc_0_i0)\n"
               "}\n"
               "\n"
               "def @acc_main_1(%acc_1_i0: Tensor[(2, 3), float32], %acc_1_i1: Tensor[(2, 3), "
               "float32], Compiler=\"acc\", Primitive=1, Inline=1, global_symbol=\"acc_main_1\") "
               "-> Tensor[(2, 6), float32] {\n"
               "  %0 = (%acc_1_i0, %acc_1_i1);\n"
               "  concatenate(%0, axis=1)\n"
               "}\n");
}

/* A whole batch_norm closed by one compiler_end, its items taken on the host: the region
 * returns the fields the host reads, each an output of its own. */
static void test_tvm_tuple_end_batch_norm(void **state)
{
    (void)state;
    check_text(HEADER
               "def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: "
               "Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %1 = annotation.compiler_begin(%g, compiler=\"acc\");\n"
               "  %2 = annotation.compiler_begin(%b, compiler=\"acc\");\n"
               "  %3 = annotation.compiler_begin(%m, compiler=\"acc\");\n"
               "  %4 = annotation.compiler_begin(%v, compiler=\"acc\");\n"
               "  %5 = nn.batch_norm(%0, %1, %2, %3, %4);\n"
               "  %6 = annotation.compiler_end(%5, compiler=\"acc\");\n"
               "  %7 = %6.0;\n"
               "  %8 = nn.relu(%7);\n"
               "  %9 = %6.2;\n"
               "  %10 = abs(%9);\n"
               "  (%8, %10)\n"
               "}\n",
               NULL,
               HEADER
               "def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: "
               "Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) -> "
               "(Tensor[(1, 2, 3, 3), float32], Tensor[(2), float32]) {\n"
               "  %0 = @acc_main_0(%x, %g, %b, %m, %v);\n"
               "  %1 = %0.0;\n"
               "  %2 = %0.1;\n"
               "  %3 = nn.relu(%1);\n"
               "  %4 = abs(%2);\n"
               "  (%3, %4)\n"
               "}\n"
               "\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(1, 2, 3, 3), float32], %acc_0_i1: Tensor[(2), "
               "float32], %acc_0_i2: Tensor[(2), float32], %acc_0_i3: Tensor[(2), float32], "
               "%acc_0_i4: Tensor[(2), float32], Compiler=\"acc\", Primitive=1, Inline=1, "
               "global_symbol=\"acc_main_0\") -> (Tensor[(1, 2, 3, 3), float32], Tensor[(2), "
               "float32]) {\n"
               "  %0 = nn.batch_norm(%acc_0_i0, %acc_0_i1, %acc_0_i2, %acc_0_i3, %acc_0_i4);\n"
               "  %1 = %0.0;\n"
               "  %2 = %0.2;\n"
               "  (%1, %2)\n"
               "}\n");
}

/* Tuple(add, subtract) closed as one value (TVM's annotation of a tuple result, with a
 * compiler_begin per use): as if each field were closed, so add and subtract are two
 * regions, as TVM's PartitionGraph makes them; each takes %x and %y once. */
static void test_tvm_tuple_end_of_tuple(void **state)
{
    (void)state;
    check_text(HEADER
               "def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %1 = annotation.compiler_begin(%y, compiler=\"acc\");\n"
               "  %2 = add(%0, %1);\n"
               "  %3 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %4 = annotation.compiler_begin(%y, compiler=\"acc\");\n"
               "  %5 = subtract(%3, %4);\n"
               "  %6 = (%2, %5);\n"
               "  annotation.compiler_end(%6, compiler=\"acc\")\n"
               "}\n",
               NULL,
               HEADER
               "def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) -> (Tensor[(4), "
               "float32], Tensor[(4), float32]) {\n"
               "  %0 = @acc_main_0(%x, %y);\n"
               "  %1 = @acc_main_1(%x, %y);\n"
               "  (%0, %1)\n"
               "}\n"
               "\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(4), float32], %acc_0_i1: Tensor[(4), float32], "
               "Compiler=\"acc\", Primitive=1, Inline=1, global_symbol=\"acc_main_0\") -> "
               "Tensor[(4), float32] {\n"
               "  add(%acc_0_i0, %acc_0_i1)\n"
               "}\n"
               "\n"
               "def @acc_main_1(%acc_1_i0: Tensor[(4), float32], %acc_1_i1: Tensor[(4), float32], "
               "Compiler=\"acc\", Primitive=1, Inline=1, global_symbol=\"acc_main_1\") -> "
               "Tensor[(4), float32] {\n"
               "  subtract(%acc_1_i0, %acc_1_i1)\n"
               "}\n");
}

/* Tuples crossing boundaries between targets: a tuple entering "other" whole (a region
 * output and four parameters), a batch_norm leaving it whole and entering "acc" whole.
 * One parameter or output per field; a field that only passes through "acc" is a region
 * of its own, as annotated. */
static void test_tvm_tuple_across_targets(void **state)
{
    (void)state;
    check_text(HEADER
               "def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: "
               "Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %1 = nn.relu(%0);\n"
               "  %2 = annotation.compiler_end(%1, compiler=\"acc\");\n"
               "  %3 = (%2, %g, %b, %m, %v);\n"
               "  %4 = annotation.compiler_begin(%3, compiler=\"other\");\n"
               "  %5 = %4.0;\n"
               "  %6 = %4.1;\n"
               "  %7 = %4.2;\n"
               "  %8 = %4.3;\n"
               "  %9 = %4.4;\n"
               "  %10 = nn.batch_norm(%5, %6, %7, %8, %9);\n"
               "  %11 = annotation.compiler_end(%10, compiler=\"other\");\n"
               "  %12 = annotation.compiler_begin(%11, compiler=\"acc\");\n"
               "  %13 = %12.0;\n"
               "  %14 = %12.1;\n"
               "  %15 = nn.relu(%13);\n"
               "  %16 = annotation.compiler_end(%15, compiler=\"acc\");\n"
               "  %17 = annotation.compiler_end(%14, compiler=\"acc\");\n"
               "  (%16, %17)\n"
               "}\n",
               NULL,
               HEADER
               "def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: "
               "Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) -> "
               "(Tensor[(1, 2, 3, 3), float32], Tensor[(2), float32]) {\n"
               "  %0 = @acc_main_0(%x);\n"
               "  %1 = @other_main_1(%0, %g, %b, %m, %v);\n"
               "  %2 = %1.0;\n"
               "  %3 = %1.1;\n"
               "  %4 = @acc_main_3(%3);\n"
               "  %5 = @acc_main_2(%2);\n"
               "  (%5, %4)\n"
               "}\n"
               "\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(1, 2, 3, 3), float32], Compiler=\"acc\", "
               "Primitive=1, Inline=1, global_symbol=\"acc_main_0\") -> Tensor[(1, 2, 3, 3), "
               "float32] {\n"
               "  nn.relu(%acc_0_i0)\n"
               "}\n"
               "\n"
               "def @other_main_1(%other_1_i0: Tensor[(1, 2, 3, 3), float32], %other_1_i1: "
               "Tensor[(2), float32], %other_1_i2: Tensor[(2), float32], %other_1_i3: Tensor[(2), "
               "float32], %other_1_i4: Tensor[(2), float32], Compiler=\"other\", Primitive=1, "
               "Inline=1, global_symbol=\"other_main_1\") -> (Tensor[(1, 2, 3, 3), float32], "
               "Tensor[(2), float32]) {\n"
               "  %0 = nn.batch_norm(%other_1_i0, %other_1_i1, %other_1_i2, %other_1_i3, "
               "%other_1_i4);\n"
               "  %1 = %0.0;\n"
               "  %2 = %0.1;\n"
               "  (%1, %2)\n"
               "}\n"
               "\n"
               "def @acc_main_2(%acc_2_i0: Tensor[(1, 2, 3, 3), float32], Compiler=\"acc\", "
               "Primitive=1, Inline=1, global_symbol=\"acc_main_2\") -> Tensor[(1, 2, 3, 3), "
               "float32] {\n"
               "  nn.relu(%acc_2_i0)\n"
               "}\n"
               "\n"
               "def @acc_main_3(%acc_3_i0: Tensor[(2), float32], Compiler=\"acc\", Primitive=1, "
               "Inline=1, global_symbol=\"acc_main_3\") -> Tensor[(2), float32] {\n"
               "  %acc_3_i0\n"
               "}\n");
}

/* compiler="default" is TVM's "stays on the host": its annotations are removed before
 * partitioning, so exp and abs stay in @main and the only function is the acc region. */
static void test_tvm_default_stays_on_host(void **state)
{
    (void)state;
    byocl_module *m = pu_parse(HEADER
               "def @main(%x: Tensor[(4), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"default\");\n"
               "  %1 = exp(%0);\n"
               "  %2 = annotation.compiler_end(%1, compiler=\"default\");\n"
               "  %3 = annotation.compiler_begin(%2, compiler=\"acc\");\n"
               "  %4 = nn.relu(%3);\n"
               "  %5 = annotation.compiler_end(%4, compiler=\"acc\");\n"
               "  %6 = annotation.compiler_begin(%5, compiler=\"default\");\n"
               "  %7 = abs(%6);\n"
               "  annotation.compiler_end(%7, compiler=\"default\")\n"
               "}\n");
    byocl_module *p = assert_partitions(m, NULL,
               HEADER
               "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
               "  %0 = exp(%x);\n"
               "  %1 = @acc_main_0(%0);\n"
               "  abs(%1)\n"
               "}\n"
               "\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(4), float32], Compiler=\"acc\", Primitive=1, "
               "Inline=1, global_symbol=\"acc_main_0\") -> Tensor[(4), float32] {\n"
               "  nn.relu(%acc_0_i0)\n"
               "}\n");
    assert_null(byocl_module_find(p, "default_main_0"));
    assert_int_equal(byocl_module_num_functions(p), 2);
    byocl_module_free(p);
    byocl_module_free(m);
}

/* One producer entering a region through two compiler_end/compiler_begin pairs (TVM's
 * style, one compiler_end per use) is one parameter: one transfer, not two. */
static void test_one_parameter_per_producer(void **state)
{
    (void)state;
    check_text(HEADER
               "def @main(%x: Tensor[(4), float32]) {\n"
               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
               "  %1 = nn.relu(%0);\n"
               "  %2 = annotation.compiler_end(%1, compiler=\"acc\");\n"
               "  %3 = annotation.compiler_end(%1, compiler=\"acc\");\n"
               "  %4 = annotation.compiler_begin(%2, compiler=\"other\");\n"
               "  %5 = abs(%4);\n"
               "  %6 = annotation.compiler_begin(%3, compiler=\"other\");\n"
               "  %7 = multiply(%5, %6);\n"
               "  annotation.compiler_end(%7, compiler=\"other\")\n"
               "}\n",
               NULL,
               HEADER
               "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
               "  %0 = @acc_main_0(%x);\n"
               "  @other_main_1(%0)\n"
               "}\n"
               "\n"
               "def @acc_main_0(%acc_0_i0: Tensor[(4), float32], Compiler=\"acc\", Primitive=1, "
               "Inline=1, global_symbol=\"acc_main_0\") -> Tensor[(4), float32] {\n"
               "  nn.relu(%acc_0_i0)\n"
               "}\n"
               "\n"
               "def @other_main_1(%other_1_i0: Tensor[(4), float32], Compiler=\"other\", "
               "Primitive=1, Inline=1, global_symbol=\"other_main_1\") -> Tensor[(4), float32] {\n"
               "  %5 = abs(%other_1_i0);\n"
               "  multiply(%5, %other_1_i0)\n"
               "}\n");
}

/* The same forms through the pipeline: merge_regions joins a batch_norm closed whole and
 * entering the same target whole (the pair goes, the tuple stays inside); partition then
 * gives the region the fields used outside, in the order of their first use. */
static void test_tvm_tuple_pair_merges(void **state)
{
    (void)state;
    byocl_module *m = pu_parse(HEADER
                               "def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), "
                               "float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: "
                               "Tensor[(2), float32]) {\n"
                               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                               "  %1 = annotation.compiler_begin(%g, compiler=\"acc\");\n"
                               "  %2 = annotation.compiler_begin(%b, compiler=\"acc\");\n"
                               "  %3 = annotation.compiler_begin(%m, compiler=\"acc\");\n"
                               "  %4 = annotation.compiler_begin(%v, compiler=\"acc\");\n"
                               "  %5 = nn.batch_norm(%0, %1, %2, %3, %4);\n"
                               "  %6 = annotation.compiler_end(%5, compiler=\"acc\");\n"
                               "  %7 = annotation.compiler_begin(%6, compiler=\"acc\");\n"
                               "  %8 = %7.0;\n"
                               "  %9 = nn.relu(%8);\n"
                               "  %10 = annotation.compiler_end(%9, compiler=\"acc\");\n"
                               "  %11 = %6.1;\n"
                               "  %12 = exp(%11);\n"
                               "  (%10, %12)\n"
                               "}\n");
    byocl_module *p = pu_clone(m);
    byocl_error err;
    if (byocl_pipeline_partition(p, NULL, &err) != BYOCL_OK)
        fail_msg("pipeline: %s", err.msg);
    pu_assert_prints(p,
                     HEADER
                     "def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: "
                     "Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) "
                     "-> (Tensor[(1, 2, 3, 3), float32], Tensor[(2), float32]) {\n"
                     "  %0 = @acc_main_0(%x, %g, %b, %m, %v);\n"
                     "  %1 = %0.0;\n"
                     "  %2 = %0.1;\n"
                     "  %3 = exp(%1);\n"
                     "  (%2, %3)\n"
                     "}\n"
                     "\n"
                     "def @acc_main_0(%acc_0_i0: Tensor[(1, 2, 3, 3), float32], %acc_0_i1: "
                     "Tensor[(2), float32], %acc_0_i2: Tensor[(2), float32], %acc_0_i3: "
                     "Tensor[(2), float32], %acc_0_i4: Tensor[(2), float32], Compiler=\"acc\", "
                     "Primitive=1, Inline=1, global_symbol=\"acc_main_0\") -> (Tensor[(2), "
                     "float32], Tensor[(1, 2, 3, 3), float32]) {\n"
                     "  %0 = nn.batch_norm(%acc_0_i0, %acc_0_i1, %acc_0_i2, %acc_0_i3, "
                     "%acc_0_i4);\n"
                     "  %1 = %0.1;\n"
                     "  %2 = %0.0;\n"
                     "  %3 = nn.relu(%2);\n"
                     "  (%1, %3)\n"
                     "}\n");
    pu_assert_round_trips(p);
    pu_assert_same_outputs(m, p, 7);
    byocl_module_free(p);
    byocl_module_free(m);
}

/* --------------------------------------------- resnet18 through the pipeline */

/* A test accelerator: convolutions, batch norms, relus and adds. Pools, the dense layer
 * and the flatten stay on the host, so ResNet-18 breaks into several regions. */
static bool testacc_supports(void *ctx, const byocl_function *fn, int node, char *why,
                             size_t why_len)
{
    (void)ctx;
    static const char *const ops[] = {"nn.conv2d", "nn.batch_norm", "nn.relu", "add"};
    const char *op = byocl_node_op(fn, node);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0)
            return true;
    snprintf(why, why_len, "%s is not supported", op);
    return false;
}

static void test_resnet18_pipeline(void **state)
{
    (void)state;
    byocl_target_i acc = {.name = "testacc", .api_version = BYOCL_TARGET_API_VERSION,
                          .supports = testacc_supports};
    byocl_error err;
    assert_int_equal(byocl_target_register(&acc, &err), BYOCL_OK);
    byocl_module *m = NULL;
    assert_int_equal(byocl_builtin_build("resnet18", &m, &err), BYOCL_OK);
    byocl_module *p = pu_clone(m);
    const char *targets[1] = {"testacc"};
    byocl_pipeline_options opt = {.targets = targets, .n_targets = 1};
    if (byocl_pipeline_partition(p, &opt, &err) != BYOCL_OK)
        fail_msg("pipeline: %s", err.msg);
    /* Every host node of @main is a pool, the flatten, the dense or the glue around
     * calls; the regions are functions of testacc. */
    const byocl_function *main_fn = byocl_module_find(p, "main");
    int n_calls = 0;
    for (int id = 0; id < byocl_function_num_nodes(main_fn); id++) {
        const char *op = byocl_node_op(main_fn, id);
        const char *callee = byocl_node_callee(main_fn, id);
        if (callee) {
            n_calls++;
            const byocl_function *f = byocl_module_find(p, callee);
            assert_string_equal(byocl_attrs_get_str(byocl_function_attrs(f), "Compiler", ""),
                                "testacc");
        } else if (op) {
            assert_true(strcmp(op, "nn.max_pool2d") == 0 ||
                        strcmp(op, "nn.global_avg_pool2d") == 0 ||
                        strcmp(op, "nn.batch_flatten") == 0 || strcmp(op, "nn.dense") == 0 ||
                        strcmp(op, "nn.bias_add") == 0);
        }
    }
    assert_int_equal(n_calls, byocl_module_num_functions(p) - 1);
    assert_true(n_calls >= 1);
    pu_assert_round_trips(p);
    pu_assert_same_outputs(m, p, 1);
    byocl_module_free(p);
    byocl_module_free(m);
    byocl_target_registry_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_multiple_and_duplicate_outputs),
        cmocka_unit_test(test_single_output_many_users),
        cmocka_unit_test(test_constants_at_the_boundary),
        cmocka_unit_test(test_tuples_at_the_boundary),
        cmocka_unit_test(test_several_regions_numbered),
        cmocka_unit_test(test_call_waits_for_late_input),
        cmocka_unit_test(test_dead_region_and_no_regions),
        cmocka_unit_test(test_refuses_bad_annotations),
        cmocka_unit_test(test_thread_vgg_blocks),
        cmocka_unit_test(test_thread_range),
        cmocka_unit_test(test_pipeline_errors_and_dumps),
        cmocka_unit_test(test_keep_regions_on_host),
        cmocka_unit_test(test_offload_profile_read),
        cmocka_unit_test(test_tvm_tuple_begin_and_default),
        cmocka_unit_test(test_tvm_tuple_end_batch_norm),
        cmocka_unit_test(test_tvm_tuple_end_of_tuple),
        cmocka_unit_test(test_tvm_tuple_across_targets),
        cmocka_unit_test(test_tvm_default_stays_on_host),
        cmocka_unit_test(test_one_parameter_per_producer),
        cmocka_unit_test(test_tvm_tuple_pair_merges),
        cmocka_unit_test(test_resnet18_pipeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
