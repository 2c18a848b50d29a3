"""Indexing cases: gather/scatter families, where/nonzero, topk/argsort, cumsum.

Indices come in as runtime inputs (int32 and int64) unless a case is about constant
indices. Negative indices are PIR-only: Paddle 2.6 rejects them (or crashes), Paddle 3.x
wraps them. Sort inputs are permutations (no ties) unless the case is about stable ties;
``assign`` scatters use distinct targets (duplicate order is unspecified in ONNX).
"""

import numpy as np

from harness.cases import case

F32 = "float32"
I32 = "int32"
I64 = "int64"
NEG_WHY = "Paddle 2.6 rejects negative indices; Paddle 3.x wraps them"
NEG_AXIS_WHY = "Paddle 2.6 gather has no negative axis (dygraph raises, the predictor returns garbage)"


def is_paddle2(paddle) -> bool:
    return paddle.__version__.startswith("2.")


def legacy_op(paddle, op_type, inputs, attrs, outputs, dtypes):
    """Append a raw legacy op (Paddle 2.6 static mode) for attributes its API hides."""
    helper = paddle.base.layer_helper.LayerHelper(op_type)
    outs = {slot: [helper.create_variable_for_type_inference(dt)] for slot, dt in zip(outputs, dtypes)}
    helper.append_op(type=op_type, inputs=inputs, outputs=outs, attrs=attrs)
    results = [outs[slot][0] for slot in outputs]
    return results[0] if len(results) == 1 else results


def distinct(rng, shape, dtype=F32):
    """Distinct values (a shuffled range, centred on 0), so sorts have no ties."""
    n = int(np.prod(shape))
    values = rng.permutation(n).reshape(shape) - n // 2
    return (values * 0.5 if dtype == F32 else values).astype(dtype)


# ---------------------------------------------------------------------- gather / index_select
@case("gather", name="indexing_gather_runtime_index")
def indexing_gather_runtime_index(paddle, rng):
    def fn(x, i32, i64):
        return paddle.gather(x, i64), paddle.gather(x, i32, axis=1)

    x = rng.standard_normal((4, 5)).astype(F32)
    return fn, [x, np.array([4, 0, 2, 2], I32), np.array([3, 1, 0], I64)]


@case("gather", name="indexing_gather_dynamic_int64")
def indexing_gather_dynamic_int64(paddle, rng):
    def fn(x, i):
        return paddle.gather(x, i, axis=1)

    x = rng.integers(-(2**40), 2**40, (3, 6, 2)).astype(I64)
    return fn, [x, np.array([5, 0, 3], I32)], [(None, 6, None), (None,)]


@case("gather", name="indexing_gather_axis_tensor")
def indexing_gather_axis_tensor(paddle, rng):
    """The axis as a (constant) tensor: PIR operand from full, legacy ``Axis`` input."""

    def fn(x, i):
        return paddle.gather(x, i, axis=paddle.full([1], 1, I64))

    return fn, [rng.standard_normal((3, 4)).astype(F32), np.array([3, 1], I64)]


@case("gather", name="indexing_gather_index_shapes")
def indexing_gather_index_shapes(paddle, rng):
    """A 0-D index drops the axis; an [N, 1] index reads as 1-D."""

    def fn(x, i0, i2):
        return paddle.gather(x, i0), paddle.gather(x, i2, axis=0)

    x = rng.standard_normal((4, 3)).astype(F32)
    return fn, [x, np.array(2, I64), np.array([[3], [0]], I32)]


@case("gather", name="indexing_gather_const_index")
def indexing_gather_const_index(paddle, rng):
    def fn(x):
        return paddle.gather(x, paddle.to_tensor(np.array([2, 0, 1], I64)), axis=1)

    return fn, [rng.standard_normal((2, 3)).astype(F32)]


@case("gather", name="indexing_gather_negative", formats=("pir",), why=NEG_WHY, opsets=(7, 9, 10, 11, 17, 26))
def indexing_gather_negative(paddle, rng):
    """Below opset 11 the converter wraps negative indices itself (opset 7: through double)."""

    def fn(x, i):
        return paddle.gather(x, i, axis=1), paddle.gather(x, paddle.to_tensor(np.array([-1, 0], I64)))

    return fn, [rng.standard_normal((3, 5)).astype(F32), np.array([-1, 2, -5, 0], I32)], [(None, 5), (None,)]


@case("gather", name="indexing_gather_negative_axis", formats=("pir",), why=NEG_AXIS_WHY)
def indexing_gather_negative_axis(paddle, rng):
    def fn(x, i):
        return paddle.gather(x, i, axis=-1)

    return fn, [rng.standard_normal((2, 3, 4)).astype(F32), np.array([3, 1, 0], I64)]


@case("index_select", name="indexing_index_select")
def indexing_index_select(paddle, rng):
    def fn(x, i32, i64):
        return (
            paddle.index_select(x, i32, axis=1),
            paddle.index_select(x, i64),
            paddle.index_select(x, i64, -1),
        )

    x = rng.standard_normal((4, 4)).astype(F32)
    return fn, [x, np.array([3, 3, 0], I32), np.array([1, 2], I64)], [(None, 4), (3,), (None,)]


@case("index_select", name="indexing_index_select_negative", formats=("pir",), why=NEG_WHY)
def indexing_index_select_negative(paddle, rng):
    def fn(x, i):
        return paddle.index_select(x, i, axis=0)

    return fn, [rng.integers(0, 100, (4, 3)).astype(I64), np.array([-4, -1, 1], I64)]


# ---------------------------------------------------------------------- gather_nd
@case("gather_nd", name="indexing_gather_nd")
def indexing_gather_nd(paddle, rng):
    def fn(x, full, part):
        return paddle.gather_nd(x, full), paddle.gather_nd(x, part)

    x = rng.standard_normal((3, 4, 5)).astype(F32)
    full = np.array([[2, 3, 4], [0, 0, 0], [1, 2, 3]], I64)
    part = np.array([[[1, 3]], [[2, 0]]], I32)  # [2, 1, 2] -> out [2, 1, 5]
    return fn, [x, full, part], [(None, 4, 5), (None, 3), (2, 1, 2)]


@case("gather_nd", name="indexing_gather_nd_negative", formats=("pir",), why=NEG_WHY)
def indexing_gather_nd_negative(paddle, rng):
    def fn(x, i):
        return paddle.gather_nd(x, i)

    return fn, [rng.standard_normal((3, 4)).astype(F32), np.array([[-1, -4], [0, -1]], I64)]


# ---------------------------------------------------------------------- index_sample / take_along_axis
@case("index_sample", name="indexing_index_sample")
def indexing_index_sample(paddle, rng):
    def fn(x, i32, i64):
        return paddle.index_sample(x, i32), paddle.index_sample(x, i64)

    x = rng.standard_normal((3, 5)).astype(F32)
    i32 = np.array([[4, 0], [1, 1], [3, 2]], I32)
    i64 = np.array([[0, 1, 2, 3, 4, 0], [4, 3, 2, 1, 0, 4], [2, 2, 2, 2, 2, 2]], I64)
    return fn, [x, i32, i64], [(None, 5), (None, 2), (None, 6)]


@case("take_along_axis", name="indexing_take_along_axis")
def indexing_take_along_axis(paddle, rng):
    def fn(x, i0, i1):
        return paddle.take_along_axis(x, i0, 0), paddle.take_along_axis(x, i1, -1)

    x = rng.standard_normal((3, 4)).astype(F32)
    i0 = np.array([[2, 0, 1, 1], [0, 0, 2, 1]], I64)
    i1 = np.array([[3], [0], [2]], I32)
    return fn, [x, i0, i1], [(3, None), (2, None), (3, 1)]


@case("take_along_axis", name="indexing_take_along_axis_broadcast")
def indexing_take_along_axis_broadcast(paddle, rng):
    """Paddle's API broadcasts the index ([1, 2] -> [4, 2]) with expand before the op."""

    def fn(x, i):
        return paddle.take_along_axis(x, i, 1)

    return fn, [rng.standard_normal((4, 5)).astype(F32), np.array([[4, 1]], I64)]


@case(
    "take_along_axis",
    name="indexing_take_along_axis_no_broadcast",
    formats=("pir",),
    why="take_along_axis's broadcast flag is new in Paddle 3",
)
def indexing_take_along_axis_no_broadcast(paddle, rng):
    """broadcast=False: the index may be smaller than arr off the axis (GatherElements too)."""

    def fn(x, i):
        return paddle.take_along_axis(x, i, 0, broadcast=False)

    return fn, [rng.standard_normal((4, 5)).astype(F32), np.array([[3, 0, 1]], I64)]


@case("take_along_axis", name="indexing_take_along_axis_negative", formats=("pir",), why=NEG_WHY)
def indexing_take_along_axis_negative(paddle, rng):
    def fn(x, i):
        return paddle.take_along_axis(x, i, 1)

    return fn, [rng.standard_normal((2, 4)).astype(F32), np.array([[-1, 0], [-4, -2]], I64)]


# ---------------------------------------------------------------------- put_along_axis
def put_along(paddle, rng, reduce, dtype=F32):
    """Every include_self variant of one reduction; duplicate targets except for assign."""

    def fn(x, i, v):
        return (
            paddle.put_along_axis(x, i, v, 1, reduce=reduce, include_self=True),
            paddle.put_along_axis(x, i, v, 1, reduce=reduce, include_self=False),
        )

    if dtype == F32:
        x = rng.standard_normal((3, 5)).astype(F32)
        v = rng.standard_normal((3, 3)).astype(F32)
    else:
        x = rng.integers(-50, 50, (3, 5)).astype(dtype)
        v = rng.integers(-75, 25, (3, 3)).astype(dtype)  # often below x: include_self matters
    if reduce == "assign":
        i = np.array([[4, 0, 2], [1, 3, 0], [2, 1, 4]], I64)
    else:
        i = np.array([[4, 4, 2], [1, 1, 1], [0, 3, 0]], I64)
    return fn, [x, i, v]


@case("put_along_axis", name="indexing_put_along_axis_assign")
def indexing_put_along_axis_assign(paddle, rng):
    return put_along(paddle, rng, "assign")


@case("put_along_axis", name="indexing_put_along_axis_add")
def indexing_put_along_axis_add(paddle, rng):
    return put_along(paddle, rng, "add")


@case("put_along_axis", name="indexing_put_along_axis_mul")
def indexing_put_along_axis_mul(paddle, rng):
    return put_along(paddle, rng, "mul")


@case("put_along_axis", name="indexing_put_along_axis_mean")
def indexing_put_along_axis_mean(paddle, rng):
    return put_along(paddle, rng, "mean")


@case("put_along_axis", name="indexing_put_along_axis_mean_int64")
def indexing_put_along_axis_mean_int64(paddle, rng):
    """Integer means: Paddle 3 floors, Paddle 2 truncates toward zero (negative sums included)."""
    return put_along(paddle, rng, "mean", I64)


@case("put_along_axis", name="indexing_put_along_axis_amin")
def indexing_put_along_axis_amin(paddle, rng):
    return put_along(paddle, rng, "amin")


@case("put_along_axis", name="indexing_put_along_axis_amax_int32")
def indexing_put_along_axis_amax_int32(paddle, rng):
    return put_along(paddle, rng, "amax", I32)


@case("put_along_axis", name="indexing_put_along_axis_scalar_axis0")
def indexing_put_along_axis_scalar_axis0(paddle, rng):
    """A scalar value (broadcast by the API) along axis 0 with a dynamic batch."""

    def fn(x, i):
        return paddle.put_along_axis(x, i, paddle.full([1, 1], 9.5), 0)

    x = rng.standard_normal((3, 4)).astype(F32)
    return fn, [x, np.array([[2, 0, 1, 2]], I32)], [(None, 4), (1, 4)]


@case("put_along_axis", name="indexing_put_along_axis_negative", formats=("pir",), why=NEG_WHY)
def indexing_put_along_axis_negative(paddle, rng):
    def fn(x, i, v):
        return paddle.put_along_axis(x, i, v, 1, reduce="add")

    x = rng.standard_normal((2, 4)).astype(F32)
    return fn, [x, np.array([[-1, 3], [-4, 0]], I64), rng.standard_normal((2, 2)).astype(F32)]


# ---------------------------------------------------------------------- scatter / scatter_nd_add
@case("scatter", name="indexing_scatter_overwrite")
def indexing_scatter_overwrite(paddle, rng):
    def fn(x, i, u):
        return paddle.scatter(x, i, u)

    x = rng.standard_normal((5, 3)).astype(F32)
    u = rng.standard_normal((3, 3)).astype(F32)
    return fn, [x, np.array([4, 0, 2], I64), u], [(None, 3), (None,), (None, 3)]


@case("scatter", name="indexing_scatter_accumulate")
def indexing_scatter_accumulate(paddle, rng):
    """overwrite=False: targets are zeroed, then every duplicate row is added."""

    def fn(x, i, u):
        return paddle.scatter(x, i, u, overwrite=False)

    x = rng.standard_normal((5, 2, 3)).astype(F32)
    u = rng.standard_normal((4, 2, 3)).astype(F32)
    return fn, [x, np.array([1, 3, 1, 1], I32), u]


@case("scatter", name="indexing_scatter_int64_index_shapes")
def indexing_scatter_int64_index_shapes(paddle, rng):
    """int64 data; a 0-D index (updates of rank r-1, constant) and an [N, 1] index."""
    u0 = rng.integers(-9, 9, (3,)).astype(I64)

    def fn(x, i0, i2, u2):
        return paddle.scatter(x, i0, paddle.to_tensor(u0)), paddle.scatter(x, i2, u2, overwrite=False)

    x = rng.integers(-(2**40), 2**40, (4, 3)).astype(I64)
    u2 = rng.integers(-9, 9, (3, 3)).astype(I64)
    return fn, [x, np.array(2, I64), np.array([[0], [3], [0]], I64), u2]


@case("scatter", name="indexing_scatter_negative", formats=("pir",), why=NEG_WHY)
def indexing_scatter_negative(paddle, rng):
    def fn(x, i, u):
        return paddle.scatter(x, i, u, overwrite=False)

    x = rng.standard_normal((4, 2)).astype(F32)
    return fn, [x, np.array([-1, 3, 0], I64), rng.standard_normal((3, 2)).astype(F32)]


@case("scatter_nd_add", name="indexing_scatter_nd_add")
def indexing_scatter_nd_add(paddle, rng):
    """Duplicate targets accumulate."""

    def fn(x, i, u):
        return paddle.scatter_nd_add(x, i, u)

    x = rng.standard_normal((3, 4)).astype(F32)
    i = np.array([[1, 2], [1, 2], [0, 3]], I64)
    return fn, [x, i, rng.standard_normal((3,)).astype(F32)], [(3, None), (None, 2), (None,)]


@case("scatter_nd_add", name="indexing_scatter_nd_add_rows")
def indexing_scatter_nd_add_rows(paddle, rng):
    """A partial int32 index adds whole rows."""

    def fn(x, i, u):
        return paddle.scatter_nd_add(x, i, u)

    x = rng.standard_normal((3, 4)).astype(F32)
    i = np.array([[2], [0], [2]], I32)
    return fn, [x, i, rng.standard_normal((3, 4)).astype(F32)], [(3, None), (3, 1), (3, None)]


@case("scatter_nd_add", name="indexing_scatter_nd_add_negative", formats=("pir",), why=NEG_WHY)
def indexing_scatter_nd_add_negative(paddle, rng):
    def fn(x, i, u):
        return paddle.scatter_nd_add(x, i, u)

    x = rng.integers(-9, 9, (3, 4)).astype(I64)
    return fn, [x, np.array([[-1, -4], [-1, 0]], I64), np.array([5, 7], I64)]


# ---------------------------------------------------------------------- where / nonzero
@case("where", name="indexing_where")
def indexing_where(paddle, rng):
    def fn(c, x, y):
        return paddle.where(c, x, y)

    c = rng.standard_normal((3, 4)) > 0
    x = rng.standard_normal((3, 4)).astype(F32)
    y = rng.standard_normal((1, 4)).astype(F32)
    return fn, [c, x, y], [(None, 4), (None, 4), (1, 4)]


@case("where", name="indexing_where_int64")
def indexing_where_int64(paddle, rng):
    def fn(c, x, y):
        return paddle.where(c, x, y)

    c = rng.standard_normal((2, 3)) > 0
    x = rng.integers(-(2**50), 2**50, (2, 3)).astype(I64)
    y = rng.integers(-(2**50), 2**50, (2, 3)).astype(I64)
    return fn, [c, x, y]


@case("nonzero", name="indexing_nonzero")
def indexing_nonzero(paddle, rng):
    def fn(c, x):
        return paddle.nonzero(c), paddle.nonzero(x)

    c = rng.standard_normal((3, 4)) > 0.3
    x = np.array([0.0, 1.5, 0.0, -2.0, np.nan, 0.0], F32)
    return fn, [c, x], [(None, 4), (None,)]


# ---------------------------------------------------------------------- topk
@case("topk", name="indexing_topk", opsets=(7, 10, 11, 17, 26))
def indexing_topk(paddle, rng):
    """Largest along the last axis and along axis 0 (TopK-1 below opset 10)."""

    def fn(x):
        v0, i0 = paddle.topk(x, 3)
        v1, i1 = paddle.topk(x, 2, axis=0)
        return v0, i0, v1, i1

    return fn, [distinct(rng, (4, 6))], [(None, 6)]


@case("topk", name="indexing_topk_smallest_int")
def indexing_topk_smallest_int(paddle, rng):
    def fn(x, y):
        v0, i0 = paddle.topk(x, 2, largest=False)
        v1, i1 = paddle.topk(y, 3, axis=-2, largest=False)
        return v0, i0, v1, i1

    return fn, [distinct(rng, (3, 5), I32) * 2, distinct(rng, (4, 2), I64)]


@case("topk", name="indexing_topk_runtime_k", opsets=(10, 11, 17, 26))
def indexing_topk_runtime_k(paddle, rng):
    """k from a runtime int32 [1] tensor and an int64 0-D tensor (opset 10: TopK's k input)."""

    def fn(x, k, k0):
        v0, i0 = paddle.topk(x, k)
        v1, i1 = paddle.topk(x, k0, axis=0)
        return v0, i0, v1, i1

    return fn, [distinct(rng, (3, 7)), np.array([4], I32), np.array(2, I64)]


@case("topk", "argsort", name="indexing_topk_unsorted")
def indexing_topk_unsorted(paddle, rng):
    """sorted=False: Paddle's order is unspecified, so the case compares sorted results."""

    def fn(x):
        v, i = paddle.topk(x, 4, sorted=False)
        return paddle.sort(v), paddle.sort(i)

    return fn, [distinct(rng, (3, 8))]


@case(
    "topk",
    "cast",
    name="indexing_top_k_v1",
    formats=("legacy",),
    why="top_k (v1) is a legacy-only op",
    opsets=(7, 11, 17, 26),
)
def indexing_top_k_v1(paddle, rng):
    """top_k declares its indices int32 though its kernel writes int64 (so do real 2.x files):
    the converter keeps the declared int32; the case reads the indices through a legacy
    cast to float32 (in_dtype int32), whose output dtype is the same either way."""

    def fn(x):
        v, i = legacy_op(paddle, "top_k", {"X": [x]}, {"k": 2}, ("Out", "Indices"), (F32, I64))
        return v, legacy_op(paddle, "cast", {"X": [i]}, {"in_dtype": 2, "out_dtype": 5}, ("Out",), (F32,))

    return fn, [distinct(rng, (3, 5))]


# ---------------------------------------------------------------------- argsort
@case("argsort", name="indexing_argsort")
def indexing_argsort(paddle, rng):
    def fn(x):
        return paddle.argsort(x), paddle.argsort(x, axis=0, descending=True), paddle.sort(x, axis=1)

    return fn, [distinct(rng, (3, 5))], [(None, None)]


@case("argsort", name="indexing_argsort_int")
def indexing_argsort_int(paddle, rng):
    def fn(x, y):
        return paddle.argsort(x, descending=True), paddle.argsort(y, axis=1)

    return fn, [distinct(rng, (2, 6), I64) * 2**40, distinct(rng, (2, 3, 2), I32)]


@case(
    "argsort",
    name="indexing_argsort_stable_ties",
    formats=("pir",),
    why="argsort's stable flag is new in Paddle 3",
)
def indexing_argsort_stable_ties(paddle, rng):
    """Ties keep their order (Paddle's stable sort = ONNX TopK's lower-index-first)."""

    def fn(x):
        return paddle.argsort(x, stable=True), paddle.argsort(x, descending=True, stable=True)

    return fn, [rng.integers(0, 3, (2, 40)).astype(F32)]


@case("argsort", name="indexing_argsort_0d")
def indexing_argsort_0d(paddle, rng):
    def fn(x):
        return paddle.argsort(x), paddle.sort(x, descending=True)

    return fn, [np.array(1.5, F32)]


# ---------------------------------------------------------------------- cumsum
def raw_cumsum(paddle, x, axis, exclusive, reverse):
    """cumsum with the exclusive/reverse attributes the Python API hides."""
    if is_paddle2(paddle):
        attrs = {"axis": axis, "flatten": False, "exclusive": exclusive, "reverse": reverse}
        return legacy_op(paddle, "cumsum", {"X": [x]}, attrs, ("Out",), (x.dtype,))
    return paddle._C_ops.cumsum(x, axis, False, exclusive, reverse)


@case("cumsum", name="indexing_cumsum")
def indexing_cumsum(paddle, rng):
    def fn(x):
        return paddle.cumsum(x, axis=1), paddle.cumsum(x, axis=-3), paddle.cumsum(x)

    return fn, [rng.standard_normal((2, 3, 4)).astype(F32)], [(None, 3, None)]


@case("cumsum", name="indexing_cumsum_int")
def indexing_cumsum_int(paddle, rng):
    """int32 (Paddle 3 casts it to int64 first, Paddle 2 keeps it) and int64 beyond 2**53."""

    def fn(x, y):
        return paddle.cumsum(x, axis=0), paddle.cumsum(y, axis=-1)

    x = rng.integers(-100, 100, (3, 4)).astype(I32)
    y = rng.integers(-(2**60), 2**60, (2, 5)).astype(I64) // 8
    return fn, [x, y]


@case("cumsum", name="indexing_cumsum_exclusive_reverse")
def indexing_cumsum_exclusive_reverse(paddle, rng):
    def fn(x):
        return (
            raw_cumsum(paddle, x, 1, True, False),
            raw_cumsum(paddle, x, -1, False, True),
            raw_cumsum(paddle, x, 0, True, True),
        )

    return fn, [rng.standard_normal((3, 4)).astype(F32)]


@case(
    "cumsum",
    name="indexing_cumsum_runtime_axis",
    formats=("pir",),
    why="Paddle 2.6 cumsum takes only an int axis",
)
def indexing_cumsum_runtime_axis(paddle, rng):
    def fn(x, axis):
        return paddle.cumsum(x, axis=axis)

    return fn, [rng.standard_normal((3, 4)).astype(F32), np.array(-2, I64)]
