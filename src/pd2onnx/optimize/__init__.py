"""ONNX optimizer for any ``onnx_ir`` model: constant folding, clean-up and fusions run to a
fixed point, plus an fp16 conversion pass. See docs/optimizer.md.

    from pd2onnx.optimize import optimize, to_fp16
    report = optimize(model, input_shapes={"x": [1, 3, 224, 224]})
    print(report.format())
    warnings = to_fp16(model, keep_io_types=True)   # optimize first, then convert
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import onnx_ir as ir

    from pd2onnx.optimize.report import OptimizeReport

# Kept here (not imported from passes) so that importing this package stays cheap: the CLI
# imports pd2onnx.optimize.command at start-up; onnx_ir and numpy load on first use.
DEFAULT_FOLD_SIZE_LIMIT = 1 << 20
PASS_NAMES: tuple[str, ...] = (
    "lift-constants",
    "remove-identity",
    "remove-dropout",
    "infer-shapes",
    "fold-constants",
    "fold-shapes",
    "fold-branches",
    "flatten-to-reshape",
    "remove-noop",
    "simplify-arith",
    "merge-chains",
    "fuse-pad",
    "fuse-bn",
    "fuse-bias",
    "fuse-mul",
    "fuse-gemm",
    "fuse-hardswish",
    "fuse-gelu",
    "fuse-layernorm",
    "cse",
    "dedup-initializers",
    "remove-unused",
)


def __getattr__(name: str) -> Any:
    if name == "OptimizeReport":
        from pd2onnx.optimize.report import OptimizeReport

        return OptimizeReport
    raise AttributeError(f"module 'pd2onnx.optimize' has no attribute {name!r}")

__all__ = ["DEFAULT_FOLD_SIZE_LIMIT", "PASS_NAMES", "OptimizeReport", "optimize", "to_fp16"]


def optimize(
    model: ir.Model,
    *,
    input_shapes: Mapping[str, Sequence[int | str | None]] | None = None,
    skip: Collection[str] = (),
    max_rounds: int = 50,
    fold_size_limit: int = DEFAULT_FOLD_SIZE_LIMIT,
    fold_qdq: bool = False,
) -> OptimizeReport:
    """Optimize ``model`` in place and report what changed.

    ``input_shapes`` overrides graph input shapes first (int: static size, str: a named
    symbolic dim, None: unknown). ``skip`` names passes not to run (see ``PASS_NAMES``).
    ``fold_size_limit`` caps the elements of a folded constant, except when the result is
    no larger than the node's largest constant input. ``fold_qdq`` turns a quantized (QDQ)
    model into a float one first (weights dequantized, activation Q/DQ pairs removed);
    without it Q/DQ nodes are kept (see :mod:`pd2onnx.optimize.passes.quant`).
    """
    from pd2onnx.errors import UsageError
    from pd2onnx.optimize.passes import PASS_CLASSES
    from pd2onnx.optimize.passes.base import Options
    from pd2onnx.optimize.passes.shapes import apply_input_shapes
    from pd2onnx.optimize.report import OptimizeReport, op_histogram
    from pd2onnx.optimize.scheduler import Scheduler

    unknown = sorted(set(skip) - set(PASS_NAMES))
    if unknown:
        raise UsageError(
            f"unknown pass name(s) to skip: {', '.join(unknown)}",
            hint=f"pass names are: {', '.join(PASS_NAMES)}",
        )
    if max_rounds < 1:
        raise UsageError(f"max_rounds must be at least 1, got {max_rounds}")
    from pd2onnx import provenance

    start = time.perf_counter()
    provenance.attach(model)  # a file pd2onnx converted: its rewrites keep the provenance honest
    options = Options(fold_size_limit=fold_size_limit)
    histogram_before = op_histogram(model)
    if input_shapes:
        apply_input_shapes(model, input_shapes)
    qdq_folded = 0
    if fold_qdq:
        from pd2onnx.optimize.passes.quant import FoldQDQ

        fold = FoldQDQ(options)
        fold(model)
        qdq_folded = fold.changes
    passes = [(name, cls(options)) for name, cls in PASS_CLASSES.items() if name not in skip]
    result = Scheduler(passes, max_rounds=max_rounds).run(model)
    histogram_after = op_histogram(model)
    provenance.store(model, refresh=True)
    return OptimizeReport(
        converged=result.converged,
        rounds=result.rounds,
        changes={**({"fold-qdq": qdq_folded} if fold_qdq else {}),
                 **{name: result.changes.get(name, 0) for name in PASS_NAMES}},
        nodes_before=sum(histogram_before.values()),
        nodes_after=sum(histogram_after.values()),
        histogram_before=histogram_before,
        histogram_after=histogram_after,
        warnings=options.warnings,
        seconds=time.perf_counter() - start,
    )


def to_fp16(model: ir.Model, keep_io_types: bool = False) -> list[str]:
    """Convert float32 weights and compute to float16 in place; returns warnings.

    See :mod:`pd2onnx.optimize.passes.fp16` for what stays in float32 and why.
    """
    from pd2onnx import provenance
    from pd2onnx.optimize.passes.fp16 import convert_to_fp16

    provenance.attach(model)
    warnings = convert_to_fp16(model, keep_io_types=keep_io_types)
    provenance.store(model, refresh=True)
    return warnings
