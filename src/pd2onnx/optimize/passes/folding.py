"""Constant folding, and folding of shape arithmetic over static dims.

``fold-constants`` evaluates a node when every input is a constant (see ``_ir.is_const``),
its domain is a standard one, it is deterministic, not a quantize/dequantize op, has no
subgraph, and its result stays small: at most ``fold_size_limit`` elements, or no larger
than its largest input (so transposing or casting a big weight folds, but Expand, Tile,
ConstantOfShape, Range and the like never blow a small constant up beyond the limit; their
output size is computed *before* evaluating them).

``fold-shapes`` replaces ``Shape``/``Size`` and ``Gather``/``Slice`` of a ``Shape`` by
constants whenever the dims they read are static, even when other dims are dynamic.
"""

from __future__ import annotations

import logging

import numpy as np
import onnx_ir as ir

from pd2onnx.optimize import evaluator
from pd2onnx.optimize._ir import (
    RANDOM_OPS,
    const_array,
    const_ints,
    const_size,
    has_ref_attr,
    has_subgraph,
    is_const,
    is_op,
    remove_if_dead,
    shape_dims,
)
from pd2onnx.optimize.passes.base import NodePass

logger = logging.getLogger(__name__)

FOLDABLE_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml"})
NEVER_FOLD = frozenset(
    {
        "QuantizeLinear",
        "DequantizeLinear",
        "DynamicQuantizeLinear",
        "Constant",  # lifted to an initializer by lift-constants instead
        "Identity",  # removed by remove-identity; folding would only copy the data
        "If",
        "Loop",
        "Scan",
        "SequenceConstruct",
        "SequenceEmpty",
        "SequenceInsert",
        "SequenceAt",
        "SequenceErase",
        "SequenceLength",
        "SplitToSequence",
        "ConcatFromSequence",
        "Optional",
        "OptionalGetElement",
        "OptionalHasElement",
    }
) | RANDOM_OPS
# Ops whose output can be much larger than their inputs: size computed before evaluation.
EXPANDING = frozenset({"ConstantOfShape", "Expand", "Tile", "Range", "Resize", "Upsample", "Pad", "OneHot", "EyeLike"})


def _predicted_size(node: ir.Node) -> int | None:
    """Output element count from static output shapes or from the inputs of expanding ops."""
    total = 0
    for out in node.outputs:
        dims = shape_dims(out)
        if dims is None or any(d is None for d in dims):
            total = -1
            break
        total += int(np.prod(dims, dtype=np.int64)) if dims else 1
    if total >= 0:
        return total
    try:
        op = node.op_type
        if op == "ConstantOfShape":
            return int(np.prod(const_array(node.inputs[0]).astype(np.int64)))
        if op == "Expand":
            shape = const_array(node.inputs[1]).astype(np.int64).tolist()
            data = tuple(int(d) for d in node.inputs[0].const_value.shape)
            return int(np.prod(np.broadcast_shapes(data, tuple(shape))))
        if op == "Tile":
            reps = const_array(node.inputs[1]).astype(np.int64)
            return const_size(node.inputs[0]) * int(np.prod(reps))
        if op == "Range":
            start, limit, delta = (float(const_array(v).reshape(())) for v in node.inputs[:3])
            return max(int(np.ceil((limit - start) / delta)), 0) if delta else None
    except Exception:  # noqa: BLE001
        return None
    return None


class FoldConstants(NodePass):
    """Evaluate nodes whose inputs are all constants and replace them by initializers."""

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        if node.domain not in FOLDABLE_DOMAINS or node.op_type in NEVER_FOLD:
            return False
        if not node.inputs or has_subgraph(node) or has_ref_attr(node):
            return False
        if not all(v is None or is_const(v) for v in node.inputs):
            return False
        if not any(o.uses() or o.is_graph_output() for o in node.outputs):
            return False  # dead: remove-unused deals with it
        for o in node.outputs:
            if o.type is not None and not isinstance(o.type, ir.TensorType):
                return False
        for v in node.inputs:
            if v is not None and v.const_value.dtype == ir.DataType.STRING:
                return False
        limit = self.options.fold_size_limit
        largest_input = max((const_size(v) for v in node.inputs if v is not None), default=0)
        predicted = _predicted_size(node)
        if predicted is None and node.op_type in EXPANDING:
            return False
        if predicted is not None and predicted > max(limit, largest_input):
            return False
        inputs = [None if v is None else const_array(v) for v in node.inputs]
        outputs = evaluator.evaluate(node, inputs, self.opsets)
        if outputs is None:
            return False
        if sum(a.size for a in outputs) > max(limit, largest_input):
            return False
        if any(a.size == 0 and _carried(v) for v, a in zip(node.outputs, outputs)):
            return False
        for value, array in zip(node.outputs, outputs):
            if value.uses() or value.is_graph_output():
                self.constant_for(graph, value, array)
        remove_if_dead(node)
        return True


def _carried(value: ir.Value) -> bool:
    """Whether ``value`` enters a Loop/If/Scan (as an input or from an enclosing scope) or is
    a graph's output: OpenVINO's ONNX reader takes a zero-size constant there for a scalar
    and fails, so the node making such a value (e.g. an empty tensor array's ConstantOfShape,
    the placeholder of a branch that does not assign a variable) stays."""
    producer = value.producer()
    home = producer.graph if producer is not None else None
    return value.is_graph_output() or any(
        use.node.op_type in ("Loop", "If", "Scan") or use.node.graph is not home for use in value.uses())


class FoldShapes(NodePass):
    """Shape/Size (and Gather/Slice of a Shape) over static dims become constants."""

    op_types = frozenset({"Shape", "Size", "Gather", "Slice"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        out = node.outputs[0]
        if not (out.uses() or out.is_graph_output()) or node.inputs[0] is None:
            return False
        if is_const(node.inputs[0]):
            return False  # fold-constants handles it
        op = node.op_type
        if op == "Size":
            dims = shape_dims(node.inputs[0])
            if dims is None or any(d is None for d in dims):
                return False
            value = np.array(int(np.prod(dims, dtype=np.int64)), dtype=np.int64)
        else:
            source = node if op == "Shape" else node.inputs[0].producer()
            if not is_op(source, "Shape"):
                return False
            dims = _shape_slice(source)
            if dims is None:
                return False
            positions = np.arange(len(dims), dtype=np.int64)
            if op == "Gather":
                if node.attributes.get("axis") is not None and node.attributes["axis"].as_int() not in (0, -1):
                    return False
                idx = const_ints(node.inputs[1])
                if idx is None or not is_const(node.inputs[1]):
                    return False
                shape = tuple(int(d) for d in node.inputs[1].const_value.shape)
                n = len(dims)
                if any(i < -n or i >= n for i in idx):
                    return False
                positions = np.array([i + n if i < 0 else i for i in idx], dtype=np.int64).reshape(shape)
            elif op == "Slice":
                if len(node.inputs) < 3 or self.opset < 10:
                    return False
                if not all(v is None or is_const(v) for v in node.inputs[1:]):
                    return False
                sliced = evaluator.evaluate(
                    node, [positions] + [None if v is None else const_array(v) for v in node.inputs[1:]], self.opsets
                )
                if sliced is None:
                    return False
                positions = sliced[0]
            picked = [dims[int(i)] for i in positions.reshape(-1)]
            if any(d is None for d in picked):
                return False
            value = np.array(picked, dtype=np.int64).reshape(positions.shape)
        self.constant_for(graph, out, value)
        remove_if_dead(node)
        return True


def _shape_slice(shape_node: ir.Node) -> list[int | None] | None:
    """The dims a Shape node returns (honouring start/end), None for unknown rank."""
    dims = shape_dims(shape_node.inputs[0])
    if dims is None:
        return None
    r = len(dims)
    start_attr = shape_node.attributes.get("start")
    end_attr = shape_node.attributes.get("end")
    start = start_attr.as_int() if start_attr is not None else 0
    end = end_attr.as_int() if end_attr is not None else r
    start = max(0, min(r, start + r if start < 0 else start))
    end = max(0, min(r, end + r if end < 0 else end))
    return dims[start:end]
