/* The op group "index" (ops/index.c): strided_slice and broadcast_to as one affine copy
 * (ops_affine_map gives the offsets), nn.pad (the same with each padded axis' position
 * mapped by its mode, a select of the pad value in "constant"), take and gather reading
 * their index tensor, arange (start + i * step from its scalar inputs) and shape_of (values
 * known when compiling), trilu (k a scalar input) and one_hot (a select per
 * element), cumsum (a running sum per line), gather_nd (a slice copy per index), scatter_elements and
 * scatter_nd (a copy of the data, then the updates in order), topk (ranks by counting). Elements are moved as they are, so
 * every dtype is served alike; an index out of range where the op has no answer fails the
 * kernel with KERR_INDEX, as the reference kernel fails. */
#include <string.h>

#include "lower.h"
#include "ops/index.h"

/* Nested loops over the output `s`, the first split over at most max_tasks tasks; returns
 * the flat output offset (C order) and leaves the induction variables in iv. */
static LLVMValueRef open_loops_split(lw *w, const byocl_shape *s, lw_loop *loops,
                                     LLVMValueRef *iv, int64_t max_tasks)
{
    if (s->rank > 0)
        w->n_tasks = lw_pick_tasks(w, byocl_shape_numel(s), 65536,
                                   s->dims[0] < max_tasks ? s->dims[0] : max_tasks);
    LLVMValueRef dst = lw_i64(w, 0);
    for (int d = 0; d < s->rank; d++) {
        LLVMValueRef lo = lw_i64(w, 0), hi = lw_i64(w, s->dims[d]);
        if (d == 0)
            lw_task_range(w, s->dims[0], &lo, &hi);
        iv[d] = lw_for(w, &loops[d], lo, hi, 1, "i");
        /* The loops around the innermost stay loops: LLVM unrolled swin_t's window
         * partitions (transposes and slices over 7 x 7 windows) into blocks of thousands of
         * instructions, whose scheduling took most of a 10 s host build. */
        loops[d].no_unroll = d + 1 < s->rank;
        dst = lw_mad(w, dst, s->dims[d], iv[d]);
    }
    return dst;
}

/* A scalar input (nn.pad's value, arange's start and step, trilu's k, one_hot's values) loaded once and converted. */
static LLVMValueRef load_scalar(lw *w, int arg, byocl_dtype to)
{
    byocl_value_ref v = lv_resolve(w->fn, arg, -1);
    byocl_dtype dt = lw_value_type(w, v)->dtype;
    return lw_convert(w, lw_load(w, lw_value_ptr(w, v), dt, lw_i64(w, 0)), dt, to);
}

static LLVMValueRef open_loops(lw *w, const byocl_shape *s, lw_loop *loops, LLVMValueRef *iv)
{
    return open_loops_split(w, s, loops, iv, 64);
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

/* The input cell that output position i of a padded axis reads (ops_pad_source): i -
 * before, clamped into [0, n) for "constant" (*inside says whether it was there: else the
 * pad value) and "edge", mirrored at the ends for "reflect". */
static LLVMValueRef pad_source(lw *w, ops_pad_mode mode, LLVMValueRef i, int64_t before,
                               int64_t n, LLVMValueRef *inside)
{
    LLVMBuilderRef B = w->B;
    LLVMValueRef c = LLVMBuildSub(B, i, lw_i64(w, before), ""), zero = lw_i64(w, 0);
    LLVMValueRef below = LLVMBuildICmp(B, LLVMIntSLT, c, zero, "");
    LLVMValueRef above = LLVMBuildICmp(B, LLVMIntSGE, c, lw_i64(w, n), "");
    if (mode == OPS_PAD_CONSTANT)
        *inside = LLVMBuildAnd(B, *inside, LLVMBuildNot(B, LLVMBuildOr(B, below, above, ""), ""),
                               "");
    bool reflect = mode == OPS_PAD_REFLECT;
    LLVMValueRef low = reflect ? LLVMBuildNeg(B, c, "") : zero;
    LLVMValueRef high = reflect ? LLVMBuildSub(B, lw_i64(w, 2 * (n - 1)), c, "") : lw_i64(w, n - 1);
    return LLVMBuildSelect(B, below, low, LLVMBuildSelect(B, above, high, c, ""), "");
}

/* nn.pad: each output element loads the input element its positions map to, or takes the
 * pad value (converted to the data's dtype once) where "constant" mode maps one outside. */
static byocl_status lower_pad(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    const byocl_type *it = lw_value_type(w, in_v);
    const byocl_shape *os = &n->type->shape, *is = &it->shape;
    if (byocl_shape_numel(os) == 0)
        return w->status;
    ops_pad_mode mode = ops_pad_mode_of(&n->attrs);
    byocl_dtype dt = it->dtype;
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    LLVMValueRef fill = load_scalar(w, n->args[1], dt);
    lw_loop loops[BYOCL_MAX_RANK];
    LLVMValueRef iv[BYOCL_MAX_RANK];
    LLVMValueRef dst = open_loops(w, os, loops, iv), src = lw_i64(w, 0);
    LLVMValueRef inside = LLVMConstInt(w->t_i1, 1, 0);
    for (int d = 0; d < os->rank; d++) {
        int64_t before, after;
        ops_pad_width(&n->attrs, d, &before, &after);
        LLVMValueRef c = before || after ? pad_source(w, mode, iv[d], before, is->dims[d], &inside)
                                         : iv[d];
        src = lw_mad(w, src, is->dims[d], c);
    }
    LLVMValueRef v = fill; /* an empty input ("constant" only) has nothing to load */
    if (byocl_shape_numel(is) > 0)
        v = lw_load(w, in, dt, src);
    if (mode == OPS_PAD_CONSTANT && byocl_shape_numel(is) > 0)
        v = LLVMBuildSelect(w->B, inside, v, fill, "");
    lw_store(w, out, dt, dst, v);
    close_loops(w, os, loops);
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
    ops_take_plan p;
    ops_take_plan_make(&n->attrs, &lw_value_type(w, in_v)->shape, &lw_value_type(w, idx_v)->shape,
                       &p);
    int64_t es = (int64_t)byocl_dtype_size(lw_value_type(w, out_v)->dtype), bos = p.batch * p.outer;
    if (bos * p.m * p.inner == 0)
        return w->status;
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    w->n_tasks = lw_pick_tasks(w, bos * p.m * p.inner, 65536, bos < 64 ? bos : 64);
    LLVMValueRef lo, hi;
    lw_task_range(w, bos, &lo, &hi);
    lw_loop lo_o, lo_j;
    LLVMValueRef o = lw_for(w, &lo_o, lo, hi, 1, "o");
    LLVMValueRef j = lw_for(w, &lo_j, lw_i64(w, 0), lw_i64(w, p.m), 1, "j");
    LLVMValueRef batch = p.batch > 1 ? LLVMBuildSDiv(w->B, o, lw_i64(w, p.outer), "") : lw_i64(w, 0);
    LLVMValueRef at = load_index(w, idx_v, lw_mad(w, batch, p.m, j), p.n,
                                 (int)ops_take_mode_of(&n->attrs));
    LLVMValueRef doff = lw_mad(w, lw_mad(w, o, p.m, j), p.inner * es, lw_i64(w, 0));
    LLVMValueRef soff = lw_mad(w, lw_mad(w, o, p.n, at), p.inner * es, lw_i64(w, 0));
    lw_memcpy(w, LLVMBuildInBoundsGEP2(w->B, w->t_i8, out, &doff, 1, ""),
              LLVMBuildInBoundsGEP2(w->B, w->t_i8, in, &soff, 1, ""), lw_i64(w, p.inner * es));
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

/* start + i * step in double; the count is the result's length (the type relation read
 * the constant arguments). */
static byocl_status lower_arange(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref out_v = {node, -1};
    byocl_dtype dt = n->type->dtype;
    int64_t count = n->type->shape.dims[0];
    if (count == 0)
        return w->status;
    LLVMValueRef out = lw_output(w, out_v);
    LLVMValueRef start = load_scalar(w, n->args[0], BYOCL_FLOAT64);
    LLVMValueRef step = load_scalar(w, n->args[2], BYOCL_FLOAT64);
    lw_loop l;
    LLVMValueRef i = lw_for(w, &l, lw_i64(w, 0), lw_i64(w, count), 1, "i");
    LLVMValueRef x = LLVMBuildSIToFP(w->B, i, w->t_f64, "");
    x = LLVMBuildFAdd(w->B, start, LLVMBuildFMul(w->B, x, step, ""), "");
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

/* Each element kept (ops_trilu_keeps, written as col - row against k, loaded once) or 0. */
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
    LLVMValueRef k = load_scalar(w, n->args[1], BYOCL_INT64);
    lw_loop loops[BYOCL_MAX_RANK];
    LLVMValueRef iv[BYOCL_MAX_RANK];
    LLVMValueRef at = open_loops(w, s, loops, iv);
    LLVMValueRef diff = LLVMBuildSub(B, iv[s->rank - 1], iv[s->rank - 2], "");
    LLVMValueRef keep = LLVMBuildICmp(B, upper ? LLVMIntSGE : LLVMIntSLE, diff, k, "");
    LLVMValueRef v = LLVMBuildSelect(B, keep, lw_load(w, in, it->dtype, at),
                                     lw_const_of(w, it->dtype, 0), "");
    lw_store(w, out, it->dtype, at, v);
    close_loops(w, s, loops);
    return w->status;
}

/* one_hot: a select per output element between on_value and off_value (converted to the
 * result's dtype), by whether the index equals the position along the new axis. */
static byocl_status lower_one_hot(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref idx_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    const byocl_type *it = lw_value_type(w, idx_v);
    byocl_dtype dt = n->type->dtype;
    int64_t outer, depth, inner;
    ops_one_hot_plan(&n->attrs, &it->shape, &outer, &depth, &inner);
    if (outer * depth * inner == 0)
        return w->status;
    LLVMBuilderRef B = w->B;
    const byocl_shape s = {.rank = 3, .dims = {outer, depth, inner}};
    lw_loop loops[3];
    LLVMValueRef iv[3];
    LLVMValueRef out = lw_output(w, out_v), idx = lw_value_ptr(w, idx_v);
    LLVMValueRef values[2] = {load_scalar(w, n->args[1], dt), load_scalar(w, n->args[2], dt)};
    LLVMValueRef at = open_loops(w, &s, loops, iv);
    LLVMValueRef v = lw_load(w, idx, it->dtype, lw_mad(w, iv[0], inner, iv[2]));
    LLVMValueRef hot =
        byocl_dtype_is_float(it->dtype)
            ? LLVMBuildFCmp(B, LLVMRealOEQ, lw_to_double(w, v, it->dtype),
                            LLVMBuildSIToFP(B, iv[1], w->t_f64, ""), "")
            : LLVMBuildICmp(B, LLVMIntEQ, lw_convert(w, v, it->dtype, BYOCL_INT64), iv[1], "");
    lw_store(w, out, dt, at, LLVMBuildSelect(B, hot, values[0], values[1], ""));
    close_loops(w, &s, loops);
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

/* gather_nd: for each (batch, position) pair q of the plan, the data offset its M index
 * rows give (each checked), then one slice copied. */
static byocl_status lower_gather_nd(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    byocl_value_ref idx_v = lv_resolve(w->fn, n->args[1], -1);
    ops_nd_plan p;
    byocl_status st = ops_nd_plan_make("gather_nd",
                                       (int)byocl_attrs_get_int(&n->attrs, "batch_dims", 0),
                                       &lw_value_type(w, in_v)->shape,
                                       &lw_value_type(w, idx_v)->shape, &p, w->err);
    if (st != BYOCL_OK)
        return lw_failed(w, st);
    int64_t lines = p.batch * p.positions, es = (int64_t)byocl_dtype_size(n->type->dtype);
    if (lines * p.slice == 0)
        return w->status;
    LLVMBuilderRef B = w->B;
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    w->n_tasks = lw_pick_tasks(w, lines * p.slice, 65536, lines < 64 ? lines : 64);
    LLVMValueRef lo, hi;
    lw_task_range(w, lines, &lo, &hi);
    lw_loop l;
    LLVMValueRef q = lw_for(w, &l, lo, hi, 1, "q");
    LLVMValueRef bt = LLVMBuildUDiv(B, q, lw_i64(w, p.positions), "");
    LLVMValueRef src = lw_mad(w, bt, p.batch_size, lw_i64(w, 0));
    for (int j = 0; j < p.m; j++) {
        LLVMValueRef at = LLVMBuildAdd(B, q, lw_i64(w, j * lines), "");
        src = lw_mad(w, load_index(w, idx_v, at, p.dim[j], -1), p.stride[j], src);
    }
    LLVMValueRef doff = lw_mad(w, q, p.slice * es, lw_i64(w, 0));
    LLVMValueRef soff = lw_mad(w, src, es, lw_i64(w, 0));
    lw_memcpy(w, LLVMBuildInBoundsGEP2(B, w->t_i8, out, &doff, 1, ""),
              LLVMBuildInBoundsGEP2(B, w->t_i8, in, &soff, 1, ""), lw_i64(w, p.slice * es));
    lw_for_end(w, &l);
    return w->status;
}

/* a combined with b (compute type of dt) as the reference's scatter_combine does: one
 * rounded float op, wrapping integer ops, NaN-propagating min and max. */
static LLVMValueRef scatter_combine(lw *w, ops_scatter_reduce r, byocl_dtype dt,
                                    LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef B = w->B;
    bool fl = lw_is_float(dt);
    switch (r) {
    case OPS_SCATTER_ADD:
        return fl ? lw_round(w, LLVMBuildFAdd(B, a, b, ""), dt) : LLVMBuildAdd(B, a, b, "");
    case OPS_SCATTER_MUL:
        return fl ? lw_round(w, LLVMBuildFMul(B, a, b, ""), dt) : LLVMBuildMul(B, a, b, "");
    case OPS_SCATTER_MIN:
    case OPS_SCATTER_MAX: {
        bool mn = r == OPS_SCATTER_MIN;
        if (!fl) {
            LLVMIntPredicate pr = lw_is_unsigned(dt) ? (mn ? LLVMIntULT : LLVMIntUGT)
                                                     : (mn ? LLVMIntSLT : LLVMIntSGT);
            return LLVMBuildSelect(B, LLVMBuildICmp(B, pr, b, a, ""), b, a, "");
        }
        LLVMValueRef v = LLVMBuildSelect(B, LLVMBuildFCmp(B, mn ? LLVMRealOLT : LLVMRealOGT, b,
                                                          a, ""), b, a, "");
        v = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, b, b, ""), b, v, "");
        return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, a, a, ""), a, v, "");
    }
    default:
        return b;
    }
}

/* out[at] = combine(out[at], upd[from]). */
static void scatter_store(lw *w, ops_scatter_reduce r, byocl_dtype dt, LLVMValueRef out,
                          LLVMValueRef at, LLVMValueRef upd, LLVMValueRef from)
{
    LLVMValueRef b = lw_load(w, upd, dt, from);
    if (r != OPS_SCATTER_UPDATE)
        b = scatter_combine(w, r, dt, lw_load(w, out, dt, at), b);
    lw_store(w, out, dt, at, b);
}

/* The scatters copy the data, then apply the updates in order in one task (a repeated
 * index takes its updates one after the other, as in the reference). */
static byocl_status lower_scatter(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    byocl_value_ref idx_v = lv_resolve(w->fn, n->args[1], -1);
    byocl_value_ref upd_v = lv_resolve(w->fn, n->args[2], -1);
    const byocl_shape *ds = &lw_value_type(w, in_v)->shape;
    const byocl_shape *is = &lw_value_type(w, idx_v)->shape;
    byocl_dtype dt = n->type->dtype;
    ops_scatter_reduce r = ops_scatter_reduce_of(&n->attrs);
    bool nd = strcmp(n->op->name, "scatter_nd") == 0;
    ops_nd_plan p;
    if (nd) {
        byocl_status st = ops_nd_plan_make("scatter_nd", 0, ds, is, &p, w->err);
        if (st != BYOCL_OK)
            return lw_failed(w, st);
    }
    int64_t numel = byocl_shape_numel(ds);
    if (numel == 0)
        return w->status;
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    w->n_tasks = 1;
    lw_memcpy(w, out, in, lw_i64(w, numel * (int64_t)byocl_dtype_size(dt)));
    if (byocl_shape_numel(is) == 0 || (nd && p.positions * p.slice == 0))
        return w->status;
    LLVMValueRef upd = lw_value_ptr(w, upd_v);
    if (nd) {
        lw_loop ly, ls;
        LLVMValueRef y = lw_for(w, &ly, lw_i64(w, 0), lw_i64(w, p.positions), 1, "y");
        LLVMValueRef dst = lw_i64(w, 0);
        for (int j = 0; j < p.m; j++) {
            LLVMValueRef at = LLVMBuildAdd(w->B, y, lw_i64(w, j * p.positions), "");
            dst = lw_mad(w, load_index(w, idx_v, at, p.dim[j], -1), p.stride[j], dst);
        }
        LLVMValueRef s = lw_for(w, &ls, lw_i64(w, 0), lw_i64(w, p.slice), 1, "s");
        scatter_store(w, r, dt, out, LLVMBuildAdd(w->B, dst, s, ""), upd,
                      lw_mad(w, y, p.slice, s));
        lw_for_end(w, &ls);
        lw_for_end(w, &ly);
        return w->status;
    }
    int axis = ops_gather_axis(&n->attrs, ds->rank);
    int64_t stride[BYOCL_MAX_RANK], k = 1;
    for (int d = ds->rank - 1; d >= 0; d--) {
        stride[d] = k;
        k *= ds->dims[d];
    }
    lw_loop loops[BYOCL_MAX_RANK];
    LLVMValueRef iv[BYOCL_MAX_RANK];
    LLVMValueRef from = open_loops_split(w, is, loops, iv, 1);
    LLVMValueRef dst = lw_mad(w, load_index(w, idx_v, from, ds->dims[axis], -1), stride[axis],
                              lw_i64(w, 0));
    for (int d = 0; d < ds->rank; d++)
        if (d != axis)
            dst = lw_mad(w, iv[d], stride[d], dst);
    scatter_store(w, r, dt, out, dst, upd, from);
    close_loops(w, is, loops);
    return w->status;
}

/* Whether element e (value xe) comes before element t (value xt) of a topk line: the
 * larger first (smaller with ascend), NaN above every number, equal values by position. */
static LLVMValueRef topk_before(lw *w, byocl_dtype dt, bool ascend, LLVMValueRef xe,
                                LLVMValueRef e, LLVMValueRef xt, LLVMValueRef t)
{
    LLVMBuilderRef B = w->B;
    LLVMValueRef lt, gt;
    if (lw_is_float(dt)) {
        LLVMValueRef nan_e = LLVMBuildFCmp(B, LLVMRealUNO, xe, xe, "");
        LLVMValueRef nan_t = LLVMBuildFCmp(B, LLVMRealUNO, xt, xt, "");
        lt = LLVMBuildOr(B, LLVMBuildFCmp(B, LLVMRealOLT, xe, xt, ""),
                         LLVMBuildAnd(B, LLVMBuildNot(B, nan_e, ""), nan_t, ""), "");
        gt = LLVMBuildOr(B, LLVMBuildFCmp(B, LLVMRealOGT, xe, xt, ""),
                         LLVMBuildAnd(B, nan_e, LLVMBuildNot(B, nan_t, ""), ""), "");
    } else {
        bool u = lw_is_unsigned(dt);
        lt = LLVMBuildICmp(B, u ? LLVMIntULT : LLVMIntSLT, xe, xt, "");
        gt = LLVMBuildICmp(B, u ? LLVMIntUGT : LLVMIntSGT, xe, xt, "");
    }
    LLVMValueRef eq = LLVMBuildNot(B, LLVMBuildOr(B, lt, gt, ""), "");
    LLVMValueRef tie = LLVMBuildAnd(B, eq, LLVMBuildICmp(B, LLVMIntSLT, e, t, ""), "");
    return LLVMBuildOr(B, ascend ? lt : gt, tie, "");
}

/* topk by counting: each element's rank in its line is the number of elements before it
 * (topk_before); ranks below k are stored there. Quadratic in the axis, but a plain loop
 * nest that splits over the lines. */
static byocl_status lower_topk(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1);
    const byocl_type *it = lw_value_type(w, in_v);
    ops_topk p;
    ops_topk_plan(&n->attrs, &it->shape, &p);
    int64_t lines = p.outer * p.inner;
    if (lines * p.k == 0)
        return w->status;
    bool both = p.values && p.indices;
    byocl_value_ref val_v = {node, both ? 0 : -1}, idx_v = {node, both ? 1 : -1};
    LLVMValueRef vals = p.values ? lw_output(w, val_v) : NULL;
    LLVMValueRef idxs = p.indices ? lw_output(w, idx_v) : NULL;
    if (!vals && !idxs)
        return w->status;
    LLVMBuilderRef B = w->B;
    LLVMValueRef in = lw_value_ptr(w, in_v), count = lw_alloca(w, w->t_i64, "rank");
    w->n_tasks = lw_pick_tasks(w, lines * p.len * p.len, 65536, lines < 64 ? lines : 64);
    LLVMValueRef lo, hi;
    lw_task_range(w, lines, &lo, &hi);
    lw_loop lq, lt, le;
    LLVMValueRef q = lw_for(w, &lq, lo, hi, 1, "q");
    LLVMValueRef o = LLVMBuildUDiv(B, q, lw_i64(w, p.inner), "");
    LLVMValueRef j = LLVMBuildURem(B, q, lw_i64(w, p.inner), "");
    LLVMValueRef base = lw_mad(w, o, p.len * p.inner, j);
    LLVMValueRef t = lw_for(w, &lt, lw_i64(w, 0), lw_i64(w, p.len), 1, "t");
    LLVMValueRef xt = lw_load(w, in, it->dtype, lw_mad(w, t, p.inner, base));
    LLVMBuildStore(B, lw_i64(w, 0), count);
    LLVMValueRef e = lw_for(w, &le, lw_i64(w, 0), lw_i64(w, p.len), 1, "e");
    LLVMValueRef xe = lw_load(w, in, it->dtype, lw_mad(w, e, p.inner, base));
    LLVMValueRef before = topk_before(w, it->dtype, p.ascend, xe, e, xt, t);
    LLVMBuildStore(B, LLVMBuildAdd(B, LLVMBuildLoad2(B, w->t_i64, count, ""),
                                   LLVMBuildZExt(B, before, w->t_i64, ""), ""), count);
    lw_for_end(w, &le);
    LLVMValueRef rank = LLVMBuildLoad2(B, w->t_i64, count, "");
    lw_if keep;
    lw_if_begin(w, &keep, LLVMBuildICmp(B, LLVMIntSLT, rank, lw_i64(w, p.k), ""), "keep");
    LLVMValueRef to = lw_mad(w, lw_mad(w, o, p.k, rank), p.inner, j);
    if (vals)
        lw_store(w, vals, it->dtype, to, xt);
    if (idxs)
        lw_store(w, idxs, p.index_dtype, to, lw_convert(w, t, BYOCL_INT64, p.index_dtype));
    lw_if_end(w, &keep);
    lw_for_end(w, &lt);
    lw_for_end(w, &lq);
    return w->status;
}

byocl_status lower_index_op(lw *w, int node)
{
    const char *op = lw_node(w, node)->op->name;
    if (strcmp(op, "gather_nd") == 0)
        return lower_gather_nd(w, node);
    if (strcmp(op, "scatter_elements") == 0 || strcmp(op, "scatter_nd") == 0)
        return lower_scatter(w, node);
    if (strcmp(op, "topk") == 0)
        return lower_topk(w, node);
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
    if (strcmp(op, "one_hot") == 0)
        return lower_one_hot(w, node);
    if (strcmp(op, "nn.pad") == 0)
        return lower_pad(w, node);
    return lower_shape_of(w, node);
}
