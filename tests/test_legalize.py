"""The legalization pass (pd2onnx.convert.legalize) on small hand-built graphs, run in ONNX
Runtime and compared with numpy (computed in float32 and rounded once, like the pass)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx import TensorProto as T
from onnx import helper

from pd2onnx.convert.legalize import has_kernel, legalize

ort = pytest.importorskip("onnxruntime")

BF16 = ml_dtypes.bfloat16


def _model(nodes, inputs, outputs, opset, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(proto: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    onnx.checker.check_model(proto)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _legalized(proto: onnx.ModelProto):
    model = ir.serde.deserialize_model(proto)
    report = legalize(model)
    return ir.serde.serialize_model(model), report


def _ops(proto: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in proto.graph.node]


def _vi(name, elem, shape=(2, 3)):
    return helper.make_tensor_value_info(name, elem, list(shape))


def _bf16_binary(op: str, opset: int, out_elem=T.BFLOAT16):
    """float32 inputs a, b -> bfloat16 -> op -> float32 output (bf16 has no numpy feed)."""
    nodes = [
        helper.make_node("Cast", ["a"], ["a16"], to=T.BFLOAT16),
        helper.make_node("Cast", ["b"], ["b16"], to=T.BFLOAT16),
        helper.make_node(op, ["a16", "b16"], ["r"]),
    ]
    if out_elem == T.BFLOAT16:
        nodes.append(helper.make_node("Cast", ["r"], ["y"], to=T.FLOAT))
        out = _vi("y", T.FLOAT)
    else:
        nodes.append(helper.make_node("Identity", ["r"], ["y"]))
        out = _vi("y", out_elem)
    return _model(nodes, [_vi("a", T.FLOAT), _vi("b", T.FLOAT)], [out], opset)


def _feeds(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((2, 3)).astype(BF16).astype(np.float32)
    b = rng.standard_normal((2, 3)).astype(BF16).astype(np.float32)
    return {"a": a, "b": b}


@pytest.mark.parametrize("op, ref, out_elem", [
    ("Mul", lambda a, b: (a * b).astype(BF16).astype(np.float32), T.BFLOAT16),
    ("Sub", lambda a, b: (a - b).astype(BF16).astype(np.float32), T.BFLOAT16),
    ("Max", lambda a, b: np.maximum(a, b), T.BFLOAT16),
    ("Less", lambda a, b: a < b, T.BOOL),
    ("Equal", lambda a, b: a == b, T.BOOL),
])
def test_bf16_node_without_kernel_runs_in_float32(op, ref, out_elem):
    proto = _bf16_binary(op, 13, out_elem)
    with pytest.raises(Exception, match="implementation|unsupported type"):
        _run(proto, _feeds())
    fixed, report = _legalized(proto)
    assert report.rewritten == [(op, "T=bfloat16", "T=float")]
    assert not report.unresolved
    feeds = _feeds()
    (got,) = _run(fixed, feeds)
    np.testing.assert_array_equal(got, ref(feeds["a"], feeds["b"]))


def test_node_with_kernel_is_untouched():
    proto = _model([helper.make_node("Mul", ["a", "b"], ["y"])], [_vi("a", T.FLOAT), _vi("b", T.FLOAT)],
                   [_vi("y", T.FLOAT)], 13)
    fixed, report = _legalized(proto)
    assert report.rewritten == [] and _ops(fixed) == ["Mul"]
    # int8 Add has a kernel from opset 14 (Add-14): nothing to do there either
    proto = _model([helper.make_node("Add", ["a", "b"], ["y"])], [_vi("a", T.INT8), _vi("b", T.INT8)],
                   [_vi("y", T.INT8)], 14)
    fixed, report = _legalized(proto)
    assert report.rewritten == [] and _ops(fixed) == ["Add"]


def test_graph_output_keeps_its_name_and_type():
    nodes = [helper.make_node("Cast", ["a"], ["a16"], to=T.BFLOAT16), helper.make_node("Neg", ["a16"], ["y"])]
    proto = _model(nodes, [_vi("a", T.FLOAT)], [_vi("y", T.BFLOAT16)], 13)
    fixed, report = _legalized(proto)
    assert report.rewritten == [("Neg", "T=bfloat16", "T=float")]
    assert [o.name for o in fixed.graph.output] == ["y"]
    assert fixed.graph.output[0].type.tensor_type.elem_type == T.BFLOAT16
    assert fixed.graph.node[-1].op_type == "Cast"


def test_where_and_topk_bf16():
    nodes = [
        helper.make_node("Cast", ["a"], ["a16"], to=T.BFLOAT16),
        helper.make_node("Cast", ["b"], ["b16"], to=T.BFLOAT16),
        helper.make_node("Where", ["c", "a16", "b16"], ["w"]),
        helper.make_node("TopK", ["w", "k"], ["v", "i"], axis=1),
        helper.make_node("Cast", ["v"], ["y"], to=T.FLOAT),
    ]
    k = helper.make_tensor("k", T.INT64, [1], [2])
    proto = _model(nodes, [_vi("a", T.FLOAT), _vi("b", T.FLOAT), _vi("c", T.BOOL)],
                   [_vi("y", T.FLOAT, (2, 2)), _vi("i", T.INT64, (2, 2))], 13, [k])
    fixed, report = _legalized(proto)
    assert [r[0] for r in report.rewritten] == ["Where", "TopK"]
    feeds = _feeds()
    feeds["c"] = np.array([[1, 0, 1], [0, 1, 1]], bool)
    y, i = _run(fixed, feeds)
    w = np.where(feeds["c"], feeds["a"], feeds["b"])
    order = np.argsort(-w, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(i, order)
    np.testing.assert_array_equal(y, np.take_along_axis(w, order, axis=1))


def test_float64_erf_goes_through_float32():
    proto = _model([helper.make_node("Erf", ["a"], ["y"])], [_vi("a", T.DOUBLE)], [_vi("y", T.DOUBLE)], 13)
    fixed, report = _legalized(proto)
    assert report.rewritten == [("Erf", "T=double", "T=float")]
    a = np.linspace(-2, 2, 6).reshape(2, 3)
    (got,) = _run(fixed, {"a": a})
    assert got.dtype == np.float64
    import math

    np.testing.assert_allclose(got, np.vectorize(math.erf)(a), rtol=1e-6)


def test_integer_widening_is_exact_and_only_where_exact():
    # int8 Mul has no kernel before Mul-14: computed in int32, wrapped back to int8
    proto = _model([helper.make_node("Mul", ["a", "b"], ["y"])], [_vi("a", T.INT8), _vi("b", T.INT8)],
                   [_vi("y", T.INT8)], 13)
    fixed, report = _legalized(proto)
    assert report.rewritten == [("Mul", "T=int8", "T=int32")]
    a = np.array([[100, -128, 7], [-3, 127, 0]], np.int8)
    b = np.array([[3, -1, 9], [5, 2, 1]], np.int8)
    (got,) = _run(fixed, {"a": a, "b": b})
    np.testing.assert_array_equal(got, (a.astype(np.int32) * b.astype(np.int32)).astype(np.int8))
    # int8 Pow: no exact wider computation is known here, so it is left and reported
    proto = _model([helper.make_node("Pow", ["a", "b"], ["y"])], [_vi("a", T.INT8), _vi("b", T.INT8)],
                   [_vi("y", T.INT8)], 13)
    fixed, report = _legalized(proto)
    assert report.rewritten == [] and report.unresolved and report.unresolved[0][0] == "Pow"


def test_bool_where_goes_through_uint8():
    nodes = [helper.make_node("Where", ["c", "a", "b"], ["y"])]
    proto = _model(nodes, [_vi("c", T.BOOL), _vi("a", T.BOOL), _vi("b", T.BOOL)], [_vi("y", T.BOOL)], 13)
    fixed, report = _legalized(proto)
    assert report.rewritten == [("Where", "T=bool", "T=uint8")]
    c = np.array([[1, 0, 1], [0, 1, 0]], bool)
    a = np.array([[1, 1, 0], [0, 1, 1]], bool)
    b = ~a
    (got,) = _run(fixed, {"c": c, "a": a, "b": b})
    np.testing.assert_array_equal(got, np.where(c, a, b))


def test_if_and_loop_bodies_are_legalized():
    def branch(name, op):
        return helper.make_graph([helper.make_node(op, ["x16", "x16"], [f"{name}_r"])], name, [],
                                 [helper.make_tensor_value_info(f"{name}_r", T.BFLOAT16, [2, 3])])

    body = helper.make_graph(
        [helper.make_node("Mul", ["acc", "x16"], ["acc2"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("it", T.INT64, []), helper.make_tensor_value_info("cond_in", T.BOOL, []),
         helper.make_tensor_value_info("acc", T.BFLOAT16, [2, 3])],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []),
         helper.make_tensor_value_info("acc2", T.BFLOAT16, [2, 3])],
    )
    nodes = [
        helper.make_node("Cast", ["a"], ["x16"], to=T.BFLOAT16),
        helper.make_node("If", ["c"], ["r"], then_branch=branch("then", "Mul"), else_branch=branch("else", "Sub")),
        helper.make_node("Loop", ["n", "", "r"], ["l"], body=body),
        helper.make_node("Cast", ["l"], ["y"], to=T.FLOAT),
    ]
    n = helper.make_tensor("n", T.INT64, [], [2])
    # (opset 16: Loop-13's schema has no bfloat16 loop-carried values)
    proto = _model(nodes, [_vi("a", T.FLOAT), helper.make_tensor_value_info("c", T.BOOL, [])],
                   [_vi("y", T.FLOAT)], 16, [n])
    fixed, report = _legalized(proto)
    assert sorted(r[0] for r in report.rewritten) == ["Mul", "Mul", "Sub"]
    a = np.array([[1.5, -2, 0.25], [3, 0.5, -1]], np.float32)
    (got,) = _run(fixed, {"a": a, "c": np.array(True)})
    np.testing.assert_array_equal(got, a * a * a * a)
    (got,) = _run(fixed, {"a": a, "c": np.array(False)})
    np.testing.assert_array_equal(got, np.zeros_like(a))


def test_has_kernel():
    assert has_kernel("Mul", 13, {"T": "float"})
    assert not has_kernel("Mul", 13, {"T": "bfloat16"})
    assert has_kernel("Mul", 14, {"T": "int8"}) and not has_kernel("Mul", 13, {"T": "int8"})


def test_type_the_onnx_schema_refuses_is_legalized():
    """Compress-11 has a bfloat16 kernel in ONNX Runtime but its ONNX schema has no bfloat16."""
    nodes = [
        helper.make_node("Cast", ["a"], ["a16"], to=T.BFLOAT16),
        helper.make_node("Compress", ["a16", "c"], ["r"]),
        helper.make_node("Cast", ["r"], ["y"], to=T.FLOAT),
    ]
    proto = _model(nodes, [_vi("a", T.FLOAT, (4,)), _vi("c", T.BOOL, (4,))], [_vi("y", T.FLOAT, (None,))], 13)
    fixed, report = _legalized(proto)
    assert report.rewritten == [("Compress", "T=bfloat16", "T=float")]
    a = np.array([1.5, -2, 3, 0.25], np.float32)
    c = np.array([1, 0, 1, 1], bool)
    (got,) = _run(fixed, {"a": a, "c": c})
    np.testing.assert_array_equal(got, a[c])


def test_optimizer_keeps_the_rounding_between_legalized_nodes():
    """Mul then Sub in bfloat16: each is computed in float32 and rounded to bfloat16 once, like
    Paddle; the optimizer may drop Cast(bf16->f32)->Cast(f32->bf16) but never the rounding
    Cast(f32->bf16)->Cast(bf16->f32) between the two nodes."""
    from pd2onnx.optimize import optimize

    nodes = [
        helper.make_node("Cast", ["a"], ["a16"], to=T.BFLOAT16),
        helper.make_node("Cast", ["b"], ["b16"], to=T.BFLOAT16),
        helper.make_node("Mul", ["a16", "b16"], ["m"]),
        helper.make_node("Sub", ["m", "a16"], ["r"]),
        helper.make_node("Cast", ["r"], ["y"], to=T.FLOAT),
    ]
    proto = _model(nodes, [_vi("a", T.FLOAT), _vi("b", T.FLOAT)], [_vi("y", T.FLOAT)], 13)
    model = ir.serde.deserialize_model(proto)
    legalize(model)
    optimize(model)
    fixed = ir.serde.serialize_model(model)
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((2, 3)) * 3).astype(BF16).astype(np.float32)
    b = (rng.standard_normal((2, 3)) * 3).astype(BF16).astype(np.float32)
    (got,) = _run(fixed, {"a": a, "b": b})
    m = (a * b).astype(BF16).astype(np.float32)
    np.testing.assert_array_equal(got, (m - a).astype(BF16).astype(np.float32))
    casts = [(n.input[0], helper.get_attribute_value(n.attribute[0])) for n in fixed.graph.node if n.op_type == "Cast"]
    assert sum(to == T.BFLOAT16 for _, to in casts) >= 1  # the rounding after Mul is still there


def test_fp16_conversion_leaves_legalized_islands_in_float32():
    """to_fp16 on a bfloat16 model: the float32 Mul the pass made stays float32 (in float16,
    bfloat16 values beyond 65504 would overflow); the float32 part of the model goes float16."""
    from pd2onnx.optimize import to_fp16

    nodes = [
        helper.make_node("Cast", ["a"], ["a16"], to=T.BFLOAT16),
        helper.make_node("Mul", ["a16", "a16"], ["m"]),
        helper.make_node("Cast", ["m"], ["y"], to=T.FLOAT),
        helper.make_node("Relu", ["a"], ["z"]),
    ]
    proto = _model(nodes, [_vi("a", T.FLOAT)], [_vi("y", T.FLOAT), _vi("z", T.FLOAT)], 13)
    model = ir.serde.deserialize_model(proto)
    legalize(model)
    to_fp16(model, keep_io_types=True)
    fixed = ir.serde.serialize_model(model)
    a = np.array([[300.0, -1000, 2], [4, 5, -6]], np.float32)
    y, z = _run(fixed, {"a": a})
    np.testing.assert_array_equal(y, (a * a).astype(BF16).astype(np.float32))
    np.testing.assert_array_equal(z, np.maximum(a, 0))
    relu = next(n for n in fixed.graph.node if n.op_type == "Relu")
    producer = next(n for n in fixed.graph.node if relu.input[0] in n.output)
    assert producer.op_type == "Cast" and helper.get_attribute_value(producer.attribute[0]) == T.FLOAT16
    mul = next(n for n in fixed.graph.node if n.op_type == "Mul")
    assert all(next(n for n in fixed.graph.node if i in n.output).attribute[0].i == T.FLOAT for i in mul.input)


def test_cumsum_int8_wraps_like_int8():
    """CumSum's schema has no int8: computed in int32 and narrowed (exact modulo 2^8)."""
    nodes = [helper.make_node("CumSum", ["a", "axis"], ["y"])]
    axis = helper.make_tensor("axis", T.INT64, [], [1])
    proto = _model(nodes, [_vi("a", T.INT8)], [_vi("y", T.INT8)], 14, [axis])
    fixed, report = _legalized(proto)
    assert report.rewritten == [("CumSum", "T=int8", "T=int32")]
    a = np.array([[100, 100, 100], [-128, -1, 5]], np.int8)
    (got,) = _run(fixed, {"a": a})
    np.testing.assert_array_equal(got, np.cumsum(a.astype(np.int32), axis=1).astype(np.int8))


def test_float16_left_to_onnx_runtime_when_it_casts_by_itself():
    """float16 Mul has no CPU kernel but ONNX Runtime runs it through float32 itself: the node
    stays float16 (other runtimes have the kernel)."""
    proto = _model([helper.make_node("Mul", ["a", "b"], ["y"])], [_vi("a", T.FLOAT16), _vi("b", T.FLOAT16)],
                   [_vi("y", T.FLOAT16)], 13)
    fixed, report = _legalized(proto)
    assert report.rewritten == [] and _ops(fixed) == ["Mul"]
    a = np.array([[1.5, -2, 3], [0.25, 5, -6]], np.float16)
    (got,) = _run(fixed, {"a": a, "b": a})
    np.testing.assert_array_equal(got, (a.astype(np.float32) ** 2).astype(np.float16))
