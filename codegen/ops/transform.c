/* Op group "transform": ops that move elements around (reshape, transpose,
 * nn.depth_to_space and nn.space_to_depth (a transpose of a rank-6 view, transform.h),
 * concatenate, split, squeeze, expand_dims) and the reductions (sum, mean, prod, max, min, argmax,
 * argmin, all, any, variance: one kernel with a kind, reduce.h), with TVM Relay's attributes.
 *
 * Each shape rule lives in one function that both the type relation and the kernel call,
 * so the kernel never disagrees with the type it was given. The moving kernels move bytes,
 * so they serve every dtype alike. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elemwise_util.h"
#include "reduce.h"
#include "transform.h"

/* ------------------------------------------------------------- small helpers */

/* "(4, -1)": an attribute's integer list in the spelling of shapes. */
static char *ints_str(const int64_t *v, int n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i <= n; i++) {
        int w = i == n ? snprintf(buf + at, len - at, ")")
                       : snprintf(buf + at, len - at, "%s%lld", i ? ", " : "(", (long long)v[i]);
        if (w < 0 || (size_t)w >= len - at)
            break;
        at += (size_t)w;
    }
    return buf;
}

/* Maps `axis` in [-rank, rank) to [0, rank). `what` names it in the error ("axis"). */
static byocl_status normalize_axis(const char *what, int64_t axis, int rank, int *out,
                                   byocl_error *err)
{
    if (rank == 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "%s %lld is out of range: the input is a scalar (rank 0)", what,
                               (long long)axis);
    if (axis < -rank || axis >= rank)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "%s %lld is out of range for rank %d (expected %d..%d)", what,
                               (long long)axis, rank, -rank, rank - 1);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return BYOCL_OK;
}

static int64_t prod(const int64_t *dims, int from, int to)
{
    int64_t p = 1;
    for (int d = from; d < to; d++)
        p *= dims[d];
    return p;
}

/* Copies `outer` runs of len * inner bytes between two tensors that agree on every dim but
 * one axis (of length dst_axis and src_axis): run o goes from element row o * src_axis +
 * src_off of src to row o * dst_axis + dst_off of dst. Concatenate and split both use it. */
static void copy_axis_runs(unsigned char *dst, int64_t dst_axis, int64_t dst_off,
                           const unsigned char *src, int64_t src_axis, int64_t src_off,
                           int64_t len, int64_t outer, size_t inner)
{
    size_t run = (size_t)len * inner;
    if (run == 0)
        return;
    for (int64_t o = 0; o < outer; o++)
        memcpy(dst + (size_t)(o * dst_axis + dst_off) * inner,
               src + (size_t)(o * src_axis + src_off) * inner, run);
}

static byocl_status check_same_dtype(const char *op, const byocl_tensor *in,
                                     const byocl_tensor *out, byocl_error *err)
{
    if (byocl_tensor_dtype(in) != byocl_tensor_dtype(out))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s kernel: output dtype %s, input %s",
                               op, byocl_dtype_name(byocl_tensor_dtype(out)),
                               byocl_dtype_name(byocl_tensor_dtype(in)));
    return BYOCL_OK;
}

static byocl_status check_out_shape(const char *op, const byocl_shape *want,
                                    const byocl_tensor *out, byocl_error *err)
{
    char a[160], b[160];
    if (!byocl_shape_equal(want, byocl_tensor_shape(out)))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s kernel: output shape %s, expected %s",
                               op, byocl_shape_str(byocl_tensor_shape(out), a, sizeof a),
                               byocl_shape_str(want, b, sizeof b));
    return BYOCL_OK;
}

/* A tensor result with the input's dtype and `shape`. */
static void tensor_result(const byocl_type *in, const byocl_shape *shape, byocl_type *out)
{
    *out = byocl_type_tensor(in->dtype, shape->rank, shape->dims);
}

/* ------------------------------------------------------------- reshape */

/* Shape-independent checks: the values TVM gives a special meaning that byocl lacks. */
static byocl_status check_reshape_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    const int64_t *ns;
    int n = byocl_attrs_get_ints(attrs, "newshape", &ns);
    char s[256];
    if (n > BYOCL_MAX_RANK)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "bad value for attribute 'newshape' of reshape: %s has %d dims; "
                               "at most %d are supported",
                               ints_str(ns, n, s, sizeof s), n, BYOCL_MAX_RANK);
    int n_infer = 0;
    for (int i = 0; i < n; i++) {
        if (ns[i] == -2 || ns[i] == -3 || ns[i] == -4)
            return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                   "bad value for attribute 'newshape' of reshape: %s uses "
                                   "TVM's special value %lld, which byocl does not support "
                                   "(use positive dims, 0 to copy and -1 to infer)",
                                   ints_str(ns, n, s, sizeof s), (long long)ns[i]);
        if (ns[i] < -4)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "bad value for attribute 'newshape' of reshape: %s contains "
                                   "%lld",
                                   ints_str(ns, n, s, sizeof s), (long long)ns[i]);
        n_infer += ns[i] == -1;
    }
    if (n_infer > 1)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'newshape' of reshape: %s has "
                               "more than one -1",
                               ints_str(ns, n, s, sizeof s));
    return BYOCL_OK;
}

/* TVM's rule: a positive value is the dim, 0 copies the input dim at the same position
 * (a literal 0 with allowzero), -1 takes what is left. */
static byocl_status reshape_shape(const byocl_shape *in, const byocl_attrs *attrs,
                                  byocl_shape *out, byocl_error *err)
{
    const int64_t *ns;
    int n = byocl_attrs_get_ints(attrs, "newshape", &ns);
    bool allowzero = byocl_attrs_get_bool(attrs, "allowzero", false);
    char from[160], to[256];
    if (n < 0 || n > BYOCL_MAX_RANK) /* check_reshape_attrs reports this first */
        return byocl_error_set(err, BYOCL_ERR_INVALID, "attribute newshape is invalid");
    int infer_at = -1;
    out->rank = n;
    for (int i = 0; i < n; i++) {
        if (ns[i] == 0 && !allowzero) {
            if (i >= in->rank)
                return byocl_error_set(err, BYOCL_ERR_TYPE,
                                       "newshape %s: 0 at position %d copies an input dim, but "
                                       "the input %s has only %d",
                                       ints_str(ns, n, to, sizeof to), i,
                                       byocl_shape_str(in, from, sizeof from), in->rank);
            out->dims[i] = in->dims[i];
        } else if (ns[i] == -1) {
            infer_at = i;
            out->dims[i] = 1;
        } else {
            out->dims[i] = ns[i];
        }
    }
    int64_t numel = byocl_shape_numel(in);
    int64_t known = byocl_shape_numel(out); /* -1 on overflow: cannot match */
    if (numel < 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "the input shape %s has too many elements",
                               byocl_shape_str(in, from, sizeof from));
    if (infer_at >= 0 && known > 0 && numel % known == 0) {
        out->dims[infer_at] = numel / known;
        return BYOCL_OK;
    }
    if (infer_at < 0 && known == numel)
        return BYOCL_OK;
    byocl_shape_str(in, from, sizeof from);
    ints_str(ns, n, to, sizeof to);
    if (infer_at < 0 && known >= 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "cannot reshape %s (%lld elements) to %s (%lld elements)", from,
                               (long long)numel, to, (long long)known);
    return byocl_error_set(err, BYOCL_ERR_TYPE, "cannot reshape %s (%lld elements) to %s", from,
                           (long long)numel, to);
}

static byocl_status infer_reshape(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *in;
    byocl_shape shape;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    if (st == BYOCL_OK)
        st = reshape_shape(&in->shape, ctx->attrs, &shape, err);
    if (st == BYOCL_OK)
        tensor_result(in, &shape, out);
    return st;
}

/* ------------------------------------------------------------- transpose */

/* perm[d] = the input axis that becomes output axis d. None (or []) reverses the axes. */
static byocl_status transpose_perm(const byocl_attrs *attrs, int rank, int *perm,
                                   byocl_error *err)
{
    const int64_t *axes;
    int n = byocl_attrs_get_ints(attrs, "axes", &axes);
    char s[256];
    if (n <= 0) {
        for (int d = 0; d < rank; d++)
            perm[d] = rank - 1 - d;
        return BYOCL_OK;
    }
    if (n != rank)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "axes %s has %d entries but the input has rank %d",
                               ints_str(axes, n, s, sizeof s), n, rank);
    bool seen[BYOCL_MAX_RANK] = {false};
    for (int d = 0; d < rank; d++) {
        byocl_status st = normalize_axis("axis", axes[d], rank, &perm[d], err);
        if (st != BYOCL_OK) {
            byocl_error_prefix(err, "axes %s: ", ints_str(axes, n, s, sizeof s));
            return st;
        }
        if (seen[perm[d]])
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "axes %s is not a permutation: axis %d appears twice",
                                   ints_str(axes, n, s, sizeof s), perm[d]);
        seen[perm[d]] = true;
    }
    return BYOCL_OK;
}

/* ------------------------------------------------------------- depth_to_space, space_to_depth */

/* Relay's SubPixelAttrs: block_size, layout and (depth_to_space's) mode, checked before
 * any shape is known. */
static byocl_status check_subpixel_attrs(const char *op, const byocl_attrs *attrs,
                                         byocl_error *err)
{
    int64_t b = byocl_attrs_get_int(attrs, "block_size", 1);
    if (b < 1)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'block_size' of %s: %lld (expected 1 "
                               "or more)",
                               op, (long long)b);
    const char *layout = byocl_attrs_get_str(attrs, "layout", "NCHW");
    if (strcmp(layout, "NCHW") != 0)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "bad value for attribute 'layout' of %s: '%s' (byocl supports "
                               "\"NCHW\" only)",
                               op, layout);
    const char *mode = byocl_attrs_get_str(attrs, "mode", "DCR");
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'mode' of %s: '%s' (expected \"DCR\" or "
                               "\"CRD\")",
                               op, mode);
    return BYOCL_OK;
}

static byocl_status check_depth_to_space_attrs(byocl_module *m, byocl_attrs *attrs,
                                               byocl_error *err)
{
    (void)m;
    return check_subpixel_attrs("nn.depth_to_space", attrs, err);
}

static byocl_status check_space_to_depth_attrs(byocl_module *m, byocl_attrs *attrs,
                                               byocl_error *err)
{
    (void)m;
    return check_subpixel_attrs("nn.space_to_depth", attrs, err);
}

static void set_plan(ops_permute *p, const int64_t *view, const int *perm, int rank)
{
    p->view.rank = rank;
    for (int d = 0; d < rank; d++) {
        p->view.dims[d] = view[d];
        p->perm[d] = perm[d];
    }
}

/* depth_to_space (N, C, H, W) -> (N, C / b^2, H * b, W * b) and space_to_depth, its
 * inverse for mode DCR, as ONNX defines them: a rank-6 view and a permutation. */
static byocl_status subpixel_plan(const char *op, const byocl_attrs *attrs,
                                  const byocl_shape *in, ops_permute *p, byocl_error *err)
{
    char s[160];
    if (in->rank != 4)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "%s: the input has rank %d; expected 4 (NCHW)",
                               op, in->rank);
    int64_t b = byocl_attrs_get_int(attrs, "block_size", 1);
    int64_t n = in->dims[0], c = in->dims[1], h = in->dims[2], w = in->dims[3];
    byocl_shape_str(in, s, sizeof s);
    if (strcmp(op, "nn.space_to_depth") == 0) {
        for (int d = 2; d < 4; d++)
            if (in->dims[d] % b != 0)
                return byocl_error_set(err, BYOCL_ERR_TYPE,
                                       "%s: the input %s has %s %lld, which does not divide by "
                                       "block_size %lld",
                                       op, s, d == 2 ? "height" : "width",
                                       (long long)in->dims[d], (long long)b);
        if (c > INT64_MAX / b / b)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "%s: the result's channels (%lld x %lld^2) overflow", op,
                                   (long long)c, (long long)b);
        static const int perm[6] = {0, 3, 5, 1, 2, 4};
        const int64_t view[6] = {n, c, h / b, b, w / b, b};
        set_plan(p, view, perm, 6);
        p->out = byocl_shape_make(4, (const int64_t[4]){n, c * b * b, h / b, w / b});
        return BYOCL_OK;
    }
    if (b > INT64_MAX / b || c % (b * b) != 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "%s: the input %s has %lld channels, which do not divide by "
                               "block_size^2 (%lld^2)",
                               op, s, (long long)c, (long long)b);
    if (h > INT64_MAX / b || w > INT64_MAX / b)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "%s: the result's height or width overflows",
                               op);
    int64_t cb = c / (b * b);
    if (strcmp(byocl_attrs_get_str(attrs, "mode", "DCR"), "DCR") == 0) {
        static const int perm[6] = {0, 3, 4, 1, 5, 2};
        set_plan(p, (const int64_t[6]){n, b, b, cb, h, w}, perm, 6);
    } else { /* CRD */
        static const int perm[6] = {0, 1, 4, 2, 5, 3};
        set_plan(p, (const int64_t[6]){n, cb, b, b, h, w}, perm, 6);
    }
    p->out = byocl_shape_make(4, (const int64_t[4]){n, cb, h * b, w * b});
    return BYOCL_OK;
}

/* ------------------------------------------------------------- the permuting ops */

bool ops_is_permute(const char *op)
{
    return strcmp(op, "transpose") == 0 || strcmp(op, "nn.depth_to_space") == 0 ||
           strcmp(op, "nn.space_to_depth") == 0;
}

byocl_status ops_permute_plan(const char *op, const byocl_attrs *attrs, const byocl_shape *in,
                              ops_permute *p, byocl_error *err)
{
    if (strcmp(op, "transpose") != 0)
        return subpixel_plan(op, attrs, in, p, err);
    p->view = *in;
    byocl_status st = transpose_perm(attrs, in->rank, p->perm, err);
    p->out.rank = in->rank;
    for (int d = 0; st == BYOCL_OK && d < in->rank; d++)
        p->out.dims[d] = in->dims[p->perm[d]];
    return st;
}

static byocl_status infer_permute(const char *op, const byocl_infer_ctx *ctx, byocl_type *out,
                                  byocl_error *err)
{
    const byocl_type *in;
    ops_permute p;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    if (st == BYOCL_OK)
        st = ops_permute_plan(op, ctx->attrs, &in->shape, &p, err);
    if (st == BYOCL_OK)
        tensor_result(in, &p.out, out);
    return st;
}

/* Walks the output in C order, reading the view at the permuted position. */
static byocl_status permute_ref(const char *op, const byocl_attrs *attrs,
                                const byocl_tensor *const *in, int n_in,
                                byocl_tensor *const *out, int n_out, byocl_error *err)
{
    byocl_status st = elemwise_check_arity(op, n_in, 1, n_out, 1, err);
    ops_permute p;
    if (st == BYOCL_OK)
        st = ops_permute_plan(op, attrs, byocl_tensor_shape(in[0]), &p, err);
    if (st == BYOCL_OK)
        st = check_same_dtype(op, in[0], out[0], err);
    if (st == BYOCL_OK)
        st = check_out_shape(op, &p.out, out[0], err);
    if (st != BYOCL_OK)
        return st;
    int rank = p.view.rank;
    int64_t vstride[BYOCL_MAX_RANK], stride[BYOCL_MAX_RANK], dims[BYOCL_MAX_RANK];
    int64_t idx[BYOCL_MAX_RANK] = {0};
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        vstride[d] = s;
        s *= p.view.dims[d];
    }
    for (int d = 0; d < rank; d++) {
        dims[d] = p.view.dims[p.perm[d]];
        stride[d] = vstride[p.perm[d]];
    }
    size_t es = byocl_dtype_size(byocl_tensor_dtype(in[0]));
    const unsigned char *src = byocl_tensor_cdata(in[0]);
    unsigned char *dst = byocl_tensor_data(out[0]);
    int64_t n = byocl_tensor_numel(out[0]), at = 0;
    for (int64_t i = 0; i < n; i++) {
        memcpy(dst + (size_t)i * es, src + (size_t)at * es, es);
        for (int d = rank - 1; d >= 0; d--) { /* next output index, C order */
            at += stride[d];
            if (++idx[d] < dims[d])
                break;
            at -= stride[d] * dims[d];
            idx[d] = 0;
        }
    }
    return BYOCL_OK;
}

/* The type relation and kernel of each permuting op: its name bound to the shared ones. */
#define PERMUTE_OP(fname, op)                                                              \
    static byocl_status infer_##fname(const byocl_infer_ctx *ctx, byocl_type *out,         \
                                      byocl_error *err)                                    \
    {                                                                                      \
        return infer_permute(op, ctx, out, err);                                           \
    }                                                                                      \
    static byocl_status fname##_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, \
                                    int n_in, byocl_tensor *const *out, int n_out,         \
                                    byocl_error *err)                                      \
    {                                                                                      \
        return permute_ref(op, attrs, in, n_in, out, n_out, err);                          \
    }
PERMUTE_OP(transpose, "transpose")
PERMUTE_OP(depth_to_space, "nn.depth_to_space")
PERMUTE_OP(space_to_depth, "nn.space_to_depth")

/* ------------------------------------------------------------- concatenate */

static byocl_status infer_concatenate(const byocl_infer_ctx *ctx, byocl_type *out,
                                      byocl_error *err)
{
    const byocl_type *t = ctx->arg_types[0];
    char a[256], b[256];
    if (t->kind != BYOCL_TYPE_TUPLE)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "expects a tuple of tensors, got %s",
                               byocl_type_str(t, a, sizeof a));
    if (t->n_fields == 0)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "the tuple of inputs is empty");
    for (int k = 0; k < t->n_fields; k++)
        if (t->fields[k]->kind != BYOCL_TYPE_TENSOR)
            return byocl_error_set(err, BYOCL_ERR_TYPE, "tuple field %d is not a tensor: %s", k,
                                   byocl_type_str(t->fields[k], a, sizeof a));
    const byocl_type *first = t->fields[0];
    int axis = 0;
    byocl_status st = normalize_axis("axis", byocl_attrs_get_int(ctx->attrs, "axis", 0),
                                     first->shape.rank, &axis, err);
    if (st != BYOCL_OK)
        return st;
    byocl_shape shape = first->shape;
    for (int k = 1; k < t->n_fields; k++) {
        const byocl_type *f = t->fields[k];
        if (f->dtype != first->dtype)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "tuple field %d has dtype %s but field 0 has %s", k,
                                   byocl_dtype_name(f->dtype), byocl_dtype_name(first->dtype));
        bool same = f->shape.rank == shape.rank;
        for (int d = 0; same && d < shape.rank; d++)
            same = d == axis || f->shape.dims[d] == shape.dims[d];
        if (!same)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "tuple field %d has shape %s but field 0 has %s; they must "
                                   "agree on every axis but %d",
                                   k, byocl_shape_str(&f->shape, a, sizeof a),
                                   byocl_shape_str(&first->shape, b, sizeof b), axis);
        if (f->shape.dims[axis] > INT64_MAX - shape.dims[axis])
            return byocl_error_set(err, BYOCL_ERR_TYPE, "the result's axis %d overflows", axis);
        shape.dims[axis] += f->shape.dims[axis];
    }
    tensor_result(first, &shape, out);
    return BYOCL_OK;
}

static byocl_status concatenate_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                                    int n_in, byocl_tensor *const *out, int n_out,
                                    byocl_error *err)
{
    if (n_in < 1 || n_out != 1)
        return elemwise_check_arity("concatenate", n_in, n_in < 1 ? 1 : n_in, n_out, 1, err);
    const byocl_shape *oshape = byocl_tensor_shape(out[0]);
    int axis = 0;
    byocl_status st = normalize_axis("axis", byocl_attrs_get_int(attrs, "axis", 0),
                                     oshape->rank, &axis, err);
    if (st != BYOCL_OK)
        return st;
    /* Every input must match the output but on the axis, and the axis lengths must sum up. */
    int64_t total = 0;
    for (int k = 0; k < n_in; k++) {
        byocl_shape want = *oshape;
        want.dims[axis] = byocl_tensor_shape(in[k])->dims[axis];
        total += want.dims[axis];
        st = check_same_dtype("concatenate", in[k], out[0], err);
        if (st == BYOCL_OK)
            st = check_out_shape("concatenate", &want, in[k], err);
        if (st != BYOCL_OK)
            return st;
    }
    if (total != oshape->dims[axis])
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "concatenate kernel: inputs sum to %lld along axis %d, output has "
                               "%lld", (long long)total, axis, (long long)oshape->dims[axis]);
    size_t inner = (size_t)prod(oshape->dims, axis + 1, oshape->rank) *
                   byocl_dtype_size(byocl_tensor_dtype(out[0]));
    int64_t outer = prod(oshape->dims, 0, axis), off = 0;
    for (int k = 0; k < n_in; k++) {
        int64_t len = byocl_tensor_shape(in[k])->dims[axis];
        copy_axis_runs(byocl_tensor_data(out[0]), oshape->dims[axis], off,
                       byocl_tensor_cdata(in[k]), len, 0, len, outer, inner);
        off += len;
    }
    return BYOCL_OK;
}

/* ------------------------------------------------------------- split */

/* More pieces than any model uses; a bound keeps a typo from allocating gigabytes. */
#define SPLIT_MAX_PIECES 65536

/* The length of each piece along axis of size `dim`; *sizes is malloc'ed. An INT is a
 * number of equal sections; INTS are the indices where pieces start (strictly increasing,
 * inside (0, dim), as TVM requires). */
static byocl_status split_sizes(const byocl_attrs *attrs, int64_t dim, int axis,
                                int64_t **sizes, int *n_pieces, byocl_error *err)
{
    const byocl_attr *a = byocl_attrs_find(attrs, "indices_or_sections");
    const int64_t *idx = NULL;
    int n_idx = 0;
    int64_t n;
    char s[256];
    *sizes = NULL;
    if (a && a->kind == BYOCL_ATTR_INT) {
        n = a->i;
        if (n <= 0)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "indices_or_sections=%lld: the number of sections must be "
                                   "positive", (long long)n);
        if (dim % n != 0)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "cannot split axis %d of size %lld into %lld equal sections",
                                   axis, (long long)dim, (long long)n);
    } else {
        n_idx = byocl_attrs_get_ints(attrs, "indices_or_sections", &idx);
        if (n_idx < 0)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "attribute indices_or_sections is missing");
        for (int i = 0; i < n_idx; i++)
            if (idx[i] <= (i ? idx[i - 1] : 0) || idx[i] >= dim)
                return byocl_error_set(err, BYOCL_ERR_TYPE,
                                       "split indices %s must be strictly increasing and within "
                                       "1..%lld (axis %d has size %lld)",
                                       ints_str(idx, n_idx, s, sizeof s), (long long)dim - 1,
                                       axis, (long long)dim);
        n = n_idx + 1;
    }
    if (n > SPLIT_MAX_PIECES)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "splitting into %lld pieces; at most %d are supported",
                               (long long)n, SPLIT_MAX_PIECES);
    *sizes = malloc((size_t)n * sizeof **sizes);
    if (!*sizes)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory splitting into %lld pieces",
                               (long long)n);
    for (int64_t k = 0; k < n; k++) {
        if (!idx)
            (*sizes)[k] = dim / n;
        else
            (*sizes)[k] = (k < n_idx ? idx[k] : dim) - (k ? idx[k - 1] : 0);
    }
    *n_pieces = (int)n;
    return BYOCL_OK;
}

static byocl_status infer_split(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *in;
    int axis = 0, n = 0;
    int64_t *sizes = NULL;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    if (st == BYOCL_OK)
        st = normalize_axis("axis", byocl_attrs_get_int(ctx->attrs, "axis", 0), in->shape.rank,
                            &axis, err);
    if (st == BYOCL_OK)
        st = split_sizes(ctx->attrs, in->shape.dims[axis], axis, &sizes, &n, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_type **fields = malloc((size_t)n * sizeof *fields);
    for (int k = 0; fields && k < n; k++) {
        byocl_type piece = *in;
        piece.shape.dims[axis] = sizes[k];
        fields[k] = byocl_module_intern_type(ctx->mod, &piece);
        if (!fields[k]) {
            free(fields);
            fields = NULL;
        }
    }
    const byocl_type *tuple = fields ? byocl_module_tuple_type(ctx->mod, fields, n) : NULL;
    free(fields);
    free(sizes);
    if (!tuple)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory for the result type");
    *out = *tuple;
    return BYOCL_OK;
}

static byocl_status split_ref(const byocl_attrs *attrs, const byocl_tensor *const *in,
                              int n_in, byocl_tensor *const *out, int n_out, byocl_error *err)
{
    int axis = 0, n = 0;
    int64_t *sizes = NULL;
    if (n_in != 1) /* the number of outputs is checked once the pieces are known */
        return elemwise_check_arity("split", n_in, 1, n_out, n_out, err);
    byocl_status st = BYOCL_OK;
    const byocl_shape *ishape = byocl_tensor_shape(in[0]);
    if (st == BYOCL_OK)
        st = normalize_axis("axis", byocl_attrs_get_int(attrs, "axis", 0), ishape->rank, &axis,
                            err);
    if (st == BYOCL_OK)
        st = split_sizes(attrs, ishape->dims[axis], axis, &sizes, &n, err);
    if (st == BYOCL_OK && n != n_out)
        st = elemwise_check_arity("split", n_in, 1, n_out, n, err);
    for (int k = 0; st == BYOCL_OK && k < n; k++) {
        byocl_shape want = *ishape;
        want.dims[axis] = sizes[k];
        st = check_same_dtype("split", in[0], out[k], err);
        if (st == BYOCL_OK)
            st = check_out_shape("split", &want, out[k], err);
    }
    if (st == BYOCL_OK) {
        size_t inner = (size_t)prod(ishape->dims, axis + 1, ishape->rank) *
                       byocl_dtype_size(byocl_tensor_dtype(in[0]));
        int64_t outer = prod(ishape->dims, 0, axis), off = 0;
        for (int k = 0; k < n; k++) {
            copy_axis_runs(byocl_tensor_data(out[k]), sizes[k], 0, byocl_tensor_cdata(in[0]),
                           ishape->dims[axis], off, sizes[k], outer, inner);
            off += sizes[k];
        }
    }
    free(sizes);
    return st;
}

/* ------------------------------------------------------------- squeeze */

static byocl_status squeeze_shape(const byocl_shape *in, const byocl_attrs *attrs,
                                  byocl_shape *out, byocl_error *err)
{
    const int64_t *axes;
    int n = byocl_attrs_get_ints(attrs, "axis", &axes);
    bool drop[BYOCL_MAX_RANK] = {false};
    for (int d = 0; n < 0 && d < in->rank; d++) /* None: every axis of size 1 */
        drop[d] = in->dims[d] == 1;
    for (int k = 0; k < n; k++) {
        int d = 0;
        byocl_status st = normalize_axis("axis", axes[k], in->rank, &d, err);
        if (st != BYOCL_OK)
            return st;
        if (drop[d])
            return byocl_error_set(err, BYOCL_ERR_TYPE, "axis %d is listed twice", d);
        if (in->dims[d] != 1)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "axis %d has size %lld; only axes of size 1 can be squeezed",
                                   d, (long long)in->dims[d]);
        drop[d] = true;
    }
    out->rank = 0;
    for (int d = 0; d < in->rank; d++)
        if (!drop[d])
            out->dims[out->rank++] = in->dims[d];
    return BYOCL_OK;
}

static byocl_status infer_squeeze(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *in;
    byocl_shape shape;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    if (st == BYOCL_OK)
        st = squeeze_shape(&in->shape, ctx->attrs, &shape, err);
    if (st == BYOCL_OK)
        tensor_result(in, &shape, out);
    return st;
}

/* ------------------------------------------------------------- expand_dims */

static byocl_status check_expand_dims_attrs(byocl_module *m, byocl_attrs *attrs,
                                            byocl_error *err)
{
    (void)m;
    int64_t k = byocl_attrs_get_int(attrs, "num_newaxis", 1);
    if (k < 0 || k > BYOCL_MAX_RANK)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad value for attribute 'num_newaxis' of expand_dims: "
                               "expected 0..%d, got %lld", BYOCL_MAX_RANK, (long long)k);
    return BYOCL_OK;
}

static byocl_status infer_expand_dims(const byocl_infer_ctx *ctx, byocl_type *out,
                                      byocl_error *err)
{
    const byocl_type *in;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    if (st != BYOCL_OK)
        return st;
    int rank = in->shape.rank;
    int64_t axis = byocl_attrs_get_int(ctx->attrs, "axis", 0);
    int64_t k = byocl_attrs_get_int(ctx->attrs, "num_newaxis", 1);
    if (axis < -rank - 1 || axis > rank)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "axis %lld is out of range for rank %d (expected %d..%d)",
                               (long long)axis, rank, -rank - 1, rank);
    if (rank + k > BYOCL_MAX_RANK)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "the result would have rank %lld; at most %d is supported",
                               (long long)(rank + k), BYOCL_MAX_RANK);
    int at = (int)(axis < 0 ? axis + rank + 1 : axis);
    byocl_shape shape = {.rank = rank + (int)k};
    for (int d = 0, src = 0; d < shape.rank; d++)
        shape.dims[d] = d >= at && d < at + k ? 1 : in->shape.dims[src++];
    tensor_result(in, &shape, out);
    return BYOCL_OK;
}

/* ------------------------------------------------------------- reductions */

static const char *const reduce_names[] = {
    [OPS_REDUCE_SUM] = "sum",       [OPS_REDUCE_MEAN] = "mean",     [OPS_REDUCE_PROD] = "prod",
    [OPS_REDUCE_MAX] = "max",       [OPS_REDUCE_MIN] = "min",       [OPS_REDUCE_ARGMAX] = "argmax",
    [OPS_REDUCE_ARGMIN] = "argmin", [OPS_REDUCE_ALL] = "all",       [OPS_REDUCE_ANY] = "any",
    [OPS_REDUCE_VARIANCE] = "variance",
};

ops_reduce_kind ops_reduce_kind_of(const char *op)
{
    for (int k = 0; k < (int)(sizeof reduce_names / sizeof reduce_names[0]); k++)
        if (strcmp(op, reduce_names[k]) == 0)
            return (ops_reduce_kind)k;
    return OPS_REDUCE_NONE;
}

int ops_reduce_n_args(ops_reduce_kind kind) { return kind == OPS_REDUCE_VARIANCE ? 2 : 1; }

bool ops_reduce_needs_element(ops_reduce_kind kind)
{
    return kind == OPS_REDUCE_MAX || kind == OPS_REDUCE_MIN || kind == OPS_REDUCE_ARGMAX ||
           kind == OPS_REDUCE_ARGMIN;
}

byocl_dtype ops_reduce_out_dtype(ops_reduce_kind kind, byocl_dtype in)
{
    return kind == OPS_REDUCE_ARGMAX || kind == OPS_REDUCE_ARGMIN ? BYOCL_INT32 : in;
}

/* None or [] reduces every axis (exclude then has no effect, as in TVM); otherwise the
 * listed axes, or with exclude every axis not listed. */
byocl_status ops_reduce_axes(const byocl_attrs *attrs, int rank, bool *reduced,
                             byocl_error *err)
{
    const int64_t *axes;
    int n = byocl_attrs_get_ints(attrs, "axis", &axes);
    bool exclude = byocl_attrs_get_bool(attrs, "exclude", false);
    for (int d = 0; d < rank; d++)
        reduced[d] = n <= 0;
    if (n <= 0)
        return BYOCL_OK;
    bool listed[BYOCL_MAX_RANK] = {false};
    for (int k = 0; k < n; k++) {
        int d = 0;
        byocl_status st = normalize_axis("axis", axes[k], rank, &d, err);
        if (st != BYOCL_OK)
            return st;
        if (listed[d])
            return byocl_error_set(err, BYOCL_ERR_TYPE, "axis %d is listed twice", d);
        listed[d] = true;
    }
    for (int d = 0; d < rank; d++)
        reduced[d] = listed[d] != exclude;
    return BYOCL_OK;
}

static byocl_status reduce_shape(const byocl_shape *in, const byocl_attrs *attrs, bool *reduced,
                                 byocl_shape *out, byocl_error *err)
{
    byocl_status st = ops_reduce_axes(attrs, in->rank, reduced, err);
    if (st != BYOCL_OK)
        return st;
    bool keepdims = byocl_attrs_get_bool(attrs, "keepdims", false);
    out->rank = 0;
    for (int d = 0; d < in->rank; d++)
        if (!reduced[d] || keepdims)
            out->dims[out->rank++] = reduced[d] ? 1 : in->dims[d];
    return BYOCL_OK;
}

/* variance's mean: data's dtype and rank, each dim data's or 1 (it broadcasts against the
 * data; TVM's relay.variance passes mean(data, axis, keepdims=True, exclude)). */
static byocl_status check_variance_mean(const byocl_type *data, const byocl_type *mean,
                                        byocl_error *err)
{
    if (mean->dtype != data->dtype)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "the mean (argument 2) has dtype %s; the data's is %s",
                               byocl_dtype_name(mean->dtype), byocl_dtype_name(data->dtype));
    if (mean->shape.rank != data->shape.rank)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "the mean (argument 2) has rank %d; the data's is %d",
                               mean->shape.rank, data->shape.rank);
    for (int d = 0; d < data->shape.rank; d++)
        if (mean->shape.dims[d] != 1 && mean->shape.dims[d] != data->shape.dims[d])
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "the mean (argument 2) has %lld along axis %d; expected 1 or "
                                   "the data's %lld",
                                   (long long)mean->shape.dims[d], d,
                                   (long long)data->shape.dims[d]);
    return BYOCL_OK;
}

static byocl_status infer_reduce(ops_reduce_kind kind, const byocl_infer_ctx *ctx,
                                 byocl_type *out, byocl_error *err)
{
    const byocl_type *in, *mean;
    byocl_shape shape;
    bool reduced[BYOCL_MAX_RANK];
    byocl_status st = elemwise_tensor_arg(ctx, 0, &in, err);
    if (st == BYOCL_OK && (kind == OPS_REDUCE_ALL || kind == OPS_REDUCE_ANY) &&
        in->dtype != BYOCL_BOOL)
        st = byocl_error_set(err, BYOCL_ERR_TYPE, "%s reduces bools; the data is %s",
                             reduce_names[kind], byocl_dtype_name(in->dtype));
    if (st == BYOCL_OK && kind == OPS_REDUCE_VARIANCE && !byocl_dtype_is_float(in->dtype))
        st = byocl_error_set(err, BYOCL_ERR_TYPE,
                             "variance needs a float dtype (float16, float32 or float64); the "
                             "data is %s",
                             byocl_dtype_name(in->dtype));
    if (st == BYOCL_OK && kind == OPS_REDUCE_VARIANCE) {
        st = elemwise_tensor_arg(ctx, 1, &mean, err);
        if (st == BYOCL_OK)
            st = check_variance_mean(in, mean, err);
    }
    if (st == BYOCL_OK)
        st = reduce_shape(&in->shape, ctx->attrs, reduced, &shape, err);
    if (st == BYOCL_OK)
        *out = byocl_type_tensor(ops_reduce_out_dtype(kind, in->dtype), shape.rank, shape.dims);
    return st;
}

/* One accumulator per output element: double for floats, int64 for integers; the
 * position (within the reduced elements, C order) of the best one for argmax/argmin. */
typedef struct reduce_acc {
    union {
        double f;
        int64_t i;
    } v;
    int64_t at;
} reduce_acc;

static void reduce_init(ops_reduce_kind kind, bool is_float, reduce_acc *a)
{
    bool low = kind == OPS_REDUCE_MAX || kind == OPS_REDUCE_ARGMAX;
    bool high = kind == OPS_REDUCE_MIN || kind == OPS_REDUCE_ARGMIN;
    a->at = 0;
    if (is_float)
        a->v.f = low ? -INFINITY : high ? INFINITY : kind == OPS_REDUCE_PROD ? 1.0 : 0.0;
    else
        a->v.i = low    ? INT64_MIN
                 : high ? INT64_MAX
                        : kind == OPS_REDUCE_PROD || kind == OPS_REDUCE_ALL ? 1 : 0;
}

/* Whether element x replaces the running best b: max takes a greater x or a NaN, min a
 * smaller x or a NaN, and a NaN once taken stays (numpy's max propagates NaN); with
 * `last`, an equal x wins too (select_last_index). The LLVM lowering compares the same way. */
static bool reduce_takes_f(ops_reduce_kind kind, bool last, double x, double b)
{
    if (isnan(b))
        return false;
    bool up = kind == OPS_REDUCE_MAX || kind == OPS_REDUCE_ARGMAX;
    return up ? (last ? !(x < b) : !(x <= b)) : (last ? !(x > b) : !(x >= b));
}

static bool reduce_takes_i(ops_reduce_kind kind, bool last, int64_t x, int64_t b)
{
    bool up = kind == OPS_REDUCE_MAX || kind == OPS_REDUCE_ARGMAX;
    return up ? (last ? x >= b : x > b) : (last ? x <= b : x < b);
}

/* Folds input element i (position pos among the reduced ones) into a; m is variance's mean
 * for that element (the difference is taken and squared in double). */
static void reduce_step(ops_reduce_kind kind, bool last, const byocl_tensor *in, bool is_float,
                        int64_t i, int64_t pos, double m, reduce_acc *a)
{
    if (is_float) {
        double x = byocl_tensor_get(in, i);
        if (kind == OPS_REDUCE_VARIANCE)
            a->v.f += (x - m) * (x - m);
        else if (kind == OPS_REDUCE_SUM || kind == OPS_REDUCE_MEAN)
            a->v.f += x;
        else if (kind == OPS_REDUCE_PROD)
            a->v.f *= x;
        else if (reduce_takes_f(kind, last, x, a->v.f)) {
            a->v.f = x;
            a->at = pos;
        }
        return;
    }
    int64_t x = elemwise_load_int(in, i);
    if (kind == OPS_REDUCE_SUM || kind == OPS_REDUCE_MEAN) /* wraps, as the dtype does */
        a->v.i = (int64_t)((uint64_t)a->v.i + (uint64_t)x);
    else if (kind == OPS_REDUCE_PROD)
        a->v.i = (int64_t)((uint64_t)a->v.i * (uint64_t)x);
    else if (kind == OPS_REDUCE_ALL)
        a->v.i = a->v.i && x;
    else if (kind == OPS_REDUCE_ANY)
        a->v.i = a->v.i || x;
    else if (reduce_takes_i(kind, last, x = elemwise_order_key(byocl_tensor_dtype(in), x),
                            a->v.i)) {
        a->v.i = x; /* max and min keep the order key (uint64: its top bit flipped) */
        a->at = pos;
    }
}

/* Floats reduce in double; integers in int64 (sums and products wrap; the integer mean
 * truncates toward zero: TVM's mean keeps the input dtype). argmax and argmin give the
 * position within the reduced elements in C order, as int32. variance sums the squared
 * differences from its mean argument in C order, in double, then divides by the count
 * (count - 1 with unbiased), as TVM's VarianceCompute. */
static byocl_status reduce_ref(ops_reduce_kind kind, const byocl_attrs *attrs,
                               const byocl_tensor *const *in, int n_in, byocl_tensor *const *out,
                               int n_out, byocl_error *err)
{
    const char *op = reduce_names[kind];
    byocl_status st = elemwise_check_arity(op, n_in, ops_reduce_n_args(kind), n_out, 1, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_shape *ishape = byocl_tensor_shape(in[0]);
    byocl_dtype din = byocl_tensor_dtype(in[0]), dout = ops_reduce_out_dtype(kind, din);
    bool variance = kind == OPS_REDUCE_VARIANCE;
    if (variance) {
        byocl_type data = byocl_type_tensor(din, ishape->rank, ishape->dims);
        const byocl_shape *ms = byocl_tensor_shape(in[1]);
        byocl_type mean = byocl_type_tensor(byocl_tensor_dtype(in[1]), ms->rank, ms->dims);
        st = check_variance_mean(&data, &mean, err);
        if (st != BYOCL_OK)
            return st;
    }
    bool reduced[BYOCL_MAX_RANK];
    byocl_shape oshape;
    st = reduce_shape(ishape, attrs, reduced, &oshape, err);
    if (st == BYOCL_OK && byocl_tensor_dtype(out[0]) != dout)
        st = byocl_error_set(err, BYOCL_ERR_INVALID, "%s kernel: output dtype %s, expected %s",
                             op, byocl_dtype_name(byocl_tensor_dtype(out[0])),
                             byocl_dtype_name(dout));
    if (st == BYOCL_OK)
        st = check_out_shape(op, &oshape, out[0], err);
    if (st != BYOCL_OK)
        return st;
    int rank = ishape->rank;
    /* Strides along each input axis: of the output offset (0 on reduced axes) and of the
     * position within the reduced elements (0 on kept axes). */
    int64_t stride[BYOCL_MAX_RANK], rstride[BYOCL_MAX_RANK], idx[BYOCL_MAX_RANK] = {0};
    int64_t mstride[BYOCL_MAX_RANK] = {0}; /* of variance's mean (0 where it broadcasts) */
    int64_t count = 1, s = 1, ms = 1;
    for (int d = rank - 1; d >= 0; d--) {
        stride[d] = reduced[d] ? 0 : s;
        rstride[d] = reduced[d] ? count : 0;
        if (reduced[d])
            count *= ishape->dims[d];
        else
            s *= ishape->dims[d];
        if (variance) {
            int64_t md = byocl_tensor_shape(in[1])->dims[d];
            mstride[d] = md == 1 ? 0 : ms;
            ms *= md;
        }
    }
    int64_t n_out_el = byocl_tensor_numel(out[0]), n_in_el = byocl_tensor_numel(in[0]);
    bool is_float = byocl_dtype_is_float(din);
    if (count == 0 && n_out_el > 0 && kind == OPS_REDUCE_MEAN && !is_float)
        return byocl_error_set(err, BYOCL_ERR_RUNTIME,
                               "mean: integer mean over zero elements (a reduced axis has size 0)");
    if (count == 0 && n_out_el > 0 && ops_reduce_needs_element(kind))
        return byocl_error_set(err, BYOCL_ERR_RUNTIME,
                               "%s: %s over zero elements has no result (a reduced axis has "
                               "size 0)",
                               op, op);
    reduce_acc *acc = malloc((size_t)(n_out_el ? n_out_el : 1) * sizeof *acc);
    if (!acc)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory for the %s of %lld values",
                               op, (long long)n_out_el);
    for (int64_t i = 0; i < n_out_el; i++)
        reduce_init(kind, is_float, &acc[i]);
    bool last = byocl_attrs_get_bool(attrs, "select_last_index", false);
    int64_t at = 0, pos = 0, moff = 0;
    for (int64_t i = 0; i < n_in_el; i++) {
        double m = variance ? byocl_tensor_get(in[1], moff) : 0.0;
        reduce_step(kind, last, in[0], is_float, i, pos, m, &acc[at]);
        for (int d = rank - 1; d >= 0; d--) { /* next input index, C order */
            at += stride[d];
            pos += rstride[d];
            moff += mstride[d];
            if (++idx[d] < ishape->dims[d])
                break;
            at -= stride[d] * ishape->dims[d];
            pos -= rstride[d] * ishape->dims[d];
            moff -= mstride[d] * ishape->dims[d];
            idx[d] = 0;
        }
    }
    bool mean = kind == OPS_REDUCE_MEAN;
    double divisor = variance ? (double)(count - byocl_attrs_get_bool(attrs, "unbiased", false))
                     : mean   ? (double)count
                              : 1.0;
    for (int64_t i = 0; i < n_out_el; i++) {
        if (kind == OPS_REDUCE_ARGMAX || kind == OPS_REDUCE_ARGMIN)
            elemwise_store_int(out[0], i, acc[i].at);
        else if (is_float)
            byocl_tensor_set(out[0], i, mean || variance ? acc[i].v.f / divisor : acc[i].v.f);
        else if (mean)
            elemwise_store_int(out[0], i, byocl_dtype_is_unsigned(din)
                                              ? (int64_t)((uint64_t)acc[i].v.i / (uint64_t)count)
                                              : acc[i].v.i / count);
        else if (kind == OPS_REDUCE_MAX || kind == OPS_REDUCE_MIN)
            elemwise_store_int(out[0], i, elemwise_order_key(din, acc[i].v.i)); /* its own inverse */
        else
            elemwise_store_int(out[0], i, acc[i].v.i);
    }
    free(acc);
    return BYOCL_OK;
}

/* The type relation and kernel of each reduction: its kind bound to the shared ones. */
#define REDUCE_OP(name, kind)                                                              \
    static byocl_status infer_##name(const byocl_infer_ctx *ctx, byocl_type *out,          \
                                     byocl_error *err)                                     \
    {                                                                                      \
        return infer_reduce(kind, ctx, out, err);                                          \
    }                                                                                      \
    static byocl_status name##_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, \
                                   int n_in, byocl_tensor *const *out, int n_out,          \
                                   byocl_error *err)                                       \
    {                                                                                      \
        return reduce_ref(kind, attrs, in, n_in, out, n_out, err);                         \
    }
REDUCE_OP(sum, OPS_REDUCE_SUM)
REDUCE_OP(mean, OPS_REDUCE_MEAN)
REDUCE_OP(prod, OPS_REDUCE_PROD)
REDUCE_OP(max, OPS_REDUCE_MAX)
REDUCE_OP(min, OPS_REDUCE_MIN)
REDUCE_OP(argmax, OPS_REDUCE_ARGMAX)
REDUCE_OP(argmin, OPS_REDUCE_ARGMIN)
REDUCE_OP(all, OPS_REDUCE_ALL)
REDUCE_OP(any, OPS_REDUCE_ANY)
REDUCE_OP(variance, OPS_REDUCE_VARIANCE)

/* ------------------------------------------------------------- the table */

static const byocl_attr_schema reshape_attrs[] = {
    {.name = "newshape", .kind = BYOCL_ATTR_INTS, .required = true,
     .doc = "new shape: positive dims, 0 copies the input dim, one -1 is inferred"},
    {.name = "allowzero", .kind = BYOCL_ATTR_BOOL, .def_i = 0,
     .doc = "treat 0 in newshape as a literal zero-size dim instead of a copy"},
};

static const byocl_attr_schema transpose_attrs[] = {
    {.name = "axes", .kind = BYOCL_ATTR_INTS, .nullable = true, .def_null = true,
     .doc = "input axis for each output axis (negative counts from the end); None reverses"},
};

#define SUBPIXEL_ATTRS                                                                      \
    {.name = "block_size", .kind = BYOCL_ATTR_INT, .def_i = 1,                              \
     .doc = "the side of the blocks moved (1 or more)"},                                   \
    {.name = "layout", .kind = BYOCL_ATTR_STR, .def_s = "NCHW",                             \
     .doc = "\"NCHW\" (the only layout byocl supports)"}

static const byocl_attr_schema depth_to_space_attrs[] = {
    SUBPIXEL_ATTRS,
    {.name = "mode", .kind = BYOCL_ATTR_STR, .def_s = "DCR",
     .doc = "\"DCR\" (depth, column, row: the channel's high part is the block position) or "
            "\"CRD\" (its low part is)"},
};

static const byocl_attr_schema space_to_depth_attrs[] = {SUBPIXEL_ATTRS};

static const byocl_attr_schema concatenate_attrs[] = {
    {.name = "axis", .kind = BYOCL_ATTR_INT, .def_i = 0,
     .doc = "axis to join along (negative counts from the end)"},
};

static const byocl_attr_schema split_attrs[] = {
    {.name = "indices_or_sections", .kind = BYOCL_ATTR_INTS, .required = true,
     .int_or_ints = true,
     .doc = "an integer: that many equal pieces; a list: the indices where pieces start"},
    {.name = "axis", .kind = BYOCL_ATTR_INT, .def_i = 0,
     .doc = "axis to split along (negative counts from the end)"},
};

static const byocl_attr_schema squeeze_attrs[] = {
    {.name = "axis", .kind = BYOCL_ATTR_INTS, .nullable = true, .def_null = true,
     .doc = "size-1 axes to remove; None removes every size-1 axis"},
};

static const byocl_attr_schema expand_dims_attrs[] = {
    {.name = "axis", .kind = BYOCL_ATTR_INT, .required = true,
     .doc = "where the new axes go, in -rank-1..rank"},
    {.name = "num_newaxis", .kind = BYOCL_ATTR_INT, .def_i = 1,
     .doc = "how many size-1 axes to insert"},
};

#define REDUCE_ATTRS                                                                        \
    {.name = "axis", .kind = BYOCL_ATTR_INTS, .nullable = true, .def_null = true,           \
     .int_or_ints = true, .doc = "axis or axes to reduce over; None (or []) means all"},    \
    {.name = "keepdims", .kind = BYOCL_ATTR_BOOL, .def_i = 0,                               \
     .doc = "keep the reduced axes as size-1 dims"},                                        \
    {.name = "exclude", .kind = BYOCL_ATTR_BOOL, .def_i = 0,                                \
     .doc = "reduce over the axes not listed in axis instead"}

static const byocl_attr_schema reduce_attrs[] = {REDUCE_ATTRS};

static const byocl_attr_schema arg_reduce_attrs[] = {
    REDUCE_ATTRS,
    {.name = "select_last_index", .kind = BYOCL_ATTR_BOOL, .def_i = 0,
     .doc = "on a tie, give the last position instead of the first"},
};

static const byocl_attr_schema variance_attrs[] = {
    REDUCE_ATTRS,
    {.name = "unbiased", .kind = BYOCL_ATTR_BOOL, .def_i = 0,
     .doc = "divide by count - 1 (Bessel's correction) instead of count"},
};

#define ARRAY_LEN(a) ((int)(sizeof a / sizeof a[0]))

const byocl_op ops_transform[] = {
    {.name = "reshape", .min_args = 1, .max_args = 1, .attrs = reshape_attrs,
     .n_attrs = ARRAY_LEN(reshape_attrs), .doc = "the same elements in a new shape",
     .check_attrs = check_reshape_attrs, .infer = infer_reshape, .ref = elemwise_ref_copy},
    {.name = "transpose", .min_args = 1, .max_args = 1, .attrs = transpose_attrs,
     .n_attrs = ARRAY_LEN(transpose_attrs), .doc = "permutes the axes",
     .infer = infer_transpose, .ref = transpose_ref},
    {.name = "nn.depth_to_space", .min_args = 1, .max_args = 1,
     .attrs = depth_to_space_attrs, .n_attrs = ARRAY_LEN(depth_to_space_attrs),
     .doc = "moves blocks of channels into space: (N, C, H, W) -> (N, C/b^2, H*b, W*b)",
     .check_attrs = check_depth_to_space_attrs, .infer = infer_depth_to_space,
     .ref = depth_to_space_ref},
    {.name = "nn.space_to_depth", .min_args = 1, .max_args = 1,
     .attrs = space_to_depth_attrs, .n_attrs = ARRAY_LEN(space_to_depth_attrs),
     .doc = "moves blocks of space into channels: (N, C, H, W) -> (N, C*b^2, H/b, W/b), "
            "the inverse of depth_to_space's DCR",
     .check_attrs = check_space_to_depth_attrs, .infer = infer_space_to_depth,
     .ref = space_to_depth_ref},
    {.name = "concatenate", .min_args = 1, .max_args = 1, .attrs = concatenate_attrs,
     .n_attrs = ARRAY_LEN(concatenate_attrs),
     .doc = "joins a tuple of tensors along an axis: concatenate((%a, %b), axis=1)",
     .infer = infer_concatenate, .ref = concatenate_ref},
    {.name = "split", .min_args = 1, .max_args = 1, .attrs = split_attrs,
     .n_attrs = ARRAY_LEN(split_attrs), .doc = "cuts a tensor along an axis into a tuple of pieces",
     .infer = infer_split, .ref = split_ref},
    {.name = "squeeze", .min_args = 1, .max_args = 1, .attrs = squeeze_attrs,
     .n_attrs = ARRAY_LEN(squeeze_attrs), .doc = "removes axes of size 1",
     .infer = infer_squeeze, .ref = elemwise_ref_copy},
    {.name = "expand_dims", .min_args = 1, .max_args = 1, .attrs = expand_dims_attrs,
     .n_attrs = ARRAY_LEN(expand_dims_attrs), .doc = "inserts axes of size 1",
     .check_attrs = check_expand_dims_attrs, .infer = infer_expand_dims,
     .ref = elemwise_ref_copy},
#define REDUCE_ENTRY_N(op, n, schema, what)                                                 \
    {.name = #op, .min_args = n, .max_args = n, .attrs = schema, .n_attrs = ARRAY_LEN(schema), \
     .doc = what, .infer = infer_##op, .ref = op##_ref}
#define REDUCE_ENTRY(op, schema, what) REDUCE_ENTRY_N(op, 1, schema, what)
    REDUCE_ENTRY(sum, reduce_attrs, "sum over axes (integers wrap; over no elements: 0)"),
    REDUCE_ENTRY(mean, reduce_attrs, "average over axes (integer dtypes truncate toward zero)"),
    REDUCE_ENTRY(prod, reduce_attrs, "product over axes (integers wrap; over no elements: 1)"),
    REDUCE_ENTRY(max, reduce_attrs,
                 "maximum over axes (NaN wins; over no elements: an error at run time)"),
    REDUCE_ENTRY(min, reduce_attrs,
                 "minimum over axes (NaN wins; over no elements: an error at run time)"),
    REDUCE_ENTRY(argmax, arg_reduce_attrs,
                 "int32 position of the maximum within the reduced axes (C order; first on "
                 "a tie, NaN wins)"),
    REDUCE_ENTRY(argmin, arg_reduce_attrs,
                 "int32 position of the minimum within the reduced axes (C order; first on "
                 "a tie, NaN wins)"),
    REDUCE_ENTRY(all, reduce_attrs, "bool: every element over axes is true (over none: True)"),
    REDUCE_ENTRY(any, reduce_attrs, "bool: some element over axes is true (over none: False)"),
    REDUCE_ENTRY_N(variance, 2, variance_attrs,
                   "variance(data, mean): sum of (data - mean)^2 over axes divided by the "
                   "count (count - 1 with unbiased); mean broadcasts against data (float "
                   "dtypes)"),
};
const int ops_transform_count = ARRAY_LEN(ops_transform);
