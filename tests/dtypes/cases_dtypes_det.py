"""The dtype matrix for the detection ops and the quantization ops.

Detection: boxes are corner-sorted absolute values of x (or p), scores sigmoids of x or p;
constants (RoIs, anchors, image sizes) are cast to x's dtype. Ops with a public
``paddle.vision.ops`` API use it; the others are ``_C_ops`` calls under PIR and raw legacy ops
appended with ``LayerHelper.append_op`` under Paddle 2.6 (``static`` entries where eager mode
cannot run them). Most kernels are float32/float64 only: the probe keeps what Paddle runs.

Quant: the ops are appended to a static program (``static`` entries): ``_C_ops`` under PIR,
``LayerHelper.append_op`` under Paddle 2.6; scales are constants built from literals.
"""

from __future__ import annotations

from harness.dtype_matrix import DTYPES, register


def _pir(P) -> bool:
    return int(P.__version__.split(".")[0]) >= 3


def _legacy(P, op_type, inputs, outputs, attrs):
    """A raw legacy op (``outputs``: slot -> dtype); its outputs in slot order."""
    helper = P.base.layer_helper.LayerHelper(op_type)
    outs = {slot: helper.create_variable_for_type_inference(dt) for slot, dt in outputs.items()}
    helper.append_op(type=op_type, inputs={k: v for k, v in inputs.items() if v is not None},
                     outputs=outs, attrs=attrs)
    return [outs[s] for s in outputs]


def _corners(P, t, scale=1.0):
    """[..., 4] -> boxes with x1 <= x2, y1 <= y2 (from absolute values)."""
    a = P.abs(t.astype("float32")) * scale
    x1, y1, x2, y2 = P.split(a, 4, axis=-1)
    return P.concat([P.minimum(x1, x2), P.minimum(y1, y2), P.maximum(x1, x2) + 1.0,
                     P.maximum(y1, y2) + 1.0], axis=-1).astype(t.dtype)


def _const(P, values, like, dtype=None):
    """A constant in ``like``'s dtype, written as a constant of that dtype (no cast op: the
    quant mappers need their scales as constants)."""
    import numpy as np

    name = str(dtype or like.dtype).rsplit(".", 1)[-1]
    if name == "bfloat16":  # numpy has no bfloat16
        return P.to_tensor(np.asarray(values, "float32")).astype(dtype or like.dtype)
    return P.to_tensor(np.asarray(values, name))


# ---------------------------------------------------------------------- boxes (x, p: [6, 4])
def _boxes(P):
    V = P.vision.ops

    def coder(code_type, axis=0):
        def fn(x, p):
            prior = _corners(P, p, 10.0)
            var = _const(P, [[0.1, 0.1, 0.2, 0.2]] * 6, x)
            if code_type == "encode_center_size":
                return V.box_coder(prior, var, _corners(P, x, 10.0), code_type="encode_center_size")
            return V.box_coder(prior, var, P.reshape(x, [1, 6, 4]) if axis == 0 else P.reshape(x, [6, 1, 4]),
                               code_type="decode_center_size", axis=axis)
        return fn

    def iou(x, p):
        a, b = _corners(P, x), _corners(P, p)
        if _pir(P):
            return P._C_ops.iou_similarity(a, b, True)
        return _legacy(P, "iou_similarity", {"X": a, "Y": b}, {"Out": x.dtype}, {"box_normalized": True})[0]

    def distribute(k):
        def fn(x, p):
            rois = _corners(P, x, 60.0)
            num = P.to_tensor([6], dtype="int32")
            multi, restore, nums = V.distribute_fpn_proposals(rois, 2, 4, 3, 56, rois_num=num)
            return (multi[0], restore, nums[1])[k]
        return fn

    def collect(k):
        def fn(x, p):
            return _collect(x, p)[k]
        return fn

    def _collect(x, p):
        rois = _corners(P, x, 30.0)
        scores = P.nn.functional.sigmoid(p[:, :1])
        lr, ls = P.split(rois, [2, 4]), P.split(scores, [2, 4])
        ln = [P.to_tensor([2], dtype="int32"), P.to_tensor([4], dtype="int32")]
        if _pir(P):
            return P._C_ops.collect_fpn_proposals(lr, ls, ln, 5)
        return _legacy(P, "collect_fpn_proposals",
                       {"MultiLevelRois": lr, "MultiLevelScores": ls, "MultiLevelRoIsNum": ln},
                       {"FpnRois": x.dtype, "RoisNum": "int32"}, {"post_nms_topN": 5})

    return [
        ("box_coder:decode", coder("decode_center_size")),
        ("box_coder:decode-axis1", coder("decode_center_size", 1)),
        ("box_coder:encode", coder("encode_center_size")),
        ("iou_similarity", iou),
        ("iou_similarity:static", iou),
        ("distribute_fpn_proposals", distribute(0)),
        ("distribute_fpn_proposals:restore", distribute(1)),
        ("distribute_fpn_proposals:count", distribute(2)),
        ("collect_fpn_proposals", collect(0)),
        ("collect_fpn_proposals:static", collect(0)),
        ("collect_fpn_proposals:static-count", collect(1)),
    ]


# ---------------------------------------------------------------------- images (x, p: [1, 8, 2, 2])
def _images(P):
    V = P.vision.ops

    def img(x):
        return P.tile(x, [1, 1, 8, 8])  # [1, 8, 16, 16]

    def anchor(x, p, k=0):
        a = dict(anchor_sizes=[4.0, 8.0], aspect_ratios=[0.5, 1.0], variances=[0.1, 0.1, 0.2, 0.2],
                 stride=[8.0, 8.0], offset=0.5)
        if _pir(P):
            return P._C_ops.anchor_generator(x, a["anchor_sizes"], a["aspect_ratios"], a["variances"],
                                             a["stride"], a["offset"])[k]
        return _legacy(P, "anchor_generator", {"Input": x}, {"Anchors": x.dtype, "Variances": x.dtype}, a)[k]

    def density(x, p, k=0):
        a = dict(variances=[0.1, 0.1, 0.2, 0.2], clip=True, flatten_to_2d=False, step_w=0.0, step_h=0.0,
                 offset=0.5, fixed_sizes=[4.0, 8.0], fixed_ratios=[1.0, 2.0], densities=[2, 1])
        if _pir(P):
            return P._C_ops.density_prior_box(x, img(x), a["variances"], a["clip"], a["flatten_to_2d"],
                                              a["step_w"], a["step_h"], a["offset"], a["fixed_sizes"],
                                              a["fixed_ratios"], a["densities"])[k]
        return _legacy(P, "density_prior_box", {"Input": x, "Image": img(x)},
                       {"Boxes": x.dtype, "Variances": x.dtype}, a)[k]

    def rois(x):
        return _const(P, [[0.5, 0.5, 12.0, 9.0], [2.0, 1.0, 15.0, 15.0], [4.0, 6.0, 7.0, 11.0]], x)

    def num():
        return P.to_tensor([3], dtype="int32")

    def psroi(x, p):
        if not _pir(P):  # Paddle 2.6's kernel kills the process (SIGSEGV in PsroiPoolKernel<float>)
            raise RuntimeError("psroi_pool is probed in Paddle 3 only")
        return V.psroi_pool(img(x), rois(x), num(), output_size=2)

    def yolo(k, **kw):
        def fn(x, p):
            size = P.to_tensor([[40, 30]], dtype="int32")
            return V.yolo_box(x, size, anchors=[10, 13], class_num=3, conf_thresh=0.01,
                              downsample_ratio=8, **kw)[k]
        return fn

    def yolo_iou(k):
        def fn(x, p):  # iou_aware: one IoU channel first, then 5 + 2 classes
            size = P.to_tensor([[40, 30]], dtype="int32")
            return V.yolo_box(x, size, anchors=[10, 13], class_num=2, conf_thresh=0.01, downsample_ratio=8,
                              clip_bbox=False, scale_x_y=1.2, iou_aware=True, iou_aware_factor=0.4)[k]
        return fn


    return [
        ("prior_box", lambda x, p: V.prior_box(x, img(x), min_sizes=[4.0], max_sizes=[8.0],
                                               aspect_ratios=[2.0], clip=True)[0]),
        ("prior_box:variances", lambda x, p: V.prior_box(x, img(x), min_sizes=[4.0], variance=[0.1, 0.2, 0.3, 0.4],
                                                         aspect_ratios=[2.0])[1]),
        ("prior_box:flip-steps", lambda x, p: V.prior_box(x, img(x), min_sizes=[3.0, 5.0], aspect_ratios=[2.0],
                                                          flip=True, steps=[8.0, 8.0], offset=0.3)[0]),
        ("anchor_generator", anchor),
        ("anchor_generator:static", anchor),
        ("anchor_generator:static-variances", lambda x, p: anchor(x, p, 1)),
        ("density_prior_box", density),
        ("density_prior_box:static", density),
        ("density_prior_box:static-variances", lambda x, p: density(x, p, 1)),
        ("roi_align", lambda x, p: V.roi_align(img(x), rois(x), num(), output_size=2, spatial_scale=0.5)),
        ("roi_align:aligned", lambda x, p: V.roi_align(img(x), rois(x), num(), output_size=(2, 3),
                                                       sampling_ratio=2, aligned=True)),
        ("roi_pool", lambda x, p: V.roi_pool(img(x), rois(x), num(), output_size=2)),
        ("psroi_pool", psroi),
        ("yolo_box", yolo(0)),
        ("yolo_box:scores", yolo(1)),
        ("yolo_box:iou-aware", yolo_iou(0)),
        ("yolo_box:iou-aware-scores", yolo_iou(1)),
    ]


# ---------------------------------------------------------------------- NMS (x, p: [1, 6, 4])
def _nms(P):
    V = P.vision.ops

    def inputs(x, p):
        boxes = _corners(P, x, 5.0)
        scores = P.nn.functional.sigmoid(P.transpose(p * 3.0 - 4.0, [0, 2, 1]))  # [1, 4 classes, 6]
        return boxes, scores

    def nms3(k, keep_top_k=-1):
        # (Paddle 3.3's predictor loses a fetch when two identical multiclass_nms3 ops feed the
        # outputs: the entries differ in keep_top_k)
        def fn(x, p):
            b, s = inputs(x, p)
            if _pir(P):
                return P._C_ops.multiclass_nms3(b, s, None, 0.3, -1, keep_top_k, 0.4, False, 1.0, 0)[k]
            return _legacy(P, "multiclass_nms3", {"BBoxes": b, "Scores": s},
                           {"Out": x.dtype, "Index": "int32", "NmsRoisNum": "int32"},
                           dict(score_threshold=0.3, nms_top_k=-1, keep_top_k=keep_top_k, nms_threshold=0.4,
                                normalized=False, nms_eta=1.0, background_label=0))[k]
        return fn

    def matrix(k, gaussian=False):
        def fn(x, p):
            b, s = inputs(x, p)
            out, n, idx = V.matrix_nms(b, s, 0.3, 0.1, 4, 4, use_gaussian=gaussian, background_label=-1,
                                       normalized=False, return_index=True, return_rois_num=True)
            return (out, idx, n)[k]
        return fn

    return [
        ("multiclass_nms3", nms3(0)),
        ("multiclass_nms3:static", nms3(0, 9)),
        ("multiclass_nms3:static-index", nms3(1, 8)),
        ("multiclass_nms3:static-count", nms3(2, 7)),
        ("matrix_nms", matrix(0)),
        ("matrix_nms:gaussian", matrix(0, True)),
        ("matrix_nms:index", matrix(1)),
        ("matrix_nms:count", matrix(2)),
    ]


# ---------------------------------------------------------------------- proposals (x, p: [1, 4, 2, 2])
def _proposals(P):
    V = P.vision.ops

    def gen(x, p, k=0):
        scores = P.nn.functional.sigmoid(p[:, :1])
        deltas = x * 0.1
        anchors = _const(P, [[[[0, 0, 8, 8]], [[8, 0, 16, 8]]], [[[0, 8, 8, 16]], [[8, 8, 16, 16]]]], x)
        var = _const(P, [[[[1.0, 1.0, 1.0, 1.0]]] * 2] * 2, x)
        size = _const(P, [[16.0, 16.0]], x)
        rois, probs, n = V.generate_proposals(scores, deltas, size, anchors, var, pre_nms_top_n=4,
                                              post_nms_top_n=3, nms_thresh=0.5, min_size=0.1,
                                              return_rois_num=True)
        return (rois, probs, n)[k]

    return [("generate_proposals", gen),
            ("generate_proposals:probs", lambda x, p: gen(x, p, 1)),
            ("generate_proposals:count", lambda x, p: gen(x, p, 2))]


for _group, _table, _shape in (("detbox", _boxes, (6, 4)), ("detimg", _images, (1, 8, 2, 2)),
                               ("detnms", _nms, (1, 6, 4)), ("detprop", _proposals, (1, 4, 2, 2))):
    register(__file__, _group, _table, _shape, DTYPES)


# ---------------------------------------------------------------------- quant (x, p: [2, 3, 4])
def _quant(P):
    def op(name, ins, attrs, pir_args, outs=("Out",), first=0):
        """``ins``: legacy slot -> tensor; ``pir_args``: the _C_ops arguments after the tensors."""
        def run():
            if _pir(P):
                res = getattr(P._C_ops, name)(*ins.values(), *pir_args)
                res = list(res) if isinstance(res, (list, tuple)) else [res]
                return res[first]
            dt = next(iter(ins.values())).dtype
            return _legacy(P, name, ins, {o: dt for o in outs}, attrs)[first]
        return run()

    def scalar(x, v):
        return _const(P, [v], x)

    def _weight(x):
        import numpy as np

        w = np.linspace(-2.0, 3.0, 24).reshape(2, 3, 4) * np.array([1.0, 0.5]).reshape(2, 1, 1)
        return _const(P, w.tolist(), x)

    def qdq(x, p, name, axis=-1, bits=8, rt=0):
        s = _const(P, [2.5], x) if axis < 0 else _const(P, [1.5, 2.0, 3.0], x)
        zp = _const(P, [0.0] * (1 if axis < 0 else 3), x)
        attrs = dict(quant_axis=axis, bit_length=bits, qmin=-(2 ** (bits - 1)), qmax=2 ** (bits - 1) - 1,
                     round_type=rt, is_test=True, only_observer=False)
        if _pir(P):
            out = getattr(P._C_ops, name)(x, s, zp, None, None, axis, bits, attrs["qmin"], attrs["qmax"], rt,
                                          True, False)
            return out[0] if isinstance(out, (list, tuple)) else out
        return _legacy(P, name, {"X": x, "Scale": s, "ZeroPoint": zp}, {"Y": x.dtype}, attrs)[0]

    def ma(x, p, name, outs):
        st = (scalar(x, 2.0), scalar(x, 1.0), scalar(x, 1.0))
        ins = {"X": x, "InScale": st[0], "InAccum": st[1], "InState": st[2]}
        return op(name, ins, dict(moving_rate=0.9, bit_length=8, is_test=True, round_type=1),
                  (0.9, 8, True, 1), outs)

    def dq_max_abs(x, p):
        q = P.round(P.clip(x * 20.0, -127.0, 127.0))
        return op("fake_dequantize_max_abs", {"X": q, "Scale": scalar(x, 2.0)}, {"max_range": 127.0}, (127.0,))

    def cw_dq(x, p):
        q = P.round(P.clip(x * 20.0, -127.0, 127.0))
        s = _const(P, [1.0, 2.0], x)
        attrs = {"quant_bits": [8], "quant_axis": 0, "x_num_col_dims": 1}
        if _pir(P):
            return P._C_ops.fake_channel_wise_dequantize_max_abs(q, [s], [8], 0, 1)
        return _legacy(P, "fake_channel_wise_dequantize_max_abs", {"X": q, "Scales": [s]}, {"Out": x.dtype},
                       attrs)[0]

    def range_abs_max(x, p):
        ins = {"X": x, "InScale": scalar(x, 2.0)}
        attrs = dict(window_size=10000, bit_length=8, is_test=True, round_type=1)
        return op("fake_quantize_range_abs_max", ins, attrs, (None, 10000, 8, True, 1), ("Out", "OutScale"))

    def ma_scale(x, p):
        ins = {"X": x, "InAccum": scalar(x, 1.0), "InState": scalar(x, 1.0)}
        return op("moving_average_abs_max_scale", ins, dict(moving_rate=0.9, is_test=True), (0.9, True),
                  ("Out", "OutScale"))

    return [
        ("quantize_linear+dequantize_linear:static", lambda x, p: qdq(qdq(x, p, "quantize_linear"), p,
                                                                      "dequantize_linear")),
        ("quantize_linear+dequantize_linear:static-axis0",
         lambda x, p: qdq(qdq(P.reshape(x, [3, 8]), p, "quantize_linear", 0), p, "dequantize_linear", 0)),
        ("quantize_linear:static-float", lambda x, p: qdq(x, p, "quantize_linear")),
        ("fake_quantize_dequantize_abs_max:static",
         lambda x, p: op("fake_quantize_dequantize_abs_max", {"X": x}, dict(bit_length=8, round_type=1), (8, 1),
                         ("Out", "OutScale"))),
        ("fake_quantize_abs_max:static",
         lambda x, p: op("fake_quantize_abs_max", {"X": x}, dict(bit_length=8, round_type=0), (8, 0),
                         ("Out", "OutScale"))),
        # per-channel scales come from X: a weight (constant), as in the models that carry it
        ("fake_channel_wise_quantize_dequantize_abs_max:static",
         lambda x, p: op("fake_channel_wise_quantize_dequantize_abs_max", {"X": _weight(x)},
                         dict(bit_length=8, round_type=1, quant_axis=0), (8, 1, 0), ("Out", "OutScale"))),
        # fake_channel_wise_quantize_abs_max is left out: Paddle's own predictor cannot run the
        # saved program (Paddle 3.3: "Tensor holds no memory"), which would skip the whole group
        ("fake_quantize_dequantize_moving_average_abs_max:static",
         lambda x, p: ma(x, p, "fake_quantize_dequantize_moving_average_abs_max",
                         ("Out", "OutScale", "OutState", "OutAccum"))),
        ("fake_quantize_moving_average_abs_max:static",
         lambda x, p: ma(x, p, "fake_quantize_moving_average_abs_max", ("Out", "OutScale", "OutState", "OutAccum"))),
        ("fake_dequantize_max_abs:static", dq_max_abs),
        ("fake_channel_wise_dequantize_max_abs:static", lambda x, p: cw_dq(P.reshape(x, [2, 12]), p)),
        ("fake_quantize_range_abs_max:static", range_abs_max),
        ("moving_average_abs_max_scale:static", ma_scale),
    ]


register(__file__, "detquant", _quant, (2, 3, 4), DTYPES)
