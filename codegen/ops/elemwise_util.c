/* Helpers shared by the elementwise, transform and annotation op groups. */
#include <string.h>

#include "elemwise_util.h"

int64_t elemwise_load_int(const byocl_tensor *t, int64_t i)
{
    const void *p = byocl_tensor_cdata(t);
    switch (byocl_tensor_dtype(t)) {
    case BYOCL_INT32: return ((const int32_t *)p)[i];
    case BYOCL_INT64: return ((const int64_t *)p)[i];
    case BYOCL_INT8: return ((const int8_t *)p)[i];
    case BYOCL_UINT8: return ((const uint8_t *)p)[i];
    case BYOCL_BOOL: return ((const uint8_t *)p)[i] != 0;
    case BYOCL_INT16: return ((const int16_t *)p)[i];
    case BYOCL_UINT16: return ((const uint16_t *)p)[i];
    case BYOCL_UINT32: return ((const uint32_t *)p)[i];
    case BYOCL_UINT64: return (int64_t)((const uint64_t *)p)[i]; /* the bits; see the .h */
    default: return (int64_t)byocl_tensor_get(t, i);
    }
}

void elemwise_store_int(byocl_tensor *t, int64_t i, int64_t v)
{
    void *p = byocl_tensor_data(t);
    /* Unsigned intermediates make the wrap explicit (GCC and Clang convert to the signed
     * type modulo 2^N). */
    switch (byocl_tensor_dtype(t)) {
    case BYOCL_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case BYOCL_INT64: ((int64_t *)p)[i] = v; break;
    case BYOCL_INT8: ((int8_t *)p)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case BYOCL_UINT8: ((uint8_t *)p)[i] = (uint8_t)(uint64_t)v; break;
    case BYOCL_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case BYOCL_INT16: ((int16_t *)p)[i] = (int16_t)(uint16_t)(uint64_t)v; break;
    case BYOCL_UINT16: ((uint16_t *)p)[i] = (uint16_t)(uint64_t)v; break;
    case BYOCL_UINT32: ((uint32_t *)p)[i] = (uint32_t)(uint64_t)v; break;
    case BYOCL_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    default: byocl_tensor_set(t, i, (double)v); break;
    }
}

byocl_status elemwise_tensor_arg(const byocl_infer_ctx *ctx, int k, const byocl_type **out,
                                 byocl_error *err)
{
    *out = ops_infer_tensor_arg(ctx, k, err);
    if (*out)
        return BYOCL_OK;
    return err && err->status != BYOCL_OK ? err->status : BYOCL_ERR_TYPE;
}

byocl_status elemwise_infer_identity(const byocl_infer_ctx *ctx, byocl_type *out,
                                     byocl_error *err)
{
    const byocl_type *t;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &t, err);
    if (st == BYOCL_OK)
        *out = *t;
    return st;
}

byocl_status elemwise_check_arity(const char *op, int n_in, int want_in, int n_out,
                                  int want_out, byocl_error *err)
{
    if (n_in != want_in || n_out != want_out)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s kernel: got %d input and %d output tensors, expected %d and %d",
                               op, n_in, n_out, want_in, want_out);
    return BYOCL_OK;
}

byocl_status elemwise_ref_copy(const byocl_attrs *attrs, const byocl_tensor *const *in,
                               int n_in, byocl_tensor *const *out, int n_out, byocl_error *err)
{
    (void)attrs;
    byocl_status st = elemwise_check_arity("copy", n_in, 1, n_out, 1, err);
    if (st != BYOCL_OK)
        return st;
    if (byocl_tensor_dtype(in[0]) != byocl_tensor_dtype(out[0]) ||
        byocl_tensor_numel(in[0]) != byocl_tensor_numel(out[0]))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "copy kernel: output has %lld %s elements, input %lld %s",
                               (long long)byocl_tensor_numel(out[0]),
                               byocl_dtype_name(byocl_tensor_dtype(out[0])),
                               (long long)byocl_tensor_numel(in[0]),
                               byocl_dtype_name(byocl_tensor_dtype(in[0])));
    if (byocl_tensor_nbytes(in[0]))
        memcpy(byocl_tensor_data(out[0]), byocl_tensor_cdata(in[0]), byocl_tensor_nbytes(in[0]));
    return BYOCL_OK;
}
