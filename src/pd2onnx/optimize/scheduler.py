"""Runs passes in rounds until a whole round changes nothing (a fixed point) or a cap is hit."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import onnx_ir as ir

from pd2onnx import provenance
from pd2onnx.errors import InternalError, Pd2OnnxError
from pd2onnx.optimize.passes.base import OptimizerPass

logger = logging.getLogger(__name__)


@dataclass
class ScheduleResult:
    converged: bool
    rounds: int
    changes: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


class Scheduler:
    """Apply ``passes`` (name, pass) in order, round after round.

    A round in which no pass reports a change means the model is at a fixed point:
    ``converged`` is True. After ``max_rounds`` rounds with changes it stops with
    ``converged`` False; the model is still valid, only possibly not minimal.
    """

    def __init__(self, passes: Sequence[tuple[str, OptimizerPass]], max_rounds: int = 50) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self.passes = list(passes)
        self.max_rounds = max_rounds

    def run(self, model: ir.Model) -> ScheduleResult:
        result = ScheduleResult(converged=False, rounds=0, changes={name: 0 for name, _ in self.passes})
        result.seconds = {name: 0.0 for name, _ in self.passes}
        for round_no in range(1, self.max_rounds + 1):
            result.rounds = round_no
            round_changes = 0
            for name, p in self.passes:
                start = time.perf_counter()
                try:
                    p(model)
                except Pd2OnnxError:
                    raise
                except Exception as exc:
                    raise InternalError(f"optimizer pass {name}", describe_node(getattr(p, "current", None)),
                                        exc) from exc
                result.seconds[name] += time.perf_counter() - start
                if p.changes:
                    logger.debug("round %d: %s made %d change(s)", round_no, name, p.changes)
                result.changes[name] += p.changes
                round_changes += p.changes
            if round_changes == 0:
                result.converged = True
                break
        _sort(model)
        return result


def describe_node(node: ir.Node | None) -> str:
    """``Conv node 'conv2d_0/Conv_0' (from conv2d, block 0, op #3)`` (the Paddle op when the
    provenance record knows it), or ``the model`` for a pass that works on the whole model."""
    if node is None:
        return "the model"
    text = f"{node.op_type} node {node.name!r}" if node.name else f"a {node.op_type} node"
    site = provenance.node_site(node)
    if site is not None:
        block, index, op_type = site
        text += f" (from {op_type}, block {block}, op #{index})"
    return text


def _sort(model: ir.Model) -> None:
    """Topological order for every graph (rewrites may insert nodes out of place).

    ``Graph.sort`` orders the subgraphs too; sorting a subgraph on its own fails when it
    reads a value that a node of an enclosing graph makes (an outer-scope reference)."""
    model.graph.sort()
