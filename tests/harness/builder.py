"""Build every registered case once per format and cache it (keyed by content hashes).

PIR files come from the Paddle in this interpreter (3.3.x); legacy files from Paddle 2.6 in
its own virtual environment (``tools/setup_paddle26.sh``), which is what most real
``.pdmodel`` files were written by and which builds every legacy program.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass

from harness.cases import REGISTRY, Case

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
# Beside the test venvs, outside the checkout: a new clone (CI's) reuses what an earlier run built.
CACHE = os.environ.get("PD2ONNX_TEST_CACHE", os.path.expanduser("~/.cache/pd2onnx/tests"))
PADDLE26 = os.environ.get("PD2ONNX_PADDLE26", os.path.expanduser("~/.cache/pd2onnx/paddle26/bin/python"))


# Harness modules no Paddle build imports: they convert and compare what was built, or (this
# module) decide what to build and where; the worker writes what a build holds.
RUN_ONLY = frozenset({"builder.py", "check.py", "detection.py"})


def python_for(fmt: str) -> str:
    if fmt == "pir":
        return sys.executable
    if not os.path.exists(PADDLE26):
        raise RuntimeError(
            f"Paddle 2.6 interpreter not found at {PADDLE26}; run 'bash tools/setup_paddle26.sh' "
            "(the README's test command does) or set PD2ONNX_PADDLE26"
        )
    return PADDLE26


def _digest(*paths: str) -> str:
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


@functools.cache
def _harness_files() -> tuple[str, ...]:
    # every harness module can take part in a build (the worker, case helpers, generated tables)
    # except RUN_ONLY: changing how ONNX models are run and compared must not rebuild every
    # Paddle model
    return tuple(sorted(os.path.join(HERE, f) for f in os.listdir(HERE) if f.endswith(".py") and f not in RUN_ONLY))


@functools.cache
def module_dir(fmt: str, module: str) -> str:
    """Where ``module``'s cases are built for ``fmt`` (keyed by the module's and the harness'
    contents; computed once per process: the files do not change during a run)."""
    stem = os.path.splitext(os.path.basename(module))[0]
    key = _digest(module, *_harness_files())
    return os.path.join(CACHE, fmt, f"{stem}-{key}")


@dataclass
class Built:
    case: Case
    fmt: str
    dir: str
    error: str | None

    @property
    def model_file(self) -> str:
        """What a user passes to pd2onnx (a file, or a directory for custom-saved cases)."""
        files = self.files
        if files is not None:
            return os.path.join(self.dir, files["model"])
        return os.path.join(self.dir, "model.json" if self.fmt == "pir" else "model.pdmodel")

    @property
    def params_file(self) -> str | None:
        """The params file when it must be named explicitly (custom cases only)."""
        files = self.files
        return os.path.join(self.dir, files["params"]) if files and files.get("params") else None

    @property
    def files(self) -> dict | None:
        path = os.path.join(self.dir, "files.json")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)

    @property
    def has_view(self) -> bool:
        return os.path.exists(os.path.join(self.dir, "view.json"))


_done: dict[tuple[str, str], Built] = {}


# Cases this process has seen built (or has built): a later ``get`` of any of them needs no
# look at the cache, nor its lock (once per case was ~1 s with the suite's 60 case modules).
_ready: set[str] = set()


def build_all(cases: list[Case] | None = None) -> None:
    """Build what is not cached yet (under a lock: pytest-xdist workers share the cache)."""
    import fcntl

    cases = cases if cases is not None else list(REGISTRY.values())
    if all(c.name in _ready for c in cases):
        return
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _build_stale(cases)
    _ready.update(c.name for c in cases)


# Paddle 2.6 sometimes crashes its process with a segfault (memory corruption in its C++
# core, seen at different places run to run); the modules left unbuilt get fresh processes.
WORKER_ATTEMPTS = 3


def _build_stale(cases: list[Case]) -> None:
    """One worker process per format, both at once; a crashed worker is retried for the
    modules it did not finish. A case that kills the worker twice is recorded as an error
    of its own (worker.py: crashes.json) and the others are built; each such crash earns
    the build one more attempt."""
    attempt = 0
    while True:
        attempt += 1
        failures = _run_workers(cases)
        if not failures:
            return
        if attempt >= WORKER_ATTEMPTS + _recorded_crashes(cases):
            raise RuntimeError("\n\n".join(failures))


def _recorded_crashes(cases: list[Case]) -> int:
    total = 0
    for fmt in ("pir", "legacy"):
        for module in {c.module for c in cases if fmt in c.formats}:
            path = os.path.join(module_dir(fmt, module), "crashes.json")
            if os.path.exists(path):
                with open(path) as f:
                    total += sum(json.load(f).values())
    return total


def _stale_modules(cases: list[Case], fmt: str) -> list[str]:
    return sorted({c.module for c in cases if fmt in c.formats
                   and not os.path.exists(os.path.join(module_dir(fmt, c.module), "status.json"))})


def _run_workers(cases: list[Case]) -> list[str]:
    procs = []
    for fmt in ("pir", "legacy"):
        stale = _stale_modules(cases, fmt)
        if not stale:
            continue
        for module in stale:
            os.makedirs(module_dir(fmt, module), exist_ok=True)
        env = dict(os.environ)
        if fmt == "legacy":
            env.pop("PYTHONPATH", None)
        log = open(os.path.join(CACHE, f"worker-{fmt}.log"), "w")
        args = [python_for(fmt), os.path.join(HERE, "worker.py"), fmt]
        args += [f"{m}::{module_dir(fmt, m)}" for m in stale]
        procs.append((fmt, subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env), log))
    failures = []
    for fmt, proc, log in procs:
        proc.wait()
        log.close()
        if proc.returncode != 0:
            with open(log.name) as f:
                tail = f.read()[-3000:]
            failures.append(f"the {fmt} Paddle worker failed (exit {proc.returncode}):\n{tail}")
    return failures


def get(case: Case, fmt: str) -> Built:
    key = (case.name, fmt)
    if key not in _done:
        build_all()
        mdir = module_dir(fmt, case.module)
        with open(os.path.join(mdir, "status.json")) as f:
            status = json.load(f)
        cdir = os.path.join(mdir, case.name)
        error = None
        if status.get(case.name) != "ok":
            err_file = os.path.join(cdir, "error.txt")
            error = open(err_file).read() if os.path.exists(err_file) else "case was not built"
        _done[key] = Built(case, fmt, cdir, error)
    return _done[key]
