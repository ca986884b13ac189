/* byocl run: runs a model on an executor and summarizes (or writes) its outputs.
 * --executor ref runs the reference executor; --target host|ref builds the model for the
 * graph executor (byocl_build) and runs that, with --threads, --profile and --stats;
 * --target T for a registered region target (opencl, a plugin's) partitions @main for T
 * first, then builds the rest for the host. */
#include <stdlib.h>
#include <string.h>

#include "byocl/runtime.h"
#include "cli.h"
#include "cli_inputs.h"
#include "cli_build.h"
#include "cli_capture.h"
#include "cli_report.h"

/* The executors `--executor` accepts; only the reference executor exists so far. */
static const char *const executors[] = {"ref"};
#define N_EXECUTORS ((int)(sizeof executors / sizeof executors[0]))

static const cli_option run_options[] = {
    {"executor", 0, CLI_ARG_REQUIRED, false, "NAME", "executor to run on: ref (the default)"},
    {"target", 0, CLI_ARG_REQUIRED, false, "NAME",
     "build for the graph executor: host (LLVM), ref (reference kernels), or a region "
     "target (opencl, a plugin's) for the regions it supports and host for the rest"},
    CLI_OPTION_DEVICE,
    CLI_OPTION_TARGET_OPT,
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
    CLI_OPTION_DUMP_AFTER,
    CLI_OPTION_MIN_REGION_FLOPS,
    CLI_OPTION_OFFLOAD_PROFILE,
    CLI_OPTION_CAPTURE,
    CLI_OPTIONS_CAPTURE_NARROW,
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* How the command line asked to run. */
typedef struct run_request {
    const char *target; /* --target; NULL: the reference executor */
    bool regions;       /* --target names a region target: partition, then build host */
    const char *fallback;
    cli_build_request target_flags; /* --device, --target-opt */
    const char *dump_after;
    int threads;        /* --threads; 0: all cores */
    int runs;           /* --runs */
    bool profile, stats;
    cli_capture capture; /* --capture and its narrowing flags */
} run_request;

/* Summaries of the outputs, then --output-dir. */
static int report_outputs(const cli_command *cmd, const cli_args *args,
                          byocl_tensor *const *outputs, int n_outputs)
{
    for (int i = 0; i < n_outputs; i++)
        cli_print_summary(i, outputs[i]);
    const char *dir = cli_value(cmd, args, "output-dir", NULL);
    return dir ? cli_write_outputs(dir, outputs, n_outputs) : CLI_EXIT_OK;
}

/* One run on the reference executor: the outputs of the previous one are dropped. */
typedef struct reference_run {
    const byocl_module *m;
    const byocl_function *fn;
    const cli_inputs *in;
    byocl_tensor **outputs;
    int n_outputs;
} reference_run;

static byocl_status run_reference_once(void *user, byocl_error *err)
{
    reference_run *r = user;
    if (r->outputs)
        byocl_tensors_free(r->outputs, r->n_outputs);
    r->outputs = NULL;
    return byocl_reference_run(r->m, byocl_function_name(r->fn), r->in->values, r->in->n,
                               &r->outputs, &r->n_outputs, err);
}

/* The reference executor, --runs times; the last run's outputs are reported. */
static int run_reference(const cli_command *cmd, const cli_args *args, const char *spec,
                         const byocl_module *m, const byocl_function *fn, const cli_inputs *in,
                         const run_request *req)
{
    double *ms = calloc((size_t)req->runs, sizeof *ms);
    if (!ms)
        return cli_fail("out of memory");
    reference_run r = {.m = m, .fn = fn, .in = in};
    char what[600];
    snprintf(what, sizeof what, "running @%s on the ref executor", byocl_function_name(fn));
    byocl_error err;
    int rc = CLI_EXIT_OK;
    if (cli_timed_runs(req->runs, what, false, run_reference_once, &r, ms, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    if (rc == CLI_EXIT_OK) {
        snprintf(what, sizeof what, "ran @%s of %s on the ref executor", byocl_function_name(fn),
                 spec);
        cli_print_times(what, ms, req->runs);
        rc = report_outputs(cmd, args, r.outputs, r.n_outputs);
    }
    if (r.outputs)
        byocl_tensors_free(r.outputs, r.n_outputs);
    free(ms);
    return rc;
}

static void print_stats(const byocl_compiled *c)
{
    byocl_plan_stats st;
    byocl_compiled_stats(c, &st);
    printf("stats: %d step%s (%d kernel%s of %d function%s, %d region%s)\n", st.n_steps,
           st.n_steps == 1 ? "" : "s", st.n_kernels, st.n_kernels == 1 ? "" : "s",
           st.n_kernel_functions, st.n_kernel_functions == 1 ? "" : "s", st.n_regions,
           st.n_regions == 1 ? "" : "s");
    printf("  intermediates: %d tensor%s, %zu bytes without reuse\n", st.n_intermediates,
           st.n_intermediates == 1 ? "" : "s", st.intermediate_bytes);
    if (st.n_concats_in_place)
        printf("  in place:      %d concatenation%s (their inputs written into their slices)\n",
               st.n_concats_in_place, st.n_concats_in_place == 1 ? "" : "s");
    printf("  storage plan:  %zu bytes, one pool of %d block%s", st.planned_bytes, st.n_buffers,
           st.n_buffers == 1 ? "" : "s");
    if (st.intermediate_bytes > 0)
        printf(" (%.1f%% of the intermediates)\n",
               100.0 * (double)st.planned_bytes / (double)st.intermediate_bytes);
    else
        printf("\n");
    printf("  live peak:     %zu bytes (the least a plan of this step order can use)", st.live_peak_bytes);
    if (st.live_peak_bytes > 0)
        printf(": the plan is %.2fx\n", (double)st.planned_bytes / (double)st.live_peak_bytes);
    else
        printf("\n");
    printf("  inputs %zu bytes, outputs %zu bytes, constants %zu bytes\n", st.input_bytes,
           st.output_bytes, st.constant_bytes);
    if (st.n_uploads || st.n_downloads) /* regions in device memory of their own */
        printf("  device copies per run: %d upload%s (%zu bytes), %d download%s (%zu bytes)\n",
               st.n_uploads, st.n_uploads == 1 ? "" : "s", st.upload_bytes, st.n_downloads,
               st.n_downloads == 1 ? "" : "s", st.download_bytes);
}

/* Builds fn for --target, runs it --runs times on one executor and reports. */
static int run_graph(const cli_command *cmd, const cli_args *args, const char *spec,
                     const byocl_module *m, const byocl_function *fn, const cli_inputs *in,
                     const run_request *req)
{
    cli_build_request br = req->target_flags;
    br.fn_name = byocl_function_name(fn);
    br.fallback = req->fallback;
    br.threads = req->threads;
    br.profile = req->profile;
    br.dump_after = req->dump_after;
    byocl_compiled *c = NULL;
    byocl_executor *ex = NULL;
    byocl_error err;
    double build_ms;
    cli_capture capture = req->capture;
    byocl_module *prepared = NULL; /* with --capture: partitioned and marked */
    if (capture.dir) {
        int prc = cli_capture_prepare(&capture, &br, spec, m, NULL, &prepared);
        if (prc != CLI_EXIT_OK)
            return prc;
    }
    byocl_status bst = cli_build_model(&br, prepared ? prepared : m, &c, &build_ms, &err);
    byocl_module_free(prepared);
    if (bst != BYOCL_OK) {
        cli_capture_free(&capture);
        return cli_fail_error(&err);
    }
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
    if (rc == CLI_EXIT_OK)
        rc = cli_executor_with_inputs(c, in, &ex);
    char what[600];
    snprintf(what, sizeof what, "running @%s on target %s", byocl_function_name(fn),
             req->target);
    if (rc == CLI_EXIT_OK && cli_run_executor(ex, req->runs, what, ms, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    bool ran = rc == CLI_EXIT_OK;
    if (rc == CLI_EXIT_OK) {
        snprintf(what, sizeof what, "ran @%s of %s on target %s", byocl_function_name(fn), spec,
                 req->target);
        cli_print_first_run_times(what, ms, req->runs);
        /* --capture-node's extra output is written by the capture, not reported */
        int n_out = byocl_executor_num_outputs(ex) - (capture.node_output >= 0);
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
        rc = cli_print_profile(c, ex);
    if (capture.dir) {
        int crc = cli_capture_finish(&capture, ex, ran);
        rc = rc == CLI_EXIT_OK ? crc : rc;
    }
    free(views);
    free(ms);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    cli_capture_free(&capture); /* after the compiled model, whose regions it wraps */
    return rc;
}

/* Binds every parameter of fn, runs it and reports. */
static int run_function(const cli_command *cmd, const cli_args *args, const char *spec,
                        const byocl_module *m, const byocl_function *fn, bool random,
                        uint64_t seed, const run_request *req)
{
    cli_inputs in;
    int rc = cli_bind_function_inputs(cmd, args, spec, fn, random, seed, &in);
    if (rc == CLI_EXIT_OK)
        rc = req->target ? run_graph(cmd, args, spec, m, fn, &in, req)
                         : run_reference(cmd, args, spec, m, fn, &in, req);
    cli_inputs_free(&in);
    return rc;
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
    req->fallback = cli_value(cmd, args, "fallback", NULL);
    req->target_flags.target = req->target;
    rc = cli_target_flags(cmd, args, &req->target_flags);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (req->fallback && !req->regions)
        return cli_usage_error(cmd, "--fallback goes with a region target (--target T)");
    req->dump_after = cli_value(cmd, args, "dump-after", NULL);
    if (req->dump_after && !req->regions)
        return cli_usage_error(cmd, "--dump-after goes with a region target (--target T): "
                                    "it shows the partitioning");
    if ((rc = cli_check_dump_after(cmd, req->dump_after)) != CLI_EXIT_OK)
        return rc;
    if (req->fallback && strcmp(req->fallback, "host") != 0 && strcmp(req->fallback, "ref") != 0)
        return cli_usage_error(cmd, "unknown --fallback '%s' (known: host, ref)", req->fallback);
    if (req->regions && strcmp(cli_value(cmd, args, "fn", "main"), "main") != 0)
        return cli_usage_error(cmd, "--fn goes with --target host|ref (a region target "
                                    "partitions @main)");
    static const char *const graph_only[] = {"threads", "profile", "stats", "capture"};
    for (size_t i = 0; i < sizeof graph_only / sizeof graph_only[0]; i++)
        if (!req->target && cli_count(cmd, args, graph_only[i]) > 0)
            return cli_usage_error(cmd, "--%s needs --target (it is about the graph executor)",
                                   graph_only[i]);
    const char *v = cli_value(cmd, args, "threads", NULL);
    if (v && !cli_parse_count(v, 1, 4096, &req->threads))
        return cli_usage_error(cmd, "--threads %s: expected a count from 1 to 4096", v);
    v = cli_value(cmd, args, "runs", NULL);
    if (v && !cli_parse_count(v, 1, 1000000, &req->runs))
        return cli_usage_error(cmd, "--runs %s: expected a count from 1 to 1000000", v);
    req->profile = cli_count(cmd, args, "profile") > 0;
    req->stats = cli_count(cmd, args, "stats") > 0;
    rc = cli_capture_parse(cmd, args, &req->capture);
    if (rc == CLI_EXIT_OK && req->capture.dir && strcmp(cli_value(cmd, args, "fn", "main"), "main"))
        return cli_usage_error(cmd, "--capture captures @main; it does not go with --fn");
    return rc;
}

static int run_parsed(const cli_command *cmd, const cli_args *args, run_request *req)
{
    int rc;
    bool random;
    uint64_t seed;
    rc = cli_check_input_flags(cmd, args, &random, &seed);
    const char *out_dir = cli_value(cmd, args, "output-dir", NULL);
    if (rc == CLI_EXIT_OK && out_dir)
        rc = cli_check_dirs(out_dir);
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
        rc = run_function(cmd, args, spec, m, fn, random, seed, req);
    byocl_module_free(m);
    return rc;
}

static int run_run(const cli_command *cmd, const cli_args *args)
{
    run_request req = {0};
    int rc = parse_request(cmd, args, &req);
    if (rc == CLI_EXIT_OK) /* last: the profile it reads is freed below */
        rc = cli_offload_flags(cmd, args, req.target ? req.target : "ref",
                               &req.target_flags.offload);
    if (rc == CLI_EXIT_OK)
        rc = run_parsed(cmd, args, &req);
    cli_offload_free(&req.target_flags.offload);
    return rc;
}

const cli_command cli_cmd_run = {
    .name = "run",
    .summary = "run a model and summarize its outputs",
    .args_usage = "MODEL [--executor ref | --target host|ref|T [--threads N] [--profile] [--stats]]\n"
                  "                 [--device D] [--fallback host|ref]\n"
                  "                 [--input NAME=FILE]... [--params FILE.npz]\n"
                  "                 [--random-inputs[=SEED]] [--runs N] [--output-dir DIR] [--fn NAME]\n"
                  "                 [--capture DIR [--capture-region SYMBOL] [--capture-node %N]]",
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
        "With --target the first run after the build is reported apart, as the first\n"
        "run, and the others as the steady state: the first pays what the driver does\n"
        "at a kernel's first launch (PoCL compiles its kernels then, which takes minutes\n"
        "for a large model when the caches are cold).\n"
        "\n"
        "While building or running takes over a second, progress goes to stderr: a bar\n"
        "on a terminal, otherwise a line every 2 s and one when the step is done.\n"
        "BYOCL_PROGRESS_DELAY=SECONDS changes the one-second delay (off: no progress).\n"
        "\n"
        "--target opencl (or a plugin's target, see --plugin in byocl --help) partitions\n"
        "@main first: the calls the target supports become regions that run in its runtime\n"
        "module, and LLVM compiles the rest for the host. --device picks the target's\n"
        "device (byocl info lists them; OpenCL's default: $BYOCL_OPENCL_DEVICE, else the\n"
        "first GPU, else the first device); --target-opt T.KEY=VALUE sets one of its options\n"
        "(byocl ops --target T lists them); --dump-after PASS prints the module after a\n"
        "pass of the partitioning, as byocl partition does; --fallback host runs the regions the target cannot compile (no OpenCL driver, a\n"
        "program that does not build) on the host, with a warning, instead of failing.\n"
        "With --profile, regions on OpenCL also show each kernel's time (OpenCL events),\n"
        "their transfers, the gaps between kernels, and the host side of the calls. See\n"
        "docs/opencl-runtime.md.\n"
        "\n"
        "--capture DIR writes, for each region of the run, DIR/<symbol>/ with the tensors\n"
        "its runtime module received and wrote (the last call's), the region as a\n"
        "standalone module and a manifest.json; `byocl replay DIR/<symbol>` runs it alone.\n"
        "--capture-region SYMBOL captures one region, --capture-node %N writes node %N of\n"
        "@main (made an output of @main) to DIR/node_N.npy. See docs/debugging-regions.md.\n"
        "\n"
        "Every parameter must be bound: by --input (a tensor of the parameter's dtype and\n"
        "shape in an .npy, a one-array .npz or an ONNX TensorProto .pb), by name from\n"
        "--params, or by --random-inputs, which fills each parameter\n"
        "still unbound from seed SEED * 2^32 + its index (SEED defaults to 0): floats\n"
        "uniform in [0, 1), integers in [0, 10). A built-in model given none of --input,\n"
        "--params and --random-inputs runs on its deterministic random inputs: the values\n"
        "--random-inputs gives, so its results are the same every time.\n"
        "\n" CLI_MODEL_HELP "\n",
    .options = run_options,
    .examples = "  byocl run builtin:resnet18\n"
                "  byocl run builtin:seed --random-inputs=7 --output-dir out\n"
                "  byocl run model.relay --params model.npz --input data=image.npy\n"
                "  byocl run builtin:resnet18 --random-inputs --target ref --stats --profile\n"
                "  byocl run builtin:resnet18 --random-inputs --target host --threads 2 --runs 10\n"
                "  byocl run builtin:resnet18 --random-inputs --target opencl --profile --runs 10\n"
                "  byocl --plugin ./libexample_target.so run model.relay --target example\n"
                "  byocl run builtin:seed --random-inputs --target opencl --capture cap\n",
    .run = run_run,
};
