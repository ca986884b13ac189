/* Shared by the op group "index" (index.c) and its LLVM lowering (llvm/lower_index.c):
 * the shape rules, so that kernel, type relation and generated code agree. */
#ifndef BYOCL_OPS_INDEX_H
#define BYOCL_OPS_INDEX_H

#include "op_impl.h"

/* strided_slice and broadcast_to read input element base + sum_d i_d * coef[d] for the
 * output element at multi-index i (coef 0 on broadcast axes, negative for a negative
 * stride). Fills the output shape too. `op` is the op's name. */
typedef struct ops_affine {
    int64_t base;
    int64_t coef[BYOCL_MAX_RANK];
} ops_affine;
byocl_status ops_affine_map(const char *op, const byocl_attrs *attrs, const byocl_shape *in,
                            byocl_shape *out, ops_affine *map, byocl_error *err);
/* Whether `op` is one of the ops ops_affine_map knows. */
bool ops_is_affine(const char *op);

/* take's modes: what an index outside [0, n) becomes. */
typedef enum ops_take_mode { OPS_TAKE_CLIP, OPS_TAKE_WRAP, OPS_TAKE_FAST } ops_take_mode;
ops_take_mode ops_take_mode_of(const byocl_attrs *attrs);
/* take's axis in [0, rank), or -1 for None (the data flattened). */
int ops_take_axis(const byocl_attrs *attrs, int rank);
/* take's batch_dims in [0, idx_rank] once checked (negative counts from the indices'
 * rank). */
int ops_take_batch_dims(const byocl_attrs *attrs, int idx_rank);
/* take's loops: batch x outer (data axes before the axis; outer those after batch_dims) x
 * m indices of each batch x inner elements copied per index from an axis of n; output
 * run (bo, j) is at (bo * m + j) * inner, index bo / outer * m + j, source (bo * n + at) *
 * inner. */
typedef struct ops_take_plan {
    int64_t batch, outer, m, n, inner;
} ops_take_plan;
void ops_take_plan_make(const byocl_attrs *attrs, const byocl_shape *data,
                        const byocl_shape *idx, ops_take_plan *p);
/* gather's axis in [0, rank). */
int ops_gather_axis(const byocl_attrs *attrs, int rank);
/* arange's element count: ceil((stop - start) / step), at least 0. */
int64_t ops_arange_count(double start, double stop, double step);

/* Whether trilu keeps the element at (row, col) of a matrix (attribute upper, diagonal k). */
bool ops_trilu_keeps(const byocl_attrs *attrs, int64_t k, int64_t row, int64_t col);
/* cumsum's loops: outer x len (the summed axis) x inner elements (axis None: the whole
 * input as one axis); returns the reverse attribute. */
bool ops_cumsum_plan(const byocl_attrs *attrs, const byocl_shape *in, int64_t *outer,
                     int64_t *len, int64_t *inner);
/* cumsum's result dtype: the dtype attribute, or the input's. */
byocl_dtype ops_cumsum_dtype(const byocl_attrs *attrs, byocl_dtype in);

/* scatter_elements' reduction and scatter_nd's mode. */
typedef enum ops_scatter_reduce {
    OPS_SCATTER_UPDATE, OPS_SCATTER_ADD, OPS_SCATTER_MUL, OPS_SCATTER_MIN, OPS_SCATTER_MAX
} ops_scatter_reduce;
ops_scatter_reduce ops_scatter_reduce_of(const byocl_attrs *attrs);

/* gather_nd and scatter_nd with Relay's layout: indices (M, B.., Y..) with the index depth
 * M first select, in each of `batch` batches (the b leading axes data and indices share),
 * `positions` slices of `slice` elements; row j of an index addresses data axis b + j. */
typedef struct ops_nd_plan {
    int m;                          /* the index depth                                  */
    int64_t batch, positions, slice;
    int64_t batch_size;             /* data elements per batch                          */
    int64_t dim[BYOCL_MAX_RANK];    /* the indexed axes' sizes                           */
    int64_t stride[BYOCL_MAX_RANK]; /* and strides in elements                           */
    byocl_shape shape;              /* gather_nd's result, scatter_nd's updates: B.. Y.. S.. */
} ops_nd_plan;
byocl_status ops_nd_plan_make(const char *op, int batch_dims, const byocl_shape *data,
                              const byocl_shape *idx, ops_nd_plan *p, byocl_error *err);

/* topk's lines: outer x len (the sorted axis) x inner; k of each kept. */
/* one_hot's result as (outer, depth, inner): the indices' axes before the new axis, the
 * new axis, the indices' axes after it. */
void ops_one_hot_plan(const byocl_attrs *attrs, const byocl_shape *idx, int64_t *outer,
                      int64_t *depth, int64_t *inner);

/* nn.pad's modes, and the input cell that cell i of a padded axis reads: i - before
 * inside the input (n cells), else -1 for "constant" (the pad value), the nearest end for
 * "edge", the mirror image without repeating the end for "reflect" (widths < n). */
typedef enum ops_pad_mode { OPS_PAD_CONSTANT, OPS_PAD_EDGE, OPS_PAD_REFLECT } ops_pad_mode;
ops_pad_mode ops_pad_mode_of(const byocl_attrs *attrs);
int64_t ops_pad_source(ops_pad_mode mode, int64_t i, int64_t before, int64_t n);
/* pad_width's (before, after) of axis d (checked against the rank by the type relation). */
void ops_pad_width(const byocl_attrs *attrs, int d, int64_t *before, int64_t *after);

typedef struct ops_topk {
    int axis;
    int64_t outer, len, inner, k;
    bool ascend;
    bool values, indices;     /* which results ret_type asks for (both: a tuple, values first) */
    byocl_dtype index_dtype;
} ops_topk;
/* False when k is larger than the axis. */
bool ops_topk_plan(const byocl_attrs *attrs, const byocl_shape *in, ops_topk *p);

#endif
