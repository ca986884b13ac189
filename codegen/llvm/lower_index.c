/* The op group "index" (ops/index.c): strided_slice and broadcast_to as one affine copy
 * (ops_affine_map gives the offsets), take and gather reading their index tensor, arange
 * and shape_of storing values known when compiling, trilu (a select per element) and
 * cumsum (a running sum per line). Elements are moved as they are, so
 * every dtype is served alike; an index out of range where the op has no answer fails the
 * kernel with KERR_INDEX, as the reference kernel fails. */
#include <string.h>

#include "lower.h"
#include "ops/index.h"

/* Nested loops over the output `s`, the first split over the tasks; returns the flat
 * output offset (C order) and leaves the induction variables in iv. */
static LLVMValueRef open_loops(lw *w, const byocl_shape *s, lw_loop *loops, LLVMValueRef *iv)
{
    if (s->rank > 0)
        w->n_tasks = lw_pick_tasks(w, byocl_shape_numel(s), 65536,
                                   s->dims[0] < 64 ? s->dims[0] : 64);
    LLVMValueRef dst = lw_i64(w, 0);
    for (int d = 0; d < s->rank; d++) {
        LLVMValueRef lo = lw_i64(w, 0), hi = lw_i64(w, s->dims[d]);
        if (d == 0)
            lw_task_range(w, s->dims[0], &lo, &hi);
        iv[d] = lw_for(w, &loops[d], lo, hi, 1, "i");
        dst = lw_mad(w, dst, s->dims[d], iv[d]);
    }
    return dst;
}

static void close_loops(lw *w, const byocl_shape *s, lw_loop *loops)
{
    for (int d = s->rank - 1; d >= 0; d--)
        lw_for_end(w, &loops[d]);
}

static byocl_status lower_affine(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    const byocl_type *it = lw_value_type(w, in_v);
    byocl_shape os;
    ops_affine map;
    byocl_status st = ops_affine_map(n->op->name, &n->attrs, &it->shape, &os, &map, w->err);
    if (st != BYOCL_OK)
        return lw_failed(w, st);
    if (byocl_shape_numel(&os) == 0)
        return w->status;
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    lw_loop loops[BYOCL_MAX_RANK];
    LLVMValueRef iv[BYOCL_MAX_RANK];
    LLVMValueRef dst = open_loops(w, &os, loops, iv), src = lw_i64(w, map.base);
    for (int d = 0; d < os.rank; d++)
        src = lw_mad(w, iv[d], map.coef[d], src);
    lw_store(w, out, it->dtype, dst, lw_load(w, in, it->dtype, src));
    close_loops(w, &os, loops);
    return w->status;
}

/* Index element `at` of the indices as an i64 position in [0, n), by take's mode (mode
 * < 0: gather's rule, negative counts from the end); out of range fails the kernel. */
static LLVMValueRef load_index(lw *w, byocl_value_ref idx_v, LLVMValueRef at, int64_t n,
                               int mode)
{
    LLVMBuilderRef B = w->B;
    byocl_dtype dt = lw_value_type(w, idx_v)->dtype;
    LLVMValueRef v = lw_convert(w, lw_load(w, lw_value_ptr(w, idx_v), dt, at), dt, BYOCL_INT64);
    LLVMValueRef zero = lw_i64(w, 0), nn = lw_i64(w, n);
    if (mode == OPS_TAKE_CLIP) {
        v = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, v, zero, ""), zero, v, "");
        return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGE, v, nn, ""), lw_i64(w, n - 1), v,
                               "");
    }
    if (mode == OPS_TAKE_WRAP)
        v = LLVMBuildSRem(B, v, nn, "");
    if (mode != OPS_TAKE_FAST)
        v = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, v, zero, ""),
                            LLVMBuildAdd(B, v, nn, ""), v, "");
    /* unsigned v >= n: negative or too large */
    lw_fail_if(w, LLVMBuildICmp(B, LLVMIntUGE, v, nn, ""), KERR_INDEX);
    return v;
}

static byocl_status lower_take(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    byocl_value_ref idx_v = lv_resolve(w->fn, n->args[1], -1);
    const byocl_shape *ds = &lw_value_type(w, in_v)->shape;
    int64_t m = byocl_shape_numel(&lw_value_type(w, idx_v)->shape);
    int axis = ops_take_axis(&n->attrs, ds->rank);
    int64_t outer = 1, inner = 1, count = axis < 0 ? byocl_shape_numel(ds) : ds->dims[axis];
    for (int d = 0; axis >= 0 && d < ds->rank; d++)
        if (d != axis)
            *(d < axis ? &outer : &inner) *= ds->dims[d];
    int64_t es = (int64_t)byocl_dtype_size(lw_value_type(w, out_v)->dtype);
    if (outer * m * inner == 0)
        return w->status;
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    w->n_tasks = lw_pick_tasks(w, outer * m * inner, 65536, outer < 64 ? outer : 64);
    LLVMValueRef lo, hi;
    lw_task_range(w, outer, &lo, &hi);
    lw_loop lo_o, lo_j;
    LLVMValueRef o = lw_for(w, &lo_o, lo, hi, 1, "o");
    LLVMValueRef j = lw_for(w, &lo_j, lw_i64(w, 0), lw_i64(w, m), 1, "j");
    LLVMValueRef at = load_index(w, idx_v, j, count, (int)ops_take_mode_of(&n->attrs));
    LLVMValueRef doff = lw_mad(w, lw_mad(w, o, m, j), inner * es, lw_i64(w, 0));
    LLVMValueRef soff = lw_mad(w, lw_mad(w, o, count, at), inner * es, lw_i64(w, 0));
    lw_memcpy(w, LLVMBuildInBoundsGEP2(w->B, w->t_i8, out, &doff, 1, ""),
              LLVMBuildInBoundsGEP2(w->B, w->t_i8, in, &soff, 1, ""), lw_i64(w, inner * es));
    lw_for_end(w, &lo_j);
    lw_for_end(w, &lo_o);
    return w->status;
}

static byocl_status lower_gather(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    byocl_value_ref idx_v = lv_resolve(w->fn, n->args[1], -1);
    const byocl_type *it = lw_value_type(w, in_v);
    const byocl_shape *os = &n->type->shape;
    int axis = ops_gather_axis(&n->attrs, it->shape.rank);
    if (byocl_shape_numel(os) == 0)
        return w->status;
    int64_t stride[BYOCL_MAX_RANK], s = 1;
    for (int d = it->shape.rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= it->shape.dims[d];
    }
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    lw_loop loops[BYOCL_MAX_RANK];
    LLVMValueRef iv[BYOCL_MAX_RANK];
    LLVMValueRef dst = open_loops(w, os, loops, iv);
    LLVMValueRef src = lw_mad(w, load_index(w, idx_v, dst, it->shape.dims[axis], -1),
                              stride[axis], lw_i64(w, 0));
    for (int d = 0; d < os->rank; d++)
        if (d != axis)
            src = lw_mad(w, iv[d], stride[d], src);
    lw_store(w, out, it->dtype, dst, lw_load(w, in, it->dtype, src));
    close_loops(w, os, loops);
    return w->status;
}

static byocl_status lower_arange(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref out_v = {node, -1};
    byocl_dtype dt = n->type->dtype;
    int64_t count = ops_arange_count(&n->attrs);
    if (count == 0)
        return w->status;
    LLVMValueRef out = lw_output(w, out_v);
    lw_loop l;
    LLVMValueRef i = lw_for(w, &l, lw_i64(w, 0), lw_i64(w, count), 1, "i");
    LLVMValueRef x = LLVMBuildSIToFP(w->B, i, w->t_f64, "");
    x = LLVMBuildFMul(w->B, x, LLVMConstReal(w->t_f64, byocl_attrs_get_float(&n->attrs, "step", 1)), "");
    x = LLVMBuildFAdd(w->B, LLVMConstReal(w->t_f64, byocl_attrs_get_float(&n->attrs, "start", 0)), x, "");
    lw_store(w, out, dt, i, lw_from_double(w, x, dt));
    lw_for_end(w, &l);
    return w->status;
}

static byocl_status lower_shape_of(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    const byocl_shape *s = &lw_value_type(w, in_v)->shape;
    byocl_dtype dt = n->type->dtype;
    LLVMValueRef out = s->rank > 0 ? lw_output(w, out_v) : NULL;
    for (int d = 0; d < s->rank; d++)
        lw_store(w, out, dt, lw_i64(w, d), lw_const_of(w, dt, (double)s->dims[d]));
    return w->status;
}

/* Each element kept (ops_trilu_keeps, written as col - row against k) or 0. */
static byocl_status lower_trilu(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    const byocl_type *it = lw_value_type(w, in_v);
    const byocl_shape *s = &it->shape;
    if (byocl_shape_numel(s) == 0)
        return w->status;
    LLVMBuilderRef B = w->B;
    bool upper = byocl_attrs_get_bool(&n->attrs, "upper", true);
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    lw_loop loops[BYOCL_MAX_RANK];
    LLVMValueRef iv[BYOCL_MAX_RANK];
    LLVMValueRef at = open_loops(w, s, loops, iv);
    LLVMValueRef diff = LLVMBuildSub(B, iv[s->rank - 1], iv[s->rank - 2], "");
    LLVMValueRef keep = LLVMBuildICmp(B, upper ? LLVMIntSGE : LLVMIntSLE, diff,
                                      lw_i64(w, byocl_attrs_get_int(&n->attrs, "k", 0)), "");
    LLVMValueRef v = LLVMBuildSelect(B, keep, lw_load(w, in, it->dtype, at),
                                     lw_const_of(w, it->dtype, 0), "");
    lw_store(w, out, it->dtype, at, v);
    close_loops(w, s, loops);
    return w->status;
}

/* Running sums as the reference kernel takes them: an f64 (float results) or i64
 * (integer results) accumulator per (outer, inner) line, walked forwards or backwards. */
static byocl_status lower_cumsum(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    const byocl_type *it = lw_value_type(w, in_v);
    byocl_dtype dt = n->type->dtype;
    int64_t outer, len, inner;
    bool reverse = ops_cumsum_plan(&n->attrs, &it->shape, &outer, &len, &inner);
    bool exclusive = byocl_attrs_get_bool(&n->attrs, "exclusive", false);
    if (outer * len * inner == 0)
        return w->status;
    LLVMBuilderRef B = w->B;
    bool fl = lw_is_float(dt);
    LLVMTypeRef acc_t = fl ? w->t_f64 : w->t_i64;
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    LLVMValueRef acc = lw_alloca(w, acc_t, "acc");
    w->n_tasks = lw_pick_tasks(w, outer * len * inner, 65536, outer < 64 ? outer : 64);
    LLVMValueRef lo, hi;
    lw_task_range(w, outer, &lo, &hi);
    lw_loop lo_o, lo_j, lo_t;
    LLVMValueRef o = lw_for(w, &lo_o, lo, hi, 1, "o");
    LLVMValueRef j = lw_for(w, &lo_j, lw_i64(w, 0), lw_i64(w, inner), 1, "j");
    LLVMBuildStore(B, fl ? LLVMConstReal(acc_t, 0) : lw_i64(w, 0), acc);
    LLVMValueRef t = lw_for(w, &lo_t, lw_i64(w, 0), lw_i64(w, len), 1, "t");
    if (reverse)
        t = LLVMBuildSub(B, lw_i64(w, len - 1), t, "");
    LLVMValueRef at = lw_mad(w, lw_mad(w, o, len, t), inner, j);
    LLVMValueRef x = lw_load(w, in, it->dtype, at);
    x = fl ? lw_to_double(w, x, it->dtype) : lw_convert(w, x, it->dtype, BYOCL_INT64);
    LLVMValueRef before = LLVMBuildLoad2(B, acc_t, acc, "");
    LLVMValueRef after = fl ? LLVMBuildFAdd(B, before, x, "") : LLVMBuildAdd(B, before, x, "");
    LLVMBuildStore(B, after, acc);
    LLVMValueRef sum = exclusive ? before : after;
    lw_store(w, out, dt, at, fl ? lw_from_double(w, sum, dt) : lw_convert(w, sum, BYOCL_INT64, dt));
    lw_for_end(w, &lo_t);
    lw_for_end(w, &lo_j);
    lw_for_end(w, &lo_o);
    return w->status;
}

byocl_status lower_index_op(lw *w, int node)
{
    const char *op = lw_node(w, node)->op->name;
    if (ops_is_affine(op))
        return lower_affine(w, node);
    if (strcmp(op, "take") == 0)
        return lower_take(w, node);
    if (strcmp(op, "gather") == 0)
        return lower_gather(w, node);
    if (strcmp(op, "arange") == 0)
        return lower_arange(w, node);
    if (strcmp(op, "trilu") == 0)
        return lower_trilu(w, node);
    if (strcmp(op, "cumsum") == 0)
        return lower_cumsum(w, node);
    return lower_shape_of(w, node);
}
