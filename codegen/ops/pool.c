/* Op group "pool": nn.max_pool2d, nn.avg_pool2d and nn.global_avg_pool2d over NCHW data,
 * nn.max_pool3d and nn.avg_pool3d over NCDHW data. */
#include <math.h>
#include <stdlib.h>

#include "nn_util.h"

typedef enum pool_kind { POOL_MAX, POOL_AVG } pool_kind;

/* How a pool places its windows over data of `spatial` dimensions: the window pools read
 * the window attributes; the global pool (2-D only) has one window covering the whole
 * image. */
typedef byocl_status (*pool_geometry_fn)(const byocl_attrs *attrs, int spatial,
                                         const byocl_shape *data, nn_slide *g, byocl_error *err);

static byocl_status window_geometry(const byocl_attrs *attrs, int spatial,
                                    const byocl_shape *data, nn_slide *g, byocl_error *err)
{
    byocl_status st = nn_slide_read(attrs, "pool_size", spatial, data, g, err);
    if (st == BYOCL_OK)
        st = nn_window_out_size(&g->win, g->in_hw, "pool window", g->out_hw, err);
    return st;
}

static byocl_status global_geometry(const byocl_attrs *attrs, int spatial,
                                    const byocl_shape *data, nn_slide *g, byocl_error *err)
{
    (void)attrs;
    byocl_status st = nn_shape_rank(data, spatial + 2, "data", nn_data_layout(spatial), err);
    if (st != BYOCL_OK)
        return st;
    *g = (nn_slide){
        .win = {.spatial = 2, .kernel = {data->dims[2], data->dims[3]}, .stride = {1, 1},
                .dilation = {1, 1}},
        .batch = data->dims[0],
        .channels = data->dims[1],
        .in_hw = {data->dims[2], data->dims[3]},
        .out_hw = {1, 1},
    };
    return BYOCL_OK;
}

static byocl_status pool2d_check(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    return nn_window_check(m, attrs, "pool_size", "layout", 2, err);
}

static byocl_status pool3d_check(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    return nn_window_check(m, attrs, "pool_size", "layout", 3, err);
}

static byocl_status global_pool_check(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    return nn_attr_data_layouts(attrs, "layout", 2, err);
}

static byocl_status pool_infer(const byocl_infer_ctx *ctx, int spatial, pool_geometry_fn geometry,
                               byocl_type *out, byocl_error *err)
{
    const byocl_type *data = NULL;
    nn_slide g;
    byocl_status st =
        nn_tensor_arg(ctx, 0, "data", spatial + 2, nn_data_layout(spatial), &data, err);
    if (st == BYOCL_OK)
        st = geometry(ctx->attrs, spatial, &data->shape, &g, err);
    if (st != BYOCL_OK)
        return st;
    byocl_shape shape = nn_slide_out_shape(&g, g.channels);
    *out = byocl_type_tensor(data->dtype, shape.rank, shape.dims);
    return BYOCL_OK;
}

static byocl_status pool2d_infer(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    return pool_infer(ctx, 2, window_geometry, out, err);
}

static byocl_status pool3d_infer(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    return pool_infer(ctx, 3, window_geometry, out, err);
}

static byocl_status global_pool_infer(const byocl_infer_ctx *ctx, byocl_type *out,
                                      byocl_error *err)
{
    return pool_infer(ctx, 2, global_geometry, out, err);
}

/* One output cell of a 3-D view (nn_slide_3d) at (oz, oy, ox). Padding cells never enter
 * a max; an average divides by the input cells it covered, or with `include_pad` by every
 * cell inside the padded input (not the extra cells ceil_mode hangs past it). A window
 * with no cell to use gives the dtype's lowest value (max) or 0 (average). */
static double pool_cell(pool_kind kind, bool include_pad, const nn_slide *g,
                        const double *volume, const int64_t o[3], double lowest)
{
    const nn_window *w = &g->win;
    int64_t start[3], padded[3];
    for (int d = 0; d < 3; d++) {
        start[d] = o[d] * w->stride[d] - w->pad[d];
        padded[d] = g->in_hw[d] + w->pad[d + 3];
    }
    double best = lowest, sum = 0.0;
    int64_t n_input = 0, n_padded = 0;
    for (int64_t kd = 0; kd < w->kernel[0]; kd++) {
        int64_t iz = start[0] + kd * w->dilation[0];
        for (int64_t kh = 0; kh < w->kernel[1]; kh++) {
            int64_t iy = start[1] + kh * w->dilation[1];
            for (int64_t kw = 0; kw < w->kernel[2]; kw++) {
                int64_t ix = start[2] + kw * w->dilation[2];
                if (iz < padded[0] && iy < padded[1] && ix < padded[2])
                    n_padded++;
                if (iz < 0 || iz >= g->in_hw[0] || iy < 0 || iy >= g->in_hw[1] || ix < 0 ||
                    ix >= g->in_hw[2])
                    continue;
                double v = volume[(iz * g->in_hw[1] + iy) * g->in_hw[2] + ix];
                if (!isnan(best) && (isnan(v) || v > best)) /* NaN wins, as in numpy's max */
                    best = v;
                sum += v;
                n_input++;
            }
        }
    }
    if (kind == POOL_MAX)
        return best;
    int64_t divisor = include_pad ? n_padded : n_input;
    return divisor > 0 ? sum / (double)divisor : 0.0;
}

/* Kernel of every pool: checks the call, then computes each output cell. */
static byocl_status pool_ref(const char *op, int spatial, pool_kind kind,
                             pool_geometry_fn geometry, const byocl_attrs *attrs,
                             const byocl_tensor *const *in, int n_in, byocl_tensor *const *out,
                             int n_out, byocl_error *err)
{
    nn_slide g;
    byocl_shape want;
    byocl_status st = nn_ref_args(op, in, n_in, 1, out, n_out, 1, err);
    if (st == BYOCL_OK)
        st = geometry(attrs, spatial, byocl_tensor_shape(in[0]), &g, err);
    if (st == BYOCL_OK) {
        want = nn_slide_out_shape(&g, g.channels);
        st = nn_ref_out_shape(op, out[0], &want, err);
    }
    if (st != BYOCL_OK)
        return st;
    double *x = nn_to_doubles(in[0], err);
    if (!x)
        return BYOCL_ERR_NOMEM;
    bool include_pad = byocl_attrs_get_bool(attrs, "count_include_pad", false);
    double lowest = nn_dtype_lowest(byocl_tensor_dtype(in[0]));
    nn_slide v = nn_slide_3d(&g);
    int64_t volume = v.in_hw[0] * v.in_hw[1] * v.in_hw[2];
    int64_t i = 0, o[3];
    for (int64_t p = 0; p < v.batch * v.channels; p++)
        for (o[0] = 0; o[0] < v.out_hw[0]; o[0]++)
            for (o[1] = 0; o[1] < v.out_hw[1]; o[1]++)
                for (o[2] = 0; o[2] < v.out_hw[2]; o[2]++)
                    byocl_tensor_set(out[0], i++,
                                     pool_cell(kind, include_pad, &v, x + p * volume, o, lowest));
    free(x);
    return BYOCL_OK;
}

static byocl_status max_pool2d_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                   int n_in, byocl_tensor *const *out, int n_out,
                                   byocl_error *err)
{
    return pool_ref("nn.max_pool2d", 2, POOL_MAX, window_geometry, attrs, in, n_in, out, n_out,
                    err);
}

static byocl_status avg_pool2d_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                   int n_in, byocl_tensor *const *out, int n_out,
                                   byocl_error *err)
{
    return pool_ref("nn.avg_pool2d", 2, POOL_AVG, window_geometry, attrs, in, n_in, out, n_out,
                    err);
}

static byocl_status max_pool3d_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                   int n_in, byocl_tensor *const *out, int n_out,
                                   byocl_error *err)
{
    return pool_ref("nn.max_pool3d", 3, POOL_MAX, window_geometry, attrs, in, n_in, out, n_out,
                    err);
}

static byocl_status avg_pool3d_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                   int n_in, byocl_tensor *const *out, int n_out,
                                   byocl_error *err)
{
    return pool_ref("nn.avg_pool3d", 3, POOL_AVG, window_geometry, attrs, in, n_in, out, n_out,
                    err);
}

static byocl_status global_avg_pool2d_ref(const byocl_attrs *attrs,
                                          const byocl_tensor *const *in, int n_in,
                                          byocl_tensor *const *out, int n_out, byocl_error *err)
{
    return pool_ref("nn.global_avg_pool2d", 2, POOL_AVG, global_geometry, attrs, in, n_in, out,
                    n_out, err);
}

#define POOL_WINDOW_ATTRS                                                                   \
    NN_ATTR_PAIR("pool_size", 1, "window size (height, width)"),                            \
    NN_ATTR_PAIR("strides", 1, "step of the window over (height, width)"),                  \
    NN_ATTR_PAIR("dilation", 1, "spacing between window cells over (height, width)"),       \
    NN_ATTR_PADDING,                                                                        \
    {.name = "layout", .kind = BYOCL_ATTR_STR, .def_s = "NCHW",                             \
     .doc = "layout of data (NCHW only)"},                                                  \
    NN_ATTR_OUT_LAYOUT,                                                                     \
    POOL_CEIL_MODE

#define POOL_CEIL_MODE                                                                      \
    {.name = "ceil_mode", .kind = BYOCL_ATTR_BOOL, .def_i = 0,                              \
     .doc = "round the output size up, letting the last window hang over the padding"}
#define POOL_COUNT_INCLUDE_PAD                                                              \
    {.name = "count_include_pad", .kind = BYOCL_ATTR_BOOL, .def_i = 0,                      \
     .doc = "divide by the whole window including padding, not only the input cells"}

/* TVM's MaxPool3DAttrs and AvgPool3DAttrs. */
#define POOL3D_WINDOW_ATTRS                                                                 \
    NN_ATTR_TRIPLE("pool_size", 1, "window size (depth, height, width)"),                   \
    NN_ATTR_TRIPLE("strides", 1, "step of the window over (depth, height, width)"),         \
    NN_ATTR_TRIPLE("dilation", 1, "spacing between window cells over (depth, height, width)"), \
    NN_ATTR_PADDING_3D,                                                                     \
    {.name = "layout", .kind = BYOCL_ATTR_STR, .def_s = "NCDHW",                            \
     .doc = "layout of data (NCDHW only)"},                                                 \
    {.name = "out_layout", .kind = BYOCL_ATTR_STR, .def_s = "",                             \
     .doc = "layout of the result: \"\" (as the input) or NCDHW"},                          \
    POOL_CEIL_MODE

static const byocl_attr_schema max_pool2d_attrs[] = {POOL_WINDOW_ATTRS};
static const byocl_attr_schema avg_pool2d_attrs[] = {POOL_WINDOW_ATTRS, POOL_COUNT_INCLUDE_PAD};
static const byocl_attr_schema max_pool3d_attrs[] = {POOL3D_WINDOW_ATTRS};
static const byocl_attr_schema avg_pool3d_attrs[] = {POOL3D_WINDOW_ATTRS, POOL_COUNT_INCLUDE_PAD};
static const byocl_attr_schema global_pool_attrs[] = {
    {.name = "layout", .kind = BYOCL_ATTR_STR, .def_s = "NCHW",
     .doc = "layout of data (NCHW only)"},
    NN_ATTR_OUT_LAYOUT,
};

#define N_ATTRS(a) ((int)(sizeof a / sizeof a[0]))

const byocl_op ops_pool[] = {
    {.name = "nn.max_pool2d", .min_args = 1, .max_args = 1, .attrs = max_pool2d_attrs,
     .n_attrs = N_ATTRS(max_pool2d_attrs),
     .doc = "maximum over sliding windows of NCHW data (padding cells never win)",
     .check_attrs = pool2d_check, .infer = pool2d_infer, .ref = max_pool2d_ref},
    {.name = "nn.avg_pool2d", .min_args = 1, .max_args = 1, .attrs = avg_pool2d_attrs,
     .n_attrs = N_ATTRS(avg_pool2d_attrs),
     .doc = "average over sliding windows of NCHW data",
     .check_attrs = pool2d_check, .infer = pool2d_infer, .ref = avg_pool2d_ref},
    {.name = "nn.max_pool3d", .min_args = 1, .max_args = 1, .attrs = max_pool3d_attrs,
     .n_attrs = N_ATTRS(max_pool3d_attrs),
     .doc = "maximum over sliding 3-D windows of NCDHW data (padding cells never win)",
     .check_attrs = pool3d_check, .infer = pool3d_infer, .ref = max_pool3d_ref},
    {.name = "nn.avg_pool3d", .min_args = 1, .max_args = 1, .attrs = avg_pool3d_attrs,
     .n_attrs = N_ATTRS(avg_pool3d_attrs),
     .doc = "average over sliding 3-D windows of NCDHW data",
     .check_attrs = pool3d_check, .infer = pool3d_infer, .ref = avg_pool3d_ref},
    {.name = "nn.global_avg_pool2d", .min_args = 1, .max_args = 1, .attrs = global_pool_attrs,
     .n_attrs = N_ATTRS(global_pool_attrs),
     .doc = "average over each whole H x W plane of NCHW data, giving (N, C, 1, 1)",
     .check_attrs = global_pool_check, .infer = global_pool_infer,
     .ref = global_avg_pool2d_ref},
};
const int ops_pool_count = N_ATTRS(ops_pool);
