/* Op group "index": ops that pick elements by position, with TVM Relay's attributes:
 * strided_slice and broadcast_to (each output element reads one input element at an
 * affine offset, ops_affine_map), take, gather and gather_nd (the positions come from an
 * index tensor), scatter_elements and scatter_nd (the data with updates written at the
 * positions of an index tensor), arange and shape_of (values from attributes or from a
 * static shape; the fold_constants pass turns them into constants), trilu (a triangle of
 * each matrix), cumsum (running sums along an axis), one_hot (on or off by whether the
 * position along a new axis is the index), nn.pad (the input inside a border of a value,
 * its edges or its mirror image) and topk (the first k of each line sorted, with their
 * positions).
 *
 * Like transform.c, every shape rule is one function that the type relation, the kernel
 * and the LLVM lowering (llvm/lower_index.c) share. Most kernels move bytes, so they serve
 * every dtype alike; the scatter reductions and topk's order read values as double (floats)
 * or int64 (integers). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elemwise_util.h"
#include "index.h"

#define ARRAY_LEN(a) ((int)(sizeof a / sizeof a[0]))

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Strides of a C-order shape, in elements. */
static void c_strides(const byocl_shape *s, int64_t *stride)
{
    int64_t k = 1;
    for (int d = s->rank - 1; d >= 0; d--) {
        stride[d] = k;
        k *= s->dims[d];
    }
}

/* The next multi-index of `s` in C order. */
static void next_index(const byocl_shape *s, int64_t *idx)
{
    for (int d = s->rank - 1; d >= 0; d--) {
        if (++idx[d] < s->dims[d])
            return;
        idx[d] = 0;
    }
}

/* ------------------------------------------------------------- strided_slice */

/* Begin, step and length along one axis as numpy slices them: negative begin/end count
 * from the end, then both are clamped into the axis. */
static byocl_status slice_axis(int64_t dim, int64_t b, int64_t e, int64_t step, int64_t *start,
                               int64_t *len, byocl_error *err)
{
    if (step == 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'strides' of strided_slice: a stride "
                               "is 0");
    if (b < 0)
        b = b < -dim ? -1 : b + dim; /* below the axis: clamped below */
    if (e < 0)
        e = e < -dim ? -1 : e + dim;
    if (step > 0) {
        b = clamp64(b, 0, dim);
        e = clamp64(e, 0, dim);
        *len = e > b ? (e - b + step - 1) / step : 0;
    } else {
        b = clamp64(b, -1, dim - 1);
        e = clamp64(e, -1, dim - 1);
        *len = b > e ? (b - e + (-step) - 1) / (-step) : 0;
    }
    *start = *len > 0 ? b : 0;
    return BYOCL_OK;
}

static byocl_status check_strided_slice_attrs(byocl_module *m, byocl_attrs *attrs,
                                              byocl_error *err)
{
    (void)m;
    const int64_t *v;
    int nb = byocl_attrs_get_ints(attrs, "begin", &v);
    int ne = byocl_attrs_get_ints(attrs, "end", &v);
    int ns = byocl_attrs_get_ints(attrs, "strides", &v);
    int na = byocl_attrs_get_ints(attrs, "axes", &v);
    const char *mode = byocl_attrs_get_str(attrs, "slice_mode", "end");
    if (strcmp(mode, "end") != 0)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "bad value for attribute 'slice_mode' of strided_slice: '%s' "
                               "(byocl supports \"end\" only)",
                               mode);
    if (nb != ne)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "attributes 'begin' (%d values) and 'end' (%d values) of "
                               "strided_slice differ in length",
                               nb, ne);
    if (ns > 0 && ns != 1 && ns != nb)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "attribute 'strides' of strided_slice has %d values; expected 1 "
                               "or %d (one per begin)",
                               ns, nb);
    if (na >= 0 && na != nb)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "attribute 'axes' of strided_slice has %d values; expected %d "
                               "(one per begin)",
                               na, nb);
    if (nb > BYOCL_MAX_RANK)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "attribute 'begin' of strided_slice has %d values; at most %d "
                               "are supported",
                               nb, BYOCL_MAX_RANK);
    return BYOCL_OK;
}

static byocl_status strided_slice_map(const byocl_attrs *attrs, const byocl_shape *in,
                                      byocl_shape *out, ops_affine *map, byocl_error *err)
{
    const int64_t *begin, *end, *strides = NULL, *axes = NULL;
    int n = byocl_attrs_get_ints(attrs, "begin", &begin);
    byocl_attrs_get_ints(attrs, "end", &end);
    int ns = byocl_attrs_get_ints(attrs, "strides", &strides);
    int na = byocl_attrs_get_ints(attrs, "axes", &axes);
    int rank = in->rank;
    int64_t step[BYOCL_MAX_RANK], start[BYOCL_MAX_RANK], stride[BYOCL_MAX_RANK];
    bool seen[BYOCL_MAX_RANK] = {false};
    *out = *in;
    for (int d = 0; d < rank; d++) {
        step[d] = 1;
        start[d] = 0;
    }
    if (na < 0 && n > rank)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "strided_slice: begin has %d values but the input has rank %d",
                               n, rank);
    for (int k = 0; k < n; k++) {
        int64_t a = na >= 0 ? axes[k] : k;
        if (a < -rank || a >= rank)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "strided_slice: axis %lld is out of range for rank %d",
                                   (long long)a, rank);
        int d = (int)(a < 0 ? a + rank : a);
        if (seen[d])
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "strided_slice: axis %d is sliced twice", d);
        seen[d] = true;
        step[d] = ns <= 0 ? 1 : strides[ns == 1 ? 0 : k];
        byocl_status st = slice_axis(in->dims[d], begin[k], end[k], step[d], &start[d],
                                     &out->dims[d], err);
        if (st != BYOCL_OK)
            return st;
    }
    c_strides(in, stride);
    map->base = 0;
    for (int d = 0; d < rank; d++) {
        map->base += start[d] * stride[d];
        map->coef[d] = step[d] * stride[d];
    }
    return BYOCL_OK;
}

/* ------------------------------------------------------------- broadcast_to */

static byocl_status check_broadcast_to_attrs(byocl_module *m, byocl_attrs *attrs,
                                             byocl_error *err)
{
    (void)m;
    const int64_t *s;
    int n = byocl_attrs_get_ints(attrs, "shape", &s);
    if (n > BYOCL_MAX_RANK)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "attribute 'shape' of broadcast_to has %d dims; at most %d are "
                               "supported",
                               n, BYOCL_MAX_RANK);
    for (int i = 0; i < n; i++)
        if (s[i] < 0)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "bad value for attribute 'shape' of broadcast_to: dim %d is "
                                   "%lld",
                                   i, (long long)s[i]);
    return BYOCL_OK;
}

static byocl_status broadcast_to_map(const byocl_attrs *attrs, const byocl_shape *in,
                                     byocl_shape *out, ops_affine *map, byocl_error *err)
{
    const int64_t *s;
    int n = byocl_attrs_get_ints(attrs, "shape", &s);
    byocl_shape want = {.rank = n}, got;
    for (int i = 0; i < n; i++)
        want.dims[i] = s[i];
    byocl_status st = ops_broadcast_shapes(in, &want, &got, err);
    if (st == BYOCL_OK && !byocl_shape_equal(&got, &want)) {
        char a[160], b[160];
        st = byocl_error_set(err, BYOCL_ERR_TYPE, "broadcast_to: %s does not broadcast to %s",
                             byocl_shape_str(in, a, sizeof a),
                             byocl_shape_str(&want, b, sizeof b));
    }
    if (st != BYOCL_OK)
        return st;
    int64_t stride[BYOCL_MAX_RANK];
    c_strides(in, stride);
    *out = want;
    map->base = 0;
    for (int d = 0; d < n; d++) {
        int di = d - (n - in->rank);
        map->coef[d] = di < 0 || in->dims[di] == 1 ? 0 : stride[di];
    }
    return BYOCL_OK;
}

bool ops_is_affine(const char *op)
{
    return strcmp(op, "strided_slice") == 0 || strcmp(op, "broadcast_to") == 0;
}

byocl_status ops_affine_map(const char *op, const byocl_attrs *attrs, const byocl_shape *in,
                            byocl_shape *out, ops_affine *map, byocl_error *err)
{
    if (strcmp(op, "strided_slice") == 0)
        return strided_slice_map(attrs, in, out, map, err);
    return broadcast_to_map(attrs, in, out, map, err);
}

#define AFFINE_OP(name)                                                                    \
    static byocl_status infer_##name(const byocl_infer_ctx *ctx, byocl_type *out,          \
                                     byocl_error *err)                                     \
    {                                                                                      \
        return infer_affine(#name, ctx, out, err);                                         \
    }                                                                                      \
    static byocl_status name##_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, \
                                   int n_in, byocl_tensor *const *out, int n_out,          \
                                   byocl_error *err)                                       \
    {                                                                                      \
        return affine_ref(#name, attrs, in, n_in, out, n_out, err);                        \
    }

static byocl_status infer_affine(const char *op, const byocl_infer_ctx *ctx, byocl_type *out,
                                 byocl_error *err)
{
    const byocl_type *in;
    byocl_shape shape;
    ops_affine map;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    if (st == BYOCL_OK)
        st = ops_affine_map(op, ctx->attrs, &in->shape, &shape, &map, err);
    if (st == BYOCL_OK)
        *out = byocl_type_tensor(in->dtype, shape.rank, shape.dims);
    return st;
}

/* Checks a kernel's output against the type relation's dtype and shape. */
static byocl_status check_out(const char *op, byocl_dtype dtype, const byocl_shape *want,
                              const byocl_tensor *out, byocl_error *err)
{
    char a[160], b[160];
    if (byocl_tensor_dtype(out) != dtype)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s kernel: output dtype %s, expected %s",
                               op, byocl_dtype_name(byocl_tensor_dtype(out)),
                               byocl_dtype_name(dtype));
    if (!byocl_shape_equal(want, byocl_tensor_shape(out)))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s kernel: output shape %s, expected %s",
                               op, byocl_shape_str(byocl_tensor_shape(out), a, sizeof a),
                               byocl_shape_str(want, b, sizeof b));
    return BYOCL_OK;
}

static byocl_status affine_ref(const char *op, const byocl_attrs *attrs,
                               const byocl_tensor *const *in, int n_in,
                               byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = elemwise_check_arity(op, n_in, 1, n_out, 1, err);
    byocl_shape shape;
    ops_affine map;
    if (st == BYOCL_OK)
        st = ops_affine_map(op, attrs, byocl_tensor_shape(in[0]), &shape, &map, err);
    if (st == BYOCL_OK)
        st = check_out(op, byocl_tensor_dtype(in[0]), &shape, out[0], err);
    if (st != BYOCL_OK)
        return st;
    size_t es = byocl_dtype_size(byocl_tensor_dtype(in[0]));
    const unsigned char *src = byocl_tensor_cdata(in[0]);
    unsigned char *dst = byocl_tensor_data(out[0]);
    int64_t idx[BYOCL_MAX_RANK] = {0}, n = byocl_shape_numel(&shape);
    for (int64_t i = 0; i < n; i++) {
        int64_t at = map.base;
        for (int d = 0; d < shape.rank; d++)
            at += idx[d] * map.coef[d];
        memcpy(dst + (size_t)i * es, src + (size_t)at * es, es);
        next_index(&shape, idx);
    }
    return BYOCL_OK;
}

AFFINE_OP(strided_slice)
AFFINE_OP(broadcast_to)

/* ------------------------------------------------------------- take and gather */

ops_take_mode ops_take_mode_of(const byocl_attrs *attrs)
{
    const char *mode = byocl_attrs_get_str(attrs, "mode", "clip");
    return strcmp(mode, "wrap") == 0 ? OPS_TAKE_WRAP
           : strcmp(mode, "fast") == 0 ? OPS_TAKE_FAST
                                       : OPS_TAKE_CLIP;
}

int ops_take_axis(const byocl_attrs *attrs, int rank)
{
    int64_t a = byocl_attrs_get_int(attrs, "axis", INT64_MIN);
    return a == INT64_MIN ? -1 : (int)(a < 0 ? a + rank : a);
}

int ops_take_batch_dims(const byocl_attrs *attrs, int idx_rank)
{
    int64_t b = byocl_attrs_get_int(attrs, "batch_dims", 0);
    return (int)(b < 0 ? b + idx_rank : b);
}

void ops_take_plan_make(const byocl_attrs *attrs, const byocl_shape *data,
                        const byocl_shape *idx, ops_take_plan *p)
{
    int axis = ops_take_axis(attrs, data->rank), b = axis < 0 ? 0 : ops_take_batch_dims(attrs, idx->rank);
    *p = (ops_take_plan){.batch = 1, .outer = 1, .m = 1, .inner = 1,
                         .n = axis < 0 ? byocl_shape_numel(data) : data->dims[axis]};
    for (int d = 0; axis >= 0 && d < data->rank; d++)
        if (d != axis)
            *(d < b ? &p->batch : d < axis ? &p->outer : &p->inner) *= data->dims[d];
    for (int d = b; d < idx->rank; d++)
        p->m *= idx->dims[d];
}

int ops_gather_axis(const byocl_attrs *attrs, int rank)
{
    int64_t a = byocl_attrs_get_int(attrs, "axis", 0);
    return (int)(a < 0 ? a + rank : a);
}

static byocl_status check_take_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    const char *mode = byocl_attrs_get_str(attrs, "mode", "clip");
    if (strcmp(mode, "clip") != 0 && strcmp(mode, "wrap") != 0 && strcmp(mode, "fast") != 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'mode' of take: '%s' (expected "
                               "\"clip\", \"wrap\" or \"fast\")",
                               mode);
    return BYOCL_OK;
}

static byocl_status index_arg(const char *op, const byocl_infer_ctx *ctx, const byocl_type **data,
                              const byocl_type **idx, byocl_error *err)
{
    byocl_status st = elemwise_tensor_arg(ctx, 0, data, err);
    if (st == BYOCL_OK)
        st = elemwise_tensor_arg(ctx, 1, idx, err);
    if (st == BYOCL_OK && (byocl_dtype_is_float((*idx)->dtype) || (*idx)->dtype == BYOCL_BOOL))
        st = byocl_error_set(err, BYOCL_ERR_TYPE, "%s: the indices are %s; expected an integer "
                             "dtype", op, byocl_dtype_name((*idx)->dtype));
    return st;
}

/* The axis of take or gather checked against the data's rank. */
static byocl_status index_axis(const char *op, const byocl_attrs *attrs, int rank, byocl_error *err)
{
    int64_t a = byocl_attrs_get_int(attrs, "axis", INT64_MIN);
    if (a == INT64_MIN)
        return BYOCL_OK; /* take's None */
    if (a < -rank || a >= rank)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "%s: axis %lld is out of range for rank %d (expected %d..%d)", op,
                               (long long)a, rank, -rank, rank - 1);
    return BYOCL_OK;
}

/* take's result: data[:axis] + indices[batch_dims:] + data[axis+1:], or the indices'
 * shape (axis None); the first batch_dims axes of data and indices are the same. */
static byocl_status take_shape(const byocl_attrs *attrs, const byocl_shape *data,
                               const byocl_shape *idx, byocl_shape *out, byocl_error *err)
{
    byocl_status st = index_axis("take", attrs, data->rank, err);
    if (st != BYOCL_OK)
        return st;
    int axis = ops_take_axis(attrs, data->rank);
    int64_t given = byocl_attrs_get_int(attrs, "batch_dims", 0);
    int b = ops_take_batch_dims(attrs, idx->rank);
    if (given != 0 && axis < 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "take: batch_dims %lld needs an axis (None takes from the "
                               "flattened data)", (long long)given);
    if (axis >= 0 && (b < 0 || b > idx->rank || b > axis))
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "take: batch_dims %lld is out of range for indices of rank %d "
                               "and axis %d (expected %d..%d)",
                               (long long)given, idx->rank, axis, -idx->rank,
                               idx->rank < axis ? idx->rank : axis);
    for (int d = 0; d < b; d++)
        if (data->dims[d] != idx->dims[d]) {
            char a[160], c[160];
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "take: data %s and indices %s differ in batch axis %d "
                                   "(batch_dims %d)",
                                   byocl_shape_str(data, a, sizeof a),
                                   byocl_shape_str(idx, c, sizeof c), d, b);
        }
    int64_t n = axis < 0 ? byocl_shape_numel(data) : data->dims[axis];
    if (n == 0 && byocl_shape_numel(idx) > 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "take: indices into an empty axis (nothing to take)");
    if (axis < 0) {
        *out = *idx;
        return BYOCL_OK;
    }
    if (data->rank - 1 + idx->rank - b > BYOCL_MAX_RANK)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "take: the result would have rank %d; at most %d is supported",
                               data->rank - 1 + idx->rank - b, BYOCL_MAX_RANK);
    out->rank = 0;
    for (int d = 0; d < axis; d++)
        out->dims[out->rank++] = data->dims[d];
    for (int d = b; d < idx->rank; d++)
        out->dims[out->rank++] = idx->dims[d];
    for (int d = axis + 1; d < data->rank; d++)
        out->dims[out->rank++] = data->dims[d];
    return BYOCL_OK;
}

/* gather's and scatter_elements' rule: indices of the data's rank, no larger than the
 * data off the axis, and none into an empty axis. */
static byocl_status along_axis_fit(const char *op, const byocl_attrs *attrs,
                                   const byocl_shape *data, const byocl_shape *idx,
                                   byocl_error *err)
{
    char a[160], b[160];
    byocl_status st = index_axis(op, attrs, data->rank, err);
    if (st != BYOCL_OK)
        return st;
    int axis = ops_gather_axis(attrs, data->rank);
    bool ok = idx->rank == data->rank;
    for (int d = 0; ok && d < data->rank; d++)
        ok = d == axis || idx->dims[d] <= data->dims[d];
    if (!ok)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "%s: indices %s do not fit data %s (same rank, no larger "
                               "off axis %d)",
                               op, byocl_shape_str(idx, a, sizeof a),
                               byocl_shape_str(data, b, sizeof b), axis);
    if (data->dims[axis] == 0 && byocl_shape_numel(idx) > 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "%s: indices into an empty axis", op);
    return BYOCL_OK;
}

/* gather's result: the indices' shape. */
static byocl_status gather_shape(const byocl_attrs *attrs, const byocl_shape *data,
                                 const byocl_shape *idx, byocl_shape *out, byocl_error *err)
{
    byocl_status st = along_axis_fit("gather", attrs, data, idx, err);
    if (st == BYOCL_OK)
        *out = *idx;
    return st;
}

typedef byocl_status (*index_shape_fn)(const byocl_attrs *attrs, const byocl_shape *data,
                                       const byocl_shape *idx, byocl_shape *out,
                                       byocl_error *err);

static byocl_status infer_indexed(const char *op, index_shape_fn shape_fn,
                                  const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *data, *idx;
    byocl_shape shape;
    byocl_status st = index_arg(op, ctx, &data, &idx, err);
    if (st == BYOCL_OK)
        st = shape_fn(ctx->attrs, &data->shape, &idx->shape, &shape, err);
    if (st == BYOCL_OK)
        *out = byocl_type_tensor(data->dtype, shape.rank, shape.dims);
    return st;
}

/* An index into an axis of n elements as take's mode reads it; -1 when out of range
 * where the mode has no answer (gather and "fast"). Negative indices count from the end
 * in gather (as ONNX GatherElements). */
static int64_t resolve_index(int64_t v, int64_t n, int mode)
{
    if (mode == OPS_TAKE_CLIP)
        return clamp64(v, 0, n - 1);
    if (mode == OPS_TAKE_WRAP)
        return ((v % n) + n) % n;
    if (mode < 0 && v < 0) /* gather */
        v += n;
    return v >= 0 && v < n ? v : -1;
}

static byocl_status bad_index(const char *op, int64_t v, int64_t n, byocl_error *err)
{
    return byocl_error_set(err, BYOCL_ERR_RUNTIME, "%s: index %lld is out of range for an axis "
                           "of %lld", op, (long long)v, (long long)n);
}

static byocl_status take_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, int n_in,
                             byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = elemwise_check_arity("take", n_in, 2, n_out, 1, err);
    const byocl_shape *ds = n_in == 2 ? byocl_tensor_shape(in[0]) : NULL;
    byocl_shape shape;
    if (st == BYOCL_OK)
        st = take_shape(attrs, ds, byocl_tensor_shape(in[1]), &shape, err);
    if (st == BYOCL_OK)
        st = check_out("take", byocl_tensor_dtype(in[0]), &shape, out[0], err);
    if (st != BYOCL_OK)
        return st;
    ops_take_plan p;
    ops_take_plan_make(attrs, ds, byocl_tensor_shape(in[1]), &p);
    size_t es = byocl_dtype_size(byocl_tensor_dtype(in[0]));
    const unsigned char *src = byocl_tensor_cdata(in[0]);
    unsigned char *dst = byocl_tensor_data(out[0]);
    int mode = (int)ops_take_mode_of(attrs);
    for (int64_t bo = 0; bo < p.batch * p.outer; bo++)
        for (int64_t j = 0; j < p.m; j++) {
            int64_t v = elemwise_load_int(in[1], bo / p.outer * p.m + j);
            int64_t at = resolve_index(v, p.n, mode);
            if (at < 0)
                return bad_index("take", v, p.n, err);
            memcpy(dst + (size_t)((bo * p.m + j) * p.inner) * es,
                   src + (size_t)((bo * p.n + at) * p.inner) * es, (size_t)p.inner * es);
        }
    return BYOCL_OK;
}

static byocl_status gather_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                               int n_in, byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = elemwise_check_arity("gather", n_in, 2, n_out, 1, err);
    const byocl_shape *ds = n_in == 2 ? byocl_tensor_shape(in[0]) : NULL;
    byocl_shape shape;
    if (st == BYOCL_OK)
        st = gather_shape(attrs, ds, byocl_tensor_shape(in[1]), &shape, err);
    if (st == BYOCL_OK)
        st = check_out("gather", byocl_tensor_dtype(in[0]), &shape, out[0], err);
    if (st != BYOCL_OK)
        return st;
    int axis = ops_gather_axis(attrs, ds->rank);
    int64_t stride[BYOCL_MAX_RANK], idx[BYOCL_MAX_RANK] = {0}, m = byocl_shape_numel(&shape);
    c_strides(ds, stride);
    size_t es = byocl_dtype_size(byocl_tensor_dtype(in[0]));
    const unsigned char *src = byocl_tensor_cdata(in[0]);
    unsigned char *dst = byocl_tensor_data(out[0]);
    for (int64_t i = 0; i < m; i++) {
        int64_t v = elemwise_load_int(in[1], i), n = ds->dims[axis];
        int64_t at = resolve_index(v, n, -1);
        if (at < 0)
            return bad_index("gather", v, n, err);
        int64_t off = 0;
        for (int d = 0; d < ds->rank; d++)
            off += (d == axis ? at : idx[d]) * stride[d];
        memcpy(dst + (size_t)i * es, src + (size_t)off * es, es);
        next_index(&shape, idx);
    }
    return BYOCL_OK;
}

static byocl_status infer_take(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    return infer_indexed("take", take_shape, ctx, out, err);
}

static byocl_status infer_gather(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    return infer_indexed("gather", gather_shape, ctx, out, err);
}

/* ------------------------------------------------------------- arange and shape_of */

/* The dtype attribute (checked by check_dtype_attr). */
static byocl_dtype dtype_attr(const byocl_attrs *attrs, const char *def)
{
    byocl_dtype d = BYOCL_FLOAT32;
    byocl_dtype_from_name(byocl_attrs_get_str(attrs, "dtype", def), &d);
    return d;
}

static byocl_status check_dtype_attr(const char *op, const byocl_attrs *attrs, const char *def,
                                     byocl_error *err)
{
    byocl_dtype d;
    const char *name = byocl_attrs_get_str(attrs, "dtype", def);
    if (!byocl_dtype_from_name(name, &d))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'dtype' of %s: unknown dtype '%s'", op,
                               name);
    return BYOCL_OK;
}

int64_t ops_arange_count(double start, double stop, double step)
{
    double n = ceil((stop - start) / step);
    return n > 0 ? (int64_t)n : 0;
}

#define ARANGE_MAX_COUNT ((int64_t)1 << 40)

static byocl_status check_arange_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    return check_dtype_attr("arange", attrs, "float32", err);
}

/* A scalar argument of a numeric dtype: arange's start, stop and step, trilu's k (an
 * integer). */
static byocl_status scalar_arg(const char *op, const char *what, const byocl_infer_ctx *ctx,
                               int k, bool integer, byocl_error *err)
{
    const byocl_type *t;
    char a[160];
    byocl_status st = elemwise_tensor_arg(ctx, k, &t, err);
    if (st == BYOCL_OK && t->shape.rank != 0)
        st = byocl_error_set(err, BYOCL_ERR_TYPE, "%s: %s is %s; expected a scalar", op, what,
                             byocl_shape_str(&t->shape, a, sizeof a));
    if (st == BYOCL_OK && (t->dtype == BYOCL_BOOL || (integer && byocl_dtype_is_float(t->dtype))))
        st = byocl_error_set(err, BYOCL_ERR_TYPE, "%s: %s is %s; expected %s", op, what,
                             byocl_dtype_name(t->dtype), integer ? "an integer" : "a number");
    return st;
}

/* arange(start, stop, step): the count is the result's shape, so the type relation needs
 * the three values: constant arguments (as TVM's static shapes need them too). */
static byocl_status infer_arange(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    static const char *const names[3] = {"start", "stop", "step"};
    double v[3];
    for (int k = 0; k < 3; k++) {
        byocl_status st = scalar_arg("arange", names[k], ctx, k, false, err);
        if (st != BYOCL_OK)
            return st;
    }
    for (int k = 0; k < 3; k++) {
        const byocl_tensor *c = ctx->arg_values ? ctx->arg_values[k] : NULL;
        if (!c)
            return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                   "arange: %s is not a constant; the result's shape needs "
                                   "start, stop and step when compiling",
                                   names[k]);
        v[k] = byocl_tensor_get(c, 0);
        if (!isfinite(v[k]) || (k == 2 && v[k] == 0))
            return byocl_error_set(err, BYOCL_ERR_TYPE, "arange: %s is %g; expected a finite "
                                   "number%s", names[k], v[k], k == 2 ? " other than 0" : "");
    }
    if ((v[1] - v[0]) / v[2] > (double)ARANGE_MAX_COUNT)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "arange: %g values are too many (at most %lld)",
                               ceil((v[1] - v[0]) / v[2]), (long long)ARANGE_MAX_COUNT);
    int64_t n = ops_arange_count(v[0], v[1], v[2]);
    *out = byocl_type_tensor(dtype_attr(ctx->attrs, "float32"), 1, &n);
    return BYOCL_OK;
}

/* start + i * step in double, stored as the dtype stores a double; the count is the
 * output's (from the type relation). */
static byocl_status arange_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                               int n_in, byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = elemwise_check_arity("arange", n_in, 3, n_out, 1, err);
    if (st != BYOCL_OK)
        return st;
    double start = byocl_tensor_get(in[0], 0), step = byocl_tensor_get(in[2], 0);
    int64_t n = ops_arange_count(start, byocl_tensor_get(in[1], 0), step);
    byocl_shape shape = {.rank = 1, .dims = {n}};
    st = check_out("arange", dtype_attr(attrs, "float32"), &shape, out[0], err);
    for (int64_t i = 0; st == BYOCL_OK && i < n; i++)
        byocl_tensor_set(out[0], i, start + (double)i * step);
    return st;
}

static byocl_status check_shape_of_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    byocl_status st = check_dtype_attr("shape_of", attrs, "int32", err);
    byocl_dtype d = dtype_attr(attrs, "int32");
    if (st == BYOCL_OK && d != BYOCL_INT32 && d != BYOCL_INT64)
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "bad value for attribute 'dtype' of shape_of: %s (expected int32 "
                             "or int64)",
                             byocl_dtype_name(d));
    return st;
}

static byocl_status infer_shape_of(const byocl_infer_ctx *ctx, byocl_type *out,
                                   byocl_error *err)
{
    const byocl_type *in;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    int64_t rank = st == BYOCL_OK ? in->shape.rank : 0;
    if (st == BYOCL_OK)
        *out = byocl_type_tensor(dtype_attr(ctx->attrs, "int32"), 1, &rank);
    return st;
}

static byocl_status shape_of_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                 int n_in, byocl_tensor *const *out, int n_out,
                                 byocl_error *err)
{
    byocl_status st = elemwise_check_arity("shape_of", n_in, 1, n_out, 1, err);
    const byocl_shape *s = st == BYOCL_OK ? byocl_tensor_shape(in[0]) : NULL;
    byocl_shape want = {.rank = 1, .dims = {s ? s->rank : 0}};
    if (st == BYOCL_OK)
        st = check_out("shape_of", dtype_attr(attrs, "int32"), &want, out[0], err);
    for (int d = 0; st == BYOCL_OK && d < s->rank; d++)
        elemwise_store_int(out[0], d, s->dims[d]);
    return st;
}

/* ------------------------------------------------------------- trilu and cumsum */

bool ops_trilu_keeps(const byocl_attrs *attrs, int64_t k, int64_t row, int64_t col)
{
    return byocl_attrs_get_bool(attrs, "upper", true) ? col - row >= k : col - row <= k;
}

/* trilu(data, k): k a scalar integer, read when running (like nn.pad's value). */
static byocl_status infer_trilu(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *in;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    if (st == BYOCL_OK && in->shape.rank < 2)
        st = byocl_error_set(err, BYOCL_ERR_TYPE,
                             "trilu: the input has rank %d; expected at least 2 (matrices)",
                             in->shape.rank);
    if (st == BYOCL_OK)
        st = scalar_arg("trilu", "k", ctx, 1, true, err);
    if (st == BYOCL_OK)
        *out = *in;
    return st;
}

/* Each matrix of the last two axes keeps the elements ops_trilu_keeps says and zeros the
 * others (all-zero bytes: 0 in every dtype). */
static byocl_status trilu_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, int n_in,
                              byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = elemwise_check_arity("trilu", n_in, 2, n_out, 1, err);
    const byocl_shape *s = st == BYOCL_OK ? byocl_tensor_shape(in[0]) : NULL;
    if (st == BYOCL_OK)
        st = check_out("trilu", byocl_tensor_dtype(in[0]), s, out[0], err);
    if (st != BYOCL_OK)
        return st;
    int64_t rows = s->dims[s->rank - 2], cols = s->dims[s->rank - 1];
    int64_t n = byocl_shape_numel(s), k = elemwise_load_int(in[1], 0);
    size_t es = byocl_dtype_size(byocl_tensor_dtype(in[0]));
    const unsigned char *src = byocl_tensor_cdata(in[0]);
    unsigned char *dst = byocl_tensor_data(out[0]);
    for (int64_t i = 0; i < n; i++) {
        int64_t col = i % cols, row = i / cols % rows;
        if (ops_trilu_keeps(attrs, k, row, col))
            memcpy(dst + (size_t)i * es, src + (size_t)i * es, es);
        else
            memset(dst + (size_t)i * es, 0, es);
    }
    return BYOCL_OK;
}

bool ops_cumsum_plan(const byocl_attrs *attrs, const byocl_shape *in, int64_t *outer,
                     int64_t *len, int64_t *inner)
{
    int axis = ops_take_axis(attrs, in->rank);
    *outer = *inner = 1;
    *len = axis < 0 ? byocl_shape_numel(in) : in->dims[axis];
    for (int d = 0; axis >= 0 && d < in->rank; d++)
        if (d != axis)
            *(d < axis ? outer : inner) *= in->dims[d];
    return byocl_attrs_get_bool(attrs, "reverse", false);
}

byocl_dtype ops_cumsum_dtype(const byocl_attrs *attrs, byocl_dtype in)
{
    const char *name = byocl_attrs_get_str(attrs, "dtype", NULL);
    byocl_dtype d = in;
    if (name)
        byocl_dtype_from_name(name, &d);
    return d;
}

static byocl_status check_cumsum_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    if (!byocl_attrs_get_str(attrs, "dtype", NULL))
        return BYOCL_OK;
    byocl_status st = check_dtype_attr("cumsum", attrs, "float32", err);
    byocl_dtype d = dtype_attr(attrs, "float32");
    if (st == BYOCL_OK && d == BYOCL_BOOL)
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "bad value for attribute 'dtype' of cumsum: bool (expected a "
                             "number dtype)");
    return st;
}

/* cumsum's result: the input's shape, or flattened when axis is None. */
static byocl_status infer_cumsum(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *in;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    if (st == BYOCL_OK)
        st = index_axis("cumsum", ctx->attrs, in->shape.rank, err);
    if (st == BYOCL_OK && in->dtype == BYOCL_BOOL &&
        ops_cumsum_dtype(ctx->attrs, in->dtype) == BYOCL_BOOL)
        st = byocl_error_set(err, BYOCL_ERR_TYPE, "cumsum: a bool input needs a number dtype "
                             "attribute");
    if (st != BYOCL_OK)
        return st;
    byocl_dtype dt = ops_cumsum_dtype(ctx->attrs, in->dtype);
    int64_t n = byocl_shape_numel(&in->shape);
    *out = ops_take_axis(ctx->attrs, in->shape.rank) < 0 ? byocl_type_tensor(dt, 1, &n)
                                                         : byocl_type_tensor(dt, in->shape.rank,
                                                                             in->shape.dims);
    return BYOCL_OK;
}

/* Running sums along the axis (backwards with reverse; exclusive: before the element), in
 * double for float dtypes and in int64 for integer ones. */
static byocl_status cumsum_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                               int n_in, byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = elemwise_check_arity("cumsum", n_in, 1, n_out, 1, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_shape *s = byocl_tensor_shape(in[0]);
    byocl_dtype dt = ops_cumsum_dtype(attrs, byocl_tensor_dtype(in[0]));
    int64_t outer, len, inner, n = byocl_shape_numel(s);
    bool reverse = ops_cumsum_plan(attrs, s, &outer, &len, &inner);
    byocl_shape flat = {.rank = 1, .dims = {n}};
    st = check_out("cumsum", dt, ops_take_axis(attrs, s->rank) < 0 ? &flat : s, out[0], err);
    if (st != BYOCL_OK)
        return st;
    bool exclusive = byocl_attrs_get_bool(attrs, "exclusive", false);
    bool is_float = byocl_dtype_is_float(dt);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            double acc = 0;
            int64_t iacc = 0;
            for (int64_t t = 0; t < len; t++) {
                int64_t at = (o * len + (reverse ? len - 1 - t : t)) * inner + j;
                double v = is_float ? byocl_tensor_get(in[0], at) : 0;
                int64_t iv = is_float ? 0 : elemwise_load_int(in[0], at);
                if (!exclusive) {
                    acc += v;
                    iacc = (int64_t)((uint64_t)iacc + (uint64_t)iv);
                }
                if (is_float)
                    byocl_tensor_set(out[0], at, acc);
                else
                    elemwise_store_int(out[0], at, iacc);
                if (exclusive) {
                    acc += v;
                    iacc = (int64_t)((uint64_t)iacc + (uint64_t)iv);
                }
            }
        }
    return BYOCL_OK;
}

/* ------------------------------------------------------------- scatter and gather_nd */

static const char *const scatter_reduce_names[] = {"update", "add", "mul", "min", "max"};

/* The reduction of scatter_elements ("reduction") or scatter_nd ("mode"); checked. */
ops_scatter_reduce ops_scatter_reduce_of(const byocl_attrs *attrs)
{
    const char *s = byocl_attrs_get_str(attrs, "reduction",
                                        byocl_attrs_get_str(attrs, "mode", "update"));
    for (int k = 0; k < ARRAY_LEN(scatter_reduce_names); k++)
        if (strcmp(s, scatter_reduce_names[k]) == 0)
            return (ops_scatter_reduce)k;
    return OPS_SCATTER_UPDATE;
}

static byocl_status check_scatter_reduce(const char *op, const char *key,
                                         const byocl_attrs *attrs, byocl_error *err)
{
    const char *s = byocl_attrs_get_str(attrs, key, "update");
    for (int k = 0; k < ARRAY_LEN(scatter_reduce_names); k++)
        if (strcmp(s, scatter_reduce_names[k]) == 0)
            return BYOCL_OK;
    if (strcmp(s, "mean") == 0)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "bad value for attribute '%s' of %s: 'mean' is not supported "
                               "(\"update\", \"add\", \"mul\", \"min\" or \"max\")",
                               key, op);
    return byocl_error_set(err, BYOCL_ERR_INVALID,
                           "bad value for attribute '%s' of %s: '%s' (expected \"update\", "
                           "\"add\", \"mul\", \"min\" or \"max\")",
                           key, op, s);
}

static byocl_status check_scatter_elements_attrs(byocl_module *m, byocl_attrs *attrs,
                                                 byocl_error *err)
{
    (void)m;
    return check_scatter_reduce("scatter_elements", "reduction", attrs, err);
}

static byocl_status check_scatter_nd_attrs(byocl_module *m, byocl_attrs *attrs,
                                           byocl_error *err)
{
    (void)m;
    return check_scatter_reduce("scatter_nd", "mode", attrs, err);
}

/* Data, indices and updates of a scatter: updates in the data's dtype, integer indices,
 * and no add or mul on bool data (their sums have no bool answer). */
static byocl_status scatter_args(const char *op, const byocl_infer_ctx *ctx,
                                 const byocl_type **data, const byocl_type **idx,
                                 const byocl_type **upd, byocl_error *err)
{
    byocl_status st = index_arg(op, ctx, data, idx, err);
    if (st == BYOCL_OK)
        st = elemwise_tensor_arg(ctx, 2, upd, err);
    if (st == BYOCL_OK && (*upd)->dtype != (*data)->dtype)
        st = byocl_error_set(err, BYOCL_ERR_TYPE, "%s: the updates are %s but the data %s", op,
                             byocl_dtype_name((*upd)->dtype), byocl_dtype_name((*data)->dtype));
    ops_scatter_reduce r = ops_scatter_reduce_of(ctx->attrs);
    if (st == BYOCL_OK && (*data)->dtype == BYOCL_BOOL &&
        (r == OPS_SCATTER_ADD || r == OPS_SCATTER_MUL))
        st = byocl_error_set(err, BYOCL_ERR_TYPE, "%s: reduction \"%s\" of bool data (bool "
                             "takes \"update\", \"min\" and \"max\")", op,
                             scatter_reduce_names[r]);
    return st;
}

/* scatter_elements: indices and updates of one shape, the data's rank, no larger than the
 * data off the axis. */
static byocl_status scatter_elements_check(const byocl_attrs *attrs, const byocl_shape *data,
                                           const byocl_shape *idx, const byocl_shape *upd,
                                           byocl_error *err)
{
    char a[160], b[160];
    if (!byocl_shape_equal(idx, upd))
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "scatter_elements: indices %s and updates %s differ in shape",
                               byocl_shape_str(idx, a, sizeof a), byocl_shape_str(upd, b, sizeof b));
    return along_axis_fit("scatter_elements", attrs, data, idx, err);
}

static byocl_status infer_scatter_elements(const byocl_infer_ctx *ctx, byocl_type *out,
                                           byocl_error *err)
{
    const byocl_type *data, *idx, *upd;
    byocl_status st = scatter_args("scatter_elements", ctx, &data, &idx, &upd, err);
    if (st == BYOCL_OK)
        st = scatter_elements_check(ctx->attrs, &data->shape, &idx->shape, &upd->shape, err);
    if (st == BYOCL_OK)
        *out = *data;
    return st;
}

/* gather_nd and scatter_nd as Relay lays them out: indices (M, B_0.., Y_0..) index the M
 * axes after the b batch axes of data (B_0.., X_0.., S_0..); the slices S are whole. */
byocl_status ops_nd_plan_make(const char *op, int batch_dims, const byocl_shape *data,
                              const byocl_shape *idx, ops_nd_plan *p, byocl_error *err)
{
    char a[160], b[160];
    memset(p, 0, sizeof *p);
    if (idx->rank < 1)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "%s: the indices are a scalar; expected rank 1 or more with the "
                               "index depth first",
                               op);
    int64_t m = idx->dims[0];
    if (batch_dims < 0 || batch_dims >= idx->rank || batch_dims > data->rank)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "%s: batch_dims %d does not fit indices %s and data %s", op,
                               batch_dims, byocl_shape_str(idx, a, sizeof a),
                               byocl_shape_str(data, b, sizeof b));
    if (m > data->rank - batch_dims)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "%s: indices %s index %lld axes but data %s has %d after the "
                               "batch axes",
                               op, byocl_shape_str(idx, a, sizeof a), (long long)m,
                               byocl_shape_str(data, b, sizeof b), data->rank - batch_dims);
    p->m = (int)m;
    p->batch = p->positions = p->slice = p->batch_size = 1;
    for (int d = 0; d < batch_dims; d++) {
        if (idx->dims[1 + d] != data->dims[d])
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "%s: batch axis %d is %lld in the indices %s but %lld in the "
                                   "data %s",
                                   op, d, (long long)idx->dims[1 + d],
                                   byocl_shape_str(idx, a, sizeof a), (long long)data->dims[d],
                                   byocl_shape_str(data, b, sizeof b));
        p->batch *= data->dims[d];
    }
    for (int d = 1 + batch_dims; d < idx->rank; d++)
        p->positions *= idx->dims[d];
    for (int d = batch_dims + p->m; d < data->rank; d++)
        p->slice *= data->dims[d];
    int64_t s = p->slice;
    for (int j = p->m - 1; j >= 0; j--) {
        p->dim[j] = data->dims[batch_dims + j];
        p->stride[j] = s;
        s *= p->dim[j];
    }
    p->batch_size = s;
    /* the result / updates: B.., Y.., S.. */
    int rank = 0;
    for (int d = 1; d < idx->rank; d++)
        p->shape.dims[rank++] = idx->dims[d];
    if (rank + data->rank - batch_dims - p->m > BYOCL_MAX_RANK)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "%s: the result would have rank %d; at most %d is supported", op,
                               rank + data->rank - batch_dims - p->m, BYOCL_MAX_RANK);
    for (int d = batch_dims + p->m; d < data->rank; d++)
        p->shape.dims[rank++] = data->dims[d];
    p->shape.rank = rank;
    for (int j = 0; j < p->m; j++)
        if (p->dim[j] == 0 && p->batch * p->positions > 0)
            return byocl_error_set(err, BYOCL_ERR_TYPE, "%s: indices into an empty axis", op);
    return BYOCL_OK;
}

static byocl_status check_gather_nd_attrs(byocl_module *m, byocl_attrs *attrs,
                                          byocl_error *err)
{
    (void)m;
    if (byocl_attrs_get_int(attrs, "batch_dims", 0) < 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'batch_dims' of gather_nd: %lld "
                               "(expected 0 or more)",
                               (long long)byocl_attrs_get_int(attrs, "batch_dims", 0));
    return BYOCL_OK;
}

static byocl_status infer_gather_nd(const byocl_infer_ctx *ctx, byocl_type *out,
                                    byocl_error *err)
{
    const byocl_type *data, *idx;
    ops_nd_plan p;
    byocl_status st = index_arg("gather_nd", ctx, &data, &idx, err);
    if (st == BYOCL_OK)
        st = ops_nd_plan_make("gather_nd", (int)byocl_attrs_get_int(ctx->attrs, "batch_dims", 0),
                              &data->shape, &idx->shape, &p, err);
    int64_t index_rank = byocl_attrs_get_int(ctx->attrs, "index_rank", INT64_MIN);
    if (st == BYOCL_OK && index_rank != INT64_MIN && index_rank != p.m)
        st = byocl_error_set(err, BYOCL_ERR_TYPE,
                             "gather_nd: index_rank is %lld but the index depth (the indices' "
                             "first dimension) is %d",
                             (long long)index_rank, p.m);
    if (st == BYOCL_OK)
        *out = byocl_type_tensor(data->dtype, p.shape.rank, p.shape.dims);
    return st;
}

static byocl_status infer_scatter_nd(const byocl_infer_ctx *ctx, byocl_type *out,
                                     byocl_error *err)
{
    const byocl_type *data, *idx, *upd;
    ops_nd_plan p;
    char a[160], b[160], c[160], e[160];
    byocl_status st = scatter_args("scatter_nd", ctx, &data, &idx, &upd, err);
    if (st == BYOCL_OK)
        st = ops_nd_plan_make("scatter_nd", 0, &data->shape, &idx->shape, &p, err);
    if (st == BYOCL_OK && !byocl_shape_equal(&p.shape, &upd->shape))
        st = byocl_error_set(err, BYOCL_ERR_TYPE,
                             "scatter_nd: the updates are %s; indices %s into data %s need %s",
                             byocl_shape_str(&upd->shape, a, sizeof a),
                             byocl_shape_str(&idx->shape, b, sizeof b),
                             byocl_shape_str(&data->shape, c, sizeof c),
                             byocl_shape_str(&p.shape, e, sizeof e));
    if (st == BYOCL_OK)
        *out = *data;
    return st;
}

/* The data offset of position (batch bt, position y) of an nd plan, reading the M index
 * rows; -1 with the error set when an index is out of range. */
static int64_t nd_offset(const char *op, const ops_nd_plan *p, const byocl_tensor *idx,
                         int64_t bt, int64_t y, byocl_error *err)
{
    int64_t off = bt * p->batch_size, row = p->batch * p->positions;
    for (int j = 0; j < p->m; j++) {
        int64_t v = elemwise_load_int(idx, j * row + bt * p->positions + y);
        int64_t at = resolve_index(v, p->dim[j], -1);
        if (at < 0) {
            bad_index(op, v, p->dim[j], err);
            return -1;
        }
        off += at * p->stride[j];
    }
    return off;
}

static byocl_status gather_nd_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                  int n_in, byocl_tensor *const *out, int n_out,
                                  byocl_error *err)
{
    byocl_status st = elemwise_check_arity("gather_nd", n_in, 2, n_out, 1, err);
    ops_nd_plan p;
    if (st == BYOCL_OK)
        st = ops_nd_plan_make("gather_nd", (int)byocl_attrs_get_int(attrs, "batch_dims", 0),
                              byocl_tensor_shape(in[0]), byocl_tensor_shape(in[1]), &p, err);
    if (st == BYOCL_OK)
        st = check_out("gather_nd", byocl_tensor_dtype(in[0]), &p.shape, out[0], err);
    if (st != BYOCL_OK)
        return st;
    size_t es = byocl_dtype_size(byocl_tensor_dtype(in[0]));
    const unsigned char *src = byocl_tensor_cdata(in[0]);
    unsigned char *dst = byocl_tensor_data(out[0]);
    for (int64_t bt = 0; bt < p.batch; bt++)
        for (int64_t y = 0; y < p.positions; y++) {
            int64_t off = nd_offset("gather_nd", &p, in[1], bt, y, err);
            if (off < 0)
                return err->status;
            memcpy(dst + (size_t)((bt * p.positions + y) * p.slice) * es,
                   src + (size_t)off * es, (size_t)p.slice * es);
        }
    return BYOCL_OK;
}

/* out[at] combined with updates[from] by the reduction: floats in double (each result
 * rounded to the dtype when stored, as one float op rounds), integers in 64 bits wrapped
 * to the dtype. min and max propagate NaN, as numpy's minimum and maximum. */
static void scatter_combine(ops_scatter_reduce r, byocl_tensor *out, int64_t at,
                            const byocl_tensor *upd, int64_t from)
{
    if (byocl_dtype_is_float(byocl_tensor_dtype(out))) {
        double a = byocl_tensor_get(out, at), b = byocl_tensor_get(upd, from);
        double v = r == OPS_SCATTER_ADD ? a + b
                   : r == OPS_SCATTER_MUL ? a * b
                   : r == OPS_SCATTER_MIN ? (isnan(a) ? a : isnan(b) ? b : b < a ? b : a)
                   : r == OPS_SCATTER_MAX ? (isnan(a) ? a : isnan(b) ? b : b > a ? b : a)
                                          : b;
        byocl_tensor_set(out, at, v);
        return;
    }
    int64_t a = elemwise_load_int(out, at), b = elemwise_load_int(upd, from);
    byocl_dtype dt = byocl_tensor_dtype(out); /* min and max: uint64 orders unsigned */
    int64_t ka = elemwise_order_key(dt, a), kb = elemwise_order_key(dt, b);
    int64_t v = r == OPS_SCATTER_ADD ? (int64_t)((uint64_t)a + (uint64_t)b)
                : r == OPS_SCATTER_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
                : r == OPS_SCATTER_MIN ? (kb < ka ? b : a)
                : r == OPS_SCATTER_MAX ? (kb > ka ? b : a)
                                       : b;
    elemwise_store_int(out, at, v);
}

/* A scatter kernel's checks; the output starts as a copy of the data. */
static byocl_status scatter_begin(const char *op, const byocl_tensor *const *in, int n_in,
                                  byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = elemwise_check_arity(op, n_in, 3, n_out, 1, err);
    if (st == BYOCL_OK)
        st = check_out(op, byocl_tensor_dtype(in[0]), byocl_tensor_shape(in[0]), out[0], err);
    if (st == BYOCL_OK && byocl_tensor_dtype(in[2]) != byocl_tensor_dtype(in[0]))
        st = byocl_error_set(err, BYOCL_ERR_INVALID, "%s kernel: updates of another dtype", op);
    if (st == BYOCL_OK)
        memcpy(byocl_tensor_data(out[0]), byocl_tensor_cdata(in[0]),
               (size_t)byocl_tensor_numel(in[0]) * byocl_dtype_size(byocl_tensor_dtype(in[0])));
    return st;
}

/* Updates in order (a repeated index takes them one after the other). */
static byocl_status scatter_elements_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                         int n_in, byocl_tensor *const *out, int n_out,
                                         byocl_error *err)
{
    byocl_status st = scatter_begin("scatter_elements", in, n_in, out, n_out, err);
    const byocl_shape *ds = st == BYOCL_OK ? byocl_tensor_shape(in[0]) : NULL;
    const byocl_shape *is = st == BYOCL_OK ? byocl_tensor_shape(in[1]) : NULL;
    if (st == BYOCL_OK)
        st = scatter_elements_check(attrs, ds, is, byocl_tensor_shape(in[2]), err);
    if (st != BYOCL_OK)
        return st;
    int axis = ops_gather_axis(attrs, ds->rank);
    ops_scatter_reduce r = ops_scatter_reduce_of(attrs);
    int64_t stride[BYOCL_MAX_RANK], idx[BYOCL_MAX_RANK] = {0}, m = byocl_shape_numel(is);
    c_strides(ds, stride);
    for (int64_t i = 0; i < m; i++) {
        int64_t v = elemwise_load_int(in[1], i), n = ds->dims[axis];
        int64_t at = resolve_index(v, n, -1);
        if (at < 0)
            return bad_index("scatter_elements", v, n, err);
        int64_t off = 0;
        for (int d = 0; d < ds->rank; d++)
            off += (d == axis ? at : idx[d]) * stride[d];
        scatter_combine(r, out[0], off, in[2], i);
        next_index(is, idx);
    }
    return BYOCL_OK;
}

static byocl_status scatter_nd_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                   int n_in, byocl_tensor *const *out, int n_out,
                                   byocl_error *err)
{
    byocl_status st = scatter_begin("scatter_nd", in, n_in, out, n_out, err);
    ops_nd_plan p;
    if (st == BYOCL_OK)
        st = ops_nd_plan_make("scatter_nd", 0, byocl_tensor_shape(in[0]),
                              byocl_tensor_shape(in[1]), &p, err);
    if (st == BYOCL_OK && !byocl_shape_equal(&p.shape, byocl_tensor_shape(in[2])))
        st = byocl_error_set(err, BYOCL_ERR_INVALID, "scatter_nd kernel: updates of another "
                             "shape");
    if (st != BYOCL_OK)
        return st;
    ops_scatter_reduce r = ops_scatter_reduce_of(attrs);
    for (int64_t y = 0; y < p.positions; y++) {
        int64_t off = nd_offset("scatter_nd", &p, in[1], 0, y, err);
        if (off < 0)
            return err->status;
        for (int64_t s = 0; s < p.slice; s++)
            scatter_combine(r, out[0], off + s, in[2], y * p.slice + s);
    }
    return BYOCL_OK;
}

/* ------------------------------------------------------------- one_hot */

static byocl_status check_one_hot_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    int64_t depth = byocl_attrs_get_int(attrs, "depth", 0);
    if (depth < 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'depth' of one_hot: %lld (expected 0 or "
                               "more)",
                               (long long)depth);
    return check_dtype_attr("one_hot", attrs, "float32", err);
}

/* Where one_hot puts the new axis: axis -1 is the last; checked against the indices'
 * rank. */
static byocl_status one_hot_axis(const byocl_attrs *attrs, int rank, int *axis,
                                 byocl_error *err)
{
    int64_t a = byocl_attrs_get_int(attrs, "axis", -1);
    if (a < -1 || a > rank)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "one_hot: axis %lld is out of range for indices of rank %d "
                               "(expected -1..%d)",
                               (long long)a, rank, rank);
    *axis = a < 0 ? rank : (int)a;
    return BYOCL_OK;
}

void ops_one_hot_plan(const byocl_attrs *attrs, const byocl_shape *idx, int64_t *outer,
                      int64_t *depth, int64_t *inner)
{
    int64_t a = byocl_attrs_get_int(attrs, "axis", -1);
    int axis = a < 0 ? idx->rank : (int)a;
    *depth = byocl_attrs_get_int(attrs, "depth", 0);
    *outer = *inner = 1;
    for (int d = 0; d < idx->rank; d++)
        *(d < axis ? outer : inner) *= idx->dims[d];
}

/* The indices' shape with depth inserted at the (checked) axis. */
static byocl_shape one_hot_shape(const byocl_attrs *attrs, const byocl_shape *idx)
{
    int64_t a = byocl_attrs_get_int(attrs, "axis", -1);
    int axis = a < 0 ? idx->rank : (int)a;
    byocl_shape s = {.rank = idx->rank + 1};
    for (int d = 0, from = 0; d < s.rank; d++)
        s.dims[d] = d == axis ? byocl_attrs_get_int(attrs, "depth", 0) : idx->dims[from++];
    return s;
}

/* one_hot(indices, on_value, off_value): the indices' shape with depth inserted at the
 * axis, in the dtype attribute; on_value and off_value are scalars. */
static byocl_status infer_one_hot(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *idx, *value;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &idx, err);
    if (st == BYOCL_OK && idx->dtype == BYOCL_BOOL)
        st = byocl_error_set(err, BYOCL_ERR_TYPE,
                             "one_hot: the indices are bool; expected a number dtype");
    static const char *const names[2] = {"on_value", "off_value"};
    for (int k = 1; st == BYOCL_OK && k <= 2; k++) {
        st = elemwise_tensor_arg(ctx, k, &value, err);
        char a[160];
        if (st == BYOCL_OK && value->shape.rank != 0)
            st = byocl_error_set(err, BYOCL_ERR_TYPE, "one_hot: %s is %s; expected a scalar",
                                 names[k - 1], byocl_shape_str(&value->shape, a, sizeof a));
    }
    int axis = 0;
    if (st == BYOCL_OK)
        st = one_hot_axis(ctx->attrs, idx->shape.rank, &axis, err);
    if (st == BYOCL_OK && idx->shape.rank + 1 > BYOCL_MAX_RANK)
        st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                             "one_hot: the result would have rank %d; at most %d is supported",
                             idx->shape.rank + 1, BYOCL_MAX_RANK);
    if (st != BYOCL_OK)
        return st;
    byocl_shape s = one_hot_shape(ctx->attrs, &idx->shape);
    *out = byocl_type_tensor(dtype_attr(ctx->attrs, "float32"), s.rank, s.dims);
    return BYOCL_OK;
}

/* out[.., k, ..] = on_value where indices[.., ..] == k, else off_value (an index outside
 * 0..depth-1, a negative one included, matches nothing: Relay's rule). */
static byocl_status one_hot_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                int n_in, byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = elemwise_check_arity("one_hot", n_in, 3, n_out, 1, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_shape *is = byocl_tensor_shape(in[0]);
    int64_t outer, depth, inner;
    ops_one_hot_plan(attrs, is, &outer, &depth, &inner);
    byocl_dtype dt = dtype_attr(attrs, "float32");
    byocl_shape want = one_hot_shape(attrs, is);
    st = check_out("one_hot", dt, &want, out[0], err);
    if (st != BYOCL_OK)
        return st;
    bool float_index = byocl_dtype_is_float(byocl_tensor_dtype(in[0]));
    bool float_out = byocl_dtype_is_float(dt);
    for (int64_t o = 0, at = 0; o < outer; o++)
        for (int64_t k = 0; k < depth; k++)
            for (int64_t j = 0; j < inner; j++, at++) {
                int64_t from = o * inner + j;
                bool hot = float_index ? byocl_tensor_get(in[0], from) == (double)k
                                       : elemwise_load_int(in[0], from) == k;
                const byocl_tensor *value = in[hot ? 1 : 2];
                if (float_out)
                    byocl_tensor_set(out[0], at, byocl_tensor_get(value, 0));
                else
                    elemwise_store_int(out[0], at, elemwise_load_int(value, 0));
            }
    return BYOCL_OK;
}

/* ------------------------------------------------------------- nn.pad */

static const char *const pad_mode_names[] = {"constant", "edge", "reflect"};

ops_pad_mode ops_pad_mode_of(const byocl_attrs *attrs)
{
    const char *mode = byocl_attrs_get_str(attrs, "pad_mode", "constant");
    for (int k = 0; k < ARRAY_LEN(pad_mode_names); k++)
        if (strcmp(mode, pad_mode_names[k]) == 0)
            return (ops_pad_mode)k;
    return OPS_PAD_CONSTANT; /* check_pad_attrs refused the others */
}

int64_t ops_pad_source(ops_pad_mode mode, int64_t i, int64_t before, int64_t n)
{
    int64_t c = i - before;
    if (c >= 0 && c < n)
        return c;
    switch (mode) {
    case OPS_PAD_EDGE: return c < 0 ? 0 : n - 1;
    case OPS_PAD_REFLECT: return c < 0 ? -c : 2 * (n - 1) - c;
    case OPS_PAD_CONSTANT: break;
    }
    return -1;
}

void ops_pad_width(const byocl_attrs *attrs, int d, int64_t *before, int64_t *after)
{
    const int64_t *w;
    int n = byocl_attrs_get_ints(attrs, "pad_width", &w);
    *before = 2 * d + 1 < n ? w[2 * d] : 0;
    *after = 2 * d + 1 < n ? w[2 * d + 1] : 0;
}

/* Relay's rules: a known mode, no negative width (nn.pad does not crop); the schema made
 * pad_width a list of pairs. */
static byocl_status check_pad_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    const char *mode = byocl_attrs_get_str(attrs, "pad_mode", "constant");
    bool known = false;
    for (int k = 0; k < ARRAY_LEN(pad_mode_names); k++)
        known = known || strcmp(mode, pad_mode_names[k]) == 0;
    if (!known)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'pad_mode' of nn.pad: '%s' (expected "
                               "\"constant\", \"edge\" or \"reflect\")",
                               mode);
    const int64_t *w;
    int n = byocl_attrs_get_ints(attrs, "pad_width", &w);
    for (int i = 0; i < n; i++)
        if (w[i] < 0)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "bad value for attribute 'pad_width' of nn.pad: %s width %lld "
                                   "of axis %d is negative (nn.pad does not crop)",
                                   i % 2 ? "after" : "before", (long long)w[i], i / 2);
    return BYOCL_OK;
}

/* The padded shape; the widths checked against the rank and, for "edge" and "reflect",
 * against the input's cells. */
static byocl_status pad_shape(const byocl_attrs *attrs, const byocl_shape *in, byocl_shape *out,
                              byocl_error *err)
{
    const int64_t *w;
    int pairs = byocl_attrs_get_ints(attrs, "pad_width", &w) / 2;
    if (pairs != in->rank)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "nn.pad: pad_width has %d pair%s for an input of rank %d "
                               "(expected one [before, after] pair per axis)",
                               pairs, pairs == 1 ? "" : "s", in->rank);
    ops_pad_mode mode = ops_pad_mode_of(attrs);
    *out = *in;
    for (int d = 0; d < in->rank; d++) {
        int64_t before, after, n = in->dims[d];
        ops_pad_width(attrs, d, &before, &after);
        if (mode == OPS_PAD_REFLECT && (before >= n || after >= n) && (before || after))
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "nn.pad: pad_mode \"reflect\" pads axis %d of %lld cells by "
                                   "[%lld, %lld]; each width must be less than the axis' length",
                                   d, (long long)n, (long long)before, (long long)after);
        if (mode == OPS_PAD_EDGE && n == 0 && (before || after))
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "nn.pad: pad_mode \"edge\" cannot pad axis %d: it has no "
                                   "cells",
                                   d);
        if (before > INT64_MAX / 4 || after > INT64_MAX / 4)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "nn.pad: pad_width [%lld, %lld] of axis %d is too large",
                                   (long long)before, (long long)after, d);
        out->dims[d] = n + before + after;
    }
    if (byocl_shape_numel(out) < 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "nn.pad: the padded shape has more than 2^63 elements");
    return BYOCL_OK;
}

/* nn.pad(data, pad_value): the data's dtype; pad_value is a scalar (converted to it). */
static byocl_status infer_pad(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *data, *value;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &data, err);
    if (st == BYOCL_OK)
        st = elemwise_tensor_arg(ctx, 1, &value, err);
    char a[160];
    if (st == BYOCL_OK && value->shape.rank != 0)
        st = byocl_error_set(err, BYOCL_ERR_TYPE, "nn.pad: the pad value is %s; expected a scalar",
                             byocl_shape_str(&value->shape, a, sizeof a));
    byocl_shape s;
    if (st == BYOCL_OK)
        st = pad_shape(ctx->attrs, &data->shape, &s, err);
    if (st == BYOCL_OK)
        *out = byocl_type_tensor(data->dtype, s.rank, s.dims);
    return st;
}

/* Each output cell copies the input cell ops_pad_source names on every axis, or the pad
 * value (converted once to the data's dtype) where one axis names none. */
static byocl_status pad_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, int n_in,
                            byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = elemwise_check_arity("nn.pad", n_in, 2, n_out, 1, err);
    const byocl_shape *is = byocl_tensor_shape(in[0]);
    byocl_dtype dt = byocl_tensor_dtype(in[0]);
    byocl_shape s;
    if (st == BYOCL_OK)
        st = pad_shape(attrs, is, &s, err);
    if (st == BYOCL_OK)
        st = check_out("nn.pad", dt, &s, out[0], err);
    byocl_tensor *fill = st == BYOCL_OK ? byocl_tensor_new(dt, &(byocl_shape){0}, err) : NULL;
    if (!fill)
        return st == BYOCL_OK ? err->status : st;
    if (byocl_dtype_is_float(dt))
        byocl_tensor_set(fill, 0, byocl_tensor_get(in[1], 0));
    else
        elemwise_store_int(fill, 0, elemwise_load_int(in[1], 0));
    ops_pad_mode mode = ops_pad_mode_of(attrs);
    int64_t stride[BYOCL_MAX_RANK], before[BYOCL_MAX_RANK], after;
    c_strides(is, stride);
    for (int d = 0; d < s.rank; d++)
        ops_pad_width(attrs, d, &before[d], &after);
    size_t es = byocl_dtype_size(dt);
    const unsigned char *src = byocl_tensor_cdata(in[0]);
    unsigned char *dst = byocl_tensor_data(out[0]);
    int64_t idx[BYOCL_MAX_RANK] = {0}, n = byocl_shape_numel(&s);
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *from = src;
        for (int d = 0; d < s.rank && from; d++) {
            int64_t c = ops_pad_source(mode, idx[d], before[d], is->dims[d]);
            from = c < 0 ? NULL : from + (size_t)(c * stride[d]) * es;
        }
        memcpy(dst + (size_t)i * es, from ? from : byocl_tensor_cdata(fill), es);
        next_index(&s, idx);
    }
    byocl_tensor_unref(fill);
    return BYOCL_OK;
}

/* ------------------------------------------------------------- topk */

static byocl_status check_topk_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    const char *ret = byocl_attrs_get_str(attrs, "ret_type", "both");
    if (strcmp(ret, "both") != 0 && strcmp(ret, "values") != 0 && strcmp(ret, "indices") != 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'ret_type' of topk: '%s' (expected "
                               "\"both\", \"values\" or \"indices\")",
                               ret);
    byocl_dtype d = BYOCL_INT64;
    const char *name = byocl_attrs_get_str(attrs, "dtype", "int64");
    if (!byocl_dtype_from_name(name, &d) || (d != BYOCL_INT32 && d != BYOCL_INT64))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'dtype' of topk: '%s' (expected int32 "
                               "or int64)",
                               name);
    return BYOCL_OK;
}

bool ops_topk_plan(const byocl_attrs *attrs, const byocl_shape *in, ops_topk *p)
{
    int rank = in->rank;
    int64_t a = byocl_attrs_get_int(attrs, "axis", -1);
    p->axis = (int)(a < 0 ? a + rank : a);
    p->outer = p->inner = 1;
    for (int d = 0; d < rank; d++)
        if (d != p->axis)
            *(d < p->axis ? &p->outer : &p->inner) *= in->dims[d];
    p->len = in->dims[p->axis];
    int64_t k = byocl_attrs_get_int(attrs, "k", 1);
    p->k = k < 1 ? p->len : k;
    p->ascend = byocl_attrs_get_bool(attrs, "is_ascend", false);
    const char *ret = byocl_attrs_get_str(attrs, "ret_type", "both");
    p->values = strcmp(ret, "indices") != 0;
    p->indices = strcmp(ret, "values") != 0;
    p->index_dtype = BYOCL_INT64;
    byocl_dtype_from_name(byocl_attrs_get_str(attrs, "dtype", "int64"), &p->index_dtype);
    return p->k <= p->len;
}

static byocl_status infer_topk(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *in;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    if (st == BYOCL_OK && in->shape.rank == 0)
        st = byocl_error_set(err, BYOCL_ERR_TYPE, "topk: the input is a scalar; expected rank 1 "
                             "or more");
    if (st == BYOCL_OK)
        st = index_axis("topk", ctx->attrs, in->shape.rank, err);
    ops_topk p;
    if (st == BYOCL_OK && !ops_topk_plan(ctx->attrs, &in->shape, &p))
        st = byocl_error_set(err, BYOCL_ERR_TYPE,
                             "topk: k is %lld but axis %d has %lld elements",
                             (long long)p.k, p.axis, (long long)p.len);
    if (st != BYOCL_OK)
        return st;
    byocl_shape s = in->shape;
    s.dims[p.axis] = p.k;
    byocl_type values = byocl_type_tensor(in->dtype, s.rank, s.dims);
    byocl_type indices = byocl_type_tensor(p.index_dtype, s.rank, s.dims);
    if (!p.indices || !p.values) {
        *out = p.values ? values : indices;
        return BYOCL_OK;
    }
    const byocl_type *fields[2] = {byocl_module_intern_type(ctx->mod, &values),
                                   byocl_module_intern_type(ctx->mod, &indices)};
    const byocl_type *tuple =
        fields[0] && fields[1] ? byocl_module_tuple_type(ctx->mod, fields, 2) : NULL;
    if (!tuple)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory for the result type");
    *out = *tuple;
    return BYOCL_OK;
}

/* One line's keys: doubles for float data, int64 for integers. */
typedef struct topk_line {
    const double *f;
    const int64_t *i;
    bool ascend;
} topk_line;

/* Whether element a comes before element b: the larger first (the smaller with
 * is_ascend), NaN above every number (as numpy sorts it last), equal keys by position. */
static bool topk_before(const topk_line *l, int64_t a, int64_t b)
{
    int c;
    if (l->f) {
        double x = l->f[a], y = l->f[b];
        c = isnan(x) ? (isnan(y) ? 0 : 1) : isnan(y) ? -1 : x < y ? -1 : x > y ? 1 : 0;
    } else {
        c = l->i[a] < l->i[b] ? -1 : l->i[a] > l->i[b] ? 1 : 0;
    }
    if (c == 0)
        return a < b;
    return l->ascend ? c < 0 : c > 0;
}

/* Stable merge sort of positions by topk_before. */
static void topk_sort(const topk_line *l, int64_t *pos, int64_t *tmp, int64_t n)
{
    if (n < 2)
        return;
    int64_t h = n / 2;
    topk_sort(l, pos, tmp, h);
    topk_sort(l, pos + h, tmp, n - h);
    int64_t i = 0, j = h, o = 0;
    while (i < h || j < n)
        tmp[o++] = j >= n || (i < h && topk_before(l, pos[i], pos[j])) ? pos[i++] : pos[j++];
    memcpy(pos, tmp, (size_t)n * sizeof *pos);
}

static byocl_status topk_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, int n_in,
                             byocl_tensor *const *out, int n_out, byocl_error *err)
{
    ops_topk p;
    const byocl_shape *s = n_in == 1 ? byocl_tensor_shape(in[0]) : NULL;
    if (s)
        ops_topk_plan(attrs, s, &p);
    byocl_status st = elemwise_check_arity("topk", n_in, 1, n_out, s ? p.values + p.indices : 1,
                                           err);
    if (st != BYOCL_OK)
        return st;
    byocl_shape os = *s;
    os.dims[p.axis] = p.k;
    byocl_tensor *values = p.values ? out[0] : NULL, *indices = p.indices ? out[n_out - 1] : NULL;
    if (values)
        st = check_out("topk", byocl_tensor_dtype(in[0]), &os, values, err);
    if (st == BYOCL_OK && indices)
        st = check_out("topk", p.index_dtype, &os, indices, err);
    if (st != BYOCL_OK || p.k == 0 || p.outer * p.inner == 0)
        return st;
    bool fl = byocl_dtype_is_float(byocl_tensor_dtype(in[0]));
    size_t key = fl ? sizeof(double) : sizeof(int64_t);
    void *keys = malloc((size_t)p.len * key);
    int64_t *pos = malloc((size_t)p.len * 2 * sizeof *pos);
    if (!keys || !pos) {
        free(keys);
        free(pos);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "topk: out of memory");
    }
    topk_line l = {.f = fl ? keys : NULL, .i = fl ? NULL : keys, .ascend = p.ascend};
    for (int64_t o = 0; o < p.outer; o++)
        for (int64_t j = 0; j < p.inner; j++) {
            for (int64_t t = 0; t < p.len; t++) {
                int64_t at = (o * p.len + t) * p.inner + j;
                if (fl)
                    ((double *)keys)[t] = byocl_tensor_get(in[0], at);
                else
                    ((int64_t *)keys)[t] = elemwise_order_key( /* uint64 orders unsigned */
                        byocl_tensor_dtype(in[0]), elemwise_load_int(in[0], at));
                pos[t] = t;
            }
            topk_sort(&l, pos, pos + p.len, p.len);
            size_t es = byocl_dtype_size(byocl_tensor_dtype(in[0]));
            for (int64_t r = 0; r < p.k; r++) {
                int64_t to = (o * p.k + r) * p.inner + j;
                if (values)
                    memcpy((unsigned char *)byocl_tensor_data(values) + (size_t)to * es,
                           (const unsigned char *)byocl_tensor_cdata(in[0]) +
                               (size_t)((o * p.len + pos[r]) * p.inner + j) * es,
                           es);
                if (indices)
                    elemwise_store_int(indices, to, pos[r]);
            }
        }
    free(keys);
    free(pos);
    return BYOCL_OK;
}

/* ------------------------------------------------------------- the table */

static const byocl_attr_schema strided_slice_attrs[] = {
    {.name = "begin", .kind = BYOCL_ATTR_INTS, .required = true,
     .doc = "first index on each sliced axis (negative counts from the end; clamped)"},
    {.name = "end", .kind = BYOCL_ATTR_INTS, .required = true,
     .doc = "index past the last on each sliced axis (negative counts from the end; clamped)"},
    {.name = "strides", .kind = BYOCL_ATTR_INTS, .nullable = true, .def_null = true,
     .doc = "step on each sliced axis (one value: all of them; negative walks backwards); "
            "None: 1"},
    {.name = "axes", .kind = BYOCL_ATTR_INTS, .nullable = true, .def_null = true,
     .doc = "the axes begin/end/strides apply to; None: the first len(begin) axes"},
    {.name = "slice_mode", .kind = BYOCL_ATTR_STR, .def_s = "end",
     .doc = "\"end\" (end is an index; \"size\" is not supported)"},
};

static const byocl_attr_schema take_attrs[] = {
    {.name = "axis", .kind = BYOCL_ATTR_INT, .nullable = true, .def_null = true,
     .doc = "axis to index; None indexes the flattened data"},
    {.name = "mode", .kind = BYOCL_ATTR_STR, .def_s = "clip",
     .doc = "out-of-range indices: \"clip\" to the axis, \"wrap\" around it (so -1 is the "
            "last), \"fast\": an error at run time"},
    {.name = "batch_dims", .kind = BYOCL_ATTR_INT, .def_i = 0,
     .doc = "the leading axes data and indices share (each batch takes with its own "
            "indices; negative counts from the indices' rank; at most the axis; after axis "
            "and mode so that positional values keep their meaning)"},
};

static const byocl_attr_schema gather_attrs[] = {
    {.name = "axis", .kind = BYOCL_ATTR_INT, .required = true,
     .doc = "axis the indices select along (negative counts from the end)"},
};

static const byocl_attr_schema broadcast_to_attrs[] = {
    {.name = "shape", .kind = BYOCL_ATTR_INTS, .required = true,
     .doc = "the result shape (numpy broadcasting from the input's)"},
};

static const byocl_attr_schema arange_attrs[] = {
    {.name = "dtype", .kind = BYOCL_ATTR_STR, .def_s = "float32", .doc = "result dtype"},
};

static const byocl_attr_schema shape_of_attrs[] = {
    {.name = "dtype", .kind = BYOCL_ATTR_STR, .def_s = "int32",
     .doc = "result dtype: int32 or int64"},
};

static const byocl_attr_schema trilu_attrs[] = {
    {.name = "upper", .kind = BYOCL_ATTR_BOOL, .def_i = 1,
     .doc = "keep the upper triangle (col - row >= k), else the lower (col - row <= k)"},
};

static const byocl_attr_schema cumsum_attrs[] = {
    {.name = "axis", .kind = BYOCL_ATTR_INT, .nullable = true, .def_null = true,
     .doc = "axis to sum along; None sums the flattened data"},
    {.name = "dtype", .kind = BYOCL_ATTR_STR, .nullable = true, .def_null = true,
     .doc = "result dtype; None: the input's"},
    {.name = "exclusive", .kind = BYOCL_ATTR_BOOL, .def_i = 0,
     .doc = "each sum leaves out its own element (the first is 0)"},
    {.name = "reverse", .kind = BYOCL_ATTR_BOOL, .def_i = 0,
     .doc = "sum from the end of the axis backwards (byocl's; TVM has no such attribute)"},
};

static const byocl_attr_schema scatter_elements_attrs[] = {
    {.name = "axis", .kind = BYOCL_ATTR_INT, .def_i = 0,
     .doc = "axis the indices select along (negative counts from the end)"},
    {.name = "reduction", .kind = BYOCL_ATTR_STR, .def_s = "update",
     .doc = "how an update meets the element: \"update\" replaces it, \"add\", \"mul\", "
            "\"min\", \"max\" combine (\"mean\" is not supported)"},
};

static const byocl_attr_schema scatter_nd_attrs[] = {
    {.name = "mode", .kind = BYOCL_ATTR_STR, .def_s = "update",
     .doc = "how an update meets the element: \"update\" replaces it, \"add\", \"mul\", "
            "\"min\", \"max\" combine"},
};

static const byocl_attr_schema gather_nd_attrs[] = {
    {.name = "batch_dims", .kind = BYOCL_ATTR_INT, .def_i = 0,
     .doc = "leading axes shared by data and indices (after the indices' first axis)"},
    {.name = "index_rank", .kind = BYOCL_ATTR_INT, .nullable = true, .def_null = true,
     .doc = "the indices' first dimension (the index depth), checked; None: any"},
};

static const byocl_attr_schema topk_attrs[] = {
    {.name = "k", .kind = BYOCL_ATTR_INT, .def_i = 1,
     .doc = "elements to keep along the axis; below 1: all of them"},
    {.name = "axis", .kind = BYOCL_ATTR_INT, .def_i = -1,
     .doc = "axis to sort along (negative counts from the end)"},
    {.name = "ret_type", .kind = BYOCL_ATTR_STR, .def_s = "both",
     .doc = "\"both\" (a tuple of values and indices), \"values\" or \"indices\""},
    {.name = "is_ascend", .kind = BYOCL_ATTR_BOOL, .def_i = 0,
     .doc = "the smallest first instead of the largest"},
    {.name = "dtype", .kind = BYOCL_ATTR_STR, .def_s = "int64",
     .doc = "dtype of the indices: int64 or int32"},
};

static const byocl_attr_schema one_hot_attrs[] = {
    {.name = "depth", .kind = BYOCL_ATTR_INT, .required = true,
     .doc = "the length of the new axis"},
    {.name = "axis", .kind = BYOCL_ATTR_INT, .def_i = -1,
     .doc = "where the new axis goes among the result's axes (-1: last)"},
    {.name = "dtype", .kind = BYOCL_ATTR_STR, .def_s = "float32",
     .doc = "dtype of the result (on_value and off_value are converted to it)"},
};

static const byocl_attr_schema pad_attrs[] = {
    {.name = "pad_width", .kind = BYOCL_ATTR_INTS, .cols = 2, .required = true,
     .doc = "one [before, after] pair of cell counts per axis (0 or more)"},
    {.name = "pad_mode", .kind = BYOCL_ATTR_STR, .def_s = "constant",
     .doc = "\"constant\" (the pad value), \"edge\" (the end cell repeated) or \"reflect\" "
            "(the mirror image without the end cell: each width less than the axis' length)"},
};

const byocl_op ops_index[] = {
    {.name = "strided_slice", .min_args = 1, .max_args = 1, .attrs = strided_slice_attrs,
     .n_attrs = ARRAY_LEN(strided_slice_attrs),
     .doc = "numpy slicing: data[begin:end:strides] on the given axes",
     .check_attrs = check_strided_slice_attrs, .infer = infer_strided_slice,
     .ref = strided_slice_ref},
    {.name = "take", .min_args = 2, .max_args = 2, .attrs = take_attrs,
     .n_attrs = ARRAY_LEN(take_attrs),
     .doc = "take(data, indices): the slices of data at the indices along an axis",
     .check_attrs = check_take_attrs, .infer = infer_take, .ref = take_ref},
    {.name = "gather", .min_args = 2, .max_args = 2, .attrs = gather_attrs,
     .n_attrs = ARRAY_LEN(gather_attrs),
     .doc = "gather(data, indices): out[i] = data[i with indices[i] on axis] (negative "
            "indices count from the end; out of range: an error at run time)",
     .infer = infer_gather, .ref = gather_ref},
    {.name = "broadcast_to", .min_args = 1, .max_args = 1, .attrs = broadcast_to_attrs,
     .n_attrs = ARRAY_LEN(broadcast_to_attrs), .doc = "repeats the data to a broadcast shape",
     .check_attrs = check_broadcast_to_attrs, .infer = infer_broadcast_to,
     .ref = broadcast_to_ref},
    {.name = "arange", .min_args = 3, .max_args = 3, .attrs = arange_attrs,
     .n_attrs = ARRAY_LEN(arange_attrs),
     .doc = "arange(start, stop, step): start, start + step, ... before stop, as a 1-d "
            "tensor; the three are constant scalars (the result's shape needs them; "
            "fold_constants makes the call a constant), as in TVM; the attribute form "
            "arange(start=, stop=, step=) of byocl before is refused",
     .check_attrs = check_arange_attrs, .infer = infer_arange, .ref = arange_ref},
    {.name = "shape_of", .min_args = 1, .max_args = 1, .attrs = shape_of_attrs,
     .n_attrs = ARRAY_LEN(shape_of_attrs),
     .doc = "the input's shape as a 1-d integer tensor (fold_constants makes it a constant)",
     .check_attrs = check_shape_of_attrs, .infer = infer_shape_of, .ref = shape_of_ref},
    {.name = "trilu", .min_args = 2, .max_args = 2, .attrs = trilu_attrs,
     .n_attrs = ARRAY_LEN(trilu_attrs),
     .doc = "trilu(data, k): the upper or lower triangle of each matrix of the last two "
            "axes, the rest 0; k (a scalar integer) is the diagonal: 0 the main one, > 0 "
            "above it, < 0 below",
     .infer = infer_trilu, .ref = trilu_ref},
    {.name = "cumsum", .min_args = 1, .max_args = 1, .attrs = cumsum_attrs,
     .n_attrs = ARRAY_LEN(cumsum_attrs),
     .doc = "running sums along an axis (exclusive: without the element itself; reverse: "
            "from the end)",
     .check_attrs = check_cumsum_attrs, .infer = infer_cumsum, .ref = cumsum_ref},
    {.name = "scatter_elements", .min_args = 3, .max_args = 3, .attrs = scatter_elements_attrs,
     .n_attrs = ARRAY_LEN(scatter_elements_attrs),
     .doc = "scatter_elements(data, indices, updates): data with out[i with indices[i] on "
            "axis] = updates[i] (or combined by the reduction; repeated indices apply in "
            "order; negative indices count from the end; out of range: an error at run time)",
     .check_attrs = check_scatter_elements_attrs, .infer = infer_scatter_elements,
     .ref = scatter_elements_ref},
    {.name = "scatter_nd", .min_args = 3, .max_args = 3, .attrs = scatter_nd_attrs,
     .n_attrs = ARRAY_LEN(scatter_nd_attrs),
     .doc = "scatter_nd(data, indices, updates): data with the slices at indices (M, Y..), "
            "the index depth M first as in Relay (ONNX puts it last), replaced by (or "
            "combined with) updates (Y.., S..); repeated indices apply in order; negative "
            "ones count from the end; out of range: an error at run time",
     .check_attrs = check_scatter_nd_attrs, .infer = infer_scatter_nd, .ref = scatter_nd_ref},
    {.name = "gather_nd", .min_args = 2, .max_args = 2, .attrs = gather_nd_attrs,
     .n_attrs = ARRAY_LEN(gather_nd_attrs),
     .doc = "gather_nd(data, indices): the slices of data at indices (M, B.., Y..), the "
            "index depth M first as in Relay (ONNX puts it last); negative indices count from "
            "the end; out of range: an error at run time",
     .check_attrs = check_gather_nd_attrs, .infer = infer_gather_nd, .ref = gather_nd_ref},
    {.name = "one_hot", .min_args = 3, .max_args = 3, .attrs = one_hot_attrs,
     .n_attrs = ARRAY_LEN(one_hot_attrs),
     .doc = "one_hot(indices, on_value, off_value): on_value where the new axis' position "
            "equals the index, off_value elsewhere (an index outside 0..depth-1 matches "
            "nothing)",
     .check_attrs = check_one_hot_attrs, .infer = infer_one_hot, .ref = one_hot_ref},
    {.name = "nn.pad", .min_args = 2, .max_args = 2, .attrs = pad_attrs,
     .n_attrs = ARRAY_LEN(pad_attrs),
     .doc = "nn.pad(data, pad_value): the data inside a border of pad_width cells per axis, "
            "filled by pad_mode (pad_value is a scalar, converted to the data's dtype)",
     .check_attrs = check_pad_attrs, .infer = infer_pad, .ref = pad_ref},
    {.name = "topk", .min_args = 1, .max_args = 1, .attrs = topk_attrs,
     .n_attrs = ARRAY_LEN(topk_attrs),
     .doc = "the k largest (or smallest) elements along an axis, sorted, and their indices "
            "(equal values: the lower index first; NaN above every number)",
     .check_attrs = check_topk_attrs, .infer = infer_topk, .ref = topk_ref},
};
const int ops_index_count = ARRAY_LEN(ops_index);
