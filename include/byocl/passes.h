/* byocl: passes over modules. Each one is a function of its own file in codegen/passes/. */
#ifndef BYOCL_PASSES_H
#define BYOCL_PASSES_H

#include "byocl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills every node's type through the ops' type relations, callees before callers.
 * Errors name the function, the node (as `byocl print` numbers it) and the op. */
byocl_status byocl_infer_types(byocl_module *m, byocl_error *err);

/* Checks that the module is well formed: a body in every function, argument ids in range
 * and earlier than their user, known ops with valid attributes and arity, callees that
 * exist with matching arity, unique parameter names, no recursion, and (when
 * `require_types`) every node typed. Errors name the function and node. */
byocl_status byocl_verify(const byocl_module *m, bool require_types, byocl_error *err);

/* Binds parameters of `@main` by name to constant tensors (TVM's bind_params_by_name):
 * each bound parameter disappears from the parameter list and its uses see the constant.
 * A name that is not a parameter, or a tensor whose dtype/shape differs from the
 * parameter's type, is an error. */
byocl_status byocl_bind_params(byocl_module *m, const char *const *names,
                               byocl_tensor *const *values, int n, byocl_error *err);

#ifdef __cplusplus
}
#endif
#endif
