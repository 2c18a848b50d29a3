"""Convert a built case with pd2onnx, run ONNX Runtime (and OpenVINO at the default opset),
compare with Paddle's outputs."""

from __future__ import annotations

import functools
import json
import os
import re
import tempfile
import warnings
from collections.abc import Callable

import numpy as np
import onnx
import onnx_ir as ir

from harness.cpu import openvino_cpu_classes
from harness.openvino_run import OpenVinoCrashed, OpenVinoFailed, OpenVinoRefused, run_file
from pd2onnx.api import convert as _convert
from pd2onnx.convert import newest_opset
from pd2onnx.convert.runtime_notes import CAP_ARTIFACT, CPU_CLASSES, OPENVINO_OPSET, openvino_limit


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


def save_for_openvino(model: ir.Model | onnx.ModelProto, folder: str) -> str:
    """The model written into ``folder`` for OpenVINO to read, its weights beside it (OpenVINO
    maps them: a 490 MB model reads in 0.05 s, not the 13 s its ONNX reader takes on the same
    model as one protobuf in memory)."""
    path = os.path.join(folder, "model.onnx")
    if isinstance(model, ir.Model):
        ir.save(model, path, external_data="model.data")
    else:
        onnx.save(model, path)
    return path


def graph_input_names(model: ir.Model | onnx.ModelProto) -> list[str]:
    if isinstance(model, ir.Model):
        return [v.name for v in model.graph.inputs]
    inits = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


def compile_openvino(model: ir.Model | onnx.ModelProto, cpu: str | None = None):
    """The model compiled by OpenVINO's CPU plugin (on the CPU class ``cpu``, the machine's
    own by default; ``harness.openvino_run``), as a function of the inputs (in the ONNX
    graph's input order) returning the outputs in graph order. Raises ``OpenVinoRefused``
    here when OpenVINO cannot read or compile it."""
    folder = tempfile.TemporaryDirectory()
    path = save_for_openvino(model, folder.name)
    run_file(path, [], cpu)  # compiles: a refusal is raised here
    names = graph_input_names(model)

    def run(inputs: list[np.ndarray]) -> list[np.ndarray]:
        assert folder.name  # the file lives as long as the function
        return run_file(path, [dict(zip(names, inputs))], cpu)[0]

    return run


def run_openvino(model: ir.Model, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return compile_openvino(model)(inputs)


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
    with np.errstate(invalid="ignore"):  # inf - inf: equal infinities are no error
        err = np.where(g == w, 0, np.abs(g - w))
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
    run_at, lowest, _ = _opsets_and_lowest(model_file, explicit, params_file)
    return run_at, lowest


def _opsets_and_lowest(model_file: str, explicit: tuple[int, ...] | None,
                       params_file: str | None = None) -> tuple[list[int], int, ir.Model | None]:
    """``opsets_for``, and the conversion that found the lowest opset (opset 7 raised
    automatically: the same model as a conversion at that opset), when it was made."""
    if explicit:
        return sorted(set(explicit)), min(explicit), None
    model = convert(model_file, params_file, opset=7, auto_opset=True, optimize=False)
    lowest = model.opset_imports[""]
    top = ort_max_opset()
    return sorted({o for o in (lowest, 17, top) if lowest <= o <= top}), lowest, model


def load_io(path: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(inputs ``in<i>``, Paddle's outputs ``out<i>``) of an ``io.npz`` the builders write."""
    io = np.load(path)
    inputs = [io[f"in{i}"] for i in range(sum(k.startswith("in") for k in io.files))]
    wants = [io[f"out{i}"] for i in range(sum(k.startswith("out") for k in io.files))]
    return inputs, wants


def openvino_opset(run_at: list[int]) -> int:
    """The opset OpenVINO runs: the default one (17), or, for a case that needs more (or is
    run at other opsets only), the nearest one run above it, else the highest run."""
    above = [o for o in run_at if o >= OPENVINO_OPSET]
    return min(above) if above else max(run_at)


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
    onnx.checker (full), run every (inputs, Paddle's outputs) set in ONNX Runtime and compare;
    then run the conversion at ``openvino_opset`` (optimized where it is converted optimized:
    what a default ``pd2onnx convert`` writes) in OpenVINO and compare the same way, unless
    ``runtime_notes.OPENVINO_LIMITS`` lists the case (``check_openvino``).
    ``scaled_atol`` multiplies atol by max(1, max|Paddle's output|). ``compare_outputs(tag,
    outputs, Paddle's)`` replaces the output-by-output comparison (e.g. detections compared as
    sets, ``harness.detection``). Returns the opsets run."""
    run_at, lowest, lowest_model = _opsets_and_lowest(model_file, opsets, params_file)
    ov_opset, ov_model, ov_proto = openvino_opset(run_at), None, None
    for opset in run_at:
        for optimized in (False, True) if opset == optimize_at else (False,):
            if opset == lowest and not optimized and lowest_model is not None:
                model = lowest_model  # converted already, to find the lowest opset
            else:
                model = convert(model_file, params_file, opset=opset, auto_opset=False, optimize=optimized)
            proto = ir.serde.serialize_model(model)
            onnx.checker.check_model(proto, full_check=True)
            if opset == ov_opset:
                ov_model, ov_proto = model, proto
            for inputs, wants in io_sets:
                gots = run_onnx(model, inputs)
                shape = f", input {list(inputs[0].shape)}" if len(io_sets) > 1 else ""
                tag = f"{name}[opset {opset}{', optimized' if optimized else ''}{shape}]"
                compare_all(tag, gots, wants, rtol, atol, scaled_atol, compare_outputs)
    check_openvino(name, ov_model, ov_proto, io_sets, rtol, atol, scaled_atol, compare_outputs)
    return run_at


def compare_all(tag: str, gots: list, wants: list[np.ndarray], rtol: float, atol: float,
                scaled_atol: bool, compare_outputs: Callable | None = None) -> None:
    assert len(gots) == len(wants), f"{tag}: {len(gots)} outputs, Paddle has {len(wants)}"
    if compare_outputs is not None:
        compare_outputs(tag, gots, wants)
        return
    for k, (got, want) in enumerate(zip(gots, wants)):
        tol = atol
        if scaled_atol and want.size and want.dtype.kind == "f":
            tol *= max(1.0, float(np.nanmax(np.abs(want))))
        compare(f"{tag} output {k}", got, want, rtol, tol)


def _openvino_outcome(name: str, path: str, names: list[str], io_sets, rtol, atol, scaled_atol,
                      compare_outputs: Callable | None, cpu: str) -> str | None:
    """None when OpenVINO (on the CPU class ``cpu``) runs the model file and equals Paddle on
    every input set, else why not (the first line of OpenVINO's error, or the comparison's)."""
    try:
        results = run_file(path, [dict(zip(names, inputs)) for inputs, _ in io_sets], cpu)
    except OpenVinoRefused as e:
        return f"OpenVINO refuses the model: {e}"
    except OpenVinoFailed as e:
        return f"OpenVINO fails running it: {e}"
    except OpenVinoCrashed as e:
        return f"OpenVINO crashes the process ({e})"
    for (inputs, wants), gots in zip(io_sets, results):
        shape = f", input {list(inputs[0].shape)}" if len(io_sets) > 1 else ""
        try:
            compare_all(f"{name}[OpenVINO{shape}]", gots, wants, rtol, atol, scaled_atol, compare_outputs)
        except AssertionError as e:
            return f"OpenVINO differs from Paddle: {e}"
    return None


def check_openvino(name: str, model: ir.Model | None, proto: onnx.ModelProto | None, io_sets,
                   rtol: float, atol: float, scaled_atol: bool = False,
                   compare_outputs: Callable | None = None) -> None:
    """Run the model (``proto`` is its serialized form) in OpenVINO on every CPU class this
    machine can run (its own and, capped, each lower one: ``harness.cpu.openvino_cpu_classes``)
    and compare with Paddle, or check that the failure is the one
    ``runtime_notes.OPENVINO_LIMITS`` lists for ``name`` on that class. Fails on an unlisted
    failure and on a listing that is stale (OpenVINO now passes, or fails otherwise)."""
    if model is None or proto is None:
        return
    where = "pd2onnx/convert/runtime_notes.py OPENVINO_LIMITS"
    with tempfile.TemporaryDirectory() as tmp:
        path = save_for_openvino(model, tmp)
        names = graph_input_names(model)
        for k, cpu in enumerate(openvino_cpu_classes()):
            outcome = _openvino_outcome(name, path, names, io_sets, rtol, atol, scaled_atol, compare_outputs, cpu)
            record = os.environ.get("PD2ONNX_RUNTIME_RECORD")
            if k == 0 and record:
                record_constructs(record, name, proto, outcome)
            if k > 0 and outcome is not None and re.search(CAP_ARTIFACT, outcome):
                if record:  # not judged on this class: the cap cannot show what its CPUs do (runtime_notes)
                    with open(record, "a") as f:
                        f.write(json.dumps({"case": name, "cap_artifact": cpu, "openvino": outcome[:300]}) + "\n")
                continue
            on = f"on {cpu} kernels" + ("" if k == 0 else f" (capped: ONEDNN_MAX_CPU_ISA={CPU_CLASSES[cpu]})")
            limit, listed = openvino_limit(name, cpu), openvino_limit(name)
            if limit is None:
                also = f" (listed as {listed.key} for {', '.join(listed.cpus)} only)" if listed else ""
                assert outcome is None, (
                    f"{name}, OpenVINO {on}: {outcome}{also}\n(ONNX Runtime equals Paddle; make the mapper's "
                    f"form one that OpenVINO computes alike on every CPU class, or list the case with the "
                    f"OpenVINO limitation that stops it, and the CPU classes it shows on, in {where})"
                )
                continue
            assert outcome is not None, (
                f"{name} is listed in {where} ({limit.key}) but OpenVINO {on} now runs it and equals "
                "Paddle: remove it from the listing" + (" or narrow its CPU classes" if k else "")
            )
            assert re.search(limit.match, outcome), (
                f"{name} is listed in {where} ({limit.key}: /{limit.match}/) but OpenVINO {on} fails "
                f"otherwise: {outcome}"
            )


def record_constructs(path: str, name: str, proto: onnx.ModelProto, outcome: str | None) -> None:
    """Append to ``path`` (JSON lines) the ONNX constructs the model uses (operators, Resize
    modes, element types; every subgraph included) and OpenVINO's outcome: what
    ``tools/gen_runtimes_doc.py`` checks against other runtimes' documented support."""
    import json

    ops: set[str] = set()
    types: set[int] = set()

    def walk(graph: onnx.GraphProto) -> None:
        for v in [*graph.input, *graph.output, *graph.value_info]:
            types.add(v.type.tensor_type.elem_type or v.type.sequence_type.elem_type.tensor_type.elem_type)
            if v.type.HasField("sequence_type"):
                ops.add("(sequence value)")
        types.update(t.data_type for t in graph.initializer)
        for node in graph.node:
            op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
            ops.add(op)
            for a in node.attribute:
                if op == "Resize" and a.name == "mode":
                    ops.add(f"Resize:{a.s.decode()}")
                if a.name == "to":
                    types.add(a.i)
                if a.type == onnx.AttributeProto.TENSOR:
                    types.add(a.t.data_type)
                for g in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
                    walk(g)

    walk(onnx.shape_inference.infer_shapes(proto).graph)
    renamed = {"FLOAT": "float32", "DOUBLE": "float64"}
    names = sorted({renamed.get(n, n.lower()) for n in map(onnx.TensorProto.DataType.Name, types - {0})})
    opset = next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))
    with open(path, "a") as f:
        f.write(json.dumps({"case": name, "opset": opset, "ops": sorted(ops), "types": names,
                            "openvino": outcome or "ok"}) + "\n")


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
