"""Fused ops that Paddle's CPU builds can neither run nor write (no CPU kernel, so no dtype
passes the builders' kernel check): ``fused_bias_act``, ``rms_norm``, ``fused_rms_norm`` (the
old name), ``flash_attn``, ``flash_attn_unpadded`` and ``memory_efficient_attention``. Each is
put into a real program saved by Paddle (a case whose operands fit) in place of the ops there,
converted at the lowest opset that converts it, 17, 23 where the mapper changes there, and the
newest ONNX Runtime runs, and compared with a numpy rendering of Paddle's GPU kernel (or with
Paddle's own output where the op only changes name). The same programs retyped to
float16/bfloat16 (the dtypes LLM exports use) are compared with their float32 conversion
(``ops._half``)."""

from __future__ import annotations

import math
import os

import numpy as np
import onnx
import onnx_ir as ir
import pytest

from harness import builder
from harness.cases import REGISTRY, load_case_files
from harness.check import compare, ort_max_opset, run_onnx
from ops._half import HALF, check_half
from pd2onnx.convert.exporter import export_program
from pd2onnx.errors import ConversionError
from pd2onnx.paddle import load

load_case_files(os.path.dirname(os.path.abspath(__file__)), "opcases")
CASE = "llm_fused_layer_norm"  # inputs x [2, 3, 24], weight [24], bias [24]


def _program(act: str, **attrs):
    if CASE not in REGISTRY:
        pytest.skip(f"{CASE} is not loaded (PD2ONNX_CASE_FILES leaves cases_llm out)")
    built = builder.get(REGISTRY[CASE], "pir")
    assert built.error is None, built.error
    program = load(built.model_file)
    (op,) = [op for op in program.main.ops if op.type == "fused_bias_residual_layernorm"]
    x, bias = op.inputs["x"][0], op.inputs["norm_bias"][0]
    op.type = "fused_bias_act"
    op.inputs = {"x": [x], "bias": [bias], "dequant_scales": [], "shift": [], "smooth": []}
    out = op.outputs["out"][0]
    op.outputs = {"out": [out]}
    op.attrs = {"act_method": act, "quant_scale": -1.0, **attrs}
    # keep only the first fetch (the op's ``out``)
    fetches = [o for o in program.main.ops if o.type == "fetch"]
    for extra in fetches[1:]:
        program.main.ops.remove(extra)
    program.outputs = program.outputs[:1]
    io = np.load(os.path.join(built.dir, "io.npz"))
    return program, io["in0"], io["in2"]


def opsets(program, *extra: int) -> list[int]:
    """The lowest opset the program converts at, 17, ``extra`` and the newest ONNX Runtime runs."""
    lowest = export_program(program, opset=7, auto_opset=True).opset_imports[""]
    return sorted({o for o in (lowest, 17, ort_max_opset(), *extra) if lowest <= o <= ort_max_opset()})


def _gelu(v):
    return v * 0.5 * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))


@pytest.mark.parametrize("act", ["gelu", "relu", "swiglu", "geglu"])
def test_fused_bias_act(act):
    program, x, bias = _program(act)
    feeds = [np.asarray(a) for a in (x, np.zeros_like(bias), bias)]
    v = (x + bias).astype(np.float64)
    if act == "gelu":
        want = _gelu(v)
    elif act == "relu":
        want = np.maximum(v, 0)
    else:
        a, b = v[..., :12], v[..., 12:]
        want = (_gelu(a) if act == "geglu" else a / (1 + np.exp(-a))) * b
    for opset in opsets(program):
        (got,) = run_onnx(export_program(program, opset=opset, auto_opset=False), feeds)
        compare(f"fused_bias_act {act} opset {opset}", got, want.astype(np.float32), 1e-5, 1e-5)


def test_fused_bias_act_quantized_refused():
    program, _, _ = _program("gelu", quant_scale=2.0)
    with pytest.raises(ConversionError, match=r"fused_bias_act \(.*quant_scale=2.0"):
        export_program(program, opset=17)


@pytest.mark.parametrize("opset", [0, 17, 23, 99])
def test_rms_norm(opset):
    """``F.rms_norm`` (PIR ``rms_norm``: GPU-only in Paddle 3.3), put in place of the
    fused_rms_norm of a saved program; opset 23 uses ONNX RMSNormalization."""
    name = "llm_fused_rms_norm"  # x [2, 3, 20] (dynamic leading dims), weight [20]
    if name not in REGISTRY:
        pytest.skip(f"{name} is not loaded")
    built = builder.get(REGISTRY[name], "pir")
    program = load(built.model_file)
    (op,) = [op for op in program.main.ops if op.type == "fused_rms_norm_quant"]
    op.type = "rms_norm"
    op.inputs = {"x": op.inputs["x"], "scale": op.inputs["norm_weight"]}
    op.outputs = {"out": op.outputs["out"], "invvar": []}
    op.attrs = {"normalized_shape": [20], "epsilon": 1e-6}
    io = np.load(os.path.join(built.dir, "io.npz"))
    x, w = io["in0"], io["in1"]
    opset = {0: opsets(program)[0], 99: ort_max_opset()}.get(opset, opset)  # lowest, newest
    model = export_program(program, opset=opset, auto_opset=False)
    if opset >= 23:
        assert any(n.op_type == "RMSNormalization" for n in model.graph)
    (got,) = run_onnx(model, [x, w])
    v = x.astype(np.float64)
    want = v / np.sqrt(np.mean(v * v, axis=-1, keepdims=True) + 1e-6) * w
    compare(f"rms_norm opset {opset}", got, want.astype(np.float32), 1e-5, 1e-5)


def _attention_program(op_type: str, inputs: dict, out_slot: str, attrs: dict, fmt: str = "legacy"):
    """A causal-attention case (q, k, v [batch, 5, 3, 8]; Paddle 2.6's legacy save or 3.3's PIR
    one) with its ops replaced by one ``op_type`` op (flash_attn / memory_efficient_attention
    have no CPU kernel)."""
    from pd2onnx.paddle.program import Op

    name = {"legacy": "llm_sdpa_causal_26", "pir": "llm_sdpa_causal_pir"}[fmt]
    if name not in REGISTRY:
        pytest.skip(f"{name} is not loaded")
    built = builder.get(REGISTRY[name], fmt)
    assert built.error is None, built.error
    program = load(built.model_file)
    block = program.main
    keep = [op for op in block.ops if op.type in ("feed", "fetch", "data")]
    (fetch,) = [op for op in keep if op.type == "fetch"]
    target = fetch.inputs["x"][0]
    feeds = [v.name for v in program.inputs]
    op = Op(op_type, {slot: [feeds[i]] for slot, i in inputs.items()}, {out_slot: [target]}, attrs)
    block.ops = [o for o in keep if o.type != "fetch"] + [op, fetch]
    for i, o in enumerate(block.ops):
        o.index = i
    io = np.load(os.path.join(built.dir, "io.npz"))
    return program, [io["in0"], io["in1"], io["in2"]]


def _attention_ref(q, k, v, scale, causal_shift=None):
    qt, kt, vt = (a.transpose(0, 2, 1, 3).astype(np.float64) for a in (q, k, v))
    s = qt @ kt.transpose(0, 1, 3, 2) * scale
    if causal_shift is not None:
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None] + causal_shift, -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ vt).transpose(0, 2, 1, 3).astype(np.float32)


@pytest.mark.parametrize("fmt", ["legacy", "pir"])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attn(causal, fmt):
    program, (q, k, v) = _attention_program(
        "flash_attn", {"q": 0, "k": 1, "v": 2}, "out", {"causal": causal, "dropout": 0.0, "is_test": True}, fmt
    )
    for opset in opsets(program, 13, 23):
        model = export_program(program, opset=opset, auto_opset=False)
        assert (opset >= 23) == any(n.op_type == "Attention" for n in model.graph)
        (got,) = run_onnx(model, [q, k, v])
        want = _attention_ref(q, k, v, 1 / np.sqrt(8.0), 0 if causal else None)
        compare(f"flash_attn causal={causal} opset {opset}", got, want, 1e-5, 1e-5)


@pytest.mark.parametrize("fmt", ["legacy", "pir"])
def test_memory_efficient_attention(fmt):
    program, (q, k, v) = _attention_program(
        "memory_efficient_attention",
        {"query": 0, "key": 1, "value": 2},
        "output",
        {"causal": True, "scale": 0.3, "dropout_p": 0.0, "is_test": True},
        fmt,
    )
    for opset in opsets(program, 23):
        (got,) = run_onnx(export_program(program, opset=opset, auto_opset=False), [q, k, v])
        compare(f"memory_efficient_attention opset {opset}", got, _attention_ref(q, k, v, 0.3, 0), 1e-5, 1e-5)


def test_flash_attn_training_dropout_refused():
    program, _ = _attention_program(
        "flash_attn", {"q": 0, "k": 1, "v": 2}, "out", {"dropout": 0.1, "is_test": False}
    )
    with pytest.raises(ConversionError, match=r"flash_attn \(.*dropout=0.1"):
        export_program(program, opset=17)


@pytest.mark.parametrize("fmt", ["legacy", "pir"])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attn_unpadded(causal, fmt):
    """Two packed sequences of lengths 4 and 6 (q, k, v [10, 3, 8]); cu_seqlens as parameters."""
    program, (q, k, v) = _unpadded_program(causal, fmt)
    want = np.concatenate(
        [
            _attention_ref(q[None, a:b], k[None, a:b], v[None, a:b], 0.25, 0 if causal else None)[0]
            for a, b in ((0, 4), (4, 10))
        ]
    )
    for opset in opsets(program):
        model = export_program(program, opset=opset, auto_opset=False)
        onnx.checker.check_model(ir.serde.serialize_model(model), full_check=True)
        (got,) = run_onnx(model, [q, k, v])
        compare(f"flash_attn_unpadded causal={causal} opset {opset}", got, want, 1e-5, 1e-5)


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_fused_rms_norm_old_name(fmt):
    """``fused_rms_norm`` (the PIR name of earlier Paddle 3.x releases; 3.3 writes
    ``fused_rms_norm_quant`` and has no builder for the old name) in place of the
    fused_rms_norm_quant of a saved program: compared with what Paddle itself computed (PIR) or
    the case's numpy reference (Paddle 2.6's legacy ``rms_norm``, GPU-only there)."""
    from harness.check import load_io

    name = {"pir": "llm_fused_rms_norm_residual", "legacy": "llm_rms_norm_legacy_26"}[fmt]
    if name not in REGISTRY:
        pytest.skip(f"{name} is not loaded")
    built = builder.get(REGISTRY[name], fmt)
    assert built.error is None, built.error
    program = load(built.model_file)
    (op,) = [op for op in program.walk_ops() if op.type == "fused_rms_norm_quant"]
    op.type = "fused_rms_norm"
    inputs, wants = load_io(os.path.join(built.dir, "io.npz"))
    for opset in opsets(program, 23):
        gots = run_onnx(export_program(program, opset=opset, auto_opset=False), inputs)
        for k, (got, want) in enumerate(zip(gots, wants)):
            compare(f"fused_rms_norm ({fmt}) output {k} opset {opset}", got, want, 1e-5, 1e-5)


def _rms_norm_program():
    name = "llm_fused_rms_norm"
    if name not in REGISTRY:
        pytest.skip(f"{name} is not loaded")
    built = builder.get(REGISTRY[name], "pir")
    program = load(built.model_file)
    (op,) = [op for op in program.main.ops if op.type == "fused_rms_norm_quant"]
    op.type = "rms_norm"
    op.inputs = {"x": op.inputs["x"], "scale": op.inputs["norm_weight"]}
    op.outputs = {"out": op.outputs["out"], "invvar": []}
    op.attrs = {"normalized_shape": [20], "epsilon": 1e-6}
    io = np.load(os.path.join(built.dir, "io.npz"))
    return program, [io["in0"], io["in1"]]


def _unpadded_program(causal, fmt="legacy"):
    from pd2onnx.paddle.program import Value

    program, (q, k, v) = _attention_program(
        "flash_attn_unpadded",
        {"q": 0, "k": 1, "v": 2},
        "out",
        {"causal": causal, "scale": 0.25, "dropout": 0.0, "is_test": True},
        fmt,
    )
    block = program.main
    for value in program.inputs:
        value.shape = (10, 3, 8)
        block.values[value.name].shape = (10, 3, 8)
    for name in ("cu_q", "cu_k"):
        block.values[name] = Value(name, "int32", (3,), persistable=True)
        program.params[name] = np.asarray([0, 4, 10], np.int32)
    (op,) = [o for o in block.ops if o.type == "flash_attn_unpadded"]
    op.inputs.update(cu_seqlens_q=["cu_q"], cu_seqlens_k=["cu_k"])
    fetched = [n for o in block.ops if o.type == "fetch" for ns in o.outputs.values() for n in ns]
    for name in [*op.outputs["out"], *fetched]:
        program.find_value(name).shape = (10, 3, 8)
    for value in program.outputs:
        value.shape = (10, 3, 8)
    return program, [a.reshape(10, 3, 8) for a in (q, k, v)]


def _half_programs(which):
    if which.startswith("fused_bias_act"):
        program, x, bias = _program(which.split(":")[1])
        return program, [x, np.zeros_like(bias), bias]
    if which == "rms_norm":
        return _rms_norm_program()
    if which.startswith("flash_attn_unpadded"):
        return _unpadded_program(which.endswith("causal"))
    if which.startswith("flash_attn"):
        causal = which.endswith("causal")
        program, qkv = _attention_program(
            "flash_attn", {"q": 0, "k": 1, "v": 2}, "out", {"causal": causal, "dropout": 0.0, "is_test": True}
        )
        return program, qkv
    program, qkv = _attention_program(
        "memory_efficient_attention",
        {"query": 0, "key": 1, "value": 2},
        "output",
        {"causal": True, "scale": 0.3, "dropout_p": 0.0, "is_test": True},
    )
    return program, qkv


_HALF_PROGRAMS = [
    "fused_bias_act:gelu",
    "fused_bias_act:relu",
    "fused_bias_act:swiglu",
    "fused_bias_act:geglu",
    "rms_norm",
    "flash_attn",
    "flash_attn:causal",
    "memory_efficient_attention",
    "flash_attn_unpadded",
    "flash_attn_unpadded:causal",
]


@pytest.mark.parametrize("dtype", sorted(HALF))
@pytest.mark.parametrize("which", _HALF_PROGRAMS)
def test_half_precision(which, dtype):
    """float16/bfloat16 (what these GPU-only ops run in), at opsets 13 (flash_attn_unpadded's
    lowest), 17 and 23 (ONNX Attention/RMSNormalization) and the newest ONNX Runtime runs."""
    program, inputs = _half_programs(which)
    check_half(program, inputs, dtype, which, opsets=sorted({13, 17, 23, ort_max_opset()}))
