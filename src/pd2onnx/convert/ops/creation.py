"""Tensor creation: constants, filled tensors, ranges, identity matrices, shape queries.

Arguments known at conversion time are folded into initializers with Paddle's own
arithmetic (``arange`` accumulates in the output dtype, ``linspace`` computes in double
from both ends), so constants are bit-exact; runtime arguments become ONNX graphs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.casting import c_cast
from pd2onnx.convert.context import OpContext
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle import dtypes

Scalar = int | float | bool | ir.Value
Shape = list[int] | ir.Value


# ---------------------------------------------------------------------- helpers
def is_runtime(value: Any) -> bool:
    return isinstance(value, ir.Value)


def np_scalar(value: Any, dtype: str) -> np.ndarray:
    """A Python number as a 0-D array of ``dtype`` (C-style conversion, as Paddle's Scalar does)."""
    if dtype == "bool":
        return np.asarray(bool(value))
    return c_cast(value, dtypes.to_numpy(dtype))


def runtime_scalar(ctx: OpContext, value: ir.Value, from_dtype: str | None, dtype: str) -> ir.Value:
    """A runtime one-element tensor as a 0-D tensor of ``dtype``."""
    return ctx.reshape(ctx.cast(value, dtype, from_dtype), [])


def static_shape(shape: tuple[int, ...] | None) -> list[int] | None:
    if shape is None or any(d < 0 for d in shape):
        return None
    return list(shape)


def fill(ctx: OpContext, shape: Shape, value: Scalar, dtype: str, value_dtype: str | None = None) -> ir.Value:
    """A tensor of ``shape`` filled with ``value`` in the best form the opset has.

    Constant shape and value: an initializer. Otherwise ConstantOfShape (9+, constant value),
    Expand (8+) or Tile of a reshaped scalar (7, needs the output rank).
    """
    if not is_runtime(shape) and not is_runtime(value):
        return ctx.const(np.full(shape, np_scalar(value, dtype), dtype=dtypes.to_numpy(dtype)))
    shape_v = shape if is_runtime(shape) else ctx.const_i64(shape)
    if not is_runtime(value) and ctx.opset >= 9 and dtype != "bfloat16":
        return ctx.op.ConstantOfShape(shape_v, value=ir.tensor(np_scalar(value, dtype).reshape(1)))
    scalar = (
        runtime_scalar(ctx, value, value_dtype, dtype)
        if is_runtime(value)
        else ctx.const(np_scalar(value, dtype))
    )
    if ctx.opset >= 8:
        return ctx.op.Expand(scalar, shape_v)
    out_shape = ctx.output_shape("out")
    if is_runtime(shape) and out_shape is None:
        ctx.require_opset(8, "a runtime shape of unknown rank needs Expand")
    rank = len(shape) if not is_runtime(shape) else len(out_shape)
    if rank == 0:
        return scalar
    return ctx.op.Tile(ctx.reshape(scalar, [1] * rank), shape_v)


def shape_arg(ctx: OpContext, slot: str) -> Shape:
    shape = ctx.int_array(slot)
    if shape is None:
        raise ctx.fail(f"{slot!r} is missing")
    return shape


def parse_number(text: str) -> bool | float:
    """A legacy ``str_value`` as Paddle reads it (phi ``Scalar`` from a string): a double
    ("inf", "-inf", "nan" included; so an int64 beyond 2**53 is rounded, as in Paddle, and one
    beyond the int64 range converts as C converts the double), or Paddle 3's "True"/"False"."""
    if text in ("True", "False"):
        return text == "True"
    return float(text)


def input_dtype_or(ctx: OpContext, slot: str, default: str | None) -> str | None:
    """The dtype of input ``slot`` if the op has it and it is known, else ``default``."""
    info = ctx.info(ctx.input_names(slot)[0]) if ctx.has_input(slot) else None
    return info.dtype if info is not None and info.dtype else default


# ---------------------------------------------------------------------- constants and fills
@mapper("full_int_array")
def full_int_array(ctx: OpContext) -> None:
    dtype = ctx.attr("dtype", "int64")
    ctx.set_output("out", ctx.const(np.asarray(ctx.attr("value"), dtype=dtypes.to_numpy(dtype))))


@mapper("full")
def full(ctx: OpContext) -> None:
    """fill_constant / full: attribute, ValueTensor or str_value for the value; shape may be a tensor."""
    dtype = ctx.output_dtype("out")
    value = ctx.scalar("value", 0.0)
    text = ctx.attr("str_value", "")
    if text and not ctx.has_input("value"):
        value = parse_number(text)
    value_dtype = input_dtype_or(ctx, "value", dtype)
    ctx.set_output("out", fill(ctx, shape_arg(ctx, "shape"), value, dtype, value_dtype))


@mapper("full_with_tensor")
def full_with_tensor(ctx: OpContext) -> None:
    dtype = ctx.output_dtype("out")
    value = ctx.scalar("value")
    ctx.set_output(
        "out", fill(ctx, shape_arg(ctx, "shape"), value, dtype, input_dtype_or(ctx, "value", dtype))
    )


def like_shape(ctx: OpContext, slot: str) -> Shape:
    """The shape of input ``slot``: a list when static, else Shape(x)."""
    shape = static_shape(ctx.input_shape(slot))
    return shape if shape is not None else ctx.shape_of(ctx.input(slot))


@mapper("full_like")
def full_like(ctx: OpContext) -> None:
    dtype = ctx.output_dtype("out")
    value = ctx.scalar("value", 0.0)
    value_dtype = input_dtype_or(ctx, "value", dtype)
    ctx.set_output("out", fill(ctx, like_shape(ctx, "x"), value, dtype, value_dtype))


def runtime_shape_rank(ctx: OpContext, slot: str) -> int | None:
    """The length of a runtime IntArray input (a 1-D tensor of static length, or a list of
    scalar tensors), or None when it is not known."""
    names = ctx.pd.inputs.get(slot) or []
    if len(names) != 1:
        return len(names) or None
    shape = ctx.input_info(slot).shape
    if shape is None or len(shape) > 1:
        return None
    if not shape:
        return 1  # one scalar tensor
    return shape[0] if shape[0] >= 0 else None


@mapper("empty")
def empty(ctx: OpContext) -> None:
    """Paddle leaves the contents undefined; zeros are one valid answer."""
    shape = shape_arg(ctx, "shape")
    rank = runtime_shape_rank(ctx, "shape") if is_runtime(shape) else len(shape)
    if rank is not None:
        ctx.correct_declared("out", rank=rank)
    ctx.set_output("out", fill(ctx, shape, 0, ctx.output_dtype("out")))


@mapper("empty_like")
def empty_like(ctx: OpContext) -> None:
    ctx.set_output("out", fill(ctx, like_shape(ctx, "x"), 0, ctx.output_dtype("out")))


@mapper("assign")
def assign(ctx: OpContext) -> None:
    ctx.set_output("out", ctx.input("x"))


_VALUE_ATTRS = ("values", "fp32_values", "fp64_values", "int32_values", "int64_values", "bool_values")


@mapper("assign_value")
def assign_value(ctx: OpContext) -> None:
    """Constant data in the attributes (PIR ``values``; legacy one list per dtype)."""
    dtype = ctx.output_dtype("out")
    shape = [int(d) for d in ctx.attr("shape", [])]
    values = next((ctx.attr(k) for k in _VALUE_ATTRS if ctx.attr(k)), [])
    if len(values) != math.prod(shape):
        raise ctx.fail(f"assign_value has {len(values)} values for shape {shape}")
    data = np.asarray(values)
    data = data != 0 if dtype == "bool" else c_cast(data, dtypes.to_numpy(dtype))
    ctx.set_output("out", ctx.const(data.reshape(shape)))


# ---------------------------------------------------------------------- shape queries
@mapper("shape", "shape64")
def shape(ctx: OpContext) -> None:
    """The input's shape in Paddle's declared dtype (int32 for ``shape``, int64 for ``shape64``)."""
    dtype = ctx.output_dtype("out")
    dims = static_shape(ctx.input_shape("input"))
    if dims is not None:
        ctx.set_output("out", ctx.const(np.asarray(dims, dtype=dtypes.to_numpy(dtype))))
        return
    ctx.set_output("out", ctx.cast(ctx.op.Shape(ctx.input("input")), dtype, "int64"))


@mapper("numel")
def numel(ctx: OpContext) -> None:
    dtype = ctx.output_dtype("size")
    out_shape = list(ctx.output_shape("size") or ())
    dims = static_shape(ctx.input_shape("x"))
    if dims is not None:
        ctx.set_output("size", ctx.const(np.full(out_shape, math.prod(dims), dtype=dtypes.to_numpy(dtype))))
        return
    size = ctx.cast(ctx.op.Size(ctx.input("x")), dtype, "int64")
    ctx.set_output("size", ctx.reshape(size, out_shape) if out_shape else size)


# ---------------------------------------------------------------------- ranges
def arange_size(start: np.ndarray, end: np.ndarray, step: np.ndarray) -> int:
    """Paddle's element count (funcs::GetSize) on the arguments already in the output dtype."""
    if step == 0:
        raise ValueError("arange step must not be 0")
    if start.dtype.kind == "f":
        return max(int(np.ceil(np.abs((end - start) / step))), 0)
    s, e, st = int(start), int(end), int(step)
    return max((abs(e - s) + abs(st) - 1) // abs(st), 0)


def arange_values(start: float, end: float, step: float, dtype: str) -> np.ndarray:
    """Paddle's kernel: arguments cast to ``dtype``, then start, start+step, ... accumulated in it."""
    npdt = dtypes.to_numpy(dtype)
    s, e, st = (np_scalar(v, dtype) for v in (start, end, step))
    size = arange_size(s, e, st)
    terms = np.full(size, st, dtype=npdt)
    if size:
        terms[0] = s
    return np.add.accumulate(terms, dtype=npdt)


def range_operand(ctx: OpContext, slot: str, value: Scalar, dtype: str) -> ir.Value:
    if is_runtime(value):
        return runtime_scalar(ctx, value, input_dtype_or(ctx, slot, None), dtype)
    return ctx.const(np_scalar(value, dtype))


def need_range(ctx: OpContext, what: str) -> None:
    ctx.require_opset(11, f"{what} with runtime arguments needs ONNX Range")


@mapper("arange")
def arange(ctx: OpContext) -> None:
    """Paddle casts start/end/step to the output dtype first; ONNX Range then matches it."""
    dtype = ctx.output_dtype("out")
    slots = ("start", "end", "step")
    args = [ctx.scalar(s, d) for s, d in zip(slots, (0, None, 1))]
    if not any(is_runtime(a) for a in args):
        ctx.set_output("out", ctx.const(arange_values(*args, dtype)))
        return
    need_range(ctx, "arange")
    ctx.set_output("out", ctx.op.Range(*(range_operand(ctx, s, a, dtype) for s, a in zip(slots, args))))


def linspace_values(start: float, stop: float, num: int, dtype: str) -> np.ndarray:
    """Paddle's kernel: start/stop in the dtype, step in double, the second half from stop."""
    npdt = dtypes.to_numpy(dtype)
    if num <= 1:
        return np.asarray([np_scalar(start, dtype)] * num, dtype=npdt)
    s, e = np_scalar(start, dtype), np_scalar(stop, dtype)
    step = float(np.asarray(e - s, dtype=npdt)) / (num - 1)
    i = np.arange(num, dtype=np.float64)
    vals = np.where(i < num // 2, float(s) + step * i, float(e) - step * (num - 1 - i))
    return vals.astype(npdt)


@mapper("linspace")
def linspace(ctx: OpContext) -> None:
    dtype = ctx.output_dtype("out")
    start, stop = ctx.scalar("start"), ctx.scalar("stop")
    num = ctx.scalar("number")
    if not any(is_runtime(a) for a in (start, stop, num)):
        ctx.set_output("out", ctx.const(linspace_values(start, stop, int(num), dtype)))
        return
    ctx.require_opset(9, "linspace with runtime arguments needs ONNX Where")
    s = range_operand(ctx, "start", start, dtype)
    e = range_operand(ctx, "stop", stop, dtype)
    step_num = ctx.op.Cast(ctx.op.Sub(e, s), to=ir.DataType.DOUBLE)
    s_d, e_d = ctx.cast(s, "float64", dtype), ctx.cast(e, "float64", dtype)
    if is_runtime(num):
        need_range(ctx, "linspace")
        n = runtime_scalar(ctx, num, input_dtype_or(ctx, "number", "int32"), "int64")
        i = ctx.cast(ctx.op.Range(ctx.const(np.int64(0)), n, ctx.const(np.int64(1))), "float64", "int64")
        n_d = ctx.cast(n, "float64", "int64")
        half = ctx.op.Floor(ctx.op.Div(n_d, ctx.const(2.0, "float64")))
        denom = ctx.op.Max(ctx.op.Sub(n_d, ctx.const(1.0, "float64")), ctx.const(1.0, "float64"))
        last = ctx.op.Sub(n_d, ctx.const(1.0, "float64"))
        # i == 0 always takes the start (this also covers num == 1, where Paddle returns start).
        first_half = ctx.op.Or(ctx.op.Less(i, half), ctx.op.Less(i, ctx.const(0.5, "float64")))
    else:
        num = int(num)
        i = ctx.const(np.arange(num, dtype=np.float64))
        denom = ctx.const(float(max(num - 1, 1)), "float64")
        last = ctx.const(float(num - 1), "float64")
        first_half = ctx.const((np.arange(num) < num // 2) | (np.arange(num) == 0))
    step = ctx.op.Div(step_num, denom)
    low = ctx.op.Add(s_d, ctx.op.Mul(step, i))
    high = ctx.op.Sub(e_d, ctx.op.Mul(step, ctx.op.Sub(last, i)))
    ctx.set_output("out", ctx.cast(ctx.op.Where(first_half, low, high), dtype, "float64"))


@mapper("eye")
def eye(ctx: OpContext) -> None:
    dtype = ctx.output_dtype("out")
    rows = ctx.scalar("num_rows")
    cols = ctx.scalar("num_columns", -1)
    if not is_runtime(cols) and int(cols) < 0:
        cols = rows
    if not is_runtime(rows) and not is_runtime(cols):
        ctx.set_output("out", ctx.const(np.eye(int(rows), int(cols), dtype=dtypes.to_numpy(dtype))))
        return
    need_range(ctx, "eye")
    zero, one = ctx.const(np.int64(0)), ctx.const(np.int64(1))

    def axis_range(slot: str, value: Scalar) -> ir.Value:
        return ctx.op.Range(zero, range_operand(ctx, slot, value, "int64"), one)

    r = ctx.unsqueeze(axis_range("num_rows", rows), [1])
    c = axis_range("num_columns" if cols is not rows else "num_rows", cols)
    ctx.set_output("out", ctx.cast(ctx.op.Equal(r, c), dtype, "bool"))


@mapper("full_batch_size_like")
def full_batch_size_like(ctx: OpContext) -> None:
    """A filled tensor of ``shape`` whose dim ``output_dim_idx`` is the input's dim
    ``input_dim_idx`` (legacy ``fill_constant_batch_size_like``)."""
    dtype = ctx.output_dtype("out")
    shape = [int(d) for d in ctx.attr("shape", [])]
    in_idx, out_idx = int(ctx.attr("input_dim_idx", 0)), int(ctx.attr("output_dim_idx", 0))
    in_shape = ctx.input_shape("input")
    in_idx = ctx.normalize_axis(in_idx, len(in_shape))
    out_idx = ctx.normalize_axis(out_idx, len(shape))
    value: Scalar = ctx.attr("value", 0.0)
    text = ctx.attr("str_value", "")
    if text:
        value = parse_number(text)
    if in_shape[in_idx] >= 0:
        shape[out_idx] = in_shape[in_idx]
        ctx.set_output("out", fill(ctx, shape, value, dtype))
        return
    ctx.require_opset(8, "a fill shaped by a runtime dim needs Expand or ConstantOfShape")
    parts = []
    if out_idx:
        parts.append(ctx.const_i64(shape[:out_idx]))
    parts.append(ctx.shape_of(ctx.input("input"), in_idx, in_idx + 1))
    if out_idx + 1 < len(shape):
        parts.append(ctx.const_i64(shape[out_idx + 1 :]))
    shape_v = parts[0] if len(parts) == 1 else ctx.op.Concat(*parts, axis=0)
    ctx.set_output("out", fill(ctx, shape_v, value, dtype))


@mapper("fill_zeros_like")
def fill_zeros_like(ctx: OpContext) -> None:
    ctx.set_output("out", fill(ctx, like_shape(ctx, "x"), 0, ctx.output_dtype("out")))
