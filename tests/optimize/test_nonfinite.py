"""Constants with NaN, infinities or overflowing values through the optimizer: folding gives
the IEEE results ONNX Runtime computes, fusions that would change results are left out, and
no numpy warning reaches the user (warnings are recorded: an ``except`` in the optimizer
cannot hide one)."""

from __future__ import annotations

import warnings

import numpy as np
import onnx_ir as ir
import pytest

from optimize._util import F, helper, init, model, ops, run, vi
from pd2onnx.optimize import optimize

f32 = np.float32


def _optimize_quietly(proto):
    m = ir.serde.deserialize_model(proto)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optimize(m)
    assert not caught, [f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in caught]
    return ir.serde.serialize_model(m)


def _equal_to_unoptimized(proto, out, feeds):
    for want, got in zip(run(proto, feeds), run(out, feeds)):
        assert want.dtype == got.dtype
        np.testing.assert_array_equal(got, want)  # NaN where ONNX Runtime gives NaN


FOLDS = {
    "div-by-zero": ([helper.make_node("Div", ["a", "b"], ["c"])], [init("a", np.array([1, -1, 0], f32)), init("b", np.zeros(3, f32))]),
    "exp-overflow": ([helper.make_node("Exp", ["a"], ["c"])], [init("a", np.array([1000.0, -1000.0, 1.0], f32))]),
    "log-of-negative": ([helper.make_node("Log", ["a"], ["c"])], [init("a", np.array([-1.0, 0.0, 1.0], f32))]),
    "sqrt-of-negative": ([helper.make_node("Sqrt", ["a"], ["c"])], [init("a", np.array([-1.0, 4.0, 0.0], f32))]),
    "mul-overflow": ([helper.make_node("Mul", ["a", "a"], ["c"])], [init("a", np.array([1e30, -1e30, 2.0], f32))]),
    "reciprocal-of-zero": ([helper.make_node("Reciprocal", ["a"], ["c"])], [init("a", np.array([0.0, -0.0, 2.0], f32))]),
    "reduceprod-overflow": ([helper.make_node("ReduceProd", ["a"], ["c"], keepdims=1)], [init("a", np.full(10, 1e10, f32))]),
    "inf-minus-inf": ([helper.make_node("Sub", ["a", "a"], ["c"])], [init("a", np.array([np.inf, 1.0, -np.inf], f32))]),
    "cast-to-float16-overflow": (
        [helper.make_node("Cast", ["a"], ["h"], to=10), helper.make_node("Cast", ["h"], ["c"], to=1)],
        [init("a", np.array([1e30, -1e30, 0.5], f32))],
    ),
    "cast-nonfinite-to-int64": (
        [helper.make_node("Cast", ["a"], ["i"], to=7), helper.make_node("Cast", ["i"], ["c"], to=1)],
        [init("a", np.array([np.nan, np.inf, 1e30], f32))],
    ),
}


@pytest.mark.parametrize("name", sorted(FOLDS))
def test_folding_nonfinite_constants(name):
    nodes, inits = FOLDS[name]
    nodes = nodes + [helper.make_node("Add", ["c", "x"], ["y"])]
    proto = model(nodes, [vi("x", F, [3])], [vi("y", F, [3])], inits)
    out = _optimize_quietly(proto)
    _equal_to_unoptimized(proto, out, {"x": np.array([0.5, -2.0, 3.0], f32)})
    if name != "cast-nonfinite-to-int64":  # a float -> int cast of NaN/inf is left to the runtime
        assert ops(out) == {"Add": 1}


def _conv_bn(var, weight_scale=1.0):
    nodes = [
        helper.make_node("Conv", ["x", "W"], ["h"]),
        helper.make_node("BatchNormalization", ["h", "sc", "bb", "mu", "var"], ["y"], epsilon=1e-3),
    ]
    rng = np.random.default_rng(0)
    inits = [
        init("W", (rng.standard_normal((3, 2, 1, 1)) * weight_scale).astype(f32)),
        init("sc", np.array([1.0, 1e30, 2.0], f32)),
        init("bb", np.zeros(3, f32)),
        init("mu", np.zeros(3, f32)),
        init("var", np.asarray(var, f32)),
    ]
    return model(nodes, [vi("x", F, [1, 2, 2, 2])], [vi("y", F, [1, 3, 2, 2])], inits)


@pytest.mark.parametrize(
    "var,weight_scale",
    [([1.0, 1.0, -5.0], 1.0),  # a negative variance: sqrt gives NaN
     ([1.0, 1.0, -1e-3], 1.0),  # var + eps = 0: a division by zero
     ([1.0, 1.0, 1.0], 1e20)],  # fused weights beyond float32 (1e30 x 1e20)
)
def test_batchnorm_not_fused_when_the_fused_weights_are_not_finite(var, weight_scale):
    proto = _conv_bn(var, weight_scale)
    out = _optimize_quietly(proto)
    assert ops(out)["BatchNormalization"] == 1
    x = np.random.default_rng(1).standard_normal((1, 2, 2, 2)).astype(f32) * 1e-25
    _equal_to_unoptimized(proto, out, {"x": x})
