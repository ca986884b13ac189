/* Reductions: nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.max_pool3d,
 * nn.avg_pool3d (a direct loop nest, lower_pool3d), nn.softmax,
 * nn.log_softmax, nn.layer_norm and the reduction ops (sum, mean, prod, max, min, argmax,
 * argmin, all, any, variance: ops/reduce.h).
 *
 * Pools run a whole output row at a time: for each window tap (kh, kw), one loop over
 * the row's outputs that the tap covers (ranges computed here, from the static shapes),
 * which LLVM vectorizes. Every sum adds the same values in the same order as the
 * reference (double accumulators, taps in (kh, kw) order, reduced elements in C order),
 * so results match it exactly. A pool reads its count of planes (images x channels) from
 * ctx (lw_task_range_ctx), so pools that differ only in their channels share code. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "ops/reduce.h"

static LLVMValueRef dconst(lw *w, double v) { return LLVMConstReal(w->t_f64, v); }

typedef struct pool_geom {
    int64_t batch, channels, h, w, oh, ow;
    int64_t kernel[2], stride[2], dilation[2], pad[4];
} pool_geom;

/* Reads an INTS attribute of up to n values (defaults filled by the registry). */
static void ints_attr(const byocl_node *n, const char *key, int64_t *out, int count,
                      int64_t fallback)
{
    const int64_t *v = NULL;
    int k = byocl_attrs_get_ints(&n->attrs, key, &v);
    for (int i = 0; i < count; i++)
        out[i] = k <= 0 ? fallback : k == 1 ? v[0] : i < k ? v[i] : v[k - 1];
}

static void pool_geometry(lw *w, int node, pool_geom *g)
{
    const byocl_node *n = lw_node(w, node);
    const byocl_shape *in = &lw_value_type(w, lv_resolve(w->fn, n->args[0], -1))->shape;
    const byocl_shape *out = &n->type->shape;
    g->batch = in->dims[0];
    g->channels = in->dims[1];
    g->h = in->dims[2];
    g->w = in->dims[3];
    g->oh = out->dims[2];
    g->ow = out->dims[3];
    if (strcmp(n->op->name, "nn.global_avg_pool2d") == 0) {
        g->kernel[0] = g->h;
        g->kernel[1] = g->w;
        g->stride[0] = g->stride[1] = g->dilation[0] = g->dilation[1] = 1;
        memset(g->pad, 0, sizeof g->pad);
        return;
    }
    ints_attr(n, "pool_size", g->kernel, 2, 1);
    ints_attr(n, "strides", g->stride, 2, 1);
    ints_attr(n, "dilation", g->dilation, 2, 1);
    int64_t pad[4];
    const int64_t *v = NULL;
    int k = byocl_attrs_get_ints(&n->attrs, "padding", &v);
    for (int i = 0; i < 4; i++)
        pad[i] = k == 4 ? v[i] : k == 2 ? v[i % 2] : k == 1 ? v[0] : 0;
    memcpy(g->pad, pad, sizeof pad);
}

/* Outputs o in [*lo, *hi) for which o * stride + offset lies in [0, len). */
static void valid_range(int64_t out_len, int64_t len, int64_t stride, int64_t offset,
                        int64_t *lo, int64_t *hi)
{
    int64_t a = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
    int64_t b = len - offset <= 0 ? 0 : (len - offset + stride - 1) / stride;
    *lo = a < out_len ? a : out_len;
    *hi = b < out_len ? b : out_len;
    if (*hi < *lo)
        *hi = *lo;
}

/* The lowest value of a dtype in its compute type (max pooling over no cell). */
static LLVMValueRef lowest(lw *w, byocl_dtype d)
{
    switch (d) {
    case BYOCL_FLOAT32:
    case BYOCL_FLOAT16:
    case BYOCL_BFLOAT16: return LLVMConstReal(w->t_f32, -INFINITY);
    case BYOCL_FLOAT64: return LLVMConstReal(w->t_f64, -INFINITY);
    case BYOCL_INT32: return LLVMConstInt(w->t_i32, (unsigned long long)INT32_MIN, 1);
    case BYOCL_INT64: return LLVMConstInt(w->t_i64, (unsigned long long)INT64_MIN, 1);
    case BYOCL_INT8: return LLVMConstInt(w->t_i8, (unsigned long long)INT8_MIN, 1);
    case BYOCL_INT16: return LLVMConstInt(w->t_i16, (unsigned long long)INT16_MIN, 1);
    default: return LLVMConstNull(lw_mem_type(w, d)); /* unsigned, bool */
    }
}

/* The reference's running maximum: a NaN seen once stays (floats). */
static LLVMValueRef running_max(lw *w, byocl_dtype d, LLVMValueRef best, LLVMValueRef v)
{
    LLVMBuilderRef B = w->B;
    if (!lw_is_float(d)) {
        LLVMIntPredicate gt = lw_is_unsigned(d) ? LLVMIntUGT : LLVMIntSGT;
        return LLVMBuildSelect(B, LLVMBuildICmp(B, gt, v, best, ""), v, best, "");
    }
    LLVMValueRef take = LLVMBuildOr(B, LLVMBuildFCmp(B, LLVMRealUNO, v, v, ""),
                                    LLVMBuildFCmp(B, LLVMRealOGT, v, best, ""), "");
    LLVMValueRef keep_nan = LLVMBuildFCmp(B, LLVMRealUNO, best, best, "");
    return LLVMBuildSelect(B, LLVMBuildAnd(B, take, LLVMBuildNot(B, keep_nan, ""), ""), v, best, "");
}

/* Window cells per output along one axis: the input cells (or with include_pad the
 * cells inside the padded input) that output o's window covers; int32 per output. */
static int32_t *cell_counts(int64_t out_len, int64_t len, int64_t kernel, int64_t stride,
                            int64_t dilation, int64_t pad_before, int64_t pad_after,
                            bool include_pad)
{
    int32_t *c = malloc((size_t)(out_len > 0 ? out_len : 1) * sizeof *c);
    if (!c)
        return NULL;
    for (int64_t o = 0; o < out_len; o++) {
        int32_t n = 0;
        for (int64_t k = 0; k < kernel; k++) {
            int64_t i = o * stride - pad_before + k * dilation;
            n += include_pad ? i < len + pad_after : (i >= 0 && i < len);
        }
        c[o] = n;
    }
    return c;
}

/* Doubles in a scratch buffer. */
static LLVMValueRef dload(lw *w, LLVMValueRef base, LLVMValueRef i)
{
    LLVMValueRef p = LLVMBuildInBoundsGEP2(w->B, w->t_f64, base, &i, 1, "");
    return LLVMBuildLoad2(w->B, w->t_f64, p, "");
}

static void dstore(lw *w, LLVMValueRef base, LLVMValueRef i, LLVMValueRef v)
{
    LLVMValueRef p = LLVMBuildInBoundsGEP2(w->B, w->t_f64, base, &i, 1, "");
    LLVMBuildStore(w->B, v, p);
}

static LLVMValueRef i64_at(lw *w, LLVMValueRef base, LLVMValueRef i, LLVMTypeRef t)
{
    LLVMValueRef p = LLVMBuildInBoundsGEP2(w->B, t, base, &i, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(w->B, t, p, "");
    return t == w->t_i64 ? v : LLVMBuildSExt(w->B, v, w->t_i64, "");
}

/* Scratch from the runtime allocator; the kernel fails cleanly when there is none. */
static LLVMValueRef scratch(lw *w, int64_t bytes)
{
    LLVMTypeRef i64 = w->t_i64;
    LLVMValueRef n = lw_i64(w, bytes);
    LLVMValueRef p = lw_call_rt(w, "byocl_llvm_rt_alloc", w->t_ptr, &i64, 1, &n);
    lw_fail_if(w, LLVMBuildIsNull(w->B, p, ""), KERR_NOMEM);
    return p;
}

static void scratch_free(lw *w, LLVMValueRef p)
{
    LLVMTypeRef ptr = w->t_ptr;
    lw_call_rt(w, "byocl_llvm_rt_free", w->t_void, &ptr, 1, &p);
}

static LLVMValueRef owned_i64s(lw *w, const int64_t *v, int n)
{
    int64_t *copy = malloc((size_t)(n > 0 ? n : 1) * sizeof *copy);
    if (!copy) {
        lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_NOMEM, "out of memory"));
        return LLVMConstNull(w->t_ptr);
    }
    memcpy(copy, v, (size_t)n * sizeof *copy);
    return lw_const_ptr(w, copy, NULL, copy);
}

/* Float pools with a window of at most 16 columns and a stride of at most 4: V vectors of
 * outputs of a row in registers, over all taps; per tap one row load, rows of taps
 * outside the input skipped. Segments whose taps all lie inside the row load plainly; the
 * others by masked loads whose lanes in the padding are -inf for max, -0.0 for sums, which
 * change nothing. A maximum takes a tap where it exceeds the best so far, in the
 * reference's (kh, kw) order, so that of a -0.0 and a 0.0 the first stays as in the
 * reference (one maxps on x86); NaNs are noted on the side and win at the end (three
 * instructions a tap where a select that keeps the NaN takes six). Averages add in
 * double, in the reference's (kh, kw) order. Full float32 segments go to the output as
 * vectors, others lane by lane. */
#define POOL_V 2

static bool pool_in_registers(const pool_geom *g, byocl_dtype d)
{
    return lw_is_single_float(d) && g->kernel[1] <= 16 && g->stride[1] <= 4;
}

typedef struct pool_rows {
    const pool_geom *g;
    byocl_dtype d;
    bool is_max;
    int V;
    int64_t seg;
    LLVMTypeRef vt;
    LLVMValueRef in, out, tile, ny, nx, in_plane, out_row, oy, ox0;
    LLVMValueRef acc[POOL_V], nan[POOL_V]; /* allocas: the running values, NaN seen */
} pool_rows;

/* The kh loop over a segment's taps: plain loads where `inside`, masked otherwise. */
static void pool_rows_taps(lw *w, const void *ctx, bool inside)
{
    const pool_rows *r = ctx;
    const pool_geom *g = r->g;
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    lw_loop lkh;
    LLVMValueRef kh = lw_for(w, &lkh, lw_i64(w, 0), lw_i64(w, g->kernel[0]), 1, "kh");
    LLVMValueRef iy = LLVMBuildNSWAdd(B, lw_mad(w, r->oy, g->stride[0], NULL),
                                      lw_mad(w, kh, g->dilation[0], lw_i64(w, -g->pad[0])), "iy");
    lw_if row;
    lw_if_begin(w, &row, LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntSGE, iy, lw_i64(w, 0), ""),
                                      LLVMBuildICmp(B, LLVMIntSLT, iy, lw_i64(w, g->h), ""), ""),
                "row");
    LLVMValueRef at = lw_mad(w, iy, g->w, r->in_plane);
    LLVMValueRef in_row = LLVMBuildInBoundsGEP2(B, lw_mem_type(w, r->d), r->in, &at, 1, "");
    LLVMTypeRef mask_t = LLVMVectorType(w->t_i32, (unsigned)VF);
    LLVMValueRef acc[POOL_V], nan[POOL_V];
    for (int v = 0; v < r->V; v++) {
        acc[v] = LLVMBuildLoad2(B, r->vt, r->acc[v], "");
        if (r->is_max)
            nan[v] = LLVMBuildLoad2(B, mask_t, r->nan[v], "");
    }
    for (int64_t kw = 0; kw < g->kernel[1]; kw++) {
        for (int v = 0; v < r->V; v++) {
            LLVMValueRef col = lw_mad(w, LLVMBuildNSWAdd(B, r->ox0, lw_i64(w, (int64_t)v * VF), ""),
                                      g->stride[1], lw_i64(w, kw * g->dilation[1] - g->pad[1]));
            LLVMValueRef xs = inside ? lw_row_load_inside(w, in_row, r->d, col, g->stride[1], VF)
                                     : lw_row_load(w, in_row, r->d, col, g->stride[1], g->w, VF,
                                                   r->is_max ? -INFINITY : -0.0);
            if (r->is_max) {
                acc[v] = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGT, xs, acc[v], ""), xs,
                                         acc[v], "");
                nan[v] = LLVMBuildOr(B, nan[v],
                                     LLVMBuildSExt(B, LLVMBuildFCmp(B, LLVMRealUNO, xs, xs, ""),
                                                   mask_t, ""), "");
            } else {
                acc[v] = LLVMBuildFAdd(B, acc[v], LLVMBuildFPExt(B, xs, r->vt, ""), "");
            }
        }
    }
    for (int v = 0; v < r->V; v++) {
        LLVMBuildStore(B, acc[v], r->acc[v]);
        if (r->is_max)
            LLVMBuildStore(B, nan[v], r->nan[v]);
    }
    lw_if_end(w, &row);
    lkh.no_unroll = true;
    lw_for_end(w, &lkh);
}

/* The averages of VF outputs from ox: their sums (doubles) over their cell counts, 0 where
 * the window holds no cell, rounded to float32; the lane loop below computes each the
 * same way. A whole segment's averages go out as vectors: the lane loop, vectorized with
 * masked loads and stores, had made inception_v3's 3x3 average pools 4-5x slower than
 * ONNX Runtime's on Zen 2. */
static LLVMValueRef average_vector(lw *w, const pool_rows *r, LLVMValueRef ox, LLVMValueRef sums)
{
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    LLVMTypeRef vd = LLVMVectorType(w->t_f64, (unsigned)VF);
    LLVMTypeRef vi = LLVMVectorType(w->t_i32, (unsigned)VF);
    LLVMValueRef rows = LLVMBuildSIToFP(B, i64_at(w, r->ny, r->oy, w->t_i32), w->t_f64, "");
    LLVMValueRef cols = LLVMBuildLoad2(B, vi, LLVMBuildInBoundsGEP2(B, w->t_i32, r->nx, &ox, 1, ""), "");
    LLVMSetAlignment(cols, 4);
    LLVMValueRef cells = LLVMBuildFMul(B, lw_splat(w, rows, VF), LLVMBuildSIToFP(B, cols, vd, ""), "");
    LLVMValueRef avg = LLVMBuildFDiv(B, sums, cells, "");
    LLVMValueRef some = LLVMBuildFCmp(B, LLVMRealOGT, cells, LLVMConstNull(vd), "");
    return LLVMBuildFPTrunc(B, LLVMBuildSelect(B, some, avg, LLVMConstNull(vd), ""), w->t_vf, "");
}

/* One segment of a row's outputs from ox0 (lw_segment_fn). */
static byocl_status pool_rows_segment(lw *w, void *ctx, LLVMValueRef ox0)
{
    pool_rows *r = ctx;
    const pool_geom *g = r->g;
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    bool is_max = r->is_max;
    LLVMTypeRef mask_t = LLVMVectorType(w->t_i32, (unsigned)VF);
    r->ox0 = ox0;
    LLVMValueRef init = is_max ? lw_splat(w, LLVMConstReal(w->t_f32, -INFINITY), VF)
                               : LLVMConstNull(r->vt);
    for (int v = 0; v < r->V; v++) {
        LLVMBuildStore(B, init, r->acc[v]);
        if (is_max)
            LLVMBuildStore(B, LLVMConstNull(mask_t), r->nan[v]);
    }
    lw_row_taps(w, lw_row_span_inside(w, ox0, r->seg, g->stride[1], g->kernel[1], g->dilation[1],
                                      g->pad[1], g->w),
                pool_rows_taps, r);
    LLVMValueRef result[POOL_V];
    for (int v = 0; v < r->V; v++) {
        result[v] = LLVMBuildLoad2(B, r->vt, r->acc[v], "");
        if (is_max) {
            LLVMValueRef nan = LLVMBuildLoad2(B, mask_t, r->nan[v], "");
            LLVMValueRef seen = LLVMBuildICmp(B, LLVMIntNE, nan, LLVMConstNull(mask_t), "");
            result[v] = LLVMBuildSelect(B, seen, lw_splat(w, LLVMConstReal(w->t_f32, NAN), VF),
                                        result[v], "");
        }
        result[v] = lw_row_in_order(w, result[v], g->stride[1]);
    }
    LLVMValueRef end = LLVMBuildSub(B, lw_i64(w, g->ow), ox0, "");
    LLVMValueRef full = LLVMBuildICmp(B, LLVMIntSGE, end, lw_i64(w, r->seg), "");
    if (r->d == BYOCL_FLOAT32) {
        lw_if whole;
        lw_if_begin(w, &whole, full, "whole");
        for (int v = 0; v < r->V; v++) {
            LLVMValueRef ox = LLVMBuildNSWAdd(B, ox0, lw_i64(w, (int64_t)v * VF), "");
            LLVMValueRef out = is_max ? result[v] : average_vector(w, r, ox, result[v]);
            lw_vstore(w, r->out, LLVMBuildNSWAdd(B, r->out_row, ox, ""), out, 4);
        }
        lw_if_end(w, &whole);
        end = LLVMBuildSelect(B, full, lw_i64(w, 0), end, ""); /* stored: no lanes left */
    }
    for (int v = 0; v < r->V; v++) {
        LLVMValueRef idx = lw_i64(w, (int64_t)v * VF);
        LLVMValueRef ptr = LLVMBuildInBoundsGEP2(B, is_max ? w->t_f32 : w->t_f64, r->tile, &idx, 1, "");
        LLVMSetAlignment(LLVMBuildStore(B, result[v], ptr), (unsigned)(is_max ? 4 : 8));
    }
    end = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, end, lw_i64(w, r->seg), ""), end,
                          lw_i64(w, r->seg), "");
    lw_loop le;
    LLVMValueRef i = lw_for(w, &le, lw_i64(w, 0), end, 1, "i");
    LLVMValueRef ox = LLVMBuildNSWAdd(B, ox0, i, "ox");
    LLVMValueRef v;
    if (is_max) {
        v = lw_round(w, lw_load(w, r->tile, BYOCL_FLOAT32, i), r->d);
    } else {
        LLVMValueRef cells = LLVMBuildNSWMul(B, i64_at(w, r->ny, r->oy, w->t_i32),
                                             i64_at(w, r->nx, ox, w->t_i32), "");
        LLVMValueRef avg = LLVMBuildFDiv(B, dload(w, r->tile, i), LLVMBuildSIToFP(B, cells, w->t_f64, ""), "");
        v = lw_from_double(w, LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, cells, lw_i64(w, 0), ""),
                                              avg, dconst(w, 0.0), ""),
                           r->d);
    }
    lw_store(w, r->out, r->d, LLVMBuildNSWAdd(B, r->out_row, ox, ""), v);
    le.no_unroll = !LLVMIsConstant(end); /* a peeled segment's few lanes: unrolled, their masks fold */
    lw_for_end(w, &le);
    return w->status;
}

static byocl_status lower_pool_rows(lw *w, int node, const pool_geom *g, bool is_max,
                                    LLVMValueRef ny, LLVMValueRef nx)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    pool_rows r = {.g = g, .d = n->type->dtype, .is_max = is_max, .V = POOL_V, .ny = ny, .nx = nx};
    r.seg = (int64_t)r.V * VF;
    if (g->ow < r.seg)
        r.V = (int)((g->ow + VF - 1) / VF), r.seg = (int64_t)r.V * VF;
    int64_t planes = g->batch * g->channels;
    r.in = lw_value_ptr(w, in_v);
    r.out = lw_output(w, out_v);
    r.vt = is_max ? w->t_vf : LLVMVectorType(w->t_f64, (unsigned)VF);
    for (int v = 0; v < r.V; v++) {
        r.acc[v] = lw_alloca(w, r.vt, "acc");
        if (is_max)
            r.nan[v] = lw_alloca(w, LLVMVectorType(w->t_i32, (unsigned)VF), "nan");
    }
    r.tile = lw_alloca_array(w, is_max ? w->t_f32 : w->t_f64, r.seg, 64, "tile");

    LLVMValueRef lo, hi;
    lw_task_range_ctx(w, planes, &lo, &hi);
    lw_loop lp, ly;
    LLVMValueRef p = lw_for(w, &lp, lo, hi, 1, "plane");
    r.in_plane = lw_mad(w, p, g->h * g->w, NULL);
    r.oy = lw_for(w, &ly, lw_i64(w, 0), lw_i64(w, g->oh), 1, "oy");
    r.out_row = lw_mad(w, LLVMBuildNSWAdd(B, lw_mad(w, p, g->oh, NULL), r.oy, ""), g->ow, NULL);
    byocl_status st = lw_row_segments(w, g->ow, r.seg, pool_rows_segment, &r);
    ly.no_unroll = true;
    lw_for_end(w, &ly);
    lw_for_end(w, &lp);
    return st;
}

static byocl_status lower_window_pool(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    bool is_max = strcmp(n->op->name, "nn.max_pool2d") == 0;
    bool include_pad = !is_max && byocl_attrs_get_bool(&n->attrs, "count_include_pad", false);
    pool_geom g;
    pool_geometry(w, node, &g);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    byocl_dtype d = n->type->dtype, din = lw_value_type(w, in_v)->dtype;
    int64_t planes = g.batch * g.channels;
    if (planes * g.oh * g.ow == 0)
        return w->status;
    w->n_tasks = lw_pick_tasks(w, planes * g.oh * g.ow * g.kernel[0] * g.kernel[1], 65536,
                               planes < 64 ? planes : 64);
    /* Averages: cells per output along each axis. */
    LLVMValueRef ny = NULL, nx = NULL, sums = NULL;
    if (!is_max) {
        int32_t *cy = cell_counts(g.oh, g.h, g.kernel[0], g.stride[0], g.dilation[0], g.pad[0],
                                  g.pad[2], include_pad);
        int32_t *cx = cell_counts(g.ow, g.w, g.kernel[1], g.stride[1], g.dilation[1], g.pad[1],
                                  g.pad[3], include_pad);
        if (!cy || !cx) {
            free(cy);
            free(cx);
            return lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_NOMEM, "out of memory"));
        }
        ny = lw_const_ptr(w, cy, NULL, cy);
        nx = lw_const_ptr(w, cx, NULL, cx);
    }
    if (pool_in_registers(&g, d))
        return lower_pool_rows(w, node, &g, is_max, ny, nx);

    /* Outputs each column tap covers: [lox[kw], hix[kw]). */
    int64_t *lox = malloc((size_t)g.kernel[1] * sizeof *lox);
    int64_t *hix = malloc((size_t)g.kernel[1] * sizeof *hix);
    if (!lox || !hix) {
        free(lox);
        free(hix);
        return lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_NOMEM, "out of memory"));
    }
    for (int64_t kw = 0; kw < g.kernel[1]; kw++)
        valid_range(g.ow, g.w, g.stride[1], kw * g.dilation[1] - g.pad[1], &lox[kw], &hix[kw]);
    LLVMValueRef lo_p = owned_i64s(w, lox, (int)g.kernel[1]);
    LLVMValueRef hi_p = owned_i64s(w, hix, (int)g.kernel[1]);
    free(lox);
    free(hix);
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    LLVMBuilderRef B = w->B;
    if (!is_max)
        sums = scratch(w, g.ow * 8);

    LLVMValueRef lo, hi;
    lw_task_range_ctx(w, planes, &lo, &hi);
    lw_loop lp, ly, lx, lkh, lkw, lo_x, lf;
    LLVMValueRef p = lw_for(w, &lp, lo, hi, 1, "plane");
    LLVMValueRef in_plane = lw_mad(w, p, g.h * g.w, NULL);
    LLVMValueRef oy = lw_for(w, &ly, lw_i64(w, 0), lw_i64(w, g.oh), 1, "oy");
    LLVMValueRef out_row =
        lw_mad(w, LLVMBuildNSWAdd(B, lw_mad(w, p, g.oh, NULL), oy, ""), g.ow, NULL);
    /* Start the row: lowest values (max) or zero sums (average). */
    LLVMValueRef ox = lw_for(w, &lx, lw_i64(w, 0), lw_i64(w, g.ow), 1, "ox");
    if (is_max)
        lw_store(w, out, d, LLVMBuildNSWAdd(B, out_row, ox, ""), lowest(w, d));
    else
        dstore(w, sums, ox, dconst(w, 0.0));
    lw_for_end(w, &lx);
    /* Taps in (kh, kw) order, each over the outputs it covers. */
    LLVMValueRef kh = lw_for(w, &lkh, lw_i64(w, 0), lw_i64(w, g.kernel[0]), 1, "kh");
    LLVMValueRef iy = LLVMBuildNSWAdd(B, lw_mad(w, oy, g.stride[0], NULL),
                                      lw_mad(w, kh, g.dilation[0], lw_i64(w, -g.pad[0])), "iy");
    LLVMValueRef row_ok = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntSGE, iy, lw_i64(w, 0), ""),
                                       LLVMBuildICmp(B, LLVMIntSLT, iy, lw_i64(w, g.h), ""), "");
    lw_if in_row;
    lw_if_begin(w, &in_row, row_ok, "row");
    LLVMValueRef in_row_at = lw_mad(w, iy, g.w, in_plane);
    LLVMValueRef kw = lw_for(w, &lkw, lw_i64(w, 0), lw_i64(w, g.kernel[1]), 1, "kw");
    LLVMValueRef x0 = i64_at(w, lo_p, kw, w->t_i64), x1 = i64_at(w, hi_p, kw, w->t_i64);
    LLVMValueRef col0 = lw_mad(w, kw, g.dilation[1], lw_i64(w, -g.pad[1]));
    ox = lw_for(w, &lo_x, x0, x1, 1, "ox");
    LLVMValueRef ix = LLVMBuildNSWAdd(B, lw_mad(w, ox, g.stride[1], NULL), col0, "ix");
    LLVMValueRef v = lw_load(w, in, din, LLVMBuildNSWAdd(B, in_row_at, ix, ""));
    if (is_max) {
        LLVMValueRef at = LLVMBuildNSWAdd(B, out_row, ox, "");
        lw_store(w, out, d, at, running_max(w, d, lw_load(w, out, d, at), v));
    } else {
        dstore(w, sums, ox, LLVMBuildFAdd(B, dload(w, sums, ox), lw_to_double(w, v, din), ""));
    }
    lw_for_end(w, &lo_x);
    lw_for_end(w, &lkw);
    lw_if_end(w, &in_row);
    lw_for_end(w, &lkh);
    if (!is_max) { /* the averages: sum / cells, 0 for a window over no cell */
        LLVMValueRef rows = i64_at(w, ny, oy, w->t_i32);
        ox = lw_for(w, &lf, lw_i64(w, 0), lw_i64(w, g.ow), 1, "ox");
        LLVMValueRef cells = LLVMBuildNSWMul(B, rows, i64_at(w, nx, ox, w->t_i32), "");
        LLVMValueRef avg = LLVMBuildFDiv(B, dload(w, sums, ox),
                                         LLVMBuildSIToFP(B, cells, w->t_f64, ""), "");
        avg = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, cells, lw_i64(w, 0), ""), avg,
                              dconst(w, 0.0), "");
        lw_store(w, out, d, LLVMBuildNSWAdd(B, out_row, ox, ""), lw_from_double(w, avg, d));
        lw_for_end(w, &lf);
    }
    lw_for_end(w, &ly);
    lw_for_end(w, &lp);
    if (!is_max)
        scratch_free(w, sums);
    return w->status;
}

/* nn.max_pool3d and nn.avg_pool3d (NCDHW): a loop nest per output cell over the window's
 * taps in (kd, kh, kw) order, taps outside the input skipped; averages add in double in
 * the reference's order and divide by the product of the per-axis cell counts. Correctness
 * first: no row vectorization as the 2-D pools have. */
static byocl_status lower_pool3d(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    bool is_max = strcmp(n->op->name, "nn.max_pool3d") == 0;
    bool include_pad = !is_max && byocl_attrs_get_bool(&n->attrs, "count_include_pad", false);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    const byocl_shape *is = &lw_value_type(w, in_v)->shape, *os = &n->type->shape;
    byocl_dtype d = n->type->dtype, din = lw_value_type(w, in_v)->dtype;
    int64_t k[3], st[3], dl[3], pad[6], in[3], out[3];
    ints_attr(n, "pool_size", k, 3, 1);
    ints_attr(n, "strides", st, 3, 1);
    ints_attr(n, "dilation", dl, 3, 1);
    ints_attr(n, "padding", pad, 6, 0); /* check_attrs stored all six */
    for (int a = 0; a < 3; a++) {
        in[a] = is->dims[a + 2];
        out[a] = os->dims[a + 2];
    }
    int64_t planes = is->dims[0] * is->dims[1], cells = out[0] * out[1] * out[2];
    if (planes * cells == 0)
        return w->status;
    w->n_tasks = lw_pick_tasks(w, planes * cells * k[0] * k[1] * k[2], 65536,
                               planes < 64 ? planes : 64);
    LLVMValueRef counts[3] = {NULL, NULL, NULL};
    for (int a = 0; a < 3 && !is_max; a++) {
        int32_t *c = cell_counts(out[a], in[a], k[a], st[a], dl[a], pad[a], pad[a + 3],
                                 include_pad);
        if (!c)
            return lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_NOMEM, "out of memory"));
        counts[a] = lw_const_ptr(w, c, NULL, c);
    }
    LLVMBuilderRef B = w->B;
    LLVMValueRef src = lw_value_ptr(w, in_v), dst = lw_output(w, out_v);
    LLVMValueRef init = is_max ? lowest(w, d) : dconst(w, 0.0);
    LLVMValueRef acc = lw_alloca(w, LLVMTypeOf(init), "acc");
    LLVMValueRef lo, hi;
    lw_task_range_ctx(w, planes, &lo, &hi);
    lw_loop lp, lo_[3], lk[3];
    static const char *const o_name[3] = {"oz", "oy", "ox"}, *const k_name[3] = {"kd", "kh", "kw"};
    LLVMValueRef p = lw_for(w, &lp, lo, hi, 1, "plane");
    LLVMValueRef o[3], i[3];
    for (int a = 0; a < 3; a++)
        o[a] = lw_for(w, &lo_[a], lw_i64(w, 0), lw_i64(w, out[a]), 1, o_name[a]);
    LLVMBuildStore(B, init, acc);
    LLVMValueRef ok = NULL;
    for (int a = 0; a < 3; a++) {
        LLVMValueRef ka = lw_for(w, &lk[a], lw_i64(w, 0), lw_i64(w, k[a]), 1, k_name[a]);
        i[a] = LLVMBuildNSWAdd(B, lw_mad(w, o[a], st[a], NULL),
                               lw_mad(w, ka, dl[a], lw_i64(w, -pad[a])), "");
        LLVMValueRef in_a = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntSGE, i[a], lw_i64(w, 0), ""),
                                         LLVMBuildICmp(B, LLVMIntSLT, i[a], lw_i64(w, in[a]), ""), "");
        ok = ok ? LLVMBuildAnd(B, ok, in_a, "") : in_a;
    }
    lw_if tap;
    lw_if_begin(w, &tap, ok, "tap");
    LLVMValueRef at = lw_mad(w, lw_mad(w, lw_mad(w, p, in[0], i[0]), in[1], i[1]), in[2], i[2]);
    LLVMValueRef v = lw_load(w, src, din, at), best = LLVMBuildLoad2(B, LLVMTypeOf(init), acc, "");
    LLVMBuildStore(B, is_max ? running_max(w, d, best, v)
                             : LLVMBuildFAdd(B, best, lw_to_double(w, v, din), ""),
                   acc);
    lw_if_end(w, &tap);
    for (int a = 2; a >= 0; a--)
        lw_for_end(w, &lk[a]);
    LLVMValueRef r = LLVMBuildLoad2(B, LLVMTypeOf(init), acc, "");
    if (!is_max) { /* sum / cells, 0 for a window over no cell */
        LLVMValueRef c = NULL;
        for (int a = 0; a < 3; a++) {
            LLVMValueRef ca = i64_at(w, counts[a], o[a], w->t_i32);
            c = c ? LLVMBuildNSWMul(B, c, ca, "") : ca;
        }
        LLVMValueRef avg = LLVMBuildFDiv(B, r, LLVMBuildSIToFP(B, c, w->t_f64, ""), "");
        r = lw_from_double(w, LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, c, lw_i64(w, 0), ""),
                                              avg, dconst(w, 0.0), ""),
                           d);
    }
    LLVMValueRef out_at = lw_mad(w, lw_mad(w, lw_mad(w, p, out[0], o[0]), out[1], o[1]), out[2], o[2]);
    lw_store(w, dst, d, out_at, r);
    for (int a = 2; a >= 0; a--)
        lw_for_end(w, &lo_[a]);
    lw_for_end(w, &lp);
    return w->status;
}

/* ------------------------------------------------------------ reductions */

/* An axis view of a shape: outer blocks of len slices of inner elements. */
static void axis_view(const byocl_shape *s, int axis, int64_t *outer, int64_t *len,
                      int64_t *inner)
{
    *outer = *inner = 1;
    for (int d = 0; d < axis; d++)
        *outer *= s->dims[d];
    for (int d = axis + 1; d < s->rank; d++)
        *inner *= s->dims[d];
    *len = s->dims[axis];
}

/* The running value of a reduction: double for floats, int64 for integers (bools too);
 * `at` is the position of the best element for argmax/argmin (NULL for the others).
 * `keyed`: uint64 max/min/argmax/argmin compare its values with the top bit flipped, so
 * that the signed compares order them unsigned (the reference's elemwise_order_key); acc
 * holds that key. variance reads its mean argument at mbase + the reduced dims' mstrides
 * (0 where the mean broadcasts); mean is NULL for the other kinds. */
typedef struct reduce_state {
    ops_reduce_kind kind;
    bool last, is_float, keyed;
    LLVMValueRef acc, at;
    LLVMValueRef mean, mbase;
    byocl_dtype mdtype;
    const int64_t *mstrides;
} reduce_state;

/* Folds element x (double or int64) at position pos into the state, as the reference's
 * reduce_step does: sums and products in order; max/min/argmax/argmin take a greater
 * (smaller) x or a NaN unless the best is NaN already (unordered compares), an equal one
 * too with select_last_index. */
static void reduce_fold(lw *w, const reduce_state *r, LLVMValueRef x, LLVMValueRef pos,
                        LLVMValueRef m)
{
    LLVMBuilderRef B = w->B;
    LLVMTypeRef t = r->is_float ? w->t_f64 : w->t_i64;
    LLVMValueRef cur = LLVMBuildLoad2(B, t, r->acc, ""), next;
    if (r->kind == OPS_REDUCE_VARIANCE) { /* cur + (x - m)^2, in double */
        LLVMValueRef diff = LLVMBuildFSub(B, x, m, "");
        next = LLVMBuildFAdd(B, cur, LLVMBuildFMul(B, diff, diff, ""), "");
    } else if (r->kind == OPS_REDUCE_ALL || r->kind == OPS_REDUCE_ANY) {
        LLVMValueRef bit = LLVMBuildZExt(
            B, LLVMBuildICmp(B, LLVMIntNE, x, lw_i64(w, 0), ""), w->t_i64, "");
        next = r->kind == OPS_REDUCE_ALL ? LLVMBuildAnd(B, cur, bit, "")
                                         : LLVMBuildOr(B, cur, bit, "");
    } else if (r->kind == OPS_REDUCE_SUM || r->kind == OPS_REDUCE_MEAN)
        next = r->is_float ? LLVMBuildFAdd(B, cur, x, "") : LLVMBuildAdd(B, cur, x, "");
    else if (r->kind == OPS_REDUCE_PROD)
        next = r->is_float ? LLVMBuildFMul(B, cur, x, "") : LLVMBuildMul(B, cur, x, "");
    else {
        bool up = r->kind == OPS_REDUCE_MAX || r->kind == OPS_REDUCE_ARGMAX;
        LLVMValueRef take;
        if (r->is_float) {
            LLVMRealPredicate p = up ? (r->last ? LLVMRealUGE : LLVMRealUGT)
                                     : (r->last ? LLVMRealULE : LLVMRealULT);
            take = LLVMBuildAnd(B, LLVMBuildFCmp(B, p, x, cur, ""),
                                LLVMBuildFCmp(B, LLVMRealORD, cur, cur, ""), "take");
        } else {
            LLVMIntPredicate p = up ? (r->last ? LLVMIntSGE : LLVMIntSGT)
                                    : (r->last ? LLVMIntSLE : LLVMIntSLT);
            take = LLVMBuildICmp(B, p, x, cur, "take");
        }
        next = LLVMBuildSelect(B, take, x, cur, "");
        if (r->at) {
            LLVMValueRef at = LLVMBuildLoad2(B, w->t_i64, r->at, "");
            LLVMBuildStore(B, LLVMBuildSelect(B, take, pos, at, ""), r->at);
        }
    }
    LLVMBuildStore(B, next, r->acc);
}

/* Reduces the elements of `in` at base + the offsets of the reduced dims, visited in C
 * order, into r (whose acc and at start at the kind's identity); pstrides give each
 * reduced dim's step of the position. */
static void reduce_loop(lw *w, const reduce_state *r, LLVMValueRef in, byocl_dtype din,
                        LLVMValueRef base, const int64_t *dims, const int64_t *strides,
                        const int64_t *pstrides, int n)
{
    lw_loop loops[BYOCL_MAX_RANK];
    LLVMValueRef off = base, pos = lw_i64(w, 0), moff = r->mbase, m = NULL;
    for (int k = 0; k < n; k++) {
        LLVMValueRef i = lw_for(w, &loops[k], lw_i64(w, 0), lw_i64(w, dims[k]), 1, "r");
        off = lw_mad(w, i, strides[k], off);
        if (pstrides)
            pos = lw_mad(w, i, pstrides[k], pos);
        if (r->mean)
            moff = lw_mad(w, i, r->mstrides[k], moff);
    }
    LLVMValueRef v = lw_load(w, in, din, off);
    if (r->mean)
        m = lw_to_double(w, lw_load(w, r->mean, r->mdtype, moff), r->mdtype);
    v = r->is_float ? lw_to_double(w, v, din) : lw_convert(w, v, din, BYOCL_INT64);
    if (r->keyed)
        v = LLVMBuildXor(w->B, v, lw_i64(w, INT64_MIN), "");
    reduce_fold(w, r, v, pos, m);
    for (int k = n - 1; k >= 0; k--)
        lw_for_end(w, &loops[k]);
}

/* A fresh state of `kind` at its identity (as the reference's reduce_init). */
static reduce_state reduce_begin(lw *w, ops_reduce_kind kind, bool last, byocl_dtype din)
{
    reduce_state r = {.kind = kind, .last = last, .is_float = lw_is_float(din)};
    bool low = kind == OPS_REDUCE_MAX || kind == OPS_REDUCE_ARGMAX;
    bool high = kind == OPS_REDUCE_MIN || kind == OPS_REDUCE_ARGMIN;
    r.keyed = din == BYOCL_UINT64 && (low || high);
    r.acc = lw_alloca(w, r.is_float ? w->t_f64 : w->t_i64, "acc");
    if (r.is_float)
        LLVMBuildStore(w->B, dconst(w, low    ? -INFINITY
                                       : high ? INFINITY
                                              : kind == OPS_REDUCE_PROD ? 1.0 : 0.0),
                       r.acc);
    else
        LLVMBuildStore(w->B, lw_i64(w, low    ? INT64_MIN
                                       : high ? INT64_MAX
                                              : kind == OPS_REDUCE_PROD || kind == OPS_REDUCE_ALL
                                                    ? 1
                                                    : 0),
                       r.acc);
    if (kind == OPS_REDUCE_ARGMAX || kind == OPS_REDUCE_ARGMIN) {
        r.at = lw_alloca(w, w->t_i64, "at");
        LLVMBuildStore(w->B, lw_i64(w, 0), r.at);
    }
    return r;
}

/* The sum (double for floats, wrapping int64 for integers) of the elements of `in` at
 * base + the offsets of the reduced dims, visited in C order. */
static LLVMValueRef reduce_sum(lw *w, LLVMValueRef in, byocl_dtype din, LLVMValueRef base,
                               const int64_t *dims, const int64_t *strides, int n)
{
    reduce_state r = reduce_begin(w, OPS_REDUCE_SUM, false, din);
    reduce_loop(w, &r, in, din, base, dims, strides, NULL, n);
    return LLVMBuildLoad2(w->B, r.is_float ? w->t_f64 : w->t_i64, r.acc, "sum");
}

/* sum, mean, prod, max, min, argmax, argmin, all, any, variance: one loop nest over the
 * kept dims (the first split between tasks) around one over the reduced dims. */
byocl_status lower_reduce(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    ops_reduce_kind kind = ops_reduce_kind_of(n->op->name);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    const byocl_type *it = lw_value_type(w, in_v);
    const byocl_shape *is = &it->shape;
    int rank = is->rank;
    bool reduced[BYOCL_MAX_RANK];
    byocl_status st = ops_reduce_axes(&n->attrs, rank, reduced, w->err);
    if (st != BYOCL_OK) /* the type relation accepted these attributes */
        return lw_failed(w, st);
    /* variance's mean: its strides along the data's dims, 0 where it broadcasts. */
    bool variance = kind == OPS_REDUCE_VARIANCE;
    byocl_value_ref mean_v = variance ? lv_resolve(w->fn, n->args[1], -1) : in_v;
    const byocl_shape *ms = &lw_value_type(w, mean_v)->shape;
    int64_t stride[BYOCL_MAX_RANK], mstride[BYOCL_MAX_RANK], s = 1, m = 1, count = 1;
    for (int d = rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= is->dims[d];
        mstride[d] = ms->dims[d] == 1 ? 0 : m;
        m *= ms->dims[d];
    }
    int64_t kdims[BYOCL_MAX_RANK], kstr[BYOCL_MAX_RANK], rdims[BYOCL_MAX_RANK], rstr[BYOCL_MAX_RANK];
    int64_t pstr[BYOCL_MAX_RANK], kmstr[BYOCL_MAX_RANK], rmstr[BYOCL_MAX_RANK];
    int nk = 0, nr = 0;
    for (int d = 0; d < rank; d++) {
        if (reduced[d]) {
            rdims[nr] = is->dims[d];
            rmstr[nr] = mstride[d];
            rstr[nr++] = stride[d];
            count *= is->dims[d];
        } else {
            kdims[nk] = is->dims[d];
            kmstr[nk] = mstride[d];
            kstr[nk++] = stride[d];
        }
    }
    for (int k = nr - 1, p = 1; k >= 0; p *= (int)rdims[k], k--)
        pstr[k] = p;
    int64_t n_out = byocl_shape_numel(&n->type->shape);
    if (n_out == 0)
        return w->status;
    byocl_dtype din = it->dtype, d = n->type->dtype;
    bool empty_fails =
        ops_reduce_needs_element(kind) || (kind == OPS_REDUCE_MEAN && !lw_is_float(din));
    if (count == 0 && empty_fails) { /* the reference fails the same way */
        int code = kind == OPS_REDUCE_MEAN ? KERR_EMPTY_MEAN : KERR_EMPTY_REDUCE;
        LLVMBuildStore(w->B, lw_i32(w, code), w->fail_code);
        LLVMBuildBr(w->B, w->fail);
        LLVMPositionBuilderAtEnd(w->B, LLVMAppendBasicBlockInContext(w->C, w->body, "dead"));
        return w->status;
    }
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    w->n_tasks = lw_pick_tasks(w, n_out * (count > 0 ? count : 1), 65536,
                               nk > 0 && kdims[0] < 64 ? kdims[0] : 64);
    if (nk == 0)
        w->n_tasks = 1;
    lw_loop loops[BYOCL_MAX_RANK];
    LLVMValueRef base = lw_i64(w, 0), flat = lw_i64(w, 0), mbase = lw_i64(w, 0);
    for (int k = 0; k < nk; k++) {
        LLVMValueRef lo = lw_i64(w, 0), hi = lw_i64(w, kdims[k]);
        if (k == 0)
            lw_task_range(w, kdims[0], &lo, &hi);
        LLVMValueRef i = lw_for(w, &loops[k], lo, hi, 1, "o");
        base = lw_mad(w, i, kstr[k], base);
        flat = lw_mad(w, flat, kdims[k], i);
        mbase = lw_mad(w, i, kmstr[k], mbase);
    }
    bool last = byocl_attrs_get_bool(&n->attrs, "select_last_index", false);
    reduce_state r = reduce_begin(w, kind, last, din);
    if (variance) {
        r.mean = lw_value_ptr(w, mean_v);
        r.mdtype = lw_value_type(w, mean_v)->dtype;
        r.mbase = mbase;
        r.mstrides = rmstr;
    }
    reduce_loop(w, &r, in, din, base, rdims, rstr, pstr, nr);
    LLVMValueRef acc = LLVMBuildLoad2(w->B, r.is_float ? w->t_f64 : w->t_i64, r.acc, ""), v;
    if (kind == OPS_REDUCE_MEAN)
        acc = r.is_float           ? LLVMBuildFDiv(w->B, acc, dconst(w, (double)count), "")
              : lw_is_unsigned(din) ? LLVMBuildUDiv(w->B, acc, lw_i64(w, count), "")
                                    : LLVMBuildSDiv(w->B, acc, lw_i64(w, count), "");
    else if (variance) /* as the reference: count - 1 with unbiased */
        acc = LLVMBuildFDiv(
            w->B, acc,
            dconst(w, (double)(count - byocl_attrs_get_bool(&n->attrs, "unbiased", false))), "");
    if (r.keyed)
        acc = LLVMBuildXor(w->B, acc, lw_i64(w, INT64_MIN), "");
    if (r.at)
        v = lw_convert(w, LLVMBuildLoad2(w->B, w->t_i64, r.at, ""), BYOCL_INT64, d);
    else
        v = r.is_float ? lw_from_double(w, acc, d) : lw_convert(w, acc, BYOCL_INT64, d);
    lw_store(w, out, d, flat, v);
    for (int k = nk - 1; k >= 0; k--)
        lw_for_end(w, &loops[k]);
    return w->status;
}

/* ------------------------------------------------------------ global pool */

/* Float planes of this many elements or more are summed in double with the additions
 * reordered (into vectors of partial sums, which the loop vectorizer makes); smaller
 * planes, and integers, in the reference's order. The reference's order is one chain of
 * double adds per plane, four cycles an add: the side-by-side sums of eight planes that
 * broke it up ran efficientnet_b0's global pools (its squeeze-and-excitation blocks, 17
 * of them) in 0.64-0.70 ms a run with two threads on an Intel Xeon, against ONNX
 * Runtime's 0.20, and its 32 x 112 x 112 one at 0.8 elements a cycle. Reordered, a sum
 * of n floats in double differs from the reference's by at most about n * 2^-53 of the
 * sum of their magnitudes, far below float32's rounding: the mean is the reference's or
 * one of its float neighbours (test_global_pool_planes holds it to a relative L2 error
 * of 1e-7). Smaller planes keep the order: LLVM unrolls their sums and vectorizes across
 * four planes itself. */
#define GLOBAL_POOL_REORDERED 128

static void store_plane_mean(lw *w, const byocl_node *n, LLVMValueRef out, LLVMValueRef plane,
                             LLVMValueRef sum, int64_t hw)
{
    LLVMValueRef avg = LLVMBuildFDiv(w->B, sum, dconst(w, (double)hw), "");
    avg = LLVMBuildSelect(w->B, LLVMConstInt(w->t_i1, hw > 0, 0), avg, dconst(w, 0.0), "");
    lw_store(w, out, n->type->dtype, plane, lw_from_double(w, avg, n->type->dtype));
}

/* nn.global_avg_pool2d: one double sum per plane (reordered for large float planes). */
static byocl_status lower_global_pool(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    const byocl_type *it = lw_value_type(w, in_v);
    int64_t planes = it->shape.dims[0] * it->shape.dims[1];
    int64_t hw = it->shape.dims[2] * it->shape.dims[3];
    if (planes == 0)
        return w->status;
    /* A grain of 2^14: each thread then sums the planes that the conv before it wrote on
     * its core (mobilenet_v2's pool of 1280 7x7 planes, two threads: 0.030 ms in one task,
     * 0.016 in two). */
    w->n_tasks = lw_pick_tasks(w, planes * hw, 1 << 14, planes < 64 ? planes : 64);
    LLVMBuilderRef B = w->B;
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    LLVMValueRef lo, hi;
    lw_task_range_ctx(w, planes, &lo, &hi);
    lw_loop lp;
    LLVMValueRef p = lw_for(w, &lp, lo, hi, 1, "plane");
    LLVMValueRef sum;
    if (lw_is_float(it->dtype) && hw >= GLOBAL_POOL_REORDERED) {
        LLVMValueRef acc = lw_alloca(w, w->t_f64, "acc");
        LLVMBuildStore(B, dconst(w, 0.0), acc);
        lw_loop li;
        LLVMValueRef i = lw_for(w, &li, lw_i64(w, 0), lw_i64(w, hw), 1, "i");
        LLVMValueRef x = lw_load(w, in, it->dtype, lw_mad(w, p, hw, i));
        LLVMValueRef added = LLVMBuildFAdd(B, LLVMBuildLoad2(B, w->t_f64, acc, ""),
                                           lw_to_double(w, x, it->dtype), "");
        LLVMSetFastMathFlags(added, LLVMFastMathAllowReassoc);
        LLVMBuildStore(B, added, acc);
        lw_for_end(w, &li);
        sum = LLVMBuildLoad2(B, w->t_f64, acc, "sum");
    } else {
        int64_t one = 1;
        sum = reduce_sum(w, in, it->dtype, lw_mad(w, p, hw, NULL), &hw, &one, 1);
        if (!lw_is_float(it->dtype)) /* integers: the reference divides in double too */
            sum = LLVMBuildSIToFP(B, sum, w->t_f64, "");
    }
    store_plane_mean(w, n, out, p, sum, hw);
    lp.no_unroll = true;
    lw_for_end(w, &lp);
    return w->status;
}

/* ------------------------------------------------------------ softmax */

/* The slices of a softmax-like op (softmax, log_softmax, layer_norm) along its axis: a
 * loop over the outer blocks (split over tasks) and the inner positions, with `first`
 * the index of each slice's element 0 (its elements are `inner` apart). */
typedef struct slice_loop {
    int64_t outer, len, inner;
    lw_loop lo, lk;
    LLVMValueRef first;
} slice_loop;

/* Opens the loops over the slices of `in_v` along the node's axis; false (nothing to do)
 * for an empty tensor. */
static bool slice_loop_begin(lw *w, const byocl_node *n, byocl_value_ref in_v, slice_loop *s)
{
    const byocl_type *it = lw_value_type(w, in_v);
    int rank = it->shape.rank;
    int64_t axis = byocl_attrs_get_int(&n->attrs, "axis", -1);
    if (axis < 0)
        axis += rank;
    axis_view(&it->shape, (int)axis, &s->outer, &s->len, &s->inner);
    if (s->outer * s->len * s->inner == 0)
        return false;
    w->n_tasks = lw_pick_tasks(w, s->outer * s->len * s->inner * 8, 65536,
                               s->outer < 64 ? s->outer : 64);
    LLVMValueRef lo, hi;
    lw_task_range(w, s->outer, &lo, &hi);
    LLVMValueRef o = lw_for(w, &s->lo, lo, hi, 1, "o");
    LLVMValueRef k = lw_for(w, &s->lk, lw_i64(w, 0), lw_i64(w, s->inner), 1, "k");
    s->first = LLVMBuildNSWAdd(w->B, lw_mad(w, o, s->len * s->inner, NULL), k, "");
    return true;
}

static void slice_loop_end(lw *w, slice_loop *s)
{
    lw_for_end(w, &s->lk);
    lw_for_end(w, &s->lo);
}

/* Element c of the slice: its index, and its value as double. */
static LLVMValueRef slice_at(lw *w, const slice_loop *s, LLVMValueRef c)
{
    return lw_mad(w, c, s->inner, s->first);
}

static LLVMValueRef slice_load(lw *w, LLVMValueRef ptr, byocl_dtype d, LLVMValueRef at)
{
    return lw_to_double(w, lw_load(w, ptr, d, at), d);
}

/* float32 nn.softmax in float, in four passes over the slice that the loop vectorizer
 * vectorizes: top, the slice's maximum (llvm.maximum: a NaN makes every result NaN, as
 * the reference's sum does); e = exp(x - top) in float (ew_exp_f32), stored in the
 * output; their sum in double, its additions reordered; each e times 1 / sum in double,
 * rounded once. The reference's exp in double, twice per element, took each of vit_b_16's
 * twelve (12, 197, 197) softmaxes 2.9 ms with two threads; this 0.33 ms (with the sum in
 * the exponentials' loop, which then ran four lanes wide, 0.48; with maxnum, which does
 * not vectorize, 0.61; 2-core Zen 2). Each result is within (4 + |x - top|) ulp of the
 * exact softmax, the second term from x - top rounded to float (test_fast_softmax). */
static void softmax_f32(lw *w, const slice_loop *s, LLVMValueRef in, LLVMValueRef out)
{
    LLVMBuilderRef B = w->B;
    LLVMTypeRef f32 = w->t_f32;
    LLVMValueRef top = lw_alloca(w, f32, "top"), sum = lw_alloca(w, w->t_f64, "sum");
    LLVMBuildStore(B, LLVMConstReal(f32, -INFINITY), top);
    LLVMBuildStore(B, dconst(w, 0.0), sum);
    lw_loop lc;
    LLVMValueRef c = lw_for(w, &lc, lw_i64(w, 0), lw_i64(w, s->len), 1, "c");
    LLVMValueRef args[2] = {LLVMBuildLoad2(B, f32, top, ""),
                            lw_load(w, in, BYOCL_FLOAT32, slice_at(w, s, c))};
    LLVMBuildStore(B, lw_intrinsic(w, "llvm.maximum", &f32, 1, args, 2), top);
    lw_for_end(w, &lc);
    LLVMValueRef t = LLVMBuildLoad2(B, f32, top, "");
    c = lw_for(w, &lc, lw_i64(w, 0), lw_i64(w, s->len), 1, "c");
    LLVMValueRef at = slice_at(w, s, c);
    lw_store(w, out, BYOCL_FLOAT32, at,
             ew_exp_f32(w, LLVMBuildFSub(B, lw_load(w, in, BYOCL_FLOAT32, at), t, "")));
    lw_for_end(w, &lc);
    c = lw_for(w, &lc, lw_i64(w, 0), lw_i64(w, s->len), 1, "c");
    at = slice_at(w, s, c);
    LLVMValueRef added = LLVMBuildFAdd(B, LLVMBuildLoad2(B, w->t_f64, sum, ""),
                                       lw_to_double(w, lw_load(w, out, BYOCL_FLOAT32, at),
                                                    BYOCL_FLOAT32), "");
    LLVMSetFastMathFlags(added, LLVMFastMathAllowReassoc);
    LLVMBuildStore(B, added, sum);
    lw_for_end(w, &lc);
    LLVMValueRef inv = LLVMBuildFDiv(B, dconst(w, 1.0), LLVMBuildLoad2(B, w->t_f64, sum, ""), "");
    c = lw_for(w, &lc, lw_i64(w, 0), lw_i64(w, s->len), 1, "c");
    at = slice_at(w, s, c);
    LLVMValueRef scaled = LLVMBuildFMul(B, lw_to_double(w, lw_load(w, out, BYOCL_FLOAT32, at),
                                                        BYOCL_FLOAT32), inv, "");
    lw_store(w, out, BYOCL_FLOAT32, at, lw_from_double(w, scaled, BYOCL_FLOAT32));
    lw_for_end(w, &lc);
}

/* nn.softmax: exp(x - top) / sum; nn.log_softmax: (x - top) - log(sum); sum is the sum
 * of exp(x - top), in order, in double, as the reference computes them (float32 softmax:
 * softmax_f32). */
byocl_status lower_softmax(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    bool log_form = strcmp(n->op->name, "nn.log_softmax") == 0;
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    byocl_dtype d = lw_value_type(w, in_v)->dtype;
    LLVMBuilderRef B = w->B;
    slice_loop s;
    if (!slice_loop_begin(w, n, in_v, &s))
        return w->status;
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    if (d == BYOCL_FLOAT32 && !log_form) {
        softmax_f32(w, &s, in, out);
        slice_loop_end(w, &s);
        return w->status;
    }
    LLVMTypeRef f64 = w->t_f64;
    /* top = fmax over the slice (fmax skips NaN, as the reference's does) */
    LLVMValueRef top = lw_alloca(w, w->t_f64, "top"), sum = lw_alloca(w, w->t_f64, "sum");
    LLVMBuildStore(B, dconst(w, -INFINITY), top);
    LLVMBuildStore(B, dconst(w, 0.0), sum);
    lw_loop lc;
    LLVMValueRef c = lw_for(w, &lc, lw_i64(w, 0), lw_i64(w, s.len), 1, "c");
    LLVMValueRef args[2] = {LLVMBuildLoad2(B, w->t_f64, top, ""),
                            slice_load(w, in, d, slice_at(w, &s, c))};
    LLVMBuildStore(B, lw_intrinsic(w, "llvm.maxnum", &f64, 1, args, 2), top);
    lw_for_end(w, &lc);
    LLVMValueRef t = LLVMBuildLoad2(B, w->t_f64, top, "");
    for (int pass = 0; pass < 2; pass++) {
        LLVMValueRef sv = NULL;
        if (pass) {
            sv = LLVMBuildLoad2(B, w->t_f64, sum, "");
            if (log_form)
                sv = lw_call_rt(w, "log", w->t_f64, &f64, 1, &sv);
        }
        c = lw_for(w, &lc, lw_i64(w, 0), lw_i64(w, s.len), 1, "c");
        LLVMValueRef at = slice_at(w, &s, c);
        LLVMValueRef x = LLVMBuildFSub(B, slice_load(w, in, d, at), t, "");
        if (pass == 1 && log_form) {
            lw_store(w, out, d, at, lw_from_double(w, LLVMBuildFSub(B, x, sv, ""), d));
        } else {
            LLVMValueRef e = lw_call_rt(w, "exp", w->t_f64, &f64, 1, &x);
            if (pass == 0)
                LLVMBuildStore(B, LLVMBuildFAdd(B, LLVMBuildLoad2(B, w->t_f64, sum, ""), e, ""),
                               sum);
            else
                lw_store(w, out, d, at, lw_from_double(w, LLVMBuildFDiv(B, e, sv, ""), d));
        }
        lw_for_end(w, &lc);
    }
    slice_loop_end(w, &s);
    return w->status;
}

/* ------------------------------------------------------------ layer_norm */

/* The sum over the slice of f(x) in double, in order: x itself, or (x - mean)^2. */
static LLVMValueRef slice_sum(lw *w, const slice_loop *s, LLVMValueRef in, byocl_dtype d,
                              LLVMValueRef mean)
{
    LLVMBuilderRef B = w->B;
    LLVMValueRef acc = lw_alloca(w, w->t_f64, "acc");
    LLVMBuildStore(B, dconst(w, 0.0), acc);
    lw_loop lc;
    LLVMValueRef c = lw_for(w, &lc, lw_i64(w, 0), lw_i64(w, s->len), 1, "c");
    LLVMValueRef x = slice_load(w, in, d, slice_at(w, s, c));
    if (mean) {
        x = LLVMBuildFSub(B, x, mean, "");
        x = LLVMBuildFMul(B, x, x, "");
    }
    LLVMBuildStore(B, LLVMBuildFAdd(B, LLVMBuildLoad2(B, w->t_f64, acc, ""), x, ""), acc);
    lw_for_end(w, &lc);
    return LLVMBuildLoad2(B, w->t_f64, acc, "");
}

/* nn.layer_norm, one slice at a time as the reference computes it: the mean, then the
 * variance as the mean of (x - mean)^2, both summed in double in order; then
 * (x - mean) * inv * gamma + beta with inv = 1 / sqrt(var + epsilon). The last loop has
 * no dependences between elements, so LLVM vectorizes it along a contiguous slice. */
byocl_status lower_layer_norm(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref in_v = lv_resolve(w->fn, n->args[0], -1), out_v = {node, -1};
    byocl_value_ref gamma_v = lv_resolve(w->fn, n->args[1], -1);
    byocl_value_ref beta_v = lv_resolve(w->fn, n->args[2], -1);
    byocl_dtype d = lw_value_type(w, in_v)->dtype;
    double eps = byocl_attrs_get_float(&n->attrs, "epsilon", 1e-5);
    bool center = byocl_attrs_get_bool(&n->attrs, "center", true);
    bool scale = byocl_attrs_get_bool(&n->attrs, "scale", true);
    LLVMBuilderRef B = w->B;
    slice_loop s;
    if (!slice_loop_begin(w, n, in_v, &s))
        return w->status;
    LLVMValueRef in = lw_value_ptr(w, in_v), out = lw_output(w, out_v);
    LLVMValueRef gamma = scale ? lw_value_ptr(w, gamma_v) : NULL;
    LLVMValueRef beta = center ? lw_value_ptr(w, beta_v) : NULL;
    LLVMValueRef len = dconst(w, (double)s.len);
    LLVMValueRef mean = LLVMBuildFDiv(B, slice_sum(w, &s, in, d, NULL), len, "");
    LLVMValueRef var = LLVMBuildFDiv(B, slice_sum(w, &s, in, d, mean), len, "");
    LLVMTypeRef f64 = w->t_f64;
    LLVMValueRef root = LLVMBuildFAdd(B, var, dconst(w, eps), "");
    root = lw_intrinsic(w, "llvm.sqrt", &f64, 1, &root, 1);
    LLVMValueRef inv = LLVMBuildFDiv(B, dconst(w, 1.0), root, "");
    lw_loop lc;
    LLVMValueRef c = lw_for(w, &lc, lw_i64(w, 0), lw_i64(w, s.len), 1, "c");
    LLVMValueRef at = slice_at(w, &s, c);
    LLVMValueRef y = LLVMBuildFSub(B, slice_load(w, in, d, at), mean, "");
    y = LLVMBuildFMul(B, y, inv, "");
    if (gamma)
        y = LLVMBuildFMul(B, y, slice_load(w, gamma, d, c), "");
    if (beta)
        y = LLVMBuildFAdd(B, y, slice_load(w, beta, d, c), "");
    lw_store(w, out, d, at, lw_from_double(w, y, d));
    lw_for_end(w, &lc);
    slice_loop_end(w, &s);
    return w->status;
}

byocl_status lower_pool(lw *w, int node)
{
    const char *op = lw_node(w, node)->op->name;
    if (strcmp(op, "nn.global_avg_pool2d") == 0)
        return lower_global_pool(w, node);
    if (strcmp(op, "nn.max_pool3d") == 0 || strcmp(op, "nn.avg_pool3d") == 0)
        return lower_pool3d(w, node);
    return lower_window_pool(w, node);
}
