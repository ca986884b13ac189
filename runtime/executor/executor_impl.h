/* The graph executor's internals, by file:
 *   executor.c       byocl_executor: buffers, inputs, run, outputs, profile, copies between
 *                    memories
 *   rtmod_host.c     the host region module (a region built for the host, run by an
 *                    executor of its own)
 *   stages_run.c     running a split model's stages in order
 *   step_parts.c     the timed parts of region steps (byocl_compiled_step_part)
 * The compiled model it runs is codegen/driver/compiled.h. */
#ifndef BYOCL_EXECUTOR_IMPL_H
#define BYOCL_EXECUTOR_IMPL_H

#include "driver/compiled.h"

/* The data pointer the executor uses for value `value` (tests check buffer overlaps):
 * its host buffer, NULL for a value that lives in device memory only. */
void *exec_value_data(const byocl_executor *ex, int value);

#endif
