"""Reductions: sum/mean/max/min/prod/all/any, logsumexp, p_norm, argmax/argmin.

PIR: ``sum(x, axis: IntArray, dtype, keepdim)``; mean/max/min take ``axis`` as an operand
too, ``prod`` adds ``reduce_all``; all/any/logsumexp keep ``axis`` an attribute. Legacy
``reduce_*`` ops spell them ``dim``/``keep_dim`` (plus ``reduce_all``, ``in_dtype``,
``out_dtype``); their ``dim`` may also be a variable attribute (a value name) in Paddle 2.x
files. Legacy ``sum`` is ``add_n`` (elementwise family); legacy ``mean`` is ``mean_all``.
"""

from pd2onnx.paddle.opdefs import define

_AXIS_TENSORS = {"axis": ("AxisTensor", "AxisTensorList")}

define(
    "sum",
    "x axis -> out",
    attrs={"axis": [], "dtype": None, "keepdim": False},
    legacy="reduce_sum",
    rename={"axis": "dim", "keepdim": "keep_dim"},
    tensor=_AXIS_TENSORS,
)
for _name in ("mean", "max", "min", "prod"):
    define(
        _name,
        "x axis -> out",
        attrs={"axis": [], "keepdim": False, "reduce_all": False},
        legacy=f"reduce_{_name}",
        rename={"axis": "dim", "keepdim": "keep_dim"},
        tensor=_AXIS_TENSORS,
    )
for _name in ("all", "any"):
    define(
        _name,
        "x -> out",
        attrs={"axis": [], "keepdim": False},
        legacy=f"reduce_{_name}",
        rename={"axis": "dim", "keepdim": "keep_dim"},
    )
define("mean_all", "x -> out", legacy="mean")
define("logsumexp", "x -> out", attrs={"axis": [], "keepdim": False, "reduce_all": False})
define(
    "p_norm",
    "x -> out",
    attrs={"porder": 2.0, "axis": -1, "epsilon": 1e-12, "keepdim": False, "asvector": False},
)
define(
    "frobenius_norm",
    "x axis -> out",
    attrs={"axis": [], "keep_dim": False, "reduce_all": False},
    rename={"axis": "dim"},
)
# PIR: axis is a Scalar operand (usually from ``full``); legacy: an attribute.
for _name in ("argmax", "argmin"):
    define(
        _name,
        "x axis -> out",
        attrs={"axis": -1, "keepdims": False, "flatten": False, "dtype": "int64"},
        legacy=f"arg_{_name[3:]}",
    )
