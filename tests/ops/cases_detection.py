"""Detection cases: multiclass NMS, YOLO box decoding, priors, box coding.

Most of these ops have no public Python API that both Paddle versions can save; ``_op``
appends the raw op (``_C_ops`` under PIR, ``LayerHelper.append_op`` under Paddle 2.6's
legacy static mode), with the attributes spelled as in the op definition.
"""

import numpy as np

from harness.cases import case
from ops._nn_layers import is_pir as _pir


def _legacy_op(paddle, op_type, inputs, outputs, attrs):
    """Append ``op_type`` to the legacy program; ``outputs`` maps slot -> dtype (unlike
    ``_nn_layers.legacy_op``, whose outputs share one dtype: NMS ops also give int32)."""
    from paddle.base.layer_helper import LayerHelper

    helper = LayerHelper(op_type)
    outs = {slot: helper.create_variable_for_type_inference(dtype) for slot, dtype in outputs.items()}
    helper.append_op(
        type=op_type, inputs={k: v for k, v in inputs.items() if v is not None}, outputs=outs, attrs=attrs
    )
    return [outs[slot] for slot in outputs]


# ---------------------------------------------------------------------- multiclass_nms
_NMS_DEFAULTS = dict(
    score_threshold=0.05,
    nms_top_k=-1,
    keep_top_k=-1,
    nms_threshold=0.3,
    normalized=True,
    nms_eta=1.0,
    background_label=0,
)


def _nms(paddle, version=3, rois_num=False, **kw):
    attrs = {**_NMS_DEFAULTS, **kw}

    def fn(boxes, scores, *rest):
        num = rest[0] if rois_num else None
        if _pir(paddle):
            a = attrs
            return paddle._C_ops.multiclass_nms3(
                boxes,
                scores,
                num,
                a["score_threshold"],
                a["nms_top_k"],
                a["keep_top_k"],
                a["nms_threshold"],
                a["normalized"],
                a["nms_eta"],
                a["background_label"],
            )
        op_type = {1: "multiclass_nms", 2: "multiclass_nms2", 3: "multiclass_nms3"}[version]
        outputs = {"Out": boxes.dtype}
        if version >= 2:
            outputs["Index"] = "int32"
        if version == 3:
            outputs["NmsRoisNum"] = "int32"
        inputs = {"BBoxes": boxes, "Scores": scores}
        if version == 3:
            inputs["RoisNum"] = num
        return _legacy_op(paddle, op_type, inputs, outputs, attrs)

    return fn


def _boxes(rng, n, m, scale=1.0, size=0.3):
    """Random [n, m, 4] boxes (x1, y1, x2, y2) in [0, scale], many overlapping."""
    xy = rng.uniform(0, 1 - size, (n, m, 2))
    wh = rng.uniform(size / 3, size, (n, m, 2))
    return (np.concatenate([xy, xy + wh], -1) * scale).astype("float32")


def _scores(rng, n, c, m, ties=False):
    s = rng.uniform(0, 1, (n, c, m))
    if ties:
        s = np.round(s * 4) / 4  # few distinct values: many ties
    return s.astype("float32")


def _nms_inputs(rng, n, c, m, ties=False, scale=1.0):
    return [_boxes(rng, n, m, scale), _scores(rng, n, c, m, ties)]


_DYN = [[None, None, 4], [None, None, None]]


@case("multiclass_nms3", name="det_nms3_basic")
def det_nms3_basic(paddle, rng):
    return _nms(paddle), _nms_inputs(rng, 1, 3, 20), _DYN


@case("multiclass_nms3", name="det_nms3_batch2_keep_top_k")
def det_nms3_batch2_keep_top_k(paddle, rng):
    return _nms(paddle, keep_top_k=7, nms_top_k=10, nms_threshold=0.5), _nms_inputs(rng, 2, 4, 30), _DYN


@case("multiclass_nms3", name="det_nms3_ties")
def det_nms3_ties(paddle, rng):
    """Scores in quarters: ties inside a class, across classes and at keep_top_k's cut."""
    return (
        _nms(paddle, keep_top_k=9, nms_top_k=6, score_threshold=0.2),
        _nms_inputs(rng, 2, 3, 16, ties=True),
        _DYN,
    )


@case("multiclass_nms3", name="det_nms3_unnormalized")
def det_nms3_unnormalized(paddle, rng):
    """Pixel boxes, normalized=False (+1 on widths), no background class."""
    fn = _nms(paddle, normalized=False, background_label=-1, nms_threshold=0.4, score_threshold=0.3)
    return fn, _nms_inputs(rng, 2, 2, 25, scale=40.0), _DYN


@case("multiclass_nms3", name="det_nms3_one")
def det_nms3_one(paddle, rng):
    """One box above the threshold in the whole batch."""
    boxes, scores = _nms_inputs(rng, 2, 2, 10)
    scores = scores * 0.5
    scores[1, 1, 3] = 0.9
    return _nms(paddle, score_threshold=0.6), [boxes, scores], _DYN


@case("multiclass_nms3", name="det_nms3_none")
def det_nms3_none(paddle, rng):
    """No detections: Out [0, 6], Index [0, 1], NmsRoisNum zeros."""
    return _nms(paddle, score_threshold=0.99), _nms_inputs(rng, 2, 3, 10), _DYN


@case("multiclass_nms3", name="det_nms3_rois_num")
def det_nms3_rois_num(paddle, rng):
    """The [M, C, 4] + [M, C] form with RoisNum (two-stage heads): images of 5 and 9 boxes."""
    boxes = _boxes(rng, 1, 14 * 3, 50.0).reshape(14, 3, 4)
    scores = rng.uniform(0, 1, (14, 3)).astype("float32")
    num = np.array([5, 9], "int32")
    fn = _nms(paddle, rois_num=True, keep_top_k=8, score_threshold=0.2, normalized=False)
    return fn, [boxes, scores, num], [[None, 3, 4], [None, 3], [None]]


@case("multiclass_nms3", name="det_nms3_rois_num_empty_image")
def det_nms3_rois_num_empty_image(paddle, rng):
    """An image with no boxes in the RoisNum form."""
    boxes = _boxes(rng, 1, 6 * 2, 1.0).reshape(6, 2, 4)
    scores = rng.uniform(0, 1, (6, 2)).astype("float32")
    num = np.array([0, 6], "int32")
    fn = _nms(paddle, rois_num=True, background_label=-1)
    return fn, [boxes, scores, num], [[None, 2, 4], [None, 2], [None]]


@case(
    "multiclass_nms3",
    name="det_nms2_legacy",
    formats=("legacy",),
    why="multiclass_nms2 is a legacy-only op (Paddle 3 writes multiclass_nms3)",
)
def det_nms2_legacy(paddle, rng):
    return _nms(paddle, version=2, keep_top_k=5), _nms_inputs(rng, 2, 3, 12), _DYN


@case(
    "multiclass_nms3",
    name="det_nms1_legacy",
    formats=("legacy",),
    why="multiclass_nms is a legacy-only op (Paddle 3 writes multiclass_nms3)",
)
def det_nms1_legacy(paddle, rng):
    return _nms(paddle, version=1, nms_top_k=4), _nms_inputs(rng, 1, 3, 12), _DYN


@case(
    "multiclass_nms3",
    name="det_nms1_legacy_none",
    formats=("legacy",),
    why="multiclass_nms is a legacy-only op (Paddle 3 writes multiclass_nms3)",
)
def det_nms1_legacy_none(paddle, rng):
    """multiclass_nms without Index: zero detections give [[-1]]."""
    return _nms(paddle, version=1, score_threshold=0.999), _nms_inputs(rng, 1, 3, 12), _DYN


# ---------------------------------------------------------------------- yolo_box
def _yolo(paddle, **kw):
    def fn(x, img):
        return paddle.vision.ops.yolo_box(x, img, **kw)

    return fn


def _yolo_inputs(rng, n, anchors, classes, h, w, iou=False):
    ch = anchors * (5 + classes) + (anchors if iou else 0)
    x = rng.standard_normal((n, ch, h, w)).astype("float32")
    img = np.array([[320, 416], [256, 200]][:n], "int32")
    return [x, img]


@case("yolo_box", name="det_yolo_box")
def det_yolo_box(paddle, rng):
    kw = dict(anchors=[10, 13, 16, 30, 33, 23], class_num=3, conf_thresh=0.5, downsample_ratio=32)
    return _yolo(paddle, **kw), _yolo_inputs(rng, 2, 3, 3, 5, 6), [[None, 24, None, None], [None, 2]]


@case("yolo_box", name="det_yolo_box_noclip_scale")
def det_yolo_box_noclip_scale(paddle, rng):
    kw = dict(
        anchors=[30, 61, 62, 45],
        class_num=2,
        conf_thresh=0.3,
        downsample_ratio=16,
        clip_bbox=False,
        scale_x_y=1.05,
    )
    return _yolo(paddle, **kw), _yolo_inputs(rng, 1, 2, 2, 4, 4)


@case("yolo_box", name="det_yolo_box_iou_aware")
def det_yolo_box_iou_aware(paddle, rng):
    kw = dict(
        anchors=[10, 13, 16, 30],
        class_num=2,
        conf_thresh=0.2,
        downsample_ratio=8,
        iou_aware=True,
        iou_aware_factor=0.4,
    )
    return _yolo(paddle, **kw), _yolo_inputs(rng, 2, 2, 2, 3, 5, iou=True)


# ---------------------------------------------------------------------- prior_box
def _prior(paddle, **kw):
    def fn(feat, image):
        return paddle.vision.ops.prior_box(feat, image, **kw)

    return fn


def _prior_inputs(rng, fh, fw, ih, iw):
    return [
        rng.standard_normal((1, 2, fh, fw)).astype("float32"),
        rng.standard_normal((1, 3, ih, iw)).astype("float32"),
    ]


@case("prior_box", name="det_prior_box")
def det_prior_box(paddle, rng):
    kw = dict(min_sizes=[30.0, 60.0], max_sizes=[60.0, 90.0], aspect_ratios=[2.0, 3.0], flip=True, clip=True)
    return (
        _prior(paddle, **kw),
        _prior_inputs(rng, 3, 4, 30, 40),
        [[None, 2, None, None], [None, 3, None, None]],
    )


@case("prior_box", name="det_prior_box_order_steps")
def det_prior_box_order_steps(paddle, rng):
    kw = dict(
        min_sizes=[20.0],
        max_sizes=[50.0],
        aspect_ratios=[1.0, 2.0, 0.5],
        flip=False,
        clip=False,
        steps=[8.0, 10.0],
        offset=0.3,
        min_max_aspect_ratios_order=True,
        variance=[0.1, 0.2, 0.3, 0.4],
    )
    return _prior(paddle, **kw), _prior_inputs(rng, 5, 3, 32, 24)


# ---------------------------------------------------------------------- box_coder
def _coder(paddle, var, **kw):
    def fn(prior, target, *rest):
        v = rest[0] if var == "tensor" else var
        return paddle.vision.ops.box_coder(prior, v, target, **kw)

    return fn


@case("box_coder", name="det_box_coder_decode")
def det_box_coder_decode(paddle, rng):
    prior = _boxes(rng, 1, 6, 1.0)[0]
    target = rng.standard_normal((2, 6, 4)).astype("float32") * 0.5
    return (
        _coder(paddle, [0.1, 0.1, 0.2, 0.2], code_type="decode_center_size"),
        [prior, target],
        [[6, 4], [None, 6, 4]],
    )


@case("box_coder", name="det_box_coder_decode_var_axis1")
def det_box_coder_decode_var_axis1(paddle, rng):
    """Variance tensor, priors per row (axis=1), pixel boxes (box_normalized=False)."""
    prior = _boxes(rng, 1, 3, 50.0)[0]
    target = rng.standard_normal((3, 5, 4)).astype("float32") * 0.5
    var = rng.uniform(0.1, 0.3, (3, 4)).astype("float32")
    fn = _coder(paddle, "tensor", code_type="decode_center_size", axis=1, box_normalized=False)
    return fn, [prior, target, var]


@case("box_coder", name="det_box_coder_encode")
def det_box_coder_encode(paddle, rng):
    prior = _boxes(rng, 1, 5, 1.0)[0]
    target = _boxes(rng, 1, 4, 1.0)[0]
    var = rng.uniform(0.1, 0.3, (5, 4)).astype("float32")
    return _coder(paddle, "tensor", code_type="encode_center_size"), [prior, target, var]


@case("box_coder", name="det_box_coder_encode_attr_var")
def det_box_coder_encode_attr_var(paddle, rng):
    prior = _boxes(rng, 1, 5, 30.0)[0]
    target = _boxes(rng, 1, 3, 30.0)[0]
    fn = _coder(paddle, [0.1, 0.1, 0.2, 0.2], code_type="encode_center_size", box_normalized=False)
    return fn, [prior, target], [[5, 4], [None, 4]]


# ---------------------------------------------------------------------- RoI ops
def _rois(rng, counts, size, scale=1.0):
    r = sum(counts)
    xy = rng.uniform(0, size * 0.7, (r, 2))
    wh = rng.uniform(0.5, size * 0.5, (r, 2))
    return (np.concatenate([xy, xy + wh], 1) * scale).astype("float32"), np.array(counts, "int32")


def _roi_fn(paddle, api, **kw):
    def fn(x, boxes, num):
        return getattr(paddle.vision.ops, api)(x, boxes, num, **kw)

    return fn


_ROI_DYN = [[None, None, None, None], [None, 4], [None]]


# ONNX Runtime 1.32 has no RoiAlign-22 kernel: run up to opset 21 (22+ is still converted and checked).
@case("roi_align", name="det_roi_align", opsets=(11, 17, 21))
def det_roi_align(paddle, rng):
    x = rng.standard_normal((2, 3, 12, 10)).astype("float32")
    boxes, num = _rois(rng, [3, 2], 10.0)
    return _roi_fn(paddle, "roi_align", output_size=(3, 2), aligned=False), [x, boxes, num], _ROI_DYN


@case("roi_align", name="det_roi_align_aligned_scale", opsets=(16, 17, 21))
def det_roi_align_aligned_scale(paddle, rng):
    """aligned (half_pixel, opset 16), spatial_scale 1/4, fixed sampling_ratio, one image with no RoI."""
    x = rng.standard_normal((2, 4, 8, 9)).astype("float32")
    boxes, num = _rois(rng, [0, 4], 36.0)
    fn = _roi_fn(paddle, "roi_align", output_size=4, spatial_scale=0.25, sampling_ratio=2, aligned=True)
    return fn, [x, boxes, num], _ROI_DYN


@case("roi_pool", name="det_roi_pool", opsets=(11, 17, 21))  # no MaxRoiPool-22 kernel in ONNX Runtime 1.32
def det_roi_pool(paddle, rng):
    x = rng.standard_normal((2, 3, 12, 10)).astype("float32")
    boxes, num = _rois(rng, [2, 3], 20.0)
    return _roi_fn(paddle, "roi_pool", output_size=(3, 2), spatial_scale=0.5), [x, boxes, num], _ROI_DYN


@case("psroi_pool", name="det_psroi_pool")
def det_psroi_pool(paddle, rng):
    """2 output channels x 3x2 bins; corners at .5 (C round vs round-half-even), a RoI partly off the map."""
    x = rng.standard_normal((2, 12, 9, 10)).astype("float32")
    boxes, num = _rois(rng, [2, 3], 16.0)
    boxes[0] = [2.5, 3.5, 8.5, 12.5]
    boxes[3] = [10.0, 12.0, 30.0, 26.0]

    def fn(x, boxes, num):
        if _pir(paddle):
            return paddle.vision.ops.psroi_pool(x, boxes, num, output_size=(3, 2), spatial_scale=0.5)
        # Paddle 2.6's static psroi_pool leaves RoisNum out (it would need a LoD input)
        attrs = dict(output_channels=2, pooled_height=3, pooled_width=2, spatial_scale=0.5)
        inputs = {"X": x, "ROIs": boxes, "RoisNum": num}
        return _legacy_op(paddle, "psroi_pool", inputs, {"Out": x.dtype}, attrs)[0]

    return fn, [x, boxes, num], [[None, 12, None, None], [None, 4], [None]]


@case("multiclass_nms3", name="det_nms3_eta_inert")
def det_nms3_eta_inert(paddle, rng):
    """nms_eta < 1 with nms_threshold <= 0.5: Paddle never adapts the threshold, so it converts."""
    return _nms(paddle, nms_eta=0.7, nms_threshold=0.45), _nms_inputs(rng, 1, 2, 15), _DYN


# ---------------------------------------------------------------------- generate_proposals
def _anchors_grid(h, w, sizes, stride):
    """Anchors [H, W, A, 4] (pixels) centred on a stride grid, like anchor_generator's."""
    ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    cx, cy = (xs + 0.5) * stride, (ys + 0.5) * stride
    out = []
    for s in sizes:
        out.append(np.stack([cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2], -1))
    return np.stack(out, 2).astype("float32")


def _proposals(paddle, **kw):
    """generate_proposals; anchors and variances come as one [H, W, A, 8] input (the
    harness wraps at most four inputs)."""

    def fn(scores, deltas, im_shape, anchors_vars):
        anchors, variances = anchors_vars[..., :4], anchors_vars[..., 4:]
        rois, probs, num = paddle.vision.ops.generate_proposals(
            scores, deltas, im_shape, anchors, variances, return_rois_num=True, **kw
        )
        # The count goes out as it is: Paddle declares it float32 (PIR) or 0-D (2.6) though its
        # kernel gives int32 [N]; the converter corrects the declaration.
        return rois, probs, num

    return fn


def _proposal_inputs(rng, n, a, h, w, stride=8.0):
    scores = rng.uniform(0, 1, (n, a, h, w)).astype("float32")
    deltas = (rng.standard_normal((n, 4 * a, h, w)) * 0.3).astype("float32")
    im_shape = np.array([[h * stride, w * stride], [h * stride - 10, w * stride - 6]][:n], "float32")
    anchors = _anchors_grid(h, w, [8.0 * (2**i) for i in range(a)], stride)
    variances = np.tile(np.array([0.1, 0.1, 0.2, 0.2], "float32"), (h, w, a, 1))
    return [scores, deltas, im_shape, np.concatenate([anchors, variances], -1)]


_PROP_DYN = [[None, 3, None, None], [None, 12, None, None], [None, 2], [None, None, 3, 8]]


@case("generate_proposals", name="det_generate_proposals")
def det_generate_proposals(paddle, rng):
    fn = _proposals(
        paddle, pre_nms_top_n=40, post_nms_top_n=12, nms_thresh=0.6, min_size=2.0, pixel_offset=False
    )
    return fn, _proposal_inputs(rng, 2, 3, 5, 6), _PROP_DYN


@case("generate_proposals", name="det_generate_proposals_pixel_offset")
def det_generate_proposals_pixel_offset(paddle, rng):
    fn = _proposals(
        paddle, pre_nms_top_n=-1, post_nms_top_n=30, nms_thresh=0.5, min_size=0.1, pixel_offset=True
    )
    return fn, _proposal_inputs(rng, 1, 3, 4, 4), _PROP_DYN


@case("generate_proposals", name="det_generate_proposals_empty_image")
def det_generate_proposals_empty_image(paddle, rng):
    """Image 1 is too small for any box (min_size): Paddle gives it one zero box."""
    inputs = _proposal_inputs(rng, 2, 3, 4, 5)
    inputs[2][1] = [3.0, 3.0]
    fn = _proposals(
        paddle, pre_nms_top_n=30, post_nms_top_n=10, nms_thresh=0.7, min_size=4.0, pixel_offset=False
    )
    return fn, inputs, _PROP_DYN


@case("generate_proposals", name="det_generate_proposals_no_nms")
def det_generate_proposals_no_nms(paddle, rng):
    """nms_thresh 0: no NMS and no post_nms_top_n cut. (With a pre_nms_top_n cut Paddle returns
    the boxes in std::nth_element's order, which no other implementation reproduces.)"""
    fn = _proposals(
        paddle, pre_nms_top_n=-1, post_nms_top_n=5, nms_thresh=0.0, min_size=1.0, pixel_offset=True
    )
    return fn, _proposal_inputs(rng, 2, 3, 3, 4), _PROP_DYN


# ---------------------------------------------------------------------- FPN proposals
def _fpn_rois(rng, counts):
    """RoIs of sizes from 8 to 400 pixels, so they spread over the FPN levels."""
    r = sum(counts)
    size = np.exp(rng.uniform(np.log(8), np.log(400), (r, 1)))
    xy = rng.uniform(0, 300, (r, 2))
    aspect = rng.uniform(0.5, 2.0, (r, 1))
    wh = np.concatenate([size * aspect, size / aspect], 1)
    return np.concatenate([xy, xy + wh], 1).astype("float32"), np.array(counts, "int32")


def _distribute(paddle, **kw):
    def fn(rois, num):
        multi_rois, restore, multi_num = paddle.vision.ops.distribute_fpn_proposals(rois, rois_num=num, **kw)
        return (*multi_rois, restore, *multi_num)

    return fn


@case("distribute_fpn_proposals", name="det_distribute_fpn")
def det_distribute_fpn(paddle, rng):
    rois, num = _fpn_rois(rng, [9, 14])
    fn = _distribute(paddle, min_level=2, max_level=5, refer_level=4, refer_scale=224)
    return fn, [rois, num], [[None, 4], [None]]


@case("distribute_fpn_proposals", name="det_distribute_fpn_pixel_offset")
def det_distribute_fpn_pixel_offset(paddle, rng):
    """pixel_offset (+1 sizes), three levels, one image (Paddle fails on an image without RoIs)."""
    rois, num = _fpn_rois(rng, [11])
    fn = _distribute(paddle, min_level=3, max_level=5, refer_level=4, refer_scale=112, pixel_offset=True)
    return fn, [rois, num], [[None, 4], [None]]


def _collect(paddle, sections, post_n):
    """collect_fpn_proposals over len(sections) levels, cut from one RoI, one score and one
    count input (the harness wraps at most four inputs)."""

    def fn(rois, scores, nums):
        level_rois = paddle.split(rois, sections, axis=0)
        level_scores = paddle.split(scores, sections, axis=0)
        level_nums = [paddle.reshape(n, [-1]) for n in paddle.split(nums, len(sections), axis=0)]
        if _pir(paddle):
            return paddle._C_ops.collect_fpn_proposals(level_rois, level_scores, level_nums, post_n)
        inputs = {
            "MultiLevelRois": level_rois,
            "MultiLevelScores": level_scores,
            "MultiLevelRoIsNum": level_nums,
        }
        return _legacy_op(
            paddle,
            "collect_fpn_proposals",
            inputs,
            {"FpnRois": rois.dtype, "RoisNum": "int32"},
            {"post_nms_topN": post_n},
        )

    return fn


def _collect_inputs(rng, per_level):
    """per_level: RoI counts per image for each level."""
    counts = np.array(per_level, "int32")
    rois, _ = _fpn_rois(rng, [int(counts.sum())])
    scores = rng.permutation(np.linspace(0.01, 0.99, len(rois))).astype("float32").reshape(-1, 1)  # no ties
    return [rois, scores, counts], [int(c) for c in counts.sum(1)]


@case("collect_fpn_proposals", name="det_collect_fpn")
def det_collect_fpn(paddle, rng):
    inputs, sections = _collect_inputs(rng, [[4, 3], [2, 5], [3, 1]])
    return _collect(paddle, sections, 10), inputs


@case("collect_fpn_proposals", name="det_collect_fpn_keep_all")
def det_collect_fpn_keep_all(paddle, rng):
    """post_nms_topn above the number of RoIs: all kept, grouped by image."""
    inputs, sections = _collect_inputs(rng, [[2, 3], [4, 1]])
    return _collect(paddle, sections, 100), inputs


# ---------------------------------------------------------------------- matrix_nms
def _matrix_nms(paddle, **kw):
    def fn(boxes, scores):
        out, num, index = paddle.vision.ops.matrix_nms(
            boxes, scores, return_index=True, return_rois_num=True, **kw
        )
        return out, index, num

    return fn


@case("matrix_nms", name="det_matrix_nms")
def det_matrix_nms(paddle, rng):
    fn = _matrix_nms(paddle, score_threshold=0.1, post_threshold=0.2, nms_top_k=12, keep_top_k=10)
    return fn, _nms_inputs(rng, 2, 3, 16), _DYN


@case("matrix_nms", name="det_matrix_nms_gaussian")
def det_matrix_nms_gaussian(paddle, rng):
    """Gaussian decay, pixel boxes (normalized=False), no background class, no top-k cuts."""
    fn = _matrix_nms(
        paddle,
        score_threshold=0.2,
        post_threshold=0.1,
        nms_top_k=-1,
        keep_top_k=-1,
        use_gaussian=True,
        gaussian_sigma=2.0,
        background_label=-1,
        normalized=False,
    )
    return fn, _nms_inputs(rng, 1, 2, 12, scale=40.0), _DYN


@case("matrix_nms", name="det_matrix_nms_none")
def det_matrix_nms_none(paddle, rng):
    fn = _matrix_nms(paddle, score_threshold=0.995, post_threshold=0.0, nms_top_k=10, keep_top_k=5)
    return fn, _nms_inputs(rng, 2, 2, 10), _DYN


# PP-YOLO's MatrixNMS settings (PaddleDetection configs/ppyolo): every candidate of a class is
# compared (nms_top_k=-1), pixel boxes, no background class, the best 100 per image kept.
PPYOLO_MATRIX_NMS = dict(score_threshold=0.01, post_threshold=0.01, nms_top_k=-1, keep_top_k=100,
                         background_label=-1, normalized=False)


def matrix_nms_ppyolo_inputs(rng, n_classes=80, n_boxes=16128):
    """YOLO-like output of a 512x512 image (3 x (16^2 + 32^2 + 64^2) = 16128 boxes, 80 classes):
    pixel boxes, scores mostly below the threshold, ~1% of them above."""
    xy = rng.uniform(0, 480, (1, n_boxes, 2))
    wh = rng.uniform(8, 120, (1, n_boxes, 2))
    boxes = np.concatenate([xy, np.minimum(xy + wh, 511)], -1).astype("float32")
    low = rng.uniform(0, 0.01, (1, n_classes, n_boxes))
    high = rng.uniform(0.01, 1.0, (1, n_classes, n_boxes))
    scores = np.where(rng.random((1, n_classes, n_boxes)) < 0.01, high, low).astype("float32")
    return [boxes, scores]


@case("matrix_nms", name="det_matrix_nms_ppyolo")
def det_matrix_nms_ppyolo(paddle, rng):
    """PP-YOLO's settings on a 512x512 image's 16128 boxes x 80 classes: the old graph's pairwise
    IoU over all boxes ([1, 80, 16128, 16128] float32: 83 GB) could not run; only the ~160
    candidates per class are compared (tests/ops/test_matrix_nms_memory.py measures it)."""
    return _matrix_nms(paddle, **PPYOLO_MATRIX_NMS), matrix_nms_ppyolo_inputs(rng), _DYN


@case("matrix_nms", name="det_matrix_nms_dense")
def det_matrix_nms_dense(paddle, rng):
    """Every box a candidate of every class (2 images x 3 classes x 1500 boxes, no top-k cut):
    the decay loop takes many steps, each comparing a block of candidates with those of their
    class before them; duplicate boxes (IoU 1: a linear decay of 0/0) and tied scores."""
    boxes, scores = _nms_inputs(rng, 2, 3, 1500, scale=300.0)
    boxes[:, 10] = boxes[:, 4]  # the same box twice
    scores[:, :, 20] = scores[:, :, 21]  # equal scores in a class
    scores = np.maximum(scores, 0.02)
    fn = _matrix_nms(paddle, score_threshold=0.01, post_threshold=0.01, nms_top_k=-1, keep_top_k=500,
                     background_label=-1, normalized=False)
    return fn, [boxes, scores], _DYN


@case("matrix_nms", name="det_matrix_nms_dense_gaussian")
def det_matrix_nms_dense_gaussian(paddle, rng):
    """Gaussian decay, normalized boxes, background class 1, nms_top_k cutting at 400 of the
    candidates above the threshold, float64 (the kernel's other dtype, computed in it)."""
    boxes, scores = _nms_inputs(rng, 2, 3, 900)
    fn = _matrix_nms(paddle, score_threshold=0.1, post_threshold=0.05, nms_top_k=400, keep_top_k=-1,
                     use_gaussian=True, gaussian_sigma=3.0, background_label=1)
    return fn, [boxes.astype("float64"), scores.astype("float64")], _DYN


# ---------------------------------------------------------------------- anchor_generator
def _anchor_gen(paddle, **attrs):
    def fn(x):
        if _pir(paddle):
            a = attrs
            return paddle._C_ops.anchor_generator(
                x, a["anchor_sizes"], a["aspect_ratios"], a["variances"], a["stride"], a["offset"]
            )
        return _legacy_op(
            paddle, "anchor_generator", {"Input": x}, {"Anchors": x.dtype, "Variances": x.dtype}, attrs
        )

    return fn


@case("anchor_generator", name="det_anchor_generator")
def det_anchor_generator(paddle, rng):
    attrs = dict(
        anchor_sizes=[32.0, 64.0],
        aspect_ratios=[0.5, 1.0, 2.0],
        variances=[0.1, 0.1, 0.2, 0.2],
        stride=[16.0, 16.0],
        offset=0.5,
    )
    return (
        _anchor_gen(paddle, **attrs),
        [rng.standard_normal((1, 2, 3, 5)).astype("float32")],
        [[None, 2, None, None]],
    )


@case("anchor_generator", name="det_anchor_generator_odd")
def det_anchor_generator_odd(paddle, rng):
    """Unequal strides, offset 0, ratios whose base sizes round."""
    attrs = dict(
        anchor_sizes=[20.0],
        aspect_ratios=[0.3, 1.7],
        variances=[1.0, 1.0, 1.0, 1.0],
        stride=[8.0, 12.0],
        offset=0.0,
    )
    return _anchor_gen(paddle, **attrs), [rng.standard_normal((2, 1, 4, 3)).astype("float32")]


# ---------------------------------------------------------------------- legacy-only ops
_LEGACY_ONLY = "Paddle 3 has no PIR form of this op (it is written only by Paddle 2.x)"


def _legacy_only_op(paddle, op_type, inputs, outputs, attrs):
    def fn(*xs):
        named = {slot: xs[i] for i, slot in enumerate(inputs)}
        outs = _legacy_op(paddle, op_type, named, {o: xs[0].dtype for o in outputs}, attrs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    return fn


@case("iou_similarity", name="det_iou_similarity", formats=("legacy",), why=_LEGACY_ONLY)
def det_iou_similarity(paddle, rng):
    x, y = _boxes(rng, 1, 5)[0], _boxes(rng, 1, 7)[0]
    return _legacy_only_op(paddle, "iou_similarity", ["X", "Y"], ["Out"], {"box_normalized": True}), [x, y]


@case("iou_similarity", name="det_iou_similarity_pixels", formats=("legacy",), why=_LEGACY_ONLY)
def det_iou_similarity_pixels(paddle, rng):
    x, y = _boxes(rng, 1, 4, 30.0)[0], _boxes(rng, 1, 6, 30.0)[0]
    fn = _legacy_only_op(paddle, "iou_similarity", ["X", "Y"], ["Out"], {"box_normalized": False})
    return fn, [x, y], [[None, 4], [None, 4]]


def _density_attrs(**kw):
    attrs = dict(
        variances=[0.1, 0.1, 0.2, 0.2],
        clip=False,
        flatten_to_2d=False,
        step_w=0.0,
        step_h=0.0,
        offset=0.5,
        fixed_sizes=[16.0, 32.0],
        fixed_ratios=[1.0, 2.0],
        densities=[2, 1],
    )
    attrs.update(kw)
    return attrs


@case("density_prior_box", name="det_density_prior_box", formats=("legacy",), why=_LEGACY_ONLY)
def det_density_prior_box(paddle, rng):
    fn = _legacy_only_op(
        paddle, "density_prior_box", ["Input", "Image"], ["Boxes", "Variances"], _density_attrs()
    )
    inputs = [
        rng.standard_normal((1, 2, 4, 5)).astype("float32"),
        rng.standard_normal((1, 3, 40, 48)).astype("float32"),
    ]
    return fn, inputs, [[None, 2, None, None], [None, 3, None, None]]


@case("density_prior_box", name="det_density_prior_box_flat_clip", formats=("legacy",), why=_LEGACY_ONLY)
def det_density_prior_box_flat_clip(paddle, rng):
    attrs = _density_attrs(
        clip=True, flatten_to_2d=True, step_w=8.0, step_h=10.0, offset=0.3, densities=[3, 2]
    )
    fn = _legacy_only_op(paddle, "density_prior_box", ["Input", "Image"], ["Boxes", "Variances"], attrs)
    inputs = [
        rng.standard_normal((1, 2, 3, 3)).astype("float32"),
        rng.standard_normal((1, 3, 24, 30)).astype("float32"),
    ]
    return fn, inputs


@case("multiclass_nms3", name="det_nms3_score_at_threshold")
def det_nms3_score_at_threshold(paddle, rng):
    """Scores in quarters with score_threshold 0.5: a score equal to the threshold is dropped
    (Paddle keeps score > threshold, as ONNX NonMaxSuppression)."""
    fn = _nms(paddle, score_threshold=0.5, nms_threshold=0.5, keep_top_k=20)
    return fn, _nms_inputs(rng, 2, 2, 12, ties=True), _DYN


@case("multiclass_nms3", name="det_nms3_float64")
def det_nms3_float64(paddle, rng):
    """float64 boxes and scores (ONNX NMS takes float32: the values are cast for it only)."""
    boxes, scores = _nms_inputs(rng, 1, 2, 10)
    return _nms(paddle, keep_top_k=6), [boxes.astype("float64"), scores.astype("float64")], _DYN


@case(
    "box_clip",
    name="det_box_clip",
    formats=("legacy",),
    custom=True,
    why="box_clip needs a LoD input, which only legacy programs (run by the executor) give it",
)
def det_box_clip(paddle, rng, out_dir):
    """Boxes partly outside the image; im_info h 100.5 rounds to 101 in C where ONNX's Round
    would give 100. Paddle's reference: the executor with a one-image LoD."""
    import os

    from harness.static import static_program

    boxes = rng.uniform(-20, 140, (7, 4)).astype("float32")
    im_info = np.array([[100.5, 183.0, 1.0]], "float32")

    def build(paddle):
        x = paddle.static.data("x", [None, 4], "float32", lod_level=1)
        im = paddle.static.data("im", [None, 3], "float32")
        (out,) = _legacy_op(paddle, "box_clip", {"Input": x, "ImInfo": im}, {"Output": "float32"}, {})
        return [x, im], [out]

    with static_program(paddle, build) as (main, exe, (feeds, fetches)):
        paddle.static.save_inference_model(os.path.join(out_dir, "model"), feeds, fetches, exe, program=main)
        lod_boxes = paddle.base.core.LoDTensor()
        lod_boxes.set(boxes, paddle.CPUPlace())
        lod_boxes.set_recursive_sequence_lengths([[boxes.shape[0]]])
        (out,) = exe.run(main, feed={"x": lod_boxes, "im": im_info}, fetch_list=fetches, return_numpy=False)
    return {
        "model": "model.pdmodel",
        "inputs": [boxes, im_info],
        "outputs": [np.array(out)],
        "load": ("model", {}),
    }
