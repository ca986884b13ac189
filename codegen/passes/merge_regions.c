/* Pass: merge_regions (TVM's MergeCompilerRegions). Where a compiler_end of one region
 * feeds a compiler_begin of another region of the same compiler, the two regions can
 * become one: the pair of annotations goes and the value stays inside.
 *
 * A merge is refused when another path leads from the first region to the second through
 * a node outside both (a host node or a region of another compiler): the merged region
 * would feed that node and take its result back, a cycle. Candidates are tried in node
 * order of their compiler_begin, each against the regions merged so far (a union-find over
 * region numbers), so the result does not depend on anything but the graph.
 *
 * Rewriting: each compiler_begin of a merged pair is replaced by the value its
 * compiler_end closed; a compiler_end left without users (and not the result) goes too. */
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "rebuild.h"
#include "regions.h"

/* The group of node `id`'s region, or -1 for the host. */
static int group_of(const byocl_regions *r, int *parent, int id)
{
    return r->region_of[id] >= 0 ? pass_uf_find(parent, r->region_of[id]) : -1;
}

/* Whether some path goes from group `from` to group `to` through a node outside both.
 * `via` is scratch space of n_nodes flags. */
static bool path_around(const byocl_function *fn, const byocl_regions *r, int *parent, int from,
                        int to, bool *via)
{
    for (int id = 0; id < fn->n_nodes; id++) {
        const byocl_node *n = &fn->nodes[id];
        int g = group_of(r, parent, id);
        via[id] = false;
        for (int k = 0; k < n->n_args; k++) {
            int a = n->args[k];
            int ga = group_of(r, parent, a);
            if (g == to && via[a])
                return true;
            if (g != to && g != from && (via[a] || ga == from))
                via[id] = true;
        }
    }
    return false;
}

/* The merged pairs: merge[b] is true for each compiler_begin b that disappears. */
static byocl_status choose_merges(const byocl_function *fn, const byocl_regions *r,
                                  bool *merge, byocl_error *err)
{
    int *parent = malloc(sizeof(int) * (size_t)(r->n_regions + 1));
    bool *via = malloc(sizeof(bool) * (size_t)(fn->n_nodes + 1));
    if (!parent || !via) {
        free(parent);
        free(via);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory merging regions");
    }
    for (int R = 0; R < r->n_regions; R++)
        parent[R] = R;
    for (int id = 0; id < fn->n_nodes; id++) {
        merge[id] = false;
        if (!pass_is_compiler_begin(fn, id))
            continue;
        int e = fn->nodes[id].args[0];
        if (!pass_is_compiler_end(fn, e))
            continue;
        int from = group_of(r, parent, e), to = group_of(r, parent, id);
        if (strcmp(r->target[from], r->target[to]) != 0)
            continue;
        if (from != to && path_around(fn, r, parent, from, to, via))
            continue;
        if (from != to)
            parent[from > to ? from : to] = from < to ? from : to;
    }
    /* A pair goes when its two regions ended up in one group: a pair refused at its turn
     * still goes when later merges joined its regions some other way (the path that
     * forbade it then runs inside the group). */
    for (int id = 0; id < fn->n_nodes; id++) {
        if (!pass_is_compiler_begin(fn, id))
            continue;
        int e = fn->nodes[id].args[0];
        merge[id] =
            pass_is_compiler_end(fn, e) && group_of(r, parent, e) == group_of(r, parent, id);
    }
    free(parent);
    free(via);
    return BYOCL_OK;
}

/* Rebuilds @main without the merged pairs. */
static byocl_status rewrite(byocl_module *m, byocl_function *fn, const bool *merge,
                            byocl_error *err)
{
    int n = fn->n_nodes;
    /* An end is dropped when all its users are merged begins and it is not the result. */
    bool *keep_end = calloc((size_t)n + 1, sizeof(bool));
    if (!keep_end)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory merging regions");
    keep_end[fn->body] = true;
    for (int id = 0; id < n; id++)
        for (int k = 0; k < fn->nodes[id].n_args; k++)
            if (!merge[id])
                keep_end[fn->nodes[id].args[k]] = true;
    byocl_rebuild rb;
    byocl_status st = pass_rebuild_begin(&rb, m, fn, "merge_regions", err);
    for (int id = 0; id < n && st == BYOCL_OK; id++) {
        if (merge[id]) {
            rb.map[id] = rb.map[fn->nodes[fn->nodes[id].args[0]].args[0]];
            continue;
        }
        if (pass_is_compiler_end(fn, id) && !keep_end[id])
            continue;
        if (pass_rebuild_copy(&rb, id, NULL, err) < 0)
            st = err ? err->status : BYOCL_ERR_NOMEM;
    }
    free(keep_end);
    if (st == BYOCL_OK)
        return pass_rebuild_finish(&rb, rb.map[fn->body], err);
    pass_rebuild_abort(&rb);
    return st;
}

byocl_status byocl_merge_regions(byocl_module *m, byocl_error *err)
{
    byocl_function *fn;
    byocl_status st = pass_find_main(m, "byocl_merge_regions", &fn, err);
    if (st != BYOCL_OK)
        return st;
    byocl_regions r;
    st = pass_regions_analyze(fn, &r, err);
    if (st != BYOCL_OK)
        return st;
    st = pass_regions_check_convex(fn, &r, err);
    bool *merge = st == BYOCL_OK ? malloc(sizeof(bool) * (size_t)(fn->n_nodes + 1)) : NULL;
    if (st == BYOCL_OK && !merge)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory merging regions");
    if (st == BYOCL_OK)
        st = choose_merges(fn, &r, merge, err);
    bool any = false;
    for (int id = 0; st == BYOCL_OK && id < fn->n_nodes; id++)
        any |= merge[id];
    pass_regions_release(&r);
    if (st == BYOCL_OK && any)
        st = rewrite(m, fn, merge, err);
    free(merge);
    return st;
}
