"""Math: matrix products (matmul, legacy matmul v1 with alpha, matmul_with_flatten (legacy
mul), bmm, mv, dot, einsum), linear algebra (addmm, kron, cross, trace, diagonal, diag,
inverse), norms and distances, cumulative products/log-sum-exp, histogram and order
statistics (kthvalue, mode, median, nanmedian)."""

from pd2onnx.paddle.opdefs import define

define(
    "matmul",
    "x y -> out",
    attrs={"transpose_x": False, "transpose_y": False},
    legacy="matmul_v2",
    rename={"transpose_x": "trans_x", "transpose_y": "trans_y"},
)
define(
    "legacy_matmul",
    "x y -> out",
    attrs={"transpose_x": False, "transpose_y": False, "alpha": 1.0},
    legacy="matmul",
    rename={"transpose_x": "transpose_X", "transpose_y": "transpose_Y"},
)
define("matmul_with_flatten", "x y -> out", attrs={"x_num_col_dims": 1, "y_num_col_dims": 1}, legacy="mul")
define("bmm", "x y -> out")
define("mv", "x vec -> out")
define("dot", "x y -> out")
# Only ``out`` matters; inner_cache/xshape are training leftovers.
define("einsum", "x -> out inner_cache xshape", attrs={"equation": ""}, slots={"x": "Operands"})

# ---- linear algebra and elementwise math (issue 13)
define(
    "addmm", "input x y -> out", attrs={"beta": 1.0, "alpha": 1.0}, rename={"beta": "Beta", "alpha": "Alpha"}
)
define("lerp", "x y weight -> out")
define("kron", "x y -> out")
# cross's axis 9 is Paddle's "not given": the first axis of size 3.
define("cross", "x y -> out", attrs={"axis": 9}, rename={"axis": "dim"})
define("trace", "x -> out", attrs={"offset": 0, "axis1": 0, "axis2": 1}, slots={"x": "Input"})
define("diagonal", "x -> out", attrs={"offset": 0, "axis1": 0, "axis2": 1}, slots={"x": "Input"})
define("diag", "x -> out", attrs={"offset": 0, "padding_value": 0.0}, legacy="diag_v2")
define("inverse", "x -> out", slots={"x": "Input", "out": "Output"})
define("dist", "x y -> out", attrs={"p": 2.0})
define("renorm", "x -> out", attrs={"p": 2.0, "axis": 0, "max_norm": 1.0})
# Legacy ``norm``: x / sqrt(sum(x^2, axis) + epsilon), and that norm.
define("norm", "x -> out norm", attrs={"axis": 1, "epsilon": 1e-10, "is_test": True})
define("cumprod", "x -> out", attrs={"dim": -1, "exclusive": False, "reverse": False})
define("logcumsumexp", "x -> out", attrs={"axis": -1, "flatten": False, "exclusive": False, "reverse": False})
define(
    "histogram",
    "input weight -> out",
    attrs={"bins": 100, "min": 0.0, "max": 0.0, "density": False},
    slots={"input": "X"},
)
# ---- order statistics
define("kthvalue", "x -> out indices", attrs={"k": 1, "axis": -1, "keepdim": False})
define("mode", "x -> out indices", attrs={"axis": -1, "keepdim": False})
# median is an op from Paddle 3 on (Paddle 2.6 composes it from sort ops).
define("median", "x -> out medians", attrs={"axis": [], "keepdim": False, "mode": "avg"}, legacy=())
define(
    "nanmedian",
    "x -> out medians",
    attrs={"axis": [], "keepdim": False, "mode": "avg"},
    slots={"medians": "MedianIndex"},
)
# ---- FFT: complex results are carried as real tensors with a trailing [re, im] dim
define(
    "fft_r2c", "x -> out", attrs={"axes": [], "normalization": "backward", "forward": True, "onesided": True}
)
define("fft_c2c", "x -> out", attrs={"axes": [], "normalization": "backward", "forward": True})
define(
    "fft_c2r",
    "x -> out",
    attrs={"axes": [], "normalization": "backward", "forward": False, "last_dim_size": 0},
)
define("real", "x -> out")
define("imag", "x -> out")
define("as_real", "x -> out")
define("as_complex", "x -> out")
define("angle", "x -> out")
