"""The neutral program IR that both readers produce and the converter walks.

``Program -> Block -> Op``; values carry dtype and shape (-1 = dynamic). Ops are in the
canonical PIR/phi form (see ``pd2onnx.paddle.opdefs``): op names and argument names as in
Paddle's op definitions, whichever format the model came from. Parameters are numpy
arrays viewing the memory-mapped params file (never copied).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pd2onnx.errors import OpSite


@dataclass(frozen=True)
class VarRef:
    """A legacy VAR/VARS attribute: names of variables holding the value at run time."""

    names: tuple[str, ...]


@dataclass
class Value:
    """A variable (legacy) or SSA value (PIR).

    ``kind`` is ``dense_tensor`` for ordinary tensors; other kinds are ``tensor_array``,
    ``selected_rows``, ``feed_minibatch``, ``fetch_list``, ... (FORMATS.md 1.3).
    ``shape`` is None when the rank is unknown. ``lod_level`` (legacy only) is the number of
    LoD levels a dense tensor carries (1: its first dim concatenates sequences).
    """

    name: str
    dtype: str | None
    shape: tuple[int, ...] | None
    kind: str = "dense_tensor"
    persistable: bool = False
    lod_level: int = 0

    def describe(self) -> str:
        shape = "?" if self.shape is None else "[" + ", ".join(map(str, self.shape)) + "]"
        return f"{self.name}: {self.dtype or '?'}{shape}"


# In-place ops whose stored-into operand is not the first one (Paddle's op yaml:
# ``assign_out_`` has ``inplace : (output -> out)``, ``where_`` has ``(x -> out)``).
_INPLACE_SLOTS = {"assign_out": "output", "where": "x"}


@dataclass
class Op:
    """One operator. Slots map to ordered value-name lists (empty list = absent input)."""

    type: str
    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]
    attrs: dict[str, Any]
    block_idx: int = 0
    index: int = 0
    blocks: list[Block] = field(default_factory=list)  # sub-blocks (regions), in order
    legacy_type: str | None = None  # the spelling in a legacy file, when it differed
    struct_name: str | None = None  # layer path, e.g. "/Conv2D/" (PIR)
    inplace: bool = False  # PIR ``op_``: the result is stored into an operand (``inplace_pairs``)

    def input(self, slot: str) -> str | None:
        names = self.inputs.get(slot)
        return names[0] if names else None

    def output(self, slot: str) -> str | None:
        names = self.outputs.get(slot)
        return names[0] if names else None

    def inplace_pairs(self) -> list[tuple[str, str]]:
        """(operand, result) Paddle value names of an in-place PIR op (``increment_``,
        ``assign_out_``, ``batch_norm_``, ...): the result is stored into the operand, and
        later readers of the operand's name see it. Paddle's op yaml pairs an operand with the
        output slot named after it (``mean -> mean_out``), else the first operand with the
        first output (``x -> out``), with the exceptions in ``_INPLACE_SLOTS``."""
        if not self.inplace:
            return []
        outs = [(slot, names[0]) for slot, names in self.outputs.items() if names]
        if not outs:
            return []
        slot = _INPLACE_SLOTS.get(self.type)
        if slot is not None:
            return [(self.input(slot), outs[0][1])] if self.input(slot) else []
        by_slot = dict(outs)
        named = [(self.input(s), by_slot.get(f"{s}_out") or by_slot.get(f"{s}out"))
                 for s in self.inputs if self.input(s)]
        named = [(a, b) for a, b in named if b]
        if named:
            return named
        first = next((names[0] for names in self.inputs.values() if names), None)
        return [(first, outs[0][1])] if first else []

    @property
    def site(self) -> OpSite:
        return OpSite(self.legacy_type or self.type, self.block_idx, self.index, self.struct_name)


@dataclass
class Block:
    idx: int
    parent_idx: int
    ops: list[Op] = field(default_factory=list)
    values: dict[str, Value] = field(default_factory=dict)  # values created in this block
    args: list[str] = field(default_factory=list)  # block arguments (PIR loop bodies)


@dataclass
class Program:
    format: str  # "legacy" or "pir"
    version: int  # legacy: ProgramDesc.version; pir: base_code.version
    blocks: list[Block]
    inputs: list[Value]
    outputs: list[Value]
    params: dict[str, np.ndarray]
    model_file: str = ""
    params_file: str | None = None  # the combined file, or the directory of per-variable files
    params_layout: str = "none"  # "combined", "separate" (one file per variable) or "none"
    warnings: list[str] = field(default_factory=list)
    # files of the model's folder that were looked at and left aside, with why (discover.py)
    ignored_files: list[tuple[str, str]] = field(default_factory=list)

    @property
    def main(self) -> Block:
        return self.blocks[0]

    @property
    def writer(self) -> str:
        """Which Paddle wrote the file, as far as the file says."""
        if self.format == "legacy":
            if not self.version:
                return "Paddle (develop build or unknown)"
            v = self.version
            return f"Paddle {v // 1_000_000}.{v // 1_000 % 1_000}.{v % 1_000}"
        return {
            0: "Paddle develop build",
            1: "Paddle 3.0",
            2: "Paddle 3.1",
            3: "Paddle 3.2",
            4: "Paddle 3.3",
        }.get(self.version, f"Paddle newer than 3.3 (PIR version {self.version})")

    def find_value(self, name: str, block_idx: int = 0) -> Value | None:
        """Look a value up in a block and then its ancestors."""
        idx = block_idx
        while idx >= 0:
            block = self.blocks[idx]
            if name in block.values:
                return block.values[name]
            idx = block.parent_idx
        return None

    def walk_ops(self, block: Block | None = None) -> Iterator[Op]:
        """Every op, depth first: an op, then the ops of its sub-blocks."""
        for op in (block or self.main).ops:
            yield op
            for sub in op.blocks:
                yield from self.walk_ops(sub)

    def op_histogram(self) -> dict[int, dict[str, int]]:
        """Op counts per block index (block 0 = main)."""
        hist: dict[int, Counter] = {b.idx: Counter() for b in self.blocks}
        for block in self.blocks:
            for op in block.ops:
                hist[block.idx][op.type] += 1
        return {idx: dict(sorted(c.items())) for idx, c in hist.items()}

    @property
    def param_bytes(self) -> int:
        return sum(a.nbytes for a in self.params.values())
