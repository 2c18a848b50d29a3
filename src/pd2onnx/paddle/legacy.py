"""Reader for legacy ``ProgramDesc`` models (``*.pdmodel``, ``__model__``; FORMATS.md 1).

Parses with pd2onnx's loose schema (all fields optional, enums as int32), validates the
fields Paddle requires, and translates every op into the canonical form through the
op-definition table. ``feed``/``fetch`` ops become ``data``/``fetch``.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError

from pd2onnx.errors import ModelFormatError
from pd2onnx.paddle import dtypes, opdefs
from pd2onnx.paddle.framework_pb2 import OpDesc, ProgramDesc, VarDesc
from pd2onnx.paddle.params import Expected
from pd2onnx.paddle.program import Block, Op, Program, Value, VarRef

_NOT_PARAMS = {"feed_minibatch", "fetch_list", "raw", "reader"}

# AttrType code -> reader of OpDesc.Attr
_SCALAR_TYPES = {1: "b", 2: "i", 3: "r", 4: "c"}


def _scalar(s: Any) -> Any:
    kind = _SCALAR_TYPES.get(s.type)
    if kind == "b":
        return bool(s.b)
    if kind == "i":
        return int(s.i)
    if kind == "r":
        return float(s.r)
    if kind == "c":
        return complex(s.c.r, s.c.i)
    return None


_ATTR_READERS = {
    0: lambda a: int(a.i),
    1: lambda a: float(a.f),
    2: lambda a: a.s,
    3: lambda a: [int(v) for v in a.ints],
    4: lambda a: [float(v) for v in a.floats],
    5: lambda a: list(a.strings),
    6: lambda a: bool(a.b),
    7: lambda a: [bool(v) for v in a.bools],
    8: lambda a: ("block", int(a.block_idx)),
    9: lambda a: int(a.l),
    10: lambda a: ("blocks", [int(v) for v in a.blocks_idx]),
    11: lambda a: [int(v) for v in a.longs],
    12: lambda a: [float(v) for v in a.float64s],
    13: lambda a: VarRef((a.var_name,)),
    14: lambda a: VarRef(tuple(a.vars_name)),
    15: lambda a: float(a.float64),
    16: lambda a: _scalar(a.scalar),
    17: lambda a: [_scalar(s) for s in a.scalars],
}


def parse_program_desc(data: bytes, path: str) -> ProgramDesc:
    desc = ProgramDesc()
    try:
        desc.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise ModelFormatError(
            f"not a readable Paddle ProgramDesc ({exc})",
            file=path,
            hint="the file is truncated or corrupt, or it is not a .pdmodel; export the model again",
        ) from None
    if not desc.blocks:
        raise ModelFormatError(
            "no program blocks found: this is not a Paddle .pdmodel (or it is empty)",
            file=path,
            hint="pass the .pdmodel or .json file written by paddle.jit.save / save_inference_model",
        )
    return desc


def _text(value: str | bytes, what: str, path: str) -> str:
    """A string field as read: the protobuf runtime hands back ``bytes`` for a string that
    is not valid UTF-8 (Paddle never writes one: the file is corrupt)."""
    if isinstance(value, bytes):
        raise ModelFormatError(
            f"{what} is not valid UTF-8 text ({value[:60]!r})",
            file=path,
            hint="the file is corrupt (damaged in transfer or edited); export the model again",
        )
    return value


def _texts(values: Any, what: str, path: str) -> list[str]:
    return [_text(v, f"{what}[{k}]", path) for k, v in enumerate(values)]


def _require(cond: bool, what: str, path: str) -> None:
    if not cond:
        raise ModelFormatError(
            f"required field missing: {what}",
            file=path,
            hint="the file is corrupt or was not written by Paddle",
        )


def _value(var: VarDesc, path: str, where: str) -> Value:
    _require(var.HasField("name"), f"{where}.name", path)
    name = _text(var.name, f"{where}.name", path)
    _require(var.HasField("type") and var.type.HasField("type"), f"{where} ({name}).type", path)
    code = var.type.type
    kind = dtypes.LEGACY_KINDS.get(code)
    dtype = None
    shape: tuple[int, ...] | None = None
    lod_level = 0
    if kind in ("dense_tensor", "tensor_array"):
        holder = var.type.dense_tensor if kind == "dense_tensor" else var.type.tensor_array
        tensor = holder.tensor
        _require(tensor.HasField("data_type"), f"{where} ({name}).type.tensor.data_type", path)
        dtype = dtypes.from_legacy_code(tensor.data_type)
        shape = tuple(int(d) for d in tensor.dims)
        if kind == "dense_tensor" and holder.legacy_lod_level > 0 and shape:
            shape = (-1, *shape[1:])  # a LoD tensor's first dim is the total length of its sequences
        if kind == "dense_tensor":
            lod_level = int(holder.legacy_lod_level)
    elif kind == "selected_rows":
        dtype = dtypes.from_legacy_code(var.type.selected_rows.data_type)
        shape = tuple(int(d) for d in var.type.selected_rows.dims)
    elif kind is None:
        elem = dtypes.from_legacy_code(code)
        kind = "scalar" if elem else f"unknown_{code}"
        dtype = elem
    return Value(name, dtype, shape, kind=kind, persistable=bool(var.persistable), lod_level=lod_level)


# AttrType codes whose value is text: STRING, STRINGS, VAR, VARS
_TEXT_ATTRS = {2: "s", 5: "strings", 13: "var_name", 14: "vars_name"}


def _attrs(op: OpDesc, op_type: str, path: str, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, attr in enumerate(op.attrs):
        _require(attr.HasField("name") and attr.HasField("type"), f"{where}.attrs[{k}].name/type", path)
        name = _text(attr.name, f"{where} ({op_type}).attrs[{k}].name", path)
        if name in opdefs.NOISE_ATTRS:  # how Paddle ran the op (op_callstack, ...): never read
            continue
        reader = _ATTR_READERS.get(attr.type)
        if reader is None:
            raise ModelFormatError(
                f"{where} ({op_type}): attribute {name!r} has unknown type code {attr.type}",
                file=path,
                hint="the file may come from a newer Paddle; please report it",
            )
        field_name = _TEXT_ATTRS.get(attr.type)
        if field_name is not None:
            value = getattr(attr, field_name)
            what = f"{where} ({op_type}): attribute {name!r}"
            if isinstance(value, (str, bytes)):
                _text(value, what, path)
            else:
                _texts(value, what, path)
        out[name] = reader(attr)
    return out


def _slots(vars_: Any, path: str, where: str) -> dict[str, list[str]]:
    return {_text(v.parameter, f"{where} slot name", path): _texts(v.arguments, f"{where} slot {v.parameter!r}", path)
            for v in vars_}


def _column(attrs: dict[str, Any], path: str, where: str) -> int:
    """A feed's or fetch's ``col`` attribute: its position among the inputs or outputs."""
    col = attrs.get("col", 0)
    if isinstance(col, bool) or not isinstance(col, int):
        raise ModelFormatError(f"{where}: attribute col is {str(col)[:40]!r}, expected an integer", file=path,
                               hint="the program is malformed (corrupt or hand-edited); export the model again")
    return col


def read_legacy(data: bytes, path: str) -> tuple[Program, list[Expected]]:
    """Parse a ProgramDesc into a Program (params not yet attached) and the params it needs."""
    desc = parse_program_desc(data, path)
    blocks: list[Block] = []
    for b, bdesc in enumerate(desc.blocks):
        _require(bdesc.HasField("idx") and bdesc.HasField("parent_idx"), f"blocks[{b}].idx/parent_idx", path)
        block = Block(idx=b, parent_idx=int(bdesc.parent_idx) if b else -1)
        for v, var in enumerate(bdesc.vars):
            value = _value(var, path, f"blocks[{b}].vars[{v}]")
            block.values[value.name] = value
        blocks.append(block)

    feeds: list[tuple[int, str]] = []
    fetches: list[tuple[int, str]] = []
    for b, bdesc in enumerate(desc.blocks):
        block = blocks[b]
        for i, opdesc in enumerate(bdesc.ops):
            where = f"blocks[{b}].ops[{i}]"
            _require(opdesc.HasField("type"), f"{where}.type", path)
            legacy_type = _text(opdesc.type, f"{where}.type", path)
            for s, slot in enumerate(list(opdesc.inputs) + list(opdesc.outputs)):
                _require(slot.HasField("parameter"), f"{where} ({legacy_type}) slot {s}.parameter", path)
            attrs = _attrs(opdesc, legacy_type, path, where)
            inputs = _slots(opdesc.inputs, path, f"{where} ({legacy_type}) input")
            outputs = _slots(opdesc.outputs, path, f"{where} ({legacy_type}) output")
            if legacy_type == "feed":
                name = (outputs.get("Out") or [""])[0]
                col = _column(attrs, path, where)
                feeds.append((col, name))
                op = Op("data", {}, {"out": [name]}, {"name": name, "col": col}, legacy_type="feed")
            elif legacy_type == "fetch":
                name = (inputs.get("X") or [""])[0]
                col = _column(attrs, path, where)
                fetches.append((col, name))
                op = Op("fetch", {"x": [name]}, {}, {"name": name, "col": col})
            else:
                op_type, inputs, outputs, attrs = opdefs.translate_legacy(legacy_type, inputs, outputs, attrs)
                sub: list[Block] = []
                for key, val in list(attrs.items()):
                    if isinstance(val, tuple) and val and val[0] in ("block", "blocks"):
                        idxs = [val[1]] if val[0] == "block" else val[1]
                        for idx in idxs:
                            if not 0 <= idx < len(blocks):
                                raise ModelFormatError(
                                    f"{where} ({legacy_type}): attribute {key!r} points to block {idx}, "
                                    f"but the program has {len(blocks)} blocks",
                                    file=path,
                                    hint="the file is corrupt",
                                )
                            sub.append(blocks[idx])
                        attrs[key] = val[1]
                op = Op(op_type, inputs, outputs, attrs, blocks=sub,
                        legacy_type=legacy_type if legacy_type != op_type else None)
            op.block_idx, op.index = b, i
            block.ops.append(op)

    main = blocks[0]

    def io_value(name: str, role: str) -> Value:
        value = main.values.get(name)
        if value is None:
            raise ModelFormatError(
                f"{role} variable {name!r} is not declared in the main block",
                file=path,
                hint="the file is corrupt",
            )
        return value

    inputs = [io_value(n, "feed") for _, n in sorted(feeds)]
    warnings = []
    feed_names = {n for _, n in feeds}
    for var in desc.blocks[0].vars:
        if var.name in feed_names and var.type.dense_tensor.legacy_lod_level > 1:
            warnings.append(
                f"{path}: input {var.name!r} carries {var.type.dense_tensor.legacy_lod_level} LoD levels "
                "(sequences of sequences); the ONNX model sees one plain tensor, which is right only "
                "for a batch of one sequence holding one sub-sequence (docs/sequence_models.md)"
            )
    outputs = [io_value(n, "fetch") for _, n in sorted(fetches)]
    expected = [
        Expected(v.name, v.dtype, v.shape)
        for v in main.values.values()
        if v.persistable and v.kind not in _NOT_PARAMS
    ]
    version = int(desc.version.version) if desc.HasField("version") else 0
    program = Program("legacy", version, blocks, inputs, outputs, {}, model_file=path, warnings=warnings)
    return program, expected
