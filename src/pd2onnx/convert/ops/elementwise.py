"""Elementwise math."""

from pd2onnx.convert.context import OpContext
from pd2onnx.convert.registry import mapper


@mapper("scale")
def scale(ctx: OpContext) -> None:
    """out = scale * x + bias (bias_after_scale) or scale * (x + bias)."""
    x = ctx.input("x")
    dtype = ctx.input_dtype("x")
    s = ctx.scalar("scale", 1.0)
    bias = float(ctx.attr("bias", 0.0))
    after = bool(ctx.attr("bias_after_scale", True))
    if not hasattr(s, "name") and float(s) == 1.0 and bias == 0.0:
        ctx.set_output("out", x)
        return
    s_v = ctx.cast(s, dtype) if hasattr(s, "name") else ctx.const(s, dtype)
    if after:
        out = ctx.op.Mul(x, s_v)
        if bias != 0.0:
            out = ctx.op.Add(out, ctx.const(bias, dtype))
    else:
        out = ctx.op.Add(x, ctx.const(bias, dtype)) if bias != 0.0 else x
        out = ctx.op.Mul(out, s_v)
    ctx.set_output("out", out)
