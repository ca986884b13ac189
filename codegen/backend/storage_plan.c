/* Memory reuse by liveness: tensors whose live ranges (first..last step) do not overlap
 * may share memory. storage_plan_offsets places them in one arena (the host executor's
 * pool); storage_plan gives them whole buffers (the OpenCL target's scratch buffers).
 * storage_plan: Greedy best fit, as TVM's graph memory planner does: walk the steps
 * in order, give each tensor a step defines the smallest free buffer that fits (growing
 * the largest free one when none fits), and free a buffer after its tensor's last use.
 * Freeing after the defining step's allocations keeps a step's outputs apart from its own
 * inputs, so kernels never read and write one buffer. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "storage_plan.h"

typedef struct plan_state {
    size_t *sizes;
    bool *free_now;
    int n, cap;
} plan_state;

/* The buffer for `bytes`: best fit among the free ones, else the largest free one grown,
 * else a new one. -1 when out of memory. */
static int take_buffer(plan_state *ps, size_t bytes)
{
    int best = -1, largest = -1;
    for (int b = 0; b < ps->n; b++) {
        if (!ps->free_now[b])
            continue;
        if (ps->sizes[b] >= bytes && (best < 0 || ps->sizes[b] < ps->sizes[best]))
            best = b;
        if (largest < 0 || ps->sizes[b] > ps->sizes[largest])
            largest = b;
    }
    int b = best >= 0 ? best : largest;
    if (b < 0) {
        if (ps->n == ps->cap) {
            int cap = ps->cap ? 2 * ps->cap : 16;
            size_t *sizes = realloc(ps->sizes, (size_t)cap * sizeof *sizes);
            if (sizes)
                ps->sizes = sizes;
            bool *fr = realloc(ps->free_now, (size_t)cap * sizeof *fr);
            if (fr)
                ps->free_now = fr;
            if (!sizes || !fr)
                return -1;
            ps->cap = cap;
        }
        b = ps->n++;
        ps->sizes[b] = 0;
    }
    if (ps->sizes[b] < bytes)
        ps->sizes[b] = bytes;
    ps->free_now[b] = false;
    return b;
}

/* A range with its index, sorted without global state (builds may run in parallel). */
typedef struct keyed_range {
    byocl_live_range r;
    int index;
} keyed_range;

/* By first step, larger tensors first within a step. */
static int by_first_then_size(const void *pa, const void *pb)
{
    const keyed_range *a = pa, *b = pb;
    if (a->r.first != b->r.first)
        return a->r.first < b->r.first ? -1 : 1;
    if (a->r.bytes != b->r.bytes)
        return a->r.bytes > b->r.bytes ? -1 : 1;
    return a->index - b->index;
}

static int by_last(const void *pa, const void *pb)
{
    const keyed_range *a = pa, *b = pb;
    if (a->r.last != b->r.last)
        return a->r.last < b->r.last ? -1 : 1;
    return a->index - b->index;
}

size_t storage_plan_live_peak(const byocl_live_range *ranges, int n, size_t align)
{
    if (align == 0)
        align = 1;
    int steps = 0;
    for (int i = 0; i < n; i++)
        if (ranges[i].last + 1 > steps)
            steps = ranges[i].last + 1;
    /* A difference array over the steps: +bytes where a range starts, -bytes after it. */
    int64_t *delta = calloc((size_t)steps + 2, sizeof *delta);
    if (!delta)
        return 0;
    for (int i = 0; i < n; i++) {
        size_t bytes = ranges[i].bytes == 0 ? align : (ranges[i].bytes + align - 1) / align * align;
        int first = ranges[i].first < 0 ? 0 : ranges[i].first;
        delta[first] += (int64_t)bytes;
        delta[ranges[i].last + 1] -= (int64_t)bytes;
    }
    int64_t live = 0, peak = 0;
    for (int s = 0; s <= steps; s++) {
        live += delta[s];
        if (live > peak)
            peak = live;
    }
    free(delta);
    return (size_t)peak;
}

byocl_status storage_plan(const byocl_live_range *ranges, int n, size_t align,
                          int *buffer_of, size_t **sizes, int *n_buffers,
                          byocl_error *err)
{
    *sizes = NULL;
    *n_buffers = 0;
    if (align == 0)
        align = 1;
    keyed_range *by_def = malloc((n > 0 ? (size_t)n : 1) * sizeof *by_def);
    keyed_range *by_end = malloc((n > 0 ? (size_t)n : 1) * sizeof *by_end);
    plan_state ps = {0};
    byocl_status st = BYOCL_OK;
    if (!by_def || !by_end) {
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory planning storage");
        goto done;
    }
    for (int i = 0; i < n; i++)
        by_def[i] = by_end[i] = (keyed_range){ranges[i], i};
    qsort(by_def, (size_t)n, sizeof *by_def, by_first_then_size);
    qsort(by_end, (size_t)n, sizeof *by_end, by_last);

    int next_end = 0;
    for (int d = 0; d < n;) {
        int step = by_def[d].r.first;
        /* Buffers of tensors last read before this step are free again. */
        while (next_end < n && by_end[next_end].r.last < step) {
            ps.free_now[buffer_of[by_end[next_end].index]] = true;
            next_end++;
        }
        for (; d < n && by_def[d].r.first == step; d++) {
            size_t bytes = by_def[d].r.bytes;
            bytes = bytes == 0 ? align : (bytes + align - 1) / align * align;
            int b = take_buffer(&ps, bytes);
            if (b < 0) {
                st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory planning storage");
                goto done;
            }
            buffer_of[by_def[d].index] = b;
        }
    }
    *sizes = ps.sizes;
    *n_buffers = ps.n;
    ps.sizes = NULL;
done:
    free(ps.sizes);
    free(ps.free_now);
    free(by_def);
    free(by_end);
    return st;
}

/* Larger first; then earlier; then by index (a total order: qsort is not stable). */
static int by_size_then_first(const void *pa, const void *pb)
{
    const keyed_range *a = pa, *b = pb;
    if (a->r.bytes != b->r.bytes)
        return a->r.bytes > b->r.bytes ? -1 : 1;
    if (a->r.first != b->r.first)
        return a->r.first < b->r.first ? -1 : 1;
    return a->index - b->index;
}

/* A placed range: its offset and rounded size. */
typedef struct placed_range {
    size_t offset, bytes;
} placed_range;

static int by_offset(const void *pa, const void *pb)
{
    const placed_range *a = pa, *b = pb;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

byocl_status storage_plan_offsets(const byocl_live_range *ranges, int n, size_t align,
                                  size_t *offset_of, size_t *arena_bytes, byocl_error *err)
{
    *arena_bytes = 0;
    if (align == 0)
        align = 1;
    keyed_range *order = malloc((n > 0 ? (size_t)n : 1) * sizeof *order);
    int *placed = malloc((n > 0 ? (size_t)n : 1) * sizeof *placed);
    placed_range *near = malloc((n > 0 ? (size_t)n : 1) * sizeof *near);
    if (!order || !placed || !near) {
        free(order);
        free(placed);
        free(near);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory planning storage");
    }
    for (int i = 0; i < n; i++)
        order[i] = (keyed_range){ranges[i], i};
    qsort(order, (size_t)n, sizeof *order, by_size_then_first);
    size_t arena = 0;
    for (int k = 0; k < n; k++) {
        const byocl_live_range *r = &order[k].r;
        size_t bytes = r->bytes == 0 ? align : (r->bytes + align - 1) / align * align;
        int n_near = 0; /* the placed ranges live at some step of this one */
        for (int j = 0; j < k; j++) {
            const byocl_live_range *o = &ranges[placed[j]];
            if (o->last >= r->first && r->last >= o->first) {
                size_t ob = o->bytes == 0 ? align : (o->bytes + align - 1) / align * align;
                near[n_near++] = (placed_range){offset_of[placed[j]], ob};
            }
        }
        qsort(near, (size_t)n_near, sizeof *near, by_offset);
        /* The smallest gap that fits; else the end of the ones in the way. */
        size_t at = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
        for (int j = 0; j < n_near; j++) {
            if (near[j].offset > at) {
                size_t gap = near[j].offset - at;
                if (gap >= bytes && gap < best_gap) {
                    best = at;
                    best_gap = gap;
                }
            }
            if (near[j].offset + near[j].bytes > at)
                at = near[j].offset + near[j].bytes;
        }
        offset_of[order[k].index] = best != SIZE_MAX ? best : at;
        placed[k] = order[k].index;
        if (offset_of[order[k].index] + bytes > arena)
            arena = offset_of[order[k].index] + bytes;
    }
    free(order);
    free(placed);
    free(near);
    *arena_bytes = arena;
    return BYOCL_OK;
}
