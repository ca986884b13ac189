/* Measured costs of @main's nodes (cli_node_costs.h): build a marked copy, time each step
 * of every run, and share each step's median among the original nodes it computes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/capture.h"
#include "byocl/split.h"
#include "cli_inputs.h"
#include "cli_node_costs.h"
#include "cli_report.h"

/* One run of the timed loop: the executor, and each step's time per run. */
typedef struct timed_steps {
    byocl_executor *ex;
    int n_steps;
    int run;       /* the run under way */
    double *times; /* times[run * n_steps + step] */
} timed_steps;

static byocl_status run_and_record(void *user, byocl_error *err)
{
    timed_steps *t = user;
    byocl_status st = byocl_executor_run(t->ex, err);
    for (int s = 0; s < t->n_steps && st == BYOCL_OK; s++) {
        byocl_step_info info;
        st = byocl_executor_step(t->ex, s, &info, err);
        t->times[t->run * t->n_steps + s] = info.last_ms;
    }
    t->run++;
    return st;
}

/* The original nodes of @main that step `index` of ex computes, into nodes (room for
 * n_orig): the marks its nodes carry; a region whose function carries none (one the model
 * brought, partitioned already) stands for its call in @main. Returns how many. */
static int step_origins(const byocl_compiled *c, const byocl_executor *ex, int index,
                        int *nodes, int n_orig)
{
    const byocl_function *fn;
    const int *ids;
    int n = byocl_compiled_step_nodes(c, index, &fn, &ids), found = 0;
    for (int i = 0; i < n; i++) {
        int orig = byocl_capture_marked_node(fn, ids[i]), k = 0;
        while (k < found && nodes[k] != orig)
            k++;
        if (orig >= 0 && orig < n_orig && k == found)
            nodes[found++] = orig;
    }
    const byocl_function *main_fn = fn ? byocl_module_find(byocl_function_module(fn), "main")
                                       : NULL;
    byocl_step_info info;
    if (found == 0 && main_fn && main_fn != fn &&
        byocl_executor_step(ex, index, &info, NULL) == BYOCL_OK) {
        int orig = byocl_capture_marked_node(main_fn, info.node);
        if (orig >= 0 && orig < n_orig)
            nodes[found++] = orig;
    }
    return found;
}

/* Shares `ms` among the original nodes `nodes` (n of them, n >= 1) by their FLOPs. */
static void share(const byocl_function *orig_main, const int *nodes, int n, double ms,
                  double *cost)
{
    double flops = 0;
    for (int i = 0; i < n; i++)
        flops += (double)byocl_split_node_flops(orig_main, nodes[i]);
    for (int i = 0; i < n; i++)
        cost[nodes[i]] += flops > 0 ? ms * (double)byocl_split_node_flops(orig_main, nodes[i]) /
                                          flops
                                    : ms / n;
}

/* Each step's median over the timed runs, shared among its nodes. */
static int attribute(const byocl_compiled *c, const timed_steps *t, int repeat,
                     const byocl_function *orig_main, cli_node_costs *out)
{
    int runs = repeat - 1;
    double *column = malloc((size_t)runs * sizeof *column);
    int *nodes = malloc(((size_t)out->n_nodes + 1) * sizeof *nodes);
    if (!column || !nodes) {
        free(column);
        free(nodes);
        return cli_fail("out of memory");
    }
    for (int s = 0; s < t->n_steps; s++) {
        for (int r = 0; r < runs; r++)
            column[r] = t->times[(r + 1) * t->n_steps + s];
        double ms = cli_sort_median(column, runs);
        out->steps_ms += ms;
        int n = step_origins(c, t->ex, s, nodes, out->n_nodes);
        if (n == 0)
            out->unattributed_ms += ms;
        else
            share(orig_main, nodes, n, ms, out->ms);
    }
    free(column);
    free(nodes);
    return CLI_EXIT_OK;
}

int cli_measure_node_costs(const cli_build_request *req, const byocl_module *m, int repeat,
                           cli_node_costs *out)
{
    memset(out, 0, sizeof *out);
    const byocl_function *orig_main = byocl_module_find(m, "main");
    if (!orig_main)
        return cli_fail("the model has no @main");
    out->n_nodes = byocl_function_num_nodes(orig_main);
    out->runs = repeat - 1;
    out->ms = calloc((size_t)out->n_nodes + 1, sizeof *out->ms);
    if (!out->ms)
        return cli_fail("out of memory");
    byocl_error err;
    byocl_module *marked = byocl_module_clone(m, &err);
    if (!marked)
        return cli_fail_error(&err);
    byocl_capture_mark_nodes(marked);
    byocl_compiled *c = NULL;
    int rc = cli_build_model(req, marked, &c, NULL, &err) == BYOCL_OK ? CLI_EXIT_OK
                                                                      : cli_fail_error(&err);
    byocl_module_free(marked);
    cli_inputs in;
    timed_steps t = {0};
    double *ms = NULL;
    if (rc == CLI_EXIT_OK)
        rc = cli_inputs_of_function(&in, orig_main);
    else
        memset(&in, 0, sizeof in);
    if (rc == CLI_EXIT_OK)
        rc = cli_fill_random_inputs(&in, 0);
    if (rc == CLI_EXIT_OK)
        rc = cli_executor_with_inputs(c, &in, &t.ex);
    if (rc == CLI_EXIT_OK) {
        t.n_steps = byocl_executor_num_steps(t.ex);
        t.times = calloc((size_t)repeat * (size_t)t.n_steps + 1, sizeof *t.times);
        ms = calloc((size_t)repeat, sizeof *ms);
        if (!t.times || !ms)
            rc = cli_fail("out of memory");
    }
    char label[300];
    snprintf(label, sizeof label, "timing @main on target %s", req->target);
    if (rc == CLI_EXIT_OK &&
        cli_timed_runs(repeat, label, true, run_and_record, &t, ms, &err) != BYOCL_OK)
        rc = cli_fail_error(&err);
    if (rc == CLI_EXIT_OK) {
        out->n_steps = t.n_steps;
        out->threads = byocl_compiled_threads(c);
        out->run_ms = cli_sort_median(ms + 1, repeat - 1);
        rc = attribute(c, &t, repeat, orig_main, out);
    }
    free(ms);
    free(t.times);
    byocl_executor_free(t.ex);
    cli_inputs_free(&in);
    byocl_compiled_free(c);
    return rc;
}

void cli_node_costs_free(cli_node_costs *c)
{
    free(c->ms);
    memset(c, 0, sizeof *c);
}
