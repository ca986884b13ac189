#!/usr/bin/python3
"""Expected results of byocl's index ops (strided_slice, take, gather, broadcast_to,
arange, shape_of, trilu, cumsum, scatter_elements, scatter_nd, gather_nd, topk, one_hot,
nn.pad), computed with numpy, for tests/test_ops_index.c and the LLVM backend
(tests/test_llvm_ops.c). Writes tests/fixtures/ops/index_cases.h.

Relay's strided_slice is numpy slicing; take is np.take (mode "clip"/"wrap"); gather is
np.take_along_axis (ONNX GatherElements; negative indices count from the end); nn.pad is
np.pad (Relay's "edge" and "reflect" are numpy's, "constant" with the scalar pad value)."""

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
# batch_dims b: each of the leading b axes (shared by data and indices) takes with its own
# indices: np.take per batch
def take_batched(d, i, axis, b, mode):
    out = [np.take(d[bi], i[bi], axis=axis - b, mode=mode) for bi in np.ndindex(d.shape[:b])]
    return np.array(out).reshape(d.shape[:axis] + i.shape[b:] + d.shape[axis + 1:])
bidx = np.array([[1, 0, 7], [2, 2, -1], [4, 0, 1]], np.int64)
fx.case("take_batch1_axis2", "take", "axis=2, batch_dims=1", [x, bidx],
        [take_batched(x, bidx, 2, 1, "clip")])
bi32 = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
bidx2 = np.array([[[0, 5], [2, 1], [-1, 3]], [[1, 1], [0, 2], [4, 3]]], np.int32)
fx.case("take_batch_neg_wrap", "take", "axis=2, mode=\"wrap\", batch_dims=-1",
        [bi32, bidx2[..., 0]], [take_batched(bi32, bidx2[..., 0], 2, 1, "wrap")])
fx.case("take_batch2_i32", "take", "axis=2, batch_dims=2", [bi32, bidx2],
        [take_batched(bi32, bidx2, 2, 2, "clip")])
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
# ---- arange(start, stop, step): constant scalars (the result's shape needs them)
def sc(v, dtype):
    return np.array(v, dtype)
fx.case("arange_float", "arange", "", [sc(1.5, f32), sc(4, f32), sc(0.5, f32)],
        [np.arange(1.5, 4, 0.5, dtype=np.float32)], const_args=True)
fx.case("arange_int_down", "arange", "dtype=\"int64\"",
        [sc(5, np.int64), sc(-3, np.int64), sc(-3, np.int64)],
        [np.arange(5, -3, -3, dtype=np.int64)], const_args=True)
fx.case("arange_empty", "arange", "", [sc(2, f32), sc(1, f32), sc(1, f32)],
        [np.arange(2, 1, 1, dtype=np.float32)], const_args=True)

# ---- trilu(data, k) (np.triu / np.tril on the last two axes; k a scalar input)
t = randn((2, 3, 5))
fx.case("trilu_upper", "trilu", "", [t, sc(0, np.int64)], [np.triu(t)])
fx.case("trilu_lower_k1", "trilu", "upper=False", [t, sc(1, np.int32)], [np.tril(t, 1)])
fx.case("trilu_upper_neg", "trilu", "", [t, sc(-1, np.int64)], [np.triu(t, -1)])
ti = np.arange(1, 17, dtype=np.int32).reshape(4, 4)
fx.case("trilu_i32_lower_out", "trilu", "upper=False", [ti, sc(-7, np.int64)],
        [np.tril(ti, -7)])
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


# ---- scatter_elements (ONNX ScatterElements: a loop in index order, each update combined
# by the numpy ufunc in the data's dtype; negative indices count from the end)
REDUCE = {"update": None, "add": np.add, "mul": np.multiply, "min": np.minimum,
          "max": np.maximum}


def scatter_elements(data, idx, upd, axis, reduction="update"):
    out = data.copy()
    f = REDUCE[reduction]
    for i in np.ndindex(idx.shape):
        at = list(i)
        v = int(idx[i])
        at[axis] = v + data.shape[axis] if v < 0 else v
        at = tuple(at)
        out[at] = upd[i] if f is None else f(out[at], upd[i])
    return out


sd = randn((3, 4))
si = np.array([[1, 0, 2, -1], [0, 2, 1, 1]], np.int64)
su = randn((2, 4))
fx.case("scatter_elements_axis0", "scatter_elements", "", [sd, si, su],
        [scatter_elements(sd, si, su, 0)])
si1 = np.array([[1, -1], [0, 0], [3, 3]], np.int32)
su1 = randn((3, 2))
for red in ("add", "mul", "min", "max"):
    fx.case("scatter_elements_%s" % red, "scatter_elements",
            "axis=-1, reduction=\"%s\"" % red, [sd, si1, su1],
            [scatter_elements(sd, si1, su1, 1, red)])
sdi = np.arange(12, dtype=np.int32).reshape(3, 4)
sui = np.array([[-5, 7], [9, -3], [100, 2]], np.int32)
fx.case("scatter_elements_i32_add", "scatter_elements", "axis=1, reduction=\"add\"",
        [sdi, si1, sui], [scatter_elements(sdi, si1, sui, 1, "add")])
sdh = randn((2, 3), f16)
suh = randn((1, 3), f16)
sih = np.array([[1, 0, 1]], np.int64)
fx.case("scatter_elements_f16_add", "scatter_elements", "reduction=\"add\"",
        [sdh, sih, suh], [scatter_elements(sdh, sih, suh, 0, "add")])

# ---- scatter_nd (Relay's layout: the index depth first; ONNX ScatterND's indices are
# these transposed to put it last)


def scatter_nd(data, idx_last, upd, reduction="update"):
    out = data.copy()
    f = REDUCE[reduction]
    for i in np.ndindex(idx_last.shape[:-1]):
        at = tuple(int(v) + data.shape[j] if v < 0 else int(v)
                   for j, v in enumerate(idx_last[i]))
        out[at] = upd[i] if f is None else f(out[at], upd[i])
    return out


def first(idx_last):
    return np.moveaxis(idx_last, -1, 0).copy()


nd = randn((4, 3, 2))
ni = np.array([[[1, 2], [0, 0]], [[3, -1], [1, 2]]], np.int64)  # (2, 2, M=2)
nu = randn((2, 2, 2))
fx.case("scatter_nd_update", "scatter_nd", "", [nd, first(ni), nu], [scatter_nd(nd, ni, nu)])
ni1 = np.array([[0], [2], [0]], np.int32)  # M = 1: whole (3, 2) slices, index 0 twice
nu1 = randn((3, 3, 2))
for red in ("add", "mul", "min", "max"):
    fx.case("scatter_nd_%s" % red, "scatter_nd", "mode=\"%s\"" % red, [nd, first(ni1), nu1],
            [scatter_nd(nd, ni1, nu1, red)])
ndi = np.arange(8, dtype=np.int64).reshape(2, 4)
nii = np.array([[1, 3], [0, 0], [1, -4]], np.int64)
nui = np.array([10, -20, 30], np.int64)
fx.case("scatter_nd_i64_full_index", "scatter_nd", "mode=\"add\"", [ndi, first(nii), nui],
        [scatter_nd(ndi, nii, nui, "add")])

# ---- gather_nd (ONNX GatherND with batch_dims; the indices given index-first)


def gather_nd(data, idx_last, b=0):
    batch = data.shape[:b]
    out = np.empty(idx_last.shape[:-1] + data.shape[b + idx_last.shape[-1]:], data.dtype)
    for i in np.ndindex(idx_last.shape[:-1]):
        at = tuple(i[:b]) + tuple(int(v) + data.shape[b + j] if v < 0 else int(v)
                                  for j, v in enumerate(idx_last[i]))
        out[i] = data[at]
    assert out.shape[:b] == batch
    return out


gd = randn((3, 4, 2))
gi3 = np.array([[[0, 1], [2, -1]], [[1, 3], [2, 0]], [[0, 0], [1, 1]]], np.int64)
fx.case("gather_nd_m2", "gather_nd", "", [gd, first(gi3)], [gather_nd(gd, gi3)])
gi1 = np.array([[2], [0], [-1]], np.int32)
fx.case("gather_nd_m1_index_rank", "gather_nd", "index_rank=1", [gd, first(gi1)],
        [gather_nd(gd, gi1)])
gib = np.array([[[1], [3]], [[0], [0]], [[2], [1]]], np.int64)  # batch 3, 2 positions, M 1
fx.case("gather_nd_batch1", "gather_nd", "batch_dims=1", [gd, first(gib)],
        [gather_nd(gd, gib, 1)])
gdi = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
gii = np.array([[[1, 2, 3]], [[0, 0, -1]]], np.int64)  # batch 2, 1 position, M 2 (+ batch)
fx.case("gather_nd_i32_batch1_scalar_slices", "gather_nd", "batch_dims=1",
        [gdi, first(gii[:, :, :2])], [gather_nd(gdi, gii[:, :, :2], 1)])

# ---- topk (sorted; equal values by position; NaN above every number)


def topk(x, k, axis, ascend=False):
    x = np.moveaxis(x, axis, -1)
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        key = np.where(nan, 0, x).astype(np.float64)
        order = np.lexsort(((key if ascend else -key), (nan if ascend else ~nan)), axis=-1)
    else:
        key = x.astype(object)  # Python integers: uint64 above 2^63 stays exact
        order = np.argsort(key if ascend else -key, axis=-1, kind="stable")
    order = order[..., :k]
    vals = np.take_along_axis(x, order, axis=-1)
    return np.moveaxis(vals, -1, axis).copy(), np.moveaxis(order, -1, axis).copy()


tx = np.round(randn((3, 6, 4)) * 2).astype(f32)  # rounding makes ties
v, i = topk(tx, 3, 1)
fx.case("topk_both_axis1_ties", "topk", "k=3, axis=1", [tx], [v, i], tuple_result=True)
v, i = topk(tx, 2, 2, True)
fx.case("topk_values_ascend", "topk", "k=2, ret_type=\"values\", is_ascend=True", [tx], [v])
tn = randn((5, 3))
tn[1, 0] = tn[3, 0] = np.nan
tn[2, 1] = np.nan
tn[4, 2] = tn[0, 2]
for asc in (False, True):
    v, i = topk(tn, 5, 0, asc)
    fx.case("topk_nan_%s" % ("ascend" if asc else "descend"), "topk",
            "k=0, axis=0, is_ascend=%s" % asc, [tn], [v, i], tuple_result=True)
ti32 = np.array([[5, -1, 5, 7, -1, 0], [2, 2, 2, 2, 2, 2]], np.int32)
v, i = topk(ti32, 4, 1)
fx.case("topk_i32_indices", "topk", "k=4, ret_type=\"indices\", dtype=\"int32\"", [ti32],
        [i.astype(np.int32)])
tu8 = np.array([200, 3, 255, 0, 3], np.uint8)
v, i = topk(tu8, 2, 0, True)
fx.case("topk_u8_ascend", "topk", "k=2, is_ascend=True", [tu8], [v, i], tuple_result=True)
tq = np.array([2**63 + 1, 3, 2**64 - 1, 0, 2**63], np.uint64)  # orders unsigned
v, i = topk(tq, 3, 0)
fx.case("topk_u64", "topk", "k=3", [tq], [v, i], tuple_result=True)
th = randn((4, 5), f16)
v, i = topk(th, 2, 1)
fx.case("topk_f16", "topk", "k=2", [th], [v, i], tuple_result=True)

# ---- float64
xd = randn((3, 5)).astype(np.float64) / 3
fx.case("take_f64", "take", "axis=1", [xd, np.array([4, 0, -1], np.int64)],
        [np.take(xd, [4, 0, 0], axis=1)])  # mode clip: -1 is column 0
fx.case("cumsum_f64", "cumsum", "axis=1", [xd], [np.cumsum(xd, axis=1)])
v, i = topk(xd, 2, 1)
fx.case("topk_f64", "topk", "k=2", [xd], [v, i], tuple_result=True)

# ---- more strided_slice, broadcast_to and take (also run on the opencl target by
# tests/test_cl_codegen.c, with the indices as a region input and as a constant)
x4 = randn((2, 3, 4, 5))
h4 = randn((2, 3, 6, 5), f16)
fx.case("strided_slice_f16_axes", "strided_slice",
        "begin=[-1, 1], end=[-100, 6], strides=[-1, 2], axes=[1, 2]", [h4],
        [h4[:, -1:-100:-1, 1:6:2]])
fx.case("strided_slice_inner_run", "strided_slice", "begin=[1], end=[3], axes=[1]", [x4],
        [x4[:, 1:3]])
fx.case("strided_slice_steps", "strided_slice",
        "begin=[1, 0, 3, 4], end=[2, 3, 0, -6], strides=[1, 2, -1, -3]", [x4],
        [x4[1:2, 0:3:2, 3:0:-1, 4:-6:-3]])
b16 = randn((1, 4), f16)
fx.case("broadcast_to_f16", "broadcast_to", "shape=[3, 2, 4]", [b16],
        [np.broadcast_to(b16, (3, 2, 4)).copy()])
fx.case("take_neg_clip", "take", "axis=-2",
        [x4, np.array([[-1, 5], [0, 3], [2, -4]], np.int32)],
        [np.take(x4, [[-1, 5], [0, 3], [2, -4]], axis=-2, mode="clip")])
ti = np.array([-7, -1, 3, 9], np.int64)
fx.case("take_f16_wrap_neg", "take", "axis=1, mode=\"wrap\"", [h4, ti],
        [np.take(h4, ti, axis=1, mode="wrap")])
tf = np.array([[-61, 2], [119, -1]], np.int64)
fx.case("take_flat_wrap", "take", "mode=\"wrap\"", [x4, tf], [np.take(x4, tf, mode="wrap")])
fx.case("take_fast_axis1", "take", "axis=1, mode=\"fast\"", [x4, np.array([2, 0, 2, 1], np.int32)],
        [x4[:, [2, 0, 2, 1]]])
fx.case("take_f16_scalar_clip", "take", "axis=0", [h4, np.array(-3, np.int64)], [h4[0]])


# ---- one_hot (Relay's: an index outside 0..depth-1, a negative one too, matches nothing;
# also run on the opencl target by tests/test_cl_codegen.c)


def one_hot(idx, on, off, depth, axis, dtype):
    rank = idx.ndim + 1
    at = rank - 1 if axis == -1 else axis
    pos = np.arange(depth).reshape([depth if d == at else 1 for d in range(rank)])
    return np.where(np.expand_dims(idx, at) == pos, on, off).astype(dtype)


oi = np.array([[0, 3, -1], [4, 2, 2]], np.int64)
on1, off0 = np.array(1, f32), np.array(0, f32)
fx.case("one_hot_last", "one_hot", "depth=4", [oi, on1, off0],
        [one_hot(oi, on1, off0, 4, -1, f32)])
oi32 = np.array([4, 0, 2, 5], np.int32)
on, off = np.array(2.5, f32), np.array(-1, f32)
fx.case("one_hot_axis0_i32", "one_hot", "depth=5, axis=0", [oi32, on, off],
        [one_hot(oi32, on, off, 5, 0, f32)])
onh, offh = np.array(0.333, f16), np.array(-7, f16)
fx.case("one_hot_axis1_f16", "one_hot", "depth=3, axis=1, dtype=\"float16\"", [oi, onh, offh],
        [one_hot(oi, onh, offh, 3, 1, f16)])
oni, offi = np.array(9, np.int32), np.array(-2, np.int32)
fx.case("one_hot_int32", "one_hot", "depth=5, axis=1, dtype=\"int32\"", [oi, oni, offi],
        [one_hot(oi, oni, offi, 5, 1, np.int32)])
of = np.array([0, 1.5, 2, -1], f32)
fx.case("one_hot_float_indices", "one_hot", "depth=3", [of, on1, off0],
        [one_hot(of, on1, off0, 3, -1, f32)])


# ---- nn.pad (np.pad; also run on the opencl target by tests/test_cl_codegen.c)


def pad_case(name, a, width, mode, value=None):
    attrs = "pad_width=[%s]" % ", ".join("[%d, %d]" % w for w in width)
    if mode != "constant":
        attrs += ", pad_mode=\"%s\"" % mode
    if value is None:
        value = np.array(0, a.dtype)
    kw = {"constant_values": value.astype(a.dtype)} if mode == "constant" else {}
    fx.case(name, "nn.pad", attrs, [a, value], [np.pad(a, width, mode=mode, **kw)])


p4 = randn((2, 3, 4, 5))
pad_case("pad_constant_nchw", p4, [(0, 0), (0, 0), (1, 1), (2, 2)], "constant",
         np.array(-1.5, f32))
pad_case("pad_edge_nchw", p4, [(0, 0), (1, 0), (2, 1), (0, 3)], "edge")
pad_case("pad_reflect_nchw", p4, [(1, 1), (0, 2), (3, 3), (4, 2)], "reflect")
p1 = randn((6,))
pad_case("pad_constant_1d_wide", p1, [(7, 0)], "constant", np.array(2.5, f32))
pad_case("pad_reflect_1d", p1, [(5, 5)], "reflect")
p3h = randn((3, 4, 2), f16)
pad_case("pad_edge_f16", p3h, [(2, 2), (0, 1), (1, 3)], "edge")
pad_case("pad_constant_f16", p3h, [(1, 0), (1, 1), (0, 2)], "constant", np.array(0.333, f16))
pad_case("pad_reflect_f16", p3h, [(2, 1), (3, 0), (1, 1)], "reflect")
pad_case("pad_constant_f64_value_f32", randn((2, 3), np.float64), [(1, 2), (2, 1)],
         "constant", np.array(7.25, f32))
pi = rng.integers(-50, 50, (3, 4)).astype(np.int32)
pad_case("pad_reflect_i32", pi, [(2, 1), (1, 3)], "reflect")
pad_case("pad_constant_i64", pi.astype(np.int64), [(0, 1), (2, 0)], "constant",
         np.array(-9, np.int64))
pad_case("pad_nothing", p1, [(0, 0)], "edge")

fx.write("gen_ops_index.py")
