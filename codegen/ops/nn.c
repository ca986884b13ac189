/* Op group "nn": nn.dense, nn.batch_matmul, nn.batch_norm, nn.layer_norm, nn.bias_add, nn.relu,
 * nn.leaky_relu, nn.softmax, nn.log_softmax and nn.batch_flatten. */
#include <math.h>
#include <stdlib.h>

#include "matmul.h"
#include "nn_util.h"

#define N_ITEMS(a) ((int)(sizeof a / sizeof a[0]))

/* ------------------------------------------------------------------ shared */

/* A tensor seen along one axis: `outer` blocks of `len` slices of `inner` elements;
 * element (o, c, i) sits at (o * len + c) * inner + i. Only for shapes of real tensors
 * (their element count fits int64). */
typedef struct axis_view {
    int axis;
    int64_t outer, len, inner;
} axis_view;

static byocl_status axis_view_of(const byocl_shape *s, int64_t axis, axis_view *v,
                                 byocl_error *err)
{
    byocl_status st = nn_axis(axis, s->rank, &v->axis, err);
    if (st != BYOCL_OK)
        return st;
    v->outer = v->inner = 1;
    for (int d = 0; d < v->axis; d++)
        v->outer *= s->dims[d];
    for (int d = v->axis + 1; d < s->rank; d++)
        v->inner *= s->dims[d];
    v->len = s->dims[v->axis];
    return BYOCL_OK;
}

/* Argument 0 as a tensor and its `axis` attribute (default `default_axis`) normalized. */
static byocl_status data_and_axis(const byocl_infer_ctx *ctx, int64_t default_axis,
                                  const byocl_type **data, int *axis, byocl_error *err)
{
    byocl_status st = nn_tensor_arg(ctx, 0, "data", -1, NULL, data, err);
    if (st == BYOCL_OK)
        st = nn_axis(byocl_attrs_get_int(ctx->attrs, "axis", default_axis), (*data)->shape.rank,
                     axis, err);
    return st;
}

/* Element i of src becomes element i of dst, whatever their shapes. */
static void copy_values(const byocl_tensor *src, byocl_tensor *dst)
{
    int64_t n = byocl_tensor_numel(src);
    for (int64_t i = 0; i < n; i++)
        byocl_tensor_set(dst, i, byocl_tensor_get(src, i));
}

/* The result has data's type (relu, leaky_relu). */
static byocl_status same_as_data_infer(const byocl_infer_ctx *ctx, byocl_type *out,
                                       byocl_error *err)
{
    const byocl_type *data = NULL;
    byocl_status st = nn_tensor_arg(ctx, 0, "data", -1, NULL, &data, err);
    if (st == BYOCL_OK)
        *out = *data;
    return st;
}

/* Checks of a kernel whose first output has the first input's shape. */
static byocl_status same_shape_ref_args(const char *op, const byocl_tensor *const *in, int n_in,
                                        int want_in, byocl_tensor *const *out, int n_out,
                                        int want_out, byocl_error *err)
{
    byocl_status st = nn_ref_args(op, in, n_in, want_in, out, n_out, want_out, err);
    if (st == BYOCL_OK)
        st = nn_ref_out_shape(op, out[0], byocl_tensor_shape(in[0]), err);
    return st;
}

/* ------------------------------------------------------------------- dense */

static byocl_status dense_shape(const byocl_attrs *attrs, const byocl_shape *data,
                                const byocl_shape *weight, byocl_shape *out, byocl_error *err)
{
    char buf[160];
    if (data->rank < 1)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "data must have at least 1 dimension");
    if (weight->rank != 2)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "weight must be 2-D (units, input features), got shape %s",
                               byocl_shape_str(weight, buf, sizeof buf));
    int64_t features = data->dims[data->rank - 1];
    if (weight->dims[1] != features)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "weight has %lld input features but data's last dimension is %lld",
                               (long long)weight->dims[1], (long long)features);
    bool given = false;
    int64_t units = 0;
    byocl_status st = nn_attr_optional_positive(attrs, "units", &given, &units, err);
    if (st != BYOCL_OK)
        return st;
    if (given && units != weight->dims[0])
        return byocl_error_set(err, BYOCL_ERR_TYPE, "units=%lld but weight has %lld units",
                               (long long)units, (long long)weight->dims[0]);
    *out = *data;
    out->dims[out->rank - 1] = weight->dims[0];
    return BYOCL_OK;
}

static byocl_status dense_check(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    bool given = false;
    int64_t units = 0;
    byocl_dtype dtype;
    byocl_status st = nn_attr_optional_positive(attrs, "units", &given, &units, err);
    if (st == BYOCL_OK)
        st = nn_attr_out_dtype(attrs, BYOCL_FLOAT32, &dtype, err);
    return st;
}

static byocl_status dense_infer(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *data = NULL, *weight = NULL;
    byocl_shape shape;
    byocl_dtype dtype = BYOCL_FLOAT32;
    byocl_status st = nn_tensor_arg(ctx, 0, "data", -1, NULL, &data, err);
    if (st == BYOCL_OK)
        st = nn_tensor_arg(ctx, 1, "weight", 2, "units, input features", &weight, err);
    if (st == BYOCL_OK)
        st = nn_same_dtype(weight, "weight", data, err);
    if (st == BYOCL_OK)
        st = dense_shape(ctx->attrs, &data->shape, &weight->shape, &shape, err);
    if (st == BYOCL_OK)
        st = nn_attr_out_dtype(ctx->attrs, data->dtype, &dtype, err);
    if (st == BYOCL_OK)
        *out = byocl_type_tensor(dtype, shape.rank, shape.dims);
    return st;
}

static byocl_status dense_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, int n_in,
                              byocl_tensor *const *out, int n_out, byocl_error *err)
{
    static const char op[] = "nn.dense";
    byocl_shape want;
    byocl_status st = nn_ref_args(op, in, n_in, 2, out, n_out, 1, err);
    if (st == BYOCL_OK)
        st = dense_shape(attrs, byocl_tensor_shape(in[0]), byocl_tensor_shape(in[1]), &want, err);
    if (st == BYOCL_OK)
        st = nn_ref_out_shape(op, out[0], &want, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_shape *ws = byocl_tensor_shape(in[1]);
    int64_t units = ws->dims[0], features = ws->dims[1], rows = 1;
    for (int d = 0; d + 1 < want.rank; d++)
        rows *= want.dims[d];
    double *x = nn_to_doubles(in[0], err);
    double *w = x ? nn_to_doubles(in[1], err) : NULL;
    if (!w) {
        free(x);
        return BYOCL_ERR_NOMEM;
    }
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t u = 0; u < units; u++) {
            double acc = 0.0;
            for (int64_t k = 0; k < features; k++)
                acc += x[r * features + k] * w[u * features + k];
            byocl_tensor_set(out[0], r * units + u, acc);
        }
    }
    free(x);
    free(w);
    return BYOCL_OK;
}

/* ------------------------------------------------------------ batch_matmul */

byocl_status ops_batch_matmul_geometry(const byocl_attrs *attrs, const byocl_shape *a,
                                       const byocl_shape *b, ops_bmm_geom *g, byocl_error *err)
{
    char sa[160], sb[160];
    if (a->rank != 3 || b->rank != 3)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "tensor_a %s and tensor_b %s must both be 3-D (batch, rows, "
                               "columns)",
                               byocl_shape_str(a, sa, sizeof sa), byocl_shape_str(b, sb, sizeof sb));
    g->transpose_a = byocl_attrs_get_bool(attrs, "transpose_a", false);
    g->transpose_b = byocl_attrs_get_bool(attrs, "transpose_b", true);
    g->batch_a = a->dims[0];
    g->batch_b = b->dims[0];
    g->m = a->dims[g->transpose_a ? 2 : 1];
    g->k = a->dims[g->transpose_a ? 1 : 2];
    g->n = b->dims[g->transpose_b ? 1 : 2];
    int64_t kb = b->dims[g->transpose_b ? 2 : 1];
    if (kb != g->k)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "tensor_a %s%s has %lld columns to reduce but tensor_b %s%s has "
                               "%lld",
                               byocl_shape_str(a, sa, sizeof sa),
                               g->transpose_a ? " (transposed)" : "", (long long)g->k,
                               byocl_shape_str(b, sb, sizeof sb),
                               g->transpose_b ? " (transposed)" : "", (long long)kb);
    if (g->batch_a != g->batch_b && g->batch_a != 1 && g->batch_b != 1)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "the batches of tensor_a %s and tensor_b %s differ and neither "
                               "is 1",
                               byocl_shape_str(a, sa, sizeof sa), byocl_shape_str(b, sb, sizeof sb));
    g->batch = g->batch_a > g->batch_b ? g->batch_a : g->batch_b;
    if (g->batch_a == 0 || g->batch_b == 0)
        g->batch = 0;
    return BYOCL_OK;
}

static byocl_status batch_matmul_check(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    byocl_dtype dtype;
    return nn_attr_out_dtype(attrs, BYOCL_FLOAT32, &dtype, err);
}

static byocl_status batch_matmul_infer(const byocl_infer_ctx *ctx, byocl_type *out,
                                       byocl_error *err)
{
    const byocl_type *a = NULL, *b = NULL;
    ops_bmm_geom g;
    byocl_dtype dtype = BYOCL_FLOAT32;
    byocl_status st = nn_tensor_arg(ctx, 0, "tensor_a", -1, NULL, &a, err);
    if (st == BYOCL_OK)
        st = nn_tensor_arg(ctx, 1, "tensor_b", -1, NULL, &b, err);
    if (st == BYOCL_OK)
        st = nn_same_dtype(b, "tensor_b", a, err);
    if (st == BYOCL_OK)
        st = ops_batch_matmul_geometry(ctx->attrs, &a->shape, &b->shape, &g, err);
    if (st == BYOCL_OK)
        st = nn_attr_out_dtype(ctx->attrs, a->dtype, &dtype, err);
    if (st == BYOCL_OK) {
        int64_t dims[3] = {g.batch, g.m, g.n};
        *out = byocl_type_tensor(dtype, 3, dims);
    }
    return st;
}

/* Element (i, j) of matrix `batch` of an operand whose matrices are [rows, cols], stored
 * as such or transposed ([cols, rows]); a batch of 1 serves every batch. */
static double bmm_at(const double *v, int64_t batches, int64_t batch, bool transposed,
                     int64_t rows, int64_t cols, int64_t i, int64_t j)
{
    int64_t base = (batches == 1 ? 0 : batch) * rows * cols;
    return transposed ? v[base + j * rows + i] : v[base + i * cols + j];
}

static byocl_status batch_matmul_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                     int n_in, byocl_tensor *const *out, int n_out,
                                     byocl_error *err)
{
    static const char op[] = "nn.batch_matmul";
    ops_bmm_geom g;
    byocl_status st = nn_ref_args(op, in, n_in, 2, out, n_out, 1, err);
    if (st == BYOCL_OK)
        st = ops_batch_matmul_geometry(attrs, byocl_tensor_shape(in[0]),
                                       byocl_tensor_shape(in[1]), &g, err);
    if (st == BYOCL_OK) {
        byocl_shape want = byocl_shape_make(3, (int64_t[]){g.batch, g.m, g.n});
        st = nn_ref_out_shape(op, out[0], &want, err);
    }
    if (st != BYOCL_OK)
        return st;
    double *a = nn_to_doubles(in[0], err);
    double *b = a ? nn_to_doubles(in[1], err) : NULL;
    if (!b) {
        free(a);
        return BYOCL_ERR_NOMEM;
    }
    for (int64_t t = 0; t < g.batch; t++)
        for (int64_t i = 0; i < g.m; i++)
            for (int64_t j = 0; j < g.n; j++) {
                double acc = 0.0;
                for (int64_t r = 0; r < g.k; r++)
                    acc += bmm_at(a, g.batch_a, t, g.transpose_a, g.m, g.k, i, r) *
                           bmm_at(b, g.batch_b, t, g.transpose_b, g.k, g.n, r, j);
                byocl_tensor_set(out[0], (t * g.m + i) * g.n + j, acc);
            }
    free(a);
    free(b);
    return BYOCL_OK;
}

/* -------------------------------------------------------------- batch_norm */

static const char *const batch_norm_args[] = {"data", "gamma", "beta", "moving_mean",
                                              "moving_var"};

static byocl_status batch_norm_infer(const byocl_infer_ctx *ctx, byocl_type *out,
                                     byocl_error *err)
{
    const byocl_type *data = NULL;
    int axis = 0;
    byocl_status st = data_and_axis(ctx, 1, &data, &axis, err);
    for (int k = 1; k < 5 && st == BYOCL_OK; k++)
        st = nn_channel_vector(ctx, k, batch_norm_args[k], data, axis, err);
    if (st != BYOCL_OK)
        return st;
    /* TVM's inference form: the moving statistics pass through as outputs 1 and 2. */
    const byocl_type *fields[3] = {data, ctx->arg_types[3], ctx->arg_types[4]};
    const byocl_type *tuple = byocl_module_tuple_type(ctx->mod, fields, 3);
    if (!tuple)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    *out = *tuple;
    return BYOCL_OK;
}

/* Kernel checks shared by batch_norm and bias_add: in[1..n_in) are vectors along the
 * axis of in[0], and out[0] has in[0]'s shape. */
static byocl_status per_channel_ref_args(const char *op, const byocl_attrs *attrs,
                                         int64_t default_axis, const byocl_tensor *const *in,
                                         int n_in, int want_in,
                                         byocl_tensor *const *out, int n_out, int want_out,
                                         axis_view *v, byocl_error *err)
{
    byocl_status st = same_shape_ref_args(op, in, n_in, want_in, out, n_out, want_out, err);
    if (st == BYOCL_OK)
        st = axis_view_of(byocl_tensor_shape(in[0]),
                          byocl_attrs_get_int(attrs, "axis", default_axis), v, err);
    for (int k = 1; k < n_in && st == BYOCL_OK; k++)
        if (byocl_tensor_numel(in[k]) != v->len)
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "%s kernel: input %d has %lld elements, expected %lld", op, k,
                                 (long long)byocl_tensor_numel(in[k]), (long long)v->len);
    return st;
}

static byocl_status copy_tensor(const char *op, const byocl_tensor *src, byocl_tensor *dst,
                                byocl_error *err)
{
    byocl_status st = nn_ref_out_shape(op, dst, byocl_tensor_shape(src), err);
    if (st == BYOCL_OK)
        copy_values(src, dst);
    return st;
}

static byocl_status batch_norm_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                   int n_in, byocl_tensor *const *out, int n_out,
                                   byocl_error *err)
{
    static const char op[] = "nn.batch_norm";
    axis_view v;
    byocl_status st = per_channel_ref_args(op, attrs, 1, in, n_in, 5, out, n_out, 3, &v, err);
    if (st == BYOCL_OK)
        st = copy_tensor(op, in[3], out[1], err);
    if (st == BYOCL_OK)
        st = copy_tensor(op, in[4], out[2], err);
    if (st != BYOCL_OK)
        return st;
    double eps = byocl_attrs_get_float(attrs, "epsilon", 1e-5);
    bool center = byocl_attrs_get_bool(attrs, "center", true);
    bool scale = byocl_attrs_get_bool(attrs, "scale", true);
    double *x = nn_to_doubles(in[0], err);
    if (!x)
        return BYOCL_ERR_NOMEM;
    int64_t i = 0;
    for (int64_t o = 0; o < v.outer; o++) {
        for (int64_t c = 0; c < v.len; c++) {
            double mul = 1.0 / sqrt(byocl_tensor_get(in[4], c) + eps);
            if (scale)
                mul *= byocl_tensor_get(in[1], c);
            double mean = byocl_tensor_get(in[3], c);
            double shift = center ? byocl_tensor_get(in[2], c) : 0.0;
            for (int64_t k = 0; k < v.inner; k++, i++)
                byocl_tensor_set(out[0], i, (x[i] - mean) * mul + shift);
        }
    }
    free(x);
    return BYOCL_OK;
}

/* ---------------------------------------------------------------- bias_add */

static byocl_status bias_add_infer(const byocl_infer_ctx *ctx, byocl_type *out,
                                   byocl_error *err)
{
    const byocl_type *data = NULL;
    int axis = 0;
    byocl_status st = data_and_axis(ctx, 1, &data, &axis, err);
    if (st == BYOCL_OK)
        st = nn_channel_vector(ctx, 1, "bias", data, axis, err);
    if (st == BYOCL_OK)
        *out = *data;
    return st;
}

static byocl_status bias_add_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                 int n_in, byocl_tensor *const *out, int n_out, byocl_error *err)
{
    axis_view v;
    byocl_status st =
        per_channel_ref_args("nn.bias_add", attrs, 1, in, n_in, 2, out, n_out, 1, &v, err);
    if (st != BYOCL_OK)
        return st;
    int64_t i = 0;
    for (int64_t o = 0; o < v.outer; o++) {
        for (int64_t c = 0; c < v.len; c++) {
            double bias = byocl_tensor_get(in[1], c);
            for (int64_t k = 0; k < v.inner; k++, i++)
                byocl_tensor_set(out[0], i, byocl_tensor_get(in[0], i) + bias);
        }
    }
    return BYOCL_OK;
}

/* ------------------------------------------------------- relu, leaky_relu */

static byocl_status relu_family_ref(const char *op, double alpha, bool leaky,
                                    const byocl_tensor *const *in, int n_in,
                                    byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = same_shape_ref_args(op, in, n_in, 1, out, n_out, 1, err);
    if (st != BYOCL_OK)
        return st;
    int64_t n = byocl_tensor_numel(in[0]);
    for (int64_t i = 0; i < n; i++) {
        double x = byocl_tensor_get(in[0], i);
        /* `x < 0` keeps NaN as it is. */
        byocl_tensor_set(out[0], i, x < 0 ? (leaky ? alpha * x : 0.0) : x);
    }
    return BYOCL_OK;
}

static byocl_status relu_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, int n_in,
                             byocl_tensor *const *out, int n_out, byocl_error *err)
{
    return relu_family_ref("nn.relu", 0.0, false, in, n_in, out, n_out, err);
}

static byocl_status leaky_relu_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                   int n_in, byocl_tensor *const *out, int n_out,
                                   byocl_error *err)
{
    double alpha = byocl_attrs_get_float(attrs, "alpha", 0.25);
    return relu_family_ref("nn.leaky_relu", alpha, true, in, n_in, out, n_out, err);
}

/* ----------------------------------------------------------------- softmax */

/* Data must be a float tensor (softmax, log_softmax, layer_norm). */
static byocl_status float_data(const byocl_type *data, byocl_error *err)
{
    char buf[256];
    if (byocl_dtype_is_float(data->dtype))
        return BYOCL_OK;
    return byocl_error_set(err, BYOCL_ERR_TYPE, "data must be a float tensor, got %s",
                           byocl_type_str(data, buf, sizeof buf));
}

/* nn.softmax and nn.log_softmax: data's type, float, with a valid axis. */
static byocl_status softmax_infer(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *data = NULL;
    int axis = 0;
    byocl_status st = nn_tensor_arg(ctx, 0, "data", -1, NULL, &data, err);
    if (st == BYOCL_OK)
        st = float_data(data, err);
    if (st == BYOCL_OK)
        st = nn_axis(byocl_attrs_get_int(ctx->attrs, "axis", -1), data->shape.rank, &axis, err);
    if (st == BYOCL_OK)
        *out = *data;
    return st;
}

/* softmax: exp(x - max) / sum(exp(x - max)); log_softmax: x - max - log(sum(exp(x - max))),
 * which stays finite where the softmax underflows to 0. Subtracting the maximum keeps
 * exp() from overflowing; max ignores NaN (fmax). */
static byocl_status softmax_family_ref(const char *op, bool log_form, const byocl_attrs *attrs,
                                       const byocl_tensor *const *in, int n_in,
                                       byocl_tensor *const *out, int n_out, byocl_error *err)
{
    axis_view v;
    byocl_status st = same_shape_ref_args(op, in, n_in, 1, out, n_out, 1, err);
    if (st == BYOCL_OK)
        st = axis_view_of(byocl_tensor_shape(in[0]), byocl_attrs_get_int(attrs, "axis", -1), &v,
                          err);
    if (st != BYOCL_OK)
        return st;
    double *x = nn_to_doubles(in[0], err);
    if (!x)
        return BYOCL_ERR_NOMEM;
    for (int64_t o = 0; o < v.outer; o++) {
        for (int64_t k = 0; k < v.inner; k++) {
            double *first = x + o * v.len * v.inner + k; /* slice c at first[c * inner] */
            double top = -INFINITY, sum = 0.0;
            for (int64_t c = 0; c < v.len; c++)
                top = fmax(top, first[c * v.inner]);
            for (int64_t c = 0; c < v.len; c++)
                sum += exp(first[c * v.inner] - top);
            double log_sum = log(sum);
            for (int64_t c = 0; c < v.len; c++) {
                double shifted = first[c * v.inner] - top;
                first[c * v.inner] = log_form ? shifted - log_sum : exp(shifted) / sum;
            }
        }
    }
    nn_store_doubles(out[0], x);
    free(x);
    return BYOCL_OK;
}

static byocl_status softmax_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                int n_in, byocl_tensor *const *out, int n_out, byocl_error *err)
{
    return softmax_family_ref("nn.softmax", false, attrs, in, n_in, out, n_out, err);
}

static byocl_status log_softmax_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                    int n_in, byocl_tensor *const *out, int n_out,
                                    byocl_error *err)
{
    return softmax_family_ref("nn.log_softmax", true, attrs, in, n_in, out, n_out, err);
}

/* -------------------------------------------------------------- layer_norm */

static const char *const layer_norm_args[] = {"data", "gamma", "beta"};

static byocl_status layer_norm_check(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    double eps = byocl_attrs_get_float(attrs, "epsilon", 1e-5);
    if (!(eps >= 0))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "epsilon must be >= 0 (it is added to the variance), got %g", eps);
    return BYOCL_OK;
}

/* TVM's LayerNormRel: data float, gamma and beta 1-D of data's axis length; the result
 * has data's type. */
static byocl_status layer_norm_infer(const byocl_infer_ctx *ctx, byocl_type *out,
                                     byocl_error *err)
{
    const byocl_type *data = NULL;
    int axis = 0;
    byocl_status st = data_and_axis(ctx, -1, &data, &axis, err);
    if (st == BYOCL_OK)
        st = float_data(data, err);
    for (int k = 1; k < 3 && st == BYOCL_OK; k++)
        st = nn_channel_vector(ctx, k, layer_norm_args[k], data, axis, err);
    if (st == BYOCL_OK)
        *out = *data;
    return st;
}

/* Over each slice along the axis: (x - mean) / sqrt(var + epsilon) * gamma + beta, the mean
 * and the (biased) variance of the slice accumulated in double, the variance as the mean of
 * (x - mean)^2 (not E[x^2] - mean^2, which cancels for large means). */
static byocl_status layer_norm_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                   int n_in, byocl_tensor *const *out, int n_out,
                                   byocl_error *err)
{
    static const char op[] = "nn.layer_norm";
    axis_view v;
    byocl_status st = per_channel_ref_args(op, attrs, -1, in, n_in, 3, out, n_out, 1, &v, err);
    if (st != BYOCL_OK)
        return st;
    double eps = byocl_attrs_get_float(attrs, "epsilon", 1e-5);
    bool center = byocl_attrs_get_bool(attrs, "center", true);
    bool scale = byocl_attrs_get_bool(attrs, "scale", true);
    double *x = nn_to_doubles(in[0], err);
    if (!x)
        return BYOCL_ERR_NOMEM;
    for (int64_t o = 0; o < v.outer; o++) {
        for (int64_t k = 0; k < v.inner; k++) {
            int64_t first = o * v.len * v.inner + k; /* slice c at first + c * inner */
            double sum = 0.0, sq = 0.0;
            for (int64_t c = 0; c < v.len; c++)
                sum += x[first + c * v.inner];
            double mean = sum / (double)v.len;
            for (int64_t c = 0; c < v.len; c++) {
                double d = x[first + c * v.inner] - mean;
                sq += d * d;
            }
            double inv = 1.0 / sqrt(sq / (double)v.len + eps);
            for (int64_t c = 0; c < v.len; c++) {
                double y = (x[first + c * v.inner] - mean) * inv;
                if (scale)
                    y *= byocl_tensor_get(in[1], c);
                if (center)
                    y += byocl_tensor_get(in[2], c);
                byocl_tensor_set(out[0], first + c * v.inner, y);
            }
        }
    }
    free(x);
    return BYOCL_OK;
}

/* ----------------------------------------------------------- batch_flatten */

static byocl_status batch_flatten_shape(const byocl_shape *data, byocl_shape *out,
                                        byocl_error *err)
{
    if (data->rank < 1)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "data must have at least 1 dimension");
    byocl_shape rest = byocl_shape_make(data->rank - 1, data->dims + 1);
    int64_t n_rest = byocl_shape_numel(&rest);
    if (n_rest < 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "data has too many elements per batch");
    int64_t dims[2] = {data->dims[0], n_rest};
    *out = byocl_shape_make(2, dims);
    return BYOCL_OK;
}

static byocl_status batch_flatten_infer(const byocl_infer_ctx *ctx, byocl_type *out,
                                        byocl_error *err)
{
    const byocl_type *data = NULL;
    byocl_shape shape;
    byocl_status st = nn_tensor_arg(ctx, 0, "data", -1, NULL, &data, err);
    if (st == BYOCL_OK)
        st = batch_flatten_shape(&data->shape, &shape, err);
    if (st == BYOCL_OK)
        *out = byocl_type_tensor(data->dtype, 2, shape.dims);
    return st;
}

static byocl_status batch_flatten_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                      int n_in, byocl_tensor *const *out, int n_out,
                                      byocl_error *err)
{
    static const char op[] = "nn.batch_flatten";
    byocl_shape want;
    byocl_status st = nn_ref_args(op, in, n_in, 1, out, n_out, 1, err);
    if (st == BYOCL_OK)
        st = batch_flatten_shape(byocl_tensor_shape(in[0]), &want, err);
    if (st == BYOCL_OK)
        st = nn_ref_out_shape(op, out[0], &want, err);
    /* C order is unchanged: element i stays element i. */
    if (st == BYOCL_OK)
        copy_values(in[0], out[0]);
    return st;
}

/* ------------------------------------------------------------------- table */

static const byocl_attr_schema dense_attrs[] = {
    {.name = "units", .kind = BYOCL_ATTR_INT, .nullable = true, .def_null = true,
     .doc = "output features; when given, must equal the weight's first dimension"},
    NN_ATTR_OUT_DTYPE,
};
static const byocl_attr_schema batch_matmul_attrs[] = {
    NN_ATTR_OUT_DTYPE,
    {.name = "transpose_a", .kind = BYOCL_ATTR_BOOL, .def_i = 0,
     .doc = "tensor_a is [batch, K, M]: its matrices are used transposed"},
    {.name = "transpose_b", .kind = BYOCL_ATTR_BOOL, .def_i = 1,
     .doc = "tensor_b is [batch, N, K] (TVM's default); False: [batch, K, N]"},
};
static const byocl_attr_schema batch_norm_attrs[] = {
    {.name = "axis", .kind = BYOCL_ATTR_INT, .def_i = 1,
     .doc = "the channel axis of data (negative counts from the end)"},
    {.name = "epsilon", .kind = BYOCL_ATTR_FLOAT, .def_f = 1e-5,
     .doc = "added to the variance before its square root"},
    {.name = "center", .kind = BYOCL_ATTR_BOOL, .def_i = 1,
     .doc = "add beta (False ignores it)"},
    {.name = "scale", .kind = BYOCL_ATTR_BOOL, .def_i = 1,
     .doc = "multiply by gamma (False ignores it)"},
};
static const byocl_attr_schema bias_add_attrs[] = {
    {.name = "axis", .kind = BYOCL_ATTR_INT, .def_i = 1,
     .doc = "the axis of data the bias runs along (negative counts from the end)"},
};
static const byocl_attr_schema leaky_relu_attrs[] = {
    {.name = "alpha", .kind = BYOCL_ATTR_FLOAT, .def_f = 0.25,
     .doc = "slope for negative inputs"},
};
static const byocl_attr_schema layer_norm_attrs[] = {
    {.name = "axis", .kind = BYOCL_ATTR_INT, .def_i = -1,
     .doc = "the axis to normalize over (negative counts from the end)"},
    {.name = "epsilon", .kind = BYOCL_ATTR_FLOAT, .def_f = 1e-5,
     .doc = "added to the variance before its square root (>= 0)"},
    {.name = "center", .kind = BYOCL_ATTR_BOOL, .def_i = 1,
     .doc = "add beta (False ignores it)"},
    {.name = "scale", .kind = BYOCL_ATTR_BOOL, .def_i = 1,
     .doc = "multiply by gamma (False ignores it)"},
};
static const byocl_attr_schema softmax_attrs[] = {
    {.name = "axis", .kind = BYOCL_ATTR_INT, .def_i = -1,
     .doc = "the axis to normalize over (negative counts from the end)"},
};

const byocl_op ops_nn[] = {
    {.name = "nn.dense", .min_args = 2, .max_args = 2, .attrs = dense_attrs,
     .n_attrs = N_ITEMS(dense_attrs),
     .doc = "fully connected layer: data [..., K] times weight [units, K] transposed",
     .check_attrs = dense_check, .infer = dense_infer, .ref = dense_ref},
    {.name = "nn.batch_matmul", .min_args = 2, .max_args = 2, .attrs = batch_matmul_attrs,
     .n_attrs = N_ITEMS(batch_matmul_attrs),
     .doc = "matrix products over a batch: tensor_a [B, M, K] times tensor_b [B, N, K] "
            "transposed; a batch of 1 broadcasts",
     .check_attrs = batch_matmul_check, .infer = batch_matmul_infer,
     .ref = batch_matmul_ref},
    {.name = "nn.batch_norm", .min_args = 5, .max_args = 5, .attrs = batch_norm_attrs,
     .n_attrs = N_ITEMS(batch_norm_attrs),
     .doc = "batch normalization with moving statistics; returns (out, moving_mean, "
            "moving_var)",
     .infer = batch_norm_infer, .ref = batch_norm_ref},
    {.name = "nn.layer_norm", .min_args = 3, .max_args = 3, .attrs = layer_norm_attrs,
     .n_attrs = N_ITEMS(layer_norm_attrs),
     .doc = "(x - mean) / sqrt(var + epsilon) * gamma + beta over one axis of a float "
            "tensor; gamma and beta are 1-D of that axis' length",
     .check_attrs = layer_norm_check, .infer = layer_norm_infer, .ref = layer_norm_ref},
    {.name = "nn.bias_add", .min_args = 2, .max_args = 2, .attrs = bias_add_attrs,
     .n_attrs = N_ITEMS(bias_add_attrs),
     .doc = "adds a 1-D bias along one axis of data",
     .infer = bias_add_infer, .ref = bias_add_ref},
    {.name = "nn.relu", .min_args = 1, .max_args = 1,
     .doc = "max(x, 0) elementwise",
     .infer = same_as_data_infer, .ref = relu_ref},
    {.name = "nn.leaky_relu", .min_args = 1, .max_args = 1, .attrs = leaky_relu_attrs,
     .n_attrs = N_ITEMS(leaky_relu_attrs),
     .doc = "x for x >= 0, alpha * x below, elementwise",
     .infer = same_as_data_infer, .ref = leaky_relu_ref},
    {.name = "nn.softmax", .min_args = 1, .max_args = 1, .attrs = softmax_attrs,
     .n_attrs = N_ITEMS(softmax_attrs),
     .doc = "exp(x - max) / sum(exp(x - max)) along one axis of a float tensor",
     .infer = softmax_infer, .ref = softmax_ref},
    {.name = "nn.log_softmax", .min_args = 1, .max_args = 1, .attrs = softmax_attrs,
     .n_attrs = N_ITEMS(softmax_attrs),
     .doc = "x - max - log(sum(exp(x - max))) along one axis of a float tensor",
     .infer = softmax_infer, .ref = log_softmax_ref},
    {.name = "nn.batch_flatten", .min_args = 1, .max_args = 1,
     .doc = "reshapes data to (N, product of the other dimensions)",
     .infer = batch_flatten_infer, .ref = batch_flatten_ref},
};
const int ops_nn_count = N_ITEMS(ops_nn);
