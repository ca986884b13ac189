/* byocl print: a model as typed Relay text, to stdout or to a text + .npz pair. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const cli_option print_options[] = {
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    {"no-types", 0, CLI_ARG_NONE, false, NULL, "leave out the /* ty=... */ comments"},
    {"output", 'o', CLI_ARG_REQUIRED, false, "OUT.relay",
     "write the text to OUT.relay, tensor constants to OUT.npz"},
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* "dir/model.relay" -> "dir/model.npz"; "model" -> "model.npz". Malloc'ed. */
static char *params_path_for(const char *text_path)
{
    const char *slash = strrchr(text_path, '/');
    const char *dot = strrchr(text_path, '.');
    size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - text_path)
                                                      : strlen(text_path);
    char *path = malloc(stem + sizeof ".npz");
    if (path) {
        memcpy(path, text_path, stem);
        memcpy(path + stem, ".npz", sizeof ".npz");
    }
    return path;
}

/* Whether saving writes a parameter file: any constant that is not a scalar. */
static bool has_tensor_constants(const byocl_module *m)
{
    for (int f = 0; f < byocl_module_num_functions(m); f++) {
        const byocl_function *fn = byocl_module_function_at(m, f);
        for (int id = 0; id < byocl_function_num_nodes(fn); id++)
            if (byocl_node_kind_of(fn, id) == BYOCL_NODE_CONSTANT &&
                byocl_tensor_shape(byocl_node_value(fn, id))->rank > 0)
                return true;
    }
    return false;
}

static int save(const byocl_module *m, const char *text_path, const byocl_print_options *opt)
{
    char *params_path = params_path_for(text_path);
    if (!params_path)
        return cli_fail("out of memory");
    byocl_error err;
    int rc = CLI_EXIT_OK;
    if (byocl_save_model_opts(m, text_path, params_path, opt, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    else if (has_tensor_constants(m))
        printf("wrote %s and %s (read it back with: byocl print %s --params %s)\n", text_path,
               params_path, text_path, params_path);
    else
        printf("wrote %s\n", text_path);
    free(params_path);
    return rc;
}

static int run_print(const cli_command *cmd, const cli_args *args)
{
    byocl_module *m;
    int rc = cli_load_model(args->positional[0], cli_value(cmd, args, "params", NULL), &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    byocl_print_options opt = {.show_types = cli_count(cmd, args, "no-types") == 0};
    const char *out_path = cli_value(cmd, args, "output", NULL);
    if (out_path) {
        rc = save(m, out_path, &opt);
    } else {
        byocl_error err;
        char *text = byocl_text_print(m, &opt, NULL, &err);
        if (!text)
            rc = cli_fail_error(&err);
        else
            fputs(text, stdout);
        free(text);
    }
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
