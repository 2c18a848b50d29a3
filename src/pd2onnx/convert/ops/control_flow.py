"""Control flow and tensor arrays -> ONNX If / Loop and sequences.

Both formats are handled by one idea: a sub-block is converted into an ONNX subgraph by
the same mapper machinery, and every variable the sub-block assigns that lives outside it
becomes an output of the If (or a loop-carried value of the Loop). That covers

- PIR ``if`` (two regions ending in ``yield``) and ``while`` (block arguments, ``yield``
  with the new condition first), whose tensor arrays are written in place;
- legacy ``conditional_block`` (the branch writes its results into variables of the
  parent block by name; ``select_input`` picks between the branches afterwards) and
  ``while`` (the body assigns the loop variables, the condition included, by name).

Values the sub-block only reads stay outer-scope references. A variable assigned in a
branch that had no value before gets a placeholder in the other branch (an empty tensor
of its dtype, or an empty sequence): Paddle never reads it on that path.

Tensor arrays become ONNX sequences. Sequences may cross an If/Loop boundary only from
opset 13 (If-11/Loop-11 carry tensors only); the mappers ask for it when that happens.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.casting import c_cast
from pd2onnx.convert.context import OpContext, onnx_dtype
from pd2onnx.convert.operands import malformed
from pd2onnx.convert.registry import mapper
from pd2onnx.convert.state import seq_dtype
from pd2onnx.errors import ConversionError
from pd2onnx.paddle import dtypes
from pd2onnx.paddle.program import Block, Op, Program, Value

CONTROL_FLOW_OPSET = 11
SEQUENCE_THROUGH_CF_OPSET = 13

# Ops that change one of their operands in place (PIR arrays) besides producing outputs.
_MUTATES = {"array_write": "array", "array_pop": "array"}
_CARRIED_KINDS = ("dense_tensor", "tensor_array")


# ------------------------------------------------------------------------------ analysis
def outer_writes(program: Program, block: Block) -> list[str]:
    """Variables declared outside ``block`` that its ops (or nested blocks) assign, in order.

    Only tensors and tensor arrays count (legacy ``Scope``/``StepScopes`` are not values).
    A name declared nowhere is a malformed program: the error names the op, block and name.
    """
    found: dict[str, None] = {}
    for op in block.ops:
        names = [n for ns in op.outputs.values() for n in ns]
        slot = _MUTATES.get(op.type)
        if slot:
            names += op.inputs.get(slot, []) or op.outputs.get("out", [])
        else:  # PIR op_ storing into a value (e.g. increment_ of a loop counter)
            names += [t for t, _ in op.inplace_pairs()]
        for sub in op.blocks:
            names += outer_writes(program, sub)
        for name in names:
            if name in block.values or name in found:
                continue
            info = program.find_value(name, block.parent_idx) if block.parent_idx >= 0 else None
            if info is None:
                raise ConversionError(
                    f"{op.legacy_type or op.type} ({op.site}) writes variable {name!r}, which neither "
                    f"block {block.idx} nor any enclosing block declares",
                    file=program.model_file,
                    hint="the program is malformed (a sub-block may only assign variables its parents declare); "
                    "export the model again",
                )
            if info.kind in _CARRIED_KINDS and info.dtype is not None:
                found[name] = None
    return list(found)


def _declared_outputs(ctx: OpContext) -> list[str]:
    """The tensors a legacy control-flow op lists in ``Out`` (what it may assign)."""
    program = ctx.state.program
    names = []
    for name in ctx.pd.outputs.get("Out", []):
        info = program.find_value(name, ctx.pd.block_idx)
        if info is not None and info.kind in _CARRIED_KINDS and info.dtype is not None:
            names.append(name)
    return names


def _reads(program: Program, name: str) -> bool:
    """Whether any op anywhere reads ``name``."""
    return any(name in ns for op in program.walk_ops() for ns in op.inputs.values())


def _merge(*lists: list[str]) -> list[str]:
    return list(dict.fromkeys(n for names in lists for n in names))


# ------------------------------------------------------------------------------ helpers
def value_type(info: Value) -> ir.TypeProtocol:
    if info.kind == "tensor_array":
        return ir.SequenceType(ir.TensorType(onnx_dtype(seq_dtype(info.dtype))))
    return ir.TensorType(onnx_dtype(info.dtype))


def _view(ctx: OpContext, info: Value) -> Value:
    """How a Paddle value travels in ONNX: a tensor array that is a tensor (``convert/arrays.py``)
    as a tensor of its storage dtype (``seq_dtype``) and rank one more than its elements."""
    if info.kind != "tensor_array" or not ctx.state.array_plan().as_tensor(info.name):
        return info
    shape = ctx.state.array_plan().element_shape(info.name)
    return Value(info.name, seq_dtype(info.dtype), None if shape is None else (-1, *shape))


def _info(ctx: OpContext, name: str, block_idx: int) -> Value:
    info = ctx.state.program.find_value(name, block_idx)
    if info is None or info.dtype is None:
        raise ctx.fail(f"variable {name!r} has no declared dtype")
    return info


def _need_sequence_opset(ctx: OpContext, infos: list[Value], what: str) -> None:
    """Raise the opset for what an If/Loop carries: sequences (13), bfloat16 tensors (16:
    If/Loop before 16 carry no bfloat16; bfloat16 arrays hold float32, ``seq_dtype``)."""
    halves = [i.name for i in infos if i.kind != "tensor_array" and i.dtype == "bfloat16"]
    if halves:
        ctx.require_opset(16, f"bfloat16 {halves[0]!r} passes through {what} (ONNX If/Loop carry bfloat16 from opset 16)")
    arrays = [i.name for i in infos if i.kind == "tensor_array"]
    if arrays:
        ctx.require_opset(
            SEQUENCE_THROUGH_CF_OPSET,
            f"tensor array {arrays[0]!r} passes through {what} (ONNX If/Loop carry sequences from opset 13)",
        )


def placeholder(ctx: OpContext, info: Value) -> ir.Value:
    """A value for a variable that has none yet on this path (never read by Paddle there)."""
    if info.kind == "tensor_array":
        return ctx.state.empty_array(info.name, info.dtype)
    return ctx.state.empty_tensor(info.dtype, [0] * (1 if info.shape is None else len(info.shape)), info.name)


def _current(ctx: OpContext, name: str, info: Value) -> ir.Value:
    """The value of ``name`` now, or a placeholder when it has none."""
    state = ctx.state
    if info.kind == "tensor_array":
        return state.lookup(name, ctx.pd.block_idx)
    if name in state.env or name in state.params_env or name in state.program.params:
        return state.lookup(name, ctx.pd.block_idx)
    value = placeholder(ctx, info)
    state.env[name] = value
    return value


# Paddle 2.x dy2static gives a variable that a branch leaves unassigned this marker value
# (``RETURN_NO_VALUE_MAGIC_NUM``, an ``assign_value`` of one float element); Paddle never
# reads it on that path.
_NO_VALUE = np.float32(1.77113e27)
_VALUE_ATTRS = ("values", "fp32_values", "fp64_values")


def _writes_no_value(op: Op) -> bool:
    if op.type != "assign_value":
        return False
    values = next((op.attrs[k] for k in _VALUE_ATTRS if op.attrs.get(k)), None)
    return bool(values) and all(np.float32(v) == _NO_VALUE for v in values)


def _is_no_value(value: ir.Value) -> bool:
    """Whether ``value`` is a constant holding only the "no value" marker."""
    if value.const_value is None:
        return False
    data = value.const_value.numpy()
    return data.dtype.kind == "f" and data.size > 0 and bool(np.all(data.astype(np.float32) == _NO_VALUE))


def _no_value_vars(ctx: OpContext) -> frozenset[str]:
    """The legacy variables that hold nothing but the "no value" marker (no other op writes
    them); found once per conversion, when the select_input types are settled too."""
    state = ctx.state
    if state.no_value is None:
        marked: set[str] = set()
        other: set[str] = set()
        for op in state.program.walk_ops():
            names = [n for ns in op.outputs.values() for n in ns] + [t for t, _ in op.inplace_pairs()]
            (marked if _writes_no_value(op) else other).update(names)
        state.no_value = frozenset(marked - other)
        _settle_select_inputs(ctx, state.no_value)
    return state.no_value


def _settle_select_inputs(ctx: OpContext, no_value: frozenset[str]) -> None:
    """Paddle 2.x declares a ``select_input`` result with its second input's type (the true
    branch), which is the "no value" marker's (float32 [1]) when only the false branch
    assigns the variable (e.g. the indices of a ``topk`` in one branch, RetinaNet's head).
    The marker is never read, so the value really has the type of the branches that assign
    it: declare that type (and rank) for the result and the variables it is assigned to, so
    that the loops carrying them (converted before their bodies) agree with it."""
    program = ctx.state.program
    for op in program.walk_ops():
        if op.type != "select_input" or not op.outputs.get("Out"):
            continue
        real = [program.find_value(n, op.block_idx) for n in op.inputs.get("X", []) if n not in no_value]
        real = [i for i in real if i is not None and i.dtype is not None and i.kind == "dense_tensor"]
        if not real or len(real) == len(op.inputs.get("X", [])):
            continue
        kinds = {i.dtype for i in real}
        ranks = {None if i.shape is None else len(i.shape) for i in real}
        OpContext(ctx.state, op).correct_declared(
            "Out", dtype=kinds.pop() if len(kinds) == 1 else None,
            rank=ranks.pop() if len(ranks) == 1 else None)


def _fit(ctx: OpContext, value: ir.Value, info: Value) -> ir.Value:
    """``value`` in the declared type of a value crossing an If/Loop boundary: an ONNX value
    typed otherwise is cast (a "no value" marker becomes a placeholder instead)."""
    if info.kind == "tensor_array" or info.dtype is None or not isinstance(value.type, ir.TensorType):
        return value
    if value.type.dtype == onnx_dtype(info.dtype):
        return value
    if _is_no_value(value):
        return placeholder(ctx, info)
    return ctx.op.Cast(value, to=onnx_dtype(info.dtype))


def _copy(ctx: OpContext, value: ir.Value, info: Value) -> ir.Value:
    """A node-made copy (a subgraph output must be made inside the subgraph)."""
    if info.kind == "tensor_array" and ctx.opset < 14:  # Identity takes sequences from 14
        empty = ctx.const(np.zeros((0,), dtype=dtypes.to_numpy(seq_dtype(info.dtype))))
        return ctx.op.SequenceErase(ctx.op.SequenceInsert(value, empty))
    return ctx.op.Identity(value)


def _finish_graph(ctx: OpContext, graph: ir.Graph, values: list[ir.Value], infos: list[Value]) -> None:
    """Make ``values`` the outputs of ``graph``, copying those it does not produce itself."""
    for value, info in zip(values, infos):
        value = _fit(ctx, value, info)
        producer = value.producer()
        if producer is None or producer.graph is not graph or value in graph.outputs:
            value = _copy(ctx, value, info)
        value.type = value_type(info)
        graph.outputs.append(value)


def _bind(ctx: OpContext, name: str, value: ir.Value, info: Value) -> None:
    value.type = value_type(_view(ctx, info))
    ctx.state.bind(name, value, fresh=value in ctx.state.fresh)


def _subgraph(
    ctx: OpContext,
    label: str,
    block: Block | None,
    inputs: list[tuple[str | None, ir.TypeProtocol, str]],
    outputs: Callable[[list[ir.Value]], list[ir.Value]],
    out_infos: list[Value],
    filled: frozenset[str] = frozenset(),
) -> ir.Graph:
    """Convert ``block`` (None: no ops) into a subgraph.

    ``inputs``: (Paddle name bound to it or None, type, readable name) per graph input;
    ``outputs(graph_inputs)`` returns the values to output after the ops ran; ``filled``:
    the inputs that are arrays holding an element whenever the subgraph runs.
    """
    state = ctx.state
    where = f"{ctx.pd.type}_{ctx.pd.block_idx}_{ctx.pd.index}"
    with state.subgraph(f"{where}/{label}") as graph:
        graph_inputs = []
        for pd_name, typ, readable in inputs:
            scalar = pd_name is None and readable in ("iter", "cond")  # Loop's own inputs
            value = ir.Value(name=state.unique_name(f"{where}/{label}/{readable}"), type=typ,
                             shape=ir.Shape([]) if scalar else _array_rank(ctx, pd_name))
            graph.inputs.append(value)
            graph_inputs.append(value)
            if pd_name is not None:
                state.env[pd_name] = value
            if pd_name in filled:
                state.filled.add(value)
        if block is not None:
            state.convert_block(state, block.ops)
        _finish_graph(ctx, graph, outputs(graph_inputs), out_infos)
    return graph


def _array_rank(ctx: OpContext, name: str | None) -> ir.Shape | None:
    """The rank of a tensor array that is a tensor (one more than its elements'), as a shape
    of unknown dims; None for anything else (runtimes that need ranks, such as OpenVINO,
    then cannot infer the rank of what is read from a loop-carried array)."""
    plan = ctx.state.array_plan()
    if name is None or not plan.as_tensor(name):
        return None
    return ir.Shape([None] * (len(plan.element_shape(name) or ()) + 1))


def _yield_names(block: Block) -> list[str]:
    last = block.ops[-1] if block.ops else None
    if last is None or last.type != "yield":
        return []
    return list(last.inputs.get("x", []))


def _condition(ctx: OpContext, name: str, scalar: bool = True) -> ir.Value:
    """A Paddle condition (bool, one element) as an ONNX value."""
    info = _info(ctx, name, ctx.pd.block_idx)
    value = ctx.state.lookup(name, ctx.pd.block_idx)
    if not scalar:
        return value
    numel = None if info.shape is None or any(d < 0 for d in info.shape) else int(np.prod(info.shape))
    if info.dtype != "bool" or (numel is not None and numel != 1):
        raise ctx.fail(
            f"the condition {name!r} must be a boolean scalar, but it is {info.describe()}",
            hint="Paddle itself requires a bool tensor of one element here; the program is malformed",
        )
    return value


def _scalar_bool(ctx: OpContext, value: ir.Value) -> ir.Value:
    return ctx.reshape(value, [])


# ------------------------------------------------------------------------------ If
def _emit_if(
    ctx: OpContext,
    cond: ir.Value,
    branches: list[tuple[Block | None, list[str]]],
    writes: list[str],
    infos: list[Value],
) -> list[ir.Value]:
    """ONNX If: each branch is (block or None, names it yields); ``writes`` are the outer
    variables either branch assigns, output after the yields. Returns the If's outputs."""
    state = ctx.state
    for name, info in zip(writes, infos[len(infos) - len(writes):]):
        _current(ctx, name, info)  # so a branch that does not assign it passes the old value on
    infos = [_view(ctx, i) for i in infos]
    _need_sequence_opset(ctx, infos, f"{ctx.pd.type} ({ctx.pd.site})")
    graphs = []
    for label, (block, yields) in zip(("then", "else"), branches):
        def outs(_inputs: list[ir.Value], yields: list[str] = yields, block: Block | None = block) -> list[ir.Value]:
            idx = block.idx if block is not None else ctx.pd.block_idx
            return [state.lookup(n, idx) for n in yields] + [state.lookup(n, idx) for n in writes]

        graphs.append(_subgraph(ctx, label, block, [], outs, infos))
    results = ctx.op.If(_scalar_bool(ctx, cond), then_branch=graphs[0], else_branch=graphs[1], _outputs=len(infos))
    return list(results) if len(infos) > 1 else [results]


def _select(ctx: OpContext, cond: ir.Value, then_v: ir.Value, else_v: ir.Value, info: Value) -> ir.Value:
    """cond ? then_v : else_v for values that may differ in shape (or be sequences)."""
    info = _view(ctx, info)
    _need_sequence_opset(ctx, [info], f"{ctx.pd.type} ({ctx.pd.site})")
    then_g = _subgraph(ctx, "then", None, [], lambda _: [then_v], [info])
    else_g = _subgraph(ctx, "else", None, [], lambda _: [else_v], [info])
    return ctx.op.If(_scalar_bool(ctx, cond), then_branch=then_g, else_branch=else_g)


def _if_opset(op: Op) -> int:
    """11 (If); 13 when a tensor array that is an ONNX sequence crosses the boundary, 16 when a bfloat16 tensor does (found while converting)"""
    return CONTROL_FLOW_OPSET


@mapper("if", min_opset=_if_opset)
def pir_if(ctx: OpContext) -> None:
    """PIR ``if``: two regions ending in ``yield``; results = the yielded values."""
    op = ctx.pd
    if len(op.blocks) != 2:
        raise ctx.fail(f"expected a true and a false region, found {len(op.blocks)} block(s)")
    operands = [n for ns in op.inputs.values() for n in ns]
    if not operands:
        raise malformed(ctx, "it has no operand (the condition)")
    cond = _condition(ctx, operands[0])
    program = ctx.state.program
    out_names = [n for ns in op.outputs.values() for n in ns]
    yields = [_yield_names(b) for b in op.blocks]
    for b, y in zip(op.blocks, yields):
        if len(y) != len(out_names):
            raise ctx.fail(f"block {b.idx} yields {len(y)} values for {len(out_names)} results")
    writes = _merge(*(outer_writes(program, b) for b in op.blocks))
    infos = [_info(ctx, n, op.block_idx) for n in out_names + writes]
    if not infos:
        return
    results = _emit_if(ctx, cond, list(zip(op.blocks, yields)), writes, infos)
    for name, value, info in zip(out_names + writes, results, infos):
        _bind(ctx, name, value, info)


@mapper("conditional_block", min_opset=_if_opset)
def conditional_block(ctx: OpContext) -> None:
    """Legacy ``conditional_block``: runs its block when ``Cond`` holds; the variables it
    assigns keep their old value otherwise. ``is_scalar_condition`` false (old ``IfElse``):
    runs when every ``Cond`` tensor is non-empty."""
    op = ctx.pd
    if len(op.blocks) != 1:
        raise ctx.fail(f"expected one sub-block, found {len(op.blocks)}")
    block = op.blocks[0]
    conds = ctx.input_names("Cond")
    if not conds:
        raise ctx.fail("no Cond input")
    _no_value_vars(ctx)  # settles the types of the select_inputs after it first
    if ctx.attr("is_scalar_condition", False):
        cond = _condition(ctx, conds[0])
    else:
        parts = [ctx.op.Greater(ctx.op.Size(ctx.state.lookup(n, op.block_idx)), ctx.const_i64(0)) for n in conds]
        cond = parts[0]
        for p in parts[1:]:
            cond = ctx.op.And(cond, p)
    program = ctx.state.program
    writes = _merge(outer_writes(program, block), _declared_outputs(ctx))
    infos = [_info(ctx, n, op.block_idx) for n in writes]
    if not writes:
        return
    results = _emit_if(ctx, cond, [(block, []), (None, [])], writes, infos)
    for name, value, info in zip(writes, results, infos):
        _bind(ctx, name, value, info)


@mapper("select_input", min_opset=CONTROL_FLOW_OPSET)
def select_input(ctx: OpContext) -> None:
    """Legacy ``select_input``: Out = X[Mask] (the branch results of a ``cond``).

    At run time Out is the value of the branch that ran, whatever its type; the ONNX ``If``
    needs one type, Out's declared one (settled by ``_settle_select_inputs``): a branch
    value of another declared dtype is cast to it, and dy2static's "no value" marker (a
    variable one branch never assigns) becomes an empty tensor of that type and rank."""
    names = ctx.input_names("X")
    no_value = _no_value_vars(ctx)
    info = ctx.output_info("Out")
    if info.dtype is None:
        raise ctx.fail("the output has no declared dtype")
    mask = ctx.op.Cast(ctx.input("Mask"), to=ir.DataType.INT64)
    values = []
    for name in names:
        if name in no_value and info.kind != "tensor_array":
            values.append(placeholder(ctx, info))
            continue
        source = _info(ctx, name, ctx.pd.block_idx)
        value = _current(ctx, name, source)
        if source.kind != "tensor_array" and info.kind != "tensor_array":
            value = ctx.cast(value, info.dtype, source.dtype)
        values.append(value)
    result = values[-1]
    for k in range(len(values) - 2, -1, -1):
        result = _select(ctx, ctx.op.Equal(mask, ctx.const_i64(k)), values[k], result, info)
    if len(values) == 1:
        result = ctx.op.Identity(result)
    _bind(ctx, ctx.pd.outputs["Out"][0], result, info)


@mapper("select_output", min_opset=CONTROL_FLOW_OPSET)
def select_output(ctx: OpContext) -> None:
    """Legacy ``select_output``: Out[Mask] = X; the other outputs keep their values."""
    x = ctx.input("X")
    mask = ctx.op.Cast(ctx.input("Mask"), to=ir.DataType.INT64)
    for k, name in enumerate(ctx.pd.outputs.get("Out", [])):
        info = _info(ctx, name, ctx.pd.block_idx)
        old = _current(ctx, name, info)
        _bind(ctx, name, _select(ctx, ctx.op.Equal(mask, ctx.const_i64(k)), x, old, info), info)


# ------------------------------------------------------------------------------ Loop
def _emit_loop(
    ctx: OpContext,
    block: Block,
    cond: ir.Value,
    body_names: list[str],
    inits: list[ir.Value],
    infos: list[Value],
    finish: Callable[[], tuple[str, list[str]]],
    scans: list[tuple[str, str]] = (),
) -> tuple[list[ir.Value], list[ir.Value]]:
    """ONNX Loop without a trip count, running while ``cond``; ``body_names`` are bound to
    the carried values inside the body; ``finish()`` names the new condition and the new
    carried values after the body ran. ``scans``: (array, dtype) appended once per
    iteration, which become scan outputs. Returns (final carried values, scan outputs)."""
    state = ctx.state
    infos = [_view(ctx, i) for i in infos]
    scan_infos = [Value(name, dtype, None) for name, dtype in scans]
    _need_sequence_opset(ctx, list(infos) + scan_infos, f"{ctx.pd.type} ({ctx.pd.site})")
    inputs: list[tuple[str | None, ir.TypeProtocol, str]] = [
        (None, ir.TensorType(ir.DataType.INT64), "iter"),
        (None, ir.TensorType(ir.DataType.BOOL), "cond"),
    ]
    inputs += [(n, value_type(i), n) for n, i in zip(body_names, infos)]
    bool_info = Value("cond", "bool", ())

    def outs(_inputs: list[ir.Value]) -> list[ir.Value]:
        cond_name, new_names = finish()
        new_cond = _scalar_bool(ctx, state.lookup(cond_name, block.idx))
        elements = []
        for name, _ in scans:
            element = state.scan_arrays.get(name)
            if element is None:
                raise ctx.fail(f"the loop body was expected to append to array {name!r} and did not")
            elements.append(element)
        return [new_cond] + [state.lookup(n, block.idx) for n in new_names] + elements

    saved = dict(state.scan_arrays)
    state.scan_arrays.update({name: None for name, _ in scans})
    try:
        filled = frozenset(n for n, v in zip(body_names, inits)
                           if (state.array_lengths.get(v, 0) > 0 or v in state.filled) and not _shrinks(state.program, block, n))
        body = _subgraph(ctx, "body", block, inputs, outs, [bool_info] + infos + scan_infos, filled)
    finally:
        state.scan_arrays = saved
    n_out = len(inits) + len(scans)
    inits = [_fit(ctx, v, i) for v, i in zip(inits, infos)]
    results = ctx.op.Loop(None, _scalar_bool(ctx, cond), *inits, body=body, _outputs=n_out)
    results = list(results) if n_out > 1 else [results]
    return results[: len(inits)], results[len(inits):]


def _shrinks(program: Program, block: Block, name: str) -> bool:
    """Whether an op in ``block`` (or nested in it) may leave array ``name`` with fewer
    elements: pops it, or assigns it anything but a written array."""
    for op in program.walk_ops(block):
        if op.type == "array_pop" and name in op.inputs.get("array", []):
            return True
        if op.type != "array_write" and any(name in ns for ns in op.outputs.values()):
            return True
    return False


def _bind_scans(ctx: OpContext, block: Block, scans: list[tuple[str, str]], stacked: list[ir.Value]) -> None:
    """After the loop, each appended array is its stacked scan output: as such when the array
    is a tensor, else split into a sequence again."""
    for (name, dtype), value in zip(scans, stacked):
        value.type = ir.TensorType(onnx_dtype(dtype))
        value = ctx.cast(value, seq_dtype(dtype), dtype)
        if not _as_tensor(ctx, name):
            value = ctx.op.SplitToSequence(value, axis=0, keepdims=0)
        _set_array(ctx, [name], value, dtype, None)


def _readers(program: Program, name: str) -> list[Op]:
    return [op for op in program.walk_ops() if any(name in ns for ns in op.inputs.values())]


def _touches(op: Op, name: str) -> bool:
    return any(name in ns for ns in op.inputs.values()) or any(name in ns for ns in op.outputs.values())


def _static_number(ctx: OpContext, block: Block, name: str) -> float | None:
    """The value of a one-element constant (an initializer, or a ``full`` in ``block``)."""
    const = ctx.state.const_of(name, block.idx)
    if const is not None:
        arr = np.asarray(const).reshape(-1)
        return float(arr[0]) if arr.size == 1 else None
    for op in block.ops:
        if op.type == "full" and name in op.outputs.get("out", []) and not op.inputs.get("value"):
            value = op.attrs.get("value")
            return float(value) if isinstance(value, (int, float)) else None
    return None


def _plus_one(ctx: OpContext, block: Block, op: Op, src: str) -> bool:
    """Whether ``op`` computes ``src + 1``."""
    if op.type == "scale" and op.inputs.get("x") == [src]:
        scale = op.inputs.get("scale")
        factor = _static_number(ctx, block, scale[0]) if scale else op.attrs.get("scale", 1.0)
        return factor == 1.0 and float(op.attrs.get("bias", 0.0)) == 1.0
    if op.type == "increment" and op.inputs.get("x") == [src]:
        return float(op.attrs.get("value", 1.0)) == 1.0
    if op.type == "add":
        x, y = (op.inputs.get("x") or [None])[0], (op.inputs.get("y") or [None])[0]
        other = y if x == src else x if y == src else None
        return other is not None and _static_number(ctx, block, other) == 1.0
    return False


def _producer(block: Block, name: str, before: int | None = None) -> tuple[int, Op] | None:
    found = None
    for k, op in enumerate(block.ops[:before]):
        if any(name in ns for ns in op.outputs.values()):
            found = (k, op)
    return found


def _appended_arrays(ctx: OpContext, block: Block, candidates: list[str],
                     is_counter: Callable[[str, int], bool]) -> list[tuple[str, str]]:
    """The arrays among ``candidates`` that the loop only appends to: empty when the loop
    starts, one ``array_write`` per iteration at the body's top level whose index is the
    iteration number, nothing else in the loop touching them, and after the loop only
    stacked (``array_to_tensor`` with ``use_stack``) or measured (``array_length``).
    Those become scan outputs (no sequence crosses the Loop, so opset 11 suffices)."""
    state = ctx.state
    program = state.program
    inside = {id(op) for op in program.walk_ops(block)}
    found = []
    for name in candidates:
        info = program.find_value(name, ctx.pd.block_idx)
        if info is None or info.kind != "tensor_array":
            continue
        if state.array_lengths.get(_current(ctx, name, info)) != 0:
            continue
        touching = [op for op in program.walk_ops(block) if _touches(op, name)]
        writes = [op for op in touching if op.type == "array_write"]
        if len(writes) != 1 or writes[0] not in block.ops:
            continue
        write = writes[0]
        pos = block.ops.index(write)
        index = (write.inputs.get("i") or [None])[0]
        x = (write.inputs.get("x") or [None])[0]
        x_info = program.find_value(x, block.idx) if x else None
        if index is None or x_info is None or x_info.dtype != info.dtype:
            continue
        # ``arr[len(arr)] = x`` (a Python list append) is an append too; the length must
        # feed nothing but the write (in a scan it is not the array's length)
        lengths = [op for op in touching if op.type == "array_length"]
        if len(touching) != 1 + len(lengths) or any(
            op not in block.ops[:pos] or _readers(program, op.outputs["out"][0]) != [write] for op in lengths
        ):
            continue
        appends = any(index in op.outputs["out"] for op in lengths)
        if not appends and not is_counter(index, pos):
            continue
        state.append_ops.add(id(write))  # a plain append if it stays in the loop
        ok = True
        for op in [] if _as_tensor(ctx, name) else program.walk_ops():  # a tensor: anything may follow
            if id(op) in inside or op is ctx.pd or op.blocks or not _touches(op, name):
                continue
            stack = op.type == "array_to_tensor" and op.attrs.get("use_stack")
            if op.type == "create_array" or stack or op.type == "array_length":
                continue
            ok = False
        if ok:
            found.append((name, info.dtype))
    return found


def _legacy_while(ctx: OpContext) -> None:
    op = ctx.pd
    block = op.blocks[0]
    program = ctx.state.program
    cond_name = ctx.input_names("Condition")[0]
    _condition(ctx, cond_name)
    _no_value_vars(ctx)  # settles the types of the select_inputs in the body first
    carried = _merge([cond_name], outer_writes(program, block), _declared_outputs(ctx))

    def is_counter(index: str, pos: int) -> bool:
        """A loop variable starting at 0, reassigned once after the write to its value + 1."""
        init = ctx.state.const_of(index, op.block_idx)
        if index not in carried or init is None or np.asarray(init).reshape(-1).tolist() != [0]:
            return False
        writers = [o for o in program.walk_ops(block) if any(index in ns for ns in o.outputs.values())]
        if len(writers) != 1 or writers[0] not in block.ops:
            return False
        at = block.ops.index(writers[0])
        if at <= pos:
            return False
        step = writers[0]
        if step.type == "assign":
            src = step.inputs.get("x", [None])[0]
            made = _producer(block, src, at) if src else None
            if made is None:
                return False
            step = made[1]
        return _plus_one(ctx, block, step, index)

    scans = _appended_arrays(ctx, block, [n for n in carried if n != cond_name], is_counter)
    carried = [n for n in carried if n not in {s for s, _ in scans}]
    infos = [_info(ctx, n, op.block_idx) for n in carried]
    inits = [_current(ctx, n, i) for n, i in zip(carried, infos)]
    cond = ctx.state.lookup(cond_name, op.block_idx)
    results, stacked = _emit_loop(ctx, block, cond, carried, inits, infos, lambda: (cond_name, carried), scans)
    for name, value, info in zip(carried, results, infos):
        _bind(ctx, name, value, info)
    _bind_scans(ctx, block, scans, stacked)


def _pir_while(ctx: OpContext) -> None:
    op = ctx.pd
    block = op.blocks[0]
    program = ctx.state.program
    operands = [n for ns in op.inputs.values() for n in ns]
    if not operands:
        raise malformed(ctx, "it has no operands (the condition first, then the carried values)")
    cond_name, init_names = operands[0], operands[1:]
    _condition(ctx, cond_name)
    out_names = [n for ns in op.outputs.values() for n in ns]
    yields = _yield_names(block)
    if len(block.args) != len(init_names) or len(yields) != len(init_names) + 1:
        raise ctx.fail(
            f"{len(init_names)} carried values, {len(block.args)} block arguments and {len(yields)} yielded "
            "values (the new condition first) do not match"
        )

    def is_counter(index: str, pos: int) -> bool:
        """A block argument starting at 0 whose next value is itself + 1."""
        if index not in block.args:
            return False
        j = block.args.index(index)
        init = ctx.state.const_of(init_names[j], op.block_idx)
        if init is None or np.asarray(init).reshape(-1).tolist() != [0]:
            return False
        made = _producer(block, yields[j + 1])
        return made is not None and _plus_one(ctx, block, made[1], index)

    writes = outer_writes(program, block)
    scans = _appended_arrays(ctx, block, writes, is_counter)
    writes = [n for n in writes if n not in {s for s, _ in scans}]
    infos = [_info(ctx, n, block.idx) for n in block.args] + [_info(ctx, n, op.block_idx) for n in writes]
    inits = [ctx.state.lookup(n, op.block_idx) for n in init_names]
    inits += [_current(ctx, n, i) for n, i in zip(writes, infos[len(init_names):])]
    cond = ctx.state.lookup(cond_name, op.block_idx)
    results, stacked = _emit_loop(ctx, block, cond, list(block.args) + writes, inits, infos,
                                  lambda: (yields[0], yields[1:] + writes), scans)
    for name, value in zip(out_names, results):
        _bind(ctx, name, value, _info(ctx, name, op.block_idx))
    for name, value, info in zip(writes, results[len(init_names):], infos[len(init_names):]):
        _bind(ctx, name, value, info)
    _bind_scans(ctx, block, scans, stacked)


def _while_opset(op: Op) -> int:
    """11 (Loop); 13 when a tensor array that is an ONNX sequence is carried, 16 when a bfloat16 tensor is (found while converting)"""
    return CONTROL_FLOW_OPSET


@mapper("while", min_opset=_while_opset)
def while_loop(ctx: OpContext) -> None:
    """PIR ``while`` (carried values as block arguments, ``yield`` = new condition + values)
    and legacy ``while`` (the body assigns the loop variables and the condition by name)."""
    if len(ctx.pd.blocks) != 1:
        raise ctx.fail(f"expected one body block, found {len(ctx.pd.blocks)}")
    if "Condition" in ctx.pd.inputs:
        _legacy_while(ctx)
    else:
        _pir_while(ctx)


# ------------------------------------------------------------------------------ arrays
def _index(ctx: OpContext, slot: str) -> tuple[ir.Value, int | None]:
    """An array index as an int64 scalar, and its value when known."""
    const = ctx.const_value(slot)
    if const is not None:
        k = int(np.asarray(const).reshape(-1)[0])
        return ctx.const(np.asarray(k, dtype=np.int64)), k
    value = ctx.input(slot)
    if ctx.input_dtype(slot) != "int64":
        value = ctx.op.Cast(value, to=ir.DataType.INT64)
    return ctx.reshape(value, []), None


def _array_name(ctx: OpContext, slot: str) -> str:
    names = ctx.input_names(slot) or ctx.pd.outputs.get("out", [])
    if not names:
        raise ctx.fail(f"no array given ({slot!r})")
    return names[0]


def _set_array(ctx: OpContext, names: list[str], value: ir.Value, dtype: str, length: int | None) -> None:
    value.type = value_type(_view(ctx, Value(names[0], dtype, None, kind="tensor_array")))
    for k, name in enumerate(dict.fromkeys(names)):
        if k == 0:
            ctx.state.bind(name, value, fresh=value in ctx.state.fresh)
        else:
            ctx.state.env[name] = value
    if length is not None:
        ctx.state.array_lengths[value] = length


def _as_tensor(ctx: OpContext, name: str) -> bool:
    """Whether array ``name`` is a tensor ``[length, *element]`` (else an ONNX sequence)."""
    return ctx.state.array_plan().as_tensor(name)


def _length_of(ctx: OpContext, arr: ir.Value, tensor: bool) -> ir.Value:
    """The length of an array as an int64 scalar (its known length as a constant)."""
    known = ctx.state.array_lengths.get(arr)
    if known is not None:
        return ctx.const_i64(known)
    if tensor:
        return ctx.reshape(ctx.shape_of(arr, 0, 1), [])
    return ctx.op.SequenceLength(arr)


def _append(ctx: OpContext, arr: ir.Value, x: ir.Value) -> ir.Value:
    """A tensor array with ``x`` appended: Concat. An array that may be empty is first
    expanded to ``[length, *x.shape]``: an empty one is ``[0, 1, 1, ...]``
    (``ConvertState.empty_array``), a filled one has those dims already. (A Reshape of the
    empty array would do in ONNX Runtime, but OpenVINO's CPU plugin reshapes a zero-size
    tensor in a Loop wrongly; Expand it computes right.)"""
    element = ctx.unsqueeze(x, [0])
    known = ctx.state.array_lengths.get(arr)
    if known == 0:
        return element
    if known is None and arr not in ctx.state.filled:
        arr = ctx.op.Expand(arr, ctx.op.Concat(ctx.shape_of(arr, 0, 1), ctx.op.Shape(x), axis=0))
    return ctx.op.Concat(arr, element, axis=0)


def _put(ctx: OpContext, arr: ir.Value, i: ir.Value, x: ir.Value) -> ir.Value:
    """A tensor array with element ``i`` (< length) replaced by ``x``: ScatterND."""
    return ctx.op.ScatterND(arr, ctx.reshape(i, [1, 1]), ctx.unsqueeze(x, [0]))


@mapper("create_array", min_opset=11)
def create_array(ctx: OpContext) -> None:
    declared = ctx.output_info("out").dtype  # the array type; the attribute may be "undefined"
    dtype = declared or ctx.attr("dtype") or "float32"
    names = ctx.pd.outputs["out"]
    _set_array(ctx, names, ctx.state.empty_array(names[0], dtype), dtype, 0)


@mapper("array_write", min_opset=11)
def array_write(ctx: OpContext) -> None:
    """array[i] = x: overwrites element i, or appends when i is the length.

    A plain append when i is the array's length: ``arr[len(arr)] = x``, or a loop counter
    proved to equal it; one or two ops when the length and i are known here (straight-line
    code); otherwise, for a tensor array, the append and the overwrite in one (Concat,
    ScatterND at i, Slice to max(length, i + 1)), for a sequence a run-time If (append or
    replace), whose sequence outputs need opset 13."""
    name = _array_name(ctx, "array")
    x = ctx.input("x")
    if name in ctx.state.scan_arrays:  # appended once per loop iteration: a scan output
        ctx.state.scan_arrays[name] = x
        return
    arr = ctx.state.lookup(name, ctx.pd.block_idx)
    tensor = _as_tensor(ctx, name)
    known = ctx.state.array_lengths.get(arr)
    dtype = ctx.input_dtype("x")
    x = ctx.cast(x, seq_dtype(dtype), dtype)
    length = None
    appending = id(ctx.pd) in ctx.state.append_ops or ctx.state.measured.get(ctx.input("i")) is arr
    i, k = (None, None) if appending else _index(ctx, "i")
    if known is not None and k is not None:
        if k > known or k < 0:
            raise ctx.fail(f"writes element {k} of array {name!r}, which has {known} element(s) here",
                           hint="Paddle fills the gap with empty tensors; pd2onnx cannot")
        appending = k == known
    if appending:  # the index is the array's length (proved by the loop, or arr[len(arr)] = x)
        out = _append(ctx, arr, x) if tensor else ctx.op.SequenceInsert(arr, x)
        length = None if known is None else known + 1
    elif known is not None and k is not None:
        out = _put(ctx, arr, i, x) if tensor else ctx.op.SequenceInsert(ctx.op.SequenceErase(arr, i), x, i)
        length = known
    elif tensor:
        size = _length_of(ctx, arr, True)
        grown = _put(ctx, _append(ctx, arr, x), i, x)
        after = ctx.op.Add(i, ctx.const_i64(1))
        end = ctx.op.Where(ctx.op.Less(size, after), after, size)
        out = ctx.slice(grown, ctx.const_i64([0]), ctx.reshape(end, [1]), [0])
    else:
        info = Value(name, dtype, None, kind="tensor_array")
        ctx.require_opset(SEQUENCE_THROUGH_CF_OPSET,
                          "array_write at an index known only at run time (a sequence-valued If)")
        replace = _subgraph(ctx, "replace", None, [],
                            lambda _: [ctx.op.SequenceInsert(ctx.op.SequenceErase(arr, i), x, i)], [info])
        append = _subgraph(ctx, "append", None, [], lambda _: [ctx.op.SequenceInsert(arr, x)], [info])
        out = ctx.op.If(ctx.op.Less(i, ctx.op.SequenceLength(arr)), then_branch=replace, else_branch=append)
    ctx.state.filled.add(out)
    _set_array(ctx, [name] + ctx.pd.outputs.get("out", []), out, dtype, length)


def _take(ctx: OpContext, arr: ir.Value, i: ir.Value, tensor: bool) -> ir.Value:
    """Element ``i`` (an int64 scalar) of an array."""
    return ctx.op.Gather(arr, i, axis=0) if tensor else ctx.op.SequenceAt(arr, i)


@mapper("array_read", min_opset=11)
def array_read(ctx: OpContext) -> None:
    name = _array_name(ctx, "array")
    arr = ctx.state.lookup(name, ctx.pd.block_idx)
    i, k = _index(ctx, "i")
    known = ctx.state.array_lengths.get(arr)
    if known is not None and k is not None and not -known <= k < known:
        raise ctx.fail(f"reads element {k} of array {name!r}, which has {known} element(s) here",
                       hint="the program reads past the end of the array")
    ctx.set_output("out", _element_out(ctx, _take(ctx, arr, i, _as_tensor(ctx, name)), name))


def _element_out(ctx: OpContext, value: ir.Value, name: str | None = None, extra: int = 0) -> ir.Value:
    """An element (or elements) taken out of array ``name``, in the output's dtype (bfloat16
    arrays store float32: ``seq_dtype``). For a tensor array the output's rank is the
    elements' (plus ``extra``): Paddle 3 declares some of these outputs 0-D."""
    slot = "out"
    plan = ctx.state.array_plan()
    if name is not None and plan.as_tensor(name) and plan.element_shape(name) is not None:
        ctx.correct_declared(slot, rank=len(plan.element_shape(name)) + extra)
    dtype = ctx.output_dtype(slot)
    return ctx.cast(value, dtype, seq_dtype(dtype))


@mapper("array_length", min_opset=11)
def array_length(ctx: OpContext) -> None:
    name = ctx.required_input_name("x")
    arr = ctx.input("x")
    shape = ctx.output_shape("out") or (1,)
    out = ctx.reshape(_length_of(ctx, arr, _as_tensor(ctx, name)), list(shape))
    out = ctx.cast(out, ctx.output_dtype("out"), "int64")
    ctx.set_output("out", out)
    ctx.state.measured[out] = arr


@mapper("array_to_tensor", min_opset=11)
def array_to_tensor(ctx: OpContext) -> None:
    """Stack (``use_stack``) or concatenate the elements along ``axis``; ``out_index`` holds
    each element's size along ``axis`` (as Paddle computes it, also when stacking). A tensor
    array is its own stack along axis 0: other axes are a Transpose (and, concatenating, a
    Reshape merging the array axis into ``axis``)."""
    name = ctx.required_input_name("x")
    arr = ctx.input("x")
    axis = int(ctx.attr("axis", 0))
    stack = bool(ctx.attr("use_stack", False))
    tensor = _as_tensor(ctx, name)
    if not tensor:
        out = ctx.op.ConcatFromSequence(arr, axis=axis, new_axis=1 if stack else 0)
    else:
        rank = len(ctx.state.array_plan().element_shape(name) or ())  # the elements' rank
        ax = axis + rank + (1 if stack else 0) if axis < 0 else axis  # Paddle's axis, made positive
        perm = list(range(1, ax + 1)) + [0] + list(range(ax + 1, rank + 1))
        out = arr if ax == 0 else ctx.op.Transpose(arr, perm=perm)
        if not stack:  # [.., n, d_ax, ..] -> [.., n * d_ax, ..]
            head = ctx.shape_of(out, 0, ax) if ax else None
            tail = ctx.shape_of(out, ax + 2, rank + 1) if ax + 2 <= rank else None
            dims = [d for d in (head, ctx.const_i64([-1]), tail) if d is not None]
            out = ctx.reshape(out, dims[0] if len(dims) == 1 else ctx.op.Concat(*dims, axis=0))
    ctx.set_output("out", _element_out(ctx, out, name, 1 if stack else 0))
    names = ctx.pd.outputs.get("out_index", [])
    if not names or not _reads(ctx.state.program, names[0]):
        return
    if tensor:  # equal elements: each one's size along the axis, n times
        element_axis = axis if axis >= 0 else axis + rank
        size = ctx.shape_of(arr, element_axis + 1, element_axis + 2)
        sizes = ctx.op.Expand(size, ctx.shape_of(arr, 0, 1))
        ctx.set_output("out_index", ctx.op.Cast(sizes, to=ir.DataType.INT32))
        return
    # each element's size along axis, one Loop step per element (a scan output)
    info = Value("size", "int32", (1,))

    def outs(inputs: list[ir.Value]) -> list[ir.Value]:
        element = ctx.op.SequenceAt(arr, inputs[0])
        shape = ctx.op.Shape(element)
        rank = ctx.op.Size(shape)
        ax = ctx.const_i64(axis) if axis >= 0 else ctx.op.Add(ctx.const_i64(axis), rank)
        size = ctx.op.Cast(ctx.op.Gather(shape, ax), to=ir.DataType.INT32)
        return [ctx.op.Identity(inputs[1]), size]

    body = _subgraph(ctx, "sizes", None, [(None, ir.TensorType(ir.DataType.INT64), "iter"),
                                            (None, ir.TensorType(ir.DataType.BOOL), "cond")],
                     outs, [Value("cond", "bool", ()), info])
    sizes = ctx.op.Loop(ctx.op.SequenceLength(arr), ctx.const(np.asarray(True)), body=body)
    ctx.set_output("out_index", sizes)


@mapper("array_pop", min_opset=11)
def array_pop(ctx: OpContext) -> None:
    """out = array[index]; the element is removed from the array."""
    name = _array_name(ctx, "array")
    arr = ctx.state.lookup(name, ctx.pd.block_idx)
    tensor = _as_tensor(ctx, name)
    index = int(ctx.attr("index", -1))
    pos = ctx.const(np.asarray(index, dtype=np.int64))
    known = ctx.state.array_lengths.get(arr)
    if known is not None and not -known <= index < known:
        raise ctx.fail(f"pops element {index} of array {name!r}, which has {known} element(s) here")
    ctx.set_output("out", _element_out(ctx, _take(ctx, arr, pos, tensor), name))
    dtype = _info(ctx, name, ctx.pd.block_idx).dtype
    if not tensor:
        rest = ctx.op.SequenceErase(arr, pos)
    elif index == -1:
        rest = ctx.slice(arr, [0], [-1], [0])
    else:
        at = pos if index >= 0 else ctx.op.Add(pos, _length_of(ctx, arr, True))
        at = ctx.reshape(at, [1])
        rest = ctx.op.Concat(ctx.slice(arr, ctx.const_i64([0]), at, [0]),
                             ctx.slice(arr, ctx.op.Add(at, ctx.const_i64([1])), [2**62], [0]), axis=0)
    _set_array(ctx, [name] + ctx.pd.outputs.get("array_out", []), rest, dtype, None if known is None else known - 1)


@mapper("slice_array", min_opset=11)
def slice_array(ctx: OpContext) -> None:
    """array[start:end] (PIR): a new array of the elements in between."""
    slice_tensor_array(ctx)


@mapper("slice_array_dense", min_opset=11)
def slice_array_dense(ctx: OpContext) -> None:
    """array[start] (PIR): the element itself, a tensor."""
    slice_tensor_array(ctx)


def slice_tensor_array(ctx: OpContext) -> None:
    """Slicing a tensor array: PIR ``slice_array`` / ``slice_array_dense``, and a legacy
    ``slice`` whose input is a tensor array (how Paddle 2.x dy2static indexes and slices a
    list). As Paddle's kernels do, the output's kind decides: a tensor output (legacy
    ``decrease_axis``, PIR ``slice_array_dense``) is the element at ``start``; an array output
    holds the elements from ``start`` to ``end``. Bounds follow Paddle: a negative one counts
    from the end, then ``start`` is clamped at 0 and ``end`` into ``[0, length]``, and
    ``[-1:0]`` means the last element. A tensor array is sliced with Slice; a sequence with a
    small Loop over the elements (a Loop carrying a sequence: opset 13)."""
    if list(ctx.attr("axes", [0]) or [0]) != [0]:
        raise ctx.fail(f"a tensor array can only be sliced along axis 0, not {ctx.attr('axes')}")
    ctx.require_opset(11, "slicing a tensor array")
    arr = ctx.input("input")
    name = ctx.input_names("input")[0]
    tensor = _as_tensor(ctx, name)
    dtype = _info(ctx, name, ctx.pd.block_idx).dtype
    known = ctx.state.array_lengths.get(arr)
    raw_start = _bound(ctx, "starts")
    start = _array_start(ctx, raw_start, arr, known, tensor)
    if ctx.output_info("out").kind != "tensor_array":
        if isinstance(start, int) and known is not None and start >= known:
            raise ctx.fail(f"reads element {start} of array {name!r}, which has {known} element(s) here",
                           hint="the program reads past the end of the array")
        index = ctx.const(np.asarray(start, dtype=np.int64)) if isinstance(start, int) else start
        ctx.set_output("out", _element_out(ctx, _take(ctx, arr, index, tensor), name))
        return
    length = _length_of(ctx, arr, tensor)
    start = start if isinstance(start, ir.Value) else ctx.const_i64(start)
    end = _array_end(ctx, raw_start, _bound(ctx, "ends"), start, length)
    if tensor:
        part = ctx.slice(arr, ctx.reshape(start, [1]), ctx.reshape(end, [1]), [0])
        _set_array(ctx, ctx.pd.outputs["out"], part, dtype, None)
        return
    ctx.require_opset(SEQUENCE_THROUGH_CF_OPSET, "slicing a tensor array that is a sequence (a Loop carrying it)")
    count = _at_least(ctx, ctx.op.Sub(end, start), 0)
    info = Value(name, dtype, None, kind="tensor_array")
    empty = ctx.op.SequenceEmpty(dtype=onnx_dtype(seq_dtype(dtype)))

    def outs(inputs: list[ir.Value]) -> list[ir.Value]:
        element = ctx.op.SequenceAt(arr, ctx.op.Add(start, inputs[0]))
        return [ctx.op.Identity(inputs[1]), ctx.op.SequenceInsert(inputs[2], element)]

    body = _subgraph(ctx, "slice", None, [(None, ir.TensorType(ir.DataType.INT64), "iter"),
                                           (None, ir.TensorType(ir.DataType.BOOL), "cond"),
                                           (None, value_type(info), "acc")],
                     outs, [Value("cond", "bool", ()), info])
    _set_array(ctx, ctx.pd.outputs["out"], ctx.op.Loop(count, None, empty, body=body), dtype, None)


def _bound(ctx: OpContext, slot: str) -> int | ir.Value:
    """The first entry of an IntArray bound (``starts``/``ends``): an int, or an int64 scalar."""
    arg = ctx.int_array(slot)
    if arg is None or (isinstance(arg, list) and not arg):
        raise ctx.fail(f"no {slot} given")
    if isinstance(arg, list):
        return arg[0]
    return ctx.reshape(ctx.op.Slice(arg, ctx.const_i64([0]), ctx.const_i64([1])), [])


def _at_least(ctx: OpContext, v: ir.Value, floor: int) -> ir.Value:
    """max(v, floor) for an int64 scalar (compare and select: exact)."""
    lo = ctx.const_i64(floor)
    return ctx.op.Where(ctx.op.Less(v, lo), lo, v)


def _from_end(ctx: OpContext, v: ir.Value, length: ir.Value) -> ir.Value:
    """v < 0 ? v + length : v."""
    return ctx.op.Where(ctx.op.Less(v, ctx.const_i64(0)), ctx.op.Add(v, length), v)


def _array_start(ctx: OpContext, raw: int | ir.Value, arr: ir.Value, known: int | None,
                 tensor: bool) -> int | ir.Value:
    """Paddle's start: counted from the end when negative, then at least 0 (an int when known)."""
    if isinstance(raw, int) and (raw >= 0 or known is not None):
        return max(raw + known if raw < 0 else raw, 0)
    raw = raw if isinstance(raw, ir.Value) else ctx.const_i64(raw)
    return _at_least(ctx, _from_end(ctx, raw, _length_of(ctx, arr, tensor)), 0)


def _array_end(ctx: OpContext, raw_start: int | ir.Value, raw: int | ir.Value, start: ir.Value,
               length: ir.Value) -> ir.Value:
    """Paddle's end: counted from the end when negative, clamped into [0, length]; a start
    of -1 with an end of 0 (``arr[-1]`` written as a slice) takes the last element."""
    end = raw if isinstance(raw, ir.Value) else ctx.const_i64(raw)
    end = _at_least(ctx, _from_end(ctx, end, length), 0)
    end = ctx.op.Where(ctx.op.Less(length, end), length, end)
    if isinstance(raw_start, int) and raw_start != -1:
        return end
    last = ctx.op.Equal(end, ctx.const_i64(0))
    if isinstance(raw_start, ir.Value):
        last = ctx.op.And(last, ctx.op.Equal(raw_start, ctx.const_i64(-1)))
    return ctx.op.Where(last, ctx.op.Add(start, ctx.const_i64(1)), end)


@mapper("increment")
def increment(ctx: OpContext) -> None:
    """x + value (legacy ``step``), in x's dtype."""
    dtype = ctx.input_dtype("x")
    ctx.set_output("out", ctx.op.Add(ctx.input("x"), ctx.const(c_cast(ctx.attr("value", 1.0), dtypes.to_numpy(dtype)))))
