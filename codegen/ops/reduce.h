/* The reductions of the transform op group (sum, mean, prod, max, min, argmax, argmin,
 * all, any, variance): one implementation with a kind, shared by the reference kernels (transform.c) and the
 * host lowering (codegen/llvm/lower_pool.c), so both read the attributes the same way. */
#ifndef BYOCL_OPS_REDUCE_H
#define BYOCL_OPS_REDUCE_H

#include "op_impl.h"

typedef enum ops_reduce_kind {
    OPS_REDUCE_NONE = -1, /* not a reduction */
    OPS_REDUCE_SUM,
    OPS_REDUCE_MEAN,
    OPS_REDUCE_PROD,
    OPS_REDUCE_MAX,
    OPS_REDUCE_MIN,
    OPS_REDUCE_ARGMAX,
    OPS_REDUCE_ARGMIN,
    OPS_REDUCE_ALL,      /* bool in, bool out: every element is true (over none: true) */
    OPS_REDUCE_ANY,      /* bool in, bool out: some element is true (over none: false) */
    OPS_REDUCE_VARIANCE, /* variance(data, mean): sum of (data - mean)^2 over count (or
                          * count - 1 with unbiased), as TVM's op; float dtypes only */
} ops_reduce_kind;

/* The kind of the op named `op`, OPS_REDUCE_NONE for any other op. */
ops_reduce_kind ops_reduce_kind_of(const char *op);
/* The number of tensor arguments of the kind: 2 for variance (data and its mean), else 1. */
int ops_reduce_n_args(ops_reduce_kind kind);
/* True for max, min, argmax and argmin: no identity, so an empty reduction fails. */
bool ops_reduce_needs_element(ops_reduce_kind kind);
/* The dtype of the result for an input of dtype `in`: int32 for argmax and argmin (as in
 * TVM Relay), else `in`. */
byocl_dtype ops_reduce_out_dtype(ops_reduce_kind kind, byocl_dtype in);
/* Marks the reduced axes of a rank-`rank` input from the attributes axis and exclude
 * (None or [] reduces every axis); errors name a bad or repeated axis. */
byocl_status ops_reduce_axes(const byocl_attrs *attrs, int rank, bool *reduced,
                             byocl_error *err);

#endif
