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

The pass needs the type of every value: it takes the type a value declares (graph inputs,
initializers, values a mapper typed) and otherwise infers it node by node from the ONNX
schema, descending into If/Loop/Scan bodies (which are legalized too).
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from functools import cache

import onnx_ir as ir

from pd2onnx import provenance
from pd2onnx.convert.naming import fresh_name
from pd2onnx.convert.ort_kernels import KERNELS, ORT_VERSION

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
@cache
def _schema(op: str, opset: int):
    import onnx.defs

    try:
        return onnx.defs.get_schema(op, opset, "")
    except Exception:  # noqa: BLE001 - unknown op or an opset before it existed
        return None


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
    schema = _schema(op, opset)
    if schema is None:
        return False
    allowed = {c.type_param_str: {_short(s) for s in c.allowed_type_strs} for c in schema.type_constraints}
    if any(t not in allowed.get(c, {t}) for c, t in binding.items()):
        return False
    return kernel_status(op, schema.since_version, binding) is not False


# ---------------------------------------------------------------------------------------- types
def _dtype_name(dtype: ir.DataType) -> str:
    import onnx

    return onnx.TensorProto.DataType.Name(int(dtype)).lower()


def _dtype_of(name: str) -> ir.DataType:
    import onnx

    return ir.DataType(getattr(onnx.TensorProto, name.upper()))


def _type_str(t: ir.TypeProtocol | None) -> str | None:
    """``ir`` type -> kernel-table spelling: "float", "seq(tensor(float))", "optional(...)"."""
    if t is None:
        return None
    if isinstance(t, ir.TensorType):
        return _dtype_name(t.dtype)
    inner = _type_str(t.elem_type) if hasattr(t, "elem_type") else None
    if inner is None:
        return None
    if not inner.startswith(("seq(", "optional(")):
        inner = f"tensor({inner})"
    if isinstance(t, ir.SequenceType):
        return f"seq({inner})"
    if isinstance(t, ir.OptionalType):
        return f"optional({inner})"
    return None


def _ir_type(s: str) -> ir.TypeProtocol:
    if s.startswith("seq(") and s.endswith(")"):
        return ir.SequenceType(_ir_type(s[4:-1]))
    if s.startswith("optional(") and s.endswith(")"):
        return ir.OptionalType(_ir_type(s[9:-1]))
    if s.startswith("tensor(") and s.endswith(")"):
        s = s[7:-1]
    return ir.TensorType(_dtype_of(s))


def _element(s: str | None) -> str | None:
    """seq(tensor(float)) -> float."""
    if s is None or not s.startswith("seq("):
        return None
    inner = s[4:-1]
    return inner[7:-1] if inner.startswith("tensor(") else inner


def _seq(s: str | None) -> str | None:
    return None if s is None else f"seq(tensor({s}))"


def _short(type_str: str) -> str:
    return type_str[7:-1] if type_str.startswith("tensor(") else type_str


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
        self.types: dict[ir.Value, str] = {}
        self.report = LegalizeReport()
        self.names: set[str] = set()
        for graph in [model.graph, *model.graph.subgraphs()]:
            self.names.update(v.name for v in graph.inputs if v.name)
            self.names.update(graph.initializers)
            for node in graph:
                self.names.update(o.name for o in node.outputs if o.name)

    def fresh(self, base: str) -> str:
        return fresh_name(base, self.names)

    def type_of(self, v: ir.Value | None) -> str | None:
        if v is None:
            return None
        declared = _type_str(v.type)
        return declared if declared is not None else self.types.get(v)

    # ------------------------------------------------------------------ walking
    def run_graph(self, graph: ir.Graph) -> None:
        for node in list(graph):
            if node.domain not in ("", "ai.onnx"):
                self.infer_outputs(node, None)
                continue
            if node.op_type in _CONTROL_FLOW:
                self.control_flow(node)
                continue
            schema = _schema(node.op_type, self.opset)
            if schema is None:
                continue
            self.legalize_node(graph, node, schema)
            self.infer_outputs(node, schema)

    def control_flow(self, node: ir.Node) -> None:
        op = node.op_type
        if op == "If":
            branches = [node.attributes[k].as_graph() for k in ("then_branch", "else_branch") if k in node.attributes]
            for body in branches:
                self.run_graph(body)
            for i, out in enumerate(node.outputs):
                for body in branches:
                    t = self.type_of(body.outputs[i]) if i < len(body.outputs) else None
                    if t is not None:
                        self.types.setdefault(out, t)
                        break
            return
        body_attr = node.attributes.get("body")
        if body_attr is None:
            return
        body = body_attr.as_graph()
        if op == "Loop":
            seeds = ["int64", "bool"] + [self.type_of(v) for v in node.inputs[2:]]
            outs = body.outputs[1:]
        else:  # Scan (opset 9+: the body sees each scan input's element, same type)
            seeds = [self.type_of(v) for v in node.inputs]
            outs = body.outputs
        for v, t in zip(body.inputs, seeds):
            if t is not None and self.type_of(v) is None:
                self.types[v] = t
        self.run_graph(body)
        for out, b in zip(node.outputs, outs):
            t = self.type_of(b)
            if t is not None:
                self.types.setdefault(out, t)

    # ------------------------------------------------------------------ binding
    @staticmethod
    def _formal(formals, i: int):
        import onnx.defs

        if not formals:
            return None
        if i < len(formals):
            return formals[i]
        last = formals[-1]
        return last if last.option == onnx.defs.OpSchema.FormalParameterOption.Variadic else None

    def binding(self, node: ir.Node, schema) -> tuple[dict[str, str | None], dict[str, list[int]]] | None:
        """constraint -> bound type (None: unknown), and constraint -> input indices; None on
        a conflict (two inputs binding one constraint to different types)."""
        constraints = {c.type_param_str for c in schema.type_constraints}
        bound: dict[str, str | None] = {}
        where: dict[str, list[int]] = {}
        for i, v in enumerate(node.inputs):
            if v is None:
                continue
            formal = self._formal(schema.inputs, i)
            if formal is None or formal.type_str not in constraints:
                continue
            if not formal.is_homogeneous:
                return None
            c = formal.type_str
            where.setdefault(c, []).append(i)
            t = self.type_of(v)
            if t is None:
                bound.setdefault(c, None)
            elif bound.get(c) is None:
                bound[c] = t
            elif bound[c] != t:
                return None
        return bound, where

    # ------------------------------------------------------------------ legalize one node
    def legalize_node(self, graph: ir.Graph, node: ir.Node, schema) -> None:
        op = node.op_type
        b = self.binding(node, schema)
        if b is None:
            return
        bound, where = b
        if any(t is None for t in bound.values()):
            if bound:
                self.report.untyped += 1
            return
        allowed = {c.type_param_str: {_short(s) for s in c.allowed_type_strs} for c in schema.type_constraints}
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
            to = _dtype_of(new[c])
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
                self.types[cast.outputs[0]] = new[c]
                graph.insert_before(node, cast)
                provenance.same_op(node, cast)
                node.replace_input_with(i, cast.outputs[0])
                made[id(v), new[c]] = cast.outputs[0]
        anchor = node
        for k, out in enumerate(node.outputs):
            formal = self._formal(schema.outputs, k)
            c = formal.type_str if formal is not None else None
            if c not in changed:
                continue
            original = bound[c]
            back_name = out.name
            out.name = self.fresh(f"{back_name}__{new[c]}")
            self.names.add(back_name)
            back = ir.Value(name=back_name, type=ir.TensorType(_dtype_of(original)), shape=out.shape)
            out.replace_all_uses_with(back, replace_graph_outputs=True)
            out.type = ir.TensorType(_dtype_of(new[c]))
            self.types[out] = new[c]
            self.types[back] = original
            cast = ir.Node("", "Cast", [out], ir.convenience.convert_attributes({"to": _dtype_of(original)}),
                           outputs=[back], name=self.fresh(f"{node.name or node.op_type}/legalize_out{k}"))
            graph.insert_after(anchor, cast)
            provenance.move(out, back)  # the cast's result carries the Paddle value now
            anchor = cast
        before = ", ".join(f"{c}={bound[c]}" for c in sorted(changed))
        after = ", ".join(f"{c}={new[c]}" for c in sorted(changed))
        self.report.rewritten.append((node.op_type, before, after))

    # ------------------------------------------------------------------ output types
    def infer_outputs(self, node: ir.Node, schema) -> None:
        if all(self.type_of(o) is not None for o in node.outputs):
            return
        types = self._rule_types(node, schema)
        if types is None:
            types = self._onnx_types(node, schema)
        for out, t in zip(node.outputs, types or ()):
            if t is not None and self.type_of(out) is None:
                self.types[out] = t

    def _rule_types(self, node: ir.Node, schema) -> list[str | None] | None:
        op = node.op_type
        ins = [self.type_of(v) for v in node.inputs]
        attrs = node.attributes

        def attr_dtype(name: str, default: str | None) -> str | None:
            a = attrs.get(name)
            return default if a is None else _dtype_name(ir.DataType(a.as_int()))

        if node.domain not in ("", "ai.onnx") or schema is None:
            return None
        if op == "Cast":
            return [attr_dtype("to", None)]
        if op == "CastLike":
            return [ins[1] if len(ins) > 1 else None]
        if op == "Constant":
            for key in ("value",):
                if key in attrs:
                    return [_dtype_name(attrs[key].as_tensor().dtype)]
            if "value_float" in attrs or "value_floats" in attrs:
                return ["float"]
            if "value_int" in attrs or "value_ints" in attrs:
                return ["int64"]
            return None
        if op == "ConstantOfShape":
            return [_dtype_name(attrs["value"].as_tensor().dtype) if "value" in attrs else "float"]
        if op in ("SequenceEmpty",):
            return [_seq(attr_dtype("dtype", "float"))]
        if op in ("SequenceConstruct", "SplitToSequence"):
            return [_seq(ins[0] if ins else None)]
        if op in ("SequenceAt", "ConcatFromSequence"):
            return [_element(ins[0] if ins else None)]
        if op in ("SequenceInsert", "SequenceErase"):
            return [ins[0] if ins else None]
        if op == "SequenceLength":
            return ["int64"]
        bound_b = self.binding(node, schema)
        bound = bound_b[0] if bound_b else {}
        allowed = {c.type_param_str: [_short(s) for s in c.allowed_type_strs] for c in schema.type_constraints}
        result: list[str | None] = []
        for k in range(len(node.outputs)):
            formal = self._formal(schema.outputs, k)
            if formal is None:
                result.append(None)
                continue
            ts = formal.type_str
            if ts in bound and bound[ts] is not None:
                result.append(bound[ts])
            elif ts in allowed and len(allowed[ts]) == 1:
                result.append(allowed[ts][0])
            elif ts not in allowed:
                result.append(_short(ts))
            else:
                return None  # typed by an attribute: ask ONNX
        return result

    def _onnx_types(self, node: ir.Node, schema) -> list[str | None] | None:
        if schema is None:
            return None
        import onnx
        import onnx.helper
        import onnx.shape_inference

        try:
            proto = ir.serde.serialize_node(node)
            input_types = {}
            for v in node.inputs:
                t = self.type_of(v)
                if v is not None and t is not None:
                    input_types[v.name] = ir.serde.serialize_type(_ir_type(t))
            result = onnx.shape_inference.infer_node_outputs(
                schema, proto, input_types, opset_imports=[onnx.helper.make_opsetid("", self.opset)])
        except Exception:  # noqa: BLE001 - inference is best effort; the node stays untyped
            return None
        out = []
        for o in node.outputs:
            tp = result.get(o.name)
            t = None
            if tp is not None:
                try:
                    t = _type_str(ir.serde.deserialize_type_proto_for_type(tp))
                except Exception:  # noqa: BLE001
                    t = None
            out.append(t)
        return out


def legalize(model: ir.Model) -> LegalizeReport:
    """Rewrite ``model`` in place so that ONNX Runtime's CPU provider has a kernel for every
    default-domain node (see the module docstring); returns what changed and what could not."""
    legalizer = _Legalizer(model)
    legalizer.run_graph(model.graph)
    report = legalizer.report
    for op, binding, why in report.unresolved:
        log.debug("legalize: %s (%s) left as it is: %s", op, binding, why)
    return report
