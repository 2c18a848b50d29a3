"""Indexing: gather/scatter families, where/nonzero, topk/argsort and cumsum.

Paddle semantics reproduced here (checked with Paddle 3.3 and 2.6):

- Negative indices: Paddle 3.x wraps them (gather, gather_nd, index_select, take_along_axis,
  put_along_axis, scatter, scatter_nd_add); Paddle 2.x rejects them, so wrapping serves both.
  ONNX takes negative indices from opset 11; Gather below 11 wraps them explicitly.
- ``scatter`` with ``overwrite=False`` first zeroes every target row, then accumulates.
- ``put_along_axis`` with ``include_self=False`` resets the targets before reducing; ``mean``
  divides the sum by the number of contributions (integer means floor in Paddle 3 and
  truncate in Paddle 2).
- ``topk``/``argsort`` ties: ONNX TopK puts the lower index first, which is what Paddle's
  stable sort does; Paddle's unstable sort and ``sorted=False`` leave the order unspecified,
  and the sorted, stable order is one valid answer. NaN ordering is not reproduced: ONNX
  Runtime's TopK does not order NaN consistently.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import FLOAT_DTYPES, OpContext
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle import dtypes
from pd2onnx.paddle.program import Op


# ---------------------------------------------------------------------- helpers
def _static_int(ctx: OpContext, slot: str, default: int, what: str) -> int:
    """An int Scalar argument that ONNX needs as an attribute (constant or attribute only)."""
    value = ctx.scalar(slot, default)
    if isinstance(value, ir.Value):
        raise ctx.fail(f"{what} comes from a runtime tensor; ONNX needs it as a constant")
    return int(value)


def _axis(ctx: OpContext, slot: str, data_slot: str, default: int = 0) -> int:
    """The op's axis (attribute or constant operand ``slot``), normalized for ``data_slot``'s rank."""
    return ctx.normalize_axis(_static_int(ctx, slot, default, "the axis"), ctx.input_rank(data_slot))


def _int64_index(ctx: OpContext, slot: str) -> ir.Value:
    """Index input ``slot`` as int64 (ScatterND/GatherND accept no other index type)."""
    return ctx.cast(ctx.input(slot), "int64", ctx.input_dtype(slot))


def _full_like(ctx: OpContext, like: ir.Value, value: float, dtype: str) -> ir.Value:
    """A tensor shaped like ``like`` filled with ``value`` in ``dtype``."""
    scalar = ctx.const(np.asarray(value, dtype=dtypes.to_numpy(dtype)))
    return ctx.op.Expand(scalar, ctx.op.Shape(like))


def _wrap_negative(ctx: OpContext, index: ir.Value, slot: str, data: ir.Value, axis: int) -> ir.Value:
    """``index + dim`` where ``index < 0``: only below opset 11, whose Gather rejects negatives."""
    if ctx.opset >= 11:
        return index
    const = ctx.const_value(slot)
    if const is not None and bool((np.asarray(const) >= 0).all()):
        return index
    dtype = ctx.input_dtype(slot)
    dim = ctx.cast(ctx.reshape(ctx.shape_of(data, axis, axis + 1), []), dtype, "int64")
    if ctx.opset >= 9:
        negative = ctx.op.Less(index, ctx.const(0, dtype))
    else:  # Less takes integers from opset 9; an integer index is exact enough in double
        negative = ctx.op.Less(ctx.cast(index, "float64", dtype), ctx.const(0.0, "float64"))
    return ctx.op.Add(index, ctx.op.Mul(ctx.cast(negative, dtype, "bool"), dim))


def _gather_along(ctx: OpContext, axis: int) -> None:
    """Gather rows of ``x`` along ``axis`` by a 0-D/1-D index (or [N, 1], read as 1-D)."""
    x = ctx.input("x")
    index = ctx.input("index")
    if ctx.input_rank("index") == 2:
        index = ctx.reshape(index, [-1])
    index = _wrap_negative(ctx, index, "index", x, axis)
    ctx.set_output("out", ctx.op.Gather(x, index, axis=axis))


# ---------------------------------------------------------------------- gathers
@mapper("gather")
def gather(ctx: OpContext) -> None:
    _gather_along(ctx, _axis(ctx, "axis", "x"))


@mapper("index_select")
def index_select(ctx: OpContext) -> None:
    _gather_along(ctx, ctx.normalize_axis(int(ctx.attr("axis", 0)), ctx.input_rank("x")))


@mapper("gather_nd", min_opset=11)
def gather_nd(ctx: OpContext) -> None:
    shape = ctx.input_shape("index")
    if not shape or shape[-1] == 0:
        raise ctx.fail("gather_nd with an empty last index dimension has no ONNX GatherND form")
    ctx.set_output("out", ctx.op.GatherND(ctx.input("x"), _int64_index(ctx, "index")))


@mapper("index_sample", min_opset=11)
def index_sample(ctx: OpContext) -> None:
    ctx.set_output("out", ctx.op.GatherElements(ctx.input("x"), ctx.input("index"), axis=1))


@mapper("take_along_axis", min_opset=11)
def take_along_axis(ctx: OpContext) -> None:
    """Paddle's Python API broadcasts ``arr``/``indices`` first; the op is GatherElements."""
    axis = ctx.normalize_axis(int(ctx.attr("axis", 0)), ctx.input_rank("arr"))
    ctx.set_output("out", ctx.op.GatherElements(ctx.input("arr"), ctx.input("indices"), axis=axis))


# ---------------------------------------------------------------------- scatters
# Paddle reduce name -> (ONNX reduction, opset that has it); "mean" is add, then a division.
_REDUCTIONS: dict[str, tuple[str | None, int]] = {
    "assign": (None, 11),
    "add": ("add", 16),
    "mul": ("mul", 16),
    "multiply": ("mul", 16),
    "mean": ("add", 16),
    "amin": ("min", 18),
    "amax": ("max", 18),
}


def _put_along_axis_opset(op: Op) -> int:
    reduction = _REDUCTIONS.get(str(op.attrs.get("reduce", "assign")))
    return reduction[1] if reduction else 11


def _scatter_elements(
    ctx: OpContext,
    data: ir.Value,
    index: ir.Value,
    updates: ir.Value,
    axis: int,
    reduction: str | None = None,
) -> ir.Value:
    return ctx.op.ScatterElements(data, index, updates, axis=axis, reduction=reduction)


def _reset_targets(
    ctx: OpContext, data: ir.Value, index: ir.Value, like: ir.Value, value: float, dtype: str, axis: int
) -> ir.Value:
    """``data`` with every position ``index`` targets set to ``value`` (duplicates agree)."""
    return _scatter_elements(ctx, data, index, _full_like(ctx, like, value, dtype), axis)


@mapper("put_along_axis", min_opset=_put_along_axis_opset)
def put_along_axis(ctx: OpContext) -> None:
    """ScatterElements; ``include_self=False`` resets the targets to the reduction's identity
    first (for min/max: to one of the scattered values), ``mean`` divides by the count."""
    reduce = str(ctx.attr("reduce", "assign"))
    if reduce not in _REDUCTIONS:
        raise ctx.fail(f"put_along_axis reduce {reduce!r} is unknown")
    reduction = _REDUCTIONS[reduce][0]
    include_self = bool(ctx.attr("include_self", True))
    dtype = ctx.output_dtype("out")
    arr, index, values = ctx.input("arr"), ctx.input("indices"), ctx.input("values")
    axis = ctx.normalize_axis(int(ctx.attr("axis", 0)), ctx.input_rank("arr"))
    if reduction is None:
        ctx.set_output("out", _scatter_elements(ctx, arr, index, values, axis))
        return
    base = arr
    if not include_self:
        if reduction in ("min", "max"):
            base = _scatter_elements(ctx, arr, index, values, axis)
        else:
            base = _reset_targets(ctx, arr, index, values, 1 if reduction == "mul" else 0, dtype, axis)
    out = _scatter_elements(ctx, base, index, values, axis, reduction)
    if reduce == "mean":
        ones = _full_like(ctx, arr, 1, dtype)
        if not include_self:
            ones = _reset_targets(ctx, ones, index, values, 0, dtype, axis)
        count = _scatter_elements(ctx, ones, index, _full_like(ctx, values, 1, dtype), axis, "add")
        out = _mean_divide(ctx, out, count, dtype)
    ctx.set_output("out", out)


def _mean_divide(ctx: OpContext, total: ir.Value, count: ir.Value, dtype: str) -> ir.Value:
    """``total / count`` (count > 0); integer means floor in Paddle 3, truncate in Paddle 2."""
    if dtype in FLOAT_DTYPES or ctx.paddle2_semantics:
        return ctx.op.Div(total, count)
    return ctx.op.Div(ctx.op.Sub(total, ctx.op.Mod(total, count, fmod=0)), count)


def _scatter_opset(op: Op) -> int:
    return 11 if op.attrs.get("overwrite", True) else 16


@mapper("scatter", min_opset=_scatter_opset)
def scatter(ctx: OpContext) -> None:
    """Rows ``index`` of ``x`` replaced (overwrite) or zeroed and then summed (accumulate)."""
    x, updates = ctx.input("x"), ctx.input("updates")
    index = ctx.reshape(_int64_index(ctx, "index"), [-1, 1])
    if ctx.input_rank("index") == 0 and ctx.input_rank("updates") == ctx.input_rank("x") - 1:
        updates = ctx.unsqueeze(updates, [0])
    if bool(ctx.attr("overwrite", True)):
        ctx.set_output("out", ctx.op.ScatterND(x, index, updates))
        return
    zeroed = ctx.op.ScatterND(x, index, _full_like(ctx, updates, 0, ctx.output_dtype("out")))
    ctx.set_output("out", ctx.op.ScatterND(zeroed, index, updates, reduction="add"))


@mapper("scatter_nd_add", min_opset=16)
def scatter_nd_add(ctx: OpContext) -> None:
    index = _int64_index(ctx, "index")
    ctx.set_output("out", ctx.op.ScatterND(ctx.input("x"), index, ctx.input("updates"), reduction="add"))


# ---------------------------------------------------------------------- selection
@mapper("where", min_opset=9)
def where(ctx: OpContext) -> None:
    ctx.set_output("out", ctx.op.Where(ctx.input("condition"), ctx.input("x"), ctx.input("y")))


@mapper("nonzero", min_opset=9)
def nonzero(ctx: OpContext) -> None:
    """Paddle returns [N, rank] coordinates, ONNX NonZero [rank, N]."""
    ctx.set_output("out", ctx.op.Transpose(ctx.op.NonZero(ctx.input("condition")), perm=[1, 0]))


# ---------------------------------------------------------------------- sorting
def _topk_opset(op: Op) -> int:
    return 7 if op.attrs.get("largest", True) else 11


def _top_k(
    ctx: OpContext, x: ir.Value, k: int | ir.Value, axis: int, largest: bool, dtype: str
) -> tuple[ir.Value, ir.Value]:
    """ONNX TopK, always sorted; ``k`` is a Python int or a runtime int64 [1] tensor.

    Before opset 11 TopK takes only float data and no ``largest`` (mappers declare 11 for
    smallest-first); TopK-1 (below opset 10) takes ``k`` as an attribute."""
    if ctx.opset >= 11:
        k_v = k if isinstance(k, ir.Value) else ctx.const_i64([k])
        return ctx.op.TopK(x, k_v, axis=axis, largest=int(largest), sorted=1, _outputs=2)
    if dtype not in FLOAT_DTYPES:
        raise ctx.fail(f"ONNX TopK takes {dtype} data from opset 11", hint="pass --opset 11 or newer")
    if ctx.opset >= 10:
        k_v = k if isinstance(k, ir.Value) else ctx.const_i64([k])
        return ctx.op.TopK(x, k_v, axis=axis, _outputs=2)
    if isinstance(k, ir.Value):
        raise ctx.fail("a runtime k needs ONNX TopK-10", hint="pass --opset 10 or newer")
    return ctx.op.TopK(x, axis=axis, k=k, _outputs=2)


def _set_sorted(ctx: OpContext, outputs: tuple[ir.Value, ir.Value]) -> None:
    """Values, and indices in their declared dtype (int64; legacy top_k declares int32)."""
    values, indices = outputs
    ctx.set_output("out", values)
    if ctx.has_output("indices"):
        ctx.set_output("indices", ctx.cast(indices, ctx.output_dtype("indices"), "int64"))


@mapper("topk", min_opset=_topk_opset)
def topk(ctx: OpContext) -> None:
    """``sorted=False`` leaves Paddle's order unspecified; the sorted order is returned."""
    dtype = ctx.input_dtype("x")
    k = ctx.scalar("k", 1)
    if isinstance(k, ir.Value):
        k = ctx.reshape(ctx.cast(k, "int64", ctx.input_dtype("k")), [1])
    else:
        k = int(k)
    axis = ctx.normalize_axis(int(ctx.attr("axis", -1)), ctx.input_rank("x"))
    outputs = _top_k(ctx, ctx.input("x"), k, axis, bool(ctx.attr("largest", True)), dtype)
    _set_sorted(ctx, outputs)


@mapper("argsort", min_opset=11)
def argsort(ctx: OpContext) -> None:
    """A full TopK along the axis (stable: ties keep their order, as Paddle's stable sort)."""
    dtype = ctx.input_dtype("x")
    x = ctx.input("x")
    shape = ctx.input_shape("x")
    if not shape:
        ctx.set_output("out", x)
        ctx.set_output("indices", ctx.const(np.zeros((), dtype=np.int64)))
        return
    axis = ctx.normalize_axis(int(ctx.attr("axis", -1)), len(shape))
    k: int | ir.Value = shape[axis] if shape[axis] >= 0 else ctx.shape_of(x, axis, axis + 1)
    _set_sorted(ctx, _top_k(ctx, x, k, axis, bool(ctx.attr("descending", False)), dtype))


# ---------------------------------------------------------------------- cumulative
_CUMSUM_DTYPES = frozenset({"float32", "float64", "int32", "int64", "uint32", "uint64"})


@mapper("cumsum", min_opset=11)
def cumsum(ctx: OpContext) -> None:
    """CumSum; ``flatten`` sums over the flattened tensor (the axis is then ignored)."""
    dtype = ctx.input_dtype("x")
    if dtype not in _CUMSUM_DTYPES and not (dtype in ("float16", "bfloat16") and ctx.opset >= 14):
        raise ctx.fail(f"ONNX CumSum has no {dtype} form")
    x = ctx.input("x")
    if bool(ctx.attr("flatten", False)):
        x, axis = ctx.reshape(x, [-1]), ctx.const_i64(0)
    else:
        value = ctx.scalar("axis", -1)
        if isinstance(value, ir.Value):
            axis = ctx.reshape(ctx.cast(value, "int64", ctx.input_dtype("axis")), [])
        else:
            axis = ctx.const_i64(ctx.normalize_axis(int(value), max(ctx.input_rank("x"), 1)))
    exclusive, reverse = int(bool(ctx.attr("exclusive", False))), int(bool(ctx.attr("reverse", False)))
    ctx.set_output("out", ctx.op.CumSum(x, axis, exclusive=exclusive, reverse=reverse))
