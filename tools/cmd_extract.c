/* byocl extract: one partitioned region as a standalone model. */
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "byocl/pipeline.h"
#include "cli.h"
#include "cli_save.h"

static const cli_option extract_options[] = {
    {"region", 0, CLI_ARG_REQUIRED, false, "SYMBOL|N",
     "the region: its symbol (opencl_main_0) or its number n"},
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    CLI_OPTION_SHAPE,
    CLI_OPTION_OUTPUT_MODEL,
    CLI_OPTION_METADATA,
    CLI_OPTION_RENUMBER,
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

static bool is_partitioned(const byocl_module *m)
{
    for (int f = 0; f < byocl_module_num_functions(m); f++)
        if (byocl_attrs_find(byocl_function_attrs(byocl_module_function_at(m, f)), "Compiler"))
            return true;
    return false;
}

static int run_extract(const cli_command *cmd, const cli_args *args)
{
    const char *region = cli_value(cmd, args, "region", NULL);
    if (!region)
        return cli_usage_error(cmd, "missing --region SYMBOL|N");
    byocl_print_options print_opt;
    int rc = cli_print_options(cmd, args, false, &print_opt);
    if (rc != CLI_EXIT_OK)
        return rc;
    byocl_module *m;
    rc = cli_load_model_args(cmd, args, args->positional[0], &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    byocl_error err;
    byocl_module *part = NULL;
    byocl_extract_input *inputs = NULL;
    int n_inputs = 0;
    /* A model with annotations but no regions yet is partitioned first, as `byocl
     * partition MODEL` would. */
    if (!is_partitioned(m) && byocl_pipeline_partition(m, NULL, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    if (rc == CLI_EXIT_OK &&
        byocl_extract_with_inputs(m, region, &part, &inputs, &n_inputs, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    for (int k = 0; rc == CLI_EXIT_OK && k < n_inputs; k++)
        fprintf(stderr, "# %%%s <- %s\n", inputs[k].param, inputs[k].source);
    if (rc == CLI_EXIT_OK)
        rc = cli_output_module(part, cli_value(cmd, args, "output", NULL), &print_opt);
    byocl_extract_inputs_free(inputs, n_inputs);
    byocl_module_free(part);
    byocl_module_free(m);
    return rc;
}

const cli_command cli_cmd_extract = {
    .name = "extract",
    .summary = "one partitioned region as a standalone model",
    .args_usage = "MODEL --region SYMBOL|N [-o OUT.relay]\n"
                  "                     [--metadata inline|npz]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"MODEL"},
    .description =
        "Prints (or writes with -o) the region of MODEL named by its symbol\n"
        "(opencl_main_0) or its number (0) as a model of its own: @main is the region's\n"
        "function without its Compiler attributes, so it runs on any executor. MODEL is\n"
        "partitioned first when it has annotations but no regions yet. The parameters\n"
        "are named after the values @main of the partitioned model passes in (%data,\n"
        "%n1_add for node %1, an add); stderr lists them as '# %param <- value'.\n"
        "\n" CLI_MODEL_HELP "\n",
    .options = extract_options,
    .examples = "  byocl extract builtin:seed --region 0\n"
                "  byocl partition model.relay -o part.relay\n"
                "  byocl extract part.relay --region opencl_main_1 -o region1.relay\n",
    .run = run_extract,
};
