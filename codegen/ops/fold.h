/* Evaluating one call at compile time with its op's reference kernel: what the
 * fold_constants pass (passes/fold_constants.c) and the ONNX importer's folding of shape
 * arithmetic share. */
#ifndef BYOCL_OPS_FOLD_H
#define BYOCL_OPS_FOLD_H

#include "op_impl.h"

/* Results larger than this are left as calls (a folded constant is stored in the
 * module: folding must not blow a small graph up into megabytes of data). */
#define OPS_FOLD_MAX_BYTES ((size_t)1 << 20)

/* Node `id` of fn (typed) as a constant, in *out (a new reference), when it can be
 * computed now: a call of an op with a reference kernel whose arguments are all
 * constants (or tuples of constants) and whose result is one tensor of at most
 * OPS_FOLD_MAX_BYTES; or shape_of of any tensor (its shape is static). Otherwise *out is
 * NULL and the status OK. A kernel error (an index out of range in constant data) is
 * returned as it is. */
byocl_status ops_fold_node(const byocl_function *fn, int id, byocl_tensor **out,
                           byocl_error *err);

/* ops_fold_node, and node `id` turned into a constant holding the result in place (its
 * arguments, attributes and op dropped; type and name kept) when there is one; *done
 * says whether it was. What fold_constants and the ONNX importer both do. */
byocl_status ops_fold_in_place(byocl_function *fn, int id, bool *done, byocl_error *err);

#endif
