"""Compare detection outputs (``[K, 6]`` rows ``(label, score, x1, y1, x2, y2)`` with per-image
counts, and per-detection integer masks) with Paddle's, the way they can be compared.

Rows are compared as a set per image: where scores are equal, or equal within float noise,
Paddle's order of them is not the converted model's concern (its NMS sorts with unstable sorts
in places). Counts are compared exactly. Masks follow their rows and are compared exactly,
except at pixels whose value Paddle itself leaves within float noise of the threshold that
made them (so that another runtime's last bits may put them on the other side).
"""

from __future__ import annotations

import numpy as np


def _close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """[len(want), len(got)]: row i of ``want`` and row j of ``got`` agree (labels exactly)."""
    g = got.astype(np.float64)[None, :, :]
    w = want.astype(np.float64)[:, None, :]
    near = np.abs(g - w) <= atol + rtol * np.abs(w)
    return near.all(axis=2) & (g[..., 0] == w[..., 0])


def _match(close: np.ndarray) -> list[int]:
    """A perfect matching of rows (want -> got) in the bipartite graph ``close``, or the
    want rows left unmatched as negative entries (-1). Kuhn's augmenting paths: rows are few."""
    n_want, n_got = close.shape
    owner = [-1] * n_got  # got row -> want row

    def augment(i: int, seen: list[bool]) -> bool:
        for j in np.flatnonzero(close[i]):
            if not seen[j]:
                seen[j] = True
                if owner[j] < 0 or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(n_want):
        augment(i, [False] * n_got)
    match = [-1] * n_want
    for j, i in enumerate(owner):
        if i >= 0:
            match[i] = j
    return match


def match_detections(name: str, got_rows: np.ndarray, got_counts: np.ndarray, want_rows: np.ndarray,
                     want_counts: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Assert equal counts (dtype, shape, values) and, image by image, the same set of rows within
    tolerance; returns for each of Paddle's rows the index of its row in ``got_rows``."""
    got_counts, want_counts = np.asarray(got_counts), np.asarray(want_counts)
    assert got_counts.dtype == want_counts.dtype, f"{name}: counts dtype {got_counts.dtype} != Paddle's {want_counts.dtype}"
    assert np.array_equal(got_counts, want_counts), f"{name}: counts {got_counts.tolist()} != Paddle's {want_counts.tolist()}"
    assert got_rows.dtype == want_rows.dtype, f"{name}: rows dtype {got_rows.dtype} != Paddle's {want_rows.dtype}"
    assert got_rows.shape == want_rows.shape, f"{name}: rows shape {got_rows.shape} != Paddle's {want_rows.shape}"
    order = np.empty(len(want_rows), np.int64)
    start = 0
    for image, count in enumerate(want_counts.tolist()):
        span = slice(start, start + count)
        match = _match(_close(got_rows[span], want_rows[span], rtol, atol))
        for i, j in enumerate(match):
            if j < 0:
                want = want_rows[start + i]
                nearest = got_rows[span][np.argmin(np.abs(got_rows[span] - want).max(axis=1))]
                raise AssertionError(
                    f"{name}: image {image}: Paddle's row {start + i} {want.tolist()} has no counterpart "
                    f"within rtol {rtol}, atol {atol} (nearest: {nearest.tolist()})"
                )
            order[start + i] = start + j
        start += count
    return order


def compare_masks(name: str, got: np.ndarray, want: np.ndarray, order: np.ndarray, value: np.ndarray,
                  threshold: float, noise: float) -> int:
    """Assert that the integer masks ``got[order]`` equal Paddle's ``want`` except at pixels where
    Paddle's ``value`` (what it compared with ``threshold``) is within ``noise`` of it; returns how
    many pixels differ there."""
    assert got.dtype == want.dtype, f"{name}: masks dtype {got.dtype} != Paddle's {want.dtype}"
    assert got.shape == want.shape, f"{name}: masks shape {got.shape} != Paddle's {want.shape}"
    assert value.shape == want.shape, f"{name}: {value.shape} values for masks of shape {want.shape}"
    differ = got[order] != want
    undecided = np.abs(value.astype(np.float64) - threshold) <= noise
    wrong = differ & ~undecided
    if wrong.any():
        k, y, x = (int(v[0]) for v in np.nonzero(wrong))
        raise AssertionError(
            f"{name}: {int(wrong.sum())} of {want.size} mask pixels differ from Paddle's where Paddle's value "
            f"is decided (|value - {threshold}| > {noise}); first: mask {k} (converted row {int(order[k])}) "
            f"pixel ({y}, {x}): {got[order][k, y, x]} != {want[k, y, x]}, Paddle's value {value[k, y, x]}"
        )
    return int(differ.sum())


def detections_comparer(rtol: float, atol: float, mask_value: np.ndarray | None = None, threshold: float = 0.5,
                        noise: float = 0.0):
    """A ``compare_outputs`` for ``harness.check.check_model_file``: outputs ``(rows, counts[,
    masks])`` compared as above (``mask_value``: what Paddle thresholded into the masks)."""
    def compare(tag: str, gots: list[np.ndarray], wants: list[np.ndarray]) -> None:
        order = match_detections(tag, gots[0], gots[1], wants[0], wants[1], rtol, atol)
        if len(wants) > 2:
            assert mask_value is not None, f"{tag}: masks but no mask values to judge them by"
            compare_masks(f"{tag} masks", gots[2], wants[2], order, mask_value, threshold, noise)

    return compare
