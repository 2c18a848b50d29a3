"""Comparisons, logical and bitwise ops, isnan/isinf/isfinite.

ONNX lacks some of these for some types at older opsets (Equal on floats before 11,
LessOrEqual before 12, Less on ints before 9, bitwise ops before 18): the mappers emit exact
equivalents where one exists and refuse (with the opset to ask for) where none does.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext, onnx_dtype
from pd2onnx.convert.ops._elementwise_util import binary_inputs, float_equal, is_float, is_nan
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle import dtypes


def _finish(ctx: OpContext, out: ir.Value) -> None:
    """Set the (bool) result, cast when the program declares another output type."""
    ctx.set_output("out", ctx.cast(out, ctx.output_dtype(), "bool"))


# ---------------------------------------------------------------------------- comparisons
def _equal(ctx: OpContext, x: ir.Value, y: ir.Value, dtype: str) -> ir.Value:
    if is_float(dtype):
        return float_equal(ctx, x, y, dtype)
    if ctx.opset < 11 and dtype not in ("bool", "int32", "int64"):  # Equal-7 takes only these
        wide = "int64" if dtype in ("uint32", "uint64") else "int32"
        x, y = ctx.cast(x, wide, dtype), ctx.cast(y, wide, dtype)
    return ctx.op.Equal(x, y)


def _ordered(ctx: OpContext, kind: str, x: ir.Value, y: ir.Value, dtype: str) -> ir.Value:
    """less_than / less_equal / greater_than / greater_equal."""
    less = kind.startswith("less")
    if kind.endswith("_than"):
        return ctx.op.Less(x, y) if less else ctx.op.Greater(x, y)
    if ctx.opset >= 12:
        return ctx.op.LessOrEqual(x, y) if less else ctx.op.GreaterOrEqual(x, y)
    strict = ctx.op.Less(x, y) if less else ctx.op.Greater(x, y)
    return ctx.op.Or(strict, _equal(ctx, x, y, dtype))


@mapper("equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal", min_opset=9)
def compare(ctx: OpContext) -> None:
    """Comparisons; y takes x's type (Paddle 2.x casts it; 3.x inserts the cast itself)."""
    dtype = ctx.input_dtype("x")
    x, y = binary_inputs(ctx, dtype)
    kind = ctx.pd.type
    if kind in ("equal", "not_equal"):
        eq = _equal(ctx, x, y, dtype)
        _finish(ctx, eq if kind == "equal" else ctx.op.Not(eq))
        return
    if dtype == "bool":  # ONNX orderings take no bool: false < true as 0 < 1
        x, y, dtype = ctx.cast(x, "int32"), ctx.cast(y, "int32"), "int32"
    _finish(ctx, _ordered(ctx, kind, x, y, dtype))


# ---------------------------------------------------------------------------- logical
_LOGICAL = {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}


@mapper(*_LOGICAL)
def logical(ctx: OpContext) -> None:
    """Nonzero is true (non-bool inputs are cast to bool, as Paddle does)."""
    x, y = binary_inputs(ctx, "bool")
    _finish(ctx, ctx.op.__getattr__(_LOGICAL[ctx.pd.type])(x, y))


@mapper("logical_not")
def logical_not(ctx: OpContext) -> None:
    _finish(ctx, ctx.op.Not(ctx.cast(ctx.input("x"), "bool", ctx.input_dtype("x"))))


# ---------------------------------------------------------------------------- bitwise
_BITWISE = {
    "bitwise_and": ("BitwiseAnd", "And"),
    "bitwise_or": ("BitwiseOr", "Or"),
    "bitwise_xor": ("BitwiseXor", "Xor"),
}


@mapper(*_BITWISE)
def bitwise(ctx: OpContext) -> None:
    """Bool tensors use the logical ops (any opset); integers need opset 18."""
    dtype = ctx.output_dtype()
    x, y = binary_inputs(ctx, dtype)
    onnx_op, bool_op = _BITWISE[ctx.pd.type]
    if dtype == "bool":
        ctx.set_output("out", ctx.op.__getattr__(bool_op)(x, y))
    else:
        ctx.require_opset(18, f"{ctx.pd.type} on {dtype} tensors: ONNX has bitwise ops from opset 18")
        ctx.set_output("out", ctx.op.__getattr__(onnx_op)(x, y))


@mapper("bitwise_not")
def bitwise_not(ctx: OpContext) -> None:
    """Bool: Not. Integers: BitwiseNot (opset 18), else the exact -1 - x (signed) or
    max - x (unsigned), which never overflow."""
    dtype = ctx.output_dtype()
    x = ctx.cast(ctx.input("x"), dtype, ctx.input_dtype("x"))
    if dtype == "bool":
        ctx.set_output("out", ctx.op.Not(x))
    elif is_float(dtype):
        raise ctx.fail(f"bitwise_not on {dtype} tensors has no Paddle kernel")
    elif ctx.opset >= 18:
        ctx.set_output("out", ctx.op.BitwiseNot(x))
    else:
        info = np.iinfo(dtypes.to_numpy(dtype))
        all_ones = -1 if info.min < 0 else info.max
        # Sub takes 8/16-bit ints from opset 14: compute those in int32 (the result fits)
        wide = "int32" if info.bits < 32 and ctx.opset < 14 else dtype
        out = ctx.op.Sub(ctx.const(all_ones, wide), ctx.cast(x, wide, dtype))
        ctx.set_output("out", ctx.cast(out, dtype, wide))


# ---------------------------------------------------------------------------- isnan / isinf / isfinite
def _elementwise_class(ctx: OpContext, kind: str, x: ir.Value, dtype: str) -> ir.Value:
    """isnan: IsNaN; isinf: IsInf (opset 10) or |x| > max; isfinite: |x| < inf.
    Integer tensors are never NaN or infinite."""
    if not is_float(dtype):
        as_bool = ctx.cast(x, "bool", dtype)
        true = ctx.op.Equal(as_bool, as_bool)
        return true if kind == "isfinite" else ctx.op.Not(true)
    if kind == "isnan":
        return is_nan(ctx, x, dtype)
    if kind == "isinf":
        if ctx.opset >= 20 or (ctx.opset >= 10 and dtype in ("float32", "float64")):
            return ctx.op.IsInf(x)
        if ctx.opset >= 10:  # IsInf takes 16-bit floats from opset 20: widening keeps infinities
            return ctx.op.IsInf(ctx.cast(x, "float32", dtype))
        return ctx.op.Greater(ctx.op.Abs(x), ctx.const(np.finfo(dtypes.to_numpy(dtype)).max, dtype))
    return ctx.op.Less(ctx.op.Abs(x), ctx.const(float("inf"), dtype))


@mapper("isnan", "isinf", "isfinite")
def float_class(ctx: OpContext) -> None:
    dtype = ctx.input_dtype("x")
    _finish(ctx, _elementwise_class(ctx, ctx.pd.type, ctx.input("x"), dtype))


@mapper("has_nan", "has_inf")
def has_nan_inf(ctx: OpContext) -> None:
    """Legacy isnan/isinf: one flag of shape [1], whether any element is NaN / infinite."""
    dtype = ctx.input_dtype("x")
    flags = _elementwise_class(ctx, "isnan" if ctx.pd.type == "has_nan" else "isinf", ctx.input("x"), dtype)
    as_int = ctx.op.Cast(flags, to=onnx_dtype("int32"))
    any_flag = ctx.reshape(ctx.reduce("ReduceMax", as_int, None, False), [1])
    _finish(ctx, ctx.op.Cast(any_flag, to=onnx_dtype("bool")))
