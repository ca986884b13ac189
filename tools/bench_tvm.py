#!/usr/bin/env python3
"""Times one ONNX model in Apache TVM alone and in TVM with byocl regions, side by side
(docs/tvm.md, "Benchmarks"): the share of ops offloaded, compile times, whole-model medians
and, with --per-region, each byocl region's time from the Relax VM's profiler.

    build/tvm-venv/bin/python tools/bench_tvm.py resnet18 [--targets opencl host] [--repeat 20]

MODEL is an .onnx file or a model of tests/tvm/onnx_models.py (small_cnn, resnet18,
mobilenet_v2; random weights). Needs apache-tvm 0.27 and onnx (make test installs them into
build/tvm-venv), PYTHONPATH reaching python/ and BYOCL_TVM_LIBRARY naming libbyocl_tvm.so
(both default to this source tree and its build/ folder).
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "tvm"))
os.environ.setdefault("BYOCL_TVM_LIBRARY", os.path.join(HERE, "..", "build", "libbyocl_tvm.so"))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import tvm  # noqa: E402
import tvm.relax.frontend.onnx  # noqa: E402  (not imported by tvm.relax)
from tvm import relax  # noqa: E402

import byocl_tvm  # noqa: E402
import onnx_models  # noqa: E402


def cpu_name():
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def median_ms(vm, x, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        vm["main"](x)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def region_times(vm, x, symbols, repeat):
    """{symbol: median ms} of each byocl region call, timed by a VM instrument."""
    times, started = {s: [] for s in symbols}, {}

    def instrument(func, name, before_run, ret_value, *args):  # pylint: disable=unused-argument
        if name in times:
            if before_run:
                started[name] = time.perf_counter()
            else:
                times[name].append((time.perf_counter() - started.pop(name)) * 1e3)
        return relax.VMInstrumentReturnKind.NO_OP

    vm.set_instrument(instrument)
    for _ in range(repeat):
        vm["main"](x)
    vm.set_instrument(lambda *a: relax.VMInstrumentReturnKind.NO_OP)
    return {s: statistics.median(t) for s, t in times.items() if t}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--targets", nargs="+", default=["opencl", "host"],
                        help="byocl targets to compare with TVM alone, one run each")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--per-region", action="store_true",
                        help="each byocl region's median time (timed by a Relax VM instrument)")
    args = parser.parse_args()

    model = onnx.load(args.model) if args.model.endswith(".onnx") else onnx_models.MODELS[args.model]()
    mod = tvm.relax.frontend.onnx.from_onnx(model, keep_params_in_input=False)
    shape = [int(d) for d in mod["main"].params[0].ty.shape]
    x_np = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x = tvm.runtime.tensor(x_np)
    threads = os.environ.get("TVM_NUM_THREADS", str(os.cpu_count()))
    print(f"{args.model}: {cpu_name()}, {os.cpu_count()} cores, TVM {tvm.__version__}, "
          f"TVM_NUM_THREADS={threads}, median of {args.repeat}")

    ex, t_compile = timed(lambda: tvm.compile(mod, "llvm"))
    vm, t_vm = timed(lambda: relax.VirtualMachine(ex, tvm.cpu()))
    ref, t_first = timed(lambda: vm["main"](x).numpy())
    alone = median_ms(vm, x, args.repeat)
    print(f"  TVM alone          {alone:9.2f} ms   compile {t_compile:5.1f} s, first run {t_first:5.1f} s")

    for target in args.targets:
        report = byocl_tvm.explain(mod, targets=(target,))
        offloaded = report.splitlines()[0]
        pmod, t_part = timed(lambda: byocl_tvm.partition_for_byocl(mod, targets=(target,)))
        regions = byocl_tvm.regions(pmod)
        pmod, t_codegen = timed(lambda: relax.transform.RunCodegen()(pmod))
        ex_b, t_compile = timed(lambda: tvm.compile(pmod, "llvm"))
        vm_b, t_vm = timed(lambda: relax.VirtualMachine(ex_b, tvm.cpu()))
        out, t_first = timed(lambda: vm_b["main"](x).numpy())
        rel = float(np.linalg.norm(out - ref) / np.linalg.norm(ref))
        ms = median_ms(vm_b, x, args.repeat)
        print(f"  TVM + byocl {target:<6} {ms:9.2f} ms   {ms / alone:5.2f}x of TVM alone, rel L2 {rel:.1e}")
        print(f"    {offloaded[len('byocl: '):]}; {len(regions)} regions")
        print(f"    partition {t_part:.1f} s, codegen {t_codegen:.1f} s (byocl compiles each region "
              f"once), tvm.compile {t_compile:.1f} s, VM {t_vm:.1f} s (g++ of the regions' source), "
              f"first run {t_first:.1f} s")
        if args.per_region:
            medians = region_times(vm_b, x, [r[0] for r in regions], args.repeat)
            for symbol, _, n_ops in regions:
                print(f"    {medians.get(symbol, float('nan')):9.2f} ms  {n_ops:3d} ops  {symbol}")


if __name__ == "__main__":
    main()
