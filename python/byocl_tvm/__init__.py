"""byocl inside Apache TVM: byocl's targets as Relax's external codegen `relax.ext.byocl`.

    import tvm, tvm.relax.frontend.onnx, onnx, byocl_tvm
    from tvm import relax
    mod = tvm.relax.frontend.onnx.from_onnx(onnx.load("model.onnx"), keep_params_in_input=False)
    mod = relax.transform.RunCodegen()(byocl_tvm.partition_for_byocl(mod, targets=("opencl",)))
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())

docs/tvm.md has the rest. libbyocl_tvm.so is found through $BYOCL_TVM_LIBRARY, else the
loader's path.
"""

from ._library import LIBRARY_ENV, LibraryNotFound, library
from . import codegen as _codegen  # registers relax.ext.byocl
from .capture import capture
from .codegen import CompileError
from .partition import explain, partition_for_byocl, regions


def load_plugin(path):
    """Loads a byocl target plugin (docs/writing-a-target.md) into this process; its target
    can then be named in partition_for_byocl (which also takes plugins=...)."""
    library().load_plugin(path)


__all__ = [
    "CompileError",
    "LIBRARY_ENV",
    "LibraryNotFound",
    "capture",
    "explain",
    "load_plugin",
    "partition_for_byocl",
    "regions",
]
