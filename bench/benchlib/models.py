"""The benchmark's model set, built locally with random weights and cached.

Every model exists in two formats: PIR JSON (written by this interpreter's Paddle 3.3
``paddle.jit.save``) and legacy ProgramDesc (written by Paddle 2.6 from the venv made by
``tools/setup_paddle26.sh``). Both share one set of weights (``weights.npz``) except the
deep MLPs, whose weights are generated in place. Each format directory also holds the
random inputs and Paddle's own outputs on them (``ref.npz``), produced by Paddle's static
inference loader on the saved files in a fresh process.

The PP-OCRv6 models are the exception: PaddleX 3.7 builds made by ``tools/paddlex_models.py`` in
the paddlex venv (the model tests' builds, copied from their cache when present), PIR only; their
inputs and Paddle's outputs on them are made here like the others'.

Layout: ``bench/work/models/<name>/<fmt>/{model.json|model.pdmodel, model.pdiparams,
inputs.npz, ref.npz, ref.json, stamp}``. A model is rebuilt when the builder script or
the Paddle versions change (``stamp``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from benchlib.envs import WORK, paddle26_python

WORKER = Path(__file__).resolve().parent / "paddle_worker.py"
# the Paddle runner its ref command calls (verify's)
RUNNER = Path(__file__).resolve().parents[2] / "src" / "pd2onnx" / "verification" / "paddle_worker.py"
MODELS_DIR = WORK / "models"
FORMATS = ("pir", "legacy")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    description: str
    quick: bool = False  # part of --quick
    big: bool = False  # >= 1 GB of weights: conversion-time goal (b), fewer runs
    paddlex: bool = False  # built by tools/paddlex_models.py in the paddlex venv; PIR only

    @property
    def formats(self) -> tuple[str, ...]:
        return ("pir",) if self.paddlex else FORMATS


CATALOGUE: list[ModelSpec] = [
    ModelSpec("small_cnn", "3x conv-BN-ReLU, pools, linear, softmax; 64x64 input", quick=True),
    ModelSpec("transformer_encoder", "embedding + 4-layer nn.TransformerEncoder (d=256, 8 heads, GELU), seq 128",
              quick=True),
    ModelSpec("unet", "small U-Net, 3 levels, bilinear + nearest resize, concat skips; 128x128", quick=True),
    ModelSpec("mobilenet_v3_large", "paddle.vision.models.mobilenet_v3_large, 224x224"),
    ModelSpec("resnet50", "paddle.vision.models.resnet50, 224x224"),
    ModelSpec("pp_ocrv6_small_det", "PP-OCRv6 small text detector (PaddleX 3.7, PPLCNetV4), 640x640",
              paddlex=True),
    ModelSpec("pp_ocrv6_medium_det", "PP-OCRv6 medium text detector (PaddleX 3.7), 640x640", paddlex=True),
    ModelSpec("pp_ocrv6_small_rec", "PP-OCRv6 small text recognizer (PaddleX 3.7, SVTR neck, 18,714 classes), "
              "48x320", paddlex=True),
    ModelSpec("pp_ocrv6_tiny_rec", "PP-OCRv6 tiny text recognizer (PaddleX 3.7, conv1d head, 6,625 classes), "
              "48x320", paddlex=True),
    ModelSpec("mlp_1g", "16 x Linear(4096, 4096) + ReLU, ~1.07 GB fp32 weights", big=True),
    ModelSpec("mlp_2g", "32 x Linear(4096, 4096) + ReLU, ~2.15 GB fp32 weights (> 2 GiB protobuf limit)",
              big=True),
]
BY_NAME = {m.name: m for m in CATALOGUE}


@dataclass
class BuiltModel:
    name: str
    fmt: str
    ok: bool
    dir: str = ""
    model_file: str = ""
    params_file: str = ""
    params_bytes: int = 0
    error: str = ""
    ref: dict | None = None
    rebuilt: bool = False

    def to_json(self) -> dict:
        return dict(self.__dict__)


def _python_for(fmt: str) -> str:
    return sys.executable if fmt == "pir" else str(paddle26_python())


def _stamp(fmt: str, name: str = "") -> str:
    h = hashlib.sha256(WORKER.read_bytes())
    h.update(RUNNER.read_bytes())
    h.update(fmt.encode())
    h.update(_python_for(fmt).encode())
    if BY_NAME[name].paddlex if name in BY_NAME else False:
        h.update(_paddlex_key().encode())
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------- PaddleX builds
REPO = Path(__file__).resolve().parents[2]
PADDLEX_SCRIPT = REPO / "tools" / "paddlex_models.py"


def _paddlex_key() -> str:
    """The key the model tests cache these builds under (tests/harness/toolkit.py): the hash of
    the script and what it imports."""
    h = hashlib.sha256()
    for path in (PADDLEX_SCRIPT, REPO / "tools" / "toolkit_io.py"):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _paddlex_python() -> Path:
    venv = os.environ.get("PD2ONNX_PADDLEX_VENV") or str(Path.home() / ".cache" / "pd2onnx" / "paddlex")
    return Path(venv) / "bin" / "python"


def _build_paddlex(name: str, fdir: Path, log) -> str:
    """``model.json`` / ``model.pdiparams`` of a PaddleX model in ``fdir``: copied from the model
    tests' cache when they built it with this script already, else built by the script in the
    paddlex venv (tools/setup_paddlex.sh). Returns an error message, or "" when done."""
    cache = Path(os.environ.get("PD2ONNX_TEST_CACHE") or Path.home() / ".cache" / "pd2onnx" / "tests")
    cached = cache / "paddlex" / f"{name}-{_paddlex_key()}"
    files = ("model.json", "model.pdiparams")
    if all((cached / f).exists() for f in files):
        log.write(f"# {name}: copied from {cached}\n")
        for f in files:
            shutil.copyfile(cached / f, fdir / f)
        return ""
    py = _paddlex_python()
    if not py.exists():
        return f"no paddlex environment at {py.parent.parent} (bash tools/setup_paddlex.sh)"
    rc, out = _run([str(py), str(PADDLEX_SCRIPT), name, str(fdir)], log)
    if not all((fdir / f).exists() for f in files):
        return f"tools/paddlex_models.py could not build {name}: {out}"
    return ""


def _run(cmd: list[str], log) -> tuple[int, str]:
    """Run a worker; returns (rc, its JSON result line) or (rc, the tail of its output)."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log.write("$ " + " ".join(cmd) + "\n" + proc.stdout + proc.stderr + "\n")
    if proc.returncode == 0:
        found = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if found:
            return 0, found[-1]
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    return proc.returncode or 1, "\n".join(lines[-10:])


def _read_ref(fdir: Path) -> dict | None:
    try:
        return json.loads((fdir / "ref.json").read_text())
    except (OSError, ValueError):
        return None


def build(name: str, fmt: str, log, rebuild: bool = False) -> BuiltModel:
    """Build (or reuse) one model in one format; errors come back in the result."""
    mdir = MODELS_DIR / name
    fdir = mdir / fmt
    model_file = fdir / ("model.json" if fmt == "pir" else "model.pdmodel")
    params = fdir / "model.pdiparams"
    stamp = fdir / "stamp"
    result = BuiltModel(name, fmt, False, str(fdir), str(model_file), str(params))
    fresh = (not rebuild and stamp.exists() and stamp.read_text() == _stamp(fmt, name)
             and model_file.exists() and (fdir / "ref.npz").exists() and _read_ref(fdir) is not None)
    spec = BY_NAME.get(name)
    if spec is not None and spec.paddlex and not fresh:
        if fmt != "pir":
            result.error = "PaddleX builds exist as PIR only (tools/paddlex_models.py says why)"
            return result
        shutil.rmtree(fdir, ignore_errors=True)
        fdir.mkdir(parents=True)
        log.write(f"# building {name} [{fmt}] (PaddleX)\n")
        error = _build_paddlex(name, fdir, log)
        if not error:
            rc, out = _run([sys.executable, str(WORKER), "inputs", name, str(fdir)], log)
            error = "" if rc == 0 else f"inputs failed: {out}"
        if not error:
            rc, out = _run([sys.executable, str(WORKER), "ref", str(fdir / "model"), str(fdir / "inputs.npz"),
                            str(fdir / "ref.npz")], log)
            error = "" if rc == 0 else f"Paddle reference run failed: {out}"
        if error:
            result.error = error
            return result
        (fdir / "ref.json").write_text(out)
        stamp.write_text(_stamp(fmt, name))
        result.rebuilt = True
    elif not fresh:
        py = _python_for(fmt)
        if not Path(py).exists():
            result.error = f"no interpreter for {fmt}: {py} (run tools/setup_paddle26.sh)"
            return result
        shutil.rmtree(fdir, ignore_errors=True)
        mdir.mkdir(parents=True, exist_ok=True)
        weights = mdir / "weights.npz"
        if fmt == "pir" and weights.exists():
            weights.unlink()  # the PIR build (re)makes the shared weights
        log.write(f"# building {name} [{fmt}]\n")
        rc, out = _run([py, str(WORKER), "build", name, str(fdir), "--weights", str(weights)], log)
        if rc != 0:
            result.error = f"build failed: {out}"
            return result
        rc, out = _run([py, str(WORKER), "ref", str(fdir / "model"), str(fdir / "inputs.npz"),
                        str(fdir / "ref.npz")], log)
        if rc != 0:
            result.error = f"Paddle reference run failed: {out}"
            return result
        (fdir / "ref.json").write_text(out)
        stamp.write_text(_stamp(fmt, name))
        result.rebuilt = True
    result.ref = _read_ref(fdir)
    if result.ref is None:
        result.error = "Paddle reference result unreadable"
        return result
    if not result.ref.get("finite", False):
        result.error = "Paddle's own output is not finite; rebuild with other weights"
        return result
    result.params_bytes = params.stat().st_size if params.exists() else 0
    result.ok = True
    return result
