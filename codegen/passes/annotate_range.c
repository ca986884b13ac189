/* annotate_range: the nodes of a range of @main (node_range.h: "%75:%82" in the file's
 * names, "#0:#5" in byocl's own numbering, or bare) become one region of `target` (the
 * forum thread's hand annotation, done right).
 *
 * Every value that flows into a member from outside (a parameter, a constant, a node that
 * is not a member), whichever member uses it, gets one compiler_begin; every member value
 * used outside or returned gets a compiler_end (annotate_rebuild does both). Members are
 * not asked whether the target supports them: the user chose them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate_rebuild.h"
#include "byocl/passes.h"
#include "byocl/text.h"
#include "node_range.h"
#include "ops/op_impl.h"
#include "regions.h"
#include "target/target_impl.h"

/* Marks the members (region 0) and rejects annotations inside or feeding the range. */
static byocl_status mark_members(const byocl_function *fn, const byocl_node_range *range,
                                 const bool *member, int *region_of, byocl_error *err)
{
    char label[160], arg_label[160];
    for (int id = 0; id < fn->n_nodes; id++) {
        region_of[id] = member[id] ? 0 : -1;
        if (member[id] && pass_is_annotation(fn, id))
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s contains %s (%s); annotate_range works on "
                                   "nodes that are not annotated yet",
                                   range->what, byocl_node_label(fn, id, label, sizeof label),
                                   fn->nodes[id].op->name);
    }
    for (int id = range->id_first; id <= range->id_last; id++)
        for (int k = 0; region_of[id] == 0 && k < fn->nodes[id].n_args; k++) {
            int p = fn->nodes[id].args[k];
            if (pass_is_compiler_begin(fn, p))
                return byocl_error_set(
                    err, BYOCL_ERR_INVALID, "%s: %s uses %s, a compiler_begin of another region",
                    range->what, byocl_node_label(fn, id, label, sizeof label),
                    byocl_node_label(fn, p, arg_label, sizeof arg_label));
        }
    return BYOCL_OK;
}

/* The error for a path member -> outside ... -> member, found at `back` (a member) coming
 * from outside node `last_out`; from[] leads back to the member the path left. */
static byocl_status not_convex(const byocl_function *fn, const char *what, const int *from,
                               const int *region_of, int last_out, int back, byocl_error *err)
{
    int n_out = 0;
    for (int z = last_out; region_of[z] != 0; z = from[z])
        n_out++;
    int *outside = malloc((size_t)n_out * sizeof *outside);
    if (!outside)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory checking a range");
    int leaves = last_out;
    for (int k = n_out - 1; k >= 0; k--, leaves = from[leaves])
        outside[k] = leaves;
    char path[1024] = "", label[160], left_label[160], back_label[160];
    size_t at = 0;
    for (int k = 0; k < n_out && at < sizeof path; k++) {
        int w = snprintf(path + at, sizeof path - at, "%s%s", k ? " -> " : "",
                         byocl_node_label(fn, outside[k], label, sizeof label));
        at += w > 0 ? (size_t)w : 0;
    }
    free(outside);
    return byocl_error_set(err, BYOCL_ERR_INVALID,
                           "%s is not convex: %s leaves the range and %s comes back through %s",
                           what, byocl_node_label(fn, leaves, left_label, sizeof left_label),
                           byocl_node_label(fn, back, back_label, sizeof back_label), path);
}

/* A region must not depend on itself through outside nodes (partitioning would make a
 * function that needs its own output). Breadth-first from the members' outside users,
 * so the path reported is a shortest one. */
static byocl_status check_convex(const byocl_function *fn, const char *what,
                                 const int *region_of, byocl_error *err)
{
    byocl_users users;
    byocl_status st = pass_users_build(fn, &users, err);
    if (st != BYOCL_OK)
        return st;
    int n = fn->n_nodes;
    int *from = malloc((size_t)(n ? n : 1) * sizeof *from);
    int *queue = malloc((size_t)(n ? n : 1) * sizeof *queue);
    if (!from || !queue) {
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory checking a range");
        goto done;
    }
    int head = 0, tail = 0;
    for (int id = 0; id < n; id++)
        from[id] = -1;
    for (int id = 0; id < n; id++)
        for (int j = users.start[id]; region_of[id] == 0 && j < users.start[id + 1]; j++) {
            int z = users.list[j];
            if (region_of[z] != 0 && from[z] < 0) {
                from[z] = id;
                queue[tail++] = z;
            }
        }
    while (head < tail && st == BYOCL_OK) {
        int z = queue[head++];
        for (int j = users.start[z]; j < users.start[z + 1] && st == BYOCL_OK; j++) {
            int y = users.list[j];
            if (region_of[y] == 0)
                st = not_convex(fn, what, from, region_of, z, y, err);
            else if (from[y] < 0) {
                from[y] = z;
                queue[tail++] = y;
            }
        }
    }
done:
    pass_users_free(&users);
    free(from);
    free(queue);
    return st;
}

byocl_status byocl_annotate_range_spec(byocl_module *m, const char *range, const char *target,
                                       byocl_error *err)
{
    if (!m)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "annotate_range: no module given");
    byocl_function *fn;
    byocl_status st = target_check_name(target, err);
    if (st == BYOCL_OK)
        st = pass_find_main(m, "annotate_range", &fn, err);
    if (st != BYOCL_OK)
        return st;
    int *region_of = malloc((size_t)(fn->n_nodes + 1) * sizeof *region_of);
    bool *member = malloc((size_t)(fn->n_nodes + 1) * sizeof *member);
    byocl_node_range r;
    if (!region_of || !member)
        st = pass_annotate_nomem(err);
    if (st == BYOCL_OK)
        st = pass_node_range_resolve(fn, range, &r, member, err);
    if (st == BYOCL_OK)
        st = byocl_infer_types(m, err); /* annotations of tuples need the field types */
    if (st == BYOCL_OK)
        st = mark_members(fn, &r, member, region_of, err);
    if (st == BYOCL_OK)
        st = check_convex(fn, r.what, region_of, err);
    if (st == BYOCL_OK) {
        const int region_target[1] = {0};
        const char *const names[1] = {target};
        byocl_region_plan plan = {.region_of = region_of, .region_target = region_target,
                                  .target_names = names, .n_targets = 1};
        st = pass_annotate_rebuild(m, fn, &plan, err);
    }
    free(region_of);
    free(member);
    return st;
}

byocl_status byocl_annotate_range(byocl_module *m, int first, int last, const char *target,
                                  byocl_error *err)
{
    char range[48];
    snprintf(range, sizeof range, "%d:%d", first, last);
    return byocl_annotate_range_spec(m, range, target, err);
}

bool byocl_annotate_range_spelled(const char *range) { return pass_node_range_spelled(range); }
