/* Op group "elemwise": binary arithmetic with numpy broadcasting, and elementwise unary ops
 * (abs, exp, sigmoid, tanh, clip, copy, cast).
 *
 * Floating-point kernels compute in double and round once to the output dtype (float16
 * to nearest even), which for +, -, *, / gives exactly numpy's float32/float16 results.
 * Integer kernels compute in 64 bits and wrap to the dtype's width, as TVM's do; integer
 * division truncates toward zero. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "elemwise_util.h"

/* ------------------------------------------------------------- type relations */

static byocl_status infer_binary(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *a, *b;
    byocl_status st = elemwise_tensor_arg(ctx, 0, &a, err);
    if (st == BYOCL_OK)
        st = elemwise_tensor_arg(ctx, 1, &b, err);
    if (st != BYOCL_OK)
        return st;
    if (a->dtype != b->dtype)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "argument dtypes differ: %s and %s",
                               byocl_dtype_name(a->dtype), byocl_dtype_name(b->dtype));
    byocl_shape shape;
    st = byocl_broadcast_shapes(&a->shape, &b->shape, &shape, err);
    if (st != BYOCL_OK)
        return st;
    *out = byocl_type_tensor(a->dtype, shape.rank, shape.dims);
    return BYOCL_OK;
}

/* exp, sigmoid, tanh: defined on float dtypes only (as in TVM). */
static byocl_status infer_float_unary(const byocl_infer_ctx *ctx, byocl_type *out,
                                      byocl_error *err)
{
    byocl_status st = elemwise_infer_identity(ctx, out, err);
    if (st == BYOCL_OK && !byocl_dtype_is_float(out->dtype))
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "needs a float dtype (float32 or float16), got %s",
                               byocl_dtype_name(out->dtype));
    return st;
}

static byocl_status infer_cast(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    byocl_status st = elemwise_infer_identity(ctx, out, err);
    if (st != BYOCL_OK)
        return st;
    const char *name = byocl_attrs_get_str(ctx->attrs, "dtype", "");
    if (!byocl_dtype_from_name(name, &out->dtype)) /* check_attrs rejects this earlier */
        return byocl_error_set(err, BYOCL_ERR_INVALID, "unknown dtype \"%s\"", name);
    return BYOCL_OK;
}

/* ------------------------------------------------------------- attribute checks */

static byocl_status check_cast_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    const char *name = byocl_attrs_get_str(attrs, "dtype", "");
    byocl_dtype dtype;
    if (byocl_dtype_from_name(name, &dtype))
        return BYOCL_OK;
    char known[128] = "";
    for (int d = 0; d < BYOCL_DTYPE_COUNT; d++) {
        size_t at = strlen(known);
        snprintf(known + at, sizeof known - at, "%s%s", d ? ", " : "",
                 byocl_dtype_name((byocl_dtype)d));
    }
    return byocl_error_set(err, BYOCL_ERR_INVALID,
                           "bad value for attribute 'dtype' of cast: unknown dtype \"%s\" "
                           "(expected one of %s)",
                           name, known);
}

static byocl_status check_clip_attrs(byocl_module *m, byocl_attrs *attrs, byocl_error *err)
{
    (void)m;
    double lo = byocl_attrs_get_float(attrs, "a_min", 0.0);
    double hi = byocl_attrs_get_float(attrs, "a_max", 0.0);
    if (lo > hi)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "bad values for attributes of clip: a_min (%g) is greater than "
                               "a_max (%g)",
                               lo, hi);
    return BYOCL_OK;
}

/* ------------------------------------------------------------- binary kernels */

typedef enum binary_op { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV, BIN_MAX, BIN_MIN } binary_op;

static const char *const binary_names[] = {"add", "subtract", "multiply",
                                           "divide", "maximum", "minimum"};

/* maximum/minimum propagate NaN, as numpy's do. */
static double binary_float(binary_op op, double a, double b)
{
    switch (op) {
    case BIN_ADD: return a + b;
    case BIN_SUB: return a - b;
    case BIN_MUL: return a * b;
    case BIN_DIV: return a / b;
    case BIN_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case BIN_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    }
    return 0.0;
}

/* Wrapping 64-bit arithmetic (unsigned so that overflow is defined); b != 0 for BIN_DIV. */
static int64_t binary_int(binary_op op, int64_t a, int64_t b)
{
    switch (op) {
    case BIN_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case BIN_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case BIN_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case BIN_DIV: return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b; /* INT64_MIN / -1 wraps */
    case BIN_MAX: return a > b ? a : b;
    case BIN_MIN: return a < b ? a : b;
    }
    return 0;
}

/* Strides (in elements) that walk `in` while an index walks `out`: 0 along dimensions
 * that `in` lacks (leading) or has as 1 (broadcast). */
static void broadcast_strides(const byocl_shape *in, const byocl_shape *out, int64_t *strides)
{
    int64_t stride = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        int k = d - (out->rank - in->rank);
        if (k < 0) {
            strides[d] = 0;
            continue;
        }
        strides[d] = in->dims[k] == 1 ? 0 : stride;
        stride *= in->dims[k];
    }
}

static byocl_status binary_ref(binary_op op, const byocl_tensor *const *in, int n_in,
                               byocl_tensor *const *out, int n_out, byocl_error *err)
{
    const char *name = binary_names[op];
    byocl_status st = elemwise_check_arity(name, n_in, 2, n_out, 1, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_tensor *a = in[0], *b = in[1];
    byocl_tensor *c = out[0];
    byocl_shape shape;
    st = byocl_broadcast_shapes(byocl_tensor_shape(a), byocl_tensor_shape(b), &shape, err);
    if (st != BYOCL_OK)
        return st;
    byocl_dtype dtype = byocl_tensor_dtype(a);
    if (!byocl_shape_equal(&shape, byocl_tensor_shape(c)) || byocl_tensor_dtype(b) != dtype ||
        byocl_tensor_dtype(c) != dtype)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s kernel: tensors do not match the op's type", name);

    int rank = shape.rank;
    int64_t sa[BYOCL_MAX_RANK], sb[BYOCL_MAX_RANK], idx[BYOCL_MAX_RANK] = {0};
    broadcast_strides(byocl_tensor_shape(a), &shape, sa);
    broadcast_strides(byocl_tensor_shape(b), &shape, sb);
    bool is_float = byocl_dtype_is_float(dtype);
    int64_t n = byocl_tensor_numel(c), ia = 0, ib = 0;
    for (int64_t i = 0; i < n; i++) {
        if (is_float) {
            byocl_tensor_set(c, i, binary_float(op, byocl_tensor_get(a, ia),
                                                byocl_tensor_get(b, ib)));
        } else {
            int64_t x = elemwise_load_int(a, ia), y = elemwise_load_int(b, ib);
            if (op == BIN_DIV && y == 0)
                return byocl_error_set(err, BYOCL_ERR_RUNTIME,
                                       "divide: integer division by zero at output element %lld",
                                       (long long)i);
            elemwise_store_int(c, i, binary_int(op, x, y));
        }
        for (int d = rank - 1; d >= 0; d--) { /* next index, C order */
            ia += sa[d];
            ib += sb[d];
            if (++idx[d] < shape.dims[d])
                break;
            ia -= sa[d] * shape.dims[d];
            ib -= sb[d] * shape.dims[d];
            idx[d] = 0;
        }
    }
    return BYOCL_OK;
}

#define DEFINE_BINARY_REF(fn, op)                                                          \
    static byocl_status fn(const byocl_attrs *attrs, const byocl_tensor *const *in,       \
                           int n_in, byocl_tensor *const *out, int n_out, byocl_error *err) \
    {                                                                                      \
        (void)attrs;                                                                       \
        return binary_ref(op, in, n_in, out, n_out, err);                                  \
    }
DEFINE_BINARY_REF(add_ref, BIN_ADD)
DEFINE_BINARY_REF(subtract_ref, BIN_SUB)
DEFINE_BINARY_REF(multiply_ref, BIN_MUL)
DEFINE_BINARY_REF(divide_ref, BIN_DIV)
DEFINE_BINARY_REF(maximum_ref, BIN_MAX)
DEFINE_BINARY_REF(minimum_ref, BIN_MIN)

/* ------------------------------------------------------------- unary kernels */

typedef enum unary_op { UN_ABS, UN_EXP, UN_SIGMOID, UN_TANH, UN_CLIP } unary_op;

static const char *const unary_names[] = {"abs", "exp", "sigmoid", "tanh", "clip"};

typedef struct clip_bounds {
    double lo, hi;         /* float dtypes */
    int64_t lo_i, hi_i;    /* integer dtypes: the bounds truncated toward zero, saturated */
} clip_bounds;

static int64_t saturate_to_int64(double v)
{
    if (!(v > -9.2e18)) /* also NaN */
        return isnan(v) ? 0 : INT64_MIN;
    if (v > 9.2e18)
        return INT64_MAX;
    return (int64_t)v;
}

static double unary_float(unary_op op, double x, const clip_bounds *clip)
{
    switch (op) {
    case UN_ABS: return fabs(x);
    case UN_EXP: return exp(x);
    case UN_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case UN_TANH: return tanh(x);
    case UN_CLIP: return isnan(x) ? x : x < clip->lo ? clip->lo : x > clip->hi ? clip->hi : x;
    }
    return 0.0;
}

/* Only abs and clip reach here: the type relation keeps the others to float dtypes. */
static int64_t unary_int(unary_op op, int64_t x, const clip_bounds *clip)
{
    if (op == UN_ABS)
        return x < 0 ? (int64_t)(0 - (uint64_t)x) : x; /* INT_MIN stays INT_MIN, as in numpy */
    return x < clip->lo_i ? clip->lo_i : x > clip->hi_i ? clip->hi_i : x;
}

static byocl_status unary_ref(unary_op op, const byocl_attrs *attrs,
                              const byocl_tensor *const *in, int n_in,
                              byocl_tensor *const *out, int n_out, byocl_error *err)
{
    const char *name = unary_names[op];
    byocl_status st = elemwise_check_arity(name, n_in, 1, n_out, 1, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_tensor *x = in[0];
    byocl_tensor *y = out[0];
    byocl_dtype dtype = byocl_tensor_dtype(x);
    if (byocl_tensor_dtype(y) != dtype || !byocl_shape_equal(byocl_tensor_shape(x),
                                                              byocl_tensor_shape(y)))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s kernel: tensors do not match the op's type", name);
    bool is_float = byocl_dtype_is_float(dtype);
    if (!is_float && op != UN_ABS && op != UN_CLIP)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s kernel: needs a float dtype, got %s",
                               name, byocl_dtype_name(dtype));
    clip_bounds clip = {0};
    if (op == UN_CLIP) {
        clip.lo = byocl_attrs_get_float(attrs, "a_min", 0.0);
        clip.hi = byocl_attrs_get_float(attrs, "a_max", 0.0);
        clip.lo_i = saturate_to_int64(trunc(clip.lo));
        clip.hi_i = saturate_to_int64(trunc(clip.hi));
    }
    int64_t n = byocl_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        if (is_float)
            byocl_tensor_set(y, i, unary_float(op, byocl_tensor_get(x, i), &clip));
        else
            elemwise_store_int(y, i, unary_int(op, elemwise_load_int(x, i), &clip));
    }
    return BYOCL_OK;
}

#define DEFINE_UNARY_REF(fn, op)                                                           \
    static byocl_status fn(const byocl_attrs *attrs, const byocl_tensor *const *in,       \
                           int n_in, byocl_tensor *const *out, int n_out, byocl_error *err) \
    {                                                                                      \
        return unary_ref(op, attrs, in, n_in, out, n_out, err);                            \
    }
DEFINE_UNARY_REF(abs_ref, UN_ABS)
DEFINE_UNARY_REF(exp_ref, UN_EXP)
DEFINE_UNARY_REF(sigmoid_ref, UN_SIGMOID)
DEFINE_UNARY_REF(tanh_ref, UN_TANH)
DEFINE_UNARY_REF(clip_ref, UN_CLIP)

/* Integer to integer stays in 64 bits; anything involving a float goes through double
 * and byocl_tensor_set (float16 nearest-even, truncation toward zero, wrap). */
static byocl_status cast_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, int n_in,
                             byocl_tensor *const *out, int n_out, byocl_error *err)
{
    (void)attrs;
    byocl_status st = elemwise_check_arity("cast", n_in, 1, n_out, 1, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_tensor *x = in[0];
    byocl_tensor *y = out[0];
    if (!byocl_shape_equal(byocl_tensor_shape(x), byocl_tensor_shape(y)))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "cast kernel: output shape differs from the input's");
    bool via_double = byocl_dtype_is_float(byocl_tensor_dtype(x)) ||
                      byocl_dtype_is_float(byocl_tensor_dtype(y));
    int64_t n = byocl_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        if (via_double)
            byocl_tensor_set(y, i, byocl_tensor_get(x, i));
        else
            elemwise_store_int(y, i, elemwise_load_int(x, i));
    }
    return BYOCL_OK;
}

/* ------------------------------------------------------------- the table */

static const byocl_attr_schema clip_attrs[] = {
    {.name = "a_min", .kind = BYOCL_ATTR_FLOAT, .required = true,
     .doc = "lower bound; smaller values become a_min"},
    {.name = "a_max", .kind = BYOCL_ATTR_FLOAT, .required = true,
     .doc = "upper bound; larger values become a_max"},
};

static const byocl_attr_schema cast_attrs[] = {
    {.name = "dtype", .kind = BYOCL_ATTR_STR, .required = true,
     .doc = "output dtype: float32, float16, int32, int64, int8, uint8 or bool"},
};

#define BINARY_OP(op_name, fn, what)                                                      \
    {.name = op_name, .min_args = 2, .max_args = 2, .doc = what " (numpy broadcasting)", \
     .infer = infer_binary, .ref = fn}
#define UNARY_OP(op_name, relation, fn, what)                                            \
    {.name = op_name, .min_args = 1, .max_args = 1, .doc = what, .infer = relation, .ref = fn}

const byocl_op byocl_ops_elemwise[] = {
    BINARY_OP("add", add_ref, "elementwise a + b"),
    BINARY_OP("subtract", subtract_ref, "elementwise a - b"),
    BINARY_OP("multiply", multiply_ref, "elementwise a * b"),
    BINARY_OP("divide", divide_ref,
              "elementwise a / b; integers truncate toward zero, and dividing by 0 fails"),
    BINARY_OP("maximum", maximum_ref, "elementwise larger of a and b (NaN propagates)"),
    BINARY_OP("minimum", minimum_ref, "elementwise smaller of a and b (NaN propagates)"),
    UNARY_OP("abs", elemwise_infer_identity, abs_ref, "elementwise absolute value"),
    UNARY_OP("exp", infer_float_unary, exp_ref, "elementwise e^x (float dtypes)"),
    UNARY_OP("sigmoid", infer_float_unary, sigmoid_ref,
             "elementwise 1 / (1 + e^-x) (float dtypes)"),
    UNARY_OP("tanh", infer_float_unary, tanh_ref, "elementwise hyperbolic tangent (float dtypes)"),
    {.name = "clip", .min_args = 1, .max_args = 1, .attrs = clip_attrs, .n_attrs = 2,
     .doc = "limits every element to [a_min, a_max] (NaN stays NaN)",
     .check_attrs = check_clip_attrs, .infer = elemwise_infer_identity, .ref = clip_ref},
    UNARY_OP("copy", elemwise_infer_identity, elemwise_ref_copy, "a copy of the tensor"),
    {.name = "cast", .min_args = 1, .max_args = 1, .attrs = cast_attrs, .n_attrs = 1,
     .doc = "converts to another dtype: float16 rounds to nearest even, float to integer "
            "truncates toward zero and wraps",
     .check_attrs = check_cast_attrs, .infer = infer_cast, .ref = cast_ref},
};
const int byocl_ops_elemwise_count =
    (int)(sizeof byocl_ops_elemwise / sizeof byocl_ops_elemwise[0]);
