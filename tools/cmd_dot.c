/* byocl dot: a model's @main as a Graphviz graph, regions as clusters. */
#include <stdlib.h>

#include "byocl/dot.h"
#include "cli.h"

static const cli_option dot_options[] = {
    {"params", 0, CLI_ARG_REQUIRED, false, "FILE.npz",
     "tensors by name: @main's parameters to bind, the text's meta constants"},
    CLI_OPTION_SHAPE,
    {"output", 'o', CLI_ARG_REQUIRED, false, "OUT.dot", "write the graph to OUT.dot"},
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

static int run_dot(const cli_command *cmd, const cli_args *args)
{
    byocl_module *m;
    int rc = cli_load_model_args(cmd, args, args->positional[0], &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *out_path = cli_value(cmd, args, "output", NULL);
    byocl_error err;
    if (out_path) {
        if (byocl_dot_save(m, out_path, &err) != BYOCL_OK)
            rc = cli_fail_error(&err);
        else
            printf("wrote %s (render it with: dot -Tsvg %s -o graph.svg)\n", out_path,
                   out_path);
    } else {
        char *text = byocl_dot(m, &err);
        if (!text)
            rc = cli_fail_error(&err);
        else
            fputs(text, stdout);
        free(text);
    }
    byocl_module_free(m);
    return rc;
}

const cli_command cli_cmd_dot = {
    .name = "dot",
    .summary = "draw a model's graph (Graphviz), regions as clusters",
    .args_usage = "MODEL [--params FILE.npz] [-o OUT.dot]",
    .min_positional = 1,
    .max_positional = 1,
    .positional_names = {"MODEL"},
    .description =
        "Prints @main of MODEL as a Graphviz graph: each parameter an ellipse, each node\n"
        "a box with its number (as `byocl print` shows it), its op and its type, and an\n"
        "edge from each value to its users; constants are not drawn. Regions are\n"
        "clusters filled with their target's color: a call of a partitioned function\n"
        "holds that function's nodes, and in an annotated model each region between\n"
        "compiler_begin and compiler_end is one cluster. Render the graph with\n"
        "`dot -Tsvg OUT.dot -o graph.svg` (Graphviz).\n"
        "\n" CLI_MODEL_HELP "\n",
    .options = dot_options,
    .examples = "  byocl dot builtin:seed | dot -Tsvg -o seed.svg\n"
                "  byocl dot partitioned.relay -o partitioned.dot\n",
    .run = run_dot,
};
