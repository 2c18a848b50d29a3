"""Fusions: applied, precondition failing (nothing changes), and inside an If subgraph."""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import numpy_helper

from optimize._util import F, check, helper, init, model, ops, vi

R = np.random.default_rng(2)


def f32(*shape, lo=None):
    a = R.standard_normal(shape).astype(np.float32)
    return np.abs(a) + lo if lo is not None else a


def bn_inits(c):
    return [init("sc", f32(c, lo=0.5)), init("bb", f32(c)), init("mu", f32(c)), init("var", f32(c, lo=0.5))]


BN = helper.make_node("BatchNormalization", ["h", "sc", "bb", "mu", "var"], ["y"], epsilon=1e-3)


@pytest.mark.parametrize(
    "producer,inits,x_shape,y_shape",
    [
        (helper.make_node("Conv", ["x", "W", "B"], ["h"], pads=[1, 1]), [init("W", f32(6, 4, 3)), init("B", f32(6))], ["N", 4, 5], ["N", 6, 5]),
        (helper.make_node("Conv", ["x", "W"], ["h"], group=2), [init("W", f32(6, 2, 1, 1))], ["N", 4, 3, 3], ["N", 6, 3, 3]),
        (helper.make_node("ConvTranspose", ["x", "W"], ["h"], group=2), [init("W", f32(4, 3, 2, 2))], ["N", 4, 3, 3], ["N", 6, 4, 4]),
        (helper.make_node("Gemm", ["x", "W", "B"], ["h"], transB=1, beta=0.5), [init("W", f32(6, 4)), init("B", f32(6))], ["N", 4], ["N", 6]),
        (helper.make_node("MatMul", ["x", "W"], ["h"]), [init("W", f32(4, 6))], ["N", 4], ["N", 6]),
    ],
)
def test_fuse_batchnorm(producer, inits, x_shape, y_shape):
    out, r = check(model([producer, BN], [vi("x", F, x_shape)], [vi("y", F, y_shape)], inits + bn_inits(6)))
    assert "BatchNormalization" not in ops(out) and sum(ops(out).values()) == 1
    assert r.changes["fuse-bn"] == 1


@pytest.mark.parametrize("kind", ["conv", "convtranspose_grouped", "gemm_transB", "matmul"])
def test_fused_weight_is_the_float64_product_rounded_once(kind):
    """The fused weight is w * s computed in float64 and rounded once to float32 (what a
    float64 copy of the weight gives), written in one pass without that copy."""
    c = 6
    w = {"conv": f32(6, 4, 3), "convtranspose_grouped": f32(4, 3, 2, 2), "gemm_transB": f32(6, 4),
         "matmul": f32(4, 6)}[kind]
    node = {"conv": helper.make_node("Conv", ["x", "W"], ["h"], pads=[1, 1]),
            "convtranspose_grouped": helper.make_node("ConvTranspose", ["x", "W"], ["h"], group=2),
            "gemm_transB": helper.make_node("Gemm", ["x", "W"], ["h"], transB=1),
            "matmul": helper.make_node("MatMul", ["x", "W"], ["h"])}[kind]
    x_shape, y_shape = {"conv": (["N", 4, 5], ["N", 6, 5]), "convtranspose_grouped": (["N", 4, 3, 3], ["N", 6, 4, 4]),
                        "gemm_transB": (["N", 4], ["N", 6]), "matmul": (["N", 4], ["N", 6])}[kind]
    bn = bn_inits(c)
    out, _ = check(model([node, BN], [vi("x", F, x_shape)], [vi("y", F, y_shape)], [init("W", w)] + bn))
    sc, _, _, var = (numpy_helper.to_array(t).astype(np.float64) for t in bn)
    s = sc / np.sqrt(var + 1e-3)
    w64 = w.astype(np.float64)
    if kind == "conv":
        want = w64 * s.reshape(-1, 1, 1)
    elif kind == "convtranspose_grouped":
        want = (w64.reshape(2, 2, 3, 2, 2) * s.reshape(2, 1, 3, 1, 1)).reshape(w.shape)
    elif kind == "gemm_transB":
        want = w64 * s[:, None]
    else:
        want = w64 * s[None, :]
    fused = [numpy_helper.to_array(t) for t in out.graph.initializer if t.dims == list(w.shape)]
    assert len(fused) == 1 and fused[0].dtype == np.float32
    np.testing.assert_array_equal(fused[0], want.astype(np.float32))


def test_fuse_batchnorm_not_when_conv_output_read_twice():
    nodes = [helper.make_node("Conv", ["x", "W"], ["h"]), BN, helper.make_node("Add", ["h", "y"], ["z"])]
    m = model(nodes, [vi("x", F, ["N", 4, 5])], [vi("z", F, ["N", 6, 5])], [init("W", f32(6, 4, 1))] + bn_inits(6))
    out, _ = check(m)
    assert ops(out)["BatchNormalization"] == 1


def test_fuse_batchnorm_not_for_3d_matmul():
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]), BN]
    m = model(nodes, [vi("x", F, ["N", 6, 4])], [vi("y", F, ["N", 6, 6])], [init("W", f32(4, 6))] + bn_inits(6))
    out, _ = check(m)
    assert ops(out)["BatchNormalization"] == 1


@pytest.mark.parametrize(
    "op,shape,fused",
    [("Add", (6, 1, 1), True), ("Add", (1, 6, 1, 1), True), ("Add", (1,), True), ("Add", (6, 5, 5), False),
     ("Mul", (6, 1, 1), True), ("Mul", (1, 1, 5), False)],
)
def test_fuse_bias_and_scale_into_conv(op, shape, fused):
    nodes = [helper.make_node("Conv", ["x", "W"], ["h"], pads=[1, 1, 1, 1]), helper.make_node(op, ["h", "c"], ["y"])]
    m = model(nodes, [vi("x", F, ["N", 4, 5, 5])], [vi("y", F, ["N", 6, 5, 5])], [init("W", f32(6, 4, 3, 3)), init("c", f32(*shape))])
    out, _ = check(m)
    assert (op not in ops(out)) == fused


def test_fuse_bias_into_gemm_and_matmul_add_to_gemm():
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Add", ["h", "b"], ["g"]),
             helper.make_node("Mul", ["g", "s"], ["y"])]
    m = model(nodes, [vi("x", F, ["N", 4])], [vi("y", F, ["N", 6])], [init("W", f32(4, 6)), init("b", f32(6)), init("s", f32(1, 6))])
    out, _ = check(m)
    assert ops(out) == {"Gemm": 1}


def test_matmul_add_not_fused_for_3d():
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"])]
    m = model(nodes, [vi("x", F, ["N", 3, 4])], [vi("y", F, ["N", 3, 6])], [init("W", f32(4, 6)), init("b", f32(6))])
    out, _ = check(m)
    assert ops(out) == {"MatMul": 1, "Add": 1}


def test_transpose_absorbed_into_gemm():
    nodes = [helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]), helper.make_node("Gemm", ["x", "wt"], ["y"])]
    m = model(nodes, [vi("x", F, [2, 4]), vi("w", F, [6, 4])], [vi("y", F, [2, 6])])
    out, _ = check(m)
    assert ops(out) == {"Gemm": 1}


@pytest.mark.parametrize("alpha,fused", [(1 / 6, True), (0.2, False)])
def test_hardswish(alpha, fused):
    nodes = [helper.make_node("HardSigmoid", ["x"], ["h"], alpha=alpha, beta=0.5), helper.make_node("Mul", ["x", "h"], ["y"])]
    out, _ = check(model(nodes, [vi("x", F, ["N", 8])], [vi("y", F, ["N", 8])]))
    assert (ops(out) == {"HardSwish": 1}) == fused


SQRT2 = math.sqrt(2)


def gelu_erf(div=SQRT2):
    nodes = [helper.make_node("Div", ["x", "s2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["x", "a"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["y"])]
    inits = [init("s2", np.array(div, np.float32)), init("one", np.array(1.0, np.float32)), init("half", np.array(0.5, np.float32))]
    return nodes, inits


def gelu_tanh():
    nodes = [helper.make_node("Pow", ["x", "three"], ["p"]), helper.make_node("Mul", ["p", "k"], ["pk"]),
             helper.make_node("Add", ["x", "pk"], ["i"]), helper.make_node("Mul", ["i", "c"], ["ic"]),
             helper.make_node("Tanh", ["ic"], ["t"]), helper.make_node("Add", ["one", "t"], ["a"]),
             helper.make_node("Mul", ["half", "x"], ["hx"]), helper.make_node("Mul", ["hx", "a"], ["y"])]
    inits = [init("three", np.array(3.0, np.float32)), init("k", np.array(0.044715, np.float32)),
             init("c", np.array(math.sqrt(2 / math.pi), np.float32)), init("one", np.array(1.0, np.float32)),
             init("half", np.array(0.5, np.float32))]
    return nodes, inits


@pytest.mark.parametrize("form,opset,fused", [("erf", 20, True), ("tanh", 20, True), ("erf", 17, False), ("wrong", 20, False)])
def test_gelu(form, opset, fused):
    nodes, inits = gelu_tanh() if form == "tanh" else gelu_erf(2.0 if form == "wrong" else math.sqrt(2))
    out, _ = check(model(nodes, [vi("x", F, ["N", 8])], [vi("y", F, ["N", 8])], inits, opset=opset))
    assert (ops(out) == {"Gelu": 1}) == fused


def layernorm(extra_use=False):
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1]), helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("Pow", ["d", "two"], ["p"]), helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1]),
             helper.make_node("Add", ["v", "eps"], ["ve"]), helper.make_node("Sqrt", ["ve"], ["sd"]),
             helper.make_node("Div", ["d", "sd"], ["n"]), helper.make_node("Mul", ["n", "g"], ["ng"]),
             helper.make_node("Add", ["ng", "b"], ["y"])]
    outputs = [vi("y", F, ["N", 3, 8])] + ([vi("m", F, ["N", 3, 1])] if extra_use else [])
    inits = [init("two", np.array(2.0, np.float32)), init("eps", np.array(1e-5, np.float32)), init("g", f32(8)), init("b", f32(8))]
    return model(nodes, [vi("x", F, ["N", 3, 8])], outputs, inits, opset=17)


@pytest.mark.parametrize("extra_use", [False, True])
def test_layernorm(extra_use):
    out, _ = check(layernorm(extra_use))
    assert (ops(out) == {"LayerNormalization": 1}) != extra_use


def test_fusions_inside_if_subgraph():
    then = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["h"]), helper.make_node("BatchNormalization", ["h", "sc", "bb", "mu", "var"], ["hb"]),
         helper.make_node("Add", ["hb", "c"], ["t_out"])], "then", [], [vi("t_out", F, ["N", 6, 5])])
    other = helper.make_graph([helper.make_node("Conv", ["x", "W"], ["e_out"])], "else", [], [vi("e_out", F, ["N", 6, 5])])
    nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)]
    m = model(nodes, [vi("x", F, ["N", 4, 5]), vi("cond", 9, [])], [vi("y", F, ["N", 6, 5])],
              [init("W", f32(6, 4, 1)), init("c", f32(6, 1))] + bn_inits(6))
    for cond in (True, False):
        out, _ = check(m, feeds={"x": f32(2, 4, 5), "cond": np.array(cond)})
    assert ops(out) == {"If": 1, "Conv": 2}
