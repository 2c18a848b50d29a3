#!/usr/bin/env python3
"""Tensor arrays in a decoding loop: ONNX Runtime and OpenVINO on a table-recognizer-style model.

    python bench/array_loop.py                          # this checkout's pd2onnx
    python bench/array_loop.py --baseline /path/to/src  # and another pd2onnx source tree, side by side

The model is the table decoder of ``tests/ops/cases_control_flow.py`` (``table_decoder``: attention
over a feature sequence, a GRU cell, each step appending its structure probabilities and box to
two lists and reading the previous step's structure back), at a larger size: 96 features and
hidden units, 50 structure tokens, 8 box values, a 40-long feature sequence, ``--steps`` decoding
steps. It is built once per format with random weights (PIR by this interpreter's Paddle 3.3,
legacy by Paddle 2.6 from ``tools/setup_paddle26.sh``), cached in ``bench/work/array_loop/``
with Paddle's inference-predictor outputs.

Each pd2onnx (this checkout, and ``--baseline``) converts each format with its CLI at the
default opset. For every result: whether the graph holds ONNX sequence ops, the largest
difference from Paddle's outputs in ONNX Runtime and in OpenVINO (CPU, f32 precision hint),
and the latency of both (one thread; warm-up, then all sessions in turn until the budget is
spent; median, interquartile range and minimum: on a loaded machine the minimum is the
steadiest figure). The report goes to stdout and to
``bench/work/results/array_loop-<date>.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
WORK = BENCH / "work"
SIZES = {"feat": 96, "hidden": 96, "vocab": 50, "loc": 8}
LENGTH = 40  # the feature sequence

BUILD = r"""
import importlib.util, json, os, sys
import numpy as np
import paddle
tests, out, steps, sizes, length = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]), int(sys.argv[5])
sys.path.insert(0, tests)
spec = importlib.util.spec_from_file_location("cases_control_flow", os.path.join(tests, "ops", "cases_control_flow.py"))
cases = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cases)
paddle.seed(0)
net = cases.table_decoder(paddle, **sizes)
net.eval()
fea = np.random.default_rng(0).standard_normal((1, length, sizes["feat"])).astype("float32")
feeds = [fea, np.array(steps, "int64")]
specs = [paddle.static.InputSpec([None, None, sizes["feat"]], "float32", "fea"),
         paddle.static.InputSpec([], "int64", "steps")]
paddle.jit.save(paddle.jit.to_static(net, full_graph=True), os.path.join(out, "model"), input_spec=specs)
from harness.worker import _predict  # Paddle's inference predictor, as the tests run it
model = next(f for f in os.listdir(out) if f.endswith((".json", ".pdmodel")))
outs = _predict((os.path.join(out, model), os.path.join(out, "model.pdiparams")), feeds)
np.savez(os.path.join(out, "ref.npz"), **{f"in{i}": a for i, a in enumerate(feeds)}, **{f"out{i}": a for i, a in enumerate(outs)})
"""


def paddle_python(fmt: str) -> str:
    if fmt == "pir":
        return sys.executable
    return os.environ.get("PD2ONNX_PADDLE26", os.path.expanduser("~/.cache/pd2onnx/paddle26/bin/python"))


def build(fmt: str, steps: int) -> Path:
    """The saved model directory (built once per format, steps and sizes)."""
    out = WORK / "array_loop" / f"{fmt}-{steps}-{SIZES['hidden']}"
    if (out / "ref.npz").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    import json

    subprocess.run([paddle_python(fmt), "-c", BUILD, str(REPO / "tests"), str(out), str(steps), json.dumps(SIZES),
                    str(LENGTH)], check=True, capture_output=True, text=True)
    return out


def convert(src: str, model_dir: Path, out: Path) -> tuple[float, str]:
    """Convert with the pd2onnx CLI of source tree ``src``; (seconds, its warnings)."""
    model = next(p for p in model_dir.iterdir() if p.suffix in (".json", ".pdmodel"))
    env = dict(os.environ, PYTHONPATH=src)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pd2onnx", "convert", str(model), "-o", str(out)], env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode:
        raise RuntimeError(proc.stderr.strip())
    return seconds, proc.stderr.strip()


class Runner:
    """One converted model in one runtime: a callable run on the inputs, or why it cannot."""

    def __init__(self, label: str, runtime: str, path: Path, inputs: list[np.ndarray]):
        self.label, self.runtime, self.error, self.times, self.diff = label, runtime, "", [], 0.0
        self.outputs: list[np.ndarray] = []
        try:
            if runtime == "ONNX Runtime":
                import onnxruntime as ort

                opts = ort.SessionOptions()
                opts.intra_op_num_threads = 1
                sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
                feeds = {i.name: a for i, a in zip(sess.get_inputs(), inputs)}
                self.run = lambda: sess.run(None, feeds)
            else:
                import openvino as ov

                compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                                     "INFERENCE_NUM_THREADS": 1})
                request = compiled.create_infer_request()
                feeds = dict(enumerate(inputs))
                self.run = lambda: [request.infer(feeds)[o] for o in compiled.outputs]
            self.outputs = [np.asarray(o) for o in self.run()]
        except Exception as exc:  # noqa: BLE001 - reported in the table
            self.error = " ".join(str(exc).split())[:160]

    def timed(self) -> None:
        t = time.perf_counter()
        self.run()
        self.times.append(time.perf_counter() - t)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100, help="decoding steps (default 100)")
    ap.add_argument("--formats", default="pir,legacy")
    ap.add_argument("--baseline", help="another pd2onnx source tree (its src/ directory) to compare with")
    ap.add_argument("--budget", type=float, default=6.0, help="seconds of timed runs per runtime (default 6)")
    args = ap.parse_args()
    trees = [("this checkout", str(REPO / "src"))] + ([("baseline", args.baseline)] if args.baseline else [])
    rows, runners = [], []
    for fmt in args.formats.split(","):
        model_dir = build(fmt, args.steps)
        ref = np.load(model_dir / "ref.npz")
        inputs = [ref[k] for k in sorted(ref.files) if k.startswith("in")]
        wants = [ref[k] for k in sorted(ref.files) if k.startswith("out")]
        for label, src in trees:
            out = WORK / "array_loop" / f"{fmt}-{args.steps}-{label.replace(' ', '_')}.onnx"
            try:
                seconds, warnings = convert(src, model_dir, out)
            except RuntimeError as exc:
                rows.append((fmt, label, f"conversion failed: {exc}", None, []))
                continue
            import onnx

            proto = onnx.load(str(out))
            ops = set()
            stack = [proto.graph]
            while stack:
                graph = stack.pop()
                for node in graph.node:
                    ops.add(node.op_type)
                    stack.extend(a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH)
            sequences = sorted(o for o in ops if "Sequence" in o)
            made = [Runner(f"{fmt} {label}", rt, out, inputs) for rt in ("ONNX Runtime", "OpenVINO")]
            for runner in made:
                if not runner.error:
                    diffs = [float(np.abs(g.astype(np.float64) - w).max()) for g, w in zip(runner.outputs, wants)]
                    runner.error = "" if max(diffs) <= 1e-4 else f"differs from Paddle by {max(diffs):.3g}"
                    runner.diff = max(diffs)
            runners += [r for r in made if not r.error]
            rows.append((fmt, label, f"opset {proto.opset_import[0].version}, {seconds:.2f} s", sequences, made))
    for r in runners:  # warm-up
        for _ in range(3):
            r.run()
    end = time.perf_counter() + args.budget * max(1, len(runners))
    k = 0
    while time.perf_counter() < end or min((len(r.times) for r in runners), default=99) < 15:
        for r in runners[k % len(runners):] + runners[:k % len(runners)]:
            r.timed()
        k += 1
        if not runners:
            break
    lines = [f"# Tensor arrays in a decoding loop ({dt.date.today()})", "",
             f"Table decoder, {args.steps} steps, sizes {SIZES}, feature length {LENGTH}; one thread; "
             f"load average {os.getloadavg()[0]:.1f}.", "",
             "| format | pd2onnx | conversion | sequence ops | runtime | max diff vs Paddle | median ms | IQR ms | min ms |",
             "|---|---|---|---|---|---|---|---|---|"]
    for fmt, label, conv, sequences, made in rows:
        seq = "n/a" if sequences is None else (", ".join(sequences) or "none")
        for r in made or [None]:
            if r is None:
                lines.append(f"| {fmt} | {label} | {conv} | {seq} | | | | | |")
            elif r.error:
                lines.append(f"| {fmt} | {label} | {conv} | {seq} | {r.runtime} | fails: {r.error} | | | |")
            else:
                ms = np.asarray(r.times) * 1e3
                q1, med, q3 = np.percentile(ms, [25, 50, 75])
                lines.append(f"| {fmt} | {label} | {conv} | {seq} | {r.runtime} | {r.diff:.2g} | {med:.2f} | "
                             f"{q3 - q1:.2f} | {ms.min():.2f} |")
    report = "\n".join(lines) + "\n"
    print(report)
    results = WORK / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / f"array_loop-{dt.date.today()}.md").write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
