/* DLPack: byocl's dtypes as DLPack types and back, and the checks of the DLTensors a
 * region module receives. */
#include <stdint.h>

#include "base/tensor_impl.h"
#include "dlpack.h"
#include "ir/ir_impl.h"

DLDataType byocl_dtype_to_dlpack(byocl_dtype dtype)
{
    switch (dtype) {
    case BYOCL_FLOAT32: return (DLDataType){kDLFloat, 32, 1};
    case BYOCL_FLOAT16: return (DLDataType){kDLFloat, 16, 1};
    case BYOCL_INT32: return (DLDataType){kDLInt, 32, 1};
    case BYOCL_INT64: return (DLDataType){kDLInt, 64, 1};
    case BYOCL_INT8: return (DLDataType){kDLInt, 8, 1};
    case BYOCL_UINT8: return (DLDataType){kDLUInt, 8, 1};
    case BYOCL_BOOL: return (DLDataType){kDLUInt, 1, 1};
    case BYOCL_FLOAT64: return (DLDataType){kDLFloat, 64, 1};
    case BYOCL_INT16: return (DLDataType){kDLInt, 16, 1};
    case BYOCL_UINT16: return (DLDataType){kDLUInt, 16, 1};
    case BYOCL_UINT32: return (DLDataType){kDLUInt, 32, 1};
    case BYOCL_UINT64: return (DLDataType){kDLUInt, 64, 1};
    case BYOCL_BFLOAT16: return (DLDataType){kDLBfloat, 16, 1};
    case BYOCL_DTYPE_COUNT: break;
    }
    return (DLDataType){kDLOpaqueHandle, 0, 0};
}

bool byocl_dtype_from_dlpack(DLDataType type, byocl_dtype *out)
{
    for (int d = 0; d < BYOCL_DTYPE_COUNT; d++) {
        DLDataType t = byocl_dtype_to_dlpack((byocl_dtype)d);
        if (t.code == type.code && t.bits == type.bits && t.lanes == type.lanes) {
            *out = (byocl_dtype)d;
            return true;
        }
    }
    return false;
}

int64_t dl_nbytes(const DLTensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        int64_t d = t->shape[i];
        if (d < 0 || (d != 0 && n > INT64_MAX / d))
            return -1;
        n *= d;
    }
    int64_t elem = ((int64_t)t->dtype.bits * t->dtype.lanes + 7) / 8;
    return elem != 0 && n > INT64_MAX / elem ? -1 : n * elem;
}

/* Whether `strides` (elements) describe compact C order for `shape`. */
static bool c_order(const DLTensor *t)
{
    if (!t->strides)
        return true;
    int64_t want = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != want)
            return false;
        want *= t->shape[i];
    }
    return true;
}

byocl_status dl_check(const DLTensor *t, const byocl_type *type, byocl_error *err)
{
    char want_s[256], got_s[256];
    byocl_type_str(type, want_s, sizeof want_s);
    if (!t)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "expected %s, got no tensor", want_s);
    if (t->device.device_type != kDLCPU)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "expected %s in host memory (kDLCPU), got device type %d", want_s,
                               (int)t->device.device_type);
    byocl_dtype dtype;
    if (!byocl_dtype_from_dlpack(t->dtype, &dtype))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "expected %s, got a DLPack type byocl does not know (code %u, "
                               "bits %u, lanes %u)",
                               want_s, (unsigned)t->dtype.code, (unsigned)t->dtype.bits,
                               (unsigned)t->dtype.lanes);
    if (t->ndim < 0 || t->ndim > BYOCL_MAX_RANK || (t->ndim > 0 && !t->shape))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "expected %s, got a tensor of rank %d",
                               want_s, t->ndim);
    byocl_type got = byocl_type_tensor(dtype, t->ndim, t->shape);
    if (!byocl_type_equal(&got, type))
        return byocl_error_set(err, BYOCL_ERR_TYPE, "expected %s, got %s", want_s,
                               byocl_type_str(&got, got_s, sizeof got_s));
    if (!c_order(t))
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "expected %s in C order, got strides that are not", want_s);
    if (!t->data && dl_nbytes(t) > 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "expected %s, got a tensor without data",
                               want_s);
    return BYOCL_OK;
}

