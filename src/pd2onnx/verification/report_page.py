"""``verify --html``: the report as one self-contained page.

The page holds the verdict, the outputs' errors, a drift curve (each op's error along the
program, log scale: in the full run and, where it ran, on replay), the first divergence and
every replay failure marked on it, and a table of the ops worth a look (out of tolerance,
failed or not replayed, judged by the referee). It is built from the report's JSON form
(``VerifyReport.to_json``), so the page shows exactly what ``--json`` writes. No script, no
style sheet or font from the network: inline SVG and CSS only, hover text through SVG
``<title>`` elements.
"""

from __future__ import annotations

import html
import math
from typing import Any

_W, _H = 960, 300  # the plot's size in px
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 16, 40
_FLOOR = 1e-9  # errors below this (exact ones included) sit on the plot's floor

_COLOURS = {"match": "#1a7f37", "amplified": "#9a6700", "mismatch": "#cf222e"}


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _num(x: Any) -> float | None:
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):  # the JSON form writes inf/nan as text
        try:
            return float(x)
        except ValueError:
            return None
    return None


def _fmt(x: Any) -> str:
    v = _num(x)
    if v is None:
        return "-"
    return f"{v:.3g}" if math.isfinite(v) else str(v)


def _worst_rel(diffs: list[dict]) -> float | None:
    vals = [_num(d.get("max_rel")) for d in diffs if not d.get("problem")]
    vals = [v for v in vals if v is not None]
    return max(vals) if vals else None


def _label(op: dict) -> str:
    where = f"block {op['block']}, op #{op['index']}"
    if op.get("layer"):
        where += f", layer {op['layer']}"
    return f"{op['op_type']} ({where})"


def _is_first(op: dict, first: dict | None) -> bool:
    return bool(first) and (op["block"], op["index"]) == (first["block"], first["index"])


def _status(op: dict) -> str:
    """"failed", "not replayed", "fused", "ok" or "" (no replay run)."""
    if op.get("replay_ok") is False:
        return "failed"
    if op.get("replayed_with"):
        return "fused"
    if op.get("replay_ok") is True:
        return "ok"
    return "not replayed" if op.get("why") else ""


def _referee_text(op: dict) -> str:
    """The referee's figures, where the report has them (float64 judgement of both sides)."""
    ref = op.get("referee")
    if not isinstance(ref, dict):
        return ""
    parts = []
    if ref.get("judgement"):
        parts.append(str(ref["judgement"]))
    for key, name in (("ours_from_exact", "ours from exact"), ("paddle_from_exact", "Paddle's from exact")):
        if key in ref:
            parts.append(f"{name} {_fmt(ref[key])}")
    if ref.get("why"):
        parts.append(str(ref["why"]))
    return "; ".join(parts)


def _plot(ops: list[dict], first: dict | None, rtol: float) -> str:
    """The drift curve: x = position in the program, y = log10 of the error (relative to the
    value's range)."""
    located = [(_worst_rel(op.get("located", [])), op) for op in ops]
    replay = [(_worst_rel(op.get("replay", [])), op) for op in ops]
    values = [v for v, _ in located + replay if v is not None and v > 0]
    if not ops:
        return "<p>No op was compared (run with --locate or --replay).</p>"
    lo = math.floor(math.log10(max(min(values, default=_FLOOR), _FLOOR)))
    hi = math.ceil(math.log10(max(max(values, default=1.0), rtol * 10, 1e-6)))
    lo = min(lo, math.floor(math.log10(rtol)) - 2)
    pw, ph = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    n = len(ops)

    def x(i: int) -> float:
        return _LEFT + (pw * (i + 0.5) / n)

    def y(v: float) -> float:
        v = max(v, 10.0**lo)
        return _TOP + ph * (hi - math.log10(v)) / (hi - lo)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" role="img" '
             f'aria-label="error of each op along the program">',
             f'<rect x="{_LEFT}" y="{_TOP}" width="{pw}" height="{ph}" fill="#fff" stroke="#d0d7de"/>']
    for k in range(lo, hi + 1):
        yy = y(10.0**k)
        parts.append(f'<line x1="{_LEFT}" x2="{_LEFT + pw}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#eaeef2"/>')
        parts.append(f'<text x="{_LEFT - 6}" y="{yy + 4:.1f}" text-anchor="end" class="ax">1e{k}</text>')
    yt = y(rtol)
    parts.append(f'<line x1="{_LEFT}" x2="{_LEFT + pw}" y1="{yt:.1f}" y2="{yt:.1f}" stroke="#cf222e" '
                 f'stroke-dasharray="4 3"><title>replay tolerance {rtol:g} of the range</title></line>')
    for series, colour, name in ((located, "#0969da", "full run"), (replay, "#8250df", "replay")):
        pts = [(x(i), y(v)) for i, (v, _) in enumerate(series) if v is not None]
        if len(pts) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.2" '
                         f'opacity="0.8"><title>{name}</title></polyline>')
        for i, (v, op) in enumerate(series):
            if v is None:
                continue
            tip = f"{_label(op)}: {name} {_fmt(v)} of the range"
            ref = _referee_text(op)
            if ref:
                tip += f" | referee: {ref}"
            parts.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="2" fill="{colour}"><title>{_e(tip)}</title>'
                         "</circle>")
    for i, op in enumerate(ops):
        status = _status(op)
        if status == "failed":
            parts.append(f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{_TOP}" y2="{_TOP + ph}" stroke="#cf222e" '
                         f'stroke-width="2" class="failed"><title>{_e("replay failed: " + _label(op))}</title></line>')
        elif status == "not replayed":
            parts.append(f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{_TOP + ph - 8}" y2="{_TOP + ph}" '
                         f'stroke="#6e7781" class="skipped"><title>{_e("not replayed: " + _label(op) + ": " + op["why"])}'
                         "</title></line>")
        if _is_first(op, first):
            parts.append(f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{_TOP}" y2="{_TOP + ph}" stroke="#9a6700" '
                         f'stroke-width="2" stroke-dasharray="6 3" class="first">'
                         f'<title>{_e("first out of tolerance: " + _label(op))}</title></line>')
    parts.append(f'<text x="{_LEFT + pw / 2}" y="{_H - 8}" text-anchor="middle" class="ax">ops in program '
                 f'order ({n})</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _row(cells: list[str], cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<tr{attr}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def render(report: dict, title: str = "pd2onnx verify") -> str:
    """The page for a report in its JSON form."""
    verdict = report.get("verdict", "?")
    rtol = float(report.get("rtol") or 1e-4)
    ops = report.get("ops", [])
    first = report.get("first_divergence")
    out = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}: {_e(verdict)}</title>",
        "<style>body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1f2328;max-width:1000px}"
        "h1{font-size:20px}.verdict{font-size:18px;font-weight:600;padding:8px 12px;border-radius:6px;color:#fff;"
        "display:inline-block}table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #d0d7de;"
        "padding:3px 8px;text-align:left;font-size:13px;vertical-align:top}th{background:#f6f8fa}"
        "tr.failed td,tr.off td{background:#ffebe9}tr.first td{background:#fff8c5}tr.skipped td{color:#57606a}"
        ".ax{font-size:11px;fill:#57606a}.legend span{margin-right:16px}code{font-size:12px}</style>",
        "</head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<div class="verdict" style="background:{_COLOURS.get(verdict, "#57606a")}" id="verdict">{_e(verdict)}</div>',
        f"<p>{_e(report.get('summary', ''))}</p>" if report.get("summary") else "",
        f"<p>ONNX model: <code>{_e(report.get('onnx', ''))}</code>; tolerance rtol {_e(report.get('rtol'))}, "
        f"atol {_e(report.get('atol'))}</p>",
        "<h2>Outputs</h2><table><tr><th>output</th><th>shape</th><th>max abs</th><th>of range</th><th>result</th></tr>",
    ]
    for o in report.get("outputs", []):
        result = o.get("problem") or ("ok" if o.get("ok") else "out of tolerance")
        if o.get("note"):
            result += f" ({o['note']})"
        out.append(_row([_e(o.get("name")), _e(o.get("shape")), _fmt(o.get("max_abs")), _fmt(o.get("max_rel")),
                         _e(result)], "" if o.get("ok") else "off"))
    out.append("</table>")
    counts = {s: sum(1 for op in ops if _status(op) == s) for s in ("ok", "failed", "fused", "not replayed")}
    out += [
        "<h2>Drift along the program</h2>",
        '<p class="legend"><span style="color:#0969da">&#9679; full run: each op\'s output against Paddle\'s</span>'
        '<span style="color:#8250df">&#9679; replay: fed Paddle\'s own inputs</span>'
        '<span style="color:#cf222e">| replay failed</span><span style="color:#9a6700">&#8942; first out of '
        'tolerance</span><span style="color:#6e7781">&#9662; not replayed</span></p>',
        _plot(ops, first, rtol),
        f"<p id=\"counts\">replayed {counts['ok'] + counts['failed']} (out of tolerance {counts['failed']}), "
        f"fused into another op's replay {counts['fused']}, not replayed {counts['not replayed']}</p>",
    ]
    if first:
        out.append(f"<p>First out of tolerance: <b>{_e(_label(first))}</b></p>")
    shown = [op for op in ops if _status(op) in ("failed", "not replayed") or _is_first(op, first)
             or op.get("referee")]
    if shown:
        out.append("<h2>Ops worth a look</h2><table><tr><th>op</th><th>full run</th><th>replay</th>"
                   "<th>status</th><th>referee / why</th></tr>")
        for op in shown:
            status = _status(op)
            cls = "failed" if status == "failed" else "first" if _is_first(op, first) else (
                "skipped" if status == "not replayed" else "")
            note = _referee_text(op) or op.get("why", "")
            out.append(_row([_e(_label(op)), _fmt(_worst_rel(op.get("located", []))),
                             _fmt(_worst_rel(op.get("replay", []))), _e(status or "-"), _e(note)], cls))
        out.append("</table>")
    for note in report.get("notes", []):
        out.append(f"<p>note: {_e(note)}</p>")
    out.append("</body></html>")
    return "\n".join(line for line in out if line)


def write(report: dict, path: str, title: str = "pd2onnx verify") -> None:
    """Write the page to ``path`` (never a half-written file)."""
    from pd2onnx.onnx_io import write_text

    write_text(path, render(report, title))
