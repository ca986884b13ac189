"""partition_for_byocl: TVM's partition_for_<codegen> convention for byocl's targets.

The patterns are made from byocl's own op list (every Relax op that has a byocl op), and
each match is checked by asking the C library whether the target takes that very call,
types included (byocl_tvm_supports: the target's `supports`, so a plugin's target is asked
the same way as OpenCL). Targets are tried in the order given, as `byocl partition
--target A,B` does: a call goes to the first target that takes it.
"""

import tvm
from tvm import relax
from tvm.relax.dpl.pattern import is_op, wildcard

from . import _relay
from ._library import library

CODEGEN = "byocl"
ATTR_TARGET = "byocl.target"
ATTR_TARGET_OPTIONS = "byocl.target_options"
ATTR_PLUGINS = "byocl.plugins"


def options_text(target_options):
    """Target options as byocl takes them: "T.K=V, ..." from a dict or a string."""
    if not target_options:
        return ""
    if isinstance(target_options, str):
        return target_options
    return ", ".join(f"{key}={value}" for key, value in target_options.items())


def decide(call, targets):
    """(target, reason) for one Relax op call: the first of `targets` that takes it, or
    None and why none does."""
    names = _relay.relax_op_names()
    if not isinstance(call.op, tvm.ir.Op):
        if isinstance(call.op, tvm.ir.GlobalVar):
            return None, f"a call of {call.op.name_hint}: byocl reads Relax ops, not TIR or Relax functions"
        return None, "not an op call"
    if call.op.name == "relax.call_tir":
        callee = call.args[0]
        name = getattr(callee, "name_hint", str(callee))
        return None, f"R.call_tir of the TIR function {name}: byocl reads Relax ops, not TIR"
    if call.op.name not in names:
        return None, f"byocl has no op for {call.op.name}"
    try:
        text = _relay.call_module(call)
    except _relay.NotConvertible as e:
        return None, str(e)
    reasons = []
    for target in targets:
        taken, why = library().supports(text, target)
        if taken:
            return target, ""
        reasons.append(f"{target}: {why}")
    return None, "; ".join(reasons)


def _patterns(target, targets):
    earlier = tuple(targets[: targets.index(target)])

    def check(context):
        call = context.matched_expr
        return decide(call, earlier + (target,))[0] == target

    patterns = []
    for relax_name in sorted(_relay.relax_op_names()):
        n_args = tvm.ir.Op.get(relax_name).num_inputs
        pattern = is_op(relax_name)(*[wildcard() for _ in range(n_args)])
        patterns.append((f"{CODEGEN}.{relax_name[len('relax.'):]}", pattern, {"root": pattern}, check))
    return patterns


def partition_for_byocl(mod, targets=("opencl",), target_options=None, plugins=()):
    """Partitions `mod` (a Relax IRModule) into byocl regions, one function per region with
    Codegen="byocl", for tvm.compile to hand to relax.ext.byocl.

    targets: byocl targets in priority order: "opencl", a plugin's target, or "host" (byocl's
    LLVM host backend, which takes every op byocl converts).
    target_options: {"opencl.buffers": "copy"} or "opencl.buffers=copy, ...", as
    `--target-opt` takes them; recorded in each region (RunCodegen's options override them).
    plugins: target plugins (shared libraries) to load first; recorded in each region so that
    an exported library loads them again in a fresh process.
    """
    if isinstance(targets, str):
        targets = (targets,)
    targets = tuple(targets)
    if not targets:
        raise ValueError("partition_for_byocl: no target given")
    lib = library()
    for path in plugins:
        lib.load_plugin(path)
    # An unknown target fails here, with the list of targets there are.
    for target in targets:
        lib.supports("def @main(%x: Tensor[(1,), float32]) {\n  negative(%x)\n}\n", target)
    plugin_text = ":".join(str(p) for p in plugins)
    mod = relax.transform.CanonicalizeBindings()(mod)
    for target in targets:
        mod = relax.transform.FuseOpsByPattern(
            _patterns(target, targets), bind_constants=True, annotate_codegen=False
        )(mod)
        mod = relax.transform.MergeCompositeFunctions()(mod)
        for gvar, func in list(mod.functions.items()):
            attrs = func.attrs if isinstance(func, relax.Function) else None
            if attrs is None or attrs.get("Codegen") != CODEGEN or ATTR_TARGET in attrs:
                continue
            func = func.with_attr(ATTR_TARGET, target)
            func = func.with_attr(ATTR_TARGET_OPTIONS, options_text(target_options))
            func = func.with_attr(ATTR_PLUGINS, plugin_text)
            mod[gvar] = func
    return mod


def regions(mod):
    """The byocl regions of a partitioned module: [(symbol, target, number of ops)]."""
    out = []
    for gvar, func in mod.functions.items():
        attrs = func.attrs if isinstance(func, relax.Function) else None
        if attrs is None or attrs.get("Codegen") != CODEGEN:
            continue
        n_ops = sum(
            1
            for block in func.body.blocks
            for b in block.bindings
            if isinstance(b.value, relax.Call) and isinstance(b.value.op, relax.Var)
        )
        out.append((str(attrs.get("global_symbol", gvar.name_hint)), str(attrs.get(ATTR_TARGET, "")), n_ops))
    return out


def explain(mod, targets=("opencl",), plugins=()):
    """What partition_for_byocl would offload, op by op (byocl partition --explain): a text
    report of each op call of @main, where it goes and, when it stays with TVM, why."""
    if isinstance(targets, str):
        targets = (targets,)
    lib = library()
    for path in plugins:
        lib.load_plugin(path)
    lines, taken = [], {}
    main = mod["main"]
    n_calls = 0
    for block in main.body.blocks:
        for binding in block.bindings:
            call = binding.value
            if not isinstance(call, relax.Call):
                continue
            n_calls += 1
            target, why = decide(call, tuple(targets))
            op = call.op.name if isinstance(call.op, tvm.ir.Op) else str(call.op)
            if target:
                taken[target] = taken.get(target, 0) + 1
                lines.append(f"  %{binding.var.name} = {op}: {target}")
            else:
                lines.append(f"  %{binding.var.name} = {op}: TVM ({why})")
    summary = ", ".join(f"{n} on {t}" for t, n in taken.items()) or "none offloaded"
    head = f"byocl: {sum(taken.values())} of {n_calls} calls offloaded ({summary})"
    return "\n".join([head] + lines) + "\n"
