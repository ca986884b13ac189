/* byocl partition: annotate (by op support, by node range, or the model's own
 * annotations), check, merge and partition a model through byocl_pipeline_partition. */
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "byocl/pipeline.h"
#include "byocl/target.h"
#include "cli.h"
#include "cli_build.h"
#include "cli_save.h"

#define MAX_TARGETS 16

static const cli_option partition_options[] = {
    {"target", 0, CLI_ARG_REQUIRED, false, "T[,T2...]",
     "annotate by op support for these registered targets, in priority order"},
    {"range", 0, CLI_ARG_REQUIRED, false, "A:B",
     "annotate nodes %A..%B (the file's names, as byocl print shows them; #A:#B in "
     "byocl's own numbering) as one region of --target"},
    {"complete", 0, CLI_ARG_NONE, false, NULL,
     "insert the compiler_begins that hand annotations lack instead of failing"},
    {"no-merge", 0, CLI_ARG_NONE, false, NULL, "keep adjacent regions of one target apart"},
    {"explain", 0, CLI_ARG_NONE, false, NULL,
     "list on stderr every call left on the host and each target's reason"},
    CLI_OPTION_MIN_REGION_FLOPS,
    CLI_OPTION_OFFLOAD_PROFILE,
    {"constants-as-args", 0, CLI_ARG_NONE, false, NULL,
     "pass constants to regions as arguments instead of binding them inside"},
    CLI_OPTION_DUMP_AFTER,
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    CLI_OPTION_SHAPE,
    {"no-types", 0, CLI_ARG_NONE, false, NULL,
     "leave out the /* ty=... */ comments of the partitioned module"},
    CLI_OPTION_OUTPUT_MODEL,
    CLI_OPTION_METADATA,
    CLI_OPTION_RENUMBER,
    {"emit", 0, CLI_ARG_REQUIRED, false, "DIR",
     "write each region's generated code to DIR (created), as its target makes it "
     "(opencl: <symbol>.cl and <symbol>.launch.txt)"},
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* Splits "a,b" in place into names (pointers into buf). Returns the count or -1. */
static int split_targets(char *buf, const char **names)
{
    int n = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == MAX_TARGETS)
            return -1;
        names[n++] = tok;
    }
    return n;
}

static void explain_one(void *user, const byocl_function *fn, int node, const char *reason)
{
    (void)user;
    char label[64];
    const char *op = byocl_node_op(fn, node);
    fprintf(stderr, "%s (%s%s) stays on the host: %s\n",
            byocl_node_label(fn, node, label, sizeof label), op ? "" : "@",
            op ? op : byocl_node_callee(fn, node), reason);
}

/* --explain with --min-region-flops or --offload-profile: each region that stays on the
 * host for its cost. */
static void explain_kept_region(void *user, const byocl_function *fn, int first,
                                const char *target, int n_ops, double flops, const char *why)
{
    (void)user;
    fprintf(stderr, "%s region of %d op%s from %s on (%.4g FLOPs) stays on the host: %s\n",
            target, n_ops, n_ops == 1 ? "" : "s", byocl_node_op(fn, first), flops, why);
}

/* --emit DIR: the code each region's target generates, for a person to read. */
static int emit_code(const byocl_module *m, const char *dir)
{
    byocl_error err;
    int n = 0;
    if (cli_make_dirs(dir) != CLI_EXIT_OK)
        return CLI_EXIT_FAILURE;
    if (byocl_emit_regions(m, dir, NULL, &n, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    fprintf(stderr, "wrote the code of %d region%s to %s\n", n, n == 1 ? "" : "s", dir);
    return CLI_EXIT_OK;
}

static int run_partition(const cli_command *cmd, const cli_args *args)
{
    const char *target_list = cli_value(cmd, args, "target", NULL);
    const char *range = cli_value(cmd, args, "range", NULL);
    bool explain = cli_count(cmd, args, "explain") > 0;
    byocl_pipeline_options opt = {
        .complete = cli_count(cmd, args, "complete") > 0,
        .no_merge = cli_count(cmd, args, "no-merge") > 0,
        .constants_as_args = cli_count(cmd, args, "constants-as-args") > 0,
        .dump_after = cli_value(cmd, args, "dump-after", NULL),
        .dump = stderr,
    };
    char *targets_buf = target_list ? strdup(target_list) : NULL;
    const char *targets[MAX_TARGETS];
    int n_targets = 0;
    if (target_list && !targets_buf)
        return cli_fail("out of memory");
    if (targets_buf && (n_targets = split_targets(targets_buf, targets)) <= 0) {
        free(targets_buf);
        return cli_usage_error(cmd, "bad --target '%s': expected names separated by commas "
                                    "(at most %d)", target_list, MAX_TARGETS);
    }
    byocl_print_options print_opt;
    int rc = cli_print_options(cmd, args, true, &print_opt);
    if (rc != CLI_EXIT_OK) {
        free(targets_buf);
        return rc;
    }
    if ((rc = cli_check_dump_after(cmd, opt.dump_after)) != CLI_EXIT_OK)
        ;
    else if (range && !byocl_annotate_range_spelled(range))
        rc = cli_usage_error(cmd, "bad --range '%s': expected A:B with A <= B, e.g. 75:82, "
                                  "%%75:%%82, #0:#5 or conv1:relu2", range);
    else if (range && n_targets != 1)
        rc = cli_usage_error(cmd, "--range needs one --target: the region's compiler");
    else if (explain && (n_targets == 0 || range))
        rc = cli_usage_error(cmd, "--explain goes with --target (annotation by op support)");
    if (rc != CLI_EXIT_OK) {
        free(targets_buf);
        return rc;
    }
    if (range) {
        opt.range_target = targets[0];
        opt.range = range;
    }
    else {
        opt.targets = targets;
        opt.n_targets = n_targets;
    }

    byocl_module *m = NULL;
    rc = cli_offload_flags(cmd, args, NULL, &opt.offload); /* freed below */
    if (explain)
        opt.offload.report = explain_kept_region;
    if (rc == CLI_EXIT_OK)
        rc = cli_load_model_args(cmd, args, args->positional[0], &m);
    byocl_error err;
    if (rc == CLI_EXIT_OK && explain &&
        byocl_annotate_explain(m, targets, n_targets, explain_one, NULL, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    if (rc == CLI_EXIT_OK && byocl_pipeline_partition(m, &opt, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    if (rc == CLI_EXIT_OK)
        rc = cli_output_module(m, cli_value(cmd, args, "output", NULL), &print_opt);
    if (rc == CLI_EXIT_OK && cli_value(cmd, args, "emit", NULL))
        rc = emit_code(m, cli_value(cmd, args, "emit", NULL));
    byocl_module_free(m);
    cli_offload_free(&opt.offload);
    free(targets_buf);
    return rc;
}

const cli_command cli_cmd_partition = {
    .name = "partition",
    .summary = "cut a model's accelerator regions out as functions",
    .args_usage = "MODEL [--target T[,T2] | --range A:B --target T] [options] [-o OUT.relay]\n"
                  "                       [--metadata inline|npz]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"MODEL"},
    .description =
        "Annotates MODEL, checks the annotations, merges adjacent regions of one target\n"
        "and partitions: each region becomes a function @<T>_main_<n> with\n"
        "Compiler=\"<T>\" that @main calls (TVM's AnnotateTarget, MergeCompilerRegions,\n"
        "PartitionGraph). The regions come from --target (the calls each registered\n"
        "target supports), from --range (nodes %A..%B in the file's own names, as\n"
        "`byocl print` shows them, or #A..#B in byocl's own numbering, the %N of\n"
        "`byocl print --renumber`; a bare A:B means the file's %A..%B when its bindings\n"
        "are numbered, for the one --target), or else from MODEL's own\n"
        "compiler_begin/compiler_end.\n"
        "Prints the partitioned module, or writes it with -o. See docs/partitioning.md.\n"
        "\n" CLI_MODEL_HELP "\n",
    .options = partition_options,
    .examples = "  byocl partition builtin:seed\n"
                "  byocl partition model.relay --range 75:82 --target ccompiler -o part.relay\n"
                "  byocl partition vgg_block.relay --complete --dump-after check_annotations\n"
                "  byocl partition builtin:seed --no-types\n",
    .run = run_partition,
};
