"""Convolutions, dropout, embedding, one_hot and padding (pooling: pool.py, norms: norm.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext, onnx_dtype
from pd2onnx.convert.ops._nn_util import (
    Pairs,
    channels_first_shape,
    channels_last,
    is_static,
    onnx_pads,
    pad,
    paddle_pairs,
    per_dim,
    to_channels_first,
    to_channels_last,
)
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle import dtypes


# ---------------------------------------------------------------------------- convolution
class _Geometry:
    """Spatial geometry of a convolution in channels-first terms."""

    def __init__(self, ctx: OpContext, x_slot: str):
        shape = ctx.input_shape(x_slot)
        self.rank = len(shape)
        self.nd = self.rank - 2
        self.last = channels_last(ctx.attr("data_format", "NCHW"))
        self.sizes = channels_first_shape(shape, self.last)[2:]
        self.kernel = list(ctx.input_shape("filter")[2:])
        self.strides = per_dim(ctx, ctx.attr("strides", [1]), self.nd, "strides")
        self.dilations = per_dim(ctx, ctx.attr("dilations", [1]), self.nd, "dilations")
        self.groups = int(ctx.attr("groups", 1))
        algorithm = str(ctx.attr("padding_algorithm", "EXPLICIT")).upper()
        if algorithm == "SAME":
            self.dilations = [1] * self.nd  # Paddle ignores dilations with SAME padding
            if not is_static(self.kernel):
                raise ctx.fail("SAME padding with a filter of unknown spatial size")
        self.pairs: Pairs | None = paddle_pairs(
            ctx, algorithm, ctx.attr("paddings", [0]), self.sizes, self.kernel, self.strides
        )

    def attrs(self) -> dict:
        """ONNX Conv/ConvTranspose attributes (pads or auto_pad)."""
        out = {
            "strides": self.strides,
            "dilations": self.dilations,
            "group": self.groups,
            "kernel_shape": self.kernel if is_static(self.kernel) else None,
        }
        if self.pairs is None:
            out["auto_pad"] = "SAME_UPPER"  # equals Paddle's SAME when dilations are 1
        else:
            out["pads"] = onnx_pads(self.pairs)
        return out


@mapper("conv2d", "depthwise_conv2d", "conv3d")
def conv(ctx: OpContext) -> None:
    """Paddle's filter layout [Cout, Cin/groups, k...] is ONNX's; layouts other than
    channels-first are transposed around the Conv."""
    g = _Geometry(ctx, "input")
    x = to_channels_first(ctx, ctx.input("input"), g.rank, g.last)
    y = ctx.op.Conv(x, ctx.input("filter"), **g.attrs())
    ctx.set_output("out", to_channels_last(ctx, y, g.rank, g.last))


@mapper("conv2d_transpose", "depthwise_conv2d_transpose", "conv3d_transpose")
def conv_transpose(ctx: OpContext) -> None:
    """ConvTranspose; ``output_size`` becomes an output padding when the input's spatial size
    is known, else the result is computed with the largest output padding and cropped
    (each output cell does not depend on the output's length)."""
    g = _Geometry(ctx, "x")
    if g.pairs is None:
        raise ctx.fail(
            "SAME padding of a transposed convolution needs the input's spatial size",
            hint="export the model with a static input height/width",
        )
    x = to_channels_first(ctx, ctx.input("x"), g.rank, g.last)
    w = ctx.input("filter")
    bias = ctx.input("Bias") if ctx.has_input("Bias") else None  # legacy fused bias
    attrs = g.attrs()
    out_pad = ctx.attr("output_padding", [])
    if out_pad:
        attrs["output_padding"] = per_dim(ctx, out_pad, g.nd, "output_padding")
    size = ctx.int_array("output_size")
    if isinstance(size, list) and size and is_static(g.sizes):
        size = per_dim(ctx, size, g.nd, "output_size")
        attrs["output_padding"] = _padding_for_size(ctx, g, size)
        y = ctx.op.ConvTranspose(x, w, bias, **attrs)
    elif size is not None and (isinstance(size, ir.Value) or size):
        attrs["pads"] = [a for a, _ in g.pairs] + [0] * g.nd
        attrs["output_padding"] = [s - 1 for s in g.strides]
        y = ctx.op.ConvTranspose(x, w, bias, **attrs)
        ends = size if isinstance(size, ir.Value) else per_dim(ctx, size, g.nd, "output_size")
        y = ctx.slice(y, [0] * g.nd, ends, list(range(2, g.rank)))
    else:
        y = ctx.op.ConvTranspose(x, w, bias, **attrs)
    ctx.set_output("out", to_channels_last(ctx, y, g.rank, g.last))


def _padding_for_size(ctx: OpContext, g: _Geometry, size: Sequence[int]) -> list[int]:
    """The output padding that makes a transposed convolution ``size`` long (Paddle accepts
    sizes in [natural, natural + stride))."""
    extra = []
    for i in range(g.nd):
        natural = (g.sizes[i] - 1) * g.strides[i] - sum(g.pairs[i]) + g.dilations[i] * (g.kernel[i] - 1) + 1
        e = size[i] - natural
        if not 0 <= e < max(g.strides[i], g.dilations[i]):
            raise ctx.fail(f"output_size {list(size)} is not reachable from input size {g.sizes}")
        extra.append(e)
    return extra


# ---------------------------------------------------------------------------- dropout
@mapper("dropout")
def dropout(ctx: OpContext) -> None:
    """Inference dropout: ``upscale_in_train`` is the identity, ``downgrade_in_infer``
    scales by (1 - p), computed in float32 as Paddle does."""
    if ctx.attr("is_test", True) is False:
        raise ctx.fail("dropout in training mode is random", hint="export the model in eval mode")
    x = ctx.input("x")
    if ctx.attr("mode", "downgrade_in_infer") == "upscale_in_train":
        ctx.set_output("out", x)
        return
    dtype = ctx.input_dtype("x")
    p = ctx.scalar("p", 0.5)
    if isinstance(p, ir.Value):
        keep = ctx.op.Sub(ctx.const(np.float32(1)), ctx.cast(ctx.reshape(p, []), "float32"))
        factor = ctx.cast(keep, dtype, "float32")
    else:
        factor = ctx.const(np.asarray(np.float32(1) - np.float32(p)).astype(dtypes.to_numpy(dtype)))
    ctx.set_output("out", ctx.op.Mul(x, factor))


# ---------------------------------------------------------------------------- embedding
@mapper("embedding")
def embedding(ctx: OpContext) -> None:
    """Gather rows; ids equal to ``padding_idx`` (>= 0; -1 = none) give zero rows.

    Legacy ``lookup_table`` takes ids with a trailing dimension of 1."""
    ids = ctx.input("x")
    rank = ctx.input_rank("x")
    if ctx.pd.legacy_type == "lookup_table" and rank > 1:
        ids = ctx.squeeze(ids, [rank - 1])
        rank -= 1
    out = ctx.op.Gather(ctx.input("weight"), ids, axis=0)
    padding_idx = int(ctx.attr("padding_idx", -1))
    if padding_idx >= 0:
        hit = ctx.unsqueeze(ctx.op.Equal(ids, ctx.const(padding_idx, ctx.input_dtype("x"))), [rank])
        w_dtype = ctx.input_dtype("weight")
        if ctx.opset >= 9:
            out = ctx.op.Where(hit, ctx.const(0, w_dtype), out)
        else:
            out = ctx.op.Mul(out, ctx.cast(ctx.op.Not(hit), w_dtype))
    ctx.set_output("out", out)


# ---------------------------------------------------------------------------- one_hot
@mapper("one_hot")
def one_hot(ctx: OpContext) -> None:
    """OneHot (opset 9+) or, with a known depth, Equal against 0..depth-1."""
    x = ctx.input("x")
    depth = ctx.scalar("num_classes")
    out_dtype = ctx.output_dtype("out")
    if ctx.opset >= 9:
        calc = out_dtype if out_dtype in ("float32", "int64") else "float32"
        d = (
            ctx.const_i64([int(depth)])
            if not isinstance(depth, ir.Value)
            else ctx.reshape(ctx.cast(depth, "int64"), [1])
        )
        y = ctx.op.OneHot(ctx.cast(x, "int64", ctx.input_dtype("x")), d, ctx.const([0, 1], calc), axis=-1)
        ctx.set_output("out", ctx.cast(y, out_dtype, calc))
        return
    if isinstance(depth, ir.Value):
        raise ctx.fail("one_hot with a runtime depth needs opset 9 or newer", hint="pass --opset 9 or newer")
    x64 = ctx.cast(x, "int64", ctx.input_dtype("x"))
    hit = ctx.op.Equal(ctx.unsqueeze(x64, [ctx.input_rank("x")]), ctx.const_i64(list(range(int(depth)))))
    ctx.set_output("out", ctx.op.Cast(hit, to=onnx_dtype(out_dtype)))


# ---------------------------------------------------------------------------- padding
def _pad_value(ctx: OpContext, dtype: str) -> float | ir.Value:
    value = ctx.scalar("pad_value", 0.0)
    if isinstance(value, ir.Value):
        return ctx.reshape(ctx.cast(value, dtype), [])
    return value


@mapper("pad")
def pad_all(ctx: OpContext) -> None:
    """Constant padding of every dimension; paddings are before/after pairs per dim."""
    dtype = ctx.input_dtype("x")
    rank = ctx.input_rank("x")
    p = [int(v) for v in ctx.attr("paddings", [])]
    if len(p) != 2 * rank:
        raise ctx.fail(f"{len(p)} paddings for a rank-{rank} input")
    pads = p[0::2] + p[1::2]
    ctx.set_output("out", pad(ctx, ctx.input("x"), pads, "constant", _pad_value(ctx, dtype), dtype))


_MODES = {
    "constant": "constant",
    "reflect": "reflect",
    "replicate": "edge",
    "edge": "edge",
    "circular": "wrap",
}


@mapper("pad3d")
def pad3d(ctx: OpContext) -> None:
    """Paddings [left, right, top, bottom, front, back] of W, H, D."""
    last = channels_last(ctx.attr("data_format", "NCDHW"))
    axes = [3, 2, 1] if last else [4, 3, 2]
    _pad_spatial(ctx, axes)


def _pad_spatial(ctx: OpContext, axes: list[int]) -> None:
    """Pad the ``axes`` (in the order of Paddle's paddings pairs) of input ``x``.

    (Legacy ``pad2d`` is not mapped: Paddle 2.x writes pad3d and has no pad2d kernel to
    check a conversion against.)"""
    x = ctx.input("x")
    dtype = ctx.input_dtype("x")
    rank = ctx.input_rank("x")
    mode = str(ctx.attr("mode", "constant"))
    if mode not in _MODES:
        raise ctx.fail(f"padding mode {mode!r} is not supported")
    paddings = ctx.int_array("paddings")
    value = _pad_value(ctx, dtype) if mode == "constant" else None
    if isinstance(paddings, list):
        if len(paddings) != 2 * len(axes):
            raise ctx.fail(f"{len(paddings)} paddings for {len(axes)} padded dimensions")
        pairs = [(0, 0)] * rank
        for k, axis in enumerate(axes):
            pairs[axis] = (paddings[2 * k], paddings[2 * k + 1])
        if mode == "circular" and ctx.opset < 19:
            ctx.set_output("out", _circular(ctx, x, pairs))
            return
        pads: list[int] | ir.Value = onnx_pads(pairs)
    else:
        if mode == "circular" and ctx.opset < 19:
            raise ctx.fail(
                "circular padding by runtime amounts needs opset 19", hint="pass --opset 19 or newer"
            )
        pads = _runtime_pads(ctx, paddings, axes, rank)
    ctx.set_output("out", pad(ctx, x, pads, _MODES[mode], value, dtype))


def _runtime_pads(ctx: OpContext, paddings: ir.Value, axes: list[int], rank: int) -> ir.Value:
    """Paddle's paddings tensor reordered into ONNX pads (one Gather; index 2k = a zero)."""
    zero_at = 2 * len(axes)
    befores, afters = [zero_at] * rank, [zero_at] * rank
    for k, axis in enumerate(axes):
        befores[axis], afters[axis] = 2 * k, 2 * k + 1
    padded = ctx.op.Concat(ctx.reshape(paddings, [-1]), ctx.const_i64([0]), axis=0)
    return ctx.op.Gather(padded, ctx.const_i64(befores + afters), axis=0)


def _circular(ctx: OpContext, x: ir.Value, pairs: Pairs) -> ir.Value:
    """Circular padding as Slice + Concat, one axis at a time."""
    for axis, (before, after) in enumerate(pairs):
        if before < 0 or after < 0:
            raise ctx.fail("negative circular padding is not supported")
        if not before and not after:
            continue
        parts = []
        if before:
            parts.append(ctx.slice(x, [-before], [2**62], [axis]))
        parts.append(x)
        if after:
            parts.append(ctx.slice(x, [0], [after], [axis]))
        x = ctx.op.Concat(*parts, axis=axis)
    return x
