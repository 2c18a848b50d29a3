"""Detection post-processing: multiclass NMS, YOLO box decoding, priors, box coding.

Paddle's detection kernels return variable-length results (the kept boxes of every image
stacked, plus a count per image). Everything here is built from shapes read at run time,
so a graph works for any batch size and any number of detections, zero included.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext
from pd2onnx.convert.ops._sort_util import stable_order, stable_top_k, top_k_mask
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle import dtypes
from pd2onnx.paddle.program import Op

F32 = np.float32
_INT64_BIG = 2**62


# ---------------------------------------------------------------------- small helpers
def _dim(ctx: OpContext, x: ir.Value, axis: int) -> ir.Value:
    """Shape(x)[axis] as an int64 1-D tensor of length 1."""
    return ctx.shape_of(x, axis, axis + 1)


def _scalar_i64(ctx: OpContext, v: ir.Value) -> ir.Value:
    return ctx.reshape(v, [])


def _arange(ctx: OpContext, n: ir.Value) -> ir.Value:
    """int64 ``[0, 1, ..., n-1]`` for ``n`` an int64 tensor of one element."""
    return ctx.op.Range(ctx.const(np.int64(0)), _scalar_i64(ctx, n), ctx.const(np.int64(1)))


def _min_i64(ctx: OpContext, a: ir.Value, b: ir.Value) -> ir.Value:
    """Elementwise minimum of int64 values (Min has no integer kernels before opset 12)."""
    return ctx.op.Where(ctx.op.Less(a, b), a, b)


def _max_i64(ctx: OpContext, a: ir.Value, b: ir.Value) -> ir.Value:
    return ctx.op.Where(ctx.op.Greater(a, b), a, b)


def _stable_sort(ctx: OpContext, perm: ir.Value, key: ir.Value, descending: bool, n: ir.Value) -> ir.Value:
    """Reorder ``perm`` (positions) by ``key[perm]``, keeping the current order among equal keys
    (``stable_order``: OpenVINO's TopK does not keep the ONNX tie rule)."""
    order = stable_order(ctx, ctx.op.Gather(key, perm, axis=0), n, descending)
    return ctx.op.Gather(perm, order, axis=0)


def _counts_per_image(ctx: OpContext, batch_ids: ir.Value, n_images: ir.Value) -> ir.Value:
    """int64 [N]: how many entries of ``batch_ids`` (int64 [K]) name each image."""
    images = _arange(ctx, n_images)
    hits = ctx.op.Equal(ctx.unsqueeze(batch_ids, [1]), ctx.unsqueeze(images, [0]))
    return ctx.reduce("ReduceSum", ctx.cast(hits, "int64"), [0], keepdims=False)


# ---------------------------------------------------------------------- multiclass_nms3
def _check_eta(ctx: OpContext, eta: float, threshold: float, name: str) -> None:
    """Paddle's adaptive NMS multiplies the IoU threshold by ``eta`` after each kept box while
    the threshold is above 0.5; ONNX NonMaxSuppression has one fixed threshold."""
    if eta < 1.0 and threshold > 0.5:
        raise ctx.fail(
            f"{name}={eta} with an IoU threshold of {threshold}: a threshold that shrinks after every "
            "kept box (adaptive NMS) has no ONNX equivalent",
            hint=f"export the model with {name}=1.0 (PaddleDetection's default) or a threshold <= 0.5",
        )


# NonMaxSuppression is opset 10, but the sorting around it needs TopK-11 (ascending order,
# integer keys) and CumSum/Range (11).
@mapper("multiclass_nms3", min_opset=11)
def multiclass_nms3(ctx: OpContext) -> None:
    """Per-class NMS as Paddle's ``multiclass_nms3`` (and legacy ``multiclass_nms``/``_nms2``).

    ONNX NonMaxSuppression does the suppression; everything around it follows Paddle's CPU
    kernel:

    - candidates are the boxes with score > ``score_threshold``; ``nms_top_k`` keeps the
      best ``nms_top_k`` of them per class *before* suppression (ONNX's
      ``max_output_boxes_per_class`` limits the boxes kept *after* it): emulated by masking
      scores outside each class's TopK (ties to the lower box index, as Paddle's stable sort);
    - ``background_label`` is left out by masking its scores;
    - ``normalized=False``: Paddle adds 1 to widths and heights (in intersections and
      areas); that is exactly the IoU of the boxes with x2, y2 moved by +1, which is what
      ONNX is given;
    - output order: images in turn, labels ascending, then (``[N, C, M]`` scores) score
      descending with ties to the lower box index, or (``[M, C]`` scores with ``RoisNum``)
      box index ascending; made explicit with stable sorts whatever order the runtime's NMS
      returns;
    - ``keep_top_k``: per image the best ``keep_top_k`` by score, ties to the lower label,
      then the earlier box in the label's order;
    - ``Index`` (int32, ``[K, 1]``) is ``image * M + box`` (``[N, C, M]`` scores) or
      ``(first row of the image + box) * C + label`` (``RoisNum`` form); ``NmsRoisNum`` is
      int32 ``[N]``;
    - zero detections: ``Out`` is ``[0, 6]`` when the op has an ``Index`` output, else
      (legacy ``multiclass_nms``) Paddle's ``[[-1]]``.

    float64 inputs: NMS compares float32 copies (ONNX NonMaxSuppression is float32 only);
    the output rows are gathered from the float64 inputs.

    Not expressible: ``nms_eta`` < 1 with ``nms_threshold`` > 0.5 (the IoU threshold then
    shrinks after each kept box; at 0.5 or below Paddle never changes it) and polygon boxes
    (8+ coordinates): refused.
    """
    _check_eta(ctx, float(ctx.attr("nms_eta", 1.0)), float(ctx.attr("nms_threshold", 0.3)), "nms_eta")
    box_shape = ctx.input_shape("bboxes")
    if box_shape and box_shape[-1] not in (-1, 4):
        raise ctx.fail(f"boxes with {box_shape[-1]} coordinates (polygons) are not supported; only 4")
    dtype = ctx.input_dtype("scores")
    score_rank = ctx.input_rank("scores")
    score_thr = float(ctx.attr("score_threshold", 0.05))
    nms_top_k = int(ctx.attr("nms_top_k", -1))
    keep_top_k = int(ctx.attr("keep_top_k", -1))
    iou_thr = float(ctx.attr("nms_threshold", 0.3))
    normalized = bool(ctx.attr("normalized", True))
    background = int(ctx.attr("background_label", 0))

    boxes = src_boxes = ctx.input("bboxes")
    scores = src_scores = ctx.input("scores")
    if dtype != "float32":  # NonMaxSuppression takes float32; outputs are gathered from the inputs
        boxes = ctx.cast(boxes, "float32")
        scores = ctx.cast(scores, "float32")
    neg_inf = ctx.const(np.array(-np.inf, F32))
    one = ctx.const_i64([1])
    zero = ctx.const_i64([0])

    if score_rank == 3:
        # boxes [N, M, 4] shared by the classes; scores [N, C, M]
        n_img = _dim(ctx, scores, 0)
        n_cls = _dim(ctx, scores, 1)
        n_box = _dim(ctx, scores, 2)
        per_class = scores
        nms_boxes = boxes
        starts = None
        src_per_class, src_nms_boxes = src_scores, src_boxes
    elif score_rank == 2:
        # boxes [R, C, 4] per class; scores [R, C]; RoisNum [N] splits the rows into images.
        n_rows = _dim(ctx, scores, 0)
        n_cls = _dim(ctx, scores, 1)
        if ctx.has_input("rois_num"):
            counts = ctx.cast(ctx.reshape(ctx.input("rois_num"), [-1]), "int64", ctx.input_dtype("rois_num"))
        else:
            counts = n_rows  # one image
        n_img = _dim(ctx, counts, 0)
        starts = ctx.op.CumSum(counts, ctx.const(np.int64(0)), exclusive=1)
        n_box = ctx.reduce("ReduceMax", ctx.op.Concat(counts, zero, axis=0), [0], keepdims=True)
        col = _arange(ctx, n_box)
        col = ctx.unsqueeze(col, [0])  # [1, Mmax]
        valid = ctx.op.Less(col, ctx.unsqueeze(counts, [1]))  # [N, Mmax]
        rows = ctx.op.Where(valid, ctx.op.Add(ctx.unsqueeze(starts, [1]), col), ctx.const(np.int64(0)))
        padded_scores = ctx.op.Gather(scores, rows, axis=0)  # [N, Mmax, C]
        padded_scores = ctx.op.Where(ctx.unsqueeze(valid, [2]), padded_scores, neg_inf)
        per_class = ctx.op.Transpose(padded_scores, perm=[0, 2, 1])  # [N, C, Mmax]
        padded_boxes = ctx.op.Gather(boxes, rows, axis=0)  # [N, Mmax, C, 4]
        nms_boxes = ctx.op.Transpose(padded_boxes, perm=[0, 2, 1, 3])  # [N, C, Mmax, 4]
        if dtype != "float32":
            src_per_class = ctx.op.Transpose(ctx.op.Gather(src_scores, rows, axis=0), perm=[0, 2, 1])
            src_nms_boxes = ctx.op.Transpose(ctx.op.Gather(src_boxes, rows, axis=0), perm=[0, 2, 1, 3])
        else:
            src_per_class, src_nms_boxes = per_class, nms_boxes
    else:
        raise ctx.fail(f"scores of rank {score_rank}; Paddle takes [N, C, M] or [M, C]")

    # Candidates: background class out, then each class's nms_top_k best.
    masked = per_class
    if background >= 0:
        labels = _arange(ctx, n_cls)
        is_bg = ctx.reshape(ctx.op.Equal(labels, ctx.const(np.int64(background))), [1, -1, 1])
        masked = ctx.op.Where(is_bg, neg_inf, masked)
    if nms_top_k > -1:
        k = _min_i64(ctx, ctx.const_i64([nms_top_k]), n_box)
        masked = ctx.op.Where(top_k_mask(ctx, masked, k, 2), masked, neg_inf)

    if score_rank == 3:
        onnx_boxes = nms_boxes
        onnx_scores = masked
    else:
        # [N*C, Mmax, 4] / [N*C, 1, Mmax] without a -1 beside a runtime size that may be 0 (an
        # image without boxes): OpenVINO cannot infer -1 there
        onnx_boxes = ctx.reshape(ctx.op.Flatten(nms_boxes, axis=2), [0, -1, 4])
        onnx_scores = ctx.unsqueeze(ctx.op.Flatten(masked, axis=2), [1])
    if not normalized:
        onnx_boxes = ctx.op.Add(onnx_boxes, ctx.const(np.array([0, 0, 1, 1], F32)))
    max_out = ctx.const_i64([nms_top_k if nms_top_k > -1 else _INT64_BIG])
    selected = ctx.op.NonMaxSuppression(
        onnx_boxes,
        onnx_scores,
        max_out,
        ctx.const(np.array([min(max(iou_thr, 0.0), 1.0)], F32)),
        ctx.const(np.array([score_thr], F32)),
        center_point_box=0,
    )  # [K, 3] (batch, class, box)
    n_sel = _dim(ctx, selected, 0)
    col0, col1, col2 = ctx.split(selected, [1, 1, 1], axis=1)
    if score_rank == 3:
        img = ctx.reshape(col0, [-1])
        label = ctx.reshape(col1, [-1])
    else:
        flat = ctx.reshape(col0, [-1])
        n_cls_s = ctx.reshape(n_cls, [])
        img = ctx.op.Div(flat, n_cls_s)
        label = ctx.op.Mod(flat, n_cls_s)
    box = ctx.reshape(col2, [-1])
    ibl = ctx.op.Concat(*(ctx.unsqueeze(v, [1]) for v in (img, label, box)), axis=1)  # [K, 3]
    score = ctx.op.GatherND(src_per_class, ibl)  # [K]

    # Paddle's order: image, label, then score (ties: box) or box. keep_top_k first keeps each
    # image's best scores (ties: that order), so the score sort runs on the kept ones only:
    # the sorts' keys stay small (OpenVINO computes int64 in int32).
    perm = _arange(ctx, n_sel)
    group = ctx.op.Add(ctx.op.Mul(img, ctx.reshape(n_cls, [])), label)
    perm = _stable_sort(ctx, perm, box, False, n_sel)
    perm = _stable_sort(ctx, perm, group, False, n_sel)  # image, label, box

    if keep_top_k > -1:
        img_in_order = ctx.op.Gather(img, perm, axis=0)
        mine = ctx.op.Equal(ctx.unsqueeze(_arange(ctx, n_img), [1]), ctx.unsqueeze(img_in_order, [0]))  # [N, K]
        scores = ctx.op.Where(mine, ctx.unsqueeze(ctx.op.Gather(score, perm, axis=0), [0]), ctx.const(-np.inf, dtype))
        best = top_k_mask(ctx, scores, _min_i64(ctx, ctx.const_i64([keep_top_k]), n_sel), 1)
        keep = ctx.reduce("ReduceMax", ctx.cast(ctx.op.And(best, mine), "int32", "bool"), [0], keepdims=False)
        perm = ctx.op.Compress(perm, ctx.cast(keep, "bool", "int32"), axis=0)
    if score_rank == 3:
        n_kept = _dim(ctx, perm, 0)
        perm = _stable_sort(ctx, perm, score, True, n_kept)
        perm = _stable_sort(ctx, perm, group, False, n_kept)

    ibl = ctx.op.Gather(ibl, perm, axis=0)
    img, label, box = (ctx.reshape(v, [-1]) for v in ctx.split(ibl, [1, 1, 1], axis=1))
    score = ctx.op.GatherND(src_per_class, ibl)
    if score_rank == 3:
        coords = ctx.op.GatherND(
            src_nms_boxes, ctx.op.Concat(ctx.unsqueeze(img, [1]), ctx.unsqueeze(box, [1]), axis=1)
        )
        index = ctx.op.Add(ctx.op.Mul(img, ctx.reshape(n_box, [])), box)
    else:
        coords = ctx.op.GatherND(src_nms_boxes, ibl)
        row = ctx.op.Add(ctx.op.Gather(starts, img, axis=0), box)
        index = ctx.op.Add(ctx.op.Mul(row, ctx.reshape(n_cls, [])), label)
    out = ctx.op.Concat(
        ctx.unsqueeze(ctx.cast(label, dtype), [1]), ctx.unsqueeze(score, [1]), coords, axis=1
    )  # [K, 6]
    if not ctx.has_output("index"):
        # Legacy multiclass_nms: no detections give [[-1]] (shape [1, 1]).
        n_out = _dim(ctx, out, 0)
        empty = ctx.op.Equal(n_out, zero)
        flat = ctx.op.Concat(
            ctx.reshape(out, [-1]), ctx.const(np.array([-1], dtypes.to_numpy(dtype))), axis=0
        )
        rows = _max_i64(ctx, n_out, one)
        cols = ctx.op.Where(empty, one, ctx.const_i64([6]))
        out = ctx.op.Reshape(
            ctx.slice(flat, zero, ctx.op.Mul(rows, cols), [0]), ctx.op.Concat(rows, cols, axis=0)
        )
    ctx.set_output("out", out)
    ctx.set_output("index", ctx.cast(ctx.unsqueeze(index, [1]), "int32"))
    if ctx.has_output("nms_rois_num"):
        ctx.set_output("nms_rois_num", ctx.cast(_counts_per_image(ctx, img, n_img), "int32"))


# ---------------------------------------------------------------------- yolo_box
def _f32(ctx: OpContext, value: float) -> ir.Value:
    return ctx.const(np.array(value, F32))


@mapper("yolo_box", min_opset=11)
def yolo_box(ctx: OpContext) -> None:
    """YOLOv3 box decoding as Paddle's ``yolo_box`` kernel.

    ``x`` is ``[N, A*(5+C), H, W]`` (with ``iou_aware``: A IoU channels first). Per cell and
    anchor: ``conf = sigmoid(obj)`` (``iou_aware``: ``conf^(1-f) * sigmoid(iou)^f``); cells
    with ``conf < conf_thresh`` give zero boxes and scores, as Paddle's kernel leaves them.
    Centers ``(grid + sigmoid(t) * scale_x_y + bias) * img / grid_size``, sizes
    ``exp(t) * anchor * img / (downsample_ratio * grid_size)``, in Paddle's order of float
    operations; ``clip_bbox`` clamps to ``[0, img - 1]``. Outputs ``[N, A*H*W, 4]`` and
    ``[N, A*H*W, C]``, anchor-major like Paddle. Sizes are read at run time. Computed in
    ``x``'s dtype (float32 or float64, the kernel's two), as the kernel does; both outputs
    have that dtype (Paddle 3.3 declares float32 scores for float64 ``x``: corrected).
    """
    anchors = [int(a) for a in ctx.attr("anchors", [])]
    n_anchor = len(anchors) // 2
    n_class = int(ctx.attr("class_num", 1))
    thresh = float(ctx.attr("conf_thresh", 0.01))
    ratio = int(ctx.attr("downsample_ratio", 32))
    clip = bool(ctx.attr("clip_bbox", True))
    scale = float(ctx.attr("scale_x_y", 1.0))
    bias = float(np.float32(-0.5) * (np.float32(scale) - np.float32(1.0)))  # a float in the kernel
    iou_aware = bool(ctx.attr("iou_aware", False))
    factor = float(ctx.attr("iou_aware_factor", 0.5))
    dtype = ctx.input_dtype("x")
    if n_anchor == 0:
        raise ctx.fail("the anchors attribute is empty")
    np_dtype = dtypes.to_numpy(dtype)

    def c(value) -> ir.Value:
        return ctx.const(np.asarray(value, np_dtype))

    x = ctx.input("x")
    shape = ctx.op.Shape(x)
    h = ctx.slice(shape, [2], [3], [0])
    w = ctx.slice(shape, [3], [4], [0])
    if iou_aware:
        iou_part = ctx.slice(x, [0], [n_anchor], [1])  # [N, A, H, W]
        x = ctx.slice(x, [n_anchor], [_INT64_BIG], [1])
    parts = ctx.op.Reshape(x, ctx.op.Concat(ctx.const_i64([0, n_anchor, 5 + n_class]), h, w, axis=0))
    tx, ty, tw, th, obj, cls = ctx.split(parts, [1, 1, 1, 1, 1, n_class], axis=2)  # [N, A, k, H, W]

    conf = ctx.op.Sigmoid(obj)
    if iou_aware:
        iou = ctx.op.Sigmoid(ctx.unsqueeze(iou_part, [2]))
        # static_cast<T>(1. - factor): the exponents are rounded to x's dtype
        conf = ctx.op.Mul(ctx.op.Pow(conf, c(1.0 - factor)), ctx.op.Pow(iou, c(factor)))
    keep = ctx.op.Not(ctx.op.Less(conf, c(thresh)))

    img = ctx.cast(ctx.input("img_size"), dtype, ctx.input_dtype("img_size"))  # [N, 2] (h, w)
    img_h = ctx.reshape(ctx.slice(img, [0], [1], [1]), [-1, 1, 1, 1, 1])
    img_w = ctx.reshape(ctx.slice(img, [1], [2], [1]), [-1, 1, 1, 1, 1])
    h_f = ctx.cast(h, dtype)
    w_f = ctx.cast(w, dtype)
    in_h = ctx.cast(ctx.op.Mul(h, ctx.const_i64([ratio])), dtype)
    in_w = ctx.cast(ctx.op.Mul(w, ctx.const_i64([ratio])), dtype)
    zero, one = c(0.0), c(1.0)
    grid_x = ctx.reshape(ctx.op.Range(zero, ctx.reshape(w_f, []), one), [1, 1, 1, 1, -1])
    grid_y = ctx.reshape(ctx.op.Range(zero, ctx.reshape(h_f, []), one), [1, 1, 1, -1, 1])

    def center(grid, t, size, n_grid):
        v = ctx.op.Add(ctx.op.Add(grid, ctx.op.Mul(ctx.op.Sigmoid(t), c(scale))), c(bias))
        return ctx.op.Div(ctx.op.Mul(v, size), n_grid)

    anchor = np.asarray(anchors, np_dtype).reshape(n_anchor, 2)
    anchor_w = ctx.const(anchor[:, 0].reshape(1, n_anchor, 1, 1, 1))
    anchor_h = ctx.const(anchor[:, 1].reshape(1, n_anchor, 1, 1, 1))
    cx = center(grid_x, tx, img_w, w_f)
    cy = center(grid_y, ty, img_h, h_f)
    bw = ctx.op.Div(ctx.op.Mul(ctx.op.Mul(ctx.op.Exp(tw), anchor_w), img_w), in_w)
    bh = ctx.op.Div(ctx.op.Mul(ctx.op.Mul(ctx.op.Exp(th), anchor_h), img_h), in_h)
    half_w = ctx.op.Div(bw, c(2.0))
    half_h = ctx.op.Div(bh, c(2.0))
    x1, y1 = ctx.op.Sub(cx, half_w), ctx.op.Sub(cy, half_h)
    x2, y2 = ctx.op.Add(cx, half_w), ctx.op.Add(cy, half_h)
    if clip:
        x1 = ctx.op.Where(ctx.op.Greater(x1, zero), x1, zero)
        y1 = ctx.op.Where(ctx.op.Greater(y1, zero), y1, zero)
        max_x = ctx.op.Sub(img_w, one)
        max_y = ctx.op.Sub(img_h, one)
        x2 = ctx.op.Where(ctx.op.Less(x2, max_x), x2, max_x)
        y2 = ctx.op.Where(ctx.op.Less(y2, max_y), y2, max_y)
    boxes = ctx.op.Where(keep, ctx.op.Concat(x1, y1, x2, y2, axis=2), zero)  # [N, A, 4, H, W]
    scores = ctx.op.Where(keep, ctx.op.Mul(conf, ctx.op.Sigmoid(cls)), zero)  # [N, A, C, H, W]
    boxes = ctx.reshape(ctx.op.Transpose(boxes, perm=[0, 1, 3, 4, 2]), [0, -1, 4])
    scores = ctx.reshape(ctx.op.Transpose(scores, perm=[0, 1, 3, 4, 2]), [0, -1, n_class])
    ctx.correct_declared("boxes", dtype=dtype)
    ctx.correct_declared("scores", dtype=dtype)
    ctx.set_output("boxes", boxes)
    ctx.set_output("scores", scores)


# ---------------------------------------------------------------------- prior_box
def _grid_boxes(
    ctx: OpContext,
    corners: list[ir.Value],
    rows: ir.Value,
    cols: ir.Value,
    n_prior: int,
    variances: list[float],
) -> tuple[ir.Value, ir.Value]:
    """Stack per-cell corners (each broadcasting to ``[H, W, P]``; ``rows`` is ``[H, 1, 1]``,
    ``cols`` ``[1, W, 1]``) into ``[H, W, P, 4]`` boxes, and the variances expanded to
    ``[H, W, P, len(variances)]``."""
    full = ctx.op.Concat(
        ctx.slice(ctx.op.Shape(rows), [0], [1], [0]),
        ctx.slice(ctx.op.Shape(cols), [1], [2], [0]),
        ctx.const_i64([n_prior]),
        axis=0,
    )
    boxes = ctx.op.Concat(*(ctx.unsqueeze(ctx.op.Expand(c, full), [3]) for c in corners), axis=3)
    var_shape = ctx.op.Concat(full, ctx.const_i64([len(variances)]), axis=0)
    return boxes, ctx.op.Expand(ctx.const(np.asarray(variances, F32)), var_shape)


def _expand_aspect_ratios(ratios: list[float], flip: bool) -> list[float]:
    """Paddle's ExpandAspectRatios: 1 first, then each new ratio (and 1/ratio with flip)."""
    out = [1.0]
    for ar in ratios:
        if any(abs(ar - seen) < 1e-6 for seen in out):
            continue
        out.append(ar)
        if flip:
            out.append(float(np.float32(1.0) / np.float32(ar)))
    return out


def _prior_half_sizes(ctx: OpContext) -> list[tuple[float, float]]:
    """(half width, half height) of each prior of one cell, in Paddle's order."""
    min_sizes = [float(v) for v in ctx.attr("min_sizes", [])]
    max_sizes = [float(v) for v in ctx.attr("max_sizes", [])]
    ratios = _expand_aspect_ratios(
        [float(v) for v in ctx.attr("aspect_ratios", [])], bool(ctx.attr("flip", True))
    )
    if max_sizes and len(max_sizes) != len(min_sizes):
        raise ctx.fail(f"{len(max_sizes)} max_sizes for {len(min_sizes)} min_sizes")
    ar_first = not bool(ctx.attr("min_max_aspect_ratios_order", False))
    out: list[tuple[float, float]] = []
    for s, mn in enumerate(min_sizes):
        mn32 = np.float32(mn)
        by_ratio = [
            (float(mn32 * np.sqrt(np.float32(ar)) / 2.0), float(mn32 / np.sqrt(np.float32(ar)) / 2.0))
            for ar in ratios
            if ar_first or abs(ar - 1.0) >= 1e-6
        ]
        square = [float(np.sqrt(mn32 * np.float32(max_sizes[s])) / 2.0)] * 2 if max_sizes else None
        if ar_first:
            out += by_ratio + ([tuple(square)] if square else [])
        else:
            out += [(float(mn32 / 2.0), float(mn32 / 2.0))] + ([tuple(square)] if square else []) + by_ratio
    return out


@mapper("prior_box", min_opset=11)
def prior_box(ctx: OpContext) -> None:
    """SSD priors as Paddle's ``prior_box``: ``[H, W, P, 4]`` boxes and variances, from the
    feature map's and the image's sizes (read at run time). Prior sizes follow Paddle's
    ExpandAspectRatios order (1 first, duplicates dropped, ``flip`` adds 1/ar) and
    ``min_max_aspect_ratios_order``; centers are ``(index + offset) * step`` with the step
    ``image / feature`` unless ``step_w``/``step_h`` are both given; ``clip`` clamps to [0, 1].
    """
    halves = _prior_half_sizes(ctx)
    variances = [float(v) for v in ctx.attr("variances", [])]
    step_w, step_h = float(ctx.attr("step_w", 0.0)), float(ctx.attr("step_h", 0.0))
    offset = float(ctx.attr("offset", 0.5))
    dtype = ctx.input_dtype("input")
    n_prior = len(halves)

    feat = ctx.op.Shape(ctx.input("input"))
    image = ctx.op.Shape(ctx.input("image"))
    fh, fw = (ctx.cast(ctx.slice(feat, [i], [i + 1], [0]), "float32") for i in (2, 3))
    ih, iw = (ctx.cast(ctx.slice(image, [i], [i + 1], [0]), "float32") for i in (2, 3))
    if step_w == 0 or step_h == 0:
        sw, sh = ctx.op.Div(iw, fw), ctx.op.Div(ih, fh)
    else:
        sw, sh = _f32(ctx, step_w), _f32(ctx, step_h)
    zero_f, one_f = _f32(ctx, 0.0), _f32(ctx, 1.0)
    cx = ctx.op.Mul(ctx.op.Add(ctx.op.Range(zero_f, ctx.reshape(fw, []), one_f), _f32(ctx, offset)), sw)
    cy = ctx.op.Mul(ctx.op.Add(ctx.op.Range(zero_f, ctx.reshape(fh, []), one_f), _f32(ctx, offset)), sh)
    cx = ctx.reshape(cx, [1, -1, 1])  # [1, W, 1]
    cy = ctx.reshape(cy, [-1, 1, 1])  # [H, 1, 1]
    hw = ctx.const(np.asarray([a for a, _ in halves], F32).reshape(1, 1, n_prior))
    hh = ctx.const(np.asarray([b for _, b in halves], F32).reshape(1, 1, n_prior))
    x1 = ctx.op.Div(ctx.op.Sub(cx, hw), iw)
    y1 = ctx.op.Div(ctx.op.Sub(cy, hh), ih)
    x2 = ctx.op.Div(ctx.op.Add(cx, hw), iw)
    y2 = ctx.op.Div(ctx.op.Add(cy, hh), ih)
    boxes, var = _grid_boxes(ctx, [x1, y1, x2, y2], cy, cx, n_prior, variances)  # [H, W, P, 4]
    if bool(ctx.attr("clip", True)):
        boxes = ctx.op.Where(ctx.op.Less(boxes, zero_f), zero_f, boxes)
        boxes = ctx.op.Where(ctx.op.Greater(boxes, one_f), one_f, boxes)
    if dtype != "float32":
        boxes, var = ctx.cast(boxes, dtype), ctx.cast(var, dtype)
    ctx.set_output("out", boxes)
    ctx.set_output("var", var)


# ---------------------------------------------------------------------- box_coder
@mapper("box_coder", min_opset=7)
def box_coder(ctx: OpContext) -> None:
    """Paddle's ``box_coder``: ``encode_center_size`` (target ``[R, 4]`` x prior ``[C, 4]`` ->
    ``[R, C, 4]``) and ``decode_center_size`` (target ``[R, C, 4]``, prior ``[C, 4]`` for
    ``axis=0`` or ``[R, 4]`` for ``axis=1``). ``box_normalized=False`` adds 1 to prior and
    target widths/heights (and decoding subtracts it from x2/y2), as Paddle. Variances from
    the ``prior_box_var`` input (per prior), else the ``variance`` attribute, else 1; the
    arithmetic follows the kernel's order of float operations.
    """
    code_type = str(ctx.attr("code_type", "encode_center_size"))
    norm = bool(ctx.attr("box_normalized", True))
    axis = int(ctx.attr("axis", 0))
    variance = [float(v) for v in ctx.attr("variance", []) or []]
    dtype = ctx.input_dtype("target_box")
    prior = ctx.input("prior_box")
    target = ctx.input("target_box")
    add = 0.0 if norm else 1.0

    def coords(v):
        return ctx.split(v, [1, 1, 1, 1], axis=-1)

    def c(value):
        return ctx.const(np.array(value, dtypes.to_numpy(dtype)))

    p0, p1, p2, p3 = coords(prior)
    pw = ctx.op.Add(ctx.op.Sub(p2, p0), c(add))
    ph = ctx.op.Add(ctx.op.Sub(p3, p1), c(add))
    pcx = ctx.op.Add(p0, ctx.op.Div(pw, c(2.0)))
    pcy = ctx.op.Add(p1, ctx.op.Div(ph, c(2.0)))
    var = None
    if ctx.has_input("prior_box_var"):
        var = ctx.input("prior_box_var")
    elif variance:
        if len(variance) != 4:
            raise ctx.fail(f"variance has {len(variance)} values; Paddle wants 4")
        var = c(variance)

    if code_type.lower() in ("encode_center_size", "encodecentersize"):
        # prior values broadcast over target rows: [1, C, 1]; target [R, 1, 1]
        pw, ph, pcx, pcy = (ctx.unsqueeze(v, [0]) for v in (pw, ph, pcx, pcy))
        t0, t1, t2, t3 = (ctx.unsqueeze(v, [1]) for v in coords(target))
        tcx = ctx.op.Div(ctx.op.Add(t2, t0), c(2.0))
        tcy = ctx.op.Div(ctx.op.Add(t3, t1), c(2.0))
        tw = ctx.op.Add(ctx.op.Sub(t2, t0), c(add))
        th = ctx.op.Add(ctx.op.Sub(t3, t1), c(add))
        out = ctx.op.Concat(
            ctx.op.Div(ctx.op.Sub(tcx, pcx), pw),
            ctx.op.Div(ctx.op.Sub(tcy, pcy), ph),
            ctx.op.Log(ctx.op.Abs(ctx.op.Div(tw, pw))),
            ctx.op.Log(ctx.op.Abs(ctx.op.Div(th, ph))),
            axis=2,
        )
        if var is not None:
            out = ctx.op.Div(out, ctx.unsqueeze(var, [0]) if ctx.has_input("prior_box_var") else var)
    elif code_type.lower() in ("decode_center_size", "decodecentersize"):
        # prior per column (axis 0: [1, C, 1]) or per row (axis 1: [R, 1, 1])
        expand = [0] if axis == 0 else [1]
        pw, ph, pcx, pcy = (ctx.unsqueeze(v, expand) for v in (pw, ph, pcx, pcy))
        if var is None:
            vx = vy = vw = vh = c(1.0)
        elif ctx.has_input("prior_box_var"):
            vx, vy, vw, vh = (ctx.unsqueeze(v, expand) for v in coords(var))
        else:
            vx, vy, vw, vh = (c(v) for v in variance)
        t0, t1, t2, t3 = coords(target)
        tcx = ctx.op.Add(ctx.op.Mul(ctx.op.Mul(vx, t0), pw), pcx)
        tcy = ctx.op.Add(ctx.op.Mul(ctx.op.Mul(vy, t1), ph), pcy)
        tw = ctx.op.Mul(ctx.op.Exp(ctx.op.Mul(vw, t2)), pw)
        th = ctx.op.Mul(ctx.op.Exp(ctx.op.Mul(vh, t3)), ph)
        hw, hh = ctx.op.Div(tw, c(2.0)), ctx.op.Div(th, c(2.0))
        out = ctx.op.Concat(
            ctx.op.Sub(tcx, hw),
            ctx.op.Sub(tcy, hh),
            ctx.op.Sub(ctx.op.Add(tcx, hw), c(add)),
            ctx.op.Sub(ctx.op.Add(tcy, hh), c(add)),
            axis=2,
        )
    else:
        raise ctx.fail(f"code_type {code_type!r}; Paddle knows encode_center_size and decode_center_size")
    ctx.set_output("output_box", out)


# ---------------------------------------------------------------------- RoI ops
def _roi_batch_ids(ctx: OpContext, n_rois: ir.Value) -> ir.Value:
    """int64 [R]: the image of each RoI, from ``boxes_num`` (RoIs of image 0 first, ...).

    Without ``boxes_num`` Paddle reads the RoIs' LoD, which a plain tensor does not carry:
    every RoI then belongs to image 0 (what one image with its LoD means).
    """
    if not ctx.has_input("boxes_num"):
        return ctx.op.ConstantOfShape(n_rois, value=ir.tensor(np.zeros(1, np.int64)))
    counts = ctx.cast(ctx.reshape(ctx.input("boxes_num"), [-1]), "int64", ctx.input_dtype("boxes_num"))
    ends = ctx.op.CumSum(counts, ctx.const(np.int64(0)))
    rows = _arange(ctx, n_rois)
    passed = ctx.op.Not(ctx.op.Greater(ctx.unsqueeze(ends, [0]), ctx.unsqueeze(rows, [1])))  # end <= row
    return ctx.reduce("ReduceSum", ctx.cast(passed, "int64"), [1], keepdims=False)


def _roi_opset(op: Op, base: int) -> int:
    """``base``, or 11 when ``boxes_num`` gives the RoIs' images (CumSum, Range)."""
    return max(base, 11) if op.inputs.get("boxes_num") else base


def _roi_align_opset(op: Op) -> int:
    return _roi_opset(op, 16 if op.attrs.get("aligned") else 10)


@mapper("roi_align", min_opset=_roi_align_opset)
def roi_align(ctx: OpContext) -> None:
    """ONNX RoiAlign (average mode), which follows the same sampling as Paddle's kernel:
    ``aligned`` is ``half_pixel`` (opset 16), else ``output_half_pixel`` (RoI sizes at least 1);
    ``sampling_ratio`` <= 0 is adaptive (ONNX 0). The image of each RoI comes from
    ``boxes_num`` (``RoisNum``).
    """
    x = ctx.input("x")
    boxes = ctx.input("boxes")
    dtype = ctx.input_dtype("x")
    batch = _roi_batch_ids(ctx, _dim(ctx, boxes, 0))
    attrs = {
        "mode": "avg",
        "output_height": int(ctx.attr("pooled_height", 1)),
        "output_width": int(ctx.attr("pooled_width", 1)),
        "sampling_ratio": max(int(ctx.attr("sampling_ratio", -1)), 0),
        "spatial_scale": float(ctx.attr("spatial_scale", 1.0)),
    }
    if ctx.opset >= 16:
        attrs["coordinate_transformation_mode"] = (
            "half_pixel" if ctx.attr("aligned", False) else "output_half_pixel"
        )
    if dtype not in ("float32", "float64", "float16"):
        raise ctx.fail(f"input of dtype {dtype}; ONNX RoiAlign takes float tensors")
    ctx.set_output(
        "out", ctx.op.RoiAlign(x, ctx.cast(boxes, dtype, ctx.input_dtype("boxes")), batch, **attrs)
    )


@mapper("roi_pool", min_opset=lambda op: _roi_opset(op, 9))  # ConstantOfShape: 9
def roi_pool(ctx: OpContext) -> None:
    """ONNX MaxRoiPool, which rounds RoI corners and splits bins as Paddle's kernel does
    (empty bins give 0). RoIs get their image index from ``boxes_num``. The ``Argmax``
    output (training only) is not produced.
    """
    if ctx.has_output("arg_max") and _is_consumed(ctx, "arg_max"):
        raise ctx.fail("the Argmax output is used; ONNX MaxRoiPool does not give it")
    dtype = ctx.input_dtype("x")
    # MaxRoiPool takes float tensors: integer inputs (Paddle 3 has int32/int64 kernels) are
    # pooled in float32, exact for the maxima of values below 2**24
    work = dtype if dtype in ("float16", "float32", "float64") else "float32"
    x = ctx.cast(ctx.input("x"), work, dtype)
    boxes = ctx.cast(ctx.input("boxes"), work, ctx.input_dtype("boxes"))
    batch = ctx.cast(ctx.unsqueeze(_roi_batch_ids(ctx, _dim(ctx, boxes, 0)), [1]), work)
    rois = ctx.op.Concat(batch, boxes, axis=1)
    out = ctx.op.MaxRoiPool(
        x,
        rois,
        pooled_shape=[int(ctx.attr("pooled_height", 1)), int(ctx.attr("pooled_width", 1))],
        spatial_scale=float(ctx.attr("spatial_scale", 1.0)),
    )
    ctx.set_output("out", ctx.cast(out, dtype, work))


def _is_consumed(ctx: OpContext, slot: str) -> bool:
    """Whether any op (or a program output) reads output ``slot`` of this op."""
    names = set(ctx.pd.outputs.get(slot) or [])
    return any(n in names for op in ctx.state.program.walk_ops() for vs in op.inputs.values() for n in vs)


def _round_half_away(ctx: OpContext, x: ir.Value, dtype: str = "float32") -> ir.Value:
    """C's round(): halves away from zero (ONNX Round rounds them to even). Sign: opset 9."""
    half = ctx.const(np.array(0.5, dtypes.to_numpy(dtype)))
    return ctx.op.Mul(ctx.op.Sign(x), ctx.op.Floor(ctx.op.Add(ctx.op.Abs(x), half)))


def _bin_mask(ctx: OpContext, start: ir.Value, bin_size: ir.Value, n_bins: int, size: ir.Value) -> tuple:
    """For RoIs ``[R, 1]``: per bin the pixel range ``[floor(start + k*bin), ceil(start + (k+1)*bin))``
    clamped to ``[0, size]``, as a float mask ``[R, n_bins, size]`` and its length ``[R, n_bins]``."""
    k = ctx.const(np.arange(n_bins, dtype=F32).reshape(1, n_bins))
    size_f = ctx.cast(size, "float32")
    zero = _f32(ctx, 0.0)

    def clamp(v):
        v = ctx.op.Where(ctx.op.Less(v, zero), zero, v)
        return ctx.op.Where(ctx.op.Greater(v, size_f), size_f, v)

    lo = clamp(ctx.op.Floor(ctx.op.Add(ctx.op.Mul(k, bin_size), start)))
    hi = clamp(ctx.op.Ceil(ctx.op.Add(ctx.op.Mul(ctx.op.Add(k, _f32(ctx, 1.0)), bin_size), start)))
    pix = ctx.reshape(ctx.op.Range(zero, ctx.reshape(size_f, []), _f32(ctx, 1.0)), [1, 1, -1])
    inside = ctx.op.And(
        ctx.op.Not(ctx.op.Less(pix, ctx.unsqueeze(lo, [2]))), ctx.op.Less(pix, ctx.unsqueeze(hi, [2]))
    )
    return ctx.cast(inside, "float32"), ctx.op.Sub(hi, lo)


@mapper("psroi_pool", min_opset=11)
def psroi_pool(ctx: OpContext) -> None:
    """Position-sensitive RoI average pooling (R-FCN), which ONNX has no operator for.

    As Paddle's kernel: corners rounded half away from zero, the end corner +1, times
    ``spatial_scale``; RoI sizes at least 0.1; bin ``(i, j)`` of output channel ``c`` averages
    input channel ``(c * PH + i) * PW + j`` over ``[floor, ceil)`` pixel ranges clamped to the
    map; empty bins give 0. Built as masked sums (MatMul over W, then a sum over H) on each
    RoI's image; sums are in a different order than Paddle's loop (float rounding only).
    """
    ph_n, pw_n = int(ctx.attr("pooled_height", 1)), int(ctx.attr("pooled_width", 1))
    out_c = int(ctx.attr("output_channels", 1))
    scale = float(ctx.attr("spatial_scale", 1.0))
    dtype = ctx.input_dtype("x")
    x = ctx.input("x")
    if dtype != "float32":
        x = ctx.cast(x, "float32")
    boxes = ctx.cast(ctx.input("boxes"), "float32", ctx.input_dtype("boxes"))
    n_rois = _dim(ctx, boxes, 0)
    batch = _roi_batch_ids(ctx, n_rois)
    x1, y1, x2, y2 = (_round_half_away(ctx, v) for v in ctx.split(boxes, [1, 1, 1, 1], axis=1))  # [R, 1]
    s = _f32(ctx, scale)
    sw, sh = ctx.op.Mul(x1, s), ctx.op.Mul(y1, s)
    ew = ctx.op.Mul(ctx.op.Add(x2, _f32(ctx, 1.0)), s)
    eh = ctx.op.Mul(ctx.op.Add(y2, _f32(ctx, 1.0)), s)
    tenth = _f32(ctx, float(np.float32(0.1)))

    def at_least_tenth(v):
        return ctx.op.Where(ctx.op.Less(v, tenth), tenth, v)

    bin_h = ctx.op.Div(at_least_tenth(ctx.op.Sub(eh, sh)), _f32(ctx, float(ph_n)))
    bin_w = ctx.op.Div(at_least_tenth(ctx.op.Sub(ew, sw)), _f32(ctx, float(pw_n)))
    shape = ctx.op.Shape(x)
    h, w = ctx.slice(shape, [2], [3], [0]), ctx.slice(shape, [3], [4], [0])
    mask_h, len_h = _bin_mask(ctx, sh, bin_h, ph_n, h)  # [R, PH, H], [R, PH]
    mask_w, len_w = _bin_mask(ctx, sw, bin_w, pw_n, w)  # [R, PW, W], [R, PW]

    feats = ctx.op.Gather(x, batch, axis=0)  # [R, OC*PH*PW, H, W]
    feats = ctx.op.Reshape(feats, ctx.op.Concat(ctx.const_i64([-1, out_c, ph_n, pw_n]), h, w, axis=0))
    mw = ctx.unsqueeze(mask_w, [1, 2, 5])  # [R, 1, 1, PW, W, 1]
    summed_w = ctx.op.MatMul(feats, mw)  # [R, OC, PH, PW, H, 1]
    mh = ctx.reshape(ctx.unsqueeze(mask_h, [1, 3]), [0, 1, ph_n, 1, -1, 1])  # [R, 1, PH, 1, H, 1]
    sums = ctx.reduce("ReduceSum", ctx.op.Mul(summed_w, mh), [4, 5], keepdims=False)  # [R, OC, PH, PW]
    area = ctx.op.Mul(ctx.unsqueeze(len_h, [2]), ctx.unsqueeze(len_w, [1]))  # [R, PH, PW]
    area = ctx.unsqueeze(area, [1])
    zero = _f32(ctx, 0.0)
    filled = ctx.op.Greater(area, zero)
    out = ctx.op.Where(filled, ctx.op.Div(sums, ctx.op.Where(filled, area, _f32(ctx, 1.0))), zero)
    if dtype != "float32":
        out = ctx.cast(out, dtype)
    ctx.set_output("out", out)


# ---------------------------------------------------------------------- generate_proposals
def _correct_declared_counts(ctx: OpContext, slot: str) -> None:
    """Paddle declares ``generate_proposals``' count as float32 (3.3) or 0-D (2.6) though the
    kernel writes int32 ``[N]``: correct the declaration so later mappers and the graph output
    see the truth."""
    ctx.correct_declared(slot, dtype="int32", rank=1)


_BBOX_CLIP = float(np.float32(np.log(1000.0 / 16.0)))


@mapper("generate_proposals", min_opset=11)
def generate_proposals(ctx: OpContext) -> None:
    """RPN proposals as Paddle's ``generate_proposals`` (legacy ``generate_proposals_v2``).

    Per image, as the CPU kernel: the ``pre_nms_top_n`` best anchors by score (all when <= 0);
    deltas decoded against the anchors with the variances (``exp`` argument capped at
    log(1000/16); ``pixel_offset`` adds 1 to anchor sizes and subtracts it from x2/y2);
    boxes clipped to ``[0, im - offset]``; boxes smaller than ``max(min_size, 1)`` (and, with
    ``pixel_offset``, centred outside the image) dropped; NMS with ``nms_thresh`` (+1 widths
    with ``pixel_offset``), then the first ``post_nms_top_n`` (``nms_thresh`` <= 0: no NMS and
    no cut). An image left with no box gives one all-zero box with score 0, as Paddle.
    Outputs ``[R, 4]``, ``[R, 1]`` and int32 counts ``[N]``, images in turn, each by score
    (descending). Paddle sorts with ``std::sort``/``nth_element``, so the order of equal
    scores is not defined there (here: the TopK order, lower anchor first); with
    ``nms_thresh`` <= 0 and a ``pre_nms_top_n`` cut Paddle returns ``nth_element``'s order,
    which is not defined either (here: by score). ``eta`` < 1 with
    ``nms_thresh`` > 0.5 (adaptive NMS) is refused.
    """
    pre_n = int(ctx.attr("pre_nms_top_n", 6000))
    post_n = int(ctx.attr("post_nms_top_n", 1000))
    thresh = float(ctx.attr("nms_thresh", 0.5))
    min_size = max(float(ctx.attr("min_size", 0.1)), 1.0)
    pixel = bool(ctx.attr("pixel_offset", True))
    _check_eta(ctx, float(ctx.attr("eta", 1.0)), thresh, "eta")
    dtype = ctx.input_dtype("scores")
    off = 1.0 if pixel else 0.0

    def f32(name):
        v = ctx.input(name)
        return ctx.cast(v, "float32", ctx.input_dtype(name))

    scores = ctx.reshape(ctx.op.Transpose(f32("scores"), perm=[0, 2, 3, 1]), [0, -1])  # [N, HWA]
    deltas = ctx.reshape(ctx.op.Transpose(f32("bbox_deltas"), perm=[0, 2, 3, 1]), [0, -1, 4])  # [N, HWA, 4]
    anchors = ctx.reshape(f32("anchors"), [-1, 4])
    variances = ctx.reshape(f32("variances"), [-1, 4])
    n_img = _dim(ctx, scores, 0)
    total = _dim(ctx, scores, 1)
    k = total if pre_n <= 0 else _min_i64(ctx, ctx.const_i64([pre_n]), total)
    top_scores, top = ctx.op.TopK(scores, k, axis=1, largest=1, sorted=1, _outputs=2)  # [N, k]

    flat = ctx.op.Add(
        top,
        ctx.op.Mul(
            ctx.unsqueeze(_arange(ctx, n_img), [1]),
            total,
        ),
    )
    d = ctx.op.Gather(ctx.reshape(deltas, [-1, 4]), flat, axis=0)  # [N, k, 4]
    a = ctx.op.Gather(anchors, top, axis=0)
    v = ctx.op.Gather(variances, top, axis=0)
    a0, a1, a2, a3 = ctx.split(a, [1, 1, 1, 1], axis=2)
    d0, d1, d2, d3 = ctx.split(d, [1, 1, 1, 1], axis=2)
    v0, v1, v2, v3 = ctx.split(v, [1, 1, 1, 1], axis=2)
    o = _f32(ctx, off)
    half = _f32(ctx, 0.5)
    aw = ctx.op.Add(ctx.op.Sub(a2, a0), o)
    ah = ctx.op.Add(ctx.op.Sub(a3, a1), o)
    acx = ctx.op.Add(a0, ctx.op.Mul(half, aw))
    acy = ctx.op.Add(a1, ctx.op.Mul(half, ah))
    cx = ctx.op.Add(ctx.op.Mul(ctx.op.Mul(v0, d0), aw), acx)
    cy = ctx.op.Add(ctx.op.Mul(ctx.op.Mul(v1, d1), ah), acy)
    clip = _f32(ctx, _BBOX_CLIP)

    def capped_exp(t):
        return ctx.op.Exp(ctx.op.Where(ctx.op.Less(clip, t), clip, t))

    bw = ctx.op.Mul(capped_exp(ctx.op.Mul(v2, d2)), aw)
    bh = ctx.op.Mul(capped_exp(ctx.op.Mul(v3, d3)), ah)
    two = _f32(ctx, 2.0)
    x1 = ctx.op.Sub(cx, ctx.op.Div(bw, two))
    y1 = ctx.op.Sub(cy, ctx.op.Div(bh, two))
    x2 = ctx.op.Sub(ctx.op.Add(cx, ctx.op.Div(bw, two)), o)
    y2 = ctx.op.Sub(ctx.op.Add(cy, ctx.op.Div(bh, two)), o)

    im = f32("im_shape")  # [N, 2] (h, w)
    im_h = ctx.unsqueeze(ctx.slice(im, [0], [1], [1]), [2])  # [N, 1, 1]
    im_w = ctx.unsqueeze(ctx.slice(im, [1], [2], [1]), [2])
    zero = _f32(ctx, 0.0)

    def clamp(t, hi):
        t = ctx.op.Where(ctx.op.Less(hi, t), hi, t)
        return ctx.op.Where(ctx.op.Less(t, zero), zero, t)

    x1, x2 = clamp(x1, ctx.op.Sub(im_w, o)), clamp(x2, ctx.op.Sub(im_w, o))
    y1, y2 = clamp(y1, ctx.op.Sub(im_h, o)), clamp(y2, ctx.op.Sub(im_h, o))
    boxes = ctx.op.Concat(x1, y1, x2, y2, axis=2)  # [N, k, 4]

    ws = ctx.op.Add(ctx.op.Sub(x2, x1), o)
    hs = ctx.op.Add(ctx.op.Sub(y2, y1), o)
    ms = _f32(ctx, min_size)
    keep = ctx.op.And(ctx.op.Not(ctx.op.Less(ws, ms)), ctx.op.Not(ctx.op.Less(hs, ms)))
    if pixel:
        xc = ctx.op.Add(x1, ctx.op.Div(ws, two))
        yc = ctx.op.Add(y1, ctx.op.Div(hs, two))
        keep = ctx.op.And(
            keep, ctx.op.And(ctx.op.Not(ctx.op.Greater(xc, im_w)), ctx.op.Not(ctx.op.Greater(yc, im_h)))
        )
    keep = ctx.reshape(keep, [0, -1])  # [N, k]

    if thresh > 0:
        masked = ctx.op.Where(keep, top_scores, ctx.const(np.array(-np.inf, F32)))
        nms_boxes = ctx.op.Add(boxes, ctx.const(np.array([0, 0, 1, 1], F32))) if pixel else boxes
        selected = ctx.op.NonMaxSuppression(
            nms_boxes,
            ctx.unsqueeze(masked, [1]),
            ctx.const_i64([post_n if post_n > 0 else _INT64_BIG]),
            ctx.const(np.array([min(thresh, 1.0)], F32)),
            ctx.const(np.array([np.finfo(F32).min], F32)),
        )  # [K, 3]
        img_col, _, pos_col = ctx.split(selected, [1, 1, 1], axis=1)
        pairs = ctx.op.Concat(img_col, pos_col, axis=1)  # [K, 2]
    else:
        pairs = ctx.op.Transpose(ctx.op.NonZero(keep), perm=[1, 0])  # [K, 2], anchor order = score order
    img = ctx.reshape(ctx.slice(pairs, [0], [1], [1]), [-1])
    n_sel = _dim(ctx, pairs, 0)
    sel_scores = ctx.op.GatherND(top_scores, pairs)
    sel_boxes = ctx.op.GatherND(boxes, pairs)
    # Order: images in turn, each by score; the TopK rank (column 1) breaks ties.
    perm = _arange(ctx, n_sel)
    perm = _stable_sort(ctx, perm, ctx.reshape(ctx.slice(pairs, [1], [2], [1]), [-1]), False, n_sel)
    perm = _stable_sort(ctx, perm, img, False, n_sel)
    img = ctx.op.Gather(img, perm, axis=0)
    sel_scores = ctx.op.Gather(sel_scores, perm, axis=0)
    sel_boxes = ctx.op.Gather(sel_boxes, perm, axis=0)

    # Images with nothing left get one zero box with score 0.
    counts = _counts_per_image(ctx, img, n_img)
    empty = ctx.op.Equal(counts, ctx.const(np.int64(0)))
    empty_ids = ctx.reshape(ctx.op.NonZero(empty), [-1])
    n_empty = _dim(ctx, empty_ids, 0)
    img = ctx.op.Concat(img, empty_ids, axis=0)
    sel_scores = ctx.op.Concat(
        sel_scores, ctx.op.ConstantOfShape(n_empty, value=ir.tensor(np.zeros(1, F32))), axis=0
    )
    zero_boxes = ctx.op.ConstantOfShape(
        ctx.op.Concat(n_empty, ctx.const_i64([4]), axis=0), value=ir.tensor(np.zeros(1, F32))
    )
    sel_boxes = ctx.op.Concat(sel_boxes, zero_boxes, axis=0)
    n_all = _dim(ctx, img, 0)
    perm = _stable_sort(
        ctx,
        _arange(ctx, n_all),
        img,
        False,
        n_all,
    )
    rois = ctx.op.Gather(sel_boxes, perm, axis=0)
    probs = ctx.unsqueeze(ctx.op.Gather(sel_scores, perm, axis=0), [1])
    if dtype != "float32":
        rois, probs = ctx.cast(rois, dtype), ctx.cast(probs, dtype)
    ctx.correct_declared("rpn_rois", dtype=dtype)  # Paddle 3.3 declares float32 for float64 inputs
    ctx.correct_declared("rpn_roi_probs", dtype=dtype)
    ctx.set_output("rpn_rois", rois)
    ctx.set_output("rpn_roi_probs", probs)
    _correct_declared_counts(ctx, "rpn_rois_num")
    ctx.set_output("rpn_rois_num", ctx.cast(ctx.op.Add(counts, ctx.cast(empty, "int64")), "int32"))


# ---------------------------------------------------------------------- FPN proposals
def _rows_image_ids(ctx: OpContext, counts: ir.Value | None, n_rows: ir.Value) -> ir.Value:
    """int64 [R]: the image of each row, from per-image row counts (None: all image 0)."""
    if counts is None:
        return ctx.op.ConstantOfShape(n_rows, value=ir.tensor(np.zeros(1, np.int64)))
    ends = ctx.op.CumSum(counts, ctx.const(np.int64(0)))
    rows = _arange(ctx, n_rows)
    passed = ctx.op.Not(ctx.op.Greater(ctx.unsqueeze(ends, [0]), ctx.unsqueeze(rows, [1])))
    return ctx.reduce("ReduceSum", ctx.cast(passed, "int64"), [1], keepdims=False)


def _counts_input(ctx: OpContext, slot: str, i: int = 0) -> ir.Value | None:
    if len(ctx.input_names(slot)) <= i:
        return None
    return ctx.cast(ctx.reshape(ctx.input(slot, i), [-1]), "int64", ctx.input_dtype(slot, i))


@mapper("distribute_fpn_proposals", min_opset=11)
def distribute_fpn_proposals(ctx: OpContext) -> None:
    """RoIs to FPN levels as Paddle's kernel: level ``floor(log2(sqrt(area) / refer_scale +
    1e-6) + refer_level)`` clamped to ``[min_level, max_level]`` (``pixel_offset``: +1 sizes;
    inverted boxes have area 0); each level keeps the original order (images in turn);
    per-level counts per image (int32 ``[N]``); ``restore_index`` (int32 ``[R, 1]``) is each
    RoI's row in the level-by-level concatenation. log2 is computed as ln(x)/ln(2), which can
    differ from C's log2 in the last bit - only a RoI whose scale sits within float rounding
    of a level boundary could change level.
    """
    lo, hi = int(ctx.attr("min_level", 2)), int(ctx.attr("max_level", 5))
    refer_level, refer_scale = int(ctx.attr("refer_level", 4)), int(ctx.attr("refer_scale", 224))
    pixel = bool(ctx.attr("pixel_offset", False))
    n_levels = hi - lo + 1
    if n_levels < 1:
        raise ctx.fail(f"max_level {hi} is below min_level {lo}")
    rois = ctx.input("fpn_rois")
    dtype = ctx.input_dtype("fpn_rois")
    r = ctx.cast(rois, "float32", dtype)
    x1, y1, x2, y2 = ctx.split(r, [1, 1, 1, 1], axis=1)
    w, h = ctx.op.Sub(x2, x1), ctx.op.Sub(y2, y1)
    if pixel:
        area = ctx.op.Mul(ctx.op.Add(w, _f32(ctx, 1.0)), ctx.op.Add(h, _f32(ctx, 1.0)))
    else:
        area = ctx.op.Mul(w, h)
    inverted = ctx.op.Or(ctx.op.Less(x2, x1), ctx.op.Less(y2, y1))
    area = ctx.op.Where(inverted, _f32(ctx, 0.0), area)
    ratio = ctx.op.Add(
        ctx.op.Div(ctx.op.Sqrt(area), _f32(ctx, float(refer_scale))), _f32(ctx, float(np.float32(1e-6)))
    )
    log2 = ctx.op.Div(ctx.op.Log(ratio), _f32(ctx, float(np.log(2.0))))
    level = ctx.op.Floor(ctx.op.Add(log2, _f32(ctx, float(refer_level))))
    level = ctx.op.Where(ctx.op.Less(level, _f32(ctx, lo)), _f32(ctx, lo), level)
    level = ctx.op.Where(ctx.op.Greater(level, _f32(ctx, hi)), _f32(ctx, hi), level)
    level = ctx.reshape(ctx.cast(level, "int64"), [-1])  # [R]

    n_rows = _dim(ctx, rois, 0)
    counts = _counts_input(ctx, "rois_num")
    n_img = _dim(ctx, counts, 0) if counts is not None else ctx.const_i64([1])
    image = _rows_image_ids(ctx, counts, n_rows)
    for i in range(n_levels):
        here = ctx.op.Equal(level, ctx.const(np.int64(lo + i)))
        ctx.set_output("multi_fpn_rois", ctx.op.Compress(rois, here, axis=0), i)
        picked = ctx.op.Compress(image, here, axis=0)
        ctx.set_output("multi_level_rois_num", ctx.cast(_counts_per_image(ctx, picked, n_img), "int32"), i)
    pos = _arange(ctx, n_rows)
    order = _stable_sort(ctx, pos, level, False, n_rows)  # concatenation row -> original row
    restore = ctx.op.ScatterElements(pos, order, pos, axis=0)  # original row -> concatenation row
    ctx.set_output("restore_index", ctx.cast(ctx.unsqueeze(restore, [1]), "int32"))


@mapper("collect_fpn_proposals", min_opset=11)
def collect_fpn_proposals(ctx: OpContext) -> None:
    """Merge per-level RoIs as Paddle's kernel: all levels concatenated, the
    ``post_nms_topn`` best by score over the whole batch, then grouped by image (stable);
    counts per image as int32 ``[N]``. Paddle's score sort uses a non-strict comparison
    (``>=``), so the order of equal scores is not defined there (here: level, then row).
    Paddle's count output is also shifted when an image between others has no RoI left;
    here every image gets its own count.
    """
    post_n = int(ctx.attr("post_nms_topn", 2000))
    rois = ctx.inputs("multi_level_rois")
    scores = ctx.inputs("multi_level_scores")
    if len(rois) != len(scores):
        raise ctx.fail(f"{len(rois)} RoI tensors but {len(scores)} score tensors")
    images = []
    n_img = ctx.const_i64([1])
    for i, level_rois in enumerate(rois):
        counts = _counts_input(ctx, "multi_level_rois_num", i)
        if counts is not None and i == 0:
            n_img = _dim(ctx, counts, 0)
        images.append(_rows_image_ids(ctx, counts, _dim(ctx, level_rois, 0)))
    all_rois = ctx.op.Concat(*rois, axis=0) if len(rois) > 1 else rois[0]
    all_scores = ctx.op.Concat(*(ctx.reshape(s, [-1]) for s in scores), axis=0)
    all_images = ctx.op.Concat(*images, axis=0) if len(images) > 1 else images[0]
    total = _dim(ctx, all_scores, 0)
    k = _min_i64(ctx, ctx.const_i64([post_n]), total)
    _, best = ctx.op.TopK(all_scores, k, axis=0, largest=1, sorted=1, _outputs=2)
    best = _stable_sort(ctx, best, all_images, False, k)
    ctx.set_output("fpn_rois", ctx.op.Gather(all_rois, best, axis=0))
    picked = ctx.op.Gather(all_images, best, axis=0)
    ctx.set_output("rois_num", ctx.cast(_counts_per_image(ctx, picked, n_img), "int32"))


# ---------------------------------------------------------------------- matrix_nms
Corners = tuple[ir.Value, ir.Value, ir.Value, ir.Value]


def _box_area(ctx: OpContext, box: Corners, norm: ir.Value, zero: ir.Value) -> ir.Value:
    """Paddle's BBoxArea: ``(x2 - x1 + norm) * (y2 - y1 + norm)``, 0 for an inverted box."""
    x1, y1, x2, y2 = box
    inverted = ctx.op.Or(ctx.op.Less(x2, x1), ctx.op.Less(y2, y1))
    value = ctx.op.Mul(ctx.op.Add(ctx.op.Sub(x2, x1), norm), ctx.op.Add(ctx.op.Sub(y2, y1), norm))
    return ctx.op.Where(inverted, zero, value)


def _jaccard(
    ctx: OpContext, a: Corners, area_a: ir.Value, b: Corners, area_b: ir.Value, norm: ir.Value, zero: ir.Value
) -> ir.Value:
    """Paddle's JaccardOverlap of boxes ``a`` and ``b`` (corners and ``_box_area``, all
    broadcasting against each other): 0 for boxes that do not touch, ``norm`` (1 when not
    normalized) added to the intersection's sides, ``inter / (area_a + area_b - inter)``."""
    x1, y1, x2, y2 = a
    X1, Y1, X2, Y2 = b
    apart = ctx.op.Or(
        ctx.op.Or(ctx.op.Greater(X1, x2), ctx.op.Less(X2, x1)),
        ctx.op.Or(ctx.op.Greater(Y1, y2), ctx.op.Less(Y2, y1)),
    )
    iw = ctx.op.Add(ctx.op.Sub(ctx.op.Min(x2, X2), ctx.op.Max(x1, X1)), norm)
    ih = ctx.op.Add(ctx.op.Sub(ctx.op.Min(y2, Y2), ctx.op.Max(y1, Y1)), norm)
    inter = ctx.op.Mul(iw, ih)
    union = ctx.op.Sub(ctx.op.Add(area_a, area_b), inter)
    return ctx.op.Where(apart, zero, ctx.op.Div(inter, union))


# How many candidate pairs one step of matrix_nms' decay loop compares: a step takes as many
# candidates as fit (at least one) against up to K earlier candidates each, so the loop's
# tensors stay near this many elements whatever the number of boxes.
MATRIX_NMS_PAIRS_PER_STEP = 1 << 16


@mapper("matrix_nms", min_opset=11)
def matrix_nms(ctx: OpContext) -> None:
    """Matrix NMS (SOLOv2, PP-YOLO, PP-YOLOE-R/PicoDet options) as Paddle's CPU kernel.

    Per image and class (background left out), as the kernel: the candidates are the boxes
    with score > ``score_threshold``, sorted by score (best first), the best ``nms_top_k`` of
    them (all when -1). Candidate ``i``'s score is multiplied by the smallest decay over the
    better candidates ``j`` - linear ``(1 - iou_ij) / (1 - max_iou_j)`` (in double, as the
    kernel's ``1.`` literals make it) or Gaussian ``exp((max_iou_j^2 - iou_ij^2) * sigma)`` -
    where ``max_iou_j`` is ``j``'s largest IoU with the candidates before it; a decay of NaN
    or above 1 leaves the minimum at 1 (``std::min``); kept if the decayed score is above
    ``post_threshold``. Per image the ``keep_top_k`` best decayed scores, best first.

    Memory: only the candidates are compared, never all boxes. They are laid out in one list
    (image, class, rank) and an ONNX Loop takes them in blocks: each step compares a block
    with the up to K earlier candidates of their class (K: the most candidates any class
    has), ``MATRIX_NMS_PAIRS_PER_STEP`` pairs at most (one row when K is larger), carrying
    every candidate's ``max_iou`` and decayed score. So the graph needs O(candidates + pairs
    per step) memory, like the kernel (which holds one class's triangle at a time).

    Order: Paddle sorts with ``std::partial_sort``, which leaves the order of equal scores
    undefined; here equal scores keep the lower box index (candidates) and class, then rank
    (output). Outputs ``[K, 6]`` (label, score, box) in the scores' dtype (the kernel's
    float32 or float64, computed in it), int32 ``Index`` ``[K, 1]`` (``image * M + box``) and
    int32 counts ``[N]``; no detections give ``[0, 6]``.
    """
    score_thr = float(ctx.attr("score_threshold", 0.05))
    nms_top_k = int(ctx.attr("nms_top_k", -1))
    keep_top_k = int(ctx.attr("keep_top_k", -1))
    post_thr = float(ctx.attr("post_threshold", 0.0))
    gaussian = bool(ctx.attr("use_gaussian", False))
    sigma = float(ctx.attr("gaussian_sigma", 2.0))
    background = int(ctx.attr("background_label", 0))
    normalized = bool(ctx.attr("normalized", True))
    if ctx.input_rank("scores") != 3:
        raise ctx.fail("scores must be [N, C, M]")
    box_shape = ctx.input_shape("bboxes")
    if box_shape and box_shape[-1] not in (-1, 4):
        raise ctx.fail(f"boxes with {box_shape[-1]} coordinates are not supported; only 4")
    dtype = ctx.input_dtype("scores")
    np_dtype = dtypes.to_numpy(dtype)

    def c(value) -> ir.Value:
        return ctx.const(np.asarray(value, np_dtype))

    boxes = ctx.cast(ctx.input("bboxes"), dtype, ctx.input_dtype("bboxes"))
    scores = ctx.input("scores")
    n_img, n_cls, n_box = (_dim(ctx, scores, i) for i in range(3))
    one = ctx.const_i64([1])

    # Candidates of every (image, class): how many, and the best first (TopK: ties to the
    # lower box index). K = the most any class keeps.
    valid = ctx.op.Greater(scores, c(score_thr))
    if background >= 0:
        labels = _arange(ctx, n_cls)
        not_bg = ctx.reshape(ctx.op.Not(ctx.op.Equal(labels, ctx.const(np.int64(background)))), [1, -1, 1])
        valid = ctx.op.And(valid, not_bg)
    count = ctx.reduce("ReduceSum", ctx.cast(valid, "int64"), [2], keepdims=True)  # [N, C, 1]

    def most_of(counts: ir.Value) -> ir.Value:  # [1], >= 1 unless there are no boxes
        most = ctx.reduce("ReduceMax", ctx.op.Concat(ctx.reshape(counts, [-1]), one, axis=0), [0], keepdims=True)
        return _min_i64(ctx, most, n_box)

    masked = ctx.op.Where(valid, scores, c(-np.inf))
    # [N, C, every candidate], best first, equal scores in box order on any runtime (OpenVINO's
    # TopK does not keep ONNX's tie rule; below 2^31 keys for M up to 46340, exact in its int32)
    top_scores, top = stable_top_k(ctx, masked, most_of(count), 2, n_box)
    if nms_top_k > -1:  # the best nms_top_k, equal scores from the lower box index
        count = _min_i64(ctx, count, ctx.const(np.int64(nms_top_k)))
        k = most_of(count)
        top_scores, top = (ctx.slice(v, [0], k, [2]) for v in (top_scores, top))
    else:
        k = most_of(count)
    steps = _arange(ctx, k)
    sel = ctx.op.Transpose(ctx.op.NonZero(ctx.op.Less(steps, count)), perm=[1, 0])  # [T, 3] row-major
    n_cand = _dim(ctx, sel, 0)
    img, label, rank = (ctx.reshape(v, [-1]) for v in ctx.split(sel, [1, 1, 1], axis=1))
    cand_score = ctx.op.GatherND(top_scores, sel)  # [T]
    box_idx = ctx.op.GatherND(top, sel)  # [T]
    cand = ctx.op.Gather(
        ctx.reshape(boxes, [-1, 4]), ctx.op.Add(ctx.op.Mul(img, ctx.reshape(n_box, [])), box_idx), axis=0
    )  # [T, 4]

    per_step = _max_i64(ctx, ctx.op.Div(ctx.const_i64([MATRIX_NMS_PAIRS_PER_STEP]), _max_i64(ctx, k, one)), one)
    n_steps = ctx.op.Div(ctx.op.Sub(ctx.op.Add(n_cand, per_step), one), per_step)
    decayed = _matrix_decay(
        ctx, cand, cand_score, rank, n_cand, per_step, n_steps, dtype, normalized, gaussian, sigma
    )  # [T]

    # Kept candidates, per image by decayed score (best first; ties: class, then rank).
    kept = ctx.reshape(ctx.op.NonZero(ctx.op.Greater(decayed, c(post_thr))), [-1])  # [D]
    n_kept = _dim(ctx, kept, 0)
    kept_img = ctx.op.Gather(img, kept, axis=0)
    pos = _arange(ctx, n_kept)
    perm = _stable_sort(ctx, pos, ctx.op.Gather(decayed, kept, axis=0), True, n_kept)
    perm = _stable_sort(ctx, perm, kept_img, False, n_kept)
    if keep_top_k > -1:
        img_sorted = ctx.op.Gather(kept_img, perm, axis=0)
        first = ctx.op.CumSum(_counts_per_image(ctx, kept_img, n_img), ctx.const(np.int64(0)), exclusive=1)
        place = ctx.op.Sub(pos, ctx.op.Gather(first, img_sorted, axis=0))
        perm = ctx.op.Compress(perm, ctx.op.Less(place, ctx.const(np.int64(keep_top_k))), axis=0)
    final = ctx.op.Gather(kept, perm, axis=0)
    out_img = ctx.op.Gather(img, final, axis=0)
    out = ctx.op.Concat(
        ctx.unsqueeze(ctx.cast(ctx.op.Gather(label, final, axis=0), dtype), [1]),
        ctx.unsqueeze(ctx.op.Gather(decayed, final, axis=0), [1]),
        ctx.op.Gather(cand, final, axis=0),
        axis=1,
    )
    ctx.set_output("out", out)
    index = ctx.op.Add(ctx.op.Mul(out_img, ctx.reshape(n_box, [])), ctx.op.Gather(box_idx, final, axis=0))
    ctx.set_output("index", ctx.cast(ctx.unsqueeze(index, [1]), "int32"))
    ctx.set_output("roisnum", ctx.cast(_counts_per_image(ctx, out_img, n_img), "int32"))


def _matrix_decay(
    ctx: OpContext,
    cand: ir.Value,
    cand_score: ir.Value,
    rank: ir.Value,
    n_cand: ir.Value,
    per_step: ir.Value,
    n_steps: ir.Value,
    dtype: str,
    normalized: bool,
    gaussian: bool,
    sigma: float,
) -> ir.Value:
    """matrix_nms' decayed scores ``[T]`` of the candidates (``cand`` ``[T, 4]``, best first
    within each class; ``rank`` = place in its class), by an ONNX Loop over blocks of
    ``per_step`` candidates. A block's rows are compared with the first candidates of their
    class up to the block's highest rank, masked to those before each row; ``max_iou`` of
    every candidate is carried, so a row finds those of the candidates before it, whichever
    step computed them."""
    state = ctx.state
    np_dtype = dtypes.to_numpy(dtype)
    fdtype = ir.DataType.from_numpy(np_dtype)

    def c(value) -> ir.Value:
        return ctx.const(np.asarray(value, np_dtype))

    corners = tuple(ctx.reshape(v, [-1]) for v in ctx.split(cand, [1, 1, 1, 1], axis=1))  # 4 x [T]
    norm = c(0.0 if normalized else 1.0)
    areas = _box_area(ctx, corners, norm, c(0.0))  # [T]
    zeros = ctx.op.ConstantOfShape(n_cand, value=ir.tensor(np.zeros(1, np_dtype)))
    where = f"{ctx.pd.type}_{ctx.pd.block_idx}_{ctx.pd.index}/decay"
    with state.subgraph(where) as body:
        it = ir.Value(name=state.unique_name(f"{where}/iter"), type=ir.TensorType(ir.DataType.INT64),
                      shape=ir.Shape([]))
        cond = ir.Value(name=state.unique_name(f"{where}/cond"), type=ir.TensorType(ir.DataType.BOOL),
                        shape=ir.Shape([]))
        carried = [
            ir.Value(name=state.unique_name(f"{where}/{tag}"), type=ir.TensorType(fdtype), shape=ir.Shape([None]))
            for tag in ("max_iou", "decayed")
        ]
        body.inputs.extend([it, cond, *carried])
        max_in, decayed_in = carried

        start = ctx.op.Mul(it, ctx.reshape(per_step, []))
        stop = _min_i64(ctx, ctx.op.Add(start, ctx.reshape(per_step, [])), ctx.reshape(n_cand, []))
        rows = ctx.op.Range(start, stop, ctx.const(np.int64(1)))  # [b]
        row_rank = ctx.op.Gather(rank, rows, axis=0)
        width = _max_i64(ctx, ctx.reduce("ReduceMax", row_rank, [0], keepdims=False), ctx.const(np.int64(1)))
        steps = ctx.op.Range(ctx.const(np.int64(0)), width, ctx.const(np.int64(1)))
        before = ctx.op.Less(ctx.unsqueeze(steps, [0]), ctx.unsqueeze(row_rank, [1]))  # [b, w]: j before i
        cols = ctx.op.Add(ctx.unsqueeze(ctx.op.Sub(rows, row_rank), [1]), ctx.unsqueeze(steps, [0]))
        cols = ctx.op.Where(before, cols, ctx.unsqueeze(rows, [1]))  # in range where masked out

        def at(v: ir.Value, idx: ir.Value) -> ir.Value:
            return ctx.op.Gather(v, idx, axis=0)

        row_box = tuple(ctx.unsqueeze(at(v, rows), [1]) for v in corners)  # [b, 1] each
        col_box = tuple(at(v, cols) for v in corners)  # [b, w] each
        zero, one = c(0.0), c(1.0)
        iou = _jaccard(ctx, row_box, ctx.unsqueeze(at(areas, rows), [1]), col_box, at(areas, cols), norm, zero)
        # max_iou starts at 0 and std::max skips NaN (0/0 of empty boxes)
        counted = ctx.op.And(before, ctx.op.Greater(iou, zero))
        max_iou = ctx.reduce("ReduceMax", ctx.op.Where(counted, iou, zero), [1], keepdims=False)
        max_out = ctx.op.ScatterElements(max_in, rows, max_iou, axis=0)
        max_j = at(max_out, cols)  # [b, w]
        if gaussian:
            decay = ctx.op.Exp(
                ctx.op.Mul(ctx.op.Sub(ctx.op.Mul(max_j, max_j), ctx.op.Mul(iou, iou)), c(np.float32(sigma)))
            )
        else:
            # (1. - iou) / (1. - max_iou): double literals, so float32 values divide in double
            wide = "float64" if dtype == "float32" else dtype
            w_one = ctx.const(np.asarray(1.0, dtypes.to_numpy(wide)))
            decay = ctx.op.Div(
                ctx.op.Sub(w_one, ctx.cast(iou, wide, dtype)), ctx.op.Sub(w_one, ctx.cast(max_j, wide, dtype))
            )
            decay = ctx.cast(decay, dtype, wide)
        # min_decay starts at 1; std::min keeps it for NaN (0/0) and anything not below it
        decay = ctx.op.Where(ctx.op.And(before, ctx.op.Less(decay, one)), decay, one)
        min_decay = ctx.reduce("ReduceMin", decay, [1], keepdims=False)
        decayed = ctx.op.Mul(min_decay, at(cand_score, rows))
        decayed_out = ctx.op.ScatterElements(decayed_in, rows, decayed, axis=0)
        outs = [ctx.op.Identity(cond), max_out, decayed_out]
        for value, typ in zip(outs, [ir.TensorType(ir.DataType.BOOL)] + [ir.TensorType(fdtype)] * 2):
            value.type = typ
        body.outputs.extend(outs)
    _, decayed = ctx.op.Loop(ctx.reshape(n_steps, []), None, zeros, zeros, body=body, _outputs=2)
    return decayed


# ---------------------------------------------------------------------- anchor_generator
@mapper("anchor_generator", min_opset=11)
def anchor_generator(ctx: OpContext) -> None:
    """RPN anchors as Paddle's ``anchor_generator``: ``[H, W, A, 4]`` anchors and variances from
    the feature map's size (read at run time). Per aspect ratio, then per size: base sizes
    ``round(sqrt(stride_w * stride_h / ar))`` and ``round(base_w * ar)`` scaled by
    ``size / stride``; centres ``index * stride + offset * (stride - 1)``; corners at
    ``centre -/+ (size - 1) / 2`` (computed per anchor at conversion time, in float32 as the
    kernel).
    """
    sizes = [float(v) for v in ctx.attr("anchor_sizes", [])]
    ratios = [float(v) for v in ctx.attr("aspect_ratios", [])]
    variances = [float(v) for v in ctx.attr("variances", [])]
    stride = [float(v) for v in ctx.attr("stride", [16.0, 16.0])]
    offset = np.float32(ctx.attr("offset", 0.5))
    if len(stride) != 2:
        raise ctx.fail(f"stride has {len(stride)} values; Paddle wants 2 (width, height)")
    sw, sh = np.float32(stride[0]), np.float32(stride[1])
    half_w, half_h = [], []
    for ar in ratios:
        ar32 = np.float32(ar)
        for size in sizes:
            area = sw * sh
            base_w = np.float32(np.round(np.sqrt(np.float32(area / ar32))))
            base_h = np.float32(np.round(base_w * ar32))
            aw = np.float32(np.float32(np.float32(size) / sw) * base_w)
            ah = np.float32(np.float32(np.float32(size) / sh) * base_h)
            half_w.append(0.5 * (float(aw) - 1.0))
            half_h.append(0.5 * (float(ah) - 1.0))
    n_anchor = len(half_w)
    dtype = ctx.input_dtype("input")
    shape = ctx.op.Shape(ctx.input("input"))
    fh = ctx.cast(ctx.slice(shape, [2], [3], [0]), "float32")
    fw = ctx.cast(ctx.slice(shape, [3], [4], [0]), "float32")
    zero, one = _f32(ctx, 0.0), _f32(ctx, 1.0)
    cx = ctx.op.Add(
        ctx.op.Mul(ctx.op.Range(zero, ctx.reshape(fw, []), one), _f32(ctx, float(sw))),
        _f32(ctx, float(offset * (sw - np.float32(1)))),
    )
    cy = ctx.op.Add(
        ctx.op.Mul(ctx.op.Range(zero, ctx.reshape(fh, []), one), _f32(ctx, float(sh))),
        _f32(ctx, float(offset * (sh - np.float32(1)))),
    )
    cx = ctx.reshape(cx, [1, -1, 1])
    cy = ctx.reshape(cy, [-1, 1, 1])
    hw = ctx.const(np.asarray(half_w, F32).reshape(1, 1, n_anchor))
    hh = ctx.const(np.asarray(half_h, F32).reshape(1, 1, n_anchor))
    corners = [ctx.op.Sub(cx, hw), ctx.op.Sub(cy, hh), ctx.op.Add(cx, hw), ctx.op.Add(cy, hh)]
    anchors, var = _grid_boxes(ctx, corners, cy, cx, n_anchor, variances)
    if dtype != "float32":
        anchors, var = ctx.cast(anchors, dtype), ctx.cast(var, dtype)
    ctx.set_output("anchors", anchors)
    ctx.set_output("variances", var)


# ---------------------------------------------------------------------- legacy-only box ops
@mapper("iou_similarity", min_opset=9)
def iou_similarity(ctx: OpContext) -> None:
    """Pairwise IoU ``[N, M]`` of boxes ``x`` ``[N, 4]`` and ``y`` ``[M, 4]`` as Paddle's functor:
    +1 on sizes when ``box_normalized`` is False, intersections clamped at 0, and 1e-10 added
    to the union."""
    norm = not bool(ctx.attr("box_normalized", True))
    dtype = ctx.input_dtype("x")

    def c(v):
        return ctx.const(np.array(v, dtypes.to_numpy(dtype)))

    x1, y1, x2, y2 = ctx.split(ctx.input("x"), [1, 1, 1, 1], axis=1)  # [N, 1]
    X1, Y1, X2, Y2 = (
        ctx.op.Transpose(v, perm=[1, 0]) for v in ctx.split(ctx.input("y"), [1, 1, 1, 1], axis=1)
    )
    one, zero = c(1.0), c(0.0)

    def size(a, b):
        d = ctx.op.Sub(b, a)
        return ctx.op.Add(d, one) if norm else d

    area1 = ctx.op.Mul(size(y1, y2), size(x1, x2))
    area2 = ctx.op.Mul(size(Y1, Y2), size(X1, X2))
    ix2 = ctx.op.Where(ctx.op.Greater(x2, X2), X2, x2)
    iy2 = ctx.op.Where(ctx.op.Greater(y2, Y2), Y2, y2)
    ix1 = ctx.op.Where(ctx.op.Greater(x1, X1), x1, X1)
    iy1 = ctx.op.Where(ctx.op.Greater(y1, Y1), y1, Y1)
    ih, iw = size(iy1, iy2), size(ix1, ix2)
    ih = ctx.op.Where(ctx.op.Greater(ih, zero), ih, zero)
    iw = ctx.op.Where(ctx.op.Greater(iw, zero), iw, zero)
    inter = ctx.op.Mul(iw, ih)
    union = ctx.op.Add(ctx.op.Sub(ctx.op.Add(area1, area2), inter), c(1e-10))
    ctx.set_output("out", ctx.op.Div(inter, union))


@mapper("density_prior_box", min_opset=11)
def density_prior_box(ctx: OpContext) -> None:
    """Density priors (face detectors) as Paddle's kernel: per fixed size ``s`` (density
    ``d``) and ratio, a ``d x d`` grid of boxes shifted by ``int(step_average) / d`` around
    each cell centre, where ``step_average = int((step_w + step_h) / 2)`` (steps from the
    image/feature sizes unless given); x1/y1 clamped at 0 and x2/y2 at 1 always, all four to
    [0, 1] with ``clip``. ``[H, W, P, 4]`` (``[H*W*P, 4]`` with ``flatten_to_2d``) boxes and
    variances; sizes are read at run time.
    """
    sizes = [float(v) for v in ctx.attr("fixed_sizes", [])]
    ratios = [float(v) for v in ctx.attr("fixed_ratios", [])]
    densities = [int(v) for v in ctx.attr("densities", [])]
    variances = [float(v) for v in ctx.attr("variances", [])]
    step_w, step_h = float(ctx.attr("step_w", 0.0)), float(ctx.attr("step_h", 0.0))
    offset = float(ctx.attr("offset", 0.5))
    if len(densities) != len(sizes):
        raise ctx.fail(f"{len(densities)} densities for {len(sizes)} fixed_sizes")
    dens, dj, di, bw, bh = [], [], [], [], []
    for size, density in zip(sizes, densities):
        for ratio in ratios:
            root = np.float32(np.sqrt(np.float32(ratio)))
            for i in range(density):
                for j in range(density):
                    dens.append(density)
                    di.append(i)
                    dj.append(j)
                    bw.append(float(np.float32(np.float32(size) * root)) / 2.0)
                    bh.append(float(np.float32(np.float32(size) / root)) / 2.0)
    n_prior = len(dens)

    def row(values):
        return ctx.const(np.asarray(values, F32).reshape(1, 1, n_prior))

    shape_f = ctx.op.Shape(ctx.input("input"))
    shape_i = ctx.op.Shape(ctx.input("image"))
    fh, fw = (ctx.cast(ctx.slice(shape_f, [i], [i + 1], [0]), "float32") for i in (2, 3))
    ih, iw = (ctx.cast(ctx.slice(shape_i, [i], [i + 1], [0]), "float32") for i in (2, 3))
    if step_w == 0 or step_h == 0:
        sw, sh = ctx.op.Div(iw, fw), ctx.op.Div(ih, fh)
    else:
        sw, sh = _f32(ctx, step_w), _f32(ctx, step_h)
    zero, one, half = _f32(ctx, 0.0), _f32(ctx, 1.0), _f32(ctx, 0.5)
    step_avg = ctx.op.Floor(ctx.op.Mul(ctx.op.Add(sw, sh), half))
    shift = ctx.op.Floor(ctx.op.Div(step_avg, row(dens)))  # [1, 1, P]
    base = ctx.op.Add(
        ctx.op.Sub(zero, ctx.op.Div(step_avg, _f32(ctx, 2.0))), ctx.op.Div(shift, _f32(ctx, 2.0))
    )
    cx = ctx.op.Mul(ctx.op.Add(ctx.op.Range(zero, ctx.reshape(fw, []), one), _f32(ctx, offset)), sw)
    cy = ctx.op.Mul(ctx.op.Add(ctx.op.Range(zero, ctx.reshape(fh, []), one), _f32(ctx, offset)), sh)
    px = ctx.op.Add(ctx.op.Add(ctx.reshape(cx, [1, -1, 1]), base), ctx.op.Mul(row(dj), shift))  # [1, W, P]
    py = ctx.op.Add(ctx.op.Add(ctx.reshape(cy, [-1, 1, 1]), base), ctx.op.Mul(row(di), shift))  # [H, 1, P]
    hw, hh = row(bw), row(bh)

    def lo(v):
        return ctx.op.Where(ctx.op.Less(v, zero), zero, v)

    def hi(v):
        return ctx.op.Where(ctx.op.Greater(v, one), one, v)

    corners = [
        lo(ctx.op.Div(ctx.op.Sub(px, hw), iw)),
        lo(ctx.op.Div(ctx.op.Sub(py, hh), ih)),
        hi(ctx.op.Div(ctx.op.Add(px, hw), iw)),
        hi(ctx.op.Div(ctx.op.Add(py, hh), ih)),
    ]
    if bool(ctx.attr("clip", False)):
        corners = [hi(lo(c)) for c in corners]
    boxes, var = _grid_boxes(ctx, corners, py, px, n_prior, variances)
    if bool(ctx.attr("flatten_to_2d", False)):
        boxes = ctx.reshape(boxes, [-1, 4])
        var = ctx.reshape(var, [-1, len(variances)])
    dtype = ctx.input_dtype("input")
    if dtype != "float32":
        boxes, var = ctx.cast(boxes, dtype), ctx.cast(var, dtype)
    ctx.set_output("boxes", boxes)
    ctx.set_output("variances", var)


# ---------------------------------------------------------------------- box_clip
@mapper("box_clip", min_opset=9)
def box_clip(ctx: OpContext) -> None:
    """Clip boxes (``[..., 4]``) to the image as Paddle's
    ``box_clip``: the image is ``round(im_info[0:2] / im_info[2])`` (C rounding, halves away
    from zero) and x/y are clamped to ``[0, w - 1]`` / ``[0, h - 1]``. Paddle splits the boxes
    into images by their LoD, which an inference tensor does not carry: every box is clipped
    with the first image's ``im_info`` (exact for one image).
    """
    dtype = ctx.input_dtype("input")
    x = ctx.input("input")
    info = ctx.cast(ctx.input("im_info"), dtype, ctx.input_dtype("im_info"))
    first = ctx.slice(info, [0], [1], [0])  # [1, 3]
    h, w, scale = ctx.split(first, [1, 1, 1], axis=1)

    def c(v):
        return ctx.const(np.array(v, dtypes.to_numpy(dtype)))

    w_max = ctx.op.Sub(_round_half_away(ctx, ctx.op.Div(w, scale), dtype), c(1.0))
    h_max = ctx.op.Sub(_round_half_away(ctx, ctx.op.Div(h, scale), dtype), c(1.0))
    upper = ctx.op.Concat(w_max, h_max, w_max, h_max, axis=1)  # [1, 4]
    boxes = ctx.reshape(x, [-1, 4])
    clipped = ctx.op.Max(ctx.op.Min(boxes, upper), c(0.0))
    ctx.set_output("output", ctx.op.Reshape(clipped, ctx.op.Shape(x)))
