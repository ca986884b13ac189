/* The kernels of each group, in launch order. A conv2d may first need its input laid out
 * (padding and stride phases, see kernels_cl/conv2d.cl) and, when its weight is a region
 * input rather than a constant, the weight packed; dense likewise packs a weight that is
 * not constant (batch_matmul's tensor_b, an activation in attention, on every run). Those
 * helper launches use the `move` template, as do transpose (and depth_to_space,
 * space_to_depth), concatenate and the copies
 * of outputs that no group writes in place. topk's group writes two results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/host_backend.h"
#include "cl_impl.h"
#include "ops/index.h"
#include "ops/nn_util.h"
#include "ops/op_impl.h"
#include "ops/image.h"
#include "ops/reduce.h"
#include "ops/transform.h"

static byocl_dtype dtype_of(const clg_gen *gen, int node)
{
    return clg_tensor_type(gen->fn, node)->dtype;
}

/* Appends the ops of `grp` ("op+op+...") to buf from *at. */
static void group_ops(const clg_gen *gen, const clg_group *grp, char *buf, size_t len, size_t *at)
{
    bool anchor_is_step = grp->kind == CLG_ANCHOR_ELEMWISE;
    for (int i = anchor_is_step ? 0 : -1; i < grp->n_steps && *at < len; i++) {
        int node = i < 0 ? grp->anchor : grp->steps[i];
        int w = snprintf(buf + *at, len - *at, "%s%s", *at ? "+" : "",
                         gen->fn->nodes[node].op->name);
        *at += w > 0 ? (size_t)w : 0;
    }
}

void clg_group_label(const clg_gen *gen, const clg_group *grp, char *buf, size_t len)
{
    const byocl_function *fn = gen->fn;
    size_t at = 0;
    buf[0] = '\0';
    /* A conv's prologue comes first: its ops, and its first node starts the range. */
    const clg_group *pro = grp->prologue >= 0 ? &gen->graph.groups[grp->prologue] : NULL;
    if (pro)
        group_ops(gen, pro, buf, len, &at);
    group_ops(gen, grp, buf, len, &at);
    char first[32], last[32];
    byocl_node_label(fn, pro ? pro->anchor : grp->anchor, first, sizeof first);
    byocl_node_label(fn, grp->tail, last, sizeof last);
    if (at < len) {
        if (grp->tail == grp->anchor && !pro)
            snprintf(buf + at, len - at, " (%s)", first);
        else
            snprintf(buf + at, len - at, " (%s to %s)", first, last);
    }
}

double clg_group_flops(const clg_gen *gen, const clg_group *grp)
{
    double flops = grp->kind == CLG_ANCHOR_ELEMWISE ? 0 : host_node_flops(gen->fn, grp->anchor);
    for (int i = 0; i < grp->n_steps; i++)
        flops += host_node_flops(gen->fn, grp->steps[i]);
    if (grp->prologue >= 0)
        flops += clg_group_flops(gen, &gen->graph.groups[grp->prologue]);
    return flops;
}

byocl_status clg_kernel_finish(clg_kernel *k, byocl_status st, const char *tmpl,
                               const char *label, int work_dim, const size_t *global,
                               double flops)
{
    if (st != BYOCL_OK) {
        clg_kernel_abandon(k);
        return st;
    }
    return clg_kernel_end(k, tmpl, label, work_dim, global, flops) < 0 ? k->gen->err->status
                                                                      : BYOCL_OK;
}

/* #define names[i] values[i], for n integer parameters. */
static void define_ints(clg_kernel *k, const char *const *names, const int64_t *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        clg_kernel_define(k, names[i], "%lld", (long long)values[i]);
}

/* A `move` launch of n elements from buffer src to buffer dst; `index` is MOVE_INDEX's
 * body (byocl_textbuf, consumed), which reads OFFSET when offset >= 0. */
static byocl_status emit_move(clg_gen *gen, const char *what, const char *label, int src,
                              byocl_dtype src_dtype, int dst, byocl_dtype dst_dtype, int64_t n,
                              int64_t offset, int vec, byocl_textbuf *index)
{
    char *body = base_textbuf_take(index);
    if (!body)
        return byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory writing %s", label);
    clg_kernel k;
    clg_kernel_begin(&k, gen, what);
    clg_kernel_buffer(&k, "x", src, src_dtype, false);
    clg_kernel_buffer(&k, "y", dst, dst_dtype, true);
    /* The count (and a block's offset) are arguments, so that moves differing only in
     * them (the copies into a concatenation, densenet's 62 among them) share a kernel. */
    clg_kernel_int(&k, "N", n);
    if (offset >= 0)
        clg_kernel_int(&k, "OFFSET", offset);
    clg_kernel_define(&k, "MOVE_INDEX(i, src, dst, ok)", "%s", body);
    free(body);
    if (vec > 1) {
        clg_kernel_define(&k, "MOVE_VEC", "%d", vec);
        clg_kernel_define(&k, "VLOAD", "vload%d", vec);
    }
    size_t global = (size_t)n;
    return clg_kernel_finish(&k, BYOCL_OK, "move", label, 1, &global, 0);
}

/* The buffer of a packed weight: a constant packed here when the weight is one, else a
 * scratch buffer that a `move` launch packs on every run. */
static int packed_weight(clg_gen *gen, int node, int64_t elems, const clg_packing *packing,
                         const void *sched)
{
    const byocl_function *fn = gen->fn;
    int root = gen->graph.info[fn->nodes[node].args[1]].root;
    char desc[64], what[112];
    clg_node_desc(fn, node, desc, sizeof desc);
    snprintf(what, sizeof what, "packed weight of %s", desc);
    if (fn->nodes[root].kind == BYOCL_NODE_CONSTANT) {
        byocl_tensor *t = clg_pack_host(fn->nodes[root].value, elems, packing, sched, gen->err);
        return t ? clg_gen_const(gen, t, what) : -1;
    }
    int src = clg_gen_root_buf(gen, root);
    int dst = src >= 0 ? clg_gen_buf(gen, BYOCL_CL_BUF_SCRATCH, -1, (size_t)elems * 4, what) : -1;
    if (dst < 0)
        return -1;
    byocl_textbuf index = {0};
    packing->index_text(sched, &index);
    return emit_move(gen, "pack", what, src, dtype_of(gen, root), dst, BYOCL_FLOAT32, elems, -1,
                     1, &index) == BYOCL_OK ? dst : -1;
}

static int64_t conv_source(const void *s, int64_t i) { return clg_conv_pack_source(s, i); }
static void conv_index(const void *s, byocl_textbuf *t) { clg_conv_pack_index_text(s, t); }
static void conv_f32(const void *s, const float *w, float *out) { clg_conv_pack_f32(s, w, out); }
static const clg_packing conv_packing = {conv_source, conv_index, conv_f32};
static int64_t dense_source(const void *s, int64_t i) { return clg_dense_pack_source(s, i); }
static void dense_index(const void *s, byocl_textbuf *t) { clg_dense_pack_index_text(s, t); }
static void dense_f32(const void *s, const float *w, float *out)
{
    clg_dense_pack_f32(s, w, out);
}
static const clg_packing dense_packing = {dense_source, dense_index, dense_f32};

static const char *vload_text(byocl_dtype dtype, int width, char *buf, size_t len)
{
    if (width == 1)
        snprintf(buf, len, dtype == BYOCL_FLOAT16 ? "vload_half(0, (const __global half *)(p))"
                                                  : "(*(p))");
    else if (dtype == BYOCL_FLOAT16)
        snprintf(buf, len, "vload_half%d(0, (const __global half *)(p))", width);
    else
        snprintf(buf, len, "vload%d(0, (p))", width);
    return buf;
}

/* The buffers of a conv read as it is: its data and weight roots and buffers, and the
 * group's result buffer; false with the error set. */
static bool data_weight_result(clg_gen *gen, const clg_group *grp, int *x_root, int *w_root,
                               int *x, int *w, int *y)
{
    const byocl_node *n = &gen->fn->nodes[grp->anchor];
    *x_root = gen->graph.info[n->args[0]].root;
    *w_root = gen->graph.info[n->args[1]].root;
    *x = clg_gen_root_buf(gen, *x_root);
    *w = *x >= 0 ? clg_gen_root_buf(gen, *w_root) : -1;
    *y = *w >= 0 ? clg_gen_root_buf(gen, grp->tail) : -1;
    return *y >= 0;
}

/* Row tiles along a row (conv2d_depthwise.cl, pool2d_rows.cl; conv2d_input.cl uses pt,
 * stride and width): the geometry of the window op. */
typedef struct row_tiles {
    int pt;                               /* outputs per tile */
    int64_t stride, taps, dilation, pad;  /* the window along the row */
    int64_t width, out_width;             /* input and output columns */
} row_tiles;

/* Edge tiles given a shuffle each (more fall back to TAP_EDGE's lane-by-lane loads).
 * Where every edge tile has its shuffle and some tile of the row is inside it, the last
 * edge tile is not tested (no tile reaches TAP_EDGE): with the lane-by-lane fallback in
 * each of their taps, the depthwise kernels of 4 output rows a work-item took PoCL twice
 * as long to compile (0.45 -> 0.9 s on mobilenet_v2), and without it those of rows with
 * an inside tile also ran faster (its 28x28 and 112x112 depthwise convs 0.157 -> 0.117
 * and 0.319 -> 0.244 ms). Rows of edge tiles only keep TAP_EDGE at the end of the
 * chain: without it PoCL evaluated both tiles' shuffles together, and mobilenet_v2's
 * 14x14 and 7x7 depthwise convs took 1.3-1.5 times as long. */
#define ROW_EDGE_TILES_MAX 4

/* Tiles of a row that a row-tile kernel's work-item walks in an unrolled loop (each
 * tile's edge handling then a constant); rows of more take a tile per work-item along
 * dimension 1, whose taps choose between the inside load and the edge tiles' at run
 * time. Unrolled, PoCL's compile time grows with the tiles: a stride-2 depthwise conv and
 * a 3x3/2 max pool over rows of 1024 and 512 (32 and 16 tiles of 16) took 11.5 s to build,
 * 4.6 s with a rolled loop over the tiles, 1.8 s a tile per work-item. */
#define ROW_TILES_UNROLLED_MAX 8

/* Which tiles a row-tile kernel's work-item computes, TX_FIRST up to TX_END (all of its
 * rows', TILES, in a loop the template unrolls, or with more than ROW_TILES_UNROLLED_MAX
 * the one along dimension 1), and its grid: blocks of `ry` rows along dimension 0, the
 * tiles along dimension 1 where a work-item takes one, planes along dimension 2. */
static void define_row_tile_walk(clg_kernel *k, int64_t out_height, int ry, int64_t tiles,
                                 int64_t planes, size_t *global)
{
    bool walk = tiles <= ROW_TILES_UNROLLED_MAX;
    clg_kernel_define(k, "TX_FIRST", "%s", walk ? "0" : "(int)get_global_id(1)");
    clg_kernel_define(k, "TX_END", "%s", walk ? "TILES" : "(TX_FIRST + 1)");
    global[0] = (size_t)((out_height + ry - 1) / ry);
    global[1] = walk ? 1 : (size_t)tiles;
    global[2] = (size_t)planes;
}


/* `load` elements of x from element offset `base` + `offset` (base a C expression; no
 * offset written where `offset` is NULL): one vload of `load` ("vload8(0, x + base)"), or
 * for more than CLG_ROW_VECTOR_MAX (a stride-2 tile of 16, 32 elements) two vload16, the
 * operands of a shuffle2 written by the caller, each XORed with the kernel argument
 * `opaque_zero` (0; define_row_loads adds it). Seeing that only their even lanes are
 * used, LLVM split plain loads into pairs of floats and rebuilt them with inserts (a
 * 112x112 -> 56x56 depthwise conv took 0.42-0.47 ms against 0.24-0.26 in tiles of 8), as
 * it did with conv2d_depthwise_plane.cl's masks. */
static void row_load_text(byocl_textbuf *b, int64_t load, const char *half, const char *ptr,
                          const char *base, const int64_t *offset)
{
    int64_t at = offset ? *offset : 0;
    if (load <= CLG_ROW_VECTOR_MAX) {
        base_textbuf_printf(b, "vload%s%lld(0, %s + %s", half, (long long)load, ptr, base);
        if (offset)
            base_textbuf_printf(b, " + %lld", (long long)at);
        base_textbuf_puts(b, ")");
        return;
    }
    for (int i = 0; i < 2; i++) {
        base_textbuf_printf(b, "%sas_float%d(as_uint%d(vload%s%d(0, %s + %s", i ? ", " : "",
                            CLG_ROW_VECTOR_MAX, CLG_ROW_VECTOR_MAX, half, CLG_ROW_VECTOR_MAX, ptr, base);
        if (offset || i)
            base_textbuf_printf(b, " + %lld", (long long)(at + i * CLG_ROW_VECTOR_MAX));
        base_textbuf_printf(b, ")) ^ (uint%d)(opaque_zero))", CLG_ROW_VECTOR_MAX);
    }
}

/* Tap kw of edge tile t, read with vector loads inside the row and a constant shuffle:
 * lane j is column c + j*stride (c = first*stride - pad + kw*dilation, first the tile's
 * first output, clg_row_tile_first), `fill` outside the row. The load starts at
 * clamp(c, 0, width - load width), so every column inside the row that the tile needs
 * is in it. One load is shuffled with a vector of `fill`; two (stride 2, 16 lanes) are
 * shuffled together and the lanes outside the row then take `fill` by a select. */
static void edge_shuffle(byocl_textbuf *b, const row_tiles *g, int64_t t, int64_t kw,
                         const char *half, const char *ptr, const char *fill)
{
    int64_t load = clg_row_load_width(g->pt, g->stride);
    int64_t first = clg_row_tile_first(g->pt, g->out_width, t);
    int64_t c = first * g->stride - g->pad + kw * g->dilation;
    int64_t at = c < 0 ? 0 : c > g->width - load ? g->width - load : c;
    bool two = load > CLG_ROW_VECTOR_MAX;
    if (two)
        base_textbuf_puts(b, "select(");
    base_textbuf_puts(b, "shuffle2(");
    row_load_text(b, load, half, ptr, "(row)", &at);
    if (!two)
        base_textbuf_printf(b, ", (float%lld)(%s)", (long long)load, fill);
    base_textbuf_printf(b, ", (uint%d)(", g->pt);
    for (int j = 0; j < g->pt; j++) {
        int64_t col = c + j * g->stride;
        /* outside the row: lane `load`, fill's first (one load), or any lane (two) */
        int64_t lane = col >= 0 && col < g->width ? col - at : two ? 0 : load;
        base_textbuf_printf(b, "%s%lld", j ? ", " : "", (long long)lane);
    }
    base_textbuf_puts(b, "))");
    if (!two)
        return;
    base_textbuf_printf(b, ", (float%d)(%s), (int%d)(", g->pt, fill, g->pt);
    for (int j = 0; j < g->pt; j++) {
        int64_t col = c + j * g->stride;
        base_textbuf_printf(b, "%s%d", j ? ", " : "", col >= 0 && col < g->width ? 0 : -1);
    }
    base_textbuf_puts(b, "))");
}

/* #define `macro`(t) as the first element of tile t of a row of `width` in tiles of pt,
 * clg_row_tile_first's rule in OpenCL C (the last tile ends at the row's end, so that
 * every tile stores whole vectors). */
static void define_tile_first(clg_kernel *k, const char *macro, int pt, int64_t width)
{
    if (width >= pt)
        clg_kernel_define(k, macro, "min((t) * %d, %lld)", pt, (long long)(width - pt));
    else
        clg_kernel_define(k, macro, "((t) * %d)", pt);
}

/* The loads of a row tile (conv2d_depthwise.cl, pool2d_rows.cl, conv2d_input.cl):
 * TAP_IN(at), PT columns `stride` apart from element offset at of x, as one vector load
 * (stride 1; stride 2 takes the even lanes of a double-width one) or lane by lane;
 * TAP_EDGE(row, col), the same lanes checked against the row, `fill` outside. */
static byocl_status define_row_loads(clg_kernel *k, const row_tiles *g, byocl_dtype x_dtype,
                                     const char *fill)
{
    byocl_textbuf in = {0}, edge = {0};
    const char *half = x_dtype == BYOCL_FLOAT16 ? "_half" : "";
    const char *ptr = x_dtype == BYOCL_FLOAT16 ? "(const __global half *)x" : "x";
    int pt = g->pt;
    bool vector_in = clg_row_vector_load(pt, g->stride);
    int64_t load = clg_row_load_width(pt, g->stride);
    if (vector_in && load > CLG_ROW_VECTOR_MAX) { /* stride 2: the even lanes of two loads */
        clg_kernel_int(k, "opaque_zero", 0);
        base_textbuf_puts(&in, "shuffle2(");
        row_load_text(&in, load, half, ptr, "(at)", NULL);
        base_textbuf_printf(&in, ", (uint%d)(", pt);
        for (int j = 0; j < pt; j++)
            base_textbuf_printf(&in, "%s%d", j ? ", " : "", 2 * j);
        base_textbuf_puts(&in, "))");
    } else if (vector_in) {
        row_load_text(&in, load, half, ptr, "(at)", NULL);
        if (g->stride == 2)
            base_textbuf_puts(&in, ".even");
    } else
        base_textbuf_printf(&in, "((float%d)(", pt);
    base_textbuf_printf(&edge, "((float%d)(", pt);
    for (int j = 0; j < pt; j++) {
        long long step = (long long)(j * g->stride);
        /* The column clamped into the row, so that the load is always safe and the
         * lane a select rather than a branch. */
        base_textbuf_printf(&edge,
                            "%s(col) + %lld >= 0 && (col) + %lld < %lld ? "
                            "LD_x((row) + clamp((col) + %lld, 0, %lld)) : %s",
                            j ? ", " : "", step, step, (long long)g->width, step,
                            (long long)g->width - 1, fill);
        if (!vector_in)
            base_textbuf_printf(&in, "%sLD_x((at) + %lld)", j ? ", " : "", step);
    }
    base_textbuf_puts(&edge, "))");
    if (!vector_in)
        base_textbuf_puts(&in, "))");
    char *tap_in = base_textbuf_take(&in), *tap_edge = base_textbuf_take(&edge);
    if (tap_in && tap_edge) {
        clg_kernel_define(k, "TAP_IN(at)", "%s", tap_in);
        clg_kernel_define(k, "TAP_EDGE(row, col)", "%s", tap_edge);
    }
    bool ok = tap_in && tap_edge;
    free(tap_in);
    free(tap_edge);
    return ok ? BYOCL_OK
              : byocl_error_set(k->gen->err, BYOCL_ERR_NOMEM, "out of memory writing %s",
                                k->name);
}

/* The tap macros of a window op's row tile: define_row_loads', TILE_X0(tx), the first
 * output of tile tx (clg_row_tile_first), and TAP_EDGE_TILE(row, col, kw), what a tile
 * that is not inside the row (the kernel's `tx`) reads for tap kw:
 * a shuffle of one load inside the row (edge_shuffle) where the row is at least one load
 * wide, else TAP_EDGE. */
static byocl_status define_row_taps(clg_kernel *k, const row_tiles *g, byocl_dtype x_dtype,
                                    const char *fill)
{
    byocl_status st = define_row_loads(k, g, x_dtype, fill);
    if (st != BYOCL_OK)
        return st;
    define_tile_first(k, "TILE_X0(t)", g->pt, g->out_width);
    const char *half = x_dtype == BYOCL_FLOAT16 ? "_half" : "";
    const char *ptr = x_dtype == BYOCL_FLOAT16 ? "(const __global half *)x" : "x";
    int pt = g->pt;
    byocl_textbuf tile = {0};
    /* tx == t ? (kw == 0 ? ... : kw == 1 ? ... : ...) : ... : TAP_EDGE(row, col), or the
     * last edge tile's taps untested in place of TAP_EDGE (ROW_EDGE_TILES_MAX says when) */
    int64_t tiles = (g->out_width + pt - 1) / pt;
    bool shuffles = clg_row_edge_shuffles(pt, g->stride, g->width);
    int64_t edges = tiles - clg_row_tiles_inside(pt, g->stride, g->taps, g->dilation, g->pad,
                                                 g->width, g->out_width);
    bool last_untested = shuffles && edges > 0 && edges <= ROW_EDGE_TILES_MAX && edges < tiles;
    int shuffled = 0;
    for (int64_t t = 0; t < tiles && shuffles && shuffled < ROW_EDGE_TILES_MAX; t++) {
        if (clg_row_tile_inside(pt, g->stride, g->taps, g->dilation, g->pad, g->width,
                                g->out_width, t))
            continue;
        bool tested = !(last_untested && shuffled == edges - 1);
        if (tested)
            base_textbuf_printf(&tile, "(tx) == %lld ? ", (long long)t);
        base_textbuf_puts(&tile, "(");
        for (int64_t kw = 0; kw < g->taps; kw++) {
            if (kw + 1 < g->taps)
                base_textbuf_printf(&tile, "(kw) == %lld ? ", (long long)kw);
            edge_shuffle(&tile, g, t, kw, half, ptr, fill);
            base_textbuf_puts(&tile, kw + 1 < g->taps ? " : " : ")");
        }
        if (tested)
            base_textbuf_puts(&tile, " : ");
        shuffled++;
    }
    if (!last_untested)
        base_textbuf_puts(&tile, "TAP_EDGE(row, col)");
    char *tap_tile = base_textbuf_take(&tile);
    if (tap_tile)
        clg_kernel_define(k, "TAP_EDGE_TILE(row, col, kw)", "(%s)", tap_tile);
    free(tap_tile);
    return tap_tile ? BYOCL_OK
                    : byocl_error_set(k->gen->err, BYOCL_ERR_NOMEM, "out of memory writing %s",
                                      k->name);
}

/* The laid-out input of a conv2d (kernels_cl/conv2d_input.cl): a scratch buffer, written
 * a row per work-item in tiles of PT elements. */
static int emit_conv_input(clg_gen *gen, const clg_conv_sched *s, const char *desc, int x,
                           byocl_dtype x_dtype, const clg_group *prologue)
{
    char what[112];
    snprintf(what, sizeof what, "laid-out input of %s", desc);
    int laid = clg_gen_buf(gen, BYOCL_CL_BUF_SCRATCH, -1, (size_t)s->x_elems * 4, what);
    if (laid < 0)
        return -1;
    int pt = clg_tile_width(gen->opt.vector_width);
    clg_kernel k;
    clg_kernel_begin(&k, gen, "conv2d_input");
    clg_kernel_buffer(&k, "x", x, x_dtype, false);
    clg_kernel_buffer(&k, "y", laid, BYOCL_FLOAT32, true);
    clg_kernel_define(&k, "VEC", "float%d", pt);
    clg_kernel_define(&k, "VSTORE", "vstore%d", pt);
    static const char *const names[] = {"PT", "LOAD", "NC", "NPH", "H", "W", "HPH", "WPH",
                                        "SH", "SW", "PAD_T", "PAD_L"};
    const int64_t values[] = {pt, clg_row_load_width(pt, s->stride[1]), s->n * s->c,
                              s->n_phase_y * s->n_phase_x, s->h, s->w, s->hph, s->wph,
                              s->stride[0], s->stride[1], s->pad[0], s->pad[1]};
    define_ints(&k, names, values, sizeof names / sizeof names[0]);
    char py[512], px[512]; /* up to 15 phases listed: see phase_expr */
    clg_conv_phase_exprs(s, py, px, sizeof py);
    clg_kernel_define(&k, "PHASE_Y(s)", "%s", py);
    clg_kernel_define(&k, "PHASE_X(s)", "%s", px);
    row_tiles g = {.pt = pt, .stride = s->stride[1], .width = s->w};
    byocl_status st = define_row_loads(&k, &g, x_dtype, "0.0f");
    if (st == BYOCL_OK && prologue) /* its convs have no padding: every value is an input's */
        st = clg_prologue_define(&k, prologue, pt, gen->err);
    clg_kernel_define(&k, "NT", "%lld", (long long)((s->wph + pt - 1) / pt));
    define_tile_first(&k, "TILE_J0(t)", pt, s->wph);
    size_t global[3] = {(size_t)s->hph, 1, (size_t)s->x_planes};
    return clg_kernel_finish(&k, st, "conv2d_input", what, 3, global, 0) == BYOCL_OK ? laid : -1;
}

/* ROWS_IN of a row-tile kernel whose work-items compute `ry` output rows: the input rows
 * those read, with `taps` window rows `dilation` apart, rows `stride` apart. */
static int64_t window_rows_in(int ry, int64_t stride, int64_t taps, int64_t dilation)
{
    return (ry - 1) * stride + (taps - 1) * dilation + 1;
}

/* The defines a plane kernel (conv2d_depthwise_plane.cl, pool2d_plane.cl) shares: vectors
 * of vf (VEC, INTV, VSTORE, VLOAD_X, LANES, PT), the geometry, nc planes of nv vectors (NC,
 * NV), the first and the last tap's offsets (MIN_OFF, MAX_OFF). false when out of memory. */
static bool define_plane(clg_kernel *k, const clg_plane *g, int vf, byocl_dtype x_dtype,
                         int64_t nc, int64_t nv)
{
    clg_kernel_define(k, "VEC", "float%d", vf);
    clg_kernel_define(k, "VSTORE", "vstore%d", vf);
    clg_kernel_define(k, "INTV", "int%d", vf);
    char vload[96];
    clg_kernel_define(k, "VLOAD_X(p)", "%s", vload_text(x_dtype, vf, vload, sizeof vload));
    static const char *const names[] = {"PT", "NC", "H", "W", "OH", "OW", "KH", "KW",
                                        "DH", "DW", "PAD_T", "PAD_L", "NV", "MIN_OFF",
                                        "MAX_OFF"};
    const int64_t values[] = {vf, nc, g->h, g->w, g->oh, g->ow, g->kh, g->kw, g->dh, g->dw,
                              g->pad_t, g->pad_l, nv, clg_plane_offset(g, 0, 0),
                              clg_plane_offset(g, g->kh - 1, g->kw - 1)};
    define_ints(k, names, values, sizeof names / sizeof names[0]);
    byocl_textbuf lanes = {0};
    for (int j = 0; j < vf; j++)
        base_textbuf_printf(&lanes, "%s%d", j ? ", " : "", j);
    char *lane_list = base_textbuf_take(&lanes);
    if (lane_list)
        clg_kernel_define(k, "LANES", "((INTV)(%s))", lane_list);
    free(lane_list);
    return lane_list != NULL;
}

/* What tap (kh, kw) of the plane vector that starts at output p0 reads (one load at the
 * tap's offset, conv2d_depthwise_plane.cl), appended to b as TAP(t, xv), or
 * TAP_MASKED(t, xv, mask) where some lane is padding, or nothing where every lane is. */
static void plane_tap(byocl_textbuf *b, const clg_conv_sched *s, int vf, int64_t p0,
                      int64_t kh, int64_t kw)
{
    int64_t plane = s->h * s->w, dx = kw * s->dilation[1] - s->pad[1];
    clg_plane g = clg_conv_plane(s);
    int64_t first = p0 + clg_plane_offset(&g, kh, kw);
    bool inside[16], any = false, all = true;
    for (int j = 0; j < vf; j++) {
        int64_t col = (p0 + j) % s->w + dx;
        inside[j] = col >= 0 && col < s->w && first + j >= 0 && first + j < plane;
        any |= inside[j];
        all &= inside[j];
    }
    if (!any)
        return;
    base_textbuf_printf(b, " \\\n    %s(%lld, VLOAD_X(x + plane %c %lld)",
                        all ? "TAP" : "TAP_MASKED", (long long)(kh * s->kw + kw),
                        first < 0 ? '-' : '+', (long long)(first < 0 ? -first : first));
    if (!all) {
        base_textbuf_printf(b, ", (int%d)(", vf);
        for (int j = 0; j < vf; j++)
            base_textbuf_printf(b, "%s%d", j ? ", " : "", inside[j] ? -1 : 0);
        base_textbuf_puts(b, ")");
    }
    base_textbuf_puts(b, ")");
}

/* A depthwise conv2d over whole planes (kernels_cl/conv2d_depthwise_plane.cl): every
 * vector of the plane and every tap listed, the last vector ending at the plane's end. */
static byocl_status emit_conv_depthwise_plane(clg_gen *gen, const clg_group *grp,
                                              const clg_conv_sched *s, const char *label,
                                              int x, byocl_dtype x_dtype, int w,
                                              byocl_dtype w_dtype, int y)
{
    int vf = clg_tile_width(gen->opt.vector_width);
    int64_t out = s->oh * s->ow;
    clg_kernel k;
    clg_kernel_begin(&k, gen, "conv2d_depthwise_plane");
    clg_kernel_buffer(&k, "x", x, x_dtype, false);
    clg_kernel_buffer(&k, "w", w, w_dtype, false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    clg_kernel_int(&k, "opaque_zero", 0);
    clg_kernel_define(&k, "AS_VEC(v)", "as_float%d(v)", vf);
    clg_kernel_define(&k, "AS_INTV(v)", "as_int%d(v)", vf);
    clg_kernel_define(&k, "C", "%lld", (long long)s->c);
    clg_plane g = clg_conv_plane(s);
    bool ok = define_plane(&k, &g, vf, x_dtype, s->n * s->c, s->plane_vectors);
    byocl_textbuf vectors = {0};
    for (int64_t v = 0; v < s->plane_vectors && s->plane_unrolled && ok; v++) {
        int64_t p0 = v * vf < out - vf ? v * vf : out - vf;
        base_textbuf_printf(&vectors, "%sVECTOR(%lld, %lld)", v ? " " : "", (long long)v,
                            (long long)p0);
        byocl_textbuf taps = {0};
        for (int64_t kh = 0; kh < s->kh; kh++)
            for (int64_t kw = 0; kw < s->kw; kw++)
                plane_tap(&taps, s, vf, p0, kh, kw);
        char *text = base_textbuf_take(&taps), name[64];
        snprintf(name, sizeof name, "TAPS_%lld(TAP, TAP_MASKED)", (long long)v);
        if (text)
            clg_kernel_define(&k, name, "%s", text);
        ok = text != NULL;
        free(text);
    }
    if (s->plane_unrolled) {
        char *list = base_textbuf_take(&vectors);
        if (list)
            clg_kernel_define(&k, "PLANE_VECTORS(VECTOR)", "%s", list);
        ok = ok && list;
        free(list);
    }
    byocl_status st = ok ? clg_epilogue_define_tiles(&k, grp, vf, 2, gen->err)
                         : byocl_error_set(gen->err, BYOCL_ERR_NOMEM,
                                           "out of memory writing %s", k.name);
    size_t global = (size_t)(s->n * s->c);
    return clg_kernel_finish(&k, st, "conv2d_depthwise_plane", label, 1, &global,
                             clg_group_flops(gen, grp));
}

/* A depthwise conv2d (kernels_cl/conv2d_depthwise.cl, or conv2d_depthwise_plane.cl where
 * it takes planes): read in place, its weight as it is (OIHW: one KH x KW filter per
 * channel). */
static byocl_status emit_conv_depthwise(clg_gen *gen, const clg_group *grp,
                                        const clg_conv_sched *s)
{
    char label[96];
    clg_group_label(gen, grp, label, sizeof label);
    int x_root, w_root, x, w, y;
    if (!data_weight_result(gen, grp, &x_root, &w_root, &x, &w, &y))
        return gen->err->status;
    byocl_dtype x_dtype = dtype_of(gen, x_root);
    if (s->plane_vectors > 0)
        return emit_conv_depthwise_plane(gen, grp, s, label, x, x_dtype, w,
                                         dtype_of(gen, w_root), y);
    int64_t load = clg_row_load_width(s->row_pt, s->stride[1]);
    int64_t tiles = (s->ow + s->row_pt - 1) / s->row_pt;
    clg_kernel k;
    clg_kernel_begin(&k, gen, "conv2d_depthwise");
    clg_kernel_buffer(&k, "x", x, x_dtype, false);
    clg_kernel_buffer(&k, "w", w, dtype_of(gen, w_root), false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    clg_kernel_define(&k, "VEC", "float%d", s->row_pt);
    clg_kernel_define(&k, "VSTORE", "vstore%d", s->row_pt);
    static const char *const names[] = {"PT", "TILES", "RY", "ROWS_IN", "C", "H", "W", "OH",
                                        "OW", "KH", "KW", "SH", "SW", "DH", "DW", "PAD_T",
                                        "PAD_L", "SPAN"};
    const int64_t values[] = {s->row_pt, tiles, s->row_ry,
                              window_rows_in(s->row_ry, s->stride[0], s->kh, s->dilation[0]),
                              s->c, s->h, s->w, s->oh, s->ow, s->kh, s->kw,
                              s->stride[0], s->stride[1], s->dilation[0], s->dilation[1],
                              s->pad[0], s->pad[1], load + (s->kw - 1) * s->dilation[1]};
    define_ints(&k, names, values, sizeof names / sizeof names[0]);
    row_tiles g = {.pt = s->row_pt, .stride = s->stride[1], .taps = s->kw, .dilation = s->dilation[1],
                   .pad = s->pad[1], .width = s->w, .out_width = s->ow};
    byocl_status st = define_row_taps(&k, &g, x_dtype, "0.0f");
    if (st == BYOCL_OK)
        st = clg_epilogue_define_tiles(&k, grp, s->row_pt, 1, gen->err);
    size_t global[3];
    define_row_tile_walk(&k, s->oh, s->row_ry, tiles, s->n * s->c, global);
    return clg_kernel_finish(&k, st, "conv2d_depthwise", label, 3, global, clg_group_flops(gen, grp));
}

/* Kernels of more than CLG_TAPS_UNROLLED taps (7x7 and 5x5 stems) loop over their rows,
 * a row's taps unrolled, where the rows' offsets in the laid-out input follow the stride
 * phases: row kh at (kh % SH) * a + (kh / SH) * b. PoCL took 0.95 s to compile resnet18's
 * 7x7 stem with its 49 taps unrolled, the longest of the model's kernels
 * (docs/opencl-codegen.md). */
#define CLG_TAPS_UNROLLED 16

static bool conv_tap_rows(const clg_conv_sched *s, int64_t *a, int64_t *b)
{
    int64_t sh = s->stride[0];
    if (s->ntaps <= CLG_TAPS_UNROLLED || s->kh < 2 || s->ntaps != s->kh * s->kw)
        return false;
    *a = sh > 1 ? s->tap_offset[s->kw] : 0;
    *b = s->kh > sh ? s->tap_offset[sh * s->kw] : 0;
    for (int64_t kh = 0; kh < s->kh; kh++)
        for (int64_t kw = 0; kw < s->kw; kw++)
            if (s->tap_offset[kh * s->kw + kw] !=
                (kh % sh) * *a + (kh / sh) * *b + s->tap_offset[kw])
                return false;
    return true;
}

/* CONV_TAPS(T) of conv2d.cl and conv2d_channels.cl: `xr` set from the kernel's xp and
 * T(offset from xr) once per tap; for the kernel's rows (conv_tap_rows), a loop over the
 * rows with xr at each and T once per tap of row 0. */
static byocl_status define_conv_taps(clg_kernel *k, const clg_conv_sched *s, const char *label,
                                     byocl_error *err)
{
    int64_t a = 0, b = 0, sh = s->stride[0];
    bool rows = conv_tap_rows(s, &a, &b);
    byocl_textbuf taps = {0};
    if (rows)
        base_textbuf_printf(&taps, "_Pragma(\"unroll 1\") for (int kh = 0; kh < %lld; kh++) { "
                            "const __global XT *xr = xp + (kh %% %lld * %lld + kh / %lld * %lld);",
                            (long long)s->kh, (long long)sh, (long long)a, (long long)sh,
                            (long long)b);
    else
        base_textbuf_printf(&taps, "{ const __global XT *xr = xp;");
    for (int t = 0; t < (rows ? s->kw : s->ntaps); t++)
        base_textbuf_printf(&taps, " T(%lld)", (long long)s->tap_offset[t]);
    base_textbuf_printf(&taps, " }");
    char *tap_list = base_textbuf_take(&taps);
    if (!tap_list)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory writing %s", label);
    clg_kernel_define(k, "CONV_TAPS(T)", "%s", tap_list);
    free(tap_list);
    return BYOCL_OK;
}

static byocl_status emit_conv(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    int node = grp->anchor;
    const byocl_node *n = &fn->nodes[node];
    /* With a prologue the conv reads the prologue's input and applies its steps. */
    const clg_group *pro = grp->prologue >= 0 ? &gen->graph.groups[grp->prologue] : NULL;
    int x_root = gen->graph.info[pro ? fn->nodes[pro->steps[0]].args[pro->chain_arg[0]]
                                     : n->args[0]].root;
    int x = clg_gen_root_buf(gen, x_root);
    if (x < 0)
        return gen->err->status;
    clg_conv_sched s;
    byocl_status st = clg_conv_schedule(fn, node, &gen->opt,
                                        clg_gen_root_slack(gen, x_root), &s, gen->err);
    if (st != BYOCL_OK) {
        clg_conv_sched_free(&s);
        return st;
    }
    if (clg_conv_is_depthwise(&s)) {
        st = emit_conv_depthwise(gen, grp, &s);
        clg_conv_sched_free(&s);
        return st;
    }
    char label[96], desc[64];
    clg_group_label(gen, grp, label, sizeof label);
    clg_node_desc(fn, node, desc, sizeof desc);
    int w = packed_weight(gen, node, s.packed_elems, &conv_packing, &s);
    byocl_dtype x_dtype = dtype_of(gen, x_root);
    if (w < 0)
        x = -1;
    if (x >= 0 && !s.direct) {
        x = emit_conv_input(gen, &s, desc, x, x_dtype, pro);
        x_dtype = BYOCL_FLOAT32;
        pro = NULL; /* applied by the layout */
    }
    int y = x >= 0 ? clg_gen_root_buf(gen, grp->tail) : -1;
    if (y < 0) {
        clg_conv_sched_free(&s);
        return gen->err->status;
    }
    clg_kernel k;
    const char *tmpl = s.channels ? "conv2d_channels" : "conv2d";
    clg_kernel_begin(&k, gen, tmpl);
    clg_kernel_buffer(&k, "x", x, x_dtype, false);
    clg_kernel_buffer(&k, "w", w, BYOCL_FLOAT32, false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    char vload[96];
    clg_kernel_define(&k, "XT", "%s", x_dtype == BYOCL_FLOAT16 ? "ushort" : "float");
    if (s.channels) {
        clg_kernel_define(&k, "VEC", "float%d", s.oct);
        clg_kernel_define(&k, "VLOAD_W", "vload%d", s.oct);
        clg_kernel_define(&k, "LD_X(p)", "%s", vload_text(x_dtype, 1, vload, sizeof vload));
        clg_kernel_define(&k, "RT", "%d", s.rt);
        clg_kernel_define(&k, "CT", "%d", s.ct);
        clg_kernel_define(&k, "NCT", "%lld", (long long)s.nct);
    } else {
        clg_kernel_define(&k, "VEC", "float%d", s.pt);
        clg_kernel_define(&k, "VLOAD_X(p)", "%s", vload_text(x_dtype, s.pt, vload, sizeof vload));
        clg_kernel_define(&k, "PT", "%d", s.pt);
    }
    clg_kernel_define(&k, "OCT", "%d", s.oct);
    clg_kernel_define(&k, "G", "%lld", (long long)s.groups);
    clg_kernel_define(&k, "OB", "%lld", (long long)s.ob);
    clg_kernel_define(&k, "OC_G", "%lld", (long long)s.oc_g);
    clg_kernel_define(&k, "OC", "%lld", (long long)s.oc);
    clg_kernel_define(&k, "OH", "%lld", (long long)s.oh);
    clg_kernel_define(&k, "OW", "%lld", (long long)s.ow);
    clg_kernel_define(&k, "WPH", "%lld", (long long)s.wph);
    clg_kernel_define(&k, "XC_STRIDE", "%lld", (long long)s.xc_stride);
    /* The input channels are a loop bound only: an argument, so that convs differing only
     * in them (densenet's 1x1 convs of a dense block) share one kernel. */
    clg_kernel_int(&k, "CIN_G", s.cin_g);
    clg_kernel_define(&k, "XN_STRIDE", "(G * CIN_G * XC_STRIDE)");
    clg_kernel_define(&k, "NTAPS", "%d", s.ntaps);
    byocl_textbuf prefetch = {0};
    for (int i = 0; i < s.n_prefetch; i++)
        base_textbuf_printf(&prefetch, "%sBYOCL_PREFETCH((p) + %lld)", i ? "; " : "",
                            (long long)s.prefetch_offset[i]);
    char *prefetch_list = base_textbuf_take(&prefetch);
    clg_kernel_define(&k, "PREFETCH_X(p)", "%s", prefetch_list ? prefetch_list : "");
    if (s.n_prefetch > 0 && !prefetch_list)
        st = byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory writing %s", label);
    free(prefetch_list);
    if (s.in_place) { /* the kernel places its taps */
        static const char *const names[] = {"H", "W", "KH", "KW", "SH", "SW", "DH", "DW",
                                            "PAD_T", "PAD_L"};
        const int64_t values[] = {s.h, s.w, s.kh, s.kw, s.stride[0], s.stride[1],
                                  s.dilation[0], s.dilation[1], s.pad[0], s.pad[1]};
        clg_kernel_define(&k, "IN_PLACE", "1");
        define_ints(&k, names, values, sizeof names / sizeof names[0]);
    } else {
        st = define_conv_taps(&k, &s, label, gen->err);
    }
    if (st == BYOCL_OK && pro && s.channels) /* cl_graph.c's prologue_fits admits none */
        st = byocl_error_set(gen->err, BYOCL_ERR_INVALID, "%s: a prologue on channel tiles",
                             label);
    else if (st == BYOCL_OK && pro)
        st = clg_prologue_define(&k, pro, s.pt, gen->err);
    if (st == BYOCL_OK && s.channels)
        st = clg_epilogue_define_channels(&k, grp, s.oct, gen->err);
    else if (st == BYOCL_OK) /* with WPH == OW the grid is the output: a tile may span rows */
        st = clg_epilogue_define_tiles(&k, grp, s.pt, s.wph == s.ow ? 2 : 1, gen->err);
    size_t global[3] = {(size_t)s.npt, (size_t)s.ob, (size_t)(s.n * s.groups)};
    st = clg_kernel_finish(&k, st, tmpl, label, 3, global, clg_group_flops(gen, grp));
    clg_conv_sched_free(&s);
    return st;
}

/* X_AT(b, row, k) of dense.cl: the offset of x's element (row, k) in product b. */
static void x_offset_text(const clg_dense_sched *s, char *buf, size_t len)
{
    size_t at = 0;
    if (s->x_matrices > 1)
        at = (size_t)snprintf(buf, len, "(b) * %lld + ", (long long)(s->r * s->k));
    if (at < len)
        snprintf(buf + at, len - at,
                 s->x_kr ? "(k) * %lld + (row)" : "(row) * %lld + (k)",
                 (long long)(s->x_kr ? s->r : s->k));
}

/* A dense of at most this many rows over a float32 weight with rows of DENSE_GEMV_K or
 * more reads the weight as it is (dense_gemv.cl), as the host's GEMVs do: the packed copy
 * was made at every build, cached ones too (vgg11's classifier: 411 MB). PoCL on an Intel
 * Xeon, two threads: vgg11's cached offloaded build 0.42-0.43 -> 0.07 s and its peak RSS
 * 1.16 -> 0.87 GB, alexnet's 0.21-0.23 -> 0.05 s; their GEMVs 10-20% faster (alexnet's
 * 9216 -> 4096 layer 6.5 -> 5.2-5.5 ms), the classifiers of resnet18 and mobilenet_v2 as
 * fast, googlenet's 0.23-0.25 -> 0.16-0.17 ms. */
#define DENSE_GEMV_ROWS 4
#define DENSE_GEMV_K 256
/* Units a dense_gemv.cl work-item computes (2: 5-10% slower, 8 as fast). */
#define DENSE_GEMV_UT 4

static bool dense_gemv(const clg_gen *gen, int node, const clg_dense_sched *s)
{
    const byocl_node *n = &gen->fn->nodes[node];
    int x_root = gen->graph.info[n->args[0]].root, w_root = gen->graph.info[n->args[1]].root;
    return strcmp(n->op->name, "nn.dense") == 0 && s->r <= DENSE_GEMV_ROWS &&
           s->k >= DENSE_GEMV_K && dtype_of(gen, x_root) == BYOCL_FLOAT32 &&
           dtype_of(gen, w_root) == BYOCL_FLOAT32;
}

/* nn.dense of a few rows over its float32 weight as it is (dense_gemv). */
static byocl_status emit_dense_gemv(clg_gen *gen, const clg_group *grp, const clg_dense_sched *s,
                                    const char *label)
{
    int x_root, w_root, x, w, y;
    if (!data_weight_result(gen, grp, &x_root, &w_root, &x, &w, &y))
        return gen->err->status;
    clg_kernel k;
    clg_kernel_begin(&k, gen, "dense");
    clg_kernel_buffer(&k, "x", x, BYOCL_FLOAT32, false);
    clg_kernel_buffer(&k, "w", w, BYOCL_FLOAT32, false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    clg_kernel_define(&k, "UT", "%d", DENSE_GEMV_UT);
    clg_kernel_define(&k, "R", "%lld", (long long)s->r);
    clg_kernel_define(&k, "K", "%lld", (long long)s->k);
    clg_kernel_define(&k, "U", "%lld", (long long)s->u);
    byocl_status st = clg_epilogue_define(&k, grp, gen->err);
    size_t global = (size_t)((s->u + DENSE_GEMV_UT - 1) / DENSE_GEMV_UT);
    return clg_kernel_finish(&k, st, "dense_gemv", label, 1, &global, clg_group_flops(gen, grp));
}

/* nn.dense and nn.batch_matmul: dense.cl after packing the weight (tensor_b), or
 * dense_gemv.cl over the weight as it is. */
static byocl_status emit_dense(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    int node = grp->anchor;
    clg_dense_sched s;
    byocl_status st = clg_dense_schedule(fn, node, &s, gen->err);
    if (st != BYOCL_OK)
        return st;
    char label[96];
    clg_group_label(gen, grp, label, sizeof label);
    if (dense_gemv(gen, node, &s))
        return emit_dense_gemv(gen, grp, &s, label);
    int w = packed_weight(gen, node, s.packed_elems, &dense_packing, &s);
    int x_root = gen->graph.info[fn->nodes[node].args[0]].root;
    int x = w >= 0 ? clg_gen_root_buf(gen, x_root) : -1;
    int y = x >= 0 ? clg_gen_root_buf(gen, grp->tail) : -1;
    if (y < 0)
        return gen->err->status;
    bool batched = strcmp(fn->nodes[node].op->name, "nn.batch_matmul") == 0;
    clg_kernel k;
    clg_kernel_begin(&k, gen, batched ? "batch_matmul" : "dense");
    clg_kernel_buffer(&k, "x", x, dtype_of(gen, x_root), false);
    clg_kernel_buffer(&k, "w", w, BYOCL_FLOAT32, false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    char vload[96], x_at[96];
    if (s.ut == 1)
        clg_kernel_define(&k, "VEC", "float");
    else
        clg_kernel_define(&k, "VEC", "float%d", s.ut);
    clg_kernel_define(&k, "VLOAD_W(p)", "%s", vload_text(BYOCL_FLOAT32, s.ut, vload, sizeof vload));
    clg_kernel_define(&k, "UT", "%d", s.ut);
    clg_kernel_define(&k, "RT", "%d", s.rt);
    clg_kernel_define(&k, "K", "%lld", (long long)s.k);
    clg_kernel_define(&k, "U", "%lld", (long long)s.u);
    clg_kernel_define(&k, "R", "%lld", (long long)s.r);
    clg_kernel_define(&k, "UB", "%lld", (long long)s.ub);
    x_offset_text(&s, x_at, sizeof x_at);
    clg_kernel_define(&k, "X_AT(b, row, k)", "(%s)", x_at);
    clg_kernel_define(&k, "X_KSTRIDE", "%lld", (long long)(s.x_kr ? s.r : 1));
    clg_kernel_define(&k, "X_RSTRIDE", "%lld", (long long)(s.x_kr ? 1 : s.k));
    clg_kernel_define(&k, "W_MATRIX(b)", "%s", s.w_matrices > 1 ? "(b)" : "0");
    st = s.ut > 1 ? clg_epilogue_define_tiles(&k, grp, s.ut, 1, gen->err)
                  : clg_epilogue_define(&k, grp, gen->err);
    size_t global[3] = {(size_t)s.ub, (size_t)s.rb, (size_t)s.batch};
    return clg_kernel_finish(&k, st, "dense", label, batched ? 3 : 2, global,
                             clg_group_flops(gen, grp));
}

/* Pools of stride 1 take whole planes up to this many vectors (16 wide: 384 outputs),
 * row tiles beyond. googlenet's 3x3/1 max pools, PoCL on the Intel Xeon, two threads
 * (`byocl run --profile`, four alternating rounds): 14x14 maps (13 vectors) 0.076-0.085
 * -> 0.065-0.072 ms, 7x7 (4) the same, 28x28 (49) 0.076-0.119 -> 0.104-0.136. */
#define POOL_PLANE_VECTORS_MAX 24

/* nn.max_pool2d and nn.avg_pool2d of stride 1 over whole planes (kernels_cl/pool2d_plane.cl;
 * g's clg_plane_vectors, nv, is not 0); emit_pool has bound x (root x_root) and y. */
static byocl_status emit_plane_pool(clg_gen *gen, const clg_group *grp, const clg_plane *g,
                                    int64_t nv, const char *label, int x_root, int x, int y)
{
    const byocl_node *n = &gen->fn->nodes[grp->anchor];
    const byocl_shape *in = &gen->fn->nodes[n->args[0]].type->shape;
    int vf = clg_tile_width(gen->opt.vector_width);
    clg_kernel k;
    clg_kernel_begin(&k, gen, "pool2d_plane");
    clg_kernel_buffer(&k, "x", x, dtype_of(gen, x_root), false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    clg_kernel_int(&k, "opaque_zero", 0);
    clg_kernel_define(&k, "AS_VEC(v)", "as_float%d(v)", vf);
    clg_kernel_define(&k, "AS_INTV(v)", "as_int%d(v)", vf);
    clg_kernel_define(&k, "TO_VEC(v)", "convert_float%d(v)", vf);
    clg_kernel_define(&k, "POOL_MAX", "%d", strcmp(n->op->name, "nn.max_pool2d") == 0);
    clg_kernel_define(&k, "COUNT_INCLUDE_PAD", "%d",
                      byocl_attrs_get_bool(&n->attrs, "count_include_pad", false));
    int64_t nc = in->dims[0] * in->dims[1];
    byocl_status st = define_plane(&k, g, vf, dtype_of(gen, x_root), nc, nv)
                          ? clg_epilogue_define_tiles(&k, grp, vf, 2, gen->err)
                          : byocl_error_set(gen->err, BYOCL_ERR_NOMEM,
                                            "out of memory writing %s", k.name);
    size_t global = (size_t)nc;
    return clg_kernel_finish(&k, st, "pool2d_plane", label, 1, &global,
                             clg_group_flops(gen, grp));
}

/* nn.max_pool2d and nn.avg_pool2d (kernels_cl/pool2d_rows.cl): row tiles of pt outputs,
 * as a depthwise conv2d's; emit_pool has bound the input x (root x_root) and the result y. */
static byocl_status emit_row_pool(clg_gen *gen, const clg_group *grp, const nn_window *win,
                                  int pt, const char *label, int x_root, int x, int y)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    const byocl_shape *in = &fn->nodes[n->args[0]].type->shape;
    const byocl_shape *out = &n->type->shape;
    bool max_pool = strcmp(n->op->name, "nn.max_pool2d") == 0;
    int64_t tiles = (out->dims[3] + pt - 1) / pt;
    int ry = clg_window_rows(pt, win->stride, win->kernel, win->dilation, win->pad[1],
                             in->dims[3], out->dims[2], out->dims[3]);
    clg_kernel k;
    clg_kernel_begin(&k, gen, max_pool ? "max_pool2d" : "avg_pool2d");
    clg_kernel_buffer(&k, "x", x, dtype_of(gen, x_root), false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    clg_kernel_define(&k, "VEC", "float%d", pt);
    clg_kernel_define(&k, "VSTORE", "vstore%d", pt);
    clg_kernel_define(&k, "INTV", "int%d", pt);
    clg_kernel_define(&k, "TO_VEC(v)", "convert_float%d(v)", pt);
    char lanes[96];
    int at = snprintf(lanes, sizeof lanes, "((int%d)(0", pt);
    for (int j = 1; j < pt && at < (int)sizeof lanes; j++)
        at += snprintf(lanes + at, sizeof lanes - (size_t)at, ", %d", j);
    clg_kernel_define(&k, "LANES", "%s))", lanes);
    clg_kernel_define(&k, "POOL_MAX", "%d", max_pool);
    clg_kernel_define(&k, "COUNT_INCLUDE_PAD", "%d",
                      byocl_attrs_get_bool(&n->attrs, "count_include_pad", false));
    static const char *const names[] = {"PT", "TILES", "RY", "ROWS_IN", "H", "W", "OH", "OW",
                                        "KH", "KW", "SH", "SW", "DH", "DW", "PAD_T", "PAD_L",
                                        "PADDED_H", "PADDED_W", "SPAN"};
    const int64_t values[] = {pt, tiles, ry,
                              window_rows_in(ry, win->stride[0], win->kernel[0], win->dilation[0]),
                              in->dims[2], in->dims[3], out->dims[2], out->dims[3],
                              win->kernel[0], win->kernel[1], win->stride[0], win->stride[1],
                              win->dilation[0], win->dilation[1], win->pad[0], win->pad[1],
                              in->dims[2] + win->pad[2], in->dims[3] + win->pad[3],
                              clg_row_load_width(pt, win->stride[1]) +
                                  (win->kernel[1] - 1) * win->dilation[1]};
    define_ints(&k, names, values, sizeof names / sizeof names[0]);
    row_tiles g = {.pt = pt, .stride = win->stride[1], .taps = win->kernel[1],
                   .dilation = win->dilation[1], .pad = win->pad[1], .width = in->dims[3],
                   .out_width = out->dims[3]};
    byocl_status st = define_row_taps(&k, &g, dtype_of(gen, x_root),
                                      max_pool ? "-INFINITY" : "0.0f");
    if (st == BYOCL_OK)
        st = clg_epilogue_define_tiles(&k, grp, pt, 1, gen->err);
    size_t global[3];
    define_row_tile_walk(&k, out->dims[2], ry, tiles, out->dims[0] * out->dims[1], global);
    return clg_kernel_finish(&k, st, "pool2d_rows", label, 3, global, clg_group_flops(gen, grp));
}

/* The label of group `grp` and the buffers of its anchor's first argument (root *x_root,
 * buffer *x) and of its result (*y); false with the error set. */
static bool unary_buffers(clg_gen *gen, const clg_group *grp, char *label, size_t len,
                          int *x_root, int *x, int *y)
{
    clg_group_label(gen, grp, label, len);
    *x_root = gen->graph.info[gen->fn->nodes[grp->anchor].args[0]].root;
    *x = clg_gen_root_buf(gen, *x_root);
    *y = *x >= 0 ? clg_gen_root_buf(gen, grp->tail) : -1;
    return *y >= 0;
}

/* nn.global_avg_pool2d, and a mean over each of `planes` runs of `hw` contiguous elements
 * (kernels_cl/global_pool2d.cl): a plane per work-item, summed in vectors of the device's
 * width; the caller has bound the input x (root x_root) and the result y. */
static byocl_status emit_global_pool(clg_gen *gen, const clg_group *grp, const char *label,
                                    int x_root, int x, int y, int64_t planes, int64_t hw)
{
    int pt = clg_tile_width(gen->opt.vector_width);
    clg_kernel k;
    clg_kernel_begin(&k, gen, "global_pool2d");
    clg_kernel_buffer(&k, "x", x, dtype_of(gen, x_root), false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    clg_kernel_define(&k, "VEC", "float%d", pt);
    char vload[96];
    clg_kernel_define(&k, "VLOAD_X(p)", "%s",
                      vload_text(dtype_of(gen, x_root), pt, vload, sizeof vload));
    static const char *const names[] = {"NC", "HW", "PT"};
    const int64_t values[] = {planes, hw, pt};
    define_ints(&k, names, values, sizeof names / sizeof names[0]);
    byocl_status st = clg_epilogue_define(&k, grp, gen->err);
    size_t global[1] = {(size_t)planes};
    return clg_kernel_finish(&k, st, "global_pool2d", label, 1, global,
                             clg_group_flops(gen, grp));
}

static byocl_status emit_pool(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    int node = grp->anchor;
    const byocl_node *n = &fn->nodes[node];
    const byocl_shape *in = &fn->nodes[n->args[0]].type->shape;
    const byocl_shape *out = &n->type->shape;
    char label[96];
    int x_root, x, y;
    if (!unary_buffers(gen, grp, label, sizeof label, &x_root, &x, &y))
        return gen->err->status;
    if (strcmp(n->op->name, "nn.global_avg_pool2d") == 0)
        return emit_global_pool(gen, grp, label, x_root, x, y, in->dims[0] * in->dims[1],
                                in->dims[2] * in->dims[3]);
    nn_slide slide;
    byocl_status st = nn_slide_read(&n->attrs, "pool_size", 2, in, &slide, gen->err);
    if (st != BYOCL_OK)
        return st;
    nn_window win = slide.win;
    bool max_pool = strcmp(n->op->name, "nn.max_pool2d") == 0;
    if (win.stride[0] == 1 && win.stride[1] == 1 &&
        gen->opt.pool_tiles != BYOCL_CL_POOL_ROWS) {
        clg_plane g = {.h = in->dims[2], .w = in->dims[3], .oh = out->dims[2],
                       .ow = out->dims[3], .kh = win.kernel[0], .kw = win.kernel[1],
                       .dh = win.dilation[0], .dw = win.dilation[1], .pad_t = win.pad[0],
                       .pad_l = win.pad[1]};
        int64_t nv = clg_plane_vectors(&g, gen->opt.vector_width);
        if (nv > 0 && nv <= POOL_PLANE_VECTORS_MAX)
            return emit_plane_pool(gen, grp, &g, nv, label, x_root, x, y);
    }
    int row_pt = clg_row_tile_width(gen->opt.vector_width, win.stride[1], win.kernel[1],
                                    win.dilation[1], win.pad[1], in->dims[3], out->dims[3]);
    if (clg_row_tiles_pay(row_pt, win.stride[1], win.kernel[1], win.dilation[1], win.pad[1],
                          in->dims[3], out->dims[3]))
        return emit_row_pool(gen, grp, &win, row_pt, label, x_root, x, y);
    clg_kernel k;
    clg_kernel_begin(&k, gen, "pool2d");
    clg_kernel_buffer(&k, "x", x, dtype_of(gen, x_root), false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    static const char *const names[] = {"H", "W", "OH", "OW", "KH", "KW", "SH", "SW",
                                        "DH", "DW", "PAD_T", "PAD_L", "PADDED_H", "PADDED_W"};
    const int64_t values[] = {in->dims[2], in->dims[3], out->dims[2], out->dims[3],
                              win.kernel[0], win.kernel[1], win.stride[0], win.stride[1],
                              win.dilation[0], win.dilation[1], win.pad[0], win.pad[1],
                              in->dims[2] + win.pad[2], in->dims[3] + win.pad[3]};
    clg_kernel_define(&k, "POOL_MAX", "%d", max_pool);
    clg_kernel_define(&k, "COUNT_INCLUDE_PAD", "%d",
                     byocl_attrs_get_bool(&n->attrs, "count_include_pad", false));
    define_ints(&k, names, values, sizeof names / sizeof names[0]);
    st = clg_epilogue_define(&k, grp, gen->err);
    size_t global[3] = {(size_t)out->dims[3], (size_t)out->dims[2],
                        (size_t)(out->dims[0] * out->dims[1])};
    return clg_kernel_finish(&k, st, "pool2d", label, 3, global, clg_group_flops(gen, grp));
}

/* nn.softmax and nn.log_softmax (kernels_cl/softmax.cl) and nn.layer_norm
 * (kernels_cl/layer_norm.cl): one slice along the axis per work-item, with the group's
 * epilogue on each result. */
static byocl_status emit_softmax(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    const byocl_shape *shape = &n->type->shape;
    bool layer_norm = strcmp(n->op->name, "nn.layer_norm") == 0;
    const char *kind = layer_norm ? "layer_norm" : "softmax";
    int64_t axis = byocl_attrs_get_int(&n->attrs, "axis", -1);
    if (axis < 0)
        axis += shape->rank;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++)
        outer *= shape->dims[d];
    for (int d = (int)axis + 1; d < shape->rank; d++)
        inner *= shape->dims[d];
    char label[96];
    clg_group_label(gen, grp, label, sizeof label);
    static const char *const names[] = {"x", "gamma", "beta"};
    int n_in = layer_norm ? 3 : 1, roots[3], bufs[3];
    for (int a = 0; a < n_in; a++) {
        roots[a] = gen->graph.info[n->args[a]].root;
        if ((bufs[a] = clg_gen_root_buf(gen, roots[a])) < 0)
            return gen->err->status;
    }
    int y = clg_gen_root_buf(gen, grp->tail);
    if (y < 0)
        return gen->err->status;
    clg_kernel k;
    clg_kernel_begin(&k, gen, kind);
    for (int a = 0; a < n_in; a++)
        clg_kernel_buffer(&k, names[a], bufs[a], dtype_of(gen, roots[a]), false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    static const char *const sizes[] = {"OUTER", "LEN", "INNER"};
    const int64_t values[] = {outer, shape->dims[axis], inner};
    define_ints(&k, sizes, values, 3);
    if (layer_norm) {
        char eps[64];
        clg_float_literal(byocl_attrs_get_float(&n->attrs, "epsilon", 1e-5), eps, sizeof eps);
        clg_kernel_define(&k, "EPSILON", "%s", eps);
        clg_kernel_define(&k, "SCALE", "%d", byocl_attrs_get_bool(&n->attrs, "scale", true));
        clg_kernel_define(&k, "CENTER", "%d", byocl_attrs_get_bool(&n->attrs, "center", true));
    } else {
        clg_kernel_define(&k, "LOG_SOFTMAX", "%d",
                          strcmp(n->op->name, "nn.log_softmax") == 0);
    }
    byocl_status st = clg_epilogue_define(&k, grp, gen->err);
    size_t global = (size_t)(outer * inner);
    return clg_kernel_finish(&k, st, kind, label, 1, &global, clg_group_flops(gen, grp));
}

void clg_digits_offset_text(const int64_t *dims, const int64_t *strides, int n,
                            const char *var, byocl_textbuf *t)
{
    bool any = false;
    int64_t below = 1; /* elements of the axes after g */
    for (int g = n - 1; g >= 0; below *= dims[g], g--) {
        if (strides[g] == 0)
            continue;
        base_textbuf_printf(t, "%s(%s)", any ? " + " : "", var);
        any = true;
        if (below > 1)
            base_textbuf_printf(t, " / %lld", (long long)below);
        if (g > 0) /* the outermost digit needs no modulo: var < the product of dims */
            base_textbuf_printf(t, " %% %lld", (long long)dims[g]);
        if (strides[g] != 1)
            base_textbuf_printf(t, " * %lld", (long long)strides[g]);
    }
    if (!any)
        base_textbuf_puts(t, "0");
}

/* sum, mean, prod, max, min, argmax, argmin, all, any, variance (kernels_cl/reduce.cl): the
 * input's axes that are 1 are dropped and neighbours that are both reduced or both kept
 * merged (they are contiguous, and merging keeps the C order that argmax's positions count
 * in), so the inner loop's AT(r) divides only when the reduced axes lie apart. */
static byocl_status emit_reduce(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    const byocl_shape *in = &fn->nodes[n->args[0]].type->shape;
    ops_reduce_kind kind = ops_reduce_kind_of(n->op->name);
    bool reduced[BYOCL_MAX_RANK];
    byocl_status st = ops_reduce_axes(&n->attrs, in->rank, reduced, gen->err);
    if (st != BYOCL_OK)
        return st;
    /* The merged axes, C order: kept ones (index the output) and reduced ones. */
    int64_t dims[2][BYOCL_MAX_RANK], strides[2][BYOCL_MAX_RANK], count = 1, stride = 1;
    int n_axes[2] = {0, 0}, last = -1;
    for (int d = in->rank - 1; d >= 0; d--) {
        int64_t axis_stride = stride;
        stride *= in->dims[d];
        if (in->dims[d] == 1)
            continue;
        int r = reduced[d];
        if (r == last) {
            dims[r][n_axes[r] - 1] *= in->dims[d];
        } else {
            dims[r][n_axes[r]] = in->dims[d];
            strides[r][n_axes[r]++] = axis_stride;
        }
        last = r;
        if (r)
            count *= in->dims[d];
    }
    for (int r = 0; r < 2; r++) /* gathered innermost first */
        for (int i = 0; i < n_axes[r] / 2; i++) {
            int j = n_axes[r] - 1 - i;
            int64_t td = dims[r][i], ts = strides[r][i];
            dims[r][i] = dims[r][j];
            strides[r][i] = strides[r][j];
            dims[r][j] = td;
            strides[r][j] = ts;
        }
    /* A mean over the innermost axes alone (x.mean([2, 3]) of NCHW, shufflenet's and
     * mnasnet's global pools) is global_pool2d's, in vectors: reduce.cl took 0.060 ms for
     * shufflenet_v2_x1_0's (PoCL, Intel Xeon, two threads). Longer ones keep reduce.cl's
     * compensated sums. */
    if (kind == OPS_REDUCE_MEAN && n_axes[1] == 1 && strides[1][0] == 1 && count > 1 &&
        count <= CLG_PLANE_MEAN_MAX && (n_axes[0] == 0 || strides[0][0] == count)) {
        char label[96];
        int x_root, x, y;
        if (!unary_buffers(gen, grp, label, sizeof label, &x_root, &x, &y))
            return gen->err->status;
        return emit_global_pool(gen, grp, label, x_root, x, y, byocl_shape_numel(in) / count,
                                count);
    }
    byocl_textbuf base = {0}, at = {0};
    clg_digits_offset_text(dims[0], strides[0], n_axes[0], "o", &base);
    clg_digits_offset_text(dims[1], strides[1], n_axes[1], "r", &at);
    char *base_text = base_textbuf_take(&base), *at_text = base_textbuf_take(&at);
    char label[96];
    clg_group_label(gen, grp, label, sizeof label);
    int x_root = gen->graph.info[n->args[0]].root;
    int x = base_text && at_text ? clg_gen_root_buf(gen, x_root) : -1;
    /* variance's mean: one per output element (clg_supports checked its shape) */
    bool variance = kind == OPS_REDUCE_VARIANCE;
    int m_root = variance ? gen->graph.info[n->args[1]].root : x_root;
    int m = x >= 0 && variance ? clg_gen_root_buf(gen, m_root) : x;
    int y = m >= 0 ? clg_gen_root_buf(gen, grp->tail) : -1;
    if (y < 0) {
        free(base_text);
        free(at_text);
        return base_text && at_text ? gen->err->status
                                    : byocl_error_set(gen->err, BYOCL_ERR_NOMEM,
                                                      "out of memory writing %s", label);
    }
    int64_t nout = byocl_shape_numel(&n->type->shape);
    clg_kernel k;
    clg_kernel_begin(&k, gen, "reduce");
    clg_kernel_buffer(&k, "x", x, dtype_of(gen, x_root), false);
    if (variance)
        clg_kernel_buffer(&k, "m", m, dtype_of(gen, m_root), false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    clg_kernel_define(&k, "NOUT", "%lld", (long long)nout);
    clg_kernel_define(&k, "COUNT", "%lld", (long long)count);
    clg_kernel_define(&k, "BASE(o)", "(%s)", base_text);
    clg_kernel_define(&k, "AT(r)", "(%s)", at_text);
    free(base_text);
    free(at_text);
    bool sums = kind == OPS_REDUCE_SUM || kind == OPS_REDUCE_MEAN || variance;
    bool arg = kind == OPS_REDUCE_ARGMAX || kind == OPS_REDUCE_ARGMIN;
    clg_kernel_define(&k, "SUMS", "%d", sums);
    clg_kernel_define(&k, "ARG", "%d", arg);
    clg_kernel_define(&k, "VARIANCE", "%d", variance);
    if (arg) {
        /* The reference's reduce_takes_f: x replaces the best b unless b is NaN or x is
         * not past it (for the first index, not equal to it either). */
        bool up = kind == OPS_REDUCE_ARGMAX;
        bool to_last = byocl_attrs_get_bool(&n->attrs, "select_last_index", false);
        const char *not_past = up ? (to_last ? "<" : "<=") : (to_last ? ">" : ">=");
        clg_kernel_define(&k, "INIT", "%s", up ? "(-INFINITY)" : "INFINITY");
        clg_kernel_define(&k, "TAKES(x, b)", "(!isnan(b) && !((x) %s (b)))", not_past);
    } else if (kind == OPS_REDUCE_MEAN || variance) {
        /* variance: count - 1 with unbiased, as the reference */
        bool unbiased = variance && byocl_attrs_get_bool(&n->attrs, "unbiased", false);
        char divisor[48];
        clg_float_literal((double)(count - unbiased), divisor, sizeof divisor);
        clg_kernel_define(&k, "FINISH(v)", "((v) / %s)", divisor);
    } else if (sums) {
        clg_kernel_define(&k, "FINISH(v)", "(v)");
    } else if (kind == OPS_REDUCE_ALL || kind == OPS_REDUCE_ANY) {
        /* bools are 0.0f and 1.0f: all is their minimum, any their maximum */
        bool all = kind == OPS_REDUCE_ALL;
        clg_kernel_define(&k, "INIT", "%s", all ? "1.0f" : "0.0f");
        clg_kernel_define(&k, "STEP(a, x)", "%s", all ? "fmin(a, x)" : "fmax(a, x)");
    } else {
        bool prod = kind == OPS_REDUCE_PROD, max = kind == OPS_REDUCE_MAX;
        clg_kernel_define(&k, "INIT", "%s", prod ? "1.0f" : max ? "(-INFINITY)" : "INFINITY");
        clg_kernel_define(&k, "STEP(a, x)", "%s",
                          prod ? "((a) * (x))" : max ? "byocl_max(a, x)" : "byocl_min(a, x)");
    }
    st = clg_epilogue_define(&k, grp, gen->err);
    size_t global = (size_t)nout;
    return clg_kernel_finish(&k, st, "reduce", label, 1, &global, clg_group_flops(gen, grp));
}

/* GATHER_INDEX of strided_slice and broadcast_to: src = map.base + the output index's
 * digits times map.coef, with the output's axes of extent 1 dropped and neighbours that
 * the map walks as one merged. */
static void affine_index_text(const byocl_shape *out, const ops_affine *map, byocl_textbuf *t)
{
    int64_t dims[BYOCL_MAX_RANK], coef[BYOCL_MAX_RANK];
    int n = 0;
    for (int d = 0; d < out->rank; d++) {
        if (out->dims[d] == 1)
            continue;
        if (n > 0 && coef[n - 1] == map->coef[d] * out->dims[d]) {
            dims[n - 1] *= out->dims[d];
            coef[n - 1] = map->coef[d];
            continue;
        }
        dims[n] = out->dims[d];
        coef[n++] = map->coef[d];
    }
    base_textbuf_printf(t, "{ src = %lld + ", (long long)map->base);
    clg_digits_offset_text(dims, coef, n, "fi", t);
    base_textbuf_puts(t, "; }");
}

/* GATHER_INDEX of take: output element fi is (o, j, r) of outer x m x inner (m: the
 * indices, o and r: the data's axes before and after the axis; the axis None: the data
 * flattened, outer = inner = 1); it reads data element (o, at, r) of outer x count x inner,
 * at = index j resolved by the mode as the reference kernel does (codegen/ops/index.c):
 * clip clamps, wrap takes it modulo count, fast has no element out of range (ok false). */
static void take_index_text(const byocl_node *n, const byocl_shape *data, int64_t m,
                            byocl_textbuf *t)
{
    int axis = ops_take_axis(&n->attrs, data->rank);
    int64_t outer = 1, inner = 1, count = axis < 0 ? byocl_shape_numel(data) : data->dims[axis];
    for (int d = 0; axis >= 0 && d < data->rank; d++)
        if (d != axis)
            *(d < axis ? &outer : &inner) *= data->dims[d];
    char j[64] = "(fi)";
    if (inner > 1)
        snprintf(j, sizeof j, "(fi) / %lld", (long long)inner);
    if (outer > 1) {
        size_t at = strlen(j);
        snprintf(j + at, sizeof j - at, " %% %lld", (long long)m);
    }
    base_textbuf_printf(t, "{ \\\n    const long v_ = (long)LD_ix(%s); \\\n", j);
    switch (ops_take_mode_of(&n->attrs)) {
    case OPS_TAKE_CLIP:
        base_textbuf_printf(t, "    const int at_ = (int)clamp(v_, 0L, %lldL); \\\n",
                            (long long)(count - 1));
        break;
    case OPS_TAKE_WRAP:
        base_textbuf_printf(t, "    const int at_ = (int)((v_ %% %lld + %lld) %% %lld); \\\n",
                            (long long)count, (long long)count, (long long)count);
        break;
    case OPS_TAKE_FAST:
        base_textbuf_printf(t, "    ok = v_ >= 0 && v_ < %lld; \\\n"
                               "    const int at_ = ok ? (int)v_ : 0; \\\n",
                            (long long)count);
        break;
    }
    base_textbuf_puts(t, "    src = ");
    if (outer > 1)
        base_textbuf_printf(t, "(fi) / %lld * %lld + ", (long long)(m * inner),
                            (long long)(count * inner));
    base_textbuf_puts(t, inner > 1 ? "at_ * " : "at_");
    if (inner > 1)
        base_textbuf_printf(t, "%lld + (fi) %% %lld", (long long)inner, (long long)inner);
    base_textbuf_puts(t, "; \\\n}");
}

/* GATHER_INDEX of gather (ONNX GatherElements): the indices have the output's shape, so
 * output element fi reads index fi, resolved as the reference does (-n..-1 count from the
 * end; out of range: ok false), and the data element whose digits are fi's with the
 * axis digit replaced by that index. */
static void gather_index_text(const byocl_node *n, const byocl_shape *data,
                              const byocl_shape *out, byocl_textbuf *t)
{
    int axis = ops_gather_axis(&n->attrs, data->rank);
    int64_t stride[BYOCL_MAX_RANK], coef[BYOCL_MAX_RANK], s = 1;
    for (int d = data->rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= data->dims[d];
    }
    for (int d = 0; d < out->rank; d++)
        coef[d] = d == axis ? 0 : stride[d];
    long long count = (long long)data->dims[axis];
    base_textbuf_printf(t,
                        "{ \\\n    long v_ = (long)LD_ix(fi); \\\n"
                        "    v_ = v_ < 0 ? v_ + %lld : v_; \\\n"
                        "    ok = v_ >= 0 && v_ < %lld; \\\n"
                        "    src = (ok ? (int)v_ : 0) * %lld + ",
                        count, count, (long long)stride[axis]);
    clg_digits_offset_text(out->dims, coef, out->rank, "fi", t);
    base_textbuf_puts(t, "; \\\n}");
}

/* GATHER_INDEX of gather_nd (Relay's layout, ops_nd_plan): output element fi is (q, s) of
 * (batch x positions) x slice; row j of the indices at column q names a position along
 * data axis b + j (-n..-1 from the end, as the reference resolves it; out of range: ok
 * false), and the source is q's batch, those positions and s. */
static byocl_status gather_nd_index_text(const byocl_node *n, const byocl_shape *data,
                                         const byocl_shape *idx, byocl_textbuf *t,
                                         byocl_error *err)
{
    ops_nd_plan p;
    byocl_status st = ops_nd_plan_make("gather_nd", (int)byocl_attrs_get_int(&n->attrs,
                                                                           "batch_dims", 0),
                                       data, idx, &p, err);
    if (st != BYOCL_OK)
        return st;
    long long slice = (long long)p.slice, row = (long long)(p.batch * p.positions);
    base_textbuf_printf(t, "{ \\\n    const int q_ = (fi) / %lld; \\\n    long v_; \\\n",
                        slice);
    for (int j = 0; j < p.m; j++)
        base_textbuf_printf(t,
                            "    v_ = (long)LD_ix(%lld + q_); \\\n"
                            "    v_ = v_ < 0 ? v_ + %lld : v_; \\\n"
                            "    ok = ok && v_ >= 0 && v_ < %lld; \\\n"
                            "    src += (ok ? (int)v_ : 0) * %lld; \\\n",
                            j * row, (long long)p.dim[j], (long long)p.dim[j],
                            (long long)p.stride[j]);
    base_textbuf_printf(t, "    src += q_ / %lld * %lld + (fi) %% %lld; \\\n}",
                        (long long)p.positions, (long long)p.batch_size, slice);
    return BYOCL_OK;
}

/* GATHER_INDEX of trilu: element fi itself, kept (ops_trilu_keeps) where its column less
 * its row is at least (upper) or at most (lower) k, read from the scalar buffer `ix` when
 * running; ok false (MISSING, 0) elsewhere. */
static void trilu_index_text(const byocl_node *n, const byocl_shape *data, byocl_textbuf *t)
{
    long long cols = (long long)data->dims[data->rank - 1];
    long long rows = (long long)data->dims[data->rank - 2];
    base_textbuf_printf(t,
                        "{ \\\n    const long d_ = (long)((fi) %% %lld) - "
                        "(long)((fi) / %lld %% %lld); \\\n"
                        "    ok = d_ %s (long)LD_ix(0); \\\n    src = (fi); \\\n}",
                        cols, cols, rows,
                        byocl_attrs_get_bool(&n->attrs, "upper", true) ? ">=" : "<=");
}

/* GATHER_INDEX of nn.pad: fi's digit along each padded axis less the width before, then
 * as ops_pad_source maps it: outside the input, "constant" gives ok false (the pad
 * value), "edge" clamps and "reflect" mirrors at the ends. */
static void pad_index_text(const byocl_node *n, const byocl_shape *in, const byocl_shape *out,
                           byocl_textbuf *t)
{
    ops_pad_mode mode = ops_pad_mode_of(&n->attrs);
    int64_t in_stride = byocl_shape_numel(in), out_stride = byocl_shape_numel(out);
    base_textbuf_puts(t, "{ \\\n    int c_; \\\n");
    for (int d = 0; d < out->rank; d++) {
        long long dim = (long long)out->dims[d], len = (long long)in->dims[d];
        in_stride /= in->dims[d];
        out_stride /= out->dims[d];
        if (dim == 1)
            continue;
        char digit[64];
        int at = snprintf(digit, sizeof digit, "(fi)");
        if (out_stride > 1)
            at += snprintf(digit + at, sizeof digit - (size_t)at, " / %lld", (long long)out_stride);
        if (d > 0)
            snprintf(digit + at, sizeof digit - (size_t)at, " %% %lld", dim);
        int64_t before, after;
        ops_pad_width(&n->attrs, d, &before, &after);
        if (!before && !after) {
            base_textbuf_printf(t, "    src += (%s) * %lld; \\\n", digit, (long long)in_stride);
            continue;
        }
        base_textbuf_printf(t, "    c_ = (%s) - %lld; \\\n", digit, (long long)before);
        if (mode == OPS_PAD_CONSTANT)
            base_textbuf_printf(t, "    ok = ok && c_ >= 0 && c_ < %lld; \\\n", len);
        else if (mode == OPS_PAD_EDGE)
            base_textbuf_printf(t, "    c_ = clamp(c_, 0, %lld); \\\n", len - 1);
        else
            base_textbuf_printf(t, "    c_ = c_ < 0 ? -c_ : c_ >= %lld ? %lld - c_ : c_; \\\n",
                                len, 2 * (len - 1));
        base_textbuf_printf(t, "    src += c_ * %lld; \\\n", (long long)in_stride);
    }
    base_textbuf_puts(t, "}");
}

/* strided_slice, broadcast_to, take, gather, gather_nd, trilu and nn.pad
 * (kernels_cl/gather.cl): one input element (or nn.pad's value, or trilu's 0) per output
 * element, then the epilogue. */
static byocl_status emit_gather(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    const char *op = n->op->name;
    const byocl_shape *in = &fn->nodes[n->args[0]].type->shape;
    const byocl_shape *out = &n->type->shape;
    bool pad = strcmp(op, "nn.pad") == 0; /* the pad value as a second input */
    bool trilu = strcmp(op, "trilu") == 0;
    /* take, gather, gather_nd: indices as a second input; trilu: its k */
    bool take = !pad && !ops_is_affine(op);
    byocl_textbuf index = {0};
    if (pad) {
        pad_index_text(n, in, out, &index);
    } else if (trilu) {
        trilu_index_text(n, in, &index);
    } else if (strcmp(op, "gather_nd") == 0) {
        byocl_status st = gather_nd_index_text(n, in, &fn->nodes[n->args[1]].type->shape,
                                               &index, gen->err);
        if (st != BYOCL_OK) {
            free(base_textbuf_take(&index));
            return st;
        }
    } else if (strcmp(op, "gather") == 0) {
        gather_index_text(n, in, out, &index);
    } else if (take) {
        take_index_text(n, in, byocl_shape_numel(&fn->nodes[n->args[1]].type->shape), &index);
    } else {
        ops_affine map;
        byocl_shape shape;
        byocl_status st = ops_affine_map(op, &n->attrs, in, &shape, &map, gen->err);
        if (st != BYOCL_OK)
            return st;
        affine_index_text(out, &map, &index);
    }
    char *body = base_textbuf_take(&index);
    char label[96];
    clg_group_label(gen, grp, label, sizeof label);
    int x_root = gen->graph.info[n->args[0]].root;
    int ix_root = take || pad ? gen->graph.info[n->args[1]].root : -1;
    int x = body ? clg_gen_root_buf(gen, x_root) : -1;
    int ix = x >= 0 && (take || pad) ? clg_gen_root_buf(gen, ix_root) : x;
    int y = ix >= 0 ? clg_gen_root_buf(gen, grp->tail) : -1;
    if (y < 0) {
        free(body);
        return body ? gen->err->status
                    : byocl_error_set(gen->err, BYOCL_ERR_NOMEM, "out of memory writing %s",
                                      label);
    }
    int64_t nout = byocl_shape_numel(out);
    clg_kernel k;
    clg_kernel_begin(&k, gen, pad ? "pad" : op); /* a kernel name has no '.' */
    clg_kernel_buffer(&k, "x", x, dtype_of(gen, x_root), false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    if (take || pad)
        clg_kernel_buffer(&k, take ? "ix" : "pv", ix, fn->nodes[ix_root].type->dtype, false);
    clg_kernel_define(&k, "NOUT", "%lld", (long long)nout);
    clg_kernel_define(&k, "MISSING", "%s", pad ? "LD_pv(0)" : trilu ? "0.0f" : "NAN");
    clg_kernel_define(&k, "GATHER_INDEX(fi, src, ok)", "%s", body);
    free(body);
    byocl_status st = clg_epilogue_define(&k, grp, gen->err);
    size_t global = (size_t)nout;
    return clg_kernel_finish(&k, st, "gather", label, 1, &global, clg_group_flops(gen, grp));
}

/* one_hot (kernels_cl/one_hot.cl): one output element per work-item, on or off by its
 * index, then the epilogue. */
static byocl_status emit_one_hot(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    int roots[3], bufs[3];
    for (int k = 0; k < 3; k++) {
        roots[k] = gen->graph.info[n->args[k]].root;
        bufs[k] = clg_gen_root_buf(gen, roots[k]);
        if (bufs[k] < 0)
            return gen->err->status;
    }
    int y = clg_gen_root_buf(gen, grp->tail);
    if (y < 0)
        return gen->err->status;
    int64_t outer, depth, inner;
    ops_one_hot_plan(&n->attrs, &fn->nodes[roots[0]].type->shape, &outer, &depth, &inner);
    char label[96];
    clg_group_label(gen, grp, label, sizeof label);
    clg_kernel k;
    clg_kernel_begin(&k, gen, "one_hot");
    static const char *const names[] = {"ix", "on", "off"};
    for (int a = 0; a < 3; a++)
        clg_kernel_buffer(&k, names[a], bufs[a], dtype_of(gen, roots[a]), false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    static const char *const sizes[] = {"NOUT", "DEPTH", "INNER"};
    const int64_t values[] = {outer * depth * inner, depth, inner};
    define_ints(&k, sizes, values, sizeof sizes / sizeof sizes[0]);
    byocl_status st = clg_epilogue_define(&k, grp, gen->err);
    size_t global = (size_t)(outer * depth * inner);
    return clg_kernel_finish(&k, st, "one_hot", label, 1, &global, clg_group_flops(gen, grp));
}

/* topk (kernels_cl/topk.cl): one work-item per line sorts by insertion into the results,
 * which it reads back: the values, or with ret_type "indices" the data through the
 * indices. With both results and nothing taking the indices, they go to scratch. */
static byocl_status emit_topk(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    int x_root = gen->graph.info[n->args[0]].root;
    ops_topk p;
    ops_topk_plan(&n->attrs, &fn->nodes[x_root].type->shape, &p);
    char label[96], desc[64], what[112];
    clg_group_label(gen, grp, label, sizeof label);
    int x = clg_gen_root_buf(gen, x_root);
    int vals = x >= 0 && p.values ? clg_gen_root_buf(gen, grp->anchor) : -1;
    int idx = -1;
    if (x >= 0 && p.indices) {
        int item = p.values ? clg_item_of(fn, grp->anchor, 1) : grp->anchor;
        clg_node_desc(fn, grp->anchor, desc, sizeof desc);
        snprintf(what, sizeof what, "indices of %s", desc);
        size_t bytes = (size_t)(p.outer * p.k * p.inner) * byocl_dtype_size(p.index_dtype);
        idx = item >= 0 ? clg_gen_root_buf(gen, item)
                        : clg_gen_buf(gen, BYOCL_CL_BUF_SCRATCH, -1, bytes, what);
    }
    if (x < 0 || (p.values && vals < 0) || (p.indices && idx < 0))
        return gen->err->status;
    clg_kernel k;
    clg_kernel_begin(&k, gen, "topk");
    clg_kernel_buffer(&k, "x", x, dtype_of(gen, x_root), false);
    if (p.values)
        clg_kernel_buffer_rw(&k, "vals", vals, dtype_of(gen, grp->anchor));
    if (p.indices)
        clg_kernel_buffer_rw(&k, "idx", idx, p.index_dtype);
    static const char *const names[] = {"LINES", "LEN", "INNER", "K"};
    const int64_t values[] = {p.outer * p.inner, p.len, p.inner, p.k};
    define_ints(&k, names, values, sizeof names / sizeof names[0]);
    /* The reference's topk_before, for a later element a against an earlier b. */
    clg_kernel_define(&k, "BEFORE(a, b)", "%s",
                      p.ascend ? "(!isnan(a) && (isnan(b) || (a) < (b)))"
                               : "(isnan(a) ? !isnan(b) : (a) > (b))");
    clg_kernel_define(&k, "KEY(at)", "%s",
                      p.values ? "LD_vals(at)" : "LD_x(src + (int)LD_idx(at) * INNER)");
    clg_kernel_define(&k, "SET(at, v, t)", "{ %s%s}", p.values ? "ST_vals(at, v); " : "",
                      p.indices ? "ST_idx(at, t); " : "");
    clg_kernel_define(&k, "MOVE(to, from)", "{ %s%s}",
                      p.values ? "ST_vals(to, LD_vals(from)); " : "",
                      p.indices ? "ST_idx(to, LD_idx(from)); " : "");
    size_t global = (size_t)(p.outer * p.inner);
    return clg_kernel_finish(&k, BYOCL_OK, "topk", label, 1, &global, 0);
}

/* The taps of image.resize2d as kernels_cl/resize.cl reads them: the plans of the output
 * rows then columns (ops_resize_plan, the reference's), offsets (rows times the input
 * width; -1 for a row or column outside the input, which takes extrapolation_value) in
 * *offsets and weights in *weights, two new tensors; *crops says whether any offset is -1. */
static byocl_status resize_tables(const byocl_node *n, const byocl_shape *in,
                                  byocl_tensor **offsets, byocl_tensor **weights, bool *crops,
                                  byocl_error *err)
{
    ops_resize_axis plan[2] = {{0}, {0}};
    *crops = false;
    byocl_status st = ops_resize_plan(&n->attrs, 0, in->dims[2], &plan[0], err);
    if (st == BYOCL_OK)
        st = ops_resize_plan(&n->attrs, 1, in->dims[3], &plan[1], err);
    int taps = plan[0].taps;
    byocl_shape shape = {.rank = 1, .dims = {(plan[0].out + plan[1].out) * taps}};
    *offsets = st == BYOCL_OK ? byocl_tensor_new(BYOCL_INT32, &shape, err) : NULL;
    *weights = *offsets ? byocl_tensor_new(BYOCL_FLOAT32, &shape, err) : NULL;
    if (*weights) {
        int32_t *at = byocl_tensor_data(*offsets);
        float *wt = byocl_tensor_data(*weights);
        int64_t e = 0;
        for (int a = 0; a < 2; a++)
            for (int64_t i = 0; i < plan[a].out * taps; i++, e++) {
                bool outside = ops_resize_outside(&plan[a], i / taps);
                at[e] = outside ? -1 : (int32_t)(plan[a].index[i] * (a == 0 ? in->dims[3] : 1));
                wt[e] = (float)plan[a].weight[i];
                *crops |= outside;
            }
    } else if (st == BYOCL_OK) {
        byocl_tensor_unref(*offsets);
        *offsets = NULL;
        st = err->status;
    }
    ops_resize_axis_free(&plan[0]);
    ops_resize_axis_free(&plan[1]);
    return st;
}

/* image.resize2d (kernels_cl/resize.cl): the taps are planned here and passed as two
 * constant tables; EXTRAPOLATION, where a row or column lies outside the input. */
static byocl_status emit_resize(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    const byocl_shape *in = &fn->nodes[n->args[0]].type->shape;
    const byocl_shape *out = &n->type->shape;
    byocl_tensor *offsets, *weights;
    bool crops;
    byocl_status st = resize_tables(n, in, &offsets, &weights, &crops, gen->err);
    if (st != BYOCL_OK)
        return st;
    int64_t taps = byocl_tensor_numel(offsets) / (out->dims[2] + out->dims[3]);
    char label[96], desc[64], what[112];
    clg_group_label(gen, grp, label, sizeof label);
    clg_node_desc(fn, grp->anchor, desc, sizeof desc);
    snprintf(what, sizeof what, "tap offsets of %s", desc);
    int at = clg_gen_const(gen, offsets, what);
    snprintf(what, sizeof what, "tap weights of %s", desc);
    int wt = at >= 0 ? clg_gen_const(gen, weights, what) : -1;
    if (at < 0)
        byocl_tensor_unref(weights);
    int x_root = gen->graph.info[n->args[0]].root;
    int x = wt >= 0 ? clg_gen_root_buf(gen, x_root) : -1;
    int y = x >= 0 ? clg_gen_root_buf(gen, grp->tail) : -1;
    if (y < 0)
        return gen->err->status;
    int64_t nout = byocl_shape_numel(out);
    clg_kernel k;
    clg_kernel_begin(&k, gen, "resize");
    clg_kernel_buffer(&k, "x", x, dtype_of(gen, x_root), false);
    clg_kernel_buffer(&k, "at", at, BYOCL_INT32, false);
    clg_kernel_buffer(&k, "wt", wt, BYOCL_FLOAT32, false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    static const char *const names[] = {"NOUT", "H", "W", "OH", "OW", "TAPS"};
    const int64_t values[] = {nout, in->dims[2], in->dims[3], out->dims[2], out->dims[3], taps};
    define_ints(&k, names, values, sizeof names / sizeof names[0]);
    if (crops) {
        char fill[48];
        clg_float_literal(byocl_attrs_get_float(&n->attrs, "extrapolation_value", 0), fill,
                          sizeof fill);
        clg_kernel_define(&k, "EXTRAPOLATION", "%s", fill);
    }
    st = clg_epilogue_define(&k, grp, gen->err);
    size_t global = (size_t)nout;
    return clg_kernel_finish(&k, st, "resize", label, 1, &global, clg_group_flops(gen, grp));
}

/* nn.conv2d_transpose (kernels_cl/conv2d_transpose.cl): a gather over the taps that
 * reach each output element, the weight read as it is. */
static byocl_status emit_conv_transpose(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    const byocl_shape *in = &fn->nodes[n->args[0]].type->shape;
    const byocl_shape *wshape = &fn->nodes[n->args[1]].type->shape;
    const byocl_shape *out = &n->type->shape;
    nn_slide slide;
    byocl_status st = nn_slide_read(&n->attrs, NULL, 2, in, &slide, gen->err);
    if (st != BYOCL_OK)
        return st;
    int64_t groups = byocl_attrs_get_int(&n->attrs, "groups", 1);
    char label[96];
    clg_group_label(gen, grp, label, sizeof label);
    int x_root, w_root, x, w, y;
    if (!data_weight_result(gen, grp, &x_root, &w_root, &x, &w, &y))
        return gen->err->status;
    int64_t nout = byocl_shape_numel(out);
    clg_kernel k;
    clg_kernel_begin(&k, gen, "conv2d_transpose");
    clg_kernel_buffer(&k, "x", x, dtype_of(gen, x_root), false);
    clg_kernel_buffer(&k, "w", w, dtype_of(gen, w_root), false);
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    const nn_window *win = &slide.win;
    static const char *const names[] = {"NOUT", "C", "H", "W", "OC", "OH", "OW", "KH", "KW",
                                        "SH", "SW", "DH", "DW", "PAD_T", "PAD_L", "CIN_G",
                                        "OC_G"};
    const int64_t values[] = {nout, in->dims[1], in->dims[2], in->dims[3], out->dims[1],
                              out->dims[2], out->dims[3], wshape->dims[2], wshape->dims[3],
                              win->stride[0], win->stride[1], win->dilation[0],
                              win->dilation[1], win->pad[0], win->pad[1], in->dims[1] / groups,
                              wshape->dims[1]};
    define_ints(&k, names, values, sizeof names / sizeof names[0]);
    st = clg_epilogue_define(&k, grp, gen->err);
    size_t global = (size_t)nout;
    return clg_kernel_finish(&k, st, "conv2d_transpose", label, 1, &global,
                             clg_group_flops(gen, grp));
}

/* The widest tile of elemwise.cl's vector form, 16, 8 or 4 elements, that divides the
 * planes of the last two axes (a tensor of one axis: the axis); 0 when none does. */
static int elemwise_tile(const byocl_shape *out, int *tile_axes)
{
    int r = out->rank;
    *tile_axes = r >= 2 ? 2 : 1;
    int64_t plane = r >= 2 ? out->dims[r - 1] * out->dims[r - 2] : r == 1 ? out->dims[0] : 0;
    for (int pt = 16; pt >= 4; pt /= 2)
        if (plane > 0 && plane % pt == 0)
            return pt;
    return 0;
}

/* A chain of elementwise ops no producer absorbed (kernels_cl/elemwise.cl): a tile of
 * elements a work-item where the chain has a vector form, else one element. */
static byocl_status emit_elemwise(clg_gen *gen, const clg_group *grp)
{
    if (grp->prologue_of >= 0) /* its conv applies it */
        return BYOCL_OK;
    char label[96];
    clg_group_label(gen, grp, label, sizeof label);
    int y = clg_gen_root_buf(gen, grp->tail);
    if (y < 0)
        return gen->err->status;
    const byocl_shape *out = &clg_tensor_type(gen->fn, grp->tail)->shape;
    int64_t nout = byocl_shape_numel(out);
    int tile_axes, pt = elemwise_tile(out, &tile_axes);
    /* Planes that 16 does not divide, of 16 to 256 elements: a work-item per plane, in
     * tiles of 16, the last ending at the plane's end (elemwise.cl). densenet121's
     * batch_norm+relu kernels on 7x7 planes took 0.019-0.029 ms in one element a
     * work-item and 0.008-0.015 so (PoCL, Intel Xeon); on 14x14 planes (tiles of 4
     * before) the same. */
    int64_t plane = out->rank >= 2 ? out->dims[out->rank - 1] * out->dims[out->rank - 2] : 0;
    int64_t plane_vectors = (plane + 15) / 16;
    bool whole_planes = plane % 16 != 0 && plane >= 16 && plane_vectors <= 16;
    if (whole_planes)
        pt = 16, tile_axes = 2;
    clg_kernel k;
    clg_kernel_begin(&k, gen, "elemwise");
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    clg_kernel_define(&k, "NOUT", "%lld", (long long)nout);
    byocl_status st = pt ? clg_epilogue_define_tiles(&k, grp, pt, tile_axes, gen->err)
                         : clg_epilogue_define(&k, grp, gen->err);
    size_t global = (size_t)nout;
    if (st == BYOCL_OK && pt && clg_kernel_has_macro(&k, "LD_FIRST_V")) {
        clg_kernel_define(&k, "VEC", "float%d", pt);
        clg_kernel_define(&k, "PT", "%d", pt);
        global /= (size_t)pt;
        if (whole_planes) {
            clg_kernel_define(&k, "PLANE", "%lld", (long long)plane);
            clg_kernel_define(&k, "NV", "%lld", (long long)plane_vectors);
            global = (size_t)(nout / plane);
        }
    }
    return clg_kernel_finish(&k, st, "elemwise", label, 1, &global, clg_group_flops(gen, grp));
}

/* transpose, nn.depth_to_space and nn.space_to_depth: a `move` reading the input's view
 * (ops_permute_plan) at the permuted position of each output element. Where the view's
 * last axes stay last and in order (shufflenet's channel shuffles keep the 28x28 planes),
 * their elements are runs in both tensors; float32 runs of a multiple of 4 move in
 * vectors (MOVE_VEC, the widest of 16, 8 and 4 that divides the run), a work-item each:
 * one element per work-item had made PoCL take 3-4 times the host's time. */
static byocl_status emit_transpose(clg_gen *gen, const clg_group *grp)
{
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    ops_permute p;
    if (ops_permute_plan(n->op->name, &n->attrs, &fn->nodes[n->args[0]].type->shape, &p,
                         gen->err) != BYOCL_OK)
        return gen->err->status;
    int rank = p.view.rank;
    int64_t in_stride[BYOCL_MAX_RANK], s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        in_stride[d] = s;
        s *= p.view.dims[d];
    }
    char label[96];
    int x_root, x, y;
    if (!unary_buffers(gen, grp, label, sizeof label, &x_root, &x, &y))
        return gen->err->status;
    int kept = rank; /* the view's axes kept..rank-1 stay last, in order: a run */
    int64_t run = 1;
    while (kept > 0 && p.perm[kept - 1] == kept - 1)
        run *= p.view.dims[--kept];
    int vec = 1;
    if (dtype_of(gen, x_root) == BYOCL_FLOAT32 && dtype_of(gen, grp->tail) == BYOCL_FLOAT32)
        for (vec = 16; vec >= 4 && run % vec != 0; vec /= 2)
            ;
    if (vec < 4) {
        vec = 1;
        kept = rank;
    }
    byocl_textbuf index = {0};
    base_textbuf_puts(&index, "{ \\\n    int r_ = (i); \\\n    src = 0; \\\n");
    if (vec > 1) /* a run's vector, then the axes before the run */
        base_textbuf_printf(&index, "    src = r_ %% %lld * %d; \\\n    r_ /= %lld; \\\n",
                            (long long)(run / vec), vec, (long long)(run / vec));
    for (int d = kept - 1; d >= 0; d--) {
        int64_t len = p.view.dims[p.perm[d]];
        if (len == 1)
            continue;
        base_textbuf_printf(&index, "    src += r_ %% %lld * %lld; \\\n    r_ /= %lld; \\\n",
                            (long long)len, (long long)in_stride[p.perm[d]], (long long)len);
    }
    base_textbuf_printf(&index, "    dst = (i) * %d; \\\n}", vec);
    const char *dot = strchr(n->op->name, '.'); /* the kernel's name: "depth_to_space" */
    return emit_move(gen, dot ? dot + 1 : n->op->name, label, x, dtype_of(gen, x_root), y,
                     dtype_of(gen, grp->tail), byocl_shape_numel(&p.out) / vec, -1, vec,
                     &index);
}

/* Inputs first .. first + n_fields - 1 of a concatenation whose inputs are contiguous
 * blocks of its output, in one launch (kernels_cl/concatenate.cl); the first block starts
 * at element *offset of the output, which moves past the last. The blocks' lengths and
 * offsets are arguments, so that launches of as many inputs share a kernel whatever their
 * sizes. */
static byocl_status emit_concat_one_launch(clg_gen *gen, const clg_group *grp,
                                           const byocl_type *all_fields, const int *all_roots,
                                           int first, int n_fields, int64_t *offset,
                                           int64_t inner, int axis)
{
    char group[96], label[128];
    clg_group_label(gen, grp, group, sizeof group);
    if (n_fields == all_fields->n_fields)
        snprintf(label, sizeof label, "%s", group);
    else if (n_fields == 1)
        snprintf(label, sizeof label, "%s (input %d)", group, first);
    else
        snprintf(label, sizeof label, "%s (inputs %d-%d)", group, first, first + n_fields - 1);
    const byocl_type *const *fields = all_fields->fields + first;
    const int *roots = all_roots + first;
    int y = clg_gen_root_buf(gen, grp->tail);
    if (y < 0)
        return gen->err->status;
    clg_kernel k;
    clg_kernel_begin(&k, gen, "concatenate");
    for (int f = 0; f < n_fields; f++) {
        int x = clg_gen_root_buf(gen, roots[f]);
        if (x < 0) {
            clg_kernel_abandon(&k);
            return gen->err->status;
        }
        char name[16];
        snprintf(name, sizeof name, "x%d", f);
        clg_kernel_buffer(&k, name, x, dtype_of(gen, roots[f]), false);
    }
    clg_kernel_buffer(&k, "y", y, dtype_of(gen, grp->tail), true);
    /* float32 throughout: CLG_CONCAT_VEC elements a work-item (concatenate.cl) */
    bool vectors = dtype_of(gen, grp->tail) == BYOCL_FLOAT32;
    for (int f = 0; f < n_fields; f++)
        vectors = vectors && dtype_of(gen, roots[f]) == BYOCL_FLOAT32;
    if (vectors) {
        clg_kernel_define(&k, "CONCAT_VEC", "%d", CLG_CONCAT_VEC);
        clg_kernel_define(&k, "VLOAD", "vload%d", CLG_CONCAT_VEC);
    }
    /* switch (f) { case 0: if ((i) < L0) ST_Y(O0 + (i), LD_x0((i))); break; ... }, or
     * with vectors switch (f) { case 0: CONCAT_MOVE(x0, L0, O0, i); break; ... } */
    byocl_textbuf copy = {0};
    base_textbuf_puts(&copy, "switch (f) {");
    int64_t longest = 0;
    for (int f = 0; f < n_fields; f++) {
        int64_t len = fields[f]->shape.dims[axis] * inner;
        char name[16];
        snprintf(name, sizeof name, "L%d", f);
        clg_kernel_int(&k, name, len);
        snprintf(name, sizeof name, "O%d", f);
        clg_kernel_int(&k, name, *offset);
        if (vectors)
            base_textbuf_printf(&copy, " case %d: CONCAT_MOVE(x%d, L%d, O%d, i); break;", f, f, f, f);
        else
            base_textbuf_printf(&copy, " case %d: if ((i) < L%d) ST_Y(O%d + (i), LD_x%d((i))); break;",
                                f, f, f, f);
        *offset += len;
        if (len > longest)
            longest = len;
    }
    base_textbuf_puts(&copy, " }");
    char *body = base_textbuf_take(&copy);
    if (body)
        clg_kernel_define(&k, "CONCAT_COPY(i, f)", "%s", body);
    free(body);
    if (vectors)
        longest = (longest + CLG_CONCAT_VEC - 1) / CLG_CONCAT_VEC;
    size_t global[2] = {(size_t)longest, (size_t)n_fields};
    return clg_kernel_finish(&k,
                             body ? BYOCL_OK
                                  : byocl_error_set(gen->err, BYOCL_ERR_NOMEM,
                                                    "out of memory writing %s", label),
                             "concatenate", label, 2, global, 0);
}

static byocl_status emit_concat(clg_gen *gen, const clg_group *grp)
{
    if (grp->in_place) /* its inputs were written into its slices (cl_concat.c) */
        return BYOCL_OK;
    const byocl_function *fn = gen->fn;
    const byocl_node *n = &fn->nodes[grp->anchor];
    const byocl_type *fields = fn->nodes[n->args[0]].type;
    const byocl_shape *out = &n->type->shape;
    int axis = (int)byocl_attrs_get_int(&n->attrs, "axis", 0);
    if (axis < 0)
        axis += out->rank;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++)
        outer *= out->dims[d];
    for (int d = axis + 1; d < out->rank; d++)
        inner *= out->dims[d];
    int n_fields = fields->kind == BYOCL_TYPE_TUPLE ? fields->n_fields : 1;
    int *roots = malloc((size_t)n_fields * sizeof *roots);
    if (!roots || clg_flatten(&gen->graph, n->args[0], roots, n_fields) != n_fields) {
        free(roots);
        return byocl_error_set(gen->err, roots ? BYOCL_ERR_UNSUPPORTED : BYOCL_ERR_NOMEM,
                               "in @%s: concatenate of nested tuples is not supported",
                               fn->name);
    }
    if (outer == 1 && n_fields >= 2) { /* up to CLG_CONCAT_ONE_LAUNCH_MAX inputs a launch */
        byocl_status st = BYOCL_OK;
        int64_t offset = 0;
        for (int f = 0; st == BYOCL_OK && f < n_fields; f += CLG_CONCAT_ONE_LAUNCH_MAX) {
            int count = n_fields - f < CLG_CONCAT_ONE_LAUNCH_MAX ? n_fields - f
                                                                 : CLG_CONCAT_ONE_LAUNCH_MAX;
            st = emit_concat_one_launch(gen, grp, fields, roots, f, count, &offset, inner, axis);
        }
        free(roots);
        return st;
    }
    char group[96];
    clg_group_label(gen, grp, group, sizeof group);
    int y = clg_gen_root_buf(gen, grp->tail);
    byocl_status st = y >= 0 ? BYOCL_OK : gen->err->status;
    int64_t offset = 0;
    for (int f = 0; st == BYOCL_OK && f < n_fields; f++) {
        const byocl_shape *in = &fields->fields[f]->shape;
        int64_t run = in->dims[axis] * inner;
        int x = clg_gen_root_buf(gen, roots[f]);
        if (x < 0) {
            st = gen->err->status;
            break;
        }
        byocl_textbuf index = {0};
        if (outer == 1)
            base_textbuf_puts(&index, "{ src = (i); dst = OFFSET + (i); }");
        else
            base_textbuf_printf(&index,
                                "{ src = (i); dst = (i) / %lld * %lld + %lld + (i) %% %lld; }",
                                (long long)run, (long long)(out->dims[axis] * inner),
                                (long long)offset, (long long)run);
        char label[128];
        snprintf(label, sizeof label, "%s (input %d)", group, f);
        st = emit_move(gen, "concatenate", label, x, dtype_of(gen, roots[f]), y,
                       dtype_of(gen, grp->tail), byocl_shape_numel(in), outer == 1 ? offset : -1,
                       1, &index);
        offset += run;
    }
    free(roots);
    return st;
}

byocl_status clg_emit_group(clg_gen *gen, const clg_group *grp)
{
    switch (grp->kind) {
    case CLG_ANCHOR_CONV: return emit_conv(gen, grp);
    case CLG_ANCHOR_DENSE: return emit_dense(gen, grp);
    case CLG_ANCHOR_POOL: return emit_pool(gen, grp);
    case CLG_ANCHOR_SOFTMAX: return emit_softmax(gen, grp);
    case CLG_ANCHOR_REDUCE: return emit_reduce(gen, grp);
    case CLG_ANCHOR_RESIZE: return emit_resize(gen, grp);
    case CLG_ANCHOR_CONV_TRANSPOSE: return emit_conv_transpose(gen, grp);
    case CLG_ANCHOR_ELEMWISE: return emit_elemwise(gen, grp);
    case CLG_ANCHOR_GATHER: return emit_gather(gen, grp);
    case CLG_ANCHOR_TRANSPOSE: return emit_transpose(gen, grp);
    case CLG_ANCHOR_CONCAT: return emit_concat(gen, grp);
    case CLG_ANCHOR_TOPK: return emit_topk(gen, grp);
    case CLG_ANCHOR_ONE_HOT: return emit_one_hot(gen, grp);
    case CLG_ANCHOR_CUMSUM: return clg_emit_cumsum(gen, grp);
    case CLG_ANCHOR_SCATTER: return clg_emit_scatter(gen, grp);
    }
    return byocl_error_set(gen->err, BYOCL_ERR_INVALID, "unknown kernel kind");
}

byocl_status clg_emit_output_copy(clg_gen *gen, int k)
{
    int root = gen->graph.outputs[k];
    int src = clg_gen_root_buf(gen, root);
    if (src < 0)
        return gen->err->status;
    char desc[64], label[96];
    clg_node_desc(gen->fn, root, desc, sizeof desc);
    snprintf(label, sizeof label, "output %d: copy of %s", k, desc);
    byocl_textbuf index = {0};
    base_textbuf_puts(&index, "{ src = (i); dst = (i); }");
    byocl_dtype dtype = dtype_of(gen, root);
    return emit_move(gen, "copy", label, src, dtype, gen->output_bufs[k], dtype,
                     byocl_shape_numel(&clg_tensor_type(gen->fn, root)->shape), -1, 1, &index);
}
