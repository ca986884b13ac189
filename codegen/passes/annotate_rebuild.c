/* The rebuild behind annotate_target and annotate_range (see annotate_rebuild.h).
 *
 * One walk over the old @main in node order builds the new one. Annotations are made on
 * demand and remembered, so that each is made once: compiler_ends right after the value
 * they mark (they are the region's outputs), compiler_begins just before the first node of
 * the region that needs them. Parameters come first, in their order, so that the new
 * function's signature is the old one's. */
#include <stdlib.h>

#include "annotate_rebuild.h"
#include "regions.h"

byocl_status pass_annotate_nomem(byocl_error *err)
{
    return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory annotating @%s", BYOCL_PASS_MAIN);
}

byocl_status pass_users_build(const byocl_function *fn, byocl_users *users, byocl_error *err)
{
    int n = fn->n_nodes, n_edges = 0;
    for (int id = 0; id < n; id++)
        n_edges += fn->nodes[id].n_args;
    users->start = calloc((size_t)n + 2, sizeof *users->start);
    users->list = malloc((size_t)(n_edges ? n_edges : 1) * sizeof *users->list);
    if (!users->start || !users->list) {
        pass_users_free(users);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory listing the users of nodes");
    }
    /* Counting sort by argument: start[a + 2] counts, then prefix sums, then fill. */
    for (int id = 0; id < n; id++)
        for (int k = 0; k < fn->nodes[id].n_args; k++)
            users->start[fn->nodes[id].args[k] + 2]++;
    for (int id = 0; id < n; id++)
        users->start[id + 2] += users->start[id + 1];
    for (int id = 0; id < n; id++)
        for (int k = 0; k < fn->nodes[id].n_args; k++)
            users->list[users->start[fn->nodes[id].args[k] + 1]++] = id;
    return BYOCL_OK;
}

void pass_users_free(byocl_users *users)
{
    free(users->start);
    free(users->list);
    users->start = users->list = NULL;
}

/* A compiler_begin made for a value: which region it feeds, and its node in the new
 * function. Entries of one value are chained through `next`. */
typedef struct begin_entry {
    int region, id, next;
} begin_entry;

typedef struct annotator {
    const byocl_region_plan *plan;
    byocl_rebuild rb; /* old @main, the new one, old id -> new id */
    byocl_users users;
    int *ends;       /* old id * (n_targets + 1) + consumer key -> new id of its compiler_end */
    int *begin_head; /* old id -> first begin_entry of that value, or -1 */
    begin_entry *begins;
    int n_begins, cap_begins;
    byocl_error *err;
} annotator;

static int fail_nomem(annotator *an)
{
    pass_annotate_nomem(an->err);
    return -1;
}

/* compiler_begin/compiler_end of `src` (a node of the new function, of type `type`) for
 * `target`; a tuple is annotated field by field and put back together. */
static int emit_annotation(annotator *an, int src, const byocl_type *type, const char *op,
                           int target)
{
    byocl_function *fresh = an->rb.fresh;
    if (type->kind != BYOCL_TYPE_TUPLE)
        return pass_add_annotation(fresh, op, src, an->plan->target_names[target], an->err);
    int n = type->n_fields;
    int *fields = malloc((size_t)(n ? n : 1) * sizeof *fields);
    if (!fields)
        return fail_nomem(an);
    int id = 0;
    for (int k = 0; k < n && id >= 0; k++) {
        id = byocl_function_add_getitem(fresh, src, k, an->err);
        if (id >= 0)
            id = fields[k] = emit_annotation(an, id, type->fields[k], op, target);
    }
    if (id >= 0)
        id = byocl_function_add_tuple(fresh, fields, n, an->err);
    free(fields);
    return id;
}

static int host_key(const annotator *an) { return an->plan->n_targets; }

/* What a user of a region value is, for sharing compiler_ends: the host, or a target. */
static int consumer_key(const annotator *an, int user)
{
    int r = an->plan->region_of[user];
    return r < 0 ? host_key(an) : an->plan->region_target[r];
}

/* The compiler_end of region value `v` for consumers of kind `key`, made once. */
static int get_end(annotator *an, int v, int key)
{
    int *slot = &an->ends[(size_t)v * (size_t)(an->plan->n_targets + 1) + (size_t)key];
    if (*slot < 0) {
        int target = an->plan->region_target[an->plan->region_of[v]];
        *slot = emit_annotation(an, an->rb.map[v], an->rb.old->nodes[v].type,
                                BYOCL_COMPILER_END, target);
    }
    return *slot;
}

/* The compiler_begin through which value `v` enters region `r`, made once. */
static int get_begin(annotator *an, int v, int r)
{
    for (int e = an->begin_head[v]; e >= 0; e = an->begins[e].next)
        if (an->begins[e].region == r)
            return an->begins[e].id;
    int target = an->plan->region_target[r];
    int src = an->plan->region_of[v] >= 0 ? get_end(an, v, target) : an->rb.map[v];
    if (src < 0)
        return -1;
    int id = emit_annotation(an, src, an->rb.old->nodes[v].type, BYOCL_COMPILER_BEGIN, target);
    if (id < 0)
        return -1;
    if (an->n_begins == an->cap_begins) {
        int cap = an->cap_begins ? 2 * an->cap_begins : 32;
        begin_entry *grown = realloc(an->begins, sizeof *grown * (size_t)cap);
        if (!grown)
            return fail_nomem(an);
        an->begins = grown;
        an->cap_begins = cap;
    }
    an->begins[an->n_begins] = (begin_entry){.region = r, .id = id, .next = an->begin_head[v]};
    an->begin_head[v] = an->n_begins++;
    return id;
}

/* Copies bound node `id` with its arguments routed through the annotations they need,
 * then makes the compiler_ends of its value (right after it). */
static int copy_node(annotator *an, int id)
{
    const byocl_node *n = &an->rb.old->nodes[id];
    const int *region_of = an->plan->region_of;
    int r = region_of[id];
    int *args = malloc((size_t)(n->n_args ? n->n_args : 1) * sizeof *args);
    if (!args)
        return fail_nomem(an);
    int ok = 0;
    for (int k = 0; k < n->n_args && ok >= 0; k++) {
        int p = n->args[k];
        if (r >= 0 && region_of[p] != r)
            ok = args[k] = get_begin(an, p, r);
        else if (r < 0 && region_of[p] >= 0)
            ok = args[k] = get_end(an, p, host_key(an));
        else
            args[k] = an->rb.map[p];
    }
    if (ok >= 0)
        ok = pass_rebuild_copy(&an->rb, id, args, an->err);
    free(args);
    if (ok < 0 || r < 0)
        return ok;
    const byocl_users *u = &an->users;
    for (int j = u->start[id]; j < u->start[id + 1] && ok >= 0; j++)
        if (region_of[u->list[j]] != r)
            ok = get_end(an, id, consumer_key(an, u->list[j]));
    if (ok >= 0 && id == an->rb.old->body)
        ok = get_end(an, id, host_key(an));
    return ok;
}

/* Parameters come first, in their order, then every other node in node order. Returns
 * the new body, or -1. */
static int build_all(annotator *an)
{
    const byocl_function *old = an->rb.old;
    for (int k = 0; k < old->n_params; k++)
        if (pass_rebuild_copy(&an->rb, old->params[k], NULL, an->err) < 0)
            return -1;
    for (int id = 0; id < old->n_nodes; id++) {
        const byocl_node *n = &old->nodes[id];
        if (an->rb.map[id] >= 0)
            continue; /* a parameter */
        int got = n->kind == BYOCL_NODE_VAR || n->kind == BYOCL_NODE_CONSTANT
                      ? pass_rebuild_copy(&an->rb, id, NULL, an->err)
                      : copy_node(an, id);
        if (got < 0)
            return -1;
    }
    return an->plan->region_of[old->body] >= 0 ? get_end(an, old->body, host_key(an))
                                               : an->rb.map[old->body];
}

byocl_status pass_annotate_rebuild(byocl_module *m, const byocl_function *fn,
                                   const byocl_region_plan *plan, byocl_error *err)
{
    annotator an = {.plan = plan, .err = err};
    size_t n = (size_t)(fn->n_nodes ? fn->n_nodes : 1);
    size_t n_keys = (size_t)plan->n_targets + 1;
    byocl_status st = pass_users_build(fn, &an.users, err);
    if (st != BYOCL_OK)
        return st;
    an.ends = malloc(n * n_keys * sizeof *an.ends);
    an.begin_head = malloc(n * sizeof *an.begin_head);
    if (!an.ends || !an.begin_head) {
        st = pass_annotate_nomem(err);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        an.begin_head[i] = -1;
    for (size_t i = 0; i < n * n_keys; i++)
        an.ends[i] = -1;
    st = pass_rebuild_begin(&an.rb, m, fn, "annotate", err);
    if (st != BYOCL_OK)
        goto done;
    int body = build_all(&an);
    if (body >= 0) {
        st = pass_rebuild_finish(&an.rb, body, err);
    } else {
        st = err ? err->status : BYOCL_ERR_NOMEM;
        pass_rebuild_abort(&an.rb);
    }
done:
    pass_users_free(&an.users);
    free(an.ends);
    free(an.begin_head);
    free(an.begins);
    return st;
}
