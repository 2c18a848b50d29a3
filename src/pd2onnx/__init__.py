"""pd2onnx: PaddlePaddle inference models to ONNX, in pure Python, plus an ONNX optimizer.

Heavy modules are imported lazily so that ``import pd2onnx`` and the CLI start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pd2onnx._version import __version__
from pd2onnx.errors import ConversionError, ModelFormatError, Pd2OnnxError, UnsupportedOpError, UsageError

if TYPE_CHECKING:
    import onnx_ir as ir

    from pd2onnx.paddle.program import Program


def load(path: str, params_file: str | None = None) -> Program:
    """Read a Paddle inference model (directory, .json/.pdmodel file or path prefix)."""
    from pd2onnx.paddle.loader import load as _load

    return _load(path, params_file)


def export(
    model_file: str,
    params_file: str | None = None,
    save_file: str | None = None,
    opset_version: int | None = None,
    **kwargs: Any,
) -> bytes | None:
    """Convert a Paddle model; write ``save_file`` or return the ONNX bytes (Paddle2ONNX-style).

    Keyword options: ``auto_opset`` (default True), ``optimize`` (True), ``fp16``,
    ``keep_io_types``, ``enable_onnx_checker``.
    """
    from pd2onnx.api import export as _export

    return _export(model_file, params_file, save_file, opset_version, **kwargs)


def to_onnx(model: str, params_file: str | None = None, **kwargs: Any) -> ir.Model:
    """Convert a Paddle model to an in-memory ONNX model (``onnx_ir.Model``); see ``export``.

    (Not named ``convert``: that is the converter subpackage, ``pd2onnx.convert``.)
    """
    from pd2onnx.api import convert as _convert

    return _convert(model, params_file, **kwargs)


__all__ = [
    "export",
    "to_onnx",
    "ConversionError",
    "ModelFormatError",
    "Pd2OnnxError",
    "UnsupportedOpError",
    "UsageError",
    "__version__",
    "load",
]
