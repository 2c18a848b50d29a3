"""fp16 conversion and the ``pd2onnx optimize`` command."""

from __future__ import annotations

import argparse

import numpy as np
import onnx
import onnx_ir as ir
import pytest

from optimize._util import F, helper, init, model, ops, run, vi
from pd2onnx.errors import ModelFormatError, UsageError
from pd2onnx.optimize import command, optimize, to_fp16

R = np.random.default_rng(3)
# fp16 tolerance: max|diff| <= 1e-2 * max(1, max|ref|) (float16 has ~3 decimal digits).
FP16_RTOL = 1e-2


def bn_model(standalone: bool):
    """Conv -> BN (variance up to 2e5, beyond float16) -> Resize(scales) -> Relu."""
    nodes = [] if standalone else [helper.make_node("Conv", ["x", "W"], ["h"], pads=[1, 1, 1, 1])]
    src = "x" if standalone else "h"
    nodes += [helper.make_node("BatchNormalization", [src, "sc", "b", "mu", "var"], ["z"]),
              helper.make_node("Resize", ["z", "", "scales"], ["r"], mode="nearest"),
              helper.make_node("Relu", ["r"], ["y"])]
    c = 4
    inits = [init("sc", (R.random(c) + 0.5).astype(np.float32)), init("b", R.random(c).astype(np.float32)),
             init("mu", (R.random(c) * 300).astype(np.float32)), init("var", (R.random(c) * 1e5 + 1e5).astype(np.float32)),
             init("W", R.standard_normal((c, c, 3, 3)).astype(np.float32)), init("scales", np.array([1, 1, 2, 2], np.float32))]
    return model(nodes, [vi("x", F, ["N", c, 5, 5])], [vi("y", F, ["N", c, 10, 10])], inits)


def close(ref, got):
    scale = max(1.0, float(np.max(np.abs(ref))))
    return float(np.max(np.abs(ref.astype(np.float64) - got.astype(np.float64)))) <= FP16_RTOL * scale


@pytest.mark.parametrize("standalone", [True, False])
@pytest.mark.parametrize("keep_io", [True, False])
def test_fp16_batchnorm_variance_out_of_range(standalone, keep_io):
    proto = bn_model(standalone)
    x = (R.standard_normal((2, 4, 5, 5)) * 300).astype(np.float32)
    (ref,) = run(proto, {"x": x})
    m = ir.serde.deserialize_model(proto)
    optimize(m)
    warnings = to_fp16(m, keep_io_types=keep_io)
    out = ir.serde.serialize_model(m)
    onnx.checker.check_model(out, full_check=True)
    (got,) = run(out, {"x": x if keep_io else x.astype(np.float16)})
    assert got.dtype == (np.float32 if keep_io else np.float16)
    assert close(ref, got)
    # Standalone BN keeps its variance in float32 (reported); fused into the conv it is gone.
    assert bool(warnings) == standalone
    if standalone:
        assert "var" in warnings[0]
        assert ops(out)["BatchNormalization"] == 1
    scales = [i for i in out.graph.initializer if i.name == "scales"]
    assert scales and scales[0].data_type == onnx.TensorProto.FLOAT  # Resize scales stay float32


def test_fp16_converts_weights_and_keeps_shape_math():
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Shape", ["h"], ["s"]),
             helper.make_node("Cast", ["s"], ["sf"], to=F), helper.make_node("Mul", ["sf", "k"], ["y2"]),
             helper.make_node("Relu", ["h"], ["y"])]
    proto = model(nodes, [vi("x", F, ["N", 4, 8])], [vi("y", F, ["N", 4, 16]), vi("y2", F, [3])],
                  [init("W", R.standard_normal((8, 16)).astype(np.float32)), init("k", np.array(1.5, np.float32))])
    x = R.standard_normal((2, 4, 8)).astype(np.float32)
    ref = run(proto, {"x": x})
    m = ir.serde.deserialize_model(proto)
    optimize(m)
    assert to_fp16(m, keep_io_types=True) == []
    out = ir.serde.serialize_model(m)
    got = run(out, {"x": x})
    assert close(ref[0], got[0]) and np.array_equal(ref[1], got[1]) and got[1].dtype == np.float32
    w = [i for i in out.graph.initializer if i.name == "W"][0]
    assert w.data_type == onnx.TensorProto.FLOAT16


def parser():
    p = argparse.ArgumentParser()
    command.add_arguments(p)
    return p


def test_command_end_to_end(tmp_path, capsys):
    src, dst = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(bn_model(False), src)
    args = parser().parse_args([str(src), "-o", str(dst), "--input-shape", "x:1,4,5,5", "--skip", "cse", "--fp16", "--keep-io-types"])
    assert command.run(args) == 0
    text = capsys.readouterr().out
    assert "nodes: 4 -> 3" in text and "BatchNormalization" in text
    out = onnx.load(dst)
    onnx.checker.check_model(out, full_check=True)
    assert [d.dim_value for d in out.graph.input[0].type.tensor_type.shape.dim] == [1, 4, 5, 5]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.onnx", "out.onnx"]  # no temp files left


def test_command_user_errors(tmp_path):
    src, dst = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(bn_model(False), src)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelFormatError, match="bad.onnx"):
        command.run(parser().parse_args([str(bad), "-o", str(dst)]))
    with pytest.raises(ModelFormatError, match="no such file"):
        command.run(parser().parse_args([str(tmp_path / "missing.onnx"), "-o", str(dst)]))
    for extra, msg in [(["--input-shape", "y:1,4,5,5"], "not an input"), (["--input-shape", "x1,2"], "NAME:DIMS"),
                       (["--skip", "nope"], "unknown pass"), (["--keep-io-types"], "--fp16"),
                       (["--input-shape", "x:1,4,5"], "rank")]:
        with pytest.raises(UsageError, match=msg):
            command.run(parser().parse_args([str(src), "-o", str(dst), *extra]))
    with pytest.raises(UsageError, match="overwrite"):
        command.run(parser().parse_args([str(src), "-o", str(src)]))
    assert not dst.exists()


def test_parse_input_shapes():
    assert command.parse_input_shapes(["a:b:1,batch,-1,?"]) == {"a:b": [1, "batch", None, None]}
