"""Small helpers over onnx_ir shared by the passes: constants, shapes, names, rewiring.

Conventions (they are what keep the passes safe on any model):

- A value is *constant* only when it is an initializer that is not also a graph input
  (a graph input with a default initializer can be overridden at run time) and its data
  is present. Constant nodes are lifted to initializers by a pass before folding.
- Reading a constant's size or shape never loads its data (external tensors stay lazy);
  only :func:`const_array` loads, and callers check the size first where it matters.
- Graph output names never change: when a value that is a graph output is replaced, the
  replacement takes over the name (or, when it cannot, the node is kept).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import onnx_ir as ir

from pd2onnx import provenance

ONNX_DOMAINS = ("", "ai.onnx")
FLOAT_TYPES = frozenset(
    {ir.DataType.FLOAT, ir.DataType.FLOAT16, ir.DataType.DOUBLE, ir.DataType.BFLOAT16}
)


# Ops whose every run gives new values: never folded, never merged, kept in fp32.
RANDOM_OPS = frozenset(
    {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}
)


def _contig(array) -> np.ndarray:
    """C-contiguous copy-if-needed that keeps 0-d arrays 0-d (np.ascontiguousarray does not)."""
    return np.asarray(array, order="C")


def derived_name(name: str | None, suffix: str, fallback: str = "w") -> str:
    """``name`` + ``suffix`` without stacking the same suffix on repeated rewrites."""
    base = name or fallback
    while base.endswith(suffix):
        base = base[: -len(suffix)]
    return base + suffix


def is_onnx(node: ir.Node) -> bool:
    return node.domain in ONNX_DOMAINS


def is_op(node: ir.Node | None, *op_types: str) -> bool:
    return node is not None and node.op_type in op_types and node.domain in ONNX_DOMAINS


def opset_of(graph: ir.Graph | None, model: ir.Model | None = None, domain: str = "") -> int:
    """Opset version of ``domain`` that applies to ``graph`` (subgraphs inherit the model's)."""
    if model is not None:
        version = model.opset_imports.get(domain)
        if version is None and domain == "":
            version = model.opset_imports.get("ai.onnx")
        if version is not None:
            return version
    if graph is not None:
        version = graph.opset_imports.get(domain)
        if version is not None:
            return version
    return 1 if domain else 21


def _attrs_of(node: ir.Node):
    """A node's attributes (``Attr`` objects). onnx_ir's ``Attributes`` is a ``UserDict``: its
    ``.data`` dict iterates ~5x faster than the ``Mapping`` view, and the graph walks below
    look at every attribute of every node on each pass."""
    attrs = node.attributes
    data = getattr(attrs, "data", None)
    return (data if data is not None else attrs).values()


_GRAPH_ATTRS = (ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS)


# The standard ops whose schemas have graph attributes; no other ONNX-domain op may carry one.
_SUBGRAPH_OPS = frozenset(("If", "Loop", "Scan", "SequenceMap"))


def _may_hold_graphs(node: ir.Node) -> bool:
    """Whether ``node`` can carry a subgraph: a standard op with graph attributes, or any op of
    another domain (their schemas are not known here). Lets the walks below skip the attributes
    of every Conv, Reshape... (they ran on every pass of every round)."""
    return node.op_type in _SUBGRAPH_OPS or node.domain not in ONNX_DOMAINS


def iter_graphs(graph: ir.Graph) -> Iterator[ir.Graph]:
    """``graph`` and all its subgraphs, outer ones first."""
    yield graph
    for node in list(graph):
        if not _may_hold_graphs(node):
            continue
        for attr in _attrs_of(node):
            kind = attr.type
            if kind is ir.AttributeType.GRAPH:
                yield from iter_graphs(attr.as_graph())
            elif kind is ir.AttributeType.GRAPHS:
                for sub in attr.as_graphs():
                    yield from iter_graphs(sub)


def subgraphs_of(node: ir.Node) -> list[ir.Graph]:
    out: list[ir.Graph] = []
    if not _may_hold_graphs(node):
        return out
    for attr in _attrs_of(node):
        if attr.type == ir.AttributeType.GRAPH:
            out.append(attr.as_graph())
        elif attr.type == ir.AttributeType.GRAPHS:
            out.extend(attr.as_graphs())
    return out


def has_subgraph(node: ir.Node) -> bool:
    return _may_hold_graphs(node) and any(a.type in _GRAPH_ATTRS for a in _attrs_of(node))


def captured_values(node: ir.Node) -> list[ir.Value]:
    """Values from outside ``node``'s subgraphs that the subgraphs read (outer-scope captures)."""
    inner: set[int] = set()
    reads: dict[int, ir.Value] = {}
    for sub in subgraphs_of(node):
        for g in iter_graphs(sub):
            for v in list(g.inputs) + list(g.initializers.values()):
                inner.add(id(v))
            for n in g:
                for o in n.outputs:
                    inner.add(id(o))
                for i in n.inputs:
                    if i is not None:
                        reads.setdefault(id(i), i)
            for o in g.outputs:
                reads.setdefault(id(o), o)
    return [v for k, v in reads.items() if k not in inner]


# --------------------------------------------------------------------------- constants


def is_const(value: ir.Value | None) -> bool:
    """True for an initializer with data that cannot be overridden at run time."""
    return (
        value is not None
        and value.is_initializer()
        and not value.is_graph_input()
        and value.const_value is not None
    )


def const_size(value: ir.Value) -> int:
    """Element count of a constant, without loading its data."""
    tensor = value.const_value
    assert tensor is not None
    return math.prod(int(d) for d in tensor.shape)  # 1 for a scalar; math.prod: no numpy call


def const_shape(value: ir.Value) -> tuple[int, ...]:
    tensor = value.const_value
    assert tensor is not None
    return tuple(int(d) for d in tensor.shape)


def const_array(value: ir.Value) -> np.ndarray:
    """The constant's data as numpy (loads external data)."""
    tensor = value.const_value
    assert tensor is not None
    return np.asarray(tensor.numpy())


def small_const(value: ir.Value | None, limit: int = 4096) -> np.ndarray | None:
    """The data of a constant with at most ``limit`` elements, else None."""
    if not is_const(value):
        return None
    assert value is not None
    if const_size(value) > limit:
        return None
    try:
        return const_array(value)
    except Exception:  # unreadable data: treat as not constant
        return None


def const_ints(value: ir.Value | None) -> list[int] | None:
    arr = small_const(value)
    if arr is None or arr.dtype.kind not in "iu":
        return None
    return [int(x) for x in arr.reshape(-1)]


# --------------------------------------------------------------------------- shapes


def shape_dims(value: ir.Value | None) -> list[int | None] | None:
    """Dims of ``value`` (int for static, None otherwise), or None when the rank is unknown."""
    if value is None:
        return None
    if is_const(value):
        return list(const_shape(value))
    shape = value.shape
    if shape is None:
        return None
    dims: list[int | None] = []
    for d in shape:
        dims.append(int(d) if isinstance(d, int) else None)
    return dims


def static_shape(value: ir.Value | None) -> tuple[int, ...] | None:
    dims = shape_dims(value)
    if dims is None or any(d is None for d in dims):
        return None
    return tuple(dims)  # type: ignore[arg-type]


def rank_of(value: ir.Value | None) -> int | None:
    dims = shape_dims(value)
    return None if dims is None else len(dims)


def dtype_of(value: ir.Value | None) -> ir.DataType | None:
    if value is None:
        return None
    if value.const_value is not None:
        return value.const_value.dtype
    return value.dtype


def broadcast_keeps_shape(x_dims: list[int | None] | None, c_shape: Sequence[int]) -> bool:
    """True when broadcasting a tensor of ``c_shape`` against ``x`` yields exactly ``x``'s shape."""
    if x_dims is None or len(c_shape) > len(x_dims):
        return False
    offset = len(x_dims) - len(c_shape)
    for i, c in enumerate(c_shape):
        x = x_dims[offset + i]
        if c == 1:
            continue
        if x is None or x != c:
            return False
    return True


# --------------------------------------------------------------------------- attributes


def attr(node: ir.Node, name: str, default: Any = None) -> Any:
    a = node.attributes.get(name)
    if a is None or getattr(a, "is_ref", lambda: False)():
        return default
    value = a.value
    if a.type in (ir.AttributeType.INTS, ir.AttributeType.FLOATS, ir.AttributeType.STRINGS):
        return list(value)
    return value


def has_ref_attr(node: ir.Node) -> bool:
    return any(getattr(a, "is_ref", lambda: False)() for a in node.attributes.values())


def set_attr(node: ir.Node, name: str, value: Any) -> None:
    node.attributes[name] = make_attr(name, value)


_SCALAR_ATTR = {int: ir.AttributeType.INT, bool: ir.AttributeType.INT, float: ir.AttributeType.FLOAT,
                str: ir.AttributeType.STRING}
_LIST_ATTR = {int: ir.AttributeType.INTS, float: ir.AttributeType.FLOATS, str: ir.AttributeType.STRINGS}


def make_attr(name: str, value: Any) -> ir.Attr:
    """``ir.convenience.convert_attribute`` with the common Python types decided by exact type
    first: onnx_ir's own inference tries ``isinstance`` against its ``typing.Protocol``
    classes before it looks at a list, which costs ~20 us per attribute on the hot paths of
    conversion and optimization. Anything else goes to onnx_ir unchanged."""
    kind = _SCALAR_ATTR.get(type(value))
    if kind is not None:
        return ir.Attr(name, kind, int(value) if kind is ir.AttributeType.INT else value)
    if type(value) in (list, tuple) and value:
        first = type(value[0])
        kind = _LIST_ATTR.get(first)
        if kind is not None and all(type(v) is first for v in value):
            return ir.Attr(name, kind, list(value))
    return ir.convenience.convert_attribute(name, value)


def make_attrs(attrs: dict[str, Any]) -> list[ir.Attr]:
    """``make_attr`` for each (name, value) of ``attrs`` whose value is not None."""
    return [make_attr(k, v) for k, v in attrs.items() if v is not None]


def np_tensor(array: np.ndarray, name: str | None = None) -> ir.Tensor:
    """``ir.tensor`` for a numpy array, without its protocol checks (same result)."""
    return ir.Tensor(array, name=name)


# --------------------------------------------------------------------------- names


class Namer:
    """Hands out value names unique across the whole model (subgraphs included).

    The model's names are collected on the first ``fresh`` call: most passes of most rounds
    name nothing, and collecting walks every value of every graph."""

    def __init__(self, model: ir.Model) -> None:
        self.model = model
        self._used: set[str] | None = None

    @property
    def used(self) -> set[str]:
        if self._used is None:
            used: set[str] = set()
            for g in iter_graphs(self.model.graph):
                for v in (*g.inputs, *g.outputs, *g.initializers.values()):
                    if v.name:
                        used.add(v.name)
                for n in g:
                    for o in n.outputs:
                        if o.name:
                            used.add(o.name)
            self._used = used
        return self._used

    def fresh(self, base: str) -> str:
        base = base or "v"
        if base not in self.used:
            self.used.add(base)
            return base
        i = 1
        while f"{base}_{i}" in self.used:
            i += 1
        name = f"{base}_{i}"
        self.used.add(name)
        return name


def new_initializer(graph: ir.Graph, array: np.ndarray, namer: Namer, base: str) -> ir.Value:
    """Register ``array`` as a new initializer of ``graph`` (fresh name) and return its value."""
    array = _contig(array)
    name = namer.fresh(base)
    tensor = np_tensor(array, name=name)
    value = ir.Value(name=name, shape=ir.Shape(array.shape), type=ir.TensorType(tensor.dtype), const_value=tensor)
    graph.register_initializer(value)
    return value


# --------------------------------------------------------------------------- rewiring


def owner_graph(value: ir.Value) -> ir.Graph | None:
    g = value.graph
    return g if isinstance(g, ir.Graph) else None


def consumers(value: ir.Value) -> list[ir.Node]:
    return list(value.consumers())


def single_use(value: ir.Value) -> bool:
    """Exactly one use by one node, and not a graph output."""
    return len(value.uses()) == 1 and not value.is_graph_output()


def replace_value(old: ir.Value, new: ir.Value) -> bool:
    """Make every reader of ``old`` read ``new``. Graph outputs keep their names.

    When ``old`` is a graph output, ``new`` takes over its name, which is only possible if
    ``new`` is produced by a node of the same graph and is not itself a graph input, output
    or initializer; otherwise nothing changes and False is returned. ``new`` computes what
    ``old`` did, so it carries ``old``'s Paddle values (``pd2onnx.provenance``).
    """
    if old is new:
        return False
    if old.is_graph_output():
        graph = owner_graph(old)
        producer = new.producer()
        if (
            graph is None
            or producer is None
            or producer.graph is not graph
            or new.is_graph_output()
            or new.is_graph_input()
            or new.is_initializer()
        ):
            return False
        name = old.name
        ir.convenience.replace_all_uses_with(old, new, replace_graph_outputs=True)
        old.name = None
        new.name = name
        if new.shape is None and old.shape is not None:
            new.shape = old.shape
        provenance.move(old, new)
        return True
    ir.convenience.replace_all_uses_with(old, new)
    provenance.move(old, new)
    return True


def can_replace(old: ir.Value, new: ir.Value) -> bool:
    """Whether :func:`replace_value` would succeed."""
    if not old.is_graph_output():
        return True
    producer = new.producer()
    return (
        producer is not None
        and producer.graph is owner_graph(old)
        and not new.is_graph_output()
        and not new.is_graph_input()
        and not new.is_initializer()
    )


def substitute(graph: ir.Graph, old: ir.Node, new: ir.Node) -> bool:
    """Put single-output ``new`` in place of ``old``'s output (same dtype and shape) and drop
    ``old`` if nothing else reads it. False, with the graph unchanged, when the output name
    cannot be kept."""
    graph.insert_before(old, new)
    new.outputs[0].dtype = old.outputs[0].dtype
    new.outputs[0].shape = old.outputs[0].shape
    if not replace_value(old.outputs[0], new.outputs[0]):
        graph.remove(new, safe=True)
        return False
    remove_if_dead(old)
    return True


def remove_if_dead(node: ir.Node) -> bool:
    """Remove ``node`` when none of its outputs is read or is a graph output."""
    if node.graph is None:
        return False
    for o in node.outputs:
        if o.uses() or o.is_graph_output():
            return False
    node.graph.remove(node, safe=True)
    return True


def bypass(node: ir.Node, out: ir.Value, inp: ir.Value) -> bool:
    """Drop ``node`` whose output ``out`` equals its input ``inp``; True when the graph changed."""
    if not can_replace(out, inp):
        return False
    replace_value(out, inp)
    remove_if_dead(node)
    return True


def insert_node_before(anchor: ir.Node, node: ir.Node) -> None:
    assert anchor.graph is not None
    anchor.graph.insert_before(anchor, node)


def np_dtype(dt: ir.DataType) -> np.dtype:
    return np.dtype(dt.numpy())


def node_inputs_const(node: ir.Node) -> bool:
    return all(v is None or is_const(v) for v in node.inputs)


def values_of(nodes: Iterable[ir.Node]) -> Iterator[ir.Value]:
    for n in nodes:
        yield from n.outputs
