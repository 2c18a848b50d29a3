"""The inputs ``verify`` feeds both runtimes: random by default, or an ``.npz`` keyed by input name.

A legacy input with a LoD (``lod_level`` >= 1: its first dim concatenates sequences) also
needs its sequences' lengths for Paddle: the array ``<input>.lod`` (1-D integers summing to
the input's first dim) gives them; by default the whole input is one sequence. pd2onnx's
models take one sequence per LoD input (docs/sequence_models.md), so lengths of several
sequences are refused: the ONNX side could not be compared with them."""

from __future__ import annotations

import os

import numpy as np

from pd2onnx.errors import UsageError
from pd2onnx.paddle import dtypes
from pd2onnx.paddle.program import Program, Value


def random_inputs(program: Program, seed: int = 0, batch: int = 1) -> dict[str, np.ndarray]:
    """Deterministic random inputs: normal floats, small non-negative ints, random bools."""
    rng = np.random.default_rng(seed)
    out = {}
    for v in program.inputs:
        shape = tuple(batch if d < 0 else d for d in (v.shape or ()))
        dtype = dtypes.to_numpy(v.dtype or "float32")
        if dtype.kind == "f" or v.dtype in ("bfloat16",):
            arr = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind in "iu":
            arr = rng.integers(0, 10, size=shape).astype(dtype)
        elif dtype.kind == "b":
            arr = rng.random(shape) < 0.5
        else:
            raise UsageError(f"cannot make random values for input {v.name!r} of dtype {v.dtype}",
                             hint="pass --inputs file.npz")
        out[v.name] = arr
    return out


LOD_SUFFIX = ".lod"


def read_inputs(path: str, program: Program) -> dict[str, np.ndarray]:
    return check_inputs(load_npz(path), program, path)


def load_npz(path: str) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` at ``path``, by key."""
    if not os.path.isfile(path):
        raise UsageError("inputs file not found", file=path)
    try:
        data = np.load(path, allow_pickle=False)
        if not hasattr(data, "files"):
            raise UsageError("not an .npz file (a single array)", file=path,
                             hint="save with numpy.savez(path, **{name: array})")
        arrays = {name: data[name] for name in data.files}  # read here: numpy reads each array lazily
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"not a readable .npz file ({' '.join(str(exc).split())[:200]})", file=path,
                         hint="save with numpy.savez (plain numeric arrays, no Python objects)") from None
    return arrays


def check_inputs(arrays: dict[str, np.ndarray], program: Program, path: str | None = None) -> dict[str, np.ndarray]:
    """The arrays, one per model input by name, each of the shape and dtype the model takes
    (``<input>.lod`` arrays are sequence lengths: see ``sequence_lods``)."""
    names = [v.name for v in program.inputs]
    lod_names = {v.name + LOD_SUFFIX for v in program.inputs if v.lod_level >= 1}
    missing = [n for n in names if n not in arrays]
    extra = [n for n in arrays if n not in names and n not in lod_names]
    if missing or extra:
        raise UsageError(
            f"the inputs are arrays {sorted(arrays)} but the model's inputs are {names}",
            file=path,
            hint="name each array after a model input: numpy.savez(path, **{name: array}); a legacy LoD "
                 f"input's sequence lengths go in '<input>{LOD_SUFFIX}'",
        )
    out = {}
    for v in program.inputs:
        arr = np.asarray(arrays[v.name])
        _check_input(path, v, arr)
        out[v.name] = arr
    return out


def _check_input(path: str | None, v: Value, arr: np.ndarray) -> None:
    if v.shape is not None:
        if arr.ndim != len(v.shape) or any(d >= 0 and d != a for d, a in zip(v.shape, arr.shape)):
            raise UsageError(
                f"input {v.name!r} has shape {list(arr.shape)} but the model expects {list(v.shape)} (-1 = any)",
                file=path,
            )
    if v.dtype and arr.dtype != dtypes.to_numpy(v.dtype):
        raise UsageError(f"input {v.name!r} has dtype {arr.dtype} but the model expects {v.dtype}", file=path)


def sequence_lods(program: Program, feeds: dict[str, np.ndarray], arrays: dict[str, np.ndarray] | None = None,
                  path: str | None = None) -> dict[str, list[int]]:
    """The one-level LoD (sequence lengths) of each legacy input whose ``lod_level`` is >= 1:
    ``arrays["<input>.lod"]`` where given, else one sequence covering the input's first dim."""
    lods = {}
    for v in program.inputs:
        if v.lod_level < 1:
            continue
        if v.lod_level > 1:
            raise UsageError(f"input {v.name!r} carries {v.lod_level} LoD levels; verify feeds one level only",
                             file=program.model_file)
        rows = int(np.shape(feeds[v.name])[0]) if np.ndim(feeds[v.name]) else 1
        given = None if arrays is None else arrays.get(v.name + LOD_SUFFIX)
        if given is None:
            lods[v.name] = [rows]
            continue
        lengths = np.asarray(given)
        if lengths.ndim != 1 or lengths.dtype.kind not in "iu" or (lengths < 0).any():
            raise UsageError(f"'{v.name}{LOD_SUFFIX}' must be a 1-D array of non-negative integer sequence lengths, "
                             f"not {lengths.dtype}{list(lengths.shape)}", file=path)
        if int(lengths.sum()) != rows:
            raise UsageError(f"the sequence lengths '{v.name}{LOD_SUFFIX}' {lengths.tolist()} sum to "
                             f"{int(lengths.sum())}, but input {v.name!r} has {rows} rows", file=path,
                             hint="the lengths of the sequences concatenated along the input's first dim")
        if len(lengths) != 1:
            raise UsageError(f"'{v.name}{LOD_SUFFIX}' gives {len(lengths)} sequences, but pd2onnx's models take one "
                             "sequence per LoD input (docs/sequence_models.md)", file=path,
                             hint="verify one sequence per run: its length is the input's first dim")
        lods[v.name] = [int(n) for n in lengths]
    return lods
