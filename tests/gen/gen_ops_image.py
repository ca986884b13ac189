#!/usr/bin/python3
"""Expected results of byocl's image op (image.resize2d), computed with numpy, for
tests/test_ops_image.c and the LLVM backend (tests/test_llvm_ops.c). Writes
tests/fixtures/ops/image_cases.h.

The reference is ONNX Resize's own, written out here in numpy after the ONNX spec (its
backend test's interpolate_1d_with_x): per axis, the coordinate transformation gives
x_ori; the n nearest positions of the edge-padded axis around it (ties to the smaller one,
so the fraction lies in (0, 1]) get the nearest, linear or cubic coefficients; with
exclude_outside the coefficients of padded positions become 0 and the rest are
renormalized; with tf_crop_and_resize, an x_ori outside [0, n_in - 1] gives
extrapolation_value. The 2-D result interpolates the rows of each interpolated column set,
in float64."""

import math

import numpy as np

from ops_fixture import Fixture, uniform, integers

f32, f16 = np.float32, np.float16
fx = Fixture("image")


def nearest_coeffs(ratio, mode):
    if ratio == int(ratio):
        return np.array([0.0, 1.0])
    prefer = {"round_prefer_floor": ratio <= 0.5, "round_prefer_ceil": ratio < 0.5,
              "floor": True, "ceil": False}[mode]
    return np.array([1.0, 0.0]) if prefer else np.array([0.0, 1.0])


def linear_coeffs(ratio, _):
    return np.array([1 - ratio, ratio])


def cubic_coeffs(ratio, a):
    def k(d):  # Keys's cubic convolution kernel at distance d
        d = abs(d)
        if d <= 1:
            return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
        if d < 2:
            return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a
        return 0.0
    return np.array([k(ratio + 1), k(ratio), k(1 - ratio), k(2 - ratio)])


def source(x, mode, scale, length, n_in, crop):
    if mode == "tf_crop_and_resize":
        start, end = crop
        if length == 1:
            return (end - start) * (n_in - 1) / 2 + start * (n_in - 1)
        return x * (end - start) * (n_in - 1) / (length - 1) + start * (n_in - 1)
    if mode == "align_corners":
        return 0.0 if length == 1 else x * (n_in - 1) / (length - 1)
    if mode == "asymmetric":
        return x / scale
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if length > 1 else 0.0
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    return (x + 0.5) / scale - 0.5


def interpolate_1d(data, x, coeffs_of, arg, mode, scale, length, exclude, crop, fill):
    n_in = len(data)
    x_ori = source(x, mode, scale, length, n_in, crop)
    if mode == "tf_crop_and_resize" and (x_ori < 0 or x_ori > n_in - 1):
        return fill
    ratio = 1.0 if x_ori == math.floor(x_ori) else x_ori - math.floor(x_ori)
    coeffs = coeffs_of(ratio, arg).astype(np.float64)
    n = len(coeffs)
    pad = (n + 1) // 2
    padded = np.pad(data, pad, mode="edge")
    # the n positions of the padded axis nearest to x_ori, ties to the smaller
    idx = sorted(sorted(range(len(padded)), key=lambda i: (abs(x_ori + pad - i), i))[:n])
    if exclude:
        for k, i in enumerate(idx):
            if i - pad < 0 or i - pad >= n_in:
                coeffs[k] = 0
        coeffs /= coeffs.sum()
    return float(np.dot(coeffs, padded[idx]))


def resize(x, size, method, mode="half_pixel", rounding="round_prefer_floor", a=-0.75,
           exclude=False, scales=None, out_dtype=None, roi=(0, 0, 1, 1), fill=0.0):
    """ONNX Resize of an NCHW x over H and W to `size`; scales: the ratios ONNX divides
    by (default size / input size); roi (start_h, start_w, end_h, end_w) and fill
    (extrapolation_value): tf_crop_and_resize's."""
    coeffs_of, arg = {"nearest": (nearest_coeffs, rounding), "linear": (linear_coeffs, None),
                      "cubic": (cubic_coeffs, a)}[method]
    n, c, h, w = x.shape
    sh, sw = scales if scales else (size[0] / h, size[1] / w)
    lh, lw = (sh * h, sw * w) if scales else size
    xd = x.astype(np.float64)
    out = np.zeros((n, c, size[0], size[1]))
    for p in np.ndindex(n, c):
        cols = np.array([[interpolate_1d(xd[p][r], j, coeffs_of, arg, mode, sw, lw, exclude,
                                         (roi[1], roi[3]), fill)
                          for j in range(size[1])] for r in range(h)])
        for i in range(size[0]):
            for j in range(size[1]):
                out[p][i, j] = interpolate_1d(cols[:, j], i, coeffs_of, arg, mode, sh, lh,
                                              exclude, (roi[0], roi[2]), fill)
    return out.astype(out_dtype or x.dtype)


def attrs(size, method, mode, rounding="", a=-0.5, exclude=0, scales=None, out_dtype="",
          roi=None, fill=0.0):
    text = 'size=[%d, %d], method="%s", coordinate_transformation_mode="%s"' % (
        size[0], size[1], method, mode)
    if roi:
        text += ", roi=[%s]" % ", ".join("%rf" % float(v) for v in roi)
    if fill:
        text += ", extrapolation_value=%rf" % fill
    if rounding:
        text += ', rounding_method="%s"' % rounding
    if a != -0.5:
        text += ", cubic_alpha=%rf" % a
    if exclude:
        text += ", cubic_exclude=1"
    if out_dtype:
        text += ', out_dtype="%s"' % out_dtype
    if scales:
        text += ", scale_h=%rf, scale_w=%rf" % scales
    return text


def case(name, x, size, method, mode, rounding="", a=-0.75, exclude=0, scales=None,
         out_dtype="", tol=1e-6, roi=None, fill=0.0):
    onnx_method = "nearest" if method == "nearest_neighbor" else method
    # byocl's "" rounding is TVM's default: round (half away from zero) with align_corners,
    # else floor; "round" away from zero agrees with round_prefer_ceil on x >= -0.5.
    onnx_rounding = {"": "round_prefer_ceil" if mode == "align_corners" else "floor",
                     "round": "round_prefer_ceil"}.get(rounding, rounding)
    want = resize(x, size, onnx_method, mode, onnx_rounding, a, bool(exclude), scales,
                  out_dtype or None, roi or (0, 0, 0, 0), fill)
    exact = method == "nearest_neighbor"
    fx.case(name, "image.resize2d", attrs(size, method, mode, rounding, a, exclude, scales,
                                          out_dtype, roi, fill),
            [x], [want], rtol=0.0 if exact else tol, atol=0.0 if exact else tol)


x = uniform(101, (1, 2, 3, 4))
case("nearest_up_half_pixel", x, (5, 7), "nearest_neighbor", "half_pixel", "round_prefer_floor")
case("nearest_down_asym_scales", uniform(102, (2, 1, 5, 6)), (3, 3), "nearest_neighbor",
     "asymmetric", "floor", scales=(0.6, 0.6))
case("nearest_align_default", x, (6, 5), "nearest_neighbor", "align_corners")
case("nearest_i8_tf_ceil", integers(103, (1, 3, 4, 4), -100, 100, np.int8), (3, 2),
     "nearest_neighbor", "tf_half_pixel_for_nn", "ceil")
case("nearest_prefer_ceil_asym", x, (8, 8), "nearest_neighbor", "asymmetric",
     "round_prefer_ceil")
case("nearest_round_f16", uniform(104, (1, 1, 3, 3), dtype=f16), (4, 7), "nearest_neighbor",
     "half_pixel", "round")
case("nearest_to_i32", uniform(105, (1, 2, 2, 3), -50, 50), (3, 3), "nearest_neighbor",
     "half_pixel", "round_prefer_floor", out_dtype="int32")
case("linear_up_half_pixel", uniform(106, (2, 3, 4, 5)), (7, 9), "linear", "half_pixel")
case("linear_down_align", uniform(107, (1, 2, 6, 5)), (4, 3), "linear", "align_corners")
case("linear_pytorch_one_col", uniform(108, (1, 1, 4, 4)), (3, 1), "linear", "pytorch_half_pixel")
case("linear_asym_scales", uniform(109, (1, 2, 4, 5)), (2, 3), "linear", "asymmetric",
     scales=(0.6, 0.7))
case("linear_half_pixel_scales", uniform(110, (1, 1, 2, 4)), (1, 2), "linear", "half_pixel",
     scales=(0.6, 0.6))
case("cubic_up_half_pixel", uniform(111, (1, 2, 4, 4)), (8, 7), "cubic", "half_pixel", a=-0.75)
case("cubic_down_exclude", uniform(112, (1, 1, 5, 6)), (3, 4), "cubic", "half_pixel", a=-0.5,
     exclude=1)
case("cubic_align_corners", uniform(113, (2, 1, 4, 4)), (6, 3), "cubic", "align_corners")
case("cubic_asym_scales", uniform(114, (1, 1, 4, 4)), (3, 3), "cubic", "asymmetric",
     scales=(0.8, 0.8))
case("linear_f16", uniform(115, (1, 2, 3, 3), dtype=f16), (5, 4), "linear", "half_pixel",
     tol=2e-3)
# More float cases for the opencl target (tests/test_cl_codegen.c): every coordinate
# transformation on floats, cubic in float16, a larger down-scale.
case("nearest_tf_half_pixel_ceil_f32", uniform(116, (1, 2, 5, 4)), (3, 7), "nearest_neighbor",
     "tf_half_pixel_for_nn", "ceil")
case("nearest_pytorch_prefer_floor_down", uniform(117, (1, 1, 9, 8)), (4, 3),
     "nearest_neighbor", "pytorch_half_pixel", "round_prefer_floor")
case("linear_pytorch_up", uniform(118, (1, 3, 4, 3)), (8, 6), "linear", "pytorch_half_pixel")
case("linear_tf_half_pixel_down", uniform(119, (2, 1, 9, 10)), (4, 3), "linear",
     "tf_half_pixel_for_nn")
case("cubic_down_half_pixel", uniform(120, (1, 2, 12, 11)), (5, 4), "cubic", "half_pixel")
case("cubic_pytorch_up_exclude", uniform(121, (1, 1, 3, 4)), (7, 9), "cubic",
     "pytorch_half_pixel", a=-0.5, exclude=1)
case("cubic_f16", uniform(122, (1, 2, 4, 3), dtype=f16), (6, 5), "cubic", "align_corners",
     tol=2e-3)

# tf_crop_and_resize: the crop of ONNX's backend test on other data, crops starting and
# ending outside the input (extrapolation_value there), one output row, an int8 nearest
# crop, a crop with scales (the coordinates spread over scale * in).
case("crop_linear", uniform(123, (1, 2, 4, 4)), (3, 3), "linear", "tf_crop_and_resize",
     roi=(0.4, 0.6, 1.2, 1.7), fill=10.0)
case("crop_nearest_edges", uniform(124, (2, 1, 5, 6)), (6, 5), "nearest_neighbor",
     "tf_crop_and_resize", "round_prefer_ceil", roi=(-0.2, 0.1, 0.8, 1.3), fill=-2.5)
case("crop_cubic", uniform(125, (1, 2, 6, 5)), (4, 7), "cubic", "tf_crop_and_resize",
     a=-0.5, roi=(0.2, -0.15, 0.9, 0.8), fill=0.25)
case("crop_cubic_exclude_inside", uniform(126, (1, 1, 7, 7)), (5, 5), "cubic",
     "tf_crop_and_resize", exclude=1, roi=(0.1, 0.05, 0.95, 0.6))
case("crop_one_row", uniform(127, (1, 3, 4, 5)), (1, 3), "linear", "tf_crop_and_resize",
     roi=(0.3, 0.0, 0.7, 1.0))
case("crop_i8_nearest", integers(128, (1, 2, 4, 4), -100, 100, np.int8), (3, 4),
     "nearest_neighbor", "tf_crop_and_resize", roi=(0.0, -0.5, 1.0, 0.9), fill=7.0)
case("crop_linear_scales", uniform(129, (1, 1, 5, 4)), (4, 3), "linear", "tf_crop_and_resize",
     scales=(0.8, 0.75), roi=(0.1, 0.2, 1.1, 0.9), fill=-1.0)

fx.write("gen_ops_image.py")
