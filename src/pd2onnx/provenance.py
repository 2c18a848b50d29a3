"""Provenance: which Paddle op each ONNX node came from, and which ONNX value carries each
Paddle value. ``pd2onnx verify`` reads it to compare a model op by op (docs/verify.md).

In memory it lives on the ``onnx_ir`` objects themselves: the converter tags each node it
emits with the Paddle op being converted (``Node.meta``) and each value it binds to a Paddle
output with that output (``Value.meta``). The passes that rewrite a graph keep the tags
honest: a value replaced by another that computes the same thing hands its Paddle values
on (:func:`move`), and a value whose computation a rewrite changed gives them up with the
reason (:func:`changed`), so that it is never compared with the wrong Paddle value.

In the file it is one JSON entry of the model's ``metadata_props`` (key :data:`KEY`), written
by :func:`store`::

    {"version": 1, "program": {"format": "pir", "file": "model.json", "sha256": "..."},
     "why": ["why a value is not carried", ...],
     "ops": [[block, index, "op type", ["node name", ...],
              [["paddle value", "onnx value"], ["paddle value"], ["paddle value", null, why index], ...]],
             ...]}

Op types are the canonical (PIR) spelling. To stay small, a node name that starts with the
converter's ``<op type>_<block>_<index>`` is written from its ``/`` on, and an output whose
ONNX value has the Paddle value's name is written as ``["paddle value"]``.

This module imports neither the converter nor the optimizer: both call into it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import onnx_ir as ir

log = logging.getLogger(__name__)

KEY = "pd2onnx.provenance"
VERSION = 1

# meta keys on onnx_ir objects (never serialized by onnx_ir itself)
_OP = "pd2onnx.op"  # Node: Site of the Paddle op that emitted it
_CARRIES = "pd2onnx.carries"  # Value: list of (Site, Paddle value name) it carries
_CHANGED = "pd2onnx.changed"  # Value: list of (Site, Paddle value name, why) it no longer carries
_PROGRAM = "pd2onnx.program"  # Model: the program description (present = provenance is kept)

Site = tuple[int, int, str]  # (block, index, op type) of a Paddle op


# ---------------------------------------------------------------------------- tagging


def site_of(op) -> Site:
    """The Site of a ``pd2onnx.paddle.program.Op`` (its canonical type)."""
    return (op.block_idx, op.index, op.type)


def tag_node(node: ir.Node, site: Site) -> None:
    """Record that the Paddle op at ``site`` emitted ``node``."""
    node.meta[_OP] = site


def _peek(obj: ir.Node | ir.Value | None, key: str):
    """``obj.meta[key]`` or None, without making onnx_ir create a store for every object."""
    store = getattr(obj, "_metadata", None)
    return None if store is None else store.get(key)


def node_site(node: ir.Node | None) -> Site | None:
    return _peek(node, _OP)


def tag_value(value: ir.Value, site: Site, name: str) -> None:
    """Record that ``value`` carries output ``name`` of the Paddle op at ``site``."""
    entry = (site, name)
    carries = value.meta.get(_CARRIES)
    if carries is None:
        value.meta[_CARRIES] = [entry]
    elif entry not in carries:
        carries.append(entry)


def untag_value(value: ir.Value | None, site: Site, name: str) -> None:
    """``value`` no longer carries output ``name`` of the op at ``site`` (the op bound another)."""
    carries = _peek(value, _CARRIES)
    if carries and (site, name) in carries:
        carries.remove((site, name))


def carried(value: ir.Value | None) -> list[tuple[Site, str]]:
    return list(_peek(value, _CARRIES) or ())


def move(old: ir.Value, new: ir.Value) -> None:
    """``new`` takes ``old``'s place and computes the same values: it carries what ``old``
    carried. A node made to produce ``new`` (a rewrite's replacement) gets the op of the
    node it replaces."""
    if old is new:
        return
    for site, name in carried(old):
        tag_value(new, site, name)
    if _peek(old, _CARRIES) is not None:
        old.meta.pop(_CARRIES, None)
    producer = new.producer()
    if producer is not None and node_site(producer) is None:
        site = node_site(old.producer())
        if site is not None:
            tag_node(producer, site)


def same_op(source: ir.Node, node: ir.Node) -> None:
    """``node`` was added to compute part of what ``source`` computes (e.g. a cast around it)."""
    site = node_site(source)
    if site is not None and node_site(node) is None:
        tag_node(node, site)


def not_carried(value: ir.Value, site: Site, name: str, why: str) -> None:
    """``value`` stands in for output ``name`` of the op at ``site`` but does not hold Paddle's
    value of it (``why``)."""
    value.meta.setdefault(_CHANGED, []).append((site, name, why))


def changed(value: ir.Value, why: str) -> None:
    """``value`` no longer computes the Paddle values it carried (a fusion rewrote its node):
    they are dropped, with ``why``."""
    entries = carried(value)
    if not entries:
        return
    value.meta.pop(_CARRIES, None)
    marks = value.meta.setdefault(_CHANGED, [])
    marks.extend((site, name, why) for site, name in entries)


# ---------------------------------------------------------------------------- the file form


@dataclass
class OpRecord:
    """What one Paddle op became: its ONNX nodes, and per Paddle output the ONNX value that
    carries it (None, with ``why``, when none does any more)."""

    block: int
    index: int
    op_type: str
    nodes: list[str] = field(default_factory=list)
    outputs: dict[str, str | None] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)


@dataclass
class Provenance:
    program: dict
    ops: dict[tuple[int, int], OpRecord]

    def record(self, block: int, index: int) -> OpRecord | None:
        return self.ops.get((block, index))


def has(model: ir.Model) -> bool:
    """True when ``model`` keeps provenance (recorded now or read from its file)."""
    return _PROGRAM in model.meta or KEY in model.metadata_props


def start(model: ir.Model, model_file: str, fmt: str) -> None:
    """Mark ``model`` as converted from the program in ``model_file`` (its tags are stored)."""
    model.meta[_PROGRAM] = {"format": fmt, "file": os.path.basename(model_file), "sha256": file_digest(model_file)}


def file_digest(path: str) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return ""
    return h.hexdigest()


def _graphs(graph: ir.Graph) -> Iterator[ir.Graph]:
    yield graph
    yield from graph.subgraphs()


def _values(graph: ir.Graph) -> Iterator[ir.Value]:
    yield from graph.inputs
    yield from graph.initializers.values()
    for node in graph:
        yield from node.outputs


def collect(model: ir.Model) -> Provenance:
    """The provenance the tags of ``model`` hold now."""
    ops: dict[tuple[int, int], OpRecord] = {}

    def rec(site: Site) -> OpRecord:
        key = (site[0], site[1])
        r = ops.get(key)
        if r is None:
            r = ops[key] = OpRecord(site[0], site[1], site[2])
        return r

    for graph in _graphs(model.graph):
        for node in graph:
            site = node_site(node)
            if site is not None:
                rec(site).nodes.append(node.name or "")
        seen: set[int] = set()
        for value in _values(graph):
            if id(value) in seen:
                continue
            seen.add(id(value))
            for site, name in carried(value):
                r = rec(site)
                r.outputs[name] = value.name
                r.why.pop(name, None)
            for site, name, why in _peek(value, _CHANGED) or ():
                r = rec(site)
                if r.outputs.get(name) is None:
                    r.outputs[name] = None
                    r.why[name] = why
    return Provenance(dict(model.meta.get(_PROGRAM) or {}), dict(sorted(ops.items())))


def store(model: ir.Model, refresh: bool = False) -> None:
    """Write the tags of ``model`` into its ``metadata_props`` (no-op without provenance);
    ``refresh``: only when it holds a stored entry already (a model read from a file)."""
    if _PROGRAM not in model.meta or (refresh and KEY not in model.metadata_props):
        return
    model.metadata_props[KEY] = dumps(collect(model))


def _node_prefix(r: OpRecord) -> str:
    return f"{r.op_type}_{r.block}_{r.index}"  # how OpContext.emit names the nodes of an op


def dumps(prov: Provenance) -> str:
    ops = []
    whys: dict[str, int] = {}
    for r in prov.ops.values():
        prefix = _node_prefix(r) + "/"
        nodes = [n[len(prefix) - 1:] if n.startswith(prefix) else n for n in r.nodes]
        outs = []
        for n, v in r.outputs.items():
            if v is None:
                outs.append([n, None, whys.setdefault(r.why.get(n, ""), len(whys))])
            else:
                outs.append([n] if v == n else [n, v])
        ops.append([r.block, r.index, r.op_type, nodes, outs])
    doc = {"version": VERSION, "program": prov.program, "why": list(whys), "ops": ops}
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


class ProvenanceError(ValueError):
    """The provenance entry of an ONNX file is unreadable."""


def loads(text: str) -> Provenance:
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict) or doc.get("version") != VERSION:
            raise ProvenanceError(f"unknown provenance version {doc.get('version') if isinstance(doc, dict) else '?'}")
        ops = {}
        whys = [str(w) for w in doc.get("why", [])]
        for block, index, op_type, nodes, outs in doc["ops"]:
            r = OpRecord(int(block), int(index), str(op_type))
            prefix = _node_prefix(r)
            r.nodes = [prefix + n if n.startswith("/") else str(n) for n in nodes]
            for entry in outs:
                name = str(entry[0])
                if len(entry) == 1:
                    r.outputs[name] = name
                elif entry[1] is not None:
                    r.outputs[name] = str(entry[1])
                else:
                    r.outputs[name] = None
                    r.why[name] = whys[entry[2]] if len(entry) > 2 else ""
            ops[(r.block, r.index)] = r
        return Provenance(dict(doc.get("program") or {}), ops)
    except ProvenanceError:
        raise
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:  # any damage to the record
        raise ProvenanceError(f"malformed provenance ({type(exc).__name__}: {exc})") from None


def read(metadata_props: dict[str, str]) -> Provenance | None:
    """The provenance stored in a model's (or a ModelProto's) metadata, None when absent."""
    text = metadata_props.get(KEY)
    return None if text is None else loads(text)


def attach(model: ir.Model) -> bool:
    """Tag the nodes and values of a model read from a file with its stored provenance, so
    that rewrites keep it (``pd2onnx optimize``). False when the model has none."""
    if _PROGRAM in model.meta:
        return True
    try:
        prov = read(model.metadata_props)
    except ProvenanceError as exc:
        log.warning("dropping the model's pd2onnx provenance, which cannot be read: %s", exc)
        model.metadata_props.pop(KEY, None)
        return False
    if prov is None:
        return False
    nodes: dict[str, ir.Node] = {}
    values: dict[str, ir.Value] = {}
    for graph in _graphs(model.graph):
        for node in graph:
            if node.name:
                nodes.setdefault(node.name, node)
        for value in _values(graph):
            if value.name:
                values.setdefault(value.name, value)
    for r in prov.ops.values():
        site = (r.block, r.index, r.op_type)
        for name in r.nodes:
            if name in nodes:
                tag_node(nodes[name], site)
        for pname, vname in r.outputs.items():
            if vname is not None and vname in values:
                tag_value(values[vname], site, pname)
    model.meta[_PROGRAM] = prov.program
    return True


def strip(model: ir.Model) -> None:
    """Drop provenance from ``model`` (tags and the stored entry): what deployment gets."""
    model.metadata_props.pop(KEY, None)
    model.meta.pop(_PROGRAM, None)
