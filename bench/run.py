#!/usr/bin/env python3
"""Reproduce every benchmark figure of pd2onnx with one command.

    python bench/run.py                 # everything; writes bench/results/<date>-<machine>.md
    python bench/run.py --quick         # small models, fewer runs (development)
    python bench/run.py --only resnet50 --converters pd2onnx,p2o

Stages: install the anchor tools into their own venvs (bench/work/venvs), build the model
set with random weights (bench/work/models, cached), time the conversions (whole commands,
alternating converters, plus a `cp` of the weights as the physical limit), check every
output against Paddle and measure graph quality (nodes, ops, size, ONNX Runtime latency,
also after onnxsim and onnxslim), then write the results with per-goal verdicts.
See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from benchlib import converters as conv  # noqa: E402
from benchlib import envs, machine, measure, models, report  # noqa: E402
from benchlib.quality import run_quality  # noqa: E402

WORK = envs.WORK


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small models only, fewer runs, shorter latency budget")
    p.add_argument("--only", help="comma-separated model names (" + ", ".join(models.BY_NAME) + ")")
    p.add_argument("--converters", help="comma-separated converters (" + ", ".join(conv.CONVERTERS)
                   + "); a prefix such as 'paddle2onnx' selects all its versions. pd2onnx is always kept")
    p.add_argument("--formats", default="pir,legacy", help="pir,legacy (default both)")
    p.add_argument("--runs", type=int, help="timed conversion runs per converter (default 5, 3 for >=1 GB "
                   "models, 3 with --quick)")
    p.add_argument("--latency-budget", type=float, help="seconds of ORT runs per column and thread count "
                   "(default 4, 1.5 with --quick)")
    p.add_argument("--threads", default="1,2", help="ORT intra-op thread counts (default 1,2)")
    p.add_argument("--no-quality", action="store_true", help="skip graph quality (correctness is still checked)")
    p.add_argument("--no-simplifiers", action="store_true", help="skip the onnxsim / onnxslim columns")
    p.add_argument("--skip-install", action="store_true", help="use the anchor venvs as they are")
    p.add_argument("--rebuild", action="store_true", help="rebuild the cached models")
    p.add_argument("--results-dir", help="where the results go (default bench/results for a full run, "
                   "bench/work/results for --quick or filtered runs)")
    p.add_argument("--machine", help="machine name in the results file name (default: hostname)")
    return p.parse_args(argv)


def select(args) -> tuple[list[models.ModelSpec], list[str], list[str]]:
    specs = list(models.CATALOGUE)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in models.BY_NAME]
        if unknown:
            raise SystemExit(f"unknown model(s) {unknown}; choose from {list(models.BY_NAME)}")
        specs = [models.BY_NAME[n] for n in names]
    elif args.quick:
        specs = [m for m in specs if m.quick]
    keys = list(conv.CONVERTERS)
    if args.converters:
        wanted = [c.strip() for c in args.converters.split(",") if c.strip()]
        picked = []
        for w in wanted:
            hits = [k for k in keys if k == w] or [k for k in keys if k.startswith(w)]
            if not hits:
                raise SystemExit(f"unknown converter {w!r}; choose from {keys}")
            picked += hits
        keys = ["pd2onnx"] + [k for k in keys if k in picked and k != "pd2onnx"]
    fmts = [f.strip() for f in args.formats.split(",") if f.strip()]
    for f in fmts:
        if f not in models.FORMATS:
            raise SystemExit(f"unknown format {f!r}; choose from {models.FORMATS}")
    return specs, keys, fmts


def startup_times(exe: str, runs: int) -> dict:
    out = {}
    for flag in ("--help", "--version"):
        measure.run_command([exe, flag])  # warm the page cache
        walls = []
        for _ in range(runs):
            r = measure.run_command([exe, flag])
            if not r.ok:
                out[flag] = {"ok": False, "error": r.error}
                break
            walls.append(r.wall)
        else:
            q1, q3 = measure.quartiles(walls)
            out[flag] = {"ok": True, "median": measure.median(walls), "q1": q1, "q3": q3, "runs": runs}
    # Context: the bare interpreter start-up that every Python CLI pays.
    walls = [measure.run_command([sys.executable, "-S", "-c", "pass"]).wall for _ in range(runs)]
    out["python -S -c pass"] = {"ok": True, "median": measure.median(walls), "runs": runs}
    return out


def clear_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)


def mem_available_mb() -> float:
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemAvailable"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("inf")


# Peak RSS per byte of weights, learned from the >=1 GB models as they run (smallest first), so
# that a converter which would take most of the shared machine's memory on a bigger model is
# skipped with a note instead of pushing other processes into the OOM killer.
RSS_PER_WEIGHT_BYTE: dict[str, float] = {}


def bench_conversion(built: models.BuiltModel, keys: list[str], exes: dict[str, str], runs: int,
                     out_root: Path, log) -> dict:
    """Time every converter on one model, A B C copy, A B C copy, ...; keep the last outputs."""
    fmt = built.fmt
    model_file, params_file = built.model_file, built.params_file
    columns = {}
    active = []
    for key in keys:
        c = conv.CONVERTERS[key]
        if fmt not in c.formats:
            continue
        if key not in exes:
            columns[key] = {"ok": False, "error": "not installed (see the anchors table)", "runs": []}
            continue
        per_byte = RSS_PER_WEIGHT_BYTE.get(key)
        if per_byte and built.params_bytes >= 500_000_000:
            predicted = per_byte * built.params_bytes / 2**20
            avail = mem_available_mb()
            if predicted > 0.8 * avail:
                columns[key] = {"ok": False, "runs": [], "skipped": True,
                                "error": f"skipped: a smaller model predicts a peak RSS of {predicted / 1024:.1f} GiB, "
                                         f"over 80% of the {avail / 1024:.1f} GiB available on this shared machine"}
                continue
        active.append(key)
        columns[key] = {"ok": True, "error": "", "runs": []}
    # The physical limit: read the weights and write as many bytes.
    copy_dir = WORK / "tmp"
    copy_dir.mkdir(parents=True, exist_ok=True)
    copy_target = copy_dir / f"copy-{built.name}-{fmt}.bin"
    columns["copy"] = {"ok": True, "error": "", "runs": []}

    def out_path(key: str) -> Path:
        return out_root / key / "model.onnx"

    def one(key: str):
        if key == "copy":
            r = measure.run_command(["cp", params_file, str(copy_target)])
            copy_target.unlink(missing_ok=True)
            return r
        clear_dir(out_root / key)
        cmd = conv.CONVERTERS[key].command(model_file, params_file, str(out_path(key)), exes[key])
        r = measure.run_command(cmd, timeout=1800)
        if r.ok and not out_path(key).exists():
            r.ok, r.error = False, "exited 0 but wrote no output file"
        return r

    # Warm-up: page cache for the files, imports for the Python tools; a failure here is final.
    measure.run_command(["cat", model_file, params_file], timeout=600)
    for key in active:
        log.write(f"  warm-up {key}\n")
        r = one(key)
        if not r.ok:
            columns[key].update(ok=False, error=r.error, runs=[r.to_json()])
    order = [k for k in active if columns[k]["ok"]] + ["copy"]
    for i in range(runs):
        for key in order:
            r = one(key)
            columns[key]["runs"].append(r.to_json())
            if not r.ok:
                columns[key].update(ok=False, error=r.error)
        order = [k for k in order if columns[k]["ok"]]
        print(f"    round {i + 1}/{runs}: " + ", ".join(
            f"{k} {columns[k]['runs'][-1]['wall']:.2f}s" for k in order), flush=True)
    for key, col in columns.items():
        good = [r for r in col["runs"] if r["ok"]]
        if col["ok"] and good:
            walls = [r["wall"] for r in good]
            rss = [r["rss_mb"] for r in good]
            q1, q3 = measure.quartiles(walls)
            col.update(wall_median=measure.median(walls), wall_q1=q1, wall_q3=q3,
                       rss_median_mb=measure.median(rss), rss_max_mb=max(rss))
            if key not in ("copy",):
                col["output"] = str(out_path(key))
                if built.params_bytes >= 500_000_000:
                    RSS_PER_WEIGHT_BYTE[key] = max(rss) * 2**20 / built.params_bytes
    # Paired ratios: per round, pd2onnx's time over the other's, then the median.
    pd = columns.get("pd2onnx", {})
    for key, col in columns.items():
        if key == "pd2onnx" or not (col.get("ok") and pd.get("ok")):
            continue
        pairs = [a["wall"] / b["wall"] for a, b in zip(pd["runs"][-runs:], col["runs"][-runs:])
                 if a["ok"] and b["ok"] and b["wall"] > 0]
        col["pd2onnx_over_this_wall_paired"] = measure.median(pairs) if pairs else None
    return {"model": built.name, "fmt": fmt, "params_bytes": built.params_bytes, "runs": runs,
            "columns": columns}


def results_paths(args, full: bool) -> tuple[Path, Path]:
    if args.results_dir:
        rdir = Path(args.results_dir)
    else:
        rdir = BENCH / "results" if full else WORK / "results"
    rdir.mkdir(parents=True, exist_ok=True)
    name = f"{dt.date.today().isoformat()}-{args.machine or machine.facts_hostname()}"
    if not full:
        name += "-quick" if args.quick else "-partial"
    base = rdir / name
    n = 2
    while base.with_suffix(".md").exists() or base.with_suffix(".json").exists():
        base = rdir / f"{name}-{n}"
        n += 1
    return base.with_suffix(".md"), base.with_suffix(".json")


def main(argv=None) -> int:
    args = parse_args(argv)
    specs, keys, fmts = select(args)
    full = not (args.quick or args.only or args.converters or args.formats != "pir,legacy")
    md_path, json_path = results_paths(args, full)
    started = time.time()
    WORK.mkdir(parents=True, exist_ok=True)
    log_dir = WORK / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log = open(log_dir / "run.log", "a", buffering=1)
    log.write(f"\n==== {dt.datetime.now().isoformat()} {' '.join(sys.argv)}\n")
    threads = [int(t) for t in args.threads.split(",") if t.strip()]
    results: dict = {
        "started": dt.datetime.now().isoformat(timespec="seconds"),
        "command": "python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "mode": "full" if full else ("quick" if args.quick else "partial"),
        "rss_method": measure.rss_method(),
        "models": {}, "conversion": [], "quality": [], "anchors": {}, "startup": {},
        "settings": {"opset": conv.OPSET, "threads": threads},
    }

    def save() -> None:
        results["elapsed_seconds"] = round(time.time() - started, 1)
        json_path.write_text(json.dumps(results, indent=1, default=str))
        md_path.write_text(report.render(results))

    print(f"results: {md_path}", flush=True)
    results["machine"] = machine.facts(REPO)
    save()

    # 1. Anchors install in the background while the models build.
    anchor_keys = sorted({conv.CONVERTERS[k].anchor for k in keys if conv.CONVERTERS[k].anchor})
    if not args.no_simplifiers:
        anchor_keys += ["onnxsim", "onnxslim"]
    anchor_status: dict = {}

    def install() -> None:
        anchor_status.update(envs.ensure_all(anchor_keys, log_dir, install=not args.skip_install))

    installer = threading.Thread(target=install)
    installer.start()
    print("installing anchors in the background: " + ", ".join(anchor_keys), flush=True)

    # 2. Models.
    if "legacy" in fmts:
        ok, msg = envs.ensure_paddle26(REPO)
        if not ok:
            print(f"Paddle 2.6 venv unavailable: {msg}", flush=True)
    built: list[models.BuiltModel] = []
    for spec in specs:
        pir_rebuilt = False
        for fmt in models.FORMATS:
            if fmt not in fmts and not (fmt == "pir" and "legacy" in fmts):
                continue  # legacy reuses the PIR build's weights
            if fmt not in spec.formats:
                continue  # the PaddleX builds exist as PIR only
            t0 = time.time()
            b = models.build(spec.name, fmt, log, rebuild=args.rebuild or (fmt == "legacy" and pir_rebuilt))
            pir_rebuilt = pir_rebuilt or (fmt == "pir" and b.rebuilt)
            state = "built" if b.rebuilt else "cached"
            print(f"model {spec.name} [{fmt}]: {state if b.ok else 'FAILED: ' + b.error} "
                  f"({time.time() - t0:.1f}s)", flush=True)
            results["models"][f"{spec.name}/{fmt}"] = {**b.to_json(), "description": spec.description,
                                                       "big": spec.big}
            if fmt in fmts:
                built.append(b)
    save()

    installer.join()
    results["anchors"] = {k: v.to_json() for k, v in anchor_status.items()}
    for k, st in anchor_status.items():
        print(f"anchor {k}: {'ok ' + st.version if st.ok else 'UNAVAILABLE: ' + st.error}", flush=True)
    save()
    exes = {"pd2onnx": conv.pd2onnx_exe()}
    for k in keys:
        a = conv.CONVERTERS[k].anchor
        if a and anchor_status.get(a) and anchor_status[a].ok:
            exes[k] = anchor_status[a].exe
    simplifiers = {k: anchor_status[k].exe for k in ("onnxsim", "onnxslim")
                   if k in anchor_status and anchor_status[k].ok}

    # 3. Start-up (goal d).
    results["startup"] = startup_times(exes["pd2onnx"], 5 if args.quick else 15)
    save()

    # 4. Conversion, then correctness and quality, one model at a time.
    for b in built:
        if not b.ok:
            continue
        spec = models.BY_NAME[b.name]
        runs = args.runs or (3 if (args.quick or spec.big) else 5)
        out_root = WORK / "out" / b.name / b.fmt
        print(f"== {b.name} [{b.fmt}] {b.params_bytes / 1e6:.1f} MB weights: converting, {runs} rounds",
              flush=True)
        cres = bench_conversion(b, keys, exes, runs, out_root, log)
        results["conversion"].append(cres)
        save()
        budget = args.latency_budget or (1.5 if args.quick else 4.0)
        qres = run_quality(b, cres, out_root, simplifiers if not spec.big else {},
                           latency=not args.no_quality and not spec.big, threads=threads, budget=budget,
                           quick=args.quick, log=log)
        if spec.big:
            qres["note"] = ("≥1 GB model: correctness and node counts only (no onnxsim/onnxslim, no latency); "
                            "the graph is a plain MatMul/Add/Relu chain")
        results["quality"].append(qres)
        save()
        # The >=1 GB outputs are large: keep the disk free between models.
        if spec.big:
            shutil.rmtree(out_root, ignore_errors=True)

    results["machine"]["load_average_end"] = machine.load_average()
    results["finished"] = dt.datetime.now().isoformat(timespec="seconds")
    save()
    print(f"done in {time.time() - started:.0f}s: {md_path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
