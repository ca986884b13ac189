/* Buffer reuse by liveness (greedy best fit): the host executor's storage plan and the
 * OpenCL target's scratch buffers both place tensors with it. */
#ifndef BYOCL_STORAGE_PLAN_H
#define BYOCL_STORAGE_PLAN_H

#include <stddef.h>

#include "byocl/error.h"

/* A tensor that needs a buffer from step `first` to step `last` (inclusive). */
typedef struct byocl_live_range {
    size_t bytes;
    int first, last;
} byocl_live_range;

/* Gives every range a buffer so that ranges that overlap in time never share one, reusing
 * buffers greedily: at each step the tensors it defines (largest first) take the smallest
 * free buffer that fits, else the largest free buffer (grown), else a new one; buffers
 * free up after the last step that reads them. buffer_of[i] is range i's buffer;
 * *sizes (malloc'ed) the buffers' sizes, each a multiple of `align`. */
byocl_status storage_plan(const byocl_live_range *ranges, int n, size_t align,
                          int *buffer_of, size_t **sizes, int *n_buffers,
                          byocl_error *err);

#endif
