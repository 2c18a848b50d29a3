"""Activation cases.

Inputs span both sides of every threshold (and the saturating tails: softplus/mish past
their thresholds, logsigmoid at +-60), so an emulation that gets a branch wrong fails.
Legacy-only attributes (relu6 threshold, swish beta, mish threshold, hard_swish constants)
are set on raw legacy ops; hardshrink is probed at |x| == threshold (Paddle 3.x keeps x
there, 2.x gives 0); log_softmax below the -64 clip of Paddle's kernel; float64 cases exercise the formula fallbacks (ONNX Runtime lacks double
kernels for most activation ops).
"""

import numpy as np

from harness.cases import case
from ops._nn_layers import is_pir, legacy_op, module, scaled_param

F32 = "float32"
# Opsets of the float64 fallbacks (they use Where: opset 9; ONNX Runtime has no double
# kernels for Elu, Softplus, Clip-6, ...).
F64_OPSETS = (9, 17, 26)


def spread(rng, shape=(2, 3, 4), scale=3.0, dtype=F32):
    """Normal values times ``scale`` plus exact zeros and a few large magnitudes."""
    x = rng.standard_normal(shape) * scale
    flat = x.reshape(-1)
    flat[:4] = [0.0, 25.0, -25.0, 60.0][: flat.size]
    return x.astype(dtype)


def legacy_unary(paddle, op_type, x, attrs):
    return legacy_op(paddle, op_type, {"X": x}, attrs, dtype=str(x.dtype).split(".")[-1])


@case("relu")
def relu(paddle, rng):
    return paddle.nn.functional.relu, [rng.standard_normal((2, 3, 4)).astype("float32")]


@case("tanh")
def tanh_dynamic(paddle, rng):
    return paddle.tanh, [rng.standard_normal((2, 3)).astype("float32")], [(None, 3)]


@case("sigmoid", "relu", "tanh")
def act_basic_f64(paddle, rng):
    def fn(x):
        return paddle.nn.functional.sigmoid(x), paddle.nn.functional.relu(x), paddle.tanh(x)

    return fn, [spread(rng, dtype="float64")]


# ---------------------------------------------------------------------------- clipping family
@case("relu6", "hardtanh", "hardsigmoid")
def act_clipping(paddle, rng):
    F = paddle.nn.functional

    def fn(x):
        return F.relu6(x), F.hardtanh(x, -0.5, 0.7), F.hardsigmoid(x, 0.3, 0.4), F.hardsigmoid(x)

    return fn, [spread(rng)]


@case("relu6", "hardtanh", "hardsigmoid", "hardswish", opsets=F64_OPSETS)
def act_clipping_f64(paddle, rng):
    F = paddle.nn.functional

    def fn(x):
        return F.relu6(x), F.hardtanh(x, -0.5, 0.7), F.hardsigmoid(x, 0.3, 0.4), F.hardswish(x)

    return fn, [spread(rng, dtype="float64")]


@case("relu6", formats=("legacy",), why="relu6's threshold is a legacy-only attribute")
def act_relu6_threshold(paddle, rng):
    return (lambda x: legacy_unary(paddle, "relu6", x, {"threshold": 4.0})), [spread(rng)]


@case("hardswish")
def act_hardswish(paddle, rng):
    x = spread(rng)
    x.reshape(-1)[4:8] = [-3.0, 3.0, -6.0, 6.0]
    return paddle.nn.functional.hardswish, [x], [(None, 3, 4)]


@case("hardswish", formats=("legacy",), why="hard_swish threshold/scale/offset are legacy-only attributes")
def act_hardswish_legacy_attrs(paddle, rng):
    """Paddle 2.6's kernel ignores these attributes (fixed 6/6/3); the converter must too."""
    attrs = {"threshold": 5.0, "scale": 4.0, "offset": 2.0}
    return (lambda x: legacy_unary(paddle, "hard_swish", x, attrs)), [spread(rng)]


# ---------------------------------------------------------------------------- exponential family
@case("leaky_relu", "elu", "selu", "celu")
def act_exp_family(paddle, rng):
    F = paddle.nn.functional

    def fn(x):
        return F.leaky_relu(x, 0.2), F.elu(x, 0.5), F.selu(x), F.celu(x, 0.7)

    return fn, [spread(rng, scale=2.0)]


@case("leaky_relu", "elu", "selu", "celu", opsets=F64_OPSETS)
def act_exp_family_f64(paddle, rng):
    F = paddle.nn.functional

    def fn(x):
        return F.leaky_relu(x, 0.2), F.elu(x, 0.5), F.selu(x), F.celu(x, 0.7)

    return fn, [spread(rng, scale=2.0, dtype="float64")]


@case("gelu")
def act_gelu(paddle, rng):
    F = paddle.nn.functional
    return (lambda x: (F.gelu(x), F.gelu(x, approximate=True))), [spread(rng)], [(None, None, 4)]


@case("silu", "swish", "mish", "tanh_shrink", "softsign", "logsigmoid", "stanh")
def act_smooth(paddle, rng):
    F = paddle.nn.functional

    def fn(x):
        return (
            F.silu(x),
            F.swish(x),
            F.mish(x),
            F.tanhshrink(x),
            F.softsign(x),
            F.log_sigmoid(x),
            paddle.stanh(x),
        )

    return fn, [spread(rng)]


@case("silu", "mish", "softsign", "logsigmoid", "stanh", opsets=F64_OPSETS)
def act_smooth_f64(paddle, rng):
    F = paddle.nn.functional

    def fn(x):
        return F.silu(x), F.mish(x), F.softsign(x), F.log_sigmoid(x), paddle.stanh(x, 0.5, 2.0)

    return fn, [spread(rng, dtype="float64")]


@case("swish", "mish", formats=("legacy",), why="swish beta and a custom mish threshold are legacy-only")
def act_swish_beta_mish_threshold(paddle, rng):
    def fn(x):
        return legacy_unary(paddle, "swish", x, {"beta": 2.0}), legacy_unary(
            paddle, "mish", x, {"threshold": 2.0}
        )

    return fn, [spread(rng)]


@case("softplus")
def act_softplus(paddle, rng):
    F = paddle.nn.functional
    return (lambda x: (F.softplus(x), F.softplus(x, 2.0, 10.0), F.softplus(x, 0.5, 3.0))), [spread(rng)]


@case("softplus", opsets=F64_OPSETS)
def act_softplus_f64(paddle, rng):
    F = paddle.nn.functional
    return (lambda x: (F.softplus(x), F.softplus(x, 2.0, 10.0))), [spread(rng, dtype="float64")]


# ---------------------------------------------------------------------------- shrink / threshold
@case("hardshrink", "softshrink", "thresholded_relu")
def act_shrink(paddle, rng):
    F = paddle.nn.functional
    x = spread(rng, scale=0.5)
    x.reshape(-1)[4:8] = [0.3, -0.3, 1.0, -1.0]

    def fn(x):
        return F.hardshrink(x, 0.3), F.softshrink(x, 0.3), F.thresholded_relu(x, 0.3), F.thresholded_relu(x)

    return fn, [x]


@case("thresholded_relu", formats=("pir",), why="thresholded_relu's value exists from Paddle 3.0 on")
def act_thresholded_relu_value(paddle, rng):
    return (lambda x: paddle.nn.functional.thresholded_relu(x, 0.3, -2.0)), [spread(rng)]


# ---------------------------------------------------------------------------- prelu
def _slopes(paddle, rng, shape):
    """A prelu weight (normal slopes times 0.2, some negative)."""
    return scaled_param(paddle, rng, shape, 0.2)


@case("prelu")
def act_prelu_all_channel(paddle, rng):
    """One slope (mode all) and per-channel slopes in NCHW and NHWC, dynamic batch."""
    F = paddle.nn.functional

    def forward(self, x):
        return F.prelu(x, self.w_all), F.prelu(x, self.w_c), F.prelu(x, self.w_last, data_format="NHWC")

    weights = {k: _slopes(paddle, rng, s) for k, s in (("w_all", [1]), ("w_c", [3]), ("w_last", [5]))}
    return module(paddle, forward, **weights), [spread(rng, (2, 3, 4, 5))], [(None, 3, 4, 5)]


@case("prelu")
def act_prelu_element(paddle, rng):
    """mode element: a slope per element of x.shape[1:], dynamic batch."""

    def forward(self, x):
        if is_pir(paddle):
            return paddle._C_ops.prelu(x, self.w, "NCHW", "element")
        return legacy_op(
            paddle, "prelu", {"X": x, "Alpha": self.w}, {"mode": "element", "data_format": "NCHW"}
        )

    return (
        module(paddle, forward, w=_slopes(paddle, rng, [1, 3, 4])),
        [spread(rng, (2, 3, 4))],
        [(None, 3, 4)],
    )


# ---------------------------------------------------------------------------- softmax
@case("softmax", "log_softmax")
def act_softmax_axes(paddle, rng):
    """Middle, first and last axes with dynamic dims: below opset 13 the middle and first
    axes go through a transpose."""
    F = paddle.nn.functional

    def fn(x):
        return F.softmax(x, 1), F.log_softmax(x, 0), F.softmax(x, -1), F.log_softmax(x, -2)

    return fn, [spread(rng, (2, 3, 4), scale=2.0)], [(None, 3, None)]


@case("softmax", "log_softmax", opsets=F64_OPSETS)
def act_softmax_f64_2d(paddle, rng):
    """Rows spanning more than 64 (spread's +-25 and 60): Paddle clips x - max at -64."""
    F = paddle.nn.functional
    return (lambda x: (F.softmax(x, 0), F.log_softmax(x), F.log_softmax(x, 0))), [
        spread(rng, (3, 5), dtype="float64")
    ]


@case("softmax", "log_softmax")
def act_softmax_0d(paddle, rng):
    F = paddle.nn.functional
    return (lambda x: (F.softmax(x), F.log_softmax(x))), [np.asarray(1.5, dtype=F32)]
