#!/usr/bin/env python3
"""Which ONNX form of a tensor array ONNX Runtime and OpenVINO run best, on hand-built graphs.

    python bench/array_forms.py [--steps 1000] [--width 64] [--runs 50]

One ``Loop`` of ``--steps`` iterations keeps an array of ``[1, width]`` elements: each step
reads the previous element back, computes ``tanh(prev @ W)`` and appends it; the graph
outputs the whole array. Three forms of the array:

- ``sequence``: ``SequenceInsert`` / ``SequenceAt``, stacked by ``ConcatFromSequence``;
- ``concat``: a tensor grown by ``Concat``, read with ``Gather`` (what pd2onnx emits);
- ``buffer``: a tensor of all ``steps + 1`` rows allocated before the loop, written with
  ``ScatterND`` and read with ``Gather`` (needs the number of steps when converting).

Each form is checked against the first one and timed (one thread, median of ``--runs``) in
ONNX Runtime and in OpenVINO (CPU, f32 precision hint).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import onnx
from onnx import TensorProto
from onnx import helper as h
from onnx import numpy_helper as nh


def _const(name: str, value) -> onnx.NodeProto:
    return h.make_node("Constant", [], [name], value=nh.from_array(np.asarray(value), name))


def model(form: str, steps: int, width: int) -> onnx.ModelProto:
    w = (np.random.default_rng(0).standard_normal((width, width)) * 0.1).astype(np.float32)
    zero_axis = _const("ax0", np.array([0], np.int64))
    # the body reads element iter (the previous step's; element 0 is the input) and appends
    take = "SequenceAt" if form == "sequence" else "Gather"
    body = [_const("one", np.int64(1)), h.make_node("Add", ["it", "one"], ["next"]),
            h.make_node(take, ["arr_in", "it"], ["prev"]),
            h.make_node("MatMul", ["prev", "W"], ["mm"]), h.make_node("Tanh", ["mm"], ["step"]),
            h.make_node("Identity", ["cond_in"], ["cond_out"])]
    if form == "sequence":
        body.append(h.make_node("SequenceInsert", ["arr_in", "step"], ["arr_out"]))
        carried = h.make_tensor_sequence_value_info
        start = [h.make_node("SequenceConstruct", ["x"], ["arr0"])]
        finish = [h.make_node("ConcatFromSequence", ["arr"], ["y"], axis=0, new_axis=1)]
    else:
        body += [zero_axis, h.make_node("Unsqueeze", ["step", "ax0"], ["row"])]
        carried = h.make_tensor_value_info
        start = [_const("ax", np.array([0], np.int64)), h.make_node("Unsqueeze", ["x", "ax"], ["first"])]
        finish = [h.make_node("Identity", ["arr"], ["y"])]
        if form == "concat":
            body.append(h.make_node("Concat", ["arr_in", "row"], ["arr_out"], axis=0))
            start.append(h.make_node("Identity", ["first"], ["arr0"]))
        else:
            body += [_const("at_shape", np.array([1, 1], np.int64)), h.make_node("Reshape", ["next", "at_shape"], ["at"]),
                     h.make_node("ScatterND", ["arr_in", "at", "row"], ["arr_out"])]
            start += [_const("rest", np.array([steps, 1, width], np.int64)),
                      h.make_node("ConstantOfShape", ["rest"], ["zeros"], value=nh.from_array(np.zeros(1, np.float32))),
                      h.make_node("Concat", ["first", "zeros"], ["arr0"], axis=0)]
    graph_body = h.make_graph(
        body, "body",
        [h.make_tensor_value_info("it", TensorProto.INT64, []), h.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         carried("arr_in", TensorProto.FLOAT, None)],
        [h.make_tensor_value_info("cond_out", TensorProto.BOOL, []), carried("arr_out", TensorProto.FLOAT, None)],
        [nh.from_array(w, "W")])
    nodes = start + [_const("trip", np.int64(steps)), _const("go", np.array(True)),
                     h.make_node("Loop", ["trip", "go", "arr0"], ["arr"], body=graph_body)] + finish
    graph = h.make_graph(nodes, form, [h.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 1, width])])
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    proto.ir_version = 8
    onnx.checker.check_model(proto, full_check=True)
    return proto


def median_ms(run, runs: int) -> float:
    run()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return float(np.median(times) * 1e3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--runs", type=int, default=50)
    args = ap.parse_args()
    import onnxruntime as ort
    import openvino as ov

    x = np.random.default_rng(1).standard_normal((1, args.width)).astype(np.float32)
    reference = None
    print(f"{args.steps} steps, [1, {args.width}] elements, one thread; median ms of {args.runs} runs")
    print("| form | ONNX Runtime ms | OpenVINO ms |")
    print("|---|---|---|")
    for form in ("sequence", "concat", "buffer"):
        data = model(form, args.steps, args.width).SerializeToString()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
        got = sess.run(None, {"x": x})[0]
        reference = got if reference is None else reference
        assert np.allclose(got, reference, atol=1e-5), form
        cells = [f"{median_ms(lambda s=sess: s.run(None, {'x': x}), args.runs):.2f}"]
        try:
            compiled = ov.Core().compile_model(ov.Core().read_model(data, b""), "CPU",
                                               {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1})
            request = compiled.create_infer_request()
            assert np.allclose(request.infer({0: x})[compiled.output(0)], reference, atol=1e-5), form
            cells.append(f"{median_ms(lambda r=request: r.infer({0: x}), args.runs):.2f}")
        except Exception as exc:  # noqa: BLE001 - reported
            cells.append("does not load: " + " ".join(str(exc).split())[:80])
        print(f"| {form} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
