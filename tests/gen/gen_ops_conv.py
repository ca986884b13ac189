#!/usr/bin/python3
"""Expected results of nn.conv2d, nn.conv2d_transpose, nn.conv3d and nn.conv3d_transpose
for tests/test_ops_conv.c, computed with numpy.

The convolution here gathers every window of the padded input with index arrays and
contracts it with the weight through einsum, in float64 (a different method from the C
kernel's loops over kernel taps). The transposed convolution contracts the input with
each kernel tap over the channels (einsum) and adds the products into strided slices of
the full result, which it then crops by the padding and extends by output_padding.
The 3-D convs are computed per output cell: the window of the zero-padded input (a 3-D
slice) contracted with the weight (conv3d); the transposed one as a conv3d of the input
dilated by the stride and padded by the dilated kernel less the padding, with the kernel
flipped and its channels swapped (a third method).
Run: /usr/bin/python3 tests/gen/gen_ops_conv.py"""

import numpy as np

from ops_fixture import Fixture, integers, uniform


def pad4(padding):
    """TVM's padding of 1, 2 or 4 values as (top, left, bottom, right)."""
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    return list(padding)


def conv2d(x, w, strides=(1, 1), padding=(0,), dilation=(1, 1), groups=1):
    top, left, bottom, right = pad4(padding)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    w = w.astype(np.float64)
    n, c, h, wd = xp.shape
    o, i, kh, kw = w.shape
    assert c == i * groups and o % groups == 0
    oh = (h - (kh - 1) * dilation[0] - 1) // strides[0] + 1
    ow = (wd - (kw - 1) * dilation[1] - 1) // strides[1] + 1
    rows = (np.arange(oh) * strides[0])[:, None] + (np.arange(kh) * dilation[0])[None, :]
    cols = (np.arange(ow) * strides[1])[:, None] + (np.arange(kw) * dilation[1])[None, :]
    # windows[n, c, oh, kh, ow, kw]
    windows = xp[:, :, rows[:, :, None, None], cols[None, None, :, :]]
    per_group = o // groups
    out = np.empty((n, o, oh, ow))
    for g in range(groups):
        part = windows[:, g * i:(g + 1) * i]
        out[:, g * per_group:(g + 1) * per_group] = np.einsum(
            "niykxl,oikl->noyx", part, w[g * per_group:(g + 1) * per_group])
    return out


def conv2d_transpose(x, w, strides=(1, 1), padding=(0,), dilation=(1, 1), groups=1,
                     output_padding=(0, 0)):
    top, left, bottom, right = pad4(padding)
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    i, og, kh, kw = w.shape
    assert i == c and c % groups == 0
    ic = c // groups
    full_h = (h - 1) * strides[0] + (kh - 1) * dilation[0] + 1
    full_w = (wd - 1) * strides[1] + (kw - 1) * dilation[1] + 1
    oh = full_h - top - bottom + output_padding[0]
    ow = full_w - left - right + output_padding[1]
    # Room for output_padding past the full result.
    full = np.zeros((n, og * groups, full_h + output_padding[0], full_w + output_padding[1]))
    for g in range(groups):
        xg = x[:, g * ic:(g + 1) * ic]
        for y in range(kh):
            for z in range(kw):
                part = np.einsum("nchw,co->nohw", xg, w[g * ic:(g + 1) * ic, :, y, z])
                r0, c0 = y * dilation[0], z * dilation[1]
                full[:, g * og:(g + 1) * og,
                     r0:r0 + (h - 1) * strides[0] + 1:strides[0],
                     c0:c0 + (wd - 1) * strides[1] + 1:strides[1]] += part
    return full[:, :, top:top + oh, left:left + ow]


def pad6(padding):
    """TVM's 3-D padding of 1, 3 or 6 values as (front, top, left, back, bottom, right)."""
    return list(padding) * (6 // len(padding))


def conv3d(x, w, strides=(1, 1, 1), padding=(0,), dilation=(1, 1, 1), groups=1):
    p = pad6(padding)
    n, c, d, h, wd = x.shape
    o, ig = w.shape[:2]
    k = w.shape[2:]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p[0], p[3]), (p[1], p[4]), (p[2], p[5])))
    span = [(k[a] - 1) * dilation[a] + 1 for a in range(3)]
    out = [(xp.shape[a + 2] - span[a]) // strides[a] + 1 for a in range(3)]
    y = np.zeros((n, o) + tuple(out))
    og = o // groups
    wf = w.astype(np.float64)
    for z in range(out[0]):
        for r in range(out[1]):
            for q in range(out[2]):
                at = (z * strides[0], r * strides[1], q * strides[2])
                win = xp[:, :, at[0]:at[0] + span[0]:dilation[0], at[1]:at[1] + span[1]:dilation[1],
                         at[2]:at[2] + span[2]:dilation[2]]
                for g in range(groups):
                    y[:, g * og:(g + 1) * og, z, r, q] = np.einsum(
                        "ncdhw,ocdhw->no", win[:, g * ig:(g + 1) * ig], wf[g * og:(g + 1) * og])
    return y


def conv3d_transpose(x, w, strides=(1, 1, 1), padding=(0,), dilation=(1, 1, 1), groups=1,
                     output_padding=(0, 0, 0)):
    p = pad6(padding)
    n, c, d, h, wd = x.shape
    og = w.shape[1]
    k = w.shape[2:]
    ic = c // groups
    # input dilated by the stride, padded by (dilated kernel - 1 - pad), output_padding after
    dil = np.zeros((n, c) + tuple((x.shape[a + 2] - 1) * strides[a] + 1 for a in range(3)))
    dil[:, :, ::strides[0], ::strides[1], ::strides[2]] = x
    edge = [(k[a] - 1) * dilation[a] for a in range(3)]
    pads = [(edge[a] - p[a], edge[a] - p[a + 3] + output_padding[a]) for a in range(3)]
    # negative pads crop
    for a in range(3):
        lo, hi = pads[a]
        sl = [slice(None)] * 5
        sl[a + 2] = slice(max(0, -lo), dil.shape[a + 2] - max(0, -hi))
        dil = dil[tuple(sl)]
        pw = [(0, 0)] * 5
        pw[a + 2] = (max(0, lo), max(0, hi))
        dil = np.pad(dil, pw)
    # weight (C, O/g, k...) -> per group (O/g, C/g, k...) flipped
    wt = np.concatenate([np.flip(w[g * ic:(g + 1) * ic].astype(np.float64), axis=(2, 3, 4))
                         .transpose(1, 0, 2, 3, 4) for g in range(groups)])
    return conv3d(dil, wt, dilation=dilation, groups=groups)


def main():
    fx = Fixture("conv")
    f32 = dict(rtol=1e-6, atol=1e-6)

    def add(name, x, w, attrs, out_dtype=np.float32, check_shape=None, **tol):
        conv_attrs = {k: v for k, v in attrs.items()
                      if k in ("strides", "padding", "dilation", "groups")}
        want = conv2d(x, w, **conv_attrs).astype(out_dtype)
        if check_shape is not None:
            assert want.shape == check_shape, (name, want.shape)
        fx.case(name, "nn.conv2d", attrs, [x, w], [want], **tol)

    add("conv_defaults", uniform(1, (1, 3, 5, 5)), uniform(2, (4, 3, 3, 3)), {},
        check_shape=(1, 4, 3, 3), **f32)
    add("conv_pad1_one_value", uniform(3, (1, 3, 5, 5)), uniform(4, (4, 3, 3, 3)),
        {"padding": [1], "channels": 4, "kernel_size": [3, 3]},
        check_shape=(1, 4, 5, 5), **f32)
    add("conv_pad_two_values", uniform(5, (1, 2, 4, 5)), uniform(6, (3, 2, 3, 3)),
        {"padding": [1, 2]}, check_shape=(1, 3, 4, 7), **f32)
    add("conv_pad_asymmetric", uniform(7, (1, 2, 6, 7)), uniform(8, (3, 2, 3, 2)),
        {"padding": [1, 0, 2, 3]}, check_shape=(1, 3, 7, 9), **f32)
    add("conv_stride_dilation", uniform(9, (2, 2, 9, 10)), uniform(10, (3, 2, 3, 3)),
        {"strides": [2, 3], "padding": [1, 2, 0, 1], "dilation": [2, 1]},
        check_shape=(2, 3, 3, 4), **f32)
    add("conv_groups2", uniform(11, (1, 4, 6, 6)), uniform(12, (6, 2, 3, 3)),
        {"padding": [1, 1, 1, 1], "groups": 2}, check_shape=(1, 6, 6, 6), **f32)
    add("conv_depthwise", uniform(13, (1, 3, 5, 5)), uniform(14, (3, 1, 3, 3)),
        {"strides": [2, 2], "padding": [1, 1, 1, 1], "groups": 3, "channels": 3},
        check_shape=(1, 3, 3, 3), **f32)
    add("conv_1x1", uniform(15, (2, 5, 4, 3)), uniform(16, (7, 5, 1, 1)), {},
        check_shape=(2, 7, 4, 3), **f32)
    add("conv_kernel_covers_input", uniform(17, (1, 1, 4, 4)), uniform(18, (2, 1, 4, 4)),
        {"kernel_size": [4, 4]}, check_shape=(1, 2, 1, 1), **f32)
    # Strides above 8: ViT's patch embedding (a 16x16 kernel with stride 16, patches that
    # do not overlap), and a 3x3 kernel with stride 12 that reads 3 of 12 stride phases.
    add("conv_patch_stride16", uniform(23, (1, 2, 32, 32)), uniform(24, (3, 2, 16, 16)),
        {"strides": [16, 16]}, check_shape=(1, 3, 2, 2), **f32)
    add("conv_stride12_padded", uniform(25, (2, 2, 27, 30)), uniform(26, (3, 2, 3, 3)),
        {"strides": [12, 12], "padding": [1, 1, 1, 1]}, check_shape=(2, 3, 3, 3), **f32)
    # float16 in, float16 out: numpy's exact float64 result rounded once to float16.
    add("conv_float16", uniform(19, (1, 3, 6, 6), dtype=np.float16),
        uniform(20, (4, 3, 3, 3), dtype=np.float16),
        {"padding": [1, 1, 1, 1], "out_dtype": "float16"}, out_dtype=np.float16,
        check_shape=(1, 4, 6, 6))
    # int8 in, int32 out: sums far outside int8's range, exact.
    add("conv_int8_to_int32", integers(21, (1, 2, 5, 5), -128, 128, np.int8),
        integers(22, (3, 2, 3, 3), -128, 128, np.int8),
        {"strides": [2, 2], "padding": [1, 1, 1, 1], "out_dtype": "int32"},
        out_dtype=np.int32, check_shape=(1, 3, 3, 3))

    def add_t(name, x, w, attrs, check_shape, out_dtype=np.float32, **tol):
        t_attrs = {k: v for k, v in attrs.items()
                   if k in ("strides", "padding", "dilation", "groups", "output_padding")}
        want = conv2d_transpose(x, w, **t_attrs).astype(out_dtype)
        assert want.shape == check_shape, (name, want.shape)
        fx.case(name, "nn.conv2d_transpose", attrs, [x, w], [want], **tol)

    add_t("conv_t_defaults", uniform(31, (1, 3, 4, 5)), uniform(32, (3, 2, 3, 3)), {},
          (1, 2, 6, 7), **f32)
    add_t("conv_t_stride2_pad1", uniform(33, (2, 3, 5, 4)), uniform(34, (3, 5, 3, 3)),
          {"strides": [2, 2], "padding": [1], "channels": 5, "kernel_size": [3, 3]},
          (2, 5, 9, 7), **f32)
    add_t("conv_t_asymmetric", uniform(35, (1, 2, 4, 6)), uniform(36, (2, 3, 2, 4)),
          {"strides": [3, 2], "padding": [0, 2, 1, 1]}, (1, 3, 10, 11), **f32)
    add_t("conv_t_dilation", uniform(37, (1, 1, 3, 3)), uniform(38, (1, 1, 2, 3)),
          {"dilation": [2, 3], "padding": [1, 2]}, (1, 1, 3, 5), **f32)
    add_t("conv_t_output_padding", uniform(39, (1, 3, 3, 3)), uniform(40, (3, 1, 3, 3)),
          {"strides": [3, 2], "output_padding": [1, 1]}, (1, 1, 10, 8), **f32)
    # output_padding with padding: the extra rows lie inside the full result.
    add_t("conv_t_output_padding_cropped", uniform(41, (1, 2, 4, 4)), uniform(42, (2, 2, 3, 3)),
          {"strides": [2, 2], "padding": [1, 1, 1, 1], "output_padding": [1, 0]},
          (1, 2, 8, 7), **f32)
    add_t("conv_t_groups", uniform(43, (1, 6, 3, 4)), uniform(44, (6, 1, 3, 3)),
          {"strides": [2, 1], "padding": [1, 0], "groups": 3, "channels": 3}, (1, 3, 5, 6),
          **f32)
    add_t("conv_t_groups_odd", uniform(45, (2, 3, 4, 3)), uniform(46, (3, 5, 2, 2)),
          {"strides": [2, 3], "groups": 3, "output_padding": [1, 2]}, (2, 15, 9, 10), **f32)
    add_t("conv_t_stride_over_kernel", uniform(47, (1, 2, 3, 3)), uniform(48, (2, 2, 2, 2)),
          {"strides": [4, 3], "dilation": [1, 2]}, (1, 2, 10, 9), **f32)
    add_t("conv_t_float16", uniform(49, (1, 2, 3, 3), dtype=np.float16),
          uniform(50, (2, 3, 3, 3), dtype=np.float16),
          {"strides": [2, 2], "padding": [1], "out_dtype": "float16"}, (1, 3, 5, 5),
          out_dtype=np.float16)
    # A decoder's 2x upsampling (kernel 4, stride 2, padding 1) over more channels.
    add_t("conv_t_decoder_upsample", uniform(53, (1, 16, 6, 5)), uniform(54, (16, 8, 4, 4)),
          {"strides": [2, 2], "padding": [1]}, (1, 8, 12, 10), **f32)
    add_t("conv_t_int8_to_int32", integers(51, (1, 2, 3, 3), -128, 128, np.int8),
          integers(52, (2, 2, 3, 3), -128, 128, np.int8),
          {"strides": [2, 2], "out_dtype": "int32"}, (1, 2, 7, 7), out_dtype=np.int32)

    # float64: summed in double (numpy's einsum in another order: 1e-12)
    f64 = dict(rtol=1e-12, atol=1e-12)
    add("conv_float64", uniform(60, (2, 3, 6, 5), dtype=np.float64),
        uniform(61, (4, 3, 3, 3), dtype=np.float64), {"strides": [2, 1], "padding": [1, 1, 1, 1]},
        out_dtype=np.float64, check_shape=(2, 4, 3, 5), **f64)
    add("conv_float64_depthwise", uniform(62, (1, 3, 5, 5), dtype=np.float64),
        uniform(63, (3, 1, 3, 3), dtype=np.float64), {"padding": [1, 1, 1, 1], "groups": 3},
        out_dtype=np.float64, check_shape=(1, 3, 5, 5), **f64)
    add_t("conv_t_float64", uniform(64, (1, 2, 3, 3), dtype=np.float64),
          uniform(65, (2, 3, 3, 3), dtype=np.float64), {"strides": [2, 2], "padding": [1]},
          (1, 3, 5, 5), out_dtype=np.float64, **f64)
    # float32 in, float64 out: the exact sums, not rounded to float32
    add("conv_float32_to_float64", uniform(66, (1, 2, 4, 4)), uniform(67, (3, 2, 3, 3)),
        {"padding": [1, 1, 1, 1], "out_dtype": "float64"}, out_dtype=np.float64,
        check_shape=(1, 3, 4, 4), **f64)

    def add3(name, op, x, w, attrs, check_shape, **tol):
        args = {k: v for k, v in attrs.items()
                if k in ("strides", "padding", "dilation", "groups", "output_padding")}
        f = conv3d if op == "nn.conv3d" else conv3d_transpose
        want = f(x, w, **args).astype(np.float32)
        assert want.shape == check_shape, (name, want.shape)
        fx.case(name, op, attrs, [x, w], [want], **tol)

    add3("conv3d_defaults", "nn.conv3d", uniform(70, (1, 2, 4, 5, 5)),
         uniform(71, (3, 2, 2, 3, 3)), {}, (1, 3, 3, 3, 3), **f32)
    add3("conv3d_stride_pad_dilation", "nn.conv3d", uniform(72, (2, 2, 6, 7, 6)),
         uniform(73, (4, 2, 2, 3, 2)),
         {"strides": [2, 1, 2], "padding": [1, 0, 1, 0, 2, 1], "dilation": [2, 1, 2]},
         (2, 4, 3, 7, 3), **f32)
    add3("conv3d_groups_pad3", "nn.conv3d", uniform(74, (1, 4, 4, 4, 4)),
         uniform(75, (6, 2, 3, 3, 3)), {"groups": 2, "padding": [1, 0, 1]}, (1, 6, 4, 2, 4),
         **f32)
    add3("conv3d_t_defaults", "nn.conv3d_transpose", uniform(76, (1, 3, 3, 4, 3)),
         uniform(77, (3, 2, 2, 3, 2)), {}, (1, 2, 4, 6, 4), **f32)
    add3("conv3d_t_stride_pad_outpad", "nn.conv3d_transpose", uniform(78, (2, 2, 3, 3, 4)),
         uniform(79, (2, 3, 3, 2, 3)),
         {"strides": [2, 3, 2], "padding": [1, 0, 1, 0, 1, 1], "output_padding": [1, 2, 0],
          "dilation": [1, 2, 1]}, (2, 3, 7, 10, 7), **f32)
    add3("conv3d_t_groups", "nn.conv3d_transpose", uniform(80, (1, 4, 2, 3, 3)),
         uniform(81, (4, 3, 2, 2, 2)), {"groups": 2, "strides": [1, 2, 2], "padding": [1]},
         (1, 6, 1, 4, 4), **f32)
    fx.write("gen_ops_conv.py")


if __name__ == "__main__":
    main()
