"""Helpers for the nn case files (cases_nn/pool/norm): small Layers and raw ops.

Runs in both Paddle workers (3.3 writes PIR, 2.6 writes legacy files).
"""

from __future__ import annotations


def module(paddle, body, **children):
    """A Layer owning ``children`` (sublayers/parameters) whose forward is ``body(self, *xs)``.

    (``body`` is an attribute, not a closure: dy2static re-executes the method's source
    without its closure.)"""

    class Module(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            for name, child in children.items():
                setattr(self, name, child)

        def forward(self, x0, x1=None):
            return self._body(self, x0) if x1 is None else self._body(self, x0, x1)

    layer = Module()
    layer._body = body
    return layer


def is_pir(paddle) -> bool:
    return int(paddle.__version__.split(".")[0]) >= 3


def legacy_op(paddle, op_type, inputs, attrs, outputs=("Out",), dtype="float32"):
    """Append a raw legacy op in Paddle 2.x static mode; returns its output variables."""
    helper = paddle.base.layer_helper.LayerHelper(op_type)
    outs = {slot: [helper.create_variable_for_type_inference(dtype)] for slot in outputs}
    helper.append_op(type=op_type, inputs=inputs, outputs=outs, attrs=attrs)
    results = [outs[slot][0] for slot in outputs]
    return results[0] if len(results) == 1 else results


def scaled_param(paddle, rng, shape, scale=1.0, dtype="float32"):
    """A parameter with standard-normal values times ``scale``."""
    value = (rng.standard_normal(shape) * scale).astype(dtype)
    return paddle.create_parameter(shape, dtype, default_initializer=paddle.nn.initializer.Assign(value))


def raw_pool2d(paddle, x, kernel, pooling_type, global_pooling=False, adaptive=False):
    """pool2d with attributes the Python API does not expose (e.g. ``global_pooling``)."""
    args = dict(
        strides=[1, 1],
        paddings=[0, 0],
        ceil_mode=False,
        exclusive=True,
        data_format="NCHW",
        pooling_type=pooling_type,
        global_pooling=global_pooling,
        adaptive=adaptive,
        padding_algorithm="EXPLICIT",
    )
    if is_pir(paddle):
        return paddle._C_ops.pool2d(x, kernel, *args.values())
    return legacy_op(paddle, "pool2d", {"X": [x]}, {"ksize": kernel, **args})
