"""The converter's typing step: every value carries the type the graph computes.

Run by the exporter once the mappers have built the graph (before legalization, which keeps
every type and types the casts it adds):

1. The types the mappers set (from Paddle's declarations: control-flow results, custom ops,
   tensor arrays) are set aside, and every node output and Loop-carried body input is
   cleared, so that nothing Paddle declared can contradict what the graph computes.
2. ``pd2onnx.optimize.value_types.infer_types`` computes every type and shape: ONNX's shape
   inference, Loop-carried values and If outputs checked for rank agreement, node rules; for
   what none of them can type, the type a mapper set, else the dtype and rank Paddle declares
   for the Paddle value an ONNX value stands for (never at an If/Loop boundary: a rank there
   comes from the branches or the body).
3. Graph outputs: the computed type wins over Paddle's declaration (dtype and rank); where
   they disagree one warning names the output, the declared and the computed type. (Paddle 1.x
   declared the ``scale`` that ``save_inference_model`` appends float32 whatever flowed into
   it, e.g. ``crf_decoding``'s int64 path; Paddle's kernels ignore the declaration, ONNX
   Runtime refuses a file whose output type disagrees with the graph.)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.onnx_types import onnx_dtype, paddle_dtype
from pd2onnx.convert.state import ConvertState, seq_dtype
from pd2onnx.optimize._ir import Namer, is_op, iter_graphs
from pd2onnx.optimize.type_names import describe
from pd2onnx.optimize.value_types import TypeReport, infer_types
from pd2onnx.paddle.program import Value

log = logging.getLogger(__name__)


def declared_type(info: Value) -> tuple[ir.TypeProtocol | None, list[None] | None]:
    """(type, dims) Paddle declares for a value: only the rank of its shape (Paddle's
    compile-time dims are wrong in places: 2.6 declares 1 for an expand_v2 -1 dim, 3.3 gets
    matmul batch broadcasting of unequal ranks wrong)."""
    if not info.dtype:
        return None, None
    try:
        element = ir.TensorType(onnx_dtype(seq_dtype(info.dtype) if info.kind == "tensor_array" else info.dtype))
    except Exception:  # noqa: BLE001 - a dtype without an ONNX type
        return None, None
    if info.kind == "tensor_array":
        return ir.SequenceType(element), None
    if info.kind != "dense_tensor":
        return None, None
    return element, None if info.shape is None else [None] * len(info.shape)


def _clear(model: ir.Model) -> dict[ir.Value, tuple[ir.TypeProtocol | None, list | None]]:
    """Forget the types of node outputs and Loop-carried body inputs; returns what they were."""
    prior: dict[ir.Value, tuple[ir.TypeProtocol | None, list | None]] = {}
    for graph in iter_graphs(model.graph):
        values = [o for node in graph for o in node.outputs]
        for node in graph:
            if is_op(node, "Loop") and "body" in node.attributes:
                values += node.attributes["body"].as_graph().inputs[2:]
        for v in values:
            if v.type is not None or v.shape is not None:
                prior[v] = (v.type, None if v.shape is None else list(v.shape))
            v.type = None
            v.shape = None
    return prior


def type_values(model: ir.Model, state: ConvertState, outputs: Sequence[tuple[ir.Value, Value]]) -> TypeReport:
    """Give every value of ``model`` the type the graph computes (see the module docstring);
    ``outputs``: each graph output with the Paddle value that declares it."""
    program = state.program
    prior = _clear(model)
    declared_outputs = {value: info for value, info in outputs}

    def paddle_info(v: ir.Value) -> Value | None:
        if v in declared_outputs:
            return declared_outputs[v]
        bound = state.bound.get(v)
        if bound is None:
            return None
        name, block_idx = bound
        if block_idx is not None:
            return program.find_value(name, block_idx)
        return next((b.values[name] for b in program.blocks if name in b.values), None)

    def hint(v: ir.Value) -> tuple[ir.TypeProtocol | None, list | None]:
        t, dims = prior.get(v, (None, None))
        info = paddle_info(v)
        if info is not None and (t is None or dims is None):
            dt, ddims = declared_type(info)
            t = t if t is not None else dt
            dims = dims if dims is not None else ddims
        return t, dims

    report = infer_types(model, hint)
    if _shape_placeholders(model, report):
        report = infer_types(model, hint)
    for value, info in outputs:
        _check_output(value, info, report)
    _warn_no_rank(report)
    leftovers = report.untyped + report.unranked
    if leftovers:
        log.info("typing: %d value(s) without a type or rank: %s", len(leftovers),
                 ", ".join(f"{v.name} ({describe(v)})" for v in leftovers[:10]))
    return report


def _shape_placeholders(model: ir.Model, report: TypeReport) -> int:
    """Give dy2static's placeholders the rank the loop gives them; returns how many.

    dy2static carries a variable that has no value before a ``while`` (Python would raise
    NameError reading it) into the loop as a constant placeholder: ``[1]`` in legacy programs
    (``undefined_var_*``), 0-D in PIR. The body assigns it before any read, with another rank,
    so the Loop-carried value has no rank (OpenVINO's CPU plugin refuses such a Loop). Where the
    body never reads the carried value and its initial value is such a constant, the initial
    value only matters if the loop runs zero times, when the program hands on the placeholder
    (a value the Python source never defined): it becomes an empty tensor of the rank and dtype
    the body gives, so a loop that runs zero times gives that empty tensor instead."""
    done = 0
    namer: Namer | None = None
    for graph in list(iter_graphs(model.graph)):
        empties: dict[tuple[ir.DataType, int], ir.Value] = {}  # one per dtype and rank in a graph
        for node in list(graph):
            if not is_op(node, "Loop") or "body" not in node.attributes:
                continue
            body = node.attributes["body"].as_graph()
            for i, (carried, init) in enumerate(zip(body.inputs[2:], node.inputs[2:])):
                out = body.outputs[1 + i]
                if (carried not in report.no_rank or carried.uses() or init is None
                        or not isinstance(out.type, ir.TensorType) or out.shape is None
                        or not _is_constant(init) or init.shape is not None and len(init.shape) == len(out.shape)):
                    continue
                key = (out.dtype, len(out.shape))
                if key not in empties:
                    dims = [0] * len(out.shape)
                    namer = namer or Namer(model)
                    name = namer.fresh(f"{init.name}/as_rank_{len(dims)}")
                    empties[key] = ir.Value(name=name, type=ir.TensorType(out.dtype), shape=ir.Shape(dims),
                                            const_value=ir.tensor(np.zeros(dims, out.dtype.numpy()), name=name))
                    graph.register_initializer(empties[key])
                node.replace_input_with(2 + i, empties[key])
                done += 1
    return done


def _is_constant(v: ir.Value) -> bool:
    """A constant, or a Cast or Identity of one (PIR placeholders are a cast 0-D `full`)."""
    producer = v.producer()
    if v.const_value is not None or producer is not None and producer.op_type in ("Constant", "ConstantOfShape"):
        return True
    return (producer is not None and producer.op_type in ("Cast", "Identity") and len(producer.inputs) == 1
            and producer.inputs[0] is not None and _is_constant(producer.inputs[0]))


def _check_output(value: ir.Value, info: Value, report: TypeReport) -> None:
    """The computed type stays; one warning when Paddle declares another dtype or rank. A
    graph output must have a rank (the ONNX checker requires one): where the graph does not
    fix it, Paddle's declared rank, with a warning."""
    declared, dims = declared_type(info)
    if declared is None or not isinstance(value.type, type(declared)):
        return
    if value.shape is None and dims is not None and isinstance(value.type, ir.TensorType):
        why = report.no_rank.get(value, "its rank could not be inferred")
        log.warning("output %r: the graph does not fix its rank (%s); it carries the rank Paddle declares, %d",
                    info.name, why, len(dims))
        value.shape = ir.Shape(list(dims))
    dtype_differs = value.dtype != declared.dtype
    rank_differs = dims is not None and value.shape is not None and len(value.shape) != len(dims)
    if not (dtype_differs or rank_differs):
        return
    log.warning(
        "output %r: Paddle declares %s, the graph computes %s; the ONNX output carries the computed type",
        info.name, _spelled(declared.dtype, None if dims is None else len(dims)),
        _spelled(value.dtype, None if value.shape is None else len(value.shape), value.shape),
    )


def _spelled(dtype: ir.DataType, rank: int | None, shape: ir.Shape | None = None) -> str:
    """"int64 of rank 2 ([?, 4])"."""
    text = paddle_dtype(dtype) + (" of unknown rank" if rank is None else f" of rank {rank}")
    if shape is not None and rank:
        text += " ([" + ", ".join(str(d) if isinstance(d, int) else "?" for d in shape) + "])"
    return text


def _warn_no_rank(report: TypeReport) -> None:
    """One warning per place where the graph gives a value different ranks, naming the values
    that carry no rank because of it."""
    by_cause: dict[str, list[str]] = {}
    for value, why in report.no_rank.items():
        cause = why.split(": ", 1)[1] if why.startswith("follows from ") else why
        by_cause.setdefault(cause, []).append(value.name or "?")
    for cause, names in by_cause.items():
        shown = ", ".join(repr(n) for n in names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        log.warning("no rank for %s: %s (Paddle computes it at run time; runtimes that need ranks, such as "
                    "OpenVINO's CPU plugin, may refuse the model)", shown, cause)
