"""Replay: run each Paddle op's ONNX nodes alone, fed Paddle's own values of its inputs.

An op's *unit* is the set of main-graph nodes that compute the ONNX values carrying its
outputs, found by walking back from them until values that Paddle can give (values that
carry an earlier op's output Paddle returned), graph inputs or constants. Where the
optimizer fused ops, the walk passes through values no longer in the model, so one unit
replays the fused ops together. All units go into one ONNX model (each unit's nodes
copied under its own prefix, the values Paddle gives as shared graph inputs), run in one
ONNX Runtime session; if ONNX Runtime fails, the units are split in halves until the
failing ones are found, each reported as its op's failure.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import onnx

from pd2onnx.paddle.program import Op
from pd2onnx.verification.onnx_side import OnnxSide, session
from pd2onnx.verification.plan import Plan, Ref

MAX_UNIT_NODES = 2000  # beyond this an op's inputs are not Paddle's values anywhere near it
_RANDOM_ONNX = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                          "Multinomial", "Bernoulli"})


@dataclass
class Unit:
    op: Op
    targets: dict[Ref, str]  # Paddle output -> the ONNX value carrying it
    nodes: list[int] = field(default_factory=list)  # main-graph node positions, in order
    feeds: dict[str, Ref | str] = field(default_factory=dict)  # ONNX value -> Paddle value (or feed name)
    covers: list[Op] = field(default_factory=list)  # other ops these nodes also compute (fused)
    why: str = ""  # why it cannot be replayed
    op_types: set[str] = field(default_factory=set)
    cast_types: set[int] = field(default_factory=set)


def _subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    out = []
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            out.append(a.g)
        elif a.type == onnx.AttributeProto.GRAPHS:
            out.extend(a.graphs)
    return out


def captured(node: onnx.NodeProto) -> list[str]:
    """Names a node's subgraphs read from enclosing scopes."""
    defined: set[str] = set()
    read: list[str] = []

    def walk(g: onnx.GraphProto) -> None:
        defined.update(i.name for i in g.input)
        defined.update(t.name for t in g.initializer)
        for n in g.node:
            read.extend(x for x in n.input if x)
            defined.update(o for o in n.output if o)
            for sub in _subgraphs(n):
                walk(sub)
        read.extend(o.name for o in g.output)

    for sub in _subgraphs(node):
        walk(sub)
    return [n for n in dict.fromkeys(read) if n not in defined]


def _all_nodes(node: onnx.NodeProto):
    yield node
    for sub in _subgraphs(node):
        for n in sub.node:
            yield from _all_nodes(n)


def build_unit(op: Op, targets: dict[Ref, str], side: OnnxSide, available: set[Ref]) -> Unit:
    unit = Unit(op, targets)
    graph = side.proto.graph
    own = (op.block_idx, op.index)
    seen: set[str] = set()
    nodes: set[int] = set()
    stack = list(dict.fromkeys(targets.values()))
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        earlier = [r for r in side.carried_by.get(name, ()) if r in available and r[0] == 0 and r[1] < op.index
                   and r[:2] != own]
        if earlier:
            unit.feeds[name] = earlier[-1]
            continue
        if name in side.inputs:
            unit.feeds[name] = name
            continue
        if name in side.initializers:
            continue
        pos = side.producers.get(name)
        if pos is None:
            unit.why = f"its ONNX value {name!r} is not made by any node of the main graph"
            return unit
        if pos in nodes:
            continue
        nodes.add(pos)
        if len(nodes) > MAX_UNIT_NODES:
            unit.why = f"no value Paddle gives is within {MAX_UNIT_NODES} ONNX nodes of its outputs"
            return unit
        node = graph.node[pos]
        stack.extend(x for x in node.input if x)
        stack.extend(captured(node))
    unit.nodes = sorted(nodes)
    for pos in unit.nodes:
        for n in _all_nodes(graph.node[pos]):
            unit.op_types.add(n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}::{n.op_type}")
            if n.op_type == "Cast":
                unit.cast_types.update(a.i for a in n.attribute if a.name == "to")
    if unit.op_types & _RANDOM_ONNX:
        unit.why = "its ONNX nodes draw random numbers"
    return unit


def covered_ops(plan: Plan, op: Op, available: set[Ref]) -> list[Op]:
    """Earlier main-block ops whose outputs Paddle does not give and which feed ``op``
    (through others like them): a replay of ``op`` from values Paddle gives includes them."""
    found: dict[tuple[int, int], Op] = {}
    stack = [op]
    while stack:
        cur = stack.pop()
        names = [n for ns in cur.inputs.values() for n in ns]
        for sub in cur.blocks:
            for inner in sub.ops:
                names += [n for ns in inner.inputs.values() for n in ns]
        for name in names:
            ref = plan.producer_ref(cur, name)
            if ref is None or ref in available or ref[1] >= op.index:
                continue
            producer = plan.values[ref].op
            key = (producer.block_idx, producer.index)
            if key not in found:
                found[key] = producer
                stack.append(producer)
    return sorted(found.values(), key=lambda o: o.index)


# ---------------------------------------------------------------------------- batching


def _rename_graph(g: onnx.GraphProto, mapping: dict[str, str]) -> None:
    """Rename the outer-scope references of a (copied) subgraph."""
    for n in g.node:
        for i, x in enumerate(n.input):
            if x in mapping:
                n.input[i] = mapping[x]
        for sub in _subgraphs(n):
            _rename_graph(sub, mapping)
    for o in g.output:
        if o.name in mapping:
            o.name = mapping[o.name]


def batch_model(side: OnnxSide, units: list[tuple[int, Unit]], input_types: dict[str, int]) -> tuple[
        onnx.ModelProto, dict[tuple[int, str], str], set[str]]:
    """One model running ``units`` side by side. Returns it, (unit id, ONNX value) -> the
    batch model's output name, and the names of the graph inputs to feed."""
    src = side.proto
    graph = onnx.GraphProto(name="pd2onnx_replay")
    outputs: dict[tuple[int, str], str] = {}
    inputs: set[str] = set()
    used_inits: set[str] = set()
    for uid, unit in units:
        prefix = f"u{uid}/"
        internal = {o for pos in unit.nodes for o in src.graph.node[pos].output if o}
        mapping = {n: prefix + n for n in internal}
        for pos in unit.nodes:
            node = copy.deepcopy(src.graph.node[pos])
            node.name = prefix + (node.name or f"node{pos}")
            for i, x in enumerate(node.input):
                if x in mapping:
                    node.input[i] = mapping[x]
                elif x in side.initializers:
                    used_inits.add(x)
                elif x:
                    inputs.add(x)
            for i, x in enumerate(node.output):
                if x:
                    node.output[i] = mapping[x]
            for sub in _subgraphs(node):
                _rename_graph(sub, mapping)
            for x in captured(node):
                if x in side.initializers:
                    used_inits.add(x)
                elif x not in mapping.values():
                    inputs.add(x)
            graph.node.append(node)
        for vname in dict.fromkeys(unit.targets.values()):
            if vname in mapping:
                outputs[(uid, vname)] = mapping[vname]
                graph.output.append(onnx.ValueInfoProto(name=mapping[vname]))
    for name in sorted(inputs):
        graph.input.append(onnx.helper.make_tensor_value_info(name, input_types.get(name, onnx.TensorProto.FLOAT),
                                                              None))
    graph.initializer.extend(t for t in src.graph.initializer if t.name in used_inits)
    model = onnx.ModelProto(ir_version=src.ir_version, graph=graph)
    model.opset_import.extend(src.opset_import)
    model.functions.extend(src.functions)
    return model, outputs, inputs


def run_units(side: OnnxSide, units: list[tuple[int, Unit]], feeds: dict[str, np.ndarray],
              input_types: dict[str, int]) -> tuple[dict[tuple[int, str], np.ndarray], dict[int, str]]:
    """Run the units; returns the values of their targets and, per unit ONNX Runtime failed
    on, the error."""
    if not units:
        return {}, {}
    model, outputs, inputs = batch_model(side, units, input_types)
    try:
        sess = session(model, side.runtime)
        names = list(outputs.values())
        got = sess.run(names, {n: feeds[n] for n in inputs})
        return dict(zip(outputs.keys(), got)), {}
    except Exception as exc:  # noqa: BLE001  (onnxruntime's own exception types)
        if len(units) == 1:
            return {}, {units[0][0]: str(exc).strip().splitlines()[0][:400] if str(exc).strip() else repr(exc)}
    half = len(units) // 2
    a_vals, a_err = run_units(side, units[:half], feeds, input_types)
    b_vals, b_err = run_units(side, units[half:], feeds, input_types)
    return {**a_vals, **b_vals}, {**a_err, **b_err}
