"""silu / swish in float32: how far each computation is from the exact (float64) result.

    python bench/silu_accuracy.py

Compares Paddle's own kernel (``F.silu``) with the two ONNX forms a converter can write,
x / (1 + exp(-x)) (Neg, Exp, Add, Div: what pd2onnx writes) and x * Sigmoid(x) (Mul, Sigmoid),
each run by ONNX Runtime and by OpenVINO (CPU, f32 precision hint), on 10^6 uniform inputs
per range. Prints the largest absolute and relative difference from x / (1 + exp(-x))
computed in float64. docs/benchmarks.md ("silu / swish") has the figures and the decision.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

RANGES = ((-8, 8), (-17, 17), (-30, -17), (-90, -30), (17, 88))


def model(form: str) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])
    if form == "div":
        nodes = [helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Exp", ["n"], ["e"]),
                 helper.make_node("Add", ["one", "e"], ["d"]), helper.make_node("Div", ["x", "d"], ["y"])]
        inits = [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])]
    else:
        nodes = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])]
        inits = []
    graph = helper.make_graph(nodes, "silu", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def runners():
    import onnxruntime as ort
    import openvino as ov

    core = ov.Core()
    out = {}
    for form in ("div", "sigmoid"):
        data = model(form).SerializeToString()
        sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        out[f"ORT {form}"] = lambda x, s=sess: s.run(None, {"x": x})[0]
        compiled = core.compile_model(core.read_model(data, b""), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        out[f"OpenVINO {form}"] = lambda x, c=compiled: c({"x": x})[c.outputs[0]]
    return out


def main() -> None:
    import paddle

    rng = np.random.default_rng(0)
    columns = {"Paddle F.silu": lambda x: paddle.nn.functional.silu(paddle.to_tensor(x)).numpy(), **runners()}
    print("| x range | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for lo, hi in RANGES:
        x = rng.uniform(lo, hi, 1_000_000).astype(np.float32)
        x64 = x.astype(np.float64)
        exact = x64 / (1 + np.exp(-x64))
        cells = []
        for fn in columns.values():
            diff = np.abs(fn(x).astype(np.float64) - exact)
            rel = diff / np.maximum(np.abs(exact), np.finfo(np.float64).tiny)
            cells.append(f"{diff.max():.1e} / {rel.max():.1e}")
        print(f"| [{lo}, {hi}] | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
