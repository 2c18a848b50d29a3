"""The dtype matrix's math tables: the remaining elementwise functions (stanh, inverse
trigonometric and hyperbolic functions, log2/log10/log1p, add_n), whole-tensor checks
(has_inf/has_nan), matrix products and norms (addmm, legacy matmul with alpha,
matmul_with_flatten, norm, renorm, frobenius_norm, mean_all), einsum/histogram/inverse/
nanmedian (opset 11-12) and the complex ops (fft_*, as_complex/as_real, real/imag, abs/angle of
complex values; opset 17; angle of real values).

x (any sign) and p (positive) are (3, 4). Ops that only Paddle 2.6's legacy programs hold
(``matmul`` with alpha, ``mul``, ``mean``, the one-flag ``isinf``/``isnan``, ``norm``) are
appended by hand in ``static`` entries; Paddle 3.3 builds ``norm``, ``mean_all`` and
``matmul_with_flatten`` with ``_C_ops``. The converter carries complex values as real tensors
with a trailing [re, im] dim and refuses a complex model output, so every complex entry ends
in a real tensor (``real``, ``imag``, ``as_real``, ``fft_c2r``, ``abs``, ``angle``).
"""

from __future__ import annotations

from harness.dtype_matrix import DTYPES, ZERO_D_DTYPES, register

SHAPE = (3, 4)


def _pir(P) -> bool:
    return int(P.__version__.split(".")[0]) >= 3


def _legacy(P, op_type, inputs, attrs, outputs=("Out",), dtype=None):
    """A raw legacy op appended to the current static program (Paddle 2.6); its first output."""
    helper = P.base.layer_helper.LayerHelper(op_type)
    dtype = dtype or next(iter(inputs.values()))[0].dtype
    outs = {slot: [helper.create_variable_for_type_inference(dtype)] for slot in outputs}
    helper.append_op(type=op_type, inputs=inputs, outputs=outs, attrs=attrs)
    return outs[outputs[0]][0]


def _unit(P, x):
    """x in [-1, 1] (the domain of asin/acos)."""
    return P.clip(x, -1, 1)


def _elem(P):
    return [
        ("stanh", lambda x, p: P.stanh(x)),
        ("stanh:scales", lambda x, p: P.stanh(x, 0.5, 2.0)),
        ("acos", lambda x, p: P.acos(_unit(P, x))),
        ("asin", lambda x, p: P.asin(_unit(P, x))),
        ("acos:raw", lambda x, p: P.acos(x)),  # NaN outside [-1, 1]; ints (no clip kernel) too
        ("asin:raw", lambda x, p: P.asin(x)),
        ("atan", lambda x, p: P.atan(x)),
        ("tan", lambda x, p: P.tan(x)),
        ("sinh", lambda x, p: P.sinh(x)),
        ("cosh", lambda x, p: P.cosh(x)),
        ("log2", lambda x, p: P.log2(p)),
        ("log10", lambda x, p: P.log10(p)),
        ("log1p", lambda x, p: P.log1p(p)),
        ("log1p:negative", lambda x, p: P.log1p(P.clip(x, -0.5, 8))),
        ("add_n", lambda x, p: P.add_n([x, p, x])),
        ("add_n:two", lambda x, p: P.add_n([x, p])),
    ]


def _has(P, op_type, x):
    return _legacy(P, op_type, {"X": [x]}, {}, dtype="bool")


def _special(P, x):
    """x with an inf (floats): x / 0 where x > 1, else x."""
    if x.dtype in (P.float16, P.bfloat16, P.float32, P.float64):
        return P.where(P.greater_than(x, P.ones_like(x)), x / P.zeros_like(x), x)
    return x


def _logic(P):
    """The legacy one-flag isinf/isnan (has_inf/has_nan): Paddle 2.6 only."""
    return [
        ("has_inf:static", lambda x, p: _has(P, "isinf", x)),
        ("has_inf:static-inf", lambda x, p: _has(P, "isinf", _special(P, x))),
        ("has_nan:static", lambda x, p: _has(P, "isnan", p)),
        ("has_nan:static-nan", lambda x, p: _has(P, "isnan", _special(P, x) * P.zeros_like(x))),
    ]


def _mean_all(P, x):
    if _pir(P):
        return P._C_ops.mean_all(x)
    return _legacy(P, "mean", {"X": [x]}, {})


def _norm(P, x, axis):
    if _pir(P):
        return P._C_ops.norm(x, axis, 1e-10, True)[0]
    return _legacy(P, "norm", {"X": [x]}, {"axis": axis, "epsilon": 1e-10, "is_test": True}, ("Out", "Norm"))


def _mul(P, x, y, xd, yd):
    if _pir(P):
        return P._C_ops.matmul_with_flatten(x, y, xd, yd)
    return _legacy(P, "mul", {"X": [x], "Y": [y]}, {"x_num_col_dims": xd, "y_num_col_dims": yd})


def _matmul1(P, x, y, tx, ty, alpha):
    return _legacy(P, "matmul", {"X": [x], "Y": [y]}, {"transpose_X": tx, "transpose_Y": ty, "alpha": alpha})


def _linalg(P):
    return [
        ("addmm", lambda x, p: P.addmm(x[:, :3], x, P.transpose(p, [1, 0]), beta=0.5, alpha=2.0)),
        ("legacy_matmul:static", lambda x, p: _matmul1(P, x, p, False, True, 0.5)),
        ("legacy_matmul:static-tx", lambda x, p: _matmul1(P, x, p, True, False, 1.0)),
        ("matmul_with_flatten:static", lambda x, p: _mul(P, x, P.transpose(p, [1, 0]), 1, 1)),
        ("matmul_with_flatten:static-3d",
         lambda x, p: _mul(P, P.reshape(x, [3, 2, 2]), P.reshape(p, [2, 6]), 1, 1)),
        ("norm:static", lambda x, p: _norm(P, x, 1)),
        ("norm:static-axis0", lambda x, p: _norm(P, x, 0)),
        ("renorm", lambda x, p: P.renorm(x, 2.0, 0, 1.0)),
        ("renorm:axis1-p1", lambda x, p: P.renorm(x, 1.0, 1, 2.5)),
        ("frobenius_norm", lambda x, p: P.linalg.norm(x, "fro", axis=[0, 1])),
        ("frobenius_norm:keepdim", lambda x, p: P.linalg.norm(x, "fro", axis=[0, 1], keepdim=True)),
        ("mean_all:static", lambda x, p: _mean_all(P, x)),
    ]


def _nan_where(P, x, p):
    """x with NaN where x > p (floats only: 0 / 0; full_like(nan) cannot be saved as PIR
    JSON, whose writer has no NaN attribute)."""
    if x.dtype not in (P.float16, P.bfloat16, P.float32, P.float64):
        raise NotImplementedError("NaN needs a float tensor")
    return P.where(P.greater_than(x, p), P.zeros_like(x) / P.zeros_like(x), x)


def _nanmedian(P, x, **kw):
    """Paddle 3.3 only: Paddle 2.6's inference predictor segfaults in NanmedianInferMeta on
    every nanmedian program (float32; no kernel in float16), which would kill the worker;
    ``tests/ops/cases_math2.py`` (nanmedian_legacy) covers the legacy op against numpy."""
    if not _pir(P):
        raise NotImplementedError("nanmedian: Paddle 2.6's predictor segfaults on it")
    return P.nanmedian(x, **kw)


def _high(P):
    """Mappers that need opset 11 (histogram, inverse, nanmedian) or 12 (einsum)."""
    return [
        ("einsum", lambda x, p: P.einsum("ij,kj->ik", x, p)),
        ("einsum:sum", lambda x, p: P.einsum("ij->j", x)),
        ("histogram", lambda x, p: P.histogram(x, bins=4, min=-2, max=2)),
        ("histogram:auto-range", lambda x, p: P.histogram(p, bins=3)),
        ("inverse", lambda x, p: P.inverse(P.matmul(x, x, transpose_y=True) + 4 * P.eye(3, dtype=x.dtype))),
        ("nanmedian", lambda x, p: _nanmedian(P, x, axis=1)),
        ("nanmedian:all", lambda x, p: _nanmedian(P, p)),
        ("nanmedian:nan", lambda x, p: _nanmedian(P, _nan_where(P, x, p), axis=1)),
    ]


def _cplx(P, x, p):
    return P.as_complex(P.stack([x, p], -1))


def _complex(P):
    """Complex ops (opset 17: DFT); every entry ends in a real tensor."""
    fft = P.fft
    return [
        ("fft_r2c+real", lambda x, p: P.real(fft.rfft(x))),
        ("fft_r2c+imag:two-sided", lambda x, p: P.imag(fft.fft(x))),
        ("fft_r2c+as_real:2d", lambda x, p: P.as_real(fft.rfft2(x, norm="ortho"))),
        ("as_complex+fft_c2c+imag", lambda x, p: P.imag(fft.fft(_cplx(P, x, p)))),
        ("fft_c2c+real:inverse", lambda x, p: P.real(fft.ifft(_cplx(P, x, p), norm="forward"))),
        ("fft_c2r", lambda x, p: fft.irfft(_cplx(P, x, p))),
        ("fft_c2r:n", lambda x, p: fft.irfft(_cplx(P, x, p), n=5, norm="ortho")),
        ("as_complex+as_real", lambda x, p: P.as_real(_cplx(P, x, p)) * 2),
        ("real+as_complex", lambda x, p: P.real(_cplx(P, x, p))),
        ("imag+as_complex", lambda x, p: P.imag(_cplx(P, x, p))),
        ("abs+as_complex:complex", lambda x, p: P.abs(_cplx(P, x, p))),
        ("angle+as_complex:complex", lambda x, p: P.angle(_cplx(P, x, p))),
        ("angle", lambda x, p: P.angle(x)),
    ]


for _group, _table in {
    "mathelem": _elem,
    "mathlogic": _logic,
    "mathlinalg": _linalg,
    "mathhigh": _high,
    "mathcomplex": _complex,
}.items():
    register(__file__, _group, _table, SHAPE, DTYPES)
# the elementwise table again on 0-D inputs
register(__file__, "mathelem0d", _elem, (), ZERO_D_DTYPES)
