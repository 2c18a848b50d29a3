"""What a mapper sees: typed access to one Paddle op and an opset-aware ONNX builder.

``OpContext`` reads inputs (as ONNX values), attributes (with op-definition defaults),
Paddle's dtype/shape metadata, constants, and the IntArray/Scalar arguments that may be an
attribute, a constant tensor or a runtime tensor (``int_array`` / ``scalar``). It emits
nodes through ``ctx.op.<OpType>(...)`` and a few opset-aware helpers whose ONNX form
changed across opsets (Unsqueeze, Squeeze, Reduce*, Split, Slice, Clip, Pad ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.casting import c_cast
from pd2onnx.convert.legalize import has_kernel
from pd2onnx.convert.onnx_types import onnx_dtype
from pd2onnx.errors import ConversionError, DeclarationsCorrected, ModelFormatError, OpRefused, OpsetTooLow
from pd2onnx.optimize._ir import make_attrs
from pd2onnx.paddle import dtypes

if TYPE_CHECKING:
    from pd2onnx.convert.state import ConvertState
    from pd2onnx.paddle.program import Op, Value

# Ops whose output has their input's dtype and shape at run time (what Paddle 2.x's jit.save
# puts between a result and its fetch is a ``scale`` by 1).
_TYPE_PRESERVING = frozenset({"scale", "assign", "fetch"})

FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
INT_DTYPES = frozenset({"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"})


def _yield_targets(program, yield_op, k: int) -> list:
    """The values a PIR ``yield``'s operand ``k`` becomes: an ``if``'s result k; a ``while``'s
    block argument and result k-1 (operand 0 is the new condition)."""
    owner = next((op for op in program.walk_ops() if any(b.idx == yield_op.block_idx for b in op.blocks)), None)
    if owner is None:
        return []
    results = [n for ns in owner.outputs.values() for n in ns]
    names = []
    if owner.type == "if" and k < len(results):
        names = [results[k]]
    elif owner.type == "while" and k >= 1:
        block = next(b for b in owner.blocks if b.idx == yield_op.block_idx)
        names = [n for n in (block.args[k - 1] if k - 1 < len(block.args) else None,
                             results[k - 1] if k - 1 < len(results) else None) if n]
    found = [program.find_value(n, yield_op.block_idx) or program.find_value(n, owner.block_idx) for n in names]
    return [v for v in found if v is not None]


# Greater(a, b) is written as Less(b, a), GreaterOrEqual(a, b) as LessOrEqual(b, a): the same
# values by the ONNX spec, but OpenVINO's CPU plugin computes Greater and GreaterOrEqual as
# "not less-or-equal" on AVX-512 (and SSE4.1) kernels, true where either side is NaN, while
# its Less and LessOrEqual are right on every instruction set (probed with oneDNN's
# ONEDNN_MAX_CPU_ISA caps; docs/runtimes.md). ONNX Runtime runs both forms alike.
_SWAPPED = {"Greater": "Less", "GreaterOrEqual": "LessOrEqual"}


class OpBuilder:
    """``ctx.op.Relu(x)``; ``ctx.op.Split(x, axis=0, _outputs=2)`` returns a tuple.

    Keyword arguments are ONNX attributes; ``None``-valued ones are left out. ``None``
    inputs stand for omitted optional inputs. ``Greater``/``GreaterOrEqual`` are emitted as
    ``Less``/``LessOrEqual`` with the operands swapped (``_SWAPPED``).
    """

    def __init__(self, ctx: OpContext):
        self._ctx = ctx

    def __getattr__(self, op_type: str):
        if op_type in _SWAPPED:
            swapped = _SWAPPED[op_type]

            def build_swapped(a: ir.Value, b: ir.Value) -> ir.Value:
                return self._ctx.emit(swapped, (b, a), {}, 1, "")

            build_swapped.__name__ = op_type
            return build_swapped

        def build(*inputs: ir.Value | None, _outputs: int = 1, _domain: str = "", **attrs: Any):
            return self._ctx.emit(op_type, inputs, attrs, _outputs, _domain)

        build.__name__ = op_type
        return build


class OpContext:
    def __init__(self, state: ConvertState, op: Op):
        self.state = state
        self.pd = op
        self.op = OpBuilder(self)
        self._nodes = 0

    # ------------------------------------------------------------------ basics
    @property
    def opset(self) -> int:
        return self.state.opset

    def fail(self, message: str, hint: str | None = None) -> ConversionError:
        """An error naming this op; ``raise ctx.fail(...)``. The exporter goes on with the
        other ops and reports every refusal at once."""
        return OpRefused(
            f"cannot convert {self.pd.site.op_type} ({self.pd.site}): {message}",
            file=self.state.program.model_file,
            hint=hint,
        )

    def malformed(self, message: str,
                  hint: str = "the program is malformed (corrupt or hand-edited); export the model again",
                  ) -> ModelFormatError:
        """A ModelFormatError naming this op, for a program the op cannot be read from (an
        absent operand, an attribute of the wrong kind): ``raise ctx.malformed(...)``."""
        site = self.pd.site
        return ModelFormatError(f"{site.op_type} ({site}): {message}", file=self.state.program.model_file, hint=hint)

    @property
    def paddle2_semantics(self) -> bool:
        """True when the file was written by Paddle 2.x (or an unversioned legacy writer).

        Paddle 3 changed some kernels (``round`` half to even, NaN in ``maximum``, boundary
        of ``hardshrink``, integer ``put_along_axis`` mean ...); the reference is always the
        Paddle that wrote the file.
        """
        program = self.state.program
        return program.format == "legacy" and program.version < 3_000_000

    def require_opset(self, opset: int, why: str) -> None:
        """Declare, while converting, that this op's arguments need ``opset`` or newer.

        Use it when the static ``min_opset`` rule cannot know (a runtime tensor argument, a
        dynamic dim): the exporter converts again at the higher opset (unless the user
        passed --no-auto-opset, in which case the user is told what to pass).
        """
        if self.opset < opset:
            raise OpsetTooLow(opset, self.pd.site, why)

    def attr(self, name: str, default: Any = None) -> Any:
        """Attribute ``name``, or ``default`` when the op has none. Text where the default is a
        number or a list, or a list where it is a number (a damaged attribute type), is a
        malformed program."""
        value = self.pd.attrs.get(name, default)
        if value is None:
            return default
        number = isinstance(default, (int, float)) and not isinstance(default, bool)
        if (isinstance(value, (str, bytes)) and (number or isinstance(default, (list, tuple)))) or (
            number and isinstance(value, (list, tuple, dict))
        ):
            raise self.malformed(
                f"attribute {name} is {str(value)[:40]!r}, expected "
                f"{'a list' if isinstance(default, (list, tuple)) else 'a number'}"
            )
        return value

    def has_input(self, slot: str) -> bool:
        return bool(self.pd.inputs.get(slot))

    def input_names(self, slot: str) -> list[str]:
        return list(self.pd.inputs.get(slot, []))

    def required_input_name(self, slot: str) -> str:
        """The Paddle name of input ``slot``, which the op cannot do without: a program that
        leaves it out (a null operand, an empty slot) is malformed, and the user is told so."""
        names = self.pd.inputs.get(slot) or []
        if not names:
            raise self.malformed(f"its input {slot} is absent (the program gives it no value)")
        return names[0]

    def input(self, slot: str, i: int = 0) -> ir.Value | None:
        """The ONNX value of input ``slot`` (element ``i`` of a list slot), None if absent."""
        names = self.pd.inputs.get(slot) or []
        if i >= len(names):
            return None
        return self.state.lookup(names[i], self.pd.block_idx)

    def inputs(self, slot: str) -> list[ir.Value]:
        return [self.state.lookup(n, self.pd.block_idx) for n in self.pd.inputs.get(slot, [])]

    def info(self, name: str) -> Value | None:
        return self.state.program.find_value(name, self.pd.block_idx)

    def input_info(self, slot: str, i: int = 0) -> Value:
        names = self.pd.inputs.get(slot) or []
        if i >= len(names):
            raise self.fail(f"input {slot!r} is missing")
        info = self.info(names[i])
        if info is None:
            raise self.fail(f"input {slot!r} ({names[i]}) is not declared in the program")
        return info

    def input_dtype(self, slot: str, i: int = 0) -> str:
        dtype = self.input_info(slot, i).dtype
        if dtype is None:
            raise self.fail(f"dtype of input {slot!r} is unknown")
        return dtype

    def input_shape(self, slot: str, i: int = 0) -> tuple[int, ...]:
        shape = self.input_info(slot, i).shape
        if shape is None:
            raise self.fail(f"rank of input {slot!r} is unknown")
        return shape

    def input_rank(self, slot: str, i: int = 0) -> int:
        return len(self.input_shape(slot, i))

    def output_info(self, slot: str, i: int = 0) -> Value:
        names = self.pd.outputs.get(slot) or []
        if i >= len(names):
            raise self.fail(f"output {slot!r} is missing")
        info = self.info(names[i])
        if info is None:
            raise self.fail(f"output {slot!r} ({names[i]}) is not declared in the program")
        return info

    def output_dtype(self, slot: str = "out", i: int = 0) -> str:
        dtype = self.output_info(slot, i).dtype
        if dtype is None:
            raise self.fail(f"dtype of output {slot!r} is unknown")
        return dtype

    def output_shape(self, slot: str = "out", i: int = 0) -> tuple[int, ...] | None:
        return self.output_info(slot, i).shape

    def has_output(self, slot: str) -> bool:
        return bool(self.pd.outputs.get(slot))

    def correct_declared(self, slot: str, dtype: str | None = None, rank: int | None = None) -> None:
        """Make Paddle's declared dtype and/or rank of output ``slot`` what the kernel writes,
        and so for the ops after it that pass their input's type on (``_TYPE_PRESERVING``: what
        jit.save puts between a result and its fetch), down to a model output. Paddle declares
        some outputs wrongly (e.g. 3.3 ``unique``'s ``out`` float32 for an int x with an axis,
        2.6 ``empty`` always ``[-1]``, ``generate_proposals``' count float32 or 0-D); later
        mappers and the graph outputs would otherwise see the wrong type."""
        if not self.has_output(slot):
            return
        program = self.state.program
        outputs = {out.name: out for out in program.outputs}

        def fix(info: Value, dtype: str | None) -> bool:
            changed = False
            if dtype is not None and info.dtype not in (None, dtype):
                info.dtype, changed = dtype, True
            if rank is not None and info.shape is not None and len(info.shape) != rank:
                info.shape, changed = (-1,) * rank, True
            return changed

        pending = [(self.output_info(slot), dtype)]
        carried = []  # values control flow carries whose declaration changed
        while pending:
            info, kind = pending.pop()
            if not fix(info, kind):
                continue
            if info.name in outputs:
                fix(outputs[info.name], kind)
            for op in program.walk_ops():
                if op.type == "yield" and info.name in op.inputs.get("x", []):
                    targets = _yield_targets(program, op, op.inputs["x"].index(info.name))
                    pending += [(t, kind) for t in targets]
                    carried += [t.name for t in targets]
                    continue
                if op.input("x") != info.name or not op.output("out"):
                    continue
                if op.type in _TYPE_PRESERVING:
                    passed = kind
                elif op.type == "cast" and rank is not None:
                    passed = None  # a cast keeps the shape: the rank passes on, not the dtype
                else:
                    continue
                nxt = program.find_value(op.output("out"), op.block_idx)
                if nxt is not None:
                    pending.append((nxt, passed))
                elif op.output("out") in outputs:
                    fix(outputs[op.output("out")], passed)
        if carried:
            raise DeclarationsCorrected(self.pd.site, carried)

    def output_count(self, slot: str) -> int:
        return len(self.pd.outputs.get(slot, []))

    def set_output(self, slot: str, value: ir.Value, i: int = 0) -> None:
        names = self.pd.outputs.get(slot) or []
        if i >= len(names):
            return  # the op does not expose this output (unused optional result)
        if value is None:  # passed through from an input the program leaves out
            raise self.malformed(
                f"no value for its output {slot}: an input it needs is absent "
                "(the program gives it no value)"
            )
        self.state.bind(names[i], value, fresh=self._is_fresh(value))

    def set_outputs(self, slot: str, values: Sequence[ir.Value]) -> None:
        for i, value in enumerate(values):
            self.set_output(slot, value, i)

    def _is_fresh(self, value: ir.Value) -> bool:
        return value in self.state.fresh

    # ------------------------------------------------------------------ constants
    def const_value(self, slot: str, i: int = 0) -> np.ndarray | None:
        """The value of input ``slot`` if it is known at conversion time."""
        names = self.pd.inputs.get(slot) or []
        if i >= len(names):
            return None
        return self.state.const_of(names[i], self.pd.block_idx)

    def const(self, value: Any, dtype: str | None = None, name: str | None = None) -> ir.Value:
        """An initializer holding ``value`` (numpy array or Python scalar/list), converted to
        ``dtype`` (when given) as the kernels convert (``c_cast``)."""
        arr = c_cast(value, dtypes.to_numpy(dtype)) if dtype else np.asarray(value)
        if dtype is None and arr.dtype == np.float64 and not isinstance(value, np.ndarray):
            arr = arr.astype(np.float32)
        return self.state.add_const(arr, name)

    def const_i64(self, values: Sequence[int] | int) -> ir.Value:
        return self.const(np.asarray(values, dtype=np.int64))

    def const_like(self, value: Any, dtype_of: str) -> ir.Value:
        """A constant in the dtype of input ``dtype_of`` (a slot name)."""
        return self.const(value, self.input_dtype(dtype_of))

    def int_array(self, slot: str, attr: str | None = None) -> list[int] | ir.Value | None:
        """An IntArray argument: a list when known at conversion time, else an int64 1-D value.

        Looks at input ``slot`` first (a 1-D tensor, or a list of scalar tensors), then at the
        attribute ``attr`` (default: same name).
        """
        names = self.pd.inputs.get(slot) or []
        if names:
            consts = [self.state.const_of(n, self.pd.block_idx) for n in names]
            if all(c is not None for c in consts):
                return [int(v) for c in consts for v in np.asarray(c).reshape(-1)]
            parts = []
            for name, c in zip(names, consts):
                if c is not None:
                    parts.append(self.const_i64(np.asarray(c).reshape(-1).astype(np.int64)))
                else:
                    v = self.state.lookup(name, self.pd.block_idx)
                    info = self.info(name)
                    if info is None or info.dtype != "int64":
                        v = self.op.Cast(v, to=ir.DataType.INT64)
                    parts.append(self.reshape(v, [-1]))
            return parts[0] if len(parts) == 1 else self.op.Concat(*parts, axis=0)
        value = self.pd.attrs.get(attr or slot)
        if value is None:
            return None
        if isinstance(value, (int, np.integer)):
            return [int(value)]
        return [int(v) for v in value]

    def scalar(self, slot: str, default: Any = None, attr: str | None = None) -> Any:
        """A Scalar argument: a Python number when known, else the runtime ONNX value."""
        names = self.pd.inputs.get(slot) or []
        if names:
            c = self.state.const_of(names[0], self.pd.block_idx)
            if c is not None:
                if np.size(c) != 1:  # Paddle's Scalar takes a tensor of one element
                    raise self.malformed(
                        f"its {slot} operand ({names[0]}) holds {np.size(c)} values "
                        f"(shape {list(np.shape(c))}), expected one (a scalar)"
                    )
                return np.asarray(c).reshape(-1)[0].item()
            return self.state.lookup(names[0], self.pd.block_idx)
        value = self.pd.attrs.get(attr or slot)
        if value is not None and not isinstance(value, (bool, int, float, complex, np.generic)):
            raise self.malformed(f"attribute {attr or slot} is {str(value)[:40]!r}, expected a number")
        return default if value is None else value

    # ------------------------------------------------------------------ emit
    def emit(
        self, op_type: str, inputs: Sequence[ir.Value | None], attrs: dict[str, Any], n_out: int, domain: str = ""
    ) -> Any:
        attributes = make_attrs(attrs)
        self._nodes += 1
        name = f"{self.pd.type}_{self.pd.block_idx}_{self.pd.index}/{op_type}_{self._nodes}"
        node = ir.Node(domain, op_type, list(inputs), attributes, num_outputs=n_out, name=name)
        for k, out in enumerate(node.outputs):
            out.name = self.state.unique_name(f"{name}:{k}")
            self.state.fresh.add(out)
        self.state.append_node(node)
        return node.outputs[0] if n_out == 1 else tuple(node.outputs)

    # ------------------------------------------------------------------ opset-aware helpers
    def cast(self, x: ir.Value, dtype: str, from_dtype: str | None = None) -> ir.Value:
        if from_dtype is not None and from_dtype == dtype:
            return x
        if "bfloat16" in (dtype, from_dtype):
            self.require_opset(13, "casts to or from bfloat16 (Cast has bfloat16 from opset 13)")
        return self.op.Cast(x, to=onnx_dtype(dtype))

    def unsqueeze(self, x: ir.Value, axes: Sequence[int]) -> ir.Value:
        if self.opset >= 13:
            return self.op.Unsqueeze(x, self.const_i64(list(axes)))
        return self.op.Unsqueeze(x, axes=list(axes))

    def squeeze(self, x: ir.Value, axes: Sequence[int] | None = None) -> ir.Value:
        if axes is None:
            return self.op.Squeeze(x)
        if self.opset >= 13:
            return self.op.Squeeze(x, self.const_i64(list(axes)))
        return self.op.Squeeze(x, axes=list(axes))

    def reshape(self, x: ir.Value, shape: Sequence[int] | ir.Value) -> ir.Value:
        target = shape if isinstance(shape, ir.Value) else self.const_i64(list(shape))
        return self.op.Reshape(x, target)

    def shape_of(self, x: ir.Value, start: int | None = None, end: int | None = None) -> ir.Value:
        """Shape(x)[start:end] as int64."""
        if start is None and end is None:
            return self.op.Shape(x)
        if self.opset >= 15:
            return self.op.Shape(x, start=start, end=end)
        return self.slice(self.op.Shape(x), [start or 0], [end if end is not None else 2**62], [0])

    def slice(
        self,
        x: ir.Value,
        starts: Sequence[int] | ir.Value,
        ends: Sequence[int] | ir.Value,
        axes: Sequence[int] | ir.Value,
        steps: Sequence[int] | ir.Value | None = None,
    ) -> ir.Value:
        consts = [v for v in (starts, ends, axes, steps) if v is not None]
        if self.opset < 10:
            if steps is not None and not (isinstance(steps, Sequence) and all(s == 1 for s in steps)):
                self.require_opset(10, "strided slicing")
            if any(isinstance(v, ir.Value) for v in consts):
                self.require_opset(10, "slicing with runtime bounds")
            return self.op.Slice(x, starts=list(starts), ends=list(ends), axes=list(axes))

        def as_value(v: Sequence[int] | ir.Value) -> ir.Value:
            return v if isinstance(v, ir.Value) else self.const_i64(list(v))

        args = [as_value(starts), as_value(ends), as_value(axes)]
        if steps is not None:
            args.append(as_value(steps))
        return self.op.Slice(x, *args)

    def reduce(
        self, op_type: str, x: ir.Value, axes: Sequence[int] | ir.Value | None, keepdims: bool
    ) -> ir.Value:
        """Reduce* with axes (None = all axes) in the form the opset wants."""
        input_axes = self.opset >= 18 or (op_type == "ReduceSum" and self.opset >= 13)
        kd = 1 if keepdims else 0
        if axes is None or (not isinstance(axes, ir.Value) and len(axes) == 0):
            return self.op.__getattr__(op_type)(x, keepdims=kd)
        if input_axes:
            a = axes if isinstance(axes, ir.Value) else self.const_i64(list(axes))
            return self.op.__getattr__(op_type)(x, a, keepdims=kd)
        if isinstance(axes, ir.Value):
            self.require_opset(13 if op_type == "ReduceSum" else 18, f"{op_type} with runtime axes")
        return self.op.__getattr__(op_type)(x, axes=list(axes), keepdims=kd)

    def split(self, x: ir.Value, sizes: Sequence[int], axis: int) -> list[ir.Value]:
        """Split into pieces of the given static sizes."""
        n = len(sizes)
        if n == 1:
            return [self.op.Identity(x)]
        if self.opset >= 13:
            outs = self.op.Split(x, self.const_i64(list(sizes)), axis=axis, _outputs=n)
        else:
            outs = self.op.Split(x, axis=axis, split=list(sizes), _outputs=n)
        return list(outs)

    def clip(self, x: ir.Value, lo: float | None, hi: float | None, dtype: str) -> ir.Value:
        """Clamp to constant bounds (None = unbounded), exactly, in the input's dtype."""
        if dtype not in FLOAT_DTYPES:
            # Clip has no integer kernels before 12, and ONNX Runtime's int64 Max/Min/Clip give
            # wrong answers for some values: compare and select instead (exact at any width).
            self.require_opset(9, "integer comparisons")
            out = x
            if lo is not None:
                c = self.const(lo, dtype)
                out = self.op.Where(self.op.Less(out, c), c, out)
            if hi is not None:
                c = self.const(hi, dtype)
                out = self.op.Where(self.op.Greater(out, c), c, out)
            return out
        if dtype == "float64" and not has_kernel("Clip", self.opset, {"T": "double"}):
            # ONNX Runtime has double Clip from opset 12 only (ort_kernels); Max/Min have double
            # from 8 and stay exact where the legalization pass would clip in float32
            self.require_opset(8, "float64 clamping (ONNX Runtime has no double Clip before 12, Max/Min before 8)")
            out = x
            if lo is not None:
                out = self.op.Max(out, self.const(lo, dtype))
            if hi is not None:
                out = self.op.Min(out, self.const(hi, dtype))
            return out
        if self.opset >= 11:
            lo_v = None if lo is None else self.const(lo, dtype)
            hi_v = None if hi is None else self.const(hi, dtype)
            return self.op.Clip(x, lo_v, hi_v)
        kwargs = {}
        if lo is not None:
            kwargs["min"] = float(lo)
        if hi is not None:
            kwargs["max"] = float(hi)
        return self.op.Clip(x, **kwargs)

    def float_kernel(self, op_type: str, x: ir.Value, dtype: str, **attrs: Any) -> ir.Value:
        """``op_type(x)`` (kept for mappers written before the legalization pass)."""
        return self.op.__getattr__(op_type)(x, **attrs)

    def in_float32(self, op_type: str, dtype: str, build: Any, *values: ir.Value) -> ir.Value:
        """``build(*values)``. Mappers emit nodes in the tensor's own dtype: where ONNX Runtime's
        CPU provider has no kernel for it (e.g. float64 Conv, Erf, Resize), the converter's
        legalization pass (``pd2onnx.convert.legalize``, run on the whole graph after the
        mappers) computes the node in float32 and casts the result back. Kept so that existing
        mappers need no change; new mappers need not call it."""
        return build(*values)

    def normalize_axis(self, axis: int, rank: int) -> int:
        if not -rank <= axis < max(rank, 1):
            raise self.fail(f"axis {axis} is out of range for rank {rank}")
        return axis + rank if axis < 0 else axis
