/* DLPack tensors as region modules receive them: their size and the checks every module
 * makes of what it was given (runtime/module/dlpack.c). */
#ifndef BYOCL_DLPACK_H
#define BYOCL_DLPACK_H

#include <stdint.h>

#include "byocl/runtime.h"

/* Bytes of a DLTensor's data; -1 when the shape is negative or overflows. */
int64_t dl_nbytes(const DLTensor *t);
/* Checks that `t` is a host tensor of `type` in compact C order; the error says
 * "expected <type>, got <what>" (callers prefix what the tensor is). */
byocl_status dl_check(const DLTensor *t, const byocl_type *type, byocl_error *err);

#endif
