"""nn cases: pooling (pool2d, pool3d, adaptive and global pooling, max pooling with index)."""

from harness.cases import case
from ops._nn_layers import module, raw_pool2d


def _x(rng, *shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


def _f(paddle):
    return paddle.nn.functional


# ---------------------------------------------------------------------------- pool2d
@case("pool2d", name="nn_max_pool2d")
def nn_max_pool2d(paddle, rng):
    return (lambda x: _f(paddle).max_pool2d(x, 2)), [_x(rng, 1, 2, 6, 6)]


@case("pool2d", name="nn_max_pool2d_padding")
def nn_max_pool2d_padding(paddle, rng):
    return (lambda x: _f(paddle).max_pool2d(x, 3, stride=2, padding=1)), [_x(rng, 1, 2, 7, 8)]


@case(
    "pool2d",
    name="nn_max_pool2d_f64",
    opsets=(8, 17, 21),
    why="ONNX Runtime has no float64 MaxPool-1 kernel (opset 7)",
)
def nn_max_pool2d_f64(paddle, rng):
    return (lambda x: _f(paddle).max_pool2d(x, (2, 3), stride=(1, 2))), [_x(rng, 1, 2, 5, 7, dtype="float64")]


@case("pool2d", name="nn_avg_pool2d_exclusive")
def nn_avg_pool2d_exclusive(paddle, rng):
    return (lambda x: _f(paddle).avg_pool2d(x, 3, stride=2, padding=1)), [_x(rng, 1, 2, 7, 8)]


@case("pool2d", name="nn_avg_pool2d_inclusive")
def nn_avg_pool2d_inclusive(paddle, rng):
    return (lambda x: _f(paddle).avg_pool2d(x, 3, stride=2, padding=1, exclusive=False)), [
        _x(rng, 1, 2, 7, 8)
    ]


@case("pool2d", name="nn_max_pool2d_ceil")
def nn_max_pool2d_ceil(paddle, rng):
    return (lambda x: _f(paddle).max_pool2d(x, 3, stride=2, ceil_mode=True)), [_x(rng, 1, 2, 8, 8)]


@case("pool2d", name="nn_avg_pool2d_ceil_inclusive")
def nn_avg_pool2d_ceil_inclusive(paddle, rng):
    """Paddle divides by the full kernel even where a ceil-mode window leaves the input."""
    fn = lambda x: _f(paddle).avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, exclusive=False)  # noqa: E731
    return fn, [_x(rng, 1, 2, 8, 9)]


@case(
    "pool2d",
    name="nn_avg_pool2d_ceil_exclusive_dynamic",
    opsets=(10, 17, 21),
    why="ceil_mode on dynamic sizes needs AveragePool-10",
)
def nn_avg_pool2d_ceil_exclusive_dynamic(paddle, rng):
    fn = lambda x: _f(paddle).avg_pool2d(x, 3, stride=2, ceil_mode=True)  # noqa: E731
    return fn, [_x(rng, 1, 2, 8, 9)], [(None, 2, None, None)]


@case("pool2d", name="nn_max_pool2d_ceil_wide")
def nn_max_pool2d_ceil_wide(paddle, rng):
    """The ceil-mode extra padding reaches the kernel size: padded explicitly."""
    return (lambda x: _f(paddle).max_pool2d(x, 2, stride=3, ceil_mode=True)), [_x(rng, 1, 2, 9, 9)]


@case("pool2d", name="nn_avg_pool2d_ceil_wide_exclusive")
def nn_avg_pool2d_ceil_wide_exclusive(paddle, rng):
    return (lambda x: _f(paddle).avg_pool2d(x, 2, stride=3, ceil_mode=True)), [_x(rng, 1, 2, 9, 8)]


@case("pool2d", name="nn_avg_pool2d_ceil_wide_inclusive")
def nn_avg_pool2d_ceil_wide_inclusive(paddle, rng):
    fn = lambda x: _f(paddle).avg_pool2d(x, 2, stride=3, ceil_mode=True, exclusive=False)  # noqa: E731
    return fn, [_x(rng, 1, 2, 9, 8)]


@case("pool2d", name="nn_avg_pool2d_pad4")
def nn_avg_pool2d_pad4(paddle, rng):
    fn = lambda x: _f(paddle).avg_pool2d(x, 3, stride=2, padding=[1, 0, 2, 1], exclusive=False)  # noqa: E731
    return fn, [_x(rng, 1, 2, 7, 6)]


@case("pool2d", name="nn_max_pool2d_same")
def nn_max_pool2d_same(paddle, rng):
    return (lambda x: _f(paddle).max_pool2d(x, 3, stride=2, padding="SAME")), [_x(rng, 1, 2, 7, 8)]


@case("pool2d", name="nn_avg_pool2d_same_dynamic")
def nn_avg_pool2d_same_dynamic(paddle, rng):
    fn = lambda x: _f(paddle).avg_pool2d(x, 4, stride=3, padding="SAME")  # noqa: E731
    return fn, [_x(rng, 2, 2, 7, 11)], [(None, 2, None, None)]


@case("pool2d", name="nn_avg_pool2d_same_inclusive")
def nn_avg_pool2d_same_inclusive(paddle, rng):
    """SAME puts the odd cell at the end, where Paddle's divisor clips to input + start pad."""
    fn = lambda x: _f(paddle).avg_pool2d(x, 4, stride=3, padding="SAME", exclusive=False)  # noqa: E731
    return fn, [_x(rng, 1, 2, 7, 11)]


@case("pool2d", name="nn_avg_pool2d_inclusive_dynamic")
def nn_avg_pool2d_inclusive_dynamic(paddle, rng):
    fn = lambda x: _f(paddle).avg_pool2d(x, 3, stride=2, padding=[1, 1, 2, 0], exclusive=False)  # noqa: E731
    return fn, [_x(rng, 1, 2, 7, 8)], [(None, 2, None, None)]


@case("pool2d", name="nn_avg_pool2d_valid")
def nn_avg_pool2d_valid(paddle, rng):
    return (lambda x: _f(paddle).avg_pool2d(x, 3, stride=2, padding="VALID")), [_x(rng, 1, 2, 8, 7)]


@case("pool2d", name="nn_avg_pool2d_nhwc")
def nn_avg_pool2d_nhwc(paddle, rng):
    fn = lambda x: _f(paddle).avg_pool2d(x, 2, stride=2, padding=1, data_format="NHWC")  # noqa: E731
    return fn, [_x(rng, 1, 5, 6, 3)]


@case("pool2d", name="nn_pool2d_global")
def nn_pool2d_global(paddle, rng):
    """global_pooling (not reachable from the Python API): max and avg."""

    def body(self, x):
        return raw_pool2d(paddle, x, [1, 1], "max", True), raw_pool2d(paddle, x, [1, 1], "avg", True)

    return module(paddle, body), [_x(rng, 2, 3, 5, 4)]


# ---------------------------------------------------------------------------- adaptive
@case("pool2d", name="nn_adaptive_avg_pool2d_global")
def nn_adaptive_avg_pool2d_global(paddle, rng):
    return (lambda x: _f(paddle).adaptive_avg_pool2d(x, 1)), [_x(rng, 2, 3, 5, 4)], [(None, 3, None, None)]


@case("pool2d", name="nn_adaptive_avg_pool2d_divisible")
def nn_adaptive_avg_pool2d_divisible(paddle, rng):
    return (lambda x: _f(paddle).adaptive_avg_pool2d(x, [4, 3])), [_x(rng, 1, 2, 8, 6)]


@case("pool2d", name="nn_adaptive_avg_pool2d_uneven")
def nn_adaptive_avg_pool2d_uneven(paddle, rng):
    return (lambda x: _f(paddle).adaptive_avg_pool2d(x, [3, 4])), [_x(rng, 1, 2, 7, 9)]


@case("max_pool2d_with_index", name="nn_adaptive_max_pool2d_uneven")
def nn_adaptive_max_pool2d_uneven(paddle, rng):
    """adaptive_max_pool2d writes max_pool2d_with_index even without return_mask."""
    return (lambda x: _f(paddle).adaptive_max_pool2d(x, [3, 2])), [_x(rng, 1, 2, 7, 5)]


@case("pool2d", name="nn_adaptive_avg_pool2d_nhwc")
def nn_adaptive_avg_pool2d_nhwc(paddle, rng):
    return (lambda x: _f(paddle).adaptive_avg_pool2d(x, [2, 3], data_format="NHWC")), [_x(rng, 1, 5, 7, 2)]


# ---------------------------------------------------------------------------- pool3d
@case("pool3d", name="nn_max_pool3d")
def nn_max_pool3d(paddle, rng):
    return (lambda x: _f(paddle).max_pool3d(x, 2, stride=2)), [_x(rng, 1, 2, 4, 4, 5)]


@case("pool3d", name="nn_avg_pool3d_ndhwc")
def nn_avg_pool3d_ndhwc(paddle, rng):
    fn = lambda x: _f(paddle).avg_pool3d(x, 3, stride=2, padding=1, exclusive=False, data_format="NDHWC")  # noqa: E731
    return fn, [_x(rng, 1, 4, 5, 5, 2)]


@case("pool3d", name="nn_adaptive_avg_pool3d_uneven")
def nn_adaptive_avg_pool3d_uneven(paddle, rng):
    return (lambda x: _f(paddle).adaptive_avg_pool3d(x, [2, 3, 2])), [_x(rng, 1, 2, 5, 4, 3)]


# ---------------------------------------------------------------------------- with index
@case("max_pool2d_with_index", name="nn_max_pool2d_with_index")
def nn_max_pool2d_with_index(paddle, rng):
    return (lambda x: _f(paddle).max_pool2d(x, 3, stride=2, padding=1, return_mask=True)), [
        _x(rng, 2, 3, 7, 8)
    ]


@case("max_pool2d_with_index", name="nn_max_pool2d_with_index_dynamic")
def nn_max_pool2d_with_index_dynamic(paddle, rng):
    fn = lambda x: _f(paddle).max_pool2d(x, 2, stride=2, return_mask=True)  # noqa: E731
    return fn, [_x(rng, 2, 3, 6, 8)], [(None, 3, None, None)]


@case("max_pool2d_with_index", name="nn_adaptive_max_pool2d_with_index")
def nn_adaptive_max_pool2d_with_index(paddle, rng):
    return (lambda x: _f(paddle).adaptive_max_pool2d(x, 3, return_mask=True)), [_x(rng, 1, 2, 6, 9)]


@case("max_pool3d_with_index", name="nn_max_pool3d_with_index")
def nn_max_pool3d_with_index(paddle, rng):
    return (lambda x: _f(paddle).max_pool3d(x, 2, stride=2, return_mask=True)), [_x(rng, 1, 2, 4, 4, 6)]


@case("max_pool2d_with_index", name="nn_max_pool2d_with_index_ceil")
def nn_max_pool2d_with_index_ceil(paddle, rng):
    """Paddle 2.6 writes no ceil_mode for max_pool2d_with_index (so pools in floor mode)."""
    fn = lambda x: _f(paddle).max_pool2d(x, 3, stride=2, ceil_mode=True, return_mask=True)  # noqa: E731
    return fn, [_x(rng, 1, 2, 8, 8)]
