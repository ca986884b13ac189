/* byocl_dot: exact Graphviz text of small modules (plain, partitioned with a nested call,
 * annotated, wrongly annotated), stable target colors, the atomic save, and (when Graphviz
 * is installed) that `dot` accepts the graphs of the built-in models. */
#include "test_support.h"

#include "byocl/dot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FMT(buf, ...) assert_true(snprintf((buf), sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

static void expect_dot(const char *relay, const char *want)
{
    byocl_module *m = ts_parse_typed(relay);
    byocl_error err;
    char *got = byocl_dot(m, &err);
    if (!got)
        fail_msg("%s", err.msg);
    assert_string_equal(got, want);
    free(got);
    byocl_module_free(m);
}

/* Parameters, a constant (not drawn), a tuple and its item, a named binding, and the
 * result printed inline. */
static const char plain_relay[] = "#[version = \"0.0.5\"]\n"
                                  "def @main(%x: Tensor[(1, 4), float32], %y: Tensor[(1, 4), float32]) {\n"
                                  "  %0 = add(%x, 1f);\n"
                                  "  %1 = (%0, %y);\n"
                                  "  %2 = %1.1;\n"
                                  "  %x0 = multiply(%2, %0);\n"
                                  "  %3 = concatenate(%1, axis=1);\n"
                                  "  (%x0, %3)\n"
                                  "}\n";

static const char plain_dot[] =
    "digraph \"main\" {\n"
    "  node [shape=box, style=filled, fillcolor=white, fontname=\"monospace\", fontsize=10];\n"
    "  graph [fontname=\"monospace\", fontsize=10];\n"
    "  n0 [label=\"%x\\nTensor[(1, 4), float32]\", shape=ellipse];\n"
    "  n1 [label=\"%y\\nTensor[(1, 4), float32]\", shape=ellipse];\n"
    "  n3 [label=\"%0 = add\\nTensor[(1, 4), float32]\"];\n"
    "  n4 [label=\"%1 = Tuple\\n(Tensor[(1, 4), float32], Tensor[(1, 4), float32])\"];\n"
    "  n5 [label=\"%2 = %1.1\\nTensor[(1, 4), float32]\"];\n"
    "  n6 [label=\"%x0 = multiply\\nTensor[(1, 4), float32]\"];\n"
    "  n7 [label=\"%3 = concatenate\\nTensor[(1, 8), float32]\"];\n"
    "  n8 [label=\"result = Tuple\\n(Tensor[(1, 4), float32], Tensor[(1, 8), float32])\"];\n"
    "  n0 -> n3;\n"
    "  n3 -> n4;\n"
    "  n1 -> n4;\n"
    "  n4 -> n5;\n"
    "  n5 -> n6;\n"
    "  n3 -> n6;\n"
    "  n4 -> n7;\n"
    "  n6 -> n8;\n"
    "  n7 -> n8;\n"
    "}\n";

static void test_plain(void **state)
{
    (void)state;
    expect_dot(plain_relay, plain_dot);
}

/* A partitioned module: the call of @r0 is a cluster in the color of its target ("acc"),
 * holding @r0's parameter and nodes; @r0's call of @inner (no Compiler) is a dashed
 * cluster inside it. The caller's argument points at the callee's parameter, and the
 * items of the call read the callee's result. */
static const char partitioned_relay[] =
    "#[version = \"0.0.5\"]\n"
    "def @inner(%a: Tensor[(1, 4), float32]) {\n"
    "  exp(%a)\n"
    "}\n"
    "def @r0(%r0_i0: Tensor[(1, 4), float32], Compiler=\"acc\", global_symbol=\"acc_main_0\", "
    "Primitive=1, Inline=1) {\n"
    "  %0 = nn.relu(%r0_i0);\n"
    "  (%0, @inner(%0))\n"
    "}\n"
    "def @main(%x: Tensor[(1, 4), float32]) {\n"
    "  %0 = @r0(%x);\n"
    "  %1 = %0.0;\n"
    "  %2 = %0.1;\n"
    "  add(%1, %2)\n"
    "}\n";

static const char partitioned_dot[] =
    "digraph \"main\" {\n"
    "  node [shape=box, style=filled, fillcolor=white, fontname=\"monospace\", fontsize=10];\n"
    "  graph [fontname=\"monospace\", fontsize=10];\n"
    "  n0 [label=\"%x\\nTensor[(1, 4), float32]\", shape=ellipse];\n"
    "  subgraph \"cluster_n1\" {\n"
    "    label=\"%0 = @r0 (acc)\";\n"
    "    style=filled;\n"
    "    fillcolor=\"#bebada\";\n"
    "    n1_n0 [label=\"%r0_i0\\nTensor[(1, 4), float32]\", shape=ellipse];\n"
    "    n1_n1 [label=\"%0 = nn.relu\\nTensor[(1, 4), float32]\"];\n"
    "    subgraph \"cluster_n1_n2\" {\n"
    "      label=\"%1 = @inner\";\n"
    "      style=dashed;\n"
    "      n1_n2_n0 [label=\"%a\\nTensor[(1, 4), float32]\", shape=ellipse];\n"
    "      n1_n2_n1 [label=\"result = exp\\nTensor[(1, 4), float32]\"];\n"
    "    }\n"
    "    n1_n3 [label=\"result = Tuple\\n(Tensor[(1, 4), float32], Tensor[(1, 4), float32])\"];\n"
    "  }\n"
    "  n2 [label=\"%1 = %0.0\\nTensor[(1, 4), float32]\"];\n"
    "  n3 [label=\"%2 = %0.1\\nTensor[(1, 4), float32]\"];\n"
    "  n4 [label=\"result = add\\nTensor[(1, 4), float32]\"];\n"
    "  n0 -> n1_n0;\n"
    "  n1_n0 -> n1_n1;\n"
    "  n1_n1 -> n1_n2_n0;\n"
    "  n1_n2_n0 -> n1_n2_n1;\n"
    "  n1_n1 -> n1_n3;\n"
    "  n1_n2_n1 -> n1_n3;\n"
    "  n1_n3 -> n2;\n"
    "  n1_n3 -> n3;\n"
    "  n2 -> n4;\n"
    "  n3 -> n4;\n"
    "}\n";

static void test_partitioned(void **state)
{
    (void)state;
    expect_dot(partitioned_relay, partitioned_dot);
}

/* An annotated module: the region between compiler_begin and compiler_end is a cluster. */
static const char annotated_relay[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 4), float32]) {\n"
    "  %0 = annotation.compiler_begin(%x, compiler=\"acc\");\n"
    "  %1 = nn.relu(%0);\n"
    "  %2 = annotation.compiler_end(%1, compiler=\"acc\");\n"
    "  abs(%2)\n"
    "}\n";

static const char annotated_dot[] =
    "digraph \"main\" {\n"
    "  node [shape=box, style=filled, fillcolor=white, fontname=\"monospace\", fontsize=10];\n"
    "  graph [fontname=\"monospace\", fontsize=10];\n"
    "  n0 [label=\"%x\\nTensor[(1, 4), float32]\", shape=ellipse];\n"
    "  n4 [label=\"result = abs\\nTensor[(1, 4), float32]\"];\n"
    "  subgraph \"cluster_region0\" {\n"
    "    label=\"region 0: acc\";\n"
    "    style=filled;\n"
    "    fillcolor=\"#bebada\";\n"
    "    n1 [label=\"%0 = annotation.compiler_begin\\nTensor[(1, 4), float32]\"];\n"
    "    n2 [label=\"%1 = nn.relu\\nTensor[(1, 4), float32]\"];\n"
    "    n3 [label=\"%2 = annotation.compiler_end\\nTensor[(1, 4), float32]\"];\n"
    "  }\n"
    "  n0 -> n1;\n"
    "  n1 -> n2;\n"
    "  n2 -> n3;\n"
    "  n3 -> n4;\n"
    "}\n";

static void test_annotated(void **state)
{
    (void)state;
    expect_dot(annotated_relay, annotated_dot);
}

/* Annotations the region analysis rejects: the graph is still drawn, without regions, and
 * a comment says why. */
static void test_bad_annotations_still_drawn(void **state)
{
    (void)state;
    byocl_module *m = ts_parse_typed("#[version = \"0.0.5\"]\n"
                            "def @main(%x: Tensor[(1, 4), float32]) {\n"
                            "  %0 = annotation.compiler_end(%x, compiler=\"acc\");\n"
                            "  abs(%0)\n"
                            "}\n");
    char *got = byocl_dot(m, NULL);
    assert_non_null(got);
    assert_true(strncmp(got, "digraph \"main\" {\n  // regions not drawn: in @main, %0 "
                             "(annotation.compiler_end)",
                        71) == 0);
    assert_null(strstr(got, "cluster"));
    ts_assert_contains(got, "  n1 [label=\"%0 = annotation.compiler_end\\nTensor[(1, 4), "
                            "float32]\"];\n  n2 [label=\"result = abs\\nTensor[(1, 4), "
                            "float32]\"];\n  n0 -> n1;\n  n1 -> n2;\n}\n");
    free(got);
    byocl_module_free(m);
}

/* FNV-1a (32 bits) of the name picks one of 8 colors: "opencl" hashes to 0xf4ec31f6
 * (index 6), "acc" to 0x424a669a (index 2), "" to 0x811c9dc5 (index 5). */
static void test_target_colors(void **state)
{
    (void)state;
    assert_string_equal(byocl_dot_target_color("opencl"), "#b3de69");
    assert_string_equal(byocl_dot_target_color("acc"), "#bebada");
    assert_string_equal(byocl_dot_target_color(""), "#fdb462");
    assert_string_equal(byocl_dot_target_color(NULL), "#fdb462");
}

static void test_save_and_errors(void **state)
{
    (void)state;
    const char *tmp = ts_tmpdir("dot-save");
    char dir[4200], path[4300];
    FMT(dir, "%s", tmp);
    byocl_module *m = ts_parse_typed(plain_relay);
    byocl_error err;
    FMT(path, "%s/plain.dot", dir);
    assert_int_equal(byocl_dot_save(m, path, &err), BYOCL_OK);
    char *text = ts_read_file(path, NULL);
    assert_string_equal(text, plain_dot);
    free(text);
    /* A missing directory: an error, and no file. */
    FMT(path, "%s/missing/plain.dot", dir);
    assert_int_equal(byocl_dot_save(m, path, &err), BYOCL_ERR_IO);
    ts_assert_contains(err.msg, path);
    FMT(path, "%s/missing", dir);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(byocl_dot_save(m, NULL, &err), BYOCL_ERR_INVALID);
    byocl_module_free(m);

    byocl_module *empty = byocl_module_new();
    assert_null(byocl_dot(empty, &err));
    assert_string_equal(err.msg, "the module has no @main to draw");
    assert_null(byocl_dot(NULL, &err));
    FMT(path, "%s/empty.dot", dir);
    assert_int_equal(byocl_dot_save(empty, path, &err), BYOCL_ERR_NOT_FOUND);
    assert_int_equal(access(path, F_OK), -1);
    byocl_module_free(empty);
    ts_remove_tree(dir);
}

/* Graphviz reads what byocl writes (skipped where Graphviz is not installed). */
static void test_graphviz_accepts(void **state)
{
    (void)state;
    if (system("command -v dot >/dev/null 2>&1") != 0)
        skip();
    const char *tmp = ts_tmpdir("dot-graphviz");
    char dir[4200], path[4300], cmd[9000];
    FMT(dir, "%s", tmp);
    const char *specs[] = {"builtin:seed", "builtin:resnet18", "builtin:mobilenet_v2"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        byocl_module *m = NULL;
        byocl_error err;
        assert_int_equal(byocl_load_model(specs[i], NULL, &m, &err), BYOCL_OK);
        FMT(path, "%s/%zu.dot", dir, i);
        assert_int_equal(byocl_dot_save(m, path, &err), BYOCL_OK);
        FMT(cmd, "dot -Tsvg '%s' -o '%s.svg'", path, path);
        assert_int_equal(system(cmd), 0);
        byocl_module_free(m);
    }
    const char *texts[] = {plain_relay, partitioned_relay, annotated_relay};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        byocl_module *m = ts_parse_typed(texts[i]);
        byocl_error err;
        FMT(path, "%s/text%zu.dot", dir, i);
        assert_int_equal(byocl_dot_save(m, path, &err), BYOCL_OK);
        FMT(cmd, "dot -Tsvg '%s' -o '%s.svg'", path, path);
        assert_int_equal(system(cmd), 0);
        byocl_module_free(m);
    }
    ts_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_partitioned),
        cmocka_unit_test(test_annotated),
        cmocka_unit_test(test_bad_annotations_still_drawn),
        cmocka_unit_test(test_target_colors),
        cmocka_unit_test(test_save_and_errors),
        cmocka_unit_test(test_graphviz_accepts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
