"""Output correctness and graph quality of every converter's output, raw and simplified."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchlib import measure
from benchlib.converters import pd2onnx_exe
from benchlib.models import BuiltModel

WORKER = Path(__file__).resolve().parent / "ort_worker.py"


def simplify(tool: str, exe: str, src: str, dst: Path) -> measure.Run:
    dst.parent.mkdir(parents=True, exist_ok=True)
    for f in dst.parent.iterdir():
        f.unlink()
    cmd = [exe, src, str(dst)]
    r = measure.run_command(cmd, timeout=1200)
    if r.ok and not dst.exists():
        r.ok, r.error = False, "exited 0 but wrote no output file"
    return r


# verify's verdicts that prove a conversion right although its outputs are out of tolerance
VERIFIED = ("match", "amplified", "paddle-wrong")


def verify_verdict(built: BuiltModel, onnx_path: str, out_root: Path, log) -> str:
    """``pd2onnx verify --locate --replay`` of the converted model on the bench's own inputs: its
    verdict, or "error: ..." when it could not run."""
    report = out_root / "verify.json"
    report.unlink(missing_ok=True)
    cmd = [pd2onnx_exe(), "verify", built.model_file, "--params", built.params_file, "--onnx", onnx_path,
           "--inputs", str(Path(built.dir) / "inputs.npz"), "--locate", "--replay", "--json", str(report), "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    log.write(proc.stdout + proc.stderr)
    if not report.exists():
        return f"error: verify exited {proc.returncode}"
    return str(json.loads(report.read_text()).get("verdict"))


def _run_worker(job: dict, out_root: Path, log) -> dict:
    job_path = out_root / "quality-job.json"
    res_path = out_root / "quality-result.json"
    job_path.write_text(json.dumps(job, indent=1))
    res_path.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, str(WORKER), str(job_path), str(res_path)], capture_output=True,
                          text=True, timeout=7200)
    log.write(proc.stdout + proc.stderr)
    result = json.loads(res_path.read_text()) if res_path.exists() else {"columns": {}, "latency": {}}
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-6:])
        result["worker_error"] = f"quality worker exited {proc.returncode}: {tail}"
    return result


def run_quality(built: BuiltModel, conversion: dict, out_root: Path, simplifiers: dict[str, str], *,
                latency: bool, threads: list[int], budget: float, quick: bool, log) -> dict:
    columns = []
    simplified = {}
    for key, col in conversion["columns"].items():
        if key == "copy" or not col.get("ok") or not col.get("output"):
            continue
        columns.append({"key": key, "path": col["output"]})
        for tool, exe in simplifiers.items():
            skey = f"{key}+{tool}"
            dst = out_root / skey / "model.onnx"
            print(f"    {tool} on {key} ...", flush=True)
            r = simplify(tool, exe, col["output"], dst)
            simplified[skey] = r.to_json()
            if r.ok:
                columns.append({"key": skey, "path": str(dst)})
    job = {"inputs": str(Path(built.dir) / "inputs.npz"), "ref": str(Path(built.dir) / "ref.npz"),
           "columns": columns, "threads": threads, "budget": budget,
           "min_runs": 5 if quick else 15, "max_runs": 300, "warmup": 3 if quick else 5,
           "latency": latency, "rtol": 1e-3}
    out_root.mkdir(parents=True, exist_ok=True)
    print(f"    checking {len(columns)} outputs against Paddle" + (", timing ORT" if latency else ""), flush=True)
    result = _run_worker(job, out_root, log)
    pd = result["columns"].get("pd2onnx", {})
    if pd.get("max_rel_err") is not None and not pd.get("correct"):
        # Out of the bench's tolerance by a number (not a crash): let verify's referee say whether
        # the difference is Paddle's float32 rounding grown by the network (docs/verify.md).
        verdict = verify_verdict(built, conversion["columns"]["pd2onnx"]["output"], out_root, log)
        if verdict in VERIFIED:
            print(f"    pd2onnx output {pd['max_rel_err']:.2%} off; verify: {verdict}; checking again", flush=True)
            job["verified"] = {"pd2onnx": verdict}
            result = _run_worker(job, out_root, log)
    for col in columns:  # a column the worker never reached (crash) is unknown, not correct
        result["columns"].setdefault(col["key"], {"correct": False, "error": "not checked (worker crashed)"})
    return {"model": built.name, "fmt": built.fmt, "simplifiers": simplified, **result}
