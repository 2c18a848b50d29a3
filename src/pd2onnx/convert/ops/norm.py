"""Normalization: batch_norm, layer_norm, instance_norm, group_norm (inference semantics)."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext
from pd2onnx.convert.operands import check_norm, expect_vector
from pd2onnx.convert.ops._nn_util import (
    channels_first_shape,
    channels_last,
    to_channels_first,
    to_channels_last,
)
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle import dtypes


def _param(ctx: OpContext, slot: str, fill: float, count: int, dtype: str) -> ir.Value:
    """An optional per-channel parameter, or a constant ``fill`` vector when absent."""
    if ctx.has_input(slot):
        return ctx.cast(ctx.input(slot), dtype, ctx.input_dtype(slot))
    if count < 0:
        raise ctx.fail(f"{slot} is absent and the channel count is unknown")
    return ctx.const(np.full([count], fill, dtype=dtypes.to_numpy(dtype)))


def _channel_shape(rank: int) -> list[int]:
    """Shape that broadcasts a per-channel vector over a channels-first tensor."""
    return [-1] + [1] * (rank - 2)


@mapper("batch_norm")
def batch_norm(ctx: OpContext) -> None:
    """BatchNormalization with the running statistics (inference), or the batch's own
    statistics when the file says training mode (``is_test`` false, no global stats)."""
    shape = ctx.input_shape("x")
    rank = len(shape)
    last = rank > 2 and channels_last(ctx.attr("data_format", "NCHW"))
    dtype = ctx.input_dtype("x")
    channels = channels_first_shape(shape, last)[1] if rank > 1 else -1
    check_norm(ctx, ("scale", "bias", "mean", "variance"), channels)
    eps = float(ctx.attr("epsilon", 1e-5))
    x = to_channels_first(ctx, ctx.input("x"), rank, last)
    scale = _param(ctx, "scale", 1.0, channels, dtype)
    bias = _param(ctx, "bias", 0.0, channels, dtype)
    if ctx.attr("is_test", True) or ctx.attr("use_global_stats", False):
        mean = ctx.cast(ctx.input("mean"), dtype, ctx.input_dtype("mean"))
        var = ctx.cast(ctx.input("variance"), dtype, ctx.input_dtype("variance"))
        y = ctx.op.BatchNormalization(x, scale, bias, mean, var, epsilon=eps)
    else:
        axes = [0, *range(2, rank)]
        centered = ctx.op.Sub(x, ctx.reduce("ReduceMean", x, axes, keepdims=True))
        var = ctx.reduce("ReduceMean", ctx.op.Mul(centered, centered), axes, keepdims=True)
        y = _affine(ctx, _normalize(ctx, centered, var, eps, dtype), scale, bias, rank)
    ctx.set_output("out", to_channels_last(ctx, y, rank, last))


def _normalize(ctx: OpContext, centered: ir.Value, var: ir.Value, eps: float, dtype: str) -> ir.Value:
    return ctx.op.Div(centered, ctx.op.Sqrt(ctx.op.Add(var, ctx.const(eps, dtype))))


def _affine(
    ctx: OpContext, y: ir.Value, scale: ir.Value | None, bias: ir.Value | None, rank: int
) -> ir.Value:
    """y * scale + bias with per-channel vectors on a channels-first tensor."""
    if scale is not None:
        y = ctx.op.Mul(y, ctx.reshape(scale, _channel_shape(rank)))
    if bias is not None:
        y = ctx.op.Add(y, ctx.reshape(bias, _channel_shape(rank)))
    return y


@mapper("layer_norm")
def layer_norm(ctx: OpContext) -> None:
    """Normalize over dims [begin_norm_axis:]; Paddle's scale/bias are flattened to 1-D.

    LayerNormalization from opset 17, else mean/variance by reductions."""
    shape = ctx.input_shape("x")
    rank = len(shape)
    begin = ctx.normalize_axis(int(ctx.attr("begin_norm_axis", 1)), rank)
    dtype = ctx.input_dtype("x")
    eps = float(ctx.attr("epsilon", 1e-5))
    x = ctx.input("x")
    norm_shape = list(shape[begin:])
    static = all(d >= 0 for d in norm_shape)
    if static:
        expect_vector(ctx, ("scale", "bias"), int(np.prod(norm_shape)),
                      f"one value per element of x's dims from begin_norm_axis={begin}, {norm_shape}")
    target: list[int] | ir.Value = norm_shape if static else ctx.shape_of(x, begin)

    def shaped(slot: str) -> ir.Value | None:
        if not ctx.has_input(slot):
            return None
        v = ctx.cast(ctx.input(slot), dtype, ctx.input_dtype(slot))
        return v if len(norm_shape) == 1 else ctx.reshape(v, target)

    scale, bias = shaped("scale"), shaped("bias")
    if ctx.opset >= 17:
        if scale is None:
            ones = ctx.const(1, dtype)
            scale = (
                ctx.const(np.ones(norm_shape, dtypes.to_numpy(dtype)))
                if static
                else ctx.op.Expand(ones, target)
            )
        y = ctx.op.LayerNormalization(x, scale, bias, axis=begin, epsilon=eps)
    else:
        axes = list(range(begin, rank))
        centered = ctx.op.Sub(x, ctx.reduce("ReduceMean", x, axes, keepdims=True))
        var = ctx.reduce("ReduceMean", ctx.op.Mul(centered, centered), axes, keepdims=True)
        y = _normalize(ctx, centered, var, eps, dtype)
        if scale is not None:
            y = ctx.op.Mul(y, scale)
        if bias is not None:
            y = ctx.op.Add(y, bias)
    ctx.set_output("out", y)


@mapper("instance_norm")
def instance_norm(ctx: OpContext) -> None:
    shape = ctx.input_shape("x")
    dtype = ctx.input_dtype("x")
    channels = shape[1] if len(shape) > 1 else -1
    check_norm(ctx, ("scale", "bias"), channels)
    scale = _param(ctx, "scale", 1.0, channels, dtype)
    bias = _param(ctx, "bias", 0.0, channels, dtype)
    eps = float(ctx.attr("epsilon", 1e-5))
    y = ctx.in_float32("InstanceNormalization", dtype,
                       lambda a, s, b: ctx.op.InstanceNormalization(a, s, b, epsilon=eps), ctx.input("x"), scale, bias)
    ctx.set_output("y", y)


@mapper("group_norm")
def group_norm(ctx: OpContext) -> None:
    """GroupNormalization (opset 21, per-channel scale/bias), else InstanceNormalization over
    (N, groups, rest) and a per-channel affine."""
    shape = ctx.input_shape("x")
    rank = len(shape)
    last = channels_last(ctx.attr("data_format", "NCHW"))
    dtype = ctx.input_dtype("x")
    channels = channels_first_shape(shape, last)[1]
    groups = int(ctx.attr("groups", 1))
    check_norm(ctx, ("scale", "bias"), channels, groups)
    eps = float(ctx.attr("epsilon", 1e-5))
    x = to_channels_first(ctx, ctx.input("x"), rank, last)
    if ctx.opset >= 21 and channels >= 0:
        scale = _param(ctx, "scale", 1.0, channels, dtype)
        bias = _param(ctx, "bias", 0.0, channels, dtype)
        y = ctx.op.GroupNormalization(x, scale, bias, num_groups=groups, epsilon=eps)
    else:
        grouped = ctx.reshape(x, [0, groups, -1])
        ones = ctx.const(np.ones([groups], dtypes.to_numpy(dtype)))
        zeros = ctx.const(np.zeros([groups], dtypes.to_numpy(dtype)))
        normed = ctx.in_float32("InstanceNormalization", dtype,
                                lambda a, s, b: ctx.op.InstanceNormalization(a, s, b, epsilon=eps), grouped, ones, zeros)
        y = ctx.reshape(normed, ctx.op.Shape(x))
        scale = (
            ctx.cast(ctx.input("scale"), dtype, ctx.input_dtype("scale")) if ctx.has_input("scale") else None
        )
        bias = ctx.cast(ctx.input("bias"), dtype, ctx.input_dtype("bias")) if ctx.has_input("bias") else None
        y = _affine(ctx, y, scale, bias, rank)
    ctx.set_output("y", to_channels_last(ctx, y, rank, last))


@mapper("data_norm")
def data_norm(ctx: OpContext) -> None:
    """Legacy ``data_norm`` (CTR models), 2-D x [N, C]: means = batch_sum / batch_size,
    scales = sqrt(batch_size / batch_square_sum), y = (x - means) * scales (then * scale_w +
    bias when ``enable_scale_and_shift``). With ``slot_dim`` > 0, a slot whose first value
    (the "show" count) is within 1e-7 of zero gives zeros, as Paddle's kernel does."""
    if ctx.input_rank("x") != 2:
        raise ctx.fail(f"data_norm takes a 2-D input, got rank {ctx.input_rank('x')}")
    dtype = ctx.input_dtype("x")
    size, total, squares = (
        ctx.cast(ctx.input(s), dtype, ctx.input_dtype(s))
        for s in ("batch_size", "batch_sum", "batch_square_sum")
    )
    means = ctx.op.Div(total, size)
    scales = ctx.op.Sqrt(ctx.op.Div(size, squares))
    x = ctx.input("x")
    y = ctx.op.Mul(ctx.op.Sub(x, means), scales)
    if ctx.attr("enable_scale_and_shift", False):
        y = ctx.op.Add(ctx.op.Mul(y, ctx.input("scale_w")), ctx.input("bias"))
    slot_dim = int(ctx.attr("slot_dim", -1))
    if slot_dim > 0:
        c = ctx.input_shape("x")[1]
        if c < 0 or c % slot_dim:
            raise ctx.fail(f"slot_dim={slot_dim} needs a static width that it divides (got {c})")
        ctx.require_opset(10, "data_norm slots need strided Slice")
        show = ctx.slice(x, [0], [c], [1], [slot_dim])  # [N, C / slot_dim]
        eps = ctx.const(1e-7, dtype)
        zero_show = ctx.op.And(ctx.op.Greater(show, ctx.op.Neg(eps)), ctx.op.Less(show, eps))
        slots = ctx.reshape(y, [0, c // slot_dim, slot_dim])
        y = ctx.op.Where(ctx.unsqueeze(zero_show, [2]), ctx.const(0.0, dtype), slots)
        y = ctx.reshape(y, [0, c])
    ctx.set_output("out", y)
    ctx.set_output("means", means)
    ctx.set_output("scales", scales)
