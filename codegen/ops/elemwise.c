/* Op group "elemwise": binary arithmetic, power, mod, floor_mod, comparisons and logical
 * ops with numpy broadcasting, where (three-way broadcasting), and elementwise unary ops
 * (abs, negative, sign, exp, log, sqrt, rsqrt, erf, sigmoid, tanh, round, floor, ceil, the trigonometric
 * and hyperbolic functions and their inverses, isinf, isnan, clip, logical_not, copy,
 * cast).
 *
 * Floating-point kernels compute in double and round once to the output dtype (float16
 * to nearest even), which for +, -, *, / gives exactly numpy's float32/float16 results.
 * The other float functions (exp, log, sqrt, rsqrt as 1 / sqrt, erf, power as pow,
 * sigmoid, tanh, round as rint, floor, ceil, sin ... atanh, mod as fmod) call double libm and round
 * once. Comparisons compare in double (floats)
 * or 64 bits (integers) and give bool; logical ops take and give bool.
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
    st = ops_broadcast_shapes(&a->shape, &b->shape, &shape, err);
    if (st != BYOCL_OK)
        return st;
    *out = byocl_type_tensor(a->dtype, shape.rank, shape.dims);
    return BYOCL_OK;
}

static byocl_status require_float(byocl_dtype dtype, byocl_error *err)
{
    if (byocl_dtype_is_float(dtype))
        return BYOCL_OK;
    return byocl_error_set(err, BYOCL_ERR_TYPE, "needs a float dtype (float32, float16, float64 or bfloat16), got %s",
                           byocl_dtype_name(dtype));
}

static byocl_status require_bool(byocl_dtype dtype, const char *what, byocl_error *err)
{
    if (dtype == BYOCL_BOOL)
        return BYOCL_OK;
    return byocl_error_set(err, BYOCL_ERR_TYPE, "%s must be bool, got %s", what,
                           byocl_dtype_name(dtype));
}

/* exp, log, sqrt, rsqrt, erf, sigmoid, tanh: defined on float dtypes only (as in TVM). */
static byocl_status infer_float_unary(const byocl_infer_ctx *ctx, byocl_type *out,
                                      byocl_error *err)
{
    byocl_status st = elemwise_infer_identity(ctx, out, err);
    return st == BYOCL_OK ? require_float(out->dtype, err) : st;
}

/* isinf, isnan: a float argument, a bool result. */
static byocl_status infer_float_test(const byocl_infer_ctx *ctx, byocl_type *out,
                                     byocl_error *err)
{
    byocl_status st = infer_float_unary(ctx, out, err);
    if (st == BYOCL_OK)
        out->dtype = BYOCL_BOOL;
    return st;
}

/* power: float dtypes only (TVM's ONNX frontend casts integer bases to float32). */
static byocl_status infer_float_binary(const byocl_infer_ctx *ctx, byocl_type *out,
                                       byocl_error *err)
{
    byocl_status st = infer_binary(ctx, out, err);
    return st == BYOCL_OK ? require_float(out->dtype, err) : st;
}

/* equal ... greater_equal: any dtype (both alike), a bool result. */
static byocl_status infer_compare(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    byocl_status st = infer_binary(ctx, out, err);
    if (st == BYOCL_OK)
        out->dtype = BYOCL_BOOL;
    return st;
}

/* logical_and, logical_or, logical_xor: bool arguments. */
static byocl_status infer_logical(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    byocl_status st = infer_binary(ctx, out, err);
    return st == BYOCL_OK ? require_bool(out->dtype, "the arguments", err) : st;
}

static byocl_status infer_logical_not(const byocl_infer_ctx *ctx, byocl_type *out,
                                      byocl_error *err)
{
    byocl_status st = elemwise_infer_identity(ctx, out, err);
    return st == BYOCL_OK ? require_bool(out->dtype, "the argument", err) : st;
}

/* where(condition, x, y): condition bool, x and y one dtype, all three broadcast. */
static byocl_status infer_where(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err)
{
    const byocl_type *t[3];
    for (int k = 0; k < 3; k++) {
        byocl_status st = elemwise_tensor_arg(ctx, k, &t[k], err);
        if (st != BYOCL_OK)
            return st;
    }
    byocl_status st = require_bool(t[0]->dtype, "the condition (argument 0)", err);
    if (st != BYOCL_OK)
        return st;
    if (t[1]->dtype != t[2]->dtype)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "x and y dtypes differ: %s and %s",
                               byocl_dtype_name(t[1]->dtype), byocl_dtype_name(t[2]->dtype));
    byocl_shape xy, shape;
    st = ops_broadcast_shapes(&t[1]->shape, &t[2]->shape, &xy, err);
    if (st == BYOCL_OK)
        st = ops_broadcast_shapes(&t[0]->shape, &xy, &shape, err);
    if (st != BYOCL_OK)
        return st;
    *out = byocl_type_tensor(t[1]->dtype, shape.rank, shape.dims);
    return BYOCL_OK;
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

/* ------------------------------------------------------------- broadcast walks */

/* Walks the elements of an output shape in C order with the offsets of up to three
 * broadcast operands. */
typedef struct bcast_walk {
    int rank, n;
    int64_t dims[BYOCL_MAX_RANK], idx[BYOCL_MAX_RANK];
    int64_t strides[3][BYOCL_MAX_RANK];
    int64_t off[3];
} bcast_walk;

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

static void bcast_walk_init(bcast_walk *w, const byocl_shape *out,
                            const byocl_tensor *const *in, int n)
{
    memset(w, 0, sizeof *w);
    w->rank = out->rank;
    w->n = n;
    memcpy(w->dims, out->dims, sizeof w->dims);
    for (int k = 0; k < n; k++)
        broadcast_strides(byocl_tensor_shape(in[k]), out, w->strides[k]);
}

static void bcast_walk_next(bcast_walk *w)
{
    for (int d = w->rank - 1; d >= 0; d--) {
        for (int k = 0; k < w->n; k++)
            w->off[k] += w->strides[k][d];
        if (++w->idx[d] < w->dims[d])
            return;
        for (int k = 0; k < w->n; k++)
            w->off[k] -= w->strides[k][d] * w->dims[d];
        w->idx[d] = 0;
    }
}

/* Checks a kernel's tensors against its op's type: the inputs broadcast to the output's
 * shape, inputs[first..] share a dtype, and the output has `out_dtype` (-1: that dtype). */
static byocl_status check_broadcast_tensors(const char *name, const byocl_tensor *const *in,
                                            int n_in, int first, const byocl_tensor *out,
                                            int out_dtype, byocl_error *err)
{
    byocl_shape shape = *byocl_tensor_shape(in[0]);
    for (int k = 1; k < n_in; k++) {
        byocl_shape next;
        byocl_status st = ops_broadcast_shapes(&shape, byocl_tensor_shape(in[k]), &next, err);
        if (st != BYOCL_OK)
            return st;
        shape = next;
    }
    byocl_dtype dtype = byocl_tensor_dtype(in[first]);
    bool ok = byocl_shape_equal(&shape, byocl_tensor_shape(out)) &&
              byocl_tensor_dtype(out) == (out_dtype < 0 ? dtype : (byocl_dtype)out_dtype);
    for (int k = first + 1; k < n_in; k++)
        ok = ok && byocl_tensor_dtype(in[k]) == dtype;
    if (!ok)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s kernel: tensors do not match the op's type", name);
    return BYOCL_OK;
}

/* ------------------------------------------------------------- binary kernels */

typedef enum binary_op {
    BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV, BIN_MAX, BIN_MIN, BIN_POW, BIN_MOD, BIN_FLOOR_MOD,
    BIN_EQ, BIN_NE, BIN_LT, BIN_GT, BIN_LE, BIN_GE, /* comparisons: bool results */
    BIN_AND, BIN_OR, BIN_XOR                        /* bool arguments and results */
} binary_op;

static const char *const binary_names[] = {
    "add",       "subtract", "multiply", "divide",     "maximum",       "minimum",
    "power",     "mod",      "floor_mod", "equal",    "not_equal", "less",      "greater",       "less_equal",
    "greater_equal", "logical_and", "logical_or", "logical_xor"};

static bool binary_compares(binary_op op) { return op >= BIN_EQ && op <= BIN_GE; }

/* a OP b for a comparison; NaN compares unequal to everything. */
#define COMPARE(op, a, b)                                                                  \
    ((op) == BIN_EQ   ? (a) == (b)                                                         \
     : (op) == BIN_NE ? (a) != (b)                                                         \
     : (op) == BIN_LT ? (a) < (b)                                                          \
     : (op) == BIN_GT ? (a) > (b)                                                          \
     : (op) == BIN_LE ? (a) <= (b)                                                         \
                      : (a) >= (b))

/* The remainder of a / b with the sign of b (floor_mod) from the truncated one r (mod). */
#define FLOOR_ADJUST(r, b) ((r) != 0 && ((r) < 0) != ((b) < 0) ? (r) + (b) : (r))

/* maximum/minimum propagate NaN, as numpy's do. Comparisons give 0 or 1. mod is C's
 * fmod (the sign of a), floor_mod numpy's mod (the sign of b). */
static double binary_float(binary_op op, double a, double b)
{
    switch (op) {
    case BIN_ADD: return a + b;
    case BIN_SUB: return a - b;
    case BIN_MUL: return a * b;
    case BIN_DIV: return a / b;
    case BIN_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case BIN_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    case BIN_POW: return pow(a, b);
    case BIN_MOD: return fmod(a, b);
    case BIN_FLOOR_MOD: return FLOOR_ADJUST(fmod(a, b), b);
    default: return COMPARE(op, a, b);
    }
}

/* Wrapping 64-bit arithmetic (unsigned so that overflow is defined); b != 0 for BIN_DIV,
 * BIN_MOD and BIN_FLOOR_MOD. uint64 (the bits in a and b) divides and compares unsigned;
 * the narrower unsigned dtypes are zero-extended, so signed 64-bit ops serve them.
 * BIN_POW never reaches here (float dtypes only). */
static int64_t binary_int(binary_op op, byocl_dtype dtype, int64_t a, int64_t b)
{
    bool u64 = dtype == BYOCL_UINT64;
    int64_t ka = elemwise_order_key(dtype, a), kb = elemwise_order_key(dtype, b);
    switch (op) {
    case BIN_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case BIN_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case BIN_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case BIN_DIV:
        if (u64)
            return (int64_t)((uint64_t)a / (uint64_t)b);
        return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b; /* INT64_MIN / -1 wraps */
    case BIN_MAX: return ka > kb ? a : b;
    case BIN_MIN: return ka < kb ? a : b;
    case BIN_MOD:
    case BIN_FLOOR_MOD: /* the same for unsigned dtypes */
        if (u64)
            return (int64_t)((uint64_t)a % (uint64_t)b);
        if (b == -1) /* INT64_MIN % -1 is 0 */
            return 0;
        return op == BIN_MOD ? a % b : FLOOR_ADJUST(a % b, b);
    case BIN_AND: return a && b;
    case BIN_OR: return a || b;
    case BIN_XOR: return !a != !b;
    default: return COMPARE(op, ka, kb);
    }
}

static byocl_status binary_ref(binary_op op, const byocl_tensor *const *in, int n_in,
                               byocl_tensor *const *out, int n_out, byocl_error *err)
{
    const char *name = binary_names[op];
    byocl_status st = elemwise_check_arity(name, n_in, 2, n_out, 1, err);
    if (st == BYOCL_OK)
        st = check_broadcast_tensors(name, in, 2, 0, out[0],
                                     binary_compares(op) ? (int)BYOCL_BOOL : -1, err);
    if (st != BYOCL_OK)
        return st;
    const byocl_tensor *a = in[0], *b = in[1];
    byocl_tensor *c = out[0];
    bool is_float = byocl_dtype_is_float(byocl_tensor_dtype(a));
    bcast_walk w;
    bcast_walk_init(&w, byocl_tensor_shape(c), in, 2);
    int64_t n = byocl_tensor_numel(c);
    for (int64_t i = 0; i < n; i++, bcast_walk_next(&w)) {
        if (is_float) {
            double r = binary_float(op, byocl_tensor_get(a, w.off[0]),
                                    byocl_tensor_get(b, w.off[1]));
            if (binary_compares(op))
                elemwise_store_int(c, i, r != 0.0);
            else
                byocl_tensor_set(c, i, r);
            continue;
        }
        int64_t x = elemwise_load_int(a, w.off[0]), y = elemwise_load_int(b, w.off[1]);
        if ((op == BIN_DIV || op == BIN_MOD || op == BIN_FLOOR_MOD) && y == 0)
            return byocl_error_set(err, BYOCL_ERR_RUNTIME,
                                   "%s: integer division by zero at output element %lld", name,
                                   (long long)i);
        elemwise_store_int(c, i, binary_int(op, byocl_tensor_dtype(a), x, y));
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
DEFINE_BINARY_REF(power_ref, BIN_POW)
DEFINE_BINARY_REF(mod_ref, BIN_MOD)
DEFINE_BINARY_REF(floor_mod_ref, BIN_FLOOR_MOD)
DEFINE_BINARY_REF(equal_ref, BIN_EQ)
DEFINE_BINARY_REF(not_equal_ref, BIN_NE)
DEFINE_BINARY_REF(less_ref, BIN_LT)
DEFINE_BINARY_REF(greater_ref, BIN_GT)
DEFINE_BINARY_REF(less_equal_ref, BIN_LE)
DEFINE_BINARY_REF(greater_equal_ref, BIN_GE)
DEFINE_BINARY_REF(logical_and_ref, BIN_AND)
DEFINE_BINARY_REF(logical_or_ref, BIN_OR)
DEFINE_BINARY_REF(logical_xor_ref, BIN_XOR)

/* where(condition, x, y): x where the condition holds, else y; elements are copied as
 * they are (bytes), whatever the dtype. */
static byocl_status where_ref(const byocl_attrs *attrs, const byocl_tensor *const *in, int n_in,
                              byocl_tensor *const *out, int n_out, byocl_error *err)
{
    (void)attrs;
    byocl_status st = elemwise_check_arity("where", n_in, 3, n_out, 1, err);
    if (st == BYOCL_OK)
        st = check_broadcast_tensors("where", in, 3, 1, out[0], -1, err);
    if (st == BYOCL_OK && byocl_tensor_dtype(in[0]) != BYOCL_BOOL)
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "where kernel: tensors do not match the op's type");
    if (st != BYOCL_OK)
        return st;
    byocl_tensor *y = out[0];
    size_t size = byocl_dtype_size(byocl_tensor_dtype(y));
    const uint8_t *cond = byocl_tensor_cdata(in[0]);
    const char *src[2] = {byocl_tensor_cdata(in[1]), byocl_tensor_cdata(in[2])};
    char *dst = byocl_tensor_data(y);
    bcast_walk w;
    bcast_walk_init(&w, byocl_tensor_shape(y), in, 3);
    int64_t n = byocl_tensor_numel(y);
    for (int64_t i = 0; i < n; i++, bcast_walk_next(&w)) {
        int pick = cond[w.off[0]] ? 1 : 2;
        memcpy(dst + (size_t)i * size, src[pick - 1] + (size_t)w.off[pick] * size, size);
    }
    return BYOCL_OK;
}

/* ------------------------------------------------------------- unary kernels */

typedef enum unary_op {
    UN_ABS, UN_NEG, UN_SIGN, UN_CLIP, UN_NOT, /* integer dtypes too (logical_not: bool) */
    UN_EXP, UN_LOG, UN_SQRT, UN_RSQRT, UN_ERF, UN_SIGMOID, UN_TANH, UN_ROUND,
    UN_FLOOR, UN_CEIL,
    UN_SIN, UN_COS, UN_TAN, UN_ASIN, UN_ACOS, UN_ATAN,
    UN_SINH, UN_COSH, UN_ASINH, UN_ACOSH, UN_ATANH,
    UN_ISINF, UN_ISNAN /* float to bool */
} unary_op;

static const char *const unary_names[] = {
    "abs",   "negative", "sign",  "clip", "logical_not", "exp",   "log",   "sqrt",
    "rsqrt", "erf",      "sigmoid", "tanh", "round",     "floor", "ceil",  "sin",
    "cos",   "tan",      "asin",  "acos", "atan",        "sinh",  "cosh",  "asinh",
    "acosh", "atanh",    "isinf", "isnan"};

/* The float ops that are one libm function of one argument, by op. */
static double (*const libm_unary[])(double) = {
    [UN_EXP] = exp,   [UN_LOG] = log,   [UN_SQRT] = sqrt,  [UN_ERF] = erf,
    [UN_TANH] = tanh, [UN_ROUND] = rint, [UN_SIN] = sin,   [UN_COS] = cos,
    [UN_TAN] = tan,   [UN_ASIN] = asin, [UN_ACOS] = acos,  [UN_ATAN] = atan,
    [UN_SINH] = sinh, [UN_COSH] = cosh, [UN_ASINH] = asinh, [UN_ACOSH] = acosh,
    [UN_ATANH] = atanh, [UN_FLOOR] = floor, [UN_CEIL] = ceil,
};

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

/* round is rint: half to even in the default rounding mode, as numpy and ONNX round. */
static double unary_float(unary_op op, double x, const clip_bounds *clip)
{
    if (op < (int)(sizeof libm_unary / sizeof libm_unary[0]) && libm_unary[op])
        return libm_unary[op](x);
    switch (op) {
    case UN_ABS: return fabs(x);
    case UN_NEG: return -x;
    case UN_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : x; /* 0, -0 and NaN stay */
    case UN_RSQRT: return 1.0 / sqrt(x);
    case UN_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case UN_ISINF: return isinf(x) != 0;
    case UN_ISNAN: return isnan(x) != 0;
    case UN_CLIP: return isnan(x) ? x : x < clip->lo ? clip->lo : x > clip->hi ? clip->hi : x;
    case UN_NOT: return x == 0.0; /* not reached: bool only */
    default: return 0.0;  /* the libm ones, above */
    }
}

/* Only abs, negative, sign, clip and logical_not reach here: the type relations keep the
 * others to float dtypes. Unsigned values are never negative (uint64 ones are its bits). */
static int64_t unary_int(unary_op op, byocl_dtype dtype, int64_t x, const clip_bounds *clip)
{
    bool u = byocl_dtype_is_unsigned(dtype);
    switch (op) {
    case UN_ABS: return !u && x < 0 ? (int64_t)(0 - (uint64_t)x) : x; /* INT_MIN stays INT_MIN */
    case UN_NEG: return (int64_t)(0 - (uint64_t)x);                     /* wraps, as in numpy */
    case UN_SIGN: return u ? x != 0 : (x > 0) - (x < 0);
    case UN_NOT: return !x;
    default: {
        if (u && clip->hi_i < 0) /* every unsigned value is above a negative a_max */
            return clip->hi_i;
        int64_t k = elemwise_order_key(dtype, x);
        int64_t lo = u && clip->lo_i < 0 ? 0 : clip->lo_i;
        return k < elemwise_order_key(dtype, lo) ? lo
               : k > elemwise_order_key(dtype, clip->hi_i) ? clip->hi_i
                                                           : x;
    }
    }
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
    bool to_bool = op == UN_ISINF || op == UN_ISNAN;
    if (byocl_tensor_dtype(y) != (to_bool ? BYOCL_BOOL : dtype) || !byocl_shape_equal(byocl_tensor_shape(x),
                                                              byocl_tensor_shape(y)))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s kernel: tensors do not match the op's type", name);
    bool is_float = byocl_dtype_is_float(dtype);
    if (!is_float && op > UN_NOT)
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
        if (to_bool)
            elemwise_store_int(y, i, unary_float(op, byocl_tensor_get(x, i), &clip) != 0.0);
        else if (is_float)
            byocl_tensor_set(y, i, unary_float(op, byocl_tensor_get(x, i), &clip));
        else
            elemwise_store_int(y, i, unary_int(op, dtype, elemwise_load_int(x, i), &clip));
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
DEFINE_UNARY_REF(negative_ref, UN_NEG)
DEFINE_UNARY_REF(logical_not_ref, UN_NOT)
DEFINE_UNARY_REF(exp_ref, UN_EXP)
DEFINE_UNARY_REF(log_ref, UN_LOG)
DEFINE_UNARY_REF(sqrt_ref, UN_SQRT)
DEFINE_UNARY_REF(rsqrt_ref, UN_RSQRT)
DEFINE_UNARY_REF(erf_ref, UN_ERF)
DEFINE_UNARY_REF(sigmoid_ref, UN_SIGMOID)
DEFINE_UNARY_REF(tanh_ref, UN_TANH)
DEFINE_UNARY_REF(clip_ref, UN_CLIP)
DEFINE_UNARY_REF(sign_ref, UN_SIGN)
DEFINE_UNARY_REF(round_ref, UN_ROUND)
DEFINE_UNARY_REF(floor_ref, UN_FLOOR)
DEFINE_UNARY_REF(ceil_ref, UN_CEIL)
DEFINE_UNARY_REF(sin_ref, UN_SIN)
DEFINE_UNARY_REF(cos_ref, UN_COS)
DEFINE_UNARY_REF(tan_ref, UN_TAN)
DEFINE_UNARY_REF(asin_ref, UN_ASIN)
DEFINE_UNARY_REF(acos_ref, UN_ACOS)
DEFINE_UNARY_REF(atan_ref, UN_ATAN)
DEFINE_UNARY_REF(sinh_ref, UN_SINH)
DEFINE_UNARY_REF(cosh_ref, UN_COSH)
DEFINE_UNARY_REF(asinh_ref, UN_ASINH)
DEFINE_UNARY_REF(acosh_ref, UN_ACOSH)
DEFINE_UNARY_REF(atanh_ref, UN_ATANH)
DEFINE_UNARY_REF(isinf_ref, UN_ISINF)
DEFINE_UNARY_REF(isnan_ref, UN_ISNAN)

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
     .doc = "output dtype: float32, float16, int32, int64, int8, uint8, bool, float64, int16, "
            "uint16, uint32, uint64 or bfloat16"},
};

#define BINARY_REL(op_name, relation, fn, what)                                          \
    {.name = op_name, .min_args = 2, .max_args = 2, .doc = what " (numpy broadcasting)", \
     .infer = relation, .ref = fn}
#define BINARY_OP(op_name, fn, what) BINARY_REL(op_name, infer_binary, fn, what)
#define UNARY_OP(op_name, relation, fn, what)                                            \
    {.name = op_name, .min_args = 1, .max_args = 1, .doc = what, .infer = relation, .ref = fn}

const byocl_op ops_elemwise[] = {
    BINARY_OP("add", add_ref, "elementwise a + b"),
    BINARY_OP("subtract", subtract_ref, "elementwise a - b"),
    BINARY_OP("multiply", multiply_ref, "elementwise a * b"),
    BINARY_OP("divide", divide_ref,
              "elementwise a / b; integers truncate toward zero, and dividing by 0 fails"),
    BINARY_OP("maximum", maximum_ref, "elementwise larger of a and b (NaN propagates)"),
    BINARY_OP("minimum", minimum_ref, "elementwise smaller of a and b (NaN propagates)"),
    BINARY_REL("power", infer_float_binary, power_ref,
               "elementwise a to the power b, on float dtypes"),
    BINARY_OP("mod", mod_ref,
              "elementwise remainder of a / b with the sign of a (C fmod; integers: %); "
              "an integer b of 0 fails"),
    BINARY_OP("floor_mod", floor_mod_ref,
              "elementwise remainder of a / b with the sign of b (numpy mod); an integer b "
              "of 0 fails"),
    BINARY_REL("equal", infer_compare, equal_ref, "a == b elementwise, as a bool tensor"),
    BINARY_REL("not_equal", infer_compare, not_equal_ref,
               "a != b elementwise (true where either is NaN), as a bool tensor"),
    BINARY_REL("less", infer_compare, less_ref, "a < b elementwise, as a bool tensor"),
    BINARY_REL("greater", infer_compare, greater_ref, "a > b elementwise, as a bool tensor"),
    BINARY_REL("less_equal", infer_compare, less_equal_ref, "a <= b elementwise, as a bool tensor"),
    BINARY_REL("greater_equal", infer_compare, greater_equal_ref,
               "a >= b elementwise, as a bool tensor"),
    BINARY_REL("logical_and", infer_logical, logical_and_ref,
               "a and b elementwise, on bool tensors"),
    BINARY_REL("logical_or", infer_logical, logical_or_ref, "a or b elementwise, on bool tensors"),
    BINARY_REL("logical_xor", infer_logical, logical_xor_ref,
               "a xor b elementwise, on bool tensors"),
    UNARY_OP("logical_not", infer_logical_not, logical_not_ref,
             "not x elementwise, on a bool tensor"),
    {.name = "where", .min_args = 3, .max_args = 3,
     .doc = "where(condition, x, y): x where the bool condition holds, else y (numpy "
            "broadcasting of all three; x and y of one dtype)",
     .infer = infer_where, .ref = where_ref},
    UNARY_OP("abs", elemwise_infer_identity, abs_ref, "elementwise absolute value"),
    UNARY_OP("negative", elemwise_infer_identity, negative_ref,
             "elementwise -x (integers wrap)"),
    UNARY_OP("sign", elemwise_infer_identity, sign_ref,
             "elementwise sign: -1, 0 or 1 (float 0, -0 and NaN stay as they are)"),
    UNARY_OP("exp", infer_float_unary, exp_ref, "elementwise e^x (float dtypes)"),
    UNARY_OP("log", infer_float_unary, log_ref, "elementwise natural logarithm (float dtypes)"),
    UNARY_OP("sqrt", infer_float_unary, sqrt_ref, "elementwise square root (float dtypes)"),
    UNARY_OP("rsqrt", infer_float_unary, rsqrt_ref, "elementwise 1 / sqrt(x) (float dtypes)"),
    UNARY_OP("erf", infer_float_unary, erf_ref, "elementwise error function (float dtypes)"),
    UNARY_OP("sigmoid", infer_float_unary, sigmoid_ref,
             "elementwise 1 / (1 + e^-x) (float dtypes)"),
    UNARY_OP("tanh", infer_float_unary, tanh_ref, "elementwise hyperbolic tangent (float dtypes)"),
    UNARY_OP("round", infer_float_unary, round_ref,
             "elementwise round to the nearest integer, halves to even (float dtypes)"),
    UNARY_OP("floor", infer_float_unary, floor_ref,
             "elementwise largest integer not above x (float dtypes)"),
    UNARY_OP("ceil", infer_float_unary, ceil_ref,
             "elementwise smallest integer not below x (float dtypes)"),
    UNARY_OP("sin", infer_float_unary, sin_ref, "elementwise sine (float dtypes)"),
    UNARY_OP("cos", infer_float_unary, cos_ref, "elementwise cosine (float dtypes)"),
    UNARY_OP("tan", infer_float_unary, tan_ref, "elementwise tangent (float dtypes)"),
    UNARY_OP("asin", infer_float_unary, asin_ref, "elementwise arc sine (float dtypes)"),
    UNARY_OP("acos", infer_float_unary, acos_ref, "elementwise arc cosine (float dtypes)"),
    UNARY_OP("atan", infer_float_unary, atan_ref, "elementwise arc tangent (float dtypes)"),
    UNARY_OP("sinh", infer_float_unary, sinh_ref, "elementwise hyperbolic sine (float dtypes)"),
    UNARY_OP("cosh", infer_float_unary, cosh_ref, "elementwise hyperbolic cosine (float dtypes)"),
    UNARY_OP("asinh", infer_float_unary, asinh_ref,
             "elementwise inverse hyperbolic sine (float dtypes)"),
    UNARY_OP("acosh", infer_float_unary, acosh_ref,
             "elementwise inverse hyperbolic cosine (float dtypes)"),
    UNARY_OP("atanh", infer_float_unary, atanh_ref,
             "elementwise inverse hyperbolic tangent (float dtypes)"),
    UNARY_OP("isinf", infer_float_test, isinf_ref,
             "elementwise x is +inf or -inf, as a bool tensor (float dtypes)"),
    UNARY_OP("isnan", infer_float_test, isnan_ref,
             "elementwise x is NaN, as a bool tensor (float dtypes)"),
    {.name = "clip", .min_args = 1, .max_args = 1, .attrs = clip_attrs, .n_attrs = 2,
     .doc = "limits every element to [a_min, a_max] (NaN stays NaN)",
     .check_attrs = check_clip_attrs, .infer = elemwise_infer_identity, .ref = clip_ref},
    {.name = "copy", .min_args = 1, .max_args = 1, .doc = "a copy of the tensor",
     .infer = elemwise_infer_identity, .ref = elemwise_ref_copy, .identity = true},
    {.name = "cast", .min_args = 1, .max_args = 1, .attrs = cast_attrs, .n_attrs = 1,
     .doc = "converts to another dtype: float16 rounds to nearest even, bfloat16 truncates "
            "(ONNX's Cast; NaN stays NaN), float to integer truncates toward zero and wraps",
     .check_attrs = check_cast_attrs, .infer = infer_cast, .ref = cast_ref},
};
const int ops_elemwise_count =
    (int)(sizeof ops_elemwise / sizeof ops_elemwise[0]);
