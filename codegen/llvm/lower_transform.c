/* Data movement: reshape, squeeze, expand_dims and nn.batch_flatten (a copy: C order
 * is unchanged), transpose with nn.depth_to_space and nn.space_to_depth (a permuted view,
 * ops/transform.h), concatenate and split (runs of contiguous bytes). Bytes are
 * moved as they are, so every dtype is served alike. */
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "ops/transform.h"

/* Bytes per element of value v. */
static int64_t elem_size(lw *w, byocl_value_ref v)
{
    return (int64_t)byocl_dtype_size(lw_value_type(w, v)->dtype);
}

static int64_t numel(lw *w, byocl_value_ref v)
{
    return byocl_shape_numel(&lw_value_type(w, v)->shape);
}

/* Copies `bytes` from src to dst, split over the tasks in chunks of whole elements. */
static void copy_split(lw *w, LLVMValueRef dst, LLVMValueRef src, int64_t n, int64_t es)
{
    LLVMValueRef lo, hi;
    lw_task_range(w, n, &lo, &hi);
    LLVMValueRef off = LLVMBuildNSWMul(w->B, lo, lw_i64(w, es), "");
    LLVMValueRef len = LLVMBuildNSWMul(w->B, LLVMBuildNSWSub(w->B, hi, lo, ""), lw_i64(w, es), "");
    LLVMValueRef d = LLVMBuildInBoundsGEP2(w->B, w->t_i8, dst, &off, 1, "");
    LLVMValueRef s = LLVMBuildInBoundsGEP2(w->B, w->t_i8, src, &off, 1, "");
    lw_memcpy(w, d, s, len);
}

byocl_status lower_copy(lw *w, int node)
{
    byocl_value_ref in_v = lv_resolve(w->fn, lw_node(w, node)->args[0], -1), out_v = {node, -1};
    int64_t n = numel(w, out_v), es = elem_size(w, out_v);
    if (n == 0)
        return w->status;
    w->n_tasks = lw_pick_tasks(w, n * es, 1 << 20, 16);
    copy_split(w, lw_output(w, out_v), lw_value_ptr(w, in_v), n, es);
    return w->status;
}

/* transpose, nn.depth_to_space and nn.space_to_depth: the input's view (ops_permute_plan)
 * permuted, one element per innermost iteration, the outermost axis split over tasks. */
byocl_status lower_transpose(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    const byocl_type *it = lw_value_type(w, in_v);
    ops_permute p;
    byocl_status st = ops_permute_plan(n->op->name, &n->attrs, &it->shape, &p, w->err);
    if (st != BYOCL_OK)
        return lw_failed(w, st);
    int rank = p.view.rank;
    int64_t istride[BYOCL_MAX_RANK], os[BYOCL_MAX_RANK], s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        istride[d] = s;
        s *= p.view.dims[d];
    }
    for (int d = 0; d < rank; d++)
        os[d] = p.view.dims[p.perm[d]];
    if (byocl_shape_numel(&p.out) == 0)
        return w->status;
    byocl_dtype dt = it->dtype;
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    if (rank > 0)
        w->n_tasks = lw_pick_tasks(w, byocl_shape_numel(&p.out), 65536, os[0] < 64 ? os[0] : 64);
    lw_loop loops[BYOCL_MAX_RANK];
    LLVMValueRef src = lw_i64(w, 0), dst = lw_i64(w, 0);
    for (int d = 0; d < rank; d++) {
        LLVMValueRef lo = lw_i64(w, 0), hi = lw_i64(w, os[d]);
        if (d == 0)
            lw_task_range(w, os[0], &lo, &hi);
        LLVMValueRef i = lw_for(w, &loops[d], lo, hi, 1, "i");
        loops[d].no_unroll = d + 1 < rank; /* the loops around the innermost: see open_loops_split */
        src = lw_mad(w, i, istride[p.perm[d]], src);
        dst = lw_mad(w, dst, os[d], i);
    }
    /* Integers move as they are; floats too (float16 loads and stores are exact). */
    lw_store(w, out, dt, dst, lw_load(w, in, dt, src));
    for (int d = rank - 1; d >= 0; d--)
        lw_for_end(w, &loops[d]);
    return w->status;
}

/* Moves `outer` runs of `run` bytes: run o from src + o * src_step to dst + o * dst_step. */
static void copy_runs(lw *w, LLVMValueRef dst, int64_t dst_off, int64_t dst_step,
                      LLVMValueRef src, int64_t src_off, int64_t src_step, int64_t run,
                      int64_t outer)
{
    if (run == 0 || outer == 0)
        return;
    lw_loop l;
    LLVMValueRef o = lw_for(w, &l, lw_i64(w, 0), lw_i64(w, outer), 1, "o");
    LLVMValueRef doff = lw_mad(w, o, dst_step, lw_i64(w, dst_off));
    LLVMValueRef soff = lw_mad(w, o, src_step, lw_i64(w, src_off));
    lw_memcpy(w, LLVMBuildInBoundsGEP2(w->B, w->t_i8, dst, &doff, 1, ""),
              LLVMBuildInBoundsGEP2(w->B, w->t_i8, src, &soff, 1, ""), lw_i64(w, run));
    lw_for_end(w, &l);
}

/* outer, and bytes per index of `axis`, of a shape. */
static void axis_split(const byocl_shape *s, int axis, int64_t es, int64_t *outer,
                       int64_t *inner_bytes)
{
    *outer = 1;
    *inner_bytes = es;
    for (int d = 0; d < axis; d++)
        *outer *= s->dims[d];
    for (int d = axis + 1; d < s->rank; d++)
        *inner_bytes *= s->dims[d];
}

static int norm_axis(int64_t axis, int rank)
{
    return (int)(axis < 0 ? axis + rank : axis);
}

byocl_status lower_concatenate(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref out_v = {node, -1};
    const byocl_shape *os = &n->type->shape;
    int axis = norm_axis(byocl_attrs_get_int(&n->attrs, "axis", 0), os->rank);
    int n_in = byocl_type_num_tensors(lw_node(w, n->args[0])->type);
    byocl_value_ref *ins = malloc((size_t)(n_in > 0 ? n_in : 1) * sizeof *ins);
    if (!ins)
        return lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_NOMEM, "out of memory"));
    lv_flatten(w->fn, n->args[0], ins, n_in);
    int64_t outer, inner, es = elem_size(w, out_v), off = 0;
    axis_split(os, axis, es, &outer, &inner);
    LLVMValueRef out = lw_output(w, out_v);
    for (int k = 0; k < n_in; k++) {
        int64_t len = lw_value_type(w, ins[k])->shape.dims[axis];
        if (len > 0 && outer > 0)
            copy_runs(w, out, off * inner, os->dims[axis] * inner, lw_value_ptr(w, ins[k]), 0,
                      len * inner, len * inner, outer);
        off += len;
    }
    free(ins);
    return w->status;
}

byocl_status lower_split(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1);
    const byocl_shape *is = &lw_value_type(w, in_v)->shape;
    int axis = norm_axis(byocl_attrs_get_int(&n->attrs, "axis", 0), is->rank);
    int64_t outer, inner, es = elem_size(w, in_v), off = 0;
    axis_split(is, axis, es, &outer, &inner);
    LLVMValueRef in = lw_value_ptr(w, in_v);
    int pieces = byocl_type_num_tensors(n->type);
    for (int k = 0; k < pieces; k++) {
        byocl_value_ref piece = {node, k};
        int64_t len = lw_value_type(w, piece)->shape.dims[axis];
        LLVMValueRef out = lw_output(w, piece);
        if (out && len > 0 && outer > 0) /* unused pieces are not outputs */
            copy_runs(w, out, 0, len * inner, in, off * inner, is->dims[axis] * inner,
                      len * inner, outer);
        off += len;
    }
    return w->status;
}
