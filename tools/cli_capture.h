/* `--capture DIR` for the commands that run a model (run, bisect): partitioning a marked copy
 * of the model, wrapping its regions' runtime modules (include/byocl/capture.h), and after
 * the run writing each captured region's folder, and with `--capture-node %N` that node's
 * tensor. */
#ifndef BYOCL_CLI_CAPTURE_H
#define BYOCL_CLI_CAPTURE_H

#include "byocl/capture.h"
#include "cli.h"
#include "cli_build.h"

/* --capture DIR, and the flags that narrow it down, for `byocl run`. */
#define CLI_OPTION_CAPTURE                                                                   \
    {"capture", 0, CLI_ARG_REQUIRED, false, "DIR",                                         \
     "with --target: write each region call's inputs, outputs and module to DIR/<symbol>/"}
#define CLI_OPTIONS_CAPTURE_NARROW                                                           \
    {"capture-region", 0, CLI_ARG_REQUIRED, false, "SYMBOL",                               \
     "with --capture: only region SYMBOL (opencl_main_0)"},                                \
    {"capture-node", 0, CLI_ARG_REQUIRED, false, "%N",                                     \
     "with --capture: write node %N of @main (as `byocl print` numbers it) to DIR/node_N.npy"}

typedef struct cli_capture {
    const char *dir;    /* --capture DIR */
    const char *region; /* --capture-region SYMBOL, or NULL */
    const char *node;   /* --capture-node %N, or NULL */
    bool regions;       /* capture regions (not only the node) */
    int node_output;    /* with node: the index of the extra output of @main, else -1 */
    bool made_dir;      /* DIR did not exist: removed again when nothing was written */
    byocl_capture *cap;
} cli_capture;

/* Reads --capture, --capture-region and --capture-node of `cmd` (usage errors for
 * --capture-region or --capture-node without --capture). c->dir NULL: no capture. */
int cli_capture_parse(const cli_command *cmd, const cli_args *args, cli_capture *c);

/* For a build of `m` (`spec` names it) for req->target: makes the module to build into *out
 * (partitioned for a region target, with --capture-node's node as an extra output of @main)
 * and sets req up to build it with the capture's hook (`opt` adds bisect's check). Returns
 * an exit code, with the error printed. */
int cli_capture_prepare(cli_capture *c, cli_build_request *req, const char *spec,
                        const byocl_module *m, const byocl_capture_options *opt,
                        byocl_module **out);

/* After the run(s): writes the folder of each region recorded (all of them, also after a
 * failed run: a region whose call failed has none) and the node's tensor (only after a
 * successful run: `ex` may be NULL otherwise), printing "wrote PATH" for each. Returns an
 * exit code. */
int cli_capture_finish(cli_capture *c, const byocl_executor *ex, bool run_ok);

void cli_capture_free(cli_capture *c);

/* --rtol R and --atol A, shared by replay and bisect. */
#define CLI_OPTIONS_TOLERANCE                                                                \
    {"rtol", 0, CLI_ARG_REQUIRED, false, "R", "relative tolerance (default 1e-4)"},        \
    {"atol", 0, CLI_ARG_REQUIRED, false, "A", "absolute tolerance (default 1e-5)"}

/* Reads --rtol and --atol (defaults BYOCL_CAPTURE_RTOL and _ATOL): numbers >= 0. Returns
 * CLI_EXIT_OK or a usage error. */
int cli_capture_tolerance(const cli_command *cmd, const cli_args *args, double *rtol,
                          double *atol);

/* One line per output: its index, largest absolute error, relative L2, first index beyond
 * the tolerance and "ok" or "DIFFERS", under a header line. */
void cli_capture_print_diffs(const byocl_capture_diff *diffs, int n);

#endif
