"""nn cases: batch_norm, layer_norm, instance_norm, group_norm.

Every normalization gets non-trivial statistics/affine parameters, so a conversion that
drops or misplaces one of them cannot pass.
"""

from harness.cases import case
from ops._nn_layers import module


def _x(rng, *shape, dtype="float32"):
    return (rng.standard_normal(shape) * 2.0 + 0.5).astype(dtype)


def _set(param, value):
    param.set_value(value.astype(str(param.numpy().dtype)))


def _affine(rng, layer, channels):
    """Random weight (around 1) and bias on a norm layer, where it has them."""
    if getattr(layer, "weight", None) is not None:
        _set(layer.weight, rng.uniform(0.5, 1.5, channels))
    if getattr(layer, "bias", None) is not None:
        _set(layer.bias, rng.standard_normal(channels) * 0.5)
    return layer


def _batch_norm(paddle, rng, layer, channels):
    _set(layer._mean, rng.standard_normal(channels))
    _set(layer._variance, rng.uniform(0.5, 3.0, channels))
    return _affine(rng, layer, channels)


# ---------------------------------------------------------------------------- batch_norm
@case("batch_norm", name="nn_batch_norm2d")
def nn_batch_norm2d(paddle, rng):
    return _batch_norm(paddle, rng, paddle.nn.BatchNorm2D(3), 3), [_x(rng, 2, 3, 4, 5)]


@case("batch_norm", name="nn_batch_norm2d_nhwc_dynamic")
def nn_batch_norm2d_nhwc_dynamic(paddle, rng):
    layer = paddle.nn.BatchNorm2D(4, epsilon=1e-3, data_format="NHWC")
    return _batch_norm(paddle, rng, layer, 4), [_x(rng, 2, 3, 5, 4)], [(None, None, None, 4)]


@case("batch_norm", name="nn_batch_norm1d_2d_input")
def nn_batch_norm1d_2d_input(paddle, rng):
    return _batch_norm(paddle, rng, paddle.nn.BatchNorm1D(5), 5), [_x(rng, 3, 5)]


@case("batch_norm", name="nn_batch_norm1d_nlc")
def nn_batch_norm1d_nlc(paddle, rng):
    layer = paddle.nn.BatchNorm1D(3, data_format="NLC")
    return _batch_norm(paddle, rng, layer, 3), [_x(rng, 2, 6, 3)]


@case("batch_norm", name="nn_batch_norm3d")
def nn_batch_norm3d(paddle, rng):
    return _batch_norm(paddle, rng, paddle.nn.BatchNorm3D(2), 2), [_x(rng, 1, 2, 3, 4, 2)]


@case("batch_norm", name="nn_batch_norm_global_stats")
def nn_batch_norm_global_stats(paddle, rng):
    layer = paddle.nn.BatchNorm2D(3, use_global_stats=True)
    return _batch_norm(paddle, rng, layer, 3), [_x(rng, 2, 3, 3, 3)]


@case("batch_norm", name="nn_batch_norm_no_affine")
def nn_batch_norm_no_affine(paddle, rng):
    """F.batch_norm without weight and bias (absent optional inputs)."""
    stats = paddle.nn.BatchNorm2D(3)
    _batch_norm(paddle, rng, stats, 3)

    def body(self, x):
        return paddle.nn.functional.batch_norm(x, self.bn._mean, self.bn._variance, training=False)

    return module(paddle, body, bn=stats), [_x(rng, 2, 3, 2, 4)]


# ---------------------------------------------------------------------------- layer_norm
@case("layer_norm", name="nn_layer_norm")
def nn_layer_norm(paddle, rng):
    return _affine(rng, paddle.nn.LayerNorm(8), 8), [_x(rng, 2, 3, 8)]


@case("layer_norm", name="nn_layer_norm_multi_axis")
def nn_layer_norm_multi_axis(paddle, rng):
    """begin_norm_axis 2 of a rank-4 input: scale/bias are flattened [4 * 5] in Paddle."""
    return _affine(rng, paddle.nn.LayerNorm([4, 5], epsilon=1e-4), 20), [_x(rng, 2, 3, 4, 5)]


@case("layer_norm", name="nn_layer_norm_no_affine_dynamic")
def nn_layer_norm_no_affine_dynamic(paddle, rng):
    layer = paddle.nn.LayerNorm(6, weight_attr=False, bias_attr=False)
    return layer, [_x(rng, 3, 4, 6)], [(None, None, 6)]


@case("layer_norm", name="nn_layer_norm_scale_only")
def nn_layer_norm_scale_only(paddle, rng):
    return _affine(rng, paddle.nn.LayerNorm([2, 3], bias_attr=False), 6), [_x(rng, 4, 2, 3)]


@case("layer_norm", name="nn_layer_norm_f64")
def nn_layer_norm_f64(paddle, rng):
    paddle.set_default_dtype("float64")
    try:
        layer = _affine(rng, paddle.nn.LayerNorm(5), 5)
    finally:
        paddle.set_default_dtype("float32")
    return layer, [_x(rng, 2, 5, dtype="float64")]


# ---------------------------------------------------------------------------- instance_norm
@case("instance_norm", name="nn_instance_norm2d")
def nn_instance_norm2d(paddle, rng):
    return _affine(rng, paddle.nn.InstanceNorm2D(3), 3), [_x(rng, 2, 3, 4, 5)]


@case("instance_norm", name="nn_instance_norm1d_no_affine")
def nn_instance_norm1d_no_affine(paddle, rng):
    layer = paddle.nn.InstanceNorm1D(4, epsilon=1e-3, weight_attr=False, bias_attr=False)
    return layer, [_x(rng, 2, 4, 7)], [(None, 4, None)]


@case("instance_norm", name="nn_instance_norm3d")
def nn_instance_norm3d(paddle, rng):
    return _affine(rng, paddle.nn.InstanceNorm3D(2), 2), [_x(rng, 1, 2, 3, 4, 3)]


# ---------------------------------------------------------------------------- group_norm
@case("group_norm", name="nn_group_norm")
def nn_group_norm(paddle, rng):
    return _affine(rng, paddle.nn.GroupNorm(2, 6), 6), [_x(rng, 2, 6, 3, 4)]


@case("group_norm", name="nn_group_norm_dynamic")
def nn_group_norm_dynamic(paddle, rng):
    layer = paddle.nn.GroupNorm(3, 6, epsilon=1e-3)
    return _affine(rng, layer, 6), [_x(rng, 2, 6, 5)], [(None, 6, None)]


@case("group_norm", name="nn_group_norm_no_affine")
def nn_group_norm_no_affine(paddle, rng):
    layer = paddle.nn.GroupNorm(2, 4, weight_attr=False, bias_attr=False)
    return layer, [_x(rng, 2, 4, 3, 3)]


@case("group_norm", name="nn_group_norm_nhwc")
def nn_group_norm_nhwc(paddle, rng):
    layer = paddle.nn.GroupNorm(2, 4, data_format="NHWC")
    return _affine(rng, layer, 4), [_x(rng, 2, 3, 3, 4)]


@case(
    "batch_norm",
    name="nn_batch_norm_batch_stats",
    formats=("pir",),
    why="legacy readers drop is_test (treated as noise), so a legacy training-mode batch_norm "
    "converts as inference",
)
def nn_batch_norm_batch_stats(paddle, rng):
    """batch_norm in training mode (is_test false) normalizes with the batch's statistics."""
    stats = paddle.nn.BatchNorm2D(3)
    _batch_norm(paddle, rng, stats, 3)

    def body(self, x):
        bn = self.bn
        return paddle.nn.functional.batch_norm(x, bn._mean, bn._variance, bn.weight, bn.bias, training=True)

    return module(paddle, body, bn=stats), [_x(rng, 2, 3, 2, 4)]
