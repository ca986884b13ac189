#!/usr/bin/python3
"""Exports torchvision's classification models to ONNX with random weights (nothing is
downloaded), each with a fixed input and PyTorch's output for it, so that byocl's ONNX
import can be checked against PyTorch on real CNNs.

Needs Debian's python3-torch, python3-torchvision and python3-onnx (run with
/usr/bin/python3; `make test-torchvision` installs them).

    /usr/bin/python3 tools/export_torchvision.py [--quick | --all | --models A,B,...] [OUT_DIR]

  (no choice)   resnet18, mobilenet_v2 and squeezenet1_1 (what tools/bench_peers.sh times)
  --quick       the smallest model of each family (22 on torchvision 0.14)
  --all         every classification model torchvision lists
                (torchvision.models.list_models(module=torchvision.models): 80 on 0.14)
  --models      the models named

OUT_DIR (default build/torchvision) receives, per model:

  <name>.onnx         the model, opset 13, input "input" of shape (1, 3, S, S), S = 224
                      (299 for inception_v3)
  <name>.onnx.data    for a model over protobuf's 2 GiB (regnet_y_128gf, vit_h_14): its
                      weights, as ONNX external data that <name>.onnx points to (byocl
                      reads them from there; keep the two files together)
  <name>_input.npy    the input: uniform in [-1, 1) from seed 0, float32
  <name>_output.npy   PyTorch's output (1, 1000), float32, computed in float64 and rounded
  <name>_output_f32.npy  PyTorch's output computed in float32: how far float32 arithmetic
                      itself lands from the float64 output on this model (deep networks
                      with random weights, resnet152's, amplify rounding), so the test can
                      tell byocl's error from the model's own sensitivity

and models.tsv, one line per model asked for: name, family, parameters, input size,
seconds taken, and "ok" or why the export failed (e.g. an op PyTorch cannot export).
A model already exported (its three files present) is kept; its float32 output is added
when missing. The ctest `test_torchvision`
(tests/test_torchvision.c) runs each model of models.tsv with `byocl run` and compares.
"""

import argparse
import os
import re
import shutil
import sys
import time
import warnings

import numpy as np

try:
    # libonnx-testdata alone makes `onnx` a bare namespace package: ask for the checker.
    import onnx
    import onnx.checker
    import onnx.external_data_helper
    import torch
    import torchvision
except ImportError as e:
    sys.exit("export_torchvision.py: %s; install Debian's python3-torch, python3-torchvision "
             "and python3-onnx, and run it with /usr/bin/python3" % e)

DEFAULT_MODELS = ("resnet18", "mobilenet_v2", "squeezenet1_1")
OPSET = 13
INPUT_SIZE = {"inception_v3": 299}


def family(name):
    """resnet18 -> resnet, wide_resnet50_2 -> wide_resnet, regnet_x_400mf -> regnet_x,
    efficientnet_v2_s -> efficientnet_v2, shufflenet_v2_x0_5 -> shufflenet_v2,
    vit_b_16 -> vit, vgg11_bn -> vgg: the name without its size words and numbers."""
    sizes = {"tiny", "small", "base", "large", "bn"}
    parts = name.split("_")
    kept = [re.sub(r"\d+$", "", parts[0])]
    for part in parts[1:]:
        word = re.sub(r"\d+$", "", part)
        if re.fullmatch(r"v\d|[xy]", part):  # a version, or regnet's x/y: a family of its own
            kept.append(part)
        elif re.fullmatch(r"[a-z]{2,}", word) and word not in sizes:
            kept.append(word)
    return "_".join(kept)


def num_params(name):
    """The parameter count torchvision's weight metadata gives (no model built, nothing
    downloaded), or None for a model without pretrained weights."""
    try:
        weights = torchvision.models.get_model_weights(name)
    except (ValueError, KeyError):
        return None
    return min(w.meta["num_params"] for w in weights)


def choose(args):
    everything = torchvision.models.list_models(module=torchvision.models)
    if args.all:
        return everything
    if args.quick:
        smallest = {}
        for name in everything:
            n = num_params(name) or float("inf")
            f = family(name)
            if f not in smallest or n < smallest[f][0]:
                smallest[f] = (n, name)
        return sorted(name for _, name in smallest.values())
    if args.models:
        names = [m for m in args.models.split(",") if m]
        unknown = [m for m in names if m not in everything]
        if unknown:
            sys.exit("export_torchvision.py: torchvision %s has no classification model %s "
                     "(list_models gives %d)" % (torchvision.__version__, ", ".join(unknown),
                                                 len(everything)))
        return names
    return list(DEFAULT_MODELS)


def exported(out_dir, name):
    return all(os.path.isfile(os.path.join(out_dir, name + s))
               for s in (".onnx", "_input.npy", "_output.npy"))


def fill_zero_weights(model):
    """Weights that torchvision initializes to zero (vit's classification head) would make
    the output zero whatever byocl computes: they get small random values instead."""
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                p.copy_(torch.randn(p.shape, generator=generator) * 0.02)


def depends_on_input(model, x):
    """Whether the float64 output changes with the input by more than 1% (relative L2):
    some initializations (googlenet's truncated normal of std 0.01) make activations
    vanish, and an output that hardly depends on the input says little about the layers
    before it at the test's 1e-4."""
    other = np.random.default_rng(1).uniform(-1, 1, size=x.shape)
    with torch.no_grad():
        a = model.double()(torch.from_numpy(x).double()).numpy()
        b = model.double()(torch.from_numpy(other).double()).numpy()
    return np.linalg.norm(a - b) > 1e-2 * np.linalg.norm(a)


def calibrate_batch_norms(model, shape):
    """Running statistics measured on one random batch (of another seed than the test
    input) instead of the initial mean 0 and variance 1, so that each normalization
    normalizes and activations keep their scale through the depth."""
    batch = torch.from_numpy(np.random.default_rng(2).uniform(-1, 1, size=shape))
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # a plain average: here, of the one batch
    model.train()
    with torch.no_grad():
        model.double()(batch.double())
    model.eval()


def register_missing_symbolics():
    """PyTorch 1.13's exporter has no symbolic for aten::zero (Tensor.zero_, which
    swin_v2's attention uses on a slice of its qkv bias): it is zeros_like, as newer
    PyTorch exports it."""
    from torch.onnx import symbolic_opset9

    def zero(g, self):
        return symbolic_opset9.zeros_like(g, self)

    torch.onnx.register_custom_op_symbolic("aten::zero", zero, OPSET)


def prepared(name):
    """The model with its random weights as exported, and the input: the same on every run
    (seeded), so that a later run can add the float32 output of an exported model."""
    torch.manual_seed(0)
    size = INPUT_SIZE.get(name, 224)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. inception_v3's note on init_weights
        # weights=None: torchvision's random initialization, no download.
        model = torchvision.models.get_model(name, weights=None).eval()
    fill_zero_weights(model)
    x = np.random.default_rng(0).uniform(-1, 1, size=(1, 3, size, size)).astype(np.float32)
    if not depends_on_input(model, x):
        calibrate_batch_norms(model, x.shape)
        if not depends_on_input(model, x):
            return None, x
    return model.float(), x


def save_float32_output(model, x, out_dir, name):
    with torch.no_grad():
        y = model.float()(torch.from_numpy(x)).numpy()
    np.save(os.path.join(out_dir, name + "_output_f32.npy"), y.astype(np.float32))


def add_float32_output(name, out_dir):
    """For a model exported before the float32 output was: computes it."""
    if os.path.isfile(os.path.join(out_dir, name + "_output_f32.npy")):
        return
    model, x = prepared(name)
    if model is not None:
        save_float32_output(model, x, out_dir, name)


def tensors(graph):
    """The graph's tensors that can hold values: initializers and node attributes."""
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors


def gather_external_data(exported_path, path, data_name):
    """Writes the model that torch.onnx.export wrote to exported_path as `path` (its
    .part), its external data gathered from the exporter's file per tensor into one
    file, data_name, beside it. PyTorch 1.13 exports a model over protobuf's 2 GiB that
    way, and a folder of hundreds of weight files is unwieldy. One tensor is in memory
    at a time."""
    model = onnx.load(exported_path, load_external_data=False)
    src = os.path.dirname(exported_path)
    with open(os.path.join(os.path.dirname(path), data_name), "wb") as out:
        for t in tensors(model.graph):
            if t.data_location != onnx.TensorProto.EXTERNAL:
                continue
            info = onnx.external_data_helper.ExternalDataInfo(t)
            with open(os.path.join(src, info.location), "rb") as f:
                f.seek(info.offset or 0)
                data = f.read(info.length) if info.length else f.read()
            offset = out.tell()
            out.write(data)
            del t.external_data[:]
            for key, value in (("location", data_name), ("offset", offset),
                               ("length", len(data))):
                t.external_data.add(key=key, value=str(value))
    onnx.save(model, path + ".part")


def export_onnx(model, x, name, path):
    """Exports to path + ".part" (with path's external data beside it when the model is
    over 2 GiB); raises the exporter's or the checker's error."""
    work = path + ".export"  # the exporter's files: the model, and per-tensor weight files
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        exported = os.path.join(work, "model.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on Python control flow
            torch.onnx.export(model, torch.from_numpy(x), exported, input_names=["input"],
                              output_names=["output"], opset_version=OPSET,
                              do_constant_folding=True)
        if len(os.listdir(work)) > 1:  # the weights went to files of their own
            gather_external_data(exported, path, name + ".onnx.data")
        else:
            os.replace(exported, path + ".part")
        onnx.checker.check_model(path + ".part")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def export(name, out_dir):
    """Writes the model's files; returns "ok" or the reason it could not."""
    model, x = prepared(name)
    if model is None:
        return "not exported: PyTorch's output does not depend on the input"
    path = os.path.join(out_dir, name + ".onnx")
    partial = path + ".part"
    try:
        export_onnx(model, x, name, path)
    except Exception as e:  # the exporter's own refusal: recorded, the others go on
        if os.path.exists(partial):
            os.remove(partial)
        return "not exported: %s" % str(e).splitlines()[0][:200]
    # The reference in float64: PyTorch's float32 kernels differ from byocl's by rounding,
    # and the comparison should measure byocl, not PyTorch's own float32 error.
    with torch.no_grad():
        y = model.double()(torch.from_numpy(x).double()).numpy()
    if not np.std(y) > 0:  # a comparison with a constant would say nothing
        os.remove(partial)
        return "not exported: PyTorch's output is constant"
    np.save(os.path.join(out_dir, name + "_input.npy"), x)
    save_float32_output(model, x, out_dir, name)
    np.save(os.path.join(out_dir, name + "_output.npy"), y.astype(np.float32))
    os.replace(partial, path)  # the .onnx last: its presence says the files are complete
    return "ok"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--quick", action="store_true",
                        help="the smallest model of each family")
    choice.add_argument("--all", action="store_true", help="every classification model")
    choice.add_argument("--models", help="comma-separated model names")
    parser.add_argument("out_dir", nargs="?", default=os.path.join("build", "torchvision"))
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(os.cpu_count() or 2)
    register_missing_symbolics()
    rows = []
    for name in choose(args):
        start = time.time()
        if exported(args.out_dir, name):
            add_float32_output(name, args.out_dir)
            status = "ok"
        else:
            status = export(name, args.out_dir)
        seconds = time.time() - start
        rows.append("%s\t%s\t%s\t%d\t%.1f\t%s" % (
            name, family(name), num_params(name) or "-", INPUT_SIZE.get(name, 224), seconds,
            status))
        print("%-20s %6.1f s  %s" % (name, seconds, status), flush=True)
    manifest = os.path.join(args.out_dir, "models.tsv")
    with open(manifest + ".part", "w") as f:
        f.write("# model\tfamily\tparameters\tinput size\texport seconds\tstatus\n")
        f.write("\n".join(rows) + "\n")
    os.replace(manifest + ".part", manifest)
    print("wrote %s (%d models)" % (manifest, len(rows)))


if __name__ == "__main__":
    main()
