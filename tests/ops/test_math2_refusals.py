"""Ops that ONNX cannot express for some inputs refuse with one clear error naming the op,
its position and why (on programs built by the cases, then edited)."""

from __future__ import annotations

import os

import pytest

from harness import builder
from harness.cases import REGISTRY, load_case_files
from pd2onnx.convert.exporter import export_program
from pd2onnx.errors import ConversionError
from pd2onnx.paddle import load

load_case_files(os.path.dirname(os.path.abspath(__file__)), "opcases")


def _program(case: str, fmt: str):
    if case not in REGISTRY:
        pytest.skip(f"{case} is not loaded (PD2ONNX_CASE_FILES leaves its file out)")
    built = builder.get(REGISTRY[case], fmt)
    assert built.error is None, built.error
    return load(built.model_file)


def _first(program, op_type: str):
    return next(op for op in program.walk_ops() if op.type == op_type)


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_fft_complex_result_into_other_op(fmt):
    """A complex FFT result read by an op that cannot take it (here sqrt) is refused."""
    program = _program("fft", fmt)
    _first(program, "real").type = "sqrt"
    with pytest.raises(ConversionError, match=r"fft_r2c \(block 0, op #\d+\).*complex result is used by sqrt"):
        export_program(program, opset=17)


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_set_value_zero_step(fmt):
    program = _program("setvalue_scalar_forms", fmt)
    op = _first(program, "set_value")
    if op.inputs.get("steps"):  # PIR keeps the steps as an operand
        pytest.skip("steps come from an operand here")
    op.attrs["steps"] = [0]
    with pytest.raises(ConversionError, match=r"set_value \(block 0, op #\d+\).*zero step"):
        export_program(program, opset=17)


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_inverse_dynamic_size(fmt):
    program = _program("inverse_float64", fmt)
    op = _first(program, "inverse")
    value = program.find_value(op.inputs["x"][0], 0)
    value.shape = (-1, -1)
    with pytest.raises(ConversionError, match=r"inverse \(block 0, op #\d+\).*static square matrices"):
        export_program(program, opset=17)
