"""Pass base classes: every optimizer pass is an ``onnx_ir`` in-place pass that counts changes."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import onnx_ir as ir

from pd2onnx import provenance
from pd2onnx.optimize._ir import Namer, _contig, is_onnx, iter_graphs, np_tensor, replace_value

logger = logging.getLogger(__name__)

from pd2onnx.optimize import DEFAULT_FOLD_SIZE_LIMIT  # noqa: E402  (elements)


@dataclass
class Options:
    """Settings shared by the passes of one optimize() run."""

    fold_size_limit: int = DEFAULT_FOLD_SIZE_LIMIT
    warnings: list[str] = field(default_factory=list)


class OptimizerPass(ir.passes.InPlacePass):
    """An in-place pass with a short stable ``name`` that reports how many changes it made."""

    name: ClassVar[str] = ""

    def __init__(self, options: Options | None = None) -> None:
        super().__init__()
        self.options = options or Options()
        self.changes = 0
        self.current: ir.Node | None = None  # the node being rewritten (named in an internal error)
        self.namer: Namer | None = None
        self.opsets: dict[str, int] = {}

    def call(self, model: ir.Model) -> ir.passes.PassResult:
        self.namer = Namer(model)
        self.opsets = {("" if k == "ai.onnx" else k): v for k, v in model.opset_imports.items()}
        self.opsets.setdefault("", 1)
        self.changes = self.run(model)
        return ir.passes.PassResult(model, modified=bool(self.changes))

    @property
    def opset(self) -> int:
        return self.opsets.get("", 1)

    def run(self, model: ir.Model) -> int:  # pragma: no cover - abstract
        raise NotImplementedError


class NodePass(OptimizerPass):
    """Visits every node of every graph (subgraphs too) and calls :meth:`rewrite`.

    ``op_types`` restricts the visit to default-domain nodes of those types.
    """

    op_types: ClassVar[frozenset[str] | None] = None

    def run(self, model: ir.Model) -> int:
        count = 0
        for graph in list(iter_graphs(model.graph)):
            for node in list(graph):
                if node.graph is not graph:
                    continue  # removed by an earlier rewrite
                if self.op_types is not None and (node.op_type not in self.op_types or not is_onnx(node)):
                    continue
                self.current = node
                count += int(self.rewrite(node, graph))
        self.current = None
        return count

    def rewrite(self, node: ir.Node, graph: ir.Graph) -> int | bool:  # pragma: no cover
        raise NotImplementedError

    # helpers ---------------------------------------------------------------

    def constant_for(self, graph: ir.Graph, old: ir.Value, array: np.ndarray) -> bool:
        """Replace every use of ``old`` with a constant holding ``array``.

        An ordinary value becomes an initializer (taking over ``old``'s name when ``old``
        dies); a graph output stays a Constant node so the output name is kept.
        """
        assert self.namer is not None
        array = np.asarray(array)
        if old.is_graph_output():
            tensor = np_tensor(array)
            out = ir.Value(name=None, shape=ir.Shape(array.shape), type=ir.TensorType(tensor.dtype))
            const = ir.node("Constant", [], {"value": tensor}, outputs=[out])
            producer = old.producer()
            if producer is not None and producer.graph is graph:
                graph.insert_before(producer, const)
            else:
                graph.insert_before(graph.node(0), const) if graph.num_nodes() else graph.append(const)
            out.name = self.namer.fresh((old.name or "const") + "_const")
            if not replace_value(old, out):
                graph.remove(const, safe=True)
                return False
            return True
        # The folded value dies with its node, so the initializer can take over its name.
        name = old.name or self.namer.fresh("const")
        old.name = None
        tensor = np_tensor(_contig(array), name=name)
        init = ir.Value(name=name, shape=ir.Shape(array.shape), type=ir.TensorType(tensor.dtype), const_value=tensor)
        graph.register_initializer(init)
        ir.convenience.replace_all_uses_with(old, init)
        provenance.move(old, init)
        return True


class WrappedPass(OptimizerPass):
    """Runs a pass from ``onnx_ir.passes.common``; changes = nodes + initializers removed (min 1)."""

    def __init__(self, name: str, inner: ir.passes.PassBase, options: Options | None = None) -> None:
        super().__init__(options)
        self.wrapped_name = name
        self.inner = inner

    def run(self, model: ir.Model) -> int:
        before = _size(model)
        result = self.inner(model)
        if not result.modified:
            return 0
        return max(before - _size(model), 1)


def _size(model: ir.Model) -> int:
    return sum(g.num_nodes() + len(g.initializers) for g in iter_graphs(model.graph))
