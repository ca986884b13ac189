/* The graph executor's internals, by file:
 *   executor.c       byocl_executor: buffers, inputs, run, outputs, profile, copies between
 *                    memories
 *   rtmod_host.c     the host region module (a region built for the host, run by an
 *                    executor of its own)
 *   stages_run.c     running a split model's stages in order, one step of one item at a
 *                    time
 *   stages_pipeline.c  the same steps streamed: one worker thread per stage
 *   step_parts.c     the timed parts of region steps (byocl_compiled_step_part)
 * The compiled model it runs is codegen/driver/compiled.h. */
#ifndef BYOCL_EXECUTOR_IMPL_H
#define BYOCL_EXECUTOR_IMPL_H

#include "byocl/split.h"
#include "driver/compiled.h"

/* The data pointer the executor uses for value `value` (tests check buffer overlaps):
 * its host buffer, NULL for a value that lives in device memory only. */
void *exec_value_data(const byocl_executor *ex, int value);

/* ------------------------------------------------- stages_run.c, for the pipeline */

/* byocl_stages_run's argument checks: the stages, the inputs' count, the outputs. */
byocl_status exec_stages_check(const byocl_stages *s, int n_inputs, const void *inputs,
                               const void *outputs, const void *n_outputs, byocl_error *err);
/* *out (malloc'ed): per stage k, the last stage that reads k's outputs (k when none). */
byocl_status exec_stages_last_readers(const byocl_stages *s, int **out, byocl_error *err);
/* Runs stage k of one item on `ex` (NULL: the reference executor): its arguments from the
 * item's `inputs` and earlier stages' outs[], its outputs into outs[k]/n_outs[k]; then
 * frees the outputs of earlier stages that k was the last to read. */
byocl_status exec_stages_step(const byocl_stages *s, int k, byocl_executor *ex,
                              const int *last_reader, byocl_tensor *const *inputs,
                              byocl_tensor ***outs, int *n_outs, byocl_error *err);
/* Frees an item's per-stage outputs (and the two arrays). */
void exec_stages_outs_free(const byocl_stages *s, byocl_tensor ***outs, int *n_outs);

#endif
