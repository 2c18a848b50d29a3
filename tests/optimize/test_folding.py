"""Constant folding, shape folding, scheduler behaviour and input-shape overrides."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import pytest

from optimize._util import F, check, helper, init, model, ops, vi
from pd2onnx.errors import UsageError
from pd2onnx.optimize import PASS_NAMES, optimize


def reshape_by_shape_model(index: int):
    """Reshape x to [-1, x.shape[index]] via Shape/Gather/Unsqueeze/Concat."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i"], ["c"], axis=0),
        helper.make_node("Unsqueeze", ["c", "ax0"], ["cu"]),
        helper.make_node("Concat", ["m1", "cu"], ["shp"], axis=0),
        helper.make_node("Reshape", ["x", "shp"], ["y"]),
    ]
    return model(
        nodes,
        [vi("x", F, ["N", 4, 6])],
        [vi("y", F, ["A", "B"])],
        [init("i", np.array(index)), init("ax0", np.array([0])), init("m1", np.array([-1]))],
    )


def test_shape_gather_of_static_dim_folds_with_dynamic_batch():
    out, report = check(reshape_by_shape_model(2))
    assert ops(out) == {"Reshape": 1}
    assert report.converged


def test_shape_gather_of_dynamic_dim_stays():
    out, _ = check(reshape_by_shape_model(0))
    assert ops(out)["Shape"] == 1 and ops(out)["Gather"] == 1


def test_shape_start_end_over_static_dims_folds():
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], start=1),
        helper.make_node("Concat", ["m1", "s"], ["shp"], axis=0),
        helper.make_node("Reshape", ["x", "shp"], ["y"]),
    ]
    m = model(nodes, [vi("x", F, ["N", 4, 6])], [vi("y", F, ["N", 4, 6])], [init("m1", np.array([-1]))])
    out, _ = check(m)
    assert ops(out) == {}  or ops(out) == {"Reshape": 1}
    assert "Shape" not in ops(out)


def test_constant_arithmetic_folds_and_graph_output_name_kept():
    nodes = [
        helper.make_node("Add", ["a", "b"], ["s"]),
        helper.make_node("Mul", ["s", "b"], ["k"]),
        helper.make_node("Add", ["x", "k"], ["y"]),
    ]
    m = model(nodes, [vi("x", F, [3])], [vi("y", F, [3]), vi("k", F, [3])],
              [init("a", np.ones(3, np.float32)), init("b", np.full(3, 2, np.float32))])
    out, _ = check(m)
    assert ops(out) == {"Add": 1, "Constant": 1}  # k is a graph output: kept as a Constant


def test_size_limit_blocks_expanding_ops():
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["big"], value=helper.make_tensor("v", F, [1], [1.0])),
             helper.make_node("Add", ["x", "big"], ["y"])]
    m = model(nodes, [vi("x", F, [64, 64])], [vi("y", F, [64, 64])], [init("shape", np.array([64, 64]))])
    out, _ = check(m, fold_size_limit=100)
    assert ops(out)["ConstantOfShape"] == 1
    out, _ = check(m, fold_size_limit=10000)
    assert "ConstantOfShape" not in ops(out)


@pytest.mark.parametrize("op", ["RandomUniformLike", "DequantizeLinear"])
def test_random_and_qdq_not_folded(op):
    if op == "RandomUniformLike":
        nodes = [helper.make_node(op, ["c"], ["r"]), helper.make_node("Mul", ["x", "r"], ["y"])]
        inits = [init("c", np.ones(3, np.float32))]
        m = model(nodes, [vi("x", F, [3])], [vi("y", F, [3])], inits)
        m2 = ir.serde.deserialize_model(m)
        optimize(m2)
        assert any(n.op_type == op for n in m2.graph)
        return
    nodes = [helper.make_node(op, ["q", "s", "z"], ["d"]), helper.make_node("Add", ["x", "d"], ["y"])]
    inits = [init("q", np.arange(3, dtype=np.uint8)), init("s", np.array(0.5, np.float32)), init("z", np.array(1, np.uint8))]
    out, _ = check(model(nodes, [vi("x", F, [3])], [vi("y", F, [3])], inits))
    assert ops(out)[op] == 1


def test_initializer_that_is_graph_input_is_not_constant():
    nodes = [helper.make_node("Add", ["a", "a"], ["y"])]
    m = model(nodes, [vi("x", F, [3]), vi("a", F, [3])], [vi("y", F, [3])], [init("a", np.ones(3, np.float32))])
    m2 = ir.serde.deserialize_model(m)
    optimize(m2)
    assert [n.op_type for n in m2.graph] == ["Add"]


def test_fold_inside_if_subgraph_but_not_outer_inputs():
    then = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["ts"]), helper.make_node("Gather", ["ts", "one"], ["tg"], axis=0),
         helper.make_node("Cast", ["tg"], ["tf"], to=F), helper.make_node("Add", ["c1", "c1"], ["tc"]),
         helper.make_node("Mul", ["x", "tc"], ["tm"]), helper.make_node("Mul", ["tm", "tf"], ["t_out"])],
        "then", [], [vi("t_out", F, ["N", 4])])
    other = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e_out"])], "else", [], [vi("e_out", F, ["N", 4])])
    nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)]
    m = model(nodes, [vi("x", F, ["N", 4]), vi("cond", 9, [])], [vi("y", F, ["N", 4])],
              [init("one", np.array(1)), init("c1", np.full(4, 0.75, np.float32))])
    for c in (True, False):
        feeds = {"x": np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32), "cond": np.array(c)}
        out, _ = check(m, feeds=feeds)
    hist = ops(out)
    assert hist["Shape"] == 0 and hist["Gather"] == 0 and hist["Add"] == 0 and hist["Mul"] == 3


def test_scheduler_reports_rounds_and_cap():
    m = reshape_by_shape_model(2)
    m1 = ir.serde.deserialize_model(m)
    r = optimize(m1, max_rounds=1)
    assert not r.converged and r.rounds == 1
    m2 = ir.serde.deserialize_model(m)
    r2 = optimize(m2)
    assert r2.converged and r2.rounds >= 2
    assert r2.changes["fold-constants"] >= 1 and set(r2.changes) == set(PASS_NAMES)
    text = r2.format()
    assert "nodes: 5 -> 1" in text and "Gather" in text


def test_skip_and_unknown_pass():
    m = ir.serde.deserialize_model(reshape_by_shape_model(2))
    r = optimize(m, skip=["fold-constants", "fold-shapes"])
    assert r.changes["fold-constants"] == 0 and any(n.op_type == "Shape" for n in m.graph)
    with pytest.raises(UsageError, match="unknown pass"):
        optimize(m, skip=["nope"])


def test_input_shape_override_makes_dims_static():
    out, _ = check(reshape_by_shape_model(0), feeds={"x": np.ones((5, 4, 6), np.float32)}, input_shapes={"x": [5, 4, 6]})
    assert ops(out) == {"Reshape": 1}
    assert [d.dim_value for d in out.graph.input[0].type.tensor_type.shape.dim] == [5, 4, 6]


def test_input_shape_override_renames_symbolic_dim_and_errors():
    m = ir.serde.deserialize_model(reshape_by_shape_model(2))
    optimize(m, input_shapes={"x": ["batch", 4, 6]})
    assert str(m.graph.inputs[0].shape[0]) == "batch"
    with pytest.raises(UsageError, match="not an input"):
        optimize(ir.serde.deserialize_model(reshape_by_shape_model(2)), input_shapes={"z": [1]})
    with pytest.raises(UsageError, match="rank"):
        optimize(ir.serde.deserialize_model(reshape_by_shape_model(2)), input_shapes={"x": [1, 4]})
    with pytest.raises(UsageError, match="fixed"):
        optimize(ir.serde.deserialize_model(reshape_by_shape_model(2)), input_shapes={"x": [1, 5, 6]})


def test_large_weight_transpose_folds_after_shape_inference():
    """Regression: shape inference lends big initializers out as inputs and must return them."""
    w = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]), helper.make_node("MatMul", ["x", "wt"], ["y"])]
    m = model(nodes, [vi("x", F, ["N", 3, 64])], [vi("y", F, ["N", 3, 48])], [init("w", w.T.copy())])
    out, _ = check(m, fold_size_limit=16)
    assert ops(out) == {"MatMul": 1}
    assert [i.name for i in out.graph.input] == ["x"]
