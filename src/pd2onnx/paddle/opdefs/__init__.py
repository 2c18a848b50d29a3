"""The op-definition table: canonical (PIR/phi) signatures and their legacy spellings.

This is the one declarative table behind the canonical op form (DESIGN.md). Each entry says,
for one canonical op:

- ``inputs``: operand names in the PIR operand order (tensor arguments, then the *mutable
  attributes* - IntArray/Scalar arguments that may be a tensor), as in Paddle's op
  definitions (``paddle/phi/ops/yaml``);
- ``outputs``: result names in order;
- ``attrs``: attribute defaults from the op definition (used when a file lacks one);
- ``legacy``: the legacy (ProgramDesc) op type(s) that mean this op;
- ``slots``: canonical argument name -> legacy slot name, where it is not the CamelCase of
  the canonical name (``x`` -> ``X``, ``mean_out`` -> ``MeanOut`` is the default);
- ``rename``: canonical attribute name -> legacy attribute name, where they differ;
- ``tensor``: for operands that legacy files usually keep as an attribute: the legacy input
  slots that may carry them as tensors instead, tried in order (a single tensor slot such
  as ``Shape`` first, then a list slot such as ``ShapeTensor``); without any, the legacy
  attribute (after ``rename``) is used.

Entries live in one module per op family beside this file (same families as the
converter's mappers) and are collected here. Ops that no entry knows keep their own
names and are still read, listed and reported - never dropped.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any

from pd2onnx.paddle import dtypes
from pd2onnx.paddle.program import VarRef

# Attributes that only describe how Paddle ran the op; never needed for conversion.
NOISE_ATTRS = frozenset(
    {
        "op_callstack",
        "op_role",
        "op_role_var",
        "op_namescope",
        "op_device",
        "with_quant_attr",
        "use_mkldnn",
        "use_onednn",
        "mkldnn_data_type",
        "onednn_data_type",
        "use_cudnn",
        "use_quantizer",
        "workspace_size_MB",
        "exhaustive_search",
        "fuse_relu_before_depthwise_conv",
        "fuse_with_relu",
        "name",
    }
)
# ``name`` is noise for legacy ops except feed/fetch, which the reader handles itself.

# Attributes whose integer value is a legacy VarType code to translate to a dtype name.
DTYPE_ATTRS = frozenset({"dtype", "out_dtype", "in_dtype"})


@dataclass(frozen=True)
class OpDef:
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    legacy: tuple[str, ...] = ()
    slots: dict[str, str] = field(default_factory=dict)
    rename: dict[str, str] = field(default_factory=dict)
    tensor: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def legacy_slot(self, name: str) -> str:
        return self.slots.get(name) or "".join(p.capitalize() for p in name.split("_"))


_BY_NAME: dict[str, OpDef] = {}
_BY_LEGACY: dict[str, OpDef] = {}
_loaded = False


def define(
    name: str,
    signature: str,
    *,
    attrs: dict[str, Any] | None = None,
    legacy: str | tuple[str, ...] | None = None,
    slots: dict[str, str] | None = None,
    rename: dict[str, str] | None = None,
    tensor: dict[str, tuple[str, ...]] | None = None,
) -> OpDef:
    """Add one entry. ``signature`` is ``"in1 in2 -> out1 out2"``.

    ``legacy`` defaults to the canonical name; pass ``()`` for PIR-only ops.
    """
    ins, _, outs = signature.partition("->")
    legacy_names = (name,) if legacy is None else ((legacy,) if isinstance(legacy, str) else legacy)
    opdef = OpDef(
        name=name,
        inputs=tuple(ins.split()),
        outputs=tuple(outs.split()),
        attrs=dict(attrs or {}),
        legacy=legacy_names,
        slots=dict(slots or {}),
        rename=dict(rename or {}),
        tensor=dict(tensor or {}),
    )
    if name in _BY_NAME:
        raise ValueError(f"op {name!r} is defined twice")
    for key in opdef.tensor:
        if key not in opdef.inputs:
            raise ValueError(f"op {name!r}: tensor argument {key!r} is not one of its inputs {opdef.inputs}")
    _BY_NAME[name] = opdef
    for legacy_name in legacy_names:
        if legacy_name in _BY_LEGACY:
            raise ValueError(f"legacy op {legacy_name!r} is mapped twice")
        _BY_LEGACY[legacy_name] = opdef
    return opdef


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        importlib.import_module(f"{__name__}.{info.name}")


def get(name: str) -> OpDef | None:
    """The entry for a canonical op name."""
    _load()
    return _BY_NAME.get(name)


def get_legacy(legacy_type: str) -> OpDef | None:
    """The entry for a legacy op type."""
    _load()
    return _BY_LEGACY.get(legacy_type)


def all_defs() -> dict[str, OpDef]:
    _load()
    return dict(_BY_NAME)


def legacy_aliases() -> dict[str, list[str]]:
    """canonical name -> legacy spellings that differ from it."""
    _load()
    out: dict[str, list[str]] = {}
    for legacy_name, opdef in _BY_LEGACY.items():
        if legacy_name != opdef.name:
            out.setdefault(opdef.name, []).append(legacy_name)
    return out


def translate_legacy(
    op_type: str,
    inputs: dict[str, list[str]],
    outputs: dict[str, list[str]],
    attrs: dict[str, Any],
) -> tuple[str, dict[str, list[str]], dict[str, list[str]], dict[str, Any]]:
    """Legacy op -> canonical (type, inputs, outputs, attrs).

    Unknown ops come back with their own names (minus noise attributes). Legacy slots and
    attributes the entry does not name are kept under their legacy names, so a mapper can
    still read legacy-only arguments (e.g. the ``axis`` of ``elementwise_add``).
    """
    attrs = {k: v for k, v in attrs.items() if k not in NOISE_ATTRS}
    opdef = get_legacy(op_type)
    if opdef is None:
        return op_type, dict(inputs), dict(outputs), attrs

    legacy_to_attr = {legacy: canon for canon, legacy in opdef.rename.items()}
    new_attrs: dict[str, Any] = {}
    for key, value in attrs.items():
        canon = legacy_to_attr.get(key, key)
        if canon in DTYPE_ATTRS and isinstance(value, int) and not isinstance(value, bool):
            value = dtypes.from_legacy_code(value)
        new_attrs[canon] = value

    used_in: set[str] = set()
    new_in: dict[str, list[str]] = {}
    for name in opdef.inputs:
        if isinstance(new_attrs.get(name), VarRef):  # an argument given as variables (VAR/VARS)
            new_in[name] = list(new_attrs.pop(name).names)
            continue
        if name in opdef.tensor:
            for slot in opdef.tensor[name]:
                if inputs.get(slot):
                    new_in[name] = list(inputs[slot])
                    break
            used_in.update(opdef.tensor[name])
            continue
        slot = opdef.legacy_slot(name)
        used_in.add(slot)
        new_in[name] = list(inputs.get(slot, []))
    for slot, names in inputs.items():
        if slot not in used_in:
            new_in.setdefault(slot, list(names))

    used_out: set[str] = set()
    new_out: dict[str, list[str]] = {}
    for name in opdef.outputs:
        slot = opdef.legacy_slot(name)
        used_out.add(slot)
        new_out[name] = list(outputs.get(slot, []))
    for slot, names in outputs.items():
        if slot not in used_out:
            new_out.setdefault(slot, list(names))

    for key, default in opdef.attrs.items():
        new_attrs.setdefault(key, default)
    return opdef.name, new_in, new_out, new_attrs


def pir_slots(
    op_name: str, n_operands: int, n_results: int
) -> tuple[tuple[str, ...], tuple[str, ...], OpDef | None]:
    """Names for a PIR op's operands and results, by position."""
    opdef = get(op_name)
    ins = opdef.inputs if opdef else ()
    outs = opdef.outputs if opdef else ()
    in_names = tuple(ins[i] if i < len(ins) else f"in{i}" for i in range(n_operands))
    out_names = tuple(outs[i] if i < len(outs) else f"out{i}" for i in range(n_results))
    return in_names, out_names, opdef
