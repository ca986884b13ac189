#!/usr/bin/python3
"""Expected results of byocl's elementwise ops (add ... cast, power, comparisons, logical
ops, where, negative, log, sqrt, rsqrt, erf, sin ... atanh, round, floor, ceil, sign, isinf, isnan, mod,
floor_mod), computed with numpy (erf with Python's
math.erf, in double), for
tests/test_ops_elemwise.c. Writes tests/fixtures/ops/elemwise_cases.h.

Semantics that differ from plain numpy are spelled out here with Python integers: TVM's
integer divide truncates toward zero (numpy's // floors), clip on integers uses the
bounds truncated to integers, and cast from float to a narrow integer wraps."""

import math

import numpy as np

from ops_fixture import BF16, Fixture

rng = np.random.default_rng(20240607)
f32, f16 = np.float32, np.float16
fx = Fixture("elemwise")


def randn(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


def randint(shape, lo, hi, dtype):
    return rng.integers(lo, hi, shape).astype(dtype)


def trunc_div(a, b, dtype):
    q = [abs(int(x)) // abs(int(y)) * (1 if (x < 0) == (y < 0) else -1)
         for x, y in zip(a.reshape(-1), b.reshape(-1))]
    return wrap(np.array(q, dtype=object).reshape(a.shape), dtype)


def exact(fn, a, b):
    """fn on Python integers (no overflow), wrapped back to a's dtype."""
    return wrap([fn(int(x), int(y)) for x, y in zip(a, b)], a.dtype.type)


def wrap(values, dtype):
    """Python integers wrapped to the dtype's width (two's complement)."""
    bits = np.iinfo(dtype).bits
    out = []
    for v in np.asarray(values, dtype=object).reshape(-1):
        v = int(v) % (1 << bits)
        if np.iinfo(dtype).min < 0 and v >= 1 << (bits - 1):
            v -= 1 << bits
        out.append(v)
    return np.array(out, dtype=dtype).reshape(np.shape(values))


with np.errstate(all="ignore"):
    # ---- broadcasting
    a, b = f32(1.5).reshape(()), randn((2, 3, 2, 2))
    fx.case("add_rank0_rank4", "add", "", [a, b], [a + b])
    fx.case("add_rank4_rank0", "add", "", [b, a], [b + a])
    a, b = randn((3, 1)), randn((1, 4))
    fx.case("multiply_3x1_1x4", "multiply", "", [a, b], [a * b])
    a, b = randn((2, 3, 4)), randn((4,))
    fx.case("subtract_trailing", "subtract", "", [a, b], [a - b])
    a, b = randn((2, 1, 4)), randn((3, 1))
    fx.case("maximum_both_sides", "maximum", "", [a, b], [np.maximum(a, b)])

    # ---- float specials
    a = np.array([1, -1, 0, 3, np.inf, 7], f32)
    b = np.array([0, 0, 0, -2, 2, 3], f32)
    fx.case("divide_f32_by_zero", "divide", "", [a, b], [a / b])
    a = np.array([np.nan, 1, -2, np.inf, -0.0], f32)
    b = np.array([1, np.nan, -3, 5, 0.0], f32)
    fx.case("maximum_nan", "maximum", "", [a, b], [np.maximum(a, b)])
    fx.case("minimum_nan", "minimum", "", [a, b], [np.minimum(a, b)])
    # float16: 2048 + 1 is a tie (rounds to even 2048), 2048 + 3 rounds up to 2052
    a = np.array([2048, 2048, 65504, 0.1, -3], f16)
    b = np.array([1, 3, 32, 0.2, 1e-3], f16)
    fx.case("add_f16_rounding", "add", "", [a, b], [a + b])
    a, b = randn((2, 3), f16), randn((3,), f16)
    fx.case("multiply_f16_bcast", "multiply", "", [a, b], [a * b])
    fx.case("divide_f16", "divide", "", [a, b], [a / b])

    # ---- integers: TVM's truncating divide, wrapping arithmetic
    a = np.array([7, -7, 7, -7, 0, -2**31, 5], np.int32)
    b = np.array([2, 2, -2, -2, 3, -1, 7], np.int32)
    fx.case("divide_i32_trunc", "divide", "", [a, b], [trunc_div(a, b, np.int32)])
    a = np.array([[9], [-9]], np.int8)
    b = np.array([4, -4, 5], np.int8)
    ab, bb = np.broadcast_arrays(a, b)
    fx.case("divide_i8_bcast", "divide", "", [a, b], [trunc_div(ab, bb, np.int8)])
    a = np.array([100, -100, 127, -128], np.int8)
    b = np.array([100, -100, 1, -1], np.int8)
    fx.case("add_i8_wraps", "add", "", [a, b], [exact(lambda x, y: x + y, a, b)])
    a = np.array([0, 5, 200], np.uint8)
    b = np.array([1, 10, 100], np.uint8)
    fx.case("subtract_u8_wraps", "subtract", "", [a, b], [exact(lambda x, y: x - y, a, b)])
    a = np.array([3037000500, -2**62, 2**53 + 1], np.int64)
    b = np.array([3037000500, 2, 1], np.int64)
    fx.case("multiply_i64_wraps", "multiply", "", [a, b], [exact(lambda x, y: x * y, a, b)])
    fx.case("add_i64_exact", "add", "", [a, b], [exact(lambda x, y: x + y, a, b)])
    a, b = randint((2, 3), -50, 50, np.int32), randint((3,), -50, 50, np.int32)
    fx.case("maximum_i32", "maximum", "", [a, b], [np.maximum(a, b)])
    a, b = randint((4,), 0, 255, np.uint8), randint((4,), 0, 255, np.uint8)
    fx.case("minimum_u8", "minimum", "", [a, b], [np.minimum(a, b)])

    # ---- unary
    a = np.array([-1.5, 0.0, -0.0, 2.25, -np.inf, np.nan], f32)
    fx.case("abs_f32", "abs", "", [a], [np.abs(a)])
    a = np.array([-128, -5, 0, 127], np.int8)
    fx.case("abs_i8", "abs", "", [a], [wrap([abs(int(v)) for v in a], np.int8)])
    a = np.array([-7, 3], np.int64)
    fx.case("abs_i64", "abs", "", [a], [np.abs(a)])
    a = np.concatenate([randn((6,)), np.array([0, -np.inf, 100, -100, np.nan], f32)])
    fx.case("exp_f32", "exp", "", [a], [np.exp(a.astype(np.float64)).astype(f32)], rtol=1e-6)
    fx.case("sigmoid_f32", "sigmoid", "", [a],
            [(1 / (1 + np.exp(-a.astype(np.float64)))).astype(f32)], rtol=1e-6)
    fx.case("tanh_f32", "tanh", "", [a], [np.tanh(a.astype(np.float64)).astype(f32)], rtol=1e-6)
    h = randn((2, 3), f16)
    fx.case("exp_f16", "exp", "", [h], [np.exp(h)], rtol=1e-3)
    fx.case("sigmoid_f16", "sigmoid", "", [h], [(1 / (1 + np.exp(-h.astype(f32)))).astype(f16)],
            rtol=1e-3)
    fx.case("tanh_f16", "tanh", "", [h], [np.tanh(h)], rtol=1e-3, atol=1e-4)
    a = np.array([-3, -1.5, -1.2, 0, 1.9, 2.0, 7, np.nan, -np.inf], f32)
    fx.case("clip_f32", "clip", "a_min=-1.5f, a_max=2f", [a], [np.clip(a, -1.5, 2.0)])
    h = np.array([-1, 0.05, 0.5, 3], f16)
    fx.case("clip_f16", "clip", "a_min=0.1f, a_max=2.5f", [h], [np.clip(h, f16(0.1), f16(2.5))])
    a = np.array([-9, -3, -2, 0, 3, 4, 100], np.int32)
    fx.case("clip_i32_truncated_bounds", "clip", "a_min=-2.5f, a_max=3.7f", [a],
            [np.clip(a, -2, 3)])
    a = randint((2, 2), -100, 100, np.int64)
    fx.case("copy_i64", "copy", "", [a], [a.copy()])
    h = randn((3,), f16)
    fx.case("copy_f16", "copy", "", [h], [h.copy()])

    # ---- float functions: computed in double, rounded once
    def in_double(fn, a):
        return fn(a.astype(np.float64)).astype(a.dtype)

    a = np.concatenate([np.abs(randn((6,))) * 4, np.array([0, -0.0, -1, np.inf, np.nan, 1e-30],
                                                         f32)]).astype(f32)
    fx.case("sqrt_f32", "sqrt", "", [a], [in_double(np.sqrt, a)])
    fx.case("rsqrt_f32", "rsqrt", "", [a], [in_double(lambda v: 1 / np.sqrt(v), a)])
    fx.case("log_f32", "log", "", [a], [in_double(np.log, a)], rtol=1e-6)
    h = (np.abs(randn((2, 3))) * 3).astype(f16)
    fx.case("sqrt_f16", "sqrt", "", [h], [in_double(np.sqrt, h)])
    fx.case("rsqrt_f16", "rsqrt", "", [h], [in_double(lambda v: 1 / np.sqrt(v), h)])
    fx.case("log_f16", "log", "", [h], [in_double(np.log, h)], rtol=1e-3)
    verf = np.vectorize(math.erf)
    a = np.concatenate([randn((6,)) * 2, np.array([0, -0.0, 6, -6, np.inf, -np.inf, np.nan],
                                                 f32)]).astype(f32)
    fx.case("erf_f32", "erf", "", [a], [in_double(verf, a)], rtol=1e-6)
    fx.case("erf_f16", "erf", "", [h], [in_double(verf, h)], rtol=1e-3)
    a = np.array([1.5, -0.0, 0.0, -np.inf, np.nan, -3.25], f32)
    fx.case("negative_f32", "negative", "", [a], [-a])
    fx.case("negative_f16", "negative", "", [h], [-h])
    a = np.array([-128, -5, 0, 127], np.int8)
    fx.case("negative_i8_wraps", "negative", "", [a], [wrap([-int(v) for v in a], np.int8)])
    a = np.array([0, 1, 200], np.uint8)
    fx.case("negative_u8_wraps", "negative", "", [a], [wrap([-int(v) for v in a], np.uint8)])
    a = np.array([-(2**63), 2**53 + 1, -7], np.int64)
    fx.case("negative_i64", "negative", "", [a], [wrap([-int(v) for v in a], np.int64)])

    # ---- power (broadcasting, float dtypes)
    a = (np.abs(randn((2, 3, 4))) * 2).astype(f32)
    b = np.array([2, 0.5, -1.5, 3], f32)
    fx.case("power_bcast", "power", "", [a, b], [in_double(lambda v: v ** b.astype(np.float64), a)],
            rtol=1e-6)
    a = np.array([-2, -2, 0, 0, np.nan, 1, np.inf, -8], f32)
    b = np.array([3, 0.5, -1, 0, 0, np.nan, -2, 1 / 3], f32)
    fx.case("power_specials", "power", "", [a, b],
            [np.power(a.astype(np.float64), b.astype(np.float64)).astype(f32)], rtol=1e-6)
    a, b = (np.abs(randn((2, 3))) + 0.5).astype(f16), np.array(1.7, f16).reshape(())
    fx.case("power_f16_scalar", "power", "", [a, b],
            [np.power(a.astype(np.float64), np.float64(b)).astype(f16)], rtol=1e-3)

    # ---- comparisons: bool results, broadcasting, NaN unequal to everything
    compare = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less,
               "greater": np.greater, "less_equal": np.less_equal,
               "greater_equal": np.greater_equal}
    a = np.array([[1, 2, np.nan, -0.0], [3, np.inf, 2, 5]], f32)
    b = np.array([2, 2, np.nan, 0.0], f32)
    for name, fn in compare.items():
        fx.case(name + "_f32_bcast", name, "", [a, b], [fn(a, b)])
    a, b = randint((2, 1, 3), -3, 3, np.int32), randint((4, 1), -3, 3, np.int32)
    fx.case("less_i32_bcast", "less", "", [a, b], [np.less(a, b)])
    fx.case("equal_i32_bcast", "equal", "", [a, b], [np.equal(a, b)])
    a = np.array([0, 127, 128, 255], np.uint8)
    b = np.array([128], np.uint8)
    fx.case("greater_u8", "greater", "", [a, b], [np.greater(a, b)])
    a = np.array([-(2**63), 2**53 + 1, 5], np.int64)
    b = np.array([-(2**63) + 1, 2**53, 5], np.int64)
    fx.case("greater_equal_i64_exact", "greater_equal", "", [a, b], [np.greater_equal(a, b)])
    h, g = randn((3, 2), f16), randn((2,), f16)
    fx.case("less_equal_f16", "less_equal", "", [h, g], [np.less_equal(h, g)])
    t, u = np.array([True, False, True]), np.array([[True], [False]])
    fx.case("not_equal_bool", "not_equal", "", [t, u], [np.not_equal(t, u)])

    # ---- logical ops on bool
    fx.case("logical_and_bcast", "logical_and", "", [t, u], [np.logical_and(t, u)])
    fx.case("logical_or_bcast", "logical_or", "", [t, u], [np.logical_or(t, u)])
    fx.case("logical_xor_bcast", "logical_xor", "", [t, u], [np.logical_xor(t, u)])
    fx.case("logical_not", "logical_not", "", [u], [np.logical_not(u)])

    # ---- where: three-way broadcasting, any dtype
    c = rng.integers(0, 2, (2, 1, 4)).astype(bool)
    x, y = randn((3, 1)), f32(-1.0).reshape(())
    fx.case("where_bcast_f32", "where", "", [c, x, y], [np.where(c, x, y)])
    x, y = np.array([2**62 + 1, -5], np.int64), np.array([[7], [-(2**63)]], np.int64)
    c = np.array([True, False])
    fx.case("where_i64", "where", "", [c, x, y], [np.where(c, x, y)])
    h, g = randn((2, 3), f16), randn((3,), f16)
    c = np.array([[True, False, True], [False, False, True]])
    fx.case("where_f16", "where", "", [c, h, g], [np.where(c, h, g)])
    fx.case("where_bool", "where", "", [c, t, u], [np.where(c, t, u)])

    # ---- trigonometric and hyperbolic functions, round, sign, isinf, isnan, mod
    specials = np.array([0, -0.0, np.inf, -np.inf, np.nan], f32)
    a = np.concatenate([randn((6,)) * 3, specials]).astype(f32)
    unit = np.concatenate([rng.uniform(-1, 1, 6).astype(f32), np.array([1, -1, 2], f32),
                           specials]).astype(f32)
    above1 = np.concatenate([rng.uniform(1, 10, 6).astype(f32), np.array([0.5], f32),
                             specials]).astype(f32)
    h = randn((2, 3), f16)
    for name, fn, x in [("sin", np.sin, a), ("cos", np.cos, a), ("tan", np.tan, a),
                        ("asin", np.arcsin, unit), ("acos", np.arccos, unit),
                        ("atan", np.arctan, a), ("sinh", np.sinh, a), ("cosh", np.cosh, a),
                        ("asinh", np.arcsinh, a), ("acosh", np.arccosh, above1),
                        ("atanh", np.arctanh, unit)]:
        fx.case(name + "_f32", name, "", [x], [in_double(fn, x)], rtol=1e-6)
        hx = (h / 3).astype(f16) if name in ("asin", "acos", "atanh") else h
        if name == "acosh":
            hx = (np.abs(h) + 1).astype(f16)
        fx.case(name + "_f16", name, "", [hx], [in_double(fn, hx)], rtol=1e-3, atol=1e-4)
    # round: halves to even (numpy's round, C's rint)
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6, -2.6, 1e8 + 0.5, 0.49999997,
                  -0.0, np.inf, np.nan], f32)
    fx.case("round_f32_half_even", "round", "", [a], [np.round(a)])
    h = np.array([0.5, 1.5, 2.5, -3.5, 1023.5, 2.75], f16)
    fx.case("round_f16", "round", "", [h], [np.round(h)])
    a = np.array([0.5, -0.5, 1.0, -1.0, 2.7, -2.7, 1e8 + 0.5, -0.0, 3e-30, -3e-30, np.inf,
                  -np.inf, np.nan], f32)
    fx.case("floor_f32", "floor", "", [a], [np.floor(a)])
    fx.case("ceil_f32", "ceil", "", [a], [np.ceil(a)])
    h = np.array([0.5, -1.5, 2.75, -1023.5, 65504, -0.25], f16)
    fx.case("floor_f16", "floor", "", [h], [np.floor(h)])
    fx.case("ceil_f16", "ceil", "", [h], [np.ceil(h)])
    a = np.array([-2.5, 0, -0.0, 3e-30, np.inf, -np.inf, np.nan], f32)
    fx.case("sign_f32", "sign", "", [a], [np.sign(a)])
    a = np.array([-128, -1, 0, 1, 127], np.int8)
    fx.case("sign_i8", "sign", "", [a], [np.sign(a)])
    a = np.array([0, 1, 255], np.uint8)
    fx.case("sign_u8", "sign", "", [a], [np.sign(a)])
    a = np.array([-(2**63), 0, 2**62], np.int64)
    fx.case("sign_i64", "sign", "", [a], [np.sign(a)])
    a = np.array([[1, np.inf, -np.inf], [np.nan, 0, -3e38]], f32)
    fx.case("isinf_f32", "isinf", "", [a], [np.isinf(a)])
    fx.case("isnan_f32", "isnan", "", [a], [np.isnan(a)])
    h = np.array([np.inf, 65504, np.nan, -np.inf], f16)
    fx.case("isinf_f16", "isinf", "", [h], [np.isinf(h)])
    fx.case("isnan_f16", "isnan", "", [h], [np.isnan(h)])
    # mod: C's fmod (the sign of a); floor_mod: numpy's mod (the sign of b)
    a = np.array([5.5, -5.5, 5.5, -5.5, 3, 0, np.inf, 1, 7.25], f32)
    b = np.array([2, 2, -2, -2, 1.5, 3, 2, np.inf, np.nan], f32)
    fx.case("mod_f32", "mod", "", [a, b], [np.fmod(a, b)])
    fx.case("floor_mod_f32", "floor_mod", "", [a, b], [np.mod(a, b)])
    a, b = (randn((2, 3), f16) * 4).astype(f16), np.array([1.5, -2.0, 0.75], f16)
    fx.case("mod_f16_bcast", "mod", "", [a, b], [np.fmod(a, b)])
    fx.case("floor_mod_f16_bcast", "floor_mod", "", [a, b], [np.mod(a, b)])
    a = np.array([7, -7, 7, -7, 0, -2**31, 5], np.int32)
    b = np.array([3, 3, -3, -3, 4, -1, 5], np.int32)
    fx.case("mod_i32", "mod", "", [a, b], [np.fmod(a, b)])
    fx.case("floor_mod_i32", "floor_mod", "", [a, b], [np.mod(a, b)])
    a = np.array([[-128], [100]], np.int8)
    b = np.array([3, -3, -1], np.int8)
    fx.case("mod_i8_bcast", "mod", "", [a, b], [np.fmod(a, b)])
    fx.case("floor_mod_i8_bcast", "floor_mod", "", [a, b], [np.mod(a, b)])
    a, b = np.array([200, 7, 0], np.uint8), np.array([7, 200, 9], np.uint8)
    fx.case("floor_mod_u8", "floor_mod", "", [a, b], [np.mod(a, b)])
    a = np.array([2**62 + 3, -(2**63), -9], np.int64)
    b = np.array([-5, 7, 4], np.int64)
    fx.case("floor_mod_i64", "floor_mod", "", [a, b], [np.mod(a, b)])

    # ---- cast
    # ties and limits of float16: 2049 -> 2048 and 2051 -> 2052 (to even), 65520 -> inf,
    # 65519 -> 65504, subnormals (2^-24 is the smallest; 2^-25 ties to 0, 3*2^-25 to 2^-23)
    a = np.array([2049, 2051, 65520, 65519, -65520, 65504, 2.0**-24, 2.0**-25, 3 * 2.0**-25,
                  1e-8, 1e-5, 6.1e-5, 0.1, 1 / 3, -0.0, np.inf, -np.inf, np.nan], f32)
    fx.case("cast_f32_to_f16", "cast", 'dtype="float16"', [a], [a.astype(f16)])
    h = np.array([0.1, -2.5, 65504, 2.0**-24, np.inf], f16)
    fx.case("cast_f16_to_f32", "cast", 'dtype="float32"', [h], [h.astype(f32)])
    a = np.array([1.9, -1.9, 127.9, -128.9, 0.5, -0.5, 0.0, 42.0], f32)
    fx.case("cast_f32_to_i8_truncates", "cast", 'dtype="int8"', [a], [a.astype(np.int8)])
    # out of int8's range: truncate, then wrap (numpy leaves this undefined)
    a = np.array([300.7, -300.7, 255.0, 128.0], f32)
    fx.case("cast_f32_to_i8_wraps", "cast", 'dtype="int8"', [a],
            [wrap([int(v) for v in a], np.int8)])
    a = np.array([2.9, -2.9, 1e9], f32)
    fx.case("cast_f32_to_i32", "cast", 'dtype="int32"', [a], [a.astype(np.int32)])
    a = np.array([2**40 + 5, -1, 2**31, 2**62 + 3], np.int64)
    fx.case("cast_i64_to_i32_wraps", "cast", 'dtype="int32"', [a], [a.astype(np.int32)])
    a = np.array([2**53 + 1, -(2**63)], np.int64)
    fx.case("cast_i64_to_i64_exact", "cast", 'dtype="int64"', [a], [a.copy()])
    a = np.array([-7, 0, 16777217], np.int32)
    fx.case("cast_i32_to_f32", "cast", 'dtype="float32"', [a], [a.astype(f32)])
    a = np.array([0, -0.0, 0.5, -3, np.nan, np.inf], f32)
    fx.case("cast_f32_to_bool", "cast", 'dtype="bool"', [a], [a.astype(bool)])
    a = np.array([True, False, True])
    fx.case("cast_bool_to_f32", "cast", 'dtype="float32"', [a], [a.astype(f32)])
    a = np.array([0, 127, 128, 255], np.uint8)
    fx.case("cast_u8_to_i8", "cast", 'dtype="int8"', [a], [a.astype(np.int8)])
    a = np.array([-1, 300], np.int32)
    fx.case("cast_i32_to_u8", "cast", 'dtype="uint8"', [a], [a.astype(np.uint8)])

    # ---- bfloat16: the top half of a float32. float32 -> bfloat16 truncates, as the
    # expected outputs of ONNX's test_cast_FLOAT_to_BFLOAT16 do (0x3ef5eeb0 -> 0x3ef5, not
    # 0x3ef6); a NaN stays a quiet NaN even when its payload sits in the dropped low bits.
    def f32_bits(*bits):
        return np.array(bits, np.uint32).view(f32)

    def to_bf16(a):
        u = a.astype(f32).view(np.uint32)
        hi = (u >> 16).astype(np.uint16)
        return np.where(np.isnan(a), hi | 0x40, hi).astype(np.uint16).view(BF16)

    def from_bf16(b):
        return (b.view(np.uint16).astype(np.uint32) << 16).view(f32)

    # rounds down and "up" (low half above 0x8000: still truncated), ties, the largest
    # finite float (stays finite), subnormals, -0, inf and NaN (the fixture's float32
    # NaNs are C's NAN: NaN payloads are tested on byocl_f32_to_bf16 in test_ir.c)
    a = f32_bits(0x3ef535b8, 0x3ef5eeb0, 0x3f808000, 0x3f818000, 0x7f7fffff, 0x00000001,
                 0x007fffff, 0x00010000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                 0x3dcccccd, 0xc2f6e979)
    fx.case("cast_f32_to_bf16_truncates", "cast", 'dtype="bfloat16"', [a], [to_bf16(a)])
    b = np.array([0x3f80, 0xbf80, 0x7f7f, 0x0001, 0x807f, 0x8000, 0x7f80, 0xff80, 0x7fc0,
                  0x3e57, 0x4049], np.uint16).view(BF16)
    fx.case("cast_bf16_to_f32", "cast", 'dtype="float32"', [b], [from_bf16(b)])
    # through double: float64 -> float32 (nearest) -> bfloat16 (truncated); to integers
    # truncate toward zero
    a = np.array([1.00390625, 1.0 / 3, -2.75, 1e300, 65536.5], np.float64)
    fx.case("cast_f64_to_bf16", "cast", 'dtype="bfloat16"', [a], [to_bf16(a.astype(f32))])
    b = np.array([0x4049, 0xc049, 0x4780, 0x3f00], np.uint16).view(BF16)  # 3.14, -3.14, 65536, 0.5
    fx.case("cast_bf16_to_i32", "cast", 'dtype="int32"', [b],
            [from_bf16(b).astype(np.int32)])
    a = np.array([-7, 0, 257, 65535], np.int32)
    fx.case("cast_i32_to_bf16", "cast", 'dtype="bfloat16"', [a], [to_bf16(a.astype(f32))])
    # elementwise arithmetic computes in float and truncates the result to bfloat16
    x = np.array([0x3f80, 0x4049, 0xbfc0, 0x7f7f], np.uint16).view(BF16)
    y = np.array([0x3b80, 0x3f80, 0x4000, 0x7f7f], np.uint16).view(BF16)
    fx.case("add_bf16_truncates", "add", "", [x, y], [to_bf16(from_bf16(x) + from_bf16(y))])
    fx.case("multiply_bf16", "multiply", "", [x, y], [to_bf16(from_bf16(x) * from_bf16(y))])

    # ---- int16, uint16, uint32, uint64: the extremes of each; uint64 above 2^63 and
    # beyond 2^53 must stay exact (it compares and divides unsigned)
    u64 = np.uint64
    ext = {
        np.int16: [-(2**15), -7, 0, 5, 2**15 - 1],
        np.uint16: [0, 7, 2**15, 2**16 - 2, 2**16 - 1],
        np.uint32: [0, 7, 2**31, 2**32 - 2, 2**32 - 1],
        u64: [0, 7, 2**53 + 1, 2**63, 2**64 - 1],
    }
    for t, vals in ext.items():
        nm = {np.int16: "i16", np.uint16: "u16", np.uint32: "u32", u64: "u64"}[t]
        a = np.array(vals, t)
        b = np.array(vals[::-1], t)
        b[b == 0] = 3  # no division by zero
        fx.case("add_%s_wraps" % nm, "add", "", [a, b], [exact(lambda x, y: x + y, a, b)])
        fx.case("subtract_%s_wraps" % nm, "subtract", "", [a, b],
                [exact(lambda x, y: x - y, a, b)])
        fx.case("maximum_%s" % nm, "maximum", "", [a, b], [np.maximum(a, b)])
        fx.case("minimum_%s" % nm, "minimum", "", [a, b], [np.minimum(a, b)])
        fx.case("divide_%s" % nm, "divide", "", [a, b], [trunc_div(a, b, t)])
        fx.case("mod_%s" % nm, "mod", "", [a, b], [np.fmod(a, b)])
        fx.case("floor_mod_%s" % nm, "floor_mod", "", [a, b], [np.mod(a, b)])
        for cmp in ("less", "greater_equal", "equal"):
            fx.case("%s_%s" % (cmp, nm), cmp, "", [a, b], [getattr(np, cmp)(a, b)])
        fx.case("abs_%s" % nm, "abs", "", [a], [wrap([abs(int(v)) for v in a], t)])
        fx.case("sign_%s" % nm, "sign", "", [a], [np.sign(a)])
        fx.case("negative_%s_wraps" % nm, "negative", "", [a], [wrap([-int(v) for v in a], t)])
        fx.case("clip_%s" % nm, "clip", "a_min=3f, a_max=40000f", [a],
                [np.array([min(max(int(v), 3), 40000) for v in a], t)])
        fx.case("cast_%s_to_f64" % nm, "cast", 'dtype="float64"', [a], [a.astype(np.float64)])
        fx.case("cast_%s_to_i64" % nm, "cast", 'dtype="int64"', [a],
                [wrap([int(v) for v in a], np.int64)])
    # uint64 from doubles and int64s: 2^63 and 2^64 - 2048 (the largest double below 2^64)
    a = np.array([0.5, 7.9, 2.0**53, 2.0**63, 2.0**64 - 2048], np.float64)
    fx.case("cast_f64_to_u64", "cast", 'dtype="uint64"', [a], [a.astype(u64)])
    a = np.array([-1, 2**62, -(2**63)], np.int64)
    fx.case("cast_i64_to_u64_wraps", "cast", 'dtype="uint64"', [a], [wrap(a, u64)])
    a = np.array([-1, 70000, 40000], np.int32)
    fx.case("cast_i32_to_u16_wraps", "cast", 'dtype="uint16"', [a], [wrap(a, np.uint16)])
    fx.case("cast_i32_to_i16_wraps", "cast", 'dtype="int16"', [a], [wrap(a, np.int16)])
    fx.case("cast_i32_to_u32_wraps", "cast", 'dtype="uint32"', [a], [wrap(a, np.uint32)])
    a = np.array([2**64 - 1, 2**63 + 5, 6], u64)
    fx.case("cast_u64_to_u32_wraps", "cast", 'dtype="uint32"', [a], [wrap(a, np.uint32)])
    fx.case("cast_u64_to_f32", "cast", 'dtype="float32"', [a], [a.astype(f32)])
    a = np.array([2**64 - 1, 2**63], u64)
    b = np.array([2**63 + 1, 2**64 - 1], u64)
    fx.case("greater_u64_top_bit", "greater", "", [a, b], [np.greater(a, b)])
    fx.case("maximum_u64_bcast", "maximum", "", [a, np.array([2**63 + 7], u64)],
            [np.maximum(a, np.array([2**63 + 7], u64))])

    # ---- float64: computed in double (exact but for libm's last bit: 1e-15)
    f64 = np.float64
    d, e = randn((2, 3, 4), f64), randn((4,), f64)
    fx.case("add_f64_bcast", "add", "", [d, e], [d + e])
    fx.case("divide_f64", "divide", "", [d, e], [d / e])
    fx.case("maximum_f64_nan", "maximum", "", [np.array([np.nan, 1, -2], f64),
                                                np.array([0, np.nan, -3], f64)],
            [np.array([np.nan, np.nan, -2], f64)])
    a = np.array([0.1, -0.1, 1e300, -2.5, np.nan, -np.inf, 5e-324], f64)
    fx.case("abs_f64", "abs", "", [a], [np.abs(a)])
    fx.case("negative_f64", "negative", "", [a], [-a])
    fx.case("sign_f64", "sign", "", [a], [np.sign(a)])
    fx.case("isnan_f64", "isnan", "", [a], [np.isnan(a)])
    fx.case("isinf_f64", "isinf", "", [a], [np.isinf(a)])
    fx.case("exp_f64", "exp", "", [d], [np.exp(d)], rtol=1e-15)
    fx.case("tanh_f64", "tanh", "", [d], [np.tanh(d)], rtol=1e-15)
    fx.case("sigmoid_f64", "sigmoid", "", [d], [1 / (1 + np.exp(-d))], rtol=1e-15)
    fx.case("sqrt_f64", "sqrt", "", [np.abs(d)], [np.sqrt(np.abs(d))])
    fx.case("erf_f64", "erf", "", [d], [np.vectorize(math.erf)(d)], rtol=1e-15)
    fx.case("round_f64", "round", "", [np.array([0.5, 1.5, -2.5, 2.7, -0.2], f64)],
            [np.array([0, 2, -2, 3, -0.0], f64)])
    fx.case("floor_f64", "floor", "", [d], [np.floor(d)])
    fx.case("power_f64", "power", "", [np.abs(d), e], [np.power(np.abs(d), e)], rtol=1e-15)
    fx.case("floor_mod_f64", "floor_mod", "", [d, e], [np.mod(d, e)])
    fx.case("clip_f64", "clip", "a_min=-0.1f, a_max=0.7f", [d], [np.clip(d, -0.1, 0.7)])
    fx.case("less_f64_bcast", "less", "", [d, e], [np.less(d, e)])
    c = np.array([True, False, True, False])
    fx.case("where_f64", "where", "", [c, d, e], [np.where(c, d, e)])
    a = np.array([0.1, 1e300, -2.5, np.nan, 65520.0, 2049.0], f64)
    fx.case("cast_f64_to_f32", "cast", 'dtype="float32"', [a], [a.astype(f32)])
    fx.case("cast_f64_to_f16", "cast", 'dtype="float16"', [a], [a.astype(f16)])
    a = np.array([2.9, -2.9, 1e9, -0.5], f64)
    fx.case("cast_f64_to_i32", "cast", 'dtype="int32"', [a], [a.astype(np.int32)])
    a = np.array([0.1, -3.5, np.inf], f32)
    fx.case("cast_f32_to_f64", "cast", 'dtype="float64"', [a], [a.astype(f64)])
    a = np.array([2**53 + 1, -(2**63), 7], np.int64)
    fx.case("cast_i64_to_f64", "cast", 'dtype="float64"', [a], [a.astype(f64)])

fx.write("gen_ops_elemwise.py")
