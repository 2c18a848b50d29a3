"""Empty constants as ``ConstantOfShape`` nodes, so that every runtime reads their rank.

OpenVINO's ONNX reader (2026.4) reads a constant with no element (an initializer or a
``Constant`` node of shape ``[0, 0]``) as a scalar. The converter's placeholders are such
constants (a legacy ``conditional_block`` passes an empty tensor of the variable's rank on the
path that does not assign it), so OpenVINO sees one branch of rank 0 and the other of rank 2,
gives the If no rank, and its CPU plugin refuses the model ("If operation with dynamic rank").
``ConstantOfShape`` of a constant shape is read with its rank everywhere, and costs nothing.
The converter runs this last, and so does the optimizer (its constant folding turns such a
node back into an initializer).
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from pd2onnx.optimize._ir import Namer, iter_graphs

# ConstantOfShape's value types (opset 9); opset 20 adds bfloat16 and the float8 types.
_TYPES_9 = frozenset({
    ir.DataType.FLOAT16, ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.INT8, ir.DataType.INT16,
    ir.DataType.INT32, ir.DataType.INT64, ir.DataType.UINT8, ir.DataType.UINT16, ir.DataType.UINT32,
    ir.DataType.UINT64, ir.DataType.BOOL,
})
_TYPES_20 = _TYPES_9 | {ir.DataType.BFLOAT16}


def materialize_empty_constants(model: ir.Model) -> int:
    """Replace every initializer without elements (not a graph input) by ``ConstantOfShape``
    of its shape in the graph that holds it; returns how many."""
    opset = model.opset_imports.get("", model.opset_imports.get("ai.onnx", 1))
    if opset < 9:
        return 0
    types = _TYPES_20 if opset >= 20 else _TYPES_9
    namer: Namer | None = None
    done = 0
    for graph in list(iter_graphs(model.graph)):
        for value in list(graph.initializers.values()):
            tensor = value.const_value
            if (tensor is None or value.is_graph_input() or tensor.dtype not in types
                    or 0 not in tuple(tensor.shape)):
                continue
            namer = namer or Namer(model)
            dims = [int(d) for d in tensor.shape]
            shape_name = namer.fresh(f"{value.name}/shape")
            shape = ir.Value(name=shape_name, type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([len(dims)]),
                             const_value=ir.tensor(np.asarray(dims, np.int64), name=shape_name))
            graph.register_initializer(shape)
            fill = ir.tensor(np.zeros(1, tensor.dtype.numpy()))
            node = ir.Node("", "ConstantOfShape", [shape], [ir.AttrTensor("value", fill)], num_outputs=1,
                           name=namer.fresh(f"{value.name}/empty"))
            out = node.outputs[0]
            out.type, out.shape = ir.TensorType(tensor.dtype), ir.Shape(dims)
            name = value.name
            del graph.initializers[name]
            value.replace_all_uses_with(out, replace_graph_outputs=True)
            out.name = name
            if len(graph):
                graph.insert_before(graph.node(0), node)
            else:
                graph.append(node)
            done += 1
    return done
