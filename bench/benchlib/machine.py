"""Facts about the machine and the software versions, for the results header."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

from benchlib.envs import paddle26_python


def _cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _mem_gib() -> float:
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return float("nan")


def load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def _version(module: str) -> str:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:
        return "not installed"


def _git_commit(repo: Path) -> str:
    try:
        rev = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev + (" (+ uncommitted changes)" if dirty else "") if rev else "?"
    except Exception:
        return "?"


def _paddle26_version() -> str:
    py = paddle26_python()
    if not py.exists():
        return "not installed"
    out = subprocess.run([str(py), "-c", "import paddle, numpy; print(paddle.__version__, numpy.__version__)"],
                         capture_output=True, text=True, timeout=300)
    parts = out.stdout.split()
    return f"paddlepaddle {parts[0]} (numpy {parts[1]})" if len(parts) == 2 else "broken"


def facts(repo: Path) -> dict:
    return {
        "hostname": platform.node(),
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "affinity_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gib": round(_mem_gib(), 1),
        "kernel": platform.release(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "load_average_start": load_average(),
        "versions": {
            "pd2onnx": _version("pd2onnx") + " @ " + _git_commit(repo),
            "onnx": _version("onnx"),
            "onnx-ir": _version("onnx-ir"),
            "onnxruntime": _version("onnxruntime"),
            "numpy": _version("numpy"),
            "protobuf": _version("protobuf"),
            "paddlepaddle (PIR models, references)": _version("paddlepaddle"),
            "paddlepaddle (legacy models, references)": _paddle26_version(),
        },
    }


def facts_hostname() -> str:
    return (platform.node() or "machine").split(".")[0]
