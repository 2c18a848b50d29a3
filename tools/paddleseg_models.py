"""Build a small PaddleSeg PP-LiteSeg with random weights, save it as a Paddle inference model
with dynamic height and width, and record Paddle's inference outputs on two image sizes.

Runs inside the paddlecv virtual environment (tools/setup_paddlecv.sh), never in the project's
own: ``python tools/paddleseg_models.py NAME OUT_DIR``. Writes the saved model (``model.json``
with Paddle 3's PIR, ``model.pdiparams``) and ``io.npz``, ``io_b.npz`` (one image size each:
inputs ``in<i>`` in the predictor's feed order, outputs ``out<i>``).

The model is PaddleSeg's own ``PPLiteSeg`` (STDC backbone, the pyramid pooling context module
with adaptive average pooling to 1, 2 and 4 bins, UAFM spatial-attention fusion, bilinear
upsampling to the input size) at a small size: STDC base 32 with one block per stage, 4
classes. It is saved the way PaddleSeg's ``tools/export.py`` does with ``--output_op none``
(``paddle.jit.to_static`` with a ``[None, 3, None, None]`` input spec, ``paddle.jit.save``;
logits rather than the argmax, which random weights would leave full of near-ties): the
paddleseg wheel does not ship ``tools/export.py``. Weights are drawn at 1/sqrt(fan_in) scale,
batch-norm scales and statistics spread, so that the logits vary.
"""

from __future__ import annotations

import os
import sys

import cv2  # noqa: F401  (before paddle, as in the paddledet environment)
import numpy as np
import paddle
from toolkit_io import predict, save_io

MODELS = {
    "pp_liteseg": dict(
        backbone=dict(base=32, layers=[1, 1, 1]),
        num_classes=4,
        cm_bin_sizes=[1, 2, 4],
        cm_out_ch=64,
        arm_out_chs=[32, 48, 64],
        seg_head_inter_chs=[32, 32, 32],
        sizes=[(96, 128), (160, 96)],
    ),
}


def _randomize(model, rng) -> None:
    for pname, param in model.named_parameters():
        shape = list(param.shape)
        if pname.endswith("_mean"):  # batch-norm statistics are (non-trainable) parameters
            value = rng.uniform(-0.2, 0.2, shape)
        elif pname.endswith("_variance"):
            value = rng.uniform(0.5, 1.5, shape)
        elif len(shape) == 4:  # Conv: [out, in, kh, kw]
            value = rng.normal(0.0, 1.0 / np.sqrt(np.prod(shape[1:])), shape)
        elif len(shape) == 2:  # Linear: [in, out]
            value = rng.normal(0.0, 1.0 / np.sqrt(shape[0]), shape)
        elif pname.endswith("bias"):
            value = rng.uniform(-0.2, 0.2, shape)
        else:
            value = rng.uniform(0.5, 1.5, shape)
        param.set_value(value.astype("float32"))


class _Logits(paddle.nn.Layer):
    """PaddleSeg's exported net with output_op none: the first logit map."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)[0]


def build(name: str, out_dir: str, batch: int = 2) -> None:
    from paddleseg.models import PPLiteSeg
    from paddleseg.models.backbones.stdcnet import STDCNet

    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    paddle.seed(0)
    cfg = dict(MODELS[name])
    sizes = cfg.pop("sizes")
    model = PPLiteSeg(backbone=STDCNet(**cfg.pop("backbone")), **cfg)
    model.eval()
    _randomize(model, rng)
    layer = _Logits(model)
    spec = [paddle.static.InputSpec([None, 3, None, None], "float32", "x")]
    static = paddle.jit.to_static(layer, input_spec=spec, full_graph=True)
    paddle.jit.save(static, os.path.join(out_dir, "model"))
    model_file = os.path.join(out_dir, "model.json")
    for k, (h, w) in enumerate(sizes):
        feeds = {"x": rng.uniform(-1, 1, (batch, 3, h, w)).astype("float32")}
        names, outs = predict(model_file, os.path.join(out_dir, "model.pdiparams"), feeds)
        eager = layer(paddle.to_tensor(feeds["x"])).numpy()
        np.testing.assert_allclose(outs[0], eager, rtol=1e-4, atol=1e-4)
        save_io(os.path.join(out_dir, "io.npz" if k == 0 else "io_b.npz"), names, feeds, outs)
        print(f"{name} {h}x{w}: inputs {names}, outputs {[o.shape for o in outs]}, std {outs[0].std():.3f}")


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
