/* The executor's thread pool: `threads - 1` workers plus the thread that runs the model.
 * A kernel's tasks are split into one share per thread, consecutive ranges, each with an
 * atomic claim word: a thread runs its own share first, in order, then takes what is left
 * of the others', so fast threads take more. With the same split every step, a kernel
 * finds the rows or channels the previous one wrote on the same core in that core's
 * caches (with one claim word for all, the thread that claimed first took task 0, either
 * of them: a chain of four 32 -> 32 1x1 convs on 112x112 ran 11% faster with shares,
 * efficientnet_b0 5%, mobilenet_v2 and resnet18 2-3%; two threads on an Intel Xeon). The
 * caller works too and then waits until every task is done. Between
 * kernels a worker spins a little (a model's kernels follow each other within
 * microseconds, and waking a sleeping thread costs tens of them), then sleeps on a
 * condition variable.
 *
 * A spinning worker takes a job without the mutex: the caller writes the job, then moves
 * `generation`; the worker reads the job after it sees the move. The caller waits for the
 * job's tasks, not for its workers: a worker that wakes late, or not at all, costs the
 * job nothing when the others took its tasks. (Before, each job waited until every worker
 * had seen it: with four busy processes on the 2 cores, a worker's wake-up took
 * milliseconds and mobilenet_v2 ran in 140 ms with two threads against 27 with one.)
 * A late worker may so read the job's fields while the caller writes the next job's, so
 * they are atomics, and it runs no task of a job that is not the one it read: a task is
 * claimed by a compare-and-swap of a share's (job tag << 32 | next task), whose tag is the
 * job's `generation` and whose index the caller closes when the job ends. The mutex serves the
 * sleepers alone, and a caller takes it only when `sleepers` says someone sleeps, or to
 * wait for the last task. (Before that, a worker that saw the move blocked on the mutex
 * that the caller still held to broadcast: mobilenet_v2, 53 short steps, ran 2-3%
 * slower.) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "thread_pool.h"

/* Helgrind does not see the ordering the atomics give (a job written before `generation`
 * moves, a worker's work done before `busy` drops); these annotations tell it, and are
 * nothing outside valgrind or without its headers. */
#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#define POOL_HAPPENS_BEFORE(x) ANNOTATE_HAPPENS_BEFORE(x)
#define POOL_HAPPENS_AFTER(x) ANNOTATE_HAPPENS_AFTER(x)
#endif
#endif
#ifndef POOL_HAPPENS_BEFORE
#define POOL_HAPPENS_BEFORE(x) ((void)(x))
#define POOL_HAPPENS_AFTER(x) ((void)(x))
#endif

/* One thread's share of a job's tasks: the job's tag << 32 | its next task, on a cache
 * line of its own (every thread claims from it). */
typedef struct pool_share {
    _Alignas(64) atomic_uint_fast64_t claim;
} pool_share;

typedef struct pool_worker {
    struct byocl_thread_pool *pool;
    int index; /* its share: 1.. (the caller's is 0) */
} pool_worker;

struct byocl_thread_pool {
    int threads;
    int n_workers;
    pthread_t *workers;
    pool_worker *worker_args;
    pool_share *shares; /* one per thread */
    pthread_mutex_t mu;
    pthread_cond_t wake;  /* a new job (or stop) */
    pthread_cond_t done;  /* the job's last task is done */
    /* The current job, written before `generation` moves. */
    _Atomic(byocl_task_fn) fn;
    _Atomic(void *const *) args;
    _Atomic(void *) ctx;
    atomic_int_fast64_t n_tasks;
    atomic_ulong generation;    /* moves when a job (or stop) is published */
    atomic_int_fast64_t finished; /* tasks of the current job done */
    atomic_int sleepers;        /* workers waiting on `wake` (counted under mu) */
    atomic_bool stop;
    atomic_int_fast32_t result;
};

/* The task index of a job that has ended: above any task count (jobs have fewer than
 * 2^32 tasks). */
#define CLAIM_CLOSED 0xffffffffu

/* Spin iterations before sleeping: some tens of microseconds. */
#define SPIN_LIMIT 20000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

int base_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)n : 1;
}

/* The end of share `share`'s tasks: the shares split [0, n_tasks) into `threads`
 * consecutive ranges. */
static int64_t share_end(const byocl_thread_pool *pool, int64_t n_tasks, int share)
{
    return n_tasks * (share + 1) / pool->threads;
}

/* Claims the next task of share `share` of job `tag`; -1 when it has none left. */
static int64_t claim_task(byocl_thread_pool *pool, int share, int64_t n_tasks, uint32_t tag)
{
    atomic_uint_fast64_t *claim = &pool->shares[share].claim;
    int64_t end = share_end(pool, n_tasks, share);
    uint_fast64_t c = atomic_load(claim);
    int64_t task;
    do {
        task = (int64_t)(c & 0xffffffffu);
        if ((uint32_t)(c >> 32) != tag || task >= end)
            return -1;
    } while (!atomic_compare_exchange_weak(claim, &c, c + 1));
    return task;
}

/* Runs tasks of job `tag` until none are left: its own share's first, then the other
 * shares' in turn. The thread that runs the job's last task wakes the caller
 * (`is_caller` false) under mu, so a caller about to wait cannot miss it. */
static void work(byocl_thread_pool *pool, byocl_task_fn fn, void *const *args, void *ctx,
                 int64_t n_tasks, uint32_t tag, int own_share, bool is_caller)
{
    for (int k = 0; k < pool->threads; k++) {
        int share = (own_share + k) % pool->threads;
        for (int64_t task; (task = claim_task(pool, share, n_tasks, tag)) >= 0;) {
            int32_t r = fn(args, task, ctx);
            if (r != 0) {
                int_fast32_t zero = 0;
                atomic_compare_exchange_strong(&pool->result, &zero, r);
            }
            POOL_HAPPENS_BEFORE(&pool->finished);
            if (atomic_fetch_add(&pool->finished, 1) == n_tasks - 1 && !is_caller) {
                pthread_mutex_lock(&pool->mu);
                pthread_cond_signal(&pool->done);
                pthread_mutex_unlock(&pool->mu);
            }
        }
    }
}

static void *worker_main(void *arg)
{
    const pool_worker *self = arg;
    byocl_thread_pool *pool = self->pool;
    unsigned long seen = 0;
    for (;;) {
        for (int spin = 0; spin < SPIN_LIMIT && atomic_load(&pool->generation) == seen; spin++)
            cpu_relax();
        if (atomic_load(&pool->generation) == seen) {
            /* Counted before looking again: a caller that moves `generation` after this
             * look sees the count, and broadcasts under mu, which this thread holds until
             * it waits. */
            pthread_mutex_lock(&pool->mu);
            atomic_fetch_add(&pool->sleepers, 1);
            while (atomic_load(&pool->generation) == seen)
                pthread_cond_wait(&pool->wake, &pool->mu);
            atomic_fetch_sub(&pool->sleepers, 1);
            pthread_mutex_unlock(&pool->mu);
        }
        POOL_HAPPENS_AFTER(&pool->generation);
        if (atomic_load(&pool->stop))
            return NULL;
        seen = atomic_load(&pool->generation);
        work(pool, atomic_load(&pool->fn), atomic_load(&pool->args), atomic_load(&pool->ctx),
             atomic_load(&pool->n_tasks), (uint32_t)seen, self->index, false);
    }
}

/* Moves `generation` (the job or stop is written), and wakes the sleepers. */
static void publish(byocl_thread_pool *pool)
{
    POOL_HAPPENS_BEFORE(&pool->generation);
    atomic_fetch_add(&pool->generation, 1);
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->mu);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->mu);
    }
}

byocl_status base_thread_pool_new(int threads, byocl_thread_pool **out, byocl_error *err)
{
    *out = NULL;
    if (threads < 1)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "a thread pool needs at least 1 thread, "
                               "got %d", threads);
    byocl_thread_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    pool->threads = threads;
    pool->workers = calloc((size_t)threads, sizeof *pool->workers);
    pool->worker_args = calloc((size_t)threads, sizeof *pool->worker_args);
    pool->shares = aligned_alloc(_Alignof(pool_share), (size_t)threads * sizeof *pool->shares);
    if (!pool->workers || !pool->worker_args || !pool->shares) {
        free(pool->workers);
        free(pool->worker_args);
        free(pool->shares);
        free(pool);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < threads; i++)
        atomic_init(&pool->shares[i].claim, CLAIM_CLOSED);
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    atomic_init(&pool->fn, NULL);
    atomic_init(&pool->args, NULL);
    atomic_init(&pool->ctx, NULL);
    atomic_init(&pool->n_tasks, 0);
    atomic_init(&pool->finished, 0);
    atomic_init(&pool->result, 0);
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->stop, false);
    for (int i = 0; i < threads - 1; i++) {
        pool->worker_args[i] = (pool_worker){.pool = pool, .index = i + 1};
        if (pthread_create(&pool->workers[i], NULL, worker_main, &pool->worker_args[i]) != 0) {
            base_thread_pool_free(pool);
            return byocl_error_set(err, BYOCL_ERR_RUNTIME,
                                   "cannot start worker thread %d of %d", i + 1, threads - 1);
        }
        pool->n_workers++;
    }
    *out = pool;
    return BYOCL_OK;
}

void base_thread_pool_free(byocl_thread_pool *pool)
{
    if (!pool)
        return;
    atomic_store(&pool->stop, true);
    publish(pool);
    for (int i = 0; i < pool->n_workers; i++)
        pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->done);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->mu);
    free(pool->workers);
    free(pool->worker_args);
    free(pool->shares);
    free(pool);
}

int base_thread_pool_threads(const byocl_thread_pool *pool)
{
    return pool->threads;
}

int32_t base_thread_pool_run(byocl_thread_pool *pool, byocl_task_fn fn,
                             void *const *args, void *ctx, int64_t n_tasks)
{
    atomic_store(&pool->result, 0);
    if (pool->n_workers == 0 || n_tasks <= 1 || n_tasks >= (int64_t)CLAIM_CLOSED) {
        int32_t first = 0; /* every task runs; the first failure is the result */
        for (int64_t task = 0; task < n_tasks; task++) {
            int32_t r = fn(args, task, ctx);
            if (r != 0 && first == 0)
                first = r;
        }
        return first;
    }
    atomic_store(&pool->fn, fn);
    atomic_store(&pool->args, args);
    atomic_store(&pool->ctx, ctx);
    atomic_store(&pool->n_tasks, n_tasks);
    atomic_store(&pool->finished, 0);
    uint32_t tag = (uint32_t)(atomic_load(&pool->generation) + 1); /* the caller alone moves it */
    for (int i = 0; i < pool->threads; i++) {
        int64_t first = i ? share_end(pool, n_tasks, i - 1) : 0;
        atomic_store(&pool->shares[i].claim, (uint_fast64_t)tag << 32 | (uint_fast64_t)first);
    }
    publish(pool);
    work(pool, fn, args, ctx, n_tasks, tag, 0, true);
    for (int spin = 0; spin < SPIN_LIMIT && atomic_load(&pool->finished) < n_tasks; spin++)
        cpu_relax();
    if (atomic_load(&pool->finished) < n_tasks) {
        pthread_mutex_lock(&pool->mu);
        while (atomic_load(&pool->finished) < n_tasks)
            pthread_cond_wait(&pool->done, &pool->mu);
        pthread_mutex_unlock(&pool->mu);
    }
    POOL_HAPPENS_AFTER(&pool->finished);
    /* Workers that wake for this job from now on claim nothing from it. */
    for (int i = 0; i < pool->threads; i++)
        atomic_store(&pool->shares[i].claim, (uint_fast64_t)tag << 32 | CLAIM_CLOSED);
    return (int32_t)atomic_load(&pool->result);
}
