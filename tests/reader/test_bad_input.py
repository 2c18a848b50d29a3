"""Bad input: every mistake gets one clear error naming the file, with a hint, no traceback."""

from __future__ import annotations

import json
import os
import pickle
import struct
import subprocess
import sys

import numpy as np
import pytest

import pd2onnx
from harness.handmade import write_program
from pd2onnx.errors import ModelFormatError
from pd2onnx.paddle.framework_pb2 import VarType

FP32 = 5


def _program(params: dict[str, tuple[int, list[int]]], model_path: str) -> None:
    """A legacy ProgramDesc with feed x -> scale -> fetch and the given persistable vars."""
    write_program(model_path, [("scale", "x", "y")], params)


def _record(arr: np.ndarray, code: int) -> bytes:
    desc = VarType.TensorDesc(data_type=code, dims=list(arr.shape)).SerializeToString()
    return struct.pack("<IQIi", 0, 0, 0, len(desc)) + desc + arr.tobytes()


@pytest.fixture
def model(tmp_path):
    path = str(tmp_path / "m.pdmodel")
    _program({"w": (FP32, [2, 3]), "b": (FP32, [3])}, path)
    return path


def _params(path: str, *records: bytes) -> str:
    with open(path, "wb") as f:
        f.write(b"".join(records))
    return path


def _raises(match: str, *args, **kwargs) -> ModelFormatError:
    with pytest.raises(ModelFormatError) as info:
        pd2onnx.load(*args, **kwargs)
    text = str(info.value)
    assert match in text, text
    assert "hint:" in text, text
    return info.value


def test_good_handmade_model(model, tmp_path):
    w, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(3, np.float32)
    _params(str(tmp_path / "m.pdiparams"), _record(b, FP32), _record(w, FP32))  # sorted: b < w
    program = pd2onnx.load(model)
    assert np.array_equal(program.params["w"], w) and np.array_equal(program.params["b"], b)
    assert [v.name for v in program.inputs] == ["x"] and [v.name for v in program.outputs] == ["y"]


def test_missing_file(tmp_path):
    err = _raises("no such file or directory", str(tmp_path / "nope"))
    assert str(tmp_path / "nope") in str(err)


def test_neither_format(tmp_path):
    path = tmp_path / "junk.pdmodel"
    path.write_bytes(b"\xff\xfe this is not a model \x00\x01")
    _raises("junk.pdmodel", str(path))


def test_truncated_protobuf(model):
    data = open(model, "rb").read()
    with open(model, "wb") as f:
        f.write(data[: len(data) // 2])
    _raises("m.pdmodel", model)


def test_corrupt_json(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{"base_code": {"magic": "pir", "version": 4}, "program": {"regions": [')
    _raises("not valid JSON", str(path))


def test_json_without_pir_magic(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"hello": 1}))
    _raises("PIR magic", str(path))


def test_json_with_dangling_operand(tmp_path):
    op = {"#": "1.relu", "A": [], "I": [{"%": 42}], "O": [{"%": 1, "TT": {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [2], "NCHW", [], 0]}}]}
    doc = {"base_code": {"magic": "pir", "version": 4, "trainable": False},
           "program": {"regions": [{"#": "region_0", "blocks": [{"#": "block_0", "args": [], "ops": [op]}]}]}}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    err = _raises("op #0 (1.relu)", str(path))
    assert "value 42" in str(err)


def test_params_missing(model):
    _raises("neither a combined params file", model)


def test_params_end_early(model, tmp_path):
    b = _record(np.ones(3, np.float32), FP32)
    w = _record(np.ones((2, 3), np.float32), FP32)
    _params(str(tmp_path / "m.pdiparams"), b, w[:-5])
    _raises("file ends early", model)


def test_params_bytes_left_over(model, tmp_path):
    b = _record(np.ones(3, np.float32), FP32)
    w = _record(np.ones((2, 3), np.float32), FP32)
    _params(str(tmp_path / "m.pdiparams"), b, w, b"\x00" * 7)
    _raises("7 byte(s) left over", model)


def test_record_size_disagrees(model, tmp_path):
    b = _record(np.ones(4, np.float32), FP32)  # program says [3]
    w = _record(np.ones((2, 3), np.float32), FP32)
    _params(str(tmp_path / "m.pdiparams"), b, w)
    _raises("has shape [4] (float32) but the program declares [3] (float32)", model)


def test_absurd_dims_never_allocated(model, tmp_path):
    desc = VarType.TensorDesc(data_type=FP32, dims=[2**40, 2**40]).SerializeToString()
    huge = struct.pack("<IQIi", 0, 0, 0, len(desc)) + desc + b"\x00" * 16
    _params(str(tmp_path / "m.pdiparams"), huge)
    _raises("file ends early", model)


def test_lod_rejected(model, tmp_path):
    _params(str(tmp_path / "m.pdiparams"), struct.pack("<IQ", 0, 1) + b"\x00" * 64)
    _raises("LoD level", model)


def test_dtype_mismatch_is_reported_and_file_dtype_kept(model, tmp_path):
    b = _record(np.ones(3, np.int8), 21)  # int8 weights while the program says float32
    w = _record(np.ones((2, 3), np.float32), FP32)
    _params(str(tmp_path / "m.pdiparams"), b, w)
    program = pd2onnx.load(model)
    assert program.params["b"].dtype == np.int8
    assert any("stored as int8" in w for w in program.warnings)


@pytest.mark.parametrize("suffix", [".pdparams", ".pdiparams.info"])
def test_pickles_refused(tmp_path, suffix):
    path = tmp_path / f"m{suffix}"
    with open(path, "wb") as f:
        pickle.dump({"w": np.ones(3)}, f, protocol=4)
    err = _raises("pickle", str(path))
    assert ("paddle.jit.save" if suffix == ".pdparams" else "neither needs nor unpickles") in str(err)


def test_pickled_params_file_refused(model, tmp_path):
    with open(tmp_path / "m.pdiparams", "wb") as f:
        pickle.dump({"w": 1}, f, protocol=4)
    _raises("pickle", model)


def test_no_params_needed_no_file(tmp_path):
    path = str(tmp_path / "m.pdmodel")
    _program({}, path)
    assert pd2onnx.load(path).params == {}


def test_cli_prints_error_without_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pd2onnx", "info", str(tmp_path / "nope.pdmodel")],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "pd2onnx: error:" in proc.stderr and "Traceback" not in proc.stderr
    assert "nope.pdmodel" in proc.stderr


def test_loading_and_converting_import_no_paddle(tmp_path):
    """The reader and converter must never import paddle (it is a test dependency only)."""
    path = str(tmp_path / "m.pdmodel")
    _program({}, path)
    code = (
        "import sys, pd2onnx\n"
        "from pd2onnx.api import convert\n"
        f"p = pd2onnx.load({path!r})\n"
        f"m = convert({path!r}, optimize=False)\n"
        "bad = sorted(k for k in sys.modules if k == 'paddle' or k.startswith('paddle.'))\n"
        "assert not bad, bad\n"
        "print('ok', len(m.graph))\n"
    )
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok")


# ---------------------------------------------------------------- older layouts (hand-made)
def _var_file(directory, name: str, arr: np.ndarray, code: int = FP32) -> None:
    path = os.path.join(str(directory), *name.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(_record(arr, code))


@pytest.fixture
def separate_dir(tmp_path):
    """__model__ + one file per variable, names with '/' (sub-folders) and '@'."""
    d = tmp_path / "old"
    d.mkdir()
    _program({"conv/w@GRAD_free": (FP32, [2, 3]), "b": (FP32, [3])}, str(d / "__model__"))
    _var_file(d, "conv/w@GRAD_free", np.arange(6, dtype=np.float32).reshape(2, 3))
    _var_file(d, "b", np.full(3, 0.5, np.float32))
    (d / "notes.txt").write_text("not a parameter")  # extra files are ignored
    return d


def test_separate_files_found_with_no_flags(separate_dir):
    for path in (str(separate_dir), str(separate_dir / "__model__")):
        program = pd2onnx.load(path)
        assert program.params_layout == "separate" and program.params_file == str(separate_dir)
        assert np.array_equal(program.params["conv/w@GRAD_free"], np.arange(6, dtype=np.float32).reshape(2, 3))
        assert np.array_equal(program.params["b"], np.full(3, 0.5, np.float32))


def test_separate_files_given_as_params_directory(separate_dir, tmp_path):
    moved = tmp_path / "model_only"
    moved.mkdir()
    os.replace(separate_dir / "__model__", moved / "__model__")
    program = pd2onnx.load(str(moved), str(separate_dir))
    assert program.params_layout == "separate" and len(program.params) == 2


def test_separate_files_all_missing_listed(tmp_path):
    d = tmp_path / "old"
    d.mkdir()
    _program({"w/a": (FP32, [2]), "w@b": (FP32, [2]), "c": (FP32, [2])}, str(d / "__model__"))
    _var_file(d, "c", np.ones(2, np.float32))
    err = _raises("2 of 3 parameter file(s) are missing: 'w/a', 'w@b'", str(d))
    assert str(d) in str(err)


def test_separate_file_dtype_disagrees(separate_dir):
    _var_file(separate_dir, "b", np.full(3, 0.5, np.float64), 6)
    err = _raises("record for 'b' is float64[3] but the program declares float32[3]", str(separate_dir))
    assert os.path.join(str(separate_dir), "b") in str(err)


def test_separate_file_size_disagrees(separate_dir):
    _var_file(separate_dir, "b", np.ones(4, np.float32))
    err = _raises("record for 'b' has shape [4] (float32) but the program declares [3] (float32)", str(separate_dir))
    assert os.path.join(str(separate_dir), "b") in str(err)


def test_separate_file_with_bytes_left_over(separate_dir):
    with open(separate_dir / "b", "ab") as f:
        f.write(b"\x00" * 5)
    _raises("5 byte(s) left over after the record of 'b'", str(separate_dir))


@pytest.mark.parametrize("declared,stored", [([1], []), ([], [1]), ([1, 4], [4]), ([4], [4, 1])])
def test_size_one_dims_accepted_with_record_shape(tmp_path, declared, stored):
    """Some quantization passes write a [] record for a [1] variable; Paddle accepts it."""
    path = str(tmp_path / "m.pdmodel")
    _program({"s": (FP32, declared)}, path)
    arr = np.full(stored, 2.0, np.float32)
    _params(str(tmp_path / "m.pdiparams"), _record(arr, FP32))
    assert pd2onnx.load(path).params["s"].shape == tuple(stored)
    d = tmp_path / "sep"
    d.mkdir()
    _program({"s": (FP32, declared)}, str(d / "__model__"))
    _var_file(d, "s", arr)
    assert pd2onnx.load(str(d)).params["s"].shape == tuple(stored)


@pytest.mark.parametrize("model_name,params_name", [("__model__", "__params__"), ("model", "params"),
                                                    ("__model__", "weights.pdiparams")])
def test_combined_file_beside_bare_program(tmp_path, model_name, params_name):
    d = tmp_path / "old"
    d.mkdir()
    _program({"w": (FP32, [2, 3]), "b": (FP32, [3])}, str(d / model_name))
    w, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(3, np.float32)
    _params(str(d / params_name), _record(b, FP32), _record(w, FP32))
    program = pd2onnx.load(str(d))
    assert program.params_layout == "combined" and program.params_file == str(d / params_name)
    assert np.array_equal(program.params["w"], w)


def test_two_programs_in_directory(tmp_path):
    d = tmp_path / "two"
    d.mkdir()
    _program({}, str(d / "__model__"))
    _program({}, str(d / "det.pdmodel"))
    err = _raises("2 different programs: __model__, det.pdmodel", str(d))
    assert "--model_filename" in str(err)


def test_params_directory_without_files_falls_back_to_combined(tmp_path):
    """paddle2onnx flags without --params_filename mean per-variable files; when the directory
    has none but a combined file sits beside the program, that is read (with a warning)."""
    d = tmp_path / "old"
    d.mkdir()
    _program({"b": (FP32, [3])}, str(d / "__model__"))
    _params(str(d / "__params__"), _record(np.ones(3, np.float32), FP32))
    program = pd2onnx.load(str(d / "__model__"), str(d))
    assert program.params_layout == "combined"
    assert any("no per-parameter files" in w for w in program.warnings)


# ---------------------------------------------------------------- text read from the files
def _flip_name(path: str, name: bytes, byte: int = 0xFF) -> None:
    data = bytearray(open(path, "rb").read())
    at = data.find(name)
    assert at >= 0
    data[at + 1] = byte
    with open(path, "wb") as f:
        f.write(bytes(data))


def test_legacy_name_not_utf8(model, tmp_path):
    """One flipped byte in a variable name (found by fuzzing): a clear error, never bytes
    reaching the params reader."""
    w, b = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    _params(str(tmp_path / "m.pdiparams"), _record(b, FP32), _record(w, FP32))
    _flip_name(model, b"fetch")
    err = _raises("is not valid UTF-8 text (b'f\\xfftch')", model)
    assert "m.pdmodel" in str(err) and "blocks[0].vars[" in str(err)
    proc = subprocess.run([sys.executable, "-m", "pd2onnx", "convert", model, "-o", str(tmp_path / "x.onnx")],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "not valid UTF-8" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "x.onnx").exists()


@pytest.mark.parametrize("where", ["op type", "slot", "attribute"])
def test_legacy_text_fields_not_utf8(tmp_path, where):
    from pd2onnx.paddle.framework_pb2 import ProgramDesc

    path = str(tmp_path / "m.pdmodel")
    _program({}, path)
    prog = ProgramDesc()
    prog.ParseFromString(open(path, "rb").read())
    op = prog.blocks[0].ops[1]  # the scale op
    if where == "attribute":
        op.attrs.add(name="data_format", type=2, s="NCHW")
    elif where == "op type":
        op.attrs.add(name="op_callstack", type=5, strings=["File x.py"])
    with open(path, "wb") as f:
        f.write(prog.SerializeToString())
    token = {"op type": b"scale", "slot": b"Out", "attribute": b"NCHW"}[where]
    _flip_name(path, token)
    expected = {"op type": "blocks[0].ops[1].type", "slot": "slot name", "attribute": "attribute 'data_format'"}
    _raises(expected[where], path)


def test_legacy_noise_attribute_not_utf8_is_ignored(tmp_path):
    """A flipped byte in op_callstack (Paddle's record of the Python stack, never read) does
    not stop the model."""
    from pd2onnx.paddle.framework_pb2 import ProgramDesc

    path = str(tmp_path / "m.pdmodel")
    _program({}, path)
    prog = ProgramDesc()
    prog.ParseFromString(open(path, "rb").read())
    prog.blocks[0].ops[1].attrs.add(name="op_callstack", type=5, strings=['File "train.py", line 3'])
    with open(path, "wb") as f:
        f.write(prog.SerializeToString())
    _flip_name(path, b"train.py")
    assert [v.name for v in pd2onnx.load(path).outputs] == ["y"]


def _pir_doc(name: str = "x") -> dict:
    tt = {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [2], "NCHW", [], 0]}
    data = {"#": "1.data", "A": [{"N": "name", "AT": {"#": "0.a_str", "D": name}},
                                 {"N": "shape", "AT": {"#": "1.a_intarray", "D": [2]}},
                                 {"N": "dtype", "AT": {"#": "1.a_dtype", "D": "float32"}}],
            "I": [], "O": [{"%": 1, "TT": tt}]}
    relu = {"#": "1.relu", "A": [], "I": [{"%": 1}], "O": [{"%": 2, "TT": tt}]}
    fetch = {"#": "1.fetch", "A": [{"N": "name", "AT": {"#": "0.a_str", "D": "out"}},
                                   {"N": "col", "AT": {"#": "0.a_i32", "D": 0}}],
             "I": [{"%": 2}], "O": [{"%": 3, "TT": tt}]}
    return {"base_code": {"magic": "pir", "trainable": False, "version": 4},
            "program": {"regions": [{"#": "region_0", "blocks": [{"#": "block_0", "args": [],
                                                                    "ops": [data, relu, fetch]}]}]}}


def test_pir_not_utf8(tmp_path):
    path = tmp_path / "m.json"
    path.write_bytes(json.dumps(_pir_doc("x\u00e9"), ensure_ascii=False).encode("utf-8").replace(b"\xc3\xa9", b"\xc3\x28"))
    _raises("not valid UTF-8 text: byte", str(path))


def test_pir_lone_surrogate_escape(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_pir_doc("x\ud800")))  # json.dumps writes it as \ud800
    assert "\\ud800" in path.read_text()
    _raises("unpaired UTF-16 surrogate", str(path))
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(_pir_doc("x\U0001f600")))  # an escaped pair is fine
    assert [v.name for v in pd2onnx.load(str(ok)).inputs] == ["x\U0001f600"]


@pytest.mark.parametrize("key,value,message", [
    ("I", None, "its operand list (I) is null, expected a list"),
    ("I", [], "0 operand(s), but relu takes (x): x missing"),
    ("O", {"%": 2}, None),  # a single result object is how p ops write it: accepted
    ("A", "x", "its attribute list (A) is a JSON str, expected a list"),
    ("regions", None, "its region list (regions) is null"),
])
def test_pir_op_lists(tmp_path, key, value, message):
    doc = _pir_doc()
    relu = doc["program"]["regions"][0]["blocks"][0]["ops"][1]
    relu[key] = value if key != "O" else {**value, "TT": relu["O"][0]["TT"]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    if message is None:
        assert pd2onnx.load(str(path)).outputs
        return
    err = _raises(message, str(path))
    assert "block 0, op #1 (1.relu)" in str(err)


def test_separate_layout_name_leaving_the_folder(tmp_path):
    d = tmp_path / "old"
    d.mkdir()
    _program({"../secret": (FP32, [2])}, str(d / "__model__"))
    _var_file(tmp_path, "secret", np.ones(2, np.float32))  # exists, outside the model's folder
    _raises("parameter name '../secret' is not usable as a file name", str(d))
