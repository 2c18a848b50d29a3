"""What an optimize() run did: convergence, rounds, changes per pass, op histograms."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import onnx_ir as ir

from pd2onnx.optimize._ir import iter_graphs


def op_histogram(model: ir.Model) -> dict[str, int]:
    """Node count per op type over all graphs (subgraphs included); custom domains prefixed."""
    counts: Counter[str] = Counter()
    for graph in iter_graphs(model.graph):
        for node in graph:
            key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
            counts[key] += 1
    return dict(sorted(counts.items()))


@dataclass
class OptimizeReport:
    converged: bool = True
    rounds: int = 0
    changes: dict[str, int] = field(default_factory=dict)
    nodes_before: int = 0
    nodes_after: int = 0
    histogram_before: dict[str, int] = field(default_factory=dict)
    histogram_after: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def format(self) -> str:
        """A human summary: node counts, op histogram before/after, changes per pass."""
        state = "converged" if self.converged else "NOT converged (round cap hit; result is valid but may not be minimal)"
        lines = [
            f"nodes: {self.nodes_before} -> {self.nodes_after}  ({state} after {self.rounds} round(s), {self.seconds:.2f} s)",
            "op histogram (before -> after):",
        ]
        ops = sorted(set(self.histogram_before) | set(self.histogram_after))
        width = max((len(o) for o in ops), default=0)
        for op in ops:
            b, a = self.histogram_before.get(op, 0), self.histogram_after.get(op, 0)
            mark = "" if a == b else f"  ({a - b:+d})"
            lines.append(f"  {op:<{width}}  {b:>6} -> {a:<6}{mark}")
        done = {k: v for k, v in self.changes.items() if v}
        if done:
            lines.append("changes per pass: " + ", ".join(f"{k}={v}" for k, v in done.items()))
        for w in self.warnings:
            lines.append(f"warning: {w}")
        return "\n".join(lines)
