/* Writing a module from a command (see cli_save.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_save.h"

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

int cli_save_module(const byocl_module *m, const char *text_path, const byocl_print_options *opt)
{
    char *params_path = params_path_for(text_path);
    if (!params_path)
        return cli_fail("out of memory");
    byocl_error err;
    int rc = CLI_EXIT_OK;
    if (byocl_save_model_opts(m, text_path, params_path, opt, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    else if (has_tensor_constants(m) && opt->metadata != BYOCL_METADATA_INLINE)
        printf("wrote %s and %s (read it back with: byocl print %s --params %s)\n", text_path,
               params_path, text_path, params_path);
    else
        printf("wrote %s\n", text_path);
    free(params_path);
    return rc;
}

int cli_print_options(const cli_command *cmd, const cli_args *args, bool types_flag,
                      byocl_print_options *out)
{
    *out = (byocl_print_options){.show_types = !types_flag || cli_count(cmd, args, "no-types") == 0,
                                 .renumber = cli_count(cmd, args, "renumber") > 0};
    const char *mode = cli_value(cmd, args, "metadata", "npz");
    if (strcmp(mode, "inline") == 0)
        out->metadata = BYOCL_METADATA_INLINE;
    else if (strcmp(mode, "npz") == 0)
        out->metadata = BYOCL_METADATA_NPZ;
    else
        return cli_usage_error(cmd, "bad --metadata '%s': expected inline or npz", mode);
    return CLI_EXIT_OK;
}

int cli_output_module(const byocl_module *m, const char *out_path,
                      const byocl_print_options *opt)
{
    const byocl_print_options typed = {.show_types = true};
    if (!opt)
        opt = &typed;
    if (out_path)
        return cli_save_module(m, out_path, opt);
    byocl_error err;
    char *text = byocl_text_print(m, opt, NULL, &err);
    if (!text)
        return cli_fail_error(&err);
    fputs(text, stdout);
    free(text);
    return CLI_EXIT_OK;
}
