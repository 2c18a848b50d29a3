"""Pooling: pool2d / pool3d (max, avg; global, adaptive) and max_pool*_with_index.

Paddle's pooling differs from ONNX's in ways that matter for exactness:

- ``ceil_mode`` windows: Paddle divides a non-exclusive average by the full kernel size
  even where a window leaves the padded input. With static sizes the extra cells are
  turned into extra end padding, so ONNX pools in floor mode over an input where every
  window fits;
- ONNX Runtime wants every pad smaller than the kernel: larger pads are applied with an
  explicit Pad before the pooling;
- adaptive pooling: exact as ordinary pooling when each input size divides by the output
  size, else emulated cell by cell (slices + reductions; averages one axis at a time, max
  with index per cell). Paddle's pool2d/pool3d kernels ignore ``adaptive`` for max
  pooling, so that combination is refused.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext
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


@dataclass
class _Window:
    """Kernel, strides and paddings of one pooling, channels-first, ready for ONNX."""

    kernel: list[int]
    strides: list[int]
    pairs: Pairs | None  # None: Paddle's SAME on dynamic sizes (ONNX SAME_UPPER)
    ceil: bool  # ONNX ceil_mode still needed (dynamic sizes)

    def attrs(self) -> dict:
        out: dict = {"kernel_shape": self.kernel, "strides": self.strides}
        if self.pairs is None:
            out["auto_pad"] = "SAME_UPPER"
        elif any(self.flat_pads()):
            out["pads"] = self.flat_pads()
        if self.ceil:
            out["ceil_mode"] = 1
        return out

    def flat_pads(self) -> list[int]:
        return onnx_pads(self.pairs or [])

    def pads_fit(self) -> bool:
        """ONNX Runtime's rule: every pad smaller than the kernel."""
        return self.pairs is None or all(max(p) < k for p, k in zip(self.pairs, self.kernel))


def _window(ctx: OpContext, kernel: list[int], sizes: list[int], ceil_mode: bool) -> _Window:
    """The ONNX window for Paddle's kernel/strides/paddings/padding_algorithm/ceil_mode."""
    nd = len(kernel)
    strides = per_dim(ctx, ctx.attr("strides", [1]), nd, "strides")
    pairs = paddle_pairs(
        ctx, ctx.attr("padding_algorithm", "EXPLICIT"), ctx.attr("paddings", [0]), sizes, kernel, strides
    )
    if not ceil_mode:
        return _Window(kernel, strides, pairs, False)
    if pairs is not None and is_static(sizes):
        widened = []
        for size, k, s, (a, b) in zip(sizes, kernel, strides, pairs):
            span = size + a + b - k
            cells = (span + s - 1) // s + 1
            widened.append((a, b + (cells - 1) * s + k - (size + a + b)))
        return _Window(kernel, strides, widened, False)
    return _Window(kernel, strides, pairs, True)


def _lowest(dtype: str) -> float:
    """Paddle's max-pool start value: the lowest finite number of the dtype."""
    np_dtype = dtypes.to_numpy(dtype)
    return (
        float(np.finfo(np_dtype).min)
        if np.issubdtype(np_dtype, np.floating)
        else float(np.iinfo(np_dtype).min)
    )


def _pool(
    ctx: OpContext, x: ir.Value, kind: str, win: _Window, exclusive: bool, dtype: str, sizes: list[int]
) -> ir.Value:
    """Max or average pooling of channels-first ``x`` with Paddle's semantics."""
    if win.ceil and ctx.opset < 10:
        raise ctx.fail("ceil_mode on dynamic spatial sizes needs opset 10 or newer", hint="pass --opset 10")
    if kind == "max":
        if win.pads_fit():
            return ctx.op.MaxPool(x, **win.attrs())
        return ctx.op.MaxPool(_prepad(ctx, x, win, _lowest(dtype), dtype), **_unpadded(win).attrs())
    if exclusive and win.pads_fit():
        return ctx.op.AveragePool(
            x, **win.attrs(), count_include_pad=0 if win.pairs != _no_pads(win) else None
        )
    if not is_static(sizes) or win.pairs is None or win.ceil:
        return _avg_inclusive_dynamic(ctx, x, win, exclusive)
    # Average with divisor K everywhere, then rescaled where Paddle divides by something else.
    if win.pads_fit():
        mean = ctx.op.AveragePool(x, **win.attrs(), count_include_pad=1 if any(win.flat_pads()) else None)
    else:
        mean = ctx.op.AveragePool(_prepad(ctx, x, win, 0.0, dtype), **_unpadded(win).attrs())
    factor = _divisor_factor(win, sizes, exclusive)
    return mean if factor is None else ctx.op.Mul(mean, ctx.const(factor.astype(dtypes.to_numpy(dtype))))


def _avg_inclusive_dynamic(ctx: OpContext, x: ir.Value, win: _Window, exclusive: bool) -> ir.Value:
    """Non-exclusive average on dynamic sizes: exact only while no window passes the end
    padding that Paddle clips to (input + start padding)."""
    if exclusive or win.pairs is None or win.ceil or any(b > a for a, b in win.pairs):
        raise ctx.fail(
            "this average pooling (padding counted, with SAME, ceil_mode or a larger end padding) "
            "needs static spatial sizes",
            hint="export the model with a static input height/width",
        )
    return ctx.op.AveragePool(x, **win.attrs(), count_include_pad=1 if any(win.flat_pads()) else None)


def _no_pads(win: _Window) -> Pairs:
    return [(0, 0)] * len(win.kernel)


def _unpadded(win: _Window) -> _Window:
    return _Window(win.kernel, win.strides, _no_pads(win), False)


def _prepad(ctx: OpContext, x: ir.Value, win: _Window, value: float, dtype: str) -> ir.Value:
    """Explicit Pad of the spatial dims (ONNX Runtime rejects pads as large as the kernel)."""
    return pad(
        ctx,
        x,
        [0, 0] + [a for a, _ in win.pairs] + [0, 0] + [b for _, b in win.pairs],
        "constant",
        value,
        dtype,
    )


def _divisor_factor(win: _Window, sizes: list[int], exclusive: bool) -> np.ndarray | None:
    """K / Paddle's divisor for each output cell (None when it is 1 everywhere).

    A window starts at i*stride - pad_before; Paddle clips its end to size + pad_before
    (not + pad_after), and an exclusive average counts only the cells inside the input.
    Empty windows give K / 0 = inf, so 0 * inf = NaN as in Paddle."""
    per_axis = []
    for size, k, s, (a, b) in zip(sizes, win.kernel, win.strides, win.pairs):
        cells = (size + a + b - k) // s + 1
        start = np.arange(cells) * s - a
        end = np.minimum(start + k, size + a)
        if exclusive:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        per_axis.append(np.maximum(end - start, 0))
    divisor = per_axis[0]
    for d in per_axis[1:]:
        divisor = np.multiply.outer(divisor, d)
    total = int(np.prod(win.kernel))
    if np.all(divisor == total):
        return None
    with np.errstate(divide="ignore"):
        return total / divisor.astype(np.float64)


def _adaptive_avg(ctx: OpContext, x: ir.Value, sizes: list[int], out: list[int]) -> ir.Value:
    """Adaptive average: cell i spans [floor(i*n/m), ceil((i+1)*n/m)) of each axis. Uneven
    cells are averaged one axis at a time (a mean of row means over a rectangle)."""
    if all(o == 1 for o in out):
        return ctx.op.GlobalAveragePool(x)
    if not is_static(sizes):
        raise ctx.fail(
            "adaptive pooling needs static spatial sizes (unless the output is 1x1)",
            hint="export the model with a static input height/width",
        )
    if all(n % m == 0 for n, m in zip(sizes, out)):
        step = [n // m for n, m in zip(sizes, out)]
        win = _Window(step, step, [(0, 0)] * len(step), False)
        return ctx.op.AveragePool(x, **win.attrs())
    for i, (n, m) in enumerate(zip(sizes, out)):
        axis = i + 2
        if n == m:
            continue
        cells = [
            ctx.reduce(
                "ReduceMean",
                ctx.slice(x, [j * n // m], [-(-(j + 1) * n // m)], [axis]),
                [axis],
                keepdims=True,
            )
            for j in range(m)
        ]
        x = cells[0] if m == 1 else ctx.op.Concat(*cells, axis=axis)
    return x


def _kernel(ctx: OpContext, nd: int) -> list[int]:
    kernel = ctx.int_array("kernel_size")
    if isinstance(kernel, ir.Value) or kernel is None:
        raise ctx.fail("a runtime pooling kernel size is not supported")
    return per_dim(ctx, kernel, nd, "kernel_size")


@mapper("pool2d", "pool3d")
def pool(ctx: OpContext) -> None:
    shape = ctx.input_shape("x")
    rank, nd = len(shape), len(shape) - 2
    last = channels_last(ctx.attr("data_format", "NCHW"))
    sizes = channels_first_shape(shape, last)[2:]
    kind = str(ctx.attr("pooling_type", "max"))
    if kind not in ("max", "avg"):
        raise ctx.fail(f"pooling type {kind!r} is not supported")
    x = to_channels_first(ctx, ctx.input("x"), rank, last)
    kernel = _kernel(ctx, nd)
    if ctx.attr("global_pooling", False):
        y = ctx.op.GlobalMaxPool(x) if kind == "max" else ctx.op.GlobalAveragePool(x)
    elif ctx.attr("adaptive", False):
        if kind == "max":
            # Paddle's CPU kernels ignore ``adaptive`` for max pooling (they slide a window of
            # the output size with the given strides); the Python API writes
            # max_pool*_with_index for adaptive max pooling instead.
            raise ctx.fail(
                "adaptive max pooling written as pool2d/pool3d has no well-defined result "
                "(Paddle's CPU kernel does not pool adaptively)",
                hint="re-export with paddle.nn.functional.adaptive_max_pool2d/3d (max_pool*_with_index)",
            )
        y = _adaptive_avg(ctx, x, sizes, kernel)
    else:
        win = _window(ctx, kernel, sizes, bool(ctx.attr("ceil_mode", False)))
        y = _pool(ctx, x, kind, win, bool(ctx.attr("exclusive", True)), ctx.input_dtype("x"), sizes)
    ctx.set_output("out", to_channels_last(ctx, y, rank, last))


@mapper("max_pool2d_with_index", "max_pool3d_with_index", min_opset=8)
def max_pool_with_index(ctx: OpContext) -> None:
    """MaxPool with Indices; ONNX indexes the whole tensor, Paddle's mask one spatial plane."""
    shape = ctx.input_shape("x")
    nd = len(shape) - 2
    sizes = list(shape[2:])
    x = ctx.input("x")
    kernel = _kernel(ctx, nd)
    if ctx.attr("global_pooling", False):
        if not is_static(sizes):
            raise ctx.fail("global max pooling with index needs static spatial sizes")
        win = _Window(sizes, [1] * nd, [(0, 0)] * nd, False)
    elif ctx.attr("adaptive", False):
        if not is_static(sizes):
            raise ctx.fail("adaptive max pooling with index needs static spatial sizes")
        if any(n % m for n, m in zip(sizes, kernel)):
            out, mask = _adaptive_argmax(ctx, x, sizes, kernel)
            ctx.set_output("out", out)
            ctx.set_output("mask", ctx.cast(mask, ctx.output_dtype("mask"), "int64"))
            return
        step = [n // m for n, m in zip(sizes, kernel)]
        win = _Window(step, step, [(0, 0)] * nd, False)
    else:
        win = _window(ctx, kernel, sizes, bool(ctx.attr("ceil_mode", False)))
        if not win.pads_fit():
            raise ctx.fail("max pooling with index with paddings as large as the kernel is not supported")
        if win.ceil and ctx.opset < 10:
            raise ctx.fail(
                "ceil_mode on dynamic spatial sizes needs opset 10 or newer", hint="pass --opset 10"
            )
    out, idx = ctx.op.MaxPool(x, **win.attrs(), _outputs=2)
    plane = (
        ctx.const_i64(int(np.prod(sizes)))
        if is_static(sizes)
        else ctx.reduce("ReduceProd", ctx.shape_of(x, 2), None, keepdims=False)
    )
    mask = (
        ctx.op.Mod(idx, plane)
        if ctx.opset >= 10
        else ctx.op.Sub(idx, ctx.op.Mul(ctx.op.Div(idx, plane), plane))
    )
    ctx.set_output("out", out)
    ctx.set_output("mask", ctx.cast(mask, ctx.output_dtype("mask"), "int64"))


def _adaptive_argmax(
    ctx: OpContext, x: ir.Value, sizes: list[int], out: list[int]
) -> tuple[ir.Value, ir.Value]:
    """Uneven adaptive max pooling with Paddle's mask, cell by cell: ReduceMax and ArgMax
    (first maximum, Paddle's scan order) of each flattened cell; a constant table maps the
    position inside the cell to the index inside the input plane."""
    nd = len(sizes)
    plane_strides = [int(np.prod(sizes[k + 1 :])) for k in range(nd)]
    maxes, indices = [], []
    for cell in itertools.product(*(range(m) for m in out)):
        bounds = [(j * n // m, -(-(j + 1) * n // m)) for j, n, m in zip(cell, sizes, out)]
        region = ctx.slice(x, [b for b, _ in bounds], [e for _, e in bounds], list(range(2, 2 + nd)))
        flat = ctx.reshape(region, [0, 0, -1])
        coords = np.indices([e - b for b, e in bounds]).reshape(nd, -1)
        table = sum((coords[k] + bounds[k][0]) * plane_strides[k] for k in range(nd)).astype(np.int64)
        maxes.append(ctx.reduce("ReduceMax", flat, [2], keepdims=True))
        indices.append(ctx.op.Gather(ctx.const_i64(table), ctx.op.ArgMax(flat, axis=2, keepdims=1), axis=0))
    shape = [0, 0, *out]
    return ctx.reshape(ctx.op.Concat(*maxes, axis=2), shape), ctx.reshape(
        ctx.op.Concat(*indices, axis=2), shape
    )
