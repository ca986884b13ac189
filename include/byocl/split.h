/* byocl: splitting a model into pipeline stages.
 *
 * byocl_split cuts @main of a module, in node order, into stages that run one after the
 * other (on one device each, say). Stage k is a module of its own whose @main takes the
 * values it needs from outside and returns, as a tuple, every value that a later stage
 * needs; the last stage returns the original result. The wiring between stages (which
 * parameter of a stage receives which output of which earlier stage, or which input of
 * the whole pipeline) is part of the result and is written next to the stage modules as
 * manifest.json, which byocl_stages_read reads back and byocl_stages_run follows.
 *
 * What goes where:
 *  - Calls, tuples and TupleGetItems of @main are placed in node order (the %N order of
 *    `byocl print`); a call of a partitioned region (`@opencl_main_0(...)`) is one node like
 *    any other, and every stage that calls a function gets a copy of it. A TupleGetItem
 *    stays with the tuple it reads, so that a cut after nn.batch_norm passes its field 0,
 *    not the whole tuple. Nodes the result does not need are dropped.
 *  - Parameters of the original @main become parameters, under the same names, of every
 *    stage that uses them; they are the pipeline's inputs, in the original order.
 *  - Constants are bound into every stage that uses them.
 *  - A value computed in stage j and used in a later stage k is an output of stage j and
 *    a parameter of stage k named "s<j>_<N>" (N: the value's %N in the original @main, or
 *    its binding name), and stage k reads it directly from stage j's outputs, also when
 *    stages in between do not use it (a residual connection that skips a stage is not
 *    forwarded through the stages it skips). A tuple-typed value crosses a cut as its
 *    tensor fields, "s<j>_<N>_<i>", and is rebuilt where it is used. */
#ifndef BYOCL_SPLIT_H
#define BYOCL_SPLIT_H

#include <stdint.h>

#include "byocl/ir.h"
#include "byocl/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct byocl_stages byocl_stages;

/* Splits @main of `m` (type-checked) into stages, either
 *  - at cut points: `cut_numbers` holds n_cuts node numbers, increasing, as `byocl print`
 *    shows them (%A); a stage ends after node %A, giving n_cuts + 1 stages; or
 *  - (cut_numbers NULL, n_cuts 0) into `n_parts` stages balanced by estimated FLOPs: the
 *    cuts that make the costliest stage as cheap as possible (see byocl_split_node_flops;
 *    byocl_split_weighted balances by costs of the caller's instead).
 * A cut at a number that is not a node of @main, cuts out of order, a stage left with no
 * node, and more parts than @main has nodes to place are errors. *out is NULL on failure. */
byocl_status byocl_split(const byocl_module *m, const int *cut_numbers, int n_cuts,
                         int n_parts, byocl_stages **out, byocl_error *err);

/* byocl_split into `n_parts` stages balanced by given costs instead of estimated FLOPs:
 * node_cost[id] is what node `id` of @main costs (measured milliseconds, say: `byocl split
 * --balance measured`), one per node (n_nodes = byocl_function_num_nodes of @main), each
 * finite and at least 0. Only the nodes that a stage holds count (the calls, tuples and
 * TupleGetItems the result needs; a TupleGetItem's cost goes with its tuple); the cuts
 * make the costliest stage as cheap as possible, as byocl_split does with FLOPs, and
 * byocl_stage_cost gives each stage's sum. Errors as byocl_split's, and a wrong number of
 * costs or a cost that is negative, infinite or NaN (the message names the node). */
byocl_status byocl_split_weighted(const byocl_module *m, int n_parts, const double *node_cost,
                                  int n_nodes, byocl_stages **out, byocl_error *err);

/* The estimated cost that balancing uses for node `id` of `fn`: nn.conv2d, nn.dense and
 * nn.batch_matmul count 2 FLOPs per multiply-add; every other op counts one per output
 * element; a call of a global function counts what its nodes count; tuples,
 * TupleGetItems, parameters and constants count 0. */
int64_t byocl_split_node_flops(const byocl_function *fn, int id);

void byocl_stages_free(byocl_stages *s); /* NULL is fine */

int byocl_stages_count(const byocl_stages *s);
/* Stage k's module; its @main is the stage. Owned by `s`. */
const byocl_module *byocl_stages_module(const byocl_stages *s, int k);

/* The pipeline's inputs: the original @main's parameters, in order. */
int byocl_stages_num_inputs(const byocl_stages *s);
const char *byocl_stages_input_name(const byocl_stages *s, int i);
const byocl_type *byocl_stages_input_type(const byocl_stages *s, int i);

/* Where parameter i of stage k's @main gets its value. */
typedef struct byocl_stage_input {
    const char *name; /* the parameter's name */
    int stage;        /* the stage whose output it is, or -1: a pipeline input */
    int index;        /* that stage's output index, or the pipeline input's index */
} byocl_stage_input;

/* Output i of stage k (the tensors of its result, tuples flattened, in order). */
typedef struct byocl_stage_output {
    const char *node;       /* the original value: "%29", "%1.0" (field 0 of %1), "%x0",
                               "%data", "the result" (the body `byocl print` shows inline) */
    const char *op;         /* what computes it: "nn.relu", "@opencl_main_0", "Tuple",
                               "TupleGetItem", "Var", "Constant" */
    const byocl_type *type; /* a tensor type */
} byocl_stage_output;

int byocl_stage_num_inputs(const byocl_stages *s, int k);
byocl_stage_input byocl_stage_input_at(const byocl_stages *s, int k, int i);
int byocl_stage_num_outputs(const byocl_stages *s, int k);
byocl_stage_output byocl_stage_output_at(const byocl_stages *s, int k, int i);

/* What stage k holds of the original @main: its first and last node ("%0", "%29", "the
 * result"), the number of nodes, and their estimated FLOPs. */
const char *byocl_stage_first_node(const byocl_stages *s, int k);
const char *byocl_stage_last_node(const byocl_stages *s, int k);
int byocl_stage_num_nodes(const byocl_stages *s, int k);
int64_t byocl_stage_flops(const byocl_stages *s, int k);
/* The costs byocl_split_weighted was given for the nodes stage k holds, summed (the
 * manifest's "cost"); -1 when the stages were cut otherwise (byocl_split) or read from a
 * manifest without costs. */
double byocl_stage_cost(const byocl_stages *s, int k);
/* The bytes that cross the cut after stage k for one item: each tensor made before the cut
 * (an input of the pipeline or an output of stages 0 to k) that a stage after it reads,
 * counted once. 0 for the last stage. */
int64_t byocl_stages_cut_bytes(const byocl_stages *s, int k);

/* Writes DIR/stage_<k>.relay (typed Relay text), DIR/stage_<k>.npz (its tensor constants,
 * when it has any) and DIR/manifest.json (the wiring; docs/split-and-dot.md describes it).
 * The files are written into a temporary directory beside DIR that is then renamed to
 * DIR, so DIR appears whole or not at all. DIR may exist only as an empty directory. */
byocl_status byocl_stages_write(const byocl_stages *s, const char *dir, byocl_error *err);

/* Reads what byocl_stages_write wrote: the manifest, then each stage's module, checking
 * that the stages' parameters and outputs agree with the manifest. Errors name the file
 * and what is wrong. */
byocl_status byocl_stages_read(const char *dir, byocl_stages **out, byocl_error *err);

/* Called after stage k ran (for progress and timing); may be NULL. */
typedef void (*byocl_stage_done_fn)(void *user, int k);

/* Runs the stages in order on the reference executor, each stage's inputs taken from the
 * pipeline inputs (`inputs`, one per byocl_stages_num_inputs, in order) and from earlier
 * stages' outputs as the wiring says. The outputs are the last stage's, flattened, as
 * byocl_reference_run returns them (free with byocl_tensors_free). */
byocl_status byocl_stages_run(const byocl_stages *s, byocl_tensor *const *inputs, int n_inputs,
                              byocl_stage_done_fn done, void *user, byocl_tensor ***outputs,
                              int *n_outputs, byocl_error *err);

/* byocl_stages_run with compiled stages: stage k runs on executors[k], an executor of
 * stage k's module compiled for any target (byocl_compile of byocl_stages_module(s, k)),
 * or on the reference executor where executors[k] is NULL (executors NULL: every stage).
 * An executor's inputs are set by the stage's parameter names. */
byocl_status byocl_stages_run_on(const byocl_stages *s, byocl_executor *const *executors,
                                 byocl_tensor *const *inputs, int n_inputs,
                                 byocl_stage_done_fn done, void *user, byocl_tensor ***outputs,
                                 int *n_outputs, byocl_error *err);

/* What byocl_stages_pipeline measured (its arrays malloc'ed: free() them). */
typedef struct byocl_pipeline_stats {
    double total_ms;    /* from the first item in to the last item out */
    double *latency_ms; /* per item: from entering stage 0 to leaving the last stage */
    double *busy_ms;    /* per stage: the time its worker spent running it */
} byocl_pipeline_stats;

/* Where a runner of many items gets item `item`'s inputs: fills inputs[0 ..
 * byocl_stages_num_inputs) with new references (the runner releases them once the item
 * ran), or fails with err filled. Called in item order, on the thread that called the
 * runner, as the item enters the first stage: the inputs in memory stay bounded by the
 * queues, however many items stream. */
typedef byocl_status (*byocl_item_inputs_fn)(void *user, int item, byocl_tensor **inputs,
                                             byocl_error *err);

/* Streams `n_items` items through the stages concurrently: one worker thread per stage,
 * stage k on executors[k] (NULL, or executors NULL: the reference executor), queues of at
 * most `depth` items between consecutive stages (a slow stage holds the earlier ones back;
 * the tensors in flight stay bounded). next_inputs(user, i, ...) gives item i's inputs;
 * distinct items must not share a tensor (reference counts are not atomic).
 * (*outputs)[i] receives item i's outputs, (*n_outputs)[i] of them, in input order (free
 * each with byocl_tensors_free, then the two arrays with free()). The first failure stops
 * every worker; the error names the stage and the item ("stage 1, item 5: ..."; "item 5:
 * ..." for its inputs). stats may be NULL. */
byocl_status byocl_stages_pipeline(const byocl_stages *s, byocl_executor *const *executors,
                                   int depth, byocl_item_inputs_fn next_inputs, void *user,
                                   int n_items, byocl_tensor ****outputs, int **n_outputs,
                                   byocl_pipeline_stats *stats, byocl_error *err);

#ifdef __cplusplus
}
#endif
#endif
