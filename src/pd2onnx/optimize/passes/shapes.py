"""Shape inference (onnx's, made safe for big models) and user overrides of input shapes.

``infer-shapes`` is one round of ``pd2onnx.optimize.onnx_inference``: it serializes the model
*without* its large initializers (they become typed graph inputs for the call, so a >2 GB
model is never put into one protobuf), runs ``onnx.shape_inference.infer_shapes``
(non-strict, with data propagation) and merges back only information that is new: a dtype
where there was none, a rank where there was none, a static dim where there was a
symbolic/unknown one. Conflicts keep the existing information. Counting only gained
information makes the pass monotone, so the scheduler's fixed point exists. After the
rounds, ``optimize`` runs the whole of ``value_types.infer_types`` (Loop-carried values,
node rules) so that every value the passes made carries a type and a rank.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import onnx_ir as ir

from pd2onnx.errors import UsageError
from pd2onnx.optimize._ir import iter_graphs
from pd2onnx.optimize.onnx_inference import onnx_round
from pd2onnx.optimize.passes.base import OptimizerPass
from pd2onnx.optimize.value_types import infer_types

logger = logging.getLogger(__name__)


class InferShapes(OptimizerPass):
    """Fill in dtypes and shapes with onnx shape inference (main graph and subgraphs)."""

    def run(self, model: ir.Model) -> int:
        return onnx_round(model)


def apply_input_shapes(model: ir.Model, input_shapes: Mapping[str, Sequence[int | str | None]], file: str | None = None) -> None:
    """Override graph input shapes (int: static, str: named symbolic dim, None: unknown).

    Shapes of all intermediate values are then cleared so that shape inference derives
    them from the new input shapes instead of keeping stale ones; a value inference cannot
    shape keeps its rank (graph outputs: their previous shape).
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
    ranks: dict[ir.Value, int] = {}
    for graph in iter_graphs(model.graph):
        for node in graph:
            for out in node.outputs:
                if out.is_graph_output() and graph is model.graph:
                    saved_outputs[id(out)] = (out, out.shape)
                if out.shape is not None:
                    ranks[out] = len(out.shape)
                out.shape = None
            if node.op_type == "Loop" and "body" in node.attributes:
                for carried in node.attributes["body"].as_graph().inputs[2:]:
                    carried.shape = None  # seeded again from the new shapes
    # ranks do not depend on input sizes: a value inference cannot rank keeps its rank
    infer_types(model, lambda v: (None, [None] * ranks[v] if v in ranks else None))
    for out, shape in saved_outputs.values():
        if out.shape is None:
            out.shape = shape
