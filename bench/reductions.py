#!/usr/bin/env python3
"""How far Paddle's and ONNX Runtime's float32 reductions are from the exact (float64) result
over large axes: the figures behind docs/reductions.md.

    python bench/reductions.py            # needs paddlepaddle and onnxruntime (test extras)

Each op is saved by Paddle (paddle.jit.save, PIR), run by Paddle's own predictor (its inference
passes and oneDNN kernels) and by Paddle's eager kernels (the phi CPU kernels its executor runs,
as verify's Paddle worker does), converted by pd2onnx and run by ONNX Runtime (1 thread, graph
optimizations as a user gets them), on the same float32 input; each is compared with numpy's
float64 computation of the op on that input.
Errors are max |value - exact| relative to max |exact|.
"""

from __future__ import annotations

import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))


def _cases(paddle):
    F = paddle.nn.functional
    rng = np.random.default_rng(0)
    relu_map = np.maximum(rng.standard_normal((1, 16, 240, 320)), 0).astype(np.float32) + 0.5
    wide = rng.standard_normal((2, 4, 65536)).astype(np.float32) * 4
    feats = (rng.standard_normal((4, 8, 4096)) + 3).astype(np.float32)
    image = (rng.standard_normal((1, 64, 120, 160)) + 1).astype(np.float32)

    def ln64(x):
        mean = x.mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)

    def gn64(x, groups=8):
        n, c = x.shape[:2]
        g = x.reshape(n, groups, -1)
        mean = g.mean(-1, keepdims=True)
        out = (g - mean) / np.sqrt(((g - mean) ** 2).mean(-1, keepdims=True) + 1e-5)
        return out.reshape(x.shape)

    def softmax64(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    return [
        ("mean over H x W (SE block), 76,800 terms", lambda x: paddle.mean(x, axis=[2, 3]), relu_map,
         lambda x: x.mean((2, 3))),
        ("adaptive avg pool to 1x1, 76,800 terms", lambda x: F.adaptive_avg_pool2d(x, 1), relu_map,
         lambda x: x.mean((2, 3), keepdims=True)),
        ("sum over H x W, 76,800 terms", lambda x: paddle.sum(x, axis=[2, 3]), relu_map,
         lambda x: x.sum((2, 3))),
        ("softmax over 65,536", lambda x: F.softmax(x, axis=-1), wide, softmax64),
        ("layer_norm over 4,096", lambda x: F.layer_norm(x, [4096]), feats, ln64),
        ("group_norm, 8 groups of 153,600", lambda x: F.group_norm(x, 8), image, gn64),
    ]


def main() -> None:
    import onnxruntime as ort
    import paddle

    from pd2onnx.api import convert
    from pd2onnx.onnx_io import save_model

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (title, fn, x, exact_fn) in enumerate(_cases(paddle)):
            class Net(paddle.nn.Layer):
                def forward(self, a):
                    return fn(a)

            prefix = os.path.join(tmp, f"m{k}/inference")
            paddle.jit.save(Net(), prefix, input_spec=[paddle.static.InputSpec(list(x.shape), "float32")])
            config = paddle.inference.Config(prefix + ".json", prefix + ".pdiparams")
            config.disable_gpu()
            config.set_cpu_math_library_num_threads(1)
            predictor = paddle.inference.create_predictor(config)
            handle = predictor.get_input_handle(predictor.get_input_names()[0])
            handle.copy_from_cpu(x)
            predictor.run()
            got_paddle = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
            got_eager = fn(paddle.to_tensor(x)).numpy()
            onnx_file = os.path.join(tmp, f"m{k}.onnx")
            save_model(convert(prefix + ".json"), onnx_file)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            sess = ort.InferenceSession(onnx_file, opts, providers=["CPUExecutionProvider"])
            got_ort = sess.run(None, {sess.get_inputs()[0].name: x})[0]
            exact = exact_fn(x.astype(np.float64))
            scale = float(np.abs(exact).max())
            rows.append((title, *(float(np.abs(got - exact).max()) / scale for got in (got_paddle, got_eager, got_ort))))
    print("| op | Paddle predictor from exact | Paddle eager kernels from exact | ONNX Runtime from exact |")
    print("|---|---|---|---|")
    for title, p, e, o in rows:
        print(f"| {title} | {p:.2g} | {e:.2g} | {o:.2g} |")


if __name__ == "__main__":
    main()
