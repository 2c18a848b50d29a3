"""Fusions: fold BatchNorm / bias / per-channel scale into weights, and match activation and
normalization subgraphs to single ONNX ops.

Every fusion computes new weights (fresh initializers; shared old ones are never mutated)
and states its preconditions next to the code. The common ones: the intermediate value has
exactly one reader and is not a graph output (``single_use``), the weights are constants,
dtypes are floating point and broadcasting provably keeps the shape.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_ir as ir

from pd2onnx import provenance
from pd2onnx.optimize._ir import (
    FLOAT_TYPES,
    _contig,
    attr,
    broadcast_keeps_shape,
    const_array,
    const_shape,
    derived_name,
    dtype_of,
    is_const,
    is_op,
    new_initializer,
    rank_of,
    remove_if_dead,
    replace_value,
    set_attr,
    shape_dims,
    single_use,
    small_const,
    substitute,
)
from pd2onnx.optimize.passes.base import NodePass

WEIGHT_OPS = ("Conv", "ConvTranspose", "Gemm")


def _per_channel(c: ir.Value, y_rank: int, channels: int, axis: int = 1) -> np.ndarray | None:
    """``c`` as a length-``channels`` vector if it varies only along ``axis`` of a rank-``y_rank``
    output and broadcasting it cannot change that output's shape."""
    shape = const_shape(c)
    if len(shape) > y_rank:
        return None
    full = (1,) * (y_rank - len(shape)) + shape
    for i, d in enumerate(full):
        if i == axis:
            if d not in (1, channels):
                return None
        elif d != 1:
            return None
    return np.broadcast_to(const_array(c).astype(np.float64).reshape(-1), (channels,)).copy()


def _in_type(values: np.ndarray, np_dt: np.dtype) -> np.ndarray | None:
    """Fused float64 ``values`` in the model's float type, or None when some are not finite
    there (a fused weight that overflows the type, or non-finite statistics, would change
    what the unfused graph computes: such a node is left as it is)."""
    with np.errstate(over="ignore", invalid="ignore"):
        typed = _contig(values).astype(np_dt, copy=False)
    return typed if _all_finite(typed) else None


def _all_finite(a: np.ndarray) -> bool:
    """No inf/NaN in a float array (float16/bfloat16 checked through float32; numpy's own
    float types directly, without a widened copy)."""
    if a.dtype.kind != "f" or a.dtype.itemsize < 4:
        a = a.astype(np.float32)
    return bool(np.isfinite(a).all())


def _scaled_weight(w: np.ndarray, factor: np.ndarray, np_dt: np.dtype) -> np.ndarray | None:
    """``w * factor`` (``factor`` float64, broadcasting along w) in ``np_dt``: the product is
    computed in float64 and rounded once, as a float64 copy of ``w`` would give, but in one
    pass that writes the new weight directly (no widened copy of the weight, no float64
    intermediate of its size). None when the result is not finite (see ``_in_type``)."""
    if np_dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        return _in_type(w.astype(np.float64) * factor, np_dt)  # float16/bfloat16: small, rare
    out = np.empty(np.broadcast_shapes(w.shape, factor.shape), dtype=np_dt)
    with np.errstate(over="ignore", invalid="ignore"):
        np.multiply(w, factor, out=out, dtype=np.float64, casting="unsafe")
    return out if _all_finite(out) else None


def quantized_weight(w: ir.Value | None) -> ir.Value | None:
    """The constant integer weight behind ``w = DequantizeLinear(const, ...)`` (a QDQ model's
    weight), else None. Such a weight is never rewritten: only a bias may be fused next to it."""
    p = w.producer() if w is not None else None
    if is_op(p, "DequantizeLinear") and p.inputs and is_const(p.inputs[0]):
        return p.inputs[0]
    return None


def _weight_shape(w: ir.Value | None) -> tuple[int, ...] | None:
    """Shape of a constant weight, or of the integer constant behind a weight's DQ."""
    if is_const(w):
        return const_shape(w)
    q = quantized_weight(w)
    return const_shape(q) if q is not None else None


def _out_channels(node: ir.Node) -> int | None:
    """Output channel count of a Conv/ConvTranspose/Gemm from its constant (or dequantized
    constant) weight."""
    shape = _weight_shape(node.inputs[1])
    if shape is None:
        return None
    if node.op_type == "Conv":
        return shape[0]
    if node.op_type == "ConvTranspose":
        return shape[1] * attr(node, "group", 1)
    if len(shape) != 2:
        return None
    return shape[0] if attr(node, "transB", 0) else shape[1]


class _WeightFusion(NodePass):
    """Shared code: rewrite a Conv/ConvTranspose/Gemm's weight and bias by per-channel
    ``scale`` (multiplying its output) and ``shift`` (added after the scale)."""

    def _apply(self, node: ir.Node, scale: np.ndarray | None, shift: np.ndarray | None) -> bool:
        graph = node.graph
        w_val = node.inputs[1]
        b_val = node.inputs[2] if len(node.inputs) > 2 else None
        if b_val is not None and not is_const(b_val):
            return False
        op = node.op_type
        dtype = dtype_of(w_val) if op != "Gemm" or scale is not None else dtype_of(node.outputs[0])
        if scale is None and dtype is None and quantized_weight(w_val) is not None:
            dtype = dtype_of(node.outputs[0])  # a bias next to a DQ weight: the output's float type
        if dtype is None or dtype not in FLOAT_TYPES:
            return False
        np_dt = np.dtype(dtype.numpy())
        channels = len(scale) if scale is not None else len(shift)
        # the node's output now includes the scale/shift: it no longer is what it carried
        provenance.changed(node.outputs[0], f"the optimizer ({self.name}) folded the op after it into its weights")
        if scale is not None:
            if not is_const(w_val):
                return False
            w = const_array(w_val)  # the stored (memory-mapped) weight, read once
            if op == "Conv":
                new_w = _scaled_weight(w, scale.reshape((-1,) + (1,) * (w.ndim - 1)), np_dt)
            elif op == "ConvTranspose":
                g = attr(node, "group", 1)
                shape = w.shape
                grouped = w.reshape((g, shape[0] // g, shape[1]) + shape[2:])
                new_w = _scaled_weight(grouped, scale.reshape((g, 1, shape[1]) + (1,) * (w.ndim - 2)), np_dt)
                new_w = None if new_w is None else new_w.reshape(shape)
            else:
                new_w = _scaled_weight(w, scale[:, None] if attr(node, "transB", 0) else scale[None, :], np_dt)
            if new_w is None:
                return False
        if op == "Gemm":
            beta = attr(node, "beta", 1.0)
            c = const_array(b_val).astype(np.float64) * beta if b_val is not None else np.zeros((channels,))
            if scale is not None:
                c = c * scale
            if shift is not None:
                c = c + shift
            c = np.broadcast_to(c, np.broadcast_shapes(c.shape, (channels,)))
            set_attr(node, "beta", 1.0)
        else:
            c = const_array(b_val).astype(np.float64) if b_val is not None else np.zeros((channels,))
            if scale is not None:
                c = c * scale
            if shift is not None:
                c = c + shift
        new_c = _in_type(c, np_dt)
        if new_c is None:
            return False
        if scale is not None:
            node.replace_input_with(1, new_initializer(graph, new_w, self.namer, derived_name(w_val.name, "_fused")))
        bias = new_initializer(graph, new_c, self.namer, derived_name(b_val.name if b_val is not None else w_val.name, "_bias"))
        if len(node.inputs) > 2:
            node.replace_input_with(2, bias)
        else:
            node.resize_inputs(3)
            node.replace_input_with(2, bias)
        return True


class FuseBatchNorm(_WeightFusion):
    """BatchNormalization (inference) into the preceding Conv/ConvTranspose/Gemm, or into a
    MatMul with a constant 2-D weight and 2-D input (which becomes a Gemm).

    Preconditions: BN statistics, scale and bias constant; BN not in training mode and its
    extra outputs unread; ``spatial`` not 0; the producer's output read only by the BN;
    the producer's weights constant; floating-point dtype.
    """

    name = "fuse-bn"
    op_types = frozenset({"BatchNormalization"})

    def rewrite(self, bn: ir.Node, graph: ir.Graph) -> bool:
        if attr(bn, "training_mode", 0) or attr(bn, "spatial", 1) == 0:
            return False
        if any(o.uses() or o.is_graph_output() for o in bn.outputs[1:]):
            return False
        x = bn.inputs[0]
        prod = x.producer() if x is not None else None
        if prod is None or prod.graph is not graph or not single_use(x):
            return False
        if not is_op(prod, "Conv", "ConvTranspose", "Gemm", "MatMul"):
            return False
        params = bn.inputs[1:5]
        if len(params) != 4 or not all(is_const(p) for p in params):
            return False
        scale, b, mean, var = (const_array(p).astype(np.float64).reshape(-1) for p in params)
        eps = attr(bn, "epsilon", 1e-5)
        with np.errstate(all="ignore"):  # a variance <= -eps gives NaN: not fused (_in_type)
            s = scale / np.sqrt(var + eps)
            shift = b - mean * s
        if prod.op_type == "MatMul":
            return self._matmul(prod, bn, s, shift, graph)
        channels = _out_channels(prod)
        if channels is None or channels != len(s):
            return False
        if prod.op_type == "Gemm" and (rank_of(x) not in (2, None)):
            return False
        if not self._apply(prod, s, shift):
            return False
        replace_value(bn.outputs[0], prod.outputs[0])
        remove_if_dead(bn)
        return True

    def _matmul(self, mm: ir.Node, bn: ir.Node, s: np.ndarray, shift: np.ndarray, graph: ir.Graph) -> bool:
        a, w = mm.inputs
        if not is_const(w) or len(const_shape(w)) != 2 or rank_of(a) != 2 or self.opset < 11:
            return False
        dt = dtype_of(w)
        if dt not in FLOAT_TYPES or const_shape(w)[1] != len(s):
            return False
        np_dt = np.dtype(dt.numpy())
        new_w, new_c = _scaled_weight(const_array(w), s[None, :], np_dt), _in_type(shift, np_dt)
        if new_w is None or new_c is None:
            return False
        w2 = new_initializer(graph, new_w, self.namer, derived_name(w.name, "_fused"))
        c = new_initializer(graph, new_c, self.namer, derived_name(w.name, "_bias"))
        gemm = ir.node("Gemm", [a, w2, c])
        graph.insert_before(bn, gemm)
        gemm.outputs[0].dtype = dt
        gemm.outputs[0].shape = bn.outputs[0].shape
        replace_value(bn.outputs[0], gemm.outputs[0])
        remove_if_dead(bn)
        remove_if_dead(mm)
        return True


class FuseBias(_WeightFusion):
    """``Add(y, b)`` with y = Conv/ConvTranspose/Gemm output (read only by the Add) and b a
    constant that varies only along the channel axis: b goes into the bias input."""

    name = "fuse-bias"
    op_types = frozenset({"Add"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        for y, c in (node.inputs, node.inputs[::-1]):
            fused = _fuse_channelwise(self, node, y, c, graph, scale=False)
            if fused:
                return True
        return False


class FuseScale(_WeightFusion):
    """``Mul(y, s)`` with y = Conv/ConvTranspose/Gemm output (read only by the Mul), s a
    per-channel constant and the weight constant: s scales weight and bias."""

    name = "fuse-mul"
    op_types = frozenset({"Mul"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        for y, c in (node.inputs, node.inputs[::-1]):
            if _fuse_channelwise(self, node, y, c, graph, scale=True):
                return True
        return False


def _fuse_channelwise(p: _WeightFusion, node: ir.Node, y, c, graph: ir.Graph, scale: bool) -> bool:
    if y is None or c is None or not is_const(c):
        return False
    prod = y.producer()
    if not is_op(prod, *WEIGHT_OPS) or prod.graph is not graph or not single_use(y):
        return False
    if dtype_of(c) != dtype_of(y) or dtype_of(y) not in FLOAT_TYPES:
        return False
    channels = _out_channels(prod)
    if channels is None:
        if prod.op_type != "Gemm" or scale:
            return False
        dims = shape_dims(y)
        if dims is None or len(dims) != 2 or dims[1] is None:
            return False
        channels = dims[1]
    y_rank = 2 if prod.op_type == "Gemm" else len(_weight_shape(prod.inputs[1]))
    vec = _per_channel(c, y_rank, channels)
    if vec is None:
        return False
    if not p._apply(prod, vec if scale else None, None if scale else vec):
        return False
    replace_value(node.outputs[0], prod.outputs[0])
    remove_if_dead(node)
    return True


class FuseGemm(NodePass):
    """MatMul + Add into Gemm (both MatMul inputs 2-D, the Add operand broadcasting into the
    2-D output without changing it, MatMul output read only by the Add, float dtype,
    opset 11+), and a 2-D Transpose feeding a Gemm (or a 2-D MatMul's B) absorbed as
    transA/transB."""

    op_types = frozenset({"Add", "Gemm", "MatMul"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        if node.op_type == "Add":
            return self._matmul_add(node, graph)
        if node.op_type == "MatMul":
            b = node.inputs[1]
            t = b.producer() if b is not None else None
            if not is_op(t, "Transpose") or attr(t, "perm") != [1, 0] or t.graph is not graph:
                return False
            if rank_of(node.inputs[0]) != 2 or dtype_of(b) not in FLOAT_TYPES or self.opset < 11:
                return False
            gemm = ir.node("Gemm", [node.inputs[0], t.inputs[0]], {"transB": 1})
            if not substitute(graph, node, gemm):
                return False
            remove_if_dead(t)
            return True
        changed = False
        for idx, name in ((0, "transA"), (1, "transB")):
            v = node.inputs[idx]
            t = v.producer() if v is not None else None
            if is_op(t, "Transpose") and attr(t, "perm") == [1, 0] and t.graph is graph:
                node.replace_input_with(idx, t.inputs[0])
                set_attr(node, name, 1 - attr(node, name, 0))
                remove_if_dead(t)
                changed = True
        return changed

    def _matmul_add(self, add: ir.Node, graph: ir.Graph) -> bool:
        if self.opset < 11:
            return False
        for y, c in (add.inputs, add.inputs[::-1]):
            if y is None or c is None:
                continue
            mm = y.producer()
            if not is_op(mm, "MatMul") or mm.graph is not graph or not single_use(y):
                continue
            a, b = mm.inputs
            if rank_of(a) != 2 or rank_of(b) != 2 or dtype_of(y) not in FLOAT_TYPES or dtype_of(c) != dtype_of(y):
                continue
            cd = shape_dims(c)
            if cd is None or any(d is None for d in cd) or len(cd) > 2:
                continue
            if not broadcast_keeps_shape(shape_dims(y), cd):
                continue
            gemm = ir.node("Gemm", [a, b, c])
            if not substitute(graph, add, gemm):
                return False
            remove_if_dead(mm)
            return True
        return False


def _scalar(v: ir.Value | None, max_rank: int | None) -> float | None:
    """A one-element constant whose rank cannot broadcast a rank-``max_rank`` tensor up."""
    arr = small_const(v, 1)
    if arr is None or arr.size != 1 or max_rank is None or arr.ndim > max_rank:
        return None
    return float(arr.reshape(-1)[0])


def _close(a: float | None, b: float, rel: float = 1e-4) -> bool:
    return a is not None and abs(a - b) <= rel * abs(b)


def _replace_with(node_out: ir.Value, new: ir.Node, graph: ir.Graph, anchor: ir.Node) -> bool:
    graph.insert_before(anchor, new)
    new.outputs[0].dtype = node_out.dtype
    new.outputs[0].shape = node_out.shape
    if not replace_value(node_out, new.outputs[0]):
        graph.remove(new, safe=True)
        return False
    return True


def _remove_chain(nodes: list[ir.Node]) -> None:
    """Remove now-dead nodes, consumers first."""
    for n in nodes:
        if n.graph is not None:
            remove_if_dead(n)


class FuseHardSwish(NodePass):
    """``Mul(x, HardSigmoid(x, alpha=1/6, beta=0.5))`` into HardSwish(x) (opset 14+; the
    HardSigmoid output read only by the Mul)."""

    op_types = frozenset({"Mul"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        if self.opset < 14:
            return False
        for x, h in (node.inputs, node.inputs[::-1]):
            hs = h.producer() if h is not None else None
            if not is_op(hs, "HardSigmoid") or hs.inputs[0] is not x or not single_use(h):
                continue
            if not _close(attr(hs, "alpha", 0.2), 1 / 6, 1e-6) or attr(hs, "beta", 0.5) != 0.5:
                continue
            if dtype_of(x) not in FLOAT_TYPES:
                continue
            if not _replace_with(node.outputs[0], ir.node("HardSwish", [x]), graph, node):
                return False
            _remove_chain([node, hs])
            return True
        return False


def _factors(v: ir.Value, root: bool, out: list, nodes: list) -> None:
    """Operands of a tree of Muls (inner Mul outputs must be single-use)."""
    p = v.producer()
    if is_op(p, "Mul") and (root or single_use(v)) and None not in p.inputs:
        nodes.append(p)
        for i in p.inputs:
            _factors(i, False, out, nodes)
    else:
        out.append(v)


class FuseGelu(NodePass):
    """GELU subgraphs into Gelu (opset 20+).

    erf form: x * 0.5 * (1 + erf(x / sqrt(2))) (any Mul grouping; Div by sqrt 2 or Mul by
    1/sqrt 2); tanh form: x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) with x^3
    as Pow(x, 3) or x*x*x. Every intermediate read once; constants one-element and of
    rank at most x's; float dtype.
    """

    op_types = frozenset({"Mul"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        if self.opset < 20:
            return False
        factors: list[ir.Value] = []
        nodes: list[ir.Node] = []
        _factors(node.outputs[0], True, factors, nodes)
        if len(factors) != 3:
            return False
        consts = [f for f in factors if is_const(f)]
        others = [f for f in factors if not is_const(f)]
        if len(consts) != 1 or len(others) != 2:
            return False
        for x, u in (others, others[::-1]):
            r = rank_of(x)
            if dtype_of(x) not in FLOAT_TYPES or not _close(_scalar(consts[0], r), 0.5):
                continue
            match = self._one_plus(u, x, r)
            if match is None:
                continue
            approx, chain = match
            gelu = ir.node("Gelu", [x], {"approximate": approx})
            if not _replace_with(node.outputs[0], gelu, graph, node):
                return False
            _remove_chain(nodes + chain)
            return True
        return False

    def _one_plus(self, u: ir.Value, x: ir.Value, r: int | None):
        add = u.producer()
        if not is_op(add, "Add") or not single_use(u) or None in add.inputs:
            return None
        for one, e in (add.inputs, add.inputs[::-1]):
            if not _close(_scalar(one, r), 1.0, 0):
                continue
            f = e.producer()
            if not single_use(e) or f is None:
                continue
            if is_op(f, "Erf"):
                chain = self._scaled_x(f.inputs[0], x, r, 1 / math.sqrt(2))
                if chain is not None:
                    return "none", [add, f, *chain]
            if is_op(f, "Tanh"):
                chain = self._tanh_arg(f.inputs[0], x, r)
                if chain is not None:
                    return "tanh", [add, f, *chain]
        return None

    def _scaled_x(self, v: ir.Value, x: ir.Value, r, factor: float):
        """v == x * factor (as Mul by factor or Div by 1/factor); returns the nodes."""
        p = v.producer()
        if not single_use(v) or p is None or None in p.inputs:
            return None
        if is_op(p, "Div") and p.inputs[0] is x and _close(_scalar(p.inputs[1], r), 1 / factor):
            return [p]
        if is_op(p, "Mul"):
            for a, b in (p.inputs, p.inputs[::-1]):
                if a is x and _close(_scalar(b, r), factor):
                    return [p]
        return None

    def _tanh_arg(self, v: ir.Value, x: ir.Value, r):
        # sqrt(2/pi) * (x + 0.044715 * x^3)
        p = v.producer()
        if not is_op(p, "Mul") or not single_use(v) or None in p.inputs:
            return None
        for k, s in (p.inputs, p.inputs[::-1]):
            if not _close(_scalar(k, r), math.sqrt(2 / math.pi)):
                continue
            add = s.producer()
            if not is_op(add, "Add") or not single_use(s) or None in add.inputs:
                continue
            for a, b in (add.inputs, add.inputs[::-1]):
                if a is not x:
                    continue
                cube = self._scaled_cube(b, x, r)
                if cube is not None:
                    return [p, add, *cube]
        return None

    def _scaled_cube(self, v: ir.Value, x: ir.Value, r):
        p = v.producer()
        if not is_op(p, "Mul") or not single_use(v) or None in p.inputs:
            return None
        for k, c in (p.inputs, p.inputs[::-1]):
            if not _close(_scalar(k, r), 0.044715):
                continue
            q = c.producer()
            if not single_use(c) or q is None:
                continue
            if is_op(q, "Pow") and q.inputs[0] is x and _close(_scalar(q.inputs[1], r), 3.0, 0):
                return [p, q]
            if is_op(q, "Mul"):
                for a, b in (q.inputs, q.inputs[::-1]):
                    sq = b.producer() if b is not None else None
                    if a is x and is_op(sq, "Mul") and single_use(b) and sq.inputs[0] is x and sq.inputs[1] is x:
                        return [p, q, sq]
        return None


class FuseLayerNorm(NodePass):
    """ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div(/Mul/Add) into LayerNormalization (opset 17+).

    Preconditions: both ReduceMeans over the same trailing, contiguous axes with keepdims=1;
    the centered value read exactly by the Pow (or Mul d*d) and the Div; every other
    intermediate read once; epsilon, scale and bias constants, scale/bias broadcasting
    into the normalized dims only (they must be static), float dtype.
    """

    op_types = frozenset({"ReduceMean"})

    def _axes(self, node: ir.Node) -> list[int] | None:
        if self.opset >= 18:
            if len(node.inputs) < 2 or node.inputs[1] is None:
                return None
            arr = small_const(node.inputs[1])
            return None if arr is None else [int(a) for a in arr.reshape(-1)]
        return attr(node, "axes")

    def rewrite(self, m_node: ir.Node, graph: ir.Graph) -> bool:
        if self.opset < 17 or attr(m_node, "keepdims", 1) != 1:
            return False
        x = m_node.inputs[0]
        dims = shape_dims(x)
        axes = self._axes(m_node)
        if dims is None or not axes or dtype_of(x) not in FLOAT_TYPES:
            return False
        r = len(dims)
        norm = sorted(a + r if a < 0 else a for a in axes)
        if norm != list(range(r - len(norm), r)):
            return False
        axis = r - len(norm)
        m = m_node.outputs[0]
        if not single_use(m):
            return False
        sub = m.consumers()[0]
        if not is_op(sub, "Sub") or sub.inputs[0] is not x or sub.inputs[1] is not m:
            return False
        d = sub.outputs[0]
        if d.is_graph_output() or len(d.uses()) != 2 and len(d.uses()) != 3:
            return False
        users = d.consumers()
        sq = next((u for u in users if is_op(u, "Pow", "Mul") and u is not None and u.inputs[0] is d), None)
        div = next((u for u in users if is_op(u, "Div") and u.inputs[0] is d), None)
        if sq is None or div is None or len(users) != 2:
            return False
        if sq.op_type == "Pow" and not _close(_scalar(sq.inputs[1], r), 2.0, 0):
            return False
        if sq.op_type == "Mul" and sq.inputs[1] is not d:
            return False
        expected_uses = 2 + (sq.op_type == "Mul")
        if len(d.uses()) != expected_uses:
            return False
        v_node = _only_consumer(sq.outputs[0], "ReduceMean")
        if v_node is None or self._axes(v_node) is None or sorted(
            a + r if a < 0 else a for a in self._axes(v_node)
        ) != norm or attr(v_node, "keepdims", 1) != 1:
            return False
        add = _only_consumer(v_node.outputs[0], "Add")
        if add is None:
            return False
        eps_v = add.inputs[1] if add.inputs[0] is v_node.outputs[0] else add.inputs[0]
        eps = _scalar(eps_v, r)
        if eps is None:
            return False
        sqrt = _only_consumer(add.outputs[0], "Sqrt")
        if sqrt is None or not single_use(sqrt.outputs[0]) or div.inputs[1] is not sqrt.outputs[0]:
            return False
        chain = [div, sqrt, add, v_node, sq, sub, m_node]
        out = div.outputs[0]
        norm_shape = dims[axis:]
        if any(dd is None for dd in norm_shape):
            return False
        np_dt = np.dtype(dtype_of(x).numpy())
        gamma = np.ones(norm_shape, np_dt)
        beta = None
        mul = _only_consumer(out, "Mul")
        if mul is not None:
            g = mul.inputs[1] if mul.inputs[0] is out else mul.inputs[0]
            garr = self._param(g, norm_shape, np_dt)
            if garr is not None:
                gamma, out = garr, mul.outputs[0]
                chain.insert(0, mul)
                bias_add = _only_consumer(out, "Add")
                if bias_add is not None:
                    bv = bias_add.inputs[1] if bias_add.inputs[0] is out else bias_add.inputs[0]
                    barr = self._param(bv, norm_shape, np_dt)
                    if barr is not None:
                        beta, out = barr, bias_add.outputs[0]
                        chain.insert(0, bias_add)
        inputs = [x, new_initializer(graph, gamma, self.namer, (x.name or "ln") + "_ln_scale")]
        if beta is not None:
            inputs.append(new_initializer(graph, beta, self.namer, (x.name or "ln") + "_ln_bias"))
        ln = ir.node("LayerNormalization", inputs, {"axis": axis, "epsilon": eps})
        if not _replace_with(out, ln, graph, chain[0]):
            return False
        _remove_chain(chain)
        return True

    def _param(self, v: ir.Value, norm_shape, np_dt) -> np.ndarray | None:
        if not is_const(v) or dtype_of(v) is None or np.dtype(dtype_of(v).numpy()) != np_dt:
            return None
        shape = const_shape(v)
        if len(shape) > len(norm_shape) or not broadcast_keeps_shape(list(norm_shape), shape):
            return None
        return _contig(np.broadcast_to(const_array(v), norm_shape))


def _only_consumer(v: ir.Value, op: str) -> ir.Node | None:
    if not single_use(v):
        return None
    n = v.consumers()[0]
    return n if is_op(n, op) else None
