"""Walk a Program and emit an ONNX model (onnx_ir) through the registered mappers."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import onnx_ir as ir

from pd2onnx import provenance
from pd2onnx._version import __version__
from pd2onnx.convert.computed_types import type_values
from pd2onnx.convert.context import OpContext, onnx_dtype
from pd2onnx.convert.registry import get_mapper
from pd2onnx.convert.state import ConvertState, UnsetValue
from pd2onnx.errors import (
    ConversionError,
    DeclarationsCorrected,
    InternalError,
    OpRefused,
    OpsetTooLow,
    OpSite,
    OpsRefused,
    Pd2OnnxError,
    UnsupportedOpError,
    UsageError,
)
from pd2onnx.optimize.empty_constants import materialize_empty_constants
from pd2onnx.paddle.program import Op, Program
from pd2onnx.paddle.program import Value as PaddleValue

log = logging.getLogger(__name__)

DEFAULT_OPSET = 17
MIN_OPSET = 7
# Ops the exporter itself handles (graph inputs and outputs).
PLUMBING = frozenset({"data", "feed", "fetch"})


def newest_opset() -> int:
    import onnx.defs

    return onnx.defs.onnx_opset_version()


@dataclass(frozen=True)
class BlockSite(OpSite):
    """An OpSite that also names the chain of ops owning its block (control flow)."""

    path: str = ""

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text} (in {self.path})" if self.path else text


def _site(op: Op, paths: dict[int, str]) -> OpSite:
    site = op.site
    path = paths.get(op.block_idx, "")
    if not path:
        return site
    return BlockSite(site.op_type, site.block, site.index, site.struct_name, path)


@dataclass
class ScanResult:
    unsupported: list[OpSite]
    needed_opset: int
    needed_by: OpSite | None


def prescan(program: Program, requested: int) -> ScanResult:
    """Every op without a mapper, and the lowest opset that all the others need."""
    from pd2onnx.paddle.info import block_paths

    paths = block_paths(program)
    unsupported: list[OpSite] = []
    needed, needed_by = MIN_OPSET, None
    for op in program.walk_ops():
        if op.type in PLUMBING or op.type == "yield":
            continue
        mapper = get_mapper(op.type)
        if mapper is None:
            unsupported.append(_site(op, paths))
            continue
        try:
            need = mapper.required_opset(op)
        except Exception:  # a broken rule must not hide the rest of the scan
            need = MIN_OPSET
        if need > needed:
            needed, needed_by = need, _site(op, paths)
    return ScanResult(unsupported, needed, needed_by)


def _graph_input(name: str, dtype: str | None, shape: tuple[int, ...] | None) -> ir.Value:
    if dtype is None:
        raise ConversionError(f"input {name!r} has no tensor dtype")
    dims = None if shape is None else [d if d >= 0 else ir.SymbolicDim(f"{name}_dim{i}") for i, d in enumerate(shape)]
    return ir.Value(name=name, type=ir.TensorType(onnx_dtype(dtype)), shape=None if dims is None else ir.Shape(dims))


def _leave_unset(state: ConvertState, op: Op) -> None:
    """Mark what ``op`` would have set as unset (its outputs, what it stores into, and what
    its sub-blocks assign)."""
    names = [n for ns in op.outputs.values() for n in ns] + [t for t, _ in op.inplace_pairs()]
    stack = list(op.blocks)
    while stack:
        block = stack.pop()
        for inner in block.ops:
            names += [n for ns in inner.outputs.values() for n in ns]
            stack.extend(inner.blocks)
    for name in names:
        state.unset.add(name)
        state.env.pop(name, None)


def convert_block_ops(state: ConvertState, ops: list[Op]) -> None:
    """Run the mapper of every op in order (plumbing ops excepted). A refused op is recorded
    and the conversion goes on, so that one run reports every refusal (``finish_refusals``)."""
    for op in ops:
        if op.type in PLUMBING or op.type == "yield":
            continue
        mapper = get_mapper(op.type)
        assert mapper is not None  # the pre-scan guarantees it
        if state.unset and any(n in state.unset and n not in state.env for ns in op.inputs.values() for n in ns):
            _leave_unset(state, op)
            continue
        ctx = OpContext(state, op)
        outer, state.current_op = state.current_op, op  # provenance: what the mapper emits is op's
        try:
            mapper.fn(ctx)
        except OpRefused as exc:
            state.refusals.append(exc)
            _leave_unset(state, op)
            continue
        except UnsetValue:
            if not state.refusals:
                raise
            _leave_unset(state, op)
            continue
        except OpsetTooLow as exc:
            if op.block_idx != 0 and exc.site == op.site:  # name the blocks it sits in
                from pd2onnx.paddle.info import block_paths

                raise OpsetTooLow(exc.opset, _site(op, block_paths(state.program)), exc.why) from None
            raise
        except (Pd2OnnxError, DeclarationsCorrected):
            raise
        except Exception as exc:
            if state.refusals:  # a follow-on of an earlier refusal (values it left unset)
                _leave_unset(state, op)
                continue
            raise InternalError(f"mapper {mapper.name}", f"{op.site.op_type} ({op.site}) of {state.program.model_file}",
                                exc) from exc
        finally:
            state.current_op = outer
        _store_inplace(state, op)
        for slot, names in op.outputs.items():
            for name in names:
                if name not in state.env and mapper.name not in ("fetch",):
                    info = state.program.find_value(name, op.block_idx)
                    if info is not None and info.kind == "dense_tensor" and slot in _required_outputs(op):
                        raise ConversionError(
                            f"the mapper of {op.type} ({op.site}) did not produce output {slot!r}",
                            file=state.program.model_file,
                            hint="this is a pd2onnx bug; please report it",
                        )


# Ops whose mappers keep the stored-into operand themselves (tensor arrays).
_SELF_STORING = frozenset({"array_write", "array_pop"})


def _store_inplace(state: ConvertState, op: Op) -> None:
    """After an in-place PIR op (``increment_``, ``assign_out_``, ``set_value_``, ...), the
    operand it stores into is its result for every later reader (Paddle's programs read the
    operand's name again, e.g. a loop counter after ``increment_``)."""
    if op.type in _SELF_STORING:
        return
    for target, result in op.inplace_pairs():
        if result in state.env:
            state.env[target] = state.env[result]


def finish_refusals(state: ConvertState) -> None:
    """Raise what the mappers refused: the one error, or all of them in one."""
    if len(state.refusals) == 1:
        raise state.refusals[0]
    if state.refusals:
        raise OpsRefused(state.refusals, file=state.program.model_file)


def _required_outputs(op: Op) -> tuple[str, ...]:
    """The output slots a mapper must always produce: the first one."""
    return tuple(list(op.outputs)[:1])


def choose_opset(program: Program, opset: int | None, auto_opset: bool) -> int:
    newest = newest_opset()
    target = DEFAULT_OPSET if opset is None else int(opset)
    if not MIN_OPSET <= target <= newest:
        raise UsageError(
            f"opset {target} is out of range: pd2onnx supports {MIN_OPSET} to {newest} "
            f"(the newest the installed onnx knows)",
            hint=f"pass --opset between {MIN_OPSET} and {newest}",
        )
    scan = prescan(program, target)
    if scan.unsupported:
        raise UnsupportedOpError(scan.unsupported, file=program.model_file)
    if scan.needed_opset > target:
        if not auto_opset:
            raise UsageError(
                f"opset {target} is too low: {scan.needed_by.op_type} ({scan.needed_by}) needs opset "
                f"{scan.needed_opset}",
                file=program.model_file,
                hint=f"pass --opset {scan.needed_opset} or drop --no-auto-opset",
            )
        log.warning(
            "raising the opset from %d to %d: %s (%s) needs it",
            target, scan.needed_opset, scan.needed_by.op_type, scan.needed_by,
        )
        target = scan.needed_opset
    return target


# Conversions started again because a mapper corrected a type control flow carries.
_MAX_CORRECTIONS = 32


def export_program(program: Program, opset: int | None = None, auto_opset: bool = True) -> ir.Model:
    """Program -> onnx_ir Model. Raises UnsupportedOpError listing every unsupported op.

    When a mapper finds that its actual arguments need a newer opset (``OpsetTooLow``), the
    conversion starts again at that opset (or fails with --no-auto-opset).
    """
    target = choose_opset(program, opset, auto_opset)
    newest = newest_opset()
    corrections = 0
    while True:
        try:
            model = _export_at(program, target)
            _report_sequences(program)
            return model
        except DeclarationsCorrected as exc:
            # each attempt corrects at least one declaration for good, so this ends
            corrections += 1
            if corrections > _MAX_CORRECTIONS:
                raise ConversionError(f"types keep changing after {corrections} conversions: {exc}",
                                      file=program.model_file, hint="this is a pd2onnx bug; please report it") from None
            log.info("converting again: %s", exc)
        except OpsetTooLow as exc:
            if not auto_opset or exc.opset > newest:
                raise UsageError(
                    f"opset {target} is too low: {exc.site.op_type} ({exc.site}) needs opset {exc.opset} "
                    f"({exc.why})",
                    file=program.model_file,
                    hint=f"pass --opset {exc.opset}" + (" or drop --no-auto-opset" if not auto_opset else ""),
                ) from None
            log.warning("raising the opset from %d to %d: %s", target, exc.opset, exc)
            target = exc.opset


def _report_sequences(program: Program) -> None:
    """Say which tensor arrays stay ONNX sequences, and why (``convert/arrays.py``): OpenVINO's
    ONNX reader and TensorRT run no sequence op."""
    from pd2onnx.convert.arrays import ArrayPlan

    for group in ArrayPlan(program).sequences():
        log.warning(
            "tensor array %r stays an ONNX sequence, which OpenVINO and TensorRT cannot run: %s",
            group.names[0], group.reason,
        )


def _export_at(program: Program, target: int) -> ir.Model:
    import onnx.helper

    graph = ir.Graph([], [], nodes=[], opset_imports={"": target}, name=_graph_name(program))
    state = ConvertState(program, target, graph, convert_block=convert_block_ops)
    for value in program.inputs:
        inp = _graph_input(value.name, value.dtype, value.shape)
        state.names.add(inp.name)
        graph.inputs.append(inp)
        state.env[value.name] = inp
    convert_block_ops(state, program.main.ops)
    finish_refusals(state)
    outputs = _bind_outputs(state)
    _drop_unused_initializers(graph)
    # IR version 4 is the first that lets initializers be something else than graph inputs.
    ir_version = max(4, onnx.helper.find_min_ir_version_for([onnx.helper.make_opsetid("", target)]))
    model = ir.Model(graph, ir_version=ir_version, producer_name="pd2onnx", producer_version=__version__)
    # every value typed as the graph computes it (legalization keeps the types: it types the
    # casts it adds)
    type_values(model, state, outputs)
    _legalize(model)
    materialize_empty_constants(model)  # OpenVINO reads an empty constant as a scalar
    provenance.start(model, program.model_file, program.format)  # pd2onnx.api.convert stores it
    return model


def _legalize(model: ir.Model) -> None:
    """Compute the nodes ONNX Runtime's CPU provider has no kernel for in a type it has
    (``pd2onnx.convert.legalize``); what it cannot fix is logged."""
    from pd2onnx.convert.legalize import legalize

    report = legalize(model)
    if report.rewritten:
        log.info("legalize: %d node(s) computed in another type for ONNX Runtime", len(report.rewritten))
    for op, binding, why in report.unresolved:
        log.warning("ONNX Runtime may not run %s with %s: %s", op, binding, why)


def _drop_unused_initializers(graph: ir.Graph) -> None:
    """Constants a mapper read at conversion time (e.g. PIR ``full_int_array`` shapes) and
    never used as values."""
    outputs = set(graph.outputs)
    for name, value in list(graph.initializers.items()):
        if not value.uses() and value not in outputs:
            del graph.initializers[name]
    for node in graph:  # control-flow subgraphs hold their own constants
        for attr in node.attributes.values():
            if attr.type == ir.AttributeType.GRAPH:
                _drop_unused_initializers(attr.as_graph())
            elif attr.type == ir.AttributeType.GRAPHS:
                for sub in attr.as_graphs():
                    _drop_unused_initializers(sub)


def _graph_name(program: Program) -> str:
    import os

    return os.path.splitext(os.path.basename(program.model_file))[0] or "paddle_model"


def _bind_outputs(state: ConvertState) -> list[tuple[ir.Value, PaddleValue]]:
    """Make the values Paddle fetches the graph outputs, under the fetch names; returns each
    with the Paddle value declaring it. Their types are the ones the graph computes (the
    typing step, ``computed_types``), not Paddle's declarations."""
    program, graph = state.program, state.graph
    bound: list[tuple[ir.Value, PaddleValue]] = []
    fetch_src = {}
    for op in program.main.ops:
        if op.type == "fetch":
            src = op.input("x")
            out = op.output("out") or src
            fetch_src[out] = src
    for out in program.outputs:
        src = fetch_src.get(out.name, out.name)
        value = state.lookup(src)
        needs_copy = (
            value in graph.outputs
            or value.is_graph_input()
            or value.is_initializer()
            or (value.name != out.name and out.name in state.names)
        )
        if needs_copy:
            node = ir.Node("", "Identity", [value], num_outputs=1, name=f"output/{out.name}")
            graph.append(node)
            value = node.outputs[0]
            value.name = out.name if out.name not in state.names else state.unique_name(out.name)
        else:
            state.names.discard(value.name)
            value.name = out.name
            state.names.add(out.name)
        graph.outputs.append(value)
        bound.append((value, out))
    return bound
