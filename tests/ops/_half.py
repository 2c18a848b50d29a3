"""Half-precision checks of converted programs (``test_llm_half``, ``test_fused_no_cpu_kernel``):
a program Paddle saved in float32, retyped to float16/bfloat16, converted, run on inputs rounded to
the half type and compared with the float32 conversion of the same program on the same inputs."""

from __future__ import annotations

import copy

import ml_dtypes  # noqa: F401  (numpy knows bfloat16 through it, for rounding the inputs)
import numpy as np
import onnx
import onnx_ir as ir
from onnx import TensorProto, helper

from harness.check import compare, ort_max_opset
from pd2onnx.convert.exporter import export_program

HALF = {"float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16}
# float16 has an 11-bit significand, bfloat16 an 8-bit one: a few roundings of intermediates
TOL = {"float16": 5e-3, "bfloat16": 3e-2}


# Outputs that Paddle's kernels write in float32 whatever the input's type (the mappers compute
# them so, and a graph output carries the type the graph computes): (label, output index).
# fused_bias_residual_layernorm's mean and 1/std.
FLOAT32_OUTPUTS = {("llm_fused_layer_norm (pir)", 1), ("llm_fused_layer_norm (pir)", 2)}

def retype(program, dtype: str):
    """A copy of ``program`` with every float32 value (and float32 dtype attribute) in ``dtype``."""
    program = copy.deepcopy(program)
    seen = set()
    for value in [*program.inputs, *program.outputs, *(v for b in program.blocks for v in b.values.values())]:
        if id(value) not in seen and value.dtype == "float32":
            value.dtype = dtype
        seen.add(id(value))
    for op in program.walk_ops():
        for key, attr in op.attrs.items():
            if key in ("dtype", "out_dtype", "in_dtype") and attr == "float32":
                op.attrs[key] = dtype
    for name, arr in program.params.items():
        if arr.dtype == np.float32:
            raise AssertionError(f"parameter {name} is float32: retyping parameters is not done here")
    return program


def with_float32_edges(model: ir.Model) -> onnx.ModelProto:
    """The model with its half-type inputs and outputs cast from/to float32 at the edges."""
    proto = ir.serde.serialize_model(model)
    g = proto.graph
    head, tail = [], []
    for inp in g.input:
        t = inp.type.tensor_type
        if t.elem_type in HALF.values():
            name = inp.name
            inp.name = f"{name}__f32"
            head.append(helper.make_node("Cast", [inp.name], [name], to=t.elem_type))
            t.elem_type = TensorProto.FLOAT
    for out in g.output:
        t = out.type.tensor_type
        if t.elem_type in HALF.values():
            name = out.name
            out.name = f"{name}__f32"
            tail.append(helper.make_node("Cast", [name], [out.name], to=TensorProto.FLOAT))
            t.elem_type = TensorProto.FLOAT
    nodes = head + list(g.node) + tail
    del g.node[:]
    g.node.extend(nodes)
    return proto


def _run(proto: onnx.ModelProto, inputs: list[np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    onnx.checker.check_model(proto, full_check=True)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), inputs)})


def rounded(inputs: list[np.ndarray], dtype: str) -> list[np.ndarray]:
    """float32 inputs rounded to the half type (exactly representable there)."""
    np_half = np.float16 if dtype == "float16" else np.dtype("bfloat16")
    return [a.astype(np_half).astype(np.float32) if a.dtype == np.float32 else a for a in inputs]


def check_half(program, inputs: list[np.ndarray], dtype: str, label: str, opsets=None) -> None:
    """Convert ``program`` retyped to ``dtype`` and compare it with its float32 conversion."""
    half = retype(program, dtype)
    inputs = rounded(inputs, dtype)
    for opset in opsets or sorted({17, ort_max_opset()}):
        want = _run(ir.serde.serialize_model(export_program(program, opset=opset, auto_opset=False)), inputs)
        model = export_program(half, opset=opset, auto_opset=False)
        declared = [v.type.dtype.name.lower() for v in model.graph.outputs if v.type is not None]
        got = _run(with_float32_edges(model), inputs)
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            if w.dtype != np.float32:  # integer outputs stay as they are
                compare(f"{label} output {k} opset {opset}", g, w, 0, 0)
                continue
            expected = "float" if (label, k) in FLOAT32_OUTPUTS else dtype
            assert declared[k] == expected, f"{label}: output {k} is declared {declared[k]}, not {expected}"
            tol = TOL[dtype]
            compare(f"{label} {dtype} output {k} opset {opset}", g, w, tol, tol)
