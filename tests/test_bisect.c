/* `byocl bisect` with the faulty test plugin (tests/plugins/faulty_target.c: nn.relu computed
 * as the identity) on a model with three regions: bisect names exactly the region holding the
 * relu and captures it with the inputs computed here by hand, replay of that capture fails
 * on the faulty target and passes on the host, replay of a good region passes, a region
 * failing mid-run leaves no folder; and bisect on the real OpenCL target finds nothing. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "byocl/capture.h"
#include "byocl/tensor_io.h"

#define FMT(buf, ...) snprintf(buf, sizeof buf, __VA_ARGS__)

/* Regions: faulty_main_0 = abs(add(x, y)); host: max_pool2d, subtract 1.5 (%3 here);
 * faulty_main_1 = relu (%4, the fault); host: avg_pool2d; faulty_main_2 = multiply, add. */
static const char three_regions[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 4, 8, 8), float32], %y: Tensor[(1, 4, 8, 8), float32]) {\n"
    "  %0 = add(%x, %y);\n"
    "  %1 = abs(%0);\n"
    "  %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2]);\n"
    "  %3 = subtract(%2, 1.5f);\n"
    "  %4 = nn.relu(%3);\n"
    "  %5 = nn.avg_pool2d(%4, pool_size=[2, 2], strides=[2, 2]);\n"
    "  %6 = multiply(%5, %5);\n"
    "  add(%6, %5)\n"
    "}\n";

static char work[600], model[700], plugin[700];

static void expect_listing(const char *dir, const char *want)
{
    char got[1024] = "";
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    char names[16][256];
    int n = 0;
    while ((e = readdir(d)) != NULL && n < 16)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            FMT(names[n++], "%s", e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    for (int i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "," : "", names[i]);
    assert_string_equal(got, want);
}

/* Input k (x: 0, y: 1) as --random-inputs fills it. */
static byocl_tensor *random_input(int k)
{
    int64_t dims[] = {1, 4, 8, 8};
    byocl_tensor *t = ts_tensor_f32(4, dims, NULL);
    byocl_tensor_fill_random(t, (uint64_t)k, 0.0, 1.0);
    return t;
}

/* %3 = max_pool2d(abs(x + y), 2x2, stride 2) - 1.5, computed here. */
static void relu_input(float out[64])
{
    byocl_tensor *x = random_input(0), *y = random_input(1);
    const float *a = byocl_tensor_cdata(x), *b = byocl_tensor_cdata(y);
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                float m = -INFINITY;
                for (int di = 0; di < 2; di++)
                    for (int dj = 0; dj < 2; dj++) {
                        int at = c * 64 + (2 * i + di) * 8 + 2 * j + dj;
                        float v = fabsf(a[at] + b[at]);
                        m = v > m ? v : m;
                    }
                out[c * 16 + i * 4 + j] = m - 1.5f;
            }
    byocl_tensor_unref(x);
    byocl_tensor_unref(y);
}

static void test_bisect_names_the_faulty_region(void **state)
{
    (void)state;
    char dir[700], args[3000], want[3000];
    FMT(dir, "%s/bisect_cap", work);
    FMT(args, "--plugin '%s' bisect '%s' --target faulty --random-inputs --capture '%s'", plugin,
        model, dir);
    char *out = NULL, *err = NULL;
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    assert_string_equal(err, "byocl: error: region faulty_main_1 on faulty differs from host "
                             "beyond the tolerance\n");
    FMT(want, "bisect of %s: 3 regions on faulty against host (rtol 0.0001, atol 1e-05), each "
              "fed the host path's tensors, in execution order:\n"
              "  region               call        max abs err       rel L2  first bad  result\n"
              "  faulty_main_0        %%0                    0            0          -  ok\n",
        model);
    ts_assert_contains(out, want);
    ts_assert_contains(out, "  faulty_main_1        %3     ");
    ts_assert_contains(out, "  DIFFERS (output 0)\n"
                            "  faulty_main_2        the result            0            0          "
                            "-  ok\n"
                            "end to end, the outputs of @main offloaded to faulty against the "
                            "host path:\n"
                            "  output  max abs err       rel L2  first bad  result\n"
                            "  0     ");
    ts_assert_contains(out, "  DIFFERS\n"
                            "first region beyond the tolerance: faulty_main_1 (%3 in the "
                            "partitioned @main)\n");
    FMT(want, "wrote %s/faulty_main_1 (replay it: byocl replay %s/faulty_main_1)\n", dir, dir);
    ts_assert_contains(out, want);
    free(out);
    free(err);
    expect_listing(dir, "faulty_main_1");

    /* The capture holds the host path's tensors: the relu's input and output, by hand. */
    char path[800];
    FMT(path, "%s/faulty_main_1", dir);
    byocl_capture_folder *f = NULL;
    byocl_error e;
    if (byocl_capture_read(path, &f, &e) != BYOCL_OK)
        fail_msg("%s", e.msg);
    assert_string_equal(f->manifest->outputs_from, "host");
    assert_string_equal(f->manifest->runner, "faulty");
    assert_string_equal(f->manifest->inputs[0].node, "%3");
    assert_string_equal(f->manifest->inputs[0].op, "subtract");
    assert_string_equal(f->manifest->outputs[0].node, "%4");
    assert_string_equal(f->manifest->outputs[0].op, "nn.relu");
    float in[64], relu[64];
    relu_input(in);
    int negative = 0;
    for (int i = 0; i < 64; i++) {
        relu[i] = in[i] > 0 ? in[i] : 0;
        negative += in[i] < 0;
    }
    assert_true(negative > 0); /* else relu as the identity would not show */
    ts_assert_f32_close(f->inputs[0], in, 64, 1e-6, 1e-6);
    ts_assert_f32_close(f->outputs[0], relu, 64, 0, 0);
    byocl_capture_folder_free(f);

    /* Replay: wrong on the faulty target, right on the host and ref. */
    FMT(args, "--plugin '%s' replay '%s'", plugin, path);
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    FMT(want, "byocl: error: faulty_main_1 on faulty: 1 of 1 output beyond the tolerance; "
              "output 0 (%%4 of @main): %d of 64 elements; first at ", negative);
    ts_assert_contains(err, want);
    free(out);
    free(err);
    FMT(args, "replay '%s'", path);
    FMT(want, "byocl: error: %s was captured on target 'faulty', which is not registered: load "
              "its plugin (byocl --plugin LIB replay ...) or pass --target host|ref\n", path);
    ts_cli_expect_failure(args, want);
    FMT(args, "replay '%s' --target host", path);
    free(ts_cli_expect(args, 0, ""));
    FMT(args, "replay '%s' --target ref", path);
    free(ts_cli_expect(args, 0, ""));
    ts_remove_tree(dir);
}

/* Capture of a good region (from `byocl run`) replays on the faulty target. */
static void test_good_region_replays(void **state)
{
    (void)state;
    char dir[700], args[3000];
    FMT(dir, "%s/good_cap", work);
    FMT(args, "--plugin '%s' run '%s' --target faulty --random-inputs --capture '%s' "
              "--capture-region faulty_main_2", plugin, model, dir);
    free(ts_cli_expect(args, 0, ""));
    expect_listing(dir, "faulty_main_2");
    FMT(args, "--plugin '%s' replay '%s/faulty_main_2'", plugin, dir);
    char *out = ts_cli_expect(args, 0, "");
    ts_assert_contains(out, "compared with the outputs captured from faulty (rtol 0.0001, "
                            "atol 1e-05):\n");
    assert_null(strstr(out, "DIFFERS"));
    free(out);
    ts_remove_tree(dir);
}

/* A region that fails leaves no folder (and nothing half-written); the one before it is
 * captured whole, and the error names the failing region. */
static void test_failing_region_leaves_no_folder(void **state)
{
    (void)state;
    char dir[700], args[3000], want[3000];
    FMT(dir, "%s/fail_cap", work);
    FMT(args, "--plugin '%s' run '%s' --target faulty --random-inputs --capture '%s'", plugin,
        model, dir);
    setenv("BYOCL_FAULTY_FAIL", "faulty_main_1", 1);
    char *out = NULL, *err = NULL;
    int rc = ts_run_cli(args, &out, &err);
    unsetenv("BYOCL_FAULTY_FAIL");
    assert_int_equal(rc, 1);
    assert_string_equal(err, "byocl: error: in @main, %3 (@faulty_main_1): faulty target: "
                             "faulty_main_1 fails on purpose (BYOCL_FAULTY_FAIL)\n");
    FMT(want, "wrote %s/faulty_main_0\n", dir);
    ts_assert_contains(out, want);
    free(out);
    free(err);
    expect_listing(dir, "faulty_main_0");
    ts_remove_tree(dir);

    /* With --runs 2 and the second call failing, the region captured in the first run is
     * dropped; the others keep their last whole call. */
    setenv("BYOCL_FAULTY_FAIL", "faulty_main_1@2", 1);
    FMT(args, "--plugin '%s' run '%s' --target faulty --random-inputs --capture '%s' --runs 2",
        plugin, model, dir);
    rc = ts_run_cli(args, &out, &err);
    unsetenv("BYOCL_FAULTY_FAIL");
    assert_int_equal(rc, 1);
    ts_assert_contains(err, "(@faulty_main_1): faulty target: faulty_main_1 fails on purpose");
    free(out);
    free(err);
    expect_listing(dir, "faulty_main_0,faulty_main_2");
    ts_remove_tree(dir);
}

/* The real OpenCL target agrees with the host on builtin:seed, against host and ref. */
static void test_bisect_opencl_seed(void **state)
{
    (void)state;
    static const char *const against[] = {"host", "ref"};
    for (int i = 0; i < 2; i++) {
        char args[200], want[300];
        FMT(args, "bisect builtin:seed --target opencl --random-inputs --against %s", against[i]);
        char *out = ts_cli_expect(args, 0, "");
        FMT(want, "every region of builtin:seed matches %s within the tolerance\n", against[i]);
        ts_assert_contains(out, want);
        ts_assert_contains(out, "end to end, the outputs of @main offloaded to opencl against "
                                "the host path:\n");
        assert_null(strstr(out, "DIFFERS"));
        ts_assert_contains(out, "  opencl_main_0        %1     ");
        free(out);
    }
}

static void test_bisect_usage(void **state)
{
    (void)state;
    ts_cli_expect_usage("bisect builtin:seed --random-inputs",
                        "byocl: error: missing --target T (the region target to check); see "
                        "'byocl bisect --help'\n");
    ts_cli_expect_usage("bisect builtin:seed --random-inputs --target host",
                        "byocl: error: --target host: bisect checks a region target such as "
                        "opencl; see 'byocl bisect --help'\n");
    ts_cli_expect_usage("bisect builtin:seed --random-inputs --target opencl --against gpu",
                        "byocl: error: unknown --against 'gpu' (known: host, ref); see 'byocl "
                        "bisect --help'\n");
    ts_cli_expect_usage("bisect builtin:seed --random-inputs --target opencl --atol x",
                        "byocl: error: --atol x: expected a number >= 0; see 'byocl bisect "
                        "--help'\n");
    /* A model from a file needs its values (a built-in one runs on its random inputs). */
    char args[2000], want[2000];
    FMT(args, "bisect '%s' --target opencl", model);
    FMT(want,
        "byocl: error: @main of %s has 2 unbound parameters: x, y; give each with --input "
        "NAME=FILE, bind them with --params FILE.npz, or pass --random-inputs\n",
        model);
    ts_cli_expect_failure(args, want);
}

int main(void)
{
    FMT(work, "%s", ts_tmpdir("bisect"));
    FMT(model, "%s/three.relay", work);
    FMT(plugin, "%s/libfaulty_target.so", BYOCL_PLUGIN_DIR);
    ts_write_text(model, three_regions);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bisect_names_the_faulty_region),
        cmocka_unit_test(test_good_region_replays),
        cmocka_unit_test(test_failing_region_leaves_no_folder),
        cmocka_unit_test(test_bisect_opencl_seed),
        cmocka_unit_test(test_bisect_usage),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    ts_remove_tree(work);
    return failed;
}
