"""Elementwise math."""

from pd2onnx.paddle.opdefs import define

define(
    "scale",
    "x scale -> out",
    attrs={"scale": 1.0, "bias": 0.0, "bias_after_scale": True},
    tensor={"scale": ("ScaleTensor",)},
)
