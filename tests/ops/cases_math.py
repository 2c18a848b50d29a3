"""Matrix product cases: matmul (transposes, batch broadcasting, 1-D operands with dynamic
batch), legacy matmul v1 (alpha, v1's vector rules), legacy mul, bmm, mv, dot, einsum."""

from harness.cases import case
from ops._nn_layers import legacy_op

F32 = "float32"


def normal(rng, shape, dtype=F32):
    return rng.standard_normal(shape).astype(dtype)


@case("matmul")
def mm_matmul_transpose_broadcast(paddle, rng):
    """Transposes of either side and broadcasting batch dims (N, 1) x (1, 3); a 2-D y against
    a 4-D x. (Operands of different ranks that both have batch dims are left out: Paddle 3.3
    declares a wrong output shape for them, e.g. (2, 1, 4, 6) for (2, 1, 4, 5) @ (3, 5, 6).)"""

    def fn(x, y):
        return (
            paddle.matmul(x, y, transpose_y=True),
            paddle.matmul(y, x, transpose_y=True),
            paddle.matmul(x, y[0, 0], transpose_y=True),
        )

    return fn, [normal(rng, (2, 1, 4, 5)), normal(rng, (1, 3, 6, 5))], [(None, 1, 4, 5), (1, 3, 6, 5)]


@case("matmul")
def mm_matmul_dynamic_batch(paddle, rng):
    def fn(x, y):
        return paddle.matmul(x, y, transpose_x=True), paddle.matmul(y, x, transpose_x=True)

    return fn, [normal(rng, (2, 5, 4)), normal(rng, (2, 5, 6))], [(None, 5, 4), (None, 5, 6)]


@case("matmul")
def mm_matmul_vectors(paddle, rng):
    """1-D operands on either side (their dim is dropped; transpose flags are ignored) with
    a dynamic batch, and vector x vector (0-D)."""

    def fn(m, v):
        return (
            paddle.matmul(v, m, transpose_x=True),
            paddle.matmul(m, v[:3], transpose_y=True),
            paddle.matmul(m, v, transpose_x=True),
            paddle.matmul(v, v, transpose_x=True),
        )

    return fn, [normal(rng, (2, 4, 3)), normal(rng, (4,))], [(None, 4, 3), (4,)]


@case("matmul", formats=("pir",), why="Paddle 2.6 has no integer matmul", opsets=(9, 17, 26))
def mm_matmul_int(paddle, rng):
    """int64 MatMul (opset 9+: the pre-scan cannot see dtypes, hence explicit opsets)."""
    x = rng.integers(-4, 5, size=(2, 3)).astype("int64")
    y = rng.integers(-4, 5, size=(3, 4)).astype("int64")
    return paddle.matmul, [x, y]


@case("legacy_matmul", formats=("legacy",), why="matmul v1 (alpha, transpose_X/Y) is a legacy-only op")
def mm_legacy_matmul(paddle, rng):
    """alpha; batched x 2-D with transposes; v1's vector rules: a 1-D x is a row, a 1-D y a
    column, before the transposes (two transposed vectors give an outer product)."""

    def fn(x, v):
        def mm(a, b, **attrs):
            return legacy_op(paddle, "matmul", {"X": a, "Y": b}, attrs)

        w = paddle.transpose(x[0], [1, 0])
        return (
            mm(x, w, alpha=2.5),
            mm(x, x, transpose_X=True),
            mm(v, w),
            mm(w, v, transpose_X=True),
            mm(v, v),
            mm(v, v, transpose_X=True, transpose_Y=True),
        )

    return fn, [normal(rng, (2, 3, 4)), normal(rng, (4,))]


@case("matmul_with_flatten", formats=("legacy",), why="mul is a legacy-only op")
def mm_legacy_mul(paddle, rng):
    """x (N, 2, 3) flattened at 1 or 2 against y (6, 4) / (3, 2, 2) flattened at 1 or 2."""

    def fn(x, y):
        y2 = paddle.reshape(y, [3, 2, 4])
        return (
            legacy_op(paddle, "mul", {"X": x, "Y": y}, {"x_num_col_dims": 1, "y_num_col_dims": 1}),
            legacy_op(paddle, "mul", {"X": x, "Y": y2}, {"x_num_col_dims": 2, "y_num_col_dims": 1}),
        )

    return fn, [normal(rng, (2, 2, 3)), normal(rng, (6, 4))], [(None, 2, 3), (6, 4)]


@case("matmul_with_flatten", name="mm_matmul_with_flatten_pir", formats=("pir",),
      why="the PIR op (Paddle 3 builds it with _C_ops; the legacy spelling mul is mm_legacy_mul)")
def mm_matmul_with_flatten_pir(paddle, rng):
    """x (N, 2, 3) flattened at 1 or 2 against y (6, 4) / (3, 2, 4) flattened at 1."""

    def fn(x, y):
        y2 = paddle.reshape(y, [3, 2, 4])
        return (
            paddle._C_ops.matmul_with_flatten(x, y, 1, 1),
            paddle._C_ops.matmul_with_flatten(x, y2, 2, 1),
        )

    return fn, [normal(rng, (2, 2, 3)), normal(rng, (6, 4))], [(None, 2, 3), (6, 4)]


@case("bmm", "mv")
def mm_bmm_mv(paddle, rng):
    def fn(x, y):
        return paddle.bmm(x, y), paddle.mv(x[0], y[0, :, 0])

    return fn, [normal(rng, (2, 3, 4)), normal(rng, (2, 4, 5))], [(None, 3, 4), (None, 4, 5)]


@case("dot")
def mm_dot(paddle, rng):
    """1-D (0-D result) and 2-D (one dot per row), float and int32."""

    def fn(x, y, a):
        return paddle.dot(x, y), paddle.dot(x[0], y[0]), paddle.dot(a, a)

    return fn, [normal(rng, (3, 4)), normal(rng, (3, 4)), rng.integers(-5, 6, size=(2, 5)).astype("int32")]


@case("einsum")
def mm_einsum(paddle, rng):
    """Batched product, transpose, implicit output, ellipsis broadcasting, reduction."""

    def fn(x, y):
        return (
            paddle.einsum("bij,bjk->bik", x, y),
            paddle.einsum("bij->bji", x),
            paddle.einsum("bij,bjk", x, y),
            paddle.einsum("...ij,...jk->...ik", x, y),
            paddle.einsum("bij->j", x),
        )

    return fn, [normal(rng, (2, 3, 4)), normal(rng, (2, 4, 5))], [(None, 3, 4), (None, 4, 5)]
