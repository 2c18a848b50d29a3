"""Shape manipulation: reshape, flatten, squeeze, concat, split, slice, expand, tile, flip, ...

Shape-dependent emulations (flip, roll, tril/triu below opset 14, pixel_shuffle below
opset 11, unfold) use Paddle's static dims when it knows them and runtime ``Shape``
arithmetic otherwise; forms that need a newer opset for dynamic dims or runtime arguments
declare it with ``ctx.require_opset`` (the exporter then raises the opset).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext
from pd2onnx.convert.registry import mapper
from pd2onnx.errors import ConversionError

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
IntArray = list[int] | ir.Value


# ---------------------------------------------------------------------------- helpers
def _is_value(v: object) -> bool:
    return isinstance(v, ir.Value)


def _dims(ctx: OpContext, slot: str = "x", i: int = 0) -> list[int]:
    """Paddle's static shape of an input (-1 = dynamic)."""
    return [int(d) for d in ctx.input_shape(slot, i)]


def _norm_axes(ctx: OpContext, axes: Sequence[int] | int, rank: int) -> list[int]:
    if isinstance(axes, (int, np.integer)):
        axes = [int(axes)]
    return [ctx.normalize_axis(int(a), rank) for a in axes]


def _static_axis(ctx: OpContext, slot: str, default: int = 0) -> int:
    """A Scalar axis argument that must be known at conversion time."""
    axis = ctx.scalar(slot, default)
    if _is_value(axis):
        raise ctx.fail(f"a runtime {slot!r} tensor is not supported", hint="make the axis a constant")
    return int(axis)


def _shape_value(ctx: OpContext, parts: Sequence[int | ir.Value]) -> ir.Value:
    """An int64 1-D shape from static ints and 1-D int64 runtime pieces (runs of ints merge)."""
    pieces: list[ir.Value] = []
    run: list[int] = []
    for p in parts:
        if _is_value(p):
            if run:
                pieces.append(ctx.const_i64(run))
                run = []
            pieces.append(p)
        else:
            run.append(int(p))
    if run or not pieces:
        pieces.append(ctx.const_i64(run))
    return pieces[0] if len(pieces) == 1 else ctx.op.Concat(*pieces, axis=0)


def _dim_parts(
    ctx: OpContext, x: ir.Value, dims: Sequence[int], start: int, end: int
) -> list[int | ir.Value]:
    """dims[start:end]: static ints when all are known, else one runtime Shape slice."""
    if all(d >= 0 for d in dims[start:end]):
        return list(dims[start:end])
    return [ctx.shape_of(x, start, end)] if end > start else []


def _int_array_len(ctx: OpContext, slot: str, attr: str | None = None) -> int:
    """How many entries an IntArray argument has (its tensors' static sizes, or the attribute's)."""
    names = ctx.input_names(slot)
    if not names:
        value = ctx.attr(attr or slot, [])
        return 1 if isinstance(value, int) else len(value)
    total = 0
    for i in range(len(names)):
        shape = ctx.input_shape(slot, i)
        if any(d < 0 for d in shape):
            raise ctx.fail(f"the length of {slot!r} is not known at conversion time")
        total += int(np.prod(shape, dtype=np.int64))
    return total


def _legacy_2x(ctx: OpContext) -> bool:
    """Was the model written by Paddle 2.x (or an unversioned build) as a legacy ProgramDesc?"""
    program = ctx.state.program
    return program.format == "legacy" and program.version < 3_000_000


# ---------------------------------------------------------------------------- reshape family
@mapper("reshape")
def reshape(ctx: OpContext) -> None:
    """Paddle's 0 (copy the input dim) and -1 (infer) mean the same in ONNX Reshape."""
    shape = ctx.int_array("shape")
    if shape is None:
        raise ctx.fail("reshape has no target shape")
    ctx.set_output("out", ctx.reshape(ctx.input("x"), shape))


@mapper("flatten")
def flatten(ctx: OpContext) -> None:
    """Merge dims start_axis..stop_axis into a -1; leading dims copy with 0, trailing ones are spelled out."""
    x = ctx.input("x")
    dims = _dims(ctx)
    rank = len(dims)
    if rank == 0:
        ctx.set_output("out", ctx.reshape(x, [1]))
        return
    start = ctx.normalize_axis(int(ctx.attr("start_axis", 1)), rank)
    stop = ctx.normalize_axis(int(ctx.attr("stop_axis", 1)), rank)
    if start > stop:
        raise ctx.fail(f"start_axis {start} is after stop_axis {stop}")
    parts = [0] * start + [-1] + _dim_parts(ctx, x, dims, stop + 1, rank)
    ctx.set_output("out", ctx.reshape(x, _shape_value(ctx, parts)))


@mapper("flatten2")
def flatten2(ctx: OpContext) -> None:
    """Legacy flatten/flatten2: a 2-D [prod(dims[:axis]), prod(dims[axis:])] result."""
    x = ctx.input("x")
    dims = _dims(ctx)
    axis = int(ctx.attr("axis", 1))
    if axis < 0:
        axis += len(dims)
    lead = dims[:axis]
    if all(d >= 0 for d in lead):
        ctx.set_output("out", ctx.reshape(x, [int(np.prod(lead, dtype=np.int64)), -1]))
    else:
        if ctx.input_dtype("x") not in ("float16", "float32", "float64"):
            ctx.require_opset(9, "Flatten of a non-float tensor with dynamic leading dims")
        ctx.set_output("out", ctx.op.Flatten(x, axis=axis))


@mapper("squeeze")
def squeeze(ctx: OpContext) -> None:
    """Paddle skips listed axes whose dim is not 1; dynamic dims are squeezed (as Paddle declares)."""
    x = ctx.input("x")
    dims = _dims(ctx)
    axes = ctx.int_array("axis")
    if _is_value(axes):
        ctx.require_opset(13, "squeeze with runtime axes")
        ctx.set_output("out", ctx.op.Squeeze(x, axes))
        return
    if not axes:
        if all(d >= 0 for d in dims):
            picked = [i for i, d in enumerate(dims) if d == 1]
            ctx.set_output("out", ctx.squeeze(x, picked) if picked else ctx.op.Identity(x))
        else:
            ctx.set_output("out", ctx.squeeze(x))
        return
    picked = sorted({a for a in _norm_axes(ctx, axes, len(dims)) if dims[a] in (1, -1)})
    ctx.set_output("out", ctx.squeeze(x, picked) if picked else ctx.op.Identity(x))


def _unsqueeze_positions(axes: Sequence[int], rank: int) -> list[int]:
    """Where Paddle's new dims end up: it inserts them one by one, each relative to the rank so far."""
    slots: list[bool] = [False] * rank  # True = an inserted dim
    for a in axes:
        cur = a + len(slots) + 1 if a < 0 else a
        slots.insert(cur, True)
    return [i for i, new in enumerate(slots) if new]


@mapper("unsqueeze")
def unsqueeze(ctx: OpContext) -> None:
    x = ctx.input("x")
    axes = ctx.int_array("axis")
    # Runtime axes: Paddle's one-at-a-time insertion equals ONNX's rule for one axis, or for
    # ascending non-negative axes (what Paddle code produces); other orders cannot be checked.
    if _is_value(axes):
        ctx.require_opset(13, "unsqueeze with runtime axes")
        ctx.set_output("out", _unsqueeze_runtime(ctx, x, axes))
        return
    if not axes:
        ctx.set_output("out", ctx.op.Identity(x))
        return
    ctx.set_output("out", ctx.unsqueeze(x, _unsqueeze_positions(axes, ctx.input_rank("x"))))


def _unsqueeze_runtime(ctx: OpContext, x: ir.Value, axes: ir.Value) -> ir.Value:
    """Unsqueeze at runtime axes as a Reshape to a shape of known length (ONNX Unsqueeze with
    runtime axes has an output of unknown rank, which OpenVINO's CPU plugin cannot run):
    the output has 1 at each axis (counted in the output, negatives from its end) and the
    input's dims, in order, elsewhere."""
    try:
        count = _int_array_len(ctx, "axis")
    except ConversionError:
        return ctx.op.Unsqueeze(x, axes)  # how many axes is only known at run time
    rank = ctx.input_rank("x")
    out_rank = rank + count
    if rank == 0:
        return ctx.reshape(x, [1] * count)
    axes = ctx.reshape(axes, [-1])
    axes = ctx.op.Where(ctx.op.Less(axes, ctx.const_i64(0)), ctx.op.Add(axes, ctx.const_i64(out_rank)), axes)
    positions = ctx.const_i64(list(range(out_rank)))
    hits = ctx.cast(ctx.op.Equal(ctx.unsqueeze(positions, [1]), ctx.unsqueeze(axes, [0])), "int64", "bool")
    inserted = ctx.reduce("ReduceSum", hits, [1], keepdims=False)  # [out_rank]: 1 at the new axes
    kept = ctx.op.Sub(ctx.const_i64(1), inserted)
    source = ctx.op.Sub(ctx.op.CumSum(kept, ctx.const(np.int64(0))), ctx.const_i64(1))
    source = ctx.op.Max(source, ctx.const_i64(0))  # new axes before the first kept one
    dims = ctx.op.Gather(ctx.op.Shape(x), source, axis=0)
    shape = ctx.op.Where(ctx.cast(inserted, "bool", "int64"), ctx.const_i64(1), dims)
    return ctx.op.Reshape(x, shape)


@mapper("transpose")
def transpose(ctx: OpContext) -> None:
    rank = ctx.input_rank("x")
    perm = _norm_axes(ctx, ctx.attr("perm", []), rank)
    if rank == 0 or perm == list(range(rank)):
        ctx.set_output("out", ctx.op.Identity(ctx.input("x")))
        return
    ctx.set_output("out", ctx.op.Transpose(ctx.input("x"), perm=perm))


# ---------------------------------------------------------------------------- join and split
@mapper("concat")
def concat(ctx: OpContext) -> None:
    xs = ctx.inputs("x")
    out_dtype = ctx.output_dtype("out")
    xs = [ctx.cast(v, out_dtype, ctx.input_dtype("x", i)) for i, v in enumerate(xs)]
    axis = ctx.normalize_axis(_static_axis(ctx, "axis"), ctx.input_rank("x"))
    ctx.set_output("out", ctx.op.Identity(xs[0]) if len(xs) == 1 else ctx.op.Concat(*xs, axis=axis))


@mapper("stack")
def stack(ctx: OpContext) -> None:
    xs = ctx.inputs("x")
    axis = ctx.normalize_axis(int(ctx.attr("axis", 0)), ctx.input_rank("x") + 1)
    parts = [ctx.unsqueeze(v, [axis]) for v in xs]
    ctx.set_output("out", parts[0] if len(parts) == 1 else ctx.op.Concat(*parts, axis=axis))


def _unstack_into(ctx: OpContext, x: ir.Value, axis: int, slot: str = "out") -> None:
    """Output i = x.take(i, axis) (Gather with a scalar index drops the axis)."""
    for i in range(ctx.output_count(slot)):
        ctx.set_output(slot, ctx.op.Gather(x, ctx.const(np.array(i, dtype=np.int64)), axis=axis), i)


@mapper("unstack")
def unstack(ctx: OpContext) -> None:
    axis = ctx.normalize_axis(int(ctx.attr("axis", 0)), ctx.input_rank("x"))
    _unstack_into(ctx, ctx.input("x"), axis)


@mapper("unbind")
def unbind(ctx: OpContext) -> None:
    axis = ctx.normalize_axis(int(ctx.attr("axis", 0)), ctx.input_rank("input"))
    _unstack_into(ctx, ctx.input("input"), axis)


def _split_equal(ctx: OpContext, x: ir.Value, n: int, axis: int, dim: int) -> list[ir.Value]:
    if dim >= 0:
        if dim % n:
            raise ctx.fail(f"dim {dim} does not split into {n} equal parts")
        return ctx.split(x, [dim // n] * n, axis)
    if n == 1:
        return [ctx.op.Identity(x)]
    if ctx.opset >= 18:
        return list(ctx.op.Split(x, axis=axis, num_outputs=n, _outputs=n))
    return list(ctx.op.Split(x, axis=axis, _outputs=n))  # no sizes: equal parts


def _split_static_sections(
    ctx: OpContext, x: ir.Value, sections: list[int], axis: int, dim: int
) -> list[ir.Value]:
    """Split by sizes where at most one is -1 (the rest of the dim)."""
    if sections.count(-1) > 1:
        raise ctx.fail(f"sections {sections} have more than one -1")
    if -1 not in sections:
        return ctx.split(x, sections, axis)
    if dim >= 0:
        sizes = [dim - (sum(sections) + 1) if s == -1 else s for s in sections]
        return ctx.split(x, sizes, axis)
    # Dynamic dim: slice from the front before the -1 piece and from the back after it.
    k = sections.index(-1)
    head, tail = sum(sections[:k]), sum(sections[k + 1 :])
    outs, offset = [], 0
    for i, size in enumerate(sections):
        if i < k:
            start, end = offset, offset + size
            offset = end
        elif i == k:
            start, end = head, -tail if tail else INT64_MAX
            offset = -tail
        else:
            start, end = offset, offset + size if offset + size < 0 else INT64_MAX
            offset += size
        outs.append(ctx.slice(x, [start], [end], [axis]))
    return outs


def _split_runtime_sections(
    ctx: OpContext, x: ir.Value, sections: ir.Value, axis: int, n: int
) -> list[ir.Value]:
    """Runtime sizes; a -1 entry becomes dim - (sum + 1)."""
    ctx.require_opset(13, "split with runtime sections")
    dim = ctx.shape_of(x, axis, axis + 1)
    rest = ctx.op.Sub(
        dim, ctx.op.Add(ctx.op.ReduceSum(sections, ctx.const_i64([0]), keepdims=1), ctx.const_i64([1]))
    )
    sizes = ctx.op.Where(ctx.op.Equal(sections, ctx.const_i64([-1])), rest, sections)
    return list(ctx.op.Split(x, sizes, axis=axis, _outputs=n)) if n > 1 else [ctx.op.Identity(x)]


@mapper("split")
def split(ctx: OpContext) -> None:
    """Sections (with -1 = the rest); legacy split with ``num`` > 0 splits equally."""
    x = ctx.input("x")
    dims = _dims(ctx)
    axis = ctx.normalize_axis(_static_axis(ctx, "axis"), len(dims))
    n = ctx.output_count("out")
    num = int(ctx.attr("num", 0) or 0)
    sections = ctx.int_array("sections")
    if num > 0 or not sections:
        outs = _split_equal(ctx, x, num or n, axis, dims[axis])
    elif _is_value(sections):
        outs = _split_runtime_sections(ctx, x, sections, axis, n)
    else:
        outs = _split_static_sections(ctx, x, sections, axis, dims[axis])
    ctx.set_outputs("out", outs)


@mapper("split_with_num")
def split_with_num(ctx: OpContext) -> None:
    x = ctx.input("x")
    dims = _dims(ctx)
    axis = ctx.normalize_axis(_static_axis(ctx, "axis"), len(dims))
    ctx.set_outputs("out", _split_equal(ctx, x, int(ctx.attr("num", 1)), axis, dims[axis]))


# ---------------------------------------------------------------------------- slicing
def _decrease(ctx: OpContext, out: ir.Value, decrease_axis: Sequence[int], rank: int) -> ir.Value:
    """Drop the decreased axes; Paddle versions that keep a [1] for a full decrease get one."""
    if not decrease_axis:
        return out
    axes = sorted(set(_norm_axes(ctx, decrease_axis, rank)))
    out = ctx.squeeze(out, axes)
    declared = ctx.output_shape("out")
    if len(axes) == rank and declared is not None and len(declared) == 1:
        out = ctx.reshape(out, [1])
    return out


@mapper("slice")
def slice_(ctx: OpContext) -> None:
    """ONNX Slice clamps starts/ends to the dim like Paddle does."""
    if ctx.input_info("input").kind == "tensor_array":  # legacy list slicing (Paddle 2.x dy2static)
        from pd2onnx.convert.ops.control_flow import slice_tensor_array

        return slice_tensor_array(ctx)
    x = ctx.input("input")
    rank = ctx.input_rank("input")
    axes = _norm_axes(ctx, ctx.attr("axes", []), rank)
    starts, ends = ctx.int_array("starts"), ctx.int_array("ends")
    if _is_value(starts) or _is_value(ends):
        ctx.require_opset(10, "slice with runtime starts/ends")
    out = ctx.slice(x, starts, ends, axes)
    ctx.set_output("out", _decrease(ctx, out, ctx.attr("decrease_axis", []), rank))


def _strided_ends(
    ctx: OpContext, x: ir.Value, axes: list[int], starts: IntArray, ends: IntArray, strides: IntArray
) -> IntArray:
    """Ends that make ONNX Slice pick what Paddle picks for negative strides.

    ONNX clamps a negative-step start into [0, dim-1]; Paddle differs in two places:
    Paddle 3.x takes nothing when start < -dim (end 0 does that in ONNX, where such a start
    clamps to 0; not INT64_MAX, which ONNX Runtime reads as "unbounded");
    Paddle 2.x reads end -1 as "through index 0" (x[::-1] is stored so) and clamps an
    end below -dim to -dim (index 0 excluded).
    """
    if not _is_value(strides) and all(st > 0 for st in strides):
        return ends
    legacy = _legacy_2x(ctx)
    dims = [_dims(ctx)[a] for a in axes]
    if not any(_is_value(v) for v in (starts, ends, strides)) and all(d >= 0 for d in dims):
        out = []
        for b, e, st, d in zip(starts, ends, strides, dims):
            if st < 0 and legacy:
                e = INT64_MIN if e == -1 else max(e, -d)
            elif st < 0 and b < -d:
                e = 0
            out.append(e)
        return out
    b_v, e_v, st_v = (v if _is_value(v) else ctx.const_i64(v) for v in (starts, ends, strides))
    dim_v = ctx.op.Gather(ctx.op.Shape(x), ctx.const_i64(axes), axis=0)
    negative = ctx.op.Less(st_v, ctx.const_i64([0]))
    if legacy:
        neg_dim = ctx.op.Neg(dim_v)
        clamped = ctx.op.Where(ctx.op.Less(e_v, neg_dim), neg_dim, e_v)
        whole = ctx.op.Equal(e_v, ctx.const_i64([-1]))
        return ctx.op.Where(negative, ctx.op.Where(whole, ctx.const_i64([INT64_MIN]), clamped), e_v)
    before = ctx.op.Less(b_v, ctx.op.Neg(dim_v))  # start < -dim (start + dim overflows int32 in OpenVINO)
    return ctx.op.Where(ctx.op.And(negative, before), ctx.const_i64([0]), e_v)


@mapper("strided_slice", min_opset=10)
def strided_slice(ctx: OpContext) -> None:
    """ONNX Slice with steps, with Paddle's own reading of negative-step bounds."""
    x = ctx.input("x")
    rank = ctx.input_rank("x")
    axes = _norm_axes(ctx, ctx.attr("axes", []), rank)
    starts, ends, strides = ctx.int_array("starts"), ctx.int_array("ends"), ctx.int_array("strides")
    ends = _strided_ends(ctx, x, axes, starts, ends, strides)
    out = ctx.slice(x, starts, ends, axes, strides)
    ctx.set_output("out", _decrease(ctx, out, ctx.attr("decrease_axis", []), rank))


# ---------------------------------------------------------------------------- broadcast and repeat
@mapper("expand", min_opset=8)
def expand(ctx: OpContext) -> None:
    """A -1 keeps the input dim: as 1 it does so in ONNX's two-way broadcast."""
    shape = ctx.int_array("shape")
    if shape is None:
        raise ctx.fail("expand has no target shape")
    if _is_value(shape):
        target = ctx.op.Abs(shape)  # -1 -> 1; valid sizes are >= 0
    else:
        target = ctx.const_i64([1 if s == -1 else s for s in shape])
    ctx.set_output("out", ctx.op.Expand(ctx.input("x"), target))


@mapper("expand_as", min_opset=8)
def expand_as(ctx: OpContext) -> None:
    x = ctx.input("x")
    if ctx.has_input("y"):
        ctx.set_output("out", ctx.op.Expand(x, ctx.op.Shape(ctx.input("y"))))
        return
    target = [int(s) for s in ctx.attr("target_shape", [])]
    if not target or any(s < 0 for s in target):
        raise ctx.fail(f"expand_as without y needs a static target_shape, got {target}")
    ctx.set_output("out", ctx.op.Expand(x, ctx.const_i64(target)))


def _tile(ctx: OpContext, slot: str) -> ir.Value:
    """Tile x by an IntArray; shorter repeats apply to the last dims, longer ones add leading dims."""
    x = ctx.input("x")
    rank = ctx.input_rank("x")
    repeats = ctx.int_array(slot)
    if repeats is None:
        raise ctx.fail(f"{ctx.pd.type} has no repeat times")
    n = len(repeats) if isinstance(repeats, list) else _int_array_len(ctx, slot)
    if n > rank:
        x = ctx.unsqueeze(x, list(range(n - rank))) if rank or n else x
        rank = n
    if rank == 0:
        return ctx.op.Identity(x)
    if isinstance(repeats, list):
        return ctx.op.Tile(x, ctx.const_i64([1] * (rank - n) + repeats))
    if n < rank:
        repeats = ctx.op.Concat(ctx.const_i64([1] * (rank - n)), repeats, axis=0)
    return ctx.op.Tile(x, repeats)


@mapper("tile")
def tile(ctx: OpContext) -> None:
    ctx.set_output("out", _tile(ctx, "repeat_times"))


@mapper("expand_v1")
def expand_v1(ctx: OpContext) -> None:
    """Legacy expand (v1): repeats each dim ``expand_times`` times, i.e. a tile."""
    ctx.set_output("out", _tile(ctx, "expand_times"))


# ---------------------------------------------------------------------------- reorder
def _reverse(ctx: OpContext, x: ir.Value, axes: list[int], dims: list[int]) -> ir.Value:
    """Reverse x along axes: a step -1 Slice, or (before opset 10) a Gather of static dims."""
    if ctx.opset >= 10:
        k = len(axes)
        return ctx.slice(x, [-1] * k, [INT64_MIN] * k, axes, [-1] * k)
    for a in axes:
        if dims[a] < 0:
            ctx.require_opset(10, "flip of a dynamic dim")
        x = ctx.op.Gather(x, ctx.const_i64(list(range(dims[a] - 1, -1, -1))), axis=a)
    return x


@mapper("flip")
def flip(ctx: OpContext) -> None:
    dims = _dims(ctx)
    axes = sorted(set(_norm_axes(ctx, ctx.attr("axis", []), len(dims))))
    x = ctx.input("x")
    ctx.set_output("out", _reverse(ctx, x, axes, dims) if axes else ctx.op.Identity(x))


def _roll_axis(ctx: OpContext, x: ir.Value, shift: int | ir.Value, axis: int, dim: int) -> ir.Value:
    """Concat(x[dim-s:], x[:dim-s]) along axis, s = shift mod dim."""
    if dim >= 0 and not _is_value(shift):
        s = shift % dim if dim else 0
        if s == 0:
            return x
        cut = dim - s
        return ctx.op.Concat(
            ctx.slice(x, [cut], [INT64_MAX], [axis]), ctx.slice(x, [0], [cut], [axis]), axis=axis
        )
    ctx.require_opset(10, "roll with a dynamic dim or runtime shifts")
    dim_v = ctx.shape_of(x, axis, axis + 1) if dim < 0 else ctx.const_i64([dim])
    shift_v = shift if _is_value(shift) else ctx.const_i64([shift])
    cut = ctx.op.Sub(dim_v, ctx.op.Mod(shift_v, dim_v))
    head = ctx.slice(x, cut, ctx.const_i64([INT64_MAX]), [axis])
    return ctx.op.Concat(head, ctx.slice(x, ctx.const_i64([0]), cut, [axis]), axis=axis)


@mapper("roll")
def roll(ctx: OpContext) -> None:
    """Roll each listed axis; no axis rolls the flattened tensor and restores the shape."""
    x = ctx.input("x")
    dims = _dims(ctx)
    shifts = ctx.int_array("shifts")
    axes = _norm_axes(ctx, ctx.attr("axis", []), len(dims))
    n = len(shifts) if isinstance(shifts, list) else _int_array_len(ctx, "shifts")
    shift_at = (
        (lambda i: shifts[i])
        if isinstance(shifts, list)
        else (lambda i: ctx.op.Gather(shifts, ctx.const_i64([i]), axis=0))
    )
    if not axes:
        if n != 1:
            raise ctx.fail(f"roll without axis takes one shift, got {n}")
        total = int(np.prod(dims, dtype=np.int64)) if all(d >= 0 for d in dims) else -1
        flat = _roll_axis(ctx, ctx.reshape(x, [-1]), shift_at(0), 0, total)
        shape = ctx.const_i64(dims) if total >= 0 else ctx.op.Shape(x)
        ctx.set_output("out", ctx.reshape(flat, shape))
        return
    if n != len(axes):
        raise ctx.fail(f"roll has {n} shifts for {len(axes)} axes")
    out = x
    for i, a in enumerate(axes):
        out = _roll_axis(ctx, out, shift_at(i), a, dims[a])
    ctx.set_output("out", out if out is not x else ctx.op.Identity(x))


# ---------------------------------------------------------------------------- triangles
def _triangle_mask(ctx: OpContext, x: ir.Value, dims: list[int], diagonal: int, lower: bool) -> ir.Value:
    """Bool [H, W] mask of the kept entries: col - row <= diagonal (lower) or >= diagonal (upper)."""
    h, w = dims[-2], dims[-1]
    if h >= 0 and w >= 0:
        diff = np.arange(w)[None, :] - np.arange(h)[:, None]
        return ctx.const(diff <= diagonal if lower else diff >= diagonal)
    ctx.require_opset(11, "tril/triu of dynamic dims before opset 14")
    zero, one = ctx.const(np.array(0, np.int64)), ctx.const(np.array(1, np.int64))
    shape = ctx.op.Shape(x)
    rank = len(dims)
    h_v = ctx.op.Gather(shape, ctx.const(np.array(rank - 2, np.int64)), axis=0)
    w_v = ctx.op.Gather(shape, ctx.const(np.array(rank - 1, np.int64)), axis=0)
    rows = ctx.unsqueeze(ctx.op.Range(zero, h_v, one), [1])
    diff = ctx.op.Sub(ctx.op.Range(zero, w_v, one), rows)
    d = ctx.const(np.array(diagonal, np.int64))
    return ctx.op.Not(ctx.op.Greater(diff, d)) if lower else ctx.op.Not(ctx.op.Less(diff, d))


@mapper("tril", "triu", min_opset=9)
def tril_triu(ctx: OpContext) -> None:
    """ONNX Trilu from opset 14; before, a Where over a triangle mask (an And for bool)."""
    x = ctx.input("x")
    lower = bool(ctx.attr("lower", ctx.pd.type == "tril"))
    diagonal = int(ctx.attr("diagonal", 0))
    if ctx.opset >= 14:
        ctx.set_output(
            "out", ctx.op.Trilu(x, ctx.const(np.array(diagonal, np.int64)), upper=0 if lower else 1)
        )
        return
    dims = _dims(ctx)
    mask = _triangle_mask(ctx, x, dims, diagonal, lower)
    if np.dtype(ctx.input_dtype("x")) == np.bool_:  # ONNX Runtime has no bool Where before 16
        ctx.set_output("out", ctx.op.And(mask, x))
        return
    zero = ctx.const(np.zeros((), dtype=ctx.input_dtype("x")))
    ctx.set_output("out", ctx.op.Where(mask, x, zero))


# ---------------------------------------------------------------------------- grids and patches
@mapper("meshgrid", min_opset=8)
def meshgrid(ctx: OpContext) -> None:
    """'ij' grids: input i reshaped to size n_i on axis i, expanded to the full shape."""
    xs = ctx.inputs("inputs")
    n = len(xs)
    sizes: list[int | ir.Value] = []
    for i, v in enumerate(xs):
        shape = ctx.input_shape("inputs", i)
        size = int(np.prod(shape, dtype=np.int64)) if all(d >= 0 for d in shape) else -1
        sizes.append(size if size >= 0 else ctx.op.Shape(ctx.reshape(v, [-1])))
    full = _shape_value(ctx, sizes)
    for i, v in enumerate(xs):
        line = ctx.reshape(v, [1] * i + [-1] + [1] * (n - i - 1))
        ctx.set_output("out", ctx.op.Expand(line, full), i)


@mapper("broadcast_tensors", min_opset=8)
def broadcast_tensors(ctx: OpContext) -> None:
    """Every input expanded to the inputs' common (NumPy-broadcast) shape, each in its own
    dtype. A dim is static when any input has it static and not 1 (the others must be 1 or
    the same); when only run-time dims can decide it, it is the first of them that is not 1
    (Where; opset 9). Complex inputs (carried as [..., 2]) keep their trailing [re, im] dim."""
    n = len(ctx.input_names("input"))
    shapes = [_dims(ctx, "input", i) for i in range(n)]
    xs = [ctx.input("input", i) for i in range(n)]
    rank = max((len(s) for s in shapes), default=0)
    parts: list[int | ir.Value] = []
    for axis in range(rank):
        known, runtime = set(), []
        for x, shape in zip(xs, shapes):
            k = axis - (rank - len(shape))
            if k < 0:
                continue
            if shape[k] >= 0:
                known.add(shape[k])
            else:
                runtime.append(ctx.shape_of(x, k, k + 1))
        fixed = known - {1}
        if len(fixed) > 1:
            raise ctx.fail(f"inputs of shapes {shapes} do not broadcast (dims {sorted(fixed)} on axis {axis})")
        if fixed or not runtime:
            parts.append(fixed.pop() if fixed else 1)
            continue
        ctx.require_opset(9, "broadcasting dims known only at run time (Where)")
        dim = runtime[0]
        for other in runtime[1:]:
            dim = ctx.op.Where(ctx.op.Equal(dim, ctx.const_i64([1])), other, dim)
        parts.append(dim)
    for i, x in enumerate(xs):
        carried = [2] if ctx.input_dtype("input", i) in ("complex64", "complex128") else []
        ctx.set_output("out", ctx.op.Expand(x, _shape_value(ctx, parts + carried)), i)


@mapper("pixel_shuffle")
def pixel_shuffle(ctx: OpContext) -> None:
    """out[n, c, h*r+i, w*r+j] = in[n, c*r*r + i*r + j, h, w]: DepthToSpace in CRD mode."""
    x = ctx.input("x")
    r = int(ctx.attr("upscale_factor", 1))
    nhwc = ctx.attr("data_format", "NCHW") == "NHWC"
    if nhwc:
        x = ctx.op.Transpose(x, perm=[0, 3, 1, 2])
    if ctx.opset >= 11:
        out = ctx.op.DepthToSpace(x, blocksize=r, mode="CRD")
    else:
        dims = _dims(ctx)
        c, h, w = (dims[3], dims[1], dims[2]) if nhwc else dims[1:]
        if min(c, h, w) < 0:
            ctx.require_opset(11, "pixel_shuffle with dynamic C, H or W")
        out = ctx.reshape(x, [0, c // (r * r), r, r, h, w])
        out = ctx.op.Transpose(out, perm=[0, 1, 4, 2, 5, 3])
        out = ctx.reshape(out, [0, c // (r * r), h * r, w * r])
    ctx.set_output("out", ctx.op.Transpose(out, perm=[0, 2, 3, 1]) if nhwc else out)


def _pad_hw(ctx: OpContext, x: ir.Value, top: int, left: int, bottom: int, right: int) -> ir.Value:
    """Zero-pad the last two dims of an NCHW tensor."""
    if not any((top, left, bottom, right)):
        return x
    pads = [0, 0, top, left, 0, 0, bottom, right]
    if ctx.opset >= 11:
        return ctx.op.Pad(x, ctx.const_i64(pads))
    return ctx.op.Pad(x, pads=pads)


@mapper("unfold")
def unfold(ctx: OpContext) -> None:
    """im2col as a Gather of the padded, spatially flattened input (exact for every value).

    Column k = c*kh*kw + i*kw + j of patch l = oh*OW + ow reads padded[c, oh*sh + i*dh, ow*sw + j*dw].
    Dynamic H/W: the patch indices are computed in the graph (Range).
    """
    x = ctx.input("x")
    dims = _dims(ctx)
    kh, kw = (int(k) for k in ctx.attr("kernel_sizes"))
    sh, sw = (int(s) for s in ctx.attr("strides", [1, 1]))
    dh, dw = (int(d) for d in ctx.attr("dilations", [1, 1]))
    pads = [int(p) for p in ctx.attr("paddings", [0, 0, 0, 0])]
    top, left, bottom, right = pads if len(pads) == 4 else (pads[0], pads[1], pads[0], pads[1])
    padded = _pad_hw(ctx, x, top, left, bottom, right)
    taps_h = (np.arange(kh) * dh).reshape(kh, 1, 1, 1)  # [kh, 1, 1, 1]
    taps_w = (np.arange(kw) * dw).reshape(1, kw, 1, 1)  # [1, kw, 1, 1]
    if dims[2] < 0 or dims[3] < 0:
        ctx.require_opset(11, "unfold with a dynamic height or width (patch indices computed with Range)")
        hw = ctx.shape_of(padded, 2, 4)
        zero, one = ctx.const_i64(0), ctx.const_i64(1)
        counts, starts = [], []
        for axis, (k, d, s) in enumerate(((kh, dh, sh), (kw, dw, sw))):
            size = ctx.op.Gather(hw, ctx.const_i64(axis), axis=0)
            n = ctx.op.Add(
                ctx.op.Div(ctx.op.Sub(size, ctx.const_i64(d * (k - 1) + 1)), ctx.const_i64(s)), one
            )
            counts.append(n)
            starts.append(ctx.op.Mul(ctx.op.Range(zero, n, one), ctx.const_i64(s)))
        rows = ctx.op.Add(ctx.reshape(starts[0], [1, 1, -1, 1]), ctx.const_i64(taps_h))  # [kh, 1, OH, 1]
        cols = ctx.op.Add(ctx.reshape(starts[1], [1, 1, 1, -1]), ctx.const_i64(taps_w))  # [1, kw, 1, OW]
        width = ctx.op.Gather(hw, ctx.const_i64(1), axis=0)
        index = ctx.reshape(ctx.op.Add(ctx.op.Mul(rows, width), cols), [kh * kw, -1])
        patches = ctx.op.Gather(ctx.reshape(padded, [0, 0, -1]), index, axis=2)
        length = ctx.reshape(ctx.op.Mul(counts[0], counts[1]), [1])
        ctx.set_output("out", ctx.reshape(patches, ctx.op.Concat(ctx.const_i64([0, -1]), length, axis=0)))
        return
    hp, wp = dims[2] + top + bottom, dims[3] + left + right
    oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise ctx.fail(f"unfold window does not fit the padded {hp}x{wp} input")
    rows = (np.arange(oh) * sh).reshape(1, 1, oh, 1) + taps_h
    cols = (np.arange(ow) * sw).reshape(1, 1, 1, ow) + taps_w
    index = rows * wp + cols  # [kh, kw, oh, ow]
    flat = ctx.reshape(padded, [0, 0, hp * wp])
    patches = ctx.op.Gather(flat, ctx.const(index.reshape(kh * kw, oh * ow).astype(np.int64)), axis=2)
    ctx.set_output("out", ctx.reshape(patches, [0, -1, oh * ow]))
