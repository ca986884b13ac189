/* Accounting of tensor bytes against byocl_limits (include/byocl/limits.h). */
#ifndef BYOCL_LIMITS_IMPL_H
#define BYOCL_LIMITS_IMPL_H

#include <stdint.h>

#include "byocl/limits.h"

/* Counts `bytes` (for `what`, e.g. "tensor (2, 3) float32", named in the error) as in
 * use, or fails with BYOCL_ERR_NOMEM when that is over the total limit or `largest` (the
 * largest tensor in them; `bytes` for one tensor) is over the one-tensor limit. Nothing
 * is counted on failure. */
byocl_status base_limits_reserve(uint64_t bytes, uint64_t largest, const char *what,
                                 byocl_error *err);
/* Gives back bytes that base_limits_reserve counted. */
void base_limits_release(uint64_t bytes);

#endif
