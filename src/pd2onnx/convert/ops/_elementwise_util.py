"""Helpers shared by the elementwise and logic mappers.

- legacy ``axis`` broadcasting of binary ops (Y aligned to X starting at ``axis``);
- which Paddle's semantics a file has (a few kernels changed between 2.x and 3.x);
- comparisons of floats that stay exact at opsets where ONNX lacks them for floats;
- C's atan2 (the ``atan2`` op and the angle of complex values).
"""

from __future__ import annotations

import math

import numpy as np
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


def _negative_or_minus_zero(ctx: OpContext, v: ir.Value, dtype: str) -> ir.Value:
    """v < 0 or v is -0.0 (1 / -0.0 = -inf)."""
    zero = ctx.const(0.0, dtype)
    return ctx.op.Or(ctx.op.Less(v, zero), ctx.op.Less(ctx.op.Reciprocal(v), zero))


def atan2_values(ctx: OpContext, x1: ir.Value, x2: ir.Value) -> ir.Value:
    """C's atan2(x1, x2) of float64 values: atan(x1 / x2), plus +-pi when x2 < 0 (or -0).

    Signed zeros and infinities follow C: both zero gives +-0 or +-pi, both infinite gives
    +-pi/4 or +-3pi/4. The ratio and the quadrant shift are computed in float64; Atan itself
    in float32, the only type ONNX Runtime implements it for (so a float64 result carries
    float32 precision). Needs opset 9 (Sign)."""
    w = "float64"
    big, zero = ctx.const(np.finfo(np.float64).max, w), ctx.const(0.0, w)
    both_inf = ctx.op.And(ctx.op.Greater(ctx.op.Abs(x1), big), ctx.op.Greater(ctx.op.Abs(x2), big))
    ratio = ctx.op.Where(both_inf, ctx.op.Div(ctx.op.Sign(x1), ctx.op.Sign(x2)), ctx.op.Div(x1, x2))
    angle = ctx.cast(ctx.op.Atan(ctx.cast(ratio, "float32", w)), w, "float32")
    both_zero = ctx.op.And(float_equal(ctx, x1, zero, w), float_equal(ctx, x2, zero, w))
    q = ctx.op.Where(both_zero, x1, angle)
    pi = ctx.op.Where(_negative_or_minus_zero(ctx, x1, w), ctx.const(-math.pi, w), ctx.const(math.pi, w))
    return ctx.op.Where(_negative_or_minus_zero(ctx, x2, w), ctx.op.Add(q, pi), q)
