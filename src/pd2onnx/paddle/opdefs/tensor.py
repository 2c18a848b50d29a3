"""Shape manipulation: reshape, squeeze, concat, split, slice, expand, tile, flip, roll, ...

Legacy-only ops whose legacy name clashes with a different canonical op (``flatten`` v1 is
a 2-D flatten, ``expand`` v1 is a tile) get canonical names of their own (``flatten2``,
``expand_v1``), so they never reach the mapper of the op that only shares their name.
"""

from pd2onnx.paddle.opdefs import define

define(
    "reshape",
    "x shape -> out xshape",
    attrs={"shape": []},
    legacy=("reshape2", "reshape"),
    tensor={"shape": ("Shape", "ShapeTensor")},
)
define(
    "flatten", "x -> out xshape", attrs={"start_axis": 1, "stop_axis": 1}, legacy="flatten_contiguous_range"
)
define("flatten2", "x -> out xshape", attrs={"axis": 1}, legacy=("flatten2", "flatten"))
define(
    "squeeze",
    "x axis -> out xshape",
    attrs={"axis": []},
    legacy=("squeeze2", "squeeze"),
    rename={"axis": "axes"},
)
define(
    "unsqueeze",
    "x axis -> out xshape",
    attrs={"axis": []},
    legacy=("unsqueeze2", "unsqueeze"),
    rename={"axis": "axes"},
    tensor={"axis": ("AxesTensor", "AxesTensorList")},
)
define(
    "transpose",
    "x -> out xshape",
    attrs={"perm": []},
    legacy=("transpose2", "transpose"),
    rename={"perm": "axis"},
)
define("concat", "x axis -> out", attrs={"axis": 0}, tensor={"axis": ("AxisTensor",)})
# Legacy ``split`` also covers split_with_num: its legacy-only ``num`` attribute says which.
define(
    "split",
    "x sections axis -> out",
    attrs={"sections": [], "axis": 0},
    tensor={"sections": ("SectionsTensorList",), "axis": ("AxisTensor",)},
)
define("split_with_num", "x axis -> out", attrs={"num": 1, "axis": 0}, legacy=())
define("stack", "x -> out", attrs={"axis": 0}, slots={"out": "Y"})
define("unstack", "x -> out", attrs={"axis": 0, "num": 0}, slots={"out": "Y"})
define("unbind", "input -> out", attrs={"axis": 0}, slots={"input": "X"})
define(
    "slice",
    "input starts ends -> out",
    attrs={"axes": [], "starts": [], "ends": [], "infer_flags": [], "decrease_axis": []},
    tensor={"starts": ("StartsTensor", "StartsTensorList"), "ends": ("EndsTensor", "EndsTensorList")},
)
# Legacy strided_slice also carries ``decrease_axis`` and ``infer_flags`` (kept as they are).
define(
    "strided_slice",
    "x starts ends strides -> out",
    attrs={"axes": [], "starts": [], "ends": [], "strides": []},
    slots={"x": "Input"},
    tensor={
        "starts": ("StartsTensor", "StartsTensorList"),
        "ends": ("EndsTensor", "EndsTensorList"),
        "strides": ("StridesTensor", "StridesTensorList"),
    },
)
define(
    "expand",
    "x shape -> out",
    attrs={"shape": []},
    legacy="expand_v2",
    tensor={"shape": ("Shape", "expand_shapes_tensor")},
)
define(
    "expand_v1",
    "x expand_times -> out",
    attrs={"expand_times": []},
    legacy="expand",
    tensor={"expand_times": ("ExpandTimes", "expand_times_tensor")},
)
define("expand_as", "x y -> out", attrs={"target_shape": []}, legacy="expand_as_v2")
define(
    "tile",
    "x repeat_times -> out",
    attrs={"repeat_times": []},
    tensor={"repeat_times": ("RepeatTimes", "repeat_times_tensor")},
)
define("flip", "x -> out", attrs={"axis": []})
define("roll", "x shifts -> out", attrs={"shifts": [], "axis": []}, tensor={"shifts": ("ShiftsTensor",)})
# Legacy tril_triu keeps its ``lower`` attribute; the mapper reads it.
define("tril", "x -> out", attrs={"diagonal": 0}, legacy="tril_triu")
define("triu", "x -> out", attrs={"diagonal": 0}, legacy=())
define("meshgrid", "inputs -> out", slots={"inputs": "X"})
define("broadcast_tensors", "input -> out", slots={"input": "X"})
define("pixel_shuffle", "x -> out", attrs={"upscale_factor": 1, "data_format": "NCHW"})
define(
    "unfold",
    "x -> out",
    attrs={"kernel_sizes": [], "strides": [1, 1], "paddings": [0, 0, 0, 0], "dilations": [1, 1]},
    slots={"out": "Y"},
)
