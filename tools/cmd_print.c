/* byocl print: a model as typed Relay text, to stdout or to a text + .npz pair. */
#include "cli.h"
#include "cli_save.h"

static const cli_option print_options[] = {
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    CLI_OPTION_SHAPE,
    {"no-types", 0, CLI_ARG_NONE, false, NULL, "leave out the /* ty=... */ comments"},
    CLI_OPTION_OUTPUT_MODEL,
    CLI_OPTION_METADATA,
    CLI_OPTION_RENUMBER,
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

static int run_print(const cli_command *cmd, const cli_args *args)
{
    byocl_print_options opt;
    int rc = cli_print_options(cmd, args, true, &opt);
    if (rc != CLI_EXIT_OK)
        return rc;
    byocl_module *m;
    rc = cli_load_model_args(cmd, args, args->positional[0], &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = cli_output_module(m, cli_value(cmd, args, "output", NULL), &opt);
    byocl_module_free(m);
    return rc;
}

const cli_command cli_cmd_print = {
    .name = "print",
    .summary = "print a model as typed Relay text",
    .args_usage = "MODEL [--params FILE.npz] [--no-types] [--renumber] [-o OUT.relay]\n"
                  "                   [--metadata inline|npz]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"MODEL"},
    .description =
        "Loads MODEL, infers its types and prints it in TVM Relay's text format, each\n"
        "binding followed by its type (/* ty=... */). Tensor constants print as\n"
        "meta[relay.Constant][K]; with -o their values go to an .npz next to the text,\n"
        "which --params reads back, or with --metadata inline into a #[metadata]\n"
        "section after the text, as TVM's mod.astext() writes them. A text file's own\n"
        "#[metadata] section is read; a constant that --params also gives comes from\n"
        "--params.\n"
        "Bindings keep the names the source gave them (%78, %x0, an ONNX node's name)\n"
        "where they read back as the same module; --renumber numbers them %0, %1, ...\n"
        "(names that are not numbers stay).\n"
        "\n" CLI_MODEL_HELP "\n",
    .options = print_options,
    .examples = "  byocl print builtin:seed\n"
                "  byocl print builtin:resnet18 -o resnet18.relay\n"
                "  byocl print resnet18.relay --params resnet18.npz\n"
                "  byocl print builtin:seed --metadata inline -o seed.relay\n",
    .run = run_print,
};
