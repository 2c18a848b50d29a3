"""PaddleDetection models exported by PaddleDetection itself with NMS kept, converted and
compared with Paddle's inference: PP-YOLOE (s), PicoDet (s), YOLOv3 (MobileNetV1), SSD
(MobileNetV1, prior_box), PP-YOLO (ResNet-18-vd, matrix_nms), RetinaNet and the two-stage
family, Faster R-CNN, Cascade R-CNN and Mask R-CNN (ResNet-50-FPN), as legacy programs (Paddle
2.6), the two-stage family also as PIR (Paddle 3.3), and PaddleOCR 3.7's PP-DocLayout-S and
PP-DocLayout-M layout detectors (PicoDet with PaddleX's released configs: 23 labels, 480 x 480
and 640 x 640, NMS kept) in both formats. Random weights with spread classification biases
(and, in the models added with the two-stage family and PP-DocLayout-S / -M, batch norms
calibrated on a random batch), so that every model gives detections (checked, and non-empty
masks for Mask R-CNN); batch 2 (Cascade R-CNN: 1, all PaddleDetection's export of it runs).

Detections are compared as sets of rows per image, counts exactly, masks exactly except at
pixels whose pasted probability Paddle leaves within float noise of the 0.5 threshold
(``harness.detection``), at the lowest opset each model converts at, the default (17, also
optimized) and the newest ONNX Runtime runs (21 for models with RoiAlign: ONNX Runtime has no
RoiAlign-22 kernel).

The models are built by ``tools/paddledet_models.py`` in the paddledet virtual environments
(``tools/setup_paddledet.sh``, Paddle 2.6; ``tools/setup_paddledet_pir.sh``, Paddle 3.3;
``$PD2ONNX_PADDLEDET_VENV``, ``$PD2ONNX_PADDLEDET_PIR_VENV``), cached by the script's content
hash under the test cache; without an environment its models' tests are skipped.
Cost (2 cores shared with other work): each environment installs in one to two minutes from a
warm pip cache (Paddle is the big download); the small one-stage models build in 5-10 s each,
the ResNet-50 ones in 30-60 s (Mask R-CNN exports twice); checking takes 3-15 s per one-stage
model and 15-30 s per two-stage one. PP-DocLayout-S / -M, legacy and PIR, at load 2-4: cold
(build and check) 15-18 s / 26-32 s, cached 5 s / 11 s.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import pytest

from harness import toolkit
from harness.check import check_model_file, load_io, opsets_for
from harness.detection import detections_comparer
from pd2onnx.paddle import load


class Spec(NamedTuple):
    env: str  # the virtual environment that builds it
    ops: tuple[str, ...]  # the saved program must hold these, else the test proves less
    atol: float = 1e-4  # boxes: rtol 1e-5 and this


TWO_STAGE = ("generate_proposals", "distribute_fpn_proposals", "roi_align", "multiclass_nms3", "while")
# Measured box differences (pixels; the images are 160-640 wide), tolerance about 2.5 times that:
# fp32 summation order through deep random networks and exp decoding.
MODELS = {
    "ppyoloe_s": Spec("paddledet", ("multiclass_nms3",)),
    "picodet_s": Spec("paddledet", ("multiclass_nms3",)),
    "pp_doclayout_s": Spec("paddledet", ("multiclass_nms3",)),  # 4.6e-5 (2.0e-5 beyond rtol)
    "pp_doclayout_m": Spec("paddledet", ("multiclass_nms3",)),  # 6.1e-5 (4.9e-5 beyond rtol)
    "pp_doclayout_s_pir": Spec("paddledet_pir", ("multiclass_nms3",)),
    "pp_doclayout_m_pir": Spec("paddledet_pir", ("multiclass_nms3",)),
    "yolov3_mobilenet": Spec("paddledet", ("yolo_box", "multiclass_nms3")),
    "ssd_mobilenet": Spec("paddledet", ("prior_box", "multiclass_nms3")),
    "ppyolo_r18vd": Spec("paddledet", ("yolo_box", "matrix_nms"), atol=2e-3),  # 8.2e-4
    "retinanet": Spec("paddledet", ("multiclass_nms3", "while"), atol=1e-3),  # 2.5e-4
    "faster_rcnn": Spec("paddledet", TWO_STAGE, atol=4e-3),  # 1.6e-3
    "cascade_rcnn": Spec("paddledet", TWO_STAGE, atol=4e-3),  # 1.6e-3
    "mask_rcnn": Spec("paddledet", (*TWO_STAGE, "grid_sample"), atol=4e-3),
    "faster_rcnn_pir": Spec("paddledet_pir", TWO_STAGE, atol=4e-3),
    "cascade_rcnn_pir": Spec("paddledet_pir", TWO_STAGE, atol=4e-3),
    "mask_rcnn_pir": Spec("paddledet_pir", (*TWO_STAGE, "grid_sample"), atol=4e-3),
}
MASK_MODELS = ("mask_rcnn", "mask_rcnn_pir")
RTOL = 1e-5
# Mask pixels whose pasted probability is this close to 0.5 may go either way: masks are pasted
# at positions the boxes set, so the boxes' float noise moves the probabilities (measured on
# Mask R-CNN: at most 1.5e-3, by 0.91 correlated with its box's difference; 12 of 1.5M pixels
# differed, all within 7e-4 of 0.5).
MASK_NOISE = 4e-3
ORT_ROI_ALIGN_MAX = 21  # ONNX Runtime has no RoiAlign-22 kernel (docs/detection.md)


@pytest.mark.parametrize("name", list(MODELS))
def test_detection_model(name):
    env, ops, atol = MODELS[name]
    masks = name in MASK_MODELS
    out = toolkit.build("paddledet", env, name, ("io.npz", "mask_prob.npy") if masks else ("io.npz",))
    model_file = os.path.join(out, "model.json" if name.endswith("_pir") else "model.pdmodel")
    held = {op.type for op in load(model_file).walk_ops()}
    missing = sorted(set(ops) - held)
    assert not missing, f"{name}: the saved program has no {missing}; the test would prove less"

    inputs, wants = load_io(os.path.join(out, "io.npz"))
    counts = wants[1]
    assert all(counts > 0), f"{name}: Paddle found no detection in an image; the test would prove little"
    mask_prob = None
    if masks:
        mask_prob = np.load(os.path.join(out, "mask_prob.npy"))
        filled = (wants[2] == 1).reshape(len(wants[2]), -1).any(axis=1)
        assert filled.all(), f"{name}: {int((~filled).sum())} of Paddle's masks are empty"

    opsets, _ = opsets_for(model_file, None)
    if "roi_align" in held:
        opsets = sorted({o for o in opsets if o <= ORT_ROI_ALIGN_MAX} | {ORT_ROI_ALIGN_MAX})
    compare = detections_comparer(RTOL, atol, mask_prob, 0.5, MASK_NOISE)
    check_model_file(name, model_file, [(inputs, wants)], RTOL, atol, opsets=tuple(opsets), compare_outputs=compare)
