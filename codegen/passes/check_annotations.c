/* Pass: check_annotations. Hand-written (or generated) compiler_begin/compiler_end of
 * @main must describe regions that partition can cut out: region analysis (regions.c)
 * finds every inconsistency, and every region must be convex.
 *
 * With `complete`, the values that lack an annotation get one instead of an error: a
 * compiler_begin for each outside value a region uses (one per value and region, shared by
 * all of that region's users), a compiler_end for each region value that reaches the
 * result directly. The other errors stay errors. */
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "rebuild.h"
#include "regions.h"

/* The annotations inserted so far: (old value, region) -> fresh annotation id. */
typedef struct inserted {
    int n, cap;
    struct inserted_item {
        int value, region, id;
    } *items;
} inserted;

static int inserted_find(const inserted *s, int value, int region)
{
    for (int i = 0; i < s->n; i++)
        if (s->items[i].value == value && s->items[i].region == region)
            return s->items[i].id;
    return -1;
}

static bool inserted_add(inserted *s, int value, int region, int id)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        struct inserted_item *items = realloc(s->items, sizeof *items * (size_t)cap);
        if (!items)
            return false;
        s->items = items;
        s->cap = cap;
    }
    s->items[s->n++] = (struct inserted_item){value, region, id};
    return true;
}

/* The fresh annotation for old value `value` in `region` (made on first use). */
static int annotation_for(byocl_rebuild *rb, inserted *done, const byocl_regions *r,
                          int value, const byocl_region_gap *gap, byocl_error *err)
{
    /* Begins are shared per (value, region); ends per value. */
    int key_region = gap->end ? -1 : gap->region;
    int id = inserted_find(done, value, key_region);
    if (id >= 0)
        return id;
    id = pass_add_annotation(rb->fresh,
                             gap->end ? BYOCL_COMPILER_END : BYOCL_COMPILER_BEGIN,
                             rb->map[value], r->target[gap->region], err);
    if (id >= 0 && !inserted_add(done, value, key_region, id)) {
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory completing annotations");
        return -1;
    }
    return id;
}

/* Rebuilds @main with the gaps of `r` annotated. */
static byocl_status complete_gaps(byocl_module *m, byocl_function *fn, const byocl_regions *r,
                                  byocl_error *err)
{
    byocl_rebuild rb;
    byocl_status st = pass_rebuild_begin(&rb, m, fn, "complete", err);
    if (st != BYOCL_OK)
        return st;
    inserted done = {0, 0, NULL};
    int *args = malloc(sizeof(int) * (size_t)(fn->n_nodes + 1));
    int body = -1;
    if (!args)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory completing annotations");
    for (int id = 0; id < fn->n_nodes && st == BYOCL_OK; id++) {
        const byocl_node *n = &fn->nodes[id];
        for (int k = 0; k < n->n_args; k++)
            args[k] = rb.map[n->args[k]];
        const byocl_region_gap *leak = NULL;
        for (int g = 0; g < r->n_gaps && st == BYOCL_OK; g++) {
            const byocl_region_gap *gap = &r->gaps[g];
            if (gap->node != id)
                continue;
            if (gap->arg < 0) {
                leak = gap; /* the result itself: annotated after it is copied */
                continue;
            }
            int a = annotation_for(&rb, &done, r, n->args[gap->arg], gap, err);
            if (a < 0)
                st = err ? err->status : BYOCL_ERR_NOMEM;
            else
                args[gap->arg] = a;
        }
        if (st == BYOCL_OK && pass_rebuild_copy(&rb, id, args, err) < 0)
            st = err ? err->status : BYOCL_ERR_NOMEM;
        if (st == BYOCL_OK && id == fn->body) {
            body = rb.map[id];
            if (leak && (body = annotation_for(&rb, &done, r, id, leak, err)) < 0)
                st = err ? err->status : BYOCL_ERR_NOMEM;
        }
    }
    free(args);
    free(done.items);
    if (st == BYOCL_OK)
        return pass_rebuild_finish(&rb, body, err);
    pass_rebuild_abort(&rb);
    return st;
}

byocl_status byocl_check_annotations(byocl_module *m, bool complete, byocl_error *err)
{
    byocl_function *fn;
    byocl_status st = pass_find_main(m, "byocl_check_annotations", &fn, err);
    if (st != BYOCL_OK)
        return st;
    byocl_regions r;
    st = complete ? pass_regions_analyze_lenient(fn, &r, err) : pass_regions_analyze(fn, &r, err);
    if (st != BYOCL_OK)
        return st;
    if (r.n_gaps > 0) {
        st = complete_gaps(m, fn, &r, err);
        pass_regions_release(&r);
        if (st != BYOCL_OK)
            return st;
        fn = byocl_module_find(m, BYOCL_PASS_MAIN);
        st = pass_regions_analyze(fn, &r, err);
        if (st != BYOCL_OK)
            return st;
    }
    st = pass_regions_check_convex(fn, &r, err);
    pass_regions_release(&r);
    return st;
}
