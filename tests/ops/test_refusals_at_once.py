"""Every op a mapper refuses is reported in one error (the conversion goes on past the
first), and ops that only fail because they read a refused op's result are not reported."""

from __future__ import annotations

import os

import pytest

from harness import builder
from harness.cases import REGISTRY, load_case_files
from pd2onnx.convert.exporter import export_program
from pd2onnx.errors import ConversionError, OpsRefused
from pd2onnx.paddle import load

load_case_files(os.path.dirname(os.path.abspath(__file__)), "opcases")


def _program(case: str, fmt: str):
    if case not in REGISTRY:
        pytest.skip(f"{case} is not loaded (PD2ONNX_CASE_FILES leaves its file out)")
    built = builder.get(REGISTRY[case], fmt)
    assert built.error is None, built.error
    return load(built.model_file)


def _dynamic_inverses(program) -> list:
    """Make every inverse's input of unknown size (which inverse refuses: ONNX has no
    general inverse, the mapper needs static square matrices)."""
    edited = []
    for op in program.walk_ops():
        if op.type == "inverse":
            program.find_value(op.inputs["x"][0], op.block_idx).shape = (-1, -1)
            edited.append(op)
    return edited


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_every_refusal_in_one_error(fmt):
    program = _program("refusals_two_inverses", fmt)
    edited = _dynamic_inverses(program)
    assert len(edited) == 2
    with pytest.raises(OpsRefused) as info:
        export_program(program, opset=17)
    err = info.value
    assert len(err.refusals) == len(edited), str(err)
    for op in edited:
        assert f"inverse (block 0, op #{op.index})" in str(err)
    assert str(err).count("static square matrices") == len(edited)
    assert str(err).splitlines()[0].endswith(f"{len(edited)} ops cannot be converted:")
    # the ops reading the refused results (scale) are skipped, not reported
    assert "scale" not in str(err)


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_one_refusal_keeps_its_own_error(fmt):
    program = _program("refusals_two_inverses", fmt)
    edited = _dynamic_inverses(program)
    program.find_value(edited[1].inputs["x"][0], 0).shape = (3, 3)  # undo the second
    with pytest.raises(ConversionError, match=r"inverse \(block 0, op #\d+\).*static square matrices") as info:
        export_program(program, opset=17)
    assert not isinstance(info.value, OpsRefused)
