"""Reductions: sum/mean/max/min/prod/all/any (+ legacy mean_all), logsumexp, p_norm,
frobenius_norm, argmax/argmin.

Axes come as a static list, a constant tensor or a runtime tensor (PIR operand, legacy
AxisTensor, or a Paddle 2.x variable attribute naming a value); an empty list or
``reduce_all`` means every axis. Inputs are cast to the output dtype first, as Paddle does
(``sum`` of int32/bool gives int64, ``dtype`` may widen). Reducing a 0-D tensor is the
identity. ``logsumexp`` and ``p_norm`` follow Paddle's kernels exactly (no inf guard in
logsumexp; p_norm's epsilon only matters for the gradient).
"""

from __future__ import annotations

import math

import onnx_ir as ir

from pd2onnx.convert.context import OpContext, onnx_dtype
from pd2onnx.convert.registry import mapper

Axes = list[int] | ir.Value | None  # None: every axis

_REDUCE = {
    "sum": "ReduceSum",
    "mean": "ReduceMean",
    "max": "ReduceMax",
    "min": "ReduceMin",
    "prod": "ReduceProd",
}
_LOGICAL = {"all": "ReduceMin", "any": "ReduceMax"}
_NARROW_INTS = frozenset({"int8", "int16", "uint8", "uint16"})


# ---------------------------------------------------------------------------- arguments
def _reduce_axes(ctx: OpContext, rank: int, slot: str = "axis") -> Axes:
    """The axes to reduce, normalized and sorted; None for all of them."""
    if rank == 0 or ctx.attr("reduce_all", False):
        return None
    axes = ctx.int_array(slot)
    if isinstance(axes, ir.Value):
        return axes
    if not axes:
        return None
    norm = sorted({ctx.normalize_axis(a, rank) for a in axes})
    return None if len(norm) == rank else norm


def _keepdim(ctx: OpContext, name: str = "keepdim") -> bool:
    return bool(ctx.attr(name, False))


# ---------------------------------------------------------------------------- emit helpers
def reduce(ctx: OpContext, op_type: str, x: ir.Value, axes: Axes, keepdim: bool, rank: int) -> ir.Value:
    """Reduce* over ``axes``; a 0-D input is returned unchanged (as Paddle does)."""
    if rank == 0:
        return ctx.op.Identity(x)
    return ctx.reduce(op_type, x, axes, keepdim)


def to_declared_rank(ctx: OpContext, value: ir.Value, rank: int) -> ir.Value:
    """Reshape a 0-D/[1] result to the shape the program declares when the ranks differ
    (older Paddle gave [1] where newer gives 0-D)."""
    shape = ctx.output_shape("out")
    if shape is None or len(shape) == rank or any(d < 0 for d in shape):
        return value
    return ctx.reshape(value, list(shape))


def _out_rank(rank: int, axes: Axes, keepdim: bool) -> int | None:
    if keepdim:
        return rank
    if axes is None:
        return 0
    return None if isinstance(axes, ir.Value) else rank - len(axes)


def _finish(ctx: OpContext, value: ir.Value, rank: int, axes: Axes, keepdim: bool) -> None:
    out_rank = _out_rank(rank, axes, keepdim)
    ctx.set_output("out", value if out_rank is None else to_declared_rank(ctx, value, out_rank))


def _logical_reduce(
    ctx: OpContext, op_type: str, x: ir.Value, axes: Axes, keepdim: bool, rank: int
) -> ir.Value:
    """ReduceMin/ReduceMax of a bool tensor (directly from opset 20, via int32 before)."""
    if ctx.opset >= 20:
        return reduce(ctx, op_type, x, axes, keepdim, rank)
    as_int = ctx.op.Cast(x, to=ir.DataType.INT32)
    return ctx.op.Cast(reduce(ctx, op_type, as_int, axes, keepdim, rank), to=ir.DataType.BOOL)


# ---------------------------------------------------------------------------- mappers
@mapper(*_REDUCE)
def reduce_basic(ctx: OpContext) -> None:
    """sum/mean/max/min/prod in the output dtype."""
    dtype = ctx.output_dtype()
    rank = ctx.input_rank("x")
    x = ctx.cast(ctx.input("x"), dtype, ctx.input_dtype("x"))
    axes, keepdim = _reduce_axes(ctx, rank), _keepdim(ctx)
    op_type = _REDUCE[ctx.pd.type]
    if dtype == "bool" and op_type in ("ReduceMax", "ReduceMin", "ReduceMean"):
        # Paddle's bool mean (Eigen: sum is or, the count is true) is any(x)
        out = _logical_reduce(ctx, "ReduceMax" if op_type == "ReduceMean" else op_type, x, axes, keepdim, rank)
    elif dtype in _NARROW_INTS and op_type in ("ReduceSum", "ReduceProd"):
        # ONNX ReduceSum/ReduceProd take no 8/16-bit ints: in int32, cast back (wraps as Paddle)
        out = reduce(ctx, op_type, ctx.cast(x, "int32", dtype), axes, keepdim, rank)
        out = ctx.cast(out, dtype, "int32")
    else:
        out = reduce(ctx, op_type, x, axes, keepdim, rank)
    _finish(ctx, out, rank, axes, keepdim)


@mapper("mean_all")
def mean_all(ctx: OpContext) -> None:
    """Legacy ``mean``: the mean of every element."""
    rank = ctx.input_rank("x")
    out = reduce(ctx, "ReduceMean", ctx.input("x"), None, False, rank)
    ctx.set_output("out", to_declared_rank(ctx, out, 0))


@mapper(*_LOGICAL)
def all_any(ctx: OpContext) -> None:
    """all/any: nonzero is true; min/max of the booleans. The result is bool whatever x's
    dtype, as Paddle's kernel writes it (Paddle declares it in x's dtype in both formats)."""
    ctx.correct_declared("out", dtype="bool")
    rank = ctx.input_rank("x")
    x = ctx.cast(ctx.input("x"), "bool", ctx.input_dtype("x"))
    axes, keepdim = _reduce_axes(ctx, rank), _keepdim(ctx)
    _finish(ctx, _logical_reduce(ctx, _LOGICAL[ctx.pd.type], x, axes, keepdim, rank), rank, axes, keepdim)


@mapper("logsumexp")
def logsumexp(ctx: OpContext) -> None:
    """log(sum(exp(x - max))) + max, as Paddle's kernel (an infinite max gives NaN there too)."""
    x = ctx.input("x")
    rank = ctx.input_rank("x")
    axes, keepdim = _reduce_axes(ctx, rank), _keepdim(ctx)
    m_keep = reduce(ctx, "ReduceMax", x, axes, True, rank)
    s = reduce(ctx, "ReduceSum", ctx.op.Exp(ctx.op.Sub(x, m_keep)), axes, keepdim, rank)
    m = m_keep if keepdim else reduce(ctx, "ReduceMax", x, axes, False, rank)
    _finish(ctx, ctx.op.Add(ctx.op.Log(s), m), rank, axes, keepdim)


def _nonzero(ctx: OpContext, x: ir.Value, dtype: str) -> ir.Value:
    """x != 0 as bool (NaN counts as nonzero)."""
    zero = ctx.const(0, dtype)
    if ctx.opset >= 11:
        return ctx.op.Not(ctx.op.Equal(x, zero))
    return ctx.op.Or(ctx.op.Or(ctx.op.Less(x, zero), ctx.op.Greater(x, zero)), ctx.op.IsNaN(x))


@mapper("p_norm", min_opset=lambda op: 9 if op.attrs.get("porder") == 0 else 7)
def p_norm(ctx: OpContext) -> None:
    """Vector p-norm along ``axis`` (all elements with ``asvector``): p = 0 counts nonzeros,
    +-inf take max/min of |x|, else (sum |x|^p)^(1/p)."""
    x, dtype = ctx.input("x"), ctx.output_dtype()
    rank = ctx.input_rank("x")
    porder = float(ctx.attr("porder", 2.0))
    keepdim = _keepdim(ctx)
    axes = (
        None
        if ctx.attr("asvector", False) or rank == 0
        else [ctx.normalize_axis(int(ctx.attr("axis", -1)), rank)]
    )
    if porder == 0:
        count = ctx.op.Cast(_nonzero(ctx, x, dtype), to=onnx_dtype(dtype))
        out = reduce(ctx, "ReduceSum", count, axes, keepdim, rank)
    elif math.isinf(porder):
        out = reduce(ctx, "ReduceMax" if porder > 0 else "ReduceMin", ctx.op.Abs(x), axes, keepdim, rank)
    else:
        powered = ctx.op.Pow(ctx.op.Abs(x), ctx.const(porder, dtype))
        s = reduce(ctx, "ReduceSum", powered, axes, keepdim, rank)
        out = ctx.op.Pow(s, ctx.const(1.0 / porder, dtype))
    _finish(ctx, out, rank, axes, keepdim)


@mapper("frobenius_norm")
def frobenius_norm(ctx: OpContext) -> None:
    """sqrt(sum(x * x)) over the axes."""
    x = ctx.input("x")
    rank = ctx.input_rank("x")
    axes, keepdim = _reduce_axes(ctx, rank), _keepdim(ctx, "keep_dim")
    out = ctx.op.Sqrt(reduce(ctx, "ReduceSum", ctx.op.Mul(x, x), axes, keepdim, rank))
    _finish(ctx, out, rank, axes, keepdim)


@mapper("argmax", "argmin")
def arg_max_min(ctx: OpContext) -> None:
    """ArgMax/ArgMin (first index on ties, as Paddle); ``flatten`` reduces the flattened
    tensor (keepdims then gives all-ones dims); the result is cast to int32 on request."""
    x, rank = ctx.input("x"), ctx.input_rank("x")
    onnx_op = ctx.op.ArgMax if ctx.pd.type == "argmax" else ctx.op.ArgMin
    keepdims = bool(ctx.attr("keepdims", False))
    if ctx.attr("flatten", False) or rank == 0:
        out = onnx_op(ctx.reshape(x, [-1]), axis=0, keepdims=0)
        if keepdims and rank:
            out = ctx.reshape(out, [1] * rank)
    else:
        axis = ctx.scalar("axis", -1)
        if isinstance(axis, ir.Value):
            raise ctx.fail("the axis is a runtime tensor; ONNX ArgMax/ArgMin need a constant axis")
        out = onnx_op(x, axis=ctx.normalize_axis(int(axis), rank), keepdims=int(keepdims))
    ctx.set_output("out", ctx.cast(out, ctx.output_dtype(), "int64"))
