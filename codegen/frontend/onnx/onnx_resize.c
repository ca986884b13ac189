/* ONNX Resize (opsets 10 to 18), and Upsample's linear mode and fractional scales, as
 * image.resize2d. resize2d resizes the last two axes of an NCHW tensor; a Resize that
 * scales only the last two axes of a tensor of any rank >= 2 becomes a reshape to
 * (1, product of the leading dims, H, W), the resize2d, and a reshape back (a rank-1 input
 * gets H = 1). The scales, sizes and (for tf_crop_and_resize) the roi must be known when
 * compiling; only the last two axes may be cropped. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_import.h"

/* What one resize does, in ONNX's terms. */
typedef struct resize_spec {
    const char *method;   /* resize2d's: nearest_neighbor, linear, cubic */
    const char *coord;    /* coordinate_transformation_mode */
    const char *rounding; /* resize2d's rounding_method */
    double cubic_a, extrapolation;
    bool exclude;
    bool by_scales;       /* the coordinates divide by scales[] (else out / in) */
    double scales[BYOCL_MAX_RANK];
    int64_t out[BYOCL_MAX_RANK];
    double crop_start[BYOCL_MAX_RANK], crop_end[BYOCL_MAX_RANK]; /* tf_crop_and_resize's roi */
} resize_spec;

static bool crops(const resize_spec *s) { return strcmp(s->coord, "tf_crop_and_resize") == 0; }

static byocl_status set_str(onnx_ctx *cx, byocl_attrs *a, const char *key, const char *v)
{
    return onnx_attrs_ok(cx, byocl_attrs_set_str(cx->mod, a, key, v));
}

static byocl_status set_float(onnx_ctx *cx, byocl_attrs *a, const char *key, double v)
{
    return onnx_attrs_ok(cx, byocl_attrs_set_float(cx->mod, a, key, v));
}

/* resize2d's attributes for spec s of a rank-4 tensor of shape `in`. */
static byocl_attrs *resize_attrs(onnx_ctx *cx, const resize_spec *s, const int64_t *in)
{
    byocl_attrs *a = onnx_attrs(cx);
    if (!a || onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "size", s->out + 2, 2)) != BYOCL_OK ||
        set_str(cx, a, "method", s->method) != BYOCL_OK ||
        set_str(cx, a, "coordinate_transformation_mode", s->coord) != BYOCL_OK ||
        set_float(cx, a, "extrapolation_value", s->extrapolation) != BYOCL_OK)
        return NULL;
    /* each method's own attributes only (the others are defaults) */
    if (strcmp(s->method, "nearest_neighbor") == 0 &&
        set_str(cx, a, "rounding_method", s->rounding) != BYOCL_OK)
        return NULL;
    if (strcmp(s->method, "cubic") == 0 &&
        (set_float(cx, a, "cubic_alpha", s->cubic_a) != BYOCL_OK ||
         onnx_attrs_ok(cx, byocl_attrs_set_int(cx->mod, a, "cubic_exclude", s->exclude)) !=
             BYOCL_OK))
        return NULL;
    const double roi[4] = {s->crop_start[2], s->crop_start[3], s->crop_end[2], s->crop_end[3]};
    if (crops(s) &&
        onnx_attrs_ok(cx, byocl_attrs_set_floats(cx->mod, a, "roi", roi, 4)) != BYOCL_OK)
        return NULL;
    /* the scales only where they are not out / in already */
    const char *keys[2] = {"scale_h", "scale_w"};
    for (int d = 2; d < 4 && s->by_scales; d++)
        if (s->scales[d] != (double)s->out[d] / (double)in[d] &&
            set_float(cx, a, keys[d - 2], s->scales[d]) != BYOCL_OK)
            return NULL;
    return a;
}

/* x resized as spec says, through a rank-4 view (1, leading dims, H, W); -1 with the error
 * recorded. Only the last two axes may scale or be cropped. */
static int build_resize(onnx_ctx *cx, int x, const resize_spec *s)
{
    const byocl_shape in = onnx_type(cx, x)->shape;
    int r = in.rank;
    if (r < 1) {
        onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "resizing a scalar is not supported");
        return -1;
    }
    for (int d = 0; d < r - 2; d++)
        if (s->out[d] != in.dims[d] || (s->by_scales && s->scales[d] != 1)) {
            onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                      "resizing axis %d (of %lld, to %lld) is not supported: byocl resizes "
                      "the last two axes only (image.resize2d)",
                      d, (long long)in.dims[d], (long long)s->out[d]);
            return -1;
        }
    for (int d = 0; crops(s) && d < r - 2; d++)
        if (s->crop_start[d] != 0 || s->crop_end[d] != 1) {
            onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                      "input 1 ('%s') crops axis %d (from %g to %g; only 0 to 1 leaves it "
                      "whole): byocl crops the last two axes only (image.resize2d)",
                      cx->node->input[1], d, s->crop_start[d], s->crop_end[d]);
            return -1;
        }
    resize_spec view = *s;
    int64_t in4[4] = {1, 1, 1, in.dims[r - 1]};
    view.out[0] = view.out[1] = view.out[2] = 1;
    view.scales[2] = 1;
    view.out[3] = s->out[r - 1];
    view.scales[3] = s->scales[r - 1];
    view.crop_start[2] = 0; /* a rank-1 input's H of 1, whole */
    view.crop_end[2] = 1;
    view.crop_start[3] = s->crop_start[r - 1];
    view.crop_end[3] = s->crop_end[r - 1];
    for (int d = 0; d < r - 2; d++)
        in4[1] *= in.dims[d];
    view.out[1] = in4[1];
    if (r >= 2) {
        in4[2] = in.dims[r - 2];
        view.out[2] = s->out[r - 2];
        view.scales[2] = s->scales[r - 2];
        view.crop_start[2] = s->crop_start[r - 2];
        view.crop_end[2] = s->crop_end[r - 2];
    }
    byocl_attrs *a = resize_attrs(cx, &view, in4);
    if (!a)
        return -1;
    int y = onnx_call1(cx, "image.resize2d", onnx_reshape(cx, x, 4, in4), a);
    return onnx_reshape(cx, y, r, s->out);
}

/* ------------------------------------------------------------- Upsample */

int onnx_upsample_resize(onnx_ctx *cx, int x, const double *scales, const char *mode)
{
    const byocl_shape *in = &onnx_type(cx, x)->shape;
    resize_spec s = {.method = strcmp(mode, "linear") == 0 ? "linear" : "nearest_neighbor",
                     .coord = "asymmetric", .rounding = "floor", .cubic_a = -0.75,
                     .by_scales = true};
    for (int d = 0; d < in->rank; d++) {
        s.scales[d] = scales[d];
        s.out[d] = (int64_t)floor((double)in->dims[d] * scales[d]);
    }
    return build_resize(cx, x, &s);
}

/* ------------------------------------------------------------- Resize */

/* The index of v in set[0..n), or -1. */
static int index_in(const char *v, const char *const *set, int n)
{
    for (int k = 0; k < n; k++)
        if (strcmp(v, set[k]) == 0)
            return k;
    return -1;
}

/* ONNX's mode (into mode[32]), coordinate_transformation_mode, nearest_mode and cubic
 * attributes as resize2d's. */
static byocl_status read_modes(onnx_ctx *cx, char *mode, resize_spec *s)
{
    char coord[32], nearest[32];
    static const char *const onnx_modes[] = {"nearest", "linear", "cubic"};
    static const char *const methods[] = {"nearest_neighbor", "linear", "cubic"};
    static const char *const coords[] = {"half_pixel",         "align_corners",
                                         "asymmetric",         "pytorch_half_pixel",
                                         "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    static const char *const roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil"};
    TRY(onnx_attr_string(cx, "mode", "nearest", mode, 32));
    int n_modes = cx->opset < 11 ? 2 : 3; /* cubic from opset 11 */
    int m = index_in(mode, onnx_modes, n_modes);
    if (m < 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "attribute 'mode' value '%s' is not supported (expected %s)", mode,
                         n_modes == 2 ? "'nearest' or 'linear'"
                                      : "'nearest', 'linear' or 'cubic'");
    s->method = methods[m];
    if (cx->opset < 11) { /* Resize-10 is Upsample's arithmetic */
        s->coord = "asymmetric";
        s->rounding = "floor";
        s->cubic_a = -0.75;
        return BYOCL_OK;
    }
    TRY(onnx_attr_string(cx, "coordinate_transformation_mode", "half_pixel", coord,
                         sizeof coord));
    int c = index_in(coord, coords, 6);
    if (c < 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "attribute 'coordinate_transformation_mode' value '%s' is not "
                         "supported (expected 'half_pixel', 'align_corners', 'asymmetric', "
                         "'pytorch_half_pixel', 'tf_half_pixel_for_nn', 'tf_crop_and_resize')",
                         coord);
    s->coord = coords[c];
    TRY(onnx_attr_string(cx, "nearest_mode", "round_prefer_floor", nearest, sizeof nearest));
    int r = index_in(nearest, roundings, 4);
    if (r < 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "attribute 'nearest_mode' value '%s' is not supported (expected "
                         "'round_prefer_floor', 'round_prefer_ceil', 'floor' or 'ceil')",
                         nearest);
    s->rounding = roundings[r];
    int64_t exclude;
    TRY(onnx_attr_float(cx, "cubic_coeff_a", -0.75, &s->cubic_a));
    TRY(onnx_attr_int(cx, "exclude_outside", 0, &exclude));
    TRY(onnx_attr_float(cx, "extrapolation_value", 0, &s->extrapolation));
    s->exclude = exclude != 0;
    return BYOCL_OK;
}

/* The present, non-empty constant input k (scales or sizes), else NULL. */
static byocl_status optional_constant(onnx_ctx *cx, int k, const char *why,
                                      const byocl_tensor **out)
{
    *out = NULL;
    if (!onnx_has_input(cx->node, k))
        return BYOCL_OK;
    TRY(onnx_input_constant(cx, k, why, out));
    if (byocl_tensor_numel(*out) == 0)
        *out = NULL;
    return BYOCL_OK;
}

/* Opset 18's keep_aspect_ratio_policy on sizes: one scale for the axes given (the smallest
 * or largest of size / in), the sizes rounded from it. */
static byocl_status keep_aspect_ratio(onnx_ctx *cx, const byocl_shape *in, const bool *on,
                                      resize_spec *s)
{
    char policy[32];
    TRY(onnx_attr_string(cx, "keep_aspect_ratio_policy", "stretch", policy, sizeof policy));
    bool larger = strcmp(policy, "not_smaller") == 0;
    if (strcmp(policy, "stretch") == 0)
        return BYOCL_OK;
    if (!larger && strcmp(policy, "not_larger") != 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "attribute 'keep_aspect_ratio_policy' value '%s' is not supported "
                         "(expected 'stretch', 'not_larger' or 'not_smaller')",
                         policy);
    double scale = larger ? 0 : INFINITY;
    for (int d = 0; d < in->rank; d++)
        if (on[d]) {
            double r = (double)s->out[d] / (double)in->dims[d];
            scale = larger ? fmax(scale, r) : fmin(scale, r);
        }
    for (int d = 0; d < in->rank; d++)
        if (on[d]) {
            s->out[d] = (int64_t)round(scale * (double)in->dims[d]);
            s->scales[d] = scale;
        }
    s->by_scales = true;
    return BYOCL_OK;
}

/* The axes the scales or sizes are for (opset 18's axes; all of them before), marked in
 * on[]; *n the count. */
static byocl_status resize_axes(onnx_ctx *cx, int rank, bool *on, int *pos, int *n)
{
    int64_t axes[BYOCL_MAX_RANK];
    int n_axes = -1;
    if (cx->opset >= 18)
        TRY(onnx_attr_ints(cx, "axes", axes, BYOCL_MAX_RANK, &n_axes));
    *n = n_axes < 0 ? rank : n_axes;
    for (int d = 0; d < rank; d++)
        on[d] = n_axes < 0;
    for (int k = 0; k < *n; k++) {
        int d = k;
        if (n_axes >= 0) {
            TRY(onnx_axis(cx, axes[k], rank, "attribute 'axes'", &d));
            if (on[d])
                return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute 'axes' lists axis %d twice",
                                 d);
        }
        on[d] = true;
        pos[k] = d;
    }
    return BYOCL_OK;
}

/* tf_crop_and_resize's roi (input 1: the starts of the axes the scales or sizes are for,
 * then their ends) into s->crop_start and crop_end; an axis it does not name is whole. */
static byocl_status read_roi(onnx_ctx *cx, int rank, const int *pos, int n_axes, resize_spec *s)
{
    for (int d = 0; d < rank; d++) {
        s->crop_start[d] = 0;
        s->crop_end[d] = 1;
    }
    const byocl_tensor *roi;
    TRY(optional_constant(cx, 1, "the roi", &roi));
    if (!roi)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "coordinate_transformation_mode 'tf_crop_and_resize' needs the input "
                         "roi (input 1), which is %s",
                         onnx_has_input(cx->node, 1) ? "empty" : "not given");
    if (byocl_tensor_numel(roi) != 2 * n_axes)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "input 1 ('%s') has %lld values for %d axes (expected %d: the starts, "
                         "then the ends)",
                         cx->node->input[1], (long long)byocl_tensor_numel(roi), n_axes,
                         2 * n_axes);
    for (int k = 0; k < n_axes; k++) {
        double start = byocl_tensor_get(roi, k), end = byocl_tensor_get(roi, n_axes + k);
        if (!isfinite(start) || !isfinite(end))
            return onnx_fail(cx, BYOCL_ERR_INVALID,
                             "input 1 ('%s') gives axis %d the crop %g to %g (expected finite "
                             "numbers)",
                             cx->node->input[1], pos[k], start, end);
        s->crop_start[pos[k]] = start;
        s->crop_end[pos[k]] = end;
    }
    return BYOCL_OK;
}

byocl_status onnx_convert_resize(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    char mode[32];
    resize_spec s = {0};
    TRY(read_modes(cx, mode, &s));
    int x;
    TRY(onnx_input(cx, 0, &x));
    const byocl_shape in = onnx_type(cx, x)->shape;
    bool on[BYOCL_MAX_RANK];
    int pos[BYOCL_MAX_RANK], n_axes;
    TRY(resize_axes(cx, in.rank, on, pos, &n_axes));
    if (crops(&s))
        TRY(read_roi(cx, in.rank, pos, n_axes, &s));
    const byocl_tensor *scales, *sizes = NULL;
    TRY(optional_constant(cx, cx->opset < 11 ? 1 : 2, "the scales", &scales));
    if (cx->opset >= 11)
        TRY(optional_constant(cx, 3, "the sizes", &sizes));
    if (!scales == !sizes)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "%s: give exactly one of the inputs scales and sizes",
                         scales ? "both scales and sizes are given" : "neither scales nor "
                                                                       "sizes is given");
    const byocl_tensor *given = scales ? scales : sizes;
    if (byocl_tensor_numel(given) != n_axes)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "the %s have %lld values for %d axes",
                         scales ? "scales" : "sizes", (long long)byocl_tensor_numel(given),
                         n_axes);
    for (int d = 0; d < in.rank; d++) {
        s.scales[d] = 1;
        s.out[d] = in.dims[d];
    }
    s.by_scales = scales != NULL;
    for (int k = 0; k < n_axes; k++) {
        int d = pos[k];
        double v = byocl_tensor_get(given, k);
        if (!(v > 0) || (sizes && v != floor(v)))
            return onnx_fail(cx, BYOCL_ERR_INVALID, "the %s give %g for axis %d",
                             scales ? "scales" : "sizes", v, d);
        s.scales[d] = scales ? v : v / (double)in.dims[d];
        s.out[d] = scales ? (int64_t)floor(v * (double)in.dims[d]) : (int64_t)v;
    }
    if (sizes && cx->opset >= 18)
        TRY(keep_aspect_ratio(cx, &in, on, &s));
    int64_t antialias;
    TRY(onnx_attr_int(cx, "antialias", 0, &antialias));
    for (int d = 0; antialias && strcmp(mode, "nearest") != 0 && d < in.rank; d++)
        if (s.out[d] < in.dims[d])
            return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                             "attribute 'antialias' value 1 is not supported when %s mode "
                             "downsizes (axis %d)",
                             mode, d);
    TRY_ID(y, build_resize(cx, x, &s));
    return onnx_output(cx, 0, y);
}
