"""Reader for Paddle 3 PIR JSON programs (``*.json``; FORMATS.md 3).

Values are SSA ids; each gets a readable, stable name (``<op>_<id>``, the feed name for
``data``, the parameter name for ``p``). Builtin ``combine``/``split``/``slice`` only pack
and unpack vectors, so they are resolved here: an operand that is a vector becomes the
list of its element names in the slot. Control-flow regions become sub-blocks.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pd2onnx.errors import ModelFormatError
from pd2onnx.paddle import dtypes, opdefs
from pd2onnx.paddle.params import Expected
from pd2onnx.paddle.program import Block, Op, Program, Value

NEWEST_KNOWN_VERSION = 4

_DIALECTS = {"0": "builtin", "1": "pd_op", "2": "cf", "3": "custom_op", "4": "pd_dist"}
_NON_FINITE = {"NaN": math.nan, "INF": math.inf, "-INF": -math.inf}
# Paddle marks values it never saves by this substring in their names (pir/core.py; copies
# get a suffix after it), e.g. the rnn op's ``lstm_0.dropout_state__non_persistable``.
NON_PERSISTABLE_MARK = "__non_persistable"
_OP_META_ATTRS = {"struct_name", "op_dist_attr", "op_role", "stop_gradient", "persistable"}


class _Bad(Exception):
    """Internal: a structural problem; turned into ModelFormatError with the op's position."""


def _kind(value: Any) -> str:
    return "null" if value is None else f"a JSON {type(value).__name__}"


def _listed(ojson: dict, key: str, what: str) -> list:
    """An op's list entry (absent = empty); null or another type is a structural error."""
    value = ojson.get(key, [])
    if not isinstance(value, list):
        raise _Bad(f"its {what} ({key}) is {_kind(value)}, expected a list")
    return value


def _split_id(text: str) -> tuple[str, str]:
    dialect, _, name = text.partition(".")
    if not name:
        return "", dialect
    return _DIALECTS.get(dialect, dialect), name


def parse_type(tt: Any) -> tuple[str, str | None, tuple[int, ...] | None, list | None]:
    """-> (kind, dtype, shape, element types for vectors)."""
    if not isinstance(tt, dict) or "#" not in tt:
        raise _Bad(f"malformed type {str(tt)[:80]}")
    _, tname = _split_id(tt["#"])
    payload = tt.get("D")
    if tname in ("t_dtensor", "t_selected_rows", "t_dense_tensor_array"):
        if not isinstance(payload, list) or len(payload) < 2:
            raise _Bad(f"malformed {tname} payload")
        elem = payload[0]
        _, ename = _split_id(elem.get("#", "")) if isinstance(elem, dict) else ("", "")
        dtype = dtypes.PIR_DTYPES.get(ename)
        dims = payload[1]
        if not isinstance(dims, list) or not all(isinstance(d, int) for d in dims):
            raise _Bad(f"malformed dims {str(dims)[:80]}")
        kind = {"t_dtensor": "dense_tensor", "t_selected_rows": "selected_rows"}.get(tname, "tensor_array")
        return kind, dtype, tuple(dims), None
    if tname == "t_vec":
        return "vec", None, None, list(payload or [])
    if tname in dtypes.PIR_DTYPES:
        return "scalar", dtypes.PIR_DTYPES[tname], (), None
    if tname == "NULL":
        return "null", None, None, None
    return tname, None, None, None


# attribute kinds whose payload (D) a value needs: without it a number would read as NaN or 0
_NEEDS_VALUE = frozenset({"a_bool", "a_i32", "a_i64", "a_index", "a_f32", "a_f64", "a_array", "a_intarray",
                          "a_dtype", "a_c64", "a_c128", "a_type"})


def _in_range(value: int, bits: int) -> int:
    """An integer attribute within its type's range (JSON numbers have none)."""
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise _Bad(f"integer attribute {value:.3g} is out of the int{bits} range")
    return value


def parse_attr(at: Any) -> Any:
    """A PIR attribute object -> a Python value (FORMATS.md 3.4)."""
    if not isinstance(at, dict) or "#" not in at:
        raise _Bad(f"malformed attribute {str(at)[:80]}")
    _, kind = _split_id(at["#"])
    if "VD" in at:
        if at["VD"] not in _NON_FINITE:
            raise _Bad(f"unknown non-finite marker {at['VD']!r}")
        return _NON_FINITE[at["VD"]]
    d = at.get("D")
    if d is None and kind in _NEEDS_VALUE:
        raise _Bad(f"attribute {at['#']!r} has no value (D)")
    if kind == "a_bool":
        return bool(d)
    if kind in ("a_i32", "a_i64", "a_index"):
        return _in_range(int(d), 32 if kind == "a_i32" else 64)
    if kind == "a_f32":
        import numpy as np

        return float(np.float32(d))
    if kind == "a_f64":
        return float(d)
    if kind in ("a_str", "a_tensorname", "a_layout"):
        return d
    if kind == "a_array":
        return [parse_attr(x) for x in d]
    if kind == "a_intarray":
        return [_in_range(int(x), 64) for x in d]
    if kind == "a_dtype":
        return dtypes.from_attr_string(d)
    if kind == "a_scalar":
        if isinstance(d, list) and len(d) == 3:
            return complex(d[1], d[2])
        if isinstance(d, list) and len(d) == 2:
            return d[1]
        return d
    if kind in ("a_c64", "a_c128"):
        return complex(d[0], d[1])
    if kind == "a_type":
        return parse_type(d)[1]
    if kind == "NULL":
        return None
    return d  # a_place, dist attrs: kept raw, never needed for conversion


class _Reader:
    def __init__(self, path: str):
        self.path = path
        self.names: dict[int, str] = {}  # value id -> name
        self.vecs: dict[int, list[str]] = {}  # vec value id -> element names
        self.blocks: list[Block] = []
        self.expected: list[Expected] = []
        self.data_names: list[str] = []
        self.fetches: list[tuple[int, str]] = []

    def fail(self, msg: str, where: str) -> ModelFormatError:
        return ModelFormatError(
            f"{where}: {msg}",
            file=self.path,
            hint="the JSON is not a valid Paddle PIR program (corrupt or hand-edited); export it again",
        )

    def operand_names(self, operand: Any) -> list[str]:
        if not isinstance(operand, dict) or "%" not in operand:
            raise _Bad(f"malformed operand {str(operand)[:80]}")
        vid = operand["%"]
        if vid == 0:
            return []
        if vid in self.vecs:
            return list(self.vecs[vid])
        if vid not in self.names:
            raise _Bad(f"operand refers to value {vid}, which no earlier op defines")
        return [self.names[vid]]

    def define(self, block: Block, vid: int, name: str, tt: Any) -> None:
        kind, dtype, shape, elems = parse_type(tt)
        if kind == "vec":
            names = []
            for i, et in enumerate(elems or []):
                ename = f"{name}.{i}"
                _, edtype, eshape, _ = parse_type(et)
                block.values[ename] = Value(ename, edtype, eshape)
                names.append(ename)
            self.vecs[vid] = names
            return
        self.names[vid] = name
        block.values[name] = Value(name, dtype, shape, kind=kind)

    def read_block(self, bjson: Any, parent_idx: int) -> Block:
        if not isinstance(bjson, dict) or not isinstance(bjson.get("ops", []), list):
            raise _Bad("malformed block")
        block = Block(idx=len(self.blocks), parent_idx=parent_idx)
        self.blocks.append(block)
        for arg in bjson.get("args", []) or []:
            if not isinstance(arg, dict) or not isinstance(arg.get("#"), int):
                raise _Bad("malformed block argument")
            name = f"arg_{-arg['#']}"
            self.define(block, arg["#"], name, arg.get("TT"))
            block.args.append(name)
        for i, ojson in enumerate(bjson.get("ops", [])):
            where = f"block {block.idx}, op #{i} ({ojson.get('#', '?') if isinstance(ojson, dict) else '?'})"
            try:
                op = self.read_op(ojson, block)
            except _Bad as exc:
                raise self.fail(str(exc), where) from None
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
                raise self.fail(f"unexpected structure ({type(exc).__name__}: {exc})", where) from None
            if op is not None:
                op.block_idx, op.index = block.idx, len(block.ops)
                block.ops.append(op)
        return block

    def read_op(self, ojson: dict, block: Block) -> Op | None:
        full = ojson["#"]
        if not isinstance(full, str):
            raise _Bad(f"op name {str(full)[:40]} is not a string")
        if full == "p":
            return self.read_param(ojson, block)
        dialect, name = _split_id(full)
        operands = _listed(ojson, "I", "operand list")
        results = ojson.get("O", [])
        if isinstance(results, dict):
            results = [results]
        elif not isinstance(results, list):
            raise _Bad(f"its result list (O) is {_kind(results)}, expected a list")
        for key, what in (("A", "attribute list"), ("regions", "region list")):
            _listed(ojson, key, what)

        if dialect == "builtin" and name == "combine":
            elems = [n for o in operands for n in self.operand_names(o)]
            self.vecs[results[0]["%"]] = elems
            return None
        if dialect == "builtin" and name in ("split", "slice"):
            (vec,) = [self.operand_names(o) for o in operands[:1]]
            if name == "split":
                if len(vec) != len(results):
                    raise _Bad(f"builtin.split of {len(vec)} values into {len(results)} results")
                pairs = list(zip(results, vec))
            else:
                index = int(next(parse_attr(a["AT"]) for a in ojson.get("A", []) if a["N"] == "index"))
                pairs = [(results[0], vec[index])]
            for res, elem in pairs:
                self.names[res["%"]] = elem
            return None

        attrs: dict[str, Any] = {}
        struct_name = None
        for entry in ojson.get("A", []) or []:
            key = entry["N"]
            value = parse_attr(entry["AT"])
            if key == "struct_name":
                struct_name = value or None
            elif key not in _OP_META_ATTRS:
                attrs[key] = value

        if dialect == "pd_op":
            op_type = name[:-1] if name.endswith("_") and not name.endswith("__") else name
        elif dialect == "cf" and name == "yield":
            op_type = "yield"
        else:
            op_type = f"{dialect}.{name}" if dialect else name

        in_names, out_names, opdef = opdefs.pir_slots(op_type, len(operands), len(results))
        if opdef is not None and len(operands) < len(opdef.inputs):
            # trailing arguments may be written as attributes instead (full: shape, value)
            missing = [n for n in opdef.inputs[len(operands):] if n not in attrs]
            if missing:
                raise _Bad(f"{len(operands)} operand(s), but {op_type} takes ({', '.join(opdef.inputs)}): "
                           f"{', '.join(missing)} missing (neither an operand nor an attribute)")
        inputs = {slot: self.operand_names(o) for slot, o in zip(in_names, operands)}
        if op_type == "yield":
            inputs = {"x": [n for o in operands for n in self.operand_names(o)]}
        if opdef:
            for key, default in opdef.attrs.items():
                attrs.setdefault(key, default)

        sub_blocks = []
        for region in ojson.get("regions", []) or []:
            for bjson in region.get("blocks", []) or []:
                sub_blocks.append(self.read_block(bjson, block.idx))

        outputs: dict[str, list[str]] = {}
        base = op_type.rsplit(".", 1)[-1]
        for slot, res in zip(out_names, results):
            vid = res["%"]
            if vid == 0:
                outputs[slot] = []
                continue
            if op_type == "data":
                vname = attrs.get("name") or f"data_{vid}"
            elif op_type == "fetch":
                vname = attrs.get("name") or f"fetch_{vid}"
            else:
                vname = f"{base}_{vid}"
            self.define(block, vid, vname, res.get("TT"))
            outputs[slot] = list(self.vecs[vid]) if vid in self.vecs else [vname]

        if op_type == "data" and block.idx == 0:
            self.data_names.append(outputs[out_names[0]][0] if out_names else "")
        if op_type == "feed" and block.idx == 0:
            self.data_names.append(outputs[out_names[0]][0] if out_names else "")
        if op_type == "fetch" and block.idx == 0:
            self.fetches.append((int(attrs.get("col", len(self.fetches))), outputs[out_names[0]][0]))
        inplace = dialect == "pd_op" and name.endswith("_") and not name.endswith("__")
        return Op(op_type, inputs, outputs, attrs, blocks=sub_blocks, struct_name=struct_name, inplace=inplace)

    def read_param(self, ojson: dict, block: Block) -> None:
        args = ojson.get("A")
        if not isinstance(args, list) or len(args) < 4 or not isinstance(args[3], str):
            raise _Bad("parameter op without a name")
        name = args[3]
        result = ojson["O"]
        oa = ojson.get("OA")
        persistable = True if not oa else bool(oa[0])
        if NON_PERSISTABLE_MARK in name:  # Paddle's own marker (e.g. the rnn op's dropout_state)
            persistable = False
        self.define(block, result["%"], name, result.get("TT"))
        value = block.values[name]
        value.persistable = persistable
        if persistable:
            self.expected.append(Expected(name, value.dtype, value.shape))
        return None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _bad_text(path: str, what: str) -> ModelFormatError:
    return ModelFormatError(what, file=path, hint="the file is corrupt (damaged in transfer or edited); export the model again")


def _check_strings(doc: Any, path: str) -> None:
    """Every string (keys too) must be encodable as UTF-8: a JSON escape of half a UTF-16
    surrogate pair (``\\ud800``) decodes to a string that is not."""
    stack = [doc]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                shown = item.encode("utf-8", "backslashreplace").decode("ascii", "replace")[:60]
                raise _bad_text(path, f"the string {shown!r} holds an unpaired UTF-16 surrogate escape: "
                                "not valid text") from None


def _decode(data: bytes, path: str) -> str:
    """The file's text: strict UTF-8 (JSON's encoding; Paddle writes nothing else)."""
    try:
        return data.decode("utf-8-sig")  # JSON's encoding (a byte order mark, if any, dropped)
    except UnicodeDecodeError as exc:
        raise _bad_text(path, f"not valid UTF-8 text: byte {exc.start} ({data[exc.start:exc.start + 1]!r}) "
                        f"{exc.reason}") from None


def read_pir(data: bytes, path: str) -> tuple[Program, list[Expected]]:
    text = _decode(data, path)
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ModelFormatError(
            f"not valid JSON ({exc})",
            file=path,
            hint="the file is truncated or corrupt; export the model again",
        ) from None
    if _SURROGATE_ESCAPE.search(text):
        _check_strings(doc, path)
    base = doc.get("base_code") if isinstance(doc, dict) else None
    if not isinstance(base, dict) or base.get("magic") != "pir":
        raise ModelFormatError(
            "JSON file without the PIR magic (base_code.magic == 'pir'): not a Paddle PIR program",
            file=path,
            hint="pass the .json written by paddle.jit.save with Paddle 3.x",
        )
    version = base.get("version", 0)
    warnings = []
    if not isinstance(version, int) or version > NEWEST_KNOWN_VERSION:
        warnings.append(
            f"{path}: PIR version {version} is newer than the newest pd2onnx knows "
            f"({NEWEST_KNOWN_VERSION}); reading it as best it can"
        )
    try:
        regions = doc["program"]["regions"]
        (block_json,) = regions[0]["blocks"]
    except (KeyError, TypeError, IndexError, ValueError):
        raise ModelFormatError(
            "the PIR program must hold one region with one block",
            file=path,
            hint="the file is corrupt; export the model again",
        ) from None
    reader = _Reader(path)
    try:
        reader.read_block(block_json, -1)
    except _Bad as exc:  # block-level structure errors outside any op
        raise reader.fail(str(exc), "program") from None
    main = reader.blocks[0]
    inputs = [main.values[n] for n in reader.data_names]
    outputs = [main.values[n] for _, n in sorted(reader.fetches)]
    program = Program("pir", int(version) if isinstance(version, int) else 0, reader.blocks,
                      inputs, outputs, {}, model_file=path, warnings=warnings)
    return program, reader.expected
