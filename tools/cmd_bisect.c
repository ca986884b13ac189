/* byocl bisect: which region of a model makes the offloaded run differ from the host? Each
 * region runs on its target and on the host, fed the host path's tensors; the first region
 * (in execution order) whose outputs differ beyond the tolerance is named, and captured. */
#include <stdlib.h>
#include <string.h>

#include "byocl/capture.h"
#include "cli.h"
#include "cli_inputs.h"
#include "cli_build.h"
#include "cli_capture.h"
#include "cli_report.h"

static const cli_option bisect_options[] = {
    {"target", 0, CLI_ARG_REQUIRED, false, "NAME",
     "the region target to check (opencl, a plugin's)"},
    {"against", 0, CLI_ARG_REQUIRED, false, "host|ref",
     "the host path: host (LLVM, the default) or ref (reference kernels)"},
    CLI_OPTION_DEVICE,
    CLI_OPTION_TARGET_OPT,
    {"threads", 0, CLI_ARG_REQUIRED, false, "N", "threads for the host (default: all cores)"},
    CLI_OPTION_INPUT,
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    CLI_OPTION_SHAPE,
    CLI_OPTION_RANDOM_INPUTS,
    {"capture", 0, CLI_ARG_REQUIRED, false, "DIR",
     "write the first diverging region's capture to DIR/<symbol>/ for byocl replay"},
    CLI_OPTIONS_TOLERANCE,
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* The output to show for a region: the first beyond the tolerance, else the largest
 * error. */
static int shown_output(const byocl_capture_region *r)
{
    int shown = 0;
    for (int i = 0; i < r->n_outputs; i++) {
        if (!r->diffs[i].ok)
            return i;
        if (r->diffs[i].max_abs > r->diffs[shown].max_abs)
            shown = i;
    }
    return shown;
}

/* The table of regions; returns the index of the first that differs, or -1. */
static int report_regions(const byocl_capture *cap)
{
    int n = byocl_capture_num_regions(cap), first = -1;
    printf("  %-20s %-10s %12s %12s %10s  %s\n", "region", "call", "max abs err", "rel L2",
           "first bad", "result");
    for (int k = 0; k < n; k++) {
        byocl_capture_region r = byocl_capture_region_at(cap, k);
        const byocl_capture_diff *d = &r.diffs[shown_output(&r)];
        char bad[32] = "-";
        if (d->first_bad >= 0)
            snprintf(bad, sizeof bad, "%lld", (long long)d->first_bad);
        printf("  %-20s %-10s %12.4g %12.4g %10s  ", r.symbol, r.call_node, d->max_abs, d->rel_l2,
               bad);
        if (r.ok) {
            printf("ok\n");
            continue;
        }
        printf("DIFFERS (output %d)\n", shown_output(&r));
        if (first < 0)
            first = k;
    }
    return first;
}

/* The offloaded run end to end (built as `byocl run --target T` builds it) on the same
 * inputs, its outputs against the host path's (`host`, the bisect's executor): a table;
 * *ok false when an output differs. */
static int end_to_end(const cli_build_request *req, const byocl_module *m, const cli_inputs *in,
                      const byocl_executor *host, const byocl_capture_options *opt, bool *ok)
{
    byocl_compiled *c = NULL;
    byocl_executor *ex = NULL;
    byocl_error err;
    int rc = CLI_EXIT_OK, n = byocl_executor_num_outputs(host);
    byocl_capture_diff *diffs = calloc((size_t)n + 1, sizeof *diffs);
    if (!diffs)
        rc = cli_fail("out of memory");
    if (rc == CLI_EXIT_OK && cli_build_model(req, m, &c, NULL, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    if (rc == CLI_EXIT_OK)
        rc = cli_executor_with_inputs(c, in, &ex);
    char label[300];
    snprintf(label, sizeof label, "running @main on target %s", req->target);
    if (rc == CLI_EXIT_OK && cli_run_executor(ex, 1, label, NULL, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    *ok = true;
    for (int i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        const byocl_tensor *got, *want;
        byocl_executor_output(ex, i, &got, NULL);
        byocl_executor_output(host, i, &want, NULL);
        byocl_capture_compare(got, want, opt->rtol, opt->atol, &diffs[i]);
        *ok = *ok && diffs[i].ok;
    }
    if (rc == CLI_EXIT_OK) {
        printf("end to end, the outputs of @main offloaded to %s against the host path:\n",
               req->target);
        cli_capture_print_diffs(diffs, n);
    }
    free(diffs);
    byocl_executor_free(ex);
    byocl_compiled_free(c);
    return rc;
}

/* Partitions, builds with every region checked against the host, runs once and reports. */
static int bisect(const cli_command *cmd, const cli_args *args, const char *spec,
                  const byocl_module *m, const cli_inputs *in, cli_build_request *br,
                  const byocl_capture_options *opt)
{
    cli_capture c = {.dir = cli_value(cmd, args, "capture", NULL), .regions = true,
                     .node_output = -1};
    const char *target = br->target;
    cli_build_request offloaded = *br; /* before prepare points br at the host path */
    offloaded.quiet_fallback = true;
    byocl_module *part = NULL;
    int rc = cli_capture_prepare(&c, br, spec, m, opt, &part);
    byocl_compiled *compiled = NULL;
    byocl_executor *ex = NULL;
    byocl_error err;
    if (rc == CLI_EXIT_OK && cli_build_model(br, part, &compiled, NULL, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    byocl_module_free(part);
    if (rc == CLI_EXIT_OK)
        rc = cli_executor_with_inputs(compiled, in, &ex);
    char label[300];
    snprintf(label, sizeof label, "running @main on the host path, each region also on %s",
             target);
    if (rc == CLI_EXIT_OK && cli_run_executor(ex, 1, label, NULL, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    int first = -1, n = rc == CLI_EXIT_OK ? byocl_capture_num_regions(c.cap) : 0;
    if (rc == CLI_EXIT_OK) {
        printf("bisect of %s: %d region%s on %s against %s (rtol %g, atol %g), each fed the "
               "host path's tensors, in execution order:\n",
               spec, n, n == 1 ? "" : "s", target, opt->check, opt->rtol, opt->atol);
        first = report_regions(c.cap);
    }
    bool whole_ok = true;
    if (rc == CLI_EXIT_OK)
        rc = end_to_end(&offloaded, m, in, ex, opt, &whole_ok);
    if (rc == CLI_EXIT_OK && first < 0)
        printf("every region of %s matches %s within the tolerance\n", spec, opt->check);
    if (rc == CLI_EXIT_OK && first < 0 && !whole_ok)
        rc = cli_fail("the outputs of %s on %s differ from the host path beyond the tolerance, "
                      "though no region does on its own inputs (the regions' errors add up)",
                      spec, target);
    if (rc == CLI_EXIT_OK && first >= 0) {
        byocl_capture_region r = byocl_capture_region_at(c.cap, first);
        printf("first region beyond the tolerance: %s (%s in the partitioned @main)\n", r.symbol,
               r.call_node);
        char *path = NULL;
        if (c.dir && byocl_capture_write_region(c.cap, first, c.dir, &path, &err) != BYOCL_OK)
            rc = cli_fail_error(&err);
        else if (path)
            printf("wrote %s (replay it: byocl replay %s)\n", path, path);
        free(path);
        if (rc == CLI_EXIT_OK)
            rc = cli_fail("region %s on %s differs from %s beyond the tolerance%s", r.symbol,
                          target, opt->check, c.dir ? "" : "; --capture DIR writes its capture");
    }
    byocl_executor_free(ex);
    byocl_compiled_free(compiled);
    cli_capture_free(&c);
    return rc;
}

static int run_bisect(const cli_command *cmd, const cli_args *args)
{
    const char *spec = args->positional[0];
    cli_build_request br = {.target = cli_value(cmd, args, "target", NULL)};
    byocl_capture_options opt = {.check = cli_value(cmd, args, "against", "host")};
    if (!br.target)
        return cli_usage_error(cmd, "missing --target T (the region target to check)");
    if (!cli_is_region_target(br.target))
        return cli_usage_error(cmd, "--target %s: bisect checks a region target such as opencl",
                               br.target);
    int rc = cli_check_target(cmd, br.target);
    if (rc == CLI_EXIT_OK && strcmp(opt.check, "host") != 0 && strcmp(opt.check, "ref") != 0)
        rc = cli_usage_error(cmd, "unknown --against '%s' (known: host, ref)", opt.check);
    if (rc == CLI_EXIT_OK)
        rc = cli_target_flags(cmd, args, &br);
    const char *v = cli_value(cmd, args, "threads", NULL);
    if (rc == CLI_EXIT_OK && v && !cli_parse_count(v, 1, 4096, &br.threads))
        rc = cli_usage_error(cmd, "--threads %s: expected a count from 1 to 4096", v);
    if (rc == CLI_EXIT_OK)
        rc = cli_capture_tolerance(cmd, args, &opt.rtol, &opt.atol);
    bool random;
    uint64_t seed;
    if (rc == CLI_EXIT_OK)
        rc = cli_check_input_flags(cmd, args, &random, &seed);
    if (rc != CLI_EXIT_OK)
        return rc;

    byocl_module *m;
    rc = cli_load_model_args(cmd, args, spec, &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    const byocl_function *main_fn = byocl_module_find(m, "main");
    cli_inputs in = {0};
    if (!main_fn)
        rc = cli_fail("%s has no function @main", spec);
    else
        rc = cli_bind_function_inputs(cmd, args, spec, main_fn, random, seed, &in);
    if (rc == CLI_EXIT_OK)
        rc = bisect(cmd, args, spec, m, &in, &br, &opt);
    cli_inputs_free(&in);
    byocl_module_free(m);
    return rc;
}

const cli_command cli_cmd_bisect = {
    .name = "bisect",
    .summary = "find the first region whose target differs from the host",
    .args_usage = "MODEL --target T [--against host|ref] [--capture DIR] [--rtol R] [--atol A]\n"
                  "                 [--input NAME=FILE]... [--params FILE.npz] "
                  "[--random-inputs[=SEED]]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"MODEL"},
    .description =
        "Partitions @main of MODEL for --target and runs it once along the host path: each\n"
        "region runs alone on the host (--against host: LLVM, or ref: the reference\n"
        "kernels), and those outputs go on to the rest of the model; the same region also\n"
        "runs on its target, fed the same host-path tensors, and its outputs are compared\n"
        "with the host's (largest absolute error, relative L2, first index beyond\n"
        "atol + rtol * |host|; default rtol 1e-4, atol 1e-5). Each region is so judged on\n"
        "correct inputs: an error does not spread into the regions after it. Then the\n"
        "model runs offloaded end to end (as `byocl run --target T`) on the same inputs and\n"
        "its outputs are compared with the host path's.\n"
        "\n"
        "Prints one line per region in execution order and names the first beyond the\n"
        "tolerance; --capture DIR writes that region's capture (its host-path inputs and\n"
        "the host's outputs) to DIR/<symbol>/, which `byocl replay` runs alone. Exits 1\n"
        "when a region differs, or when the end-to-end outputs do though no region does\n"
        "(the regions' errors add up). See docs/debugging-regions.md.\n"
        "\n"
        "Inputs bind as for `byocl run`: a built-in model given none of --input, --params\n"
        "and --random-inputs runs on the deterministic values --random-inputs gives.\n"
        "\n" CLI_MODEL_HELP "\n",
    .options = bisect_options,
    .examples = "  byocl bisect builtin:resnet18 --target opencl --random-inputs\n"
                "  byocl bisect model.relay --target opencl --input data=x.npy --capture cap\n"
                "  byocl --plugin ./libmy_target.so bisect model.relay --target mine "
                "--random-inputs\n",
    .run = run_bisect,
};
