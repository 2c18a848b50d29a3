"""Dead-branch folding (``fold-branches``): If with a constant condition, Loop with a
constant trip count of 0 or 1, and optimization inside subgraphs."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import pytest

from optimize._util import I64, F, check, helper, init, model, ops, random_feeds, run, vi
from pd2onnx.optimize import optimize

B = helper.TensorProto.BOOL


def _branches():
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["t"])], "then", [], [vi("t", F, None)],
        initializer=[init("one", np.float32(1.0))],
    )
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e"])], "else", [], [vi("e", F, None)])
    return then_g, else_g


def if_model(cond_init=None, cond_node=None, extra_inits=()):
    then_g, else_g = _branches()
    nodes = list(cond_node or []) + [
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Neg", ["y"], ["z"]),
    ]
    inits = ([init("c", np.array(cond_init))] if cond_init is not None else []) + list(extra_inits)
    return model(nodes, [vi("x", F, ["N", 3])], [vi("z", F, ["N", 3])], inits, opset=13)


@pytest.mark.parametrize("cond", [True, False])
def test_if_with_constant_condition_becomes_its_branch(cond):
    out, report = check(if_model(cond_init=cond))
    assert "If" not in ops(out)
    assert ops(out)["Add" if cond else "Mul"] == 1 and ops(out)["Add" if not cond else "Mul"] == 0
    assert report.changes["fold-branches"] == 1


def test_if_with_runtime_condition_stays():
    cond = helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0)
    gt = helper.make_node("Greater", ["s", "zero"], ["c"])
    m = if_model(cond_node=[cond, gt], extra_inits=[init("zero", np.float32(0.0))])
    feeds = [{"x": np.full((2, 3), v, np.float32)} for v in (1.0, -1.0)]  # both branches
    for f in feeds:
        out, _ = check(m, feeds=f)
        assert ops(out)["If"] == 1


def test_if_on_shape_folds_with_input_shape():
    """x.shape[0] == 1 ? ... : ...  -- constant once the batch is fixed by an override."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        helper.make_node("Equal", ["n", "one_i"], ["c"]),
    ]
    m = if_model(cond_node=nodes, extra_inits=[init("i0", np.array(0, np.int64)), init("one_i", np.array(1, np.int64))])
    out, _ = check(m)
    assert ops(out)["If"] == 1
    out, _ = check(m, feeds={"x": np.ones((1, 3), np.float32)}, input_shapes={"x": [1, 3]})
    assert "If" not in ops(out) and ops(out)["Add"] == 1


def loop_model(trip: int, scan: bool = False, cond: bool | None = None):
    """acc = x; for i in range(trip): acc = acc * 2 + i  (scan output: acc each step)."""
    body_nodes = [
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Mul", ["acc_in", "two"], ["m"]),
        helper.make_node("Add", ["m", "fi"], ["acc_out"]),
        helper.make_node("Identity", ["c_in"], ["c_out"]),
    ]
    outs = [vi("c_out", B, []), vi("acc_out", F, None)]
    if scan:
        body_nodes.append(helper.make_node("Identity", ["acc_out"], ["s_out"]))
        outs.append(vi("s_out", F, None))
    body = helper.make_graph(
        body_nodes, "body", [vi("i", I64, []), vi("c_in", B, []), vi("acc_in", F, None)], outs,
        initializer=[init("two", np.float32(2.0))],
    )
    loop_out = ["acc"] + (["scan"] if scan else [])
    cond_name = "" if cond is None else "cond"
    nodes = [helper.make_node("Loop", ["M", cond_name, "x"], loop_out, body=body)]
    inits = [init("M", np.array(trip, np.int64))]
    if cond is not None:
        inits.append(init("cond", np.array(cond)))
    graph_out = [vi("acc", F, ["N", 3])] + ([vi("scan", F, ["T", "N", 3])] if scan else [])
    return model(nodes, [vi("x", F, ["N", 3])], graph_out, inits, opset=13)


@pytest.mark.parametrize("trip,scan,cond", [(0, False, None), (1, False, None), (1, True, None),
                                            (1, False, True), (5, False, False)])
def test_loop_with_trip_count_0_or_1_is_unrolled(trip, scan, cond):
    out, report = check(loop_model(trip, scan, cond))
    assert "Loop" not in ops(out)
    assert report.changes["fold-branches"] >= 1


def test_loop_with_trip_count_0_and_scan_output_stays():
    """The optimizer types the body (its values get ranks), so ONNX Runtime's empty scan output
    of a Loop that runs no iteration gets the declared rank (shape (0, 0, 3)) instead of (0,):
    compared by value for the carried result, by emptiness and rank for the scan output."""
    proto = loop_model(0, scan=True)
    feeds = random_feeds(proto)
    (acc_ref, scan_ref) = run(proto, feeds)
    m = ir.serde.deserialize_model(proto)
    optimize(m)
    out = ir.serde.serialize_model(m)
    onnx.checker.check_model(out, full_check=True)
    assert ops(out)["Loop"] == 1
    acc, scan = run(out, feeds)
    np.testing.assert_allclose(acc, acc_ref, rtol=1e-5)
    assert scan_ref.size == scan.size == 0 and scan.ndim == 3


def test_loop_with_more_iterations_stays_and_its_body_is_optimized():
    """Trip count 3 stays a Loop; an If with a constant condition inside the body folds."""
    then_g = helper.make_graph([helper.make_node("Add", ["acc_in", "two"], ["t"])], "then", [], [vi("t", F, None)])
    else_g = helper.make_graph([helper.make_node("Sub", ["acc_in", "two"], ["e"])], "else", [], [vi("e", F, None)])
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            helper.make_node("If", ["yes"], ["acc_out"], then_branch=then_g, else_branch=else_g),
        ],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("acc_in", F, None)],
        [vi("c_out", B, []), vi("acc_out", F, None)],
        initializer=[init("two", np.float32(2.0)), init("yes", np.array(True))],
    )
    m = model([helper.make_node("Loop", ["M", "", "x"], ["acc"], body=body)], [vi("x", F, ["N", 3])],
              [vi("acc", F, ["N", 3])], [init("M", np.array(3, np.int64))], opset=13)
    out, _ = check(m)
    assert ops(out)["Loop"] == 1 and "If" not in ops(out) and ops(out)["Add"] == 1
