"""Quantized legacy models (tests/quant's cases): Paddle's "quantized" values are floats
holding integers, pd2onnx's are int8 (compared by value, fed as int8 on replay); a frozen
chain (fake_quantize -> conv/matmul with integer weights -> fake_dequantize) is computed in
real values, so its intermediate values are recorded as not Paddle's and the chain replays
as one unit. Verdicts are match or amplified (a rounding tie one ulp away can move a value
by one quantization step), never mismatch. PIR quantized models are not verifiable: Paddle
3.3.1 runs them wrongly itself (docs/quantization.md)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import pd2onnx
from harness import builder
from harness.cases import REGISTRY, load_case_files
from pd2onnx import provenance
from pd2onnx.paddle import load

load_case_files(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "quant"), "quantcases")
CASES = ["static_ptq_frozen", "static_ptq_frozen_mul", "qat_convert", "imperative_onnx"]


@pytest.mark.parametrize("name", CASES)
def test_quantized_model_is_never_a_mismatch(name):
    if name not in REGISTRY:
        pytest.skip(f"{name} is not loaded (PD2ONNX_CASE_FILES leaves tests/quant's cases out)")
    built = builder.get(REGISTRY[name], "legacy")
    assert built.error is None, built.error
    io = np.load(os.path.join(built.dir, "io.npz"))
    program = load(built.model_file, built.params_file)
    feeds = {program.inputs[0].name: io["in0"][:1]}
    report = pd2onnx.verify(built.model_file, params_file=built.params_file, inputs=feeds, locate=True, replay=True)
    text = pd2onnx.verification.format_report(report)
    assert report.verdict in ("match", "amplified"), text
    assert all(op.replayed for op in report.ops if op.block == 0 and "not used" not in op.why), text
    if name.startswith("static_ptq_frozen"):
        prov = provenance.read(pd2onnx.to_onnx(built.model_file, built.params_file).metadata_props)
        assert any("frozen quantized chain" in why for r in prov.ops.values() for why in r.why.values())
