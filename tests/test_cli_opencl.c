/* The CLI with the OpenCL target: `byocl run MODEL --target opencl` (outputs against the
 * reference executor's), --device and $BYOCL_OPENCL_DEVICE, --profile's kernel and transfer
 * lines, no OpenCL driver (OCL_ICD_VENDORS at an empty folder) with and without
 * --fallback host, `byocl partition --emit`, `byocl info`, and the usage errors. The
 * CLI runs with fresh PoCL and byocl caches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "opencl_test_util.h"
#include "byocl/tensor_io.h"

static char pocl_cache[512], byocl_cache[512];

#define FMT(buf, ...) snprintf(buf, sizeof buf, __VA_ARGS__)

/* Output i of a run written to DIR/output_<i>.npy. */
static byocl_tensor *read_output(const char *dir, int i)
{
    char path[700];
    FMT(path, "%s/output_%d.npy", dir, i);
    byocl_tensor *t = NULL;
    byocl_error err = {0};
    if (byocl_npy_read(path, &t, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return t;
}

/* Runs `flags` on MODEL writing its outputs to a fresh folder, and the reference executor
 * on the same inputs; the n outputs must agree within the float32 bound. */
static void expect_agrees(const char *model, const char *flags, int n, char **err_out)
{
    char ref_dir[600], got_dir[600], args[2000];
    FMT(ref_dir, "%s", ts_tmpdir("cli_opencl_ref"));
    FMT(got_dir, "%s", ts_tmpdir("cli_opencl_got"));
    FMT(args, "run %s --random-inputs=3 --output-dir '%s'", model, ref_dir);
    assert_int_equal(ts_run_cli(args, NULL, NULL), 0);
    char *out = NULL, *err = NULL;
    FMT(args, "run %s --random-inputs=3 %s --output-dir '%s'", model, flags, got_dir);
    int rc = ts_run_cli(args, &out, &err);
    if (rc != 0)
        fail_msg("byocl %s exited %d:\n%s%s", args, rc, out, err);
    ts_assert_contains(out, " for target opencl in ");
    for (int i = 0; i < n; i++) {
        byocl_tensor *want = read_output(ref_dir, i), *got = read_output(got_dir, i);
        double e = ts_relative_l2(got, want);
        if (e > OCL_TOL_F32)
            fail_msg("%s output %d: relative L2 error %g", model, i, e);
        byocl_tensor_unref(want);
        byocl_tensor_unref(got);
    }
    free(out);
    if (err_out)
        *err_out = err;
    else
        free(err);
    ts_remove_tree(ref_dir);
    ts_remove_tree(got_dir);
}

static void test_run_seed_on_opencl(void **state)
{
    (void)state;
    char *err = NULL;
    expect_agrees("builtin:seed", "--target opencl", 3, &err);
    assert_string_equal(err, "");
    free(err);
    expect_agrees("builtin:seed", "--target opencl --device 0", 3, NULL);
    /* The target's options: copied buffers give the same results. */
    expect_agrees("builtin:seed", "--target opencl --target-opt opencl.buffers=copy "
                  "--target-opt opencl.device=0", 3, NULL);
}

/* run --dump-after shows the module after a pass of the partitioning, as partition does. */
static void test_run_dump_after(void **state)
{
    (void)state;
    char *err = NULL;
    expect_agrees("builtin:seed", "--target opencl --dump-after partition", 3, &err);
    ts_assert_contains(err, "// byocl: the module after partition\n");
    ts_assert_contains(err, "def @opencl_main_0(");
    assert_null(strstr(err, "the module after merge_regions"));
    free(err);
}

static void test_device_errors(void **state)
{
    (void)state;
    char *err = NULL;
    assert_int_equal(ts_run_cli("run builtin:seed --random-inputs --target opencl --device nvidia",
                                NULL, &err),
                     1);
    /* --device is checked before the model is loaded; the environment's choice when the
     * first region is built. */
    ts_assert_contains(err, "byocl: error: device 'nvidia' names no device of target opencl: "
                            "give an index from 0 to 0 or a part of a device's name "
                            "(devices: 0: ");
    free(err);
    assert_int_equal(ts_run_cli("run nosuch.relay --target opencl --device nvidia", NULL, &err),
                     1);
    ts_assert_contains(err, "byocl: error: device 'nvidia' names no device of target opencl");
    free(err);
    setenv("BYOCL_OPENCL_DEVICE", "radeon", 1);
    assert_int_equal(ts_run_cli("run builtin:seed --random-inputs --target opencl", NULL, &err),
                     1);
    unsetenv("BYOCL_OPENCL_DEVICE");
    ts_assert_contains(err, "BYOCL_OPENCL_DEVICE 'radeon' names no OpenCL device");
    free(err);
    /* A bad number of build jobs fails the region's build, naming the variable. */
    setenv("BYOCL_OPENCL_BUILD_JOBS", "abc", 1);
    char *out = NULL;
    assert_int_equal(ts_run_cli("run builtin:seed --random-inputs --target opencl", &out, &err),
                     1);
    unsetenv("BYOCL_OPENCL_BUILD_JOBS");
    assert_string_equal(out, "");
    assert_string_equal(err, "byocl: error: in @main, %1 (@opencl_main_0): bad "
                             "BYOCL_OPENCL_BUILD_JOBS 'abc': expected a whole number of build "
                             "jobs from 1 to 4096 (1: build in this process only)\n");
    free(out);
    free(err);
}

static void test_profile_lines(void **state)
{
    (void)state;
    char *out = NULL, *err = NULL;
    assert_int_equal(ts_run_cli("run builtin:seed --random-inputs --target opencl --profile "
                                "--runs 2",
                                &out, &err),
                     0);
    ts_assert_contains(out, "profile: 4 steps, mean of 2 runs\n");
    ts_assert_contains(out, "opencl_main_0 (region, opencl)\n");
    ts_assert_contains(out, "    kernel nn.conv2d+nn.batch_norm+nn.relu (%0 to %3) (k");
    ts_assert_contains(out, "    transfers\n");
    ts_assert_contains(out, "    gaps between kernels\n");
    ts_assert_contains(out, "    host side of the calls\n");
    assert_string_equal(err, "");
    free(out);
    free(err);
}

/* No OpenCL driver: the ICD loader reads OCL_ICD_VENDORS (an empty folder). */
static void test_no_platform_and_fallback(void **state)
{
    (void)state;
    char empty[600];
    FMT(empty, "%s", ts_tmpdir("cli_opencl_no_icd"));
    setenv("OCL_ICD_VENDORS", empty, 1);
    static const char fix[] =
        "no OpenCL platform found: the OpenCL ICD loader has no driver to load; install an "
        "OpenCL driver (ICD) such as pocl-opencl-icd (Debian/Ubuntu: apt-get install "
        "pocl-opencl-icd), or check OCL_ICD_VENDORS and /etc/OpenCL/vendors";
    char *out = NULL, *err = NULL;
    assert_int_equal(ts_run_cli("run builtin:seed --random-inputs --target opencl", &out, &err),
                     1);
    char want[1024];
    FMT(want, "byocl: error: in @main, %%1 (@opencl_main_0): %s\n", fix);
    assert_string_equal(err, want);
    free(out);
    free(err);
    assert_int_equal(ts_run_cli("info", &out, NULL), 0);
    FMT(want, "  devices: none (%s)\n", fix);
    ts_assert_contains(out, want);
    free(out);
    /* --fallback host: the region runs on the host, with a warning */
    err = NULL;
    expect_agrees("builtin:seed", "--target opencl --fallback host --profile", 3, &err);
    FMT(want, "byocl: warning: region @opencl_main_0 runs on the host (--fallback host): %s\n",
        fix);
    assert_string_equal(err, want);
    free(err);
    ts_remove_tree(empty);
}

static int restore_icd(void **state)
{
    (void)state;
    unsetenv("OCL_ICD_VENDORS");
    return 0;
}

static void test_emit_cl(void **state)
{
    (void)state;
    char dir[600], args[800], path[800];
    FMT(dir, "%s/emit/sub", ts_tmpdir("cli_opencl_emit"));
    char *out = NULL, *err = NULL;
    FMT(args, "partition builtin:seed --emit '%s'", dir);
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    ts_assert_contains(out, "def @opencl_main_0(");
    char want[900];
    FMT(want, "wrote the code of 1 region to %s\n", dir);
    assert_string_equal(err, want);
    free(out);
    free(err);
    FMT(path, "%s/opencl_main_0.cl", dir);
    char *cl = ts_read_file(path, NULL);
    ts_assert_contains(cl, "/* OpenCL C 1.2 program for region @opencl_main_0, generated by byocl. */");
    ts_assert_contains(cl, "__kernel void ");
    free(cl);
    FMT(path, "%s/opencl_main_0.launch.txt", dir);
    char *launch = ts_read_file(path, NULL);
    ts_assert_contains(launch, "opencl_main_0");
    free(launch);
    /* partitioned for opencl by op support, a model with several regions */
    FMT(args, "partition builtin:mobilenet_v2 --target opencl --emit '%s'", dir);
    assert_int_equal(ts_run_cli(args, NULL, &err), 0);
    ts_assert_contains(err, "wrote the code of 1 region to ");
    free(err);
    ts_remove_tree(dir);
}

static void test_info_lists_devices(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(ts_run_cli("info", &out, NULL), 0);
    ts_assert_contains(out, "targets: opencl\ntarget opencl\n  options (--target-opt "
                            "opencl.KEY=VALUE):\n    device       INDEX|NAME           the device ");
    ts_assert_contains(out, "\n    buffers      auto|zero_copy|copy  how region tensors reach the "
                            "device: wrapped (zero_copy) or copied (default: auto)\n");
    ts_assert_contains(out, "\n    keep_device  on|off               keep the device open after "
                            "its last region, for programs that build many models (default: "
                            "off)\n");
    ts_assert_contains(out, "  devices (--device INDEX or a part of the name):\n    0: ");
    ts_assert_contains(out, " (CPU, Portable Computing Language; ");
    ts_assert_contains(out, ", shares host memory)\n");
    free(out);
}

static void expect_usage(const char *args, const char *msg)
{
    char *err = NULL;
    assert_int_equal(ts_run_cli(args, NULL, &err), 2);
    char want[600];
    FMT(want, "byocl: error: %s; see 'byocl run --help'\n", msg);
    assert_string_equal(err, want);
    free(err);
}

static void test_usage_errors(void **state)
{
    (void)state;
    expect_usage("run builtin:seed --random-inputs --device 0",
                 "--device goes with a region target (--target T)");
    expect_usage("run builtin:seed --random-inputs --target host --device 0",
                 "--device goes with a region target (--target T)");
    expect_usage("run builtin:seed --random-inputs --target host --fallback host",
                 "--fallback goes with a region target (--target T)");
    expect_usage("run builtin:seed --random-inputs --target opencl --fallback gpu",
                 "unknown --fallback 'gpu' (known: host, ref)");
    expect_usage("run builtin:seed --random-inputs --target opencl --fn other",
                 "--fn goes with --target host|ref (a region target partitions @main)");
    expect_usage("run builtin:seed --random-inputs --target vulkan",
                 "unknown target 'vulkan' (known: host, ref, opencl)");
}

int main(void)
{
    ocl_fresh_caches("cli_opencl", pocl_cache, byocl_cache, sizeof pocl_cache);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_seed_on_opencl),
        cmocka_unit_test(test_run_dump_after),
        cmocka_unit_test(test_device_errors),
        cmocka_unit_test(test_profile_lines),
        cmocka_unit_test_teardown(test_no_platform_and_fallback, restore_icd),
        cmocka_unit_test(test_emit_cl),
        cmocka_unit_test(test_info_lists_devices),
        cmocka_unit_test(test_usage_errors),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    ts_remove_tree(pocl_cache);
    ts_remove_tree(byocl_cache);
    return failed;
}
