"""Creation cases: full/fill_constant, full_like, assign, shape, numel, arange, linspace, eye, empty.

Cases whose arguments are runtime tensors need ONNX Range/Where: the mappers require that
opset while converting, and the harness runs them from there (auto-opset).
"""

import numpy as np

from harness.cases import case


@case("full", name="creation_full_dtypes")
def creation_full_dtypes(paddle, rng):
    def fn(x):
        return (
            x + paddle.full([2, 3], 1.5),
            paddle.full([2], 2**40 + 3, "int64"),
            paddle.full([3], True, "bool"),
            paddle.full([2, 1], -7, "int32"),
            paddle.full([2], float("-inf"), "float64"),
            paddle.full([], 0.1, "float32") * x,
        )

    return fn, [rng.standard_normal((2, 3)).astype("float32")]


@case("full", "full_with_tensor", "shape", "shape64", name="creation_full_runtime_shape")
def creation_full_runtime_shape(paddle, rng):
    def fn(x):
        return paddle.full(paddle.shape(x), 2.5), paddle.full(paddle.shape(x), 3, "int32")

    return fn, [rng.standard_normal((2, 3)).astype("float32")], [(None, 3)]


@case("full", "full_with_tensor", name="creation_full_shape_list")
def creation_full_shape_list(paddle, rng):
    def fn(x):
        return paddle.full([paddle.shape(x)[0], 4], -1.25) + 0.0

    return fn, [rng.standard_normal((3, 2)).astype("float32")], [(None, 2)]


@case("full", "full_with_tensor", name="creation_full_runtime_value")
def creation_full_runtime_value(paddle, rng):
    def fn(x, v):
        return paddle.full([2, 3], v) + x, paddle.full([3], v, "float64")

    return fn, [rng.standard_normal((2, 3)).astype("float32"), np.array([0.75], "float32")]


@case("full_like", name="creation_full_like")
def creation_full_like(paddle, rng):
    def fn(x):
        return (
            paddle.full_like(x, 2.0),
            paddle.ones_like(x, dtype="int64"),
            paddle.zeros_like(x, dtype="bool"),
            paddle.full_like(x, -1e30),
        )

    return fn, [rng.standard_normal((2, 3)).astype("float32")], [(None, 3)]


@case("full_like", name="creation_full_like_static")
def creation_full_like_static(paddle, rng):
    def fn(x):
        return paddle.full_like(x, -3, dtype="int32"), paddle.full_like(x, 0.5) + x

    return fn, [rng.standard_normal((2, 3)).astype("float32")]


@case("full_like", name="creation_full_like_tensor_value")
def creation_full_like_tensor_value(paddle, rng):
    def fn(x, v):
        return paddle.full_like(x, v)

    return fn, [rng.standard_normal((2, 3)).astype("float32"), np.array([1.25], "float32")], [(None, 3), (1,)]


@case("assign", "assign_value", name="creation_assign")
def creation_assign(paddle, rng):
    def fn(x):
        return (
            paddle.assign(x) * 2.0,
            paddle.assign(np.array([[1.5, -2.0, 3.25]], "float32")) + x,
            paddle.assign(np.array([1, 2**40], "int64")),
            paddle.assign(np.array([True, False, True])),
            paddle.assign(np.array([3, -4], "int32")),
            paddle.assign(np.array([0.1, 2.5], "float64")),
        )

    return fn, [rng.standard_normal((2, 3)).astype("float32")]


@case("shape", "shape64", "numel", name="creation_shape_numel")
def creation_shape_numel(paddle, rng):
    def fn(x, y):
        return paddle.shape(x), paddle.numel(x), paddle.shape(y), paddle.numel(y)

    x = rng.standard_normal((2, 3, 4)).astype("float32")
    y = rng.standard_normal((5, 2)).astype("float32")
    return fn, [x, y], [(None, 3, None), (5, 2)]


@case("arange", name="creation_arange")
def creation_arange(paddle, rng):
    def fn(x):
        return (
            paddle.arange(5) + 0,
            paddle.arange(0.5, 3, 0.3, dtype="float32") + x[0],
            paddle.arange(10, 0, -3, dtype="int32"),
            paddle.arange(0, 1, 0.1, dtype="float64"),
            paddle.arange(2, 11, 3, dtype="int64"),
        )

    return fn, [rng.standard_normal((2,)).astype("float32")]


@case("arange", name="creation_arange_runtime")
def creation_arange_runtime(paddle, rng):
    def fn(x, s):
        n = paddle.shape(x)[0]
        return paddle.arange(n), paddle.arange(1, n * 3, 2), paddle.arange(s, 5.0, 0.5)

    x = rng.standard_normal((4, 3)).astype("float32")
    return fn, [x, np.array([1.25], "float32")], [(None, 3), (1,)]


@case("linspace", name="creation_linspace")
def creation_linspace(paddle, rng):
    def fn(x):
        return (
            paddle.linspace(0, 1, 7) + x[0],
            paddle.linspace(-3, 5, 4, dtype="int32"),
            paddle.linspace(2.5, 7.0, 1),
            paddle.linspace(0, 10, 11, dtype="float64"),
            paddle.linspace(1, -1, 6),
        )

    return fn, [rng.standard_normal((2,)).astype("float32")]


@case("linspace", name="creation_linspace_runtime")
def creation_linspace_runtime(paddle, rng):
    def fn(x):
        return paddle.linspace(x[0], x[1], 6), paddle.linspace(x[1], x[0], 1)

    return fn, [np.array([-1.3, 2.9], "float32")]


@case("linspace", name="creation_linspace_runtime_num")
def creation_linspace_runtime_num(paddle, rng):
    def fn(x, n):
        return paddle.linspace(x[0], x[1], n), paddle.linspace(0.0, 1.0, n, dtype="float64")

    return fn, [np.array([-1.3, 2.9], "float32"), np.array([5], "int32")]


@case("eye", name="creation_eye")
def creation_eye(paddle, rng):
    def fn(x):
        return paddle.eye(3) + x, paddle.eye(2, 4, dtype="int64"), paddle.eye(3, 2, dtype="float64")

    return fn, [rng.standard_normal((3, 3)).astype("float32")]


@case("eye", name="creation_eye_runtime")
def creation_eye_runtime(paddle, rng):
    def fn(n):
        return paddle.eye(n, 3), paddle.eye(n, dtype="int32")

    return fn, [np.array([4], "int64")]


@case("empty", "empty_like", name="creation_empty")
def creation_empty(paddle, rng):
    """Contents are undefined: check shapes and dtypes only (zeros_like of the results).

    paddle.empty_like writes shape + empty in both Paddles; PIR's own empty_like op (a
    dynamic-batch input here) comes from ``_C_ops`` (Paddle 2.6 has no empty_like op)."""
    pir = int(paddle.__version__.split(".")[0]) >= 3

    def fn(x):
        e = paddle.empty([2, 3], "int32")
        e2 = paddle.empty_like(x)
        e3 = paddle.empty([paddle.shape(x)[0], 2], "float64")
        e4 = paddle._C_ops.empty_like(x, paddle.int64, paddle.CPUPlace()) if pir else paddle.empty_like(x, "int64")
        return (
            paddle.shape(e),
            paddle.zeros_like(e),
            paddle.shape(e2),
            paddle.zeros_like(e2),
            paddle.zeros_like(e3),
            paddle.shape(e4),
            paddle.zeros_like(e4),
        )

    return fn, [rng.standard_normal((4, 3)).astype("float32")], [(None, 3)]
