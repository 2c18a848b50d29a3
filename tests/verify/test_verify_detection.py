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


def test_legacy_retinanet_gets_match_with_the_paddle_that_wrote_it():
    """RetinaNet (PaddleDetection 2.6): each image's top 1,000 candidates per level are picked
    inside a ``while`` loop and stacked for ``multiclass_nms3``. Paddle 3.3 cannot run the
    program (an ``elementwise_div`` broadcast), so Paddle 2.6 of the paddledet venv computes
    Paddle's side (``paddle_python``). The stacks' replay (the whole loop) meets two
    candidates of equal score that the runtimes' top-k order differently: compared as NMS
    candidates, not a mismatch."""
    from harness.toolkit import venv_python

    out = toolkit.build("paddledet", "paddledet", "retinanet")
    model = os.path.join(out, "model.pdmodel")
    inputs, _ = load_io(os.path.join(out, "io.npz"))
    feeds = {v.name: a for v, a in zip(load(model).inputs, inputs)}
    report = pd2onnx.verify(model, inputs=feeds, locate=True, replay=True,
                            paddle_python=venv_python("paddledet"))
    text = pd2onnx.verification.format_report(report)
    assert report.verdict in ("match", "amplified"), text
    stacks = [op for op in report.ops if op.op_type == "tensor_array_to_tensor" and op.block == 0]
    assert len(stacks) == 2 and all(op.replay_ok for op in stacks), text
    assert not report.failed_replays and not report.unexplained, text
