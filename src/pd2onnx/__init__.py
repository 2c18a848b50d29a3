"""pd2onnx: PaddlePaddle inference models to ONNX, in pure Python, plus an ONNX optimizer.

Heavy modules are imported lazily so that ``import pd2onnx`` and the CLI start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pd2onnx._version import __version__
from pd2onnx.api import CompatWarning, dygraph2onnx, export
from pd2onnx.errors import ConversionError, ModelFormatError, Pd2OnnxError, UnsupportedOpError, UsageError

if TYPE_CHECKING:
    import onnx_ir as ir

    from pd2onnx.paddle.program import Program
    from pd2onnx.verification import VerifyReport


def load(path: str, params_file: str | None = None) -> Program:
    """Read a Paddle inference model (directory, .json/.pdmodel file or path prefix)."""
    from pd2onnx.paddle.loader import load as _load

    return _load(path, params_file)


def export_folder(model: str, out_dir: str, params_file: str | None = None, **kwargs: Any) -> Any:
    """Convert a Paddle model into a deployment folder: ``out_dir/<stem>.onnx`` plus the
    deployment configs found beside the program (``inference.yml``, ``infer_cfg.yml``,
    ``deploy.yaml``, PaddleNLP's config and tokenizer files, ``scaler.pkl``; never weights or
    other files). Keywords: ``copy_configs`` (True), ``overwrite`` (False: outputs that exist
    are refused), ``check`` (full onnx.checker) and those of ``to_onnx``. Returns a
    ``pd2onnx.deploy.FolderResult`` (``onnx_file``, ``files``, ``configs``, ``opset``, ``nodes``).
    """
    from pd2onnx.deploy import export_folder as _export_folder

    return _export_folder(model, out_dir, params_file, **kwargs)


def to_onnx(model: str, params_file: str | None = None, **kwargs: Any) -> ir.Model:
    """Convert a Paddle model to an in-memory ONNX model (``onnx_ir.Model``).

    Keywords: ``opset``, ``auto_opset`` (True), ``optimize`` (True), ``fp16``,
    ``keep_io_types``, ``input_shapes`` ({name: dims}), ``custom_ops`` ({paddle op: onnx op}), ``fold_qdq``
    (quantized models: Q/DQ folded into float weights).

    (Not named ``convert``: that is the converter subpackage, ``pd2onnx.convert``.)
    """
    from pd2onnx.api import convert as _convert

    return _convert(model, params_file, **kwargs)


def verify(model: str, onnx_file: str | None = None, **kwargs: Any) -> VerifyReport:
    """Compare the ONNX model (``onnx_file``, or ``model`` converted now) with the Paddle model
    on the same inputs, and return the report (``report.verdict``: ``match``, ``amplified``,
    ``mismatch`` or ``unexplained``). Keywords: ``params_file``, ``inputs_file`` (.npz) or
    ``inputs`` ({name: array}), ``locate``, ``replay``, ``rtol``, ``atol``, ``opset``,
    ``optimize``, ``seed``, ``batch``, ``paddle_python``, ``runtime`` (``onnxruntime`` or
    ``openvino``). Needs paddle and onnxruntime (docs/verify.md)."""
    from pd2onnx.verification import verify as _verify

    return _verify(model, onnx_file, **kwargs)


__all__ = [
    "CompatWarning",
    "dygraph2onnx",
    "export",
    "export_folder",
    "to_onnx",
    "verify",
    "ConversionError",
    "ModelFormatError",
    "Pd2OnnxError",
    "UnsupportedOpError",
    "UsageError",
    "__version__",
    "load",
]
