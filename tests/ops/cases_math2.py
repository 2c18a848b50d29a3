"""Math cases (issue 13): linear algebra, norms, cumulative ops, histogram, order statistics.

Order statistics use data with ties for the values (Paddle's selection is unstable, so
indices are only compared where the answer is unique) and NaN where the op defines it.
"""

import numpy as np

from harness.cases import case

F32 = "float32"
F64 = "float64"
I64 = "int64"
PIR_ONLY_OP = "the op exists from Paddle 3 on (Paddle 2.6 composes it from other ops)"


# ---------------------------------------------------------------------- elementwise-ish
@case("lerp")
def lerp(paddle, rng):
    """A tensor weight (broadcast) and a scalar weight."""

    def fn(x, y, w):
        return paddle.lerp(x, y, w), paddle.lerp(x, y, 0.3)

    x = rng.standard_normal((3, 4)).astype(F32)
    y = rng.standard_normal((3, 4)).astype(F32)
    return fn, [x, y, rng.random((1, 4)).astype(F32)]


@case("addmm")
def addmm(paddle, rng):
    """beta/alpha, a full and a broadcast input."""

    def fn(i, x, y):
        return paddle.addmm(i, x, y, beta=0.5, alpha=2.0), paddle.addmm(i[:1], x, y)

    return fn, [rng.standard_normal((3, 5)).astype(F32), rng.standard_normal((3, 4)).astype(F32),
                rng.standard_normal((4, 5)).astype(F32)]


@case("kron")
def kron(paddle, rng):
    """Equal ranks, a lower-rank y, int64."""

    def fn(x, y, a, b):
        return paddle.kron(x, y), paddle.kron(x, y[0]), paddle.kron(a, b)

    x = rng.standard_normal((2, 3)).astype(F32)
    y = rng.standard_normal((3, 2)).astype(F32)
    a = rng.integers(-5, 5, (2, 2, 1)).astype(I64)
    b = rng.integers(-5, 5, (1, 3, 2)).astype(I64)
    return fn, [x, y, a, b]


@case("kron", name="kron_dynamic")
def kron_dynamic(paddle, rng):
    def fn(x, y):
        return paddle.kron(x, y)

    return fn, [rng.standard_normal((2, 3)).astype(F32), rng.standard_normal((2, 2)).astype(F32)], \
        [(None, 3), (2, None)]


@case("cross")
def cross(paddle, rng):
    """The default axis (first of size 3) and an explicit one; int64."""

    def fn(x, y, a, b):
        return paddle.cross(x, y), paddle.cross(x, y, axis=-1), paddle.cross(a, b, axis=0)

    x = rng.standard_normal((3, 3)).astype(F32)
    y = rng.standard_normal((3, 3)).astype(F32)
    a = rng.integers(-9, 9, (3, 2)).astype(I64)
    b = rng.integers(-9, 9, (3, 2)).astype(I64)
    return fn, [x, y, a, b]


# ---------------------------------------------------------------------- diagonals
@case("diagonal")
def diagonal(paddle, rng):
    """Offsets +-, swapped/negative axes, a 3-D batch."""

    def fn(x, b):
        return (
            paddle.diagonal(x),
            paddle.diagonal(x, offset=2),
            paddle.diagonal(x, offset=-1),
            paddle.diagonal(b, offset=1, axis1=2, axis2=0),
            paddle.diagonal(b, axis1=-1, axis2=-2),
        )

    return fn, [rng.standard_normal((3, 5)).astype(F32), rng.standard_normal((4, 2, 3)).astype(F32)]


@case("diagonal", name="diagonal_dynamic")
def diagonal_dynamic(paddle, rng):
    def fn(x):
        return paddle.diagonal(x, offset=1, axis1=1, axis2=2), paddle.diagonal(x, offset=-2, axis1=2, axis2=1)

    return fn, [rng.standard_normal((2, 4, 5)).astype(F32)], [(None, None, None)]


@case("trace")
def trace(paddle, rng):
    def fn(x, b, i):
        return paddle.trace(x), paddle.trace(x, offset=-1), paddle.trace(b, offset=1, axis1=1, axis2=2), \
            paddle.trace(i, offset=4)

    x = rng.standard_normal((4, 3)).astype(F32)
    b = rng.standard_normal((2, 3, 4)).astype(F32)
    return fn, [x, b, rng.integers(-9, 9, (3, 3)).astype(I64)]


@case("diag")
def diag(paddle, rng):
    """1-D to matrix (offsets, padding value) and 2-D to diagonal."""

    def fn(v, m):
        return (
            paddle.diag(v),
            paddle.diag(v, offset=2, padding_value=-1.0),
            paddle.diag(v, offset=-1),
            paddle.diag(m, offset=1),
            paddle.diag(m, offset=-2),
        )

    return fn, [rng.standard_normal((3,)).astype(F32), rng.standard_normal((3, 4)).astype(F32)]


@case("diag", name="diag_dynamic_int")
def diag_dynamic_int(paddle, rng):
    def fn(v):
        return paddle.diag(v, offset=1, padding_value=7)

    return fn, [rng.integers(-9, 9, (4,)).astype(I64)], [(None,)]


# ---------------------------------------------------------------------- inverse
def _well_conditioned(rng, shape, dtype=F32):
    return (rng.standard_normal(shape) + 3 * np.eye(shape[-1])).astype(dtype)


@case("inverse", rtol=1e-4, atol=1e-4)
def inverse(paddle, rng):
    """1x1, 2x2, 3x3 and a batch of 4x4 in float32 (adjugate/determinant differs from
    LAPACK's LU in the last digits: up to 2e-5 measured here, hence 1e-4)."""

    def fn(a, b, c, d):
        return paddle.inverse(a), paddle.inverse(b), paddle.inverse(c), paddle.inverse(d)

    return fn, [_well_conditioned(rng, s) for s in ((1, 1), (2, 2), (3, 3), (2, 3, 4, 4))]


@case("inverse", name="inverse_float64", rtol=1e-4, atol=1e-4)
def inverse_float64(paddle, rng):
    """float64 goes through float32 (ONNX Runtime's Det has no float64): float32 accuracy."""

    def fn(a):
        return paddle.inverse(a)

    return fn, [_well_conditioned(rng, (5, 5), F64)]


# ---------------------------------------------------------------------- norms
@case("dist")
def dist(paddle, rng):
    """p = 2, 3, 0, inf, -inf, 1.5 with broadcasting."""

    def fn(x, y):
        return (
            paddle.dist(x, y),
            paddle.dist(x, y, 3),
            paddle.dist(x, y, 0),
            paddle.dist(x, y, float("inf")),
            paddle.dist(x, y, float("-inf")),
            paddle.dist(x, y[:1], 1.5),
        )

    x = rng.standard_normal((3, 4)).astype(F32)
    y = x.copy()
    y[1, 2] += 1.0
    y[0] -= 0.25
    return fn, [x, y]


@case("renorm")
def renorm(paddle, rng):
    """Slices above and below max_norm; p 2 and 1, axis 0 and 1."""

    def fn(x):
        return paddle.renorm(x, 2.0, 0, 1.5), paddle.renorm(x, 1.0, 1, 2.0)

    x = rng.standard_normal((3, 4)).astype(F32)
    x[1] *= 0.1
    return fn, [x]


@case("norm", name="norm_legacy", formats=("legacy",), why="norm (l2 normalize, and its norm) is legacy-only")
def norm_legacy(paddle, rng):
    def fn(x):
        helper = paddle.base.layer_helper.LayerHelper("norm")
        out = helper.create_variable_for_type_inference(x.dtype)
        n = helper.create_variable_for_type_inference(x.dtype)
        helper.append_op(type="norm", inputs={"X": [x]}, outputs={"Out": [out], "Norm": [n]},
                         attrs={"axis": 1, "epsilon": 1e-6, "is_test": True})
        return out  # with is_test, Paddle's kernel leaves Norm unwritten

    return fn, [rng.standard_normal((2, 3, 4)).astype(F32)]


@case("norm", name="norm_pir", formats=("pir",), why="the PIR op (Paddle 3 builds it with _C_ops; legacy: norm_legacy)")
def norm_pir(paddle, rng):
    """Along the middle and the last axis (axis -1), a tiny epsilon and a large one."""

    def fn(x):
        return (
            paddle._C_ops.norm(x, 1, 1e-6, True)[0],
            paddle._C_ops.norm(x, -1, 1e-10, True)[0],
            paddle._C_ops.norm(x * 1e-3, 0, 0.5, True)[0],
        )

    return fn, [rng.standard_normal((2, 3, 4)).astype(F32)]


# ---------------------------------------------------------------------- cumulative
@case("cumprod")
def cumprod(paddle, rng):
    """Along each axis, with zeros and negatives; int64 exact."""

    def fn(x, i):
        return paddle.cumprod(x, dim=0), paddle.cumprod(x, dim=-1), paddle.cumprod(i, dim=1)

    x = rng.standard_normal((3, 5)).astype(F32)
    x[1, 2] = 0.0
    i = rng.integers(-9, 9, (2, 6)).astype(I64)
    return fn, [x, i]


@case("cumprod", name="cumprod_dynamic")
def cumprod_dynamic(paddle, rng):
    def fn(x):
        return paddle.cumprod(x, dim=1)

    return fn, [rng.standard_normal((2, 4, 3)).astype(F32)], [(None, None, 3)]


@case("cumprod", name="cumprod_exclusive_reverse", formats=("pir",), why="exclusive/reverse: Paddle 3 only")
def cumprod_exclusive_reverse(paddle, rng):
    def fn(x):
        return (
            paddle._C_ops.cumprod(x, 1, True, False),
            paddle._C_ops.cumprod(x, 1, False, True),
            paddle._C_ops.cumprod(x, 0, True, True),
        )

    return fn, [rng.standard_normal((3, 4)).astype(F32)]


@case("logcumsumexp")
def logcumsumexp(paddle, rng):
    """Along an axis, flattened, and with values far apart (+-1000: stability)."""

    def fn(x, w):
        return paddle.logcumsumexp(x, axis=1), paddle.logcumsumexp(x), paddle.logcumsumexp(w, axis=0)

    x = rng.standard_normal((3, 4)).astype(F32)
    w = np.array([[-1000.0, 3.0], [0.0, -2.0], [1000.0, 1.0]], F32)
    return fn, [x, w]


@case(
    "logcumsumexp",
    name="logcumsumexp_exclusive_reverse",
    formats=("legacy",),
    why="exclusive/reverse are only reachable through a raw legacy op",
)
def logcumsumexp_exclusive_reverse(paddle, rng):
    def fn(x):
        outs = []
        for exclusive, reverse in ((True, False), (False, True), (True, True)):
            helper = paddle.base.layer_helper.LayerHelper("logcumsumexp")
            out = helper.create_variable_for_type_inference(x.dtype)
            helper.append_op(type="logcumsumexp", inputs={"X": [x]}, outputs={"Out": [out]},
                             attrs={"axis": 1, "flatten": False, "exclusive": exclusive, "reverse": reverse})
            outs.append(out)
        return tuple(outs)

    return fn, [rng.standard_normal((2, 4)).astype(F32)]


# ---------------------------------------------------------------------- histogram
@case("histogram")
def histogram(paddle, rng):
    """A fixed range (values outside, on the edges, at max), the data's own range (float and
    int), and a flat input (its range widened by 1 each way)."""

    def fn(x, i):
        return (
            paddle.histogram(x, bins=5, min=0, max=1),
            paddle.histogram(x, bins=7),
            paddle.histogram(i, bins=3, min=1, max=4),
            paddle.histogram(i, bins=4),
            paddle.histogram(x * 0.0 + 3.0, bins=4),
        )

    x = np.array([0.0, 0.2, 0.4, 0.6, 1.0, -1.0, 2.0, 0.39999, 0.5, 0.75], F32)
    i = np.array([1, 2, 3, 4, 0, 5, 4, 2], I64)
    return fn, [x, i]


@case("histogram", name="histogram_weight_density", formats=("pir",), why="weight/density: Paddle 3 only")
def histogram_weight_density(paddle, rng):
    def fn(x, w, i):
        return (
            paddle.histogram(x, bins=5, min=0, max=1, weight=w),
            paddle.histogram(x, bins=5, min=0, max=1, density=True),
            paddle.histogram(x, bins=4, weight=w, density=True),
            paddle.histogram(i, bins=5, min=0, max=4, weight=i),
        )

    x = np.array([0.0, 0.2, 0.4, 0.6, 1.0, -1.0, 2.0, 0.39999], F32)
    w = np.array([1, 2, 3, 4, 5, 6, 7, 8], F32)
    return fn, [x, w, np.array([1, 2, 3, 3], I64)]


@case("lerp", "take_along_axis", "argsort", name="quantile_composite")
def quantile_composite(paddle, rng):
    """paddle.quantile / nanquantile are composed of argsort, take_along_axis, lerp, ...;
    the case checks the composition converts."""

    def fn(x):
        q = paddle.quantile(x, 0.3, axis=1), paddle.quantile(x, [0.1, 0.75])
        return (*q, paddle.nanquantile(x, 0.5, axis=0))

    x = rng.standard_normal((4, 5)).astype(F32)
    x[1, 2] = np.nan
    return fn, [x]


# ---------------------------------------------------------------------- order statistics
@case("kthvalue")
def kthvalue(paddle, rng):
    """Values with ties along rows (indices compared on a tie-free input), keepdim."""

    def fn(t, u):
        v, _ = paddle.kthvalue(t, 2, axis=1)
        v2, i2 = paddle.kthvalue(u, 3, axis=0, keepdim=True)
        v3, i3 = paddle.kthvalue(u, 1)
        return v, v2, i2, v3, i3

    t = np.array([[3.0, 1.0, 3.0, 1.0, 2.0], [5.0, 5.0, 4.0, 4.0, 4.0]], F32)
    u = rng.permutation(20).reshape(4, 5).astype(F32) - 10
    return fn, [t, u]


@case("mode")
def mode(paddle, rng):
    """Ties between values (the smallest wins) and repeated values (last index)."""

    def fn(x, i):
        return paddle.mode(x, axis=1), paddle.mode(x, axis=0, keepdim=True), paddle.mode(i)

    x = np.array([[3.0, 1.0, 3.0, 1.0, 2.0], [5.0, 5.0, 4.0, 4.0, 4.0], [1.0, 2.0, 3.0, 4.0, 5.0]], F32)
    i = np.array([[7, -2, 7, 0], [1, 1, 1, 9]], I64)
    return fn, [x, i]


@case("median", formats=("pir",), why=PIR_ONLY_OP)
def median(paddle, rng):
    """avg over an axis / everything (even and odd counts), min with its index on a
    tie-free input, int64 (float32 result), NaN in a slice, keepdim."""

    def fn(x, u, i):
        m_min, m_idx = paddle.median(u, axis=1, mode="min")
        return (
            paddle.median(x, axis=1),
            paddle.median(x, axis=0, keepdim=True),
            paddle.median(x),
            m_min,
            m_idx,
            paddle.median(i, axis=1),
        )

    x = np.array([[3.0, 1.0, 3.0, 1.0], [5.0, np.nan, 4.0, 4.0], [1.0, 2.0, 3.0, 4.0]], F32)
    u = rng.permutation(15).reshape(3, 5).astype(F32)
    i = np.array([[7, -2, 7, 0], [1, 1, 1, 9]], I64)
    return fn, [x, u, i]


NAN_X = np.array(
    [[[1.0, np.nan, 3.0, 4.0], [np.nan, np.nan, np.nan, np.nan], [2.0, np.nan, 3.0, np.nan]],
     [[0.5, 1.5, -2.0, np.nan], [9.0, 8.0, np.nan, 7.0], [1.0, 1.0, 1.0, 1.0]]],
    F32,
)
INT_X = np.array([[7, -2, 7, 0], [1, 1, 1, 9], [-3, -2, 5, 5]], I64)


def _nanmedians(paddle, x, i):
    return (
        paddle.nanmedian(x, axis=1),
        paddle.nanmedian(x),
        paddle.nanmedian(x, axis=[0, 1], keepdim=True),
        paddle.nanmedian(i, axis=-1),
    )


@case("nanmedian", formats=("pir",), why="Paddle 2.6's predictor crashes on nanmedian: see nanmedian_legacy")
def nanmedian(paddle, rng):
    """NaNs skipped (all-NaN slices give NaN), over one axis, several axes and everything;
    int64 (the average truncates); 0-D inputs (a number, a NaN)."""

    def fn(x, i):
        return (*_nanmedians(paddle, x, i), paddle.nanmedian(x[0, 0, 0]), paddle.nanmedian(x[0, 1, 0]))

    return fn, [NAN_X, INT_X]


@case(
    "nanmedian",
    name="nanmedian_legacy",
    formats=("legacy",),
    why="Paddle 2.6's inference predictor segfaults on nanmedian; numpy is the reference",
    custom=True,
)
def nanmedian_legacy(paddle, rng, out_dir):
    import os
    import warnings

    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", list(NAN_X.shape), F32)
            i = paddle.static.data("i", list(INT_X.shape), I64)
            outs = _nanmedians(paddle, x, i)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        prefix = os.path.join(out_dir, "model")
        paddle.static.save_inference_model(prefix, [x, i], list(outs), exe, program=main)
    finally:
        paddle.disable_static()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # all-NaN slices
        want = [
            np.nanmedian(NAN_X, axis=1).astype(F32),
            np.asarray(np.nanmedian(NAN_X), F32),
            np.nanmedian(NAN_X, axis=(0, 1), keepdims=True).astype(F32),
            np.sort(INT_X, axis=-1)[:, 1:3].sum(axis=-1) // 2,  # all sums here are >= 0
        ]
    return {"model": "model.pdmodel", "inputs": [NAN_X, INT_X], "outputs": want}


@case(
    "nanmedian", name="nanmedian_min", formats=("pir",), why="nanmedian's mode attribute is new in Paddle 3"
)
def nanmedian_min(paddle, rng):
    def fn(x):
        return paddle.nanmedian(x, axis=1, mode="min")[0]

    x = np.array([[1.0, np.nan, 3.0, 4.0], [np.nan] * 4, [2.0, np.nan, 3.0, np.nan]], F32)
    return fn, [x]


@case("kthvalue", "mode", "cumprod", "logcumsumexp", "lerp", "dist", name="math_0d")
def math_0d(paddle, rng):
    """0-D inputs (Paddle 2.5+ gives them from reductions and indexing)."""

    def fn(x, y):
        return (
            *paddle.kthvalue(x, 1),
            *paddle.mode(x),
            paddle.cumprod(x, dim=0),
            paddle.logcumsumexp(x),
            paddle.lerp(x, y, 0.25),
            paddle.dist(x, y),
        )

    return fn, [np.array(2.5, F32), np.array(-1.0, F32)]


# ---------------------------------------------------------------------- FFT
@case("fft_r2c", "fft_c2c", "fft_c2r", "real", "imag", "as_real", "as_complex", name="fft", rtol=1e-4,
      atol=1e-4)
def fft(paddle, rng):
    """rfft/fft/ifft/irfft/hfft and 2-D transforms with every normalization, read through
    real/imag/as_real, and a complex input made by as_complex (float32 DFTs differ from
    pocketfft by ~1e-5 relative: 1e-4)."""

    def fn(x, y):
        r = paddle.fft.rfft(x)
        f = paddle.fft.fft(x, norm="ortho")
        g = paddle.fft.ifft(f, axis=0, norm="forward")
        return (
            paddle.real(r),
            paddle.imag(r),
            paddle.as_real(f),
            paddle.as_real(g),
            paddle.fft.irfft(r),
            paddle.fft.irfft(r, n=5, norm="ortho"),
            paddle.fft.hfft(r, n=7),
            paddle.real(paddle.fft.rfft2(y)),
            paddle.fft.irfft2(paddle.fft.rfft2(y, norm="forward"), s=(4, 6), norm="forward"),
            paddle.as_real(paddle.fft.fft(paddle.as_complex(paddle.stack([x, x * 2.0], axis=-1)), axis=0)),
        )

    return fn, [rng.standard_normal((3, 8)).astype(F32), rng.standard_normal((2, 4, 6)).astype(F32)]


@case("abs", "angle", "fft_r2c", "broadcast_tensors", name="fft_abs_angle", rtol=1e-4, atol=1e-4)
def fft_abs_angle(paddle, rng):
    """Magnitude and phase spectra (complex64): abs/angle of rfft (whose bins 0 and n/2 are
    real: their angle is 0 or pi, never -pi), of two-sided and 2-D transforms, and complex
    values broadcast against each other (float32 DFTs differ from pocketfft by ~1e-5: 1e-4)."""

    def fn(x):
        r = paddle.fft.rfft(x)
        a, b = paddle.broadcast_tensors([r, paddle.fft.rfft(x[:1])])
        return (
            paddle.abs(r),
            paddle.angle(r),
            paddle.abs(paddle.fft.fft(x, axis=0)),
            paddle.angle(paddle.fft.fft2(x)),
            paddle.real(a) + paddle.imag(b),
        )

    x = rng.standard_normal((3, 8)).astype(F32)
    x[0, :2] = 0.0
    return fn, [x]


@case("abs", "angle", "as_complex", name="complex_abs_angle")
def complex_abs_angle(paddle, rng):
    """abs/angle of complex64 and complex128 values made by as_complex (no FFT: the mappers'
    lowest opset, 9), with zeros, signed zeros and a negative real value (angle pi or -pi by
    the sign of the zero), parts large enough to overflow float32 squares; angle of real
    float32 values (negative, zero, positive)."""

    def fn(z32, z64):
        c32, c64 = paddle.as_complex(z32), paddle.as_complex(z64)
        return paddle.abs(c32), paddle.angle(c32), paddle.abs(c64), paddle.angle(c64), paddle.angle(z32)

    z = rng.standard_normal((4, 3, 2))
    z[0] = [[0.0, 0.0], [-0.0, 0.0], [-2.0, -0.0]]
    z[1, 0] = [0.0, -0.0]
    z[1, 1] = [-3.0, 0.0]
    z[2, 0] = [3e30, -4e30]
    return fn, [z.astype(F32), z]
