"""Streaming ONNX writer: same model as protobuf's own serialisation, never a partial file."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import onnx_ir as ir
import pytest

from pd2onnx.onnx_io import initializer_bytes, save_model


def _model() -> ir.Model:
    x = ir.Value(name="x", type=ir.TensorType(ir.DataType.FLOAT), shape=ir.Shape([2, 3]))
    tensors = {
        "w": np.arange(6, dtype=np.float32).reshape(3, 2),
        "h": np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16),
        "b": np.array([True, False]),
        "s": np.array(7, dtype=np.int64),
        "e": np.zeros((0, 4), dtype=np.float16),
        "big": np.random.default_rng(0).standard_normal(70_000).astype(np.float32),  # multi-byte varints
    }
    graph = ir.Graph([x], [], nodes=[], opset_imports={"": 17}, name="g")
    values = {}
    for name, arr in tensors.items():
        v = ir.Value(name=name, const_value=ir.tensor(arr, name=name))
        graph.register_initializer(v)
        values[name] = v
    node = ir.Node("", "MatMul", [x, values["w"]], num_outputs=1, name="mm")
    graph.append(node)
    node.outputs[0].name = "y"
    node.outputs[0].type = ir.TensorType(ir.DataType.FLOAT)
    node.outputs[0].shape = ir.Shape([2, 2])
    graph.outputs.append(node.outputs[0])
    for name in ("h", "b", "s", "e", "big"):
        ident = ir.Node("", "Identity", [values[name]], num_outputs=1, name=f"id_{name}")
        graph.append(ident)
        ident.outputs[0].name = f"out_{name}"
        ident.outputs[0].type = ir.TensorType(values[name].const_value.dtype)
        ident.outputs[0].shape = ir.Shape(values[name].const_value.shape)
        graph.outputs.append(ident.outputs[0])
    return ir.Model(graph, ir_version=8)


def test_streamed_file_equals_protobuf_serialisation(tmp_path):
    model = _model()
    path = tmp_path / "m.onnx"
    assert save_model(model, str(path)) == [str(path)]
    got = onnx.load(str(path))
    want = ir.serde.serialize_model(model)
    assert got.SerializeToString(deterministic=True) == want.SerializeToString(deterministic=True)
    onnx.checker.check_model(got, full_check=True)
    # the model object is unchanged (initializers restored after writing)
    assert initializer_bytes(model) == sum(v.const_value.nbytes for v in model.graph.initializers.values())
    assert all(v.const_value is not None for v in model.graph.initializers.values())


def test_failed_write_leaves_no_file(tmp_path, monkeypatch):
    import pd2onnx.onnx_io as onnx_io

    def boom(model, f):
        f.write(b"partial")
        raise RuntimeError("disk full")

    monkeypatch.setattr(onnx_io, "write_streamed", boom)
    with pytest.raises(RuntimeError):
        save_model(_model(), str(tmp_path / "m.onnx"))
    assert list(tmp_path.iterdir()) == []
