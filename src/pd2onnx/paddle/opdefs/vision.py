"""Vision ops: interpolation (resize) and grid sampling."""

from pd2onnx.paddle.opdefs import define

# Precedence in Paddle's kernels: size_tensor > out_size > scale_tensor > scale > out_d/out_h/out_w.
_INTERP_ATTRS = {
    "data_format": "NCHW",
    "out_d": -1,
    "out_h": -1,
    "out_w": -1,
    "scale": [],
    "interp_method": "bilinear",
    "align_corners": True,
    "align_mode": 1,
}
for _method in ("nearest", "bilinear", "bicubic", "linear", "trilinear"):
    define(
        f"{_method}_interp",
        "x out_size size_tensor scale_tensor -> output",
        attrs={**_INTERP_ATTRS, "interp_method": _method},
        legacy=f"{_method}_interp_v2",
        slots={"scale_tensor": "Scale", "output": "Out"},
        rename={"data_format": "data_layout"},
    )

define(
    "grid_sample",
    "x grid -> out",
    attrs={"mode": "bilinear", "padding_mode": "zeros", "align_corners": True},
    legacy="grid_sampler",
    slots={"out": "Output"},
)
