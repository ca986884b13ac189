#!/usr/bin/python3
"""Expected results of byocl's index ops (strided_slice, take, gather, broadcast_to,
arange, shape_of, trilu, cumsum), computed with numpy, for tests/test_ops_index.c and the LLVM backend
(tests/test_llvm_ops.c). Writes tests/fixtures/ops/index_cases.h.

Relay's strided_slice is numpy slicing; take is np.take (mode "clip"/"wrap"); gather is
np.take_along_axis (ONNX GatherElements; negative indices count from the end)."""

import numpy as np

from ops_fixture import Fixture

rng = np.random.default_rng(17)
f32, f16 = np.float32, np.float16
fx = Fixture("index")


def randn(shape, dtype=f32):
    return rng.standard_normal(shape).astype(dtype)


x = randn((3, 4, 5))
# ---- strided_slice
fx.case("strided_slice_basic", "strided_slice", "begin=[1, 0], end=[3, 4], strides=[1, 2]",
        [x], [x[1:3, 0:4:2]])
fx.case("strided_slice_axes_negative", "strided_slice",
        "begin=[-1, 4], end=[-9223372036854775807, 0], strides=[-1, -2], axes=[2, 1]",
        [x], [x[:, 4:0:-2, -1::-1]])
fx.case("strided_slice_clamped", "strided_slice", "begin=[-100], end=[100]", [x], [x[-100:100]])
fx.case("strided_slice_empty", "strided_slice", "begin=[2], end=[1]", [x], [x[2:1]])
i64 = np.arange(12, dtype=np.int64).reshape(3, 4)
fx.case("strided_slice_i64", "strided_slice", "begin=[1], end=[3], axes=[1]", [i64],
        [i64[:, 1:3]])
# ---- take
idx = np.array([[0, 2], [4, -1]], np.int64)
fx.case("take_axis1_clip", "take", "axis=1", [x, np.array([3, 0, 7, -2], np.int32)],
        [np.take(x, [3, 0, 7, -2], axis=1, mode="clip")])
fx.case("take_axis2_wrap", "take", "axis=2, mode=\"wrap\"", [x, idx],
        [np.take(x, idx, axis=2, mode="wrap")])
fx.case("take_flat", "take", "", [x, np.array(7, np.int64)], [np.take(x, 7)])
h = randn((4, 2), f16)
fx.case("take_f16_fast", "take", "axis=0, mode=\"fast\"", [h, np.array([3, 1], np.int64)],
        [h[[3, 1]]])
# ---- gather (take_along_axis, negative indices from the end)
gi = rng.integers(-4, 4, (3, 2, 5)).astype(np.int64)
fx.case("gather_axis1", "gather", "axis=1", [x, gi],
        [np.take_along_axis(x, np.where(gi < 0, gi + 4, gi), axis=1)])
gi2 = rng.integers(0, 3, (2, 4, 5)).astype(np.int32)
fx.case("gather_axis0_smaller", "gather", "axis=-3", [x, gi2],
        [np.take_along_axis(x[:, :4, :], gi2, axis=0)])
# ---- broadcast_to
b = randn((3, 1))
fx.case("broadcast_to_rank_up", "broadcast_to", "shape=[2, 3, 4]", [b],
        [np.broadcast_to(b, (2, 3, 4)).copy()])
bi = np.array([1, 2, 3], np.int8)
fx.case("broadcast_to_i8", "broadcast_to", "shape=[2, 3]", [bi],
        [np.broadcast_to(bi, (2, 3)).copy()])
# ---- shape_of (its one input's values are never read)
fx.case("shape_of_i64", "shape_of", "dtype=\"int64\"", [x], [np.array(x.shape, np.int64)])
fx.case("shape_of_i32", "shape_of", "", [b], [np.array(b.shape, np.int32)])
# ---- arange: an op of no arguments; the kernels see attributes only
fx.case("arange_float", "arange", "start=1.5f, stop=4f, step=0.5f", [],
        [np.arange(1.5, 4, 0.5, dtype=np.float32)])
fx.case("arange_int_down", "arange", "start=5f, stop=-3f, step=-3f, dtype=\"int64\"", [],
        [np.arange(5, -3, -3, dtype=np.int64)])

# ---- trilu (np.triu / np.tril on the last two axes; k an attribute)
t = randn((2, 3, 5))
fx.case("trilu_upper", "trilu", "", [t], [np.triu(t)])
fx.case("trilu_lower_k1", "trilu", "upper=False, k=1", [t], [np.tril(t, 1)])
fx.case("trilu_upper_neg", "trilu", "k=-1", [t], [np.triu(t, -1)])
ti = np.arange(1, 17, dtype=np.int32).reshape(4, 4)
fx.case("trilu_i32_lower_out", "trilu", "upper=False, k=-7", [ti], [np.tril(ti, -7)])
# ---- cumsum (np.cumsum in float64, as the kernels sum floats; exclusive: shifted by one;
# reverse: on the flipped axis)
c = randn((3, 4, 2))


def cumsum(x, axis, exclusive=False, reverse=False):
    x = np.flip(x, axis) if reverse else x
    s = np.cumsum(x.astype(np.float64), axis=axis)
    if exclusive:
        s = np.delete(np.insert(s, 0, 0, axis=axis), -1, axis=axis)
    return (np.flip(s, axis) if reverse else s).astype(np.float32)


fx.case("cumsum_axis1", "cumsum", "axis=1", [c], [cumsum(c, 1)])
fx.case("cumsum_flat", "cumsum", "", [c], [cumsum(c.reshape(-1), 0)])
fx.case("cumsum_exclusive", "cumsum", "axis=0, exclusive=True", [c], [cumsum(c, 0, True)])
fx.case("cumsum_reverse_exclusive", "cumsum", "axis=-1, exclusive=True, reverse=True", [c],
        [cumsum(c, 2, True, True)])
ci = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
fx.case("cumsum_i32_to_i64", "cumsum", "axis=1, dtype=\"int64\", reverse=True", [ci],
        [np.flip(np.cumsum(np.flip(ci, 1), axis=1, dtype=np.int64), 1)])

fx.write("gen_ops_index.py")
