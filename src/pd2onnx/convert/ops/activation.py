"""Activation functions."""

from pd2onnx.convert.context import OpContext
from pd2onnx.convert.registry import mapper

_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh"}


@mapper(*_UNARY)
def unary(ctx: OpContext) -> None:
    ctx.set_output("out", ctx.op.__getattr__(_UNARY[ctx.pd.type])(ctx.input("x")))
