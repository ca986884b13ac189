/* fold_constants: calls of @main whose value is known when compiling become constants
 * (TVM's FoldConstant). A call of an op with a reference kernel whose arguments are all
 * constants (or tuples of constants) is evaluated with that kernel, and shape_of of any
 * value becomes its (static) shape; results over OPS_FOLD_MAX_BYTES that are larger than
 * their arguments stay calls (OPS_FOLD_NO_GROWTH, ops/fold.h). Folding goes in node order,
 * so whole chains of shape arithmetic collapse; the nodes nothing uses any more (also
 * those the ONNX importer's folding left, which runs this pass at its end) are then
 * dropped by a rebuild of @main. */
#include <stdlib.h>

#include "byocl/passes.h"
#include "ops/fold.h"
#include "ops/node_util.h"
#include "rebuild.h"

/* @main rebuilt with only the nodes its result (or nothing: parameters) needs. */
static byocl_status drop_unused(byocl_module *m, byocl_function *fn, byocl_error *err)
{
    bool *live = calloc((size_t)fn->n_nodes + 1, sizeof *live);
    if (!live)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory folding constants");
    live[fn->body] = true;
    bool all_live = true;
    for (int id = fn->n_nodes - 1; id >= 0; id--) {
        for (int k = 0; live[id] && k < fn->nodes[id].n_args; k++)
            live[fn->nodes[id].args[k]] = true;
        all_live &= live[id] || fn->nodes[id].kind == BYOCL_NODE_VAR;
    }
    if (all_live) {
        free(live);
        return BYOCL_OK;
    }
    byocl_rebuild rb;
    byocl_status st = pass_rebuild_begin(&rb, m, fn, "fold_constants", err);
    for (int id = 0; id < fn->n_nodes && st == BYOCL_OK; id++)
        if (live[id] && pass_rebuild_copy(&rb, id, NULL, err) < 0)
            st = err ? err->status : BYOCL_ERR_NOMEM;
    free(live);
    if (st == BYOCL_OK)
        return pass_rebuild_finish(&rb, rb.map[fn->body], err);
    if (rb.fresh)
        pass_rebuild_abort(&rb);
    return st;
}

byocl_status byocl_fold_constants(byocl_module *m, byocl_error *err)
{
    byocl_function *fn;
    byocl_status st = pass_find_main(m, "fold_constants", &fn, err);
    if (st == BYOCL_OK)
        st = byocl_infer_types(m, err);
    /* Uses of each node by calls and tuples, and by the result. */
    int *uses = st == BYOCL_OK ? calloc((size_t)fn->n_nodes + 1, sizeof *uses) : NULL;
    if (st == BYOCL_OK && !uses)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory folding constants");
    for (int id = 0; st == BYOCL_OK && id < fn->n_nodes; id++)
        for (int k = 0; k < fn->nodes[id].n_args; k++)
            uses[fn->nodes[id].args[k]]++;
    if (st == BYOCL_OK)
        uses[fn->body]++;
    /* A folded node computes what the call did, so stopping half way leaves a valid
     * module. */
    for (int id = 0; st == BYOCL_OK && id < fn->n_nodes; id++) {
        enum { MAX_ARGS = 64 };
        int args[MAX_ARGS], n_args = fn->nodes[id].n_args < MAX_ARGS ? fn->nodes[id].n_args : 0;
        for (int k = 0; k < n_args; k++)
            args[k] = fn->nodes[id].args[k];
        bool done;
        st = ops_fold_in_place(fn, id, OPS_FOLD_NO_GROWTH, &done, err);
        if (st != BYOCL_OK) {
            byocl_error_prefix(err, "cannot fold: ");
            ops_node_error_at(err, fn, id);
        }
        /* A constant whose last user was folded is dead: its data goes now rather than
         * at drop_unused, so that folding a model's weights (transposes) does not hold
         * every weight twice. Nothing reads a dead node's value: drop_unused copies the
         * live nodes only. */
        for (int k = 0; done && k < n_args; k++) {
            byocl_node *a = &fn->nodes[args[k]];
            if (--uses[args[k]] == 0 && a->kind == BYOCL_NODE_CONSTANT && a->value) {
                byocl_tensor_unref(a->value);
                a->value = NULL;
            }
        }
    }
    free(uses);
    return st == BYOCL_OK ? drop_unused(m, fn, err) : st;
}
