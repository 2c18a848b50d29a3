"""Elementwise math: arithmetic, floor_divide/remainder, max/min, pow, scale, clip, cast,
add_n and the unary math functions.

Every mapper reproduces Paddle's kernel exactly where ONNX differs: Python-style floor
division and remainder, Paddle's rounding (half away from zero before 3.0, half to even
since), integer pow truncating its exponent, scale/clip truncating float constants for
integer tensors, and legacy ``axis`` broadcasting.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext, onnx_dtype
from pd2onnx.convert.ops._elementwise_util import (
    atan2_values,
    binary_inputs,
    float_equal,
    is_float,
    is_zero,
)
from pd2onnx.convert.ops.math import complex_abs
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle import dtypes

# Integer types ONNX arithmetic (Add, Mul, Abs, ...) accepts only from opset 14 on.
_SMALL_INTS = frozenset({"int8", "uint8", "int16", "uint16"})
_WIDE_INTS = frozenset({"int64", "uint64"})


# ---------------------------------------------------------------------------- helpers
def _const_scalar(ctx: OpContext, value: float, dtype: str) -> ir.Value:
    """A 0-D constant of ``dtype`` converted as Paddle's kernels do (``static_cast<T>``):
    integers truncate (and saturate, as the out-of-range defaults of clip need)."""
    if is_float(dtype) or dtype == "bool":
        return ctx.const(value, dtype)
    if math.isnan(value):
        raise ctx.fail(f"NaN cannot be a bound or factor for a {dtype} tensor")
    info = np.iinfo(dtypes.to_numpy(dtype))
    return ctx.const(int(min(max(value, info.min), info.max)), dtype)


def _cast_to(ctx: OpContext, value: ir.Value, dtype: str) -> ir.Value:
    """Cast a runtime value to ``dtype`` unless it already has it."""
    if value.dtype == onnx_dtype(dtype):
        return value
    return ctx.op.Cast(value, to=onnx_dtype(dtype))


def _scalar_value(ctx: OpContext, value: float | ir.Value, dtype: str) -> ir.Value:
    """A Scalar argument (python number or runtime one-element value) as 0-D ``dtype``."""
    if isinstance(value, ir.Value):
        return ctx.reshape(_cast_to(ctx, value, dtype), [])
    return _const_scalar(ctx, value, dtype)


def _float32(value: float | ir.Value) -> float | ir.Value:
    """A float attribute's value as Paddle holds it (32-bit), runtime values unchanged."""
    return value if isinstance(value, ir.Value) else float(np.float32(value))


def _check_arith_dtype(ctx: OpContext, dtype: str) -> None:
    if dtype in _SMALL_INTS and ctx.opset < 14:
        ctx.require_opset(14, f"ONNX arithmetic takes {dtype} from opset 14")


def _sign(ctx: OpContext, x: ir.Value, dtype: str) -> ir.Value:
    """Sign(x); before opset 9 as (x > 0) - (x < 0) (NaN gives 0, harmless where used)."""
    if ctx.opset >= 9:
        return ctx.op.Sign(x)
    zero = ctx.const(0, dtype)
    to = onnx_dtype(dtype)
    return ctx.op.Sub(ctx.op.Cast(ctx.op.Greater(x, zero), to=to), ctx.op.Cast(ctx.op.Less(x, zero), to=to))


# ---------------------------------------------------------------------------- binary
_ARITH = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div"}
_BOOL_ARITH = {"add": "Or", "multiply": "And"}  # Paddle 3.x allows these on bool


@mapper(*_ARITH)
def arithmetic(ctx: OpContext) -> None:
    """add/subtract/multiply/divide (integer divide truncates, as ONNX Div does)."""
    dtype = ctx.output_dtype()
    x, y = binary_inputs(ctx, dtype)
    if dtype == "bool":
        if ctx.pd.type not in _BOOL_ARITH:
            raise ctx.fail(f"{ctx.pd.type} on bool tensors has no Paddle kernel")
        ctx.set_output("out", ctx.op.__getattr__(_BOOL_ARITH[ctx.pd.type])(x, y))
        return
    _check_arith_dtype(ctx, dtype)
    ctx.set_output("out", ctx.op.__getattr__(_ARITH[ctx.pd.type])(x, y))


def _native_max_min(ctx: OpContext, dtype: str) -> bool:
    """Whether ONNX Max/Min/Clip serve ``dtype`` exactly at this opset.

    Not for 64-bit integers: ONNX Runtime (1.31) gets them wrong for some values (e.g.
    Min(3, 2**31) = 2**31), and the Where form below is exact everywhere."""
    if dtype in _WIDE_INTS:
        return False
    return ctx.opset >= 12 or (is_float(dtype) and ctx.opset >= 8)


def _max_or_min(ctx: OpContext, x: ir.Value, y: ir.Value, dtype: str, is_max: bool) -> ir.Value:
    """Max/Min; the exact ``x > y ? x : y`` form where ONNX lacks the op (ints before
    opset 12), for 64-bit ints, and for Paddle 2.x files (its kernel: NaN only from y)."""
    if _native_max_min(ctx, dtype) and not (is_float(dtype) and ctx.paddle2_semantics):
        return ctx.op.Max(x, y) if is_max else ctx.op.Min(x, y)
    pick_x = ctx.op.Greater(x, y) if is_max else ctx.op.Less(x, y)
    return ctx.op.Where(pick_x, x, y)


@mapper("maximum", "minimum", min_opset=9)
def maximum_minimum(ctx: OpContext) -> None:
    dtype = ctx.output_dtype()
    x, y = binary_inputs(ctx, dtype)
    ctx.set_output("out", _max_or_min(ctx, x, y, dtype, ctx.pd.type == "maximum"))


def _float_mod(ctx: OpContext, x: ir.Value, y: ir.Value, dtype: str) -> tuple[ir.Value, ir.Value]:
    """(fmod(x, y), whether Paddle/Python move it to the divisor's sign)."""
    m = ctx.op.Mod(x, y, fmod=1)
    zero = ctx.const(0, dtype)
    signs_differ = ctx.op.Xor(ctx.op.Less(m, zero), ctx.op.Less(y, zero))
    return m, ctx.op.And(ctx.op.Not(is_zero(ctx, m, dtype)), signs_differ)


@mapper("remainder", min_opset=10)
def remainder(ctx: OpContext) -> None:
    """Remainder with the divisor's sign (Python %): integer Mod, or fmod then + y."""
    dtype = ctx.output_dtype()
    x, y = binary_inputs(ctx, dtype)
    _check_arith_dtype(ctx, dtype)
    if not is_float(dtype):
        ctx.set_output("out", ctx.op.Mod(x, y, fmod=0))
        return
    m, adjust = _float_mod(ctx, x, y, dtype)
    ctx.set_output("out", ctx.op.Where(adjust, ctx.op.Add(m, y), m))


@mapper("floor_divide", min_opset=10)
def floor_divide(ctx: OpContext) -> None:
    """Python floor division. Floats follow numpy's divmod exactly (Paddle matches it):
    div = (x - fmod(x, y)) / y, minus one when fmod is moved to y's sign, then floored and
    corrected when the floor is more than 0.5 away; y == 0 gives x / y."""
    dtype = ctx.output_dtype()
    x, y = binary_inputs(ctx, dtype)
    _check_arith_dtype(ctx, dtype)
    if not is_float(dtype):
        ctx.set_output("out", ctx.op.Div(ctx.op.Sub(x, ctx.op.Mod(x, y, fmod=0)), y))
        return
    one, half = ctx.const(1, dtype), ctx.const(0.5, dtype)
    m, adjust = _float_mod(ctx, x, y, dtype)
    div = ctx.op.Div(ctx.op.Sub(x, m), y)
    div = ctx.op.Where(adjust, ctx.op.Sub(div, one), div)
    floor = ctx.op.Floor(div)
    floor = ctx.op.Where(ctx.op.Greater(ctx.op.Sub(div, floor), half), ctx.op.Add(floor, one), floor)
    ctx.set_output("out", ctx.op.Where(is_zero(ctx, y, dtype), ctx.op.Div(x, y), floor))


# ---------------------------------------------------------------------------- pow
def _int_power(ctx: OpContext, x: ir.Value, k: int, dtype: str) -> ir.Value:
    """x ** k for integer x and constant k >= 0 by squaring (exact, no Pow needed)."""
    if k == 0:
        return ctx.op.Add(ctx.op.Mul(x, ctx.const(0, dtype)), ctx.const(1, dtype))
    result, base = None, x
    while k:
        if k & 1:
            result = base if result is None else ctx.op.Mul(result, base)
        k >>= 1
        if k:
            base = ctx.op.Mul(base, base)
    return result


def _power(ctx: OpContext, x: ir.Value, exponent: float | ir.Value, dtype: str) -> ir.Value:
    """x ** exponent the Paddle way: for integer x the exponent is cast to x's type first.

    A runtime exponent keeps its shape (elementwise_pow broadcasts it)."""
    if isinstance(exponent, ir.Value):
        e = _cast_to(ctx, exponent, dtype)
        if is_float(dtype) or ctx.opset >= 12:
            _check_arith_dtype(ctx, dtype)
            return ctx.op.Pow(x, e)
        if dtype == "int32":  # every int32 power is exact in double
            f64 = onnx_dtype("float64")
            return ctx.op.Cast(
                ctx.op.Pow(ctx.op.Cast(x, to=f64), ctx.op.Cast(e, to=f64)), to=onnx_dtype(dtype)
            )
        ctx.require_opset(12, f"pow of {dtype} by a runtime exponent: integer Pow from opset 12")
    if is_float(dtype):
        return ctx.op.Pow(x, _const_scalar(ctx, exponent, dtype))
    _check_arith_dtype(ctx, dtype)
    k = math.trunc(exponent)
    if ctx.opset >= 12:
        return ctx.op.Pow(x, _const_scalar(ctx, k, dtype))
    if k < 0:
        ctx.require_opset(12, "integer pow with a negative exponent: integer Pow from opset 12")
    return _int_power(ctx, x, k, dtype)


@mapper("pow")
def pow_(ctx: OpContext) -> None:
    """pow(x, y: Scalar): attribute y (PIR), legacy attribute factor or FactorTensor;
    the kernel holds the factor as a 32-bit float."""
    dtype = ctx.output_dtype()
    x = ctx.cast(ctx.input("x"), dtype, ctx.input_dtype("x"))
    ctx.set_output("out", _power(ctx, x, _float32(ctx.scalar("y", 1.0)), dtype))


@mapper("elementwise_pow")
def elementwise_pow(ctx: OpContext) -> None:
    """x ** y for tensors; a constant one-element y that does not change the output shape
    is used as a scalar (lets integer powers avoid Pow below opset 12)."""
    dtype = ctx.output_dtype()
    x, y = binary_inputs(ctx, dtype)
    c = ctx.const_value("y")
    if c is not None and c.size == 1 and c.ndim <= ctx.input_rank("x"):
        ctx.set_output("out", _power(ctx, x, np.asarray(c).reshape(-1)[0].item(), dtype))
        return
    ctx.set_output("out", _power(ctx, x, y, dtype))


# ---------------------------------------------------------------------------- scale, clip, cast, add_n
@mapper("scale")
def scale(ctx: OpContext) -> None:
    """out = scale * x + bias (bias_after_scale) or scale * (x + bias).

    scale and bias are 32-bit floats cast to x's type (integer tensors truncate them); the
    scale may be a runtime tensor (PIR operand or legacy ScaleTensor). The result has x's
    type, as Paddle's kernel writes it, whatever the program declares for it (Paddle 1.x's
    ``save_inference_model`` declared the ``scale`` it appends float32 also after an int64
    result such as ``crf_decoding``'s path)."""
    dtype = ctx.input_dtype("x")
    x = ctx.input("x")
    s = _float32(ctx.scalar("scale", 1.0))
    bias = _float32(float(ctx.attr("bias", 0.0)))
    if dtype == "bool":
        _scale_bool(ctx, x, s, bias)
        return
    if not is_float(dtype):
        for what, v in (("bias", bias), ("scale", s)):
            if not isinstance(v, ir.Value) and not math.isfinite(v):
                raise ctx.fail(f"{what} {v} on an integer tensor ({dtype})")
        bias = math.trunc(bias)
    runtime = isinstance(s, ir.Value)
    s_value = _scalar_value(ctx, s, dtype) if runtime or not _is_unit(s, dtype) else None
    if s_value is not None or bias != 0:
        _check_arith_dtype(ctx, dtype)
    out = x
    if not ctx.attr("bias_after_scale", True) and bias != 0:
        out = ctx.op.Add(out, _const_scalar(ctx, bias, dtype))
    if s_value is not None:
        out = ctx.op.Mul(out, s_value)
    if ctx.attr("bias_after_scale", True) and bias != 0:
        out = ctx.op.Add(out, _const_scalar(ctx, bias, dtype))
    ctx.set_output("out", out)


def _scale_bool(ctx: OpContext, x: ir.Value, s: float | ir.Value, bias: float) -> None:
    """Paddle's bool scale kernel (Eigen on bool): scale and bias become bools (nonzero is
    true), ``*`` is and, ``+`` is or: ``(x and s) or b`` (bias_after_scale), else
    ``(x or b) and s`` (measured on Paddle 2.6 and 3.3)."""
    s_value = ctx.reshape(ctx.cast(s, "bool"), []) if isinstance(s, ir.Value) else ctx.const(bool(s), "bool")
    b_value = ctx.const(bool(bias), "bool")
    if ctx.attr("bias_after_scale", True):
        out = ctx.op.Or(ctx.op.And(x, s_value), b_value)
    else:
        out = ctx.op.And(ctx.op.Or(x, b_value), s_value)
    ctx.set_output("out", out)


def _is_unit(s: float, dtype: str) -> bool:
    """Whether multiplying by constant ``s`` is the identity for ``dtype``."""
    return (s if is_float(dtype) else math.trunc(s)) == 1


@mapper("clip", min_opset=9)
def clip(ctx: OpContext) -> None:
    """x < min ? min : (x > max ? max : x); bounds are attributes, constants or tensors.

    Integer tensors truncate (and saturate) the float bounds, as the kernel's cast does."""
    dtype = ctx.output_dtype()
    x = ctx.input("x")
    bounds = [ctx.scalar("min"), ctx.scalar("max")]
    if any(b is None for b in bounds):
        raise ctx.fail("clip needs both min and max")
    runtime = any(isinstance(b, ir.Value) for b in bounds)
    if is_float(dtype) and not runtime and (ctx.opset < 11 or dtype == "float64" and ctx.opset < 12):
        # ctx.clip: ONNX Runtime has no double Clip before opset 12 (Max/Min instead)
        ctx.set_output("out", ctx.clip(x, float(bounds[0]), float(bounds[1]), dtype))
        return
    lo, hi = (_scalar_value(ctx, b, dtype) for b in bounds)
    if ctx.opset >= 11 and _native_max_min(ctx, dtype) and (dtype != "float64" or ctx.opset >= 12):
        ctx.set_output("out", ctx.op.Clip(x, lo, hi))
    elif is_float(dtype):  # runtime float bounds at opset 9-10 (Max/Min keep NaN like Paddle)
        ctx.set_output("out", ctx.op.Min(ctx.op.Max(x, lo), hi))
    else:
        low = ctx.op.Where(ctx.op.Less(x, lo), lo, x)
        ctx.set_output("out", ctx.op.Where(ctx.op.Greater(low, hi), hi, low))


@mapper("cast")
def cast(ctx: OpContext) -> None:
    """Cast (float to int truncates, nonzero to bool is true: as ONNX Cast)."""
    dtype = ctx.output_dtype()
    x = ctx.input("x")
    ctx.set_output("out", ctx.cast(x, dtype, ctx.input_dtype("x")) if dtype != ctx.input_dtype("x") else x)


@mapper("add_n")
def add_n(ctx: OpContext) -> None:
    """Sum of equally shaped tensors: ONNX Sum for floats, an Add chain for other types."""
    dtype = ctx.output_dtype()
    values = [ctx.cast(v, dtype, ctx.input_dtype("inputs", i)) for i, v in enumerate(ctx.inputs("inputs"))]
    if not values:
        raise ctx.fail("add_n without inputs")
    if len(values) == 1:
        ctx.set_output("out", ctx.op.Identity(values[0]))
        return
    if is_float(dtype):
        ctx.set_output("out", ctx.op.Sum(*values))
        return
    _check_arith_dtype(ctx, dtype)
    out = values[0]
    for v in values[1:]:
        out = ctx.op.Add(out, v)
    ctx.set_output("out", out)


# ---------------------------------------------------------------------------- unary
# name -> (ONNX op, lowest opset); these take float tensors (ints are cast to the output
# type first, as Paddle 3.x promotes them).
_FLOAT_UNARY = {
    "exp": ("Exp", 7),
    "log": ("Log", 7),
    "sqrt": ("Sqrt", 7),
    "reciprocal": ("Reciprocal", 7),
    "sin": ("Sin", 7),
    "cos": ("Cos", 7),
    "tan": ("Tan", 7),
    "asin": ("Asin", 7),
    "acos": ("Acos", 7),
    "atan": ("Atan", 7),
    "sinh": ("Sinh", 9),
    "cosh": ("Cosh", 9),
    "erf": ("Erf", 9),
}
# Integer-preserving: identity on integers (Paddle 3.x allows them).
_INT_IDENTITY = {"floor": "Floor", "ceil": "Ceil"}


# Paddle's CPU kernels of these take int32/int64 x and write float32 (computed on x cast to
# float32), while both formats declare the output in x's dtype (measured on 2.6 and 3.3).
_INT_IN_FLOAT_OUT = frozenset({"exp", "log", "log2", "log10", "log1p", "expm1"})


def _unary_input(ctx: OpContext) -> tuple[ir.Value, str]:
    """x cast to the output type (Paddle 3.x runs float functions of ints in float)."""
    dtype = ctx.output_dtype()
    in_dtype = ctx.input_dtype("x")
    if ctx.pd.type in _INT_IN_FLOAT_OUT and in_dtype in ("int32", "int64") and dtype == in_dtype:
        ctx.correct_declared("out", dtype="float32")
        dtype = "float32"
    return ctx.cast(ctx.input("x"), dtype, in_dtype), dtype


def _require_float(ctx: OpContext, dtype: str) -> None:
    if not is_float(dtype):
        raise ctx.fail(f"{ctx.pd.type} with a {dtype} result has no ONNX equivalent")


@mapper(*_FLOAT_UNARY, min_opset=lambda op: _FLOAT_UNARY[op.type][1])
def float_unary(ctx: OpContext) -> None:
    x, dtype = _unary_input(ctx)
    _require_float(ctx, dtype)
    ctx.set_output("out", ctx.float_kernel(_FLOAT_UNARY[ctx.pd.type][0], x, dtype))


@mapper(*_INT_IDENTITY)
def floor_ceil(ctx: OpContext) -> None:
    x, dtype = _unary_input(ctx)
    out = ctx.op.__getattr__(_INT_IDENTITY[ctx.pd.type])(x) if is_float(dtype) else x
    ctx.set_output("out", out)


@mapper("abs")
def abs_(ctx: OpContext) -> None:
    if ctx.input_dtype("x") in ("complex64", "complex128"):
        complex_abs(ctx)  # the magnitude of a complex value carried as [re, im]
        return
    x, dtype = _unary_input(ctx)
    _check_arith_dtype(ctx, dtype)
    ctx.set_output("out", ctx.op.Abs(x))


@mapper("sign", min_opset=9)
def sign(ctx: OpContext) -> None:
    x, dtype = _unary_input(ctx)
    _check_arith_dtype(ctx, dtype)
    ctx.set_output("out", ctx.op.Sign(x))


@mapper("square")
def square(ctx: OpContext) -> None:
    x, dtype = _unary_input(ctx)
    _check_arith_dtype(ctx, dtype)
    ctx.set_output("out", ctx.op.Mul(x, x))


@mapper("rsqrt")
def rsqrt(ctx: OpContext) -> None:
    """1 / sqrt(x), as Paddle computes it (two roundings)."""
    x, dtype = _unary_input(ctx)
    _require_float(ctx, dtype)
    ctx.set_output("out", ctx.op.Reciprocal(ctx.op.Sqrt(x)))


def _wide(ctx: OpContext, x: ir.Value, dtype: str) -> tuple[ir.Value, str]:
    """x in float64 when narrower: composite formulas then round once, like the C library."""
    return (x, dtype) if dtype == "float64" else (ctx.op.Cast(x, to=onnx_dtype("float64")), "float64")


@mapper("log2", "log10")
def log2_log10(ctx: OpContext) -> None:
    """log(x) / log(base), computed in float64 so the result rounds like log2f/log10f."""
    x, dtype = _unary_input(ctx)
    _require_float(ctx, dtype)
    wide, wdtype = _wide(ctx, x, dtype)
    base = 2.0 if ctx.pd.type == "log2" else 10.0
    out = ctx.op.Div(ctx.op.Log(wide), ctx.const(math.log(base), wdtype))
    ctx.set_output("out", ctx.cast(out, dtype, wdtype))


@mapper("log1p", min_opset=9)
def log1p(ctx: OpContext) -> None:
    """log(1 + x) without cancellation: u = 1 + x; x where u == 1, else log(u) * x / (u - 1)
    (exact correction for the rounding of u); plain log(u) for x > 1; in float64."""
    x, dtype = _unary_input(ctx)
    _require_float(ctx, dtype)
    wide, wdtype = _wide(ctx, x, dtype)
    one = ctx.const(1.0, wdtype)
    u = ctx.op.Add(wide, one)
    d = ctx.op.Sub(u, one)
    log_u = ctx.op.Log(u)
    corrected = ctx.op.Where(is_zero(ctx, d, wdtype), wide, ctx.op.Mul(log_u, ctx.op.Div(wide, d)))
    out = ctx.op.Where(ctx.op.Greater(wide, one), log_u, corrected)
    ctx.set_output("out", ctx.cast(out, dtype, wdtype))


# ---------------------------------------------------------------------------- round
def _round_from_floor(ctx: OpContext, x: ir.Value, dtype: str, half_even: bool) -> ir.Value:
    """Round |x| from its floor (the fraction |x| - floor(|x|) is exact) and sign it back:
    up when the fraction is >= 0.5 (std::round), or > 0.5 or a tie with an odd floor
    (half to even). NaN and infinities pass through."""
    a = ctx.op.Abs(x)
    f = ctx.op.Floor(a)
    frac = ctx.op.Sub(a, f)
    half = ctx.const(0.5, dtype)
    if half_even:
        h = ctx.op.Mul(f, half)
        odd = ctx.op.Greater(ctx.op.Sub(h, ctx.op.Floor(h)), ctx.const(0, dtype))
        up = ctx.op.Or(ctx.op.Greater(frac, half), ctx.op.And(float_equal(ctx, frac, half, dtype), odd))
    else:
        up = ctx.op.Not(ctx.op.Less(frac, half))
    return ctx.op.Mul(ctx.op.Add(f, ctx.op.Cast(up, to=onnx_dtype(dtype))), _sign(ctx, x, dtype))


def _round(ctx: OpContext, x: ir.Value, dtype: str) -> ir.Value:
    """Paddle 2.x: half away from zero; 3.x: half to even (ONNX Round from opset 11)."""
    if ctx.paddle2_semantics:
        return _round_from_floor(ctx, x, dtype, half_even=False)
    if ctx.opset >= 11:
        return ctx.op.Round(x)
    return _round_from_floor(ctx, x, dtype, half_even=True)


@mapper("round")
def round_(ctx: OpContext) -> None:
    """Paddle 2.x rounds half away from zero, 3.x half to even; ``decimals`` (3.x) scales
    by 10**|decimals| first (x * p for decimals > 0, x / p for decimals < 0)."""
    x, dtype = _unary_input(ctx)
    if not is_float(dtype):
        ctx.set_output("out", x)
        return
    decimals = int(ctx.attr("decimals", 0))
    if decimals == 0:
        ctx.set_output("out", _round(ctx, x, dtype))
        return
    p = ctx.const(10.0 ** abs(decimals), dtype)
    if decimals > 0:
        ctx.set_output("out", ctx.op.Div(_round(ctx, ctx.op.Mul(x, p), dtype), p))
    else:
        ctx.set_output("out", ctx.op.Mul(_round(ctx, ctx.op.Div(x, p), dtype), p))


# ---------------------------------------------------------------------------- atan2
@mapper("atan2", min_opset=9)
def atan2(ctx: OpContext) -> None:
    """atan2(x, y), as C's (``atan2_values``)."""
    dtype = ctx.output_dtype()
    _require_float(ctx, dtype)
    x1, x2 = binary_inputs(ctx, "float64")
    ctx.set_output("out", ctx.cast(atan2_values(ctx, x1, x2), dtype, "float64"))
