"""The Python API behind ``pd2onnx.to_onnx`` / ``pd2onnx.export`` / ``pd2onnx.dygraph2onnx`` and the CLI.

``export`` and ``dygraph2onnx`` take paddle2onnx's signatures exactly (by position and by
keyword), so scripts switch by changing the import: every argument is honoured, or has no
meaning here and is accepted with a warning, or is refused; unknown keywords are a
TypeError naming them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pd2onnx.errors import UsageError

if TYPE_CHECKING:
    import onnx_ir as ir

log = logging.getLogger(__name__)


class CompatWarning(UserWarning):
    """A paddle2onnx argument that has no effect in pd2onnx."""


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
    custom_ops: dict[str, str] | None = None,
    fold_qdq: bool = False,
    strip_provenance: bool = False,
) -> ir.Model:
    """Read a Paddle model and return the ONNX model (onnx_ir), optimized by default.

    ``custom_ops`` maps Paddle op types to custom-domain ONNX op names (domain ``Paddle``).
    ``fold_qdq`` turns a quantized model into a float one (Q/DQ folded into the weights).
    The model records which Paddle op each node and value came from (``pd2onnx verify``
    uses it; docs/verify.md); ``strip_provenance`` leaves that record out.
    """
    from pd2onnx import progress
    from pd2onnx.convert import export_program
    from pd2onnx.convert.registry import custom_ops as custom_op_scope
    from pd2onnx.paddle import load

    progress.stage("reading the model")
    program = load(model, params_file)
    progress.stage(f"converting {sum(1 for _ in program.walk_ops())} ops")
    with custom_op_scope(custom_ops):
        onnx_model = export_program(program, opset=opset, auto_opset=auto_opset)
    if optimize or fp16 or input_shapes or fold_qdq:
        from pd2onnx.optimize import optimize as run_optimizer

        progress.stage("optimizing")
        report = run_optimizer(onnx_model, input_shapes=input_shapes, fold_qdq=fold_qdq)
        log.info("optimizer: %s", report.format().splitlines()[0] if report.format() else "")
    if fp16:
        from pd2onnx.optimize import to_fp16

        progress.stage("converting to float16")
        for message in to_fp16(onnx_model, keep_io_types=keep_io_types):
            log.warning(message)
    from pd2onnx import provenance

    if strip_provenance:
        provenance.strip(onnx_model)
    else:
        provenance.store(onnx_model)
    return onnx_model


# paddle2onnx arguments that mean nothing here: (name, the value that needs no warning, why)
_NO_EFFECT = (
    ("dist_prim_all", False, "pd2onnx maps combined ops directly; there is nothing to decompose"),
    ("enable_experimental_op", True, "pd2onnx has no experimental-op switch; every supported op is converted"),
    ("deploy_backend", "onnxruntime", "pd2onnx writes standard ONNX (QDQ for quantized models) that "
     "ONNX Runtime, TensorRT and OpenVINO all read"),
    ("calibration_file", "", "pd2onnx writes no TensorRT calibration cache; quantized models carry "
     "their scales as QDQ nodes"),
    ("optimize_tool", "polygraphy", "pd2onnx runs its own optimizer (enable_optimize=False skips it)"),
)


def no_effect_notes(values: dict[str, Any]) -> list[str]:
    """``name=value (why)`` for each paddle2onnx argument in ``values`` set to something that
    has no effect here."""
    notes = []
    for name, default, why in _NO_EFFECT:
        if name not in values:
            continue
        value = values.get(name, default)
        if isinstance(value, str) and isinstance(default, str):
            same = value.strip().lower() == default
        else:
            same = value == default
        if not same:
            notes.append(f"{name}={value!r} ({why})")
    return notes


def warn_no_effect(values: dict[str, Any], stacklevel: int = 3) -> None:
    """One warning naming every paddle2onnx argument that was set but has no effect here."""
    notes = no_effect_notes(values)
    if notes:
        warnings.warn("these paddle2onnx arguments have no effect in pd2onnx: " + "; ".join(notes),
                      CompatWarning, stacklevel=stacklevel)


def _reject_unknown(function: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        names = ", ".join(repr(k) for k in sorted(kwargs))
        raise TypeError(f"{function}() got unexpected keyword argument(s): {names}")


@contextlib.contextmanager
def _verbose_logging(verbose: bool) -> Iterator[None]:
    """paddle2onnx's ``verbose``: INFO messages of pd2onnx on stderr for this call."""
    if not verbose:
        yield
        return
    logger = logging.getLogger("pd2onnx")
    handler = None
    if not logging.getLogger().handlers and not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[pd2onnx] %(levelname)s: %(message)s"))
        logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.setLevel(level)
        if handler is not None:
            logger.removeHandler(handler)


def _external_name(save_file: str | None, external_file: str) -> str:
    """The external-data location relative to the model (ONNX resolves it from the model's folder)."""
    if save_file is None:
        raise UsageError(
            "external_file needs save_file: weights written to a separate file cannot be returned as bytes",
            hint="pass save_file=... as well, or leave external_file empty",
        )
    model_dir = os.path.dirname(os.path.abspath(save_file))
    path = external_file if os.path.isabs(external_file) else os.path.join(model_dir, external_file)
    if os.path.dirname(os.path.abspath(path)) != model_dir:
        raise UsageError(
            "the external data file must sit in the same directory as the model",
            file=external_file,
            hint=f"use a file name in {model_dir}",
        )
    return os.path.basename(path)


def export(
    model_filename: str,
    params_filename: str | None = None,
    save_file: str | None = None,
    opset_version: int | None = None,
    auto_upgrade_opset: bool = True,
    dist_prim_all: bool = False,
    verbose: bool = False,
    enable_onnx_checker: bool = True,
    enable_experimental_op: bool = True,
    enable_optimize: bool = True,
    custom_op_info: dict[str, str] | None = None,
    deploy_backend: str = "onnxruntime",
    calibration_file: str = "",
    external_file: str = "",
    export_fp16_model: bool = False,
    *,
    optimize_tool: str = "polygraphy",
    keep_io_types: bool = False,
    input_shapes: dict[str, Any] | None = None,
    strip_provenance: bool = False,
    **unknown: Any,
) -> bytes | None:
    """Convert a Paddle model; write ``save_file`` (returns None) or return the ONNX bytes.

    paddle2onnx 2.x's signature, position by position. ``model_filename`` may also be a model
    directory or path prefix; ``params_filename`` None/"" finds the weights beside the model
    (a combined file or one file per variable), a directory means one file per variable.
    ``opset_version`` None = pd2onnx's default (17; paddle2onnx's is 7), raised when an op
    needs more unless ``auto_upgrade_opset`` is False. ``verbose`` logs progress to stderr.
    ``enable_onnx_checker`` runs onnx.checker (full). ``enable_optimize`` runs pd2onnx's
    optimizer. ``custom_op_info`` maps Paddle op types to custom ONNX ops (domain
    ``Paddle``). ``external_file`` writes the weights as ONNX external data to that file
    (beside ``save_file``). ``export_fp16_model`` converts to float16, inputs and outputs
    included (as paddle2onnx; ``keep_io_types=True`` keeps them float32).
    ``dist_prim_all``, ``enable_experimental_op``, ``deploy_backend`` other than
    onnxruntime, ``calibration_file`` and ``optimize_tool`` have no effect here: a warning
    names the ones set. ``input_shapes`` ({name: dims}) fixes input shapes (pd2onnx only).
    ``strip_provenance`` leaves out the record of which Paddle op each node came from
    (pd2onnx only; ``pd2onnx verify`` uses it).
    """
    from pd2onnx.onnx_io import check_writable, save_model, to_bytes

    _reject_unknown("export", unknown)
    warn_no_effect({"dist_prim_all": dist_prim_all, "enable_experimental_op": enable_experimental_op,
                    "deploy_backend": deploy_backend, "calibration_file": calibration_file,
                    "optimize_tool": optimize_tool})
    external = _external_name(save_file, external_file) if external_file else None
    if save_file is not None:
        check_writable(save_file)
    with _verbose_logging(verbose):
        onnx_model = convert(
            os.fspath(model_filename), os.fspath(params_filename) if params_filename else None,
            opset=opset_version, auto_opset=auto_upgrade_opset, optimize=enable_optimize,
            fp16=export_fp16_model, keep_io_types=keep_io_types, input_shapes=input_shapes,
            custom_ops=custom_op_info, strip_provenance=strip_provenance,
        )
        if enable_onnx_checker:
            check(onnx_model)
        if save_file is None:
            return to_bytes(onnx_model)
        files = save_model(onnx_model, save_file, external_data=external)
        log.info("wrote %s", ", ".join(files))
    return None


# paddle2onnx's dygraph2onnx config names -> export() keywords
_DYGRAPH_EXPORT_CONFIGS = {
    "enable_auto_update_opset": "auto_upgrade_opset",
    "enable_onnx_checker": "enable_onnx_checker",
    "enable_dist_prim_all": "dist_prim_all",
    "enable_optimization": "enable_optimize",
    "enable_verbose": "verbose",
}
_JIT_SAVE_CONFIGS = frozenset(
    {"output_spec", "with_hook", "combine_params", "clip_extra", "skip_forward", "input_names_after_prune"}
)
_EXPORT_KEYWORDS = frozenset(
    {"auto_upgrade_opset", "dist_prim_all", "verbose", "enable_onnx_checker", "enable_experimental_op",
     "enable_optimize", "custom_op_info", "deploy_backend", "calibration_file", "external_file",
     "export_fp16_model", "optimize_tool", "keep_io_types", "input_shapes", "strip_provenance"}
)


def dygraph2onnx(layer: Any, save_file: str, input_spec: list | None = None, opset_version: int | None = None,
                 **configs: Any) -> None:
    """paddle2onnx's ``dygraph2onnx`` (and the body of ``paddle.onnx.export``), for users with
    Paddle installed: saves ``layer`` with ``paddle.jit.save`` into a temporary directory,
    converts it to ``save_file`` and removes the directory. ``configs`` take paddle.jit.save's
    options (``output_spec``, ...), paddle2onnx's config names (``enable_onnx_checker``,
    ``enable_auto_update_opset``, ``enable_verbose``, ...) and ``export``'s keywords.
    """
    import shutil
    import tempfile

    unknown = {k: v for k, v in configs.items()
               if k not in _JIT_SAVE_CONFIGS and k not in _DYGRAPH_EXPORT_CONFIGS and k not in _EXPORT_KEYWORDS}
    _reject_unknown("dygraph2onnx", unknown)
    try:
        import paddle
    except ImportError:
        raise UsageError(
            "dygraph2onnx needs paddlepaddle to save the layer (pd2onnx itself does not)",
            hint="pip install paddlepaddle, or save the model with paddle.jit.save and run pd2onnx convert on it",
        ) from None
    save_configs = {k: v for k, v in configs.items() if k in _JIT_SAVE_CONFIGS}
    export_kwargs = {_DYGRAPH_EXPORT_CONFIGS.get(k, k): v for k, v in configs.items() if k not in _JIT_SAVE_CONFIGS}
    workdir = tempfile.mkdtemp(prefix="pd2onnx-dygraph-")
    try:
        paddle.jit.save(layer, os.path.join(workdir, "model"), input_spec=input_spec, **save_configs)
        export(workdir, None, save_file, opset_version, **export_kwargs)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def check(onnx_model: ir.Model) -> None:
    """onnx.checker with full checking (models over 2 GB are checked without weights)."""
    import onnx
    import onnx_ir as ir

    from pd2onnx.onnx_io import EXTERNAL_DATA_THRESHOLD, initializer_bytes

    if initializer_bytes(onnx_model) > EXTERNAL_DATA_THRESHOLD:
        log.warning("model over 2 GB: no full check (it needs the weights in memory); the written file "
                    "still gets onnx.checker's structural check")
        return
    onnx.checker.check_model(ir.serde.serialize_model(onnx_model), full_check=True)
