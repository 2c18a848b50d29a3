"""Helpers shared by the nn mappers (conv, pool, norm, pad): layouts, paddings, ONNX Pad."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext
from pd2onnx.paddle import dtypes

Pairs = list[tuple[int, int]]

_CHANNELS_LAST = frozenset({"NHWC", "NDHWC", "NLC", "NWC"})


def channels_last(data_format: str) -> bool:
    """True for Paddle's channels-last layouts (NHWC, NDHWC, NLC)."""
    return str(data_format).upper() in _CHANNELS_LAST


def first_perm(rank: int) -> list[int]:
    """Permutation from channels-last to channels-first."""
    return [0, rank - 1, *range(1, rank - 1)]


def last_perm(rank: int) -> list[int]:
    """Permutation from channels-first to channels-last."""
    return [0, *range(2, rank), 1]


def to_channels_first(ctx: OpContext, x: ir.Value, rank: int, last: bool) -> ir.Value:
    return ctx.op.Transpose(x, perm=first_perm(rank)) if last else x


def to_channels_last(ctx: OpContext, x: ir.Value, rank: int, last: bool) -> ir.Value:
    return ctx.op.Transpose(x, perm=last_perm(rank)) if last else x


def channels_first_shape(shape: Sequence[int], last: bool) -> list[int]:
    """A static shape in channels-first order."""
    return [shape[i] for i in first_perm(len(shape))] if last else list(shape)


def per_dim(ctx: OpContext, values: Sequence[int] | int, n: int, what: str) -> list[int]:
    """An attribute given once or once per spatial dimension, as ``n`` values."""
    vals = [int(values)] if isinstance(values, (int, np.integer)) else [int(v) for v in values]
    if len(vals) == 1:
        return vals * n
    if len(vals) != n:
        raise ctx.fail(f"{what} has {len(vals)} values for {n} spatial dimensions")
    return vals


def explicit_pairs(ctx: OpContext, paddings: Sequence[int], n: int) -> Pairs:
    """Paddle paddings (``n`` symmetric values or ``2n`` before/after values per dim) as pairs."""
    p = [int(v) for v in paddings]
    if len(p) in (0, 1):
        p = (p or [0]) * n
    if len(p) == n:
        return [(v, v) for v in p]
    if len(p) == 2 * n:
        return [(p[2 * i], p[2 * i + 1]) for i in range(n)]
    raise ctx.fail(f"paddings {p} fit neither {n} nor {2 * n} values")


def same_pairs(sizes: Sequence[int], kernel: Sequence[int], strides: Sequence[int]) -> Pairs:
    """Paddle's SAME padding: out = ceil(in / stride), the extra cell at the end."""
    pairs = []
    for size, k, s in zip(sizes, kernel, strides):
        out = (size + s - 1) // s
        total = max((out - 1) * s + k - size, 0)
        pairs.append((total // 2, total - total // 2))
    return pairs


def is_static(dims: Sequence[int]) -> bool:
    return all(d >= 0 for d in dims)


def paddle_pairs(
    ctx: OpContext,
    algorithm: str,
    paddings: Sequence[int],
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
) -> Pairs | None:
    """Before/after paddings per spatial dim for a padding algorithm; None = SAME on dynamic dims."""
    n = len(kernel)
    algorithm = str(algorithm).upper()
    if algorithm == "VALID":
        return [(0, 0)] * n
    if algorithm == "SAME":
        return same_pairs(sizes, kernel, strides) if is_static(sizes) else None
    return explicit_pairs(ctx, paddings, n)


def onnx_pads(pairs: Pairs) -> list[int]:
    """Pairs -> ONNX ``pads`` (all befores, then all afters)."""
    return [a for a, _ in pairs] + [b for _, b in pairs]


def pad(
    ctx: OpContext,
    x: ir.Value,
    pads: Sequence[int] | ir.Value,
    mode: str = "constant",
    value: float | ir.Value | None = None,
    dtype: str = "float32",
) -> ir.Value:
    """ONNX Pad in the form the opset wants; ``pads`` in ONNX order (befores, afters)."""
    if ctx.opset < 11 and not dtype.startswith(("float", "bfloat")):
        ctx.require_opset(11, f"padding a {dtype} tensor (Pad before opset 11 takes floats only)")
    if ctx.opset < 11:
        if isinstance(pads, ir.Value) or isinstance(value, ir.Value):
            ctx.require_opset(11, "padding by runtime amounts: Pad takes them as inputs from opset 11")
        return ctx.op.Pad(
            x, pads=list(pads), mode=mode, value=float(value or 0.0) if mode == "constant" else None
        )
    p = pads if isinstance(pads, ir.Value) else ctx.const_i64(list(pads))
    v = None
    if mode == "constant" and value is not None:
        v = (
            value
            if isinstance(value, ir.Value)
            else ctx.const(np.asarray(value, dtype=dtypes.to_numpy(dtype)))
        )
    return ctx.op.Pad(x, p, v, mode=mode)


