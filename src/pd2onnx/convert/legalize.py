"""Make every node of a converted graph runnable by ONNX Runtime's CPU provider.

A mapper emits the natural ONNX node in the Paddle tensor's own dtype. Where ONNX Runtime's CPU
provider has no kernel for the types a node binds at the model's opset (``ort_kernels``,
generated from onnxruntime), ``legalize`` computes that node in a type that has one:

- bfloat16 and float64 go through float32 (bfloat16 also through float64 if only that
  exists): the inputs are cast, the node runs, its results are cast back to the original type.
  float16 likewise, except where ONNX Runtime does exactly that by itself (a float32 kernel of
  the node exists: its InsertCastTransformer casts around float16 nodes without a kernel), so
  that float16 models stay float16 for runtimes that have the kernels. Paddle's CPU float16/bfloat16 kernels mostly compute in float32 and round once,
  which is what this does; float64 loses precision beyond float32's (the only way to run such a
  node at all).
- integers go through a wider integer only for ops where that is exact after the cast back:
  wrap-around ring arithmetic (``RING``: Add, Sub, Mul, sums/products ...), order-based ops
  (``ORDER``: comparisons, Max/Min, Where, ArgMax, TopK, Div/Mod ...), data movement
  (``DATA``: Expand, Pad, Gather, Concat ...) and bit operations of the same width
  (``BITWISE``); bool goes through uint8 for order-based and data-movement ops.
- anything else is left as it is and listed in the returned report (``unresolved``).

The pass needs the type of every value: it runs ``pd2onnx.optimize.value_types.infer_types``
first (a no-op on a converted graph, which the converter's typing step has typed already), and
types the casts and values it makes itself; If/Loop/Scan bodies are legalized too.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field

import onnx_ir as ir

from pd2onnx import provenance
from pd2onnx.convert.naming import fresh_name
from pd2onnx.convert.ort_kernels import KERNELS, ORT_VERSION
from pd2onnx.optimize.type_names import binding, dtype_of_name, formal, schema_of, short
from pd2onnx.optimize.value_types import all_values, infer_types

log = logging.getLogger(__name__)

__all__ = ["ORT_VERSION", "LegalizeReport", "has_kernel", "kernel_status", "legalize"]

# Integer ops computed exactly in a wider integer then cast back (Cast narrows modulo 2^n).
RING = frozenset({"Add", "Sub", "Mul", "Neg", "Abs", "Sum", "ReduceSum", "ReduceProd", "CumSum", "MatMul"})
ORDER = frozenset({
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Max", "Min", "ReduceMax", "ReduceMin",
    "ArgMax", "ArgMin", "TopK", "Clip", "Relu", "Sign", "Where", "Div", "Mod", "MaxPool", "Unique",
})
DATA = frozenset({
    "Identity", "Expand", "Pad", "Tile", "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND",
    "ScatterElements", "ScatterND", "Scatter", "Transpose", "Reshape", "Squeeze", "Unsqueeze", "Flatten",
    "Compress", "ReverseSequence", "DepthToSpace", "SpaceToDepth", "Trilu", "NonZero", "OneHot",
})
BITWISE = frozenset({"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"})

_FLOAT_ALT = {"float16": ("float", "double"), "bfloat16": ("float", "double"), "double": ("float",)}
_SIGNED_WIDER = {"int8": ("int32", "int64"), "int16": ("int32", "int64"), "int32": ("int64",)}
_UNSIGNED_WIDER = {"uint8": ("int32", "int64"), "uint16": ("int32", "int64"), "uint32": ("int64",)}
# Scatter*/Max/Min... with a reduction attribute keep their meaning under widening; the only
# concern is values, handled by the op sets above.
_CONTROL_FLOW = frozenset({"If", "Loop", "Scan"})


# float64 through float32 would change more than the rounding of the result: NonZero would
# drop values below float32's smallest subnormal.
_NO_DOUBLE_VIA_FLOAT = frozenset({"NonZero"})


def _alternatives(op: str, dtype: str) -> tuple[str, ...]:
    if dtype == "double" and op in _NO_DOUBLE_VIA_FLOAT:
        return ()
    if dtype in _FLOAT_ALT:
        return _FLOAT_ALT[dtype]
    if dtype in _SIGNED_WIDER and op in RING | ORDER | DATA | BITWISE:
        return _SIGNED_WIDER[dtype]
    if dtype in _UNSIGNED_WIDER and op in RING | ORDER | DATA | BITWISE:
        # uint16 -> int32 keeps every bit pattern of the low 16 bits: BitwiseNot of the wider
        # value then a narrowing cast is still exact.
        return _UNSIGNED_WIDER[dtype]
    if dtype == "bool" and op in (ORDER | DATA) - {"Div", "Mod", "Clip", "Relu", "Sign"}:
        return ("uint8", "int32")
    return ()


# ---------------------------------------------------------------------------------------- kernels
def kernel_status(op: str, since_version: int, binding: dict[str, str]) -> bool | None:
    """True when a CPU kernel of ``op`` registered for ``since_version`` takes ``binding``
    (constraint -> type); False when kernels exist for that version but none takes it; None
    when the table has no kernel of ``op`` for that version (a function op, or not on CPU)."""
    kernels = [k for k in KERNELS.get(op, ()) if k[0] <= since_version <= k[1]]
    if not kernels:
        return None
    for _, _, cons in kernels:
        if all(t is None or name not in cons or t in cons[name] for name, t in binding.items()):
            return True
    return False


def has_kernel(op: str, opset: int, binding: dict[str, str]) -> bool:
    """Whether ONNX Runtime's CPU provider runs ``op`` at model opset ``opset`` with these
    constraint types (``{"T": "bfloat16"}``); ops it has no kernel table entry for count as
    runnable (function ops are expanded by ONNX Runtime)."""
    schema = schema_of(op, opset)
    if schema is None:
        return False
    allowed = {c.type_param_str: {short(s) for s in c.allowed_type_strs} for c in schema.type_constraints}
    if any(t not in allowed.get(c, {t}) for c, t in binding.items()):
        return False
    return kernel_status(op, schema.since_version, binding) is not False


# ---------------------------------------------------------------------------------------- report
@dataclass
class LegalizeReport:
    """What ``legalize`` changed: ``(op type, original types, computed in)`` per rewritten
    node, and the nodes it could not make runnable (op type, binding, why)."""

    rewritten: list[tuple[str, str, str]] = field(default_factory=list)
    unresolved: list[tuple[str, str, str]] = field(default_factory=list)
    untyped: int = 0


# ---------------------------------------------------------------------------------------- pass
class _Legalizer:
    def __init__(self, model: ir.Model):
        self.model = model
        self.opset = model.opset_imports.get("", model.opset_imports.get("ai.onnx", 1))
        self.report = LegalizeReport()
        self.names: set[str] = set()
        for graph in [model.graph, *model.graph.subgraphs()]:
            self.names.update(v.name for v in graph.inputs if v.name)
            self.names.update(graph.initializers)
            for node in graph:
                self.names.update(o.name for o in node.outputs if o.name)

    def fresh(self, base: str) -> str:
        return fresh_name(base, self.names)

    # ------------------------------------------------------------------ walking
    def run_graph(self, graph: ir.Graph) -> None:
        for node in list(graph):
            if node.domain not in ("", "ai.onnx"):
                continue
            if node.op_type in _CONTROL_FLOW:
                for attr in node.attributes.values():
                    if attr.type == ir.AttributeType.GRAPH:
                        self.run_graph(attr.as_graph())
                continue
            schema = schema_of(node.op_type, self.opset)
            if schema is None:
                continue
            self.legalize_node(graph, node, schema)

    # ------------------------------------------------------------------ legalize one node
    def legalize_node(self, graph: ir.Graph, node: ir.Node, schema) -> None:
        op = node.op_type
        b = binding(node, schema)
        if b is None:
            return
        bound, where = b
        if any(t is None for t in bound.values()):
            if bound:
                self.report.untyped += 1
            return
        allowed = {c.type_param_str: {short(s) for s in c.allowed_type_strs} for c in schema.type_constraints}
        # The ONNX schema must take the types too (ONNX Runtime checks it before its kernels:
        # e.g. Compress-11 has a bfloat16 kernel but its schema has no bfloat16).
        in_schema = all(t in allowed.get(c, {t}) for c, t in bound.items())
        if in_schema and kernel_status(op, schema.since_version, bound) is not False:
            return
        if in_schema and "float16" in bound.values():
            # ONNX Runtime computes a float16 node without a CPU kernel in float32 by itself
            # (its InsertCastTransformer): leave it float16 for runtimes that have the kernel.
            as_f32 = {c: "float" if t == "float16" else t for c, t in bound.items()}
            if kernel_status(op, schema.since_version, as_f32):
                return
        options = []
        for c, t in bound.items():
            options.append([(c, t)] + [(c, a) for a in _alternatives(op, t)])
        candidates = sorted(itertools.product(*options),
                            key=lambda combo: (sum(t != bound[c] for c, t in combo),
                                               [[x for _, x in opts].index(t) for (c, t), opts in zip(combo, options)]))
        for combo in candidates:
            new = dict(combo)
            if new == bound or any(t not in allowed.get(c, {t}) for c, t in new.items()):
                continue
            if kernel_status(op, schema.since_version, new) is not False:
                self.rewrite(graph, node, schema, bound, new, where)
                return
        desc = ", ".join(f"{c}={t}" for c, t in bound.items())
        why = "no kernel" if in_schema else "the ONNX schema does not take it"
        self.report.unresolved.append((op, desc, f"{why} at opset {self.opset}, and no type that computes it exactly has one"))

    def rewrite(self, graph, node, schema, bound, new, where) -> None:
        changed = {c for c in new if new[c] != bound[c]}
        made: dict[tuple[int, str], ir.Value] = {}
        for c in changed:
            to = dtype_of_name(new[c])
            for i in where[c]:
                v = node.inputs[i]
                if (id(v), new[c]) in made:
                    node.replace_input_with(i, made[id(v), new[c]])
                    continue
                cast = ir.Node("", "Cast", [v], ir.convenience.convert_attributes({"to": to}), num_outputs=1,
                               name=self.fresh(f"{node.name or node.op_type}/legalize_in{i}"))
                cast.outputs[0].name = self.fresh(f"{v.name}__{new[c]}")
                cast.outputs[0].type = ir.TensorType(to)
                cast.outputs[0].shape = v.shape
                graph.insert_before(node, cast)
                provenance.same_op(node, cast)
                node.replace_input_with(i, cast.outputs[0])
                made[id(v), new[c]] = cast.outputs[0]
        anchor = node
        for k, out in enumerate(node.outputs):
            f = formal(schema.outputs, k)
            c = f.type_str if f is not None else None
            if c not in changed:
                continue
            original = bound[c]
            back_name = out.name
            out.name = self.fresh(f"{back_name}__{new[c]}")
            self.names.add(back_name)
            back = ir.Value(name=back_name, type=ir.TensorType(dtype_of_name(original)), shape=out.shape)
            out.replace_all_uses_with(back, replace_graph_outputs=True)
            out.type = ir.TensorType(dtype_of_name(new[c]))
            cast = ir.Node("", "Cast", [out], ir.convenience.convert_attributes({"to": dtype_of_name(original)}),
                           outputs=[back], name=self.fresh(f"{node.name or node.op_type}/legalize_out{k}"))
            graph.insert_after(anchor, cast)
            provenance.move(out, back)  # the cast's result carries the Paddle value now
            anchor = cast
        before = ", ".join(f"{c}={bound[c]}" for c in sorted(changed))
        after = ", ".join(f"{c}={new[c]}" for c in sorted(changed))
        self.report.rewritten.append((node.op_type, before, after))


def legalize(model: ir.Model) -> LegalizeReport:
    """Rewrite ``model`` in place so that ONNX Runtime's CPU provider has a kernel for every
    default-domain node (see the module docstring); returns what changed and what could not."""
    if any(v.type is None for _, v in all_values(model)):  # the pass needs dtypes only
        infer_types(model)
    legalizer = _Legalizer(model)
    legalizer.run_graph(model.graph)
    report = legalizer.report
    for op, types, why in report.unresolved:
        log.debug("legalize: %s (%s) left as it is: %s", op, types, why)
    return report
