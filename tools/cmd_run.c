/* byocl run: runs a model on an executor and summarizes (or writes) its outputs.
 * --executor ref runs the reference executor; --target host|ref builds the model for the
 * graph executor (byocl_build) and runs that, with --threads, --profile and --stats;
 * --target T for a registered region target (opencl, a plugin's) partitions @main for T
 * first, then builds the rest for the host. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/runtime.h"
#include "cli.h"
#include "cli_build.h"

/* The executors `--executor` accepts; only the reference executor exists so far. */
static const char *const executors[] = {"ref"};
#define N_EXECUTORS ((int)(sizeof executors / sizeof executors[0]))

static const cli_option run_options[] = {
    {"executor", 0, CLI_ARG_REQUIRED, false, "NAME", "executor to run on: ref (the default)"},
    {"target", 0, CLI_ARG_REQUIRED, false, "NAME",
     "build for the graph executor: host (LLVM), ref (reference kernels), or a region "
     "target (opencl, a plugin's) for the regions it supports and host for the rest"},
    {"device", 0, CLI_ARG_REQUIRED, false, "D",
     "with --target opencl: the device's index or part of its name (byocl info lists them)"},
    {"fallback", 0, CLI_ARG_REQUIRED, false, "host|ref",
     "with a region target: run the regions it cannot compile on the host instead"},
    {"threads", 0, CLI_ARG_REQUIRED, false, "N", "threads for --target (default: all cores)"},
    {"runs", 0, CLI_ARG_REQUIRED, false, "N", "run N times and report min, median and max"},
    {"profile", 0, CLI_ARG_NONE, false, NULL,
     "with --target: time and GFLOP/s of each kernel and region, slowest first"},
    {"stats", 0, CLI_ARG_NONE, false, NULL,
     "with --target: the storage plan's bytes against all intermediates"},
    CLI_OPTION_INPUT,
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    CLI_OPTION_SHAPE,
    CLI_OPTION_RANDOM_INPUTS,
    CLI_OPTION_OUTPUT_DIR,
    {"fn", 0, CLI_ARG_REQUIRED, false, "NAME", "run function @NAME instead of @main"},
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* How the command line asked to run. */
typedef struct run_request {
    const char *target; /* --target; NULL: the reference executor */
    bool regions;       /* --target names a region target: partition, then build host */
    const char *device, *fallback;
    int threads;        /* --threads; 0: all cores */
    int runs;           /* --runs */
    bool profile, stats;
} run_request;

static int compare_doubles(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* "WHAT in 1.23 ms", or "WHAT 5 times: min 1.00 ms, median 1.10 ms, max 1.30 ms". */
static void print_times(const char *what, double *ms, int n)
{
    if (n == 1) {
        printf("%s in %.2f ms\n", what, ms[0]);
        return;
    }
    qsort(ms, (size_t)n, sizeof *ms, compare_doubles);
    double median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    printf("%s %d times: min %.2f ms, median %.2f ms, max %.2f ms\n", what, n, ms[0], median,
           ms[n - 1]);
}

/* Summaries of the outputs, then --output-dir. */
static int report_outputs(const cli_command *cmd, const cli_args *args,
                          byocl_tensor *const *outputs, int n_outputs)
{
    for (int i = 0; i < n_outputs; i++)
        cli_print_summary(i, outputs[i]);
    const char *dir = cli_value(cmd, args, "output-dir", NULL);
    return dir ? cli_write_outputs(dir, outputs, n_outputs) : CLI_EXIT_OK;
}

/* The reference executor, --runs times; the last run's outputs are reported. */
static int run_reference(const cli_command *cmd, const cli_args *args, const char *spec,
                         const byocl_module *m, const byocl_function *fn, const cli_inputs *in,
                         const run_request *req)
{
    double *ms = calloc((size_t)req->runs, sizeof *ms);
    if (!ms)
        return cli_fail("out of memory");
    byocl_tensor **outputs = NULL;
    int n_outputs = 0, rc = CLI_EXIT_OK;
    for (int r = 0; r < req->runs && rc == CLI_EXIT_OK; r++) {
        if (outputs)
            byocl_tensors_free(outputs, n_outputs);
        outputs = NULL;
        byocl_error err;
        double t0 = cli_seconds();
        byocl_status st = byocl_reference_run(m, byocl_function_name(fn), in->values, in->n,
                                              &outputs, &n_outputs, &err);
        ms[r] = (cli_seconds() - t0) * 1e3;
        if (st != BYOCL_OK)
            rc = cli_fail_error(&err);
    }
    if (rc == CLI_EXIT_OK) {
        char what[600];
        snprintf(what, sizeof what, "ran @%s of %s on the ref executor", byocl_function_name(fn),
                 spec);
        print_times(what, ms, req->runs);
        rc = report_outputs(cmd, args, outputs, n_outputs);
    }
    if (outputs)
        byocl_tensors_free(outputs, n_outputs);
    free(ms);
    return rc;
}

static void print_stats(const byocl_compiled *c)
{
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    printf("stats: %d step%s (%d kernel%s, %d region%s)\n", st.n_steps, st.n_steps == 1 ? "" : "s",
           st.n_kernels, st.n_kernels == 1 ? "" : "s", st.n_regions, st.n_regions == 1 ? "" : "s");
    printf("  intermediates: %d tensor%s, %zu bytes without reuse\n", st.n_intermediates,
           st.n_intermediates == 1 ? "" : "s", st.intermediate_bytes);
    printf("  storage plan:  %d buffer%s, %zu bytes", st.n_buffers, st.n_buffers == 1 ? "" : "s",
           st.planned_bytes);
    if (st.intermediate_bytes > 0)
        printf(" (%.1f%% of the intermediates)\n",
               100.0 * (double)st.planned_bytes / (double)st.intermediate_bytes);
    else
        printf("\n");
    printf("  inputs %zu bytes, outputs %zu bytes, constants %zu bytes\n", st.input_bytes,
           st.output_bytes, st.constant_bytes);
}

static int by_total_time(const void *pa, const void *pb)
{
    const byocl_step_info *a = pa, *b = pb;
    if (a->total_ms != b->total_ms)
        return a->total_ms > b->total_ms ? -1 : 1;
    return a->node - b->node;
}

/* "12.34" GFLOP/s, or blank when the step's arithmetic is unknown. */
static void gflops_str(double flops, double ms, char *buf, size_t len)
{
    if (flops > 0 && ms > 0)
        snprintf(buf, len, "%.2f", flops / (ms * 1e6));
    else
        snprintf(buf, len, "-");
}

/* A step and its index in the plan (by_total_time sorts these through `info`, which comes
 * first). */
typedef struct profiled_step {
    byocl_step_info info;
    int index;
} profiled_step;

static int by_part_time(const void *pa, const void *pb)
{
    const byocl_region_part *a = pa, *b = pb;
    if (a->transfer != b->transfer)
        return a->transfer ? 1 : -1; /* kernels first */
    return a->total_ms != b->total_ms ? (a->total_ms > b->total_ms ? -1 : 1) : 0;
}

/* Under a region step whose module times its parts: each kernel (slowest first), the
 * transfers, and what the call cost beyond them on the host. */
static int print_parts(const byocl_compiled *c, const profiled_step *s, double per_run,
                       double total)
{
    int n = byocl_compiled_num_step_parts(c, s->index);
    if (n <= 0)
        return CLI_EXIT_OK;
    byocl_region_part *parts = calloc((size_t)n, sizeof *parts);
    if (!parts)
        return cli_fail("out of memory");
    for (int k = 0; k < n; k++)
        byocl_compiled_step_part(c, s->index, k, &parts[k], NULL);
    qsort(parts, (size_t)n, sizeof *parts, by_part_time);
    double timed = 0;
    char g[32];
    for (int k = 0; k < n; k++) {
        double ms = parts[k].total_ms / per_run;
        timed += parts[k].total_ms;
        gflops_str(parts[k].flops, ms, g, sizeof g);
        if (parts[k].transfer)
            printf("  %10.3f %5.1f%% %9s    transfers\n", ms,
                   total > 0 ? 100.0 * parts[k].total_ms / total : 0.0, g);
        else
            printf("  %10.3f %5.1f%% %9s    kernel %s (%s)\n", ms,
                   total > 0 ? 100.0 * parts[k].total_ms / total : 0.0, g, parts[k].name,
                   parts[k].kernel);
    }
    double rest = s->info.total_ms > timed ? s->info.total_ms - timed : 0;
    printf("  %10.3f %5.1f%% %9s    host side of the calls\n", rest / per_run,
           total > 0 ? 100.0 * rest / total : 0.0, "-");
    free(parts);
    return CLI_EXIT_OK;
}

/* One line per step, slowest first: mean time, share, GFLOP/s, name (kind, runner); the
 * timed parts of regions under them. */
static int print_profile(const byocl_compiled *c, const byocl_executor *ex)
{
    int n = byocl_executor_num_steps(ex);
    profiled_step *steps = calloc((size_t)n + 1, sizeof *steps);
    if (!steps)
        return cli_fail("out of memory");
    double total = 0, flops = 0;
    for (int i = 0; i < n; i++) {
        byocl_executor_step(ex, i, &steps[i].info, NULL);
        steps[i].index = i;
        total += steps[i].info.total_ms;
        flops += steps[i].info.flops;
    }
    qsort(steps, (size_t)n, sizeof *steps, by_total_time);
    int64_t runs = n > 0 ? steps[0].info.runs : 0;
    double per_run = runs > 0 ? (double)runs : 1;
    printf("profile: %d step%s, mean of %lld run%s\n", n, n == 1 ? "" : "s", (long long)runs,
           runs == 1 ? "" : "s");
    printf("  %10s %6s %9s  %s\n", "ms", "%", "GFLOP/s", "step");
    char g[32];
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        const byocl_step_info *s = &steps[i].info;
        double ms = s->total_ms / per_run;
        gflops_str(s->flops, ms, g, sizeof g);
        printf("  %10.3f %5.1f%% %9s  %s (%s, %s)\n", ms,
               total > 0 ? 100.0 * s->total_ms / total : 0.0, g, s->name,
               s->kind == BYOCL_STEP_KERNEL ? "kernel" : "region", s->runner);
        rc = print_parts(c, &steps[i], per_run, total);
    }
    gflops_str(flops, total / per_run, g, sizeof g);
    if (rc == CLI_EXIT_OK)
        printf("  %10.3f %5.1f%% %9s  total\n", total / per_run, 100.0, g);
    free(steps);
    return rc;
}

/* Builds fn for --target, runs it --runs times on one executor and reports. */
static int run_graph(const cli_command *cmd, const cli_args *args, const char *spec,
                     const byocl_module *m, const byocl_function *fn, const cli_inputs *in,
                     const run_request *req)
{
    cli_build_request br = {.target = req->target, .fn_name = byocl_function_name(fn),
                            .device = req->device, .fallback = req->fallback,
                            .threads = req->threads, .profile = req->profile};
    byocl_compiled *c = NULL;
    byocl_executor *ex = NULL;
    byocl_error err;
    double build_ms;
    if (cli_build_model(&br, m, &c, &build_ms, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    int threads = byocl_compiled_threads(c);
    printf("built @%s of %s for target %s in %.2f ms: %d step%s, %d thread%s\n",
           byocl_function_name(fn), spec, req->target, build_ms, st.n_steps,
           st.n_steps == 1 ? "" : "s", threads, threads == 1 ? "" : "s");
    int rc = CLI_EXIT_OK;
    double *ms = calloc((size_t)req->runs, sizeof *ms);
    byocl_tensor **views = calloc((size_t)byocl_compiled_num_outputs(c) + 1, sizeof *views);
    if (!ms || !views)
        rc = cli_fail("out of memory");
    if (rc == CLI_EXIT_OK && byocl_executor_new(c, &ex, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    for (int k = 0; k < in->n && rc == CLI_EXIT_OK; k++)
        if (byocl_executor_set_input(ex, in->names[k], in->values[k], &err) != BYOCL_OK)
            rc = cli_fail_error(&err);
    for (int r = 0; r < req->runs && rc == CLI_EXIT_OK; r++) {
        double r0 = cli_seconds();
        if (byocl_executor_run(ex, &err) != BYOCL_OK)
            rc = cli_fail_error(&err);
        ms[r] = (cli_seconds() - r0) * 1e3;
    }
    if (rc == CLI_EXIT_OK) {
        char what[600];
        snprintf(what, sizeof what, "ran @%s of %s on target %s", byocl_function_name(fn), spec,
                 req->target);
        print_times(what, ms, req->runs);
        int n_out = byocl_executor_num_outputs(ex);
        for (int i = 0; i < n_out; i++) {
            const byocl_tensor *view;
            byocl_executor_output(ex, i, &view, NULL);
            views[i] = (byocl_tensor *)view; /* only read: summarized and written */
        }
        rc = report_outputs(cmd, args, views, n_out);
    }
    if (rc == CLI_EXIT_OK && req->stats)
        print_stats(c);
    if (rc == CLI_EXIT_OK && req->profile)
        rc = print_profile(c, ex);
    free(views);
    free(ms);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    return rc;
}

/* Binds every parameter of fn, runs it and reports. */
static int run_function(const cli_command *cmd, const cli_args *args, const char *spec,
                        const byocl_module *m, const byocl_function *fn, bool random,
                        uint64_t seed, const run_request *req)
{
    cli_inputs in;
    int rc = cli_inputs_of_function(&in, fn);
    if (rc == CLI_EXIT_OK)
        rc = cli_bind_inputs(cmd, args, &in, random, seed);
    if (rc == CLI_EXIT_OK) {
        int n_unbound;
        char *list = cli_inputs_list(&in, false, &n_unbound);
        if (n_unbound > 0)
            rc = cli_fail("@%s of %s has %d unbound parameter%s: %s; give each with --input "
                          "NAME=FILE.npy, bind them with --params FILE.npz, or pass "
                          "--random-inputs",
                          byocl_function_name(fn), spec, n_unbound, n_unbound == 1 ? "" : "s",
                          list ? list : "?");
        free(list);
    }
    if (rc == CLI_EXIT_OK)
        rc = req->target ? run_graph(cmd, args, spec, m, fn, &in, req)
                         : run_reference(cmd, args, spec, m, fn, &in, req);
    cli_inputs_free(&in);
    return rc;
}

/* A count from 1 to `max`, digits only. */
static bool parse_count(const char *s, int max, int *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 1 || v > max)
        return false;
    *out = (int)v;
    return true;
}

/* The flags that choose and shape the run; usage errors for the combinations that make
 * no sense. */
static int parse_request(const cli_command *cmd, const cli_args *args, run_request *req)
{
    *req = (run_request){.target = cli_value(cmd, args, "target", NULL), .runs = 1};
    const char *executor = cli_value(cmd, args, "executor", NULL);
    if (executor && req->target)
        return cli_usage_error(cmd, "--target and --executor are mutually exclusive (--executor "
                                    "ref runs the reference executor, --target builds for the "
                                    "graph executor)");
    if (executor) {
        int e;
        for (e = 0; e < N_EXECUTORS; e++)
            if (strcmp(executors[e], executor) == 0)
                break;
        if (e == N_EXECUTORS)
            return cli_usage_error(cmd, "unknown executor '%s' (known: ref)", executor);
    }
    int rc = cli_check_target(cmd, req->target);
    if (rc != CLI_EXIT_OK)
        return rc;
    req->regions = cli_is_region_target(req->target);
    req->device = cli_value(cmd, args, "device", NULL);
    req->fallback = cli_value(cmd, args, "fallback", NULL);
    if (req->device && (!req->target || strcmp(req->target, "opencl") != 0))
        return cli_usage_error(cmd, "--device goes with --target opencl");
    if (req->fallback && !req->regions)
        return cli_usage_error(cmd, "--fallback goes with a region target such as --target "
                                    "opencl");
    if (req->fallback && strcmp(req->fallback, "host") != 0 && strcmp(req->fallback, "ref") != 0)
        return cli_usage_error(cmd, "unknown --fallback '%s' (known: host, ref)", req->fallback);
    if (req->regions && strcmp(cli_value(cmd, args, "fn", "main"), "main") != 0)
        return cli_usage_error(cmd, "--fn goes with --target host|ref (a region target "
                                    "partitions @main)");
    static const char *const graph_only[] = {"threads", "profile", "stats"};
    for (size_t i = 0; i < sizeof graph_only / sizeof graph_only[0]; i++)
        if (!req->target && cli_count(cmd, args, graph_only[i]) > 0)
            return cli_usage_error(cmd, "--%s needs --target (it is about the graph executor)",
                                   graph_only[i]);
    const char *v = cli_value(cmd, args, "threads", NULL);
    if (v && !parse_count(v, 4096, &req->threads))
        return cli_usage_error(cmd, "--threads %s: expected a count from 1 to 4096", v);
    v = cli_value(cmd, args, "runs", NULL);
    if (v && !parse_count(v, 1000000, &req->runs))
        return cli_usage_error(cmd, "--runs %s: expected a count from 1 to 1000000", v);
    req->profile = cli_count(cmd, args, "profile") > 0;
    req->stats = cli_count(cmd, args, "stats") > 0;
    return CLI_EXIT_OK;
}

static int run_run(const cli_command *cmd, const cli_args *args)
{
    run_request req;
    int rc = parse_request(cmd, args, &req);
    if (rc != CLI_EXIT_OK)
        return rc;
    bool random;
    uint64_t seed;
    rc = cli_check_input_flags(cmd, args, &random, &seed);
    if (rc != CLI_EXIT_OK)
        return rc;

    const char *spec = args->positional[0];
    byocl_module *m;
    rc = cli_load_model_args(cmd, args, spec, &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *fn_name = cli_value(cmd, args, "fn", "main");
    const byocl_function *fn = byocl_module_find(m, fn_name);
    if (!fn)
        rc = cli_fail("%s has no function @%s", spec, fn_name);
    else
        rc = run_function(cmd, args, spec, m, fn, random, seed, &req);
    byocl_module_free(m);
    return rc;
}

const cli_command cli_cmd_run = {
    .name = "run",
    .summary = "run a model and summarize its outputs",
    .args_usage = "MODEL [--executor ref | --target host|ref|T [--threads N] [--profile] [--stats]]\n"
                  "                 [--device D] [--fallback host|ref]\n"
                  "                 [--input NAME=FILE.npy]... [--params FILE.npz]\n"
                  "                 [--random-inputs[=SEED]] [--runs N] [--output-dir DIR] [--fn NAME]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"MODEL"},
    .description =
        "Runs @main of MODEL (or --fn NAME) and prints each output's type, min, max, mean\n"
        "and first values, and the run time.\n"
        "\n"
        "By default (or with --executor ref) the reference executor runs it, computing\n"
        "every op with plain C loops. --target builds it for the graph executor instead:\n"
        "an execution plan of host kernels and region calls over buffers shared by\n"
        "liveness; host compiles the host part with LLVM, ref runs each op's reference\n"
        "kernel (bit for bit what the reference executor computes). Partitioned regions\n"
        "run in their runtime modules. --threads sets the kernels' threads, --stats shows\n"
        "the storage plan, --profile each step's time and GFLOP/s. --runs N repeats the\n"
        "run (with either executor) and reports the minimum, median and maximum time.\n"
        "\n"
        "--target opencl (or a plugin's target, see --plugin in byocl --help) partitions\n"
        "@main first: the calls the target supports become regions that run in its runtime\n"
        "module, and LLVM compiles the rest for the host. --device picks the OpenCL device\n"
        "(default: $BYOCL_OPENCL_DEVICE, else the first GPU, else the first device);\n"
        "--fallback host runs the regions the target cannot compile (no OpenCL driver, a\n"
        "program that does not build) on the host, with a warning, instead of failing.\n"
        "With --profile, regions on OpenCL also show each kernel's time (OpenCL events),\n"
        "their transfers, and the host side of the calls. See docs/opencl-runtime.md.\n"
        "\n"
        "Every parameter must be bound: by --input (an .npy of the parameter's dtype and\n"
        "shape), by name from --params, or by --random-inputs, which fills each parameter\n"
        "still unbound from seed SEED * 2^32 + its index (SEED defaults to 0): floats\n"
        "uniform in [0, 1), integers in [0, 10).\n"
        "\n" CLI_MODEL_HELP "\n",
    .options = run_options,
    .examples = "  byocl run builtin:resnet18 --random-inputs\n"
                "  byocl run builtin:seed --random-inputs=7 --output-dir out\n"
                "  byocl run model.relay --params model.npz --input data=image.npy\n"
                "  byocl run builtin:resnet18 --random-inputs --target ref --stats --profile\n"
                "  byocl run builtin:resnet18 --random-inputs --target host --threads 2 --runs 10\n"
                "  byocl run builtin:resnet18 --random-inputs --target opencl --profile --runs 10\n"
                "  byocl --plugin ./libexample_target.so run model.relay --target example\n",
    .run = run_run,
};
