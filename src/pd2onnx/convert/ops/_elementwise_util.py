"""Helpers shared by the elementwise and logic mappers.

- legacy ``axis`` broadcasting of binary ops (Y aligned to X starting at ``axis``);
- which Paddle's semantics a file has (a few kernels changed between 2.x and 3.x);
- comparisons of floats that stay exact at opsets where ONNX lacks them for floats.
"""

from __future__ import annotations

import onnx_ir as ir

from pd2onnx.convert.context import FLOAT_DTYPES, OpContext


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES


def _broadcast_axis(axis: int, rank_big: int, rank_small: int) -> int:
    """Paddle's start axis of the smaller operand (phi GetBroadcastDimsArrays)."""
    if axis < 0:
        return abs(rank_big - rank_small) + axis + 1
    return axis


def binary_inputs(ctx: OpContext, dtype: str | None = None) -> tuple[ir.Value, ir.Value]:
    """x and y of a binary op, broadcast the Paddle way, cast to ``dtype`` when given.

    Legacy ops carry ``axis``: when the ranks differ and ``axis`` is not -1, the smaller
    operand lines up with the larger one from ``axis`` on, so it gets trailing unit dims
    before ONNX's numpy-style broadcasting applies.
    """
    x, y = ctx.input("x"), ctx.input("y")
    axis = int(ctx.attr("axis", -1))
    if axis != -1:
        rx, ry = ctx.input_rank("x"), ctx.input_rank("y")
        if rx != ry:
            big, small = max(rx, ry), min(rx, ry)
            start = _broadcast_axis(axis, big, small)
            trailing = big - start - small
            if start < 0 or trailing < 0:
                raise ctx.fail(f"axis {axis} does not fit operand ranks {rx} and {ry}")
            if trailing:
                axes = list(range(small, small + trailing))
                if rx < ry:
                    x = ctx.unsqueeze(x, axes)
                else:
                    y = ctx.unsqueeze(y, axes)
    if dtype is not None:
        x = ctx.cast(x, dtype, ctx.input_dtype("x"))
        y = ctx.cast(y, dtype, ctx.input_dtype("y"))
    return x, y


def is_nan(ctx: OpContext, x: ir.Value, dtype: str) -> ir.Value:
    """IsNaN, or at opsets before 9 ``not (x < inf or x > -inf)`` (true only for NaN)."""
    if ctx.opset >= 9:
        return ctx.op.IsNaN(x)
    inf, minus_inf = ctx.const(float("inf"), dtype), ctx.const(float("-inf"), dtype)
    return ctx.op.Not(ctx.op.Or(ctx.op.Less(x, inf), ctx.op.Greater(x, minus_inf)))


def float_equal(ctx: OpContext, a: ir.Value, b: ir.Value, dtype: str) -> ir.Value:
    """a == b for floats (Equal takes floats only from opset 11; NaN is never equal)."""
    if ctx.opset >= 11:
        return ctx.op.Equal(a, b)
    ordered = ctx.op.Or(ctx.op.Less(a, b), ctx.op.Greater(a, b))
    return ctx.op.Not(ctx.op.Or(ordered, ctx.op.Or(is_nan(ctx, a, dtype), is_nan(ctx, b, dtype))))


def is_zero(ctx: OpContext, x: ir.Value, dtype: str) -> ir.Value:
    """x == 0 (any dtype). Below opset 11 a float NaN counts as zero: callers only use
    this where the outcome for NaN is NaN either way."""
    zero = ctx.const(0, dtype)
    if not is_float(dtype) or ctx.opset >= 11:
        return ctx.op.Equal(x, zero)
    return ctx.op.Not(ctx.op.Or(ctx.op.Less(x, zero), ctx.op.Greater(x, zero)))
