"""PIR JSON details on hand-made files: non-finite floats, trainable=false, versions, vectors,
attribute variants, and .pdiparams records of every dtype (bf16/fp8 included)."""

from __future__ import annotations

import json
import logging
import math
import struct

import ml_dtypes
import numpy as np
import pytest

import pd2onnx
from pd2onnx.paddle.framework_pb2 import VarType


def _tt(dtype: str, dims: list[int]) -> dict:
    return {"#": "0.t_dtensor", "D": [{"#": f"0.{dtype}"}, dims, "NCHW", [], 0]}


def _attr(name: str, kind: str, value, vd: str | None = None) -> dict:
    at = {"#": kind, "VD": vd} if vd else {"#": kind, "D": value}
    return {"N": name, "AT": at}


def _doc(ops: list[dict], version: int = 4, trainable: bool = True) -> dict:
    return {
        "base_code": {"magic": "pir", "version": version, "trainable": trainable},
        "program": {"regions": [{"#": "region_0", "blocks": [{"#": "block_0", "args": [], "ops": ops}]}]},
    }


def _data(vid: int, name: str = "x") -> dict:
    return {"#": "1.data", "A": [_attr("name", "0.a_str", name), _attr("shape", "1.a_intarray", [-1, 3]),
                                 _attr("dtype", "1.a_dtype", "float32")], "I": [], "O": [{"%": vid, "TT": _tt("t_f32", [-1, 3])}]}


def _fetch(src: int, vid: int, col: int = 0) -> dict:
    return {"#": "1.fetch", "A": [_attr("name", "0.a_str", f"fetch_name_{col}"), _attr("col", "0.a_i32", col)],
            "I": [{"%": src}], "O": [{"%": vid, "TT": _tt("t_f32", [-1, 3])}]}


def _write(tmp_path, doc: dict) -> str:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_non_finite_floats_and_attribute_variants(tmp_path):
    clip = {"#": "1.clip", "A": [_attr("min", "0.a_f64", None, vd="-INF"), _attr("max", "0.a_f32", None, vd="NaN"),
                                 _attr("ratio", "0.a_f32", 0.8999999761581421), _attr("k", "0.a_i64", 3),
                                 _attr("pads", "0.a_array", [{"#": "0.a_i32", "D": 1}, {"#": "0.a_i64", "D": 2}])],
            "I": [{"%": 1}], "O": [{"%": 2, "TT": _tt("t_f32", [-1, 3])}]}
    program = pd2onnx.load(_write(tmp_path, _doc([_data(1), clip, _fetch(2, 3)])))
    attrs = program.main.ops[1].attrs
    assert attrs["min"] == -math.inf and math.isnan(attrs["max"])
    assert attrs["ratio"] == float(np.float32(0.9))  # f32 printed as double, read back exactly
    assert attrs["k"] == 3 and attrs["pads"] == [1, 2]
    assert [v.name for v in program.outputs] == ["fetch_name_0"]


def test_newer_version_warns_and_reads(tmp_path, caplog):
    relu = {"#": "1.relu", "A": [], "I": [{"%": 1}], "O": [{"%": 2, "TT": _tt("t_f32", [-1, 3])}]}
    with caplog.at_level(logging.WARNING):
        program = pd2onnx.load(_write(tmp_path, _doc([_data(1), relu, _fetch(2, 3)], version=7)))
    assert program.version == 7
    assert "PIR version 7 is newer" in caplog.text
    assert [op.type for op in program.main.ops] == ["data", "relu", "fetch"]


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_every_known_version_reads_quietly(tmp_path, caplog, version):
    relu = {"#": "1.relu_", "A": [], "I": [{"%": 1}], "O": [{"%": 2, "TT": _tt("t_f32", [-1, 3])}]}
    with caplog.at_level(logging.WARNING):
        program = pd2onnx.load(_write(tmp_path, _doc([_data(1), relu, _fetch(2, 3)], version=version)))
    assert "newer" not in caplog.text
    assert program.main.ops[1].type == "relu"  # in-place spelling folded


def _record(arr: np.ndarray, code: int) -> bytes:
    desc = VarType.TensorDesc(data_type=code, dims=list(arr.shape)).SerializeToString()
    return struct.pack("<IQIi", 0, 0, 0, len(desc)) + desc + arr.tobytes()


def test_trainable_false_params_and_exotic_dtypes(tmp_path):
    """No OA (trainable=false): every p op is persistable; records pair by byte-sorted name."""
    values = {
        "W_upper": (np.arange(4, dtype=np.float32), 5, "t_f32"),
        "a_bf16": (np.array([1.5, -2.25], dtype=ml_dtypes.bfloat16), 22, "t_bf16"),
        "b_fp8": (np.array([0.5, -448.0, 3.0], dtype=ml_dtypes.float8_e4m3fn), 32, "t_f8e4m3fn"),
        "c_scalar": (np.array(7, dtype=np.int64), 3, "t_i64"),
        "d_empty": (np.zeros((0, 2), dtype=np.float16), 4, "t_f16"),
    }
    ops = [{"#": "p", "A": [0, 1, 1, name], "O": {"%": 10 + i, "TT": _tt(t, list(arr.shape))}, "DA": [], "QA": []}
           for i, (name, (arr, _, t)) in enumerate(values.items())]
    ops += [_data(1), {"#": "1.relu", "A": [], "I": [{"%": 1}], "O": [{"%": 2, "TT": _tt("t_f32", [-1, 3])}]},
            _fetch(2, 3)]
    path = _write(tmp_path, _doc(ops, trainable=False))
    with open(tmp_path / "m.pdiparams", "wb") as f:
        for name in sorted(values, key=lambda n: n.encode()):
            arr, code, _ = values[name]
            f.write(_record(arr, code))
    program = pd2onnx.load(path)
    assert sorted(program.params) == sorted(values)
    for name, (arr, _, _) in values.items():
        got = program.params[name]
        assert got.dtype == arr.dtype and got.shape == arr.shape
        assert got.tobytes() == arr.tobytes()
    assert not program.params["W_upper"].flags.owndata  # a view over the memory map, not a copy


def test_vectors_resolved(tmp_path):
    """combine/split builtins disappear: list slots hold element names."""
    t = _tt("t_f32", [-1, 3])
    ops = [
        _data(1),
        {"#": "0.combine", "A": [], "I": [{"%": 1}, {"%": 1}], "O": [{"%": 2, "TT": {"#": "0.t_vec", "D": [t, t]}}]},
        {"#": "1.full", "A": [_attr("shape", "1.a_intarray", [1]), _attr("value", "0.a_f64", 1.0),
                              _attr("dtype", "1.a_dtype", "int32")], "I": [], "O": [{"%": 3, "TT": _tt("t_i32", [1])}]},
        {"#": "1.concat", "A": [], "I": [{"%": 2}, {"%": 3}], "O": [{"%": 4, "TT": _tt("t_f32", [-1, 6])}]},
        {"#": "1.split_with_num", "A": [_attr("num", "0.a_i32", 2)], "I": [{"%": 4}, {"%": 3}],
         "O": [{"%": 5, "TT": {"#": "0.t_vec", "D": [t, t]}}]},
        {"#": "0.split", "A": [], "I": [{"%": 5}], "O": [{"%": 6, "TT": t}, {"%": 7, "TT": t}]},
        _fetch(7, 8),
    ]
    program = pd2onnx.load(_write(tmp_path, _doc(ops)))
    concat = program.main.ops[2]
    assert concat.type == "concat" and concat.inputs["x"] == ["x", "x"]
    split = program.main.ops[3]
    assert split.outputs["out"] == ["split_with_num_5.0", "split_with_num_5.1"]
    fetch = program.main.ops[4]
    assert fetch.inputs["x"] == ["split_with_num_5.1"]
