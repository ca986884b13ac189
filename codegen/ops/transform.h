/* Shared by the transform op group (transform.c) and the code generators (llvm/
 * lower_transform.c, opencl/cl_emit.c): transpose, nn.depth_to_space and
 * nn.space_to_depth as one element move, so that kernel and generated code agree. */
#ifndef BYOCL_OPS_TRANSFORM_H
#define BYOCL_OPS_TRANSFORM_H

#include "op_impl.h"

/* The input viewed as `view` (the same elements in C order), its axes permuted: output
 * axis d is view axis perm[d], and the output holds the permuted view in C order.
 * transpose's view is its input; depth_to_space and space_to_depth view their NCHW input
 * at rank 6 with the block split out (ONNX's definition of the two). */
typedef struct ops_permute {
    byocl_shape view;
    int perm[BYOCL_MAX_RANK];
    byocl_shape out; /* the op's result (the permuted view, axes merged for the block ops) */
} ops_permute;

/* Whether `op` is one that ops_permute_plan knows. */
bool ops_is_permute(const char *op);
/* The plan of a call of `op` (transpose, nn.depth_to_space or nn.space_to_depth) with
 * `attrs` on an input of shape `in`; errors say what does not fit, as the type relation
 * does. */
byocl_status ops_permute_plan(const char *op, const byocl_attrs *attrs, const byocl_shape *in,
                              ops_permute *p, byocl_error *err);

#endif
