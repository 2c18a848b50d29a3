"""Build the models PaddleOCR 3.7 / PaddleX 3.7 ship by default, from PaddleX's own definitions,
with random weights; save them as Paddle inference models and record Paddle's inference outputs.

Runs inside the paddlex virtual environment (tools/setup_paddlex.sh), never in the project's own:
``python tools/paddlex_models.py NAME OUT_DIR``. Writes ``model.json`` (Paddle 3.3's PIR),
``model.pdiparams`` and ``io.npz`` (inputs ``in<i>`` in the predictor's feed order, outputs
``out<i>``, from Paddle's inference predictor on the saved files). No legacy ``.pdmodel``: Paddle
3.3's legacy static mode (``FLAGS_enable_pir_api=0`` set before paddle is imported, then the same
``paddle.jit.save``) cannot trace PPLCNetV4's ``gelu`` ("gelu(): argument (position 1) must be
Value, but got Variable"), and for PP-LCNet it writes no program ("The feeded_var_names[0]: 'x'
doesn't exist in pruned inference program"); Paddle 2.6, which writes legacy programs, predates
these definitions.

Sources, all from the ``paddlex==3.7.2`` wheel on PyPI (``paddlex/inference/models/``):

- ``pp_ocrv6_small_det``: ``text_detection/modeling/pp_ocrv6_small_det.py`` and
  ``_config_pp_ocrv6_small_det.py`` (PPLCNetV4 backbone from
  ``image_classification/modeling/pplcnetv4.py``, ``_config_pplcnetv4.py``; released config).
- ``pp_ocrv6_medium_det``: ``text_detection/modeling/pp_ocrv6_medium_det.py``,
  ``_config_pp_ocrv6_medium_det.py``.
- ``pp_ocrv6_small_rec`` / ``pp_ocrv6_tiny_rec``: ``text_recognition/modeling/pp_ocrv6_small_rec.py``
  (EncoderWithLightSVTR neck, 18,714 classes) / ``pp_ocrv6_tiny_rec.py`` (conv1d head, 6,625
  classes) with their ``_config_*.py`` defaults (PPLCNetV4 backbone's default config).
- ``pp_lcnet_x1_0_textline_ori`` / ``pp_lcnet_x1_0_doc_ori``: ``image_classification/modeling/
  pplcnet.py``, ``_config.py`` (PP-LCNet x1.0; 2 labels at 80 x 160, 4 labels at 224 x 224, the
  input shapes of ``paddlex/configs/modules/{textline,doc_text}_orientation/*.yaml``).

PaddleX's definitions are the deployed form of these networks: the layers PaddleOCR's exporter
(``paddleocr==3.7.0`` sdist, ``ppocr/utils/export_model.py``) re-parameterizes by ``layer.rep()``
before saving (RepDW token convs, the neck's dilated re-parameterizable depthwise convs) are
here the single convolutions ``rep()`` produces, since PaddleX loads the released (exported)
weights into them. Their ``forward(x: List)`` converts numpy in and out, so each model is wrapped in
a layer whose forward is the same body on tensors, and saved as that exporter saves it
(``paddle.jit.to_static`` with its input spec, ``paddle.jit.save``): det ``[None, 3, -1, -1]``,
rec ``[None, 3, 48, -1]``, classifiers ``[None, 3, H, W]``.

Weights are drawn at 1/sqrt(fan_in) scale, and every BatchNorm's statistics are set from the
activations it sees on a calibration batch (then perturbed), so that each layer's output is of
unit scale: random deep nets otherwise vanish or explode, and a broken converter would pass.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types

import numpy as np

import paddle
from toolkit_io import predict, save_io

_PACKAGES = ["", "inference", "inference.models", "inference.models.common", "inference.models.text_detection",
             "inference.models.text_recognition", "inference.models.image_classification"]


def _import(module: str):
    """``paddlex.inference.models.<module>`` without running the ``__init__`` of the packages above
    the model definitions: they import every predictor and pipeline of PaddleX (and their many
    dependencies), which the definitions do not need."""
    loaded = sys.modules.get("paddlex")
    root = loaded.__path__[0] if loaded is not None else os.path.dirname(importlib.util.find_spec("paddlex").origin)
    for pkg in _PACKAGES:
        name = ".".join(filter(None, ["paddlex", pkg]))
        if name not in sys.modules:
            stub = types.ModuleType(name)
            stub.__path__ = [os.path.join(root, *pkg.split(".")) if pkg else root]
            sys.modules[name] = stub
    return importlib.import_module(f"paddlex.inference.models.{module}")


class _Wrapped(paddle.nn.Layer):
    """PaddleX's ``forward(x: List)`` body on tensors: ``head(model(x))`` (det, rec)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net.head(self.net.model(x))


class _Classifier(paddle.nn.Layer):
    """``PPLCNet.forward``'s body on tensors (avg pool, 1x1 conv, activation, dropout scale, flatten,
    linear, softmax)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        net = self.net
        hidden = net.act_fn(net.last_convolution(net.avg_pool(net.encoder(x))))
        hidden = net.flatten(hidden * (1 - net.hidden_dropout_prob))
        return net.head(hidden).softmax()


def _det(cls: str, config: str):
    def make():
        mod = _import("text_detection.modeling")
        cfg_mod = _import(f"text_detection.modeling._config_{config}")
        cfg_cls = next(v for k, v in vars(cfg_mod).items() if k.endswith("Config") and k.startswith("PPOCR"))
        return _Wrapped(getattr(mod, cls)(cfg_cls()))
    return make


def _rec(cls: str, config: str):
    def make():
        mod = _import("text_recognition.modeling")
        cfg_mod = _import(f"text_recognition.modeling._config_{config}")
        cfg_cls = next(v for k, v in vars(cfg_mod).items() if k.endswith("Config") and k.startswith("PPOCR"))
        return _Wrapped(getattr(mod, cls)(cfg_cls()))
    return make


def _lcnet(labels: int):
    def make():
        mod = _import("image_classification.modeling")
        cfg = _import("image_classification.modeling._config").PPLCNetConfig(num_labels=labels)
        return _Classifier(mod.PPLCNet(cfg))
    return make


# name: (constructor, input spec shape, fed shape, std of the last Linear or transposed
# conv: the logits of the softmax or sigmoid, neither flat nor saturated)
MODELS = {
    "pp_ocrv6_small_det": (_det("PPOCRV6SmallDet", "pp_ocrv6_small_det"), [None, 3, -1, -1], (1, 3, 64, 96), 3.0),
    "pp_ocrv6_medium_det": (_det("PPOCRV6MediumDet", "pp_ocrv6_medium_det"), [None, 3, -1, -1], (1, 3, 64, 96), 3.0),
    "pp_ocrv6_small_rec": (_rec("PPOCRV6SmallRec", "pp_ocrv6_small_rec"), [None, 3, 48, -1], (1, 3, 48, 160), 4.0),
    "pp_ocrv6_tiny_rec": (_rec("PPOCRV6TinyRec", "pp_ocrv6_tiny_rec"), [None, 3, 48, -1], (1, 3, 48, 160), 4.0),
    "pp_lcnet_x1_0_textline_ori": (_lcnet(2), [None, 3, 80, 160], (2, 3, 80, 160), 2.0),
    "pp_lcnet_x1_0_doc_ori": (_lcnet(4), [None, 3, 224, 224], (1, 3, 224, 224), 2.0),
}


def _randomize(model: paddle.nn.Layer, rng: np.random.Generator, calib: np.ndarray, logit_std) -> None:
    """Random weights of unit-scale outputs: 1/sqrt(fan_in) weights, then BatchNorm statistics
    from one calibration pass over a batch of 8 (each BN normalizes what it really sees, perturbed a
    little), and the
    last Linear rescaled so that its outputs have std ``logit_std``."""
    for layer in model.sublayers():
        for pname, param in layer.named_parameters(include_sublayers=False):
            shape = list(param.shape)
            if len(shape) >= 2:
                if isinstance(layer, paddle.nn.Linear):  # [in, out]
                    fan_in = shape[0]
                elif getattr(layer, "_transposed", False):  # [in, out/groups, k...]: each output sums in*k/stride terms
                    fan_in = max(1, shape[0] * int(np.prod(shape[2:])) // int(np.prod(layer._stride)))
                else:  # [out, in/groups, k...]
                    fan_in = int(np.prod(shape[1:]))
                value = rng.normal(0.0, 1.0 / np.sqrt(fan_in), shape)
            elif pname.endswith("bias") or pname == "bias":
                value = rng.uniform(-0.1, 0.1, shape)
            elif shape == [1]:  # learnable affine blocks' scale and bias
                value = np.array([rng.uniform(0.8, 1.2)] if "scale" in pname else [rng.uniform(-0.1, 0.1)])
            else:  # norm scales
                value = rng.uniform(0.7, 1.3, shape)
            param.set_value(value.astype("float32"))
    norms = [m for m in model.sublayers() if isinstance(m, paddle.nn.layer.norm._BatchNormBase)]

    def calibrate(layer, inputs):
        x = inputs[0].numpy().astype(np.float64)
        axes = tuple(i for i in range(x.ndim) if i != 1)
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        layer._mean.set_value((mean + 0.05 * np.sqrt(var) * rng.standard_normal(mean.shape)).astype("float32"))
        # floored by a share of the mean variance: a channel nearly constant on the calibration batch
        # must not amplify another input's deviations
        var = var * rng.uniform(0.8, 1.25, var.shape) + 0.5 * var.mean() + 1e-3
        layer._variance.set_value(var.astype("float32"))

    hooks = [m.register_forward_pre_hook(calibrate) for m in norms]
    with paddle.no_grad():
        model(paddle.to_tensor(calib))
    for h in hooks:
        h.remove()
    if logit_std is not None:
        last = [m for m in model.sublayers() if isinstance(m, (paddle.nn.Linear, paddle.nn.Conv2DTranspose))][-1]
        seen = []
        hook = last.register_forward_post_hook(lambda layer, inputs, out: seen.append(out.numpy()))
        with paddle.no_grad():
            model(paddle.to_tensor(calib))
        hook.remove()
        factor = logit_std / max(float(seen[0].std()), 1e-6)
        last.weight.set_value(last.weight.numpy() * factor)
        last.bias.set_value(last.bias.numpy() * factor)


def _save(model, spec_shape, out_dir: str) -> str:
    spec = [paddle.static.InputSpec(spec_shape, "float32", "x")]
    static = paddle.jit.to_static(model, input_spec=spec, full_graph=True)
    paddle.jit.save(static, os.path.join(out_dir, "model"))
    return os.path.join(out_dir, "model.json")


def build(name: str, out_dir: str) -> None:
    make, spec_shape, shape, logit_std = MODELS[name]
    os.makedirs(out_dir, exist_ok=True)
    paddle.seed(0)
    rng = np.random.default_rng(0)
    model = make()
    model.eval()
    feeds = {"x": rng.uniform(-1, 1, shape).astype("float32")}
    calib = rng.uniform(-1, 1, (8, *shape[1:])).astype("float32")  # a batch: statistics that generalize
    _randomize(model, rng, calib, logit_std)
    model_file = _save(model, spec_shape, out_dir)
    names, outs = predict(model_file, os.path.join(out_dir, "model.pdiparams"), feeds)
    with paddle.no_grad():
        eager = model(paddle.to_tensor(feeds["x"]))
    np.testing.assert_allclose(outs[0], eager.numpy(), rtol=1e-4, atol=1e-5)  # the saved program is the layer
    save_io(os.path.join(out_dir, "io.npz"), names, feeds, outs)
    print(f"{name}: outputs {[o.shape for o in outs]}, std {[float(o.std()) for o in outs]}")


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
