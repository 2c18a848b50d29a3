"""The element type and shape of every value of a model, main graph and If/Loop/Scan bodies.

One way to infer types, used by the converter's typing step, its legalization pass and the
optimizer. ``infer_types`` fills in what a model's values do not carry yet, round after round:

1. ONNX's shape inference on the whole model (non-strict, with data propagation; big
   initializers travel as typed inputs, so a >2 GB model never becomes one protobuf; the model
   is serialized once, later rounds only rewrite the types in that proto). What it finds is
   merged into the values: a type where there was none, a shape where there was none, a static
   dim where the dim was unknown. Conflicts keep what the value carries.
2. Loop-carried values: ONNX's Loop inference drops their shapes (a carried value may change
   shape between iterations), so the body sees unranked values and the Loop's outputs get no
   rank. Each carried body input is seeded with its initial value's shape; once the body is
   inferred, the dims the body's result agrees on are kept (the body is inferred again with
   them), and the Loop output takes that shape. A body result of another rank leaves the
   carried value without a rank (``no_rank`` says why); a seed the body never confirms (its
   result gets no shape) is taken back.
3. If outputs: ONNX unites the branches (dims that differ become unknown); branches of
   different ranks leave the output without a rank (``no_rank``).
4. Sequences: element shapes through SequenceEmpty/Insert/Erase/Construct/At, If and Loop
   (ONNX treats an empty sequence's element as unknown, so a sequence built by appending would
   never have one): a join in which "no element yet" is the identity.
5. Node by node, where the whole-model inference left a value without a type or shape: the
   type rules (``Cast``'s ``to``, constants, sequence ops, constraint binding) and ONNX's
   inference of the node alone with its constant inputs' data (inside a body, ONNX's inference
   does not see the data of an enclosing graph's initializers).
6. Values computed from a value the graph gives no rank have none either (``no_rank``,
   with the cause); then ``hint(value)``, the caller's knowledge of the rest (the converter gives
   Paddle's declared dtype and rank), for values no control-flow node produces, and the rounds
   run again.

Each round counts only gained information (or takes back a seed for good), so the rounds end.
Step 1 lives in ``onnx_inference``, the schema type rules of step 5 in ``type_names``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import onnx_ir as ir

from pd2onnx.optimize._ir import ONNX_DOMAINS, is_op, iter_graphs, subgraphs_of
from pd2onnx.optimize.onnx_inference import Inference, merge_shape, merge_type, node_inference
from pd2onnx.optimize.type_names import describe, ir_type, node_rule_types, schema_of

log = logging.getLogger(__name__)

_MAX_ROUNDS = 12

# What a caller knows of a value ONNX cannot type: (type or None, dims or None), dims a list
# of ints and None (unknown); ``[None] * rank`` when only the rank is known.
Hint = Callable[[ir.Value], "tuple[ir.TypeProtocol | None, list[int | None] | None]"]


# ---------------------------------------------------------------------------------------- graphs
def all_values(model: ir.Model) -> Iterator[tuple[ir.Graph, ir.Value]]:
    """Every named value of every graph: inputs, initializers and node outputs."""
    for graph in iter_graphs(model.graph):
        seen: set[ir.Value] = set()
        for v in [*graph.inputs, *graph.initializers.values()]:
            if v not in seen:
                seen.add(v)
                yield graph, v
        for node in graph:
            for out in node.outputs:
                if out.name:
                    yield graph, out


def missing(model: ir.Model) -> list[tuple[ir.Graph, ir.Value]]:
    """Values without a type, and tensors without a rank."""
    return [(g, v) for g, v in all_values(model)
            if v.type is None or (isinstance(v.type, ir.TensorType) and v.shape is None)]


# ---------------------------------------------------------------------------------------- report
@dataclass
class TypeReport:
    """What ``infer_types`` could not settle: values without a type, tensors without a rank,
    and values whose rank is unknown because the graph computes different ranks for them
    (value -> why). ``rounds``: whole-model inference runs."""

    untyped: list[ir.Value] = field(default_factory=list)
    unranked: list[ir.Value] = field(default_factory=list)
    no_rank: dict[ir.Value, str] = field(default_factory=dict)
    rounds: int = 0


# ---------------------------------------------------------------------------------------- typer
# Element shapes of sequences form a lattice: EMPTY (no element yet: the join's identity),
# a shape (dims unknown where elements differ), CONFLICT (elements of different ranks);
# None is "not known yet".
EMPTY = "empty"
CONFLICT = "conflict"
RETRACTED = "retracted"  # a carried body input whose seed the body never confirmed


def _join(a, b):
    if a == EMPTY:
        return b
    if b == EMPTY:
        return a
    if a is None or b is None:
        return None
    if a == CONFLICT or b == CONFLICT or len(a) != len(b):
        return CONFLICT
    return tuple(x if _same_dim(x, y) else ir.SymbolicDim(None) for x, y in zip(a, b))


def _same_dim(a, b) -> bool:
    if isinstance(a, int) or isinstance(b, int):
        return a == b
    return a.value is not None and a.value == b.value


def _same_state(a, b) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_dim(x, y) or (not isinstance(x, int) and not isinstance(y, int)
                                                            and x.value is None and y.value is None)
                                        for x, y in zip(a, b))
    return a == b


class _Typer:
    def __init__(self, model: ir.Model, hint: Hint | None):
        self.model = model
        self.hint = hint
        self.inference = Inference(model)
        self.opset = model.opset_imports.get("", model.opset_imports.get("ai.onnx", 1))
        self.no_rank: dict[ir.Value, str] = {}
        self.empty: set[ir.Value] = set()  # sequences known to hold no element
        self.seeds: dict[ir.Value, object] = {}  # carried body inputs -> the state this run gave them
        self.tried: set[tuple[ir.Node, tuple[str, ...]]] = set()  # nodes inferred alone, by input types
        # shapes this run must not forget when a seed changes: known before it, or hinted
        self.kept: set[ir.Value] = {v for _, v in all_values(model) if v.shape is not None}
        self.rounds = 0

    def run(self) -> TypeReport:
        self.settle()
        self.explain()
        if self.hint is not None and self.hints():
            self.settle()
            self.explain()
        report = TypeReport(no_rank=dict(self.no_rank), rounds=self.rounds)
        for _, v in all_values(self.model):
            if v.type is None:
                report.untyped.append(v)
            elif isinstance(v.type, ir.TensorType) and v.shape is None and v not in self.no_rank:
                report.unranked.append(v)
        return report

    def settle(self) -> None:
        """ONNX's inference and the rules (control flow, sequences, node by node), until the
        rules gain nothing (ONNX's inference is complete in one run: run again on what it
        gave, it gives nothing new); then seeds the body never confirmed are taken back."""
        for _ in range(_MAX_ROUNDS):
            self.rounds += 1
            self.inference.run()
            if self.structure() or self.nodes_alone() or self.retract():
                continue
            return

    # ------------------------------------------------------------------ states
    def state(self, v: ir.Value | None):
        """A tensor's shape, or a sequence's element shape, as a lattice state."""
        if v is None:
            return None
        if v in self.empty:
            return EMPTY
        return None if v.shape is None else tuple(v.shape)

    def set_state(self, v: ir.Value, state) -> int:
        if state is None or state == CONFLICT:
            return 0
        if state == EMPTY:
            if v in self.empty:
                return 0
            self.empty.add(v)
            return 1
        if v.type is None:
            return 0
        return merge_shape(v, list(state))

    # ------------------------------------------------------------------ structure
    def structure(self) -> int:
        """Sequence element shapes, Loop-carried values and If outputs, graph by graph."""
        gained = 0
        for graph in list(iter_graphs(self.model.graph)):
            for node in graph:
                if node.domain not in ONNX_DOMAINS:
                    continue
                if node.op_type == "Loop":
                    gained += self.loop(node)
                elif node.op_type == "If":
                    gained += self.if_node(node)
                elif node.op_type != "Scan":
                    gained += self.sequence_op(node)
        return gained

    def nodes_alone(self) -> int:
        """``node_alone`` for every node (once the control-flow rules have nothing to add)."""
        gained = 0
        for graph in list(iter_graphs(self.model.graph)):
            for node in graph:
                if node.op_type not in ("If", "Loop", "Scan"):
                    gained += self.node_alone(node)
        return gained

    def sequence_op(self, node: ir.Node) -> int:
        """Element shapes through the sequence ops (ONNX's inference treats an empty sequence's
        element as unknown, so a sequence built by appending never has one)."""
        op, ins = node.op_type, node.inputs
        if not node.outputs:
            return 0
        out = node.outputs[0]
        if op == "SequenceEmpty":
            return self.set_state(out, EMPTY)
        if op == "SequenceInsert" and len(ins) >= 2:
            return self.set_state(out, _join(self.state(ins[0]), self.state(ins[1])))
        if op == "SequenceErase" and ins:
            made = ins[0].producer() if ins[0] is not None else None
            if len(ins) == 1 and made is not None and is_op(made, "SequenceInsert") and len(made.inputs) == 2:
                # erasing what was just appended (a copy of a sequence before opset 14's Identity)
                return self.set_state(out, self.state(made.inputs[0]))
            return self.set_state(out, self.state(ins[0]))
        if op == "SequenceConstruct" and ins:
            state = EMPTY
            for v in ins:
                state = _join(state, self.state(v))
            return self.set_state(out, state)
        if op == "Identity" and ins and isinstance(ins[0].type if ins[0] else None, ir.SequenceType):
            return self.set_state(out, self.state(ins[0]))
        if op == "SequenceAt" and ins:
            state = self.state(ins[0])
            return self.set_state(out, state) if isinstance(state, tuple) else 0
        return 0

    def if_node(self, node: ir.Node) -> int:
        """Sequence outputs join their branches; tensor outputs whose branches have different
        ranks get none (ONNX leaves them unranked), and the report says why."""
        branches = [node.attributes[k].as_graph() for k in ("then_branch", "else_branch") if k in node.attributes]
        if len(branches) != 2:
            return 0
        gained = 0
        for k, out in enumerate(node.outputs):
            outs = [b.outputs[k] if k < len(b.outputs) else None for b in branches]
            if any(o is None for o in outs):
                continue
            if out.type is None:
                t = next((o.type for o in outs if o.type is not None), None)
                if t is not None:
                    out.type, gained = t, gained + 1
            states = [self.state(o) for o in outs]
            if isinstance(out.type, ir.SequenceType):
                joined = _join(*states)
                if joined == CONFLICT and out not in self.no_rank:
                    self.no_rank[out] = f"the branches of If {node.name or ''} store elements of different ranks"
                gained += self.set_state(out, joined)
            elif (out.shape is None and all(isinstance(s, tuple) for s in states) and len(states[0]) != len(states[1])
                  and out not in self.no_rank):
                self.no_rank[out] = (f"If {node.name or ''}: output {k} ({out.name!r}) has rank {len(states[0])} in "
                                     f"the then branch and {len(states[1])} in the else branch")
        return gained

    def loop(self, node: ir.Node) -> int:
        """Seed each carried body input with its initial value's shape (element shape for a
        sequence); join it with what the body gives, infer the body again until they agree;
        then the Loop's output takes the agreed shape. Ranks that differ: no rank."""
        body_attr = node.attributes.get("body")
        if body_attr is None:
            return 0
        body = body_attr.as_graph()
        gained = 0
        for b_in, t in zip(body.inputs[:2], (ir.DataType.INT64, ir.DataType.BOOL)):
            if b_in.type is None:
                b_in.type, gained = ir.TensorType(t), gained + 1
            if b_in.shape is None:
                b_in.shape, gained = ir.Shape([]), gained + 1
        for k in range(max(len(node.inputs) - 2, 0)):
            init = node.inputs[2 + k]
            b_in = body.inputs[2 + k] if 2 + k < len(body.inputs) else None
            b_out = body.outputs[1 + k] if 1 + k < len(body.outputs) else None
            out = node.outputs[k] if k < len(node.outputs) else None
            if init is None or b_in is None or b_out is None or out is None:
                continue
            for v in (b_in, out):
                if v.type is None and init.type is not None:
                    v.type, gained = init.type, gained + 1
            if b_in in self.no_rank or b_in.type is None:
                continue
            if self.seeds.get(b_in, 0) is RETRACTED:
                if isinstance(self.state(b_out), tuple):  # the body's result has a rank now: try again
                    del self.seeds[b_in]
                    gained += 1
                continue
            if b_in not in self.seeds:
                if b_in.shape is not None:  # typed before this run (e.g. by the converter)
                    if out.shape is None and b_out.shape is not None and _same_state(self.state(b_out), self.state(b_in)):
                        gained += self.set_state(out, self.state(b_in))
                    continue
                first = self.state(init)
                if first is None:
                    continue
                self.seeds[b_in] = first
                gained += 1 + self.set_state(b_in, first)
                continue
            seed, result = self.seeds[b_in], self.state(b_out)
            if result is None:
                continue
            agreed = _join(_join(self.state(init), seed), result)
            if agreed == CONFLICT:
                what = "element rank" if isinstance(b_in.type, ir.SequenceType) else "rank"
                why = (f"Loop {node.name or ''}: the carried value {b_in.name!r} enters with {what} "
                       f"{len(seed) if isinstance(seed, tuple) else '?'}, the body gives {what} "
                       f"{len(result) if isinstance(result, tuple) else '?'}")
                self.no_rank[b_in] = self.no_rank[out] = why
                self.reseed(b_in, None)
                gained += 1 + self.clear_shapes(body)
                continue
            if not _same_state(agreed, seed):
                self.reseed(b_in, agreed)
                gained += 1 + self.clear_shapes(body)
                continue
            gained += self.set_state(out, agreed)
        return gained

    def reseed(self, b_in: ir.Value, state) -> None:
        self.seeds[b_in] = state
        self.empty.discard(b_in)
        b_in.shape = None
        if state is not None:
            self.set_state(b_in, state)

    def clear_shapes(self, body: ir.Graph) -> int:
        """Forget the shapes inferred inside ``body`` (its subgraphs and the seeds of their
        loops included) after the seed they came from changed."""
        cleared = 0
        for graph in iter_graphs(body):
            values = [o for node in graph for o in node.outputs]
            if graph is not body:
                values += [v for v in graph.inputs if v in self.seeds]
            for v in values:
                if v in self.kept:
                    continue
                self.seeds.pop(v, None)
                if v.shape is not None or v in self.empty:
                    v.shape = None
                    self.empty.discard(v)
                    cleared += 1
        return cleared

    # ------------------------------------------------------------------ explain
    def explain(self) -> None:
        """Values left without a rank because a value they are computed from has none (a
        rank the graph does not fix) get none either, with the reason (not hints)."""
        for _ in range(_MAX_ROUNDS):
            if not self.explain_graph(self.model.graph):
                return

    def explain_graph(self, graph: ir.Graph) -> int:
        found = 0

        def mark(v: ir.Value | None, source: ir.Value) -> int:
            if v is None or v in self.no_rank or v.shape is not None or v.type is None:
                return 0
            reason = self.no_rank[source]  # a sequence here: its elements have no rank
            self.no_rank[v] = reason if reason.startswith("follows") else f"follows from {source.name!r}: {reason}"
            return 1

        for node in graph:
            if is_op(node, "Loop") and "body" in node.attributes:
                body = node.attributes["body"].as_graph()
                for k in range(max(len(node.inputs) - 2, 0)):
                    init = node.inputs[2 + k]
                    if init is not None and init in self.no_rank and 2 + k < len(body.inputs):
                        found += mark(body.inputs[2 + k], init)
            for sub in subgraphs_of(node):
                found += self.explain_graph(sub)
            sources = [v for v in node.inputs if v is not None and v in self.no_rank]
            if is_op(node, "If"):
                branches = [node.attributes[k].as_graph() for k in ("then_branch", "else_branch") if k in node.attributes]
                for k, out in enumerate(node.outputs):
                    for b in branches:
                        if k < len(b.outputs) and b.outputs[k] in self.no_rank:
                            found += mark(out, b.outputs[k])
                continue
            if is_op(node, "Loop") and "body" in node.attributes:
                body = node.attributes["body"].as_graph()
                for k, out in enumerate(node.outputs):
                    b_out = body.outputs[1 + k] if 1 + k < len(body.outputs) else None
                    b_in = body.inputs[2 + k] if 2 + k < len(body.inputs) else None
                    for src in (b_out, b_in):
                        if src is not None and src in self.no_rank:
                            found += mark(out, src)
                            if b_in is not None and src is b_out:
                                found += mark(b_in, src)
                continue
            for out in node.outputs:
                for src in sources:
                    found += mark(out, src)
                    break
        return found

    # ------------------------------------------------------------------ node by node
    def node_alone(self, node: ir.Node) -> int:
        """A default-domain node whose outputs ONNX's whole-model inference left without a type
        or shape: the type rules (casts, constants, sequence ops, constraint binding), then
        ONNX's inference of the node alone with the data of its constant inputs (inside a body,
        ONNX's inference does not see the data of an enclosing graph's initializers: a Reshape
        or Unsqueeze there would get no rank)."""
        if all(o.type is not None and (o.shape is not None or not isinstance(o.type, ir.TensorType))
               for o in node.outputs):
            return 0
        if node.domain not in ONNX_DOMAINS or any(v is not None and v.type is None for v in node.inputs):
            return 0
        key = (node, tuple(describe(v) if v is not None else "" for v in node.inputs))
        if key in self.tried:
            return 0
        self.tried.add(key)
        schema = schema_of(node.op_type, self.opset)
        if schema is None:
            return 0
        gained = 0
        if any(o.type is None for o in node.outputs):
            for out, t in zip(node.outputs, node_rule_types(node, schema) or ()):
                if t is not None and out.type is None:
                    try:
                        out.type = ir_type(t)
                    except Exception:  # noqa: BLE001 - a spelling without an ir type
                        continue
                    gained += 1
        for out, tp in zip(node.outputs, node_inference(node, schema, self.opset)):
            if tp is not None:
                gained += merge_type(out, tp)
        return gained

    def retract(self) -> int:
        """Seeds whose body result still has no known shape are not confirmed: take them back
        (with what the body inferred from them); they are seeded again if the result gets one."""
        taken = 0
        for graph in list(iter_graphs(self.model.graph)):
            for node in graph:
                if not is_op(node, "Loop") or "body" not in node.attributes:
                    continue
                body = node.attributes["body"].as_graph()
                for b_in, b_out in zip(body.inputs[2:], body.outputs[1:]):
                    seed = self.seeds.get(b_in, RETRACTED)
                    if seed is RETRACTED or seed is None or self.state(b_out) is not None or b_out in self.no_rank:
                        continue
                    self.reseed(b_in, None)
                    self.seeds[b_in] = RETRACTED
                    taken += 1 + self.clear_shapes(body)
        return taken

    # ------------------------------------------------------------------ hints
    def hints(self) -> int:
        """The caller's knowledge, for values no control-flow node produces (a rank at an
        If/Loop boundary must come from its branches/body) and whose rank the graph does not
        leave open (``no_rank``)."""
        gained = 0
        for _, v in all_values(self.model):
            if v in self.no_rank or v.is_initializer() or v.is_graph_input():
                continue
            producer = v.producer()
            if producer is None or is_op(producer, "If", "Loop", "Scan"):
                continue
            needs_type = v.type is None
            needs_rank = v.shape is None and (v.type is None or isinstance(v.type, ir.TensorType))
            if not (needs_type or needs_rank):
                continue
            t, dims = self.hint(v)
            if needs_type and t is not None:
                v.type, gained = t, gained + 1
            if needs_rank and dims is not None and isinstance(v.type, ir.TensorType):
                v.shape, gained = ir.Shape(list(dims)), gained + 1
                self.kept.add(v)
        return gained


def infer_types(model: ir.Model, hint: Hint | None = None) -> TypeReport:
    """Fill in the type and shape of every value of ``model`` that ONNX's inference, the
    control-flow rules, the node rules and ``hint`` can give (see the module docstring);
    what nothing gives is in the returned report."""
    return _Typer(model, hint).run()
