"""Which form each tensor array of a program takes in ONNX: a tensor or a sequence.

OpenVINO's ONNX reader converts no ``Sequence*`` op and TensorRT has none, so an array is
a plain tensor ``[length, *element shape]`` (Concat to append, Gather to read, ScatterND to
overwrite, Slice to slice) whenever its elements share one shape: an ONNX sequence only
where they may really differ. The program says so when

- every element written into the array has the same fully known declared shape, or
- the program stacks the array (``array_to_tensor`` with ``use_stack``): Paddle's stack
  requires equal shapes, so a program that runs writes equal-shaped elements.

Arrays that share elements are decided together (one group): the values of one PIR array
written in place (``array_write_`` results), arrays passed through ``if``/``while`` (yields,
block arguments, results), legacy ``select_input``/``assign`` of arrays, and the arrays
sliced or popped from another one.

This module only reads the Program (no ONNX): the control-flow mappers ask ``ArrayPlan``
which form an array has; the exporter reports the arrays left as sequences, and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pd2onnx.paddle.program import Op, Program, Value

# Ops whose outputs are (views of) the same array as an input, and array ops whose result
# holds elements of their input array.
_SAME_ELEMENTS = {
    "array_write": ("array", ("out",)),
    "array_pop": ("array", ("array_out",)),
    "slice_array": ("input", ("out",)),
    "slice": ("input", ("out",)),  # legacy slicing of an array (into an array)
    "assign": ("x", ("out",)),
    "select_input": ("X", ("Out",)),
}


@dataclass
class ArrayGroup:
    """Arrays sharing their elements, and what decides their form."""

    names: list[str] = field(default_factory=list)
    dtype: str | None = None
    element_shapes: list[tuple[int, ...] | None] = field(default_factory=list)
    declared: tuple[int, ...] | None = None  # an array variable's declared (element) shape
    stacked: bool = False
    reason: str = ""  # why the arrays stay sequences ("" when they are tensors)

    @property
    def as_tensor(self) -> bool:
        return not self.reason

    @property
    def element_shape(self) -> tuple[int, ...] | None:
        """The shared element shape (-1 where only known at run time), None when unknown."""
        shapes = [s for s in self.element_shapes if s is not None]
        if not shapes:
            return self.declared
        return tuple(d if all(s[k] == d for s in shapes) else -1 for k, d in enumerate(shapes[0]))


class ArrayPlan:
    """The form of every tensor array of a program (by Paddle name)."""

    def __init__(self, program: Program):
        self.program = program
        self._group_of: dict[str, ArrayGroup] = {}
        # every tensor array value of every block (PIR block arguments included)
        self._arrays: dict[str, Value] = {
            name: info for block in program.blocks for name, info in block.values.items()
            if info.kind == "tensor_array"
        }
        self._build()

    # ------------------------------------------------------------------ queries
    def group(self, name: str) -> ArrayGroup | None:
        return self._group_of.get(name)

    def as_tensor(self, name: str) -> bool:
        group = self._group_of.get(name)
        return group is not None and group.as_tensor

    def element_shape(self, name: str) -> tuple[int, ...] | None:
        group = self._group_of.get(name)
        return None if group is None else group.element_shape

    def sequences(self) -> list[ArrayGroup]:
        """The groups left as ONNX sequences (each with its reason), in program order."""
        seen: list[ArrayGroup] = []
        for group in self._group_of.values():
            if not group.as_tensor and group not in seen:
                seen.append(group)
        return seen

    # ------------------------------------------------------------------ analysis
    def _is_array(self, name: str) -> bool:
        return name in self._arrays

    def _build(self) -> None:
        program = self.program
        parent: dict[str, str] = {}

        def find(a: str) -> str:
            while parent.setdefault(a, a) != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        def union(a: str, b: str) -> None:
            parent[find(a)] = find(b)

        ops = list(program.walk_ops())
        for op in ops:
            for name in self._array_names(op):
                find(name)
            for a, b in self._links(op):
                if self._is_array(a) and self._is_array(b):
                    union(a, b)
        groups: dict[str, ArrayGroup] = {}
        for name in parent:
            group = groups.setdefault(find(name), ArrayGroup())
            group.names.append(name)
            self._group_of[name] = group
        for op in ops:
            self._note(op)
        for group in groups.values():
            group.reason = self._decide(group)

    def _array_names(self, op: Op) -> list[str]:
        names = [n for ns in op.inputs.values() for n in ns] + [n for ns in op.outputs.values() for n in ns]
        return [n for n in names if self._is_array(n)]

    def _links(self, op: Op) -> list[tuple[str, str]]:
        """Pairs of names that are the same array (or share its elements) across ``op``."""
        links = []
        same = _SAME_ELEMENTS.get(op.type)
        if same is not None:
            slot, outs = same
            sources = op.inputs.get(slot, [])
            for out_slot in outs:
                for out in op.outputs.get(out_slot, []):
                    links += [(src, out) for src in sources]
        if op.type in ("if", "while"):
            links += self._region_links(op)
        return links

    def _region_links(self, op: Op) -> list[tuple[str, str]]:
        """PIR if/while: results, yields, block arguments and initial values, by position."""
        links = []
        outs = [n for ns in op.outputs.values() for n in ns]
        for block in op.blocks:
            last = block.ops[-1] if block.ops else None
            yields = list(last.inputs.get("x", [])) if last is not None and last.type == "yield" else []
            if op.type == "while":
                inits = [n for ns in op.inputs.values() for n in ns][1:]
                for k, arg in enumerate(block.args):
                    if k < len(inits):
                        links.append((inits[k], arg))
                    if k + 1 < len(yields):
                        links.append((yields[k + 1], arg))
                    if k < len(outs):
                        links.append((arg, outs[k]))
            else:
                links += list(zip(yields, outs))
        return links

    def _note(self, op: Op) -> None:
        """What ``op`` tells about the elements of the arrays it touches."""
        program = self.program
        if op.type == "array_write":
            names = op.inputs.get("array") or op.outputs.get("out", [])
            x = (op.inputs.get("x") or [None])[0]
            group = self._group_of.get(names[0]) if names else None
            info = program.find_value(x, op.block_idx) if x else None
            if group is not None:
                group.element_shapes.append(None if info is None else info.shape)
                if info is not None and info.dtype is not None:
                    group.dtype = group.dtype or info.dtype
        elif op.type == "array_to_tensor" and op.attrs.get("use_stack"):
            for name in op.inputs.get("x", []):
                group = self._group_of.get(name)
                if group is not None:
                    group.stacked = True
        for name in self._array_names(op):
            group = self._group_of[name]
            info = self._arrays[name]
            group.dtype = group.dtype or info.dtype
            if info.shape is not None and group.declared is None:
                group.declared = info.shape

    @staticmethod
    def _decide(group: ArrayGroup) -> str:
        """"" when the group's elements share one shape; else why they may not."""
        shapes = group.element_shapes
        if not shapes:  # never written: empty, of the declared element rank
            return "" if group.declared is not None else "the program declares no element shape"
        if any(s is None for s in shapes):
            return "the program does not declare the shape of every element written into it"
        ranks = sorted({len(s) for s in shapes})
        if len(ranks) > 1:
            return f"its elements have different ranks ({', '.join(map(str, ranks))})"
        if group.stacked:
            return ""
        distinct = sorted(set(shapes))
        if len(distinct) == 1 and all(d >= 0 for d in distinct[0]):
            return ""
        shown = ", ".join(str(list(s)) for s in distinct[:3])
        if len(distinct) > 1 and all(d >= 0 for s in distinct for d in s):
            return f"its elements have different shapes ({shown})"
        return (f"its elements' shapes ({shown}) have dims known only at run time, and nothing in the "
                "program requires them to be equal (no stack of the array)")
