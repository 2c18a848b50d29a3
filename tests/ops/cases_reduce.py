"""Reduction cases: sum/mean/max/min/prod/all/any, logsumexp, p_norm, argmax/argmin.

Covers axis lists (negative, empty = all, all axes), keepdim, 0-D inputs and outputs,
dtype promotion of sum (int32/bool -> int64, explicit float64), axes given as a runtime
tensor (opset 13 for ReduceSum, 18 for the others), logsumexp's NaN for infinite rows,
every p_norm order, and argmax ties/flatten/int32 results.
"""

import numpy as np

from harness.cases import case
from ops._nn_layers import legacy_op

F32 = "float32"


def normal(rng, shape=(2, 3, 4), dtype=F32):
    return rng.standard_normal(shape).astype(dtype)


def ints(rng, shape=(2, 3, 4), dtype="int32"):
    return rng.integers(-5, 6, size=shape).astype(dtype)


@case("sum", "mean", "max", "min", "prod")
def red_basic_axes(paddle, rng):
    def fn(x):
        return (
            paddle.sum(x, axis=[1, 2], keepdim=True),
            paddle.mean(x, axis=-1),
            paddle.max(x, axis=[0, -1]),
            paddle.min(x, axis=1, keepdim=True),
            paddle.prod(x, axis=0),
        )

    return fn, [normal(rng)], [(None, 3, None)]


@case("sum", "mean", "max", "min", "prod")
def red_all_axes(paddle, rng):
    """No axis, an empty list and a list naming every axis all reduce everything (0-D)."""

    def fn(x):
        return (
            paddle.sum(x),
            paddle.mean(x, axis=[]),
            paddle.max(x, axis=[0, 1, 2]),
            paddle.min(x),
            paddle.prod(x, keepdim=True),
        )

    return fn, [(normal(rng) * 0.5 + 1).astype(F32)]


@case("sum", "max", "min", "prod")
def red_ints(paddle, rng):
    """sum of int32 and bool gives int64; max/min/prod keep the integer type."""

    def fn(x, b):
        y = paddle.cast(x, "int64")
        return (
            paddle.sum(x, axis=1),
            paddle.sum(b),
            paddle.max(y, axis=-1),
            paddle.min(x, axis=0),
            paddle.prod(y, axis=2),
        )

    return fn, [ints(rng), rng.random((2, 3)) > 0.5]


@case("mean", formats=("pir",), why="Paddle 2.6 has no integer mean kernel")
def red_mean_int(paddle, rng):
    """Integer mean truncates (sum / count in int32)."""
    return (lambda x: (paddle.mean(x, axis=[0, 1]), paddle.mean(x))), [ints(rng)]


@case("mean", formats=("pir",), why="Paddle 2.6's static mean refuses bool x (check_dtype)")
def red_mean_bool(paddle, rng):
    """bool mean is any(x) in Paddle's kernel (Eigen on bool: the sum is or, the count true)."""
    x = np.array([[[True, False, False, False], [False, False, False, False], [True, True, True, True]]])

    def fn(a):
        return paddle.mean(a, axis=-1), paddle.mean(a, axis=[0, 1], keepdim=True), paddle.mean(a)

    return fn, [x]


@case("sum")
def red_sum_dtype(paddle, rng):
    return (lambda x: (paddle.sum(x, axis=0, dtype="float64"), paddle.sum(x, dtype="int64"))), [
        ints(rng, (3, 4))
    ]


@case("sum", "mean", "max")
def red_zero_d(paddle, rng):
    """0-D input: reductions over axis 0 / -1 / none are the identity."""

    def fn(x):
        return paddle.sum(x), paddle.mean(x, axis=0), paddle.max(x, axis=-1, keepdim=True)

    return fn, [np.asarray(1.5, dtype=F32)]


@case("sum", opsets=(13, 17, 26))
def red_sum_runtime_axis(paddle, rng):
    """The axis is computed at run time (shape(x)[0] - 2 = 0): ReduceSum takes it as an input
    from opset 13 on (legacy: a variable attribute ``dim`` naming the value)."""
    return (lambda x: paddle.sum(x, axis=paddle.shape(x)[0:1] - 2)), [normal(rng)], [(None, 3, 4)]


@case("max", "mean", opsets=(18, 26))
def red_max_runtime_axis(paddle, rng):
    def fn(x):
        axis = paddle.shape(x)[0:1] - 1
        return paddle.max(x, axis=axis, keepdim=True), paddle.mean(x, axis=axis)

    return fn, [normal(rng)]


@case("all", "any")
def red_all_any(paddle, rng):
    def fn(b):
        return paddle.all(b, axis=1), paddle.any(b, axis=[0, 2], keepdim=True), paddle.all(b), paddle.any(b)

    b = rng.random((2, 3, 4)) > 0.3
    b[0, :, 0] = True
    b[1, :, 1] = False
    return fn, [b]


@case("logsumexp")
def red_logsumexp(paddle, rng):
    """Rows with +inf / -inf give NaN in Paddle's kernel (inf - inf); large values stay finite."""
    x = normal(rng, (3, 4)) * 30
    x[1] = [-np.inf, -np.inf, -np.inf, -np.inf]
    x[2, 0] = np.inf

    def fn(x):
        return (
            paddle.logsumexp(x, axis=-1),
            paddle.logsumexp(x[:1], axis=[0, 1], keepdim=True),
            paddle.logsumexp(x[0]),
        )

    return fn, [x.astype(F32)]


@case("p_norm")
def red_p_norm_orders(paddle, rng):
    """p = 2, 3, 1, 0.5, 0 (nonzero count), inf, -inf along different axes."""
    x = normal(rng, (3, 4, 5))
    x[0, 0, :2] = 0.0
    norm = paddle.linalg.norm

    def fn(x):
        return (
            norm(x, 2.0, axis=-1),
            norm(x, 3.0, axis=1, keepdim=True),
            norm(x, 1.0, axis=0),
            norm(x, 0.5, axis=2),
            norm(x, 0.0, axis=-1),
            norm(x, float("inf"), axis=1),
            norm(x, float("-inf"), axis=-1, keepdim=True),
        )

    return fn, [x], [(None, 4, 5)]


@case("p_norm")
def red_p_norm_asvector(paddle, rng):
    """asvector: the norm of all elements (keepdim gives all-ones dims)."""

    def fn(x):
        return paddle._C_ops.p_norm(x, 2.0, -1, 1e-12, True, True), paddle._C_ops.p_norm(
            x, 3.0, 0, 1e-12, False, True
        )

    def fn_legacy(x):
        attrs = {"porder": 2.0, "axis": -1, "epsilon": 1e-12, "keepdim": True, "asvector": True}
        out1 = legacy_op(paddle, "p_norm", {"X": x}, attrs)
        out2 = legacy_op(paddle, "p_norm", {"X": x}, dict(attrs, porder=3.0, axis=0, keepdim=False))
        return out1, out2

    is_pir = int(paddle.__version__.split(".")[0]) >= 3
    return (fn if is_pir else fn_legacy), [normal(rng, (3, 4))]


@case("argmax", "argmin")
def red_arg_max_min(paddle, rng):
    """Ties pick the first index; keepdim; flatten (no axis) with and without keepdim; int32."""
    x = rng.integers(0, 3, size=(3, 4, 5)).astype(F32)

    def fn(x):
        return (
            paddle.argmax(x, axis=-1),
            paddle.argmin(x, axis=1, keepdim=True),
            paddle.argmax(x),
            paddle.argmin(x, keepdim=True, dtype="int32"),
            paddle.argmax(x, axis=0, dtype="int32"),
        )

    return fn, [x], [(None, 4, 5)]


@case("argmax", "argmin")
def red_arg_int(paddle, rng):
    def fn(x):
        return paddle.argmax(x, axis=1), paddle.argmin(paddle.cast(x, "int64"), axis=0)

    return fn, [ints(rng, (3, 4))]


@case("mean_all", formats=("legacy",), why="mean (mean of every element) is a legacy-only op")
def red_mean_all(paddle, rng):
    return (lambda x: legacy_op(paddle, "mean", {"X": x}, {})), [normal(rng)]


@case("mean_all", name="red_mean_all_pir", formats=("pir",), why="the PIR op (Paddle 3 builds it with _C_ops)")
def red_mean_all_pir(paddle, rng):
    def fn(x):
        return paddle._C_ops.mean_all(x), paddle._C_ops.mean_all(paddle.cast(x, "float64"))

    return fn, [normal(rng)]


@case("frobenius_norm")
def red_frobenius_norm(paddle, rng):
    def fn(x):
        return paddle.linalg.norm(x, "fro", axis=[0, 1]), paddle.linalg.norm(
            x, "fro", axis=[-1, 1], keepdim=True
        )

    return fn, [normal(rng)]
