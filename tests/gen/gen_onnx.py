"""Writes the ONNX models of tests/test_onnx.c into tests/fixtures/onnx/, built with onnx's
helper API (Debian python3-onnx 1.12), with their inputs and numpy-computed expected
outputs (.npy), and a tiny ONNX backend-test folder for the conformance runner.
Run with /usr/bin/python3; the files are small and committed.

  small_cnn.onnx     opset 11, old style (initializers listed as graph inputs too), input
                     "input.1" of shape (batch, 3, 8, 8): Pad (zeros) -> Conv -> BN -> Relu
                     -> MaxPool -> Clip(0, 6) -> GlobalAveragePool -> Flatten -> Gemm ->
                     Softmax. small_cnn_x.npy / .pb is an input, small_cnn_y.npy the output.
  ops13.onnx         opset 13: MatMul (stacked, batch dims broadcast, a vector), Unsqueeze/Squeeze/Split with axes and sizes
                     as inputs, ReduceMean, Transpose, Concat, Max/Min of three, Pad with a
                     value (not absorbed: concatenations), Cast, Identity, Dropout, ...
                     ops13_<input>.npy are its inputs, ops13_<output>.npy its outputs.
  legacy7.onnx       opset 7: the attribute forms later opsets replaced by inputs (Clip's
                     min/max, Split's sizes, Squeeze/Unsqueeze/ReduceMean's axes, Pad's pads
                     and value), Dropout's mask in the input's dtype, BatchNormalization with
                     spatial=1, Gemm with transA/alpha/beta, padded MaxPool, AveragePool with
                     and without count_include_pad, Flatten(axis=2), Cast, Transpose.
                     legacy7_<input>.npy are its inputs, legacy7_<output>.npy its outputs.
  softmax11.onnx,    Softmax(axis=1) of a (2, 3, 4) input: over the flattened axes 1..2
  softmax13.onnx     before opset 13, over axis 1 alone from 13 (softmax_x.npy, _y11, _y13).
  Models that must be refused: unsupported.onnx, opset6.onnx, opset6_unsupported.onnx,
  complex64_input.onnx, pad_wrap.onnx, undefined_input.onnx, reshape_runtime.onnx,
  unknown_attr.onnx.
  dropout_training.onnx  Dropouts in training mode with ratio 0 (identities), ratio and
                     training_mode from initializers and Constant nodes; input
                     dropout_training_x.npy.
  odd_names.onnx     inputs "a_1", "a.1", "0", "w/conv:0" added up (Relay names).
  conformance/       a backend-test folder: a pass, a wrong expected output, a skip, and a
                     Reshape whose int64 shape input the runner binds.
  reductions/        a backend-test folder: float32 ReduceLogSumExp (the ONNX suite's are
                     double), int32 ArgMax, and two refused reductions (skips).
  shape_ops/         a backend-test folder of the shape and index ops with values known
                     when importing (initializers, Shape arithmetic): Slice (opset 9
                     attributes, opset 13 inputs), Gather with negative indices,
                     GatherElements, ConstantOfShape, Expand, Range, Tile, Shape(start,
                     end), Size.
  old_opsets/        a backend-test folder of opset 1 to 9 forms (old_opsets_suite).
  pool_indices/      a backend-test folder of MaxPool's Indices output (pool_indices_suite).
  pad_convt/         a backend-test folder of Pad's edge and reflect modes and negative pads,
                     and of the ConvTranspose forms the ONNX suite leaves out (group, bias,
                     SAME_LOWER, output_shape, 1-D, opset 1), with two refusals (skips).
  index_ops/         a backend-test folder of TopK, ScatterND, ScatterElements, Scatter
                     and GatherND forms the ONNX suite leaves out (index_ops_suite).
  resize/            a backend-test folder of Resize's forms the ONNX suite lacks
                     (resize_suite): opset 10, opset 18's axes and keep_aspect_ratio_policy,
                     tf_crop_and_resize with axes and with scales,
                     ranks 1 and 3.
  float64/           a backend-test folder of double models the ONNX suite leaves out
                     (Conv, Gemm, MatMul, pools, Softmax, BatchNormalization, activations,
                     reductions, Cast, float32 between casts; float64_suite).
  losses/            a backend-test folder of what the ONNX suite's loss tests do not cover:
                     SoftmaxCrossEntropyLoss in float16 (weights, ignore_index, log_prob)
                     and NegativeLogLikelihoodLoss of an int32 target (the suite's are
                     float32 and int64).
  external/          a backend-test folder whose model keeps every tensor (initializers,
                     a Constant's value, Reshape's int64 shape) in one external data file,
                     weights.bin, as onnx.save_model(save_as_external_data=True) writes it.
  channel_shuffle.onnx  shufflenet's channel shuffle as torch exports it (Shape -> Gather
                     -> Div -> Unsqueeze -> Concat -> Reshape -> Transpose -> Reshape): the
                     shape arithmetic folds, byocl print shows a reshape/transpose.
"""

import math
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "onnx"))


def rand(seed, shape, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)


def save_model(name, nodes, inputs, outputs, initializers=(), opset=13, ir_version=7,
               domains=()):
    graph = helper.make_graph(nodes, name.replace(".onnx", ""), inputs, outputs,
                              initializer=list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="byocl tests/gen")
    model.ir_version = ir_version
    onnx.save(model, os.path.join(OUT, name))
    return model


def save_npy(name, a):
    np.save(os.path.join(OUT, name), a)


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


# ------------------------------------------------------------ numpy references

def conv2d(x, w, b, pads, strides):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - kh) // strides[0] + 1
    ow = (xp.shape[3] - kw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw]
            y[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return y + b.reshape(1, -1, 1, 1)


def max_pool(x, k, s):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    y = np.zeros((n, c, oh, ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = x[:, :, i * s:i * s + k, j * s:j * s + k].max(axis=(2, 3))
    return y


def pool2d(x, k, s, pads, reduce, fill, count_include_pad=True):
    """A k x k pool with stride s over x padded by pads (top, left, bottom, right) with
    `fill`; an average without count_include_pad divides by the cells inside x only."""
    n, c, h, w = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
                constant_values=fill)
    inside = np.pad(np.ones((h, w)), ((pads[0], pads[2]), (pads[1], pads[3])))
    oh, ow = (xp.shape[2] - k) // s + 1, (xp.shape[3] - k) // s + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            if reduce == "max":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cells = k * k if count_include_pad else inside[i * s:i * s + k,
                                                               j * s:j * s + k].sum()
                y[:, :, i, j] = win.sum(axis=(2, 3)) / cells
    return y


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ------------------------------------------------------------------ models

def small_cnn():
    w = rand(1, (4, 3, 3, 3))
    b = rand(2, (4,))
    scale, bias = rand(3, (4,), 0.5, 1.5), rand(4, (4,))
    mean, var = rand(5, (4,)), rand(6, (4,), 0.5, 2.0)
    fc_w, fc_b = rand(7, (5, 4)), rand(8, (5,))
    inits = [
        numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads"),
        numpy_helper.from_array(w, "conv.weight"), numpy_helper.from_array(b, "conv.bias"),
        numpy_helper.from_array(scale, "bn.scale"), numpy_helper.from_array(bias, "bn.bias"),
        numpy_helper.from_array(mean, "bn.mean"), numpy_helper.from_array(var, "bn.var"),
        numpy_helper.from_array(np.array(0, np.float32), "clip.min"),
        numpy_helper.from_array(np.array(6, np.float32), "clip.max"),
        numpy_helper.from_array(fc_w, "fc.weight"), numpy_helper.from_array(fc_b, "fc.bias"),
    ]
    nodes = [
        helper.make_node("Pad", ["input.1", "pads"], ["padded"], mode="constant"),
        helper.make_node("Conv", ["padded", "conv.weight", "conv.bias"], ["conv"],
                         kernel_shape=[3, 3], strides=[1, 1]),
        helper.make_node("BatchNormalization",
                         ["conv", "bn.scale", "bn.bias", "bn.mean", "bn.var"], ["bn"],
                         epsilon=1e-3, momentum=0.9),
        helper.make_node("Relu", ["bn"], ["relu"]),
        helper.make_node("MaxPool", ["relu"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Clip", ["pool", "clip.min", "clip.max"], ["clip"]),
        helper.make_node("GlobalAveragePool", ["clip"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["fc"], transB=1),
        helper.make_node("Softmax", ["fc"], ["probs"], axis=1),
    ]
    # Old exporters listed every initializer as a graph input too.
    inputs = [vi("input.1", TensorProto.FLOAT, ["batch", 3, 8, 8])]
    inputs += [vi(t.name, t.data_type, list(t.dims)) for t in inits]
    outputs = [vi("probs", TensorProto.FLOAT, ["batch", 5])]
    save_model("small_cnn.onnx", nodes, inputs, outputs, inits, opset=11, ir_version=3)

    x = rand(9, (1, 3, 8, 8))
    y = conv2d(x.astype(np.float64), w, b, [1, 1, 1, 1], [1, 1])
    y = (y - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-3)
    y = y * scale.reshape(1, -1, 1, 1) + bias.reshape(1, -1, 1, 1)
    y = np.clip(max_pool(np.maximum(y, 0), 2, 2), 0, 6)
    y = y.mean(axis=(2, 3))
    y = softmax(y @ fc_w.T.astype(np.float64) + fc_b, 1)
    save_npy("small_cnn_x.npy", x)
    with open(os.path.join(OUT, "small_cnn_x.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "input.1").SerializeToString())
    save_npy("small_cnn_y.npy", y.astype(np.float32))


def ops13():
    a = rand(11, (2, 3, 4))
    b = rand(12, (2, 4, 5))
    c = rand(13, (3, 4))
    stack = rand(14, (3, 1, 4, 2))  # batch dims (3, 1) broadcast against a's (2)
    vec = rand(15, (4,))
    nodes = [
        helper.make_node("MatMul", ["a", "b"], ["mm"]),
        helper.make_node("MatMul", ["a", "stack"], ["mm_broadcast"]),
        helper.make_node("MatMul", ["vec", "b"], ["mm_vector"]),
        helper.make_node("Unsqueeze", ["mm", "axes0"], ["mm_u"]),
        helper.make_node("Squeeze", ["mm_u", "axes0"], ["mm_s"]),
        helper.make_node("ReduceMean", ["mm_s"], ["mean"], axes=[2], keepdims=0),
        helper.make_node("Split", ["a", "split_sizes"], ["s0", "s1"], axis=1),
        helper.make_node("Transpose", ["s1"], ["s1_t"], perm=[1, 0, 2]),
        helper.make_node("Concat", ["s0", "s1"], ["cat"], axis=1),
        helper.make_node("Max", ["a", "c", "cat"], ["mx"]),
        helper.make_node("Min", ["a", "c", "cat"], ["mn"]),
        helper.make_node("Pad", ["c", "pads", "pad_value"], ["padded"]),
        helper.make_node("Cast", ["c"], ["c16"], to=TensorProto.FLOAT16),
        helper.make_node("Identity", ["a"], ["ident"]),
        helper.make_node("Dropout", ["c"], ["drop"]),
        helper.make_node("LeakyRelu", ["c"], ["leaky"], alpha=0.2),
        helper.make_node("Sub", ["a", "c"], ["sub"]),
        helper.make_node("Div", ["sub", "two"], ["div"]),
        helper.make_node("Clip", ["div", "", "c"], ["clip_hi"]),
    ]
    inits = [
        numpy_helper.from_array(np.array([0], np.int64), "axes0"),
        numpy_helper.from_array(np.array([1, 2], np.int64), "split_sizes"),
        numpy_helper.from_array(np.array([1, 0, 0, 2], np.int64), "pads"),
        numpy_helper.from_array(np.array(2.5, np.float32), "pad_value"),
        numpy_helper.from_array(np.array(2, np.float32), "two"),
        numpy_helper.from_array(stack, "stack"),
        numpy_helper.from_array(vec, "vec"),
    ]
    outs = {
        "mm": a @ b,
        "mm_broadcast": a.astype(np.float64) @ stack,
        "mm_vector": vec.astype(np.float64) @ b,
        "mean": (a @ b).mean(axis=2),
        "s1_t": a[:, 1:, :].transpose(1, 0, 2),
        "cat": a,
        "mx": np.maximum(np.maximum(a, c), a),
        "mn": np.minimum(np.minimum(a, c), a),
        "padded": np.pad(c, ((1, 0), (0, 2)), constant_values=2.5),
        "c16": c.astype(np.float16),
        "ident": a,
        "drop": c,
        "leaky": np.where(c >= 0, c, 0.2 * c).astype(np.float32),
        "clip_hi": np.minimum((a - c) / np.float32(2), c),
    }
    inputs = [vi("a", TensorProto.FLOAT, [2, 3, 4]), vi("b", TensorProto.FLOAT, [2, 4, 5]),
              vi("c", TensorProto.FLOAT, [3, 4])]
    outputs = [vi(k, TensorProto.FLOAT16 if k == "c16" else TensorProto.FLOAT, list(v.shape))
               for k, v in outs.items()]
    save_model("ops13.onnx", nodes, inputs, outputs, inits, opset=13)
    for name, v in (("a", a), ("b", b), ("c", c)):
        save_npy("ops13_%s.npy" % name, v)
    for name, v in outs.items():
        save_npy("ops13_%s.npy" % name, v.astype(np.float16 if name == "c16" else np.float32))


def legacy7():
    x = rand(31, (2, 3, 4, 4))
    a = rand(32, (2, 6))
    c = rand(33, (3, 4))
    ga, gb, gc = rand(34, (4, 3)), rand(35, (4, 5)), rand(36, (5,))
    scale, bias = rand(37, (3,), 0.5, 1.5), rand(38, (3,))
    mean, var = rand(39, (3,)), rand(40, (3,), 0.5, 2.0)
    nodes = [
        helper.make_node("Clip", ["x"], ["clip"], min=-0.5, max=0.25),
        helper.make_node("Split", ["a"], ["s0", "s1"], axis=1, split=[2, 4]),
        helper.make_node("Unsqueeze", ["c"], ["unsq"], axes=[0, 2]),
        helper.make_node("Squeeze", ["unsq"], ["sq"], axes=[0]),
        helper.make_node("ReduceMean", ["x"], ["rmean"], axes=[1, 3], keepdims=0),
        helper.make_node("Pad", ["c"], ["padded"], pads=[1, 0, 0, 2], value=1.5),
        helper.make_node("Dropout", ["c"], ["drop", "mask"], ratio=0.3),
        helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["bn"],
                         epsilon=1e-3, spatial=1),
        helper.make_node("Gemm", ["ga", "gb", "gc"], ["gemm"], transA=1, alpha=0.5, beta=2.0),
        helper.make_node("MaxPool", ["x"], ["mp"], kernel_shape=[2, 2], pads=[1, 1, 0, 0]),
        helper.make_node("AveragePool", ["x"], ["ap_inc"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1], count_include_pad=1),
        helper.make_node("AveragePool", ["x"], ["ap_exc"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Flatten", ["x"], ["flat"], axis=2),
        helper.make_node("Cast", ["x"], ["cast"], to=TensorProto.INT32),
        helper.make_node("Transpose", ["c"], ["tr"]),
    ]
    inits = [numpy_helper.from_array(v, k) for k, v in
             (("ga", ga), ("gb", gb), ("gc", gc), ("scale", scale), ("bias", bias),
              ("mean", mean), ("var", var))]
    x64 = x.astype(np.float64)
    ch = (1, -1, 1, 1)
    bn = (x64 - mean.reshape(ch)) / np.sqrt(var.reshape(ch) + 1e-3) * scale.reshape(ch)
    outs = {
        "clip": np.clip(x, -0.5, 0.25),
        "s0": a[:, :2],
        "s1": a[:, 2:],
        "sq": c.reshape(3, 1, 4),
        "rmean": x64.mean(axis=(1, 3)),
        "padded": np.pad(c, ((1, 0), (0, 2)), constant_values=1.5),
        "drop": c,
        "mask": np.ones_like(c),
        "bn": bn + bias.reshape(ch),
        "gemm": 0.5 * (ga.T.astype(np.float64) @ gb) + 2.0 * gc,
        "mp": pool2d(x, 2, 1, [1, 1, 0, 0], "max", -np.inf),
        "ap_inc": pool2d(x, 3, 2, [1, 1, 1, 1], "avg", 0.0),
        "ap_exc": pool2d(x, 3, 2, [1, 1, 1, 1], "avg", 0.0, count_include_pad=False),
        "flat": x.reshape(6, 16),
        "cast": np.trunc(x).astype(np.int32),
        "tr": c.T,
    }
    dtype = {"cast": (TensorProto.INT32, np.int32)}
    inputs = [vi("x", TensorProto.FLOAT, list(x.shape)), vi("a", TensorProto.FLOAT, [2, 6]),
              vi("c", TensorProto.FLOAT, [3, 4])]
    # Opset-7 exporters list the initializers among the graph inputs too.
    inputs += [vi(k, TensorProto.FLOAT, list(v.shape)) for k, v in
               (("ga", ga), ("gb", gb), ("gc", gc), ("scale", scale), ("bias", bias),
                ("mean", mean), ("var", var))]
    outputs = [vi(k, dtype.get(k, (TensorProto.FLOAT,))[0], list(v.shape))
               for k, v in outs.items()]
    save_model("legacy7.onnx", nodes, inputs, outputs, inits, opset=7, ir_version=3)
    for name, v in (("x", x), ("a", a), ("c", c)):
        save_npy("legacy7_%s.npy" % name, v)
    for name, v in outs.items():
        save_npy("legacy7_%s.npy" % name,
                 np.ascontiguousarray(v, dtype=dtype.get(name, (0, np.float32))[1]))


def softmaxes():
    x = rand(21, (2, 3, 4), -3, 3)
    for opset in (11, 13):
        node = helper.make_node("Softmax", ["x"], ["y"], axis=1)
        save_model("softmax%d.onnx" % opset, [node], [vi("x", TensorProto.FLOAT, [2, 3, 4])],
                   [vi("y", TensorProto.FLOAT, [2, 3, 4])], opset=opset)
    save_npy("softmax_x.npy", x)
    save_npy("softmax_y11.npy", softmax(x.reshape(2, 12), 1).reshape(2, 3, 4).astype(np.float32))
    save_npy("softmax_y13.npy", softmax(x, 1).astype(np.float32))


def refused():
    x = vi("x", TensorProto.FLOAT, [2, 3])
    y = vi("y", TensorProto.FLOAT, [2, 3])
    # Every op type byocl lacks, counted, in order of first use (nodes need not be valid:
    # the check comes before any conversion).
    save_model("unsupported.onnx", [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("LSTM", ["r"], ["l1"]),
        helper.make_node("GridSample", ["l1"], ["z"]),
        helper.make_node("LSTM", ["z"], ["l2"]),
        helper.make_node("Foo", ["l2"], ["y"], domain="com.example"),
    ], [x], [y], domains=["com.example"])
    save_model("opset6.onnx", [helper.make_node("Relu", ["x"], ["y"])], [x], [y], opset=6,
               ir_version=3)
    # An old opset and an op byocl lacks: one message gives both.
    save_model("opset6_unsupported.onnx", [helper.make_node("Relu", ["x"], ["r"]),
                                           helper.make_node("LSTM", ["r"], ["y"])], [x], [y],
               opset=6, ir_version=3)
    save_model("complex64_input.onnx", [helper.make_node("Relu", ["x"], ["y"])],
               [vi("x", TensorProto.COMPLEX64, [2])], [vi("y", TensorProto.COMPLEX64, [2])])
    save_model("pad_wrap.onnx",
               [helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap")], [x], [y],
               [numpy_helper.from_array(np.array([0, 1, 0, 1], np.int64), "pads")])
    save_model("undefined_input.onnx",
               [helper.make_node("Add", ["x", "nowhere"], ["y"], name="add1")], [x], [y])
    save_model("unknown_attr.onnx",
               [helper.make_node("Relu", ["x"], ["y"], name="r", fancy=1)], [x], [y])
    # Reshape's shape is a graph input: byocl needs it when it compiles (bind it).
    save_model("reshape_runtime.onnx",
               [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
               [x, vi("shape", TensorProto.INT64, [2])], [vi("y", TensorProto.FLOAT, [3, 2])])


def dropout_training():
    """Dropout in training mode with ratio 0 is the identity (swin_t's exports have such
    nodes): ratio and training_mode as an initializer and as Constant nodes."""
    x = rand(70, (2, 3))
    nodes = [
        helper.make_node("Constant", [], ["train_c"],
                         value=helper.make_tensor("t", TensorProto.BOOL, [], [True])),
        helper.make_node("Constant", [], ["zero_c"],
                         value=helper.make_tensor("z", TensorProto.FLOAT, [], [0.0])),
        helper.make_node("Dropout", ["x", "zero", "train_c"], ["d1", "mask"]),
        helper.make_node("Dropout", ["d1", "zero_c", "train"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
             numpy_helper.from_array(np.array(True), "train")]
    save_model("dropout_training.onnx", nodes, [vi("x", TensorProto.FLOAT, [2, 3])],
               [vi("y", TensorProto.FLOAT, [2, 3]), vi("mask", TensorProto.BOOL, [2, 3])], inits)
    save_npy("dropout_training_x.npy", x)


def odd_names():
    """Input names Relay's text cannot spell as they are, and two that sanitize alike."""
    names = ["a_1", "a.1", "0", "w/conv:0"]
    nodes = [helper.make_node("Add", [names[0], names[1]], ["t1"]),
             helper.make_node("Add", ["t1", names[2]], ["t2"]),
             helper.make_node("Add", ["t2", names[3]], ["y"])]
    save_model("odd_names.onnx", nodes, [vi(n, TensorProto.FLOAT, [2]) for n in names],
               [vi("y", TensorProto.FLOAT, [2])])


def save_test_folder(d, model, values, expected):
    """Writes model.onnx and test_data_set_0/ (input_K.pb from (name, array) pairs,
    output_K.pb) into the backend-test folder d, whose test_data_set_0 exists."""
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (n, v) in enumerate(values):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())
    for i, v in enumerate(expected):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v, "").SerializeToString())


def single_input_test(root, name, nodes, x, expected, inits=(), opset=13):
    """A backend-test folder root/name: nodes from input x to output y (expected)."""
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[x.dtype]
    out = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[expected.dtype]
    graph = helper.make_graph(nodes, name, [vi("x", elem, list(x.shape))],
                              [vi("y", out, list(expected.shape))], initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7 if opset >= 7 else 3
    save_test_folder(d, model, [("x", x)], [expected])


def conformance_suite():
    """A backend-test folder as onnx writes them: passes, a wrong expected output, a skip,
    inputs without names, an int64 input."""
    root = os.path.join(OUT, "conformance")
    shutil.rmtree(root, ignore_errors=True)

    def test(name, nodes, inputs, outputs, values, expected, inits=()):
        d = os.path.join(root, name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        save_test_folder(d, model, values, expected)

    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    xi = vi("x", TensorProto.FLOAT, [2, 3])
    test("test_relu", [helper.make_node("Relu", ["x"], ["y"])], [xi],
         [vi("y", TensorProto.FLOAT, [2, 3])], [("x", x)], [np.maximum(x, 0)])
    wrong = np.maximum(x, 0)
    wrong[0, 2] = 1  # index 2: byocl gives 0
    test("test_relu_wrong", [helper.make_node("Relu", ["x"], ["y"])], [xi],
         [vi("y", TensorProto.FLOAT, [2, 3])], [("x", x)], [wrong])
    test("test_lstm", [helper.make_node("LSTM", ["x"], ["y"])], [xi],
         [vi("y", TensorProto.FLOAT, [2, 3])], [("x", x)], [x])
    # Input files without names bind by position.
    test("test_sub_unnamed", [helper.make_node("Sub", ["x", "z"], ["y"])],
         [xi, vi("z", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, [2, 3])],
         [("", x), ("", 2 * x)], [-x])
    # The shape is an int64 input, bound as a constant by the runner.
    test("test_reshape", [helper.make_node("Reshape", ["x", "shape"], ["y"])],
         [xi, vi("shape", TensorProto.INT64, [2])], [vi("y", TensorProto.FLOAT, [3, 2])],
         [("x", x), ("shape", np.array([3, 2], np.int64))], [x.reshape(3, 2)])


def reductions_suite():
    """A backend-test folder of the reductions the ONNX suite cannot check in float32:
    ReduceLogSumExp (the suite's tests are double), also with values whose exp overflows
    float32 unless shifted by the maximum, and with the axes as an input (opset 18); the
    refusals (ReduceL2 of int32, noop_with_empty_axes on ReduceL1) are skips."""
    root = os.path.join(OUT, "reductions")
    shutil.rmtree(root, ignore_errors=True)

    def test(name, node, x, expected, opset=13, axes=None):
        d = os.path.join(root, name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[x.dtype]
        inputs = [vi("x", elem, list(x.shape))]
        values = [("x", x)]
        if axes is not None:
            inputs.append(vi("axes", TensorProto.INT64, [len(axes)]))
            values.append(("axes", np.array(axes, np.int64)))
        out = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[expected.dtype]
        graph = helper.make_graph([node], name, inputs, [vi("y", out, list(expected.shape))])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        save_test_folder(d, model, values, [expected])

    def lse(x, axes, keepdims):
        x64 = x.astype(np.float64)
        m = np.max(x64, axis=axes, keepdims=True)
        r = np.log(np.sum(np.exp(x64 - m), axis=axes, keepdims=True)) + m
        return (r if keepdims else np.squeeze(r, axis=axes)).astype(np.float32)

    x = rand(31, (3, 4, 5))
    test("test_reduce_log_sum_exp_f32_keepdims",
         helper.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[1], keepdims=1), x,
         lse(x, (1,), True))
    test("test_reduce_log_sum_exp_f32_all",
         helper.make_node("ReduceLogSumExp", ["x"], ["y"], keepdims=0), x,
         lse(x, (0, 1, 2), False))
    big = rand(32, (2, 6), 80.0, 120.0)  # exp(89) overflows float32
    test("test_reduce_log_sum_exp_f32_large",
         helper.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[-1], keepdims=0), big,
         lse(big, (1,), False))
    test("test_reduce_log_sum_exp_f32_axes_input",
         helper.make_node("ReduceLogSumExp", ["x", "axes"], ["y"], keepdims=0), x,
         lse(x, (0, 2), False), opset=18, axes=[0, -1])
    test("test_argmax_int32_last",
         helper.make_node("ArgMax", ["x"], ["y"], axis=1, keepdims=0, select_last_index=1),
         np.array([[1, 5, 5], [7, 7, 2]], np.int32), np.array([2, 1], np.int64))
    xi = np.array([[3, 4]], np.int32)
    test("test_reduce_l2_int32", helper.make_node("ReduceL2", ["x"], ["y"], keepdims=0), xi,
         np.array(5, np.int32))
    test("test_reduce_l1_noop", helper.make_node("ReduceL1", ["x", "axes"], ["y"],
                                                 noop_with_empty_axes=1),
         x, np.abs(x), opset=18, axes=[])


def shape_ops_suite():
    """A backend-test folder of the shape and index ops, their shape inputs constant
    (initializers, or arithmetic on Shape that the importer folds)."""
    root = os.path.join(OUT, "shape_ops")
    shutil.rmtree(root, ignore_errors=True)

    def test(name, nodes, x, expected, inits=(), opset=13):
        single_input_test(root, name, nodes, x, expected, inits, opset)

    def i64(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)

    x = rand(41, (3, 4, 5))
    test("test_slice_inputs", [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])],
         x, x[:, 3:0:-2, 1:100], [i64("s", [3, 1]), i64("e", [0, 2**62]), i64("a", [1, -1]),
                                  i64("st", [-2, 1])])
    test("test_slice_attrs_opset9",
         [helper.make_node("Slice", ["x"], ["y"], starts=[-2, 0], ends=[100, 2], axes=[2, 0])],
         x, x[0:2, :, -2:], opset=9)
    # Slice's ends from Shape arithmetic: x[:, :Shape(x)[1] - 1].
    test("test_slice_shape_arith",
         [helper.make_node("Shape", ["x"], ["sh"]),
          helper.make_node("Gather", ["sh", "one"], ["d1"], axis=0),
          helper.make_node("Sub", ["d1", "one"], ["e"]),
          helper.make_node("Slice", ["x", "zero", "e", "one"], ["y"])],
         x, x[:, :3], [i64("one", [1]), i64("zero", [0])])
    test("test_gather_negative",
         [helper.make_node("Gather", ["x", "idx"], ["y"], axis=1)], x,
         x[:, [[-1, 0], [2, -4]]], [i64("idx", [[-1, 0], [2, -4]])])
    test("test_gather_scalar_index", [helper.make_node("Gather", ["x", "idx"], ["y"], axis=-1)],
         x, x[:, :, -2], [i64("idx", -2)])
    gi = np.array([[[0, -1, 2, 1, 0]] * 2] * 3, np.int64)
    test("test_gather_elements", [helper.make_node("GatherElements", ["x", "gi"], ["y"], axis=1)],
         x, np.take_along_axis(x, np.where(gi < 0, gi + 4, gi), 1),
         [numpy_helper.from_array(gi, "gi")])
    test("test_constant_of_shape",
         [helper.make_node("Shape", ["x"], ["sh"]),
          helper.make_node("ConstantOfShape", ["sh"], ["c"],
                           value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.5])),
          helper.make_node("Add", ["x", "c"], ["y"])], x, x + np.float32(1.5))
    test("test_expand_bidirectional",
         [helper.make_node("Expand", ["x", "shape"], ["y"])], x[:, :1, :],
         np.broadcast_to(x[:, :1, :], (2, 3, 4, 5)).copy(), [i64("shape", [2, 1, 4, 1])])
    test("test_range_add",
         [helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
          helper.make_node("Add", ["x", "r"], ["y"])], x, x + np.arange(1, -4, -1, np.float32),
         [numpy_helper.from_array(np.array(v, np.float32), n)
          for n, v in (("start", 1), ("limit", -4), ("delta", -1))])
    test("test_tile", [helper.make_node("Tile", ["x", "reps"], ["y"])], x,
         np.tile(x, (2, 1, 3)), [i64("reps", [2, 1, 3])])
    test("test_shape_start_end",
         [helper.make_node("Shape", ["x"], ["sh"], start=-2, end=100),
          helper.make_node("Size", ["x"], ["n"]),
          helper.make_node("Unsqueeze", ["n", "zero"], ["n1"]),
          helper.make_node("Concat", ["sh", "n1"], ["c"], axis=0),
          helper.make_node("Identity", ["c"], ["y"])], x, np.array([4, 5, 60], np.int64),
         [i64("zero", [0])], opset=15)


def losses_suite():
    """A backend-test folder of the losses in the dtypes the ONNX suite leaves out: float16
    scores (inputs small enough that float16's rounding stays within rtol 1e-3), an int32
    target."""
    root = os.path.join(OUT, "losses")
    shutil.rmtree(root, ignore_errors=True)

    def test(name, node, values, outputs):
        d = os.path.join(root, name)
        os.makedirs(os.path.join(d, "test_data_set_0"))

        def info(n, v):
            return vi(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], list(v.shape))
        graph = helper.make_graph([node], name, [info(n, v) for n, v in values],
                                  [info(n, v) for n, v in outputs])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        save_test_folder(d, model, values, [v for _, v in outputs])

    def nll(lp, t, w=None, ii=None, reduction="mean"):
        """ONNX's reference: -lp[n, t, d] * w[t], 0 where t == ii; mean over the weights."""
        safe = t if ii is None else np.where(t == ii, 0, t)
        loss = -np.take_along_axis(lp, np.expand_dims(safe, 1), 1).squeeze(1)
        weight = np.ones_like(loss) if w is None else w[safe]
        if ii is not None:
            weight = np.where(t == ii, 0, weight)
        loss = loss * weight
        return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / weight.sum()}[reduction]

    f16 = np.float16  # the inputs are float16 values, the expected outputs exact for them
    x = rand(51, (3, 5, 2), -0.25, 0.25).astype(f16).astype(np.float64)
    t = np.array([[0, 4], [2, 2], [1, 3]], np.int32)
    w = rand(52, (5,), 0.5, 1.5).astype(f16).astype(np.float64)
    lp = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    test("test_sce_f16_weight_ii_log_prob",
         helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["y", "lp"],
                          ignore_index=2),
         [("x", x.astype(f16)), ("t", t), ("w", w.astype(f16))],
         [("y", np.array(nll(lp, t, w, 2)).astype(f16)), ("lp", lp.astype(f16))])
    test("test_nllloss_int32_target_sum",
         helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], reduction="sum"),
         [("x", x.astype(np.float32)), ("t", t)],
         [("y", np.array(nll(x, t, reduction="sum")).astype(np.float32))])


def resample(a, axis, n_out, source, kind, cubic_a=-0.75, fill=None):
    """a resampled along `axis` to n_out positions: output i reads around the input
    coordinate source(i), the neighbours clamped into the axis; kind "floor" (nearest,
    rounding down), "round_prefer_floor", "linear" or "cubic" (Keys, coefficient cubic_a).
    With a fill (tf_crop_and_resize's extrapolation_value), a coordinate outside the axis
    gives fill."""
    n = a.shape[axis]
    out = []
    for i in range(n_out):
        x = source(i)
        if fill is not None and (x < 0 or x > n - 1):
            out.append(np.full_like(np.take(a.astype(np.float64), 0, axis=axis), fill))
            continue
        f = math.floor(x)
        if kind in ("floor", "round_prefer_floor"):
            k = f if kind == "floor" or x - f <= 0.5 else f + 1
            taps = {k: 1.0}
        elif kind == "linear":
            taps = {f: 1 - (x - f)}
            taps[f + 1] = taps.get(f + 1, 0) + (x - f)
        else:
            def keys(d):
                d = abs(d)
                return ((cubic_a + 2) * d ** 3 - (cubic_a + 3) * d ** 2 + 1 if d <= 1 else
                        cubic_a * (d ** 3 - 5 * d ** 2 + 8 * d - 4) if d < 2 else 0.0)
            taps = {t: keys(x - t) for t in range(f - 1, f + 3)}
        acc = 0
        for t, w in taps.items():
            acc = acc + w * np.take(a.astype(np.float64), min(max(t, 0), n - 1), axis=axis)
        out.append(acc)
    return np.stack(out, axis=axis).astype(a.dtype)


def crop_source(n_in, n_out, start, end):
    """tf_crop_and_resize's input coordinate of output position i, as the ONNX spec says."""
    if n_out == 1:
        return lambda i: (end - start) * (n_in - 1) / 2 + start * (n_in - 1)
    return lambda i: start * (n_in - 1) + i * (end - start) * (n_in - 1) / (n_out - 1)


def resize_suite():
    """A backend-test folder of Resize's forms the ONNX suite lacks: opset 10 (Upsample's
    arithmetic), opset 18's axes and keep_aspect_ratio_policy, ranks other than 4,
    tf_crop_and_resize with axes and with scales."""
    root = os.path.join(OUT, "resize")
    shutil.rmtree(root, ignore_errors=True)
    x = rand(71, (2, 3, 4, 5))
    single_input_test(root, "test_resize_opset10_nearest", [
        helper.make_node("Resize", ["x", "sc"], ["y"])], x,
        resample(resample(x, 2, 6, lambda i: i / 1.5, "floor"), 3, 3, lambda i: i / 0.7,
                 "floor"),
        [numpy_helper.from_array(np.array([1, 1, 1.5, 0.7], np.float32), "sc")], opset=10)
    m = rand(72, (6, 8))
    # not_larger: one scale, min(4 / 6, 9 / 8) = 2 / 3, for both axes: 4 x round(5.33) = 5
    single_input_test(root, "test_resize_opset18_axes_not_larger", [
        helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear", axes=[1, 0],
                         keep_aspect_ratio_policy="not_larger")], m,
        resample(resample(m, 0, 4, lambda i: (i + 0.5) * 1.5 - 0.5, "linear"), 1, 5,
                 lambda i: (i + 0.5) * 1.5 - 0.5, "linear"),
        [numpy_helper.from_array(np.array([9, 4], np.int64), "sz")], opset=18)
    v = rand(73, (2, 3, 4))
    single_input_test(root, "test_resize_rank3_cubic", [
        helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="cubic",
                         coordinate_transformation_mode="align_corners")], v,
        resample(resample(v, 1, 6, lambda i: i * 2 / 5, "cubic"), 2, 6, lambda i: i * 3 / 5,
                 "cubic"),
        [numpy_helper.from_array(np.array([1, 2, 1.5], np.float32), "sc")], opset=13)
    w = rand(74, (7,))
    single_input_test(root, "test_resize_rank1_nearest", [
        helper.make_node("Resize", ["x", "", "", "sz"], ["y"],
                         coordinate_transformation_mode="half_pixel")], w,
        resample(w, 0, 3, lambda i: (i + 0.5) * 7 / 3 - 0.5, "round_prefer_floor"),
        [numpy_helper.from_array(np.array([3], np.int64), "sz")], opset=13)
    # tf_crop_and_resize: the roi of axes 2 then 1 (starts, then ends), beyond the input on
    # both sides; and a rank-4 crop by scales, the leading axes whole.
    c = rand(75, (2, 5, 6))
    roi = np.array([0.1, -0.2, 1.2, 0.9], np.float32)  # axis 2: 0.1..1.2, axis 1: -0.2..0.9
    s2, s1, e2, e1 = (float(v) for v in roi)
    single_input_test(root, "test_resize_crop_rank3_axes", [
        helper.make_node("Resize", ["x", "roi", "", "sz"], ["y"], mode="linear", axes=[2, 1],
                         coordinate_transformation_mode="tf_crop_and_resize",
                         extrapolation_value=-3.0)], c,
        resample(resample(c, 1, 3, crop_source(5, 3, s1, e1), "linear", fill=-3.0), 2, 4,
                 crop_source(6, 4, s2, e2), "linear", fill=-3.0),
        [numpy_helper.from_array(roi, "roi"),
         numpy_helper.from_array(np.array([4, 3], np.int64), "sz")], opset=18)
    q = rand(76, (1, 2, 4, 5))
    roi = np.array([0, 0, 0.2, -0.1, 1, 1, 0.8, 1.1], np.float32)
    single_input_test(root, "test_resize_crop_scales_nearest", [
        helper.make_node("Resize", ["x", "roi", "sc"], ["y"], nearest_mode="round_prefer_floor",
                         coordinate_transformation_mode="tf_crop_and_resize",
                         extrapolation_value=0.5)], q,
        resample(resample(q, 2, 6, crop_source(4, 6, float(roi[2]), float(roi[6])),
                          "round_prefer_floor", fill=0.5),
                 3, 6, crop_source(5, 6, float(roi[3]), float(roi[7])), "round_prefer_floor",
                 fill=0.5),
        [numpy_helper.from_array(roi, "roi"),
         numpy_helper.from_array(np.array([1, 1, 1.5, 1.2], np.float32), "sc")], opset=13)


def old_opsets_suite():
    """A backend-test folder of the forms of opsets 1 to 9 that later opsets replaced:
    BatchNormalization with is_test (6), Pad's paddings (1), Upsample nearest with scales
    as an attribute (7) and an input (9), Gemm and Add with broadcast (6), Reshape's shape
    attribute (4), Concat without axis and consumed_inputs (1), Dropout with is_test (6)."""
    root = os.path.join(OUT, "old_opsets")
    shutil.rmtree(root, ignore_errors=True)

    def f32(name, v):
        return numpy_helper.from_array(np.asarray(v, np.float32), name)

    x = rand(61, (2, 3, 4, 5))
    scale, bias = rand(62, (3,), 0.5, 1.5), rand(63, (3,))
    mean, var = rand(64, (3,)), rand(65, (3,), 0.5, 2.0)
    bc = lambda v: v.reshape(1, 3, 1, 1)  # noqa: E731
    single_input_test(root, "test_batchnorm_opset6_is_test", [
        helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], is_test=1,
                         epsilon=1e-3)], x,
        (bc(scale) * (x - bc(mean)) / np.sqrt(bc(var) + 1e-3) + bc(bias)).astype(np.float32),
        [f32("s", scale), f32("b", bias), f32("m", mean), f32("v", var)], opset=6)
    x3 = rand(66, (3, 4, 5))
    single_input_test(root, "test_pad_opset1_paddings", [
        helper.make_node("Pad", ["x"], ["y"], paddings=[0, 1, 2, 1, 0, 1], value=0.5)], x3,
        np.pad(x3, [(0, 1), (1, 0), (2, 1)], constant_values=0.5), opset=1)
    up = x.repeat(2, axis=2).repeat(3, axis=3)
    single_input_test(root, "test_upsample_opset7_nearest", [
        helper.make_node("Upsample", ["x"], ["y"], mode="nearest",
                         scales=[1.0, 1.0, 2.0, 3.0])], x, up, opset=7)
    single_input_test(root, "test_upsample_opset9_scales_input", [
        helper.make_node("Upsample", ["x", "sc"], ["y"])], x, up,
        [f32("sc", [1.0, 1.0, 2.0, 3.0])], opset=9)
    # Upsample's linear mode and fractional scales: asymmetric coordinates (i / scale),
    # nearest rounds down.
    single_input_test(root, "test_upsample_opset9_linear", [
        helper.make_node("Upsample", ["x", "sc"], ["y"], mode="linear")], x3,
        resample(resample(x3, 1, 6, lambda i: i / 1.5, "linear"), 2, 12,
                 lambda i: i / 2.5, "linear"),
        [f32("sc", [1.0, 1.5, 2.5])], opset=9)
    single_input_test(root, "test_upsample_opset7_nearest_fractional", [
        helper.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=[1.0, 1.0, 1.5, 0.6])],
        x, resample(resample(x, 2, 6, lambda i: i / 1.5, "floor"), 3, 3, lambda i: i / 0.6,
                    "floor"), opset=7)
    a, b, c = rand(67, (3, 4)), rand(68, (4, 5)), rand(69, (5,))
    single_input_test(root, "test_gemm_opset6_broadcast", [
        helper.make_node("Gemm", ["x", "b", "c"], ["y"], broadcast=1, alpha=0.5, beta=2.0)],
        a, (0.5 * a @ b + 2.0 * c).astype(np.float32), [f32("b", b), f32("c", c)], opset=6)
    b2 = rand(70, (3, 4))
    single_input_test(root, "test_add_opset6_broadcast_axis", [
        helper.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=1)], x,
        x + b2.reshape(1, 3, 4, 1), [f32("b", b2)], opset=6)
    single_input_test(root, "test_reshape_opset4_shape_attr", [
        helper.make_node("Reshape", ["x"], ["y"], shape=[6, 5, 4])], x,
        x.reshape(6, 5, 4), opset=4)
    single_input_test(root, "test_concat_opset1_default_axis", [
        helper.make_node("Relu", ["x"], ["r"], consumed_inputs=[0]),
        helper.make_node("Concat", ["x", "r"], ["y"])], x,
        np.concatenate([x, np.maximum(x, 0)], axis=1), opset=1)
    single_input_test(root, "test_dropout_opset6_is_test", [
        helper.make_node("Dropout", ["x"], ["d"], is_test=1, ratio=0.3),
        helper.make_node("Sigmoid", ["d"], ["y"])], x,
        (1 / (1 + np.exp(-x))).astype(np.float32), opset=6)
    # PRelu before opset 7: a 1-D slope of the channel count is per channel (axis 1).
    x4 = rand(85, (2, 3, 4, 5))
    slope = rand(86, (3,), 0.1, 0.5)
    single_input_test(root, "test_prelu_opset6_per_channel", [
        helper.make_node("PRelu", ["x", "slope"], ["y"])], x4,
        np.where(x4 < 0, x4 * slope.reshape(3, 1, 1), x4).astype(np.float32),
        [numpy_helper.from_array(slope, "slope")], opset=6)
    old_opsets_more(root, x, f32)


def old_opsets_more(root, x, f32):
    """old_opsets_suite's forms that byocl converted later: BatchNormalization spatial=0
    (opsets 6 and 7: statistics per element), Cast-1's string `to`, Tile-1's tiles and
    axis inputs, and the experimental Upsample-1 (height_scale, width_scale; nearest and
    bilinear)."""
    s, b = rand(90, (3, 4, 5), 0.5, 1.5), rand(91, (3, 4, 5))
    m, v = rand(92, (3, 4, 5)), rand(93, (3, 4, 5), 0.5, 2.0)
    single_input_test(root, "test_batchnorm_opset7_spatial0", [
        helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=0,
                         epsilon=1e-3)], x,
        (s * (x - m) / np.sqrt(v + 1e-3) + b).astype(np.float32),
        [f32("s", s), f32("b", b), f32("m", m), f32("v", v)], opset=7)
    x3 = rand(94, (2, 3, 4))
    s2, b2, m2, v2 = s[:, :, 0], b[:, :, 0], m[:, :, 0], v[:, :, 0]
    single_input_test(root, "test_batchnorm_opset6_spatial0", [
        helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=0,
                         is_test=1)], x3,
        (s2 * (x3 - m2) / np.sqrt(v2 + 1e-5) + b2).astype(np.float32),
        [f32("s", s2), f32("b", b2), f32("m", m2), f32("v", v2)], opset=6)
    single_input_test(root, "test_cast_opset1_string_to", [
        helper.make_node("Mul", ["x", "k"], ["xk"], broadcast=1),
        helper.make_node("Cast", ["xk"], ["y"], to="INT32")], x,
        (x * 7).astype(np.int32), [f32("k", 7.0)], opset=1)
    single_input_test(root, "test_tile_opset1_tiles_axis", [
        helper.make_node("Tile", ["x", "t", "a"], ["y"])], x3,
        np.tile(x3, (1, 1, 3)), [f32("t", 3.0), f32("a", 2.0)], opset=1)
    single_input_test(root, "test_upsample_opset1_nearest", [
        helper.make_node("Upsample", ["x"], ["y"], height_scale=2.0, width_scale=3.0)], x,
        x.repeat(2, axis=2).repeat(3, axis=3), opset=1)
    single_input_test(root, "test_upsample_opset1_bilinear", [
        helper.make_node("Upsample", ["x"], ["y"], mode="bilinear", height_scale=2.0,
                         width_scale=1.5)], x,
        resample(resample(x, 2, 8, lambda i: i / 2.0, "linear"), 3, 7, lambda i: i / 1.5,
                 "linear"), opset=1)


def max_pool_onnx(x, kernel, strides, dilations, pads, ceil_mode, storage_order):
    """MaxPool with Indices as ONNX defines them (N x C x H x W): each window's first
    maximum over the cells inside x (row-major window order), its flat index in x, with H
    and W swapped when storage_order is 1; pads: top, left, bottom, right."""
    n, c, h, w = x.shape
    rnd = math.ceil if ceil_mode else math.floor
    out = [int(rnd((dim + pads[d] + pads[d + 2] - ((kernel[d] - 1) * dilations[d] + 1))
                   / strides[d])) + 1 for d, dim in enumerate((h, w))]
    y = np.zeros((n, c) + tuple(out), x.dtype)
    ind = np.zeros((n, c) + tuple(out), np.int64)
    for b in range(n):
        for ch in range(c):
            for i in range(out[0]):
                for j in range(out[1]):
                    best = None
                    for a in range(kernel[0]):
                        for e in range(kernel[1]):
                            hh = i * strides[0] - pads[0] + a * dilations[0]
                            ww = j * strides[1] - pads[1] + e * dilations[1]
                            if 0 <= hh < h and 0 <= ww < w and (
                                    best is None or x[b, ch, hh, ww] > best):
                                best = x[b, ch, hh, ww]
                                at = hh * w + ww if storage_order == 0 else ww * h + hh
                                ind[b, ch, i, j] = (b * c + ch) * h * w + at
                    y[b, ch, i, j] = best
    return y, ind


def pool_indices_suite():
    """A backend-test folder of MaxPool's Indices output in the forms the ONNX suite's two
    tests leave out: batch and channels, dilations, uneven pads and strides, ceil_mode with
    storage_order 1, 1-D, SAME_UPPER, int8 with ties (the first maximum wins, and a cell of
    -128 wins over the padding)."""
    root = os.path.join(OUT, "pool_indices")
    shutil.rmtree(root, ignore_errors=True)

    def test(name, x, kernel, strides=(1, 1), dilations=(1, 1), pads=(0, 0, 0, 0),
             ceil_mode=0, storage_order=0, auto_pad=None):
        one_d = x.ndim == 3
        x4 = x[:, :, None, :] if one_d else x
        attrs = dict(kernel_shape=list(kernel), strides=list(strides))
        if list(dilations) != [1, 1]:
            attrs["dilations"] = list(dilations)
        if ceil_mode:
            attrs["ceil_mode"] = 1
        if storage_order:
            attrs["storage_order"] = 1
        if auto_pad:
            attrs["auto_pad"] = auto_pad
        elif any(pads):
            attrs["pads"] = list(pads)
        if one_d:
            k4, s4, d4 = (1,) + tuple(kernel), (1,) + tuple(strides), (1,) + tuple(dilations)
            p4 = (0, pads[0], 0, pads[1])
        else:
            k4, s4, d4, p4 = kernel, strides, dilations, pads
        if auto_pad == "SAME_UPPER":
            total = [max(0, (-(-x4.shape[2 + d] // s4[d]) - 1) * s4[d] + k4[d] - x4.shape[2 + d])
                     for d in range(2)]
            p4 = (total[0] // 2, total[1] // 2, total[0] - total[0] // 2,
                  total[1] - total[1] // 2)
        y, ind = max_pool_onnx(x4, k4, s4, d4, p4, ceil_mode, storage_order)
        if one_d:
            y, ind = y[:, :, 0, :], ind[:, :, 0, :]
        d = os.path.join(root, name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[x.dtype]
        graph = helper.make_graph(
            [helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)], name,
            [vi("x", elem, list(x.shape))],
            [vi("y", elem, list(y.shape)), vi("i", TensorProto.INT64, list(ind.shape))])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
        model.ir_version = 7
        save_test_folder(d, model, [("x", x)], [y, ind])

    test("test_maxpool_indices_dilated_padded", rand(95, (2, 3, 6, 7)), (3, 2),
         strides=(2, 1), dilations=(1, 2), pads=(1, 0, 1, 1))
    test("test_maxpool_indices_ceil_storage_order1", rand(96, (1, 2, 5, 6)), (2, 2),
         strides=(2, 2), ceil_mode=1, storage_order=1)
    test("test_maxpool_indices_1d", rand(97, (2, 2, 9)), (3,), strides=(2,), pads=(1, 1))
    test("test_maxpool_indices_same_upper", rand(98, (1, 2, 5, 5)), (3, 3), strides=(2, 2),
         auto_pad="SAME_UPPER")
    xi = np.random.default_rng(99).integers(-128, -125, size=(1, 2, 4, 5)).astype(np.int8)
    test("test_maxpool_indices_int8_ties", xi, (2, 3), pads=(1, 1, 1, 1))


def conv_transpose_onnx(x, w, strides, dilations, group, pads=None, output_padding=None,
                        output_shape=None, auto_pad="NOTSET"):
    """ConvTranspose as the ONNX spec defines it, over the spatial dims of x: the full
    result (every input cell spreading the kernel from cell * stride), from which output
    cell o reads cell o + pads[start] (zero outside it); pads from output_shape or
    SAME_* split total_padding with Python's floor division."""
    from gen_ops_conv import conv2d_transpose
    spatial = x.ndim - 2
    lift = spatial == 1
    if lift:
        x, w = x[:, :, None, :], w[:, :, None, :]
        strides, dilations = [1] + list(strides), [1] + list(dilations)
        output_padding = None if output_padding is None else [0] + list(output_padding)
        output_shape = None if output_shape is None else [1] + list(output_shape)
        pads = None if pads is None else [0, pads[0], 0, pads[1]]
    full = conv2d_transpose(x, w, strides=strides, dilation=dilations, groups=group)
    op = output_padding or [0, 0]
    k = w.shape[2:]
    start, length = [], []
    for d in range(2):
        natural = full.shape[2 + d] + op[d]
        if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            want = output_shape[d] if output_shape is not None else x.shape[2 + d] * strides[d]
            total = natural - want
            upper = auto_pad == "SAME_UPPER"
            start.append(total // 2 if upper else total - total // 2)
            length.append(want)
        else:
            p = pads or [0, 0, 0, 0]
            start.append(p[d])
            length.append(natural - p[d] - p[d + 2])
        assert k[d] >= 1
    out = np.zeros(full.shape[:2] + tuple(length))
    for o0 in range(length[0]):
        for o1 in range(length[1]):
            i0, i1 = o0 + start[0], o1 + start[1]
            if 0 <= i0 < full.shape[2] and 0 <= i1 < full.shape[3]:
                out[:, :, o0, o1] = full[:, :, i0, i1]
    return (out[:, :, 0, :] if lift else out).astype(np.float32)


def pad_convt_suite():
    """A backend-test folder of Pad's modes edge and reflect (numpy.pad's), negative pads
    (cropping), the axes input of opset 18 and the pads attribute of opset 2; and of
    ConvTranspose with group and bias, SAME_LOWER, output_shape (also listing N and C, and
    reaching past the full result), 1-D, opset 1 with VALID and dilations. Refused: a
    constant Pad that crops and pads, a ConvTranspose whose output would start before the
    full result."""
    root = os.path.join(OUT, "pad_convt")
    shutil.rmtree(root, ignore_errors=True)

    def pads_input(v):
        return numpy_helper.from_array(np.array(v, np.int64), "pads")

    def np_pad(x, before, after, mode):
        grown = np.pad(x, [(max(b, 0), max(a, 0)) for b, a in zip(before, after)], mode=mode)
        crop = tuple(slice(max(-b, 0), grown.shape[i] - max(-a, 0))
                     for i, (b, a) in enumerate(zip(before, after)))
        return grown[crop]

    x = rand(81, (3, 4, 5))
    single_input_test(root, "test_pad_edge_negative", [
        helper.make_node("Pad", ["x", "pads"], ["y"], mode="edge")], x,
        np_pad(x, [1, -1, 2], [2, 1, -2], "edge"), [pads_input([1, -1, 2, 2, 1, -2])], opset=11)
    x2 = rand(82, (2, 3))
    single_input_test(root, "test_pad_reflect_wide", [
        helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")], x2,
        np_pad(x2, [1, 5], [0, 4], "reflect"), [pads_input([1, 5, 0, 4])], opset=13)
    axes = numpy_helper.from_array(np.array([-1, 1], np.int64), "axes")
    single_input_test(root, "test_pad_reflect_axes_opset18", [
        helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"], mode="reflect")], x,
        np_pad(x, [0, 1, 2], [0, 0, 3], "reflect"), [pads_input([2, 1, 3, 0]), axes], opset=18)
    single_input_test(root, "test_pad_edge_opset2_attr", [
        helper.make_node("Pad", ["x"], ["y"], mode="edge", pads=[0, 2, 1, 1, 0, 3])], x,
        np_pad(x, [0, 2, 1], [1, 0, 3], "edge"), opset=2)
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    single_input_test(root, "test_pad_edge_int32", [
        helper.make_node("Pad", ["x", "pads"], ["y"], mode="edge")], xi,
        np_pad(xi, [2, 0], [1, 3], "edge"), [pads_input([2, 0, 1, 3])], opset=13)
    single_input_test(root, "test_pad_constant_crop", [
        helper.make_node("Pad", ["x", "pads"], ["y"])], x,
        np_pad(x, [0, -1, 0], [-1, 0, -2], "constant"), [pads_input([0, -1, 0, -1, 0, -2])],
        opset=13)
    single_input_test(root, "test_pad_constant_crop_and_pad", [
        helper.make_node("Pad", ["x", "pads"], ["y"])], x,
        np_pad(x, [0, -1, 0], [1, 0, 0], "constant"), [pads_input([0, -1, 0, 1, 0, 0])],
        opset=13)

    def f32(name, v):
        return numpy_helper.from_array(np.asarray(v, np.float32), name)

    xc, wg, bias = rand(83, (2, 4, 3, 4)), rand(84, (4, 3, 2, 3)), rand(85, (6,))
    want = conv_transpose_onnx(xc, wg, [2, 2], [1, 1], 2, pads=[1, 0, 0, 2])
    single_input_test(root, "test_convtranspose_group_bias", [
        helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], group=2, strides=[2, 2],
                         pads=[1, 0, 0, 2])], xc,
        (want + bias.reshape(1, 6, 1, 1)).astype(np.float32), [f32("w", wg), f32("b", bias)])
    w3 = rand(86, (4, 2, 3, 3))
    single_input_test(root, "test_convtranspose_same_lower", [
        helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 3],
                         auto_pad="SAME_LOWER")], xc,
        conv_transpose_onnx(xc, w3, [2, 3], [1, 1], 1, auto_pad="SAME_LOWER"), [f32("w", w3)])
    single_input_test(root, "test_convtranspose_output_shape_nc", [
        helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2],
                         output_shape=[2, 2, 6, 10], dilations=[1, 2])], xc,
        conv_transpose_onnx(xc, w3, [2, 2], [1, 2], 1, output_shape=[6, 10]), [f32("w", w3)])
    x1, w1 = rand(87, (1, 2, 5)), rand(88, (2, 3, 3))
    single_input_test(root, "test_convtranspose_1d_output_shape", [
        helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2],
                         output_shape=[12])], x1,
        conv_transpose_onnx(x1, w1, [2], [1], 1, output_shape=[12]), [f32("w", w1)])
    single_input_test(root, "test_convtranspose_opset1_valid", [
        helper.make_node("ConvTranspose", ["x", "w"], ["y"], auto_pad="VALID",
                         dilations=[2, 1], output_padding=[1, 0], strides=[3, 1])], xc,
        conv_transpose_onnx(xc, w3, [3, 1], [2, 1], 1, output_padding=[1, 0]),
        [f32("w", w3)], opset=1)
    wk1 = rand(89, (4, 1, 1, 1))
    single_input_test(root, "test_convtranspose_negative_start", [
        helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3, 3],
                         auto_pad="SAME_UPPER")], xc,
        conv_transpose_onnx(xc, wk1, [3, 3], [1, 1], 1, auto_pad="SAME_UPPER"), [f32("w", wk1)])


def index_ops_suite():
    """A backend-test folder of the forms of TopK, ScatterND, ScatterElements, Scatter and
    GatherND the ONNX suite leaves out: TopK's k attribute (opset 1), K as an initializer
    (10), largest=0 with only the indices asked for (11), ties (the lower index first);
    ScatterND and ScatterElements with reduction mul (16), min and max (18) on repeated
    indices; Scatter (9); GatherND with batch_dims and negative indices as initializers."""
    root = os.path.join(OUT, "index_ops")
    shutil.rmtree(root, ignore_errors=True)

    def info(n, v):
        return vi(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], list(v.shape))

    def test(name, nodes, values, outputs, inits=(), opset=13):
        d = os.path.join(root, name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        graph = helper.make_graph(nodes, name, [info(n, v) for n, v in values],
                                  [info(n, v) for n, v in outputs],
                                  initializer=[numpy_helper.from_array(v, n) for n, v in inits])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 7 if opset >= 7 else 3
        save_test_folder(d, model, values, [v for _, v in outputs])

    def topk(x, k, axis, largest=True):
        """numpy's stable argsort: equal values keep their order."""
        order = np.argsort(-x if largest else x, axis=axis, kind="stable")
        order = np.take(order, np.arange(k), axis=axis)
        return np.take_along_axis(x, order, axis=axis), order.astype(np.int64)

    x = np.round(rand(81, (3, 6)) * 3).astype(np.float32)  # rounded: ties
    v, i = topk(x, 3, 1)
    test("test_topk_opset1_k_attr", [helper.make_node("TopK", ["x"], ["v", "i"], k=3)],
         [("x", x)], [("v", v), ("i", i)], opset=1)
    v, i = topk(x, 2, 0)
    test("test_topk_opset10_k_initializer",
         [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=0)], [("x", x)],
         [("v", v), ("i", i)], [("k", np.array([2], np.int64))], opset=10)
    v, i = topk(x, 4, 1, largest=False)
    test("test_topk_smallest_indices_only",
         [helper.make_node("TopK", ["x", "k"], ["", "i"], axis=-1, largest=0, sorted=0)],
         [("x", x)], [("i", i)], [("k", np.array([4], np.int64))], opset=11)

    data = rand(82, (4, 3))
    nd_idx = np.array([[1], [3], [1], [-4]], np.int64)  # rows 1 twice; -4 is row 0
    nd_upd = rand(83, (4, 3))
    for red, f, opset in (("mul", np.multiply, 16), ("max", np.maximum, 18),
                          ("min", np.minimum, 18)):
        out = data.copy()
        for k in range(4):
            r = nd_idx[k, 0] % 4
            out[r] = f(out[r], nd_upd[k])
        test("test_scatternd_%s_repeated" % red,
             [helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction=red)],
             [("x", data), ("u", nd_upd)], [("y", out)], [("i", nd_idx)], opset=opset)
    el_idx = np.array([[0, 2], [2, 2], [-1, 0]], np.int64)
    el_upd = rand(84, (3, 2))
    for red, f, opset in (("mul", np.multiply, 16), ("min", np.minimum, 18)):
        out = data.copy()
        for r, c in np.ndindex(el_idx.shape):
            at = (r, el_idx[r, c] % 3)
            out[at] = f(out[at], el_upd[r, c])
        test("test_scatter_elements_%s_axis1" % red,
             [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1,
                               reduction=red)],
             [("x", data), ("i", el_idx), ("u", el_upd)], [("y", out)], opset=opset)
    out = data.copy()
    for r, c in np.ndindex(el_idx.shape):
        out[el_idx[r, c] % 4, c] = el_upd[r, c]
    test("test_scatter_opset9_axis0",
         [helper.make_node("Scatter", ["x", "i", "u"], ["y"], axis=0)],
         [("x", data), ("u", el_upd)], [("y", out)], [("i", el_idx)], opset=9)

    g = rand(85, (2, 3, 4))
    gi = np.array([[[2, -1], [0, 0]], [[-3, 3], [1, 2]]], np.int64)  # batch 2, 2 positions
    want = np.stack([np.stack([g[b][tuple(gi[b, p] % [3, 4])] for p in range(2)])
                     for b in range(2)])
    test("test_gathernd_batch_dims_negative",
         [helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=1)], [("x", g)],
         [("y", want)], [("i", gi)], opset=12)


def channel_shuffle():
    """shufflenet_v2's channel_shuffle as torch.onnx exports it: the shape of x split into
    (batch, groups, channels // groups, h, w), transposed, flattened back."""
    nodes = [helper.make_node("Shape", ["x"], ["sh"], name="shape")]
    for i in range(4):
        nodes.append(helper.make_node("Gather", ["sh", "i%d" % i], ["d%d" % i], axis=0,
                                      name="gather%d" % i))
    nodes += [
        helper.make_node("Div", ["d1", "groups"], ["cpg"], name="div"),
        helper.make_node("Unsqueeze", ["d0", "axes"], ["u0"], name="u0"),
        helper.make_node("Unsqueeze", ["cpg", "axes"], ["u2"], name="u2"),
        helper.make_node("Unsqueeze", ["d2", "axes"], ["u3"], name="u3"),
        helper.make_node("Unsqueeze", ["d3", "axes"], ["u4"], name="u4"),
        helper.make_node("Concat", ["u0", "g1", "u2", "u3", "u4"], ["s5"], axis=0,
                         name="concat5"),
        helper.make_node("Reshape", ["x", "s5"], ["r5"], name="reshape5"),
        helper.make_node("Transpose", ["r5"], ["t"], perm=[0, 2, 1, 3, 4], name="transpose"),
        helper.make_node("Concat", ["u0", "minus1", "u3", "u4"], ["s4"], axis=0,
                         name="concat4"),
        helper.make_node("Reshape", ["t", "s4"], ["y"], name="reshape4"),
    ]
    inits = [numpy_helper.from_array(np.array(i, np.int64), "i%d" % i) for i in range(4)]
    inits += [numpy_helper.from_array(np.array(2, np.int64), "groups"),
              numpy_helper.from_array(np.array([0], np.int64), "axes"),
              numpy_helper.from_array(np.array([2], np.int64), "g1"),
              numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    save_model("channel_shuffle.onnx", nodes, [vi("x", TensorProto.FLOAT, ["batch", 4, 2, 2])],
               [vi("y", TensorProto.FLOAT, ["batch", 4, 2, 2])], inits)
    x = rand(42, (1, 4, 2, 2))
    save_npy("channel_shuffle_x.npy", x)
    save_npy("channel_shuffle_y.npy",
             x.reshape(1, 2, 2, 2, 2).transpose(0, 2, 1, 3, 4).reshape(1, 4, 2, 2).copy())


def external_suite():
    """A backend-test folder of a model whose tensors all lie in weights.bin beside it
    (external data: how models over protobuf's 2 GiB are stored): MatMul and Add of
    float32 initializers, Mul by a Constant node's value, Reshape by an int64 shape."""
    root = os.path.join(OUT, "external")
    shutil.rmtree(root, ignore_errors=True)
    d = os.path.join(root, "test_external_weights")
    os.makedirs(os.path.join(d, "test_data_set_0"))
    x, w, b, c = rand(91, (2, 4)), rand(92, (4, 3)), rand(93, (3,)), rand(94, (3,))
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"]),
        helper.make_node("Add", ["mm", "b"], ["add"]),
        helper.make_node("Constant", [], ["c"], name="scale",
                         value=numpy_helper.from_array(c, "c")),
        helper.make_node("Mul", ["add", "c"], ["mul"]),
        helper.make_node("Reshape", ["mul", "shape"], ["y"]),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array([3, 2], np.int64), "shape")]
    graph = helper.make_graph(nodes, "external", [vi("x", TensorProto.FLOAT, [2, 4])],
                              [vi("y", TensorProto.FLOAT, [3, 2])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    y = ((x.astype(np.float64) @ w + b) * c).reshape(3, 2).astype(np.float32)
    save_test_folder(d, model, [("x", x)], [y])
    onnx.save_model(model, os.path.join(d, "model.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="weights.bin", size_threshold=0,
                    convert_attribute=True)
    # Every tensor moved out, the Constant's included: what the test is about.
    saved = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
    tensors = list(saved.graph.initializer) + [saved.graph.node[2].attribute[0].t]
    assert all(t.data_location == TensorProto.EXTERNAL for t in tensors)


def einsum_suite():
    """A backend-test folder of Einsum in float32 (the ONNX suite's Einsum tests are all
    double): numpy.einsum's results for batch matmul, maxvit's attention equations (capital
    letters and spaces), implicit outputs, an ellipsis broadcasting size-1 axes, three
    operands, an outer product, sums, a transpose, diagonals and a trace."""
    root = os.path.join(OUT, "einsum")
    shutil.rmtree(root, ignore_errors=True)

    def test(name, equation, operands, opset=12):
        d = os.path.join(root, name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        names = ["x%d" % i for i in range(len(operands))]
        y = np.einsum(equation.replace(" ", ""), *[o.astype(np.float64) for o in operands])
        y = np.asarray(y, np.float32)
        graph = helper.make_graph(
            [helper.make_node("Einsum", names, ["y"], equation=equation)], name,
            [vi(n, TensorProto.FLOAT, list(o.shape)) for n, o in zip(names, operands)],
            [vi("y", TensorProto.FLOAT, list(y.shape))])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 7
        save_test_folder(d, model, list(zip(names, operands)), [y])

    test("test_einsum_batch_matmul_f32", "bij, bjk -> bik", [rand(91, (5, 2, 3)), rand(92, (5, 3, 4))])
    test("test_einsum_maxvit_scores", "B G H I D, B G H J D -> B G H I J",
         [rand(93, (1, 2, 3, 4, 5)), rand(94, (1, 2, 3, 6, 5))])
    test("test_einsum_maxvit_values", "B G H I J, B G H J D -> B G H I D",
         [rand(95, (1, 2, 3, 4, 6)), rand(96, (1, 2, 3, 6, 5))])
    test("test_einsum_implicit", "ij,jk", [rand(97, (3, 4)), rand(98, (4, 2))])
    test("test_einsum_implicit_sorted", "ba,cb", [rand(99, (3, 4)), rand(100, (2, 3))])
    test("test_einsum_ellipsis_broadcast", "...ij,...jk->...ik",
         [rand(101, (2, 1, 3, 4)), rand(102, (3, 4, 5))])
    test("test_einsum_three_operands", "ij,jk,kl->il",
         [rand(103, (2, 3)), rand(104, (3, 4)), rand(105, (4, 5))])
    test("test_einsum_outer", "i,j->ij", [rand(106, (3,)), rand(107, (4,))])
    test("test_einsum_inner_f32", "i,i", [rand(108, (5,)), rand(109, (5,))])
    test("test_einsum_sum_f32", "ij->i", [rand(110, (3, 4))])
    test("test_einsum_sum_all", "ijk->", [rand(111, (2, 3, 4))])
    test("test_einsum_transpose_f32", "ijk->kij", [rand(112, (2, 3, 4))])
    test("test_einsum_contract_and_sum", "bij,bkj->b", [rand(113, (2, 3, 4)), rand(114, (2, 5, 4))])
    test("test_einsum_diagonal", "ii->i", [rand(115, (3, 3))])
    test("test_einsum_batch_diagonal_f32", "...ii ->...i", [rand(116, (3, 5, 5))])
    test("test_einsum_trace", "ii", [rand(117, (4, 4))])
    test("test_einsum_diagonal_then_matmul", "iij,jk->ik", [rand(118, (3, 3, 2)), rand(119, (2, 4))])


def float64_suite():
    """A backend-test folder of double models beyond the ONNX suite's double tests (Cast,
    Max/Min, Mod, ReduceLogSumExp, Einsum, EyeLike): Conv with a bias, Gemm, a batched
    MatMul, MaxPool and AveragePool with padding, GlobalAveragePool, Softmax,
    BatchNormalization, Relu/Sigmoid/Mul/Add chains with double constants, ReduceMean and
    ReduceSum, Cast to int32 and float32; expected outputs computed by numpy in double."""
    root = os.path.join(OUT, "float64")
    shutil.rmtree(root, ignore_errors=True)

    def d(seed, shape, lo=-1.0, hi=1.0):
        return np.random.default_rng(seed).uniform(lo, hi, size=shape)

    def f64(name, v):
        return numpy_helper.from_array(np.asarray(v, np.float64), name)

    x = d(120, (2, 3, 6, 6))
    w, b = d(121, (4, 3, 3, 3)), d(122, (4,))
    single_input_test(root, "test_conv_double", [
        helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 0, 1, 2], strides=[1, 2])],
        x, conv2d(x, w, b, [1, 0, 1, 2], [1, 2]), [f64("w", w), f64("b", b)])
    a, gw, gc = d(123, (3, 5)), d(124, (4, 5)), d(125, (4,))
    single_input_test(root, "test_gemm_double", [
        helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
        a, 0.5 * a @ gw.T + 2.0 * gc, [f64("w", gw), f64("c", gc)])
    a, mb = d(126, (2, 3, 4)), d(127, (4, 5))
    single_input_test(root, "test_matmul_double_batched",
                      [helper.make_node("MatMul", ["x", "m"], ["y"])], a, a @ mb, [f64("m", mb)])
    single_input_test(root, "test_maxpool_double_pads", [
        helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1])], x, pool2d(x, 3, 2, [1, 1, 1, 1], "max", -np.inf))
    single_input_test(root, "test_averagepool_double_pads", [
        helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                         pads=[1, 1, 1, 1])], x,
        pool2d(x, 2, 2, [1, 1, 1, 1], "avg", 0.0, count_include_pad=False))
    single_input_test(root, "test_globalaveragepool_double",
                      [helper.make_node("GlobalAveragePool", ["x"], ["y"])], x,
                      x.mean(axis=(2, 3), keepdims=True))
    s = d(128, (2, 3, 5), -4.0, 4.0)
    single_input_test(root, "test_softmax_double", [helper.make_node("Softmax", ["x"], ["y"])],
                      s, softmax(s, -1))
    g, bb, m, v = d(129, (3,)), d(130, (3,)), d(131, (3,)), d(132, (3,), 0.5, 2.0)
    single_input_test(root, "test_batchnorm_double", [
        helper.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"], epsilon=1e-5)],
        x, (x - m.reshape(1, 3, 1, 1)) / np.sqrt(v.reshape(1, 3, 1, 1) + 1e-5)
        * g.reshape(1, 3, 1, 1) + bb.reshape(1, 3, 1, 1),
        [f64("g", g), f64("b", bb), f64("m", m), f64("v", v)])
    k = np.float64(0.1)
    single_input_test(root, "test_activations_double", [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("Mul", ["s", "k"], ["sk"]),
        helper.make_node("Add", ["r", "sk"], ["y"])], s,
        np.maximum(s, 0) + 1 / (1 + np.exp(-s)) * k, [f64("k", k)])
    single_input_test(root, "test_reduce_mean_sum_double", [
        helper.make_node("ReduceMean", ["x"], ["mean"], axes=[1], keepdims=0),
        helper.make_node("ReduceSum", ["mean", "axes"], ["y"], keepdims=1)], s,
        s.mean(axis=1).sum(axis=1, keepdims=True),
        [numpy_helper.from_array(np.array([1], np.int64), "axes")])
    c = np.array([[2.9, -2.9, 1e9], [0.5, -0.5, 7.0]])
    single_input_test(root, "test_cast_double_to_int32",
                      [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32)], c,
                      c.astype(np.int32))
    single_input_test(root, "test_cast_double_relu_float", [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT)], s,
        np.maximum(s, 0).astype(np.float32))
    # float32 between two casts: the opencl target runs the Conv and Relu, the host the
    # casts (regions split around float64)
    w32 = w.astype(np.float32)
    xf = x.astype(np.float32).astype(np.float64)
    single_input_test(root, "test_cast_float_conv_double", [
        helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT),
        helper.make_node("Conv", ["xf", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Cast", ["r"], ["y"], to=TensorProto.DOUBLE)], x,
        np.maximum(conv2d(xf, w32.astype(np.float64), np.zeros(4), [1, 1, 1, 1], [1, 1]), 0)
        .astype(np.float32).astype(np.float64),
        [numpy_helper.from_array(w32, "w")])


def main():
    os.makedirs(OUT, exist_ok=True)
    small_cnn()
    ops13()
    legacy7()
    softmaxes()
    refused()
    dropout_training()
    odd_names()
    conformance_suite()
    reductions_suite()
    shape_ops_suite()
    losses_suite()
    old_opsets_suite()
    pool_indices_suite()
    pad_convt_suite()
    index_ops_suite()
    resize_suite()
    channel_shuffle()
    einsum_suite()
    float64_suite()
    external_suite()


if __name__ == "__main__":
    main()
