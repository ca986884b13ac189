/* The workers that run a kernel's tasks: a pool of threads that the executor keeps per
 * executor, each step's tasks spread over them and the calling thread. */
#ifndef BYOCL_THREAD_POOL_H
#define BYOCL_THREAD_POOL_H

#include <stdint.h>

#include "byocl/error.h"

/* One task of a kernel: the signature of the host backends' kernels (byocl_host_kernel_fn,
 * codegen/backend/host_backend.h). Returns 0, or a non-zero code that stops the step. */
typedef int32_t (*byocl_task_fn)(void *const *args, int64_t task, void *ctx);

typedef struct byocl_thread_pool byocl_thread_pool;

/* `threads` threads in all: threads - 1 workers plus the thread that calls run. */
byocl_status base_thread_pool_new(int threads, byocl_thread_pool **out, byocl_error *err);
void base_thread_pool_free(byocl_thread_pool *pool);
int base_thread_pool_threads(const byocl_thread_pool *pool);
/* Calls fn(args, task, ctx) for every task in [0, n_tasks), spread over the pool and the
 * calling thread; returns when all are done: 0, or the first non-zero result. */
int32_t base_thread_pool_run(byocl_thread_pool *pool, byocl_task_fn fn,
                             void *const *args, void *ctx, int64_t n_tasks);
/* The number of cores (at least 1). */
int base_cpu_count(void);

#endif
