/* Internal tensor helpers for the executors: tensors over memory someone else owns. */
#ifndef BYOCL_TENSOR_IMPL_H
#define BYOCL_TENSOR_IMPL_H

#include "byocl/tensor.h"

/* A tensor whose data are `data` (numel * dtype size bytes, not copied, not owned): a view
 * into an executor's buffer, or a kernel argument. NULL with err set on a bad shape or no
 * memory. Release it with base_tensor_wrap_free, never with byocl_tensor_unref while
 * it is the last reference. */
byocl_tensor *base_tensor_wrap(byocl_dtype dtype, const byocl_shape *shape, void *data,
                               byocl_error *err);
/* Frees the tensor made by base_tensor_wrap, leaving its data alone. NULL is fine. */
void base_tensor_wrap_free(byocl_tensor *t);

#endif
