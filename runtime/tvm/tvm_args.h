/* The tensor arguments of a region call, as tvm-ffi passes them (TVMFFIAny values), and
 * their checks against the region's types. */
#ifndef BYOCL_TVM_ARGS_H
#define BYOCL_TVM_ARGS_H

#include <stddef.h>

#include <tvm/ffi/c_api.h>

#include "byocl/ir.h"

/* The kinds of error tvm-ffi raises (Python's exception names). */
#define TVM_ARG_TYPE_ERROR "TypeError"
#define TVM_ARG_VALUE_ERROR "ValueError"

/* The DLTensor of `arg` (kTVMFFIDLTensorPtr or kTVMFFITensor), checked against `want` (a
 * tensor type): dtype, shape, device kDLCPU, compact row-major strides, data. On success
 * *out is the tensor and the result NULL; otherwise the result is the error's kind and
 * `msg` says what is wrong ("expected float32[4, 3], got float32[4]"). */
const char *tvm_arg_tensor(const TVMFFIAny *arg, const byocl_type *want, const DLTensor **out,
                           char *msg, size_t len);

/* `type` as messages write it: "float32[1, 3, 8, 8]" ("float32[]" for a scalar). */
char *tvm_type_str(const byocl_type *type, char *buf, size_t len);

/* Raises `kind` through tvm-ffi with "byocl region <symbol>: <message>"; returns -1. */
int tvm_raise_error(const char *kind, const char *symbol, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
