"""ONNX type spellings and the type rules of the default-domain schemas: what the type
inference (``value_types``) and the legalization pass read a node's types with.

Types are spelled as the schemas and ONNX Runtime's kernel table spell them: "float",
"int64", "seq(tensor(float))", "optional(tensor(int64))".
"""

from __future__ import annotations

from functools import cache

import onnx_ir as ir


def dtype_name(dtype: ir.DataType) -> str:
    """ONNX element type -> its TensorProto spelling in lower case ("float", "int64")."""
    import onnx

    return onnx.TensorProto.DataType.Name(int(dtype)).lower()


def dtype_of_name(name: str) -> ir.DataType:
    import onnx

    return ir.DataType(getattr(onnx.TensorProto, name.upper()))


def type_str(t: ir.TypeProtocol | None) -> str | None:
    """``ir`` type -> the schema spelling: "float", "seq(tensor(float))", "optional(...)"."""
    if t is None:
        return None
    if isinstance(t, ir.TensorType):
        return dtype_name(t.dtype)
    inner = type_str(t.elem_type) if hasattr(t, "elem_type") else None
    if inner is None:
        return None
    if not inner.startswith(("seq(", "optional(")):
        inner = f"tensor({inner})"
    if isinstance(t, ir.SequenceType):
        return f"seq({inner})"
    if isinstance(t, ir.OptionalType):
        return f"optional({inner})"
    return None


def ir_type(s: str) -> ir.TypeProtocol:
    """The inverse of ``type_str``."""
    if s.startswith("seq(") and s.endswith(")"):
        return ir.SequenceType(ir_type(s[4:-1]))
    if s.startswith("optional(") and s.endswith(")"):
        return ir.OptionalType(ir_type(s[9:-1]))
    if s.startswith("tensor(") and s.endswith(")"):
        s = s[7:-1]
    return ir.TensorType(dtype_of_name(s))


def short(schema_type: str) -> str:
    """"tensor(float)" -> "float" (other spellings unchanged)."""
    return schema_type[7:-1] if schema_type.startswith("tensor(") else schema_type


def _element(s: str | None) -> str | None:
    """seq(tensor(float)) -> float."""
    if s is None or not s.startswith("seq("):
        return None
    inner = s[4:-1]
    return inner[7:-1] if inner.startswith("tensor(") else inner


def _seq(s: str | None) -> str | None:
    return None if s is None else f"seq(tensor({s}))"


def describe(value: ir.Value) -> str:
    """"int64[?, 3]", "float of unknown rank", "seq(tensor(float))", "untyped"."""
    t = type_str(value.type)
    if t is None:
        return "untyped"
    if value.shape is None:
        return t if not isinstance(value.type, ir.TensorType) else f"{t} of unknown rank"
    dims = ", ".join(str(d) if isinstance(d, int) else (d.value or "?") for d in value.shape)
    return f"{t}[{dims}]"


# ---------------------------------------------------------------------------------------- schema
@cache
def schema_of(op: str, opset: int):
    """The default-domain schema of ``op`` at model opset ``opset`` (None if none)."""
    import onnx.defs

    try:
        return onnx.defs.get_schema(op, opset, "")
    except Exception:  # noqa: BLE001 - unknown op or an opset before it existed
        return None


def formal(formals, i: int):
    """The formal parameter taking position ``i`` (the last one when it is variadic)."""
    import onnx.defs

    if not formals:
        return None
    if i < len(formals):
        return formals[i]
    last = formals[-1]
    return last if last.option == onnx.defs.OpSchema.FormalParameterOption.Variadic else None


def binding(node: ir.Node, schema) -> tuple[dict[str, str | None], dict[str, list[int]]] | None:
    """Type constraint -> the type its inputs bind (None: unknown), and constraint -> input
    indices; None on a conflict (two inputs binding one constraint to different types)."""
    constraints = {c.type_param_str for c in schema.type_constraints}
    bound: dict[str, str | None] = {}
    where: dict[str, list[int]] = {}
    for i, v in enumerate(node.inputs):
        if v is None:
            continue
        f = formal(schema.inputs, i)
        if f is None or f.type_str not in constraints:
            continue
        if not f.is_homogeneous:
            return None
        c = f.type_str
        where.setdefault(c, []).append(i)
        t = type_str(v.type)
        if t is None:
            bound.setdefault(c, None)
        elif bound.get(c) is None:
            bound[c] = t
        elif bound[c] != t:
            return None
    return bound, where



def node_rule_types(node: ir.Node, schema) -> list[str | None] | None:
    """Output types of a default-domain node from its inputs' types and its attributes (the
    ops whose type a rule gives: casts, constants, sequence ops, constraint binding)."""
    op = node.op_type
    ins = [type_str(v.type) if v is not None else None for v in node.inputs]
    attrs = node.attributes

    def attr_dtype(name: str, default: str | None) -> str | None:
        a = attrs.get(name)
        return default if a is None else dtype_name(ir.DataType(a.as_int()))

    if op == "Cast":
        return [attr_dtype("to", None)]
    if op == "CastLike":
        return [ins[1] if len(ins) > 1 else None]
    if op == "Constant":
        if "value" in attrs:
            return [dtype_name(attrs["value"].as_tensor().dtype)]
        if "value_float" in attrs or "value_floats" in attrs:
            return ["float"]
        if "value_int" in attrs or "value_ints" in attrs:
            return ["int64"]
        return None
    if op == "ConstantOfShape":
        return [dtype_name(attrs["value"].as_tensor().dtype) if "value" in attrs else "float"]
    if op == "SequenceEmpty":
        return [_seq(attr_dtype("dtype", "float"))]
    if op in ("SequenceConstruct", "SplitToSequence"):
        return [_seq(ins[0] if ins else None)]
    if op in ("SequenceAt", "ConcatFromSequence"):
        return [_element(ins[0] if ins else None)]
    if op in ("SequenceInsert", "SequenceErase"):
        return [ins[0] if ins else None]
    if op == "SequenceLength":
        return ["int64"]
    bound_b = binding(node, schema)
    bound = bound_b[0] if bound_b else {}
    allowed = {c.type_param_str: [short(s) for s in c.allowed_type_strs] for c in schema.type_constraints}
    result: list[str | None] = []
    for k in range(len(node.outputs)):
        f = formal(schema.outputs, k)
        if f is None:
            result.append(None)
            continue
        ts = f.type_str
        if ts in bound and bound[ts] is not None:
            result.append(bound[ts])
        elif ts in allowed and len(allowed[ts]) == 1:
            result.append(allowed[ts][0])
        elif ts not in allowed:
            result.append(short(ts))
        else:
            return None  # typed by an attribute: ask ONNX
    return result
