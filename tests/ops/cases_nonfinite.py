"""Constants the converter converts to another dtype at conversion time whose values are NaN,
infinite or out of the target type's range: Paddle's kernels convert them with C's
``static_cast`` (on x86: the most negative 32/64-bit integer, the low bits of it for narrower
types), and so must the converter - with no numpy warning reaching the user (the harness
converts every case with warnings recorded: tests/harness/check.py).
"""

import numpy as np

from harness.cases import case


@case("full", name="nonfinite_full_to_ints")
def nonfinite_full_to_ints(paddle, rng):
    """full of values out of the integer type's range into every integer type and bool
    (Paddle's front ends refuse NaN and infinities for integer fills)."""

    def fn(x):
        outs = [x * 2.0]
        for dtype in ("int64", "int32", "int8", "uint8", "bool"):  # (int16 outputs: predictor fails)
            for v in (1e30, -1e30, 3e9, 300.7, -2.5):
                outs.append(paddle.full([2], v, dtype))
        return tuple(outs)

    return fn, [rng.standard_normal((2, 3)).astype("float32")]


@case("full", name="nonfinite_full_int64_text")
def nonfinite_full_int64_text(paddle, rng):
    """int64 fills beyond 2**53 and beyond the int64 range: legacy programs carry them as text
    (``str_value``), which Paddle reads as a double (2**60 + 1 becomes 2**60)."""

    def fn(x):
        return x * 2.0, paddle.full([1], 2**60 + 1, "int64"), paddle.full([2], 10**30, "int64")

    return fn, [rng.standard_normal((2, 3)).astype("float32")]


@case("assign_value", "cast", "slice", name="nonfinite_cast_constant")
def nonfinite_cast_constant(paddle, rng):
    """Float constants with infinities and an out-of-range value cast to int64 and read by the
    converter as slice bounds at conversion time (-inf -> INT64_MIN: from the start; +inf and
    1e30 -> INT64_MIN too: empty slices), and as values."""

    def const(v):
        return paddle.to_tensor(np.array([v], "float32")).astype("int64")

    def fn(x):
        return (
            paddle.slice(x, axes=[0], starts=const(-np.inf), ends=[2]),
            paddle.slice(x, axes=[1], starts=[0], ends=const(np.inf)),
            paddle.slice(x, axes=[1], starts=[0], ends=const(1e30)),
            const(np.inf) + paddle.cast(x[0, :1], "int64"),
        )

    return fn, [rng.standard_normal((3, 4)).astype("float32")]
