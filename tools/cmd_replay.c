/* byocl replay: runs one captured region alone on its captured inputs and compares every
 * output with the captured one. */
#include <stdlib.h>
#include <string.h>

#include "byocl/capture.h"
#include "byocl/target.h"
#include "cli.h"
#include "cli_build.h"
#include "cli_capture.h"
#include "cli_report.h"

static const cli_option replay_options[] = {
    {"target", 0, CLI_ARG_REQUIRED, false, "NAME",
     "where to run the region: opencl, host, ref, a plugin's target (default: the "
     "captured target)"},
    CLI_OPTION_DEVICE,
    CLI_OPTION_TARGET_OPT,
    {"threads", 0, CLI_ARG_REQUIRED, false, "N", "threads for the host part (default: all cores)"},
    {"runs", 0, CLI_ARG_REQUIRED, false, "N", "run N times; the time shown is the median"},
    CLI_OPTIONS_TOLERANCE,
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* Runs the folder's module `runs` times on its inputs; *median_ms receives the median run
 * time and `outputs` the last run's outputs (copies). */
static int replay_runs(const cli_build_request *br, const byocl_capture_folder *f, int runs,
                       double *build_ms, double *median_ms, byocl_tensor **outputs)
{
    const byocl_capture_manifest *m = f->manifest;
    byocl_compiled *c = NULL;
    byocl_executor *ex = NULL;
    byocl_error err;
    if (cli_build_model(br, f->module, &c, build_ms, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    int rc = CLI_EXIT_OK;
    double *ms = calloc((size_t)runs, sizeof *ms);
    if (!ms)
        rc = cli_fail("out of memory");
    if (rc == CLI_EXIT_OK && byocl_executor_new(c, &ex, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    for (int k = 0; k < m->n_inputs && rc == CLI_EXIT_OK; k++)
        if (byocl_executor_set_input(ex, m->inputs[k].name, f->inputs[k], &err) != BYOCL_OK)
            rc = cli_fail_error(&err);
    char label[300];
    snprintf(label, sizeof label, "running %s on target %s", m->symbol, br->target);
    if (rc == CLI_EXIT_OK && cli_run_executor(ex, runs, label, ms, &err) != BYOCL_OK)
        rc = cli_fail("%s: %s", m->symbol, err.msg);
    if (rc == CLI_EXIT_OK)
        *median_ms = cli_sort_median(ms, runs);
    for (int i = 0; i < m->n_outputs && rc == CLI_EXIT_OK; i++)
        if (byocl_executor_copy_output(ex, i, &outputs[i], &err) != BYOCL_OK)
            rc = cli_fail_error(&err);
    free(ms);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    return rc;
}

/* "[0, 3, 5, 1]": the position of flat index `i` in `shape`. */
static void index_str(const byocl_shape *shape, int64_t i, char *buf, size_t len)
{
    int64_t pos[BYOCL_MAX_RANK];
    for (int d = shape->rank - 1; d >= 0; d--) {
        pos[d] = shape->dims[d] ? i % shape->dims[d] : 0;
        i = shape->dims[d] ? i / shape->dims[d] : 0;
    }
    size_t at = (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < shape->rank && at < len; d++)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", d ? ", " : "", (long long)pos[d]);
    if (at < len)
        snprintf(buf + at, len - at, "]");
}

static int run_replay(const cli_command *cmd, const cli_args *args)
{
    const char *dir = args->positional[0];
    int runs = 1;
    double rtol, atol;
    const char *v = cli_value(cmd, args, "runs", NULL);
    if (v && !cli_parse_count(v, 1, 1000000, &runs))
        return cli_usage_error(cmd, "--runs %s: expected a count from 1 to 1000000", v);
    cli_build_request br = {.target = cli_value(cmd, args, "target", NULL)};
    v = cli_value(cmd, args, "threads", NULL);
    if (v && !cli_parse_count(v, 1, 4096, &br.threads))
        return cli_usage_error(cmd, "--threads %s: expected a count from 1 to 4096", v);
    int rc = cli_capture_tolerance(cmd, args, &rtol, &atol);
    if (rc == CLI_EXIT_OK && br.target)
        rc = cli_check_target(cmd, br.target);
    if (rc != CLI_EXIT_OK)
        return rc;

    byocl_capture_folder *f;
    byocl_error err;
    if (byocl_capture_read(dir, &f, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    const byocl_capture_manifest *m = f->manifest;
    if (!br.target) {
        br.target = m->target;
        if (cli_is_region_target(br.target) && !byocl_target_find(br.target))
            rc = cli_fail("%s was captured on target '%s', which is not registered: load its "
                          "plugin (byocl --plugin LIB replay ...) or pass --target host|ref",
                          dir, br.target);
    }
    if (rc == CLI_EXIT_OK)
        rc = cli_target_flags(cmd, args, &br);
    byocl_tensor **outputs = calloc((size_t)m->n_outputs + 1, sizeof *outputs);
    byocl_capture_diff *diffs = calloc((size_t)m->n_outputs + 1, sizeof *diffs);
    if (rc == CLI_EXIT_OK && (!outputs || !diffs))
        rc = cli_fail("out of memory");
    double build_ms = 0, median_ms = 0;
    if (rc == CLI_EXIT_OK)
        rc = replay_runs(&br, f, runs, &build_ms, &median_ms, outputs);
    int n_bad = 0, first = -1;
    for (int i = 0; i < m->n_outputs && rc == CLI_EXIT_OK; i++) {
        byocl_capture_compare(outputs[i], f->outputs[i], rtol, atol, &diffs[i]);
        if (!diffs[i].ok && n_bad++ == 0)
            first = i;
    }
    if (rc == CLI_EXIT_OK) {
        printf("replayed %s of %s on target %s: built in %.2f ms, ", m->symbol,
               *m->model ? m->model : "a model", br.target, build_ms);
        if (runs == 1)
            printf("ran in %.3f ms", median_ms);
        else
            printf("median of %d runs %.3f ms", runs, median_ms);
        printf(" (captured on %s: %.3f ms)\n", m->runner, m->last_ms);
        printf("compared with the outputs captured from %s (rtol %g, atol %g):\n",
               m->outputs_from, rtol, atol);
        cli_capture_print_diffs(diffs, m->n_outputs);
    }
    if (rc == CLI_EXIT_OK && n_bad > 0) {
        const byocl_capture_diff *d = &diffs[first];
        char where[256] = "";
        if (d->first_bad >= 0 && byocl_tensor_numel(outputs[first]) > d->first_bad) {
            char pos[160];
            index_str(byocl_tensor_shape(f->outputs[first]), d->first_bad, pos, sizeof pos);
            snprintf(where, sizeof where, "; first at %lld %s: got %.9g, captured %.9g",
                     (long long)d->first_bad, pos,
                     byocl_tensor_get(outputs[first], d->first_bad),
                     byocl_tensor_get(f->outputs[first], d->first_bad));
        }
        rc = cli_fail("%s on %s: %d of %d output%s beyond the tolerance; output %d (%s of @main): "
                      "%lld of %lld elements%s",
                      m->symbol, br.target, n_bad, m->n_outputs, m->n_outputs == 1 ? "" : "s",
                      first, m->outputs[first].node, (long long)d->n_bad,
                      (long long)byocl_tensor_numel(f->outputs[first]), where);
    }
    for (int i = 0; outputs && i < m->n_outputs; i++)
        byocl_tensor_unref(outputs[i]);
    free(outputs);
    free(diffs);
    byocl_capture_folder_free(f);
    return rc;
}

const cli_command cli_cmd_replay = {
    .name = "replay",
    .summary = "run one captured region alone and compare its outputs",
    .args_usage = "DIR/<symbol> [--target opencl|host|ref|T] [--runs N] [--rtol R] [--atol A]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"DIR/<symbol>"},
    .description =
        "Reads a region's capture folder (written by `byocl run --capture DIR`, `byocl\n"
        "bisect --capture DIR` or, in TVM, a byocl region with BYOCL_CAPTURE_DIR set),\n"
        "builds the region's standalone module for --target\n"
        "(default: the target it was captured on; opencl and a plugin's target partition\n"
        "it for that target, host and ref build it whole), runs it on the captured inputs\n"
        "and compares each output with the captured one: the largest absolute error, the\n"
        "relative L2 error ||got - captured|| / ||captured|| and the first flat index where\n"
        "|got - captured| > atol + rtol * |captured|. The time shown is the median of\n"
        "--runs N runs (the build is not timed).\n"
        "\n"
        "Exits 1 when an output is beyond the tolerance (default rtol 1e-4, atol 1e-5),\n"
        "naming the first such output, its node in @main, and the first element's values.\n"
        "See docs/debugging-regions.md.\n",
    .options = replay_options,
    .examples = "  byocl run builtin:seed --random-inputs --target opencl --capture cap\n"
                "  byocl replay cap/opencl_main_0\n"
                "  byocl replay cap/opencl_main_0 --target ref --runs 5\n",
    .run = run_replay,
};
