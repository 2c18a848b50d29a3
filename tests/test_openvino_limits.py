"""The evidence behind each OpenVINO limitation listed in ``pd2onnx.convert.runtime_notes``:
for every limitation that is OpenVINO's (not one another change of ours will remove), the
smallest ONNX model that shows it, run in ONNX Runtime (what the ONNX spec asks) and in
OpenVINO (CPU plugin, f32 precision hint, as the op tests run it).

A probe fails when OpenVINO no longer behaves as listed: then the cases listed under that
limitation are checked again by the op tests (a listed case that passes fails there), and the
limitation's text and probe go. ``test_every_listed_case_exists`` keeps the listing in step
with the cases.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from harness.check import compile_openvino
from harness.cpu import native_cpu_class, openvino_cpu_classes
from harness.openvino_run import on_cpu
from pd2onnx.convert.runtime_notes import OPENVINO_LIMITS, OPENVINO_VERSION, openvino_limit

F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def _model(nodes, inputs, outputs, inits=(), opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "probe",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in inits],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _ort(model, feeds: list[np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), feeds)})


def _refuses(model) -> str:
    with pytest.raises(Exception) as info:  # noqa: PT011 - OpenVINO raises RuntimeError/OpConversionFailure
        compile_openvino(model)
    return str(info.value)


def _unary(op: str, x: np.ndarray, out_type: int, **attrs) -> tuple[onnx.ModelProto, list]:
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    return _model([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", elem, list(x.shape))], [("y", out_type)]), [x]


def probe_int64_as_int32():
    x = np.array([2**40, -(2**40) - 3, 7], np.int64)
    model = _model([helper.make_node("Add", ["x", "x"], ["y"])], [("x", I64, [3])], [("y", I64)])
    assert np.array_equal(_ort(model, [x])[0], x + x)
    got = compile_openvino(model)([x])[0]
    assert got[2] == 14 and not np.array_equal(got, x + x), got


def probe_float64_as_float32():
    x = np.array([1e300, 1e-300, 1.0 + 2**-40])
    model, feeds = _unary("Neg", x, TensorProto.DOUBLE)
    assert np.array_equal(_ort(model, feeds)[0], -x)
    got = compile_openvino(model)(feeds)[0]  # float32 saturation, underflow, rounding
    assert got.tolist() == [-float(np.finfo(np.float32).max), 0.0, -1.0], got


def probe_nan_to_bool():
    x = np.array([np.nan, 0.0, 2.0], np.float32)
    model, feeds = _unary("Cast", x, TensorProto.BOOL, to=TensorProto.BOOL)
    assert _ort(model, feeds)[0].tolist() == [True, False, True]  # ONNX Cast: nonzero -> true
    assert compile_openvino(model)(feeds)[0].tolist() == [False, False, True]


def probe_nan_through_clip_max_min():
    x = np.array([np.nan, 3.0], np.float32)
    lo, hi = np.array(-1.0, np.float32), np.array(1.0, np.float32)
    clip = _model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], [("x", F32, [2])], [("y", F32)],
                  [("lo", lo), ("hi", hi)])
    assert np.isnan(_ort(clip, [x])[0][0])
    assert not np.isnan(compile_openvino(clip)([x])[0][0])
    mx = _model([helper.make_node("Max", ["x", "hi"], ["y"])], [("x", F32, [2])], [("y", F32)], [("hi", hi)])
    assert np.isnan(_ort(mx, [x])[0][0])
    assert not np.isnan(compile_openvino(mx)([x])[0][0])


def probe_reduce_max_of_neg_inf():
    x = np.full((1, 3), -np.inf, np.float32)
    model, feeds = _unary("ReduceMax", x, F32, axes=[1], keepdims=0)
    assert _ort(model, feeds)[0].tolist() == [-np.inf]
    assert compile_openvino(model)(feeds)[0].tolist() == [float(np.finfo(np.float32).min)]


def _topk(x: np.ndarray, largest: int):
    k = np.array([x.size], np.int64)
    return _model([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=0, largest=largest, sorted=1)],
                  [("x", F32, [x.size]), ("k", I64, [1])], [("v", F32), ("i", I64)]), [x, k]


def probe_topk_ties():
    x = np.zeros(16, np.float32)
    model, feeds = _topk(x, 1)
    assert _ort(model, feeds)[1].tolist() == list(range(16))  # TopK-11: the lower index first
    assert compile_openvino(model)(feeds)[1].tolist() != list(range(16))


def probe_topk_nan():
    x = np.array([0.5, np.nan, -1.0, 2.0, 0.0], np.float32)
    model, feeds = _topk(x, 0)
    assert _ort(model, feeds)[1].tolist() == [2, 4, 0, 3, 1]  # NaN after every number
    assert compile_openvino(model)(feeds)[1].tolist() != [2, 4, 0, 3, 1]


def probe_fmod_rounding():
    x, y = np.array([1.0], np.float32), np.array([0.1], np.float32)
    model = _model([helper.make_node("Mod", ["x", "y"], ["z"], fmod=1)], [("x", F32, [1]), ("y", F32, [1])],
                   [("z", F32)])
    exact = np.fmod(x, y)  # 0.09999999: 1 - 9 * float32(0.1), exactly
    assert _ort(model, [x, y])[0].tolist() == exact.tolist()
    assert compile_openvino(model)([x, y])[0].tolist() == [0.0]


def probe_fused_multiply_add():
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal(4096).astype(np.float32) for _ in range(3))
    model = _model([helper.make_node("Mul", ["a", "b"], ["p"]), helper.make_node("Add", ["p", "c"], ["y"])],
                   [(n, F32, [4096]) for n in "abc"], [("y", F32)])
    two_roundings = a * b + c  # numpy: the product rounded to float32, then the sum
    one_rounding = (a.astype(np.float64) * b + c).astype(np.float32)
    assert np.array_equal(_ort(model, [a, b, c])[0], two_roundings)
    got = compile_openvino(model)([a, b, c])[0]
    assert np.array_equal(got, one_rounding) and not np.array_equal(got, two_roundings)


def probe_no_det():
    model, _ = _unary("Det", np.eye(3, dtype=np.float32), F32)
    assert "Det" in _refuses(model)


def probe_no_deform_conv():
    model = _model([helper.make_node("DeformConv", ["x", "w", "off"], ["y"])],
                   [("x", F32, [1, 1, 4, 4]), ("w", F32, [1, 1, 2, 2]), ("off", F32, [1, 8, 3, 3])], [("y", F32)],
                   opset=19)
    assert "DeformConv" in _refuses(model)


def probe_grid_sample_5d():
    model = _model([helper.make_node("GridSample", ["x", "g"], ["y"], mode="linear")],
                   [("x", F32, [1, 1, 2, 3, 4]), ("g", F32, [1, 2, 2, 2, 3])], [("y", F32)], opset=20)
    assert "GridSample" in _refuses(model)


def _rnn(op: str, lens_input: bool, peepholes: bool, dynamic: bool):
    rng = np.random.default_rng(0)
    steps, batch, size, hidden = 6, 3, 5, 4
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    inits = [("W", rng.standard_normal((1, gates * hidden, size)).astype(np.float32) * 0.5),
             ("R", rng.standard_normal((1, gates * hidden, hidden)).astype(np.float32) * 0.5),
             ("P", rng.standard_normal((1, 3 * hidden)).astype(np.float32) * 0.5)]
    ins = ["x", "W", "R", "", "lens" if lens_input else ""] + (["", "", "P"] if peepholes else [])
    inputs = [("x", F32, ["t", "b", size] if dynamic else [steps, batch, size])]
    feeds = [rng.standard_normal((steps, batch, size)).astype(np.float32)]
    if lens_input:
        inputs.append(("lens", TensorProto.INT32, ["b"] if dynamic else [batch]))
        feeds.append(np.array([6, 2, 4], np.int32))
    model = _model([helper.make_node(op, ins, ["y", "h"], hidden_size=hidden)], inputs, [("y", F32), ("h", F32)],
                   inits if peepholes else inits[:2])
    want, got = _ort(model, feeds), compile_openvino(model)(feeds)
    return max(float(np.abs(w - g).max()) for w, g in zip(want, got))


def probe_rnn_lengths_with_dynamic_dims():
    for op in ("RNN", "GRU", "LSTM"):
        assert _rnn(op, lens_input=True, peepholes=False, dynamic=False) < 1e-5, op
        assert _rnn(op, lens_input=True, peepholes=False, dynamic=True) > 0.1, op


def probe_lstm_peepholes():
    assert _rnn("LSTM", lens_input=False, peepholes=False, dynamic=False) < 1e-5
    assert _rnn("LSTM", lens_input=False, peepholes=True, dynamic=False) > 0.01


def probe_qdq_16_bit():
    scale, zero = np.array(0.1, np.float32), np.array(0, np.int16)
    model = _model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                    helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
                   [("x", F32, [2, 3])], [("y", F32)], [("s", scale), ("z", zero)], opset=21)
    assert "stripping" in _refuses(model)


def probe_dynamic_rank():
    model = _model([helper.make_node("Squeeze", ["x"], ["y"])], [("x", F32, ["a", "b"])], [("y", F32)])
    assert "dynamic rank" in _refuses(model)


def probe_sequences():
    """A Loop appending x[:i + 1] to a sequence (elements of 1, 2, 3 rows), then
    ConcatFromSequence: 6 rows in ONNX Runtime; OpenVINO's lowering gives 9 (or refuses)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["i", "one"], ["i1"]), helper.make_node("Reshape", ["i1", "one1"], ["end"]),
         helper.make_node("Slice", ["x", "zero1", "end", "zero1"], ["part"]),
         helper.make_node("SequenceInsert", ["seq_in", "part"], ["seq_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq_in", F32, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq_out", F32, None)],
        [numpy_helper.from_array(np.array(1), "one"), numpy_helper.from_array(np.array([0]), "zero1"),
         numpy_helper.from_array(np.array([1]), "one1")],
    )
    model = _model([helper.make_node("SequenceEmpty", [], ["s0"], dtype=F32),
                    helper.make_node("Loop", ["n", "true", "s0"], ["s"], body=body),
                    helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
                   [("x", F32, ["rows", 3]), ("n", I64, [])], [("y", F32)], [("true", np.array(True))])
    feeds = [np.arange(12, dtype=np.float32).reshape(4, 3), np.array(3)]
    assert _ort(model, feeds)[0].shape == (6, 3)
    try:
        got = compile_openvino(model)(feeds)[0]
    except Exception:  # noqa: BLE001 - refused: also not what ONNX says
        return
    assert got.shape != (6, 3), got.shape


def test_a_cap_cannot_show_openvinos_own_mvn_kernel():
    """Why ``runtime_notes.CAP_ARTIFACT`` outcomes under a cap are not judged: OpenVINO's MVN
    (LayerNormalization over 8 values) runs on the machine's own kernels and kills the process
    under the AVX2 cap of an AVX-512 CPU (some of OpenVINO's own kernels look at the real CPU,
    not at the cap). Fails once OpenVINO no longer does so: then CAP_ARTIFACT can go."""
    from harness.openvino_run import OpenVinoCrashed

    if "avx2" not in openvino_cpu_classes()[1:]:
        pytest.skip(f"this CPU ({native_cpu_class()}) runs no class above AVX2, so nothing is capped to it")
    w, b = np.ones(8, np.float32), np.zeros(8, np.float32)
    model = _model([helper.make_node("LayerNormalization", ["x", "w", "b"], ["y"], axis=-1)],
                   [("x", F32, [2, 8])], [("y", F32)], [("w", w), ("b", b)])
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    assert np.allclose(compile_openvino(model)([x])[0], _ort(model, [x])[0], atol=1e-5)
    with pytest.raises(OpenVinoCrashed):
        compile_openvino(model, "avx2")([x])


PROBES = {name[len("probe_"):].replace("_", "-"): fn for name, fn in globals().items() if name.startswith("probe_")}
OPENVINOS = [limit for limit in OPENVINO_LIMITS if not limit.pending]


@pytest.mark.parametrize("limit", OPENVINOS, ids=[limit.key for limit in OPENVINOS])
def test_openvino_still_behaves_as_listed(limit):
    import openvino

    assert limit.key in PROBES, f"no probe shows the limitation {limit.key!r}"
    assert openvino.get_version().startswith(OPENVINO_VERSION), (
        f"OpenVINO {openvino.get_version()} here, the listing was measured with {OPENVINO_VERSION}: "
        "run the op tests and update runtime_notes"
    )
    classes = [cpu for cpu in openvino_cpu_classes() if limit.holds_on(cpu)]
    if not classes:
        pytest.skip(f"{limit.key} shows on {', '.join(limit.cpus)} kernels only; this CPU "
                    f"({native_cpu_class()}) runs {', '.join(openvino_cpu_classes())}")
    for cpu in classes:
        with on_cpu(cpu):
            PROBES[limit.key]()


def test_every_probe_belongs_to_a_limit():
    assert sorted(PROBES) == sorted(limit.key for limit in OPENVINOS)


def test_every_listed_case_exists():
    """Each listed case id names a case and format the tests build (or a toolkit model); a
    case is listed once."""
    from harness.cases import REGISTRY, load_case_files

    if os.environ.get("PD2ONNX_CASE_FILES"):
        pytest.skip("PD2ONNX_CASE_FILES loads only some cases")
    tests = os.path.dirname(os.path.abspath(__file__))
    load_case_files(os.path.join(tests, "ops"), "opcases")
    load_case_files(os.path.join(tests, "models"), "modelcases")
    known = {f"{name}[{fmt}]" for name, case in REGISTRY.items() for fmt in case.formats}
    listed = [case for limit in OPENVINO_LIMITS for case in limit.cases]
    assert not sorted({c for c in listed if listed.count(c) > 1}), "cases listed under two limitations"
    assert not sorted(c for c in listed if c not in known and "[" in c), "listed cases that no test builds"
    for case in listed:
        assert openvino_limit(case) is not None
