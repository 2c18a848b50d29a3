"""Comparison, logical and bitwise ops, and the isnan/isinf/isfinite tests.

Legacy comparisons carry ``axis`` (like elementwise ops) and ``force_cpu``; the elementwise
isnan/isinf/isfinite are ``*_v2`` in legacy files; plain legacy ``isnan``/``isinf`` are the
old ops answering for the whole tensor (fluid's ``has_nan``/``has_inf``), legacy-only.
"""

from pd2onnx.paddle.opdefs import define

for _name in (
    "equal not_equal less_than less_equal greater_than greater_equal "
    "logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor"
).split():
    define(_name, "x y -> out")

for _name in ("logical_not", "bitwise_not"):
    define(_name, "x -> out")

for _name in ("isnan", "isinf", "isfinite"):
    define(_name, "x -> out", legacy=f"{_name}_v2")

# Legacy-only reducing tests: Out (shape [1]) = any element NaN / infinite.
define("has_nan", "x -> out", legacy="isnan")
define("has_inf", "x -> out", legacy="isinf")
