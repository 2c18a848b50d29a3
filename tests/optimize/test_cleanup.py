"""Clean-up passes: each where it applies, where a precondition fails, and in subgraphs."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import pytest

from optimize._util import I64, F, check, helper, init, model, ops, vi

R = np.random.default_rng(1)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def single(nodes, x_shape, y_shape, inits=(), opset=17, **kw):
    return model(nodes, [vi("x", F, x_shape)], [vi("y", F, y_shape)], inits, opset=opset, **kw)


def test_identity_chain_removed_output_name_kept():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Identity", ["a"], ["b"]),
             helper.make_node("Identity", ["b"], ["y"])]
    out, _ = check(single(nodes, [2, 3], [2, 3]))
    assert ops(out) == {"Relu": 1} and out.graph.node[0].output[0] == "y"


def test_identity_from_input_to_output_kept():
    out, _ = check(single([helper.make_node("Identity", ["x"], ["y"])], [2], [2]))
    assert ops(out) == {"Identity": 1}


@pytest.mark.parametrize("mask_used", [False, True])
def test_dropout(mask_used):
    nodes = [helper.make_node("Dropout", ["x", "ratio"], ["d", "mask"]), helper.make_node("Relu", ["d"], ["y"])]
    outputs = [vi("y", F, [2, 3])] + ([vi("mask", 9, [2, 3])] if mask_used else [])
    m = model(nodes, [vi("x", F, [2, 3])], outputs, [init("ratio", np.array(0.3, np.float32))])
    out, _ = check(m)
    assert ops(out).get("Dropout", 0) == int(mask_used)


def test_dropout_in_training_mode_kept():
    nodes = [helper.make_node("Dropout", ["x", "", "t"], ["y"])]
    m = single(nodes, [2, 3], [2, 3], [init("t", np.array(True))])
    m2 = ir.serde.deserialize_model(m)
    from pd2onnx.optimize import optimize

    optimize(m2)
    assert [n.op_type for n in m2.graph] == ["Dropout"]


def test_constant_node_lifted_and_folded():
    nodes = [helper.make_node("Constant", [], ["c"], value_floats=[1.0, 2.0, 3.0]),
             helper.make_node("Add", ["x", "c"], ["y"])]
    out, _ = check(single(nodes, [3], [3]))
    assert ops(out) == {"Add": 1} and len(out.graph.initializer) == 1


@pytest.mark.parametrize("shape,axis", [(["N", 3, 4], 1), ([2, 3, 4], 2), (["N", "M", 4], 2)])
def test_flatten_to_reshape(shape, axis):
    out_shape = ["A", "B"]
    out, _ = check(single([helper.make_node("Flatten", ["x"], ["y"], axis=axis)], shape, out_shape))
    assert ops(out) == {"Reshape": 1}


def test_flatten_unknown_rank_kept():
    m = model([helper.make_node("Flatten", ["x"], ["y"])], [helper.make_tensor_value_info("x", F, None)] if False else [vi("x", F, ["N", "C", "H"])], [vi("y", F, ["A", "B"])])
    out, _ = check(m, skip=["flatten-to-reshape"])
    assert ops(out) == {"Flatten": 1}


NOOP_CASES = {
    "pad": ([helper.make_node("Pad", ["x", "p"], ["a"])], [init("p", np.zeros(6, np.int64))]),
    "cast": ([helper.make_node("Cast", ["x"], ["a"], to=F)], []),
    "reshape": ([helper.make_node("Reshape", ["x", "s"], ["a"])], [init("s", np.array([0, 3, -1]))]),
    "transpose": ([helper.make_node("Transpose", ["x"], ["a"], perm=[0, 1, 2])], []),
    "slice": ([helper.make_node("Slice", ["x", "st", "en"], ["a"])], [init("st", np.array([0])), init("en", np.array([2**62]))]),
    "expand": ([helper.make_node("Expand", ["x", "s"], ["a"])], [init("s", np.array([1, 4]))]),
    "concat": ([helper.make_node("Concat", ["x"], ["a"], axis=0)], []),
    "split": ([helper.make_node("Split", ["x"], ["a"], axis=1, num_outputs=1)], []),
    "tile": ([helper.make_node("Tile", ["x", "r"], ["a"])], [init("r", np.ones(3, np.int64))]),
}


@pytest.mark.parametrize("case", sorted(NOOP_CASES))
def test_noop_removed(case):
    nodes, inits = NOOP_CASES[case]
    nodes = nodes + [helper.make_node("Relu", ["a"], ["y"])]
    out, _ = check(single(nodes, ["N", 3, 4], ["N", 3, 4], inits, opset=18))
    assert ops(out) == {"Relu": 1}


@pytest.mark.parametrize(
    "nodes,inits,y_shape",
    [
        ([helper.make_node("Expand", ["x", "s"], ["a"])], [init("s", np.array([2, 1, 1]))], ["N", 3, 4]),
        ([helper.make_node("Slice", ["x", "st", "en"], ["a"])], [init("st", np.array([1])), init("en", np.array([2**62]))], ["N", 3, 4]),
        ([helper.make_node("Pad", ["x", "p"], ["a"])], [init("p", np.array([0, 0, 1, 0, 0, 0]))], ["N", 3, 5]),
        ([helper.make_node("Reshape", ["x", "s"], ["a"])], [init("s", np.array([0, 4, -1]))], ["N", 4, 3]),
    ],
)
def test_noop_precondition_fails(nodes, inits, y_shape):
    nodes = nodes + [helper.make_node("Relu", ["a"], ["y"])]
    feeds = {"x": f32(1, 3, 4)}
    out, _ = check(single(nodes, ["N", 3, 4], y_shape, inits, opset=18), feeds=feeds)
    assert ops(out)[nodes[0].op_type] == 1


@pytest.mark.parametrize("op,c,keep", [("Mul", 1.0, False), ("Add", 0.0, False), ("Sub", 0.0, False),
                                       ("Div", 1.0, False), ("Mul", 2.0, True)])
def test_arith_identity(op, c, keep):
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node(op, ["r", "c"], ["y"])]
    out, _ = check(single(nodes, ["N", 4], ["N", 4], [init("c", np.full((4,), c, np.float32))]))
    assert (op in ops(out)) == keep
    assert out.graph.node[0].op_type == "Relu"


def test_arith_identity_broadcast_keeps_node():
    nodes = [helper.make_node("Mul", ["x", "c"], ["a"]), helper.make_node("Relu", ["a"], ["y"])]
    out, _ = check(single(nodes, ["N", 4], [2, "N", 4], [init("c", np.ones((2, 1, 4), np.float32))]))
    assert ops(out)["Mul"] == 1


def test_merge_chains():
    nodes = [
        helper.make_node("Transpose", ["x"], ["t1"], perm=[0, 2, 1]),
        helper.make_node("Transpose", ["t1"], ["t2"], perm=[1, 0, 2]),
        helper.make_node("Reshape", ["t2", "s1"], ["r1"]),
        helper.make_node("Reshape", ["r1", "s2"], ["r2"]),
        helper.make_node("Unsqueeze", ["r2", "a0"], ["u1"]),
        helper.make_node("Unsqueeze", ["u1", "a2"], ["u2"]),
        helper.make_node("Squeeze", ["u2", "a0"], ["q1"]),
        helper.make_node("Squeeze", ["q1", "a1"], ["q2"]),
        helper.make_node("Cast", ["q2"], ["c1"], to=11),
        helper.make_node("Cast", ["c1"], ["y"], to=F),
    ]
    inits = [init("s1", np.array([4, 6])), init("s2", np.array([2, 12])), init("a0", np.array([0])),
             init("a2", np.array([2])), init("a1", np.array([1]))]
    out, _ = check(single(nodes, [2, 3, 4], [2, 12], inits))
    h = ops(out)
    assert h["Transpose"] == 1 and h["Reshape"] == 1 and h["Cast"] == 0
    assert h["Unsqueeze"] + h["Squeeze"] <= 2


def test_cast_float_int_float_not_merged():
    nodes = [helper.make_node("Cast", ["x"], ["c1"], to=7), helper.make_node("Cast", ["c1"], ["y"], to=F)]
    x = np.array([[1.7, -2.5, 3.2]], np.float32)
    out, _ = check(single(nodes, [1, 3], [1, 3]), feeds={"x": x})
    assert ops(out)["Cast"] == 2


@pytest.mark.parametrize(
    "pool,attrs,fill,fused",
    [
        ("Conv", {}, 0.0, True),
        ("Conv", {}, 1.0, False),
        ("AveragePool", {"kernel_shape": [3, 3], "count_include_pad": 1, "pads": [1, 0, 0, 0]}, 0.0, True),
        ("AveragePool", {"kernel_shape": [3, 3], "count_include_pad": 1, "pads": [1, 1, 1, 1]}, 0.0, False),
        ("AveragePool", {"kernel_shape": [3, 3]}, 0.0, True),
        ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, 0.0, False),
        ("MaxPool", {"kernel_shape": [3, 3]}, 0.0, False),
        ("MaxPool", {"kernel_shape": [3, 3]}, float("-inf"), True),
    ],
)
def test_fuse_pad(pool, attrs, fill, fused):
    ins = ["p", "W"] if pool == "Conv" else ["p"]
    nodes = [helper.make_node("Pad", ["x", "pads", "v"], ["p"]), helper.make_node(pool, ins, ["y"], **attrs)]
    inits = [init("pads", np.array([0, 0, 1, 2, 0, 0, 2, 1])), init("v", np.array(fill, np.float32)), init("W", f32(2, 3, 3, 3))]
    out, _ = check(single(nodes, ["N", 3, 6, 6], ["N", "C", "H", "W"], inits))
    assert ("Pad" not in ops(out)) == fused


def test_cse_and_dedup():
    nodes = [helper.make_node("Add", ["x", "c1"], ["a"]), helper.make_node("Add", ["x", "c2"], ["b"]),
             helper.make_node("Mul", ["a", "b"], ["y"])]
    c = f32(4)
    out, r = check(single(nodes, [4], [4], [init("c1", c), init("c2", c.copy())]))
    assert ops(out) == {"Add": 1, "Mul": 1} and len(out.graph.initializer) == 1
    assert r.changes["dedup-initializers"] == 1 and r.changes["cse"] == 1


def test_cleanup_inside_loop_body():
    body = helper.make_graph(
        [helper.make_node("Identity", ["acc_in"], ["i1"]), helper.make_node("Dropout", ["i1"], ["d"]),
         helper.make_node("Mul", ["d", "one"], ["m"]), helper.make_node("Add", ["m", "x"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("iter", I64, []), vi("cond_in", 9, []), vi("acc_in", F, [3])],
        [vi("cond_out", 9, []), vi("acc_out", F, [3])])
    nodes = [helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)]
    m = model(nodes, [vi("x", F, [3])], [vi("y", F, [3])], [init("n", np.array(3)), init("one", np.ones(3, np.float32))])
    out, _ = check(m)
    h = ops(out)
    assert h["Dropout"] == 0 and h["Mul"] == 0 and h["Loop"] == 1 and h["Add"] == 1
