"""Quantization: Paddle's quantize_linear / dequantize_linear and the fake_* families to ONNX QDQ.

Facts behind every rule here are in QUANT.md (section 1): both families are symmetric and
take a Paddle scale ``s`` that is an abs-max threshold; the ONNX scale is ``s / qmax`` with
``qmax = 2**(bit_length-1) - 1`` and zero point 0. Paddle's "quantized" tensors are float
tensors holding integers; here they are ONNX int8 (int16 above 8 bits) values whenever
every reader is a dequantizing op, so that the graph is the QDQ form runtimes fuse into
integer kernels:

- a quantize of a runtime tensor -> ``QuantizeLinear`` (``Clip(-s, s)`` first for round_type
  1, a Clip to the narrower range below 8 bits);
- a dequantize of a parameter -> an **int8 initializer** (from an int8 record, or from the
  integer-valued float32 Paddle stores) and ``DequantizeLinear(axis)``: weights are never
  float constants wrapped in Q/DQ unless the model itself has that (``remain_weight``);
- fused quantize-dequantize ops -> Q then DQ (weights: computed at conversion time with
  Paddle's own rounding, written as int8 + DQ);
- frozen graphs ``fake_quantize(x) -> conv/matmul(integer weight) -> fake_*dequantize``
  -> ``Conv(DQ(Q(x)), DQ(w_int8))``, the dequantize op becoming the identity (the scale
  algebra is exact: the conv is linear).
"""

from __future__ import annotations

import weakref

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import FLOAT_DTYPES, OpContext
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle.program import Op, Program

# Paddle's inverse(): a scale at or below this is replaced by s + 1e-6 before 1/s.
TINY_SCALE = 1e-30
MAX_BITS = 16

DEQUANT_OPS = frozenset({"dequantize_linear", "fake_dequantize_max_abs", "fake_channel_wise_dequantize_max_abs"})
FAKE_QUANT_OPS = frozenset(
    {"fake_quantize_abs_max", "fake_quantize_moving_average_abs_max", "fake_quantize_range_abs_max",
     "fake_channel_wise_quantize_abs_max"}
)
FAKE_QDQ_OPS = frozenset(
    {"fake_quantize_dequantize_abs_max", "fake_quantize_dequantize_moving_average_abs_max",
     "fake_channel_wise_quantize_dequantize_abs_max"}
)
# Ops with a weight whose frozen (integer weight, dequantize after) form is rewritten:
# op type -> (activation slot, weight slot).
FROZEN_CONSUMERS = {
    "conv2d": ("input", "filter"),
    "depthwise_conv2d": ("input", "filter"),
    "matmul": ("x", "y"),
    "matmul_with_flatten": ("x", "y"),  # legacy mul (fc in Paddle 1.x/2.0 programs)
}


def qmax_of(bits: int) -> int:
    return 2 ** (int(bits) - 1) - 1


# ------------------------------------------------------------------------ program analysis
_READERS: dict[int, tuple[weakref.ref, dict[str, list[Op]]]] = {}


def readers(program: Program, name: str) -> list[Op]:
    """The ops (any block) that read value ``name``."""
    key = id(program)
    entry = _READERS.get(key)
    if entry is None or entry[0]() is not program:
        index: dict[str, list[Op]] = {}
        for op in program.walk_ops():
            for names in op.inputs.values():
                for n in names:
                    index.setdefault(n, []).append(op)
        entry = (weakref.ref(program), index)
        _READERS[key] = entry
    return entry[1].get(name, [])


def _producer(program: Program, name: str, block_idx: int) -> Op | None:
    for op in program.blocks[block_idx].ops:
        for names in op.outputs.values():
            if name in names:
                return op
    return None


def _check_bits(ctx: OpContext, bits: int) -> int:
    bits = int(bits)
    if not 2 <= bits <= MAX_BITS:
        raise ctx.fail(
            f"bit_length {bits} is not supported (ONNX has integer types up to 16 bits)",
            hint="re-quantize the model with bit_length between 2 and 16",
        )
    return bits


def _check_axis(ctx: OpContext, axis: int) -> int:
    axis = int(axis)
    if axis not in (-1, 0, 1):
        raise ctx.fail(
            f"quant_axis {axis} is not supported: Paddle quantizes per tensor (-1) or per channel along "
            "axis 0 or 1",
            hint="the model is malformed or was written by an unsupported tool",
        )
    return axis


def _scale_const(ctx: OpContext, slot: str, i: int = 0) -> np.ndarray | None:
    arr = ctx.const_value(slot, i)
    return None if arr is None else np.asarray(arr, dtype=np.float64).reshape(-1)


def _channel_axis(ctx: OpContext, scale: np.ndarray, axis: int, shape: tuple[int, ...] | None, what: str) -> int | None:
    """None for per-tensor, else the checked channel axis."""
    if scale.size == 1:
        return None  # one scale is per tensor whatever quant_axis says
    if axis == -1:
        raise ctx.fail(f"{what} has {scale.size} scales but quant_axis is -1 (per tensor needs one)")
    if shape is not None:
        if axis >= len(shape):
            raise ctx.fail(f"quant_axis {axis} is out of range for the rank-{len(shape)} input")
        if shape[axis] >= 0 and shape[axis] != scale.size:
            raise ctx.fail(
                f"{what} has {scale.size} scales but the input has {shape[axis]} channels along "
                f"quant_axis {axis}",
                hint="the scale does not belong to this tensor; the model is malformed",
            )
    return axis


# ------------------------------------------------------------------------ emitting
def _int_dtype(ctx: OpContext, bits: int) -> tuple[np.dtype, int]:
    if bits <= 8:
        return np.dtype(np.int8), 8
    ctx.require_opset(21, f"{bits}-bit quantization (int16 QuantizeLinear)")
    return np.dtype(np.int16), 16


def _onnx_scale(ctx: OpContext, s: np.ndarray, qmax: int, axis: int | None, guard: bool) -> ir.Value:
    s = np.asarray(s, dtype=np.float64).reshape(-1)
    if guard:
        s = np.where(s <= TINY_SCALE, s + 1e-6, s)
    arr = (s / qmax).astype(np.float32)
    return ctx.const(arr if axis is not None else arr.reshape(()))


def _zero_point(ctx: OpContext, dtype: np.dtype, axis: int | None, n: int) -> ir.Value:
    return ctx.const(np.zeros((n,) if axis is not None else (), dtype=dtype))


def _broadcast_shape(rank: int, axis: int, n: int) -> list[int]:
    shape = [1] * rank
    shape[axis] = n
    return shape


def emit_quantize(
    ctx: OpContext, x: ir.Value, s: np.ndarray, bits: int, round_type: int, axis: int | None, rank: int | None,
    dtype: str = "float32",
) -> ir.Value:
    """Paddle's quantize of runtime ``x`` with constant abs-max ``s`` -> an ONNX integer value."""
    qmax = qmax_of(bits)
    int_dt, width = _int_dtype(ctx, bits)
    if axis is not None:
        ctx.require_opset(13, "per-channel QuantizeLinear (axis)")
    guarded = np.where(s <= TINY_SCALE, s + 1e-6, s)
    lo_q, hi_q = -qmax - 1, qmax
    if round_type == 1:
        lo_q = -qmax  # clip x to [-s, s] first (Paddle rounds half away from zero inside it)
    if round_type == 1 or width != bits:
        if axis is None:
            sc = float(guarded[0]) / qmax
            lo, hi = (-float(s[0]), float(s[0])) if round_type == 1 else (lo_q * sc, hi_q * sc)
            x = ctx.clip(x, lo, hi, dtype)
        else:
            if rank is None:
                raise ctx.fail("per-channel clipping needs the input's rank, which is unknown")
            shape = _broadcast_shape(rank, axis, s.size)
            sc = guarded / qmax
            lo_arr = -s if round_type == 1 else lo_q * sc
            hi_arr = s if round_type == 1 else hi_q * sc
            x = ctx.op.Max(ctx.op.Min(x, ctx.const(hi_arr.reshape(shape), dtype)), ctx.const(lo_arr.reshape(shape), dtype))
    scale = _onnx_scale(ctx, s, qmax, axis, guard=True)
    q = ctx.op.QuantizeLinear(x, scale, _zero_point(ctx, int_dt, axis, s.size), axis=axis)
    q.dtype = ir.DataType.from_numpy(int_dt)
    return q


def emit_dequantize(ctx: OpContext, q: ir.Value, s: np.ndarray, qmax: float, axis: int | None) -> ir.Value:
    if axis is not None:
        ctx.require_opset(13, "per-channel DequantizeLinear (axis)")
    int_dt = np.dtype(np.int16) if q.dtype == ir.DataType.INT16 else np.dtype(np.int8)
    scale = _onnx_scale(ctx, s, qmax, axis, guard=False)
    return ctx.op.DequantizeLinear(q, scale, _zero_point(ctx, int_dt, axis, s.size), axis=axis)


def paddle_quantize_array(x: np.ndarray, s: np.ndarray, bits: int, round_type: int, axis: int | None) -> np.ndarray:
    """Paddle's quantize kernel on a constant, in float32 as Paddle computes it (integers out).
    IEEE results throughout (an overflowing product is clipped, as in the kernel)."""
    with np.errstate(all="ignore"):
        return _quantize_array(x, s, bits, round_type, axis)


def _quantize_array(x: np.ndarray, s: np.ndarray, bits: int, round_type: int, axis: int | None) -> np.ndarray:
    qmax = qmax_of(bits)
    x = np.asarray(x, dtype=np.float32)
    s32 = np.asarray(s, dtype=np.float32).reshape(-1)
    if axis is not None:
        shape = _broadcast_shape(x.ndim, axis, s32.size)
        s32 = s32.reshape(shape)
    else:
        s32 = s32.reshape(())
    inv = np.where(s32 <= TINY_SCALE, np.float32(1) / (s32 + np.float32(1e-6)), np.float32(1) / np.where(s32 == 0, 1, s32))
    inv = inv.astype(np.float32)
    if round_type == 1:
        v = (np.float32(qmax) * inv * np.clip(x, -s32, s32)).astype(np.float32)
        q = np.sign(v) * np.floor(np.abs(v).astype(np.float64) + 0.5)  # half away from zero (exact in float64)
        return np.clip(q, -qmax, qmax)
    v = (np.float32(qmax) * inv * x).astype(np.float32)
    return np.clip(np.rint(v), -qmax - 1, qmax)


def int_weight(values: np.ndarray, bits: int) -> np.ndarray | None:
    """``values`` (an int8 record or integer-valued floats) as int8/int16, or None if they
    are not integers in range."""
    arr = np.asarray(values)
    dt = np.int8 if bits <= 8 else np.int16
    if arr.dtype == dt:
        return arr  # an int8 record: used as it is (no copy of the memory map)
    if arr.dtype.kind in "iu":
        lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
        if arr.size and (arr.min() < lo or arr.max() > hi):
            return None
        return arr.astype(dt)
    if arr.dtype.kind != "f":
        return None
    f = arr.astype(np.float64)
    qmax = qmax_of(bits)
    if not np.all(np.isfinite(f)) or np.any(f != np.rint(f)) or (f.size and (f.min() < -qmax - 1 or f.max() > qmax)):
        return None
    return f.astype(dt)


def weight_dq(ctx: OpContext, values: np.ndarray, s: np.ndarray, bits: int, qmax: float, axis: int | None,
              name: str | None) -> ir.Value | None:
    """int8 initializer + DequantizeLinear for a constant quantized weight (None: not integer)."""
    ints = int_weight(values, bits)
    if ints is None:
        return None
    if ints.dtype == np.int16:
        ctx.require_opset(21, "16-bit DequantizeLinear")
    q = ctx.const(np.ascontiguousarray(ints), name=(name + "_quant") if name else None)
    return emit_dequantize(ctx, q, s, qmax, axis)


def bind_quantized(ctx: OpContext, slot: str, q: ir.Value) -> None:
    """Bind a Paddle "quantized" output (float holding integers) to integer ONNX value ``q``.

    When some reader is not a dequantizing op it gets the float integers it expects.
    """
    names = ctx.pd.outputs.get(slot) or []
    if not names:
        return
    users = readers(ctx.state.program, names[0])
    if all(op.type in DEQUANT_OPS for op in users):
        ctx.set_output(slot, q)
    else:
        one = ctx.const(np.asarray(1.0, np.float32))
        zp = ctx.const(np.zeros((), dtype=np.int16 if q.dtype == ir.DataType.INT16 else np.int8))
        ctx.set_output(slot, ctx.op.DequantizeLinear(q, one, zp))


def _is_integer_value(v: ir.Value) -> bool:
    return v.dtype in (ir.DataType.INT8, ir.DataType.INT16)


def dequantize_value(ctx: OpContext, slot: str, s: np.ndarray, bits: int, qmax: float, axis: int | None) -> ir.Value:
    """A dequantize of input ``slot``: int8 weight + DQ for a constant, DQ for an ONNX integer
    value (our Q), and an exact float multiply for anything else."""
    const = ctx.const_value(slot)
    if const is not None:
        names = ctx.input_names(slot)
        out = weight_dq(ctx, const, s, bits, qmax, axis, names[0] if names else None)
        if out is not None:
            return out
    x = ctx.input(slot)
    if _is_integer_value(x):
        return emit_dequantize(ctx, x, s, qmax, axis)
    # A float tensor (runtime, or a non-integer constant): Y = X * s / qmax, exactly as Paddle.
    dtype = ctx.input_dtype(slot)
    factor = (np.asarray(s, np.float64) / qmax).astype(np.float32)
    if axis is not None:
        factor = factor.reshape(_broadcast_shape(ctx.input_rank(slot), axis, s.size))
    else:
        factor = factor.reshape(())
    return ctx.op.Mul(x, ctx.const(factor, dtype))


# ------------------------------------------------------------------------ quantize_linear
def _linear_attrs(ctx: OpContext) -> tuple[int, int, int]:
    return (
        _check_axis(ctx, ctx.attr("quant_axis", 0)),
        _check_bits(ctx, ctx.attr("bit_length", 8)),
        int(ctx.attr("round_type", 0)),
    )


@mapper("quantize_linear", min_opset=10)
def quantize_linear(ctx: OpContext) -> None:
    x = ctx.input("x")
    if ctx.attr("only_observer", False):
        ctx.set_output("y", x)
        return
    axis, bits, round_type = _linear_attrs(ctx)
    s = _scale_const(ctx, "scale")
    if s is None:
        raise ctx.fail("the scale is not a constant", hint="quantized models store their scales as parameters")
    shape = ctx.input_shape("x") if ctx.input_info("x").shape is not None else None
    ch = _channel_axis(ctx, s, axis, shape, "the scale")
    dtype = ctx.input_dtype("x")
    if dtype not in FLOAT_DTYPES:
        raise ctx.fail(f"input dtype {dtype} is not a float type")
    q = emit_quantize(ctx, x, s, bits, round_type, ch, None if shape is None else len(shape), dtype)
    bind_quantized(ctx, "y", q)
    ctx.set_output("out_scale", ctx.input("scale"))


@mapper("dequantize_linear", min_opset=10)
def dequantize_linear(ctx: OpContext) -> None:
    if ctx.attr("only_observer", False):
        ctx.set_output("y", ctx.input("x"))
        return
    axis, bits, _ = _linear_attrs(ctx)
    s = _scale_const(ctx, "scale")
    if s is None:
        raise ctx.fail("the scale is not a constant", hint="quantized models store their scales as parameters")
    info = ctx.input_info("x")
    const = ctx.const_value("x")
    shape = tuple(const.shape) if const is not None else info.shape
    ch = _channel_axis(ctx, s, axis, shape, "the scale")
    ctx.set_output("y", dequantize_value(ctx, "x", s, bits, qmax_of(bits), ch))
    ctx.set_output("out_scale", ctx.input("scale"))


# ------------------------------------------------------------------------ fake_* families
def _fake_scale(ctx: OpContext) -> np.ndarray | None:
    """The scale a non-dynamic fake quantize op uses at inference (its InScale)."""
    if ctx.pd.type in ("fake_quantize_abs_max", "fake_quantize_dequantize_abs_max"):
        const = ctx.const_value("x")  # a weight: its abs-max is known now
        if const is None:
            return None
        x = np.abs(np.asarray(const, dtype=np.float32))
        return np.asarray([x.max() if x.size else 0.0], np.float64)
    if ctx.pd.type.startswith("fake_channel_wise"):
        const = ctx.const_value("x")
        if const is None:
            return None
        axis = _check_axis(ctx, ctx.attr("quant_axis", 0))
        x = np.abs(np.asarray(const, dtype=np.float32))
        if axis == -1:
            return np.asarray([x.max() if x.size else 0.0], np.float64)
        other = tuple(i for i in range(x.ndim) if i != axis)
        return x.max(axis=other).astype(np.float64).reshape(-1)
    if not ctx.attr("is_test", False):
        raise ctx.fail(
            "is_test is false: the op would update its scale from every batch (training mode)",
            hint="export the model for inference (model.eval() / is_test=True)",
        )
    s = _scale_const(ctx, "in_scale")
    if s is None:
        raise ctx.fail("its InScale is not a constant", hint="quantized models store their scales as parameters")
    return s


def _fake_axis(ctx: OpContext, s: np.ndarray, x_shape) -> int | None:
    if not ctx.pd.type.startswith("fake_channel_wise"):
        if s.size != 1:
            raise ctx.fail(f"the scale has {s.size} values; a per-tensor op needs one")
        return None
    axis = _check_axis(ctx, ctx.attr("quant_axis", 0))
    return _channel_axis(ctx, s, axis, x_shape, "the scale") if s.size > 1 or axis >= 0 else None


def _dynamic_quantize(ctx: OpContext, bits: int, round_type: int) -> tuple[ir.Value, ir.Value, ir.Value]:
    """Per-tensor abs-max computed at run time: (q as int8, ONNX scale, Paddle scale s)."""
    x = ctx.input("x")
    dtype = ctx.input_dtype("x")
    qmax = qmax_of(bits)
    int_dt, width = _int_dtype(ctx, bits)
    s = ctx.reduce("ReduceMax", ctx.op.Abs(x), None, keepdims=False)
    guarded = ctx.op.Where(ctx.op.Greater(s, ctx.const(np.float32(TINY_SCALE), dtype)), s,
                           ctx.op.Add(s, ctx.const(np.float32(1e-6), dtype)))
    scale = ctx.op.Div(guarded, ctx.const(np.float32(qmax), dtype))
    if width != bits:  # round_type 1 needs no clip: |x| <= s by construction
        lo = ctx.op.Mul(scale, ctx.const(np.float32(-qmax - 1 if round_type == 0 else -qmax), dtype))
        x = ctx.op.Max(ctx.op.Min(x, ctx.op.Mul(scale, ctx.const(np.float32(qmax), dtype))), lo)
    zp = ctx.const(np.zeros((), dtype=int_dt))
    q = ctx.op.QuantizeLinear(x, scale, zp)
    q.dtype = ir.DataType.from_numpy(int_dt)
    return q, scale, s


@mapper(*sorted(FAKE_QDQ_OPS), min_opset=10)
def fake_quantize_dequantize(ctx: OpContext) -> None:
    """Fused quantize + dequantize: Q then DQ (a constant weight: int8 initializer + DQ)."""
    bits = _check_bits(ctx, ctx.attr("bit_length", 8))
    round_type = int(ctx.attr("round_type", 1))
    qmax = qmax_of(bits)
    s = _fake_scale(ctx)
    if s is None:
        if ctx.pd.type.startswith("fake_channel_wise"):
            raise ctx.fail("per-channel quantization of a runtime tensor (scales computed at run time) "
                           "is not supported")
        q, scale, s_val = _dynamic_quantize(ctx, bits, round_type)
        zp = ctx.const(np.zeros((), dtype=np.int16 if q.dtype == ir.DataType.INT16 else np.int8))
        ctx.set_output("out", ctx.op.DequantizeLinear(q, scale, zp))
        ctx.set_output("out_scale", ctx.reshape(s_val, [1]))
        return
    const = ctx.const_value("x")
    shape = tuple(const.shape) if const is not None else ctx.input_info("x").shape
    axis = _fake_axis(ctx, s, shape)
    if const is not None:
        ints = paddle_quantize_array(const, s, bits, round_type, axis)
        names = ctx.input_names("x")
        out = weight_dq(ctx, ints, s, bits, qmax, axis, names[0] if names else None)
        assert out is not None
    else:
        q = emit_quantize(ctx, ctx.input("x"), s, bits, round_type, axis,
                          None if shape is None else len(shape), ctx.input_dtype("x"))
        out = emit_dequantize(ctx, q, s, qmax, axis)
    ctx.set_output("out", out)
    ctx.set_output("out_scale", ctx.const(s.astype(np.float32)))


# ------------------------------------------------------------------------ frozen graphs
def frozen_plan(program: Program, quant: Op) -> dict[str, tuple[Op, Op]] | None:
    """For a fake quantize op whose every reader is a conv/matmul with an integer-valued
    parameter weight followed only by a two-scale dequantize that uses this op's scale:
    weight name -> (consumer, dequantize op). None when the pattern does not hold."""
    if quant.type not in ("fake_quantize_moving_average_abs_max", "fake_quantize_range_abs_max"):
        return None
    out = quant.output("out")
    scale_name = quant.output("out_scale") or quant.input("in_scale")
    if out is None:
        return None
    plan: dict[str, tuple[Op, Op]] = {}
    for user in readers(program, out):
        slots = FROZEN_CONSUMERS.get(user.type)
        if slots is None or user.input(slots[0]) != out or user.block_idx != quant.block_idx:
            return None
        w = user.input(slots[1])
        if w is None or w not in program.params or len(readers(program, w)) != 1 or w in plan:
            return None
        if int_weight(program.params[w], MAX_BITS) is None:
            return None  # not an integer weight: the float form stays exact
        if user.type.startswith("matmul") and (program.params[w].ndim != 2 or user.attrs.get("transpose_x")
                                               or user.attrs.get("y_num_col_dims", 1) != 1):
            return None
        y = user.output("out")
        deq = readers(program, y) if y else []
        if len(deq) != 1:
            return None
        d = deq[0]
        if d.type == "fake_dequantize_max_abs":
            if d.input("scale") != scale_name:
                return None
        elif d.type == "fake_channel_wise_dequantize_max_abs":
            scales = d.inputs.get("scales") or []
            if len(scales) != 2 or scales[1] != scale_name or scales[0] not in program.params:
                return None
        else:
            return None
        if d.input("x") != y:
            return None
        plan[w] = (user, d)
    return plan or None


def _frozen_weight_scale(ctx: OpContext, consumer: Op, deq: Op, w: np.ndarray, qmax_a: int) -> tuple[np.ndarray, int, int | None]:
    """(Paddle-style abs-max weight scale s_w, weight bits, weight channel axis) so that
    DQ(w, s_w/qmax_w) equals what the dequantize op applies after the conv/matmul."""
    if deq.type == "fake_dequantize_max_abs":
        max_range = float(deq.attrs.get("max_range", 127.0))
        # Out = X * s_a / max_range  ->  weight ONNX scale = qmax_a / max_range (s_w/qmax_w, qmax_w = 127)
        return np.asarray([127.0 * qmax_a / max_range]), 8, None
    bits_list = list(deq.attrs.get("quant_bits", [8]))
    bits_w = int(bits_list[0]) if bits_list else 8
    scales = np.asarray(ctx.state.program.params[deq.inputs["scales"][0]], np.float64).reshape(-1)
    if consumer.type in ("conv2d", "depthwise_conv2d"):
        axis = 0
    else:
        axis = 0 if consumer.attrs.get("transpose_y") else 1
    if scales.size == 1 and w.shape[axis] != 1:
        return scales, bits_w, None
    if scales.size != w.shape[axis]:
        raise ctx.fail(f"{deq.type} has {scales.size} weight scales for {w.shape[axis]} channels")
    return scales, bits_w, axis


@mapper("fake_quantize_abs_max", "fake_quantize_moving_average_abs_max", "fake_quantize_range_abs_max",
        "fake_channel_wise_quantize_abs_max", min_opset=10)
def fake_quantize(ctx: OpContext) -> None:
    """Quantize only (Out holds integers). Frozen chains become DQ(Q(x)) with int8 weights."""
    bits = _check_bits(ctx, ctx.attr("bit_length", 8))
    round_type = int(ctx.attr("round_type", 1))
    qmax = qmax_of(bits)
    s = _fake_scale(ctx)
    if s is None:
        if ctx.pd.type.startswith("fake_channel_wise"):
            raise ctx.fail("per-channel quantization of a runtime tensor is not supported")
        q, _, s_val = _dynamic_quantize(ctx, bits, round_type)
        bind_quantized(ctx, "out", q)
        ctx.set_output("out_scale", ctx.reshape(s_val, [1]))
        return
    const = ctx.const_value("x")
    shape = tuple(const.shape) if const is not None else ctx.input_info("x").shape
    axis = _fake_axis(ctx, s, shape)
    scale_value = ctx.input("in_scale") if ctx.has_input("in_scale") else ctx.const(s.astype(np.float32))
    ctx.set_output("out_scale", scale_value)
    if const is not None:  # a weight quantized in the graph: integers known now
        ctx.set_output("out", ctx.const(paddle_quantize_array(const, s, bits, round_type, axis).astype(np.float32)))
        return
    rank = None if shape is None else len(shape)
    q = emit_quantize(ctx, ctx.input("x"), s, bits, round_type, axis, rank, ctx.input_dtype("x"))
    plan = frozen_plan(ctx.state.program, ctx.pd)
    if plan is None:
        bind_quantized(ctx, "out", q)
        return
    # Frozen chain: the activation becomes its real value, each weight an int8 DQ. Paddle holds
    # integers (and their products) up to the dequantize: those values are not Paddle's.
    why = "the converter computes this frozen quantized chain in real values, where Paddle holds integers"
    ctx.state.not_paddle[ctx.pd.output("out")] = why
    for consumer, _ in plan.values():
        ctx.state.not_paddle[consumer.output("out")] = why
    ctx.set_output("out", emit_dequantize(ctx, q, s, qmax, None))
    for w_name, (consumer, deq) in plan.items():
        w = ctx.state.program.params[w_name]
        s_w, bits_w, axis_w = _frozen_weight_scale(ctx, consumer, deq, np.asarray(w), qmax)
        dq = weight_dq(ctx, w, s_w, bits_w, qmax_of(bits_w), axis_w, w_name)
        if dq is None and bits_w <= 8:  # integers beyond int8 (weights quantized with more bits)
            dq = weight_dq(ctx, w, s_w, 16, qmax_of(bits_w), axis_w, w_name)
        if dq is None:
            raise ctx.fail(f"weight {w_name!r} of the frozen {consumer.type} is not integer-valued (or above 16 bits)",
                           hint="the model was not frozen by Paddle's quantization pass")
        ctx.state.bind(w_name, dq, fresh=False)


def _frozen_dequant(ctx: OpContext) -> bool:
    """True when this dequantize closes a frozen chain already rewritten by its quantize op."""
    program = ctx.state.program
    x = ctx.pd.input("x")
    consumer = _producer(program, x, ctx.pd.block_idx) if x else None
    if consumer is None or consumer.type not in FROZEN_CONSUMERS:
        return False
    act = consumer.input(FROZEN_CONSUMERS[consumer.type][0])
    quant = _producer(program, act, ctx.pd.block_idx) if act else None
    if quant is None:
        return False
    plan = frozen_plan(program, quant)
    return plan is not None and any(d is ctx.pd for _, d in plan.values())


@mapper("fake_dequantize_max_abs", min_opset=10)
def fake_dequantize_max_abs(ctx: OpContext) -> None:
    """Out = X * Scale / max_range."""
    if _frozen_dequant(ctx):
        ctx.set_output("out", ctx.input("x"))
        return
    s = _scale_const(ctx, "scale")
    max_range = float(ctx.attr("max_range", 127.0))
    if s is None:  # a scale computed at run time (dynamic fake_quantize_abs_max before it)
        x = ctx.input("x")
        dtype = ctx.output_dtype("out")
        scale = ctx.reshape(ctx.input("scale"), [])
        if _is_integer_value(x):
            onnx_scale = ctx.op.Div(scale, ctx.const(np.float32(max_range), dtype))
            zp = ctx.const(np.zeros((), dtype=np.int16 if x.dtype == ir.DataType.INT16 else np.int8))
            ctx.set_output("out", ctx.op.DequantizeLinear(x, onnx_scale, zp))
        else:
            ctx.set_output("out", ctx.op.Div(ctx.op.Mul(x, scale), ctx.const(np.float32(max_range), dtype)))
        return
    if s.size != 1:
        raise ctx.fail(f"the scale has {s.size} values; fake_dequantize_max_abs needs one")
    ctx.set_output("out", dequantize_value(ctx, "x", s, 8, max_range, None))


@mapper("fake_channel_wise_dequantize_max_abs", min_opset=10)
def fake_channel_wise_dequantize_max_abs(ctx: OpContext) -> None:
    """1 scale: Out = X * s_c / qmax along quant_axis. 2 scales (after conv/matmul):
    Out = X * s_w[c] * s_a / (qmax_w * qmax_a) along dim x_num_col_dims."""
    if _frozen_dequant(ctx):
        ctx.set_output("out", ctx.input("x"))
        return
    n = len(ctx.input_names("scales"))
    bits = [int(b) for b in ctx.attr("quant_bits", [8])] or [8]
    for b in bits:
        _check_bits(ctx, b)
    s_w = _scale_const(ctx, "scales", 0)
    if s_w is None:
        raise ctx.fail("the weight scales are not constants")
    if n == 1:
        axis = _check_axis(ctx, ctx.attr("quant_axis", 0))
        const = ctx.const_value("x")
        shape = tuple(const.shape) if const is not None else ctx.input_info("x").shape
        ch = _channel_axis(ctx, s_w, axis, shape, "Scales[0]")
        ctx.set_output("out", dequantize_value(ctx, "x", s_w, bits[0], qmax_of(bits[0]), ch))
        return
    if n != 2 or len(bits) < 2:
        raise ctx.fail(f"{n} scales with quant_bits {bits}: expected one or two")
    s_a = _scale_const(ctx, "scales", 1)
    if s_a is None or s_a.size != 1:
        raise ctx.fail("the activation scale (Scales[1]) must be one constant")
    axis = int(ctx.attr("x_num_col_dims", 1))
    shape = ctx.input_info("x").shape
    ch = _channel_axis(ctx, s_w, axis if s_w.size > 1 else -1, shape, "Scales[0]") if s_w.size > 1 else None
    # X * s_w * s_a / (qmax_w * qmax_a) as one float multiply (X is a float conv/matmul result).
    total = s_w * float(s_a[0]) / (qmax_of(bits[0]) * qmax_of(bits[1]))
    x = ctx.input("x")
    factor = total.astype(np.float32)
    if ch is not None:
        factor = factor.reshape(_broadcast_shape(len(shape), ch, s_w.size))
    else:
        factor = factor.reshape(())
    ctx.set_output("out", ctx.op.Mul(x, ctx.const(factor, ctx.input_dtype("x"))))


@mapper("moving_average_abs_max_scale")
def moving_average_abs_max_scale(ctx: OpContext) -> None:
    """An observer: Out = X."""
    ctx.set_output("out", ctx.input("x"))
