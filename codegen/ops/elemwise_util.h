/* Helpers shared by the elementwise, transform and annotation op groups: integer element
 * access without a detour through double (int64 keeps all 64 bits), the identity type
 * relation and the copying kernel. */
#ifndef BYOCL_ELEMWISE_UTIL_H
#define BYOCL_ELEMWISE_UTIL_H

#include "op_impl.h"

/* Element i of an integer or bool tensor, sign- or zero-extended to 64 bits. A uint64
 * comes back as its bits: callers that compare, divide or convert it to double must treat
 * it as unsigned (byocl_dtype_is_unsigned), the wrapping +, -, * need not. */
int64_t elemwise_load_int(const byocl_tensor *t, int64_t i);
/* Stores v at flat index i, wrapped to the dtype's width (two's complement); bool stores
 * v != 0. Integer and bool dtypes only. */
void elemwise_store_int(byocl_tensor *t, int64_t i, int64_t v);
/* v (as elemwise_load_int gives it) as a key whose signed order is the dtype's order:
 * a uint64 with its top bit flipped, anything else as it is. */
static inline int64_t elemwise_order_key(byocl_dtype dtype, int64_t v)
{
    return dtype == BYOCL_UINT64 ? (int64_t)((uint64_t)v ^ (1ull << 63)) : v;
}

/* Argument k as a tensor type, or the error of ops_infer_tensor_arg. */
byocl_status elemwise_tensor_arg(const byocl_infer_ctx *ctx, int k, const byocl_type **out,
                                 byocl_error *err);
/* Type relation of ops whose result has the type of their one tensor argument. */
byocl_status elemwise_infer_identity(const byocl_infer_ctx *ctx, byocl_type *out,
                                     byocl_error *err);
/* Checks a kernel got the tensor counts it needs (a caller's bug otherwise). */
byocl_status elemwise_check_arity(const char *op, int n_in, int want_in, int n_out,
                                  int want_out, byocl_error *err);
/* Kernel of every op that only relabels the shape (copy, reshape, squeeze, annotations):
 * copies in[0]'s bytes into out[0], which must hold as many elements of the same dtype. */
byocl_status elemwise_ref_copy(const byocl_attrs *attrs, const byocl_tensor *const *in,
                               int n_in, byocl_tensor *const *out, int n_out, byocl_error *err);

#endif
