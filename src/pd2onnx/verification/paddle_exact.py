"""Judging Paddle: ops whose exact value does not depend on our ONNX nodes.

The float64 referee (``referee``) computes the exact value of *our* nodes, so it can say that
our nodes compute something else than Paddle's op, never which of the two is wrong. For the
ops here the exact value is known from the op's definition alone, computed in float64 from
the operands as Paddle hands them over (its own fetched inputs, its parameters): when
Paddle's value is far from it and ours is not, Paddle computes the op wrongly. The case that
needs it: Paddle 3.3.1 binds PIR's ``pd_op.dequantize_linear`` to the quantize kernel, so its
own run of PIR quantized programs is off by the whole int8 range (docs/quantization.md).

Semantics (Paddle's kernels, /work/shared/QUANT.md section 1; the zero point is ignored by
Paddle's kernels and saved as zeros): with ``qmax = 2^(bit_length-1) - 1`` and the abs-max
scale ``s`` (per channel along ``quant_axis`` when it has more than one element),

- ``dequantize_linear``: ``y = x * s / qmax``;
- ``quantize_linear``: ``y = clamp(round_half_even(x * qmax / s), -qmax - 1, qmax)`` for
  ``round_type`` 0, ``round_half_away(clip(x, -s, s) * qmax / s)`` for ``round_type`` 1;
- ``only_observer``: ``y = x``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pd2onnx.paddle.program import Op

OPS = ("quantize_linear", "dequantize_linear")


def op_name(op: Op) -> str:
    name = op.legacy_type or op.type
    name = name.split(".")[-1]
    return name[:-1] if name.endswith("_") and name[:-1] in OPS else name


def computes(op: Op) -> bool:
    return op_name(op) in OPS


def _slot(op: Op, slot: str) -> str | None:
    """The Paddle name in ``slot`` (PIR's snake_case or the legacy CamelCase)."""
    camel = "".join(part.capitalize() for part in slot.split("_"))
    for s in (slot, camel, slot.capitalize()):
        name = op.input(s) if s in op.inputs else None
        if name:
            return name
    return None


def exact_output(op: Op, operand: Callable[[str], np.ndarray | None]) -> tuple[np.ndarray | None, str]:
    """``op``'s main output (``y``) in float64 from Paddle's operands (``operand(name)``), or
    None and why not."""
    kind = op_name(op)
    x_name, s_name = _slot(op, "x"), _slot(op, "scale")
    x = operand(x_name) if x_name else None
    if x is None:
        return None, "Paddle's value of its input x is not known"
    x = np.asarray(x, np.float64)
    if op.attrs.get("only_observer", False):
        return x, ""
    s = operand(s_name) if s_name else None
    if s is None:
        return None, "Paddle's value of its scale is not known"
    s = np.asarray(s, np.float64).reshape(-1)
    bits = int(op.attrs.get("bit_length", 8))
    qmax = float(2 ** (bits - 1) - 1)
    if s.size > 1:
        axis = int(op.attrs.get("quant_axis", 0))
        if not 0 <= axis < x.ndim or x.shape[axis] != s.size:
            return None, f"its {s.size} channel scales do not fit input shape {list(x.shape)} at axis {axis}"
        shape = [1] * x.ndim
        shape[axis] = s.size
        s = s.reshape(shape)
    else:
        s = s.reshape(())
    if kind == "dequantize_linear":
        return x * s / qmax, ""
    inv = np.where(s <= 1e-30, 1.0 / (s + 1e-6), 1.0 / np.where(s <= 1e-30, 1.0, s))
    if int(op.attrs.get("round_type", 0)) == 0:
        return np.clip(np.round(qmax * inv * x), -qmax - 1, qmax), ""
    v = qmax * inv * np.clip(x, -s, s)
    return np.sign(v) * np.floor(np.abs(v) + 0.5), ""


def judge(op: Op, exact: np.ndarray, ours: np.ndarray, paddle: np.ndarray, rtol: float) -> tuple[bool, str]:
    """Whether Paddle's value is far from the exact one while ours is not, and the figures.

    Ours is right when within ``rtol`` of the exact value's range or one quantization step
    (quantize_linear: a rounding tie one ulp away); Paddle is wrong when farther than ten times that."""
    exact = np.asarray(exact, np.float64)
    ours = np.asarray(ours, np.float64).reshape(exact.shape)
    paddle = np.asarray(paddle, np.float64).reshape(exact.shape)
    scale = float(np.abs(exact).max()) if exact.size else 0.0
    scale = scale or 1.0
    step = 1.0 if op_name(op) == "quantize_linear" else 0.0  # dequantizing rounds nothing but float32
    o_abs, p_abs = float(np.abs(ours - exact).max(initial=0)), float(np.abs(paddle - exact).max(initial=0))
    allowed = max(rtol * scale, step)
    wrong = o_abs <= allowed and p_abs > 10 * allowed
    text = (f"Paddle's value is {_g(p_abs / scale)} of the range from the exact value, ours {_g(o_abs / scale)} "
            f"(allowed {_g(allowed / scale)}: rtol {rtol:g} or one quantization step; exact from Paddle's own "
            f"operands in float64: {_FORMULA[op_name(op)]})")
    return wrong, text


_FORMULA = {"dequantize_linear": "x * scale / qmax",
            "quantize_linear": "round(x * qmax / scale) clamped to the integer range"}


def _g(x: float) -> str:
    return f"{x:.2g}"
