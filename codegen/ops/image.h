/* Shared by the op group "image" (image.c) and its LLVM lowering (llvm/lower_image.c): how
 * image.resize2d reads its input, so that the kernel and the generated code agree to the
 * bit. */
#ifndef BYOCL_OPS_IMAGE_H
#define BYOCL_OPS_IMAGE_H

#include "op_impl.h"

/* resize2d is separable: output row y reads input rows index[y*taps + t] with weights
 * weight[y*taps + t] (t < taps), and likewise for columns; an output element is
 * sum_t sum_u wy[t] * wx[u] * in[iy[t]][ix[u]], summed in double. Nearest has one tap of
 * weight 1, linear two, cubic four. Indices are clamped into the axis (ONNX pads the edge).
 * With tf_crop_and_resize, an element whose row or column is outside the input is
 * extrapolation_value instead (as TVM writes it; ONNX's sum of weights times it is the
 * same value); such a position's taps read index 0 with weight 0. */
typedef struct ops_resize_axis {
    int64_t out;      /* output positions */
    int taps;         /* inputs read per position */
    int64_t *index;   /* out * taps, in [0, in) */
    double *weight;   /* out * taps */
    uint8_t *outside; /* out flags, 1 where the source coordinate lies outside [0, in - 1];
                         NULL with every other coordinate transformation */
} ops_resize_axis;

/* Whether output position i of the axis takes extrapolation_value. */
static inline bool ops_resize_outside(const ops_resize_axis *plan, int64_t i)
{
    return plan->outside && plan->outside[i];
}

/* The plan of one spatial axis (0: H, 1: W) of an NCHW input of `in` positions, from the
 * (normalized) attributes. Allocates index, weight and outside (ops_resize_axis_free
 * frees them). */
byocl_status ops_resize_plan(const byocl_attrs *attrs, int axis, int64_t in,
                             ops_resize_axis *plan, byocl_error *err);
void ops_resize_axis_free(ops_resize_axis *plan);
/* resize2d's result dtype: out_dtype, or the input's when it is "". */
byocl_dtype ops_resize_dtype(const byocl_attrs *attrs, byocl_dtype in);

#endif
