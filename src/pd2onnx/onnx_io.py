"""Reading and writing ONNX files safely: atomic writes, external data above 2 GB."""

from __future__ import annotations

import os
import shutil
import tempfile

import onnx_ir as ir

from pd2onnx.errors import ModelFormatError, UsageError

# Protobuf cannot serialise messages of 2 GiB or more; stay clear of it.
EXTERNAL_DATA_THRESHOLD = 1_900_000_000


def initializer_bytes(model: ir.Model) -> int:
    total = 0
    for graph in (model.graph, *model.graph.subgraphs()):
        for value in graph.initializers.values():
            if value.const_value is not None:
                total += value.const_value.nbytes
    return total


def check_writable(path: str) -> None:
    """Fail early (before any work) when ``path`` cannot be written."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise UsageError("the output path is a directory", file=path, hint="give a file name such as model.onnx")
    if not os.path.isdir(directory):
        raise UsageError("the output directory does not exist", file=path, hint="create it first")
    if not os.access(directory, os.W_OK):
        raise UsageError("the output directory is not writable", file=path, hint="choose another output path")


def save_model(model: ir.Model, path: str, external_data: bool | None = None) -> list[str]:
    """Write ``model`` to ``path``; never leaves a partial file. Returns the files written.

    With ``external_data`` None, tensors go to ``<path>.data`` only when the initializers
    would not fit into one protobuf.
    """
    check_writable(path)
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    if external_data is None:
        external_data = initializer_bytes(model) > EXTERNAL_DATA_THRESHOLD
    tmpdir = tempfile.mkdtemp(prefix=".pd2onnx-", dir=directory)
    try:
        base = os.path.basename(path)
        tmp_model = os.path.join(tmpdir, base)
        written = [path]
        if external_data:
            data_name = base + ".data"
            ir.save(model, tmp_model, external_data=data_name)
            os.replace(os.path.join(tmpdir, data_name), os.path.join(directory, data_name))
            written.append(os.path.join(directory, data_name))
        else:
            proto = ir.serde.serialize_model(model)
            with open(tmp_model, "wb") as f:
                f.write(proto.SerializeToString(deterministic=True))
        os.replace(tmp_model, path)
        return written
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def to_bytes(model: ir.Model) -> bytes:
    if initializer_bytes(model) > EXTERNAL_DATA_THRESHOLD:
        raise UsageError(
            "the model is larger than 2 GB and cannot be returned as bytes",
            hint="pass save_file=... so the weights go to an external data file",
        )
    return ir.serde.serialize_model(model).SerializeToString(deterministic=True)


def load_model(path: str) -> ir.Model:
    if not os.path.isfile(path):
        raise ModelFormatError("no such file", file=path, hint="check the path")
    try:
        return ir.load(path)
    except Exception as exc:  # onnx raises DecodeError and others
        raise ModelFormatError(
            f"not a readable ONNX model ({type(exc).__name__}: {str(exc)[:200]})",
            file=path,
            hint="the file is truncated or not an ONNX model",
        ) from None
