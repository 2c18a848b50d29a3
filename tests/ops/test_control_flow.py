"""Control flow beyond the numeric cases: bad input gives one clear error (naming the op,
the block and the variable), the pre-scan reports unsupported ops inside sub-blocks with
their block path, ``pd2onnx info`` shows the block tree, and appended arrays need only
opset 11 (scan outputs) while arrays carried through a loop need 13."""

from __future__ import annotations

import os

import pytest

from harness import builder
from harness.cases import REGISTRY, load_case_files
from harness.check import run_onnx
from pd2onnx.api import convert
from pd2onnx.convert.exporter import export_program
from pd2onnx.errors import ConversionError, UnsupportedOpError
from pd2onnx.paddle import load
from pd2onnx.paddle.info import describe, format_description
from pd2onnx.paddle.program import Op, Value

load_case_files(os.path.dirname(os.path.abspath(__file__)), "opcases")
FORMATS = ["pir", "legacy"]


def _built(name: str, fmt: str):
    if name not in REGISTRY:
        pytest.skip(f"{name} is not loaded (PD2ONNX_CASE_FILES leaves cases_control_flow out)")
    built = builder.get(REGISTRY[name], fmt)
    assert built.error is None, built.error
    return built


def _program(name: str, fmt: str):
    return load(_built(name, fmt).model_file)


def _branch_op(program):
    return next(op for op in program.main.ops if op.type in ("if", "conditional_block"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_condition_must_be_a_boolean_scalar(fmt):
    program = _program("cf_if_both_branches", fmt)
    op = _branch_op(program)
    cond = op.inputs["in0"][0] if fmt == "pir" else op.inputs["Cond"][0]
    program.find_value(cond, op.block_idx).dtype = "float32"
    with pytest.raises(ConversionError) as err:
        export_program(program, opset=17)
    text = str(err.value)
    assert "must be a boolean scalar" in text and cond in text
    assert f"block {op.block_idx}, op #{op.index}" in text and (op.legacy_type or op.type) in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_array_read_past_its_known_length(fmt):
    program = _program("cf_array_read_length", fmt)
    read = next(op for op in program.main.ops if op.type == "array_read")
    # the index becomes a constant 7 of its own (the file's constants may be shared)
    index = program.find_value(read.inputs["i"][0])
    program.main.values["bad_index"] = Value("bad_index", index.dtype, index.shape)
    maker = Op("full", {}, {"out": ["bad_index"]}, {"shape": list(index.shape), "value": 7.0, "dtype": index.dtype},
               block_idx=0, index=read.index)
    program.main.ops.insert(program.main.ops.index(read), maker)
    read.inputs["i"] = ["bad_index"]
    with pytest.raises(ConversionError) as err:
        export_program(program, opset=17)
    text = str(err.value)
    assert "reads element 7" in text and "2 element(s)" in text and "array_read" in text


def test_sub_block_writing_an_undeclared_variable():
    program = _program("cf_if_both_branches", "legacy")
    op = _branch_op(program)
    inner = op.blocks[0].ops[-1]
    inner.outputs["out"] = ["ghost_var"]
    with pytest.raises(ConversionError) as err:
        export_program(program, opset=17)
    text = str(err.value)
    assert "ghost_var" in text and f"block {op.blocks[0].idx}" in text and inner.type in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_prescan_lists_unsupported_ops_in_sub_blocks_with_the_block_path(fmt):
    program = _program("cf_if_in_while", fmt)
    loop = next(op for op in program.main.ops if op.type == "while")
    branch = next(op for op in loop.blocks[0].ops if op.type in ("if", "conditional_block"))
    deep = next(op for op in branch.blocks[0].ops if op.type != "yield")
    deep.type, deep.legacy_type = "mystery_op", None
    loop.blocks[0].ops[0].type, loop.blocks[0].ops[0].legacy_type = "other_mystery", None
    with pytest.raises(UnsupportedOpError) as err:
        export_program(program, opset=17)
    text = str(err.value)
    assert "mystery_op x1" in text and "other_mystery x1" in text
    assert f"in while (block 0, op #{loop.index}) > {branch.legacy_type or branch.type}" in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_info_shows_the_block_tree(fmt):
    program = _program("cf_if_in_while", fmt)
    desc = describe(program)
    owners = {e["block"]: e["owner"] for e in desc["block_tree"]}
    assert owners[0] is None
    loop = next(op for op in program.main.ops if op.type == "while")
    assert owners[loop.blocks[0].idx] == {"op": "while", "block": 0, "index": loop.index}
    text = format_description(desc)
    assert f"owned by while (block 0, op #{loop.index})" in text


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name,lowest", [("cf_while_array_stack", 11), ("cf_list_append_stack", 11),
                                         ("cf_while_array_concat", 13)])
def test_arrays_through_loops_opset(fmt, name, lowest):
    """Appended-then-stacked arrays are scan outputs (11); a carried sequence needs 13."""
    built = _built(name, fmt)
    model = convert(built.model_file, opset=7, auto_opset=True, optimize=False)
    assert model.opset_imports[""] == lowest
    if lowest == 11:
        assert not {"SequenceInsert", "ConcatFromSequence"} & _op_types(model)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("batch", [1, 3])
def test_if_on_a_fixed_shape_folds_to_one_branch(fmt, batch):
    """``if x.shape[0] > 1``: an If at run time; with --input-shape the optimizer keeps the
    taken branch only, and the results stay ONNX Runtime's on the unfolded model."""
    import numpy as np

    built = _built("cf_if_on_shape", fmt)
    x = np.random.default_rng(batch).standard_normal((batch, 4)).astype(np.float32)
    plain = convert(built.model_file, opset=17, optimize=False)
    assert "If" in _op_types(plain)
    name = plain.graph.inputs[0].name
    folded = convert(built.model_file, opset=17, optimize=True, input_shapes={name: [batch, 4]})
    assert "If" not in _op_types(folded)
    (want,) = run_onnx(plain, [x])
    (got,) = run_onnx(folded, [x])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(want, x * 2.0 + 1.0 if batch > 1 else x - 5.0, rtol=1e-6)


def _op_types(model) -> set[str]:
    import onnx_ir as ir

    return {n.op_type for n in ir.traversal.RecursiveGraphIterator(model.graph)}


@pytest.mark.parametrize("fmt", FORMATS)
def test_sequence_through_a_loop_says_which_opset(fmt):
    """With --no-auto-opset at 11, the error names the op, the array and opset 13."""
    from pd2onnx.errors import UsageError

    built = _built("cf_while_array_concat", fmt)
    with pytest.raises(UsageError) as err:
        convert(built.model_file, opset=11, auto_opset=False, optimize=False)
    text = str(err.value)
    assert "needs opset 13" in text and "tensor array" in text and "--opset 13" in text


def _as_bfloat16(program) -> None:
    """Every float32 value of the program retyped to bfloat16 (what a bfloat16 export of the
    same model declares)."""
    values = [v for block in program.blocks for v in block.values.values()] + program.inputs + program.outputs
    for value in values:
        if value.dtype == "float32":
            value.dtype = "bfloat16"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name,lowest", [("cf_array_read_length", 13), ("cf_while_array_concat", 16),
                                         ("cf_if_both_branches", 16)])
def test_bfloat16_arrays_and_branches(fmt, name, lowest):
    """ONNX sequences hold no bfloat16 (no sequence op allows seq(tensor(bfloat16))): bfloat16
    arrays hold float32 elements and cast back on the way out; If/Loop carry bfloat16 from
    opset 16, so a bfloat16 value crossing one raises the opset there (the values are the
    matrix's business: tests/dtypes runs bfloat16 arrays and branches against Paddle)."""
    import onnx
    import onnx_ir as ir

    built = _built(name, fmt)
    program = load(built.model_file)
    _as_bfloat16(program)
    model = export_program(program, opset=7)
    assert model.opset_imports[""] == lowest
    proto = ir.serde.serialize_model(model)
    onnx.checker.check_model(proto, full_check=True)
    for node in ir.traversal.RecursiveGraphIterator(model.graph):
        for out in node.outputs:
            if isinstance(out.type, ir.SequenceType):
                assert out.type.elem_type.dtype == ir.DataType.FLOAT, (node.op_type, out.name)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name,depth", [("cf_opset_in_if", 1), ("cf_opset_in_while", 1), ("cf_opset_in_while_in_if", 2)])
def test_opset_raised_for_an_op_in_a_sub_block(fmt, name, depth, caplog):
    """int64 bitwise_and needs opset 18, found while converting a block nested ``depth``
    deep: the default opset is raised, and the warning names the op and the blocks it sits
    in; with --no-auto-opset the error does."""
    import logging

    from pd2onnx.errors import UsageError

    built = _built(name, fmt)
    with caplog.at_level(logging.WARNING, logger="pd2onnx"):
        model = convert(built.model_file, optimize=False)
    assert model.opset_imports[""] == 18
    raised = [r.getMessage() for r in caplog.records if "raising the opset" in r.getMessage()]
    assert len(raised) == 1 and "bitwise_and (block" in raised[0] and raised[0].count(" > ") == depth - 1, raised
    outer = "while" if name == "cf_opset_in_while" else "if" if fmt == "pir" else "conditional_block"
    assert f"(in {outer} (block 0, op #" in raised[0], raised
    with pytest.raises(UsageError) as err:
        convert(built.model_file, opset=17, auto_opset=False, optimize=False)
    assert "bitwise_and (block" in str(err.value) and "needs opset 18" in str(err.value)
    assert "--opset 18" in err.value.hint


@pytest.mark.parametrize("fmt", FORMATS)
def test_opset_rule_in_nested_blocks_raised_by_the_prescan(fmt):
    """fold's static rule (18) in a while inside an if: the pre-scan finds it."""
    from pd2onnx.convert.exporter import prescan

    built = _built("cf_opset_rule_in_while_in_if", fmt)
    scan = prescan(load(built.model_file), 17)
    assert scan.needed_opset == 18 and scan.needed_by.op_type == "fold" and " > " in str(scan.needed_by)
    assert convert(built.model_file, optimize=False).opset_imports[""] == 18


def test_no_mapper_refuses_what_a_newer_opset_converts():
    """A mapper that needs a newer opset for its arguments asks for it (``require_opset``,
    so the exporter raises the opset at any block depth) instead of refusing the op."""
    import pathlib
    import re

    import pd2onnx.convert.ops as ops

    pattern = re.compile(r"ctx\.fail\([^)]*(needs opset|--opset)", re.S)
    found = [p.name for p in pathlib.Path(ops.__file__).parent.glob("*.py") if pattern.search(p.read_text())]
    assert not found, f"mappers refusing with 'needs opset' instead of ctx.require_opset: {found}"


# Cases whose tensor arrays all have equal elements: tensors, no ONNX sequence.
TENSOR_ARRAY_CASES = ["cf_table_decoder", "cf_array_tensor_ops", "cf_array_read_back_in_while", "cf_array_index",
                      "cf_array_index_known", "cf_array_index_in_if", "cf_array_concat_or_first", "cf_slice_array",
                      "cf_array_pop", "cf_while_array_stack", "cf_list_append_stack"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", TENSOR_ARRAY_CASES)
def test_tensor_arrays_run_in_openvino(fmt, name):
    """Arrays whose elements share a shape are tensors: the graph holds no ONNX sequence op,
    and OpenVINO (which converts none) runs the model, optimized or not, equal to Paddle."""
    import onnx_ir as ir
    import openvino as ov

    from harness.check import compare, load_io

    built = _built(name, fmt)
    inputs, wants = load_io(os.path.join(built.dir, "io.npz"))
    case = REGISTRY[name]
    for optimize in (False, True):
        model = convert(built.model_file, optimize=optimize)
        sequences = sorted(t for t in _op_types(model) if "Sequence" in t)
        assert not sequences, f"{name}[{fmt}] still uses {sequences}"
        core = ov.Core()
        compiled = core.compile_model(core.read_model(ir.serde.serialize_model(model).SerializeToString(), b""),
                                      "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        results = compiled.create_infer_request().infer(dict(enumerate(inputs)))
        gots = [results[out] for out in compiled.outputs]
        assert len(gots) == len(wants)
        for k, (got, want) in enumerate(zip(gots, wants)):
            compare(f"{name}[{fmt}, OpenVINO, optimize={optimize}] output {k}", got, want, case.rtol, case.atol)


@pytest.mark.parametrize("fmt", FORMATS)
def test_cli_says_which_arrays_stay_sequences(fmt, tmp_path):
    """An array whose elements' dims are known only at run time and which is never stacked
    stays a sequence: ``pd2onnx convert`` says which and why; arrays that became tensors
    are not mentioned."""
    import subprocess
    import sys

    def warnings_of(name):
        proc = subprocess.run([sys.executable, "-m", "pd2onnx", "convert", _built(name, fmt).model_file, "-o",
                               str(tmp_path / f"{name}.onnx")], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return [line for line in proc.stderr.splitlines() if "stays an ONNX sequence" in line]

    said = warnings_of("cf_while_array_concat")
    assert len(said) == 1 and "OpenVINO and TensorRT cannot run" in said[0], said
    assert "dims known only at run time" in said[0] and "no stack of the array" in said[0]
    assert warnings_of("cf_table_decoder") == []
