/* Op group "image": image.resize2d, with TVM Relay's attributes and ONNX Resize's
 * arithmetic (the coordinate transformations, nearest rounding modes and cubic
 * coefficients of the ONNX spec, opsets 11 to 18). ops_resize_plan computes, per spatial
 * axis, which input positions each output position reads and with which weights, and
 * (tf_crop_and_resize) which positions lie outside the input; the reference kernel and the
 * LLVM lowering (llvm/lower_image.c) both sum those taps in double, so they agree to the
 * bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "elemwise_util.h"
#include "image.h"

#define ARRAY_LEN(a) ((int)(sizeof a / sizeof a[0]))

static const char *const methods[] = {"nearest_neighbor", "linear", "cubic"};
static const char *const coord_modes[] = {"half_pixel",         "align_corners",
                                          "asymmetric",         "pytorch_half_pixel",
                                          "tf_half_pixel_for_nn", "tf_crop_and_resize"};
static const char *const roundings[] = {"",     "round", "round_prefer_floor", "round_prefer_ceil",
                                        "floor", "ceil"};

static bool one_of(const char *s, const char *const *set, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, set[i]) == 0)
            return true;
    return false;
}

static byocl_status bad_choice(const char *attr, const char *value, const char *expected,
                               byocl_error *err)
{
    return byocl_error_set(err, BYOCL_ERR_INVALID,
                           "bad value for attribute '%s' of image.resize2d: '%s' (expected %s)",
                           attr, value, expected);
}

static byocl_status check_scale(const byocl_attrs *attrs, const char *key, byocl_error *err)
{
    const byocl_attr *a = byocl_attrs_find(attrs, key);
    if (a && a->kind == BYOCL_ATTR_FLOAT && !(a->f > 0 && isfinite(a->f)))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute '%s' of image.resize2d: %g (expected a "
                               "positive number or None)",
                               key, a->f);
    return BYOCL_OK;
}

/* roi: four finite numbers, the crop of tf_crop_and_resize (other modes ignore it). */
static byocl_status check_roi(const byocl_attrs *attrs, byocl_error *err)
{
    const double *roi;
    int n = byocl_attrs_get_floats(attrs, "roi", &roi);
    if (n != 4)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "attribute 'roi' of image.resize2d has %d values; expected 4 "
                               "(start_h, start_w, end_h, end_w, as fractions of the input's "
                               "height and width)",
                               n);
    static const char *const names[] = {"start_h", "start_w", "end_h", "end_w"};
    for (int i = 0; i < 4; i++)
        if (!isfinite(roi[i]))
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "bad value for attribute 'roi' of image.resize2d: %s is %g "
                                   "(expected a finite number)",
                                   names[i], roi[i]);
    return BYOCL_OK;
}

static byocl_status check_resize_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    const int64_t *size;
    int n = byocl_attrs_get_ints(attrs, "size", &size);
    if (n != 2)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "attribute 'size' of image.resize2d has %d values; expected 2 "
                               "(the output height and width)",
                               n);
    for (int i = 0; i < 2; i++)
        if (size[i] < 1)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "bad value for attribute 'size' of image.resize2d: %s is %lld "
                                   "(expected at least 1)",
                                   i == 0 ? "the height" : "the width", (long long)size[i]);
    const char *layout = byocl_attrs_get_str(attrs, "layout", "NCHW");
    if (strcmp(layout, "NCHW") != 0)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "bad value for attribute 'layout' of image.resize2d: '%s' (byocl "
                               "supports \"NCHW\" only)",
                               layout);
    const char *method = byocl_attrs_get_str(attrs, "method", "linear");
    if (!one_of(method, methods, ARRAY_LEN(methods)))
        return bad_choice("method", method, "\"nearest_neighbor\", \"linear\" or \"cubic\"", err);
    const char *mode = byocl_attrs_get_str(attrs, "coordinate_transformation_mode", "");
    if (!one_of(mode, coord_modes, ARRAY_LEN(coord_modes)))
        return bad_choice("coordinate_transformation_mode", mode,
                          "\"half_pixel\", \"align_corners\", \"asymmetric\", "
                          "\"pytorch_half_pixel\", \"tf_half_pixel_for_nn\" or "
                          "\"tf_crop_and_resize\"",
                          err);
    byocl_status st = check_roi(attrs, err);
    if (st != BYOCL_OK)
        return st;
    const char *rounding = byocl_attrs_get_str(attrs, "rounding_method", "");
    if (!one_of(rounding, roundings, ARRAY_LEN(roundings)))
        return bad_choice("rounding_method", rounding,
                          "\"\", \"round\", \"round_prefer_floor\", \"round_prefer_ceil\", "
                          "\"floor\" or \"ceil\"",
                          err);
    int64_t exclude = byocl_attrs_get_int(attrs, "cubic_exclude", 0);
    if (exclude != 0 && exclude != 1)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'cubic_exclude' of image.resize2d: %lld "
                               "(expected 0 or 1)",
                               (long long)exclude);
    const char *out_dtype = byocl_attrs_get_str(attrs, "out_dtype", "");
    byocl_dtype d;
    if (*out_dtype && !byocl_dtype_from_name(out_dtype, &d))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'out_dtype' of image.resize2d: unknown "
                               "dtype '%s'",
                               out_dtype);
    st = check_scale(attrs, "scale_h", err);
    return st == BYOCL_OK ? check_scale(attrs, "scale_w", err) : st;
}

byocl_dtype ops_resize_dtype(const byocl_attrs *attrs, byocl_dtype in)
{
    byocl_dtype d = in;
    const char *name = byocl_attrs_get_str(attrs, "out_dtype", "");
    if (*name)
        byocl_dtype_from_name(name, &d);
    return d;
}

static bool method_is(const byocl_attrs *attrs, const char *method)
{
    return strcmp(byocl_attrs_get_str(attrs, "method", "linear"), method) == 0;
}

static byocl_status infer_resize(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *in;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    if (st != BYOCL_OK)
        return st;
    char buf[160];
    if (in->shape.rank != 4)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "image.resize2d: the input has rank %d; expected 4 (NCHW)",
                               in->shape.rank);
    if (in->shape.dims[2] == 0 || in->shape.dims[3] == 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "image.resize2d: the input %s has no rows or no columns to "
                               "resize",
                               byocl_shape_str(&in->shape, buf, sizeof buf));
    if (!method_is(ctx->attrs, "nearest_neighbor") && !byocl_dtype_is_float(in->dtype))
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "image.resize2d: method '%s' needs a float input, got %s",
                               byocl_attrs_get_str(ctx->attrs, "method", ""),
                               byocl_dtype_name(in->dtype));
    const int64_t *size;
    byocl_attrs_get_ints(ctx->attrs, "size", &size);
    int64_t dims[4] = {in->shape.dims[0], in->shape.dims[1], size[0], size[1]};
    *out = byocl_type_tensor(ops_resize_dtype(ctx->attrs, in->dtype), 4, dims);
    return BYOCL_OK;
}

/* ------------------------------------------------------------- the plan */

/* The input coordinate of output position x, by ONNX's coordinate transformation: scale
 * is the output/input ratio ONNX divides by, length the output length it implies
 * (scale * in, not rounded); crop the roi's start and end on this axis. */
static double source_coord(const char *mode, double x, double scale, double length, int64_t in,
                           const double *crop)
{
    if (strcmp(mode, "align_corners") == 0)
        return length == 1 ? 0 : x * (double)(in - 1) / (length - 1);
    if (strcmp(mode, "tf_crop_and_resize") == 0) /* in ONNX's order of operations */
        return (length == 1 ? (crop[1] - crop[0]) * (double)(in - 1) / 2
                            : x * (crop[1] - crop[0]) * (double)(in - 1) / (length - 1)) +
               crop[0] * (double)(in - 1);
    if (strcmp(mode, "asymmetric") == 0)
        return x / scale;
    if (strcmp(mode, "pytorch_half_pixel") == 0)
        return length > 1 ? (x + 0.5) / scale - 0.5 : 0;
    if (strcmp(mode, "tf_half_pixel_for_nn") == 0)
        return (x + 0.5) / scale;
    return (x + 0.5) / scale - 0.5; /* half_pixel */
}

/* Nearest's rounding of a coordinate; a whole number stays as it is. "" is TVM's
 * default: round with align_corners, else floor. */
static double round_coord(const char *how, const char *mode, double v)
{
    if (v == floor(v))
        return v;
    if (!*how)
        how = strcmp(mode, "align_corners") == 0 ? "round" : "floor";
    if (strcmp(how, "round") == 0)
        return round(v);
    if (strcmp(how, "round_prefer_floor") == 0)
        return ceil(v - 0.5);
    if (strcmp(how, "round_prefer_ceil") == 0)
        return floor(v + 0.5);
    return strcmp(how, "ceil") == 0 ? ceil(v) : floor(v);
}

/* Keys's cubic convolution weights of the taps at floor - 1 ... floor + 2 for a
 * coordinate `r` past the floor (ONNX's formulas, coefficient a). */
static void cubic_weights(double r, double a, double *w)
{
    double s = r + 1, t = 1 - r, u = 2 - r;
    w[0] = ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
    w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    w[2] = ((a + 2) * t - (a + 3)) * t * t + 1;
    w[3] = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a;
}

static int64_t clamp_index(int64_t i, int64_t in) { return i < 0 ? 0 : i >= in ? in - 1 : i; }

byocl_status ops_resize_plan(const byocl_attrs *attrs, int axis, int64_t in,
                             ops_resize_axis *plan, byocl_error *err)
{
    const int64_t *size;
    byocl_attrs_get_ints(attrs, "size", &size);
    const char *mode = byocl_attrs_get_str(attrs, "coordinate_transformation_mode", "");
    const char *how = byocl_attrs_get_str(attrs, "rounding_method", "");
    double a = byocl_attrs_get_float(attrs, "cubic_alpha", -0.5);
    bool exclude = byocl_attrs_get_int(attrs, "cubic_exclude", 0) != 0;
    int64_t out = size[axis];
    const double *roi;
    byocl_attrs_get_floats(attrs, "roi", &roi);
    const double crop[2] = {roi[axis], roi[axis + 2]};
    bool crops = strcmp(mode, "tf_crop_and_resize") == 0;
    double scale = byocl_attrs_get_float(attrs, axis == 0 ? "scale_h" : "scale_w", 0);
    double length = scale > 0 ? scale * (double)in : (double)out;
    if (!(scale > 0))
        scale = (double)out / (double)in;
    plan->out = out;
    plan->taps = method_is(attrs, "nearest_neighbor") ? 1 : method_is(attrs, "linear") ? 2 : 4;
    plan->index = malloc(sizeof *plan->index * (size_t)(out * plan->taps));
    plan->weight = malloc(sizeof *plan->weight * (size_t)(out * plan->taps));
    plan->outside = crops ? calloc((size_t)out, sizeof *plan->outside) : NULL;
    if (!plan->index || !plan->weight || (crops && !plan->outside)) {
        ops_resize_axis_free(plan);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    for (int64_t x = 0; x < out; x++) {
        double c = source_coord(mode, (double)x, scale, length, in, crop);
        int64_t *idx = plan->index + x * plan->taps;
        double *w = plan->weight + x * plan->taps;
        if (crops && (c < 0 || c > (double)(in - 1))) {
            plan->outside[x] = 1;
            for (int t = 0; t < plan->taps; t++) {
                idx[t] = 0;
                w[t] = 0;
            }
            continue;
        }
        if (plan->taps == 1) {
            idx[0] = clamp_index((int64_t)round_coord(how, mode, c), in);
            w[0] = 1;
            continue;
        }
        double f = floor(c), r = c - f;
        int64_t first = (int64_t)f - (plan->taps == 4);
        if (plan->taps == 2) {
            w[0] = 1 - r;
            w[1] = r;
        } else {
            cubic_weights(r, a, w);
        }
        double sum = 0;
        for (int t = 0; t < plan->taps; t++) {
            int64_t i = first + t;
            if (exclude && plan->taps == 4 && (i < 0 || i >= in))
                w[t] = 0;
            sum += w[t];
            idx[t] = clamp_index(i, in);
        }
        for (int t = 0; exclude && plan->taps == 4 && t < plan->taps; t++)
            w[t] /= sum;
    }
    return BYOCL_OK;
}

void ops_resize_axis_free(ops_resize_axis *plan)
{
    free(plan->index);
    free(plan->weight);
    free(plan->outside);
    plan->index = NULL;
    plan->weight = NULL;
    plan->outside = NULL;
}

/* Each output element as the weighted sum of its taps in double (nearest: the element
 * itself, converted to the output dtype as a cast would, integers without a detour
 * through double), or extrapolation_value where the plan says so. */
static byocl_status resize_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, int n_in,
                               byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = elemwise_check_arity("image.resize2d", n_in, 1, n_out, 1, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_shape *s = byocl_tensor_shape(in[0]);
    ops_resize_axis py = {0}, px = {0};
    st = ops_resize_plan(attrs, 0, s->dims[2], &py, err);
    if (st == BYOCL_OK)
        st = ops_resize_plan(attrs, 1, s->dims[3], &px, err);
    if (st != BYOCL_OK) {
        ops_resize_axis_free(&py);
        return st;
    }
    int64_t planes = s->dims[0] * s->dims[1], h = s->dims[2], w = s->dims[3];
    bool int_copy = py.taps == 1 && !byocl_dtype_is_float(byocl_tensor_dtype(in[0])) &&
                    !byocl_dtype_is_float(byocl_tensor_dtype(out[0]));
    double fill = byocl_attrs_get_float(attrs, "extrapolation_value", 0);
    int64_t at = 0;
    for (int64_t p = 0; p < planes; p++)
        for (int64_t y = 0; y < py.out; y++)
            for (int64_t x = 0; x < px.out; x++, at++) {
                double acc = 0;
                for (int t = 0; t < py.taps; t++) {
                    int64_t row = (p * h + py.index[y * py.taps + t]) * w;
                    double line = 0;
                    for (int u = 0; u < px.taps; u++)
                        line += px.weight[x * px.taps + u] *
                                byocl_tensor_get(in[0], row + px.index[x * px.taps + u]);
                    acc += py.weight[y * py.taps + t] * line;
                }
                if (ops_resize_outside(&py, y) || ops_resize_outside(&px, x))
                    byocl_tensor_set(out[0], at, fill);
                else if (int_copy) /* nearest between integers: every bit of an int64 kept */
                    elemwise_store_int(out[0], at,
                                       elemwise_load_int(in[0], (p * h + py.index[y]) * w +
                                                                    px.index[x]));
                else
                    byocl_tensor_set(out[0], at, acc);
            }
    ops_resize_axis_free(&py);
    ops_resize_axis_free(&px);
    return BYOCL_OK;
}

/* ------------------------------------------------------------- the table */

static const byocl_attr_schema resize2d_attrs[] = {
    {.name = "size", .kind = BYOCL_ATTR_INTS, .required = true,
     .doc = "the output height and width"},
    {.name = "roi", .kind = BYOCL_ATTR_FLOATS, .def_n = 4, .def_floats = {0, 0, 0, 0},
     .doc = "tf_crop_and_resize's region of interest [start_h, start_w, end_h, end_w], as "
            "fractions of the input's height and width (ignored by the other modes)"},
    {.name = "layout", .kind = BYOCL_ATTR_STR, .def_s = "NCHW",
     .doc = "\"NCHW\" (the only layout byocl supports)"},
    {.name = "method", .kind = BYOCL_ATTR_STR, .def_s = "linear",
     .doc = "\"nearest_neighbor\", \"linear\" (bilinear) or \"cubic\" (bicubic)"},
    {.name = "coordinate_transformation_mode", .kind = BYOCL_ATTR_STR, .def_s = "half_pixel",
     .doc = "how an output coordinate maps to the input: \"half_pixel\", \"align_corners\", "
            "\"asymmetric\", \"pytorch_half_pixel\", \"tf_half_pixel_for_nn\", "
            "\"tf_crop_and_resize\" (ONNX's formulas; the last crops to `roi`)"},
    {.name = "rounding_method", .kind = BYOCL_ATTR_STR, .def_s = "",
     .doc = "nearest_neighbor's rounding: \"round\" (half away from zero), "
            "\"round_prefer_floor\", \"round_prefer_ceil\", \"floor\", \"ceil\"; \"\": round "
            "with align_corners, else floor"},
    {.name = "cubic_alpha", .kind = BYOCL_ATTR_FLOAT, .def_f = -0.5,
     .doc = "the cubic kernel's coefficient a (ONNX's cubic_coeff_a)"},
    {.name = "cubic_exclude", .kind = BYOCL_ATTR_INT, .def_i = 0,
     .doc = "1: cubic taps outside the input get weight 0 and the others are renormalized"},
    {.name = "extrapolation_value", .kind = BYOCL_ATTR_FLOAT, .def_f = 0,
     .doc = "tf_crop_and_resize's value where a row or column falls outside the input"},
    {.name = "out_dtype", .kind = BYOCL_ATTR_STR, .def_s = "",
     .doc = "result dtype; \"\": the input's"},
    {.name = "scale_h", .kind = BYOCL_ATTR_FLOAT, .nullable = true, .def_null = true,
     .doc = "byocl's (not TVM's): the height ratio the coordinates divide by, when it is not "
            "size[0] / height (ONNX Resize's scales); None: that ratio"},
    {.name = "scale_w", .kind = BYOCL_ATTR_FLOAT, .nullable = true, .def_null = true,
     .doc = "as scale_h, for the width"},
};

const byocl_op ops_image[] = {
    {.name = "image.resize2d", .min_args = 1, .max_args = 1, .attrs = resize2d_attrs,
     .n_attrs = ARRAY_LEN(resize2d_attrs),
     .doc = "resizes the H and W axes of an NCHW tensor to `size` (nearest, bilinear or "
            "bicubic; ONNX Resize's coordinate transformations)",
     .check_attrs = check_resize_attrs, .infer = infer_resize, .ref = resize_ref},
};
const int ops_image_count = ARRAY_LEN(ops_image);
