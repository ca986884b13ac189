/* Which value of the original @main each region input and output is: the nodes of a copy
 * of @main are marked (in their source position) before partitioning, the passes carry
 * the marks along, and the capture reads them back and restores the positions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_impl.h"

/* A mark is a position no parser gives: line -(id + 1), column MARK_COL. Lines <= 0 are
 * not printed in error locations, so a pass that fails on the marked copy says no "at". */
#define MARK_COL (-7)

void byocl_capture_mark_nodes(byocl_module *m)
{
    byocl_function *fn = byocl_module_find(m, "main");
    for (int id = 0; fn && id < byocl_function_num_nodes(fn); id++)
        byocl_node_set_pos(fn, id, -(id + 1), MARK_COL);
}

int byocl_capture_marked_node(const byocl_function *fn, int id)
{
    if (!fn || id < 0 || id >= byocl_function_num_nodes(fn))
        return -1;
    int line, col;
    byocl_node_pos(fn, id, &line, &col);
    return col == MARK_COL && line < 0 ? -line - 1 : -1;
}

/* The node of `m`'s @main that calls the region function named `name`, or -1. */
int capture_call_of(const byocl_function *main_fn, const char *name)
{
    for (int id = 0; id < byocl_function_num_nodes(main_fn); id++) {
        const char *callee = byocl_node_callee(main_fn, id);
        if (callee && strcmp(callee, name) == 0)
            return id;
    }
    return -1;
}

static void trace(const capture_tracer *t, const byocl_function *fn, int id,
                  value_origin *out, int depth);

/* Output `field` of the region function `region`. */
static void trace_region_output(const capture_tracer *t, const byocl_function *region, int field,
                                value_origin *out, int depth)
{
    int body = byocl_function_body(region);
    if (byocl_node_kind_of(region, body) == BYOCL_NODE_TUPLE) {
        if (field < byocl_node_num_args(region, body))
            trace(t, region, byocl_node_arg(region, body, field), out, depth + 1);
    } else if (field == 0) {
        trace(t, region, body, out, depth + 1);
    }
}

static int function_index(const byocl_module *m, const byocl_function *fn)
{
    for (int f = 0; f < byocl_module_num_functions(m); f++)
        if (byocl_module_function_at(m, f) == fn)
            return f;
    return -1;
}

static void trace(const capture_tracer *t, const byocl_function *fn, int id,
                  value_origin *out, int depth)
{
    int f = function_index(t->part, fn);
    int orig = f >= 0 && f < t->n_functions ? t->marks[f][id] : -1;
    if (depth > 64)
        return;
    if (orig >= 0 && orig < byocl_function_num_nodes(t->orig_main)) {
        byocl_node_label(t->orig_main, orig, out->node, sizeof out->node);
        const char *op = byocl_node_op(t->orig_main, orig);
        byocl_node_kind kind = byocl_node_kind_of(t->orig_main, orig);
        const char *callee = byocl_node_callee(t->orig_main, orig);
        snprintf(out->op, sizeof out->op, "%s%s", callee ? "@" : "",
                 op       ? op
                 : callee ? callee
                 : kind == BYOCL_NODE_VAR      ? "Var"
                 : kind == BYOCL_NODE_CONSTANT ? "Constant"
                 : kind == BYOCL_NODE_TUPLE    ? "Tuple"
                                               : "TupleGetItem");
        return;
    }
    const byocl_function *main_fn = byocl_module_find(t->part, "main");
    byocl_node_kind kind = byocl_node_kind_of(fn, id);
    if (kind == BYOCL_NODE_VAR && fn == main_fn) {
        snprintf(out->node, sizeof out->node, "%%%s", byocl_node_name(fn, id));
        snprintf(out->op, sizeof out->op, "Var");
    } else if (kind == BYOCL_NODE_VAR) { /* a region's parameter: what its call passes */
        int call = main_fn ? capture_call_of(main_fn, byocl_function_name(fn)) : -1;
        for (int k = 0; call >= 0 && k < byocl_function_num_params(fn); k++)
            if (byocl_function_param(fn, k) == id)
                trace(t, main_fn, byocl_node_arg(main_fn, call, k), out, depth + 1);
    } else if (kind == BYOCL_NODE_CONSTANT) {
        snprintf(out->node, sizeof out->node, "a constant");
        snprintf(out->op, sizeof out->op, "Constant");
    } else if (kind == BYOCL_NODE_GETITEM && fn == main_fn) {
        int tuple = byocl_node_arg(fn, id, 0);
        const char *callee = byocl_node_callee(fn, tuple);
        const byocl_function *region = callee ? byocl_module_find(t->part, callee) : NULL;
        if (region)
            trace_region_output(t, region, byocl_node_index(fn, id), out, depth);
    } else if (kind == BYOCL_NODE_CALL && byocl_node_callee(fn, id)) {
        const byocl_function *region = byocl_module_find(t->part, byocl_node_callee(fn, id));
        if (region)
            trace_region_output(t, region, 0, out, depth);
    }
}

void capture_trace(const capture_tracer *t, const byocl_function *fn, int id,
                   value_origin *out)
{
    trace(t, fn, id, out, 0);
}

void capture_trace_output(const capture_tracer *t, const byocl_function *region, int field,
                          value_origin *out)
{
    trace_region_output(t, region, field, out, 0);
}

byocl_status capture_tracer_init(capture_tracer *t, const byocl_module *original,
                                 byocl_module *part, byocl_error *err)
{
    int nf = byocl_module_num_functions(part);
    *t = (capture_tracer){.part = part, .orig_main = byocl_module_find(original, "main")};
    t->marks = calloc((size_t)nf + 1, sizeof *t->marks);
    if (!t->marks || !t->orig_main)
        return byocl_error_set(err, t->marks ? BYOCL_ERR_NOT_FOUND : BYOCL_ERR_NOMEM,
                               t->marks ? "the model has no @main to capture" : "out of memory");
    t->n_functions = nf;
    for (int f = 0; f < nf; f++) {
        byocl_function *fn = byocl_module_function_at(part, f);
        int n = byocl_function_num_nodes(fn);
        if (!(t->marks[f] = malloc(((size_t)n + 1) * sizeof **t->marks)))
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        for (int id = 0; id < n; id++) {
            int orig = byocl_capture_marked_node(fn, id);
            t->marks[f][id] = orig;
            int line = 0, col = 0;
            if (orig >= 0 && orig < byocl_function_num_nodes(t->orig_main))
                byocl_node_pos(t->orig_main, orig, &line, &col);
            if (orig >= 0)
                byocl_node_set_pos(fn, id, line, col);
        }
    }
    return BYOCL_OK;
}

void capture_tracer_free(capture_tracer *t)
{
    for (int f = 0; t->marks && f < t->n_functions; f++)
        free(t->marks[f]);
    free(t->marks);
    t->marks = NULL;
}
