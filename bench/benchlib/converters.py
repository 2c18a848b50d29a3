"""The converters under test and how each is invoked as a whole command.

Every converter targets opset 17 (pd2onnx's and p2o's default; Paddle2ONNX is told so) and
otherwise runs with its defaults, as a user would: pd2onnx optimizes its output,
Paddle2ONNX 2.1.0 runs onnxoptimizer and the ONNX checker, p2o does what it does.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from benchlib.envs import ANCHORS, VENVS

OPSET = 17


@dataclass(frozen=True)
class Converter:
    key: str
    formats: tuple[str, ...]
    anchor: str | None  # the anchors entry that provides it; None = pd2onnx itself

    def command(self, model_file: str, params_file: str, out: str, exe: str) -> list[str]:
        model_dir, model_name = os.path.split(model_file)
        params_name = os.path.basename(params_file)
        if self.key == "pd2onnx":
            return [exe, "convert", model_file, "-o", out, "--opset", str(OPSET)]
        if self.key.startswith("paddle2onnx"):
            return [exe, "--model_dir", model_dir, "--model_filename", model_name,
                    "--params_filename", params_name, "--save_file", out,
                    "--opset_version", str(OPSET)]
        if self.key == "p2o":
            return [exe, model_file, params_file, out, "--opset", str(OPSET)]
        raise ValueError(self.key)


CONVERTERS: dict[str, Converter] = {
    c.key: c
    for c in (
        Converter("pd2onnx", ("pir", "legacy"), None),
        Converter("paddle2onnx-2.1.0", ("pir", "legacy"), "paddle2onnx-2.1.0"),
        Converter("paddle2onnx-1.3.1", ("legacy",), "paddle2onnx-1.3.1"),
        Converter("p2o", ("pir",), "p2o"),
    )
}


def pd2onnx_exe() -> str:
    """The pd2onnx console script of this interpreter (not a pyenv/asdf shim, which adds ~50 ms)."""
    candidate = Path(sys.executable).parent / "pd2onnx"
    if candidate.exists():
        return str(candidate)
    import shutil

    found = shutil.which("pd2onnx")
    if not found:
        raise SystemExit("pd2onnx is not installed in this interpreter: pip install -e .")
    return found


def anchor_exe(key: str) -> str:
    a = ANCHORS[key]
    return str(VENVS / a.venv / "bin" / a.exe)
