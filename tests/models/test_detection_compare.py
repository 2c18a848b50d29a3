"""The detection comparison the model tests rely on (``harness.detection``) fails where it must:
rows are a set per image (any order of rows passes, a moved box or another label does not),
counts are exact, masks are exact except where Paddle's value is within noise of the
threshold."""

from __future__ import annotations

import numpy as np
import pytest

from harness.detection import compare_masks, match_detections

ROWS = np.array([
    [1, 0.9, 10, 10, 20, 20],
    [1, 0.5, 30, 30, 40, 40],
    [2, 0.5, 12, 12, 22, 22],  # the same score as the row before: Paddle's order is arbitrary
    [0, 0.7, 5, 5, 15, 15],
], np.float32)
COUNTS = np.array([3, 1], np.int32)


def test_rows_in_another_order_match():
    got = ROWS[[2, 0, 1, 3]]
    order = match_detections("t", got, COUNTS, ROWS, COUNTS, 1e-5, 1e-4)
    assert np.array_equal(got[order], ROWS)


@pytest.mark.parametrize("change", ["box", "label", "image"])
def test_different_rows_fail(change):
    got = ROWS.copy()
    if change == "box":
        got[1, 3] += 1e-3
    elif change == "label":
        got[1, 0] = 2
    else:  # the same rows, another image's
        got = ROWS[[0, 1, 3, 2]]
    with pytest.raises(AssertionError, match="no counterpart"):
        match_detections("t", got, COUNTS, ROWS, COUNTS, 1e-5, 1e-4)


def test_counts_are_exact():
    with pytest.raises(AssertionError, match="counts"):
        match_detections("t", ROWS, np.array([2, 2], np.int32), ROWS, COUNTS, 1e-5, 1e-4)
    with pytest.raises(AssertionError, match="dtype"):
        match_detections("t", ROWS, COUNTS.astype(np.int64), ROWS, COUNTS, 1e-5, 1e-4)


def test_masks_differ_only_where_undecided():
    rng = np.random.default_rng(0)
    value = rng.uniform(0, 1, (4, 6, 6)).astype(np.float32)
    value[0, 0, 0] = 0.5 + 1e-6  # Paddle's own value within noise of the threshold
    want = (value >= 0.5).astype(np.int32)
    order = np.array([1, 0, 2, 3])
    got = want[np.argsort(order)].copy()  # the converted model's rows come in another order
    assert compare_masks("t", got, want, order, value, 0.5, 1e-4) == 0
    got[order[0], 0, 0] = 0  # the undecided pixel went the other way: allowed
    assert compare_masks("t", got, want, order, value, 0.5, 1e-4) == 1
    got[order[3], 5, 5] = 1 - got[order[3], 5, 5]  # a decided pixel: not allowed
    with pytest.raises(AssertionError, match="mask 3"):
        compare_masks("t", got, want, order, value, 0.5, 1e-4)
