"""(c) The PaddleDetection models of tests/models/test_detection_models.py (built by
PaddleDetection's own exporter in the paddledet environment, NMS kept, several inputs) are
correct conversions: ``pd2onnx verify --locate --replay`` gets ``match`` or ``amplified``,
never ``mismatch``, and replays the ops around the NMS (which gets compared as row sets)."""

from __future__ import annotations

import os

import pytest

import pd2onnx
from harness import toolkit
from harness.check import load_io
from pd2onnx.paddle import load

MODELS = ["ppyoloe_s", "picodet_s", "yolov3_mobilenet", "ssd_mobilenet"]


@pytest.mark.parametrize("name", MODELS)
def test_detection_model_is_never_a_mismatch(name):
    out = toolkit.build("paddledet", "paddledet", name)
    model = os.path.join(out, "model.pdmodel")
    inputs, _ = load_io(os.path.join(out, "io.npz"))
    feeds = {v.name: a for v, a in zip(load(model).inputs, inputs)}
    report = pd2onnx.verify(model, inputs=feeds, locate=True, replay=True)
    text = pd2onnx.verification.format_report(report)
    assert report.verdict in ("match", "amplified"), text
    nms = [op for op in report.ops if op.op_type in ("multiclass_nms3", "matrix_nms")]
    assert nms and all(op.replay_ok for op in nms), text
    replayed = sum(1 for op in report.ops if op.replayed)
    assert replayed >= 0.9 * len(report.ops), text
