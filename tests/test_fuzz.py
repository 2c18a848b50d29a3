"""tools/fuzz.py's mutants end clean, and what it found stays fixed.

A clean end is a Pd2OnnxError (not an internal error) with no output file left, or an output
file that onnx.checker (full) accepts. The regression cases below are each built
deterministically from a committed fixture (tests/fixtures/smoke/, tests/fixtures/fuzz/),
through the CLI in this process.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import shutil
import sys

import numpy as np
import onnx
import pytest

from pd2onnx import cli, provenance
from pd2onnx.errors import ConversionError, InternalError, ModelFormatError, UsageError

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
SMOKE = os.path.join(TESTS, "fixtures", "smoke")
FUZZ = os.path.join(TESTS, "fixtures", "fuzz")


def _fuzz_module():
    spec = importlib.util.spec_from_file_location("pd2onnx_fuzz_tool", os.path.join(ROOT, "tools", "fuzz.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


fuzz = _fuzz_module()


def run_cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, err.getvalue()


def copy_fixture(name: str, tmp_path) -> str:
    target = str(tmp_path / "model")
    shutil.copytree(os.path.join(SMOKE if os.path.isdir(os.path.join(SMOKE, name)) else FUZZ, name), target)
    return target


def pir_doc(folder: str) -> tuple[str, dict]:
    path = fuzz.program_file(folder)
    with open(path) as f:
        return path, json.load(f)


def pir_ops(doc: dict) -> list[dict]:
    """Every op of a PIR program, sub-blocks included, in file order."""
    out = []

    def walk(block):
        for op in block["ops"]:
            out.append(op)
            for region in op.get("regions") or []:
                for inner in region["blocks"]:
                    walk(inner)

    walk(doc["program"]["regions"][0]["blocks"][0])
    return out


def expect_clean_error(tmp_path, folder: str, error: type, *needles: str, options=()) -> str:
    """The conversion fails with ``error`` (message holding every needle), prints it without a
    traceback and leaves no output file."""
    out = str(tmp_path / "out" / "model.onnx")
    os.makedirs(os.path.dirname(out))
    with pytest.raises(error) as info:
        cli.main(["convert", folder, "-o", out, "-q", "--debug", *options])
    message = str(info.value)
    for needle in needles:
        assert needle in message, message
    code, stderr = run_cli(["convert", folder, "-o", out, "-q", *options])
    assert code == 1 and "Traceback" not in stderr and stderr.startswith("pd2onnx: error: "), stderr
    assert os.listdir(os.path.dirname(out)) == []
    return message


# ---------------------------------------------------------------------------- the fuzzer


def test_mutants_end_clean():
    """A few hundred seeded mutants of every fixture kind (verify's inputs and provenance
    included, with Paddle when it is installed) end in a clean error or a checked file."""
    outcomes = fuzz.run(300, seed=0)
    findings = [o.line() for o in outcomes if not o.clean]
    assert not findings, f"{len(findings)} mutant(s) did not end clean:\n" + "\n".join(findings)
    # the mix is what it claims to be: both ends are reached, every fixture kind is mutated
    assert sum(o.status == "converted" for o in outcomes) > 30
    assert sum(o.status == "refused" for o in outcomes) > 100
    kinds = {o.fixture.split("-")[0] for o in outcomes}
    assert {"smoke/paddle1x", "fuzz/cf_if_in_while", "fuzz/det_yolo_box", "fuzz/dequantize_conv_weight_axis_0",
            "verify:smoke/paddlex"} <= kinds, kinds


def test_mutants_are_deterministic(tmp_path):
    a = fuzz.run_mutant(7, 3, str(tmp_path))
    b = fuzz.run_mutant(7, 3, str(tmp_path))
    assert (a.fixture, a.mutation, a.options, a.status) == (b.fixture, b.mutation, b.options, b.status)


# ---------------------------------------------------------------------------- operands checked


def test_batch_norm_variance_rewired_pir(tmp_path):
    """A batch_norm whose variance operand is another parameter (12 values for 4 channels)
    crashed the optimizer's Conv+BN fusion (ValueError: operands could not be broadcast)."""
    folder = copy_fixture("paddlex", tmp_path)
    path, doc = pir_doc(folder)
    params = {op["A"][3]: op["O"]["%"] for op in doc["program"]["regions"][0]["blocks"][0]["ops"] if op["#"] == "p"}
    bn = next(op for op in pir_ops(doc) if op["#"] == "1.batch_norm_")
    bn["I"][2] = {"%": params["linear_0.w_0"]}  # operands: x, mean, variance, scale, bias
    with open(path, "w") as f:
        json.dump(doc, f)
    expect_clean_error(tmp_path, folder, ModelFormatError, "batch_norm (block 0, op #", "operand variance (linear_0.w_0)",
                       "has shape [4, 3], expected [4]", "4 channels")


def test_batch_norm_variance_rewired_legacy(tmp_path):
    from pd2onnx.paddle.framework_pb2 import ProgramDesc

    folder = copy_fixture("paddledet", tmp_path)
    path = fuzz.program_file(folder)
    desc = ProgramDesc.FromString(open(path, "rb").read())
    bn = next(op for op in desc.blocks[0].ops if op.type == "batch_norm")
    var = next(v for v in bn.inputs if v.parameter == "Variance")
    weight = next(v.name for v in desc.blocks[0].vars if v.name.endswith(".w_0") and "linear" in v.name)
    var.arguments[0] = weight
    with open(path, "wb") as f:
        f.write(desc.SerializeToString())
    expect_clean_error(tmp_path, folder, ModelFormatError, "batch_norm (block 0, op #", f"operand variance ({weight})",
                       "has shape [4, 3], expected [4]")


def test_conv_filter_for_other_channels(tmp_path):
    """A conv2d filter rewired to a parameter of another rank or channel count."""
    folder = copy_fixture("paddlex", tmp_path)
    path, doc = pir_doc(folder)
    params = {op["A"][3]: op["O"]["%"] for op in doc["program"]["regions"][0]["blocks"][0]["ops"] if op["#"] == "p"}
    conv = next(op for op in pir_ops(doc) if op["#"] == "1.conv2d")
    conv["I"][1] = {"%": params["linear_0.w_0"]}
    with open(path, "w") as f:
        json.dump(doc, f)
    expect_clean_error(tmp_path, folder, ModelFormatError, "conv2d (block 0, op #", "operand filter (linear_0.w_0)",
                       "has shape [4, 3], expected rank 4")


# ---------------------------------------------------------------------------- fuzz findings


def test_pir_attribute_without_its_value(tmp_path):
    """A dropped "D" of a float attribute read as NaN and crashed the scale mapper."""
    folder = copy_fixture("cf_while_array_stack-pir", tmp_path)
    path, doc = pir_doc(folder)
    scale = next(op for op in pir_ops(doc) if op["#"] == "1.scale")
    del scale["A"][0]["AT"]["D"]
    with open(path, "w") as f:
        json.dump(doc, f)
    expect_clean_error(tmp_path, folder, ModelFormatError, "attribute '0.a_f32' has no value (D)")


def test_integer_scale_with_nan_bias(tmp_path):
    folder = copy_fixture("cf_while_array_stack-pir", tmp_path)
    path, doc = pir_doc(folder)
    counter = next(op for op in pir_ops(doc) if op["#"] == "1.scale" and "t_i64" in json.dumps(op["O"]))
    counter["A"][0]["AT"] = {"#": "0.a_f32", "VD": "NaN"}
    with open(path, "w") as f:
        json.dump(doc, f)
    expect_clean_error(tmp_path, folder, ConversionError, "scale (block 1, op #", "bias nan on an integer tensor (int64)")


def test_static_shapes_that_cannot_go_together(tmp_path):
    """A matmul operand rewired to a value of another width converted (exit 0) into a file
    whose shapes onnx.checker's full check rejects: the written file is checked in full."""
    folder = copy_fixture("paddlex", tmp_path)
    path, doc = pir_doc(folder)
    ops = pir_ops(doc)
    matmul = next(op for op in ops if op["#"] == "1.matmul")
    relu = next(op for op in ops if op["#"] == "1.relu")
    matmul["I"][1] = relu["O"][0] if isinstance(relu["O"], list) else relu["O"]
    matmul["I"][1] = {"%": matmul["I"][1]["%"]}
    with open(path, "w") as f:
        json.dump(doc, f)
    expect_clean_error(tmp_path, folder, ConversionError, "does not pass onnx.checker", "MatMul",
                       "the node comes from Paddle op matmul", options=["--opset", "11"])


def legacy_desc(folder: str):
    from pd2onnx.paddle.framework_pb2 import ProgramDesc

    path = fuzz.program_file(folder)
    with open(path, "rb") as f:
        return path, ProgramDesc.FromString(f.read())


def save_desc(path: str, desc) -> None:
    with open(path, "wb") as f:
        f.write(desc.SerializeToString())


def test_legacy_assign_without_its_input(tmp_path):
    """An assign inside a while body whose X lost its argument passed None on (AttributeError
    in the provenance tagging)."""
    folder = copy_fixture("cf_if_in_while-legacy", tmp_path)
    path, desc = legacy_desc(folder)
    assign = desc.blocks[1].ops[13]
    assert assign.type == "assign"
    assign.inputs[0].ClearField("arguments")
    save_desc(path, desc)
    expect_clean_error(tmp_path, folder, ModelFormatError, "assign (block 1, op #13): no value for its output out: "
                       "an input it needs is absent")


def test_pir_while_without_operands(tmp_path):
    folder = copy_fixture("cf_while_array_stack-pir", tmp_path)
    path, doc = pir_doc(folder)
    next(op for op in pir_ops(doc) if op["#"] == "1.while")["I"] = []
    with open(path, "w") as f:
        json.dump(doc, f)
    expect_clean_error(tmp_path, folder, ModelFormatError, "while (block 0, op #", "it has no operands")


def test_legacy_integer_scale_by_nan(tmp_path):
    folder = copy_fixture("cf_if_in_while-legacy", tmp_path)
    path, desc = legacy_desc(folder)
    scale = desc.blocks[1].ops[8]
    assert scale.type == "scale"
    next(a for a in scale.attrs if a.name == "scale").f = float("nan")
    save_desc(path, desc)
    expect_clean_error(tmp_path, folder, ConversionError, "scale (block 1, op #8): scale nan on an integer tensor")


def test_legacy_number_attribute_typed_as_text(tmp_path):
    """yolo_box's iou_aware_factor with its attribute type changed to STRING read as ''."""
    folder = copy_fixture("det_yolo_box-legacy", tmp_path)
    path, desc = legacy_desc(folder)
    yolo = next(op for op in desc.blocks[0].ops if op.type == "yolo_box")
    next(a for a in yolo.attrs if a.name == "iou_aware_factor").type = 2  # STRING
    save_desc(path, desc)
    expect_clean_error(tmp_path, folder, ModelFormatError, "yolo_box (block 0, op #",
                       "attribute iou_aware_factor is '', expected a number")


def test_scalar_operand_of_another_size(tmp_path):
    """A scale whose Scalar operand was rewired to an empty constant (IndexError in
    ctx.scalar): Paddle's Scalar takes a tensor of one element."""
    folder = copy_fixture("cf_if_in_while-pir", tmp_path)
    path, doc = pir_doc(folder)
    body = doc["program"]["regions"][0]["blocks"][0]["ops"][4]["regions"][0]["blocks"][0]
    scale = body["ops"][6]
    assert scale["#"] == "1.scale"
    scale["I"][1] = {"%": 7}
    with open(path, "w") as f:
        json.dump(doc, f)
    expect_clean_error(tmp_path, folder, ModelFormatError, "scale (block 1, op #6): its scale operand",
                       "holds 0 values (shape [0]), expected one (a scalar)")


def test_legacy_scalar_attribute_typed_as_a_list(tmp_path):
    """scale's float attribute with its type changed to a list (INTS) reached float([])."""
    folder = copy_fixture("det_yolo_box-legacy", tmp_path)
    path, desc = legacy_desc(folder)
    scale = next(op for op in desc.blocks[0].ops if op.type == "scale")
    next(a for a in scale.attrs if a.name == "scale").type = 3  # INTS
    save_desc(path, desc)
    expect_clean_error(tmp_path, folder, ModelFormatError, "scale (block 0, op #",
                       "attribute scale is '[]', expected a number", options=["--no-optimize"])


def test_legacy_fetch_column_typed_as_text(tmp_path):
    folder = copy_fixture("det_nms3_basic-legacy", tmp_path)
    path, desc = legacy_desc(folder)
    fetch = next(op for op in desc.blocks[0].ops if op.type == "fetch")
    next(a for a in fetch.attrs if a.name == "col").type = 2  # STRING
    save_desc(path, desc)
    expect_clean_error(tmp_path, folder, ModelFormatError, "attribute col is '', expected an integer")


def test_legacy_number_attribute_typed_as_a_list(tmp_path):
    """batch_norm's epsilon with its type changed to FLOATS reached float([])."""
    folder = copy_fixture("paddlenlp", tmp_path)
    path, desc = legacy_desc(folder)
    bn = next(op for op in desc.blocks[0].ops if op.type == "batch_norm")
    next(a for a in bn.attrs if a.name == "epsilon").type = 4  # FLOATS
    save_desc(path, desc)
    expect_clean_error(tmp_path, folder, ModelFormatError, "batch_norm (block 0, op #",
                       "attribute epsilon is '[]', expected a number")


def test_pir_if_without_its_condition(tmp_path):
    folder = copy_fixture("cf_if_in_while-pir", tmp_path)
    path, doc = pir_doc(folder)
    del next(op for op in pir_ops(doc) if op["#"] == "1.if")["I"]
    with open(path, "w") as f:
        json.dump(doc, f)
    expect_clean_error(tmp_path, folder, ModelFormatError, "if (block 1, op #", "it has no operand (the condition)")


def test_pir_integer_attribute_out_of_range(tmp_path):
    """A conv stride of 1e300 reached the ONNX serializer (SerdeError: value out of range)."""
    folder = copy_fixture("paddleseg", tmp_path)
    path, doc = pir_doc(folder)
    conv = next(op for op in pir_ops(doc) if op["#"] == "1.conv2d")
    strides = next(a for a in conv["A"] if a["N"] == "strides")
    strides["AT"]["D"][1]["D"] = 1e300
    with open(path, "w") as f:
        json.dump(doc, f)
    expect_clean_error(tmp_path, folder, ModelFormatError, "(1.conv2d): integer attribute 1e+300 is out of the int32 range")


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> tuple[str, str, str]:
    """(model folder, its ONNX file, an inputs npz) for verify's readers."""
    work = tmp_path_factory.mktemp("verify")
    folder = os.path.join(SMOKE, "paddledet")
    onnx_file = str(work / "model.onnx")
    with open(onnx_file, "wb") as f:
        f.write(fuzz._reference_onnx(folder))
    inputs = str(work / "inputs.npz")
    fuzz._inputs_npz(folder, inputs)
    return folder, onnx_file, inputs


def test_inputs_npz_with_an_object_array(converted, tmp_path):
    folder, onnx_file, _ = converted
    bad = str(tmp_path / "inputs.npz")
    np.savez(bad, x0=np.array([object()], dtype=object))
    with pytest.raises(UsageError, match="not a readable .npz file .*Object arrays cannot be loaded"):
        fuzz.verify_front(folder, onnx_file, bad)


@pytest.mark.parametrize("damage", [
    pytest.param(lambda ops: ops[0].__setitem__(4, [[]]), id="output-entry-emptied"),
    pytest.param(lambda ops: ops[0].__setitem__(3, [1e300]), id="node-name-a-number"),
    pytest.param(lambda ops: ops[0].__setitem__(3, [{"#": "x"}]), id="node-name-an-object"),
    pytest.param(lambda ops: ops[0][4].__setitem__(0, ["out", None, 99]), id="reason-index-out-of-range"),
])
def test_damaged_provenance_is_a_note(converted, tmp_path, damage):
    """A provenance record damaged inside (not only unparsable JSON) raised IndexError or
    AttributeError in verify; it is unreadable provenance: verify matches by name and says so."""
    from pd2onnx.paddle import load
    from pd2onnx.verification import onnx_side
    from pd2onnx.verification import plan as planning

    folder, onnx_file, inputs = converted
    model = onnx.load(onnx_file)
    prop = next(p for p in model.metadata_props if p.key == provenance.KEY)
    doc = json.loads(prop.value)
    damage(doc["ops"])
    prop.value = json.dumps(doc)
    bad = str(tmp_path / "model.onnx")
    onnx.save(model, bad)
    with pytest.raises(provenance.ProvenanceError, match="malformed provenance"):
        provenance.loads(prop.value)
    fuzz.verify_front(folder, bad, inputs)
    side = onnx_side.load(bad, None)
    onnx_side.match(side, planning.make_plan(load(folder)))
    assert any("provenance cannot be read" in n for n in side.notes), side.notes


# ---------------------------------------------------------------------------- internal errors


def test_internal_error_in_a_mapper_is_one_line(tmp_path):
    from pd2onnx.convert.registry import overriding

    def broken(ctx):
        raise KeyError("deliberately broken")

    out = tmp_path / "model.onnx"
    with overriding("relu", broken):
        code, stderr = run_cli(["convert", os.path.join(SMOKE, "paddlex"), "-o", str(out)])
        with pytest.raises(InternalError) as info:
            cli.main(["convert", os.path.join(SMOKE, "paddlex"), "-o", str(out), "--debug"])
    assert code == 1 and not out.exists()
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith("pd2onnx: internal error in mapper relu on relu (block 0, op #"), stderr
    assert "KeyError: 'deliberately broken'; please report, --debug shows the traceback" in stderr
    assert isinstance(info.value.__cause__, KeyError)


def test_internal_error_in_an_optimizer_pass_is_one_line(tmp_path, monkeypatch):
    from pd2onnx.optimize.passes.fusion import FuseBatchNorm

    def broken(self, node, graph):
        raise ValueError("operands could not be broadcast together")

    monkeypatch.setattr(FuseBatchNorm, "rewrite", broken)
    out = tmp_path / "model.onnx"
    code, stderr = run_cli(["convert", os.path.join(SMOKE, "paddlex"), "-o", str(out)])
    assert code == 1 and not out.exists()
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith("pd2onnx: internal error in optimizer pass fuse-bn on BatchNormalization node "), stderr
    assert "(from batch_norm, block 0, op #" in stderr
    assert "ValueError: operands could not be broadcast together; please report" in stderr


def test_internal_error_elsewhere_is_one_line(tmp_path, monkeypatch):
    """An exception outside mappers and passes is placed by the pd2onnx function it came from."""
    import pd2onnx.convert.exporter as exporter

    def broken(model):
        raise RuntimeError("legalize broke")

    monkeypatch.setattr(exporter, "_legalize", broken)
    out = tmp_path / "model.onnx"
    model = os.path.join(SMOKE, "paddledet")
    code, stderr = run_cli(["convert", model, "-o", str(out)])
    assert code == 1 and not out.exists()
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith(f"pd2onnx: internal error in pd2onnx.convert.exporter._export_at on {model}: "
                             "RuntimeError: legalize broke; please report, --debug shows the traceback"), stderr
