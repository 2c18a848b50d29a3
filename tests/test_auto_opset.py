"""Auto-opset: a mapper whose actual arguments (runtime tensors, dynamic dims) need a newer
opset than its static rule declares (``ctx.require_opset``) makes the exporter convert again
at that opset; with ``auto_opset=False`` the user is told which opset to pass."""

from __future__ import annotations

import os

import pytest

import pd2onnx.api
from harness import builder
from harness.cases import REGISTRY, load_case_files
from pd2onnx.convert.exporter import prescan
from pd2onnx.errors import UsageError
from pd2onnx.paddle import load

HERE = os.path.dirname(os.path.abspath(__file__))
load_case_files(os.path.join(HERE, "ops"), "opcases")

# case -> (its case file, the opset its runtime arguments / dynamic dims require)
NEEDS = {
    "tensor_split_runtime_sections": ("cases_tensor", 13),  # Split with a sizes input
    "creation_eye_runtime": ("cases_creation", 11),  # Range
    "vision_grid_sample_5d": ("cases_vision", 20),  # N-D GridSample (static rule: 16)
}


def _built(name: str, fmt: str) -> str:
    if name not in REGISTRY:
        only = os.environ.get("PD2ONNX_CASE_FILES", "")
        assert only, f"case {name} is not registered"
        pytest.skip(f"{NEEDS[name][0]} is excluded by PD2ONNX_CASE_FILES={only}")
    built = builder.get(REGISTRY[name], fmt)
    assert built.error is None, built.error
    return built.model_file


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
@pytest.mark.parametrize("name", sorted(NEEDS))
def test_required_opset_is_reached_automatically(name: str, fmt: str) -> None:
    model_file = _built(name, fmt)
    need = NEEDS[name][1]
    # The static rules alone would stop lower: the conversion itself must raise the opset.
    assert prescan(load(model_file), 7).needed_opset < need
    model = pd2onnx.api.convert(model_file, opset=7)
    assert model.opset_imports[""] == need


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
@pytest.mark.parametrize("name", sorted(NEEDS))
def test_no_auto_opset_names_the_required_opset(name: str, fmt: str) -> None:
    model_file = _built(name, fmt)
    need = NEEDS[name][1]
    with pytest.raises(UsageError) as info:
        pd2onnx.api.convert(model_file, opset=need - 1, auto_opset=False)
    assert f"needs opset {need}" in str(info.value)
    assert f"--opset {need}" in (info.value.hint or "")
    # At the required opset itself the conversion succeeds without raising anything.
    assert pd2onnx.api.convert(model_file, opset=need, auto_opset=False).opset_imports[""] == need
