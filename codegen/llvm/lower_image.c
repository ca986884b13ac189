/* The op group "image" (ops/image.c): image.resize2d as scalar loops over the output,
 * reading the taps of ops_resize_plan from two constant tables per axis (input positions
 * and weights; tf_crop_and_resize adds a third, the positions outside the input) that the
 * kernel owns. The sums are the reference kernel's, in double and in the same order, so
 * the results agree to the bit. */
#include "lower.h"
#include "ops/image.h"

/* The tables of one axis as kernel constants (the kernel takes the buffers over). */
typedef struct axis_tables {
    LLVMValueRef index, weight;
    LLVMValueRef outside; /* uint8 flags, or NULL */
    int taps;
} axis_tables;

static axis_tables hand_over(lw *w, ops_resize_axis *plan)
{
    axis_tables t = {.taps = plan->taps};
    t.index = lw_const_ptr(w, plan->index, NULL, plan->index);
    t.weight = lw_const_ptr(w, plan->weight, NULL, plan->weight);
    if (plan->outside)
        t.outside = lw_const_ptr(w, plan->outside, NULL, plan->outside);
    plan->index = NULL;
    plan->weight = NULL;
    plan->outside = NULL;
    return t;
}

/* Whether output row y or column x lies outside the input (an i1), or NULL when no
 * position of either axis does. */
static LLVMValueRef outside(lw *w, const axis_tables *ty, LLVMValueRef y, const axis_tables *tx,
                            LLVMValueRef x)
{
    if (!ty->outside)
        return NULL;
    LLVMValueRef flags = LLVMBuildOr(w->B, lw_load(w, ty->outside, BYOCL_UINT8, y),
                                     lw_load(w, tx->outside, BYOCL_UINT8, x), "");
    return LLVMBuildICmp(w->B, LLVMIntNE, flags, LLVMConstNull(LLVMTypeOf(flags)), "outside");
}

/* Tap k of position `at`: its input index (i64) and, unless NULL, its weight (double). */
static LLVMValueRef tap(lw *w, const axis_tables *t, LLVMValueRef at, int k, LLVMValueRef *weight)
{
    LLVMValueRef i = lw_mad(w, at, t->taps, lw_i64(w, k));
    if (weight) {
        LLVMValueRef p = LLVMBuildInBoundsGEP2(w->B, w->t_f64, t->weight, &i, 1, "");
        *weight = LLVMBuildLoad2(w->B, w->t_f64, p, "w");
    }
    return lw_load(w, t->index, BYOCL_INT64, i);
}

byocl_status lower_resize2d(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    const byocl_type *it = lw_value_type(w, in_v), *ot = lw_value_type(w, out_v);
    const byocl_shape *s = &it->shape;
    ops_resize_axis py = {0}, px = {0};
    byocl_status st = ops_resize_plan(&n->attrs, 0, s->dims[2], &py, w->err);
    if (st == BYOCL_OK)
        st = ops_resize_plan(&n->attrs, 1, s->dims[3], &px, w->err);
    if (st != BYOCL_OK || byocl_shape_numel(&ot->shape) == 0) {
        ops_resize_axis_free(&py);
        ops_resize_axis_free(&px);
        return st != BYOCL_OK ? lw_failed(w, st) : w->status;
    }
    int64_t planes = s->dims[0] * s->dims[1], h = s->dims[2], wd = s->dims[3];
    int64_t oh = py.out, ow = px.out;
    axis_tables ty = hand_over(w, &py), tx = hand_over(w, &px);
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);

    w->n_tasks = lw_pick_tasks(w, byocl_shape_numel(&ot->shape), 65536,
                               planes < 64 ? planes : 64);
    LLVMValueRef lo, hi;
    lw_task_range(w, planes, &lo, &hi);
    lw_loop lp, ly, lx;
    LLVMValueRef p = lw_for(w, &lp, lo, hi, 1, "p");
    LLVMValueRef y = lw_for(w, &ly, lw_i64(w, 0), lw_i64(w, oh), 1, "y");
    LLVMValueRef x = lw_for(w, &lx, lw_i64(w, 0), lw_i64(w, ow), 1, "x");
    LLVMValueRef dst = lw_mad(w, lw_mad(w, p, oh, y), ow, x);
    LLVMValueRef plane = lw_mad(w, p, h, lw_i64(w, 0));
    LLVMValueRef fill = LLVMConstReal(w->t_f64,
                                      byocl_attrs_get_float(&n->attrs, "extrapolation_value", 0));
    LLVMValueRef extrapolate = outside(w, &ty, y, &tx, x);
    if (ty.taps == 1) { /* nearest: the element itself, converted as a cast would */
        LLVMValueRef row = lw_mad(w, LLVMBuildAdd(w->B, plane, tap(w, &ty, y, 0, NULL), ""), wd,
                                  tap(w, &tx, x, 0, NULL));
        LLVMValueRef v = lw_convert(w, lw_load(w, in, it->dtype, row), it->dtype, ot->dtype);
        if (extrapolate)
            v = LLVMBuildSelect(w->B, extrapolate, lw_from_double(w, fill, ot->dtype), v, "");
        lw_store(w, out, ot->dtype, dst, v);
    } else {
        LLVMValueRef acc = LLVMConstReal(w->t_f64, 0);
        for (int t = 0; t < ty.taps; t++) {
            LLVMValueRef wy, line = LLVMConstReal(w->t_f64, 0);
            LLVMValueRef row = lw_mad(w, LLVMBuildAdd(w->B, plane, tap(w, &ty, y, t, &wy), ""),
                                      wd, lw_i64(w, 0));
            for (int u = 0; u < tx.taps; u++) {
                LLVMValueRef wx, col = tap(w, &tx, x, u, &wx);
                LLVMValueRef v = lw_load(w, in, it->dtype, LLVMBuildAdd(w->B, row, col, ""));
                line = LLVMBuildFAdd(w->B, line,
                                     LLVMBuildFMul(w->B, wx, lw_to_double(w, v, it->dtype), ""),
                                     "");
            }
            acc = LLVMBuildFAdd(w->B, acc, LLVMBuildFMul(w->B, wy, line, ""), "");
        }
        if (extrapolate)
            acc = LLVMBuildSelect(w->B, extrapolate, fill, acc, "");
        lw_store(w, out, ot->dtype, dst, lw_from_double(w, acc, ot->dtype));
    }
    lw_for_end(w, &lx);
    lw_for_end(w, &ly);
    lw_for_end(w, &lp);
    return w->status;
}
