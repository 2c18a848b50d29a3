"""Reader for ``.pdiparams``: the save_combine stream of tensor records (FORMATS.md 2).

Records are paired with parameter names in byte-sorted name order (FORMATS.md 2.1). The
file is memory-mapped and every tensor is a numpy view into the map: nothing is copied,
so a 10 GB model costs address space, not memory. Every header field is checked against
the bytes that are left before anything is sized from it.
"""

from __future__ import annotations

import logging
import os
import struct
from dataclasses import dataclass

import numpy as np

from pd2onnx.errors import ModelFormatError
from pd2onnx.mapped_files import map_file
from pd2onnx.paddle import dtypes
from pd2onnx.paddle.framework_pb2 import VarType

log = logging.getLogger(__name__)

PICKLE_HINT = (
    "this is a pickle (paddle.save checkpoint or .pdiparams.info), which pd2onnx never "
    "unpickles; export an inference model instead: paddle.jit.save(layer, path, input_spec=...) "
    "or paddle.static.save_inference_model, and pass the .json/.pdmodel it writes"
)


def is_pickle(head: bytes) -> bool:
    """Pickle protocol 2+ streams start with 0x80 and the protocol number."""
    return len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5


@dataclass(frozen=True)
class Expected:
    """What the program declares for a parameter (dtype None / shape None = unknown)."""

    name: str
    dtype: str | None
    shape: tuple[int, ...] | None


def _map_file(path: str) -> memoryview:
    return map_file(path)  # registered: the writer copies untouched weights file to file


class _Cursor:
    def __init__(self, buf: memoryview, path: str):
        self.buf = buf
        self.pos = 0
        self.path = path

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > len(self.buf):
            raise ModelFormatError(
                f"file ends early at byte {self.pos}: {what} needs {n} more bytes but only "
                f"{len(self.buf) - self.pos} are left",
                file=self.path,
                hint="the params file is truncated or belongs to another model; export it again",
            )

    def unpack(self, fmt: str, what: str) -> tuple:
        size = struct.calcsize(fmt)
        self.need(size, what)
        out = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return out


def read_record(cur: _Cursor, name: str) -> np.ndarray:
    """One record at the cursor -> a read-only numpy view (FORMATS.md 2)."""
    start = cur.pos
    (version,) = cur.unpack("<I", f"header of {name!r}")
    if version != 0:
        raise ModelFormatError(
            f"record for {name!r} at byte {start} has version {version}, expected 0",
            file=cur.path,
            hint="this is not a Paddle params file, or it does not belong to this model",
        )
    (lod_levels,) = cur.unpack("<Q", f"LoD header of {name!r}")
    if lod_levels != 0:
        raise ModelFormatError(
            f"record for {name!r} at byte {start} carries {lod_levels} LoD level(s); "
            "parameters with LoD are not supported",
            file=cur.path,
            hint="parameters of inference models never carry LoD; the file may be corrupt",
        )
    (tensor_version,) = cur.unpack("<I", f"tensor header of {name!r}")
    if tensor_version != 0:
        raise ModelFormatError(
            f"record for {name!r} at byte {start} has tensor version {tensor_version}, expected 0",
            file=cur.path,
            hint="the params file is corrupt or belongs to another model",
        )
    (desc_size,) = cur.unpack("<i", f"descriptor size of {name!r}")
    if desc_size < 0 or desc_size > 1 << 20:
        raise ModelFormatError(
            f"record for {name!r} at byte {start} claims a {desc_size}-byte descriptor",
            file=cur.path,
            hint="the params file is corrupt or belongs to another model",
        )
    cur.need(desc_size, f"descriptor of {name!r}")
    desc = VarType.TensorDesc()
    try:
        desc.ParseFromString(bytes(cur.buf[cur.pos : cur.pos + desc_size]))
    except Exception as exc:  # protobuf raises DecodeError and others
        raise ModelFormatError(
            f"record for {name!r} at byte {start}: unreadable tensor descriptor ({exc})",
            file=cur.path,
            hint="the params file is corrupt or belongs to another model",
        ) from None
    cur.pos += desc_size
    dtype = dtypes.from_legacy_code(desc.data_type)
    if dtype is None:
        raise ModelFormatError(
            f"record for {name!r} at byte {start} has unknown data type code {desc.data_type}",
            file=cur.path,
            hint="the file may come from a newer Paddle; please report it",
        )
    dims = tuple(int(d) for d in desc.dims)
    if any(d < 0 for d in dims):
        raise ModelFormatError(
            f"record for {name!r} at byte {start} has negative dims {list(dims)}",
            file=cur.path,
            hint="the params file is corrupt",
        )
    itemsize = dtypes.itemsize(dtype)
    left = len(cur.buf) - cur.pos
    numel = 1
    for d in dims:  # overflow-safe: stop as soon as the claim exceeds the file
        numel *= d
        if numel * itemsize > left:
            break
    nbytes = numel * itemsize
    cur.need(nbytes, f"data of {name!r} ({dtype}{list(dims)})")
    arr = np.frombuffer(cur.buf, dtype=dtypes.to_numpy(dtype), count=numel, offset=cur.pos)
    cur.pos += nbytes
    return arr.reshape(dims)


def _squeeze_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


def check_record(path: str, exp: Expected, arr: np.ndarray, start: int, warnings: list[str]) -> np.ndarray:
    """Check one record against what the program declares; returns the tensor to use.

    Accepted as Paddle accepts them: dims the program left dynamic (-1), shapes that differ
    only by size-1 dims (``[]`` vs ``[1]``, written by some quantization passes; the record's
    shape is kept), and integer records of float variables (quantized weights stored as int8
    while the program still says float32; the record's dtype is kept, with a warning).
    Anything else would give a wrong or invalid ONNX graph and is an error.
    """
    where = f"record for {exp.name!r}" + (f" at byte {start}" if start >= 0 else "")
    shape = tuple(arr.shape)
    if exp.shape is not None and shape != tuple(exp.shape):
        same_rank_dynamic = -1 in exp.shape and len(exp.shape) == arr.ndim and all(
            d == -1 or d == r for d, r in zip(exp.shape, shape)
        )
        if not same_rank_dynamic and _squeeze_ones(shape) != _squeeze_ones(tuple(exp.shape)):
            raise ModelFormatError(
                f"{where} has shape {list(shape)} ({dtypes.canonical_name(arr.dtype)}) but the program "
                f"declares {list(exp.shape)} ({exp.dtype})",
                file=path,
                hint="the parameters do not belong to this model file; pass the ones saved with it",
            )
    file_dtype = dtypes.canonical_name(arr.dtype)
    if exp.dtype is not None and file_dtype != exp.dtype:
        if file_dtype in _QUANT_STORAGE and exp.dtype in _FLOATS:
            warnings.append(
                f"{path}: parameter {exp.name!r} is stored as {file_dtype} while the program "
                f"declares {exp.dtype} (quantized weights); the stored dtype is kept"
            )
        else:
            raise ModelFormatError(
                f"{where} is {file_dtype}{list(shape)} but the program declares "
                f"{exp.dtype}{list(exp.shape) if exp.shape is not None else ''}",
                file=path,
                hint="the parameters do not belong to this model file; pass the ones saved with it",
            )
    return arr


_QUANT_STORAGE = frozenset({"int8", "uint8", "int16"})
_FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})


def read_params(path: str | None, expected: list[Expected], warnings: list[str]) -> dict[str, np.ndarray]:
    """Read the combined file ``path`` holding the parameters ``expected`` (any order; sorted here).

    A missing file is fine when nothing is expected. Records are checked with
    ``check_record``.
    """
    if not expected:
        if path and os.path.exists(path) and os.path.getsize(path) > 0:
            warnings.append(f"{path}: the program declares no parameters; the params file is ignored")
        return {}
    if path is None or not os.path.exists(path):
        raise ModelFormatError(
            f"the program declares {len(expected)} parameter(s) but "
            + ("there is no params file" if path is None else "the params file does not exist"),
            file=path or "(params file)",
            hint="pass the .pdiparams file written with the model (params_file=... / --params_filename)",
        )
    if os.path.isdir(path):
        raise ModelFormatError("expected a params file, got a directory", file=path)
    buf = _map_file(path)
    if is_pickle(bytes(buf[:2])):
        raise ModelFormatError("not a .pdiparams stream", file=path, hint=PICKLE_HINT)
    cur = _Cursor(buf, path)
    out: dict[str, np.ndarray] = {}
    for exp in sorted(expected, key=lambda e: e.name.encode("utf-8")):
        start = cur.pos
        out[exp.name] = check_record(path, exp, read_record(cur, exp.name), start, warnings)
    if cur.pos != len(buf):
        raise ModelFormatError(
            f"{len(buf) - cur.pos} byte(s) left over after the last of {len(expected)} "
            f"parameter(s) (ended at byte {cur.pos})",
            file=path,
            hint="the params file does not belong to this model file (more parameters than the program declares)",
        )
    return out


def variable_file(directory: str, name: str) -> str:
    """Where the one-file-per-variable layout keeps ``name`` (a ``/`` in it is a sub-folder).
    A name that would lead out of ``directory`` (``..``, an absolute path, a NUL) is an error:
    pd2onnx reads no file a model names outside its folder."""
    parts = name.split("/")
    path = os.path.join(directory, *parts)
    inside = os.path.normpath(path).startswith(os.path.join(os.path.normpath(directory), ""))
    if not name or ".." in parts or "\0" in name or not inside:
        raise ModelFormatError(
            f"parameter name {name!r} is not usable as a file name in the one-file-per-parameter layout",
            file=directory,
            hint="the program file is corrupt or not written by Paddle; pass a combined params file if there is one",
        )
    return path


def read_separate_params(directory: str, expected: list[Expected], warnings: list[str]) -> dict[str, np.ndarray]:
    """The older layout: one file per persistable variable in ``directory``, named by the
    variable, each holding exactly one record (``save_inference_model`` without
    ``params_filename``; FORMATS.md 0). Files the program does not name are ignored.
    """
    missing = [e.name for e in expected if not os.path.isfile(variable_file(directory, e.name))]
    if missing:
        shown = ", ".join(repr(n) for n in sorted(missing)[:50])
        more = f" and {len(missing) - 50} more" if len(missing) > 50 else ""
        raise ModelFormatError(
            f"{len(missing)} of {len(expected)} parameter file(s) are missing: {shown}{more}",
            file=directory,
            hint="this model keeps one file per parameter; copy the whole directory written by "
            "save_inference_model, or pass the combined params file (params_file=... / --params_filename)",
        )
    out: dict[str, np.ndarray] = {}
    for exp in expected:
        path = variable_file(directory, exp.name)
        buf = _map_file(path)
        if is_pickle(bytes(buf[:2])):
            raise ModelFormatError(f"not a tensor record (parameter {exp.name!r})", file=path, hint=PICKLE_HINT)
        cur = _Cursor(buf, path)
        arr = read_record(cur, exp.name)
        if cur.pos != len(buf):
            raise ModelFormatError(
                f"{len(buf) - cur.pos} byte(s) left over after the record of {exp.name!r}",
                file=path,
                hint="each file of this layout holds one tensor; the file is corrupt or not a parameter",
            )
        out[exp.name] = check_record(path, exp, arr, -1, warnings)
    return out
