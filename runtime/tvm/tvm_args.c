/* The tensor arguments of a region call, as tvm-ffi passes them, checked against the
 * region's types (tvm_args.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "byocl/runtime.h"
#include "tvm_args.h"

/* Appends to buf[0..len) at *at, never past its end. */
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    *at = n < 0 ? len : *at + (size_t)n;
}

/* "[1, 3, 8, 8]" of n dims; at most 16 are written. */
static void put_dims(char *buf, size_t len, size_t *at, const int64_t *dims, int n)
{
    put(buf, len, at, "[");
    for (int i = 0; i < n && i < 16; i++)
        put(buf, len, at, "%s%lld", i ? ", " : "", (long long)dims[i]);
    put(buf, len, at, "%s]", n > 16 ? ", ..." : "");
}

char *tvm_type_str(const byocl_type *type, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    put(buf, len, &at, "%s", byocl_dtype_name(type->dtype));
    put_dims(buf, len, &at, type->shape.dims, type->shape.rank);
    return buf;
}

/* The dtype of a DLTensor as TVM writes it ("float32", "int8", "bool", "float32x4"). */
static void put_dl_dtype(char *buf, size_t len, size_t *at, DLDataType t)
{
    static const char *const codes[] = {
        [kDLInt] = "int", [kDLUInt] = "uint", [kDLFloat] = "float", [kDLBfloat] = "bfloat",
        [kDLComplex] = "complex", [kDLBool] = "bool",
    };
    const char *code = t.code < sizeof codes / sizeof codes[0] ? codes[t.code] : NULL;
    if ((t.code == kDLUInt && t.bits == 1) || (t.code == kDLBool && t.bits == 8))
        put(buf, len, at, "bool");
    else if (code)
        put(buf, len, at, "%s%u", code, (unsigned)t.bits);
    else
        put(buf, len, at, "dtype(code %u, %u bits)", (unsigned)t.code, (unsigned)t.bits);
    if (t.lanes != 1)
        put(buf, len, at, "x%u", (unsigned)t.lanes);
}

/* Whether a DLTensor of dtype `t` holds `want`: byocl's own DLPack type, and for bool
 * also DLPack 1.x's {kDLBool, 8} (what newer producers write). */
static bool dtype_matches(DLDataType t, byocl_dtype want)
{
    byocl_dtype got;
    if (byocl_dtype_from_dlpack(t, &got))
        return got == want;
    return want == BYOCL_BOOL && t.code == kDLBool && t.bits == 8 && t.lanes == 1;
}

/* DLPack's device types as TVM names them ("cuda:0"). */
static void put_device(char *buf, size_t len, size_t *at, DLDevice d)
{
    static const char *const names[] = {
        [kDLCPU] = "cpu",         [kDLCUDA] = "cuda",        [kDLCUDAHost] = "cuda_host",
        [kDLOpenCL] = "opencl",   [kDLVulkan] = "vulkan",    [kDLMetal] = "metal",
        [kDLVPI] = "vpi",         [kDLROCM] = "rocm",        [kDLROCMHost] = "rocm_host",
        [kDLExtDev] = "ext_dev",  [kDLCUDAManaged] = "cuda_managed",
        [kDLOneAPI] = "oneapi",   [kDLWebGPU] = "webgpu",    [kDLHexagon] = "hexagon",
    };
    unsigned type = (unsigned)d.device_type;
    const char *name = type < sizeof names / sizeof names[0] ? names[type] : NULL;
    if (name)
        put(buf, len, at, "%s:%d", name, (int)d.device_id);
    else
        put(buf, len, at, "device type %u:%d", type, (int)d.device_id);
}

/* What a TVMFFIAny holds, for "expected a tensor, got ...". */
static void put_kind(char *buf, size_t len, size_t *at, const TVMFFIAny *arg)
{
    switch (arg->type_index) {
    case kTVMFFINone: put(buf, len, at, "None"); return;
    case kTVMFFIInt: put(buf, len, at, "int %lld", (long long)arg->v_int64); return;
    case kTVMFFIBool: put(buf, len, at, "bool %s", arg->v_int64 ? "True" : "False"); return;
    case kTVMFFIFloat: put(buf, len, at, "float %g", arg->v_float64); return;
    case kTVMFFIOpaquePtr: put(buf, len, at, "an opaque pointer"); return;
    case kTVMFFIDataType: put(buf, len, at, "a dtype"); return;
    case kTVMFFIDevice: put(buf, len, at, "a device"); return;
    case kTVMFFIRawStr:
    case kTVMFFISmallStr: put(buf, len, at, "a str"); return;
    case kTVMFFIByteArrayPtr:
    case kTVMFFISmallBytes: put(buf, len, at, "bytes"); return;
    default: break;
    }
    if (arg->type_index >= kTVMFFIStaticObjectBegin && arg->v_obj) {
        const TVMFFITypeInfo *info = TVMFFIGetTypeInfo(arg->type_index);
        if (info && info->type_key.data) {
            put(buf, len, at, "an object of type %.*s", (int)info->type_key.size,
                info->type_key.data);
            return;
        }
    }
    put(buf, len, at, "a value of type index %d", (int)arg->type_index);
}

/* Whether objects of type `index` are tensors: kTVMFFITensor or a type derived from it. */
static bool is_tensor_type(int32_t index)
{
    if (index == kTVMFFITensor)
        return true;
    if (index < kTVMFFIDynObjectBegin)
        return false;
    const TVMFFITypeInfo *info = TVMFFIGetTypeInfo(index);
    for (int32_t d = 0; info && d < info->type_depth; d++)
        if (info->type_ancestors[d] && info->type_ancestors[d]->type_index == kTVMFFITensor)
            return true;
    return false;
}

/* The shape and strides agree with compact C order (a dimension of size 1 may have any
 * stride, as DLPack allows; a tensor without elements any strides). */
static bool compact(const DLTensor *t)
{
    if (!t->strides)
        return true;
    int64_t want = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] == 0)
            return true;
        if (t->shape[i] != 1 && t->strides[i] != want)
            return false;
        want *= t->shape[i];
    }
    return true;
}

const char *tvm_arg_tensor(const TVMFFIAny *arg, const byocl_type *want, const DLTensor **out,
                           char *msg, size_t len)
{
    size_t at = 0;
    char want_s[256];
    tvm_type_str(want, want_s, sizeof want_s);
    msg[0] = '\0';
    *out = NULL;
    const DLTensor *t = NULL;
    if (arg->type_index == kTVMFFIDLTensorPtr)
        t = (const DLTensor *)arg->v_ptr;
    else if (arg->type_index >= kTVMFFIStaticObjectBegin && arg->v_obj &&
             is_tensor_type(arg->type_index))
        /* A tensor object: its DLTensor follows the object header. */
        t = (const DLTensor *)(const void *)((const char *)arg->v_obj + sizeof(TVMFFIObject));
    else {
        put(msg, len, &at, "expected a tensor %s, got ", want_s);
        put_kind(msg, len, &at, arg);
        return TVM_ARG_TYPE_ERROR;
    }
    if (!t) {
        put(msg, len, &at, "expected a tensor %s, got a null DLTensor pointer", want_s);
        return TVM_ARG_VALUE_ERROR;
    }
    bool dims_ok = t->ndim >= 0 && (t->ndim == 0 || t->shape);
    if (!dtype_matches(t->dtype, want->dtype)) {
        put(msg, len, &at, "expected %s, got ", want_s);
        put_dl_dtype(msg, len, &at, t->dtype);
        if (dims_ok)
            put_dims(msg, len, &at, t->shape, t->ndim);
        return TVM_ARG_TYPE_ERROR;
    }
    if (!dims_ok) {
        put(msg, len, &at, "expected %s, got a tensor of rank %d without a shape", want_s,
            (int)t->ndim);
        return TVM_ARG_VALUE_ERROR;
    }
    bool same_shape = t->ndim == want->shape.rank;
    for (int i = 0; same_shape && i < t->ndim; i++)
        same_shape = t->shape[i] == want->shape.dims[i];
    if (!same_shape) {
        put(msg, len, &at, "expected %s, got ", want_s);
        put_dl_dtype(msg, len, &at, t->dtype);
        put_dims(msg, len, &at, t->shape, t->ndim);
        return TVM_ARG_VALUE_ERROR;
    }
    if (t->device.device_type != kDLCPU) {
        put(msg, len, &at, "expected a tensor on the CPU (kDLCPU), got one on ");
        put_device(msg, len, &at, t->device);
        return TVM_ARG_VALUE_ERROR;
    }
    if (!compact(t)) {
        put(msg, len, &at, "expected a compact row-major tensor (strides NULL or those of C "
                           "order), got strides ");
        put_dims(msg, len, &at, t->strides, t->ndim);
        put(msg, len, &at, " for shape ");
        put_dims(msg, len, &at, t->shape, t->ndim);
        return TVM_ARG_VALUE_ERROR;
    }
    if (!t->data && byocl_shape_numel(&want->shape) > 0) {
        put(msg, len, &at, "expected %s, got a tensor without data (NULL)", want_s);
        return TVM_ARG_VALUE_ERROR;
    }
    *out = t;
    return NULL;
}

/* Raises `kind` with "byocl region <symbol>: <message>"; returns -1. */
int tvm_raise_error(const char *kind, const char *symbol, const char *fmt, ...)
{
    char msg[BYOCL_ERROR_MSG_MAX + 512];
    int at = snprintf(msg, sizeof msg, "byocl region %s: ", symbol ? symbol : "(no symbol)");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + at, sizeof msg - (size_t)at, fmt, ap);
    va_end(ap);
    TVMFFIErrorSetRaisedFromCStr(kind, msg);
    return -1;
}
