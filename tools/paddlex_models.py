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
- ``pp_ocrv6_tiny_det``: the wheel has no class of its own for it: its released config
  (``MODEL_CONFIGS["PP-OCRv6_tiny_det"]`` in ``modules/base/utils/pdparams2safetensors/model_config.py``)
  names the small det's class (``model_type`` ``pp_ocrv6_small_det``) with narrower channels (stem
  16/32, stages 32/48/64/160, neck 64) and a 5 x 5 dilated kernel; built as that.
- ``pp_ocrv6_small_rec`` / ``pp_ocrv6_medium_rec`` / ``pp_ocrv6_tiny_rec``:
  ``text_recognition/modeling/pp_ocrv6_small_rec.py`` (EncoderWithLightSVTR neck, 18,714 classes;
  medium rec is this class with a wider released config: stem 64/128, stages up to 768 channels,
  hidden size 192, MLP ratio 4) / ``pp_ocrv6_tiny_rec.py`` (conv1d head) with their released
  configs (``MODEL_CONFIGS["PP-OCRv6_{small,medium,tiny}_rec"]``; tiny: PPLCNetV4's small stem,
  stages up to 160 channels, hidden size 80, 7,180 classes, where its config class's defaults
  would give the small rec's large-stem backbone and 6,625 classes).
- ``pp_lcnet_x1_0_textline_ori`` / ``pp_lcnet_x1_0_doc_ori``: ``image_classification/modeling/
  pplcnet.py``, ``_config.py`` (PP-LCNet x1.0; 2 labels at 80 x 160, 4 labels at 224 x 224, the
  input shapes of ``paddlex/configs/modules/{textline,doc_text}_orientation/*.yaml``).
- ``pp_doclayout_l``: ``object_detection/modeling/rt_detr.py`` and ``_config_rt_detr.py`` (RT-DETR-L:
  HGNetV2-L backbone from ``image_classification/modeling/hgnetv2.py``, ``_config_hgnetv2.py``; 23
  labels as PP-DocLayout-L; 50 queries instead of 300), its ``forward`` body (model, last decoder
  layer, ``DETRPostProcess``) on PaddleX's three inputs ``im_shape``, ``image``, ``scale_factor``,
  saved for a fixed 1 x 3 x 320 x 320 image (RT-DETR's exports are fixed-size). One expression is
  rewritten before saving: ``MultiScaleDeformableAttention.forward`` transposes the 5-D sampling
  grid of a level with a 4-element permutation, which dygraph accepts and the saved program's
  kernel refuses; the rewrite gives the full 5-element permutation, which is what dygraph does
  with the short one (the trailing axis stays; checked on Paddle 3.3.1: equal results).
- ``pp_doclayout_plus_l``: RT-DETR as ``pp_doclayout_l`` with the released config
  (``MODEL_CONFIGS["PP-DocLayout_plus-L"]``: 20 labels; otherwise PP-DocLayout-L's architecture: the
  keys its backbone config adds, output stages and freezing and learning-rate settings, are read
  by no definition in the wheel), 50 queries instead of 300.
- ``uvdoc``: ``image_unwarping/modeling/uvdoc.py``, ``_config.py`` (released config: the image
  resized to 712 x 488 inside, bilinear with corners aligned), its ``forward`` body on a 1 x 3 x 96
  x 64 image of uniform noise (sharp edges everywhere), input spec ``[None, 3, -1, -1]``.
- ``pp_doclayout_v2``: ``object_detection/modeling/pp_doclayout_v2.py``, ``_config_pp_doclayout_v2.py``
  with the released config recorded in ``modules/base/utils/pdparams2safetensors/model_config.py``
  (``_DOCLAYOUTV2_CONFIG``), its whole ``forward`` (detector, thresholds, reading order,
  post-processing) on the three inputs at 1 x 3 x 320 x 320; the same deformable-attention
  rewrite as RT-DETR's, and its ``forward`` rewritten to take the inputs as tensors.
- ``pp_doclayout_v3``: ``pp_doclayout_v3.py``, ``_config_pp_doclayout_v3.py`` with the released config
  (``MODEL_CONFIGS["PP-DocLayoutV3"]``: V2's detector plus a mask head, whose masks of the top
  queries, thresholded at 0, give the decoder's first reference boxes; a global-pointer reading
  order per decoder layer), 50 queries instead of 300, built as V2.
- ``pp_formulanet_plus_l``: ``formula_recognition/modeling/pp_formulanet.py``, ``mbart.py`` and the
  SAM ViT layers of ``doc_vlm/modeling/GOT_ocr_2_0.py``, with ``MODEL_CONFIGS["PP-FormulaNet_plus-L"]``
  reduced as ``FORMULANET_SMALL`` says (the released network has 180 M parameters and reads 768 x
  768 images); its greedy decoding rewritten to four steps that return each step's logits beside
  the tokens (the released loop stops on a host-side test of the tokens, ``.item()``, which no
  saved program can hold), on a 1 x 3 x 256 x 256 image.

Not built, since the wheel holds no definition of them: PP-DocLayout-S / -M (PicoDet layout
detectors: ``object_detection/modeling/`` holds RT-DETR and PP-DocLayoutV2 / V3 only; PicoDet is
named only in model lists, the PaddleDetection training API and the TensorRT settings, and these
models are served as downloaded static programs, the ``paddle_static`` runner), nor
PP-FormulaNet_plus-M / -S (no released config in ``model_config.py``; only ``PP-FormulaNet-L`` and
``_plus-L`` have the dynamic runner).

PaddleX's definitions are the deployed form of these networks: the layers PaddleOCR's exporter
(``paddleocr==3.7.0`` sdist, ``ppocr/utils/export_model.py``) re-parameterizes by ``layer.rep()``
before saving (RepDW token convs, the neck's dilated re-parameterizable depthwise convs) are
here the single convolutions ``rep()`` produces, since PaddleX loads the released (exported)
weights into them. Their ``forward(x: List)`` converts numpy in and out, so each model is wrapped in
a layer whose forward is the same body on tensors, and saved as that exporter saves it
(``paddle.jit.to_static`` with its input spec, ``paddle.jit.save``): det ``[None, 3, -1, -1]``,
rec ``[None, 3, 48, -1]``, classifiers ``[None, 3, H, W]``.

Weights are drawn at 1/sqrt(fan_in) scale (RT-DETR's box heads' last layer at a tenth of it, so
that the decoder layers refine their boxes by small steps, as trained ones do), and every
BatchNorm's statistics are set from the activations it sees on a calibration batch (then
perturbed), so that each layer's output is of unit scale: random deep nets otherwise vanish or
explode, and a broken converter would pass.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import tempfile
import textwrap
import types

import numpy as np
import paddle
import paddle.nn.functional as F
from toolkit_io import predict, save_io

_PACKAGES = ["", "inference", "inference.models", "inference.models.common", "inference.models.text_detection",
             "inference.models.text_recognition", "inference.models.image_classification",
             "inference.models.object_detection", "inference.models.image_unwarping",
             "inference.models.formula_recognition", "inference.models.doc_vlm",
             "inference.models.doc_vlm.modeling"]


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


def _det(cls: str, config: str, released: str | None = None):
    """A text detector of class ``cls`` with its config class's defaults, or with the released
    config of PaddleX model ``released`` (PP-OCRv6 tiny det: the small det's class and config class
    with smaller channels and a 5 x 5 dilated kernel)."""
    def make():
        mod = _import("text_detection.modeling")
        cfg_mod = _import(f"text_detection.modeling._config_{config}")
        cfg_cls = next(v for k, v in vars(cfg_mod).items() if k.endswith("Config") and k.startswith("PPOCR"))
        return _Wrapped(getattr(mod, cls)(cfg_cls(**(_released_config(released) if released else {}))))
    return make


def _rec(cls: str, config: str, released: str):
    """A text recognizer of class ``cls`` with the released config of PaddleX model ``released``
    (PP-OCRv6 medium rec: the small rec's class and config class, wider)."""
    def make():
        mod = _import("text_recognition.modeling")
        cfg_mod = _import(f"text_recognition.modeling._config_{config}")
        cfg_cls = next(v for k, v in vars(cfg_mod).items() if k.endswith("Config") and k.startswith("PPOCR"))
        return _Wrapped(getattr(mod, cls)(cfg_cls(**_released_config(released))))
    return make


def _lcnet(labels: int):
    def make():
        mod = _import("image_classification.modeling")
        cfg = _import("image_classification.modeling._config").PPLCNetConfig(num_labels=labels)
        return _Classifier(mod.PPLCNet(cfg))
    return make


class _Layout(paddle.nn.Layer):
    """``RTDETR.forward``'s body on tensors: the last decoder layer's boxes and logits through
    ``DETRPostProcess`` (top-k queries, boxes scaled to the original image)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, im_shape, image, scale_factor):
        out = self.net.model(image)
        head_out = (out["intermediate_reference_points"][:, -1], out["intermediate_logits"][:, -1])
        pad_shape = paddle.to_tensor([[image.shape[2], image.shape[3]]] * image.shape[0], dtype="float32")
        return self.net.post_process(head_out, im_shape, scale_factor, pad_shape)


class _Unwarp(paddle.nn.Layer):
    """``UVDocNet.forward``'s body on tensors: the image resized (bilinear, corners aligned) to the
    network's size, backbone, head, the 2-channel map resized back to the image's size and
    ``grid_sample`` of the image at those positions."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        net = self.net
        h, w = x.shape[2:]
        hidden = F.interpolate(x, size=net.upsample_size, mode=net.upsample_mode, align_corners=True)
        out = net.head(paddle.concat(net.backbone(hidden), axis=1))
        bm = F.interpolate(out, size=(h, w), mode=net.upsample_mode, align_corners=True).transpose([0, 2, 3, 1])
        return F.grid_sample(x, bm, align_corners=True)


def _uvdoc():
    def make():
        mod = _import("image_unwarping.modeling")
        return _Unwarp(mod.UVDocNet(_import("image_unwarping.modeling._config").UVDocConfig()))
    return make


def _rewrite(owner, attr: str, edits: list[tuple[str, str]]) -> None:
    """Replace ``owner.attr`` by the same function with each ``old`` text of its source replaced by
    ``new`` (each must occur exactly once). The new source is written to a file that stays, so that
    Paddle's dy2static, which reads a function's source, finds it."""
    func = getattr(owner, attr)
    source = textwrap.dedent(inspect.getsource(func))
    for old, new in edits:
        found = source.count(old)
        if found != 1:
            raise RuntimeError(f"{owner.__name__}.{attr}: {old!r} occurs {found} times, not once; is this paddlex 3.7.2?")
        source = source.replace(old, new)
    fd, path = tempfile.mkstemp(suffix=".py", prefix=f"{owner.__name__}_{attr}_")
    with os.fdopen(fd, "w") as f:
        f.write(source)
    namespace: dict = {}
    exec(compile(source, path, "exec"), func.__globals__, namespace)  # noqa: S102  (our own rewrite)
    setattr(owner, attr, namespace[attr])


def _rtdetr(labels: int, queries: int, released: str | None = None):
    """RT-DETR with ``labels`` labels and ``queries`` queries: the config class's defaults
    (PP-DocLayout-L, which the wheel has no released config for), or PaddleX model ``released``'s
    config with its number of queries replaced."""
    def make():
        mod = _import("object_detection.modeling")
        # the sampling grid of one level is 5-D [batch, queries, heads, points, 2]; PaddleX
        # transposes it with a 4-element permutation, which dygraph accepts and the saved
        # program's transpose kernel refuses ("Input dimension size should be equal to 5")
        rt_detr = _import("object_detection.modeling.rt_detr")
        _rewrite(rt_detr.MultiScaleDeformableAttention, "forward",
                 [(".transpose([0, 2, 1, 3])\n", ".transpose([0, 2, 1, 3, 4])\n")])
        config_cls = _import("object_detection.modeling._config_rt_detr").RTDETRConfig
        if released:
            cfg = config_cls(**{**_released_config(released), "num_queries": queries})
        else:
            cfg = config_cls(num_labels=labels, num_queries=queries)
        if cfg.num_labels != labels:
            raise RuntimeError(f"{released}: {cfg.num_labels} labels, not {labels}; is this paddlex 3.7.2?")
        return _Layout(mod.RTDETR(cfg))
    return make


def _released_config(model: str) -> dict:
    """A released model's config.json as the paddlex wheel records it (``MODEL_CONFIGS[model]`` of
    ``paddlex/modules/base/utils/pdparams2safetensors/model_config.py``, loaded from its file: its
    package imports PaddleX's training modules)."""
    spec = importlib.util.spec_from_file_location(
        "_paddlex_model_config",
        os.path.join(sys.modules["paddlex"].__path__[0], "modules", "base", "utils", "pdparams2safetensors",
                     "model_config.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.MODEL_CONFIGS[model])


def _doclayout(version: str, queries: int | None = None):
    """PP-DocLayoutV2 / V3 (``version`` "v2" / "v3") with the released config (its number of
    queries replaced by ``queries`` unless None)."""
    def make():
        mod = _import("object_detection.modeling")
        net = _import(f"object_detection.modeling.pp_doclayout_{version}")
        cls = getattr(net, f"PPDocLayout{version.upper()}")
        _rewrite(net.MultiScaleDeformableAttention, "forward",
                 [(".transpose([0, 2, 1, 3])\n", ".transpose([0, 2, 1, 3, 4])\n")])
        # its forward on tensors: the three inputs as arguments instead of numpy in a list
        _rewrite(cls, "forward", [
            ("def forward(self, inputs):\n", "def forward(self, im_shape, pixel_values, scale_factor):\n"),
            ("    pixel_values = paddle.to_tensor(inputs[1])\n", ""),
            ("    im_shape = paddle.to_tensor(inputs[0])\n", ""),
            ("    scale_factor = paddle.to_tensor(inputs[2])\n", ""),
        ])
        released = _released_config(f"PP-DocLayout{version.upper()}")
        if queries is not None:
            released["num_queries"] = queries
        config_cls = getattr(_import(f"object_detection.modeling._config_pp_doclayout_{version}"),
                             f"PPDocLayout{version.upper()}Config")
        return _Net(getattr(mod, f"PPDocLayout{version.upper()}")(config_cls(**released)))
    return make


class _Formula(paddle.nn.Layer):
    """``PPFormulaNet.forward`` (rewritten: a fixed number of greedy steps, the logits of each step
    returned beside the tokens) on a tensor."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)


# PP-FormulaNet_plus-L's released config with these values replaced, so that the build and the
# test stay small (the ops are the same; the released network holds 180 M parameters and reads a
# 768 x 768 image): a 256 x 256 image (16 x 16 patches: windows of 14 padded to 28, so the window
# partition pads), four vision layers of width 384 (six heads) of which the second and the fourth
# attend globally, two decoder layers, a vocabulary of 4,000 tokens.
FORMULANET_SMALL = {
    "vision_config": {"image_size": 256, "hidden_size": 384, "num_hidden_layers": 4, "num_attention_heads": 6,
                      "mlp_dim": 1536, "global_attn_indexes": [1, 3]},
    "text_config": {"decoder_layers": 2, "vocab_size": 4000},
}


def _formulanet(steps: int):
    def make():
        net = _import("formula_recognition.modeling.pp_formulanet")
        # its greedy decoding on tensors: ``steps`` steps (the released loop runs up to
        # max_position_embeddings steps and stops when every sequence has emitted EOS, a
        # host-side ``.item()`` test that no saved program can hold), and each step's logits
        # returned beside the tokens, so that the test compares numbers, not only their argmax
        _rewrite(net.PPFormulaNet, "forward", [
            ("@paddle.no_grad()\n", ""),
            ("def forward(self, x):\n", "def forward(self, pixel_values):\n"),
            ("    max_length = text_config.max_position_embeddings\n", f"    max_length = {steps + 1}\n"),
            ("    pixel_values = paddle.to_tensor(x[0]) if not isinstance(x[0], paddle.Tensor) else x[0]\n",
             ""),
            ("    generated = []\n", "    generated = []\n    step_logits = []\n"),
            ("        next_logits = logits[:, -1, :]\n",
             "        next_logits = logits[:, -1, :]\n        step_logits.append(next_logits)\n"),
            ("        if int(unfinished.sum().item()) == 0:\n            break\n", ""),
            ("    return [paddle.concat(generated, axis=-1)]\n",
             "    return [paddle.concat(generated, axis=-1), paddle.stack(step_logits, axis=1)]\n"),
        ])
        released = _released_config("PP-FormulaNet_plus-L")
        for part, values in FORMULANET_SMALL.items():
            released[part] = {**released[part], **values}
        config = _import("formula_recognition.modeling._config_pp_formulanet").PPFormulaNetConfig(**released)
        return _Formula(net.PPFormulaNet(config))
    return make


class _Net(paddle.nn.Layer):
    """A detector whose (rewritten) forward takes PaddleX's three inputs, called as is (``net``: as
    in the other wrappers)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, im_shape, image, scale_factor):
        return self.net(im_shape, image, scale_factor)


# name: (constructor, input spec shape, fed shape, std of the last Linear or (transposed)
# conv: the logits of the softmax or sigmoid, neither flat nor saturated)
MODELS = {
    "pp_ocrv6_small_det": (_det("PPOCRV6SmallDet", "pp_ocrv6_small_det"), [None, 3, -1, -1], (1, 3, 64, 96), 3.0),
    "pp_ocrv6_medium_det": (_det("PPOCRV6MediumDet", "pp_ocrv6_medium_det"), [None, 3, -1, -1], (1, 3, 64, 96), 3.0),
    "pp_ocrv6_tiny_det": (_det("PPOCRV6SmallDet", "pp_ocrv6_small_det", "PP-OCRv6_tiny_det"), [None, 3, -1, -1],
                          (1, 3, 64, 96), 3.0),
    "pp_ocrv6_small_rec": (_rec("PPOCRV6SmallRec", "pp_ocrv6_small_rec", "PP-OCRv6_small_rec"), [None, 3, 48, -1],
                           (1, 3, 48, 160), 4.0),
    "pp_ocrv6_medium_rec": (_rec("PPOCRV6SmallRec", "pp_ocrv6_small_rec", "PP-OCRv6_medium_rec"), [None, 3, 48, -1],
                            (1, 3, 48, 160), 4.0),
    "pp_ocrv6_tiny_rec": (_rec("PPOCRV6TinyRec", "pp_ocrv6_tiny_rec", "PP-OCRv6_tiny_rec"), [None, 3, 48, -1],
                          (1, 3, 48, 160), 4.0),
    "pp_lcnet_x1_0_textline_ori": (_lcnet(2), [None, 3, 80, 160], (2, 3, 80, 160), 2.0),
    "pp_lcnet_x1_0_doc_ori": (_lcnet(4), [None, 3, 224, 224], (1, 3, 224, 224), 2.0),
    # PP-DocLayout-L: RT-DETR-L (HGNetV2-L), 23 labels; 50 queries instead of 300 (smaller top-k)
    "pp_doclayout_l": (_rtdetr(23, 50), [1, 3, 320, 320], (1, 3, 320, 320), None),
    # PP-DocLayout_plus-L: RT-DETR-L with the released config (20 labels); 50 queries instead of 300
    "pp_doclayout_plus_l": (_rtdetr(20, 50, "PP-DocLayout_plus-L"), [1, 3, 320, 320], (1, 3, 320, 320), None),
    # UVDoc: any image size in, resized to 712 x 488 inside; the head's positions at std 0.5 (in
    # grid_sample's [-1, 1]: a document mostly inside the image)
    # PP-DocLayoutV2: the released config (HGNetV2-L, 25 labels, 300 queries, class thresholds and
    # reading-order classes, a six-layer reading-order transformer)
    "pp_doclayout_v2": (_doclayout("v2"), [1, 3, 320, 320], (1, 3, 320, 320), None),
    # PP-DocLayoutV3: the released config (as V2's, plus a mask head whose masks give the decoder's
    # first reference boxes), 50 queries instead of 300
    "pp_doclayout_v3": (_doclayout("v3", 50), [1, 3, 320, 320], (1, 3, 320, 320), None),
    "uvdoc": (_uvdoc(), [None, 3, -1, -1], (1, 3, 96, 64), 0.5),
    # PP-FormulaNet_plus-L (reduced: FORMULANET_SMALL), four greedy steps; a fixed-size image, as
    # its absolute position embedding is, and batch (the SAM attention reshapes with the batch as
    # read from the input's shape beside a -1)
    "pp_formulanet_plus_l": (_formulanet(4), [1, 3, 256, 256], (1, 3, 256, 256), 4.0),
}


def _randomize(model: paddle.nn.Layer, rng: np.random.Generator, calib: np.ndarray, logit_std,
               detector: bool = False) -> None:
    """Random weights of unit-scale outputs: 1/sqrt(fan_in) weights (RT-DETR's box heads' last
    layer at a tenth), then BatchNorm statistics from one calibration pass over a batch of 8 (each
    BN normalizes what it really sees, perturbed a little), and the last Linear or (transposed)
    conv rescaled so that its outputs have std ``logit_std`` (unless None)."""
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
    norms = [m for m in model.sublayers() if hasattr(m, "_mean") and hasattr(m, "_variance")]  # RT-DETR's frozen BN too

    def calibrate(layer, inputs):
        x = inputs[0].numpy().astype(np.float64)
        axes = tuple(i for i in range(x.ndim) if i != 1)
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        layer._mean.set_value((mean + 0.05 * np.sqrt(var) * rng.standard_normal(mean.shape)).astype("float32"))
        # floored by a share of the mean variance: a channel nearly constant on the calibration batch
        # must not amplify another input's deviations
        var = var * rng.uniform(0.8, 1.25, var.shape) + 0.5 * var.mean() + 1e-3
        layer._variance.set_value(var.astype("float32"))

    if detector:
        # box heads that refine by small steps, as trained ones do: unit-scale random deltas make
        # each decoder layer jump its references (through inverse sigmoid and deformable
        # sampling), and the six layers amplify float noise into boxes a pixel apart
        for lname, layer in model.named_sublayers():
            if type(layer).__name__ in ("RTDETRMLPPredictionHead", "PPDocLayoutV2MLPPredictionHead",
                                           "PPDocLayoutV3MLPPredictionHead") and "bbox" in lname:
                last = layer.layers[-1]
                last.weight.set_value(last.weight.numpy() * 0.1)
                last.bias.set_value(last.bias.numpy() * 0.1)
    hooks = [m.register_forward_pre_hook(calibrate) for m in norms]
    with paddle.no_grad():
        if detector:  # the network without the post-processing (which is written for batch 1)
            model.net.model(paddle.to_tensor(calib))
        else:
            model(paddle.to_tensor(calib))
    for h in hooks:
        h.remove()
    if logit_std is not None:
        last = [m for m in model.sublayers() if isinstance(m, (paddle.nn.Linear, paddle.nn.Conv2D, paddle.nn.Conv2DTranspose))][-1]
        seen = []
        hook = last.register_forward_post_hook(lambda layer, inputs, out: seen.append(out.numpy()))
        with paddle.no_grad():
            model(paddle.to_tensor(calib))
        hook.remove()
        factor = logit_std / max(float(seen[0].std()), 1e-6)
        last.weight.set_value(last.weight.numpy() * factor)
        if last.bias is not None:
            last.bias.set_value(last.bias.numpy() * factor)


# Detectors take PaddleX's three inputs (im_shape, image, scale_factor), batch 1.
DETECTORS = {"pp_doclayout_l", "pp_doclayout_plus_l", "pp_doclayout_v2", "pp_doclayout_v3"}


def _specs(name: str, spec_shape) -> list:
    if name in DETECTORS:
        return [paddle.static.InputSpec([1, 2], "float32", "im_shape"),
                paddle.static.InputSpec(spec_shape, "float32", "image"),
                paddle.static.InputSpec([1, 2], "float32", "scale_factor")]
    return [paddle.static.InputSpec(spec_shape, "float32", "x")]


def _save(model, name: str, spec_shape, out_dir: str) -> str:
    spec = _specs(name, spec_shape)
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
    image = rng.uniform(-1, 1, shape).astype("float32")
    detector = name in DETECTORS
    if detector:
        feeds = {"im_shape": np.array([[shape[2], shape[3]]], "float32"), "image": image,
                 "scale_factor": np.array([[1.0, 1.0]], "float32")}
    else:
        feeds = {"x": image}
    calib = rng.uniform(-1, 1, (8, *shape[1:])).astype("float32")  # a batch: statistics that generalize
    _randomize(model, rng, calib, logit_std, detector)
    model_file = _save(model, name, spec_shape, out_dir)
    names, outs = predict(model_file, os.path.join(out_dir, "model.pdiparams"), feeds)
    with paddle.no_grad():
        eager = model(*[paddle.to_tensor(feeds[n]) for n in ("im_shape", "image", "scale_factor")]) if detector \
            else model(paddle.to_tensor(feeds["x"]))
    if isinstance(eager, paddle.Tensor):
        eager = [eager]
    for o, e in zip(outs, eager):  # the saved program is the layer
        np.testing.assert_allclose(o, e.numpy(), rtol=1e-4, atol=1e-4)
    save_io(os.path.join(out_dir, "io.npz"), names, feeds, outs)
    print(f"{name}: outputs {[o.shape for o in outs]}, std {[float(o.std()) for o in outs]}")


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
