"""Benchmark: ONNX Runtime latency of pd2onnx's interpolation forms, and OpenVINO's agreement.

Saves small Paddle 3 models (one ``interpolate`` each, 64 channels, the sizes below), converts
them with the pd2onnx on the path (default opset, optimized), reports which ONNX form the
converter chose (Resize, or Gathers of Paddle's indices), the median ONNX Runtime latency
(1 thread) and the largest difference from Paddle in ONNX Runtime and in OpenVINO (CPU, f32),
as a fraction of the range, on an image of sharp edges (pixels 0 or 255).
To compare two versions of pd2onnx, run it with each on PYTHONPATH:

    PYTHONPATH=/path/to/other/src python bench/interpolate.py
    PYTHONPATH=src python bench/interpolate.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np
import onnx_ir as ir

# name: (input shape, dynamic H/W, kwargs; "size_of" = the spatial size of a second input)
CASES = {
    "nearest x2.5 (scale, dynamic)": ((1, 64, 80, 80), True, dict(scale_factor=2.5, mode="nearest")),
    "nearest x3 (scale, dynamic)": ((1, 64, 64, 64), True, dict(scale_factor=3, mode="nearest")),
    "nearest 80->200 (size)": ((1, 64, 80, 80), False, dict(size=[200, 200], mode="nearest")),
    "nearest 80->200 (size of another tensor)": ((1, 64, 80, 80), True, dict(size_of=(200, 200), mode="nearest")),
    "nearest 200->80 (size of another tensor)": ((1, 64, 200, 200), True, dict(size_of=(80, 80), mode="nearest")),
    "nearest 56->112x168 (size)": ((1, 64, 56, 56), False, dict(size=[112, 168], mode="nearest")),
    "nearest x0.75 (scale)": ((1, 64, 160, 160), False, dict(scale_factor=0.75, mode="nearest")),
    "nearest x2 (scale, dynamic)": ((1, 64, 80, 80), True, dict(scale_factor=2, mode="nearest")),
    "nearest 4x6->10x15 (size of another tensor)": ((1, 3, 4, 6), True, dict(size_of=(10, 15), mode="nearest")),
    "bilinear x2.5 (scale)": ((1, 64, 80, 80), False, dict(scale_factor=2.5, mode="bilinear")),
    "bilinear size of another tensor": ((1, 64, 80, 80), True, dict(size_of=(200, 200), mode="bilinear")),
    "bilinear x2 (scale, dynamic)": ((1, 64, 80, 80), True, dict(scale_factor=2, mode="bilinear")),
    "bilinear 480x640->712x488 (size, UVDoc)": (
        (1, 3, 480, 640), False, dict(size=[712, 488], mode="bilinear")),
    "bilinear 480x640->712x488 (size, dynamic)": (
        (1, 3, 480, 640), True, dict(size=[712, 488], mode="bilinear")),
    "bilinear 80->200 (size)": ((1, 64, 80, 80), False, dict(size=[200, 200], mode="bilinear")),
    "bilinear 200->80 (size)": ((1, 64, 200, 200), False, dict(size=[80, 80], mode="bilinear")),
    "linear 700->1000 (size)": ((1, 64, 700), False, dict(size=[1000], mode="linear", data_format="NCW")),
    "trilinear 16x32x32->24x48x48 (size)": ((1, 8, 16, 32, 32), False,
                                           dict(size=[24, 48, 48], mode="trilinear", data_format="NCDHW")),
}


def build(paddle, out_dir: str, shape, dynamic: bool, kwargs: dict):
    kwargs = dict(kwargs)
    size_of = kwargs.pop("size_of", None)
    spatial = [None] * (len(shape) - 2) if dynamic else list(shape[2:])
    specs = [paddle.static.InputSpec([shape[0], shape[1], *spatial], "float32", "x")]
    rng = np.random.default_rng(0)
    inputs = [(rng.integers(0, 2, shape) * 255).astype("float32")]  # sharp edges: 0 or 255
    if size_of is not None:
        specs.append(paddle.static.InputSpec([1, 1, None, None], "float32", "y"))
        inputs.append(np.zeros((1, 1, *size_of), "float32"))

        def fn(x, y):
            return paddle.nn.functional.interpolate(x, size=paddle.shape(y)[2:], **kwargs)
    else:
        def fn(x):
            return paddle.nn.functional.interpolate(x, **kwargs)

    layer = paddle.jit.to_static(fn, input_spec=specs, full_graph=True)
    paddle.jit.save(layer, os.path.join(out_dir, "model"), input_spec=specs)
    want = fn(*(paddle.to_tensor(a) for a in inputs)).numpy()
    return os.path.join(out_dir, "model.json"), inputs, want


def latency(session, feeds, budget: float) -> float:
    session.run(None, feeds)
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < budget or len(times) < 5:
        t = time.perf_counter()
        session.run(None, feeds)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=2.0, help="seconds of ONNX Runtime runs per case")
    parser.add_argument("--only", default="", help="comma-separated substrings of case names")
    args = parser.parse_args()

    import onnxruntime as ort
    import openvino as ov
    import paddle

    import pd2onnx
    from pd2onnx.api import convert

    core = ov.Core()
    print(f"pd2onnx from {os.path.dirname(pd2onnx.__file__)}; onnxruntime {ort.__version__}, openvino {ov.__version__}")
    print("| case | ONNX form | ONNX Runtime ms (1 thread) | max diff / range ONNX Runtime "
          "| max diff / range OpenVINO |")
    print("|---|---|---|---|---|")
    for name, (shape, dynamic, kwargs) in CASES.items():
        if args.only and not any(s in name for s in args.only.split(",")):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            model_file, inputs, want = build(paddle, tmp, shape, dynamic, kwargs)
            model = convert(model_file)
        ops = {n.op_type for n in model.graph}
        form = "Resize" if "Resize" in ops else "Gather" if "Gather" in ops else "+".join(sorted(ops))
        proto = ir.serde.serialize_model(model).SerializeToString()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        session = ort.InferenceSession(proto, opts, providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        feeds = dict(zip(names, inputs))
        got = session.run(None, feeds)[0]
        compiled = core.compile_model(core.read_model(proto, b""), "CPU",
                                      {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1})
        kept = {n for port in compiled.inputs for n in port.get_names()}
        ov_got = compiled({k: v for k, v in feeds.items() if k in kept})[compiled.outputs[0]]
        ms = latency(session, feeds, args.budget)
        diff = float(np.abs(got - want).max()) / 255 if got.shape == want.shape else float("nan")
        ov_diff = float(np.abs(ov_got - want).max()) / 255 if ov_got.shape == want.shape else float("nan")
        print(f"| {name} | {form} | {ms:.2f} | {diff:.3g} | {ov_diff:.3g} |")


if __name__ == "__main__":
    main()
