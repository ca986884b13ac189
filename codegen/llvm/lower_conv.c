/* nn.conv2d (NCHW data, OIHW weight, any groups, strides, dilations and padding), and
 * nn.conv2d_transpose (IOHW weight), nn.conv3d (NCDHW, OIDHW) and nn.conv3d_transpose
 * (IODHW) through the direct loop nest.
 *
 * Float convs run one schedule:
 *  - Weights are packed when the model is built (or, when they are not constants, by
 *    each task) into units of T output channels of one group: [unit][ic][kh][kw][T],
 *    zero-padded past the group's last channel.
 *  - Each task takes a band of output rows for a range of units. Per group it first
 *    copies the band's input rows into X', zero-padded and split into stride phases:
 *    phase (ry, rx) holds input rows i*sh + ry and columns j*sw + rx. In X' every tap
 *    (kh, kw) of every output (oy, ox) sits at q + offset(kh, kw), where q = oy*PW + ox
 *    runs over a grid PW columns wide (PW >= OW; columns past OW are computed and
 *    dropped). Strided, dilated and padded convs all become that one flat stencil; a
 *    stride-1 conv without padding reads its input in place.
 *  - The micro-kernel keeps a register tile of vectors of VF floats (pick_tile): by
 *    channel (the usual one), CV vectors of output channels x V positions, per input
 *    channel and tap CV vector loads of packed weights, V broadcasts of X' and CV*V FMAs;
 *    by position, T channels x V*VF consecutive q, V vector loads of X' and T broadcast
 *    weights (the last tile of a band masks its loads). By channel, a unit whose weights
 *    outgrow L2 (or L1, in place or on a map of one span) reduces in blocks of input
 *    channels (by_channel_block).
 *  - Tiles go through a small buffer to the output and the fused epilogue
 *    (lower_elemwise.c): by channel, transposed into a span of positions that one loop
 *    per channel stores (emit_store_span_flat) or, when an operand splits rows from
 *    columns, one loop per output row (emit_store_span); by position likewise where the
 *    grid has no halo columns (PW = OW), else row by row.
 * Depthwise convs (one input channel per group) compute output rows in registers from
 * masked loads of the input instead (see lower_conv_depthwise). Integer convs (and
 * strides over 16), the transposed and the 3-D convs use a direct loop nest. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "runtime.h"

typedef struct conv_geom {
    int64_t n, c, h, w;          /* data */
    int64_t o, groups, ic, og;   /* out channels, groups, in/out channels per group */
    bool transposed;             /* the transposed convs: IOHW weight, taps gathered back */
    int64_t kh, kw;
    int64_t sh, sw, dh, dw;
    int64_t pt, pl, pb, pr;
    int64_t oh, ow;
    /* depth (3-D convs; 1, 1, 1, 1, 0, 0, 1 in 2-D): data, kernel, stride, dilation,
     * front and back padding, output */
    int64_t d, kd, sd, dd, pf, pk, od;
    int spatial;                 /* 2 or 3 */
    byocl_dtype din, dout;
} conv_geom;

/* INTS `key` as `count` values: given in full, one per spatial dimension (padding: both
 * sides), one for all, or `def` when absent. */
static void spatial_ints(const byocl_node *n, const char *key, int count, int64_t def,
                         int64_t *out)
{
    const int64_t *v = NULL;
    int k = byocl_attrs_get_ints(&n->attrs, key, &v);
    for (int i = 0; i < count; i++)
        out[i] = k == count ? v[i] : k > 0 && count % k == 0 ? v[i % k] : def;
}

static void conv_geometry(lw *w, int node, conv_geom *g)
{
    const byocl_node *n = lw_node(w, node);
    const byocl_type *x = lw_value_type(w, lv_resolve(w->fn, n->args[0], -1));
    const byocl_type *wt = lw_value_type(w, lv_resolve(w->fn, n->args[1], -1));
    g->spatial = x->shape.rank - 2;
    int sp = g->spatial, z = sp - 2; /* z: 1 when a depth leads */
    g->n = x->shape.dims[0];
    g->c = x->shape.dims[1];
    g->d = z ? x->shape.dims[2] : 1;
    g->h = x->shape.dims[2 + z];
    g->w = x->shape.dims[3 + z];
    g->kd = z ? wt->shape.dims[2] : 1;
    g->kh = wt->shape.dims[2 + z];
    g->kw = wt->shape.dims[3 + z];
    g->groups = byocl_attrs_get_int(&n->attrs, "groups", 1);
    g->transposed = strcmp(n->op->name, "nn.conv2d_transpose") == 0 ||
                    strcmp(n->op->name, "nn.conv3d_transpose") == 0;
    if (g->transposed) { /* weight (C, O / groups, [KD,] KH, KW) */
        g->og = wt->shape.dims[1];
        g->o = g->og * g->groups;
        g->ic = g->c / g->groups;
    } else {             /* weight (O, C / groups, KH, KW) */
        g->o = wt->shape.dims[0];
        g->ic = wt->shape.dims[1];
        g->og = g->o / g->groups;
    }
    int64_t st[3], dl[3], p[6];
    spatial_ints(n, "strides", sp, 1, st);
    spatial_ints(n, "dilation", sp, 1, dl);
    spatial_ints(n, "padding", 2 * sp, 0, p);
    g->sd = z ? st[0] : 1;
    g->dd = z ? dl[0] : 1;
    g->pf = z ? p[0] : 0;
    g->pk = z ? p[sp] : 0;
    g->sh = st[z];
    g->sw = st[z + 1];
    g->dh = dl[z];
    g->dw = dl[z + 1];
    g->pt = p[z];
    g->pl = p[z + 1];
    g->pb = p[sp + z];
    g->pr = p[sp + z + 1];
    g->od = z ? n->type->shape.dims[2] : 1;
    g->oh = n->type->shape.dims[2 + z];
    g->ow = n->type->shape.dims[3 + z];
    g->din = x->dtype;
    g->dout = n->type->dtype;
}

/* ------------------------------------------------------------ epilogue */

/* Stores output element (n, oc, [oz,] oy, ox) of the conv (oz NULL in 2-D), `acc` in
 * float (or the compute type of the conv's dtype), through the group's epilogue. */
static byocl_status store_output_at(lw *w, int node, const ew_space *s, LLVMValueRef n,
                                    LLVMValueRef oc, LLVMValueRef oz, LLVMValueRef oy,
                                    LLVMValueRef ox, LLVMValueRef acc, const conv_geom *g)
{
    ew_env e = {.w = w, .space = s, .anchor = node, .exact = false};
    int k = 0;
    e.cidx[k++] = n;
    e.cidx[k++] = oc;
    if (oz)
        e.cidx[k++] = oz;
    e.cidx[k++] = oy;
    e.cidx[k] = ox;
    e.anchor_value = acc;
    byocl_value_ref root = ew_root(w);
    LLVMValueRef v;
    byocl_status st = ew_eval(&e, root, &v);
    if (st != BYOCL_OK)
        return st;
    LLVMValueRef plane = lw_mad(w, n, g->o, oc);
    if (oz)
        plane = lw_mad(w, plane, g->od, oz);
    LLVMValueRef at = lw_mad(w, lw_mad(w, plane, g->oh, oy), g->ow, ox);
    lw_store(w, lw_output(w, root), lw_value_type(w, root)->dtype, at, v);
    return w->status;
}

static byocl_status store_output(lw *w, int node, const ew_space *s, LLVMValueRef n,
                                 LLVMValueRef oc, LLVMValueRef oy, LLVMValueRef ox,
                                 LLVMValueRef acc, const conv_geom *g)
{
    return store_output_at(w, node, s, n, oc, NULL, oy, ox, acc, g);
}

/* ------------------------------------------------------------ direct loop nest */

/* Input row (or column) `*at` that tap `k` of output `o` reads, and whether it exists.
 * A conv reads o * stride + k * dilation - pad; a transposed conv gathers what the input
 * cells it reads scattered: (o + pad - k * dilation) / stride when that divides. */
static LLVMValueRef tap_source(lw *w, const conv_geom *g, LLVMValueRef o, LLVMValueRef k,
                               int64_t stride, int64_t dilation, int64_t pad, int64_t in_len,
                               LLVMValueRef *at)
{
    LLVMBuilderRef B = w->B;
    LLVMValueRef ok;
    if (g->transposed) {
        LLVMValueRef t = LLVMBuildNSWAdd(B, o, lw_mad(w, k, -dilation, lw_i64(w, pad)), "");
        ok = LLVMBuildICmp(B, LLVMIntSGE, t, lw_i64(w, 0), "");
        if (stride > 1) {
            LLVMValueRef rem = LLVMBuildSRem(B, t, lw_i64(w, stride), "");
            ok = LLVMBuildAnd(B, ok, LLVMBuildICmp(B, LLVMIntEQ, rem, lw_i64(w, 0), ""), "");
            t = LLVMBuildSDiv(B, t, lw_i64(w, stride), "");
        }
        *at = t;
    } else {
        *at = LLVMBuildNSWAdd(B, lw_mad(w, o, stride, NULL), lw_mad(w, k, dilation, lw_i64(w, -pad)), "");
        ok = LLVMBuildICmp(B, LLVMIntSGE, *at, lw_i64(w, 0), "");
    }
    return LLVMBuildAnd(B, ok, LLVMBuildICmp(B, LLVMIntSLT, *at, lw_i64(w, in_len), ""), "");
}

/* Integer convs, float convs whose strides exceed the phase tables (> 16), transposed
 * and 3-D convs: a loop nest per output element, accumulating in 64-bit integers or in
 * double, in the reference's order (input channel, kd, kh, kw), so float results match
 * it exactly. A 2-D conv runs it with a depth of 1. */
static byocl_status lower_conv_direct(lw *w, int node, const conv_geom *g, const ew_space *s)
{
    const byocl_node *nd = lw_node(w, node);
    LLVMBuilderRef B = w->B;
    LLVMValueRef x = lw_value_ptr(w, lv_resolve(w->fn, nd->args[0], -1));
    LLVMValueRef wt = lw_value_ptr(w, lv_resolve(w->fn, nd->args[1], -1));
    int64_t planes = g->n * g->o;
    w->n_tasks = lw_pick_tasks(w, planes * g->od * g->oh * g->ow * g->ic * g->kd * g->kh * g->kw,
                               1 << 18, planes < 64 ? planes : 64);
    LLVMValueRef lo, hi;
    lw_task_range(w, planes, &lo, &hi);
    lw_loop lp, lz, ly, lx, li, lkd, lkh, lkw;
    LLVMValueRef p = lw_for(w, &lp, lo, hi, 1, "plane");
    LLVMValueRef n = LLVMBuildSDiv(B, p, lw_i64(w, g->o), "n");
    LLVMValueRef oc = LLVMBuildSRem(B, p, lw_i64(w, g->o), "oc");
    LLVMValueRef first_c = lw_mad(w, LLVMBuildSDiv(B, oc, lw_i64(w, g->og), ""), g->ic, NULL);
    LLVMValueRef oz = lw_for(w, &lz, lw_i64(w, 0), lw_i64(w, g->od), 1, "oz");
    LLVMValueRef oy = lw_for(w, &ly, lw_i64(w, 0), lw_i64(w, g->oh), 1, "oy");
    LLVMValueRef ox = lw_for(w, &lx, lw_i64(w, 0), lw_i64(w, g->ow), 1, "ox");
    LLVMTypeRef at = lw_acc_type(w, g->din);
    LLVMValueRef acc = lw_alloca(w, at, "acc");
    LLVMBuildStore(B, LLVMConstNull(at), acc);
    LLVMValueRef i = lw_for(w, &li, lw_i64(w, 0), lw_i64(w, g->ic), 1, "i");
    LLVMValueRef vol = lw_mad(w, lw_mad(w, n, g->c, LLVMBuildNSWAdd(B, first_c, i, "")), g->d * g->h * g->w, NULL);
    /* OIHW: [oc][i]; IOHW: [first_c + i][oc within its group] */
    LLVMValueRef wrow = g->transposed
        ? lw_mad(w, LLVMBuildNSWAdd(B, first_c, i, ""), g->og, LLVMBuildSRem(B, oc, lw_i64(w, g->og), ""))
        : lw_mad(w, oc, g->ic, i);
    LLVMValueRef wbase = lw_mad(w, wrow, g->kd * g->kh * g->kw, NULL);
    LLVMValueRef iz, iy, ix;
    LLVMValueRef kd = lw_for(w, &lkd, lw_i64(w, 0), lw_i64(w, g->kd), 1, "kd");
    LLVMValueRef ok_z = tap_source(w, g, oz, kd, g->sd, g->dd, g->pf, g->d, &iz);
    LLVMValueRef kh = lw_for(w, &lkh, lw_i64(w, 0), lw_i64(w, g->kh), 1, "kh");
    LLVMValueRef ok_y = tap_source(w, g, oy, kh, g->sh, g->dh, g->pt, g->h, &iy);
    LLVMValueRef kw = lw_for(w, &lkw, lw_i64(w, 0), lw_i64(w, g->kw), 1, "kw");
    LLVMValueRef ok_x = tap_source(w, g, ox, kw, g->sw, g->dw, g->pl, g->w, &ix);
    LLVMValueRef ok = LLVMBuildAnd(B, ok_z, LLVMBuildAnd(B, ok_y, ok_x, ""), "");
    lw_if inside;
    lw_if_begin(w, &inside, ok, "tap");
    LLVMValueRef row = lw_mad(w, iz, g->h, iy);
    LLVMValueRef xv = lw_load(w, x, g->din, lw_mad(w, row, g->w, LLVMBuildNSWAdd(B, vol, ix, "")));
    LLVMValueRef wtap = lw_mad(w, lw_mad(w, kd, g->kh, kh), g->kw, LLVMBuildNSWAdd(B, wbase, kw, ""));
    LLVMValueRef wv = lw_load(w, wt, g->din, wtap);
    LLVMBuildStore(B, lw_acc_mul_add(w, g->din, LLVMBuildLoad2(B, at, acc, ""), xv, wv), acc);
    lw_if_end(w, &inside);
    lw_for_end(w, &lkw);
    lw_for_end(w, &lkh);
    lw_for_end(w, &lkd);
    lw_for_end(w, &li);
    LLVMValueRef v = lw_acc_to(w, g->din, LLVMBuildLoad2(B, at, acc, ""), g->dout);
    byocl_status st =
        store_output_at(w, node, s, n, oc, g->spatial == 3 ? oz : NULL, oy, ox, v, g);
    lw_for_end(w, &lx);
    lw_for_end(w, &ly);
    lw_for_end(w, &lz);
    lw_for_end(w, &lp);
    return st;
}

/* ------------------------------------------------------------ float convs */

typedef struct conv_plan {
    int vf;                 /* floats per vector */
    bool by_channel;        /* vectors run along output channels (see pick_tile) */
    int t, v;               /* register tile: T channels x V vectors of positions; by
                               channel, T = cv * vf channels x V positions */
    int cv;                 /* by channel: vectors of channels in the tile */
    int64_t units_per_group, units;
    int64_t halo_h;         /* PH - OH: extra phase rows a band reads */
    int64_t ph, pw;         /* phase image height and width */
    int nry, nrx;           /* stride phases used, per axis */
    int64_t ry[16], rx[16]; /* their row/column remainders */
    bool direct;            /* read the input in place (stride 1, no padding, float32) */
    int64_t rows;           /* output rows per band */
    int64_t bands, chunks;  /* tasks = n * chunks * bands */
    int64_t units_per_chunk;
    bool split_units;       /* by channel, one band: chunks are equal ranges of (unit, tile)
                               pairs, so a unit may be split between two tasks at a tile */
    int64_t tiles;          /* by channel: tiles of the band's outputs */
    bool whole_tiles;       /* every band's grid positions fill whole tiles: no partial
                               (masked, or by channel clamped) last tile is emitted */
    bool overlap_last;      /* else, every band holds a whole tile: the band's last tile
                               starts a tile before the band's end (tile_start), over
                               the one before it, and no partial tile is emitted either */
    int64_t channel_block;  /* by channel: input channels per block of the reduction */
    int64_t prefetch_ahead; /* by channel: floats ahead of a tile to prefetch its input
                               rows at, or 0 */
    int64_t weights_ahead;  /* by channel: floats ahead of a unit's first tile to prefetch
                               its packed weights at, or 0 */
    int64_t band_ph;        /* phase rows per band in X' (rows + halo_h) */
    int64_t xs_phase, xs_chan; /* floats per phase image and per channel of X' */
} conv_plan;

/* Positions of a tile: V*VF grid positions by position, V outputs by channel. */
static int64_t tile_positions(const conv_plan *p)
{
    return p->by_channel ? p->v : (int64_t)p->v * p->vf;
}

static int index_of(const int64_t *v, int n, int64_t x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return i;
    return -1;
}

/* Positions a band of `rows` output rows computes with tiles of `per_tile` positions: by
 * position, lanes of the PW-wide grid up to the band's last output; by channel, outputs. */
static int64_t band_positions(const conv_geom *g, const conv_plan *p, bool by_channel,
                              int64_t rows, int64_t per_tile)
{
    int64_t n = by_channel ? rows * g->ow : (rows - 1) * p->pw + g->ow;
    return (n + per_tile - 1) / per_tile * per_tile;
}

/* Register tiles: a x b accumulators of one vector each.
 *  - By position (a = T channels, b = V vectors): V*VF consecutive positions of the
 *    PW-wide grid, one vector load of X' per vector and one broadcast weight per channel.
 *    The halo columns (PW - OW) are computed and dropped, and the band's last tile is
 *    masked: on small maps many lanes are wasted (a 7x7 output of a padded 3x3 conv
 *    computes 64 lanes for 49 outputs).
 *  - By channel (a = CV vectors of VF output channels, b = V positions), as blocked
 *    channel layouts (NCHWc) compute: one broadcast of X' per position and one vector load
 *    of packed weights per channel vector. Only outputs are computed; the results leave
 *    the tile transposed, lane by lane, into a span of 128 outputs per channel, which the
 *    epilogue then runs along.
 * The cost, in vector FMAs: padded positions x padded channels x the reduction, with a
 * surcharge for the loads each FMA needs ((a + b) / (a * b)); by position, times a
 * factor; by channel, plus the transposition and epilogue pass per vector of outputs.
 * Both are measured, not derived, per vector width:
 *  - 8 and 4 floats: by position times 1.5, nothing per output. Forced onto every conv
 *    of mobilenet_v2, resnet18 and squeezenet1_1 (BYOCL_LLVM_CONV_TILES, below), the
 *    by-channel tiles ran each model 1.2-1.9x faster on Zen 3 and no conv more than a
 *    few percent slower, while the FMA counts alone favour the by-position tiles on
 *    large maps (docs/host-codegen.md has the figures). So by channel wins unless its
 *    channel vectors would be mostly padding.
 *  - 16 floats: by position times 1.05, by channel 20 FMAs per vector of outputs. On an
 *    Intel Xeon with AVX-512 (one thread) the by-position tiles won on the 1x1 convs of
 *    few input or output channels on large maps (mobilenet_v2's 32 -> 16 on 112x112 0.09
 *    against 0.19 ms, 16 -> 96 0.26 against 0.46), where the by-channel epilogue weighs
 *    against a short reduction, and on resnet18's 7x7/2 stem (1.17 against 1.64); they
 *    lost on deep 3x3 convs (resnet18's 0.87-0.96x, densenet121's 128 -> 32 on 56x56
 *    0.92x). These weights pick the faster tile on each of the sixteen layers measured
 *    (1.04-1.06 with 20-24 do); 1.5 had cost mobilenet_v2 13%, 1.1 resnet18, googlenet,
 *    densenet121, resnet50 and inception_v3 2-4% (their stems). */
/* Candidate tiles per vector width (4, 8, 16 floats); each list ends at the first {0, 0}.
 * Without 4 x 6 by position with AVX-512: its 6 vector loads of X' a step, each across two
 * cache lines, made it the slowest of the four on every layer measured on an Intel Xeon
 * (one thread: resnet18's 7x7/2 stem 1.49 ms against 1.18 for 8 x 3, mobilenet_v2's
 * 16 -> 96 1x1 conv on 112x112 0.41 against 0.34-0.36 for the other three). */
static const int tiles_by_position[3][6][2] = {
    {{4, 3}, {6, 2}, {3, 4}}, {{6, 2}, {4, 3}, {3, 4}}, {{8, 3}, {6, 4}, {12, 2}}};
/* (3, 7) with AVX-512: 7 positions tile the 7x7 and 14x14 maps of deep layers whole
 * (resnet18's 512-channel 3x3 conv on 7x7: 1.34 -> 1.22 ms, one thread, Intel Xeon). */
static const int tiles_by_channel[3][6][2] = {
    {{3, 4}, {2, 6}, {1, 12}},
    {{2, 6}, {3, 4}, {1, 12}},
    {{2, 12}, {3, 8}, {4, 6}, {1, 24}, {3, 7}}};

static double tile_cost(const conv_geom *g, const conv_plan *p, bool by_channel, int a, int b)
{
    double by_position_factor = p->vf == 16 ? 1.05 : 1.5;
    double by_channel_per_output = p->vf == 16 ? 20.0 : 0.0;
    int64_t chans_per_unit = by_channel ? (int64_t)a * p->vf : a;
    int64_t per_tile = by_channel ? b : (int64_t)b * p->vf;
    int64_t full = g->oh / p->rows, last = g->oh % p->rows;
    int64_t positions = full * band_positions(g, p, by_channel, p->rows, per_tile) +
                        (last ? band_positions(g, p, by_channel, last, per_tile) : 0);
    int64_t chans = (g->og + chans_per_unit - 1) / chans_per_unit * chans_per_unit * g->groups;
    double out_vectors = (double)g->n * (double)positions * (double)chans / p->vf;
    double fmas = out_vectors * (double)(g->ic * g->kh * g->kw);
    double cost = fmas * (1.0 + 0.5 * (a + b) / ((double)a * b));
    if (!by_channel)
        return cost * by_position_factor;
    return cost + by_channel_per_output * out_vectors;
}

/* Picks the cheapest tile (tile_cost); BYOCL_LLVM_CONV_TILES=position or =channel forces
 * one shape (tests reach both schedules on every geometry, benchmarks compare them). */
static void pick_tile(const conv_geom *g, conv_plan *p)
{
    const char *force = getenv("BYOCL_LLVM_CONV_TILES");
    int table = p->vf == 16 ? 2 : p->vf == 8 ? 1 : 0;
    double best = -1;
    for (int mode = 0; mode < 2; mode++) {
        bool by_channel = mode == 1;
        if (force && strcmp(force, by_channel ? "position" : "channel") == 0)
            continue;
        const int(*cand)[2] = by_channel ? tiles_by_channel[table] : tiles_by_position[table];
        int n_cand = 0;
        while (cand[n_cand][0])
            n_cand++;
        for (int i = 0; i < n_cand + (by_channel ? 0 : 1); i++) {
            int a = i < n_cand ? cand[i][0] : 1, b = i < n_cand ? cand[i][1] : 8;
            if (i == n_cand && g->og > 1)
                continue; /* one channel per group (depthwise): long vectors */
            if (!by_channel && a > g->og)
                a = (int)g->og;
            if (by_channel && a > 1 && (int64_t)(a - 1) * p->vf >= g->og)
                continue; /* a whole vector of channels past the group's last */
            double cost = tile_cost(g, p, by_channel, a, b);
            if (best < 0 || cost < best) {
                best = cost;
                p->by_channel = by_channel;
                p->cv = by_channel ? a : 0;
                p->t = by_channel ? a * p->vf : a;
                p->v = b;
            }
        }
    }
}

/* Positions a by-channel span holds (rounded up to whole tiles: by_channel_span): long
 * enough for the epilogue to run along rows, small enough for the span's results to stay
 * in L1. */
#define BY_CHANNEL_SPAN 128

static int64_t by_channel_span(const conv_plan *p)
{
    return (BY_CHANNEL_SPAN + p->v - 1) / p->v * p->v;
}

/* Grid positions a by-position span holds (its tiles' results wait in the tile buffer
 * for the epilogue): one tile where the epilogue runs along a flat space (one loop per
 * channel); on a grid with halo columns, whole tiles covering two rows of the grid (at
 * most BY_POSITION_SPAN_MAX positions, rounded up to a tile), so that the epilogue's
 * loops per output row run along whole rows rather than a tile's pieces of them, each
 * with its own set-up and scalar tail. One thread on the Intel Xeon: the 3x3/2 stems
 * of mobilenet_v2 (3 -> 32, 224x224) 0.29 -> 0.26 ms, squeezenet1_1 (3 -> 64) 0.49 ->
 * 0.46, resnet18's 7x7/2 1.84 -> 1.80; spans of one, four or eight rows gained as much
 * or less. */
#define BY_POSITION_SPAN_MAX 1024

static int64_t by_position_span(const conv_plan *p, bool flat)
{
    int64_t qt = (int64_t)p->v * p->vf, want = 2 * p->pw;
    if (flat || want <= qt)
        return qt;
    if (want > BY_POSITION_SPAN_MAX)
        want = BY_POSITION_SPAN_MAX;
    return (want + qt - 1) / qt * qt;
}

/* Input channels per block of a by-channel reduction (g->ic: one block, no blocks).
 * Each tile of a span adds its sums over a block of input channels at a time
 * (emit_channels_begin), so that the block's packed weights, read by every tile of the
 * span, stay in L1. A deep conv's unit holds more weights than L2 keeps besides X' (512
 * channels of 3x3 taps for 16 output channels: 288 KiB), and without blocks each tile
 * streamed them all again from L3: on the 2-core Zen 2 (512 KiB of L2) resnet18's 7x7
 * convs ran at half the peak. A block's weights take half of L1 (the target's,
 * jit_target). Blocks cost each tile a store and a load of its sums per block, and the
 * sums of a span take L1 beside the block's weights, so units that L2 holds several times
 * over take one block, the whole reduction: up to a quarter of L2 (or twice L1, where L2
 * is small). With units of up to twice L1 in one block, as on Zen 2, an Intel Xeon with
 * 2 MiB of L2 ran six 3x3 convs of resnet18's layer1 and layer2 (units of 147 and 295
 * KiB) 4-6% and 5% slower than now, and resnet18 and googlenet 5% (one thread; two
 * threads within 1%). Those convs read X' (padded 3x3 convs on large maps); a conv that
 * reads its input in place (1x1 convs) or whose map is one span (7x7: every tile of a
 * unit read all of its weights from L2 again) takes blocks once a unit outgrows L1. On
 * the Intel Xeon, one thread and two: 1x1 convs of 400 and 512 channels on 7x7 9-10%
 * faster, 1024 on 14x14 7%, 512 on 28x28 4.5-8%, 3x3 convs of 128 channels on 7x7 4-5%;
 * 3x3 convs through X' on larger maps 1-4% slower in blocks. The block size does not
 * depend on the channel count (the last block takes the rest), so convs that differ only
 * in it share code. */
static int64_t by_channel_block(lw *w, const conv_geom *g, const conv_plan *p)
{
    if (!p->by_channel)
        return g->ic;
    int64_t per_channel = g->kh * g->kw * p->t * 4;
    int64_t l1d = w->host->l1d_bytes, whole = w->host->l2_bytes / 4;
    if (whole < 2 * l1d)
        whole = 2 * l1d;
    if (p->direct || g->oh * g->ow <= by_channel_span(p))
        whole = l1d;
    if (g->ic * per_channel <= whole)
        return g->ic;
    int64_t fit = l1d / 2 / per_channel;
    if (fit < 1)
        fit = 1;
    return fit < g->ic ? fit : g->ic;
}

/* X' of a band (every input channel's rows, in their stride phases) is read again for
 * each unit of output channels: when it outgrows L2 each pass streams it from L3. So each
 * band becomes as many as it takes for X' to fill at most 3/4 of L2 (which also holds the
 * units' weights and the outputs), each thread's share of the map split alike. One
 * thread, on the 2-core Zen 2 (512 KiB of L2): resnet18's 64-channel 3x3 convs on 56x56
 * (an X' of 861 KiB) went from 2.74 to 2.33 ms each, the model 3.5-4% faster, googlenet
 * 1%; with two threads nothing moved. Not where the bands' halos would add a quarter
 * to X' or more (vgg11's 64-channel convs on 224x224, bands of 4 rows: 6% slower with two
 * threads), nor for fewer than 4 units (densenet121's 3x3 convs to 32 channels, 2 units:
 * 2% slower with two threads). A conv that reads its input in place (no X') reads its
 * band's input rows once per unit alike: by position, with units of a few channels,
 * bands for L2 there too (one thread, Intel Xeon with 2 MiB of L2: densenet121's 1x1
 * convs of 160 and 192 -> 128 channels on 56x56 1.44 -> 0.82 and 1.84 -> 1.05 ms, the
 * model 7% faster, googlenet 5.5%, mobilenet_v2 2.6%; two threads within 1%); by
 * channel, whose units are few, smaller bands gained nothing (mobilenet_v2, Zen 2). */
static void split_bands_for_l2(lw *w, const conv_geom *g, conv_plan *p)
{
    if ((p->direct && p->by_channel) || p->units < 4)
        return;
    int64_t per_row = g->ic * p->pw * p->nry * p->nrx * 4;
    int64_t fit = w->host->l2_bytes * 3 / 4 / per_row - p->halo_h; /* rows of a band */
    if (fit < 4 * p->halo_h || fit < 1 || p->rows <= fit)
        return;
    p->bands *= (p->rows + fit - 1) / fit;
    p->rows = (g->oh + p->bands - 1) / p->bands;
    p->bands = (g->oh + p->rows - 1) / p->rows;
}

/* The time of the slowest thread for `bands` bands (of equal rows) and as many chunks of
 * units as the image's share of tasks, `per_n`, leaves each: the positions x units of
 * one task, times the rounds of tasks a thread runs. */
static int64_t split_cost(const conv_geom *g, const conv_plan *p, int64_t bands, int64_t per_n)
{
    int64_t rows = (g->oh + bands - 1) / bands;
    bands = (g->oh + rows - 1) / rows;
    int64_t chunks = (per_n + bands - 1) / bands;
    if (chunks > p->units)
        chunks = p->units;
    int64_t per_chunk = (p->units + chunks - 1) / chunks;
    chunks = (p->units + per_chunk - 1) / per_chunk;
    int64_t per_tile = tile_positions(p);
    int64_t rounds = (bands * chunks + per_n - 1) / per_n;
    return rounds * band_positions(g, p, p->by_channel, rows, per_tile) * per_chunk;
}

/* More bands (of fewer rows than plan_conv's 8) where that balances the threads: few
 * units leave threads idle or unevenly loaded (a 1x1 conv to 64 channels on 14x14 is one
 * by-channel unit in one band; 480 -> 192 channels three, two for one thread and one
 * for the other). Takes the count of bands whose slowest thread computes the least
 * (split_cost), where that is at least an eighth less than with the bands planned: bands
 * split what the next op, mostly split by channels, reads, and mobilenet_v2's 96 -> 576
 * 1x1 convs on 14x14 ran slower in two bands (nine units, 7% less work for the slowest
 * thread) than in one. Two threads, Intel Xeon: googlenet's convs of three and five
 * units on 14x14 8-18% faster; mobilenet_v2's 384 -> 64 convs 0.060 -> 0.040 ms
 * (docs/host-codegen.md). */
static void balance_tasks(const conv_geom *g, conv_plan *p, int64_t per_n)
{
    int64_t planned = split_cost(g, p, p->bands, per_n), best = planned, best_bands = p->bands;
    for (int64_t bands = p->bands + 1; bands <= per_n && bands <= g->oh; bands++) {
        int64_t cost = split_cost(g, p, bands, per_n);
        if (cost * 8 < planned * 7 && cost < best) {
            best = cost;
            best_bands = bands;
        }
    }
    p->rows = (g->oh + best_bands - 1) / best_bands;
    p->bands = (g->oh + p->rows - 1) / p->rows;
}

static void plan_conv(lw *w, const conv_geom *g, conv_plan *p)
{
    memset(p, 0, sizeof *p);
    p->vf = w->vf;
    p->ph = g->oh + (g->kh - 1) * g->dh / g->sh;
    p->pw = g->ow + (g->kw - 1) * g->dw / g->sw;
    p->halo_h = p->ph - g->oh;
    for (int64_t k = 0; k < g->kh; k++)
        if (index_of(p->ry, p->nry, k * g->dh % g->sh) < 0)
            p->ry[p->nry++] = k * g->dh % g->sh;
    for (int64_t k = 0; k < g->kw; k++)
        if (index_of(p->rx, p->nrx, k * g->dw % g->sw) < 0)
            p->rx[p->nrx++] = k * g->dw % g->sw;
    /* Stride 1 without padding: X' would be the input itself (PW = W, PH = H). */
    p->direct = g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 && g->pb == 0 &&
                g->pr == 0 && g->din == BYOCL_FLOAT32;

    /* Tasks: bands of rows first (each task then copies only its rows into X'), then
     * ranges of units; one per thread when there is enough work. Each task fills X' for
     * its band, so more tasks than threads fill it more often: with four per thread
     * (for balance on a busy machine), resnet18, squeezenet1_1 and googlenet ran 8%, 8%
     * and 4.5% slower on a 2-core Zen 2 (docs/host-codegen.md). */
    int64_t macs = g->n * g->o * g->oh * g->ow * g->ic * g->kh * g->kw;
    int64_t want = w->threads <= 1 ? 1 : w->threads;
    /* A task per 2^20 MACs, or per 2^18 where every thread gets a band of 8 rows or more.
     * A small conv in one task had run slower with two threads than with one (it reads
     * what the other core wrote: mnasnet0_5's 72 -> 24 1x1 conv on 28x28 after a
     * depthwise conv, 0.031 ms with one thread, 0.045 with two); split into bands,
     * mnasnet0_5 ran 9-14% faster, mobilenet_v3_small 6%, shufflenet_v2_x0_5 5% (two
     * threads, Zen 2). Split by channels (maps of fewer rows), tasks that small cost more
     * than they gained: mobilenet_v3_small ran 6% slower. */
    int64_t grain = g->oh / 8 >= want ? 1 << 18 : 1 << 20;
    int64_t by_work = macs / grain;
    if (want > by_work)
        want = by_work > 0 ? by_work : 1;
    int64_t per_n = (want + g->n - 1) / g->n;
    p->bands = g->oh / 8 < per_n ? g->oh / 8 : per_n;
    if (p->bands < 1)
        p->bands = 1;
    p->rows = (g->oh + p->bands - 1) / p->bands;
    p->bands = (g->oh + p->rows - 1) / p->rows;

    pick_tile(g, p);
    p->units_per_group = (g->og + p->t - 1) / p->t;
    p->units = p->units_per_group * g->groups;
    balance_tasks(g, p, per_n);
    split_bands_for_l2(w, g, p);
    p->chunks = (per_n + p->bands - 1) / p->bands;
    if (p->chunks > p->units)
        p->chunks = p->units;
    if (p->chunks < 1)
        p->chunks = 1;
    p->units_per_chunk = (p->units + p->chunks - 1) / p->chunks;
    p->chunks = (p->units + p->units_per_chunk - 1) / p->units_per_chunk;
    /* Units that do not divide evenly among the chunks (nine by-channel units on two
     * threads: five and four) leave a thread idle for a unit's time; split at a tile of
     * outputs, the chunks are equal but for a tile. */
    p->tiles = p->by_channel ? (g->oh * g->ow + p->v - 1) / p->v : 0;
    /* the grid positions of a band of r rows: r - 1 rows of PW and one of OW (by channel,
     * the outputs: PW = OW there); the bands have p->rows rows but the last */
    int64_t tile = tile_positions(p);
    int64_t grid_w = p->by_channel ? g->ow : p->pw;
    int64_t last_rows = g->oh - (p->bands - 1) * p->rows;
    int64_t band_grid = (p->rows - 1) * grid_w + g->ow;
    int64_t last_grid = (last_rows - 1) * grid_w + g->ow;
    p->whole_tiles = band_grid % tile == 0 && last_grid % tile == 0;
    /* A partial last tile was a second copy of the tile's code (masked loads by position,
     * clamped positions by channel), a third of such a conv's instructions: inception_v3's
     * twelve convs that had one took 14% of its code. By channel it only pays on a grid
     * without halo columns (PW = OW), where the full tiles' positions are consecutive;
     * with halo columns every tile maps its positions one by one anyway. */
    p->overlap_last = !p->whole_tiles && band_grid >= tile && last_grid >= tile &&
                      (!p->by_channel || p->pw == g->ow);
    p->split_units = p->by_channel && g->n == 1 && p->bands == 1 && p->chunks > 1 &&
                     p->units % p->chunks != 0 && p->tiles >= 2;
    p->channel_block = by_channel_block(w, g, p);
    /* A 1x1 conv that reads its input in place takes a line of every input channel each
     * few tiles: more streams than the hardware prefetcher follows. With several threads
     * that input was mostly written by the other cores, and each line comes from their
     * caches when a tile asks for it: on the 2-core Zen 2, when its two cores were far
     * apart (docs/benchmarks.md, "Near and far cores"), mobilenet_v2 and mnasnet0_5 ran
     * 15% faster with each tile prefetching its rows two tiles (or a line) ahead, and
     * squeezenet1_1 and densenet121 8%. With one thread the input is in this core's caches
     * and the prefetches cost 1-2.5%: none there. */
    p->prefetch_ahead = 0;
    if (p->by_channel && p->direct && g->kh * g->kw == 1 && w->threads > 1)
        p->prefetch_ahead = 2 * p->v > 16 ? 2 * p->v : 16;
    /* A unit's weights are read from memory by its first tile (each conv's weights are
     * touched once a run, and a model's outgrow L3), at the FMAs' pace: faster than the
     * hardware prefetcher delivers a stream that it picks up anew at every 4 KiB page.
     * Where a unit (or a block of it) holds 8 KiB or more, that tile prefetches the
     * weights 4 KiB ahead of those it reads. On the 2-core Zen 2, thirty 400 -> 400 1x1
     * convs on 7x7 in a row went from 6.33 to 5.96 ms (one thread; 2 and 8 KiB ahead: 6.09);
     * regnet_y_400mf 2.7% faster with two threads, mobilenet_v2 3.9%, the other models
     * 0-1% (docs/host-codegen.md). Smaller units fit a few pages: prefetching
     * regnet_y_400mf's grouped convs' 2 KiB units cost 8%. The same convs' first tiles
     * of a span also prefetch the next block's weights (next_weights_plan), into L2:
     * with the unit's first tile alone, that tile of a 400 -> 400 1x1 conv on 7x7 took
     * a quarter of the conv's time against a tenth for each of its six others (Intel Xeon,
     * one thread, perf). */
    p->weights_ahead = 0;
    if (p->by_channel && p->channel_block * g->kh * g->kw * p->t * 4 >= 8192)
        p->weights_ahead = 1024;
    p->band_ph = p->rows + p->halo_h;
    p->xs_phase = p->band_ph * p->pw;
    p->xs_chan = p->xs_phase * p->nry * p->nrx;
}

/* Units [u0, u1) of a conv's packed weights (rt_pack_conv's arguments). */
typedef struct pack_part {
    float *dst;
    const void *src;
    int64_t is_f16, o, ic, taps, og, t, u0, u1;
} pack_part;

static void *pack_part_run(void *arg)
{
    const pack_part *p = arg;
    rt_pack_conv(p->dst, p->src, p->is_f16, p->o, p->ic, p->taps, p->og, p->t, p->u0, p->u1);
    return NULL;
}

enum { PACK_MAX_THREADS = 16 };
#define PACK_BYTES_PER_THREAD ((size_t)1 << 20)

/* rt_pack_conv of `whole`'s units, split between up to `threads` threads (a part of at
 * least 1 MiB each; the caller's thread takes the first): packing is most of a cached
 * build of a model with large weights, and so are the page faults of the packed copy's
 * first writes, which the threads take in parallel too (wide_resnet50_2's 275 MB: cached
 * host build 0.21-0.22 -> 0.15 s, two threads, Intel Xeon). */
static void pack_conv_parallel(const pack_part *whole, size_t bytes, int threads)
{
    int parts = threads < PACK_MAX_THREADS ? threads : PACK_MAX_THREADS;
    if ((size_t)parts > bytes / PACK_BYTES_PER_THREAD)
        parts = (int)(bytes / PACK_BYTES_PER_THREAD);
    int64_t units = whole->u1 - whole->u0;
    if (parts > units)
        parts = (int)units;
    if (parts < 1)
        parts = 1;
    pack_part part[PACK_MAX_THREADS];
    pthread_t thread[PACK_MAX_THREADS];
    bool started[PACK_MAX_THREADS] = {false};
    for (int k = 0; k < parts; k++) {
        part[k] = *whole;
        part[k].u0 = whole->u0 + units * k / parts;
        part[k].u1 = whole->u0 + units * (k + 1) / parts;
        if (k > 0)
            started[k] = pthread_create(&thread[k], NULL, pack_part_run, &part[k]) == 0;
    }
    pack_part_run(&part[0]);
    for (int k = 1; k < parts; k++) /* a thread that could not start: its part here */
        started[k] ? (void)pthread_join(thread[k], NULL) : (void)pack_part_run(&part[k]);
}

/* The packed weights: built now for a constant weight; NULL otherwise. */
static float *packed_constant(lw *w, int node, const conv_geom *g, const conv_plan *p)
{
    const byocl_node *wn = lw_node(w, lv_resolve(w->fn, lw_node(w, node)->args[1], -1).node);
    if (wn->kind != BYOCL_NODE_CONSTANT || !wn->value)
        return NULL;
    size_t n = (size_t)(p->units * g->ic * g->kh * g->kw * p->t);
    float *buf = rt_alloc((int64_t)(n * sizeof *buf)); /* 64-byte aligned */
    if (buf) {
        pack_part whole = {buf, byocl_tensor_cdata(wn->value), g->din == BYOCL_FLOAT16, g->o,
                           g->ic, g->kh * g->kw, g->og, p->t, 0, p->units};
        pack_conv_parallel(&whole, n * sizeof *buf, w->threads);
    }
    return buf;
}

static LLVMValueRef fconst(lw *w, double v) { return LLVMConstReal(w->t_f32, v); }

static LLVMValueRef gep_f32(lw *w, LLVMValueRef base, LLVMValueRef idx)
{
    return LLVMBuildInBoundsGEP2(w->B, w->t_f32, base, &idx, 1, "");
}

static LLVMValueRef min64(lw *w, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(w->B, LLVMBuildICmp(w->B, LLVMIntSLT, a, b, ""), a, b, "");
}

static LLVMValueRef max64(lw *w, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(w->B, LLVMBuildICmp(w->B, LLVMIntSGT, a, b, ""), a, b, "");
}

/* Fills X' for group `grp`, band rows [oy0, oy0 + rows): every used phase, zero where the
 * padded input has no data. */
static void emit_prep(lw *w, const conv_geom *g, const conv_plan *p, LLVMValueRef x,
                      LLVMValueRef xp, LLVMValueRef n, LLVMValueRef grp, LLVMValueRef oy0,
                      LLVMValueRef rows, LLVMValueRef ic_count)
{
    LLVMBuilderRef B = w->B;
    LLVMValueRef band_rows = LLVMBuildNSWAdd(B, rows, lw_i64(w, p->halo_h), "");
    lw_loop li, lr, lj;
    LLVMValueRef ic = lw_for(w, &li, lw_i64(w, 0), ic_count, 1, "ic");
    LLVMValueRef chan = LLVMBuildNSWAdd(B, LLVMBuildNSWMul(B, grp, ic_count, ""), ic, "");
    LLVMValueRef c = lw_mad(w, ic_count, g->groups, NULL);
    LLVMValueRef src_plane =
        lw_mad(w, LLVMBuildNSWAdd(B, LLVMBuildNSWMul(B, n, c, ""), chan, ""), g->h * g->w, NULL);
    LLVMValueRef dst_chan = lw_mad(w, ic, p->xs_chan, NULL);
    for (int a = 0; a < p->nry; a++) {
        for (int b = 0; b < p->nrx; b++) {
            int64_t ry = p->ry[a], rx = p->rx[b];
            LLVMValueRef dst = lw_mad(w, lw_i64(w, a * p->nrx + b), p->xs_phase, dst_chan);
            /* columns j whose input column j*sw + rx - pl lies inside the data */
            int64_t off = rx - g->pl, jl, jr;
            jl = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
            jr = g->w - off <= 0 ? 0 : (g->w - off + g->sw - 1) / g->sw;
            if (jl > p->pw)
                jl = p->pw;
            if (jr > p->pw)
                jr = p->pw;
            if (jr < jl)
                jr = jl;
            LLVMValueRef i = lw_for(w, &lr, lw_i64(w, 0), band_rows, 1, "r");
            LLVMValueRef iy = LLVMBuildNSWAdd(
                B, lw_mad(w, LLVMBuildNSWAdd(B, oy0, i, ""), g->sh, NULL), lw_i64(w, ry - g->pt), "");
            LLVMValueRef row = lw_mad(w, i, p->pw, dst);
            LLVMValueRef inside =
                LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntSGE, iy, lw_i64(w, 0), ""),
                             LLVMBuildICmp(B, LLVMIntSLT, iy, lw_i64(w, g->h), ""), "");
            LLVMValueRef c0 = LLVMBuildSelect(B, inside, lw_i64(w, jl), lw_i64(w, p->pw), "");
            LLVMValueRef c1 = LLVMBuildSelect(B, inside, lw_i64(w, jr), lw_i64(w, p->pw), "");
            LLVMValueRef j = lw_for(w, &lj, lw_i64(w, 0), c0, 1, "j");
            lw_store(w, xp, BYOCL_FLOAT32, LLVMBuildNSWAdd(B, row, j, ""), fconst(w, 0));
            lj.no_unroll = true;
            lw_for_end(w, &lj);
            j = lw_for(w, &lj, c0, c1, 1, "j");
            LLVMValueRef src = lw_mad(w, iy, g->w, lw_mad(w, j, g->sw, lw_i64(w, off)));
            LLVMValueRef v = lw_load(w, x, g->din, LLVMBuildNSWAdd(B, src_plane, src, ""));
            lw_store(w, xp, BYOCL_FLOAT32, LLVMBuildNSWAdd(B, row, j, ""), v);
            lj.no_unroll = true;
            lw_for_end(w, &lj);
            j = lw_for(w, &lj, c1, lw_i64(w, p->pw), 1, "j");
            lw_store(w, xp, BYOCL_FLOAT32, LLVMBuildNSWAdd(B, row, j, ""), fconst(w, 0));
            lj.no_unroll = lr.no_unroll = true;
            lw_for_end(w, &lj);
            lw_for_end(w, &lr);
        }
    }
    li.no_unroll = true;
    lw_for_end(w, &li);
}

/* Where tap (kh, kw) of grid position 0 lies in X' (or in the input, p->direct). */
static int64_t tap_offset(const conv_geom *g, const conv_plan *p, int64_t kh, int64_t kw)
{
    if (p->direct)
        return kh * g->dh * g->w + kw * g->dw;
    int a = index_of(p->ry, p->nry, kh * g->dh % g->sh);
    int b = index_of(p->rx, p->nrx, kw * g->dw % g->sw);
    return (a * p->nrx + b) * p->xs_phase + (kh * g->dh / g->sh) * p->pw + kw * g->dw / g->sw;
}

/* The counts of a float conv that its code reads from ctx (lw_ctx_int): its channels
 * always; its map's sizes and the bands and chunks over it where `map_from_ctx`, else
 * constants (conv_counts_init). */
typedef struct conv_counts {
    LLVMValueRef ic, og;                      /* input and output channels per group */
    LLVMValueRef units_per_group, units, units_per_chunk;
    LLVMValueRef oh, ow;                      /* output rows and columns */
    LLVMValueRef in_w, in_plane;              /* input row and channel, in floats */
    LLVMValueRef rows, bands, chunks, tiles;  /* conv_plan's */
} conv_counts;

/* Everything one tile needs. */
typedef struct tile_ctx {
    const conv_geom *g;
    const conv_plan *p;
    int node;
    const ew_space *space;
    const ew_space *flat;   /* by channel: the coalesced space of a flat epilogue, or NULL */
    LLVMValueRef oh, ow;    /* the output's rows and columns (conv_counts) */
    LLVMValueRef xb;        /* X' (or the input plane of the group's first channel) */
    LLVMValueRef x_chan;    /* floats between channels of xb */
    LLVMValueRef wunit;     /* packed weights of the unit */
    LLVMValueRef tile;      /* [T][tile_stride] floats: V*VF by position, span + VF by channel */
    int64_t tile_stride;
    LLVMValueRef n, oc0, oc_end, oy0, qb;
    LLVMValueRef q_end;     /* where the stores of the unit's outputs of this task end: qb,
                               or before it with split units */
    LLVMValueRef ic;        /* input channels per group (lw_ctx_int) */
    LLVMValueRef first;     /* by channel: the tile is the first since the unit's (or the
                               block's) weights were last read (p->weights_ahead) */
    LLVMValueRef next_at;   /* by channel, p->weights_ahead: floats from wunit to the
                               weights whose lines this tile prefetches, a slice a channel
                               (emit_next_weights_prefetch) */
    LLVMValueRef acc[64];   /* allocas */
} tile_ctx;

/* Channels [lo, hi) of one tile's reduction: a block of the input channels, or all. `part`,
 * when not NULL, holds the tile's sums over the channels before lo, which the block adds to
 * (`first`: there are none yet, start from zero), and receives them back. */
typedef struct channel_block {
    LLVMValueRef lo, hi, part, first;
} channel_block;

/* Opens the loop over the block's input channels, the tile's n accumulators set before it
 * (zero, or the block's partial sums) and loaded into acc[] in its body;
 * emit_channels_end stores them (and back into the partial sums) and closes it. The taps
 * of one channel go in between. Returns the channel. */
static LLVMValueRef emit_channels_begin(lw *w, tile_ctx *c, const channel_block *cb, int n,
                                        lw_loop *li, LLVMValueRef *acc)
{
    LLVMBuilderRef B = w->B;
    int VF = c->p->vf;
    for (int i = 0; i < n; i++)
        LLVMBuildStore(B, LLVMConstNull(w->t_vf), c->acc[i]);
    if (cb->part) { /* a branch, not a select: the first block's `part` is not written yet */
        lw_if later;
        lw_if_begin(w, &later, LLVMBuildNot(B, cb->first, ""), "later_block");
        for (int i = 0; i < n; i++)
            LLVMBuildStore(B, lw_vload(w, cb->part, lw_i64(w, (int64_t)i * VF), VF, (unsigned)VF * 4),
                           c->acc[i]);
        lw_if_end(w, &later);
    }
    LLVMValueRef ic = lw_for(w, li, cb->lo, cb->hi, 1, "ic");
    for (int i = 0; i < n; i++)
        acc[i] = LLVMBuildLoad2(B, w->t_vf, c->acc[i], "");
    return ic;
}

static void emit_channels_end(lw *w, tile_ctx *c, const channel_block *cb, int n, lw_loop *li,
                              LLVMValueRef *acc)
{
    for (int i = 0; i < n; i++)
        LLVMBuildStore(w->B, acc[i], c->acc[i]);
    li->no_unroll = true;
    lw_for_end(w, li);
    int VF = c->p->vf;
    for (int i = 0; cb->part && i < n; i++)
        lw_vstore(w, cb->part, lw_i64(w, (int64_t)i * VF), LLVMBuildLoad2(w->B, w->t_vf, c->acc[i], ""),
                  (unsigned)VF * 4);
}

/* Taps one input channel's reduction unrolls in full; a kernel of more (7x7 and 5x5 stems)
 * unrolls one kernel row's taps inside a loop over its rows. The 49 taps of a 7x7 stem
 * unrolled made its function a fifth of googlenet's host code and a quarter of its
 * compile time (0.66 s of 2.5) and ran no faster (docs/host-codegen.md). */
#define TAPS_UNROLLED 16

/* The taps of one input channel, (kh, kw) in order: all unrolled, or a loop over the
 * kernel rows (`looped`) whose body unrolls one row. */
typedef struct tap_rows {
    bool looped;
    lw_loop loop;
    LLVMValueRef kh;     /* looped: the kernel row */
    LLVMValueRef offset; /* looped: tap (kh, 0)'s offset (tap_offset) */
} tap_rows;

/* Opens the taps of a channel; returns how many kernel rows the body unrolls (all, or
 * one). Looped, the tile's n accumulators acc[] go through c->acc around the loop. The
 * row offsets need dh = 1 through X' (stride phases kh % SH in order) or the input read
 * in place. */
static int64_t tap_rows_begin(lw *w, tile_ctx *c, tap_rows *r, LLVMValueRef *acc, int n)
{
    const conv_geom *g = c->g;
    const conv_plan *p = c->p;
    LLVMBuilderRef B = w->B;
    r->looped = g->kh * g->kw > TAPS_UNROLLED && g->kh > 1 && (p->direct || g->dh == 1);
    if (!r->looped)
        return g->kh;
    for (int i = 0; i < n; i++)
        LLVMBuildStore(B, acc[i], c->acc[i]);
    r->kh = lw_for(w, &r->loop, lw_i64(w, 0), lw_i64(w, g->kh), 1, "kh");
    if (p->direct) {
        r->offset = LLVMBuildNSWMul(B, r->kh, lw_i64(w, g->dh * g->w), "");
    } else {
        LLVMValueRef phase = LLVMBuildURem(B, r->kh, lw_i64(w, g->sh), "");
        LLVMValueRef row = LLVMBuildUDiv(B, r->kh, lw_i64(w, g->sh), "");
        r->offset = LLVMBuildNSWAdd(B, LLVMBuildNSWMul(B, phase, lw_i64(w, p->nrx * p->xs_phase), ""),
                                    LLVMBuildNSWMul(B, row, lw_i64(w, p->pw), ""), "");
    }
    for (int i = 0; i < n; i++)
        acc[i] = LLVMBuildLoad2(B, w->t_vf, c->acc[i], "");
    return 1;
}

/* Tap (kh, kw) of the body (kh: its unrolled row): its offset (tap_offset) and its index
 * in the channel's weights, kh * KW + kw. */
static LLVMValueRef tap_at(lw *w, const tile_ctx *c, const tap_rows *r, int64_t kh, int64_t kw,
                           LLVMValueRef *index)
{
    const conv_geom *g = c->g;
    if (!r->looped) {
        *index = lw_i64(w, kh * g->kw + kw);
        return lw_i64(w, tap_offset(g, c->p, kh, kw));
    }
    *index = lw_mad(w, r->kh, g->kw, lw_i64(w, kw));
    return LLVMBuildNSWAdd(w->B, r->offset, lw_i64(w, tap_offset(g, c->p, 0, kw)), "");
}

static void tap_rows_end(lw *w, tile_ctx *c, tap_rows *r, LLVMValueRef *acc, int n)
{
    if (!r->looped)
        return;
    for (int i = 0; i < n; i++)
        LLVMBuildStore(w->B, acc[i], c->acc[i]);
    r->loop.no_unroll = true;
    lw_for_end(w, &r->loop);
    for (int i = 0; i < n; i++)
        acc[i] = LLVMBuildLoad2(w->B, w->t_vf, c->acc[i], "");
}

/* Where the tile at s0 starts: at s0, or with p->overlap_last, a band's last tile (one
 * that would run past the band's end, c->qb) a tile before that end, over positions of
 * the tile before it, which it computes again to the same values. Its results go to the
 * tile buffer at its start, which lies before the span's where the span is shorter than
 * a tile (the buffer has a tile's slack before its first row). */
static LLVMValueRef tile_start(lw *w, const tile_ctx *c, LLVMValueRef s0)
{
    if (!c->p->overlap_last)
        return s0;
    return min64(w, s0, LLVMBuildNSWSub(w->B, c->qb, lw_i64(w, tile_positions(c->p)), ""));
}

/* Accumulates the T x V tile at q0 of X' (or of the input, p->direct) over input
 * channels and taps into c->acc.
 * `masked`: lanes at q >= qb are not read (the band's last tile). */
static void emit_accumulate(lw *w, tile_ctx *c, LLVMValueRef q0, bool masked)
{
    const conv_geom *g = c->g;
    const conv_plan *p = c->p;
    LLVMBuilderRef B = w->B;
    int T = p->t, V = p->v, VF = p->vf;
    LLVMTypeRef vt = w->t_vf;
    LLVMValueRef masks[8] = {NULL};
    if (masked) {
        LLVMValueRef lanes[64];
        for (int i = 0; i < VF; i++)
            lanes[i] = LLVMConstInt(w->t_i64, (unsigned long long)i, 0);
        LLVMValueRef iota = LLVMConstVector(lanes, (unsigned)VF);
        LLVMValueRef limit = lw_splat(w, c->qb, VF);
        for (int v = 0; v < V; v++) {
            LLVMValueRef start = lw_splat(w, LLVMBuildNSWAdd(B, q0, lw_i64(w, v * VF), ""), VF);
            masks[v] = LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildNSWAdd(B, start, iota, ""), limit, "");
        }
    }
    int64_t taps = g->kh * g->kw;
    lw_loop li;
    LLVMValueRef acc[64];
    channel_block all = {.lo = lw_i64(w, 0), .hi = c->ic};
    LLVMValueRef ic = emit_channels_begin(w, c, &all, T * V, &li, acc);
    LLVMValueRef xrow = LLVMBuildNSWAdd(B, LLVMBuildNSWMul(B, ic, c->x_chan, ""), q0, "");
    LLVMValueRef wic = lw_mad(w, ic, taps * T, NULL);
    tap_rows rows;
    int64_t kh_unrolled = tap_rows_begin(w, c, &rows, acc, T * V);
    for (int64_t kh = 0; kh < kh_unrolled; kh++) {
        for (int64_t kw = 0; kw < g->kw; kw++) {
            LLVMValueRef k;
            LLVMValueRef xtap = LLVMBuildNSWAdd(B, xrow, tap_at(w, c, &rows, kh, kw, &k), "");
            LLVMValueRef xs[8];
            for (int v = 0; v < V; v++) {
                LLVMValueRef at = LLVMBuildNSWAdd(B, xtap, lw_i64(w, v * VF), "");
                if (masked) {
                    LLVMTypeRef over[2] = {vt, w->t_ptr};
                    LLVMValueRef args[4] = {gep_f32(w, c->xb, at), lw_i32(w, 4), masks[v],
                                            LLVMConstNull(vt)};
                    xs[v] = lw_intrinsic(w, "llvm.masked.load", over, 2, args, 4);
                } else {
                    xs[v] = lw_vload(w, c->xb, at, VF, 4);
                }
            }
            LLVMValueRef wtap = lw_mad(w, k, T, wic);
            for (int t = 0; t < T; t++) {
                LLVMValueRef widx = LLVMBuildNSWAdd(B, wtap, lw_i64(w, t), "");
                LLVMValueRef wv = lw_splat(w, lw_load(w, c->wunit, BYOCL_FLOAT32, widx), VF);
                for (int v = 0; v < V; v++)
                    acc[t * V + v] = lw_fma(w, xs[v], wv, acc[t * V + v]);
            }
        }
    }
    tap_rows_end(w, c, &rows, acc, T * V);
    emit_channels_end(w, c, &all, T * V, &li, acc);
}

/* In the tile that reads a unit's weights first (c->first), prefetches the `n` floats at
 * `at` (an input channel's weights, every tap's) p->weights_ahead floats on, a line (16
 * floats) at a time: one test per channel, outside the taps. */
static void emit_weights_prefetch(lw *w, tile_ctx *c, LLVMValueRef at, int64_t n)
{
    const conv_plan *p = c->p;
    lw_if first;
    lw_if_begin(w, &first, c->first, "weights_ahead");
    for (int64_t off = 0; off < n; off += 16)
        lw_prefetch_f32(w, c->wunit, LLVMBuildNSWAdd(w->B, at, lw_i64(w, p->weights_ahead + off), ""),
                        LW_PREFETCH_L1);
    lw_if_end(w, &first);
}

/* The next block's weights (the rest of the unit's, or the chunk's next unit's first
 * block) are prefetched by the first tiles of a span, spread over their channel steps:
 * as many tiles as a channel's row of `row` floats holds lines, up to 8, each taking
 * `next_weights_stride` floats a step. */
static int64_t next_weights_tiles(int64_t row)
{
    int64_t n = row / 16;
    return n < 1 ? 1 : n > 8 ? 8 : n;
}

static int64_t next_weights_stride(int64_t row)
{
    int64_t n = next_weights_tiles(row);
    return (row + n - 1) / n;
}

/* Where the tile's prefetches start, in floats from the unit's weights (c->next_at): in
 * `next`, the block after the one read (`channels` channels of `row` floats), its share
 * of the prefetching tiles' (tile_in_span < next_weights_tiles) when `enabled`; else in
 * `current`, the block being read, whose lines are in L1. */
static void next_weights_plan(lw *w, tile_ctx *c, LLVMValueRef enabled, LLVMValueRef current,
                              LLVMValueRef next, LLVMValueRef tile_in_span, LLVMValueRef channels,
                              int64_t row)
{
    LLVMBuilderRef B = w->B;
    LLVMValueRef on = LLVMBuildAnd(
        B, enabled,
        LLVMBuildICmp(B, LLVMIntSLT, tile_in_span, lw_i64(w, next_weights_tiles(row)), ""), "");
    LLVMValueRef share = LLVMBuildNSWMul(B, LLVMBuildNSWMul(B, tile_in_span, channels, ""),
                                         lw_i64(w, next_weights_stride(row)), "");
    c->next_at = LLVMBuildSelect(B, on, LLVMBuildNSWAdd(B, next, share, ""), current, "");
}

/* At channel `i` of the block (from 0): the tile's next lines of the next block
 * (c->next_at), a line at a time. */
static void emit_next_weights_prefetch(lw *w, tile_ctx *c, LLVMValueRef i, int64_t row)
{
    int64_t stride = next_weights_stride(row);
    LLVMValueRef at = lw_mad(w, i, stride, c->next_at);
    for (int64_t off = 0; off < stride; off += 16)
        lw_prefetch_f32(w, c->wunit, LLVMBuildNSWAdd(w->B, at, lw_i64(w, off), ""), LW_PREFETCH_L2);
}

/* By channel: accumulates the CV x V tile of positions s0 .. s0 + V - 1 of the band (s =
 * row * OW + column; past the band's last output, the last output again, computed and not
 * stored) over the block's input channels and the taps into c->acc. */
static void emit_accumulate_by_channel(lw *w, tile_ctx *c, LLVMValueRef s0, const channel_block *cb,
                                       bool in_row)
{
    const conv_geom *g = c->g;
    const conv_plan *p = c->p;
    LLVMBuilderRef B = w->B;
    int CV = p->cv, V = p->v, VF = p->vf, T = p->t;
    /* each position's place in the PW-wide grid of X' (the input's rows, p->direct) */
    LLVMValueRef q[64], last = LLVMBuildNSWSub(B, c->qb, lw_i64(w, 1), "");
    for (int v = 0; v < V && in_row; v++)
        q[v] = LLVMBuildNSWAdd(B, s0, lw_i64(w, v), "");
    for (int v = 0; v < V && !in_row; v++) {
        q[v] = min64(w, LLVMBuildNSWAdd(B, s0, lw_i64(w, v), ""), last);
        if (p->pw != g->ow) /* past each row's end, the grid's halo columns */
            q[v] = lw_mad(w, LLVMBuildSDiv(B, q[v], lw_i64(w, g->ow), ""), p->pw - g->ow, q[v]);
        /* Taps side by side: where LLVM can prove the positions consecutive it merges
         * tap kw's broadcast of position v with tap kw+1's of position v-1 and keeps
         * the values live across taps, which spills the tile (docs/host-codegen.md). */
        if (g->kw > 1)
            q[v] = lw_opaque(w, q[v]);
    }
    int64_t taps = g->kh * g->kw;
    lw_loop li;
    LLVMValueRef acc[64];
    LLVMValueRef ic = emit_channels_begin(w, c, cb, CV * V, &li, acc);
    LLVMValueRef xrow = LLVMBuildNSWMul(B, ic, c->x_chan, "");
    LLVMValueRef wic = lw_mad(w, ic, taps * T, NULL);
    if (p->prefetch_ahead > 0) {
        LLVMValueRef ahead = LLVMBuildNSWAdd(B, q[0], lw_i64(w, p->prefetch_ahead), "");
        lw_prefetch_f32(w, c->xb, LLVMBuildNSWAdd(B, xrow, ahead, ""), LW_PREFETCH_L1);
    }
    if (p->weights_ahead > 0) {
        emit_weights_prefetch(w, c, wic, taps * T);
        emit_next_weights_prefetch(w, c, LLVMBuildNSWSub(B, ic, cb->lo, ""), taps * T);
    }
    tap_rows rows;
    int64_t kh_unrolled = tap_rows_begin(w, c, &rows, acc, CV * V);
    for (int64_t kh = 0; kh < kh_unrolled; kh++) {
        for (int64_t kw = 0; kw < g->kw; kw++) {
            LLVMValueRef k;
            LLVMValueRef at = LLVMBuildNSWAdd(B, xrow, tap_at(w, c, &rows, kh, kw, &k), "");
            LLVMValueRef wtap = lw_mad(w, k, T, wic);
            LLVMValueRef wv[8];
            for (int t = 0; t < CV; t++)
                wv[t] = lw_vload(w, c->wunit, LLVMBuildNSWAdd(B, wtap, lw_i64(w, t * VF), ""), VF,
                                 (unsigned)VF * 4);
            for (int v = 0; v < V; v++) {
                LLVMValueRef xv = lw_splat(
                    w, lw_load(w, c->xb, BYOCL_FLOAT32, LLVMBuildNSWAdd(B, at, q[v], "")), VF);
                for (int t = 0; t < CV; t++)
                    acc[v * CV + t] = lw_fma(w, wv[t], xv, acc[v * CV + t]);
            }
        }
    }
    tap_rows_end(w, c, &rows, acc, CV * V);
    emit_channels_end(w, c, cb, CV * V, &li, acc);
}

/* By channel: the tile at s0 (emit_accumulate_by_channel). On a grid without halo
 * columns (PW = OW: 1x1 and KW = 1 convs) a whole tile's positions are consecutive in
 * X' (or the input), one pointer and constant offsets; else, and for the band's last
 * tile, whose positions past the band's end read its last output, each position's place
 * is a register of its own. A 1x1 tile of 12 or 24 positions had held 12 or 24 pointers,
 * more than the general registers, and spilled them in its inner loop. Where every tile
 * is whole (p->whole_tiles), or the last one starts over the one before (p->overlap_last,
 * tile_start), there is no partial tile to emit. */
static void emit_tile_by_channel(lw *w, tile_ctx *c, LLVMValueRef s0, const channel_block *cb)
{
    if (c->p->pw != c->g->ow || c->p->whole_tiles || c->p->overlap_last) {
        emit_accumulate_by_channel(w, c, tile_start(w, c, s0), cb, c->p->pw == c->g->ow);
        return;
    }
    LLVMBuilderRef B = w->B;
    LLVMValueRef whole = LLVMBuildICmp(B, LLVMIntSLE, LLVMBuildNSWAdd(B, s0, lw_i64(w, c->p->v), ""), c->qb, "");
    LLVMBasicBlockRef in_row = LLVMAppendBasicBlockInContext(w->C, w->body, "tile.in_row");
    LLVMBasicBlockRef last = LLVMAppendBasicBlockInContext(w->C, w->body, "tile.last");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(w->C, w->body, "tile.done");
    LLVMBuildCondBr(B, whole, in_row, last);
    LLVMPositionBuilderAtEnd(B, in_row);
    emit_accumulate_by_channel(w, c, s0, cb, true);
    LLVMBuildBr(B, done);
    LLVMPositionBuilderAtEnd(B, last);
    emit_accumulate_by_channel(w, c, s0, cb, false);
    LLVMBuildBr(B, done);
    LLVMPositionBuilderAtEnd(B, done);
}

/* Results [T][tile_stride] in c->tile for grid positions q0 .. q0 + span - 1 of the band (a grid
 * `grid_w` wide: PW by position, OW by channel), to the output rows they cover, each row
 * segment through the fused epilogue. Positions at or past c->qb are not stored. */
static byocl_status emit_store_span(lw *w, tile_ctx *c, LLVMValueRef q0, int64_t span, int64_t grid_w)
{
    const conv_geom *g = c->g;
    LLVMBuilderRef B = w->B;
    LLVMValueRef q_end = min64(w, LLVMBuildNSWAdd(B, q0, lw_i64(w, span), ""), c->q_end);
    LLVMValueRef r0 = LLVMBuildSDiv(B, q0, lw_i64(w, grid_w), "");
    LLVMValueRef r1 = LLVMBuildSDiv(B, LLVMBuildNSWSub(B, q_end, lw_i64(w, 1), ""), lw_i64(w, grid_w), "");
    LLVMValueRef n_oc = LLVMBuildNSWSub(B, c->oc_end, c->oc0, "");
    lw_loop lt, lr, lx;
    LLVMValueRef t = lw_for(w, &lt, lw_i64(w, 0), min64(w, n_oc, lw_i64(w, c->p->t)), 1, "t");
    LLVMValueRef oc = LLVMBuildNSWAdd(B, c->oc0, t, "oc");
    LLVMValueRef r = lw_for(w, &lr, r0, LLVMBuildNSWAdd(B, r1, lw_i64(w, 1), ""), 1, "r");
    LLVMValueRef row_q = lw_mad(w, r, grid_w, NULL);
    LLVMValueRef x0 = max64(w, lw_i64(w, 0), LLVMBuildNSWSub(B, q0, row_q, ""));
    LLVMValueRef x1 = min64(w, lw_i64(w, g->ow), LLVMBuildNSWSub(B, q_end, row_q, ""));
    LLVMValueRef ox = lw_for(w, &lx, x0, x1, 1, "ox");
    LLVMValueRef ti = lw_mad(w, t, c->tile_stride,
                             LLVMBuildNSWSub(B, LLVMBuildNSWAdd(B, row_q, ox, ""), q0, ""));
    LLVMValueRef accv = lw_load(w, c->tile, BYOCL_FLOAT32, ti);
    byocl_status st = store_output(w, c->node, c->space, c->n, oc, LLVMBuildNSWAdd(B, c->oy0, r, ""),
                                   ox, lw_round(w, accv, g->dout), g);
    lx.no_unroll = lr.no_unroll = lt.no_unroll = true;
    lx.fold_tail = g->ow < 64;
    lw_for_end(w, &lx);
    lw_for_end(w, &lr);
    lw_for_end(w, &lt);
    return st;
}

/* Whether one loop can run along a span's outputs of one channel (contiguous in NCHW)
 * through the epilogue, and its coalesced space `flat`: the last coalesced dim must hold
 * the output's rows and columns (no operand of the epilogue breaks them apart). Row by
 * row, short rows ran as loops of masked vector loads and stores (vmaskmovps), which
 * Zen 2 executes slowly: a 1x1 conv of 16 -> 384 channels on a 14x14 map, one thread,
 * spent 0.145 ms there against 0.041 ms in one loop. */
static bool flat_space(lw *w, int node, ew_space *flat)
{
    if (ew_space_init(w, &lw_node(w, node)->type->shape, node, true, flat) != BYOCL_OK)
        return false;
    int last = flat->crank - 1;
    int first = last > 0 ? flat->clast[last - 1] + 1 : 0;
    for (int d = flat->rank - 2; d < flat->rank; d++)
        if (flat->dims[d] > 1 && (d < first || d > flat->clast[last]))
            return false;
    return true;
}

/* With a flat space (by channel, or by position on a grid without halo columns, where q is
 * s): results [T][tile_stride] in c->tile for the band's outputs q0 .. q0 + span - 1 go out
 * channel by channel, each channel's in one loop along the output (a span is contiguous
 * there). Output (n, oc, oy0 + s / OW, s % OW) lies at
 * L0 + s, L0 = ((n * O + oc) * OH + oy0) * OW; since rows and columns lie inside the last
 * coalesced dim, its index is that of (n, oc, oy0, 0) plus s, and the others' are those
 * of (n, oc, oy0, 0). */
static byocl_status emit_store_span_flat(lw *w, tile_ctx *c, LLVMValueRef q0, int64_t span)
{
    const conv_geom *g = c->g;
    const ew_space *f = c->flat;
    LLVMBuilderRef B = w->B;
    LLVMValueRef q_end = min64(w, LLVMBuildNSWAdd(B, q0, lw_i64(w, span), ""), c->q_end);
    LLVMValueRef n_oc = LLVMBuildNSWSub(B, c->oc_end, c->oc0, "");
    lw_loop lt, ls;
    LLVMValueRef t = lw_for(w, &lt, lw_i64(w, 0), min64(w, n_oc, lw_i64(w, c->p->t)), 1, "t");
    LLVMValueRef oc = LLVMBuildNSWAdd(B, c->oc0, t, "oc");
    /* the output's dims, its map's from the conv's counts */
    LLVMValueRef dims[4] = {lw_i64(w, g->n), lw_i64(w, g->o), c->oh, c->ow};
    LLVMValueRef row0 = LLVMBuildNSWAdd(
        B, LLVMBuildNSWMul(B, lw_mad(w, c->n, g->o, oc), dims[2], ""), c->oy0, "");
    LLVMValueRef l0 = LLVMBuildNSWMul(B, row0, dims[3], "");
    ew_env e = {.w = w, .space = f, .anchor = c->node, .exact = false};
    /* Coalesced dim k's index from (n, oc, oy0, 0), the dims it merges (no division, and
     * the output channels only multiply n) */
    LLVMValueRef idx[4] = {c->n, oc, c->oy0, lw_i64(w, 0)};
    for (int k = 0, d = 0; k < f->crank; k++) {
        LLVMValueRef at = idx[d];
        for (d++; d <= f->clast[k]; d++)
            at = LLVMBuildNSWAdd(B, LLVMBuildNSWMul(B, at, dims[d], ""), idx[d], "");
        e.cidx[k] = at;
    }
    LLVMValueRef last0 = e.cidx[f->crank - 1];
    LLVMValueRef s = lw_for(w, &ls, q0, q_end, 1, "s");
    e.cidx[f->crank - 1] = LLVMBuildNSWAdd(B, last0, s, "");
    LLVMValueRef ti = lw_mad(w, t, c->tile_stride, LLVMBuildNSWSub(B, s, q0, ""));
    e.anchor_value = lw_round(w, lw_load(w, c->tile, BYOCL_FLOAT32, ti), g->dout);
    byocl_value_ref root = ew_root(w);
    LLVMValueRef v;
    byocl_status st = ew_eval(&e, root, &v);
    if (st == BYOCL_OK)
        lw_store(w, lw_output(w, root), lw_value_type(w, root)->dtype, LLVMBuildNSWAdd(B, l0, s, ""), v);
    ls.no_unroll = lt.no_unroll = true;
    lw_for_end(w, &ls);
    lw_for_end(w, &lt);
    return st != BYOCL_OK ? st : w->status;
}

/* By position: the T x V accumulators are the tile's [T][V*VF] results as they are,
 * stored `at` positions into each channel's row of the buffer (aligned but for a last
 * tile that starts over the one before). */
static void emit_tile_to_buffer(lw *w, tile_ctx *c, LLVMValueRef at)
{
    int V = c->p->v, VF = c->p->vf;
    unsigned align = c->p->overlap_last ? 4 : (unsigned)VF * 4;
    for (int t = 0; t < c->p->t; t++)
        for (int v = 0; v < V; v++) {
            LLVMValueRef pos = LLVMBuildNSWAdd(w->B, at, lw_i64(w, (int64_t)v * VF), "");
            lw_vstore(w, c->tile, lw_mad(w, lw_i64(w, t), c->tile_stride, pos),
                      LLVMBuildLoad2(w->B, w->t_vf, c->acc[t * V + v], ""), align);
        }
}

/* The VF x VF block of lanes r[0..VF-1] transposed in place (lane j of r[i] becomes
 * lane i of r[j]): log2(VF) rounds of two-input shuffles that swap the off-diagonal
 * blocks of 1, 2, 4... lanes between rows. */
static void transpose_lanes(lw *w, LLVMValueRef *r, int VF)
{
    LLVMValueRef lo_mask[16], hi_mask[16];
    for (int s = 1; s < VF; s *= 2) {
        /* rows i and i+s (bit s of i clear): lane j with bit s set of row i trades places
         * with lane j - s of row i+s */
        for (int j = 0; j < VF; j++) {
            lo_mask[j] = lw_i32(w, (j & s) ? VF + j - s : j);
            hi_mask[j] = lw_i32(w, (j & s) ? VF + j : j + s);
        }
        LLVMValueRef lo = LLVMConstVector(lo_mask, (unsigned)VF);
        LLVMValueRef hi = LLVMConstVector(hi_mask, (unsigned)VF);
        for (int i = 0; i < VF; i++) {
            if (i & s)
                continue;
            LLVMValueRef a = r[i], b = r[i + s];
            r[i] = LLVMBuildShuffleVector(w->B, a, b, lo, "");
            r[i + s] = LLVMBuildShuffleVector(w->B, a, b, hi, "");
        }
    }
}

/* By channel: the accumulators hold VF channels of one position each. They go to the
 * span's buffer [T][tile_stride] at `at` transposed, so that the epilogue reads each
 * channel's outputs in order and vectorizes along the row. Up to VF positions at a time
 * make a VF x VF block (missing positions poison), transposed in registers
 * (transpose_lanes); each channel's row is then one vector store. Its lanes past the tile's
 * positions land on the next tile's places, which that tile overwrites, or on the row's
 * padding past the span (tile_stride = span + VF), which is never read. A copy lane by
 * lane (an extract and a store per output) took a quarter of a 1x1 conv of 16 input
 * channels. With several vectors of channels (CV > 1) the accumulators go through an
 * array on the stack that a loop over those vectors reads: CV transpositions unrolled had
 * been a quarter of a by-channel conv's code (340 instructions of googlenet's 1362 in its
 * 3x3 conv on 7x7), and the loop compiles googlenet 7% faster and runs as fast. */
static void emit_tile_transposed(lw *w, tile_ctx *c, LLVMValueRef at)
{
    const conv_plan *p = c->p;
    LLVMBuilderRef B = w->B;
    int VF = p->vf, CV = p->cv;
    LLVMValueRef regs = NULL; /* [V][CV][VF] floats */
    if (CV > 1) {
        regs = lw_alloca_array(w, w->t_f32, (int64_t)p->v * CV * VF, 64, "tile_regs");
        for (int i = 0; i < p->v * CV; i++)
            lw_vstore(w, regs, lw_i64(w, (int64_t)i * VF), LLVMBuildLoad2(B, w->t_vf, c->acc[i], ""),
                      (unsigned)VF * 4);
    }
    for (int v0 = 0; v0 < p->v; v0 += VF) {
        lw_loop lt;
        LLVMValueRef t = regs ? lw_for(w, &lt, lw_i64(w, 0), lw_i64(w, CV), 1, "t") : lw_i64(w, 0);
        LLVMValueRef r[16];
        for (int i = 0; i < VF; i++) {
            if (v0 + i >= p->v)
                r[i] = LLVMGetPoison(w->t_vf);
            else if (regs) /* accumulator (v0 + i) * CV + t */
                r[i] = lw_vload(w, regs, lw_mad(w, lw_mad(w, lw_i64(w, v0 + i), CV, t), VF, NULL),
                                VF, (unsigned)VF * 4);
            else
                r[i] = LLVMBuildLoad2(B, w->t_vf, c->acc[v0 + i], "");
        }
        transpose_lanes(w, r, VF);
        LLVMValueRef pos = LLVMBuildNSWAdd(B, at, lw_i64(w, v0), "");
        LLVMValueRef ch0 = lw_mad(w, t, VF, NULL);
        for (int j = 0; j < VF; j++)
            lw_vstore(w, c->tile, lw_mad(w, LLVMBuildNSWAdd(B, ch0, lw_i64(w, j), ""), c->tile_stride, pos),
                      r[j], 4);
        if (regs) {
            lt.no_unroll = true;
            lw_for_end(w, &lt);
        }
    }
}

static LLVMValueRef call_alloc(lw *w, LLVMValueRef bytes)
{
    LLVMTypeRef i64 = w->t_i64;
    LLVMValueRef ptr = lw_call_rt(w, "byocl_llvm_rt_alloc", w->t_ptr, &i64, 1, &bytes);
    lw_fail_if(w, LLVMBuildIsNull(w->B, ptr, ""), KERR_NOMEM);
    return ptr;
}

static void call_free(lw *w, LLVMValueRef ptr)
{
    LLVMTypeRef t = w->t_ptr;
    lw_call_rt(w, "byocl_llvm_rt_free", w->t_void, &t, 1, &ptr);
}

/* A count of the conv: from ctx or a constant. */
static LLVMValueRef conv_count(lw *w, int64_t value, bool from_ctx)
{
    return from_ctx ? lw_ctx_int(w, value) : lw_i64(w, value);
}

/* The counts of the conv (conv_counts), in an order that is the same for every conv. A 1x1
 * conv that reads its input in place (stride 1, no padding) addresses its map only
 * through its sizes, the bands' rows and the tasks' split, so those come from ctx:
 * such convs on maps of other sizes (googlenet's on 28x28, 14x14 and 7x7) then share one
 * function where their tiles, blocks and epilogues agree. Other convs keep them
 * constant: the taps' offsets in X' depend on its width. */
static conv_counts conv_counts_init(lw *w, const conv_geom *g, const conv_plan *p)
{
    bool map_from_ctx = p->direct && g->kh == 1 && g->kw == 1;
    conv_counts k = {.ic = lw_ctx_int(w, g->ic), .og = lw_ctx_int(w, g->og),
                     .units_per_group = lw_ctx_int(w, p->units_per_group),
                     .units = lw_ctx_int(w, p->units),
                     .units_per_chunk = lw_ctx_int(w, p->units_per_chunk)};
    k.oh = conv_count(w, g->oh, map_from_ctx);
    k.ow = conv_count(w, g->ow, map_from_ctx);
    k.in_w = conv_count(w, g->w, map_from_ctx);
    k.in_plane = conv_count(w, g->h * g->w, map_from_ctx);
    k.rows = conv_count(w, p->rows, map_from_ctx);
    k.bands = conv_count(w, p->bands, map_from_ctx);
    k.chunks = conv_count(w, p->chunks, map_from_ctx);
    k.tiles = conv_count(w, p->tiles, map_from_ctx);
    return k;
}

/* BYOCL_LLVM_VERBOSE: a conv's geometry and its `schedule`, on stderr. */
static void print_conv_plan(lw *w, const conv_geom *g, const char *schedule)
{
    if (!getenv("BYOCL_LLVM_VERBOSE"))
        return;
    fprintf(stderr, "byocl llvm: %s: conv %lldx%lldx%lld -> %lldx%lldx%lld, %lldx%lld /%lld: %s\n",
            w->grp->name, (long long)g->c, (long long)g->h, (long long)g->w, (long long)g->o,
            (long long)g->oh, (long long)g->ow, (long long)g->kh, (long long)g->kw, (long long)g->sh,
            schedule);
}

/* The plan of a float conv (print_conv_plan). */
static void print_plan(lw *w, const conv_geom *g, const conv_plan *p)
{
    char schedule[256];
    snprintf(schedule, sizeof schedule,
             "by %s %d x %d (%d channels x %d positions), %lld units, %lld bands of %lld rows, "
             "%lld chunks%s, blocks of %lld input channels%s",
             p->by_channel ? "channel" : "position", p->by_channel ? p->cv : p->t, p->v, p->t,
             (int)tile_positions(p), (long long)p->units, (long long)p->bands,
             (long long)p->rows, (long long)p->chunks,
             p->split_units ? " (units split at tiles)" : "", (long long)p->channel_block,
             p->direct ? ", input in place" : "");
    print_conv_plan(w, g, schedule);
}

static byocl_status lower_conv_float(lw *w, int node, const conv_geom *g, const ew_space *s)
{
    conv_plan p;
    plan_conv(w, g, &p);
    print_plan(w, g, &p);
    LLVMBuilderRef B = w->B;
    const byocl_node *nd = lw_node(w, node);
    LLVMValueRef x = lw_value_ptr(w, lv_resolve(w->fn, nd->args[0], -1));
    float *packed = packed_constant(w, node, g, &p);
    /* The channel counts come from ctx: convs that differ only in them (densenet121's 1x1
     * convs of a dense block, googlenet's branches) share one function. With one image,
     * the image index is 0 in the code, and the output channels drop out of every index
     * (they only ever multiply it). */
    conv_counts k = conv_counts_init(w, g, &p);
    LLVMValueRef unit_floats = lw_mad(w, k.ic, g->kh * g->kw * p.t, NULL);
    w->n_tasks = g->n * p.chunks * p.bands;

    /* Task -> (image, unit chunk, band). */
    LLVMValueRef band = LLVMBuildSRem(B, w->task, k.bands, "band");
    LLVMValueRef rest = LLVMBuildSDiv(B, w->task, k.bands, "");
    LLVMValueRef chunk = LLVMBuildSRem(B, rest, k.chunks, "chunk");
    LLVMValueRef n = g->n == 1 ? lw_i64(w, 0) : LLVMBuildSDiv(B, rest, k.chunks, "n");
    LLVMValueRef oy0 = LLVMBuildNSWMul(B, band, k.rows, "");
    LLVMValueRef rows = min64(w, k.rows, LLVMBuildNSWSub(B, k.oh, oy0, ""));
    LLVMValueRef u0 = LLVMBuildNSWMul(B, chunk, k.units_per_chunk, "");
    LLVMValueRef u1 = min64(w, LLVMBuildNSWAdd(B, u0, k.units_per_chunk, ""), k.units);
    /* With split units, the chunk's (unit, tile) pairs [f0, f1) */
    LLVMValueRef f0 = NULL, f1 = NULL, tiles = k.tiles;
    if (p.split_units) {
        LLVMValueRef pairs = LLVMBuildNSWMul(B, k.units, tiles, "");
        LLVMValueRef chunks = k.chunks;
        f0 = LLVMBuildSDiv(B, LLVMBuildNSWMul(B, chunk, pairs, ""), chunks, "f0");
        LLVMValueRef next = LLVMBuildNSWAdd(B, chunk, lw_i64(w, 1), "");
        f1 = LLVMBuildSDiv(B, LLVMBuildNSWMul(B, next, pairs, ""), chunks, "f1");
        u0 = LLVMBuildSDiv(B, f0, tiles, "");
        LLVMValueRef last_tile = LLVMBuildNSWSub(B, tiles, lw_i64(w, 1), "");
        u1 = LLVMBuildSDiv(B, LLVMBuildNSWAdd(B, f1, last_tile, ""), tiles, "");
    }
    /* the band's grid positions: rows - 1 rows of PW and one of OW */
    LLVMValueRef pw = p.pw == g->ow ? k.ow : lw_i64(w, p.pw);
    LLVMValueRef qb = LLVMBuildNSWAdd(
        B, LLVMBuildNSWMul(B, LLVMBuildNSWSub(B, rows, lw_i64(w, 1), ""), pw, ""), k.ow, "qb");
    /* One scratch block per call: X' (unless the input is read in place), then the
     * packed weights when they are not a constant (each call packs its task's units). */
    LLVMValueRef xp_bytes = lw_i64(w, 0), wp_bytes = lw_i64(w, 0);
    if (!p.direct) /* whole 64-byte lines */
        xp_bytes = LLVMBuildAnd(B, lw_mad(w, k.ic, p.xs_chan * 4, lw_i64(w, 63)), lw_i64(w, -64), "");
    if (!packed)
        wp_bytes = lw_mad(w, LLVMBuildNSWMul(B, unit_floats, k.units, ""), 4, NULL);
    LLVMValueRef scratch =
        !p.direct || !packed ? call_alloc(w, LLVMBuildNSWAdd(B, xp_bytes, wp_bytes, "")) : NULL;
    LLVMValueRef wp, xp = NULL;
    if (packed) {
        wp = lw_const_ptr(w, packed, NULL, packed);
    } else {
        LLVMValueRef off = xp_bytes;
        wp = LLVMBuildInBoundsGEP2(B, w->t_i8, scratch, &off, 1, "packed");
        LLVMValueRef wsrc = lw_value_ptr(w, lv_resolve(w->fn, nd->args[1], -1));
        LLVMTypeRef params[10] = {w->t_ptr, w->t_ptr, w->t_i64, w->t_i64, w->t_i64,
                                  w->t_i64, w->t_i64, w->t_i64, w->t_i64, w->t_i64};
        LLVMValueRef args[10] = {wp, wsrc, lw_i64(w, g->din == BYOCL_FLOAT16),
                                 lw_mad(w, k.og, g->groups, NULL), k.ic,
                                 lw_i64(w, g->kh * g->kw), k.og,
                                 lw_i64(w, p.t), u0, u1};
        lw_call_rt(w, "byocl_llvm_rt_pack_conv", w->t_void, params, 10, args);
    }

    tile_ctx c = {.g = g, .p = &p, .node = node, .space = s, .oh = k.oh, .ow = k.ow, .n = n,
                  .oy0 = oy0, .qb = qb, .q_end = qb, .ic = k.ic};
    ew_space flat;
    /* By position too where the grid has no halo columns (PW = OW: 1x1 and KW = 1 convs),
     * so that a tile's positions are a stretch of each channel's plane as well: one loop
     * per channel instead of one per row segment. One thread, Intel Xeon: mobilenet_v2's
     * 24 -> 144 1x1 conv on 56x56 0.17 -> 0.12 ms, mnasnet0_5 8% faster, shufflenet_v2_x0_5
     * 8%, mobilenet_v2 2-4%. */
    if ((p.by_channel || p.pw == g->ow) && flat_space(w, node, &flat))
        c.flat = &flat;
    int64_t span = p.by_channel ? by_channel_span(&p) : by_position_span(&p, c.flat != NULL);
    int n_acc = p.by_channel ? p.cv * p.v : p.t * p.v;
    c.tile_stride = p.by_channel ? span + p.vf : span;
    /* a tile's slack (whole lines) before the first row for a last tile that starts before
     * its span (tile_start) */
    int64_t before = p.overlap_last ? (tile_positions(&p) + 15) / 16 * 16 : 0;
    c.tile = lw_alloca_array(w, w->t_f32, p.t * c.tile_stride + before, 64, "tile");
    if (before)
        c.tile = gep_f32(w, c.tile, lw_i64(w, before));
    for (int i = 0; i < n_acc; i++)
        c.acc[i] = lw_alloca(w, w->t_vf, "acc");
    if (!p.direct) {
        xp = scratch;
        c.x_chan = lw_i64(w, p.xs_chan);
    } else {
        c.x_chan = k.in_plane;
    }

    /* Units of the chunk, group by group: X' is filled once per group. */
    lw_loop lu, lq;
    LLVMValueRef u = lw_for(w, &lu, u0, u1, 1, "unit");
    LLVMValueRef grp = LLVMBuildSDiv(B, u, k.units_per_group, "group");
    LLVMValueRef in_grp = LLVMBuildSRem(B, u, k.units_per_group, "");
    if (!p.direct) {
        LLVMValueRef new_group = LLVMBuildOr(B, LLVMBuildICmp(B, LLVMIntEQ, u, u0, ""),
                                             LLVMBuildICmp(B, LLVMIntEQ, in_grp, lw_i64(w, 0), ""), "");
        lw_if fill;
        lw_if_begin(w, &fill, new_group, "prep");
        emit_prep(w, g, &p, x, xp, n, grp, oy0, rows, k.ic);
        lw_if_end(w, &fill);
        c.xb = xp;
    } else {
        LLVMValueRef chan0 = LLVMBuildNSWMul(
            B, LLVMBuildNSWAdd(B, lw_mad(w, n, g->groups, NULL), grp, ""), k.ic, "");
        LLVMValueRef at = LLVMBuildNSWAdd(B, LLVMBuildNSWMul(B, chan0, k.in_plane, ""),
                                          LLVMBuildNSWMul(B, oy0, k.in_w, ""), "");
        c.xb = gep_f32(w, x, at);
    }
    c.wunit = gep_f32(w, wp, LLVMBuildNSWMul(B, u, unit_floats, ""));
    c.oc0 = LLVMBuildNSWAdd(B, LLVMBuildNSWMul(B, grp, k.og, ""), lw_mad(w, in_grp, p.t, NULL), "");
    c.oc_end = LLVMBuildNSWMul(B, LLVMBuildNSWAdd(B, grp, lw_i64(w, 1), ""), k.og, "");
    LLVMValueRef q0;
    byocl_status st;
    if (p.by_channel) {
        /* Spans of the band's outputs in order; tiles within a span. */
        c.qb = LLVMBuildNSWMul(B, rows, k.ow, "outputs");
        /* the unit's outputs of this task: all, or with split units its tiles in [f0, f1);
         * the spans and their stores end there */
        LLVMValueRef q_first = lw_i64(w, 0);
        c.q_end = c.qb;
        if (p.split_units) {
            LLVMValueRef pair0 = LLVMBuildNSWMul(B, u, tiles, "");
            LLVMValueRef lo = max64(w, LLVMBuildNSWSub(B, f0, pair0, ""), lw_i64(w, 0));
            LLVMValueRef hi = min64(w, LLVMBuildNSWSub(B, f1, pair0, ""), tiles);
            q_first = LLVMBuildNSWMul(B, lo, lw_i64(w, p.v), "q_first");
            c.q_end = min64(w, LLVMBuildNSWMul(B, hi, lw_i64(w, p.v), ""), c.qb);
        }
        lw_loop ls;
        q0 = lw_for(w, &lq, q_first, c.q_end, span, "span");
        LLVMValueRef span_end = min64(w, LLVMBuildNSWAdd(B, q0, lw_i64(w, span), ""), c.q_end);
        LLVMValueRef s0;
        if (p.channel_block >= g->ic) {
            channel_block all = {.lo = lw_i64(w, 0), .hi = k.ic};
            s0 = lw_for(w, &ls, q0, span_end, p.v, "s0");
            /* the unit's weights stay in L1 or L2 from one span to the next */
            c.first = LLVMBuildICmp(B, LLVMIntEQ, s0, q_first, "");
            if (p.weights_ahead > 0) /* the chunk's next unit */
                next_weights_plan(w, &c, LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildNSWAdd(B, u, lw_i64(w, 1), ""), u1, ""),
                                  lw_i64(w, 0), unit_floats,
                                  LLVMBuildSDiv(B, LLVMBuildNSWSub(B, s0, q_first, ""),
                                                lw_i64(w, p.v), ""),
                                  k.ic, g->kh * g->kw * p.t);
            emit_tile_by_channel(w, &c, s0, &all);
        } else {
            /* block by block, every tile's partial sums in `part` ([tile][CV*V][VF],
             * as the accumulators) between blocks */
            LLVMValueRef part = lw_alloca_array(w, w->t_f32, span * p.cv * p.vf, 64, "part");
            lw_loop lb;
            channel_block cb;
            cb.lo = lw_for(w, &lb, lw_i64(w, 0), k.ic, p.channel_block, "block");
            cb.hi = min64(w, LLVMBuildNSWAdd(B, cb.lo, lw_i64(w, p.channel_block), ""), k.ic);
            cb.first = LLVMBuildICmp(B, LLVMIntEQ, cb.lo, lw_i64(w, 0), "");
            s0 = lw_for(w, &ls, q0, span_end, p.v, "s0");
            LLVMValueRef at = lw_mad(w, LLVMBuildNSWSub(B, s0, q0, ""), p.cv * p.vf, NULL);
            cb.part = gep_f32(w, part, at);
            /* each block's weights are read again by the next span */
            c.first = LLVMBuildICmp(B, LLVMIntEQ, s0, q0, "");
            if (p.weights_ahead > 0) { /* the next block, or the chunk's next unit's first */
                LLVMValueRef row = lw_i64(w, g->kh * g->kw * p.t);
                LLVMValueRef more = LLVMBuildOr(
                    B, LLVMBuildICmp(B, LLVMIntSLT, cb.hi, k.ic, ""),
                    LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildNSWAdd(B, u, lw_i64(w, 1), ""), u1, ""), "");
                next_weights_plan(
                    w, &c, LLVMBuildAnd(B, more, LLVMBuildICmp(B, LLVMIntEQ, q0, q_first, ""), ""),
                    LLVMBuildNSWMul(B, cb.lo, row, ""), LLVMBuildNSWMul(B, cb.hi, row, ""),
                    LLVMBuildSDiv(B, LLVMBuildNSWSub(B, s0, q0, ""), lw_i64(w, p.v), ""),
                    LLVMBuildNSWSub(B, cb.hi, cb.lo, ""), g->kh * g->kw * p.t);
            }
            emit_tile_by_channel(w, &c, s0, &cb);
            ls.no_unroll = lb.no_unroll = true;
            lw_for_end(w, &ls);
            lw_for_end(w, &lb);
            /* the tiles' sums over every block, back into the accumulators */
            s0 = lw_for(w, &ls, q0, span_end, p.v, "s0");
            at = lw_mad(w, LLVMBuildNSWSub(B, s0, q0, ""), p.cv * p.vf, NULL);
            for (int i = 0; i < n_acc; i++)
                LLVMBuildStore(B, lw_vload(w, part, LLVMBuildNSWAdd(B, at, lw_i64(w, (int64_t)i * p.vf), ""),
                                           p.vf, (unsigned)p.vf * 4),
                               c.acc[i]);
        }
        emit_tile_transposed(w, &c, LLVMBuildNSWSub(B, tile_start(w, &c, s0), q0, ""));
        ls.no_unroll = true;
        lw_for_end(w, &ls);
        st = c.flat ? emit_store_span_flat(w, &c, q0, span) : emit_store_span(w, &c, q0, span, g->ow);
    } else {
        /* Tiles over the band's grid, span by span; a partial last one masks its loads
         * (unless it starts over the one before: p.overlap_last). */
        int64_t qt = (int64_t)p.v * p.vf;
        lw_loop lt;
        q0 = lw_for(w, &lq, lw_i64(w, 0), qb, span, "span");
        LLVMValueRef span_end = min64(w, LLVMBuildNSWAdd(B, q0, lw_i64(w, span), ""), qb);
        LLVMValueRef qs = lw_for(w, &lt, q0, span_end, qt, "q");
        LLVMValueRef at = tile_start(w, &c, qs);
        if (p.whole_tiles || p.overlap_last) {
            emit_accumulate(w, &c, at, false);
        } else {
            LLVMValueRef is_full =
                LLVMBuildICmp(B, LLVMIntSLE, LLVMBuildNSWAdd(B, qs, lw_i64(w, qt), ""), qb, "");
            LLVMBasicBlockRef full = LLVMAppendBasicBlockInContext(w->C, w->body, "tile.full");
            LLVMBasicBlockRef masked = LLVMAppendBasicBlockInContext(w->C, w->body, "tile.masked");
            LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(w->C, w->body, "tile.done");
            LLVMBuildCondBr(B, is_full, full, masked);
            LLVMPositionBuilderAtEnd(B, full);
            emit_accumulate(w, &c, qs, false);
            LLVMBuildBr(B, after);
            LLVMPositionBuilderAtEnd(B, masked);
            emit_accumulate(w, &c, qs, true);
            LLVMBuildBr(B, after);
            LLVMPositionBuilderAtEnd(B, after);
        }
        emit_tile_to_buffer(w, &c, LLVMBuildNSWSub(B, at, q0, ""));
        lt.no_unroll = true;
        lw_for_end(w, &lt);
        st = c.flat ? emit_store_span_flat(w, &c, q0, span)
                    : emit_store_span(w, &c, q0, span, p.pw);
    }
    lq.no_unroll = lu.no_unroll = true;
    lw_for_end(w, &lq);
    lw_for_end(w, &lu);
    if (scratch)
        call_free(w, scratch);
    return st;
}

/* ------------------------------------------------------------ depthwise convs */

/* Convs with one input channel per group (depthwise, any channel multiplier) and a
 * stride of at most 4: too little arithmetic per input element for X' to pay. Each output
 * row is computed in registers, V vectors of VF outputs at a time: per tap a load of the
 * input row — for stride s a load of s*VF floats de-interleaved by a shuffle — and one FMA
 * with the broadcast weight; rows of taps outside the input are skipped. Segments whose
 * taps all lie inside the row load plainly, the others by masked loads whose lanes
 * outside the input are zero (the padding). No copies, no padded grid. */
#define DW_V 4

static bool depthwise_schedule(const conv_geom *g)
{
    return g->ic == 1 && g->sw <= 4 && lw_is_single_float(g->din);
}

typedef struct dw_rows {
    const conv_geom *g;
    const ew_space *space;
    int node, V;
    int64_t seg;
    LLVMValueRef x, wt, tile, n, oc, in_plane, w_plane, oy, ox0;
    LLVMValueRef acc[DW_V]; /* allocas */
} dw_rows;

/* The kh loop over a segment's taps: plain loads where `inside`, masked otherwise. */
static void dw_rows_taps(lw *w, const void *ctx, bool inside)
{
    const dw_rows *r = ctx;
    const conv_geom *g = r->g;
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    lw_loop lkh;
    LLVMValueRef kh = lw_for(w, &lkh, lw_i64(w, 0), lw_i64(w, g->kh), 1, "kh");
    LLVMValueRef iy = LLVMBuildNSWAdd(B, lw_mad(w, r->oy, g->sh, NULL),
                                      lw_mad(w, kh, g->dh, lw_i64(w, -g->pt)), "iy");
    lw_if row;
    lw_if_begin(w, &row, LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntSGE, iy, lw_i64(w, 0), ""),
                                      LLVMBuildICmp(B, LLVMIntSLT, iy, lw_i64(w, g->h), ""), ""),
                "row");
    LLVMValueRef in_row_at = lw_mad(w, iy, g->w, r->in_plane);
    LLVMValueRef in_row = LLVMBuildInBoundsGEP2(B, lw_mem_type(w, g->din), r->x, &in_row_at, 1, "");
    LLVMValueRef acc[DW_V];
    for (int v = 0; v < r->V; v++)
        acc[v] = LLVMBuildLoad2(B, w->t_vf, r->acc[v], "");
    for (int64_t kw = 0; kw < g->kw; kw++) {
        LLVMValueRef tap = lw_mad(w, kh, g->kw, LLVMBuildNSWAdd(B, r->w_plane, lw_i64(w, kw), ""));
        LLVMValueRef wv = lw_splat(w, lw_load(w, r->wt, g->din, tap), VF);
        for (int v = 0; v < r->V; v++) {
            /* input columns (ox0 + v*VF + i)*sw + kw*dw - pl; outside the row: padding */
            LLVMValueRef col = lw_mad(w, LLVMBuildNSWAdd(B, r->ox0, lw_i64(w, (int64_t)v * VF), ""),
                                      g->sw, lw_i64(w, kw * g->dw - g->pl));
            LLVMValueRef xs = inside ? lw_row_load_inside(w, in_row, g->din, col, g->sw, VF)
                                     : lw_row_load(w, in_row, g->din, col, g->sw, g->w, VF, 0.0);
            acc[v] = lw_fma(w, xs, wv, acc[v]);
        }
    }
    for (int v = 0; v < r->V; v++)
        LLVMBuildStore(B, acc[v], r->acc[v]);
    lw_if_end(w, &row);
    lkh.no_unroll = true;
    lw_for_end(w, &lkh);
}

/* One segment of a row's outputs from ox0 (lw_segment_fn). */
static byocl_status dw_rows_segment(lw *w, void *ctx, LLVMValueRef ox0)
{
    dw_rows *r = ctx;
    const conv_geom *g = r->g;
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    r->ox0 = ox0;
    for (int v = 0; v < r->V; v++)
        LLVMBuildStore(B, LLVMConstNull(w->t_vf), r->acc[v]);
    lw_row_taps(w, lw_row_span_inside(w, ox0, r->seg, g->sw, g->kw, g->dw, g->pl, g->w),
                dw_rows_taps, r);
    for (int v = 0; v < r->V; v++)
        lw_vstore(w, r->tile, lw_i64(w, (int64_t)v * VF),
                  lw_row_in_order(w, LLVMBuildLoad2(B, w->t_vf, r->acc[v], ""), g->sw),
                  (unsigned)VF * 4);
    /* the segment's outputs through the epilogue */
    LLVMValueRef end = LLVMBuildSub(B, lw_i64(w, g->ow), ox0, "");
    end = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, end, lw_i64(w, r->seg), ""), end,
                          lw_i64(w, r->seg), "");
    lw_loop le;
    LLVMValueRef i = lw_for(w, &le, lw_i64(w, 0), end, 1, "i");
    byocl_status st = store_output(w, r->node, r->space, r->n, r->oc, r->oy,
                                   LLVMBuildNSWAdd(B, ox0, i, ""),
                                   lw_round(w, lw_load(w, r->tile, BYOCL_FLOAT32, i), g->dout), g);
    le.no_unroll = !LLVMIsConstant(end); /* a peeled segment's few lanes: unrolled, their masks fold */
    lw_for_end(w, &le);
    return st;
}

static byocl_status lower_conv_depthwise(lw *w, int node, const conv_geom *g, const ew_space *s)
{
    print_conv_plan(w, g, "depthwise");
    const byocl_node *nd = lw_node(w, node);
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    dw_rows r = {.g = g, .space = s, .node = node, .V = DW_V};
    r.seg = (int64_t)r.V * VF;
    if (g->ow < r.seg) /* rows shorter than a segment: fewer vectors */
        r.V = (int)((g->ow + VF - 1) / VF), r.seg = (int64_t)r.V * VF;
    r.x = lw_value_ptr(w, lv_resolve(w->fn, nd->args[0], -1));
    r.wt = lw_value_ptr(w, lv_resolve(w->fn, nd->args[1], -1));
    int64_t planes = g->n * g->o;
    w->n_tasks = lw_pick_tasks(w, planes * g->oh * g->ow * g->kh * g->kw, 1 << 17,
                               planes < 64 ? planes : 64);
    for (int v = 0; v < r.V; v++)
        r.acc[v] = lw_alloca(w, w->t_vf, "acc");
    r.tile = lw_alloca_array(w, w->t_f32, r.seg, 64, "tile");

    LLVMValueRef lo, hi;
    lw_task_range(w, planes, &lo, &hi);
    lw_loop lp, ly;
    LLVMValueRef p = lw_for(w, &lp, lo, hi, 1, "plane");
    r.n = LLVMBuildSDiv(B, p, lw_i64(w, g->o), "n");
    r.oc = LLVMBuildSRem(B, p, lw_i64(w, g->o), "oc");
    LLVMValueRef chan = LLVMBuildSDiv(B, r.oc, lw_i64(w, g->og), "");
    r.in_plane = lw_mad(w, lw_mad(w, r.n, g->c, chan), g->h * g->w, NULL);
    r.w_plane = lw_mad(w, r.oc, g->kh * g->kw, NULL);
    r.oy = lw_for(w, &ly, lw_i64(w, 0), lw_i64(w, g->oh), 1, "oy");
    byocl_status st = lw_row_segments(w, g->ow, r.seg, dw_rows_segment, &r);
    ly.no_unroll = true;
    lw_for_end(w, &ly);
    lw_for_end(w, &lp);
    return st;
}

/* ------------------------------------------------------------ depthwise convs in lanes */

/* Depthwise convs (one input and one output channel per group) on maps whose rows are a
 * vector or shorter (7x7, 14x14): by rows, a 7-output row fills 7 of a vector's 16 lanes,
 * and every row is an edge, loaded masked; efficientnet_b0's 5x5 convs over 1152 x 7 x 7
 * ran at 0.45x ONNX Runtime's speed. In lanes, as blocked layouts (NCHWc) compute them,
 * each vector holds VF channels of one position: per block of VF channels the input
 * planes go, transposed (transpose_lanes), into a zero-padded image of positions X''
 * [row][column][VF]; each output row is computed in runs of R positions (R accumulators,
 * per tap one weight vector and R aligned loads of X''), whose results go transposed into
 * the tile buffer [VF][OH*OW] (emit_tile_transposed) and from there through the epilogue
 * channel by channel (emit_store_span_flat), as by-channel conv tiles do. Weights packed
 * [block][tap][VF] (rt_pack_dense). Not where the transposition reads more input per
 * output than the taps use (a 3x3 conv with stride 2 onto 14x14 ran 0.032 -> 0.041 ms in
 * lanes), unless rows leave most lanes empty (onto 7x7: 0.039 -> 0.034; docs/host-codegen.md). */
#define DW_LANES_SCRATCH (64 << 10) /* bytes of X'' at most */

/* Positions of an output row computed side by side: the row in runs of at most 8. */
static int64_t dw_lanes_run(int64_t ow)
{
    int64_t runs = (ow + 7) / 8;
    return (ow + runs - 1) / runs;
}

/* Rows of X'': the padded input's, and one more that the last row's last run reads past
 * its end (its positions past OW are computed and dropped). */
static int64_t dw_lanes_rows(const conv_geom *g)
{
    return g->h + g->pt + g->pb + 1;
}

static bool depthwise_in_lanes(lw *w, int node, const conv_geom *g)
{
    if (g->og != 1 || g->din != BYOCL_FLOAT32 || g->dout != BYOCL_FLOAT32 || w->vf < 8 ||
        g->ow > 16 || (g->kh * g->kw < 4 * g->sh * g->sw && 2 * g->ow > w->vf))
        return false;
    const byocl_node *wn = lw_node(w, lv_resolve(w->fn, lw_node(w, node)->args[1], -1).node);
    if (wn->kind != BYOCL_NODE_CONSTANT || !wn->value)
        return false;
    int64_t bytes = (dw_lanes_rows(g) * (g->w + g->pl + g->pr) + 1) * w->vf * 4;
    return bytes <= DW_LANES_SCRATCH;
}

/* X'' for channels c0 .. c0 + VF - 1 of image n (channels past the last read the last
 * again): the planes in chunks of VF positions, VF channels' chunks transposed into VF
 * positions' vectors, each stored at its place in X'' (a chunk's positions past the
 * plane at the slot past X''). The padding was zeroed before. */
static void dw_lanes_fill(lw *w, const conv_geom *g, LLVMValueRef x, LLVMValueRef xpp,
                          LLVMValueRef n, LLVMValueRef c0, int64_t pw, LLVMValueRef dump)
{
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    int64_t hw = g->h * g->w;
    LLVMValueRef lanes[16];
    for (int i = 0; i < VF; i++)
        lanes[i] = LLVMConstInt(w->t_i64, (unsigned long long)i, 0);
    LLVMValueRef iota = LLVMConstVector(lanes, (unsigned)VF);
    lw_loop lp;
    LLVMValueRef p0 = lw_for(w, &lp, lw_i64(w, 0), lw_i64(w, hw), VF, "p0");
    LLVMValueRef mask = LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildNSWAdd(B, lw_splat(w, p0, VF), iota, ""),
                                      lw_splat(w, lw_i64(w, hw), VF), "");
    LLVMValueRef r[16];
    for (int j = 0; j < VF; j++) {
        LLVMValueRef chan = min64(w, LLVMBuildNSWAdd(B, c0, lw_i64(w, j), ""), lw_i64(w, g->c - 1));
        LLVMValueRef at = lw_mad(w, lw_mad(w, n, g->c, chan), hw, p0);
        LLVMTypeRef over[2] = {w->t_vf, w->t_ptr};
        LLVMValueRef args[4] = {gep_f32(w, x, at), lw_i32(w, 4), mask, LLVMConstNull(w->t_vf)};
        r[j] = lw_intrinsic(w, "llvm.masked.load", over, 2, args, 4);
    }
    transpose_lanes(w, r, VF);
    for (int i = 0; i < VF; i++) {
        LLVMValueRef pos = LLVMBuildNSWAdd(B, p0, lw_i64(w, i), "");
        LLVMValueRef y = LLVMBuildSDiv(B, pos, lw_i64(w, g->w), "");
        LLVMValueRef col = LLVMBuildSRem(B, pos, lw_i64(w, g->w), "");
        LLVMValueRef at = lw_mad(w, LLVMBuildNSWAdd(B, lw_mad(w, y, pw, lw_i64(w, g->pt * pw + g->pl)), col, ""),
                                 VF, NULL);
        at = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, pos, lw_i64(w, hw), ""), at, dump, "");
        lw_vstore(w, xpp, at, r[i], (unsigned)VF * 4);
    }
    lp.no_unroll = true;
    lw_for_end(w, &lp);
}

static byocl_status lower_conv_depthwise_lanes(lw *w, int node, const conv_geom *g, const ew_space *s)
{
    const byocl_node *nd = lw_node(w, node);
    LLVMBuilderRef B = w->B;
    int VF = w->vf;
    int64_t taps = g->kh * g->kw, pw = g->w + g->pl + g->pr;
    int64_t cblocks = (g->c + VF - 1) / VF, blocks = g->n * cblocks;
    int64_t R = dw_lanes_run(g->ow), outputs = g->oh * g->ow;
    char schedule[64];
    snprintf(schedule, sizeof schedule, "depthwise in lanes, runs of %lld", (long long)R);
    print_conv_plan(w, g, schedule);
    const byocl_node *wn = lw_node(w, lv_resolve(w->fn, nd->args[1], -1).node);
    float *packed = rt_alloc(cblocks * taps * VF * (int64_t)sizeof(float));
    if (!packed)
        return lw_failed(w, byocl_error_set(w->err, BYOCL_ERR_NOMEM, "out of memory"));
    rt_pack_dense(packed, byocl_tensor_cdata(wn->value), 0, g->c, taps, VF);
    LLVMValueRef wp = lw_const_ptr(w, packed, NULL, packed);
    LLVMValueRef x = lw_value_ptr(w, lv_resolve(w->fn, nd->args[0], -1));
    w->n_tasks = lw_pick_tasks(w, blocks * outputs * taps * VF, 1 << 17, blocks < 64 ? blocks : 64);

    /* X'' and a dump slot past it, zeroed once: each block writes only the interior */
    int64_t xpp_floats = (dw_lanes_rows(g) * pw + 1) * VF;
    LLVMValueRef xpp = lw_alloca_array(w, w->t_f32, xpp_floats, 64, "xpp");
    LLVMBuildMemSet(B, xpp, LLVMConstInt(w->t_i8, 0, 0), lw_i64(w, xpp_floats * 4), 64);
    LLVMValueRef dump = lw_i64(w, xpp_floats - VF);

    conv_plan p = {.vf = VF, .t = VF, .v = (int)R, .cv = 1};
    tile_ctx c = {.g = g, .p = &p, .node = node, .space = s, .oh = lw_i64(w, g->oh),
                  .ow = lw_i64(w, g->ow), .qb = lw_i64(w, outputs), .q_end = lw_i64(w, outputs),
                  .oy0 = lw_i64(w, 0)};
    ew_space flat;
    if (flat_space(w, node, &flat))
        c.flat = &flat;
    c.tile_stride = outputs + VF;
    c.tile = lw_alloca_array(w, w->t_f32, VF * c.tile_stride, 64, "tile");
    for (int64_t r = 0; r < R; r++)
        c.acc[r] = lw_alloca(w, w->t_vf, "acc");

    LLVMValueRef lo, hi;
    lw_task_range(w, blocks, &lo, &hi);
    lw_loop lb, ly;
    LLVMValueRef b = lw_for(w, &lb, lo, hi, 1, "block");
    c.n = g->n == 1 ? lw_i64(w, 0) : LLVMBuildSDiv(B, b, lw_i64(w, cblocks), "n");
    LLVMValueRef cb = LLVMBuildSRem(B, b, lw_i64(w, cblocks), "cb");
    c.oc0 = lw_mad(w, cb, VF, NULL);
    c.oc_end = min64(w, LLVMBuildNSWAdd(B, c.oc0, lw_i64(w, VF), ""), lw_i64(w, g->c));
    dw_lanes_fill(w, g, x, xpp, c.n, c.oc0, pw, dump);
    LLVMValueRef wblock = lw_mad(w, cb, taps * VF, NULL);
    LLVMValueRef oy = lw_for(w, &ly, lw_i64(w, 0), lw_i64(w, g->oh), 1, "oy");
    for (int64_t ox0 = 0; ox0 < g->ow; ox0 += R) {
        LLVMValueRef acc[8];
        for (int64_t r = 0; r < R; r++)
            acc[r] = LLVMConstNull(w->t_vf);
        for (int64_t kh = 0; kh < g->kh; kh++) {
            LLVMValueRef row = lw_mad(w, lw_mad(w, oy, g->sh, lw_i64(w, kh * g->dh)), pw, NULL);
            for (int64_t kw = 0; kw < g->kw; kw++) {
                LLVMValueRef wv = lw_vload(w, wp, LLVMBuildNSWAdd(B, wblock, lw_i64(w, (kh * g->kw + kw) * VF), ""),
                                           VF, (unsigned)VF * 4);
                for (int64_t r = 0; r < R; r++) {
                    LLVMValueRef at = lw_mad(w, LLVMBuildNSWAdd(B, row, lw_i64(w, (ox0 + r) * g->sw + kw * g->dw), ""),
                                             VF, NULL);
                    acc[r] = lw_fma(w, lw_vload(w, xpp, at, VF, (unsigned)VF * 4), wv, acc[r]);
                }
            }
        }
        for (int64_t r = 0; r < R; r++)
            LLVMBuildStore(B, acc[r], c.acc[r]);
        emit_tile_transposed(w, &c, lw_mad(w, oy, g->ow, lw_i64(w, ox0)));
    }
    ly.no_unroll = true;
    lw_for_end(w, &ly);
    byocl_status st = c.flat ? emit_store_span_flat(w, &c, lw_i64(w, 0), outputs)
                             : emit_store_span(w, &c, lw_i64(w, 0), outputs, g->ow);
    lb.no_unroll = true;
    lw_for_end(w, &lb);
    return st;
}

/* Convs whose every output is one weight row's dot product with a whole input image
 * (lower_dense_conv): one output position, the kernel the size of the map. */
static bool dot_product_schedule(const conv_geom *g)
{
    return g->spatial == 2 && !g->transposed && g->groups == 1 && g->oh == 1 && g->ow == 1 &&
           g->kh == g->h && g->kw == g->w && (g->kh == 1 || g->dh == 1) &&
           (g->kw == 1 || g->dw == 1) && g->pt == 0 && g->pl == 0 && g->pb == 0 && g->pr == 0;
}

byocl_status lower_conv(lw *w, int node)
{
    conv_geom g;
    conv_geometry(w, node, &g);
    ew_space s;
    byocl_status st = ew_space_init(w, &lw_node(w, node)->type->shape, node, false, &s);
    if (st != BYOCL_OK)
        return lw_failed(w, st);
    st = ew_store_passthrough(w);
    if (st != BYOCL_OK || !ew_has_root(w) || g.n * g.o * g.od * g.oh * g.ow == 0)
        return st;
    /* integers and float64 (in or out) take the direct loop nest; so do strides past
     * plan_conv's tables, the transposed and the 3-D convs */
    if (g.transposed || g.spatial == 3 || !lw_is_single_float(g.din) || !lw_is_single_float(g.dout) || g.sh > 16 ||
        g.sw > 16)
        return lower_conv_direct(w, node, &g, &s);
    if (dot_product_schedule(&g))
        return lower_dense_conv(w, node, &s);
    if (depthwise_schedule(&g) && depthwise_in_lanes(w, node, &g))
        return lower_conv_depthwise_lanes(w, node, &g, &s);
    if (depthwise_schedule(&g))
        return lower_conv_depthwise(w, node, &g, &s);
    return lower_conv_float(w, node, &g, &s);
}
