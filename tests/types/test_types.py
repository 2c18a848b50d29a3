"""Every value typed (issue 19) and the computed type wins over Paddle's declaration (issue 20).

- Over every op case (tests/ops, control flow included) and the cases here, in both formats:
  after conversion, optimized and not, every value of every graph (If/Loop bodies included)
  carries an element type, every tensor a rank, and the serialized file says so (value_info,
  graph inputs/outputs); the only exceptions are values whose rank the graph does not fix
  (a Loop-carried value or an If output whose rank differs between iterations or branches),
  which the typing engine must prove, and which are listed below with why.
- Legacy programs whose output is declared float32 while an int64 result flows into it:
  converted with one warning, loaded by ONNX Runtime, equal to Paddle (``test_case_equals_paddle``
  checks every case here at every opset, optimized too).
- OpenVINO compiles and runs a legacy/PIR ``if`` and a ``while`` with a MatMul in its body.
"""

from __future__ import annotations

import logging
import os

import numpy as np
import onnx
import onnx_ir as ir
import pytest

from harness import builder
from harness.cases import REGISTRY, load_case_files, params
from harness.check import check_built, compare, load_io, run_onnx
from pd2onnx.api import convert
from pd2onnx.optimize.value_types import all_values, infer_types, missing

HERE = os.path.dirname(os.path.abspath(__file__))
load_case_files(os.path.join(os.path.dirname(HERE), "ops"), "opcases")
load_case_files(HERE, "typecases")
CASES = [n for n, c in REGISTRY.items() if "/tests/ops/" in c.module or "/tests/types/" in c.module]

# Programs that really give a value different ranks (Paddle computes them dynamically): no rank
# is claimed for those values, and the typing engine must prove it. Most are dy2static's
# placeholders: a loop variable that has no value before the loop starts as a 0-D `full` (PIR)
# or a [1] "no value" marker (legacy) and gets its real rank in the body.
RANK_CHANGES = {
    ("cf_while_return", "legacy"): "dy2static's return placeholder is [1] or the [N, 3] result, depending on the branch",
}


def _built(name: str, fmt: str):
    """A named case's build (skipped when PD2ONNX_CASE_FILES leaves its case file out)."""
    if name not in REGISTRY:
        pytest.skip(f"{name}'s case file is not loaded (PD2ONNX_CASE_FILES)")
    built = builder.get(REGISTRY[name], fmt)
    assert not built.error, built.error
    return built


def _untyped(model: ir.Model) -> list[str]:
    """Values of ``model`` without a type or rank that the typing engine does not prove open
    (its proof runs on the model itself, after the check)."""
    lacking = missing(model)
    if not lacking:
        return []
    report = infer_types(model)
    return [f"{v.name} ({v.producer().op_type if v.producer() else 'input'})"
            for _, v in lacking if v not in report.no_rank]


def _proto_untyped(proto: onnx.ModelProto) -> list[str]:
    """Node outputs the serialized graphs give no element type or no shape (tensors)."""
    bad: list[str] = []

    def walk(graph: onnx.GraphProto) -> None:
        infos = {vi.name: vi.type for vi in [*graph.value_info, *graph.output, *graph.input]}
        for node in graph.node:
            for name in node.output:
                t = infos.get(name)
                if not name:
                    continue
                if t is None or not t.WhichOneof("value"):
                    bad.append(name)
                elif t.HasField("tensor_type") and (not t.tensor_type.elem_type or not t.tensor_type.HasField("shape")):
                    bad.append(name)
            for attr in node.attribute:
                if attr.HasField("g"):
                    walk(attr.g)

    walk(proto.graph)
    return bad


@pytest.mark.parametrize("case,fmt", params(names=CASES))
def test_every_value_typed(case, fmt):
    if fmt not in case.formats:
        pytest.skip(f"{fmt} not built for this case: {case.why}")
    built = builder.get(case, fmt)
    if built.error:
        pytest.skip(f"Paddle could not build the case (test_ops reports it): {built.error[:200]}")
    for optimized in (False, True):
        model = convert(built.model_file, built.params_file, optimize=optimized)
        tag = f"{case.name}[{fmt}{', optimized' if optimized else ''}]"
        lacking = missing(model)
        proto_bad = _proto_untyped(ir.serde.serialize_model(model))
        if (case.name, fmt) in RANK_CHANGES:
            assert lacking, f"{tag}: every value is typed now; remove the case from RANK_CHANGES"
            assert not _untyped(model), f"{tag}: values without type or rank: {_untyped(model)}"
            continue
        assert not lacking, f"{tag}: values without type or rank: {_untyped(model) or [v.name for _, v in lacking]}"
        assert not proto_bad, f"{tag}: the file gives these values no type or shape: {proto_bad[:10]}"
        if not optimized:
            assert (case.name, fmt) not in RANK_CHANGES, f"{tag}: every value has a rank now: drop it from RANK_CHANGES"


@pytest.mark.parametrize("case,fmt", params(names=[n for n, c in REGISTRY.items() if "/tests/types/" in c.module]))
def test_case_equals_paddle(case, fmt):
    """The cases here, checked like every op case (every opset, ONNX Runtime against Paddle)."""
    if fmt not in case.formats:
        pytest.skip(f"{fmt} not built for this case: {case.why}")
    check_built(builder.get(case, fmt))


# ------------------------------------------------------------------------------ declarations
@pytest.mark.parametrize("name,rank", [("types_declared_argmax", 1), ("types_declared_argmax_rank", 2),
                                       ("types_declared_crf", 2)])
def test_declared_float32_output_carries_int64(name, rank, caplog):
    built = _built(name, "legacy")
    from pd2onnx.paddle import load

    program = load(built.model_file)
    (declared,) = program.outputs
    assert declared.dtype == "float32", "the case must declare its output float32"
    assert len(declared.shape) == rank
    _, wants = load_io(os.path.join(built.dir, "io.npz"))
    assert wants[0].dtype == np.int64, "Paddle's kernels give int64 whatever the declaration"

    with caplog.at_level(logging.WARNING, logger="pd2onnx"):
        model = convert(built.model_file, optimize=False)
    said = [r.getMessage() for r in caplog.records if "Paddle declares" in r.getMessage()]
    assert len(said) == 1, said
    assert declared.name in said[0] and "float32" in said[0] and "int64" in said[0], said[0]
    assert f"float32 of rank {rank}" in said[0] and f"int64 of rank {wants[0].ndim}" in said[0], said[0]
    assert model.graph.outputs[0].dtype == ir.DataType.INT64
    assert len(model.graph.outputs[0].shape) == wants[0].ndim


def test_agreeing_declaration_gives_no_warning(caplog):
    built = _built("types_while_matmul", "legacy")
    with caplog.at_level(logging.WARNING, logger="pd2onnx"):
        convert(built.model_file, optimize=False)
    assert not [r for r in caplog.records if "Paddle declares" in r.getMessage()]


@pytest.mark.parametrize("name", ["cf_array_read_length", "cf_static_cond", "cf_while_captured"])
@pytest.mark.parametrize("fmt", ["legacy", "pir"])
def test_fp16_keeps_the_types(name, fmt):
    """``to_fp16`` after the optimizer: every value still typed, the file valid (sequences keep
    float32 elements), ONNX Runtime runs it and stays close to Paddle."""
    built = _built(name, fmt)
    inputs, wants = load_io(os.path.join(built.dir, "io.npz"))
    model = convert(built.model_file, built.params_file, fp16=True, keep_io_types=True)
    assert not missing(model), [v.name for _, v in missing(model)]
    assert any(v.dtype == ir.DataType.FLOAT16 for _, v in all_values(model)), "nothing became float16"
    onnx.checker.check_model(ir.serde.serialize_model(model), full_check=True)
    for k, (got, want) in enumerate(zip(run_onnx(model, inputs), wants)):
        compare(f"{name}[{fmt}, fp16] output {k}", got, want, 1e-2, 1e-2)


# ------------------------------------------------------------------------------ OpenVINO
def _openvino_run(path: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    ov = pytest.importorskip("openvino")
    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(inputs)
    return [np.asarray(result[out]) for out in compiled.outputs]


@pytest.mark.parametrize("name,op,body_op", [("types_if_matmul", "If", "MatMul"), ("types_while_matmul", "Loop", "MatMul")])
@pytest.mark.parametrize("fmt", ["legacy", "pir"])
def test_openvino_runs_control_flow(name, op, body_op, fmt, tmp_path):
    built = _built(name, fmt)
    inputs, wants = load_io(os.path.join(built.dir, "io.npz"))
    for optimized in (False, True):
        model = convert(built.model_file, optimize=optimized)
        nodes = [n for n in model.graph if n.op_type == op]
        assert nodes, f"no {op} in the converted model"
        bodies = [g for n in nodes for a in n.attributes.values() if a.type == ir.AttributeType.GRAPH
                  for g in [a.as_graph()]]
        assert any(n.op_type == body_op for g in bodies for n in g), f"no {body_op} inside the {op}"
        for n in nodes:
            assert all(o.shape is not None for o in n.outputs), f"{op} outputs without rank"
        path = str(tmp_path / f"{name}-{fmt}-{optimized}.onnx")
        ir.save(model, path)
        gots = _openvino_run(path, inputs)
        for k, (got, want) in enumerate(zip(gots, wants)):
            compare(f"{name}[{fmt}] OpenVINO output {k}", got, want, 1e-5, 1e-5)
