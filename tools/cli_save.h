/* Writing a module from a command: the text to OUT.relay and, when the module has tensor
 * constants, their values to OUT.npz beside it (both atomically, through byocl_save_model),
 * then a line on stdout that says what was written. */
#ifndef BYOCL_CLI_SAVE_H
#define BYOCL_CLI_SAVE_H

#include "byocl/byocl.h"

/* `-o OUT.relay` for commands that write a model through cli_output_module. */
#define CLI_OPTION_OUTPUT_MODEL                                                              \
    {"output", 'o', CLI_ARG_REQUIRED, false, "OUT.relay",                                  \
     "write the text to OUT.relay, tensor constants to OUT.npz"}

/* Returns CLI_EXIT_OK, or CLI_EXIT_FAILURE with the error printed (no file written). */
int cli_save_module(const byocl_module *m, const char *text_path,
                    const byocl_print_options *opt);

/* Writes the module to `out_path` (cli_save_module) or, when out_path is NULL, prints it
 * on stdout. `opt` NULL: typed text. Returns an exit code. */
int cli_output_module(const byocl_module *m, const char *out_path,
                      const byocl_print_options *opt);

#endif
