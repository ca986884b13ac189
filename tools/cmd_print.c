/* byocl print: a model as typed Relay text, to stdout or to a text + .npz pair. */
#include "cli.h"
#include "cli_save.h"

static const cli_option print_options[] = {
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    CLI_OPTION_SHAPE,
    {"no-types", 0, CLI_ARG_NONE, false, NULL, "leave out the /* ty=... */ comments"},
    CLI_OPTION_OUTPUT_MODEL,
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

static int run_print(const cli_command *cmd, const cli_args *args)
{
    byocl_module *m;
    int rc = cli_load_model_args(cmd, args, args->positional[0], &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    byocl_print_options opt = {.show_types = cli_count(cmd, args, "no-types") == 0};
    rc = cli_output_module(m, cli_value(cmd, args, "output", NULL), &opt);
    byocl_module_free(m);
    return rc;
}

const cli_command cli_cmd_print = {
    .name = "print",
    .summary = "print a model as typed Relay text",
    .args_usage = "MODEL [--params FILE.npz] [--no-types] [-o OUT.relay]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"MODEL"},
    .description =
        "Loads MODEL, infers its types and prints it in TVM Relay's text format, each\n"
        "binding followed by its type (/* ty=... */). Tensor constants print as\n"
        "meta[relay.Constant][K]; with -o their values go to an .npz next to the text,\n"
        "which --params reads back.\n"
        "\n" CLI_MODEL_HELP "\n",
    .options = print_options,
    .examples = "  byocl print builtin:seed\n"
                "  byocl print builtin:resnet18 -o resnet18.relay\n"
                "  byocl print resnet18.relay --params resnet18.npz\n",
    .run = run_print,
};
