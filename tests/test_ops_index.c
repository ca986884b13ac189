/* Op group "index": strided_slice, take, gather, broadcast_to, arange, shape_of, trilu,
 * cumsum, scatter_elements, scatter_nd, gather_nd, topk, one_hot and nn.pad,
 * checked against numpy (tests/gen/gen_ops_index.py), and their error messages. */
#include "ops_case.h"

#include "fixtures/ops/index_cases.h"

static const int64_t d23[] = {2, 3}, d2[] = {2};

static void test_type_errors(void **state)
{
    (void)state;
    byocl_type x = byocl_type_tensor(BYOCL_FLOAT32, 2, d23);
    byocl_type xi[] = {x, byocl_type_tensor(BYOCL_INT64, 1, d2)};
    byocl_type xf[] = {x, byocl_type_tensor(BYOCL_FLOAT32, 1, d2)};
    op_expect_type_error("strided_slice", &x, 1, "begin=[0, 0, 0], end=[1, 1, 1]", BYOCL_ERR_TYPE,
                         "strided_slice: begin has 3 values but the input has rank 2");
    op_expect_type_error("strided_slice", &x, 1, "begin=[0, 0], end=[1, 1], axes=[1, -1]",
                         BYOCL_ERR_TYPE, "strided_slice: axis 1 is sliced twice");
    op_expect_type_error("broadcast_to", &x, 1, "shape=[4, 3]", BYOCL_ERR_TYPE,
                         "cannot broadcast shapes (2, 3) and (4, 3): dimension 0 is 2 vs 4");
    op_expect_type_error("take", xi, 2, "axis=2", BYOCL_ERR_TYPE,
                         "take: axis 2 is out of range for rank 2 (expected -2..1)");
    op_expect_type_error("take", xf, 2, "", BYOCL_ERR_TYPE,
                         "take: the indices are float32; expected an integer dtype");
    op_expect_type_error("take", xi, 2, "axis=1, batch_dims=2", BYOCL_ERR_TYPE,
                         "take: batch_dims 2 is out of range for indices of rank 1 and axis 1 "
                         "(expected -1..1)");
    op_expect_type_error("take", xi, 2, "batch_dims=1", BYOCL_ERR_TYPE,
                         "take: batch_dims 1 needs an axis (None takes from the flattened data)");
    byocl_type xb[] = {x, byocl_type_tensor(BYOCL_INT64, 1, (int64_t[]){4})};
    op_expect_type_error("take", xb, 2, "axis=1, batch_dims=1", BYOCL_ERR_TYPE,
                         "take: data (2, 3) and indices (4) differ in batch axis 0 "
                         "(batch_dims 1)");
    byocl_type k64 = byocl_type_tensor(BYOCL_INT64, 0, NULL);
    byocl_type f32 = byocl_type_tensor(BYOCL_FLOAT32, 0, NULL);
    byocl_type v = byocl_type_tensor(BYOCL_FLOAT32, 1, d2);
    op_expect_type_error("trilu", (byocl_type[]){v, k64}, 2, "", BYOCL_ERR_TYPE,
                         "trilu: the input has rank 1; expected at least 2 (matrices)");
    op_expect_type_error("trilu", (byocl_type[]){x, f32}, 2, "", BYOCL_ERR_TYPE,
                         "trilu: k is float32; expected an integer");
    op_expect_type_error("trilu", (byocl_type[]){x, v}, 2, "", BYOCL_ERR_TYPE,
                         "trilu: k is (2); expected a scalar");
    /* arange's result shape needs its arguments' values: parameters are refused */
    op_expect_type_error("arange", (byocl_type[]){f32, f32, f32}, 3, "", BYOCL_ERR_UNSUPPORTED,
                         "arange: start is not a constant; the result's shape needs start, "
                         "stop and step when compiling");
    op_expect_type_error("arange", (byocl_type[]){f32, v, f32}, 3, "", BYOCL_ERR_TYPE,
                         "arange: stop is (2); expected a scalar");
    op_expect_type_error("cumsum", &x, 1, "axis=2", BYOCL_ERR_TYPE,
                         "cumsum: axis 2 is out of range for rank 2 (expected -2..1)");
    op_expect_type_error("gather", xi, 2, "axis=0", BYOCL_ERR_TYPE,
                         "gather: indices (2) do not fit data (2, 3) (same rank, no larger off "
                         "axis 0)");
    static const int64_t d13[] = {1, 3}, d32[] = {3, 2}, d12[] = {1, 2};
    byocl_type s3[] = {x, byocl_type_tensor(BYOCL_INT64, 2, d13),
                       byocl_type_tensor(BYOCL_FLOAT32, 2, d32)};
    op_expect_type_error("scatter_elements", s3, 3, "", BYOCL_ERR_TYPE,
                         "scatter_elements: indices (1, 3) and updates (3, 2) differ in shape");
    s3[2] = byocl_type_tensor(BYOCL_INT32, 2, d13);
    op_expect_type_error("scatter_elements", s3, 3, "", BYOCL_ERR_TYPE,
                         "scatter_elements: the updates are int32 but the data float32");
    byocl_type g[] = {x, byocl_type_tensor(BYOCL_INT32, 2, d32)};
    op_expect_type_error("gather_nd", g, 2, "", BYOCL_ERR_TYPE,
                         "gather_nd: indices (3, 2) index 3 axes but data (2, 3) has 2 after the "
                         "batch axes");
    g[1] = byocl_type_tensor(BYOCL_INT32, 2, d12);
    op_expect_type_error("gather_nd", g, 2, "index_rank=2", BYOCL_ERR_TYPE,
                         "gather_nd: index_rank is 2 but the index depth (the indices' first "
                         "dimension) is 1");
    byocl_type scalar = byocl_type_tensor(BYOCL_FLOAT32, 0, NULL);
    op_expect_type_error("topk", &scalar, 1, "", BYOCL_ERR_TYPE,
                         "topk: the input is a scalar; expected rank 1 or more");
    op_expect_type_error("topk", &x, 1, "axis=-3", BYOCL_ERR_TYPE,
                         "topk: axis -3 is out of range for rank 2 (expected -2..1)");
    byocl_type oh[] = {byocl_type_tensor(BYOCL_INT64, 2, d23), scalar, scalar};
    op_expect_type_error("one_hot", oh, 3, "depth=4, axis=3", BYOCL_ERR_TYPE,
                         "one_hot: axis 3 is out of range for indices of rank 2 (expected "
                         "-1..2)");
    oh[2] = v;
    op_expect_type_error("one_hot", oh, 3, "depth=4", BYOCL_ERR_TYPE,
                         "one_hot: off_value is (2); expected a scalar");
    oh[0] = byocl_type_tensor(BYOCL_BOOL, 2, d23);
    op_expect_type_error("one_hot", oh, 3, "depth=4", BYOCL_ERR_TYPE,
                         "one_hot: the indices are bool; expected a number dtype");
    byocl_type pd[] = {x, scalar}; /* x: (2, 3) */
    op_expect_type_error("nn.pad", pd, 2, "pad_width=[[1, 1]]", BYOCL_ERR_TYPE,
                         "nn.pad: pad_width has 1 pair for an input of rank 2 (expected one "
                         "[before, after] pair per axis)");
    op_expect_type_error("nn.pad", pd, 2, "pad_width=[[1, 1], [0, 3]], pad_mode=\"reflect\"",
                         BYOCL_ERR_TYPE,
                         "nn.pad: pad_mode \"reflect\" pads axis 1 of 3 cells by [0, 3]; each "
                         "width must be less than the axis' length");
    pd[1] = v;
    op_expect_type_error("nn.pad", pd, 2, "pad_width=[[1, 1], [0, 0]]", BYOCL_ERR_TYPE,
                         "nn.pad: the pad value is (2); expected a scalar");
}

static void test_attr_errors(void **state)
{
    (void)state;
    byocl_type x = byocl_type_tensor(BYOCL_FLOAT32, 2, d23);
    byocl_type xi[] = {x, byocl_type_tensor(BYOCL_INT64, 1, d2)};
    op_expect_build_error("strided_slice", &x, 1, "begin=[0], end=[1, 2]", BYOCL_ERR_INVALID,
                          "attributes 'begin' (1 values) and 'end' (2 values) of strided_slice "
                          "differ in length");
    op_expect_build_error("strided_slice", &x, 1, "begin=[0], end=[1], slice_mode=\"size\"",
                          BYOCL_ERR_UNSUPPORTED,
                          "bad value for attribute 'slice_mode' of strided_slice: 'size' (byocl "
                          "supports \"end\" only)");
    op_expect_type_error("strided_slice", &x, 1, "begin=[0], end=[1], strides=[0]",
                         BYOCL_ERR_INVALID,
                         "bad value for attribute 'strides' of strided_slice: a stride is 0");
    op_expect_build_error("take", xi, 2, "mode=\"raise\"", BYOCL_ERR_INVALID,
                          "bad value for attribute 'mode' of take: 'raise' (expected \"clip\", "
                          "\"wrap\" or \"fast\")");
    op_expect_build_error("broadcast_to", &x, 1, "shape=[2, -3]", BYOCL_ERR_INVALID,
                          "bad value for attribute 'shape' of broadcast_to: dim 1 is -3");
    byocl_type f32s[3] = {byocl_type_tensor(BYOCL_FLOAT32, 0, NULL),
                          byocl_type_tensor(BYOCL_FLOAT32, 0, NULL),
                          byocl_type_tensor(BYOCL_FLOAT32, 0, NULL)};
    op_expect_build_error("arange", f32s, 3, "dtype=\"int3\"", BYOCL_ERR_INVALID,
                          "bad value for attribute 'dtype' of arange: unknown dtype 'int3'");
    op_expect_build_error("cumsum", &x, 1, "dtype=\"bool\"", BYOCL_ERR_INVALID,
                          "bad value for attribute 'dtype' of cumsum: bool (expected a number "
                          "dtype)");
    op_expect_build_error("shape_of", &x, 1, "dtype=\"float32\"", BYOCL_ERR_INVALID,
                          "bad value for attribute 'dtype' of shape_of: float32 (expected int32 "
                          "or int64)");
    byocl_type s3[] = {x, byocl_type_tensor(BYOCL_INT64, 2, d23), x};
    op_expect_build_error("scatter_nd", s3, 3, "mode=\"replace\"", BYOCL_ERR_INVALID,
                          "bad value for attribute 'mode' of scatter_nd: 'replace' (expected "
                          "\"update\", \"add\", \"mul\", \"min\" or \"max\")");
    op_expect_build_error("gather_nd", xi, 2, "batch_dims=-1", BYOCL_ERR_INVALID,
                          "bad value for attribute 'batch_dims' of gather_nd: -1 (expected 0 or "
                          "more)");
    op_expect_build_error("topk", &x, 1, "dtype=\"float32\"", BYOCL_ERR_INVALID,
                          "bad value for attribute 'dtype' of topk: 'float32' (expected int32 or "
                          "int64)");
    byocl_type scalar = byocl_type_tensor(BYOCL_FLOAT32, 0, NULL);
    byocl_type oh[] = {byocl_type_tensor(BYOCL_INT64, 1, d2), scalar, scalar};
    op_expect_build_error("one_hot", oh, 3, "depth=-1", BYOCL_ERR_INVALID,
                          "bad value for attribute 'depth' of one_hot: -1 (expected 0 or more)");
    op_expect_build_error("one_hot", oh, 3, "depth=2, dtype=\"float31\"", BYOCL_ERR_INVALID,
                          "bad value for attribute 'dtype' of one_hot: unknown dtype 'float31'");
    byocl_type pd[] = {byocl_type_tensor(BYOCL_FLOAT32, 1, d2), scalar};
    op_expect_build_error("nn.pad", pd, 2, "pad_width=[[1, -2]]", BYOCL_ERR_INVALID,
                          "bad value for attribute 'pad_width' of nn.pad: after width -2 of axis 0 "
                          "is negative (nn.pad does not crop)");
    op_expect_build_error("nn.pad", pd, 2, "pad_width=[[1, 2]], pad_mode=\"wrap\"",
                          BYOCL_ERR_INVALID,
                          "bad value for attribute 'pad_mode' of nn.pad: 'wrap' (expected "
                          "\"constant\", \"edge\" or \"reflect\")");
    op_expect_build_error("nn.pad", pd, 2, "pad_width=[[1, 2, 3]]", BYOCL_ERR_INVALID,
                          "bad value for attribute 'pad_width' of nn.pad: expected a list of "
                          "[before, after] pairs, got [[1, 2, 3]]");
    op_expect_build_error("nn.pad", pd, 2, "pad_width=[1, 2, 3]", BYOCL_ERR_INVALID,
                          "bad value for attribute 'pad_width' of nn.pad: expected a list of "
                          "[before, after] pairs, got [1, 2, 3]");
}

/* The reference kernels refuse indices their mode has no answer for. */
static void test_index_out_of_range(void **state)
{
    (void)state;
    const char *text = "#[version = \"0.0.5\"]\n"
                       "def @main(%x: Tensor[(2, 3), float32], %i: Tensor[(1), int64]) {\n"
                       "  (take(%x, %i, axis=1, mode=\"fast\"), gather(%x, reshape(%i, "
                       "newshape=[1, 1]), axis=0))\n"
                       "}\n";
    byocl_module *m = op_parse_typed(text, "index.relay");
    const float xv[6] = {0};
    byocl_tensor *in[2] = {ts_tensor_f32(2, d23, xv), NULL};
    byocl_shape s1 = {.rank = 1, .dims = {1}};
    in[1] = byocl_tensor_new(BYOCL_INT64, &s1, NULL);
    ((int64_t *)byocl_tensor_data(in[1]))[0] = 3;
    byocl_error err = {0};
    byocl_tensor **out = NULL;
    int n_out = 0;
    assert_int_equal(byocl_reference_run(m, "main", in, 2, &out, &n_out, &err),
                     BYOCL_ERR_RUNTIME);
    ts_assert_contains(err.msg, "take: index 3 is out of range for an axis of 3");
    byocl_tensor_unref(in[0]);
    byocl_tensor_unref(in[1]);
    byocl_module_free(m);
}

/* gather_nd, scatter_nd and scatter_elements: an index below -n or at n and above is a
 * run-time error naming the op (negative ones count from the end). */
static void test_nd_index_out_of_range(void **state)
{
    (void)state;
    static const struct {
        const char *call, *msg;
    } calls[] = {
        {"gather_nd(%x, %i)", "gather_nd: index -3 is out of range for an axis of 2"},
        {"scatter_nd(%x, %i, %u)", "scatter_nd: index -3 is out of range for an axis of 2"},
        {"scatter_elements(%x, reshape(%i, newshape=[1, 1]), reshape(strided_slice(%u, "
         "begin=[0], end=[1]), newshape=[1, 1]))",
         "scatter_elements: index -3 is out of range for an axis of 2"},
    };
    for (size_t k = 0; k < N_ITEMS(calls); k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "#[version = \"0.0.5\"]\n"
                 "def @main(%%x: Tensor[(2, 3), float32], %%i: Tensor[(1), int64], "
                 "%%u: Tensor[(3), float32]) {\n  %s\n}\n",
                 calls[k].call);
        byocl_module *m = op_parse_typed(text, "nd.relay");
        const float xv[6] = {0};
        byocl_shape s1 = {.rank = 1, .dims = {1}}, s3 = {.rank = 1, .dims = {3}};
        byocl_tensor *in[3] = {ts_tensor_f32(2, d23, xv), byocl_tensor_new(BYOCL_INT64, &s1, NULL),
                               byocl_tensor_new(BYOCL_FLOAT32, &s3, NULL)};
        ((int64_t *)byocl_tensor_data(in[1]))[0] = -3;
        byocl_error err = {0};
        byocl_tensor **out = NULL;
        int n_out = 0;
        byocl_status st = byocl_reference_run(m, "main", in, 3, &out, &n_out, &err);
        if (st != BYOCL_ERR_RUNTIME)
            fail_msg("%s: status %d, %s", calls[k].call, (int)st, err.msg);
        ts_assert_contains(err.msg, calls[k].msg);
        for (int i = 0; i < 3; i++)
            byocl_tensor_unref(in[i]);
        byocl_module_free(m);
    }
}

static void test_ops_documented(void **state)
{
    (void)state;
    const char *names[] = {"strided_slice", "take", "gather", "broadcast_to", "arange",
                           "shape_of", "trilu", "cumsum", "scatter_elements", "scatter_nd",
                           "gather_nd", "topk", "one_hot", "nn.pad"};
    assert_ops_documented(names, N_ITEMS(names));
    static const op_attr_spec take[] = {{"axis", "None"}, {"mode", "\"clip\""}, {"batch_dims", "0"}};
    op_assert_schema("take", take, N_ITEMS(take));
    static const op_attr_spec topk[] = {{"k", "1"},
                                        {"axis", "-1"},
                                        {"ret_type", "\"both\""},
                                        {"is_ascend", "False"},
                                        {"dtype", "\"int64\""}};
    op_assert_schema("topk", topk, N_ITEMS(topk));
    static const op_attr_spec one_hot[] = {{"depth", NULL}, {"axis", "-1"}, {"dtype", "\"float32\""}};
    op_assert_schema("one_hot", one_hot, N_ITEMS(one_hot));
    static const op_attr_spec pad[] = {{"pad_width", NULL}, {"pad_mode", "\"constant\""}};
    op_assert_schema("nn.pad", pad, N_ITEMS(pad));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_errors),
        cmocka_unit_test(test_attr_errors),
        cmocka_unit_test(test_index_out_of_range),
        cmocka_unit_test(test_nd_index_out_of_range),
        cmocka_unit_test(test_ops_documented),
    };
    return op_run_suite("ops_index", index_cases, N_ITEMS(index_cases), tests, N_ITEMS(tests));
}
