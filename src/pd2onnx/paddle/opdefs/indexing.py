"""Indexing: gather/scatter families, where/nonzero, topk/argsort and cumsum.

Facts checked against Paddle 3.3 (PIR op names, operands, attributes) and the legacy op
protos of Paddle 2.6 (``OpProtoHolder``). PIR keeps the gather axis, the topk ``k`` and the
cumsum axis as operands (usually from ``full``); legacy files keep them as attributes
(gather also has an optional ``Axis`` tensor, top_k/top_k_v2 an optional ``K`` tensor).
"""

from pd2onnx.paddle.opdefs import define

define("gather", "x index axis -> out", attrs={"axis": 0}, tensor={"axis": ("Axis",)})
define("gather_nd", "x index -> out")
define("index_select", "x index -> out", attrs={"axis": 0}, rename={"axis": "dim"})
define("index_sample", "x index -> out")
define(
    "take_along_axis",
    "arr indices -> out",
    attrs={"axis": 0},
    slots={"arr": "Input", "indices": "Index", "out": "Result"},
    rename={"axis": "Axis"},
)
define(
    "put_along_axis",
    "arr indices values -> out",
    attrs={"axis": 0, "reduce": "assign", "include_self": True},
    slots={"arr": "Input", "indices": "Index", "values": "Value", "out": "Result"},
    rename={"axis": "Axis", "reduce": "Reduce", "include_self": "Include_self"},
)
define("scatter", "x index updates -> out", attrs={"overwrite": True}, slots={"index": "Ids"})
define("scatter_nd_add", "x index updates -> out")
define("where", "condition x y -> out")
define("nonzero", "condition -> out", legacy="where_index")
# top_k (v1) has no axis/largest/sorted: the defaults below are its fixed behaviour.
define(
    "topk",
    "x k -> out indices",
    attrs={"k": 1, "axis": -1, "largest": True, "sorted": True},
    legacy=("top_k_v2", "top_k"),
    tensor={"k": ("K",)},
)
# Legacy argsort has no ``stable`` (Paddle 2.6 sorts small rows stably, large ones not).
define("argsort", "x -> out indices", attrs={"axis": -1, "descending": False, "stable": False})
define("cumsum", "x axis -> out", attrs={"axis": -1, "flatten": False, "exclusive": False, "reverse": False})
