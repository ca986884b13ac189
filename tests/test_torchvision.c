/* Real CNNs: torchvision's classification models exported to ONNX by
 * tools/export_torchvision.py (random weights), each with PyTorch's output for a fixed
 * input; `byocl run` on the reference executor, built for the host (--target host) and
 * offloaded (--target opencl: the regions on OpenCL, the rest on the host) must match it
 * to a relative L2 error of 1e-4, or of twice PyTorch's own float32 error where that is
 * larger (<name>_output_f32.npy: deep networks with random weights, resnet152 among them,
 * amplify float32 rounding to 3.6e-4 in PyTorch itself). At the end the test prints a
 * table: each model's GFLOP, whether byocl loads it, PyTorch's float32 error, byocl's
 * error, build and run times per path.
 *
 * The models are not committed (65 MB for the default three, gigabytes for all). The test
 * takes those that the exporter listed in <dir>/models.tsv; produce them with
 *     /usr/bin/python3 tools/export_torchvision.py [--quick | --all] <build>/torchvision
 * (`make test-torchvision` does it), or point $BYOCL_TORCHVISION_DIR elsewhere; without
 * models.tsv the test is skipped, saying so.
 *
 * $BYOCL_TORCHVISION_PATHS: the paths to run (default "ref,host,opencl");
 * $BYOCL_TORCHVISION_MODELS: the models of models.tsv to run (default all, comma-separated);
 * $BYOCL_TORCHVISION_REF_GFLOP: the reference executor (plain C loops, about 1 GFLOP/s)
 * runs the models up to this many GFLOP (default 4), the larger ones are marked "-". */
#include "test_support.h"

#include "byocl/frontend.h"
#include "byocl/split.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REL_L2 1e-4
#define MAX_MODELS 256
#define N_PATHS 3

/* The reference executor; the graph executor with LLVM-compiled host kernels; and with
 * the regions offloaded to OpenCL (PoCL), the rest on the host. The built paths run three
 * times: the first pays for what the driver finishes at a kernel's first launch. */
static const struct {
    const char *name, *key, *flags;
} paths[N_PATHS] = {{"the reference executor", "ref", ""},
                    {"target host", "host", "--target host --runs 3"},
                    {"target opencl", "opencl", "--target opencl --runs 3"}};

/* What one path gave for one model. */
typedef struct {
    bool ran;
    double rel_l2, build_ms, run_ms;
    char why[256]; /* why it did not run or failed; "" when it passed */
} path_result;

typedef struct {
    char name[64];
    char export_status[256]; /* models.tsv's last column: "ok" or why not exported */
    char load[BYOCL_ERROR_MSG_MAX]; /* "" when byocl loads it, else byocl's message */
    double gflop;
    double torch_f32_rel_l2; /* PyTorch's float32 output against its float64 one, or NAN */
    path_result path[N_PATHS];
} model_row;

static model_row rows[MAX_MODELS];
static int n_rows;

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

/* Whether `word` is one of the comma-separated words of $`var` (all when it is unset). */
static bool listed(const char *var, const char *word)
{
    const char *env = getenv(var);
    if (!env || !*env)
        return true;
    size_t n = strlen(word);
    for (const char *s = env; (s = strstr(s, word)) != NULL; s += n)
        if ((s == env || s[-1] == ',') && (s[n] == '\0' || s[n] == ','))
            return true;
    return false;
}

static double ref_gflop_limit(void)
{
    const char *env = getenv("BYOCL_TORCHVISION_REF_GFLOP");
    return env && *env ? strtod(env, NULL) : 4.0;
}

/* Reads models.tsv: name, family, parameters, input size, seconds, status. */
static bool read_manifest(const char *dir)
{
    char path[4096], line[1024];
    snprintf(path, sizeof path, "%s/models.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    while (fgets(line, sizeof line, f) && n_rows < MAX_MODELS) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        line[strcspn(line, "\n")] = '\0';
        model_row *r = &rows[n_rows++];
        memset(r, 0, sizeof *r);
        r->torch_f32_rel_l2 = NAN;
        char *tab = strchr(line, '\t');
        if (tab)
            *tab = '\0';
        snprintf(r->name, sizeof r->name, "%.*s", (int)sizeof r->name - 1, line);
        const char *status = tab ? strrchr(tab + 1, '\t') : NULL;
        snprintf(r->export_status, sizeof r->export_status, "%.*s",
                 (int)sizeof r->export_status - 1, status ? status + 1 : "ok");
    }
    fclose(f);
    return true;
}

static byocl_tensor *read_npy(const char *path)
{
    byocl_error err = {0};
    byocl_tensor *t = NULL;
    if (byocl_npy_read(path, &t, &err) != BYOCL_OK)
        fail_msg("%s", err.msg);
    return t;
}

/* The number after `key` in `text`, or NAN. */
static double number_after(const char *text, const char *key)
{
    const char *at = text ? strstr(text, key) : NULL;
    return at ? strtod(at + strlen(key), NULL) : NAN;
}

/* Loads the model as `byocl run` would; records byocl's message when it cannot, else the
 * estimated GFLOP of @main (2 per multiply-add of convolutions and dense layers). */
static void load_model(const char *dir, model_row *r)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.onnx", dir, r->name);
    byocl_module *m = NULL;
    byocl_error err = {0};
    if (byocl_load_model(path, NULL, &m, &err) != BYOCL_OK) {
        snprintf(r->load, sizeof r->load, "%s", err.msg);
        return;
    }
    const byocl_function *main_fn = byocl_module_find(m, "main");
    int64_t flops = 0;
    for (int id = 0; id < byocl_function_num_nodes(main_fn); id++)
        flops += byocl_split_node_flops(main_fn, id);
    r->gflop = (double)flops * 1e-9;
    byocl_module_free(m);
}

/* How far PyTorch's own float32 output is from the float64 reference (NAN without
 * <name>_output_f32.npy, which older exports lack). */
static double torch_f32_error(const char *dir, const char *name)
{
    char file[4096];
    snprintf(file, sizeof file, "%s/%s_output_f32.npy", dir, name);
    FILE *f = fopen(file, "rb");
    if (!f)
        return NAN;
    fclose(f);
    byocl_tensor *f32 = read_npy(file);
    snprintf(file, sizeof file, "%s/%s_output.npy", dir, name);
    byocl_tensor *want = read_npy(file);
    double e = ts_relative_l2(f32, want);
    byocl_tensor_unref(f32);
    byocl_tensor_unref(want);
    return e;
}

/* The error a path may have: MAX_REL_L2, or twice PyTorch's float32 error if larger. */
static double tolerance(const model_row *r)
{
    return r->torch_f32_rel_l2 > MAX_REL_L2 / 2 ? 2 * r->torch_f32_rel_l2 : MAX_REL_L2;
}

/* Runs one model on one path and compares its output with PyTorch's. */
static void run_path(const char *dir, const char *out_dir, model_row *r, int p)
{
    path_result *res = &r->path[p];
    char args[16384], file[4096], *out, *err;
    snprintf(args, sizeof args,
             "run '%s/%s.onnx' --input input='%s/%s_input.npy' --output-dir '%s/%s-%s' %s", dir,
             r->name, dir, r->name, out_dir, r->name, paths[p].key, paths[p].flags);
    int rc = ts_run_cli(args, &out, &err);
    if (rc != 0) {
        snprintf(res->why, sizeof res->why, "exit %d: %.200s", rc, err);
    } else {
        snprintf(file, sizeof file, "%s/%s-%s/output_0.npy", out_dir, r->name, paths[p].key);
        byocl_tensor *got = read_npy(file);
        snprintf(file, sizeof file, "%s/%s_output.npy", dir, r->name);
        byocl_tensor *want = read_npy(file);
        res->ran = true;
        res->rel_l2 = ts_relative_l2(got, want);
        /* "built @main of M for target T in X ms", "ran ... 3 times: ... median X ms";
         * the reference executor builds nothing: "ran @main of M on the ref executor in X" */
        char built[64];
        snprintf(built, sizeof built, "for target %s in ", paths[p].key);
        res->build_ms = p == 0 ? NAN : number_after(out, built);
        res->run_ms = number_after(out, p == 0 ? "executor in " : "median ");
        if (!(res->rel_l2 <= tolerance(r)))
            snprintf(res->why, sizeof res->why,
                     "relative L2 error %.3g > %.3g (1e-4, or twice PyTorch's float32 error "
                     "%.3g)",
                     res->rel_l2, tolerance(r), r->torch_f32_rel_l2);
        byocl_tensor_unref(got);
        byocl_tensor_unref(want);
    }
    if (res->why[0])
        print_message("%s on %s: %s\n", r->name, paths[p].name, res->why);
    else
        print_message("%s on %s: matches PyTorch (relative L2 error %.2g)\n", r->name,
                      paths[p].name, res->rel_l2);
    free(out);
    free(err);
}

static void print_cell(double v, const char *fmt)
{
    if (isnan(v))
        printf(" - |");
    else {
        putchar(' ');
        printf(fmt, v);
        printf(" |");
    }
}

/* The report: one markdown row per model. */
static void print_table(void)
{
    printf("\n| model | GFLOP | load | rel. L2 PyTorch float32 | rel. L2 ref | rel. L2 host | "
           "rel. L2 opencl | build host ms | build opencl ms | run ref ms | run host ms | "
           "run opencl ms |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n_rows; i++) {
        const model_row *r = &rows[i];
        bool exported = strcmp(r->export_status, "ok") == 0;
        if (!listed("BYOCL_TORCHVISION_MODELS", r->name))
            continue;
        printf("| %s |", r->name);
        print_cell(exported && !r->load[0] ? r->gflop : NAN, "%.2f");
        printf(" %s |", !exported ? r->export_status : r->load[0] ? r->load : "ok");
        print_cell(r->torch_f32_rel_l2, "%.2g");
        for (int p = 0; p < N_PATHS; p++)
            print_cell(r->path[p].ran ? r->path[p].rel_l2 : NAN, "%.2g");
        for (int p = 1; p < N_PATHS; p++)
            print_cell(r->path[p].ran ? r->path[p].build_ms : NAN, "%.0f");
        for (int p = 0; p < N_PATHS; p++)
            print_cell(r->path[p].ran ? r->path[p].run_ms : NAN, "%.1f");
        putchar('\n');
    }
    fflush(stdout);
}

static void test_models_match_pytorch(void **state)
{
    (void)state;
    const char *dir = models_dir();
    const char *out_dir = ts_tmpdir("torchvision");
    int failures = 0;
    for (int i = 0; i < n_rows; i++) {
        model_row *r = &rows[i];
        if (strcmp(r->export_status, "ok") != 0 || !listed("BYOCL_TORCHVISION_MODELS", r->name))
            continue; /* not exported (reported, not byocl's failure), or not asked for */
        load_model(dir, r);
        r->torch_f32_rel_l2 = torch_f32_error(dir, r->name);
        if (r->load[0]) {
            print_message("%s: byocl cannot load it: %s\n", r->name, r->load);
            failures++;
            continue;
        }
        for (int p = 0; p < N_PATHS; p++) {
            if (!listed("BYOCL_TORCHVISION_PATHS", paths[p].key))
                continue;
            if (p == 0 && r->gflop > ref_gflop_limit()) {
                snprintf(r->path[p].why, sizeof r->path[p].why, "over %g GFLOP",
                         ref_gflop_limit());
                continue;
            }
            run_path(dir, out_dir, r, p);
            failures += r->path[p].why[0] != '\0';
        }
    }
    print_table();
    ts_remove_tree(out_dir);
    if (failures)
        fail_msg("%d model runs failed (the table above)", failures);
}

int main(void)
{
    if (!read_manifest(models_dir())) {
        /* ctest shows exit code 77 as "Skipped" (SKIP_RETURN_CODE in tests/CMakeLists.txt) */
        printf("SKIPPED: no exported torchvision models (%s/models.tsv); produce them with: "
               "/usr/bin/python3 tools/export_torchvision.py [--quick | --all] %s, or run "
               "make test-torchvision\n",
               models_dir(), models_dir());
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_models_match_pytorch)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
