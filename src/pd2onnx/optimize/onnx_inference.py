"""ONNX's own shape inference on an ``onnx_ir`` model, merged into its values (gains only).

The model is serialized without its large initializers (they become typed graph inputs, so a
>2 GB model is never put into one protobuf); ``_Inference`` serializes it once and, for the
next rounds of the type inference (``value_types``), only rewrites the types its values carry
in that proto. What ONNX finds is merged as gains only: a type where there was none, a shape
where there was none, a static dim where the dim was unknown; conflicts keep what the value
carries, so repeated rounds end.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Iterator

import onnx_ir as ir

from pd2onnx.optimize._ir import _attrs_of, iter_graphs
from pd2onnx.optimize.type_names import type_str

log = logging.getLogger(__name__)

# Initializers above this size travel to ONNX's shape inference as typed inputs (no data).
BIG_INITIALIZER_BYTES = 1024


def onnx_round(model: ir.Model) -> int:
    """Run ONNX's shape inference on the whole model and merge what it found into the values
    (gains only); returns the number of gains (0 also when inference fails)."""
    return Inference(model).run()


class Inference:
    """ONNX's shape inference, run again and again on a model whose nodes do not change in
    between: the model is serialized once (the expensive part); later runs only write the
    types its values carry now into that proto."""

    def __init__(self, model: ir.Model):
        self.model = model
        self.proto = None

    def run(self) -> int:
        import onnx

        before = _facts(self.model)
        if _SEEN.get(self.model) == before:
            return 0  # ONNX already ran on exactly this model and what it found is merged
        try:
            if self.proto is None:
                self.proto = _serialize_light(self.model)
            else:
                self.refresh()
            inferred = onnx.shape_inference.infer_shapes(self.proto, check_type=False, strict_mode=False,
                                                         data_prop=True)
        except Exception as exc:  # noqa: BLE001 - inference is best effort
            log.info("shape inference failed, shapes left as they are: %s", exc)
            _SEEN[self.model] = before
            return 0
        gained = 0
        for graph, gproto, is_main in _paired(self.model.graph, inferred.graph, True):
            found = _found(gproto)
            values = [*(() if is_main else graph.inputs), *(o for n in graph for o in n.outputs), *graph.outputs]
            for value in values:
                tp = found.get(value.name) if value.name else None
                if tp is not None and not value.is_initializer():
                    gained += merge_type(value, tp)
        _SEEN[self.model] = _facts(self.model)  # what ONNX gave, merged: a run on it gives nothing
        return gained

    def refresh(self) -> None:
        """The values' current types, as ``serialize_graph_into`` writes them."""
        for graph, gproto, is_main in _paired(self.model.graph, self.proto.graph, True):
            del gproto.value_info[:]
            if not is_main:
                for vi, v in zip(gproto.input, graph.inputs):
                    _write(vi, v)
            inputs = {vi.name for vi in gproto.input}
            for v in graph.initializers.values():
                if v.name not in inputs and v.type is not None:
                    _write(gproto.value_info.add(), v)
            for node in graph:
                for out in node.outputs:
                    if out.type is not None and not out.is_graph_output():
                        _write(gproto.value_info.add(), out)
            for vi, v in zip(gproto.output, graph.outputs):
                _write(vi, v)


# The facts ONNX's inference last ran on, per model (after merging what it found). Run again
# on the same facts it finds nothing new, so a run on unchanged facts is skipped: the
# converter's typing, the optimizer's rounds that only rewire what is typed already, and the
# final typing after the rounds each ran ONNX's inference anew (~30 ms on a 100-node model).
_SEEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _facts(model: ir.Model) -> tuple:
    """Everything ONNX's inference reads from ``model``: each graph's nodes (op, domain,
    attributes, inputs and outputs), inputs, outputs and initializers, with each value's
    type, shape and constant. The objects themselves are kept (not their ids), so a removed
    node or value can never be mistaken for a new one."""

    def value(v: ir.Value | None):
        if v is None:
            return None
        shape = v.shape
        return (v, v.type, None if shape is None else shape.dims, v.const_value)  # dims: a tuple

    facts: list = [tuple(model.opset_imports.items())]
    for graph in iter_graphs(model.graph):
        facts.append((graph, tuple(value(v) for v in graph.inputs), tuple(value(v) for v in graph.outputs),
                      tuple(value(v) for v in graph.initializers.values())))
        for node in graph:
            facts.append((node, node.op_type, node.domain,
                          tuple((a.name, a.type, a.value) for a in _attrs_of(node)),
                          tuple(value(v) for v in node.inputs), tuple(value(v) for v in node.outputs)))
    return tuple(facts)


def _write(value_info, value: ir.Value) -> None:
    value_info.Clear()
    ir.serde.serialize_value_into(value_info, value)


def _paired(graph: ir.Graph, proto, is_main: bool) -> Iterator[tuple[ir.Graph, object, bool]]:
    """(ir graph, its inferred GraphProto) for the graph and each subgraph (same node order)."""
    yield graph, proto, is_main
    for node, pnode in zip(graph, proto.node):
        for pattr in pnode.attribute:
            attr = node.attributes.get(pattr.name)
            if attr is None:
                continue
            if attr.type == ir.AttributeType.GRAPH:
                yield from _paired(attr.as_graph(), pattr.g, False)
            elif attr.type == ir.AttributeType.GRAPHS:
                for sub, psub in zip(attr.as_graphs(), pattr.graphs):
                    yield from _paired(sub, psub, False)


def _found(gproto) -> dict:
    found = {}
    for vi in [*gproto.value_info, *gproto.output, *gproto.input]:
        if vi.HasField("type"):
            found.setdefault(vi.name, vi.type)
    return found


def _serialize_light(model: ir.Model):
    """Model proto with big main-graph initializers turned into typed inputs (restored after)."""
    graph = model.graph
    moved: list[ir.Value] = []
    n_inputs = len(graph.inputs)
    try:
        for value in list(graph.initializers.values()):
            tensor = value.const_value
            if tensor is None or tensor.nbytes <= BIG_INITIALIZER_BYTES:
                continue
            if value.shape is None:
                value.shape = ir.Shape(tensor.shape)
            if value.dtype is None:
                value.dtype = tensor.dtype
            graph.initializers.pop(value.name)
            value.const_value = None
            value.meta["_pd2onnx_tensor"] = tensor
            if not value.is_graph_input():
                graph.inputs.append(value)
            moved.append(value)
        return ir.serde.serialize_model(model)
    finally:
        for value in moved:
            value.const_value = value.meta.pop("_pd2onnx_tensor")
            graph.register_initializer(value)
        while len(graph.inputs) > n_inputs:
            graph.inputs.pop()  # pop() (unlike del of a slice) clears the value's input flag


def merge_type(value: ir.Value, type_proto) -> int:
    """Merge an inferred TypeProto into ``value``: a type where it had none, a shape where it
    had none, a static dim where its dim was unknown; returns the number of gains."""
    if value.type is not None and value.shape is not None and all(isinstance(d, int) for d in value.shape):
        return 0  # nothing to gain
    if type_proto.HasField("tensor_type"):  # the common case, read directly (no deserializing)
        tt = type_proto.tensor_type
        if not tt.elem_type:
            return 0
        gained = 0
        if value.type is None:
            value.type = ir.TensorType(ir.DataType(tt.elem_type))
            gained += 1
        elif not isinstance(value.type, ir.TensorType) or value.type.dtype != tt.elem_type:
            return 0  # a conflict: keep what the value carries
        if not tt.HasField("shape"):
            return gained
        dims = [d.dim_value if d.HasField("dim_value") else ir.SymbolicDim(d.dim_param or None)
                for d in tt.shape.dim]
        return gained + merge_shape(value, dims)
    gained = 0
    if value.type is None:
        try:
            t = ir.serde.deserialize_type_proto_for_type(type_proto)
        except Exception:  # noqa: BLE001 - e.g. a sequence of unknown element type
            t = None
        if t is None:
            return 0
        value.type = t
        gained += 1
    elif type_str(value.type) != _proto_type_str(type_proto):
        return gained  # a conflict: keep what the value carries
    try:
        new = ir.serde.deserialize_type_proto_for_shape(type_proto)
    except Exception:  # noqa: BLE001
        new = None
    if new is None:
        return gained
    return gained + merge_shape(value, list(new))


def _proto_type_str(type_proto) -> str | None:
    try:
        return type_str(ir.serde.deserialize_type_proto_for_type(type_proto))
    except Exception:  # noqa: BLE001
        return None


def merge_shape(value: ir.Value, new_dims: list) -> int:
    """Gains of ``new_dims`` (ints, SymbolicDims) over ``value``'s shape: 1 when it had no
    shape or an unknown dim became static; a name for an unnamed unknown dim is taken too
    (not a gain). Another rank is a conflict: the value keeps its shape."""
    old = value.shape
    if old is None:
        value.shape = ir.Shape(new_dims)
        return 1
    if len(old) != len(new_dims):
        return 0
    merged: list[int | ir.SymbolicDim] = []
    changed = False
    for od, nd in zip(old, new_dims):
        if not isinstance(od, int) and isinstance(nd, int):
            merged.append(nd)
            changed = True
        elif isinstance(od, ir.SymbolicDim) and od.value is None and isinstance(nd, ir.SymbolicDim) and nd.value:
            merged.append(nd)
        else:
            merged.append(od)
    if changed or merged != list(old):
        value.shape = ir.Shape(merged)
    return int(changed)


def node_inference(node: ir.Node, schema, opset: int) -> list:
    """ONNX's inference of this node alone (TypeProto or None per output), from its inputs'
    types and the data of its small constant inputs."""
    import onnx.helper
    import onnx.shape_inference

    try:
        proto = ir.serde.serialize_node(node)
        input_types, input_data = {}, {}
        for v in node.inputs:
            if v is None or v.type is None:
                continue
            vi = ir.serde.serialize_value(v)
            input_types[v.name] = vi.type
            if v.const_value is not None and v.const_value.nbytes <= BIG_INITIALIZER_BYTES:
                data = ir.serde.serialize_tensor(v.const_value)
                data.name = v.name
                input_data[v.name] = data
        result = onnx.shape_inference.infer_node_outputs(
            schema, proto, input_types, input_data=input_data,
            opset_imports=[onnx.helper.make_opsetid("", opset)])
    except Exception:  # noqa: BLE001 - inference is best effort; the node stays as it is
        return []
    return [result.get(o.name) for o in node.outputs]
