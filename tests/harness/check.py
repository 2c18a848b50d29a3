"""Convert a built case with pd2onnx, run ONNX Runtime, compare with Paddle's outputs."""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable

import numpy as np
import onnx
import onnx_ir as ir

from pd2onnx.api import convert as _convert
from pd2onnx.convert import newest_opset


def convert(*args, **kwargs) -> ir.Model:
    """pd2onnx's ``convert``, failing when it lets any warning through (numpy's, a
    library's): a user must never see one for a model that converts. Warnings are recorded,
    not raised, so that no ``except`` inside the converter can swallow one."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _convert(*args, **kwargs)
    assert not caught, "converting let warnings through:\n" + "\n".join(
        f"  {w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in caught
    )
    return model


@functools.lru_cache(maxsize=1)
def ort_max_opset() -> int:
    """The newest opset ONNX Runtime here accepts (probed once)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    for opset in range(newest_opset(), 6, -1):
        graph = helper.make_graph(
            [helper.make_node("Identity", ["x"], ["y"])], "probe",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        )
        opset_id = helper.make_opsetid("", opset)
        model = helper.make_model(graph, opset_imports=[opset_id])
        model.ir_version = helper.find_min_ir_version_for([opset_id])
        try:
            ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            return opset
        except Exception:
            continue
    return 7


def run_onnx(model: ir.Model, inputs: list[np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    proto = ir.serde.serialize_model(model)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(sess.get_inputs(), inputs)}
    return sess.run(None, feeds)


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != Paddle's {want.dtype}"
    assert got.shape == want.shape, f"{name}: shape {got.shape} != Paddle's {want.shape}"
    if want.dtype.kind in "biuU" or want.dtype == bool:
        mismatch = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        assert mismatch.size == 0, (
            f"{name}: {mismatch.size} of {want.size} elements differ, first at {mismatch[0]}: "
            f"{got.reshape(-1)[mismatch[0]]} != {want.reshape(-1)[mismatch[0]]}"
        )
        return
    g = got.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
    w = want.astype(g.dtype)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    assert np.array_equal(nan_g, nan_w), f"{name}: NaN positions differ"
    g, w = np.where(nan_g, 0, g), np.where(nan_w, 0, w)
    err = np.abs(g - w)
    bad = err > atol + rtol * np.abs(w)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        raise AssertionError(
            f"{name}: {int(bad.sum())} of {w.size} elements out of tolerance (rtol {rtol}, atol {atol}); "
            f"max abs diff {float(err.max()):.3g}; first at flat index {i}: {g.reshape(-1)[i]} vs {w.reshape(-1)[i]}"
        )


def opsets_for(model_file: str, explicit: tuple[int, ...] | None,
               params_file: str | None = None) -> tuple[list[int], int]:
    """(opsets to run in ONNX Runtime, the lowest opset the model converts at)."""
    if explicit:
        return sorted(set(explicit)), min(explicit)
    lowest = convert(model_file, params_file, opset=7, auto_opset=True, optimize=False).opset_imports[""]
    top = ort_max_opset()
    return sorted({o for o in (lowest, 17, top) if lowest <= o <= top}), lowest


def load_io(path: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(inputs ``in<i>``, Paddle's outputs ``out<i>``) of an ``io.npz`` the builders write."""
    io = np.load(path)
    inputs = [io[f"in{i}"] for i in range(sum(k.startswith("in") for k in io.files))]
    wants = [io[f"out{i}"] for i in range(sum(k.startswith("out") for k in io.files))]
    return inputs, wants


def check_model_file(
    name: str,
    model_file: str,
    io_sets: list[tuple[list[np.ndarray], list[np.ndarray]]],
    rtol: float,
    atol: float,
    *,
    params_file: str | None = None,
    opsets: tuple[int, ...] | None = None,
    optimize_at: int | None = 17,
    scaled_atol: bool = False,
    compare_outputs: Callable[[str, list[np.ndarray], list[np.ndarray]], None] | None = None,
) -> list[int]:
    """Convert at each opset (``opsets_for``; also optimized at ``optimize_at``), check with
    onnx.checker (full), run every (inputs, Paddle's outputs) set in ONNX Runtime and compare.
    ``scaled_atol`` multiplies atol by max(1, max|Paddle's output|). ``compare_outputs(tag,
    outputs, Paddle's)`` replaces the output-by-output comparison (e.g. detections compared as
    sets, ``harness.detection``). Returns the opsets run."""
    run_at, _ = opsets_for(model_file, opsets, params_file)
    for opset in run_at:
        for optimized in (False, True) if opset == optimize_at else (False,):
            model = convert(model_file, params_file, opset=opset, auto_opset=False, optimize=optimized)
            onnx.checker.check_model(ir.serde.serialize_model(model), full_check=True)
            for inputs, wants in io_sets:
                gots = run_onnx(model, inputs)
                shape = f", input {list(inputs[0].shape)}" if len(io_sets) > 1 else ""
                tag = f"{name}[opset {opset}{', optimized' if optimized else ''}{shape}]"
                assert len(gots) == len(wants), f"{tag}: {len(gots)} outputs, Paddle has {len(wants)}"
                if compare_outputs is not None:
                    compare_outputs(tag, gots, wants)
                    continue
                for k, (got, want) in enumerate(zip(gots, wants)):
                    tol = atol
                    if scaled_atol and want.size and want.dtype.kind == "f":
                        tol *= max(1.0, float(np.nanmax(np.abs(want))))
                    compare(f"{tag} output {k}", got, want, rtol, tol)
    return run_at


def check_built(built, optimize_at: int | None = 17) -> list[int]:
    """Run every check on one built case; returns the opsets it ran at."""
    case = built.case
    if built.error:
        raise AssertionError(f"Paddle could not build case {case.name} ({built.fmt}):\n{built.error}")
    ran = check_model_file(
        f"{case.name}[{built.fmt}]", built.model_file, [load_io(os.path.join(built.dir, "io.npz"))],
        case.rtol, case.atol, params_file=built.params_file, opsets=case.opsets, optimize_at=optimize_at,
        scaled_atol=case.scaled_atol,
    )
    newest = newest_opset()
    if newest > max(ran):  # ONNX Runtime cannot run it; the checker still must pass
        model = convert(built.model_file, built.params_file, opset=newest, auto_opset=False, optimize=False)
        onnx.checker.check_model(ir.serde.serialize_model(model), full_check=True)
    return ran
