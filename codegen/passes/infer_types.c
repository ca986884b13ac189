/* Pass: type inference. Every node gets its type from its op's type relation, callees
 * before callers; a declared return type must agree with the body's. */
#include <stdlib.h>

#include "byocl/passes.h"
#include "ops/op_impl.h"
#include "ops/node_util.h"

static byocl_status infer_function(byocl_module *m, byocl_function *fn, byocl_error *err)
{
    if (fn->body < 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "@%s has no body", fn->name);
    for (int id = 0; id < fn->n_nodes; id++) {
        byocl_status st = ops_infer_node(m, fn, id, err);
        if (st != BYOCL_OK) {
            ops_node_error_at(err, fn, id);
            return st;
        }
    }
    const byocl_type *body = fn->nodes[fn->body].type;
    if (fn->ret_type && fn->ret_type->kind != BYOCL_TYPE_NONE &&
        !byocl_type_equal(fn->ret_type, body)) {
        char a[256], b[256];
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "@%s is declared to return %s but its body has type %s", fn->name,
                               byocl_type_str(fn->ret_type, a, sizeof a),
                               byocl_type_str(body, b, sizeof b));
    }
    fn->ret_type = body;
    return BYOCL_OK;
}

byocl_status byocl_infer_types(byocl_module *m, byocl_error *err)
{
    int *order = malloc(sizeof *order * (size_t)(m->n_fns + 1));
    if (!order)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = ops_module_callee_order(m, order, err);
    for (int i = 0; i < m->n_fns && st == BYOCL_OK; i++)
        st = infer_function(m, m->fns[order[i]], err);
    free(order);
    return st;
}
