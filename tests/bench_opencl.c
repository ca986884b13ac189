/* A measuring tool for the OpenCL runtime (not a test): bench_opencl [RUNS]
 *
 *   1. the cost of one region call beyond its kernels: a one-relu region on a (1, 64)
 *      tensor called RUNS times through its runtime module; the median wall time of a
 *      call, and with a profiling queue the median kernel time by OpenCL events;
 *   2. builtin:resnet18 and builtin:mobilenet_v2 with every op in OpenCL regions, RUNS
 *      runs on one executor after a warm-up: median, min and max;
 *   3. the conv2d kernels of resnet18 with their GFLOP/s (events, profiling on).
 * Uses the configured caches ($POCL_CACHE_DIR, $BYOCL_CACHE_DIR). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "byocl/byocl.h"
#include "byocl/opencl.h"
#include "byocl/pipeline.h"
#include "byocl/runtime.h"
#include "byocl/target.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const byocl_error *err)
{
    fprintf(stderr, "bench_opencl: %s\n", err->msg);
    exit(1);
}

static void region_call(int runs, bool profile)
{
    static const char text[] =
        "def @main(%x: Tensor[(1, 64), float32]) { @opencl_main_0(%x) }\n"
        "def @opencl_main_0(%opencl_0_i0: Tensor[(1, 64), float32], Compiler=\"opencl\", "
        "Primitive=1, Inline=1, global_symbol=\"opencl_main_0\") { nn.relu(%opencl_0_i0) }\n";
    byocl_error err;
    byocl_module *m = NULL;
    if (byocl_text_parse(text, strlen(text), "relu.relay", NULL, &m, &err) != BYOCL_OK ||
        byocl_infer_types(m, &err) != BYOCL_OK)
        die(&err);
    byocl_opencl_options o = byocl_opencl_options_default();
    o.profile = profile;
    byocl_rtmod *mod = NULL;
    if (byocl_opencl_compile(byocl_module_find(m, "opencl_main_0"), &o, &mod, &err) != BYOCL_OK)
        die(&err);
    int64_t dims[2] = {1, 64};
    byocl_shape shape = byocl_shape_make(2, dims);
    byocl_tensor *x = byocl_tensor_new(BYOCL_FLOAT32, &shape, &err);
    byocl_tensor *y = byocl_tensor_new(BYOCL_FLOAT32, &shape, &err);
    byocl_tensor_fill_random(x, 1, -1, 1);
    DLTensor dx = {.data = byocl_tensor_data(x), .device = {kDLCPU, 0}, .ndim = 2,
                   .dtype = byocl_dtype_to_dlpack(BYOCL_FLOAT32), .shape = dims};
    DLTensor dy = dx;
    dy.data = byocl_tensor_data(y);
    DLTensor *args[2] = {&dx, &dy};
    double *ms = malloc((size_t)runs * sizeof *ms), *kernel = malloc((size_t)runs * sizeof *kernel);
    for (int r = -10; r < runs; r++) { /* 10 warm-up calls */
        double t0 = now_ms();
        if (byocl_rtmod_run(mod, "opencl_main_0", args, 1, 1, &err) != BYOCL_OK)
            die(&err);
        double t = now_ms() - t0;
        if (r < 0)
            continue;
        ms[r] = t;
        byocl_region_part p = {0};
        kernel[r] = profile && byocl_rtmod_part(mod, "opencl_main_0", 1, &p) ? p.last_ms : 0;
    }
    double call = median(ms, runs), k = median(kernel, runs);
    if (profile)
        printf("one-relu region call, profiling queue: median %.1f us a call, kernel %.1f us "
               "(events), beyond the kernel %.1f us\n",
               call * 1e3, k * 1e3, (call - k) * 1e3);
    else
        printf("one-relu region call: median %.1f us a call (kernel included)\n", call * 1e3);
    free(ms);
    free(kernel);
    byocl_tensor_unref(x);
    byocl_tensor_unref(y);
    byocl_rtmod_free(mod);
    byocl_module_free(m);
}

static void model(const char *name, int runs, bool profile)
{
    byocl_error err;
    byocl_module *m = NULL;
    if (byocl_builtin_build(name, &m, &err) != BYOCL_OK)
        die(&err);
    const char *targets[1] = {"opencl"};
    byocl_target_options *topts = NULL;
    if (byocl_target_options_new(&topts, &err) != BYOCL_OK ||
        byocl_target_options_set(topts, "opencl", "profile", profile ? "on" : "off", &err) !=
            BYOCL_OK)
        die(&err);
    byocl_compile_options co = byocl_compile_options_default();
    co.partition.targets = targets;
    co.partition.n_targets = 1;
    co.build.target_options = topts;
    byocl_compiled *c = NULL;
    byocl_executor *ex = NULL;
    double t0 = now_ms();
    if (byocl_compile(m, &co, &c, &err) != BYOCL_OK || byocl_executor_new(c, &ex, &err) != BYOCL_OK)
        die(&err);
    byocl_target_options_free(topts);
    double build = now_ms() - t0;
    for (int i = 0; i < byocl_compiled_num_inputs(c); i++) {
        const byocl_type *t = byocl_compiled_input_type(c, i);
        byocl_tensor *v = byocl_tensor_new(t->dtype, &t->shape, &err);
        byocl_tensor_fill_random(v, (uint64_t)i, 0, 1);
        if (byocl_executor_set_input(ex, byocl_compiled_input_name(c, i), v, &err) != BYOCL_OK)
            die(&err);
        byocl_tensor_unref(v);
    }
    double *ms = malloc((size_t)runs * sizeof *ms);
    for (int r = -2; r < runs; r++) {
        double r0 = now_ms();
        if (byocl_executor_run(ex, &err) != BYOCL_OK)
            die(&err);
        if (r >= 0)
            ms[r] = now_ms() - r0;
        if (r == -1)
            byocl_compiled_reset_parts(c);
    }
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    double med = median(ms, runs);
    printf("%s, all-OpenCL (%d region%s, %d host kernel%s)%s: build %.0f ms; %d runs: median "
           "%.2f ms, min %.2f, max %.2f\n",
           name, st.n_regions, st.n_regions == 1 ? "" : "s", st.n_kernels,
           st.n_kernels == 1 ? "" : "s", profile ? ", profiling" : "", build, runs, med, ms[0],
           ms[runs - 1]);
    for (int s = 0; profile && s < byocl_executor_num_steps(ex); s++)
        for (int k = 0; k < byocl_compiled_num_step_parts(c, s); k++) {
            byocl_region_part p;
            byocl_compiled_step_part(c, s, k, &p, NULL);
            double mean = p.runs ? p.total_ms / (double)p.runs : 0;
            if (p.kernel && strstr(p.kernel, "conv2d") && p.flops > 0)
                printf("  %-14s %8.3f ms %7.1f GFLOP/s  %s\n", p.kernel, mean,
                       p.flops / (mean * 1e6), p.name);
            else if (p.transfer)
                printf("  transfers      %8.3f ms\n", mean);
        }
    free(ms);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    byocl_module_free(m);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 20;
    if (runs < 1)
        runs = 1;
    const char *only = argc > 2 ? argv[2] : NULL;
    if (byocl_opencl_register() != BYOCL_OK)
        return 1;
    if (!only || strcmp(only, "call") == 0) {
        region_call(runs * 50, false);
        region_call(runs * 50, true);
    }
    if (!only || strcmp(only, "resnet18") == 0) {
        model("resnet18", runs, false);
        model("resnet18", 3, true);
    }
    if (!only || strcmp(only, "mobilenet_v2") == 0)
        model("mobilenet_v2", runs, false);
    byocl_target_registry_reset();
    return 0;
}
