/* byocl bench: the host-only build of a model against its build with the regions offloaded
 * to a region target (opencl by default), run alternately, region by region.
 *
 * Region by region: the host-only build's steps carry node ids of the original @main, and
 * bench_regions.h maps each op call of @main to the region partitioning puts it in, so a
 * host step counts for the region of the node it ends with (a fusion group the host
 * backend grew across a region's border counts for the region of its last node). The
 * offloaded build's region steps are @<target>_main_<n>; their parts (OpenCL events) split
 * them into kernels, transfers and the gaps between kernels. See docs/benchmarks.md. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_machine.h"
#include "bench_plot.h"
#include "bench_regions.h"
#include "byocl/opencl.h"
#include "byocl/runtime.h"
#include "cli.h"
#include "cli_inputs.h"
#include "cli_build.h"
#include "cli_progress.h"
#include "cli_report.h"

static const cli_option bench_options[] = {
    {"target", 0, CLI_ARG_REQUIRED, false, "T",
     "the region target to offload to (default: the first registered: opencl)"},
    CLI_OPTION_DEVICE,
    CLI_OPTION_MIN_REGION_FLOPS,
    CLI_OPTION_OFFLOAD_PROFILE,
    CLI_OPTION_TARGET_OPT,
    {"threads", 0, CLI_ARG_REQUIRED, false, "N", "threads of both builds (default: all cores)"},
    {"runs", 0, CLI_ARG_REQUIRED, false, "N", "timed runs of each build (default: 10)"},
    {"warmup", 0, CLI_ARG_REQUIRED, false, "N",
     "untimed runs of each build first (default: 2)"},
    {"cache-dir", 0, CLI_ARG_REQUIRED, false, "DIR",
     "keep the compile caches in DIR (default: a fresh temporary directory)"},
    {"json", 0, CLI_ARG_REQUIRED, false, "FILE", "also write the figures to FILE as JSON"},
    {"svg", 0, CLI_ARG_REQUIRED, false, "FILE",
     "draw host against offloaded time per region to FILE"},
    {"per-op", 0, CLI_ARG_NONE, false, NULL,
     "time and GFLOP/s of each step and kernel of both builds, slowest first"},
    {"quiet", 'q', CLI_ARG_NONE, false, NULL, "no progress on stderr"},
    {"suggest", 0, CLI_ARG_NONE, false, NULL,
     "after the table, name the regions that ran slower offloaded and how to keep them on "
     "the host (--offload-profile)"},
    CLI_OPTION_INPUT,
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    CLI_OPTION_SHAPE,
    CLI_OPTION_RANDOM_INPUTS,
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

#define DEFAULT_MODEL "builtin:resnet18"

typedef struct bench_request {
    const char *spec, *target, *json, *svg;
    cli_build_request target_flags; /* --device, --target-opt */
    const char *cache_dir; /* --cache-dir; NULL: fresh caches, removed at the end */
    int threads, runs, warmup;
    bool per_op, quiet, suggest;
    uint64_t seed;
} bench_request;

/* A build's wall time in its two steps: partitioning @main for the region target (none
 * for the host build), then byocl_build: code generation, LLVM, and for the offloaded
 * build the region target's compile (OpenCL C and the driver's program builds). Of the
 * build, what the OpenCL programs took (byocl_opencl_build_totals, over the build). */
typedef struct bench_build_parts {
    double partition_ms, build_ms;
    byocl_opencl_build_totals programs;
} bench_build_parts;

/* One of the two builds. */
typedef struct bench_path {
    const char *name;        /* "host", "offloaded" */
    cli_build_request build; /* how it is built */
    const byocl_module *m;   /* what it builds */
    double cold_ms, cached_ms; /* partition + build */
    bench_build_parts cold, cached;
    double first_run_ms;     /* the cold build's first run */
    byocl_compiled *c;       /* the cached build, which runs */
    byocl_executor *ex;
    double *ms;              /* each timed run */
    double min_ms, median_ms, max_ms;
    double per_run;          /* timed runs its profile holds */
} bench_path;

/* A region, or (the last row) the ops outside every region. */
typedef struct bench_row {
    char name[80];
    int ops;
    double flops;
    double host_ms, offloaded_ms, kernels_ms, transfers_ms, gaps_ms; /* per run */
} bench_row;

typedef struct bench_result {
    double import_ms; /* loading the model (the ONNX import, or parsing the text) */
    int n_rows;       /* regions, then the host ops */
    bench_row *rows;
    long peak_rss_kib;
    int n_compared;   /* outputs */
    int64_t n_values; /* their elements */
    double max_abs_err, rel_l2;
    bench_machine machine;
    double round_trip_ns[2]; /* cross-core, before and after the timed runs */
} bench_result;

/* ------------------------------------------------------------------ request */

/* The default --target: the first registered (the built-in targets come before plugins'). */
static const char *first_region_target(void)
{
    return byocl_target_count() > 0 ? byocl_target_at(0)->name : "(none registered)";
}

static int parse_request(const cli_command *cmd, const cli_args *args, bench_request *req)
{
    *req = (bench_request){.spec = args->n_positional > 0 ? args->positional[0] : DEFAULT_MODEL,
                           .target = cli_value(cmd, args, "target", first_region_target()),
                           .json = cli_value(cmd, args, "json", NULL),
                           .svg = cli_value(cmd, args, "svg", NULL),
                           .cache_dir = cli_value(cmd, args, "cache-dir", NULL),
                           .runs = 10,
                           .warmup = 2,
                           .per_op = cli_count(cmd, args, "per-op") > 0,
                           .quiet = cli_count(cmd, args, "quiet") > 0,
                           .suggest = cli_count(cmd, args, "suggest") > 0};
    if (!cli_is_region_target(req->target))
        return cli_usage_error(cmd, "--target %s: bench compares the host with a region target "
                                    "such as %s",
                               req->target, first_region_target());
    int rc = cli_check_target(cmd, req->target);
    if (rc != CLI_EXIT_OK)
        return rc;
    req->target_flags.target = req->target;
    rc = cli_target_flags(cmd, args, &req->target_flags);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *v = cli_value(cmd, args, "threads", NULL);
    if (v && !cli_parse_count(v, 1, 4096, &req->threads))
        return cli_usage_error(cmd, "--threads %s: expected a count from 1 to 4096", v);
    v = cli_value(cmd, args, "runs", NULL);
    if (v && !cli_parse_count(v, 1, 100000, &req->runs))
        return cli_usage_error(cmd, "--runs %s: expected a count from 1 to 100000", v);
    v = cli_value(cmd, args, "warmup", NULL);
    if (v && !cli_parse_count(v, 0, 100000, &req->warmup))
        return cli_usage_error(cmd, "--warmup %s: expected a count from 0 to 100000", v);
    if (req->json && req->svg && strcmp(req->json, req->svg) == 0)
        return cli_usage_error(cmd, "--json and --svg name the same file %s", req->json);
    bool random;
    return cli_check_input_flags(cmd, args, &random, &req->seed);
}

/* ------------------------------------------------------------ compile caches */

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* Points BYOCL_CACHE_DIR (byocl's compiled programs) and POCL_CACHE_DIR (PoCL's kernels)
 * at DIR/byocl and DIR/pocl, created. Done before the first OpenCL call of the process,
 * so that PoCL reads it too. */
static int use_caches(const char *dir)
{
    static const char *const vars[][2] = {{"BYOCL_CACHE_DIR", "byocl"},
                                          {"POCL_CACHE_DIR", "pocl"}};
    size_t n = strlen(dir) + 16;
    char *sub = malloc(n);
    if (!sub)
        return cli_fail("out of memory");
    int rc = CLI_EXIT_OK;
    for (int k = 0; k < 2 && rc == CLI_EXIT_OK; k++) {
        snprintf(sub, n, "%s/%s", dir, vars[k][1]);
        rc = cli_make_dirs(sub);
        if (rc == CLI_EXIT_OK && setenv(vars[k][0], sub, 1) != 0)
            rc = cli_fail("cannot set %s: %s", vars[k][0], strerror(errno));
    }
    free(sub);
    return rc;
}

/* The caches of the cold builds: --cache-dir as it is, else a fresh directory whose path
 * *fresh receives (malloc'ed; remove_caches removes it). */
static int set_up_caches(const bench_request *req, char **fresh)
{
    *fresh = NULL;
    if (req->cache_dir)
        return use_caches(req->cache_dir);
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    size_t n = strlen(tmp) + 32;
    char *dir = malloc(n);
    if (!dir)
        return cli_fail("out of memory");
    snprintf(dir, n, "%s/byocl-bench-XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        int rc = cli_fail("cannot create a directory for fresh caches in %s: %s", tmp,
                          strerror(errno));
        free(dir);
        return rc;
    }
    *fresh = dir;
    return use_caches(dir);
}

static void remove_caches(char *fresh)
{
    if (fresh)
        nftw(fresh, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(fresh);
}

/* ------------------------------------------------------------------ builds */

/* Builds path p once, timed in its two steps (the region target's partitioning, then the
 * build of the partitioned module, which byocl_compile does not partition again), with
 * progress; the build is kept in *out and *ms receives the sum. */
static int build_once(const bench_request *req, bench_path *p, const char *kind,
                      byocl_compiled **out, double *ms, bench_build_parts *parts)
{
    char label[160];
    snprintf(label, sizeof label, "compiling the %s build (%s)", p->name, kind);
    cli_build_request build = p->build;
    build.label = label;
    build.quiet = req->quiet;
    byocl_error err;
    byocl_module *partitioned = NULL;
    byocl_status st = BYOCL_OK;
    *parts = (bench_build_parts){0};
    if (cli_is_region_target(build.target)) {
        double t0 = cli_seconds();
        st = cli_partition_for_target(&build, p->m, &partitioned, &err);
        parts->partition_ms = (cli_seconds() - t0) * 1e3;
    }
    byocl_opencl_build_totals before, after;
    byocl_opencl_build_totals_get(&before);
    if (st == BYOCL_OK)
        st = cli_build_model(&build, partitioned ? partitioned : p->m, out, &parts->build_ms,
                             &err);
    byocl_opencl_build_totals_get(&after);
    parts->programs = (byocl_opencl_build_totals){
        .compiled = after.compiled - before.compiled,
        .loaded = after.loaded - before.loaded,
        .compiled_by_workers = after.compiled_by_workers - before.compiled_by_workers,
        .compiled_ms = after.compiled_ms - before.compiled_ms,
        .loaded_ms = after.loaded_ms - before.loaded_ms,
    };
    byocl_module_free(partitioned);
    *ms = parts->partition_ms + parts->build_ms;
    if (st != BYOCL_OK) {
        byocl_error_prefix(&err, "the %s build of %s: ", p->name, req->spec);
        return cli_fail_error(&err);
    }
    return CLI_EXIT_OK;
}

static int new_executor(bench_path *p, const cli_inputs *in)
{
    return cli_executor_with_inputs(p->c, in, &p->ex);
}

static int run_once(bench_path *p, double *ms)
{
    byocl_error err;
    double t0 = cli_seconds();
    byocl_status st = byocl_executor_run(p->ex, &err);
    if (ms)
        *ms = (cli_seconds() - t0) * 1e3;
    if (st != BYOCL_OK) {
        byocl_error_prefix(&err, "running the %s build: ", p->name);
        return cli_fail_error(&err);
    }
    return CLI_EXIT_OK;
}

/* Cold (fresh caches) with its first run, which finishes what the driver compiles late
 * (PoCL builds a kernel for its work-group size at the first launch); then cached (the
 * same caches, now filled): the cached build runs. */
static int build_path(const bench_request *req, bench_path *p, const cli_inputs *in)
{
    int rc = build_once(req, p, "cold", &p->c, &p->cold_ms, &p->cold);
    if (rc == CLI_EXIT_OK)
        rc = new_executor(p, in);
    if (rc == CLI_EXIT_OK) {
        cli_progress *progress = cli_progress_start("first run", 0, req->quiet);
        rc = run_once(p, &p->first_run_ms);
        cli_progress_finish(progress, rc == CLI_EXIT_OK);
    }
    byocl_executor_free(p->ex);
    byocl_compiled_free(p->c);
    p->ex = NULL;
    p->c = NULL;
    if (rc == CLI_EXIT_OK)
        rc = build_once(req, p, "cached", &p->c, &p->cached_ms, &p->cached);
    if (rc == CLI_EXIT_OK)
        rc = new_executor(p, in);
    return rc;
}

/* Warm-up runs, then timed runs, the two builds alternating (A B A B): both see the same
 * machine load. Profiles count the timed runs only. */
static int run_alternating(const bench_request *req, bench_path *paths)
{
    int rc = CLI_EXIT_OK;
    if (req->warmup > 0) {
        cli_progress *progress = cli_progress_start("warming up", 2 * req->warmup, req->quiet);
        for (int r = 0; r < req->warmup && rc == CLI_EXIT_OK; r++)
            for (int k = 0; k < 2 && rc == CLI_EXIT_OK; k++) {
                rc = run_once(&paths[k], NULL);
                cli_progress_set(progress, 2 * r + k + 1);
            }
        cli_progress_finish(progress, rc == CLI_EXIT_OK);
    }
    for (int k = 0; k < 2; k++) {
        byocl_executor_reset_profile(paths[k].ex);
        byocl_compiled_reset_parts(paths[k].c);
    }
    cli_progress *progress = cli_progress_start("running", 2 * req->runs, req->quiet);
    for (int r = 0; r < req->runs && rc == CLI_EXIT_OK; r++)
        for (int k = 0; k < 2 && rc == CLI_EXIT_OK; k++) {
            rc = run_once(&paths[k], &paths[k].ms[r]);
            cli_progress_set(progress, 2 * r + k + 1);
        }
    cli_progress_finish(progress, rc == CLI_EXIT_OK);
    for (int k = 0; k < 2 && rc == CLI_EXIT_OK; k++) {
        bench_path *p = &paths[k];
        p->median_ms = cli_sort_median(p->ms, req->runs);
        p->min_ms = p->ms[0];
        p->max_ms = p->ms[req->runs - 1];
        p->per_run = req->runs;
    }
    return rc;
}

/* --------------------------------------------------------------- the figures */

/* Host build: each kernel step counts for the region of the node it ends with. */
static void attribute_host_steps(const bench_path *host, const bench_regions *regions,
                                 bench_result *res)
{
    bench_row *host_ops = &res->rows[res->n_rows - 1];
    for (int i = 0; i < byocl_executor_num_steps(host->ex); i++) {
        byocl_step_info s;
        byocl_executor_step(host->ex, i, &s, NULL);
        int region = s.node >= 0 && s.node < regions->n_nodes ? regions->region_of[s.node] : -1;
        bench_row *row = region >= 0 ? &res->rows[region] : host_ops;
        row->host_ms += s.total_ms / host->per_run;
        if (region < 0)
            host_ops->flops += s.flops;
    }
}

/* Offloaded build: region steps by symbol, their parts split into kernels, transfers and
 * the gaps between kernels; kernel steps are host ops. */
static void attribute_offloaded_steps(const bench_path *off, bench_result *res)
{
    bench_row *host_ops = &res->rows[res->n_rows - 1];
    for (int i = 0; i < byocl_executor_num_steps(off->ex); i++) {
        byocl_step_info s;
        byocl_executor_step(off->ex, i, &s, NULL);
        bench_row *row = host_ops;
        for (int r = 0; r < res->n_rows - 1 && s.kind == BYOCL_STEP_REGION; r++)
            if (strcmp(res->rows[r].name, s.name) == 0)
                row = &res->rows[r];
        row->offloaded_ms += s.total_ms / off->per_run;
        if (row == host_ops)
            continue;
        row->flops = s.flops;
        for (int k = 0; k < byocl_compiled_num_step_parts(off->c, i); k++) {
            byocl_region_part part;
            if (byocl_compiled_step_part(off->c, i, k, &part, NULL) != BYOCL_OK)
                continue;
            double *sum = part.transfer          ? &row->transfers_ms
                          : part.between_kernels ? &row->gaps_ms
                                                 : &row->kernels_ms;
            *sum += part.total_ms / off->per_run;
        }
    }
}

/* Largest absolute difference and relative L2 error (against the host) over every
 * output. */
static int compare_outputs(const bench_path *host, const bench_path *off, bench_result *res)
{
    double diff2 = 0, ref2 = 0;
    int n = byocl_executor_num_outputs(host->ex);
    for (int i = 0; i < n; i++) {
        const byocl_tensor *a, *b;
        byocl_error err;
        if (byocl_executor_output(host->ex, i, &a, &err) != BYOCL_OK ||
            byocl_executor_output(off->ex, i, &b, &err) != BYOCL_OK)
            return cli_fail_error(&err);
        int64_t numel = byocl_tensor_numel(a);
        if (numel != byocl_tensor_numel(b))
            return cli_fail("output %d has %lld values on the host and %lld offloaded", i,
                            (long long)numel, (long long)byocl_tensor_numel(b));
        byocl_compare_result r;
        if (byocl_tensor_compare(b, a, NULL, &r, &err) != BYOCL_OK)
            return cli_fail_error(&err);
        if (isnan(r.max_abs_error) || r.max_abs_error > res->max_abs_err)
            res->max_abs_err = r.max_abs_error; /* a NaN stays */
        diff2 += r.sum_sq_error;
        ref2 += r.sum_sq_expected;
        res->n_values += numel;
    }
    res->n_compared = n;
    res->rel_l2 = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    return CLI_EXIT_OK;
}

static int collect(const bench_path *paths, const bench_regions *regions, bench_result *res)
{
    res->n_rows = regions->n_regions + 1;
    res->rows = calloc((size_t)res->n_rows, sizeof *res->rows);
    if (!res->rows)
        return cli_fail("out of memory");
    for (int r = 0; r < regions->n_regions; r++) {
        snprintf(res->rows[r].name, sizeof res->rows[r].name, "%s_main_%d",
                 paths[1].build.target, r);
        res->rows[r].ops = regions->n_ops[r];
    }
    snprintf(res->rows[regions->n_regions].name, sizeof res->rows[0].name, "host ops");
    res->rows[regions->n_regions].ops = regions->n_host_ops;
    attribute_host_steps(&paths[0], regions, res);
    attribute_offloaded_steps(&paths[1], res);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        res->peak_rss_kib = ru.ru_maxrss;
    return compare_outputs(&paths[0], &paths[1], res);
}

/* ------------------------------------------------------------------ output */

static double ratio(double a, double b) { return b > 0 ? a / b : NAN; }

static void print_table(const bench_request *req, const bench_path *paths,
                        const bench_result *res)
{
    int threads = byocl_compiled_threads(paths[0].c);
    printf("byocl bench %s: host against %s, %d thread%s, %d run%s each after %d warm-up "
           "run%s, alternating\n",
           req->spec, req->target, threads, threads == 1 ? "" : "s", req->runs,
           req->runs == 1 ? "" : "s", req->warmup, req->warmup == 1 ? "" : "s");
    printf("  machine: %s, %d core%s", res->machine.cpu, res->machine.cores,
           res->machine.cores == 1 ? "" : "s");
    if (!isnan(res->round_trip_ns[0]) && !isnan(res->round_trip_ns[1]))
        printf("; cross-core round trip %.0f ns before the timed runs, %.0f after",
               res->round_trip_ns[0], res->round_trip_ns[1]);
    printf("\n\n  %-22s %10s %10s %10s\n", "end to end", "min ms", "median ms", "max ms");
    for (int k = 0; k < 2; k++)
        printf("  %-22s %10.3f %10.3f %10.3f\n", paths[k].name, paths[k].min_ms,
               paths[k].median_ms, paths[k].max_ms);
    printf("  speedup (host median / offloaded median): %.2fx\n",
           ratio(paths[0].median_ms, paths[1].median_ms));
    printf("\n  %-22s %5s %8s %10s %10s %10s %10s %10s %8s\n", "per run", "ops", "GFLOP",
           "host ms", "offl. ms", "kernels", "transfers", "gaps", "speedup");
    for (int r = 0; r < res->n_rows; r++) {
        const bench_row *row = &res->rows[r];
        bool host_ops = r == res->n_rows - 1;
        if (host_ops && row->ops == 0 && row->host_ms == 0 && row->offloaded_ms == 0)
            continue;
        printf("  %-22s %5d %8.3f %10.3f %10.3f", row->name, row->ops, row->flops / 1e9,
               row->host_ms, row->offloaded_ms);
        if (host_ops)
            printf(" %10s %10s %10s %8s\n", "-", "-", "-", "-");
        else
            printf(" %10.3f %10.3f %10.3f %7.2fx\n", row->kernels_ms, row->transfers_ms,
                   row->gaps_ms, ratio(row->host_ms, row->offloaded_ms));
    }
    printf("\n  %-22s %10s %10s %10s %14s\n", "compile", "cold ms", "1st run ms", "cached ms",
           "activations");
    if (req->cache_dir) /* "cold" is only as cold as the caches were */
        printf("  (cold: with the caches found in %s)\n", req->cache_dir);
    for (int k = 0; k < 2; k++) {
        byocl_plan_stats st;
        byocl_compiled_stats(paths[k].c, &st);
        printf("  %-22s %10.1f %10.1f %10.1f %10.2f MiB\n", paths[k].name, paths[k].cold_ms,
               paths[k].first_run_ms, paths[k].cached_ms,
               (double)st.planned_bytes / (1024.0 * 1024.0));
    }
    printf("  (activations: the storage plan; the least any plan of the same steps can use, "
           "their live peak:");
    for (int k = 0; k < 2; k++) {
        byocl_plan_stats st;
        byocl_compiled_stats(paths[k].c, &st);
        printf(" %s %.2f MiB%s", paths[k].name, (double)st.live_peak_bytes / (1024.0 * 1024.0),
               k == 0 ? "," : ")\n");
    }
    printf("\n  peak RSS: %.1f MiB\n", (double)res->peak_rss_kib / 1024.0);
    printf("  agreement (offloaded against host, %d output%s, %lld values): max abs err %.3g, "
           "rel L2 %.3g\n",
           res->n_compared, res->n_compared == 1 ? "" : "s", (long long)res->n_values,
           res->max_abs_err, res->rel_l2);
}

/* --suggest: the regions that ran slower offloaded than their nodes on the host, and the
 * flag that keeps them there (the JSON of this run is the profile it reads). */
static void print_suggestions(const bench_request *req, const bench_result *res)
{
    if (res->n_rows <= 1) {
        printf("\n  suggestions: none, no region is offloaded\n");
        return;
    }
    int slower = 0;
    for (int r = 0; r + 1 < res->n_rows; r++) { /* the last row is the host ops */
        const bench_row *row = &res->rows[r];
        if (!(row->offloaded_ms > row->host_ms))
            continue;
        if (!slower++)
            printf("\n  suggestions:\n");
        printf("  %s ran slower offloaded (%.3f ms against %.3f ms on the host)\n", row->name,
               row->offloaded_ms, row->host_ms);
    }
    if (!slower) {
        printf("\n  suggestions: none, every region ran faster offloaded\n");
        return;
    }
    printf("  to keep %s on the host: byocl run %s --target %s --offload-profile %s\n",
           slower == 1 ? "it" : "them", req->spec, req->target,
           req->json ? req->json : "FILE.json (this bench again with --json FILE.json)");
}

static int print_per_op(const bench_path *paths)
{
    int rc = CLI_EXIT_OK;
    for (int k = 0; k < 2 && rc == CLI_EXIT_OK; k++) {
        printf("\n%s build, ", paths[k].name);
        rc = cli_print_profile(paths[k].c, paths[k].ex);
    }
    return rc;
}

/* A number, or null when it is not finite (JSON has no NaN). */
static void json_num(FILE *f, const char *key, double v, const char *after)
{
    fprintf(f, "\"%s\": ", key);
    if (isfinite(v))
        fprintf(f, "%.9g%s", v, after);
    else
        fprintf(f, "null%s", after);
}

/* "compile_<kind>_parts_ms": {...}, "opencl_programs_<kind>": {...} */
static void json_build_parts(FILE *f, const char *kind, const bench_build_parts *parts)
{
    const byocl_opencl_build_totals *pr = &parts->programs;
    fprintf(f, "\"compile_%s_parts_ms\": {", kind);
    json_num(f, "partition", parts->partition_ms, ", ");
    json_num(f, "build", parts->build_ms, ", ");
    json_num(f, "opencl_programs", pr->compiled_ms + pr->loaded_ms, "}, ");
    fprintf(f,
            "\"opencl_programs_%s\": {\"compiled\": %d, \"compiled_by_workers\": %d, "
            "\"loaded\": %d, ",
            kind, pr->compiled, pr->compiled_by_workers, pr->loaded);
    json_num(f, "compiled_ms", pr->compiled_ms, ", ");
    json_num(f, "loaded_ms", pr->loaded_ms, "}, ");
}

static void json_path(FILE *f, const bench_path *p)
{
    byocl_plan_stats st;
    byocl_compiled_stats(p->c, &st);
    fprintf(f, "  \"%s\": {", p->name);
    json_num(f, "min_ms", p->min_ms, ", ");
    json_num(f, "median_ms", p->median_ms, ", ");
    json_num(f, "max_ms", p->max_ms, ", ");
    json_num(f, "compile_cold_ms", p->cold_ms, ", ");
    json_num(f, "first_run_cold_ms", p->first_run_ms, ", ");
    json_num(f, "compile_cached_ms", p->cached_ms, ", ");
    json_build_parts(f, "cold", &p->cold);
    json_build_parts(f, "cached", &p->cached);
    fprintf(f, "\"steps\": %d, \"planned_activation_bytes\": %zu, \"live_peak_activation_bytes\": %zu},\n",
            st.n_steps, st.planned_bytes, st.live_peak_bytes);
}

static void json_row(FILE *f, const bench_row *row, bool region, const char *after)
{
    fprintf(f, "{\"name\": ");
    cli_json_string(f, row->name);
    fprintf(f, ", \"ops\": %d, ", row->ops);
    json_num(f, "gflop", row->flops / 1e9, ", ");
    json_num(f, "host_ms", row->host_ms, ", ");
    json_num(f, "offloaded_ms", row->offloaded_ms, region ? ", " : "}");
    if (region) {
        json_num(f, "kernels_ms", row->kernels_ms, ", ");
        json_num(f, "transfers_ms", row->transfers_ms, ", ");
        json_num(f, "gaps_ms", row->gaps_ms, ", ");
        json_num(f, "speedup", ratio(row->host_ms, row->offloaded_ms), "}");
    }
    fprintf(f, "%s", after);
}

/* Each step of a build (mean per timed run), with the timed parts of region steps. */
static void json_steps(FILE *f, const bench_path *p)
{
    fprintf(f, "    \"%s\": [", p->name);
    int n = byocl_executor_num_steps(p->ex);
    const char *sep = "\n";
    for (int i = 0; i < n; i++) {
        byocl_step_info s;
        byocl_executor_step(p->ex, i, &s, NULL);
        double ms = s.total_ms / p->per_run;
        fprintf(f, "%s      {\"name\": ", sep);
        cli_json_string(f, s.name);
        fprintf(f, ", \"kind\": \"%s\", \"runner\": ",
                s.kind == BYOCL_STEP_KERNEL ? "kernel" : "region");
        cli_json_string(f, s.runner);
        fprintf(f, ", ");
        json_num(f, "ms", ms, ", ");
        json_num(f, "gflops", s.flops > 0 ? s.flops / (ms * 1e6) : NAN, "");
        int n_parts = byocl_compiled_num_step_parts(p->c, i);
        if (n_parts > 0)
            fprintf(f, ", \"parts\": [");
        for (int k = 0; k < n_parts; k++) {
            byocl_region_part part;
            if (byocl_compiled_step_part(p->c, i, k, &part, NULL) != BYOCL_OK)
                continue;
            double pms = part.total_ms / p->per_run;
            fprintf(f, "%s{\"name\": ", k ? ", " : "");
            cli_json_string(f, part.name);
            fprintf(f, ", \"transfer\": %s, \"between_kernels\": %s, ",
                    part.transfer ? "true" : "false", part.between_kernels ? "true" : "false");
            json_num(f, "ms", pms, ", ");
            json_num(f, "gflops", part.flops > 0 ? part.flops / (pms * 1e6) : NAN, "}");
        }
        fprintf(f, "%s}", n_parts > 0 ? "]" : "");
        sep = ",\n";
    }
    fprintf(f, "\n    ]");
}

static void write_json(FILE *f, const bench_request *req, const bench_path *paths,
                       const bench_result *res)
{
    fprintf(f, "{\n  \"model\": ");
    cli_json_string(f, req->spec);
    fprintf(f, ",\n  \"target\": ");
    cli_json_string(f, req->target);
    fprintf(f, ",\n  \"threads\": %d, \"runs\": %d, \"warmup\": %d,\n",
            byocl_compiled_threads(paths[0].c), req->runs, req->warmup);
    fprintf(f, "  ");
    json_num(f, "import_ms", res->import_ms, ",\n");
    for (int k = 0; k < 2; k++)
        json_path(f, &paths[k]);
    fprintf(f, "  ");
    json_num(f, "speedup", ratio(paths[0].median_ms, paths[1].median_ms), ",\n");
    fprintf(f, "  \"regions\": [");
    for (int r = 0; r < res->n_rows - 1; r++) {
        fprintf(f, "\n    ");
        json_row(f, &res->rows[r], true, r < res->n_rows - 2 ? "," : "\n  ");
    }
    fprintf(f, "],\n  \"host_ops\": ");
    json_row(f, &res->rows[res->n_rows - 1], false, ",\n");
    fprintf(f, "  \"peak_rss_bytes\": %lld,\n", (long long)res->peak_rss_kib * 1024);
    fprintf(f, "  \"machine\": {\"cpu\": ");
    cli_json_string(f, res->machine.cpu);
    fprintf(f, ", \"cores\": %d, ", res->machine.cores);
    json_num(f, "cross_core_round_trip_ns_before", res->round_trip_ns[0], ", ");
    json_num(f, "cross_core_round_trip_ns_after", res->round_trip_ns[1], "},\n");
    fprintf(f, "  \"agreement\": {\"outputs\": %d, \"values\": %lld, ", res->n_compared,
            (long long)res->n_values);
    json_num(f, "max_abs_err", res->max_abs_err, ", ");
    json_num(f, "rel_l2", res->rel_l2, "}");
    if (req->per_op) {
        fprintf(f, ",\n  \"per_op\": {\n");
        json_steps(f, &paths[0]);
        fprintf(f, ",\n");
        json_steps(f, &paths[1]);
        fprintf(f, "\n  }");
    }
    fprintf(f, "\n}\n");
}

static int write_svg(FILE *f, const bench_request *req, const bench_path *paths,
                     const bench_result *res)
{
    bench_bar *bars = calloc((size_t)res->n_rows + 1, sizeof *bars);
    if (!bars)
        return cli_fail("out of memory");
    int n = 0;
    /* End to end: the medians, the offloaded bar split by the regions' mean kernel and
     * transfer times. */
    double kernels = 0, transfers = 0;
    for (int r = 0; r < res->n_rows - 1; r++) {
        kernels += res->rows[r].kernels_ms;
        transfers += res->rows[r].transfers_ms;
    }
    bars[n++] = (bench_bar){"end to end", paths[0].median_ms, paths[1].median_ms, kernels,
                            transfers};
    for (int r = 0; r < res->n_rows; r++) {
        const bench_row *row = &res->rows[r];
        if (r == res->n_rows - 1 && row->host_ms == 0 && row->offloaded_ms == 0)
            continue;
        bars[n++] = (bench_bar){row->name, row->host_ms, row->offloaded_ms, row->kernels_ms,
                                row->transfers_ms};
    }
    char title[400];
    snprintf(title, sizeof title, "%s: host against %s (median end to end, mean per region)",
             req->spec, req->target);
    bench_plot_svg(f, title, bars, n);
    free(bars);
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ command */

/* Loads the model (*import_ms: how long that took) and binds @main's parameters: --input,
 * --params, then random values. */
static int load_inputs(const cli_command *cmd, const cli_args *args, const bench_request *req,
                       byocl_module **m, cli_inputs *in, double *import_ms)
{
    double t0 = cli_seconds();
    int rc = cli_load_model_args(cmd, args, req->spec, m);
    *import_ms = (cli_seconds() - t0) * 1e3;
    if (rc != CLI_EXIT_OK)
        return rc;
    const byocl_function *fn = byocl_module_find(*m, "main");
    if (!fn)
        return cli_fail("%s has no function @main", req->spec);
    return cli_bind_function_inputs(cmd, args, req->spec, fn, true, req->seed, in);
}

static int bench_model(const bench_request *req, const byocl_module *m, const cli_inputs *in,
                       double import_ms, cli_report_file *json, cli_report_file *svg)
{
    bench_regions regions;
    byocl_error err;
    if (bench_regions_annotate(m, req->target, &req->target_flags.offload, &regions, &err) !=
        BYOCL_OK) {
        byocl_error_prefix(&err, "%s: ", req->spec);
        return cli_fail_error(&err);
    }
    cli_build_request offloaded = req->target_flags;
    offloaded.offload = (byocl_offload_policy){0}; /* applied above, in the annotated copy */
    offloaded.threads = req->threads;
    offloaded.profile = true;
    bench_path paths[2] = {
        {.name = "host", .m = m, .build = {.target = "host", .threads = req->threads}},
        {.name = "offloaded", .m = regions.annotated, .build = offloaded},
    };
    bench_result res = {.import_ms = import_ms};
    char *caches = NULL;
    int rc = set_up_caches(req, &caches);
    for (int k = 0; k < 2 && rc == CLI_EXIT_OK; k++) {
        paths[k].ms = calloc((size_t)req->runs, sizeof *paths[k].ms);
        if (!paths[k].ms)
            rc = cli_fail("out of memory");
    }
    for (int k = 0; k < 2 && rc == CLI_EXIT_OK; k++)
        rc = build_path(req, &paths[k], in);
    bench_machine_describe(&res.machine);
    if (rc == CLI_EXIT_OK) {
        res.round_trip_ns[0] = bench_cross_core_round_trip_ns();
        rc = run_alternating(req, paths);
        res.round_trip_ns[1] = bench_cross_core_round_trip_ns();
    }
    if (rc == CLI_EXIT_OK)
        rc = collect(paths, &regions, &res);
    if (rc == CLI_EXIT_OK) {
        print_table(req, paths, &res);
        if (req->suggest)
            print_suggestions(req, &res);
        if (req->per_op)
            rc = print_per_op(paths);
    }
    if (rc == CLI_EXIT_OK && json->f) {
        write_json(json->f, req, paths, &res);
        rc = cli_report_file_commit(json);
        if (rc == CLI_EXIT_OK)
            printf("wrote %s\n", req->json);
    }
    if (rc == CLI_EXIT_OK && svg->f) {
        rc = write_svg(svg->f, req, paths, &res);
        if (rc == CLI_EXIT_OK)
            rc = cli_report_file_commit(svg);
        if (rc == CLI_EXIT_OK)
            printf("wrote %s\n", req->svg);
    }
    for (int k = 0; k < 2; k++) {
        byocl_executor_free(paths[k].ex);
        byocl_compiled_free(paths[k].c);
        free(paths[k].ms);
    }
    free(res.rows);
    remove_caches(caches);
    bench_regions_free(&regions);
    return rc;
}

static int run_bench(const cli_command *cmd, const cli_args *args)
{
    bench_request req = {0};
    int rc = parse_request(cmd, args, &req);
    if (rc == CLI_EXIT_OK) /* last: the profile it reads is freed below */
        rc = cli_offload_flags(cmd, args, req.target_flags.target, &req.target_flags.offload);
    if (rc != CLI_EXIT_OK) {
        cli_offload_free(&req.target_flags.offload);
        return rc;
    }
    /* The report files are opened first: an unwritable path fails before the work. */
    cli_report_file json = {0}, svg = {0};
    if (req.json)
        rc = cli_report_file_open(&json, req.json, "--json");
    if (rc == CLI_EXIT_OK && req.svg)
        rc = cli_report_file_open(&svg, req.svg, "--svg");
    byocl_module *m = NULL;
    cli_inputs in = {0};
    double import_ms = 0;
    if (rc == CLI_EXIT_OK)
        rc = load_inputs(cmd, args, &req, &m, &in, &import_ms);
    if (rc == CLI_EXIT_OK)
        rc = bench_model(&req, m, &in, import_ms, &json, &svg);
    cli_report_file_discard(&json);
    cli_report_file_discard(&svg);
    cli_inputs_free(&in);
    byocl_module_free(m);
    cli_offload_free(&req.target_flags.offload);
    return rc;
}

const cli_command cli_cmd_bench = {
    .name = "bench",
    .summary = "time a model on the host against its regions offloaded, region by region",
    .args_usage = "[MODEL] [--target T] [--device D] [--threads N] [--runs N] [--warmup N]\n"
                  "                 [--cache-dir DIR] [--json FILE] [--svg FILE] [--per-op] [--quiet]\n"
                  "                 [--suggest] [--min-region-flops X] [--offload-profile FILE.json]\n"
                  "                 [--input NAME=FILE]... [--params FILE.npz] "
                  "[--random-inputs[=SEED]]",
    .min_positional = 0,
    .max_positional = 1,
    .positional_names = {"MODEL"},
    .description =
        "Builds MODEL (default " DEFAULT_MODEL ") twice: for the host alone (LLVM), and\n"
        "partitioned for --target (default opencl) with the rest on the host, as\n"
        "`byocl run --target` does. Each build is compiled cold (byocl's and PoCL's\n"
        "caches in a fresh directory, or in --cache-dir DIR, which is kept) and run once\n"
        "(PoCL finishes kernels at their first launch), then compiled again cached (the\n"
        "same caches, now filled). The cached builds run --warmup untimed runs each, then\n"
        "--runs timed runs, host and offloaded alternating so that both see the same\n"
        "machine load.\n"
        "\n"
        "Under the heading, the machine: CPU, cores, and how long a cache line takes from\n"
        "one core to another and back, before and after the timed runs (it moves on\n"
        "cloud machines, and two-thread times with it). The table shows end-to-end min,\n"
        "median and max and the speedup; per region its ops, GFLOP, its time in the host\n"
        "build (the host steps that compute its nodes) against its time offloaded, split\n"
        "into kernels, transfers and the gaps between kernels (OpenCL events: the device\n"
        "idle from one kernel's end to the next one's start); the ops outside regions;\n"
        "compile times (cold, the cold build's first run, cached); the storage plans'\n"
        "activation memory; the process's peak RSS; and how far the offloaded outputs are\n"
        "from the host's (largest absolute difference, relative L2 error). --per-op lists\n"
        "every step and kernel of both builds with GFLOP/s. --json FILE writes the same\n"
        "figures (host.median_ms, offloaded.median_ms, regions[], machine, ...), --svg\n"
        "FILE a bar chart; both appear whole or not at all.\n"
        "\n"
        "--suggest names the regions that ran slower offloaded than on the host; the\n"
        "--json of the run is a profile: --offload-profile FILE.json (here, and on run\n"
        "and partition) keeps those regions on the host, --min-region-flops X every\n"
        "region of fewer estimated FLOPs (docs/partitioning.md).\n"
        "\n"
        "Parameters not given by --input or --params get random values (--random-inputs\n"
        "seed, default 0). Progress goes to stderr when a step takes over a second (a bar\n"
        "on a terminal, plain lines otherwise); --quiet turns it off. See\n"
        "docs/benchmarks.md.\n"
        "\n" CLI_MODEL_HELP "\n",
    .options = bench_options,
    .examples = "  byocl bench\n"
                "  byocl bench builtin:mobilenet_v2 --threads 2 --runs 20 --json bench.json\n"
                "  byocl bench model.onnx --per-op --svg regions.svg\n",
    .run = run_bench,
};
