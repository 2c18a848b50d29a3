"""Math: matrix products (matmul, legacy matmul v1, matmul_with_flatten (legacy mul), bmm,
mv, dot, einsum), linear algebra (addmm, kron, cross, trace, diagonal, diag, inverse),
norms and distances (dist, renorm, legacy norm), lerp, cumulative products and
log-sum-exp, histogram, and order statistics (kthvalue, mode, median, nanmedian).

``matmul`` has numpy semantics (ONNX MatMul's): a 1-D operand is a vector whose dim is
dropped from the result, and its transpose flag is ignored. Legacy matmul v1 differs: a 1-D
``x`` is a row and a 1-D ``y`` a column *before* the transpose flags apply, and only a
vector dim that stays 1 is dropped (so two transposed vectors give an outer product).
"""

from __future__ import annotations

import math

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.casting import c_cast
from pd2onnx.convert.context import FLOAT_DTYPES, OpContext
from pd2onnx.convert.ops._elementwise_util import atan2_values, is_nan
from pd2onnx.convert.ops.reduce import reduce, to_declared_rank
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle import dtypes

# ONNX MatMul (opset 9+) and ONNX Runtime's kernels take these besides floats.
_MATMUL_INTS = frozenset({"int32", "int64", "uint32", "uint64"})


def _matmul(ctx: OpContext, x: ir.Value, y: ir.Value) -> ir.Value:
    """MatMul, checking the dtype is one ONNX MatMul accepts at this opset."""
    dtype = ctx.input_dtype("x")
    if dtype not in FLOAT_DTYPES:
        if dtype not in _MATMUL_INTS:
            raise ctx.fail(f"ONNX MatMul has no {dtype} form")
        if ctx.opset < 9:
            ctx.require_opset(9, f"ONNX MatMul takes {dtype} from opset 9")
    return ctx.op.MatMul(x, y)


def _swap_last_two(ctx: OpContext, x: ir.Value, rank: int) -> ir.Value:
    perm = list(range(rank))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return ctx.op.Transpose(x, perm=perm)


def _transposed(ctx: OpContext, x: ir.Value, rank: int, flag: bool) -> ir.Value:
    return _swap_last_two(ctx, x, rank) if flag and rank >= 2 else x


@mapper("matmul")
def matmul(ctx: OpContext) -> None:
    """x @ y with optional transposes of the last two dims (ignored for 1-D operands)."""
    rx, ry = ctx.input_rank("x"), ctx.input_rank("y")
    x = _transposed(ctx, ctx.input("x"), rx, bool(ctx.attr("transpose_x", False)))
    y = _transposed(ctx, ctx.input("y"), ry, bool(ctx.attr("transpose_y", False)))
    ctx.set_output("out", _matmul(ctx, x, y))


@mapper("legacy_matmul")
def legacy_matmul(ctx: OpContext) -> None:
    """Legacy matmul v1: alpha * op(x) @ op(y), with v1's vector rules (module docstring)."""
    rx, ry = ctx.input_rank("x"), ctx.input_rank("y")
    tx, ty = bool(ctx.attr("transpose_x", False)), bool(ctx.attr("transpose_y", False))
    x, y = ctx.input("x"), ctx.input("y")
    if rx == 1:
        x = ctx.unsqueeze(x, [0])
    if ry == 1:
        y = ctx.unsqueeze(y, [1])
    rx2, ry2 = max(rx, 2), max(ry, 2)
    out = _matmul(ctx, _transposed(ctx, x, rx2, tx), _transposed(ctx, y, ry2, ty))
    out_rank = max(rx2, ry2)
    drop = ([out_rank - 2] if rx == 1 and not tx else []) + ([out_rank - 1] if ry == 1 and not ty else [])
    if drop:
        out = ctx.squeeze(out, drop)
    alpha = float(ctx.attr("alpha", 1.0))
    if alpha != 1.0:
        out = ctx.op.Mul(out, ctx.const(alpha, ctx.output_dtype()))
    ctx.set_output("out", to_declared_rank(ctx, out, out_rank - len(drop)))


@mapper("bmm", "mv")
def bmm_mv(ctx: OpContext) -> None:
    """Batched matrix product / matrix-vector product: plain MatMul."""
    other = ctx.input("y") if ctx.pd.type == "bmm" else ctx.input("vec")
    ctx.set_output("out", _matmul(ctx, ctx.input("x"), other))


@mapper("dot")
def dot(ctx: OpContext) -> None:
    """Sum of x * y over the last axis (1-D -> 0-D, 2-D -> one dot per row)."""
    rank = ctx.input_rank("x")
    prod = ctx.op.Mul(ctx.input("x"), ctx.input("y"))
    out = reduce(ctx, "ReduceSum", prod, [rank - 1], False, rank)
    ctx.set_output("out", to_declared_rank(ctx, out, rank - 1))


@mapper("matmul_with_flatten", min_opset=9)
def matmul_with_flatten(ctx: OpContext) -> None:
    """Legacy ``mul``: x flattened to 2-D at x_num_col_dims, y at y_num_col_dims, multiplied,
    and reshaped to x.shape[:x_num_col_dims] + y.shape[y_num_col_dims:]."""
    xn, yn = int(ctx.attr("x_num_col_dims", 1)), int(ctx.attr("y_num_col_dims", 1))
    x, y = ctx.input("x"), ctx.input("y")
    x_shape, y_shape = ctx.input_shape("x"), ctx.input_shape("y")
    out = _matmul(ctx, ctx.op.Flatten(x, axis=xn), ctx.op.Flatten(y, axis=yn))
    if len(x_shape) == 2 and xn == 1 and len(y_shape) == 2 and yn == 1:
        ctx.set_output("out", out)
        return
    dims = list(x_shape[:xn]) + list(y_shape[yn:])
    if all(d >= 0 for d in dims):
        ctx.set_output("out", ctx.reshape(out, dims))
        return
    target = ctx.op.Concat(ctx.shape_of(x, 0, xn), ctx.shape_of(y, yn, len(y_shape)), axis=0)
    ctx.set_output("out", ctx.reshape(out, target))


@mapper("einsum", min_opset=12)
def einsum(ctx: OpContext) -> None:
    """ONNX Einsum with Paddle's equation (spaces removed); only ``out`` is produced."""
    equation = str(ctx.attr("equation", "")).replace(" ", "")
    ctx.set_output("out", ctx.op.Einsum(*ctx.inputs("x"), equation=equation))


# ---------------------------------------------------------------------- helpers
IntOrValue = int | ir.Value


def _dim(ctx: OpContext, x: ir.Value, dims: list[int], axis: int) -> IntOrValue:
    """dims[axis] as an int when static, else a 0-D int64 value."""
    return dims[axis] if dims[axis] >= 0 else ctx.reshape(ctx.shape_of(x, axis, axis + 1), [])


def _i64(ctx: OpContext, v: IntOrValue) -> ir.Value:
    return v if isinstance(v, ir.Value) else ctx.const_i64(v)


def _axis_last(ctx: OpContext, x: ir.Value, axis: int, rank: int) -> tuple[ir.Value, list[int] | None]:
    """x with ``axis`` moved last, and the permutation that moves it back (None: no move)."""
    if axis == rank - 1:
        return x, None
    perm = [a for a in range(rank) if a != axis] + [axis]
    back = [perm.index(a) for a in range(rank)]
    return ctx.op.Transpose(x, perm=perm), back


def _restore(ctx: OpContext, x: ir.Value, back: list[int] | None) -> ir.Value:
    return x if back is None else ctx.op.Transpose(x, perm=back)


def _triangle(ctx: OpContext, n: IntOrValue, exclusive: bool, reverse: bool) -> ir.Value:
    """[n, n] bool: row i keeps column j when j <= i (exclusive: j < i; reverse: j >= i,
    both: j > i)."""
    r = ctx.op.Range(ctx.const_i64(0), _i64(ctx, n), ctx.const_i64(1))
    i, j = ctx.unsqueeze(r, [1]), ctx.unsqueeze(r, [0])
    if reverse:
        return ctx.op.Greater(j, i) if exclusive else ctx.op.Not(ctx.op.Less(j, i))
    return ctx.op.Less(j, i) if exclusive else ctx.op.Not(ctx.op.Greater(j, i))


def _prefix_reduce(ctx: OpContext, x: ir.Value, axis: int, rank: int, n: IntOrValue, fill: ir.Value,
                   exclusive: bool, reverse: bool, finish) -> ir.Value:
    """A cumulative reduction along ``axis`` as a masked [.., n, n] reduction (exact for
    integer products; the running operation has no ONNX op): ``finish(masked)`` reduces the
    last axis."""
    t, back = _axis_last(ctx, x, axis, rank)
    masked = ctx.op.Where(_triangle(ctx, n, exclusive, reverse), ctx.unsqueeze(t, [-2]), fill)
    return _restore(ctx, finish(masked), back)


# ---------------------------------------------------------------------- elementwise-ish
@mapper("lerp")
def lerp(ctx: OpContext) -> None:
    """x + weight * (y - x), all three broadcast."""
    dtype = ctx.output_dtype()
    x, y = ctx.input("x"), ctx.input("y")
    w = ctx.cast(ctx.input("weight"), dtype, ctx.input_dtype("weight"))
    ctx.set_output("out", ctx.op.Add(x, ctx.op.Mul(w, ctx.op.Sub(y, x))))


@mapper("addmm")
def addmm(ctx: OpContext) -> None:
    """beta * input + alpha * (x @ y), input broadcast to the product."""
    dtype = ctx.output_dtype()
    prod = ctx.op.MatMul(ctx.input("x"), ctx.input("y"))
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    if alpha != 1.0:
        prod = ctx.op.Mul(prod, ctx.const(alpha, dtype))
    base = ctx.input("input")
    if beta != 1.0:
        base = ctx.op.Mul(base, ctx.const(beta, dtype))
    ctx.set_output("out", ctx.op.Add(base, prod))


@mapper("kron")
def kron(ctx: OpContext) -> None:
    """Kronecker product: x's dims interleaved with y's (ranks padded with leading 1s),
    multiplied by broadcasting and merged pairwise."""
    x, y = ctx.input("x"), ctx.input("y")
    xd, yd = [int(d) for d in ctx.input_shape("x")], [int(d) for d in ctx.input_shape("y")]
    if not xd and not yd:  # two 0-D tensors: their 0-D product
        ctx.set_output("out", ctx.op.Mul(x, y))
        return
    r = max(len(xd), len(yd), 1)
    if len(xd) < r:
        x, xd = ctx.unsqueeze(x, list(range(r - len(xd)))), [1] * (r - len(xd)) + xd
    if len(yd) < r:
        y, yd = ctx.unsqueeze(y, list(range(r - len(yd)))), [1] * (r - len(yd)) + yd
    xs = ctx.unsqueeze(x, [2 * i + 1 for i in range(r)])
    ys = ctx.unsqueeze(y, [2 * i for i in range(r)])
    prod = ctx.op.Mul(xs, ys)
    if all(d >= 0 for d in xd + yd):
        shape = ctx.const_i64([a * b for a, b in zip(xd, yd)])
    else:
        shape = ctx.op.Mul(ctx.op.Shape(x), ctx.op.Shape(y))
    ctx.set_output("out", ctx.reshape(prod, shape))


@mapper("cross")
def cross(ctx: OpContext) -> None:
    """3-vector cross product along ``axis`` (9 = the first axis of size 3)."""
    dims = [int(d) for d in ctx.input_shape("x")]
    axis = int(ctx.attr("axis", 9))
    if axis == 9:
        found = [i for i, d in enumerate(dims) if d == 3]
        if not found:
            raise ctx.fail(f"cross without an axis needs a static dim of size 3, x has {dims}")
        axis = found[0]
    axis = ctx.normalize_axis(axis, len(dims))
    a = [ctx.slice(ctx.input("x"), [i], [i + 1], [axis]) for i in range(3)]
    b = [ctx.slice(ctx.input("y"), [i], [i + 1], [axis]) for i in range(3)]

    def term(i: int, j: int) -> ir.Value:
        return ctx.op.Sub(ctx.op.Mul(a[i], b[j]), ctx.op.Mul(a[j], b[i]))

    ctx.set_output("out", ctx.op.Concat(term(1, 2), term(2, 0), term(0, 1), axis=axis))


# ---------------------------------------------------------------------- diagonals
def _diagonal(ctx: OpContext, x: ir.Value, dims: list[int], offset: int, axis1: int, axis2: int) -> ir.Value:
    """The offset diagonal of (axis1, axis2) appended as the last axis (Paddle's diagonal)."""
    rank = len(dims)
    perm = [a for a in range(rank) if a not in (axis1, axis2)] + [axis1, axis2]
    t = ctx.op.Transpose(x, perm=perm) if perm != list(range(rank)) else x
    n, m = _dim(ctx, x, dims, axis1), _dim(ctx, x, dims, axis2)
    row0, col0 = max(0, -offset), max(0, offset)
    lead = [dims[a] for a in perm[:-2]]
    if isinstance(n, int) and isinstance(m, int):
        length = max(0, min(n - row0, m - col0))
        flat_index = ctx.const_i64([(i + row0) * m + i + col0 for i in range(length)])
        flat_shape = ctx.const_i64(lead + [n * m]) if all(d >= 0 for d in lead) else None
    else:
        nv, mv = _i64(ctx, n), _i64(ctx, m)
        a_len, b_len = ctx.op.Sub(nv, ctx.const_i64(row0)), ctx.op.Sub(mv, ctx.const_i64(col0))
        length = ctx.op.Where(ctx.op.Less(a_len, b_len), a_len, b_len)
        length = ctx.op.Where(ctx.op.Less(length, ctx.const_i64(0)), ctx.const_i64(0), length)
        r = ctx.op.Range(ctx.const_i64(0), length, ctx.const_i64(1))
        rows, cols = ctx.op.Add(r, ctx.const_i64(row0)), ctx.op.Add(r, ctx.const_i64(col0))
        flat_index = ctx.op.Add(ctx.op.Mul(rows, mv), cols)
        flat_shape = None
    if flat_shape is None:
        flat_shape = ctx.op.Concat(ctx.shape_of(t, 0, rank - 2), ctx.const_i64([-1]), axis=0)
    flat = ctx.reshape(t, flat_shape)
    if isinstance(length, int) and length == 0:  # no Gather of no indices: OpenVINO reads those
        return ctx.slice(flat, [0], [0], [rank - 2])  # as a scalar, or (made by ConstantOfShape) crashes
    return ctx.op.Gather(flat, flat_index, axis=rank - 2)


def _diag_axes(ctx: OpContext, rank: int) -> tuple[int, int, int]:
    offset = int(ctx.attr("offset", 0))
    a1 = ctx.normalize_axis(int(ctx.attr("axis1", 0)), rank)
    a2 = ctx.normalize_axis(int(ctx.attr("axis2", 1)), rank)
    if a1 == a2:
        raise ctx.fail(f"axis1 and axis2 are both {a1}")
    return offset, a1, a2


@mapper("diagonal", min_opset=11)
def diagonal(ctx: OpContext) -> None:
    dims = [int(d) for d in ctx.input_shape("x")]
    offset, a1, a2 = _diag_axes(ctx, len(dims))
    ctx.set_output("out", _diagonal(ctx, ctx.input("x"), dims, offset, a1, a2))


@mapper("trace", min_opset=11)
def trace(ctx: OpContext) -> None:
    """Sum of the offset diagonal (0 when it is empty)."""
    dims = [int(d) for d in ctx.input_shape("x")]
    offset, a1, a2 = _diag_axes(ctx, len(dims))
    d = _diagonal(ctx, ctx.input("x"), dims, offset, a1, a2)
    out = ctx.reduce("ReduceSum", d, [len(dims) - 2], keepdims=False)
    ctx.set_output("out", to_declared_rank(ctx, out, len(dims) - 2))


@mapper("diag", min_opset=11)
def diag(ctx: OpContext) -> None:
    """1-D x: a square matrix with x on the offset diagonal, ``padding_value`` elsewhere;
    2-D x: its offset diagonal."""
    dims = [int(d) for d in ctx.input_shape("x")]
    offset = int(ctx.attr("offset", 0))
    x = ctx.input("x")
    if len(dims) == 2:
        ctx.set_output("out", _diagonal(ctx, x, dims, offset, 0, 1))
        return
    if len(dims) == 0:
        x, dims = ctx.reshape(x, [1]), [1]
    if len(dims) != 1:
        raise ctx.fail(f"diag takes a 1-D or 2-D tensor, got rank {len(dims)}")
    dtype = ctx.input_dtype("x")
    n = _dim(ctx, x, dims, 0)
    size = ctx.reshape(ctx.op.Add(_i64(ctx, n), ctx.const_i64(abs(offset))), [1])
    pad = c_cast(ctx.attr("padding_value", 0.0), dtypes.to_numpy(dtype))
    base = ctx.op.Expand(ctx.const(pad), ctx.op.Concat(size, size, axis=0))
    r = ctx.op.Range(ctx.const_i64(0), _i64(ctx, n), ctx.const_i64(1))
    rows = ctx.op.Add(r, ctx.const_i64(max(0, -offset)))
    cols = ctx.op.Add(r, ctx.const_i64(max(0, offset)))
    index = ctx.op.Concat(ctx.unsqueeze(rows, [1]), ctx.unsqueeze(cols, [1]), axis=1)
    ctx.set_output("out", ctx.op.ScatterND(base, index, x))


# ---------------------------------------------------------------------- inverse
# The largest matrices whose cofactors are spelled out as sums of products (each minor's
# determinant by Leibniz's formula: (n-1)! products of n-1 entries), in float64: faster than
# ONNX Det in ONNX Runtime up to 4x4 (64 4x4 matrices: 0.50 -> 0.22 ms) and closer to the exact
# inverse (Det works in float32); larger ones use Det, which neither OpenVINO's ONNX reader
# nor TensorRT's parser has (5x5 spelled out would take 0.23 ms where Det takes 0.09).
_SPELLED_OUT_MAX = 4


def _permutation_sign(p: tuple[int, ...]) -> int:
    inversions = sum(1 for a in range(len(p)) for b in range(a + 1, len(p)) if p[a] > p[b])
    return -1 if inversions % 2 else 1


def _cofactors_spelled_out(ctx: OpContext, x: ir.Value, n: int, rank: int, dtype: str) -> ir.Value:
    """[..., n, n]: the cofactors of x, each minor's determinant as the signed sum of products
    of its entries, all gathered at once from x flattened to [..., n*n]."""
    import itertools

    perms = list(itertools.permutations(range(n - 1)))
    index = np.empty((n, n, len(perms), n - 1), np.int64)
    sign = np.empty((n, n, len(perms)))
    for i in range(n):
        rows = [r for r in range(n) if r != i]
        for j in range(n):
            cols = [c for c in range(n) if c != j]
            for q, p in enumerate(perms):
                index[i, j, q] = [rows[k] * n + cols[p[k]] for k in range(n - 1)]
                sign[i, j, q] = _permutation_sign(p) * (-1) ** (i + j)
    lead = [0] * (rank - 2)
    flat = ctx.reshape(x, lead + [n * n])
    terms = ctx.reshape(ctx.op.Gather(flat, ctx.const(index.reshape(-1)), axis=rank - 2),
                        lead + [n * n, len(perms), n - 1])
    products = ctx.reduce("ReduceProd", terms, [rank], keepdims=False)  # [..., n*n, (n-1)!]
    signed = ctx.op.Mul(products, ctx.const(sign.reshape(n * n, len(perms)).astype(dtypes.to_numpy(dtype))))
    return ctx.reshape(ctx.reduce("ReduceSum", signed, [rank - 1], keepdims=False), lead + [n, n])


@mapper("inverse", min_opset=11)
def inverse(ctx: OpContext) -> None:
    """Matrix inverse of the last two (static, square) dims as adjugate / determinant. Up to
    4x4 the cofactors are sums of products of the entries (no ONNX Det, which OpenVINO and
    TensorRT lack), computed in float64, and the determinant is the first row's expansion;
    larger matrices gather their n*n minors at once for ONNX Det (batched), in float32 (ONNX
    Runtime's Det has float32 only)."""
    dims = [int(d) for d in ctx.input_shape("x")]
    dtype = ctx.input_dtype("x")
    if len(dims) < 2 or dims[-1] != dims[-2] or dims[-1] < 0:
        raise ctx.fail(
            f"inverse needs static square matrices in the last two dims, got shape {dims}",
            hint="export with a static matrix size",
        )
    if dtype not in FLOAT_DTYPES:
        raise ctx.fail(f"inverse of {dtype} has no ONNX form")
    n, rank = dims[-1], len(dims)
    b = rank - 2
    wide = "float64" if n <= _SPELLED_OUT_MAX else "float32"
    x = ctx.cast(ctx.input("x"), wide, dtype)
    if n == 1:
        out = ctx.op.Reciprocal(x)
    elif n <= _SPELLED_OUT_MAX:
        cof = _cofactors_spelled_out(ctx, x, n, rank, wide)
        first = ctx.const_i64([0])
        det = ctx.reduce("ReduceSum", ctx.op.Mul(ctx.op.Gather(x, first, axis=b), ctx.op.Gather(cof, first, axis=b)),
                         [b + 1], keepdims=True)  # [..., 1, 1]
        out = ctx.op.Div(ctx.op.Transpose(cof, perm=list(range(b)) + [b + 1, b]), det)
    else:
        keep = np.array([[k for k in range(n) if k != i] for i in range(n)], dtype=np.int64)  # [n, n-1]
        rows = ctx.op.Gather(x, ctx.const(keep), axis=rank - 2)  # [..., i, r, n]
        minors = ctx.op.Gather(rows, ctx.const(keep), axis=rank)  # [..., i, r, j, c]
        minors = ctx.op.Transpose(minors, perm=list(range(b)) + [b, b + 2, b + 1, b + 3])  # [..., i, j, r, c]
        signs = np.array([[(-1.0) ** (i + j) for j in range(n)] for i in range(n)])
        cof = ctx.op.Mul(ctx.op.Det(minors), ctx.const(signs.astype(dtypes.to_numpy(wide))))
        adj = ctx.op.Transpose(cof, perm=list(range(b)) + [b + 1, b])
        out = ctx.op.Div(adj, ctx.unsqueeze(ctx.op.Det(x), [b, b + 1]))
    ctx.set_output("out", ctx.cast(out, dtype, wide))


# ---------------------------------------------------------------------- norms
def _p_norm(
    ctx: OpContext, x: ir.Value, p: float, dtype: str, axes: list[int] | None, keepdims: bool
) -> ir.Value:
    """Vector p-norm over ``axes`` (None: all): p 0 counts nonzeros, +-inf is max/min |x|."""
    if p == 0:
        nonzero = ctx.op.Not(ctx.op.Equal(x, ctx.const(0, dtype)))
        return ctx.reduce("ReduceSum", ctx.cast(nonzero, dtype), axes, keepdims)
    if math.isinf(p):
        return ctx.reduce("ReduceMax" if p > 0 else "ReduceMin", ctx.op.Abs(x), axes, keepdims)
    total = ctx.reduce("ReduceSum", ctx.op.Pow(ctx.op.Abs(x), ctx.const(p, dtype)), axes, keepdims)
    return ctx.op.Pow(total, ctx.const(1.0 / p, dtype))


@mapper("dist", min_opset=11)
def dist(ctx: OpContext) -> None:
    """p-norm of x - y (broadcast) over every element: a 0-D result."""
    dtype = ctx.output_dtype()
    diff = ctx.op.Sub(ctx.input("x"), ctx.input("y"))
    out = _p_norm(ctx, diff, float(ctx.attr("p", 2.0)), dtype, None, False)
    ctx.set_output("out", to_declared_rank(ctx, out, 0))


@mapper("renorm", min_opset=9)
def renorm(ctx: OpContext) -> None:
    """Each slice along ``axis`` whose p-norm exceeds max_norm is scaled by
    max_norm / (norm + 1e-7) (Paddle's kernel)."""
    dtype = ctx.output_dtype()
    rank = ctx.input_rank("x")
    axis = ctx.normalize_axis(int(ctx.attr("axis", 0)), rank)
    x = ctx.input("x")
    others = [a for a in range(rank) if a != axis]
    norm = _p_norm(ctx, x, float(ctx.attr("p", 2.0)), dtype, others or None, True)
    max_norm = ctx.const(float(ctx.attr("max_norm", 1.0)), dtype)
    scale = ctx.op.Div(max_norm, ctx.op.Add(norm, ctx.const(1e-7, dtype)))
    factor = ctx.op.Where(ctx.op.Greater(norm, max_norm), scale, ctx.const(1.0, dtype))
    ctx.set_output("out", ctx.op.Mul(x, factor))


@mapper("norm")
def norm(ctx: OpContext) -> None:
    """Legacy ``norm``: x / sqrt(sum(x^2, axis) + epsilon), and that norm (dims kept)."""
    dtype = ctx.output_dtype()
    x = ctx.input("x")
    axis = ctx.normalize_axis(int(ctx.attr("axis", 1)), ctx.input_rank("x"))
    total = ctx.reduce("ReduceSum", ctx.op.Mul(x, x), [axis], keepdims=True)
    n = ctx.op.Sqrt(ctx.op.Add(total, ctx.const(float(ctx.attr("epsilon", 1e-10)), dtype)))
    ctx.set_output("out", ctx.op.Div(x, n))
    ctx.set_output("norm", n)


# ---------------------------------------------------------------------- cumulative
def _cumulative_axis(ctx: OpContext, name: str) -> tuple[ir.Value, int, int, list[int]]:
    """(x, axis, rank, dims), x flattened when the op's ``flatten`` is set; a 0-D x as [1]."""
    x = ctx.input("x")
    dims = [int(d) for d in ctx.input_shape("x")]
    if bool(ctx.attr("flatten", False)) or not dims:
        n = int(np.prod(dims)) if all(d >= 0 for d in dims) else -1
        return ctx.reshape(x, [-1]), 0, 1, [n]
    return x, ctx.normalize_axis(int(ctx.attr(name, -1)), len(dims)), len(dims), dims


def _cumulative_finish(ctx: OpContext, out: ir.Value) -> None:
    if not ctx.input_shape("x") or bool(ctx.attr("flatten", False)):
        shape = ctx.output_shape("out")
        if shape is not None and all(d >= 0 for d in shape):
            out = ctx.reshape(out, list(shape))
    ctx.set_output("out", out)


@mapper("cumprod", min_opset=11)
def cumprod(ctx: OpContext) -> None:
    """Running product along ``dim``: a masked ReduceProd over a [.., n, n] broadcast of x
    (exact for integers; memory grows with n)."""
    x, axis, rank, dims = _cumulative_axis(ctx, "dim")
    dtype = ctx.input_dtype("x")
    n = _dim(ctx, x, dims, axis)
    out = _prefix_reduce(
        ctx, x, axis, rank, n, ctx.const(1, dtype), bool(ctx.attr("exclusive", False)),
        bool(ctx.attr("reverse", False)), lambda m: ctx.reduce("ReduceProd", m, [rank], keepdims=False),
    )
    _cumulative_finish(ctx, out)


@mapper("logcumsumexp", min_opset=11)
def logcumsumexp(ctx: OpContext) -> None:
    """log(running sum of exp) along ``axis``, stable: per prefix, its max is taken out
    first (a masked [.., n, n] reduction); an empty prefix (exclusive) gives the lowest
    finite value, as Paddle's kernel."""
    x, axis, rank, dims = _cumulative_axis(ctx, "axis")
    dtype = ctx.input_dtype("x")
    n = _dim(ctx, x, dims, axis)

    def log_sum_exp(masked: ir.Value) -> ir.Value:
        m = ctx.reduce("ReduceMax", masked, [rank], keepdims=True)
        s = ctx.reduce("ReduceSum", ctx.op.Exp(ctx.op.Sub(masked, m)), [rank], keepdims=True)
        return ctx.squeeze(ctx.op.Add(ctx.op.Log(s), m), [rank])

    # Masked entries hold the lowest finite value, which is also what Paddle gives for an
    # empty prefix (lowest + log(count) rounds back to lowest).
    lowest = ctx.const(np.finfo(dtypes.to_numpy(dtype)).min, dtype)
    out = _prefix_reduce(
        ctx, x, axis, rank, n, lowest, bool(ctx.attr("exclusive", False)),
        bool(ctx.attr("reverse", False)), log_sum_exp,
    )
    _cumulative_finish(ctx, out)


# ---------------------------------------------------------------------- histogram
@mapper("histogram", min_opset=11)
def histogram(ctx: OpContext) -> None:
    """Counts of x in ``bins`` equal bins over [min, max] (both 0: the data's range, widened
    by 1 each way when flat); bin = trunc((x - min) * bins / (max - min)) in x's dtype as
    Paddle computes it, the last bin closed; values outside (and NaN) are not counted."""
    dtype = ctx.input_dtype("input")
    bins = int(ctx.attr("bins", 100))
    x = ctx.reshape(ctx.input("input"), [-1])
    is_float = dtype in FLOAT_DTYPES
    lo_attr, hi_attr = float(ctx.attr("min", 0.0)), float(ctx.attr("max", 0.0))
    if not is_float:
        x = ctx.cast(x, "int64", dtype)
        work = "int64"
        lo_attr, hi_attr = float(int(lo_attr)), float(int(hi_attr))
    else:
        work = dtype
    if lo_attr == hi_attr:
        lo, hi = ctx.op.ReduceMin(x, keepdims=0), ctx.op.ReduceMax(x, keepdims=0)
        flat = ctx.op.Equal(lo, hi)
        one = ctx.const(1, work)
        lo = ctx.op.Where(flat, ctx.op.Sub(lo, one), lo)
        hi = ctx.op.Where(flat, ctx.op.Add(hi, one), hi)
    else:
        lo, hi = ctx.const(lo_attr, work), ctx.const(hi_attr, work)
    above = ctx.op.Or(ctx.op.Greater(x, lo), ctx.op.Equal(x, lo))  # both false for NaN
    below = ctx.op.Or(ctx.op.Less(x, hi), ctx.op.Equal(x, hi))
    inside = ctx.op.And(above, below)
    scaled = ctx.op.Div(ctx.op.Mul(ctx.op.Sub(x, lo), ctx.const(bins, work)), ctx.op.Sub(hi, lo))
    index = ctx.cast(scaled, "int64", work)
    last = ctx.const_i64(bins - 1)
    index = ctx.op.Where(ctx.op.Greater(index, last), last, index)
    index = ctx.op.Where(inside, index, ctx.const_i64(-1))
    hits = ctx.op.Equal(ctx.unsqueeze(index, [1]), ctx.const(np.arange(bins, dtype=np.int64)[None, :]))
    out_dtype = ctx.output_dtype()
    if out_dtype not in FLOAT_DTYPES:  # plain counts
        counts = ctx.reduce("ReduceSum", ctx.cast(hits, "int64"), [0], keepdims=False)
        ctx.set_output("out", ctx.cast(counts, out_dtype, "int64"))
        return
    # Paddle 3: weights summed per bin instead of counts; density divides by the total
    # times the bin width.
    hits = ctx.cast(hits, out_dtype)
    if ctx.has_input("weight"):
        weight = ctx.cast(ctx.reshape(ctx.input("weight"), [-1, 1]), out_dtype, ctx.input_dtype("weight"))
        hits = ctx.op.Mul(hits, weight)
    out = ctx.reduce("ReduceSum", hits, [0], keepdims=False)
    if bool(ctx.attr("density", False)):
        width = ctx.op.Div(ctx.cast(ctx.op.Sub(hi, lo), out_dtype, work), ctx.const(bins, out_dtype))
        out = ctx.op.Div(out, ctx.op.Mul(ctx.op.ReduceSum(out, keepdims=0), width))
    ctx.set_output("out", out)


# ---------------------------------------------------------------------- order statistics
def _keep_or_drop(ctx: OpContext, v: ir.Value, axis: int, keepdim: bool) -> ir.Value:
    """``v`` has a size-1 ``axis``: keep it or squeeze it, as keepdim says."""
    return v if keepdim else ctx.squeeze(v, [axis])


def _pick(ctx: OpContext, v: ir.Value, k: IntOrValue, axis: int) -> ir.Value:
    """Element ``k`` along ``axis``, the axis kept (size 1)."""
    if isinstance(k, int):
        return ctx.slice(v, [k], [k + 1], [axis])
    k1 = ctx.reshape(k, [1])
    return ctx.slice(v, k1, ctx.op.Add(k1, ctx.const_i64([1])), [axis])


def _sorted_prefix(ctx: OpContext, x: ir.Value, k: IntOrValue, axis: int) -> tuple[ir.Value, ir.Value]:
    """The k smallest along ``axis``, ascending (TopK; ties keep the lower index first)."""
    kv = ctx.reshape(_i64(ctx, k), [1])
    return ctx.op.TopK(x, kv, axis=axis, largest=0, sorted=1, _outputs=2)


def _select_from_0d(ctx: OpContext) -> bool:
    """kthvalue/mode of a 0-D x: x itself at index 0 (True when that was the case)."""
    ctx.correct_declared("indices", dtype="int64")
    if ctx.input_rank("x"):
        return False
    ctx.set_output("out", ctx.op.Identity(ctx.input("x")))
    ctx.set_output("indices", ctx.const(np.zeros((), np.int64)))
    return True


@mapper("kthvalue", min_opset=11)
def kthvalue(ctx: OpContext) -> None:
    """The k-th smallest along ``axis`` and its index. Paddle picks among equal values
    with an unstable selection, so the index of a tied value may differ."""
    x = ctx.input("x")
    rank = ctx.input_rank("x")
    if _select_from_0d(ctx):
        return
    axis = ctx.normalize_axis(int(ctx.attr("axis", -1)), rank)
    k = int(ctx.attr("k", 1))
    values, indices = _sorted_prefix(ctx, x, k, axis)
    keep = bool(ctx.attr("keepdim", False))
    ctx.set_output("out", _keep_or_drop(ctx, _pick(ctx, values, k - 1, axis), axis, keep))
    ctx.set_output("indices", _keep_or_drop(ctx, _pick(ctx, indices, k - 1, axis), axis, keep))


@mapper("mode", min_opset=11)
def mode(ctx: OpContext) -> None:
    """The most frequent value along ``axis`` (the smallest of equally frequent ones) and
    the index of its last occurrence, as Paddle's kernel gives: counts come from an
    all-pairs comparison ([.., n, n])."""
    x = ctx.input("x")
    dtype = ctx.input_dtype("x")
    rank = ctx.input_rank("x")
    if _select_from_0d(ctx):
        return
    axis = ctx.normalize_axis(int(ctx.attr("axis", -1)), rank)
    dims = [int(d) for d in ctx.input_shape("x")]
    t, back = _axis_last(ctx, x, axis, rank)
    same = ctx.op.Equal(ctx.unsqueeze(t, [rank]), ctx.unsqueeze(t, [rank - 1]))
    counts = ctx.reduce("ReduceSum", ctx.cast(same, "int64"), [rank], keepdims=False)
    best = ctx.op.Equal(counts, ctx.reduce("ReduceMax", counts, [rank - 1], keepdims=True))
    # not-a-candidate fill: +inf, or for integers the slice's own largest value (the dtype's
    # largest turns into another number in OpenVINO, which computes int64 in int32)
    if dtype in FLOAT_DTYPES:
        fill = ctx.const(math.inf, dtype)
    else:
        fill = ctx.reduce("ReduceMax", t, [rank - 1], keepdims=True)
    value = ctx.reduce("ReduceMin", ctx.op.Where(best, t, fill), [rank - 1], keepdims=True)
    n = _dim(ctx, x, dims, axis)
    positions = ctx.op.Range(ctx.const_i64(0), _i64(ctx, n), ctx.const_i64(1))
    at = ctx.op.Where(ctx.op.Equal(t, value), positions, ctx.const_i64(-1))
    index = ctx.reduce("ReduceMax", at, [rank - 1], keepdims=True)
    keep = bool(ctx.attr("keepdim", False))
    ctx.set_output("out", _keep_or_drop(ctx, _restore(ctx, value, back), axis, keep))
    ctx.set_output("indices", _keep_or_drop(ctx, _restore(ctx, index, back), axis, keep))


def _median_layout(ctx: OpContext) -> tuple[ir.Value, int, IntOrValue, list[int] | None]:
    """x with the reduced axes flattened into the last one: (t, rank of t, n, perm back).

    ``axis`` [] reduces everything (t is 1-D)."""
    x = ctx.input("x")
    dims = [int(d) for d in ctx.input_shape("x")]
    rank = len(dims)
    axes = ctx.attr("axis", [])
    axes = [axes] if isinstance(axes, int) else list(axes)
    axes = sorted({ctx.normalize_axis(int(a), rank) for a in axes}) if rank else []
    if not axes or len(axes) == rank:
        n = int(np.prod(dims)) if all(d >= 0 for d in dims) else ctx.reshape(ctx.op.Size(x), [])
        return ctx.reshape(x, [-1]), 1, n, None
    kept = [a for a in range(rank) if a not in axes]
    t = ctx.op.Transpose(x, perm=kept + axes) if kept + axes != list(range(rank)) else x
    if len(axes) > 1:
        t = ctx.reshape(t, [0] * len(kept) + [-1])
    n = int(np.prod([dims[a] for a in axes])) if all(dims[a] >= 0 for a in axes) else \
        ctx.reshape(ctx.shape_of(t, len(kept), len(kept) + 1), [])
    return t, len(kept) + 1, n, axes


def _median_finish(ctx: OpContext, slot: str, v: ir.Value, axes: list[int] | None) -> None:
    """v has the reduced axis last (size 1): drop it, or restore the reduced dims as 1s."""
    rank = ctx.input_rank("x")
    keep = bool(ctx.attr("keepdim", False))
    if axes is None:
        v = ctx.reshape(v, [1] * rank if keep else [])
    elif keep:
        v = ctx.unsqueeze(ctx.squeeze(v, [rank - len(axes)]), axes)
    else:
        v = ctx.squeeze(v, [rank - len(axes)])
    ctx.set_output(slot, v)


def _half(ctx: OpContext, n: IntOrValue, minus_one: bool) -> IntOrValue:
    """(n - 1) // 2 or n // 2 for n >= 0."""
    if isinstance(n, int):
        return (n - 1) // 2 if minus_one else n // 2
    base = ctx.op.Sub(n, ctx.const_i64(1)) if minus_one else n
    return ctx.op.Div(base, ctx.const_i64(2))


def _average(ctx: OpContext, lo: ir.Value, hi: ir.Value, dtype: str) -> ir.Value:
    """(lo + hi) / 2 in ``dtype`` (integers truncate, as Paddle's kernel)."""
    return ctx.op.Div(ctx.op.Add(lo, hi), ctx.const(2, dtype))


@mapper("median", min_opset=11)
def median(ctx: OpContext) -> None:
    """Median over ``axis`` (all: []): ``avg`` averages the two middle values (in the output
    dtype: float32 for integer x), ``min`` takes the lower one and its index. A NaN in a
    reduced slice gives NaN (Paddle's kernel)."""
    dtype = ctx.input_dtype("x")
    out_dtype = ctx.output_dtype("out")
    t, r, n, axes = _median_layout(ctx)
    last = r - 1
    lo_k, hi_k = _half(ctx, n, True), _half(ctx, n, False)
    values, indices = _sorted_prefix(ctx, t, _plus_one(ctx, hi_k), last)
    lo = _pick(ctx, values, lo_k, last)
    if str(ctx.attr("mode", "avg")) == "min":
        out = lo
        _median_finish(ctx, "medians", _pick(ctx, indices, lo_k, last), axes)
    else:
        hi = _pick(ctx, values, hi_k, last)
        out = _average(ctx, ctx.cast(lo, out_dtype, dtype), ctx.cast(hi, out_dtype, dtype), out_dtype)
    if dtype in FLOAT_DTYPES:
        has_nan = ctx.reduce("ReduceMax", ctx.cast(ctx.op.IsNaN(t), "int32"), [last], keepdims=True)
        nan = ctx.const(math.nan, out_dtype)
        out = ctx.op.Where(ctx.cast(has_nan, "bool", "int32"), nan, out)
    _median_finish(ctx, "out", out, axes)


def _plus_one(ctx: OpContext, k: IntOrValue) -> IntOrValue:
    return k + 1 if isinstance(k, int) else ctx.op.Add(k, ctx.const_i64(1))


@mapper("nanmedian", min_opset=11)
def nanmedian(ctx: OpContext) -> None:
    """Median of the non-NaN values (NaN when there are none): NaNs sort last as +inf and
    the middle positions come from the per-slice count of real values."""
    dtype = ctx.input_dtype("x")
    t, r, n, axes = _median_layout(ctx)
    last = r - 1
    mode_min = str(ctx.attr("mode", "avg")) == "min"
    if dtype not in FLOAT_DTYPES:  # no NaN: a plain median in x's dtype
        values, indices = _sorted_prefix(ctx, t, _plus_one(ctx, _half(ctx, n, False)), last)
        lo = _pick(ctx, values, _half(ctx, n, True), last)
        out = lo if mode_min else _average(ctx, lo, _pick(ctx, values, _half(ctx, n, False), last), dtype)
        _median_finish(ctx, "out", out, axes)
        return
    nan = ctx.op.IsNaN(t)
    count = ctx.op.Sub(_i64(ctx, n), ctx.reduce("ReduceSum", ctx.cast(nan, "int64"), [last], keepdims=True))
    filled = ctx.op.Where(nan, ctx.const(math.inf, dtype), t)
    values, _ = _sorted_prefix(ctx, filled, n, last)
    lo_k = ctx.op.Div(ctx.op.Sub(count, ctx.const_i64(1)), ctx.const_i64(2))
    lo_k = ctx.op.Where(ctx.op.Less(lo_k, ctx.const_i64(0)), ctx.const_i64(0), lo_k)
    lo = ctx.op.GatherElements(values, lo_k, axis=last)
    if mode_min:
        out = lo
    else:
        hi = ctx.op.GatherElements(values, ctx.op.Div(count, ctx.const_i64(2)), axis=last)
        out = _average(ctx, lo, hi, dtype)
    out = ctx.op.Where(ctx.op.Equal(count, ctx.const_i64(0)), ctx.const(math.nan, dtype), out)
    _median_finish(ctx, "out", out, axes)


# ---------------------------------------------------------------------- FFT
# A complex Paddle value is carried as a real tensor with a trailing [re, im] dim (ONNX
# DFT's own layout). ONNX Runtime has no complex tensors, so such a value may only flow
# into the ops below; anything else (multiply, a model output ...) is refused.
_COMPLEX_AWARE = frozenset({"fft_c2c", "fft_c2r", "real", "imag", "as_real", "abs", "angle"})
# Ops that keep the carried layout (their axes are normalized against Paddle's rank, so they
# never touch the trailing [re, im] dim; broadcast_tensors keeps it last); their results are
# checked in turn.
_COMPLEX_LAYOUT_SAFE = frozenset({"slice", "broadcast_tensors"})
_REAL_OF = {"complex64": "float32", "complex128": "float64"}


def _check_complex_consumers(ctx: OpContext) -> None:
    pending = [ctx.pd.outputs["out"][0]]
    program = ctx.state.program
    ops = list(program.walk_ops())
    model_outputs = {out.name for out in program.outputs}
    while pending:
        name = pending.pop()
        if name in model_outputs:
            raise ctx.fail("its complex result is a model output; ONNX Runtime has no complex tensors",
                           hint="return real/imag/as_real of the FFT instead")
        for op in ops:
            if not any(name in names for names in op.inputs.values()) or op.type in _COMPLEX_AWARE:
                continue
            if op.type in _COMPLEX_LAYOUT_SAFE:
                pending.extend(n for names in op.outputs.values() for n in names)
                continue
            what = "is a model output" if op.type == "fetch" else f"is used by {op.type} ({op.site})"
            raise ctx.fail(
                f"its complex result {what}; ONNX Runtime has no complex tensors, so pd2onnx carries "
                f"them only into {', '.join(sorted(_COMPLEX_AWARE | _COMPLEX_LAYOUT_SAFE))}",
                hint="take real/imag/as_real of the FFT inside the model",
            )


def _dft(ctx: OpContext, x: ir.Value, axis: int, onesided: bool = False) -> ir.Value:
    """Unscaled forward ONNX DFT of x ([1, ..., 1 or 2]) along ``axis``."""
    if ctx.opset >= 20:
        return ctx.op.DFT(x, None, ctx.const_i64(axis), onesided=int(onesided))
    return ctx.op.DFT(x, axis=axis, onesided=int(onesided))


def _conj(ctx: OpContext, x: ir.Value, dtype: str) -> ir.Value:
    return ctx.op.Mul(x, ctx.const(np.array([1.0, -1.0]), dtype))


def _fft_scale(ctx: OpContext, x: ir.Value, dims: list[int], axes: list[int], dtype: str,
               n_last: int | None = None) -> ir.Value:
    """Paddle's normalization: backward (1/n on the inverse), forward (1/n on the forward),
    ortho (1/sqrt(n) both ways); n is the product of the transformed sizes."""
    norm = str(ctx.attr("normalization", "backward"))
    forward = bool(ctx.attr("forward", True))
    if norm == "backward" and forward or norm == "forward" and not forward:
        return x
    sizes = [dims[a] for a in axes]
    if n_last is not None:
        sizes[-1] = n_last
    if any(s < 0 for s in sizes):
        raise ctx.fail(f"{norm} normalization needs static transform sizes, got {sizes}")
    n = float(np.prod(sizes))
    return ctx.op.Mul(x, ctx.const(1.0 / (math.sqrt(n) if norm == "ortho" else n), dtype))


def _fft_axes(ctx: OpContext, rank: int) -> list[int]:
    axes = [ctx.normalize_axis(int(a), rank) for a in ctx.attr("axes", [])]
    if not axes:
        raise ctx.fail("an FFT without axes")
    return axes


def _real_bins(ctx: OpContext, y: ir.Value, axis: int, n: int, onesided: bool, dtype: str) -> ir.Value:
    """The DFT of a real signal of length ``n`` along ``axis`` of ``y`` ([*dims, 2], no batch
    dim) with the imaginary parts of bin 0 and (n even) bin n/2 made +0, as Paddle (pocketfft)
    gives them: ONNX Runtime's DFT leaves rounding noise of either sign there, which puts the
    angle of a negative real bin at -pi instead of pi."""
    bins = n // 2 + 1 if onesided else n
    shape = [1] * (len(ctx.input_shape("x")) + 1)
    shape[axis], shape[-1] = bins, 2
    mask = np.zeros(shape, dtype=bool)
    index = [0] * len(shape)
    for k in {0, n // 2} if n % 2 == 0 else {0}:
        index[axis], index[-1] = k, 1
        mask[tuple(index)] = True
    return ctx.op.Where(ctx.const(mask), ctx.const(0.0, dtype), y)


@mapper("fft_r2c", min_opset=17)
def fft_r2c(ctx: OpContext) -> None:
    """Real-to-complex FFT: onesided along the last of ``axes``, full along the others. The
    bins of the last axis that are real (0 and n/2) get an imaginary part of exactly +0."""
    _check_complex_consumers(ctx)
    dtype = ctx.input_dtype("x")
    dims = [int(d) for d in ctx.input_shape("x")]
    axes = _fft_axes(ctx, len(dims))
    onesided = bool(ctx.attr("onesided", True))
    n = dims[axes[-1]]
    y = ctx.unsqueeze(ctx.input("x"), [0, len(dims) + 1])  # a batch dim, a [re] dim
    y = _dft(ctx, y, axes[-1] + 1, onesided)
    # the batch dim goes at once, by a Reshape to the result's shape (not a Squeeze): OpenVINO's
    # DFT of a real [..., n, 1] signal keeps the 1 ([..., m, 1, 2]), which the Reshape drops
    y = ctx.op.Reshape(y, _r2c_shape(ctx, dims, axes[-1], onesided))
    if n > 0 and len(axes) > 1:
        y = _real_bins(ctx, y, axes[-1], n, onesided, dtype)
    if len(axes) > 1:
        y = ctx.unsqueeze(y, [0])
        for a in axes[:-1]:
            y = _dft(ctx, y, a + 1)
        y = ctx.squeeze(y, [0])
    if not bool(ctx.attr("forward", True)):  # the inverse direction of a real signal
        y = _conj(ctx, y, dtype)
    y = _fft_scale(ctx, y, dims, axes, dtype)
    if n > 0 and len(axes) == 1:  # after the conjugation and scaling, so that the zeros stay +0
        y = _real_bins(ctx, y, axes[-1], n, onesided, dtype)
    ctx.set_output("out", y)


def _r2c_shape(ctx: OpContext, dims: list[int], last: int, onesided: bool) -> ir.Value:
    """[*dims, 2] with the onesided axis cut to n // 2 + 1 (static, or from Shape(x))."""
    out = list(dims)
    if onesided and dims[last] >= 0:
        out[last] = dims[last] // 2 + 1
    if all(d >= 0 for d in out):
        return ctx.const_i64(out + [2])
    x_dims = ctx.op.Shape(ctx.input("x"))
    if onesided and dims[last] < 0:
        half = ctx.op.Add(ctx.op.Div(ctx.slice(x_dims, [last], [last + 1], [0]), ctx.const_i64([2])),
                          ctx.const_i64([1]))
        x_dims = ctx.op.Concat(ctx.slice(x_dims, [0], [last], [0]), half,
                               ctx.slice(x_dims, [last + 1], [len(dims)], [0]), axis=0)
    return ctx.op.Concat(x_dims, ctx.const_i64([2]), axis=0)


def _complex_input(ctx: OpContext) -> tuple[ir.Value, str, list[int]]:
    """The [re, im]-carried input, its real dtype and its complex dims."""
    dtype = ctx.input_dtype("x")
    if dtype not in _REAL_OF:
        raise ctx.fail(f"expects a complex input, got {dtype}")
    return ctx.input("x"), _REAL_OF[dtype], [int(d) for d in ctx.input_shape("x")]


def _c2c(ctx: OpContext, y: ir.Value, axes: list[int], forward: bool, dtype: str) -> ir.Value:
    """Unscaled complex DFT of a batched [1, ..., 2] value over ``axes`` (shifted by 1)."""
    if not forward:
        y = _conj(ctx, y, dtype)
    for a in axes:
        y = _dft(ctx, y, a + 1)
    return y if forward else _conj(ctx, y, dtype)


@mapper("fft_c2c", min_opset=17)
def fft_c2c(ctx: OpContext) -> None:
    _check_complex_consumers(ctx)
    x, dtype, dims = _complex_input(ctx)
    axes = _fft_axes(ctx, len(dims))
    y = _c2c(ctx, ctx.unsqueeze(x, [0]), axes, bool(ctx.attr("forward", True)), dtype)
    ctx.set_output("out", ctx.squeeze(_fft_scale(ctx, y, dims, axes, dtype), [0]))


@mapper("fft_c2r", min_opset=17)
def fft_c2r(ctx: OpContext) -> None:
    """Complex-to-real FFT: complex transforms over all but the last of ``axes``, then the
    half spectrum along the last is extended by Hermitian symmetry to ``last_dim_size``
    (default 2 * (m - 1)) and transformed; the real part is the result."""
    x, dtype, dims = _complex_input(ctx)
    axes = _fft_axes(ctx, len(dims))
    forward = bool(ctx.attr("forward", False))
    last = axes[-1]
    n = int(ctx.attr("last_dim_size", 0)) or 2 * (dims[last] - 1)
    if n <= 0 or dims[last] < 0:
        raise ctx.fail(f"fft_c2r needs a static half-spectrum size along axis {last}, got {dims[last]}")
    y = _c2c(ctx, ctx.unsqueeze(x, [0]), axes[:-1], forward, dtype)
    b = last + 1  # the axis in the batched value
    k = n // 2 + 1
    if dims[last] >= k:
        half = ctx.slice(y, [0], [k], [b])
    else:
        pads = [0] * (len(dims) + 2) * 2
        pads[len(dims) + 2 + b] = k - dims[last]
        half = ctx.op.Pad(y, ctx.const_i64(pads))
    parts = [half]
    if n - k > 0:  # X[n - j] = conj(X[j]) for j = n - k .. 1
        parts.append(_conj(ctx, ctx.slice(half, [n - k], [0], [b], [-1]), dtype))
    full = ctx.op.Concat(*parts, axis=b) if len(parts) > 1 else half
    spectrum = _dft(ctx, full if forward else _conj(ctx, full, dtype), b)
    real = ctx.op.Gather(spectrum, ctx.const_i64(0), axis=len(dims) + 1)  # re of the (conj) result
    ctx.set_output("out", ctx.squeeze(_fft_scale(ctx, real, dims, axes, dtype, n_last=n), [0]))


@mapper("real", "imag")
def real_imag(ctx: OpContext) -> None:
    """Re / Im of a complex value carried as [re, im] (from the FFT ops)."""
    x, _, dims = _complex_input(ctx)
    ctx.set_output("out", ctx.op.Gather(x, ctx.const_i64(0 if ctx.pd.type == "real" else 1), axis=len(dims)))


def complex_abs(ctx: OpContext) -> None:
    """|z| of a complex value carried as [re, im], as the kernel's ``std::abs`` (hypot):
    ``sqrt(re^2 + im^2)`` in float64 (no overflow or underflow for complex64; complex128
    squares overflow above 1e154), infinite when either part is (even with the other NaN).
    The abs mapper (elementwise) hands complex inputs here."""
    ctx.require_opset(9, "the magnitude of a complex value (Where)")
    x, dtype, dims = _complex_input(ctx)
    w = "float64"
    v = ctx.cast(x, w, dtype)
    last = len(dims)
    magnitude = ctx.op.Sqrt(ctx.reduce("ReduceSumSquare", v, [last], keepdims=False))
    largest = ctx.reduce("ReduceMax", ctx.op.Abs(v), [last], keepdims=False)
    infinite = ctx.op.Greater(largest, ctx.const(np.finfo(np.float64).max, w))
    out = ctx.op.Where(infinite, ctx.const(math.inf, w), magnitude)
    ctx.set_output("out", ctx.cast(out, dtype, w))


@mapper("angle", min_opset=9)
def angle(ctx: OpContext) -> None:
    """The argument of a complex value carried as [re, im]: C's ``atan2(im, re)`` (the
    kernel's ``arg``), in the real dtype. Of a real value: pi where x < 0, else 0; NaN stays
    NaN (Paddle 3; Paddle 2.x gives 0, and files it wrote get that)."""
    in_dtype = ctx.input_dtype("x")
    if in_dtype in _REAL_OF:
        x, dtype, dims = _complex_input(ctx)
        re, im = (ctx.op.Gather(ctx.cast(x, "float64", dtype), ctx.const_i64(k), axis=len(dims)) for k in (0, 1))
        ctx.set_output("out", ctx.cast(atan2_values(ctx, im, re), dtype, "float64"))
        return
    if in_dtype not in FLOAT_DTYPES:
        raise ctx.fail(f"angle of {in_dtype} values (Paddle's kernel takes floats and complex values)")
    x = ctx.input("x")
    zero = ctx.const(0.0, in_dtype)
    out = ctx.op.Where(ctx.op.Less(x, zero), ctx.const(math.pi, in_dtype), zero)
    if not ctx.paddle2_semantics:
        out = ctx.op.Where(is_nan(ctx, x, in_dtype), x, out)
    ctx.set_output("out", out)


@mapper("as_real")
def as_real(ctx: OpContext) -> None:
    """A complex value as [..., 2] real: exactly how it is carried."""
    _complex_input(ctx)
    ctx.set_output("out", ctx.op.Identity(ctx.input("x")))


@mapper("as_complex")
def as_complex(ctx: OpContext) -> None:
    """A real [..., 2] tensor as a complex value: carried as it is (its consumers checked)."""
    _check_complex_consumers(ctx)
    ctx.set_output("out", ctx.op.Identity(ctx.input("x")))
