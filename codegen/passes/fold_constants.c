/* fold_constants: calls of @main whose value is known when compiling become constants
 * (TVM's FoldConstant). A call of an op with a reference kernel whose arguments are all
 * constants (or tuples of constants) is evaluated with that kernel, and shape_of of any
 * value becomes its (static) shape; results over OPS_FOLD_MAX_BYTES stay calls
 * (ops/fold.h). Folding goes in node order, so whole chains of shape arithmetic collapse;
 * the nodes nothing uses any more (also those the ONNX importer's folding left, which
 * runs this pass at its end) are then dropped by a rebuild of @main. */
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
    /* A folded node computes what the call did, so stopping half way leaves a valid
     * module. */
    for (int id = 0; st == BYOCL_OK && id < fn->n_nodes; id++) {
        bool done;
        st = ops_fold_in_place(fn, id, &done, err);
        if (st != BYOCL_OK) {
            byocl_error_prefix(err, "cannot fold: ");
            ops_node_error_at(err, fn, id);
        }
    }
    return st == BYOCL_OK ? drop_unused(m, fn, err) : st;
}
