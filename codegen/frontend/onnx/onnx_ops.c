/* ONNX ops -> byocl (Relay) ops, one converter per ONNX op, and the table that lists them
 * with the attributes each one handles (any other attribute is refused, so that no ONNX
 * semantics are silently dropped). docs/onnx.md is the user's view of this file. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"
#include "tensorio/tensor_pb.h"

/* Most window and axis lists are short; BYOCL_MAX_RANK bounds the rest. */
#define MAX_INTS (2 * BYOCL_MAX_RANK)

static int64_t product(const int64_t *dims, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++)
        p *= dims[i];
    return p;
}

static byocl_status set_int(onnx_ctx *cx, byocl_attrs *a, const char *key, int64_t v)
{
    return onnx_attrs_ok(cx, byocl_attrs_set_int(cx->mod, a, key, v));
}

static byocl_status set_ints(onnx_ctx *cx, byocl_attrs *a, const char *key, const int64_t *v,
                             int n)
{
    return onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, key, v, n));
}

static byocl_status set_float(onnx_ctx *cx, byocl_attrs *a, const char *key, double v)
{
    return onnx_attrs_ok(cx, byocl_attrs_set_float(cx->mod, a, key, v));
}

static byocl_status set_bool(onnx_ctx *cx, byocl_attrs *a, const char *key, bool v)
{
    return onnx_attrs_ok(cx, byocl_attrs_set_bool(cx->mod, a, key, v));
}

static byocl_status new_attrs(onnx_ctx *cx, byocl_attrs **a)
{
    *a = onnx_attrs(cx);
    return *a ? BYOCL_OK : cx->err->status;
}

static const byocl_shape *shape_of(onnx_ctx *cx, int id) { return &onnx_type(cx, id)->shape; }

/* -------------------------------------------------------- elementwise ops */

static byocl_status unary(onnx_ctx *cx, const char *op)
{
    int x;
    TRY(onnx_input(cx, 0, &x));
    TRY_ID(y, onnx_call1(cx, op, x, NULL));
    return onnx_output(cx, 0, y);
}

#define UNARY(fn, op)                                                                      \
    static byocl_status fn(onnx_ctx *cx, const Onnx__NodeProto *n)                        \
    {                                                                                      \
        (void)n;                                                                           \
        return unary(cx, op);                                                              \
    }
UNARY(convert_relu, "nn.relu")
UNARY(convert_sigmoid, "sigmoid")
UNARY(convert_tanh, "tanh")
UNARY(convert_abs, "abs")
UNARY(convert_exp, "exp")
UNARY(convert_log, "log")
UNARY(convert_sqrt, "sqrt")
UNARY(convert_erf, "erf")
UNARY(convert_neg, "negative")
UNARY(convert_not, "logical_not")
UNARY(convert_sin, "sin")
UNARY(convert_cos, "cos")
UNARY(convert_tan, "tan")
UNARY(convert_asin, "asin")
UNARY(convert_acos, "acos")
UNARY(convert_atan, "atan")
UNARY(convert_sinh, "sinh")
UNARY(convert_cosh, "cosh")
UNARY(convert_asinh, "asinh")
UNARY(convert_acosh, "acosh")
UNARY(convert_atanh, "atanh")
UNARY(convert_round, "round")
UNARY(convert_floor, "floor")
UNARY(convert_ceil, "ceil")
UNARY(convert_sign, "sign")
UNARY(convert_isnan, "isnan")

/* Element-wise binary ops before opset 7 broadcast only with broadcast=1, B's shape
 * matching A's dims from `axis` on (default: the trailing ones, numpy's alignment). B
 * gets trailing ones so that numpy broadcasting aligns it at `axis`. */
static byocl_status legacy_broadcast(onnx_ctx *cx, int a, int *b)
{
    if (cx->opset >= 7)
        return BYOCL_OK;
    int64_t broadcast, axis;
    TRY(onnx_attr_int(cx, "broadcast", 0, &broadcast));
    TRY(onnx_attr_int(cx, "axis", INT64_MIN, &axis));
    byocl_shape sa = *shape_of(cx, a), sb = *shape_of(cx, *b);
    if (!broadcast) {
        if (!byocl_shape_equal(&sa, &sb))
            return onnx_fail(cx, BYOCL_ERR_INVALID, "broadcast=0 (opset %lld) needs inputs of "
                             "one shape", (long long)cx->opset);
        return BYOCL_OK;
    }
    if (axis == INT64_MIN)
        return BYOCL_OK;
    int at;
    TRY(onnx_axis(cx, axis, sa.rank, "axis", &at));
    if (at + sb.rank > sa.rank)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "B of rank %d does not fit A of rank %d from "
                         "axis %d (broadcast=1, opset %lld)",
                         sb.rank, sa.rank, at, (long long)cx->opset);
    int64_t dims[BYOCL_MAX_RANK];
    for (int i = 0; i < sa.rank - at; i++)
        dims[i] = i < sb.rank ? sb.dims[i] : 1;
    *b = onnx_reshape(cx, *b, sa.rank - at, dims);
    return *b < 0 ? cx->err->status : BYOCL_OK;
}

static byocl_status binary(onnx_ctx *cx, const char *op)
{
    int ab[2];
    TRY(onnx_input(cx, 0, &ab[0]));
    TRY(onnx_input(cx, 1, &ab[1]));
    TRY(legacy_broadcast(cx, ab[0], &ab[1]));
    TRY_ID(y, onnx_call(cx, op, ab, 2, NULL));
    return onnx_output(cx, 0, y);
}

#define BINARY(fn, op)                                                                     \
    static byocl_status fn(onnx_ctx *cx, const Onnx__NodeProto *n)                        \
    {                                                                                      \
        (void)n;                                                                           \
        return binary(cx, op);                                                             \
    }
BINARY(convert_add, "add")
BINARY(convert_sub, "subtract")
BINARY(convert_mul, "multiply")
BINARY(convert_div, "divide")
BINARY(convert_equal, "equal")
BINARY(convert_less, "less")
BINARY(convert_greater, "greater")
BINARY(convert_less_equal, "less_equal")
BINARY(convert_greater_equal, "greater_equal")
BINARY(convert_and, "logical_and")
BINARY(convert_or, "logical_or")
BINARY(convert_xor, "logical_xor")

static byocl_status convert_where(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int args[3];
    for (int k = 0; k < 3; k++)
        TRY(onnx_input(cx, k, &args[k]));
    TRY_ID(y, onnx_call(cx, "where", args, 3, NULL));
    return onnx_output(cx, 0, y);
}

/* op(a, scalar v) or op(scalar v, a) in a's dtype: the constants of the compositions
 * below, as TVM's ONNX frontend builds them. */
int onnx_with_scalar(onnx_ctx *cx, const char *op, int a, double v, bool scalar_first)
{
    if (a < 0)
        return -1;
    int c = onnx_scalar(cx, onnx_type(cx, a)->dtype, v);
    if (c < 0)
        return -1;
    int args[2] = {scalar_first ? c : a, scalar_first ? a : c};
    return onnx_call(cx, op, args, 2, NULL);
}

/* Reciprocal: divide(1, x) (Relay has no reciprocal op). */
static byocl_status convert_reciprocal(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x;
    TRY(onnx_input(cx, 0, &x));
    TRY_ID(y, onnx_with_scalar(cx, "divide", x, 1.0, true));
    return onnx_output(cx, 0, y);
}

/* clip(x * alpha + beta, 0, 1): HardSigmoid, and HardSwish's factor. */
static int hard_sigmoid(onnx_ctx *cx, int x, double alpha, double beta)
{
    int t = onnx_with_scalar(cx, "multiply", x, alpha, false);
    if (t >= 0)
        t = onnx_with_scalar(cx, "add", t, beta, false);
    byocl_attrs *a = t >= 0 ? onnx_attrs(cx) : NULL;
    if (!a || set_float(cx, a, "a_min", 0.0) != BYOCL_OK ||
        set_float(cx, a, "a_max", 1.0) != BYOCL_OK)
        return -1;
    return onnx_call1(cx, "clip", t, a);
}

static byocl_status convert_hard_sigmoid(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    double alpha, beta;
    TRY(onnx_attr_float(cx, "alpha", 0.2, &alpha));
    TRY(onnx_attr_float(cx, "beta", 0.5, &beta));
    int x;
    TRY(onnx_float_input(cx, 0, &x));
    TRY_ID(y, hard_sigmoid(cx, x, alpha, beta));
    return onnx_output(cx, 0, y);
}

/* HardSwish: x * HardSigmoid(x) with alpha 1/6, beta 0.5. */
static byocl_status convert_hard_swish(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x;
    TRY(onnx_float_input(cx, 0, &x));
    TRY_ID(h, hard_sigmoid(cx, x, 1.0 / 6.0, 0.5));
    int args[2] = {x, h};
    TRY_ID(y, onnx_call(cx, "multiply", args, 2, NULL));
    return onnx_output(cx, 0, y);
}

/* Elu: -alpha * relu(1 - exp(x)) + relu(x), as TVM's ONNX frontend writes it. */
static byocl_status convert_elu(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    double alpha;
    TRY(onnx_attr_float(cx, "alpha", 1.0, &alpha));
    int x;
    TRY(onnx_float_input(cx, 0, &x));
    TRY_ID(e, onnx_call1(cx, "exp", x, NULL));
    TRY_ID(one_minus, onnx_with_scalar(cx, "subtract", e, 1.0, true));
    TRY_ID(neg, onnx_call1(cx, "nn.relu", one_minus, NULL));
    TRY_ID(scaled, onnx_with_scalar(cx, "multiply", neg, -alpha, true));
    TRY_ID(pos, onnx_call1(cx, "nn.relu", x, NULL));
    int args[2] = {scaled, pos};
    TRY_ID(y, onnx_call(cx, "add", args, 2, NULL));
    return onnx_output(cx, 0, y);
}

/* IsInf: isinf(x), and with x > 0 (detect_negative=0) or x < 0 (detect_positive=0). */
static byocl_status convert_isinf(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int64_t pos, neg;
    TRY(onnx_attr_int(cx, "detect_positive", 1, &pos));
    TRY(onnx_attr_int(cx, "detect_negative", 1, &neg));
    if (!pos && !neg)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "detect_positive and detect_negative both 0 (an all-false result) is "
                         "not supported");
    int x;
    TRY(onnx_input(cx, 0, &x));
    TRY_ID(y, onnx_call1(cx, "isinf", x, NULL));
    if (!pos || !neg) {
        TRY_ID(side, onnx_with_scalar(cx, pos ? "greater" : "less", x, 0.0, false));
        int args[2] = {y, side};
        TRY_ID(both, onnx_call(cx, "logical_and", args, 2, NULL));
        y = both;
    }
    return onnx_output(cx, 0, y);
}

/* Softplus: log(exp(x) + 1), as TVM's ONNX frontend writes it; Softsign: x / (|x| + 1).
 * Both are outer(inner(x) + 1) (outer divide: x / that). */
static byocl_status plus_one_between(onnx_ctx *cx, const char *inner, const char *outer)
{
    int x;
    TRY(onnx_float_input(cx, 0, &x));
    TRY_ID(i, onnx_call1(cx, inner, x, NULL));
    TRY_ID(i1, onnx_with_scalar(cx, "add", i, 1.0, false));
    int args[2] = {x, i1};
    TRY_ID(y, strcmp(outer, "divide") == 0 ? onnx_call(cx, outer, args, 2, NULL)
                                           : onnx_call1(cx, outer, i1, NULL));
    return onnx_output(cx, 0, y);
}

static byocl_status convert_softplus(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    return plus_one_between(cx, "exp", "log");
}

static byocl_status convert_softsign(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    return plus_one_between(cx, "abs", "divide");
}

/* where(x > threshold, x, other): ThresholdedRelu (other 0) and Selu's two branches. */
static int above_or(onnx_ctx *cx, int x, double threshold, int other)
{
    int c = onnx_with_scalar(cx, "greater", x, threshold, false);
    int args[3] = {c, x, other};
    return c < 0 ? -1 : onnx_call(cx, "where", args, 3, NULL);
}

static byocl_status convert_thresholded_relu(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    double alpha;
    TRY(onnx_attr_float(cx, "alpha", 1.0, &alpha));
    int x;
    TRY(onnx_float_input(cx, 0, &x));
    TRY_ID(zero, onnx_scalar(cx, onnx_type(cx, x)->dtype, 0.0));
    TRY_ID(y, above_or(cx, x, alpha, zero));
    return onnx_output(cx, 0, y);
}

/* Selu: gamma * (x > 0 ? x : alpha * (exp(x) - 1)). */
static byocl_status convert_selu(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    double alpha, gamma;
    TRY(onnx_attr_float(cx, "alpha", 1.67326319217681884765625, &alpha));
    TRY(onnx_attr_float(cx, "gamma", 1.05070102214813232421875, &gamma));
    int x;
    TRY(onnx_float_input(cx, 0, &x));
    TRY_ID(e, onnx_call1(cx, "exp", x, NULL));
    TRY_ID(em1, onnx_with_scalar(cx, "subtract", e, 1.0, false));
    TRY_ID(neg, onnx_with_scalar(cx, "multiply", em1, alpha, false));
    TRY_ID(sel, above_or(cx, x, 0.0, neg));
    TRY_ID(y, onnx_with_scalar(cx, "multiply", sel, gamma, false));
    return onnx_output(cx, 0, y);
}

/* Mod: fmod=1 is C's fmod (Relay mod), fmod=0 the sign of the divisor (floor_mod), which
 * ONNX defines on integers only: float inputs need fmod=1. */
static byocl_status convert_mod(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int64_t fmod;
    TRY(onnx_attr_int(cx, "fmod", 0, &fmod));
    int a;
    TRY(onnx_input(cx, 0, &a));
    byocl_dtype d = onnx_type(cx, a)->dtype;
    if (!fmod && byocl_dtype_is_float(d))
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "fmod=0 (integer mod) on %s inputs: ONNX requires fmod=1 for float "
                         "types",
                         byocl_dtype_name(d));
    return binary(cx, fmod ? "mod" : "floor_mod");
}

/* Identity, and ops that are identities at inference: the output is the input's value
 * (an import-time constant stays one). */
static byocl_status alias_input(onnx_ctx *cx, int k_out)
{
    if (onnx_input_is_constant(cx, 0)) {
        const byocl_tensor *t;
        TRY(onnx_input_constant(cx, 0, "its value", &t));
        return onnx_output_constant(cx, k_out, (byocl_tensor *)t);
    }
    int x;
    TRY(onnx_input(cx, 0, &x));
    return onnx_output(cx, k_out, x);
}

static byocl_status convert_identity(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    return alias_input(cx, 0);
}

/* op(...op(op(in0, in1), in2)..., in_last): the chain of binary ops of a variadic op. */
static int chain(onnx_ctx *cx, const Onnx__NodeProto *n, const char *op)
{
    int acc;
    if (onnx_input(cx, 0, &acc) != BYOCL_OK)
        return -1;
    for (int k = 1; k < (int)n->n_input && acc >= 0; k++) {
        int ab[2] = {acc, -1};
        if (onnx_input(cx, k, &ab[1]) != BYOCL_OK)
            return -1;
        acc = onnx_call(cx, op, ab, 2, NULL);
    }
    return acc;
}

/* Max, Min, Sum and Mean take one or more inputs (numpy broadcasting): a chain of binary
 * ops (Mean divides by the number of inputs); one input is the output. */
static byocl_status variadic(onnx_ctx *cx, const Onnx__NodeProto *n, const char *op,
                             bool mean)
{
    if (n->n_input == 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "needs at least one input");
    if (n->n_input == 1)
        return alias_input(cx, 0);
    TRY_ID(acc, chain(cx, n, op));
    if (mean && (acc = onnx_with_scalar(cx, "divide", acc, (double)n->n_input, false)) < 0)
        return cx->err->status;
    return onnx_output(cx, 0, acc);
}

static byocl_status convert_max(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    return variadic(cx, n, "maximum", false);
}

static byocl_status convert_min(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    return variadic(cx, n, "minimum", false);
}

static byocl_status convert_sum(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    return variadic(cx, n, "add", false);
}

static byocl_status convert_mean(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    return variadic(cx, n, "add", true);
}

static byocl_status convert_leaky_relu(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    double alpha;
    TRY(onnx_attr_float(cx, "alpha", 0.01, &alpha));
    int x;
    byocl_attrs *a;
    TRY(onnx_float_input(cx, 0, &x));
    TRY(new_attrs(cx, &a));
    TRY(set_float(cx, a, "alpha", alpha));
    TRY_ID(y, onnx_call1(cx, "nn.leaky_relu", x, a));
    return onnx_output(cx, 0, y);
}

/* Clip: bounds are attributes before opset 11, optional inputs from 11 on. Constant
 * bounds make a `clip`; bounds computed at run time (or min > max, where ONNX gives max
 * everywhere) make minimum(maximum(x, min), max). */
static byocl_status convert_clip(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    int x;
    TRY(onnx_input(cx, 0, &x));
    double bound[2] = {-INFINITY, INFINITY};
    bool present[2] = {false, false}, constant = true;
    if (cx->opset < 11) {
        TRY(onnx_attr_float(cx, "min", -INFINITY, &bound[0]));
        TRY(onnx_attr_float(cx, "max", INFINITY, &bound[1]));
    } else {
        for (int k = 0; k < 2; k++) {
            present[k] = onnx_has_input(n, k + 1);
            if (!present[k])
                continue;
            if (!onnx_input_is_constant(cx, k + 1)) {
                constant = false;
                continue;
            }
            const byocl_tensor *t;
            TRY(onnx_input_constant(cx, k + 1, "the bound", &t));
            if (byocl_tensor_numel(t) != 1)
                return onnx_fail(cx, BYOCL_ERR_INVALID, "input %d (the %s) should be a scalar",
                                 k + 1, k ? "max" : "min");
            bound[k] = byocl_tensor_get(t, 0);
        }
    }
    if (constant && !(bound[0] > bound[1])) {
        byocl_attrs *a;
        TRY(new_attrs(cx, &a));
        TRY(set_float(cx, a, "a_min", bound[0]));
        TRY(set_float(cx, a, "a_max", bound[1]));
        TRY_ID(y, onnx_call1(cx, "clip", x, a));
        return onnx_output(cx, 0, y);
    }
    static const char *const ops[2] = {"maximum", "minimum"};
    int acc = x;
    for (int k = 0; k < 2; k++) {
        int ab[2] = {acc, -1};
        if (present[k])
            TRY(onnx_input(cx, k + 1, &ab[1]));
        else if (cx->opset < 11)
            ab[1] = onnx_scalar(cx, onnx_type(cx, x)->dtype, bound[k]);
        else
            continue;
        if (ab[1] < 0 || (acc = onnx_call(cx, ops[k], ab, 2, NULL)) < 0)
            return cx->err->status;
    }
    return onnx_output(cx, 0, acc);
}

/* cast(x, dtype) as a node; -1 when it failed (recorded). */
int onnx_cast(onnx_ctx *cx, int x, byocl_dtype dtype)
{
    byocl_attrs *a = x < 0 ? NULL : onnx_attrs(cx);
    if (!a ||
        onnx_attrs_ok(cx, byocl_attrs_set_str(cx->mod, a, "dtype", byocl_dtype_name(dtype))) !=
            BYOCL_OK)
        return -1;
    return onnx_call1(cx, "cast", x, a);
}

/* Pow: power on float dtypes. As TVM's frontend does, an integer base computes in
 * float32 and the result is cast back; an exponent of another dtype is cast to the
 * base's compute dtype. */
static byocl_status convert_pow(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int ab[2];
    TRY(onnx_input(cx, 0, &ab[0]));
    TRY(onnx_input(cx, 1, &ab[1]));
    TRY(legacy_broadcast(cx, ab[0], &ab[1]));
    byocl_dtype out = onnx_type(cx, ab[0])->dtype;
    byocl_dtype calc = byocl_dtype_is_float(out) ? out : BYOCL_FLOAT32;
    for (int k = 0; k < 2; k++)
        if (onnx_type(cx, ab[k])->dtype != calc && (ab[k] = onnx_cast(cx, ab[k], calc)) < 0)
            return cx->err->status;
    TRY_ID(y, onnx_call(cx, "power", ab, 2, NULL));
    if (calc != out && (y = onnx_cast(cx, y, out)) < 0)
        return cx->err->status;
    return onnx_output(cx, 0, y);
}

/* Cast-1's `to` is a string, the name of a TensorProto.DataType ("FLOAT", "INT64"); the
 * enum value it names, as the later integer attribute gives it. */
static byocl_status cast_to_from_name(onnx_ctx *cx, int64_t *to)
{
    char name[32];
    TRY(onnx_attr_string(cx, "to", "", name, sizeof name));
    if (!*name)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute 'to' is missing");
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value_by_name(&onnx__tensor_proto__data_type__descriptor,
                                                      name);
    if (!v || v->value == ONNX__TENSOR_PROTO__DATA_TYPE__UNDEFINED)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "attribute 'to' is '%s', not a TensorProto data type such as 'FLOAT' "
                         "or 'INT64' (opset %lld)",
                         name, (long long)cx->opset);
    *to = v->value;
    return BYOCL_OK;
}

static byocl_status convert_cast(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int64_t to;
    if (cx->opset < 6)
        TRY(cast_to_from_name(cx, &to));
    else
        TRY(onnx_attr_int(cx, "to", -1, &to));
    if (to < 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute 'to' is missing");
    byocl_dtype dtype;
    char buf[32];
    if (!tensorio_onnx_to_dtype((int32_t)to, &dtype))
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "Cast to %s is not supported (byocl has %s)",
                         tensorio_onnx_dtype_name((int32_t)to, buf, sizeof buf),
                         tensorio_onnx_supported_dtypes);
    int x;
    TRY(onnx_input(cx, 0, &x));
    TRY_ID(y, onnx_cast(cx, x, dtype));
    return onnx_output(cx, 0, y);
}

/* CastLike: a cast to the dtype of the second input. */
static byocl_status convert_cast_like(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x, like;
    TRY(onnx_input(cx, 0, &x));
    TRY(onnx_input(cx, 1, &like));
    TRY_ID(y, onnx_cast(cx, x, onnx_type(cx, like)->dtype));
    return onnx_output(cx, 0, y);
}

/* -------------------------------------------------------------- windows */

/* A 2-D or 3-D window (a 1-D one is lifted to height 1): what the convs and the pools
 * take, over op_dims(spatial) dimensions. */
typedef struct window {
    int64_t kernel[3], stride[3], dilation[3];
    int64_t pad[6]; /* befores then afters: top, left, bottom, right in 2-D */
} window;

/* Spatial dims of the byocl op for an ONNX op over `spatial` dims: 1-D runs as 2-D. */
static int op_dims(int spatial)
{
    return spatial == 1 ? 2 : spatial;
}

/* Reads one per-spatial-dim attribute (strides, dilations, kernel_shape, ConvTranspose's
 * output_padding and output_shape) into op form (op_dims values); absent: `def` each.
 * Values must be >= `min`; output_shape may also list N and C first. */
static byocl_status spatial_attr(onnx_ctx *cx, const char *name, int spatial, int64_t min,
                                 int64_t def, int64_t out[3], bool *given)
{
    int64_t v[MAX_INTS];
    int n;
    TRY(onnx_attr_ints(cx, name, v, MAX_INTS, &n));
    out[0] = out[1] = out[2] = def;
    *given = n >= 0;
    if (n < 0)
        return BYOCL_OK;
    int skip = n == spatial + 2 && strcmp(name, "output_shape") == 0 ? 2 : 0;
    if (n - skip != spatial)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute '%s' has %d values for %d spatial "
                                                "dimension%s",
                         name, n, spatial, spatial == 1 ? "" : "s");
    for (int i = skip; i < n; i++)
        if (v[i] < min)
            return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute '%s' has %lld; it must be >= %lld",
                             name, (long long)v[i], (long long)min);
    /* 1-D: the lifted height is `min`, a size or step of 1, an output_padding of 0. */
    if (spatial == 1) {
        out[0] = min;
        out[1] = v[n - 1];
    } else {
        memcpy(out, v + skip, (size_t)spatial * sizeof *out);
    }
    return BYOCL_OK;
}

/* spatial_attr of values >= 1. */
static byocl_status window_attr(onnx_ctx *cx, const char *name, int spatial, int64_t def,
                                int64_t out[3])
{
    bool given;
    return spatial_attr(cx, name, spatial, 1, def, out, &given);
}

/* Strides, dilations and padding of a Conv or pool over spatial input dims `in` (op form,
 * including any padding the op absorbs from a Pad), with auto_pad resolved as ONNX
 * defines it: SAME_* pads so that out = ceil(in / stride), the odd cell at the end
 * (UPPER) or the beginning (LOWER). */
static byocl_status read_window(onnx_ctx *cx, int spatial, const int64_t in[3],
                                const int64_t kernel[3], window *w)
{
    memcpy(w->kernel, kernel, sizeof w->kernel);
    TRY(window_attr(cx, "strides", spatial, 1, w->stride));
    TRY(window_attr(cx, "dilations", spatial, 1, w->dilation));
    char auto_pad[32];
    TRY(onnx_attr_string(cx, "auto_pad", "NOTSET", auto_pad, sizeof auto_pad));
    memset(w->pad, 0, sizeof w->pad);
    if (strcmp(auto_pad, "NOTSET") == 0) {
        int64_t p[MAX_INTS];
        int n;
        TRY(onnx_attr_ints(cx, "pads", p, MAX_INTS, &n));
        if (n >= 0 && n != 2 * spatial)
            return onnx_fail(cx, BYOCL_ERR_INVALID,
                             "attribute 'pads' has %d values for %d spatial dimension%s", n,
                             spatial, spatial == 1 ? "" : "s");
        for (int i = 0; i < n; i++)
            if (p[i] < 0)
                return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                                 "negative pads (%lld) are not supported", (long long)p[i]);
        if (n > 0 && spatial > 1) /* ONNX's order is byocl's: befores, then afters */
            memcpy(w->pad, p, (size_t)n * sizeof *p);
        else if (n > 0) { /* 1-D: (begin, end) of the width */
            w->pad[1] = p[0];
            w->pad[3] = p[1];
        }
    } else if (strcmp(auto_pad, "SAME_UPPER") == 0 || strcmp(auto_pad, "SAME_LOWER") == 0) {
        bool upper = auto_pad[5] == 'U';
        int nd = op_dims(spatial);
        for (int d = 0; d < nd; d++) {
            int64_t out = (in[d] + w->stride[d] - 1) / w->stride[d];
            int64_t span = (w->kernel[d] - 1) * w->dilation[d] + 1;
            int64_t total = (out - 1) * w->stride[d] + span - in[d];
            if (total < 0)
                total = 0;
            int64_t small = total / 2, large = total - small;
            w->pad[d] = upper ? small : large;
            w->pad[d + nd] = upper ? large : small;
        }
    } else if (strcmp(auto_pad, "VALID") != 0) {
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
                         auto_pad);
    }
    return BYOCL_OK;
}

static byocl_status set_window(onnx_ctx *cx, byocl_attrs *a, int spatial, const window *w,
                               const char *kernel_key)
{
    int nd = op_dims(spatial);
    TRY(set_ints(cx, a, kernel_key, w->kernel, nd));
    TRY(set_ints(cx, a, "strides", w->stride, nd));
    TRY(set_ints(cx, a, "dilation", w->dilation, nd));
    return set_ints(cx, a, "padding", w->pad, 2 * nd);
}

/* byocl's convolution and pools are 2-D (NCHW) or 3-D (NCDHW); a 1-D op (NCL) runs as
 * NC1L. Checks the input rank and returns the number of spatial dims. */
static byocl_status spatial_rank(onnx_ctx *cx, int x, int *spatial)
{
    int rank = shape_of(cx, x)->rank;
    if (rank < 3 || rank > 5)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "%d-D input (rank %d) is not supported: byocl's convolution and pools "
                         "are 1-D, 2-D or 3-D",
                         rank - 2 > 0 ? rank - 2 : 0, rank);
    *spatial = rank - 2;
    return BYOCL_OK;
}

/* The spatial dims (op form) of `x` (lifted, for a 1-D op) plus the padding `folded`
 * (top, left, bottom, right) the op absorbs from a Pad, which only 2-D data has; the
 * folded padding joins the window's. */
static void window_input(onnx_ctx *cx, int x, const int64_t folded[4], int64_t in[3])
{
    const byocl_shape *xs = shape_of(cx, x);
    for (int d = 0; d + 2 < xs->rank; d++)
        in[d] = xs->dims[d + 2];
    if (xs->rank == 4) {
        in[0] += folded[0] + folded[2];
        in[1] += folded[1] + folded[3];
    }
}

static void window_add_folded(window *w, const int64_t folded[4])
{
    for (int i = 0; i < 4; i++) /* non-zero only for 2-D data */
        w->pad[i] += folded[i];
}

/* NCL -> NC1L for a 1-D op. */
static int lift_1d(onnx_ctx *cx, int x)
{
    const byocl_shape *s = shape_of(cx, x);
    int64_t dims[4] = {s->dims[0], s->dims[1], 1, s->dims[2]};
    return onnx_reshape(cx, x, 4, dims);
}

/* NC1L -> NCL after a 1-D op. */
static int lower_1d(onnx_ctx *cx, int y)
{
    const byocl_shape *s = shape_of(cx, y);
    int64_t dims[3] = {s->dims[0], s->dims[1], s->dims[3]};
    return onnx_reshape(cx, y, 3, dims);
}

/* The weight `*w` of a Conv or ConvTranspose over `spatial` dims: its rank is checked,
 * its kernel (op form) checked against kernel_shape, and for a 1-D op it and the data
 * `*x` are lifted to 2-D. */
static byocl_status conv_weight(onnx_ctx *cx, int spatial, int *x, int *w, int64_t kernel[3])
{
    const byocl_shape *ws = shape_of(cx, *w);
    if (ws->rank != spatial + 2)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "the weight has rank %d; a %d-D %s needs %d",
                         ws->rank, spatial, cx->node->op_type, spatial + 2);
    int64_t given[3];
    TRY(window_attr(cx, "kernel_shape", spatial, -1, given));
    bool same = true;
    for (int d = 0; d < op_dims(spatial); d++) {
        kernel[d] = spatial == 1 && d == 0 ? 1 : ws->dims[spatial == 1 ? 2 : d + 2];
        same = same && given[d] == kernel[d];
    }
    if (given[0] >= 0 && !same)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "attribute 'kernel_shape' disagrees with the weight's shape");
    if (spatial == 1) {
        int64_t wdims[4] = {ws->dims[0], ws->dims[1], 1, ws->dims[2]};
        if ((*x = lift_1d(cx, *x)) < 0 || (*w = onnx_reshape(cx, *w, 4, wdims)) < 0)
            return cx->err->status;
    }
    return BYOCL_OK;
}

/* The end of a Conv or ConvTranspose: the optional bias B (input 2) over the channels,
 * then the 1-D form back. */
static byocl_status conv_finish(onnx_ctx *cx, const Onnx__NodeProto *n, int spatial, int y)
{
    if (onnx_has_input(n, 2)) {
        int yb[2] = {y, -1};
        TRY(onnx_input(cx, 2, &yb[1]));
        byocl_attrs *ba;
        TRY(new_attrs(cx, &ba));
        TRY(set_int(cx, ba, "axis", 1));
        if ((y = onnx_call(cx, "nn.bias_add", yb, 2, ba)) < 0)
            return cx->err->status;
    }
    if (spatial == 1 && (y = lower_1d(cx, y)) < 0)
        return cx->err->status;
    return onnx_output(cx, 0, y);
}

static byocl_status convert_conv(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    int x, w;
    int64_t folded[4];
    TRY(onnx_input_unpadded(cx, 0, true, &x, folded));
    TRY(onnx_input(cx, 1, &w));
    int spatial = 0;
    TRY(spatial_rank(cx, x, &spatial));
    int64_t out_channels = shape_of(cx, w)->dims[0];
    int64_t wk[3], in[3];
    TRY(conv_weight(cx, spatial, &x, &w, wk));
    window_input(cx, x, folded, in);
    window win;
    TRY(read_window(cx, spatial, in, wk, &win));
    window_add_folded(&win, folded);
    int64_t groups;
    TRY(onnx_attr_int(cx, "group", 1, &groups));
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    TRY(set_window(cx, a, spatial, &win, "kernel_size"));
    TRY(set_int(cx, a, "groups", groups));
    TRY(set_int(cx, a, "channels", out_channels));
    int xw[2] = {x, w};
    TRY_ID(y, onnx_call(cx, spatial == 3 ? "nn.conv3d" : "nn.conv2d", xw, 2, a));
    return conv_finish(cx, n, spatial, y);
}

/* ConvTranspose -> nn.conv2d_transpose (IOHW, ONNX's (C, M / group, kH, kW)) or
 * nn.conv3d_transpose (IODHW), then the
 * optional bias. With output_shape, or auto_pad SAME_* (output = input * stride), the pads
 * come from the total padding t = stride * (in - 1) + output_padding + dilated kernel -
 * output, as ONNX splits it: SAME_UPPER puts floor(t / 2) at the start, anything else at
 * the end. A negative end pad (the output reaches past the full result) becomes
 * output_padding; a negative start pad is refused. */
static byocl_status convert_conv_transpose(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    int x, w;
    TRY(onnx_input(cx, 0, &x));
    TRY(onnx_input(cx, 1, &w));
    int spatial = 0;
    TRY(spatial_rank(cx, x, &spatial));
    int64_t group_out = shape_of(cx, w)->dims[1];
    int64_t wk[3], out_pad[3], out_shape[3], in[3];
    bool has_out_pad, has_out_shape;
    TRY(conv_weight(cx, spatial, &x, &w, wk));
    TRY(spatial_attr(cx, "output_padding", spatial, 0, 0, out_pad, &has_out_pad));
    TRY(spatial_attr(cx, "output_shape", spatial, 1, 1, out_shape, &has_out_shape));
    static const int64_t no_fold[4] = {0, 0, 0, 0};
    window_input(cx, x, no_fold, in);
    int nd = op_dims(spatial);
    window win;
    TRY(read_window(cx, spatial, in, wk, &win));
    char auto_pad[32];
    TRY(onnx_attr_string(cx, "auto_pad", "NOTSET", auto_pad, sizeof auto_pad));
    bool same = strncmp(auto_pad, "SAME_", 5) == 0;
    if (has_out_shape || same) {
        for (int d = 0; d < nd; d++) {
            /* Keeps the arithmetic below inside int64; the op refuses such sizes anyway. */
            int64_t sizes[5] = {in[d], win.stride[d], win.dilation[d], wk[d], out_pad[d]};
            for (int k = 0; k < 5; k++)
                if (sizes[k] > INT32_MAX || (has_out_shape && out_shape[d] > INT32_MAX))
                    return onnx_fail(cx, BYOCL_ERR_INVALID,
                                     "the sizes, strides, dilations, kernel, output_padding or "
                                     "output_shape are too large to compute the pads from");
            int64_t want = has_out_shape ? out_shape[d] : in[d] * win.stride[d];
            int64_t total = win.stride[d] * (in[d] - 1) + out_pad[d] +
                            (wk[d] - 1) * win.dilation[d] + 1 - want;
            int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2); /* floor */
            bool upper = strcmp(auto_pad, "SAME_UPPER") == 0;
            win.pad[d] = upper ? half : total - half;
            win.pad[d + nd] = upper ? total - half : half;
        }
    }
    for (int d = 0; d < nd; d++) {
        if (win.pad[d] < 0)
            return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                             "the output would start %lld cell%s before the full result "
                             "(a negative start pad); not supported",
                             (long long)-win.pad[d], win.pad[d] == -1 ? "" : "s");
        if (win.pad[d + nd] < 0) {
            out_pad[d] -= win.pad[d + nd];
            win.pad[d + nd] = 0;
        }
    }
    int64_t groups;
    TRY(onnx_attr_int(cx, "group", 1, &groups));
    if (groups < 1)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute 'group' is %lld; it must be >= 1",
                         (long long)groups);
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    TRY(set_window(cx, a, spatial, &win, "kernel_size"));
    TRY(set_int(cx, a, "groups", groups));
    TRY(set_int(cx, a, "channels", group_out * groups));
    TRY(set_ints(cx, a, "output_padding", out_pad, nd));
    int xw[2] = {x, w};
    TRY_ID(y, onnx_call(cx, nd == 3 ? "nn.conv3d_transpose" : "nn.conv2d_transpose", xw, 2, a));
    return conv_finish(cx, n, spatial, y);
}

/* MaxPool (with its optional Indices, onnx_max_pool_indices) and AveragePool. */
static byocl_status pool(onnx_ctx *cx, const Onnx__NodeProto *n, bool is_max)
{
    int64_t storage_order = 0;
    if (is_max)
        TRY(onnx_attr_int(cx, "storage_order", 0, &storage_order));
    int64_t ceil_mode, count_include_pad = 0;
    TRY(onnx_attr_int(cx, "ceil_mode", 0, &ceil_mode));
    if (!is_max)
        TRY(onnx_attr_int(cx, "count_include_pad", 0, &count_include_pad));
    /* A zero Pad before an average pool is absorbed when its cells count as the pool's
     * own padding would: with count_include_pad, or when the pool pads nothing itself.
     * Padding cells never win a max pool, unlike a Pad's zeros: no folding there. */
    bool fold = false;
    if (!is_max && !ceil_mode) {
        int64_t p[MAX_INTS];
        int np;
        char auto_pad[32];
        TRY(onnx_attr_ints(cx, "pads", p, MAX_INTS, &np));
        TRY(onnx_attr_string(cx, "auto_pad", "NOTSET", auto_pad, sizeof auto_pad));
        bool own_zero = strcmp(auto_pad, "NOTSET") == 0 || strcmp(auto_pad, "VALID") == 0;
        for (int i = 0; i < np && own_zero; i++)
            own_zero = p[i] == 0 || strcmp(auto_pad, "VALID") == 0;
        fold = count_include_pad || own_zero;
    }
    int x;
    int64_t folded[4];
    TRY(onnx_input_unpadded(cx, 0, fold, &x, folded));
    bool absorbed = folded[0] || folded[1] || folded[2] || folded[3];
    int spatial = 0;
    TRY(spatial_rank(cx, x, &spatial));
    int64_t kernel[3], in[3];
    TRY(window_attr(cx, "kernel_shape", spatial, -1, kernel));
    if (kernel[0] < 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute 'kernel_shape' is missing");
    if (spatial == 3 && is_max && onnx_has_output(n, 1))
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "MaxPool's Indices output is supported over 1-D and 2-D input only");
    if (spatial == 1 && (x = lift_1d(cx, x)) < 0)
        return cx->err->status;
    window_input(cx, x, folded, in);
    window win;
    TRY(read_window(cx, spatial, in, kernel, &win));
    window_add_folded(&win, folded);
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    TRY(set_window(cx, a, spatial, &win, "pool_size"));
    TRY(set_bool(cx, a, "ceil_mode", ceil_mode != 0));
    if (!is_max)
        TRY(set_bool(cx, a, "count_include_pad", count_include_pad || absorbed));
    static const char *const ops[2][2] = {{"nn.avg_pool2d", "nn.max_pool2d"},
                                          {"nn.avg_pool3d", "nn.max_pool3d"}};
    TRY_ID(y, onnx_call1(cx, ops[spatial == 3][is_max], x, a));
    if (is_max && onnx_has_output(n, 1)) {
        const byocl_shape *ys = shape_of(cx, y);
        int64_t out_hw[2] = {ys->dims[2], ys->dims[3]};
        TRY_ID(i, onnx_max_pool_indices(cx, x, win.kernel, win.stride, win.dilation, win.pad,
                                        out_hw, storage_order));
        if (spatial == 1 && (i = lower_1d(cx, i)) < 0)
            return cx->err->status;
        TRY(onnx_output(cx, 1, i));
    }
    if (spatial == 1 && (y = lower_1d(cx, y)) < 0)
        return cx->err->status;
    return onnx_output(cx, 0, y);
}

static byocl_status convert_max_pool(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    return pool(cx, n, true);
}

static byocl_status convert_average_pool(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    return pool(cx, n, false);
}

/* Mean over the axes from `first` to the end, kept as size-1 dims. */
static int mean_from(onnx_ctx *cx, int x, int first)
{
    int rank = shape_of(cx, x)->rank;
    int64_t axes[BYOCL_MAX_RANK];
    for (int i = first; i < rank; i++)
        axes[i - first] = i;
    byocl_attrs *a = onnx_attrs(cx);
    if (!a || set_ints(cx, a, "axis", axes, rank - first) != BYOCL_OK ||
        set_bool(cx, a, "keepdims", true) != BYOCL_OK)
        return -1;
    return onnx_call1(cx, "mean", x, a);
}

static byocl_status convert_global_average_pool(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x;
    TRY(onnx_input(cx, 0, &x));
    int rank = shape_of(cx, x)->rank;
    if (rank < 3)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "input has rank %d; it needs N, C and at least "
                                                "one spatial dimension",
                         rank);
    TRY_ID(y, rank == 4 ? onnx_call1(cx, "nn.global_avg_pool2d", x, NULL) : mean_from(cx, x, 2));
    return onnx_output(cx, 0, y);
}

/* ---------------------------------------------------------- normalization */

/* BatchNormalization with spatial=0 (opsets 1 to 8) at inference: scale, B, mean and var
 * of x's shape without N (C x D1 x ... x Dn), one statistic per element, so
 * (x - mean) * rsqrt(var + epsilon) * scale + B broadcast over N. (1-D ones of size C are
 * per channel, nn.batch_norm.) args: x, scale, B, mean, var; -1 with the error recorded. */
static int batch_norm_per_element(onnx_ctx *cx, const int *args, double epsilon)
{
    const byocl_shape *xs = shape_of(cx, args[0]);
    static const char *const names[] = {"", "scale", "B", "mean", "var"};
    for (int k = 1; k < 5; k++) {
        const byocl_shape *s = shape_of(cx, args[k]);
        bool ok = xs->rank >= 2 && s->rank == xs->rank - 1;
        for (int d = 0; ok && d < s->rank; d++)
            ok = s->dims[d] == xs->dims[d + 1];
        if (!ok) {
            char want[256], got[256];
            byocl_shape per = {.rank = xs->rank > 1 ? xs->rank - 1 : 0};
            for (int d = 0; d < per.rank; d++)
                per.dims[d] = xs->dims[d + 1];
            onnx_fail(cx, BYOCL_ERR_INVALID,
                      "spatial=0 needs scale, B, mean and var of shape %s (the input's without "
                      "N) or (C) (per channel); input %d (%s) has shape %s",
                      byocl_shape_str(&per, want, sizeof want), k, names[k],
                      byocl_shape_str(s, got, sizeof got));
            return -1;
        }
    }
    int var_eps = onnx_with_scalar(cx, "add", args[4], epsilon, false);
    int inv = var_eps < 0 ? -1 : onnx_call1(cx, "rsqrt", var_eps, NULL);
    int f[2] = {inv, args[1]}, c[2] = {args[0], args[3]};
    int factor = inv < 0 ? -1 : onnx_call(cx, "multiply", f, 2, NULL);
    int centered = factor < 0 ? -1 : onnx_call(cx, "subtract", c, 2, NULL);
    int m[2] = {centered, factor};
    int scaled = centered < 0 ? -1 : onnx_call(cx, "multiply", m, 2, NULL);
    int b[2] = {scaled, args[2]};
    return scaled < 0 ? -1 : onnx_call(cx, "add", b, 2, NULL);
}

static byocl_status convert_batch_norm(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    double epsilon, momentum;
    int64_t spatial, training;
    TRY(onnx_attr_float(cx, "epsilon", 1e-5, &epsilon));
    TRY(onnx_attr_float(cx, "momentum", 0.9, &momentum));
    TRY(onnx_attr_int(cx, "spatial", 1, &spatial));
    TRY(onnx_attr_int(cx, "training_mode", 0, &training));
    (void)momentum; /* updates the running statistics in training only */
    if (cx->opset < 7) {
        int64_t is_test;
        TRY(onnx_attr_int(cx, "is_test", 0, &is_test));
        if (!is_test)
            return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                             "is_test=0 (the default before opset 7; opset %lld) normalizes "
                             "with the batch's statistics; byocl runs inference (is_test=1)",
                             (long long)cx->opset);
    }
    if (training)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "training_mode=1 is not supported (byocl runs inference)");
    for (int k = 1; k < (int)n->n_output; k++)
        if (onnx_has_output(n, k))
            return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                             "output %d ('%s') exists in training only; byocl runs inference", k,
                             n->output[k]);
    int args[5];
    for (int k = 0; k < 5; k++)
        TRY(onnx_input(cx, k, &args[k]));
    if (!spatial && shape_of(cx, args[1])->rank != 1) {
        TRY_ID(y, batch_norm_per_element(cx, args, epsilon));
        return onnx_output(cx, 0, y);
    }
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    TRY(set_int(cx, a, "axis", 1));
    TRY(set_float(cx, a, "epsilon", epsilon));
    TRY_ID(bn, onnx_call(cx, "nn.batch_norm", args, 5, a));
    TRY_ID(y, onnx_getitem(cx, bn, 0));
    return onnx_output(cx, 0, y);
}

/* The statistics of LayerNormalization over the axes axis..rank-1 (kept dims):
 * d = x - mean(x) and inv = rsqrt(mean(d * d) + epsilon). */
static byocl_status layer_norm_stats(onnx_ctx *cx, int x, int axis, double eps, int *mean,
                                     int *d, int *inv)
{
    TRY_ID(m, mean_from(cx, x, axis));
    int args[2] = {x, m};
    TRY_ID(diff, onnx_call(cx, "subtract", args, 2, NULL));
    args[0] = args[1] = diff;
    TRY_ID(sq, onnx_call(cx, "multiply", args, 2, NULL));
    TRY_ID(var, mean_from(cx, sq, axis));
    TRY_ID(var_eps, onnx_with_scalar(cx, "add", var, eps, false));
    TRY_ID(r, onnx_call1(cx, "rsqrt", var_eps, NULL));
    *mean = m;
    *d = diff;
    *inv = r;
    return BYOCL_OK;
}

/* Over the last axis with 1-D Scale (and B) of its length, LayerNormalization is
 * nn.layer_norm (a missing B: zeros, with center=False). */
static byocl_status layer_norm_fused(onnx_ctx *cx, int x, int scale, int bias, double eps,
                                     int *y)
{
    const byocl_shape *xs = shape_of(cx, x);
    int64_t len = xs->dims[xs->rank - 1];
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    TRY(set_int(cx, a, "axis", -1));
    TRY(set_float(cx, a, "epsilon", eps));
    if (bias < 0) {
        byocl_shape vs = byocl_shape_make(1, &len);
        byocl_tensor *zeros = byocl_tensor_new(onnx_type(cx, x)->dtype, &vs, cx->err);
        if (!zeros)
            return onnx_fail(cx, cx->err->status, "out of memory");
        for (int64_t i = 0; i < len; i++)
            byocl_tensor_set(zeros, i, 0.0);
        bias = onnx_constant(cx, zeros);
        byocl_tensor_unref(zeros);
        if (bias < 0)
            return cx->err->status;
        TRY(set_bool(cx, a, "center", false));
    }
    int args[3] = {x, scale, bias};
    TRY_ID(ln, onnx_call(cx, "nn.layer_norm", args, 3, a));
    *y = ln;
    return BYOCL_OK;
}

/* Whether Scale (and B) are 1-D of the normalized axis' length, as nn.layer_norm takes
 * them (ONNX also allows the normalized shape with leading 1s). */
static bool layer_norm_vector(onnx_ctx *cx, int v, int64_t len)
{
    const byocl_shape *s = shape_of(cx, v);
    return s->rank == 1 && s->dims[0] == len;
}

/* LayerNormalization (opset 17) over the axes axis..rank-1. Over the last axis alone it
 * is nn.layer_norm; over several axes it is composed as TVM's importer does:
 * d = x - mean(x), Y = d * rsqrt(mean(d * d) + epsilon) * scale (+ B). The optional
 * outputs Mean and InvStdDev are the composition's mean and rsqrt (kept dims; next to
 * nn.layer_norm they are computed only when asked for). stash_type 1 (float32, the
 * default) is the one supported; another input dtype computes in float32 and Y is cast
 * back. */
static byocl_status convert_layer_norm(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    int64_t axis_attr, stash;
    double eps;
    TRY(onnx_attr_int(cx, "axis", -1, &axis_attr));
    TRY(onnx_attr_float(cx, "epsilon", 1e-5, &eps));
    TRY(onnx_attr_int(cx, "stash_type", 1, &stash));
    if (stash != 1)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "stash_type %lld is not supported (1, float32, only)", (long long)stash);
    int x, scale, bias = -1;
    TRY(onnx_input(cx, 0, &x));
    TRY(onnx_input(cx, 1, &scale));
    if (onnx_has_input(n, 2))
        TRY(onnx_input(cx, 2, &bias));
    byocl_dtype dt = onnx_type(cx, x)->dtype;
    int rank = shape_of(cx, x)->rank, axis;
    TRY(onnx_axis(cx, axis_attr, rank, "axis", &axis));
    if (dt != BYOCL_FLOAT32 && ((x = onnx_cast(cx, x, BYOCL_FLOAT32)) < 0 ||
                                (scale = onnx_cast(cx, scale, BYOCL_FLOAT32)) < 0 ||
                                (bias >= 0 && (bias = onnx_cast(cx, bias, BYOCL_FLOAT32)) < 0)))
        return cx->err->status;
    int64_t len = shape_of(cx, x)->dims[rank - 1];
    bool fused = axis == rank - 1 && layer_norm_vector(cx, scale, len) &&
                 (bias < 0 || layer_norm_vector(cx, bias, len));
    bool stats = !fused || onnx_has_output(n, 1) || onnx_has_output(n, 2);
    int mean = -1, d = -1, inv = -1, y = -1;
    if (stats)
        TRY(layer_norm_stats(cx, x, axis, eps, &mean, &d, &inv));
    if (fused) {
        TRY(layer_norm_fused(cx, x, scale, bias, eps, &y));
    } else {
        int args[2] = {d, inv};
        TRY_ID(norm, onnx_call(cx, "multiply", args, 2, NULL));
        args[0] = norm;
        args[1] = scale;
        if ((y = onnx_call(cx, "multiply", args, 2, NULL)) < 0)
            return cx->err->status;
        args[0] = y;
        args[1] = bias;
        if (bias >= 0 && (y = onnx_call(cx, "add", args, 2, NULL)) < 0)
            return cx->err->status;
    }
    if (dt != BYOCL_FLOAT32 && (y = onnx_cast(cx, y, dt)) < 0)
        return cx->err->status;
    if (stats) {
        TRY(onnx_output(cx, 1, mean));
        TRY(onnx_output(cx, 2, inv));
    }
    return onnx_output(cx, 0, y);
}

/* Whether a training-mode Dropout (opset >= 12: inputs ratio and training_mode) drops
 * anything: with ratio 0 it keeps everything and is the identity, as at inference
 * (swin_t's exports have such nodes); with a ratio above 0 it is random. */
static byocl_status check_dropout_training(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    if (!onnx_has_input(n, 2))
        return BYOCL_OK;
    const byocl_tensor *t;
    TRY(onnx_input_constant(cx, 2, "training_mode", &t));
    if (byocl_tensor_numel(t) == 1 && byocl_tensor_get(t, 0) == 0)
        return BYOCL_OK;
    double ratio = 0.5; /* ONNX's default */
    if (onnx_has_input(n, 1)) {
        const byocl_tensor *r;
        TRY(onnx_input_constant(cx, 1, "the ratio of a training-mode Dropout", &r));
        if (byocl_tensor_numel(r) != 1)
            return onnx_fail(cx, BYOCL_ERR_INVALID, "ratio should be a scalar, got %lld values",
                             (long long)byocl_tensor_numel(r));
        ratio = byocl_tensor_get(r, 0);
    }
    if (ratio == 0)
        return BYOCL_OK;
    return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                     "training_mode=1 with ratio %g%s makes Dropout random; byocl runs "
                     "inference (training mode with ratio 0, the identity, is accepted)",
                     ratio, onnx_has_input(n, 1) ? "" : " (the default)");
}

/* Dropout before opset 7: is_test (default 0, training) and the ratio attribute. */
static byocl_status check_dropout_is_test(onnx_ctx *cx)
{
    int64_t is_test;
    double ratio;
    TRY(onnx_attr_int(cx, "is_test", 0, &is_test));
    TRY(onnx_attr_float(cx, "ratio", 0.5, &ratio));
    if (is_test || ratio == 0)
        return BYOCL_OK;
    return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                     "is_test=0 (the default before opset 7; opset %lld) with ratio %g makes "
                     "Dropout random; byocl runs inference (is_test=1, or ratio 0)",
                     (long long)cx->opset, ratio);
}

static byocl_status convert_dropout(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    TRY(cx->opset < 7 ? check_dropout_is_test(cx) : check_dropout_training(cx, n));
    TRY(alias_input(cx, 0));
    if (onnx_has_output(n, 1)) { /* the mask: everything kept */
        /* A bool mask from opset 10 on; before, the mask has the input's dtype. */
        int x;
        TRY(onnx_input(cx, 0, &x));
        byocl_tensor *mask = byocl_tensor_new(cx->opset < 10 ? onnx_type(cx, x)->dtype
                                                             : BYOCL_BOOL,
                                              shape_of(cx, x), cx->err);
        if (!mask)
            return onnx_fail(cx, cx->err->status, "out of memory");
        for (int64_t i = 0; i < byocl_tensor_numel(mask); i++)
            byocl_tensor_set(mask, i, 1.0);
        byocl_status st = onnx_output_constant(cx, 1, mask);
        byocl_tensor_unref(mask);
        return st;
    }
    return BYOCL_OK;
}

/* nn.log_softmax over the axis (onnx_import.h). */
int onnx_log_softmax(onnx_ctx *cx, int x, int axis)
{
    byocl_attrs *a = onnx_attrs(cx);
    if (!a || set_int(cx, a, "axis", axis) != BYOCL_OK)
        return -1;
    return onnx_call1(cx, "nn.log_softmax", x, a);
}

byocl_status onnx_softmax_axis(onnx_ctx *cx, int rank, int *axis)
{
    int64_t axis_attr;
    TRY(onnx_attr_int(cx, "axis", cx->opset < 13 ? 1 : -1, &axis_attr));
    return onnx_axis(cx, axis_attr, rank, "axis", axis);
}

/* Softmax and LogSoftmax before opset 13 normalize over the flattened axes axis..end (the
 * input seen as 2-D, reshaped around the op); from 13 on over the one axis. Softmax is
 * nn.softmax, LogSoftmax nn.log_softmax. */
static byocl_status softmax(onnx_ctx *cx, bool log)
{
    int x;
    TRY(onnx_input(cx, 0, &x));
    byocl_shape s = *shape_of(cx, x);
    int axis;
    TRY(onnx_softmax_axis(cx, s.rank, &axis));
    bool flatten = cx->opset < 13 && axis != s.rank - 1;
    if (flatten) {
        int64_t dims[2] = {product(s.dims, 0, axis), product(s.dims, axis, s.rank)};
        if ((x = onnx_reshape(cx, x, 2, dims)) < 0)
            return cx->err->status;
        axis = 1;
    }
    int y;
    if (log) {
        y = onnx_log_softmax(cx, x, axis);
    } else {
        byocl_attrs *a;
        TRY(new_attrs(cx, &a));
        TRY(set_int(cx, a, "axis", axis));
        y = onnx_call1(cx, "nn.softmax", x, a);
    }
    if (y < 0)
        return cx->err->status;
    if (flatten && (y = onnx_reshape(cx, y, s.rank, s.dims)) < 0)
        return cx->err->status;
    return onnx_output(cx, 0, y);
}

static byocl_status convert_softmax(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    return softmax(cx, false);
}

static byocl_status convert_log_softmax(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    return softmax(cx, true);
}

/* -------------------------------------------------------------- dense */

/* y = alpha * A' B' + beta * C with A' = A or A^T, B' = B or B^T. */
static byocl_status convert_gemm(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    double alpha, beta;
    int64_t trans_a, trans_b;
    TRY(onnx_attr_float(cx, "alpha", 1.0, &alpha));
    TRY(onnx_attr_float(cx, "beta", 1.0, &beta));
    TRY(onnx_attr_int(cx, "transA", 0, &trans_a));
    TRY(onnx_attr_int(cx, "transB", 0, &trans_b));
    int a, b;
    TRY(onnx_input(cx, 0, &a));
    TRY(onnx_input(cx, 1, &b));
    if (shape_of(cx, a)->rank != 2 || shape_of(cx, b)->rank != 2)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "A and B must be matrices (rank 2), got rank %d "
                                                "and %d",
                         shape_of(cx, a)->rank, shape_of(cx, b)->rank);
    byocl_dtype dtype = onnx_type(cx, a)->dtype;
    if (trans_a && (a = onnx_call1(cx, "transpose", a, NULL)) < 0)
        return cx->err->status;
    /* nn.dense takes its weight as [units, K]: B^T when transB is 0. */
    if (!trans_b && (b = onnx_call1(cx, "transpose", b, NULL)) < 0)
        return cx->err->status;
    int ab[2] = {a, b};
    TRY_ID(y, onnx_call(cx, "nn.dense", ab, 2, NULL));
    if (alpha != 1.0) {
        int ys[2] = {y, onnx_scalar(cx, dtype, alpha)};
        if (ys[1] < 0 || (y = onnx_call(cx, "multiply", ys, 2, NULL)) < 0)
            return cx->err->status;
    }
    if (onnx_has_input(n, 2)) {
        int c;
        TRY(onnx_input(cx, 2, &c));
        if (beta != 1.0) {
            int cs[2] = {c, onnx_scalar(cx, dtype, beta)};
            if (cs[1] < 0 || (c = onnx_call(cx, "multiply", cs, 2, NULL)) < 0)
                return cx->err->status;
        }
        int yc[2] = {y, c};
        if ((y = onnx_call(cx, "add", yc, 2, NULL)) < 0)
            return cx->err->status;
    }
    return onnx_output(cx, 0, y);
}

/* `x` of shape (batch..., R, C) brought to the batch dims `batch` (numpy broadcasting
 * done by the caller) and flattened to (B, R, C); a batch of one element stays 1, which
 * nn.batch_matmul broadcasts itself. */
static int matmul_operand(onnx_ctx *cx, int x, const byocl_shape *batch)
{
    byocl_shape s = *shape_of(cx, x);
    int64_t rows = s.dims[s.rank - 2], cols = s.dims[s.rank - 1];
    int64_t own = product(s.dims, 0, s.rank - 2), all = product(batch->dims, 0, batch->rank);
    if (own != 1 && own != all) { /* some batch dims broadcast: make them real */
        byocl_attrs *a = onnx_attrs(cx);
        byocl_shape to = *batch;
        to.dims[to.rank++] = rows;
        to.dims[to.rank++] = cols;
        if (!a || set_ints(cx, a, "shape", to.dims, to.rank) != BYOCL_OK ||
            (x = onnx_call1(cx, "broadcast_to", x, a)) < 0)
            return -1;
        own = all;
    }
    int64_t d3[3] = {own, rows, cols};
    return onnx_reshape(cx, x, 3, d3);
}

/* A (..., M, K) times B (..., K, N) with B stacked: the batch dims broadcast as numpy's,
 * both flattened to one batch axis for nn.batch_matmul, the result reshaped back. */
static int batched_matmul(onnx_ctx *cx, int a, int b)
{
    byocl_shape as = *shape_of(cx, a), bs = *shape_of(cx, b), batch = {0};
    batch.rank = (as.rank > bs.rank ? as.rank : bs.rank) - 2;
    for (int i = 0; i < batch.rank; i++) {
        int ia = i - (batch.rank - (as.rank - 2)), ib = i - (batch.rank - (bs.rank - 2));
        int64_t da = ia >= 0 ? as.dims[ia] : 1, db = ib >= 0 ? bs.dims[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char s1[128], s2[128];
            onnx_fail(cx, BYOCL_ERR_INVALID,
                      "MatMul of %s by %s: batch dimensions %lld and %lld do not broadcast",
                      byocl_shape_str(&as, s1, sizeof s1), byocl_shape_str(&bs, s2, sizeof s2),
                      (long long)da, (long long)db);
            return -1;
        }
        batch.dims[i] = da == 1 ? db : da;
    }
    int a3 = matmul_operand(cx, a, &batch), b3 = a3 < 0 ? -1 : matmul_operand(cx, b, &batch);
    byocl_attrs *attrs = b3 < 0 ? NULL : onnx_attrs(cx);
    if (!attrs || set_bool(cx, attrs, "transpose_b", false) != BYOCL_OK)
        return -1;
    int ab[2] = {a3, b3};
    int y = onnx_call(cx, "nn.batch_matmul", ab, 2, attrs);
    if (y < 0)
        return -1;
    batch.dims[batch.rank++] = as.dims[as.rank - 2];
    batch.dims[batch.rank++] = bs.dims[bs.rank - 1];
    return onnx_reshape(cx, y, batch.rank, batch.dims);
}

/* numpy's matmul: 1-D operands gain a dim that the result drops again. */
static byocl_status convert_matmul(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int a, b;
    TRY(onnx_input(cx, 0, &a));
    TRY(onnx_input(cx, 1, &b));
    byocl_shape as = *shape_of(cx, a), bs = *shape_of(cx, b);
    if (as.rank == 0 || bs.rank == 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "MatMul operands must not be scalars");
    bool a_vec = as.rank == 1, b_vec = bs.rank == 1;
    if (a_vec) {
        int64_t d[2] = {1, as.dims[0]};
        if ((a = onnx_reshape(cx, a, 2, d)) < 0)
            return cx->err->status;
    }
    if (b_vec) {
        int64_t d[2] = {bs.dims[0], 1};
        if ((b = onnx_reshape(cx, b, 2, d)) < 0)
            return cx->err->status;
    }
    int y;
    if (shape_of(cx, b)->rank == 2) {
        int ab[2] = {a, onnx_call1(cx, "transpose", b, NULL)};
        y = ab[1] < 0 ? -1 : onnx_call(cx, "nn.dense", ab, 2, NULL);
    } else {
        y = batched_matmul(cx, a, b);
    }
    if (y < 0)
        return cx->err->status;
    if (a_vec || b_vec) {
        byocl_shape ys = *shape_of(cx, y), out = {0};
        for (int i = 0; i < ys.rank; i++)
            if (!((a_vec && i == ys.rank - 2) || (b_vec && i == ys.rank - 1)))
                out.dims[out.rank++] = ys.dims[i];
        if ((y = onnx_reshape(cx, y, out.rank, out.dims)) < 0)
            return cx->err->status;
    }
    return onnx_output(cx, 0, y);
}

/* ------------------------------------------------------------ transforms */

static byocl_status convert_flatten(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x;
    TRY(onnx_input(cx, 0, &x));
    byocl_shape s = *shape_of(cx, x);
    int64_t axis;
    TRY(onnx_attr_int(cx, "axis", 1, &axis));
    if (axis < -s.rank || axis > s.rank) /* rank itself is allowed: (all, 1) */
        return onnx_fail(cx, BYOCL_ERR_INVALID, "axis %lld is out of range for rank %d",
                         (long long)axis, s.rank);
    int ax = (int)(axis < 0 ? axis + s.rank : axis);
    int y;
    if (ax == 1 && s.rank >= 2) {
        y = onnx_call1(cx, "nn.batch_flatten", x, NULL);
    } else {
        int64_t dims[2] = {product(s.dims, 0, ax), product(s.dims, ax, s.rank)};
        y = onnx_reshape(cx, x, 2, dims);
    }
    if (y < 0)
        return cx->err->status;
    return onnx_output(cx, 0, y);
}

/* Reshape: the shape is an attribute before opset 5, an input from 5. */
static byocl_status convert_reshape(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x;
    TRY(onnx_input(cx, 0, &x));
    int64_t shape[BYOCL_MAX_RANK];
    int rank;
    if (cx->opset < 5) { /* the shape attribute */
        TRY(onnx_attr_ints(cx, "shape", shape, BYOCL_MAX_RANK, &rank));
        if (rank < 0)
            return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute 'shape' is missing (opset %lld)",
                             (long long)cx->opset);
    } else {
        TRY(onnx_input_ints(cx, 1, "the new shape", shape, BYOCL_MAX_RANK, &rank));
    }
    int64_t allowzero;
    TRY(onnx_attr_int(cx, "allowzero", 0, &allowzero));
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    TRY(set_ints(cx, a, "newshape", shape, rank));
    TRY(set_bool(cx, a, "allowzero", allowzero != 0));
    TRY_ID(y, onnx_call1(cx, "reshape", x, a));
    return onnx_output(cx, 0, y);
}

static byocl_status convert_concat(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    int64_t axis;
    /* axis is optional (default 1) before opset 4, required from 4 */
    TRY(onnx_attr_int(cx, "axis", cx->opset < 4 ? 1 : INT64_MIN, &axis));
    if (axis == INT64_MIN)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute 'axis' is missing");
    if (n->n_input == 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "needs at least one input");
    int *ids = malloc(sizeof *ids * n->n_input);
    if (!ids)
        return onnx_fail(cx, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    for (int k = 0; k < (int)n->n_input && st == BYOCL_OK; k++)
        st = onnx_input(cx, k, &ids[k]);
    int tuple = st == BYOCL_OK ? onnx_tuple(cx, ids, (int)n->n_input) : -1;
    free(ids);
    if (tuple < 0)
        return cx->err->status;
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    TRY(set_int(cx, a, "axis", axis));
    TRY_ID(y, onnx_call1(cx, "concatenate", tuple, a));
    return onnx_output(cx, 0, y);
}

/* Output k of a Split gets sizes[k] elements along `axis`. byocl's split makes no empty
 * pieces: those outputs become empty constants, and the split cuts only where the other
 * pieces start (one piece left is the input itself). */
static byocl_status split_outputs(onnx_ctx *cx, const Onnx__NodeProto *n, int x, int axis,
                                  const int64_t *sizes)
{
    int n_out = (int)n->n_output, n_pieces = 0;
    int64_t starts[MAX_INTS], offset = 0;
    int64_t *cuts = n_out > MAX_INTS ? malloc(sizeof *cuts * (size_t)n_out) : starts;
    if (!cuts)
        return onnx_fail(cx, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n_out; k++) {
        if (sizes[k] > 0 && n_pieces++ > 0)
            cuts[n_pieces - 2] = offset;
        offset += sizes[k];
    }
    int parts = -1;
    byocl_attrs *a = NULL;
    byocl_status st = n_pieces > 1 ? new_attrs(cx, &a) : BYOCL_OK;
    if (n_pieces > 1 && st == BYOCL_OK)
        st = set_ints(cx, a, "indices_or_sections", cuts, n_pieces - 1);
    if (n_pieces > 1 && st == BYOCL_OK)
        st = set_int(cx, a, "axis", axis);
    if (cuts != starts)
        free(cuts);
    if (n_pieces > 1 && st == BYOCL_OK && (parts = onnx_call1(cx, "split", x, a)) < 0)
        st = cx->err->status;
    for (int k = 0, piece = 0; k < n_out && st == BYOCL_OK; k++) {
        if (sizes[k] == 0) {
            byocl_shape s = *shape_of(cx, x);
            s.dims[axis] = 0;
            byocl_tensor *empty = byocl_tensor_new(onnx_type(cx, x)->dtype, &s, cx->err);
            st = empty ? onnx_output_constant(cx, k, empty) : cx->err->status;
            byocl_tensor_unref(empty);
            continue;
        }
        int id = n_pieces > 1 ? onnx_getitem(cx, parts, piece++) : x;
        st = id < 0 ? cx->err->status : onnx_output(cx, k, id);
    }
    return st;
}

/* Split: sizes from the `split` attribute (before opset 13) or input (from 13), else
 * num_outputs (opset 18: pieces of ceil(dim / n), the last one smaller), else equal parts
 * for the node's outputs. byocl's split takes the indices where pieces start. */
static byocl_status convert_split(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    int x;
    TRY(onnx_input(cx, 0, &x));
    byocl_shape s = *shape_of(cx, x);
    int64_t axis_attr;
    TRY(onnx_attr_int(cx, "axis", 0, &axis_attr));
    int axis;
    TRY(onnx_axis(cx, axis_attr, s.rank, "axis", &axis));
    int n_out = (int)n->n_output;
    if (n_out == 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "has no outputs");
    int64_t *sizes = calloc((size_t)n_out + 1, sizeof *sizes);
    if (!sizes)
        return onnx_fail(cx, BYOCL_ERR_NOMEM, "out of memory");
    int n_sizes = -1;
    byocl_status st = BYOCL_OK;
    if (cx->opset < 2 && onnx_has_input(n, 1)) /* Split-1: sizes as input or attribute */
        st = onnx_input_ints(cx, 1, "the split sizes", sizes, n_out, &n_sizes);
    else if (cx->opset < 13)
        st = onnx_attr_ints(cx, "split", sizes, n_out, &n_sizes);
    else if (onnx_has_input(n, 1))
        st = onnx_input_ints(cx, 1, "the split sizes", sizes, n_out, &n_sizes);
    int64_t dim = s.dims[axis], num_outputs = 0;
    if (st == BYOCL_OK)
        st = onnx_attr_int(cx, "num_outputs", 0, &num_outputs);
    if (st == BYOCL_OK && n_sizes < 0 && num_outputs > 0) {
        if (num_outputs != n_out)
            st = onnx_fail(cx, BYOCL_ERR_INVALID, "num_outputs is %lld but the node has %d "
                                                  "outputs",
                           (long long)num_outputs, n_out);
        int64_t chunk = (dim + n_out - 1) / n_out;
        for (int i = 0; i < n_out; i++)
            sizes[i] = dim - chunk * i < chunk ? (dim - chunk * i > 0 ? dim - chunk * i : 0)
                                               : chunk;
        n_sizes = n_out;
    } else if (st == BYOCL_OK && n_sizes < 0) {
        if (dim % n_out != 0)
            st = onnx_fail(cx, BYOCL_ERR_INVALID, "dimension %lld of axis %d does not split "
                                                  "into %d equal parts",
                           (long long)dim, axis, n_out);
        for (int i = 0; i < n_out; i++)
            sizes[i] = dim / n_out;
        n_sizes = n_out;
    }
    int64_t total = 0;
    for (int i = 0; i < n_sizes && st == BYOCL_OK; i++) {
        if (sizes[i] < 0)
            st = onnx_fail(cx, BYOCL_ERR_INVALID, "split size %lld is negative",
                           (long long)sizes[i]);
        else if (sizes[i] > dim - total) /* checked before adding: the sum could overflow */
            st = onnx_fail(cx, BYOCL_ERR_INVALID,
                           "split sizes add up to more than the dimension of %lld",
                           (long long)dim);
        else
            total += sizes[i];
    }
    if (st == BYOCL_OK && (n_sizes != n_out || total != dim))
        st = onnx_fail(cx, BYOCL_ERR_INVALID,
                       "%d split sizes adding up to %lld for %d outputs of a dimension of %lld",
                       n_sizes, (long long)total, n_out, (long long)dim);
    if (st != BYOCL_OK) {
        free(sizes);
        return st;
    }
    st = split_outputs(cx, n, x, axis, sizes);
    free(sizes);
    return st;
}

static byocl_status convert_transpose(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int x;
    TRY(onnx_input(cx, 0, &x));
    int64_t perm[MAX_INTS];
    int np;
    TRY(onnx_attr_ints(cx, "perm", perm, MAX_INTS, &np));
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    if (np >= 0)
        TRY(set_ints(cx, a, "axes", perm, np));
    TRY_ID(y, onnx_call1(cx, "transpose", x, a));
    return onnx_output(cx, 0, y);
}

/* DepthToSpace (modes DCR and CRD) and SpaceToDepth: nn.depth_to_space and
 * nn.space_to_depth of the NCHW input, whose type relation checks rank and block. */
static byocl_status convert_subpixel(onnx_ctx *cx, const Onnx__NodeProto *n, const char *op,
                                     bool has_mode)
{
    int x;
    int64_t b;
    TRY(onnx_input(cx, 0, &x));
    if (!onnx_attr(n, "blocksize"))
        return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute 'blocksize' is missing (it is "
                                                "required)");
    TRY(onnx_attr_int(cx, "blocksize", 0, &b));
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    TRY(set_int(cx, a, "block_size", b));
    if (has_mode) {
        char mode[16];
        TRY(onnx_attr_string(cx, "mode", "DCR", mode, sizeof mode));
        TRY(onnx_attrs_ok(cx, byocl_attrs_set_str(cx->mod, a, "mode", mode)));
    }
    TRY_ID(y, onnx_call1(cx, op, x, a));
    return onnx_output(cx, 0, y);
}

static byocl_status convert_depth_to_space(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    return convert_subpixel(cx, n, "nn.depth_to_space", true);
}

static byocl_status convert_space_to_depth(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    return convert_subpixel(cx, n, "nn.space_to_depth", false);
}

/* A scalar integer input (one value) known at import time, for `why`. */
static byocl_status scalar_int_input(onnx_ctx *cx, int k, const char *why, int64_t *v)
{
    int count;
    TRY(onnx_input_ints(cx, k, why, v, 1, &count));
    if (count != 1)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "%s should be one value, got %d", why, count);
    return BYOCL_OK;
}

/* Trilu: trilu(x, k) with k the input (a scalar, read when running) or 0. */
static byocl_status convert_trilu(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    int64_t upper;
    TRY(onnx_attr_int(cx, "upper", 1, &upper));
    int args[2];
    TRY(onnx_input(cx, 0, &args[0]));
    if (onnx_has_input(n, 1))
        TRY(onnx_input(cx, 1, &args[1]));
    else if ((args[1] = onnx_scalar(cx, BYOCL_INT64, 0)) < 0)
        return cx->err->status;
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    TRY(set_bool(cx, a, "upper", upper != 0));
    TRY_ID(y, onnx_call(cx, "trilu", args, 2, a));
    return onnx_output(cx, 0, y);
}

/* CumSum: cumsum with the axis (a constant input), exclusive and reverse. */
static byocl_status convert_cumsum(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int64_t exclusive, reverse, axis_in;
    TRY(onnx_attr_int(cx, "exclusive", 0, &exclusive));
    TRY(onnx_attr_int(cx, "reverse", 0, &reverse));
    TRY(scalar_int_input(cx, 1, "the axis", &axis_in));
    int x, axis;
    TRY(onnx_input(cx, 0, &x));
    TRY(onnx_axis(cx, axis_in, shape_of(cx, x)->rank, "axis", &axis));
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    TRY(set_int(cx, a, "axis", axis));
    TRY(set_bool(cx, a, "exclusive", exclusive != 0));
    TRY(set_bool(cx, a, "reverse", reverse != 0));
    TRY_ID(y, onnx_call1(cx, "cumsum", x, a));
    return onnx_output(cx, 0, y);
}

/* Squeeze, Unsqueeze and the reductions take their axes as an attribute up to an opset and as
 * an input from it on; *n = -1 when they are absent. */
static byocl_status read_axes(onnx_ctx *cx, const Onnx__NodeProto *n, int64_t input_from,
                              int64_t *axes, int *count)
{
    *count = -1;
    if (cx->opset < input_from)
        return onnx_attr_ints(cx, "axes", axes, MAX_INTS, count);
    if (!onnx_has_input(n, 1))
        return BYOCL_OK;
    return onnx_input_ints(cx, 1, "the axes", axes, MAX_INTS, count);
}

static byocl_status normalize_axes(onnx_ctx *cx, int64_t *axes, int count, int rank)
{
    for (int i = 0; i < count; i++) {
        int ax;
        TRY(onnx_axis(cx, axes[i], rank, "axis", &ax));
        for (int j = 0; j < i; j++)
            if (axes[j] == ax)
                return onnx_fail(cx, BYOCL_ERR_INVALID, "axis %d is given twice", ax);
        axes[i] = ax;
    }
    return BYOCL_OK;
}

static byocl_status convert_squeeze(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    int x;
    TRY(onnx_input(cx, 0, &x));
    int64_t axes[MAX_INTS];
    int count;
    TRY(read_axes(cx, n, 13, axes, &count));
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    if (count > 0) {
        TRY(normalize_axes(cx, axes, count, shape_of(cx, x)->rank));
        TRY(set_ints(cx, a, "axis", axes, count));
    }
    TRY_ID(y, onnx_call1(cx, "squeeze", x, a));
    return onnx_output(cx, 0, y);
}

static int compare_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Axes index the output; inserting them in increasing order puts each where it belongs. */
static byocl_status convert_unsqueeze(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    int x;
    TRY(onnx_input(cx, 0, &x));
    int64_t axes[MAX_INTS];
    int count;
    TRY(read_axes(cx, n, 13, axes, &count));
    if (count < 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "the axes are missing");
    int out_rank = shape_of(cx, x)->rank + count;
    if (out_rank > BYOCL_MAX_RANK)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "the result would have rank %d; byocl "
                                                    "handles at most %d",
                         out_rank, BYOCL_MAX_RANK);
    TRY(normalize_axes(cx, axes, count, out_rank));
    qsort(axes, (size_t)count, sizeof axes[0], compare_int64);
    int y = x;
    for (int i = 0; i < count; i++) {
        byocl_attrs *a;
        TRY(new_attrs(cx, &a));
        TRY(set_int(cx, a, "axis", axes[i]));
        if ((y = onnx_call1(cx, "expand_dims", y, a)) < 0)
            return cx->err->status;
    }
    if (count == 0)
        return alias_input(cx, 0);
    return onnx_output(cx, 0, y);
}

/* The reduction `op` of x over `axes` (count <= 0: every axis) as Relay spells it. */
static int reduce_call(onnx_ctx *cx, const char *op, int x, const int64_t *axes, int count,
                       bool keepdims)
{
    byocl_attrs *a = onnx_attrs(cx);
    if (!a || (count > 0 && set_ints(cx, a, "axis", axes, count) != BYOCL_OK) ||
        set_bool(cx, a, "keepdims", keepdims) != BYOCL_OK)
        return -1;
    return onnx_call1(cx, op, x, a);
}

/* log(sum(exp(x - m))) + m with m the maximum over the axes: exp never overflows. */
static int log_sum_exp(onnx_ctx *cx, int x, const int64_t *axes, int count, bool keepdims)
{
    int m = reduce_call(cx, "max", x, axes, count, true);
    int args[2] = {x, m};
    int d = m < 0 ? -1 : onnx_call(cx, "subtract", args, 2, NULL);
    int e = d < 0 ? -1 : onnx_call1(cx, "exp", d, NULL);
    int s = e < 0 ? -1 : reduce_call(cx, "sum", e, axes, count, keepdims);
    int l = s < 0 ? -1 : onnx_call1(cx, "log", s, NULL);
    if (l < 0)
        return -1;
    if (!keepdims) { /* m without the reduced axes (all of them when none are listed) */
        byocl_attrs *a = onnx_attrs(cx);
        if (!a || (count > 0 && set_ints(cx, a, "axis", axes, count) != BYOCL_OK) ||
            (m = onnx_call1(cx, "squeeze", m, a)) < 0)
            return -1;
    }
    int sum[2] = {l, m};
    return onnx_call(cx, "add", sum, 2, NULL);
}

/* The reductions: ReduceX is `pre` elementwise (abs, square: x * x, or none), the Relay
 * reduction `op` and `post` elementwise (sqrt, log or none); ReduceLogSumExp is
 * log_sum_exp. Axes are an attribute before opset axes_from and an input from it. */
typedef struct reduce_recipe {
    const char *pre, *op, *post;
    int64_t axes_from;
} reduce_recipe;

static byocl_status reduce(onnx_ctx *cx, const Onnx__NodeProto *n, reduce_recipe r)
{
    int64_t keepdims, noop;
    TRY(onnx_attr_int(cx, "keepdims", 1, &keepdims));
    TRY(onnx_attr_int(cx, "noop_with_empty_axes", 0, &noop));
    int64_t axes[MAX_INTS];
    int count;
    TRY(read_axes(cx, n, r.axes_from, axes, &count));
    bool lse = strcmp(r.op, "log_sum_exp") == 0;
    if (count <= 0 && noop && !r.pre && !r.post && !lse)
        return alias_input(cx, 0);
    if (count <= 0 && noop)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "noop_with_empty_axes=1 without axes is not supported here (only "
                         "ReduceSum, ReduceMean, ReduceMax, ReduceMin and ReduceProd take it)");
    int x;
    TRY(onnx_input(cx, 0, &x));
    byocl_dtype dtype = onnx_type(cx, x)->dtype;
    if ((r.post || lse) && !byocl_dtype_is_float(dtype))
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "input of dtype %s is not supported (float32 or float16 only: the "
                         "result takes a %s)",
                         byocl_dtype_name(dtype), lse ? "log and an exp" : r.post);
    if (count > 0)
        TRY(normalize_axes(cx, axes, count, shape_of(cx, x)->rank));
    if (lse) {
        TRY_ID(y, log_sum_exp(cx, x, axes, count, keepdims != 0));
        return onnx_output(cx, 0, y);
    }
    if (r.pre && strcmp(r.pre, "square") == 0) {
        int xx[2] = {x, x};
        if ((x = onnx_call(cx, "multiply", xx, 2, NULL)) < 0)
            return cx->err->status;
    } else if (r.pre && (x = onnx_call1(cx, r.pre, x, NULL)) < 0)
        return cx->err->status;
    TRY_ID(y, reduce_call(cx, r.op, x, axes, count, keepdims != 0));
    if (r.post && (y = onnx_call1(cx, r.post, y, NULL)) < 0)
        return cx->err->status;
    return onnx_output(cx, 0, y);
}

#define REDUCE(fn, pre, op, post, axes_from)                                               \
    static byocl_status fn(onnx_ctx *cx, const Onnx__NodeProto *n)                        \
    {                                                                                      \
        return reduce(cx, n, (reduce_recipe){pre, op, post, axes_from});                   \
    }
REDUCE(convert_reduce_sum, NULL, "sum", NULL, 13)
REDUCE(convert_reduce_mean, NULL, "mean", NULL, 18)
REDUCE(convert_reduce_max, NULL, "max", NULL, 18)
REDUCE(convert_reduce_min, NULL, "min", NULL, 18)
REDUCE(convert_reduce_prod, NULL, "prod", NULL, 18)
REDUCE(convert_reduce_l1, "abs", "sum", NULL, 18)
REDUCE(convert_reduce_l2, "square", "sum", "sqrt", 18)
REDUCE(convert_reduce_sum_square, "square", "sum", NULL, 18)
REDUCE(convert_reduce_log_sum, NULL, "sum", "log", 18)
REDUCE(convert_reduce_log_sum_exp, NULL, "log_sum_exp", NULL, 18)

/* ArgMax, ArgMin: Relay's argmax/argmin give int32, ONNX's int64, so a cast follows. */
static byocl_status arg_reduce(onnx_ctx *cx, const char *op)
{
    int64_t axis, keepdims, last;
    TRY(onnx_attr_int(cx, "axis", 0, &axis));
    TRY(onnx_attr_int(cx, "keepdims", 1, &keepdims));
    TRY(onnx_attr_int(cx, "select_last_index", 0, &last));
    int x, ax;
    TRY(onnx_input(cx, 0, &x));
    TRY(onnx_axis(cx, axis, shape_of(cx, x)->rank, "axis", &ax));
    byocl_attrs *a;
    TRY(new_attrs(cx, &a));
    int64_t axes[1] = {ax};
    TRY(set_ints(cx, a, "axis", axes, 1));
    TRY(set_bool(cx, a, "keepdims", keepdims != 0));
    TRY(set_bool(cx, a, "select_last_index", last != 0));
    TRY_ID(y, onnx_call1(cx, op, x, a));
    TRY_ID(z, onnx_cast(cx, y, BYOCL_INT64));
    return onnx_output(cx, 0, z);
}

static byocl_status convert_arg_max(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    return arg_reduce(cx, "argmax");
}

static byocl_status convert_arg_min(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    return arg_reduce(cx, "argmin");
}

/* Pad. Constant padding stays pending, and a Conv or AveragePool that takes the result
 * absorbs zero padding into its own; elsewhere it becomes nn.pad (onnx_import.c), after a
 * strided_slice for the negative pads (cropping). Modes 'edge' and 'reflect' are nn.pad,
 * or takes where a pad crops or mirrors wider than the axis (onnx_pad.c). */
static byocl_status convert_pad(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    char mode[32];
    TRY(onnx_attr_string(cx, "mode", "constant", mode, sizeof mode));
    bool constant = strcmp(mode, "constant") == 0, reflect = strcmp(mode, "reflect") == 0;
    if (!constant && !reflect && strcmp(mode, "edge") != 0)
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                         "mode '%s' is not supported (only 'constant', 'reflect' and 'edge')",
                         mode);
    int x;
    TRY(onnx_input(cx, 0, &x));
    int rank = shape_of(cx, x)->rank;
    int64_t given[MAX_INTS], axes[BYOCL_MAX_RANK];
    int n_given, n_axes = rank;
    double value = 0.0;
    int value_input = -1; /* the padding value as a run-time input */
    if (cx->opset < 11) { /* attribute `paddings` in opset 1, `pads` from 2 */
        TRY(onnx_attr_ints(cx, cx->opset < 2 ? "paddings" : "pads", given, MAX_INTS, &n_given));
        TRY(onnx_attr_float(cx, "value", 0.0, &value));
    } else {
        TRY(onnx_input_ints(cx, 1, "the pads", given, MAX_INTS, &n_given));
        if (onnx_has_input(n, 2) && onnx_input_is_constant(cx, 2)) {
            const byocl_tensor *t;
            TRY(onnx_input_constant(cx, 2, "the padding value", &t));
            if (byocl_tensor_numel(t) != 1)
                return onnx_fail(cx, BYOCL_ERR_INVALID, "constant_value should be a scalar");
            value = byocl_tensor_get(t, 0);
        } else if (onnx_has_input(n, 2)) {
            int v;
            TRY(onnx_input(cx, 2, &v));
            if (byocl_shape_numel(shape_of(cx, v)) != 1)
                return onnx_fail(cx, BYOCL_ERR_INVALID, "constant_value should be a scalar");
            value_input = 2;
        }
        if (onnx_has_input(n, 3)) {
            TRY(onnx_input_ints(cx, 3, "the axes", axes, BYOCL_MAX_RANK, &n_axes));
            TRY(normalize_axes(cx, axes, n_axes, rank));
        }
    }
    if (n_axes == rank && !onnx_has_input(n, 3))
        for (int i = 0; i < rank; i++)
            axes[i] = i;
    if (n_given != 2 * n_axes)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "%d pads for %d axes; Pad needs two per axis",
                         n_given < 0 ? 0 : n_given, n_axes);
    int64_t pads[2 * BYOCL_MAX_RANK] = {0};
    bool any = false, cropping = false, padding = false;
    for (int i = 0; i < n_axes; i++) {
        int64_t before = given[i], after = given[n_axes + i];
        pads[axes[i]] = before;
        pads[rank + axes[i]] = after;
        any = any || before || after;
        cropping = cropping || before < 0 || after < 0;
        padding = padding || before > 0 || after > 0;
    }
    if (!any)
        return alias_input(cx, 0);
    int y;
    if (!constant) {
        /* What nn.pad does not do: reflect as wide as the axis (numpy mirrors again), pad
         * an empty axis (onnx_pad_by_index says why it cannot either). */
        bool beyond = false;
        for (int d = 0; d < rank; d++) {
            int64_t len = shape_of(cx, x)->dims[d], most = reflect ? len - 1 : len ? INT64_MAX : 0;
            beyond = beyond || pads[d] > most || pads[rank + d] > most;
        }
        if (cropping || beyond)
            TRY(onnx_pad_by_index(cx, x, pads, rank, reflect, &y));
        else
            TRY(onnx_pad_op(cx, x, onnx_scalar(cx, onnx_type(cx, x)->dtype, 0.0), pads, rank, mode,
                            &y));
    } else if (!cropping) {
        return onnx_output_pad(cx, 0, pads, rank, value, value_input);
    } else {
        int64_t crop[2 * BYOCL_MAX_RANK], grow[2 * BYOCL_MAX_RANK];
        for (int i = 0; i < 2 * rank; i++) {
            crop[i] = pads[i] < 0 ? pads[i] : 0;
            grow[i] = pads[i] > 0 ? pads[i] : 0;
        }
        TRY(onnx_crop(cx, x, crop, rank, &y));
        if (padding) { /* then nn.pad, as the pending pad would become */
            int v = value_input >= 0 ? -1 : onnx_scalar(cx, onnx_type(cx, x)->dtype, value);
            if (value_input >= 0) {
                int64_t no_dims[1];
                TRY(onnx_input(cx, value_input, &v));
                v = onnx_reshape(cx, v, 0, no_dims);
            }
            TRY(onnx_pad_op(cx, y, v, grow, rank, "constant", &y));
        }
    }
    return onnx_output(cx, 0, y);
}

/* Constant: a tensor, or a float/int (list) attribute; sparse and string values are not
 * supported. The value stays an import-time constant until an op takes it as a tensor. */
static byocl_status convert_constant(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    if (n->n_attribute != 1)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "needs exactly one value attribute, has %zu",
                         n->n_attribute);
    const Onnx__AttributeProto *attr = n->attribute[0];
    const char *name = attr->name;
    byocl_tensor *t = NULL;
    byocl_status st = BYOCL_OK;
    if (strcmp(name, "value") == 0) {
        if (!attr->t)
            return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute 'value' holds no tensor");
        char what[600];
        snprintf(what, sizeof what, "%s: node '%s' (Constant)", cx->path,
                 n->name ? n->name : "");
        st = onnx_model_tensor(cx->model, attr->t, what, &t, cx->err);
    } else if (strcmp(name, "value_float") == 0 || strcmp(name, "value_int") == 0) {
        bool is_float = name[6] == 'f';
        double v;
        byocl_shape s = byocl_shape_make(0, NULL);
        if (is_float)
            st = onnx_attr_float(cx, name, 0.0, &v);
        else {
            int64_t i;
            st = onnx_attr_int(cx, name, 0, &i);
            v = (double)i;
        }
        if (st == BYOCL_OK && !(t = byocl_tensor_new(is_float ? BYOCL_FLOAT32 : BYOCL_INT64, &s,
                                                     cx->err)))
            st = cx->err->status;
        if (st == BYOCL_OK)
            byocl_tensor_set(t, 0, v);
    } else if (strcmp(name, "value_floats") == 0 || strcmp(name, "value_ints") == 0) {
        bool is_float = name[6] == 'f';
        int64_t count = (int64_t)(is_float ? attr->n_floats : attr->n_ints);
        byocl_shape s = byocl_shape_make(1, &count);
        if (!(t = byocl_tensor_new(is_float ? BYOCL_FLOAT32 : BYOCL_INT64, &s, cx->err)))
            st = cx->err->status;
        for (int64_t i = 0; t && i < count; i++) {
            if (is_float)
                ((float *)byocl_tensor_data(t))[i] = attr->floats[i];
            else
                ((int64_t *)byocl_tensor_data(t))[i] = attr->ints[i];
        }
    } else {
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "a %s value is not supported",
                         strcmp(name, "sparse_value") == 0 ? "sparse" : "string");
    }
    if (st == BYOCL_OK)
        st = onnx_output_constant(cx, 0, t);
    byocl_tensor_unref(t);
    return st;
}

/* ----------------------------------------------------------------- table */

static const char *const no_attrs[] = {NULL};
static const char *const conv_attrs[] = {"auto_pad", "dilations", "group", "kernel_shape",
                                         "pads", "strides", NULL};
static const char *const conv_transpose_attrs[] = {
    "auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads",
    "strides", NULL};
static const char *const max_pool_attrs[] = {"auto_pad", "ceil_mode", "dilations",
                                             "kernel_shape", "pads", "storage_order",
                                             "strides", NULL};
static const char *const avg_pool_attrs[] = {"auto_pad", "ceil_mode", "count_include_pad",
                                             "dilations", "kernel_shape", "pads", "strides",
                                             NULL};
static const char *const batch_norm_attrs[] = {"epsilon", "momentum", "spatial",
                                               "training_mode", NULL};
static const char *const einsum_attrs[] = {"equation", NULL};
static const char *const gemm_attrs[] = {"alpha", "beta", "transA", "transB", NULL};
static const char *const clip_attrs[] = {"min", "max", NULL};
static const char *const alpha_attrs[] = {"alpha", NULL};
static const char *const alpha_beta_attrs[] = {"alpha", "beta", NULL};
static const char *const axis_attrs[] = {"axis", NULL};
static const char *const reshape_attrs[] = {"allowzero", NULL};
static const char *const split_attrs[] = {"axis", "split", "num_outputs", NULL};
static const char *const dropout_attrs[] = {"ratio", "seed", NULL};
static const char *const constant_attrs[] = {"value", "value_float", "value_floats",
                                             "value_int", "value_ints", "sparse_value",
                                             "value_string", "value_strings", NULL};
static const char *const cast_attrs[] = {"to", NULL};
static const char *const transpose_attrs[] = {"perm", NULL};
static const char *const axes_attrs[] = {"axes", NULL};
static const char *const reduce_attrs[] = {"axes", "keepdims", "noop_with_empty_axes", NULL};
static const char *const arg_reduce_attrs[] = {"axis", "keepdims", "select_last_index", NULL};
static const char *const pad_attrs[] = {"mode", "pads", "value", NULL};
static const char *const isinf_attrs[] = {"detect_negative", "detect_positive", NULL};
static const char *const mod_attrs[] = {"fmod", NULL};
static const char *const selu_attrs[] = {"alpha", "gamma", NULL};
static const char *const loss_attrs[] = {"ignore_index", "reduction", NULL};
static const char *const shape_attrs[] = {"start", "end", NULL};
static const char *const slice_attrs[] = {"starts", "ends", "axes", NULL};
static const char *const value_attrs[] = {"value", NULL};
static const char *const layer_norm_attrs[] = {"axis", "epsilon", "stash_type", NULL};
static const char *const blocksize_attrs[] = {"blocksize", NULL};
static const char *const depth_to_space_attrs[] = {"blocksize", "mode", NULL};
static const char *const trilu_attrs[] = {"upper", NULL};
static const char *const upsample_attrs[] = {"mode", "scales", NULL};
static const char *const resize_attrs[] = {"antialias", "axes", "coordinate_transformation_mode",
                                           "cubic_coeff_a", "exclude_outside",
                                           "extrapolation_value", "keep_aspect_ratio_policy",
                                           "mode", "nearest_mode", NULL};
static const char *const cumsum_attrs[] = {"exclusive", "reverse", NULL};
static const char *const shrink_attrs[] = {"bias", "lambd", NULL};
static const char *const epsilon_attrs[] = {"epsilon", NULL};
static const char *const eye_like_attrs[] = {"dtype", "k", NULL};
static const char *const lrn_attrs[] = {"alpha", "beta", "bias", "size", NULL};
static const char *const gather_nd_attrs[] = {"batch_dims", NULL};
static const char *const reduction_attrs[] = {"reduction", NULL};
static const char *const scatter_attrs[] = {"axis", "reduction", NULL};
static const char *const topk_attrs[] = {"axis", "k", "largest", "sorted", NULL};

static const onnx_op onnx_ops[] = {
    {"Abs", convert_abs, no_attrs, 1},
    {"Acos", convert_acos, no_attrs, 7},
    {"Acosh", convert_acosh, no_attrs, 9},
    {"Add", convert_add, no_attrs, 1},
    {"And", convert_and, no_attrs, 1},
    {"ArgMax", convert_arg_max, arg_reduce_attrs, 1},
    {"ArgMin", convert_arg_min, arg_reduce_attrs, 1},
    {"Asin", convert_asin, no_attrs, 7},
    {"Asinh", convert_asinh, no_attrs, 9},
    {"Atan", convert_atan, no_attrs, 7},
    {"Atanh", convert_atanh, no_attrs, 9},
    {"AveragePool", convert_average_pool, avg_pool_attrs, 1},
    {"BatchNormalization", convert_batch_norm, batch_norm_attrs, 1},
    {"Cast", convert_cast, cast_attrs, 1},
    {"Ceil", convert_ceil, no_attrs, 1},
    {"Celu", onnx_convert_celu, alpha_attrs, 12},
    {"CastLike", convert_cast_like, no_attrs, 15},
    {"Clip", convert_clip, clip_attrs, 1},
    {"Concat", convert_concat, axis_attrs, 1},
    {"Constant", convert_constant, constant_attrs, 1},
    {"ConstantOfShape", onnx_convert_constant_of_shape, value_attrs, 9},
    {"Conv", convert_conv, conv_attrs, 1},
    {"ConvTranspose", convert_conv_transpose, conv_transpose_attrs, 1},
    {"Cos", convert_cos, no_attrs, 7},
    {"Cosh", convert_cosh, no_attrs, 9},
    {"CumSum", convert_cumsum, cumsum_attrs, 11},
    {"DepthToSpace", convert_depth_to_space, depth_to_space_attrs, 1},
    {"Div", convert_div, no_attrs, 1},
    {"Dropout", convert_dropout, dropout_attrs, 1},
    {"Einsum", onnx_convert_einsum, einsum_attrs, 12},
    {"Elu", convert_elu, alpha_attrs, 1},
    {"Equal", convert_equal, no_attrs, 1},
    {"Erf", convert_erf, no_attrs, 9},
    {"Exp", convert_exp, no_attrs, 1},
    {"Expand", onnx_convert_expand, no_attrs, 8},
    {"EyeLike", onnx_convert_eye_like, eye_like_attrs, 9},
    {"Flatten", convert_flatten, axis_attrs, 1},
    {"Floor", convert_floor, no_attrs, 1},
    {"Gather", onnx_convert_gather, axis_attrs, 1},
    {"GatherElements", onnx_convert_gather_elements, axis_attrs, 11},
    {"GatherND", onnx_convert_gather_nd, gather_nd_attrs, 11},
    {"Gemm", convert_gemm, gemm_attrs, 1},
    {"GlobalAveragePool", convert_global_average_pool, no_attrs, 1},
    {"GlobalMaxPool", onnx_convert_global_max_pool, no_attrs, 1},
    {"Greater", convert_greater, no_attrs, 1},
    {"GreaterOrEqual", convert_greater_equal, no_attrs, 12},
    {"HardSigmoid", convert_hard_sigmoid, alpha_beta_attrs, 1},
    {"HardSwish", convert_hard_swish, no_attrs, 14},
    {"Hardmax", onnx_convert_hardmax, axis_attrs, 1},
    {"Identity", convert_identity, no_attrs, 1},
    {"InstanceNormalization", onnx_convert_instance_norm, epsilon_attrs, 1},
    {"IsInf", convert_isinf, isinf_attrs, 10},
    {"IsNaN", convert_isnan, no_attrs, 9},
    {"LayerNormalization", convert_layer_norm, layer_norm_attrs, 17},
    {"LeakyRelu", convert_leaky_relu, alpha_attrs, 1},
    {"Less", convert_less, no_attrs, 1},
    {"LessOrEqual", convert_less_equal, no_attrs, 12},
    {"LRN", onnx_convert_lrn, lrn_attrs, 1},
    {"Log", convert_log, no_attrs, 1},
    {"LogSoftmax", convert_log_softmax, axis_attrs, 1},
    {"MatMul", convert_matmul, no_attrs, 1},
    {"Max", convert_max, no_attrs, 1},
    {"MaxPool", convert_max_pool, max_pool_attrs, 1},
    {"Mean", convert_mean, no_attrs, 1},
    {"MeanVarianceNormalization", onnx_convert_mvn, axes_attrs, 9},
    {"Min", convert_min, no_attrs, 1},
    {"Mod", convert_mod, mod_attrs, 10},
    {"Mul", convert_mul, no_attrs, 1},
    {"Neg", convert_neg, no_attrs, 1},
    {"NegativeLogLikelihoodLoss", onnx_convert_nll_loss, loss_attrs, 12},
    {"Not", convert_not, no_attrs, 1},
    {"OneHot", onnx_convert_one_hot, axis_attrs, 9},
    {"Or", convert_or, no_attrs, 1},
    {"Pad", convert_pad, pad_attrs, 1},
    {"Pow", convert_pow, no_attrs, 1},
    {"PRelu", onnx_convert_prelu, no_attrs, 1},
    {"Range", onnx_convert_range, no_attrs, 11},
    {"Reciprocal", convert_reciprocal, no_attrs, 1},
    {"ReduceL1", convert_reduce_l1, reduce_attrs, 1},
    {"ReduceL2", convert_reduce_l2, reduce_attrs, 1},
    {"ReduceLogSum", convert_reduce_log_sum, reduce_attrs, 1},
    {"ReduceLogSumExp", convert_reduce_log_sum_exp, reduce_attrs, 1},
    {"ReduceMax", convert_reduce_max, reduce_attrs, 1},
    {"ReduceMean", convert_reduce_mean, reduce_attrs, 1},
    {"ReduceMin", convert_reduce_min, reduce_attrs, 1},
    {"ReduceProd", convert_reduce_prod, reduce_attrs, 1},
    {"ReduceSum", convert_reduce_sum, reduce_attrs, 1},
    {"ReduceSumSquare", convert_reduce_sum_square, reduce_attrs, 1},
    {"Relu", convert_relu, no_attrs, 1},
    {"Reshape", convert_reshape, reshape_attrs, 1},
    {"Resize", onnx_convert_resize, resize_attrs, 10},
    {"Round", convert_round, no_attrs, 11},
    {"Scatter", onnx_convert_scatter_elements, axis_attrs, 9},
    {"ScatterElements", onnx_convert_scatter_elements, scatter_attrs, 11},
    {"ScatterND", onnx_convert_scatter_nd, reduction_attrs, 11},
    {"Selu", convert_selu, selu_attrs, 1},
    {"Shrink", onnx_convert_shrink, shrink_attrs, 9},
    {"Shape", onnx_convert_shape, shape_attrs, 1},
    {"Sigmoid", convert_sigmoid, no_attrs, 1},
    {"Sign", convert_sign, no_attrs, 9},
    {"Sin", convert_sin, no_attrs, 7},
    {"Sinh", convert_sinh, no_attrs, 9},
    {"Size", onnx_convert_size, no_attrs, 1},
    {"Slice", onnx_convert_slice, slice_attrs, 1},
    {"Softmax", convert_softmax, axis_attrs, 1},
    {"SoftmaxCrossEntropyLoss", onnx_convert_softmax_cross_entropy_loss, loss_attrs, 12},
    {"Softplus", convert_softplus, no_attrs, 1},
    {"Softsign", convert_softsign, no_attrs, 1},
    {"SpaceToDepth", convert_space_to_depth, blocksize_attrs, 1},
    {"Split", convert_split, split_attrs, 1},
    {"Sqrt", convert_sqrt, no_attrs, 1},
    {"Squeeze", convert_squeeze, axes_attrs, 1},
    {"Sub", convert_sub, no_attrs, 1},
    {"Sum", convert_sum, no_attrs, 1},
    {"Tan", convert_tan, no_attrs, 7},
    {"Tanh", convert_tanh, no_attrs, 1},
    {"ThresholdedRelu", convert_thresholded_relu, alpha_attrs, 10},
    {"Tile", onnx_convert_tile, no_attrs, 1},
    {"TopK", onnx_convert_topk, topk_attrs, 1},
    {"Transpose", convert_transpose, transpose_attrs, 1},
    {"Trilu", convert_trilu, trilu_attrs, 14},
    {"Unsqueeze", convert_unsqueeze, axes_attrs, 1},
    {"Upsample", onnx_convert_upsample, upsample_attrs, 1},
    {"Where", convert_where, no_attrs, 9},
    {"Xor", convert_xor, no_attrs, 1},
};

/* Attributes of old opsets, accepted on the ops named (NULL: any op) while the opset is below
 * `until`; their converters read them (consumed_inputs, an optimization hint, is ignored). */
static const struct {
    const char *attr;
    int64_t until;
    const char *ops; /* space-separated */
} legacy_attrs[] = {
    {"consumed_inputs", 7, NULL},
    {"is_test", 7, "BatchNormalization Dropout"},
    {"broadcast", 7, "Add Sub Mul Div Pow Equal Greater Less And Or Xor Gemm"},
    {"axis", 7, "Add Sub Mul Div Pow Equal Greater Less And Or Xor"},
    {"paddings", 2, "Pad"},
    {"shape", 5, "Reshape"},
    {"height_scale", 7, "Upsample"},
    {"width_scale", 7, "Upsample"},
};

static bool word_in(const char *word, const char *list)
{
    size_t len = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += len)
        if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return true;
    return false;
}

bool onnx_legacy_attr(int64_t opset, const char *op_type, const char *attr)
{
    for (size_t i = 0; i < sizeof legacy_attrs / sizeof legacy_attrs[0]; i++)
        if (opset < legacy_attrs[i].until && strcmp(legacy_attrs[i].attr, attr) == 0 &&
            (!legacy_attrs[i].ops || word_in(op_type, legacy_attrs[i].ops)))
            return true;
    return false;
}

const onnx_op *onnx_find_op(const char *op_type)
{
    for (size_t i = 0; i < sizeof onnx_ops / sizeof onnx_ops[0]; i++)
        if (strcmp(onnx_ops[i].type, op_type) == 0)
            return &onnx_ops[i];
    return NULL;
}
