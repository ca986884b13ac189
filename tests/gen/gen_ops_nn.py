#!/usr/bin/python3
"""Expected results of nn.dense, nn.batch_matmul, nn.batch_norm, nn.layer_norm, nn.bias_add, nn.relu,
nn.leaky_relu, nn.softmax, nn.log_softmax and nn.batch_flatten for tests/test_ops_nn.c, computed with numpy in float64
(broadcasting, tensordot, logaddexp) and rounded once to the output dtype.
Run: /usr/bin/python3 tests/gen/gen_ops_nn.py"""

import numpy as np

from ops_fixture import Fixture, integers, uniform


def along(v, axis, rank):
    """A 1-D vector shaped to broadcast along `axis` of a rank-`rank` array."""
    shape = [1] * rank
    shape[axis] = -1
    return np.asarray(v, dtype=np.float64).reshape(shape)


def batch_norm(x, gamma, beta, mean, var, axis=1, epsilon=1e-5, center=True, scale=True):
    r = x.ndim
    y = (x.astype(np.float64) - along(mean, axis, r)) / np.sqrt(along(var, axis, r) + epsilon)
    if scale:
        y = y * along(gamma, axis, r)
    if center:
        y = y + along(beta, axis, r)
    return y


def softmax(x, axis=-1):
    x = x.astype(np.float64)
    return np.exp(x - np.logaddexp.reduce(x, axis=axis, keepdims=True))


def log_softmax(x, axis=-1):
    x = x.astype(np.float64)
    return x - np.logaddexp.reduce(x, axis=axis, keepdims=True)


def layer_norm(x, gamma, beta, axis=-1, epsilon=1e-5, center=True, scale=True):
    x = x.astype(np.float64)
    r = x.ndim
    mean = x.mean(axis=axis, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axis, keepdims=True)
    y = (x - mean) / np.sqrt(var + epsilon)
    if scale:
        y = y * along(gamma, axis, r)
    if center:
        y = y + along(beta, axis, r)
    return y


def main():
    fx = Fixture("nn")
    f32 = dict(rtol=1e-6, atol=1e-6)

    # dense: data [..., K] . weight[units, K]^T
    def dense(x, w):
        return np.tensordot(x.astype(np.float64), w.astype(np.float64), axes=([-1], [1]))

    x, w = uniform(50, (3, 5)), uniform(51, (4, 5))
    fx.case("dense_2d", "nn.dense", {"units": 4}, [x, w], [dense(x, w).astype(np.float32)], **f32)
    x, w = uniform(52, (2, 3, 5)), uniform(53, (6, 5))
    fx.case("dense_3d", "nn.dense", {}, [x, w], [dense(x, w).astype(np.float32)], **f32)
    x, w = integers(54, (2, 7), -128, 128, np.int8), integers(55, (3, 7), -128, 128, np.int8)
    fx.case("dense_int8_to_int32", "nn.dense", {"out_dtype": "int32"}, [x, w],
            [dense(x, w).astype(np.int32)])
    x, w = uniform(56, (2, 6), dtype=np.float16), uniform(57, (3, 6), dtype=np.float16)
    fx.case("dense_float16", "nn.dense", {}, [x, w], [dense(x, w).astype(np.float16)])

    # batch_matmul: a [B, M, K] ([B, K, M] transposed) . b [B, N, K] ([B, K, N]); B of 1
    # broadcasts
    def bmm(a, b, transpose_a=False, transpose_b=True):
        a, b = a.astype(np.float64), b.astype(np.float64)
        return np.matmul(a.transpose(0, 2, 1) if transpose_a else a,
                         b.transpose(0, 2, 1) if transpose_b else b)

    def bmm_case(name, a, b, attrs, dtype=np.float32, **tol):
        flags = {k: v for k, v in attrs.items() if k.startswith("transpose")}
        fx.case(name, "nn.batch_matmul", attrs, [a, b], [bmm(a, b, **flags).astype(dtype)], **tol)

    bmm_case("batch_matmul", uniform(60, (3, 4, 5)), uniform(61, (3, 6, 5)), {}, **f32)
    bmm_case("batch_matmul_b_plain", uniform(62, (2, 3, 4)), uniform(63, (2, 4, 5)),
             {"transpose_b": False}, **f32)
    bmm_case("batch_matmul_a_transposed", uniform(64, (2, 4, 3)), uniform(65, (2, 5, 4)),
             {"transpose_a": True}, **f32)
    bmm_case("batch_matmul_both_transposed", uniform(66, (2, 4, 3)), uniform(67, (2, 4, 5)),
             {"transpose_a": True, "transpose_b": False}, **f32)
    bmm_case("batch_matmul_broadcast_a", uniform(68, (1, 3, 4)), uniform(69, (5, 2, 4)), {},
             **f32)
    bmm_case("batch_matmul_broadcast_b", uniform(70, (4, 3, 6)), uniform(71, (1, 6, 2)),
             {"transpose_b": False}, **f32)
    bmm_case("batch_matmul_int8_to_int32",
             integers(72, (2, 3, 7), -128, 128, np.int8), integers(73, (2, 4, 7), -128, 128, np.int8),
             {"out_dtype": "int32"}, dtype=np.int32)
    bmm_case("batch_matmul_float16", uniform(74, (2, 3, 6), dtype=np.float16),
             uniform(75, (2, 2, 6), dtype=np.float16), {}, dtype=np.float16)
    # Tile tails on the opencl target (16 columns x 4 rows per work-item): 7 x 13 times
    # 13 x 5; 9 rows of tensor_a transposed against 37 columns of a plain tensor_b
    # that has two matrices; float16 (computed in float there: within a rounding); float16
    # products summed into float32.
    bmm_case("batch_matmul_7x13x5", uniform(76, (3, 7, 13)), uniform(77, (3, 5, 13)), {},
             **f32)
    bmm_case("batch_matmul_tails_broadcast_a", uniform(78, (1, 11, 9)),
             uniform(79, (2, 11, 37)), {"transpose_a": True, "transpose_b": False}, **f32)
    bmm_case("batch_matmul_float16_tails", uniform(80, (2, 7, 13), dtype=np.float16),
             uniform(81, (2, 13, 19), dtype=np.float16), {"transpose_b": False},
             dtype=np.float16, rtol=1e-3, atol=1e-3)
    bmm_case("batch_matmul_float16_to_float32", uniform(82, (3, 5, 6), dtype=np.float16),
             uniform(83, (1, 9, 6), dtype=np.float16), {"out_dtype": "float32"}, **f32)

    # batch_norm: (out, moving_mean, moving_var)
    def bn_case(name, shape, axis, attrs, seed):
        c = shape[axis]
        data = uniform(seed, shape, -2.0, 2.0)
        gamma, beta = uniform(seed + 1, (c,), 0.5, 1.5), uniform(seed + 2, (c,))
        mean, var = uniform(seed + 3, (c,), -0.5, 0.5), uniform(seed + 4, (c,), 0.25, 2.0)
        out = batch_norm(data, gamma, beta, mean, var, axis=axis,
                         **{k: v for k, v in attrs.items() if k != "axis"})
        fx.case(name, "nn.batch_norm", attrs, [data, gamma, beta, mean, var],
                [out.astype(np.float32), mean, var], tuple_result=True, **f32)

    bn_case("batch_norm_defaults", (2, 3, 4, 4), 1, {}, 60)
    bn_case("batch_norm_eps_center_off", (1, 4, 3, 3), 1,
            {"epsilon": 0.001, "center": False}, 65)
    bn_case("batch_norm_scale_off", (1, 4, 3, 3), 1, {"scale": False}, 70)
    bn_case("batch_norm_center_scale_off", (1, 4, 3, 3), 1, {"center": False, "scale": False}, 75)
    bn_case("batch_norm_axis_last", (2, 5, 3), 2, {"axis": -1}, 80)

    # bias_add
    def bias_case(name, x, b, axis, attrs, out_dtype=np.float32, **tol):
        want = x.astype(np.float64) + along(b, axis, x.ndim)
        fx.case(name, "nn.bias_add", attrs, [x, b], [want.astype(out_dtype)], **tol)

    bias_case("bias_add_axis1", uniform(90, (2, 3, 4, 4)), uniform(91, (3,)), 1, {}, **f32)
    bias_case("bias_add_axis1_dense", uniform(92, (4, 6)), uniform(93, (6,)), 1, {"axis": 1},
              **f32)
    bias_case("bias_add_axis_minus1", uniform(94, (2, 3, 5)), uniform(95, (5,)), -1,
              {"axis": -1}, **f32)
    bias_case("bias_add_int32", integers(96, (2, 3, 2), -100, 100, np.int32),
              integers(97, (3,), -100, 100, np.int32), 1, {}, out_dtype=np.int32)

    # relu, leaky_relu
    x = uniform(100, (2, 3, 4))
    fx.case("relu_float32", "nn.relu", {}, [x], [np.maximum(x, 0)])
    x8 = integers(101, (3, 5), -128, 128, np.int8)
    fx.case("relu_int8", "nn.relu", {}, [x8], [np.maximum(x8, 0).astype(np.int8)])
    fx.case("leaky_relu_default", "nn.leaky_relu", {}, [x],
            [np.where(x > 0, x, 0.25 * x.astype(np.float64)).astype(np.float32)], **f32)
    fx.case("leaky_relu_alpha", "nn.leaky_relu", {"alpha": 0.1}, [x],
            [np.where(x > 0, x, 0.1 * x.astype(np.float64)).astype(np.float32)], **f32)
    xi = integers(102, (2, 6), -20, 20, np.int32)
    fx.case("leaky_relu_int32_truncates", "nn.leaky_relu", {"alpha": 0.3}, [xi],
            [np.trunc(np.where(xi > 0, xi, 0.3 * xi)).astype(np.int32)])

    # softmax
    x = uniform(110, (2, 5), -3.0, 3.0)
    fx.case("softmax_last_axis", "nn.softmax", {}, [x], [softmax(x).astype(np.float32)], **f32)
    x = uniform(111, (2, 3, 4), -3.0, 3.0)
    fx.case("softmax_axis1", "nn.softmax", {"axis": 1}, [x],
            [softmax(x, axis=1).astype(np.float32)], **f32)
    x = uniform(112, (3, 4), 900.0, 1000.0)  # exp() alone would overflow
    fx.case("softmax_large_values", "nn.softmax", {"axis": 0}, [x],
            [softmax(x, axis=0).astype(np.float32)], **f32)
    x = uniform(113, (2, 4), -2.0, 2.0, dtype=np.float16)
    fx.case("softmax_float16", "nn.softmax", {}, [x], [softmax(x).astype(np.float16)])

    # log_softmax
    x = uniform(114, (2, 5), -3.0, 3.0)
    fx.case("log_softmax_last_axis", "nn.log_softmax", {}, [x],
            [log_softmax(x).astype(np.float32)], **f32)
    x = uniform(115, (2, 3, 4, 3), -3.0, 3.0)
    fx.case("log_softmax_axis1", "nn.log_softmax", {"axis": 1}, [x],
            [log_softmax(x, axis=1).astype(np.float32)], **f32)
    # exp() alone would overflow, and the softmax of the smallest underflows to 0 (its log
    # to -inf), where x - max - log(sum) stays finite
    x = uniform(116, (3, 6), -1000.0, 1000.0)
    fx.case("log_softmax_large_values", "nn.log_softmax", {"axis": 0}, [x],
            [log_softmax(x, axis=0).astype(np.float32)], **f32)
    x = uniform(117, (4, 7), -2.0, 2.0, dtype=np.float16)
    fx.case("log_softmax_float16", "nn.log_softmax", {"axis": -1}, [x],
            [log_softmax(x).astype(np.float16)])

    # layer_norm
    def ln_case(name, shape, axis, attrs, seed, dtype=np.float32, lo=-2.0, hi=2.0, **tol):
        x = uniform(seed, shape, lo, hi, dtype=dtype)
        n = shape[axis]
        gamma = uniform(seed + 1, (n,), 0.5, 1.5, dtype=dtype)
        beta = uniform(seed + 2, (n,), -1.0, 1.0, dtype=dtype)
        want = layer_norm(x, gamma, beta, axis, **{k: v for k, v in attrs.items() if k != "axis"})
        fx.case(name, "nn.layer_norm", attrs, [x, gamma, beta], [want.astype(dtype)], **tol)

    ln_case("layer_norm_last_axis", (2, 3, 8), -1, {}, 140, **f32)
    ln_case("layer_norm_2d", (4, 33), 1, {"axis": 1, "epsilon": 0.01}, 143, **f32)
    ln_case("layer_norm_axis1_4d", (2, 5, 3, 4), 1, {"axis": 1}, 146, **f32)
    ln_case("layer_norm_center_off", (3, 6), -1, {"center": False}, 149, **f32)
    ln_case("layer_norm_scale_off", (3, 6), -1, {"scale": False, "epsilon": 0.0}, 152, **f32)
    # a large common offset: E[x^2] - mean^2 would lose every digit in float
    ln_case("layer_norm_large_mean", (2, 16), -1, {}, 155, lo=10000.0, hi=10001.0,
            rtol=1e-5, atol=1e-5)
    ln_case("layer_norm_float16", (3, 10), -1, {"axis": -1}, 158, dtype=np.float16)
    ln_case("layer_norm_1d", (7,), 0, {"axis": 0}, 161, **f32)

    # batch_flatten
    x = integers(120, (2, 3, 2, 2), -1000, 1000, np.int64)
    fx.case("batch_flatten_4d", "nn.batch_flatten", {}, [x], [x.reshape(2, -1)])
    x = uniform(121, (4,))
    fx.case("batch_flatten_1d", "nn.batch_flatten", {}, [x], [x.reshape(4, 1)])

    # float64: computed in double (numpy's sums in another order: 1e-12)
    f64 = dict(rtol=1e-12, atol=1e-12)
    x, w = uniform(130, (3, 7), dtype=np.float64), uniform(131, (5, 7), dtype=np.float64)
    fx.case("dense_float64", "nn.dense", {}, [x, w], [dense(x, w)], **f64)
    x, w = uniform(138, (2, 5)), uniform(139, (3, 5))
    fx.case("dense_float32_to_float64", "nn.dense", {"out_dtype": "float64"}, [x, w],
            [dense(x, w)], **f64)
    bmm_case("batch_matmul_float64", uniform(132, (2, 3, 6), dtype=np.float64),
             uniform(133, (1, 4, 6), dtype=np.float64), {}, dtype=np.float64, **f64)
    x = uniform(134, (2, 3, 4), -3.0, 3.0, dtype=np.float64)
    fx.case("softmax_float64", "nn.softmax", {"axis": 1}, [x], [softmax(x, axis=1)], **f64)
    x = uniform(164, (2, 3, 4), -3.0, 3.0, dtype=np.float64)
    fx.case("log_softmax_float64", "nn.log_softmax", {"axis": 1}, [x],
            [log_softmax(x, axis=1)], **f64)
    ln_case("layer_norm_float64", (3, 5), -1, {}, 165, dtype=np.float64, **f64)
    bias_case("bias_add_float64", uniform(135, (2, 3, 2, 2), dtype=np.float64),
              uniform(136, (3,), dtype=np.float64), 1, {}, out_dtype=np.float64)
    x = uniform(137, (2, 5), -2.0, 2.0, dtype=np.float64)
    fx.case("leaky_relu_float64", "nn.leaky_relu", {"alpha": 0.1}, [x],
            [np.where(x > 0, x, 0.1 * x)])
    fx.write("gen_ops_nn.py")


if __name__ == "__main__":
    main()
