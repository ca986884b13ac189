/* byocl run-stages: the stages that `byocl split` wrote, run with their wiring on the
 * reference executor or each compiled for a target of its own: one item at a time, many
 * streamed through the stages concurrently (--pipeline), or across the ranks of an MPI
 * job (--mpi, run_stages_mpi.c). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "byocl/stages_mpi.h"
#include "cli_progress.h"
#include "cli_report.h"
#include "run_stages.h"

static const cli_option run_stages_options[] = {
    CLI_OPTION_INPUT,
    CLI_OPTION_RANDOM_INPUTS,
    {"inputs", 0, CLI_ARG_REQUIRED, false, "DIR",
     "one item per .npy/.npz file of DIR, in name order (an .npz: the inputs by name)"},
    {"count", 0, CLI_ARG_REQUIRED, false, "N",
     "run N items (item i's random inputs from the seed plus i)"},
    {"output-dir", 0, CLI_ARG_REQUIRED, false, "DIR",
     "write output j to DIR/output_<j>.npy; of many items, DIR/item_<i>/output_<j>.npy"},
    {"target", 0, CLI_ARG_REQUIRED, false, "T",
     "compile every stage for T: host, ref, or a region target with the rest on the host"},
    CLI_OPTION_DEVICE,
    CLI_OPTION_TARGET_OPT,
    {"threads", 0, CLI_ARG_REQUIRED, false, "N", "threads of each compiled stage"},
    {"stage", 0, CLI_ARG_REQUIRED, true, "K:KEY=V,...",
     "place stage K apart: target=T, device=D, threads=N (repeatable)"},
    {"pipeline", 0, CLI_ARG_NONE, false, NULL,
     "stream the items through the stages concurrently, one worker per stage"},
    {"depth", 0, CLI_ARG_REQUIRED, false, "D",
     "with --pipeline or --mpi: items each queue between stages holds (default: 2)"},
    {"mpi", 0, CLI_ARG_NONE, false, NULL,
     "run under mpirun: stage k on rank k, the values between them as MPI messages"},
    {"ranks", 0, CLI_ARG_REQUIRED, false, "R,R,...",
     "with --mpi: the rank of each stage (ascending; consecutive stages may share one)"},
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* "threads=2": one KEY=VALUE of --stage K:..., applied to stage k's request. */
static int apply_stage_setting(const cli_command *cmd, const char *spec, char *setting,
                               cli_build_request *req)
{
    char *eq = strchr(setting, '=');
    if (!eq || eq == setting || !eq[1])
        return cli_usage_error(cmd, "--stage %s: '%s' is not KEY=VALUE (keys: target, device, "
                                    "threads)",
                               spec, setting);
    *eq = '\0';
    const char *value = eq + 1;
    if (strcmp(setting, "target") == 0) {
        int rc = cli_check_target(cmd, value);
        if (rc != CLI_EXIT_OK)
            return rc;
        req->target = value;
    } else if (strcmp(setting, "device") == 0) {
        req->device = value;
    } else if (strcmp(setting, "threads") == 0) {
        if (!cli_parse_count(value, 1, 4096, &req->threads))
            return cli_usage_error(cmd, "--stage %s: threads=%s: expected a count from 1 to 4096",
                                   spec, value);
    } else {
        return cli_usage_error(cmd, "--stage %s: unknown key '%s' (keys: target, device, "
                                    "threads)",
                               spec, setting);
    }
    return CLI_EXIT_OK;
}

/* --stage K:target=T,device=D,threads=N: stage K's own placement. The strings stay in
 * `spec_copy`, which the caller frees after the run. */
static int parse_stage_flag(const cli_command *cmd, const char *spec, char *spec_copy,
                            stage_plan *plan)
{
    char *colon = strchr(spec_copy, ':');
    int k;
    if (!colon || colon == spec_copy)
        return cli_usage_error(cmd, "--stage %s: expected K:KEY=VALUE[,KEY=VALUE...], e.g. "
                                    "1:target=opencl,device=0",
                               spec);
    *colon = '\0';
    if (!cli_parse_count(spec_copy, 0, plan->n - 1, &k))
        return cli_usage_error(cmd, "--stage %s: no stage %s (the stages are 0 to %d)", spec,
                               spec_copy, plan->n - 1);
    int rc = CLI_EXIT_OK;
    for (char *setting = strtok(colon + 1, ","); setting && rc == CLI_EXIT_OK;
         setting = strtok(NULL, ","))
        rc = apply_stage_setting(cmd, spec, setting, &plan->builds[k]);
    return rc;
}

int stage_plan_make(const cli_command *cmd, const cli_args *args, int n, stage_plan *plan)
{
    int n_stage_flags = cli_count(cmd, args, "stage");
    *plan = (stage_plan){.n = n, .builds = calloc((size_t)n, sizeof *plan->builds),
                         .labels = calloc((size_t)n, sizeof *plan->labels),
                         .copies = calloc((size_t)n_stage_flags + 1, sizeof *plan->copies)};
    if (!plan->builds || !plan->labels || !plan->copies)
        return cli_fail("out of memory");
    cli_build_request all = {.target = cli_value(cmd, args, "target", NULL)};
    plan->compiled = all.target || n_stage_flags > 0;
    int rc = cli_check_target(cmd, all.target);
    if (rc == CLI_EXIT_OK && !all.target && cli_value(cmd, args, "device", NULL))
        rc = cli_usage_error(cmd, "--device goes with --target T (each stage's: --stage "
                                  "K:device=D)");
    if (rc == CLI_EXIT_OK && all.target)
        rc = cli_target_flags(cmd, args, &all);
    const char *v = cli_value(cmd, args, "threads", NULL);
    if (rc == CLI_EXIT_OK && v && !cli_parse_count(v, 1, 4096, &all.threads))
        rc = cli_usage_error(cmd, "--threads %s: expected a count from 1 to 4096", v);
    if (rc == CLI_EXIT_OK && v && !plan->compiled)
        rc = cli_usage_error(cmd, "--threads goes with --target or --stage (the reference "
                                  "executor runs on one thread)");
    if (!all.target) /* a stage that --stage places alone; the others stay on the host */
        all.target = "host";
    /* A cut through a region annotated by hand leaves each side's annotations open at the
     * cut: completing them restores the region's boundary on both sides. */
    all.complete_annotations = true;
    all.target_opts = cli_values(cmd, args, "target-opt");
    all.n_target_opts = cli_count(cmd, args, "target-opt");
    for (int k = 0; k < n; k++)
        plan->builds[k] = all;
    for (int i = 0; i < n_stage_flags && rc == CLI_EXIT_OK; i++) {
        const char *spec = cli_value_at(cmd, args, "stage", i);
        if (!(plan->copies[i] = strdup(spec)))
            return cli_fail("out of memory");
        rc = parse_stage_flag(cmd, spec, plan->copies[i], plan);
    }
    for (int k = 0; k < n && rc == CLI_EXIT_OK; k++) {
        cli_build_request *b = &plan->builds[k];
        if (b->device && !cli_is_region_target(b->target))
            rc = cli_usage_error(cmd, "stage %d: a device goes with a region target, not %s", k,
                                 b->target);
        snprintf(plan->labels[k], sizeof plan->labels[k], "compiling stage %d for target %s",
                 k, b->target);
        b->label = plan->labels[k];
    }
    return rc;
}

void stage_plan_free(stage_plan *plan)
{
    for (int i = 0; plan->copies && plan->copies[i]; i++)
        free(plan->copies[i]);
    free(plan->copies);
    free(plan->builds);
    free(plan->labels);
    memset(plan, 0, sizeof *plan);
}

int stage_compile(const byocl_stages *s, const stage_plan *plan, int k, const char *prefix,
                  byocl_compiled **compiled, byocl_executor **executor)
{
    byocl_error err;
    double ms = 0;
    byocl_status st = cli_build_model(&plan->builds[k], byocl_stages_module(s, k), compiled,
                                      &ms, &err);
    if (st == BYOCL_OK)
        st = byocl_executor_new(*compiled, executor, &err);
    if (st != BYOCL_OK) {
        byocl_error_prefix(&err, "stage %d: ", k);
        return cli_fail_error(&err);
    }
    printf("%sbuilt stage %d for target %s in %.2f ms\n", prefix, k, plan->builds[k].target,
           ms);
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ items */

static bool is_tensor_file(const char *name)
{
    const char *ext = strrchr(name, '.');
    return ext && (strcasecmp(ext, ".npy") == 0 || strcasecmp(ext, ".npz") == 0);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .npy/.npz files of dir, sorted (malloc'ed, each and the array). */
static int list_item_files(const char *dir, char ***out, int *n_out)
{
    DIR *d = opendir(dir);
    if (!d)
        return cli_fail("--inputs %s: cannot read the folder: %s", dir, strerror(errno));
    char **names = NULL;
    int n = 0, cap = 0, rc = CLI_EXIT_OK;
    for (struct dirent *e; rc == CLI_EXIT_OK && (e = readdir(d));) {
        if (e->d_name[0] == '.' || !is_tensor_file(e->d_name))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(names, (size_t)cap * sizeof *names);
            if (!grown) {
                rc = cli_fail("out of memory");
                break;
            }
            names = grown;
        }
        if (!(names[n] = strdup(e->d_name)))
            rc = cli_fail("out of memory");
        else
            n++;
    }
    closedir(d);
    if (rc == CLI_EXIT_OK && n == 0)
        rc = cli_fail("--inputs %s: no .npy or .npz files there (one file per item)", dir);
    if (rc == CLI_EXIT_OK)
        qsort(names, (size_t)n, sizeof *names, compare_names);
    *out = names;
    *n_out = n;
    return rc;
}

static void free_names(char **names, int n)
{
    for (int i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

int stage_items_count(const cli_command *cmd, const cli_args *args, int *n)
{
    const char *dir = cli_value(cmd, args, "inputs", NULL);
    const char *count = cli_value(cmd, args, "count", NULL);
    *n = 1;
    if (dir && (count || cli_count(cmd, args, "input") || cli_count(cmd, args, "random-inputs")))
        return cli_usage_error(cmd, "--inputs DIR gives every item's inputs: it goes without "
                                    "--input, --random-inputs and --count");
    if (count && !cli_parse_count(count, 1, INT_MAX, n))
        return cli_usage_error(cmd, "--count %s: expected a count of items from 1 to %d",
                               count, INT_MAX);
    if (!dir)
        return CLI_EXIT_OK;
    char **names;
    int rc = list_item_files(dir, &names, n);
    free_names(names, *n);
    return rc;
}

/* Binds item i's inputs into `in` (initialized here: free it in every case). */
static int bind_item(const stage_source *src, int item, cli_inputs *in)
{
    int rc = cli_inputs_init(in, byocl_stages_num_inputs(src->s), src->owner, "input");
    for (int i = 0; i < in->n && rc == CLI_EXIT_OK; i++) {
        in->names[i] = byocl_stages_input_name(src->s, i);
        in->types[i] = byocl_stages_input_type(src->s, i);
    }
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *owner = src->owner, *hint = "give each with --input NAME=FILE, or pass "
                                            "--random-inputs";
    char path[4200], where[4300];
    if (src->dir) {
        snprintf(path, sizeof path, "%s/%s", src->dir, src->files[item]);
        snprintf(where, sizeof where, "give each in %s", path);
        rc = cli_bind_inputs_file(in, path);
        owner = path;
        hint = where;
    } else {
        rc = cli_bind_inputs(src->cmd, src->args, in, src->random, src->seed + (uint64_t)item);
    }
    int n_unbound;
    char *list = rc == CLI_EXIT_OK ? cli_inputs_list(in, false, &n_unbound) : NULL;
    if (list && n_unbound > 0)
        rc = cli_fail("%s has %d unbound input%s: %s; %s", owner, n_unbound,
                      n_unbound == 1 ? "" : "s", list, hint);
    free(list);
    return rc;
}

int stage_source_open(const cli_command *cmd, const cli_args *args, const byocl_stages *s,
                      const char *dir, stage_source *src)
{
    *src = (stage_source){.cmd = cmd, .args = args, .s = s,
                          .dir = cli_value(cmd, args, "inputs", NULL)};
    snprintf(src->owner, sizeof src->owner, "the split model in %s", dir);
    int rc = cli_check_input_flags(cmd, args, &src->random, &src->seed);
    if (rc == CLI_EXIT_OK)
        rc = stage_items_count(cmd, args, &src->n);
    int n_files = 0;
    if (rc == CLI_EXIT_OK && src->dir)
        rc = list_item_files(src->dir, &src->files, &n_files);
    if (rc == CLI_EXIT_OK && src->dir)
        src->n = n_files;
    cli_inputs first;
    if (rc == CLI_EXIT_OK) {
        rc = bind_item(src, 0, &first);
        cli_inputs_free(&first);
    }
    return rc;
}

void stage_source_close(stage_source *src)
{
    free_names(src->files, src->dir ? src->n : 0);
    memset(src, 0, sizeof *src);
}

byocl_status stage_source_inputs(void *user, int item, byocl_tensor **inputs, byocl_error *err)
{
    const stage_source *src = user;
    /* The binding prints its messages (cli_fail); they become this error instead. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    FILE *before = cli_set_error_stream(f);
    cli_inputs in;
    int rc = bind_item(src, item, &in);
    cli_set_error_stream(before == stderr ? NULL : before);
    if (f)
        fclose(f);
    byocl_status st = BYOCL_OK;
    if (rc == CLI_EXIT_OK) {
        for (int i = 0; i < in.n; i++) { /* the references move to the caller */
            inputs[i] = in.values[i];
            in.values[i] = NULL;
        }
    } else {
        const char *msg = text ? text : "cannot bind the inputs";
        if (strncmp(msg, "byocl: error: ", 14) == 0)
            msg += 14;
        st = byocl_error_set(err, BYOCL_ERR_IO, "%.*s", (int)strcspn(msg, "\n"), msg);
    }
    cli_inputs_free(&in);
    free(text);
    return st;
}

/* ------------------------------------------------------------------ reports */

/* "784.0 KiB": a byte count as people read it. */
static void format_bytes(int64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%lld bytes", (long long)bytes);
    else
        snprintf(buf, len, "%.1f %s", v, units[u]);
}

/* ", 784.0 KiB to later stages": what leaves stage k per item (nothing for the last). */
static void print_cut(const byocl_stages *s, int k)
{
    if (k < byocl_stages_count(s) - 1) {
        char bytes[64];
        format_bytes(byocl_stages_cut_bytes(s, k), bytes, sizeof bytes);
        printf("; %s per item to later stages", bytes);
    }
}

void stage_print_stream(const byocl_stages *s, const stage_plan *plan, const char *dir,
                        const char *how, int n_items, const byocl_pipeline_stats *stats,
                        const int *rank_of_stage)
{
    int n = byocl_stages_count(s);
    printf("%s %d item%s through %d stage%s of %s in %.2f ms: %.2f items/s\n", how, n_items,
           n_items == 1 ? "" : "s", n, n == 1 ? "" : "s", dir, stats->total_ms,
           n_items / (stats->total_ms * 1e-3));
    double median = cli_sort_median(stats->latency_ms, n_items);
    printf("  latency per item: min %.2f ms, median %.2f ms, max %.2f ms\n",
           stats->latency_ms[0], median, stats->latency_ms[n_items - 1]);
    for (int k = 0; k < n; k++) {
        printf("  stage %d: busy %.2f ms (%.0f%% of the time)", k, stats->busy_ms[k],
               100.0 * stats->busy_ms[k] / stats->total_ms);
        if (rank_of_stage)
            printf(" on rank %d", rank_of_stage[k]);
        if (plan->compiled)
            printf(" (target %s)", plan->builds[k].target);
        print_cut(s, k);
        printf("\n");
    }
}

int stage_write_items(const char *out_dir, byocl_tensor ***outputs, const int *n_outputs,
                      int n_items)
{
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < n_items && rc == CLI_EXIT_OK; i++) {
        char item_dir[4200];
        snprintf(item_dir, sizeof item_dir, "%s/item_%d", out_dir, i);
        rc = cli_write_outputs(item_dir, outputs[i], n_outputs[i]);
    }
    return rc;
}

/* ------------------------------------------------------------------ one process */

/* When each stage finished, for the per-stage times; the stages done, for the progress. */
typedef struct stage_clock {
    double *done_at;
    cli_progress *progress;
} stage_clock;

static void stage_done(void *user, int k)
{
    stage_clock *clock = user;
    clock->done_at[k] = cli_seconds();
    cli_progress_set(clock->progress, k + 1);
}

/* One item, the stages one after the other: their times and the outputs. */
static int run_one(const cli_args *args, const cli_command *cmd, const char *dir,
                   const byocl_stages *s, const stage_plan *plan,
                   byocl_executor *const *executors, stage_source *src)
{
    int n = byocl_stages_count(s), n_inputs = byocl_stages_num_inputs(s);
    stage_clock clock = {.done_at = calloc((size_t)n, sizeof *clock.done_at)};
    byocl_tensor **inputs = calloc((size_t)n_inputs + 1, sizeof *inputs);
    if (!clock.done_at || !inputs) {
        free(clock.done_at);
        free(inputs);
        return cli_fail("out of memory");
    }
    byocl_tensor **outputs = NULL;
    int n_outputs = 0;
    byocl_error err;
    char label[4200];
    snprintf(label, sizeof label, "running the stages of %s", dir);
    byocl_status st = stage_source_inputs(src, 0, inputs, &err);
    clock.progress = cli_progress_start(label, n, false);
    double t0 = cli_seconds();
    if (st == BYOCL_OK)
        st = byocl_stages_run_on(s, plan->compiled ? executors : NULL, inputs, n_inputs,
                                 stage_done, &clock, &outputs, &n_outputs, &err);
    byocl_tensors_free(inputs, n_inputs);
    cli_progress_finish(clock.progress, st == BYOCL_OK);
    int rc = CLI_EXIT_OK;
    if (st != BYOCL_OK) {
        rc = cli_fail_error(&err);
    } else {
        printf("ran %d stage%s of %s %s in %.2f ms\n", n, n == 1 ? "" : "s", dir,
               plan->compiled ? "compiled" : "on the ref executor",
               (clock.done_at[n - 1] - t0) * 1e3);
        for (int k = 0; k < n; k++) {
            printf("  stage %d: %.2f ms", k,
                   (clock.done_at[k] - (k ? clock.done_at[k - 1] : t0)) * 1e3);
            if (plan->compiled)
                printf(" (target %s)", plan->builds[k].target);
            print_cut(s, k);
            printf("\n");
        }
        for (int i = 0; i < n_outputs; i++)
            cli_print_summary(i, outputs[i]);
        const char *out_dir = cli_value(cmd, args, "output-dir", NULL);
        if (out_dir)
            rc = cli_write_outputs(out_dir, outputs, n_outputs);
    }
    if (outputs)
        byocl_tensors_free(outputs, n_outputs);
    free(clock.done_at);
    return rc;
}

/* Item after item, the stages one after the other, measured as the pipeline is. */
static byocl_status run_in_turn(const byocl_stages *s, byocl_executor *const *executors,
                                stage_source *src, byocl_tensor ****outputs, int **n_outputs,
                                byocl_pipeline_stats *stats, byocl_error *err)
{
    int n = byocl_stages_count(s), n_inputs = byocl_stages_num_inputs(s);
    stage_clock clock = {.done_at = calloc((size_t)n, sizeof *clock.done_at)};
    byocl_tensor **inputs = calloc((size_t)n_inputs + 1, sizeof *inputs);
    *outputs = calloc((size_t)src->n, sizeof **outputs);
    *n_outputs = calloc((size_t)src->n, sizeof **n_outputs);
    stats->latency_ms = calloc((size_t)src->n, sizeof *stats->latency_ms);
    stats->busy_ms = calloc((size_t)n, sizeof *stats->busy_ms);
    byocl_status st = BYOCL_OK;
    if (!clock.done_at || !inputs || !*outputs || !*n_outputs || !stats->latency_ms ||
        !stats->busy_ms)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    double start = cli_seconds();
    for (int i = 0; i < src->n && st == BYOCL_OK; i++) {
        st = stage_source_inputs(src, i, inputs, err);
        double t0 = cli_seconds();
        if (st == BYOCL_OK)
            st = byocl_stages_run_on(s, executors, inputs, n_inputs, stage_done, &clock,
                                     &(*outputs)[i], &(*n_outputs)[i], err);
        for (int j = 0; j < n_inputs; j++) {
            byocl_tensor_unref(inputs[j]);
            inputs[j] = NULL;
        }
        if (st != BYOCL_OK) {
            byocl_error_prefix(err, "item %d: ", i);
            break;
        }
        stats->latency_ms[i] = (clock.done_at[n - 1] - t0) * 1e3;
        for (int k = 0; k < n; k++)
            stats->busy_ms[k] += (clock.done_at[k] - (k ? clock.done_at[k - 1] : t0)) * 1e3;
    }
    stats->total_ms = (cli_seconds() - start) * 1e3;
    free(clock.done_at);
    free(inputs);
    return st;
}

/* Many items, one at a time or streamed (--pipeline): throughput, latency, busy shares;
 * --output-dir gets DIR/item_<i>/output_<j>.npy. */
static int run_items(const cli_command *cmd, const cli_args *args, const char *dir,
                     const byocl_stages *s, const stage_plan *plan,
                     byocl_executor *const *executors, stage_source *src, bool pipelined,
                     int depth)
{
    byocl_tensor ***outputs = NULL;
    int *n_outputs = NULL;
    byocl_pipeline_stats stats = {0};
    byocl_error err;
    byocl_executor *const *used = plan->compiled ? executors : NULL;
    byocl_status st = pipelined ? byocl_stages_pipeline(s, used, depth, stage_source_inputs,
                                                        src, src->n, &outputs, &n_outputs,
                                                        &stats, &err)
                                : run_in_turn(s, used, src, &outputs, &n_outputs, &stats, &err);
    int rc = st == BYOCL_OK ? CLI_EXIT_OK : cli_fail_error(&err);
    if (rc == CLI_EXIT_OK) {
        char how[64];
        snprintf(how, sizeof how, pipelined ? "streamed (queues of %d)" : "ran one at a time",
                 depth);
        stage_print_stream(s, plan, dir, how, src->n, &stats, NULL);
    }
    const char *out_dir = cli_value(cmd, args, "output-dir", NULL);
    if (rc == CLI_EXIT_OK && out_dir)
        rc = stage_write_items(out_dir, outputs, n_outputs, src->n);
    for (int i = 0; outputs && i < src->n; i++)
        if (outputs[i])
            byocl_tensors_free(outputs[i], n_outputs[i]);
    free(outputs);
    free(n_outputs);
    free(stats.latency_ms);
    free(stats.busy_ms);
    return rc;
}

/* The checks of the flags that choose the mode: --pipeline, --mpi, --depth, --ranks. */
static int check_mode_flags(const cli_command *cmd, const cli_args *args, int *depth)
{
    bool pipelined = cli_count(cmd, args, "pipeline") > 0, mpi = cli_count(cmd, args, "mpi") > 0;
    const char *v = cli_value(cmd, args, "depth", NULL);
    *depth = 2;
    if (pipelined && mpi)
        return cli_usage_error(cmd, "--pipeline goes without --mpi (the ranks of an MPI job "
                                    "always stream the items)");
    if (v && !pipelined && !mpi)
        return cli_usage_error(cmd, "--depth goes with --pipeline or --mpi");
    if (v && !cli_parse_count(v, 1, 4096, depth))
        return cli_usage_error(cmd, "--depth %s: expected a count from 1 to 4096", v);
    if (cli_value(cmd, args, "ranks", NULL) && !mpi)
        return cli_usage_error(cmd, "--ranks goes with --mpi");
    return CLI_EXIT_OK;
}

static int run_run_stages(const cli_command *cmd, const cli_args *args)
{
    bool random;
    uint64_t seed;
    int depth, n_items = 0;
    int rc = cli_check_input_flags(cmd, args, &random, &seed);
    if (rc == CLI_EXIT_OK)
        rc = check_mode_flags(cmd, args, &depth);
    if (rc == CLI_EXIT_OK && cli_count(cmd, args, "mpi"))
        return run_stages_mpi(cmd, args, args->positional[0], depth);
    if (rc == CLI_EXIT_OK)
        rc = stage_items_count(cmd, args, &n_items);
    const char *out_dir = cli_value(cmd, args, "output-dir", NULL);
    if (rc == CLI_EXIT_OK && out_dir)
        rc = cli_check_dirs(out_dir);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *dir = args->positional[0];
    byocl_stages *s = NULL;
    byocl_error err;
    if (byocl_stages_read(dir, &s, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    int n = byocl_stages_count(s);
    stage_plan plan;
    rc = stage_plan_make(cmd, args, n, &plan);
    byocl_compiled **compiled = calloc((size_t)n, sizeof *compiled);
    byocl_executor **executors = calloc((size_t)n, sizeof *executors);
    if (rc == CLI_EXIT_OK && (!compiled || !executors))
        rc = cli_fail("out of memory");
    stage_source src;
    int src_rc = stage_source_open(cmd, args, s, dir, &src);
    rc = rc == CLI_EXIT_OK ? src_rc : rc;
    for (int k = 0; k < n && rc == CLI_EXIT_OK && plan.compiled; k++)
        rc = stage_compile(s, &plan, k, "", &compiled[k], &executors[k]);
    bool pipelined = cli_count(cmd, args, "pipeline") > 0;
    bool many = pipelined || src.dir || src.n > 1;
    if (rc == CLI_EXIT_OK && many)
        rc = run_items(cmd, args, dir, s, &plan, executors, &src, pipelined, depth);
    else if (rc == CLI_EXIT_OK)
        rc = run_one(args, cmd, dir, s, &plan, executors, &src);
    for (int k = 0; k < n; k++) {
        byocl_executor_free(executors ? executors[k] : NULL);
        byocl_compiled_free(compiled ? compiled[k] : NULL);
    }
    free(executors);
    free(compiled);
    stage_plan_free(&plan);
    stage_source_close(&src);
    byocl_stages_free(s);
    return rc;
}

const cli_command cli_cmd_run_stages = {
    .name = "run-stages",
    .summary = "run the stages that `byocl split` wrote, in one process or across MPI ranks",
    .args_usage = "DIR [--input NAME=FILE]... [--random-inputs[=SEED] [--count N]]\n"
                  "                        [--inputs DIR] [--output-dir DIR]\n"
                  "                        [--target T [--device D] [--threads N]]\n"
                  "                        [--stage K:target=T,device=D,threads=N]...\n"
                  "                        [--pipeline [--depth D]] [--mpi [--ranks R,...]]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"DIR"},
    .description =
        "Reads DIR/manifest.json and the stage modules that `byocl split` wrote, runs\n"
        "the stages one after the other on the reference executor, each fed from the\n"
        "model's inputs and earlier stages' outputs as the manifest wires them, and\n"
        "prints the last stage's outputs (the original model's) as `byocl run` does, with\n"
        "each stage's run time and the bytes that cross each cut.\n"
        "\n"
        "The inputs are the original @main's parameters: give each with --input (a\n"
        "tensor file of its dtype and shape), or pass --random-inputs, which fills them\n"
        "exactly as `byocl run --random-inputs` fills the original model's, so both runs\n"
        "can be compared. Many items: --count N (item i's random inputs from the seed\n"
        "plus i), or --inputs DIR, one item per .npy/.npz file in name order (an .npz\n"
        "holds the inputs by name; an .npy the one input of a model that has one).\n"
        "Many items report throughput, latency per item and each stage's busy time;\n"
        "--output-dir then gets DIR/item_<i>/output_<j>.npy.\n"
        "\n"
        "--target T compiles every stage instead, as `byocl run --target T` compiles a\n"
        "model (a region target's regions offloaded, the rest on the host), with\n"
        "--device, --target-opt and --threads for each; --stage K:target=T,device=D,\n"
        "threads=N places stage K apart (the stages it does not name: --target, else host).\n"
        "\n"
        "--pipeline streams the items through the stages concurrently, one worker thread\n"
        "per stage, queues of --depth items between them; the outputs keep input order.\n"
        "\n"
        "--mpi runs under mpirun, stage k on rank k (--ranks R0,R1,... places them\n"
        "otherwise: ascending, consecutive stages may share a rank). The inputs enter at\n"
        "rank 0; every value a later rank reads travels as an MPI message of exactly its\n"
        "tensor's bytes, received ahead and sent while the next item computes; the last\n"
        "rank prints the report and writes --output-dir. Every rank needs DIR (the same\n"
        "split model: the ranks compare what they read before anything runs). A rank\n"
        "that fails stops the job: before the stream, every rank exits with the failing\n"
        "ranks' messages; during it, the rank names stage, rank and item and ends the job\n"
        "(MPI_Abort). docs/split-and-dot.md shows a run across hosts.\n",
    .options = run_stages_options,
    .examples = "  byocl split builtin:resnet18 --parts 3 -o r18-stages\n"
                "  byocl run-stages r18-stages --random-inputs --output-dir out\n"
                "  byocl run-stages r18-stages --input data=image.npy\n"
                "  byocl run-stages r18-stages --random-inputs --target host --stage "
                "1:target=opencl\n"
                "  byocl run-stages r18-stages --random-inputs --count 64 --target host "
                "--threads 1 --pipeline\n"
                "  byocl run-stages r18-stages --inputs images/ --target host --pipeline\n"
                "  mpirun -np 3 byocl run-stages r18-stages --mpi --random-inputs --count 64 "
                "--target host\n",
    .run = run_run_stages,
};
