#!/usr/bin/env python3
"""Multiply-accumulate counts of torchvision's resnet18 and mobilenet_v2 (batch 1,
3x224x224), computed from the published layer lists independently of byocl's builders.
tests/test_models.c embeds the numbers this prints: conv2d + dense MACs (FLOPs = 2 * MACs)
and the number of weight values (torchvision's parameter count, which it checks against the
published figure, plus batch_norm's moving mean and variance, which byocl keeps as
constants too)."""


def out_size(size, k, stride, pad):
    return (size + 2 * pad - k) // stride + 1


class Counter:
    def __init__(self):
        self.macs = 0
        self.convs = 0
        self.params = 0   # torchvision's count: weights, biases, bn gamma and beta
        self.bn_stats = 0  # bn moving mean and variance

    def conv(self, hw, in_c, out_c, k, stride, pad, groups=1):
        o = out_size(hw, k, stride, pad)
        self.macs += out_c * o * o * (in_c // groups) * k * k
        self.convs += 1
        self.params += out_c * (in_c // groups) * k * k + 2 * out_c  # conv, then bn
        self.bn_stats += 2 * out_c
        return o

    def dense(self, in_f, out_f):
        self.macs += in_f * out_f
        self.params += in_f * out_f + out_f


def resnet18():
    c = Counter()
    hw = c.conv(224, 3, 64, 7, 2, 3)
    hw = out_size(hw, 3, 2, 1)  # max_pool2d
    in_c = 64
    for out_c, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for block in range(2):
            s = stride if block == 0 else 1
            o = c.conv(hw, in_c, out_c, 3, s, 1)
            c.conv(o, out_c, out_c, 3, 1, 1)
            if s != 1 or in_c != out_c:
                c.conv(hw, in_c, out_c, 1, s, 0)
            hw, in_c = o, out_c
    c.dense(512, 1000)
    return c


def mobilenet_v2():
    c = Counter()
    hw = c.conv(224, 3, 32, 3, 2, 1)
    in_c = 32
    for t, out_c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                           (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = in_c * t
            if t != 1:
                c.conv(hw, in_c, hidden, 1, 1, 0)
            hw = c.conv(hw, hidden, hidden, 3, stride, 1, groups=hidden)
            c.conv(hw, hidden, out_c, 1, 1, 0)
            in_c = out_c
    c.conv(hw, in_c, 1280, 1, 1, 0)
    c.dense(1280, 1000)
    return c


if __name__ == "__main__":
    # torchvision's published parameter counts
    for (name, c), published in zip([("resnet18", resnet18()), ("mobilenet_v2", mobilenet_v2())],
                                    [11689512, 3504872]):
        assert c.params == published, (name, c.params)
        print(f"{name}: conv2d={c.convs} MACs={c.macs} FLOPs={2 * c.macs} "
              f"weight values={c.params + c.bn_stats}")
