#!/usr/bin/env python3
"""Writes tests/fixtures/text/resnet18_tvm.relay: the text TVM prints for
`tvm.relay.testing.resnet.get_workload(num_layers=18, batch_size=1)` with
`mod.astext(show_meta_data=False)` (TVM 0.10-0.19 style: parameter types repeated in
/* ty=... */ comments, every binding typed, batch_norm tuples read with %N.0).

Current apache-tvm wheels (0.25+) no longer ship Relay, so this script reproduces the
printer's output for relay/testing/resnet.py's graph: same layer order (post-order DFS),
same parameter order (free_vars), same non-default attributes. The shapes are computed
here, independently of byocl, and the test checks byocl's inferred types against them.

Usage: python3 tests/gen/gen_resnet18_relay.py > tests/fixtures/text/resnet18_tvm.relay
"""


def ty(shape, dtype="float32"):
    return "Tensor[(%s), %s]" % (", ".join(str(d) for d in shape), dtype)


class Printer:
    def __init__(self):
        self.params = []  # (name, shape)
        self.lines = []
        self.counter = 0

    def var(self, name, shape):
        self.params.append((name, shape))
        return "%" + name

    def bind(self, expr, type_str):
        ref = "%%%d" % self.counter
        self.counter += 1
        self.lines.append("  %s = %s /* ty=%s */;" % (ref, expr, type_str))
        return ref


def conv_out(size, kernel, stride, pad):
    return (size + 2 * pad - kernel) // stride + 1


def main():
    p = Printer()
    shape = [1, 3, 224, 224]

    def batch_norm(data, shape, name, scale=True):
        c = shape[1]
        args = [data] + [p.var("%s_%s" % (name, s), [c])
                         for s in ("gamma", "beta", "moving_mean", "moving_var")]
        attrs = "epsilon=2e-05f" + ("" if scale else ", scale=False")
        tup = p.bind("nn.batch_norm(%s, %s)" % (", ".join(args), attrs),
                     "(%s, %s, %s)" % (ty(shape), ty([c]), ty([c])))
        return p.bind("%s.0" % tup, ty(shape))

    def conv(data, shape, name, channels, kernel, stride, pad):
        w = p.var(name + "_weight", [channels, shape[1], kernel, kernel])
        attrs = []
        if stride != 1:
            attrs.append("strides=[%d, %d]" % (stride, stride))
        if pad:
            attrs.append("padding=[%d, %d, %d, %d]" % (pad, pad, pad, pad))
        attrs.append("channels=%d" % channels)
        attrs.append("kernel_size=[%d, %d]" % (kernel, kernel))
        h = conv_out(shape[2], kernel, stride, pad)
        out = [shape[0], channels, h, h]
        return p.bind("nn.conv2d(%s, %s, %s)" % (data, w, ", ".join(attrs)), ty(out)), out

    def relu(data, shape):
        return p.bind("nn.relu(%s)" % data, ty(shape))

    def residual_unit(data, shape, channels, stride, dim_match, name):
        bn1 = batch_norm(data, shape, name + "_bn1")
        act1 = relu(bn1, shape)
        conv1, s1 = conv(act1, shape, name + "_conv1", channels, 3, stride, 1)
        bn2 = batch_norm(conv1, s1, name + "_bn2")
        act2 = relu(bn2, s1)
        conv2, s2 = conv(act2, s1, name + "_conv2", channels, 3, 1, 1)
        if dim_match:
            shortcut = data
        else:
            shortcut, _ = conv(act1, shape, name + "_sc", channels, 1, stride, 0)
        return p.bind("add(%s, %s)" % (conv2, shortcut), ty(s2)), s2

    data = p.var("data", shape)
    body = batch_norm(data, shape, "bn_data", scale=False)
    body, shape = conv(body, shape, "conv0", 64, 7, 2, 3)
    body = batch_norm(body, shape, "bn0")
    body = relu(body, shape)
    pooled = [1, 64, conv_out(shape[2], 3, 2, 1), conv_out(shape[3], 3, 2, 1)]
    body = p.bind("nn.max_pool2d(%s, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])"
                  % body, ty(pooled))
    shape = pooled
    filters = [64, 128, 256, 512]
    for stage in range(4):
        stride = 1 if stage == 0 else 2
        body, shape = residual_unit(body, shape, filters[stage], stride, False,
                                    "stage%d_unit1" % (stage + 1))
        body, shape = residual_unit(body, shape, filters[stage], 1, True,
                                    "stage%d_unit2" % (stage + 1))
    body = batch_norm(body, shape, "bn1")
    body = relu(body, shape)
    body = p.bind("nn.global_avg_pool2d(%s)" % body, ty([1, 512, 1, 1]))
    body = p.bind("nn.batch_flatten(%s)" % body, ty([1, 512]))
    fc_w = p.var("fc1_weight", [1000, 512])
    body = p.bind("nn.dense(%s, %s, units=1000)" % (body, fc_w), ty([1, 1000]))
    fc_b = p.var("fc1_bias", [1000])
    body = p.bind("nn.bias_add(%s, %s, axis=-1)" % (body, fc_b), ty([1, 1000]))

    params = ", ".join("%%%s: %s /* ty=%s */" % (n, ty(s), ty(s)) for n, s in p.params)
    print('#[version = "0.0.5"]')
    print("def @main(%s) -> %s {" % (params, ty([1, 1000])))
    print("\n".join(p.lines))
    print("  nn.softmax(%s) /* ty=%s */" % (body, ty([1, 1000])))
    print("}")
    print()


if __name__ == "__main__":
    main()
