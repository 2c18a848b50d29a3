"""The comparisons verify judges by: range-relative errors, ties of index outputs, NMS rows as
sets, and the dtype-aware replay tolerances (no Paddle needed)."""

from __future__ import annotations

import numpy as np

from pd2onnx.verification.compare import coarsest, compare, compare_rows, compare_ties, replay_rtol


def test_errors_are_relative_to_the_range():
    want = np.array([100.0, 1.0, 0.0], np.float32)
    d = compare("v", want + np.array([1e-3, 1e-3, 0], np.float32), want)
    assert abs(d.max_abs - 1e-3) < 1e-5 and abs(d.max_rel - 1e-5) < 1e-7
    assert d.within(2e-5) and not d.within(5e-6)


def test_integers_must_be_equal_and_nan_positions_too():
    assert not compare("i", np.array([1, 2]), np.array([1, 3])).within(1.0)
    assert compare("i", np.array([1, 2]), np.array([1, 2])).within(0.0)
    d = compare("f", np.array([np.nan, 1.0]), np.array([1.0, 1.0]))
    assert d.problem and not d.within(1.0)


def test_quantized_values_compare_by_value_across_int_and_float():
    d = compare("q", np.array([-128, 5, 127], np.int8), np.array([-128.0, 5.0, 127.0], np.float32))
    assert not d.problem and d.max_abs == 0 and "dtype" in d.note


def test_indices_that_differ_only_between_equal_values_are_ties():
    x = np.array([[3.0, 1.0, 3.0, 0.5]], np.float32)
    want = np.array([[0, 2]])
    assert compare_ties("i", np.array([[2, 0]]), want, x, axis=-1).within(0.0)
    assert not compare_ties("i", np.array([[0, 1]]), want, x, axis=-1).within(0.0)
    # arg-max without keepdim, and flattened
    assert compare_ties("a", np.array([2]), np.array([0]), x, axis=1, keepdim=False).within(0.0)
    assert compare_ties("a", np.array(2), np.array(0), x, axis=0, flatten=True).within(0.0)


def test_nms_rows_are_sets_per_image():
    want = np.array([[1, 0.9, 0, 0, 1, 1], [2, 0.8, 1, 1, 2, 2], [1, 0.7, 5, 5, 6, 6]], np.float32)
    counts = np.array([2, 1], np.int32)
    swapped = want[[1, 0, 2]]
    assert compare_rows("out", swapped, want, 1e-5, got_counts=counts, want_counts=counts).within(1e-5)
    moved = want[[0, 2, 1]]  # a row crosses from one image to the other
    assert compare_rows("out", moved, want, 1e-5, got_counts=counts, want_counts=counts).problem
    relabeled = want.copy()
    relabeled[0, 0] = 3
    assert compare_rows("out", relabeled, want, 1e-5).problem
    index = np.array([4, 7, 1])
    assert compare_rows("out", swapped, want, 1e-5, index[[1, 0, 2]], index).within(1e-5)
    assert compare_rows("out", swapped, want, 1e-5, index, index).problem


def test_replay_tolerances_follow_the_precision():
    assert replay_rtol("float32", True, 1) == 1e-5
    assert replay_rtol("float32", False, 1) < 1e-6
    assert replay_rtol("float16", False, 1) > 1e-3
    assert coarsest("float64", "float32") == "float32" and coarsest("float32", "bfloat16") == "bfloat16"
    assert coarsest(None) is None


def test_top_k_rows_with_near_ties_at_the_cut():
    """Top-k queries with no NMS: rows at the lowest kept score may differ (which of the
    near-equal candidates make the cut is float noise); any other row may not."""
    from pd2onnx.verification.compare import looks_like_detections

    want = np.array([[1, 0.9, 0, 0, 1, 1], [2, 0.8, 1, 1, 2, 2], [3, 0.5, 5, 5, 6, 6]], np.float32)
    other = np.array([2, 0.5 + 1e-7, 7, 7, 8, 8], np.float32)  # another query at the same score
    got = np.stack([want[1], want[0], other])
    assert looks_like_detections(got, want)
    d = compare_rows("out", got, want, 1e-5)
    assert d.within(1e-5) and "lowest kept score" in d.note
    high = np.stack([want[1], other, want[2]])  # the 0.9 row is missing: not a near tie
    assert compare_rows("out", high, want, 1e-5).problem
    feats = want.copy()
    feats[:, 0] += 0.5  # no integer labels: not detections
    assert not looks_like_detections(feats, feats)


# ------------------------------------------------------- NMS candidates, rows per image (issue 23)


def _candidates():
    """2 images x 6 candidates: boxes [2, 6, 4] and best scores [2, 6] in tiers of equal values."""
    rng = np.random.default_rng(0)
    boxes = rng.uniform(0, 100, (2, 6, 4)).astype(np.float32)
    score = np.array([[0.9, 0.9, 0.9, 0.5, 0.5, 0.2]] * 2, np.float32)
    return boxes, score


def test_candidates_permuted_among_equal_scores_pass_and_others_do_not():
    from pd2onnx.verification.compare import compare_candidates

    boxes, score = _candidates()
    tied = boxes.copy()
    tied[0, [0, 2]] = boxes[0, [2, 0]]  # equal scores: a top-k tie
    d = compare_candidates("b", tied, boxes, 1, score, None, 1e-5)
    assert d.within(1e-5) and "another order among equal scores" in d.note
    across = boxes.copy()
    across[0, [2, 3]] = boxes[0, [3, 2]]  # 0.9 and 0.5 swapped: a wrong order
    assert not compare_candidates("b", across, boxes, 1, score, None, 1e-5).within(1e-5)
    off = tied.copy()
    off[1, 4, 0] += 1.0  # a box off where nothing was reordered
    assert not compare_candidates("b", off, boxes, 1, score, None, 1e-5).within(1e-5)


def test_another_candidate_of_the_same_score_at_a_cut_needs_our_scores():
    from pd2onnx.verification.compare import compare_candidates

    boxes, score = _candidates()
    other = boxes.copy()
    other[0, 5] = [1.0, 2.0, 3.0, 4.0]  # another candidate of score 0.2 made the cut
    assert not compare_candidates("b", other, boxes, 1, score, None, 1e-5).within(1e-5)
    assert compare_candidates("b", other, boxes, 1, score, score, 1e-5).within(1e-5)
    lower = score.copy()
    lower[0, 5] = 0.1  # ours picked a lower score: not a tie
    assert not compare_candidates("b", other, boxes, 1, score, lower, 1e-5).within(1e-5)


def test_scores_of_candidates_are_compared_along_their_last_axis():
    from pd2onnx.verification.compare import compare_candidates

    rng = np.random.default_rng(1)
    scores = rng.uniform(0, 0.5, (1, 3, 5)).astype(np.float32)
    scores[0, 0, :] = [0.9, 0.9, 0.7, 0.6, 0.6]
    got = scores[:, :, [1, 0, 2, 4, 3]]
    d = compare_candidates("s", got, scores, 2, scores.max(axis=1), got.max(axis=1), 1e-5)
    assert d.within(1e-5) and d.note


def test_rows_per_image_come_from_a_count_output_and_rows_may_not_move_between_images():
    from pd2onnx.verification.compare import row_counts

    rows = np.array([[0, 0.9, 1, 1, 2, 2], [1, 0.8, 3, 3, 4, 4], [0, 0.7, 5, 5, 6, 6]], np.float32)
    counts = np.array([2, 1], np.int32)
    found = row_counts(rows, rows, [("scores", np.zeros(3, np.float32), np.zeros(3, np.float32)),
                                    ("bbox_num", counts, counts)])
    assert found is not None and found[0] == "bbox_num"
    assert row_counts(rows, rows, [("n", np.array([1, 1], np.int32), np.array([1, 1], np.int32))]) is None
    moved = rows[[0, 2, 1]]  # image 1's row swapped with one of image 0: the same rows as one set
    assert compare_rows("r", moved, rows, 1e-5).within(1e-5)
    assert not compare_rows("r", moved, rows, 1e-5, got_counts=counts, want_counts=counts).within(1e-5)
