"""Writes the test cases of one op group (inputs and numpy-computed expected outputs) as
tests/fixtures/ops/<group>_cases.h, an array of the gen_case structs of tests/ops_case.h.
Shared by every tests/gen/gen_ops_*.py; run those with /usr/bin/python3 (it has numpy)."""

import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "fixtures", "ops"))

# numpy dtype name -> (C element type, byocl dtype enum)
C_TYPES = {
    "float32": ("float", "BYOCL_FLOAT32"),
    "float16": ("uint16_t", "BYOCL_FLOAT16"),  # IEEE binary16 bit patterns
    "int32": ("int32_t", "BYOCL_INT32"),
    "int64": ("int64_t", "BYOCL_INT64"),
    "int8": ("int8_t", "BYOCL_INT8"),
    "uint8": ("uint8_t", "BYOCL_UINT8"),
    "bool": ("uint8_t", "BYOCL_BOOL"),
    "float64": ("double", "BYOCL_FLOAT64"),
    "int16": ("int16_t", "BYOCL_INT16"),
    "uint16": ("uint16_t", "BYOCL_UINT16"),
    "uint32": ("uint32_t", "BYOCL_UINT32"),
    "uint64": ("uint64_t", "BYOCL_UINT64"),
    "bfloat16": ("uint16_t", "BYOCL_BFLOAT16"),  # bit patterns (see BF16)
}

# numpy has no bfloat16: an array of its bit patterns is a uint16 array viewed as this
# dtype (uint16 tagged by metadata), e.g. bits.view(BF16).
BF16 = np.dtype(np.uint16, metadata={"byocl": "bfloat16"})


def dtype_name(dt):
    """The byocl dtype name of a numpy dtype ("bfloat16" for BF16)."""
    return "bfloat16" if (dt.metadata or {}).get("byocl") == "bfloat16" else str(dt)


def rng(seed):
    return np.random.default_rng(seed)


def uniform(seed, shape, lo=-1.0, hi=1.0, dtype=np.float32):
    """Random values rounded to the dtype, so the C side gets exactly what numpy used."""
    return rng(seed).uniform(lo, hi, size=shape).astype(dtype)


def integers(seed, shape, lo, hi, dtype):
    return rng(seed).integers(lo, hi, size=shape).astype(dtype)


def c_literal(dtype, v):
    if dtype in ("float32", "float64"):
        v = float(v)
        if math.isnan(v):
            return "NAN"
        if math.isinf(v):
            return "INFINITY" if v > 0 else "-INFINITY"
        # the shortest spelling that reads back exactly
        return str(np.float32(v)) + "f" if dtype == "float32" else repr(v)
    if dtype in ("float16", "bfloat16"):
        return "0x%04x" % int(v)
    if dtype == "int64":
        v = int(v)
        return "(-9223372036854775807LL - 1)" if v == -(2**63) else "%dLL" % v
    if dtype in ("uint32", "uint64"):
        return "%dU" % int(v) if dtype == "uint32" else "%dULL" % int(v)
    return "%d" % int(v)


def _attr_value(v):
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return "%d" % v
    if isinstance(v, float):
        return repr(v) + "f"  # the shortest spelling that reads back as the same double
    if isinstance(v, str):
        return '"%s"' % v
    return "[%s]" % ", ".join("%d" % int(x) for x in v)


def attrs_text(attrs):
    """Attributes in the text format's syntax: a str as it is, or a dict in the op's
    declared order ({"padding": [1, 2], "ceil_mode": True} -> padding=[1, 2], ceil_mode=True)."""
    if isinstance(attrs, str):
        return attrs
    return ", ".join("%s=%s" % (k, _attr_value(v)) for k, v in attrs.items())


def _c_string(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def _wrapped(items, indent, width=96):
    """items joined by ", " over lines of at most `width` characters."""
    lines, line = [], ""
    for item in items:
        if line and len(indent) + len(line) + len(item) + 2 > width:
            lines.append(line + ",")
            line = item
        else:
            line = line + ", " + item if line else item
    lines.append(line)
    return ("\n" + indent).join(lines)


class Fixture:
    def __init__(self, group):
        self.group = group
        self.lines = []   # C declarations, in order
        self.data = {}    # (C type, values) -> name of the data array holding them
        self.arrays = {}  # (dtype enum, shape, data name) -> name of a case array
        self.cases = []   # (name, C initializer)

    def _data(self, name, ctype, values):
        key = (ctype, tuple(values))
        if key not in self.data:
            self.data[key] = name + "_data"
            self.lines.append("static const %s %s_data[] = {\n    %s};"
                              % (ctype, name, _wrapped(values, "    ")))
        return self.data[key]

    def array(self, name, a, shared=False):
        """Declares `name`, a gen_array of a's dtype, shape and values. With `shared`, an
        array already declared with the same contents serves instead. Returns "&name"."""
        a = np.asarray(a)
        dtype = dtype_name(a.dtype)
        ctype, enum = C_TYPES[dtype]
        flat = np.ascontiguousarray(a.reshape(-1))
        if dtype == "float16":
            flat = flat.view(np.uint16)
        data = self._data(name, ctype, [c_literal(dtype, v) for v in flat]) if flat.size else "NULL"
        key = (enum, a.shape, data)
        if shared and key in self.arrays:
            return "&" + self.arrays[key]
        self.arrays.setdefault(key, name)
        dims = ", ".join(str(d) for d in a.shape) or "0"
        self.lines.append("static const gen_array %s = {%s, %d, {%s}, %s};"
                          % (name, enum, a.ndim, dims, data))
        return "&" + name

    def case(self, name, op, attrs, inputs, outputs, tuple_arg=False, tuple_result=False,
             rtol=0.0, atol=0.0, const_args=False):
        """inputs/outputs: lists of numpy arrays whose dtypes are the byocl dtypes; the
        outputs are the expected results (the fields of a tuple with `tuple_result`).
        attrs: see attrs_text. rtol = atol = 0 asks for exact results. const_args: the
        inputs are constants of the call, not parameters (arange needs their values)."""
        assert name not in (c[0] for c in self.cases), name
        assert tuple_result or len(outputs) == 1, name
        ins = [self.array("%s_in%d" % (name, k), a, shared=True) for k, a in enumerate(inputs)]
        outs = [self.array("%s_out%d" % (name, k), a, shared=True)
                for k, a in enumerate(outputs)]
        flags = "%s, %s" % ("true" if tuple_arg else "false", "true" if tuple_result else "false")
        self.cases.append((name, '    {"%s", "%s", %s, %s,\n     %d, {%s},\n     %d, {%s},\n'
                                 '     %r, %r, %s},'
                           % (name, op, _c_string(attrs_text(attrs)), flags, len(ins),
                              _wrapped(ins, "         "), len(outs),
                              _wrapped(outs, "         "), rtol, atol,
                              "true" if const_args else "false")))

    def write(self, generator):
        path = os.path.join(FIXTURES, "%s_cases.h" % self.group)
        os.makedirs(FIXTURES, exist_ok=True)
        with open(path, "w") as f:
            f.write("/* Generated by tests/gen/%s with numpy %s; do not edit. */\n"
                    % (generator, np.__version__))
            f.write("#include <stdint.h>\n\n")
            f.write("\n".join(self.lines))
            f.write("\n\nstatic const gen_case %s_cases[] = {\n" % self.group)
            f.write("\n".join(text for _, text in self.cases))
            f.write("\n};\n")
        print("wrote", os.path.relpath(path), "(%d cases)" % len(self.cases))
