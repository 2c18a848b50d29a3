"""Convolutions, dropout, embedding, one_hot and padding (pooling: pool.py, norms: norm.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext, onnx_dtype
from pd2onnx.convert.operands import check_conv
from pd2onnx.convert.ops._nn_util import (
    Pairs,
    channels_first_shape,
    channels_last,
    explicit_pairs,
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

    def __init__(self, ctx: OpContext, x_slot: str, transposed: bool = False):
        shape = ctx.input_shape(x_slot)
        self.rank = len(shape)
        self.nd = self.rank - 2
        self.last = channels_last(ctx.attr("data_format", "NCHW"))
        first = channels_first_shape(shape, self.last)
        check_conv(ctx, shape, first[1] if self.rank > 1 else -1, transposed)
        self.sizes = first[2:]
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
    attrs = g.attrs()
    y = ctx.in_float32("Conv", ctx.input_dtype("input"), lambda a, w: ctx.op.Conv(a, w, **attrs),
                       x, ctx.input("filter"))
    ctx.set_output("out", to_channels_last(ctx, y, g.rank, g.last))


@mapper("conv2d_transpose", "depthwise_conv2d_transpose", "conv3d_transpose")
def conv_transpose(ctx: OpContext) -> None:
    """ConvTranspose; ``output_size`` becomes an output padding when the input's spatial size
    is known, else the result is computed with the largest output padding and cropped
    (each output cell does not depend on the output's length)."""
    g = _Geometry(ctx, "x", transposed=True)
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
        ctx.require_opset(9, "one_hot with a runtime depth: OneHot from opset 9")
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
            ctx.require_opset(19, "circular padding by runtime amounts: Pad's wrap mode from opset 19")
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


# ---------------------------------------------------------------------------- deformable conv
@mapper("deformable_conv", min_opset=19)
def deformable_conv(ctx: OpContext) -> None:
    """ONNX DeformConv (opset 19): Paddle's offset layout (per deformable group and kernel
    position, a (dy, dx) pair) and mask layout are ONNX's; ``deformable_conv_v1`` has no mask."""
    nd = ctx.input_rank("x") - 2
    if nd != 2:
        raise ctx.fail(f"only 2-D deformable convolution exists in Paddle; got a rank-{nd + 2} input")
    kernel = list(ctx.input_shape("filter")[2:])
    pairs = explicit_pairs(ctx, ctx.attr("paddings", [0, 0]), 2)
    mask = ctx.input("mask") if ctx.has_input("mask") else None
    y = ctx.op.DeformConv(
        ctx.input("x"),
        ctx.input("filter"),
        ctx.input("offset"),
        None,
        mask,
        strides=per_dim(ctx, ctx.attr("strides", [1]), 2, "strides"),
        dilations=per_dim(ctx, ctx.attr("dilations", [1]), 2, "dilations"),
        pads=onnx_pads(pairs),
        group=int(ctx.attr("groups", 1)),
        offset_group=int(ctx.attr("deformable_groups", 1)),
        kernel_shape=kernel if is_static(kernel) else None,
    )
    ctx.set_output("out", y)


# ---------------------------------------------------------------------------- channel layouts
def _nchw(ctx: OpContext, slot: str, fmt_attr: str = "data_format") -> tuple[ir.Value, bool, int]:
    """Input ``slot`` in channels-first order, whether it was channels-last, and its rank."""
    rank = ctx.input_rank(slot)
    last = channels_last(ctx.attr(fmt_attr, "NCHW"))
    return to_channels_first(ctx, ctx.input(slot), rank, last), last, rank


def _channels(ctx: OpContext, slot: str, last: bool) -> int:
    shape = ctx.input_shape(slot)
    c = shape[-1] if last else shape[1]
    if c < 0:
        raise ctx.fail(
            "the channel count must be known when converting", hint="export with a static channel dim"
        )
    return c


@mapper("temporal_shift")
def temporal_shift(ctx: OpContext) -> None:
    """x [N*T, C, H, W]: the first C*ratio channels take the previous segment's values, the
    next C*ratio the following segment's, zeros past either end; the rest stay."""
    x, last, rank = _nchw(ctx, "x")
    c = _channels(ctx, "x", last)
    t = int(ctx.attr("seg_num", 1))
    ratio = float(ctx.attr("shift_ratio", 0.25))
    c1, c2 = int(c * ratio), int(c * 2 * ratio)
    rest = ctx.shape_of(x, 1)
    grouped = ctx.reshape(x, ctx.op.Concat(ctx.const_i64([-1, t]), rest, axis=0))  # [N, T, C, H, W]
    padded = pad(ctx, grouped, [0, 1, 0, 0, 0, 0, 1, 0, 0, 0], "constant", 0.0, ctx.input_dtype("x"))
    parts = []
    if c1 > 0:
        parts.append(ctx.slice(padded, [0, 0], [t, c1], [1, 2]))
    if c2 > c1:
        parts.append(ctx.slice(padded, [2, c1], [t + 2, c2], [1, 2]))
    if c > c2:
        parts.append(ctx.slice(grouped, [c2], [c], [2]))
    y = parts[0] if len(parts) == 1 else ctx.op.Concat(*parts, axis=2)
    y = ctx.reshape(y, ctx.shape_of(x))
    ctx.set_output("out", to_channels_last(ctx, y, rank, last))


@mapper("affine_channel")
def affine_channel(ctx: OpContext) -> None:
    """x * scale + bias per channel (NCHW or NHWC)."""
    rank = ctx.input_rank("x")
    last = channels_last(ctx.attr("data_layout", "NCHW"))
    shape = [-1] if last else [-1] + [1] * (rank - 2)
    y = ctx.op.Mul(ctx.input("x"), ctx.reshape(ctx.input("scale"), shape))
    ctx.set_output("out", ctx.op.Add(y, ctx.reshape(ctx.input("bias"), shape)))


@mapper("pixel_unshuffle")
def pixel_unshuffle(ctx: OpContext) -> None:
    """[N, C, H, W] -> [N, C*r*r, H/r, W/r], channel c*r*r + i*r + j from pixel (h*r+i, w*r+j)."""
    x, last, rank = _nchw(ctx, "x")
    r = int(ctx.attr("downscale_factor", 1))
    n, c, h, w = channels_first_shape(ctx.input_shape("x"), last)
    if c < 0 or h < 0 or w < 0:
        raise ctx.fail(
            "pixel_unshuffle needs static channel, height and width", hint="export with static H/W"
        )
    y = ctx.reshape(x, [-1, c, h // r, r, w // r, r])
    y = ctx.op.Transpose(y, perm=[0, 1, 3, 5, 2, 4])
    y = ctx.reshape(y, [-1, c * r * r, h // r, w // r])
    ctx.set_output("out", to_channels_last(ctx, y, rank, last))


@mapper("channel_shuffle")
def channel_shuffle(ctx: OpContext) -> None:
    """[N, g, C/g, ...] transposed to [N, C/g, g, ...]."""
    x, last, rank = _nchw(ctx, "x")
    c = _channels(ctx, "x", last)
    g = int(ctx.attr("groups", 1))
    if c % g:
        raise ctx.fail(f"{c} channels do not split into {g} groups")
    y = ctx.reshape(x, [0, g, c // g, -1])
    y = ctx.op.Transpose(y, perm=[0, 2, 1, 3])
    y = ctx.reshape(y, ctx.shape_of(x))
    ctx.set_output("out", to_channels_last(ctx, y, rank, last))


@mapper("maxout")
def maxout(ctx: OpContext) -> None:
    """Max over each run of ``groups`` consecutive channels along ``axis``."""
    shape = ctx.input_shape("x")
    rank = len(shape)
    axis = ctx.normalize_axis(int(ctx.attr("axis", 1)), rank)
    g = int(ctx.attr("groups", 1))
    c = shape[axis]
    if c < 0:
        raise ctx.fail("maxout needs a static channel count")
    x = ctx.input("x")
    if is_static(shape):
        target: list[int] | ir.Value = [*shape[:axis], c // g, g, *shape[axis + 1 :]]
    else:
        parts = [ctx.shape_of(x, 0, axis)] if axis else []
        parts.append(ctx.const_i64([c // g, g]))
        if axis + 1 < rank:
            parts.append(ctx.shape_of(x, axis + 1))
        target = ctx.op.Concat(*parts, axis=0)
    y = ctx.reshape(x, target)
    ctx.set_output("out", ctx.reduce("ReduceMax", y, [axis + 1], keepdims=False))


@mapper("fold", min_opset=18)
def fold(ctx: OpContext) -> None:
    """ONNX Col2Im (opset 18); Paddle's paddings are [top, left, bottom, right]."""
    sizes = per_dim(ctx, ctx.attr("output_sizes", []), 2, "output_sizes")
    kernel = per_dim(ctx, ctx.attr("kernel_sizes", []), 2, "kernel_sizes")
    p = [int(v) for v in ctx.attr("paddings", [0, 0, 0, 0])]
    if len(p) == 1:
        p = p * 4
    elif len(p) == 2:
        p = p * 2
    dtype = ctx.input_dtype("x")
    # ONNX Runtime's Col2Im is float32-only: other float types go through float32.
    y = ctx.op.Col2Im(
        ctx.cast(ctx.input("x"), "float32", dtype),
        ctx.const_i64(sizes),
        ctx.const_i64(kernel),
        dilations=per_dim(ctx, ctx.attr("dilations", [1]), 2, "dilations"),
        pads=p,
        strides=per_dim(ctx, ctx.attr("strides", [1]), 2, "strides"),
    )
    ctx.set_output("out", ctx.cast(y, dtype, "float32"))


@mapper("lrn")
def lrn(ctx: OpContext) -> None:
    """Paddle: x / (k + alpha * sum of x^2 over n channels)^beta; ONNX LRN divides alpha by
    the window size. ``mid_out`` is the denominator's base."""
    n = int(ctx.attr("n", 5))
    alpha, beta, k = float(ctx.attr("alpha", 1e-4)), float(ctx.attr("beta", 0.75)), float(ctx.attr("k", 2.0))
    x, last, rank = _nchw(ctx, "x")
    y = ctx.op.LRN(x, size=n, alpha=alpha * n, beta=beta, bias=k)
    ctx.set_output("out", to_channels_last(ctx, y, rank, last))
    if ctx.has_output("mid_out"):
        ctx.set_output("mid_out", to_channels_last(ctx, _lrn_mid(ctx, x, n, alpha, k), rank, last))


def _lrn_mid(ctx: OpContext, x: ir.Value, n: int, alpha: float, k: float) -> ir.Value:
    """k + alpha * (sum of squares over the channel window), channels-first."""
    dtype = ctx.input_dtype("x")
    sq = ctx.unsqueeze(ctx.op.Mul(x, x), [1])  # [N, 1, C, H, W]
    before = (n - 1) // 2
    padded = pad(ctx, sq, [0, 0, before, 0, 0, 0, 0, n - 1 - before, 0, 0], "constant", 0.0, dtype)
    total = ctx.op.AveragePool(padded, kernel_shape=[n, 1, 1])
    s = ctx.squeeze(ctx.op.Mul(total, ctx.const(float(n), dtype)), [1])
    return ctx.op.Add(ctx.op.Mul(s, ctx.const(alpha, dtype)), ctx.const(k, dtype))


# ---------------------------------------------------------------------------- affine_grid
def _grid_axis(n: int, align_corners: bool) -> np.ndarray:
    """Paddle's normalized coordinates along one axis of n cells (one cell with
    ``align_corners`` is 0/0 in Paddle's kernel: NaN, which spreads to the whole grid)."""
    if n == 1:
        return np.zeros([1], np.float64) if not align_corners else np.asarray([np.nan])
    lin = np.linspace(-1.0, 1.0, n)
    return lin if align_corners else lin * (n - 1) / n


@mapper("affine_grid")
def affine_grid(ctx: OpContext) -> None:
    """Base grid (x, y[, z], 1) of the output size times theta^T: [N, H, W, 2] from theta
    [N, 2, 3] (or [N, D, H, W, 3] from [N, 3, 4]). A runtime output size uses ONNX AffineGrid
    (opset 20)."""
    theta = ctx.input("input")
    dtype = ctx.input_dtype("input")
    align = bool(ctx.attr("align_corners", True))
    size = ctx.int_array("output_shape")
    if isinstance(size, ir.Value) or not size:
        if size is None or not isinstance(size, ir.Value):
            raise ctx.fail("output_shape is missing")
        ctx.require_opset(20, "affine_grid with a runtime output_shape needs ONNX AffineGrid")
        ctx.set_output("output", ctx.op.AffineGrid(theta, size, align_corners=int(align)))
        return
    spatial = [int(d) for d in size[2:]]
    if len(spatial) not in (2, 3):
        raise ctx.fail(f"output_shape {size} is neither 4-D nor 5-D")
    axes = [_grid_axis(n, align) for n in spatial]  # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    coords = [m.reshape(-1) for m in reversed(mesh)]  # x (width) first
    base = np.stack([*coords, np.ones_like(coords[0])], axis=1).astype(dtypes.to_numpy(dtype))
    out = ctx.op.MatMul(ctx.const(base), ctx.op.Transpose(theta, perm=[0, 2, 1]))  # [N, prod, nd]
    ctx.set_output("output", ctx.reshape(out, [-1, *spatial, len(spatial)]))


# ---------------------------------------------------------------------------- lp_pool2d
@mapper("lp_pool2d")
def lp_pool2d(ctx: OpContext) -> None:
    """(sum of x^p over each window)^(1/p): the window sums come from an AveragePool on
    explicitly zero-padded x^p (ceil_mode adds the zeros its last windows reach) times the
    window size."""
    x, last, rank = _nchw(ctx, "x")
    if rank != 4:
        raise ctx.fail(f"lp_pool2d takes a 4-D input, got rank {rank}")
    dtype = ctx.input_dtype("x")
    kernel = per_dim(ctx, ctx.int_array("kernel_size") or [], 2, "kernel_size")
    strides = per_dim(ctx, ctx.attr("strides", [1]), 2, "strides")
    sizes = channels_first_shape(ctx.input_shape("x"), last)[2:]
    algorithm = str(ctx.attr("padding_algorithm", "EXPLICIT")).upper()
    pairs = paddle_pairs(ctx, algorithm, ctx.attr("paddings", [0]), sizes, kernel, strides)
    if pairs is None:
        raise ctx.fail("SAME padding needs a static height and width")
    if ctx.attr("ceil_mode", False):
        if not is_static(sizes):
            raise ctx.fail("ceil_mode needs a static height and width", hint="export with static H/W")
        extra = []
        for n, k, s, (a, b) in zip(sizes, kernel, strides, pairs):
            span = n + a + b - k
            out = -(-span // s) + 1
            extra.append(max((out - 1) * s + k - (n + a + b), 0))
        pairs = [(a, b + e) for (a, b), e in zip(pairs, extra)]
    p = float(ctx.attr("norm_type", 2.0))
    powed = ctx.op.Pow(x, ctx.const(p, dtype))
    if any(a or b for a, b in pairs):
        powed = pad(
            ctx,
            powed,
            [0, 0] + [a for a, _ in pairs] + [0, 0] + [b for _, b in pairs],
            "constant",
            0.0,
            dtype,
        )
    # ONNX Runtime's AveragePool has no float64 kernel: the window mean goes through float32.
    mean = ctx.op.AveragePool(ctx.cast(powed, "float32", dtype), kernel_shape=kernel, strides=strides)
    mean = ctx.cast(mean, dtype, "float32")
    total = ctx.op.Mul(mean, ctx.const(float(kernel[0] * kernel[1]), dtype))
    y = ctx.op.Pow(total, ctx.const(1.0 / p, dtype))
    ctx.set_output("out", to_channels_last(ctx, y, rank, last))
