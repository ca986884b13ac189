"""byocl inside Apache TVM's Relax (python/byocl_tvm, docs/tvm.md): ONNX models imported by
TVM's frontend, partitioned for byocl, compiled by tvm.compile and run in the Relax VM,
against the same model built by TVM alone; export_library and a reload in a fresh process;
plugins; and every error's message. ctest runs it with the venv's Python (tvm_relax);
it exits 77 (skipped, with the reason) when TVM or onnx cannot be imported.

Environment: BYOCL_TVM_LIBRARY (libbyocl_tvm.so), PYTHONPATH reaching python/, BYOCL_CLI (the
byocl program), BYOCL_PLUGIN_DIR (the test plugins), BYOCL_CACHE_DIR.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    import onnx
    import tvm
    import tvm.relax.frontend.onnx  # not imported by tvm.relax
    from tvm import relax
except ImportError as e:
    print(f"tvm_relax: skipped: cannot import {e.name} ({e}); `make test` installs apache-tvm "
          "and onnx into build/tvm-venv from PyPI (offline?)")
    sys.exit(77)

import byocl_tvm  # noqa: E402
import onnx_models  # noqa: E402

CLI = os.environ.get("BYOCL_CLI", "byocl")
PLUGINS = os.environ.get("BYOCL_PLUGIN_DIR", "")


def rel_l2(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def import_onnx(model):
    return tvm.relax.frontend.onnx.from_onnx(model, keep_params_in_input=False)


def input_of(mod, seed=1):
    shape = [int(d) for d in mod["main"].params[0].ty.shape]
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def run(mod, x):
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    return vm["main"](tvm.runtime.tensor(x)).numpy()


def byocl_build(mod, **kwargs):
    """(partitioned module, its regions, the compiled executable)."""
    pmod = byocl_tvm.partition_for_byocl(mod, **kwargs)
    regions = byocl_tvm.regions(pmod)
    return pmod, regions, tvm.compile(relax.transform.RunCodegen()(pmod), "llvm")


def byocl_partition_cli(model, target):
    """[(region, number of op calls)] of `byocl partition MODEL --target T`."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        onnx.save(model, path)
        text = subprocess.run([CLI, "partition", path, "--target", target], check=True,
                              capture_output=True, text=True).stdout
    regions, current = [], None
    for line in text.splitlines():
        m = re.match(r'def @(\w+)\(.*Compiler="', line)
        if m:
            current = [m.group(1), 0]
            regions.append(current)
        elif line.startswith("}"):
            current = None
        elif current and re.match(r"\s+(%\S+ = )?[\w.]+\(", line):
            current[1] += 1
    return [tuple(r) for r in regions]


class SmallCnn(unittest.TestCase):
    """A small CNN whose ops TVM's importer writes as byocl's importer does."""

    @classmethod
    def setUpClass(cls):
        cls.model = onnx_models.small_cnn()
        cls.mod = import_onnx(cls.model)
        cls.x = input_of(cls.mod)
        cls.ref = run(cls.mod, cls.x)

    def test_opencl_regions_match_byocl_partition(self):
        pmod, regions, ex = byocl_build(self.mod, targets=("opencl",))
        cli = byocl_partition_cli(self.model, "opencl")
        n_ops = sum(r[2] for r in regions)
        print(f"small_cnn on opencl: TVM + byocl {len(regions)} region(s), {n_ops} ops; "
              f"byocl partition {len(cli)} region(s), {sum(n for _, n in cli)} ops")
        self.assertEqual(len(regions), 1)
        self.assertEqual(len(regions), len(cli))
        # Relax writes a bias as reshape + add and Gemm as permute_dims + matmul + add where
        # byocl's importer has bias_add, dense and add, and Flatten as reshape.
        self.assertEqual(n_ops, 16)
        self.assertEqual(regions[0][1], "opencl")
        out = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(self.x)).numpy()
        self.assertLess(rel_l2(out, self.ref), 1e-4)

    def test_explain(self):
        report = byocl_tvm.explain(self.mod, targets=("opencl",))
        self.assertTrue(report.startswith("byocl: 16 of 16 calls offloaded (16 on opencl)\n"),
                        report)
        self.assertIn("= relax.nn.conv2d: opencl\n", report)

    def test_host_target(self):
        _, regions, ex = byocl_build(self.mod, targets=("host",))
        self.assertEqual([r[1:] for r in regions], [("host", 16)])
        out = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(self.x)).numpy()
        self.assertLess(rel_l2(out, self.ref), 1e-4)

    def test_export_and_reload_in_a_fresh_process(self):
        _, regions, ex = byocl_build(self.mod, targets=("opencl",),
                                     target_options={"opencl.buffers": "copy"})
        with tempfile.TemporaryDirectory() as tmp:
            lib = os.path.join(tmp, "model.so")
            ex.export_library(lib)
            np.save(os.path.join(tmp, "x.npy"), self.x)
            # No byocl_tvm on the path: the library needs nothing from Python.
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            code = (
                "import sys, numpy as np, tvm\n"
                "from tvm import relax\n"
                f"vm = relax.VirtualMachine(tvm.runtime.load_module({lib!r}), tvm.cpu())\n"
                f"x = tvm.runtime.tensor(np.load({os.path.join(tmp, 'x.npy')!r}))\n"
                f"np.save({os.path.join(tmp, 'y.npy')!r}, vm['main'](x).numpy())\n"
                "assert 'byocl_tvm' not in sys.modules\n"
            )
            # Captured there too: the variable is read by the library's C code.
            capture_env = dict(env, BYOCL_CAPTURE_DIR=os.path.join(tmp, "cap"))
            subprocess.run([sys.executable, "-c", code], check=True, env=capture_env)
            out = np.load(os.path.join(tmp, "y.npy"))
            [name] = os.listdir(os.path.join(tmp, "cap"))
            np.testing.assert_array_equal(
                np.load(os.path.join(tmp, "cap", name, "output_0.npy")), out)
            np.testing.assert_array_equal(
                out, relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(self.x)).numpy())
            self.assertLess(rel_l2(out, self.ref), 1e-4)

            # The exported region, called by name with a wrong argument.
            symbol = regions[0][0]
            # The VM executable imports the library that defines the region's function.
            region = tvm.runtime.load_module(lib).imports[0][symbol]
            y = tvm.runtime.tensor(np.zeros((1, 10), np.float32))
            with self.assertRaises(TypeError) as e:
                region(tvm.runtime.tensor(self.x.astype(np.float64)), y)
            self.assertEqual(str(e.exception),
                             f"byocl region {symbol}: argument 0 (%input): expected "
                             "float32[1, 3, 16, 16], got float64[1, 3, 16, 16]")
            with self.assertRaises(ValueError) as e:
                region(tvm.runtime.tensor(self.x[:, :2]), y)
            self.assertEqual(str(e.exception),
                             f"byocl region {symbol}: argument 0 (%input): expected "
                             "float32[1, 3, 16, 16], got float32[1, 2, 16, 16]")

            # The library, reloaded where libbyocl_tvm.so is not found.
            env["BYOCL_TVM_LIBRARY"] = "/nonexistent/libbyocl_tvm.so"
            result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                    text=True)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn(
                f"RuntimeError: byocl region {symbol}: cannot load libbyocl_tvm.so "
                "(/nonexistent/libbyocl_tvm.so: cannot open shared object file: No such file or "
                "directory); build byocl with its TVM bridge and set BYOCL_TVM_LIBRARY to the "
                "library's path (docs/tvm.md)", result.stderr)

    def test_capture_and_replay(self):
        _, regions, ex = byocl_build(self.mod, targets=("opencl",))
        symbol = regions[0][0]
        vm = relax.VirtualMachine(ex, tvm.cpu())
        x2 = input_of(self.mod, seed=2)
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, "capture")
            vm["main"](tvm.runtime.tensor(self.x))  # compiles the region; not captured
            with byocl_tvm.capture(folder):
                vm["main"](tvm.runtime.tensor(self.x))
                out = vm["main"](tvm.runtime.tensor(x2)).numpy()
            vm["main"](tvm.runtime.tensor(self.x))  # after the block: not captured
            # TVM names the region after its 16 ops: the folder has its first 111 characters
            # and a hash.
            self.assertGreater(len(symbol), 128)
            [name] = os.listdir(folder)
            self.assertEqual((name[:112], len(name)), (symbol[:111] + "-", 128))
            region_dir = os.path.join(folder, name)
            self.assertEqual(sorted(os.listdir(region_dir)),
                             ["input_input.npy", "manifest.json", "output_0.npy",
                              "region.npz", "region.relay"])
            with open(os.path.join(region_dir, "manifest.json")) as f:
                manifest = json.load(f)
            self.assertEqual((manifest["symbol"], manifest["target"], manifest["runner"]),
                             (symbol, "opencl", "tvm/opencl"))
            self.assertEqual(manifest["timing"]["calls"], 2)
            self.assertEqual([(t["name"], t["shape"]) for t in manifest["inputs"]],
                             [("input", [1, 3, 16, 16])])
            # The last call's tensors: the region is the whole model here.
            np.testing.assert_array_equal(np.load(os.path.join(region_dir, "input_input.npy")), x2)
            np.testing.assert_array_equal(np.load(os.path.join(region_dir, "output_0.npy")), out)

            for target in ("opencl", "host"):
                replay = subprocess.run([CLI, "replay", region_dir, "--target", target],
                                        capture_output=True, text=True)
                self.assertEqual(replay.returncode, 0, replay.stdout + replay.stderr)
                self.assertTrue(replay.stdout.startswith(
                    f"replayed {symbol} of a model on target {target}: built in "), replay.stdout)
                self.assertIn("(captured on tvm/opencl: ", replay.stdout)

            # Only the region named, and none of that name here.
            with byocl_tvm.capture(os.path.join(tmp, "other"), region="byocl_nothing"):
                vm["main"](tvm.runtime.tensor(self.x))
            self.assertFalse(os.path.exists(os.path.join(tmp, "other")))

            # A folder that cannot be made: the run fails and says why.
            blocker = os.path.join(tmp, "a-file")
            open(blocker, "w").close()
            with byocl_tvm.capture(blocker), self.assertRaises(RuntimeError) as e:
                vm["main"](tvm.runtime.tensor(self.x))
            self.assertIn(f"byocl region {symbol}: capturing into {blocker}: cannot create a "
                          f"folder in {blocker}: Not a directory", str(e.exception))


class Conversions(unittest.TestCase):
    def test_renamed_and_reshaped_ops(self):
        # Relax ops whose byocl form differs in name or attributes, on byocl's host backend.
        bb = relax.BlockBuilder()
        a = relax.Var("a", relax.TensorType((2, 3), "float32"))
        b = relax.Var("b", relax.TensorType((3,), "float32"))
        with bb.function("main", [a, b]):
            with bb.dataflow():
                c = bb.emit(relax.op.clip(a, 0.0, 6.0))
                d = bb.emit(relax.op.nn.leakyrelu(c, 0.1))
                e = bb.emit(relax.op.astype(bb.emit(relax.op.add(d, b)), "float16"))
                f = bb.emit(relax.op.permute_dims(e))
                g = bb.emit(relax.op.concat([f, f], axis=1))
                out = bb.emit_output(relax.op.expand_dims(g, [0, 1]))
            bb.emit_func_output(out)
        mod = bb.get()
        report = byocl_tvm.explain(mod, targets=("host",))
        self.assertTrue(report.startswith("byocl: 7 of 7 calls offloaded (7 on host)\n"), report)
        _, regions, ex = byocl_build(mod, targets=("host",))
        self.assertEqual([r[1:] for r in regions], [("host", 7)])
        x = tvm.runtime.tensor(np.linspace(-8, 8, 6, dtype=np.float32).reshape(2, 3))
        y = tvm.runtime.tensor(np.arange(3, dtype=np.float32))
        got = relax.VirtualMachine(ex, tvm.cpu())["main"](x, y).numpy()
        want = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())["main"](x, y).numpy()
        self.assertEqual((got.shape, got.dtype), ((1, 1, 3, 4), np.float16))
        np.testing.assert_array_equal(got, want)


    def test_scalar_constants(self):
        # A 0-d constant is a Relay literal (an .npz member of shape () would read back as
        # shape (1,)); one with no literal (-inf) stays with TVM.
        bb = relax.BlockBuilder()
        a = relax.Var("a", relax.TensorType((), "float32"))
        with bb.function("main", [a]):
            with bb.dataflow():
                b = bb.emit(relax.op.add(a, relax.const(1.5, "float32")))
                out = bb.emit_output(relax.op.maximum(b, relax.const(float("-inf"), "float32")))
            bb.emit_func_output(out)
        mod = bb.get()
        report = byocl_tvm.explain(mod, targets=("host",))
        self.assertIn("= relax.maximum: TVM (a scalar constant float32 -inf (no byocl literal))",
                      report)
        _, regions, ex = byocl_build(mod, targets=("host",))
        self.assertEqual([r[1:] for r in regions], [("host", 1)])
        got = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(np.float32(2)))
        self.assertEqual(float(got.numpy()), 3.5)


class Limits(unittest.TestCase):
    def test_relu6_stays_with_tvm_and_splits_the_region(self):
        # TVM's importer lowers Clip to TIR (R.call_tir of maximum and minimum), which byocl
        # does not read, and a where with an infinite scalar, which byocl's bridge cannot
        # write: byocl partition gives one region, TVM + byocl five (each of the two Clips
        # cuts, and the isnan between its TIR calls is a region of its own).
        model = onnx_models.small_cnn(relu6=True)
        mod = import_onnx(model)
        report = byocl_tvm.explain(mod, targets=("opencl",))
        self.assertIn("R.call_tir of the TIR function maximum: byocl reads Relax ops, not TIR",
                      report)
        _, regions, ex = byocl_build(mod, targets=("opencl",))
        self.assertEqual(len(regions), 5)
        self.assertEqual(len(byocl_partition_cli(model, "opencl")), 1)
        x = input_of(mod)
        out = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(x)).numpy()
        self.assertLess(rel_l2(out, run(mod, x)), 1e-4)

    def test_unsupported_dtype_is_not_claimed(self):
        bb = relax.BlockBuilder()
        a = relax.Var("a", relax.TensorType((2, 3), "float64"))
        with bb.function("main", [a]):
            with bb.dataflow():
                out = bb.emit_output(relax.op.add(a, a))
            bb.emit_func_output(out)
        mod = bb.get()
        report = byocl_tvm.explain(mod, targets=("opencl",))
        self.assertIn("byocl: 0 of 1 calls offloaded (none offloaded)", report)
        self.assertIn("float64", report)
        self.assertEqual(byocl_tvm.regions(byocl_tvm.partition_for_byocl(mod)), [])

    def test_unknown_target(self):
        with self.assertRaises(ValueError) as e:
            byocl_tvm.partition_for_byocl(import_onnx(onnx_models.small_cnn()), targets=("npu",))
        self.assertTrue(str(e.exception).startswith('byocl: unknown target "npu" (targets: host, ref'),
                        str(e.exception))

    def test_missing_library(self):
        env = dict(os.environ, BYOCL_TVM_LIBRARY="/nonexistent/libbyocl_tvm.so")
        code = "import byocl_tvm\nbyocl_tvm.explain(None)\n"
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                text=True)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(
            "byocl_tvm._library.LibraryNotFound: byocl_tvm: cannot load libbyocl_tvm.so "
            "(/nonexistent/libbyocl_tvm.so: /nonexistent/libbyocl_tvm.so: cannot open shared "
            "object file: No such file or directory): build byocl with its TVM bridge",
            result.stderr)


@unittest.skipUnless(PLUGINS, "BYOCL_PLUGIN_DIR not set")
class Plugins(unittest.TestCase):
    """The test plugins of tests/plugins, with no TVM-specific code in them."""

    def test_example_plugin_offloads_through_tvm(self):
        mod = import_onnx(onnx_models.small_cnn())
        plugin = os.path.join(PLUGINS, "libexample_target.so")
        _, regions, ex = byocl_build(mod, targets=("example", "opencl"), plugins=[plugin])
        # The example target takes the relus and the residual add (add of operands of one
        # shape: not the bias adds); opencl the rest.
        self.assertEqual(sorted(r[1:] for r in regions), [("example", 1), ("example", 2),
                                                          ("opencl", 3), ("opencl", 4),
                                                          ("opencl", 6)])
        x = input_of(mod)
        out = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(x)).numpy()
        self.assertLess(rel_l2(out, run(mod, x)), 1e-4)

    def test_missing_plugin(self):
        with self.assertRaises(RuntimeError) as e:
            byocl_tvm.load_plugin("/nonexistent/libnpu.so")
        self.assertEqual(str(e.exception), "byocl: cannot load target plugin "
                         "/nonexistent/libnpu.so: No such file or directory")

    def test_failing_compile_names_the_region(self):
        mod = import_onnx(onnx_models.small_cnn())
        plugin = os.path.join(PLUGINS, "libfaulty_target.so")
        pmod = byocl_tvm.partition_for_byocl(mod, targets=("faulty",), plugins=[plugin])
        symbol = byocl_tvm.regions(pmod)[0][0]
        os.environ["BYOCL_FAULTY_COMPILE_FAIL"] = "1"
        try:
            with self.assertRaises(RuntimeError) as e:
                relax.transform.RunCodegen()(pmod)
        finally:
            del os.environ["BYOCL_FAULTY_COMPILE_FAIL"]
        self.assertIn(
            f"byocl region {symbol}: compiling for target faulty: in @main, the result "
            "(@faulty_main_0): faulty target: faulty_main_0 does not compile, on purpose "
            "(BYOCL_FAULTY_COMPILE_FAIL)", str(e.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
