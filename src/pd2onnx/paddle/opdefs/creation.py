"""Tensor creation."""

from pd2onnx.paddle.opdefs import define

define(
    "full",
    " -> out",
    attrs={"shape": [], "value": 0.0, "dtype": "float32"},
    legacy="fill_constant",
    tensor={"shape": ("ShapeTensor", "ShapeTensorList"), "value": ("ValueTensor",)},
)
define("full_int_array", " -> out", attrs={"value": [], "dtype": "int64"}, legacy=())
