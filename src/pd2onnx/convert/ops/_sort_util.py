"""A stable sort that every runtime computes alike.

ONNX TopK puts the lower index first among equal values (TopK-11 spec), so a full TopK is a
stable sort in ONNX Runtime. OpenVINO's TopK orders equal values arbitrarily (2026.4, CPU
plugin; docs/runtimes.md), and so would any runtime that skips the tie rule. Where Paddle's
result depends on the order of equal keys (the multi-key sorts of detection post-processing,
where class ids, image ids and levels repeat by construction), the order is taken from keys
that cannot tie: each key's dense rank (0 for the smallest distinct value, 1 for the next,
... read off one TopK, where equal values are adjacent whatever their order) times n, plus
its position. A second TopK over those unique keys is the stable order on any runtime.
The unique keys stay below n^2: exact in int64, and in OpenVINO's int32 for n < 46341.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext


def stable_order(ctx: OpContext, values: ir.Value, n: ir.Value, descending: bool) -> ir.Value:
    """int64 [n]: the positions of 1-D ``values`` (n elements; ``n`` an int64 [1] tensor) in
    sorted order, equal values in the order of their positions."""
    by_value, order = ctx.op.TopK(values, n, axis=0, largest=int(descending), sorted=1, _outputs=2)
    previous = ctx.op.Concat(ctx.slice(by_value, [0], [1], [0]), ctx.slice(by_value, [0], [-1], [0]), axis=0)
    new_run = ctx.cast(ctx.op.Not(ctx.op.Equal(by_value, previous)), "int64", "bool")
    run = ctx.op.CumSum(new_run, ctx.const(np.int64(0)))  # dense rank, in sorted order
    rank = ctx.op.ScatterElements(run, order, run, axis=0)  # ... at each position (order is a permutation)
    positions = ctx.op.Range(ctx.const(np.int64(0)), ctx.reshape(n, []), ctx.const(np.int64(1)))
    unique = ctx.op.Add(ctx.op.Mul(rank, n), positions)
    _, stable = ctx.op.TopK(unique, n, axis=0, largest=0, sorted=1, _outputs=2)
    return stable
