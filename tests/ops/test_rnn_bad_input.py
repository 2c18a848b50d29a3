"""rnn op: bad input gives one clear error naming the op and the layer; the dropout_state
value is never taken for a missing weight (also in a PIR file saved without OA flags)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from harness import builder
from harness.cases import REGISTRY, load_case_files
from harness.check import compare, run_onnx
from pd2onnx.api import convert
from pd2onnx.convert.exporter import export_program
from pd2onnx.errors import ConversionError
from pd2onnx.paddle import load

load_case_files(os.path.dirname(os.path.abspath(__file__)), "opcases")
CASE = "rnn_lstm_l2_bidir_all"


def _case():
    if CASE not in REGISTRY:
        pytest.skip(f"{CASE} is not loaded (PD2ONNX_CASE_FILES leaves cases_rnn out)")
    return REGISTRY[CASE]


def _program(fmt: str):
    built = builder.get(_case(), fmt)
    assert built.error is None, built.error
    program = load(built.model_file)
    (op,) = [op for op in program.main.ops if op.type == "rnn"]
    return program, op


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_unknown_mode(fmt):
    program, op = _program(fmt)
    op.attrs["mode"] = "RNN_SIGMOID"
    with pytest.raises(ConversionError, match=r"rnn \(block 0, op #\d+.*mode 'RNN_SIGMOID' is not one"):
        export_program(program, opset=17)


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_weight_count(fmt):
    program, op = _program(fmt)
    op.attrs["num_layers"] = 3
    with pytest.raises(ConversionError, match=r"holds 16 tensors; 3 layer\(s\) x 2 direction\(s\) need 24"):
        export_program(program, opset=17)


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_weight_shape_names_layer(fmt):
    program, op = _program(fmt)
    op.attrs["hidden_size"] = 5
    with pytest.raises(ConversionError, match=r"layer 0, direction 0: ih has shape \[16, 5\], expected \[20"):
        export_program(program, opset=17)


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_float_sequence_length(fmt):
    program, op = _program(fmt)
    program.find_value(op.inputs["sequence_length"][0]).dtype = "float32"
    with pytest.raises(ConversionError, match="sequence_length is float32; Paddle takes int32 or int64"):
        export_program(program, opset=17)


def test_pir_without_oa_flags(tmp_path):
    """trainable=false files carry no persistable flags: the dropout_state value is still
    recognised by its name and not looked for in the params file."""
    built = builder.get(_case(), "pir")
    with open(built.model_file) as f:
        doc = json.load(f)
    doc["base_code"]["trainable"] = False
    for op in doc["program"]["regions"][0]["blocks"][0]["ops"]:
        if op["#"] == "p":
            op.pop("OA", None)
    model = tmp_path / "model.json"
    model.write_text(json.dumps(doc))
    params = os.path.join(built.dir, "model.pdiparams")
    io = np.load(os.path.join(built.dir, "io.npz"))
    inputs = [io[f"in{i}"] for i in range(4)]
    got = run_onnx(convert(str(model), params, opset=17), inputs)
    for k, g in enumerate(got):
        compare(f"output {k}", g, io[f"out{k}"], 1e-5, 1e-5)


def test_lod_input_dims(tmp_path):
    """A LoD input gets a dynamic first dim whatever the file declares; a nested LoD input
    (sequences of sequences) is converted with a warning naming it."""
    import shutil

    from pd2onnx.paddle.framework_pb2 import ProgramDesc

    if "seq_tagger" not in REGISTRY:
        pytest.skip("seq_tagger is not loaded (PD2ONNX_CASE_FILES leaves cases_sequence out)")
    built = builder.get(REGISTRY["seq_tagger"], "legacy")
    desc = ProgramDesc()
    with open(built.model_file, "rb") as f:
        desc.ParseFromString(f.read())
    (var,) = [v for v in desc.blocks[0].vars if v.name == "words"]
    del var.type.dense_tensor.tensor.dims[:]
    var.type.dense_tensor.tensor.dims.extend([9, 1])
    var.type.dense_tensor.legacy_lod_level = 2
    (tmp_path / "model.pdmodel").write_bytes(desc.SerializeToString())
    shutil.copy(os.path.join(built.dir, "model.pdiparams"), tmp_path / "model.pdiparams")
    program = load(str(tmp_path / "model.pdmodel"))
    assert program.inputs[0].shape == (-1, 1)
    assert any("'words' carries 2 LoD levels" in w for w in program.warnings)
    io = np.load(os.path.join(built.dir, "io.npz"))
    got = run_onnx(convert(str(tmp_path / "model.pdmodel"), opset=17), [io["in0"], io["in1"]])
    compare("viterbi path", got[0], io["out0"], 0, 0)


@pytest.mark.parametrize(
    "op_type,attr,value,message",
    [
        ("gru", "gate_activation", "identity", "gate_activation 'identity' has no ONNX recurrent-activation"),
        ("gru", "gate_activation", "relu", "origin_mode=False is converted through 1 - sigmoid"),
        ("lstm", "cell_activation", "softsign", "cell_activation 'softsign' has no ONNX"),
        ("lstm", "use_peepholes", True, "use_peepholes needs a bias of 7H = 35 values, got 20"),
    ],
)
def test_legacy_recurrent_attrs(op_type, attr, value, message):
    if "seq_tagger" not in REGISTRY:
        pytest.skip("seq_tagger is not loaded (PD2ONNX_CASE_FILES leaves cases_sequence out)")
    built = builder.get(REGISTRY["seq_tagger"], "legacy")
    program = load(built.model_file)
    (op,) = [op for op in program.main.ops if op.type == op_type]
    op.attrs[attr] = value
    if attr == "use_peepholes":  # peepholes with a 4H bias
        name = op.inputs["bias"][0]
        program.params[name] = program.params[name][:, :20]
    with pytest.raises(ConversionError, match=f"cannot convert {op_type} .*{message}"):
        export_program(program, opset=17)
