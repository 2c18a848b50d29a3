"""pd2onnx.optimize.value_types on small hand-built graphs: Loop-carried values, If branches,
sequences built by appending, gains-only merging; and empty constants for OpenVINO."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from pd2onnx.optimize.empty_constants import materialize_empty_constants
from pd2onnx.optimize.value_types import infer_types, missing


def _model(nodes, inputs, outputs, initializers=(), opset=17) -> ir.Model:
    graph = h.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return ir.serde.deserialize_model(h.make_model(graph, opset_imports=[h.make_opsetid("", opset)]))


def _vi(name, elem, shape=None):
    return h.make_tensor_value_info(name, elem, shape)


def _loop(body_nodes, carried_in, carried_out, init_names, extra_outputs=()):
    """Loop(n, cond, *init) with a body taking (iter, cond, *carried_in) and giving
    (cond, *carried_out, *extra_outputs); body value infos left untyped."""
    body = h.make_graph(
        [h.make_node("Identity", ["c_in"], ["c_out"]), *body_nodes], "body",
        [_vi("i", T.INT64, []), _vi("c_in", T.BOOL, []), *(h.make_value_info(n, h.TypeProto()) for n in carried_in)],
        [h.make_value_info("c_out", h.TypeProto()), *(h.make_value_info(n, h.TypeProto())
                                                       for n in [*carried_out, *extra_outputs])],
    )
    outs = [f"{n}_final" for n in init_names] + [f"{n}_scan" for n in extra_outputs]
    return h.make_node("Loop", ["n", "c", *init_names], outs, body=body), outs


def _by_name(model: ir.Model) -> dict[str, ir.Value]:
    found = {}
    for graph in [model.graph, *model.graph.subgraphs()]:
        for v in graph.inputs:
            found[v.name] = v
        for node in graph:
            for o in node.outputs:
                found[o.name] = o
    return found


def test_loop_carried_value_gets_the_rank_and_dims_the_body_keeps():
    loop, outs = _loop([h.make_node("MatMul", ["x_in", "w"], ["mm"]), h.make_node("Tanh", ["mm"], ["x_out"])],
                       ["x_in"], ["x_out"], ["x"])
    model = _model([loop], [_vi("n", T.INT64, []), _vi("c", T.BOOL, []), _vi("x", T.FLOAT, ["b", 4])],
                   [_vi(outs[0], T.FLOAT)], [nh.from_array(np.ones((4, 4), np.float32), "w")])
    report = infer_types(model)
    v = _by_name(model)
    assert not missing(model) and not report.no_rank
    assert [str(d) for d in v["x_in"].shape] == ["b", "4"]
    assert [str(d) for d in v["mm"].shape] == ["b", "4"]
    assert [str(d) for d in v["x_final"].shape] == ["b", "4"]


def test_loop_carried_value_that_grows_keeps_its_rank_not_the_dim():
    loop, outs = _loop([h.make_node("Concat", ["t_in", "one"], ["t_out"], axis=0)], ["t_in"], ["t_out"], ["t"])
    model = _model([loop], [_vi("n", T.INT64, []), _vi("c", T.BOOL, []), _vi("t", T.INT64, [2])],
                   [_vi(outs[0], T.INT64)], [nh.from_array(np.ones((1,), np.int64), "one")])
    infer_types(model)
    v = _by_name(model)
    assert len(v["t_in"].shape) == 1 and not isinstance(v["t_in"].shape[0], int)
    assert len(v["t_final"].shape) == 1 and not isinstance(v["t_final"].shape[0], int)


def test_loop_carried_value_that_changes_rank_gets_none_and_a_reason():
    loop, outs = _loop([h.make_node("Unsqueeze", ["u_in", "ax"], ["u_out"])], ["u_in"], ["u_out"], ["u"])
    model = _model([loop, h.make_node("Relu", [outs[0]], ["r"])],
                   [_vi("n", T.INT64, []), _vi("c", T.BOOL, []), _vi("u", T.FLOAT, [3])],
                   [_vi("r", T.FLOAT)], [nh.from_array(np.zeros((1,), np.int64), "ax")])
    report = infer_types(model)
    v = _by_name(model)
    for name in ("u_in", "u_final", "r"):
        assert v[name].shape is None, name
        assert v[name] in report.no_rank, name
    assert "rank 1" in report.no_rank[v["u_in"]] and "rank 2" in report.no_rank[v["u_in"]]
    assert not report.unranked


def test_if_branches_of_different_ranks_give_no_rank():
    then = h.make_graph([h.make_node("Identity", ["x"], ["t"])], "then", [], [h.make_value_info("t", h.TypeProto())])
    other = h.make_graph([h.make_node("Unsqueeze", ["x", "ax"], ["e"])], "else", [],
                         [h.make_value_info("e", h.TypeProto())])
    same = h.make_graph([h.make_node("Neg", ["x"], ["s"])], "same", [], [h.make_value_info("s", h.TypeProto())])
    nodes = [h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
             h.make_node("If", ["c"], ["z"], then_branch=then, else_branch=same)]
    model = _model(nodes, [_vi("c", T.BOOL, []), _vi("x", T.FLOAT, [2, 3])], [_vi("y", T.FLOAT), _vi("z", T.FLOAT)],
                   [nh.from_array(np.zeros((1,), np.int64), "ax")])
    report = infer_types(model)
    v = _by_name(model)
    assert v["y"].shape is None and "then branch" in report.no_rank[v["y"]]
    assert list(v["z"].shape) == [2, 3]


def test_sequence_built_by_appending_in_a_loop_has_element_shapes():
    """SequenceEmpty, then SequenceInsert in a Loop body: ONNX alone types no element."""
    loop, outs = _loop([h.make_node("SequenceInsert", ["s_in", "x"], ["s_out"]),
                        h.make_node("SequenceAt", ["s_out", "i"], ["last"]),
                        h.make_node("Relu", ["last"], ["y"])], ["s_in"], ["s_out"], ["s0"], extra_outputs=["y"])
    nodes = [h.make_node("SequenceEmpty", [], ["s0"], dtype=T.FLOAT), loop,
             h.make_node("SequenceAt", [outs[0], "zero"], ["first"])]
    model = _model(nodes, [_vi("n", T.INT64, []), _vi("c", T.BOOL, []), _vi("x", T.FLOAT, [2, 3])],
                   [_vi("first", T.FLOAT)], [nh.from_array(np.zeros((), np.int64), "zero")])
    report = infer_types(model)
    v = _by_name(model)
    assert not report.unranked and not report.untyped and not report.no_rank
    assert list(v["last"].shape) == [2, 3] and list(v["first"].shape) == [2, 3]
    assert list(v["y_scan"].shape)[1:] == [2, 3]


def test_hints_only_where_onnx_cannot_type():
    """A custom-domain node is typed by the hint; a value ONNX types keeps ONNX's type."""
    nodes = [h.make_node("Mystery", ["x"], ["m"], domain="custom"), h.make_node("Relu", ["m"], ["r"]),
             h.make_node("Neg", ["x"], ["n"])]
    untyped = h.TypeProto()
    graph = h.make_graph(nodes, "g", [_vi("x", T.FLOAT, [2, 3])],
                         [h.make_value_info("r", untyped), h.make_value_info("n", untyped)])
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("custom", 1)])
    model = ir.serde.deserialize_model(proto)
    asked = []

    def hint(value):
        asked.append(value.name)
        return ir.TensorType(ir.DataType.INT64), [None] * 4

    infer_types(model, hint)
    v = _by_name(model)
    assert "m" in asked and "n" not in asked
    assert v["m"].dtype == ir.DataType.INT64 and len(v["m"].shape) == 4
    assert v["r"].dtype == ir.DataType.INT64 and len(v["r"].shape) == 4  # propagated by ONNX
    assert v["n"].dtype == ir.DataType.FLOAT and list(v["n"].shape) == [2, 3]


def test_existing_types_win_conflicts():
    model = _model([h.make_node("Neg", ["x"], ["y"])], [_vi("x", T.FLOAT, [2, 3])], [_vi("y", T.FLOAT, [2, None])])
    infer_types(model)
    assert list(model.graph.outputs[0].shape) == [2, 3]  # a gain (static dim)
    model = _model([h.make_node("Neg", ["x"], ["y"])], [_vi("x", T.FLOAT, [2, 3])], [_vi("y", T.FLOAT, [5])])
    infer_types(model)
    assert list(model.graph.outputs[0].shape) == [5]  # a conflict keeps what the value had


# ------------------------------------------------------------------------------ empty constants
def _placeholder_if() -> ir.Model:
    """An If passing an empty placeholder of rank 2 on one path (what a legacy
    conditional_block converts to)."""
    then = h.make_graph([h.make_node("Mul", ["x", "x"], ["t"])], "then", [], [_vi("t", T.FLOAT, ["b", 3])])
    other = h.make_graph([h.make_node("Identity", ["empty"], ["e"])], "else", [], [_vi("e", T.FLOAT, [0, 0])])
    nodes = [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0), h.make_node("Greater", ["s", "zero"], ["c"]),
             h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other), h.make_node("Relu", ["y"], ["r"])]
    return _model(nodes, [_vi("x", T.FLOAT, ["b", 3])], [_vi("r", T.FLOAT, [None, None])],
                  [nh.from_array(np.zeros((0, 0), np.float32), "empty"), nh.from_array(np.float32(0), "zero")])


def test_empty_constants_become_constant_of_shape(tmp_path):
    model = _placeholder_if()
    assert materialize_empty_constants(model) == 1
    proto = ir.serde.serialize_model(model)
    onnx.checker.check_model(proto, full_check=True)
    assert [n.op_type for n in proto.graph.node][0] == "ConstantOfShape"
    assert "empty" not in {i.name for i in proto.graph.initializer}
    x = np.abs(np.random.default_rng(0).standard_normal((4, 3))).astype(np.float32)
    ort = pytest.importorskip("onnxruntime")
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, x * x)
    ov = pytest.importorskip("openvino")
    path = str(tmp_path / "if.onnx")
    onnx.save(proto, path)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    np.testing.assert_array_equal(np.asarray(compiled([x])[compiled.outputs[0]]), x * x)


def test_openvino_reads_an_empty_initializer_as_a_scalar(tmp_path):
    """The OpenVINO behaviour materialize_empty_constants works around (when this fails,
    OpenVINO has changed and the workaround can go)."""
    ov = pytest.importorskip("openvino")
    path = str(tmp_path / "if.onnx")
    onnx.save(ir.serde.serialize_model(_placeholder_if()), path)
    with pytest.raises(Exception, match="dynamic rank"):
        ov.Core().compile_model(ov.Core().read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})


def test_input_shape_override_keeps_ranks_inference_cannot_give():
    """``optimize(input_shapes=...)`` clears the intermediate shapes to infer them again: a
    value only the converter knew the rank of (a custom-domain node) keeps its rank."""
    from pd2onnx.optimize import optimize

    nodes = [h.make_node("Mystery", ["x"], ["m"], domain="custom"), h.make_node("Relu", ["m"], ["r"])]
    graph = h.make_graph(nodes, "g", [_vi("x", T.FLOAT, ["b", 3])], [_vi("r", T.FLOAT, [None, None])],
                         value_info=[_vi("m", T.FLOAT, [None, None])])
    model = ir.serde.deserialize_model(
        h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("custom", 1)]))
    optimize(model, input_shapes={"x": [4, 3]})
    v = _by_name(model)
    assert list(model.graph.inputs[0].shape) == [4, 3]
    assert len(v["m"].shape) == 2 and len(v["r"].shape) == 2
    assert not missing(model)
