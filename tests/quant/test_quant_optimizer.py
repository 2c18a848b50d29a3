"""The optimizer on quantized (QDQ) graphs: Q/DQ kept and never fused through by default; a
float model with ``fold_qdq`` / ``--fold-qdq``."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import onnx
import onnx_ir as ir
import pytest
from onnx import TensorProto, helper, numpy_helper

from harness.cases import REGISTRY
from pd2onnx.api import convert
from pd2onnx.optimize import optimize

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_quant_models import _built, _samples, activation_step, run_ort  # noqa: E402


def _qdq_conv_model() -> onnx.ModelProto:
    """x -> Q -> DQ -> Conv(DQ(int8 w, per channel)) -> Add(bias) -> BatchNorm -> Mul(2) -> Q -> DQ -> y;
    plus a Reshape of a DQ weight (must not be folded)."""
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    inits = [
        numpy_helper.from_array(w, "w_q"),
        numpy_helper.from_array(np.linspace(0.01, 0.04, 4).astype(np.float32), "w_scale"),
        numpy_helper.from_array(np.zeros(4, np.int8), "w_zp"),
        numpy_helper.from_array(np.float32(0.05), "x_scale"),
        numpy_helper.from_array(np.int8(0), "zp"),
        numpy_helper.from_array(rng.standard_normal((1, 4, 1, 1)).astype(np.float32), "bias"),
        numpy_helper.from_array(np.ones(4, np.float32) * 1.5, "bn_s"),
        numpy_helper.from_array(np.ones(4, np.float32) * 0.1, "bn_b"),
        numpy_helper.from_array(np.zeros(4, np.float32), "bn_m"),
        numpy_helper.from_array(np.ones(4, np.float32), "bn_v"),
        numpy_helper.from_array(np.float32(2.0), "two"),
        numpy_helper.from_array(np.float32(2.0), "y_scale"),
        numpy_helper.from_array(np.array([4, 27], np.int64), "shape"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "zp"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "zp"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["wd"], axis=0),
        helper.make_node("Conv", ["xd", "wd"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "bias"], ["cb"]),
        helper.make_node("BatchNormalization", ["cb", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"]),
        helper.make_node("Mul", ["bn", "two"], ["m"]),
        helper.make_node("QuantizeLinear", ["m", "y_scale", "zp"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "zp"], ["y"]),
        helper.make_node("Reshape", ["wd", "shape"], ["w2"]),
    ]
    graph = helper.make_graph(
        nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("w2", TensorProto.FLOAT, None)], inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _ops(model: ir.Model) -> list[str]:
    return [n.op_type for n in model.graph]


def _run(model, x):
    import onnxruntime as ort

    proto = model if isinstance(model, onnx.ModelProto) else ir.serde.serialize_model(model)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})


def test_qdq_kept_and_not_fused_through():
    proto = _qdq_conv_model()
    model = ir.serde.deserialize_model(proto)
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    want = _run(proto, x)
    optimize(model)
    ops = _ops(model)
    assert ops.count("QuantizeLinear") == 2 and ops.count("DequantizeLinear") == 3, ops
    assert "Reshape" in ops  # the Reshape of a DQ weight is not folded into a float constant
    int8 = [v for v in model.graph.initializers.values() if v.const_value.dtype == ir.DataType.INT8
            and v.const_value.size == 108]
    assert len(int8) == 1 and np.array_equal(int8[0].const_value.numpy(), numpy_helper.to_array(proto.graph.initializer[0]))
    assert not any(v.const_value.dtype == ir.DataType.FLOAT and v.const_value.size >= 108
                   for v in model.graph.initializers.values()), "a weight was dequantized to float"
    # The bias went into the Conv (runtimes then fuse QLinearConv); BN and Mul need the weight: kept.
    conv = next(n for n in model.graph if n.op_type == "Conv")
    assert len(conv.inputs) == 3 and "Add" not in ops
    assert "BatchNormalization" in ops and "Mul" in ops
    for got, ref in zip(_run(model, x), want):
        np.testing.assert_allclose(got, ref, atol=1e-5)


def test_fold_qdq_makes_a_float_model():
    proto = _qdq_conv_model()
    model = ir.serde.deserialize_model(proto)
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    report = optimize(model, fold_qdq=True)
    assert report.changes["fold-qdq"] == 3  # two activation pairs, one weight
    ops = _ops(model)
    assert "QuantizeLinear" not in ops and "DequantizeLinear" not in ops, ops
    assert ops.count("Conv") == 1 and "BatchNormalization" not in ops and "Mul" not in ops, ops  # fused now
    assert not any(v.const_value.dtype == ir.DataType.INT8 for v in model.graph.initializers.values())
    # Reference: the same float computation with the dequantized weight and no activation rounding.
    w = numpy_helper.to_array(proto.graph.initializer[0]).astype(np.float32) * np.linspace(0.01, 0.04, 4).astype(
        np.float32).reshape(4, 1, 1, 1)
    y, w2 = _run(model, x)
    np.testing.assert_allclose(w2, w.reshape(4, 27), rtol=1e-6)
    # The same graph with the activation Q/DQ nodes made Identity (weights still dequantized by ORT).
    plain = onnx.ModelProto()
    plain.CopyFrom(proto)
    for node in plain.graph.node:
        if node.op_type in ("QuantizeLinear", "DequantizeLinear") and node.input[0] not in ("w_q",):
            node.op_type = "Identity"
            del node.input[1:]
    np.testing.assert_allclose(y, _run(plain, x)[0], rtol=1e-5, atol=1e-4)


def test_fold_qdq_on_a_converted_model(tmp_path):
    built = _built(REGISTRY["qat_convert"], "legacy")
    x, ref = _samples(built)
    quant = convert(built.model_file, built.params_file, optimize=False)
    step = activation_step(quant)
    src = str(tmp_path / "q.onnx")
    dst = str(tmp_path / "f.onnx")
    from pd2onnx.onnx_io import save_model

    save_model(quant, src)
    proc = subprocess.run([sys.executable, "-m", "pd2onnx.optimize.command", src, "-o", dst, "--fold-qdq"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "fold-qdq=" in proc.stdout
    model = ir.load(dst)
    ops = _ops(model)
    assert not {"QuantizeLinear", "DequantizeLinear"} & set(ops), ops
    # Reference: the converted QDQ model with its activation Q/DQ nodes made Identity.
    plain = ir.serde.serialize_model(quant)
    inits = {i.name for i in plain.graph.initializer}
    del plain.graph.value_info[:]
    for node in plain.graph.node:
        if node.op_type in ("QuantizeLinear", "DequantizeLinear") and node.input[0] not in inits:
            node.op_type = "Identity"
            del node.input[1:]
            del node.attribute[:]
    got = run_ort(model, x, optimized=False)
    want = run_ort(ir.serde.deserialize_model(plain), x, optimized=False)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert step > 0
    assert os.path.getsize(dst) > 2 * os.path.getsize(src)  # weights are float32 again


@pytest.mark.parametrize("fold", [False, True])
def test_fp16_keeps_qdq(fold):
    from pd2onnx.optimize import to_fp16

    model = ir.serde.deserialize_model(_qdq_conv_model())
    optimize(model, fold_qdq=fold)
    to_fp16(model, keep_io_types=True)
    ops = _ops(model)
    assert ("DequantizeLinear" in ops) != fold
