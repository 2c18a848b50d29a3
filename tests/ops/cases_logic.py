"""Comparison, logical, bitwise and isnan/isinf/isfinite cases.

Float inputs carry NaN and infinities (NaN compares unequal and unordered, which the
low-opset emulations must keep); integer inputs go beyond 2**53.
"""

import numpy as np

from harness.cases import case

F32 = "float32"
COMPARE = ("equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal")


def all_compares(paddle):
    def fn(a, b):
        return [
            paddle.equal(a, b),
            paddle.not_equal(a, b),
            paddle.less_than(a, b),
            paddle.less_equal(a, b),
            paddle.greater_than(a, b),
            paddle.greater_equal(a, b),
        ]

    return fn


@case(*COMPARE)
def lg_compare_float(paddle, rng):
    x = np.array([[1.0, np.nan, 2.0, -np.inf, np.inf, 0.0, -0.0, 3.0]], F32)
    y = np.array([[1.0], [np.nan], [2.5], [-np.inf]], F32)  # broadcast to (4, 8)
    return all_compares(paddle), [x, y]


@case(*COMPARE)
def lg_compare_float64_dynamic(paddle, rng):
    x = np.round(rng.standard_normal((3, 4)))
    y = np.round(rng.standard_normal((3, 4)))
    return all_compares(paddle), [x, y], [(None, 4), (None, 4)]


@case(*COMPARE)
def lg_compare_int64(paddle, rng):
    x = np.array([2**60 + 1, 2**60, -(2**60), 7, -3, 0], "int64")
    y = np.array([2**60, 2**60, -(2**60) + 1, 7, 3, 0], "int64")
    return all_compares(paddle), [x, y]


@case(*COMPARE)
def lg_compare_int32(paddle, rng):
    x = rng.integers(-3, 3, (2, 5)).astype("int32")
    y = rng.integers(-3, 3, (5,)).astype("int32")
    return all_compares(paddle), [x, y]


@case(*COMPARE)
def lg_compare_bool(paddle, rng):
    x = np.array([True, True, False, False])
    y = np.array([True, False, True, False])
    return all_compares(paddle), [x, y]


@case("equal", "less_than", "greater_equal", "full")
def lg_compare_scalar(paddle, rng):
    """Comparisons with a Python number (a constant operand)."""
    x = np.array([0.5, 1.0, 1.5, np.nan], F32)
    return (lambda a: [a == 1.0, a < 1.0, a >= 1.0]), [x]


# ---------------------------------------------------------------------------- logical
LOGICAL = ("logical_and", "logical_or", "logical_xor", "logical_not")


def all_logical(paddle):
    def fn(a, b):
        return [
            paddle.logical_and(a, b),
            paddle.logical_or(a, b),
            paddle.logical_xor(a, b),
            paddle.logical_not(a),
        ]

    return fn


@case(*LOGICAL)
def lg_logical_bool(paddle, rng):
    x = np.array([[True, True, False, False]])
    y = np.array([[True], [False]])
    return all_logical(paddle), [x, y]


@case(*LOGICAL)
def lg_logical_int(paddle, rng):
    """Non-bool operands: nonzero is true."""
    x = np.array([0, 1, -2, 0, 5], "int32")
    y = np.array([0, 0, 3, 4, -1], "int32")
    return all_logical(paddle), [x, y]


@case(*LOGICAL)
def lg_logical_float(paddle, rng):
    x = np.array([0.0, 0.5, -0.0, np.nan, 2.0], F32)
    y = np.array([0.0, 0.0, 1.0, 0.0, np.inf], F32)
    return all_logical(paddle), [x, y]


# ---------------------------------------------------------------------------- bitwise
BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")


def all_bitwise(paddle):
    def fn(a, b):
        return [a & b, a | b, a ^ b, ~a]

    return fn


@case(*BITWISE)
def lg_bitwise_bool(paddle, rng):
    """Bool bitwise ops (the & | ^ ~ of masks) work at any opset."""
    x = np.array([[True, True, False, False]])
    y = np.array([[True], [False]])
    return all_bitwise(paddle), [x, y]


@case(*BITWISE, opsets=(18, 26))
def lg_bitwise_int(paddle, rng):
    """Integer and/or/xor need ONNX's Bitwise ops (opset 18)."""
    x = np.array([0, 5, -1, 2**40 + 3, -(2**62)], "int64")
    y = np.array([7, 3, 12, 2**40 + 6, 2**62 - 1], "int64")
    return all_bitwise(paddle), [x, y]


@case("bitwise_not")
def lg_bitwise_not_int(paddle, rng):
    """Integer bitwise_not is -1 - x below opset 18 (no overflow at the extremes)."""
    i32 = np.array([0, 5, -1, 2**31 - 1, -(2**31)], "int32")
    i64 = np.array([0, -6, 2**63 - 1, -(2**63)], "int64")
    u8 = np.array([0, 1, 200, 255], "uint8")
    return (lambda a, b, c: [paddle.bitwise_not(a), paddle.bitwise_not(b), paddle.bitwise_not(c)]), [
        i32,
        i64,
        u8,
    ]


# ---------------------------------------------------------------------------- isnan / isinf / isfinite
@case("isnan", "isinf", "isfinite")
def lg_isnan_isinf_isfinite(paddle, rng):
    x = np.array([[1.0, np.nan, np.inf, -np.inf, 0.0, -3.4e38, 3.4028235e38, 1e-45]], F32)
    return (lambda a: [paddle.isnan(a), paddle.isinf(a), paddle.isfinite(a)]), [x]


@case("isnan", "isinf", "isfinite")
def lg_isnan_isinf_isfinite_float64(paddle, rng):
    x = np.array([1.0, np.nan, np.inf, -np.inf, 1e308, -1e-320])
    return (lambda a: [paddle.isnan(a), paddle.isinf(a), paddle.isfinite(a)]), [x], [(None,)]


@case("isnan", "isinf", "isfinite")
def lg_isnan_isinf_isfinite_int(paddle, rng):
    x = np.array([0, -1, 2**40], "int64")
    return (lambda a: [paddle.isnan(a), paddle.isinf(a), paddle.isfinite(a)]), [x]


@case("has_nan", "has_inf", formats=("legacy",), why="the reducing isnan/isinf exist only as legacy ops")
def lg_isnan_isinf_legacy_reducing(paddle, rng):
    """Legacy ``isnan``/``isinf`` (not ``*_v2``): one flag, shape [1], for the whole tensor."""
    from paddle.base.layer_helper import LayerHelper

    x = np.array([[1.0, np.nan, 2.0], [0.0, -1.0, 3.0]], F32)
    y = np.array([[1.0, -np.inf, 2.0], [0.0, -1.0, 3.0]], F32)

    def fn(a, b):
        outs = []
        for v in (a, b):
            for op_type in ("isnan", "isinf"):
                helper = LayerHelper(op_type)
                out = helper.create_variable_for_type_inference("bool")
                helper.append_op(type=op_type, inputs={"X": v}, outputs={"Out": out})
                outs.append(out)
        return outs

    return fn, [x, y]
