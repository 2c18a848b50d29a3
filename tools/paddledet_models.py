"""Build PaddleDetection models with random weights and export them with PaddleDetection's own
exporter (NMS kept), then record Paddle's inference outputs on a seeded batch.

Runs inside the paddledet virtual environment (tools/setup_paddledet.sh), never in the
project's own: ``python tools/paddledet_models.py NAME OUT_DIR``. Writes
``OUT_DIR/model.pdmodel``, ``model.pdiparams`` and ``io.npz`` (inputs ``in<i>`` in the
predictor's feed order, outputs ``out<i>``). The configs are PaddleDetection's for each
architecture, at a small input size; classification biases are spread at random so that the
random network gives a spread of scores (and so detections, with no ties) instead of its
prior probability everywhere. Not built: two-stage models (Faster/Mask R-CNN): with Paddle
2.6, paddledet 2.6.0's export of them fails inside Paddle's static graph build (RCNNBox
indexes a per-image RoI count that Paddle 2.6 holds as 0-D: "axis ... rank of input is 0").
"""

from __future__ import annotations

import os
import sys
import tempfile

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
  inputs_def:
    image_shape: [3, {size}, {size}]
  sample_transforms:
    - Decode: {{}}
    - Resize: {{target_size: [{size}, {size}], keep_ratio: False, interp: 2}}
    - NormalizeImage: {{mean: [0., 0., 0.], std: [1., 1., 1.], norm_type: none}}
    - Permute: {{}}
  batch_size: 1
"""

MODELS = {
    # PP-YOLOE (s): CSPResNet + CustomCSPPAN + PPYOLOEHead, multiclass_nms3 on [N, M, 4] + [N, C, M]
    "ppyoloe_s": (
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
    "picodet_s": (
        192,
        80,
        ("head_cls", "cls_align"),
        """
architecture: PicoDet
PicoDet: {backbone: LCNet, neck: LCPAN, head: PicoHeadV2}
LCNet: {scale: 0.75, feature_maps: [3, 4, 5]}
LCPAN: {out_channels: 96, use_depthwise: True, num_features: 4}
PicoHeadV2:
  conv_feat: {name: PicoFeat, feat_in: 96, feat_out: 96, num_convs: 2, num_fpn_stride: 4,
              norm_type: bn, share_cls_reg: True, use_se: True}
  fpn_stride: [8, 16, 32, 64]
  feat_in_chan: 96
  prior_prob: 0.01
  reg_max: 7
  cell_offset: 0.5
  grid_cell_scale: 5.0
  static_assigner_epoch: 100
  use_align_head: True
  static_assigner: {name: ATSSAssigner, topk: 9, force_gt_matching: False}
  assigner: {name: TaskAlignedAssigner, topk: 13, alpha: 1.0, beta: 6.0}
  loss_class: {name: VarifocalLoss, use_sigmoid: False, iou_weighted: True, loss_weight: 1.0}
  loss_dfl: {name: DistributionFocalLoss, loss_weight: 0.5}
  loss_bbox: {name: GIoULoss, loss_weight: 2.5}
  nms: {name: MultiClassNMS, nms_top_k: 1000, keep_top_k: 100, score_threshold: 0.025, nms_threshold: 0.6}
""",
    ),
    # YOLOv3 (MobileNetV1): yolo_box per level + multiclass_nms3
    "yolov3_mobilenet": (
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
    "ssd_mobilenet": (
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


def build(name: str, out_dir: str, batch: int = 2) -> None:
    from ppdet.core.workspace import load_config
    from ppdet.engine import Trainer

    size, classes, cls_layers, body = MODELS[name]
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    paddle.seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        cfg_file = os.path.join(tmp, f"{name}.yml")
        with open(cfg_file, "w") as f:
            f.write(COMMON.format(size=size) + f"num_classes: {classes}\n" + body)
        cfg = load_config(cfg_file)
        trainer = Trainer(cfg, mode="test")
        for pname, param in trainer.model.named_parameters():
            if pname.endswith("bias") and any(key in pname for key in cls_layers):
                param.set_value(rng.uniform(-4.0, 1.0, param.shape).astype("float32"))
        trainer.export(tmp)
        export_dir = os.path.join(tmp, name)
        for fname in ("model.pdmodel", "model.pdiparams"):
            os.replace(os.path.join(export_dir, fname), os.path.join(out_dir, fname))

    feeds = {
        "image": rng.uniform(0, 1, (batch, 3, size, size)).astype("float32"),
        "im_shape": np.array([[size, size]] * batch, "float32"),
        "scale_factor": np.array([[1.0, 1.0]] * batch, "float32"),
    }
    names, outs = predict(os.path.join(out_dir, "model.pdmodel"), os.path.join(out_dir, "model.pdiparams"), feeds)
    save_io(os.path.join(out_dir, "io.npz"), names, feeds, outs)
    print(f"{name}: inputs {names}, outputs {[o.shape for o in outs]}")


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
