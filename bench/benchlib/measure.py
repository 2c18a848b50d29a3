"""Wall time and peak RSS of one whole command.

Peak RSS comes from GNU time (``/usr/bin/time -f %M``, the child's ``ru_maxrss``) when it is
installed, else from ``os.wait4`` on the child (the same kernel figure). Wall time is taken
here with ``perf_counter`` around the whole process, start-up included.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass

GNU_TIME = "/usr/bin/time"


def rss_method() -> str:
    return "GNU time (/usr/bin/time, ru_maxrss)" if _has_gnu_time() else "os.wait4 ru_maxrss"


def _has_gnu_time() -> bool:
    if not os.access(GNU_TIME, os.X_OK):
        return False
    try:
        out = subprocess.run([GNU_TIME, "--version"], capture_output=True, text=True, timeout=10)
        return "GNU" in (out.stdout + out.stderr)
    except Exception:
        return False


_GNU = None


@dataclass
class Run:
    ok: bool
    wall: float  # seconds
    rss_mb: float  # peak resident set, MiB
    rc: int
    error: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def _tail(text: str, n: int = 4000) -> str:
    """The part of a failing command's output that says what went wrong.

    From the first line that looks like an error to the end (a converter's op list follows its
    error line), else the last lines; progress chatter and warnings before it are dropped.
    """
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)  # colour codes
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    keys = ("rror", "nsupported", "ailed", "xception", "Traceback", "not support", "Killed")
    first = next((i for i, ln in enumerate(lines) if any(k in ln for k in keys)), None)
    picked = lines[first:first + 60] if first is not None else lines[-30:]
    out = "\n".join(picked)
    return out if len(out) <= n else out[: n - 1] + "…"


def run_command(cmd: list[str], timeout: float = 1800, env: dict | None = None, cwd: str | None = None) -> Run:
    """Run ``cmd`` once; never raises for a failing command."""
    global _GNU
    if _GNU is None:
        _GNU = _has_gnu_time()
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        err_path = os.path.join(tmp, "stderr")
        time_path = os.path.join(tmp, "time")
        full = [GNU_TIME, "-f", "%M %x", "-o", time_path, *cmd] if _GNU else list(cmd)
        with open(err_path, "w") as err:
            t0 = time.perf_counter()
            try:
                proc = subprocess.Popen(full, stdout=err, stderr=subprocess.STDOUT, env=env, cwd=cwd)
            except OSError as exc:
                return Run(False, 0.0, 0.0, -1, f"cannot start: {exc}")
            deadline = t0 + timeout
            rusage = None
            while True:
                pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.perf_counter() > deadline:
                    proc.kill()
                    _, status, rusage = os.wait4(proc.pid, 0)
                    proc.returncode = -9
                    wall = time.perf_counter() - t0
                    return Run(False, wall, rusage.ru_maxrss / 1024, -9, f"timed out after {timeout:.0f} s")
                time.sleep(0.002)
            wall = time.perf_counter() - t0
        rc = os.waitstatus_to_exitcode(status)
        rss_kb = float(rusage.ru_maxrss)
        if _GNU:
            try:
                fields = open(time_path).read().split()
                # GNU time writes "Command exited with non-zero status N" first on failure.
                rss_kb, rc = float(fields[-2]), int(fields[-1])
            except (OSError, ValueError, IndexError):
                pass
        output = open(err_path, errors="replace").read()
    if rc != 0:
        return Run(False, wall, rss_kb / 1024, rc, _tail(output) or f"exit status {rc}")
    return Run(True, wall, rss_kb / 1024, rc)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        v = values[0] if values else float("nan")
        return v, v
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def which(name: str) -> str | None:
    return shutil.which(name)
