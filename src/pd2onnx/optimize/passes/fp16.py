"""float32 -> float16 conversion of weights and compute ("optimize first, then convert").

What runs in float16: every default-domain node of the main graph whose schema lets its
float inputs/outputs be float16, except

- the blocklist ``KEEP_FP32`` (random ops, Range, NonMaxSuppression, TopK and RoiAlign
  (ordering/boxes are sensitive to rounding), CumSum (accumulates error), quantization,
  ops typed by attributes (ConstantOfShape, EyeLike, Constant), control flow (If/Loop/Scan:
  their bodies stay float32; values they capture get a Cast), sequence ops (sequences keep
  float32 elements: what is stored into one gets a Cast to float32, what is read from one a
  Cast to float16));
- shape arithmetic: any node whose non-constant inputs all derive from Shape/Size (float
  shape maths such as Resize size computations loses integers above 2048 in float16);
- the consumers of a float32 initializer with a finite value beyond float16's range
  (|x| > 65504): that initializer is never clamped; its consumers stay float32 and a
  warning names it. (Run optimize() first: a BatchNorm folded into a Conv no longer
  carries its variance.)
- inputs that the schema fixes to float32 (e.g. Resize ``roi``/``scales``) stay float32;
- float32 islands of a bfloat16/float64 computation: a node whose float32 inputs come from
  Casts of bfloat16 (or float64) values and whose float32 results all go to Casts back to that
  type, and those Casts. The converter's legalization pass computes this way the nodes ONNX
  Runtime has no bfloat16/float64 kernel for; float16 there would overflow bfloat16's range
  (or lose float64's precision). Every Cast from bfloat16/float64 to float32 stays float32
  for the same reason (its float16 consumers get a Cast at the border).

Casts are inserted only at the borders between float16 and float32 regions. With
``keep_io_types`` graph inputs/outputs stay float32 with Casts next to them; otherwise
their types become float16. Tensors outside the float16 range at run time (activations)
cannot be detected statically; that is a property of the model.
"""

from __future__ import annotations

import logging

import numpy as np
import onnx_ir as ir

from pd2onnx.optimize._ir import RANDOM_OPS, Namer, const_array, derived_name, is_const, is_onnx
from pd2onnx.optimize.passes.shapes import InferShapes
from pd2onnx.optimize.type_names import formal

logger = logging.getLogger(__name__)

F32 = ir.DataType.FLOAT
F16 = ir.DataType.FLOAT16
FP16_MAX = 65504.0

KEEP_FP32 = frozenset(
    {
        "Range",
        "NonMaxSuppression",
        "TopK",
        "RoiAlign",
        "CumSum",
        "ConstantOfShape",
        "EyeLike",
        "Constant",
        "QuantizeLinear",
        "DequantizeLinear",
        "DynamicQuantizeLinear",
        "If",
        "Loop",
        "Scan",
        # sequences keep float32 elements: a tensor stored into one must have its element type
        "SequenceConstruct",
        "SequenceInsert",
        "SequenceAt",
        "SequenceErase",
        "SequenceEmpty",
        "SplitToSequence",
        "ConcatFromSequence",
    }
) | RANDOM_OPS

FOLLOW, FREE, FIXED = "follow", "free", "fixed"


def _roles(node: ir.Node, opset: int) -> tuple[list[str], list[bool]] | None:
    """Per input: follow the node's precision / accept any float / fixed float32; per
    output: whether it becomes float16 when the node does. None without a schema."""
    import onnx

    try:
        schema = onnx.defs.get_schema(node.op_type, opset, "")
    except Exception:  # noqa: BLE001
        return None
    allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}

    def convertible(type_str: str) -> bool:
        types = allowed.get(type_str)
        return types is not None and "tensor(float16)" in types and "tensor(float)" in types

    in_params = [getattr(formal(schema.inputs, i), "type_str", None) for i in range(len(node.inputs))]
    out_params = [getattr(formal(schema.outputs, i), "type_str", None) for i in range(len(node.outputs))]
    roles: list[str] = []
    for p in in_params:
        if p is None or not convertible(p):
            roles.append(FIXED)
        elif p not in out_params and in_params.count(p) == 1:
            roles.append(FREE)
        else:
            roles.append(FOLLOW)
    outs = [p is not None and convertible(p) for p in out_params]
    if node.op_type == "Cast":
        outs = [True]  # follows the 'to' attribute, rewritten below
    return roles, outs


def convert_to_fp16(model: ir.Model, keep_io_types: bool = False) -> list[str]:
    """Convert ``model`` in place; returns human-readable warnings."""
    InferShapes()(model)
    graph = model.graph
    opset = model.opset_imports.get("", model.opset_imports.get("ai.onnx", 1))
    warnings: list[str] = []
    namer = Namer(model)
    nodes = list(graph)

    # 1. Shape arithmetic stays float32.
    shape_values: set[int] = set()
    shape_nodes: set[int] = set()
    for node in nodes:
        dyn = [v for v in node.inputs if v is not None and not is_const(v)]
        if is_onnx(node) and node.op_type in ("Shape", "Size"):
            shape_values.update(id(o) for o in node.outputs)
        elif dyn and all(id(v) in shape_values for v in dyn):
            shape_values.update(id(o) for o in node.outputs)
            shape_nodes.add(id(node))

    # 2. Candidate float16 nodes and their input/output roles.
    islands = _islands(nodes)
    roles: dict[int, tuple[list[str], list[bool]]] = {}
    for node in nodes:
        if not is_onnx(node) or node.op_type in KEEP_FP32 or id(node) in shape_nodes or id(node) in islands:
            continue
        if node.op_type == "Cast" and node.attributes["to"].as_int() != F32.value:
            continue  # a Cast to another type is precision-neutral; leave it
        if node.op_type == "Cast" and node.inputs[0] is not None and node.inputs[0].dtype in _WIDE:
            continue  # bfloat16/float64 -> float32 stays: in float16 it could overflow/round
        r = _roles(node, opset)
        if r is None:
            continue
        ins, outs = r
        touches = any(v is not None and v.dtype == F32 and role != FIXED for v, role in zip(node.inputs, ins)) or any(
            o.dtype == F32 and ok for o, ok in zip(node.outputs, outs)
        )
        if touches:
            roles[id(node)] = r

    # 3. Initializers outside the float16 range: keep them and their consumers in float32.
    for value in list(graph.initializers.values()):
        if value.dtype != F32 or not is_const(value):
            continue
        users = [u for u in value.uses() if id(u.node) in roles and roles[id(u.node)][0][u.idx] == FOLLOW]
        if not users:
            continue
        arr = const_array(value)
        finite = arr[np.isfinite(arr)]
        if finite.size and float(np.max(np.abs(finite))) > FP16_MAX:
            ops_ = sorted({u.node.op_type for u in users})
            warnings.append(
                f"initializer '{value.name}' has values up to {float(np.max(np.abs(finite))):g}, beyond float16's "
                f"{FP16_MAX:g}; kept in float32 with its consumer(s) ({', '.join(ops_)}) computing in float32"
            )
            for u in users:
                roles.pop(id(u.node), None)

    def produced_as(v: ir.Value) -> ir.DataType | None:
        return v.dtype

    def wanted(node: ir.Node, idx: int, v: ir.Value) -> ir.DataType | None:
        r = roles.get(id(node))
        if r is None:
            if node.graph is graph and is_onnx(node) and _is_free_input(node, idx):
                return None
            return F32
        role = r[0][idx]
        return F16 if role == FOLLOW else (None if role == FREE else F32)

    # 4. New output dtypes of float16 nodes.
    for node in nodes:
        r = roles.get(id(node))
        if r is None:
            continue
        if node.op_type == "Cast":
            node.attributes["to"] = ir.AttrInt64("to", F16.value)
        for o, ok in zip(node.outputs, r[1]):
            if ok and o.dtype == F32:
                o.dtype = F16

    # 5. Weights: convert in place when every reader wants float16, else add a copy.
    casts: dict[tuple[int, ir.DataType], ir.Value] = {}
    for value in list(graph.initializers.values()):
        if value.dtype != F32 or not is_const(value):
            continue
        uses = list(value.uses())
        want16 = [u for u in uses if wanted(u.node, u.idx, value) == F16]
        if not want16:
            continue
        tensor16 = ir.tensor(const_array(value).astype(np.float16))
        if len(want16) == len(uses) and not value.is_graph_output():
            value.const_value = tensor16
            value.dtype = F16
            continue
        name = namer.fresh(derived_name(value.name, "_fp16"))
        tensor16.name = name
        copy = ir.Value(name=name, shape=value.shape, type=ir.TensorType(F16), const_value=tensor16)
        graph.register_initializer(copy)
        for u in want16:
            u.node.replace_input_with(u.idx, copy)

    # 6. Graph inputs.
    for inp in graph.inputs:
        if inp.dtype == F32 and not inp.is_initializer() and not keep_io_types:
            inp.dtype = F16

    # 7. Casts at region borders for every non-constant float value.
    values: list[ir.Value] = [v for v in graph.inputs if not v.is_initializer()]
    values += [o for n in nodes for o in n.outputs]
    for v in values:
        have = produced_as(v)
        if have not in (F16, F32):
            continue
        for u in list(v.uses()):
            want = wanted(u.node, u.idx, v)
            if want is None or want == have:
                continue
            u.node.replace_input_with(u.idx, _cast(graph, v, want, casts, namer))
    # 8. Graph outputs.
    for i, out in enumerate(list(graph.outputs)):
        if out.dtype != F16 or not keep_io_types or out.is_graph_input() or out.is_initializer():
            continue
        name = out.name
        out.name = namer.fresh(derived_name(name, "_fp16"))
        cast_out = ir.Value(name=name, shape=out.shape, type=ir.TensorType(F32))
        cast = ir.node("Cast", [out], {"to": F32.value}, outputs=[cast_out])
        graph.append(cast)
        graph.outputs[i] = cast_out
    graph.sort()
    for w in warnings:
        logger.warning("%s", w)
    return warnings


_WIDE = (ir.DataType.BFLOAT16, ir.DataType.DOUBLE)


def _cast_to(node: ir.Node | None) -> ir.DataType | None:
    if node is None or not is_onnx(node) or node.op_type != "Cast" or "to" not in node.attributes:
        return None
    return ir.DataType(node.attributes["to"].as_int())


def _islands(nodes: list[ir.Node]) -> set[int]:
    """ids of float32 islands in a bfloat16/float64 computation (see the module docstring):
    the node, and the Casts into it that feed nothing else."""
    found: set[int] = set()
    for node in nodes:
        if not is_onnx(node) or _cast_to(node) is not None:
            continue
        sources = set()
        for v in node.inputs:
            if v is None or v.dtype != F32:
                continue
            producer = v.producer()
            if _cast_to(producer) == F32 and producer.inputs[0] is not None and producer.inputs[0].dtype in _WIDE:
                sources.add(producer.inputs[0].dtype)
        if len(sources) != 1:
            continue
        wide = sources.pop()
        outs = [o for o in node.outputs if o.dtype == F32]
        if not outs or any(o.is_graph_output() or not o.uses() for o in outs):
            continue
        if all(_cast_to(u.node) == wide for o in outs for u in o.uses()):
            found.add(id(node))
    for node in nodes:
        if _cast_to(node) == F32 and node.inputs[0] is not None and node.inputs[0].dtype in _WIDE:
            users = [u.node for o in node.outputs for u in o.uses()]
            if users and all(id(u) in found for u in users):
                found.add(id(node))
    return found


def _is_free_input(node: ir.Node, idx: int) -> bool:
    """Inputs that accept any float type on a float32 node (Shape, Size, Cast's input...)."""
    return node.op_type in ("Shape", "Size", "Cast") and idx == 0


def _cast(graph: ir.Graph, v: ir.Value, to: ir.DataType, cache: dict, namer: Namer) -> ir.Value:
    key = (id(v), to)
    if key in cache:
        return cache[key]
    suffix = "_fp16" if to == F16 else "_fp32"
    out = ir.Value(name=namer.fresh(derived_name(v.name, suffix)), shape=v.shape, type=ir.TensorType(to))
    cast = ir.node("Cast", [v], {"to": to.value}, outputs=[out])
    producer = v.producer()
    if producer is not None and producer.graph is graph:
        graph.insert_after(producer, cast)
    elif graph.num_nodes():
        graph.insert_before(graph.node(0), cast)
    else:
        graph.append(cast)
    cache[key] = out
    return out
