"""Activation functions.

Each mapper emits the ONNX op when the opset has it and ONNX Runtime has a kernel for the
dtype (its CPU kernels of Elu, Selu, Softplus, Gelu, ... are float32/float16 only), else
Paddle's own formula from primitive ops. Formulas follow Paddle's kernels (the functors of
``phi/kernels/funcs/activation_functor.h``) term by term, so results agree to rounding.
Float attributes are 32-bit in Paddle; constants take the input's dtype, as the kernels'
``static_cast<T>`` does.
"""

from __future__ import annotations

import math

import onnx_ir as ir

from pd2onnx.convert.context import OpContext
from pd2onnx.convert.ops.reduce import reduce
from pd2onnx.convert.registry import mapper

_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh"}


# ---------------------------------------------------------------------------- helpers
def _x(ctx: OpContext) -> tuple[ir.Value, str]:
    return ctx.input("x"), ctx.input_dtype("x")


def _native(ctx: OpContext, dtype: str, opset: int = 7) -> bool:
    """Whether to emit the dedicated ONNX op: the opset has it and the dtype is not float64
    (ONNX Runtime has no double kernels for most activation ops)."""
    return ctx.opset >= opset and dtype != "float64"


def _fattr(ctx: OpContext, name: str, default: float) -> float:
    return float(ctx.attr(name, default))


def _scaled(ctx: OpContext, x: ir.Value, factor: float, dtype: str) -> ir.Value:
    """x * factor, skipping the product when factor is 1."""
    return x if factor == 1.0 else ctx.op.Mul(x, ctx.const(factor, dtype))


def _where_positive(ctx: OpContext, x: ir.Value, negative: ir.Value, dtype: str) -> ir.Value:
    """x > 0 ? x : negative (the float64 fallbacks; Where needs opset 9)."""
    if ctx.opset < 9:
        ctx.require_opset(9, f"{ctx.pd.type} of {dtype} tensors uses Where, from opset 9")
    return ctx.op.Where(ctx.op.Greater(x, ctx.const(0.0, dtype)), x, negative)


def _clip(ctx: OpContext, x: ir.Value, lo: float | None, hi: float | None, dtype: str) -> ir.Value:
    """``ctx.clip``, but float64 at opsets 8-10 via Max/Min (ONNX Runtime has no double Clip-6)."""
    if dtype != "float64" or not 8 <= ctx.opset < 11:
        return ctx.clip(x, lo, hi, dtype)
    if lo is not None:
        x = ctx.op.Max(x, ctx.const(lo, dtype))
    return x if hi is None else ctx.op.Min(x, ctx.const(hi, dtype))


def _exp_minus_one(ctx: OpContext, x: ir.Value, dtype: str) -> ir.Value:
    return ctx.op.Sub(ctx.op.Exp(x), ctx.const(1.0, dtype))


def _softplus(ctx: OpContext, x: ir.Value, dtype: str) -> ir.Value:
    """log(1 + exp(x)): ONNX Softplus, or its formula for float64."""
    if _native(ctx, dtype):
        return ctx.op.Softplus(x)
    return ctx.op.Log(ctx.op.Add(ctx.op.Exp(x), ctx.const(1.0, dtype)))


def _div_one_plus(ctx: OpContext, x: ir.Value, d: ir.Value, dtype: str) -> ir.Value:
    """x / (1 + d)."""
    return ctx.op.Div(x, ctx.op.Add(ctx.const(1.0, dtype), d))


# ---------------------------------------------------------------------------- simple
@mapper(*_UNARY)
def unary(ctx: OpContext) -> None:
    ctx.set_output("out", ctx.op.__getattr__(_UNARY[ctx.pd.type])(ctx.input("x")))


@mapper("relu6")
def relu6(ctx: OpContext) -> None:
    """min(max(x, 0), threshold); Paddle 3.x fixes threshold at 6, legacy files carry it."""
    x, dtype = _x(ctx)
    ctx.set_output("out", _clip(ctx, x, 0.0, _fattr(ctx, "threshold", 6.0), dtype))


@mapper("hardtanh")
def hardtanh(ctx: OpContext) -> None:
    x, dtype = _x(ctx)
    ctx.set_output("out", _clip(ctx, x, _fattr(ctx, "t_min", 0.0), _fattr(ctx, "t_max", 24.0), dtype))


@mapper("leaky_relu")
def leaky_relu(ctx: OpContext) -> None:
    x, dtype = _x(ctx)
    alpha = _fattr(ctx, "negative_slope", 0.02)
    if _native(ctx, dtype):
        ctx.set_output("out", ctx.op.LeakyRelu(x, alpha=alpha))
    else:
        ctx.set_output("out", _where_positive(ctx, x, ctx.op.Mul(x, ctx.const(alpha, dtype)), dtype))


@mapper("elu")
def elu(ctx: OpContext) -> None:
    """x > 0 ? x : alpha * (exp(x) - 1)."""
    x, dtype = _x(ctx)
    alpha = _fattr(ctx, "alpha", 1.0)
    if _native(ctx, dtype):
        ctx.set_output("out", ctx.op.Elu(x, alpha=alpha))
    else:
        neg = ctx.op.Mul(ctx.const(alpha, dtype), _exp_minus_one(ctx, x, dtype))
        ctx.set_output("out", _where_positive(ctx, x, neg, dtype))


@mapper("selu")
def selu(ctx: OpContext) -> None:
    """scale * (x > 0 ? x : alpha * exp(x) - alpha)."""
    x, dtype = _x(ctx)
    scale, alpha = _fattr(ctx, "scale", 1.0507009873554805), _fattr(ctx, "alpha", 1.6732632423543772)
    if _native(ctx, dtype):
        ctx.set_output("out", ctx.op.Selu(x, alpha=alpha, gamma=scale))
        return
    a = ctx.const(alpha, dtype)
    neg = ctx.op.Sub(ctx.op.Mul(a, ctx.op.Exp(x)), a)
    ctx.set_output("out", ctx.op.Mul(_where_positive(ctx, x, neg, dtype), ctx.const(scale, dtype)))


@mapper("celu")
def celu(ctx: OpContext) -> None:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); min(0, v) as -relu(-v)."""
    x, dtype = _x(ctx)
    alpha = _fattr(ctx, "alpha", 1.0)
    if ctx.opset >= 12 and dtype == "float32":
        ctx.set_output("out", ctx.op.Celu(x, alpha=alpha))
        return
    a = ctx.const(alpha, dtype)
    neg = ctx.op.Mul(a, _exp_minus_one(ctx, ctx.op.Div(x, a), dtype))
    ctx.set_output("out", ctx.op.Sub(ctx.op.Relu(x), ctx.op.Relu(ctx.op.Neg(neg))))


@mapper("gelu", min_opset=lambda op: 7 if op.attrs.get("approximate") else 9)
def gelu(ctx: OpContext) -> None:
    """ONNX Gelu from opset 20; below, Paddle's formulas:
    exact ``x * 0.5 * (1 + erf(x / sqrt(2)))``,
    tanh ``x * 0.5 * (1 + tanh(sqrt(2 / pi) * x * (1 + 0.044715 * x * x)))``.
    The exact form divides by sqrt(2) rather than multiplying by its inverse: ONNX Runtime's
    graph optimizer fuses the Div form (not the Mul form) into its one Gelu kernel (13 Gelus
    in PP-OCRv6's tiny recognizer; docs/benchmarks.md), with the same error from the float64
    result (4.4e-7 on [-9, 9], fused or not)."""
    x, dtype = _x(ctx)
    approximate = bool(ctx.attr("approximate", False))
    if _native(ctx, dtype, 20):
        ctx.set_output("out", ctx.op.Gelu(x, approximate="tanh" if approximate else "none"))
        return
    if approximate:
        inner = ctx.op.Add(ctx.const(1.0, dtype), ctx.op.Mul(ctx.const(0.044715, dtype), ctx.op.Mul(x, x)))
        inner = ctx.op.Mul(ctx.op.Mul(ctx.const(math.sqrt(2 / math.pi), dtype), x), inner)
        t = ctx.op.Tanh(inner)
    else:
        t = ctx.float_kernel("Erf", ctx.op.Div(x, ctx.const(math.sqrt(2), dtype)), dtype)
    half_x = ctx.op.Mul(x, ctx.const(0.5, dtype))
    ctx.set_output("out", ctx.op.Mul(half_x, ctx.op.Add(ctx.const(1.0, dtype), t)))


@mapper("silu", "swish")
def silu_swish(ctx: OpContext) -> None:
    """x / (1 + exp(-beta * x)); beta is legacy swish's attribute (1 otherwise).

    Not x * Sigmoid(beta * x), although that is two nodes instead of four: ONNX Runtime's
    float Sigmoid is a polynomial approximation (up to 4e-4 relative error for negative
    inputs, saturating below -17): for x in [-17, 17] that form is up to 3.1e-6 off the
    float64 result where this one and Paddle's kernel stay within 1.3e-6, and below -17 it
    is up to 7x off relatively where they stay within 3e-7 (docs/benchmarks.md, "silu /
    swish"). OpenVINO gives both forms the same results."""
    x, dtype = _x(ctx)
    beta = _fattr(ctx, "beta", 1.0) if ctx.pd.type == "swish" else 1.0
    e = ctx.op.Exp(ctx.op.Neg(_scaled(ctx, x, beta, dtype)))
    ctx.set_output("out", _div_one_plus(ctx, x, e, dtype))


@mapper("mish", min_opset=9)
def mish(ctx: OpContext) -> None:
    """x * tanh(x > threshold ? x : softplus(x)). ONNX Mish (opset 18) has no threshold; it
    matches when threshold >= 20, where softplus(x) rounds to x in float32 anyway."""
    x, dtype = _x(ctx)
    threshold = _fattr(ctx, "lambda", 20.0)
    if _native(ctx, dtype, 18) and dtype == "float32" and threshold >= 20.0:
        ctx.set_output("out", ctx.op.Mish(x))
        return
    sp = ctx.op.Where(ctx.op.Greater(x, ctx.const(threshold, dtype)), x, _softplus(ctx, x, dtype))
    ctx.set_output("out", ctx.op.Mul(x, ctx.op.Tanh(sp)))


@mapper("hardsigmoid")
def hardsigmoid(ctx: OpContext) -> None:
    """max(0, min(1, x * slope + offset))."""
    x, dtype = _x(ctx)
    slope, offset = _fattr(ctx, "slope", 0.2), _fattr(ctx, "offset", 0.5)
    if _native(ctx, dtype):
        ctx.set_output("out", ctx.op.HardSigmoid(x, alpha=slope, beta=offset))
        return
    lin = ctx.op.Add(ctx.op.Mul(x, ctx.const(slope, dtype)), ctx.const(offset, dtype))
    ctx.set_output("out", _clip(ctx, lin, 0.0, 1.0, dtype))


@mapper("hardswish")
def hardswish(ctx: OpContext) -> None:
    """x * min(max(x + 3, 0), 6) / 6 (ONNX HardSwish from opset 14).

    Legacy hard_swish carries threshold/scale/offset, but the kernels of Paddle 2.6 and 3.x
    ignore them (fixed 6/6/3), and those Paddles are the reference for the files."""
    x, dtype = _x(ctx)
    if _native(ctx, dtype, 14):
        ctx.set_output("out", ctx.op.HardSwish(x))
        return
    gate = _clip(ctx, ctx.op.Add(x, ctx.const(3.0, dtype)), 0.0, 6.0, dtype)
    ctx.set_output("out", ctx.op.Div(ctx.op.Mul(x, gate), ctx.const(6.0, dtype)))


@mapper("hardshrink", min_opset=9)
def hardshrink(ctx: OpContext) -> None:
    """|x| > t ? x : 0 for Paddle 2.x files (ONNX Shrink); Paddle 3.x keeps |x| == t too
    (and NaN): ``(-t < x < t) ? 0 : x``."""
    x, dtype = _x(ctx)
    t = _fattr(ctx, "threshold", 0.5)
    if ctx.paddle2_semantics:
        ctx.set_output("out", ctx.op.Shrink(x, lambd=t, bias=0.0))
        return
    inside = ctx.op.And(ctx.op.Greater(x, ctx.const(-t, dtype)), ctx.op.Less(x, ctx.const(t, dtype)))
    ctx.set_output("out", ctx.op.Where(inside, ctx.const(0.0, dtype), x))


@mapper("softshrink", min_opset=9)
def softshrink(ctx: OpContext) -> None:
    """x > l ? x - l : (x < -l ? x + l : 0) (ONNX Shrink with bias = lambd = l)."""
    x, _ = _x(ctx)
    lam = _fattr(ctx, "threshold", 0.5)
    ctx.set_output("out", ctx.op.Shrink(x, lambd=lam, bias=lam))


@mapper("tanh_shrink")
def tanh_shrink(ctx: OpContext) -> None:
    x, _ = _x(ctx)
    ctx.set_output("out", ctx.op.Sub(x, ctx.op.Tanh(x)))


@mapper("softplus", min_opset=9)
def softplus(ctx: OpContext) -> None:
    """beta * x > threshold ? x : log(1 + exp(beta * x)) / beta."""
    x, dtype = _x(ctx)
    beta, threshold = _fattr(ctx, "beta", 1.0), _fattr(ctx, "threshold", 20.0)
    xb = _scaled(ctx, x, beta, dtype)
    sp = _softplus(ctx, xb, dtype)
    if beta != 1.0:
        sp = ctx.op.Div(sp, ctx.const(beta, dtype))
    ctx.set_output("out", ctx.op.Where(ctx.op.Greater(xb, ctx.const(threshold, dtype)), x, sp))


@mapper("softsign")
def softsign(ctx: OpContext) -> None:
    x, dtype = _x(ctx)
    if _native(ctx, dtype):
        ctx.set_output("out", ctx.op.Softsign(x))
    else:
        ctx.set_output("out", _div_one_plus(ctx, x, ctx.op.Abs(x), dtype))


@mapper("logsigmoid")
def logsigmoid(ctx: OpContext) -> None:
    """Paddle's stable form: t = max(-x, 0); -t - log(exp(-t) + exp(-x - t))."""
    x, _ = _x(ctx)
    neg_x = ctx.op.Neg(x)
    t = ctx.op.Relu(neg_x)
    s = ctx.op.Add(ctx.op.Exp(ctx.op.Neg(t)), ctx.op.Exp(ctx.op.Sub(neg_x, t)))
    ctx.set_output("out", ctx.op.Sub(ctx.op.Neg(t), ctx.op.Log(s)))


@mapper("thresholded_relu", min_opset=9)
def thresholded_relu(ctx: OpContext) -> None:
    """x > threshold ? x : value (value exists from Paddle 3.x on; 0 before)."""
    x, dtype = _x(ctx)
    threshold, value = _fattr(ctx, "threshold", 1.0), _fattr(ctx, "value", 0.0)
    if value == 0.0 and _native(ctx, dtype, 10):
        ctx.set_output("out", ctx.op.ThresholdedRelu(x, alpha=threshold))
        return
    keep = ctx.op.Greater(x, ctx.const(threshold, dtype))
    ctx.set_output("out", ctx.op.Where(keep, x, ctx.const(value, dtype)))


@mapper("stanh")
def stanh(ctx: OpContext) -> None:
    """scale_b * tanh(scale_a * x)."""
    x, dtype = _x(ctx)
    a, b = _fattr(ctx, "scale_a", 0.67), _fattr(ctx, "scale_b", 1.7159)
    ctx.set_output("out", ctx.op.Mul(ctx.const(b, dtype), ctx.op.Tanh(ctx.op.Mul(ctx.const(a, dtype), x))))


# ---------------------------------------------------------------------------- prelu
def _prelu_alpha(ctx: OpContext, rank: int) -> ir.Value:
    """alpha shaped to broadcast against x (numpy rules) for the op's mode."""
    alpha = ctx.input("alpha")
    mode = ctx.attr("mode", "all")
    if mode == "all":
        return alpha
    if mode == "channel":
        channels_first = not str(ctx.attr("data_format", "NCHW")).endswith("C")
        if channels_first and rank > 2:
            return ctx.reshape(alpha, [-1] + [1] * (rank - 2))
        return ctx.reshape(alpha, [-1])
    if mode == "element":
        shape = ctx.input_shape("x")[1:]
        if all(d >= 0 for d in shape):
            return ctx.reshape(alpha, list(shape))
        return ctx.reshape(alpha, ctx.shape_of(ctx.input("x"), 1))
    raise ctx.fail(f"unknown prelu mode {mode!r}")


@mapper("prelu")
def prelu(ctx: OpContext) -> None:
    """x > 0 ? x : alpha * x with alpha per tensor, channel (NCHW/NHWC) or element."""
    x, dtype = _x(ctx)
    alpha = _prelu_alpha(ctx, ctx.input_rank("x"))
    if _native(ctx, dtype):
        ctx.set_output("out", ctx.op.PRelu(x, alpha))
    else:
        ctx.set_output("out", _where_positive(ctx, x, ctx.op.Mul(alpha, x), dtype))


# ---------------------------------------------------------------------------- softmax
# Paddle's softmax kernels clip the shifted logits x - max(x) at -64 (``ValueClip``).
_SOFTMAX_CLIP = -64.0


@mapper("softmax")
def softmax(ctx: OpContext) -> None:
    """Softmax along ``axis``. Before opset 13 ONNX flattens the input to 2-D at the axis,
    which is right only for the last axis: other axes are moved last and back. Paddle's clip
    at -64 changes results by less than 1e-27 and is not emulated. A 0-D input is one
    element (result 1)."""
    x = ctx.input("x")
    rank = ctx.input_rank("x")
    if rank == 0:
        ctx.set_output("out", ctx.squeeze(ctx.op.Softmax(ctx.unsqueeze(x, [0]), axis=0), [0]))
        return
    axis = ctx.normalize_axis(int(ctx.attr("axis", -1)), rank)
    last = rank - 1
    if ctx.opset >= 13 or axis == last:
        ctx.set_output("out", ctx.op.Softmax(x, axis=axis))
        return
    perm = list(range(rank))
    perm[axis], perm[last] = last, axis
    moved = ctx.op.Softmax(ctx.op.Transpose(x, perm=perm), axis=last)
    ctx.set_output("out", ctx.op.Transpose(moved, perm=perm))


@mapper("log_softmax")
def log_softmax(ctx: OpContext) -> None:
    """Paddle's formula: s = max(x - max(x), -64); s - log(sum(exp(s))) along ``axis``
    (the clip is visible here: ONNX LogSoftmax would go below -64 - log(sum))."""
    x, dtype = _x(ctx)
    rank = ctx.input_rank("x")
    axes = [ctx.normalize_axis(int(ctx.attr("axis", -1)), rank)] if rank else None
    shifted = ctx.op.Sub(x, reduce(ctx, "ReduceMax", x, axes, True, rank))
    shifted = _clip(ctx, shifted, _SOFTMAX_CLIP, None, dtype)
    total = reduce(ctx, "ReduceSum", ctx.op.Exp(shifted), axes, True, rank)
    ctx.set_output("out", ctx.op.Sub(shifted, ctx.op.Log(total)))
