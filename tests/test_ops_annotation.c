/* Op group "annotation": compiler_begin / compiler_end are typed identities on tensors
 * (and tuples) whose kernel copies (tests/gen/gen_ops_annotation.py), with a required
 * `compiler`. */
#include "ops_case.h"

#include "fixtures/ops/annotation_cases.h"

static const char *const annotation_ops[] = {"annotation.compiler_begin",
                                             "annotation.compiler_end"};

/* The output is a copy, not the input's storage. */
static void test_kernel_copies(void **state)
{
    (void)state;
    int64_t d2[] = {2};
    float x[] = {1, 2}, want[] = {1, 2};
    byocl_type t = byocl_type_tensor(BYOCL_FLOAT32, 1, d2);
    op_case c;
    op_case_build(&c, "annotation.compiler_end", &t, 1, false, "compiler=\"opencl\"");
    assert_int_equal(c.status, BYOCL_OK);
    byocl_tensor *in = ts_tensor_f32(1, d2, x), *out[1];
    int n_out;
    assert_int_equal(op_case_run(&c, &in, 1, out, 1, &n_out, NULL), BYOCL_OK);
    assert_ptr_not_equal(byocl_tensor_data(out[0]), byocl_tensor_data(in));
    ((float *)byocl_tensor_data(in))[0] = 9;
    ts_assert_f32_close(out[0], want, 2, 0, 0);
    op_tensors_free(out, n_out);
    byocl_tensor_unref(in);
    op_case_free(&c);
}

static void test_attribute_errors(void **state)
{
    (void)state;
    int64_t d2[] = {2};
    byocl_type t = byocl_type_tensor(BYOCL_FLOAT32, 1, d2);
    for (int i = 0; i < 2; i++) {
        const struct {
            const char *attrs;
            const char *fmt;
        } cases[] = {
            {"", "%s requires attribute 'compiler'"},
            {"compiler=\"\"", "bad value for attribute 'compiler' of %s: expected a target name "
                              "such as \"opencl\", got \"\""},
            {"compiler=1", "bad value for attribute 'compiler' of %s: expected a string, got 1"},
            {"target=\"opencl\"", "%s has no attribute 'target' (it has: compiler)"},
        };
        for (int k = 0; k < 4; k++) {
            char want[512];
            snprintf(want, sizeof want, cases[k].fmt, annotation_ops[i]);
            op_expect_build_error(annotation_ops[i], &t, 1, cases[k].attrs, BYOCL_ERR_INVALID,
                                  want);
        }
    }
}

/* A tuple (as TVM's passes annotate one: the tuple of a concatenate, a whole batch_norm)
 * passes through as it is: the result has the tuple's type and the kernel copies each
 * field. */
static void test_tuple_passes_through(void **state)
{
    (void)state;
    int64_t d2[] = {2};
    byocl_type types[] = {byocl_type_tensor(BYOCL_FLOAT32, 1, d2),
                          byocl_type_tensor(BYOCL_INT8, 0, NULL)};
    float x[] = {1.5f, -2};
    int8_t y[] = {-7};
    for (int i = 0; i < 2; i++) {
        op_case c;
        op_case_build(&c, annotation_ops[i], types, 2, true, "compiler=\"opencl\"");
        op_case_expect_ok(&c, annotation_ops[i]);
        char text[128];
        byocl_type_str(c.fn->nodes[c.call].type, text, sizeof text);
        assert_string_equal(text, "(Tensor[(2), float32], int8)");
        byocl_shape s0 = byocl_shape_make(0, NULL);
        byocl_tensor *in[2] = {ts_tensor_f32(1, d2, x),
                               byocl_tensor_from_data(BYOCL_INT8, &s0, y, NULL)};
        byocl_tensor *out[2];
        int n_out;
        assert_int_equal(op_case_run(&c, in, 2, out, 2, &n_out, NULL), BYOCL_OK);
        assert_int_equal(n_out, 2);
        ts_assert_f32_close(out[0], x, 2, 0, 0);
        assert_int_equal(((const int8_t *)byocl_tensor_cdata(out[1]))[0], -7);
        /* The kernel re-checks what it is given. */
        const byocl_node *call = &c.fn->nodes[c.call];
        byocl_error err = {0};
        assert_int_equal(call->op->ref(&call->attrs, (const byocl_tensor *const *)in, 2, out, 1,
                                       &err),
                         BYOCL_ERR_INVALID);
        assert_string_equal(err.msg, "annotation kernel: got 2 input and 1 output tensors; it "
                                     "passes each input through, so they must be as many");
        op_tensors_free(out, n_out);
        op_tensors_free(in, 2);
        op_case_free(&c);
    }
}

/* An annotated region in Relay text runs on the reference executor; the annotations pass
 * values through, and an integer division by zero inside fails with a message. */
static void test_annotated_text_on_reference_executor(void **state)
{
    (void)state;
    static const char text[] =
        "#[version = \"0.0.5\"]\n"
        "def @main(%a: Tensor[(3), int32], %b: Tensor[(3), int32]) {\n"
        "  %0 = annotation.compiler_begin(%a, compiler=\"opencl\");\n"
        "  %1 = annotation.compiler_begin(%b, compiler=\"opencl\");\n"
        "  %2 = divide(%0, %1);\n"
        "  annotation.compiler_end(%2, compiler=\"opencl\")\n"
        "}\n";
    byocl_module *m = op_parse_typed(text, "region.relay");
    int64_t d3[] = {3};
    byocl_shape s3 = byocl_shape_make(1, d3);
    const int32_t a[] = {7, -7, 9}, b[] = {2, 5, -3}, b_zero[] = {2, 0, -3};
    const int32_t want[] = {3, -1, -3}; /* C's (and TVM's) truncating division */
    byocl_tensor *in[] = {byocl_tensor_from_data(BYOCL_INT32, &s3, a, NULL),
                          byocl_tensor_from_data(BYOCL_INT32, &s3, b, NULL)};
    byocl_tensor **out = op_run_main(m, in, 2, 1);
    assert_memory_equal(byocl_tensor_cdata(out[0]), want, sizeof want);
    byocl_tensors_free(out, 1);

    memcpy(byocl_tensor_data(in[1]), b_zero, sizeof b_zero);
    byocl_error err = {0};
    int n_out = 0;
    assert_int_equal(byocl_reference_run(m, "main", in, 2, &out, &n_out, &err),
                     BYOCL_ERR_RUNTIME);
    ts_assert_contains(err.msg, "divide: integer division by zero at output element 1");
    op_tensors_free(in, 2);
    byocl_module_free(m);
}

static void test_ops_documented(void **state)
{
    (void)state;
    static const op_attr_spec compiler[] = {{"compiler", NULL}};
    for (int i = 0; i < 2; i++) {
        op_assert_schema(annotation_ops[i], compiler, N_ITEMS(compiler));
        assert_int_equal(byocl_op_attr_kind(byocl_op_find(annotation_ops[i]), 0), BYOCL_ATTR_STR);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_copies),
        cmocka_unit_test(test_attribute_errors),
        cmocka_unit_test(test_tuple_passes_through),
        cmocka_unit_test(test_annotated_text_on_reference_executor),
        cmocka_unit_test(test_ops_documented),
    };
    return op_run_suite("ops_annotation", annotation_cases, N_ITEMS(annotation_cases), tests,
                        N_ITEMS(tests));
}
