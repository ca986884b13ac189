/* byocl run-stages, shared by its modes: one process (cmd_run_stages.c) and the ranks of an
 * MPI job (run_stages_mpi.c). */
#ifndef BYOCL_RUN_STAGES_H
#define BYOCL_RUN_STAGES_H

#include <stdbool.h>
#include <stdint.h>

#include "byocl/split.h"
#include "cli.h"
#include "cli_build.h"
#include "cli_inputs.h"

/* How each stage is compiled: a build request per stage; `compiled` false when every stage
 * runs on the reference executor (no --target, no --stage). */
typedef struct stage_plan {
    int n;
    cli_build_request *builds;
    char (*labels)[64];
    bool compiled;
    char **copies; /* the --stage texts the requests point into */
} stage_plan;

/* The plan of the command line: --target, --device, --target-opt and --threads for every
 * stage, then each --stage. Returns a CLI exit code (printed); free the plan with
 * stage_plan_free in every case. */
int stage_plan_make(const cli_command *cmd, const cli_args *args, int n, stage_plan *plan);
void stage_plan_free(stage_plan *plan);

/* Compiles stage k of the plan and makes its executor; prints "built stage K for target T
 * in X ms", after `prefix`. Returns a CLI exit code (printed). */
int stage_compile(const byocl_stages *s, const stage_plan *plan, int k, const char *prefix,
                  byocl_compiled **compiled, byocl_executor **executor);

/* Where the items' inputs come from: one item per file of --inputs DIR (in name order),
 * or --input and --random-inputs (item i's random values from the seed plus i), --count
 * of them. An item's inputs are bound when it starts (stage_source_inputs), so that the
 * memory of many items stays bounded. */
typedef struct stage_source {
    const cli_command *cmd;
    const cli_args *args;
    const byocl_stages *s;
    char owner[4200]; /* "the split model in DIR" */
    bool random;
    uint64_t seed;
    const char *dir; /* --inputs DIR, or NULL */
    char **files;    /* its item files, sorted */
    int n;           /* items */
} stage_source;

/* The number of items the command line asks for (--inputs DIR's files, --count N, else
 * 1), without reading any. Returns a CLI exit code (printed). */
int stage_items_count(const cli_command *cmd, const cli_args *args, int *n);
/* Opens the source of the stages of `dir`, binding item 0 once to check the flags and
 * files before anything is built. Returns a CLI exit code (printed); close it with
 * stage_source_close in every case. */
int stage_source_open(const cli_command *cmd, const cli_args *args, const byocl_stages *s,
                      const char *dir, stage_source *src);
void stage_source_close(stage_source *src);
/* A byocl_item_inputs_fn over a stage_source: item i's inputs, or the message the binding
 * would print ("DIR/b.npz: ...") in err. */
byocl_status stage_source_inputs(void *src, int item, byocl_tensor **inputs, byocl_error *err);

/* Throughput, latency per item and each stage's busy share (with its target, and the
 * bytes that leave it per item); `how` says how they ran ("streamed", "through 2
 * ranks"). */
void stage_print_stream(const byocl_stages *s, const stage_plan *plan, const char *dir,
                        const char *how, int n_items, const byocl_pipeline_stats *stats,
                        const int *rank_of_stage);

/* Item outputs to DIR/item_<i>/output_<j>.npy. Returns a CLI exit code (printed). */
int stage_write_items(const char *out_dir, byocl_tensor ***outputs, const int *n_outputs,
                      int n_items);

/* byocl run-stages --mpi: this rank's part of the job. */
int run_stages_mpi(const cli_command *cmd, const cli_args *args, const char *dir, int depth);

#endif
