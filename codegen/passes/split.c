/* split: @main cut into pipeline stages (include/byocl/split.h says what goes where).
 *
 * 1. Placement. The nodes to place are the calls, tuples and TupleGetItems that the
 *    result needs. They are grouped into units: a TupleGetItem joins the unit of the tuple
 *    it reads (unless it is the result itself), every other node heads a unit of its own.
 *    Units keep node order, and cuts fall between units: after a given node (--at), or
 *    where they balance the units' costs (--parts): their estimated FLOPs, or the costs
 *    per node that byocl_split_weighted is given (byocl split --balance measured).
 * 2. Wiring. A placed node with a user in a later stage is an output of its stage; each
 *    later stage that uses it gets a parameter for it (one per tensor field of a tuple).
 * 3. Building. Each stage's @main is built from its parameters, copies of its nodes with
 *    their arguments renumbered, copies of the constants they use, and a tuple of its
 *    outputs (the original result for the last stage); the functions it calls are copied
 *    into its module. Each stage is then type-checked and verified. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "byocl/text.h"
#include "ops/matmul.h"
#include "ops/op_impl.h"
#include "ops/node_util.h"
#include "split_impl.h"

#define MAX_LEAVES 4096 /* tensor fields of one value that may cross a cut */

char *split_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

int split_type_leaves(const byocl_type *type, const byocl_type **out, int max)
{
    if (type->kind != BYOCL_TYPE_TUPLE) {
        if (max > 0)
            out[0] = type;
        return 1;
    }
    int n = 0;
    for (int i = 0; i < type->n_fields; i++)
        n += split_type_leaves(type->fields[i], out + (n < max ? n : max), n < max ? max - n : 0);
    return n;
}

/* ---------------------------------------------------------------- FLOPs */

static int64_t type_elements(const byocl_type *t)
{
    if (t->kind == BYOCL_TYPE_TENSOR) {
        int64_t n = byocl_shape_numel(&t->shape);
        return n > 0 ? n : 0;
    }
    int64_t n = 0;
    if (t->kind == BYOCL_TYPE_TUPLE)
        for (int i = 0; i < t->n_fields; i++)
            n += type_elements(t->fields[i]);
    return n;
}

static int64_t node_flops(const byocl_function *fn, int id, int depth)
{
    const byocl_node *n = &fn->nodes[id];
    if (n->kind != BYOCL_NODE_CALL)
        return 0;
    if (!n->op) {
        const byocl_module *m = fn->mod;
        const byocl_function *callee = byocl_module_find(m, n->callee);
        if (!callee || depth >= m->n_fns) /* missing, or recursion: verify reports it */
            return 0;
        int64_t sum = 0;
        for (int k = 0; k < callee->n_nodes; k++)
            sum += node_flops(callee, k, depth + 1);
        return sum;
    }
    int64_t out = type_elements(n->type);
    bool macs = strcmp(n->op->name, "nn.conv2d") == 0 || strcmp(n->op->name, "nn.dense") == 0;
    if (macs && n->n_args == 2) {
        /* OIHW or (units, K): each output element takes weight.numel / dim0 multiply-adds. */
        const byocl_type *w = fn->nodes[n->args[1]].type;
        if (w->kind == BYOCL_TYPE_TENSOR && w->shape.rank >= 1 && w->shape.dims[0] > 0) {
            int64_t per_output = type_elements(w) / w->shape.dims[0];
            return 2 * out * per_output;
        }
    }
    ops_bmm_geom g;
    byocl_error ignored = {0};
    if (strcmp(n->op->name, "nn.batch_matmul") == 0 && n->n_args == 2 &&
        ops_batch_matmul_geometry(&n->attrs, &fn->nodes[n->args[0]].type->shape,
                                  &fn->nodes[n->args[1]].type->shape, &g, &ignored) == BYOCL_OK)
        return 2 * out * g.k;
    return out;
}

int64_t byocl_split_node_flops(const byocl_function *fn, int id)
{
    if (!fn || id < 0 || id >= fn->n_nodes)
        return 0;
    return node_flops(fn, id, 0);
}

/* ------------------------------------------------------------ placement */

typedef struct split_plan {
    const byocl_function *fn;
    int n;         /* nodes of @main */
    const double *node_cost; /* per node of @main (byocl_split_weighted), or NULL: FLOPs */
    bool *placed;  /* a call, tuple or TupleGetItem that the result needs */
    int *unit_of;  /* placed: the id heading its unit; else -1 */
    int *heads;    /* unit heads in node order */
    int *unit_no;  /* unit heads: their index in heads */
    int n_units;
    int *stage_of; /* placed: its stage; else -1 */
    int n_stages;
    bool *is_output; /* placed and used by a later stage */
    int *out_index;  /* is_output: the index of its first tensor among its stage's outputs */
} split_plan;

static void plan_free(split_plan *p)
{
    free(p->placed);
    free(p->unit_of);
    free(p->heads);
    free(p->unit_no);
    free(p->stage_of);
    free(p->is_output);
    free(p->out_index);
}

static byocl_status plan_units(split_plan *p, byocl_error *err)
{
    const byocl_function *fn = p->fn;
    int n = p->n;
    size_t cnt = (size_t)(n > 0 ? n : 1);
    p->placed = calloc(cnt, sizeof *p->placed);
    p->unit_of = malloc(cnt * sizeof *p->unit_of);
    p->heads = malloc(cnt * sizeof *p->heads);
    p->unit_no = malloc(cnt * sizeof *p->unit_no);
    p->stage_of = malloc(cnt * sizeof *p->stage_of);
    p->is_output = calloc(cnt, sizeof *p->is_output);
    p->out_index = malloc(cnt * sizeof *p->out_index);
    if (!p->placed || !p->unit_of || !p->heads || !p->unit_no || !p->stage_of || !p->is_output ||
        !p->out_index)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
    /* What the result needs, walking back from the body. */
    bool *needed = calloc(cnt, sizeof *needed);
    if (!needed)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
    needed[fn->body] = true;
    for (int id = fn->body; id >= 0; id--) {
        if (!needed[id])
            continue;
        for (int k = 0; k < fn->nodes[id].n_args; k++)
            needed[fn->nodes[id].args[k]] = true;
    }
    for (int id = 0; id < n; id++) {
        byocl_node_kind kind = fn->nodes[id].kind;
        p->placed[id] = needed[id] && kind != BYOCL_NODE_VAR && kind != BYOCL_NODE_CONSTANT;
        p->unit_of[id] = -1;
        p->stage_of[id] = -1;
        if (!p->placed[id])
            continue;
        int arg = fn->nodes[id].n_args > 0 ? fn->nodes[id].args[0] : -1;
        if (kind == BYOCL_NODE_GETITEM && id != fn->body && arg >= 0 && p->placed[arg]) {
            p->unit_of[id] = p->unit_of[arg];
        } else {
            p->unit_of[id] = id;
            p->unit_no[id] = p->n_units;
            p->heads[p->n_units++] = id;
        }
    }
    free(needed);
    return BYOCL_OK;
}

/* The largest %N of fn, for "numbered %0 to %88"; -1 when none. */
/* The highest %N `byocl print` shows in fn: byocl's numbers and the source's kept. */
static int max_number(const byocl_function *fn)
{
    int max = -1;
    int *numbers = byocl_text_node_numbers(fn);
    for (int id = 0; numbers && id < fn->n_nodes; id++) {
        const char *name = fn->nodes[id].name;
        int number = numbers[id];
        if (number < 0 && name && *name && name[strspn(name, "0123456789")] == '\0' &&
            fn->nodes[id].kind != BYOCL_NODE_VAR && id != fn->body)
            number = atoi(name); /* the source's %78, kept */
        max = number > max ? number : max;
    }
    free(numbers);
    return max;
}

static byocl_status place_at_cuts(split_plan *p, const int *cuts, int n_cuts, byocl_error *err)
{
    const byocl_function *fn = p->fn;
    int *cut_ids = malloc((size_t)n_cuts * sizeof *cut_ids);
    int *per_stage = calloc((size_t)n_cuts + 1, sizeof *per_stage);
    byocl_status st = BYOCL_OK;
    if (!cut_ids || !per_stage)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
    for (int c = 0; c < n_cuts && st == BYOCL_OK; c++) {
        if (c > 0 && cuts[c] <= cuts[c - 1]) {
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "cut points must increase: %%%d comes after %%%d", cuts[c],
                                 cuts[c - 1]);
            break;
        }
        cut_ids[c] = byocl_text_node_by_number(fn, cuts[c]);
        if (cut_ids[c] < 0) {
            int max = max_number(fn);
            if (max < 0)
                st = byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                                     "cut after %%%d: @main has no numbered nodes", cuts[c]);
            else
                st = byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                                     "cut after %%%d: @main has no node %%%d (`byocl print` "
                                     "numbers its nodes %%0 to %%%d)",
                                     cuts[c], cuts[c], max);
        }
    }
    for (int u = 0; u < p->n_units && st == BYOCL_OK; u++) {
        int s = 0;
        while (s < n_cuts && cut_ids[s] < p->heads[u])
            s++;
        p->stage_of[p->heads[u]] = s;
        per_stage[s]++;
    }
    for (int s = 0; s <= n_cuts && st == BYOCL_OK; s++) {
        if (per_stage[s] > 0)
            continue;
        if (s == 0)
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "stage 0 would be empty: the result needs no node up to %%%d",
                                 cuts[0]);
        else if (s == n_cuts)
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "stage %d would be empty: the result needs no node after %%%d",
                                 s, cuts[s - 1]);
        else
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "stage %d would be empty: the result needs no node after %%%d "
                                 "up to %%%d (a TupleGetItem goes with the tuple it reads)",
                                 s, cuts[s - 1], cuts[s]);
    }
    p->n_stages = n_cuts + 1;
    free(cut_ids);
    free(per_stage);
    return st;
}

/* How many consecutive parts of at most `limit` the costs need. */
static int parts_needed(const int64_t *cost, int n, int64_t limit)
{
    int parts = 1;
    int64_t cur = 0;
    for (int i = 0; i < n; i++) {
        if (cur + cost[i] > limit) {
            parts++;
            cur = 0;
        }
        cur += cost[i];
    }
    return parts;
}

/* Each unit's cost, as integers the search below can bisect exactly: FLOPs as they are;
 * given costs summed per unit and scaled so that their total is 2^52 (a double's integer
 * precision), which keeps their ratios. */
static void unit_costs(const split_plan *p, int64_t *cost)
{
    int n = p->n_units;
    for (int u = 0; u < n; u++)
        cost[u] = 0;
    if (!p->node_cost) {
        for (int id = 0; id < p->n; id++)
            if (p->placed[id])
                cost[p->unit_no[p->unit_of[id]]] += node_flops(p->fn, id, 0);
        return;
    }
    double *sum = calloc((size_t)(n > 0 ? n : 1), sizeof *sum);
    double total = 0;
    for (int id = 0; sum && id < p->n; id++)
        if (p->placed[id]) {
            sum[p->unit_no[p->unit_of[id]]] += p->node_cost[id];
            total += p->node_cost[id];
        }
    for (int u = 0; sum && total > 0 && u < n; u++)
        cost[u] = (int64_t)llround(sum[u] * (4503599627370496.0 / total));
    free(sum); /* out of memory: every unit costs 0, still a valid placement */
}

static byocl_status place_balanced(split_plan *p, int n_parts, byocl_error *err)
{
    int n = p->n_units;
    if (n_parts < 1)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "the number of parts must be at least 1, not %d", n_parts);
    if (n_parts > n) {
        int placed = 0;
        for (int id = 0; id < p->n; id++)
            placed += p->placed[id];
        if (placed == n)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "cannot split @main into %d parts: it has %d node%s to place",
                                   n_parts, n, n == 1 ? "" : "s");
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "cannot split @main into %d parts: its %d nodes make at most %d "
                               "stages (a TupleGetItem goes with the tuple it reads)",
                               n_parts, placed, n);
    }
    int64_t *cost = malloc((size_t)n * sizeof *cost);
    if (!cost)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
    int64_t lo = 0, hi = 0;
    unit_costs(p, cost);
    for (int u = 0; u < n; u++) {
        lo = cost[u] > lo ? cost[u] : lo;
        hi += cost[u];
    }
    /* The smallest limit on a stage's cost that n_parts stages can keep. */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (parts_needed(cost, n, mid) <= n_parts)
            hi = mid;
        else
            lo = mid + 1;
    }
    /* Greedy under that limit, cutting early only when each remaining unit must become a
     * stage of its own to reach exactly n_parts. */
    int stage = 0;
    int64_t cur = 0;
    for (int u = 0; u < n; u++) {
        bool over = cur + cost[u] > lo;
        bool must = n - u == n_parts - (stage + 1);
        if (u > 0 && stage + 1 < n_parts && (over || must)) {
            stage++;
            cur = 0;
        }
        cur += cost[u];
        p->stage_of[p->heads[u]] = stage;
    }
    p->n_stages = n_parts;
    free(cost);
    return BYOCL_OK;
}

/* --------------------------------------------------------------- wiring */

static void plan_wiring(split_plan *p)
{
    const byocl_function *fn = p->fn;
    for (int id = 0; id < p->n; id++)
        if (p->placed[id] && p->unit_of[id] != id)
            p->stage_of[id] = p->stage_of[p->unit_of[id]];
    for (int id = 0; id < p->n; id++) {
        if (!p->placed[id])
            continue;
        for (int k = 0; k < fn->nodes[id].n_args; k++) {
            int a = fn->nodes[id].args[k];
            if (p->placed[a] && p->stage_of[a] < p->stage_of[id])
                p->is_output[a] = true;
        }
    }
    for (int s = 0; s < p->n_stages; s++) {
        int at = 0;
        for (int id = 0; id < p->n; id++)
            if (p->is_output[id] && p->stage_of[id] == s) {
                p->out_index[id] = at;
                at += byocl_type_num_tensors(fn->nodes[id].type);
            }
    }
}

/* ------------------------------------------------------------- building */

/* What a stage's outputs and errors call a node's maker. */
static const char *maker_name(const byocl_function *fn, int id, char *buf, size_t len)
{
    const byocl_node *n = &fn->nodes[id];
    switch (n->kind) {
    case BYOCL_NODE_CALL:
        if (n->op)
            return n->op->name;
        snprintf(buf, len, "@%s", n->callee);
        return buf;
    case BYOCL_NODE_TUPLE: return "Tuple";
    case BYOCL_NODE_GETITEM: return "TupleGetItem";
    case BYOCL_NODE_VAR: return "Var";
    case BYOCL_NODE_CONSTANT: return "Constant";
    }
    return "?";
}

typedef struct stage_builder {
    const split_plan *p;
    int k;
    split_stage *stage;
    byocl_function *out; /* the stage's @main */
    int *map;            /* original node id -> the stage's node id, or -1 */
    bool *uses;          /* original ids the stage reads from outside itself */
    int cap_inputs, cap_outputs;
} stage_builder;

static byocl_status add_input(stage_builder *b, const char *base, const byocl_type *type,
                              int from_stage, int index, int *id_out, byocl_error *err)
{
    split_stage *st = b->stage;
    char name[512];
    snprintf(name, sizeof name, "%s", base);
    /* An original parameter may already be called s0_12: then s0_12_2, s0_12_3, ... */
    for (int n = 2; byocl_function_find_param(b->out, name) >= 0; n++)
        snprintf(name, sizeof name, "%s_%d", base, n);
    if (st->n_inputs == b->cap_inputs) {
        int cap = b->cap_inputs ? 2 * b->cap_inputs : 8;
        byocl_stage_input *grown = realloc(st->inputs, (size_t)cap * sizeof *grown);
        if (!grown)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
        st->inputs = grown;
        b->cap_inputs = cap;
    }
    char *copy = split_strdup(name);
    if (!copy)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
    st->inputs[st->n_inputs++] = (byocl_stage_input){copy, from_stage, index};
    *id_out = byocl_function_add_param(b->out, name, type, err);
    return *id_out >= 0 ? BYOCL_OK : err->status;
}

static byocl_status add_output(stage_builder *b, const char *node, const char *op,
                               byocl_error *err)
{
    split_stage *st = b->stage;
    if (st->n_outputs == b->cap_outputs) {
        int cap = b->cap_outputs ? 2 * b->cap_outputs : 8;
        byocl_stage_output *grown = realloc(st->outputs, (size_t)cap * sizeof *grown);
        if (!grown)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
        st->outputs = grown;
        b->cap_outputs = cap;
    }
    byocl_stage_output o = {split_strdup(node), split_strdup(op), NULL};
    if (!o.node || !o.op) {
        free((char *)o.node);
        free((char *)o.op);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
    }
    st->outputs[st->n_outputs++] = o;
    return BYOCL_OK;
}

/* Records the outputs that value `id` (of type t, reached by `path` from the node) gives:
 * one per tensor field. With `resolve`, a field of a Tuple node is described as the node
 * it holds (the result `(%11, %14)` gives "%11" and "%14"). */
static byocl_status describe_outputs(stage_builder *b, int id, const byocl_type *t,
                                     const char *path, bool resolve, byocl_error *err)
{
    const byocl_function *fn = b->p->fn;
    if (t->kind != BYOCL_TYPE_TUPLE) {
        char label[256], node[512], op[256];
        byocl_node_label(fn, id, label, sizeof label);
        snprintf(node, sizeof node, "%s%s", label, path);
        return add_output(b, node, maker_name(fn, id, op, sizeof op), err);
    }
    bool into_tuple = resolve && !*path && fn->nodes[id].kind == BYOCL_NODE_TUPLE;
    for (int i = 0; i < t->n_fields; i++) {
        byocl_status st;
        if (into_tuple) {
            st = describe_outputs(b, fn->nodes[id].args[i], t->fields[i], "", resolve, err);
        } else {
            char sub[512];
            snprintf(sub, sizeof sub, "%s.%d", path, i);
            st = describe_outputs(b, id, t->fields[i], sub, resolve, err);
        }
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

/* The tuple of type t rebuilt from the stage's parameters leaves[*at...]. */
static int rebuild_tuple(byocl_function *out, const byocl_type *t, const int *leaves, int *at,
                         byocl_error *err)
{
    if (t->kind != BYOCL_TYPE_TUPLE)
        return leaves[(*at)++];
    int *fields = malloc((size_t)(t->n_fields > 0 ? t->n_fields : 1) * sizeof *fields);
    if (!fields) {
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
        return -1;
    }
    int id = 0;
    for (int i = 0; i < t->n_fields && id >= 0; i++)
        id = fields[i] = rebuild_tuple(out, t->fields[i], leaves, at, err);
    if (id >= 0)
        id = byocl_function_add_tuple(out, fields, t->n_fields, err);
    free(fields);
    return id;
}

/* Appends to leaves[*at...] the stage's nodes for each tensor field of value `id`. */
static byocl_status take_leaves(byocl_function *out, int id, const byocl_type *t, int *leaves,
                                int *at, byocl_error *err)
{
    if (t->kind != BYOCL_TYPE_TUPLE) {
        leaves[(*at)++] = id;
        return BYOCL_OK;
    }
    for (int i = 0; i < t->n_fields; i++) {
        int item = byocl_function_add_getitem(out, id, i, err);
        if (item < 0)
            return err->status;
        byocl_status st = take_leaves(out, item, t->fields[i], leaves, at, err);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

/* Parameters for what the stage reads from outside: original parameters first (in their
 * order), then earlier stages' outputs (by stage, then node order). */
static byocl_status build_inputs(stage_builder *b, byocl_error *err)
{
    const split_plan *p = b->p;
    const byocl_function *fn = p->fn;
    for (int k = 0; k < fn->n_params; k++) {
        int id = fn->params[k];
        if (b->uses[id]) {
            byocl_status st = add_input(b, fn->nodes[id].name, fn->nodes[id].type, -1, k,
                                        &b->map[id], err);
            if (st != BYOCL_OK)
                return st;
        }
    }
    int leaves[MAX_LEAVES];
    for (int j = 0; j < b->k; j++)
        for (int id = 0; id < p->n; id++) {
            if (!b->uses[id] || p->stage_of[id] != j)
                continue;
            const byocl_type *t = fn->nodes[id].type;
            const byocl_type *leaf_types[MAX_LEAVES];
            int n_leaves = split_type_leaves(t, leaf_types, MAX_LEAVES);
            if (n_leaves > MAX_LEAVES)
                return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                       "a value with %d tensor fields crosses a cut (at most "
                                       "%d can)", n_leaves, MAX_LEAVES);
            char label[256], base[512];
            byocl_node_label(fn, id, label, sizeof label);
            for (int i = 0; i < n_leaves; i++) {
                if (t->kind == BYOCL_TYPE_TUPLE)
                    snprintf(base, sizeof base, "s%d_%s_%d", j, label + 1, i);
                else
                    snprintf(base, sizeof base, "s%d_%s", j, label + 1);
                byocl_status st = add_input(b, base, leaf_types[i], j, p->out_index[id] + i,
                                            &leaves[i], err);
                if (st != BYOCL_OK)
                    return st;
            }
            int at = 0;
            b->map[id] = rebuild_tuple(b->out, t, leaves, &at, err);
            if (b->map[id] < 0)
                return err->status;
        }
    return BYOCL_OK;
}

/* The stage's node for original node `id`, copying a constant on first use. */
static int mapped(stage_builder *b, int id, byocl_error *err)
{
    const byocl_node *n = &b->p->fn->nodes[id];
    if (b->map[id] < 0 && n->kind == BYOCL_NODE_CONSTANT)
        b->map[id] = ir_fn_append(b->out, n, err);
    else if (b->map[id] < 0)
        byocl_error_set(err, BYOCL_ERR_INVALID, "%%%s is not a parameter of @main",
                        n->name ? n->name : "?");
    return b->map[id];
}

static byocl_status build_nodes(stage_builder *b, byocl_error *err)
{
    const split_plan *p = b->p;
    const byocl_function *fn = p->fn;
    split_stage *st = b->stage;
    char label[256];
    int first = -1, last = -1; /* placement leaves no stage empty */
    for (int id = 0; id < p->n; id++) {
        if (p->stage_of[id] != b->k)
            continue;
        const byocl_node *n = &fn->nodes[id];
        int args_small[16];
        int *args = n->n_args <= 16 ? args_small : malloc((size_t)n->n_args * sizeof *args);
        if (!args)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
        int k;
        for (k = 0; k < n->n_args; k++)
            if ((args[k] = mapped(b, n->args[k], err)) < 0)
                break;
        byocl_node proto = *n;
        proto.args = args;
        int copy = k == n->n_args ? ir_fn_append(b->out, &proto, err) : -1;
        if (args != args_small)
            free(args);
        if (copy < 0) {
            ops_node_error_at(err, fn, id);
            return err->status;
        }
        b->map[id] = copy;
        first = first < 0 ? id : first;
        last = id;
        st->n_nodes++;
        st->flops += node_flops(fn, id, 0);
        if (p->node_cost)
            st->cost = (st->cost < 0 ? 0 : st->cost) + p->node_cost[id];
    }
    st->first = split_strdup(byocl_node_label(fn, first, label, sizeof label));
    st->last = split_strdup(byocl_node_label(fn, last, label, sizeof label));
    if (!st->first || !st->last)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
    return BYOCL_OK;
}

/* The body: a tuple of the stage's outputs, or for the last stage the original result. */
static byocl_status build_body(stage_builder *b, byocl_error *err)
{
    const split_plan *p = b->p;
    const byocl_function *fn = p->fn;
    int body;
    if (b->k == p->n_stages - 1) {
        body = mapped(b, fn->body, err);
        byocl_status st = body >= 0 ? describe_outputs(b, fn->body, fn->nodes[fn->body].type,
                                                       "", true, err)
                                    : err->status;
        if (st != BYOCL_OK)
            return st;
    } else {
        int n_fields = 0, cap = 0;
        int *fields = NULL;
        byocl_status st = BYOCL_OK;
        for (int id = 0; id < p->n && st == BYOCL_OK; id++) {
            if (!p->is_output[id] || p->stage_of[id] != b->k)
                continue;
            const byocl_type *t = fn->nodes[id].type;
            int need = n_fields + byocl_type_num_tensors(t);
            if (need > cap) {
                cap = need > 2 * cap ? need : 2 * cap;
                int *grown = realloc(fields, (size_t)cap * sizeof *grown);
                if (!grown) {
                    st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
                    break;
                }
                fields = grown;
            }
            st = take_leaves(b->out, b->map[id], t, fields, &n_fields, err);
            if (st == BYOCL_OK)
                st = describe_outputs(b, id, t, "", false, err);
        }
        body = st == BYOCL_OK ? byocl_function_add_tuple(b->out, fields, n_fields, err) : -1;
        free(fields);
        if (body < 0)
            return err->status;
    }
    return byocl_function_set_body(b->out, body, err);
}

/* Copies into `dst` every function of `src` that dst's @main calls, directly or not, in
 * src's order. */
static byocl_status copy_callees(const byocl_module *src, byocl_module *dst, byocl_error *err)
{
    int n = src->n_fns;
    bool *wanted = calloc((size_t)(n > 0 ? n : 1), sizeof *wanted);
    bool *scanned = calloc((size_t)(n > 0 ? n : 1), sizeof *scanned);
    byocl_status st = BYOCL_OK;
    if (!wanted || !scanned)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
    const byocl_function *scan = dst->fns[0];
    while (st == BYOCL_OK && scan) {
        for (int id = 0; id < scan->n_nodes; id++) {
            const char *callee = scan->nodes[id].callee;
            if (scan->nodes[id].kind != BYOCL_NODE_CALL || !callee)
                continue;
            for (int f = 0; f < n; f++)
                if (strcmp(src->fns[f]->name, callee) == 0)
                    wanted[f] = true;
        }
        scan = NULL;
        for (int f = 0; f < n && !scan; f++)
            if (wanted[f] && !scanned[f]) {
                scanned[f] = true;
                scan = src->fns[f];
            }
    }
    for (int f = 0; f < n && st == BYOCL_OK; f++)
        if (wanted[f] && !byocl_module_copy_function(dst, src->fns[f], NULL, err))
            st = err->status;
    free(wanted);
    free(scanned);
    return st;
}

static byocl_status build_stage(const split_plan *p, int k, split_stage *stage, int *map,
                                bool *uses, byocl_error *err)
{
    const byocl_function *fn = p->fn;
    stage_builder b = {.p = p, .k = k, .stage = stage, .map = map, .uses = uses};
    for (int id = 0; id < p->n; id++) {
        map[id] = -1;
        uses[id] = false;
    }
    /* What the stage reads from outside: parameters and earlier stages' values. */
    for (int id = 0; id < p->n; id++) {
        if (p->stage_of[id] != k)
            continue;
        for (int a = 0; a < fn->nodes[id].n_args; a++) {
            int arg = fn->nodes[id].args[a];
            if (fn->nodes[arg].kind == BYOCL_NODE_VAR || (p->placed[arg] && p->stage_of[arg] < k))
                uses[arg] = true;
        }
    }
    if (!(stage->mod = byocl_module_new()))
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
    b.out = byocl_module_add_function(stage->mod, "main", err);
    byocl_status st = b.out ? BYOCL_OK : err->status;
    if (st == BYOCL_OK)
        st = build_inputs(&b, err);
    if (st == BYOCL_OK)
        st = build_nodes(&b, err);
    if (st == BYOCL_OK)
        st = build_body(&b, err);
    if (st == BYOCL_OK)
        st = copy_callees(fn->mod, stage->mod, err);
    if (st == BYOCL_OK)
        st = byocl_infer_types(stage->mod, err);
    if (st == BYOCL_OK)
        st = byocl_verify(stage->mod, true, err);
    if (st != BYOCL_OK) {
        byocl_error_prefix(err, "building stage %d: ", k);
        return st;
    }
    /* Output types, from the stage's own (inferred) result type. */
    const byocl_type *leaf_types[MAX_LEAVES];
    int n_leaves = split_type_leaves(byocl_node_type(b.out, b.out->body), leaf_types,
                                     MAX_LEAVES);
    if (n_leaves > MAX_LEAVES)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "stage %d returns %d tensors (at most %d are supported)", k,
                               n_leaves, MAX_LEAVES);
    if (n_leaves != stage->n_outputs) /* describe_outputs walked the same type */
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "internal error: stage %d returns %d tensors but describes %d",
                               k, n_leaves, stage->n_outputs);
    for (int i = 0; i < n_leaves; i++)
        stage->outputs[i].type = leaf_types[i];
    return BYOCL_OK;
}

/* ------------------------------------------------------------ the pass */

byocl_stages *split_stages_new(int n_stages, byocl_error *err)
{
    byocl_stages *s = calloc(1, sizeof *s);
    if (s) {
        s->stages = calloc((size_t)(n_stages > 0 ? n_stages : 1), sizeof *s->stages);
        s->signature = byocl_module_new();
    }
    if (!s || !s->stages || !s->signature) {
        byocl_stages_free(s);
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        return NULL;
    }
    s->n_stages = n_stages;
    for (int k = 0; k < n_stages; k++)
        s->stages[k].cost = -1;
    return s;
}

void byocl_stages_free(byocl_stages *s)
{
    if (!s)
        return;
    for (int k = 0; s->stages && k < s->n_stages; k++) {
        split_stage *st = &s->stages[k];
        byocl_module_free(st->mod);
        free(st->first);
        free(st->last);
        for (int i = 0; i < st->n_inputs; i++)
            free((char *)st->inputs[i].name);
        for (int i = 0; i < st->n_outputs; i++) {
            free((char *)st->outputs[i].node);
            free((char *)st->outputs[i].op);
        }
        free(st->inputs);
        free(st->outputs);
    }
    free(s->stages);
    byocl_module_free(s->signature);
    free(s);
}

/* The signature: @main(<the original parameters>) { () }. */
static byocl_status build_signature(const byocl_function *fn, byocl_module *sig,
                                    byocl_error *err)
{
    byocl_function *out = byocl_module_add_function(sig, "main", err);
    if (!out)
        return err->status;
    for (int k = 0; k < fn->n_params; k++) {
        const byocl_node *p = &fn->nodes[fn->params[k]];
        if (byocl_function_add_param(out, p->name, p->type, err) < 0)
            return err->status;
    }
    int body = byocl_function_add_tuple(out, NULL, 0, err);
    if (body < 0 || byocl_function_set_body(out, body, err) != BYOCL_OK)
        return err->status;
    return byocl_infer_types(sig, err);
}

/* The given costs: one per node of @main, each finite and not negative. */
static byocl_status check_costs(const byocl_function *fn, const double *node_cost, int n_nodes,
                                byocl_error *err)
{
    if (!node_cost || n_nodes != fn->n_nodes)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_split_weighted: expected %d costs, one per node of "
                               "@main, not %d",
                               fn->n_nodes, n_nodes);
    for (int id = 0; id < n_nodes; id++)
        if (!isfinite(node_cost[id]) || node_cost[id] < 0) {
            char label[256];
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "byocl_split_weighted: node_cost[%d] (%s) is %g; costs must "
                                   "be finite and at least 0",
                                   id, byocl_node_label(fn, id, label, sizeof label),
                                   node_cost[id]);
        }
    return BYOCL_OK;
}

/* byocl_split and byocl_split_weighted (node_cost not NULL: n_parts balanced by it). */
static byocl_status split_module(const byocl_module *m, const int *cut_numbers, int n_cuts,
                                 int n_parts, const double *node_cost, int n_costs,
                                 byocl_stages **out, byocl_error *err)
{
    byocl_error local;
    if (!err)
        err = &local; /* the builders below read the status back */
    const char *api = node_cost ? "byocl_split_weighted" : "byocl_split";
    if (!out)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s: no place for the result", api);
    *out = NULL;
    if (!m)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s: no module", api);
    bool by_cuts = n_cuts > 0;
    if (by_cuts ? (!cut_numbers || n_parts != 0) : (n_cuts < 0 || cut_numbers))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_split: give either cut points or a number of parts");
    const byocl_function *fn = byocl_module_find(m, "main");
    if (!fn)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "the module has no @main to split");
    byocl_status st = byocl_verify(m, true, err);
    if (st == BYOCL_OK && node_cost)
        st = check_costs(fn, node_cost, n_costs, err);
    if (st != BYOCL_OK)
        return st;
    split_plan p = {.fn = fn, .n = fn->n_nodes, .node_cost = node_cost};
    int *map = malloc((size_t)(p.n > 0 ? p.n : 1) * sizeof *map);
    bool *uses = malloc((size_t)(p.n > 0 ? p.n : 1) * sizeof *uses);
    if (!map || !uses)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting @main");
    if (st == BYOCL_OK)
        st = plan_units(&p, err);
    if (st == BYOCL_OK)
        st = by_cuts ? place_at_cuts(&p, cut_numbers, n_cuts, err)
                     : place_balanced(&p, n_parts, err);
    byocl_stages *s = NULL;
    if (st == BYOCL_OK) {
        plan_wiring(&p);
        s = split_stages_new(p.n_stages, err);
        st = s ? build_signature(fn, s->signature, err) : err->status;
    }
    for (int k = 0; st == BYOCL_OK && k < p.n_stages; k++)
        st = build_stage(&p, k, &s->stages[k], map, uses, err);
    plan_free(&p);
    free(map);
    free(uses);
    if (st != BYOCL_OK) {
        byocl_stages_free(s);
        return st;
    }
    *out = s;
    return BYOCL_OK;
}

byocl_status byocl_split(const byocl_module *m, const int *cut_numbers, int n_cuts,
                         int n_parts, byocl_stages **out, byocl_error *err)
{
    return split_module(m, cut_numbers, n_cuts, n_parts, NULL, 0, out, err);
}

byocl_status byocl_split_weighted(const byocl_module *m, int n_parts, const double *node_cost,
                                  int n_nodes, byocl_stages **out, byocl_error *err)
{
    if (!node_cost) {
        if (out)
            *out = NULL;
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_split_weighted: no costs");
    }
    return split_module(m, NULL, 0, n_parts, node_cost, n_nodes, out, err);
}

/* ------------------------------------------------------------ accessors */

int byocl_stages_count(const byocl_stages *s) { return s->n_stages; }

const byocl_module *byocl_stages_module(const byocl_stages *s, int k)
{
    return k >= 0 && k < s->n_stages ? s->stages[k].mod : NULL;
}

static const byocl_function *signature_fn(const byocl_stages *s)
{
    return byocl_module_find(s->signature, "main");
}

int byocl_stages_num_inputs(const byocl_stages *s)
{
    return byocl_function_num_params(signature_fn(s));
}

const char *byocl_stages_input_name(const byocl_stages *s, int i)
{
    const byocl_function *sig = signature_fn(s);
    return i >= 0 && i < sig->n_params ? sig->nodes[sig->params[i]].name : NULL;
}

const byocl_type *byocl_stages_input_type(const byocl_stages *s, int i)
{
    const byocl_function *sig = signature_fn(s);
    return i >= 0 && i < sig->n_params ? sig->nodes[sig->params[i]].type : NULL;
}

static const split_stage *stage_at(const byocl_stages *s, int k)
{
    return k >= 0 && k < s->n_stages ? &s->stages[k] : NULL;
}

int byocl_stage_num_inputs(const byocl_stages *s, int k)
{
    const split_stage *st = stage_at(s, k);
    return st ? st->n_inputs : 0;
}

byocl_stage_input byocl_stage_input_at(const byocl_stages *s, int k, int i)
{
    const split_stage *st = stage_at(s, k);
    if (!st || i < 0 || i >= st->n_inputs)
        return (byocl_stage_input){NULL, -1, -1};
    return st->inputs[i];
}

int byocl_stage_num_outputs(const byocl_stages *s, int k)
{
    const split_stage *st = stage_at(s, k);
    return st ? st->n_outputs : 0;
}

byocl_stage_output byocl_stage_output_at(const byocl_stages *s, int k, int i)
{
    const split_stage *st = stage_at(s, k);
    if (!st || i < 0 || i >= st->n_outputs)
        return (byocl_stage_output){NULL, NULL, NULL};
    return st->outputs[i];
}

const char *byocl_stage_first_node(const byocl_stages *s, int k)
{
    const split_stage *st = stage_at(s, k);
    return st ? st->first : NULL;
}

const char *byocl_stage_last_node(const byocl_stages *s, int k)
{
    const split_stage *st = stage_at(s, k);
    return st ? st->last : NULL;
}

int byocl_stage_num_nodes(const byocl_stages *s, int k)
{
    const split_stage *st = stage_at(s, k);
    return st ? st->n_nodes : 0;
}

int64_t byocl_stage_flops(const byocl_stages *s, int k)
{
    const split_stage *st = stage_at(s, k);
    return st ? st->flops : 0;
}

double byocl_stage_cost(const byocl_stages *s, int k)
{
    const split_stage *st = stage_at(s, k);
    return st ? st->cost : -1;
}
