/* byocl run-stages: the stages that `byocl split` wrote, run in order with their wiring. */
#include <stdlib.h>
#include <string.h>

#include "byocl/split.h"
#include "cli.h"
#include "cli_inputs.h"
#include "cli_progress.h"

static const cli_option run_stages_options[] = {
    CLI_OPTION_INPUT,
    CLI_OPTION_RANDOM_INPUTS,
    CLI_OPTION_OUTPUT_DIR,
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

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
                      const byocl_stages *s, cli_inputs *in)
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
    byocl_status st = byocl_stages_run(s, in->values, in->n, stage_done, &clock, &outputs,
                                       &n_outputs, &err);
    cli_progress_finish(clock.progress, st == BYOCL_OK);
    int rc = CLI_EXIT_OK;
    if (st != BYOCL_OK) {
        rc = cli_fail_error(&err);
    } else {
        printf("ran %d stage%s of %s on the ref executor in %.2f ms\n", n, n == 1 ? "" : "s",
               dir, (clock.done_at[n - 1] - t0) * 1e3);
        for (int k = 0; k < n; k++)
            printf("  stage %d: %.2f ms\n", k,
                   (clock.done_at[k] - (k ? clock.done_at[k - 1] : t0)) * 1e3);
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
    char owner[4200];
    snprintf(owner, sizeof owner, "the split model in %s", dir);
    cli_inputs in;
    rc = cli_inputs_init(&in, byocl_stages_num_inputs(s), owner, "input");
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
    if (rc == CLI_EXIT_OK)
        rc = run_stages(cmd, args, dir, s, &in);
    cli_inputs_free(&in);
    byocl_stages_free(s);
    return rc;
}

const cli_command cli_cmd_run_stages = {
    .name = "run-stages",
    .summary = "run the stages that `byocl split` wrote, in order",
    .args_usage = "DIR [--input NAME=FILE]... [--random-inputs[=SEED]] [--output-dir DIR]",
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
        "can be compared.\n",
    .options = run_stages_options,
    .examples = "  byocl split builtin:resnet18 --parts 3 -o r18-stages\n"
                "  byocl run-stages r18-stages --random-inputs --output-dir out\n"
                "  byocl run-stages r18-stages --input data=image.npy\n",
    .run = run_run_stages,
};
