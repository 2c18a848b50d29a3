"""Render a results dict (see run.py) as the Markdown results file, verdicts first."""

from __future__ import annotations

import math

MIB = 1024 * 1024
SMALL_LIMIT = 100 * MIB  # goal (a): "models <= 100 MB of weights", read as MiB (resnet50 = 97.7 MiB)
BIG_LIMIT = 1_000_000_000  # goal (b): ">= 1 GB"

MET, MISSED, NA = "met", "**MISSED**", "not measured"


def _s(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if x < 0.01:
        return f"{x * 1000:.2f} ms"
    if x < 1:
        return f"{x * 1000:.0f} ms"
    return f"{x:.2f} s"


def _mb(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:,.0f} MiB" if x >= 10 else f"{x:.1f} MiB"


def _bytes(n: int | None) -> str:
    if n is None:
        return "–"
    if n >= 1e9:
        return f"{n / 1e9:.2f} GB"
    if n >= 1e6:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e3:.1f} kB"


def _ratio(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}x"


def _one_line(text: str, n: int = 300) -> str:
    text = " ".join((text or "").split())
    text = text.replace("|", "\\|")
    return text if len(text) <= n else text[: n - 1] + "…"


def _quality_for(results: dict, model: str, fmt: str) -> dict | None:
    for q in results.get("quality", []):
        if q["model"] == model and q["fmt"] == fmt:
            return q
    return None


def _correct(results: dict, model: str, fmt: str, key: str) -> bool | None:
    q = _quality_for(results, model, fmt)
    if q is None:
        return None
    col = q.get("columns", {}).get(key)
    return None if col is None else bool(col.get("correct"))


def _verified_note(col: dict) -> str:
    return (f"{col.get('max_rel_err', 0):.2%} of the range off Paddle, beyond the bench's 0.1%, and every op "
            "replays within tolerance on Paddle's own inputs")


def _usable(results: dict, conv: dict, key: str) -> tuple[dict | None, str]:
    """A conversion column whose figures may be used: converted, and its output is correct."""
    col = conv["columns"].get(key)
    if col is None:
        return None, f"{key} not run on this format"
    if not col.get("ok"):
        return None, f"{key} failed: {_one_line(col.get('error', ''), 160)}"
    if key != "copy":
        ok = _correct(results, conv["model"], conv["fmt"], key)
        if ok is False:
            return None, f"{key} output is wrong"
        if ok is None:
            return None, f"{key} output not checked"
    return col, ""


# ---------------------------------------------------------------------------------------- verdicts
def verdict_a(results: dict) -> tuple[str, list[str]]:
    lines, statuses = [], []
    for conv in results.get("conversion", []):
        if conv["params_bytes"] > SMALL_LIMIT:
            continue
        tag = f"{conv['model']} [{conv['fmt']}]"
        pd, why = _usable(results, conv, "pd2onnx")
        if pd is None:
            lines.append(f"- {tag}: {NA}: {why}")
            statuses.append(NA)
            continue
        parts = []
        if conv["fmt"] == "pir" and "p2o" in conv["columns"]:
            p2o, why = _usable(results, conv, "p2o")
            if p2o is None:
                parts.append(f"vs p2o {NA} ({why})")
            else:
                r = pd["wall_median"] / p2o["wall_median"]
                st = MET if r <= 2 else MISSED
                statuses.append(st)
                more = "" if st == MET else f", {r / 2:.1f}x over the limit"
                parts.append(f"time {r:.2f}x p2o's (goal ≤ 2x: {st}{more})")
        p21, why = _usable(results, conv, "paddle2onnx-2.1.0")
        if p21 is None:
            if "paddle2onnx-2.1.0" in conv["columns"]:
                parts.append(f"vs Paddle2ONNX 2.1.0 {NA} ({why})")
        else:
            speed = p21["wall_median"] / pd["wall_median"]
            st = MET if speed >= 5 else MISSED
            statuses.append(st)
            more = "" if st == MET else f", needs {5 / speed:.1f}x more speed"
            parts.append(f"{speed:.1f}x faster than Paddle2ONNX 2.1.0 (goal ≥ 5x: {st}{more})")
            rr = pd["rss_median_mb"] / p21["rss_median_mb"]
            st = MET if rr <= 0.5 else MISSED
            statuses.append(st)
            more = "" if st == MET else f", {pd['rss_median_mb'] - 0.5 * p21['rss_median_mb']:.0f} MiB over"
            parts.append(f"peak RSS {rr:.2f}x Paddle2ONNX's (goal ≤ 0.5x: {st}{more})")
        lines.append(f"- {tag}: " + "; ".join(parts) if parts else f"- {tag}: no anchor to compare with")
    return _overall(statuses), lines


def verdict_b(results: dict) -> tuple[str, list[str]]:
    lines, statuses = [], []
    for conv in results.get("conversion", []):
        if conv["params_bytes"] < BIG_LIMIT:
            continue
        tag = f"{conv['model']} [{conv['fmt']}] ({_bytes(conv['params_bytes'])})"
        pd, why = _usable(results, conv, "pd2onnx")
        copy, why2 = _usable(results, conv, "copy")
        if pd is None or copy is None:
            lines.append(f"- {tag}: {NA}: {why or why2}")
            statuses.append(NA)
            continue
        r = pd["wall_median"] / copy["wall_median"]
        st = MET if r <= 1.5 else MISSED
        statuses.append(st)
        more = "" if st == MET else f", {r / 1.5:.2f}x over the limit"
        limit = 1.2 * conv["params_bytes"] / MIB + 300
        st2 = MET if pd["rss_median_mb"] <= limit else MISSED
        statuses.append(st2)
        more2 = "" if st2 == MET else f", {pd['rss_median_mb'] - limit:,.0f} MiB over"
        lines.append(f"- {tag}: time {_s(pd['wall_median'])} = {r:.2f}x the copy's {_s(copy['wall_median'])} "
                     f"(goal ≤ 1.5x: {st}{more}); peak RSS {_mb(pd['rss_median_mb'])} vs limit "
                     f"{_mb(limit)} = 1.2 x weights + 300 MiB ({st2}{more2})")
    return _overall(statuses), lines


def verdict_c(results: dict) -> tuple[str, list[str]]:
    lines, statuses = [], []
    for q in results.get("quality", []):
        tag = f"{q['model']} [{q['fmt']}]"
        cols = q.get("columns", {})
        pd = cols.get("pd2onnx")
        if not pd or not pd.get("correct"):
            why = "no output" if not pd else (pd.get("error") or "wrong output")
            lines.append(f"- {tag}: {NA}: pd2onnx {_one_line(why, 200)}")
            statuses.append(NA)
            continue
        others = {k: v for k, v in cols.items() if k != "pd2onnx" and v.get("correct") and v.get("stats")}
        if not others:
            lines.append(f"- {tag}: {NA}: no other correct column to compare with")
            statuses.append(NA)
            continue
        parts = []
        best_key = min(others, key=lambda k: (others[k]["stats"]["nodes"], k.startswith("pd2onnx")))
        best = others[best_key]["stats"]["nodes"]
        mine = pd["stats"]["nodes"]
        st = MET if mine <= best else MISSED
        statuses.append(st)
        more = "" if st == MET else f", {mine - best} more than {best_key} ({(mine - best) / best:.0%})"
        parts.append(f"nodes {mine} vs fewest other {best} ({best_key}) ({st}{more})")
        for threads, lat in sorted(q.get("latency", {}).items()):
            cl = lat.get("columns") if isinstance(lat, dict) else None
            if not cl or "pd2onnx" not in cl:
                continue
            others_l = {k: v for k, v in cl.items() if k != "pd2onnx"}
            if not others_l:
                continue
            bk = min(others_l, key=lambda k: others_l[k]["median_ms"])
            b, m = others_l[bk], cl["pd2onnx"]
            noise = max(m["q3_ms"] - m["q1_ms"], b["q3_ms"] - b["q1_ms"])
            diff = m["median_ms"] - b["median_ms"]
            st = MET if diff <= noise else MISSED
            statuses.append(st)
            more = "" if st == MET else f", {diff:.3f} ms ({diff / b['median_ms']:.1%}) slower, noise {noise:.3f} ms"
            parts.append(f"ORT {threads} thr {m['median_ms']:.3f} ms vs best other {b['median_ms']:.3f} ms ({bk}), "
                         f"noise ±{noise:.3f} ms ({st}{more})")
        lines.append(f"- {tag}: " + "; ".join(parts))
    return _overall(statuses), lines


def verdict_d(results: dict) -> tuple[str, list[str]]:
    lines, statuses = [], []
    for flag in ("--help", "--version"):
        s = results.get("startup", {}).get(flag)
        if not s:
            continue
        if not s.get("ok"):
            statuses.append(NA)
            lines.append(f"- `pd2onnx {flag}`: failed: {_one_line(s.get('error', ''), 200)}")
            continue
        st = MET if s["median"] < 0.3 else MISSED
        statuses.append(st)
        more = "" if st == MET else f", {s['median'] - 0.3:.3f} s over"
        lines.append(f"- `pd2onnx {flag}`: median {_s(s['median'])} (IQR {_s(s['q1'])}–{_s(s['q3'])}, "
                     f"{s['runs']} runs) (goal < 0.3 s: {st}{more})")
    base = results.get("startup", {}).get("python -S -c pass")
    if base:
        lines.append(f"- for scale: a bare `python -S -c pass` takes {_s(base['median'])}")
    return _overall(statuses), lines


def _overall(statuses: list[str]) -> str:
    if not statuses:
        return NA
    if MISSED in statuses:
        return MISSED
    if NA in statuses:
        return "met where measured (some not measured)"
    return MET


# ---------------------------------------------------------------------------------------- tables
def _conversion_table(results: dict, conv: dict) -> list[str]:
    out = ["| converter | result | wall median | wall IQR | peak RSS (median) | pd2onnx time ÷ this (paired) "
           "| pd2onnx RSS ÷ this |", "|---|---|---|---|---|---|---|"]
    pd = conv["columns"].get("pd2onnx", {})
    for key, col in conv["columns"].items():
        if not col.get("ok"):
            out.append(f"| {key} | failed: {_one_line(col.get('error', ''), 240)} | | | | | |")
            continue
        ok = True if key == "copy" else _correct(results, conv["model"], conv["fmt"], key)
        label = "weights copy (`cp`)" if key == "copy" else key
        res = {True: "ok, output correct", False: "**output WRONG** (not a valid time)",
               None: "converted (output not checked)"}[ok]
        if key == "copy":
            res = "physical limit"
        qcol = (_quality_for(results, conv["model"], conv["fmt"]) or {}).get("columns", {}).get(key, {})
        if ok and qcol.get("verified"):
            res = f"ok, output proven by `pd2onnx verify`: {qcol['verified']} ({_verified_note(qcol)})"
        ratio_t = ratio_r = "–"
        if key != "pd2onnx" and pd.get("ok") and ok is not False:
            ratio_t = _ratio(col.get("pd2onnx_over_this_wall_paired"))
            if key != "copy":
                ratio_r = _ratio(pd["rss_median_mb"] / col["rss_median_mb"])
        wall = _s(col.get("wall_median")) if ok is not False else f"~~{_s(col.get('wall_median'))}~~"
        out.append(f"| {label} | {res} | {wall} | {_s(col.get('wall_q1'))}–{_s(col.get('wall_q3'))} | "
                   f"{_mb(col.get('rss_median_mb'))} | {ratio_t} | {ratio_r} |")
    return out


def _quality_table(q: dict) -> list[str]:
    threads = sorted(q.get("latency", {}), key=int)
    head = "| column | output vs Paddle | nodes | file size |" + "".join(
        f" ORT {t} thread{'s' if t != '1' else ''}: median (IQR) |" for t in threads)
    out = [head, "|---|---|---|---|" + "---|" * len(threads)]
    for key, col in q.get("columns", {}).items():
        stats = col.get("stats") or {}
        if col.get("correct"):
            res = f"ok (max err {col.get('max_rel_err', 0):.1e} rel.)"
        else:
            res = f"**WRONG**: {_one_line(col.get('error', ''), 200)}"
        cells = []
        for t in threads:
            lat = q["latency"][t]
            c = (lat.get("columns") or {}).get(key) if isinstance(lat, dict) else None
            if c:
                cells.append(f"{c['median_ms']:.3f} ms ({c['q1_ms']:.3f}–{c['q3_ms']:.3f}, n={c['runs']})")
            else:
                cells.append("–" if col.get("correct") else "not timed (wrong)")
        out.append(f"| {key} | {res} | {stats.get('nodes', '–')} | {_bytes(stats.get('bytes'))} |"
                   + "".join(f" {c} |" for c in cells))
    for key, r in q.get("simplifiers", {}).items():
        if not r.get("ok"):
            out.append(f"| {key} | simplifier failed: {_one_line(r.get('error', ''), 240)} | | |" + " |" * len(threads))
    return out


def _ops_table(q: dict) -> list[str]:
    cols = {k: v["stats"]["ops"] for k, v in q.get("columns", {}).items() if v.get("stats")}
    if not cols:
        return []
    ops = sorted({op for hist in cols.values() for op in hist})
    out = ["| op | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for op in ops:
        out.append(f"| {op} | " + " | ".join(str(h.get(op, "")) for h in cols.values()) + " |")
    return out


def render(results: dict) -> str:
    m = results.get("machine", {})
    L: list[str] = []
    L.append(f"# pd2onnx benchmark — {results.get('started', '?')} on {m.get('hostname', '?')}")
    L.append("")
    L.append(f"Command: `{results.get('command', '')}` ({results.get('mode')} run"
             + (f", {results['elapsed_seconds'] / 60:.1f} min" if results.get("elapsed_seconds") else "")
             + ("" if results.get("finished") else ", **unfinished: partial figures**") + ").")
    la, lb = m.get("load_average_start"), m.get("load_average_end")
    L.append(f"Load average (1/5/15 min) at start {la}" + (f", at end {lb}" if lb else "")
             + f" on {m.get('cores')} cores. A load near or above the core count means other processes "
             "competed for the CPU and the timings are noisy; compare ratios from one run rather than "
             "absolute times across runs.")
    L.append("")
    L.append("## Verdicts")
    L.append("")
    for title, fn in (("(a) models ≤ 100 MiB of weights: time ≤ 2x p2o, ≥ 5x faster than Paddle2ONNX 2.1.0, "
                       "peak RSS ≤ half of Paddle2ONNX's", verdict_a),
                      ("(b) models ≥ 1 GB: time ≤ 1.5x a copy of the weights, peak RSS ≤ 1.2x weights + 300 MiB",
                       verdict_b),
                      ("(c) output graphs: nodes ≤ every other correct column; ORT latency ≤ best other column "
                       "+ noise (noise = the larger interquartile range of the two)", verdict_c),
                      ("(d) start-up: `pd2onnx --help` and `--version` under 0.3 s", verdict_d)):
        status, lines = fn(results)
        L.append(f"### {title}: {status}")
        L.append("")
        L.extend(lines or ["- nothing measured for this goal in this run"])
        L.append("")
    L.append("## Machine")
    L.append("")
    L.append(f"- CPU: {m.get('cpu_model')}, {m.get('cores')} logical cores "
             f"({m.get('affinity_cores')} usable), {m.get('memory_gib')} GiB RAM")
    L.append(f"- OS: {m.get('os')}; Python {m.get('python')}")
    for k, v in (m.get("versions") or {}).items():
        L.append(f"- {k}: {v}")
    L.append(f"- peak RSS measured with {results.get('rss_method')}; wall time = the whole command, start-up "
             f"included; all converters target opset {results.get('settings', {}).get('opset')}")
    L.append("")
    L.append("### Anchors (each in its own venv under bench/work/venvs)")
    L.append("")
    L.append("| tool | status | installed | pip request | notes |")
    L.append("|---|---|---|---|---|")
    for k, a in results.get("anchors", {}).items():
        st = "ok" if a.get("ok") else f"**unavailable**: {_one_line(a.get('error', ''), 400)}"
        L.append(f"| {k} | {st} | {a.get('version', '')} | `{' '.join(a.get('pip', []))}` | {a.get('note', '')} |")
    L.append("")
    L.append("## Models (random weights, built locally)")
    L.append("")
    L.append("| model | format | weights | Paddle output | notes |")
    L.append("|---|---|---|---|---|")
    for key, b in results.get("models", {}).items():
        name, fmt = key.split("/")
        ref = b.get("ref") or {}
        out = f"shape {ref.get('output_shapes')}, std {[round(s, 3) for s in ref.get('std', [])]}" if ref else "–"
        note = b.get("description", "") if b.get("ok") else f"**failed**: {_one_line(b.get('error', ''), 300)}"
        L.append(f"| {name} | {fmt} | {_bytes(b.get('params_bytes'))} | {out} | {note} |")
    L.append("")
    L.append("## Conversion time and memory")
    L.append("")
    L.append("Whole commands, converters alternating round by round (A B C copy, A B C copy, …) after one "
             "untimed warm-up each; medians over the rounds. 'pd2onnx time ÷ this' is the median of the "
             "per-round ratios (below 1 = pd2onnx faster).")
    for conv in results.get("conversion", []):
        L.append("")
        L.append(f"### {conv['model']} [{conv['fmt']}] — {_bytes(conv['params_bytes'])} of weights, "
                 f"{conv['runs']} rounds")
        L.append("")
        L.extend(_conversion_table(results, conv))
    L.append("")
    L.append("## Graph quality")
    L.append("")
    L.append("Every output is run by ONNX Runtime on the model's random input and compared with Paddle's "
             "own inference on the saved files (max |diff| ≤ 1e-3 × max |Paddle|); wrong outputs are "
             "reported, never timed. A pd2onnx output beyond that counts as correct only when "
             "`pd2onnx verify --locate --replay` proves it (every op replays within tolerance on Paddle's "
             "own inputs: Paddle's float32 rounding grown by the network). Latency: batch 1, default ORT graph optimizations, sessions run "
             "round-robin so background load hits every column alike; median and interquartile range.")
    for q in results.get("quality", []):
        L.append("")
        L.append(f"### {q['model']} [{q['fmt']}]")
        L.append("")
        if q.get("note"):
            L.append(q["note"])
            L.append("")
        if q.get("worker_error"):
            L.append(f"Quality worker error: {_one_line(q['worker_error'], 500)}")
            L.append("")
        L.extend(_quality_table(q))
        ops = _ops_table(q)
        if ops:
            L.append("")
            L.append("<details><summary>op histogram</summary>")
            L.append("")
            L.extend(ops)
            L.append("")
            L.append("</details>")
    L.append("")
    errors = []
    for conv in results.get("conversion", []):
        for key, col in conv["columns"].items():
            if not col.get("ok") and col.get("error"):
                errors.append((f"{conv['model']} [{conv['fmt']}] {key}", col["error"]))
    if errors:
        L.append("## Full error messages")
        L.append("")
        for tag, err in errors:
            L.append(f"**{tag}**")
            L.append("")
            L.append("```")
            L.append(err.strip()[:3000])
            L.append("```")
            L.append("")
    return "\n".join(L) + "\n"
