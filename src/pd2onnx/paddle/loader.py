"""Find a model's files, sniff the format and load a Program with its parameters.

Layouts read (docs/formats.md):

- ``X.json`` / ``X.pdmodel`` with ``X.pdiparams`` (Paddle 2.x/3.x ``jit.save`` and
  ``save_inference_model``);
- a directory with the program as ``__model__``, ``model`` or ``*.pdmodel`` and the weights
  either in one combined file (``__params__``, ``params`` or ``*.pdiparams``) or as **one file
  per persistable variable** named by the variable (Paddle 1.x/2.x ``save_inference_model``
  without ``params_filename``, PaddleHub and PaddleDetection 1.x exports).

Which file of a folder is the program is decided by content (``discover.py``): toolkits
and people leave configs and notes in JSON beside the model.
"""

from __future__ import annotations

import logging
import os

from pd2onnx.errors import ModelFormatError
from pd2onnx.paddle.discover import (
    COMBINED_NAMES,
    PARAMS_SUFFIX,
    PROGRAM_SUFFIXES,
    discover,
    looks_like_json,
    own_weights,
)
from pd2onnx.paddle.params import (
    PICKLE_HINT,
    Expected,
    is_pickle,
    read_params,
    read_separate_params,
    variable_file,
)
from pd2onnx.paddle.program import Program

log = logging.getLogger(__name__)



def _combined_beside(model_file: str) -> str | None:
    """The combined params file that goes with ``model_file``, if there is one."""
    own = own_weights(model_file)
    if own is not None:
        return own
    directory = os.path.dirname(model_file) or "."
    for name in COMBINED_NAMES:
        if os.path.isfile(os.path.join(directory, name)):
            return os.path.join(directory, name)
    # Any single *.pdiparams beside it (e.g. __model__ with weights.pdiparams).
    others = sorted(n for n in os.listdir(directory) if n.endswith(PARAMS_SUFFIX))
    if len(others) == 1 and os.path.isfile(os.path.join(directory, others[0])):
        return os.path.join(directory, others[0])
    return None


def locate(path: str, params_file: str | None = None) -> tuple[str, str | None, list[tuple[str, str]]]:
    """Resolve a directory, model file or path prefix to (model file, params file or None,
    files of a directory left aside with why).

    The params file is the one given, or the combined file found beside the model; None
    means: no combined file (the program may have no parameters, or one file per variable).
    """
    path = os.fspath(path)
    ignored: list[tuple[str, str]] = []
    if os.path.isdir(path):
        found = discover(path)
        model, ignored = found.model, found.ignored
        log.info("%s: the program is %s%s", path, os.path.basename(model),
                 "".join(f"; ignored {name} ({why})" for name, why in ignored))
    elif os.path.isfile(path):
        model = path
    else:
        for ext in PROGRAM_SUFFIXES:
            if os.path.isfile(path + ext):
                model = path + ext
                break
        else:
            raise ModelFormatError(
                "no such file or directory (also tried the suffixes .json and .pdmodel)",
                file=path,
                hint="check the path; a model is a .json or .pdmodel file with a .pdiparams beside it",
            )
    if params_file is not None:  # a missing one is an error only if the program has parameters
        return model, os.fspath(params_file), ignored
    return model, _combined_beside(model), ignored


def sniff(head: bytes) -> str:
    """'pir', 'legacy' or 'pickle' from a file's first bytes."""
    if is_pickle(head):
        return "pickle"
    if looks_like_json(head):
        return "pir"
    return "legacy"


def read_program(model_file: str) -> tuple[Program, list[Expected]]:
    """The program (parameters not attached) and the parameters it declares."""
    if model_file.endswith(".pdiparams.info"):
        raise ModelFormatError(
            "this is the pickled parameter-name metadata that Paddle 2.x writes beside a model; "
            "pd2onnx neither needs nor unpickles it",
            file=model_file,
            hint="pass the .pdmodel (or .json) file beside it, or the directory / path prefix",
        )
    if model_file.endswith(PARAMS_SUFFIX) or os.path.basename(model_file) in COMBINED_NAMES:
        raise ModelFormatError(
            "this is a params file, not a model file",
            file=model_file,
            hint="pass the .json/.pdmodel/__model__ beside it (or the directory / path prefix)",
        )
    try:
        with open(model_file, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ModelFormatError(f"cannot read the model file ({exc.strerror})", file=model_file) from None
    kind = sniff(data[:64])
    if kind == "pickle":
        raise ModelFormatError("not a Paddle program", file=model_file, hint=PICKLE_HINT)
    if kind == "pir":
        from pd2onnx.paddle.pir import read_pir

        return read_pir(data, model_file)
    from pd2onnx.paddle.legacy import read_legacy

    return read_legacy(data, model_file)


def _attach_params(program: Program, params: str | None, expected: list[Expected]) -> None:
    """Read the parameters from the combined file or from the per-variable files."""
    model_dir = os.path.dirname(program.model_file) or "."
    if not expected:
        read_params(params if params and os.path.isfile(params) else None, [], program.warnings)
        return
    if params is not None and os.path.isdir(params):  # asked for the per-variable layout
        if not any(os.path.isfile(variable_file(params, e.name)) for e in expected):
            fallback = _combined_beside(program.model_file) if os.path.samefile(params, model_dir) else None
            if fallback is not None:
                program.warnings.append(
                    f"{params}: no per-parameter files here; reading the combined file "
                    f"{os.path.basename(fallback)} beside the model instead"
                )
                params = fallback
    if params is None:
        if not any(os.path.isfile(variable_file(model_dir, e.name)) for e in expected):
            raise ModelFormatError(
                f"the program declares {len(expected)} parameter(s) but neither a combined params "
                f"file (.pdiparams, __params__, params) nor per-parameter files (e.g. "
                f"{expected[0].name!r}) are beside it",
                file=program.model_file,
                hint="pass the params file written with the model (params_file=... / --params / "
                "--params_filename), or keep the per-parameter files in the model's directory",
            )
        params = model_dir
    if os.path.isdir(params):
        program.params_layout = "separate"
        program.params = read_separate_params(params, expected, program.warnings)
    else:
        program.params_layout = "combined"
        program.params = read_params(params, expected, program.warnings)
    program.params_file = params


def load(path: str, params_file: str | None = None) -> Program:
    """Read a Paddle inference model (either format, any layout) with its parameters; no
    paddle import. ``params_file`` may be a combined file or the directory of per-variable
    files; by default it is found beside the model."""
    model_file, params_path, ignored = locate(path, params_file)
    program, expected = read_program(model_file)
    program.ignored_files = ignored
    _attach_params(program, params_path, expected)
    for message in program.warnings:
        log.warning(message)
    return program
