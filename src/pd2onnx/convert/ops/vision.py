"""Vision ops: interpolation (``*_interp``) and ``grid_sample``.

Paddle's interpolation kernels (phi ``interpolate_kernel``), per spatial axis:

- output size: ``size_tensor`` > ``out_size`` > scale (``scale_tensor`` > ``scale``, then
  ``out = int(float(in) * scale)``) > the ``out_d/out_h/out_w`` attributes; when every
  spatial size is unchanged the input is copied, whatever the scale;
- ratio (float32): 0 when out == 1; ``(in-1)/(out-1)`` with align_corners; else ``1/scale``
  (double division) with a scale, ``in/out`` without; output sizes from a scale attribute are
  ``int(in * scale)`` in double in Paddle 3, in float32 in Paddle 2;
- nearest: ``int(ratio*k)``, or ``int(ratio*k + 0.5)`` with align_corners;
- linear/bilinear/trilinear: half-pixel with negative coordinates clamped (align_mode 0) or
  ``ratio*k`` (align_mode 1); bicubic: half-pixel (no clamping), a = -0.75. The half-pixel
  coordinate is rounded once from double or computed in float32 depending on the kernel and
  the Paddle build (``half_pixel_in_double``).

ONNX Resize divides by out/in where Paddle multiplies by its float32 ratio in/out: last-bit
coordinate differences that a sharp edge turns into 3e-5 of its height. So Resize is used only
where it is exact in every runtime (power-of-two ratios; nearest: ``nearest_resize_ok``; never
for bicubic, whose Resize is ~10x slower in ONNX Runtime), and otherwise Gathers of the
neighbours (taps) Paddle reads, weighted by its float32 weights: constants for static sizes,
graph ops for runtime sizes (docs/interpolation.md, with the forms measured and their cost).
Both forms give the same result in ONNX Runtime and OpenVINO (docs/runtimes.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle.program import Op

INTERP_OPS = ("nearest_interp", "bilinear_interp", "bicubic_interp", "linear_interp", "trilinear_interp")
LINEAR_METHODS = ("linear", "bilinear", "trilinear")
_TENSOR_SLOTS = ("out_size", "size_tensor", "scale_tensor")

F32 = np.float32


# ---------------------------------------------------------------------- what the op asks for
def _attr_scales(attrs: dict, n: int) -> list[float] | None:
    """The ``scale`` attribute as the kernel reads it (2-D/3-D ignore a single value)."""
    scale = attrs.get("scale")
    if isinstance(scale, (int, float)):
        scale = [scale]
    scale = [float(s) for s in scale or []]
    if (n == 1 and len(scale) >= 1) or len(scale) > 1:
        values = scale[:n] if n > 1 else scale[:1]
        return values if all(s > 0 for s in values) else None
    return None


def _is_pow2(x: float) -> bool:
    m, _ = np.frexp(x)
    return x > 0 and m == 0.5


def _has_tensor(op: Op) -> bool:
    return any(op.inputs.get(s) for s in _TENSOR_SLOTS)


def interp_min_opset(op: Op) -> int:
    """7 (Upsample) / 10 (Resize-10) only for the asymmetric cases with constant scales, else 11."""
    method = op.type.split("_")[0]
    if _has_tensor(op):
        return 11
    n = 3 if method == "trilinear" else 1 if method == "linear" else 2
    scales = _attr_scales(op.attrs, n)
    if method == "nearest":
        if op.attrs.get("align_corners") or scales is None:
            return 7  # Gather with indices computed from the (static or runtime) input size
        if all(_is_pow2(s) for s in scales):
            return 7 if all(s >= 1 for s in scales) else 10
        return 11
    if method in ("bilinear",) and scales is not None and not op.attrs.get("align_corners"):
        if int(op.attrs.get("align_mode", 1)) == 1 and not any(1 < s < 2 for s in scales):
            return 7 if all(s >= 1 for s in scales) else 10
    return 11


@dataclass
class Plan:
    """Spatial axes of the channel-first input and what Paddle computes for them."""

    method: str
    n: int
    align_corners: bool
    align_mode: int
    in_static: list[int] | None  # spatial input dims when all static
    sizes: list[int] | ir.Value | None = None  # from a size argument (int64)
    scales: list[float] | ir.Value | None = None  # from a scale argument (float32)
    # out = int(in * scale) in double (Paddle 3 keeps the scale attribute in double) or float32
    double_sizes: bool = False


def _scale_tensor(ctx: OpContext, n: int) -> list[float] | ir.Value:
    const = ctx.const_value("scale_tensor")
    if const is not None:
        vals = [float(v) for v in np.asarray(const, dtype=np.float32).reshape(-1)]
        return vals[:n] if len(vals) > 1 else vals * n
    value = ctx.reshape(ctx.cast(ctx.input("scale_tensor"), "float32", ctx.input_dtype("scale_tensor")), [-1])
    length = ctx.input_shape("scale_tensor")
    if n > 1 and (len(length) == 0 or length[0] == 1):
        return ctx.op.Expand(value, ctx.const_i64([n]))
    if n > 1 and (len(length) == 1 and length[0] > n):
        return ctx.slice(value, [0], [n], [0])
    return value


def make_plan(ctx: OpContext, method: str, n: int, x_shape: tuple[int, ...]) -> Plan:
    spatial = list(x_shape[2:])
    plan = Plan(
        method,
        n,
        bool(ctx.attr("align_corners", False)),
        int(ctx.attr("align_mode", 1)),
        spatial if all(d >= 0 for d in spatial) else None,
    )
    if ctx.has_input("size_tensor"):
        plan.sizes = ctx.int_array("size_tensor")
        return plan
    scales = _scale_tensor(ctx, n) if ctx.has_input("scale_tensor") else _attr_scales(ctx.pd.attrs, n)
    if ctx.has_input("out_size"):
        if scales is not None and not plan.align_corners:
            raise ctx.fail("both a scale and out_size are given", hint="give the op either a size or a scale")
        plan.sizes = ctx.int_array("out_size")
        return plan
    if scales is not None:
        plan.scales = scales
        from_attr = isinstance(scales, list) and not ctx.has_input("scale_tensor")
        plan.double_sizes = from_attr and not ctx.paddle2_semantics
        return plan
    attrs = [int(ctx.attr(k, -1)) for k in ("out_d", "out_h", "out_w")][3 - n :]
    if any(a <= 0 for a in attrs):
        raise ctx.fail(f"no output size or scale (out_d/out_h/out_w = {attrs})")
    plan.sizes = attrs
    return plan


def static_out(plan: Plan) -> list[int] | None:
    """Spatial output sizes when known at conversion time."""
    if isinstance(plan.sizes, list):
        return plan.sizes
    if isinstance(plan.scales, list) and plan.in_static is not None:
        if plan.double_sizes:
            return [int(i * s) for i, s in zip(plan.in_static, plan.scales)]
        return [int(F32(i) * F32(s)) for i, s in zip(plan.in_static, plan.scales)]
    return None


# ---------------------------------------------------------------------- layout
def _to_channel_first(ctx: OpContext, x: ir.Value, rank: int, channel_last: bool) -> ir.Value:
    if not channel_last:
        return x
    return ctx.op.Transpose(x, perm=[0, rank - 1, *range(1, rank - 1)])


def _from_channel_first(ctx: OpContext, y: ir.Value, rank: int, channel_last: bool) -> ir.Value:
    if not channel_last:
        return y
    return ctx.op.Transpose(y, perm=[0, *range(2, rank), 1])


def _cf_shape(shape: tuple[int, ...], channel_last: bool) -> tuple[int, ...]:
    return (shape[0], shape[-1], *shape[1:-1]) if channel_last else tuple(shape)


# ---------------------------------------------------------------------- runtime pieces
def _spatial_dims(ctx: OpContext, x: ir.Value, n: int) -> ir.Value:
    """Shape(x)[2:] as int64 (channel-first x)."""
    return ctx.shape_of(x, 2, 2 + n)


def _out_sizes_value(ctx: OpContext, plan: Plan, x: ir.Value) -> ir.Value:
    """Spatial output sizes as an int64 tensor (runtime)."""
    if plan.sizes is not None:
        return plan.sizes if isinstance(plan.sizes, ir.Value) else ctx.const_i64(plan.sizes)
    # Paddle 3: int(in * scale) in double, which decides sizes such as 700 * 1.3 = 910 (909 in
    # float32) and 90 * 0.7 = 62 (the product rounds below the integer); OpenVINO computes float64
    # in float32 (runtime_notes: float64-as-float32)
    ftype = "float64" if plan.double_sizes else "float32"
    in_f = ctx.cast(_spatial_dims(ctx, x, plan.n), ftype, "int64")
    if isinstance(plan.scales, ir.Value):
        scales = plan.scales
    else:
        scales = ctx.const(np.asarray(plan.scales, np.float64 if plan.double_sizes else F32))
    return ctx.cast(ctx.op.Floor(ctx.op.Mul(in_f, scales)), "int64", ftype)


def _copies_input(plan: Plan) -> bool | None:
    """Whether Paddle copies the input (all spatial sizes unchanged); None if only known at runtime."""
    out = static_out(plan)
    if out is not None and plan.in_static is not None:
        return out == plan.in_static
    if isinstance(plan.scales, list) and not any(1 < s < 2 for s in plan.scales):
        return all(s == 1 for s in plan.scales)  # in*s == in only for s in (1, 2) or s == 1
    if isinstance(plan.scales, list) or isinstance(plan.scales, ir.Value):
        return None
    return False  # sizes: an unchanged size gives ratio 1, which already copies


def _all_same_size(ctx: OpContext, plan: Plan, x: ir.Value) -> ir.Value:
    """Runtime flag: every spatial output size equals the input's."""
    same = ctx.op.Equal(_out_sizes_value(ctx, plan, x), _spatial_dims(ctx, x, plan.n))
    as_int = ctx.cast(same, "int64", "bool")
    return ctx.cast(ctx.reduce("ReduceMin", as_int, [0], keepdims=False), "bool", "int64")


# ---------------------------------------------------------------------- nearest (exact)
def _ratio_np(in_dim: int, out_dim: int, scale: float | None, align: bool) -> np.float32:
    """Paddle's float32 source/output ratio of one axis (nearest and linear kernels)."""
    if out_dim <= 1:
        return F32(0.0)
    if align:
        return F32(in_dim - 1) / F32(out_dim - 1)
    if scale is not None:
        return F32(1.0 / scale)
    return F32(in_dim) / F32(out_dim)


def nearest_indices_np(in_dim: int, out_dim: int, scale: float | None, align: bool) -> np.ndarray:
    """Paddle's nearest source indices for one axis, in its float32/double arithmetic."""
    ratio = _ratio_np(in_dim, out_dim, scale, align)
    prod = np.arange(out_dim, dtype=F32) * ratio
    if align:
        return (prod.astype(np.float64) + 0.5).astype(np.int64)
    return prod.astype(np.int64)


def _nearest_ratios(ctx: OpContext, plan: Plan, dims: ir.Value, outs: ir.Value) -> ir.Value:
    """float32 [n]: Paddle's ratio of each axis (runtime sizes; int64 [n] dims and outs)."""
    if isinstance(plan.scales, list) and not plan.align_corners:
        return ctx.const(np.asarray([1.0 / s for s in plan.scales], F32))
    if plan.scales is not None and not plan.align_corners:
        return _reciprocal_f32(ctx, plan.scales)
    one = ctx.const_i64([1])
    num, den = (ctx.op.Sub(dims, one), ctx.op.Sub(outs, one)) if plan.align_corners else (dims, outs)
    if ctx.opset >= 11:
        # out == 1 with align_corners: index 0 whatever the ratio
        return _quotient_f32(ctx, num, ctx.op.Where(ctx.op.Less(den, one), one, den))
    # no integer Mod/Where below: a float Div (exact in ONNX Runtime, not in OpenVINO; Max in
    # float32, exact for sizes, as integer Max needs opset 12)
    den = ctx.op.Max(ctx.cast(den, "float32", "int64"), ctx.const(np.ones(plan.n, F32)))  # Max-6: no broadcast
    return ctx.op.Div(ctx.cast(num, "float32", "int64"), den)


def _nearest_indices_graph(ctx: OpContext, out_dim: ir.Value | int, ratio: ir.Value, align: bool) -> ir.Value:
    """Paddle's nearest source indices as ONNX ops: int(ratio * k), + 0.5 with align_corners
    (out_dim: an int64 scalar or int; ratio: a float32 scalar)."""
    if isinstance(out_dim, int):
        k = ctx.const(np.arange(out_dim, dtype=F32))
    else:
        k = ctx.cast(_arange(ctx, out_dim, "nearest interpolation to a runtime size"), "float32", "int64")
    prod = ctx.op.Mul(k, ratio)
    if align:
        prod = ctx.op.Add(ctx.cast(prod, "float64", "float32"), ctx.const(0.5, "float64"))
        return ctx.cast(ctx.op.Floor(prod), "int64", "float64")
    return ctx.cast(ctx.op.Floor(prod), "int64", "float32")


_POW2_F32 = np.array([2.0**j for j in range(-40, 31)], F32)  # 2^-40 .. 2^30, exact float32 values
_STEP_BITS = 8  # bits divided out per long-division step
_SHIFTS = np.array([2**j for j in range(_STEP_BITS + 1)], np.int64)


def _quotient_f32(ctx: OpContext, a: ir.Value, b: ir.Value) -> ir.Value:
    """float32(a) / float32(b), correctly rounded, elementwise for int64 [n] vectors with
    0 <= a < 2^15 and 1 <= b < 2^15.

    Not a float Div: OpenVINO divides floats as a * (1 / b) (80 / 200 gives 0.39999998, one
    float32 step below Paddle's 0.4), which moves the nearest index of whole rows. Its integer
    Div, Mod and comparisons are exact only below 2^24 (they go through float32), so every
    integer here stays below that: the exponent e (2^e <= a/b < 2^(e+1)) comes from exact float
    comparisons with b * 2^j and a * 2^j; the significand m = a * 2^(23-e) // b by long
    division, 8 bits a step (remainder * 2^8 < 2^23); then m is rounded half to even from the
    last remainder and scaled by 2^(e-23), both exact in float32."""
    f32, i64 = "float32", "int64"
    af, bf = ctx.unsqueeze(ctx.cast(a, f32, i64), [1]), ctx.unsqueeze(ctx.cast(b, f32, i64), [1])
    ups = ctx.op.Not(ctx.op.Greater(ctx.op.Mul(bf, ctx.const(_POW2_F32[None, 41:])), af))
    downs = ctx.op.Less(ctx.op.Mul(af, ctx.const(_POW2_F32[None, 40:])), bf)
    e = ctx.op.Sub(  # #{j >= 1: b * 2^j <= a} - #{j >= 0: a * 2^j < b}
        ctx.reduce("ReduceSum", ctx.cast(ups, i64, "bool"), [1], keepdims=False),
        ctx.reduce("ReduceSum", ctx.cast(downs, i64, "bool"), [1], keepdims=False))
    left = ctx.op.Sub(ctx.const(np.int64(23)), e)  # bits to divide out: 9 .. 38 for sizes below 2^15
    q, r = ctx.op.Div(a, b), ctx.op.Mod(a, b)
    full = ctx.const(np.int64(_STEP_BITS))
    for _ in range(5):
        step = ctx.op.Where(ctx.op.Less(left, full), left, full)
        shift = ctx.op.Gather(ctx.const(_SHIFTS), step, axis=0)
        shifted = ctx.op.Mul(r, shift)
        q = ctx.op.Add(ctx.op.Mul(q, shift), ctx.op.Div(shifted, b))
        r = ctx.op.Mod(shifted, b)
        left = ctx.op.Sub(left, step)
    twice = ctx.op.Add(r, r)  # round half to even: up when 2r > b, or 2r == b and q is odd
    odd = ctx.op.Equal(ctx.op.Mod(q, ctx.const(np.int64(2))), ctx.const(np.int64(1)))
    up = ctx.op.Or(ctx.op.Greater(twice, b), ctx.op.And(ctx.op.Equal(twice, b), odd))
    q = ctx.op.Add(q, ctx.cast(up, i64, "bool"))
    # 2^(e-23) (a = 0 reads a wrong power, from the table's end, of a zero significand)
    power = ctx.op.Gather(ctx.const(_POW2_F32), ctx.op.Add(e, ctx.const(np.int64(40 - 23))), axis=0)
    return ctx.op.Mul(ctx.cast(q, f32, i64), power)


def _arange(ctx: OpContext, n: ir.Value, what: str) -> ir.Value:
    """0, 1, ..., n-1 (int64) for a runtime scalar n: ONNX Range, from opset 11."""
    ctx.require_opset(11, f"{what} needs ONNX Range")
    return ctx.op.Range(ctx.const(np.int64(0)), n, ctx.const(np.int64(1)))


def _reciprocal_f32(ctx: OpContext, scale: ir.Value) -> ir.Value:
    """float(1.0 / scale) with the division in double, as the kernel does."""
    inv = ctx.op.Div(ctx.const(1.0, "float64"), ctx.cast(scale, "float64", "float32"))
    return ctx.cast(inv, "float32", "float64")


def _gather_order(plan: Plan) -> list[int]:
    """The order of the per-axis Gathers. ONNX Runtime's Gather along the last axis copies
    element by element, along the others row by row, so the last axis goes while the tensor is
    smallest: first when the other axes grow, last when they shrink (2x either way, measured on
    64x80x80 <-> 64x200x200); in axis order when that is known only at run time."""
    n = plan.n
    out = static_out(plan)
    if out is not None and plan.in_static is not None:
        grow = np.prod(out[:-1]) > np.prod(plan.in_static[:-1])
    elif isinstance(plan.scales, list):
        grow = np.prod(plan.scales[:-1]) > 1
    else:
        grow = False
    return [n - 1, *range(n - 1)] if grow and n > 1 else list(range(n))


def _gather_axis(ctx: OpContext, y: ir.Value, index: ir.Value, axis: int, rank: int) -> ir.Value:
    """Gather along ``axis``; along the last axis through a Transpose that moves it in front of
    the channels and back: ONNX Runtime's Gather copies element by element along the last axis
    and whole rows along the others. Nearest 64x80x80 -> 64x200x200 to a runtime size, 1 thread:
    ONNX Runtime 20 ms -> 2.9 ms; OpenVINO, whose last-axis Gather is fast, 3.3 ms -> 8.7 ms (as
    fast as its own Resize of these sizes)."""
    if axis != rank - 1:
        return ctx.op.Gather(y, index, axis=axis)
    perm = [0, axis, *range(1, axis)]
    moved = ctx.op.Gather(ctx.op.Transpose(y, perm=perm), index, axis=1)
    return ctx.op.Transpose(moved, perm=[int(i) for i in np.argsort(perm)])


def nearest_gather(ctx: OpContext, plan: Plan, x: ir.Value) -> ir.Value:
    out_static = static_out(plan)
    copies = _copies_input(plan)
    if copies:
        return x
    if plan.in_static is not None and out_static is not None:
        y = x
        for j in _gather_order(plan):
            i, o = plan.in_static[j], out_static[j]
            idx = nearest_indices_np(
                i, o, None if plan.scales is None else plan.scales[j], plan.align_corners
            )
            if not np.array_equal(idx, np.arange(i)):
                y = _gather_axis(ctx, y, ctx.const(idx), 2 + j, 2 + plan.n)
        return y
    dims = _spatial_dims(ctx, x, plan.n)
    outs = out_static if out_static is not None else _out_sizes_value(ctx, plan, x)
    same = _all_same_size(ctx, plan, x) if copies is None else None
    ratios = _nearest_ratios(ctx, plan, dims, ctx.const_i64(outs) if isinstance(outs, list) else outs)
    y = x
    for j in _gather_order(plan):
        in_j = ctx.reshape(ctx.slice(dims, [j], [j + 1], [0]), [])
        out_j = outs[j] if isinstance(outs, list) else ctx.reshape(ctx.slice(outs, [j], [j + 1], [0]), [])
        ratio_j = ctx.reshape(ctx.slice(ratios, [j], [j + 1], [0]), [])
        idx = _nearest_indices_graph(ctx, out_j, ratio_j, plan.align_corners)
        if same is not None:
            idx = ctx.op.Where(same, _arange(ctx, in_j, "nearest interpolation that may copy its input"), idx)
        y = _gather_axis(ctx, y, idx, 2 + j, 2 + plan.n)
    return y


# Positions checked for an axis whose output size is known only at run time (a constant scale
# on a dynamic input): Resize is used when it picks Paddle's index at every one of them.
RUNTIME_CHECKED = 1 << 16


def onnx_nearest_np(out_dim: int, scale: np.float32) -> np.ndarray:
    """ONNX Resize's nearest source indices (asymmetric, floor): floor(k / scale) in float32,
    as ONNX Runtime and OpenVINO compute them (for the exactly representable scales used
    here, floor(k * float32(1 / scale)) gives the same)."""
    return np.floor(np.arange(out_dim, dtype=F32) / scale).astype(np.int64)


def _resize_scale(plan: Plan, j: int) -> np.float32 | None:
    """The scale Resize reads for axis j when it is exact: the op's own scale when a few binary
    digits write it (2.5, 1.5, 3, 0.75, ...: the output size floor(in * scale) is then the same
    in every runtime's arithmetic), or out / in when that is a float32 value. None otherwise."""
    if isinstance(plan.scales, list):
        scale = plan.scales[j]
        return F32(scale) if scale > 0 and float(F32(scale)) == scale and (scale * 256).is_integer() else None
    out, inp = static_out(plan), plan.in_static
    if out is None or inp is None or inp[j] <= 0:
        return None
    scale = F32(out[j] / inp[j])
    return scale if float(scale) * inp[j] == out[j] else None


def nearest_resize_ok(plan: Plan, opset: int) -> bool:
    """Whether ONNX Resize (nearest, asymmetric, floor) picks the source index Paddle picks at
    every output position, so that Resize (one pass, ~10x faster than Gathers in ONNX Runtime)
    can stand for the Gathers. Ratios that are powers of two are exact in every opset's form
    (Upsample included); other exactly written scales, from Resize-11, where the indices are
    compared at conversion time: every output position for static sizes, the first
    ``RUNTIME_CHECKED`` for a scale on a dynamic input."""
    if plan.align_corners:
        return False
    out = static_out(plan)
    if isinstance(plan.scales, list):
        ratios = plan.scales
    elif out is not None and plan.in_static is not None:
        ratios = [o / i for i, o in zip(plan.in_static, out)]
    else:
        return False  # sizes known only at run time
    if all(_is_pow2(r) for r in ratios):
        return True
    if opset < 11:
        return False
    for j in range(plan.n):
        scale = _resize_scale(plan, j)
        if scale is None:
            return False
        n_out = out[j] if out is not None else RUNTIME_CHECKED
        in_dim = plan.in_static[j] if plan.in_static is not None else 1  # unused with a scale
        paddle = nearest_indices_np(in_dim, n_out, None if plan.scales is None else plan.scales[j], False)
        if not np.array_equal(paddle, onnx_nearest_np(n_out, scale)):
            return False
    return True


# ---------------------------------------------------------------------- Resize
def _coordinate_mode(plan: Plan) -> str:
    if plan.align_corners:
        return "align_corners"
    if plan.method == "nearest" or (plan.method != "bicubic" and plan.align_mode == 1):
        return "asymmetric"
    # pytorch_half_pixel maps out == 1 to coordinate 0 like Paddle's ratio 0 (linear clamps -0.5).
    return "pytorch_half_pixel" if plan.method != "bicubic" else "half_pixel"


def _onnx_mode(method: str) -> str:
    return {"nearest": "nearest", "bicubic": "cubic"}.get(method, "linear")


def _full(ctx: OpContext, x: ir.Value, spatial: ir.Value, lead: np.ndarray | None) -> ir.Value:
    """[N, C, *spatial] for opsets without Resize axes: lead constants or Shape(x)[:2]."""
    head = ctx.const(lead) if lead is not None else ctx.shape_of(x, 0, 2)
    return ctx.op.Concat(head, spatial, axis=0)


def _low_opset_scales(plan: Plan, scales: list[float] | ir.Value | None) -> list[float] | None:
    """Constant scales for Upsample / Resize-10 (sizes only when out/in is an exact power of two);
    None when only Resize-11 can express the op."""
    if isinstance(scales, list):
        return scales
    out = static_out(plan)
    if scales is None and out is not None and plan.in_static is not None:
        ratios = [o / i for i, o in zip(plan.in_static, out)]
        if all(_is_pow2(r) for r in ratios):
            return ratios
    return None


def resize(ctx: OpContext, plan: Plan, x: ir.Value, x_shape: tuple[int, ...]) -> ir.Value:
    rank = 2 + plan.n
    mode = _onnx_mode(plan.method)
    attrs = {"mode": mode, "coordinate_transformation_mode": _coordinate_mode(plan)}
    if mode == "nearest":
        attrs["nearest_mode"] = "floor"
    if mode == "cubic":
        attrs["cubic_coeff_a"] = -0.75
    if plan.method == "bicubic" and not plan.align_corners and 1 in (static_out(plan) or []):
        raise ctx.fail(
            "bicubic to an output size of 1 uses coordinate -0.5, which ONNX Resize cannot express"
        )

    scales = plan.scales
    if scales is not None and _copies_input(plan) is None:  # Paddle copies when no size changes
        scales_v = scales if isinstance(scales, ir.Value) else ctx.const(np.asarray(scales, F32))
        scales = ctx.op.Where(_all_same_size(ctx, plan, x), ctx.const(np.ones(plan.n, F32)), scales_v)
    elif scales is not None and _copies_input(plan):
        return x

    low = _low_opset_scales(plan, scales) if ctx.opset < 11 else None
    if ctx.opset < 11 and low is None:
        ctx.require_opset(11, "runtime scales or sizes that are not a power-of-two ratio need Resize-11")
    if low is not None:
        full = [1.0, 1.0, *low]
        if ctx.opset >= 10:
            return ctx.op.Resize(x, ctx.const(np.asarray(full, F32)), mode=mode)
        if ctx.opset >= 9:
            return ctx.op.Upsample(x, ctx.const(np.asarray(full, F32)), mode=mode)
        return ctx.op.Upsample(x, scales=full, mode=mode)

    axes = list(range(2, rank))
    if ctx.opset >= 18:
        if scales is not None:
            s = scales if isinstance(scales, ir.Value) else ctx.const(np.asarray(scales, F32))
            return ctx.op.Resize(x, None, s, None, axes=axes, **attrs)
        sizes = plan.sizes if isinstance(plan.sizes, ir.Value) else ctx.const_i64(plan.sizes)
        return ctx.op.Resize(x, None, None, sizes, axes=axes, **attrs)

    roi = ctx.const(np.zeros(0, F32)) if ctx.opset < 13 else None
    if scales is not None:
        if isinstance(scales, list):
            s = ctx.const(np.asarray([1.0, 1.0, *scales], F32))
        else:
            s = ctx.op.Concat(ctx.const(np.ones(2, F32)), scales, axis=0)
        return ctx.op.Resize(x, roi, s, **attrs)
    lead = None if any(d < 0 for d in x_shape[:2]) else np.asarray(x_shape[:2], np.int64)
    if isinstance(plan.sizes, list) and lead is not None:
        sizes = ctx.const_i64([*x_shape[:2], *plan.sizes])
    else:
        spatial = plan.sizes if isinstance(plan.sizes, ir.Value) else ctx.const_i64(plan.sizes)
        sizes = _full(ctx, x, spatial, lead)
    empty_scales = ctx.const(np.zeros(0, F32)) if ctx.opset < 13 else None
    return ctx.op.Resize(x, roi, empty_scales, sizes, **attrs)


@mapper(*INTERP_OPS, min_opset=interp_min_opset)
def interpolate(ctx: OpContext) -> None:
    method = ctx.pd.type.split("_")[0]
    x = ctx.input("x")
    shape = ctx.input_shape("x")
    rank = len(shape)
    if rank not in (3, 4, 5):
        raise ctx.fail(f"{method} interpolation of a rank-{rank} tensor is not supported")
    channel_last = str(ctx.attr("data_format", "NCHW")).upper().endswith("C")
    cf_shape = _cf_shape(shape, channel_last)
    plan = make_plan(ctx, method, rank - 2, cf_shape)
    xc = _to_channel_first(ctx, x, rank, channel_last)
    dtype = ctx.input_dtype("x")
    # ONNX Runtime resizes only these types (Resize-11+; Upsample and Resize-10: floats only)
    resizable = ("float32", "float16", "int32", "int8", "uint8") if ctx.opset >= 11 else ("float32", "float16")
    if method == "nearest" and (not nearest_resize_ok(plan, ctx.opset) or dtype not in resizable + ("float64",)):
        y = nearest_gather(ctx, plan, xc)  # exact for every dtype
    elif dtype == "uint8" and method == "linear" and not ctx.paddle2_semantics:
        y = _west_gather(ctx, plan, xc)
    elif dtype == "uint8" and method in ("linear", "bilinear", "trilinear"):
        y = _uint8_linear(ctx, plan, xc, cf_shape)
    elif method != "nearest" and dtype in ("float32", "float64") and _gathers_linear(plan):
        y = (bicubic_gather if method == "bicubic" else linear_gather)(ctx, plan, xc, dtype)
    elif method != "nearest" and dtype in ("float32", "float64") and _runtime_sizes(plan) \
            and (_gathers_bicubic(plan) or not linear_resize_exact(plan)):
        y = (bicubic_gather_runtime if method == "bicubic" else linear_gather_runtime)(ctx, plan, xc, dtype)
    else:
        # float types without a Resize kernel (float64, bfloat16) are computed in float32 by the
        # legalization pass; integers other than these would change meaning there
        if dtype not in resizable + ("float64", "bfloat16"):
            raise ctx.fail(f"{method} interpolation of a {dtype} tensor: ONNX Runtime's Resize has no {dtype} kernel")
        y = ctx.in_float32("Resize", dtype, lambda a: resize(ctx, plan, a, cf_shape), xc)
    ctx.set_output("output", _from_channel_first(ctx, y, rank, channel_last))


def _axis_ratio(in_dim: int, out_dim: int, scale: float | None, align: bool) -> np.float32:
    """Paddle's float32 source step for one axis."""
    if out_dim <= 1:
        return F32(0.0)
    if align:
        return F32(in_dim - 1) / F32(out_dim - 1)
    return F32(1.0 / scale) if scale is not None else F32(in_dim) / F32(out_dim)


def half_pixel_in_double(method: str, axis: int, paddle2: bool) -> bool:
    """Whether Paddle's half-pixel source coordinate ``ratio * (k + 0.5) - 0.5`` of this axis is
    rounded once from double arithmetic (as the kernel source writes it) or computed in float32
    (``fl(fl(ratio * fl(k + 0.5)) - 0.5)``). The compiled kernels differ, measured on every
    axis with one-hot inputs: Paddle 3.3's linear and bilinear-height loops use double, its
    bilinear-width and trilinear loops float32; Paddle 2.6 uses float32 everywhere. The two
    differ in the last bit of the coordinate at a few positions in a thousand, which a sharp
    edge turns into 3e-5 of its height at coordinates above 256."""
    if paddle2:
        return False
    return method == "linear" or (method == "bilinear" and axis == 0)


def linear_axis_np(in_dim: int, out_dim: int, scale: float | None, align: bool, align_mode: int,
                   double: bool = True):
    """Paddle's linear-family neighbours and float32 weights for one axis: (low index, high
    index, low weight, high weight), as its CPU kernels compute them: the low index truncates
    the unrounded coordinate (double or float32, ``half_pixel_in_double``), the weight is the
    float32 coordinate minus it (half-pixel coordinates clamped at 0)."""
    ratio = _axis_ratio(in_dim, out_dim, scale, align)
    k = np.arange(out_dim)
    if align_mode == 0 and not align:
        if double:
            exact = np.float64(ratio) * (k + 0.5) - 0.5
            src = exact.astype(F32)
        else:
            src = (ratio * (k + 0.5).astype(F32) - F32(0.5)).astype(F32)
            exact = src.astype(np.float64)
        src = np.maximum(src, F32(0))
    else:
        src = (ratio * k.astype(F32)).astype(F32)
        exact = src.astype(np.float64)
    lo = np.minimum(np.maximum(np.trunc(exact).astype(np.int64), 0), in_dim - 1)
    hi = np.minimum(lo + 1, in_dim - 1)
    w_hi = (src - lo.astype(F32)).astype(F32)
    return lo, hi, (F32(1) - w_hi).astype(F32), w_hi


def _plan_axis_np(ctx: OpContext, plan: Plan, j: int, out_dim: int):
    """linear_axis_np for axis j of a plan with static sizes, in the arithmetic of the Paddle
    that wrote the file."""
    scale = None if plan.scales is None else plan.scales[j]
    double = half_pixel_in_double(plan.method, j, ctx.paddle2_semantics)
    return linear_axis_np(plan.in_static[j], out_dim, scale, plan.align_corners, plan.align_mode, double)


def linear_resize_exact(plan: Plan) -> bool:
    """Whether ONNX Resize computes Paddle's source coordinates exactly, in any runtime's
    arithmetic: every axis keeps its size or has a power-of-two ratio (then the step, the
    half-pixel shift and the scale are exact binary fractions), or a short ratio checked at
    every position (``_short_ratio_exact``). Other ratios cannot be
    expressed: Resize divides ``(k + 0.5) / scale`` (ONNX Runtime: one float32 division with
    scale = out / in), Paddle multiplies by its rounded ratio ``in / out``, and no float32 scale
    gives the same roundings at every position (searched over the neighbours of 1 / ratio)."""
    out = static_out(plan)
    if isinstance(plan.scales, list) and not plan.align_corners and (out is None or plan.in_static is None):
        # a constant scale on a runtime size: exact when every 1 / scale is a power of two
        return all(_is_pow2(s) and float(F32(1.0 / s)) == 1.0 / s for s in plan.scales)
    if out is None or plan.in_static is None:
        return False
    for j, (i, o) in enumerate(zip(plan.in_static, out)):
        if i == o:
            continue
        scale = None if plan.scales is None else plan.scales[j]
        ratio = float(_axis_ratio(i, o, scale, plan.align_corners))
        if not _is_pow2(ratio):
            if _short_ratio_exact(plan, i, o):
                continue
            return False
        onnx_ratio = (i - 1) / (o - 1) if plan.align_corners else (1 / scale if scale is not None else i / o)
        if onnx_ratio != ratio:
            return False
    return True


def _short_ratio_exact(plan: Plan, in_dim: int, out_dim: int) -> bool:
    """Whether Resize (sizes, half-pixel) gives Paddle's coordinates on an axis whose ratio is a
    short binary fraction (200 -> 80: 2.5; 480 -> 640: 0.75; 120 -> 80: 1.5), checked at every
    position: Paddle's ratio is exactly in / out and every ``ratio * (k + 0.5)`` is a float32
    value, so Paddle's double and float32 coordinates are that value minus 0.5 exactly, and so is
    the runtime's if its quotient ``(k + 0.5) / scale`` (ONNX Runtime; scale = float32(out / in))
    and its product ``(k + 0.5) * float32(1 / scale)`` (a runtime that multiplies by the
    reciprocal) both round to it. Only for sizes: a scale would leave the output size to the
    runtime's arithmetic."""
    if plan.scales is not None or plan.align_corners or plan.align_mode != 0 or plan.method == "bicubic" \
            or out_dim < 2:
        return False
    ratio = F32(in_dim) / F32(out_dim)
    if float(ratio) * out_dim != in_dim:
        return False
    half = np.arange(out_dim, dtype=F32) + F32(0.5)
    exact = np.float64(ratio) * half.astype(np.float64)
    if not np.array_equal(exact.astype(F32).astype(np.float64), exact):
        return False
    scale = F32(out_dim) / F32(in_dim)
    quotient = (half / scale).astype(np.float64)
    product = (half * (F32(1) / scale)).astype(np.float64)
    return bool(np.array_equal(quotient, exact) and np.array_equal(product, exact))


def _gathers_linear(plan: Plan) -> bool:
    """Static sizes (and no copy) whose coordinates Resize cannot reproduce exactly, or bicubic
    (``_gathers_bicubic``)."""
    out = static_out(plan)
    if out is None or plan.in_static is None or out == plan.in_static:
        return False
    return _gathers_bicubic(plan) or not linear_resize_exact(plan)


def _gathers_bicubic(plan: Plan) -> bool:
    """Bicubic takes the Gathers even where Resize is exact: ONNX Runtime's cubic Resize is
    about 10x slower (64x80x80 x2: 119 ms against 12 ms, 64x80x80 -> 200x200: 250 ms against 15,
    1 thread), OpenVINO's about as fast (13 ms against 10 for x2; docs/interpolation.md)."""
    return plan.method == "bicubic"


def _runtime_sizes(plan: Plan) -> bool:
    return static_out(plan) is None or plan.in_static is None


# one tap of an axis: (source indices, weights), numpy for static sizes, graph values for runtime ones
Tap = tuple[ir.Value | np.ndarray, ir.Value | np.ndarray]


def _lerp_axis(ctx: OpContext, y: ir.Value, axis: int, rank: int, low, high, w_lo, w_hi) -> ir.Value:
    """``y[low] * w_lo + y[high] * w_hi`` along ``axis`` (1-D indices and weights)."""
    return _weighted_axis(ctx, y, axis, rank, [(low, w_lo), (high, w_hi)])


def _weighted_axis(ctx: OpContext, y: ir.Value, axis: int, rank: int, taps: list[Tap]) -> ir.Value:
    """Sum of ``y[index] * weight`` along ``axis`` over the taps (1-D indices and weights of the
    output length, numpy for static sizes; added in order). ONNX Runtime's Gather copies element
    by element along the last axis (5 ms for 3x480x640 -> 3x480x488) and whole rows along the
    others, so the last axis is moved in front of the channels for its Gathers (two Transposes:
    3x faster than element Gathers on 3x480x640 -> 712x488 and 64x80x80 -> 200x200).

    Measured and not taken (docs/interpolation.md): one Gather of an ``[out, taps]`` table and a
    batched MatMul with ``[out, 1, taps]`` weights (ONNX Runtime: the last axis' pass 1.6x faster,
    OpenVINO: 2.5x slower), row tiles summed by MatMul (slower in OpenVINO too), Mul and
    ReduceSum, a grouped 1x1 Conv, Einsum."""
    last = axis == rank - 1
    if last:
        perm = [0, axis, *range(1, axis)]
        y = ctx.op.Transpose(y, perm=perm)
        axis = 1
    trail = list(range(1, rank - axis))
    total = None
    for index, weight in taps:
        index, weight = _as_value(ctx, index), _as_value(ctx, weight)
        term = ctx.op.Mul(ctx.op.Gather(y, index, axis=axis), ctx.unsqueeze(weight, trail))
        total = term if total is None else ctx.op.Add(total, term)
    if last:
        total = ctx.op.Transpose(total, perm=[int(i) for i in np.argsort(perm)])
    return total


def _as_value(ctx: OpContext, v: ir.Value | np.ndarray) -> ir.Value:
    return ctx.const(v) if isinstance(v, np.ndarray) else v


def _linear_order(plan: Plan) -> list[int]:
    """Axes in the order of their passes: the most shrinking first (each pass costs its output);
    among equal ratios the last axis, whose pass transposes the tensor twice, where the tensor is
    smaller: first when they grow, last when they shrink (64x80x80 -> 200x200 and 16x32x32 ->
    24x48x48 10-20% faster in ONNX Runtime and OpenVINO); axis order when the sizes are known
    only at run time."""
    out = static_out(plan)
    if out is None or plan.in_static is None:
        return list(range(plan.n))

    def key(j: int) -> tuple[float, bool]:
        ratio = out[j] / plan.in_static[j]
        last = j == plan.n - 1
        return ratio, (not last) if ratio > 1 else last
    return sorted(range(plan.n), key=key)


def _half_pixel_f64(ctx: OpContext, ratio: ir.Value, k: ir.Value) -> ir.Value:
    """ratio * (k + 0.5) - 0.5 in float64 (float32 ratio, int64 k), written as
    (2k + 1) * (ratio / 2) - 0.5: no constant is added before the multiplication, which
    OpenVINO would distribute over it ((x + a) * b -> x * b + a * b, another rounding) when the
    ratio is a constant."""
    odd = ctx.cast(ctx.op.Add(ctx.op.Add(k, k), ctx.const(np.int64(1))), "float64", "int64")
    half = ctx.op.Mul(ctx.cast(ratio, "float64", "float32"), ctx.const(0.5, "float64"))
    return ctx.op.Sub(ctx.op.Mul(odd, half), ctx.const(0.5, "float64"))


def _runtime_ratios(ctx: OpContext, plan: Plan, x: ir.Value, dims: ir.Value) -> tuple[ir.Value, ir.Value]:
    """Spatial output sizes (int64 [n]) and Paddle's float32 ratios for runtime sizes: 0 for an
    output size of 1 (without align_corners), 1 where Paddle copies the input."""
    outs = static_out(plan)
    outs_v = ctx.const_i64(outs) if outs is not None else _out_sizes_value(ctx, plan, x)
    ratios = _nearest_ratios(ctx, plan, dims, outs_v)
    if not plan.align_corners:
        wide = ctx.op.Greater(outs_v, ctx.const_i64([1]))
        ratios = ctx.op.Where(wide, ratios, ctx.const(np.zeros(plan.n, F32)))
    if plan.scales is not None and _copies_input(plan) is None:  # Paddle copies when no size changes
        ratios = ctx.op.Where(_all_same_size(ctx, plan, x), ctx.const(np.ones(plan.n, F32)), ratios)
    return outs_v, ratios


def linear_gather_runtime(ctx: OpContext, plan: Plan, x: ir.Value, dtype: str) -> ir.Value:
    """linear/bilinear/trilinear to sizes known only at run time: the graph computes Paddle's
    float32 ratio (``_nearest_ratios``: an exact integer division), each axis' coordinates in
    Paddle's arithmetic (float32, or float64 rounded once where ``half_pixel_in_double``), the
    neighbours and weights, then Gathers and weighted sums as ``linear_gather``."""
    dims = _spatial_dims(ctx, x, plan.n)
    outs_v, ratios = _runtime_ratios(ctx, plan, x, dims)
    wtype = "float64" if dtype == "float64" else "float32"
    half = plan.align_mode == 0 and not plan.align_corners
    y = x
    for j in _linear_order(plan):
        in_j = ctx.reshape(ctx.slice(dims, [j], [j + 1], [0]), [])
        out_j = ctx.reshape(ctx.slice(outs_v, [j], [j + 1], [0]), [])
        ratio = ctx.reshape(ctx.slice(ratios, [j], [j + 1], [0]), [])
        k = _arange(ctx, out_j, "interpolation to a runtime size")
        # neighbours clamped in float (integer Min/Max need opset 12; sizes are exact in float32)
        if half and half_pixel_in_double(plan.method, j, ctx.paddle2_semantics):
            exact = _half_pixel_f64(ctx, ratio, k)
            src = ctx.cast(exact, "float32", "float64")
            low_f = ctx.cast(ctx.op.Floor(exact), "float32", "float64")
        else:
            kf = ctx.cast(k, "float32", "int64")
            if half:
                # the product rounded before the shift: a Max between them keeps OpenVINO from
                # fusing Mul and Sub into one multiply-add (rounded once, as Paddle 3.3's double axes)
                prod = ctx.op.Mul(ratio, ctx.op.Add(kf, ctx.const(0.5, "float32")))
                prod = ctx.op.Max(prod, ctx.const(0.0, "float32"))
                src = ctx.op.Sub(prod, ctx.const(0.5, "float32"))
            else:
                src = ctx.op.Mul(ratio, kf)
            low_f = ctx.op.Floor(src)
        last = ctx.cast(ctx.op.Sub(in_j, ctx.const(np.int64(1))), "float32", "int64")
        low_f = ctx.op.Min(ctx.op.Max(low_f, ctx.const(0.0, "float32")), last)
        high_f = ctx.op.Min(ctx.op.Add(low_f, ctx.const(1.0, "float32")), last)
        low, high = ctx.cast(low_f, "int64", "float32"), ctx.cast(high_f, "int64", "float32")
        src = ctx.op.Max(src, ctx.const(0.0, "float32"))
        w_hi = ctx.op.Sub(src, low_f)
        w_lo = ctx.op.Sub(ctx.const(1.0, "float32"), w_hi)
        if wtype == "float64":
            w_hi, w_lo = ctx.cast(w_hi, "float64", "float32"), ctx.cast(w_lo, "float64", "float32")
        y = _lerp_axis(ctx, y, 2 + j, 2 + plan.n, low, high, w_lo, w_hi)
    return y


def linear_gather(ctx: OpContext, plan: Plan, x: ir.Value, dtype: str) -> ir.Value:
    """linear/bilinear/trilinear with static sizes as Paddle computes it: per axis, Gathers of the
    low and high neighbours Paddle picks, weighted by its float32 weights
    (``low * (1 - w) + high * w``; the axes one after another, which equals Paddle's sum of
    corner products within float rounding of the values)."""
    out = static_out(plan)
    wtype = np.float64 if dtype == "float64" else F32
    y = x
    for j in _linear_order(plan):
        lo, hi, w_lo, w_hi = _plan_axis_np(ctx, plan, j, out[j])
        if plan.in_static[j] == out[j] and np.array_equal(lo, np.arange(out[j])) and not w_hi.any():
            continue
        if not w_hi.any():
            y = _gather_axis(ctx, y, ctx.const(lo), 2 + j, 2 + plan.n)
            continue
        y = _lerp_axis(ctx, y, 2 + j, 2 + plan.n, lo, hi, w_lo.astype(wtype), w_hi.astype(wtype))
    return y


def _corner_order(n: int) -> list[tuple[int, ...]]:
    """The order in which Paddle's kernels add the corners (1 = high neighbour): bilinear
    runs the height neighbour fastest, trilinear the width."""
    if n == 2:
        return [(0, 0), (1, 0), (0, 1), (1, 1)]
    return [tuple((c >> (n - 1 - j)) & 1 for j in range(n)) for c in range(2**n)]


def _uint8_linear(ctx: OpContext, plan: Plan, x: ir.Value, x_shape: tuple[int, ...]) -> ir.Value:
    """uint8 linear/bilinear/trilinear: Paddle sums the weighted corners in float32 (corner
    times each axis' weight, left to right) and truncates. With static sizes the same
    float32 products and sums are built from Gathers, so that the truncation agrees even
    where the sum lands within rounding of an integer; runtime sizes use Resize in float32
    and Floor."""
    out_static = static_out(plan)
    if plan.in_static is None or out_static is None:
        y = resize(ctx, plan, ctx.cast(x, "float32", "uint8"), x_shape)
        return ctx.cast(ctx.op.Floor(y), "uint8", "float32")
    if out_static == plan.in_static:
        return x
    n = plan.n
    axes = []
    for j, o in enumerate(out_static):
        lo, hi, w_lo, w_hi = _plan_axis_np(ctx, plan, j, o)
        shape = [o] + [1] * (n - 1 - j)
        axes.append(((lo, hi), (ctx.const(w_lo.reshape(shape)), ctx.const(w_hi.reshape(shape)))))
    gathered: dict[tuple[int, ...], ir.Value] = {(): ctx.cast(x, "float32", "uint8")}

    def corner(bits: tuple[int, ...]) -> ir.Value:
        if bits not in gathered:
            prev = corner(bits[:-1])
            j = len(bits) - 1
            gathered[bits] = ctx.op.Gather(prev, ctx.const(axes[j][0][bits[-1]]), axis=2 + j)
        return gathered[bits]

    total = None
    for bits in _corner_order(n):
        term = corner(bits)
        for j, b in enumerate(bits):
            term = ctx.op.Mul(term, axes[j][1][b])
        total = term if total is None else ctx.op.Add(total, term)
    return ctx.cast(ctx.op.Floor(total), "uint8", "float32")


def linear_west_indices_np(in_dim: int, out_dim: int, scale: float | None, align: bool, align_mode: int) -> np.ndarray:
    """The left neighbour Paddle's linear kernel reads for each output position (its
    float32 ratio; half-pixel with negatives clamped when align_mode is 0 without
    align_corners, else ``ratio * k``)."""
    ratio = _ratio_np(in_dim, out_dim, scale, align)
    k = np.arange(out_dim, dtype=np.float64)
    if align_mode == 0 and not align:
        idx = np.trunc(np.float64(ratio) * (k + 0.5) - 0.5)
    else:
        idx = np.trunc((np.float32(ratio) * k.astype(F32)).astype(np.float64))
    return np.maximum(idx, 0).astype(np.int64)


def _west_gather(ctx: OpContext, plan: Plan, x: ir.Value) -> ir.Value:
    """uint8 linear_interp as Paddle 3 computes it: its uint8 kernel drops the weights and
    returns the left neighbour (measured on Paddle 3.3: every output equals
    x[west index], never the weighted sum)."""
    out_static = static_out(plan)
    if plan.in_static is None or out_static is None:
        raise ctx.fail("uint8 linear interpolation to a runtime size is not supported (Paddle 3 reads the "
                       "left neighbour only; pd2onnx computes those indices from static sizes)")
    if out_static == plan.in_static:
        return x
    (i,), (o,) = plan.in_static, out_static
    scale = None if plan.scales is None else plan.scales[0]
    idx = linear_west_indices_np(i, o, scale, plan.align_corners, plan.align_mode)
    return ctx.op.Gather(x, ctx.const(idx), axis=2)


# ---------------------------------------------------------------------- bicubic (exact)
CUBIC_A = F32(-0.75)


def _cubic_near(t):
    """Paddle's cubic_convolution1 (|x| <= 1), in the dtype of t (float32 numpy or not)."""
    return ((CUBIC_A + F32(2)) * t - (CUBIC_A + F32(3))) * t * t + F32(1)


def _cubic_far(t):
    """Paddle's cubic_convolution2 (1 < |x| < 2)."""
    return ((CUBIC_A * t - F32(5) * CUBIC_A) * t + F32(8) * CUBIC_A) * t - F32(4) * CUBIC_A


def bicubic_axis_np(in_dim: int, out_dim: int, scale: float | None, align: bool):
    """Paddle's bicubic taps for one axis: indices [4, out] (clamped to the input) and float32
    coefficients [4, out]. The coordinate is ``ratio * k`` (float32) with align_corners, else
    ``ratio * (k + 0.5) - 0.5`` in double rounded to float32 (both Paddle builds, measured); no
    clamping at 0: an output size of 1 reads coordinate -0.5."""
    ratio = _axis_ratio(in_dim, out_dim, scale, align)
    k = np.arange(out_dim)
    if align:
        src = (ratio * k.astype(F32)).astype(F32)
    else:
        src = (np.float64(ratio) * (k + 0.5) - 0.5).astype(F32)
    base = np.floor(src)
    t = (src - base).astype(F32)
    one = F32(1)
    u = (one - t).astype(F32)
    weights = np.stack([_cubic_far(t + one), _cubic_near(t), _cubic_near(u), _cubic_far(u + one)])
    index = np.clip(base.astype(np.int64)[None, :] + np.arange(-1, 3)[:, None], 0, in_dim - 1)
    return index, weights.astype(F32)


def bicubic_gather(ctx: OpContext, plan: Plan, x: ir.Value, dtype: str) -> ir.Value:
    """bicubic with static sizes as Paddle computes it: per axis, four Gathers of the taps Paddle
    reads weighted by its float32 coefficients (the axes one after another: Paddle's 4 x 4 sum
    within float rounding)."""
    out = static_out(plan)
    wtype = np.float64 if dtype == "float64" else F32
    y = x
    for j in _linear_order(plan):
        scale = None if plan.scales is None else plan.scales[j]
        index, weights = bicubic_axis_np(plan.in_static[j], out[j], scale, plan.align_corners)
        taps = [(index[t], weights[t].astype(wtype)) for t in range(4)]
        y = _weighted_axis(ctx, y, 2 + j, 2 + plan.n, taps)
    return y


def bicubic_gather_runtime(ctx: OpContext, plan: Plan, x: ir.Value, dtype: str) -> ir.Value:
    """bicubic to sizes known only at run time: ``bicubic_axis_np`` as graph ops."""
    dims = _spatial_dims(ctx, x, plan.n)
    outs, ratios = _runtime_ratios(ctx, plan, x, dims)
    f32 = "float32"
    one = ctx.const(1.0, f32)
    y = x
    for j in _linear_order(plan):
        in_j = ctx.reshape(ctx.slice(dims, [j], [j + 1], [0]), [])
        out_j = ctx.reshape(ctx.slice(outs, [j], [j + 1], [0]), [])
        ratio = ctx.reshape(ctx.slice(ratios, [j], [j + 1], [0]), [])
        k = _arange(ctx, out_j, "bicubic interpolation to a runtime size")
        if plan.align_corners:
            src = ctx.op.Mul(ratio, ctx.cast(k, f32, "int64"))
        else:
            exact = _half_pixel_f64(ctx, ratio, k)
            src = ctx.cast(exact, f32, "float64")
        base = ctx.op.Floor(src)
        t = ctx.op.Sub(src, base)
        u = ctx.op.Sub(one, t)
        coeffs = [_cubic_graph(ctx, ctx.op.Add(t, one), far=True), _cubic_graph(ctx, t, far=False),
                  _cubic_graph(ctx, u, far=False), _cubic_graph(ctx, ctx.op.Add(u, one), far=True)]
        last = ctx.cast(ctx.op.Sub(in_j, ctx.const(np.int64(1))), f32, "int64")
        taps = []
        for tap, weight in zip(range(-1, 3), coeffs):
            pos = ctx.op.Max(ctx.op.Add(base, ctx.const(float(tap), f32)), ctx.const(0.0, f32))
            pos = ctx.op.Min(pos, last)
            if dtype == "float64":
                weight = ctx.cast(weight, "float64", f32)
            taps.append((ctx.cast(pos, "int64", f32), weight))
        y = _weighted_axis(ctx, y, 2 + j, 2 + plan.n, taps)
    return y


def _cubic_graph(ctx: OpContext, t: ir.Value, far: bool) -> ir.Value:
    """_cubic_near / _cubic_far as float32 graph ops."""
    def c(v):
        return ctx.const(float(v), "float32")

    if far:
        inner = ctx.op.Sub(ctx.op.Mul(c(CUBIC_A), t), c(F32(5) * CUBIC_A))
        inner = ctx.op.Add(ctx.op.Mul(inner, t), c(F32(8) * CUBIC_A))
        return ctx.op.Sub(ctx.op.Mul(inner, t), c(F32(4) * CUBIC_A))
    inner = ctx.op.Sub(ctx.op.Mul(c(CUBIC_A + F32(2)), t), c(CUBIC_A + F32(3)))
    return ctx.op.Add(ctx.op.Mul(ctx.op.Mul(inner, t), t), c(1))


# ---------------------------------------------------------------------- grid_sample
@mapper("grid_sample", min_opset=16)
def grid_sample(ctx: OpContext) -> None:
    """ONNX GridSample (16: 4-D; 20: N-D and the mode names linear/cubic)."""
    mode = str(ctx.attr("mode", "bilinear"))
    rank = ctx.input_rank("x")
    if mode not in ("bilinear", "nearest"):
        raise ctx.fail(f"grid_sample mode {mode!r} is not supported")
    if rank == 5:
        ctx.require_opset(20, "5-D grid_sample needs N-D GridSample")
    onnx_mode = ("linear" if mode == "bilinear" else mode) if ctx.opset >= 20 else mode
    attrs = {"mode": onnx_mode, "padding_mode": str(ctx.attr("padding_mode", "zeros")),
             "align_corners": int(bool(ctx.attr("align_corners", True)))}
    y = ctx.in_float32("GridSample", ctx.input_dtype("x"), lambda a, g: ctx.op.GridSample(a, g, **attrs),
                       ctx.input("x"), ctx.input("grid"))
    ctx.set_output("out", y)
