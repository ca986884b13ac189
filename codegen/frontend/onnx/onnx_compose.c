/* Small ONNX ops as compositions of Relay ops: PRelu (where(x < 0, slope * x, x), slope
 * broadcast to x one way), Celu, Shrink, GlobalMaxPool (max over the spatial axes),
 * InstanceNormalization and MeanVarianceNormalization (mean and variance over axes),
 * Hardmax (equal(arange, argmax) cast to the input's dtype), EyeLike (a constant), OneHot
 * with a constant depth and values (one_hot of the indices with negatives wrapped), LRN
 * (the sum of squares over a channel window as an avg_pool2d that counts the padding), and
 * MaxPool's Indices (onnx_max_pool_indices). */
#include <string.h>

#include "onnx_import.h"
#include "ops/nn_util.h"
#include "tensorio/tensor_pb.h"

static int call2(onnx_ctx *cx, const char *op, int a, int b)
{
    int args[2] = {a, b};
    return a < 0 || b < 0 ? -1 : onnx_call(cx, op, args, 2, NULL);
}

static int where3(onnx_ctx *cx, int c, int a, int b)
{
    int args[3] = {c, a, b};
    return c < 0 || a < 0 || b < 0 ? -1 : onnx_call(cx, "where", args, 3, NULL);
}

static const byocl_shape *shape_of(onnx_ctx *cx, int id) { return &onnx_type(cx, id)->shape; }

/* op (mean, max, argmax) over `axes`, kept as size-1 dims. */
static int reduce_kept(onnx_ctx *cx, const char *op, int x, const int64_t *axes, int n)
{
    byocl_attrs *a = x < 0 ? NULL : onnx_attrs(cx);
    if (!a || onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "axis", axes, n)) != BYOCL_OK ||
        onnx_attrs_ok(cx, byocl_attrs_set_bool(cx->mod, a, "keepdims", true)) != BYOCL_OK)
        return -1;
    return onnx_call1(cx, op, x, a);
}

/* The axes first..rank-1. */
static int spatial_axes(int rank, int first, int64_t *axes)
{
    for (int i = first; i < rank; i++)
        axes[i - first] = i;
    return rank - first;
}

byocl_status onnx_float_input(onnx_ctx *cx, int k, int *x)
{
    TRY(onnx_input(cx, k, x));
    byocl_dtype d = onnx_type(cx, *x)->dtype;
    if (!byocl_dtype_is_float(d))
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "input %d has dtype %s; %s takes float16, float32 or float64 only", k,
                         byocl_dtype_name(d), cx->node->op_type);
    return BYOCL_OK;
}

/* PRelu: where(x < 0, x * slope, x); slope broadcasts to x (ONNX's unidirectional
 * broadcast: the result has x's shape). Before opset 7 a 1-D slope of x's channel count
 * is per channel (axis 1), as PyTorch exported it then and TVM's importer reads it. */
byocl_status onnx_convert_prelu(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x, slope;
    TRY(onnx_float_input(cx, 0, &x));
    TRY(onnx_input(cx, 1, &slope));
    const byocl_shape *xs = shape_of(cx, x), *ss = shape_of(cx, slope);
    if (cx->opset < 7 && ss->rank == 1 && xs->rank > 2 && ss->dims[0] == xs->dims[1]) {
        int64_t per_channel[BYOCL_MAX_RANK];
        per_channel[0] = ss->dims[0];
        for (int i = 1; i < xs->rank - 1; i++)
            per_channel[i] = 1;
        if ((slope = onnx_reshape(cx, slope, xs->rank - 1, per_channel)) < 0)
            return cx->err->status;
        ss = shape_of(cx, slope);
    }
    bool ok = ss->rank <= xs->rank;
    for (int i = 0; ok && i < ss->rank; i++) {
        int64_t d = ss->dims[ss->rank - 1 - i];
        ok = d == 1 || d == xs->dims[xs->rank - 1 - i];
    }
    if (!ok)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "slope (rank %d) does not broadcast to the input's shape (rank %d)",
                         ss->rank, xs->rank);
    TRY_ID(neg, onnx_with_scalar(cx, "less", x, 0.0, false));
    TRY_ID(y, where3(cx, neg, call2(cx, "multiply", x, slope), x));
    return onnx_output(cx, 0, y);
}

/* Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)). */
byocl_status onnx_convert_celu(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    double alpha;
    TRY(onnx_attr_float(cx, "alpha", 1.0, &alpha));
    if (alpha == 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "alpha must not be 0");
    int x;
    TRY(onnx_float_input(cx, 0, &x));
    TRY_ID(e, onnx_call1(cx, "exp", onnx_with_scalar(cx, "divide", x, alpha, false), NULL));
    TRY_ID(em1, onnx_with_scalar(cx, "subtract", e, 1.0, false));
    TRY_ID(neg, onnx_with_scalar(cx, "minimum",
                                 onnx_with_scalar(cx, "multiply", em1, alpha, false), 0.0,
                                 false));
    TRY_ID(y, call2(cx, "add", onnx_call1(cx, "nn.relu", x, NULL), neg));
    return onnx_output(cx, 0, y);
}

/* Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0. */
byocl_status onnx_convert_shrink(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    double bias, lambd;
    TRY(onnx_attr_float(cx, "bias", 0.0, &bias));
    TRY(onnx_attr_float(cx, "lambd", 0.5, &lambd));
    int x;
    TRY(onnx_input(cx, 0, &x));
    TRY_ID(zero, onnx_scalar(cx, onnx_type(cx, x)->dtype, 0.0));
    TRY_ID(hi, where3(cx, onnx_with_scalar(cx, "greater", x, lambd, false),
                      onnx_with_scalar(cx, "subtract", x, bias, false), zero));
    TRY_ID(y, where3(cx, onnx_with_scalar(cx, "less", x, -lambd, false),
                     onnx_with_scalar(cx, "add", x, bias, false), hi));
    return onnx_output(cx, 0, y);
}

/* An input of rank 3 or more: N, C and spatial axes. */
static byocl_status nc_input(onnx_ctx *cx, int *x)
{
    TRY(onnx_float_input(cx, 0, x));
    int rank = shape_of(cx, *x)->rank;
    if (rank < 3)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "input has rank %d; it needs N, C and at least "
                                                "one spatial dimension",
                         rank);
    return BYOCL_OK;
}

byocl_status onnx_convert_global_max_pool(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x;
    TRY(nc_input(cx, &x));
    int64_t axes[BYOCL_MAX_RANK];
    int na = spatial_axes(shape_of(cx, x)->rank, 2, axes);
    TRY_ID(y, reduce_kept(cx, "max", x, axes, na));
    return onnx_output(cx, 0, y);
}

/* (x - mean) / (sqrt(var + eps_in) + eps_out) with mean and var over `axes`. */
static int standardize(onnx_ctx *cx, int x, const int64_t *axes, int na, double eps_in,
                       double eps_out)
{
    int d = call2(cx, "subtract", x, reduce_kept(cx, "mean", x, axes, na));
    int var = reduce_kept(cx, "mean", call2(cx, "multiply", d, d), axes, na);
    if (var >= 0 && eps_in != 0)
        var = onnx_with_scalar(cx, "add", var, eps_in, false);
    int sd = var < 0 ? -1 : onnx_call1(cx, "sqrt", var, NULL);
    if (sd >= 0 && eps_out != 0)
        sd = onnx_with_scalar(cx, "add", sd, eps_out, false);
    return call2(cx, "divide", d, sd);
}

/* A per-channel input k ([C]) reshaped to [C, 1, ...] against x's rank. */
static byocl_status per_channel(onnx_ctx *cx, int k, int x, int *out)
{
    const byocl_shape *xs = shape_of(cx, x);
    TRY(onnx_input(cx, k, out));
    const byocl_type *t = onnx_type(cx, *out);
    if (t->shape.rank != 1 || t->shape.dims[0] != xs->dims[1] ||
        t->dtype != onnx_type(cx, x)->dtype)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "input %d must be %s of shape [C] = [%lld]", k,
                         byocl_dtype_name(onnx_type(cx, x)->dtype), (long long)xs->dims[1]);
    int64_t dims[BYOCL_MAX_RANK];
    dims[0] = xs->dims[1];
    for (int i = 1; i < xs->rank - 1; i++)
        dims[i] = 1;
    *out = onnx_reshape(cx, *out, xs->rank - 1, dims);
    return *out < 0 ? cx->err->status : BYOCL_OK;
}

/* InstanceNormalization: per N and C over the spatial axes, times scale plus B (per C). */
byocl_status onnx_convert_instance_norm(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    double eps;
    TRY(onnx_attr_float(cx, "epsilon", 1e-5, &eps));
    int x, scale, b;
    TRY(nc_input(cx, &x));
    TRY(per_channel(cx, 1, x, &scale));
    TRY(per_channel(cx, 2, x, &b));
    int64_t axes[BYOCL_MAX_RANK];
    int na = spatial_axes(shape_of(cx, x)->rank, 2, axes);
    TRY_ID(norm, standardize(cx, x, axes, na, eps, 0.0));
    TRY_ID(y, call2(cx, "add", call2(cx, "multiply", norm, scale), b));
    return onnx_output(cx, 0, y);
}

/* MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over axes (default
 * [0, 2, 3]), as ONNX's function body. */
byocl_status onnx_convert_mvn(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x;
    TRY(onnx_float_input(cx, 0, &x));
    int rank = shape_of(cx, x)->rank;
    int64_t axes[BYOCL_MAX_RANK] = {0, 2, 3};
    int na;
    TRY(onnx_attr_ints(cx, "axes", axes, BYOCL_MAX_RANK, &na));
    if (na < 0)
        na = 3;
    for (int i = 0; i < na; i++) {
        int a;
        TRY(onnx_axis(cx, axes[i], rank, "axes", &a));
        axes[i] = a;
    }
    TRY_ID(y, standardize(cx, x, axes, na, 0.0, 1e-9));
    return onnx_output(cx, 0, y);
}

/* arange(0, count) of dtype as [count] reshaped to count at `axis` of a rank-`rank` shape
 * of ones elsewhere. */
static int arange_at(onnx_ctx *cx, int64_t count, byocl_dtype dtype, int axis, int rank)
{
    byocl_attrs *a = onnx_attrs(cx);
    if (!a || onnx_attrs_ok(cx, byocl_attrs_set_str(cx->mod, a, "dtype",
                                                     byocl_dtype_name(dtype))) != BYOCL_OK)
        return -1;
    int args[3] = {onnx_scalar(cx, dtype, 0), onnx_scalar(cx, dtype, (double)count),
                   onnx_scalar(cx, dtype, 1)};
    int r = args[0] < 0 || args[1] < 0 || args[2] < 0 ? -1 : onnx_call(cx, "arange", args, 3, a);
    int64_t dims[BYOCL_MAX_RANK];
    for (int i = 0; i < rank - axis; i++)
        dims[i] = i == 0 ? count : 1;
    return r < 0 ? -1 : onnx_reshape(cx, r, rank - axis, dims);
}

/* Hardmax: 1 at the first maximum along axis, else 0 (before opset 13: of the input
 * coerced to 2-D at axis, default 1; from 13: along axis, default -1). */
byocl_status onnx_convert_hardmax(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x;
    TRY(onnx_float_input(cx, 0, &x));
    byocl_shape in = *shape_of(cx, x);
    int axis;
    TRY(onnx_softmax_axis(cx, in.rank, &axis));
    if (cx->opset < 13) {
        int64_t dims[2] = {1, 1};
        for (int i = 0; i < in.rank; i++)
            dims[i >= axis] *= in.dims[i];
        if ((x = onnx_reshape(cx, x, 2, dims)) < 0)
            return cx->err->status;
        axis = 1;
    }
    const byocl_type *t = onnx_type(cx, x);
    int64_t ax = axis;
    TRY_ID(am, reduce_kept(cx, "argmax", x, &ax, 1));
    TRY_ID(ar, arange_at(cx, t->shape.dims[axis], onnx_type(cx, am)->dtype, axis,
                         t->shape.rank));
    TRY_ID(y, onnx_cast(cx, call2(cx, "equal", ar, am), t->dtype));
    TRY_ID(out, onnx_reshape(cx, y, in.rank, in.dims));
    return onnx_output(cx, 0, out);
}

/* The dtype attribute of EyeLike (default: the input's). */
static byocl_status dtype_attr(onnx_ctx *cx, byocl_dtype def, byocl_dtype *out)
{
    int64_t code;
    TRY(onnx_attr_int(cx, "dtype", -1, &code));
    *out = def;
    char buf[32];
    if (code >= 0 && !tensorio_onnx_to_dtype((int32_t)code, out))
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "dtype %s is not supported (byocl has %s)",
                         tensorio_onnx_dtype_name((int32_t)code, buf, sizeof buf),
                         tensorio_onnx_supported_dtypes);
    return BYOCL_OK;
}

/* EyeLike: ones on diagonal k of a 2-D input's shape, a constant. */
byocl_status onnx_convert_eye_like(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x;
    TRY(onnx_input(cx, 0, &x));
    const byocl_type *t = onnx_type(cx, x);
    if (t->shape.rank != 2)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "input has rank %d; EyeLike needs 2",
                         t->shape.rank);
    int64_t k;
    TRY(onnx_attr_int(cx, "k", 0, &k));
    byocl_dtype dt;
    TRY(dtype_attr(cx, t->dtype, &dt));
    byocl_tensor *eye = byocl_tensor_new(dt, &t->shape, cx->err);
    if (!eye)
        return onnx_fail(cx, cx->err->status, "out of memory");
    int64_t rows = t->shape.dims[0], cols = t->shape.dims[1];
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            byocl_tensor_set(eye, i * cols + j, j - i == k ? 1.0 : 0.0);
    byocl_status st = onnx_output_constant(cx, 0, eye);
    byocl_tensor_unref(eye);
    return st;
}

/* OneHot: one_hot(where(indices < 0, indices + depth, indices), on, off), as TVM's
 * frontend writes it (Relay's one_hot matches 0..depth-1 only; ONNX counts negative
 * indices from depth); depth and values must be known at import. */
byocl_status onnx_convert_one_hot(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int64_t axis_attr;
    TRY(onnx_attr_int(cx, "axis", -1, &axis_attr));
    const byocl_tensor *depth_t, *values;
    TRY(onnx_input_constant(cx, 1, "OneHot's depth", &depth_t));
    TRY(onnx_input_constant(cx, 2, "OneHot's values", &values));
    if (byocl_tensor_numel(depth_t) != 1 || byocl_tensor_numel(values) != 2)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "depth must be one value and values two (off, on), not %lld and %lld",
                         (long long)byocl_tensor_numel(depth_t),
                         (long long)byocl_tensor_numel(values));
    int64_t depth = (int64_t)byocl_tensor_get(depth_t, 0);
    if (depth < 1)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "depth %lld must be at least 1",
                         (long long)depth);
    int idx;
    TRY(onnx_input(cx, 0, &idx));
    int rank = shape_of(cx, idx)->rank + 1, axis;
    TRY(onnx_axis(cx, axis_attr, rank, "axis", &axis));
    byocl_dtype vt = byocl_tensor_dtype(values);
    int args[3] = {where3(cx, onnx_with_scalar(cx, "less", idx, 0.0, false),
                          onnx_with_scalar(cx, "add", idx, (double)depth, false), idx),
                   onnx_scalar(cx, vt, byocl_tensor_get(values, 1)),
                   onnx_scalar(cx, vt, byocl_tensor_get(values, 0))};
    byocl_attrs *a = onnx_attrs(cx);
    if (!a || args[0] < 0 || args[1] < 0 || args[2] < 0 ||
        onnx_attrs_ok(cx, byocl_attrs_set_int(cx->mod, a, "depth", depth)) != BYOCL_OK ||
        onnx_attrs_ok(cx, byocl_attrs_set_int(cx->mod, a, "axis", axis)) != BYOCL_OK ||
        onnx_attrs_ok(cx, byocl_attrs_set_str(cx->mod, a, "dtype", byocl_dtype_name(vt))) !=
            BYOCL_OK)
        return cx->err->status;
    TRY_ID(y, onnx_call(cx, "one_hot", args, 3, a));
    return onnx_output(cx, 0, y);
}

/* LRN: x / (bias + alpha / size * sum of x^2 over channels c - (size-1)/2 ..
 * c + size/2 rounded up)^beta; the sum is an avg_pool2d of x^2 as [N, 1, C, rest] with
 * the window padded and counted, times size. */
byocl_status onnx_convert_lrn(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    double alpha, beta, bias;
    int64_t size;
    TRY(onnx_attr_float(cx, "alpha", 1e-4, &alpha));
    TRY(onnx_attr_float(cx, "beta", 0.75, &beta));
    TRY(onnx_attr_float(cx, "bias", 1.0, &bias));
    TRY(onnx_attr_int(cx, "size", 0, &size));
    if (size < 1)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "size %lld must be at least 1 (it is required)",
                         (long long)size);
    int x;
    TRY(nc_input(cx, &x));
    byocl_shape xs = *shape_of(cx, x);
    int64_t dims[4] = {xs.dims[0], 1, xs.dims[1], 1};
    for (int i = 2; i < xs.rank; i++)
        dims[3] *= xs.dims[i];
    TRY_ID(sq4, onnx_reshape(cx, call2(cx, "multiply", x, x), 4, dims));
    byocl_attrs *a = onnx_attrs(cx);
    int64_t pool[2] = {size, 1}, pad[4] = {(size - 1) / 2, 0, size / 2, 0};
    if (!a || onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "pool_size", pool, 2)) ||
        onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "padding", pad, 4)) ||
        onnx_attrs_ok(cx, byocl_attrs_set_bool(cx->mod, a, "count_include_pad", true)))
        return cx->err->status;
    TRY_ID(avg, onnx_call1(cx, "nn.avg_pool2d", sq4, a));
    TRY_ID(sum, onnx_reshape(cx, avg, xs.rank, xs.dims));
    /* avg * size * alpha / size: the window average times alpha */
    TRY_ID(base, onnx_with_scalar(cx, "add", onnx_with_scalar(cx, "multiply", sum, alpha, false),
                                  bias, false));
    TRY_ID(y, call2(cx, "divide", x, onnx_with_scalar(cx, "power", base, beta, false)));
    return onnx_output(cx, 0, y);
}

/* A new int64 tensor of `dims` (rank 4) filled by fill(i, ctx) for flat index i. */
static int index_constant(onnx_ctx *cx, const int64_t dims[4],
                          int64_t (*fill)(int64_t i, const int64_t *ctx), const int64_t *ctx)
{
    byocl_shape s = byocl_shape_make(4, dims);
    byocl_tensor *t = byocl_tensor_new(BYOCL_INT64, &s, cx->err);
    if (!t) {
        onnx_fail(cx, cx->err->status, "out of memory");
        return -1;
    }
    int64_t *v = byocl_tensor_data(t);
    for (int64_t i = 0; i < byocl_shape_numel(&s); i++)
        v[i] = fill(i, ctx);
    int id = onnx_constant(cx, t);
    byocl_tensor_unref(t);
    return id;
}

/* Cell i of the padded H x W plane: its spatial index in x (row-major, or column-major
 * with storage_order 1), -1 in the padding. ctx: hp, wp, top, left, H, W, order. */
static int64_t spatial_index(int64_t i, const int64_t *c)
{
    int64_t h = i / c[1] - c[2], w = i % c[1] - c[3];
    if (h < 0 || h >= c[4] || w < 0 || w >= c[5])
        return -1;
    return c[6] ? w * c[4] + h : h * c[5] + w;
}

/* Where plane (n, c) starts in x: (n * C + c) * H * W. ctx: H * W. */
static int64_t plane_start(int64_t i, const int64_t *c) { return i * c[0]; }

/* x (or the index plane) at one kernel offset of every window: a strided_slice. */
static int window_cells(onnx_ctx *cx, int x, const int64_t at[2], const int64_t out_hw[2],
                        const int64_t stride[2])
{
    const byocl_shape *s = shape_of(cx, x);
    int64_t begin[4] = {0, 0, at[0], at[1]}, steps[4] = {1, 1, stride[0], stride[1]};
    int64_t end[4] = {s->dims[0], s->dims[1], at[0] + (out_hw[0] - 1) * stride[0] + 1,
                      at[1] + (out_hw[1] - 1) * stride[1] + 1};
    byocl_attrs *a = onnx_attrs(cx);
    if (!a || onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "begin", begin, 4)) ||
        onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "end", end, 4)) ||
        onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "strides", steps, 4)))
        return -1;
    return onnx_call1(cx, "strided_slice", x, a);
}

/* MaxPool's Indices. No byocl op pools an argmax (TVM's nn.max_pool2d has no indices
 * either), so it is composed over the kernel's offsets, on every target: x padded with
 * its dtype's lowest value, and a constant of each padded cell's spatial index (-1 in the
 * padding); at each offset a strided_slice of both gives one candidate per window, and
 * the running best takes it when it is greater (the first maximum wins) or while the best
 * is padding (a real cell wins a tie with the padding). The planes' starts come last. */
int onnx_max_pool_indices(onnx_ctx *cx, int x, const int64_t kernel[2], const int64_t stride[2],
                          const int64_t dilation[2], const int64_t pad[4],
                          const int64_t out_hw[2], int64_t storage_order)
{
    const byocl_shape xs = *shape_of(cx, x);
    byocl_dtype dt = onnx_type(cx, x)->dtype;
    /* ceil_mode's last window may reach past the end padding: pad that far too. */
    int64_t pads[8] = {0, 0, pad[0], pad[1], 0, 0, 0, 0}, plane[7];
    for (int d = 0; d < 2; d++) {
        int64_t reach = (out_hw[d] - 1) * stride[d] + (kernel[d] - 1) * dilation[d] + 1;
        int64_t end = reach - xs.dims[2 + d] - pad[d];
        pads[6 + d] = end > 0 ? end : 0;
        plane[d] = xs.dims[2 + d] + pad[d] + pads[6 + d];
    }
    int64_t ctx[7] = {plane[0], plane[1], pad[0], pad[1], xs.dims[2], xs.dims[3],
                      storage_order != 0};
    int64_t idx_dims[4] = {1, 1, plane[0], plane[1]};
    int idx = index_constant(cx, idx_dims, spatial_index, ctx);
    int xp = x;
    bool padded = pads[2] || pads[3] || pads[6] || pads[7];
    if (idx >= 0 && padded) {
        int low = onnx_scalar(cx, dt, nn_dtype_lowest(dt));
        if (low < 0 || onnx_pad_op(cx, x, low, pads, 4, "constant", &xp) != BYOCL_OK)
            return -1;
    }
    int best = -1, best_i = -1;
    for (int64_t a = 0; a < kernel[0] && idx >= 0; a++) {
        for (int64_t b = 0; b < kernel[1]; b++) {
            int64_t at[2] = {a * dilation[0], b * dilation[1]};
            int v = window_cells(cx, xp, at, out_hw, stride);
            int i = v < 0 ? -1 : window_cells(cx, idx, at, out_hw, stride);
            if (i < 0)
                return -1;
            if (best < 0) {
                best = v;
                best_i = i;
                continue;
            }
            int take = call2(cx, "greater", v, best);
            if (padded)
                take = call2(cx, "logical_or", take,
                             onnx_with_scalar(cx, "less", best_i, 0.0, false));
            best = where3(cx, take, v, best);
            best_i = where3(cx, take, i, best_i);
            if (best < 0 || best_i < 0)
                return -1;
        }
    }
    int64_t start_dims[4] = {xs.dims[0], xs.dims[1], 1, 1}, hw = xs.dims[2] * xs.dims[3];
    int starts = best_i < 0 ? -1 : index_constant(cx, start_dims, plane_start, &hw);
    return call2(cx, "add", best_i, starts);
}
