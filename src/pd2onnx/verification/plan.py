"""Which Paddle values ``verify`` can compare, and how to ask Paddle for them.

A Paddle value is named by the op that produced it: ``(block, index, name)`` (legacy programs
reuse variable names, so the name alone is not enough). Paddle's executor gives a variable's
data after the whole run, so an op's output is Paddle's own only when no later op writes
the same variable (legacy names written again, PIR in-place ops storing into an operand):
such outputs are *exact*; the others are listed as not comparable. Values inside
control-flow blocks are not exposed by Paddle's executor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pd2onnx.paddle.program import Op, Program

PLUMBING = frozenset({"data", "feed", "fetch", "yield"})
RANDOM_OPS = frozenset({"uniform", "gaussian", "randint", "randperm", "multinomial", "bernoulli"})
# ops that pass their input through unchanged (what Paddle 2.x puts between a result and its fetch)
_PASS_THROUGH = frozenset({"scale", "assign"})

Ref = tuple[int, int, str]  # (block, op index, Paddle value name)


@dataclass
class ValueInfo:
    ref: Ref
    op: Op
    result: int  # PIR: result index of the producing op
    element: int | None  # PIR: element of a vector result
    dtype: str | None
    kind: str
    used: bool = False  # read by a later op, or a model output
    exact: bool = True  # Paddle's fetched data is this op's output (no later write)
    key: str = ""  # the fetch key

    @property
    def fetchable(self) -> bool:
        return self.ref[0] == 0 and self.exact and self.kind == "dense_tensor" and self.result >= 0

    @property
    def why_not(self) -> str:
        if self.ref[0] != 0:
            return "it is inside a control-flow block, whose values Paddle's executor does not expose"
        if self.result < 0:
            return "the ops inside this control-flow op store into it, which Paddle's executor does not expose"
        if not self.exact:
            return "a later op writes the same Paddle variable, so Paddle's value after the run is not this one"
        if self.kind != "dense_tensor":
            return f"it is a {self.kind.replace('_', ' ')}, which Paddle's executor does not return as an array"
        return ""


@dataclass
class Plan:
    program: Program
    ops: list[Op] = field(default_factory=list)  # every op but plumbing, in program order (all blocks)
    values: dict[Ref, ValueInfo] = field(default_factory=dict)
    outputs: list[Ref | str] = field(default_factory=list)  # per model output: its value, or a feed name
    readers: dict[str, list[Op]] = field(default_factory=dict)  # Paddle name -> ops reading it

    def outputs_of(self, op: Op) -> list[ValueInfo]:
        return [self.values[(op.block_idx, op.index, n)] for ns in op.outputs.values() for n in ns
                if (op.block_idx, op.index, n) in self.values]

    def producer_ref(self, op: Op, name: str) -> Ref | None:
        """The value ``op`` reads as ``name``: the last write before it (main block)."""
        best = None
        for ref in self._writes.get(name, ()):
            if ref[1] < op.index or op.block_idx != 0:
                best = ref
        return best

    def fetch_requests(self, refs: list[Ref]) -> list[dict]:
        """Worker requests (paddle_worker) for the given values."""
        out = []
        for ref in refs:
            v = self.values[ref]
            if self.program.format == "pir":
                out.append({"key": v.key, "op": v.op.index, "result": v.result, "element": v.element})
            else:
                out.append({"key": v.key, "name": ref[2]})
        return out

    _writes: dict[str, list[Ref]] = field(default_factory=dict)


def _nested_outputs(op: Op) -> list[str]:
    names = []
    stack = list(op.blocks)
    while stack:
        block = stack.pop()
        for inner in block.ops:
            names += [n for ns in inner.outputs.values() for n in ns]
            names += [t for t, _ in inner.inplace_pairs()]
            stack.extend(inner.blocks)
    return names


_ELEMENT = re.compile(r"\.(\d+)$")


def make_plan(program: Program) -> Plan:
    plan = Plan(program)
    main = program.main
    # variables: legacy names; PIR values joined by in-place pairs (operand, result)
    parent: dict[str, str] = {}

    def find(n: str) -> str:
        while parent.get(n, n) != n:
            n = parent[n]
        return n

    for op in program.walk_ops():
        for target, result in op.inplace_pairs():
            if target and result:
                parent[find(result)] = find(target)
    last_write: dict[str, int] = {}  # variable -> position of its last write in the main block
    for op in main.ops:
        written = [n for ns in op.outputs.values() for n in ns] + _nested_outputs(op)
        written += [t for t, _ in op.inplace_pairs()]
        for n in written:
            last_write[find(n)] = op.index
    keys = 0
    for op in program.walk_ops():
        for names in op.inputs.values():
            for n in names:
                plan.readers.setdefault(n, []).append(op)
        if op.type in PLUMBING:
            continue
        plan.ops.append(op)
        for result, names in enumerate(op.outputs.values()):
            for name in names:
                ref = (op.block_idx, op.index, name)
                info = program.find_value(name, op.block_idx)
                element = None
                if program.format == "pir":
                    m = _ELEMENT.search(name)
                    if m and name[: m.start()] not in program.blocks[op.block_idx].values:
                        element = int(m.group(1))
                keys += 1
                v = ValueInfo(ref, op, result, element, info.dtype if info else None,
                              info.kind if info else "unknown", key=f"v{keys}")
                if op.block_idx == 0:
                    v.exact = last_write.get(find(name), op.index) <= op.index
                    plan._writes.setdefault(name, []).append(ref)
                plan.values[ref] = v
        if op.block_idx == 0 and op.blocks and program.format == "pir":
            # values of the main block that the ops inside store into (in-place ops on an
            # array or a tensor): written by this op, though they are none of its results
            own = {n for ns in op.outputs.values() for n in ns}
            for name in dict.fromkeys(_nested_outputs(op)):
                if name in own or name not in main.values:
                    continue
                ref = (0, op.index, name)
                info = main.values[name]
                keys += 1
                plan.values[ref] = ValueInfo(ref, op, -1, None, info.dtype, info.kind, key=f"v{keys}",
                                             exact=last_write.get(find(name), op.index) <= op.index)
                plan._writes.setdefault(name, []).append(ref)
    fetched = set()
    for op in main.ops:
        if op.type == "fetch" and op.input("x"):
            src = op.input("x")
            fetched.add(src)
            plan.outputs.append(_last_ref(plan, src) or src)
    for ref, v in plan.values.items():
        name = ref[2]
        v.used = name in fetched or any(r is not v.op for r in plan.readers.get(name, ()))
    return plan


def _last_ref(plan: Plan, name: str) -> Ref | None:
    refs = plan._writes.get(name)
    return refs[-1] if refs else None


def pass_through_source(plan: Plan, ref: Ref) -> Ref:
    """The value a chain of ``scale`` by 1 / ``assign`` ops passes on (Paddle 2.x puts one
    between a result and its fetch): the op that really computed it."""
    seen = 0
    while seen < 8:
        v = plan.values.get(ref)
        if v is None or v.op.type not in _PASS_THROUGH:
            return ref
        op = v.op
        if op.type == "scale" and (op.attrs.get("scale", 1.0) != 1.0 or op.attrs.get("bias", 0.0) != 0.0
                                   or op.inputs.get("scale")):
            return ref
        src = op.input("x")
        prev = plan.producer_ref(op, src) if src else None
        if prev is None:
            return ref
        ref, seen = prev, seen + 1
    return ref


def adapt(value, shape: tuple | None, dtype) -> tuple:
    """Paddle's ``value`` in the layout the ONNX model holds it in (``shape``, with None for
    a dim not known, and ``dtype``; either may be None when unknown): a 0-D scalar where the
    ONNX value is [1] or the reverse, int32 shape values where ONNX reads int64, any view of
    the same elements (PIR and legacy programs shape some values differently). Returns the
    adapted array and what was changed (``""`` if nothing)."""
    import numpy as np

    arr = np.asarray(value)
    changed = []
    if dtype is not None and arr.dtype != dtype:
        changed.append(f"{arr.dtype} -> {np.dtype(dtype)}")
        arr = arr.astype(dtype)
    if shape is not None and tuple(arr.shape) != tuple(shape):
        known = [d for d in shape if d is not None]
        fits = len(known) == len(shape) and int(np.prod(known, dtype=np.int64)) == arr.size
        if fits:
            changed.append(f"shape {list(arr.shape)} -> {list(shape)}")
            arr = arr.reshape(shape)
        elif arr.size == 1 and len(shape) != arr.ndim and all(d in (None, 1) for d in shape):
            changed.append(f"shape {list(arr.shape)} -> rank {len(shape)}")
            arr = arr.reshape((1,) * len(shape))
    # (np.ascontiguousarray would turn a 0-D array into [1])
    arr = arr if arr.flags.c_contiguous else arr.copy(order="C")
    return arr, "; ".join(changed)
