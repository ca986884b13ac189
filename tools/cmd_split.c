/* byocl split: a model's @main cut into pipeline stages, written to a directory. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/split.h"
#include "cli.h"

static const cli_option split_options[] = {
    {"at", 0, CLI_ARG_REQUIRED, false, "%A,%B",
     "cut after each of these nodes (numbered as byocl print shows them)"},
    {"parts", 0, CLI_ARG_REQUIRED, false, "N", "cut into N stages of balanced FLOPs"},
    {"output", 'o', CLI_ARG_REQUIRED, false, "DIR",
     "write the stages and manifest.json to DIR (new, or empty)"},
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    CLI_OPTION_SHAPE,
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* "%12,%30" or "12,30" into a malloc'ed array; false on a malformed list. */
static bool parse_cuts(const char *text, int **out, int *n_out)
{
    int n = 1;
    for (const char *p = text; *p; p++)
        n += *p == ',';
    int *cuts = malloc((size_t)n * sizeof *cuts);
    if (!cuts)
        return false;
    const char *p = text;
    for (int i = 0; i < n; i++) {
        if (*p == '%')
            p++;
        if (*p < '0' || *p > '9')
            break;
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || v > INT_MAX || (*end != ',' && *end != '\0'))
            break;
        cuts[i] = (int)v;
        p = *end ? end + 1 : end;
        if (i == n - 1) {
            *out = cuts;
            *n_out = n;
            return true;
        }
    }
    free(cuts);
    return false;
}

/* "3.63 GFLOPs", "512 kFLOPs", "12 FLOPs". */
static void format_flops(int64_t flops, char *buf, size_t len)
{
    static const char *const units[] = {"", "k", "M", "G", "T", "P"};
    double v = (double)flops;
    int u = 0;
    while (v >= 1000 && u < 5) {
        v /= 1000;
        u++;
    }
    snprintf(buf, len, "%.3g %sFLOPs", v, units[u]);
}

static void print_stages(const byocl_stages *s, const char *spec)
{
    int n = byocl_stages_count(s);
    printf("split @main of %s into %d stage%s\n", spec, n, n == 1 ? "" : "s");
    for (int k = 0; k < n; k++) {
        char flops[64];
        format_flops(byocl_stage_flops(s, k), flops, sizeof flops);
        const char *first = byocl_stage_first_node(s, k), *last = byocl_stage_last_node(s, k);
        printf("  stage %d: %s%s%s (%d node%s, %s); inputs: ", k, first,
               strcmp(first, last) ? " to " : "", strcmp(first, last) ? last : "",
               byocl_stage_num_nodes(s, k), byocl_stage_num_nodes(s, k) == 1 ? "" : "s", flops);
        for (int i = 0; i < byocl_stage_num_inputs(s, k); i++)
            printf("%s%s", i ? ", " : "", byocl_stage_input_at(s, k, i).name);
        if (byocl_stage_num_inputs(s, k) == 0)
            printf("none");
        printf("; outputs: ");
        for (int i = 0; i < byocl_stage_num_outputs(s, k); i++)
            printf("%s%s", i ? ", " : "", byocl_stage_output_at(s, k, i).node);
        printf("\n");
    }
}

static int run_split(const cli_command *cmd, const cli_args *args)
{
    const char *at = cli_value(cmd, args, "at", NULL);
    const char *parts = cli_value(cmd, args, "parts", NULL);
    const char *dir = cli_value(cmd, args, "output", NULL);
    if (!at == !parts)
        return cli_usage_error(cmd, at ? "give --at or --parts, not both"
                                       : "give the cut points (--at %%A,%%B) or a number of "
                                         "parts (--parts N)");
    if (!dir)
        return cli_usage_error(cmd, "give the directory to write the stages to (-o DIR)");
    int *cuts = NULL, n_cuts = 0, n_parts = 0;
    if (at && !parse_cuts(at, &cuts, &n_cuts))
        return cli_usage_error(cmd, "--at %s: expected node numbers separated by commas, like "
                                    "%%12,%%30",
                               at);
    if (parts) {
        char *end;
        errno = 0;
        long v = strtol(parts, &end, 10);
        if (errno || *end || v < 1 || v > INT_MAX || parts[0] < '0' || parts[0] > '9')
            return cli_usage_error(cmd, "--parts %s: N must be a positive integer", parts);
        n_parts = (int)v;
    }

    const char *spec = args->positional[0];
    byocl_module *m;
    int rc = cli_load_model_args(cmd, args, spec, &m);
    byocl_stages *s = NULL;
    byocl_error err;
    if (rc == CLI_EXIT_OK && byocl_split(m, cuts, n_cuts, n_parts, &s, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    if (rc == CLI_EXIT_OK && byocl_stages_write(s, dir, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    if (rc == CLI_EXIT_OK) {
        print_stages(s, spec);
        printf("wrote %s (manifest.json wires the stages; run them with: byocl run-stages %s "
               "--random-inputs)\n",
               dir, dir);
    }
    byocl_stages_free(s);
    byocl_module_free(m);
    free(cuts);
    return rc;
}

const cli_command cli_cmd_split = {
    .name = "split",
    .summary = "split a model into pipeline stages",
    .args_usage = "MODEL (--at %A,%B | --parts N) -o DIR [--params FILE.npz]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"MODEL"},
    .description =
        "Cuts @main of MODEL, in node order, into stages that run one after the other:\n"
        "after each node given to --at (numbered as `byocl print` shows them), or into N\n"
        "stages of balanced FLOPs (nn.conv2d and nn.dense count 2 per multiply-add, other\n"
        "ops one per output element).\n"
        "\n"
        "Writes DIR/stage_<k>.relay (and DIR/stage_<k>.npz with its weights) for each\n"
        "stage and DIR/manifest.json, which says where each stage's parameters come from:\n"
        "a parameter of the original @main, or an output of an earlier stage. A value that\n"
        "a later stage needs is an output of the stage that computes it and a parameter\n"
        "s<j>_<N> (stage j's %N) of every later stage that uses it, read straight from\n"
        "stage j. DIR must not exist or be empty; it appears complete or not at all.\n"
        "`byocl run-stages DIR` runs the stages in order.\n"
        "\n" CLI_MODEL_HELP "\n",
    .options = split_options,
    .examples = "  byocl split builtin:resnet18 --parts 3 -o r18-stages\n"
                "  byocl split builtin:resnet18 --at %30,%60 -o r18-cut\n"
                "  byocl run-stages r18-stages --random-inputs\n",
    .run = run_split,
};
