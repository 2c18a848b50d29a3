"""Quantized (QDQ) graphs.

By default the optimizer keeps every QuantizeLinear/DequantizeLinear: folding never
evaluates them (so a weight's ``DequantizeLinear(int8)`` is never turned back into a float
constant) and the weight fusions only rewrite constant weights (a DQ output is not one; a
bias may still go into a Conv/Gemm next to a DQ weight, which is what lets runtimes fuse
``QLinearConv``/``QGemm``).

``fold_qdq=True`` (``pd2onnx optimize --fold-qdq``) asks for a float model instead: this pass
then runs once before the others and

- evaluates Q and DQ of constants (a quantized weight becomes its dequantized float32 value:
  exactly the weight the quantized model computes with);
- removes each activation ``QuantizeLinear -> DequantizeLinear`` pair (the DQ's readers read
  the Q's input), so the activation is no longer rounded to the quantization grid.

The result computes in float what the QDQ model computes in integers, without the
rounding of activations; the usual fusions (BatchNorm, bias, Gemm) then apply to it.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from pd2onnx import provenance
from pd2onnx.optimize._ir import (
    attr,
    can_replace,
    const_array,
    is_const,
    is_op,
    remove_if_dead,
    replace_value,
)
from pd2onnx.optimize.passes.base import NodePass

QDQ_OPS = frozenset({"QuantizeLinear", "DequantizeLinear"})


def _per_axis(scale: np.ndarray, rank: int, axis: int) -> np.ndarray:
    if scale.ndim == 0 or scale.size == 1 and scale.ndim <= 1:
        return scale.reshape(())
    axis = axis + rank if axis < 0 else axis
    shape = [1] * rank
    shape[axis] = scale.size
    return scale.reshape(shape)


def _parts(node: ir.Node) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """(x, scale, zero point) of a Q/DQ whose inputs are all constants, else None."""
    ins = list(node.inputs) + [None] * (3 - len(node.inputs))
    x, scale, zp = ins[:3]
    if not is_const(x) or not is_const(scale) or (zp is not None and not is_const(zp)):
        return None
    if attr(node, "block_size", 0):
        return None  # blocked quantization: left alone
    xa = const_array(x)
    axis = attr(node, "axis", 1)
    s = _per_axis(const_array(scale).astype(np.float64), xa.ndim, axis)
    z = None if zp is None else _per_axis(const_array(zp).astype(np.float64), xa.ndim, axis)
    return xa, s, z


class FoldQDQ(NodePass):
    """Fold a QDQ model to float (only when asked: ``fold_qdq``); see the module docstring."""

    name = "fold-qdq"
    op_types = QDQ_OPS

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        if node.op_type == "QuantizeLinear":
            return self._fold_q(node, graph)
        parts = _parts(node)
        if parts is not None:
            x, s, z = parts
            out_type = node.inputs[1].const_value.dtype
            values = (x.astype(np.float64) - (0 if z is None else z)) * s
            with np.errstate(over="ignore"):  # beyond the float type: inf, as the runtime computes
                values = values.astype(out_type.numpy())
            if not self.constant_for(graph, node.outputs[0], values):
                return False
            remove_if_dead(node)
            return True
        q = node.inputs[0].producer() if node.inputs[0] is not None else None
        if not is_op(q, "QuantizeLinear") or q.graph is not graph:
            return False
        src = q.inputs[0]
        out_dtype = node.outputs[0].dtype
        if src is None or (src.dtype is not None and out_dtype is not None and src.dtype != out_dtype):
            return False
        if not can_replace(node.outputs[0], src):
            return False
        provenance.changed(node.outputs[0], "fold-qdq removed this quantize/dequantize pair (the value is "
                                            "no longer rounded to the quantization grid)")
        if not replace_value(node.outputs[0], src):
            return False
        remove_if_dead(node)
        remove_if_dead(q)
        return True

    def _fold_q(self, node: ir.Node, graph: ir.Graph) -> bool:
        parts = _parts(node)
        if parts is None:
            return False
        x, s, z = parts
        zp_val = node.inputs[2] if len(node.inputs) > 2 else None
        out_dtype = zp_val.const_value.dtype.numpy() if zp_val is not None else np.dtype(np.uint8)
        info = np.iinfo(out_dtype) if np.dtype(out_dtype).kind in "iu" else None
        if info is None:
            return False  # float8 and other types: left alone
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.rint(x.astype(np.float64) / s) + (0 if z is None else z)
        if np.isnan(q).any():
            return False  # NaN (a NaN input, or 0 / 0): what it quantizes to is the runtime's
        q = np.clip(q, info.min, info.max).astype(out_dtype)
        if not self.constant_for(graph, node.outputs[0], q):
            return False
        remove_if_dead(node)
        return True
