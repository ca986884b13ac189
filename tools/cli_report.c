/* Run times and per-step profiles, shared by byocl run and byocl bench; timed runs with
 * progress, shared by the commands that run models. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_progress.h"
#include "cli_report.h"

static int compare_doubles(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

double cli_sort_median(double *ms, int n)
{
    qsort(ms, (size_t)n, sizeof *ms, compare_doubles);
    return n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

void cli_print_times(const char *what, double *ms, int n)
{
    if (n == 1) {
        printf("%s in %.2f ms\n", what, ms[0]);
        return;
    }
    double median = cli_sort_median(ms, n);
    printf("%s %d times: min %.2f ms, median %.2f ms, max %.2f ms\n", what, n, ms[0], median,
           ms[n - 1]);
}

void cli_print_first_run_times(const char *what, double *ms, int n)
{
    if (n == 1) {
        printf("%s in %.2f ms (first run)\n", what, ms[0]);
        return;
    }
    double median = cli_sort_median(ms + 1, n - 1);
    if (n == 2)
        printf("%s 2 times: first run %.2f ms; steady state (1 run): %.2f ms\n", what, ms[0],
               median);
    else
        printf("%s %d times: first run %.2f ms; steady state (%d runs): min %.2f ms, median "
               "%.2f ms, max %.2f ms\n",
               what, n, ms[0], n - 1, ms[1], median, ms[n - 1]);
}

/* Runs [from, to) of cli_timed_runs as one progress step. */
static byocl_status timed_step(const char *label, int from, int to, cli_run_fn run, void *user,
                               double *ms, byocl_error *err)
{
    cli_progress *progress = cli_progress_start(label, to - from > 1 ? to - from : 0, false);
    byocl_status st = BYOCL_OK;
    for (int r = from; r < to && st == BYOCL_OK; r++) {
        double t0 = cli_seconds();
        st = run(user, err);
        if (ms)
            ms[r] = (cli_seconds() - t0) * 1e3;
        cli_progress_set(progress, r - from + 1);
    }
    cli_progress_finish(progress, st == BYOCL_OK);
    return st;
}

byocl_status cli_timed_runs(int runs, const char *label, bool first_apart, cli_run_fn run,
                            void *user, double *ms, byocl_error *err)
{
    if (!first_apart)
        return timed_step(label, 0, runs, run, user, ms, err);
    char step[400];
    snprintf(step, sizeof step, "%s (first run)", label);
    byocl_status st = timed_step(step, 0, 1, run, user, ms, err);
    snprintf(step, sizeof step, "%s (steady state)", label);
    if (st == BYOCL_OK && runs > 1)
        st = timed_step(step, 1, runs, run, user, ms, err);
    return st;
}

static byocl_status executor_run(void *ex, byocl_error *err)
{
    return byocl_executor_run(ex, err);
}

byocl_status cli_run_executor(byocl_executor *ex, int runs, const char *label, double *ms,
                              byocl_error *err)
{
    return cli_timed_runs(runs, label, true, executor_run, ex, ms, err);
}

void cli_gflops_str(double flops, double ms, char *buf, size_t len)
{
    if (flops > 0 && ms > 0)
        snprintf(buf, len, "%.2f", flops / (ms * 1e6));
    else
        snprintf(buf, len, "-");
}

static int by_total_time(const void *pa, const void *pb)
{
    const byocl_step_info *a = pa, *b = pb;
    if (a->total_ms != b->total_ms)
        return a->total_ms > b->total_ms ? -1 : 1;
    return a->node - b->node;
}

/* A step and its index in the plan (by_total_time sorts these through `info`, which comes
 * first). */
typedef struct profiled_step {
    byocl_step_info info;
    int index;
} profiled_step;

/* Kernels first, then the transfers, then the gaps between kernels. */
static int part_rank(const byocl_region_part *p)
{
    return p->between_kernels ? 2 : p->transfer ? 1 : 0;
}

static int by_part_time(const void *pa, const void *pb)
{
    const byocl_region_part *a = pa, *b = pb;
    if (part_rank(a) != part_rank(b))
        return part_rank(a) - part_rank(b);
    return a->total_ms != b->total_ms ? (a->total_ms > b->total_ms ? -1 : 1) : 0;
}

/* Under a region step whose module times its parts: each kernel (slowest first), the
 * transfers, the device's idle time between kernels, and what the call cost beyond them
 * on the host. */
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
        cli_gflops_str(parts[k].flops, ms, g, sizeof g);
        if (parts[k].transfer || parts[k].between_kernels)
            printf("  %10.3f %5.1f%% %9s    %s\n", ms,
                   total > 0 ? 100.0 * parts[k].total_ms / total : 0.0, g, parts[k].name);
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

int cli_print_profile(const byocl_compiled *c, const byocl_executor *ex)
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
        cli_gflops_str(s->flops, ms, g, sizeof g);
        printf("  %10.3f %5.1f%% %9s  %s (%s, %s)\n", ms,
               total > 0 ? 100.0 * s->total_ms / total : 0.0, g, s->name,
               s->kind == BYOCL_STEP_KERNEL ? "kernel" : "region", s->runner);
        rc = print_parts(c, &steps[i], per_run, total);
    }
    cli_gflops_str(flops, total / per_run, g, sizeof g);
    if (rc == CLI_EXIT_OK)
        printf("  %10.3f %5.1f%% %9s  total\n", total / per_run, 100.0, g);
    free(steps);
    return rc;
}

int cli_report_file_open(cli_report_file *rf, const char *path, const char *what)
{
    *rf = (cli_report_file){0};
    size_t n = strlen(path) + 32;
    rf->path = strdup(path);
    rf->tmp = malloc(n);
    if (!rf->path || !rf->tmp) {
        cli_report_file_discard(rf);
        return cli_fail("out of memory");
    }
    snprintf(rf->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    rf->f = fopen(rf->tmp, "w");
    if (!rf->f) {
        int rc = cli_fail("%s %s: cannot write %s: %s", what, path, rf->tmp, strerror(errno));
        cli_report_file_discard(rf);
        return rc;
    }
    return CLI_EXIT_OK;
}

int cli_report_file_commit(cli_report_file *rf)
{
    bool ok = !ferror(rf->f);
    ok = fclose(rf->f) == 0 && ok;
    rf->f = NULL;
    int rc = CLI_EXIT_OK;
    if (!ok || rename(rf->tmp, rf->path) != 0)
        rc = cli_fail("cannot write %s: %s", rf->path, strerror(errno));
    if (rc == CLI_EXIT_OK) { /* renamed: no temporary left to remove */
        free(rf->tmp);
        rf->tmp = NULL;
    }
    cli_report_file_discard(rf);
    return rc;
}

void cli_report_file_discard(cli_report_file *rf)
{
    if (rf->f)
        fclose(rf->f);
    if (rf->tmp)
        remove(rf->tmp);
    free(rf->tmp);
    free(rf->path);
    *rf = (cli_report_file){0};
}

void cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}
