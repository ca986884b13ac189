/* Text format: TVM Relay text parsed and printed (codegen/text/). The forum thread's two
 * graphs, a TVM-printed ResNet-18, round trips, literals, numbering, errors with positions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

/* ---------------------------------------------------------------- helpers */

static byocl_module *parse_ok_meta(const char *text, const byocl_params *meta)
{
    byocl_module *m = NULL;
    byocl_error err;
    byocl_status st = byocl_text_parse(text, strlen(text), "t.relay", meta, &m, &err);
    if (st != BYOCL_OK)
        fail_msg("parse failed: %s", err.msg);
    assert_non_null(m);
    return m;
}

static byocl_module *parse_ok(const char *text) { return parse_ok_meta(text, NULL); }

static byocl_module *parse_fixture(const char *name)
{
    byocl_module *m = NULL;
    byocl_error err;
    if (byocl_text_parse_file(ts_fixture(name), NULL, &m, &err) != BYOCL_OK)
        fail_msg("parse of %s failed: %s", name, err.msg);
    return m;
}

static void infer_ok(byocl_module *m)
{
    byocl_error err;
    if (byocl_infer_types(m, &err) != BYOCL_OK)
        fail_msg("infer_types failed: %s", err.msg);
}

/* Parses `text` (named t.relay), expecting failure with `status`; returns the message. */
static const char *parse_err_meta(const char *text, const byocl_params *meta, byocl_status status)
{
    static byocl_error err;
    byocl_module *m = (byocl_module *)0x1;
    byocl_status st = byocl_text_parse(text, strlen(text), "t.relay", meta, &m, &err);
    if (st == BYOCL_OK) {
        byocl_module_free(m);
        fail_msg("parse of <<%s>> succeeded", text);
    }
    assert_null(m);
    assert_int_equal(st, status);
    assert_int_equal(err.status, status);
    return err.msg;
}

static const char *parse_err(const char *text, byocl_status status)
{
    return parse_err_meta(text, NULL, status);
}

static char *print_module(const byocl_module *m, bool show_types)
{
    byocl_print_options opt = {.show_types = show_types};
    byocl_error err;
    char *text = byocl_text_print(m, &opt, NULL, &err);
    if (!text)
        fail_msg("print failed: %s", err.msg);
    return text;
}

/* Parse, print, parse the print, print again: both prints must be identical. Returns the
 * first print (caller frees). */
static char *assert_round_trip(const char *text, const byocl_params *meta, bool show_types)
{
    byocl_module *m = parse_ok_meta(text, meta);
    if (show_types)
        infer_ok(m);
    char *first = print_module(m, show_types);
    byocl_module *again = parse_ok_meta(first, meta);
    if (show_types)
        infer_ok(again);
    char *second = print_module(again, show_types);
    assert_string_equal(first, second);
    free(second);
    byocl_module_free(again);
    byocl_module_free(m);
    return first;
}

static const char *type_str(const byocl_type *t)
{
    static char buf[1024];
    return byocl_type_str(t, buf, sizeof buf);
}

/* Type of the node printed as %N. */
static const char *type_of(const byocl_function *fn, int number)
{
    int id = byocl_text_node_by_number(fn, number);
    assert_true(id >= 0);
    return type_str(byocl_node_type(fn, id));
}

/* Removes every block comment from the `def` line (TVM repeats parameter types there). */
static void strip_param_comments(char *text)
{
    char *def_end = strchr(text, '\n');
    def_end = def_end ? strchr(def_end + 1, '\n') : NULL;
    char *w = text;
    for (char *r = text; *r;) {
        if (r < def_end && r[0] == ' ' && r[1] == '/' && r[2] == '*') {
            char *close = strstr(r, "*/");
            assert_non_null(close);
            r = close + 2;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

/* ------------------------------------------- the forum thread's graphs */

static void test_seed_graph(void **state)
{
    (void)state;
    byocl_module *m = parse_fixture("text/seed_graph.relay");
    infer_ok(m);
    byocl_function *fn = byocl_module_find(m, "main");
    assert_non_null(fn);
    assert_int_equal(byocl_function_num_params(fn), 7);
    assert_string_equal(type_of(fn, 1), "Tensor[(16, 3, 3, 3), float32]");
    assert_string_equal(type_of(fn, 3), "Tensor[(1, 16, 224, 224), float32]");
    assert_string_equal(type_of(fn, 8), "(Tensor[(1, 16, 224, 224), float32], Tensor[(16), float32], "
                                        "Tensor[(16), float32])");
    assert_string_equal(type_of(fn, 12), "Tensor[(16), float32]");
    assert_string_equal(type_of(fn, 17), "Tensor[(16), float32]");
    assert_string_equal(type_str(byocl_function_ret_type(fn)),
                        "(Tensor[(1, 16, 224, 224), float32], Tensor[(16), float32], "
                        "Tensor[(16), float32])");
    int conv = byocl_text_node_by_number(fn, 3);
    assert_string_equal(byocl_node_op(fn, conv), "nn.conv2d");
    assert_int_equal(byocl_attrs_get_int(byocl_node_attrs(fn, conv), "channels", 0), 16);
    const int64_t *pad;
    assert_int_equal(byocl_attrs_get_ints(byocl_node_attrs(fn, conv), "padding", &pad), 4);
    assert_int_equal(pad[0], 1);
    assert_int_equal(pad[3], 1);
    /* Positions point at the op name: line 6 is "  %3 = nn.conv2d(...". */
    int line, col;
    byocl_node_pos(fn, conv, &line, &col);
    assert_int_equal(line, 6);
    assert_int_equal(col, 8);
    byocl_node_pos(fn, byocl_function_param(fn, 6), &line, &col);
    assert_int_equal(line, 2);
    assert_int_equal(col, 226);

    /* The fixture is written exactly as byocl prints it with types. */
    char *printed = print_module(m, true);
    char *want = ts_read_file(ts_fixture("text/seed_graph.relay"), NULL);
    assert_string_equal(printed, want);
    free(want);
    free(printed);
    byocl_module_free(m);
}

static void test_vgg_block_float16(void **state)
{
    (void)state;
    byocl_module *m = parse_fixture("text/vgg_block.relay");
    infer_ok(m);
    byocl_function *fn = byocl_module_find(m, "main");
    int weight = byocl_function_find_param(fn, "block5_conv3/convolution/ReadVariableOp:0");
    int bias = byocl_function_find_param(fn, "block5_conv3/BiasAdd/ReadVariableOp:0");
    assert_true(weight >= 0);
    assert_true(bias >= 0);
    assert_int_equal(byocl_function_find_param(fn, "74"), byocl_function_param(fn, 0));
    /* The thread's names are kept: %75 is the thread's %75. */
    assert_string_equal(type_of(fn, 75), "Tensor[(1, 512, 14, 14), float16]");
    assert_string_equal(type_of(fn, 76), "Tensor[(1, 512, 14, 14), float16]");
    assert_string_equal(type_of(fn, 77), "Tensor[(512, 512, 3, 3), float16]");
    assert_string_equal(type_of(fn, 78), "Tensor[(1, 512, 14, 14), float16]");
    assert_string_equal(type_of(fn, 79), "Tensor[(512), float16]");
    assert_string_equal(type_of(fn, 80), "Tensor[(1, 512, 14, 14), float16]");
    assert_string_equal(type_of(fn, 81), "Tensor[(1, 512, 14, 14), float16]");
    assert_string_equal(type_str(byocl_node_type(fn, byocl_function_body(fn))),
                        "Tensor[(1, 512, 14, 14), float16]");
    assert_int_equal(byocl_node_arg(fn, byocl_text_node_by_number(fn, 77), 0), weight);
    assert_string_equal(byocl_attrs_get_str(byocl_node_attrs(fn, byocl_text_node_by_number(fn, 78)),
                                            "out_dtype", ""),
                        "float16");
    /* byocl's own numbering (`byocl print --renumber`) counts from 0: #3 is the conv2d. */
    int *own = byocl_text_node_own_numbers(fn);
    assert_non_null(own);
    assert_int_equal(own[byocl_text_node_by_number(fn, 78)], 3);
    free(own);
    char label[64];
    assert_string_equal(byocl_node_label(fn, byocl_text_node_by_number(fn, 78), label,
                                         sizeof label), "%78");
    /* `%82` as the final expression: the body, which nothing else uses, prints inline. */
    assert_string_equal(byocl_node_op(fn, byocl_function_body(fn)), "annotation.compiler_end");
    assert_int_equal(byocl_text_node_number(fn, byocl_function_body(fn)), -1);
    assert_int_equal(byocl_text_node_by_number(fn, 7), -1);
    byocl_module_free(m);
}

/* The source's binding names are kept where every binding has one (gaps and order as
 * the file has them); a binding without one (a call written inline) makes byocl number
 * the function from %0, as messages then do too. */
static void test_source_names_kept_or_renumbered(void **state)
{
    (void)state;
    static const char kept[] = "#[version = \"0.0.5\"]\n"
                               "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                               "  %9 = nn.relu(%x);\n"
                               "  %h = abs(%9);\n"
                               "  %5 = multiply(%h, %9);\n"
                               "  tanh(%5)\n"
                               "}\n";
    char *printed = assert_round_trip(kept, NULL, false);
    assert_string_equal(printed, kept);
    free(printed);
    byocl_module *m = NULL;
    byocl_error err;
    assert_int_equal(byocl_text_parse(kept, strlen(kept), "kept.relay", NULL, &m, &err), BYOCL_OK);
    byocl_print_options renumber = {.renumber = true};
    printed = byocl_text_print(m, &renumber, NULL, NULL);
    assert_string_equal(printed, "#[version = \"0.0.5\"]\n"
                                 "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                                 "  %0 = nn.relu(%x);\n"
                                 "  %h = abs(%0);\n"
                                 "  %1 = multiply(%h, %0);\n"
                                 "  tanh(%1)\n"
                                 "}\n");
    free(printed);
    byocl_module_free(m);

    static const char inline_call[] = "#[version = \"0.0.5\"]\n"
                                      "def @main(%x: Tensor[(3), float32]) {\n"
                                      "  %0 = nn.relu(add(%x, 1f));\n"
                                      "  %1 = multiply(%0, %x);\n"
                                      "  tanh(%1)\n"
                                      "}\n";
    printed = assert_round_trip(inline_call, NULL, false);
    assert_string_equal(printed, "#[version = \"0.0.5\"]\n"
                                 "def @main(%x: Tensor[(3), float32]) {\n"
                                 "  %0 = add(%x, 1f);\n"
                                 "  %1 = nn.relu(%0);\n"
                                 "  %2 = multiply(%1, %x);\n"
                                 "  tanh(%2)\n"
                                 "}\n");
    free(printed);
    assert_int_equal(byocl_text_parse(inline_call, strlen(inline_call), "inline.relay", NULL, &m,
                                      &err), BYOCL_OK);
    byocl_function *fn = byocl_module_find(m, "main");
    static const char *const ops[3] = {"add", "nn.relu", "multiply"};
    /* Messages name nodes as the print does: the relu, the file's %0, is %1 there. */
    static const char *const labels[3] = {"%0", "%1", "%2"};
    int found = 0;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++)
        for (int k = 0; k < 3; k++)
            if (byocl_node_op(fn, id) && strcmp(byocl_node_op(fn, id), ops[k]) == 0) {
                char label[64];
                assert_string_equal(byocl_node_label(fn, id, label, sizeof label), labels[k]);
                found++;
            }
    assert_int_equal(found, 3);
    byocl_module_free(m);
}

static void test_vgg_block_corrected_named_bindings(void **state)
{
    (void)state;
    byocl_module *m = parse_fixture("text/vgg_block_corrected.relay");
    infer_ok(m);
    byocl_function *fn = byocl_module_find(m, "main");
    int x0 = -1, x1 = -1;
    for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
        const char *name = byocl_node_name(fn, id);
        if (name && strcmp(name, "x0") == 0)
            x0 = id;
        if (name && strcmp(name, "x1") == 0)
            x1 = id;
    }
    assert_true(x0 >= 0 && x1 >= 0);
    assert_string_equal(byocl_node_op(fn, x0), "annotation.compiler_begin");
    assert_string_equal(type_str(byocl_node_type(fn, x0)), "Tensor[(512, 512, 3, 3), float32]");
    assert_string_equal(type_str(byocl_node_type(fn, x1)), "Tensor[(512), float32]");
    assert_int_equal(byocl_text_node_number(fn, x0), -1);
    assert_string_equal(type_of(fn, 77), "Tensor[(512, 512, 3, 3), float16]");
    assert_string_equal(type_str(byocl_function_ret_type(fn)), "Tensor[(1, 512, 14, 14), float16]");

    /* Printed again, the file keeps its names (only the `%82` binding of the result, which
     * is printed inline, goes). */
    char *printed = print_module(m, false);
    assert_string_equal(
        printed,
        "#[version = \"0.0.5\"]\n"
        "def @main(%74: Tensor[(1, 512, 14, 14), float16], "
        "%block5_conv3/convolution/ReadVariableOp:0: Tensor[(512, 512, 3, 3), float32], "
        "%block5_conv3/BiasAdd/ReadVariableOp:0: Tensor[(512), float32]) -> "
        "Tensor[(1, 512, 14, 14), float16] {\n"
        "  %75 = annotation.compiler_begin(%74, compiler=\"ccompiler\");\n"
        "  %x0 = annotation.compiler_begin(%block5_conv3/convolution/ReadVariableOp:0, "
        "compiler=\"ccompiler\");\n"
        "  %76 = nn.relu(%75);\n"
        "  %77 = cast(%x0, dtype=\"float16\");\n"
        "  %78 = nn.conv2d(%76, %77, padding=[1, 1, 1, 1], channels=512, kernel_size=[3, 3], "
        "out_dtype=\"float16\");\n"
        "  %x1 = annotation.compiler_begin(%block5_conv3/BiasAdd/ReadVariableOp:0, "
        "compiler=\"ccompiler\");\n"
        "  %79 = cast(%x1, dtype=\"float16\");\n"
        "  %80 = nn.bias_add(%78, %79);\n"
        "  %81 = nn.relu(%80);\n"
        "  annotation.compiler_end(%81, compiler=\"ccompiler\")\n"
        "}\n");
    free(printed);
    /* renumber: numbered from %0 as TVM prints after its passes; %x0 and %x1 stay. */
    byocl_print_options renumber = {.renumber = true};
    printed = byocl_text_print(m, &renumber, NULL, NULL);
    assert_non_null(printed);
    assert_string_equal(
        printed,
        "#[version = \"0.0.5\"]\n"
        "def @main(%74: Tensor[(1, 512, 14, 14), float16], "
        "%block5_conv3/convolution/ReadVariableOp:0: Tensor[(512, 512, 3, 3), float32], "
        "%block5_conv3/BiasAdd/ReadVariableOp:0: Tensor[(512), float32]) -> "
        "Tensor[(1, 512, 14, 14), float16] {\n"
        "  %0 = annotation.compiler_begin(%74, compiler=\"ccompiler\");\n"
        "  %x0 = annotation.compiler_begin(%block5_conv3/convolution/ReadVariableOp:0, "
        "compiler=\"ccompiler\");\n"
        "  %1 = nn.relu(%0);\n"
        "  %2 = cast(%x0, dtype=\"float16\");\n"
        "  %3 = nn.conv2d(%1, %2, padding=[1, 1, 1, 1], channels=512, kernel_size=[3, 3], "
        "out_dtype=\"float16\");\n"
        "  %x1 = annotation.compiler_begin(%block5_conv3/BiasAdd/ReadVariableOp:0, "
        "compiler=\"ccompiler\");\n"
        "  %4 = cast(%x1, dtype=\"float16\");\n"
        "  %5 = nn.bias_add(%3, %4);\n"
        "  %6 = nn.relu(%5);\n"
        "  annotation.compiler_end(%6, compiler=\"ccompiler\")\n"
        "}\n");
    free(printed);
    byocl_module_free(m);
}

/* ------------------------------------------------ TVM-printed ResNet-18 */

static void test_resnet18_tvm_text(void **state)
{
    (void)state;
    byocl_module *m = parse_fixture("text/resnet18_tvm.relay");
    infer_ok(m);
    byocl_function *fn = byocl_module_find(m, "main");
    assert_int_equal(byocl_module_num_functions(m), 1);
    /* data; 21 batch norms of 4 parameters; 20 conv weights; dense weight and bias */
    assert_int_equal(byocl_function_num_params(fn), 100);
    assert_string_equal(type_str(byocl_function_ret_type(fn)), "Tensor[(1, 1000), float32]");
    assert_string_equal(type_of(fn, 0), "(Tensor[(1, 3, 224, 224), float32], Tensor[(3), float32], "
                                        "Tensor[(3), float32])");
    assert_string_equal(type_of(fn, 2), "Tensor[(1, 64, 112, 112), float32]");
    assert_string_equal(type_of(fn, 6), "Tensor[(1, 64, 56, 56), float32]");
    assert_string_equal(type_of(fn, 67), "Tensor[(1, 512, 7, 7), float32]");
    assert_string_equal(type_of(fn, 86), "Tensor[(1, 512, 1, 1), float32]");
    assert_string_equal(type_of(fn, 89), "Tensor[(1, 1000), float32]");
    int bn = byocl_text_node_by_number(fn, 0);
    assert_true(fabs(byocl_attrs_get_float(byocl_node_attrs(fn, bn), "epsilon", 0) - 2e-05) < 1e-12);
    assert_false(byocl_attrs_get_bool(byocl_node_attrs(fn, bn), "scale", true));
    assert_int_equal(byocl_text_node_by_number(fn, 90), -1);

    /* byocl prints TVM's text back, less the parameter types TVM repeats in comments. */
    char *want = ts_read_file(ts_fixture("text/resnet18_tvm.relay"), NULL);
    strip_param_comments(want);
    char *printed = print_module(m, true);
    size_t n = strlen(printed);
    assert_true(n > 0 && strlen(want) == n + 1); /* TVM ends with a blank line */
    want[n] = '\0';
    assert_string_equal(printed, want);
    free(printed);
    free(want);
    byocl_module_free(m);
}

/* ---------------------------------------------------------- round trips */

static const char partitioned_text[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 4), float32], %y: Tensor[(1, 4), float32]) {\n"
    "  %0 = @opencl_main_0(%x, %y);\n"
    "  %1 = multiply(%0.0, 2f) /* a comment /* nested */ here */;\n"
    "  %2 = add(%1, meta[relay.Constant][0]); // the constant comes from the params\n"
    "  %3 = subtract(%2, meta[relay.Constant][1]);\n"
    "  (%3, %0.1, (%x, %y).1)\n"
    "}\n"
    "\n"
    "def @opencl_main_0(%opencl_0_i0: Tensor[(1, 4), float32], %opencl_0_i1: Tensor[(1, 4), "
    "float32], Compiler=\"opencl\", Primitive=1, Inline=1, global_symbol=\"opencl_main_0\") -> "
    "(Tensor[(1, 4), float32], Tensor[(1, 4), float32]) {\n"
    "  %0 = add(%opencl_0_i0, %opencl_0_i1);\n"
    "  %1 = nn.relu(%0);\n"
    "  (%1, %0)\n"
    "}\n";

static byocl_params *make_meta(void)
{
    byocl_error err;
    byocl_params *p = byocl_params_new();
    assert_non_null(p);
    int64_t dims[] = {1, 4};
    float a[] = {1, 2, 3, 4}, b[] = {0.5f, -1, 0, 8};
    byocl_tensor *ta = ts_tensor_f32(2, dims, a), *tb = ts_tensor_f32(2, dims, b);
    assert_int_equal(byocl_params_set(p, "relay.Constant.0", ta, &err), BYOCL_OK);
    assert_int_equal(byocl_params_set(p, "relay.Constant.1", tb, &err), BYOCL_OK);
    byocl_tensor_unref(ta);
    byocl_tensor_unref(tb);
    return p;
}

static void test_round_trip_partitioned_module(void **state)
{
    (void)state;
    byocl_params *meta = make_meta();
    char *printed = assert_round_trip(partitioned_text, meta, true);
    assert_string_equal(
        printed,
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(1, 4), float32], %y: Tensor[(1, 4), float32]) -> "
        "(Tensor[(1, 4), float32], Tensor[(1, 4), float32], Tensor[(1, 4), float32]) {\n"
        "  %0 = @opencl_main_0(%x, %y) /* ty=(Tensor[(1, 4), float32], Tensor[(1, 4), float32]) */;\n"
        "  %1 = %0.0 /* ty=Tensor[(1, 4), float32] */;\n"
        "  %2 = multiply(%1, 2f) /* ty=Tensor[(1, 4), float32] */;\n"
        "  %3 = add(%2, meta[relay.Constant][0]) /* ty=Tensor[(1, 4), float32] */;\n"
        "  %4 = subtract(%3, meta[relay.Constant][1]) /* ty=Tensor[(1, 4), float32] */;\n"
        "  %5 = %0.1 /* ty=Tensor[(1, 4), float32] */;\n"
        "  %6 = (%x, %y) /* ty=(Tensor[(1, 4), float32], Tensor[(1, 4), float32]) */;\n"
        "  %7 = %6.1 /* ty=Tensor[(1, 4), float32] */;\n"
        "  (%4, %5, %7) /* ty=(Tensor[(1, 4), float32], Tensor[(1, 4), float32], "
        "Tensor[(1, 4), float32]) */\n"
        "}\n"
        "\n"
        "def @opencl_main_0(%opencl_0_i0: Tensor[(1, 4), float32], %opencl_0_i1: Tensor[(1, 4), "
        "float32], Compiler=\"opencl\", Primitive=1, Inline=1, global_symbol=\"opencl_main_0\") -> "
        "(Tensor[(1, 4), float32], Tensor[(1, 4), float32]) {\n"
        "  %0 = add(%opencl_0_i0, %opencl_0_i1) /* ty=Tensor[(1, 4), float32] */;\n"
        "  %1 = nn.relu(%0) /* ty=Tensor[(1, 4), float32] */;\n"
        "  (%1, %0) /* ty=(Tensor[(1, 4), float32], Tensor[(1, 4), float32]) */\n"
        "}\n");
    free(printed);

    /* Function attributes keep their kinds. */
    byocl_module *m = parse_ok_meta(partitioned_text, meta);
    const byocl_function *region = byocl_module_find(m, "opencl_main_0");
    const byocl_attrs *fa = byocl_function_attrs(region);
    assert_string_equal(byocl_attrs_get_str(fa, "Compiler", ""), "opencl");
    assert_int_equal(byocl_attrs_find(fa, "Primitive")->kind, BYOCL_ATTR_INT);
    assert_int_equal(byocl_attrs_get_int(fa, "Primitive", 0), 1);
    const byocl_function *main_fn = byocl_module_find(m, "main");
    assert_string_equal(byocl_node_callee(main_fn, byocl_text_node_by_number(main_fn, 0)),
                        "opencl_main_0");

    /* Printing hands the constants out again under the same names. */
    byocl_params *out = byocl_params_new();
    byocl_error err;
    char *text = byocl_text_print(m, NULL, out, &err);
    assert_non_null(text);
    assert_int_equal(byocl_params_count(out), 2);
    assert_true(byocl_tensor_equal(byocl_params_find(out, "relay.Constant.0"),
                                   byocl_params_find(meta, "relay.Constant.0")));
    assert_true(byocl_tensor_equal(byocl_params_find(out, "relay.Constant.1"),
                                   byocl_params_find(meta, "relay.Constant.1")));
    free(text);
    byocl_params_free(out);
    byocl_module_free(m);
    byocl_params_free(meta);
}

static void test_round_trip_fixtures(void **state)
{
    (void)state;
    const char *fixtures[] = {"text/seed_graph.relay", "text/vgg_block.relay",
                              "text/vgg_block_corrected.relay", "text/resnet18_tvm.relay"};
    for (size_t k = 0; k < sizeof fixtures / sizeof fixtures[0]; k++) {
        char *text = ts_read_file(ts_fixture(fixtures[k]), NULL);
        free(assert_round_trip(text, NULL, false));
        free(assert_round_trip(text, NULL, true));
        free(text);
    }
}

static void test_scalar_literals(void **state)
{
    (void)state;
    const char *text =
        "def @f() {\n"
        "  (2f, 2e-05f, 1.5f16, 0i64, 3, -1f, True, False, 7u8, -3i8, 0.1f, 1e+30f, 2.5f32, "
        "-7i32, 1E3f, inff, -inff, nanf, 65504f16, 0.1f16, 9007199254740993i64, 16777217f)\n"
        "}\n";
    char *printed = assert_round_trip(text, NULL, false);
    assert_string_equal(printed,
                        "#[version = \"0.0.5\"]\n"
                        "def @f() {\n"
                        "  (2f, 2e-05f, 1.5f16, 0i64, 3, -1f, True, False, 7u8, -3i8, 0.1f, "
                        "1e+30f, 2.5f, -7, 1000f, inff, -inff, nanf, 65504f16, 0.1f16, "
                        "9007199254740993i64, 16777216f)\n"
                        "}\n");
    free(printed);

    byocl_module *m = parse_ok(text);
    byocl_function *fn = byocl_module_find(m, "f");
    static const byocl_dtype dtypes[] = {BYOCL_FLOAT32, BYOCL_FLOAT32, BYOCL_FLOAT16, BYOCL_INT64,
                                         BYOCL_INT32,   BYOCL_FLOAT32, BYOCL_BOOL,    BYOCL_BOOL,
                                         BYOCL_UINT8,   BYOCL_INT8};
    static const double values[] = {2, 2e-05f, 1.5, 0, 3, -1, 1, 0, 7, -3};
    for (int k = 0; k < 10; k++) {
        const byocl_tensor *t = byocl_node_value(fn, k);
        assert_int_equal(byocl_tensor_dtype(t), dtypes[k]);
        assert_int_equal(byocl_tensor_shape(t)->rank, 0);
        assert_true(byocl_tensor_get(t, 0) == values[k]);
    }
    byocl_module_free(m);
}

/* int16, uint16, uint32 and uint64 literals: their suffixes, their limits (uint64 up to
 * 2^64 - 1, exact), and literals that do not fit. */
static void test_wide_int_literals(void **state)
{
    (void)state;
    const char *text = "def @f() {\n"
                       "  (-32768i16, 65535u16, 4294967295u32, 18446744073709551615u64, "
                       "9223372036854775809u64, 0u64)\n"
                       "}\n";
    char *printed = assert_round_trip(text, NULL, false);
    assert_string_equal(printed, "#[version = \"0.0.5\"]\n"
                                 "def @f() {\n"
                                 "  (-32768i16, 65535u16, 4294967295u32, 18446744073709551615u64, "
                                 "9223372036854775809u64, 0u64)\n"
                                 "}\n");
    free(printed);
    byocl_module *m = parse_ok(text);
    byocl_function *fn = byocl_module_find(m, "f");
    static const byocl_dtype dtypes[] = {BYOCL_INT16, BYOCL_UINT16, BYOCL_UINT32, BYOCL_UINT64};
    for (int k = 0; k < 4; k++)
        assert_int_equal(byocl_tensor_dtype(byocl_node_value(fn, k)), dtypes[k]);
    uint64_t u;
    memcpy(&u, byocl_tensor_cdata(byocl_node_value(fn, 4)), sizeof u);
    assert_true(u == (1ull << 63) + 1);
    byocl_module_free(m);

    static const struct {
        const char *lit, *msg;
    } bad[] = {
        {"32768i16", "integer literal 32768 does not fit int16"},
        {"-1u16", "integer literal -1 does not fit uint16"},
        {"4294967296u32", "integer literal 4294967296 does not fit uint32"},
        {"18446744073709551616u64", "integer literal 18446744073709551616 does not fit uint64"},
        {"-1u64", "integer literal -1 does not fit uint64"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char src[128];
        snprintf(src, sizeof src, "def @f() {\n  %s\n}\n", bad[i].lit);
        byocl_error err = {0};
        byocl_module *bm = NULL;
        assert_int_equal(byocl_text_parse(src, strlen(src), "t.relay", NULL, &bm, &err),
                         BYOCL_ERR_PARSE);
        assert_null(bm);
        assert_non_null(strstr(err.msg, bad[i].msg));
    }
}

/* bfloat16: the dtype name in types, the bf16 literal suffix (a value reads as float32 and
 * truncates to bfloat16: 1.00999f keeps 1.0078125, printed as float32 spells it), inf and
 * NaN, and cast to it. */
static void test_bfloat16(void **state)
{
    (void)state;
    const char *text = "def @main(%x: Tensor[(2), bfloat16]) {\n"
                       "  %0 = add(%x, 1.00999bf16);\n"
                       "  %1 = cast(%0, dtype=\"float32\");\n"
                       "  (cast(%1, dtype=\"bfloat16\"), -infbf16, nanbf16, 3bf16)\n"
                       "}\n";
    char *printed = assert_round_trip(text, NULL, true);
    assert_string_equal(printed,
                        "#[version = \"0.0.5\"]\n"
                        "def @main(%x: Tensor[(2), bfloat16]) -> (Tensor[(2), bfloat16], "
                        "bfloat16, bfloat16, bfloat16) {\n"
                        "  %0 = add(%x, 1.0078125bf16) /* ty=Tensor[(2), bfloat16] */;\n"
                        "  %1 = cast(%0, dtype=\"float32\") /* ty=Tensor[(2), float32] */;\n"
                        "  %2 = cast(%1, dtype=\"bfloat16\") /* ty=Tensor[(2), bfloat16] */;\n"
                        "  (%2, -infbf16, nanbf16, 3bf16) /* ty=(Tensor[(2), bfloat16], "
                        "bfloat16, bfloat16, bfloat16) */\n"
                        "}\n");
    free(printed);
}

/* A list of floats (image.resize2d's roi) prints as TVM prints an Array of FloatImm and
 * reads back the same; integers in it read as floats, a default roi is left out. */
static void test_float_list_attribute(void **state)
{
    (void)state;
    const char *text =
        "def @main(%x: Tensor[(1, 1, 4, 4), float32]) {\n"
        "  %0 = image.resize2d(%x, size=[3, 3], roi=[0, 0.5f, 1, 1.2], "
        "coordinate_transformation_mode=\"tf_crop_and_resize\", extrapolation_value=10f);\n"
        "  image.resize2d(%0, size=[2, 2], roi=[0f, 0f, 0f, 0f])\n"
        "}\n";
    char *printed = assert_round_trip(text, NULL, true);
    assert_string_equal(printed,
                        "#[version = \"0.0.5\"]\n"
                        "def @main(%x: Tensor[(1, 1, 4, 4), float32]) -> Tensor[(1, 1, 2, 2), "
                        "float32] {\n"
                        "  %0 = image.resize2d(%x, size=[3, 3], roi=[0f, 0.5f, 1f, 1.2f], "
                        "coordinate_transformation_mode=\"tf_crop_and_resize\", "
                        "extrapolation_value=10f) /* ty=Tensor[(1, 1, 3, 3), float32] */;\n"
                        "  image.resize2d(%0, size=[2, 2]) /* ty=Tensor[(1, 1, 2, 2), float32] */\n"
                        "}\n");
    free(printed);
}

/* nn.layer_norm and nn.log_softmax as TVM's Relay prints them (every attribute given) parse;
 * printing leaves out the defaults, and other values round-trip. */
static void test_layer_norm_log_softmax(void **state)
{
    (void)state;
    const char *text =
        "def @main(%x: Tensor[(2, 3, 8), float32], %gamma: Tensor[(8), float32], "
        "%beta: Tensor[(8), float32], %g3: Tensor[(3), float32]) {\n"
        "  %0 = nn.layer_norm(%x, %gamma, %beta, axis=-1, epsilon=1e-05f, center=True, "
        "scale=True);\n"
        "  %1 = nn.log_softmax(%0, axis=-1);\n"
        "  %2 = nn.layer_norm(%1, %g3, %g3, axis=1, epsilon=0.001f, center=False);\n"
        "  nn.log_softmax(%2, axis=0)\n"
        "}\n";
    char *printed = assert_round_trip(text, NULL, true);
    assert_string_equal(printed,
                        "#[version = \"0.0.5\"]\n"
                        "def @main(%x: Tensor[(2, 3, 8), float32], %gamma: Tensor[(8), float32], "
                        "%beta: Tensor[(8), float32], %g3: Tensor[(3), float32]) -> "
                        "Tensor[(2, 3, 8), float32] {\n"
                        "  %0 = nn.layer_norm(%x, %gamma, %beta) /* ty=Tensor[(2, 3, 8), "
                        "float32] */;\n"
                        "  %1 = nn.log_softmax(%0) /* ty=Tensor[(2, 3, 8), float32] */;\n"
                        "  %2 = nn.layer_norm(%1, %g3, %g3, axis=1, epsilon=0.001f, "
                        "center=False) /* ty=Tensor[(2, 3, 8), float32] */;\n"
                        "  nn.log_softmax(%2, axis=0) /* ty=Tensor[(2, 3, 8), float32] */\n"
                        "}\n");
    free(printed);
}

/* nn.depth_to_space and nn.space_to_depth as TVM prints them: attributes at their
 * defaults (layout "NCHW", mode "DCR") are left out when printed and read back the same. */
static void test_subpixel_attributes(void **state)
{
    (void)state;
    const char *text =
        "def @main(%x: Tensor[(1, 8, 2, 3), float32]) {\n"
        "  %0 = nn.depth_to_space(%x, block_size=2, layout=\"NCHW\", mode=\"DCR\");\n"
        "  %1 = nn.depth_to_space(%x, block_size=2, layout=\"NCHW\", mode=\"CRD\");\n"
        "  %2 = nn.space_to_depth(%0, block_size=2, layout=\"NCHW\");\n"
        "  (%1, nn.space_to_depth(%2, block_size=1))\n"
        "}\n";
    char *printed = assert_round_trip(text, NULL, true);
    assert_string_equal(printed,
                        "#[version = \"0.0.5\"]\n"
                        "def @main(%x: Tensor[(1, 8, 2, 3), float32]) -> (Tensor[(1, 2, 4, 6), "
                        "float32], Tensor[(1, 8, 2, 3), float32]) {\n"
                        "  %0 = nn.depth_to_space(%x, block_size=2) /* ty=Tensor[(1, 2, 4, 6), "
                        "float32] */;\n"
                        "  %1 = nn.depth_to_space(%x, block_size=2, mode=\"CRD\") /* "
                        "ty=Tensor[(1, 2, 4, 6), float32] */;\n"
                        "  %2 = nn.space_to_depth(%0, block_size=2) /* ty=Tensor[(1, 8, 2, 3), "
                        "float32] */;\n"
                        "  %3 = nn.space_to_depth(%2) /* ty=Tensor[(1, 8, 2, 3), float32] */;\n"
                        "  (%1, %3) /* ty=(Tensor[(1, 2, 4, 6), float32], Tensor[(1, 8, 2, 3), "
                        "float32]) */\n"
                        "}\n");
    free(printed);
}

/* A list of integer lists (nn.pad's pad_width) prints as TVM prints an Array of Arrays and
 * reads back the same; the pad value is the second argument, a default pad_mode is left
 * out, and a flat list (the importers' spelling) is taken as pairs. */
static void test_int_rows_attribute(void **state)
{
    (void)state;
    const char *text =
        "def @main(%x: Tensor[(1, 2, 3, 4), float32]) {\n"
        "  %0 = nn.pad(%x, 0f, pad_width=[[0, 0], [0, 0], [1, 1], [2, 2]], pad_mode=\"constant\");\n"
        "  nn.pad(%0, -1f, pad_width=[0, 1, 2, 0, 0, 2, 1, 1], pad_mode=\"edge\")\n"
        "}\n";
    char *printed = assert_round_trip(text, NULL, true);
    assert_string_equal(printed,
                        "#[version = \"0.0.5\"]\n"
                        "def @main(%x: Tensor[(1, 2, 3, 4), float32]) -> Tensor[(2, 4, 7, 10), "
                        "float32] {\n"
                        "  %0 = nn.pad(%x, 0f, pad_width=[[0, 0], [0, 0], [1, 1], [2, 2]]) "
                        "/* ty=Tensor[(1, 2, 5, 8), float32] */;\n"
                        "  nn.pad(%0, -1f, pad_width=[[0, 1], [2, 0], [0, 2], [1, 1]], "
                        "pad_mode=\"edge\") /* ty=Tensor[(2, 4, 7, 10), float32] */\n"
                        "}\n");
    free(printed);
}

/* float64 (TVM's spelling): types, f64 literals printed with the digits a double needs,
 * casts to and from it. */
static void test_float64(void **state)
{
    (void)state;
    const char *text = "def @main(%x: Tensor[(2, 3), float64], %y: Tensor[(3), float32]) {\n"
                       "  %0 = add(%x, 0.1f64);\n"
                       "  %1 = cast(%y, dtype=\"float64\");\n"
                       "  %2 = multiply(%0, %1);\n"
                       "  %3 = maximum(%2, -inff64);\n"
                       "  (%3, cast(%3, dtype=\"float32\"), 1e+300f64, 3f64)\n"
                       "}\n";
    char *printed = assert_round_trip(text, NULL, true);
    ts_assert_contains(printed, "%0 = add(%x, 0.1f64) /* ty=Tensor[(2, 3), float64] */;");
    ts_assert_contains(printed, "%1 = cast(%y, dtype=\"float64\") /* ty=Tensor[(3), float64] */;");
    ts_assert_contains(printed, "maximum(%2, -inff64)");
    ts_assert_contains(printed, "1e+300f64, 3f64)");
    free(printed);

    byocl_module *m = parse_ok(text);
    byocl_function *fn = byocl_module_find(m, "main");
    bool seen = false;
    for (int k = 0; k < byocl_function_num_nodes(fn); k++) {
        const byocl_tensor *t = byocl_node_value(fn, k);
        if (t && byocl_tensor_dtype(t) == BYOCL_FLOAT64 && byocl_tensor_get(t, 0) == 0.1)
            seen = true; /* 0.1 as a double, not rounded through float */
    }
    assert_true(seen);
    byocl_module_free(m);
}

static void test_tuples_and_items(void **state)
{
    (void)state;
    const char *text = "def @f(%a: float32, %b: (Tensor[(2), int8], (float16,), ())) {\n"
                       "  %0 = (%a,);\n"
                       "  %1 = ();\n"
                       "  %2 = %b.1.0;\n"
                       "  %3 = (%0, %1, %2, (%a, %a).1);\n"
                       "  %3.0.0\n"
                       "}\n";
    char *printed = assert_round_trip(text, NULL, true);
    assert_string_equal(printed,
                        "#[version = \"0.0.5\"]\n"
                        "def @f(%a: float32, %b: (Tensor[(2), int8], (float16,), ())) -> float32 {\n"
                        "  %0 = (%a,) /* ty=(float32,) */;\n"
                        "  %1 = () /* ty=() */;\n"
                        "  %2 = %b.1 /* ty=(float16,) */;\n"
                        "  %3 = %2.0 /* ty=float16 */;\n"
                        "  %4 = (%a, %a) /* ty=(float32, float32) */;\n"
                        "  %5 = %4.1 /* ty=float32 */;\n"
                        "  %6 = (%0, %1, %3, %5) /* ty=((float32,), (), float16, float32) */;\n"
                        "  %7 = %6.0 /* ty=(float32,) */;\n"
                        "  %7.0 /* ty=float32 */\n"
                        "}\n");
    free(printed);
    /* `Tensor[(), float32]` is the scalar type. */
    byocl_module *m = parse_ok("def @f(%s: Tensor[(), float32], %t: Tensor[(3,), bool]) { %s }");
    byocl_function *fn = byocl_module_find(m, "f");
    assert_string_equal(type_str(byocl_node_type(fn, 0)), "float32");
    assert_string_equal(type_str(byocl_node_type(fn, 1)), "Tensor[(3), bool]");
    byocl_module_free(m);
}

static void test_positional_attributes(void **state)
{
    (void)state;
    const char *text = "def @f(%x: Tensor[(1, 4), float32], %b: Tensor[(4), float32]) {\n"
                       "  %0 = nn.bias_add(%x, cast(%b, \"int32\"));\n"
                       "  %1 = clip(%x, 0f, 6);\n"
                       "  %2 = multiply(%x, 2f);\n"
                       "  %3 = nn.max_pool2d(%x, (2, 2), [1, 1], padding=None);\n"
                       "  (%0, %1, %2)\n"
                       "}\n";
    byocl_module *m = NULL;
    byocl_error err;
    /* max_pool2d's padding is not nullable: the error names it, where the call is. */
    assert_int_not_equal(byocl_text_parse(text, strlen(text), "t.relay", NULL, &m, &err), BYOCL_OK);
    assert_string_equal(err.msg, "t.relay:5:8: error: bad value for attribute 'padding' of "
                                 "nn.max_pool2d: expected an integer or a list of integers, got None");
    char fixed[1024];
    snprintf(fixed, sizeof fixed, "%s", text);
    char *none = strstr(fixed, ", padding=None");
    memmove(none, none + strlen(", padding=None"), strlen(none + strlen(", padding=None")) + 1);
    m = parse_ok(fixed);
    byocl_function *fn = byocl_module_find(m, "f");
    int cast = byocl_text_node_by_number(fn, 0);
    assert_string_equal(byocl_node_op(fn, cast), "cast");
    assert_string_equal(byocl_attrs_get_str(byocl_node_attrs(fn, cast), "dtype", ""), "int32");
    int clip = byocl_text_node_by_number(fn, 2);
    assert_true(byocl_attrs_get_float(byocl_node_attrs(fn, clip), "a_min", -1) == 0);
    assert_true(byocl_attrs_get_float(byocl_node_attrs(fn, clip), "a_max", -1) == 6);
    int mul = byocl_text_node_by_number(fn, 3);
    assert_int_equal(byocl_node_num_args(fn, mul), 2);
    int pool = byocl_text_node_by_number(fn, 4);
    const int64_t *v;
    assert_int_equal(byocl_attrs_get_ints(byocl_node_attrs(fn, pool), "pool_size", &v), 2);
    assert_int_equal(v[0], 2);
    char *printed = print_module(m, false);
    ts_assert_contains(printed, "  %0 = cast(%b, dtype=\"int32\");\n"
                                "  %1 = nn.bias_add(%x, %0);\n"
                                "  %2 = clip(%x, a_min=0f, a_max=6f);\n"
                                "  %3 = multiply(%x, 2f);\n"
                                "  %4 = nn.max_pool2d(%x, pool_size=[2, 2]);\n");
    free(printed);
    byocl_module_free(m);
}

static void test_names_and_comments(void **state)
{
    (void)state;
    const char *text = "#[version = \"0.0.5\"]\n"
                       "/* leading */ def @f(%a-b.c/d:0: float32 /* ty=float32 */, %_x: float32) {\n"
                       "  %y.z = add(%a-b.c/d:0, %_x); // line comment\n"
                       "  %7 = %y.z;\n"
                       "  multiply(%7, %y.z)\n"
                       "}\n"
                       "#[metadata]\n"
                       "{ \"root\": 1, \"nodes\": [ unparsed JSON \\ here ] }\n";
    char *printed = assert_round_trip(text, NULL, false);
    assert_string_equal(printed, "#[version = \"0.0.5\"]\n"
                                 "def @f(%a-b.c/d:0: float32, %_x: float32) {\n"
                                 "  %y.z = add(%a-b.c/d:0, %_x);\n"
                                 "  multiply(%y.z, %y.z)\n"
                                 "}\n");
    free(printed);
}

/* ---------------------------------------------------------- numbering */

static void test_node_numbering(void **state)
{
    (void)state;
    byocl_error err;
    byocl_module *m = byocl_module_new();
    byocl_function *fn = byocl_module_add_function(m, "main", &err);
    int64_t d[] = {2};
    byocl_type t = byocl_type_tensor(BYOCL_FLOAT32, 1, d);
    /* A parameter named like a number: bindings skip that number. */
    int p = byocl_function_add_param(fn, "1", &t, &err);
    int q = byocl_function_add_param(fn, "x", &t, &err);
    int r0 = byocl_function_add_call(fn, "nn.relu", &p, 1, NULL, &err);
    int r1 = byocl_function_add_call(fn, "nn.relu", &r0, 1, NULL, &err);
    int r2 = byocl_function_add_call(fn, "nn.relu", &r1, 1, NULL, &err);
    int r3 = byocl_function_add_call(fn, "nn.relu", &r2, 1, NULL, &err);
    /* Names that cannot be printed as themselves fall back to numbers. */
    assert_int_equal(byocl_node_set_name(fn, r1, "x", &err), BYOCL_OK);    /* a param's */
    assert_int_equal(byocl_node_set_name(fn, r2, "h i", &err), BYOCL_OK);  /* a space */
    assert_int_equal(byocl_node_set_name(fn, r3, "out", &err), BYOCL_OK);
    int args[] = {r3, q};
    int sum = byocl_function_add_call(fn, "add", args, 2, NULL, &err);
    /* The body is used by a later node: it is bound, not inline. */
    int after = byocl_function_add_call(fn, "nn.relu", &sum, 1, NULL, &err);
    assert_true(after >= 0);
    assert_int_equal(byocl_function_set_body(fn, sum, &err), BYOCL_OK);

    char *printed = print_module(m, false);
    assert_string_equal(printed, "#[version = \"0.0.5\"]\n"
                                 "def @main(%1: Tensor[(2), float32], %x: Tensor[(2), float32]) {\n"
                                 "  %0 = nn.relu(%1);\n"
                                 "  %2 = nn.relu(%0);\n"
                                 "  %3 = nn.relu(%2);\n"
                                 "  %out = nn.relu(%3);\n"
                                 "  %4 = add(%out, %x);\n"
                                 "  %5 = nn.relu(%4);\n"
                                 "  %4\n"
                                 "}\n");
    free(printed);
    assert_int_equal(byocl_text_node_number(fn, p), -1);
    assert_int_equal(byocl_text_node_number(fn, r0), 0);
    assert_int_equal(byocl_text_node_number(fn, r1), 2);
    assert_int_equal(byocl_text_node_number(fn, r3), -1);
    assert_int_equal(byocl_text_node_number(fn, sum), 4);
    assert_int_equal(byocl_text_node_number(fn, 99), -1);
    assert_int_equal(byocl_text_node_by_number(fn, 1), -1);
    assert_int_equal(byocl_text_node_by_number(fn, 5), after);
    assert_int_equal(byocl_text_node_by_number(fn, -1), -1);
    /* All at once: the same numbers, by node id. */
    int *numbers = byocl_text_node_numbers(fn);
    assert_non_null(numbers);
    for (int id = 0; id < byocl_function_num_nodes(fn); id++)
        assert_int_equal(numbers[id], byocl_text_node_number(fn, id));
    assert_int_equal(numbers[r1], 2);
    assert_int_equal(numbers[r3], -1);
    free(numbers);

    /* Once the trailing node is gone the body is inline and has no number. */
    byocl_module *m2 = parse_ok("def @g(%x: float32) { %0 = nn.relu(%x); nn.relu(%0) }");
    byocl_function *g = byocl_module_find(m2, "g");
    assert_int_equal(byocl_text_node_number(g, byocl_function_body(g)), -1);
    assert_int_equal(byocl_text_node_by_number(g, 0), 1);
    byocl_module_free(m2);

    /* A shared tensor constant keeps one meta index. */
    int64_t d3[] = {3};
    byocl_tensor *c = ts_tensor_f32(1, d3, (const float[]){1, 2, 3});
    byocl_function *h = byocl_module_add_function(m, "h", &err);
    int c0 = byocl_function_add_constant(h, c, &err);
    int c1 = byocl_function_add_constant(h, c, &err);
    int cc[] = {c0, c1};
    assert_int_equal(byocl_function_set_body(h, byocl_function_add_call(h, "add", cc, 2, NULL, &err), &err),
                     BYOCL_OK);
    byocl_tensor_unref(c);
    byocl_module_remove(m, "main", &err);
    printed = print_module(m, false);
    assert_string_equal(printed, "#[version = \"0.0.5\"]\n"
                                 "def @h() {\n"
                                 "  add(meta[relay.Constant][0], meta[relay.Constant][0])\n"
                                 "}\n");
    free(printed);

    /* A function without a body cannot be printed. */
    byocl_module_add_function(m, "empty", &err);
    byocl_print_options opt = {.show_types = false};
    assert_null(byocl_text_print(m, &opt, NULL, &err));
    assert_string_equal(err.msg, "cannot print @empty: it has no body");
    byocl_module_free(m);
}

/* ----------------------------------------------------------- attributes */

static void test_parse_attrs(void **state)
{
    (void)state;
    byocl_error err;
    byocl_module *m = byocl_module_new();
    byocl_attrs a = {0, NULL};
    assert_int_equal(byocl_text_parse_attrs(m,
                                            "strides=[2, 2], channels=64, epsilon=2e-05f, "
                                            "center=False, layout=\"NC\\\"HW\", axis=None, "
                                            "pad=(1, -1,), empty=[], big=9i64, f=1.5, "
                                            "roi=[0, 0.5f, 1.25, -2e-05f]",
                                            &a, &err),
                     BYOCL_OK);
    assert_int_equal(a.n, 11);
    const int64_t *v;
    assert_int_equal(byocl_attrs_get_ints(&a, "strides", &v), 2);
    assert_int_equal(v[1], 2);
    assert_int_equal(byocl_attrs_find(&a, "channels")->kind, BYOCL_ATTR_INT);
    assert_int_equal(byocl_attrs_get_int(&a, "channels", 0), 64);
    assert_true(byocl_attrs_get_float(&a, "epsilon", 0) == 2e-05);
    assert_int_equal(byocl_attrs_find(&a, "center")->kind, BYOCL_ATTR_BOOL);
    assert_false(byocl_attrs_get_bool(&a, "center", true));
    assert_string_equal(byocl_attrs_get_str(&a, "layout", ""), "NC\"HW");
    assert_int_equal(byocl_attrs_find(&a, "axis")->kind, BYOCL_ATTR_NULL);
    assert_int_equal(byocl_attrs_get_ints(&a, "pad", &v), 2);
    assert_int_equal(v[1], -1);
    assert_int_equal(byocl_attrs_get_ints(&a, "empty", &v), 0);
    assert_int_equal(byocl_attrs_get_int(&a, "big", 0), 9);
    assert_true(byocl_attrs_get_float(&a, "f", 0) == 1.5);
    /* one float makes a list of floats, its integers read as floats */
    const double *fv;
    assert_int_equal(byocl_attrs_find(&a, "roi")->kind, BYOCL_ATTR_FLOATS);
    assert_int_equal(byocl_attrs_get_floats(&a, "roi", &fv), 4);
    assert_true(fv[0] == 0 && fv[1] == 0.5 && fv[2] == 1.25 && fv[3] == -2e-05);
    assert_int_equal(byocl_attrs_get_ints(&a, "roi", &v), -1);
    assert_int_equal(byocl_attrs_get_floats(&a, "f", &fv), 1);
    assert_true(fv[0] == 1.5);
    assert_int_equal(byocl_attrs_get_floats(&a, "strides", &fv), -1);

    byocl_attrs b = {0, NULL};
    assert_int_equal(byocl_text_parse_attrs(m, "", &b, &err), BYOCL_OK);
    assert_int_equal(b.n, 0);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"strides=", "attributes:1:9: error: unexpected end of input, expected an attribute value"},
        {"a=1 b=2", "attributes:1:5: error: expected ',' or the end of the attributes but found 'b'"},
        {"a=1, a=2", "attributes:1:6: error: attribute 'a' is given twice"},
        {"=1", "attributes:1:1: error: expected 'key=value' but found '='"},
        {"a=[1, \"x\"]", "attributes:1:7: error: expected a number but found string \"x\""},
        {"a=[0.5f, None]", "attributes:1:10: error: expected a number but found 'None'"},
        {"a=[1.5, 2", "attributes:1:10: error: unexpected end of input, expected ']'"},
        {"a=%x", "attributes:1:3: error: expected an attribute value but found '%x'"},
        {"a=\"open", "attributes:1:3: error: unterminated string"},
        {"a=1.5i64", "attributes:1:6: error: a float literal cannot have the integer suffix 'i64'"},
        {"a=2f128", "attributes:1:4: error: unknown literal suffix 'f128' (expected f, f16, f64, "
                    "i32, i64, i16, i8, u64, u32, u16 or u8)"},
        {"a=99999999999999999999", "attributes:1:3: error: integer literal 99999999999999999999 is "
                                   "out of range"},
        {"a=1x", "attributes:1:4: error: unknown literal suffix 'x' (expected f, f16, f64, i32, i64, "
                 "i16, i8, u64, u32, u16 or u8)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        byocl_attrs c = {0, NULL};
        assert_int_not_equal(byocl_text_parse_attrs(m, bad[k].text, &c, &err), BYOCL_OK);
        assert_string_equal(err.msg, bad[k].msg);
    }

    /* The builder's string form goes through the same parser. */
    byocl_function *fn = byocl_module_add_function(m, "main", &err);
    int64_t d[] = {1, 3, 8, 8};
    byocl_type t = byocl_type_tensor(BYOCL_FLOAT32, 4, d);
    int x = byocl_function_add_param(fn, "x", &t, &err);
    int pool = byocl_function_add_call_str(fn, "nn.max_pool2d", &x, 1, "pool_size=[2, 2], strides=(2, 2)",
                                           &err);
    assert_true(pool >= 0);
    assert_int_equal(byocl_attrs_get_ints(byocl_node_attrs(fn, pool), "strides", &v), 2);
    assert_int_equal(v[0], 2);
    assert_int_equal(byocl_function_add_call_str(fn, "nn.max_pool2d", &x, 1, "pool_size=[2, 2", &err), -1);
    assert_string_equal(err.msg, "attributes:1:16: error: unexpected end of input, expected ']'");
    byocl_module_free(m);
}

/* --------------------------------------------------------------- errors */

static void test_syntax_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
        byocl_status status;
    } cases[] = {
        /* truncated input */
        {"def @main(%x: Tensor[(2), float32]) {\n  %0 = nn.relu(%x);\n",
         "t.relay:3:1: error: unexpected end of input, expected an expression", BYOCL_ERR_PARSE},
        {"def @main(%x: Tensor[(2), float32]) {\n  %0 = nn.relu(%x",
         "t.relay:2:18: error: unexpected end of input, expected ')'", BYOCL_ERR_PARSE},
        {"def @main(%x: Tensor[(2), float32]) {\n  nn.relu(%x)\n",
         "t.relay:3:1: error: unexpected end of input, expected '}'", BYOCL_ERR_PARSE},
        {"def @main(%x: Tensor[(2), flo", "t.relay:1:27: error: unknown dtype 'flo' (expected "
                                           "one of float32, float16, int32, int64, int8, uint8, bool, float64, int16, "
                                           "uint16, uint32, uint64, bfloat16)", BYOCL_ERR_PARSE},
        {"def @main(%x: Tensor[(2", "t.relay:1:24: error: unexpected end of input, expected ')'", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) {\n  %0 = nn.relu(%x;\n}",
         "t.relay:2:18: error: expected ')' but found ';'", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) {\n  %0 = nn.relu(%x)\n  %0\n}",
         "t.relay:3:3: error: expected ';' but found '%0'", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) {\n  /* never closed\n  %x\n}",
         "t.relay:2:3: error: unterminated comment", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) {\n  cast(%x, \"int32)\n}",
         "t.relay:2:12: error: unterminated string", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) { $ }", "t.relay:1:26: error: unexpected character '$'", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) { % }", "t.relay:1:26: error: expected a name after '%'", BYOCL_ERR_PARSE},
        {"main(%x: float32) { %x }", "t.relay:1:1: error: expected 'def' but found 'main'", BYOCL_ERR_PARSE},
        {"def @main(%x: Tensor[(2, 3), float32]) {\n  nn.pad(%x, 0f, pad_width=[[1, 1], [2]])\n}",
         "t.relay:2:37: error: expected a list of integers as long as the first (2)",
         BYOCL_ERR_PARSE},
        {"def main(%x: float32) { %x }",
         "t.relay:1:5: error: expected a function name like '@main' but found 'main'", BYOCL_ERR_PARSE},
        {"def @main(%x) { %x }",
         "t.relay:1:13: error: expected ':' and the parameter's type but found ')'", BYOCL_ERR_PARSE},
        {"def @main(%x: Tensor[(2, -1), float32]) { %x }",
         "t.relay:1:26: error: a dimension cannot be less than 0, found -1", BYOCL_ERR_PARSE},
        {"def @main(%x: Tensor[(1, 1, 1, 1, 1, 1, 1, 1, 1), float32]) { %x }",
         "t.relay:1:47: error: tensor rank above 8 is not supported", BYOCL_ERR_UNSUPPORTED},
        {"def @main(%x: float128) { %x }", "t.relay:1:15: error: unknown dtype 'float128' (expected "
                                           "one of float32, float16, int32, int64, int8, uint8, bool, float64, int16, "
                                           "uint16, uint32, uint64, bfloat16)", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) { let %y = %x; %y }",
         "t.relay:1:26: error: 'let' expressions are not supported (only calls, tuples and "
         "constants)", BYOCL_ERR_UNSUPPORTED},
        {"def @main(%x: float32) { nn.relu }",
         "t.relay:1:26: error: expected an expression but found 'nn.relu'", BYOCL_ERR_PARSE},
        {"def @main(%x: (float32, float32)) { %x.-1 }",
         "t.relay:1:40: error: a tuple index cannot be less than 0, found -1", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) { 3000000000 }",
         "t.relay:1:26: error: integer literal 3000000000 does not fit int32", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) { 300u8 }",
         "t.relay:1:26: error: integer literal 300 does not fit uint8", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) { add(%x, x=1, %x) }",
         "t.relay:1:39: error: expected 'key=value' after keyword attributes but found '%x'", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) { @f(%x, a=1) }",
         "t.relay:1:33: error: expected an argument but found 'a'", BYOCL_ERR_PARSE},
        {"def @main(%x: float32) { meta[relay.attrs.Conv2DAttrs][0] }",
         "t.relay:1:31: error: meta[relay.attrs.Conv2DAttrs] is not supported (only "
         "meta[relay.Constant][K])", BYOCL_ERR_UNSUPPORTED},
        {"def @main(%x: float32) { meta[relay.Constant][99999999999] }",
         "t.relay:1:47: error: a constant index cannot be more than 2147483647, found 99999999999",
         BYOCL_ERR_PARSE},
        {"#[version = 5]", "t.relay:1:13: error: expected a version string but found '5'", BYOCL_ERR_PARSE},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        assert_string_equal(parse_err(cases[k].text, cases[k].status), cases[k].msg);

    /* A NUL byte inside the text is a character like any other. */
    static const char with_nul[] = "def @main(%x: float32) {\n  %x\0\n}";
    byocl_module *m = NULL;
    byocl_error err;
    assert_int_equal(byocl_text_parse(with_nul, sizeof with_nul - 1, "t.relay", NULL, &m, &err),
                     BYOCL_ERR_PARSE);
    assert_string_equal(err.msg, "t.relay:2:5: error: unexpected character byte 0x00");
}

static void test_semantic_errors(void **state)
{
    (void)state;
    /* unknown op */
    assert_string_equal(parse_err("def @main(%x: float32) {\n  %0 = nn.foo(%x);\n  %0\n}",
                                  BYOCL_ERR_NOT_FOUND),
                        "t.relay:2:8: error: unknown op 'nn.foo'");
    /* wrong arity */
    assert_string_equal(parse_err("def @main(%x: float32) {\n  %0 = nn.relu(%x, %x);\n  %0\n}",
                                  BYOCL_ERR_INVALID),
                        "t.relay:2:8: error: nn.relu takes 1 argument but was given 2");
    assert_string_equal(parse_err("def @main(%x: float32) {\n  add(%x)\n}", BYOCL_ERR_INVALID),
                        "t.relay:2:3: error: add takes 2 arguments but was given 1");
    /* bad attribute value, unknown attribute, attribute given twice */
    assert_string_equal(
        parse_err("def @main(%x: Tensor[(1, 1, 4, 4), float32]) {\n"
                  "  nn.max_pool2d(%x, pool_size=\"big\")\n}",
                  BYOCL_ERR_INVALID),
        "t.relay:2:3: error: bad value for attribute 'pool_size' of nn.max_pool2d: expected an "
        "integer or a list of integers, got \"big\"");
    assert_string_equal(parse_err("def @main(%x: float32) {\n  nn.relu(%x, alpha=1f)\n}",
                                  BYOCL_ERR_INVALID),
                        "t.relay:2:3: error: nn.relu takes no attributes, but was given 'alpha'");
    assert_string_equal(parse_err("def @main(%x: float32) {\n  cast(%x, dtype=\"int8\", "
                                  "dtype=\"int8\")\n}",
                                  BYOCL_ERR_INVALID),
                        "t.relay:2:26: error: attribute 'dtype' is given twice");
    assert_string_equal(parse_err("def @main(%x: float32) {\n  cast(%x, \"int8\", \"int8\")\n}",
                                  BYOCL_ERR_PARSE),
                        "t.relay:2:20: error: expected an expression but found string \"int8\"");
    /* duplicate names */
    assert_string_equal(parse_err("def @main(%x: float32) {\n  %0 = nn.relu(%x);\n"
                                  "  %0 = nn.relu(%0);\n  %0\n}",
                                  BYOCL_ERR_INVALID),
                        "t.relay:3:3: error: '%0' is already defined at 2:3");
    assert_string_equal(parse_err("def @main(%x: float32, %x: float32) { %x }", BYOCL_ERR_INVALID),
                        "t.relay:1:24: error: '%x' is already defined at 1:11");
    assert_string_equal(parse_err("def @main(%x: float32) {\n  %x = nn.relu(%x);\n  %x\n}",
                                  BYOCL_ERR_INVALID),
                        "t.relay:2:3: error: '%x' is already defined at 1:11");
    assert_string_equal(parse_err("def @f(%x: float32) { %x }\ndef @f(%x: float32) { %x }",
                                  BYOCL_ERR_INVALID),
                        "t.relay:2:5: error: function '@f' is already defined");
    assert_string_equal(parse_err("def @f(%x: float32, A=1, A=2) { %x }", BYOCL_ERR_INVALID),
                        "t.relay:1:26: error: function attribute 'A' is given twice");
    /* unknown variable (also one bound later, and one of another function) */
    assert_string_equal(parse_err("def @main(%x: float32) {\n  %0 = add(%x, %y);\n  %0\n}",
                                  BYOCL_ERR_NOT_FOUND),
                        "t.relay:2:16: error: unknown variable '%y'");
    assert_string_equal(parse_err("def @main(%x: float32) {\n  %0 = add(%x, %1);\n"
                                  "  %1 = nn.relu(%x);\n  %0\n}",
                                  BYOCL_ERR_NOT_FOUND),
                        "t.relay:2:16: error: unknown variable '%1'");
    assert_string_equal(parse_err("def @f(%x: float32) { %x }\ndef @g(%y: float32) { %x }",
                                  BYOCL_ERR_NOT_FOUND),
                        "t.relay:2:23: error: unknown variable '%x'");
    assert_string_equal(parse_err("def @main(%x: float32) {\n  @nowhere(%x)\n}", BYOCL_ERR_NOT_FOUND),
                        "t.relay:2:3: error: unknown function '@nowhere'");
    /* nesting that would overflow the stack */
    char deep[4096];
    int n = snprintf(deep, sizeof deep, "def @main(%%x: float32) { ");
    for (int k = 0; k < 1000; k++)
        deep[n++] = '(';
    deep[n] = '\0';
    assert_string_equal(parse_err(deep, BYOCL_ERR_PARSE),
                        "t.relay:1:226: error: nesting deeper than 200 levels");
}

static void test_meta_constant_errors(void **state)
{
    (void)state;
    const char *text = "def @main(%x: Tensor[(1, 4), float32]) {\n"
                       "  add(%x, meta[relay.Constant][2])\n"
                       "}\n";
    assert_string_equal(parse_err(text, BYOCL_ERR_NOT_FOUND),
                        "t.relay:2:11: error: meta[relay.Constant][2] needs a parameter file with "
                        "'relay.Constant.2' or a #[metadata] section");
    byocl_params *meta = make_meta();
    assert_string_equal(parse_err_meta(text, meta, BYOCL_ERR_NOT_FOUND),
                        "t.relay:2:11: error: meta[relay.Constant][2] is missing: the parameter "
                        "file has no 'relay.Constant.2'");
    byocl_params_free(meta);
    char with_metadata[512];
    snprintf(with_metadata, sizeof with_metadata, "%s#[metadata]\n{\"root\": 1}\n", text);
    /* The section is read at the first meta constant (tests/test_text_metadata.c has the
     * rest). */
    assert_string_equal(parse_err(with_metadata, BYOCL_ERR_PARSE),
                        "t.relay:5:1: error: #[metadata] section: no \"nodes\"");
}

static void test_type_error_points_at_text(void **state)
{
    (void)state;
    byocl_module *m = parse_ok("def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4, 3), float32]) {\n"
                               "  %0 = nn.relu(%x);\n"
                               "  %1 = add(%0, %y);\n"
                               "  nn.relu(%1)\n"
                               "}\n");
    byocl_error err;
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_ERR_TYPE);
    assert_string_equal(err.msg, "in @main, %1 (add) at 3:8: cannot broadcast shapes (2, 3) and "
                                 "(4, 3): dimension 0 is 2 vs 4");
    byocl_module_free(m);
}

static void test_parse_file_errors(void **state)
{
    (void)state;
    byocl_module *m = (byocl_module *)0x1;
    byocl_error err;
    assert_int_equal(byocl_text_parse_file("/nonexistent/model.relay", NULL, &m, &err), BYOCL_ERR_IO);
    assert_null(m);
    assert_string_equal(err.msg, "cannot open '/nonexistent/model.relay': No such file or directory");

    /* A truncated copy of a fixture names the file. */
    const char *dir = ts_tmpdir("text");
    char path[4200];
    snprintf(path, sizeof path, "%s/truncated.relay", dir);
    size_t len;
    char *text = ts_read_file(ts_fixture("text/seed_graph.relay"), &len);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    const char *cut = strstr(text, "padding=[1, 1") + strlen("padding=[1, 1");
    fwrite(text, 1, (size_t)(cut - text), f); /* ends inside the conv2d's padding on line 6 */
    fclose(f);
    assert_int_equal(byocl_text_parse_file(path, NULL, &m, &err), BYOCL_ERR_PARSE);
    char want[4400];
    snprintf(want, sizeof want, "%s:6:39: error: unexpected end of input, expected ']'", path);
    assert_string_equal(err.msg, want);

    /* The CLI prints that line and nothing else, and exits 1. */
    char args[4300], *out = NULL, *errs = NULL;
    snprintf(args, sizeof args, "print '%s'", path);
    assert_int_equal(ts_run_cli(args, &out, &errs), 1);
    assert_string_equal(out, "");
    snprintf(want, sizeof want, "%s:6:39: error: unexpected end of input, expected ']'\n", path);
    assert_string_equal(errs, want);
    free(out);
    free(errs);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_graph),
        cmocka_unit_test(test_vgg_block_float16),
        cmocka_unit_test(test_vgg_block_corrected_named_bindings),
        cmocka_unit_test(test_resnet18_tvm_text),
        cmocka_unit_test(test_round_trip_partitioned_module),
        cmocka_unit_test(test_round_trip_fixtures),
        cmocka_unit_test(test_wide_int_literals),
        cmocka_unit_test(test_bfloat16),
        cmocka_unit_test(test_float_list_attribute),
        cmocka_unit_test(test_layer_norm_log_softmax),
        cmocka_unit_test(test_subpixel_attributes),
        cmocka_unit_test(test_int_rows_attribute),
        cmocka_unit_test(test_scalar_literals),
        cmocka_unit_test(test_float64),
        cmocka_unit_test(test_tuples_and_items),
        cmocka_unit_test(test_positional_attributes),
        cmocka_unit_test(test_names_and_comments),
        cmocka_unit_test(test_node_numbering),
        cmocka_unit_test(test_source_names_kept_or_renumbered),
        cmocka_unit_test(test_parse_attrs),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_semantic_errors),
        cmocka_unit_test(test_meta_constant_errors),
        cmocka_unit_test(test_type_error_points_at_text),
        cmocka_unit_test(test_parse_file_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
