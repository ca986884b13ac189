#!/usr/bin/python3
"""Exports torchvision's resnet18, mobilenet_v2 and squeezenet1_1 to ONNX, with random
weights (nothing is downloaded), together with a fixed input and PyTorch's output for it,
so that byocl's ONNX import can be checked against PyTorch on real CNNs.

Needs Debian's python3-torch, python3-torchvision and python3-onnx (run with
/usr/bin/python3). Writes into OUT_DIR (default: build/torchvision):

  <name>.onnx         the model, opset 13, input "input" of shape (1, 3, 224, 224)
  <name>_input.npy    the input: uniform in [-1, 1) from seed 0, float32
  <name>_output.npy   PyTorch's output (1, 1000), float32, computed in float64 and rounded

    /usr/bin/python3 tools/export_torchvision.py [OUT_DIR]

The ctest `test_torchvision` (tests/test_torchvision.c) then runs each model with
`byocl run` (reference executor, --target host, --target opencl) and checks the relative L2
error against PyTorch's output.
"""

import os
import sys

import numpy as np

try:
    # libonnx-testdata alone makes `onnx` a bare namespace package: ask for the checker.
    import onnx
    import onnx.checker
    import torch
    import torchvision
except ImportError as e:
    sys.exit("export_torchvision.py: %s; install Debian's python3-torch, python3-torchvision "
             "and python3-onnx, and run it with /usr/bin/python3" % e)

MODELS = ("resnet18", "mobilenet_v2", "squeezenet1_1")
OPSET = 13


def export(name, out_dir):
    torch.manual_seed(0)  # the random weights are the same on every run
    # weights=None: torchvision's random initialization, no download.
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = np.random.default_rng(0).uniform(-1, 1, size=(1, 3, 224, 224)).astype(np.float32)
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, torch.from_numpy(x), path, input_names=["input"],
                      output_names=["output"], opset_version=OPSET, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    # The reference in float64: PyTorch's float32 kernels differ from byocl's by rounding,
    # and the comparison should measure byocl, not PyTorch's own float32 error.
    with torch.no_grad():
        y = model.double()(torch.from_numpy(x).double()).numpy()
    np.save(os.path.join(out_dir, name + "_input.npy"), x)
    np.save(os.path.join(out_dir, name + "_output.npy"), y.astype(np.float32))
    print("wrote %s (output norm %.6g)" % (path, float(np.linalg.norm(y))))


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join("build", "torchvision")
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(2)
    for name in MODELS:
        export(name, out_dir)


if __name__ == "__main__":
    main()
