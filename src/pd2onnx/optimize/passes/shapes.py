"""Shape inference (onnx's, made safe for big models) and user overrides of input shapes.

``infer-shapes`` serializes the model *without* its large initializers (they become typed
graph inputs for the call, so a >2 GB model is never put into one protobuf), runs
``onnx.shape_inference.infer_shapes`` (non-strict, with data propagation) and merges back
only information that is new: a dtype where there was none, a rank where there was none,
a static dim where there was a symbolic/unknown one. Conflicts keep the existing
information. Counting only gained information makes the pass monotone, so the scheduler's
fixed point exists.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import onnx_ir as ir

from pd2onnx.errors import UsageError
from pd2onnx.optimize._ir import iter_graphs
from pd2onnx.optimize.passes.base import OptimizerPass

logger = logging.getLogger(__name__)

_BIG_INITIALIZER_BYTES = 1024


class InferShapes(OptimizerPass):
    """Fill in dtypes and shapes with onnx shape inference (main graph and subgraphs)."""

    def run(self, model: ir.Model) -> int:
        import onnx

        try:
            proto = _serialize_light(model)
            inferred = onnx.shape_inference.infer_shapes(proto, check_type=False, strict_mode=False, data_prop=True)
        except Exception as exc:  # noqa: BLE001 - inference is best effort
            logger.info("shape inference failed, shapes left as they are: %s", exc)
            return 0
        found: dict[str, onnx.TypeProto] = {}
        _collect(inferred.graph, found)
        gained = 0
        for graph in iter_graphs(model.graph):
            values = [o for n in graph for o in n.outputs] + list(graph.outputs)
            for value in values:
                if value.name and value.name in found:
                    gained += _merge(value, found[value.name])
        return gained


def _serialize_light(model: ir.Model):
    """Model proto with big main-graph initializers turned into typed inputs (restored after)."""
    graph = model.graph
    moved: list[ir.Value] = []
    n_inputs = len(graph.inputs)
    try:
        for value in list(graph.initializers.values()):
            tensor = value.const_value
            if tensor is None or tensor.nbytes <= _BIG_INITIALIZER_BYTES:
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


def _collect(graph, found: dict) -> None:
    for vi in list(graph.value_info) + list(graph.output):
        found.setdefault(vi.name, vi.type)
    for node in graph.node:
        for a in node.attribute:
            if a.HasField("g"):
                _collect(a.g, found)
            for g in a.graphs:
                _collect(g, found)


def _merge(value: ir.Value, type_proto) -> int:
    if not type_proto.HasField("tensor_type"):
        return 0
    tt = type_proto.tensor_type
    gained = 0
    if value.dtype is None and tt.elem_type:
        value.dtype = ir.DataType(tt.elem_type)
        gained += 1
    if not tt.HasField("shape"):
        return gained
    new_dims: list[int | str | None] = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            new_dims.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            new_dims.append(d.dim_param)
        else:
            new_dims.append(None)
    old = value.shape
    if old is None:
        value.shape = ir.Shape(new_dims)
        return gained + 1
    if len(old) != len(new_dims):
        return gained
    merged: list[int | ir.SymbolicDim] = []
    changed = False
    for od, nd in zip(old, new_dims):
        if not isinstance(od, int) and isinstance(nd, int):
            merged.append(nd)
            changed = True
        elif isinstance(od, ir.SymbolicDim) and od.value is None and isinstance(nd, str):
            merged.append(ir.SymbolicDim(nd))  # a name for an unknown dim is not a "gain"
        else:
            merged.append(od)
    if changed or merged != list(old):
        value.shape = ir.Shape(merged)
    return gained + int(changed)


def apply_input_shapes(model: ir.Model, input_shapes: Mapping[str, Sequence[int | str | None]], file: str | None = None) -> None:
    """Override graph input shapes (int: static, str: named symbolic dim, None: unknown).

    Shapes of all intermediate values are then cleared so that shape inference derives
    them from the new input shapes instead of keeping stale ones; graph outputs keep
    their previous shape only if inference cannot give one.
    """
    inputs = {v.name: v for v in model.graph.inputs if not v.is_initializer()}
    for name, dims in input_shapes.items():
        if name not in inputs:
            raise UsageError(
                f"--input-shape names '{name}', which is not an input of the model",
                file=file,
                hint=f"the model's inputs are: {', '.join(inputs) or '(none)'}",
            )
        value = inputs[name]
        old = value.shape
        new_dims: list[int | ir.SymbolicDim] = []
        for i, d in enumerate(dims):
            if isinstance(d, bool) or not (d is None or isinstance(d, (int, str))):
                raise UsageError(f"input '{name}': dim {i} must be an int, a name or None, got {d!r}", file=file)
            if isinstance(d, int) and d < 0:
                d = None
            if old is not None and len(old) == len(dims) and isinstance(old[i], int) and isinstance(d, int) and old[i] != d:
                raise UsageError(
                    f"input '{name}': dim {i} is fixed to {old[i]} in the model, cannot override it with {d}",
                    file=file,
                    hint="only dynamic dims can be given a size; re-export the model for another fixed size",
                )
            new_dims.append(d if isinstance(d, int) else ir.SymbolicDim(d))
        if old is not None and len(old) != len(dims):
            raise UsageError(
                f"input '{name}' has rank {len(old)} in the model, but {len(dims)} dims were given",
                file=file,
                hint=f"give {len(old)} dims, e.g. {name}:{','.join(str(d) if isinstance(d, int) else '-1' for d in old)}",
            )
        value.shape = ir.Shape(new_dims)
    if not input_shapes:
        return
    saved_outputs = {}
    for graph in iter_graphs(model.graph):
        for node in graph:
            for out in node.outputs:
                if out.is_graph_output() and graph is model.graph:
                    saved_outputs[id(out)] = (out, out.shape)
                out.shape = None
    InferShapes()(model)
    for out, shape in saved_outputs.values():
        if out.shape is None:
            out.shape = shape
