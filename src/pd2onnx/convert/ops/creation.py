"""Tensor creation: constants and filled tensors."""

import numpy as np

from pd2onnx.convert.context import OpContext
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle import dtypes


@mapper("full_int_array")
def full_int_array(ctx: OpContext) -> None:
    dtype = ctx.attr("dtype", "int64")
    ctx.set_output("out", ctx.const(np.asarray(ctx.attr("value"), dtype=dtypes.to_numpy(dtype))))


@mapper("full")
def full(ctx: OpContext) -> None:
    dtype = ctx.attr("dtype", "float32")
    shape = ctx.int_array("shape")
    value = ctx.scalar("value", 0.0)
    if ctx.pd.attrs.get("str_value"):  # legacy fill_constant keeps exact values as text
        value = float(ctx.pd.attrs["str_value"])
    if isinstance(shape, list) and not hasattr(value, "name"):
        ctx.set_output("out", ctx.const(np.full(shape, value, dtype=dtypes.to_numpy(dtype))))
        return
    raise ctx.fail("runtime shape or value for full is not supported yet")
