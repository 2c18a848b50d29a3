"""Find a model's files, sniff the format and load a Program with its parameters."""

from __future__ import annotations

import logging
import os

from pd2onnx.errors import ModelFormatError
from pd2onnx.paddle.params import PICKLE_HINT, is_pickle, read_params
from pd2onnx.paddle.program import Program

log = logging.getLogger(__name__)

MODEL_SUFFIXES = (".json", ".pdmodel")
PARAMS_SUFFIX = ".pdiparams"
_DIR_MODEL_NAMES = ("inference.json", "model.json", "inference.pdmodel", "model.pdmodel", "__model__", "model")
_DIR_PARAMS_NAMES = ("__params__", "params")


def _params_beside(model_file: str) -> str | None:
    stem, ext = os.path.splitext(model_file)
    candidates = [stem + PARAMS_SUFFIX] if ext in MODEL_SUFFIXES else []
    candidates.append(model_file + PARAMS_SUFFIX)
    directory = os.path.dirname(model_file)
    if os.path.basename(model_file) in ("__model__", "model"):
        candidates += [os.path.join(directory, n) for n in _DIR_PARAMS_NAMES]
    for cand in candidates:
        if os.path.isfile(cand):
            return cand
    return None


def locate(path: str, params_file: str | None = None) -> tuple[str, str | None]:
    """Resolve a directory, model file or path prefix to (model file, params file or None)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        found = [os.path.join(path, n) for n in _DIR_MODEL_NAMES if os.path.isfile(os.path.join(path, n))]
        if not found:
            found = sorted(
                os.path.join(path, n)
                for n in os.listdir(path)
                if n.endswith(MODEL_SUFFIXES) and os.path.isfile(os.path.join(path, n))
            )
        pir = [f for f in found if f.endswith(".json")]
        if len(found) > 1 and len({os.path.splitext(f)[0] for f in found}) > 1:
            raise ModelFormatError(
                "the directory holds several models: " + ", ".join(os.path.basename(f) for f in found),
                file=path,
                hint="pass the model file itself (e.g. dir/inference.json)",
            )
        if not found:
            raise ModelFormatError(
                "no Paddle model in this directory (looked for *.json, *.pdmodel, __model__)",
                file=path,
                hint="pass the directory or file written by paddle.jit.save / save_inference_model",
            )
        model = pir[0] if pir else found[0]
    elif os.path.isfile(path):
        model = path
    else:
        for ext in MODEL_SUFFIXES:
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
        return model, params_file
    return model, _params_beside(model)


def sniff(head: bytes) -> str:
    """'pir', 'legacy' or 'pickle' from a file's first bytes."""
    if is_pickle(head):
        return "pickle"
    if head.lstrip()[:1] == b"{":
        return "pir"
    return "legacy"


def load(path: str, params_file: str | None = None) -> Program:
    """Read a Paddle inference model (either format) with its parameters; no paddle import."""
    model_file, params_path = locate(path, params_file)
    if model_file.endswith(".pdiparams.info"):
        raise ModelFormatError(
            "this is the pickled parameter-name metadata that Paddle 2.x writes beside a model; "
            "pd2onnx neither needs nor unpickles it",
            file=model_file,
            hint="pass the .pdmodel (or .json) file beside it, or the directory / path prefix",
        )
    if model_file.endswith(PARAMS_SUFFIX):
        raise ModelFormatError(
            "this is a params file, not a model file",
            file=model_file,
            hint="pass the .json or .pdmodel beside it (or the directory / path prefix)",
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

        program, expected = read_pir(data, model_file)
    else:
        from pd2onnx.paddle.legacy import read_legacy

        program, expected = read_legacy(data, model_file)
    program.params_file = params_path if expected else None
    program.params = read_params(params_path, expected, program.warnings)
    for message in program.warnings:
        log.warning(message)
    return program
