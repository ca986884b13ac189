/* Where a node is, for errors ("in @main, %78 (nn.conv2d) at 4:8: "), and the callee-first
 * order of a module's functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_util.h"
#include "op_impl.h"

void ops_node_error_at(byocl_error *err, const byocl_function *fn, int id)
{
    char label[128], what[160] = "", where[64] = "";
    const byocl_node *n = &fn->nodes[id];
    byocl_node_label(fn, id, label, sizeof label);
    if (n->kind == BYOCL_NODE_CALL)
        snprintf(what, sizeof what, " (%s%s)", n->op ? "" : "@", n->op ? n->op->name : n->callee);
    if (n->line > 0)
        snprintf(where, sizeof where, " at %d:%d", n->line, n->col);
    byocl_error_prefix(err, "in @%s, %s%s%s: ", fn->name, label, what, where);
}

enum { UNVISITED, VISITING, DONE };

static int fn_index(const byocl_module *m, const char *name)
{
    for (int i = 0; i < m->n_fns; i++)
        if (strcmp(m->fns[i]->name, name) == 0)
            return i;
    return -1;
}

/* Depth-first over calls; `stack` holds the current path for the recursion message. */
static byocl_status visit(const byocl_module *m, int f, int *state, int *order, int *n_order,
                          int *stack, int depth, byocl_error *err)
{
    if (state[f] == DONE)
        return BYOCL_OK;
    stack[depth] = f;
    if (state[f] == VISITING) {
        char path[1024] = "";
        size_t at = 0;
        int start = 0;
        while (stack[start] != f)
            start++;
        for (int i = start; i <= depth && at < sizeof path; i++)
            at += (size_t)snprintf(path + at, sizeof path - at, "%s@%s", i > start ? " -> " : "",
                                   m->fns[stack[i]]->name);
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "recursive call of global functions: %s", path);
    }
    state[f] = VISITING;
    const byocl_function *fn = m->fns[f];
    for (int id = 0; id < fn->n_nodes; id++) {
        const byocl_node *n = &fn->nodes[id];
        if (n->kind != BYOCL_NODE_CALL || !n->callee)
            continue;
        int g = fn_index(m, n->callee);
        if (g < 0) {
            byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "call of @%s, which is not defined",
                            n->callee);
            ops_node_error_at(err, fn, id);
            return BYOCL_ERR_NOT_FOUND;
        }
        byocl_status st = visit(m, g, state, order, n_order, stack, depth + 1, err);
        if (st != BYOCL_OK)
            return st;
    }
    state[f] = DONE;
    order[(*n_order)++] = f;
    return BYOCL_OK;
}

byocl_status ops_module_callee_order(const byocl_module *m, int *order, byocl_error *err)
{
    int *state = calloc((size_t)m->n_fns + 1, sizeof *state);
    int *stack = calloc((size_t)m->n_fns + 2, sizeof *stack);
    if (!state || !stack) {
        free(state);
        free(stack);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    int n_order = 0;
    byocl_status st = BYOCL_OK;
    for (int f = 0; f < m->n_fns && st == BYOCL_OK; f++)
        st = visit(m, f, state, order, &n_order, stack, 0, err);
    free(state);
    free(stack);
    return st;
}
