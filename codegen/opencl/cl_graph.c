/* Region analysis: which node's storage holds each tensor (tuples, TupleGetItem,
 * reshape and batch_flatten only name other storage), how often each is read, and the
 * groups of ops that become one kernel: an anchor (conv2d, conv2d_transpose, dense,
 * batch_matmul, a pool, softmax, log_softmax, layer_norm, a reduction, resize2d,
 * strided_slice, broadcast_to, take, gather, gather_nd, nn.pad, trilu, transpose
 * (depth_to_space, space_to_depth), concatenate, topk, one_hot, cumsum, scatter_elements,
 * scatter_nd, or an elementwise op) and the elementwise ops fused after it where the
 * value in between has no other reader. topk's (values, indices) tuple is two stored values: the call's node holds
 * the values, and the first TupleGetItem of field 1 the indices (clg_supports admits the
 * tuple only when items are all that read it). */
#include <stdlib.h>
#include <string.h>

#include "cl_impl.h"
#include "ops/index.h"
#include "ops/op_impl.h"
#include "ops/node_util.h"
#include "ops/reduce.h"
#include "ops/transform.h"

/* More steps and operands than any model chains; they bound a kernel's parameters
 * (clg_kernel holds 48: the anchor's own buffers and the operands). */
#define CLG_MAX_STEPS 16
#define CLG_MAX_OPERANDS 32

static const char *op_name(const byocl_function *fn, int node)
{
    const byocl_node *n = &fn->nodes[node];
    return n->kind == BYOCL_NODE_CALL && n->op ? n->op->name : NULL;
}

static bool is_view_op(const char *op)
{
    return strcmp(op, "reshape") == 0 || strcmp(op, "nn.batch_flatten") == 0;
}

static clg_anchor anchor_of(const char *op)
{
    if (strcmp(op, "nn.conv2d") == 0)
        return CLG_ANCHOR_CONV;
    if (strcmp(op, "nn.conv2d_transpose") == 0)
        return CLG_ANCHOR_CONV_TRANSPOSE;
    if (strcmp(op, "nn.dense") == 0 || strcmp(op, "nn.batch_matmul") == 0)
        return CLG_ANCHOR_DENSE;
    if (strcmp(op, "nn.softmax") == 0 || strcmp(op, "nn.log_softmax") == 0 ||
        strcmp(op, "nn.layer_norm") == 0)
        return CLG_ANCHOR_SOFTMAX;
    if (ops_reduce_kind_of(op) != OPS_REDUCE_NONE)
        return CLG_ANCHOR_REDUCE; /* clg_supports admitted every reduction */
    if (strcmp(op, "image.resize2d") == 0)
        return CLG_ANCHOR_RESIZE;
    if (ops_is_permute(op)) /* transpose, nn.depth_to_space, nn.space_to_depth */
        return CLG_ANCHOR_TRANSPOSE;
    if (ops_is_affine(op) || strcmp(op, "take") == 0 || strcmp(op, "gather") == 0 ||
        strcmp(op, "gather_nd") == 0 || strcmp(op, "nn.pad") == 0 || strcmp(op, "trilu") == 0)
        return CLG_ANCHOR_GATHER;
    if (strcmp(op, "concatenate") == 0)
        return CLG_ANCHOR_CONCAT;
    if (strcmp(op, "cumsum") == 0)
        return CLG_ANCHOR_CUMSUM;
    if (strcmp(op, "scatter_elements") == 0 || strcmp(op, "scatter_nd") == 0)
        return CLG_ANCHOR_SCATTER;
    if (clg_is_elemwise_op(op))
        return CLG_ANCHOR_ELEMWISE;
    if (strcmp(op, "topk") == 0)
        return CLG_ANCHOR_TOPK;
    if (strcmp(op, "one_hot") == 0)
        return CLG_ANCHOR_ONE_HOT;
    return CLG_ANCHOR_POOL; /* the pools: clg_supports admitted nothing else */
}

/* Anchors whose kernels run an epilogue on each result element. */
static bool takes_epilogue(clg_anchor kind)
{
    return kind != CLG_ANCHOR_TRANSPOSE && kind != CLG_ANCHOR_CONCAT && kind != CLG_ANCHOR_TOPK;
}

/* A call whose tuple result is stored field by field: batch_norm (its statistics are its
 * arguments) and topk with both results. */
static bool is_tuple_call(const byocl_function *fn, int node, const char *op)
{
    const byocl_type *t = fn->nodes[node].type;
    return t->kind == BYOCL_TYPE_TUPLE && t->n_fields > 0 &&
           t->fields[0]->kind == BYOCL_TYPE_TENSOR &&
           (strcmp(op, "nn.batch_norm") == 0 || strcmp(op, "topk") == 0);
}

int clg_item_of(const byocl_function *fn, int node, int field)
{
    for (int id = node + 1; id < fn->n_nodes; id++) {
        const byocl_node *n = &fn->nodes[id];
        if (n->kind == BYOCL_NODE_GETITEM && n->args[0] == node && n->index == field)
            return id;
    }
    return -1;
}

const byocl_type *clg_tensor_type(const byocl_function *fn, int node)
{
    const byocl_type *t = fn->nodes[node].type;
    if (t->kind == BYOCL_TYPE_TENSOR)
        return t;
    const char *op = op_name(fn, node);
    return op && is_tuple_call(fn, node, op) ? t->fields[0] : NULL;
}


static bool flat_push(clg_flat_table *ft, int root)
{
    if (ft->n == ft->cap) {
        int cap = ft->cap ? 2 * ft->cap : 64;
        int *r = realloc(ft->roots, (size_t)cap * sizeof *r);
        if (!r)
            return false;
        ft->roots = r;
        ft->cap = cap;
    }
    ft->roots[ft->n++] = root;
    return true;
}

/* The first root of `node` (its own root when it is a tensor). */
static int flat_first(const clg_flat_table *ft, int node)
{
    return ft->count[node] > 0 ? ft->roots[ft->start[node]] : -1;
}

static byocl_status unsupported_at(const byocl_function *fn, int id, byocl_error *err,
                                   const char *what)
{
    byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "%s", what);
    ops_node_error_at(err, fn, id);
    return BYOCL_ERR_UNSUPPORTED;
}

/* Fills node `id`'s flattened roots. */
static byocl_status flatten_node(const byocl_function *fn, int id, clg_flat_table *ft,
                                 byocl_error *err)
{
    const byocl_node *n = &fn->nodes[id];
    ft->start[id] = ft->n;
    bool ok = true;
    switch (n->kind) {
    case BYOCL_NODE_VAR:
    case BYOCL_NODE_CONSTANT:
        if (n->type->kind != BYOCL_TYPE_TENSOR)
            return unsupported_at(fn, id, err, "tuple-typed parameters are not supported by "
                                               "the opencl target");
        ok = flat_push(ft, id);
        break;
    case BYOCL_NODE_TUPLE:
        for (int k = 0; ok && k < n->n_args; k++) {
            int a = n->args[k];
            for (int i = 0; ok && i < ft->count[a]; i++)
                ok = flat_push(ft, ft->roots[ft->start[a] + i]);
        }
        break;
    case BYOCL_NODE_GETITEM: {
        int t = n->args[0];
        const byocl_type *tt = fn->nodes[t].type;
        if (tt->kind != BYOCL_TYPE_TUPLE || n->index < 0 || n->index >= tt->n_fields)
            return unsupported_at(fn, id, err, "malformed TupleGetItem");
        int at = 0;
        for (int k = 0; k < n->index; k++)
            at += byocl_type_num_tensors(tt->fields[k]);
        int len = byocl_type_num_tensors(tt->fields[n->index]);
        if (at + len > ft->count[t])
            return unsupported_at(fn, id, err, "malformed TupleGetItem");
        for (int i = 0; ok && i < len; i++)
            ok = flat_push(ft, ft->roots[ft->start[t] + at + i]);
        break;
    }
    case BYOCL_NODE_CALL: {
        const char *op = op_name(fn, id);
        if (op && strcmp(op, "nn.batch_norm") == 0)
            /* TVM's inference form: fields 1 and 2 are the moving statistics as given. */
            ok = flat_push(ft, id) && flat_push(ft, flat_first(ft, n->args[3])) &&
                 flat_push(ft, flat_first(ft, n->args[4]));
        else if (op && strcmp(op, "topk") == 0 && is_tuple_call(fn, id, op))
            /* Field 1 (the indices), when something takes it, in its first item. */
            ok = flat_push(ft, id) &&
                 (clg_item_of(fn, id, 1) < 0 || flat_push(ft, clg_item_of(fn, id, 1)));
        else if (op && is_view_op(op))
            ok = flat_push(ft, flat_first(ft, n->args[0]));
        else
            ok = flat_push(ft, id);
        break;
    }
    }
    if (!ok)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory analysing @%s", fn->name);
    ft->count[id] = ft->n - ft->start[id];
    return BYOCL_OK;
}

/* Marks the nodes the body depends on. */
static void mark_live(const byocl_function *fn, bool *live)
{
    live[fn->body] = true;
    for (int id = fn->n_nodes - 1; id >= 0; id--) {
        if (!live[id])
            continue;
        const byocl_node *n = &fn->nodes[id];
        for (int k = 0; k < n->n_args; k++)
            live[n->args[k]] = true;
    }
}

static byocl_status group_new(clg_graph *g, clg_anchor kind, int anchor, byocl_error *err)
{
    clg_group *groups = realloc(g->groups, (size_t)(g->n_groups + 1) * sizeof *groups);
    if (!groups)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory grouping kernels");
    g->groups = groups;
    clg_group *grp = &g->groups[g->n_groups];
    *grp = (clg_group){.kind = kind, .anchor = anchor, .tail = anchor, .prologue = -1,
                       .prologue_of = -1};
    grp->steps = malloc(CLG_MAX_STEPS * sizeof *grp->steps);
    grp->chain_arg = malloc(CLG_MAX_STEPS * sizeof *grp->chain_arg);
    if (!grp->steps || !grp->chain_arg) {
        free(grp->steps);
        free(grp->chain_arg);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory grouping kernels");
    }
    if (kind == CLG_ANCHOR_ELEMWISE) { /* the anchor is the chain's first step */
        grp->steps[0] = anchor;
        grp->chain_arg[0] = 0;
        grp->n_steps = 1;
        grp->n_operands = g->fn->nodes[anchor].n_args;
    }
    g->info[anchor].group = g->n_groups++;
    return BYOCL_OK;
}

/* The argument of elementwise call `id` through which it can join its producer's group,
 * or -1. */
static int fusable_arg(const clg_graph *g, int id)
{
    const byocl_function *fn = g->fn;
    const byocl_node *n = &fn->nodes[id];
    int candidates = clg_chain_args(n->op->name);
    const byocl_type *out = clg_tensor_type(fn, id);
    for (int k = 0; k < candidates; k++) {
        int a = n->args[k];
        int r = g->info[a].root;
        if (r < 0 || g->info[r].group < 0 || g->info[r].uses != 1)
            continue;
        const clg_group *grp = &g->groups[g->info[r].group];
        if (grp->tail != r || !takes_epilogue(grp->kind) || grp->n_steps >= CLG_MAX_STEPS ||
            grp->n_operands + n->n_args - 1 > CLG_MAX_OPERANDS)
            continue;
        /* The chain value must not be broadcast: one result element per input element. */
        const byocl_type *at = fn->nodes[a].type;
        if (at->kind == BYOCL_TYPE_TENSOR && byocl_shape_equal(&at->shape, &out->shape))
            return k;
    }
    return -1;
}

/* Whether argument `arg` of step `node` (of result shape `out`, rank 4) is the same for
 * every element of a plane: constant along the last two axes of `out`. */
static bool operand_per_plane(const byocl_function *fn, int node, int arg, const byocl_shape *out)
{
    const byocl_node *n = &fn->nodes[node];
    const byocl_type *t = fn->nodes[n->args[arg]].type;
    if (t->kind != BYOCL_TYPE_TENSOR || t->dtype != BYOCL_FLOAT32)
        return false;
    const char *op = n->op->name;
    if (strcmp(op, "nn.batch_norm") == 0 || strcmp(op, "nn.bias_add") == 0) {
        int64_t axis = byocl_attrs_get_int(&n->attrs, "axis", 1);
        return axis == 1 || axis == 1 - out->rank;
    }
    for (int d = out->rank - 2; d < out->rank; d++) {
        int k = d - (out->rank - t->shape.rank);
        if (k >= 0 && t->shape.dims[k] != 1)
            return false;
    }
    return true;
}

/* Whether elementwise group `grp` can be the prologue of conv `conv`, the one reader of its
 * result: float32 throughout, the chain's value the shape of the result (one input value
 * per result element), every other operand the same across each plane, every step with a
 * vector form (the conv applies the steps to vectors of one plane's values), and a 1x1
 * conv of stride 1 without padding, so that every value the conv or its laid-out input
 * reads is an input value (padding stays zero only if the steps are not applied to it),
 * that emit_conv schedules in position tiles (conv2d.cl): not the depthwise kernels, and
 * not channel tiles, which broadcast each input value they read and would run the steps
 * on every one of them, two scalar operations per vector multiply-add (densenet121's
 * sixteen 1x1 convs on 7x7 maps took 1 ms more so, more than the launches cost). */
static bool prologue_fits(const clg_graph *g, const clg_group *grp, int conv,
                          const byocl_cl_codegen_options *opt)
{
    const byocl_function *fn = g->fn;
    const byocl_type *x = fn->nodes[fn->nodes[conv].args[0]].type;
    if (x->dtype != BYOCL_FLOAT32 || x->shape.rank != 4)
        return false;
    /* emit_conv's schedule (the slack after the input decides only whether a 1x1 conv
     * reads it as it is or through the layout, which both apply the prologue) */
    clg_conv_sched s;
    byocl_error ignored = {0};
    bool fits = clg_conv_schedule(fn, conv, opt, 0, &s, &ignored) == BYOCL_OK &&
                s.kh == 1 && s.kw == 1 && s.stride[0] == 1 && s.stride[1] == 1 &&
                !s.pad[0] && !s.pad[1] && !s.pad[2] && !s.pad[3] &&
                !clg_conv_is_depthwise(&s) && !s.channels;
    clg_conv_sched_free(&s);
    if (!fits)
        return false;
    const byocl_shape *out = &clg_tensor_type(fn, grp->tail)->shape;
    for (int i = 0; i < grp->n_steps; i++) {
        int node = grp->steps[i];
        const byocl_node *n = &fn->nodes[node];
        const byocl_type *t = clg_tensor_type(fn, node);
        const byocl_type *in = fn->nodes[n->args[grp->chain_arg[i]]].type;
        if (!clg_step_vectorizes(n->op->name) || t->dtype != BYOCL_FLOAT32 ||
            in->kind != BYOCL_TYPE_TENSOR || in->dtype != BYOCL_FLOAT32 ||
            !byocl_shape_equal(&in->shape, out) || !byocl_shape_equal(&t->shape, out))
            return false;
        for (int k = 0; k < n->n_args; k++)
            if (k != grp->chain_arg[i] && !operand_per_plane(fn, node, k, out))
                return false;
    }
    return true;
}

/* Makes each elementwise group that fits (prologue_fits) the prologue of the conv that is
 * the one reader of its result: densenet's batch_norm + relu before each 1x1 conv, which
 * otherwise take a launch of their own that writes and then reads the whole tensor
 * (densenet121 offloaded: 62 such launches, 14% of its time). */
static void attach_prologues(clg_graph *g, const byocl_cl_codegen_options *opt)
{
    const byocl_function *fn = g->fn;
    for (int i = 0; i < g->n_groups; i++) {
        clg_group *conv = &g->groups[i];
        if (conv->kind != CLG_ANCHOR_CONV)
            continue;
        int r = g->info[fn->nodes[conv->anchor].args[0]].root;
        int gi = r >= 0 ? g->info[r].group : -1;
        if (gi < 0 || g->info[r].uses != 1)
            continue;
        clg_group *pro = &g->groups[gi];
        if (pro->kind != CLG_ANCHOR_ELEMWISE || pro->tail != r ||
            conv->n_operands + pro->n_operands > CLG_MAX_OPERANDS)
            continue;
        if (!prologue_fits(g, pro, conv->anchor, opt)) {
            /* A binary first step may carry the chain in its second argument, its first
             * the per-plane operand: squeeze-and-excitation's Mul(scale, x). */
            const byocl_node *first = &fn->nodes[pro->steps[0]];
            if (!clg_is_binary_op(first->op->name) || first->n_args != 2)
                continue;
            pro->chain_arg[0] = 1;
            if (!prologue_fits(g, pro, conv->anchor, opt)) {
                pro->chain_arg[0] = 0;
                continue;
            }
        }
        conv->prologue = gi;
        pro->prologue_of = i;
    }
}

static int compare_tail(const void *a, const void *b)
{
    const clg_group *x = a, *y = b;
    return (x->tail > y->tail) - (x->tail < y->tail);
}

/* Reads of what call `id` computes: its own root's, and for topk's tuple the indices'. */
static int uses_of_call(const clg_graph *g, int id, const char *op)
{
    int item = strcmp(op, "topk") == 0 ? clg_item_of(g->fn, id, 1) : -1;
    return g->info[id].uses + (item >= 0 ? g->info[item].uses : 0);
}

static byocl_status form_groups(clg_graph *g, const bool *live,
                                const byocl_cl_codegen_options *opt, byocl_error *err)
{
    bool no_fusion = opt->no_fusion;
    const byocl_function *fn = g->fn;
    for (int id = 0; id < fn->n_nodes; id++) {
        const char *op = op_name(fn, id);
        if (!live[id] || !op || is_view_op(op) || uses_of_call(g, id, op) == 0)
            continue; /* views compute nothing; an unread batch_norm neither */
        clg_anchor kind = anchor_of(op);
        int k = kind == CLG_ANCHOR_ELEMWISE && !no_fusion ? fusable_arg(g, id) : -1;
        if (k < 0) {
            byocl_status st = group_new(g, kind, id, err);
            if (st != BYOCL_OK)
                return st;
            continue;
        }
        int gi = g->info[g->info[fn->nodes[id].args[k]].root].group;
        clg_group *grp = &g->groups[gi];
        grp->steps[grp->n_steps] = id;
        grp->chain_arg[grp->n_steps] = k;
        grp->n_steps++;
        grp->n_operands += fn->nodes[id].n_args - 1;
        grp->tail = id;
        g->info[id].group = gi;
    }
    /* Launch order: a group runs once the last of its nodes can, i.e. by its tail. */
    if (g->n_groups > 1) /* none: groups may be NULL, which qsort may not take */
        qsort(g->groups, (size_t)g->n_groups, sizeof *g->groups, compare_tail);
    for (int i = 0; i < g->n_groups; i++) {
        const clg_group *grp = &g->groups[i];
        g->info[grp->anchor].group = i;
        int item = grp->kind == CLG_ANCHOR_TOPK ? clg_item_of(fn, grp->anchor, 1) : -1;
        if (item >= 0)
            g->info[item].group = i;
        for (int s = 0; s < grp->n_steps; s++)
            g->info[grp->steps[s]].group = i;
    }
    if (!no_fusion)
        attach_prologues(g, opt);
    return BYOCL_OK;
}

/* Reads of each root: every argument of a computing call, and the region's outputs. */
static void count_uses(clg_graph *g, const bool *live, const clg_flat_table *ft)
{
    const byocl_function *fn = g->fn;
    for (int id = 0; id < fn->n_nodes; id++) {
        const char *op = op_name(fn, id);
        if (!live[id] || !op || is_view_op(op))
            continue;
        const byocl_node *n = &fn->nodes[id];
        for (int k = 0; k < n->n_args; k++)
            for (int i = 0; i < ft->count[n->args[k]]; i++)
                g->info[ft->roots[ft->start[n->args[k]] + i]].uses++;
    }
    for (int i = 0; i < g->n_outputs; i++)
        g->info[g->outputs[i]].uses++;
    /* A batch_norm whose result is not read (only its statistics, fields 1 and 2, are)
     * is not computed, and does not read its arguments. Later nodes come first, so the
     * arguments of an unread batch_norm are known before their own producers. */
    for (int id = fn->n_nodes - 1; id >= 0; id--) {
        const char *op = op_name(fn, id);
        if (!live[id] || !op || strcmp(op, "nn.batch_norm") != 0 || g->info[id].uses > 0)
            continue;
        const byocl_node *n = &fn->nodes[id];
        for (int k = 0; k < n->n_args; k++)
            for (int i = 0; i < ft->count[n->args[k]]; i++)
                g->info[ft->roots[ft->start[n->args[k]] + i]].uses--;
    }
}

static byocl_status check_calls(const byocl_function *fn, const bool *live, byocl_error *err)
{
    for (int id = 0; id < fn->n_nodes; id++) {
        if (!live[id] || fn->nodes[id].kind != BYOCL_NODE_CALL)
            continue;
        char why[256];
        if (!clg_supports(fn, id, why, sizeof why))
            return unsupported_at(fn, id, err, why);
    }
    return BYOCL_OK;
}

byocl_status clg_graph_build(const byocl_function *fn, const byocl_cl_codegen_options *opt,
                            clg_graph *g, byocl_error *err)
{
    *g = (clg_graph){.fn = fn};
    if (fn->body < 0 || fn->body >= fn->n_nodes)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "@%s has no body", fn->name);
    for (int id = 0; id < fn->n_nodes; id++)
        if (fn->nodes[id].type->kind == BYOCL_TYPE_NONE)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "@%s is not type-checked (run byocl_infer_types first)",
                                   fn->name);
    size_t n = (size_t)fn->n_nodes;
    bool *live = calloc(n, sizeof *live);
    clg_flat_table ft = {.start = calloc(n, sizeof(int)), .count = calloc(n, sizeof(int))};
    g->info = malloc(n * sizeof *g->info);
    byocl_status st = BYOCL_OK;
    if (!live || !ft.start || !ft.count || !g->info)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory analysing @%s", fn->name);
    if (st == BYOCL_OK) {
        mark_live(fn, live);
        st = check_calls(fn, live, err);
    }
    for (int id = 0; st == BYOCL_OK && id < fn->n_nodes; id++) {
        g->info[id] = (clg_node_info){.root = -1, .group = -1, .buf = -1};
        if (live[id] || fn->nodes[id].kind == BYOCL_NODE_VAR)
            st = flatten_node(fn, id, &ft, err);
        if (st == BYOCL_OK && clg_tensor_type(fn, id))
            g->info[id].root = flat_first(&ft, id);
    }
    if (st == BYOCL_OK) {
        g->n_outputs = ft.count[fn->body];
        g->outputs = malloc((size_t)(g->n_outputs ? g->n_outputs : 1) * sizeof *g->outputs);
        if (!g->outputs)
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory analysing @%s", fn->name);
        else if (g->n_outputs == 0)
            st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                 "@%s returns no tensor; a region needs at least one output",
                                 fn->name);
        else
            memcpy(g->outputs, ft.roots + ft.start[fn->body],
                   (size_t)g->n_outputs * sizeof *g->outputs);
    }
    if (st == BYOCL_OK) {
        count_uses(g, live, &ft);
        st = form_groups(g, live, opt, err);
    }
    free(live);
    g->flat = ft;
    if (st != BYOCL_OK)
        clg_graph_free(g);
    return st;
}

void clg_graph_free(clg_graph *g)
{
    for (int i = 0; i < g->n_groups; i++) {
        free(g->groups[i].steps);
        free(g->groups[i].chain_arg);
    }
    free(g->groups);
    free(g->info);
    free(g->outputs);
    free(g->flat.start);
    free(g->flat.count);
    free(g->flat.roots);
    *g = (clg_graph){0};
}

int clg_flatten(const clg_graph *g, int node, int *roots, int max)
{
    const clg_flat_table *ft = &g->flat;
    for (int i = 0; i < ft->count[node] && i < max; i++)
        roots[i] = ft->roots[ft->start[node] + i];
    return ft->count[node];
}
