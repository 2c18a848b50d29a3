"""Build PaddleDetection models with random weights and export them with PaddleDetection's own
exporter (NMS kept), then record Paddle's inference outputs on a seeded batch.

Runs inside a paddledet virtual environment, never in the project's own:
``python tools/paddledet_models.py NAME OUT_DIR``. ``tools/setup_paddledet.sh`` makes the one
with Paddle 2.6, which writes legacy programs (``model.pdmodel``); names ending in ``_pir`` are
built in the one ``tools/setup_paddledet_pir.sh`` makes, with Paddle 3.3, which writes PIR
(``model.json``). Writes the model, ``model.pdiparams`` and ``io.npz`` (inputs ``in<i>`` in the
predictor's feed order, outputs ``out<i>``; Mask R-CNN also ``mask_prob.npy``, below).

The configs are PaddleDetection's for each architecture, at a small input size and, for the
two-stage models, few proposals; PP-DocLayout-S / -M's are PaddleX's, at their exported size.
Classification biases are spread at random so that the random network gives a spread of scores
(and so detections, with no ties) instead of its prior probability everywhere. In the models
added with the two-stage family (``calibrate=True``), batch normalisation also gets random
scales and shifts and the statistics of a calibration batch (another random batch), so that deep
random backbones (ResNet-50) neither vanish nor explode: without it Faster R-CNN's class
probabilities saturate at 1.0. PP-DocLayout-S / -M (PaddleX's PicoDet layout detectors; their
configs' source is recorded beside their entries) are calibrated too (their features vanish
otherwise), with smaller scales and shifts, which keep their float noise well below the gaps
between the scores NMS compares.

paddledet 2.6.0 cannot export its two-stage models as released (with Paddle 2.6 nor 3.3): its
RPN head, ``BBoxPostProcess.get_pred`` and cascade head take a per-image count as ``x[i]`` or
``paddle.shape(x)[0]``, which Paddle 2.6+ holds as a 0-D tensor, and then concatenate or index
it ("axis ... rank of input is 0"). ``patch_paddledet`` rewrites exactly those expressions to
``x[i:i + 1]`` (what later PaddleDetection releases write) in the source of the functions
concerned, and fails if the installed source differs. With Paddle 3.3 its ``multiclass_nms``
appends a legacy op to a PIR program; there it is routed to Paddle's own ``multiclass_nms3``.

Mask R-CNN's masks are ``paste_mask(sigmoid(logits)) >= 0.5`` per detection. A pixel whose
pasted probability Paddle leaves within float noise of 0.5 may go either way in another
runtime, so the build also records those probabilities (``mask_prob.npy``, the masks' shape):
the same model exported once more with the threshold left out of ``MaskPostProcess``, run on
the same inputs.
"""

from __future__ import annotations

import inspect
import os
import sys
import tempfile
import textwrap
from typing import NamedTuple

import cv2  # noqa: F401  (before paddle: the other order crashes in zlib with these wheels)
import numpy as np
import paddle
from toolkit_io import predict, save_io

_to_static = paddle.jit.to_static


def _full_graph(*args, **kwargs):
    kwargs.setdefault("full_graph", True)  # paddledet 2.6 predates Paddle 2.6's default (SOT)
    return _to_static(*args, **kwargs)


paddle.jit.to_static = _full_graph

COMMON = """
use_gpu: false
use_ema: false
metric: COCO
log_iter: 1
save_dir: output
snapshot_epoch: 1
weights: output/none
norm_type: bn
TestDataset:
  !ImageFolder
    anno_path: null
TestReader:
{inputs_def}  sample_transforms:
    - Decode: {{}}
    - Resize: {{target_size: [{size}, {size}], keep_ratio: False, interp: 2}}
    - NormalizeImage: {{mean: [0., 0., 0.], std: [1., 1., 1.], norm_type: none}}
    - Permute: {{}}
  batch_size: 1
"""

# A fixed image size where PaddleDetection's reader declares one (inputs_def), else any size
INPUTS_DEF = """  inputs_def:
    image_shape: [3, {size}, {size}]
"""


class Model(NamedTuple):
    size: int  # of the square images fed
    classes: int
    cls_layers: tuple[str, ...]  # parameters whose biases are spread
    body: str  # the architecture's config
    any_size: bool = False  # exported for images of any size, as PaddleDetection's config does
    batch: int = 2
    calibrate: bool = False  # batch-norm statistics from a calibration batch (``calibrate``)
    bn_scale: tuple[float, float] = (0.5, 1.5)  # calibrated batch norms' scales: uniform in this range
    bn_shift: float = 0.3  # and shifts: uniform within +-this



def picodet_body(scale: float, channels: int, convs: int) -> str:
    """PicoDet's architecture with an LCNet backbone of ``scale``, an LCPAN neck of ``channels``
    and a PicoHeadV2 of ``convs`` convolutions per tower on 4 strides (PaddleDetection's
    configs/picodet, and PaddleX's PP-DocLayout-S / -M configs, which differ only in these)."""
    return f"""
architecture: PicoDet
PicoDet: {{backbone: LCNet, neck: LCPAN, head: PicoHeadV2}}
LCNet: {{scale: {scale}, feature_maps: [3, 4, 5]}}
LCPAN: {{out_channels: {channels}, use_depthwise: True, num_features: 4}}
PicoHeadV2:
  conv_feat: {{name: PicoFeat, feat_in: {channels}, feat_out: {channels}, num_convs: {convs},
              num_fpn_stride: 4, norm_type: bn, share_cls_reg: True, use_se: True}}
  fpn_stride: [8, 16, 32, 64]
  feat_in_chan: {channels}
  prior_prob: 0.01
  reg_max: 7
  cell_offset: 0.5
  grid_cell_scale: 5.0
  static_assigner_epoch: 100
  use_align_head: True
  static_assigner: {{name: ATSSAssigner, topk: 9, force_gt_matching: False}}
  assigner: {{name: TaskAlignedAssigner, topk: 13, alpha: 1.0, beta: 6.0}}
  loss_class: {{name: VarifocalLoss, use_sigmoid: False, iou_weighted: True, loss_weight: 1.0}}
  loss_dfl: {{name: DistributionFocalLoss, loss_weight: 0.5}}
  loss_bbox: {{name: GIoULoss, loss_weight: 2.5}}
  nms: {{name: MultiClassNMS, nms_top_k: 1000, keep_top_k: 100, score_threshold: 0.025, nms_threshold: 0.6}}
"""


MODELS = {
    # PP-YOLOE (s): CSPResNet + CustomCSPPAN + PPYOLOEHead, multiclass_nms3 on [N, M, 4] + [N, C, M]
    "ppyoloe_s": Model(
        160,
        80,
        ("pred_cls",),
        """
architecture: YOLOv3
depth_mult: 0.33
width_mult: 0.50
YOLOv3: {backbone: CSPResNet, neck: CustomCSPPAN, yolo_head: PPYOLOEHead, post_process: ~}
CSPResNet: {layers: [3, 6, 6, 3], channels: [64, 128, 256, 512, 1024], return_idx: [1, 2, 3],
            use_large_stem: True, use_alpha: True}
CustomCSPPAN: {out_channels: [768, 384, 192], stage_num: 1, block_num: 3, act: swish, spp: true}
PPYOLOEHead:
  fpn_strides: [32, 16, 8]
  grid_cell_scale: 5.0
  grid_cell_offset: 0.5
  static_assigner_epoch: -1
  use_varifocal_loss: True
  loss_weight: {class: 1.0, iou: 2.5, dfl: 0.5}
  static_assigner: {name: ATSSAssigner, topk: 9}
  assigner: {name: TaskAlignedAssigner, topk: 13, alpha: 1.0, beta: 6.0}
  nms: {name: MultiClassNMS, nms_top_k: 1000, keep_top_k: 100, score_threshold: 0.01, nms_threshold: 0.7}
""",
    ),
    # PicoDet (s, LCNet): PicoHeadV2 (4 strides), multiclass_nms3
    "picodet_s": Model(192, 80, ("head_cls", "cls_align"), picodet_body(0.75, 96, 2)),
    # YOLOv3 (MobileNetV1): yolo_box per level + multiclass_nms3
    "yolov3_mobilenet": Model(
        160,
        80,
        ("yolo_output",),
        """
architecture: YOLOv3
YOLOv3: {backbone: MobileNet, neck: YOLOv3FPN, yolo_head: YOLOv3Head, post_process: BBoxPostProcess}
MobileNet: {scale: 1, feature_maps: [4, 6, 13], with_extra_blocks: false, extra_block_filters: []}
YOLOv3Head:
  anchors: [[10, 13], [16, 30], [33, 23], [30, 61], [62, 45], [59, 119], [116, 90], [156, 198], [373, 326]]
  anchor_masks: [[6, 7, 8], [3, 4, 5], [0, 1, 2]]
  loss: YOLOv3Loss
YOLOv3Loss: {ignore_thresh: 0.7, downsample: [32, 16, 8], label_smooth: false}
BBoxPostProcess:
  decode: {name: YOLOBox, conf_thresh: 0.005, downsample_ratio: 32, clip_bbox: true}
  nms: {name: MultiClassNMS, keep_top_k: 100, score_threshold: 0.01, nms_threshold: 0.45, nms_top_k: 1000}
""",
    ),
    # SSD (MobileNetV1, VOC): prior_box per level, box_coder decoding, softmax + multiclass_nms3
    "ssd_mobilenet": Model(
        300,
        21,
        ("cls_convs",),
        """
architecture: SSD
SSD: {backbone: MobileNet, ssd_head: SSDHead, post_process: BBoxPostProcess}
MobileNet:
  norm_decay: 0.
  scale: 1
  conv_learning_rate: 0.1
  extra_block_filters: [[256, 512], [128, 256], [128, 256], [64, 128]]
  with_extra_blocks: true
  feature_maps: [11, 13, 14, 15, 16, 17]
SSDHead:
  kernel_size: 1
  padding: 0
  anchor_generator:
    steps: [0, 0, 0, 0, 0, 0]
    aspect_ratios: [[2.], [2., 3.], [2., 3.], [2., 3.], [2., 3.], [2., 3.]]
    min_ratio: 20
    max_ratio: 90
    base_size: 300
    min_sizes: [60.0, 105.0, 150.0, 195.0, 240.0, 285.0]
    max_sizes: [[], 150.0, 195.0, 240.0, 285.0, 300.0]
    offset: 0.5
    flip: true
    min_max_aspect_ratios_order: false
BBoxPostProcess:
  decode: {name: SSDBox}
  nms: {name: MultiClassNMS, keep_top_k: 200, score_threshold: 0.01, nms_threshold: 0.45, nms_top_k: 400, nms_eta: 1.0}
""",
    ),
}

# Faster/Cascade/Mask R-CNN share PaddleDetection's ResNet-50-FPN body and RPN
# (configs/*_rcnn/_base_/*_r50_fpn.yml); proposals are cut from 1000 to 100 before and 50 after
# the RPN's NMS, and to 30 detections per image.
R50_FPN_RPN = """
ResNet: {depth: 50, norm_type: bn, freeze_at: 0, return_idx: [0, 1, 2, 3], num_stages: 4}
FPN: {out_channel: 256}
RPNHead:
  anchor_generator: {aspect_ratios: [0.5, 1.0, 2.0], anchor_sizes: [[32], [64], [128], [256], [512]],
                     strides: [4, 8, 16, 32, 64]}
  rpn_target_assign: {batch_size_per_im: 256, fg_fraction: 0.5, negative_overlap: 0.3, positive_overlap: 0.7,
                      use_random: True}
  train_proposal: {min_size: 0.0, nms_thresh: 0.7, pre_nms_top_n: 2000, post_nms_top_n: 1000,
                   topk_after_collect: True}
  test_proposal: {min_size: 0.0, nms_thresh: 0.7, pre_nms_top_n: 100, post_nms_top_n: 50}
BBoxAssigner: {batch_size_per_im: 512, bg_thresh: 0.5, fg_thresh: 0.5, fg_fraction: 0.25, use_random: True}
"""
RCNN_NMS = "  nms: {name: MultiClassNMS, keep_top_k: 30, score_threshold: 0.05, nms_threshold: 0.5}\n"
FASTER_HEAD = """
BBoxHead:
  head: TwoFCHead
  roi_extractor: {resolution: 7, sampling_ratio: 0, aligned: True}
  bbox_assigner: BBoxAssigner
TwoFCHead: {out_channel: 1024}
BBoxPostProcess:
  decode: RCNNBox
""" + RCNN_NMS

MODELS.update({
    # Faster R-CNN (ResNet-50-FPN): generate_proposals per level and image in a while loop,
    # distribute_fpn_proposals, roi_align per level, RCNNBox decoding, multiclass_nms3 on RoIs
    "faster_rcnn": Model(
        160,
        80,
        ("bbox_score",),
        "architecture: FasterRCNN\n"
        "FasterRCNN: {backbone: ResNet, neck: FPN, rpn_head: RPNHead, bbox_head: BBoxHead, "
        "bbox_post_process: BBoxPostProcess}\n" + R50_FPN_RPN + FASTER_HEAD,
        any_size=True,
        calibrate=True,
    ),
    # Cascade R-CNN: three heads, each stage's boxes cut into images (tensor arrays) for the next.
    # Batch 1: exported, CascadeHead._get_pred_bbox cuts every stage's boxes into one piece
    # (``num_prop = [-1]``: the RPN's per-image RoIs are a tensor array there), so the next
    # stage's roi_align fails on a batch of 2 in Paddle's own predictor.
    "cascade_rcnn": Model(
        160,
        80,
        ("bbox_score",),
        "architecture: CascadeRCNN\n"
        "CascadeRCNN: {backbone: ResNet, neck: FPN, rpn_head: RPNHead, bbox_head: CascadeHead, "
        "bbox_post_process: BBoxPostProcess}\n" + R50_FPN_RPN + """
CascadeHead:
  head: CascadeTwoFCHead
  roi_extractor: {resolution: 7, sampling_ratio: 0, aligned: True}
  bbox_assigner: BBoxAssigner
CascadeTwoFCHead: {out_channel: 1024}
BBoxPostProcess:
  decode: {name: RCNNBox, prior_box_var: [30.0, 30.0, 15.0, 15.0]}
""" + RCNN_NMS,
        any_size=True,
        batch=1,
        calibrate=True,
    ),
    # Mask R-CNN: Faster R-CNN + a mask head on the detections (roi_align 14x14, 4 convs,
    # deconvolution to 28x28, the label's channel) pasted into the image (grid_sample), >= 0.5
    "mask_rcnn": Model(
        160,
        80,
        ("bbox_score",),
        "architecture: MaskRCNN\n"
        "MaskRCNN: {backbone: ResNet, neck: FPN, rpn_head: RPNHead, bbox_head: BBoxHead, mask_head: MaskHead, "
        "bbox_post_process: BBoxPostProcess, mask_post_process: MaskPostProcess}\n" + R50_FPN_RPN + FASTER_HEAD + """
MaskHead:
  head: MaskFeat
  roi_extractor: {resolution: 14, sampling_ratio: 0, aligned: True}
  mask_assigner: MaskAssigner
  share_bbox_feat: False
MaskFeat: {num_convs: 4, out_channel: 256}
MaskAssigner: {mask_resolution: 28}
MaskPostProcess: {binary_thresh: 0.5}
""",
        any_size=True,
        calibrate=True,
    ),
    # RetinaNet (ResNet-50-FPN, P3-P7): per level and image a top-k cut inside an if, in a loop
    # (configs/retinanet/_base_/retinanet_r50_fpn.yml)
    "retinanet": Model(
        160,
        80,
        ("retina_cls",),
        """
architecture: RetinaNet
RetinaNet: {backbone: ResNet, neck: FPN, head: RetinaHead}
ResNet: {depth: 50, variant: b, norm_type: bn, freeze_at: 0, return_idx: [1, 2, 3], num_stages: 4}
FPN: {out_channel: 256, spatial_scales: [0.125, 0.0625, 0.03125], extra_stage: 2, has_extra_convs: true,
      use_c5: false}
RetinaHead:
  conv_feat: {name: RetinaFeat, feat_in: 256, feat_out: 256, num_convs: 4, norm_type: null, use_dcn: false}
  anchor_generator: {name: RetinaAnchorGenerator, octave_base_scale: 4, scales_per_octave: 3,
                     aspect_ratios: [0.5, 1.0, 2.0], strides: [8.0, 16.0, 32.0, 64.0, 128.0]}
  bbox_assigner: {name: MaxIoUAssigner, positive_overlap: 0.5, negative_overlap: 0.4, allow_low_quality: true}
  loss_class: {name: FocalLoss, gamma: 2.0, alpha: 0.25, loss_weight: 1.0}
  loss_bbox: {name: SmoothL1Loss, beta: 0.0, loss_weight: 1.0}
  nms: {name: MultiClassNMS, nms_top_k: 1000, keep_top_k: 100, score_threshold: 0.05, nms_threshold: 0.5}
""",
        any_size=True,
        calibrate=True,
    ),
    # PP-YOLO (ResNet-18-vd, configs/ppyolo/_base_/ppyolo_r18vd.yml): PPYOLOFPN with DropBlock,
    # yolo_box with scale_x_y, matrix_nms
    "ppyolo_r18vd": Model(
        192,
        80,
        ("yolo_output",),
        """
architecture: YOLOv3
YOLOv3: {backbone: ResNet, neck: PPYOLOFPN, yolo_head: YOLOv3Head, post_process: BBoxPostProcess}
ResNet: {depth: 18, variant: d, return_idx: [2, 3], freeze_at: -1, freeze_norm: false, norm_decay: 0.}
PPYOLOFPN: {drop_block: true, block_size: 3, keep_prob: 0.9, conv_block_num: 0}
YOLOv3Head:
  anchor_masks: [[3, 4, 5], [0, 1, 2]]
  anchors: [[10, 14], [23, 27], [37, 58], [81, 82], [135, 169], [344, 319]]
  loss: YOLOv3Loss
YOLOv3Loss: {ignore_thresh: 0.7, downsample: [32, 16], label_smooth: false, scale_x_y: 1.05, iou_loss: IouLoss}
IouLoss: {loss_weight: 2.5, loss_square: true}
BBoxPostProcess:
  decode: {name: YOLOBox, conf_thresh: 0.01, downsample_ratio: 32, clip_bbox: true, scale_x_y: 1.05}
  nms: {name: MatrixNMS, keep_top_k: 100, score_threshold: 0.01, post_threshold: 0.01, nms_top_k: -1,
        background_label: -1}
""",
        calibrate=True,
    ),
})
# PP-DocLayout-S / -M, PaddleOCR 3.7's (PaddleX 3.7's) small and medium layout detectors: PicoDet
# with 23 labels, at the input size they are exported for, with their export settings (NMS
# kept). The model and export sections of PaddleX's configs, repository PaddlePaddle/PaddleX,
# commit d3d6cb356a173dd760cea98205e32388a664b6e1,
# paddlex/repo_apis/PaddleDetection_api/configs/PP-DocLayout-S.yaml (LCNet x0.75, 96 channels,
# 2 convs per tower, 480 x 480) and PP-DocLayout-M.yaml (LCNet x2.0, 160 channels, 4 convs,
# 640 x 640); the paddlex wheel has no definition of them (tools/paddlex_models.py).
# Calibrated batch norms (else the random network's features vanish and every anchor gets the
# same score), with small scales and shifts: at the two-stage family's (0.5-1.5, +-0.3) the
# random LCNet + LCPAN grows float noise to 8e-5 in the scores (every op replays within 1e-5:
# ``pd2onnx verify --locate --replay`` says `match`), more than the gaps between overlapping
# candidates, so NMS keeps other boxes in another runtime; at (0.2-0.4, +-0.1) the scores differ
# by 5e-7 and the boxes by 6e-5 pixels.
DOCLAYOUT_EXPORT = "export: {post_process: true, nms: true, benchmark: false, fuse_conv_bn: false}\n"
DOCLAYOUT_CLS = ("head_cls", "cls_align")
MODELS["pp_doclayout_s"] = Model(480, 23, DOCLAYOUT_CLS, picodet_body(0.75, 96, 2) + DOCLAYOUT_EXPORT,
                                 calibrate=True, bn_scale=(0.2, 0.4), bn_shift=0.1)
MODELS["pp_doclayout_m"] = Model(640, 23, DOCLAYOUT_CLS, picodet_body(2.0, 160, 4) + DOCLAYOUT_EXPORT,
                                 calibrate=True, bn_scale=(0.2, 0.4), bn_shift=0.1)
# The two-stage family again, saved as PIR by Paddle 3.3 (the paddledet_pir environment).
# PP-DocLayout-S / -M likewise.
for _name in ("faster_rcnn", "cascade_rcnn", "mask_rcnn", "pp_doclayout_s", "pp_doclayout_m"):
    MODELS[f"{_name}_pir"] = MODELS[_name]
MASK_MODELS = ("mask_rcnn", "mask_rcnn_pir")


def _rewrite(owner: type, attr: str, edits: list[tuple[str, str]], keep_dir: str) -> None:
    """Replace ``owner.attr`` by the same function with each ``old`` text of its source replaced
    by ``new`` (each must occur exactly once). The new source is written to ``keep_dir`` so
    that Paddle's dy2static, which reads a function's source, finds it."""
    func = getattr(owner, attr)
    source = textwrap.dedent(inspect.getsource(func))
    for old, new in edits:
        found = source.count(old)
        if found != 1:
            raise RuntimeError(f"{owner.__name__}.{attr}: {old!r} occurs {found} times, not once; "
                               "is this paddledet 2.6.0?")
        source = source.replace(old, new)
    path = os.path.join(keep_dir, f"{owner.__name__}_{attr}.py")
    with open(path, "w") as f:
        f.write(source)
    namespace: dict = {}
    exec(compile(source, path, "exec"), func.__globals__, namespace)  # noqa: S102  (our own rewrite)
    setattr(owner, attr, namespace[attr])


def patch_paddledet(keep_dir: str) -> None:
    """What paddledet 2.6.0 needs to export its two-stage models (module docstring)."""
    from ppdet.modeling import ops
    from ppdet.modeling.heads.cascade_head import CascadeHead
    from ppdet.modeling.post_process import BBoxPostProcess
    from ppdet.modeling.proposal_generator.rpn_head import RPNHead

    _rewrite(RPNHead, "_gen_proposal", [("paddle.shape(topk_rois)[0])", "paddle.shape(topk_rois)[0:1])")], keep_dir)
    _rewrite(BBoxPostProcess, "get_pred", [
        ("bbox_num_i = bbox_num[i]\n", "bbox_num_i = bbox_num[i:i + 1]\n"),
        ("scale_factor[i][0], scale_factor[i][1]", "scale_factor[i][0:1], scale_factor[i][1:2]"),
    ], keep_dir)
    _rewrite(CascadeHead, "_get_rois_from_boxes", [("paddle.shape(r)[0] for", "paddle.shape(r)[0:1] for")], keep_dir)

    legacy_nms = ops.multiclass_nms

    def multiclass_nms(bboxes, scores, score_threshold, nms_top_k, keep_top_k, nms_threshold=0.3,
                       normalized=True, nms_eta=1.0, background_label=-1, return_index=False,
                       return_rois_num=True, rois_num=None, name=None):
        if not paddle.framework.in_pir_mode():
            return legacy_nms(bboxes, scores, score_threshold, nms_top_k, keep_top_k, nms_threshold, normalized,
                              nms_eta, background_label, return_index, return_rois_num, rois_num, name)
        out, index, count = paddle._C_ops.multiclass_nms3(
            bboxes, scores, rois_num, score_threshold, nms_top_k, keep_top_k, nms_threshold, normalized, nms_eta,
            background_label)
        return out, count if return_rois_num else None, index if return_index else None

    ops.multiclass_nms = multiclass_nms


def calibrate(model, feeds: dict, rng: np.random.Generator, scale: tuple[float, float] = (0.5, 1.5),
              shift: float = 0.3) -> None:
    """Random batch-norm scales (uniform in ``scale``) and shifts (within +-``shift``), and the
    mean and variance of each batch norm's input on ``feeds`` (one eager forward pass, layer by
    layer) as its statistics."""
    norms = [layer for layer in model.sublayers() if isinstance(layer, paddle.nn.layer.norm._BatchNormBase)]

    def set_statistics(layer, inputs):
        x = inputs[0]
        layer._mean.set_value(x.mean(axis=[0, 2, 3]))
        layer._variance.set_value(x.var(axis=[0, 2, 3], unbiased=False))

    hooks = []
    for layer in norms:
        channels = layer._mean.shape[0]
        layer.weight.set_value(rng.uniform(*scale, channels).astype("float32"))
        layer.bias.set_value(rng.uniform(-shift, shift, channels).astype("float32"))
        hooks.append(layer.register_forward_pre_hook(set_statistics))
    model.eval()
    with paddle.no_grad():
        model({k: paddle.to_tensor(v) for k, v in feeds.items()})
    for hook in hooks:
        hook.remove()


def _feeds(rng: np.random.Generator, batch: int, size: int) -> dict:
    return {
        "image": rng.uniform(0, 1, (batch, 3, size, size)).astype("float32"),
        "im_shape": np.array([[size, size]] * batch, "float32"),
        "scale_factor": np.array([[1.0, 1.0]] * batch, "float32"),
    }


def _export(trainer, cfg_name: str, tmp: str, out_dir: str) -> str:
    """Export with PaddleDetection's exporter into ``out_dir``; the model file's path."""
    trainer.export(tmp)
    export_dir = os.path.join(tmp, cfg_name)
    files = [f for f in os.listdir(export_dir) if f.startswith("model.") and f != "model.pdiparams.info"]
    os.makedirs(out_dir, exist_ok=True)
    for fname in files:
        os.replace(os.path.join(export_dir, fname), os.path.join(out_dir, fname))
    model = "model.json" if "model.json" in files else "model.pdmodel"
    return os.path.join(out_dir, model)


def build(name: str, out_dir: str) -> None:
    from ppdet.core.workspace import load_config
    from ppdet.engine import Trainer

    pir = name.endswith("_pir")
    if pir != paddle.__version__.startswith("3."):
        raise SystemExit(f"{name}: needs Paddle {'3.3 (setup_paddledet_pir.sh)' if pir else '2.6'}, "
                         f"this is {paddle.__version__}")
    spec = MODELS[name]
    size, classes, cls_layers, batch = spec.size, spec.classes, spec.cls_layers, spec.batch
    rng = np.random.default_rng(0)
    paddle.seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        patch_paddledet(tmp)
        cfg_file = os.path.join(tmp, f"{name}.yml")
        with open(cfg_file, "w") as f:
            inputs_def = "" if spec.any_size else INPUTS_DEF.format(size=size)
            f.write(COMMON.format(size=size, inputs_def=inputs_def) + f"num_classes: {classes}\n" + spec.body)
        cfg = load_config(cfg_file)
        trainer = Trainer(cfg, mode="test")
        for pname, param in trainer.model.named_parameters():
            if pname.endswith("bias") and any(key in pname for key in cls_layers):
                param.set_value(rng.uniform(-4.0, 1.0, param.shape).astype("float32"))
        if spec.calibrate:
            calibrate(trainer.model, _feeds(np.random.default_rng(1), batch, size), rng, spec.bn_scale,
                      spec.bn_shift)
        model_file = _export(trainer, name, tmp, out_dir)
        feeds = _feeds(rng, batch, size)
        params = os.path.join(out_dir, "model.pdiparams")
        names, outs = predict(model_file, params, feeds)
        if name in MASK_MODELS:
            np.save(os.path.join(out_dir, "mask_prob.npy"), _mask_probabilities(trainer, name, tmp, feeds))
    save_io(os.path.join(out_dir, "io.npz"), names, feeds, outs)
    print(f"{name}: inputs {names}, outputs {[o.shape for o in outs]}")


def _mask_probabilities(trainer, name: str, tmp: str, feeds: dict) -> np.ndarray:
    """The pasted mask probabilities behind Mask R-CNN's masks: the same model exported again
    with ``MaskPostProcess`` keeping the probabilities instead of thresholding them."""
    from ppdet.modeling.post_process import MaskPostProcess

    original = MaskPostProcess.__call__
    _rewrite(MaskPostProcess, "__call__", [
        ("dtype='int32') - 1", "dtype='float32') - 1"),
        ("paddle.cast(pred_mask >= self.binary_thresh,\n                                    'int32')", "pred_mask"),
    ], tmp)
    try:
        probe_dir = os.path.join(tmp, "probe")
        model_file = _export(trainer, name, tmp, probe_dir)
        _, outs = predict(model_file, os.path.join(probe_dir, "model.pdiparams"), feeds)
    finally:
        MaskPostProcess.__call__ = original
    return outs[2]


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
