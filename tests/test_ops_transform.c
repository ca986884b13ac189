/* Op group "transform": reshape, transpose, nn.depth_to_space, nn.space_to_depth,
 * concatenate, split, squeeze, expand_dims and the reductions, checked against numpy (tests/gen/gen_ops_transform.py), and their error messages. */
#include "ops_case.h"

#include "fixtures/ops/transform_cases.h"

static const int64_t d23[] = {2, 3}, d26[] = {2, 6}, d234[] = {2, 3, 4}, d1312[] = {1, 3, 1, 2};

static byocl_type f32_type(int rank, const int64_t *dims)
{
    return byocl_type_tensor(BYOCL_FLOAT32, rank, dims);
}

/* op(x: type, attrs) must fail type inference with exactly `reason`. */
static void expect_type_error(const char *op, byocl_type type, const char *attrs,
                              const char *reason)
{
    op_expect_type_error(op, &type, 1, attrs, BYOCL_ERR_TYPE, reason);
}

/* Attribute errors surface when the call is built. */
static void expect_build_error(const char *op, byocl_type type, const char *attrs,
                               byocl_status status, const char *msg)
{
    op_expect_build_error(op, &type, 1, attrs, status, msg);
}

static void test_reshape_errors(void **state)
{
    (void)state;
    byocl_type t = f32_type(2, d23);
    expect_type_error("reshape", t, "newshape=[4, -1]",
                      "cannot reshape (2, 3) (6 elements) to (4, -1)");
    expect_type_error("reshape", t, "newshape=[4, 2]",
                      "cannot reshape (2, 3) (6 elements) to (4, 2) (8 elements)");
    expect_type_error("reshape", t, "newshape=[0, 0, 0]",
                      "newshape (0, 0, 0): 0 at position 2 copies an input dim, but the input "
                      "(2, 3) has only 2");
    expect_type_error("reshape", t, "newshape=[0, -1], allowzero=True",
                      "cannot reshape (2, 3) (6 elements) to (0, -1)");
    expect_build_error("reshape", t, "newshape=[-2, 3]", BYOCL_ERR_UNSUPPORTED,
                       "bad value for attribute 'newshape' of reshape: (-2, 3) uses TVM's special "
                       "value -2, which byocl does not support (use positive dims, 0 to copy and "
                       "-1 to infer)");
    expect_build_error("reshape", t, "newshape=[-1, -1]", BYOCL_ERR_INVALID,
                       "bad value for attribute 'newshape' of reshape: (-1, -1) has more than "
                       "one -1");
    expect_build_error("reshape", t, "newshape=[6, -5]", BYOCL_ERR_INVALID,
                       "bad value for attribute 'newshape' of reshape: (6, -5) contains -5");
    expect_build_error("reshape", t, "newshape=[1, 1, 1, 1, 1, 1, 1, 2, 3]",
                       BYOCL_ERR_UNSUPPORTED,
                       "bad value for attribute 'newshape' of reshape: (1, 1, 1, 1, 1, 1, 1, 2, "
                       "3) has 9 dims; at most 8 are supported");
    expect_build_error("reshape", t, "", BYOCL_ERR_INVALID,
                       "reshape requires attribute 'newshape'");
    /* a type can describe more elements than int64 counts */
    int64_t huge[] = {INT64_C(1) << 32, INT64_C(1) << 32};
    expect_type_error("reshape", f32_type(2, huge), "newshape=[-1]",
                      "the input shape (4294967296, 4294967296) has too many elements");
}

/* With allowzero, 0 is a zero-size dim; zero-size tensors reshape and copy nothing. */
static void test_reshape_allowzero(void **state)
{
    (void)state;
    int64_t d03[] = {0, 3}, d30[] = {3, 0};
    byocl_type t = f32_type(2, d03);
    op_case c;
    op_case_build(&c, "reshape", &t, 1, false, "newshape=[3, 0], allowzero=True");
    assert_int_equal(c.status, BYOCL_OK);
    byocl_type want = f32_type(2, d30);
    assert_true(byocl_type_equal(byocl_node_type(c.fn, c.call), &want));
    byocl_tensor *in = ts_tensor_f32(2, d03, NULL), *out[1];
    int n_out;
    assert_int_equal(op_case_run(&c, &in, 1, out, 1, &n_out, NULL), BYOCL_OK);
    op_tensors_free(out, n_out);
    byocl_tensor_unref(in);
    op_case_free(&c);
}

static void test_transpose_errors(void **state)
{
    (void)state;
    byocl_type t = f32_type(3, d234);
    expect_type_error("transpose", t, "axes=[0, 0, 1]",
                      "axes (0, 0, 1) is not a permutation: axis 0 appears twice");
    expect_type_error("transpose", t, "axes=[2, -1, 0]",
                      "axes (2, -1, 0) is not a permutation: axis 2 appears twice");
    expect_type_error("transpose", t, "axes=[0, 1]",
                      "axes (0, 1) has 2 entries but the input has rank 3");
    expect_type_error("transpose", t, "axes=[0, 1, 3]",
                      "axes (0, 1, 3): axis 3 is out of range for rank 3 (expected -3..2)");
}

/* depth_to_space and space_to_depth: attributes when the call is built, then rank and
 * divisibility by the block when it is typed. */
static void test_subpixel_errors(void **state)
{
    (void)state;
    static const int64_t d1623[] = {1, 6, 2, 3}, d18[] = {1, 8, 2, 2}, huge[] = {1, 4, 3, 3};
    byocl_type t6 = f32_type(4, d1623), t8 = f32_type(4, d18);
    static const char *const ops[] = {"nn.depth_to_space", "nn.space_to_depth"};
    for (size_t k = 0; k < N_ITEMS(ops); k++) {
        char want[256];
        snprintf(want, sizeof want,
                 "bad value for attribute 'block_size' of %s: 0 (expected 1 or more)", ops[k]);
        expect_build_error(ops[k], t8, "block_size=0", BYOCL_ERR_INVALID, want);
        snprintf(want, sizeof want,
                 "bad value for attribute 'layout' of %s: 'NHWC' (byocl supports \"NCHW\" "
                 "only)",
                 ops[k]);
        expect_build_error(ops[k], t8, "block_size=2, layout=\"NHWC\"", BYOCL_ERR_UNSUPPORTED,
                           want);
        snprintf(want, sizeof want, "%s: the input has rank 2; expected 4 (NCHW)", ops[k]);
        expect_type_error(ops[k], f32_type(2, d23), "block_size=2", want);
    }
    expect_build_error("nn.depth_to_space", t8, "block_size=-3", BYOCL_ERR_INVALID,
                       "bad value for attribute 'block_size' of nn.depth_to_space: -3 (expected "
                       "1 or more)");
    expect_build_error("nn.depth_to_space", t8, "block_size=2, mode=\"CDR\"", BYOCL_ERR_INVALID,
                       "bad value for attribute 'mode' of nn.depth_to_space: 'CDR' (expected "
                       "\"DCR\" or \"CRD\")");
    expect_build_error("nn.space_to_depth", t8, "block_size=2, mode=\"DCR\"", BYOCL_ERR_INVALID,
                       "nn.space_to_depth has no attribute 'mode' (it has: block_size, layout)");
    expect_type_error("nn.depth_to_space", t6, "block_size=2",
                      "nn.depth_to_space: the input (1, 6, 2, 3) has 6 channels, which do not "
                      "divide by block_size^2 (2^2)");
    expect_type_error("nn.depth_to_space", t8, "block_size=4000000000",
                      "nn.depth_to_space: the input (1, 8, 2, 2) has 8 channels, which do not "
                      "divide by block_size^2 (4000000000^2)");
    expect_type_error("nn.space_to_depth", t6, "block_size=2",
                      "nn.space_to_depth: the input (1, 6, 2, 3) has width 3, which does not "
                      "divide by block_size 2");
    expect_type_error("nn.space_to_depth", f32_type(4, huge), "block_size=2",
                      "nn.space_to_depth: the input (1, 4, 3, 3) has height 3, which does not "
                      "divide by block_size 2");
}

/* concatenate((%p0, %p1, ...), attrs) must fail with exactly `reason`. */
static void expect_concat_error(const byocl_type *types, int n, const char *attrs,
                                const char *reason)
{
    op_case c;
    op_case_build(&c, "concatenate", types, n, true, attrs);
    op_case_expect_error(&c, OP_AT_INFER, BYOCL_ERR_TYPE, reason);
    op_case_free(&c);
}

static void test_concatenate_errors(void **state)
{
    (void)state;
    int64_t d33[] = {3, 3}, d231[] = {2, 3, 1};
    byocl_type a = f32_type(2, d23);
    byocl_type pair_dtype[] = {a, byocl_type_tensor(BYOCL_INT32, 2, d23)};
    expect_concat_error(pair_dtype, 2, "", "tuple field 1 has dtype int32 but field 0 has float32");
    byocl_type pair_shape[] = {a, f32_type(2, d33)};
    expect_concat_error(pair_shape, 2, "axis=1",
                        "tuple field 1 has shape (3, 3) but field 0 has (2, 3); they must agree "
                        "on every axis but 1");
    byocl_type pair_rank[] = {a, a, f32_type(3, d231)};
    expect_concat_error(pair_rank, 3, "",
                        "tuple field 2 has shape (2, 3, 1) but field 0 has (2, 3); they must "
                        "agree on every axis but 0");
    byocl_type pair[] = {a, a};
    expect_concat_error(pair, 2, "axis=2", "axis 2 is out of range for rank 2 (expected -2..1)");
    expect_concat_error(pair, 2, "axis=-3", "axis -3 is out of range for rank 2 (expected -2..1)");
    byocl_type scalars[] = {f32_type(0, NULL), f32_type(0, NULL)};
    expect_concat_error(scalars, 2, "",
                        "axis 0 is out of range: the input is a scalar (rank 0)");
    expect_concat_error(NULL, 0, "", "the tuple of inputs is empty");
    int64_t big[] = {INT64_C(1) << 62};
    byocl_type bigs[] = {f32_type(1, big), f32_type(1, big)};
    expect_concat_error(bigs, 2, "", "the result's axis 0 overflows");

    /* a tensor where Relay wants a tuple */
    expect_type_error("concatenate", a, "axis=0",
                      "expects a tuple of tensors, got Tensor[(2, 3), float32]");
}

static void test_split_errors(void **state)
{
    (void)state;
    byocl_type t = f32_type(2, d26);
    expect_type_error("split", t, "indices_or_sections=4, axis=1",
                      "cannot split axis 1 of size 6 into 4 equal sections");
    expect_type_error("split", t, "indices_or_sections=0, axis=1",
                      "indices_or_sections=0: the number of sections must be positive");
    expect_type_error("split", t, "indices_or_sections=[3, 2], axis=1",
                      "split indices (3, 2) must be strictly increasing and within 1..5 (axis 1 "
                      "has size 6)");
    expect_type_error("split", t, "indices_or_sections=[0, 2], axis=-1",
                      "split indices (0, 2) must be strictly increasing and within 1..5 (axis 1 "
                      "has size 6)");
    expect_type_error("split", t, "indices_or_sections=[1, 2]",
                      "split indices (1, 2) must be strictly increasing and within 1..1 (axis 0 "
                      "has size 2)");
    expect_type_error("split", t, "indices_or_sections=2, axis=2",
                      "axis 2 is out of range for rank 2 (expected -2..1)");
    expect_build_error("split", t, "axis=1", BYOCL_ERR_INVALID,
                       "split requires attribute 'indices_or_sections'");
    byocl_type t_long = OP_TYPE(BYOCL_FLOAT32, 100000);
    op_expect_type_error("split", &t_long, 1, "indices_or_sections=100000", BYOCL_ERR_UNSUPPORTED,
                         "splitting into 100000 pieces; at most 65536 are supported");
}

/* split's result is a tuple; its fields can be taken apart and put back together. */
static void test_split_then_concatenate(void **state)
{
    (void)state;
    byocl_type t = f32_type(2, d26);
    byocl_error err = {0};
    byocl_module *m = byocl_module_new();
    byocl_function *fn = byocl_module_add_function(m, "main", &err);
    int x = byocl_function_add_param(fn, "x", &t, &err);
    int parts = byocl_function_add_call_str(fn, "split", &x, 1, "indices_or_sections=[1, 4], axis=1",
                                            &err);
    assert_true(parts >= 0);
    int fields[3];
    for (int k = 0; k < 3; k++)
        fields[2 - k] = byocl_function_add_getitem(fn, parts, k, &err);
    int tuple = byocl_function_add_tuple(fn, fields, 3, &err);
    int cat = byocl_function_add_call_str(fn, "concatenate", &tuple, 1, "axis=-1", &err);
    assert_true(cat >= 0);
    assert_int_equal(byocl_function_set_body(fn, cat, &err), BYOCL_OK);
    assert_int_equal(byocl_infer_types(m, &err), BYOCL_OK);
    char s[256];
    assert_string_equal(byocl_type_str(byocl_node_type(fn, parts), s, sizeof s),
                        "(Tensor[(2, 1), float32], Tensor[(2, 3), float32], "
                        "Tensor[(2, 2), float32])");
    assert_string_equal(byocl_type_str(byocl_node_type(fn, cat), s, sizeof s),
                        "Tensor[(2, 6), float32]");
    byocl_module_free(m);
}

/* Relay text as TVM prints it, run by the reference executor (values from numpy). */
static void test_text_pipeline_on_reference_executor(void **state)
{
    (void)state;
    static const char text[] =
        "#[version = \"0.0.5\"]\n"
        "def @main(%x: Tensor[(2, 6), float32], %y: Tensor[(2, 1), float32]) {\n"
        "  %0 = split(%x, indices_or_sections=[2, 5], axis=1);\n"
        "  %1 = (%0.2, %y, %0.0);\n"
        "  %2 = concatenate(%1, axis=1);\n"
        "  %3 = transpose(%2, axes=[1, 0]);\n"
        "  %4 = mean(%3, axis=[0], keepdims=True);\n"
        "  %5 = expand_dims(%4, axis=0);\n"
        "  (%5, %0.1)\n"
        "}\n";
    byocl_module *m = op_parse_typed(text, "pipeline.relay");
    char s[256];
    assert_string_equal(byocl_type_str(byocl_function_ret_type(byocl_module_find(m, "main")), s,
                                       sizeof s),
                        "(Tensor[(1, 1, 2), float32], Tensor[(2, 3), float32])");
    byocl_tensor *in[] = {gen_array_tensor(&pipeline_x), gen_array_tensor(&pipeline_y)};
    byocl_tensor **out = op_run_main(m, in, 2, 2);
    byocl_tensor *want0 = gen_array_tensor(&pipeline_out);
    byocl_tensor *want1 = gen_array_tensor(&pipeline_piece1);
    ts_assert_tensor_close(out[0], want0, 1e-6, 0);
    assert_tensor_bytes_equal(out[1], want1, "split piece 1");
    byocl_tensor_unref(want0);
    byocl_tensor_unref(want1);
    byocl_tensors_free(out, 2);
    op_tensors_free(in, 2);
    byocl_module_free(m);
}

static void test_squeeze_errors(void **state)
{
    (void)state;
    byocl_type t = f32_type(4, d1312);
    expect_type_error("squeeze", t, "axis=[1]",
                      "axis 1 has size 3; only axes of size 1 can be squeezed");
    expect_type_error("squeeze", t, "axis=[0, -4]", "axis 0 is listed twice");
    expect_type_error("squeeze", t, "axis=[4]",
                      "axis 4 is out of range for rank 4 (expected -4..3)");
}

static void test_expand_dims_errors(void **state)
{
    (void)state;
    byocl_type t = f32_type(2, d23);
    expect_type_error("expand_dims", t, "axis=3",
                      "axis 3 is out of range for rank 2 (expected -3..2)");
    expect_type_error("expand_dims", t, "axis=-4",
                      "axis -4 is out of range for rank 2 (expected -3..2)");
    expect_build_error("expand_dims", t, "axis=0, num_newaxis=-1", BYOCL_ERR_INVALID,
                       "bad value for attribute 'num_newaxis' of expand_dims: expected 0..8, got "
                       "-1");
    expect_build_error("expand_dims", t, "", BYOCL_ERR_INVALID,
                       "expand_dims requires attribute 'axis'");
    byocl_type t7 = OP_TYPE(BYOCL_FLOAT32, 1, 1, 1, 1, 1, 2, 3);
    op_expect_type_error("expand_dims", &t7, 1, "axis=0, num_newaxis=2", BYOCL_ERR_UNSUPPORTED,
                         "the result would have rank 9; at most 8 is supported");
}

static void test_mean_errors(void **state)
{
    (void)state;
    byocl_type t = f32_type(3, d234);
    expect_type_error("mean", t, "axis=[1, 1]", "axis 1 is listed twice");
    expect_type_error("mean", t, "axis=[-1, 2], exclude=True", "axis 2 is listed twice");
    expect_type_error("mean", t, "axis=3", "axis 3 is out of range for rank 3 (expected -3..2)");
    expect_build_error("mean", t, "axis=1.5f", BYOCL_ERR_INVALID,
                       "bad value for attribute 'axis' of mean: expected an integer or a list of "
                       "integers, got 1.5f");
}

/* Averaging over an empty axis: NaN for floats (as numpy), an error for integers. */
static void test_mean_over_empty_axis(void **state)
{
    (void)state;
    int64_t d03[] = {0, 3}, d3[] = {3};
    for (int is_int = 0; is_int < 2; is_int++) {
        byocl_dtype dtype = is_int ? BYOCL_INT32 : BYOCL_FLOAT32;
        byocl_type t = byocl_type_tensor(dtype, 2, d03);
        op_case c;
        op_case_build(&c, "mean", &t, 1, false, "axis=0");
        assert_int_equal(c.status, BYOCL_OK);
        byocl_type want = byocl_type_tensor(dtype, 1, d3);
        assert_true(byocl_type_equal(byocl_node_type(c.fn, c.call), &want));
        byocl_shape s = byocl_shape_make(2, d03);
        byocl_tensor *in = byocl_tensor_new(dtype, &s, NULL), *out[1];
        int n_out;
        byocl_error err = {0};
        byocl_status st = op_case_run(&c, &in, 1, out, 1, &n_out, &err);
        if (is_int) {
            assert_int_equal(st, BYOCL_ERR_RUNTIME);
            assert_string_equal(err.msg, "mean: integer mean over zero elements (a reduced "
                                         "axis has size 0)");
        } else {
            assert_int_equal(st, BYOCL_OK);
            for (int i = 0; i < 3; i++)
                assert_true(isnan(byocl_tensor_get(out[0], i)));
        }
        op_tensors_free(out, n_out);
        byocl_tensor_unref(in);
        op_case_free(&c);
    }
}

static void test_reduce_errors(void **state)
{
    (void)state;
    byocl_type t = f32_type(3, d234);
    static const char *const ops[] = {"sum", "prod", "max", "min", "argmax", "argmin"};
    for (size_t k = 0; k < N_ITEMS(ops); k++) {
        expect_type_error(ops[k], t, "axis=[0, -3]", "axis 0 is listed twice");
        expect_type_error(ops[k], t, "axis=-4",
                          "axis -4 is out of range for rank 3 (expected -3..2)");
    }
    expect_build_error("argmax", t, "select_last_index=2.5f", BYOCL_ERR_INVALID,
                       "bad value for attribute 'select_last_index' of argmax: expected True or "
                       "False, got 2.5f");
    expect_build_error("sum", t, "select_last_index=True", BYOCL_ERR_INVALID,
                       "sum has no attribute 'select_last_index' (it has: axis, keepdims, "
                       "exclude)");
}

/* Runs `op` with `attrs` on one (n)-element float32 or int32 vector (values `v`) and
 * returns the status; the one output element goes to *got. */
static byocl_status run_reduce(const char *op, byocl_dtype dtype, const double *v, int64_t n,
                               const char *attrs, double *got, byocl_error *err)
{
    byocl_type t = byocl_type_tensor(dtype, 1, &n);
    op_case c;
    op_case_build(&c, op, &t, 1, false, attrs);
    assert_int_equal(c.status, BYOCL_OK);
    byocl_shape s = byocl_shape_make(1, &n);
    byocl_tensor *in = byocl_tensor_new(dtype, &s, NULL), *out[1];
    for (int64_t i = 0; i < n; i++)
        byocl_tensor_set(in, i, v[i]);
    int n_out = 0;
    byocl_status st = op_case_run(&c, &in, 1, out, 1, &n_out, err);
    if (st == BYOCL_OK)
        *got = byocl_tensor_get(out[0], 0);
    op_tensors_free(out, n_out);
    byocl_tensor_unref(in);
    op_case_free(&c);
    return st;
}

/* Over no elements: sum 0 and prod 1 (numpy's identities); max, min, argmax and argmin
 * have no result and fail at run time, for floats and integers alike. */
static void test_reduce_over_empty_axis(void **state)
{
    (void)state;
    double got = -1;
    byocl_error err = {0};
    for (int is_int = 0; is_int < 2; is_int++) {
        byocl_dtype dtype = is_int ? BYOCL_INT32 : BYOCL_FLOAT32;
        assert_int_equal(run_reduce("sum", dtype, NULL, 0, "keepdims=True", &got, &err), BYOCL_OK);
        assert_true(got == 0);
        assert_int_equal(run_reduce("prod", dtype, NULL, 0, "", &got, &err), BYOCL_OK);
        assert_true(got == 1);
        static const char *const ops[] = {"max", "min", "argmax", "argmin"};
        for (size_t k = 0; k < N_ITEMS(ops); k++) {
            assert_int_equal(run_reduce(ops[k], dtype, NULL, 0, "axis=0", &got, &err),
                             BYOCL_ERR_RUNTIME);
            char want[160];
            snprintf(want, sizeof want,
                     "%s: %s over zero elements has no result (a reduced axis has size 0)",
                     ops[k], ops[k]);
            assert_string_equal(err.msg, want);
        }
    }
}

/* NaN wins max and min, and argmax/argmin give its (first) position, as numpy does. */
static void test_reduce_nan(void **state)
{
    (void)state;
    double v[] = {1.0, NAN, 7.0, NAN, -3.0}, got = 0;
    byocl_error err = {0};
    assert_int_equal(run_reduce("max", BYOCL_FLOAT32, v, 5, "", &got, &err), BYOCL_OK);
    assert_true(isnan(got));
    assert_int_equal(run_reduce("min", BYOCL_FLOAT32, v, 5, "", &got, &err), BYOCL_OK);
    assert_true(isnan(got));
    assert_int_equal(run_reduce("argmax", BYOCL_FLOAT32, v, 5, "", &got, &err), BYOCL_OK);
    assert_true(got == 1);
    assert_int_equal(run_reduce("argmin", BYOCL_FLOAT32, v, 5, "select_last_index=True", &got,
                                &err),
                     BYOCL_OK);
    assert_true(got == 1);
}

/* Kernels refuse outputs that do not match the op's type instead of overrunning them. */
static void test_kernels_reject_mismatched_tensors(void **state)
{
    (void)state;
    int64_t d32[] = {3, 2}, d22[] = {2, 2};
    op_case c;
    byocl_type t = f32_type(2, d23);
    op_case_build(&c, "transpose", &t, 1, false, "");
    const byocl_node *node = &c.fn->nodes[c.call];
    byocl_tensor *in = ts_tensor_f32(2, d23, NULL), *bad = ts_tensor_f32(2, d23, NULL);
    byocl_tensor *good = ts_tensor_f32(2, d32, NULL);
    const byocl_tensor *ins[] = {in};
    byocl_error err = {0};
    assert_int_equal(node->op->ref(&node->attrs, ins, 1, &bad, 1, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "transpose kernel: output shape (2, 3), expected (3, 2)");
    assert_int_equal(node->op->ref(&node->attrs, ins, 1, &good, 1, &err), BYOCL_OK);
    op_case_free(&c);

    op_case_build(&c, "split", &t, 1, false, "indices_or_sections=3, axis=1");
    node = &c.fn->nodes[c.call];
    byocl_tensor *two[] = {ts_tensor_f32(2, d22, NULL), ts_tensor_f32(2, d22, NULL)};
    assert_int_equal(node->op->ref(&node->attrs, ins, 1, two, 2, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg,
                        "split kernel: got 1 input and 2 output tensors, expected 1 and 3");
    op_tensors_free(two, 2);
    op_case_free(&c);

    byocl_tensor_unref(in);
    byocl_tensor_unref(bad);
    byocl_tensor_unref(good);
}

static void test_ops_documented(void **state)
{
    (void)state;
    const char *names[] = {"reshape", "transpose", "nn.depth_to_space", "nn.space_to_depth",
                           "concatenate", "split", "squeeze", "expand_dims", "sum", "mean", "prod", "max", "min", "argmax",
                           "argmin"};
    assert_ops_documented(names, N_ITEMS(names));
    static const op_attr_spec mean[] = {{"axis", "None"}, {"keepdims", "False"},
                                        {"exclude", "False"}};
    static const op_attr_spec arg[] = {{"axis", "None"}, {"keepdims", "False"},
                                       {"exclude", "False"}, {"select_last_index", "False"}};
    static const char *const reductions[] = {"sum", "prod", "max", "min"};
    for (size_t k = 0; k < N_ITEMS(reductions); k++)
        op_assert_schema(reductions[k], mean, N_ITEMS(mean));
    op_assert_schema("argmax", arg, N_ITEMS(arg));
    op_assert_schema("argmin", arg, N_ITEMS(arg));
    static const op_attr_spec split[] = {{"indices_or_sections", NULL}, {"axis", "0"}};
    static const op_attr_spec expand_dims[] = {{"axis", NULL}, {"num_newaxis", "1"}};
    op_assert_schema("mean", mean, N_ITEMS(mean));
    op_assert_schema("split", split, N_ITEMS(split));
    op_assert_schema("expand_dims", expand_dims, N_ITEMS(expand_dims));
    static const op_attr_spec d2s[] = {{"block_size", "1"}, {"layout", "\"NCHW\""},
                                       {"mode", "\"DCR\""}};
    op_assert_schema("nn.depth_to_space", d2s, N_ITEMS(d2s));
    op_assert_schema("nn.space_to_depth", d2s, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reshape_errors),
        cmocka_unit_test(test_reshape_allowzero),
        cmocka_unit_test(test_transpose_errors),
        cmocka_unit_test(test_subpixel_errors),
        cmocka_unit_test(test_concatenate_errors),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_split_then_concatenate),
        cmocka_unit_test(test_text_pipeline_on_reference_executor),
        cmocka_unit_test(test_squeeze_errors),
        cmocka_unit_test(test_expand_dims_errors),
        cmocka_unit_test(test_mean_errors),
        cmocka_unit_test(test_mean_over_empty_axis),
        cmocka_unit_test(test_reduce_errors),
        cmocka_unit_test(test_reduce_over_empty_axis),
        cmocka_unit_test(test_reduce_nan),
        cmocka_unit_test(test_kernels_reject_mismatched_tensors),
        cmocka_unit_test(test_ops_documented),
    };
    return op_run_suite("ops_transform", transform_cases, N_ITEMS(transform_cases), tests,
                        N_ITEMS(tests));
}
