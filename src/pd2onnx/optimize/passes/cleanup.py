"""Clean-up passes: remove nodes that compute nothing, merge chains, share duplicates.

Every removal goes through ``_ir.bypass``/``_ir.replace_value`` so graph output names
never change: when the removed node produces a graph output, the value it forwarded takes
the output's name, or (when that value is a graph input, an initializer, another output or
lives in an outer scope) the node stays.
"""

from __future__ import annotations

import hashlib
import logging

import numpy as np
import onnx_ir as ir

from pd2onnx import provenance
from pd2onnx.optimize._ir import (
    RANDOM_OPS,
    attr,
    broadcast_keeps_shape,
    bypass,
    can_replace,
    const_array,
    const_ints,
    const_shape,
    const_size,
    dtype_of,
    has_subgraph,
    is_const,
    is_op,
    iter_graphs,
    rank_of,
    remove_if_dead,
    replace_value,
    set_attr,
    shape_dims,
    small_const,
    substitute,
)
from pd2onnx.optimize.passes.base import NodePass, OptimizerPass

logger = logging.getLogger(__name__)

INT64_MAX = np.iinfo(np.int64).max


class LiftConstants(NodePass):
    """Constant nodes become initializers (any size, any ``value_*`` form) so folding sees them.

    A Constant that is itself a graph output stays (an output must be produced by a node).
    """

    op_types = frozenset({"Constant"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        out = node.outputs[0]
        if out.is_graph_output() or len(node.attributes) != 1:
            return False
        (name, a), = node.attributes.items()
        if getattr(a, "is_ref", lambda: False)():
            return False
        if name == "value":
            tensor = a.as_tensor()
        elif name == "value_float":
            tensor = ir.tensor(np.array(a.as_float(), np.float32))
        elif name == "value_floats":
            tensor = ir.tensor(np.array(a.as_floats(), np.float32))
        elif name == "value_int":
            tensor = ir.tensor(np.array(a.as_int(), np.int64))
        elif name == "value_ints":
            tensor = ir.tensor(np.array(a.as_ints(), np.int64))
        else:
            return False  # strings and sparse tensors stay as they are
        value_name = out.name
        out.name = None
        init = ir.Value(name=value_name, shape=ir.Shape(tensor.shape), type=ir.TensorType(tensor.dtype), const_value=tensor)
        graph.register_initializer(init)
        ir.convenience.replace_all_uses_with(out, init)
        provenance.move(out, init)
        graph.remove(node, safe=True)
        return True


class RemoveIdentity(NodePass):
    """Identity nodes are dropped; graph output names stay (see module doc)."""

    op_types = frozenset({"Identity"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        if len(node.inputs) != 1 or node.inputs[0] is None:
            return False
        return bypass(node, node.outputs[0], node.inputs[0])


class RemoveDropout(NodePass):
    """Dropout is an identity at inference, whatever its ratio.

    Kept when ``training_mode`` is not a constant false or when its mask output is read
    (a graph output or used); an unused mask output is dropped even if the node stays.
    """

    op_types = frozenset({"Dropout"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        if len(node.inputs) >= 3 and node.inputs[2] is not None:
            training = small_const(node.inputs[2])
            if training is None or bool(training.reshape(-1)[0]):
                return False
        mask_used = len(node.outputs) > 1 and (node.outputs[1].uses() or node.outputs[1].is_graph_output())
        if mask_used:
            return False
        if bypass(node, node.outputs[0], node.inputs[0]):
            return True
        if len(node.outputs) > 1:
            node.resize_outputs(1)
            return True
        return False


class FlattenToReshape(NodePass):
    """Flatten becomes Reshape when the target can be written without ambiguity.

    Reshape then merges with neighbouring Reshapes and feeds Gemm fusion. A ``-1`` is only
    used where the other target dim is a known non-zero number (so empty tensors behave).
    """

    op_types = frozenset({"Flatten"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        if self.opset < 5:
            return False
        dims = shape_dims(node.inputs[0])
        if dims is None:
            return False
        axis = attr(node, "axis", 1)
        axis = axis + len(dims) if axis < 0 else axis
        lead, tail = dims[:axis], dims[axis:]
        lead_n = None if any(d is None for d in lead) else int(np.prod(lead, dtype=np.int64))
        tail_n = None if any(d is None for d in tail) else int(np.prod(tail, dtype=np.int64))
        if lead_n is not None and tail_n is not None:
            target = [lead_n, tail_n]
        elif axis == 1 and tail_n is not None:
            target = [0, tail_n]
        elif tail_n is not None and tail_n > 0:
            target = [-1, tail_n]
        elif lead_n is not None and lead_n > 0:
            target = [lead_n, -1]
        else:
            return False
        shape = self._const(graph, np.array(target, np.int64), node.outputs[0].name or "flatten")
        reshape = ir.node("Reshape", [node.inputs[0], shape])
        if not substitute(graph, node, reshape):
            return False
        return True

    def _const(self, graph: ir.Graph, array: np.ndarray, base: str) -> ir.Value:
        from pd2onnx.optimize._ir import new_initializer

        return new_initializer(graph, array, self.namer, base + "_shape")


class RemoveNoOps(NodePass):
    """Drop nodes that return their input unchanged.

    Pad with all-zero pads; Cast to the input's own type; Reshape to the input's own shape;
    Transpose with the identity permutation; Slice covering whole axes with step 1; Expand
    and Tile that do not grow the input; Concat of one input; Split into one output;
    Squeeze/Unsqueeze with an empty constant axes list (opset 13+ form).
    """

    op_types = frozenset(
        {"Pad", "Cast", "Reshape", "Transpose", "Slice", "Expand", "Tile", "Concat", "Split", "Squeeze", "Unsqueeze"}
    )

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        x = node.inputs[0] if node.inputs else None
        if x is None or len(node.outputs) != 1 or not self._is_noop(node, x):
            return False
        return bypass(node, node.outputs[0], x)

    def _is_noop(self, node: ir.Node, x: ir.Value) -> bool:
        op = node.op_type
        if op == "Pad":
            pads = attr(node, "pads") if self.opset < 11 else const_ints(node.inputs[1] if len(node.inputs) > 1 else None)
            return pads is not None and all(p == 0 for p in pads)
        if op == "Cast":
            src = dtype_of(x)
            return src is not None and src.value == attr(node, "to")
        if op == "Reshape":
            target = const_ints(node.inputs[1])
            dims = shape_dims(x)
            return target is not None and dims is not None and _reshape_is_noop(dims, target, attr(node, "allowzero", 0))
        if op == "Transpose":
            perm = attr(node, "perm")
            if perm is None:
                r = rank_of(x)
                return r is not None and r <= 1
            return perm == list(range(len(perm)))
        if op == "Slice":
            return self._slice_noop(node, x)
        if op in ("Expand", "Tile"):
            arg = const_ints(node.inputs[1])
            if arg is None:
                return False
            if op == "Tile":
                return all(r == 1 for r in arg)
            return broadcast_keeps_shape(shape_dims(x), arg)
        if op == "Concat":
            return len(node.inputs) == 1
        if op == "Split":
            return True  # one output: it is the whole input
        if op in ("Squeeze", "Unsqueeze"):
            if self.opset < 13 or len(node.inputs) < 2 or node.inputs[1] is None:
                return False
            axes = const_ints(node.inputs[1])
            return axes is not None and len(axes) == 0
        return False

    def _slice_noop(self, node: ir.Node, x: ir.Value) -> bool:
        dims = shape_dims(x)
        if self.opset < 10:
            starts, ends = attr(node, "starts"), attr(node, "ends")
            axes = attr(node, "axes", list(range(len(starts or []))))
            steps = [1] * len(starts or [])
        else:
            starts = const_ints(node.inputs[1])
            ends = const_ints(node.inputs[2])
            axes = const_ints(node.inputs[3]) if len(node.inputs) > 3 and node.inputs[3] is not None else None
            steps = const_ints(node.inputs[4]) if len(node.inputs) > 4 and node.inputs[4] is not None else None
            if starts is None or ends is None:
                return False
            if axes is None:
                if len(node.inputs) > 3 and node.inputs[3] is not None:
                    return False
                axes = list(range(len(starts)))
            if steps is None:
                if len(node.inputs) > 4 and node.inputs[4] is not None:
                    return False
                steps = [1] * len(starts)
        if starts is None or ends is None:
            return False
        for s, e, a, st in zip(starts, ends, axes, steps):
            if st != 1:
                return False
            dim = None
            if dims is not None:
                aa = a + len(dims) if a < 0 else a
                if not 0 <= aa < len(dims):
                    return False
                dim = dims[aa]
            if s < 0:
                if dim is None or s + dim > 0:
                    return False
            elif s != 0:
                return False
            if e >= (1 << 31) - 1:
                continue  # "to the end" for any dim
            if dim is None or e < dim:
                return False
        return True


def _reshape_is_noop(dims: list[int | None], target: list[int], allowzero: int) -> bool:
    """Reshape to ``target`` returns the input shape: same rank, every entry copies (0) or
    equals the input dim, and at most one -1 (which then resolves to the remaining dim,
    provided no other dim is a static 0)."""
    if len(dims) != len(target) or target.count(-1) > 1:
        return False
    for d, t in zip(dims, target):
        if t == -1:
            continue
        if t == 0 and not allowzero:
            continue
        if d is None or d != t:
            return False
    if -1 in target:
        return all(d != 0 for d, t in zip(dims, target) if t != -1)
    return True


class SimplifyArithmetic(NodePass):
    """x*1, 1*x, x+0, 0+x, x-0, x/1 are x, when broadcasting keeps x's shape and dtype."""

    op_types = frozenset({"Mul", "Add", "Sub", "Div"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        if len(node.inputs) != 2 or None in node.inputs:
            return False
        a, b = node.inputs
        op = node.op_type
        candidates = [(a, b)]
        if op in ("Mul", "Add"):
            candidates.append((b, a))
        neutral = 1 if op in ("Mul", "Div") else 0
        for x, c in candidates:
            if not is_const(c) or const_size(c) > 65536 or is_const(x):
                continue
            if dtype_of(x) is None or dtype_of(x) != dtype_of(c):
                continue
            if not broadcast_keeps_shape(shape_dims(x), const_shape(c)):
                continue
            arr = const_array(c)
            if not np.all(arr == neutral):
                continue
            # (x + 0.0 would turn -0.0 into +0.0: equal as numbers, so accepted.)
            return bypass(node, node.outputs[0], x)
        return False


# Casts that never lose information: source -> targets holding every source value exactly.
_D = ir.DataType
_LOSSLESS: dict[ir.DataType, frozenset[ir.DataType]] = {
    _D.BOOL: frozenset({_D.INT8, _D.UINT8, _D.INT16, _D.UINT16, _D.INT32, _D.UINT32, _D.INT64, _D.UINT64,
                        _D.FLOAT16, _D.BFLOAT16, _D.FLOAT, _D.DOUBLE}),
    _D.UINT8: frozenset({_D.INT16, _D.UINT16, _D.INT32, _D.UINT32, _D.INT64, _D.UINT64, _D.FLOAT16,
                         _D.BFLOAT16, _D.FLOAT, _D.DOUBLE}),
    _D.INT8: frozenset({_D.INT16, _D.INT32, _D.INT64, _D.FLOAT16, _D.BFLOAT16, _D.FLOAT, _D.DOUBLE}),
    _D.UINT16: frozenset({_D.INT32, _D.UINT32, _D.INT64, _D.UINT64, _D.FLOAT, _D.DOUBLE}),
    _D.INT16: frozenset({_D.INT32, _D.INT64, _D.FLOAT, _D.DOUBLE}),
    _D.UINT32: frozenset({_D.INT64, _D.UINT64, _D.DOUBLE}),
    _D.INT32: frozenset({_D.INT64, _D.DOUBLE}),
    _D.FLOAT16: frozenset({_D.FLOAT, _D.DOUBLE}),
    _D.BFLOAT16: frozenset({_D.FLOAT, _D.DOUBLE}),
    _D.FLOAT: frozenset({_D.DOUBLE}),
}


def cast_is_lossless(src: ir.DataType, dst: ir.DataType) -> bool:
    return src == dst or dst in _LOSSLESS.get(src, frozenset())


class MergeChains(NodePass):
    """Merge consecutive Reshape, Transpose, Squeeze, Unsqueeze and Cast nodes.

    The second node is rewired to read the first node's input (the first dies if nothing
    else reads it). Cast(Cast(x, T1), T2) merges only when x -> T1 is lossless, so the
    value reaching the second cast is exactly x (never float -> int -> float).
    """

    op_types = frozenset({"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Cast"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        mid = node.inputs[0]
        if mid is None:
            return False
        first = mid.producer()
        if not is_op(first, node.op_type) or first.graph is not graph or first.inputs[0] is None:
            return False
        x = first.inputs[0]
        op = node.op_type
        if op == "Reshape":
            target = const_ints(node.inputs[1])
            if target is None or (0 in target and not attr(node, "allowzero", 0)):
                return False  # a 0 copies a dim of the intermediate, which may differ from x's
            node.replace_input_with(0, x)
        elif op == "Transpose":
            p1, p2 = attr(first, "perm"), attr(node, "perm")
            if p1 is None or p2 is None or len(p1) != len(p2):
                return False
            composed = [p1[i] for i in p2]
            node.replace_input_with(0, x)
            set_attr(node, "perm", composed)
            if composed == list(range(len(composed))):
                bypass(node, node.outputs[0], x)
        elif op in ("Squeeze", "Unsqueeze"):
            if not self._merge_axes(first, node, x):
                return False
        elif op == "Cast":
            src = dtype_of(x)
            if src is None or not cast_is_lossless(src, ir.DataType(attr(first, "to"))):
                return False
            node.replace_input_with(0, x)
            if src.value == attr(node, "to"):
                bypass(node, node.outputs[0], x)
        remove_if_dead(first)
        return True

    def _axes(self, node: ir.Node) -> list[int] | None:
        if self.opset >= 13:
            return const_ints(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] is not None else None
        return attr(node, "axes")

    def _merge_axes(self, first: ir.Node, second: ir.Node, x: ir.Value) -> bool:
        r = rank_of(x)
        a1, a2 = self._axes(first), self._axes(second)
        if r is None or not a1 or not a2:
            return False
        if second.op_type == "Unsqueeze":
            # Positions of inserted dims in the final output: simulate both insertions.
            mid_rank = r + len(a1)
            out_rank = mid_rank + len(a2)
            n1 = sorted(a + mid_rank if a < 0 else a for a in a1)
            n2 = sorted(a + out_rank if a < 0 else a for a in a2)
            layout: list[str] = ["x"] * r
            for a in n1:
                layout.insert(a, "1")
            for a in n2:
                layout.insert(a, "2")
            axes = [i for i, t in enumerate(layout) if t != "x"]
        else:
            # Squeeze: map the second node's axes back to the original positions.
            n1 = sorted(a + r if a < 0 else a for a in a1)
            kept = [i for i in range(r) if i not in n1]
            n2 = [a + len(kept) if a < 0 else a for a in a2]
            if any(not 0 <= a < len(kept) for a in n2):
                return False
            axes = sorted(n1 + [kept[a] for a in n2])
        second.replace_input_with(0, x)
        if self.opset >= 13:
            from pd2onnx.optimize._ir import new_initializer

            second.replace_input_with(1, new_initializer(second.graph, np.array(axes, np.int64), self.namer, "axes"))
        else:
            set_attr(second, "axes", axes)
        return True


class FusePad(NodePass):
    """Pad (constant mode, value 0, non-negative pads, none on batch/channel) into Conv,
    AveragePool (only where the pad counts like the pool's own: count_include_pad=1 or the
    pool had no pads of its own and ceil_mode=0) and MaxPool (only for a -inf pad value and
    an unread Indices output)."""

    op_types = frozenset({"Conv", "AveragePool", "MaxPool"})

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> bool:
        x = node.inputs[0]
        pad = x.producer() if x is not None else None
        if not is_op(pad, "Pad") or pad.graph is not graph:
            return False
        if (attr(pad, "mode", "constant") or "constant") not in ("constant", b"constant"):
            return False
        data = pad.inputs[0]
        rank = rank_of(data)
        if rank is None or rank < 3:
            return False
        if self.opset < 11:
            pads = attr(pad, "pads")
            fill = float(attr(pad, "value", 0.0))
        else:
            pads = const_ints(pad.inputs[1])
            fill_v = pad.inputs[2] if len(pad.inputs) > 2 else None
            if fill_v is None:
                fill = 0.0
            else:
                arr = small_const(fill_v)
                if arr is None:
                    return False
                fill = float(arr.reshape(-1)[0]) if arr.size else 0.0
            if len(pad.inputs) > 3 and pad.inputs[3] is not None:
                axes = const_ints(pad.inputs[3])
                if axes is None or pads is None:
                    return False
                full = [0] * (2 * rank)
                for k, a in enumerate(axes):
                    a = a + rank if a < 0 else a
                    full[a] = pads[k]
                    full[a + rank] = pads[k + len(axes)]
                pads = full
        if pads is None or len(pads) != 2 * rank or any(p < 0 for p in pads):
            return False
        if pads[0] or pads[1] or pads[rank] or pads[rank + 1]:
            return False
        if (attr(node, "auto_pad", "NOTSET") or "NOTSET") not in ("NOTSET", b"NOTSET"):
            return False
        op = node.op_type
        own = attr(node, "pads", [0] * (2 * (rank - 2)))
        if op == "Conv":
            if fill != 0.0:
                return False
        elif op == "AveragePool":
            if fill != 0.0 or attr(node, "ceil_mode", 0):
                return False
            if not attr(node, "count_include_pad", 0) and any(own):
                return False
        elif op == "MaxPool":
            if fill != float("-inf") or attr(node, "ceil_mode", 0):
                return False
            if len(node.outputs) > 1 and (node.outputs[1].uses() or node.outputs[1].is_graph_output()):
                return False
        spatial = rank - 2
        begin = [own[i] + pads[2 + i] for i in range(spatial)]
        end = [own[spatial + i] + pads[rank + 2 + i] for i in range(spatial)]
        if op != "Conv":
            kernel = attr(node, "kernel_shape")
            # Runtimes (ONNX Runtime) require pool pads smaller than the kernel.
            if kernel is None or any(b >= k or e >= k for b, e, k in zip(begin, end, kernel)):
                return False
        set_attr(node, "pads", begin + end)
        if op == "AveragePool":
            set_attr(node, "count_include_pad", 1)
        node.replace_input_with(0, data)
        remove_if_dead(pad)
        return True


NON_DETERMINISTIC = RANDOM_OPS


class CommonSubexpressions(OptimizerPass):
    """Nodes with the same op, attributes and input values are computed once.

    Works in every graph (subgraphs too, each on its own), skips random ops and nodes with
    subgraphs, and keeps graph output names (a duplicate that is a graph output is merged
    only if the kept value can take the name).
    """

    def run(self, model: ir.Model) -> int:
        count = 0
        for graph in list(iter_graphs(model.graph)):
            seen: dict[tuple, ir.Node] = {}
            for node in list(graph):
                if node.graph is not graph or has_subgraph(node):
                    continue
                if node.op_type in NON_DETERMINISTIC and node.domain in ("", "ai.onnx"):
                    continue
                key = _node_key(node)
                if key is None:
                    continue
                kept = seen.get(key)
                if kept is None:
                    seen[key] = node
                    continue
                pairs = list(zip(node.outputs, kept.outputs))
                if not all(can_replace(o, k) for o, k in pairs):
                    continue
                for o, k in pairs:
                    replace_value(o, k)
                remove_if_dead(node)
                count += 1
        return count


def _node_key(node: ir.Node) -> tuple | None:
    attrs = []
    for name, a in sorted(node.attributes.items()):
        if getattr(a, "is_ref", lambda: False)():
            return None
        v = a.value
        if a.type == ir.AttributeType.TENSOR:
            if v.size > 4096:
                return None
            arr = np.asarray(v.numpy())
            v = (str(arr.dtype), arr.shape, arr.tobytes())
        elif a.type in (ir.AttributeType.INTS, ir.AttributeType.FLOATS, ir.AttributeType.STRINGS):
            v = tuple(v)
        elif a.type not in (ir.AttributeType.INT, ir.AttributeType.FLOAT, ir.AttributeType.STRING):
            return None
        attrs.append((name, a.type.value, v))
    return (node.domain or "", node.op_type, node.overload, len(node.outputs), tuple(id(i) for i in node.inputs), tuple(attrs))


class DedupInitializers(OptimizerPass):
    """Initializers with equal dtype, shape and bytes are shared (per graph).

    Only initializers up to ``size_limit`` elements are compared, so large external weights
    are never read just to be hashed. Graph inputs/outputs are left alone.
    """

    size_limit = 1 << 16

    def __init__(self, options=None) -> None:
        super().__init__(options)
        # digest per tensor object, kept across the rounds of one optimize() (the tensor is
        # held so that its id cannot be reused): each weight is hashed at most once
        self._digests: dict[int, tuple[ir.TensorProtocol, str]] = {}

    def _digest(self, tensor: ir.TensorProtocol, arr: np.ndarray) -> str:
        cached = self._digests.get(id(tensor))
        if cached is not None and cached[0] is tensor:
            return cached[1]
        try:
            data = memoryview(np.ascontiguousarray(arr).reshape(-1)).cast("B")
        except (TypeError, ValueError):  # a dtype the buffer protocol cannot show (bfloat16)
            data = arr.tobytes()
        digest = hashlib.sha1(data).hexdigest()
        self._digests[id(tensor)] = (tensor, digest)
        return digest

    def run(self, model: ir.Model) -> int:
        count = 0
        for graph in list(iter_graphs(model.graph)):
            # only initializers that share dtype and shape with another can be equal: the
            # others are never read or hashed
            groups: dict[tuple, list[ir.Value]] = {}
            for value in list(graph.initializers.values()):
                if value.is_graph_input() or value.is_graph_output() or value.const_value is None:
                    continue
                if const_size(value) > self.size_limit or value.const_value.dtype == ir.DataType.STRING:
                    continue
                groups.setdefault((value.const_value.dtype, const_shape(value)), []).append(value)
            for values in groups.values():
                if len(values) < 2:
                    continue
                seen: dict[str, ir.Value] = {}
                for value in values:
                    arr = const_array(value)
                    key = self._digest(value.const_value, arr)
                    kept = seen.get(key)
                    if kept is None:
                        seen[key] = value
                        continue
                    if not np.array_equal(const_array(kept), arr, equal_nan=arr.dtype.kind == "f"):
                        continue
                    value.replace_all_uses_with(kept)
                    provenance.move(value, kept)
                    graph.initializers.pop(value.name)
                    count += 1
        return count


class RemoveUnused(OptimizerPass):
    """Dead nodes and unused initializers go, in every graph (onnx_ir's pass does the main
    graph's initializers and the dead nodes; subgraph initializers are done here)."""

    def run(self, model: ir.Model) -> int:
        from onnx_ir.passes.common import RemoveUnusedNodesPass

        before = sum(g.num_nodes() + len(g.initializers) for g in iter_graphs(model.graph))
        RemoveUnusedNodesPass()(model)
        for graph in list(iter_graphs(model.graph))[1:]:
            for value in list(graph.initializers.values()):
                if not (value.uses() or value.is_graph_output() or value.is_graph_input()):
                    graph.initializers.pop(value.name)
        after = sum(g.num_nodes() + len(g.initializers) for g in iter_graphs(model.graph))
        return before - after
