"""Indexing: gather/scatter families, where/nonzero, topk/argsort, cumsum, and assignment
(set_value, index_put, masked_fill/masked_select, repeat_interleave, unique).

Paddle semantics reproduced here (checked with Paddle 3.3 and 2.6):

- Negative indices: Paddle 3.x wraps them (gather, gather_nd, index_select, take_along_axis,
  put_along_axis, scatter, scatter_nd_add); Paddle 2.x rejects them, so wrapping serves both.
  ONNX takes negative indices from opset 11; Gather below 11 wraps them explicitly.
- ``scatter`` with ``overwrite=False`` first zeroes every target row, then accumulates.
- ``put_along_axis`` with ``include_self=False`` resets the targets before reducing; ``mean``
  divides the sum by the number of contributions (integer means floor in Paddle 3 and
  truncate in Paddle 2).
- ``topk``/``argsort`` ties: ONNX TopK puts the lower index first, which is what Paddle's
  stable sort does; Paddle's unstable sort and ``sorted=False`` leave the order unspecified,
  and the sorted, stable order is one valid answer. NaN ordering is not reproduced: ONNX
  Runtime's TopK does not order NaN consistently.
- ``set_value`` (``x[index] = v``): slice bounds as the writing Paddle normalizes them -
  Python's rules in Paddle 3, the older kernel's in Paddle 2 (a negative step reads end -1
  as "through index 0"); the value broadcasts to the slice without its decreased axes and
  with a 1 per none axis; an empty slice leaves x as it is.
- ``index_put`` wraps negative indices (both versions); a bool index stands for its
  nonzero coordinates; duplicates with ``accumulate`` add up.
- Declared dtypes Paddle gets wrong (unique's outputs in 3.3, kthvalue/mode indices in 2.6)
  are corrected to what the kernels write (``ctx.correct_declared``).
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.casting import c_cast
from pd2onnx.convert.context import FLOAT_DTYPES, OpContext
from pd2onnx.convert.ops.tensor import _shape_value
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle import dtypes
from pd2onnx.paddle.program import Op


# ---------------------------------------------------------------------- helpers
def _static_int(ctx: OpContext, slot: str, default: int, what: str) -> int:
    """An int Scalar argument that ONNX needs as an attribute (constant or attribute only)."""
    value = ctx.scalar(slot, default)
    if isinstance(value, ir.Value):
        raise ctx.fail(f"{what} comes from a runtime tensor; ONNX needs it as a constant")
    return int(value)


def _axis(ctx: OpContext, slot: str, data_slot: str, default: int = 0) -> int:
    """The op's axis (attribute or constant operand ``slot``), normalized for ``data_slot``'s rank."""
    return ctx.normalize_axis(_static_int(ctx, slot, default, "the axis"), ctx.input_rank(data_slot))


def _int64_index(ctx: OpContext, slot: str) -> ir.Value:
    """Index input ``slot`` as int64 (ScatterND/GatherND accept no other index type)."""
    return ctx.cast(ctx.input(slot), "int64", ctx.input_dtype(slot))


def _full_like(ctx: OpContext, like: ir.Value, value: float, dtype: str) -> ir.Value:
    """A tensor shaped like ``like`` filled with ``value`` in ``dtype``."""
    scalar = ctx.const(np.asarray(value, dtype=dtypes.to_numpy(dtype)))
    return ctx.op.Expand(scalar, ctx.op.Shape(like))


def _wrap_negative(ctx: OpContext, index: ir.Value, slot: str, data: ir.Value, axis: int) -> ir.Value:
    """``index + dim`` where ``index < 0``: only below opset 11, whose Gather rejects negatives."""
    if ctx.opset >= 11:
        return index
    const = ctx.const_value(slot)
    if const is not None and bool((np.asarray(const) >= 0).all()):
        return index
    dtype = ctx.input_dtype(slot)
    dim = ctx.cast(ctx.reshape(ctx.shape_of(data, axis, axis + 1), []), dtype, "int64")
    if ctx.opset >= 9:
        negative = ctx.op.Less(index, ctx.const(0, dtype))
    else:  # Less takes integers from opset 9; an integer index is exact enough in double
        negative = ctx.op.Less(ctx.cast(index, "float64", dtype), ctx.const(0.0, "float64"))
    return ctx.op.Add(index, ctx.op.Mul(ctx.cast(negative, dtype, "bool"), dim))


def _gather_along(ctx: OpContext, axis: int) -> None:
    """Gather rows of ``x`` along ``axis`` by a 0-D/1-D index (or [N, 1], read as 1-D)."""
    x = ctx.input("x")
    index = ctx.input("index")
    if ctx.input_rank("index") == 2:
        index = ctx.reshape(index, [-1])
    index = _wrap_negative(ctx, index, "index", x, axis)
    ctx.set_output("out", ctx.op.Gather(x, index, axis=axis))


# ---------------------------------------------------------------------- gathers
@mapper("gather")
def gather(ctx: OpContext) -> None:
    _gather_along(ctx, _axis(ctx, "axis", "x"))


@mapper("index_select")
def index_select(ctx: OpContext) -> None:
    _gather_along(ctx, ctx.normalize_axis(int(ctx.attr("axis", 0)), ctx.input_rank("x")))


@mapper("gather_nd", min_opset=11)
def gather_nd(ctx: OpContext) -> None:
    shape = ctx.input_shape("index")
    if not shape or shape[-1] == 0:
        raise ctx.fail("gather_nd with an empty last index dimension has no ONNX GatherND form")
    ctx.set_output("out", ctx.op.GatherND(ctx.input("x"), _int64_index(ctx, "index")))


@mapper("index_sample", min_opset=11)
def index_sample(ctx: OpContext) -> None:
    ctx.set_output("out", ctx.op.GatherElements(ctx.input("x"), ctx.input("index"), axis=1))


@mapper("take_along_axis", min_opset=11)
def take_along_axis(ctx: OpContext) -> None:
    """Paddle's Python API broadcasts ``arr``/``indices`` first; the op is GatherElements.
    Without that broadcast (Paddle 3's ``broadcast=False``) the index may be smaller than
    ``arr`` off the axis: ``arr`` is cut to the index's size there first (ONNX allows the
    difference, OpenVINO's GatherElements does not). The cut is a Gather of the leading
    positions: OpenVINO's CPU plugin drops a Slice there and then refuses the model."""
    axis = ctx.normalize_axis(int(ctx.attr("axis", 0)), ctx.input_rank("arr"))
    arr = ctx.input("arr")
    for a, (d, i) in enumerate(zip(ctx.input_shape("arr"), ctx.input_shape("indices"))):
        if a != axis and 0 < i < d:
            arr = ctx.op.Gather(arr, ctx.const_i64(list(range(i))), axis=a)
    ctx.set_output("out", ctx.op.GatherElements(arr, ctx.input("indices"), axis=axis))


# ---------------------------------------------------------------------- scatters
# Paddle reduce name -> (ONNX reduction, opset that has it); "mean" is add, then a division.
_REDUCTIONS: dict[str, tuple[str | None, int]] = {
    "assign": (None, 11),
    "add": ("add", 16),
    "mul": ("mul", 16),
    "multiply": ("mul", 16),
    "mean": ("add", 16),
    "amin": ("min", 18),
    "amax": ("max", 18),
}


def _put_along_axis_opset(op: Op) -> int:
    reduction = _REDUCTIONS.get(str(op.attrs.get("reduce", "assign")))
    return reduction[1] if reduction else 11


def _scatter_elements(
    ctx: OpContext,
    data: ir.Value,
    index: ir.Value,
    updates: ir.Value,
    axis: int,
    reduction: str | None = None,
) -> ir.Value:
    return ctx.op.ScatterElements(data, index, updates, axis=axis, reduction=reduction)


def _reset_targets(
    ctx: OpContext, data: ir.Value, index: ir.Value, like: ir.Value, value: float, dtype: str, axis: int
) -> ir.Value:
    """``data`` with every position ``index`` targets set to ``value`` (duplicates agree)."""
    return _scatter_elements(ctx, data, index, _full_like(ctx, like, value, dtype), axis)


@mapper("put_along_axis", min_opset=_put_along_axis_opset)
def put_along_axis(ctx: OpContext) -> None:
    """ScatterElements; ``include_self=False`` resets the targets to the reduction's identity
    first (for min/max: to one of the scattered values), ``mean`` divides by the count."""
    reduce = str(ctx.attr("reduce", "assign"))
    if reduce not in _REDUCTIONS:
        raise ctx.fail(f"put_along_axis reduce {reduce!r} is unknown")
    reduction = _REDUCTIONS[reduce][0]
    include_self = bool(ctx.attr("include_self", True))
    dtype = ctx.output_dtype("out")
    arr, index, values = ctx.input("arr"), ctx.input("indices"), ctx.input("values")
    axis = ctx.normalize_axis(int(ctx.attr("axis", 0)), ctx.input_rank("arr"))
    if reduction is None:
        ctx.set_output("out", _scatter_elements(ctx, arr, index, values, axis))
        return
    base = arr
    if not include_self:
        if reduction in ("min", "max"):
            base = _scatter_elements(ctx, arr, index, values, axis)
        else:
            base = _reset_targets(ctx, arr, index, values, 1 if reduction == "mul" else 0, dtype, axis)
    out = _scatter_elements(ctx, base, index, values, axis, reduction)
    if reduce == "mean":
        ones = _full_like(ctx, arr, 1, dtype)
        if not include_self:
            ones = _reset_targets(ctx, ones, index, values, 0, dtype, axis)
        count = _scatter_elements(ctx, ones, index, _full_like(ctx, values, 1, dtype), axis, "add")
        out = _mean_divide(ctx, out, count, dtype)
    ctx.set_output("out", out)


def _mean_divide(ctx: OpContext, total: ir.Value, count: ir.Value, dtype: str) -> ir.Value:
    """``total / count`` (count > 0); integer means floor in Paddle 3, truncate in Paddle 2."""
    if dtype in FLOAT_DTYPES or ctx.paddle2_semantics:
        return ctx.op.Div(total, count)
    return ctx.op.Div(ctx.op.Sub(total, ctx.op.Mod(total, count, fmod=0)), count)


def _scatter_opset(op: Op) -> int:
    return 11 if op.attrs.get("overwrite", True) else 16


@mapper("scatter", min_opset=_scatter_opset)
def scatter(ctx: OpContext) -> None:
    """Rows ``index`` of ``x`` replaced (overwrite) or zeroed and then summed (accumulate)."""
    x, updates = ctx.input("x"), ctx.input("updates")
    index = ctx.reshape(_int64_index(ctx, "index"), [-1, 1])
    if ctx.input_rank("index") == 0 and ctx.input_rank("updates") == ctx.input_rank("x") - 1:
        updates = ctx.unsqueeze(updates, [0])
    if bool(ctx.attr("overwrite", True)):
        ctx.set_output("out", ctx.op.ScatterND(x, index, updates))
        return
    zeroed = ctx.op.ScatterND(x, index, _full_like(ctx, updates, 0, ctx.output_dtype("out")))
    ctx.set_output("out", ctx.op.ScatterND(zeroed, index, updates, reduction="add"))


@mapper("scatter_nd_add", min_opset=16)
def scatter_nd_add(ctx: OpContext) -> None:
    index = _int64_index(ctx, "index")
    ctx.set_output("out", ctx.op.ScatterND(ctx.input("x"), index, ctx.input("updates"), reduction="add"))


# ---------------------------------------------------------------------- selection
@mapper("where", min_opset=9)
def where(ctx: OpContext) -> None:
    """Where; bool values as (c and x) or (not c and y) (ONNX Runtime has no bool Where)."""
    cond, x, y = ctx.input("condition"), ctx.input("x"), ctx.input("y")
    if ctx.output_dtype() == "bool":
        ctx.set_output("out", ctx.op.Or(ctx.op.And(cond, x), ctx.op.And(ctx.op.Not(cond), y)))
        return
    ctx.set_output("out", ctx.op.Where(cond, x, y))


# Element types ONNX Runtime's NonZero takes; others are tested for != 0 as bool first.
_NONZERO_DTYPES = frozenset({"bool", "float32", "float16", "int32", "int64", "uint8"})


@mapper("nonzero", min_opset=9)
def nonzero(ctx: OpContext) -> None:
    """Paddle returns [N, rank] coordinates, ONNX NonZero [rank, N] (NaN counts as nonzero)."""
    dtype = ctx.input_dtype("condition")
    cond = ctx.input("condition")
    if ctx.input_rank("condition") == 0:
        raise ctx.fail("nonzero of a 0-D tensor (Paddle rejects it too)")
    if dtype not in _NONZERO_DTYPES:
        cond = ctx.cast(cond, "bool")
    ctx.set_output("out", ctx.op.Transpose(ctx.op.NonZero(cond), perm=[1, 0]))


# ---------------------------------------------------------------------- sorting
def _topk_opset(op: Op) -> int:
    return 7 if op.attrs.get("largest", True) else 11


def _top_k(
    ctx: OpContext, x: ir.Value, k: int | ir.Value, axis: int, largest: bool, dtype: str
) -> tuple[ir.Value, ir.Value]:
    """ONNX TopK, always sorted; ``k`` is a Python int or a runtime int64 [1] tensor.

    Before opset 11 TopK takes only float data and no ``largest`` (mappers declare 11 for
    smallest-first); TopK-1 (below opset 10) takes ``k`` as an attribute."""
    if ctx.opset >= 11:
        k_v = k if isinstance(k, ir.Value) else ctx.const_i64([k])
        return ctx.op.TopK(x, k_v, axis=axis, largest=int(largest), sorted=1, _outputs=2)
    if dtype not in FLOAT_DTYPES:
        ctx.require_opset(11, f"ONNX TopK takes {dtype} data from opset 11")
    if ctx.opset >= 10:
        k_v = k if isinstance(k, ir.Value) else ctx.const_i64([k])
        return ctx.op.TopK(x, k_v, axis=axis, _outputs=2)
    if isinstance(k, ir.Value):
        ctx.require_opset(10, "a runtime k: ONNX TopK takes k as an input from opset 10")
    return ctx.op.TopK(x, axis=axis, k=k, _outputs=2)


def _set_sorted(ctx: OpContext, outputs: tuple[ir.Value, ir.Value]) -> None:
    """Values, and indices in their declared dtype (int64; legacy top_k declares int32)."""
    values, indices = outputs
    ctx.set_output("out", values)
    if ctx.has_output("indices"):
        ctx.set_output("indices", ctx.cast(indices, ctx.output_dtype("indices"), "int64"))


@mapper("topk", min_opset=_topk_opset)
def topk(ctx: OpContext) -> None:
    """``sorted=False`` leaves Paddle's order unspecified; the sorted order is returned."""
    dtype = ctx.input_dtype("x")
    k = ctx.scalar("k", 1)
    if isinstance(k, ir.Value):
        k = ctx.reshape(ctx.cast(k, "int64", ctx.input_dtype("k")), [1])
    else:
        k = int(k)
    if ctx.input_rank("x") == 0:  # a 0-D tensor is its own top 1 (ONNX TopK needs an axis)
        ctx.set_output("out", ctx.op.Identity(ctx.input("x")))
        if ctx.has_output("indices"):
            ctx.set_output("indices", ctx.const(np.zeros((), dtype=ctx.output_dtype("indices"))))
        return
    axis = ctx.normalize_axis(int(ctx.attr("axis", -1)), ctx.input_rank("x"))
    outputs = _top_k(ctx, ctx.input("x"), k, axis, bool(ctx.attr("largest", True)), dtype)
    _set_sorted(ctx, outputs)


@mapper("argsort", min_opset=11)
def argsort(ctx: OpContext) -> None:
    """A full TopK along the axis (stable: ties keep their order, as Paddle's stable sort)."""
    dtype = ctx.input_dtype("x")
    x = ctx.input("x")
    shape = ctx.input_shape("x")
    if not shape:
        ctx.set_output("out", x)
        ctx.set_output("indices", ctx.const(np.zeros((), dtype=np.int64)))
        return
    axis = ctx.normalize_axis(int(ctx.attr("axis", -1)), len(shape))
    k: int | ir.Value = shape[axis] if shape[axis] >= 0 else ctx.shape_of(x, axis, axis + 1)
    _set_sorted(ctx, _top_k(ctx, x, k, axis, bool(ctx.attr("descending", False)), dtype))


# ---------------------------------------------------------------------- cumulative
_CUMSUM_DTYPES = frozenset({"float32", "float64", "int32", "int64", "uint32", "uint64"})


@mapper("cumsum", min_opset=11)
def cumsum(ctx: OpContext) -> None:
    """CumSum; ``flatten`` sums over the flattened tensor (the axis is then ignored)."""
    dtype = ctx.input_dtype("x")
    if dtype not in _CUMSUM_DTYPES and not (dtype in ("float16", "bfloat16") and ctx.opset >= 14):
        raise ctx.fail(f"ONNX CumSum has no {dtype} form")
    x = ctx.input("x")
    if bool(ctx.attr("flatten", False)):
        x, axis = ctx.reshape(x, [-1]), ctx.const_i64(0)
    elif ctx.input_rank("x") == 0:  # a 0-D tensor is its own cumulative sum (ONNX CumSum needs rank 1)
        exclusive = bool(ctx.attr("exclusive", False))
        ctx.set_output("out", ctx.op.Sub(x, x) if exclusive else ctx.op.Identity(x))
        return
    else:
        value = ctx.scalar("axis", -1)
        if isinstance(value, ir.Value):
            axis = ctx.reshape(ctx.cast(value, "int64", ctx.input_dtype("axis")), [])
        else:
            axis = ctx.const_i64(ctx.normalize_axis(int(value), max(ctx.input_rank("x"), 1)))
    exclusive, reverse = int(bool(ctx.attr("exclusive", False))), int(bool(ctx.attr("reverse", False)))
    ctx.set_output("out", ctx.op.CumSum(x, axis, exclusive=exclusive, reverse=reverse))


# ---------------------------------------------------------------------- set_value
# One slice bound per sliced axis: a Python int when known at conversion time, else a 0-D
# int64 ONNX value.
Bound = int | ir.Value


def _paddle_slice_bounds(start: int, end: int, step: int, dim: int, paddle2: bool) -> tuple[int, int]:
    """One set_value slice, normalized as the Paddle that wrote the file does.

    Paddle 3 follows Python's slice rules. Paddle 2's kernel (``CheckAndUpdateSliceAttrs``)
    differs for negative steps: end -1 means "through index 0", an end below -1 counts from
    the back, and a start below -dim clamps to 0 (bounds it rejects do not matter)."""
    if not paddle2:
        start, end, _ = slice(start, end, step).indices(dim)
        return start, end
    if dim == 0:
        return 0, 0
    start = max(start + dim if start < 0 else start, 0)
    end = min(end + dim if step > 0 and end < 0 else end, dim)
    if step > 0:
        return min(start, dim), max(end, 0)
    start = min(start, dim - 1)
    if end < -1:
        end += dim
    return start, max(end, -1)


def _paddle_slice_bounds_graph(
    ctx: OpContext, s: ir.Value, e: ir.Value, t: ir.Value, d: ir.Value, paddle2: bool
) -> tuple[ir.Value, ir.Value]:
    """``_paddle_slice_bounds`` on int64 [n] values, in the graph (compare and select only)."""
    op = ctx.op
    zero, one, minus_one = ctx.const_i64([0]), ctx.const_i64([1]), ctx.const_i64([-1])
    negative = op.Less(t, zero)
    lo = op.Where(negative, minus_one, zero)
    hi = op.Where(negative, op.Sub(d, one), d)

    def clamp(v: ir.Value, low: ir.Value, high: ir.Value) -> ir.Value:
        v = op.Where(op.Less(v, low), low, v)
        return op.Where(op.Greater(v, high), high, v)

    def from_back(v: ir.Value, when: ir.Value) -> ir.Value:
        return op.Where(when, op.Add(v, d), v)

    if not paddle2:  # Python's rules
        s = clamp(from_back(s, op.Less(s, zero)), lo, hi)
        return s, clamp(from_back(e, op.Less(e, zero)), lo, hi)
    s = clamp(from_back(s, op.Less(s, zero)), zero, hi)
    e = from_back(e, op.And(op.Not(negative), op.Less(e, zero)))
    e = op.Where(op.Greater(e, d), d, e)
    e = from_back(e, op.And(negative, op.Less(e, minus_one)))
    return s, op.Where(op.Less(e, lo), lo, e)


def _set_value_array(ctx: OpContext, name: str, n: int, default: int | None) -> list[int] | ir.Value:
    """starts/ends/steps: one entry per sliced axis (steps default to 1 in old files)."""
    values = ctx.int_array(name)
    if isinstance(values, ir.Value):
        return values
    if not values and n and default is not None:
        return [default] * n
    if values is None or len(values) != n:
        raise ctx.fail(f"set_value has {len(values or [])} {name} for {n} sliced axes")
    return values


def _set_value_ranges(
    ctx: OpContext, x: ir.Value, dims: list[int], axes: list[int]
) -> tuple[dict[int, ir.Value | np.ndarray], dict[int, int | ir.Value]] | None:
    """Per sliced axis, the positions it writes (a constant array or a runtime 1-D int64
    Range) and their count (int or int64 [1]); None when some axis is statically empty."""
    n = len(axes)
    starts = _set_value_array(ctx, "starts", n, None)
    ends = _set_value_array(ctx, "ends", n, None)
    steps = _set_value_array(ctx, "steps", n, 1)
    if isinstance(steps, list) and 0 in steps:
        raise ctx.fail("set_value has a zero step")
    static_dims = all(dims[a] >= 0 for a in axes)
    ranges: dict[int, ir.Value | np.ndarray] = {}
    sizes: dict[int, int | ir.Value] = {}
    if static_dims and all(isinstance(v, list) for v in (starts, ends, steps)):
        for j, a in enumerate(axes):
            s, e = _paddle_slice_bounds(starts[j], ends[j], steps[j], dims[a], ctx.paddle2_semantics)
            ranges[a] = np.arange(s, e, steps[j], dtype=np.int64)
            sizes[a] = len(ranges[a])
            if sizes[a] == 0:
                return None
        return ranges, sizes
    as_value = {k: v if isinstance(v, ir.Value) else ctx.const_i64(v) for k, v in
                (("s", starts), ("e", ends), ("t", steps))}
    if static_dims:
        d = ctx.const_i64([dims[a] for a in axes])
    else:
        d = ctx.op.Gather(ctx.op.Shape(x), ctx.const_i64(axes), axis=0)
    paddle2 = ctx.paddle2_semantics
    s, e = _paddle_slice_bounds_graph(ctx, as_value["s"], as_value["e"], as_value["t"], d, paddle2)
    for j, a in enumerate(axes):
        pick = ctx.const_i64(j)  # a 0-D index: Gather gives the 0-D scalars Range wants
        step = steps[j] if isinstance(steps, list) else ctx.op.Gather(as_value["t"], pick, axis=0)
        ranges[a] = ctx.op.Range(
            ctx.op.Gather(s, pick, axis=0),
            ctx.op.Gather(e, pick, axis=0),
            ctx.const_i64(step) if isinstance(step, int) else step,
        )
        sizes[a] = ctx.op.Shape(ranges[a])
    return ranges, sizes


def _assign_shape(
    sizes: list[int | ir.Value], decrease_axes: list[int], none_axes: list[int]
) -> list[int | ir.Value]:
    """The shape the value broadcasts to: slice dims without the decreased axes, with a 1
    inserted for each none axis (Paddle's ``slice_dims_for_assign``)."""
    if not none_axes:
        kept = [d for i, d in enumerate(sizes) if i not in decrease_axes]
        return kept or [1]
    out: list[int | ir.Value] = []
    pending = sorted(none_axes)
    for i, d in enumerate(sizes):
        while pending and pending[0] <= i:
            out.append(1)
            pending.pop(0)
        if i not in decrease_axes:
            out.append(d)
    return out + [1] * len(pending)


def _set_value_update(ctx: OpContext, dtype: str) -> tuple[ir.Value, tuple[int, ...] | None]:
    """The assigned value in ``dtype`` and its static shape (None when unknown)."""
    for slot in ("values", "ValueTensor"):
        if ctx.has_input(slot):
            info = ctx.input_info(slot)
            value = ctx.cast(ctx.input(slot), dtype, info.dtype)
            shape = info.shape if info.shape is not None and all(d >= 0 for d in info.shape) else None
            return value, shape
    values = next((ctx.attr(k) for k in _SET_VALUE_LISTS if ctx.attr(k)), None)
    if values is None:
        raise ctx.fail("set_value has neither a value tensor nor values")
    shape = [int(d) for d in ctx.attr("shape", [])] or [len(values)]
    if int(np.prod(shape)) != len(values):
        raise ctx.fail(f"set_value has {len(values)} values for shape {shape}")
    data = np.asarray(values)
    data = data != 0 if dtype == "bool" else c_cast(data, dtypes.to_numpy(dtype))
    return ctx.const(data.reshape(shape)), tuple(shape)


# ``values`` (Paddle 2.5+ and PIR), then the typed lists of older legacy files.
_SET_VALUE_LISTS = ("values", "fp32_values", "fp64_values", "int32_values", "int64_values", "bool_values",
                    "fp16_values")


@mapper("set_value", "set_value_with_tensor", min_opset=11)
def set_value(ctx: OpContext) -> None:
    """``x[index] = value`` as ScatterND.

    The written positions are the product of one index range per axis (Paddle's slice
    bounds for the sliced axes, whole dims before the last sliced axis; the dims after it
    come whole with the updates). The value broadcasts to the slice shape as Paddle's
    kernel does: without the decreased axes and with a 1 for each none axis.
    """
    x = ctx.input("x")
    dims = [int(d) for d in ctx.input_shape("x")]
    rank = len(dims)
    dtype = ctx.input_dtype("x")
    axes = [ctx.normalize_axis(int(a), rank) for a in ctx.attr("axes", [])]
    if len(set(axes)) != len(axes):
        raise ctx.fail(f"set_value slices axis {axes} more than once")
    value, value_shape = _set_value_update(ctx, dtype)
    found = _set_value_ranges(ctx, x, dims, axes)
    if found is None:  # an empty slice: Paddle leaves x as it is
        ctx.set_output("out", ctx.op.Identity(x))
        return
    ranges, sizes = found
    slice_sizes: list[int | ir.Value] = []
    for a in range(rank):
        if a in sizes:
            slice_sizes.append(sizes[a])
        else:
            slice_sizes.append(dims[a] if dims[a] >= 0 else ctx.shape_of(x, a, a + 1))
    decrease = [ctx.normalize_axis(int(a), rank) for a in ctx.attr("decrease_axes", [])]
    none_axes = [int(a) for a in ctx.attr("none_axes", [])]
    target = _assign_shape(slice_sizes, decrease, none_axes)
    static_slice = all(isinstance(d, int) for d in slice_sizes)
    if value_shape is not None and list(value_shape) == target == slice_sizes:
        updates = value
    else:
        updates = ctx.op.Expand(value, _shape_value(ctx, target))
        same_rank = value_shape is not None and len(value_shape) <= len(target)
        if not (static_slice and target == slice_sizes and same_rank):
            updates = ctx.reshape(updates, _shape_value(ctx, slice_sizes))
    k = max(axes) + 1 if axes else 0
    if k == 0:  # every element is written
        ctx.set_output("out", ctx.op.Identity(updates))
        return
    columns = []
    for a in range(k):
        if a in ranges:
            r = ranges[a]
            r = ctx.const(r) if isinstance(r, np.ndarray) else r
        elif dims[a] >= 0:
            r = ctx.const(np.arange(dims[a], dtype=np.int64))
        else:
            r = ctx.op.Range(ctx.const_i64(0), ctx.reshape(ctx.shape_of(x, a, a + 1), []), ctx.const_i64(1))
        columns.append(ctx.reshape(r, [1] * a + [-1] + [1] * (k - 1 - a) + [1]))
    grid = _shape_value(ctx, slice_sizes[:k] + [1])
    index = ctx.op.Concat(*(ctx.op.Expand(c, grid) for c in columns), axis=-1)
    ctx.set_output("out", ctx.op.ScatterND(x, index, updates))


# ---------------------------------------------------------------------- masks
def _select(ctx: OpContext, cond: ir.Value, a: ir.Value, b: ir.Value, dtype: str) -> ir.Value:
    """Where(cond, a, b); ONNX Runtime's Where has no bool or int16 kernels, so those go
    through logic ops / int32."""
    if dtype == "bool":
        return ctx.op.Or(ctx.op.And(cond, a), ctx.op.And(ctx.op.Not(cond), b))
    if dtype in ("int16", "uint16"):
        out = ctx.op.Where(cond, ctx.cast(a, "int32"), ctx.cast(b, "int32"))
        return ctx.cast(out, dtype)
    return ctx.op.Where(cond, a, b)


def _as_bool(ctx: OpContext, slot: str) -> ir.Value:
    return ctx.cast(ctx.input(slot), "bool", ctx.input_dtype(slot))


@mapper("masked_fill", min_opset=9)
def masked_fill(ctx: OpContext) -> None:
    """x with ``value`` (a 0-D or broadcastable tensor) where ``mask``; all three broadcast."""
    dtype = ctx.input_dtype("x")
    value = ctx.cast(ctx.input("value"), dtype, ctx.input_dtype("value"))
    ctx.set_output("out", _select(ctx, _as_bool(ctx, "mask"), value, ctx.input("x"), dtype))


def _broadcast_pair(ctx: OpContext, a: str, b: str) -> tuple[ir.Value, ir.Value]:
    """Inputs ``a`` and ``b`` expanded to their common broadcast shape (as Paddle does first)."""
    x, y = ctx.input(a), ctx.input(b)
    sa, sb = ctx.input_shape(a), ctx.input_shape(b)
    if sa == sb and all(d >= 0 for d in sa):
        return x, y
    return ctx.op.Expand(x, ctx.op.Shape(y)), ctx.op.Expand(y, ctx.op.Shape(x))


@mapper("masked_select", min_opset=9)
def masked_select(ctx: OpContext) -> None:
    """The elements of x where mask holds, in row-major order, as a 1-D tensor."""
    x, mask = _broadcast_pair(ctx, "x", "mask")
    mask = ctx.cast(mask, "bool", ctx.input_dtype("mask"))
    flat_x, flat_m = ctx.reshape(x, [-1]), ctx.reshape(mask, [-1])
    ctx.set_output("out", ctx.op.Compress(flat_x, flat_m, axis=0))


# ---------------------------------------------------------------------- repeat_interleave
def _repeat_axis(ctx: OpContext) -> tuple[ir.Value, int]:
    x = ctx.input("x")
    rank = ctx.input_rank("x")
    if rank == 0:  # Paddle repeats a 0-D tensor as a 1-D one
        return ctx.reshape(x, [1]), 0
    return x, ctx.normalize_axis(int(ctx.attr("axis", 0)), rank)


def _repeat_int(ctx: OpContext, x: ir.Value, repeats: int, axis: int, dims: list[int]) -> ir.Value:
    """Each slice along ``axis`` repeated ``repeats`` times in place (a broadcast, then a merge)."""
    rank = len(dims)
    tiled_shape = dims[: axis + 1] + [repeats] + dims[axis + 1 :]
    if all(d >= 0 for d in dims):
        target = ctx.const_i64(tiled_shape)
        merged = ctx.const_i64(dims[:axis] + [dims[axis] * repeats] + dims[axis + 1 :])
    else:
        target = ctx.op.Concat(
            ctx.shape_of(x, 0, axis + 1), ctx.const_i64([repeats]), ctx.shape_of(x, axis + 1, rank), axis=0
        )
        merged = ctx.op.Concat(
            ctx.shape_of(x, 0, axis), ctx.const_i64([-1]), ctx.shape_of(x, axis + 1, rank), axis=0
        )
    expanded = ctx.op.Expand(ctx.unsqueeze(x, [axis + 1]), target)
    return ctx.op.Reshape(expanded, merged)


def _repeat_interleave_opset(op: Op) -> int:
    """8; 11 with a tensor of repeats (legacy RepeatsTensor)"""
    return 11 if op.inputs.get("RepeatsTensor") else 8


@mapper("repeat_interleave", min_opset=_repeat_interleave_opset)
def repeat_interleave(ctx: OpContext) -> None:
    """Int repeats; a legacy file's ``RepeatsTensor`` takes the tensor path."""
    if ctx.has_input("RepeatsTensor"):
        _repeat_by_tensor(ctx, "RepeatsTensor")
        return
    x, axis = _repeat_axis(ctx)
    dims = [int(d) for d in ctx.input_shape("x")] or [1]
    repeats = int(ctx.attr("repeats", 1))
    ctx.set_output("out", _repeat_int(ctx, x, repeats, axis, dims))


def _repeat_by_tensor(ctx: OpContext, slot: str) -> None:
    """Slice i along the axis repeated repeats[i] times: output position p reads slice
    #{i : cumsum(repeats)[i] <= p} (a compare against the running total)."""
    x, axis = _repeat_axis(ctx)
    repeats = ctx.cast(ctx.input(slot), "int64", ctx.input_dtype(slot))
    repeats = ctx.reshape(repeats, [-1])
    if ctx.input_shape(slot) in ((), (1,)):  # one count for every slice
        repeats = ctx.op.Expand(repeats, ctx.shape_of(x, axis, axis + 1))
    ends = ctx.op.CumSum(repeats, ctx.const_i64(0))
    total = ctx.op.ReduceSum(repeats, keepdims=0)  # all axes: a 0-D scalar
    positions = ctx.op.Range(ctx.const_i64(0), total, ctx.const_i64(1))
    passed = ctx.op.Not(ctx.op.Greater(ctx.unsqueeze(ends, [0]), ctx.unsqueeze(positions, [1])))
    index = ctx.reduce("ReduceSum", ctx.cast(passed, "int64"), [1], keepdims=False)
    ctx.set_output("out", ctx.op.Gather(x, index, axis=axis))


@mapper("repeat_interleave_with_tensor_index", min_opset=11)
def repeat_interleave_with_tensor_index(ctx: OpContext) -> None:
    _repeat_by_tensor(ctx, "repeats")


# ---------------------------------------------------------------------- index_put
def _index_columns(ctx: OpContext, x_dims: list[int], x: ir.Value) -> list[ir.Value]:
    """index_put's index tensors as int64 coordinates, one per indexed axis of x: a bool
    mask of rank k stands for k axes (its nonzero coordinates); negative indices wrap."""
    columns: list[ir.Value] = []
    for i in range(len(ctx.input_names("indices"))):
        dtype = ctx.input_dtype("indices", i)
        index = ctx.input("indices", i)
        if dtype == "bool":
            k = max(ctx.input_rank("indices", i), 1)
            coords = ctx.op.NonZero(index)  # [k, N]
            columns += [ctx.reshape(c, [-1]) for c in ctx.split(coords, [1] * k, 0)]
            continue
        index = ctx.cast(index, "int64", dtype)
        axis = len(columns)
        if axis >= len(x_dims):
            raise ctx.fail(f"index_put has more index tensors than x has axes ({len(x_dims)})")
        if x_dims[axis] >= 0:
            dim = ctx.const_i64(x_dims[axis])
        else:
            dim = ctx.reshape(ctx.shape_of(x, axis, axis + 1), [])
        columns.append(ctx.op.Where(ctx.op.Less(index, ctx.const_i64(0)), ctx.op.Add(index, dim), index))
    return columns


def _index_put_opset(op: Op) -> int:
    """11; 16 with accumulate (ScatterND add)"""
    return 16 if op.attrs.get("accumulate") else 11


@mapper("index_put", min_opset=_index_put_opset)
def index_put(ctx: OpContext) -> None:
    """``x[indices] = value`` (or ``+=`` with accumulate) as ScatterND: the index tensors
    broadcast together to B, the value to B + the unindexed trailing dims of x."""
    x = ctx.input("x")
    dims = [int(d) for d in ctx.input_shape("x")]
    dtype = ctx.input_dtype("x")
    columns = _index_columns(ctx, dims, x)
    n = len(columns)
    if n > len(dims):
        raise ctx.fail(f"index_put indexes {n} axes of a rank-{len(dims)} tensor")
    total = columns[0]
    for c in columns[1:]:
        total = ctx.op.Add(total, c)
    batch = ctx.op.Shape(total)  # the broadcast shape of the index tensors
    coords = ctx.op.Concat(*(ctx.unsqueeze(ctx.op.Expand(c, batch), [-1]) for c in columns), axis=-1)
    value = ctx.cast(ctx.input("value"), dtype, ctx.input_dtype("value"))
    target = batch if n == len(dims) else ctx.op.Concat(batch, ctx.shape_of(x, n, len(dims)), axis=0)
    value = ctx.op.Expand(value, target)
    if not bool(ctx.attr("accumulate", False)):
        ctx.set_output("out", ctx.op.ScatterND(x, coords, value))
        return
    # ONNX Runtime has no float16/bfloat16 ScatterND add: accumulate in float32.
    wide = "float32" if dtype in ("float16", "bfloat16") else dtype
    out = ctx.op.ScatterND(ctx.cast(x, wide, dtype), coords, ctx.cast(value, wide, dtype), reduction="add")
    ctx.set_output("out", ctx.cast(out, dtype, wide))


# ---------------------------------------------------------------------- unique
# Element types ONNX Runtime's Unique takes; others go through int64 (integers, bool) or
# float32 (bfloat16), both exact.
_UNIQUE_DTYPES = frozenset({"float32", "float64", "float16", "int64", "int8"})


@mapper("unique", min_opset=11)
def unique(ctx: OpContext) -> None:
    """ONNX Unique: sorted (Paddle's ``is_sorted``) or in first-occurrence order (legacy
    unique), flattened or along one axis; index outputs in Paddle's ``dtype``."""
    x = ctx.input("x")
    dtype = ctx.input_dtype("x")
    axes = ctx.attr("axis", [])
    axes = [axes] if isinstance(axes, int) else list(axes)
    if len(axes) > 1:
        raise ctx.fail(f"unique over several axes {axes} has no ONNX form")
    axis = ctx.normalize_axis(int(axes[0]), ctx.input_rank("x")) if axes else None
    work = dtype if dtype in _UNIQUE_DTYPES else ("float32" if dtype == "bfloat16" else "int64")
    y, first, inverse, counts = ctx.op.Unique(
        ctx.cast(x, work, dtype), axis=axis, sorted=int(bool(ctx.attr("is_sorted", False))), _outputs=4
    )
    index_dtype = str(ctx.attr("dtype", "int64"))
    for slot, declared in (("out", dtype), ("indices", index_dtype), ("inverse", index_dtype),
                           ("counts", index_dtype)):
        ctx.correct_declared(slot, dtype=declared)
    ctx.set_output("out", ctx.cast(y, dtype, work))
    ctx.set_output("indices", ctx.cast(first, index_dtype, "int64"))
    ctx.set_output("inverse", ctx.cast(inverse, index_dtype, "int64"))
    ctx.set_output("counts", ctx.cast(counts, index_dtype, "int64"))

