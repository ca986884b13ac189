/* What each node of a model's @main costs when it runs compiled for a target, measured
 * (byocl split --balance measured; cli_node_costs.c): the model is built for the target,
 * run on random inputs, and each step's median time goes to the nodes of @main it
 * computes. */
#ifndef BYOCL_CLI_NODE_COSTS_H
#define BYOCL_CLI_NODE_COSTS_H

#include "cli_build.h"

typedef struct cli_node_costs {
    double *ms;             /* per node id of @main (malloc'ed): its share of the steps' times */
    int n_nodes;
    int n_steps;            /* steps of the compiled model */
    int runs;               /* timed runs, after the warm-up */
    int threads;            /* the compiled model's */
    double run_ms;          /* median of the timed runs, end to end */
    double steps_ms;        /* the steps' medians, summed */
    double unattributed_ms; /* of steps_ms: steps that compute no node of @main */
} cli_node_costs;

/* Builds `m` for req (cli_build_model, from a copy whose @main nodes are marked so that
 * each step's nodes can be traced back through partitioning: byocl_capture_mark_nodes),
 * runs it `repeat` times (>= 2) on the inputs --random-inputs gives (seed 0), and gives
 * each node of @main its share of the median time of the steps that compute it (the
 * runs after the first, a warm-up): a step that computes several nodes (a fusion group,
 * a region) splits its time in proportion to their estimated FLOPs
 * (byocl_split_node_flops), evenly when they all have none. Nodes no step computes (tuples,
 * views such as reshape) cost 0. Returns an exit code, with the error printed; free `out`
 * with cli_node_costs_free in every case. */
int cli_measure_node_costs(const cli_build_request *req, const byocl_module *m, int repeat,
                           cli_node_costs *out);
void cli_node_costs_free(cli_node_costs *c);

#endif
