/* Op group "conv": nn.conv2d over NCHW data with an OIHW weight, grouped and depthwise
 * included, and its transpose nn.conv2d_transpose with an IOHW weight; nn.conv3d and
 * nn.conv3d_transpose, the same over NCDHW data with OIDHW and IODHW weights. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_util.h"

/* Everything the relation and the kernel need to know about one conv call. */
typedef struct conv_geom {
    nn_slide data;          /* data under the window; kernel[] is the weight's spatial dims */
    int64_t groups;
    int64_t out_ch;         /* O */
    int64_t group_in_ch;    /* I: input channels per group */
    bool transposed;        /* the transposed convs: the weight is (C, O / groups, ...) */
} conv_geom;

/* The shape checks of a conv or a transposed conv (conv_geometry, conv_t_geometry) over
 * `spatial` dimensions. */
typedef byocl_status (*conv_geometry_fn)(const byocl_attrs *attrs, int spatial,
                                         const byocl_shape *data, const byocl_shape *weight,
                                         conv_geom *g, byocl_error *err);

/* The weight's layout: OIHW / IOHW in 2-D, OIDHW / IODHW in 3-D. */
static const char *weight_layout(int spatial, bool transposed)
{
    if (spatial == 3)
        return transposed ? "IODHW" : "OIDHW";
    return transposed ? "IOHW" : "OIHW";
}

static byocl_status conv_groups(const byocl_attrs *attrs, int64_t *groups, byocl_error *err)
{
    *groups = byocl_attrs_get_int(attrs, "groups", 1);
    if (*groups < 1)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "groups must be positive, got %lld",
                               (long long)*groups);
    return BYOCL_OK;
}

/* The optional `channels` must equal the output channels, the optional kernel_size the
 * weight's spatial dims, which become the window's kernel. */
static byocl_status conv_channels_and_kernel(const byocl_attrs *attrs, const byocl_shape *weight,
                                             conv_geom *g, byocl_error *err)
{
    bool given = false;
    int64_t channels = 0;
    byocl_status st = nn_attr_optional_positive(attrs, "channels", &given, &channels, err);
    if (st != BYOCL_OK)
        return st;
    if (given && channels != g->out_ch)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "channels=%lld but weight has %lld output channels",
                               (long long)channels, (long long)g->out_ch);
    /* nn_window_read left kernel[] zero when kernel_size is None. */
    nn_window *win = &g->data.win;
    bool same = true;
    for (int d = 0; d < win->spatial; d++)
        same = same && win->kernel[d] == weight->dims[d + 2];
    if (win->kernel[0] != 0 && !same) {
        char given_s[96], has[64] = "";
        byocl_attr a = {.kind = BYOCL_ATTR_INTS, .n = win->spatial, .ints = win->kernel};
        size_t at = 0;
        for (int d = 0; d < win->spatial && at < sizeof has; d++) /* "3x3", "2x3x3" */
            at += (size_t)snprintf(has + at, sizeof has - at, "%s%lld", d ? "x" : "",
                                   (long long)weight->dims[d + 2]);
        return byocl_error_set(err, BYOCL_ERR_TYPE, "kernel_size=%s but weight has a %s kernel",
                               byocl_attr_value_str(&a, given_s, sizeof given_s), has);
    }
    for (int d = 0; d < win->spatial; d++)
        win->kernel[d] = weight->dims[d + 2];
    return BYOCL_OK;
}

/* Shape checks shared by the type relation and the kernel. */
static byocl_status conv_geometry(const byocl_attrs *attrs, int spatial,
                                  const byocl_shape *data, const byocl_shape *weight,
                                  conv_geom *g, byocl_error *err)
{
    byocl_status st = nn_slide_read(attrs, "kernel_size", spatial, data, &g->data, err);
    if (st == BYOCL_OK)
        st = nn_shape_rank(weight, spatial + 2, "weight", weight_layout(spatial, false), err);
    if (st == BYOCL_OK)
        st = conv_groups(attrs, &g->groups, err);
    if (st != BYOCL_OK)
        return st;
    int64_t in_ch = g->data.channels;
    g->transposed = false;
    g->out_ch = weight->dims[0];
    g->group_in_ch = weight->dims[1];
    long long groups = (long long)g->groups;
    if (in_ch % g->groups != 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "data has %lld channels, which groups=%lld does not divide",
                               (long long)in_ch, groups);
    if (g->out_ch % g->groups != 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "weight has %lld output channels, which groups=%lld does not divide",
                               (long long)g->out_ch, groups);
    if (g->group_in_ch != in_ch / g->groups)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "weight has %lld input channels per group but data has %lld "
                               "channels with groups=%lld",
                               (long long)g->group_in_ch, (long long)in_ch, groups);
    st = conv_channels_and_kernel(attrs, weight, g, err);
    if (st != BYOCL_OK)
        return st;
    return nn_window_out_size(&g->data.win, g->data.in_hw, "kernel", g->data.out_hw, err);
}

/* The transposed convs: the weight is (C, O / groups, spatial...); output_padding extends
 * the result at the after sides. */
static byocl_status conv_t_geometry(const byocl_attrs *attrs, int spatial,
                                    const byocl_shape *data, const byocl_shape *weight,
                                    conv_geom *g, byocl_error *err)
{
    byocl_status st = nn_slide_read(attrs, "kernel_size", spatial, data, &g->data, err);
    if (st == BYOCL_OK)
        st = nn_shape_rank(weight, spatial + 2, "weight", weight_layout(spatial, true), err);
    if (st == BYOCL_OK)
        st = conv_groups(attrs, &g->groups, err);
    int64_t out_pad[NN_MAX_SPATIAL] = {0, 0, 0};
    if (st == BYOCL_OK)
        st = nn_attr_spatial_nonnegative(attrs, "output_padding", spatial, out_pad, err);
    if (st != BYOCL_OK)
        return st;
    int64_t in_ch = g->data.channels;
    long long groups = (long long)g->groups;
    if (weight->dims[0] != in_ch)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "weight has %lld input channels but data has %lld",
                               (long long)weight->dims[0], (long long)in_ch);
    if (in_ch % g->groups != 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "data has %lld channels, which groups=%lld does not divide",
                               (long long)in_ch, groups);
    if (weight->dims[1] > INT64_MAX / g->groups)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "weight has too many output channels");
    g->transposed = true;
    g->group_in_ch = in_ch / g->groups;
    g->out_ch = weight->dims[1] * g->groups;
    st = conv_channels_and_kernel(attrs, weight, g, err);
    if (st != BYOCL_OK)
        return st;
    return nn_window_transposed_size(&g->data.win, g->data.in_hw, out_pad, g->data.out_hw, err);
}

/* check_attrs of every conv: the window, groups, channels, the layouts, out_dtype and, for
 * a transposed one, output_padding. */
static byocl_status conv_check(byocl_module *m, byocl_attrs *attrs, int spatial, bool transposed,
                               byocl_error *err)
{
    bool given = false;
    int64_t groups = 0, channels = 0, out_pad[NN_MAX_SPATIAL];
    byocl_dtype dtype;
    byocl_status st = nn_window_check(m, attrs, "kernel_size", "data_layout", spatial, err);
    if (st == BYOCL_OK)
        st = conv_groups(attrs, &groups, err);
    if (st == BYOCL_OK)
        st = nn_attr_optional_positive(attrs, "channels", &given, &channels, err);
    if (st == BYOCL_OK)
        st = nn_attr_layout(attrs, "kernel_layout", weight_layout(spatial, transposed), false,
                            err);
    if (st == BYOCL_OK)
        st = nn_attr_out_dtype(attrs, BYOCL_FLOAT32, &dtype, err);
    if (st == BYOCL_OK && transposed)
        st = nn_attr_spatial_nonnegative(attrs, "output_padding", spatial, out_pad, err);
    if (st == BYOCL_OK && transposed)
        st = nn_attr_store_ints(m, attrs, "output_padding", out_pad, spatial, err);
    return st;
}

static byocl_status conv2d_check(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    return conv_check(m, attrs, 2, false, err);
}

static byocl_status conv2d_transpose_check(byocl_module *m, byocl_attrs *attrs,
                                           byocl_error *err)
{
    return conv_check(m, attrs, 2, true, err);
}

static byocl_status conv3d_check(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    return conv_check(m, attrs, 3, false, err);
}

static byocl_status conv3d_transpose_check(byocl_module *m, byocl_attrs *attrs,
                                           byocl_error *err)
{
    return conv_check(m, attrs, 3, true, err);
}

/* Type relation of every conv. */
static byocl_status conv_infer(const byocl_infer_ctx *ctx, int spatial, bool transposed,
                               byocl_type *out, byocl_error *err)
{
    const byocl_type *data = NULL, *weight = NULL;
    byocl_status st =
        nn_tensor_arg(ctx, 0, "data", spatial + 2, nn_data_layout(spatial), &data, err);
    if (st == BYOCL_OK)
        st = nn_tensor_arg(ctx, 1, "weight", spatial + 2, weight_layout(spatial, transposed),
                           &weight, err);
    if (st == BYOCL_OK)
        st = nn_same_dtype(weight, "weight", data, err);
    conv_geom g;
    conv_geometry_fn geometry = transposed ? conv_t_geometry : conv_geometry;
    if (st == BYOCL_OK)
        st = geometry(ctx->attrs, spatial, &data->shape, &weight->shape, &g, err);
    byocl_dtype out_dtype = BYOCL_FLOAT32;
    if (st == BYOCL_OK)
        st = nn_attr_out_dtype(ctx->attrs, data->dtype, &out_dtype, err);
    if (st != BYOCL_OK)
        return st;
    byocl_shape shape = nn_slide_out_shape(&g.data, g.out_ch);
    *out = byocl_type_tensor(out_dtype, shape.rank, shape.dims);
    return BYOCL_OK;
}

static byocl_status conv2d_infer(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    return conv_infer(ctx, 2, false, out, err);
}

static byocl_status conv2d_transpose_infer(const byocl_infer_ctx *ctx, byocl_type *out,
                                           byocl_error *err)
{
    return conv_infer(ctx, 2, true, out, err);
}

static byocl_status conv3d_infer(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    return conv_infer(ctx, 3, false, out, err);
}

static byocl_status conv3d_transpose_infer(const byocl_infer_ctx *ctx, byocl_type *out,
                                           byocl_error *err)
{
    return conv_infer(ctx, 3, true, out, err);
}

/* Adds input channel volume `x` (D x H x W of the 3-D view `g`, nn_slide_3d), weighted
 * by kernel `w` (KD x KH x KW), into the output volume `acc` (OD x OH x OW). Loops over
 * taps outermost so the innermost loop runs along an output row with no bounds checks. */
static void conv_accumulate(const nn_slide *g, const double *x, const double *w, double *acc)
{
    const nn_window *win = &g->win;
    const int64_t *in = g->in_hw, *out = g->out_hw;
    for (int64_t kd = 0; kd < win->kernel[0]; kd++) {
        int64_t off_d = kd * win->dilation[0] - win->pad[0], oz_lo, oz_hi;
        nn_valid_range(out[0], in[0], win->stride[0], off_d, &oz_lo, &oz_hi);
        for (int64_t kh = 0; kh < win->kernel[1]; kh++) {
            int64_t off_h = kh * win->dilation[1] - win->pad[1], oy_lo, oy_hi;
            nn_valid_range(out[1], in[1], win->stride[1], off_h, &oy_lo, &oy_hi);
            for (int64_t kw = 0; kw < win->kernel[2]; kw++) {
                int64_t off_w = kw * win->dilation[2] - win->pad[2], ox_lo, ox_hi;
                nn_valid_range(out[2], in[2], win->stride[2], off_w, &ox_lo, &ox_hi);
                double tap = w[(kd * win->kernel[1] + kh) * win->kernel[2] + kw];
                for (int64_t oz = oz_lo; oz < oz_hi; oz++) {
                    for (int64_t oy = oy_lo; oy < oy_hi; oy++) {
                        int64_t iz = oz * win->stride[0] + off_d, iy = oy * win->stride[1] + off_h;
                        const double *x_row = x + (iz * in[1] + iy) * in[2] + off_w;
                        double *acc_row = acc + (oz * out[1] + oy) * out[2];
                        for (int64_t ox = ox_lo; ox < ox_hi; ox++)
                            acc_row[ox] += tap * x_row[ox * win->stride[2]];
                    }
                }
            }
        }
    }
}

/* The transpose of conv_accumulate: spreads input channel volume `x` (D x H x W),
 * weighted by kernel `w` (KD x KH x KW), into the output volume `acc` (OD x OH x OW);
 * input cell (iz, iy, ix) feeds output (iz * stride + kd * dilation - pad, ...). Each
 * output receives its taps in (kd, kh, kw) order, as a gather over the taps would add
 * them. */
static void conv_t_scatter(const nn_slide *g, const double *x, const double *w, double *acc)
{
    const nn_window *win = &g->win;
    const int64_t *in = g->in_hw, *out = g->out_hw;
    for (int64_t kd = 0; kd < win->kernel[0]; kd++) {
        int64_t off_d = kd * win->dilation[0] - win->pad[0], iz_lo, iz_hi;
        nn_valid_range(in[0], out[0], win->stride[0], off_d, &iz_lo, &iz_hi);
        for (int64_t kh = 0; kh < win->kernel[1]; kh++) {
            int64_t off_h = kh * win->dilation[1] - win->pad[1], iy_lo, iy_hi;
            nn_valid_range(in[1], out[1], win->stride[1], off_h, &iy_lo, &iy_hi);
            for (int64_t kw = 0; kw < win->kernel[2]; kw++) {
                int64_t off_w = kw * win->dilation[2] - win->pad[2], ix_lo, ix_hi;
                nn_valid_range(in[2], out[2], win->stride[2], off_w, &ix_lo, &ix_hi);
                double tap = w[(kd * win->kernel[1] + kh) * win->kernel[2] + kw];
                for (int64_t iz = iz_lo; iz < iz_hi; iz++) {
                    for (int64_t iy = iy_lo; iy < iy_hi; iy++) {
                        int64_t oz = iz * win->stride[0] + off_d, oy = iy * win->stride[1] + off_h;
                        const double *x_row = x + (iz * in[1] + iy) * in[2];
                        double *acc_row = acc + (oz * out[1] + oy) * out[2] + off_w;
                        for (int64_t ix = ix_lo; ix < ix_hi; ix++)
                            acc_row[ix * win->stride[2]] += tap * x_row[ix];
                    }
                }
            }
        }
    }
}

/* Reference kernel of every conv: per output channel, the volumes of its group's input
 * channels accumulate in double in (input channel, kd, kh, kw) order. */
static byocl_status conv_ref(const char *op, int spatial, conv_geometry_fn geometry,
                             const byocl_attrs *attrs, const byocl_tensor *const *in, int n_in,
                             byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = nn_ref_args(op, in, n_in, 2, out, n_out, 1, err);
    conv_geom g;
    if (st == BYOCL_OK)
        st = geometry(attrs, spatial, byocl_tensor_shape(in[0]), byocl_tensor_shape(in[1]), &g,
                      err);
    byocl_shape want;
    if (st == BYOCL_OK) {
        want = nn_slide_out_shape(&g.data, g.out_ch);
        st = nn_ref_out_shape(op, out[0], &want, err);
    }
    if (st != BYOCL_OK)
        return st;

    nn_slide v = nn_slide_3d(&g.data);
    int64_t in_vol = v.in_hw[0] * v.in_hw[1] * v.in_hw[2];
    int64_t out_vol = v.out_hw[0] * v.out_hw[1] * v.out_hw[2];
    int64_t taps = v.win.kernel[0] * v.win.kernel[1] * v.win.kernel[2];
    double *x = nn_to_doubles(in[0], err);
    double *w = x ? nn_to_doubles(in[1], err) : NULL;
    double *acc = w ? malloc((size_t)(out_vol > 0 ? out_vol : 1) * sizeof *acc) : NULL;
    if (!acc) {
        free(x);
        free(w);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: out of memory", op);
    }
    int64_t out_per_group = g.out_ch / g.groups;
    for (int64_t n = 0; n < v.batch; n++) {
        for (int64_t oc = 0; oc < g.out_ch; oc++) {
            int64_t first_ic = (oc / out_per_group) * g.group_in_ch;
            memset(acc, 0, (size_t)out_vol * sizeof *acc);
            for (int64_t i = 0; i < g.group_in_ch; i++) {
                const double *vol = x + (n * v.channels + first_ic + i) * in_vol;
                if (g.transposed) /* weight (C, O / groups, spatial...) */
                    conv_t_scatter(&v, vol,
                                   w + ((first_ic + i) * out_per_group + oc % out_per_group) * taps,
                                   acc);
                else
                    conv_accumulate(&v, vol, w + (oc * g.group_in_ch + i) * taps, acc);
            }
            int64_t base = (n * g.out_ch + oc) * out_vol;
            for (int64_t k = 0; k < out_vol; k++)
                byocl_tensor_set(out[0], base + k, acc[k]);
        }
    }
    free(x);
    free(w);
    free(acc);
    return BYOCL_OK;
}

static byocl_status conv2d_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                               int n_in, byocl_tensor *const *out, int n_out, byocl_error *err)
{
    return conv_ref("nn.conv2d", 2, conv_geometry, attrs, in, n_in, out, n_out, err);
}

static byocl_status conv2d_transpose_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                         int n_in, byocl_tensor *const *out, int n_out,
                                         byocl_error *err)
{
    return conv_ref("nn.conv2d_transpose", 2, conv_t_geometry, attrs, in, n_in, out, n_out, err);
}

static byocl_status conv3d_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                               int n_in, byocl_tensor *const *out, int n_out, byocl_error *err)
{
    return conv_ref("nn.conv3d", 3, conv_geometry, attrs, in, n_in, out, n_out, err);
}

static byocl_status conv3d_transpose_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                         int n_in, byocl_tensor *const *out, int n_out,
                                         byocl_error *err)
{
    return conv_ref("nn.conv3d_transpose", 3, conv_t_geometry, attrs, in, n_in, out, n_out, err);
}

static const byocl_attr_schema conv2d_attrs[] = {
    NN_ATTR_PAIR("strides", 1, "step of the kernel over (height, width)"),
    NN_ATTR_PADDING,
    NN_ATTR_PAIR("dilation", 1, "spacing between kernel taps over (height, width)"),
    {.name = "groups", .kind = BYOCL_ATTR_INT, .def_i = 1,
     .doc = "channel groups; groups equal to the input channels is a depthwise conv"},
    {.name = "channels", .kind = BYOCL_ATTR_INT, .nullable = true, .def_null = true,
     .doc = "output channels; when given, must equal the weight's O"},
    {.name = "kernel_size", .kind = BYOCL_ATTR_INTS, .nullable = true, .def_null = true,
     .int_or_ints = true, .doc = "kernel (height, width); when given, must equal the weight's H, W"},
    {.name = "data_layout", .kind = BYOCL_ATTR_STR, .def_s = "NCHW",
     .doc = "layout of data (NCHW only)"},
    {.name = "kernel_layout", .kind = BYOCL_ATTR_STR, .def_s = "OIHW",
     .doc = "layout of weight (OIHW only)"},
    NN_ATTR_OUT_LAYOUT,
    NN_ATTR_OUT_DTYPE,
};

static const byocl_attr_schema conv2d_transpose_attrs[] = {
    NN_ATTR_PAIR("strides", 1, "step of the kernel over (height, width) in the output"),
    {.name = "padding", .kind = BYOCL_ATTR_INTS, .int_or_ints = true, .def_n = 4,
     .def_ints = {0, 0, 0, 0},
     .doc = "cropped from the full result: 1 value (all sides), 2 (top/bottom, left/right) "
            "or 4 (top, left, bottom, right)"},
    NN_ATTR_PAIR("dilation", 1, "spacing between kernel taps over (height, width)"),
    {.name = "groups", .kind = BYOCL_ATTR_INT, .def_i = 1, .doc = "channel groups"},
    {.name = "channels", .kind = BYOCL_ATTR_INT, .nullable = true, .def_null = true,
     .doc = "output channels; when given, must equal the weight's O times groups"},
    {.name = "kernel_size", .kind = BYOCL_ATTR_INTS, .nullable = true, .def_null = true,
     .int_or_ints = true, .doc = "kernel (height, width); when given, must equal the weight's H, W"},
    {.name = "data_layout", .kind = BYOCL_ATTR_STR, .def_s = "NCHW",
     .doc = "layout of data (NCHW only)"},
    {.name = "kernel_layout", .kind = BYOCL_ATTR_STR, .def_s = "IOHW",
     .doc = "layout of weight (IOHW only: input channels, output channels per group, H, W)"},
    NN_ATTR_OUT_LAYOUT,
    {.name = "output_padding", .kind = BYOCL_ATTR_INTS, .int_or_ints = true, .def_n = 2,
     .def_ints = {0, 0}, .doc = "rows and columns added at the bottom and right (>= 0)"},
    NN_ATTR_OUT_DTYPE,
};

/* TVM's Conv3DAttrs and Conv3DTransposeAttrs. */
static const byocl_attr_schema conv3d_attrs[] = {
    NN_ATTR_TRIPLE("strides", 1, "step of the kernel over (depth, height, width)"),
    NN_ATTR_PADDING_3D,
    NN_ATTR_TRIPLE("dilation", 1, "spacing between kernel taps over (depth, height, width)"),
    {.name = "groups", .kind = BYOCL_ATTR_INT, .def_i = 1,
     .doc = "channel groups; groups equal to the input channels is a depthwise conv"},
    {.name = "channels", .kind = BYOCL_ATTR_INT, .nullable = true, .def_null = true,
     .doc = "output channels; when given, must equal the weight's O"},
    {.name = "kernel_size", .kind = BYOCL_ATTR_INTS, .nullable = true, .def_null = true,
     .int_or_ints = true,
     .doc = "kernel (depth, height, width); when given, must equal the weight's D, H, W"},
    {.name = "data_layout", .kind = BYOCL_ATTR_STR, .def_s = "NCDHW",
     .doc = "layout of data (NCDHW only)"},
    {.name = "kernel_layout", .kind = BYOCL_ATTR_STR, .def_s = "OIDHW",
     .doc = "layout of weight (OIDHW only)"},
    {.name = "out_layout", .kind = BYOCL_ATTR_STR, .def_s = "",
     .doc = "layout of the result: \"\" (as the input) or NCDHW"},
    NN_ATTR_OUT_DTYPE,
};

static const byocl_attr_schema conv3d_transpose_attrs[] = {
    {.name = "channels", .kind = BYOCL_ATTR_INT, .nullable = true, .def_null = true,
     .doc = "output channels; when given, must equal the weight's O times groups"},
    {.name = "kernel_size", .kind = BYOCL_ATTR_INTS, .nullable = true, .def_null = true,
     .int_or_ints = true,
     .doc = "kernel (depth, height, width); when given, must equal the weight's D, H, W"},
    NN_ATTR_TRIPLE("strides", 1, "step of the kernel over (depth, height, width) in the output"),
    {.name = "output_padding", .kind = BYOCL_ATTR_INTS, .int_or_ints = true, .def_n = 3,
     .def_ints = {0, 0, 0},
     .doc = "planes, rows and columns added at the back, bottom and right (>= 0)"},
    NN_ATTR_TRIPLE("dilation", 1, "spacing between kernel taps over (depth, height, width)"),
    {.name = "padding", .kind = BYOCL_ATTR_INTS, .int_or_ints = true, .def_n = 6,
     .def_ints = {0, 0, 0, 0, 0, 0},
     .doc = "cropped from the full result: 1 value (all sides), 3 (front/back, top/bottom, "
            "left/right) or 6 (front, top, left, back, bottom, right)"},
    {.name = "groups", .kind = BYOCL_ATTR_INT, .def_i = 1, .doc = "channel groups"},
    {.name = "data_layout", .kind = BYOCL_ATTR_STR, .def_s = "NCDHW",
     .doc = "layout of data (NCDHW only)"},
    {.name = "kernel_layout", .kind = BYOCL_ATTR_STR, .def_s = "IODHW",
     .doc = "layout of weight (IODHW only: input channels, output channels per group, D, H, W)"},
    {.name = "out_layout", .kind = BYOCL_ATTR_STR, .def_s = "",
     .doc = "layout of the result: \"\" (as the input) or NCDHW"},
    NN_ATTR_OUT_DTYPE,
};

const byocl_op ops_conv[] = {
    {.name = "nn.conv2d", .min_args = 2, .max_args = 2, .attrs = conv2d_attrs,
     .n_attrs = (int)(sizeof conv2d_attrs / sizeof conv2d_attrs[0]),
     .doc = "2-D convolution of NCHW data with an OIHW weight",
     .check_attrs = conv2d_check, .infer = conv2d_infer, .ref = conv2d_ref},
    {.name = "nn.conv2d_transpose", .min_args = 2, .max_args = 2,
     .attrs = conv2d_transpose_attrs,
     .n_attrs = (int)(sizeof conv2d_transpose_attrs / sizeof conv2d_transpose_attrs[0]),
     .doc = "transposed 2-D convolution (the gradient of nn.conv2d) of NCHW data with an IOHW "
            "weight; output size (in - 1) * stride + dilation * (kernel - 1) + 1 - padding + "
            "output_padding",
     .check_attrs = conv2d_transpose_check, .infer = conv2d_transpose_infer,
     .ref = conv2d_transpose_ref},
    {.name = "nn.conv3d", .min_args = 2, .max_args = 2, .attrs = conv3d_attrs,
     .n_attrs = (int)(sizeof conv3d_attrs / sizeof conv3d_attrs[0]),
     .doc = "3-D convolution of NCDHW data with an OIDHW weight",
     .check_attrs = conv3d_check, .infer = conv3d_infer, .ref = conv3d_ref},
    {.name = "nn.conv3d_transpose", .min_args = 2, .max_args = 2,
     .attrs = conv3d_transpose_attrs,
     .n_attrs = (int)(sizeof conv3d_transpose_attrs / sizeof conv3d_transpose_attrs[0]),
     .doc = "transposed 3-D convolution (the gradient of nn.conv3d) of NCDHW data with an IODHW "
            "weight; output size as nn.conv2d_transpose's, per dimension",
     .check_attrs = conv3d_transpose_check, .infer = conv3d_transpose_infer,
     .ref = conv3d_transpose_ref},
};
const int ops_conv_count = (int)(sizeof ops_conv / sizeof ops_conv[0]);
