"""Elementwise math cases: arithmetic (legacy axis too), floor_divide/remainder, max/min, pow,
scale, add_n, clip, cast, the unary math functions, round and atan2.

Inputs include the values where Paddle and ONNX differ (negative operands of // and %,
NaN in max/min and clip, rounding ties, signed zeros and infinities in atan2), so an
inexact emulation fails.
"""

import numpy as np

from harness.cases import case

F32 = "float32"


def is_paddle2(paddle) -> bool:
    return paddle.__version__.startswith("2.")


def legacy_op(op_type, inputs, attrs, dtype):
    """Append a legacy op directly (Paddle 2.6 only): reaches attributes its API hides."""
    from paddle.base.layer_helper import LayerHelper

    helper = LayerHelper(op_type)
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(type=op_type, inputs=inputs, outputs={"Out": out}, attrs=attrs)
    return out


def signed(rng, shape, dtype, low=-20, high=20):
    """Nonzero integers of both signs."""
    v = rng.integers(1, high, size=shape) * rng.choice([-1, 1], size=shape)
    return v.clip(low, high).astype(dtype)


# ---------------------------------------------------------------------------- arithmetic
@case("add")
def ew_add_broadcast(paddle, rng):
    return paddle.add, [rng.standard_normal((2, 3, 4)).astype(F32), rng.standard_normal((4,)).astype(F32)]


@case("add")
def ew_add_dynamic(paddle, rng):
    x, y = rng.standard_normal((2, 3)).astype(F32), rng.standard_normal((1, 3)).astype(F32)
    return paddle.add, [x, y], [(None, 3), (1, 3)]


@case("add", "subtract", "multiply", "divide")
def ew_arith_legacy_axis(paddle, rng):
    """Legacy ``axis``: y (3,) lines up with x (2, 3, 4) at axis 1, z (2, 3) at axis 0
    (PIR has no axis: the same sums with reshaped operands)."""
    x = rng.standard_normal((2, 3, 4)).astype(F32)
    y = (rng.random((3,)) + 0.5).astype(F32)
    z = (rng.random((2, 3)) + 0.5).astype(F32)

    def fn(x, y, z):
        if is_paddle2(paddle):
            ops = ["elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div"]
            outs = [legacy_op(t, {"X": x, "Y": y}, {"axis": 1}, x.dtype) for t in ops]
            outs.append(legacy_op("elementwise_sub", {"X": y, "Y": x}, {"axis": 1}, x.dtype))
            outs.append(legacy_op("elementwise_mul", {"X": x, "Y": z}, {"axis": 0}, x.dtype))
            return outs
        y3 = paddle.reshape(y, [3, 1])
        z3 = paddle.reshape(z, [2, 3, 1])
        return [x + y3, x - y3, x * y3, x / y3, y3 - x, x * z3]

    return fn, [x, y, z]


@case("add", "subtract", "multiply")
def ew_arith_int64(paddle, rng):
    x = np.array([[2**40 + 3, -7, 5]], "int64")
    y = np.array([[3], [-(2**41)]], "int64")
    return (lambda a, b: [a + b, a - b, a * b]), [x, y]


@case("add", "subtract", "multiply", "divide")
def ew_arith_float64(paddle, rng):
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((2, 3)) + 3
    return (lambda a, b: [a + b, a - b, a * b, a / b]), [x, y]


@case("divide", "cast")
def ew_divide_int(paddle, rng):
    """Paddle 2.x truncates integer division; 3.x casts to float first."""
    x = np.array([7, -7, 7, -7, 6, 0], "int32")
    y = np.array([2, 2, -2, -2, 4, 3], "int32")
    return paddle.divide, [x, y]


@case("add", "multiply", formats=("pir",), why="Paddle 2.6 has no add/multiply kernel for bool")
def ew_arith_bool(paddle, rng):
    x, y = np.array([True, False, True, False]), np.array([True, True, False, False])
    return (lambda a, b: [paddle.add(a, b), paddle.multiply(a, b)]), [x, y]


# ---------------------------------------------------------------------------- floor_divide / remainder
def _division_operands():
    x = np.array([7.5, -7.5, 7.5, -7.5, 6, -6, 0, 1e-8, 1, 1, -1, 7, 0.3, 5, -5, 0, 1e30], F32)
    y = np.array([2, 2, -2, -2, 4, 4, 3, 1, 0.1, 0.2, 0.1, 0.7, 0.1, 0, 0, 0, 7e-3], F32)
    return x, y


@case("floor_divide")
def ew_floor_divide_float(paddle, rng):
    x, y = _division_operands()
    a = np.concatenate([x, (rng.standard_normal(40) * 10).astype(F32)])
    b = np.concatenate([y, rng.standard_normal(40).astype(F32)])
    return paddle.floor_divide, [a, b]


@case("remainder")
def ew_remainder_float(paddle, rng):
    x, y = _division_operands()
    a = np.concatenate([x, (rng.standard_normal(40) * 10).astype(F32)])
    b = np.concatenate([y, rng.standard_normal(40).astype(F32)])
    return paddle.remainder, [a, b]


@case("floor_divide", "remainder")
def ew_floor_divide_remainder_int32(paddle, rng):
    x = signed(rng, (4, 6), "int32", -100, 100)
    y = signed(rng, (6,), "int32", -9, 9)
    return (lambda a, b: [paddle.floor_divide(a, b), paddle.remainder(a, b)]), [x, y]


@case("floor_divide", "remainder")
def ew_floor_divide_remainder_int64(paddle, rng):
    x = np.array([2**50 + 7, -(2**50) - 7, 9, -9, 0], "int64")
    y = np.array([-4, 4, 4, 4, -5], "int64")
    return (lambda a, b: [paddle.floor_divide(a, b), paddle.remainder(a, b)]), [x, y]


@case("floor_divide", "remainder")
def ew_floor_divide_remainder_float64(paddle, rng):
    a, b = rng.standard_normal(30) * 10, rng.standard_normal(30)
    return (lambda x, y: [paddle.floor_divide(x, y), paddle.remainder(x, y)]), [a, b]


# ---------------------------------------------------------------------------- maximum / minimum
@case("maximum", "minimum")
def ew_maximum_minimum_nan(paddle, rng):
    """NaN on either side: Paddle 3.x propagates it, 2.x returns y when the test fails."""
    x = np.array([np.nan, 1, np.nan, 2, -np.inf, 3], F32)
    y = np.array([1, np.nan, np.nan, 1, 0, 3], F32)
    return (lambda a, b: [paddle.maximum(a, b), paddle.minimum(a, b)]), [x, y]


@case("maximum", "minimum")
def ew_maximum_minimum_broadcast(paddle, rng):
    x, y = rng.standard_normal((2, 3, 4)).astype(F32), rng.standard_normal((3, 1)).astype(F32)
    return (lambda a, b: [paddle.maximum(a, b), paddle.minimum(a, b)]), [x, y]


@case("maximum", "minimum")
def ew_maximum_minimum_int64(paddle, rng):
    """Values beyond 2**53 (a detour through floats would show), and pairs such as
    (3, 2**31) that ONNX Runtime's own int64 Max/Min get wrong."""
    x = np.array([2**60 + 1, -(2**60), 5, -3, 3, -0x1FD321E5E, 0x1C4B94C9], "int64")
    y = np.array([2**60, -(2**60) + 1, -5, 3, 2**31, -0x1059C6706, 0xF1A206B7], "int64")
    return (lambda a, b: [paddle.maximum(a, b), paddle.minimum(a, b)]), [x, y]


@case("maximum", "minimum")
def ew_maximum_minimum_int32(paddle, rng):
    x, y = signed(rng, (3, 4), "int32"), signed(rng, (4,), "int32")
    return (lambda a, b: [paddle.maximum(a, b), paddle.minimum(a, b)]), [x, y]


# ---------------------------------------------------------------------------- pow
@case("pow")
def ew_pow_scalar(paddle, rng):
    x = (rng.random((2, 3)) * 3).astype(F32)
    return (lambda a: [paddle.pow(a, 2.5), paddle.pow(a, 2.0), paddle.pow(a, -0.5), paddle.pow(a, 0.1)]), [x]


@case("pow")
def ew_pow_scalar_int(paddle, rng):
    """Integer pow truncates its factor (2.7 -> 2); below opset 12 it is a product."""
    x = signed(rng, (2, 5), "int32", -9, 9)
    return (lambda a: [paddle.pow(a, 3), paddle.pow(a, 2.7), paddle.pow(a, 0), paddle.pow(a, 1)]), [x]


@case("elementwise_pow")
def ew_pow_tensor(paddle, rng):
    x = (rng.random((2, 3)) * 3).astype(F32)
    y = rng.standard_normal((3,)).astype(F32)
    return (lambda a, b: a**b), [x, y]


@case("elementwise_pow")
def ew_pow_tensor_int32(paddle, rng):
    x = signed(rng, (2, 4), "int32", -6, 6)
    y = rng.integers(0, 5, (2, 4)).astype("int32")
    return paddle.pow, [x, y]


@case("elementwise_pow", opsets=(12, 17, 26))
def ew_pow_tensor_int64(paddle, rng):
    """int64 by a runtime exponent has no exact ONNX form below opset 12 (a conversion
    below it is refused), so this runs from 12."""
    x = np.array([3, -3, 2**20, 7, 0], "int64")
    y = np.array([39, 3, 2, 0, 5], "int64")
    return paddle.pow, [x, y]


@case("elementwise_pow", "full")
def ew_pow_const_tensor(paddle, rng):
    """x ** constant tensor (a full op) is used as a scalar exponent."""
    x = (rng.random((2, 3)) + 0.5).astype(F32)
    i = signed(rng, (2, 3), "int64", -9, 9)

    def fn(a, b):
        return [a ** paddle.full([1], 3.0, F32), b ** paddle.full([1], 2, "int64")]

    return fn, [x, i]


# ---------------------------------------------------------------------------- scale / add_n
@case("scale")
def ew_scale(paddle, rng):
    x = rng.standard_normal((2, 3)).astype(F32)

    def fn(a):
        return [
            paddle.scale(a, 2.0, 1.0),
            paddle.scale(a, 0.1, 0.3, bias_after_scale=False),
            paddle.scale(a, 1.0, 0.0) + a,
            a * 3 + 1,
        ]

    return fn, [x]


@case("scale")
def ew_scale_int(paddle, rng):
    """Integer tensors truncate scale and bias (2.5 -> 2, 1.5 -> 1, -1.7 -> -1)."""
    x = signed(rng, (2, 4), "int32")
    i64 = np.array([2**40, -3], "int64")

    def fn(a, b):
        return [
            paddle.scale(a, 2.5, 1.5),
            paddle.scale(a, 2.5, -1.7, bias_after_scale=False),
            paddle.scale(b, 3.0, 1.0),
            paddle.scale(a, 1.5, 0.0),
        ]

    return fn, [x, i64]


@case("scale")
def ew_scale_tensor(paddle, rng):
    """scale from a runtime tensor (PIR operand / legacy ScaleTensor), both bias orders."""
    x = rng.standard_normal((2, 3)).astype(F32)
    s = np.array([1.5], F32)
    i = signed(rng, (2, 3), "int64")

    def fn(a, t, b):
        return [
            paddle.scale(a, t, 0.5),
            paddle.scale(a, t, 0.5, bias_after_scale=False),
            paddle.scale(b, t, 2.0),
        ]

    return fn, [x, s, i]


@case("scale", formats=("pir",), why="Paddle 2.6's static scale refuses bool x (check_dtype)")
def ew_scale_bool(paddle, rng):
    """bool x: Paddle's kernel turns scale and bias into bools, multiplies with and and adds
    with or: (x and s) or b, or (x or b) and s before the scale."""
    x = np.array([[True, False, True], [False, False, True]])

    def fn(a):
        return [
            paddle.scale(a, 2.0, 0.0),
            paddle.scale(a, 0.0, 0.0),
            paddle.scale(a, 0.5, 1.0),
            paddle.scale(a, 0.0, 1.0, bias_after_scale=False),
            paddle.scale(a, -3.0, 1.0, bias_after_scale=False),
            paddle.scale(a, 3.0, -0.25),
        ]

    return fn, [x]


@case("scale")
def ew_scale_float64(paddle, rng):
    return (lambda a: paddle.scale(a, 0.1, 0.7)), [rng.standard_normal((2, 3))]


@case("add_n")
def ew_add_n(paddle, rng):
    xs = [rng.standard_normal((2, 3)).astype(F32) for _ in range(3)]
    return (lambda a, b, c: [paddle.add_n([a, b, c]), paddle.add_n([a])]), xs


@case("add_n")
def ew_add_n_int64(paddle, rng):
    xs = [np.array([2**55, -1, 3], "int64"), np.array([1, 2, -3], "int64")]
    return (lambda a, b: paddle.add_n([a, b])), xs


# ---------------------------------------------------------------------------- clip
@case("clip")
def ew_clip(paddle, rng):
    x = np.concatenate([rng.standard_normal(8) * 2, [np.nan, np.inf, -np.inf]]).astype(F32)
    return (lambda a: [paddle.clip(a, -1.0, 1.5), paddle.clip(a, max=0.5), paddle.clip(a, min=-0.25)]), [x]


@case("clip")
def ew_clip_tensor_bounds(paddle, rng):
    """Bounds as runtime tensors (PIR operands / legacy Min and Max inputs)."""
    x = np.concatenate([rng.standard_normal(8) * 2, [np.nan]]).astype(F32)
    lo, hi = np.array([-0.5], F32), np.array([0.75], F32)
    return (lambda a, b, c: paddle.clip(a, b, c)), [x, lo, hi]


@case("clip")
def ew_clip_int(paddle, rng):
    """Integer tensors truncate the bounds; the default (float32 lowest) bound saturates."""
    i32 = signed(rng, (2, 5), "int32")
    i64 = np.array([2**40, -(2**40), 3, -9], "int64")  # 2**31 as a bound trips ORT's int64 Clip

    def fn(a, b):
        return [paddle.clip(a, -3.7, 5.2), paddle.clip(a, max=4), paddle.clip(b, -5, 2**31)]

    return fn, [i32, i64]


# ---------------------------------------------------------------------------- cast
@case("cast")
def ew_cast(paddle, rng):
    x = np.array([-1.7, -0.5, 0.0, 0.5, 2.7, 300.25], F32)
    b = np.array([True, False, True, True, False, False])

    def fn(a, m):
        return [
            paddle.cast(a, "int32"),
            paddle.cast(a, "int64"),
            paddle.cast(a, "bool"),
            paddle.cast(a, "float64"),
            paddle.cast(m, "float32"),
            paddle.cast(m, "int64"),
            paddle.cast(paddle.cast(a, "int32"), "float32"),
        ]

    return fn, [x, b]


# ---------------------------------------------------------------------------- unary math
@case("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "erf")
def ew_unary_trig(paddle, rng):
    x = (rng.random((3, 4)) * 1.8 - 0.9).astype(F32)

    def fn(a):
        return [
            paddle.sin(a),
            paddle.cos(a),
            paddle.tan(a),
            paddle.asin(a),
            paddle.acos(a),
            paddle.atan(a),
            paddle.sinh(a),
            paddle.cosh(a),
            paddle.erf(a),
        ]

    return fn, [x]


@case("exp", "log", "log2", "log10", "sqrt", "rsqrt", "reciprocal")
def ew_unary_exp_log(paddle, rng):
    x = np.concatenate([rng.random(10) * 10 + 0.01, [8.0, 1024.0, 1000.0, 1e-30, 0.0]]).astype(F32)

    def fn(a):
        return [
            paddle.exp(a),
            paddle.log(a),
            paddle.log2(a),
            paddle.log10(a),
            paddle.sqrt(a),
            paddle.rsqrt(a),
            paddle.reciprocal(a),
        ]

    return fn, [x]


@case("exp", "log", "log2", "log10", "log1p")
def ew_unary_int_float_out(paddle, rng):
    """int32/int64 x: Paddle's kernels write float32 (of x cast to float32) while the program
    declares x's dtype; large int64 values round to float32 first, as there."""
    i32 = np.array([[1, 2, 3, 7], [10, 100, 1000, 5]], "int32")
    i64 = np.array([1, 9, 2**40 + 1, 123456789], "int64")

    def fn(a, b):
        return [paddle.exp(a), paddle.log(a), paddle.log2(a), paddle.log10(a), paddle.log1p(a),
                paddle.exp(b % 50), paddle.log(b), paddle.log2(b), paddle.log10(b), paddle.log1p(b)]

    return fn, [i32, i64]


@case("log1p", rtol=1e-6, atol=0.0)
def ew_log1p(paddle, rng):
    """Relative check only (atol 0): log(1 + x) would lose the small values entirely."""
    x = np.array([1e-8, -1e-7, 3e-5, 0.5, -0.5, 2.0, 1e30, 0.0, -1.0, np.inf, 1e-30], F32)
    return paddle.log1p, [x]


@case("abs", "sign", "square", "floor", "ceil")
def ew_unary_misc(paddle, rng):
    x = np.concatenate([rng.standard_normal(8) * 3, [-0.0, 0.0, np.nan, -2.5, 2.5]]).astype(F32)

    def fn(a):
        return [paddle.abs(a), paddle.sign(a), paddle.square(a), paddle.floor(a), paddle.ceil(a)]

    return fn, [x]


@case("abs", "sign", "square")
def ew_unary_int(paddle, rng):
    i32, i64 = signed(rng, (2, 4), "int32"), np.array([-(2**40), 0, 2**20], "int64")
    return (
        lambda a, b: [paddle.abs(a), paddle.sign(a), paddle.square(a), paddle.abs(b), paddle.square(b)]
    ), [i32, i64]


@case(
    "exp",
    "sqrt",
    "floor",
    "ceil",
    "round",
    "cast",
    formats=("pir",),
    why="Paddle 2.6 has no integer kernels for these",
)
def ew_unary_int_promoted(paddle, rng):
    i32 = signed(rng, (2, 4), "int32", 0, 9).clip(0, 9)

    def fn(a):
        return [paddle.sqrt(a), paddle.floor(a), paddle.ceil(a), paddle.round(a)]

    return fn, [i32]


# ---------------------------------------------------------------------------- round
def _round_inputs(rng):
    ties = np.arange(-5.5, 6.0, 1.0)
    edge = [0.49999997, -0.49999997, 2.5000002, 8388609.0, 8388607.5, -8388607.5, 1e20, -0.0, np.nan, np.inf]
    return np.concatenate([ties, edge, rng.standard_normal(8) * 10]).astype(F32)


@case("round")
def ew_round(paddle, rng):
    """Ties: Paddle 2.x rounds them away from zero, 3.x to even."""
    return paddle.round, [_round_inputs(rng)]


@case("round")
def ew_round_float64(paddle, rng):
    return paddle.round, [_round_inputs(rng).astype("float64")]


@case("round", formats=("pir",), why="decimals exists from Paddle 3.0 on")
def ew_round_decimals(paddle, rng):
    x = np.concatenate([[2.675, 0.125, -0.125, 15.0, 25.0, -35.0], rng.standard_normal(10) * 100]).astype(F32)

    def fn(a):
        return [paddle.round(a, decimals=2), paddle.round(a, decimals=1), paddle.round(a, decimals=-1)]

    return fn, [x]


# ---------------------------------------------------------------------------- atan2
@case("atan2")
def ew_atan2(paddle, rng):
    """All quadrants, signed zeros and infinities (C atan2 semantics)."""
    y = [0.0, -0.0, 0.0, -0.0, np.inf, -np.inf, np.inf, -np.inf, 1, -1, 1, -1, 0.0, -0.0, 3, np.nan]
    x = [
        0.0,
        0.0,
        -0.0,
        -0.0,
        np.inf,
        np.inf,
        -np.inf,
        -np.inf,
        -np.inf,
        -np.inf,
        0.0,
        -0.0,
        -2,
        -2,
        np.inf,
        1,
    ]
    a = np.concatenate([y, rng.standard_normal(10)]).astype(F32)
    b = np.concatenate([x, rng.standard_normal(10)]).astype(F32)
    return paddle.atan2, [a, b]


@case("atan2")
def ew_atan2_int(paddle, rng):
    """Integer inputs give a float64 result."""
    return paddle.atan2, [signed(rng, (2, 3), "int32"), signed(rng, (2, 3), "int32")]
