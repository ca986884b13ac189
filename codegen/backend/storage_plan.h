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
/* Places every range at a byte offset of one arena so that ranges that overlap in time
 * never overlap in memory (TFLite's greedy-by-size: the largest first, each at the
 * smallest gap between the ranges already placed that it overlaps in time, else after
 * them). offset_of[i] is range i's offset, a multiple of `align`; *arena_bytes the
 * arena's size. Unlike storage_plan's whole buffers, a tensor may reuse part of a larger
 * dead one, which keeps the arena near storage_plan_live_peak. */
byocl_status storage_plan_offsets(const byocl_live_range *ranges, int n, size_t align,
                                  size_t *offset_of, size_t *arena_bytes, byocl_error *err);
/* The most bytes live at one step (each range rounded up to `align`): no plan for this
 * order of steps can use less, so a plan's total against it says what reuse lost to
 * fragmentation. */
size_t storage_plan_live_peak(const byocl_live_range *ranges, int n, size_t align);

#endif
