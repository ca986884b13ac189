"""Finding and calling libbyocl_tvm.so, byocl's TVM bridge (include/byocl/tvm.h).

The package is Python over byocl's C library: which ops a target takes, plugin loading and
(in the code relax.ext.byocl generates) compiling and running regions all happen in C.
"""

import ctypes
import ctypes.util
import os

LIBRARY_ENV = "BYOCL_TVM_LIBRARY"
_MESSAGE_LEN = 4096

_BUILD_HINT = (
    "build byocl with its TVM bridge (docs/tvm.md: `make test` does, or configure with "
    "-DBYOCL_TVM_FFI_CONFIG=<tvm-ffi-config of the apache-tvm-ffi wheel>) and set "
    f"{LIBRARY_ENV} to the path of libbyocl_tvm.so (build/libbyocl_tvm.so in a build tree), "
    "or install byocl (`make install`) where the loader finds it"
)


class LibraryNotFound(ImportError):
    """libbyocl_tvm.so could not be loaded; the message says what to build."""


def _candidates():
    path = os.environ.get(LIBRARY_ENV)
    if path:
        return [path]
    found = ctypes.util.find_library("byocl_tvm")
    return [found] if found else ["libbyocl_tvm.so"]


class Library:
    """libbyocl_tvm.so loaded into the process (once), with its path."""

    def __init__(self):
        tried = []
        self.path = None
        for candidate in _candidates():
            try:
                # RTLD_GLOBAL: the code relax.ext.byocl generates dlopens the same library,
                # and plugins loaded here find byocl's API in the process.
                self._dll = ctypes.CDLL(candidate, mode=ctypes.RTLD_GLOBAL)
            except OSError as e:
                tried.append(f"{candidate}: {e}")
                continue
            self.path = self._resolved_path(candidate)
            break
        if self.path is None:
            raise LibraryNotFound(
                "byocl_tvm: cannot load libbyocl_tvm.so (" + "; ".join(tried) + "): " + _BUILD_HINT
            )
        d = self._dll
        d.byocl_tvm_supports.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                         ctypes.c_size_t]
        d.byocl_tvm_supports.restype = ctypes.c_int
        d.byocl_tvm_load_plugin.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        d.byocl_tvm_load_plugin.restype = ctypes.c_int
        d.byocl_tvm_check_region.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_size_t] + \
            [ctypes.c_char_p] * 3 + [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
        d.byocl_tvm_check_region.restype = ctypes.c_int
        # byocl's op registry, from libbyocl.so (a dependency: found through this handle).
        d.byocl_op_count.restype = ctypes.c_int
        d.byocl_op_at.argtypes = [ctypes.c_int]
        d.byocl_op_at.restype = ctypes.c_void_p
        d.byocl_op_name.argtypes = [ctypes.c_void_p]
        d.byocl_op_name.restype = ctypes.c_char_p
        d.byocl_op_num_attrs.argtypes = [ctypes.c_void_p]
        d.byocl_op_num_attrs.restype = ctypes.c_int
        d.byocl_op_attr_name.argtypes = [ctypes.c_void_p, ctypes.c_int]
        d.byocl_op_attr_name.restype = ctypes.c_char_p
        self._ops = None
        self._supports = {}

    def _resolved_path(self, candidate):
        """The absolute path the loader opened (generated code dlopens exactly that)."""
        if os.path.sep in candidate:
            return os.path.abspath(candidate)
        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                fields = line.split()
                if len(fields) >= 6 and os.path.basename(fields[5]).startswith("libbyocl_tvm.so"):
                    return fields[5]
        return candidate

    def ops(self):
        """byocl's ops: {name: set of attribute names}."""
        if self._ops is None:
            d = self._dll
            self._ops = {}
            for i in range(d.byocl_op_count()):
                op = d.byocl_op_at(i)
                attrs = {d.byocl_op_attr_name(op, k).decode() for k in range(d.byocl_op_num_attrs(op))}
                self._ops[d.byocl_op_name(op).decode()] = attrs
        return self._ops

    def supports(self, relay_text, target):
        """(taken, why) for one call written as a Relay module; cached by text and target."""
        key = (relay_text, target)
        if key not in self._supports:
            why = ctypes.create_string_buffer(_MESSAGE_LEN)
            rc = self._dll.byocl_tvm_supports(relay_text.encode(), target.encode(), why, _MESSAGE_LEN)
            if rc < 0:
                raise ValueError("byocl: " + why.value.decode(errors="replace"))
            self._supports[key] = (rc == 1, why.value.decode(errors="replace"))
        return self._supports[key]

    def check_region(self, symbol, text, weights, target, options, plugins, threads):
        """Compiles a region once and frees it; a failure raises RuntimeError with byocl's
        message ("byocl region <symbol>: compiling for target T: ...")."""
        message = ctypes.create_string_buffer(_MESSAGE_LEN)
        rc = self._dll.byocl_tvm_check_region(symbol.encode(), text.encode(), weights,
                                              len(weights), target.encode(), options.encode(),
                                              plugins.encode(), threads, message, _MESSAGE_LEN)
        if rc != 0:
            raise RuntimeError(message.value.decode(errors="replace"))

    def load_plugin(self, path):
        message = ctypes.create_string_buffer(_MESSAGE_LEN)
        if self._dll.byocl_tvm_load_plugin(os.fsencode(path), message, _MESSAGE_LEN) != 0:
            raise RuntimeError("byocl: " + message.value.decode(errors="replace"))
        self._supports.clear()


_library = None


def library():
    """The loaded library (loaded on first use); LibraryNotFound says what to build."""
    global _library
    if _library is None:
        _library = Library()
    return _library
