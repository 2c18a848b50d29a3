"""Models for ``pd2onnx verify`` (tests/verify): built in both formats by the test harness.

``verify_amplifier`` is a correct conversion that a full-model comparison rejects: a deep
random conv stack in the chaotic regime (tanh, gain 2: a perturbation grows at every layer),
then sharp features (``sin`` of a large multiple) sampled by ``grid_sample`` at positions
the stack computes, ``exp`` box decoding and a top-k over scores closer together than the
noise. ONNX Runtime and Paddle sum the convolutions in different orders; the ~1e-7 that
makes is amplified until boxes and the top-k indices differ. Each op, fed Paddle's exact
inputs, gives Paddle's outputs.

``verify_small`` is a short network of common ops (conv, batch norm, activations, pooling,
a linear layer, softmax, top-k) for the tests that break one op on purpose.
"""

from harness.cases import case

AMPLIFIER_DEPTH = 16
AMPLIFIER_CHANNELS = 8


def _amplifier(paddle):
    nn = paddle.nn

    class Amplifier(nn.Layer):
        def __init__(self):
            super().__init__()
            ch = AMPLIFIER_CHANNELS
            self.stem = nn.Conv2D(3, ch, 3, padding=1)
            self.stack = nn.LayerList([nn.Conv2D(ch, ch, 3, padding=1) for _ in range(AMPLIFIER_DEPTH)])
            self.to_grid = nn.Conv2D(ch, 2, 1)
            self.to_feat = nn.Conv2D(ch, 3, 1)

        def forward(self, x):
            h = paddle.tanh(self.stem(x))
            for conv in self.stack:
                h = paddle.tanh(conv(h))
            grid = paddle.tanh(self.to_grid(h)).transpose([0, 2, 3, 1])
            sharp = paddle.sin(self.to_feat(h) * 40.0)
            s = paddle.nn.functional.grid_sample(sharp, grid, mode="bilinear", padding_mode="border",
                                                 align_corners=False)
            boxes = paddle.exp(s[:, :2] * 3.0)
            scores = s[:, 2].flatten(1)
            values, indices = paddle.topk(-paddle.abs(scores), k=32)  # near zero: many near-ties
            return boxes, values, indices

    return Amplifier()


def _chaotic(paddle, layer, rng, gain=2.0):
    """Random weights of standard deviation gain/sqrt(fan_in): tanh layers in the chaotic regime."""
    for sub in layer.sublayers():
        if isinstance(sub, paddle.nn.Conv2D):
            w = sub.weight
            fan_in = int(w.shape[1] * w.shape[2] * w.shape[3])
            sub.weight.set_value((rng.standard_normal(w.shape) * gain / fan_in**0.5).astype("float32"))
            sub.bias.set_value((0.1 * rng.standard_normal(sub.bias.shape)).astype("float32"))
    return layer


@case("model", name="verify_amplifier", opsets=(17,))
def amplifier(paddle, rng):
    x = rng.standard_normal((1, 3, 32, 32)).astype("float32")
    return _chaotic(paddle, _amplifier(paddle), rng), [x]


@case("model", name="verify_small", opsets=(17,))
def small(paddle, rng):
    nn = paddle.nn

    class Small(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2D(8)
            self.fc = nn.Linear(8, 6)

        def forward(self, x):  # (Paddle 2.6's dy2static sees module globals and paddle only)
            h = paddle.nn.functional.relu(self.bn(self.conv(x)))
            h = paddle.tanh(paddle.nn.functional.max_pool2d(h, 2))
            h = h.mean(axis=[2, 3])
            y = paddle.nn.functional.softmax(self.fc(h), axis=-1)
            v, i = paddle.topk(y, k=3)
            return y, v, i

    layer = Small()
    layer.eval()
    return layer, [rng.standard_normal((2, 3, 8, 8)).astype("float32")]


def _static(paddle, layer):
    return paddle.jit.to_static(layer, full_graph=True)


@case("while", name="verify_while", opsets=(17,))
def while_loop(paddle, rng):
    """A loop whose trip count is an input, between ops of the main block: the loop's own ops
    are not replayed (Paddle does not expose their values), the loop is, as a whole."""
    import numpy as np

    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            x = paddle.tanh(x) * 2.0
            i = paddle.zeros([1], "int64")
            s = x
            while i < n:
                s = s * 0.5 + paddle.cast(i, "float32")
                i = i + 1
            return paddle.exp(s), i

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x, np.array([3], "int64")], [(None, 3), (1,)]


@case("if", "conditional_block", "select_input", name="verify_if", opsets=(17,))
def if_else(paddle, rng):
    """Two inputs, each through a branch on its own sign (one takes each branch)."""

    class Net(paddle.nn.Layer):
        def branchy(self, x):
            if paddle.mean(x) > 0:
                y = x * 2.0 + 1.0
            else:
                y = paddle.exp(x) - 3.0
            return y

        def forward(self, a, b):
            return paddle.nn.functional.relu(self.branchy(a)), self.branchy(b)

    a = (rng.random((2, 3)) + 0.5).astype("float32")
    b = -(rng.random((2, 3)) + 0.5).astype("float32")
    return _static(paddle, Net()), [a, b], [(None, 3), (None, 3)]


@case("conv2d", name="verify_float64", opsets=(17,))
def float64(paddle, rng):
    """float64 convolution: ONNX Runtime has no double Conv kernel, so the converter computes it
    in float32 between casts (legalize); the value Paddle's output maps to is the cast back."""
    layer = paddle.nn.Conv2D(3, 4, 3)
    layer.to(dtype="float64")
    layer.eval()
    return layer, [rng.standard_normal((1, 3, 6, 6)).astype("float64")]
