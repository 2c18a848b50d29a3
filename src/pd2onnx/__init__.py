"""pd2onnx: PaddlePaddle inference models to ONNX, in pure Python, plus an ONNX optimizer.

Heavy modules are imported lazily so that ``import pd2onnx`` and the CLI start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pd2onnx._version import __version__
from pd2onnx.errors import ConversionError, ModelFormatError, Pd2OnnxError, UnsupportedOpError, UsageError

if TYPE_CHECKING:
    from pd2onnx.paddle.program import Program


def load(path: str, params_file: str | None = None) -> Program:
    """Read a Paddle inference model (directory, .json/.pdmodel file or path prefix)."""
    from pd2onnx.paddle.loader import load as _load

    return _load(path, params_file)


__all__ = [
    "ConversionError",
    "ModelFormatError",
    "Pd2OnnxError",
    "UnsupportedOpError",
    "UsageError",
    "__version__",
    "load",
]
