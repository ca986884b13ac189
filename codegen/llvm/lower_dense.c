/* nn.dense: out[r][u] = sum_k x[r][k] * w[u][k] over the rows r of data's leading dims.
 *
 * Float dense packs the weight when the model is built (or per call when it is not a
 * constant) into blocks of UT = UV*VF units, [block][k][UT], so that one k step of a
 * block is UV contiguous vector loads. The micro-kernel keeps RT rows x UV vectors of
 * accumulators: per k, RT broadcasts of x, UV weight vectors, RT*UV FMAs. Tasks take
 * ranges of unit blocks (and of row tiles), in the order that reads the larger of the
 * weight and x once. Tiles go through a buffer to the epilogue
 * (lower_elemwise.c) and the output. A float32 GEMV of long rows reads the weight as it
 * is instead (gemv_float32). Integer dense is a direct loop nest in 64 bits. */
#include <stdlib.h>

#include "lower.h"
#include "ops/matmul.h"
#include "runtime.h"

typedef struct dense_geom {
    int64_t rows, k, u;
    byocl_dtype din, dout;
    int rank;                      /* of the output */
    int lead_rank;                 /* the output's dims before its units' (rows); those
                                      after it are 1 */
    int64_t lead[BYOCL_MAX_RANK];  /* the output's leading dims */
} dense_geom;

static void dense_geometry(lw *w, int node, dense_geom *g)
{
    const byocl_node *n = lw_node(w, node);
    const byocl_type *x = lw_value_type(w, lv_resolve(w->fn, n->args[0], -1));
    const byocl_type *wt = lw_value_type(w, lv_resolve(w->fn, n->args[1], -1));
    g->u = wt->shape.dims[0];
    g->k = wt->shape.dims[1];
    g->rank = n->type->shape.rank;
    g->lead_rank = g->rank - 1;
    g->rows = 1;
    for (int d = 0; d < g->lead_rank; d++) {
        g->lead[d] = n->type->shape.dims[d];
        g->rows *= g->lead[d];
    }
    g->din = x->dtype;
    g->dout = n->type->dtype;
}

/* Stores out[r][u] (acc in the compute type of the dense's dtype) through the epilogue;
 * `units`: g->u as a value. */
static byocl_status store_output(lw *w, int node, const ew_space *s, const dense_geom *g,
                                 LLVMValueRef units, LLVMValueRef r, LLVMValueRef u,
                                 LLVMValueRef acc)
{
    ew_env e = {.w = w, .space = s, .anchor = node, .exact = false, .anchor_value = acc};
    LLVMValueRef rest = r;
    for (int d = g->lead_rank - 1; d >= 0; d--) { /* the row index over the leading dims */
        e.cidx[d] = d == 0 ? rest : LLVMBuildSRem(w->B, rest, lw_i64(w, g->lead[d]), "");
        if (d > 0)
            rest = LLVMBuildSDiv(w->B, rest, lw_i64(w, g->lead[d]), "");
    }
    e.cidx[g->lead_rank] = u;
    for (int d = g->lead_rank + 1; d < g->rank; d++)
        e.cidx[d] = lw_i64(w, 0);
    byocl_value_ref root = ew_root(w);
    LLVMValueRef v;
    byocl_status st = ew_eval(&e, root, &v);
    if (st != BYOCL_OK)
        return st;
    lw_store(w, lw_output(w, root), lw_value_type(w, root)->dtype,
             LLVMBuildNSWAdd(w->B, LLVMBuildNSWMul(w->B, r, units, ""), u, ""), v);
    return w->status;
}

static byocl_status lower_dense_direct(lw *w, int node, const dense_geom *g, const ew_space *s)
{
    const byocl_node *nd = lw_node(w, node);
    LLVMBuilderRef B = w->B;
    LLVMValueRef x = lw_value_ptr(w, lv_resolve(w->fn, nd->args[0], -1));
    LLVMValueRef wt = lw_value_ptr(w, lv_resolve(w->fn, nd->args[1], -1));
    w->n_tasks = lw_pick_tasks(w, g->rows * g->u * g->k, 1 << 18, g->rows < 64 ? g->rows : 64);
    LLVMValueRef lo, hi;
    lw_task_range(w, g->rows, &lo, &hi);
    lw_loop lr, lu, lk;
    LLVMValueRef r = lw_for(w, &lr, lo, hi, 1, "r");
    LLVMValueRef u = lw_for(w, &lu, lw_i64(w, 0), lw_i64(w, g->u), 1, "u");
    LLVMTypeRef at = lw_acc_type(w, g->din); /* float64: a double sum, as the reference's */
    LLVMValueRef acc = lw_alloca(w, at, "acc");
    LLVMBuildStore(B, LLVMConstNull(at), acc);
    LLVMValueRef k = lw_for(w, &lk, lw_i64(w, 0), lw_i64(w, g->k), 1, "k");
    LLVMValueRef xv = lw_load(w, x, g->din, lw_mad(w, r, g->k, k));
    LLVMValueRef wv = lw_load(w, wt, g->din, lw_mad(w, u, g->k, k));
    LLVMBuildStore(B, lw_acc_mul_add(w, g->din, LLVMBuildLoad2(B, at, acc, ""), xv, wv), acc);
    lw_for_end(w, &lk);
    LLVMValueRef v = lw_acc_to(w, g->din, LLVMBuildLoad2(B, at, acc, ""), g->dout);
    byocl_status st = store_output(w, node, s, g, lw_i64(w, g->u), r, u, v);
    lw_for_end(w, &lu);
    lw_for_end(w, &lr);
    return st;
}

static LLVMValueRef min64(lw *w, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(w->B, LLVMBuildICmp(w->B, LLVMIntSLT, a, b, ""), a, b, "");
}

static LLVMValueRef call_alloc(lw *w, LLVMValueRef nb)
{
    LLVMTypeRef i64 = w->t_i64;
    LLVMValueRef ptr = lw_call_rt(w, "byocl_llvm_rt_alloc", w->t_ptr, &i64, 1, &nb);
    lw_fail_if(w, LLVMBuildIsNull(w->B, ptr, ""), KERR_NOMEM);
    return ptr;
}

/* Rows of the weight a GEMV kernel reads side by side (gemv_float32). */
#define GEMV_ROWS 8

/* Reduction length from which a float32 GEMV reads its weight as it is: its costs per
 * unit (a sum across a vector, the epilogue one unit at a time) are then small beside its
 * row. With short rows the packed GEMV, whose epilogue runs in vectors across units, was
 * faster: efficientnet_b0's excite convs (48 -> 1152 with a sigmoid) took 0.12-0.15 ms more
 * a run unpacked. */
#define GEMV_UNPACKED_K 256

/* Whether dense `node` of geometry g is a float32 GEMV over its weight as it is. */
static bool gemv_unpacked(lw *w, int node, const dense_geom *g)
{
    byocl_value_ref wv = lv_resolve(w->fn, lw_node(w, node)->args[1], -1);
    return g->rows == 1 && g->k >= GEMV_UNPACKED_K && g->din == BYOCL_FLOAT32 &&
           lw_value_type(w, wv)->dtype == BYOCL_FLOAT32;
}

/* A float32 GEMV (one row of x) over the weight as it is, [U][K]: each unit's row dotted
 * with x along K, GEMV_ROWS units at a time, in vectors of VF along K, the vectors summed
 * at the end. Nothing is packed: a classifier's weight (vgg11's 25088 -> 4096, 411 MB)
 * had been copied into a packed second one when the model was built, or by each call
 * where it is a parameter. Tasks take ranges of groups of rows; the sizes come from ctx,
 * as lower_dense_float's. */
static byocl_status gemv_float32(lw *w, int node, const dense_geom *g, const ew_space *s)
{
    const byocl_node *nd = lw_node(w, node);
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    int64_t groups = (g->u + GEMV_ROWS - 1) / GEMV_ROWS;
    w->n_tasks = lw_pick_tasks(w, g->u * g->k, 1 << 16, groups < 64 ? groups : 64);
    LLVMValueRef x = lw_value_ptr(w, lv_resolve(w->fn, nd->args[0], -1));
    LLVMValueRef wt = lw_value_ptr(w, lv_resolve(w->fn, nd->args[1], -1));
    LLVMValueRef k_n = lw_ctx_int(w, g->k), u_n = lw_ctx_int(w, g->u);
    LLVMValueRef k_vec = lw_ctx_int(w, g->k / VF * VF); /* K in whole vectors */
    LLVMValueRef lo, hi;
    lw_task_range_ctx(w, groups, &lo, &hi);
    LLVMValueRef slots[GEMV_ROWS], tails[GEMV_ROWS];
    for (int r = 0; r < GEMV_ROWS; r++) {
        slots[r] = lw_alloca(w, w->t_vf, "acc");
        tails[r] = lw_alloca(w, w->t_f32, "tail");
    }
    lw_loop lg, lk, lt;
    LLVMValueRef grp = lw_for(w, &lg, lo, hi, 1, "group");
    LLVMValueRef u0 = lw_mad(w, grp, GEMV_ROWS, NULL);
    /* rows past the last read the last again (their sums are not stored) */
    LLVMValueRef row_at[GEMV_ROWS];
    LLVMValueRef last = LLVMBuildNSWSub(B, u_n, lw_i64(w, 1), "");
    for (int r = 0; r < GEMV_ROWS; r++) {
        LLVMValueRef u = min64(w, LLVMBuildNSWAdd(B, u0, lw_i64(w, r), ""), last);
        row_at[r] = LLVMBuildNSWMul(B, u, k_n, "");
        LLVMBuildStore(B, LLVMConstNull(w->t_vf), slots[r]);
        LLVMBuildStore(B, LLVMConstNull(w->t_f32), tails[r]);
    }
    LLVMValueRef k = lw_for(w, &lk, lw_i64(w, 0), k_vec, VF, "k");
    LLVMValueRef xv = lw_vload(w, x, k, VF, 4);
    for (int r = 0; r < GEMV_ROWS; r++) {
        LLVMValueRef wv = lw_vload(w, wt, LLVMBuildNSWAdd(B, row_at[r], k, ""), VF, 4);
        LLVMBuildStore(B, lw_fma(w, wv, xv, LLVMBuildLoad2(B, w->t_vf, slots[r], "")), slots[r]);
    }
    lk.no_unroll = true;
    lw_for_end(w, &lk);
    k = lw_for(w, &lt, k_vec, k_n, 1, "k_tail");
    LLVMValueRef xs = lw_load(w, x, BYOCL_FLOAT32, k);
    for (int r = 0; r < GEMV_ROWS; r++) {
        LLVMValueRef ws = lw_load(w, wt, BYOCL_FLOAT32, LLVMBuildNSWAdd(B, row_at[r], k, ""));
        LLVMBuildStore(B, lw_fma(w, ws, xs, LLVMBuildLoad2(B, w->t_f32, tails[r], "")), tails[r]);
    }
    lt.no_unroll = true;
    lw_for_end(w, &lt);
    byocl_status st = BYOCL_OK;
    for (int r = 0; r < GEMV_ROWS && st == BYOCL_OK; r++) {
        LLVMValueRef u = LLVMBuildNSWAdd(B, u0, lw_i64(w, r), "");
        lw_if in;
        lw_if_begin(w, &in, LLVMBuildICmp(B, LLVMIntSLT, u, u_n, ""), "unit");
        LLVMTypeRef vt = w->t_vf;
        LLVMValueRef args[2] = {LLVMBuildLoad2(B, w->t_f32, tails[r], ""),
                                LLVMBuildLoad2(B, vt, slots[r], "")};
        LLVMValueRef sum = lw_intrinsic(w, "llvm.vector.reduce.fadd", &vt, 1, args, 2);
        LLVMSetFastMathFlags(sum, LLVMFastMathAllowReassoc); /* a tree of adds */
        st = store_output(w, node, s, g, u_n, lw_i64(w, 0), u, sum);
        lw_if_end(w, &in);
    }
    lg.no_unroll = true;
    lw_for_end(w, &lg);
    return st;
}

static byocl_status lower_dense_float(lw *w, int node, const dense_geom *g, const ew_space *s)
{
    const byocl_node *nd = lw_node(w, node);
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    /* Register tiles: a single row is a GEMV (8 vectors of units, memory bound on the
     * weight); more rows take as many accumulators as leave registers for the weight
     * vectors and a broadcast: 6 x 4 of 32 with AVX-512, 4 x 3 (2 or 3 rows x 4) of 16
     * otherwise. With 4 x 2 there (8 accumulators, fewer than the FMAs in flight:
     * two units with a latency of five), 3136 rows of 96 -> 384 took 2.89 ms, with 4 x 3
     * 2.31 (one Zen 2 thread; 6 x 2 the same; ONNX Runtime 2.76). */
    int RT = (int)(g->rows < 4 ? g->rows : 4);
    int UV = RT == 1 ? 8 : VF == 16 ? 4 : RT == 4 ? 3 : 4;
    if (RT == 1 && g->u < (int64_t)UV * VF) /* no vectors of units past the last */
        UV = (int)((g->u + VF - 1) / VF);
    if (RT > 1 && VF == 16 && g->rows >= 6) {
        RT = 6;
        UV = 4;
    }
    int64_t ut = (int64_t)UV * VF;
    int64_t blocks = (g->u + ut - 1) / ut, row_tiles = (g->rows + RT - 1) / RT;
    LLVMValueRef x = lw_value_ptr(w, lv_resolve(w->fn, nd->args[0], -1));

    /* Tasks: ranges of unit blocks (and of row tiles); a GEMV, bound by the memory that
     * delivers its weights, one per 2^16 multiply-adds (docs/host-codegen.md). */
    int64_t want = w->threads <= 1 ? 1 : 2 * w->threads;
    int64_t by_work = g->rows * g->u * g->k / (RT == 1 ? 1 << 16 : 1 << 18);
    if (want > by_work)
        want = by_work > 0 ? by_work : 1;
    int64_t bchunks = want < blocks ? want : blocks;
    int64_t rchunks = (want + bchunks - 1) / bchunks;
    if (rchunks > row_tiles)
        rchunks = row_tiles;
    int64_t per_b = (blocks + bchunks - 1) / bchunks, per_r = (row_tiles + rchunks - 1) / rchunks;
    bchunks = (blocks + per_b - 1) / per_b;
    rchunks = (row_tiles + per_r - 1) / per_r;
    w->n_tasks = bchunks * rchunks;

    /* The sizes and the split come from ctx (lw_ctx_int): denses that differ only in
     * them share one function (efficientnet's and regnet_y's squeeze and excite convs,
     * lower_dense_conv, of a few sizes each). */
    LLVMValueRef k_n = lw_ctx_int(w, g->k), u_n = lw_ctx_int(w, g->u);
    LLVMValueRef rows_n = lw_ctx_int(w, g->rows), blocks_n = lw_ctx_int(w, blocks);
    LLVMValueRef row_tiles_n = lw_ctx_int(w, row_tiles), bchunks_n = lw_ctx_int(w, bchunks);
    LLVMValueRef per_b_n = lw_ctx_int(w, per_b), per_r_n = lw_ctx_int(w, per_r);

    /* Packed weights. */
    const byocl_node *wn = lw_node(w, lv_resolve(w->fn, nd->args[1], -1).node);
    size_t n_packed = (size_t)(blocks * g->k * ut);
    LLVMValueRef wp;
    bool runtime_pack = wn->kind != BYOCL_NODE_CONSTANT || !wn->value;
    if (!runtime_pack) {
        float *buf = rt_alloc((int64_t)n_packed * (int64_t)sizeof *buf); /* 64-byte aligned */
        if (!buf)
            return lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_NOMEM, "out of memory"));
        rt_pack_dense(buf, byocl_tensor_cdata(wn->value), g->din == BYOCL_FLOAT16, g->u, g->k, ut);
        wp = lw_const_ptr(w, buf, NULL, buf);
    } else {
        LLVMValueRef wsrc = lw_value_ptr(w, lv_resolve(w->fn, nd->args[1], -1));
        wp = call_alloc(w, LLVMBuildNSWMul(B, LLVMBuildNSWMul(B, blocks_n, k_n, ""),
                                           lw_i64(w, ut * 4), ""));
        LLVMTypeRef params[6] = {w->t_ptr, w->t_ptr, w->t_i64, w->t_i64, w->t_i64, w->t_i64};
        LLVMValueRef args[6] = {wp, wsrc, lw_i64(w, g->din == BYOCL_FLOAT16), u_n, k_n,
                                lw_i64(w, ut)};
        lw_call_rt(w, "byocl_llvm_rt_pack_dense", w->t_void, params, 6, args);
    }

    LLVMValueRef bc = LLVMBuildSRem(B, w->task, bchunks_n, "");
    LLVMValueRef rc = LLVMBuildSDiv(B, w->task, bchunks_n, "");
    LLVMValueRef b0 = LLVMBuildNSWMul(B, bc, per_b_n, "");
    LLVMValueRef b1 = min64(w, LLVMBuildNSWAdd(B, b0, per_b_n, ""), blocks_n);
    LLVMValueRef t0 = LLVMBuildNSWMul(B, rc, per_r_n, "");
    LLVMValueRef t1 = min64(w, LLVMBuildNSWAdd(B, t0, per_r_n, ""), row_tiles_n);

    LLVMValueRef tile = lw_alloca_array(w, w->t_f32, (int64_t)RT * ut, 64, "tile");
    LLVMValueRef slots[64];
    for (int i = 0; i < RT * UV; i++)
        slots[i] = lw_alloca(w, w->t_vf, "acc");
    /* The larger operand is read once, the smaller again for each tile of it: with blocks
     * outside where the packed weight outgrows the rows of x (a 7x7 map's 49 rows of 768
     * -> 3072: 3.13 -> 2.65 ms with 4 x 3 tiles, one Zen 2 thread, where each row tile had
     * streamed all 9.4 MB of the weight from memory), row tiles outside where x is the
     * larger (3136 rows of 96 -> 384: blocks outside took 2.44 ms against 2.30). */
    bool blocks_outside = (double)n_packed > (double)g->rows * (double)g->k;
    lw_loop lt, lb, lk, lr, lu;
    LLVMValueRef rt, blk;
    if (blocks_outside) {
        blk = lw_for(w, &lb, b0, b1, 1, "block");
        rt = lw_for(w, &lt, t0, t1, 1, "rtile");
    } else {
        rt = lw_for(w, &lt, t0, t1, 1, "rtile");
        blk = lw_for(w, &lb, b0, b1, 1, "block");
    }
    LLVMValueRef r0 = lw_mad(w, rt, RT, NULL);
    LLVMValueRef wblk = LLVMBuildNSWMul(B, LLVMBuildNSWMul(B, blk, k_n, ""), lw_i64(w, ut), "");
    for (int i = 0; i < RT * UV; i++)
        LLVMBuildStore(B, LLVMConstNull(w->t_vf), slots[i]);
    /* Rows past the end read row 0 again (results dropped). */
    LLVMValueRef row_at[8];
    for (int r = 0; r < RT; r++) {
        LLVMValueRef row = LLVMBuildNSWAdd(B, r0, lw_i64(w, r), "");
        row = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, row, rows_n, ""), row,
                              lw_i64(w, 0), "");
        row_at[r] = LLVMBuildNSWMul(B, row, k_n, "");
    }
    LLVMValueRef k = lw_for(w, &lk, lw_i64(w, 0), k_n, 1, "k");
    LLVMValueRef acc[64];
    for (int i = 0; i < RT * UV; i++)
        acc[i] = LLVMBuildLoad2(B, w->t_vf, slots[i], "");
    LLVMValueRef wk = lw_mad(w, k, ut, wblk);
    LLVMValueRef wv[16];
    for (int v = 0; v < UV; v++)
        wv[v] = lw_vload(w, wp, LLVMBuildNSWAdd(B, wk, lw_i64(w, (int64_t)v * VF), ""), VF,
                         (unsigned)VF * 4);
    /* A GEMV streams the weights once: 8 KiB ahead, beyond the 4 KiB pages at which the
     * hardware prefetcher starts over (resnet18's classifier 0.08-0.13 -> 0.08-0.10 ms
     * with one thread on an Intel Xeon). */
    if (RT == 1)
        for (int64_t off = 0; off < ut; off += 16)
            lw_prefetch_f32(w, wp, LLVMBuildNSWAdd(B, wk, lw_i64(w, 2048 + off), ""), LW_PREFETCH_L1);
    for (int r = 0; r < RT; r++) {
        LLVMValueRef xs = lw_splat(w, lw_load(w, x, g->din, LLVMBuildNSWAdd(B, row_at[r], k, "")), VF);
        for (int v = 0; v < UV; v++)
            acc[r * UV + v] = lw_fma(w, xs, wv[v], acc[r * UV + v]);
    }
    for (int i = 0; i < RT * UV; i++)
        LLVMBuildStore(B, acc[i], slots[i]);
    lw_for_end(w, &lk);
    for (int i = 0; i < RT * UV; i++)
        lw_vstore(w, tile, lw_i64(w, (int64_t)i * VF), LLVMBuildLoad2(B, w->t_vf, slots[i], ""), (unsigned)VF * 4);
    /* Epilogue over the tile's valid rows and units. */
    LLVMValueRef u0 = lw_mad(w, blk, ut, NULL);
    /* (constants where every tile is whole, so that LLVM vectorizes the epilogue without
     * a remainder: convnext_tiny's denses with GELU were 2-4% slower with runtime ones) */
    LLVMValueRef n_u = g->u % ut == 0 ? lw_i64(w, ut)
                                      : min64(w, lw_i64(w, ut), LLVMBuildNSWSub(B, u_n, u0, ""));
    LLVMValueRef n_r = g->rows % RT == 0
                           ? lw_i64(w, RT)
                           : min64(w, lw_i64(w, RT), LLVMBuildNSWSub(B, rows_n, r0, ""));
    LLVMValueRef r = lw_for(w, &lr, lw_i64(w, 0), n_r, 1, "r");
    LLVMValueRef j = lw_for(w, &lu, lw_i64(w, 0), n_u, 1, "j");
    LLVMValueRef accv = lw_load(w, tile, BYOCL_FLOAT32, lw_mad(w, r, ut, j));
    byocl_status st = store_output(w, node, s, g, u_n, LLVMBuildNSWAdd(B, r0, r, ""),
                                   LLVMBuildNSWAdd(B, u0, j, ""), lw_round(w, accv, g->dout));
    lw_for_end(w, &lu);
    lw_for_end(w, &lr);
    lw_for_end(w, blocks_outside ? &lt : &lb);
    lw_for_end(w, blocks_outside ? &lb : &lt);
    if (runtime_pack) {
        LLVMTypeRef pt = w->t_ptr;
        lw_call_rt(w, "byocl_llvm_rt_free", w->t_void, &pt, 1, &wp);
    }
    return st;
}

/* A float dense (or a conv as one): a GEMV over the weight as it is, or packed. */
static byocl_status dense_float(lw *w, int node, const dense_geom *g, const ew_space *s)
{
    if (gemv_unpacked(w, node, g))
        return gemv_float32(w, node, g, s);
    return lower_dense_float(w, node, g, s);
}

byocl_status lower_dense(lw *w, int node)
{
    dense_geom g;
    dense_geometry(w, node, &g);
    ew_space s;
    byocl_status st = ew_space_init(w, &lw_node(w, node)->type->shape, node, false, &s);
    if (st != BYOCL_OK)
        return lw_failed(w, st);
    st = ew_store_passthrough(w);
    if (st != BYOCL_OK || !ew_has_root(w) || g.rows * g.u == 0)
        return st;
    if (!lw_is_single_float(g.din) || !lw_is_single_float(g.dout)) /* integers, float64 */
        return lower_dense_direct(w, node, &g, &s);
    return dense_float(w, node, &g, &s);
}

/* A float conv each of whose outputs is the dot product of a weight row with a whole input
 * image (the caller checks: one output position, the kernel the size of the map, no
 * padding or groups; a 1x1 conv on a 1x1 map, as in squeeze-and-excitation blocks): a
 * dense of the images, (N, C*H*W), by the weight, (O, C*KH*KW), into (N, O, 1, 1). A
 * conv's register tile computes a row of positions where there is one; as a GEMV, it
 * takes the weights once (docs/host-codegen.md). */
byocl_status lower_dense_conv(lw *w, int node, const ew_space *s)
{
    const byocl_node *n = lw_node(w, node);
    const byocl_type *x = lw_value_type(w, lv_resolve(w->fn, n->args[0], -1));
    const byocl_shape *out = &n->type->shape;
    dense_geom g = {.rows = out->dims[0], .u = out->dims[1], .k = 1, .din = x->dtype,
                    .dout = n->type->dtype, .rank = out->rank, .lead_rank = 1,
                    .lead = {out->dims[0]}};
    for (int d = 1; d < x->shape.rank; d++)
        g.k *= x->shape.dims[d];
    return dense_float(w, node, &g, s);
}

/* Element (i, r) of batch t's a, and (r, j) of its b, as flat indices. */
static LLVMValueRef bmm_a_index(lw *w, const ops_bmm_geom *g, LLVMValueRef t, LLVMValueRef i,
                                LLVMValueRef r)
{
    LLVMValueRef base = g->batch_a == 1 ? lw_i64(w, 0) : LLVMBuildMul(w->B, t, lw_i64(w, g->m * g->k), "");
    return LLVMBuildAdd(w->B, base, g->transpose_a ? lw_mad(w, r, g->m, i) : lw_mad(w, i, g->k, r), "");
}

static LLVMValueRef bmm_b_index(lw *w, const ops_bmm_geom *g, LLVMValueRef t, LLVMValueRef r,
                                LLVMValueRef j)
{
    LLVMValueRef base = g->batch_b == 1 ? lw_i64(w, 0) : LLVMBuildMul(w->B, t, lw_i64(w, g->k * g->n), "");
    return LLVMBuildAdd(w->B, base, g->transpose_b ? lw_mad(w, j, g->k, r) : lw_mad(w, r, g->n, j), "");
}

/* float32 nn.batch_matmul in register tiles: BMM_RT rows x BMM_UV vectors of output
 * columns accumulate over r, each output's sum in the scalar loop's order (r ascending,
 * one fused multiply-add each), so the results are the direct loop's. b is read as rows
 * [k][n]: batch t's own, or, stored transposed, a copy each task transposes first. Tasks
 * take (batch, range of row tiles). The columns past the last whole block go one by one.
 * The direct loop ran vit_b_16's attention products at 2.8 GFLOP/s. */
#define BMM_RT 4
#define BMM_UV 2

static byocl_status lower_batch_matmul_f32(lw *w, const ops_bmm_geom *g, LLVMValueRef a,
                                           LLVMValueRef b, LLVMValueRef out)
{
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    int64_t ut = (int64_t)BMM_UV * VF, n_main = g->n / ut * ut;
    int64_t row_tiles = (g->m + BMM_RT - 1) / BMM_RT;
    int64_t want = w->threads <= 1 ? 1 : 2 * w->threads;
    int64_t by_work = g->batch * g->m * g->n * g->k / (1 << 18);
    if (want > by_work)
        want = by_work > 0 ? by_work : 1;
    int64_t chunks = (want + g->batch - 1) / g->batch;
    if (chunks > row_tiles)
        chunks = row_tiles;
    int64_t per_chunk = (row_tiles + chunks - 1) / chunks;
    chunks = (row_tiles + per_chunk - 1) / per_chunk;
    w->n_tasks = g->batch * chunks;
    LLVMValueRef t = LLVMBuildSDiv(B, w->task, lw_i64(w, chunks), "t");
    LLVMValueRef c = LLVMBuildSRem(B, w->task, lw_i64(w, chunks), "");
    LLVMValueRef tile0 = lw_mad(w, c, per_chunk, NULL);
    LLVMValueRef tile1 = min64(w, LLVMBuildNSWAdd(B, tile0, lw_i64(w, per_chunk), ""),
                               lw_i64(w, row_tiles));

    /* b as [k][n] rows */
    LLVMValueRef rows_b = b, b0 = bmm_b_index(w, g, t, lw_i64(w, 0), lw_i64(w, 0));
    if (g->transpose_b) {
        rows_b = call_alloc(w, lw_i64(w, g->k * g->n * 4));
        b0 = lw_i64(w, 0);
        lw_loop lj, lr;
        LLVMValueRef j = lw_for(w, &lj, lw_i64(w, 0), lw_i64(w, g->n), 1, "j");
        LLVMValueRef r = lw_for(w, &lr, lw_i64(w, 0), lw_i64(w, g->k), 1, "r");
        lw_store(w, rows_b, BYOCL_FLOAT32, lw_mad(w, r, g->n, j),
                 lw_load(w, b, BYOCL_FLOAT32, bmm_b_index(w, g, t, r, j)));
        lw_for_end(w, &lr);
        lw_for_end(w, &lj);
    }

    LLVMValueRef slots[BMM_RT * BMM_UV];
    for (int q = 0; q < BMM_RT * BMM_UV; q++)
        slots[q] = lw_alloca(w, w->t_vf, "acc");
    LLVMValueRef sum = lw_alloca(w, w->t_f32, "sum");
    lw_loop ltile, lb, lr, lj, lk;
    LLVMValueRef tile = lw_for(w, &ltile, tile0, tile1, 1, "tile");
    LLVMValueRef i0 = lw_mad(w, tile, BMM_RT, NULL);
    /* Rows past the end compute row i0 again (results dropped). */
    LLVMValueRef row[BMM_RT], valid[BMM_RT];
    for (int q = 0; q < BMM_RT; q++) {
        LLVMValueRef i = LLVMBuildNSWAdd(B, i0, lw_i64(w, q), "");
        valid[q] = LLVMBuildICmp(B, LLVMIntSLT, i, lw_i64(w, g->m), "");
        row[q] = LLVMBuildSelect(B, valid[q], i, i0, "");
    }
    LLVMValueRef jb = lw_for(w, &lb, lw_i64(w, 0), lw_i64(w, n_main), ut, "jb");
    for (int q = 0; q < BMM_RT * BMM_UV; q++)
        LLVMBuildStore(B, LLVMConstNull(w->t_vf), slots[q]);
    LLVMValueRef r = lw_for(w, &lr, lw_i64(w, 0), lw_i64(w, g->k), 1, "r");
    LLVMValueRef brow = LLVMBuildNSWAdd(B, b0, lw_mad(w, r, g->n, jb), "");
    LLVMValueRef bv[BMM_UV];
    for (int v = 0; v < BMM_UV; v++)
        bv[v] = lw_vload(w, rows_b, LLVMBuildNSWAdd(B, brow, lw_i64(w, (int64_t)v * VF), ""), VF, 4);
    for (int q = 0; q < BMM_RT; q++) {
        LLVMValueRef xs = lw_splat(w, lw_load(w, a, BYOCL_FLOAT32, bmm_a_index(w, g, t, row[q], r)), VF);
        for (int v = 0; v < BMM_UV; v++) {
            LLVMValueRef acc = LLVMBuildLoad2(B, w->t_vf, slots[q * BMM_UV + v], "");
            LLVMBuildStore(B, lw_fma(w, xs, bv[v], acc), slots[q * BMM_UV + v]);
        }
    }
    lw_for_end(w, &lr);
    for (int q = 0; q < BMM_RT; q++) {
        lw_if keep;
        lw_if_begin(w, &keep, valid[q], "keep");
        LLVMValueRef at = lw_mad(w, lw_mad(w, t, g->m, row[q]), g->n, jb);
        for (int v = 0; v < BMM_UV; v++)
            lw_vstore(w, out, LLVMBuildNSWAdd(B, at, lw_i64(w, (int64_t)v * VF), ""),
                      LLVMBuildLoad2(B, w->t_vf, slots[q * BMM_UV + v], ""), 4);
        lw_if_end(w, &keep);
    }
    lb.no_unroll = true;
    lw_for_end(w, &lb);
    /* the last columns, one output at a time */
    for (int q = 0; q < BMM_RT; q++) {
        lw_if keep;
        lw_if_begin(w, &keep, valid[q], "keep");
        LLVMValueRef j = lw_for(w, &lj, lw_i64(w, n_main), lw_i64(w, g->n), 1, "j");
        LLVMBuildStore(B, LLVMConstReal(w->t_f32, 0), sum);
        LLVMValueRef rr = lw_for(w, &lk, lw_i64(w, 0), lw_i64(w, g->k), 1, "r");
        LLVMValueRef x = lw_load(w, a, BYOCL_FLOAT32, bmm_a_index(w, g, t, row[q], rr));
        LLVMValueRef y = lw_load(w, rows_b, BYOCL_FLOAT32, LLVMBuildNSWAdd(B, b0, lw_mad(w, rr, g->n, j), ""));
        LLVMBuildStore(B, lw_fma(w, x, y, LLVMBuildLoad2(B, w->t_f32, sum, "")), sum);
        lw_for_end(w, &lk);
        lw_store(w, out, BYOCL_FLOAT32, lw_mad(w, lw_mad(w, t, g->m, row[q]), g->n, j),
                 LLVMBuildLoad2(B, w->t_f32, sum, ""));
        lj.no_unroll = true;
        lw_for_end(w, &lj);
        lw_if_end(w, &keep);
    }
    ltile.no_unroll = true;
    lw_for_end(w, &ltile);
    if (g->transpose_b) {
        LLVMTypeRef pt = w->t_ptr;
        lw_call_rt(w, "byocl_llvm_rt_free", w->t_void, &pt, 1, &rows_b);
    }
    return w->status;
}

/* nn.batch_matmul: out[t][i][j] = sum_r a[t][i][r] * b[t][r][j], either operand stored
 * transposed, a batch of 1 serving every batch. float32 goes in register tiles (above);
 * the others in a direct loop nest: tasks take ranges of output rows (t, i); floats
 * accumulate in the compute type with fused multiply-adds, integers in 64 bits, as
 * nn.dense's direct form does. */
byocl_status lower_batch_matmul(lw *w, int node)
{
    const byocl_node *n = lw_node(w, node);
    byocl_value_ref av = lv_resolve(w->fn, n->args[0], -1);
    byocl_value_ref bv = lv_resolve(w->fn, n->args[1], -1), out_v = {node, -1};
    byocl_dtype din = lw_value_type(w, av)->dtype, dout = n->type->dtype;
    ops_bmm_geom g;
    byocl_status st = ops_batch_matmul_geometry(&n->attrs, &lw_value_type(w, av)->shape,
                                                &lw_value_type(w, bv)->shape, &g, w->err);
    if (st != BYOCL_OK)
        return lw_failed(w, st);
    int64_t rows = g.batch * g.m;
    if (rows * g.n == 0)
        return w->status;
    if (din == BYOCL_FLOAT32 && dout == BYOCL_FLOAT32 && g.k > 0)
        return lower_batch_matmul_f32(w, &g, lw_value_ptr(w, av), lw_value_ptr(w, bv),
                                      lw_output(w, out_v));
    LLVMBuilderRef B = w->B;
    bool fl = lw_is_float(din);
    LLVMTypeRef acc_t = fl ? lw_calc_type(w, din) : w->t_i64;
    LLVMValueRef a = lw_value_ptr(w, av), b = lw_value_ptr(w, bv), out = lw_output(w, out_v);
    LLVMValueRef acc = lw_alloca(w, acc_t, "acc");
    w->n_tasks = lw_pick_tasks(w, rows * g.n * g.k, 1 << 18, rows < 64 ? rows : 64);
    LLVMValueRef lo, hi;
    lw_task_range(w, rows, &lo, &hi);
    lw_loop lrow, lj, lr;
    LLVMValueRef row = lw_for(w, &lrow, lo, hi, 1, "row");
    LLVMValueRef t = LLVMBuildSDiv(B, row, lw_i64(w, g.m), "t");
    LLVMValueRef i = LLVMBuildSRem(B, row, lw_i64(w, g.m), "i");
    LLVMValueRef j = lw_for(w, &lj, lw_i64(w, 0), lw_i64(w, g.n), 1, "j");
    LLVMBuildStore(B, fl ? LLVMConstReal(acc_t, 0) : lw_i64(w, 0), acc);
    LLVMValueRef r = lw_for(w, &lr, lw_i64(w, 0), lw_i64(w, g.k), 1, "r");
    LLVMValueRef x = lw_load(w, a, din, bmm_a_index(w, &g, t, i, r));
    LLVMValueRef y = lw_load(w, b, din, bmm_b_index(w, &g, t, r, j));
    LLVMValueRef sum = LLVMBuildLoad2(B, acc_t, acc, "");
    if (fl) {
        sum = lw_fma(w, x, y, sum);
    } else {
        x = lw_convert(w, x, din, BYOCL_INT64);
        y = lw_convert(w, y, din, BYOCL_INT64);
        sum = LLVMBuildAdd(B, sum, LLVMBuildMul(B, x, y, ""), "");
    }
    LLVMBuildStore(B, sum, acc);
    lw_for_end(w, &lr);
    LLVMValueRef v = LLVMBuildLoad2(B, acc_t, acc, "");
    lw_store(w, out, dout, lw_mad(w, row, g.n, j), lw_convert(w, v, fl ? din : BYOCL_INT64, dout));
    lw_for_end(w, &lj);
    lw_for_end(w, &lrow);
    return w->status;
}
