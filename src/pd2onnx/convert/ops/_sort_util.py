"""A stable sort that every runtime computes alike.

ONNX TopK puts the lower index first among equal values (TopK-11 spec), so a full TopK is a
stable sort in ONNX Runtime. OpenVINO's TopK orders equal values arbitrarily (2026.4, CPU
plugin; docs/runtimes.md), and so would any runtime that skips the tie rule. Where Paddle's
result depends on the order of equal keys (the multi-key sorts of detection post-processing,
where class ids, image ids and levels repeat by construction), the order is taken from keys
that cannot tie: each key's dense rank (0 for the smallest distinct value, 1 for the next,
... read off one TopK, where equal values are adjacent whatever their order) times n, plus
its position. A second TopK over those unique keys is the stable order on any runtime.
The unique keys stay below (distinct values) x n: exact in int64, and in OpenVINO (which
computes int64 in int32) while that stays below 2^31 (any n up to 46340; multiclass_nms3
therefore sorts by score only what keep_top_k keeps).
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext


def stable_order(ctx: OpContext, values: ir.Value, n: ir.Value, descending: bool) -> ir.Value:
    """int64 [n]: the positions of 1-D ``values`` (n elements; ``n`` an int64 [1] tensor) in
    sorted order, equal values in the order of their positions."""
    return stable_top_k(ctx, values, n, 0, n, descending)[1]


def stable_top_k(ctx: OpContext, x: ir.Value, k: ir.Value, axis: int, n: ir.Value,
                 descending: bool = True) -> tuple[ir.Value, ir.Value]:
    """ONNX TopK's (values, indices) of ``x`` along ``axis`` (``n`` elements long; ``k`` and
    ``n`` int64 [1] tensors), equal values in index order on any runtime: each of the TopK's
    values (the same in every tie order) takes its dense rank, and rank * n + index, which
    cannot tie, is sorted again."""
    values, index = ctx.op.TopK(x, k, axis=axis, largest=int(descending), sorted=1, _outputs=2)
    previous = ctx.op.Concat(ctx.slice(values, [0], [1], [axis]), ctx.slice(values, [0], [-1], [axis]), axis=axis)
    new_run = ctx.cast(ctx.op.Not(ctx.op.Equal(values, previous)), "int64", "bool")
    rank = ctx.op.CumSum(new_run, ctx.const(np.int64(axis)))  # dense rank, equal values equal
    unique = ctx.op.Add(ctx.op.Mul(rank, ctx.reshape(n, [])), index)
    _, order = ctx.op.TopK(unique, k, axis=axis, largest=0, sorted=1, _outputs=2)
    return ctx.op.GatherElements(values, order, axis=axis), ctx.op.GatherElements(index, order, axis=axis)


def top_k_mask(ctx: OpContext, x: ir.Value, k: ir.Value, axis: int) -> ir.Value:
    """bool, x's shape: the k largest along ``axis`` (``k`` an int64 [1] tensor), equal values
    taken from the lower index, as ONNX TopK picks them, on any runtime: everything above the
    k-th value, then as many of the values equal to it as there is room for, in index order.
    (TopK's values, unlike its indices, do not depend on how a runtime orders ties.)"""
    values, _ = ctx.op.TopK(x, k, axis=axis, largest=1, sorted=1, _outputs=2)
    kth = ctx.slice(values, ctx.op.Sub(k, ctx.const_i64([1])), k, [axis])
    above, tied = ctx.op.Greater(x, kth), ctx.op.Equal(x, kth)
    room = ctx.op.Sub(k, ctx.reduce("ReduceSum", ctx.cast(above, "int64", "bool"), [axis], keepdims=True))
    tie_rank = ctx.op.CumSum(ctx.cast(tied, "int64", "bool"), ctx.const(np.int64(axis)))  # 1, 2, ... among ties
    return ctx.op.Or(above, ctx.op.And(tied, ctx.op.Not(ctx.op.Greater(tie_rank, room))))
