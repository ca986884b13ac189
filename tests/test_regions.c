/* Region analysis (codegen/passes/regions.c) and byocl_check_annotations: which node
 * belongs to which region, every error a wrong annotation gets (exact messages), and
 * --complete inserting what hand annotations lack. */
#include "test_support.h"

#include "partition_util.h"
#include "passes/regions.h"

static byocl_module *load_fixture(const char *name)
{
    byocl_module *m = NULL;
    byocl_error err;
    if (byocl_text_parse_file(ts_fixture(name), NULL, &m, &err) != BYOCL_OK ||
        byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("%s: %s", name, err.msg);
    return m;
}

static byocl_module *seed(void)
{
    byocl_module *m = NULL;
    assert_int_equal(byocl_builtin_build("seed", &m, NULL), BYOCL_OK);
    return m;
}

/* Asserts region_of for @main's printed numbers 0..n-1. */
static void assert_regions_by_number(const byocl_module *m, const byocl_regions *r,
                                     const int *want, int n)
{
    for (int number = 0; number < n; number++) {
        int got = r->region_of[pu_node(m, number)];
        if (got != want[number])
            fail_msg("%%%d: region %d, wanted %d", number, got, want[number]);
    }
}

/* Runs the strict analysis on a text that must fail; checks the exact message. */
static void assert_analysis_fails(const char *text, const char *want)
{
    byocl_module *m = pu_parse(text);
    byocl_regions r;
    byocl_error err;
    PU_ASSERT_ERROR(pass_regions_analyze(byocl_module_find(m, "main"), &r, &err), err,
                    BYOCL_ERR_INVALID, want);
    /* check_annotations reports the same. */
    PU_ASSERT_ERROR(byocl_check_annotations(m, false, &err), err, BYOCL_ERR_INVALID, want);
    byocl_module_free(m);
}

/* A text the analysis accepts but check_annotations refuses with `want`. */
static void assert_check_fails(const char *text, const char *want)
{
    byocl_module *m = pu_parse(text);
    byocl_regions r;
    byocl_error err;
    assert_int_equal(pass_regions_analyze(byocl_module_find(m, "main"), &r, &err), BYOCL_OK);
    pass_regions_release(&r);
    PU_ASSERT_ERROR(byocl_check_annotations(m, false, &err), err, BYOCL_ERR_INVALID, want);
    PU_ASSERT_ERROR(byocl_check_annotations(m, true, &err), err, BYOCL_ERR_INVALID, want);
    byocl_module_free(m);
}

/* ------------------------------------------------------------- analysis */

static void test_seed_regions(void **state)
{
    (void)state;
    byocl_module *m = seed();
    const byocl_function *fn = byocl_module_find(m, "main");
    byocl_regions r;
    byocl_error err;
    assert_int_equal(pass_regions_analyze(fn, &r, &err), BYOCL_OK);
    assert_int_equal(r.n_regions, 1);
    assert_string_equal(r.target[0], "opencl");
    /* %1 add and the two abs are on the host; everything else, annotations included, in
     * region 0. */
    static const int want[18] = {0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0, -1};
    assert_regions_by_number(m, &r, want, 18);
    assert_int_equal(r.region_of[byocl_function_body(fn)], -1); /* the result tuple */
    assert_int_equal(r.region_of[byocl_function_param(fn, 0)], -1);
    static const int begins[6] = {0, 2, 4, 5, 6, 7}, ends[3] = {11, 13, 16};
    assert_int_equal(r.n_inputs[0], 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(r.inputs[0][i], pu_node(m, begins[i]));
    assert_int_equal(r.n_outputs[0], 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(r.outputs[0][i], pu_node(m, ends[i]));
    assert_int_equal(r.n_gaps, 0);
    assert_int_equal(pass_regions_check_convex(fn, &r, &err), BYOCL_OK);
    pass_regions_release(&r);
    assert_int_equal(byocl_check_annotations(m, false, &err), BYOCL_OK);
    byocl_module_free(m);
}

/* Two compiler_begins start two regions; a node using both joins them into one. Regions
 * are numbered in order of first appearance; a constant needs no compiler_begin. */
static void test_regions_join_and_number(void **state)
{
    (void)state;
    byocl_module *m = pu_parse(
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {\n"
        "  %0 = annotation.compiler_begin(%x, compiler=\"b\");\n"
        "  %1 = abs(%0);\n"
        "  %2 = annotation.compiler_end(%1, compiler=\"b\");\n"
        "  %3 = annotation.compiler_begin(%x, compiler=\"a\");\n"
        "  %4 = nn.relu(%3);\n"
        "  %5 = annotation.compiler_begin(%y, compiler=\"a\");\n"
        "  %6 = add(%5, 1f);\n"
        "  %7 = multiply(%4, %6);\n"
        "  %8 = annotation.compiler_end(%7, compiler=\"a\");\n"
        "  %9 = add(%2, %8);\n"
        "  %9\n"
        "}\n");
    byocl_regions r;
    byocl_error err;
    assert_int_equal(pass_regions_analyze(byocl_module_find(m, "main"), &r, &err), BYOCL_OK);
    assert_int_equal(r.n_regions, 2);
    assert_string_equal(r.target[0], "b");
    assert_string_equal(r.target[1], "a");
    static const int want[9] = {0, 0, 0, 1, 1, 1, 1, 1, 1};
    assert_regions_by_number(m, &r, want, 9);
    assert_int_equal(r.region_of[byocl_function_body(byocl_module_find(m, "main"))], -1);
    assert_int_equal(r.n_inputs[1], 2);
    assert_int_equal(r.n_outputs[1], 1);
    pass_regions_release(&r);
    byocl_module_free(m);
}

/* --------------------------------------------------------------- errors */

/* The thread's "Arg regions are inconsistent": %78 = nn.conv2d(%76, %77), %77 a cast of an
 * unannotated parameter, named as the file names them, at the file's positions. */
static void test_thread_inconsistent_args(void **state)
{
    (void)state;
    byocl_module *m = load_fixture("text/vgg_block.relay");
    byocl_error err;
    PU_ASSERT_ERROR(
        byocl_check_annotations(m, false, &err), err, BYOCL_ERR_INVALID,
        "in @main, %78 (nn.conv2d) at 9:9: argument 1 (%77, cast at 8:9) comes from outside "
        "region 0 (ccompiler) without annotation.compiler_begin; hint: annotate every value "
        "that flows into a region (or run `byocl partition --complete`)");
    byocl_module_free(m);
}

static void test_parameter_without_begin(void **state)
{
    (void)state;
    assert_analysis_fails(
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {\n"
        "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
        "  %1 = add(%0, %y);\n"
        "  annotation.compiler_end(%1, compiler=\"acc\")\n"
        "}\n",
        "in @main, %1 (add) at 4:8: argument 1 (%y, a parameter) comes from outside region 0 "
        "(acc) without annotation.compiler_begin; hint: annotate every value that flows into "
        "a region (or run `byocl partition --complete`)");
}

static void test_end_outside_region(void **state)
{
    (void)state;
    assert_analysis_fails(
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(4), float32]) {\n"
        "  %0 = abs(%x);\n"
        "  annotation.compiler_end(%0, compiler=\"acc\")\n"
        "}\n",
        "in @main, the result (annotation.compiler_end) at 4:3: its argument (%0, abs at 3:8) "
        "is not inside any region; hint: a compiler_end closes a value computed in a region: "
        "give the region's inputs annotation.compiler_begin, or remove this compiler_end");
}

static void test_mismatched_compilers(void **state)
{
    (void)state;
    assert_analysis_fails(
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(4), float32]) {\n"
        "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
        "  %1 = nn.relu(%0);\n"
        "  %2 = annotation.compiler_end(%1, compiler=\"other\");\n"
        "  abs(%2)\n"
        "}\n",
        "in @main, %2 (annotation.compiler_end) at 5:8: compiler=\"other\" does not match the "
        "region of its argument (%1, nn.relu at 4:8), region 0 (acc); hint: a region's "
        "compiler_begin and compiler_end name the same compiler");
}

static void test_begin_inside_region(void **state)
{
    (void)state;
    assert_analysis_fails(
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(4), float32]) {\n"
        "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
        "  %1 = nn.relu(%0);\n"
        "  %2 = annotation.compiler_begin(%1, compiler=\"acc\");\n"
        "  %3 = abs(%2);\n"
        "  annotation.compiler_end(%3, compiler=\"acc\")\n"
        "}\n",
        "in @main, %2 (annotation.compiler_begin) at 5:8: its argument (%1, nn.relu at 4:8) is "
        "already inside region 0 (acc); hint: a value enters a region once: remove this "
        "compiler_begin, or close the region first with annotation.compiler_end");
}

/* The compiler becomes part of function and parameter names. */
static void test_bad_compiler_name(void **state)
{
    (void)state;
    assert_analysis_fails(
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(4), float32]) {\n"
        "  %0 = annotation.compiler_begin(%x, compiler=\"my-acc\");\n"
        "  %1 = nn.relu(%0);\n"
        "  annotation.compiler_end(%1, compiler=\"my-acc\")\n"
        "}\n",
        "in @main, %0 (annotation.compiler_begin) at 3:8: bad target name \"my-acc\": '-' at "
        "position 2; a target name has letters, digits and '_' only");
}

static void test_node_joining_two_compilers(void **state)
{
    (void)state;
    assert_analysis_fails(
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(4), float32]) {\n"
        "  %0 = annotation.compiler_begin(%x, compiler=\"a\");\n"
        "  %1 = annotation.compiler_begin(%x, compiler=\"b\");\n"
        "  %2 = add(%0, %1);\n"
        "  annotation.compiler_end(%2, compiler=\"a\")\n"
        "}\n",
        "in @main, %2 (add) at 5:8: argument 0 (%0, annotation.compiler_begin at 3:8) is inside "
        "region 0 (a) but argument 1 (%1, annotation.compiler_begin at 4:8) is inside region 1 "
        "(b); hint: a node belongs to one region: pass one of them through "
        "annotation.compiler_end and annotation.compiler_begin");
}

static void test_result_leaves_region(void **state)
{
    (void)state;
    assert_analysis_fails(
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(4), float32]) {\n"
        "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
        "  nn.relu(%0)\n"
        "}\n",
        "in @main, the result (nn.relu) at 4:3: it leaves region 0 (acc) without "
        "annotation.compiler_end; hint: annotate every value that flows out of a region with "
        "annotation.compiler_end (or run `byocl partition --complete`)");
    assert_analysis_fails(
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(4), float32]) {\n"
        "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
        "  %1 = nn.relu(%0);\n"
        "  (%x, %1)\n"
        "}\n",
        "in @main, the result at 5:3: field 1 (%1, nn.relu at 4:8) leaves region 0 (acc) "
        "without annotation.compiler_end; hint: annotate every value that flows out of a "
        "region with annotation.compiler_end (or run `byocl partition --complete`)");
}

/* A region that feeds a host node whose result comes back into it: the analysis accepts
 * it, the check does not. */
static void test_not_convex(void **state)
{
    (void)state;
    assert_check_fails(
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(4), float32]) {\n"
        "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
        "  %1 = nn.relu(%0);\n"
        "  %2 = annotation.compiler_end(%1, compiler=\"acc\");\n"
        "  %3 = abs(%2);\n"
        "  %4 = annotation.compiler_begin(%3, compiler=\"acc\");\n"
        "  %5 = add(%1, %4);\n"
        "  annotation.compiler_end(%5, compiler=\"acc\")\n"
        "}\n",
        "in @main: region 0 (acc) is not convex: the path %1 (nn.relu) -> %2 "
        "(annotation.compiler_end) -> %3 (abs) -> %4 (annotation.compiler_begin) leaves it and "
        "comes back, so the partitioned region would depend on itself; hint: bring the nodes "
        "of that path into the region, or make the part after it a region of its own");
}

/* ------------------------------------------------------------- complete */

static void test_lenient_records_gaps(void **state)
{
    (void)state;
    byocl_module *m = load_fixture("text/vgg_block.relay");
    byocl_regions r;
    byocl_error err;
    assert_int_equal(pass_regions_analyze_lenient(byocl_module_find(m, "main"), &r, &err),
                     BYOCL_OK);
    assert_int_equal(r.n_regions, 1);
    assert_int_equal(r.n_gaps, 2);
    assert_int_equal(r.gaps[0].node, pu_node(m, 78)); /* conv2d, argument 1: the cast %77 */
    assert_int_equal(r.gaps[0].arg, 1);
    assert_false(r.gaps[0].end);
    assert_int_equal(r.gaps[1].node, pu_node(m, 80)); /* bias_add, argument 1: the cast %79 */
    assert_int_equal(r.gaps[1].arg, 1);
    assert_int_equal(r.gaps[1].region, 0);
    pass_regions_release(&r);
    byocl_module_free(m);
}

/* --complete on the thread's block: each cast gets its compiler_begin. */
static void test_complete_thread_block(void **state)
{
    (void)state;
    byocl_module *m = load_fixture("text/vgg_block.relay");
    byocl_error err;
    assert_int_equal(byocl_check_annotations(m, true, &err), BYOCL_OK);
    pu_assert_prints(
        m,
        "#[version = \"0.0.5\"]\n"
        "def @main(%74: Tensor[(1, 512, 14, 14), float16], "
        "%block5_conv3/convolution/ReadVariableOp:0: Tensor[(512, 512, 3, 3), float32], "
        "%block5_conv3/BiasAdd/ReadVariableOp:0: Tensor[(512), float32]) -> "
        "Tensor[(1, 512, 14, 14), float16] {\n"
        "  %0 = annotation.compiler_begin(%74, compiler=\"ccompiler\");\n"
        "  %1 = nn.relu(%0);\n"
        "  %2 = cast(%block5_conv3/convolution/ReadVariableOp:0, dtype=\"float16\");\n"
        "  %3 = annotation.compiler_begin(%2, compiler=\"ccompiler\");\n"
        "  %4 = nn.conv2d(%1, %3, padding=[1, 1, 1, 1], channels=512, kernel_size=[3, 3], "
        "out_dtype=\"float16\");\n"
        "  %5 = cast(%block5_conv3/BiasAdd/ReadVariableOp:0, dtype=\"float16\");\n"
        "  %6 = annotation.compiler_begin(%5, compiler=\"ccompiler\");\n"
        "  %7 = nn.bias_add(%4, %6);\n"
        "  %8 = nn.relu(%7);\n"
        "  annotation.compiler_end(%8, compiler=\"ccompiler\")\n"
        "}\n");
    /* Now it checks clean. */
    assert_int_equal(byocl_check_annotations(m, false, &err), BYOCL_OK);
    byocl_module_free(m);
}

/* One compiler_begin per outside value and region, shared by its users; the result's
 * leaks get compiler_ends. */
static void test_complete_shares_and_ends(void **state)
{
    (void)state;
    byocl_module *m = pu_parse("#[version = \"0.0.5\"]\n"
                               "def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {\n"
                               "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                               "  %1 = add(%0, %y);\n"
                               "  %2 = multiply(%1, %y);\n"
                               "  %3 = nn.relu(%2);\n"
                               "  (%3, %1)\n"
                               "}\n");
    byocl_module *original = pu_clone(m);
    byocl_error err;
    assert_int_equal(byocl_check_annotations(m, true, &err), BYOCL_OK);
    pu_assert_prints(m, "#[version = \"0.0.5\"]\n"
                        "def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) -> "
                        "(Tensor[(4), float32], Tensor[(4), float32]) {\n"
                        "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                        "  %1 = annotation.compiler_begin(%y, compiler=\"acc\");\n"
                        "  %2 = add(%0, %1);\n"
                        "  %3 = multiply(%2, %1);\n"
                        "  %4 = nn.relu(%3);\n"
                        "  %5 = annotation.compiler_end(%4, compiler=\"acc\");\n"
                        "  %6 = annotation.compiler_end(%2, compiler=\"acc\");\n"
                        "  (%5, %6)\n"
                        "}\n");
    pu_assert_same_outputs(original, m, 7);
    byocl_module_free(original);
    byocl_module_free(m);
}

/* --complete does not paper over the other errors. */
static void test_complete_keeps_other_errors(void **state)
{
    (void)state;
    byocl_module *m = pu_parse("#[version = \"0.0.5\"]\n"
                               "def @main(%x: Tensor[(4), float32]) {\n"
                               "  %0 = abs(%x);\n"
                               "  annotation.compiler_end(%0, compiler=\"acc\")\n"
                               "}\n");
    char *before = pu_print(m, true);
    byocl_error err;
    assert_int_equal(byocl_check_annotations(m, true, &err), BYOCL_ERR_INVALID);
    ts_assert_contains(err.msg, "is not inside any region");
    char *after = pu_print(m, true);
    assert_string_equal(after, before); /* left as it was */
    free(before);
    free(after);
    byocl_module_free(m);
}

static void test_missing_main(void **state)
{
    (void)state;
    byocl_module *m = byocl_module_new();
    byocl_error err;
    PU_ASSERT_ERROR(byocl_check_annotations(m, false, &err), err, BYOCL_ERR_NOT_FOUND,
                    "no function @main in the module");
    byocl_module_free(m);
    PU_ASSERT_ERROR(byocl_check_annotations(NULL, true, &err), err, BYOCL_ERR_INVALID,
                    "byocl_check_annotations: no module");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_regions),
        cmocka_unit_test(test_regions_join_and_number),
        cmocka_unit_test(test_thread_inconsistent_args),
        cmocka_unit_test(test_parameter_without_begin),
        cmocka_unit_test(test_end_outside_region),
        cmocka_unit_test(test_mismatched_compilers),
        cmocka_unit_test(test_begin_inside_region),
        cmocka_unit_test(test_bad_compiler_name),
        cmocka_unit_test(test_node_joining_two_compilers),
        cmocka_unit_test(test_result_leaves_region),
        cmocka_unit_test(test_not_convex),
        cmocka_unit_test(test_lenient_records_gaps),
        cmocka_unit_test(test_complete_thread_block),
        cmocka_unit_test(test_complete_shares_and_ends),
        cmocka_unit_test(test_complete_keeps_other_errors),
        cmocka_unit_test(test_missing_main),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
