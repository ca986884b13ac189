/* nn.batch_matmul's geometry, shared by its type relation and reference kernel (nn.c)
 * and the LLVM lowering. */
#ifndef BYOCL_OPS_MATMUL_H
#define BYOCL_OPS_MATMUL_H

#include <stdbool.h>
#include <stdint.h>

#include "byocl/ir.h"

/* tensor_a [batch_a, M, K] ([batch_a, K, M] with transpose_a) times tensor_b
 * [batch_b, N, K] ([batch_b, K, N] without transpose_b) gives [batch, M, N]; a batch
 * of 1 serves every batch. */
typedef struct ops_bmm_geom {
    int64_t batch, m, k, n;
    int64_t batch_a, batch_b;
    bool transpose_a, transpose_b;
} ops_bmm_geom;

/* The geometry of a call with these attributes and operand shapes; type errors name the
 * operands and what differs. */
byocl_status ops_batch_matmul_geometry(const byocl_attrs *attrs, const byocl_shape *a,
                                       const byocl_shape *b, ops_bmm_geom *g, byocl_error *err);

#endif
