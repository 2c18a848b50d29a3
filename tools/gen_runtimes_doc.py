"""Regenerate docs/runtimes.md from pd2onnx.convert.runtime_notes and a record of the converted
test cases:

    rm -f /tmp/rt.jsonl
    PD2ONNX_RUNTIME_RECORD=/tmp/rt.jsonl python -m pytest -n 2 tests/ops tests/models
    python tools/gen_runtimes_doc.py /tmp/rt.jsonl

The record (one line per op case and model test, written by tests/harness/check.py) holds the
ONNX operators, Resize modes and element types of each default conversion and OpenVINO's
outcome on it; the TensorRT section checks those against TensorRT's documented support.
"""

from __future__ import annotations

import collections
import json
import os
import sys

from pd2onnx.convert import runtime_notes as notes
from pd2onnx.convert.ort_kernels import ORT_VERSION

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEQUENCE_OPS = {"SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert",
                "SequenceLength", "SequenceMap", "SplitToSequence", "ConcatFromSequence", "(sequence value)"}


# Where a mapper's first form was computed differently by OpenVINO and another form is exact
# in both runtimes (hand-written: what the code does and why).
FORMS = [
    "- Nearest interpolation: Resize where it picks Paddle's source index at every position "
    "(ratios that are powers of two; exactly written scales and float32 out/in ratios checked at "
    "conversion time), else a Gather of Paddle's indices. For sizes known only at run time the "
    "ratio float32(in) / float32(out) is built from integer long division: OpenVINO divides floats "
    "as a * (1 / b) (80 / 200 gives 0.39999998), which moved whole rows (max diff 7.2 on a "
    "tensor resized to another's size at ratio 2.5). Its integer Div, Mod and comparisons go "
    "through float32 and are exact below 2^24 only, so the division keeps every integer below "
    "that (sizes below 32768). Linear interpolation: Resize only for power-of-two ratios (and, "
    "for sizes, short binary fractions such as 2.5 checked at every position), else "
    "Gathers weighted by Paddle's float32 weights; cubic: always the Gathers (ONNX Runtime's cubic "
    "Resize is about 10x slower) (docs/interpolation.md); where the "
    "graph computes coordinates, a Max between the product and the half-pixel shift keeps OpenVINO "
    "from fusing them into one multiply-add, and no constant is added before a multiplication "
    "(OpenVINO distributes (x + a) * b into x * b + a * b).",
    "- Sorting: ONNX TopK puts the lower index first among equal values and ONNX Runtime does; "
    "OpenVINO's TopK does not. Detection post-processing, whose sort keys repeat by construction "
    "(class, image, level), sorts by keys that cannot tie (each key's dense rank times n plus its "
    "position) and picks the top k by the k-th value and a count of the ties (`ops/_sort_util.py`); "
    "multiclass_nms3 applies keep_top_k before its score sort, so the keys stay within int32.",
    "- Comparisons: pd2onnx writes Greater(a, b) as Less(b, a) and GreaterOrEqual(a, b) as "
    "LessOrEqual(b, a). OpenVINO 2026.4's AVX-512 (and SSE4.1) kernels compute Greater as 'not "
    "less-or-equal', true where either side is NaN (its AVX2 kernels and its Less are right), so "
    "`x > y` with a NaN differed from Paddle on AVX-512 CPUs only.",
    "- No -1 in a Reshape beside a run-time size that may be 0 (NonMaxSuppression's inputs); no "
    "Gather of an empty index list (OpenVINO reads it as a scalar); rfft's batch dim dropped by a "
    "Reshape to the result's shape (OpenVINO's DFT of a real [..., n, 1] signal keeps the 1); "
    "take_along_axis cuts a larger arr with Gather, not Slice; mode and strided_slice avoid "
    "int64 extremes and sums that overflow int32; unsqueeze with run-time axes of known count "
    "is a Reshape (its rank known).",
]


def _cases(names: list[str], limit: int = 6) -> str:
    names = sorted(names)
    shown = ", ".join(f"`{n}`" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _openvino_section(records: list[dict], unjudged: list[dict] | None = None) -> list[str]:
    lines = [
        "## OpenVINO",
        "",
        f"Tested: OpenVINO {notes.OPENVINO_VERSION} (PyPI `openvino`), CPU plugin, "
        '`{"INFERENCE_PRECISION_HINT": "f32"}` (without it the CPU plugin may compute in bf16 or f16).',
        "",
        f"Every op case and model test that ONNX Runtime runs is also run in OpenVINO, on the model a "
        f"default `pd2onnx convert` writes (opset {notes.OPENVINO_OPSET}, optimized; a case that needs "
        "a newer opset at the lowest one it converts at), and compared with Paddle with the same "
        "tolerances (`tests/harness/check.py`). A case OpenVINO cannot run or computes differently "
        "is listed in `pd2onnx/convert/runtime_notes.py` under the limitation that stops it; the "
        "test fails on an unlisted failure, on a listed case that passes, and on one that fails "
        "otherwise. `tests/test_openvino_limits.py` shows each limitation on the smallest ONNX "
        "model (ONNX Runtime as the spec says, OpenVINO otherwise).",
        "",
        "OpenVINO's CPU plugin picks its kernels by the CPU's instruction set, and their NaN handling "
        "and last bits differ between classes. The tests run every OpenVINO check on the machine's own "
        "class and on each lower one, capped with oneDNN's `ONEDNN_MAX_CPU_ISA` (each class in a child "
        "process of its own: `tests/harness/openvino_run.py`); a limitation that shows on some classes "
        "only names them, and the check fails where a case differs on a class not named. Classes: "
        + ", ".join(f"`{c}` (`ONEDNN_MAX_CPU_ISA={v}`)" for c, v in notes.CPU_CLASSES.items())
        + ". ONNX Runtime's CPU kernels (MLAS) have no such cap (they follow the CPU's flags; other "
        "choices are made when ONNX Runtime is built), so its checks run on the machine's own class.",
        "",
    ]
    if records:
        ok = sum(r["openvino"] == "ok" for r in records)
        lines += [f"Recorded run: {ok} of {len(records)} converted op and model cases run in OpenVINO and "
                  "equal Paddle; of the toolkit model tests, PaddleDetection's PP-YOLOE, PicoDet, YOLOv3 and "
                  "SSD with NMS, PaddleClas Swin, PaddleSeg PP-LiteSeg, PaddleNLP LLaMA and PaddleX 3.7's "
                  "PP-OCRv6 detectors and recognizers, PP-LCNet orientation classifiers, PP-DocLayout-L, "
                  "PP-DocLayout_plus-L and PP-FormulaNet_plus-L do (PP-DocLayoutV3 is verified in OpenVINO: "
                  "`amplified`); "
                  "the two-stage "
                  "detectors, RetinaNet and PP-YOLO with matrix_nms are listed below.", ""]
    if unjudged:
        by_cpu: dict[str, list[str]] = collections.defaultdict(list)
        for r in unjudged:
            by_cpu[r["cap_artifact"]].append(r["case"])
        lines += ["Not judged under a cap (the cap's own effect, `runtime_notes.CAP_ARTIFACT`: some of "
                  "OpenVINO's own kernels look at the real CPU, so under the cap they crash or ask for "
                  "AVX-512 encodings, which no CPU of that class does): "
                  + "; ".join(f"{cpu}: {len(set(cases))} cases ({_cases(sorted(set(cases)), 8)})"
                              for cpu, cases in sorted(by_cpu.items())) + ".", ""]
    lines += [notes.OPENVINO_OPSET_RANGE, "",
              "The dtype matrix (`tests/dtypes`) runs in ONNX Runtime only: OpenVINO's CPU plugin computes "
              "int64 and float64 in 32 bits (see below), which the matrix's int64/float64 columns would "
              "mostly record.", "",
              "### Forms chosen so that both runtimes compute alike", "", *FORMS, ""]
    own = [lim for lim in notes.OPENVINO_LIMITS if not lim.pending]
    pending = [lim for lim in notes.OPENVINO_LIMITS if lim.pending]
    lines += ["### OpenVINO's limitations", "", "| limitation | what OpenVINO does | cases it stops |",
              "|---|---|---|"]
    for lim in own:
        on = f" on {', '.join(lim.cpus)} kernels" if lim.cpus else ""
        lines.append(f"| `{lim.key}` ({lim.kind}{on}) | {lim.why} | {len(lim.cases)}: {_cases(list(lim.cases))} |")
    if pending:
        lines += ["", "### Not OpenVINO's: waiting for a change of ours", "",
                  "| failure | why | cases | removed by |", "|---|---|---|---|"]
        for lim in pending:
            lines.append(f"| `{lim.key}` ({lim.kind}) | {lim.why} | {len(lim.cases)}: {_cases(list(lim.cases))} "
                         f"| {lim.pending} |")
    return lines + [""]


def _tensorrt_section(records: list[dict]) -> list[str]:
    lo, hi = notes.TENSORRT_OPSETS
    lines = [
        "## TensorRT",
        "",
        f"Not run here (no GPU). From its documented ONNX support ({notes.TENSORRT_DOC}): opsets {lo} "
        f"to {hi}; pd2onnx's default opset {notes.OPENVINO_OPSET} is inside. Below, each construct "
        "TensorRT lacks and which converted test cases still use it (from the record of the default "
        "conversions).",
        "",
    ]
    uses: dict[str, list[str]] = collections.defaultdict(list)
    for r in records:
        for op in r["ops"]:
            uses[op].append(r["case"])
        for t in r["types"]:
            uses[f"type:{t}"].append(r["case"])
    total = len(records)

    def used(key: str) -> str:
        if not records:
            return "(no record)"
        cases = uses.get(key, [])
        return f"{len(cases)} of {total}: {_cases(cases, 4)}" if cases else "none"

    seq = sorted({c for op in SEQUENCE_OPS for c in uses.get(op, [])})
    lines += ["| construct | TensorRT | converted cases using it |", "|---|---|---|",
              f"| ONNX sequences ({', '.join(sorted(SEQUENCE_OPS - {'(sequence value)'}))}) | not supported | "
              f"{(f'{len(seq)} of {total}: ' + _cases(seq, 4)) if seq else ('none' if records else '(no record)')} |"]
    for op in notes.TENSORRT_NO_OPS:
        if op not in SEQUENCE_OPS and (uses.get(op) or not records):
            lines.append(f"| `{op}` | not supported | {used(op)} |")
    lines.append("| `Resize` mode cubic | not supported (nearest, linear only) | " + used("Resize:cubic") + " |")
    for t, what in notes.TENSORRT_TYPES.items():
        if uses.get(f"type:{t}") or not records:
            lines.append(f"| element type {t} | {what} | {used('type:' + t)} |")
    lines += ["", "Other documented restrictions of operators pd2onnx emits (not checkable from the graph's "
              "structure alone):", "", "| operator | restriction | converted cases using the operator |",
              "|---|---|---|"]
    for op, what in notes.TENSORRT_RESTRICTIONS.items():
        if uses.get(op) or not records:
            lines.append(f"| `{op}` | {what} | {used(op)} |")
    return lines + [""]


def render(records: list[dict], unjudged: list[dict] | None = None) -> str:
    lines = [
        "# Where the output runs",
        "",
        "<!-- generated by tools/gen_runtimes_doc.py from pd2onnx/convert/runtime_notes.py; do not edit -->",
        "",
        "pd2onnx writes standard ONNX. The tests run every converted case in ONNX Runtime at the lowest "
        "opset it converts at, at 17 and at the newest opset ONNX Runtime runs, and in OpenVINO at the "
        "default opset; TensorRT is checked against its documentation. "
        "[testing.md](testing.md) says how the cases are built.",
        "",
        "## ONNX Runtime",
        "",
        f"Tested: onnxruntime {ORT_VERSION} (CPU execution provider; `tests/test_ort_kernels.py` fails "
        "when the installed one differs), every opset from the lowest a case converts at to the newest "
        "it runs. Every case must equal Paddle there: no exceptions are listed.",
        "",
    ]
    lines += _openvino_section(records, unjudged)
    lines += _tensorrt_section(records)
    return "\n".join(lines)


def main() -> None:
    records: list[dict] = []
    unjudged: list[dict] = []  # outcomes under a cap that the cap itself explains
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            latest = {}
            for line in f:
                r = json.loads(line)
                if "cap_artifact" in r:
                    unjudged.append(r)
                else:
                    latest[r["case"]] = r
            records = list(latest.values())
    path = os.path.join(ROOT, "docs", "runtimes.md")
    with open(path, "w") as f:
        f.write(render(records, unjudged))
    print(f"wrote {os.path.normpath(path)} ({len(records)} recorded cases)")


if __name__ == "__main__":
    main()
