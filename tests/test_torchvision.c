/* Real CNNs: torchvision's resnet18, mobilenet_v2 and squeezenet1_1 exported to ONNX by
 * tools/export_torchvision.py (random weights) with PyTorch's output for a fixed input;
 * `byocl run` on the reference executor, built for the host (--target host) and offloaded
 * (--target opencl: the regions on OpenCL, the rest on the host) must match it to a
 * relative L2 error of 1e-4.
 *
 * The models are not committed (about 65 MB). Produce them once with
 *     /usr/bin/python3 tools/export_torchvision.py <build>/torchvision
 * (or into $BYOCL_TORCHVISION_DIR); without them this test is skipped, saying so. */
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_REL_L2 1e-4

static const char *const models[] = {"resnet18", "mobilenet_v2", "squeezenet1_1"};

/* The reference executor; the graph executor with LLVM-compiled host kernels; and with
 * the regions offloaded to OpenCL (PoCL), the rest on the host. */
static const struct {
    const char *name, *flags;
} paths[] = {{"the reference executor", ""},
             {"target host", "--target host"},
             {"target opencl", "--target opencl"}};

/* $BYOCL_TORCHVISION_DIR, else <build>/torchvision next to <build>/tools/byocl. */
static const char *models_dir(void)
{
    static char dir[4096];
    const char *env = getenv("BYOCL_TORCHVISION_DIR");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
        return dir;
    }
    snprintf(dir, sizeof dir, "%s", BYOCL_CLI_PATH);
    char *tools = strstr(dir, "/tools/byocl");
    if (tools)
        snprintf(tools, sizeof dir - (size_t)(tools - dir), "/torchvision");
    return dir;
}

static bool exists(const char *dir, const char *name, const char *suffix)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s%s", dir, name, suffix);
    return stat(path, &st) == 0;
}

static byocl_tensor *read_npy(const char *path)
{
    byocl_error err = {0};
    byocl_tensor *t = NULL;
    if (byocl_npy_read(path, &t, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return t;
}

/* Runs one model on one path and checks its output against PyTorch's. */
static void check_model(const char *dir, const char *out_dir, const char *model, int path)
{
    char args[16384], file[4096], *out, *err;
    snprintf(args, sizeof args,
             "run '%s/%s.onnx' --input input='%s/%s_input.npy' --output-dir '%s/%s-%d' %s", dir,
             model, dir, model, out_dir, model, path, paths[path].flags);
    int rc = ts_run_cli(args, &out, &err);
    if (rc != 0)
        fail_msg("byocl %s: exit %d: %s", args, rc, err);
    free(out);
    free(err);
    snprintf(file, sizeof file, "%s/%s-%d/output_0.npy", out_dir, model, path);
    byocl_tensor *got = read_npy(file);
    snprintf(file, sizeof file, "%s/%s_output.npy", dir, model);
    byocl_tensor *want = read_npy(file);
    double rel = ts_relative_l2(got, want);
    print_message("%s on %s: relative L2 error %.3g against PyTorch\n", model, paths[path].name,
                  rel);
    assert_true(rel <= MAX_REL_L2);
    byocl_tensor_unref(got);
    byocl_tensor_unref(want);
}

static bool models_present(const char *dir)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (!exists(dir, models[i], ".onnx") || !exists(dir, models[i], "_input.npy") ||
            !exists(dir, models[i], "_output.npy"))
            return false;
    return true;
}

static void test_models_match_pytorch(void **state)
{
    (void)state;
    const char *dir = models_dir();
    const char *out_dir = ts_tmpdir("torchvision");
    for (int p = 0; p < (int)(sizeof paths / sizeof paths[0]); p++)
        for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
            check_model(dir, out_dir, models[i], p);
    ts_remove_tree(out_dir);
}

int main(void)
{
    if (!models_present(models_dir())) {
        /* ctest shows exit code 77 as "Skipped" (SKIP_RETURN_CODE in tests/CMakeLists.txt) */
        printf("SKIPPED: the exported torchvision models are not in %s; produce them with: "
               "/usr/bin/python3 tools/export_torchvision.py %s\n",
               models_dir(), models_dir());
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_models_match_pytorch)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
