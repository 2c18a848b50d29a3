"""Many models in one call: ``pd2onnx convert DIR1 DIR2 ... -o OUTROOT/`` (one deployment
folder per model, ``OUTROOT/<folder name>/``) and ``--recursive`` (every model folder under
a root, keeping the tree).

Each model is converted with ``deploy.export_folder``; a failure is reported and the others
go on. ``-j N`` converts N at a time, each in its own process (memory is returned when a
model is done, and a crash takes only that model), and starts another only while the
estimated memory of those running fits in what the machine has available.
"""

from __future__ import annotations

import glob
import logging
import multiprocessing
import multiprocessing.connection
import os
import shutil
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from pd2onnx import progress
from pd2onnx.errors import Pd2OnnxError, UsageError, internal_error

log = logging.getLogger(__name__)


@dataclass
class Job:
    source: str  # model folder, program file or prefix
    out_dir: str
    label: str  # how the summary names it


@dataclass
class Outcome:
    job: Job
    ok: bool
    detail: str  # the summary line's text after the label
    error: str = ""  # the full error message of a failure
    seconds: float = 0.0
    logs: list[tuple[int, str]] = field(default_factory=list)  # messages of a worker process


def plan_jobs(models: list[str], out_root: str, recursive: bool) -> list[Job]:
    """One job per model (``--recursive``: per model folder under each root); refuses two
    models that would be written to the same folder."""
    jobs = []
    if recursive:
        for root in models:
            if not os.path.isdir(root):
                raise UsageError("--recursive takes folders", file=root, hint="pass the folder that holds the models")
            from pd2onnx.paddle.discover import find_model_dirs

            prefix = "" if len(models) == 1 else _name(root)
            for folder in find_model_dirs(root, skip=(out_root,)):
                rel = os.path.relpath(folder, root)
                label = os.path.normpath(os.path.join(prefix, rel)) if rel != "." or prefix else _name(root)
                jobs.append(Job(folder, os.path.normpath(os.path.join(out_root, prefix, rel)), label))
        if not jobs:
            raise UsageError(f"no model folder under {', '.join(models)}", hint="a model folder holds a Paddle "
                             "program (.json, .pdmodel, __model__ or model) and its weights")
    else:
        for model in models:
            name = _name(model) if os.path.isdir(model) else _name(os.path.dirname(os.path.abspath(model)))
            jobs.append(Job(model, os.path.join(out_root, name), name))
    targets: dict[str, list[str]] = {}
    for job in jobs:
        targets.setdefault(os.path.abspath(job.out_dir), []).append(job.source)
    clashes = {t: s for t, s in targets.items() if len(s) > 1}
    if clashes:
        target, sources = next(iter(clashes.items()))
        raise UsageError(
            f"{len(sources)} models would be written to the same folder {target}: {', '.join(sources)}",
            hint="convert them in separate calls (-o per model), or with --recursive from a folder above them",
        )
    return jobs


def _name(path: str) -> str:
    return os.path.basename(os.path.normpath(os.path.abspath(path)))


def convert_job(job: Job, options: dict[str, Any]) -> Outcome:
    """Convert one model into its folder; every error becomes a failed Outcome."""
    from pd2onnx.deploy import export_folder, shown_path

    start = time.monotonic()
    try:
        result = export_folder(job.source, job.out_dir, **options)
    except Pd2OnnxError as exc:
        return Outcome(job, False, exc.message.splitlines()[0], str(exc), time.monotonic() - start)
    except Exception as exc:  # a pd2onnx bug must not stop the other models
        return Outcome(job, False, internal_error(exc, on=job.source).message,
                       f"internal error converting {job.source}:\n{traceback.format_exc()}",
                       time.monotonic() - start)
    configs = f", {len(result.configs)} config(s) copied" if result.configs else ""
    detail = f"{shown_path(result.onnx_file)} (opset {result.opset}, {result.nodes} nodes{configs})"
    return Outcome(job, True, detail, seconds=time.monotonic() - start)


def summary_line(outcome: Outcome) -> str:
    status = "ok    " if outcome.ok else "FAILED"
    return f"{status} {outcome.job.label} -> {outcome.detail} [{outcome.seconds:.1f} s]"


class _Label(logging.Filter):
    """Prefixes every message with the model it concerns."""

    def __init__(self, label: str):
        super().__init__()
        self.label = label

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "pd2onnx_labelled", False):
            record.msg, record.args = f"[{self.label}] {record.getMessage()}", None
            record.pd2onnx_labelled = True
        return True


def run_jobs(jobs: list[Job], options: dict[str, Any], workers: int = 1) -> list[Outcome]:
    """Convert every job (``workers`` at a time, in processes when more than one), print
    one summary line per model as it finishes (errors in full on stderr), return the
    outcomes in job order."""
    outcomes: dict[int, Outcome] = {}

    def report(index: int, outcome: Outcome) -> None:
        outcomes[index] = outcome
        for level, message in outcome.logs:
            log.log(level, "[%s] %s", outcome.job.label, message)
        progress.echo(summary_line(outcome))
        if not outcome.ok:
            progress.echo(f"pd2onnx: error: {outcome.error}", sys.stderr)
        progress.retitle(f"converting {len(jobs)} models: {len(outcomes)} done")

    if workers <= 1 or len(jobs) == 1:
        for index, job in enumerate(jobs):
            progress.retitle(f"[{index + 1}/{len(jobs)}] {job.label}")
            label = _Label(job.label)
            handlers = logging.getLogger().handlers
            for handler in handlers:
                handler.addFilter(label)
            try:
                outcome = convert_job(job, options)
            finally:
                for handler in handlers:
                    handler.removeFilter(label)
            report(index, outcome)
    else:
        _run_parallel(jobs, options, workers, report)
    return [outcomes[i] for i in range(len(jobs))]


@dataclass
class _Running:
    index: int
    job: Job
    process: Any
    conn: Any
    estimate: int
    started: float


def _run_parallel(jobs: list[Job], options: dict[str, Any], workers: int, report: Any) -> None:
    ctx = _context()
    pending = list(enumerate(jobs))
    running: dict[Any, _Running] = {}
    budget = memory_budget()
    level = logging.getLogger("pd2onnx").getEffectiveLevel()
    try:
        while pending or running:
            while pending and len(running) < workers:
                index, job = pending[0]
                estimate = memory_estimate(job.source)
                in_use = sum(r.estimate for r in running.values())
                if running and budget is not None and in_use + estimate > budget:
                    log.info("waiting for memory before converting %s (needs ~%d MB, %d MB in use of %d MB)",
                             job.label, estimate >> 20, in_use >> 20, budget >> 20)
                    break
                pending.pop(0)
                receive, send = ctx.Pipe(duplex=False)
                process = ctx.Process(target=_worker, args=(send, job, options, level), name=f"pd2onnx {job.label}")
                process.start()
                send.close()
                running[receive] = _Running(index, job, process, receive, estimate, time.monotonic())
            progress.stage("running " + ", ".join(r.job.label for r in running.values()))
            for conn in multiprocessing.connection.wait(list(running), timeout=1.0):
                done = running.pop(conn)
                try:
                    outcome = conn.recv()
                except (EOFError, OSError):
                    done.process.join()
                    outcome = _died(done)
                conn.close()
                done.process.join()
                report(done.index, outcome)
    except BaseException:
        _stop(running.values())
        raise


def _context() -> Any:
    """Worker processes forked from a server that has imported the converter once (started
    clean, so the parent's threads do not matter); spawned where there is no fork."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        import pkgutil

        from pd2onnx.convert import ops

        ctx = multiprocessing.get_context("forkserver")
        mappers = [f"{ops.__name__}.{m.name}" for m in pkgutil.iter_modules(ops.__path__) if not m.name.startswith("_")]
        ctx.set_forkserver_preload(["pd2onnx.batch", "pd2onnx.deploy", "pd2onnx.api", "pd2onnx.paddle.loader",
                                    "pd2onnx.optimize.passes", "onnx.checker", *mappers])
        return ctx
    return multiprocessing.get_context("spawn")


def _died(run: _Running) -> Outcome:
    code = run.process.exitcode
    why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    if code == -9:
        why += ", perhaps out of memory: try a smaller -j"
    message = f"the conversion process ended without a result ({why})"
    _clean_staging(run)
    return Outcome(run.job, False, message, f"{run.job.source}: {message}", time.monotonic() - run.started)


def _stop(runs: Any) -> None:
    """Interrupted: give the workers (which got the same Ctrl-C) a moment to clean up,
    then end them and remove what they left."""
    runs = list(runs)
    deadline = time.monotonic() + 5
    for run in runs:
        run.process.join(max(0.0, deadline - time.monotonic()))
        if run.process.is_alive():
            run.process.terminate()
            run.process.join()
        _clean_staging(run)


def _clean_staging(run: _Running) -> None:
    """Remove the hidden staging folder a dead worker left (deploy.write_folder names it
    after the worker's pid, in the nearest existing folder above the output)."""
    from pd2onnx.deploy import staging_prefix, writable_ancestor

    base = writable_ancestor(os.path.abspath(run.job.out_dir))
    if base and run.process.pid:
        for path in glob.glob(os.path.join(base, glob.escape(staging_prefix(run.process.pid)) + "*")):
            shutil.rmtree(path, ignore_errors=True)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.levelno, record.getMessage()))


def _worker(conn: Any, job: Job, options: dict[str, Any], level: int) -> None:
    """A worker process: convert one model, send back the outcome with its log messages."""
    collect = _Collect()
    logging.basicConfig(level=level, handlers=[collect], force=True)
    logging.getLogger("pd2onnx").setLevel(level)
    try:
        outcome = convert_job(job, options)
    except KeyboardInterrupt:
        outcome = Outcome(job, False, "interrupted", f"{job.source}: interrupted")
    outcome.logs = collect.records
    conn.send(outcome)
    conn.close()


def memory_budget() -> int | None:
    """What the models converted at once may use: 90% of the memory available now
    (Linux ``MemAvailable``); None where that is unknown (no limit)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 * 9 // 10
    except (OSError, ValueError, IndexError):
        pass
    return None


def memory_estimate(source: str) -> int:
    """Rough peak memory of converting ``source``: its weights (converted once, written
    streamed), ten times its program file (parsed), and the interpreter."""
    from pd2onnx.paddle.loader import locate

    try:
        model_file, params, _ = locate(source)
    except Pd2OnnxError:
        return 0
    if params and os.path.isfile(params):
        weights = os.path.getsize(params)
    else:  # one file per parameter: everything in the folder
        folder = os.path.dirname(os.path.abspath(model_file))
        weights = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(folder) for f in files)
    return weights + 10 * os.path.getsize(model_file) + (300 << 20)
