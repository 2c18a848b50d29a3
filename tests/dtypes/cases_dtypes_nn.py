"""The dtype matrix's nn tables: convolutions (transposed, depthwise, 3-D, deformable), the
nn layers (dropout, fold, lp_pool2d, lrn, maxout, pad3d, pixel_unshuffle, temporal_shift,
affine_channel), batch_norm/data_norm, 3-D and with-index pooling and the linear, bicubic
and trilinear interpolations.

Every group takes x (any sign) and p (positive) of shape (1, 2, 4, 4): an NCHW image with two
channels; weights and statistics are slices of p (or x), 5-D inputs are reshapes. Ops that
only Paddle 2.6's legacy programs hold (lrn, data_norm, affine_channel there) are appended by
hand in ``static`` entries (PIR has builders for affine_channel only).
"""

from __future__ import annotations

from harness.dtype_matrix import DTYPES, register

SHAPE = (1, 2, 4, 4)


def _pir(P) -> bool:
    return int(P.__version__.split(".")[0]) >= 3


def _legacy_op(P, op_type, inputs, attrs, outputs, dtype):
    """A raw legacy op appended to the current static program (Paddle 2.x)."""
    helper = P.base.layer_helper.LayerHelper(op_type)
    outs = {slot: [helper.create_variable_for_type_inference(dtype)] for slot in outputs}
    helper.append_op(type=op_type, inputs=inputs, outputs=outs, attrs=attrs)
    return [outs[slot][0] for slot in outputs]


def _w(P, p, shape):
    """Eight positive weights from p, in ``shape``."""
    return P.reshape(p[0, :, :2, :2], shape)


def _vol(P, t):
    return P.reshape(t, [1, 2, 2, 2, 4])


def _conv(P):
    F = P.nn.functional
    return [
        ("conv2d_transpose", lambda x, p: F.conv2d_transpose(x, _w(P, p, [2, 1, 2, 2]))),
        ("conv2d_transpose:stride-pad", lambda x, p: F.conv2d_transpose(
            x, _w(P, p, [2, 2, 1, 2]), stride=2, padding=[0, 1], output_padding=1)),
        ("depthwise_conv2d+conv2d:groups", lambda x, p: F.conv2d(x, _w(P, p, [2, 1, 2, 2]), groups=2)),
        ("depthwise_conv2d+conv2d:groups-pad", lambda x, p: F.conv2d(
            x, _w(P, p, [4, 1, 1, 2]), stride=[1, 2], padding=1, groups=2)),
        ("depthwise_conv2d_transpose+conv2d_transpose:groups",
         lambda x, p: F.conv2d_transpose(x, _w(P, p, [2, 1, 2, 2]), groups=2)),
        ("conv3d", lambda x, p: F.conv3d(_vol(P, x), _w(P, p, [1, 2, 2, 2, 1]))),
        ("conv3d:pad-dilation", lambda x, p: F.conv3d(_vol(P, x), _w(P, p, [2, 1, 1, 2, 2]),
                                                      padding=1, dilation=[1, 1, 2], groups=2)),
        ("conv3d_transpose", lambda x, p: F.conv3d_transpose(_vol(P, x), _w(P, p, [2, 1, 2, 2, 1]))),
        ("conv3d_transpose:stride", lambda x, p: F.conv3d_transpose(_vol(P, x), _w(P, p, [2, 1, 1, 2, 2]),
                                                                    stride=2, padding=[0, 1, 0])),
    ]


def _affine_channel(P, x, p):
    scale, bias = p[0, :, 0, 0], x[0, :, 1, 1]
    if _pir(P):
        return P._C_ops.affine_channel(x, scale, bias, "NCHW")
    return _legacy_op(P, "affine_channel", {"X": [x], "Scale": [scale], "Bias": [bias]},
                      {"data_layout": "NCHW"}, ["Out"], x.dtype)[0]


def _lrn(P, x, k):
    attrs = {"n": 3, "k": 1.0, "alpha": 0.1, "beta": 0.75, "data_format": "AnyLayout"}
    return _legacy_op(P, "lrn", {"X": [x]}, attrs, ["Out", "MidOut"], x.dtype)[k]


def _layers(P):
    F = P.nn.functional
    return [
        ("dropout:downscale", lambda x, p: F.dropout(x, 0.25, training=False, mode="downscale_in_infer")),
        ("dropout:upscale", lambda x, p: F.dropout(x, 0.25, training=False)),
        ("maxout", lambda x, p: F.maxout(x, 2, axis=1)),
        ("maxout:last", lambda x, p: F.maxout(x, 2, axis=-1)),
        ("pad3d:reflect", lambda x, p: F.pad(x, [1, 1, 2, 0], mode="reflect")),
        ("pad3d:replicate", lambda x, p: F.pad(x, [0, 2, 1, 1], mode="replicate")),
        ("pad3d:circular", lambda x, p: F.pad(x, [1, 0, 0, 2], mode="circular")),
        ("pad3d:constant-5d", lambda x, p: F.pad(_vol(P, x), [1, 0, 0, 1, 1, 1], mode="constant", value=2.0,
                                                      data_format="NCDHW")),
        ("pixel_unshuffle", lambda x, p: F.pixel_unshuffle(x, 2)),
        ("temporal_shift", lambda x, p: F.temporal_shift(P.reshape(x, [2, 4, 2, 2]), seg_num=2, shift_ratio=0.25)),
        ("lp_pool2d", lambda x, p: F.lp_pool2d(x, 2, 2)),
        ("lp_pool2d:p3", lambda x, p: F.lp_pool2d(p, 3, [2, 3], stride=1, padding=1)),
        ("affine_channel:static", lambda x, p: _affine_channel(P, x, p)),
        ("lrn:static", lambda x, p: _lrn(P, x, 0)),
        ("lrn:static-mid", lambda x, p: _lrn(P, x, 1)),
    ]


def _fold(P):
    """fold needs opset 18 (Col2Im): its own group."""
    F = P.nn.functional
    return [
        ("fold", lambda x, p: F.fold(P.reshape(x, [1, 8, 4]), [3, 3], 2)),
        ("fold:stride-pad", lambda x, p: F.fold(P.reshape(x, [1, 8, 4]), [3, 3], 2, strides=2, paddings=1)),
    ]


def _deform(P):
    """deformable_conv needs opset 19 (DeformConv): its own group."""

    def offset(x):
        return P.tile(P.tanh(x[:, :, :3, :3]), [1, 4, 1, 1])

    def mask(p):
        return P.nn.functional.sigmoid(P.tile(p[:, :, 1:, 1:], [1, 2, 1, 1]))

    dc = P.vision.ops.deform_conv2d
    return [
        ("deformable_conv", lambda x, p: dc(x, offset(x), _w(P, p, [1, 2, 2, 2]))),
        ("deformable_conv:mask", lambda x, p: dc(x, offset(x), _w(P, p, [1, 2, 2, 2]), mask=mask(p))),
    ]


def _batch_norm(P, x, p, nhwc=False):
    # scaled copies, not slices: Paddle 2.6's dy2static refuses a view as the (in-place) running mean/var
    mean, var = P.scale(x[0, :, 1, 2], 1.0), P.scale(p[0, :, 0, 0], 1.0)
    weight, bias = p[0, :, 1, 1], x[0, :, 2, 3]
    if nhwc:
        x = P.transpose(x, [0, 2, 3, 1])
    return P.nn.functional.batch_norm(x, mean, var, weight, bias, training=False,
                                      data_format="NHWC" if nhwc else "NCHW")


def _data_norm(P, x, p, k):
    x2 = P.reshape(x, [8, 4])
    inputs = {"X": [x2], "BatchSize": [P.reshape(p, [8, 4])[0] * 10.0],
              "BatchSum": [P.reshape(x, [8, 4])[1]], "BatchSquareSum": [P.reshape(p, [8, 4])[2] * 20.0]}
    attrs = {"epsilon": 1e-4, "slot_dim": -1, "enable_scale_and_shift": False, "data_layout": "NCHW"}
    return _legacy_op(P, "data_norm", inputs, attrs, ["Y", "Means", "Scales"], x.dtype)[k]


def _norm(P):
    return [
        ("batch_norm", lambda x, p: _batch_norm(P, x, p)),
        ("batch_norm:nhwc", lambda x, p: _batch_norm(P, x, p, nhwc=True)),
        ("data_norm:static", lambda x, p: _data_norm(P, x, p, 0)),
        ("data_norm:static-means", lambda x, p: _data_norm(P, x, p, 1)),
        ("data_norm:static-scales", lambda x, p: _data_norm(P, x, p, 2)),
    ]


def _pool(P):
    F = P.nn.functional
    return [
        ("max_pool2d_with_index", lambda x, p: F.max_pool2d(x, 2, 2, return_mask=True)[0]),
        ("max_pool2d_with_index:mask", lambda x, p: F.max_pool2d(x, 2, 1, padding=1, return_mask=True)[1]),
        ("max_pool2d_with_index:adaptive", lambda x, p: F.adaptive_max_pool2d(x, [3, 2], return_mask=True)[0]),
        ("max_pool2d_with_index:adaptive-mask", lambda x, p: F.adaptive_max_pool2d(x, [3, 2], return_mask=True)[1]),
        ("max_pool3d_with_index", lambda x, p: F.max_pool3d(_vol(P, x), 2, 1, return_mask=True)[0]),
        ("max_pool3d_with_index:mask", lambda x, p: F.max_pool3d(_vol(P, x), [1, 2, 2], 1, return_mask=True)[1]),
        ("max_pool3d_with_index:adaptive", lambda x, p: F.adaptive_max_pool3d(_vol(P, x), [1, 2, 3],
                                                                               return_mask=True)[0]),
        ("pool3d:avg", lambda x, p: F.avg_pool3d(_vol(P, x), 2, 1)),
        ("pool3d:avg-pad", lambda x, p: F.avg_pool3d(_vol(P, x), 2, 2, padding=1, exclusive=False)),
        ("pool3d:max", lambda x, p: F.max_pool3d(_vol(P, x), [2, 1, 2], 1)),
        ("pool3d:adaptive-avg", lambda x, p: F.adaptive_avg_pool3d(_vol(P, x), [1, 2, 3])),
        ("pool3d:global-max", lambda x, p: F.adaptive_max_pool3d(_vol(P, x), 1)),
        ("pool3d:global-avg", lambda x, p: F.adaptive_avg_pool3d(_vol(P, x), 1)),
    ]


def _interp(P):
    F = P.nn.functional

    def line(t):
        return P.reshape(t, [1, 4, 8])

    return [
        ("bicubic_interp", lambda x, p: F.interpolate(x, size=[5, 7], mode="bicubic")),
        ("bicubic_interp:align", lambda x, p: F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=True)),
        ("linear_interp", lambda x, p: F.interpolate(line(x), size=[11], mode="linear", data_format="NCW")),
        ("linear_interp:align-mode1", lambda x, p: F.interpolate(line(x), scale_factor=2, mode="linear",
                                                                 align_corners=False, align_mode=1, data_format="NCW")),
        ("trilinear_interp", lambda x, p: F.interpolate(_vol(P, x), size=[3, 3, 5], mode="trilinear",
                                                        data_format="NCDHW")),
        ("trilinear_interp:align", lambda x, p: F.interpolate(_vol(P, x), scale_factor=2, mode="trilinear",
                                                              align_corners=True, data_format="NCDHW")),
        ("bilinear_interp:align", lambda x, p: F.interpolate(x, size=[3, 6], mode="bilinear", align_corners=True)),
    ]


for _group, _table in {
    "nnconv": _conv,
    "nnlayer": _layers,
    "nnfold": _fold,
    "nndeform": _deform,
    "nnnorm": _norm,
    "nnpool": _pool,
    "nninterp": _interp,
}.items():
    register(__file__, _group, _table, SHAPE, DTYPES)
