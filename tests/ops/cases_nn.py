"""nn cases: convolutions, dropout, embedding, one_hot, padding."""

from harness.cases import case
from ops._nn_layers import legacy_op, module, scaled_param


def _x(rng, *shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------- conv
@case("conv2d", name="nn_conv2d_basic")
def nn_conv2d_basic(paddle, rng):
    return paddle.nn.Conv2D(3, 4, 3, bias_attr=False), [_x(rng, 1, 3, 8, 8)]


@case("conv2d", name="nn_conv2d_stride_dilation")
def nn_conv2d_stride_dilation(paddle, rng):
    conv = paddle.nn.Conv2D(3, 4, (3, 2), stride=(2, 1), padding=[1, 2], dilation=(2, 1), bias_attr=False)
    return conv, [_x(rng, 2, 3, 9, 10)]


@case("conv2d", name="nn_conv2d_pad4")
def nn_conv2d_pad4(paddle, rng):
    return paddle.nn.Conv2D(3, 4, 3, stride=2, padding=[1, 0, 2, 1], bias_attr=False), [_x(rng, 1, 3, 8, 9)]


@case("conv2d", name="nn_conv2d_pad_pairs")
def nn_conv2d_pad_pairs(paddle, rng):
    conv = paddle.nn.Conv2D(3, 4, 3, padding=[[0, 0], [0, 0], [2, 0], [1, 2]], bias_attr=False)
    return conv, [_x(rng, 1, 3, 6, 7)]


@case("conv2d", name="nn_conv2d_same")
def nn_conv2d_same(paddle, rng):
    """SAME ignores dilations in Paddle."""
    conv = paddle.nn.Conv2D(3, 4, 3, stride=2, padding="SAME", dilation=2, bias_attr=False)
    return conv, [_x(rng, 1, 3, 7, 10)]


@case("conv2d", name="nn_conv2d_same_dynamic")
def nn_conv2d_same_dynamic(paddle, rng):
    conv = paddle.nn.Conv2D(3, 4, 4, stride=3, padding="SAME", bias_attr=False)
    return conv, [_x(rng, 2, 3, 7, 11)], [(None, 3, None, None)]


@case("conv2d", name="nn_conv2d_valid")
def nn_conv2d_valid(paddle, rng):
    conv = paddle.nn.Conv2D(3, 4, 3, stride=2, padding="VALID", bias_attr=False)
    return conv, [_x(rng, 1, 3, 8, 9)]


@case("conv2d", name="nn_conv2d_groups")
def nn_conv2d_groups(paddle, rng):
    return paddle.nn.Conv2D(4, 6, 3, groups=2, padding=1, bias_attr=False), [_x(rng, 1, 4, 6, 6)]


@case("depthwise_conv2d", name="nn_depthwise_conv2d")
def nn_depthwise_conv2d(paddle, rng):
    return paddle.nn.Conv2D(4, 8, 3, groups=4, padding=1, bias_attr=False), [_x(rng, 1, 4, 6, 6)]


@case("conv2d", name="nn_conv2d_nhwc")
def nn_conv2d_nhwc(paddle, rng):
    conv = paddle.nn.Conv2D(3, 4, 3, stride=2, padding="SAME", data_format="NHWC", bias_attr=False)
    return conv, [_x(rng, 1, 7, 8, 3)]


@case("conv2d", name="nn_conv2d_runtime_filter")
def nn_conv2d_runtime_filter(paddle, rng):
    """The filter is a model input, not a parameter."""
    return (lambda x, w: paddle.nn.functional.conv2d(x, w, padding=1)), [
        _x(rng, 1, 2, 5, 5),
        _x(rng, 3, 2, 3, 3),
    ]


@case("conv2d", "add", name="nn_conv2d_bias")
def nn_conv2d_bias(paddle, rng):
    return paddle.nn.Conv2D(3, 4, 3, padding=1), [_x(rng, 1, 3, 6, 6)]


@case("conv3d", name="nn_conv3d")
def nn_conv3d(paddle, rng):
    conv = paddle.nn.Conv3D(2, 3, 3, stride=(1, 2, 2), padding=[1, 0, 1], bias_attr=False)
    return conv, [_x(rng, 1, 2, 5, 6, 7)]


@case("conv3d", name="nn_conv3d_ndhwc")
def nn_conv3d_ndhwc(paddle, rng):
    conv = paddle.nn.Conv3D(2, 3, 2, padding="SAME", data_format="NDHWC", bias_attr=False)
    return conv, [_x(rng, 1, 3, 5, 4, 2)]


# ---------------------------------------------------------------------------- conv transpose
@case("conv2d_transpose", name="nn_conv2d_transpose")
def nn_conv2d_transpose(paddle, rng):
    conv = paddle.nn.Conv2DTranspose(3, 4, 3, stride=2, padding=1, output_padding=1, bias_attr=False)
    return conv, [_x(rng, 1, 3, 5, 6)]


@case("conv2d_transpose", name="nn_conv2d_transpose_pad4_dilation")
def nn_conv2d_transpose_pad4_dilation(paddle, rng):
    conv = paddle.nn.Conv2DTranspose(
        3, 2, (3, 2), stride=(2, 3), padding=[1, 0, 2, 1], dilation=(2, 1), bias_attr=False
    )
    return conv, [_x(rng, 1, 3, 4, 5)]


@case("conv2d_transpose", name="nn_conv2d_transpose_same")
def nn_conv2d_transpose_same(paddle, rng):
    conv = paddle.nn.Conv2DTranspose(3, 4, 3, stride=2, padding="SAME", dilation=2, bias_attr=False)
    return conv, [_x(rng, 1, 3, 7, 6)]


@case("conv2d_transpose", name="nn_conv2d_transpose_valid")
def nn_conv2d_transpose_valid(paddle, rng):
    conv = paddle.nn.Conv2DTranspose(3, 4, 3, stride=2, padding="VALID", bias_attr=False)
    return conv, [_x(rng, 1, 3, 4, 5)]


@case("conv2d_transpose", name="nn_conv2d_transpose_groups")
def nn_conv2d_transpose_groups(paddle, rng):
    conv = paddle.nn.Conv2DTranspose(4, 6, 3, stride=2, groups=2, padding=1, bias_attr=False)
    return conv, [_x(rng, 1, 4, 4, 4)]


@case("depthwise_conv2d_transpose", name="nn_depthwise_conv2d_transpose")
def nn_depthwise_conv2d_transpose(paddle, rng):
    conv = paddle.nn.Conv2DTranspose(4, 4, 3, stride=2, groups=4, padding=1, bias_attr=False)
    return conv, [_x(rng, 1, 4, 4, 5)]


@case("conv2d_transpose", name="nn_conv2d_transpose_nhwc")
def nn_conv2d_transpose_nhwc(paddle, rng):
    conv = paddle.nn.Conv2DTranspose(3, 2, 3, stride=2, padding=1, data_format="NHWC", bias_attr=False)
    return conv, [_x(rng, 1, 4, 5, 3)]


def _transpose_with_size(paddle, rng, size, shapes=None, x1=None):
    """conv2d_transpose(stride 2, padding 1) to ``size`` (a list or the second input)."""
    w = scaled_param(paddle, rng, [3, 2, 3, 3], 0.3)

    def forward(self, x, out_size=None):
        return paddle.nn.functional.conv2d_transpose(
            x, self.w, stride=2, padding=1, output_size=size if out_size is None else out_size
        )

    inputs = [_x(rng, 1, 3, 4, 5)] + ([x1] if x1 is not None else [])
    return module(paddle, forward, w=w), inputs, shapes


@case("conv2d_transpose", name="nn_conv2d_transpose_output_size")
def nn_conv2d_transpose_output_size(paddle, rng):
    return _transpose_with_size(paddle, rng, [8, 10])


@case("conv2d_transpose", name="nn_conv2d_transpose_output_size_dynamic")
def nn_conv2d_transpose_output_size_dynamic(paddle, rng):
    """Static output_size, dynamic input size: computed wide and cropped."""
    return _transpose_with_size(paddle, rng, [8, 9], [(None, 3, None, None)])


@case(
    "conv2d_transpose",
    name="nn_conv2d_transpose_output_size_tensor",
    opsets=(10, 17, 21),
    why="a runtime output_size is cropped with Slice, which takes runtime bounds from opset 10",
)
def nn_conv2d_transpose_output_size_tensor(paddle, rng):
    import numpy as np

    return _transpose_with_size(paddle, rng, None, x1=np.array([8, 10], dtype="int32"))


@case("conv3d_transpose", name="nn_conv3d_transpose")
def nn_conv3d_transpose(paddle, rng):
    conv = paddle.nn.Conv3DTranspose(2, 3, 3, stride=2, padding=1, output_padding=1, bias_attr=False)
    return conv, [_x(rng, 1, 2, 3, 4, 3)]


@case("conv2d_transpose", "depthwise_conv2d_transpose", "conv3d_transpose", name="nn_conv_transpose_f64")
def nn_conv_transpose_f64(paddle, rng):
    """float64: ONNX Runtime has no double ConvTranspose kernel, so pd2onnx computes it in
    float32 (the comparison's tolerance covers float32 rounding)."""
    f = paddle.nn.functional

    def fn(x, w, x3, w3):
        return (
            f.conv2d_transpose(x, w, stride=2, padding=1, output_padding=1),
            f.conv2d_transpose(x, w[:, :1, :2, :2], stride=2, groups=3),
            f.conv3d_transpose(x3, w3, stride=[1, 2, 1], padding=[0, 1, 1]),
        )

    d = "float64"
    return fn, [_x(rng, 1, 3, 4, 5, dtype=d), _x(rng, 3, 2, 3, 3, dtype=d), _x(rng, 1, 2, 3, 3, 4, dtype=d), _x(rng, 2, 3, 2, 3, 3, dtype=d)]


# ---------------------------------------------------------------------------- dropout
@case("dropout", name="nn_dropout_upscale")
def nn_dropout_upscale(paddle, rng):
    return (lambda x: paddle.nn.functional.dropout(x, 0.3, training=False) * 2.0), [_x(rng, 2, 5)]


@case("dropout", name="nn_dropout_downscale")
def nn_dropout_downscale(paddle, rng):
    return paddle.nn.Dropout(0.3, mode="downscale_in_infer"), [_x(rng, 2, 3, 5)]


@case("dropout", name="nn_dropout_downscale_f64")
def nn_dropout_downscale_f64(paddle, rng):
    return paddle.nn.Dropout(0.1, mode="downscale_in_infer"), [_x(rng, 4, 5, dtype="float64")]


# ---------------------------------------------------------------------------- embedding
def _ids(rng, shape, vocab, dtype="int64", include=()):
    ids = rng.integers(0, vocab, shape).astype(dtype)
    for k, v in enumerate(include):
        ids.reshape(-1)[k] = v
    return ids


@case("embedding", name="nn_embedding")
def nn_embedding(paddle, rng):
    return paddle.nn.Embedding(10, 4), [_ids(rng, (2, 3), 10)]


@case("embedding", name="nn_embedding_padding_idx")
def nn_embedding_padding_idx(paddle, rng):
    return paddle.nn.Embedding(10, 4, padding_idx=2), [_ids(rng, (2, 5), 10, include=(2, 3, 2))]


@case("embedding", name="nn_embedding_negative_padding_idx")
def nn_embedding_negative_padding_idx(paddle, rng):
    """padding_idx -3 means row 7 of 10."""
    return paddle.nn.Embedding(10, 3, padding_idx=-3), [_ids(rng, (3, 4), 10, "int32", include=(7, 1, 7))]


@case("embedding", name="nn_embedding_dynamic")
def nn_embedding_dynamic(paddle, rng):
    return (
        paddle.nn.Embedding(6, 5, padding_idx=0),
        [_ids(rng, (2, 3, 2), 6, include=(0,))],
        [(None, None, 2)],
    )


@case(
    "embedding",
    name="nn_lookup_table_v1",
    formats=("legacy",),
    why="lookup_table (v1) exists only in legacy programs",
)
def nn_lookup_table_v1(paddle, rng):
    w = scaled_param(paddle, rng, [8, 3])

    def forward(self, ids):
        return legacy_op(paddle, "lookup_table", {"Ids": [ids], "W": [self.w]}, {"padding_idx": 5})

    return module(paddle, forward, w=w), [_ids(rng, (4, 1), 8, include=(5,))]


# ---------------------------------------------------------------------------- one_hot
@case("one_hot", name="nn_one_hot")
def nn_one_hot(paddle, rng):
    return (lambda x: paddle.nn.functional.one_hot(x, 5)), [_ids(rng, (2, 3), 5)]


@case("one_hot", name="nn_one_hot_int32_dynamic")
def nn_one_hot_int32_dynamic(paddle, rng):
    return (lambda x: paddle.nn.functional.one_hot(x, 7)), [_ids(rng, (4,), 7, "int32")], [(None,)]


@case(
    "one_hot",
    name="nn_one_hot_depth_tensor",
    opsets=(9, 17, 21),
    why="a runtime depth needs OneHot (opset 9)",
)
def nn_one_hot_depth_tensor(paddle, rng):
    """Depth from a model input (legacy: the depth_tensor slot)."""
    import numpy as np

    return (lambda x, d: paddle.nn.functional.one_hot(x, d)), [_ids(rng, (2, 3), 4), np.array([6], "int32")]


# ---------------------------------------------------------------------------- pad
@case("pad", name="nn_pad_all_dims")
def nn_pad_all_dims(paddle, rng):
    """A pad of length 2 * rank pads every dim (before/after pairs from dim 0)."""
    return (lambda x: paddle.nn.functional.pad(x, [1, 0, 0, 2, 1, 1, 2, 0], value=0.5)), [_x(rng, 1, 2, 3, 3)]


@case("pad3d", name="nn_pad_constant_2d")
def nn_pad_constant_2d(paddle, rng):
    return (lambda x: paddle.nn.functional.pad(x, [1, 2, 0, 3], value=-1.5)), [_x(rng, 1, 2, 3, 4)]


@case("pad3d", name="nn_pad_reflect_nhwc")
def nn_pad_reflect_nhwc(paddle, rng):
    return (lambda x: paddle.nn.functional.pad(x, [1, 2, 2, 1], mode="reflect", data_format="NHWC")), [
        _x(rng, 1, 4, 5, 2)
    ]


@case("pad3d", name="nn_pad_replicate_3d")
def nn_pad_replicate_3d(paddle, rng):
    return (
        lambda x: paddle.nn.functional.pad(x, [1, 0, 0, 2, 2, 1], mode="replicate", data_format="NCDHW")
    ), [_x(rng, 1, 2, 3, 3, 4)]


@case("pad3d", name="nn_pad_circular")
def nn_pad_circular(paddle, rng):
    return (lambda x: paddle.nn.functional.pad(x, [2, 1, 0, 3], mode="circular")), [_x(rng, 1, 2, 4, 5)]


@case("pad3d", name="nn_pad_circular_ndhwc")
def nn_pad_circular_ndhwc(paddle, rng):
    pads = [1, 1, 2, 0, 0, 1]
    return (lambda x: paddle.nn.functional.pad(x, pads, mode="circular", data_format="NDHWC")), [
        _x(rng, 1, 2, 3, 4, 2)
    ]


@case("pad3d", name="nn_pad_circular_1d_dynamic")
def nn_pad_circular_1d_dynamic(paddle, rng):
    return (
        (lambda x: paddle.nn.functional.pad(x, [2, 3], mode="circular", data_format="NCL")),
        [_x(rng, 2, 3, 5)],
        [(None, 3, None)],
    )


@case("pad3d", name="nn_pad_runtime_paddings", opsets=(11, 17, 21), why="runtime paddings need Pad-11")
def nn_pad_runtime_paddings(paddle, rng):
    import numpy as np

    fn = lambda x, p: paddle.nn.functional.pad(x, p, mode="reflect")  # noqa: E731
    return fn, [_x(rng, 1, 2, 4, 5), np.array([1, 2, 3, 0], "int32")]


@case("pad3d", name="nn_pad_runtime_constant", opsets=(11, 17, 21), why="runtime paddings need Pad-11")
def nn_pad_runtime_constant(paddle, rng):
    import numpy as np

    fn = lambda x, p: paddle.nn.functional.pad(x, p, value=2.0)  # noqa: E731
    return fn, [_x(rng, 1, 2, 3, 4), np.array([0, 1, 2, 1], "int32")]


# ---------------------------------------------------------------------------- with bias / 1-D
@case("conv2d_transpose", "add", name="nn_conv2d_transpose_bias")
def nn_conv2d_transpose_bias(paddle, rng):
    return paddle.nn.Conv2DTranspose(3, 2, 3, stride=2), [_x(rng, 1, 3, 4, 4)]


@case("conv3d_transpose", "add", name="nn_conv3d_transpose_bias")
def nn_conv3d_transpose_bias(paddle, rng):
    """Paddle 2.6 adds this bias with elementwise_add(axis=1)."""
    return paddle.nn.Conv3DTranspose(2, 3, 2, stride=2), [_x(rng, 1, 2, 2, 3, 2)]


@case("depthwise_conv2d", "add", name="nn_depthwise_conv2d_bias")
def nn_depthwise_conv2d_bias(paddle, rng):
    return paddle.nn.Conv2D(3, 3, 3, groups=3, padding="SAME"), [_x(rng, 2, 3, 5, 5)]


@case("conv2d", "unsqueeze", "squeeze", name="nn_conv1d")
def nn_conv1d(paddle, rng):
    """Conv1D is written as unsqueeze + conv2d + squeeze."""
    return paddle.nn.Conv1D(3, 4, 3, stride=2, padding=1, bias_attr=False), [_x(rng, 2, 3, 9)]
