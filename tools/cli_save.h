/* Writing a module from a command: the text to OUT.relay and, when the module has tensor
 * constants, their values to OUT.npz beside it or (--metadata inline) into the text's
 * #[metadata] section (atomically, through byocl_save_model_opts), then a line on stdout
 * that says what was written. */
#ifndef BYOCL_CLI_SAVE_H
#define BYOCL_CLI_SAVE_H

#include "byocl/byocl.h"

/* `-o OUT.relay` for commands that write a model through cli_output_module. */
#define CLI_OPTION_OUTPUT_MODEL                                                              \
    {"output", 'o', CLI_ARG_REQUIRED, false, "OUT.relay",                                  \
     "write the text to OUT.relay, tensor constants to OUT.npz"}

/* `--metadata inline|npz`: where the values of tensor constants go when the module is
 * written or printed. */
/* --renumber: byocl_print_options.renumber. */
#define CLI_OPTION_RENUMBER                                                                  \
    {"renumber", 0, CLI_ARG_NONE, false, NULL,                                             \
     "number the bindings %0, %1, ... instead of keeping the source's numbers (%78)"}

#define CLI_OPTION_METADATA                                                                  \
    {"metadata", 0, CLI_ARG_REQUIRED, false, "inline|npz",                                 \
     "constants' values: npz (OUT.npz, the default) or inline (a TVM #[metadata] section)"}

/* The printing options of a command that has --metadata (and, with `types_flag`, the
 * --no-types flag). Returns CLI_EXIT_OK, or CLI_EXIT_USAGE for a bad value (printed). */
int cli_print_options(const cli_command *cmd, const cli_args *args, bool types_flag,
                      byocl_print_options *out);

/* Returns CLI_EXIT_OK, or CLI_EXIT_FAILURE with the error printed (no file written). */
int cli_save_module(const byocl_module *m, const char *text_path,
                    const byocl_print_options *opt);

/* Writes the module to `out_path` (cli_save_module) or, when out_path is NULL, prints it
 * on stdout. `opt` NULL: typed text. Returns an exit code. */
int cli_output_module(const byocl_module *m, const char *out_path,
                      const byocl_print_options *opt);

#endif
