"""Matrix products: matmul (legacy matmul_v2), legacy_matmul (legacy matmul v1 with
alpha), matmul_with_flatten (legacy mul), bmm, mv, dot, einsum."""

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
