"""Relax bindings written as byocl's Relay text, with their constants.

Relax's operator and attribute names follow Relay's (the names byocl's IR uses), so a
region converts op by op: each `R.<op>(...)` becomes one byocl call (the few renamed or
reshaped ones are in _RENAMED and the converters below), each attribute keeps its name
where byocl's op has one, and anything byocl cannot express faithfully raises
NotConvertible with the reason. The same writer turns one call into a one-op module for
the pattern checks, and a whole region function into the module relax.ext.byocl compiles.
"""

import io

import numpy as np
import tvm
from tvm import relax
from tvm.ir import GenericConst

from ._library import library

# Relax ops whose byocl (Relay) name differs; every other `relax.X` is byocl's `X`.
_RENAMED = {
    "permute_dims": "transpose",
    "concat": "concatenate",
    "astype": "cast",
    "nn.adaptive_avg_pool2d": "nn.global_avg_pool2d",
    "matmul": "nn.dense",
    "nn.leakyrelu": "nn.leaky_relu",
}

# Relax attributes that byocl's op lacks and that mean nothing for it.
_IGNORED_ATTRS = {
    "nn.max_pool2d": {"count_include_pad"},
    "nn.batch_norm": {"momentum"},
}


class NotConvertible(Exception):
    """A Relax expression byocl's IR cannot express; the message says why."""


def relax_op_names():
    """The Relax ops that have a byocl op: {relax op name: byocl op name}."""
    byocl_ops = library().ops()
    renamed_to = {v: k for k, v in _RENAMED.items()}
    names = {}
    for byocl_name in byocl_ops:
        if byocl_name.startswith("annotation."):
            continue
        relax_name = "relax." + renamed_to.get(byocl_name, byocl_name)
        try:
            tvm.ir.Op.get(relax_name)
        except Exception:  # pylint: disable=broad-except
            continue  # no Relax op of that name (nn.bias_add, nn.batch_flatten...)
        names[relax_name] = byocl_name
    return names


def _tensor_type(ty, what):
    if not isinstance(ty, relax.TensorType) or ty.shape is None:
        raise NotConvertible(f"{what} is not a tensor of known shape ({ty})")
    dims = []
    for d in ty.shape:
        value = d if isinstance(d, int) else getattr(d, "value", None)
        if not isinstance(value, int):
            raise NotConvertible(f"{what} has a symbolic shape ({ty})")
        dims.append(value)
    if dims and len(dims) == 1:
        shape = f"({dims[0]},)"
    else:
        shape = "(" + ", ".join(str(d) for d in dims) + ")"
    return f"Tensor[{shape}, {ty.dtype}]"


def _attr_text(value):
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(getattr(value, "value", None), (int, float)):
        return _attr_text(value.value)  # an IntImm or FloatImm
    try:
        items = list(value)
    except TypeError as e:
        raise NotConvertible(f"attribute value {value!r} has no byocl form") from e
    return "[" + ", ".join(_attr_text(v) for v in items) + "]"


def _attrs_of(call):
    """The call's attributes as {name: python value} (None values left out)."""
    attrs = call.attrs
    if attrs is None:
        return {}
    info = getattr(type(attrs), "__tvm_ffi_type_info__", None)
    out = {}
    for field in info.fields if info else []:
        value = getattr(attrs, field.name)
        if value is None:
            continue
        if hasattr(value, "__len__") and not isinstance(value, str):
            value = [v.value if hasattr(v, "value") else v for v in value]
        out[field.name] = value
    return out


def scalar_literal(value):
    """A 0-d constant as a Relay literal (1f, 0.1f64, 3, 3i64): an .npz member of shape () reads back
    in byocl as shape (1,), which would change the region's types."""
    v = value.item()
    if value.dtype == np.float32 and np.isfinite(v):
        return f"{v!r}f"
    if value.dtype == np.float64 and np.isfinite(v):
        return f"{v!r}f64"
    if value.dtype == np.int32:
        return str(v)
    if value.dtype == np.int64:
        return f"{v}i64"
    raise NotConvertible(f"a scalar constant {value.dtype} {v} (no byocl literal)")


def check_constants(call):
    """Raises NotConvertible for a constant operand that byocl cannot take."""
    for arg in call.args:
        if isinstance(arg, GenericConst) and arg.value.numpy().ndim == 0:
            scalar_literal(arg.value.numpy())


class RelayWriter:
    """Builds one byocl module: @main's parameters, its bindings, meta constants."""

    def __init__(self):
        self.params = []  # "%name: Tensor[...]"
        self.lines = []
        self.constants = []  # numpy arrays: meta[relay.Constant][K]
        self._names = {}  # relax Var -> its text reference
        self._used_names = set()
        self._next = 0

    # ---- operands
    def add_param(self, var):
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in var.name) or "p"
        if base[0].isdigit():
            base = "p" + base
        unique, k = base, 1
        while unique in self._used_names:
            unique, k = f"{base}_{k}", k + 1
        self._used_names.add(unique)
        self.params.append(f"%{unique}: {_tensor_type(var.ty, '%' + var.name)}")
        self._names[var] = "%" + unique
        return "%" + unique

    def constant(self, value):
        if value.ndim == 0:
            return scalar_literal(value)
        self.constants.append(np.ascontiguousarray(value))
        return f"meta[relay.Constant][{len(self.constants) - 1}]"

    def bind(self, var, text):
        self._names[var] = text

    def operand(self, expr):
        if expr in self._names:
            return self._names[expr]
        if isinstance(expr, relax.Var):
            raise NotConvertible(f"%{expr.name} is not defined in the region")
        if isinstance(expr, GenericConst):
            return self.constant(expr.value.numpy())
        if isinstance(expr, relax.Tuple):
            return "(" + ", ".join(self.operand(f) for f in expr.fields) + ")"
        if isinstance(expr, relax.TupleGetItem):
            return f"{self.operand(expr.tuple_value)}.{int(expr.index)}"
        raise NotConvertible(f"an operand of kind {type(expr).__name__} ({expr})")

    def emit(self, text):
        name = f"%{self._next}"
        self._next += 1
        self.lines.append(f"  {name} = {text};")
        return name

    # ---- calls
    def call(self, call, var_values=None):
        """Writes one Relax op call; returns its text reference."""
        if not isinstance(call.op, tvm.ir.Op):
            raise NotConvertible(f"a call of {call.op} (not an op)")
        relax_name = call.op.name
        if not relax_name.startswith("relax."):
            raise NotConvertible(f"op {relax_name}")
        short = relax_name[len("relax."):]
        byocl_name = _RENAMED.get(short, short)
        byocl_attrs = library().ops().get(byocl_name)
        if byocl_attrs is None:
            raise NotConvertible(f"byocl has no op {byocl_name} (for {relax_name})")
        special = _SPECIAL.get(short)
        if special:
            return special(self, call, byocl_attrs, var_values or {})
        attrs = _attrs_of(call)
        operands = [self.operand(a) for a in call.args]
        return self.emit(_call_text(byocl_name, operands, attrs, byocl_attrs, relax_name))

    def text(self, results):
        body = self.lines + ["  " + results]
        return "def @main(" + ", ".join(self.params) + ") {\n" + "\n".join(body) + "\n}\n"

    def weights_npz(self):
        """The constants as an .npz archive in memory (members relay.Constant.K), or b""."""
        if not self.constants:
            return b""
        out = io.BytesIO()
        np.savez(out, **{f"relay.Constant.{k}": v for k, v in enumerate(self.constants)})
        return out.getvalue()


def _call_text(byocl_name, operands, attrs, byocl_attrs, relax_name):
    ignored = _IGNORED_ATTRS.get(byocl_name, set())
    parts = list(operands)
    for key, value in attrs.items():
        if key in ignored:
            continue
        if key not in byocl_attrs:
            raise NotConvertible(f"{relax_name}'s attribute {key}={value!r} has no byocl equivalent")
        parts.append(f"{key}={_attr_text(value)}")
    return f"{byocl_name}(" + ", ".join(parts) + ")"


def _scalar(expr, what):
    if isinstance(expr, (int, float)):
        return expr
    if hasattr(expr, "value") and isinstance(expr.value, (int, float)):
        return expr.value
    raise NotConvertible(f"{what} is not a constant ({expr})")


def _convert_clip(w, call, byocl_attrs, _values):
    low = float(_scalar(call.args[1], "clip's min"))
    high = float(_scalar(call.args[2], "clip's max"))
    return w.emit(f"clip({w.operand(call.args[0])}, a_min={low!r}, a_max={high!r})")


def _convert_reshape(w, call, byocl_attrs, _values):
    shape = call.args[1]
    if not isinstance(shape, relax.ShapeExpr):
        raise NotConvertible(f"reshape to a shape that is not constant ({shape})")
    dims = [int(_scalar(v, "a reshape dimension")) for v in shape.values]
    return w.emit(f"reshape({w.operand(call.args[0])}, newshape={_attr_text(dims)})")


def _convert_permute_dims(w, call, byocl_attrs, _values):
    attrs = _attrs_of(call)
    axes = f", axes={_attr_text(attrs['axes'])}" if "axes" in attrs else ""
    return w.emit(f"transpose({w.operand(call.args[0])}{axes})")


def _convert_astype(w, call, byocl_attrs, _values):
    return w.emit(f'cast({w.operand(call.args[0])}, dtype="{call.attrs.dtype}")')


def _convert_concat(w, call, byocl_attrs, _values):
    attrs = _attrs_of(call)
    return w.emit(f"concatenate({w.operand(call.args[0])}, axis={int(attrs.get('axis', 0))})")


def _convert_adaptive_avg_pool2d(w, call, byocl_attrs, _values):
    attrs = _attrs_of(call)
    size = attrs.get("output_size")
    if size is not None and [int(v) for v in size] not in ([1], [1, 1]):
        raise NotConvertible(f"adaptive_avg_pool2d to {list(size)} (byocl has the global (1, 1) pool)")
    layouts = ""
    for key in ("layout", "out_layout"):
        if key in attrs:
            layouts += f", {key}={_attr_text(attrs[key])}"
    return w.emit(f"nn.global_avg_pool2d({w.operand(call.args[0])}{layouts})")


def _convert_matmul(w, call, byocl_attrs, values):
    a, b = call.args
    for arg, what in ((a, "its first operand"), (b, "its second operand")):
        ty = arg.ty if hasattr(arg, "ty") else None
        if not isinstance(ty, relax.TensorType) or ty.ndim != 2:
            raise NotConvertible(f"matmul where {what} is not 2-D (byocl has nn.dense)")
    attrs = _attrs_of(call)
    if attrs.get("out_dtype") not in (None, "", a.ty.dtype):
        raise NotConvertible(f"matmul to {attrs['out_dtype']}")
    # matmul(a, permute_dims(W)) is nn.dense(a, W): TVM's ONNX Gemm and MatMul write it so.
    source = values.get(b)
    if (
        isinstance(source, relax.Call)
        and isinstance(source.op, tvm.ir.Op)
        and source.op.name == "relax.permute_dims"
        and _attrs_of(source).get("axes") in (None, [1, 0])
    ):
        weight = w.operand(source.args[0])
    else:
        weight = w.emit(f"transpose({w.operand(b)}, axes=[1, 0])")
    return w.emit(f"nn.dense({w.operand(a)}, {weight})")


def _convert_batch_norm(w, call, byocl_attrs, _values):
    attrs = _attrs_of(call)
    if attrs.pop("training", False):
        raise NotConvertible("batch_norm in training mode")
    operands = [w.operand(x) for x in call.args]
    return w.emit(_call_text("nn.batch_norm", operands, attrs, byocl_attrs, "relax.nn.batch_norm"))


def _convert_mean(w, call, byocl_attrs, _values):
    attrs = _attrs_of(call)
    ty = call.args[0].ty
    axes = [a % 4 for a in attrs.get("axis", [])] if getattr(ty, "ndim", 0) == 4 else None
    if axes == [2, 3] and attrs.get("keepdims"):
        # TVM's ONNX GlobalAveragePool: byocl's own importer gives nn.global_avg_pool2d.
        return w.emit(f"nn.global_avg_pool2d({w.operand(call.args[0])})")
    operands = [w.operand(call.args[0])]
    return w.emit(_call_text("mean", operands, attrs, byocl_attrs, "relax.mean"))


def _convert_expand_dims(w, call, byocl_attrs, _values):
    axes = sorted(int(a) for a in _attrs_of(call)["axis"])
    if axes[0] < 0 or axes != list(range(axes[0], axes[0] + len(axes))):
        raise NotConvertible(f"expand_dims at axes {axes}: byocl inserts consecutive axes "
                             "counted from the front")
    return w.emit(f"expand_dims({w.operand(call.args[0])}, axis={axes[0]}, "
                  f"num_newaxis={len(axes)})")


_SPECIAL = {
    "expand_dims": _convert_expand_dims,
    "mean": _convert_mean,
    "clip": _convert_clip,
    "reshape": _convert_reshape,
    "permute_dims": _convert_permute_dims,
    "astype": _convert_astype,
    "concat": _convert_concat,
    "nn.adaptive_avg_pool2d": _convert_adaptive_avg_pool2d,
    "matmul": _convert_matmul,
    "nn.batch_norm": _convert_batch_norm,
}


def call_module(call):
    """One op call as a byocl module whose @main takes every tensor operand as a parameter
    (constants too: a target decides by types), for the pattern checks."""
    w = RelayWriter()

    def param_for(expr, k):
        if isinstance(expr, relax.Tuple):
            for j, field in enumerate(expr.fields):
                param_for(field, f"{k}_{j}")
        elif isinstance(getattr(expr, "ty", None), relax.TensorType):
            w.bind(expr, w.add_param(relax.Var(f"a{k}", expr.ty)))
        # PrimValue and ShapeExpr operands become attributes.

    check_constants(call)
    for k, arg in enumerate(call.args):
        param_for(arg, k)
    return w.text(w.call(call))


def region_module(func):
    """A region function (Codegen=byocl: calls of composite functions, each one op) as a
    byocl module: (relay_text, weights_npz)."""
    w = RelayWriter()
    for param in func.params:
        w.add_param(param)
    body = func.body
    if not isinstance(body, relax.SeqExpr):
        raise NotConvertible("the region's body is not a sequence of bindings")
    values = {}
    for block in body.blocks:
        for binding in block.bindings:
            if not isinstance(binding, relax.VarBinding):
                raise NotConvertible(f"a binding of kind {type(binding).__name__}")
            values[binding.var] = binding.value
    for block in body.blocks:
        for binding in block.bindings:
            _region_binding(w, binding, values)
    return w.text(w.operand(body.body)), w.weights_npz()


def _region_binding(w, binding, values):
    value = binding.value
    if isinstance(value, relax.Function):
        return  # a composite: written where it is called
    if isinstance(value, relax.Call) and isinstance(value.op, relax.Var):
        composite = values.get(value.op)
        if not isinstance(composite, relax.Function):
            raise NotConvertible(f"a call of %{value.op.name}, not a composite function")
        inner = {}
        for param, arg in zip(composite.params, value.args):
            w.bind(param, w.operand(arg))
        seq = composite.body
        for block in seq.blocks:
            for b in block.bindings:
                inner[b.var] = b.value
        for block in seq.blocks:
            for b in block.bindings:
                w.bind(b.var, _write_value(w, b.value, {**values, **inner}))
        w.bind(binding.var, w.operand(seq.body))
        return
    w.bind(binding.var, _write_value(w, value, values))


def _write_value(w, value, values):
    if isinstance(value, relax.Call):
        return w.call(value, values)
    if isinstance(value, relax.TupleGetItem):
        return w.operand(value)
    if isinstance(value, (relax.Var, relax.Tuple, GenericConst)):
        return w.operand(value)
    raise NotConvertible(f"a binding of {type(value).__name__} ({value})")
