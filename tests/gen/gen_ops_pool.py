#!/usr/bin/python3
"""Expected results of nn.max_pool2d, nn.avg_pool2d and nn.global_avg_pool2d for
tests/test_ops_pool.c, computed with numpy.

Pooling here gathers every window of a zero-padded copy of the input with index arrays,
next to two masks gathered the same way (input cells; cells inside the padded image), and
reduces with masked max / sums in float64: a different method from the C kernel's loops.
Output sizes follow TVM's formula; with ceil_mode the last window must start inside the
input or the top/left padding. Run: /usr/bin/python3 tests/gen/gen_ops_pool.py"""

import numpy as np

from gen_ops_conv import pad4, pad6
from ops_fixture import Fixture, integers, uniform


def out_len(n, k, s, d, before, after, ceil_mode):
    span = n + before + after - ((k - 1) * d + 1)
    if not ceil_mode:
        return span // s + 1
    o = -(-span // s) + 1
    if (o - 1) * s >= n + before:  # that window would start in the bottom/right padding
        o -= 1
    return o


def pool2d(x, kind, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0,),
           ceil_mode=False, count_include_pad=False):
    top, left, bottom, right = pad4(padding)
    n, c, h, w = x.shape
    oh = out_len(h, pool_size[0], strides[0], dilation[0], top, bottom, ceil_mode)
    ow = out_len(w, pool_size[1], strides[1], dilation[1], left, right, ceil_mode)
    # Extra cells past the padding for windows that ceil_mode lets hang over it.
    need_h = (oh - 1) * strides[0] + (pool_size[0] - 1) * dilation[0] + 1
    need_w = (ow - 1) * strides[1] + (pool_size[1] - 1) * dilation[1] + 1
    extra_h = max(0, need_h - (h + top + bottom))
    extra_w = max(0, need_w - (w + left + right))
    spread = ((top, bottom + extra_h), (left, right + extra_w))
    values = np.pad(x.astype(np.float64), ((0, 0), (0, 0)) + spread)
    is_input = np.pad(np.ones((h, w)), spread)
    in_padded = np.pad(np.ones((h + top + bottom, w + left + right)),
                       ((0, extra_h), (0, extra_w)))
    rows = (np.arange(oh) * strides[0])[:, None] + (np.arange(pool_size[0]) * dilation[0])[None]
    cols = (np.arange(ow) * strides[1])[:, None] + (np.arange(pool_size[1]) * dilation[1])[None]
    r, q = rows[:, :, None, None], cols[None, None, :, :]
    win = values[:, :, r, q]          # n, c, oh, kh, ow, kw
    win_input = is_input[r, q]        # oh, kh, ow, kw
    win_padded = in_padded[r, q]
    if kind == "max":
        return np.where(win_input > 0, win, -np.inf).max(axis=(3, 5))
    total = (win * win_input).sum(axis=(3, 5))
    count = (win_padded if count_include_pad else win_input).sum(axis=(1, 3))
    return total / count


def pool3d(x, kind, pool_size=(1, 1, 1), strides=(1, 1, 1), dilation=(1, 1, 1), padding=(0,),
           ceil_mode=False, count_include_pad=False):
    """Per output cell over explicit window coordinates (a third method)."""
    p = pad6(padding)
    sp = x.shape[2:]
    out = [out_len(sp[a], pool_size[a], strides[a], dilation[a], p[a], p[a + 3], ceil_mode)
           for a in range(3)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for o in np.ndindex(*out):
        coords = [o[a] * strides[a] - p[a] + np.arange(pool_size[a]) * dilation[a]
                  for a in range(3)]
        inside = [c[(c >= 0) & (c < sp[a])] for a, c in enumerate(coords)]
        padded = np.prod([np.sum(c < sp[a] + p[a + 3]) for a, c in enumerate(coords)])
        win = x[:, :, inside[0]][:, :, :, inside[1]][:, :, :, :, inside[2]].astype(np.float64)
        if kind == "max":
            y[(slice(None), slice(None)) + o] = win.max(axis=(2, 3, 4))
        else:
            count = padded if count_include_pad else win[0, 0].size
            y[(slice(None), slice(None)) + o] = win.sum(axis=(2, 3, 4)) / count
    return y


def main():
    fx = Fixture("pool")
    f32 = dict(rtol=1e-6, atol=1e-6)

    def add(name, op, x, attrs, out_dtype=np.float32, check_shape=None, **tol):
        kind = "max" if op == "nn.max_pool2d" else "avg"
        args = {k: v for k, v in attrs.items() if k not in ("layout",)}
        want = pool2d(x, kind, **args)
        if out_dtype != np.float32 and not np.issubdtype(out_dtype, np.floating):
            want = np.trunc(want)  # integer averages truncate toward zero
        want = want.astype(out_dtype)
        if check_shape is not None:
            assert want.shape == check_shape, (name, want.shape)
        fx.case(name, op, attrs, [x], [want], **tol)

    mp, ap = "nn.max_pool2d", "nn.avg_pool2d"
    add("max_2x2_stride2", mp, uniform(30, (1, 2, 4, 4)),
        {"pool_size": [2, 2], "strides": [2, 2]}, check_shape=(1, 2, 2, 2), **f32)
    # All inputs negative: a padding cell taken as 0 would win.
    add("max_padding_never_wins", mp, uniform(31, (1, 1, 4, 5), -2.0, -1.0),
        {"pool_size": [3, 3], "padding": [1]}, check_shape=(1, 1, 4, 5), **f32)
    add("max_ceil_off", mp, uniform(32, (1, 1, 5, 5)),
        {"pool_size": [2, 2], "strides": [2, 2]}, check_shape=(1, 1, 2, 2), **f32)
    add("max_ceil_on", mp, uniform(32, (1, 1, 5, 5)),
        {"pool_size": [2, 2], "strides": [2, 2], "ceil_mode": True},
        check_shape=(1, 1, 3, 3), **f32)
    # ceil would add a 4th window starting in the bottom/right padding: dropped.
    add("max_ceil_drops_padding_window", mp, uniform(33, (1, 1, 5, 5)),
        {"pool_size": [2, 2], "strides": [2, 2], "padding": [1, 1], "ceil_mode": True},
        check_shape=(1, 1, 3, 3), **f32)
    add("max_stride_dilation_ceil", mp, uniform(34, (2, 2, 7, 8)),
        {"pool_size": [2, 3], "strides": [2, 2], "dilation": [2, 1],
         "padding": [0, 1, 1, 0], "ceil_mode": True}, check_shape=(2, 2, 4, 4), **f32)
    add("max_int8_padded", mp, integers(35, (1, 2, 3, 4), -128, -1, np.int8),
        {"pool_size": [2, 2], "padding": [1, 1, 1, 1]}, out_dtype=np.int8,
        check_shape=(1, 2, 4, 5))

    add("avg_exclude_pad", ap, uniform(36, (1, 2, 5, 5)),
        {"pool_size": [3, 3], "strides": [2, 2], "padding": [1]},
        check_shape=(1, 2, 3, 3), **f32)
    add("avg_include_pad", ap, uniform(36, (1, 2, 5, 5)),
        {"pool_size": [3, 3], "strides": [2, 2], "padding": [1], "count_include_pad": True},
        check_shape=(1, 2, 3, 3), **f32)
    # The last row/column of windows hangs past the padded image; those cells never count.
    add("avg_ceil_include_pad", ap, uniform(37, (1, 1, 6, 6)),
        {"pool_size": [3, 3], "strides": [2, 2], "padding": [1, 1, 1, 1],
         "ceil_mode": True, "count_include_pad": True}, check_shape=(1, 1, 4, 4), **f32)
    add("avg_ceil_exclude_pad", ap, uniform(37, (1, 1, 6, 6)),
        {"pool_size": [3, 3], "strides": [2, 2], "padding": [1, 1, 1, 1],
         "ceil_mode": True}, check_shape=(1, 1, 4, 4), **f32)
    add("avg_ceil_off", ap, uniform(37, (1, 1, 6, 6)),
        {"pool_size": [3, 3], "strides": [2, 2], "padding": [1, 1, 1, 1],
         "count_include_pad": True}, check_shape=(1, 1, 3, 3), **f32)
    add("avg_dilation_asymmetric", ap, uniform(38, (1, 3, 6, 7)),
        {"pool_size": [2, 2], "strides": [1, 2], "dilation": [2, 2],
         "padding": [2, 0, 1, 3], "count_include_pad": True}, check_shape=(1, 3, 7, 4), **f32)
    add("avg_int32_truncates", ap, integers(39, (1, 1, 4, 4), -50, 50, np.int32),
        {"pool_size": [3, 3], "padding": [1]}, out_dtype=np.int32, check_shape=(1, 1, 4, 4))

    x = uniform(40, (2, 3, 4, 5))
    fx.case("global_avg", "nn.global_avg_pool2d", {}, [x],
            [x.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float32)], **f32)
    h = uniform(41, (1, 2, 3, 3), dtype=np.float16)
    fx.case("global_avg_float16", "nn.global_avg_pool2d", {}, [h],
            [h.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float16)])

    # float64: maxima exact, averages in double
    f64 = dict(rtol=1e-14, atol=1e-14)
    add("max_float64", mp, uniform(42, (1, 2, 5, 5), dtype=np.float64),
        {"pool_size": [3, 3], "strides": [2, 2], "padding": [1, 1, 1, 1]},
        out_dtype=np.float64, check_shape=(1, 2, 3, 3))
    add("avg_float64", ap, uniform(43, (1, 2, 5, 5), dtype=np.float64),
        {"pool_size": [2, 2], "padding": [1, 1, 1, 1]}, out_dtype=np.float64,
        check_shape=(1, 2, 6, 6), **f64)
    x = uniform(44, (2, 3, 3, 4), dtype=np.float64)
    fx.case("global_avg_float64", "nn.global_avg_pool2d", {}, [x],
            [x.mean(axis=(2, 3), keepdims=True)], **f64)

    def add3(name, op, x, attrs, check_shape):
        kind = "max" if op == "nn.max_pool3d" else "avg"
        want = pool3d(x, kind, **attrs).astype(np.float32)
        assert want.shape == check_shape, (name, want.shape)
        fx.case(name, op, attrs, [x], [want], **f32)

    add3("max3d_default", "nn.max_pool3d", uniform(80, (1, 2, 4, 4, 4)),
         {"pool_size": [2, 2, 2]}, (1, 2, 3, 3, 3))
    add3("max3d_stride_pad_dilation_ceil", "nn.max_pool3d", uniform(81, (2, 1, 5, 6, 7), -2.0, -1.0),
         {"pool_size": [2, 3, 2], "strides": [2, 2, 3], "dilation": [1, 2, 1],
          "padding": [1, 0, 1, 0, 1, 1], "ceil_mode": True}, (2, 1, 3, 2, 3))
    add3("avg3d_exclude_pad", "nn.avg_pool3d", uniform(82, (1, 2, 5, 5, 4)),
         {"pool_size": [3, 3, 2], "strides": [2, 2, 1], "padding": [1]}, (1, 2, 3, 3, 5))
    add3("avg3d_include_pad_ceil", "nn.avg_pool3d", uniform(83, (1, 1, 6, 5, 6)),
         {"pool_size": [2, 3, 3], "strides": [2, 2, 2], "padding": [0, 1, 1],
          "ceil_mode": True, "count_include_pad": True}, (1, 1, 3, 3, 4))
    fx.write("gen_ops_pool.py")


if __name__ == "__main__":
    main()
