/* byocl_build: from a typed (possibly partitioned) module to a compiled model.
 *
 *   1. a typed copy of the module;
 *   2. values: every tensor the function computes, one per tensor-typed node or tuple
 *      field; Tuples, TupleGetItems, annotations and reshapes name or view an existing
 *      value (they alias its buffer) and compute nothing;
 *   3. steps: the host backend groups the remaining op calls into kernels; each call of a
 *      region (a function with a Compiler attribute) is a step of its runtime module;
 *   4. the steps in topological order;
 *   5. the host backend compiles every group at once;
 *   6. device memory, when a region's module has its own: where each value lives and the
 *      copies between memories (plan_memories);
 *   7. the storage plan: inputs, constants and outputs keep their own memory; a host
 *      concatenation into one contiguous block has its inputs written in place and no
 *      step (concat_in_place.c); every other tensor a step writes gets a buffer shared by
 *      liveness (storage_plan.c), except tensors that live in device memory only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "byocl/text.h"
#include "compiled.h"
#include "backend/storage_plan.h"
#include "base/thread_pool.h"
#include "module/dlpack.h"
#include "ir/ir_impl.h"
#include "ops/op_impl.h"
#include "ops/node_util.h"
#include "region_targets.h"

/* The LLVM host backend (codegen/llvm/, libbyocl_llvm.so) serves target "host"; a tree
 * without it builds target "ref" only. */
#if __has_include("llvm/llvm_backend.h")
#include "llvm/llvm_backend.h"
#define HAVE_LLVM_BACKEND 1
#else
#define HAVE_LLVM_BACKEND 0
#endif

/* Buffers start at multiples of this (vector loads of every host code path). */
#define BUFFER_ALIGN 64

byocl_build_options byocl_build_options_default(void)
{
    return (byocl_build_options){
        .target = "host", .fn_name = "main", .threads = 0, .opt_level = 2,
        .region_compile = NULL, .region_user = NULL,
    };
}

/* The host backend that code for `target` comes from. */
static byocl_status find_backend(const char *target, const byocl_host_backend_i **out,
                                 byocl_error *err)
{
    if (strcmp(target, "ref") == 0) {
        *out = &host_backend_ref;
        return BYOCL_OK;
    }
    if (strcmp(target, "host") == 0) {
#if HAVE_LLVM_BACKEND
        *out = &byocl_host_backend_llvm;
        return BYOCL_OK;
#else
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "target 'host' needs the LLVM host backend, which this build "
                               "does not have; use target 'ref'");
#endif
    }
    return byocl_error_set(err, BYOCL_ERR_INVALID, "unknown target '%s' (known: host, ref)",
                           target);
}

/* Ops that only change how a tensor's bytes are seen: their result aliases their argument. */
static bool is_view_op(const byocl_node *n)
{
    static const char *const views[] = {"annotation.compiler_begin", "annotation.compiler_end",
                                        "reshape", "squeeze", "expand_dims",
                                        "nn.batch_flatten"};
    if (n->kind != BYOCL_NODE_CALL || !n->op || n->n_args != 1 ||
        n->type->kind != BYOCL_TYPE_TENSOR)
        return false;
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
        if (strcmp(n->op->name, views[i]) == 0)
            return true;
    return false;
}

/* A compiler_begin/compiler_end of a tuple: it names its argument's values, as a Tuple
 * does. */
static bool is_tuple_annotation(const byocl_node *n)
{
    return n->kind == BYOCL_NODE_CALL && n->op && n->n_args == 1 &&
           n->type->kind == BYOCL_TYPE_TUPLE &&
           (strcmp(n->op->name, "annotation.compiler_begin") == 0 ||
            strcmp(n->op->name, "annotation.compiler_end") == 0);
}

/* The function that call `n` calls when it is a region (has a Compiler attribute), else
 * NULL. */
static const byocl_function *region_of(const byocl_compiled *c, const byocl_node *n)
{
    const byocl_function *callee = byocl_module_find(c->mod, n->callee);
    return callee && byocl_attrs_get_str(&callee->attrs, "Compiler", NULL) ? callee : NULL;
}

/* ------------------------------------------------------------------- values */

typedef struct builder {
    byocl_compiled *c;
    const byocl_build_options *opt;
    bool *needed;
    int cap_values, cap_node_values, n_node_values;
    int *compute;          /* op calls the host backend groups */
    int n_compute;
    byocl_host_group *groups;
    int n_groups;
    byocl_host_kernel *kernels;
    int *step_key;         /* per unordered step: the node that orders it */
} builder;

static int add_value(builder *b, int node, int field, int root, byocl_error *err)
{
    byocl_compiled *c = b->c;
    if (c->n_values == b->cap_values) {
        int cap = b->cap_values ? 2 * b->cap_values : 64;
        byocl_xvalue *v = realloc(c->values, (size_t)cap * sizeof *v);
        if (!v) {
            byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
            return -1;
        }
        c->values = v;
        b->cap_values = cap;
    }
    int id = c->n_values++;
    byocl_xvalue *v = &c->values[id];
    memset(v, 0, sizeof *v);
    v->node = node;
    v->field = field;
    v->type = host_value_ref_type(c->fn, (byocl_value_ref){node, field});
    v->nbytes = (size_t)byocl_shape_numel(&v->type->shape) * byocl_dtype_size(v->type->dtype);
    v->root = root < 0 ? id : c->values[root].root;
    v->producer = -1;
    v->within = -1;
    v->last_use = -1;
    v->memory = HOST_MEMORY;
    return id;
}

static byocl_status push_node_value(builder *b, int value, byocl_error *err)
{
    byocl_compiled *c = b->c;
    if (b->n_node_values == b->cap_node_values) {
        int cap = b->cap_node_values ? 2 * b->cap_node_values : 64;
        int *nv = realloc(c->node_values, (size_t)cap * sizeof *nv);
        if (!nv)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        c->node_values = nv;
        b->cap_node_values = cap;
    }
    c->node_values[b->n_node_values++] = value;
    return BYOCL_OK;
}

/* Names again the `count` node values from node_values[at] (a tuple, an item, the
 * annotation of a tuple: no value of their own). */
static byocl_status push_node_values(builder *b, int at, int count, byocl_error *err)
{
    for (int i = 0; i < count; i++) {
        byocl_status st = push_node_value(b, b->c->node_values[at + i], err);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

/* n fresh root values for the fields of node `id`, homed at `home`. */
static byocl_status new_roots(builder *b, int id, value_home home, int slot, byocl_error *err)
{
    const byocl_type *t = b->c->fn->nodes[id].type;
    int n = byocl_type_num_tensors(t);
    for (int k = 0; k < n; k++) {
        int v = add_value(b, id, t->kind == BYOCL_TYPE_TUPLE ? k : -1, -1, err);
        if (v < 0)
            return BYOCL_ERR_NOMEM;
        b->c->values[v].home = home;
        b->c->values[v].slot = slot;
        byocl_status st = push_node_value(b, v, err);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

/* Marks what the body needs, walking back from it. */
static void mark_needed(const byocl_function *fn, bool *needed)
{
    needed[fn->body] = true;
    for (int id = fn->body; id >= 0; id--)
        if (needed[id])
            for (int k = 0; k < fn->nodes[id].n_args; k++)
                needed[fn->nodes[id].args[k]] = true;
}

static byocl_status node_values(builder *b, int id, byocl_error *err)
{
    byocl_compiled *c = b->c;
    const byocl_function *fn = c->fn;
    const byocl_node *n = &fn->nodes[id];
    c->node_first[id] = b->n_node_values;
    switch (n->kind) {
    case BYOCL_NODE_VAR:
        for (int k = 0; k < fn->n_params; k++)
            if (fn->params[k] == id)
                return new_roots(b, id, HOME_INPUT, k, err);
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%%%s is not a parameter of @%s",
                               n->name ? n->name : "?", fn->name);
    case BYOCL_NODE_CONSTANT: {
        byocl_status st = new_roots(b, id, HOME_CONSTANT, -1, err);
        if (st == BYOCL_OK)
            c->values[c->n_values - 1].constant = byocl_tensor_cdata(n->value);
        return st;
    }
    case BYOCL_NODE_TUPLE:
        for (int k = 0; k < n->n_args; k++) {
            int a = n->args[k];
            byocl_status st = push_node_values(b, c->node_first[a],
                                               byocl_type_num_tensors(fn->nodes[a].type), err);
            if (st != BYOCL_OK)
                return st;
        }
        return BYOCL_OK;
    case BYOCL_NODE_GETITEM: {
        const byocl_type *tt = fn->nodes[n->args[0]].type;
        int at = c->node_first[n->args[0]];
        for (int k = 0; k < n->index; k++)
            at += byocl_type_num_tensors(tt->fields[k]);
        return push_node_values(b, at, byocl_type_num_tensors(n->type), err);
    }
    case BYOCL_NODE_CALL:
        break;
    }
    if (is_tuple_annotation(n))
        return push_node_values(b, c->node_first[n->args[0]], byocl_type_num_tensors(n->type),
                                err);
    if (is_view_op(n)) {
        int v = add_value(b, id, -1, c->node_values[c->node_first[n->args[0]]], err);
        return v < 0 ? BYOCL_ERR_NOMEM : push_node_value(b, v, err);
    }
    if (!n->op && !region_of(c, n)) {
        byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                        "calls of non-region global functions are not supported by the graph "
                        "executor; inline them");
        ops_node_error_at(err, fn, id);
        return BYOCL_ERR_UNSUPPORTED;
    }
    if (n->op)
        b->compute[b->n_compute++] = id;
    return new_roots(b, id, HOME_POOL, -1, err);
}

static byocl_status make_values(builder *b, byocl_error *err)
{
    byocl_compiled *c = b->c;
    const byocl_function *fn = c->fn;
    c->n_inputs = fn->n_params;
    c->input_values = malloc((fn->n_params > 0 ? (size_t)fn->n_params : 1) * sizeof(int));
    if (!c->input_values)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < fn->n_params; k++) {
        const byocl_node *p = &fn->nodes[fn->params[k]];
        if (p->type->kind != BYOCL_TYPE_TENSOR)
            return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                   "parameter %%%s of @%s is a tuple; the graph executor takes "
                                   "tensor inputs only",
                                   p->name, fn->name);
        b->needed[fn->params[k]] = true; /* an input even when nothing reads it */
    }
    for (int id = 0; id < fn->n_nodes; id++) {
        if (!b->needed[id])
            continue;
        byocl_status st = node_values(b, id, err);
        if (st != BYOCL_OK)
            return st;
    }
    for (int k = 0; k < fn->n_params; k++)
        c->input_values[k] = c->node_values[c->node_first[fn->params[k]]];
    return BYOCL_OK;
}

int driver_compiled_value_of(const byocl_compiled *c, int node, int field)
{
    if (node < 0 || node >= c->fn->n_nodes || c->node_first[node] < 0)
        return -1;
    int n = byocl_type_num_tensors(c->fn->nodes[node].type);
    int k = field < 0 ? 0 : field;
    if (k >= n || (field < 0 && c->fn->nodes[node].type->kind != BYOCL_TYPE_TENSOR))
        return -1;
    return c->node_values[c->node_first[node] + k];
}

/* -------------------------------------------------------------------- steps */

static byocl_status alloc_step_args(byocl_xstep *s, int n_in, int n_out, byocl_error *err)
{
    s->n_in = n_in;
    s->n_out = n_out;
    s->args = malloc((size_t)(n_in + n_out + 1) * sizeof *s->args);
    return s->args ? BYOCL_OK : byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
}

/* One kernel step per group, checking that the backend's groups cover the op calls once
 * and name values that exist. */
static byocl_status kernel_steps(builder *b, byocl_error *err)
{
    byocl_compiled *c = b->c;
    const byocl_function *fn = c->fn;
    const char *bname = c->backend->name;
    int *group_of = malloc((size_t)fn->n_nodes * sizeof *group_of);
    if (!group_of)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int id = 0; id < fn->n_nodes; id++)
        group_of[id] = -1;
    for (int i = 0; i < b->n_compute; i++)
        group_of[b->compute[i]] = -2; /* to be grouped */
    byocl_status st = BYOCL_OK;
    for (int g = 0; g < b->n_groups && st == BYOCL_OK; g++) {
        const byocl_host_group *grp = &b->groups[g];
        byocl_xstep *s = &c->steps[c->n_steps];
        for (int i = 0; i < grp->n_nodes && st == BYOCL_OK; i++) {
            int id = grp->nodes[i];
            if (id < 0 || id >= fn->n_nodes || group_of[id] != -2)
                st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                     "host backend '%s': group %s has node %d, which is not an "
                                     "op call to group or is in another group",
                                     bname, grp->name, id);
            else
                group_of[id] = g;
        }
        if (st == BYOCL_OK && grp->n_nodes < 1)
            st = byocl_error_set(err, BYOCL_ERR_INVALID, "host backend '%s': group %s is empty",
                                 bname, grp->name);
        if (st == BYOCL_OK)
            st = alloc_step_args(s, grp->n_inputs, grp->n_outputs, err);
        if (st == BYOCL_OK && !(s->covered = malloc((size_t)grp->n_nodes * sizeof *s->covered)))
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        if (st != BYOCL_OK) {
            free(s->args);
            s->args = NULL;
            break;
        }
        c->n_steps++;
        memcpy(s->covered, grp->nodes, (size_t)grp->n_nodes * sizeof *s->covered);
        s->n_covered = grp->n_nodes;
        s->covered_fn = fn;
        s->kind = BYOCL_STEP_KERNEL;
        s->group = g;
        snprintf(s->name, sizeof s->name, "%s", grp->name);
        s->node = grp->nodes[grp->n_nodes - 1];
        s->n_nodes = grp->n_nodes;
        s->flops = grp->flops;
        b->step_key[c->n_steps - 1] = grp->nodes[0];
        for (int i = 0; i < grp->n_inputs + grp->n_outputs && st == BYOCL_OK; i++) {
            byocl_value_ref r = i < grp->n_inputs ? grp->inputs[i] : grp->outputs[i - grp->n_inputs];
            int v = driver_compiled_value_of(c, r.node, r.field);
            if (v < 0)
                st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                     "host backend '%s': group %s names value (%d, %d), which "
                                     "does not exist",
                                     bname, grp->name, r.node, r.field);
            else if (i >= grp->n_inputs &&
                     (c->values[v].root != v || c->values[v].node < 0 ||
                      group_of[c->values[v].node] != g))
                st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                     "host backend '%s': group %s outputs a value it does not "
                                     "compute (node %d)",
                                     bname, grp->name, r.node);
            else
                s->args[i] = v;
        }
    }
    for (int i = 0; i < b->n_compute && st == BYOCL_OK; i++)
        if (group_of[b->compute[i]] == -2) {
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "host backend '%s' left this op call out of its groups", bname);
            ops_node_error_at(err, fn, b->compute[i]);
        }
    free(group_of);
    return st;
}

/* The runtime module of region `callee`, made once per function. */
static byocl_status region_module(builder *b, const byocl_function *callee, byocl_rtmod **out,
                                  byocl_error *err)
{
    byocl_compiled *c = b->c;
    *out = NULL;
    if (b->opt->region_compile) {
        byocl_status st = b->opt->region_compile(b->opt->region_user, callee, out, err);
        if (st != BYOCL_OK) {
            byocl_error_prefix(err, "region @%s: ", callee->name);
            return st;
        }
    }
    if (!*out) { /* the registry's target, a fallback, or the ref region module */
        byocl_status st = driver_region_rtmod(callee, b->opt, c->threads, out, err);
        if (st != BYOCL_OK)
            return st;
    }
    c->rtmods[c->n_rtmods++] = *out;
    return BYOCL_OK;
}

/* A region step covers the nodes of its function that compute or name values. */
static byocl_status cover_region(byocl_xstep *s, const byocl_function *callee, byocl_error *err)
{
    s->covered_fn = callee;
    s->covered = malloc((size_t)(callee->n_nodes > 0 ? callee->n_nodes : 1) * sizeof *s->covered);
    if (!s->covered)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < callee->n_nodes; k++) {
        byocl_node_kind kind = callee->nodes[k].kind;
        if (kind != BYOCL_NODE_VAR && kind != BYOCL_NODE_CONSTANT)
            s->covered[s->n_covered++] = k;
    }
    return BYOCL_OK;
}

static byocl_status region_steps(builder *b, byocl_error *err)
{
    byocl_compiled *c = b->c;
    const byocl_function *fn = c->fn;
    /* The runtime module made for each callee, by function index, so a region called
     * twice is compiled once. */
    int n_fns = c->mod->n_fns;
    byocl_rtmod **by_fn = calloc((size_t)n_fns, sizeof *by_fn);
    if (!by_fn)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    for (int id = 0; id < fn->n_nodes && st == BYOCL_OK; id++) {
        const byocl_node *n = &fn->nodes[id];
        if (!b->needed[id] || n->kind != BYOCL_NODE_CALL || n->op)
            continue;
        const byocl_function *callee = region_of(c, n);
        int f = 0;
        while (c->mod->fns[f] != callee)
            f++;
        if (!by_fn[f] && (st = region_module(b, callee, &by_fn[f], err)) != BYOCL_OK) {
            ops_node_error_at(err, fn, id);
            break;
        }
        int n_in = 0;
        for (int k = 0; k < n->n_args; k++)
            n_in += byocl_type_num_tensors(fn->nodes[n->args[k]].type);
        int n_out = byocl_type_num_tensors(n->type);
        byocl_xstep *s = &c->steps[c->n_steps];
        if ((st = alloc_step_args(s, n_in, n_out, err)) != BYOCL_OK)
            break;
        c->n_steps++;
        if ((st = cover_region(s, callee, err)) != BYOCL_OK)
            break;
        s->kind = BYOCL_STEP_REGION;
        s->symbol = byocl_attrs_get_str(&callee->attrs, "global_symbol", callee->name);
        snprintf(s->name, sizeof s->name, "%s", s->symbol);
        s->node = id;
        s->n_nodes = 1;
        s->rtmod = by_fn[f];
        for (int k = 0; k < callee->n_nodes; k++)
            s->flops += host_node_flops(callee, k);
        b->step_key[c->n_steps - 1] = id;
        int at = 0;
        for (int k = 0; k < n->n_args; k++) {
            int a = n->args[k];
            int count = byocl_type_num_tensors(fn->nodes[a].type);
            for (int i = 0; i < count; i++)
                s->args[at++] = c->node_values[c->node_first[a] + i];
        }
        for (int i = 0; i < n_out; i++)
            s->args[at++] = c->node_values[c->node_first[id] + i];
    }
    free(by_fn);
    return st;
}

/* Puts the steps in an order where every step comes after the steps that produce its
 * inputs, preferring the step whose first node comes first (the function's own order). */
static byocl_status order_steps(builder *b, byocl_error *err)
{
    byocl_compiled *c = b->c;
    int n = c->n_steps;
    for (int s = 0; s < n; s++)
        for (int i = c->steps[s].n_in; i < c->steps[s].n_in + c->steps[s].n_out; i++)
            c->values[c->steps[s].args[i]].producer = s;
    bool *done = calloc(n > 0 ? (size_t)n : 1, sizeof *done);
    byocl_xstep *ordered = malloc((n > 0 ? (size_t)n : 1) * sizeof *ordered);
    int *new_index = malloc((n > 0 ? (size_t)n : 1) * sizeof *new_index);
    if (!done || !ordered || !new_index) {
        free(done);
        free(ordered);
        free(new_index);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    byocl_status st = BYOCL_OK;
    for (int placed = 0; placed < n && st == BYOCL_OK; placed++) {
        int pick = -1;
        for (int s = 0; s < n; s++) {
            if (done[s] || (pick >= 0 && b->step_key[s] >= b->step_key[pick]))
                continue;
            bool ready = true;
            for (int i = 0; i < c->steps[s].n_in && ready; i++) {
                int p = c->values[c->values[c->steps[s].args[i]].root].producer;
                ready = p < 0 || done[p];
            }
            if (ready)
                pick = s;
        }
        if (pick < 0) {
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "the steps of @%s depend on each other in a cycle (host "
                                 "backend '%s' grouped nodes across a region call)",
                                 c->fn->name, c->backend->name);
            break;
        }
        done[pick] = true;
        new_index[pick] = placed;
        ordered[placed] = c->steps[pick];
    }
    if (st == BYOCL_OK) {
        memcpy(c->steps, ordered, (size_t)n * sizeof *ordered);
        for (int v = 0; v < c->n_values; v++)
            if (c->values[v].producer >= 0)
                c->values[v].producer = new_index[c->values[v].producer];
    }
    free(done);
    free(ordered);
    free(new_index);
    return st;
}

/* ------------------------------------------------------------ storage plan */

/* Output i of the function: its value and, when the value lives elsewhere (an input, a
 * constant), a buffer of its own that each run copies it into. Step results that are
 * outputs get their own buffers too, outside the shared pool. */
static byocl_status plan_outputs(builder *b, byocl_error *err)
{
    byocl_compiled *c = b->c;
    int body = c->fn->body;
    int n = byocl_type_num_tensors(c->fn->nodes[body].type);
    c->n_outputs = n;
    c->outputs = calloc(n > 0 ? (size_t)n : 1, sizeof *c->outputs);
    c->output_buffer_bytes = calloc(n > 0 ? (size_t)n : 1, sizeof *c->output_buffer_bytes);
    if (!c->outputs || !c->output_buffer_bytes)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        int v = c->node_values[c->node_first[body] + i];
        byocl_xvalue *r = &c->values[c->values[v].root];
        c->outputs[i] = (byocl_xoutput){v, -1, false};
        if (r->home == HOME_INPUT || r->home == HOME_CONSTANT) {
            c->outputs[i].copy = true;
            c->outputs[i].buffer = c->n_output_buffers;
            c->output_buffer_bytes[c->n_output_buffers++] = c->values[v].nbytes;
        } else if (r->home == HOME_POOL) {
            r->home = HOME_OUTPUT;
            r->slot = c->n_output_buffers;
            c->output_buffer_bytes[c->n_output_buffers++] = r->nbytes;
        }
    }
    return BYOCL_OK;
}

/* Checks that step `s` (or the function's result, s = n_steps) can read value v. */
static byocl_status check_readable(const byocl_compiled *c, int v, int s, byocl_error *err)
{
    const byocl_xvalue *r = &c->values[c->values[v].root];
    if (r->home == HOME_INPUT || r->home == HOME_CONSTANT || (r->producer >= 0 && r->producer < s))
        return BYOCL_OK;
    byocl_error_set(err, BYOCL_ERR_INVALID,
                    "no step computes this value before it is read (host backend '%s' does not "
                    "output it from its group)",
                    c->backend->name);
    ops_node_error_at(err, c->fn, r->node);
    return BYOCL_ERR_INVALID;
}

/* ------------------------------------------------------------ device memory */

/* Planning the copies between host and device memory, by walking the steps once in run
 * order and tracking, for each root value, the memories that hold its current data. A
 * value is written where its producer runs: a region step whose module has device memory
 * writes it there, every other step (and set_input, and the module's constants) in host
 * memory. A step that reads a value where it is not yet gets it copied there just before
 * it: host -> device (upload) for a region step, device -> host (download) for a host
 * step, device -> host -> device between two devices. Each value is written once per run,
 * so one copy per value and memory serves every later reader; model outputs in device
 * memory are downloaded after the last step. Constants are uploaded once per executor. */

typedef struct memory_planner {
    builder *b;
    int n_slots;         /* memories + 1 (slot 0: the host) */
    bool *valid;         /* [value * n_slots + memory + 1]: the memory holds the value */
    int *devbuf_of;      /* [value * n_slots + memory + 1]: its device buffer there, or -1 */
    int cap_devbufs, cap_transfers;
} memory_planner;

static bool same_device(DLDevice a, DLDevice b)
{
    return a.device_type == b.device_type && a.device_id == b.device_id;
}

/* The memory of region step `s` (HOST_MEMORY without one), registering it in c->memories. */
static byocl_status step_memory(builder *b, int s, int *out, byocl_error *err)
{
    byocl_compiled *c = b->c;
    const byocl_xstep *step = &c->steps[s];
    byocl_device_memory mem;
    *out = HOST_MEMORY;
    if (step->kind != BYOCL_STEP_REGION || !byocl_rtmod_memory(step->rtmod, &mem))
        return BYOCL_OK;
    const byocl_device_memory_i *i = mem.iface;
    if (!i || !i->alloc || !i->free || !i->upload || !i->download ||
        mem.device.device_type == kDLCPU) {
        byocl_error_set(err, BYOCL_ERR_INVALID,
                        "runtime module '%s' describes its device memory without alloc, free, "
                        "upload and download, or as host memory (kDLCPU)",
                        byocl_rtmod_name(step->rtmod));
        ops_node_error_at(err, c->fn, step->node);
        return BYOCL_ERR_INVALID;
    }
    for (int k = 0; k < c->n_memories; k++)
        if (same_device(c->memories[k].device, mem.device)) {
            *out = k;
            return BYOCL_OK;
        }
    byocl_device_memory *grown =
        realloc(c->memories, (size_t)(c->n_memories + 1) * sizeof *grown);
    if (!grown)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    c->memories = grown;
    c->memories[c->n_memories] = mem;
    *out = c->n_memories++;
    return BYOCL_OK;
}

static size_t slot_of(const memory_planner *p, int value, int memory)
{
    return (size_t)value * (size_t)p->n_slots + (size_t)(memory + 1);
}

/* The device buffer of root `value` in `memory`, made on first use by step `s`. */
static int devbuf_in(memory_planner *p, int value, int memory, int s, byocl_error *err)
{
    byocl_compiled *c = p->b->c;
    int *at = &p->devbuf_of[slot_of(p, value, memory)];
    if (*at >= 0)
        return *at;
    if (c->n_devbufs == p->cap_devbufs) {
        int cap = p->cap_devbufs ? 2 * p->cap_devbufs : 16;
        byocl_xdevbuf *grown = realloc(c->devbufs, (size_t)cap * sizeof *grown);
        if (!grown) {
            byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
            return -1;
        }
        c->devbufs = grown;
        p->cap_devbufs = cap;
    }
    c->devbufs[c->n_devbufs] = (byocl_xdevbuf){value, memory, s};
    return *at = c->n_devbufs++;
}

static byocl_status add_transfer(memory_planner *p, int devbuf, bool upload, int step,
                                 byocl_error *err)
{
    byocl_compiled *c = p->b->c;
    if (c->n_transfers == p->cap_transfers) {
        int cap = p->cap_transfers ? 2 * p->cap_transfers : 16;
        byocl_xtransfer *grown = realloc(c->transfers, (size_t)cap * sizeof *grown);
        if (!grown)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        c->transfers = grown;
        p->cap_transfers = cap;
    }
    c->transfers[c->n_transfers++] = (byocl_xtransfer){devbuf, upload, step};
    return BYOCL_OK;
}

/* Makes root `value` present in `memory` for step `s` (n_steps: after the run). */
static byocl_status make_present(memory_planner *p, int value, int memory, int s,
                                 byocl_error *err)
{
    byocl_compiled *c = p->b->c;
    byocl_xvalue *r = &c->values[value];
    if (p->valid[slot_of(p, value, memory)])
        return BYOCL_OK;
    byocl_status st = BYOCL_OK;
    if (memory == HOST_MEMORY) { /* it lives in device memory: download it */
        r->host_copy = true;
        st = add_transfer(p, p->devbuf_of[slot_of(p, value, r->memory)], false, s, err);
    } else {
        if (!p->valid[slot_of(p, value, HOST_MEMORY)]) /* on another device: via the host */
            st = make_present(p, value, HOST_MEMORY, s, err);
        int d = st == BYOCL_OK ? devbuf_in(p, value, memory, s, err) : -1;
        if (d < 0)
            return st == BYOCL_OK ? BYOCL_ERR_NOMEM : st;
        /* A constant never changes: one upload when the executor is made. */
        st = add_transfer(p, d, true, r->home == HOME_CONSTANT ? -1 : s, err);
    }
    if (st == BYOCL_OK)
        p->valid[slot_of(p, value, memory)] = true;
    return st;
}

/* The steps' memories, the values' homes, the device buffers and the copies, in
 * transfers ordered by step. */
static byocl_status walk_memories(memory_planner *p, byocl_error *err)
{
    byocl_compiled *c = p->b->c;
    for (int v = 0; v < c->n_values; v++) {
        byocl_xvalue *r = &c->values[v];
        if (r->root != v)
            continue;
        if (r->producer >= 0)
            r->memory = c->steps[r->producer].memory;
        p->valid[slot_of(p, v, r->memory)] = true; /* from its producer on */
    }
    byocl_status st = BYOCL_OK;
    for (int s = 0; s < c->n_steps && st == BYOCL_OK; s++) {
        byocl_xstep *step = &c->steps[s];
        int n = step->n_in + step->n_out;
        if (step->memory != HOST_MEMORY && !(step->devbufs = malloc((size_t)n * sizeof(int))))
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        for (int i = 0; i < n && st == BYOCL_OK; i++) {
            int root = c->values[step->args[i]].root;
            if (i < step->n_in)
                st = make_present(p, root, step->memory, s, err);
            if (st == BYOCL_OK && step->memory != HOST_MEMORY) {
                int d = devbuf_in(p, root, step->memory, s, err);
                if (d < 0)
                    return BYOCL_ERR_NOMEM;
                step->devbufs[i] = d;
            }
        }
    }
    for (int i = 0; i < c->n_outputs && st == BYOCL_OK; i++)
        st = make_present(p, c->values[c->outputs[i].value].root, HOST_MEMORY, c->n_steps, err);
    return st;
}

/* Orders c->transfers by step (stable: a download that feeds an upload stays before it)
 * and sets each step's range, counting the copies of a run. */
static byocl_status order_transfers(byocl_compiled *c, byocl_error *err)
{
    int n = c->n_transfers, n_keys = c->n_steps + 2; /* key: step + 1 */
    byocl_xtransfer *sorted = malloc((size_t)(n + 1) * sizeof *sorted);
    int *first = calloc((size_t)n_keys + 1, sizeof *first);
    if (!sorted || !first) {
        free(sorted);
        free(first);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    for (int t = 0; t < n; t++)
        first[c->transfers[t].step + 2]++;
    for (int k = 1; k <= n_keys; k++)
        first[k] += first[k - 1];
    for (int s = 0; s < c->n_steps; s++) {
        c->steps[s].first_transfer = first[s + 1];
        c->steps[s].n_transfers = first[s + 2] - first[s + 1];
    }
    c->n_setup_transfers = first[1];
    c->first_final_transfer = first[c->n_steps + 1];
    for (int t = 0; t < n; t++)
        sorted[first[c->transfers[t].step + 1]++] = c->transfers[t];
    free(first);
    free(c->transfers);
    c->transfers = sorted;
    for (int t = c->n_setup_transfers; t < n; t++) {
        size_t bytes = c->values[c->devbufs[sorted[t].devbuf].value].nbytes;
        if (sorted[t].upload) {
            c->stats.n_uploads++;
            c->stats.upload_bytes += bytes;
        } else {
            c->stats.n_downloads++;
            c->stats.download_bytes += bytes;
        }
    }
    return BYOCL_OK;
}

/* Plans device memory when some region module has its own (byocl_rtmod_memory); with
 * none, every step keeps host memory and nothing else is planned. */
static byocl_status plan_memories(builder *b, byocl_error *err)
{
    byocl_compiled *c = b->c;
    byocl_status st = BYOCL_OK;
    for (int s = 0; s < c->n_steps && st == BYOCL_OK; s++)
        st = step_memory(b, s, &c->steps[s].memory, err);
    if (st != BYOCL_OK || c->n_memories == 0)
        return st;
    memory_planner p = {.b = b, .n_slots = c->n_memories + 1};
    size_t n_slots = (size_t)c->n_values * (size_t)p.n_slots + 1;
    p.valid = calloc(n_slots, sizeof *p.valid);
    p.devbuf_of = malloc(n_slots * sizeof *p.devbuf_of);
    if (!p.valid || !p.devbuf_of)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == BYOCL_OK && i < n_slots; i++)
        p.devbuf_of[i] = -1;
    if (st == BYOCL_OK) /* every value a device region writes has its buffer there */
        for (int v = 0; v < c->n_values && st == BYOCL_OK; v++) {
            const byocl_xvalue *r = &c->values[v];
            int m = r->root == v && r->producer >= 0 ? c->steps[r->producer].memory
                                                      : HOST_MEMORY;
            if (m != HOST_MEMORY && devbuf_in(&p, v, m, r->producer, err) < 0)
                st = BYOCL_ERR_NOMEM;
        }
    if (st == BYOCL_OK)
        st = walk_memories(&p, err);
    if (st == BYOCL_OK)
        st = order_transfers(c, err);
    free(p.valid);
    free(p.devbuf_of);
    return st;
}

static byocl_status plan_storage(builder *b, byocl_error *err)
{
    byocl_compiled *c = b->c;
    byocl_status st = plan_outputs(b, err);
    if (st == BYOCL_OK)
        st = driver_concat_in_place(c, err);
    for (int s = 0; s < c->n_steps && st == BYOCL_OK; s++) {
        const byocl_xstep *step = &c->steps[s];
        for (int i = 0; i < step->n_in + step->n_out && st == BYOCL_OK; i++) {
            byocl_xvalue *r = &c->values[c->values[step->args[i]].root];
            if (i < step->n_in)
                st = check_readable(c, step->args[i], s, err);
            if (r->last_use < s)
                r->last_use = s;
        }
    }
    for (int i = 0; i < c->n_outputs && st == BYOCL_OK; i++)
        st = check_readable(c, c->outputs[i].value, c->n_steps, err);
    if (st == BYOCL_OK)
        st = plan_memories(b, err);
    if (st != BYOCL_OK)
        return st;

    /* Everything a step writes that is not an output shares the pool; a slice of another
     * tensor (concat_in_place.c) lives inside it, which lives from the first of its
     * slices' writes to the last read of any of them. */
    byocl_live_range *ranges = malloc((size_t)(c->n_values + 1) * sizeof *ranges);
    int *value_of = malloc((size_t)(c->n_values + 1) * sizeof *value_of);
    int *range_of = malloc((size_t)(c->n_values + 1) * sizeof *range_of);
    size_t *offset_of = malloc((size_t)(c->n_values + 1) * sizeof *offset_of);
    int n = 0;
    if (!ranges || !value_of || !range_of || !offset_of) {
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    } else {
        for (int v = 0; v < c->n_values; v++) {
            const byocl_xvalue *x = &c->values[v];
            range_of[v] = -1;
            if (x->root != v || x->home != HOME_POOL || x->producer < 0 || x->within >= 0 ||
                (x->memory != HOST_MEMORY && !x->host_copy)) /* device memory only */
                continue;
            ranges[n] = (byocl_live_range){x->nbytes, x->producer, x->last_use};
            range_of[v] = n;
            value_of[n++] = v;
        }
        for (int v = 0; v < c->n_values; v++) {
            const byocl_xvalue *x = &c->values[v];
            if (x->root != v || x->within < 0)
                continue;
            byocl_live_range *r = &ranges[range_of[driver_value_outermost(c, v, NULL)]];
            r->first = x->producer < r->first ? x->producer : r->first;
            r->last = x->last_use > r->last ? x->last_use : r->last;
        }
        st = storage_plan_offsets(ranges, n, BUFFER_ALIGN, offset_of, &c->pool_bytes, err);
        c->stats.live_peak_bytes = storage_plan_live_peak(ranges, n, BUFFER_ALIGN);
    }
    for (int i = 0; st == BYOCL_OK && i < n; i++)
        c->values[value_of[i]].pool_offset = offset_of[i];
    for (int v = 0; st == BYOCL_OK && v < c->n_values; v++) {
        size_t at;
        if (c->values[v].root == v && c->values[v].within >= 0) {
            int outermost = driver_value_outermost(c, v, &at);
            c->values[v].pool_offset = c->values[outermost].pool_offset + at;
        }
    }
    byocl_plan_stats *stats = &c->stats;
    for (int i = 0; st == BYOCL_OK && i < n; i++) {
        stats->n_intermediates++;
        stats->intermediate_bytes += c->values[value_of[i]].nbytes;
        bool first_at = true; /* the distinct offsets: the plan's blocks */
        for (int j = 0; j < i && first_at; j++)
            first_at = offset_of[j] != offset_of[i];
        stats->n_buffers += first_at;
    }
    free(ranges);
    free(value_of);
    free(range_of);
    free(offset_of);
    if (st != BYOCL_OK)
        return st;
    stats->n_steps = c->n_steps;
    for (int s = 0; s < c->n_steps; s++) {
        if (c->steps[s].kind != BYOCL_STEP_KERNEL)
            stats->n_regions++;
        else
            stats->n_kernels++;
    }
    stats->planned_bytes = c->pool_bytes;
    for (int k = 0; k < c->n_inputs; k++)
        stats->input_bytes += c->values[c->input_values[k]].nbytes;
    for (int i = 0; i < c->n_output_buffers; i++)
        stats->output_bytes += c->output_buffer_bytes[i];
    for (int v = 0; v < c->n_values; v++)
        if (c->values[v].root == v && c->values[v].home == HOME_CONSTANT)
            stats->constant_bytes += c->values[v].nbytes;
    return BYOCL_OK;
}

/* -------------------------------------------------------------------- build */

static byocl_status check_options(const byocl_build_options *o, byocl_error *err)
{
    if (o->threads < 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "threads must be 0 (all cores) or a positive count, got %d",
                               o->threads);
    if (o->opt_level < 0 || o->opt_level > 3)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "opt_level must be 0..3, got %d",
                               o->opt_level);
    byocl_status st = driver_region_check_fallback(o->fallback, err);
    if (st == BYOCL_OK) /* a module may call regions of a built-in target */
        st = byocl_target_register_builtins(err);
    if (st == BYOCL_OK)
        st = byocl_target_options_check(o->target_options, err);
    return st;
}

/* Compiles the groups of the kernel steps that the storage plan kept (a concatenation in
 * place has none), in group order: compiling densenet121's 58 such concatenations took
 * a quarter of its cold host build for nothing. */
static byocl_status compile_kernels(builder *b, byocl_error *err)
{
    byocl_compiled *c = b->c;
    int *step_of = malloc((size_t)(b->n_groups + 1) * sizeof *step_of);
    byocl_host_group *kept = malloc((size_t)(b->n_groups + 1) * sizeof *kept);
    if (!step_of || !kept) {
        free(step_of);
        free(kept);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    for (int g = 0; g < b->n_groups; g++)
        step_of[g] = -1;
    for (int s = 0; s < c->n_steps; s++)
        if (c->steps[s].kind == BYOCL_STEP_KERNEL)
            step_of[c->steps[s].group] = s;
    int n_kept = 0;
    for (int g = 0; g < b->n_groups; g++)
        if (step_of[g] >= 0)
            kept[n_kept++] = b->groups[g]; /* shallow: the backend reads them while compiling */
    byocl_host_backend_options bopt = {.threads = c->threads, .opt_level = b->opt->opt_level};
    byocl_status st = c->backend->compile(c->fn, kept, n_kept, &bopt, b->kernels,
                                          &c->backend_state, err);
    for (int g = 0, k = 0; g < b->n_groups && st == BYOCL_OK; g++) {
        if (step_of[g] < 0)
            continue;
        const byocl_host_kernel *kernel = &b->kernels[k++];
        if (!kernel->fn || kernel->n_tasks < 1)
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "host backend '%s' compiled group %s without a kernel or "
                                 "with %lld tasks",
                                 c->backend->name, b->groups[g].name, (long long)kernel->n_tasks);
        else
            c->steps[step_of[g]].kernel = *kernel;
    }
    for (int s = 0; s < c->n_steps && st == BYOCL_OK; s++) {
        bool first = c->steps[s].kind == BYOCL_STEP_KERNEL; /* equal code shares a function */
        for (int e = 0; e < s && first; e++)
            first = c->steps[e].kind != BYOCL_STEP_KERNEL ||
                    c->steps[e].kernel.fn != c->steps[s].kernel.fn;
        c->stats.n_kernel_functions += first;
    }
    free(step_of);
    free(kept);
    return st;
}

/* Plans the steps of c->fn, orders them, plans their storage and compiles their kernels. */
static byocl_status build_steps(builder *b, byocl_error *err)
{
    byocl_compiled *c = b->c;
    const byocl_function *fn = c->fn;
    size_t n_nodes = (size_t)fn->n_nodes;
    b->needed = calloc(n_nodes, sizeof *b->needed);
    b->compute = malloc(n_nodes * sizeof *b->compute);
    c->node_first = malloc(n_nodes * sizeof *c->node_first);
    if (!b->needed || !b->compute || !c->node_first)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (size_t id = 0; id < n_nodes; id++)
        c->node_first[id] = -1;
    mark_needed(fn, b->needed);
    byocl_status st = make_values(b, err);
    if (st == BYOCL_OK)
        st = c->backend->group(fn, b->compute, b->n_compute, &b->groups, &b->n_groups, err);
    if (st != BYOCL_OK)
        return st;
    size_t max_steps = (size_t)b->n_groups + n_nodes + 1;
    c->steps = calloc(max_steps, sizeof *c->steps);
    b->step_key = malloc(max_steps * sizeof *b->step_key);
    c->rtmods = calloc(n_nodes, sizeof *c->rtmods);
    b->kernels = calloc((size_t)b->n_groups + 1, sizeof *b->kernels);
    if (!c->steps || !b->step_key || !c->rtmods || !b->kernels)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if ((st = kernel_steps(b, err)) != BYOCL_OK || (st = region_steps(b, err)) != BYOCL_OK ||
        (st = order_steps(b, err)) != BYOCL_OK || (st = plan_storage(b, err)) != BYOCL_OK)
        return st;
    return compile_kernels(b, err);
}

byocl_status byocl_build(const byocl_module *m, const byocl_build_options *opt,
                         byocl_compiled **out, byocl_error *err)
{
    if (!out)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_build: no place for the result");
    *out = NULL;
    if (!m)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_build: no module");
    byocl_build_options o = opt ? *opt : byocl_build_options_default();
    if (!o.target)
        o.target = "host";
    if (!o.fn_name)
        o.fn_name = "main";
    const byocl_host_backend_i *backend = NULL;
    byocl_status st = check_options(&o, err);
    if (st == BYOCL_OK)
        st = find_backend(o.target, &backend, err);
    if (st != BYOCL_OK)
        return st;
    byocl_compiled *c = calloc(1, sizeof *c);
    if (!c)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    atomic_init(&c->refs, 1);
    c->backend = backend;
    c->target = strcmp(o.target, "ref") == 0 ? "ref" : "host";
    c->threads = o.threads > 0 ? o.threads : base_cpu_count();
    c->mod = byocl_module_clone(m, err);
    if (!c->mod)
        st = err ? err->status : BYOCL_ERR_NOMEM;
    if (st == BYOCL_OK)
        st = byocl_infer_types(c->mod, err);
    if (st == BYOCL_OK)
        st = byocl_verify(c->mod, true, err);
    /* @main's constant computations as constants, as partitioning leaves them: built as it
     * came, an ONNX MatMul by a weight of over a MiB (nn.dense of its transpose, which the
     * importer does not fold, ops/fold.h) transposed the weight on every run and packed
     * it again (a 768 x 3072 one on 49 rows: 17.5 + 8.0 ms a run, 3.4 folded; one thread). */
    if (st == BYOCL_OK && strcmp(o.fn_name, "main") == 0 && byocl_module_find(c->mod, "main"))
        st = byocl_fold_constants(c->mod, err);
    if (st == BYOCL_OK && !(c->fn = byocl_module_find(c->mod, o.fn_name)))
        st = byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "no function @%s in the module",
                             o.fn_name);
    builder b = {.c = c, .opt = &o};
    if (st == BYOCL_OK)
        st = build_steps(&b, err);
    free(b.needed);
    free(b.compute);
    free(b.kernels);
    free(b.step_key);
    host_groups_free(b.groups, b.n_groups);
    if (st != BYOCL_OK) {
        byocl_compiled_free(c);
        return st;
    }
    *out = c;
    return BYOCL_OK;
}

void byocl_compiled_free(byocl_compiled *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    for (int s = 0; c->steps && s < c->n_steps; s++) {
        free(c->steps[s].args);
        free(c->steps[s].devbufs);
        free(c->steps[s].covered);
    }
    free(c->steps);
    free(c->memories);
    free(c->devbufs);
    free(c->transfers);
    for (int i = 0; i < c->n_rtmods; i++)
        byocl_rtmod_free(c->rtmods[i]);
    free(c->rtmods);
    if (c->backend && c->backend_state)
        c->backend->release(c->backend_state);
    free(c->values);
    free(c->node_values);
    free(c->node_first);
    free(c->input_values);
    free(c->outputs);
    free(c->output_buffer_bytes);
    byocl_module_free(c->mod);
    free(c);
}

/* ---------------------------------------------------------------- queries */

const char *byocl_compiled_target(const byocl_compiled *c) { return c->target; }
int byocl_compiled_threads(const byocl_compiled *c) { return c->threads; }
int byocl_compiled_num_inputs(const byocl_compiled *c) { return c->n_inputs; }
int byocl_compiled_num_outputs(const byocl_compiled *c) { return c->n_outputs; }

const char *byocl_compiled_input_name(const byocl_compiled *c, int index)
{
    return index >= 0 && index < c->n_inputs ? c->fn->nodes[c->fn->params[index]].name : NULL;
}

const byocl_type *byocl_compiled_input_type(const byocl_compiled *c, int index)
{
    return index >= 0 && index < c->n_inputs ? c->values[c->input_values[index]].type : NULL;
}

const byocl_type *byocl_compiled_output_type(const byocl_compiled *c, int index)
{
    return index >= 0 && index < c->n_outputs ? c->values[c->outputs[index].value].type : NULL;
}

void byocl_compiled_stats(const byocl_compiled *c, byocl_plan_stats *out)
{
    *out = c->stats;
}

int byocl_compiled_step_nodes(const byocl_compiled *c, int index, const byocl_function **fn,
                              const int **nodes)
{
    const byocl_xstep *s = c && index >= 0 && index < c->n_steps ? &c->steps[index] : NULL;
    if (fn)
        *fn = s ? s->covered_fn : NULL;
    if (nodes)
        *nodes = s ? s->covered : NULL;
    return s ? s->n_covered : 0;
}
