/* annotate_target: each call of @main goes to the first target that supports it
 * (TVM's AnnotateTarget), and compiler_begin/compiler_end mark where the target changes.
 *
 * 1. Calls of ops ask the targets in priority order; the first `supports` that accepts
 *    wins, else the call stays on the host. Calls of global functions stay on the host.
 * 2. Tuples and tuple items are glue, never offloaded on their own: a TupleGetItem goes
 *    with its tuple; a Tuple goes with its users when they all agree (the function's
 *    result counts as the host), else with its fields when they all agree, else the host.
 * 3. Regions: nodes of one target joined by direct edges, split where a direct edge would
 *    make a region non-convex (the diamond p -> host -> q, p -> q): `depth` counts the
 *    region exits on the longest path to a node, and an edge between two nodes of the same
 *    target but different depths is cut (a compiler_end, then a compiler_begin). Nodes of
 *    one region then share a depth, and a path that leaves a region and comes back would
 *    have raised the depth, so every region is convex. Whether two regions can be merged
 *    is merge_regions' business.
 * 4. annotate_rebuild puts the annotations on the region boundaries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate_rebuild.h"
#include "byocl/passes.h"
#include "byocl/target.h"
#include "ops/op_impl.h"
#include "regions.h"
#include "target/target_impl.h"

#define HOST (-1)
#define UNDECIDED (-2)
#define WHY_MAX 256

static byocl_status resolve_targets(const char *const *names, int n,
                                    const byocl_target_i **targets, byocl_error *err)
{
    for (int t = 0; t < n; t++) {
        if (!names[t])
            return byocl_error_set(err, BYOCL_ERR_INVALID, "target %d has no name", t);
        if (!(targets[t] = byocl_target_find(names[t]))) {
            char known[512];
            return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                                   "unknown target \"%s\" (registered targets: %s)", names[t],
                                   target_list_names(known, sizeof known));
        }
        for (int u = 0; u < t; u++)
            if (targets[u] == targets[t])
                return byocl_error_set(err, BYOCL_ERR_INVALID, "target \"%s\" is listed twice",
                                       names[t]);
    }
    return BYOCL_OK;
}

/* @main of m, after checking the arguments every entry point shares. */
static byocl_status find_main(const byocl_module *m, const char *const *names, int n,
                              const byocl_target_i **targets, const byocl_function **out,
                              byocl_error *err)
{
    if (!m || (n > 0 && !names))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "annotate_target: bad arguments");
    if (n < 1)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "annotate_target needs at least one target");
    byocl_function *fn;
    byocl_status st = resolve_targets(names, n, targets, err);
    if (st == BYOCL_OK)
        st = pass_find_main(m, "annotate_target", &fn, err);
    if (st != BYOCL_OK)
        return st;
    for (int id = 0; id < fn->n_nodes; id++)
        if (pass_is_annotation(fn, id)) {
            char label[64];
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "@%s is already annotated (node %s); annotate_target works "
                                   "on an unannotated module",
                                   fn->name, byocl_node_label(fn, id, label, sizeof label));
        }
    *out = fn;
    return BYOCL_OK;
}

/* Appends "name: why" to the reason for keeping a call on the host. */
static void add_reason(char *reason, size_t len, const char *target, const char *why)
{
    size_t at = strlen(reason);
    if (at < len)
        snprintf(reason + at, len - at, "%s%s: %s", at ? "; " : "", target,
                 why[0] ? why : "not supported");
}

/* Step 1: target_of[id] for every call (HOST when none accepts it); other nodes HOST.
 * With `report`, each call left on the host is reported with every target's reason, on
 * `shown` (the caller's function, whose node ids are those of fn). */
static byocl_status assign_calls(const byocl_function *fn, const byocl_target_i *const *targets,
                                 int n_targets, int *target_of, byocl_explain_fn report,
                                 void *user, const byocl_function *shown, byocl_error *err)
{
    size_t reason_len = (size_t)n_targets * (BYOCL_TARGET_NAME_MAX + WHY_MAX + 2) + 64;
    char *reason = malloc(reason_len);
    if (!reason)
        return pass_annotate_nomem(err);
    for (int id = 0; id < fn->n_nodes; id++) {
        const byocl_node *n = &fn->nodes[id];
        target_of[id] = HOST;
        if (n->kind != BYOCL_NODE_CALL)
            continue;
        reason[0] = '\0';
        if (!n->op)
            snprintf(reason, reason_len,
                     "a call of the global function @%s; targets see calls of ops only",
                     n->callee);
        for (int t = 0; n->op && t < n_targets && target_of[id] == HOST; t++) {
            char why[WHY_MAX] = "";
            bool yes = targets[t]->supports(targets[t]->ctx, fn, id, why, sizeof why);
            why[WHY_MAX - 1] = '\0'; /* whatever the target wrote */
            if (yes)
                target_of[id] = t;
            else
                add_reason(reason, reason_len, targets[t]->name, why);
        }
        if (report && target_of[id] == HOST)
            report(user, shown, id, reason);
    }
    free(reason);
    return BYOCL_OK;
}

/* Step 2, the glue. Tuples by their users, last first (a tuple's users come after it);
 * tuple items are left out there, since they follow their tuple. Then, first to last,
 * tuple items take their tuple's target and undecided tuples their fields'. */
static void assign_glue(const byocl_function *fn, const byocl_users *users, int *target_of)
{
    for (int id = fn->n_nodes - 1; id >= 0; id--) {
        if (fn->nodes[id].kind != BYOCL_NODE_TUPLE)
            continue;
        int agreed = id == fn->body ? HOST : UNDECIDED;
        bool any = id == fn->body, same = true;
        for (int j = users->start[id]; j < users->start[id + 1] && same; j++) {
            int u = users->list[j];
            if (fn->nodes[u].kind == BYOCL_NODE_GETITEM)
                continue;
            same = target_of[u] != UNDECIDED && (!any || target_of[u] == agreed);
            agreed = target_of[u];
            any = true;
        }
        target_of[id] = any && same ? agreed : UNDECIDED;
    }
    for (int id = 0; id < fn->n_nodes; id++) {
        const byocl_node *n = &fn->nodes[id];
        if (n->kind == BYOCL_NODE_GETITEM) {
            target_of[id] = target_of[n->args[0]];
        } else if (n->kind == BYOCL_NODE_TUPLE && target_of[id] == UNDECIDED) {
            int common = n->n_args > 0 ? target_of[n->args[0]] : HOST;
            for (int k = 1; k < n->n_args; k++)
                if (target_of[n->args[k]] != common)
                    common = HOST;
            target_of[id] = common;
        }
    }
}

/* Step 3: regions, numbered in the order of their first node. */
static byocl_status split_regions(const byocl_function *fn, const int *target_of,
                                  int *region_of, int *region_target, byocl_error *err)
{
    int n = fn->n_nodes;
    int *depth = calloc((size_t)(n ? n : 1), sizeof *depth);
    int *parent = malloc((size_t)(n ? n : 1) * sizeof *parent);
    if (!depth || !parent) {
        free(depth);
        free(parent);
        return pass_annotate_nomem(err);
    }
    for (int id = 0; id < n; id++) {
        const byocl_node *node = &fn->nodes[id];
        parent[id] = id;
        for (int k = 0; k < node->n_args; k++) {
            int p = node->args[k];
            bool exits = target_of[p] != HOST && target_of[p] != target_of[id];
            if (depth[p] + exits > depth[id])
                depth[id] = depth[p] + exits;
        }
    }
    for (int id = 0; id < n; id++)
        for (int k = 0; target_of[id] != HOST && k < fn->nodes[id].n_args; k++) {
            int p = fn->nodes[id].args[k];
            if (target_of[p] == target_of[id] && depth[p] == depth[id])
                parent[pass_uf_find(parent, p)] = pass_uf_find(parent, id);
        }
    int n_regions = 0;
    for (int id = 0; id < n; id++)
        region_of[id] = -1;
    for (int id = 0; id < n; id++) {
        if (target_of[id] == HOST)
            continue;
        int root = pass_uf_find(parent, id);
        if (region_of[root] < 0) {
            region_target[n_regions] = target_of[id];
            region_of[root] = n_regions++;
        }
        region_of[id] = region_of[root];
    }
    free(depth);
    free(parent);
    return BYOCL_OK;
}

byocl_status byocl_annotate_target(byocl_module *m, const char *const *targets, int n_targets,
                                   byocl_error *err)
{
    const byocl_target_i **tg = calloc((size_t)(n_targets > 0 ? n_targets : 1), sizeof *tg);
    if (!tg)
        return pass_annotate_nomem(err);
    const byocl_function *fn = NULL;
    byocl_status st = find_main(m, targets, n_targets, tg, &fn, err);
    if (st == BYOCL_OK)
        st = byocl_infer_types(m, err); /* targets see typed calls */
    int n = fn ? fn->n_nodes : 0;
    int *target_of = malloc((size_t)(n ? n : 1) * sizeof *target_of);
    int *region_of = malloc((size_t)(n ? n : 1) * sizeof *region_of);
    int *region_target = malloc((size_t)(n ? n : 1) * sizeof *region_target);
    if (st == BYOCL_OK && (!target_of || !region_of || !region_target))
        st = pass_annotate_nomem(err);
    byocl_users users = {NULL, NULL};
    if (st == BYOCL_OK)
        st = pass_users_build(fn, &users, err);
    if (st == BYOCL_OK)
        st = assign_calls(fn, tg, n_targets, target_of, NULL, NULL, fn, err);
    if (st == BYOCL_OK) {
        assign_glue(fn, &users, target_of);
        st = split_regions(fn, target_of, region_of, region_target, err);
    }
    if (st == BYOCL_OK) {
        byocl_region_plan plan = {.region_of = region_of, .region_target = region_target,
                                  .target_names = targets, .n_targets = n_targets};
        st = pass_annotate_rebuild(m, fn, &plan, err);
    }
    pass_users_free(&users);
    free(target_of);
    free(region_of);
    free(region_target);
    free(tg);
    return st;
}

static bool fully_typed(const byocl_function *fn)
{
    for (int id = 0; id < fn->n_nodes; id++)
        if (fn->nodes[id].type->kind == BYOCL_TYPE_NONE)
            return false;
    return true;
}

byocl_status byocl_annotate_explain(const byocl_module *m, const char *const *targets,
                                    int n_targets, byocl_explain_fn report, void *user,
                                    byocl_error *err)
{
    if (!report)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "annotate_explain needs a report function");
    const byocl_target_i **tg = calloc((size_t)(n_targets > 0 ? n_targets : 1), sizeof *tg);
    if (!tg)
        return pass_annotate_nomem(err);
    const byocl_function *fn = NULL;
    byocl_module *typed = NULL;
    byocl_status st = find_main(m, targets, n_targets, tg, &fn, err);
    const byocl_function *asked = fn;
    /* Targets see typed calls: an untyped module is asked through a typed copy, whose
     * node ids are the same. */
    if (st == BYOCL_OK && !fully_typed(fn)) {
        typed = byocl_module_clone(m, err);
        st = typed ? byocl_infer_types(typed, err) : (err ? err->status : BYOCL_ERR_NOMEM);
        if (st == BYOCL_OK)
            asked = byocl_module_find(typed, BYOCL_PASS_MAIN);
    }
    int *target_of = st == BYOCL_OK ? malloc((size_t)(fn->n_nodes + 1) * sizeof *target_of) : NULL;
    if (st == BYOCL_OK && !target_of)
        st = pass_annotate_nomem(err);
    if (st == BYOCL_OK)
        st = assign_calls(asked, tg, n_targets, target_of, report, user, fn, err);
    free(target_of);
    byocl_module_free(typed);
    free(tg);
    return st;
}
