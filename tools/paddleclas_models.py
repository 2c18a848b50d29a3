"""Build a small PaddleClas Swin Transformer with random weights, save it as a Paddle inference
model and record Paddle's inference outputs on a seeded batch.

Runs inside the paddlecv virtual environment (tools/setup_paddlecv.sh), never in the project's
own: ``python tools/paddleclas_models.py NAME OUT_DIR``. Writes the saved model (``model.json``
with Paddle 3's PIR, ``model.pdiparams``) and ``io.npz`` (inputs ``in<i>`` in the predictor's
feed order, outputs ``out<i>``).

The model is PaddleClas's own ``SwinTransformer`` class (ppcls legendary_models) at a small
size: 64x64 images, embed dim 32, two stages of two blocks (the second block of each stage
shifted, so its attention mask is written in the graph by nine ``set_value`` slice
assignments), window 4, 10 classes. It is saved the way PaddleClas's ``tools/export_model.py``
does (``paddle.jit.to_static`` with a ``[None, 3, H, W]`` input spec, ``paddle.jit.save``): the
paddleclas wheel ships only ``ppcls.arch`` and the deploy code, not the engine or
``tools/export_model.py``. Weights are drawn at 1/sqrt(fan_in) scale (not 0.02), norm scales
spread around 1 and the relative position tables at unit scale, so that the logits vary.
"""

from __future__ import annotations

import os
import sys

import cv2  # noqa: F401  (before paddle, as in the paddledet environment)
import numpy as np
import paddle
from toolkit_io import predict, save_io

MODELS = {
    "swin_tiny": dict(
        img_size=64,
        patch_size=4,
        class_num=10,
        embed_dim=32,
        depths=[2, 2],
        num_heads=[2, 4],
        window_size=4,
        drop_path_rate=0.0,
    ),
}


def _randomize(model, rng) -> None:
    for pname, param in model.named_parameters():
        shape = list(param.shape)
        if "norm" in pname and pname.endswith("weight"):
            value = rng.uniform(0.5, 1.5, shape)
        elif pname.endswith("bias"):
            value = rng.uniform(-0.2, 0.2, shape)
        elif "relative_position_bias_table" in pname:
            value = rng.normal(0.0, 1.0, shape)
        elif len(shape) == 2:  # Linear: [in, out]
            value = rng.normal(0.0, 1.0 / np.sqrt(shape[0]), shape)
        elif len(shape) == 4:  # Conv: [out, in, kh, kw]
            value = rng.normal(0.0, 1.0 / np.sqrt(np.prod(shape[1:])), shape)
        else:
            value = rng.normal(0.0, 0.5, shape)
        param.set_value(value.astype("float32"))


def build(name: str, out_dir: str, batch: int = 2) -> None:
    from paddleclas.ppcls.arch.backbone.legendary_models.swin_transformer import SwinTransformer

    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    paddle.seed(0)
    cfg = MODELS[name]
    model = SwinTransformer(**cfg)
    model.eval()
    _randomize(model, rng)
    size = cfg["img_size"]
    spec = [paddle.static.InputSpec([None, 3, size, size], "float32", "x")]
    static = paddle.jit.to_static(model, input_spec=spec, full_graph=True)
    paddle.jit.save(static, os.path.join(out_dir, "model"))
    model_file = os.path.join(out_dir, "model.json")
    feeds = {"x": rng.uniform(-1, 1, (batch, 3, size, size)).astype("float32")}
    names, outs = predict(model_file, os.path.join(out_dir, "model.pdiparams"), feeds)
    eager = model(paddle.to_tensor(feeds["x"])).numpy()
    np.testing.assert_allclose(outs[0], eager, rtol=1e-4, atol=1e-4)
    save_io(os.path.join(out_dir, "io.npz"), names, feeds, outs)
    print(f"{name}: inputs {names}, outputs {[o.shape for o in outs]}, logit std {outs[0].std():.3f}")


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
