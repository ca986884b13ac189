/* Fusion groups of the LLVM host backend.
 *
 * Walking the host op calls in topological order, a call joins the group of an argument
 * when that argument is the group's current result, nobody outside the call's group
 * uses it, and the call is elementwise with the argument's shape: conv2d and dense
 * (anchors) collect their epilogues (bias_add, batch_norm, the add of a residual,
 * relu/clip/leaky_relu, ...), and elementwise calls collect trees of elementwise
 * producers (a value read twice, as x in x * sigmoid(x), joins once both readers are in
 * the group; not from a conv). A value read outside its group, or one that leaves @main,
 * ends its group. Every other op is a group of its own. Groups come out ordered by their
 * last node, which respects dependencies: a value a group reads from another group is
 * that group's last node (any other was joined by a call whose group holds all its
 * readers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* ------------------------------------------------------------ op classes */

static const char *const elemwise_ops[] = {
    "add",         "subtract",      "multiply",      "divide",      "maximum",
    "minimum",     "power",         "equal",         "not_equal",   "less",
    "greater",     "less_equal",    "greater_equal", "logical_and", "logical_or",
    "logical_xor", "logical_not",   "where",         "abs",         "negative",
    "exp",         "log",           "sqrt",          "rsqrt",       "erf",
    "sigmoid",     "tanh",          "clip",          "copy",        "cast",
    "nn.relu",     "nn.leaky_relu", "nn.bias_add",   "nn.batch_norm",
    "annotation.compiler_begin",    "annotation.compiler_end",
    "mod",         "floor_mod",     "sign",          "round",       "sin",
    "cos",         "tan",           "asin",          "acos",        "atan",
    "sinh",        "cosh",          "asinh",         "acosh",       "atanh",
    "isinf",       "isnan",         "floor",         "ceil",
};

lop_class lop_classify(const char *op)
{
    if (strcmp(op, "nn.conv2d") == 0 || strcmp(op, "nn.conv2d_transpose") == 0 ||
        strcmp(op, "nn.dense") == 0)
        return LOP_ANCHOR;
    for (size_t i = 0; i < sizeof elemwise_ops / sizeof elemwise_ops[0]; i++)
        if (strcmp(op, elemwise_ops[i]) == 0)
            return LOP_ELEMWISE;
    return LOP_OTHER;
}

/* Arguments of an elementwise op that carry its data (the others are parameters such as
 * a bias or batch_norm's statistics). */
static int data_args(const char *op, int n_args)
{
    if (strcmp(op, "nn.bias_add") == 0 || strcmp(op, "nn.batch_norm") == 0)
        return 1;
    return n_args;
}

/* ------------------------------------------------------------ values */

bool lv_equal(byocl_value_ref a, byocl_value_ref b)
{
    return a.node == b.node && a.field == b.field;
}

byocl_value_ref lv_resolve(const byocl_function *fn, int node, int field)
{
    for (;;) {
        const byocl_node *n = &fn->nodes[node];
        if (n->kind == BYOCL_NODE_GETITEM) {
            const byocl_type *t = fn->nodes[n->args[0]].type;
            int offset = 0;
            for (int k = 0; k < n->index && t->kind == BYOCL_TYPE_TUPLE && k < t->n_fields; k++)
                offset += byocl_type_num_tensors(t->fields[k]);
            field = (field < 0 ? 0 : field) + offset;
            node = n->args[0];
            continue;
        }
        if (n->kind == BYOCL_NODE_TUPLE) {
            int f = field < 0 ? 0 : field, k = 0;
            for (; k < n->n_args; k++) {
                int cnt = byocl_type_num_tensors(fn->nodes[n->args[k]].type);
                if (f < cnt)
                    break;
                f -= cnt;
            }
            if (k == n->n_args) /* malformed: stop here */
                return (byocl_value_ref){node, field};
            node = n->args[k];
            field = fn->nodes[node].type->kind == BYOCL_TYPE_TUPLE ? f : -1;
            continue;
        }
        if (n->type->kind != BYOCL_TYPE_TUPLE)
            field = -1;
        return (byocl_value_ref){node, field};
    }
}

int lv_flatten(const byocl_function *fn, int node, byocl_value_ref *out, int max)
{
    const byocl_type *t = fn->nodes[node].type;
    if (t->kind != BYOCL_TYPE_TUPLE) {
        if (max > 0)
            out[0] = lv_resolve(fn, node, -1);
        return 1;
    }
    int n = byocl_type_num_tensors(t);
    for (int f = 0; f < n && f < max; f++)
        out[f] = lv_resolve(fn, node, f);
    return n;
}

/* ------------------------------------------------------------ planner */

/* Dense numbering of the tensor values of fn: value (node, field) has id
 * base[node] + max(field, 0). */
typedef struct value_index {
    int *base;
    int n;
} value_index;

typedef struct planner {
    const byocl_function *fn;
    value_index vi;
    int *n_uses;       /* per value: consumer slots that read it (@main's result too) */
    int *group_of;     /* per node: group id, -1 outside every group */
    bool *needed;      /* per node: the body depends on it */
    /* groups under construction */
    int n_groups;
    int *root;         /* per group: its last node */
    int *anchor;       /* per group: the conv2d/dense node or -1 */
    lop_class *kind;   /* per group: class of its first node */
    bool *merged;      /* per group: absorbed into another */
} planner;

static int value_id(const planner *p, byocl_value_ref v)
{
    return p->vi.base[v.node] + (v.field < 0 ? 0 : v.field);
}

static void add_use(planner *p, byocl_value_ref v)
{
    p->n_uses[value_id(p, v)]++;
}

/* Marks what the body needs and counts, per value, the consumers that read it. */
static byocl_status count_uses(planner *p, byocl_error *err)
{
    const byocl_function *fn = p->fn;
    int max_vals = 0;
    for (int id = 0; id < fn->n_nodes; id++) {
        int cnt = byocl_type_num_tensors(fn->nodes[id].type);
        if (cnt > max_vals)
            max_vals = cnt;
    }
    byocl_value_ref *vals = malloc((size_t)(max_vals > 0 ? max_vals : 1) * sizeof *vals);
    if (!vals)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory planning host kernels");
    p->needed[fn->body] = true;
    for (int id = fn->body; id >= 0; id--) {
        const byocl_node *n = &fn->nodes[id];
        if (!p->needed[id])
            continue;
        for (int k = 0; k < n->n_args; k++)
            p->needed[n->args[k]] = true;
        if (n->kind != BYOCL_NODE_CALL)
            continue;
        for (int k = 0; k < n->n_args; k++) {
            int cnt = lv_flatten(fn, n->args[k], vals, max_vals);
            for (int f = 0; f < cnt; f++)
                add_use(p, vals[f]);
        }
    }
    int cnt = lv_flatten(fn, fn->body, vals, max_vals);
    for (int f = 0; f < cnt; f++)
        add_use(p, vals[f]); /* leaves @main: read outside every group */
    free(vals);
    return BYOCL_OK;
}

static const byocl_type *value_type(const byocl_function *fn, byocl_value_ref v)
{
    return host_value_ref_type(fn, v);
}

/* The value node `id` computes as its main result (field 0 of batch_norm). */
static byocl_value_ref main_value(const byocl_function *fn, int id)
{
    return (byocl_value_ref){id, fn->nodes[id].type->kind == BYOCL_TYPE_TUPLE ? 0 : -1};
}

/* Consumer slots of value v in calls of group g, counted as count_uses counts them (a
 * tuple argument's values past the 16th are not: fewer uses inside only make v an
 * output, or keep it out of the group). */
static int uses_in_group(const planner *p, byocl_value_ref v, int g)
{
    const byocl_function *fn = p->fn;
    byocl_value_ref vals[16];
    int uses = 0;
    for (int k = 0; k < fn->n_nodes; k++) {
        if (p->group_of[k] != g || fn->nodes[k].kind != BYOCL_NODE_CALL)
            continue;
        for (int a = 0; a < fn->nodes[k].n_args; a++) {
            int cnt = lv_flatten(fn, fn->nodes[k].args[a], vals, 16);
            for (int f = 0; f < cnt && f < 16; f++)
                uses += lv_equal(vals[f], v);
        }
    }
    return uses;
}

/* Can elementwise call `c` join the group that produces its argument value v? */
static bool joinable(const planner *p, int c, byocl_value_ref v)
{
    const byocl_function *fn = p->fn;
    if (v.node < 0 || fn->nodes[v.node].kind != BYOCL_NODE_CALL)
        return false;
    int g = p->group_of[v.node];
    if (g < 0 || p->merged[g] || p->root[g] != v.node)
        return false;
    if (!lv_equal(main_value(fn, v.node), v))
        return false;
    /* Every consumer of v is in c's group (c, or a call merged into it). A value read
     * twice (x in multiply(x, sigmoid(x)), in a GELU) only from an elementwise group or
     * a dense: in a conv's epilogue the exp or erf ran slower than in a loop of its own,
     * whose extra pass over memory cost less (docs/host-codegen.md, Fusion). */
    int uses = p->n_uses[value_id(p, v)];
    if (uses_in_group(p, v, p->group_of[c]) != uses)
        return false;
    if (uses > 1 && p->anchor[g] >= 0 && strcmp(fn->nodes[p->anchor[g]].op->name, "nn.dense") != 0)
        return false;
    const byocl_type *in = value_type(fn, v), *out = value_type(fn, main_value(fn, c));
    return in && out && byocl_shape_equal(&in->shape, &out->shape);
}

static void merge_into(planner *p, int from, int into)
{
    for (int id = 0; id < p->fn->n_nodes; id++)
        if (p->group_of[id] == from)
            p->group_of[id] = into;
    p->merged[from] = true;
    if (p->anchor[from] >= 0)
        p->anchor[into] = p->anchor[from];
}

static int new_group(planner *p, int id, lop_class kind)
{
    int g = p->n_groups++;
    p->root[g] = id;
    p->anchor[g] = kind == LOP_ANCHOR ? id : -1;
    p->kind[g] = kind;
    p->merged[g] = false;
    p->group_of[id] = g;
    return g;
}

static void place(planner *p, int c)
{
    const byocl_node *n = &p->fn->nodes[c];
    lop_class cls = lop_classify(n->op->name);
    if (cls != LOP_ELEMWISE) {
        new_group(p, c, cls);
        return;
    }
    int g = new_group(p, c, LOP_ELEMWISE);
    int n_data = data_args(n->op->name, n->n_args);
    bool have_anchor = false;
    /* Again after each merge: a value that c reads and a call merged since reads too (x
     * in multiply(x, sigmoid(x))) then has all its readers in the group. */
    for (bool grew = true; grew;) {
        grew = false;
        for (int k = 0; k < n_data; k++) {
            const byocl_type *t = p->fn->nodes[n->args[k]].type;
            if (t->kind != BYOCL_TYPE_TENSOR)
                continue;
            byocl_value_ref v = lv_resolve(p->fn, n->args[k], -1);
            if (!joinable(p, c, v))
                continue;
            int from = p->group_of[v.node];
            if (p->kind[from] == LOP_OTHER)
                continue;
            if (p->anchor[from] >= 0) {
                if (have_anchor)
                    continue; /* one conv2d/dense per kernel */
                have_anchor = true;
            }
            merge_into(p, from, g);
            grew = true;
        }
    }
    if (have_anchor)
        p->kind[g] = LOP_ANCHOR;
}

/* ------------------------------------------------------------ group records */

static void op_token(const char *op, char *buf, size_t len)
{
    snprintf(buf, len, "%s", op);
    for (char *q = buf; *q; q++)
        if (*q == '.')
            *q = '_';
}

/* "fused_nn_conv2d_nn_batch_norm_nn_relu_3" (3: the group's index); one op gives
 * "nn_max_pool2d_4". Long names keep their index. */
static void group_name(const byocl_function *fn, const byocl_host_group *g, int index,
                       char *buf, size_t len)
{
    char suffix[16], ops[256] = "", tok[64];
    snprintf(suffix, sizeof suffix, "_%d", index);
    size_t at = 0;
    if (g->n_nodes > 1)
        at = (size_t)snprintf(ops, sizeof ops, "fused");
    for (int i = 0; i < g->n_nodes && at < sizeof ops; i++) {
        op_token(fn->nodes[g->nodes[i]].op->name, tok, sizeof tok);
        at += (size_t)snprintf(ops + at, sizeof ops - at, "%s%s", at ? "_" : "", tok);
    }
    /* The ops are cut so that the suffix always fits (memcpy: gcc -O3 cannot see that). */
    size_t n_suffix = strlen(suffix), n_ops = strlen(ops);
    if (n_ops > len - 1 - n_suffix)
        n_ops = len - 1 - n_suffix;
    memcpy(buf, ops, n_ops);
    memcpy(buf + n_ops, suffix, n_suffix + 1);
}

static bool ref_listed(const byocl_value_ref *list, int n, byocl_value_ref v)
{
    for (int i = 0; i < n; i++)
        if (lv_equal(list[i], v))
            return true;
    return false;
}

/* Fills nodes, inputs (values read from outside, constants excluded: kernels hold
 * those) and outputs (values of the group used outside it). */
static byocl_status fill_group(const planner *p, int g, byocl_host_group *out,
                               byocl_error *err)
{
    const byocl_function *fn = p->fn;
    int n_nodes = 0, max_in = 0, max_out = 0;
    for (int id = 0; id < fn->n_nodes; id++) {
        if (p->group_of[id] != g)
            continue;
        n_nodes++;
        max_out += byocl_type_num_tensors(fn->nodes[id].type);
        for (int k = 0; k < fn->nodes[id].n_args; k++)
            max_in += byocl_type_num_tensors(fn->nodes[fn->nodes[id].args[k]].type);
    }
    out->nodes = malloc((size_t)n_nodes * sizeof *out->nodes);
    out->inputs = malloc((size_t)(max_in > 0 ? max_in : 1) * sizeof *out->inputs);
    out->outputs = malloc((size_t)(max_out > 0 ? max_out : 1) * sizeof *out->outputs);
    byocl_value_ref *vals = malloc((size_t)(max_in > 0 ? max_in : 1) * sizeof *vals);
    if (!out->nodes || !out->inputs || !out->outputs || !vals) {
        free(vals);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory planning host kernels");
    }
    for (int id = 0; id < fn->n_nodes; id++) {
        if (p->group_of[id] != g)
            continue;
        const byocl_node *n = &fn->nodes[id];
        out->nodes[out->n_nodes++] = id;
        out->flops += host_node_flops(fn, id);
        for (int k = 0; k < n->n_args; k++) {
            int cnt = lv_flatten(fn, n->args[k], vals, max_in);
            for (int f = 0; f < cnt; f++) {
                byocl_value_ref v = vals[f];
                if (p->group_of[v.node] == g || fn->nodes[v.node].kind == BYOCL_NODE_CONSTANT ||
                    ref_listed(out->inputs, out->n_inputs, v))
                    continue;
                out->inputs[out->n_inputs++] = v;
            }
        }
        int cnt = byocl_type_num_tensors(n->type);
        for (int f = 0; f < cnt; f++) {
            byocl_value_ref v = {id, n->type->kind == BYOCL_TYPE_TUPLE ? f : -1};
            if (uses_in_group(p, v, g) < p->n_uses[value_id(p, v)]) /* read outside */
                out->outputs[out->n_outputs++] = v;
        }
    }
    /* A group nothing reads (dead code the caller listed) still computes its result. */
    if (out->n_outputs == 0 && out->n_nodes > 0)
        out->outputs[out->n_outputs++] = main_value(fn, out->nodes[out->n_nodes - 1]);
    free(vals);
    return BYOCL_OK;
}

static void planner_free(planner *p)
{
    free(p->vi.base);
    free(p->n_uses);
    free(p->group_of);
    free(p->needed);
    free(p->root);
    free(p->anchor);
    free(p->kind);
    free(p->merged);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

byocl_status llvm_group(const byocl_function *fn, const int *compute, int n_compute,
                        byocl_host_group **groups_out, int *n_groups_out, byocl_error *err)
{
    *groups_out = NULL;
    *n_groups_out = 0;
    if (fn->body < 0 || fn->body >= fn->n_nodes)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "@%s has no body", fn->name);
    size_t nn = (size_t)fn->n_nodes, nc = (size_t)(n_compute > 0 ? n_compute : 1);
    planner p = {.fn = fn};
    p.vi.base = malloc(nn * sizeof *p.vi.base);
    p.group_of = malloc(nn * sizeof *p.group_of);
    p.needed = calloc(nn, sizeof *p.needed);
    p.root = malloc(nc * sizeof *p.root);
    p.anchor = malloc(nc * sizeof *p.anchor);
    p.kind = malloc(nc * sizeof *p.kind);
    p.merged = malloc(nc * sizeof *p.merged);
    int *order = malloc(nc * sizeof *order);
    byocl_status st = BYOCL_OK;
    if (!p.vi.base || !p.group_of || !p.needed || !p.root || !p.anchor || !p.kind || !p.merged ||
        !order) {
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory planning host kernels");
        goto done;
    }
    for (int id = 0; id < fn->n_nodes; id++) {
        p.vi.base[id] = p.vi.n;
        int cnt = byocl_type_num_tensors(fn->nodes[id].type);
        p.vi.n += cnt > 0 ? cnt : 1;
        p.group_of[id] = -1;
    }
    p.n_uses = calloc((size_t)p.vi.n, sizeof *p.n_uses);
    if (!p.n_uses) {
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory planning host kernels");
        goto done;
    }
    for (int k = 0; k < n_compute; k++) {
        int id = compute[k];
        if (id < 0 || id >= fn->n_nodes || fn->nodes[id].kind != BYOCL_NODE_CALL ||
            !fn->nodes[id].op) {
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "host node %d of @%s is not an op call", id, fn->name);
            goto done;
        }
        order[k] = id;
    }
    qsort(order, (size_t)n_compute, sizeof *order, cmp_int);
    if ((st = count_uses(&p, err)) != BYOCL_OK)
        goto done;
    for (int k = 0; k < n_compute; k++)
        place(&p, order[k]);

    /* Live groups in the order of their last node. */
    int n_live = 0;
    for (int g = 0; g < p.n_groups; g++)
        n_live += !p.merged[g];
    byocl_host_group *groups = calloc((size_t)(n_live > 0 ? n_live : 1), sizeof *groups);
    if (!groups) {
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory planning host kernels");
        goto done;
    }
    int at = 0;
    for (int g = 0; g < p.n_groups && st == BYOCL_OK; g++) {
        if (p.merged[g])
            continue;
        st = fill_group(&p, g, &groups[at], err);
        at++;
    }
    if (st != BYOCL_OK) {
        host_groups_free(groups, at);
        goto done;
    }
    /* Groups were created in the order of their first node; order by last node. */
    for (int i = 1; i < n_live; i++)
        for (int j = i; j > 0 && groups[j].nodes[groups[j].n_nodes - 1] <
                                     groups[j - 1].nodes[groups[j - 1].n_nodes - 1];
             j--) {
            byocl_host_group t = groups[j];
            groups[j] = groups[j - 1];
            groups[j - 1] = t;
        }
    for (int i = 0; i < n_live; i++)
        group_name(fn, &groups[i], i, groups[i].name, sizeof groups[i].name);
    *groups_out = groups;
    *n_groups_out = n_live;
done:
    free(order);
    planner_free(&p);
    return st;
}
