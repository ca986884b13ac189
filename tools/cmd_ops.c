/* byocl ops: the op registry, as text for people or as the Markdown of docs/text-ir.md. */
#include <string.h>

#include "byocl/target.h"
#include "cli.h"
#include "cli_build.h"

static const cli_option ops_options[] = {
    {"markdown", 0, CLI_ARG_NONE, false, NULL,
     "print Markdown (the op reference of docs/text-ir.md is this output)"},
    {"target", 0, CLI_ARG_REQUIRED, false, "T",
     "show region target T instead: its options (--target-opt) and devices (--device)"},
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

static const char *kind_name(byocl_attr_kind kind)
{
    switch (kind) {
    case BYOCL_ATTR_NULL: return "none";
    case BYOCL_ATTR_INT: return "int";
    case BYOCL_ATTR_FLOAT: return "float";
    case BYOCL_ATTR_BOOL: return "bool";
    case BYOCL_ATTR_STR: return "str";
    case BYOCL_ATTR_INTS: return "ints";
    case BYOCL_ATTR_FLOATS: return "floats";
    }
    return "?";
}

/* "2", "1 or more", "1 to 3". */
static char *arity_str(const byocl_op *op, char *buf, size_t len)
{
    int lo, hi;
    byocl_op_arity(op, &lo, &hi);
    if (hi < 0)
        snprintf(buf, len, "%d or more", lo);
    else if (lo == hi)
        snprintf(buf, len, "%d", lo);
    else
        snprintf(buf, len, "%d to %d", lo, hi);
    return buf;
}

static char *default_str(const byocl_op *op, int k, char *buf, size_t len)
{
    if (byocl_op_attr_required(op, k))
        snprintf(buf, len, "(required)");
    else
        byocl_op_attr_default_str(op, k, buf, len);
    return buf;
}

static void print_op_text(const byocl_op *op)
{
    char arity[32], def[256];
    int lo, hi;
    byocl_op_arity(op, &lo, &hi);
    printf("%s  (%s argument%s)\n  %s\n", byocl_op_name(op), arity_str(op, arity, sizeof arity),
           lo == 1 && hi == 1 ? "" : "s", byocl_op_doc(op));
    int width = 0;
    for (int k = 0; k < byocl_op_num_attrs(op); k++) {
        int w = (int)strlen(byocl_op_attr_name(op, k));
        width = w > width ? w : width;
    }
    for (int k = 0; k < byocl_op_num_attrs(op); k++)
        printf("    %-*s  %-5s  %-12s  %s\n", width, byocl_op_attr_name(op, k),
               kind_name(byocl_op_attr_kind(op, k)), default_str(op, k, def, sizeof def),
               byocl_op_attr_doc(op, k));
}

/* Markdown table cells may not hold '|'. */
static void print_cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', stdout);
        fputc(*s, stdout);
    }
}

static void print_op_markdown(const byocl_op *op)
{
    char arity[32], def[256];
    printf("### %s\n\n", byocl_op_name(op));
    const char *doc = byocl_op_doc(op);
    print_cell(doc);
    bool has_stop = *doc && doc[strlen(doc) - 1] == '.';
    printf("%s Arguments: %s.\n\n", has_stop ? "" : ".", arity_str(op, arity, sizeof arity));
    if (byocl_op_num_attrs(op) == 0) {
        printf("No attributes.\n\n");
        return;
    }
    printf("| attribute | kind | default | meaning |\n|---|---|---|---|\n");
    for (int k = 0; k < byocl_op_num_attrs(op); k++) {
        printf("| `%s` | %s | `", byocl_op_attr_name(op, k),
               kind_name(byocl_op_attr_kind(op, k)));
        print_cell(default_str(op, k, def, sizeof def));
        printf("` | ");
        print_cell(byocl_op_attr_doc(op, k));
        printf(" |\n");
    }
    printf("\n");
}

static int run_ops(const cli_command *cmd, const cli_args *args)
{
    void (*print_op)(const byocl_op *) =
        cli_count(cmd, args, "markdown") ? print_op_markdown : print_op_text;
    const char *target = cli_value(cmd, args, "target", NULL);
    if (target) {
        if (args->n_positional > 0)
            return cli_usage_error(cmd, "give an OP or --target T, not both");
        int rc = cli_check_target(cmd, target);
        if (rc == CLI_EXIT_OK && !cli_is_region_target(target))
            rc = cli_usage_error(cmd, "--target %s: host and ref run every op; give a region "
                                      "target",
                                 target);
        if (rc == CLI_EXIT_OK)
            cli_print_target(byocl_target_find(target));
        return rc;
    }
    if (args->n_positional == 1) {
        const byocl_op *op = byocl_op_find(args->positional[0]);
        if (!op)
            return cli_fail("unknown op '%s' (byocl ops lists all %d)", args->positional[0],
                            byocl_op_count());
        print_op(op);
        return CLI_EXIT_OK;
    }
    for (int i = 0; i < byocl_op_count(); i++) {
        if (i > 0 && print_op == print_op_text)
            printf("\n");
        print_op(byocl_op_at(i));
    }
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_ops = {
    .name = "ops",
    .summary = "list the ops with their arguments and attributes",
    .args_usage = "[OP] [--markdown] | --target T",
    .min_positional = 0,
    .max_positional = 1,
    .positional_names = {"OP"},
    .description = "Prints every op (or only OP) by its Relay name: what it computes, how many\n"
                   "arguments it takes, and each attribute with its kind, default and meaning.\n"
                   "With --target T it shows region target T: the options it takes\n"
                   "(--target-opt T.KEY=VALUE) and its devices (--device).\n",
    .options = ops_options,
    .examples = "  byocl ops\n"
                "  byocl ops nn.conv2d\n"
                "  byocl ops --target opencl\n",
    .run = run_ops,
};
