"""The Python API behind ``pd2onnx.export`` / ``pd2onnx.convert`` and the CLI."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import onnx_ir as ir

log = logging.getLogger(__name__)


def convert(
    model: str,
    params_file: str | None = None,
    *,
    opset: int | None = None,
    auto_opset: bool = True,
    optimize: bool = True,
    fp16: bool = False,
    keep_io_types: bool = False,
    input_shapes: dict[str, Any] | None = None,
) -> ir.Model:
    """Read a Paddle model and return the ONNX model (onnx_ir), optimized by default."""
    from pd2onnx.convert import export_program
    from pd2onnx.paddle import load

    program = load(model, params_file)
    onnx_model = export_program(program, opset=opset, auto_opset=auto_opset)
    if optimize or fp16 or input_shapes:
        from pd2onnx.optimize import optimize as run_optimizer

        report = run_optimizer(onnx_model, input_shapes=input_shapes)
        log.info("optimizer: %s", report.format().splitlines()[0] if report.format() else "")
    if fp16:
        from pd2onnx.optimize import to_fp16

        for message in to_fp16(onnx_model, keep_io_types=keep_io_types):
            log.warning(message)
    return onnx_model


def export(
    model_file: str,
    params_file: str | None = None,
    save_file: str | None = None,
    opset_version: int | None = None,
    *,
    auto_opset: bool = True,
    optimize: bool = True,
    fp16: bool = False,
    keep_io_types: bool = False,
    enable_onnx_checker: bool = False,
    **_compat: Any,
) -> bytes | None:
    """Paddle2ONNX-compatible entry point: write ``save_file`` or return the model bytes."""
    from pd2onnx.onnx_io import check_writable, save_model, to_bytes

    if save_file is not None:
        check_writable(save_file)
    onnx_model = convert(model_file, params_file, opset=opset_version, auto_opset=auto_opset,
                         optimize=optimize, fp16=fp16, keep_io_types=keep_io_types)
    if enable_onnx_checker:
        check(onnx_model)
    if save_file is None:
        return to_bytes(onnx_model)
    save_model(onnx_model, save_file)
    return None


def check(onnx_model: ir.Model) -> None:
    """onnx.checker with full checking (models over 2 GB are checked without weights)."""
    import onnx
    import onnx_ir as ir

    from pd2onnx.onnx_io import EXTERNAL_DATA_THRESHOLD, initializer_bytes

    if initializer_bytes(onnx_model) > EXTERNAL_DATA_THRESHOLD:
        log.warning("model over 2 GB: checking the graph only")
        return
    onnx.checker.check_model(ir.serde.serialize_model(onnx_model), full_check=True)
