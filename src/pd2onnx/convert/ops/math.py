"""Matrix products: matmul, legacy matmul v1, matmul_with_flatten (legacy mul), bmm, mv,
dot and einsum.

``matmul`` has numpy semantics (ONNX MatMul's): a 1-D operand is a vector whose dim is
dropped from the result, and its transpose flag is ignored. Legacy matmul v1 differs: a 1-D
``x`` is a row and a 1-D ``y`` a column *before* the transpose flags apply, and only a
vector dim that stays 1 is dropped (so two transposed vectors give an outer product).
"""

from __future__ import annotations

import onnx_ir as ir

from pd2onnx.convert.context import FLOAT_DTYPES, OpContext
from pd2onnx.convert.ops.reduce import reduce, to_declared_rank
from pd2onnx.convert.registry import mapper

# ONNX MatMul (opset 9+) and ONNX Runtime's kernels take these besides floats.
_MATMUL_INTS = frozenset({"int32", "int64", "uint32", "uint64"})


def _matmul(ctx: OpContext, x: ir.Value, y: ir.Value) -> ir.Value:
    """MatMul, checking the dtype is one ONNX MatMul accepts at this opset."""
    dtype = ctx.input_dtype("x")
    if dtype not in FLOAT_DTYPES:
        if dtype not in _MATMUL_INTS:
            raise ctx.fail(f"ONNX MatMul has no {dtype} form")
        if ctx.opset < 9:
            raise ctx.fail(f"ONNX MatMul on {dtype} needs opset 9", hint="pass --opset 9 or newer")
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
