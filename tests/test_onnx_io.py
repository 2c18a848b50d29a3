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


def _invalid_model() -> ir.Model:
    """A Relu without its input, named as the converter names nodes (Paddle op relu, block 0, op #3)."""
    model = _model()
    bad = ir.Node("", "Relu", [], num_outputs=1, name="relu_0_3/Relu_1")
    bad.outputs[0].name = "bad"
    bad.outputs[0].type = ir.TensorType(ir.DataType.FLOAT)
    bad.outputs[0].shape = ir.Shape([2])
    model.graph.append(bad)
    model.graph.outputs.append(bad.outputs[0])
    return model


@pytest.mark.parametrize("external", [None, True])
def test_file_failing_the_checker_is_not_written(tmp_path, external):
    """Every written file passes onnx.checker before it is renamed into place (the streamed
    file through a view of its structure, the external-data form by path)."""
    from pd2onnx.errors import ConversionError

    with pytest.raises(ConversionError) as info:
        save_model(_invalid_model(), str(tmp_path / "m.onnx"), external_data=external)
    text = str(info.value)
    assert "does not pass onnx.checker" in text and "Relu" in text, text
    assert "comes from Paddle op relu (block 0, op #3)" in text
    assert str(tmp_path / "m.onnx") in text
    assert list(tmp_path.iterdir()) == []


def test_bytes_failing_the_checker_are_not_returned():
    from pd2onnx.errors import ConversionError
    from pd2onnx.onnx_io import to_bytes

    with pytest.raises(ConversionError, match="does not pass onnx.checker"):
        to_bytes(_invalid_model())
    assert onnx.load_from_string(to_bytes(_model())).graph.node


def test_checker_view_matches_the_streamed_file(tmp_path):
    """The view onnx.checker sees holds the written file's structure, each initializer
    pointing at its raw bytes inside the file."""
    from pd2onnx.onnx_io import write_streamed

    path = tmp_path / "m.onnx"
    with open(path, "wb") as f:
        skeleton = write_streamed(_model(), f)
    view = onnx.load(skeleton.checker_view(str(tmp_path), "m.onnx"), load_external_data=False)
    written = onnx.load(str(path))
    data = path.read_bytes()
    assert [t.name for t in view.graph.initializer] == [t.name for t in written.graph.initializer]
    for shown, real in zip(view.graph.initializer, written.graph.initializer):
        where = {e.key: e.value for e in shown.external_data}
        start, length = int(where["offset"]), int(where["length"])
        assert data[start:start + length] == real.raw_data
        assert list(shown.dims) == list(real.dims) and shown.data_type == real.data_type
    view.graph.ClearField("initializer")
    written.graph.ClearField("initializer")
    assert view.graph == written.graph


def _mapped_model(params_path) -> ir.Model:
    """A model whose two weights are views of a memory-mapped file (as the params reader gives
    them), beside one computed weight and one transposed (non-contiguous) view."""
    from pd2onnx.mapped_files import map_file

    rng = np.random.default_rng(1)
    head = b"header!"  # the weights start at an odd offset, as records in a .pdiparams do
    w1 = rng.standard_normal((512, 1024)).astype(np.float32)
    w2 = rng.standard_normal(300_000).astype(np.float32)
    params_path.write_bytes(head + w1.tobytes() + w2.tobytes())
    buf = map_file(str(params_path))
    views = {
        "w1": np.frombuffer(buf, np.float32, count=w1.size, offset=len(head)).reshape(w1.shape),
        "w2": np.frombuffer(buf, np.float32, count=w2.size, offset=len(head) + w1.nbytes),
    }
    views["w1t"] = views["w1"].T  # a view, but not a contiguous run of the file
    views["computed"] = views["w2"] * 2
    x = ir.Value(name="x", type=ir.TensorType(ir.DataType.FLOAT), shape=ir.Shape([1]))
    graph = ir.Graph([x], [], nodes=[], opset_imports={"": 17}, name="g")
    for name, arr in views.items():
        v = ir.Value(name=name, const_value=ir.tensor(arr, name=name))
        graph.register_initializer(v)
        ident = ir.Node("", "Identity", [v], num_outputs=1, name=f"id_{name}")
        graph.append(ident)
        ident.outputs[0].name = f"out_{name}"
        ident.outputs[0].type = ir.TensorType(ir.DataType.FLOAT)
        ident.outputs[0].shape = ir.Shape(arr.shape)
        graph.outputs.append(ident.outputs[0])
    return ir.Model(graph, ir_version=8)


def _count_copies(monkeypatch) -> list[int]:
    import pd2onnx.mapped_files as mapped_files

    copied: list[int] = []
    real = mapped_files.copy_range

    def counting(path, offset, length, identity, out):
        done = real(path, offset, length, identity, out)
        if done:
            copied.append(length)
        return done

    monkeypatch.setattr(mapped_files, "copy_range", counting)
    return copied


def _kernel_copies(directory) -> bool:
    """Whether os.copy_file_range works between two files of ``directory`` (Linux; some file
    systems refuse it, and the writer then writes from memory)."""
    import os

    if not hasattr(os, "copy_file_range"):
        return False
    src, dst = directory / "probe-src", directory / "probe-dst"
    src.write_bytes(b"probe")
    try:
        with open(src, "rb") as a, open(dst, "wb") as b:
            return os.copy_file_range(a.fileno(), b.fileno(), 5, 0) == 5
    except OSError:
        return False
    finally:
        src.unlink()
        dst.unlink(missing_ok=True)


def test_mapped_weights_are_copied_file_to_file(tmp_path, monkeypatch):
    if not _kernel_copies(tmp_path):
        pytest.skip("os.copy_file_range is not available here (not Linux, or the file system refuses it)")
    model = _mapped_model(tmp_path / "model.pdiparams")
    copied = _count_copies(monkeypatch)
    path = tmp_path / "m.onnx"
    save_model(model, str(path))
    # the two untouched mapped weights went file to file; the transposed view and the computed
    # weight were written from memory; the file is the same protobuf either way
    assert sorted(copied) == [300_000 * 4, 512 * 1024 * 4]
    want = ir.serde.serialize_model(model).SerializeToString(deterministic=True)
    assert onnx.load(str(path)).SerializeToString(deterministic=True) == want


def test_mapped_file_replaced_after_mapping_is_not_copied(tmp_path, monkeypatch):
    params = tmp_path / "model.pdiparams"
    model = _mapped_model(params)
    want = ir.serde.serialize_model(model).SerializeToString(deterministic=True)
    replacement = tmp_path / "other"
    replacement.write_bytes(b"\0" * params.stat().st_size)
    __import__("os").replace(replacement, params)  # the mapping still holds the old bytes
    copied = _count_copies(monkeypatch)
    path = tmp_path / "m.onnx"
    save_model(model, str(path))
    assert copied == []
    assert onnx.load(str(path)).SerializeToString(deterministic=True) == want
