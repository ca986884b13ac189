/* Helpers on nodes and calls that every layer above the ops uses: where a node is (for
 * errors), the order of a module's functions by their calls, one node's type. */
#ifndef BYOCL_NODE_UTIL_H
#define BYOCL_NODE_UTIL_H

#include "ir/ir_impl.h"

/* Prefixes err with "in @fn, %N (op) at L:C: " so a message says where it happened. */
void ops_node_error_at(byocl_error *err, const byocl_function *fn, int id);

/* Orders the module's functions so that every callee precedes its callers. Fills
 * order[0..n_fns); a call of a missing function or a recursive call is an error. */
byocl_status ops_module_callee_order(const byocl_module *m, int *order, byocl_error *err);

/* Types node `id` of `fn` from its arguments' types (which must be inferred): the step of
 * byocl_infer_types for one node, for frontends that need shapes while they build. The
 * error says what is wrong, without the node's location. */
byocl_status ops_infer_node(byocl_module *m, byocl_function *fn, int id, byocl_error *err);

#endif
