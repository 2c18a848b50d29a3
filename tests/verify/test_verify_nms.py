"""Detections as sets (issue 23): NMS candidates that a top-k inside a loop orders
differently among equal scores (RetinaNet's post-processing), and the rows of a batch of
images counted by ``bbox_num`` after the NMS. Both formats; the cases are in cases_verify.py."""

from __future__ import annotations

import pytest

import pd2onnx
from pd2onnx.convert.registry import get_mapper, overriding
from verify_cases import FORMATS, built, feeds, perturbed

STACKS = ("array_to_tensor", "tensor_array_to_tensor")


@pytest.mark.parametrize("fmt", FORMATS)
def test_candidates_a_top_k_orders_otherwise_among_ties_are_a_match(fmt):
    """The stacks of per-image candidates, replayed with the whole loop, differ from Paddle's
    in order (Paddle's top-k breaks ties otherwise than ONNX Runtime's): compared as
    candidates permuted among equal scores, they pass; the verdict is ``match``."""
    case = built("verify_nms_tied_candidates", fmt)
    report = pd2onnx.verify(case.model_file, inputs=feeds(case), locate=True, replay=True)
    text = pd2onnx.verification.format_report(report)
    assert report.verdict == "match", text
    stacks = [op for op in report.ops if op.op_type in STACKS and op.block == 0]
    assert len(stacks) == 2 and all(op.replay_ok for op in stacks), text
    # the order really differs (the note is written only when the plain comparison fails)
    for op in stacks:
        (d,) = op.replay
        assert "another order among equal scores" in d.note, text
    nms = [op for op in report.ops if op.op_type == "multiclass_nms3"]
    assert nms and nms[0].replay_ok, text


@pytest.mark.parametrize("fmt", FORMATS)
def test_wrong_candidates_are_still_a_mismatch(fmt):
    """The same loop with its ``gather`` off by 1e-3: the candidates are no permutation of
    Paddle's, and the stacks (which replay the loop) are named."""
    case = built("verify_nms_tied_candidates", fmt)
    with overriding("gather", perturbed(get_mapper("gather"), "out", 1.001)):
        report = pd2onnx.verify(case.model_file, inputs=feeds(case), locate=True, replay=True)
    text = pd2onnx.verification.format_report(report)
    assert report.verdict == "mismatch" and report.exit_code == 3, text
    assert {op.op_type for op in report.failed_replays} <= set(STACKS), text
    assert len(report.failed_replays) == 2, text


@pytest.mark.parametrize("fmt", FORMATS)
def test_rows_of_a_batch_are_compared_per_image_by_bbox_num(fmt):
    """Rows after the NMS (scaled to the image size) for 2 images, with near-tied scores:
    the runtimes order each image's rows differently; compared per image as sets, with the
    row counts of the other output: ``match``."""
    case = built("verify_nms_batch_rows", fmt)
    report = pd2onnx.verify(case.model_file, inputs=feeds(case), locate=True, replay=True)
    text = pd2onnx.verification.format_report(report)
    assert report.verdict == "match", text
    rows, counts = report.outputs
    assert "order differs" in rows.note and "per image, by the row counts of" in rows.note, text
    assert counts.name in rows.note and counts.max_abs == 0, text
