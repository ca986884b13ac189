/* `byocl run --capture` and `byocl replay` on builtin:seed's OpenCL region: the folder's
 * files and manifest, the captured tensors against values computed here from the same
 * random inputs and against the reference executor, --capture-node inside the region,
 * replay on opencl/host/ref, a changed
 * output caught, every error path with its message, a capture replaced, and the manifest
 * parser and tensor comparison of include/byocl/capture.h on their own. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "opencl_test_util.h"
#include "byocl/capture.h"
#include "byocl/tensor_io.h"
#include "capture/capture_impl.h"

static char pocl_cache[512], byocl_cache[512];

#define FMT(buf, ...) snprintf(buf, sizeof buf, __VA_ARGS__)

/* "a,b,c": the names in `dir`, sorted (hidden ones too). */
static char *listing(const char *dir)
{
    char names[32][256];
    int n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 32)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            FMT(names[n++], "%s", e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    char *out = calloc(1, 32 * 257 + 1);
    assert_non_null(out);
    for (int i = 0; i < n; i++)
        sprintf(out + strlen(out), "%s%s", i ? "," : "", names[i]);
    return out;
}

static void expect_listing(const char *dir, const char *want)
{
    char *got = listing(dir);
    assert_string_equal(got, want);
    free(got);
}

/* Parameter k of builtin:seed as `--random-inputs` (seed 0) fills it. */
static byocl_tensor *seed_input(const byocl_module *m, int k)
{
    const byocl_function *fn = byocl_module_find(m, "main");
    const byocl_type *type = byocl_node_type(fn, byocl_function_param(fn, k));
    byocl_tensor *t = byocl_tensor_new(type->dtype, &type->shape, NULL);
    assert_non_null(t);
    byocl_tensor_fill_random(t, (uint64_t)k, 0.0, 1.0);
    return t;
}

static byocl_module *load_seed(void)
{
    byocl_module *m = NULL;
    byocl_error err;
    if (byocl_load_model("builtin:seed", NULL, &m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return m;
}

static byocl_capture_folder *read_folder(const char *dir)
{
    byocl_capture_folder *f = NULL;
    byocl_error err;
    if (byocl_capture_read(dir, &f, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return f;
}

static byocl_tensor *read_npy(const char *path)
{
    byocl_tensor *t = NULL;
    byocl_error err;
    if (byocl_npy_read(path, &t, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return t;
}

/* Runs the capture of seed's region and node %1 into a fresh DIR (returned, static). */
static const char *capture_seed(const char *tag, const char *extra)
{
    static char dir[600];
    char args[1600];
    FMT(dir, "%s/cap", ts_tmpdir(tag));
    FMT(args, "run builtin:seed --random-inputs --target opencl --capture '%s' %s", dir, extra);
    char *out = NULL, *err = NULL;
    int rc = ts_run_cli(args, &out, &err);
    if (rc != 0)
        fail_msg("byocl %s exited %d:\n%s%s", args, rc, out, err);
    assert_string_equal(err, "");
    char line[700];
    FMT(line, "wrote %s/opencl_main_0\n", dir);
    ts_assert_contains(out, line);
    free(out);
    free(err);
    return dir;
}

static void test_capture_seed_region(void **state)
{
    (void)state;
    char args[1600], path[700];
    const char *dir = capture_seed("capture_seed", "--capture-region opencl_main_0 "
                                                   "--capture-node %1");
    expect_listing(dir, "node_1.npy,opencl_main_0");
    FMT(path, "%s/opencl_main_0", dir);
    expect_listing(path, "input_bn_beta.npy,input_bn_gamma.npy,input_bn_mean.npy,"
                         "input_bn_var.npy,input_data.npy,input_n0_add.npy,manifest.json,"
                         "output_0.npy,output_1.npy,output_2.npy,region.relay");
    byocl_capture_folder *f = read_folder(path);
    const byocl_capture_manifest *m = f->manifest;
    assert_string_equal(m->symbol, "opencl_main_0");
    assert_string_equal(m->target, "opencl");
    assert_string_equal(m->runner, "opencl");
    assert_string_equal(m->outputs_from, "opencl");
    assert_string_equal(m->model, "builtin:seed");
    assert_string_equal(m->call_node, "%1");
    assert_string_equal(m->module, "region.relay");
    assert_null(m->params);
    assert_int_equal(m->calls, 1);
    assert_true(m->last_ms > 0 && m->min_ms == m->last_ms && m->median_ms == m->last_ms);
    static const char *const names[] = {"data", "n0_add", "bn_gamma", "bn_beta", "bn_mean",
                                        "bn_var"};
    static const char *const nodes[] = {"%data", "%1", "%bn_gamma", "%bn_beta", "%bn_mean",
                                        "%bn_var"};
    assert_int_equal(m->n_inputs, 6);
    for (int k = 0; k < 6; k++) {
        assert_string_equal(m->inputs[k].name, names[k]);
        assert_string_equal(m->inputs[k].node, nodes[k]);
        assert_string_equal(m->inputs[k].op, k == 1 ? "add" : "Var");
        char file[64];
        FMT(file, "input_%s.npy", names[k]);
        assert_string_equal(m->inputs[k].file, file);
    }
    assert_int_equal(m->n_outputs, 3);
    assert_string_equal(m->outputs[0].node, "%10");
    assert_string_equal(m->outputs[0].op, "nn.relu");
    assert_string_equal(m->outputs[1].node, "%12");
    assert_string_equal(m->outputs[2].node, "%15");
    assert_string_equal(m->outputs[2].op, "TupleGetItem");

    /* The inputs, computed here: %data is parameter 0, %1 = add(%weight, %w0) of
     * parameters 1 and 6; node %1 was written too. */
    byocl_module *seed = load_seed();
    byocl_tensor *data = seed_input(seed, 0), *weight = seed_input(seed, 1);
    byocl_tensor *w0 = seed_input(seed, 6);
    assert_true(byocl_tensor_equal(f->inputs[0], data));
    byocl_tensor *sum = byocl_tensor_clone(weight, NULL);
    float *s = byocl_tensor_data(sum);
    const float *b = byocl_tensor_cdata(w0);
    for (int64_t i = 0; i < byocl_tensor_numel(sum); i++)
        s[i] += b[i];
    assert_true(byocl_tensor_equal(f->inputs[1], sum));
    FMT(path, "%s/node_1.npy", dir);
    byocl_tensor *node = read_npy(path);
    assert_true(byocl_tensor_equal(node, sum));
    for (int k = 2; k < 6; k++) {
        byocl_tensor *want = seed_input(seed, k);
        assert_true(byocl_tensor_equal(f->inputs[k], want));
        byocl_tensor_unref(want);
    }

    /* The outputs against the reference executor: the whole model's output 0 is the
     * region's relu; the region's module on the captured inputs gives all three. */
    byocl_tensor *in[7];
    for (int k = 0; k < 7; k++)
        in[k] = seed_input(seed, k);
    byocl_tensor **ref = NULL;
    int n_ref = 0;
    byocl_error err;
    assert_int_equal(byocl_reference_run(seed, "main", in, 7, &ref, &n_ref, &err), BYOCL_OK);
    assert_true(ts_relative_l2(f->outputs[0], ref[0]) <= OCL_TOL_F32);
    byocl_tensors_free(ref, n_ref);
    assert_int_equal(byocl_reference_run(f->module, "main", f->inputs, 6, &ref, &n_ref, &err),
                     BYOCL_OK);
    assert_int_equal(n_ref, 3);
    for (int i = 0; i < 3; i++)
        assert_true(ts_relative_l2(f->outputs[i], ref[i]) <= OCL_TOL_F32);
    byocl_tensors_free(ref, n_ref);
    for (int k = 0; k < 7; k++)
        byocl_tensor_unref(in[k]);
    byocl_tensor_unref(node);
    byocl_tensor_unref(sum);
    byocl_tensor_unref(data);
    byocl_tensor_unref(weight);
    byocl_tensor_unref(w0);
    byocl_module_free(seed);
    byocl_capture_folder_free(f);

    /* Replay on every target passes. */
    static const char *const targets[] = {"opencl", "host", "ref"};
    for (int t = 0; t < 3; t++) {
        FMT(args, "replay '%s/opencl_main_0' --target %s --runs 2", dir, targets[t]);
        char *out = ts_cli_expect(args, 0, "");
        char line[900];
        FMT(line, "replayed opencl_main_0 of builtin:seed on target %s: built in ",
            targets[t]);
        ts_assert_contains(out, line);
        ts_assert_contains(out, ", median of 2 runs ");
        ts_assert_contains(out, "compared with the outputs captured from opencl (rtol 0.0001, "
                                "atol 1e-05):\n  output  max abs err       rel L2  first bad  "
                                "result\n");
        assert_null(strstr(out, "DIFFERS"));
        free(out);
    }
    ts_remove_tree(dir);
}

/* A node inside the region: it becomes one more output of the region, and node_3.npy is
 * the conv2d as OpenCL computed it, checked against the reference executor's conv2d. */
static void test_capture_node_inside_region(void **state)
{
    (void)state;
    const char *dir = capture_seed("capture_node", "--capture-node %3 --capture-region "
                                                   "opencl_main_0");
    char path[700];
    FMT(path, "%s/opencl_main_0", dir);
    byocl_capture_folder *f = read_folder(path);
    assert_int_equal(f->manifest->n_outputs, 4);
    assert_string_equal(f->manifest->outputs[3].node, "%3");
    assert_string_equal(f->manifest->outputs[3].op, "nn.conv2d");
    FMT(path, "%s/node_3.npy", dir);
    byocl_tensor *node = read_npy(path);
    assert_true(byocl_tensor_equal(node, f->outputs[3]));
    byocl_module *conv = ts_parse_typed(
        "#[version = \"0.0.5\"]\n"
        "def @main(%d: Tensor[(1, 3, 224, 224), float32], %w: Tensor[(16, 3, 3, 3), float32]) {\n"
        "  nn.conv2d(%d, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3])\n"
        "}\n");
    byocl_tensor **ref = NULL;
    int n_ref = 0;
    byocl_error err;
    assert_int_equal(byocl_reference_run(conv, "main", f->inputs, 2, &ref, &n_ref, &err),
                     BYOCL_OK);
    assert_true(ts_relative_l2(node, ref[0]) <= OCL_TOL_F32);
    byocl_tensors_free(ref, n_ref);
    byocl_module_free(conv);
    byocl_tensor_unref(node);
    byocl_capture_folder_free(f);
    ts_remove_tree(dir);
}

/* A captured output changed by one at element 5: replay names it, a wide --atol lets it
 * pass. */
static void test_replay_catches_a_change(void **state)
{
    (void)state;
    const char *dir = capture_seed("capture_change", "");
    char path[700], args[1600], want[1200];
    FMT(path, "%s/opencl_main_0/output_0.npy", dir);
    byocl_tensor *t = read_npy(path);
    float *v = byocl_tensor_data(t);
    float before = v[5];
    v[5] += 1.0f;
    byocl_error err;
    assert_int_equal(byocl_npy_write(path, t, &err), BYOCL_OK);
    /* OpenCL computes the region again bit for bit, so "got" is the value captured before. */
    FMT(args, "replay '%s/opencl_main_0' --target opencl", dir);
    char *out = NULL, *errs = NULL;
    assert_int_equal(ts_run_cli(args, &out, &errs), 1);
    FMT(want,
        "byocl: error: opencl_main_0 on opencl: 1 of 3 outputs beyond the tolerance; output 0 "
        "(%%10 of @main): 1 of 802816 elements; first at 5 [0, 0, 0, 5]: got %.9g, captured "
        "%.9g\n",
        (double)before, (double)v[5]);
    assert_string_equal(errs, want);
    ts_assert_contains(out, "          5  DIFFERS\n");
    free(out);
    free(errs);
    FMT(args, "replay '%s/opencl_main_0' --target ref --atol 1.5", dir);
    out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, "(rtol 0.0001, atol 1.5)");
    free(out);
    byocl_tensor_unref(t);
    ts_remove_tree(dir);
}

static void test_capture_errors(void **state)
{
    (void)state;
    char dir[600], file[700], args[1600], want[1600];
    FMT(dir, "%s", ts_tmpdir("capture_errors"));
    ts_cli_expect_usage("run builtin:seed --random-inputs --target opencl --capture-region x",
                        "byocl: error: --capture-region needs --capture DIR; see 'byocl run "
                        "--help'\n");
    ts_cli_expect_usage("run builtin:seed --random-inputs --target opencl --capture-node %1",
                        "byocl: error: --capture-node needs --capture DIR; see 'byocl run "
                        "--help'\n");
    FMT(args, "run builtin:seed --random-inputs --capture '%s/c'", dir);
    ts_cli_expect_usage(args, "byocl: error: --capture needs --target (it is about the graph "
                              "executor); see 'byocl run --help'\n");
    FMT(args, "run builtin:seed --random-inputs --target host --fn other --capture '%s/c'", dir);
    ts_cli_expect_usage(args, "byocl: error: --capture captures @main; it does not go with --fn; "
                              "see 'byocl run --help'\n");
    FMT(args, "run builtin:seed --random-inputs --target opencl --capture '%s/c' "
              "--capture-region opencl_main_9", dir);
    ts_cli_expect_failure(args, "byocl: error: --capture: no region 'opencl_main_9' to capture "
                                "(regions: opencl_main_0)\n");
    FMT(args, "run builtin:seed --random-inputs --target host --capture '%s/c'", dir);
    ts_cli_expect_failure(args, "byocl: error: --capture: no region to capture: @main calls no "
                                "function with a Compiler attribute\n");
    FMT(args, "run builtin:seed --random-inputs --target opencl --capture '%s/c' "
              "--capture-node %%99", dir);
    ts_cli_expect_failure(args, "byocl: error: --capture-node %99: @main of builtin:seed has no "
                                "node %99 (`byocl print builtin:seed` numbers them, up to %17)\n");
    FMT(args, "run builtin:seed --random-inputs --target opencl --capture '%s/c' "
              "--capture-node %%data", dir);
    ts_cli_expect_failure(args, "byocl: error: --capture-node %data: %data is a parameter of "
                                "@main, an input of the model, not an intermediate value\n");
    FMT(args, "run builtin:seed --random-inputs --target opencl --capture '%s/c' "
              "--capture-node 8", dir);
    ts_cli_expect_failure(args, "byocl: error: --capture-node 8: %8 is a tuple; capture one of "
                                "its fields (the node that takes it apart)\n");
    FMT(file, "%s/a-file", dir);
    ts_write_text(file, "not a folder\n");
    FMT(args, "run builtin:seed --random-inputs --target opencl --capture '%s'", file);
    FMT(want, "byocl: error: cannot create directory %s: a file of that name exists\n", file);
    ts_cli_expect_failure(args, want);
    expect_listing(dir, "a-file"); /* nothing was written for any of them */

    /* replay */
    FMT(args, "replay '%s/none'", dir);
    FMT(want, "byocl: error: cannot open %s/none/manifest.json: No such file or directory\n", dir);
    ts_cli_expect_failure(args, want);
    ts_cli_expect_usage("replay x --target gpu", "byocl: error: unknown target 'gpu' (known: "
                                                 "host, ref, opencl); see 'byocl replay --help'\n");
    ts_cli_expect_usage("replay x --rtol -1", "byocl: error: --rtol -1: expected a number >= 0; "
                                              "see 'byocl replay --help'\n");
    ts_cli_expect_usage("replay x --runs 0", "byocl: error: --runs 0: expected a count from 1 to "
                                             "1000000; see 'byocl replay --help'\n");
    ts_cli_expect_usage("replay", "byocl: error: missing DIR/<symbol>; see 'byocl replay "
                                  "--help'\n");
    ts_remove_tree(dir);
}

/* A folder whose files do not match its manifest. */
static void test_replay_bad_folder(void **state)
{
    (void)state;
    const char *dir = capture_seed("capture_bad", "");
    char path[700], args[1600], want[1600], manifest[700];
    FMT(manifest, "%s/opencl_main_0/manifest.json", dir);
    FMT(path, "%s/opencl_main_0/input_bn_var.npy", dir);
    int64_t two = 2;
    byocl_tensor *t = ts_tensor_f32(1, &two, NULL);
    byocl_error err;
    assert_int_equal(byocl_npy_write(path, t, &err), BYOCL_OK);
    byocl_tensor_unref(t);
    FMT(args, "replay '%s/opencl_main_0'", dir);
    FMT(want, "byocl: error: %s holds Tensor[(2), float32], but %s says Tensor[(16), float32] "
              "for 'bn_var'\n", path, manifest);
    ts_cli_expect_failure(args, want);
    ts_write_text(manifest, "{\"format\": \"byocl-capture\",\n \"version\": 2}\n");
    FMT(want, "%s:2:13: error: \"version\" must be an integer from 1 to 1\n", manifest);
    ts_cli_expect_failure(args, want);
    ts_remove_tree(dir);
}

/* A second capture into the same folder replaces the first; a folder of that name that no
 * capture wrote is left alone, and nothing else is left behind. */
static void test_capture_replaced(void **state)
{
    (void)state;
    const char *dir = capture_seed("capture_again", "");
    char args[1600], path[1000], want[1600];
    FMT(path, "%s/opencl_main_0/input_data.npy", dir);
    byocl_tensor *first = read_npy(path);
    FMT(args, "run builtin:seed --random-inputs=1 --target opencl --capture '%s'", dir);
    free(ts_cli_expect(args, 0, ""));
    byocl_tensor *second = read_npy(path);
    assert_false(byocl_tensor_equal(first, second));
    expect_listing(dir, "opencl_main_0");
    byocl_tensor_unref(first);
    byocl_tensor_unref(second);
    ts_remove_tree(dir);

    char other[700];
    FMT(other, "%s/opencl_main_0", dir);
    assert_int_equal(mkdir(dir, 0777), 0);
    assert_int_equal(mkdir(other, 0777), 0);
    FMT(path, "%s/mine.txt", other);
    ts_write_text(path, "keep me\n");
    FMT(args, "run builtin:seed --random-inputs --target opencl --capture '%s'", dir);
    char *out = NULL, *err = NULL;
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    FMT(want, "byocl: error: cannot write %s: it exists and is not a capture folder; remove it "
              "or choose another folder\n", other);
    assert_string_equal(err, want);
    expect_listing(dir, "opencl_main_0");
    expect_listing(other, "mine.txt");
    free(out);
    free(err);
    ts_remove_tree(dir);
}

/* ------------------------------------------------------ the library alone */

static const char good_manifest[] =
    "{\"format\": \"byocl-capture\", \"version\": 1, \"symbol\": \"s\", \"target\": \"t\",\n"
    " \"runner\": \"r\", \"outputs_from\": \"host\", \"model\": \"m\", \"call_node\": \"%1\",\n"
    " \"module\": \"region.relay\", \"params\": null,\n"
    " \"timing\": {\"calls\": 2, \"last_ms\": 1.5, \"min_ms\": 1, \"median_ms\": 1.25},\n"
    " \"inputs\": [{\"name\": \"x\", \"file\": \"input_x.npy\", \"dtype\": \"int8\", \"shape\": "
    "[2, 0], \"node\": \"%x\", \"op\": \"Var\"}],\n"
    " \"outputs\": [{\"name\": \"output_0\", \"file\": \"output_0.npy\", \"dtype\": \"float16\", "
    "\"shape\": [], \"node\": \"%3\", \"op\": \"abs\"}]}\n";

static byocl_capture_manifest *parse_ok(const char *text)
{
    byocl_capture_manifest *m = NULL;
    byocl_error err;
    if (byocl_capture_manifest_parse(text, strlen(text), "m.json", &m, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return m;
}

static void expect_parse_error(const char *text, const char *want)
{
    byocl_capture_manifest *m = (byocl_capture_manifest *)1;
    byocl_error err;
    assert_int_not_equal(byocl_capture_manifest_parse(text, strlen(text), "m.json", &m, &err),
                         BYOCL_OK);
    assert_null(m);
    assert_string_equal(err.msg, want);
}

/* good_manifest with `from` replaced by `to`. */
static char *edited(const char *from, const char *to)
{
    const char *at = strstr(good_manifest, from);
    assert_non_null(at);
    char *s = malloc(sizeof good_manifest + strlen(to));
    assert_non_null(s);
    sprintf(s, "%.*s%s%s", (int)(at - good_manifest), good_manifest, to, at + strlen(from));
    return s;
}

static void test_manifest_parse(void **state)
{
    (void)state;
    byocl_capture_manifest *m = parse_ok(good_manifest);
    assert_string_equal(m->outputs_from, "host");
    assert_null(m->params);
    assert_int_equal(m->calls, 2);
    assert_true(m->median_ms == 1.25);
    assert_int_equal(m->inputs[0].dtype, BYOCL_INT8);
    assert_int_equal(m->inputs[0].shape.rank, 2);
    assert_int_equal(m->inputs[0].shape.dims[1], 0);
    assert_int_equal(m->outputs[0].shape.rank, 0);
    /* What the writer prints reads back the same. */
    byocl_textbuf out = {0};
    capture_manifest_print(m, &out);
    char *text = base_textbuf_take(&out);
    assert_non_null(text);
    byocl_capture_manifest *again = parse_ok(text);
    assert_string_equal(again->call_node, "%1");
    assert_string_equal(again->inputs[0].node, "%x");
    assert_string_equal(again->outputs[0].op, "abs");
    assert_true(again->last_ms == 1.5 && again->min_ms == 1);
    byocl_capture_manifest_free(again);
    free(text);
    byocl_capture_manifest_free(m);

    static const struct {
        const char *from, *to, *want;
    } cases[] = {
        {"\"symbol\": \"s\", ", "", "m.json:1:1: error: missing \"symbol\""},
        {"\"int8\"", "\"int9\"", "m.json:5:59: error: unknown dtype 'int9'"},
        {"\"input_x.npy\"", "\"../x.npy\"",
         "m.json:5:35: error: \"file\" must name a file in the capture folder, not '../x.npy'"},
        {"[2, 0]", "[2, -1]", "m.json:5:80: error: a dimension must be an integer >= 0"},
        {"[2, 0]", "[1, 1, 1, 1, 1, 1, 1, 1, 1]",
         "m.json:5:76: error: a shape has at most 8 dimensions, not 9"},
        {"\"calls\": 2", "\"calls\": 0",
         "m.json:4:22: error: \"calls\" must be an integer from 1 to 2147483647"},
        {"\"min_ms\": 1", "\"min_ms\": -1", "m.json:4:51: error: \"min_ms\" must be a time >= 0"},
        {"\"params\": null", "\"params\": 3",
         "m.json:3:38: error: \"params\" must be a string or null, not number"},
        {"\"inputs\": [{", "\"inputs\": [7, {",
         "m.json:5:13: error: a tensor must be an object, not number"},
        {"[2, 0]", "[4294967296, 4294967296, 4294967296]",
         "m.json:5:76: error: the shape's element count overflows"},
        {"\"op\": \"Var\"}]",
         "\"op\": \"Var\"}, {\"name\": \"x\", \"file\": \"y.npy\", \"dtype\": \"int8\", "
         "\"shape\": [1], \"node\": \"%y\", \"op\": \"Var\"}]",
         "m.json:5:112: error: inputs 1 repeats the name or file of inputs 0"},
        {"\"outputs\": [{\"name\": \"output_0\", \"file\": \"output_0.npy\", \"dtype\": "
         "\"float16\", \"shape\": [], \"node\": \"%3\", \"op\": \"abs\"}]",
         "\"outputs\": []", "m.json:6:13: error: a region has at least one output"},
        {"\"output_0.npy\"", "\"input_x.npy\"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *bad = edited(cases[i].from, cases[i].to);
        if (cases[i].want) {
            expect_parse_error(bad, cases[i].want);
        } else { /* a file used twice is fine across inputs and outputs */
            byocl_capture_manifest *ok = parse_ok(bad);
            byocl_capture_manifest_free(ok);
        }
        free(bad);
    }
    expect_parse_error("[1]", "m.json:1:1: error: a capture manifest is an object, not array");
    expect_parse_error("{", "m.json:1:2: error: expected a key (a string)");
}

static void test_compare(void **state)
{
    (void)state;
    int64_t four = 4;
    float a[] = {1, 2, 3, 4}, b[] = {1, 2.5f, 3, 4.00001f};
    byocl_tensor *want = ts_tensor_f32(1, &four, a), *got = ts_tensor_f32(1, &four, b);
    byocl_capture_diff d;
    byocl_capture_compare(got, want, 1e-4, 1e-5, &d);
    assert_false(d.ok);
    assert_int_equal(d.first_bad, 1);
    assert_int_equal(d.n_bad, 1); /* 4.00001 is within 1e-5 + 1e-4 * 4 */
    assert_true(fabs(d.max_abs - 0.5) < 1e-12);
    assert_true(fabs(d.rel_l2 - sqrt((0.25 + 1e-10) / 30.0)) < 1e-6);
    byocl_capture_compare(want, want, 0, 0, &d);
    assert_true(d.ok && d.max_abs == 0 && d.rel_l2 == 0 && d.first_bad == -1);
    float n[] = {1, NAN, 3, 4};
    byocl_tensor *nan = ts_tensor_f32(1, &four, n);
    byocl_capture_compare(nan, want, 1, 1, &d);
    assert_false(d.ok);
    assert_int_equal(d.first_bad, 1);
    assert_true(isinf(d.max_abs));
    byocl_capture_compare(nan, nan, 0, 0, &d); /* NaN where NaN was captured matches */
    assert_true(d.ok);
    int64_t two = 2;
    byocl_tensor *other = ts_tensor_f32(1, &two, NULL);
    byocl_capture_compare(other, want, 1, 1, &d);
    assert_false(d.ok);
    assert_int_equal(d.first_bad, 0);
    byocl_tensor_unref(other);
    byocl_tensor_unref(nan);
    byocl_tensor_unref(want);
    byocl_tensor_unref(got);
    char buf[64];
    assert_string_equal(byocl_capture_file_name("input_", "block5/conv:0", buf, sizeof buf),
                        "input_block5_conv_0");
    assert_string_equal(byocl_capture_file_name("", ".x", buf, sizeof buf), "_x");
}

/* Program caches kept between runs of the suite under the test folder: the first run
 * pays PoCL's compile of the seed region (seconds), later runs read it back. */
static void keep_caches(void)
{
    const char *base = getenv("BYOCL_TEST_TMP");
    FMT(pocl_cache, "%s/capture_pocl_cache", base ? base : "/tmp/byocl-test");
    FMT(byocl_cache, "%s/capture_byocl_cache", base ? base : "/tmp/byocl-test");
    mkdir(base ? base : "/tmp/byocl-test", 0777);
    mkdir(pocl_cache, 0777);
    mkdir(byocl_cache, 0777);
    setenv("POCL_CACHE_DIR", pocl_cache, 1);
    setenv("BYOCL_CACHE_DIR", byocl_cache, 1);
    unsetenv("BYOCL_OPENCL_DEVICE");
}

int main(void)
{
    keep_caches();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture_seed_region),
        cmocka_unit_test(test_capture_node_inside_region),
        cmocka_unit_test(test_replay_catches_a_change),
        cmocka_unit_test(test_capture_errors),
        cmocka_unit_test(test_replay_bad_folder),
        cmocka_unit_test(test_capture_replaced),
        cmocka_unit_test(test_manifest_parse),
        cmocka_unit_test(test_compare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
