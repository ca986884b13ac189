/* byocl split: a model's @main cut into pipeline stages, written to a directory; with
 * --parts N --balance measured, balanced by the time each node takes on a target
 * (cli_node_costs.c). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/split.h"
#include "cli.h"
#include "cli_build.h"
#include "cli_node_costs.h"

/* Timed runs of --balance measured unless --repeat says otherwise (the first a warm-up). */
#define DEFAULT_REPEAT 5

static const cli_option split_options[] = {
    {"at", 0, CLI_ARG_REQUIRED, false, "%A,%B",
     "cut after each of these nodes (numbered as byocl print shows them)"},
    {"parts", 0, CLI_ARG_REQUIRED, false, "N", "cut into N stages of balanced cost (--balance)"},
    {"balance", 0, CLI_ARG_REQUIRED, false, "flops|measured",
     "with --parts: balance estimated FLOPs (the default) or the time measured on --target"},
    {"output", 'o', CLI_ARG_REQUIRED, false, "DIR",
     "write the stages and manifest.json to DIR (new, or empty)"},
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    CLI_OPTION_SHAPE,
    {"target", 0, CLI_ARG_REQUIRED, false, "T",
     "with --balance measured: time on host (the default), ref, or a region target (opencl, "
     "a plugin's) with host for the rest"},
    CLI_OPTION_DEVICE,
    CLI_OPTION_TARGET_OPT,
    {"threads", 0, CLI_ARG_REQUIRED, false, "N",
     "with --balance measured: threads of the timed runs (default: all cores)"},
    {"repeat", 0, CLI_ARG_REQUIRED, false, "R",
     "with --balance measured: run R times, the first a warm-up; each step's median counts "
     "(default: 5)"},
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* How --parts balances, and where --balance measured times the model. */
typedef struct balance_request {
    bool measured;
    cli_build_request build; /* --target, --device, --target-opt, --threads */
    int repeat;
} balance_request;

/* --balance and the flags of --balance measured; usage errors for what does not go
 * together. */
static int parse_balance(const cli_command *cmd, const cli_args *args, bool by_cuts,
                         balance_request *req)
{
    *req = (balance_request){.repeat = DEFAULT_REPEAT};
    const char *balance = cli_value(cmd, args, "balance", NULL);
    if (balance && strcmp(balance, "flops") != 0 && strcmp(balance, "measured") != 0)
        return cli_usage_error(cmd, "unknown --balance '%s' (known: flops, measured)", balance);
    if (balance && by_cuts)
        return cli_usage_error(cmd, "--balance goes with --parts N (--at gives the cuts)");
    req->measured = balance && strcmp(balance, "measured") == 0;
    static const char *const measure_only[] = {"target", "device", "target-opt", "threads",
                                               "repeat"};
    for (size_t i = 0; i < sizeof measure_only / sizeof measure_only[0]; i++)
        if (!req->measured && cli_count(cmd, args, measure_only[i]) > 0)
            return cli_usage_error(cmd, "--%s goes with --balance measured (it times the model "
                                        "on a target)",
                                   measure_only[i]);
    if (!req->measured)
        return CLI_EXIT_OK;
    req->build.target = cli_value(cmd, args, "target", "host");
    int rc = cli_check_target(cmd, req->build.target);
    if (rc == CLI_EXIT_OK)
        rc = cli_target_flags(cmd, args, &req->build);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *v = cli_value(cmd, args, "threads", NULL);
    if (v && !cli_parse_count(v, 1, 4096, &req->build.threads))
        return cli_usage_error(cmd, "--threads %s: expected a count from 1 to 4096", v);
    v = cli_value(cmd, args, "repeat", NULL);
    if (v && !cli_parse_count(v, 2, 1000, &req->repeat))
        return cli_usage_error(cmd, "--repeat %s: expected a count from 2 to 1000 (the first run "
                                    "is a warm-up)",
                               v);
    return CLI_EXIT_OK;
}

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

/* What --balance measured timed, under the first line. */
static void print_measured(const balance_request *req, const cli_node_costs *costs)
{
    printf("timed on target %s, %d thread%s: %.2f ms a run (%s%d run%s after a warm-up), "
           "%.2f ms in its %d step%s",
           req->build.target, costs->threads, costs->threads == 1 ? "" : "s", costs->run_ms,
           costs->runs == 1 ? "" : "median of ", costs->runs, costs->runs == 1 ? "" : "s",
           costs->steps_ms, costs->n_steps, costs->n_steps == 1 ? "" : "s");
    if (costs->unattributed_ms > 0)
        printf(" (%.2f ms in steps that compute no node of @main)", costs->unattributed_ms);
    printf("\n");
}

/* The stages; `balance` says what --parts balanced (NULL: --at), `measured` (NULL
 * unless --balance measured) what was timed. */
static void print_stages(const byocl_stages *s, const char *spec, const char *balance,
                         const balance_request *req, const cli_node_costs *measured)
{
    int n = byocl_stages_count(s);
    printf("split @main of %s into %d stage%s%s%s\n", spec, n, n == 1 ? "" : "s",
           balance ? ", balanced by " : "", balance ? balance : "");
    if (measured)
        print_measured(req, measured);
    for (int k = 0; k < n; k++) {
        char flops[64], cost[64] = "";
        format_flops(byocl_stage_flops(s, k), flops, sizeof flops);
        if (byocl_stage_cost(s, k) >= 0)
            snprintf(cost, sizeof cost, ", %.2f ms", byocl_stage_cost(s, k));
        const char *first = byocl_stage_first_node(s, k), *last = byocl_stage_last_node(s, k);
        printf("  stage %d: %s%s%s (%d node%s, %s%s); inputs: ", k, first,
               strcmp(first, last) ? " to " : "", strcmp(first, last) ? last : "",
               byocl_stage_num_nodes(s, k), byocl_stage_num_nodes(s, k) == 1 ? "" : "s", flops,
               cost);
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
    balance_request balance;
    int rc = parse_balance(cmd, args, at != NULL, &balance);
    if (rc != CLI_EXIT_OK) {
        free(cuts);
        return rc;
    }

    const char *spec = args->positional[0];
    byocl_module *m = NULL;
    rc = cli_load_model_args(cmd, args, spec, &m);
    byocl_stages *s = NULL;
    byocl_error err;
    cli_node_costs costs = {0};
    if (rc == CLI_EXIT_OK && balance.measured)
        rc = cli_measure_node_costs(&balance.build, m, balance.repeat, &costs);
    byocl_status st = BYOCL_OK;
    if (rc == CLI_EXIT_OK)
        st = balance.measured
                 ? byocl_split_weighted(m, n_parts, costs.ms, costs.n_nodes, &s, &err)
                 : byocl_split(m, cuts, n_cuts, n_parts, &s, &err);
    if (rc == CLI_EXIT_OK && st != BYOCL_OK)
        rc = cli_fail_error(&err);
    if (rc == CLI_EXIT_OK && byocl_stages_write(s, dir, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    if (rc == CLI_EXIT_OK) {
        print_stages(s, spec, at ? NULL : balance.measured ? "measured time" : "estimated FLOPs",
                     &balance, balance.measured ? &costs : NULL);
        printf("wrote %s (manifest.json wires the stages; run them with: byocl run-stages %s "
               "--random-inputs)\n",
               dir, dir);
    }
    cli_node_costs_free(&costs);
    byocl_stages_free(s);
    byocl_module_free(m);
    free(cuts);
    return rc;
}

const cli_command cli_cmd_split = {
    .name = "split",
    .summary = "split a model into pipeline stages",
    .args_usage = "MODEL (--at %A,%B | --parts N [--balance flops|measured]) -o DIR\n"
                  "                   [--params FILE.npz]\n"
                  "                   [--target T [--device D] [--threads N] [--repeat R]]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"MODEL"},
    .description =
        "Cuts @main of MODEL, in node order, into stages that run one after the other:\n"
        "after each node given to --at (numbered as `byocl print` shows them), or into N\n"
        "stages (--parts N) whose costliest stage is as cheap as it can be.\n"
        "\n"
        "--balance flops (the default) counts estimated FLOPs: nn.conv2d and nn.dense count\n"
        "2 per multiply-add, other ops one per output element. --balance measured counts\n"
        "time instead: the model is built for --target (host unless given; --device,\n"
        "--target-opt and --threads as byocl run takes them) and run --repeat R times on\n"
        "the inputs --random-inputs gives, the first run a warm-up; each step of the\n"
        "compiled model (a fused host kernel, an offloaded region) gets its median time,\n"
        "which goes to the nodes of @main it computes in proportion to their FLOPs. Each\n"
        "stage then shows its measured ms beside its FLOPs, and the manifest records it as\n"
        "the stage's \"cost\".\n"
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
                "  byocl split builtin:resnet18 --parts 3 --balance measured --threads 1 -o r18-timed\n"
                "  byocl split model.onnx --parts 2 --balance measured --target opencl -o stages\n"
                "  byocl split builtin:resnet18 --at %30,%60 -o r18-cut\n"
                "  byocl run-stages r18-stages --random-inputs\n",
    .run = run_split,
};
