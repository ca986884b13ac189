/* Schedules of the two kernels that do the arithmetic of a model: how conv2d and dense
 * (which also runs nn.batch_matmul, tensor_b as its weight) split their work into
 * register tiles, how conv2d's input is laid out so that every tap is a constant offset
 * (kernels_cl/conv2d.cl explains the layout), and how their weights are packed so that
 * each work-item reads them in order. A packing is written once as a
 * mixed-radix decomposition of the packed index: the host packs constant weights with
 * the C version, and a `move` kernel packs weights that arrive as region inputs with the
 * OpenCL C text of the same formula. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_impl.h"
#include "ops/matmul.h"
#include "ops/nn_util.h"

#define CLG_MAX_INDEX ((int64_t)1 << 31)
/* Positions per row tile and per elementwise vector: one vector of the device's width. */
int clg_tile_width(int vector_width)
{
    return vector_width == 4 || vector_width == 8 || vector_width == 16 ? vector_width : 16;
}
/* A conv2d work-item's tile: pt grid positions x oct output channels (fewer when a group
 * has fewer). With AVX2, 16 positions (each position vector two registers) x 4 or 5
 * channels: per tap two vector loads and 4 or 5 broadcasts feed 8 or 10 FMAs. 8 x 8 (one
 * vector, 8 broadcasts) took 9 loads for 8 FMAs, 16 x 8 spilled (18% slower than 8 x 8),
 * and 16 x 6 spilled one accumulator where the kernel has an epilogue (resnet18's 7x7
 * convs 1.6x slower). 16 x 5 keeps ten FMA chains in flight, which a core with two FMA
 * units of 5 cycles' latency (Zen 2) needs: on one, every conv of resnet18 offloaded took
 * 15-25% less time than with 16 x 4 (1.9-2.0 ms against 2.0-2.5), squeezenet1_1's too.
 * Where 5 would pad the channels more than its extra chains gain (16 channels: 20
 * computed), 4 stays. Vectors of 4 floats: 4 x 8; other widths (a GPU's 1) 16 x 8.
 * With AVX-512 (16 floats, 32 registers) 16 x 16 where its channels fill the blocks:
 * 16 FMA chains and a load of x per 16 FMAs (Intel Xeon, two threads: resnet18's 3x3
 * convs 6-15% faster than with 16 x 8, squeezenet1_1's expand convs 5-28%), 16 x 12
 * where 16 would pad more (36 channels), and 16 x 8 for convs of at most 32 output
 * channels, which 16 x 16 made slower (mobilenet_v2's 144 -> 32 and 32 -> 16 1x1 convs
 * 45-60%; 12 and 16 tied on 64). The percentages below are the time per computed
 * channel, from those runs. */
static void conv_tile(int vector_width, int64_t oc_g, int *pt, int *oct)
{
    int width = clg_tile_width(vector_width);
    *pt = width == 8 ? 16 : width;
    *oct = width == 8 ? 5 : 8;
    /* channels computed with 4 against 5, an FMA with 4 taking 5/4 of the time */
    if (width == 8 && (oc_g + 3) / 4 * 4 * 5 <= (oc_g + 4) / 5 * 5 * 4)
        *oct = 4;
    if (vector_width == 16 && oc_g > 32) {
        static const struct { int channels, cost_percent; } tiles[] = {
            {16, 100}, {12, 105}, {8, 112}};
        int64_t best = -1;
        for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
            int64_t c = tiles[i].channels;
            int64_t cost = (oc_g + c - 1) / c * c * tiles[i].cost_percent;
            if (best < 0 || cost < best)
                best = cost, *oct = tiles[i].channels;
        }
    }
}
#define DENSE_UT 16
#define DENSE_RT 4

static int pow2_at_least(int64_t v, int cap)
{
    int p = 1;
    while (p < v && p < cap)
        p *= 2;
    return p;
}

static int64_t div_up(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static byocl_status too_large(const byocl_function *fn, int node, const char *what,
                              byocl_error *err)
{
    char label[64];
    byocl_node_label(fn, node, label, sizeof label);
    return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                           "in @%s, %s: the %s would have 2^31 elements or more", fn->name,
                           label, what);
}

/* The distinct values of (k * dilation) % stride for k in [0, taps), ascending; their
 * count. */
static int phases_of(int64_t taps, int64_t dilation, int64_t stride, int64_t *out)
{
    bool used[CLG_MAX_CONV_STRIDE] = {false};
    for (int64_t k = 0; k < taps; k++)
        used[(k * dilation) % stride] = true;
    int n = 0;
    for (int64_t p = 0; p < stride; p++)
        if (used[p])
            out[n++] = p;
    return n;
}

static int slot_of(const int64_t *phases, int n, int64_t phase)
{
    for (int i = 0; i < n; i++)
        if (phases[i] == phase)
            return i;
    return 0;
}

/* Grid positions the tiles compute from a plane's first, on a grid `width` wide: whole
 * tiles of pt positions, or rows of whole tiles rt x ct (to the last row tile's last
 * column tile). */
static int64_t grid_extent(const clg_conv_sched *s, int64_t width)
{
    if (s->channels)
        return (div_up(s->oh, s->rt) * s->rt - 1) * width + s->nct * s->ct;
    return div_up(s->oh * width, s->pt) * s->pt;
}

/* Whether the conv takes conv2d_channels.cl's tiles (with AVX-512's 16 floats), and
 * which: conv2d.cl's tiles compute the grid's halo columns, and with rows of 7 or 14
 * outputs that is 15-31% more positions than outputs (7x7 outputs of a padded 3x3 conv:
 * 64 for 49), where the channel tiles compute whole rows of outputs only. Each kind
 * costs its computed positions times its computed channels; the channel tiles are taken
 * where that is under 0.93 of the position tiles' (a rows x columns tile of 2 x 7, 1 x
 * 14 or 2 x 8 positions, the first cheapest). Measured with PoCL on an Intel Xeon, two
 * threads, resnet18's 3x3 convs in the model: 7x7 outputs 1.18-1.25 -> 0.97-1.05 ms,
 * 14x14 0.89-0.91 -> 0.64-0.72, 28x28 0.84-0.89 -> 0.64-0.76 (cost ratio 0.925); 56x56,
 * 0.966, would be 8% slower. Tiles of 14 accumulators: with 21 or 28 (2 x 7 x 2, 3 x 7,
 * 2 x 14) PoCL's code ran 1.3-2x slower; 1 x 7 x 2 (two vectors of channels) was faster
 * on 7x7 maps by up to 10% and a third slower on 14x14, so one vector it is. `force`
 * takes the cheapest channel tile whatever the position tiles cost. */
static void channel_tile(clg_conv_sched *s, bool unpadded, bool force)
{
    static const int tiles[][2] = {{2, 7}, {1, 14}, {2, 8}};
    bool direct_grid = unpadded && s->ntaps == 1 && s->stride[0] == 1 && s->stride[1] == 1;
    int64_t grid_width = direct_grid ? s->ow
                                     : s->ow + (s->kw - 1) * s->dilation[1] / s->stride[1];
    int64_t positions = div_up(s->oh * grid_width, s->pt) * s->pt;
    int64_t best = force ? INT64_MAX : positions * (s->ob * s->oct) * 93 / 100;
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
        int64_t cost = div_up(s->oh, tiles[i][0]) * tiles[i][0] *
                       div_up(s->ow, tiles[i][1]) * tiles[i][1] * div_up(s->oc_g, 16) * 16;
        /* of two tiles of one cost, the one that spans the output's rows (no layout) */
        bool spans = tiles[i][1] >= s->ow;
        if (cost < best || (cost == best && s->channels && spans && s->ct < s->ow)) {
            best = cost;
            s->channels = true, s->rt = tiles[i][0], s->ct = tiles[i][1];
        }
    }
    if (s->channels) {
        s->oct = 16;
        s->ob = div_up(s->oc_g, s->oct);
        s->nct = div_up(s->ow, s->ct);
    }
}

/* Taps a depthwise tile unrolls (7 x 7, the largest depthwise kernels in torchvision). */
#define CLG_MAX_DEPTHWISE_TAPS 49
/* Vectors times taps a depthwise conv's plane work-item unrolls (14x14 3x3: 13 x 9);
 * larger planes loop over their vectors. */
#define CLG_MAX_PLANE_TAPS 128

/* One input and one output channel per group: a depthwise conv. */
static bool one_channel_groups(const clg_conv_sched *s)
{
    return s->groups == s->c && s->cin_g == 1 && s->oc_g == 1;
}

int64_t clg_plane_offset(const clg_plane *g, int64_t kh, int64_t kw)
{
    return (kh * g->dh - g->pad_t) * g->w + kw * g->dw - g->pad_l;
}

int64_t clg_plane_vectors(const clg_plane *g, int vector_width)
{
    int64_t vf = clg_tile_width(vector_width);
    int64_t plane = g->h * g->w, out = g->oh * g->ow;
    if (vf < 8 || g->kh * g->kw > CLG_MAX_DEPTHWISE_TAPS || g->ow != g->w || plane < vf ||
        out < vf)
        return 0;
    int64_t before = -clg_plane_offset(g, 0, 0);
    int64_t after = out + clg_plane_offset(g, g->kh - 1, g->kw - 1) - plane;
    if (before > plane || after > plane)
        return 0;
    return div_up(out, vf);
}

clg_plane clg_conv_plane(const clg_conv_sched *s)
{
    return (clg_plane){.h = s->h, .w = s->w, .oh = s->oh, .ow = s->ow, .kh = s->kh,
                       .kw = s->kw, .dh = s->dilation[0], .dw = s->dilation[1],
                       .pad_t = s->pad[0], .pad_l = s->pad[1]};
}

/* The vectors of a depthwise conv's plane (conv2d_depthwise_plane.cl) where it takes
 * planes (clg_plane_vectors; stride 1), else 0; *unrolled where few enough vectors times
 * taps to list them all, else a loop (docs/opencl-codegen.md has the figures). */
static int64_t plane_vectors(const clg_conv_sched *s, int vector_width, int choice,
                             bool *unrolled)
{
    if (choice == BYOCL_CL_DEPTHWISE_ROWS || !one_channel_groups(s) || s->stride[0] != 1 ||
        s->stride[1] != 1)
        return 0;
    clg_plane g = clg_conv_plane(s);
    int64_t vectors = clg_plane_vectors(&g, vector_width);
    *unrolled = vectors * s->ntaps <= CLG_MAX_PLANE_TAPS;
    return vectors;
}

typedef struct {
    int64_t first, last;
} input_span;

static int input_span_cmp(const void *a, const void *b)
{
    int64_t x = ((const input_span *)a)->first, y = ((const input_span *)b)->first;
    return (x > y) - (x < y);
}

/* The input elements a conv2d work-item reads per input channel, as spans of offsets
 * from its pointer into the channel (unsorted; at most `max`): its taps' vectors
 * (position tiles), its positions' elements per tap (channel tiles), whole input rows
 * (channel tiles in place). Returns the count, or -1 when there are more. */
static int channel_spans(const clg_conv_sched *s, input_span *out, int max)
{
    int n = 0;
    if (s->in_place) {
        for (int r = 0; r < s->rt; r++)
            for (int64_t kh = 0; kh < s->kh; kh++) {
                if (n == max)
                    return -1;
                int64_t row = (r * s->stride[0] + kh * s->dilation[0] - s->pad[0]) * s->w;
                out[n++] = (input_span){row, row + s->w - 1};
            }
        return n;
    }
    for (int t = 0; t < s->ntaps; t++) {
        int rows = s->channels ? s->rt : 1;
        for (int r = 0; r < rows; r++) {
            if (n == max)
                return -1;
            int64_t first = s->tap_offset[t] + r * s->wph;
            out[n++] = (input_span){first, first + (s->channels ? s->ct : s->pt) - 1};
        }
    }
    return n;
}

/* Fills s->prefetch_offset (where the device is a CPU): one element of every cache line
 * (16 floats; a float16 input prefetches some lines twice) that a work-item will read at
 * the input channel `channels` ahead, about PREFETCH_FMAS vector multiply-adds of its work
 * ahead and at most PREFETCH_MAX_CHANNELS; none where the lines are more than
 * CLG_MAX_CONV_PREFETCH (a 7x7 stem's taps over four stride phases). A work-item reads one
 * or a few lines per input channel, a plane apart, which the cores' prefetchers do not
 * foresee: without it, PoCL's code for a 384 -> 64 1x1 conv on 14x14 spent most of its
 * time waiting on each channel's first load (perf annotate), 0.083 ms against 0.069 with
 * it (the host: 0.051). Distances of 4 to 32 channels on 1x1 convs: 8 to 12 best; 1 or 2
 * on 3x3 convs alike (Intel Xeon, two threads, docs/opencl-codegen.md has the models). */
enum { PREFETCH_FMAS = 128, PREFETCH_MAX_CHANNELS = 8 };

static void conv_prefetch(clg_conv_sched *s)
{
    enum { MAX_SPANS = 64, LINE = 16 };
    input_span spans[MAX_SPANS];
    int n = channel_spans(s, spans, MAX_SPANS);
    s->n_prefetch = 0;
    if (n <= 0)
        return;
    qsort(spans, (size_t)n, sizeof *spans, input_span_cmp);
    int64_t fmas = (int64_t)s->ntaps * (s->channels ? s->rt * s->ct : s->oct);
    int64_t channels = div_up(PREFETCH_FMAS, fmas);
    if (channels > PREFETCH_MAX_CHANNELS)
        channels = PREFETCH_MAX_CHANNELS;
    int64_t ahead = channels * s->xc_stride;
    int64_t offsets[CLG_MAX_CONV_PREFETCH];
    int count = 0;
    for (int i = 0; i < n;) {
        int64_t first = spans[i].first, last = spans[i].last;
        for (i++; i < n && spans[i].first <= last + 1; i++)
            if (spans[i].last > last)
                last = spans[i].last;
        for (int64_t at = first;; at += LINE) {
            if (count == CLG_MAX_CONV_PREFETCH)
                return;
            offsets[count++] = (at < last ? at : last) + ahead;
            if (at >= last)
                break;
        }
    }
    memcpy(s->prefetch_offset, offsets, (size_t)count * sizeof *offsets);
    s->n_prefetch = count;
}

byocl_status clg_conv_schedule(const byocl_function *fn, int node,
                              const byocl_cl_codegen_options *opt, int64_t x_slack,
                              clg_conv_sched *s, byocl_error *err)
{
    int vector_width = opt->vector_width;
    const byocl_node *n = &fn->nodes[node];
    const byocl_shape *x = &fn->nodes[n->args[0]].type->shape;
    const byocl_shape *w = &fn->nodes[n->args[1]].type->shape;
    const byocl_shape *y = &n->type->shape;
    memset(s, 0, sizeof *s);
    nn_window win;
    byocl_status st = nn_window_read(&n->attrs, NULL, 2, &win, err);
    if (st != BYOCL_OK)
        return st;
    s->n = x->dims[0], s->c = x->dims[1], s->h = x->dims[2], s->w = x->dims[3];
    s->oc = y->dims[1], s->oh = y->dims[2], s->ow = y->dims[3];
    s->kh = w->dims[2], s->kw = w->dims[3];
    s->groups = byocl_attrs_get_int(&n->attrs, "groups", 1);
    s->cin_g = w->dims[1];
    s->oc_g = s->oc / s->groups;
    memcpy(s->stride, win.stride, sizeof s->stride);
    memcpy(s->dilation, win.dilation, sizeof s->dilation);
    memcpy(s->pad, win.pad, sizeof s->pad);

    int oct;
    conv_tile(vector_width, s->oc_g, &s->pt, &oct);
    s->row_pt = clg_row_tile_width(vector_width, s->stride[1], s->kw, s->dilation[1], s->pad[1],
                                   s->w, s->ow);
    int64_t taps[2] = {s->kh, s->kw};
    s->row_ry = clg_window_rows(s->row_pt, s->stride, taps, s->dilation, s->pad[1], s->w,
                                s->oh, s->ow);
    s->oct = s->oc_g >= oct ? oct : pow2_at_least(s->oc_g, oct);
    s->ob = div_up(s->oc_g, s->oct);
    s->ntaps = (int)(s->kh * s->kw);
    s->plane_vectors = plane_vectors(s, vector_width, opt->depthwise_tiles, &s->plane_unrolled);
    s->tap_offset = malloc((size_t)s->ntaps * sizeof *s->tap_offset);
    if (!s->tap_offset)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory scheduling a conv2d");

    bool unpadded = s->pad[0] == 0 && s->pad[1] == 0 && s->pad[2] == 0 && s->pad[3] == 0;
    if (opt->conv_tiles != BYOCL_CL_CONV_TILES_POSITIONS && vector_width == 16 &&
        !clg_conv_is_depthwise(s))
        channel_tile(s, unpadded, opt->conv_tiles == BYOCL_CL_CONV_TILES_CHANNELS);
    /* Read the input as it is when no tap moves and the last tile stays inside it, or
     * inside the slack after it (a tile past a plane's end reads the next plane, whose
     * results are dropped); the grid of such a conv is its input. Channel tiles as wide
     * as the output read it as it is whatever the taps (conv2d_channels.cl's IN_PLACE). */
    s->in_place = s->channels && s->nct == 1;
    int64_t extent = grid_extent(s, s->w);
    int64_t overrun = extent - s->h * s->w;
    s->direct = s->in_place ||
                (s->ntaps == 1 && s->stride[0] == 1 && s->stride[1] == 1 && unpadded &&
                 (overrun == 0 || overrun <= x_slack));
    int64_t max_offset = 0;
    if (s->direct) {
        s->n_phase_y = s->n_phase_x = 1;
        s->hph = s->h, s->wph = s->w;
        s->xc_stride = s->h * s->w;
        s->tap_offset[0] = 0; /* one tap (in place, the kernel places its taps) */
    } else {
        s->n_phase_y = phases_of(s->kh, s->dilation[0], s->stride[0], s->phase_y);
        s->n_phase_x = phases_of(s->kw, s->dilation[1], s->stride[1], s->phase_x);
        int64_t max_dy = (s->kh - 1) * s->dilation[0] / s->stride[0];
        int64_t max_dx = (s->kw - 1) * s->dilation[1] / s->stride[1];
        s->hph = s->oh + max_dy;
        s->wph = s->ow + max_dx;
        int64_t plane = s->hph * s->wph;
        s->xc_stride = (int64_t)s->n_phase_y * s->n_phase_x * plane;
        for (int64_t kh = 0; kh < s->kh; kh++) {
            for (int64_t kw = 0; kw < s->kw; kw++) {
                int64_t ry = kh * s->dilation[0], rx = kw * s->dilation[1];
                int slot = slot_of(s->phase_y, s->n_phase_y, ry % s->stride[0]) * s->n_phase_x +
                           slot_of(s->phase_x, s->n_phase_x, rx % s->stride[1]);
                int64_t off = slot * plane + (ry / s->stride[0]) * s->wph + rx / s->stride[1];
                s->tap_offset[kh * s->kw + kw] = off;
                if (off > max_offset)
                    max_offset = off;
            }
        }
    }
    s->npt = s->channels ? div_up(s->oh, s->rt) * s->nct : div_up(s->oh * s->wph, s->pt);
    if (opt->cpu)
        conv_prefetch(s);
    extent = grid_extent(s, s->wph);
    int64_t body = s->n * s->c * s->xc_stride;
    int64_t reach = (s->n * s->c - 1) * s->xc_stride + max_offset + extent;
    if (reach < body)
        reach = body;
    /* The laid-out input ends with whole planes of zeros that cover the reach, and then a
     * few more to a multiple of 4 planes: its launch's planes (dimension 2) then have
     * divisors to make work-groups of. At 257 planes (256 channels and one of zeros) the
     * work-groups had been 16 x 1 x 1 work-items, 514 of them, whose dispatch cost more
     * than their copies. */
    s->x_planes = div_up(div_up(reach, s->hph * s->wph), 4) * 4;
    s->x_elems = s->direct ? body : s->x_planes * s->hph * s->wph;
    s->packed_elems = s->groups * s->ob * s->cin_g * s->ntaps * s->oct;
    if (s->x_elems >= CLG_MAX_INDEX)
        return too_large(fn, node, "padded input", err);
    if (s->packed_elems >= CLG_MAX_INDEX)
        return too_large(fn, node, "packed weight", err);
    return BYOCL_OK;
}

bool clg_conv_is_depthwise(const clg_conv_sched *s)
{
    return one_channel_groups(s) && s->ntaps <= CLG_MAX_DEPTHWISE_TAPS &&
           (s->plane_vectors > 0 ||
            clg_row_tiles_pay(s->row_pt, s->stride[1], s->kw, s->dilation[1], s->pad[1], s->w,
                              s->ow));
}

int clg_window_rows(int pt, const int64_t stride[2], const int64_t taps[2],
                    const int64_t dilation[2], int64_t pad_left, int64_t width,
                    int64_t out_height, int64_t out_width)
{
    bool inside = clg_row_tiles_inside(pt, stride[1], taps[1], dilation[1], pad_left, width,
                                       out_width) > 0;
    int rows = stride[0] == 1 && taps[0] <= 3 && inside ? 4 : 2;
    return out_height < rows ? (out_height < 1 ? 1 : (int)out_height) : rows;
}

bool clg_row_vector_load(int pt, int64_t stride)
{
    return stride == 1 || (stride == 2 && pt <= 16);
}

int64_t clg_row_load_width(int pt, int64_t stride)
{
    return clg_row_vector_load(pt, stride) ? pt * stride : (pt - 1) * stride + 1;
}

bool clg_row_edge_shuffles(int pt, int64_t stride, int64_t width)
{
    return clg_row_vector_load(pt, stride) && width >= clg_row_load_width(pt, stride);
}

int clg_row_tile_width(int vector_width, int64_t stride, int64_t taps, int64_t dilation,
                       int64_t pad, int64_t width, int64_t out_width)
{
    int widest = clg_tile_width(vector_width), first_shuffling = 0;
    for (int pt = widest; pt >= 4; pt /= 2) {
        if (!clg_row_edge_shuffles(pt, stride, width))
            continue;
        if (!first_shuffling)
            first_shuffling = pt;
        int64_t tiles = (out_width + pt - 1) / pt;
        if (pt >= 8 &&
            (2 * clg_row_tiles_inside(pt, stride, taps, dilation, pad, width, out_width) >=
                 tiles ||
             clg_row_load_width(pt, stride) > CLG_ROW_VECTOR_MAX))
            return pt;
    }
    return first_shuffling ? first_shuffling : widest;
}

int64_t clg_row_tile_first(int pt, int64_t out_width, int64_t t)
{
    int64_t first = t * pt;
    return out_width >= pt && first + pt > out_width ? out_width - pt : first;
}

bool clg_row_tile_inside(int pt, int64_t stride, int64_t taps, int64_t dilation, int64_t pad,
                         int64_t width, int64_t out_width, int64_t t)
{
    int64_t span = clg_row_load_width(pt, stride) + (taps - 1) * dilation;
    int64_t first = clg_row_tile_first(pt, out_width, t) * stride - pad;
    return first >= 0 && first + span <= width;
}

int64_t clg_row_tiles_inside(int pt, int64_t stride, int64_t taps, int64_t dilation,
                             int64_t pad, int64_t width, int64_t out_width)
{
    int64_t tiles = (out_width + pt - 1) / pt, inside = 0;
    for (int64_t t = 0; t < tiles; t++)
        inside += clg_row_tile_inside(pt, stride, taps, dilation, pad, width, out_width, t);
    return inside;
}

bool clg_row_tiles_pay(int pt, int64_t stride, int64_t taps, int64_t dilation, int64_t pad,
                       int64_t width, int64_t out_width)
{
    if (clg_row_edge_shuffles(pt, stride, width))
        return true;
    int64_t tiles = (out_width + pt - 1) / pt;
    return 3 * clg_row_tiles_inside(pt, stride, taps, dilation, pad, width, out_width) >=
           2 * tiles;
}

void clg_conv_sched_free(clg_conv_sched *s)
{
    free(s->tap_offset);
    s->tap_offset = NULL;
}

/* Packed conv2d weight: [groups][ob][cin_g][ntaps][oct]. */
int64_t clg_conv_pack_source(const clg_conv_sched *s, int64_t i)
{
    int64_t o = i % s->oct, r = i / s->oct;
    int64_t t = r % s->ntaps;
    r /= s->ntaps;
    int64_t c = r % s->cin_g;
    r /= s->cin_g;
    int64_t ob = r % s->ob, g = r / s->ob;
    int64_t ocg = ob * s->oct + o;
    if (ocg >= s->oc_g)
        return -1;
    return ((g * s->oc_g + ocg) * s->cin_g + c) * s->ntaps + t;
}

void clg_conv_pack_f32(const clg_conv_sched *s, const float *w, float *out)
{
    int64_t i = 0;
    for (int64_t g = 0; g < s->groups; g++)
        for (int64_t ob = 0; ob < s->ob; ob++)
            for (int64_t c = 0; c < s->cin_g; c++)
                for (int64_t t = 0; t < s->ntaps; t++)
                    for (int64_t o = 0; o < s->oct; o++, i++) {
                        int64_t ocg = ob * s->oct + o;
                        out[i] = ocg < s->oc_g
                                     ? w[((g * s->oc_g + ocg) * s->cin_g + c) * s->ntaps + t]
                                     : 0.0f;
                    }
}

void clg_conv_pack_index_text(const clg_conv_sched *s, byocl_textbuf *t)
{
    base_textbuf_printf(t,
                        "{ \\\n"
                        "    const int o_ = (i) %% %d, t_ = (i) / %d %% %d, "
                        "c_ = (i) / %lld %% %lld; \\\n"
                        "    const int ob_ = (i) / %lld %% %lld, g_ = (i) / %lld; \\\n"
                        "    const int ocg_ = ob_ * %d + o_; \\\n"
                        "    ok = ocg_ < %lld; \\\n"
                        "    src = ((g_ * %lld + ocg_) * %lld + c_) * %d + t_; \\\n"
                        "    dst = (i); \\\n"
                        "}",
                        s->oct, s->oct, s->ntaps, (long long)s->oct * s->ntaps,
                        (long long)s->cin_g, (long long)s->oct * s->ntaps * s->cin_g,
                        (long long)s->ob, (long long)s->oct * s->ntaps * s->cin_g * s->ob, s->oct,
                        (long long)s->oc_g, (long long)s->oc_g, (long long)s->cin_g, s->ntaps);
}

/* The phase of slot `slot_expr` among `phases` as an expression. */
static void phase_expr(const int64_t *phases, int n, int64_t stride, const char *slot_expr,
                       char *buf, size_t len)
{
    if (n == 1) {
        snprintf(buf, len, "%lld", (long long)phases[0]);
        return;
    }
    if (n == stride) { /* every phase: the slot is the phase */
        snprintf(buf, len, "(%s)", slot_expr);
        return;
    }
    size_t at = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i + 1 < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s == %d ? %lld : ", slot_expr, i,
                               (long long)phases[i]);
    if (at < len)
        snprintf(buf + at, len - at, "%lld)", (long long)phases[n - 1]);
}

void clg_conv_phase_exprs(const clg_conv_sched *s, char *py, char *px, size_t len)
{
    /* A slot s is slot_y * n_phase_x + slot_x. */
    char sy[32], sx[32];
    snprintf(sy, sizeof sy, "(s) / %d", s->n_phase_x);
    snprintf(sx, sizeof sx, "(s) %% %d", s->n_phase_x);
    phase_expr(s->phase_y, s->n_phase_y, s->stride[0], sy, py, len);
    phase_expr(s->phase_x, s->n_phase_x, s->stride[1], sx, px, len);
}

byocl_status clg_dense_schedule(const byocl_function *fn, int node, clg_dense_sched *s,
                               byocl_error *err)
{
    const byocl_node *n = &fn->nodes[node];
    const byocl_shape *x = &fn->nodes[n->args[0]].type->shape;
    const byocl_shape *w = &fn->nodes[n->args[1]].type->shape;
    memset(s, 0, sizeof *s);
    if (strcmp(n->op->name, "nn.batch_matmul") == 0) {
        ops_bmm_geom g;
        byocl_status st = ops_batch_matmul_geometry(&n->attrs, x, w, &g, err);
        if (st != BYOCL_OK)
            return st;
        s->batch = g.batch, s->r = g.m, s->k = g.k, s->u = g.n;
        s->x_matrices = g.batch_a, s->w_matrices = g.batch_b;
        s->x_kr = g.transpose_a;
        s->w_ku = !g.transpose_b;
    } else {
        s->batch = s->x_matrices = s->w_matrices = 1;
        s->u = w->dims[0];
        s->k = w->dims[1];
        s->r = byocl_shape_numel(&n->type->shape) / s->u;
    }
    s->ut = pow2_at_least(s->u, DENSE_UT);
    s->rt = s->r < DENSE_RT ? (int)s->r : DENSE_RT;
    s->ub = div_up(s->u, s->ut);
    s->rb = div_up(s->r, s->rt);
    s->packed_elems = s->w_matrices * s->ub * s->k * s->ut;
    if (s->packed_elems >= CLG_MAX_INDEX)
        return too_large(fn, node, "packed weight", err);
    return BYOCL_OK;
}

/* Packed dense weight (batch_matmul's tensor_b): [w_matrices][ub][k][ut]. */
int64_t clg_dense_pack_source(const clg_dense_sched *s, int64_t i)
{
    int64_t t = i % s->ut, r = i / s->ut;
    int64_t k = r % s->k;
    r /= s->k;
    int64_t ub = r % s->ub, m = r / s->ub;
    int64_t u = ub * s->ut + t;
    if (u >= s->u)
        return -1;
    return m * s->u * s->k + (s->w_ku ? k * s->u + u : u * s->k + k);
}

void clg_dense_pack_f32(const clg_dense_sched *s, const float *w, float *out)
{
    int64_t i = 0;
    for (int64_t m = 0; m < s->w_matrices; m++)
        for (int64_t ub = 0; ub < s->ub; ub++)
            for (int64_t k = 0; k < s->k; k++)
                for (int64_t t = 0; t < s->ut; t++, i++) {
                    int64_t u = ub * s->ut + t;
                    out[i] = u < s->u ? w[m * s->u * s->k + (s->w_ku ? k * s->u + u
                                                                      : u * s->k + k)]
                                      : 0.0f;
                }
}

void clg_dense_pack_index_text(const clg_dense_sched *s, byocl_textbuf *t)
{
    long long per_matrix = (long long)s->ub * s->k * s->ut;
    base_textbuf_printf(t,
                        "{ \\\n"
                        "    const int t_ = (i) %% %d, k_ = (i) / %d %% %lld, "
                        "ub_ = (i) / %lld",
                        s->ut, s->ut, (long long)s->k, (long long)s->k * s->ut);
    if (s->w_matrices > 1)
        base_textbuf_printf(t, " %% %lld, m_ = (i) / %lld", (long long)s->ub, per_matrix);
    base_textbuf_printf(t,
                        "; \\\n"
                        "    const int u_ = ub_ * %d + t_; \\\n"
                        "    ok = u_ < %lld; \\\n"
                        "    src = ",
                        s->ut, (long long)s->u);
    if (s->w_matrices > 1)
        base_textbuf_printf(t, "m_ * %lld + ", (long long)s->u * s->k);
    if (s->w_ku)
        base_textbuf_printf(t, "k_ * %lld + u_", (long long)s->u);
    else
        base_textbuf_printf(t, "u_ * %lld + k_", (long long)s->k);
    base_textbuf_puts(t, "; \\\n"
                         "    dst = (i); \\\n"
                         "}");
}

byocl_tensor *clg_pack_host(const byocl_tensor *src, int64_t n, const clg_packing *packing,
                           const void *sched, byocl_error *err)
{
    byocl_shape shape = byocl_shape_make(1, &n);
    byocl_tensor *t = byocl_tensor_new(BYOCL_FLOAT32, &shape, err);
    if (!t)
        return NULL;
    float *out = byocl_tensor_data(t);
    /* float32 weights (the common case) are packed in one pass, others element by
     * element through the conversion that handles every dtype. */
    if (byocl_tensor_dtype(src) == BYOCL_FLOAT32) {
        packing->pack_f32(sched, byocl_tensor_cdata(src), out);
        return t;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t from = packing->source(sched, i);
        out[i] = from < 0 ? 0.0f : (float)byocl_tensor_get(src, from);
    }
    return t;
}
