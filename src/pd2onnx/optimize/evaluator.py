"""Evaluate one ONNX node on numpy inputs, for constant folding.

Common ops (mostly shape arithmetic) have numpy kernels written here against the ONNX
specification; everything else goes to ``onnx.reference.ReferenceEvaluator`` (imported on
first use, as it is slow to import). onnxruntime is never needed.

``evaluate`` returns None when it cannot evaluate the node; the folder then leaves it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx_ir as ir

from pd2onnx.optimize._ir import _contig, attr

logger = logging.getLogger(__name__)

Kernel = Callable[[ir.Node, list[np.ndarray | None], int], list[np.ndarray] | None]
KERNELS: dict[str, Kernel] = {}


def kernel(*names: str) -> Callable[[Kernel], Kernel]:
    def register(fn: Kernel) -> Kernel:
        for n in names:
            KERNELS[n] = fn
        return fn

    return register


def _axes(node: ir.Node, inputs: list[np.ndarray | None], opset: int, since: int, index: int = 1):
    """Axes given as attribute (before ``since``) or as optional input ``index``."""
    if opset >= since:
        if len(inputs) > index and inputs[index] is not None:
            return [int(a) for a in np.asarray(inputs[index]).reshape(-1)]
        return None
    return attr(node, "axes")


@kernel("Identity")
def _identity(node, x, opset):
    return [x[0]]


@kernel("Shape")
def _shape(node, x, opset):
    dims = np.array(x[0].shape, dtype=np.int64)
    r = len(dims)
    start = attr(node, "start", 0)
    end = attr(node, "end", None)
    start = max(0, min(r, start + r if start < 0 else start))
    end = r if end is None else max(0, min(r, end + r if end < 0 else end))
    return [dims[start:end]]


@kernel("Size")
def _size(node, x, opset):
    return [np.array(x[0].size, dtype=np.int64)]


@kernel("Gather")
def _gather(node, x, opset):
    data, idx = x[0], x[1]
    axis = attr(node, "axis", 0)
    dim = data.shape[axis]
    idx = np.asarray(idx).astype(np.int64)
    if np.any((idx < -dim) | (idx >= dim)):
        return None  # out of range: runtime error, do not fold
    idx = np.where(idx < 0, idx + dim, idx)
    return [np.take(data, idx, axis=axis)]


@kernel("Concat")
def _concat(node, x, opset):
    arrays = [a for a in x if a is not None]
    return [np.concatenate(arrays, axis=attr(node, "axis"))]


@kernel("Unsqueeze")
def _unsqueeze(node, x, opset):
    axes = _axes(node, x, opset, 13)
    if axes is None:
        return None
    out_rank = x[0].ndim + len(axes)
    axes = sorted(a + out_rank if a < 0 else a for a in axes)
    y = x[0]
    for a in axes:
        y = np.expand_dims(y, a)
    return [y]


@kernel("Squeeze")
def _squeeze(node, x, opset):
    axes = _axes(node, x, opset, 13)
    if axes is None:
        return [np.squeeze(x[0])]
    axes = tuple(a + x[0].ndim if a < 0 else a for a in axes)
    if any(x[0].shape[a] != 1 for a in axes):
        return None
    return [np.squeeze(x[0], axis=axes)]


@kernel("Slice")
def _slice(node, x, opset):
    data = x[0]
    if opset < 10:
        starts, ends = attr(node, "starts"), attr(node, "ends")
        axes = attr(node, "axes", list(range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts = [int(v) for v in x[1].reshape(-1)]
        ends = [int(v) for v in x[2].reshape(-1)]
        axes = [int(v) for v in x[3].reshape(-1)] if len(x) > 3 and x[3] is not None else list(range(len(starts)))
        steps = [int(v) for v in x[4].reshape(-1)] if len(x) > 4 and x[4] is not None else [1] * len(starts)
    index: list[slice] = [slice(None)] * data.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        if st == 0:
            return None
        a = a + data.ndim if a < 0 else a
        dim = data.shape[a]
        # ONNX clamps differently from Python for negative steps; compute explicitly.
        s = s + dim if s < 0 else s
        e = e + dim if e < 0 else e
        if st > 0:
            s = min(max(s, 0), dim)
            e = min(max(e, 0), dim)
        else:
            s = min(max(s, -1), dim - 1)
            e = min(max(e, -1), dim - 1)
        rng = range(s, e, st)
        index[a] = np.array(list(rng), dtype=np.int64) if st < 0 or len(rng) != dim else slice(s, e, st)
    y = data
    for a, ix in enumerate(index):
        if isinstance(ix, np.ndarray):
            y = np.take(y, ix, axis=a)
        else:
            y = y[(slice(None),) * a + (ix,)]
    return [y]


@kernel("Cast")
def _cast(node, x, opset):
    to = ir.DataType(attr(node, "to"))
    if to in (ir.DataType.STRING,) or x[0].dtype.kind in "OSU":
        return None
    try:
        target = np.dtype(to.numpy())
    except Exception:
        return None
    if target.itemsize == 1 and target.kind == "V":  # float8/4-bit types: saturation rules
        return None
    if x[0].dtype.kind == "f" and target.kind in "iub":
        if target.kind == "b":
            return [x[0] != 0]
        if not np.all(np.isfinite(x[0])):
            return None  # implementation-defined: leave it to the runtime
        info = np.iinfo(target)
        if np.any(x[0] < info.min) or np.any(x[0] > info.max):
            return None
        return [np.trunc(x[0]).astype(target)]
    return [x[0].astype(target)]


@kernel("Reshape")
def _reshape(node, x, opset):
    data = x[0]
    shape = [int(v) for v in x[1].reshape(-1)]
    allowzero = attr(node, "allowzero", 0)
    out = []
    for i, d in enumerate(shape):
        if d == 0 and not allowzero:
            if i >= data.ndim:
                return None
            out.append(data.shape[i])
        else:
            out.append(d)
    try:
        return [data.reshape(out)]
    except ValueError:
        return None


def _same_dtype(fn):
    def run(node, x, opset):
        a, b = x[0], x[1]
        if a.dtype != b.dtype:
            return None
        y = fn(a, b)
        return [np.asarray(y).astype(a.dtype, copy=False)]

    return run


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C-style (truncating) integer division, as ONNX runtimes do."""
    if np.any(b == 0):
        raise ZeroDivisionError
    q = a // b
    r = a - q * b
    fix = (r != 0) & ((a < 0) != (b < 0))
    return q + fix.astype(q.dtype)


def _div(a, b):
    return _int_div(a, b) if a.dtype.kind in "iu" else np.divide(a, b)


for _name, _fn in {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": _div}.items():
    KERNELS[_name] = _same_dtype(_fn)


def _compare(fn):
    def run(node, x, opset):
        if x[0].dtype != x[1].dtype:
            return None
        return [np.asarray(fn(x[0], x[1]))]

    return run


for _name, _fn in {
    "Equal": np.equal,
    "Less": np.less,
    "Greater": np.greater,
    "LessOrEqual": np.less_equal,
    "GreaterOrEqual": np.greater_equal,
    "And": np.logical_and,
    "Or": np.logical_or,
    "Xor": np.logical_xor,
}.items():
    KERNELS[_name] = _compare(_fn)


@kernel("Not")
def _not(node, x, opset):
    return [np.logical_not(x[0])]


@kernel("Neg")
def _neg(node, x, opset):
    return [np.negative(x[0])]


@kernel("Abs")
def _abs(node, x, opset):
    return [np.abs(x[0])]


@kernel("Floor", "Ceil")
def _floor(node, x, opset):
    return [(np.floor if node.op_type == "Floor" else np.ceil)(x[0])]


@kernel("Sqrt", "Reciprocal")
def _sqrt(node, x, opset):
    if x[0].dtype.kind != "f":
        return None
    y = np.sqrt(x[0]) if node.op_type == "Sqrt" else np.reciprocal(x[0])
    return [y.astype(x[0].dtype)]


@kernel("Max", "Min")
def _maxmin(node, x, opset):
    arrays = [a for a in x if a is not None]
    if len({a.dtype for a in arrays}) != 1:
        return None
    fn = np.maximum if node.op_type == "Max" else np.minimum
    y = arrays[0]
    for a in arrays[1:]:
        y = fn(y, a)
    return [y]


@kernel("Where")
def _where(node, x, opset):
    return [np.where(x[0], x[1], x[2]).astype(x[1].dtype, copy=False)]


@kernel("Range")
def _range(node, x, opset):
    start, limit, delta = (np.asarray(v).reshape(()) for v in x[:3])
    if delta == 0:
        return None
    n = max(int(np.ceil((limit - start) / delta)), 0)
    return [(start + np.arange(n, dtype=start.dtype) * delta).astype(start.dtype)]


@kernel("ConstantOfShape")
def _constant_of_shape(node, x, opset):
    value = node.attributes.get("value")
    fill = np.zeros(1, np.float32) if value is None else np.asarray(value.as_tensor().numpy()).reshape(-1)
    shape = [int(v) for v in x[0].reshape(-1)]
    if any(d < 0 for d in shape):
        return None
    return [np.full(shape, fill[0], dtype=fill.dtype)]


@kernel("Expand")
def _expand(node, x, opset):
    shape = [int(v) for v in x[1].reshape(-1)]
    try:
        out = np.broadcast_shapes(x[0].shape, tuple(shape))
    except ValueError:
        return None
    return [np.array(np.broadcast_to(x[0], out))]


@kernel("Tile")
def _tile(node, x, opset):
    return [np.tile(x[0], [int(v) for v in x[1].reshape(-1)])]


@kernel("Transpose")
def _transpose(node, x, opset):
    perm = attr(node, "perm")
    return [_contig(np.transpose(x[0], perm))]


def _reduce(fn, since: int):
    def run(node, x, opset):
        axes = _axes(node, x, opset, since)
        keepdims = bool(attr(node, "keepdims", 1))
        if not axes:
            if opset >= since and attr(node, "noop_with_empty_axes", 0):
                return [x[0]]
            axes = None
        else:
            axes = tuple(a + x[0].ndim if a < 0 else a for a in axes)
        y = fn(x[0], axis=axes, keepdims=keepdims)
        return [np.asarray(y).astype(x[0].dtype, copy=False)]

    return run


KERNELS["ReduceProd"] = _reduce(np.prod, 18)
KERNELS["ReduceSum"] = _reduce(np.sum, 13)
KERNELS["ReduceMax"] = _reduce(np.max, 18)
KERNELS["ReduceMin"] = _reduce(np.min, 18)


@kernel("Flatten")
def _flatten(node, x, opset):
    axis = attr(node, "axis", 1)
    a = axis + x[0].ndim if axis < 0 else axis
    lead = int(np.prod(x[0].shape[:a], dtype=np.int64))
    return [x[0].reshape(lead, -1) if lead else x[0].reshape(0, int(np.prod(x[0].shape[a:])))]


@kernel("Split")
def _split(node, x, opset):
    axis = attr(node, "axis", 0)
    data = x[0]
    dim = data.shape[axis]
    n = len(node.outputs)
    if opset >= 13:
        split = [int(v) for v in x[1].reshape(-1)] if len(x) > 1 and x[1] is not None else None
    else:
        split = attr(node, "split")
    if split is None:
        num = attr(node, "num_outputs", n)
        chunk = -(-dim // num)
        split = [min(chunk, dim - i * chunk) for i in range(num)]
    if sum(split) != dim or len(split) != n:
        return None
    return list(np.split(data, np.cumsum(split)[:-1], axis=axis))


# --------------------------------------------------------------------------- fallback


def _reference(
    node: ir.Node, inputs: Sequence[np.ndarray | None], opsets: dict[str, int]
) -> list[np.ndarray] | None:
    """Run one node with onnx's reference evaluator (lazy import)."""
    import onnx
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    in_names = [f"i{k}" if v is not None else "" for k, v in enumerate(inputs)]
    out_names = [f"o{k}" if o.name else "" for k, o in enumerate(node.outputs)]
    proto_node = ir.serde.serialize_node(node)
    del proto_node.input[:]
    proto_node.input.extend(in_names)
    del proto_node.output[:]
    proto_node.output.extend(out_names)
    graph_inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
        for n, v in zip(in_names, inputs)
        if v is not None
    ]
    graph_outputs = [helper.make_empty_tensor_value_info(n) for n in out_names if n]
    graph = helper.make_graph([proto_node], "fold", graph_inputs, graph_outputs)
    domain = node.domain if node.domain != "ai.onnx" else ""
    imports = [helper.make_opsetid("", opsets.get("", 21))]
    if domain:
        imports.append(helper.make_opsetid(domain, opsets.get(domain, 1)))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = min(model.ir_version, onnx.IR_VERSION)
    feeds = {n: v for n, v in zip(in_names, inputs) if v is not None}
    results = ReferenceEvaluator(model).run(None, feeds)
    return [np.asarray(r) for r in results]


def evaluate(
    node: ir.Node, inputs: list[np.ndarray | None], opsets: dict[str, int]
) -> list[np.ndarray] | None:
    """Outputs of ``node`` for ``inputs``, or None when it cannot be evaluated exactly.

    ``opsets`` maps domain to opset version ("" for the default domain).
    """
    try:
        # float arithmetic on constants gives IEEE results (inf, NaN) as the runtime would:
        # numpy's warnings about them are not the user's concern
        with np.errstate(all="ignore"):
            fn = KERNELS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
            if fn is not None:
                out = fn(node, inputs, opsets.get("", 21))
            else:
                out = _reference(node, inputs, opsets)
    except Exception as exc:  # noqa: BLE001 - any failure means "do not fold"
        logger.debug("cannot evaluate %s: %s", node.op_type, exc)
        return None
    if out is None or len(out) != len(node.outputs):
        return None
    result: list[Any] = []
    for arr, value in zip(out, node.outputs):
        if isinstance(arr, np.generic):
            arr = np.asarray(arr)
        if not isinstance(arr, np.ndarray) or arr.dtype.kind in "OUS":
            return None
        expected = value.dtype
        if expected is not None:
            try:
                want = np.dtype(expected.numpy())
            except Exception:
                return None
            if arr.dtype != want:
                return None  # kernel disagrees with inferred type: do not trust it
        result.append(arr)
    return result
