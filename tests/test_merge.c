/* byocl_merge_regions: adjacent regions of one target merge, unless a path around the
 * pair (through host nodes or a region of another target) would make the merged region
 * depend on itself. Each case is checked by its exact printed result, by the annotations
 * still checking clean, and by partitioning before and after computing the same. */
#include "test_support.h"

#include "partition_util.h"

#define HEADER "#[version = \"0.0.5\"]\n"
#define SIG "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"

/* Merges `text`, asserts it prints as `want` (NULL: unchanged), that the annotations
 * still check, and that the merged and unmerged modules partition to the same results. */
static void assert_merges(const char *text, const char *want)
{
    byocl_module *m = pu_parse(text);
    byocl_module *unmerged = pu_clone(m);
    char *before = pu_print(m, false);
    byocl_error err;
    if (byocl_merge_regions(m, &err) != BYOCL_OK)
        fail_msg("merge_regions: %s", err.msg);
    pu_assert_prints(m, want ? want : before);
    free(before);
    assert_int_equal(byocl_check_annotations(m, false, &err), BYOCL_OK);
    assert_int_equal(byocl_partition(m, NULL, &err), BYOCL_OK);
    assert_int_equal(byocl_partition(unmerged, NULL, &err), BYOCL_OK);
    pu_assert_same_outputs(unmerged, m, 11);
    byocl_module_free(unmerged);
    byocl_module_free(m);
}

/* As annotate_target leaves two neighbouring calls of one target. */
static void test_adjacent_regions_merge(void **state)
{
    (void)state;
    assert_merges(HEADER SIG
                  "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                  "  %1 = nn.relu(%0);\n"
                  "  %2 = annotation.compiler_end(%1, compiler=\"acc\");\n"
                  "  %3 = annotation.compiler_begin(%2, compiler=\"acc\");\n"
                  "  %4 = abs(%3);\n"
                  "  annotation.compiler_end(%4, compiler=\"acc\")\n"
                  "}\n",
                  HEADER SIG
                  "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                  "  %1 = nn.relu(%0);\n"
                  "  %4 = abs(%1);\n"
                  "  annotation.compiler_end(%4, compiler=\"acc\")\n"
                  "}\n");
}

/* Region A feeds region B directly and through the host node %3: merged, A+B would
 * compute %3's input and need its result. Stays apart. */
static void test_diamond_through_host_stays_apart(void **state)
{
    (void)state;
    assert_merges(HEADER SIG
                  "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                  "  %1 = nn.relu(%0);\n"
                  "  %2 = annotation.compiler_end(%1, compiler=\"acc\");\n"
                  "  %3 = exp(%2);\n"
                  "  %4 = annotation.compiler_begin(%2, compiler=\"acc\");\n"
                  "  %5 = annotation.compiler_begin(%3, compiler=\"acc\");\n"
                  "  %6 = add(%4, %5);\n"
                  "  annotation.compiler_end(%6, compiler=\"acc\")\n"
                  "}\n",
                  NULL);
}

/* A region of another target in the middle of two regions of "a" (a -> b -> a, and
 * a -> a directly): the a-regions must not swallow it. */
static void test_other_target_inside_stays_apart(void **state)
{
    (void)state;
    assert_merges(HEADER SIG
                  "  %0 = annotation.compiler_begin(%x, compiler=\"a\");\n"
                  "  %1 = nn.relu(%0);\n"
                  "  %2 = annotation.compiler_end(%1, compiler=\"a\");\n"
                  "  %3 = annotation.compiler_begin(%2, compiler=\"b\");\n"
                  "  %4 = abs(%3);\n"
                  "  %5 = annotation.compiler_end(%4, compiler=\"b\");\n"
                  "  %6 = annotation.compiler_begin(%2, compiler=\"a\");\n"
                  "  %7 = annotation.compiler_begin(%5, compiler=\"a\");\n"
                  "  %8 = add(%6, %7);\n"
                  "  annotation.compiler_end(%8, compiler=\"a\")\n"
                  "}\n",
                  NULL);
}

/* Different targets next to each other never merge. */
static void test_different_targets_stay_apart(void **state)
{
    (void)state;
    assert_merges(HEADER SIG
                  "  %0 = annotation.compiler_begin(%x, compiler=\"a\");\n"
                  "  %1 = nn.relu(%0);\n"
                  "  %2 = annotation.compiler_end(%1, compiler=\"a\");\n"
                  "  %3 = annotation.compiler_begin(%2, compiler=\"b\");\n"
                  "  %4 = abs(%3);\n"
                  "  annotation.compiler_end(%4, compiler=\"b\")\n"
                  "}\n",
                  NULL);
}

/* A -> B -> C of one target, with A also feeding C through the host node exp: A and B
 * merge (exp does not come back into B), then A+B and C must not (exp would sit between
 * the merged region and itself). A's compiler_end stays: exp still uses it. */
static void test_chain_merges_until_a_cycle(void **state)
{
    (void)state;
    assert_merges(HEADER SIG
                  "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                  "  %1 = nn.relu(%0);\n"
                  "  %2 = annotation.compiler_end(%1, compiler=\"acc\");\n"
                  "  %3 = annotation.compiler_begin(%2, compiler=\"acc\");\n"
                  "  %4 = abs(%3);\n"
                  "  %5 = annotation.compiler_end(%4, compiler=\"acc\");\n"
                  "  %6 = exp(%2);\n"
                  "  %7 = annotation.compiler_begin(%5, compiler=\"acc\");\n"
                  "  %8 = annotation.compiler_begin(%6, compiler=\"acc\");\n"
                  "  %9 = add(%7, %8);\n"
                  "  annotation.compiler_end(%9, compiler=\"acc\")\n"
                  "}\n",
                  HEADER SIG
                  "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                  "  %1 = nn.relu(%0);\n"
                  "  %2 = annotation.compiler_end(%1, compiler=\"acc\");\n"
                  "  %4 = abs(%1);\n"
                  "  %5 = annotation.compiler_end(%4, compiler=\"acc\");\n"
                  "  %6 = exp(%2);\n"
                  "  %7 = annotation.compiler_begin(%5, compiler=\"acc\");\n"
                  "  %8 = annotation.compiler_begin(%6, compiler=\"acc\");\n"
                  "  %9 = add(%7, %8);\n"
                  "  annotation.compiler_end(%9, compiler=\"acc\")\n"
                  "}\n");
}

/* One compiler_end feeding two compiler_begins of the next region (and a diamond made
 * only of regions of one target): everything becomes one region. */
static void test_fan_out_merges_whole(void **state)
{
    (void)state;
    assert_merges(HEADER SIG
                  "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                  "  %1 = nn.relu(%0);\n"
                  "  %2 = annotation.compiler_end(%1, compiler=\"acc\");\n"
                  "  %3 = annotation.compiler_begin(%2, compiler=\"acc\");\n"
                  "  %4 = abs(%3);\n"
                  "  %5 = annotation.compiler_end(%4, compiler=\"acc\");\n"
                  "  %6 = annotation.compiler_begin(%2, compiler=\"acc\");\n"
                  "  %7 = annotation.compiler_begin(%5, compiler=\"acc\");\n"
                  "  %8 = multiply(%6, %7);\n"
                  "  annotation.compiler_end(%8, compiler=\"acc\")\n"
                  "}\n",
                  HEADER SIG
                  "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                  "  %1 = nn.relu(%0);\n"
                  "  %4 = abs(%1);\n"
                  "  %8 = multiply(%1, %4);\n"
                  "  annotation.compiler_end(%8, compiler=\"acc\")\n"
                  "}\n");
}

/* Nothing to merge leaves the module alone; bad annotations are refused as check_annotations
 * refuses them. */
static void test_nothing_to_merge_and_errors(void **state)
{
    (void)state;
    byocl_module *m = NULL;
    byocl_error err;
    assert_int_equal(byocl_builtin_build("seed", &m, &err), BYOCL_OK);
    char *before = pu_print(m, true);
    assert_int_equal(byocl_merge_regions(m, &err), BYOCL_OK);
    char *after = pu_print(m, true);
    assert_string_equal(after, before);
    free(before);
    free(after);
    byocl_module_free(m);

    m = pu_parse(HEADER SIG
                 "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
                 "  %1 = add(%0, %x);\n"
                 "  annotation.compiler_end(%1, compiler=\"acc\")\n"
                 "}\n");
    PU_ASSERT_ERROR(byocl_merge_regions(m, &err), err, BYOCL_ERR_INVALID,
                    "in @main, %1 (add) at 4:8: argument 1 (%x, a parameter) comes from outside "
                    "region 0 (acc) without annotation.compiler_begin; hint: annotate every "
                    "value that flows into a region (or run `byocl partition --complete`)");
    byocl_module_free(m);
    m = byocl_module_new();
    PU_ASSERT_ERROR(byocl_merge_regions(m, &err), err, BYOCL_ERR_NOT_FOUND,
                    "no function @main in the module");
    byocl_module_free(m);
    PU_ASSERT_ERROR(byocl_merge_regions(NULL, &err), err, BYOCL_ERR_INVALID,
                    "byocl_merge_regions: no module");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adjacent_regions_merge),
        cmocka_unit_test(test_diamond_through_host_stays_apart),
        cmocka_unit_test(test_other_target_inside_stays_apart),
        cmocka_unit_test(test_different_targets_stay_apart),
        cmocka_unit_test(test_chain_merges_until_a_cycle),
        cmocka_unit_test(test_fan_out_merges_whole),
        cmocka_unit_test(test_nothing_to_merge_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
