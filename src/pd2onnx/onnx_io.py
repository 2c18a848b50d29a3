"""Reading and writing ONNX files safely: atomic writes, external data above 2 GB, and
onnx.checker on every file before it is renamed into place."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile

import onnx_ir as ir

from pd2onnx import mapped_files, progress
from pd2onnx.errors import ConversionError, ModelFormatError, UsageError

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


def write_text(path: str, text: str) -> None:
    """Write a text file (a report) through a temporary name beside it: never a partial file."""
    check_writable(path)
    path = os.path.abspath(path)
    fd, tmp = tempfile.mkstemp(prefix=".pd2onnx-", suffix=".tmp", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save_model(model: ir.Model, path: str, external_data: bool | str | None = None) -> list[str]:
    """Write ``model`` to ``path``; never leaves a partial file. Returns the files written.

    ``external_data``: a file name (beside ``path``) or True (``<path>.data``) writes the
    tensors as ONNX external data; None does so only when the initializers would not fit
    into one protobuf. The written file must pass ``onnx.checker`` before it is renamed into
    place (``check_written``), else a ConversionError carries the checker's message.
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
        progress.stage(f"writing {base}")
        if external_data:
            data_name = external_data if isinstance(external_data, str) else base + ".data"
            if os.path.basename(data_name) != data_name or data_name == base:
                raise UsageError(f"external data file name {data_name!r} must be a plain file name other "
                                 "than the model's", file=path)
            # A name the user chose gets every tensor; automatic external data keeps tiny ones inline.
            threshold = 0 if isinstance(external_data, str) else 256
            ir.save(model, tmp_model, external_data=data_name, size_threshold_bytes=threshold)
            check_written(tmp_model, path)
            os.replace(os.path.join(tmpdir, data_name), os.path.join(directory, data_name))
            written.append(os.path.join(directory, data_name))
        else:
            with open(tmp_model, "wb") as f:
                skeleton = write_streamed(model, f)
            check_written(skeleton.checker_view(tmpdir, base), path)
        os.replace(tmp_model, path)
        return written
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


# ``<paddle op>_<block>_<index>/<OnnxOp>_<k>``: the names the converter gives ONNX nodes
_NODE_NAME = re.compile(r"([A-Za-z_][\w.]*?)_(\d+)_(\d+)/[A-Za-z]\w*?_\d+")


def checker_error(message: str, file: str | None) -> ConversionError:
    """The conversion's failure for an onnx.checker message, naming the Paddle op behind the
    ONNX node the message names (if a converted node is named)."""
    message = message.strip()
    where = ""
    match = _NODE_NAME.search(message)
    if match:
        op, block, index = match.groups()
        where = f"\n  the node comes from Paddle op {op} (block {block}, op #{index})"
    return ConversionError(
        f"the ONNX model does not pass onnx.checker, so it is not written: {message}{where}",
        file=file,
        hint="a corrupt or hand-edited model (e.g. an op without a required input), or a pd2onnx bug: "
        "please report it with the model",
    )


def check_written(model_path: str, target: str) -> None:
    """onnx.checker on a model file by path (external data is looked up beside it, never
    loaded), with its shape inference (``full_check``): a graph whose static shapes cannot
    go together (a damaged program's operands) is one no runtime loads. ``target`` is the
    file the user asked for, named in the error."""
    import onnx

    progress.stage("checking the written model")
    try:
        onnx.checker.check_model(model_path)
        _check_shapes(model_path)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        raise checker_error(str(exc), target) from None


# External tensors up to this size are read for the shape check (shape and index constants
# are tiny; the weights stay on disk).
_SHAPE_CHECK_INLINE = 1 << 16


def _check_shapes(model_path: str) -> None:
    """onnx.checker's full check (strict shape inference) on the written structure: the small
    external tensors (shapes, axes, indices) read in, the weights left on disk."""
    import onnx
    from onnx.external_data_helper import _get_all_tensors, load_external_data_for_tensor, uses_external_data

    proto = onnx.load(model_path, load_external_data=False)
    base = os.path.dirname(model_path)
    for tensor in _get_all_tensors(proto):
        if not uses_external_data(tensor):
            continue
        info = {e.key: e.value for e in tensor.external_data}
        if int(info.get("length", _SHAPE_CHECK_INLINE + 1)) <= _SHAPE_CHECK_INLINE:
            load_external_data_for_tensor(tensor, base)
            tensor.data_location = onnx.TensorProto.DEFAULT
            del tensor.external_data[:]
    onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


# Protobuf tags (field number << 3 | wire type 2) of the fields written by hand.
_MODEL_GRAPH, _GRAPH_INITIALIZER, _TENSOR_RAW_DATA = b"\x3a", b"\x2a", b"\x4a"


def _tensor_header(tensor: ir.TensorProtocol, name: str) -> bytes | None:
    """The TensorProto of ``tensor`` without its data, or None when it has no raw form."""
    import onnx

    if tensor.dtype == ir.DataType.STRING:
        return None
    header = onnx.TensorProto(name=name, data_type=int(tensor.dtype), dims=[int(d) for d in tensor.shape])
    return header.SerializeToString(deterministic=True)


class Skeleton:
    """What ``write_streamed`` wrote, without the weights: the ModelProto bytes minus the
    graph, the graph bytes minus the streamed initializers, and each streamed initializer's
    header with the offset and length of its raw data in the file."""

    def __init__(self, model: bytes, graph: bytes, tensors: list[tuple[bytes, int, int]]):
        self.model, self.graph, self.tensors = model, graph, tensors

    def checker_view(self, directory: str, data_file: str) -> str:
        """A small model file in ``directory`` equal to the written one, except that each
        streamed initializer refers to its bytes in ``data_file`` (as ONNX external data):
        onnx.checker sees the file's whole structure without loading the weights."""
        import onnx

        proto = onnx.ModelProto.FromString(self.model)
        proto.graph.ParseFromString(self.graph)
        for header, offset, length in self.tensors:
            tensor = proto.graph.initializer.add()
            tensor.ParseFromString(header)
            tensor.data_location = onnx.TensorProto.EXTERNAL
            for key, value in (("location", data_file), ("offset", str(offset)), ("length", str(length))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
        path = os.path.join(directory, ".checker-view.onnx")
        with open(path, "wb") as f:
            f.write(proto.SerializeToString())
        return path


def write_streamed(model: ir.Model, f) -> Skeleton:
    """Write ``model`` as one protobuf file without ever holding it whole in memory.

    The graph skeleton is serialised without the main graph's initializers; then each
    initializer is written as a GraphProto field whose raw_data comes straight from the
    tensor (a view of the memory-mapped weights), one tensor at a time. Protobuf readers
    accept fields in any order, so the file is a valid ModelProto. Returns the skeleton
    (for onnx.checker).
    """
    import logging as _logging

    graph = model.graph
    streamed: list[tuple[ir.Value, ir.TensorProtocol, bytes]] = []
    for value in graph.initializers.values():
        tensor = value.const_value
        header = None if tensor is None else _tensor_header(tensor, value.name)
        if header is not None:
            streamed.append((value, tensor, header))
    serde_log = _logging.getLogger("onnx_ir.serde")
    level = serde_log.level
    serde_log.setLevel(_logging.ERROR)  # it warns about the initializers we hide on purpose
    try:
        for value, _, _ in streamed:
            value.const_value = None
        proto = ir.serde.serialize_model(model)
    finally:
        for value, tensor, _ in streamed:
            value.const_value = tensor
        serde_log.setLevel(level)
    graph_bytes = proto.graph.SerializeToString(deterministic=True)
    proto.ClearField("graph")
    sizes = []
    for _, tensor, header in streamed:
        n = tensor.nbytes
        sizes.append(len(header) + 1 + len(_varint(n)) + n)
    graph_len = len(graph_bytes) + sum(1 + len(_varint(size)) + size for size in sizes)
    model_bytes = proto.SerializeToString(deterministic=True)
    f.write(model_bytes)
    f.write(_MODEL_GRAPH + _varint(graph_len) + graph_bytes)
    offset = len(model_bytes) + 1 + len(_varint(graph_len)) + len(graph_bytes)
    total, done = offset + sum(1 + len(_varint(size)) + size for size in sizes), offset
    tensors = []
    for (value, tensor, header), size in zip(streamed, sizes):
        data = _raw_bytes(tensor)
        if len(data) != tensor.nbytes:
            raise RuntimeError(f"initializer {value.name!r}: {len(data)} bytes, expected {tensor.nbytes}")
        lead = _GRAPH_INITIALIZER + _varint(size) + header + _TENSOR_RAW_DATA + _varint(len(data))
        f.write(lead)
        big = isinstance(data, memoryview) and len(data) >= _COPY_MIN
        source = mapped_files.source_of(data.obj) if big else None
        if source is None or not mapped_files.copy_range(source[0], source[1], len(data), source[2], f):
            f.write(data)
        tensors.append((header, offset + len(lead), len(data)))
        offset += len(lead) + len(data)
        done = offset
        progress.advance(done, total)
        del data
    return Skeleton(model_bytes, graph_bytes, tensors)


# Weights at least this large that are untouched views of the memory-mapped params file are
# copied file to file by the kernel (``mapped_files``); smaller ones are written from memory.
_COPY_MIN = 1 << 20


def _raw_bytes(tensor: ir.TensorProtocol) -> memoryview | bytes:
    """The tensor's ONNX raw_data: a zero-copy view for plain little-endian numpy tensors
    (e.g. the memory-mapped weights), ``tobytes()`` otherwise (packed 4-bit types ...)."""
    import numpy as np

    if isinstance(tensor, ir.Tensor) and tensor.dtype.itemsize >= 1 and tensor.dtype != ir.DataType.BOOL:
        arr = tensor.numpy()
        if arr.dtype.byteorder in "=<|" and arr.flags.c_contiguous and arr.nbytes == tensor.nbytes:
            return memoryview(arr.reshape(-1).view(np.uint8))
    return tensor.tobytes()


def to_bytes(model: ir.Model) -> bytes:
    """The serialised model, after onnx.checker (as for a written file)."""
    import onnx

    if initializer_bytes(model) > EXTERNAL_DATA_THRESHOLD:
        raise UsageError(
            "the model is larger than 2 GB and cannot be returned as bytes",
            hint="pass save_file=... so the weights go to an external data file",
        )
    proto = ir.serde.serialize_model(model)
    try:
        onnx.checker.check_model(proto)
    except onnx.checker.ValidationError as exc:
        raise checker_error(str(exc), None) from None
    return proto.SerializeToString(deterministic=True)


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
