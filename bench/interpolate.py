"""Benchmark: latency of pd2onnx's interpolation forms against a plain ONNX Resize, and exactness.

Saves small Paddle 3 models (one ``interpolate`` each, the sizes below), converts them with the
pd2onnx on the path (default opset, optimized) and reports which ONNX form the converter chose
(Resize, or Gathers of Paddle's indices weighted by Mul and Add), its node count, its latency
(ms, the fastest of interleaved runs) in ONNX Runtime (1 and 2 intra-op threads) and OpenVINO
(CPU, f32, 1 thread), the same latencies for a plain ONNX Resize of the same sizes (what a
converter writes when it ignores Paddle's coordinates), and the largest difference from Paddle
as a fraction of the range on an image of sharp edges (pixels 0 or 255): pd2onnx's model in ONNX
Runtime and OpenVINO, the plain Resize in ONNX Runtime. The two models' runs are interleaved so
that both see the same machine load. To compare two versions of pd2onnx, run it with each on
PYTHONPATH:

    PYTHONPATH=/path/to/other/src python bench/interpolate.py
    PYTHONPATH=src python bench/interpolate.py
"""

from __future__ import annotations

import argparse
import os
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
    "bilinear x2 (scale, U-Net/FPN decoder)": ((1, 64, 80, 80), False, dict(scale_factor=2, mode="bilinear")),
    "bilinear 40x40->80x80 (size of another tensor, FPN)": (
        (1, 128, 40, 40), True, dict(size_of=(80, 80), mode="bilinear")),
    "bilinear 480x640->712x488 (size, UVDoc)": (
        (1, 3, 480, 640), False, dict(size=[712, 488], mode="bilinear")),
    "bilinear 480x640->712x488 (size, dynamic)": (
        (1, 3, 480, 640), True, dict(size=[712, 488], mode="bilinear")),
    "bilinear 80->200 (size)": ((1, 64, 80, 80), False, dict(size=[200, 200], mode="bilinear")),
    "bilinear 200->80 (size)": ((1, 64, 200, 200), False, dict(size=[80, 80], mode="bilinear")),
    "bicubic x2 (scale)": ((1, 64, 80, 80), False, dict(scale_factor=2, mode="bicubic")),
    "bicubic 80->200 (size)": ((1, 64, 80, 80), False, dict(size=[200, 200], mode="bicubic")),
    "bicubic 480x640->712x488 (size)": ((1, 3, 480, 640), False, dict(size=[712, 488], mode="bicubic")),
    "bicubic 200->80 (size)": ((1, 64, 200, 200), False, dict(size=[80, 80], mode="bicubic")),
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


def plain_resize(shape, out_shape, kwargs: dict) -> bytes:
    """A plain ONNX Resize (opset 17) from ``shape`` to ``out_shape`` with the mode and coordinate
    transformation a converter that ignores Paddle's coordinates would write."""
    from onnx import TensorProto, helper

    method = kwargs["mode"]
    mode = {"nearest": "nearest", "bicubic": "cubic"}.get(method, "linear")
    align = kwargs.get("align_corners", False)
    coords = ("align_corners" if align else "asymmetric" if method == "nearest"
              else "half_pixel" if method == "bicubic" else "pytorch_half_pixel")
    attrs = dict(mode=mode, coordinate_transformation_mode=coords)
    if mode == "cubic":
        attrs["cubic_coeff_a"] = -0.75
    if mode == "nearest":
        attrs["nearest_mode"] = "floor"
    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs)], "resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out_shape))],
        [helper.make_tensor("sizes", TensorProto.INT64, [len(out_shape)], list(out_shape))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def latencies(runs: list, budget: float) -> list[float]:
    """Fastest run of each callable in ms, their runs interleaved for ``budget`` seconds (at least 7
    each). The fastest, not the median: on a shared machine the median measures the neighbours'
    load (2-10x on a loaded 2-core machine), the fastest run the least disturbed one."""
    for run in runs:
        run()
    times = [[] for _ in runs]
    start = time.perf_counter()
    while time.perf_counter() - start < budget or len(times[0]) < 7:
        for run, ts in zip(runs, times):
            t = time.perf_counter()
            run()
            ts.append(time.perf_counter() - t)
    return [min(ts) * 1000 for ts in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=3.0,
                        help="seconds of interleaved runs per case and runtime")
    parser.add_argument("--only", default="", help="comma-separated substrings of case names")
    args = parser.parse_args()

    import onnxruntime as ort
    import openvino as ov
    import paddle

    import pd2onnx
    from pd2onnx.api import convert

    core = ov.Core()
    print(f"pd2onnx from {os.path.dirname(pd2onnx.__file__)}; onnxruntime {ort.__version__}, openvino {ov.__version__}")
    print("| case | pd2onnx form (nodes) | ORT 1 thread ms: pd2onnx / Resize "
          "| ORT 2 threads ms: pd2onnx / Resize "
          "| OpenVINO ms: pd2onnx / Resize | diff / range: ORT, OpenVINO / Resize in ORT |")
    print("|---|---|---|---|---|---|")
    for name, (shape, dynamic, kwargs) in CASES.items():
        if args.only and not any(s in name for s in args.only.split(",")):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            model_file, inputs, want = build(paddle, tmp, shape, dynamic, kwargs)
            model = convert(model_file)
        ops = {n.op_type for n in model.graph}
        form = "Resize" if "Resize" in ops else "Gather" if "Gather" in ops else "+".join(sorted(ops))
        proto = ir.serde.serialize_model(model).SerializeToString()
        plain = plain_resize(shape, want.shape, {k: v for k, v in kwargs.items() if k != "size_of"})

        def ort_session(data: bytes, threads: int):
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            return ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])

        def ov_model(data: bytes):
            return core.compile_model(core.read_model(data, b""), "CPU",
                                      {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1})

        row = []
        for threads in (1, 2):
            ours, theirs = ort_session(proto, threads), ort_session(plain, threads)
            feeds = dict(zip([i.name for i in ours.get_inputs()], inputs))
            if threads == 1:
                got = ours.run(None, feeds)[0]
                plain_got = theirs.run(None, {"x": inputs[0]})[0]
            row.append(latencies([lambda: ours.run(None, feeds), lambda: theirs.run(None, {"x": inputs[0]})],
                                 args.budget))
        compiled, compiled_plain = ov_model(proto), ov_model(plain)
        kept = {n for port in compiled.inputs for n in port.get_names()}
        ov_feeds = {k: v for k, v in feeds.items() if k in kept}
        ov_got = compiled(ov_feeds)[compiled.outputs[0]]
        row.append(latencies([lambda: compiled(ov_feeds), lambda: compiled_plain({0: inputs[0]})],
                             args.budget))

        def diff(a: np.ndarray) -> str:
            return f"{float(np.abs(a - want).max()) / 255:.2g}" if a.shape == want.shape else "shape"

        times = " | ".join(f"{a:.2f} / {b:.2f}" for a, b in row)
        print(f"| {name} | {form} ({len(list(model.graph))}) | {times} "
              f"| {diff(got)}, {diff(ov_got)} / {diff(plain_got)} |", flush=True)


if __name__ == "__main__":
    main()
