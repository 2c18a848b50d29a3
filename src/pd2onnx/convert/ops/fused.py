"""Fused inference ops: ``fc`` and ``fused_elemwise_activation``."""

from __future__ import annotations

import math

from pd2onnx.convert.context import OpContext
from pd2onnx.convert.operands import expect_vector, malformed, operand_shape
from pd2onnx.convert.registry import mapper

_FC_ACTIVATIONS = ("", "relu")


@mapper("fc", min_opset=7)
def fc(ctx: OpContext) -> None:
    """out = activation(flatten(input, in_num_col_dims) @ w + bias), reshaped back to
    input.shape[:in_num_col_dims] + [w.shape[1]]. ``padding_weights`` weights carry 4 extra
    rows and columns, which are dropped."""
    act = str(ctx.attr("activation_type", "") or "")
    if act not in _FC_ACTIVATIONS:
        raise ctx.fail(f"activation_type {act!r} is not supported (Paddle's fc kernel knows '' and 'relu')")
    rank = ctx.input_rank("input")
    ncol = int(ctx.attr("in_num_col_dims", 1))
    if not 1 <= ncol <= rank:
        raise ctx.fail(f"in_num_col_dims={ncol} is out of range for a rank-{rank} input")
    _check_fc(ctx, ncol)
    x = ctx.input("input")
    w = ctx.input("w")
    if ctx.attr("padding_weights", False):
        w_shape = ctx.input_shape("w")
        if any(d < 0 for d in w_shape):
            raise ctx.fail("padding_weights with a weight of unknown shape")
        w = ctx.slice(w, [0, 0], [w_shape[0] - 4, w_shape[1] - 4], [0, 1])
    if ncol != rank - 1:  # the trailing dims folded into one; MatMul broadcasts over the rest
        x = ctx.reshape(x, [0] * ncol + [-1])
    y = ctx.op.MatMul(x, w)
    if ctx.has_input("bias"):
        y = ctx.op.Add(y, ctx.reshape(ctx.input("bias"), [-1]))
    if act == "relu":
        y = ctx.op.Relu(y)
    ctx.set_output("out", y)


def _check_fc(ctx: OpContext, ncol: int) -> None:
    """The weight is [K, N] for an input whose dims from ``in_num_col_dims`` hold K values
    (4 more rows and columns with ``padding_weights``); the bias holds N."""
    w = operand_shape(ctx, "w")
    if w is None:
        return
    if len(w) != 2:
        raise malformed(ctx, f"operand w has shape {list(w)}, expected a matrix [K, N]")
    pad = 4 if ctx.attr("padding_weights", False) else 0
    width = ctx.input_shape("input")[ncol:]
    if w[0] >= 0 and all(d >= 0 for d in width) and math.prod(width) + pad != w[0]:
        raise malformed(ctx, f"operand w has shape {list(w)}, expected [{math.prod(width) + pad}, ?] "
                             f"(the input's dims from in_num_col_dims={ncol}, {list(width)}, hold "
                             f"{math.prod(width)} values)")
    if w[1] >= 0:
        expect_vector(ctx, ("bias",), w[1] - pad, f"one value per output column of w, {w[1] - pad}")


_BINARY = {"elementwise_add": "Add", "elementwise_mul": "Mul"}
_UNARY = ("scale", "relu", "tanh", "sigmoid", "gelu")
# The pairs Paddle's kernel implements (others raise "has not been implemented" there).
_PAIRS = frozenset(
    {
        ("elementwise_add", "scale"),
        ("scale", "elementwise_add"),
        ("elementwise_add", "relu"),
        ("relu", "elementwise_add"),
        ("tanh", "elementwise_add"),
        ("gelu", "elementwise_add"),
        ("elementwise_mul", "scale"),
        ("elementwise_mul", "tanh"),
        ("elementwise_mul", "sigmoid"),
    }
)


@mapper("fused_elemwise_activation", "fused_elemwise_add_activation")
def fused_elemwise_activation(ctx: OpContext) -> None:
    """``functor_list`` [binary, unary]: out = binary(x, unary(y)), intermediate = unary(y);
    [unary, binary]: out = unary(binary(x, y)), intermediate = binary(x, y). Y broadcasts
    against X from ``axis`` as in the legacy elementwise ops."""
    from pd2onnx.convert.ops._elementwise_util import binary_inputs

    functors = [str(f) for f in ctx.attr("functor_list", [])]
    if len(functors) != 2:
        raise ctx.fail(f"functor_list {functors} must name two functors")
    outer, inner = functors
    if (outer, inner) not in _PAIRS:
        raise ctx.fail(f"functor_list {functors} is not one Paddle's kernel implements")
    dtype = ctx.input_dtype("x")
    x, y = binary_inputs(ctx)

    def unary(name: str, v):
        if name == "scale":
            return ctx.op.Mul(v, ctx.const(float(ctx.attr("scale", 0.0)), dtype))
        if name == "gelu":  # Paddle's functor is the tanh approximation
            cube = ctx.op.Mul(ctx.op.Mul(v, v), v)
            arg = ctx.op.Add(v, ctx.op.Mul(cube, ctx.const(0.044715, dtype)))
            t = ctx.op.Tanh(ctx.op.Mul(arg, ctx.const((2.0 / math.pi) ** 0.5, dtype)))
            return ctx.op.Mul(ctx.op.Mul(v, ctx.const(0.5, dtype)), ctx.op.Add(t, ctx.const(1.0, dtype)))
        return ctx.op.__getattr__(name.capitalize())(v)

    if outer in _BINARY:
        mid = unary(inner, y)
        out = ctx.op.__getattr__(_BINARY[outer])(x, mid)
    else:
        mid = ctx.op.__getattr__(_BINARY[inner])(x, y)
        out = unary(outer, mid)
    ctx.set_output("out", out)
    ctx.set_output("intermediate_out", mid)


@mapper("fused_dropout_add")
def fused_dropout_add(ctx: OpContext) -> None:
    """Inference ``dropout(x) + y``: x + y (``upscale_in_train``) or x * (1 - p) + y
    (``downgrade_in_infer``). Training mode is random and refused."""
    if not ctx.attr("is_test", False):
        raise ctx.fail(
            "fused_dropout_add in training mode (is_test false) drops values at random",
            hint="export the model in eval mode",
        )
    x, y = ctx.input("x"), ctx.input("y")
    if ctx.attr("mode", "upscale_in_train") == "upscale_in_train":
        ctx.set_output("out", ctx.op.Add(x, y))
        return
    dtype = ctx.input_dtype("x")
    p = ctx.scalar("p", 0.5)
    if not isinstance(p, (int, float)):
        keep = ctx.op.Sub(ctx.const(1.0, dtype), ctx.reshape(ctx.cast(p, dtype), []))
    else:
        keep = ctx.const(1.0 - float(p), dtype)
    ctx.set_output("out", ctx.op.Add(ctx.op.Mul(x, keep), y))


_BIAS_ACTS = ("gelu", "relu", "geglu", "swiglu")


@mapper("fused_bias_act", min_opset=9)
def fused_bias_act(ctx: OpContext) -> None:
    """act(x + bias) for ``gelu`` (erf form) and ``relu``; the gated ``geglu``/``swiglu``
    apply gelu/silu to the first half of the last axis and multiply by the second half.
    Int8 inputs (dequant_scales, shift, smooth) and int8 output (quant_scale > 0) are refused."""
    from pd2onnx.convert.ops.llm import halves

    act = str(ctx.attr("act_method", "gelu"))
    if act not in _BIAS_ACTS:
        raise ctx.fail(f"act_method {act!r} is not one of {', '.join(_BIAS_ACTS)}")
    for slot in ("dequant_scales", "shift", "smooth"):
        if ctx.has_input(slot):
            raise ctx.fail(f"the quantized form (input {slot!r}) is not supported")
    if float(ctx.attr("quant_scale", -1.0)) > 0:
        raise ctx.fail(f"quant_scale={ctx.attr('quant_scale')}: the int8-quantized output is not supported")
    dtype = ctx.input_dtype("x")
    calc = "float32" if dtype in ("float16", "bfloat16") else dtype
    x = ctx.cast(ctx.input("x"), calc, dtype)
    if ctx.has_input("bias"):
        x = ctx.op.Add(x, ctx.cast(ctx.input("bias"), calc, ctx.input_dtype("bias")))

    def gelu(v):  # the Div form, which ONNX Runtime fuses into its Gelu kernel (activation.gelu)
        erf = ctx.op.Erf(ctx.op.Div(v, ctx.const(2**0.5, calc)))
        return ctx.op.Mul(ctx.op.Mul(v, ctx.const(0.5, calc)), ctx.op.Add(erf, ctx.const(1.0, calc)))

    if act == "relu":
        y = ctx.op.Relu(x)
    elif act == "gelu":
        y = gelu(x)
    else:
        a, b = halves(ctx, x, "x")
        y = ctx.op.Mul(gelu(a) if act == "geglu" else ctx.op.Mul(a, ctx.op.Sigmoid(a)), b)
    ctx.set_output("out", ctx.cast(y, dtype, calc))
