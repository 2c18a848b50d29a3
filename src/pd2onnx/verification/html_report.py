"""``verify --html FILE``: the report as one self-contained page (no script, no network, no
extra dependency; not named html.py, as paddle_worker runs as a script from this folder
and would shadow the standard library's html module): the verdict on top, each op's error along the program on a log scale (an
inline SVG: the full run's error per op and the replay's, the first divergence and every
replay failure marked, each point's figures on hover), and tables of the ops the referee
judged, the failures and the ops not replayed."""

from __future__ import annotations

import math
from html import escape

from pd2onnx.verification.report import OpReport, VerifyReport

_W, _H, _PAD_L, _PAD_R, _PAD_T, _PAD_B = 1000, 320, 60, 20, 20, 40
_FLOOR = 1e-10  # errors below this (exact) are drawn at the floor


def _worst(diffs) -> float | None:
    vals = [d.max_rel for d in diffs if not d.problem]
    if any(d.problem for d in diffs):
        return math.inf
    return max(vals) if vals else None


def _y(err: float, lo: float, hi: float) -> float:
    e = min(max(err, 10.0 ** lo), 10.0 ** hi) if math.isfinite(err) else 10.0 ** hi
    frac = (math.log10(e) - lo) / (hi - lo)
    return _PAD_T + (1.0 - frac) * (_H - _PAD_T - _PAD_B)


def _svg(report: VerifyReport) -> str:
    ops = [op for op in report.ops if op.block == 0]
    if not ops:
        return "<p>No ops of the main block to draw.</p>"
    points = []
    for k, op in enumerate(ops):
        points.append((k, op, _worst(op.located) if op.located else None, _worst(op.replay) if op.replay else None))
    finite = [e for _, _, a, b in points for e in (a, b) if e is not None and math.isfinite(e) and e > 0]
    lo = math.floor(math.log10(max(min(finite), _FLOOR))) if finite else -10
    hi = max(0, math.ceil(math.log10(max(finite)))) if finite else 0
    lo = min(lo, -8)
    n = len(ops)

    def x(k: int) -> float:
        return _PAD_L + (k + 0.5) * (_W - _PAD_L - _PAD_R) / n

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
             'role="img" aria-label="error of each op along the program">']
    for e in range(lo, hi + 1):
        yy = _y(10.0 ** e, lo, hi)
        parts.append(f'<line x1="{_PAD_L}" x2="{_W - _PAD_R}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{_PAD_L - 6}" y="{yy + 4:.1f}" font-size="11" text-anchor="end">1e{e}</text>')
    tol = _y(report.rtol, lo, hi)
    parts.append(f'<line class="tolerance" x1="{_PAD_L}" x2="{_W - _PAD_R}" y1="{tol:.1f}" y2="{tol:.1f}" '
                 'stroke="#c80" stroke-dasharray="6 4"><title>--rtol</title></line>')
    first = report.first_divergence
    for k, op, loc, rep in points:
        label = escape(op.label)
        if first is op:
            parts.append(f'<line class="first-divergence" x1="{x(k):.1f}" x2="{x(k):.1f}" y1="{_PAD_T}" '
                         f'y2="{_H - _PAD_B}" stroke="#d00" stroke-width="2"><title>first out of tolerance: {label}'
                         '</title></line>')
        if report.replayed and not op.replayed and op.replayed_with is None:
            parts.append(f'<line class="not-replayed" x1="{x(k):.1f}" x2="{x(k):.1f}" y1="{_H - _PAD_B}" '
                         f'y2="{_H - _PAD_B + 8}" stroke="#888"><title>{label}: not replayed: {escape(op.why)}'
                         '</title></line>')
        if loc is not None:
            parts.append(f'<circle class="located" cx="{x(k):.1f}" cy="{_y(loc, lo, hi):.1f}" r="2.5" fill="#36c">'
                         f'<title>{label}: full run {loc:.3g} of its range</title></circle>')
        if rep is not None:
            failed = op.replay_ok is False and not op.paddle_wrong
            judged = op.referee is not None
            color = "#a0a" if op.paddle_wrong else "#d00" if failed else ("#e80" if judged else "#2a2")
            cls = "paddle-wrong" if op.paddle_wrong else "replay-failed" if failed else \
                ("refereed" if judged else "replayed")
            tip = f"{label}: replay {rep:.3g} of its range (tolerance {op.replay_rtol:.2g})"
            if op.paddle_wrong:
                tip += "; Paddle computes it wrongly: " + op.paddle_wrong
            elif judged:
                tip += "; " + op.referee.text()
            size = 5 if failed or judged or op.paddle_wrong else 2.5
            parts.append(f'<rect class="{cls}" x="{x(k) - size / 2:.1f}" y="{_y(rep, lo, hi) - size / 2:.1f}" '
                         f'width="{size}" height="{size}" fill="{color}"><title>{escape(tip)}</title></rect>')
    parts.append(f'<text x="{_W / 2}" y="{_H - 8}" font-size="12" text-anchor="middle">ops of the main block, '
                 'in program order</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _rows(ops: list[OpReport], cells) -> str:
    return "\n".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells(op)) + "</tr>" for op in ops)


def render(report: VerifyReport) -> str:
    verdict = report.verdict
    color = {"match": "#2a2", "amplified": "#2a2", "mismatch": "#d00"}.get(verdict, "#e80")
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>pd2onnx verify: " + escape(verdict) + "</title>",
           "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin:.5em 0 1.5em}"
           "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:left}"
           ".verdict{font-size:1.2em;padding:.5em;border-left:6px solid " + color + "}"
           ".legend span{margin-right:1.5em}</style></head><body>",
           f'<p class="verdict" id="verdict"><b>{escape(verdict)}</b> (exit {report.exit_code}): '
           f"{escape(report.summary().split(': ', 2)[-1])}</p>",
           f"<p>ONNX model: {escape(report.onnx_source)}</p>",
           "<h2>Outputs</h2><table><tr><th>output</th><th>shape</th><th>max abs</th><th>max rel</th><th>result</th></tr>"]
    for o in report.outputs:
        ok = o.within(report.rtol, report.atol)
        result = o.problem or ("ok" if ok else "MISMATCH") + (f" ({o.note})" if o.note and not o.problem else "")
        out.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in
                                     (o.name, list(o.shape), f"{o.max_abs:.3g}", f"{o.max_rel:.3g}", result)) + "</tr>")
    out.append("</table>")
    if report.located or report.replayed:
        out.append("<h2>Error along the program</h2>")
        out.append('<p class="legend"><span style="color:#36c">&#9679; full run (locate)</span>'
                   '<span style="color:#2a2">&#9632; replay within tolerance</span>'
                   '<span style="color:#e80">&#9632; out of tolerance, judged by the float64 referee</span>'
                   '<span style="color:#d00">&#9632; replay failed; red line: first divergence</span>'
                   '<span style="color:#a0a">&#9632; Paddle computes it wrongly</span>'
                   '<span style="color:#888">| not replayed</span><span style="color:#c80">- - --rtol</span></p>')
        out.append(_svg(report))
    if report.replayed:
        counts = report.replay_counts()
        out.append(f"<p>replayed {counts['replayed']} / not replayed {counts['not_replayed']} / fused "
                   f"{counts['fused']}; {counts['out_of_tolerance']} out of tolerance, {counts['refereed']} judged "
                   "right by the float64 referee</p>")
        judged = [op for op in report.ops if op.referee is not None]
        if judged:
            out.append('<h2>The float64 referee</h2><table id="referee"><tr><th>op</th><th>right</th><th>ours from '
                       "exact</th><th>Paddle's from exact</th><th>allowed</th><th>terms</th><th>says</th></tr>")
            out.append(_rows(judged, lambda op: (
                op.label, op.referee.right, f"{op.referee.ours:.2g}", f"{op.referee.paddle:.2g}",
                f"{op.referee.allowed:.2g}", op.referee.terms, op.referee.text())))
            out.append("</table>")
        if report.paddle_wrong:
            out.append('<h2>Computed wrongly by Paddle</h2><table id="paddle-wrong"><tr><th>op</th><th>why</th></tr>')
            out.append(_rows(report.paddle_wrong, lambda op: (op.label, op.paddle_wrong)))
            out.append("</table>")
        if report.failed_replays:
            out.append('<h2>Replay failures</h2><table id="failures"><tr><th>op</th><th>replay</th></tr>')
            out.append(_rows(report.failed_replays, lambda op: (
                op.label, "; ".join(f"{d.name}: {d.problem or f'{d.max_rel:.3g} of its range'}" for d in op.replay))))
            out.append("</table>")
        skipped = report.not_replayed
        if skipped:
            out.append('<h2>Not replayed</h2><table id="not-replayed"><tr><th>op</th><th>why</th></tr>')
            out.append(_rows(skipped, lambda op: (op.label, op.why)))
            out.append("</table>")
    for note in report.notes:
        out.append(f"<p>note: {escape(note)}</p>")
    out.append(f"<p>{escape(report.summary())}</p>")
    out.append("</body></html>")
    return "\n".join(out)


def write_html(report: VerifyReport, path: str) -> None:
    """Write the page (through a temporary name: never a half-written file)."""
    from pd2onnx.onnx_io import write_text

    write_text(path, render(report))

