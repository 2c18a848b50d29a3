"""What ``verify`` found: the model's outputs, each op's errors (locate) and replay, the
verdict, and the text and JSON forms of all of it."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from pd2onnx.verification.compare import ValueDiff
from pd2onnx.verification.referee import Judgement

MATCH, AMPLIFIED, MISMATCH, UNEXPLAINED = "match", "amplified", "mismatch", "unexplained"
PADDLE_WRONG = "paddle-wrong"
EXIT_CODES = {MATCH: 0, AMPLIFIED: 0, PADDLE_WRONG: 0, MISMATCH: 3, UNEXPLAINED: 4}


@dataclass
class OpReport:
    """One Paddle op: its outputs' errors in the full run (locate) and on replay."""

    op_type: str
    block: int
    index: int
    layer: str | None = None
    located: list[ValueDiff] = field(default_factory=list)  # full run: ONNX's value vs Paddle's
    inputs: list[ValueDiff] = field(default_factory=list)  # the located errors of its inputs
    replayed: bool = False
    why: str = ""  # why not replayed (or how it was)
    replay: list[ValueDiff] = field(default_factory=list)
    replay_rtol: float | None = None
    replay_ok: bool | None = None  # None: not replayed on its own
    replayed_with: tuple[int, int] | None = None  # replayed as part of another op's nodes (fused)
    covers: list[tuple[int, int]] = field(default_factory=list)  # ops replayed together with it
    nodes: list[str] = field(default_factory=list)
    referee: Judgement | None = None  # the float64 referee, for a replay out of tolerance
    paddle_wrong: str = ""  # why Paddle's own value of this op is wrong (paddle_exact), if it is

    @property
    def fused(self) -> bool:
        return self.replayed_with is not None

    @property
    def where(self) -> str:
        text = f"block {self.block}, op #{self.index}"
        return f"{text}, layer {self.layer}" if self.layer else text

    @property
    def label(self) -> str:
        return f"{self.op_type} ({self.where})"

    def _worst(self, diffs: list[ValueDiff]) -> tuple[float | None, float | None]:
        if not diffs:
            return None, None
        return max(d.max_abs for d in diffs), max(d.max_rel for d in diffs)

    def to_json(self) -> dict:
        diffs = self.replay if self.replay else self.located
        max_abs, max_rel = self._worst(diffs)
        out = {"op_type": self.op_type, "block": self.block, "index": self.index, "max_abs": _num(max_abs),
               "max_rel": _num(max_rel), "replayed": self.replayed}
        if self.layer:
            out["layer"] = self.layer
        if self.why:
            out["why"] = self.why
        if self.replayed and self.replay_ok is not None:
            out["replay_ok"] = self.replay_ok
            out["replay_rtol"] = self.replay_rtol
        if self.replayed_with is not None:
            out["replayed_with"] = {"block": self.replayed_with[0], "index": self.replayed_with[1]}
        if self.covers:
            out["covers"] = [{"block": b, "index": i} for b, i in self.covers]
        if self.located:
            out["located"] = [d.to_json() for d in self.located]
        if self.replay:
            out["replay"] = [d.to_json() for d in self.replay]
        if self.paddle_wrong:
            out["paddle_wrong"] = self.paddle_wrong
        if self.referee is not None:
            out["referee"] = self.referee.to_json()
        if self.nodes:
            out["nodes"] = self.nodes
        return out


def _num(x: float | None) -> float | str | None:
    if x is None:
        return None
    return x if math.isfinite(x) else str(x)


@dataclass
class VerifyReport:
    onnx_source: str
    rtol: float = 1e-4
    atol: float = 1e-4
    outputs: list[ValueDiff] = field(default_factory=list)
    ops: list[OpReport] = field(default_factory=list)
    located: bool = False  # --locate ran
    replayed: bool = False  # --replay ran
    first_divergence: OpReport | None = None
    # ops not replayed whose inputs are within tolerance in the full run and whose outputs
    # are not: one of them may explain the difference, and nothing checked it
    unexplained: list[OpReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    runtime: str = "onnxruntime"  # what computed the ONNX side
    seconds: dict[str, float] = field(default_factory=dict)

    def ok(self, rtol: float | None = None, atol: float | None = None) -> bool:
        """Every model output within tolerance (``rtol``/``atol`` of the value's range)."""
        rtol = self.rtol if rtol is None else rtol
        atol = self.atol if atol is None else atol
        return bool(self.outputs) and all(o.within(rtol, atol) for o in self.outputs)

    @property
    def failed_replays(self) -> list[OpReport]:
        return [op for op in self.ops if op.replay_ok is False and not op.paddle_wrong]

    @property
    def paddle_wrong(self) -> list[OpReport]:
        """Ops whose replay differs because Paddle computes them wrongly (``paddle_exact``)."""
        return [op for op in self.ops if op.paddle_wrong]

    @property
    def not_replayed(self) -> list[OpReport]:
        return [op for op in self.ops if not op.replayed]

    @property
    def refereed(self) -> list[OpReport]:
        """Ops out of the replay tolerance that the float64 referee judged right."""
        return [op for op in self.ops if op.referee is not None and op.referee.right]

    @property
    def verdict(self) -> str:
        if self.failed_replays:
            return MISMATCH
        if self.ok():
            return MATCH
        if not self.replayed:
            return MISMATCH
        if self.paddle_wrong:
            return PADDLE_WRONG
        return UNEXPLAINED if self.unexplained else AMPLIFIED

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def summary(self) -> str:
        """The verdict line."""
        verdict = self.verdict
        skipped = len(self.not_replayed) if self.replayed else 0
        tail = f"; {skipped} op(s) not replayed (listed above, with why)" if skipped else ""
        judged = len(self.refereed)
        if judged:
            tail = f" ({judged} of them judged by the float64 referee: Paddle's float32 rounding){tail}"
        if verdict == MATCH:
            replayed = f", every replayed op within its tolerance{tail}" if self.replayed else ""
            return f"verdict: match: the outputs agree with Paddle's (rtol {self.rtol:g}, atol {self.atol:g}){replayed}"
        if verdict == AMPLIFIED:
            return ("verdict: amplified: the outputs differ from Paddle's, but every op, fed Paddle's own inputs, "
                    f"gives Paddle's outputs{tail}: float noise amplified by the model, not a conversion error")
        if verdict == PADDLE_WRONG:
            wrong = self.paddle_wrong
            names = ", ".join(op.label for op in wrong[:5]) + (f" and {len(wrong) - 5} more" if len(wrong) > 5 else "")
            return (f"verdict: paddle-wrong: the outputs differ from Paddle's, and Paddle itself computes {names} "
                    f"wrongly (far from the exact value of the op on Paddle's own operands, where ours is not); every "
                    f"other op, fed Paddle's own inputs, gives Paddle's outputs{tail}: Paddle's outputs are no "
                    "reference for this model")
        if verdict == UNEXPLAINED:
            names = ", ".join(op.label for op in self.unexplained[:5]) + \
                (f" and {len(self.unexplained) - 5} more" if len(self.unexplained) > 5 else "")
            return ("verdict: unexplained: the outputs differ from Paddle's and every replayed op gives Paddle's "
                    f"outputs, but {names}, not replayed (see above), may explain the difference: its inputs agree "
                    "with Paddle's in the full run, its outputs do not")
        failed = self.failed_replays
        if failed:
            names = ", ".join(op.label for op in failed[:5]) + (f" and {len(failed) - 5} more" if len(failed) > 5 else "")
            return f"verdict: mismatch: {len(failed)} op(s) differ from Paddle when fed Paddle's own inputs: {names}"
        where = f"; the first op out of tolerance is {self.first_divergence.label}" if self.first_divergence else ""
        return (f"verdict: mismatch: the outputs differ from Paddle's{where} "
                "(run with --replay to tell float noise amplified by the model from a conversion error)")

    def to_json(self) -> dict:
        first = None
        if self.first_divergence is not None:
            f = self.first_divergence
            first = {"op_type": f.op_type, "block": f.block, "index": f.index, "layer": f.layer,
                     "outputs": [d.to_json() for d in f.located], "inputs": [d.to_json() for d in f.inputs]}
        return {
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "onnx": self.onnx_source,
            "runtime": self.runtime,
            "rtol": self.rtol,
            "atol": self.atol,
            "outputs": [dict(o.to_json(), ok=o.within(self.rtol, self.atol)) for o in self.outputs],
            "first_divergence": first,
            "replay_counts": self.replay_counts(),
            "unexplained": [{"op_type": op.op_type, "block": op.block, "index": op.index, "why": op.why}
                            for op in self.unexplained],
            "ops": [op.to_json() for op in self.ops],
            "notes": self.notes,
            "seconds": self.seconds,
        }

    def replay_counts(self) -> dict[str, int]:
        """Ops replayed on their own, not replayed, and replayed with the op they were fused into."""
        if not self.replayed:
            return {}
        fused = sum(1 for op in self.ops if op.fused)
        replayed = sum(1 for op in self.ops if op.replayed and not op.fused)
        return {"replayed": replayed, "not_replayed": len(self.not_replayed), "fused": fused,
                "out_of_tolerance": len(self.failed_replays), "refereed": len(self.refereed),
                "paddle_wrong": len(self.paddle_wrong)}

    def write_json(self, path: str) -> None:
        from pd2onnx.onnx_io import write_text

        write_text(path, json.dumps(self.to_json(), indent=1))


def _fmt(x: float) -> str:
    return f"{x:.3g}" if math.isfinite(x) else str(x)


def _diff_text(d: ValueDiff) -> str:
    if d.problem:
        return f"{d.name}: {d.problem}"
    text = f"{d.name}: max abs {_fmt(d.max_abs)}, {_fmt(d.max_rel)} of its range"
    return f"{text} ({d.note})" if d.note else text


def format_report(report: VerifyReport, rtol: float | None = None, atol: float | None = None,
                  every_op: bool = False) -> str:
    rtol = report.rtol if rtol is None else rtol
    atol = report.atol if atol is None else atol
    lines = [f"ONNX model: {report.onnx_source}" + (f" (run by {report.runtime})" if report.runtime != "onnxruntime"
                                                     else ""),
             f"{'output':40s} {'shape':>18s} {'max abs':>10s} {'max rel':>10s}  result"]
    for o in report.outputs:
        verdict = o.problem or ("ok" if o.within(rtol, atol) else f"MISMATCH (atol {atol}, rtol {rtol})")
        if o.note and not o.problem:
            verdict += f" ({o.note})"
        lines.append(f"{o.name[:40]:40s} {str(list(o.shape)):>18s} {_fmt(o.max_abs):>10s} {_fmt(o.max_rel):>10s}  "
                     f"{verdict}")
    if report.located:
        lines += ["", "locate: each op's outputs in the full run against Paddle's (max abs, relative to range)"]
        for op in report.ops:
            if not op.located:
                continue
            bad = report.first_divergence is op
            if every_op or bad or not all(d.within(rtol, atol) for d in op.located):
                mark = "  <- first out of tolerance" if bad else ""
                lines.append(f"  {op.label}: " + "; ".join(_diff_text(d) for d in op.located) + mark)
        first = report.first_divergence
        for op in report.unexplained:
            lines.append(f"  {op.label} was not replayed ({op.why}); its inputs agree with Paddle's, its outputs do "
                         "not: it may explain the difference")
        if first is None:
            lines.append("  every compared value is within tolerance")
        else:
            lines.append(_divergence_text(first, rtol, atol))
    if report.replayed:
        lines += ["", "replay: each op's ONNX nodes fed Paddle's own inputs, against Paddle's outputs"]
        replayed = [op for op in report.ops if op.replay_ok is not None]
        failed = report.failed_replays
        for op in failed:
            lines.append(f"  FAIL {op.label} (tolerance {op.replay_rtol:.2g} of the range): "
                         + "; ".join(_diff_text(d) for d in op.replay))
            if op.referee is not None:
                lines.append(f"       {op.referee.text()}")
            if op.nodes:
                lines.append(f"       its ONNX nodes: {', '.join(op.nodes[:8])}" + (" ..." if len(op.nodes) > 8 else ""))
        for op in report.paddle_wrong:
            lines.append(f"  PADDLE WRONG {op.label}: " + "; ".join(_diff_text(d) for d in op.replay))
            lines.append(f"       Paddle computes {op.op_type} (block {op.block}, op #{op.index}) wrongly: {op.paddle_wrong}")
        for op in report.refereed:
            lines.append(f"  ok   {op.label}: out of the replay tolerance ({op.replay_rtol:.2g}): "
                         + "; ".join(_diff_text(d) for d in op.replay))
            lines.append(f"       {op.referee.text()}")
        if every_op:
            for op in replayed:
                if op.replay_ok and op.referee is None:
                    lines.append(f"  ok   {op.label}: " + "; ".join(_diff_text(d) for d in op.replay))
        counts = report.replay_counts()
        lines.append(f"  replayed {counts['replayed']} / not replayed {counts['not_replayed']} / fused "
                     f"{counts['fused']} (replayed with the op they were fused into); {len(failed)} out of tolerance"
                     + (f", {counts['refereed']} more judged right by the float64 referee" if counts["refereed"] else "")
                     + (f", {counts['paddle_wrong']} computed wrongly by Paddle" if counts["paddle_wrong"] else ""))
        skipped = report.not_replayed
        if skipped:
            lines.append(f"  not replayed ({len(skipped)}):")
            by_why: dict[str, list[OpReport]] = {}
            for op in skipped:
                by_why.setdefault(op.why, []).append(op)
            for why, ops in by_why.items():
                shown = ", ".join(op.label for op in ops[:4]) + (f" and {len(ops) - 4} more" if len(ops) > 4 else "")
                lines.append(f"    {shown}: {why}")
    for note in report.notes:
        lines.append(f"note: {note}")
    lines.append(report.summary())
    return "\n".join(lines)


# Inputs closer than this to Paddle's (relative to their range) are Paddle's up to float noise.
NOISE_REL = 1e-5


def _divergence_text(op: OpReport, rtol: float, atol: float) -> str:
    out_rel = max((d.max_rel for d in op.located), default=0.0)
    in_rel = max((d.max_rel for d in op.inputs if not d.problem), default=0.0)
    head = f"  first out of tolerance: {op.label}"
    if not op.inputs:
        return (f"{head}: its inputs are the model's own inputs or constants, its output is off by "
                f"{_fmt(out_rel)} of its range: this op")
    ins = "; ".join(_diff_text(d) for d in op.inputs)
    if in_rel <= NOISE_REL and not any(d.problem for d in op.inputs):
        return f"{head}: inputs within {_fmt(in_rel)} of their range, output off by {_fmt(out_rel)}: this op ({ins})"
    grown = f", grown {_fmt(out_rel / in_rel)}x here" if in_rel > 0 else ""
    return (f"{head}: its inputs were already off by up to {_fmt(in_rel)} of their range{grown}: noise carried in "
            f"from earlier ops ({ins}); --replay tells whether this op adds an error of its own")
