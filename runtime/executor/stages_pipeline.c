/* byocl_stages_pipeline: many items streamed through the stages, one worker thread per
 * stage. Worker k takes an item from queue k, runs stage k on it (exec_stages_step, as the
 * sequential runner does) and hands it to queue k + 1; the caller's thread feeds queue 0,
 * asking for each item's inputs as room frees up.
 * Queues hold at most `depth` items, so a slow stage holds the ones before it back and the
 * memory in flight stays bounded. Each queue has one reader and one writer and is FIFO:
 * items leave the last stage in input order. The first failure stops every worker: queue
 * operations return at once when the pipeline stops, so no thread waits forever. */
#include <pthread.h>
#include <stdlib.h>

#include "base/clock.h"
#include "byocl/reference.h"
#include "executor_impl.h"
#include "passes/split_impl.h"

/* One item on its way: its inputs and what each stage made of it so far. */
typedef struct item {
    int index;
    byocl_tensor **inputs; /* references owned */
    byocl_tensor ***outs;
    int *n_outs;
    double started_ms;
} item;

typedef struct queue {
    item **slots;
    int depth, head, count;
    bool closed; /* the writer is done: no item comes after those in the queue */
    pthread_cond_t not_empty, not_full;
} queue;

typedef struct pipeline {
    const byocl_stages *s;
    byocl_executor *const *executors;
    byocl_item_inputs_fn next_inputs;
    void *user;
    const int *last_reader;
    int n_stages;
    queue *queues; /* n_stages of them: queue k feeds stage k */
    pthread_mutex_t lock; /* every queue's, and the state below */
    bool stopped;
    byocl_error first_error;
    byocl_status status;
    byocl_tensor ***results; /* per item: the last stage's outputs */
    int *n_results;
    double *latency_ms, *busy_ms;
} pipeline;

static void item_free(const byocl_stages *s, item *it)
{
    if (it) {
        exec_stages_outs_free(s, it->outs, it->n_outs);
        if (it->inputs)
            byocl_tensors_free(it->inputs, byocl_stages_num_inputs(s));
        free(it);
    }
}

/* Stops the pipeline with `err` as its error (the first one wins) and wakes every thread. */
static void stop_locked(pipeline *p, byocl_status st, const byocl_error *err)
{
    if (!p->stopped && st != BYOCL_OK) {
        p->status = st;
        p->first_error = *err;
    }
    p->stopped = true;
    for (int k = 0; k < p->n_stages; k++) {
        pthread_cond_broadcast(&p->queues[k].not_empty);
        pthread_cond_broadcast(&p->queues[k].not_full);
    }
}

/* Stops the pipeline with `err`. */
static void stop_with(pipeline *p, byocl_status st, const byocl_error *err)
{
    pthread_mutex_lock(&p->lock);
    stop_locked(p, st, err);
    pthread_mutex_unlock(&p->lock);
}

/* Puts `it` into queue q, waiting for room; false when the pipeline stopped (the caller
 * still owns it). */
static bool push(pipeline *p, queue *q, item *it)
{
    pthread_mutex_lock(&p->lock);
    while (!p->stopped && q->count == q->depth)
        pthread_cond_wait(&q->not_full, &p->lock);
    bool ok = !p->stopped;
    if (ok) {
        q->slots[(q->head + q->count) % q->depth] = it;
        q->count++;
        pthread_cond_signal(&q->not_empty);
    }
    pthread_mutex_unlock(&p->lock);
    return ok;
}

/* The next item of queue q, waiting for one; NULL when the queue is closed and empty or
 * the pipeline stopped. */
static item *pop(pipeline *p, queue *q)
{
    pthread_mutex_lock(&p->lock);
    while (!p->stopped && q->count == 0 && !q->closed)
        pthread_cond_wait(&q->not_empty, &p->lock);
    item *it = NULL;
    if (!p->stopped && q->count > 0) {
        it = q->slots[q->head];
        q->head = (q->head + 1) % q->depth;
        q->count--;
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&p->lock);
    return it;
}

static void close_queue(pipeline *p, queue *q)
{
    pthread_mutex_lock(&p->lock);
    q->closed = true;
    pthread_cond_broadcast(&q->not_empty);
    pthread_mutex_unlock(&p->lock);
}

typedef struct worker {
    pipeline *p;
    int stage;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    pipeline *p = w->p;
    int k = w->stage;
    bool last = k == p->n_stages - 1;
    item *it;
    while ((it = pop(p, &p->queues[k]))) {
        byocl_error err;
        double t0 = base_now_ms();
        byocl_status st = exec_stages_step(p->s, k, p->executors ? p->executors[k] : NULL,
                                           p->last_reader, it->inputs, it->outs,
                                           it->n_outs, &err);
        double t1 = base_now_ms();
        p->busy_ms[k] += t1 - t0; /* this worker's own entry */
        if (st != BYOCL_OK) {
            byocl_error_prefix(&err, "stage %d, item %d: ", k, it->index);
            stop_with(p, st, &err);
            item_free(p->s, it);
            break;
        }
        if (last) { /* FIFO all along: items arrive here in input order */
            p->results[it->index] = it->outs[k];
            p->n_results[it->index] = it->n_outs[k];
            it->outs[k] = NULL;
            p->latency_ms[it->index] = t1 - it->started_ms;
            item_free(p->s, it);
        } else if (!push(p, &p->queues[k + 1], it)) {
            item_free(p->s, it);
        }
    }
    if (!last)
        close_queue(p, &p->queues[k + 1]);
    return NULL;
}

/* Feeds the items into queue 0, each with its inputs, then closes it. */
static void feed(pipeline *p, int n_items)
{
    int n_inputs = byocl_stages_num_inputs(p->s);
    for (int i = 0; i < n_items; i++) {
        byocl_error err;
        byocl_status st = BYOCL_OK;
        item *it = calloc(1, sizeof *it);
        if (it) {
            it->index = i;
            it->inputs = calloc((size_t)n_inputs + 1, sizeof *it->inputs);
            it->outs = calloc((size_t)p->n_stages, sizeof *it->outs);
            it->n_outs = calloc((size_t)p->n_stages, sizeof *it->n_outs);
        }
        if (!it || !it->inputs || !it->outs || !it->n_outs)
            st = byocl_error_set(&err, BYOCL_ERR_NOMEM, "out of memory");
        else if ((st = p->next_inputs(p->user, i, it->inputs, &err)) != BYOCL_OK)
            byocl_error_prefix(&err, "item %d: ", i);
        if (st != BYOCL_OK) {
            item_free(p->s, it);
            stop_with(p, st, &err);
            break;
        }
        it->started_ms = base_now_ms();
        if (!push(p, &p->queues[0], it)) {
            item_free(p->s, it);
            break;
        }
    }
    close_queue(p, &p->queues[0]);
}

static void pipeline_release(pipeline *p)
{
    for (int k = 0; p->queues && k < p->n_stages; k++) {
        queue *q = &p->queues[k];
        for (int i = 0; i < q->count; i++) /* items a stop left behind */
            item_free(p->s, q->slots[(q->head + i) % q->depth]);
        free(q->slots);
        pthread_cond_destroy(&q->not_empty);
        pthread_cond_destroy(&q->not_full);
    }
    free(p->queues);
    pthread_mutex_destroy(&p->lock);
}

byocl_status byocl_stages_pipeline(const byocl_stages *s, byocl_executor *const *executors,
                                   int depth, byocl_item_inputs_fn next_inputs, void *user,
                                   int n_items, byocl_tensor ****outputs, int **n_outputs,
                                   byocl_pipeline_stats *stats, byocl_error *err)
{
    if (!s || !next_inputs || !outputs || !n_outputs)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_stages_pipeline: stages, inputs and outputs are required");
    byocl_status st = BYOCL_OK;
    *outputs = NULL;
    *n_outputs = NULL;
    if (depth < 1 || n_items < 1)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_stages_pipeline: depth %d and items %d must be at least 1",
                               depth, n_items);
    int n = s->n_stages;
    pipeline p = {.s = s, .executors = executors, .next_inputs = next_inputs, .user = user,
                  .n_stages = n};
    pthread_mutex_init(&p.lock, NULL);
    int *last_reader = NULL;
    p.queues = calloc((size_t)n, sizeof *p.queues);
    p.results = calloc((size_t)n_items, sizeof *p.results);
    p.n_results = calloc((size_t)n_items, sizeof *p.n_results);
    p.latency_ms = calloc((size_t)n_items, sizeof *p.latency_ms);
    p.busy_ms = calloc((size_t)n, sizeof *p.busy_ms);
    pthread_t *threads = calloc((size_t)n, sizeof *threads);
    worker *workers = calloc((size_t)n, sizeof *workers);
    if (!p.queues || !p.results || !p.n_results || !p.latency_ms || !p.busy_ms || !threads ||
        !workers)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; p.queues && k < n; k++) {
        p.queues[k].depth = depth;
        pthread_cond_init(&p.queues[k].not_empty, NULL);
        pthread_cond_init(&p.queues[k].not_full, NULL);
        p.queues[k].slots = calloc((size_t)depth, sizeof *p.queues[k].slots);
        if (!p.queues[k].slots && st == BYOCL_OK)
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    if (st == BYOCL_OK)
        st = exec_stages_last_readers(s, &last_reader, err);
    p.last_reader = last_reader;
    int started = 0;
    double t0 = base_now_ms();
    for (; st == BYOCL_OK && started < n; started++) {
        workers[started] = (worker){.p = &p, .stage = started};
        if (pthread_create(&threads[started], NULL, work, &workers[started]) != 0)
            st = byocl_error_set(err, BYOCL_ERR_RUNTIME, "cannot start the worker of stage %d",
                                 started);
    }
    if (st != BYOCL_OK) { /* workers that started see the stop and return */
        pthread_mutex_lock(&p.lock);
        stop_locked(&p, BYOCL_OK, err);
        pthread_mutex_unlock(&p.lock);
    } else {
        feed(&p, n_items);
    }
    for (int k = 0; k < started && k < n; k++)
        pthread_join(threads[k], NULL);
    double total_ms = base_now_ms() - t0;
    if (st == BYOCL_OK && p.stopped) {
        st = p.status;
        if (err)
            *err = p.first_error;
    }
    if (st == BYOCL_OK && stats) {
        stats->total_ms = total_ms;
        stats->latency_ms = p.latency_ms;
        stats->busy_ms = p.busy_ms;
        p.latency_ms = p.busy_ms = NULL;
    }
    if (st == BYOCL_OK) {
        *outputs = p.results;
        *n_outputs = p.n_results;
        p.results = NULL;
        p.n_results = NULL;
    }
    for (int i = 0; p.results && i < n_items; i++)
        byocl_tensors_free(p.results[i], p.n_results[i]);
    free(p.results);
    free(p.n_results);
    free(p.latency_ms);
    free(p.busy_ms);
    pipeline_release(&p);
    free(last_reader);
    free(threads);
    free(workers);
    return st;
}
