/* ONNX import: small models made with onnx's helper API by tests/gen/gen_onnx.py (under
 * tests/fixtures/onnx/), run on the reference executor against numpy's results; the
 * Relay text they import to; shapes from --shape; binding by ONNX name; the exact errors
 * for what byocl refuses; the CLI's --shape and .pb inputs; the conformance runner. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Path of a fixture; a few stay valid at once (so that one printf can use two). */
static const char *fixture(const char *name)
{
    static char paths[4][4096];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, sizeof paths[0], "%s/%s", ts_fixture("onnx"), name);
    return path;
}

static byocl_tensor *npy(const char *name)
{
    byocl_error err = {0};
    byocl_tensor *t = NULL;
    if (byocl_npy_read(fixture(name), &t, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return t;
}

static byocl_module *load_ok(const char *name, const byocl_load_options *opt)
{
    byocl_error err = {0};
    byocl_module *m = NULL;
    if (byocl_load_model_opts(fixture(name), opt, &m, &err) != BYOCL_OK)
        fail_msg("loading %s: %s", name, err.msg);
    return m;
}

/* Loading fails with `status` and the message "<fixture path>: <msg>". */
static void expect_load_error(const char *name, const byocl_load_options *opt,
                              byocl_status status, const char *msg)
{
    byocl_error err = {0};
    byocl_module *m = (byocl_module *)0x1;
    assert_int_equal(byocl_load_model_opts(fixture(name), opt, &m, &err), status);
    assert_null(m);
    char want[4096];
    snprintf(want, sizeof want, "%s: %s", fixture(name), msg);
    assert_string_equal(err.msg, want);
}

/* Runs @main and returns its outputs (n_want of them). */
static byocl_tensor **run(const byocl_module *m, byocl_tensor *const *inputs, int n_inputs,
                          int n_want)
{
    byocl_error err = {0};
    byocl_tensor **outs = NULL;
    int n = 0;
    if (byocl_reference_run(m, "main", inputs, n_inputs, &outs, &n, &err) != BYOCL_OK)
        fail_msg("running: %s", err.msg);
    assert_int_equal(n, n_want);
    return outs;
}

static const byocl_input_shape cnn_shape = {.name = "input.1",
                                            .shape = {.rank = 4, .dims = {1, 3, 8, 8}}};

/* ------------------------------------------------------- small_cnn.onnx */

static const char small_cnn_text[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%input_1: Tensor[(1, 3, 8, 8), float32]) -> Tensor[(1, 5), float32] {\n"
    "  %0 = nn.conv2d(%input_1, meta[relay.Constant][0], padding=[1, 1, 1, 1], channels=4, "
    "kernel_size=[3, 3]);\n"
    "  %conv = nn.bias_add(%0, meta[relay.Constant][1]);\n"
    "  %1 = nn.batch_norm(%conv, meta[relay.Constant][2], meta[relay.Constant][3], "
    "meta[relay.Constant][4], meta[relay.Constant][5], epsilon=0.001f);\n"
    "  %bn = %1.0;\n"
    "  %relu = nn.relu(%bn);\n"
    "  %pool = nn.max_pool2d(%relu, pool_size=[2, 2], strides=[2, 2]);\n"
    "  %clip = clip(%pool, a_min=0f, a_max=6f);\n"
    "  %gap = nn.global_avg_pool2d(%clip);\n"
    "  %flat = nn.batch_flatten(%gap);\n"
    "  %2 = nn.dense(%flat, meta[relay.Constant][6]);\n"
    "  %fc = add(%2, meta[relay.Constant][7]);\n"
    "  nn.softmax(%fc, axis=1)\n"
    "}\n";

/* The zero Pad is absorbed by the Conv; initializers (listed as inputs too, as old
 * exporters did) are constants; "input.1" prints as %input_1; each node's value keeps the
 * ONNX node's name (%conv is the Conv's bias_add, %fc the Gemm's add); Clip's initializer bounds
 * are clip's attributes; Flatten(axis=1) is batch_flatten; Gemm is dense + add. */
static void test_small_cnn_text(void **state)
{
    (void)state;
    byocl_load_options opt = {.shapes = &cnn_shape, .n_shapes = 1};
    byocl_module *m = load_ok("small_cnn.onnx", &opt);
    byocl_print_options popt = {.show_types = false};
    char *text = byocl_text_print(m, &popt, NULL, NULL);
    assert_non_null(text);
    assert_string_equal(text, small_cnn_text);
    free(text);
    byocl_module_free(m);
}

static void test_small_cnn_numbers(void **state)
{
    (void)state;
    /* The Relay name works for --shape as well as the ONNX name. */
    byocl_input_shape by_relay_name = cnn_shape;
    by_relay_name.name = "input_1";
    byocl_load_options opt = {.shapes = &by_relay_name, .n_shapes = 1};
    byocl_module *m = load_ok("small_cnn.onnx", &opt);
    byocl_tensor *x = npy("small_cnn_x.npy"), *want = npy("small_cnn_y.npy");
    byocl_tensor **y = run(m, &x, 1, 1);
    ts_assert_tensor_close(y[0], want, 1e-5, 1e-6);
    byocl_tensors_free(y, 1);
    byocl_tensor_unref(x);
    byocl_tensor_unref(want);
    byocl_module_free(m);
}

/* Params bind a graph input by its ONNX name (it becomes a constant, its shape that of the
 * tensor) and replace initializers; anything else is an error. */
static void test_bind_by_onnx_name(void **state)
{
    (void)state;
    byocl_error err = {0};
    byocl_tensor *x = npy("small_cnn_x.npy"), *want = npy("small_cnn_y.npy");
    byocl_params *p = byocl_params_new();
    assert_int_equal(byocl_params_set(p, "input.1", x, &err), BYOCL_OK);
    byocl_module *m = NULL;
    assert_int_equal(byocl_load_model(fixture("small_cnn.onnx"), p, &m, &err), BYOCL_OK);
    assert_int_equal(byocl_function_num_params(byocl_module_find(m, "main")), 0);
    byocl_tensor **y = run(m, NULL, 0, 1);
    ts_assert_tensor_close(y[0], want, 1e-5, 1e-6);
    byocl_tensors_free(y, 1);
    byocl_module_free(m);

    /* An initializer replaced by zeros: the softmax of the bias alone. */
    byocl_shape s = byocl_shape_make(2, (int64_t[]){5, 4});
    byocl_tensor *zeros = byocl_tensor_new(BYOCL_FLOAT32, &s, &err);
    assert_int_equal(byocl_params_set(p, "fc.weight", zeros, &err), BYOCL_OK);
    byocl_tensor_unref(zeros);
    assert_int_equal(byocl_load_model(fixture("small_cnn.onnx"), p, &m, &err), BYOCL_OK);
    y = run(m, NULL, 0, 1);
    double sum = 0;
    for (int i = 0; i < 5; i++)
        sum += byocl_tensor_get(y[0], i);
    assert_true(sum > 0.999999 && sum < 1.000001);
    assert_true(byocl_tensor_get(y[0], 0) != byocl_tensor_get(want, 0));
    byocl_tensors_free(y, 1);
    byocl_module_free(m);
    byocl_params_free(p);

    p = byocl_params_new();
    assert_int_equal(byocl_params_set(p, "nope", x, &err), BYOCL_OK);
    byocl_load_options opt = {.params = p};
    expect_load_error("small_cnn.onnx", &opt, BYOCL_ERR_NOT_FOUND,
                      "params member 'nope' is neither an input nor an initializer of the model");
    byocl_params_free(p);
    p = byocl_params_new();
    assert_int_equal(byocl_params_set(p, "conv.bias", x, &err), BYOCL_OK);
    opt.params = p;
    expect_load_error("small_cnn.onnx", &opt, BYOCL_ERR_TYPE,
                      "params member 'conv.bias': the initializer is (4) of float32, got "
                      "Tensor[(1, 3, 8, 8), float32]");
    byocl_params_free(p);
    byocl_tensor_unref(x);
    byocl_tensor_unref(want);
}

/* ------------------------------------------------------- shapes */

static void test_shapes(void **state)
{
    (void)state;
    expect_load_error("small_cnn.onnx", NULL, BYOCL_ERR_INVALID,
                      "input 'input.1' (batch, 3, 8, 8) has symbolic dimension 0 ('batch'); "
                      "give its shape with --shape input.1=DIMS, e.g. --shape "
                      "input.1=1x3x8x8");
    byocl_input_shape s = cnn_shape;
    byocl_load_options opt = {.shapes = &s, .n_shapes = 1};
    s.shape.rank = 3;
    expect_load_error("small_cnn.onnx", &opt, BYOCL_ERR_INVALID,
                      "the shape given for input 'input.1' has rank 3, but the model declares "
                      "rank 4 (batch, 3, 8, 8)");
    s = cnn_shape;
    s.shape.dims[1] = 4;
    expect_load_error("small_cnn.onnx", &opt, BYOCL_ERR_INVALID,
                      "the shape given for input 'input.1' has 4 at dimension 1, but the model "
                      "fixes it to 3 (batch, 3, 8, 8)");
    s = cnn_shape;
    s.name = "conv.weight"; /* an initializer, not an input */
    expect_load_error("small_cnn.onnx", &opt, BYOCL_ERR_NOT_FOUND,
                      "a shape is given for 'conv.weight', which is not an input of the model "
                      "(its inputs: input.1)");
    /* A batch of two. */
    s = cnn_shape;
    s.shape.dims[0] = 2;
    byocl_module *m = load_ok("small_cnn.onnx", &opt);
    const byocl_type *t = byocl_function_ret_type(byocl_module_find(m, "main"));
    char buf[128];
    assert_string_equal(byocl_type_str(t, buf, sizeof buf), "Tensor[(2, 5), float32]");
    byocl_module_free(m);

    /* --shape is for ONNX models only. */
    byocl_error err = {0};
    assert_int_equal(byocl_load_model_opts("builtin:seed", &opt, &m, &err), BYOCL_ERR_INVALID);
    assert_string_equal(err.msg, "builtin:seed: input shapes (--shape) apply to ONNX models only");
}

static void test_shape_parse(void **state)
{
    (void)state;
    byocl_error err = {0};
    char *name;
    byocl_shape s;
    assert_int_equal(byocl_input_shape_parse("input.1=1x3x224x224", &name, &s, &err), BYOCL_OK);
    assert_string_equal(name, "input.1");
    assert_int_equal(s.rank, 4);
    assert_int_equal(s.dims[0], 1);
    assert_int_equal(s.dims[3], 224);
    free(name);
    assert_int_equal(byocl_input_shape_parse("a=b=2,0", &name, &s, &err), BYOCL_OK);
    assert_string_equal(name, "a=b"); /* the last '=' separates */
    assert_int_equal(s.rank, 2);
    assert_int_equal(s.dims[1], 0);
    free(name);
    static const char *const bad[] = {"x", "=1x2", "x=", "x=1xx2", "x=-1", "x=1x2y"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        name = (char *)0x1;
        assert_int_equal(byocl_input_shape_parse(bad[i], &name, &s, &err), BYOCL_ERR_INVALID);
        assert_null(name);
    }
    byocl_input_shape_parse("x", &name, &s, &err);
    assert_string_equal(err.msg, "'x': expected NAME=DIMS, e.g. data=1x3x224x224");
    byocl_input_shape_parse("x=1xx2", &name, &s, &err);
    assert_string_equal(err.msg, "'x=1xx2': the dimensions must be non-negative integers "
                                 "separated by 'x', e.g. data=1x3x224x224");
    byocl_input_shape_parse("x=1x1x1x1x1x1x1x1x1", &name, &s, &err);
    assert_string_equal(err.msg, "'x=1x1x1x1x1x1x1x1x1': more than 8 dimensions");
}

/* ------------------------------------------------------- names */

static void test_relay_names(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"input.1", "input_1"}, {"data", "data"},         {"0", "_0"},
        {"a.b", "a.b"},         {"w/conv:0", "w/conv:0"}, {"x-", "x_"},
        {"", "_"},              {"1abc", "_1abc"},        {"a..b", "a_.b"},
        {"a/-b", "a_-b"},       {"é", "___"},             {"-x", "_-x"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_string_equal(byocl_onnx_relay_name(cases[i][0], buf, sizeof buf), cases[i][1]);
    assert_string_equal(byocl_onnx_relay_name("abcdef", buf, 4), "abc"); /* truncated */
}

/* Inputs "a_1", "a.1", "0", "w/conv:0" become %a_1, %a_1_2 (deduplicated), %_0 and
 * %w/conv:0; the text reads back to the same module. */
static void test_odd_names_round_trip(void **state)
{
    (void)state;
    byocl_module *m = load_ok("odd_names.onnx", NULL);
    const byocl_function *fn = byocl_module_find(m, "main");
    static const char *const want[] = {"a_1", "a_1_2", "_0", "w/conv:0"};
    assert_int_equal(byocl_function_num_params(fn), 4);
    for (int k = 0; k < 4; k++)
        assert_string_equal(byocl_node_name(fn, byocl_function_param(fn, k)), want[k]);
    byocl_print_options popt = {.show_types = true};
    char *text = byocl_text_print(m, &popt, NULL, NULL);
    byocl_module *back = NULL;
    byocl_error err = {0};
    if (byocl_text_parse(text, strlen(text), "odd.relay", NULL, &back, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(byocl_infer_types(back, &err), BYOCL_OK);
    char *again = byocl_text_print(back, &popt, NULL, NULL);
    assert_string_equal(again, text);
    free(text);
    free(again);
    byocl_module_free(back);
    byocl_module_free(m);
}

/* ------------------------------------------------------- ops */

/* Runs NAME.onnx on its three inputs NAME_<input>.npy and compares each output with
 * NAME_<output>.npy (numpy's results). */
static void check_numbers(const char *name, const char *const inputs[3],
                          const char *const *outputs, int n_outputs)
{
    char file[64];
    snprintf(file, sizeof file, "%s.onnx", name);
    byocl_module *m = load_ok(file, NULL);
    byocl_tensor *in[3];
    for (int i = 0; i < 3; i++) {
        snprintf(file, sizeof file, "%s_%s.npy", name, inputs[i]);
        in[i] = npy(file);
    }
    byocl_tensor **y = run(m, in, 3, n_outputs);
    for (int i = 0; i < n_outputs; i++) {
        snprintf(file, sizeof file, "%s_%s.npy", name, outputs[i]);
        byocl_tensor *want = npy(file);
        ts_assert_tensor_close(y[i], want, 1e-5, 1e-6);
        byocl_tensor_unref(want);
    }
    byocl_tensors_free(y, n_outputs);
    for (int i = 0; i < 3; i++)
        byocl_tensor_unref(in[i]);
    byocl_module_free(m);
}

static void test_ops13_numbers(void **state)
{
    (void)state;
    static const char *const ins[3] = {"a", "b", "c"};
    static const char *const outs[] = {"mm",     "mm_broadcast", "mm_vector", "mean",
                                       "s1_t",   "cat",          "mx",        "mn",
                                       "padded", "c16",          "ident",     "drop",
                                       "leaky",  "clip_hi"};
    check_numbers("ops13", ins, outs, (int)(sizeof outs / sizeof outs[0]));
}

/* Opset 7: the attribute forms that later opsets replaced by inputs (Clip's bounds,
 * Split's sizes, Squeeze/Unsqueeze/ReduceMean's axes, Pad's pads and value), Dropout's
 * mask in the input's dtype (bool from opset 10 on), BatchNormalization's spatial=1,
 * Gemm's transA/alpha/beta, padded pools, initializers listed as graph inputs. */
static void test_legacy7_numbers(void **state)
{
    (void)state;
    static const char *const ins[3] = {"x", "a", "c"};
    static const char *const outs[] = {"clip", "s0",   "s1", "sq",   "rmean",  "padded",
                                       "drop", "mask", "bn", "gemm", "mp",     "ap_inc",
                                       "ap_exc", "flat", "cast", "tr"};
    check_numbers("legacy7", ins, outs, (int)(sizeof outs / sizeof outs[0]));
}

/* Softmax(axis=1) of a (2, 3, 4) tensor: over axes 1..2 flattened at opset 11, over axis 1
 * alone at opset 13. */
static void test_softmax_opsets(void **state)
{
    (void)state;
    byocl_tensor *x = npy("softmax_x.npy");
    static const char *const models[2][2] = {{"softmax11.onnx", "softmax_y11.npy"},
                                             {"softmax13.onnx", "softmax_y13.npy"}};
    for (int i = 0; i < 2; i++) {
        byocl_module *m = load_ok(models[i][0], NULL);
        byocl_tensor *want = npy(models[i][1]);
        byocl_tensor **y = run(m, &x, 1, 1);
        ts_assert_tensor_close(y[0], want, 1e-5, 1e-7);
        byocl_tensors_free(y, 1);
        byocl_tensor_unref(want);
        byocl_module_free(m);
    }
    byocl_tensor_unref(x);
}

/* Dropout in training mode with ratio 0 drops nothing: the identity, its mask all true
 * (ratio and training_mode from an initializer and from Constant nodes). Ratios above 0
 * are refused: tests/bad/onnx_loading.cases. */
static void test_dropout_training_zero_ratio(void **state)
{
    (void)state;
    byocl_module *m = load_ok("dropout_training.onnx", NULL);
    byocl_tensor *x = npy("dropout_training_x.npy");
    byocl_tensor **y = run(m, &x, 1, 2);
    ts_assert_tensor_close(y[0], x, 0, 0);
    assert_int_equal(byocl_tensor_dtype(y[1]), BYOCL_BOOL);
    for (int64_t i = 0; i < byocl_tensor_numel(y[1]); i++)
        assert_true(byocl_tensor_get(y[1], i) == 1.0);
    byocl_tensors_free(y, 2);
    byocl_tensor_unref(x);
    byocl_module_free(m);
}

/* ------------------------------------------------------- refusals */

static void test_refused(void **state)
{
    (void)state;
    expect_load_error("unsupported.onnx", NULL, BYOCL_ERR_UNSUPPORTED,
                      "unsupported ONNX ops: LSTM x2, GridSample x1, com.example.Foo x1 (opset 13)");
    /* Opsets 1 to 18 are imported: an old opset names only the missing op. */
    byocl_module_free(load_ok("opset6.onnx", NULL));
    expect_load_error("opset6_unsupported.onnx", NULL, BYOCL_ERR_UNSUPPORTED,
                      "unsupported ONNX ops: LSTM x1 (opset 6)");
    expect_load_error("complex64_input.onnx", NULL, BYOCL_ERR_UNSUPPORTED,
                      "input 'x' has dtype complex64, which byocl does not support (byocl has "
                      "float32, float16, int32, int64, int8, uint8, bool, float64, int16, uint16, "
                      "uint32, uint64, bfloat16)");
    expect_load_error("pad_wrap.onnx", NULL, BYOCL_ERR_UNSUPPORTED,
                      "node 0 (Pad): mode 'wrap' is not supported (only 'constant', 'reflect' "
                      "and 'edge')");
    expect_load_error("undefined_input.onnx", NULL, BYOCL_ERR_INVALID,
                      "node 'add1' (Add): input 1 'nowhere' is not defined by an earlier node, "
                      "a graph input or an initializer");
    expect_load_error("unknown_attr.onnx", NULL, BYOCL_ERR_UNSUPPORTED,
                      "node 'r' (Relu): attribute 'fancy' is not supported");
    expect_load_error("reshape_runtime.onnx", NULL, BYOCL_ERR_UNSUPPORTED,
                      "node 'reshape' (Reshape): input 1 ('shape') is a graph input, but "
                      "byocl needs the new shape when it compiles the model (make it an "
                      "initializer or a Constant, or bind it with --params)");
}

/* Bound by params, Reshape's shape input is a constant and the model loads. */
static void test_bound_shape_input(void **state)
{
    (void)state;
    byocl_error err = {0};
    byocl_shape s = byocl_shape_make(1, (int64_t[]){2});
    byocl_tensor *shape = byocl_tensor_from_data(BYOCL_INT64, &s, (int64_t[]){3, 2}, &err);
    byocl_params *p = byocl_params_new();
    assert_int_equal(byocl_params_set(p, "shape", shape, &err), BYOCL_OK);
    byocl_load_options opt = {.params = p};
    byocl_module *m = load_ok("reshape_runtime.onnx", &opt);
    const float v[6] = {1, 2, 3, 4, 5, 6};
    byocl_tensor *x = ts_tensor_f32(2, (int64_t[]){2, 3}, v);
    byocl_tensor **y = run(m, &x, 1, 1);
    assert_int_equal(byocl_tensor_shape(y[0])->dims[0], 3);
    ts_assert_f32_close(y[0], v, 6, 0, 0);
    byocl_tensors_free(y, 1);
    byocl_tensor_unref(x);
    byocl_tensor_unref(shape);
    byocl_params_free(p);
    byocl_module_free(m);
}

/* Every prefix of a model is refused, none crashes; another message type is refused. */
static void test_truncated_and_wrong_type(void **state)
{
    (void)state;
    size_t len;
    char *data = ts_read_file(fixture("small_cnn.onnx"), &len);
    const char *dir = ts_tmpdir("onnx_cut");
    char path[4096];
    snprintf(path, sizeof path, "%s/cut.onnx", dir);
    byocl_load_options opt = {.shapes = &cnn_shape, .n_shapes = 1};
    for (size_t n = 0; n < len; n += 7) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, n, f), n);
        fclose(f);
        byocl_error err = {0};
        byocl_module *m = NULL;
        assert_int_not_equal(byocl_load_model_opts(path, &opt, &m, &err), BYOCL_OK);
        assert_null(m);
        if (n == len / 2) {
            char want[4200];
            snprintf(want, sizeof want,
                     "%s: not an ONNX model (the protobuf data is truncated or malformed)", path);
            assert_string_equal(err.msg, want);
        }
    }
    free(data);
    /* A TensorProto file named .onnx. */
    char *tensor = ts_read_file(ts_fixture("tensor_pb/f32_raw.pb"), &len);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(tensor, 1, len, f), len);
    fclose(f);
    free(tensor);
    byocl_error err = {0};
    byocl_module *m = NULL;
    assert_int_equal(byocl_load_model(path, NULL, &m, &err), BYOCL_ERR_INVALID);
    char want[4200];
    snprintf(want, sizeof want, "%s: not an ONNX model (the protobuf data is truncated or "
                                "malformed)",
             path);
    assert_string_equal(err.msg, want);
    ts_remove_tree(dir);
}

/* ------------------------------------------------------- the CLI */

static void test_cli(void **state)
{
    (void)state;
    char args[8192], *out, *err;
    snprintf(args, sizeof args, "run '%s' --shape input.1=1x3x8x8 --input input.1='%s'",
             fixture("small_cnn.onnx"), fixture("small_cnn_x.pb"));
    int rc = ts_run_cli(args, &out, &err);
    if (rc != 0)
        fail_msg("byocl %s: exit %d: %s", args, rc, err);
    ts_assert_contains(out, "output 0: Tensor[(1, 5), float32]\n"
                            "  min 0.00178799  max 0.7581  mean 0.2  first [0.212763, "
                            "0.00178799, 0.00525171, 0.0220976, 0.7581]\n");
    assert_string_equal(err, "");
    free(out);
    free(err);
    /* The Relay name, an .npy. */
    snprintf(args, sizeof args, "run '%s' --shape input_1=1x3x8x8 --input input_1='%s'",
             fixture("small_cnn.onnx"), fixture("small_cnn_x.npy"));
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    ts_assert_contains(out, "first [0.212763, 0.00178799, 0.00525171, 0.0220976, 0.7581]");
    free(out);
    free(err);
    /* An .npz of one member (any name) is a tensor file too; two members are refused. */
    const char *dir = ts_tmpdir("onnx_cli_npz");
    char one[4096], two[4096];
    snprintf(one, sizeof one, "%s/x.npz", dir);
    snprintf(two, sizeof two, "%s/two.npz", dir);
    byocl_tensor *x = npy("small_cnn_x.npy");
    byocl_params *p = byocl_params_new();
    byocl_error e = {0};
    assert_int_equal(byocl_params_set(p, "image", x, &e), BYOCL_OK);
    assert_int_equal(byocl_npz_write(one, p, &e), BYOCL_OK);
    assert_int_equal(byocl_params_set(p, "label", x, &e), BYOCL_OK);
    assert_int_equal(byocl_npz_write(two, p, &e), BYOCL_OK);
    byocl_params_free(p);
    byocl_tensor_unref(x);
    snprintf(args, sizeof args, "run '%s' --shape input.1=1x3x8x8 --input input.1='%s'",
             fixture("small_cnn.onnx"), one);
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    ts_assert_contains(out, "first [0.212763, 0.00178799, 0.00525171, 0.0220976, 0.7581]");
    free(out);
    free(err);
    snprintf(args, sizeof args, "run '%s' --shape input.1=1x3x8x8 --input input.1='%s'",
             fixture("small_cnn.onnx"), two);
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    char want_npz[8192];
    snprintf(want_npz, sizeof want_npz,
             "byocl: error: %s: the .npz has 2 members (image, label); a tensor file needs "
             "exactly one\n",
             two);
    assert_string_equal(err, want_npz);
    free(out);
    free(err);
    ts_remove_tree(dir);

    snprintf(args, sizeof args, "print '%s'", fixture("small_cnn.onnx"));
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    char want[8192];
    snprintf(want, sizeof want,
             "byocl: error: %s: input 'input.1' (batch, 3, 8, 8) has symbolic dimension 0 "
             "('batch'); give its shape with --shape input.1=DIMS, e.g. --shape "
             "input.1=1x3x8x8\n",
             fixture("small_cnn.onnx"));
    assert_string_equal(err, want);
    free(out);
    free(err);

    snprintf(args, sizeof args, "print '%s' --shape input.1", fixture("small_cnn.onnx"));
    assert_int_equal(ts_run_cli(args, &out, &err), 2);
    assert_string_equal(err, "byocl: error: --shape 'input.1': expected NAME=DIMS, e.g. "
                             "data=1x3x224x224; see 'byocl print --help'\n");
    free(out);
    free(err);
}

/* `byocl conformance` of a fixture folder on the reference executor, host and OpenCL:
 * each prints `want` exactly. */
static void conformance_everywhere(const char *folder, const char *want)
{
    char args[8192], *out, *err;
    const char *const targets[] = {"", " --target host", " --target opencl"};
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
        snprintf(args, sizeof args, "conformance '%s'%s", fixture(folder), targets[t]);
        assert_int_equal(ts_run_cli(args, &out, &err), 0);
        assert_string_equal(out, want);
        assert_string_equal(err, "");
        free(out);
        free(err);
    }
}

/* conformance_everywhere of a folder whose tests all pass: `prefix` + each name. */
static void conformance_all_pass(const char *folder, const char *prefix,
                                 const char *const *names, size_t n)
{
    char want[4096] = "";
    for (size_t k = 0; k < n; k++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "PASS %s%s\n", prefix,
                 names[k]);
    snprintf(want + strlen(want), sizeof want - strlen(want), "%zu passed, 0 failed, 0 skipped\n",
             n);
    conformance_everywhere(folder, want);
}

/* The shape and index ops (tests/gen/gen_onnx.py, shape_ops_suite): Slice, Gather with
 * negative indices, GatherElements, ConstantOfShape, Expand, Range, Tile, Shape, Size,
 * their shape inputs constant or folded from Shape arithmetic; the same on every path. */
static void test_shape_ops(void **state)
{
    (void)state;
    static const char *const passing[] = {
        "constant_of_shape", "expand_bidirectional", "gather_elements",  "gather_negative",
        "gather_scalar_index", "range_add",          "shape_start_end",  "slice_attrs_opset9",
        "slice_inputs",       "slice_shape_arith",    "tile"};
    conformance_all_pass("shape_ops", "test_", passing, sizeof passing / sizeof *passing);
}

/* The losses in the dtypes the ONNX suite leaves out (tests/gen/gen_onnx.py,
 * losses_suite): SoftmaxCrossEntropyLoss in float16 with weights, ignore_index and
 * log_prob, NegativeLogLikelihoodLoss of an int32 target; the same on every path. */
static void test_losses(void **state)
{
    (void)state;
    conformance_everywhere("losses", "PASS test_nllloss_int32_target_sum\n"
                                     "PASS test_sce_f16_weight_ii_log_prob\n"
                                     "2 passed, 0 failed, 0 skipped\n");
}

/* The forms of opsets 1 to 9 that later opsets replaced (tests/gen/gen_onnx.py,
 * old_opsets_suite): BatchNormalization's is_test and spatial=0 (statistics per element),
 * Pad's paddings, Upsample (nearest, linear, fractional scales; Upsample-1's height_scale
 * and width_scale, nearest and bilinear), Cast-1's string `to`, Tile-1's tiles and axis,
 * Gemm's and Add's broadcast, Reshape's shape attribute, Concat without axis,
 * consumed_inputs, Dropout's is_test, PRelu's per-channel slope; the same on every path. */
static void test_old_opsets(void **state)
{
    (void)state;
    static const char *const passing[] = {
        "add_opset6_broadcast_axis",  "batchnorm_opset6_is_test",
        "batchnorm_opset6_spatial0",  "batchnorm_opset7_spatial0",
        "cast_opset1_string_to",      "concat_opset1_default_axis",
        "dropout_opset6_is_test",     "gemm_opset6_broadcast",
        "pad_opset1_paddings",        "prelu_opset6_per_channel",
        "reshape_opset4_shape_attr",  "tile_opset1_tiles_axis",
        "upsample_opset1_bilinear",   "upsample_opset1_nearest",
        "upsample_opset7_nearest",    "upsample_opset7_nearest_fractional",
        "upsample_opset9_linear",     "upsample_opset9_scales_input"};
    conformance_all_pass("old_opsets", "test_", passing, sizeof passing / sizeof *passing);
}

/* MaxPool's Indices output (tests/gen/gen_onnx.py, pool_indices_suite), composed of
 * strided_slice, greater and where: batch and channels, dilations with uneven pads and
 * strides, ceil_mode with storage_order 1, 1-D, SAME_UPPER, int8 with ties (the first
 * maximum, a cell of -128 over the padding); the same on every path. */
static void test_pool_indices(void **state)
{
    (void)state;
    static const char *const passing[] = {"1d", "ceil_storage_order1", "dilated_padded",
                                          "int8_ties", "same_upper"};
    conformance_all_pass("pool_indices", "test_maxpool_indices_", passing,
                         sizeof passing / sizeof *passing);
}

/* Resize's forms the ONNX suite lacks (tests/gen/gen_onnx.py, resize_suite): opset 10,
 * opset 18's axes and keep_aspect_ratio_policy, ranks 1 and 3 (resized through a rank-4
 * view), tf_crop_and_resize with opset 18's axes (a rank-3 crop beyond the input) and
 * with scales (the leading axes' roi whole); the same on every path. */
static void test_resize_forms(void **state)
{
    (void)state;
    conformance_everywhere("resize", "PASS test_resize_crop_rank3_axes\n"
                                     "PASS test_resize_crop_scales_nearest\n"
                                     "PASS test_resize_opset10_nearest\n"
                                     "PASS test_resize_opset18_axes_not_larger\n"
                                     "PASS test_resize_rank1_nearest\n"
                                     "PASS test_resize_rank3_cubic\n"
                                     "6 passed, 0 failed, 0 skipped\n");
}

/* Einsum in float32 (tests/gen/gen_onnx.py, einsum_suite; the ONNX suite's are double):
 * batch matmul, maxvit's attention equations, implicit outputs, an ellipsis that
 * broadcasts, three operands, an outer product, sums, a transpose, diagonals and a trace,
 * against numpy.einsum; the same on every path. */
static void test_einsum(void **state)
{
    (void)state;
    static const char *const passing[] = {
        "batch_diagonal_f32", "batch_matmul_f32", "contract_and_sum", "diagonal",
        "diagonal_then_matmul", "ellipsis_broadcast", "implicit", "implicit_sorted",
        "inner_f32", "maxvit_scores", "maxvit_values", "outer", "sum_all", "sum_f32",
        "three_operands", "trace", "transpose_f32"};
    conformance_all_pass("einsum", "test_einsum_", passing, sizeof passing / sizeof *passing);
}

/* Double models (tests/gen/gen_onnx.py, float64_suite): Conv, Gemm, MatMul, pools,
 * Softmax, BatchNormalization, activations with double constants, reductions, Casts, and
 * float32 between two Casts (the opencl target's region, float64 on the host) against
 * numpy in double; the same on every path. */
static void test_float64(void **state)
{
    (void)state;
    static const char *const passing[] = {
        "activations_double",      "averagepool_double_pads", "batchnorm_double",
        "cast_double_relu_float",  "cast_double_to_int32",    "cast_float_conv_double",
        "conv_double",             "gemm_double",             "globalaveragepool_double",
        "matmul_double_batched",   "maxpool_double_pads",     "reduce_mean_sum_double",
        "softmax_double"};
    conformance_all_pass("float64", "test_", passing, sizeof passing / sizeof *passing);
}

/* Pad's edge and reflect modes and negative pads, ConvTranspose's forms beyond the ONNX
 * suite's (tests/gen/gen_onnx.py, pad_convt_suite); the same on every path. A constant
 * Pad that crops and pads is a strided_slice, then nn.pad; a ConvTranspose whose output
 * starts before the full result is refused. */
static void test_pad_convt(void **state)
{
    (void)state;
    conformance_everywhere(
        "pad_convt",
        "PASS test_convtranspose_1d_output_shape\n"
        "PASS test_convtranspose_group_bias\n"
        "SKIP test_convtranspose_negative_start: node 0 (ConvTranspose): the output would "
        "start 1 cell before the full result (a negative start pad); not supported\n"
        "PASS test_convtranspose_opset1_valid\n"
        "PASS test_convtranspose_output_shape_nc\n"
        "PASS test_convtranspose_same_lower\n"
        "PASS test_pad_constant_crop\n"
        "PASS test_pad_constant_crop_and_pad\n"
        "PASS test_pad_edge_int32\n"
        "PASS test_pad_edge_negative\n"
        "PASS test_pad_edge_opset2_attr\n"
        "PASS test_pad_reflect_axes_opset18\n"
        "PASS test_pad_reflect_wide\n"
        "12 passed, 0 failed, 1 skipped\n");
}

/* TopK, ScatterND, ScatterElements, Scatter and GatherND in the forms the ONNX suite leaves
 * out (tests/gen/gen_onnx.py, index_ops_suite): TopK's k attribute, K as an initializer,
 * largest=0 with only Indices, ties; mul, min and max reductions on repeated indices;
 * Scatter-9; GatherND's batch_dims with negative constant indices; the same on every
 * path. */
static void test_index_ops(void **state)
{
    (void)state;
    conformance_everywhere("index_ops", "PASS test_gathernd_batch_dims_negative\n"
                                        "PASS test_scatter_elements_min_axis1\n"
                                        "PASS test_scatter_elements_mul_axis1\n"
                                        "PASS test_scatter_opset9_axis0\n"
                                        "PASS test_scatternd_max_repeated\n"
                                        "PASS test_scatternd_min_repeated\n"
                                        "PASS test_scatternd_mul_repeated\n"
                                        "PASS test_topk_opset1_k_attr\n"
                                        "PASS test_topk_opset10_k_initializer\n"
                                        "PASS test_topk_smallest_indices_only\n"
                                        "10 passed, 0 failed, 0 skipped\n");
}

/* shufflenet's channel shuffle as torch exports it: Shape -> Gather -> Div -> Concat ->
 * Reshape folds at import into plain reshapes around the transpose; it runs as numpy
 * computes it. */
static void test_channel_shuffle(void **state)
{
    (void)state;
    char args[8192], *out, *err;
    snprintf(args, sizeof args, "print '%s' --shape x=1x4x2x2", fixture("channel_shuffle.onnx"));
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    assert_string_equal(
        out, "#[version = \"0.0.5\"]\n"
             "def @main(%x: Tensor[(1, 4, 2, 2), float32]) -> Tensor[(1, 4, 2, 2), float32] {\n"
             "  %reshape5 = reshape(%x, newshape=[1, 2, 2, 2, 2]) /* ty=Tensor[(1, 2, 2, 2, 2), "
             "float32] */;\n"
             "  %transpose = transpose(%reshape5, axes=[0, 2, 1, 3, 4]) /* ty=Tensor[(1, 2, 2, "
             "2, 2), float32] */;\n"
             "  reshape(%transpose, newshape=[1, -1, 2, 2]) /* ty=Tensor[(1, 4, 2, 2), "
             "float32] */\n"
             "}\n");
    free(out);
    free(err);
    byocl_input_shape shape = {.name = "x", .shape = byocl_shape_make(4, (int64_t[]){1, 4, 2, 2})};
    byocl_load_options opt = {.shapes = &shape, .n_shapes = 1};
    byocl_module *m = load_ok("channel_shuffle.onnx", &opt);
    byocl_tensor *x = npy("channel_shuffle_x.npy"), *want = npy("channel_shuffle_y.npy");
    byocl_tensor **y = run(m, &x, 1, 1);
    ts_assert_f32_close(y[0], byocl_tensor_cdata(want), 16, 0, 0);
    byocl_tensors_free(y, 1);
    byocl_tensor_unref(x);
    byocl_tensor_unref(want);
    byocl_module_free(m);
}

/* A model whose tensors all lie in an external data file beside it (tests/gen/gen_onnx.py,
 * external_suite): initializers, a Constant's value and Reshape's shape read from their
 * ranges of weights.bin; the same on every path. The refusals are in
 * tests/bad/onnx_loading.cases. */
static void test_external_data(void **state)
{
    (void)state;
    conformance_everywhere("external", "PASS test_external_weights\n"
                                       "1 passed, 0 failed, 0 skipped\n");
}

/* The reductions the ONNX suite cannot check in float32 (tests/gen/gen_onnx.py,
 * reductions_suite): ReduceLogSumExp, also where exp overflows float32 without the max
 * shift, int32 ArgMax, and the refusals with their reasons; the same on every path. */
static void test_reductions(void **state)
{
    (void)state;
    conformance_everywhere("reductions",
                           "PASS test_argmax_int32_last\n"
                           "SKIP test_reduce_l1_noop: node 0 (ReduceL1): noop_with_empty_axes=1 "
                           "without axes is not supported here (only ReduceSum, ReduceMean, "
                           "ReduceMax, ReduceMin and ReduceProd take it)\n"
                           "SKIP test_reduce_l2_int32: node 0 (ReduceL2): input of dtype int32 "
                           "is not supported (float32 or float16 only: the result takes a "
                           "sqrt)\n"
                           "PASS test_reduce_log_sum_exp_f32_all\n"
                           "PASS test_reduce_log_sum_exp_f32_axes_input\n"
                           "PASS test_reduce_log_sum_exp_f32_keepdims\n"
                           "PASS test_reduce_log_sum_exp_f32_large\n"
                           "5 passed, 0 failed, 2 skipped\n");
}

static void test_conformance_runner(void **state)
{
    (void)state;
    char args[8192], *out, *err;
    /* On the host path, and offloaded (the regions on OpenCL, the rest on the host): the
     * same verdicts. */
    const char *const targets[] = {"", " --target opencl"};
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
        snprintf(args, sizeof args, "conformance '%s'%s", fixture("conformance"), targets[t]);
        assert_int_equal(ts_run_cli(args, &out, &err), 1);
        assert_string_equal(out, "SKIP test_lstm: unsupported ONNX ops: LSTM x1 (opset 13)\n"
                                 "PASS test_relu\n"
                                 "FAIL test_relu_wrong: max abs err 1 at index 2\n"
                                 "PASS test_reshape\n"
                                 "PASS test_sub_unnamed\n"
                                 "3 passed, 1 failed, 1 skipped\n");
        assert_string_equal(err, "");
        free(out);
        free(err);
    }

    snprintf(args, sizeof args, "conformance '%s/' --filter resh", fixture("conformance"));
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    assert_string_equal(out, "PASS test_reshape\n1 passed, 0 failed, 0 skipped\n");
    free(out);
    free(err);

    /* One test folder by itself is named by its path. */
    snprintf(args, sizeof args, "conformance '%s/test_relu'", fixture("conformance"));
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    char want[8192];
    snprintf(want, sizeof want, "PASS %s/test_relu\n1 passed, 0 failed, 0 skipped\n",
             fixture("conformance"));
    assert_string_equal(out, want);
    free(out);
    free(err);

    assert_int_equal(ts_run_cli("conformance /nonexistent", &out, &err), 1);
    assert_string_equal(err, "byocl: error: /nonexistent is not a folder (give the folder of "
                             "the ONNX backend tests, e.g. "
                             "/usr/share/libonnx-testdata/data/node)\n");
    free(out);
    free(err);
    /* Built for the graph executor with the ops' reference kernels: the same verdicts. */
    snprintf(args, sizeof args, "conformance '%s' --target ref", fixture("conformance"));
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    ts_assert_contains(out, "FAIL test_relu_wrong: max abs err 1 at index 2\n"
                            "PASS test_reshape\n"
                            "PASS test_sub_unnamed\n"
                            "3 passed, 1 failed, 1 skipped\n");
    free(out);
    free(err);
    snprintf(args, sizeof args, "conformance '%s' --target gpu", fixture("conformance"));
    assert_int_equal(ts_run_cli(args, &out, &err), 2);
    assert_string_equal(err, "byocl: error: unknown target 'gpu' (known: host, ref, opencl); see "
                             "'byocl conformance --help'\n");
    free(out);
    free(err);
    snprintf(args, sizeof args, "conformance '%s' --target host --device 0",
             fixture("conformance"));
    assert_int_equal(ts_run_cli(args, &out, &err), 2);
    assert_string_equal(err, "byocl: error: --device goes with a region target (--target T); "
                             "see 'byocl conformance --help'\n");
    free(out);
    free(err);
    /* A device that is not there stops the run once, before any test. */
    snprintf(args, sizeof args, "conformance '%s' --target opencl --device 7",
             fixture("conformance"));
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    assert_string_equal(out, "");
    ts_assert_contains(err, "byocl: error: device '7' names no device of target opencl: give an "
                            "index from 0 to ");
    free(out);
    free(err);
    snprintf(args, sizeof args, "conformance '%s' --target ref --executor ref",
             fixture("conformance"));
    assert_int_equal(ts_run_cli(args, &out, &err), 2);
    assert_string_equal(err, "byocl: error: --target and --executor are mutually exclusive; "
                             "see 'byocl conformance --help'\n");
    free(out);
    free(err);
    snprintf(args, sizeof args, "conformance '%s' --executor gpu", fixture("conformance"));
    assert_int_equal(ts_run_cli(args, &out, &err), 2);
    assert_string_equal(err, "byocl: error: unknown executor 'gpu' (known: ref); see 'byocl "
                             "conformance --help'\n");
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_cnn_text),
        cmocka_unit_test(test_small_cnn_numbers),
        cmocka_unit_test(test_bind_by_onnx_name),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_shape_parse),
        cmocka_unit_test(test_relay_names),
        cmocka_unit_test(test_odd_names_round_trip),
        cmocka_unit_test(test_ops13_numbers),
        cmocka_unit_test(test_legacy7_numbers),
        cmocka_unit_test(test_softmax_opsets),
        cmocka_unit_test(test_dropout_training_zero_ratio),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_bound_shape_input),
        cmocka_unit_test(test_truncated_and_wrong_type),
        cmocka_unit_test(test_cli),
        cmocka_unit_test(test_conformance_runner),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_shape_ops),
        cmocka_unit_test(test_losses),
        cmocka_unit_test(test_old_opsets),
        cmocka_unit_test(test_pool_indices),
        cmocka_unit_test(test_pad_convt),
        cmocka_unit_test(test_einsum),
        cmocka_unit_test(test_float64),
        cmocka_unit_test(test_index_ops),
        cmocka_unit_test(test_resize_forms),
        cmocka_unit_test(test_channel_shuffle),
        cmocka_unit_test(test_external_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
