#!/usr/bin/python3
"""Expected results of byocl's transform ops (reshape, transpose, nn.depth_to_space,
nn.space_to_depth, concatenate, split, squeeze, expand_dims) and reductions (sum, mean, prod, max,
min, argmax, argmin, all, any, variance), computed
with numpy, for tests/test_ops_transform.c. Writes tests/fixtures/ops/transform_cases.h.

TVM's reshape codes map to numpy's as: 0 copies the input dim at that position, -1 is
numpy's -1. TVM's integer mean keeps the dtype and truncates toward zero; numpy returns
float64, so the generator truncates that (the values are small enough to be exact)."""

import numpy as np

from ops_fixture import Fixture

rng = np.random.default_rng(7)
f32, f16 = np.float32, np.float16
fx = Fixture("transform")


def randn(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


x234 = randn((2, 3, 4))

# ---- reshape (0 copies the input dim, -1 is inferred)
fx.case("reshape_0_minus1", "reshape", "newshape=[0, -1]", [x234], [x234.reshape(2, 12)])
fx.case("reshape_minus1_middle", "reshape", "newshape=[4, -1, 2]", [x234], [x234.reshape(4, 3, 2)])
fx.case("reshape_flat", "reshape", "newshape=[-1]", [x234], [x234.reshape(-1)])
fx.case("reshape_0_0", "reshape", "newshape=[0, 0, 2, 2]", [x234], [x234.reshape(2, 3, 2, 2)])
fx.case("reshape_to_scalar", "reshape", "newshape=[]", [np.array([5], np.int64)],
        [np.array(5, np.int64)])
i8 = rng.integers(-128, 128, (6,)).astype(np.int8)
fx.case("reshape_i8", "reshape", "newshape=[3, 2]", [i8], [i8.reshape(3, 2)])

# ---- transpose
fx.case("transpose_reverse", "transpose", "", [x234], [np.transpose(x234)])
fx.case("transpose_negative_axes", "transpose", "axes=[-1, 0, -2]", [x234],
        [np.transpose(x234, (2, 0, 1))])
x4 = rng.integers(0, 100, (2, 1, 3, 2)).astype(np.int8)
fx.case("transpose_rank4_i8", "transpose", "axes=[0, 2, 3, 1]", [x4],
        [np.transpose(x4, (0, 2, 3, 1))])
h = randn((3, 2), f16)
fx.case("transpose_f16", "transpose", "axes=[1, 0]", [h], [h.T.copy()])

# ---- concatenate: one Tuple argument
a, b, c = randn((2, 1, 3)), randn((2, 2, 3)), randn((2, 3, 3))
fx.case("concatenate_axis1_three", "concatenate", "axis=1", [a, b, c],
        [np.concatenate([a, b, c], axis=1)], tuple_arg=True)
a, b = rng.integers(-9, 9, (2, 2)).astype(np.int64), rng.integers(-9, 9, (2, 3)).astype(np.int64)
fx.case("concatenate_negative_axis", "concatenate", "axis=-1", [a, b],
        [np.concatenate([a, b], axis=-1)], tuple_arg=True)
a, b = randn((1, 3)), randn((2, 3))
fx.case("concatenate_axis0_default", "concatenate", "", [a, b], [np.concatenate([a, b])],
        tuple_arg=True)
fx.case("concatenate_one", "concatenate", "axis=0", [a], [a.copy()], tuple_arg=True)

# ---- split: an INT is a number of sections, a list the indices where pieces start
x = randn((2, 6))
fx.case("split_sections", "split", "indices_or_sections=3, axis=1", [x],
        np.split(x, 3, axis=1), tuple_result=True)
x = randn((2, 3, 5))
fx.case("split_indices", "split", "indices_or_sections=[1, 4], axis=-1", [x],
        np.split(x, [1, 4], axis=-1), tuple_result=True)
x = randn((4, 2), f16)
fx.case("split_default_axis_f16", "split", "indices_or_sections=[3]", [x], np.split(x, [3]),
        tuple_result=True)
x = rng.integers(0, 2, (3, 2)).astype(bool)
fx.case("split_one_section_bool", "split", "indices_or_sections=1", [x], [x.copy()],
        tuple_result=True)

# ---- squeeze
x = randn((1, 3, 1, 2))
fx.case("squeeze_all", "squeeze", "", [x], [np.squeeze(x)])
fx.case("squeeze_one", "squeeze", "axis=[2]", [x], [np.squeeze(x, axis=2)])
fx.case("squeeze_negative", "squeeze", "axis=[-4, -2]", [x], [np.squeeze(x, axis=(0, 2))])
fx.case("squeeze_none_of_size_1", "squeeze", "", [x234], [x234.copy()])

# ---- expand_dims
x = randn((2, 3))
fx.case("expand_dims_two", "expand_dims", "axis=1, num_newaxis=2", [x],
        [x.reshape(2, 1, 1, 3)])
fx.case("expand_dims_negative", "expand_dims", "axis=-1", [x], [np.expand_dims(x, -1)])
fx.case("expand_dims_front", "expand_dims", "axis=-3", [x], [np.expand_dims(x, 0)])
fx.case("expand_dims_scalar", "expand_dims", "axis=0", [np.array(3, np.int32)],
        [np.array([3], np.int32)])
fx.case("expand_dims_none", "expand_dims", "axis=0, num_newaxis=0", [x], [x.copy()])


# ---- mean (float32 sums in double in byocl; numpy's float64 mean rounded is the truth)
def mean(x, axis, keepdims=False):
    return np.mean(x.astype(np.float64), axis=axis, keepdims=keepdims).astype(x.dtype)


x = randn((2, 3, 4))
fx.case("mean_all", "mean", "", [x], [mean(x, None)], rtol=1e-6)
fx.case("mean_axis1_keepdims", "mean", "axis=[1], keepdims=True", [x],
        [mean(x, 1, keepdims=True)], rtol=1e-6)
fx.case("mean_int_axis", "mean", "axis=-1", [x], [mean(x, -1)], rtol=1e-6)
fx.case("mean_exclude", "mean", "axis=[0, 2], exclude=True", [x], [mean(x, 1)], rtol=1e-6)
fx.case("mean_exclude_keepdims", "mean", "axis=[1], exclude=True, keepdims=True", [x],
        [mean(x, (0, 2), keepdims=True)], rtol=1e-6)
fx.case("mean_all_keepdims", "mean", "keepdims=True", [x], [mean(x, None, keepdims=True)],
        rtol=1e-6)
xi = np.array([[1, 2, 4], [-1, -2, -4], [7, 7, 7]], np.int32)
fx.case("mean_i32_truncates", "mean", "axis=1", [xi],
        [np.trunc(np.mean(xi.astype(np.float64), axis=1)).astype(np.int32)])
h = randn((4, 5), f16)
fx.case("mean_f16", "mean", "axis=[0]", [h], [mean(h, 0)], rtol=1e-3)

# ---- sum, prod, max, min: float32 reduces in double in byocl, so numpy's float64 result
# rounded is the truth; integers wrap in their dtype.
def reduce(fn, x, axis, keepdims=False):
    wide = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
    return np.asarray(fn(wide, axis=axis, keepdims=keepdims)).astype(x.dtype)


x = randn((2, 3, 4))
fx.case("sum_all", "sum", "", [x], [reduce(np.sum, x, None)], rtol=1e-6)
fx.case("sum_axis1_keepdims", "sum", "axis=[1], keepdims=True", [x],
        [reduce(np.sum, x, 1, keepdims=True)], rtol=1e-6)
fx.case("sum_exclude", "sum", "axis=[0, 2], exclude=True", [x], [reduce(np.sum, x, 1)],
        rtol=1e-6)
fx.case("prod_axis_neg", "prod", "axis=-1", [x], [reduce(np.prod, x, -1)], rtol=1e-6)
fx.case("max_axes_02", "max", "axis=[0, 2]", [x], [reduce(np.max, x, (0, 2))])
fx.case("min_all_keepdims", "min", "keepdims=True", [x], [reduce(np.min, x, None, True)])
fx.case("max_exclude_keepdims", "max", "axis=[1], exclude=True, keepdims=True", [x],
        [reduce(np.max, x, (0, 2), True)])
xi = rng.integers(-50, 50, (3, 4)).astype(np.int32)
fx.case("sum_i32", "sum", "axis=0", [xi], [reduce(np.sum, xi, 0)])
fx.case("prod_i32", "prod", "axis=1", [xi], [reduce(np.prod, xi, 1)])
fx.case("max_i32", "max", "axis=1", [xi], [reduce(np.max, xi, 1)])
fx.case("min_i32", "min", "axis=0, keepdims=True", [xi], [reduce(np.min, xi, 0, True)])
xb = rng.integers(-128, 128, (4, 5)).astype(np.int8)
fx.case("sum_i8_wraps", "sum", "axis=1", [xb], [reduce(np.sum, xb, 1)])
xu = rng.integers(0, 256, (4, 5)).astype(np.uint8)
fx.case("max_u8", "max", "axis=0", [xu], [reduce(np.max, xu, 0)])
# uint64 above 2^63 orders unsigned; its mean sums (wrapping) and divides unsigned
xq = np.array([[2**63 + 5, 3, 2**64 - 1], [7, 2**63, 2**53 + 1]], np.uint64)
fx.case("max_u64", "max", "axis=1", [xq], [np.max(xq, axis=1)])
fx.case("min_u64", "min", "axis=0", [xq], [np.min(xq, axis=0)])
fx.case("argmax_u64", "argmax", "axis=1", [xq], [np.argmax(xq, axis=1).astype(np.int32)])
xm = np.array([[2**63 + 4, 2**62], [9, 2**64 - 3]], np.uint64)
fx.case("mean_u64", "mean", "axis=1", [xm],
        [np.array([(int(r[0]) + int(r[1])) % 2**64 // 2 for r in xm], np.uint64)])
xs = np.array([[-(2**15), 32767, 5], [40000, 0, 65535]], np.int64)
fx.case("max_i16", "max", "axis=1", [xs[:1].astype(np.int16)], [np.max(xs[:1], axis=1).astype(np.int16)])
fx.case("min_u16", "min", "axis=1", [xs[1:].astype(np.uint16)], [np.min(xs[1:], axis=1).astype(np.uint16)])
xl = rng.integers(-10**12, 10**12, (3, 3)).astype(np.int64)
fx.case("min_i64", "min", "", [xl], [reduce(np.min, xl, None)])
h = randn((4, 5), f16)
fx.case("sum_f16", "sum", "axis=[0]", [h], [reduce(np.sum, h, 0)], rtol=1e-3)
fx.case("max_f16", "max", "axis=1", [h], [reduce(np.max, h, 1)])
# empty reductions: sum 0, prod 1 (numpy's identities)
e = np.zeros((0, 3), f32)
fx.case("sum_empty_axis", "sum", "axis=0", [e], [np.sum(e, axis=0)])
fx.case("prod_empty_axis", "prod", "axis=0", [e], [np.prod(e, axis=0)])


# ---- argmax, argmin: int32 positions within the reduced axes (C order), first on a tie
def arg(fn, x, axis, keepdims=False, last=False):
    if axis is None:
        r = fn(x.reshape(-1)[::-1]) if last else fn(x.reshape(-1))
        r = x.size - 1 - r if last else r
        return np.array(r, np.int32).reshape((1,) * x.ndim if keepdims else ())
    r = fn(np.flip(x, axis), axis=axis) if last else fn(x, axis=axis)
    r = x.shape[axis] - 1 - r if last else r
    return (np.expand_dims(r, axis) if keepdims else r).astype(np.int32)


x = randn((3, 4, 5))
fx.case("argmax_axis1", "argmax", "axis=[1]", [x], [arg(np.argmax, x, 1)])
fx.case("argmin_axis_neg_keepdims", "argmin", "axis=-1, keepdims=True", [x],
        [arg(np.argmin, x, -1, True)])
fx.case("argmax_all", "argmax", "", [x], [arg(np.argmax, x, None)])
fx.case("argmin_all_keepdims", "argmin", "keepdims=True", [x], [arg(np.argmin, x, None, True)])
fx.case("argmax_exclude", "argmax", "axis=[0, 2], exclude=True", [x], [arg(np.argmax, x, 1)])
ties = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [-1, -5, -5, 4]], np.int32)
fx.case("argmax_ties_first", "argmax", "axis=1", [ties], [arg(np.argmax, ties, 1)])
fx.case("argmax_ties_last", "argmax", "axis=1, select_last_index=True", [ties],
        [arg(np.argmax, ties, 1, last=True)])
fx.case("argmin_ties_first", "argmin", "axis=1", [ties], [arg(np.argmin, ties, 1)])
fx.case("argmin_ties_last", "argmin", "axis=[1], select_last_index=True", [ties],
        [arg(np.argmin, ties, 1, last=True)])
hf = np.array([[0.5, 0.25, 0.5], [-1, -1, 3]], f16)
fx.case("argmax_f16_last", "argmax", "axis=0, select_last_index=True", [hf.T.copy()],
        [arg(np.argmax, hf.T, 0, last=True)])
fx.case("argmin_u8", "argmin", "axis=0", [xu], [arg(np.argmin, xu, 0)])

# ---- a Relay text pipeline run by the reference executor (tests/test_ops_transform.c):
# split -> tuple of pieces (reordered) -> concatenate -> transpose -> mean -> expand_dims
x = randn((2, 6))
y = randn((2, 1))
p0, p1, p2 = np.split(x, [2, 5], axis=1)
cat = np.concatenate([p2, y, p0], axis=1)
out = np.expand_dims(mean(np.transpose(cat), 0, keepdims=True), 0)
fx.array("pipeline_x", x)
fx.array("pipeline_y", y)
fx.array("pipeline_out", out)
fx.array("pipeline_piece1", p1)

# ---- float64: reductions in double (numpy's pairwise sums in another order: 1e-14),
# layout ops exact
xd = randn((2, 3, 4)).astype(np.float64) * 1.1
fx.case("sum_f64", "sum", "axis=[0, 2]", [xd], [np.sum(xd, axis=(0, 2))], rtol=1e-14)
fx.case("mean_f64", "mean", "axis=1, keepdims=True", [xd], [np.mean(xd, 1, keepdims=True)],
        rtol=1e-14)
fx.case("prod_f64", "prod", "axis=-1", [xd], [np.prod(xd, -1)], rtol=1e-14)
fx.case("max_f64", "max", "axis=[1]", [xd], [np.max(xd, 1)])
fx.case("argmax_f64", "argmax", "axis=2", [xd], [arg(np.argmax, xd, 2)])
fx.case("transpose_f64", "transpose", "axes=[2, 0, 1]", [xd], [np.transpose(xd, (2, 0, 1))])
fx.case("concatenate_f64", "concatenate", "axis=1", [xd, xd[:, :1]],
        [np.concatenate([xd, xd[:, :1]], axis=1)], tuple_arg=True)

# ---- argmax, argmin on floats with ties and NaN (the opencl target runs these: first
# index on a tie unless select_last_index; the first NaN wins, as numpy's)
tf = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [-1, -5, -5, 4]], f32)
fx.case("argmax_f32_ties_first", "argmax", "axis=1", [tf], [arg(np.argmax, tf, 1)])
fx.case("argmax_f32_ties_last_keepdims", "argmax",
        "axis=[1], keepdims=True, select_last_index=True", [tf],
        [arg(np.argmax, tf, 1, True, last=True)])
fx.case("argmin_f32_ties_first_axis0", "argmin", "axis=0", [tf], [arg(np.argmin, tf, 0)])
fx.case("argmin_f32_ties_last", "argmin", "axis=-1, select_last_index=True", [tf],
        [arg(np.argmin, tf, -1, last=True)])
tn = np.array([[1, np.nan, 5, np.nan], [-np.inf, -np.inf, 2, 1], [np.inf, 0, np.nan, np.inf]],
              f32)
fx.case("argmax_f32_nan_inf", "argmax", "axis=1", [tn], [arg(np.argmax, tn, 1)])
fx.case("argmin_f32_nan_inf", "argmin", "axis=1", [tn], [arg(np.argmin, tn, 1)])
t4 = np.arange(2 * 3 * 4 * 5, dtype=f32).reshape(2, 3, 4, 5) % 7
fx.case("argmax_f32_two_axes_apart", "argmax", "axis=[1, 3]", [t4],
        [np.argmax(np.moveaxis(t4, 1, 2).reshape(2, 4, 15), axis=2).astype(np.int32)])
fx.case("argmin_f16_keepdims_all", "argmin", "keepdims=True", [t4.astype(f16)],
        [arg(np.argmin, t4, None, True)])

# ---- nn.depth_to_space and nn.space_to_depth, element by element from the ONNX spec's
# formulas (not its reshape/transpose definition, which byocl follows): output row
# h * b + i, column w * b + j comes from channel (i * b + j) * C' + c (DCR) or
# c * b * b + i * b + j (CRD); space_to_depth is DCR's inverse.
def depth_to_space(x, b, mode):
    n, c, h, w = x.shape
    co = c // (b * b)
    y = np.empty((n, co, h * b, w * b), x.dtype)
    for i in range(b):
        for j in range(b):
            for k in range(co):
                ch = (i * b + j) * co + k if mode == "DCR" else k * b * b + i * b + j
                y[:, k, i::b, j::b] = x[:, ch]
    return y


def space_to_depth(x, b):
    n, c, h, w = x.shape
    y = np.empty((n, c * b * b, h // b, w // b), x.dtype)
    for i in range(b):
        for j in range(b):
            y[:, (i * b + j) * c:(i * b + j + 1) * c] = x[:, :, i::b, j::b]
    return y


x = randn((2, 8, 2, 3))
fx.case("depth_to_space_dcr", "nn.depth_to_space", "block_size=2", [x],
        [depth_to_space(x, 2, "DCR")])
fx.case("depth_to_space_crd", "nn.depth_to_space", 'block_size=2, mode="CRD"', [x],
        [depth_to_space(x, 2, "CRD")])
x = randn((1, 18, 2, 2), f16)
fx.case("depth_to_space_b3_f16", "nn.depth_to_space", 'block_size=3, layout="NCHW", mode="DCR"',
        [x], [depth_to_space(x, 3, "DCR")])
fx.case("depth_to_space_b3_crd_f16", "nn.depth_to_space", 'block_size=3, mode="CRD"', [x],
        [depth_to_space(x, 3, "CRD")])
xi = rng.integers(-128, 128, (1, 12, 3, 1)).astype(np.int8)
fx.case("depth_to_space_crd_i8", "nn.depth_to_space", 'block_size=2, mode="CRD"', [xi],
        [depth_to_space(xi, 2, "CRD")])
xi = rng.integers(-9, 9, (2, 3, 2, 2)).astype(np.int64)
fx.case("depth_to_space_b1_i64", "nn.depth_to_space", "block_size=1", [xi], [xi.copy()])
x = randn((2, 3, 4, 6))
fx.case("space_to_depth", "nn.space_to_depth", "block_size=2", [x], [space_to_depth(x, 2)])
x = randn((1, 2, 3, 6), f16)
fx.case("space_to_depth_b3_f16", "nn.space_to_depth", 'block_size=3, layout="NCHW"', [x],
        [space_to_depth(x, 3)])
xi = rng.integers(-1000, 1000, (1, 2, 4, 4)).astype(np.int32)
fx.case("space_to_depth_i32", "nn.space_to_depth", "block_size=4", [xi], [space_to_depth(xi, 4)])
xu = rng.integers(0, 256, (1, 1, 2, 2)).astype(np.uint8)
fx.case("space_to_depth_u8", "nn.space_to_depth", "block_size=2", [xu], [space_to_depth(xu, 2)])

# ---- all, any: bool in, bool out (over no elements: True and False, numpy's identities)
bl = rng.random((3, 4, 5)) < 0.8
fx.case("all_axis1", "all", "axis=[1]", [bl], [np.all(bl, 1)])
fx.case("any_axis_neg_keepdims", "any", "axis=-1, keepdims=True", [~bl],
        [np.any(~bl, -1, keepdims=True)])
fx.case("all_all", "all", "", [bl], [np.all(bl)])
fx.case("any_exclude", "any", "axis=[0, 2], exclude=True", [bl & ~bl], [np.any(bl & ~bl, 1)])
fx.case("all_axes_02_keepdims", "all", "axis=[0, 2], keepdims=True", [bl],
        [np.all(bl, (0, 2), keepdims=True)])
fx.case("any_all", "any", "", [bl], [np.any(bl)])
fx.case("all_empty_axis", "all", "axis=1", [np.zeros((2, 0), bool)], [np.ones(2, bool)])
fx.case("any_empty_axis", "any", "axis=1", [np.zeros((2, 0), bool)], [np.zeros(2, bool)])


# ---- variance(data, mean): TVM's op, as relay.variance builds it: the mean argument is
# mean(data, axis, keepdims=True, exclude); the result is sum((data - mean)^2) / count
# (count - 1 with unbiased), the sum in double as the reference computes it. numpy's var
# with ddof gives the expected values, from float64 data.
def var_axes(x, axis, exclude):
    if axis is None:
        return tuple(range(x.ndim))
    axis = (axis,) if isinstance(axis, int) else tuple(a % x.ndim for a in axis)
    return tuple(d for d in range(x.ndim) if (d in axis) != exclude)


def variance(name, x, attrs, axis=None, keepdims=False, exclude=False, unbiased=False, rtol=1e-6,
             mean_dtype=None):
    axes = var_axes(x, axis, exclude)
    wide = x.astype(np.float64)
    m = np.mean(wide, axis=axes, keepdims=True).astype(x.dtype)
    # the kernel subtracts the mean as given (rounded to the dtype), so numpy does too
    d = wide - m.astype(np.float64)
    v = np.sum(d * d, axis=axes, keepdims=keepdims) / (np.prod([x.shape[a] for a in axes]) -
                                                         unbiased)
    fx.case(name, "variance", attrs, [x, m], [np.asarray(v).astype(x.dtype)], rtol=rtol)


x = randn((3, 4, 5))
variance("variance_axis1", x, "axis=[1]", axis=[1])
variance("variance_all", x, "", None)
variance("variance_axis_neg_keepdims_unbiased", x, "axis=-1, keepdims=True, unbiased=True",
         axis=[-1], keepdims=True, unbiased=True)
variance("variance_exclude", x, "axis=[1], exclude=True", axis=[1], exclude=True)
variance("variance_axes_02_keepdims", x, "axis=[0, 2], keepdims=True", axis=[0, 2], keepdims=True)
variance("variance_f16", randn((2, 6, 3), f16), "axis=1, unbiased=True", axis=[1], unbiased=True,
         rtol=1e-3)
variance("variance_f64", randn((4, 7)).astype(np.float64), "axis=[1]", axis=[1], rtol=1e-14)
# large mean, small spread: a one-pass sum of squares in float32 would lose every digit
big = (1e4 + randn((2, 1000)) * 1e-2).astype(f32)
variance("variance_large_mean", big, "axis=1", axis=[1], rtol=1e-5)
# the mean broadcast along a kept axis too (TVM checks only its rank)
xm = randn((2, 3, 4))
mb = np.full((1, 3, 1), 0.25, f32)
dm = xm.astype(np.float64) - mb
fx.case("variance_mean_broadcast", "variance", "axis=[2], unbiased=True", [xm, mb],
        [(np.sum(dm * dm, axis=2) / 3).astype(f32)], rtol=1e-6)


fx.write("gen_ops_transform.py")
