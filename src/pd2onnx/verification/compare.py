"""Comparing one ONNX value with Paddle's: errors, and the tolerances ``verify`` judges by.

Errors are measured against the value's range (``max |Paddle's value|``): ``max_rel`` is the
largest absolute error divided by it. Replayed ops (fed Paddle's exact inputs) are judged by
a tolerance that depends on the precision the op computes in (:func:`replay_rtol`): a few
ulps of the range, or ~1e-5 of it (float32) where the op sums many terms; integer, index and
boolean values must be equal. Indices that select among equal values (ties of top-k, sorts,
arg-max) count as equal when they select equal values; NMS-style results are compared as
sets of rows ([label, score, box...], with their index column).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Paddle ops whose index outputs may legitimately differ on ties: op -> (index slot, value
# input slot); axis, keepdim and flatten come from the op's attributes.
TIE_INDICES = {
    "topk": ("indices", "x"),
    "argsort": ("indices", "x"),
    "argmax": ("out", "x"),
    "argmin": ("out", "x"),
    "kthvalue": ("indices", "x"),
    "mode": ("indices", "x"),
}
# NMS-style ops: op -> (rows slot, index slot or None, per-image count slot or None)
ROW_SETS = {
    "multiclass_nms3": ("out", "index", "nms_rois_num"),
    "matrix_nms": ("out", "index", "roisnum"),
}
# their candidates, batched: op -> (boxes slot [batch, M, 4], scores slot [batch, classes, M])
NMS_CANDIDATES = {
    "multiclass_nms3": ("bboxes", "scores"),
    "matrix_nms": ("bboxes", "scores"),
}
# ONNX ops that sum many terms (or go through such sums): their float error on exact inputs
# grows with the number of terms, not only a few ulps.
SUMMING = frozenset({
    "Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "MatMul", "MatMulInteger", "QLinearMatMul", "Gemm",
    "Einsum", "ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp", "ReduceProd", "Softmax", "LogSoftmax", "LayerNormalization", "GroupNormalization",
    "InstanceNormalization", "BatchNormalization", "LpNormalization", "MeanVarianceNormalization",
    "RMSNormalization", "SkipLayerNormalization", "AveragePool", "GlobalAveragePool", "LpPool", "GlobalLpPool",
    "CumSum", "RNN", "LSTM", "GRU", "Attention", "Resize", "Upsample", "GridSample", "RoiAlign", "DFT", "STFT",
    "Det", "Sum", "Mean", "If", "Loop", "Scan", "DeformConv", "AffineGrid", "Col2Im",
    "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss", "NonMaxSuppression", "TopK",
})

_EPS = {"float16": float(np.finfo(np.float16).eps), "bfloat16": 2.0 ** -7,
        "float32": float(np.finfo(np.float32).eps), "float64": float(np.finfo(np.float64).eps)}
# ~1e-5 of the range in float32 where an op sums many terms; scaled for the other precisions
_SUM_RTOL = {"float16": 1e-2, "bfloat16": 4e-2, "float32": 1e-5, "float64": 1e-12}
_ORDER = ["float64", "float32", "float16", "bfloat16"]  # finest first


def coarsest(*precisions: str | None) -> str | None:
    """The least precise of some float types (None ignored; None if no float type)."""
    found = [p for p in precisions if p in _EPS]
    return max(found, key=_ORDER.index) if found else None


def replay_rtol(precision: str, summing: bool, float_nodes: int) -> float:
    """Tolerance, relative to the value's range, of an op fed exact inputs: a few ulps per
    node it became, at most the tolerance of a summing op."""
    eps, cap = _EPS[precision], _SUM_RTOL[precision]
    if summing:
        return cap
    return min(cap, max(8, 4 * float_nodes) * eps)


@dataclass
class ValueDiff:
    """One Paddle value against its ONNX counterpart."""

    name: str  # the Paddle value
    shape: tuple[int, ...]
    dtype: str  # Paddle's
    max_abs: float = 0.0
    max_rel: float = 0.0  # max_abs / max |Paddle's value|
    problem: str = ""  # shape / dtype kind / NaN / count: not comparable by value
    note: str = ""  # something that differs but is not an error (dtype width, ties, order)
    exact: bool = False  # integer/bool/index: must be equal
    scale: float = 0.0  # max |Paddle's value|

    def within(self, rtol: float, atol: float = 0.0) -> bool:
        if self.problem:
            return False
        if self.exact:
            return self.max_abs == 0
        return self.max_abs <= atol + rtol * self.scale or (self.scale == 0 and self.max_abs <= max(atol, rtol))

    def to_json(self) -> dict:
        out = {"name": self.name, "shape": list(self.shape), "dtype": self.dtype, "max_abs": self.max_abs,
               "max_rel": self.max_rel}
        if self.problem:
            out["problem"] = self.problem
        if self.note:
            out["note"] = self.note
        return out


def _float(a: np.ndarray, wide: bool) -> np.ndarray:
    """As floats: float32 is enough to measure errors between float32 (or narrower) values."""
    dtype = np.float64 if wide else np.float32
    if a.dtype.kind == "c":
        return np.stack([a.real, a.imag], axis=-1).astype(dtype)
    return np.asarray(a, dtype=dtype)


def compare(name: str, got: np.ndarray, want: np.ndarray) -> ValueDiff:
    """Elementwise errors of ``got`` against ``want``."""
    got, want = np.asarray(got), np.asarray(want)
    diff = ValueDiff(name, tuple(want.shape), str(want.dtype))
    if got.shape != want.shape:
        if got.size != want.size:
            diff.problem = f"shape {list(got.shape)} vs Paddle's {list(want.shape)}"
            return diff
        diff.note = f"shape {list(got.shape)} vs Paddle's {list(want.shape)}"
        got = got.reshape(want.shape)
    exact_kinds = "biuU"
    if "U" in (got.dtype.kind, want.dtype.kind) and got.dtype.kind != want.dtype.kind:
        diff.problem = f"dtype {got.dtype} vs Paddle's {want.dtype}"
        return diff
    if got.dtype != want.dtype:  # compared by value (Paddle's quantized values are floats holding integers)
        diff.note = "; ".join(filter(None, [diff.note, f"dtype {got.dtype} vs Paddle's {want.dtype}"]))
    diff.exact = want.dtype.kind in exact_kinds
    if want.size == 0:
        return diff
    if want.dtype.kind in "U":
        diff.max_abs = float(np.count_nonzero(got != want))
        return diff
    wide = any(a.dtype.kind in "iuc" or a.dtype.itemsize > 4 for a in (got, want))
    g, w = _float(got, wide), _float(want, wide)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    if not np.array_equal(nan_g, nan_w):
        diff.problem = f"NaN at {int(np.count_nonzero(nan_g != nan_w))} positions where the other has a number"
        return diff
    if nan_w.any():
        g, w = np.where(nan_g, 0, g), np.where(nan_w, 0, w)
    inf = np.isinf(g) | np.isinf(w)
    if inf.any():
        if not np.array_equal(g[inf], w[inf]):
            diff.problem = "infinities differ"
            return diff
        g, w = np.where(inf, 0, g), np.where(inf, 0, w)
    with np.errstate(over="ignore"):
        err = np.abs(g - w)
    finite_w = np.abs(w)
    diff.max_abs = float(err.max()) if np.isfinite(err).all() else float("inf")
    diff.scale = float(finite_w.max())
    diff.max_rel = diff.max_abs / diff.scale if diff.scale > 0 else (0.0 if diff.max_abs == 0 else float("inf"))
    return diff


def compare_ties(name: str, got: np.ndarray, want: np.ndarray, x: np.ndarray, axis: int,
                 keepdim: bool = True, flatten: bool = False) -> ValueDiff:
    """Indices into ``x`` along ``axis``: equal, or selecting equal values (ties)."""
    diff = compare(name, got, want)
    if diff.problem or diff.max_abs == 0 or x is None:
        return diff
    try:
        src = np.asarray(x).reshape(-1) if flatten else np.asarray(x)
        ax = 0 if flatten else axis % max(src.ndim, 1)
        gi, wi = np.asarray(got).astype(np.int64), np.asarray(want).astype(np.int64)
        if not flatten and not keepdim and gi.ndim == src.ndim - 1:
            gi, wi = np.expand_dims(gi, ax), np.expand_dims(wi, ax)
        if flatten:
            gi, wi = gi.reshape(-1), wi.reshape(-1)
        gv = np.take_along_axis(src, gi, ax)
        wv = np.take_along_axis(src, wi, ax)
    except (ValueError, IndexError):
        return diff
    same = (gv == wv) | (np.isnan(gv.astype(np.float64)) & np.isnan(wv.astype(np.float64)))
    if same.all():
        n = int(np.count_nonzero(np.asarray(got) != np.asarray(want)))
        diff.note = "; ".join(filter(None, [diff.note, f"{n} indices differ only between equal values (ties)"]))
        diff.max_abs = diff.max_rel = 0.0
    return diff


def compare_rows(name: str, got: np.ndarray, want: np.ndarray, rtol: float,
                 got_index: np.ndarray | None = None, want_index: np.ndarray | None = None,
                 got_counts: np.ndarray | None = None, want_counts: np.ndarray | None = None,
                 atol: float = 0.0) -> ValueDiff:
    """Detection rows ([label, score, box ...]: NMS output, top-k queries) as a set per image
    (``got_counts``/``want_counts`` rows each, else one image per leading index of a 3-D
    array, else one): each row of ``got`` matched to one of ``want`` with the same label (and
    index) and the other columns within ``rtol`` of their column's range (plus ``atol``).
    The near-tie rule: rows whose score is at the lowest kept score (within tolerance) may
    differ, as which of several near-equal candidates make the cut is float noise."""
    got, want = np.asarray(got), np.asarray(want)
    diff = compare(name, got, want)
    if got.ndim == 3 and want.ndim == 3 and got.shape == want.shape and got_counts is None:
        got_counts = want_counts = np.full(want.shape[0], want.shape[1])
        got, want = got.reshape(-1, got.shape[-1]), want.reshape(-1, want.shape[-1])
    if got.ndim != 2 or want.ndim != 2 or got.shape[1:] != want.shape[1:]:
        return diff
    if got.shape[0] != want.shape[0]:
        diff.problem = f"{got.shape[0]} rows vs Paddle's {want.shape[0]}"
        return diff
    if got_counts is not None and want_counts is not None:
        gc, wc = np.asarray(got_counts).reshape(-1), np.asarray(want_counts).reshape(-1)
        if not np.array_equal(gc, wc):
            diff.problem = f"rows per image {gc.tolist()} vs Paddle's {wc.tolist()}"
            return diff
        bounds = np.concatenate([[0], np.cumsum(wc)]).astype(int)
    else:
        bounds = np.array([0, want.shape[0]])
    g, w = got.astype(np.float64), want.astype(np.float64)
    if got_index is not None and want_index is not None and np.size(got_index) == g.shape[0]:
        g = np.concatenate([g, np.asarray(got_index, np.float64).reshape(-1, 1)], axis=1)
        w = np.concatenate([w, np.asarray(want_index, np.float64).reshape(-1, 1)], axis=1)
    exact = np.zeros(g.shape[1], bool)
    exact[0] = True
    if g.shape[1] > want.shape[1]:
        exact[-1] = True
    scale = float(np.abs(w).max()) if w.size else 0.0
    tols = atol + rtol * (np.abs(w).max(axis=0) if w.size else np.zeros(g.shape[1]))
    worst, ties = 0.0, 0
    for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        if hi <= lo:
            continue
        gi, wi = g[lo:hi], w[lo:hi]
        err = np.abs(gi[:, None, :] - wi[None, :, :])  # [got row, want row, column]
        same = (err[..., exact] == 0).all(axis=2)
        close = same & (err[..., ~exact] <= tols[~exact]).all(axis=2)
        cost = np.where(close, err.max(axis=2), np.inf)
        free = np.ones(hi - lo, bool)
        unmatched = []
        for i in range(hi - lo):
            row = np.where(free, cost[i], np.inf)
            j = int(np.argmin(row))
            if not np.isfinite(row[j]):
                unmatched.append(i)
                continue
            free[j] = False
            worst = max(worst, float(row[j]))
        if unmatched:
            # near ties at the cut: the rows left over on both sides all sit at the lowest score
            low = min(float(gi[:, 1].min()), float(wi[:, 1].min())) + tols[1]
            left_g, left_w = gi[unmatched, 1], wi[free, 1]
            if (left_g > low).any() or (left_w > low).any():
                i = unmatched[0]
                diff.problem = f"row {i} of image {k} matches none of Paddle's rows"
                diff.max_abs = float("inf")
                return diff
            ties += len(unmatched)
    diff.max_abs, diff.scale = worst, scale
    diff.max_rel = worst / scale if scale > 0 else 0.0
    diff.exact = False
    notes = []
    if not np.array_equal(got, want):
        notes.append("compared as a set of rows (order differs)")
    if ties:
        notes.append(f"{ties} row(s) at the lowest kept score differ: near ties at the cut")
    diff.note = "; ".join(notes)
    return diff


def compare_candidates(name: str, got: np.ndarray, want: np.ndarray, axis: int, want_score: np.ndarray,
                       got_score: np.ndarray | None, rtol: float) -> ValueDiff:
    """NMS candidates (boxes ``[batch, M, 4]``, ``axis`` 1, or scores ``[batch, classes, M]``,
    ``axis`` 2) that may differ from Paddle's only where a top-k among equal scores ordered or
    cut them differently (the runtimes break ties differently; NMS reads its candidates as a
    set). ``want_score`` ``[batch, M]`` is each of Paddle's candidates' score, ``got_score``
    ours (None if not known). Per image, the candidates at positions that differ must be a
    permutation of Paddle's among positions of equal score, or (a tie at the cut) another
    candidate of the same score as Paddle's at that position (``got_score`` needed); any
    other difference stays one."""
    got, want = np.asarray(got), np.asarray(want)
    diff = compare(name, got, want)
    if diff.problem or diff.within(rtol) or want.ndim != 3 or got.shape != want.shape:
        return diff
    ws = np.asarray(want_score, np.float64)
    gs = None if got_score is None else np.asarray(got_score, np.float64)
    if ws.shape != (want.shape[0], want.shape[axis]) or (gs is not None and gs.shape != ws.shape):
        return diff
    tol = rtol * diff.scale
    stol = rtol * float(np.abs(ws).max()) if ws.size else 0.0
    moved = cut = 0
    worst = 0.0
    for b in range(want.shape[0]):
        g = np.moveaxis(got[b], axis - 1, 0).reshape(want.shape[axis], -1).astype(np.float64)
        w = np.moveaxis(want[b], axis - 1, 0).reshape(want.shape[axis], -1).astype(np.float64)
        bad = np.flatnonzero((np.abs(g - w) > tol).any(axis=1))
        same = np.setdiff1d(np.arange(g.shape[0]), bad)
        if same.size:
            worst = max(worst, float(np.abs(g[same] - w[same]).max()))
        if bad.size == 0:
            continue
        err = np.abs(g[bad][:, None, :] - w[bad][None, :, :]).max(axis=2)  # [our position, Paddle's position]
        tied = np.abs(ws[b, bad][:, None] - ws[b, bad][None, :]) <= stol
        cost = np.where((err <= tol) & tied, err, np.inf)
        free = np.ones(bad.size, bool)
        for i in range(bad.size):
            row = np.where(free, cost[i], np.inf)
            j = int(np.argmin(row))
            if np.isfinite(row[j]):
                free[j] = False
                moved += 1
                worst = max(worst, float(row[j]))
                continue
            pos = int(bad[i])
            if gs is None or abs(gs[b, pos] - ws[b, pos]) > stol:
                diff.problem = (f"candidate {pos} of image {b} is none of Paddle's candidates of its score"
                                + ("" if gs is not None else " (our scores not known)"))
                diff.max_abs = float("inf")
                return diff
            cut += 1
    diff.max_abs = worst
    diff.max_rel = worst / diff.scale if diff.scale > 0 else 0.0
    notes = [f"{moved} candidate(s) in another order among equal scores (top-k ties; NMS reads them as a set)"
             if moved else ""]
    if cut:
        notes.append(f"{cut} other candidate(s) of the same score at a top-k cut")
    diff.note = "; ".join(filter(None, [diff.note, *notes]))
    return diff


def row_counts(got_rows: np.ndarray, want_rows: np.ndarray, others: list[tuple[str, np.ndarray, np.ndarray]]
               ) -> tuple[str, np.ndarray, np.ndarray] | None:
    """Among ``others`` (name, ours, Paddle's), the rows per image of detection rows
    ``[N, 6+]`` (PaddleDetection's ``bbox_num``): a 1-D integer value summing to the number of
    rows on both sides. Returns (name, ours, Paddle's), or None."""
    if np.ndim(want_rows) != 2 or np.ndim(got_rows) != 2:
        return None
    for name, got, want in others:
        got, want = np.asarray(got), np.asarray(want)
        if got.ndim != 1 or want.ndim != 1 or got.dtype.kind not in "iu" or want.dtype.kind not in "iu":
            continue
        if int(want.sum()) == np.shape(want_rows)[0] and int(got.sum()) == np.shape(got_rows)[0] \
                and (want >= 0).all() and (got >= 0).all():
            return name, got, want
    return None


def looks_like_detections(got: np.ndarray, want: np.ndarray) -> bool:
    """Rows of [label, score, box ...] (top-k queries with no NMS, as RT-DETR, DINO and
    PP-DocLayout give; [N, 6] or [batch, N, 6]): float rows of 6 or more columns whose first
    column holds integer labels on both sides."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or want.ndim not in (2, 3) or want.shape[-1] < 6 or want.shape[-2] < 2:
        return False
    if want.dtype.kind != "f" or got.dtype.kind != "f":
        return False
    labels = np.concatenate([got[..., 0].reshape(-1), want[..., 0].reshape(-1)]).astype(np.float64)
    return bool(np.isfinite(labels).all() and (labels == np.round(labels)).all() and (labels >= -1).all())
