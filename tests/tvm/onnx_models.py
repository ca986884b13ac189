"""ONNX models for the TVM tests and benchmarks, written with onnx.helper (random weights,
opset 13, the node forms torch.onnx.export gives torchvision's models: Conv with bias,
BatchNormalization folded away as torch does in eval export, Relu, Clip(0, 6) for ReLU6,
MaxPool, GlobalAveragePool, Flatten, Gemm with transB)."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class _Graph:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def weight(self, *shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        scale = scale if scale is not None else (2.0 / fan_in) ** 0.5
        name = self.name("w")
        value = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def conv(self, x, c_in, c_out, k, stride=1, groups=1):
        w = self.weight(c_out, c_in // groups, k, k)
        b = self.weight(c_out, scale=0.1)
        pad = k // 2
        return self.node("Conv", [x, w, b], kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4, group=groups)

    def clip6(self, x):
        if not any(i.name == "zero" for i in self.inits):
            self.inits.append(numpy_helper.from_array(np.array(0, np.float32), "zero"))
            self.inits.append(numpy_helper.from_array(np.array(6, np.float32), "six"))
        return self.node("Clip", [x, "zero", "six"])

    def head(self, x, c, classes):
        g = self.node("GlobalAveragePool", [x])
        f = self.node("Flatten", [g], axis=1)
        return self.node("Gemm", [f, self.weight(classes, c), self.weight(classes, scale=0.1)],
                         transB=1)

    def model(self, x_shape, y, y_shape, name):
        graph = helper.make_graph(
            self.nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info(y, TensorProto.FLOAT, y_shape)], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def small_cnn(relu6=False, seed=0):
    """A few layers of each kind: conv, bias, relu (or relu6), max pool, depthwise conv, a
    residual add, global pool, fully connected, softmax. Input (1, 3, 16, 16)."""
    g = _Graph(seed)
    act = g.clip6 if relu6 else (lambda x: g.node("Relu", [x]))
    x = act(g.conv("input", 3, 8, 3))
    p = g.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    d = act(g.conv(p, 8, 8, 3, groups=8))
    a = g.node("Add", [d, p])
    y = g.node("Softmax", [g.head(a, 8, 10)], axis=1)
    return g.model([1, 3, 16, 16], y, [1, 10], "small_cnn")


def resnet18(seed=0):
    """torchvision's resnet18 layout (BatchNorm folded into the convolutions)."""
    g = _Graph(seed)
    x = g.node("Relu", [g.conv("input", 3, 64, 7, stride=2)])
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = 64
    for width, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for block in range(2):
            s = stride if block == 0 else 1
            y = g.node("Relu", [g.conv(x, c, width, 3, stride=s)])
            y = g.conv(y, width, width, 3)
            skip = g.conv(x, c, width, 1, stride=s) if (s != 1 or c != width) else x
            x = g.node("Relu", [g.node("Add", [y, skip])])
            c = width
    return g.model([1, 3, 224, 224], g.head(x, 512, 1000), [1, 1000], "resnet18")


def mobilenet_v2(seed=0):
    """torchvision's mobilenet_v2 layout (BatchNorm folded, ReLU6 as Clip(0, 6))."""
    g = _Graph(seed)
    x = g.clip6(g.conv("input", 3, 32, 3, stride=2))
    c = 32
    for t, width, n, stride in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            s = stride if i == 0 else 1
            hidden = c * t
            y = g.clip6(g.conv(x, c, hidden, 1)) if t != 1 else x
            y = g.clip6(g.conv(y, hidden, hidden, 3, stride=s, groups=hidden))
            y = g.conv(y, hidden, width, 1)
            x = g.node("Add", [x, y]) if s == 1 and c == width else y
            c = width
    x = g.clip6(g.conv(x, c, 1280, 1))
    return g.model([1, 3, 224, 224], g.head(x, 1280, 1000), [1, 1000], "mobilenet_v2")


MODELS = {"small_cnn": small_cnn, "small_cnn_relu6": lambda: small_cnn(relu6=True),
          "resnet18": resnet18, "mobilenet_v2": mobilenet_v2}
