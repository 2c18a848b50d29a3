"""Bad quantization attributes give errors naming the op; missing attributes take the registry
defaults (QUANT.md section 1)."""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np
import pytest

from harness.cases import REGISTRY
from pd2onnx.convert import export_program
from pd2onnx.errors import ConversionError
from pd2onnx.paddle import load, opdefs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_quant_models import _built, _samples, run_ort  # noqa: E402


def _program(name="imperative_onnx", fmt="legacy"):
    built = _built(REGISTRY[name], fmt)
    return load(built.model_file, built.params_file)


def _weight_dequant(program):
    return next(op for op in program.main.ops if op.type == "dequantize_linear" and op.input("x") in program.params)


@pytest.mark.parametrize("axis", [2, -2, 3])
def test_bad_quant_axis(axis):
    program = _program()
    op = _weight_dequant(program)
    op.attrs["quant_axis"] = axis
    with pytest.raises(ConversionError, match=rf"dequantize_linear \(block 0, op #{op.index}.*quant_axis {axis} is not supported"):
        export_program(program)


def test_scale_of_wrong_length():
    program = _program()
    op = _weight_dequant(program)
    program.params[op.input("scale")] = np.ones(3, np.float32)
    with pytest.raises(ConversionError, match=r"dequantize_linear .*has 3 scales but the input has \d+ channels"):
        export_program(program)


def test_per_tensor_axis_with_many_scales():
    program = _program()
    op = next(op for op in program.main.ops if op.type == "quantize_linear")
    program.params[op.input("scale")] = np.ones(4, np.float32)
    with pytest.raises(ConversionError, match=r"quantize_linear .*4 scales but quant_axis is -1"):
        export_program(program)


@pytest.mark.parametrize("bits", [17, 32, 1])
def test_bad_bit_length(bits):
    program = _program()
    op = next(op for op in program.main.ops if op.type == "quantize_linear")
    op.attrs["bit_length"] = bits
    with pytest.raises(ConversionError, match=rf"quantize_linear .*bit_length {bits} is not supported"):
        export_program(program)


def test_training_mode_fake_quantize():
    program = _program("qat_noconvert", "legacy")
    op = next(op for op in program.main.ops if op.type.startswith("fake_") and op.input("x") not in program.params)
    op.attrs["is_test"] = False
    with pytest.raises(ConversionError, match=r"is_test is false"):
        export_program(program)


def test_registry_defaults():
    q = opdefs.get("quantize_linear").attrs
    assert (q["round_type"], q["quant_axis"], q["bit_length"], q["qmin"], q["qmax"], q["only_observer"]) == (
        0, 0, 8, -128, 127, False)
    for name in ("fake_quantize_abs_max", "fake_quantize_dequantize_moving_average_abs_max",
                 "fake_channel_wise_quantize_dequantize_abs_max", "fake_quantize_range_abs_max"):
        assert opdefs.get(name).attrs["round_type"] == 1 and opdefs.get(name).attrs["bit_length"] == 8


def test_file_without_default_attributes(tmp_path):
    """A .pdmodel whose quantize ops leave out every attribute at its default converts the same."""
    from pd2onnx.convert.ops.quant import DEQUANT_OPS  # noqa: F401  (the mapper module loads)
    from pd2onnx.paddle.framework_pb2 import ProgramDesc

    built = _built(REGISTRY["static_ptq_onnx"], "legacy")
    desc = ProgramDesc()
    with open(built.model_file, "rb") as f:
        desc.ParseFromString(f.read())
    defaults = {"round_type": 0, "bit_length": 8, "qmin": -128, "qmax": 127, "is_test": True, "only_observer": False}
    dropped = 0
    for op in desc.blocks[0].ops:
        if op.type in ("quantize_linear", "dequantize_linear"):
            keep = []
            for a in op.attrs:
                value = {0: a.i, 6: a.b}.get(a.type)
                if a.name in defaults and value == defaults[a.name]:
                    dropped += 1
                else:
                    keep.append(a)
            del op.attrs[:]
            op.attrs.extend(keep)
    assert dropped > 30
    model = tmp_path / "model.pdmodel"
    model.write_bytes(desc.SerializeToString())
    shutil.copy(built.params_file, tmp_path / "model.pdiparams")
    x, ref = _samples(built)
    from pd2onnx.api import convert

    got = run_ort(convert(str(model)), x, optimized=False)
    want = run_ort(convert(built.model_file, built.params_file), x, optimized=False)
    np.testing.assert_array_equal(got, want)
