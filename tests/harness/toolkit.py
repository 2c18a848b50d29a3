"""Models built by Paddle's toolkits (paddledet, paddlenlp, paddleclas, paddleseg) in their own
virtual environments (``tools/setup_<env>.sh``), by a build script ``tools/<toolkit>_models.py``
run as ``python SCRIPT NAME OUT_DIR``, cached under the test cache by the content hash of the
script and of ``tools/toolkit_io.py``, which every script imports."""

from __future__ import annotations

import hashlib
import os
import subprocess

import pytest

from harness.builder import CACHE

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def venv_python(env: str) -> str:
    """The interpreter of venv ``env`` (``$PD2ONNX_<ENV>_VENV`` or ~/.cache/pd2onnx/<env>)."""
    venv = os.environ.get(f"PD2ONNX_{env.upper()}_VENV", os.path.expanduser(f"~/.cache/pd2onnx/{env}"))
    return os.path.join(venv, "bin", "python")


def build(toolkit: str, env: str, name: str, io_files: tuple[str, ...] = ("io.npz",)) -> str:
    """The directory holding model ``name`` built by ``tools/<toolkit>_models.py`` (built now if
    not cached); skips the test when venv ``env`` is missing."""
    python = venv_python(env)
    if not os.path.exists(python):
        pytest.skip(f"no {env} environment at {os.path.dirname(os.path.dirname(python))} "
                    f"(bash tools/setup_{env}.sh)")
    script = os.path.join(ROOT, "tools", f"{toolkit}_models.py")
    h = hashlib.sha256()
    for path in (script, os.path.join(ROOT, "tools", "toolkit_io.py")):  # the script and what it imports
        with open(path, "rb") as f:
            h.update(f.read())
    key = h.hexdigest()[:16]
    out = os.path.join(CACHE, toolkit, f"{name}-{key}")
    if not all(os.path.exists(os.path.join(out, f)) for f in io_files):
        proc = subprocess.run([python, script, name, out], capture_output=True, text=True, timeout=900, cwd=ROOT)
        if proc.returncode != 0:
            raise AssertionError(f"{toolkit} could not build {name}:\n{proc.stderr[-4000:]}")
    return out
