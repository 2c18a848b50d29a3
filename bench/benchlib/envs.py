"""The anchor tools, each installed from PyPI into its own virtual environment.

None of these is a dependency of pd2onnx: they live under ``bench/work/venvs/`` (gitignored)
and are only ever run as separate commands. Versions are pinned so that figures from
different days compare; change a pin here and the venv is rebuilt on the next run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
WORK = BENCH / "work"
VENVS = WORK / "venvs"


@dataclass(frozen=True)
class Anchor:
    key: str  # column name in the results
    venv: str
    pip: tuple[str, ...]
    exe: str  # console script inside the venv
    note: str = ""


ANCHORS: dict[str, Anchor] = {
    a.key: a
    for a in (
        Anchor(
            "paddle2onnx-2.1.0",
            "paddle2onnx-2.1.0",
            # paddle2onnx 2.1.0 imports `packaging` without declaring it (ModuleNotFoundError
            # on the first run), and needs paddlepaddle 3.x in the same environment.
            ("paddle2onnx==2.1.0", "paddlepaddle==3.3.1", "packaging"),
            "paddle2onnx",
            "needs paddlepaddle 3.x beside it; undeclared dependency on `packaging` added by the bench",
        ),
        Anchor(
            "paddle2onnx-1.3.1",
            "paddle2onnx-1.3.1",
            # The C++ converter does not use paddle, but paddle2onnx/convert.py does
            # `import paddle` at import time; 2.6.2 (with numpy<2) is the matching era.
            ("paddle2onnx==1.3.1", "paddlepaddle==2.6.2", "numpy<2"),
            "paddle2onnx",
            "imports paddle at start-up (any paddle works; the bench uses 2.6.2 + numpy<2)",
        ),
        Anchor("p2o", "p2o", ("p2o==0.1.2",), "p2o", "Rust PIR converter (binary wheel)"),
        Anchor("onnxsim", "onnxsim", ("onnxsim==0.8.1",), "onnxsim"),
        Anchor("onnxslim", "onnxslim", ("onnxslim==0.1.98",), "onnxslim"),
    )
}


@dataclass
class AnchorStatus:
    key: str
    ok: bool
    exe: str = ""
    version: str = ""
    pip: list[str] = field(default_factory=list)
    error: str = ""
    install_seconds: float = 0.0
    note: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _installed_versions(venv: Path) -> dict[str, str]:
    try:
        out = subprocess.run([str(_venv_python(venv)), "-m", "pip", "list", "--format=json",
                              "--disable-pip-version-check"], capture_output=True, text=True, timeout=120)
        return {d["name"].lower(): d["version"] for d in json.loads(out.stdout)}
    except Exception:
        return {}


def ensure_anchor(anchor: Anchor, log_dir: Path, install: bool = True) -> AnchorStatus:
    """Create/refresh the anchor's venv; never raises: failures come back with their error.

    With ``install`` False an existing venv is used as it is and a missing one is reported.
    """
    venv = VENVS / anchor.venv
    marker = venv / ".bench-pip.json"
    exe = venv / "bin" / anchor.exe
    status = AnchorStatus(anchor.key, False, str(exe), pip=list(anchor.pip), note=anchor.note)
    t0 = time.perf_counter()
    want = json.dumps(list(anchor.pip))
    if install and not (marker.exists() and marker.read_text() == want and exe.exists()):
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / f"install-{anchor.venv}.log"
        shutil.rmtree(venv, ignore_errors=True)
        with open(log_path, "w") as log:
            steps = [[sys.executable, "-m", "venv", str(venv)],
                     [str(_venv_python(venv)), "-m", "pip", "install", "--disable-pip-version-check",
                      *anchor.pip]]
            for cmd in steps:
                log.write("$ " + " ".join(cmd) + "\n")
                log.flush()
                rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
                if rc != 0:
                    break
        if rc != 0:
            text = log_path.read_text(errors="replace").splitlines()
            errors = [ln for ln in text if "ERROR" in ln or "error" in ln.lower()]
            status.error = "\n".join((errors or text)[-8:])
            status.install_seconds = round(time.perf_counter() - t0, 1)
            return status
        marker.write_text(want)
        status.install_seconds = round(time.perf_counter() - t0, 1)
    if not exe.exists():
        status.error = f"{anchor.exe} not found in {venv}" + ("" if install else " (--skip-install)")
        return status
    versions = _installed_versions(venv)
    names = [re.split(r"[=<>!~ ]", p)[0] for p in anchor.pip]
    status.version = ", ".join(f"{n} {versions.get(n.lower(), '?')}" for n in names)
    # Smoke test: the tool must at least start (paddle2onnx 2.1.0 crashes here without packaging).
    probe = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        status.error = f"`{anchor.exe} --help` exits {probe.returncode}: " + (probe.stderr or probe.stdout).strip()[-600:]
        return status
    status.ok = True
    return status


def ensure_all(keys: list[str], log_dir: Path, install: bool = True) -> dict[str, AnchorStatus]:
    """Install the anchors in parallel threads (pip is network/disk bound)."""
    results: dict[str, AnchorStatus] = {}

    def work(key: str) -> None:
        try:
            results[key] = ensure_anchor(ANCHORS[key], log_dir, install)
        except Exception as exc:  # keep the run going whatever happens
            results[key] = AnchorStatus(key, False, error=f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=work, args=(k,)) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {k: results[k] for k in keys}


def paddle26_python() -> Path:
    """The Paddle 2.6 interpreter that writes legacy .pdmodel files (tools/setup_paddle26.sh)."""
    venv = Path(os.environ.get("PD2ONNX_PADDLE26_VENV", Path.home() / ".cache/pd2onnx/paddle26"))
    return venv / "bin" / "python"


def ensure_paddle26(repo: Path) -> tuple[bool, str]:
    py = paddle26_python()
    script = repo / "tools" / "setup_paddle26.sh"
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    if proc.returncode != 0 or not py.exists():
        return False, (proc.stderr or proc.stdout).strip()[-800:]
    return True, str(py)
