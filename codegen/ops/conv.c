/* Op group "conv": nn.conv2d over NCHW data with an OIHW weight, grouped and depthwise
 * included, and its transpose nn.conv2d_transpose with an IOHW weight. */
#include <stdlib.h>
#include <string.h>

#include "nn_util.h"

/* Everything the relation and the kernel need to know about one conv2d call. */
typedef struct conv_geom {
    nn_slide data;          /* data under the window; kernel[] is the weight's (H, W) */
    int64_t groups;
    int64_t out_ch;         /* O */
    int64_t group_in_ch;    /* I: input channels per group */
    bool transposed;        /* conv2d_transpose: the weight is (C, O / groups, H, W) */
} conv_geom;

/* The shape checks of conv2d or conv2d_transpose (conv_geometry, conv_t_geometry). */
typedef byocl_status (*conv_geometry_fn)(const byocl_attrs *attrs, const byocl_shape *data,
                                         const byocl_shape *weight, conv_geom *g,
                                         byocl_error *err);

static byocl_status conv_groups(const byocl_attrs *attrs, int64_t *groups, byocl_error *err)
{
    *groups = byocl_attrs_get_int(attrs, "groups", 1);
    if (*groups < 1)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "groups must be positive, got %lld",
                               (long long)*groups);
    return BYOCL_OK;
}

/* The optional `channels` must equal the output channels, the optional kernel_size the
 * weight's (H, W), which becomes the window's kernel. */
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
    if (win->kernel[0] != 0 &&
        (win->kernel[0] != weight->dims[2] || win->kernel[1] != weight->dims[3]))
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "kernel_size=[%lld, %lld] but weight has a %lldx%lld kernel",
                               (long long)win->kernel[0], (long long)win->kernel[1],
                               (long long)weight->dims[2], (long long)weight->dims[3]);
    win->kernel[0] = weight->dims[2];
    win->kernel[1] = weight->dims[3];
    return BYOCL_OK;
}

/* Shape checks shared by the type relation and the kernel. */
static byocl_status conv_geometry(const byocl_attrs *attrs, const byocl_shape *data,
                                  const byocl_shape *weight, conv_geom *g, byocl_error *err)
{
    byocl_status st = nn_slide_read(attrs, "kernel_size", data, &g->data, err);
    if (st == BYOCL_OK)
        st = nn_shape_4d(weight, "weight", "OIHW", err);
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

/* conv2d_transpose: the weight is (C, O / groups, H, W); output_padding extends the
 * result at the bottom/right. */
static byocl_status conv_t_geometry(const byocl_attrs *attrs, const byocl_shape *data,
                                    const byocl_shape *weight, conv_geom *g, byocl_error *err)
{
    byocl_status st = nn_slide_read(attrs, "kernel_size", data, &g->data, err);
    if (st == BYOCL_OK)
        st = nn_shape_4d(weight, "weight", "IOHW", err);
    if (st == BYOCL_OK)
        st = conv_groups(attrs, &g->groups, err);
    int64_t out_pad[2] = {0, 0};
    if (st == BYOCL_OK)
        st = nn_attr_pair_nonnegative(attrs, "output_padding", out_pad, err);
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

/* check_attrs of both convs: the window, groups, channels, the layouts (the weight's is
 * `kernel_layout`) and out_dtype. */
static byocl_status conv_check(byocl_module *m, byocl_attrs *attrs, const char *kernel_layout,
                               byocl_error *err)
{
    bool given = false;
    int64_t groups = 0, channels = 0;
    byocl_dtype dtype;
    byocl_status st = nn_window_check(m, attrs, "kernel_size", "data_layout", err);
    if (st == BYOCL_OK)
        st = conv_groups(attrs, &groups, err);
    if (st == BYOCL_OK)
        st = nn_attr_optional_positive(attrs, "channels", &given, &channels, err);
    if (st == BYOCL_OK)
        st = nn_attr_layout(attrs, "kernel_layout", kernel_layout, false, err);
    if (st == BYOCL_OK)
        st = nn_attr_out_dtype(attrs, BYOCL_FLOAT32, &dtype, err);
    return st;
}

static byocl_status conv2d_check(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    return conv_check(m, attrs, "OIHW", err);
}

static byocl_status conv2d_transpose_check(byocl_module *m, byocl_attrs *attrs,
                                           byocl_error *err)
{
    int64_t out_pad[2];
    byocl_status st = conv_check(m, attrs, "IOHW", err);
    if (st == BYOCL_OK)
        st = nn_attr_pair_nonnegative(attrs, "output_padding", out_pad, err);
    if (st == BYOCL_OK)
        st = nn_attr_store_ints(m, attrs, "output_padding", out_pad, 2, err);
    return st;
}

/* Type relation of both convs; `kernel_layout` names the weight's layout in errors. */
static byocl_status conv_infer(const byocl_infer_ctx *ctx, const char *kernel_layout,
                               conv_geometry_fn geometry, byocl_type *out, byocl_error *err)
{
    const byocl_type *data = NULL, *weight = NULL;
    byocl_status st = nn_tensor_arg(ctx, 0, "data", 4, "NCHW", &data, err);
    if (st == BYOCL_OK)
        st = nn_tensor_arg(ctx, 1, "weight", 4, kernel_layout, &weight, err);
    if (st == BYOCL_OK)
        st = nn_same_dtype(weight, "weight", data, err);
    conv_geom g;
    if (st == BYOCL_OK)
        st = geometry(ctx->attrs, &data->shape, &weight->shape, &g, err);
    byocl_dtype out_dtype = BYOCL_FLOAT32;
    if (st == BYOCL_OK)
        st = nn_attr_out_dtype(ctx->attrs, data->dtype, &out_dtype, err);
    if (st != BYOCL_OK)
        return st;
    byocl_shape shape = nn_slide_out_shape(&g.data, g.out_ch);
    *out = byocl_type_tensor(out_dtype, 4, shape.dims);
    return BYOCL_OK;
}

static byocl_status conv2d_infer(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    return conv_infer(ctx, "OIHW", conv_geometry, out, err);
}

static byocl_status conv2d_transpose_infer(const byocl_infer_ctx *ctx, byocl_type *out,
                                           byocl_error *err)
{
    return conv_infer(ctx, "IOHW", conv_t_geometry, out, err);
}

/* Adds channel `ic` of image `x` (H x W), weighted by kernel `w` (KH x KW), into the
 * output plane `acc` (OH x OW). Loops over taps outermost so the innermost loop runs
 * along an output row with no bounds checks. */
static void conv_accumulate_plane(const conv_geom *g, const double *x, const double *w,
                                  double *acc)
{
    const nn_window *win = &g->data.win;
    int64_t in_w = g->data.in_hw[1], out_w = g->data.out_hw[1];
    for (int64_t kh = 0; kh < win->kernel[0]; kh++) {
        int64_t off_h = kh * win->dilation[0] - win->pad[0], oy_lo, oy_hi;
        nn_valid_range(g->data.out_hw[0], g->data.in_hw[0], win->stride[0], off_h, &oy_lo, &oy_hi);
        for (int64_t kw = 0; kw < win->kernel[1]; kw++) {
            int64_t off_w = kw * win->dilation[1] - win->pad[1], ox_lo, ox_hi;
            nn_valid_range(out_w, in_w, win->stride[1], off_w, &ox_lo, &ox_hi);
            double tap = w[kh * win->kernel[1] + kw];
            for (int64_t oy = oy_lo; oy < oy_hi; oy++) {
                const double *x_row = x + (oy * win->stride[0] + off_h) * in_w + off_w;
                double *acc_row = acc + oy * out_w;
                for (int64_t ox = ox_lo; ox < ox_hi; ox++)
                    acc_row[ox] += tap * x_row[ox * win->stride[1]];
            }
        }
    }
}

/* The transpose of conv_accumulate_plane: spreads channel `ic` of image `x` (H x W),
 * weighted by kernel `w` (KH x KW), into the output plane `acc` (OH x OW); input cell
 * (iy, ix) feeds output (iy * stride + kh * dilation - pad, ...). Each output receives
 * its taps in (kh, kw) order, as a gather over the taps would add them. */
static void conv_t_scatter_plane(const conv_geom *g, const double *x, const double *w,
                                 double *acc)
{
    const nn_window *win = &g->data.win;
    int64_t in_w = g->data.in_hw[1], out_w = g->data.out_hw[1];
    for (int64_t kh = 0; kh < win->kernel[0]; kh++) {
        int64_t off_h = kh * win->dilation[0] - win->pad[0], iy_lo, iy_hi;
        nn_valid_range(g->data.in_hw[0], g->data.out_hw[0], win->stride[0], off_h, &iy_lo, &iy_hi);
        for (int64_t kw = 0; kw < win->kernel[1]; kw++) {
            int64_t off_w = kw * win->dilation[1] - win->pad[1], ix_lo, ix_hi;
            nn_valid_range(in_w, out_w, win->stride[1], off_w, &ix_lo, &ix_hi);
            double tap = w[kh * win->kernel[1] + kw];
            for (int64_t iy = iy_lo; iy < iy_hi; iy++) {
                const double *x_row = x + iy * in_w;
                double *acc_row = acc + (iy * win->stride[0] + off_h) * out_w + off_w;
                for (int64_t ix = ix_lo; ix < ix_hi; ix++)
                    acc_row[ix * win->stride[1]] += tap * x_row[ix];
            }
        }
    }
}

/* Reference kernel of both convs: per output channel, the planes of its group's input
 * channels accumulate in double in (input channel, kh, kw) order. */
static byocl_status conv_ref(const char *op, conv_geometry_fn geometry, const byocl_attrs *attrs,
                             const byocl_tensor *const *in, int n_in, byocl_tensor *const *out,
                             int n_out, byocl_error *err)
{
    byocl_status st = nn_ref_args(op, in, n_in, 2, out, n_out, 1, err);
    conv_geom g;
    if (st == BYOCL_OK)
        st = geometry(attrs, byocl_tensor_shape(in[0]), byocl_tensor_shape(in[1]), &g, err);
    byocl_shape want;
    if (st == BYOCL_OK) {
        want = nn_slide_out_shape(&g.data, g.out_ch);
        st = nn_ref_out_shape(op, out[0], &want, err);
    }
    if (st != BYOCL_OK)
        return st;

    int64_t in_plane = g.data.in_hw[0] * g.data.in_hw[1];
    int64_t out_plane = g.data.out_hw[0] * g.data.out_hw[1];
    int64_t taps = g.data.win.kernel[0] * g.data.win.kernel[1];
    double *x = nn_to_doubles(in[0], err);
    double *w = x ? nn_to_doubles(in[1], err) : NULL;
    double *acc = w ? malloc((size_t)(out_plane > 0 ? out_plane : 1) * sizeof *acc) : NULL;
    if (!acc) {
        free(x);
        free(w);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: out of memory", op);
    }
    int64_t out_per_group = g.out_ch / g.groups;
    for (int64_t n = 0; n < g.data.batch; n++) {
        for (int64_t oc = 0; oc < g.out_ch; oc++) {
            int64_t first_ic = (oc / out_per_group) * g.group_in_ch;
            memset(acc, 0, (size_t)out_plane * sizeof *acc);
            for (int64_t i = 0; i < g.group_in_ch; i++) {
                const double *plane = x + (n * g.data.channels + first_ic + i) * in_plane;
                if (g.transposed) /* weight (C, O / groups, KH, KW) */
                    conv_t_scatter_plane(&g, plane,
                                         w + ((first_ic + i) * out_per_group + oc % out_per_group) * taps,
                                         acc);
                else
                    conv_accumulate_plane(&g, plane, w + (oc * g.group_in_ch + i) * taps, acc);
            }
            int64_t base = (n * g.out_ch + oc) * out_plane;
            for (int64_t k = 0; k < out_plane; k++)
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
    return conv_ref("nn.conv2d", conv_geometry, attrs, in, n_in, out, n_out, err);
}

static byocl_status conv2d_transpose_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                         int n_in, byocl_tensor *const *out, int n_out,
                                         byocl_error *err)
{
    return conv_ref("nn.conv2d_transpose", conv_t_geometry, attrs, in, n_in, out, n_out, err);
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
};
const int ops_conv_count = (int)(sizeof ops_conv / sizeof ops_conv[0]);
