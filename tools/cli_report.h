/* How commands that run compiled models report times: min/median/max of repeated runs and
 * the per-step profile (byocl run --profile, byocl bench --per-op). */
#ifndef BYOCL_CLI_REPORT_H
#define BYOCL_CLI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "byocl/runtime.h"

/* Sorts ms[0..n) ascending and returns its median (n >= 1). */
double cli_sort_median(double *ms, int n);

/* "WHAT in 1.23 ms", or "WHAT 5 times: min 1.00 ms, median 1.10 ms, max 1.30 ms" (sorts ms). */
void cli_print_times(const char *what, double *ms, int n);

/* The times of a model's runs right after its build, the first apart: it pays what the
 * driver does at a kernel's first launch (PoCL compiles kernels then: minutes for a large
 * model when the caches are cold). "WHAT in 1.23 ms (first run)", or "WHAT 5 times: first
 * run 9.87 ms; steady state (4 runs): min 1.00 ms, median 1.10 ms, max 1.30 ms" (sorts
 * ms[1..n)). */
void cli_print_first_run_times(const char *what, double *ms, int n);

/* One run of what cli_timed_runs times. */
typedef byocl_status (*cli_run_fn)(void *user, byocl_error *err);

/* Calls run(user) `runs` times, each call's wall time in ms[r] (ms may be NULL), stopping at
 * the first failure (err filled), with progress on stderr when it takes over a second
 * (cli_progress.h): "LABEL: 3/10". With `first_apart` the first run is a step of its own,
 * "LABEL (first run)", and the others "LABEL (steady state): 3/9". */
byocl_status cli_timed_runs(int runs, const char *label, bool first_apart, cli_run_fn run,
                            void *user, double *ms, byocl_error *err);

/* cli_timed_runs of byocl_executor_run(ex), the first run apart: the runs of a fresh build. */
byocl_status cli_run_executor(byocl_executor *ex, int runs, const char *label, double *ms,
                              byocl_error *err);

/* "12.34": GFLOP/s of `flops` done in `ms`, or "-" when either is unknown. */
void cli_gflops_str(double flops, double ms, char *buf, size_t len);

/* One line per step of ex, slowest first: mean time, share, GFLOP/s, name (kind, runner);
 * under a region step whose module times its parts (OpenCL events), each kernel, the
 * transfers and the host side of the call. Returns CLI_EXIT_OK or CLI_EXIT_FAILURE
 * (printed). */
int cli_print_profile(const byocl_compiled *c, const byocl_executor *ex);

/* Writes `s` as a JSON string literal, quotes included. */
void cli_json_string(FILE *f, const char *s);

/* A report file written aside and renamed over its path when complete, so that a failed
 * run leaves no half-written file. Opening it early checks that the path is writable
 * before the work that fills it. */
typedef struct cli_report_file {
    char *path, *tmp;
    FILE *f; /* write the contents here */
} cli_report_file;

/* Creates "PATH.tmp.<pid>". Returns CLI_EXIT_OK or CLI_EXIT_FAILURE ("cannot write PATH:
 * reason", printed); `what` names the flag ("--json"). */
int cli_report_file_open(cli_report_file *rf, const char *path, const char *what);
/* Closes the temporary and renames it over the path. Returns CLI_EXIT_OK or
 * CLI_EXIT_FAILURE (printed; the temporary removed). */
int cli_report_file_commit(cli_report_file *rf);
/* Removes the temporary (after a failure); harmless after commit or on a zeroed struct. */
void cli_report_file_discard(cli_report_file *rf);

#endif
