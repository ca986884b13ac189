/* Private helpers of the conv, pool and nn op groups; see nn_util.h. */
#include "nn_util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Window attributes beyond this are rejected, which keeps every product of an attribute
 * and a dimension inside int64. */
#define NN_ATTR_MAX INT32_MAX
/* Spatial dimensions beyond this are rejected by the window arithmetic (same reason). */
#define NN_DIM_MAX (INT64_MAX >> 2)

/* ------------------------------------------------------------- attributes */

static char *ints_str(const int64_t *v, int n, char *buf, size_t len)
{
    byocl_attr a = {.kind = BYOCL_ATTR_INTS, .n = n, .ints = v};
    return byocl_attr_value_str(&a, buf, len);
}

/* Reads INTS/INT `key` into out[]; its count must be one of allowed[0..n_allowed). */
static byocl_status read_ints(const byocl_attrs *attrs, const char *key, const int *allowed,
                              int n_allowed, const char *allowed_text, int64_t *out, int *n_out,
                              byocl_error *err)
{
    const int64_t *v = NULL;
    int n = byocl_attrs_get_ints(attrs, key, &v);
    if (n < 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s must be a list of %s integers", key,
                               allowed_text);
    bool ok = false;
    for (int k = 0; k < n_allowed; k++)
        ok = ok || n == allowed[k];
    if (!ok)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s must have %s values, got %d", key,
                               allowed_text, n);
    for (int k = 0; k < n; k++) {
        if (v[k] > NN_ATTR_MAX || v[k] < -NN_ATTR_MAX) {
            char buf[160];
            return byocl_error_set(err, BYOCL_ERR_INVALID, "%s value out of range in %s", key,
                                   ints_str(v, n, buf, sizeof buf));
        }
        out[k] = v[k];
    }
    *n_out = n;
    return BYOCL_OK;
}

/* `spatial` values >= `min` (1: "positive", 0: "not negative") from INTS/INT `key`; one
 * value serves every dimension. */
static byocl_status read_spatial(const byocl_attrs *attrs, const char *key, int spatial,
                                 int64_t min, int64_t *out, byocl_error *err)
{
    const int allowed[] = {1, spatial};
    const char *allowed_text = spatial == 3 ? "1 or 3" : "1 or 2";
    int64_t v[NN_MAX_SPATIAL];
    int n = 0;
    byocl_status st = read_ints(attrs, key, allowed, 2, allowed_text, v, &n, err);
    if (st != BYOCL_OK)
        return st;
    for (int d = 0; d < spatial; d++) {
        out[d] = n == spatial ? v[d] : v[0];
        if (out[d] < min) {
            char buf[160];
            return byocl_error_set(err, BYOCL_ERR_INVALID, "%s must %s, got %s", key,
                                   min > 0 ? "be positive" : "not be negative",
                                   ints_str(v, n, buf, sizeof buf));
        }
    }
    return BYOCL_OK;
}

byocl_status nn_attr_spatial(const byocl_attrs *attrs, const char *key, int spatial,
                             int64_t *out, byocl_error *err)
{
    return read_spatial(attrs, key, spatial, 1, out, err);
}

byocl_status nn_attr_spatial_nonnegative(const byocl_attrs *attrs, const char *key, int spatial,
                                         int64_t *out, byocl_error *err)
{
    return read_spatial(attrs, key, spatial, 0, out, err);
}

byocl_status nn_attr_padding(const byocl_attrs *attrs, int spatial, int64_t *out,
                             byocl_error *err)
{
    const int allowed[] = {1, spatial, 2 * spatial};
    const char *allowed_text = spatial == 3 ? "1, 3 or 6" : "1, 2 or 4";
    int64_t v[2 * NN_MAX_SPATIAL];
    int n = 0;
    byocl_status st = read_ints(attrs, "padding", allowed, 3, allowed_text, v, &n, err);
    if (st != BYOCL_OK)
        return st;
    for (int k = 0; k < n; k++) {
        if (v[k] < 0) {
            char buf[160];
            return byocl_error_set(err, BYOCL_ERR_INVALID, "padding must not be negative, got %s",
                                   ints_str(v, n, buf, sizeof buf));
        }
    }
    /* TVM's order: all befores, then all afters ((top, left, bottom, right) in 2-D); one
     * value per dimension serves both its sides. */
    for (int k = 0; k < 2 * spatial; k++)
        out[k] = n == 1 ? v[0] : n == spatial ? v[k % spatial] : v[k];
    return BYOCL_OK;
}

byocl_status nn_attr_store_ints(byocl_module *m, byocl_attrs *attrs, const char *key,
                                const int64_t *values, int n, byocl_error *err)
{
    for (int k = 0; k < attrs->n; k++) {
        byocl_attr *a = &attrs->items[k];
        if (strcmp(a->key, key) != 0)
            continue;
        int64_t *copy = ir_arena_memdup(&m->arena, values, (size_t)n * sizeof *values);
        if (!copy)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory storing %s", key);
        a->kind = BYOCL_ATTR_INTS;
        a->n = n;
        a->ints = copy;
        a->i = 0;
        return BYOCL_OK;
    }
    byocl_status st = byocl_attrs_set_ints(m, attrs, key, values, n);
    if (st != BYOCL_OK)
        return byocl_error_set(err, st, "cannot store attribute %s", key);
    return BYOCL_OK;
}

byocl_status nn_attr_layout(const byocl_attrs *attrs, const char *key, const char *want,
                            bool allow_empty, byocl_error *err)
{
    const char *s = byocl_attrs_get_str(attrs, key, NULL);
    if (!s)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s must be a string", key);
    if ((allow_empty && s[0] == '\0') || strcmp(s, want) == 0)
        return BYOCL_OK;
    return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                           "%s \"%s\" is not supported: byocl handles %s only", key, s, want);
}

byocl_status nn_attr_out_dtype(const byocl_attrs *attrs, byocl_dtype fallback,
                               byocl_dtype *out, byocl_error *err)
{
    const char *s = byocl_attrs_get_str(attrs, "out_dtype", "");
    if (s[0] == '\0') {
        *out = fallback;
        return BYOCL_OK;
    }
    if (!byocl_dtype_from_name(s, out))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "out_dtype \"%s\" is not a dtype", s);
    return BYOCL_OK;
}

byocl_status nn_attr_optional_positive(const byocl_attrs *attrs, const char *key,
                                       bool *given, int64_t *value, byocl_error *err)
{
    const byocl_attr *a = byocl_attrs_find(attrs, key);
    *given = false;
    *value = 0;
    if (!a || a->kind == BYOCL_ATTR_NULL)
        return BYOCL_OK;
    if (a->kind != BYOCL_ATTR_INT)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s must be an integer or None", key);
    if (a->i < 1)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s must be positive, got %lld", key,
                               (long long)a->i);
    *given = true;
    *value = a->i;
    return BYOCL_OK;
}

const char *nn_data_layout(int spatial)
{
    return spatial == 3 ? "NCDHW" : "NCHW";
}

byocl_status nn_attr_data_layouts(const byocl_attrs *attrs, const char *layout_key, int spatial,
                                  byocl_error *err)
{
    const char *want = nn_data_layout(spatial);
    byocl_status st = nn_attr_layout(attrs, layout_key, want, false, err);
    if (st == BYOCL_OK)
        st = nn_attr_layout(attrs, "out_layout", want, true, err);
    return st;
}

/* --------------------------------------------------------- sliding windows */

static bool attr_is_null(const byocl_attrs *attrs, const char *key)
{
    const byocl_attr *a = byocl_attrs_find(attrs, key);
    return !a || a->kind == BYOCL_ATTR_NULL;
}

byocl_status nn_window_read(const byocl_attrs *attrs, const char *kernel_key, int spatial,
                            nn_window *w, byocl_error *err)
{
    memset(w, 0, sizeof *w);
    w->spatial = spatial;
    byocl_status st = nn_attr_spatial(attrs, "strides", spatial, w->stride, err);
    if (st == BYOCL_OK)
        st = nn_attr_spatial(attrs, "dilation", spatial, w->dilation, err);
    if (st == BYOCL_OK)
        st = nn_attr_padding(attrs, spatial, w->pad, err);
    if (st == BYOCL_OK && kernel_key && !attr_is_null(attrs, kernel_key))
        st = nn_attr_spatial(attrs, kernel_key, spatial, w->kernel, err);
    w->ceil_mode = byocl_attrs_get_bool(attrs, "ceil_mode", false);
    return st;
}

byocl_status nn_window_check(byocl_module *m, byocl_attrs *attrs, const char *kernel_key,
                             const char *layout_key, int spatial, byocl_error *err)
{
    nn_window w;
    byocl_status st = nn_window_read(attrs, kernel_key, spatial, &w, err);
    if (st == BYOCL_OK)
        st = nn_attr_store_ints(m, attrs, "strides", w.stride, spatial, err);
    if (st == BYOCL_OK)
        st = nn_attr_store_ints(m, attrs, "dilation", w.dilation, spatial, err);
    if (st == BYOCL_OK)
        st = nn_attr_store_ints(m, attrs, "padding", w.pad, 2 * spatial, err);
    if (st == BYOCL_OK && kernel_key && !attr_is_null(attrs, kernel_key))
        st = nn_attr_store_ints(m, attrs, kernel_key, w.kernel, spatial, err);
    if (st == BYOCL_OK)
        st = nn_attr_data_layouts(attrs, layout_key, spatial, err);
    return st;
}

/* Names of spatial dimension d of a window (depth only in 3-D) and of its padding sides. */
static const char *dim_name(const nn_window *w, int d)
{
    static const char *const names[3] = {"depth", "height", "width"};
    return names[d + 3 - w->spatial];
}

static const char *before_name(const nn_window *w, int d)
{
    static const char *const names[3] = {"front", "top", "left"};
    return names[d + 3 - w->spatial];
}

static const char *after_name(const nn_window *w, int d)
{
    static const char *const names[3] = {"back", "bottom", "right"};
    return names[d + 3 - w->spatial];
}

byocl_status nn_window_out_size(const nn_window *w, const int64_t *in_sp,
                                const char *kernel_name, int64_t *out_sp, byocl_error *err)
{
    for (int d = 0; d < w->spatial; d++) {
        int64_t in = in_sp[d], before = w->pad[d], after = w->pad[d + w->spatial];
        int64_t stride = w->stride[d];
        if (in > NN_DIM_MAX)
            return byocl_error_set(err, BYOCL_ERR_TYPE, "data %s %lld is too large",
                                   dim_name(w, d), (long long)in);
        if (w->kernel[d] < 1 || w->kernel[d] - 1 > NN_DIM_MAX / w->dilation[d])
            return byocl_error_set(err, BYOCL_ERR_TYPE, "%s %s %lld is out of range",
                                   kernel_name, dim_name(w, d), (long long)w->kernel[d]);
        int64_t dilated = w->dilation[d] * (w->kernel[d] - 1) + 1;
        int64_t span = in + before + after;
        if (span < dilated)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "data %s %lld with padding (%s %lld, %s %lld) is smaller than "
                                   "the dilated %s %s %lld",
                                   dim_name(w, d), (long long)in, before_name(w, d),
                                   (long long)before, after_name(w, d), (long long)after,
                                   kernel_name, dim_name(w, d), (long long)dilated);
        int64_t out;
        if (w->ceil_mode) {
            out = (span - dilated + stride - 1) / stride + 1;
            /* The last window must start inside the input or the top/left padding, not
             * wholly in the bottom/right padding (PyTorch's and ONNX's rule). */
            if ((out - 1) * stride >= in + before)
                out--;
        } else {
            out = (span - dilated) / stride + 1;
        }
        out_sp[d] = out;
    }
    return BYOCL_OK;
}

byocl_status nn_window_transposed_size(const nn_window *w, const int64_t *in_sp,
                                       const int64_t *out_pad, int64_t *out_sp,
                                       byocl_error *err)
{
    for (int d = 0; d < w->spatial; d++) {
        int64_t in = in_sp[d];
        if (in < 1)
            return byocl_error_set(err, BYOCL_ERR_TYPE, "data %s %lld is empty", dim_name(w, d),
                                   (long long)in);
        if (in > NN_DIM_MAX / w->stride[d])
            return byocl_error_set(err, BYOCL_ERR_TYPE, "data %s %lld is too large",
                                   dim_name(w, d), (long long)in);
        if (w->kernel[d] < 1 || w->kernel[d] - 1 > NN_DIM_MAX / w->dilation[d])
            return byocl_error_set(err, BYOCL_ERR_TYPE, "kernel %s %lld is out of range",
                                   dim_name(w, d), (long long)w->kernel[d]);
        /* Every input cell spreads the dilated kernel from cell * stride; the padding
         * crops that full result, output_padding extends it at the bottom/right. */
        int64_t dilated = w->dilation[d] * (w->kernel[d] - 1) + 1;
        int64_t full = (in - 1) * w->stride[d] + dilated;
        int64_t before = w->pad[d], after = w->pad[d + w->spatial];
        int64_t out = full - before - after + out_pad[d];
        if (out < 1)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "output %s %lld is not positive: data %s %lld gives %lld, "
                                   "padding (%lld, %lld) crops it, output_padding adds %lld",
                                   dim_name(w, d), (long long)out, dim_name(w, d), (long long)in,
                                   (long long)full, (long long)before, (long long)after,
                                   (long long)out_pad[d]);
        out_sp[d] = out;
    }
    return BYOCL_OK;
}

void nn_valid_range(int64_t out_len, int64_t in_len, int64_t stride, int64_t offset,
                    int64_t *lo, int64_t *hi)
{
    int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
    int64_t last_room = in_len - 1 - offset; /* o * stride may not exceed this */
    int64_t end = last_room < 0 ? 0 : last_room / stride + 1;
    if (end > out_len)
        end = out_len;
    if (end < first)
        end = first;
    *lo = first;
    *hi = end;
}

byocl_status nn_shape_rank(const byocl_shape *shape, int rank, const char *what,
                           const char *layout, byocl_error *err)
{
    if (shape->rank == rank)
        return BYOCL_OK;
    char buf[160];
    return byocl_error_set(err, BYOCL_ERR_TYPE, "%s must be %d-D (%s), got shape %s", what, rank,
                           layout, byocl_shape_str(shape, buf, sizeof buf));
}

byocl_status nn_slide_read(const byocl_attrs *attrs, const char *kernel_key, int spatial,
                           const byocl_shape *data, nn_slide *s, byocl_error *err)
{
    byocl_status st = nn_shape_rank(data, spatial + 2, "data", nn_data_layout(spatial), err);
    if (st == BYOCL_OK)
        st = nn_window_read(attrs, kernel_key, spatial, &s->win, err);
    if (st != BYOCL_OK)
        return st;
    s->batch = data->dims[0];
    s->channels = data->dims[1];
    for (int d = 0; d < spatial; d++) {
        s->in_hw[d] = data->dims[d + 2];
        s->out_hw[d] = 0;
    }
    return BYOCL_OK;
}

byocl_shape nn_slide_out_shape(const nn_slide *s, int64_t channels)
{
    int64_t dims[2 + NN_MAX_SPATIAL] = {s->batch, channels};
    for (int d = 0; d < s->win.spatial; d++)
        dims[d + 2] = s->out_hw[d];
    return byocl_shape_make(2 + s->win.spatial, dims);
}

nn_slide nn_slide_3d(const nn_slide *s)
{
    if (s->win.spatial == 3)
        return *s;
    const nn_window *w = &s->win;
    return (nn_slide){
        .win = {.spatial = 3,
                .kernel = {1, w->kernel[0], w->kernel[1]},
                .stride = {1, w->stride[0], w->stride[1]},
                .dilation = {1, w->dilation[0], w->dilation[1]},
                .pad = {0, w->pad[0], w->pad[1], 0, w->pad[2], w->pad[3]},
                .ceil_mode = w->ceil_mode},
        .batch = s->batch,
        .channels = s->channels,
        .in_hw = {1, s->in_hw[0], s->in_hw[1]},
        .out_hw = {1, s->out_hw[0], s->out_hw[1]},
    };
}

/* ---------------------------------------------------------- type relations */

byocl_status nn_tensor_arg(const byocl_infer_ctx *ctx, int k, const char *what, int rank,
                           const char *layout_hint, const byocl_type **out, byocl_error *err)
{
    const byocl_type *t = ops_infer_tensor_arg(ctx, k, err);
    if (!t)
        return err && err->status != BYOCL_OK ? err->status : BYOCL_ERR_TYPE;
    if (rank >= 0 && t->shape.rank != rank) {
        char buf[256];
        return byocl_error_set(err, BYOCL_ERR_TYPE, "%s must be a %d-D tensor%s%s%s, got %s",
                               what, rank, layout_hint ? " (" : "",
                               layout_hint ? layout_hint : "", layout_hint ? ")" : "",
                               byocl_type_str(t, buf, sizeof buf));
    }
    *out = t;
    return BYOCL_OK;
}

byocl_status nn_same_dtype(const byocl_type *t, const char *what, const byocl_type *data,
                           byocl_error *err)
{
    if (t->dtype == data->dtype)
        return BYOCL_OK;
    return byocl_error_set(err, BYOCL_ERR_TYPE, "%s dtype %s does not match data dtype %s", what,
                           byocl_dtype_name(t->dtype), byocl_dtype_name(data->dtype));
}

byocl_status nn_axis(int64_t axis, int rank, int *out, byocl_error *err)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "axis %lld is out of range for a %d-D tensor",
                               (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return BYOCL_OK;
}

byocl_status nn_channel_vector(const byocl_infer_ctx *ctx, int k, const char *what,
                               const byocl_type *data, int axis, byocl_error *err)
{
    const byocl_type *t = NULL;
    byocl_status st = nn_tensor_arg(ctx, k, what, -1, NULL, &t, err);
    if (st != BYOCL_OK)
        return st;
    int64_t want = data->shape.dims[axis];
    if (t->shape.rank != 1 || t->shape.dims[0] != want) {
        char buf[256];
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "%s must have shape (%lld) to match data axis %d, got %s", what,
                               (long long)want, axis, byocl_type_str(t, buf, sizeof buf));
    }
    return nn_same_dtype(t, what, data, err);
}

/* --------------------------------------------------------- kernel plumbing */

byocl_status nn_ref_args(const char *op, const byocl_tensor *const *in, int n_in, int want_in,
                         byocl_tensor *const *out, int n_out, int want_out, byocl_error *err)
{
    if (n_in != want_in || n_out != want_out)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s kernel takes %d inputs and %d outputs, got %d and %d", op,
                               want_in, want_out, n_in, n_out);
    for (int k = 0; k < n_in; k++)
        if (!in[k])
            return byocl_error_set(err, BYOCL_ERR_INVALID, "%s kernel: input %d is NULL", op, k);
    for (int k = 0; k < n_out; k++)
        if (!out[k])
            return byocl_error_set(err, BYOCL_ERR_INVALID, "%s kernel: output %d is NULL", op, k);
    return BYOCL_OK;
}

byocl_status nn_ref_out_shape(const char *op, const byocl_tensor *out, const byocl_shape *want,
                              byocl_error *err)
{
    const byocl_shape *got = byocl_tensor_shape(out);
    if (byocl_shape_equal(got, want))
        return BYOCL_OK;
    char a[160], b[160];
    return byocl_error_set(err, BYOCL_ERR_INVALID, "%s kernel: output has shape %s, expected %s",
                           op, byocl_shape_str(got, a, sizeof a), byocl_shape_str(want, b, sizeof b));
}

double *nn_to_doubles(const byocl_tensor *t, byocl_error *err)
{
    int64_t n = byocl_tensor_numel(t);
    double *v = malloc(n > 0 ? (size_t)n * sizeof *v : 1);
    if (!v) {
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory converting %lld elements",
                        (long long)n);
        return NULL;
    }
    if (byocl_tensor_dtype(t) == BYOCL_FLOAT32) { /* the common case, without a call each */
        const float *p = byocl_tensor_cdata(t);
        for (int64_t i = 0; i < n; i++)
            v[i] = p[i];
    } else {
        for (int64_t i = 0; i < n; i++)
            v[i] = byocl_tensor_get(t, i);
    }
    return v;
}

void nn_store_doubles(byocl_tensor *t, const double *v)
{
    int64_t n = byocl_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        byocl_tensor_set(t, i, v[i]);
}

double nn_dtype_lowest(byocl_dtype dtype)
{
    switch (dtype) {
    case BYOCL_FLOAT32:
    case BYOCL_FLOAT16:
    case BYOCL_BFLOAT16:
    case BYOCL_FLOAT64: return -INFINITY;
    case BYOCL_INT32: return (double)INT32_MIN;
    case BYOCL_INT64: return (double)INT64_MIN;
    case BYOCL_INT8: return (double)INT8_MIN;
    case BYOCL_INT16: return (double)INT16_MIN;
    default: return 0.0; /* unsigned, bool */
    }
}
