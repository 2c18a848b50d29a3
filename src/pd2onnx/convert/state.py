"""The state of one conversion: the graph being filled, Paddle name -> ONNX value bindings,
fresh names, constants, and what control-flow mappers track across ops (tensor arrays).

The exporter creates it and hands it the block converter (``convert_block``); mappers reach
it through ``OpContext.state``. It imports neither the exporter nor any mapper module, so
``context -> state`` and ``exporter -> state`` never close a circle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import onnx_ir as ir

from pd2onnx import provenance
from pd2onnx.convert.arrays import ArrayPlan
from pd2onnx.convert.casting import c_cast
from pd2onnx.convert.naming import fresh_name
from pd2onnx.convert.onnx_types import onnx_dtype
from pd2onnx.errors import ConversionError, OpRefused
from pd2onnx.optimize._ir import np_tensor
from pd2onnx.paddle import dtypes
from pd2onnx.paddle.program import Op, Program


def seq_dtype(dtype: str) -> str:
    """The element type a tensor array of ``dtype`` is stored in: ONNX sequences have no
    bfloat16 elements (no sequence op allows ``seq(tensor(bfloat16))``), so bfloat16 arrays
    hold float32 elements (exact) and are cast back when an element leaves the array."""
    return "float32" if dtype == "bfloat16" else dtype


@dataclass
class ConvertState:
    program: Program
    opset: int
    graph: ir.Graph
    env: dict[str, ir.Value] = field(default_factory=dict)
    fresh: set[ir.Value] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    const_count: int = 0
    root: ir.Graph | None = None  # the main graph (``graph`` is the one being filled)
    params_env: dict[str, ir.Value] = field(default_factory=dict)  # parameters, always in the root
    array_lengths: dict[ir.Value, int] = field(default_factory=dict)  # tensor arrays of known length
    filled: set[ir.Value] = field(default_factory=set)  # tensor arrays known to hold an element
    # Arrays a loop body only appends to (Paddle name -> the element written this iteration)
    scan_arrays: dict[str, ir.Value | None] = field(default_factory=dict)
    # array_write ops known to append (ids), and array lengths -> the array they measured
    append_ops: set[int] = field(default_factory=set)
    measured: dict[ir.Value, ir.Value] = field(default_factory=dict)
    # Legacy variables holding only Paddle 2.x dy2static's "no value" marker (found once)
    no_value: frozenset[str] | None = None
    arrays: ArrayPlan | None = None  # the form of each tensor array (``array_plan()``)
    # Ops a mapper refused (all reported at the end) and the Paddle values they left unset
    refusals: list[OpRefused] = field(default_factory=list)
    unset: set[str] = field(default_factory=set)
    # ONNX value -> the Paddle value it was bound to (name, block index if known): what the
    # typing step knows of values ONNX's inference cannot type (Paddle's declarations)
    bound: dict[ir.Value, tuple[str, int | None]] = field(default_factory=dict)
    # Converts a list of ops into the graph being filled (the exporter's walk): control-flow
    # mappers call it for sub-blocks, so no mapper imports the exporter back.
    convert_block: Callable[[ConvertState, list[Op]], None] | None = None
    # The Paddle op being converted: the nodes appended and the outputs bound meanwhile are
    # tagged with it (pd2onnx.provenance); the exporter sets it around each mapper.
    current_op: Op | None = None
    # Paddle values a mapper deliberately binds to something else than Paddle's value (e.g. a
    # frozen quantized chain computed in real values where Paddle holds integers), with why:
    # provenance records them as not carried, so verify never compares them.
    not_paddle: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.root is None:
            self.root = self.graph

    @contextmanager
    def subgraph(self, name: str) -> Iterator[ir.Graph]:
        """Fill a new (sub)graph; Paddle names bound inside do not leak out of it."""
        saved_graph, saved_env = self.graph, dict(self.env)
        graph = ir.Graph([], [], nodes=[], name=self.unique_name(name))
        self.graph = graph
        try:
            yield graph
        finally:
            self.graph, self.env = saved_graph, saved_env

    def unique_name(self, base: str) -> str:
        return fresh_name(base, self.names)

    def append_node(self, node: ir.Node) -> None:
        if self.current_op is not None:
            provenance.tag_node(node, provenance.site_of(self.current_op))
        self.graph.append(node)

    def add_const(self, arr: np.ndarray, name: str | None = None) -> ir.Value:
        self.const_count += 1
        vname = self.unique_name(name or f"const_{self.const_count}")
        value = ir.Value(name=vname, const_value=np_tensor(arr, name=vname),
                         type=ir.TensorType(ir.DataType.from_numpy(arr.dtype)), shape=ir.Shape(arr.shape))
        self.graph.register_initializer(value)
        return value

    def lookup(self, name: str, block_idx: int = 0) -> ir.Value:
        if name in self.unset and name not in self.env:
            raise UnsetValue(name)
        value = self.env.get(name)
        if value is None:
            value = self.params_env.get(name)
        if value is not None:
            return value
        array = self.program.params.get(name)
        if array is not None:
            value = ir.Value(name=self.unique_name(name), const_value=ir.Tensor(array, name=name),
                             type=ir.TensorType(ir.DataType.from_numpy(array.dtype)), shape=ir.Shape(array.shape))
            self.root.register_initializer(value)
            self.params_env[name] = value
            return value
        info = self.program.find_value(name, block_idx)
        if info is not None and info.kind == "tensor_array" and info.dtype:
            # A legacy tensor array is a variable no op creates: it starts empty.
            value = self.empty_array(name, info.dtype)
            self.env[name] = value
            return value
        raise ConversionError(
            f"value {name!r} is used before any op defines it",
            file=self.program.model_file,
            hint="the program is malformed, or an earlier op was not converted",
        )

    def array_plan(self) -> ArrayPlan:
        """Which tensor arrays are tensors and which sequences (``convert/arrays.py``)."""
        if self.arrays is None:
            self.arrays = ArrayPlan(self.program)
        return self.arrays

    def empty_array(self, name: str, dtype: str) -> ir.Value:
        """A new empty tensor array (Paddle name ``name``, elements of ``dtype`` stored in
        ``seq_dtype``): a tensor ``[0, 1, 1, ...]`` of the element rank plus one when the array
        is a tensor (an append that may meet it empty expands it to ``[0, *element dims]``),
        else an empty sequence."""
        element = seq_dtype(dtype)
        plan = self.array_plan()
        if plan.as_tensor(name):
            value = self.empty_tensor(element, [0] + [1] * len(plan.element_shape(name) or ()), name)
        else:
            value = self._node("SequenceEmpty", [], {"dtype": onnx_dtype(element)}, name, element)
            value.type = ir.SequenceType(ir.TensorType(onnx_dtype(element)))
        self.array_lengths[value] = 0
        return value

    def empty_tensor(self, dtype: str, dims: list[int], name: str) -> ir.Value:
        """A tensor of ``dims`` holding no element (a 0 among them), made by a ConstantOfShape
        node (not a zero-size constant: OpenVINO's ONNX reader takes one for a scalar, and a
        Loop or If carrying it then fails; the optimizer does not fold it back)."""
        shape = self.add_const(np.asarray(dims, dtype=np.int64), f"{name}/empty_shape")
        made = "float32" if dtype == "bfloat16" and self.opset < 20 else dtype  # bfloat16 from ConstantOfShape-20
        value = self._node("ConstantOfShape", [shape], {"value": ir.tensor(np.zeros((1,), dtypes.to_numpy(made)))},
                           f"{name}/empty", made)
        if made != dtype:
            value = self._node("Cast", [value], {"to": onnx_dtype(dtype)}, f"{name}/empty", dtype)
        value.shape = ir.Shape(dims)
        return value

    def _node(self, op_type: str, inputs: list[ir.Value], attrs: dict, name: str, dtype: str) -> ir.Value:
        """Append a one-output node named after ``name``; its output has ``dtype``."""
        node = ir.Node("", op_type, inputs, ir.convenience.convert_attributes(attrs), num_outputs=1,
                       name=self.unique_name(name))
        value = node.outputs[0]
        value.name = self.unique_name(name)
        value.type = ir.TensorType(onnx_dtype(dtype))
        self.append_node(node)
        return value

    def const_of(self, name: str, block_idx: int = 0) -> np.ndarray | None:
        """The numpy value behind Paddle value ``name`` if it is a constant (initializer)."""
        value = self.env.get(name)
        if value is None:
            value = self.params_env.get(name)
        if value is None and name in self.program.params:
            value = self.lookup(name, block_idx)
        if value is None:
            return None
        node = value.producer()
        if value.const_value is None and node is not None and node.op_type == "Cast" and node.inputs[0] is not None:
            # a cast constant (Paddle 2.6 writes a float64 literal as float32 assign_value + cast)
            src = node.inputs[0].const_value
            to = node.attributes.get("to")
            if src is not None and to is not None:
                return c_cast(src.numpy(), ir.DataType(to.value).numpy())
            return None
        if value.const_value is None:
            return None
        return value.const_value.numpy()

    def bind(self, name: str, value: ir.Value, fresh: bool) -> None:
        """Make ONNX ``value`` the value of Paddle ``name`` (renaming it when it is new)."""
        op = self.current_op
        if op is not None:
            provenance.untag_value(self.env.get(name), provenance.site_of(op), name)  # bound again
        if fresh:
            self.fresh.discard(value)
            self.names.discard(value.name)
            value.name = self.unique_name(name)
        self.env[name] = value
        self.bound.setdefault(value, (name, None if op is None else op.block_idx))
        if op is not None and any(name in names for names in op.outputs.values()):
            if name in self.not_paddle:
                provenance.not_carried(value, provenance.site_of(op), name, self.not_paddle[name])
            else:
                provenance.tag_value(value, provenance.site_of(op), name)




class UnsetValue(Exception):
    """A value an earlier refused op should have produced (the op is skipped: its own error,
    if any, would only follow from the first)."""


