/* Evaluating one call at compile time with its op's reference kernel: what the
 * fold_constants pass (passes/fold_constants.c) and the ONNX importer's folding of shape
 * arithmetic share. */
#ifndef BYOCL_OPS_FOLD_H
#define BYOCL_OPS_FOLD_H

#include "op_impl.h"

/* How large a folded result may be. A folded constant is stored in the module, and
 * folding must not blow a small graph up into megabytes of data (a broadcast of a
 * scalar): OPS_FOLD_SMALL keeps results over OPS_FOLD_MAX_BYTES as calls (the ONNX
 * importer, which folds shape arithmetic as it builds each call, while every weight is
 * still held). OPS_FOLD_NO_GROWTH also folds a larger result that is no larger than its
 * constant arguments together: a transposed or reshaped weight (ONNX's MatMul by a weight
 * imports as nn.dense of its transpose) then is a constant that backends pack once, not a
 * transpose computed on every run (the fold_constants pass, which frees each argument
 * once its last user is folded). */
typedef enum ops_fold_limit { OPS_FOLD_SMALL, OPS_FOLD_NO_GROWTH } ops_fold_limit;

#define OPS_FOLD_MAX_BYTES ((size_t)1 << 20)

/* Node `id` of fn (typed) as a constant, in *out (a new reference), when it can be
 * computed now: a call of an op with a reference kernel whose arguments are all
 * constants (or tuples of constants) and whose result is one tensor within `limit`; or
 * shape_of of any tensor (its shape is static). Otherwise *out is NULL and the status
 * OK. A kernel error (an index out of range in constant data) is returned as it is. */
byocl_status ops_fold_node(const byocl_function *fn, int id, ops_fold_limit limit,
                           byocl_tensor **out, byocl_error *err);

/* ops_fold_node, and node `id` turned into a constant holding the result in place (its
 * arguments, attributes and op dropped; type and name kept) when there is one; *done
 * says whether it was. What fold_constants and the ONNX importer both do. */
byocl_status ops_fold_in_place(byocl_function *fn, int id, ops_fold_limit limit, bool *done,
                               byocl_error *err);

#endif
