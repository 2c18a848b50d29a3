"""The inputs ``verify`` feeds both runtimes: random by default, or an ``.npz`` keyed by input name."""

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


def read_inputs(path: str, program: Program) -> dict[str, np.ndarray]:
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
    return check_inputs(arrays, program, path)


def check_inputs(arrays: dict[str, np.ndarray], program: Program, path: str | None = None) -> dict[str, np.ndarray]:
    """The arrays, one per model input by name, each of the shape and dtype the model takes."""
    names = [v.name for v in program.inputs]
    missing = [n for n in names if n not in arrays]
    extra = [n for n in arrays if n not in names]
    if missing or extra:
        raise UsageError(
            f"the inputs are arrays {sorted(arrays)} but the model's inputs are {names}",
            file=path,
            hint="name each array after a model input: numpy.savez(path, **{name: array})",
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
