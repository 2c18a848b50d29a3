"""Elementwise math: binary arithmetic, unary math functions, scale, clip, cast, add_n.

Facts checked against Paddle 3.3 (PIR op names/operands/attributes) and the legacy op
protos of Paddle 2.6 (``OpProtoHolder``). Legacy binary ops also carry ``axis`` (Y aligned
to X from ``axis``); it is not a PIR attribute and reaches the mapper as a legacy attribute.
"""

from pd2onnx.paddle.opdefs import define

# canonical name -> legacy op type
_BINARY = {
    "add": "elementwise_add",
    "subtract": "elementwise_sub",
    "multiply": "elementwise_mul",
    "divide": "elementwise_div",
    "floor_divide": "elementwise_floordiv",
    "remainder": "elementwise_mod",
    "maximum": "elementwise_max",
    "minimum": "elementwise_min",
    "elementwise_pow": "elementwise_pow",
}
for _name, _legacy in _BINARY.items():
    define(_name, "x y -> out", legacy=_legacy)

_UNARY = (
    "abs sign exp log log2 log10 log1p sqrt rsqrt square reciprocal floor ceil "
    "sin cos tan asin acos atan sinh cosh erf"
).split()
for _name in _UNARY:
    define(_name, "x -> out")

define("round", "x -> out", attrs={"decimals": 0})
define("atan2", "x y -> out", slots={"x": "X1", "y": "X2"})
# PIR: pow(x) with attribute y; legacy: attribute factor or tensor FactorTensor.
define("pow", "x y -> out", attrs={"y": 1.0}, rename={"y": "factor"}, tensor={"y": ("FactorTensor",)})
define(
    "scale",
    "x scale -> out",
    attrs={"scale": 1.0, "bias": 0.0, "bias_after_scale": True},
    tensor={"scale": ("ScaleTensor",)},
)
# PIR: min/max are operands (usually from full); legacy: attributes or tensors Min/Max.
define("clip", "x min max -> out", tensor={"min": ("Min",), "max": ("Max",)})
define("cast", "x -> out", attrs={"dtype": "float32"}, rename={"dtype": "out_dtype"})
# Legacy ``sum`` is add_n (canonical ``sum`` is the reduction, legacy ``reduce_sum``).
define("add_n", "inputs -> out", legacy="sum", slots={"inputs": "X"})
