"""Output correctness and graph quality of every converter's output, raw and simplified."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchlib import measure
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
    job_path = out_root / "quality-job.json"
    res_path = out_root / "quality-result.json"
    out_root.mkdir(parents=True, exist_ok=True)
    job_path.write_text(json.dumps(job, indent=1))
    res_path.unlink(missing_ok=True)
    print(f"    checking {len(columns)} outputs against Paddle" + (", timing ORT" if latency else ""), flush=True)
    proc = subprocess.run([sys.executable, str(WORKER), str(job_path), str(res_path)], capture_output=True,
                          text=True, timeout=7200)
    log.write(proc.stdout + proc.stderr)
    result = json.loads(res_path.read_text()) if res_path.exists() else {"columns": {}, "latency": {}}
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-6:])
        result["worker_error"] = f"quality worker exited {proc.returncode}: {tail}"
    for col in columns:  # a column the worker never reached (crash) is unknown, not correct
        result["columns"].setdefault(col["key"], {"correct": False, "error": "not checked (worker crashed)"})
    return {"model": built.name, "fmt": built.fmt, "simplifiers": simplified, **result}
