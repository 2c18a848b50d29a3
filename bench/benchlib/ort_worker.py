"""Graph statistics, correctness against Paddle, and ONNX Runtime latency; run as a subprocess.

``python ort_worker.py JOB.json RESULT.json`` where JOB has ``inputs`` (npz), ``ref`` (npz),
``columns`` ([{"key", "path"}]), ``threads`` ([1, 2]), ``budget`` (seconds per column and
thread count), ``min_runs``, ``max_runs``, ``warmup``, ``latency`` (bool), ``rtol``.

Correctness: every output, in order, must have Paddle's shape and
``max|onnx - paddle| <= rtol * max(|paddle|)`` (plus 1e-6 absolute). Only correct columns
are timed. Latency runs are interleaved round-robin across columns (each round runs every
session once, in a rotating order) so that load from other processes hits all columns
alike; models too big to hold side by side are timed one after the other.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections import Counter

import numpy as np


def _graph_stats(path: str) -> dict:
    import onnx

    model = onnx.load(path, load_external_data=False)
    ops: Counter = Counter()

    def walk(graph):
        for node in graph.node:
            key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}:{node.op_type}"
            ops[key] += 1
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for g in attr.graphs:
                        walk(g)

    walk(model.graph)
    folder = os.path.dirname(os.path.abspath(path))
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
               if os.path.isfile(os.path.join(folder, f)))
    opsets = {imp.domain or "ai.onnx": imp.version for imp in model.opset_import}
    return {"nodes": sum(ops.values()), "ops": dict(sorted(ops.items())), "bytes": size,
            "initializers": len(model.graph.initializer), "opset": opsets.get("ai.onnx")}


def _session(path: str, threads: int):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _feeds(sess, inputs) -> dict:
    names = [i.name for i in sess.get_inputs()]
    keys = list(inputs.files)
    feeds = {}
    for pos, name in enumerate(names):
        if name in inputs.files:
            feeds[name] = inputs[name]
        elif pos < len(keys):
            feeds[name] = inputs[keys[pos]]
        else:
            raise ValueError(f"no data for ONNX input {name!r}")
    return feeds


def _check(path: str, inputs, ref, rtol: float) -> dict:
    try:
        sess = _session(path, 2)
        outs = sess.run(None, _feeds(sess, inputs))
    except Exception as exc:
        return {"correct": False, "error": f"ONNX Runtime cannot run it: {type(exc).__name__}: {str(exc)[:400]}"}
    want = [ref[f"out{i}"] for i in range(len(ref.files))]
    if len(outs) != len(want):
        return {"correct": False, "error": f"{len(outs)} outputs, Paddle has {len(want)}"}
    worst = 0.0
    for i, (got, exp) in enumerate(zip(outs, want)):
        got = np.asarray(got)
        if got.shape != exp.shape:
            if got.size == exp.size:
                got = got.reshape(exp.shape)  # a squeezed/unsqueezed equal result is not a bug
            else:
                return {"correct": False, "error": f"output {i}: shape {list(got.shape)}, Paddle {list(exp.shape)}"}
        if exp.dtype.kind in "iub":
            if not np.array_equal(got.astype(exp.dtype), exp):
                return {"correct": False, "error": f"output {i}: integer values differ"}
            continue
        scale = float(np.max(np.abs(exp))) if exp.size else 0.0
        diff = float(np.max(np.abs(got.astype(np.float64) - exp.astype(np.float64)))) if exp.size else 0.0
        if not np.isfinite(diff):
            return {"correct": False, "error": f"output {i}: non-finite values"}
        rel = diff / max(scale, 1e-6)
        worst = max(worst, rel)
        if diff > rtol * scale + 1e-6:
            return {"correct": False, "max_rel_err": rel,
                    "error": f"output {i}: max |diff| {diff:.3g} = {rel:.2%} of max |Paddle| ({scale:.3g})"}
    return {"correct": True, "max_rel_err": worst}


def _summary(times: list[float]) -> dict:
    times_ms = [t * 1000 for t in times]
    q = statistics.quantiles(times_ms, n=4, method="inclusive") if len(times_ms) > 1 else [times_ms[0]] * 3
    return {"median_ms": statistics.median(times_ms), "q1_ms": q[0], "q3_ms": q[2], "runs": len(times_ms),
            "min_ms": min(times_ms)}


def _latency(columns: list[dict], inputs, threads: int, job: dict) -> dict:
    total = sum(c["stats"]["bytes"] for c in columns)
    interleave = total < job.get("interleave_limit", 1_500_000_000)
    budget, lo, hi, warm = job["budget"], job["min_runs"], job["max_runs"], job["warmup"]
    results = {}

    def prepare(col):
        sess = _session(col["path"], threads)
        feeds = _feeds(sess, inputs)
        t0 = time.perf_counter()
        for _ in range(warm):
            sess.run(None, feeds)
        one = (time.perf_counter() - t0) / max(warm, 1)
        return sess, feeds, one

    if interleave:
        prepared = [prepare(c) for c in columns]
        slowest = max(p[2] for p in prepared)
        runs = int(min(hi, max(lo, budget / max(slowest, 1e-6))))
        times: list[list[float]] = [[] for _ in columns]
        n = len(columns)
        for r in range(runs):
            for k in range(n):
                i = (r + k) % n
                sess, feeds, _ = prepared[i]
                t0 = time.perf_counter()
                sess.run(None, feeds)
                times[i].append(time.perf_counter() - t0)
        for col, t in zip(columns, times):
            results[col["key"]] = _summary(t)
        del prepared
    else:
        for col in columns:
            sess, feeds, one = prepare(col)
            runs = int(min(hi, max(lo, budget / max(one, 1e-6))))
            t = []
            for _ in range(runs):
                t0 = time.perf_counter()
                sess.run(None, feeds)
                t.append(time.perf_counter() - t0)
            results[col["key"]] = _summary(t)
            del sess
    return {"interleaved": interleave, "columns": results}


def main(job_path: str, out_path: str) -> int:
    import onnxruntime as ort

    job = json.load(open(job_path))
    inputs = np.load(job["inputs"])
    ref = np.load(job["ref"])
    result = {"onnxruntime": ort.__version__, "columns": {}, "latency": {}}
    good = []
    for col in job["columns"]:
        entry: dict = {"path": col["path"]}
        try:
            entry["stats"] = _graph_stats(col["path"])
        except Exception as exc:
            entry.update(correct=False, error=f"not a loadable ONNX file: {type(exc).__name__}: {str(exc)[:300]}")
            result["columns"][col["key"]] = entry
            continue
        entry.update(_check(col["path"], inputs, ref, job.get("rtol", 1e-3)))
        verdict = job.get("verified", {}).get(col["key"])
        if not entry["correct"] and verdict and entry.get("max_rel_err") is not None:
            # out of tolerance, but verify's referee proved every op right (quality.verify_verdict)
            entry.update(correct=True, verified=verdict)
        result["columns"][col["key"]] = entry
        if entry["correct"]:
            good.append({"key": col["key"], "path": col["path"], "stats": entry["stats"]})
        # Save as we go: a crash in a later column (or in ORT) keeps what is known.
        json.dump(result, open(out_path, "w"), indent=1)
    if job.get("latency") and good:
        for threads in job["threads"]:
            try:
                result["latency"][str(threads)] = _latency(good, inputs, threads, job)
            except Exception as exc:
                result["latency"][str(threads)] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            json.dump(result, open(out_path, "w"), indent=1)
    json.dump(result, open(out_path, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
