/* byocl run-stages: the stages that `byocl split` wrote, run in order with their wiring, on
 * the reference executor or each compiled for a target of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/split.h"
#include "cli.h"
#include "cli_build.h"
#include "cli_inputs.h"
#include "cli_progress.h"
#include "cli_report.h"

static const cli_option run_stages_options[] = {
    CLI_OPTION_INPUT,
    CLI_OPTION_RANDOM_INPUTS,
    CLI_OPTION_OUTPUT_DIR,
    {"target", 0, CLI_ARG_REQUIRED, false, "T",
     "compile every stage for T: host, ref, or a region target with the rest on the host"},
    CLI_OPTION_DEVICE,
    CLI_OPTION_TARGET_OPT,
    {"threads", 0, CLI_ARG_REQUIRED, false, "N", "threads of each compiled stage"},
    {"stage", 0, CLI_ARG_REQUIRED, true, "K:KEY=V,...",
     "place stage K apart: target=T, device=D, threads=N (repeatable)"},
    {"pipeline", 0, CLI_ARG_REQUIRED, false, "N",
     "stream N items through the stages concurrently, one worker per stage"},
    {"depth", 0, CLI_ARG_REQUIRED, false, "D",
     "with --pipeline: items each queue between stages holds (default: 2)"},
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* How each stage is compiled: a build request per stage; `compiled` false when every stage
 * runs on the reference executor (no --target, no --stage). */
typedef struct stage_plan {
    int n;
    cli_build_request *builds;
    char (*labels)[64];
    bool compiled;
} stage_plan;

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

/* The stage plan of the command line: --target, --device, --target-opt and --threads for
 * every stage, then each --stage. */
static int plan_stages(const cli_command *cmd, const cli_args *args, int n, stage_plan *plan,
                       char ***copies)
{
    int n_stage_flags = cli_count(cmd, args, "stage");
    *plan = (stage_plan){.n = n, .builds = calloc((size_t)n, sizeof *plan->builds),
                         .labels = calloc((size_t)n, sizeof *plan->labels)};
    *copies = calloc((size_t)n_stage_flags + 1, sizeof **copies);
    if (!plan->builds || !plan->labels || !*copies)
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
        if (!((*copies)[i] = strdup(spec)))
            return cli_fail("out of memory");
        rc = parse_stage_flag(cmd, spec, (*copies)[i], plan);
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

/* Compiles every stage of the plan and makes an executor for each. */
static int compile_stages(const byocl_stages *s, const stage_plan *plan,
                          byocl_compiled **compiled, byocl_executor **executors)
{
    for (int k = 0; k < plan->n; k++) {
        byocl_error err;
        double ms = 0;
        byocl_status st = cli_build_model(&plan->builds[k], byocl_stages_module(s, k),
                                          &compiled[k], &ms, &err);
        if (st == BYOCL_OK)
            st = byocl_executor_new(compiled[k], &executors[k], &err);
        if (st != BYOCL_OK) {
            byocl_error_prefix(&err, "stage %d: ", k);
            return cli_fail_error(&err);
        }
        printf("built stage %d for target %s in %.2f ms\n", k, plan->builds[k].target, ms);
    }
    return CLI_EXIT_OK;
}

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

static int run_stages(const cli_command *cmd, const cli_args *args, const char *dir,
                      const byocl_stages *s, const stage_plan *plan,
                      byocl_executor *const *executors, cli_inputs *in)
{
    int n = byocl_stages_count(s);
    stage_clock clock = {.done_at = calloc((size_t)n, sizeof *clock.done_at)};
    if (!clock.done_at)
        return cli_fail("out of memory");
    byocl_tensor **outputs = NULL;
    int n_outputs = 0;
    byocl_error err;
    char label[4200];
    snprintf(label, sizeof label, "running the stages of %s", dir);
    clock.progress = cli_progress_start(label, n, false);
    double t0 = cli_seconds();
    byocl_status st = byocl_stages_run_on(s, plan->compiled ? executors : NULL, in->values,
                                          in->n, stage_done, &clock, &outputs, &n_outputs,
                                          &err);
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

/* Item i's inputs: the command line's, bound afresh (distinct tensors per item), random
 * ones from seed + i. */
static int item_inputs(const cli_command *cmd, const cli_args *args, const byocl_stages *s,
                       const char *owner, bool random, uint64_t seed, cli_inputs *in)
{
    int rc = cli_inputs_init(in, byocl_stages_num_inputs(s), owner, "input");
    for (int i = 0; i < in->n && rc == CLI_EXIT_OK; i++) {
        in->names[i] = byocl_stages_input_name(s, i);
        in->types[i] = byocl_stages_input_type(s, i);
    }
    if (rc == CLI_EXIT_OK)
        rc = cli_bind_inputs(cmd, args, in, random, seed);
    return rc;
}

/* --pipeline N: N items (item i's random inputs from seed + i) streamed through the
 * stages, with throughput, latency and each stage's busy share; --output-dir gets
 * DIR/item_<i>/output_<j>.npy. */
static int run_pipeline(const cli_command *cmd, const cli_args *args, const char *dir,
                        const byocl_stages *s, const stage_plan *plan,
                        byocl_executor *const *executors, const char *owner, bool random,
                        uint64_t seed, int n_items, int depth)
{
    cli_inputs *items = calloc((size_t)n_items, sizeof *items);
    byocl_tensor ***values = calloc((size_t)n_items, sizeof *values);
    if (!items || !values) {
        free(items);
        free(values);
        return cli_fail("out of memory");
    }
    int rc = CLI_EXIT_OK, made = 0;
    for (; made < n_items && rc == CLI_EXIT_OK; made++) {
        rc = item_inputs(cmd, args, s, owner, random, seed + (uint64_t)made, &items[made]);
        values[made] = items[made].values;
    }
    byocl_tensor ***outputs = NULL;
    int *n_outputs = NULL;
    byocl_pipeline_stats stats = {0};
    byocl_error err;
    int n = byocl_stages_count(s);
    if (rc == CLI_EXIT_OK &&
        byocl_stages_pipeline(s, plan->compiled ? executors : NULL, depth,
                              (byocl_tensor *const *const *)values,
                              byocl_stages_num_inputs(s), n_items, &outputs, &n_outputs, &stats,
                              &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    if (rc == CLI_EXIT_OK) {
        printf("streamed %d item%s through %d stage%s of %s (queues of %d) in %.2f ms: %.2f "
               "items/s\n",
               n_items, n_items == 1 ? "" : "s", n, n == 1 ? "" : "s", dir, depth,
               stats.total_ms, n_items / (stats.total_ms * 1e-3));
        double median = cli_sort_median(stats.latency_ms, n_items);
        printf("  latency per item: min %.2f ms, median %.2f ms, max %.2f ms\n",
               stats.latency_ms[0], median, stats.latency_ms[n_items - 1]);
        for (int k = 0; k < n; k++) {
            printf("  stage %d: busy %.2f ms (%.0f%% of the time)", k, stats.busy_ms[k],
                   100.0 * stats.busy_ms[k] / stats.total_ms);
            if (plan->compiled)
                printf(" (target %s)", plan->builds[k].target);
            printf("\n");
        }
    }
    const char *out_dir = cli_value(cmd, args, "output-dir", NULL);
    for (int i = 0; outputs && i < n_items && rc == CLI_EXIT_OK && out_dir; i++) {
        char item_dir[4200];
        snprintf(item_dir, sizeof item_dir, "%s/item_%d", out_dir, i);
        rc = cli_make_dirs(item_dir);
        if (rc == CLI_EXIT_OK)
            rc = cli_write_outputs(item_dir, outputs[i], n_outputs[i]);
    }
    for (int i = 0; outputs && i < n_items; i++)
        byocl_tensors_free(outputs[i], n_outputs[i]);
    free(outputs);
    free(n_outputs);
    free(stats.latency_ms);
    free(stats.busy_ms);
    for (int i = 0; i < made; i++)
        cli_inputs_free(&items[i]);
    free(items);
    free(values);
    return rc;
}

static int run_run_stages(const cli_command *cmd, const cli_args *args)
{
    bool random;
    uint64_t seed;
    int rc = cli_check_input_flags(cmd, args, &random, &seed);
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
    char **copies = NULL;
    rc = plan_stages(cmd, args, n, &plan, &copies);
    byocl_compiled **compiled = calloc((size_t)n, sizeof *compiled);
    byocl_executor **executors = calloc((size_t)n, sizeof *executors);
    if (rc == CLI_EXIT_OK && (!compiled || !executors))
        rc = cli_fail("out of memory");
    char owner[4200];
    snprintf(owner, sizeof owner, "the split model in %s", dir);
    cli_inputs in;
    int in_rc = cli_inputs_init(&in, byocl_stages_num_inputs(s), owner, "input");
    rc = rc == CLI_EXIT_OK ? in_rc : rc;
    for (int i = 0; i < in.n && rc == CLI_EXIT_OK; i++) {
        in.names[i] = byocl_stages_input_name(s, i);
        in.types[i] = byocl_stages_input_type(s, i);
    }
    if (rc == CLI_EXIT_OK)
        rc = cli_bind_inputs(cmd, args, &in, random, seed);
    if (rc == CLI_EXIT_OK) {
        int n_unbound;
        char *list = cli_inputs_list(&in, false, &n_unbound);
        if (n_unbound > 0)
            rc = cli_fail("%s has %d unbound input%s: %s; give each with --input "
                          "NAME=FILE, or pass --random-inputs",
                          owner, n_unbound, n_unbound == 1 ? "" : "s", list ? list : "?");
        free(list);
    }
    int n_items = 0, depth = 2;
    const char *v = cli_value(cmd, args, "pipeline", NULL);
    if (rc == CLI_EXIT_OK && v && !cli_parse_count(v, 1, 1000000, &n_items))
        rc = cli_usage_error(cmd, "--pipeline %s: expected a count of items from 1 to 1000000",
                             v);
    v = cli_value(cmd, args, "depth", NULL);
    if (rc == CLI_EXIT_OK && v && !n_items)
        rc = cli_usage_error(cmd, "--depth goes with --pipeline N");
    if (rc == CLI_EXIT_OK && v && !cli_parse_count(v, 1, 4096, &depth))
        rc = cli_usage_error(cmd, "--depth %s: expected a count from 1 to 4096", v);
    if (rc == CLI_EXIT_OK && plan.compiled)
        rc = compile_stages(s, &plan, compiled, executors);
    if (rc == CLI_EXIT_OK && n_items)
        rc = run_pipeline(cmd, args, dir, s, &plan, executors, owner, random, seed, n_items,
                          depth);
    else if (rc == CLI_EXIT_OK)
        rc = run_stages(cmd, args, dir, s, &plan, executors, &in);
    for (int k = 0; k < n; k++) {
        byocl_executor_free(executors ? executors[k] : NULL);
        byocl_compiled_free(compiled ? compiled[k] : NULL);
    }
    free(executors);
    free(compiled);
    for (int i = 0; copies && copies[i]; i++)
        free(copies[i]);
    free(copies);
    free(plan.builds);
    free(plan.labels);
    cli_inputs_free(&in);
    byocl_stages_free(s);
    return rc;
}

const cli_command cli_cmd_run_stages = {
    .name = "run-stages",
    .summary = "run the stages that `byocl split` wrote, in order",
    .args_usage = "DIR [--input NAME=FILE]... [--random-inputs[=SEED]] [--output-dir DIR]\n"
                  "                        [--target T [--device D] [--threads N]]\n"
                  "                        [--stage K:target=T,device=D,threads=N]...\n"
                  "                        [--pipeline N [--depth D]]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"DIR"},
    .description =
        "Reads DIR/manifest.json and the stage modules that `byocl split` wrote, runs\n"
        "the stages one after the other on the reference executor, each fed from the\n"
        "model's inputs and earlier stages' outputs as the manifest wires them, and\n"
        "prints the last stage's outputs (the original model's) as `byocl run` does, with\n"
        "each stage's run time.\n"
        "\n"
        "The inputs are the original @main's parameters: give each with --input (a\n"
        "tensor file of its dtype and shape), or pass --random-inputs, which fills them\n"
        "exactly as `byocl run --random-inputs` fills the original model's, so both runs\n"
        "can be compared.\n"
        "\n"
        "--target T compiles every stage instead, as `byocl run --target T` compiles a\n"
        "model (a region target's regions offloaded, the rest on the host), with\n"
        "--device, --target-opt and --threads for each; --stage K:target=T,device=D,\n"
        "threads=N places stage K apart (the stages it does not name: --target, else host).\n"
        "\n"
        "--pipeline N streams N items through the stages instead, one worker thread per\n"
        "stage, queues of --depth items between them (item i's random inputs from the\n"
        "seed plus i), and reports throughput, latency per item and how busy each stage\n"
        "was; --output-dir then gets DIR/item_<i>/output_<j>.npy.\n",
    .options = run_stages_options,
    .examples = "  byocl split builtin:resnet18 --parts 3 -o r18-stages\n"
                "  byocl run-stages r18-stages --random-inputs --output-dir out\n"
                "  byocl run-stages r18-stages --input data=image.npy\n"
                "  byocl run-stages r18-stages --random-inputs --target host --stage "
                "1:target=opencl\n"
                "  byocl run-stages r18-stages --random-inputs --target host --threads 1 "
                "--pipeline 64\n",
    .run = run_run_stages,
};
