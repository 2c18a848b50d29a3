"""Activation cases."""

from harness.cases import case


@case("relu")
def relu(paddle, rng):
    return paddle.nn.functional.relu, [rng.standard_normal((2, 3, 4)).astype("float32")]


@case("tanh")
def tanh_dynamic(paddle, rng):
    return paddle.tanh, [rng.standard_normal((2, 3)).astype("float32")], [(None, 3)]
