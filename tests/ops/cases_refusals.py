"""Programs for tests/ops/test_refusals_at_once.py (each is also an ordinary op case)."""

import numpy as np

from harness.cases import case


@case("inverse", name="refusals_two_inverses")
def refusals_two_inverses(paddle, rng):
    """Two inverse ops on independent matrices, and an op reading each result."""
    a = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype("float64")
    b = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype("float64")

    def fn(x, y):
        return paddle.linalg.inv(x) + 1.0, paddle.linalg.inv(y) * 2.0

    return fn, [a, b]
