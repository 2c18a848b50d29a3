"""Quantized legacy models (tests/quant's cases): Paddle's "quantized" values are floats
holding integers, pd2onnx's are int8 (compared by value, fed as int8 on replay); a frozen
chain (fake_quantize -> conv/matmul with integer weights -> fake_dequantize) is computed in
real values, so its intermediate values are recorded as not Paddle's and the chain replays
as one unit. Verdicts are match or amplified (a rounding tie one ulp away can move a value
by one quantization step), never mismatch.

PIR quantized models: Paddle 3.3.1 runs them wrongly itself (its PIR dequantize_linear runs
the quantize kernel, docs/quantization.md). verify computes quantize/dequantize_linear
exactly from Paddle's own operands and names Paddle's ops as the wrong side (``paddle-wrong``,
exit 0); a dequantize_linear of ours broken on purpose is still a mismatch."""

from __future__ import annotations

import os

import numpy as np
import pytest

import pd2onnx
import pd2onnx.verification.html_report
from harness import builder
from harness.cases import REGISTRY, load_case_files
from pd2onnx import provenance
from pd2onnx.convert.registry import get_mapper, overriding
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


PIR_CASES = ["qat_convert", "qat_remain_weight", "ptq_convert"]


def _pir(name, fmt="pir"):
    if name not in REGISTRY:
        pytest.skip(f"{name} is not loaded (PD2ONNX_CASE_FILES leaves tests/quant's cases out)")
    built = builder.get(REGISTRY[name], fmt)
    assert built.error is None, built.error
    io = np.load(os.path.join(built.dir, "io.npz"))
    program = load(built.model_file, built.params_file)
    return built, {program.inputs[0].name: io["in0"][:1]}


def _verify(built, feeds):
    return pd2onnx.verify(built.model_file, params_file=built.params_file, inputs=feeds, locate=True, replay=True)


@pytest.mark.parametrize("name", PIR_CASES)
def test_pir_quantized_model_names_paddles_wrong_op(name):
    built, feeds = _pir(name)
    report = _verify(built, feeds)
    text = pd2onnx.verification.format_report(report)
    if report.verdict in ("match", "amplified"):  # a Paddle that runs its PIR dequantize_linear right
        return
    assert report.verdict == "paddle-wrong" and report.exit_code == 0, text
    assert report.paddle_wrong and not report.failed_replays, text
    assert {op.op_type for op in report.paddle_wrong} <= {"dequantize_linear", "quantize_linear"}, text
    assert "Paddle computes dequantize_linear (block 0, op #" in text, text
    assert all(op.replayed or op.why for op in report.ops if op.block == 0), text
    assert report.to_json()["verdict"] == "paddle-wrong"
    page = pd2onnx.verification.html_report.render(report)
    assert 'id="paddle-wrong"' in page and page.count('class="paddle-wrong"') == len(report.paddle_wrong)


def _broken_dequantize(original):
    def fn(ctx):
        original.fn(ctx)
        name = ctx.pd.output("y")
        ctx.set_output("y", ctx.op.Mul(ctx.state.env[name], ctx.const(1.01, "float32")))
    return fn


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_broken_dequantize_is_still_a_mismatch(fmt):
    """Our dequantize_linear off by 1 %: on PIR, where Paddle's own is wrong too, the exact
    value shows ours is wrong as well, so Paddle is not blamed."""
    built, feeds = _pir("qat_convert", fmt)
    with overriding("dequantize_linear", _broken_dequantize(get_mapper("dequantize_linear"))):
        report = _verify(built, feeds)
    text = pd2onnx.verification.format_report(report)
    assert report.verdict == "mismatch" and report.exit_code == 3, text
    assert report.failed_replays and all(op.op_type == "dequantize_linear" for op in report.failed_replays), text
    assert not report.paddle_wrong, text
